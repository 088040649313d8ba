"""The report of one ``ecnlab run`` directory (``summary.json``, ``flows.csv``,
``timeseries.csv``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import _core
from ..inputs import read_csv
from .figures import Figures
from .page import render

# The FCT size classes of summary.json, as the core defines them: (name, above, up_to).
FCT_CLASSES: list[tuple[str, int | None, int | None]] = [tuple(c) for c in _core.fct_classes()]
BUCKETS = tuple(name for name, _, _ in FCT_CLASSES)


def _size(n: int) -> str:
    """100000 -> "100 KB", 10000000 -> "10 MB" (decimal, as scenario sizes)."""
    for unit, f in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    return f"{n} B"


def _label(name: str, above: int | None, up_to: int | None) -> str:
    if above is None and up_to is not None:
        return f"{name} (≤ {_size(up_to)})"
    if up_to is None and above is not None:
        return f"{name} (> {_size(above)})"
    return name


BUCKET_LABEL = {name: _label(name, above, up_to) for name, above, up_to in FCT_CLASSES}
MAX_QUEUES_DRAWN = 8  # the busiest queues by goodput; the others are in the tables


def busiest_queues(summary: dict[str, Any], n: int = MAX_QUEUES_DRAWN) -> list[tuple[str, int]]:
    qs = sorted((q for q in summary.get("queues", []) if (q.get("goodput_bps") or 0) > 0),
                key=lambda q: -q["goodput_bps"])
    return [(q["port"], int(q["queue"])) for q in qs[:n]]


def _bars(ax, groups: list[str], series: dict[str, list[float | None]], ylabel: str, log: bool = True) -> None:
    import numpy as np

    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    for i, (name, vals) in enumerate(series.items()):
        v = [np.nan if a is None else a for a in vals]
        ax.bar(x + (i - (len(series) - 1) / 2) * width, v, width, label=name)
    ax.set_xticks(x, groups, fontsize=8)
    ax.set_ylabel(ylabel)
    if log and any(a for vals in series.values() for a in vals if a):
        ax.set_yscale("log")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)


def draw_run(figs: Figures, d: Path, summary: dict[str, Any], prefix: str = "") -> None:
    """The run figures of one result directory (also used by the advice report)."""
    fct = summary.get("fct", {})
    with figs.figure(f"{prefix}fct_by_size", "FCT by flow size",
                     "Average and 99th-percentile flow completion time of the flows that arrived after warm-up, "
                     "by size bucket (summary.json fct).") as (fig, ax):
        present = [b for b in BUCKETS if (fct.get(b) or {}).get("count")]
        _bars(ax[0][0], [f"{BUCKET_LABEL[b]}\nn={fct[b]['count']}" for b in present],
              {"avg": [fct[b].get("avg_us") for b in present], "p99": [fct[b].get("p99_us") for b in present]}, "FCT (µs)")

    by = summary.get("fct_by_class") or {}
    with figs.figure(f"{prefix}fct_by_queue", "FCT by queue and by class",
                     "Small-flow average and p99 and all-flow average FCT per switch queue (left) and per flow "
                     "class, the DSCP (right) (summary.json fct_by_class).", ncols=2) as (fig, ax):
        for a, group, label in ((ax[0][0], "queue", "queue"), (ax[0][1], "class", "class")):
            keys = sorted(by.get(group, {}), key=int)
            g = by.get(group, {})
            if not keys:
                continue
            _bars(a, [f"{label} {k}" for k in keys],
                  {"small avg": [g[k]["small"].get("avg_us") for k in keys],
                   "small p99": [g[k]["small"].get("p99_us") for k in keys],
                   "all avg": [g[k]["all"].get("avg_us") for k in keys]}, "FCT (µs)")

    flows_csv = d / "flows.csv"
    cols = ("start_s", "size", "class", "slowdown")
    flows = read_csv(flows_csv, cols, numeric=cols)
    if not flows.empty and "slowdown" in flows:
        warm = summary.get("measure_from_s", 0.0) or 0.0
        fl = flows[flows["slowdown"].notna() & (flows["start_s"] >= warm)]
        with figs.figure(f"{prefix}slowdown_cdf", "Slowdown CDFs",
                         "Distribution of FCT / ideal FCT (the flow alone on its path) by size bucket (left) and by "
                         "flow class (right), flows.csv.", ncols=2) as (fig, ax):
            import numpy as np

            def cdf(a, v, label):
                v = np.sort(v.to_numpy(dtype=float))
                if len(v):
                    a.plot(v, np.arange(1, len(v) + 1) / len(v), label=f"{label} (n={len(v)})")

            for name, above, up_to in FCT_CLASSES:
                sel = fl
                if above is not None:
                    sel = sel[sel["size"] > above]
                if up_to is not None:
                    sel = sel[sel["size"] <= up_to]
                cdf(ax[0][0], sel["slowdown"], name)
            for c, g in sorted(fl.groupby("class"), key=lambda kv: kv[0]):
                cdf(ax[0][1], g["slowdown"], f"class {c}")
            for a in ax[0]:
                if a.has_data():
                    a.set_xscale("log")
                    a.set_xlabel("slowdown")
                    a.set_ylabel("CDF")
                    a.grid(alpha=0.3)
                    a.legend(fontsize=7)

    ts_csv = d / "timeseries.csv"
    ts = read_csv(ts_csv, ("t_s", "port", "queue", "avg_qlen_bytes", "goodput_bps"),
                  numeric=("t_s", "queue", "avg_qlen_bytes", "goodput_bps"))
    queues = busiest_queues(summary)
    if not ts.empty and queues:
        with figs.figure(f"{prefix}queues_over_time", "Queue length and goodput over time",
                         f"Average queue length and goodput per queue over each metrics.sample_interval (timeseries.csv); "
                         f"the {len(queues)} busiest queues by goodput.", ncols=2) as (fig, ax):
            for port, q in queues:
                s = ts[(ts["port"] == port) & (ts["queue"] == q)]
                ax[0][0].plot(s["t_s"], s["avg_qlen_bytes"] / 1e3, label=f"{port}:{q}", lw=1)
                ax[0][1].plot(s["t_s"], s["goodput_bps"] / 1e9, label=f"{port}:{q}", lw=1)
            ax[0][0].set_ylabel("avg queue length (KB)")
            ax[0][1].set_ylabel("goodput (Gbps)")
            for a in ax[0]:
                a.set_xlabel("time (s)")
                a.grid(alpha=0.3)
            ax[0][0].legend(fontsize=7)

    mr, dr = summary.get("marks_by_reason") or {}, summary.get("drops_by_reason") or {}
    with figs.figure(f"{prefix}marks_drops", "Marks and drops by reason",
                     "Every CE mark and drop in the measurement window by the reason the port recorded (left), and "
                     "per queue for the busiest queues (right).", ncols=2) as (fig, ax):
        reasons = [f"mark: {r}" for r in mr] + [f"drop: {r}" for r in dr]
        if reasons:
            vals = list(mr.values()) + list(dr.values())
            ax[0][0].barh(reasons, vals, color=["#1f77b4"] * len(mr) + ["#d62728"] * len(dr))
            ax[0][0].set_xlabel("packets")
            ax[0][0].tick_params(axis="y", labelsize=7)
            if max(vals) > 0 and max(vals) / max(min(vals), 1) > 100:
                ax[0][0].set_xscale("log")
        qs = {(q["port"], int(q["queue"])): q for q in summary.get("queues", [])}
        sel = [k for k in queues if qs[k]["marks"] or qs[k]["drops"]]
        if sel:
            _bars(ax[0][1], [f"{p}:{q}" for p, q in sel],
                  {"marks": [qs[k]["marks"] for k in sel], "drops": [qs[k]["drops"] for k in sel]}, "packets",
                  log=False)
            ax[0][1].tick_params(axis="x", labelrotation=30)


def run_tables(summary: dict[str, Any]) -> list[dict[str, Any]]:
    fct = summary.get("fct", {})
    sections = [{
        "id": "fct", "title": "Flow completion times", "figures": [],
        "table": {"header": ["size bucket", "flows", "avg (µs)", "p50 (µs)", "p99 (µs)"],
                  "rows": [{"cells": [BUCKET_LABEL[b], fct[b]["count"], fct[b].get("avg_us"), fct[b].get("p50_us"),
                                      fct[b].get("p99_us")]} for b in BUCKETS if b in fct]},
    }]
    by = summary.get("fct_by_class") or {}
    rows = []
    for group in ("queue", "class"):
        for k in sorted(by.get(group, {}), key=int):
            g = by[group][k]
            rows.append({"cells": [f"{group} {k}", g["all"]["count"], g["all"].get("avg_us"), g["small"]["count"],
                                   g["small"].get("avg_us"), g["small"].get("p99_us"), g["large"].get("avg_us")]})
    if rows:
        sections.append({"id": "fct_by_class", "title": "FCT by queue and by class", "figures": [],
                         "table": {"header": ["", "flows", "avg (µs)", "small flows", "small avg (µs)",
                                              "small p99 (µs)", "large avg (µs)"], "rows": rows}})
    port_rate = {p["port"]: p["rate_bps"] for p in summary.get("ports", [])}
    qrows = []
    busy = [q for q in summary.get("queues", []) if (q.get("goodput_bps") or 0) > 0 or q["marks"] or q["drops"]]
    for q in sorted(busy, key=lambda q: -(q.get("goodput_bps") or 0))[:32]:
        rate = port_rate.get(q["port"])
        qrows.append({"cells": [q["port"], q["queue"], q["goodput_bps"] / 1e9,
                                q["goodput_bps"] / rate if rate else None, q["avg_qlen_bytes"] / 1e3,
                                q["max_qlen_bytes"] / 1e3, q.get("avg_sojourn_us"), q["marks"], q["drops"]]})
    if qrows:
        sections.append({"id": "queues", "title": "Queues", "figures": [],
                         "text": ["Switch queues that carried data, the busiest first (at most 32; all are in summary.json)."],
                         "table": {"header": ["port", "queue", "goodput (Gbps)", "share of the link",
                                              "avg qlen (KB)", "max qlen (KB)", "avg sojourn (µs)", "marks",
                                              "drops"], "rows": qrows}})
    pfc = summary.get("pfc")
    if pfc is not None:
        paused = sorted(pfc.get("queues", []), key=lambda q: -q["paused_fraction"])
        sections.append({"id": "pfc", "title": "PFC pauses", "figures": [],
                         "text": [f"{pfc.get('pauses', 0)} pauses over the window; the queues paused longest first "
                                  "(at most 32; all are in summary.json). A host's NIC has the switches' queues and is "
                                  "paused per priority, as a switch port."
                                  if paused else "No queue was paused in the window."],
                         "table": {"header": ["port", "queue", "pauses", "paused (µs)", "paused share of the window"],
                                   "rows": [{"cells": [q["port"], q["queue"], q["pauses"], q["paused_us"],
                                                       q["paused_fraction"]]} for q in paused[:32]]}})
    return sections


def write_run_report(d: Path, dest: Path | None = None) -> Path:
    """The report of the run in ``d``, written into ``dest`` (default ``d``)."""
    from ..inputs import read_summary

    dest = d if dest is None else dest
    summary = read_summary(d / "summary.json")
    figs = Figures(dest)
    draw_run(figs, d, summary)
    sections = run_tables(summary)
    # Figures first in each section: they are what a person looks at first.
    where = {"fct_by_size": "fct", "fct_by_queue": "fct", "slowdown_cdf": "fct", "queues_over_time": "queues",
             "marks_drops": "queues"}
    for sec in sections:
        sec["figures"] = [f for f in figs.items if where.get(f["name"]) == sec["id"]]
    if not any(sec["id"] == "queues" for sec in sections):
        sections.append({"id": "queues", "title": "Queues", "figures": [f for f in figs.items
                                                                          if where.get(f["name"]) == "queues"]})
    fl = summary.get("flows", {})
    c = summary.get("counting", {})
    meta = [f"scenario {summary.get('scenario')}", f"seed {summary.get('seed')}",
            f"{summary.get('sim_time_s', 0):.4g} s simulated from {summary.get('measure_from_s', 0):.4g} s",
            f"flows: {fl.get('completed')} completed, {fl.get('unfinished')} unfinished, "
            + (f"{fl['not_started']} not started (after the run's end), " if fl.get("not_started") else "")
            + f"{fl.get('timeouts')} timeouts",
            f"marks {summary.get('marks')}, drops {summary.get('drops')}",
            f"packets sent {c.get('sent')} = delivered {c.get('delivered')} + dropped {c.get('dropped')} "
            f"+ in flight {c.get('in_flight')}"]
    return render(dest / "report.html", title=f"ecnlab run: {summary.get('scenario')}", meta=meta, sections=sections)
