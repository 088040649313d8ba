"""The report of one ``ecnlab sweep`` directory (``results.csv``; ``summary.csv`` is
(re)written from it): each metric against each swept parameter, seeds aggregated."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any, Sequence

from .figures import Figures
from .page import fmt_pm, render
from .stats import aggregate, param_columns, write_summary_csv

METRICS = [
    ("fct_all_avg_us", "FCT, all flows: avg (µs)"),
    ("fct_small_avg_us", "FCT, small flows: avg (µs)"),
    ("fct_small_p99_us", "FCT, small flows: p99 (µs)"),
    ("fct_large_avg_us", "FCT, large flows: avg (µs)"),
    ("marks", "CE marks"),
    ("drops", "drops"),
    ("probe_rtt_p99_us", "probe RTT p99 (µs)"),
]
MAX_SERIES = 10


def _sort_key(v: str):
    """Numbers (and sizes/durations such as "40us", "65p") by value, then the rest by name."""
    m = re.match(r"^\s*(-?[0-9.]+(?:e-?\d+)?)", str(v))
    try:
        return (0, float(m.group(1)), str(v)) if m else (1, 0.0, str(v))
    except ValueError:
        return (1, 0.0, str(v))


def _f(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def read_rows(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """A sweep's ``results.csv``: its rows and header, within the readers' limits."""
    from ..inputs import csv_rows

    return csv_rows(path, "results")


def draw_sweep(figs: Figures, agg: Sequence[dict[str, Any]], params: Sequence[str],
               metrics: Sequence[tuple[str, str]] = METRICS, prefix: str = "") -> None:
    """One figure per swept parameter: every metric against it (mean over seeds, 95 %
    interval bars), one line per combination of the other swept parameters."""
    swept = [p for p in params if len({str(r[p]) for r in agg}) > 1]
    metrics = [(m, t) for m, t in metrics if any(_f(r.get(f"{m}_mean")) is not None for r in agg)]
    if not metrics:  # no run succeeded: nothing measured to draw
        return
    for p in swept:
        others = [q for q in swept if q != p]
        xs = sorted({str(r[p]) for r in agg}, key=_sort_key)
        combos = sorted({tuple(str(r[q]) for q in others) for r in agg}, key=lambda t: [_sort_key(v) for v in t])
        note = ""
        if len(combos) > MAX_SERIES:
            note = f" Only the first {MAX_SERIES} of {len(combos)} combinations of the other parameters are drawn."
            combos = combos[:MAX_SERIES]
        ncols = min(4, len(metrics))
        nrows = (len(metrics) + ncols - 1) // ncols
        name = prefix + "vs_" + re.sub(r"[^A-Za-z0-9]+", "_", p).strip("_")
        with figs.figure(name, f"Metrics against {p}",
                         f"Mean over seeds with its 95 % interval (Student's t; no bar with one seed), one line per "
                         f"value of {', '.join(others) or 'nothing else'}.{note}", ncols=ncols, nrows=nrows,
                         size=(3.6 * ncols + 0.8, 3.0 * nrows + 0.8)) as (fig, axes):
            for i, (m, title) in enumerate(metrics):
                ax = axes[i // ncols][i % ncols]
                for j, combo in enumerate(combos):
                    pts = []
                    for k, x in enumerate(xs):
                        r = next((r for r in agg if str(r[p]) == x and tuple(str(r[q]) for q in others) == combo), None)
                        if r is not None and _f(r.get(f"{m}_mean")) is not None:
                            pts.append((k, _f(r[f"{m}_mean"]), _f(r.get(f"{m}_ci95")) or 0.0))
                    if pts:
                        off = (j - (len(combos) - 1) / 2) * 0.06  # side by side, bars not on top of each other
                        label = ", ".join(f"{q}={v}" for q, v in zip(others, combo)) or "mean"
                        ax.errorbar([a + off for a, _, _ in pts], [b for _, b, _ in pts], yerr=[c for _, _, c in pts],
                                    marker="o", ms=4, capsize=3, lw=1.2, label=label)
                ax.set_xticks(range(len(xs)), xs, fontsize=7, rotation=20 if max(len(x) for x in xs) > 6 else 0)
                ax.set_title(title, fontsize=9)
                ax.set_xlabel(p, fontsize=8)
                ax.grid(alpha=0.3)
            if combos and others:
                axes[0][0].legend(fontsize=6)


def sweep_table(agg: Sequence[dict[str, Any]], params: Sequence[str]) -> dict[str, Any]:
    keys = ["fct_small_avg_us", "fct_small_p99_us", "fct_large_avg_us", "fct_all_avg_us"]

    def cell(r, m):
        return fmt_pm(_f(r.get(f"{m}_mean")), _f(r.get(f"{m}_ci95")))

    rows = sorted(agg, key=lambda r: [_sort_key(str(r[p])) for p in params])
    return {"header": [*params, "seeds", "small avg (µs)", "small p99 (µs)", "large avg (µs)", "all avg (µs)"],
            "rows": [{"cells": [*(str(r[p]) for p in params), int(r["seeds"]), *(cell(r, m) for m in keys)]}
                     for r in rows]}


def write_sweep_report(d: Path, dest: Path | None = None) -> Path:
    """The report of the sweep in ``d``, written into ``dest`` (default ``d``)."""
    dest = d if dest is None else dest
    rows, cols = read_rows(d / "results.csv")
    params = param_columns(cols)
    write_summary_csv(d, rows, params)
    agg = aggregate(rows, params)
    figs = Figures(dest)
    draw_sweep(figs, agg, params)
    ok = sum(1 for r in rows if r.get("status") == "ok")
    seeds = sorted({r.get("seed") for r in rows}, key=_sort_key)
    meta = [f"{len(rows)} runs ({ok} ok, {len(rows) - ok} failed)", f"{len(agg)} parameter combinations",
            f"seeds {', '.join(map(str, seeds))}", "summary.csv: every metric's mean and 95 % interval"]
    sections = [{"id": "metrics", "title": "Metrics against the swept parameters", "figures": figs.items},
                {"id": "table", "title": "FCT per parameter combination (mean ± 95 % interval over seeds)",
                 "table": sweep_table(agg, params)}]
    if not ok:
        sections[0]["note"] = "No run succeeded (failed/ holds each one's error): nothing to draw."
    elif not figs.items:
        sections[0]["note"] = "No parameter takes more than one value: nothing to draw against."
    return render(dest / "report.html", title=f"ecnlab sweep: {d.name}", meta=meta, sections=sections)
