"""What an operator reads of a validation run, and of a point over its seeds: per class
(DSCP) and per queue, the small flows' average and p99 FCT and slowdown and the large
flows' FCT; the drops and where they happened (which switch port and queue, or a host NIC);
marks on queues that are not to carry ECN; each weighted queue's service against what its
weight owes it while backlogged (``sound.service``: the guard's share rule); the probes' RTT.

FCTs per class and queue are the summary's (``fct_by_class``, computed by the core); the
slowdowns are computed from ``flows.csv`` over the same flows (those the summary measures:
sized, finished, arrived after the warm-up), with the core's size classes
(``_core.fct_classes``) and its nearest-rank percentile.

Over seeds a quantity is ``{mean, lo, hi, n}``: the mean and a 95 % interval drawn on the log
scale, ``mean x exp(±t s / (mean sqrt n))`` (the delta method for the log of a mean), so the
interval of a positive quantity stays positive; for a small spread it is Student's t."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from .. import _core
from ..inputs import read_csv, read_summary
from ..report.stats import t975
from . import sound
from .network import Network


def _pctl(v: list[float], q: float) -> float | None:
    if not v:
        return None
    v = sorted(v)
    return v[min(int(q * len(v)), len(v) - 1)]


def _size_class(size: float) -> str:
    for name, above, up_to in _core.fct_classes():
        if name != "all" and (above is None or size > above) and (up_to is None or size <= up_to):
            return name
    return "all"


def _fct(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: stats.get(k) for k in ("avg_us", "p99_us", "count")}


def _slowdowns(flows, measure_from: float) -> dict[tuple[str, str, str], list[float]]:
    """Slowdowns of the measured flows by (group kind, group, size class)."""
    out: dict[tuple[str, str, str], list[float]] = {}
    if flows is None or not len(flows):
        return out
    f = flows[flows["fct_us"].notna() & flows["size"].notna() & (flows["start_s"].astype(float) >= measure_from)]
    for size, cls, q, sd in zip(f["size"].astype(float), f["class"].astype(int), f["queue"], f["slowdown"].astype(float)):
        c = _size_class(size)
        for key in (("all", "", c), ("class", str(cls), c), ("queue", str(q), c)):
            out.setdefault(key, []).append(sd)
    return out


def _group(fct_by: dict[str, Any], sd: dict, kind: str, key: str) -> dict[str, Any]:
    g = fct_by.get(key, {})
    out = {}
    for c in ("small", "medium", "large"):
        v = sd.get((kind, key, c), [])
        out[c] = {**_fct(g.get(c, {})), "slowdown_avg": sum(v) / len(v) if v else None, "slowdown_p99": _pctl(v, 0.99)}
    return out


def _drops(summary: dict[str, Any], net: Network) -> dict[str, Any]:
    at: dict[str, int] = {}
    marks_off = 0
    for q in summary.get("queues") or []:
        if q["drops"]:
            at[f"{q['port']} queue {q['queue']}"] = int(q["drops"])
        if int(q["queue"]) not in net.ecn_queues:
            marks_off += int(q.get("marks", 0))
    nic = {n["port"]: int(n["drops"]) for n in summary.get("nics") or [] if n["drops"]}
    return {"total": int(summary.get("drops", 0)), "switch": sum(at.values()), "nic": sum(nic.values()),
            "at": {**at, **{f"NIC {p}": n for p, n in nic.items()}},
            "by_reason": dict(summary.get("drops_by_reason") or {}), "marks_off_ecn_queues": marks_off}


def run_metrics(run_dir: Path, net: Network) -> dict[str, Any]:
    """The operator's metrics of one run."""
    summary = read_summary(run_dir / "summary.json")
    flows = read_csv(run_dir / "flows.csv")
    if flows is not None and len(flows):
        flows["queue"] = [net.dscp_to_queue[int(c) & 63] for c in flows["class"]]
    sd = _slowdowns(flows, float(summary.get("measure_from_s", 0.0)))
    by = summary.get("fct_by_class") or {}
    classes = sorted({int(k) for k in (by.get("class") or {})})
    queues = sorted({int(k) for k in (by.get("queue") or {})})
    fct = summary.get("fct") or {}
    probe = summary.get("probe_rtt") or {}
    iso = {f"{s.port} queue {s.queue}": s.ratio for s in sound.service(run_dir)}
    return {"fct": {c: {**_fct(fct.get(c, {})), "slowdown_avg": _mean(sd.get(("all", "", c), [])),
                        "slowdown_p99": _pctl(sd.get(("all", "", c), []), 0.99)}
                    for c in ("small", "medium", "large")},
            "by_queue": {str(q): _group(by.get("queue", {}), sd, "queue", str(q)) for q in queues},
            "by_class": {str(c): _group(by.get("class", {}), sd, "class", str(c)) for c in classes},
            "drops": _drops(summary, net), "timeouts": int((summary.get("flows") or {}).get("timeouts", 0)),
            "isolation": iso,
            "probe_rtt_us": {"avg": probe.get("avg_us"), "p99": probe.get("p99_us")} if probe.get("count") else {}}


def _mean(v: list[float]) -> float | None:
    return sum(v) / len(v) if v else None


def interval(values: Iterable[Any]) -> dict[str, Any]:
    """``{mean, lo, hi, n}`` of the finite values (module doc: the log-scale interval)."""
    v = [float(x) for x in values if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)]
    n = len(v)
    if n == 0:
        return {"mean": None, "lo": None, "hi": None, "n": 0}
    m = sum(v) / n
    if n == 1 or m <= 0:
        return {"mean": m, "lo": None if n == 1 else m, "hi": None if n == 1 else m, "n": n}
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    h = t975(n - 1) * s / (m * math.sqrt(n))
    return {"mean": m, "lo": m * math.exp(-h), "hi": m * math.exp(h), "n": n}


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-run metrics (the same shape each) -> the same shape with ``interval`` leaves."""
    if not runs:
        return {}
    keys: list[str] = []
    for r in runs:
        for k in r:
            if k not in keys:
                keys.append(k)
    out: dict[str, Any] = {}
    for k in keys:
        vals = [r.get(k) for r in runs]
        if any(isinstance(v, dict) for v in vals):
            out[k] = aggregate([v if isinstance(v, dict) else {} for v in vals])
        else:
            out[k] = interval(v for v in vals if v is not None)
    return out


def at(m: dict[str, Any], path: str) -> Any:
    """``at(metrics, "fct.small.p99_us")`` (None where absent)."""
    node: Any = m
    for p in path.split("."):
        if not isinstance(node, dict) or p not in node:
            return None
        node = node[p]
    return node
