"""Numbers and names as a person reads them: sizes and times at 3 significant digits in the
unit that suits them, schemes by their papers' names, sets of queues as ranges. Only what is
printed or drawn goes through here; ``advice.json`` keeps a program's precision where a
program reads it (parameters with their units, the intervals' bounds)."""

from __future__ import annotations

import math
from typing import Iterable

from .. import _core

NAMES = {"tcn": "TCN", "ecn_sharp": "ECN#", "per_queue": "per-queue ECN", "dctcp_red": "DCTCP-RED",
         "red": "RED", "mq_ecn": "MQ-ECN", "codel": "CoDel", "dualq": "the dual AQM", "per_port": "per-port ECN",
         "per_pool": "per-pool ECN", "dequeue_red": "dequeue RED", "ideal": "ideal ECN", "none": "no marking"}

# The symbol a scheme's swept threshold goes by in its paper (TCN's T, DCTCP's K, ...).
SYMBOL = {"marking.tcn.threshold": "T", "marking.threshold.k": "K", "marking.ecn_sharp.ins_target": "ins_target",
          "marking.ecn_sharp.pst_target": "pst_target", "marking.ecn_sharp.pst_interval": "pst_interval",
          "marking.red.min_th": "min_th", "marking.red.max_th": "max_th", "marking.red.max_p": "max_p",
          "marking.red.w": "w", "marking.mq_ecn.k": "K", "marking.codel.target": "target",
          "marking.codel.interval": "interval"}


def name(scheme: str) -> str:
    return NAMES.get(scheme, scheme)


def _sig(x: float) -> str:
    if x == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(x))))
    return f"{x:,.{digits}f}".rstrip("0").rstrip(".") if digits else f"{round(x):,}"


def size(b: float) -> str:
    """``3118622`` -> ``3.12 MB``; ``250000`` -> ``250 KB``; ``1500`` -> ``1.5 KB``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(b) >= scale:
            return f"{_sig(b / scale)} {unit}"
    return f"{_sig(b)} B"


def time_us(us: float) -> str:
    """``53.599999`` -> ``53.6 us``; ``1234`` -> ``1.23 ms``."""
    if abs(us) >= 1e6:
        return f"{_sig(us / 1e6)} s"
    if abs(us) >= 1e3:
        return f"{_sig(us / 1e3)} ms"
    return f"{_sig(us)} us"


def rate(bps: float) -> str:
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if abs(bps) >= scale:
            return f"{_sig(bps / scale)} {unit}"
    return f"{_sig(bps)} bps"


def number(x: float) -> str:
    return _sig(x)


def value(key: str, v: object) -> str:
    """A scheme parameter's value as a person reads it (``1000000B`` -> ``1 MB``)."""
    text = str(v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _sig(float(v))
    for kind, show in (("size", size), ("time", lambda ns: time_us(ns / 1e3))):
        try:
            return show(_core.parse_unit(kind, text))
        except ValueError:
            continue
    return text


def params(p: dict[str, object]) -> str:
    """``T = 80 us`` / ``ins_target = 80 us, pst_target = 53.6 us, pst_interval = 80 us``."""
    return ", ".join(f"{SYMBOL.get(k, k.rsplit('.', 1)[-1])} = {value(k, v)}" for k, v in p.items()
                     if not k.endswith(".mode"))


def queues(qs: Iterable[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``queues 1-3, 5``; ``[4]`` -> ``queue 4``."""
    q = sorted(set(qs))
    if not q:
        return "no queue"
    runs, start = [], q[0]
    for a, b in zip(q, q[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ("queue " if len(q) == 1 else "queues ") + ", ".join(runs)


def pct(x: float) -> str:
    """A percentage for people: ``17.96`` -> ``18 %``, ``1.234`` -> ``1.2 %``."""
    return f"{x:.0f} %" if abs(x) >= 10 else f"{x:.1f} %"
