"""The recommended marking as each target platform takes it, in the platform's own units.

Read first: each platform's documentation, for the units and steps used here:
- SONiC CONFIG_DB: ``WRED_PROFILE`` (``ecn``, ``wred_green_enable``,
  ``green_min_threshold`` / ``green_max_threshold`` in bytes, ``green_drop_probability``
  in integer percent, 0-100; min = max is what SONiC's own default ECN profiles use) and the
  ``QUEUE|<port>|<q>`` table's ``wred_profile`` binding (SONiC wiki "ECN WRED configuration
  utility"; Dell Enterprise SONiC's WRED module documents bytes 1000-12480000, percent 0-100).
- Linux tc: ``red`` (tc-red(8): bytes, ``probability`` 0.0-1.0, ``ecn``; the average is an
  EWMA whose weight tc derives from ``burst``), ``codel``'s ``ce_threshold`` (tc-codel(8);
  kernel include/net/codel.h: times in units of 1024 ns, CODEL_SHIFT 10), ``ets`` for SP +
  DRR bands (tc-ets(8)), u32 filters on the DS field for DSCP -> band.
- NVIDIA Cumulus Linux NVUE: ``nv set qos congestion-control default-global traffic-class
  ... min-threshold / max-threshold`` (bytes), ``probability`` (percent), ``ecn enable``
  (Cumulus Linux 5 user guide, Quality of Service, ECN).
- Junos: ``latency-ecn { threshold N; }`` under ``[edit class-of-service schedulers]``
  (nanoseconds, 1-1,000,000,000; Junos OS Evolved 25.2X100D20), with
  ``explicit-congestion-notification`` on the scheduler.

A scheme a platform cannot express (MQ-ECN's dynamic thresholds; sojourn-time marking on a
queue-length-only platform; ECN#'s persistent-queue part outside tc) gets a file that says
so, and names the best validated scheme that the platform can express, with its settings.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .. import _core

PLATFORMS = ("sonic", "tc", "nvue", "junos")
FILES = {"sonic": "sonic-config_db.json", "tc": "tc.sh", "nvue": "nvue.sh", "junos": "junos.conf"}
CODEL_TICK_NS = 1024  # kernel codel_time_t: ns >> CODEL_SHIFT (10)


def _b(v: Any) -> int:
    return _core.parse_unit("size", str(v))


def _ns(v: Any) -> int:
    return _core.parse_unit("time", str(v))


def _codel_us(v: Any) -> str:
    """A time as tc's codel takes it, rounded to the kernel's 1024-ns tick."""
    ticks = max(1, round(_ns(v) / CODEL_TICK_NS))
    return f"{ticks * CODEL_TICK_NS / 1000:g}us"


def supports(platform: str, scheme: str) -> str | None:
    """None if the platform can express the scheme, else why not."""
    qlen = {"per_queue", "dctcp_red", "red"}
    if scheme in ("mq_ecn",):
        return "MQ-ECN's per-queue threshold follows the round time of the scheduler; no platform here has it"
    if scheme == "dualq":
        return "the dual AQM's two RED instances in one queue, by ECN capability, have no equivalent here"
    if platform in ("sonic", "nvue") and scheme not in qlen:
        return (f"{'SONiC WRED_PROFILE' if platform == 'sonic' else 'NVUE congestion-control'} marks on queue "
                f"length (bytes) only; {scheme} marks on sojourn time")
    if platform == "junos" and scheme in qlen:
        return ("Junos drop profiles take fill levels in percent of the queue's buffer allocation, which "
                "ecnlab does not know; use the byte thresholds below with your platform's buffer size")
    if platform == "junos" and scheme == "codel":
        return "Junos latency-ecn is an instantaneous sojourn threshold; CoDel's control law has no equivalent"
    return None


def _step(params: dict[str, Any]) -> tuple[int, int, float]:
    """(min bytes, max bytes, max probability) of a queue-length scheme."""
    if "marking.threshold.k" in params:
        k = _b(params["marking.threshold.k"])
        return k, k, 1.0
    return _b(params["marking.red.min_th"]), _b(params["marking.red.max_th"]), float(params["marking.red.max_p"])


def sonic(scheme: str, params: dict[str, Any], queues: list[int]) -> str:
    mn, mx, p = _step(params)
    name = f"ECNLAB_{scheme.upper()}"
    doc = {
        "WRED_PROFILE": {name: {
            "ecn": "ecn_all", "wred_green_enable": "true",
            "green_min_threshold": str(mn), "green_max_threshold": str(mx),
            "green_drop_probability": str(max(1, min(100, round(p * 100)))),
        }},
        "QUEUE": {f"Ethernet0|{q}": {"wred_profile": name} for q in queues},
    }
    return json.dumps(doc, indent=2) + "\n"


def _tc_root(sched: dict[str, Any], queues: int, dscp_to_queue: list[int]) -> list[str]:
    kind = sched.get("kind", "dwrr")
    strict = int(sched.get("strict", 1 if kind.startswith("sp_") else (queues if kind == "sp" else 0)))
    quantum = _b(sched.get("quantum", "1.5KB"))
    weights = sched.get("weights") or [1] * (queues - strict)
    lines = ["DEV=${DEV:-eth0}   # the egress interface",
             f"# {queues} bands: {strict} strict, the rest DRR with quanta = quantum x weight (tc-ets(8))"]
    quanta = " ".join(str(quantum * int(w)) for w in weights[: queues - strict])
    lines.append(f"tc qdisc replace dev $DEV root handle 1: ets bands {queues}"
                 + (f" strict {strict}" if strict else "") + (f" quanta {quanta}" if quanta else ""))
    for d, q in enumerate(dscp_to_queue):  # DSCP d -> band q+1 (ToS byte = DSCP << 2)
        lines.append(f"tc filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip dsfield "
                     f"0x{d << 2:02x} 0xfc flowid 1:{q + 1}")
    return lines


def tc(scheme: str, params: dict[str, Any], queues: int, sched: dict[str, Any], buffer_bytes: int) -> str:
    lines = _tc_root(sched, queues, list(range(queues)))
    for q in range(queues):
        parent = f"parent 1:{q + 1} handle {q + 10}:"
        if scheme in ("per_queue", "dctcp_red", "red"):
            mn, mx, p = _step(params)
            if mx <= mn:  # tc red needs max > min: a one-packet ramp to probability 1 is the step
                mx = mn + 1500
            burst = math.ceil((2 * mn + mx) / (3 * 1500))
            lines.append(f"tc qdisc replace dev $DEV {parent} red limit {max(buffer_bytes, 4 * mx)} min {mn} max {mx} "
                         f"avpkt 1500 burst {burst} probability {p:g} ecn")
        elif scheme == "tcn":
            t = params["marking.tcn.threshold"]
            lines.append(f"tc qdisc replace dev $DEV {parent} codel ce_threshold {_codel_us(t)} "
                         f"target 1s interval 1s ecn   # CoDel's own law off (target 1 s): sojourn > T marks, as TCN")
        elif scheme == "ecn_sharp":
            lines.append(f"tc qdisc replace dev $DEV {parent} codel ce_threshold "
                         f"{_codel_us(params['marking.ecn_sharp.ins_target'])} target "
                         f"{_codel_us(params['marking.ecn_sharp.pst_target'])} interval "
                         f"{_codel_us(params['marking.ecn_sharp.pst_interval'])} ecn")
        elif scheme == "codel":
            lines.append(f"tc qdisc replace dev $DEV {parent} codel target {_codel_us(params['marking.codel.target'])} "
                         f"interval {_codel_us(params['marking.codel.interval'])} ecn")
    notes = {
        "per_queue": "tc's RED averages the queue (weight from burst); with the smallest burst it follows the "
                     "instantaneous queue within a few packets, as DCTCP-RED's step.",
        "red": "tc derives RED's EWMA weight from burst ((2 min + max) / (3 avpkt)), not from w directly.",
        "tcn": "codel ce_threshold marks every ECT packet whose sojourn exceeds it, at dequeue: TCN's rule.",
        "ecn_sharp": "An approximation: ce_threshold = ins_target is ECN#'s instantaneous part; CoDel's law "
                     "(target = pst_target, interval = pst_interval) stands for the persistent part, whose "
                     "spacing (interval / count) differs from CoDel's (interval / sqrt(count)).",
        "codel": "",
    }
    head = ["#!/bin/sh", f"# ecnlab advise: {scheme} as Linux tc takes it (run as root; DEV= the interface).",
            f"# {notes.get(scheme, '')}" if notes.get(scheme) else "#",
            "# times rounded to the kernel's 1.024 us CoDel tick; sizes in bytes.", "set -e"]
    return "\n".join(head + lines) + "\n"


def nvue(scheme: str, params: dict[str, Any], queues: list[int]) -> str:
    mn, mx, p = _step(params)
    tcs = ",".join(map(str, queues))
    base = f"nv set qos congestion-control default-global traffic-class {tcs}"
    return "\n".join([
        "#!/bin/sh", f"# ecnlab advise: {scheme} as NVIDIA Cumulus Linux (NVUE) takes it: thresholds in bytes,",
        "# probability in percent. Step marking: min = max = K at 100 %.",
        f"{base} ecn enable", f"{base} red disable", f"{base} min-threshold {mn}", f"{base} max-threshold {mx}",
        f"{base} probability {max(1, min(100, round(p * 100)))}", "nv config apply", ""])


def junos(scheme: str, params: dict[str, Any], queues: list[int]) -> str:
    if scheme == "tcn":
        t, what = _ns(params["marking.tcn.threshold"]), "TCN's sojourn threshold T"
    else:
        t, what = _ns(params["marking.ecn_sharp.ins_target"]), ("ECN#'s instantaneous target; its persistent-queue "
                                                                   "part has no Junos equivalent")
    scheds = "\n".join(f"        ecnlab-q{q} {{\n            explicit-congestion-notification;\n"
                       f"            latency-ecn {{\n                threshold {t};\n            }}\n        }}"
                       for q in queues)
    return (f"/* ecnlab advise: {scheme} as Junos takes it: latency-ecn threshold in nanoseconds ({what}).\n"
            f"   Map each forwarding class to its scheduler in your scheduler-map. */\n"
            f"class-of-service {{\n    schedulers {{\n{scheds}\n    }}\n}}\n")


def render(platform: str, scheme: str, params: dict[str, Any], queues: int, sched: dict[str, Any],
           buffer_bytes: int) -> str:
    qs = list(range(queues))
    if platform == "sonic":
        return sonic(scheme, params, qs)
    if platform == "tc":
        return tc(scheme, params, queues, sched, buffer_bytes)
    if platform == "nvue":
        return nvue(scheme, params, qs)
    return junos(scheme, params, qs)


def comment(platform: str, text: str) -> str:
    """``text`` as a comment in the platform's file (SONiC's JSON gets a _comment key)."""
    if platform == "sonic":
        return text
    if platform == "junos":
        return "/* " + text.replace("*/", "* /") + " */\n"
    return "".join(f"# {line}\n" for line in text.splitlines())


def write_configs(out_dir, platforms: list[str], ranked: list[tuple[str, dict[str, Any]]], queues: int,
                  sched: dict[str, Any], buffer_bytes: int, validated: bool = True,
                  edges: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """One file per platform for the best-ranked scheme it can express; ``ranked`` is
    (scheme, params) best first, ``edges`` the schemes whose best point is at the edge of
    the sweep ("lowest" / "highest"), ``validated`` whether a simulated check ranked them (else
    they are the papers' starting points, in the order asked for). Returns {platform:
    {file, scheme, note}}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = {}
    for plat in platforms:
        best = ranked[0][0]
        why = supports(plat, best)
        pick = next(((s, p) for s, p in ranked if supports(plat, s) is None), None)
        f = out_dir / FILES[plat]
        note = ""
        if why:
            # Say "validated" only of what a simulated check ranked (not with --validate none).
            first = f"the recommended {best}" if validated else f"{best} (the first of --schemes; --validate none)"
            note = f"{first} has no equivalent on {plat}: {why}."
            edge = (edges or {}).get(pick[0]) if pick else None
            note += ((f" The best validated scheme {plat} can express is {pick[0]}, below."
                      + (f" Its best point is the {edge} factor swept, so its optimum may lie beyond it." if edge else "")
                      if validated else
                      f" The first of --schemes {plat} can express is {pick[0]}, below, at its papers' starting "
                      f"point (unchecked).") if pick
                     else f" None of the {'validated ' if validated else ''}schemes has one; nothing to configure.")
        if plat == "sonic":
            doc = json.loads(render(plat, *pick, queues, sched, buffer_bytes)) if pick else {}
            if note:
                doc = {"_comment": note, **doc}
            f.write_text(json.dumps(doc, indent=2) + "\n")
        else:
            body = render(plat, *pick, queues, sched, buffer_bytes) if pick else ""
            # The note goes after a script's shebang, which must stay its first line.
            shebang, rest = body.split("\n", 1) if body.startswith("#!") else ("", body)
            f.write_text((shebang + "\n" if shebang else "") + (comment(plat, note) if note else "") + rest)
        result[plat] = {"file": f"config/{f.name}", "scheme": pick[0] if pick else None, "note": note}
    return result
