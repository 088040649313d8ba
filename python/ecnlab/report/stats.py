"""Seed aggregation: the mean of a metric over the seeds of one sweep point and its 95 %
confidence interval (Student's t, two-sided, as for a small sample of independent runs).

A sweep point repeated over seeds differs only in its random streams, so the seeds are
independent samples of the same configuration; the interval is ``mean ± t(0.975, n-1) ·
s / sqrt(n)`` with ``s`` the sample standard deviation. One seed gives no interval (NaN).
``summary.csv`` has one row per point of the grid (the parameter columns of
``results.csv``), ``seeds`` (how many ran ok) and ``<metric>_mean`` / ``<metric>_ci95``
(the half-width) for every numeric metric column."""

from __future__ import annotations

import csv
import math
import os
import uuid
from pathlib import Path
from typing import Any, Iterable, Sequence

# t(0.975, df) for df = 1..30 (any statistics table); above 30 the normal 1.96 is within 2 %.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]

# Columns of results.csv that are bookkeeping, not metrics to aggregate.
_NOT_METRICS = {"seed", "key", "status", "error", "wall_time_s"}


def t975(df: int) -> float:
    return _T975[df - 1] if df <= len(_T975) else 1.96


def mean_ci95(values: Iterable[float]) -> tuple[float, float, int]:
    """(mean, half-width of the 95 % interval, n) of the finite values; NaN where undefined."""
    v = [float(x) for x in values if x is not None and x == x and math.isfinite(float(x))]
    n = len(v)
    if n == 0:
        return math.nan, math.nan, 0
    m = sum(v) / n
    if n == 1:
        return m, math.nan, 1
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    return m, t975(n - 1) * s / math.sqrt(n), n


def _num(x: Any) -> float | None:
    if x is None or x == "" or isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def param_columns(columns: Sequence[str]) -> list[str]:
    """The parameter columns of a results.csv: those before ``seed`` (sweep/store.py writes the
    point's params first)."""
    cols = list(columns)
    return cols[: cols.index("seed")] if "seed" in cols else []


def aggregate(rows: Sequence[dict[str, Any]], params: Sequence[str]) -> list[dict[str, Any]]:
    """One row per distinct parameter combination, over the rows with status ok (a run,
    by its ``key``, once)."""
    ok = [r for r in rows if r.get("status", "ok") == "ok"]
    metrics: list[str] = []
    seen = set(params) | _NOT_METRICS
    for r in ok:
        for k, v in r.items():
            if k not in seen and _num(v) is not None:
                seen.add(k)
                metrics.append(k)
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(str(r.get(p, "")) for p in params), [])
    counted: set[tuple] = set()
    for r in ok:
        g = tuple(str(r.get(p, "")) for p in params)
        if r.get("key") and (g, r["key"]) in counted:  # one run listed twice is one sample, not two seeds
            continue
        counted.add((g, r.get("key")))
        groups[g].append(r)
    out = []
    for g, rs in groups.items():
        row: dict[str, Any] = dict(zip(params, g))
        row["seeds"] = len(rs)
        for m in metrics:
            mean, ci, n = mean_ci95(_num(r.get(m)) for r in rs)
            row[f"{m}_mean"] = None if n == 0 else mean
            row[f"{m}_ci95"] = None if n < 2 else ci
        out.append(row)
    return out


def write_summary_csv(out_dir: str | os.PathLike, rows: Sequence[dict[str, Any]], params: Sequence[str]) -> Path:
    """``OUT/summary.csv``: ``aggregate(rows, params)``, written atomically."""
    agg = aggregate(rows, params)
    cols: list[str] = []
    for r in agg:
        cols.extend(k for k in r if k not in cols)
    return write_csv_atomic(Path(out_dir) / "summary.csv", agg, cols)


def write_csv_atomic(path: Path, rows: Sequence[dict[str, Any]], cols: Sequence[str]) -> Path:
    """``rows`` as CSV with columns ``cols`` (None as empty), written to a hidden file and
    renamed: a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(cols))
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    os.replace(tmp, path)
    return path
