"""Linux tc: ``ets`` for the scheduler (tc-ets(8): strict bands first, then DRR bands with
quanta; band b is class ``1:(b+1)``; at most 16 bands; ``priomap`` sends what no filter
classifies), u32 filters on the DSCP for IPv4 (``match ip dsfield``) and IPv6 (``match ip6
priority``, the traffic class; iproute2 f_u32.c ``parse_ip6_class``), and per ECN band:

- sojourn marking with ``codel ce_threshold`` (tc-codel(8)). tc sends codel's times in whole
  microseconds (``get_time`` to usec, ``TCA_CODEL_CE_THRESHOLD`` is a u32 of usec) and the
  kernel keeps ``(usec * 1000) >> CODEL_SHIFT`` ticks of 1.024 us (sch_codel.c
  ``codel_change``): 15.36 us typed as ``15.36us`` is sent as 15 and applied as 14 ticks,
  14.336 us. The file writes the whole microseconds whose kernel value is nearest the
  threshold, and states that value.
- queue-length marking with ``red ... ecn`` (tc-red(8)): bytes; ``probability`` 0-1; ``burst``
  by tc's own rule ((2 min + max) / (3 avpkt)), which for DCTCP's step (min = max = K: RED's
  hard mark above max marks ECT packets under ``ecn``) gives the EWMA weight 1/2 (iproute2
  tc_red.c ``tc_red_eval_ewma``), so the average follows the queue within a packet or two;
  ``bandwidth`` set (tc assumes 10 Mbit otherwise and says so) and capped at what tc takes,
  a 32-bit byte rate (34.3 Gbit/s): it only sets how the average decays while idle."""

from __future__ import annotations

import math
from typing import Any

from ... import _core
from .. import words
from . import Rendered, Switch, summary

CODEL_SHIFT = 10  # include/net/codel.h: codel_time_t is ns >> 10
TC_MAX_BANDS = 16  # tc-ets(8)
RED_MAX_BANDWIDTH_BPS = (2**32 - 1) * 8  # tc's get_rate into a u32 of bytes per second
AVPKT = 1500


def codel_us(ns: float) -> tuple[int, float]:
    """(the whole microseconds to type, the time the kernel applies in us) nearest ``ns``."""
    def applied(u: int) -> float:
        return ((u * 1000) >> CODEL_SHIFT) * (1 << CODEL_SHIFT) / 1000

    u0 = max(1, int(ns // 1000))
    u = min((c for c in (u0 - 1, u0, u0 + 1, u0 + 2) if c >= 1), key=lambda c: (abs(applied(c) * 1000 - ns), c))
    return u, applied(u)


def _b(v: Any) -> int:
    return _core.parse_unit("size", str(v))


def _ns(v: Any) -> int:
    return _core.parse_unit("time", str(v))


def _step(params: dict[str, Any]) -> tuple[int, int, float]:
    """(min bytes, max bytes, max probability) of a queue-length scheme."""
    if "marking.threshold.k" in params:
        k = _b(params["marking.threshold.k"])
        return k, k, 1.0
    return _b(params["marking.red.min_th"]), _b(params["marking.red.max_th"]), float(params["marking.red.max_p"])


def _root(sw: Switch, missing: list[str]) -> list[str]:
    n = sw.queues
    strict = len(sw.strict)
    quanta = [sw.quantum_bytes * sw.weights[q] for q in sorted(sw.weights)]
    band = sw.default_queue
    lines = ['DEV=${DEV:-eth0}   # the egress interface',
             f"# {n} bands, band b = queue b (class 1:(b+1)): {strict} strict, then DRR with quanta = "
             f"{sw.quantum_bytes} B x the queue's weight; what no filter classifies (priomap) -> band {band}",
             f'tc qdisc replace dev "$DEV" root handle 1: ets bands {n}' + (f" strict {strict}" if strict else "")
             + (f" quanta {' '.join(map(str, quanta))}" if quanta else "") + f" priomap {' '.join([str(band)] * 16)}"]
    if sw.scheduler in ("wfq", "sp_wfq"):
        missing.append("WFQ: tc's ets is DRR; the weights are its quanta (DRR approximates WFQ's shares)")
    if strict > 1:
        missing.append("several strict queues: ets serves band 0 first, as ecnlab's queue 0 is the highest")
    for d, q in enumerate(sw.dscp_to_queue):
        if q == band:
            continue  # the priomap's
        lines.append(f'tc filter add dev "$DEV" parent 1: protocol ip prio 1 u32 match ip dsfield 0x{d << 2:02x} 0xfc '
                     f"flowid 1:{q + 1}   # DSCP {d} -> queue {q}")
        lines.append(f'tc filter add dev "$DEV" parent 1: protocol ipv6 prio 2 u32 match ip6 priority 0x{d << 2:02x} '
                     f"0xfc flowid 1:{q + 1}")
    return lines


def _leaf(scheme: str, params: dict[str, Any], sw: Switch, notes: list[str]) -> str:
    """The qdisc of one ECN band (without ``parent``/``handle``)."""
    limit = max(1, math.ceil(sw.buffer_bytes / AVPKT))
    if scheme in ("per_queue", "dctcp_red", "red"):
        mn, mx, p = _step(params)
        burst = max(1, (2 * mn + mx) // (3 * AVPKT))
        if mn / AVPKT > burst:  # tc_red_eval_ewma needs burst >= min / avpkt
            burst = math.ceil(mn / AVPKT)
        bw = min(sw.rate_bps, RED_MAX_BANDWIDTH_BPS)
        if bw < sw.rate_bps:
            notes.append(f"red's bandwidth is capped at tc's {words.rate(bw)} (a 32-bit byte rate) for the "
                         f"{words.rate(sw.rate_bps)} link; it only sets the average's decay while idle")
        return (f"red limit {max(sw.buffer_bytes, mx + AVPKT)} min {mn} max {mx} avpkt {AVPKT} burst {burst} "
                f"probability {p:g} bandwidth {bw // 1000}kbit ecn")

    def t(key: str, what: str) -> str:
        ns = _ns(params[key])
        u, applied = codel_us(ns)
        notes.append(f"{what} = {ns / 1000:g} us is typed as {u}us, which the kernel applies as {applied:.3f} us "
                     f"(ticks of 1.024 us)")
        return f"{u}us"

    if scheme == "tcn":
        return (f"codel limit {limit} target 1s interval 1s ce_threshold "
                f"{t('marking.tcn.threshold', 'T')} ecn   # CoDel's own law off: sojourn > T marks, as TCN")
    if scheme == "ecn_sharp":
        return (f"codel limit {limit} target {t('marking.ecn_sharp.pst_target', 'pst_target')} interval "
                f"{t('marking.ecn_sharp.pst_interval', 'pst_interval')} ce_threshold "
                f"{t('marking.ecn_sharp.ins_target', 'ins_target')} ecn")
    return (f"codel limit {limit} target {t('marking.codel.target', 'target')} interval "
            f"{t('marking.codel.interval', 'interval')} ecn")


NOTES = {
    "ecn_sharp": "ECN#'s persistent part as CoDel's law (target = pst_target, interval = pst_interval): CoDel "
                 "spaces its marks by interval / sqrt(count), ECN# by interval / count",
    "red": "tc derives RED's EWMA weight from burst, not from w",
}


def render(scheme: str, params: dict[str, Any], sw: Switch) -> Rendered:
    missing: list[str] = []
    if sw.queues > TC_MAX_BANDS:
        return Rendered("", summary(scheme, params, sw), [f"{sw.queues} queues: ets has at most {TC_MAX_BANDS} bands"])
    lines = _root(sw, missing)
    times: list[str] = []
    leaf = _leaf(scheme, params, sw, times)
    for q in sw.ecn_queues:
        lines.append(f'tc qdisc replace dev "$DEV" parent 1:{q + 1} handle {q + 10:x}: {leaf}')
    if NOTES.get(scheme):
        missing.append(NOTES[scheme])
    head = ["#!/bin/sh"] + [f"# {x}" for x in dict.fromkeys(times)] + ["set -e"]
    return Rendered("\n".join(head + lines) + "\n", summary(scheme, params, sw), missing)
