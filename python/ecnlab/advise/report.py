"""``DIR/report.html`` of ``ecnlab advise``: inputs, starting points with their rules, the
simulated check (figures and table, mean ± 95 % over seeds), the recommendation, the
platform files, and the run figures of the recommended point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..report.figures import Figures
from ..report.page import fmt_pm, render
from ..report.run_report import draw_run
from ..report.sweep_report import draw_sweep


def _pm(m: dict[str, Any] | None) -> str:
    return fmt_pm((m or {}).get("mean"), (m or {}).get("ci95"))


def write_advice_report(out: Path, advice: dict[str, Any]) -> Path:
    figs = Figures(out)
    agg = []
    for e in advice["schemes"]:
        for p in (e.get("validated") or {}).get("points", []):
            row = {"scheme": e["scheme"], "factor": p["factor"], "seeds": p["metrics"]["fct_small_avg_us"]["n"]}
            for k, m in p["metrics"].items():
                row[f"{k}_mean"], row[f"{k}_ci95"] = m["mean"], m["ci95"]
            agg.append(row)
    if agg:
        draw_sweep(figs, agg, ["factor", "scheme"],
                   metrics=[("fct_small_avg_us", "FCT, small flows: avg (µs)"),
                            ("fct_small_p99_us", "FCT, small flows: p99 (µs)"),
                            ("fct_large_avg_us", "FCT, large flows: avg (µs)"),
                            ("share_deviation", "largest |queue share − weight share|")], prefix="check_")
    rec = advice.get("recommendation")
    if rec:
        e = next(x for x in advice["schemes"] if x["scheme"] == rec["scheme"])
        p = next(p for p in e["validated"]["points"] if p["factor"] == rec["factor"])
        run = out / "validation" / "runs" / p["keys"][0]
        draw_run(figs, run, json.loads((run / "summary.json").read_text()), prefix="best_")
    inp = advice["inputs"]
    r = inp["rtt"]
    meta = [f"link {inp['link_rate']}", f"{inp['queues']} queues, {inp['scheduler']}", f"{inp['transport']}",
            f"{inp['workload']} at load {inp['load']}",
            f"RTT min {r['min_us']:g} / mean {r['mean_us']:.4g} / p50 {r['p50_us']:g} / p90 {r['p90_us']:g} / "
            f"p99 {r['p99_us']:g} us ({r['source']})",
            f"check: {inp['validate']}, {inp['flows_per_run']} flows per run, seeds {inp['seeds']}, "
            f"factors {inp['factors']}"]
    sections = []
    if rec:
        sections.append({"id": "recommendation", "title": f"Recommendation: {rec['scheme']}",
                         "text": [", ".join(f"{k} = {v}" for k, v in rec["params"].items()), rec["verdict"],
                                  f"Small flows: avg {_pm(rec['small_avg_us'])} µs, p99 {_pm(rec['small_p99_us'])} µs;"
                                  f" large flows: avg {_pm(rec['large_avg_us'])} µs (mean ± 95 % over seeds)."]})
    else:
        sections.append({"id": "recommendation", "title": "No simulated check",
                         "note": "--validate none: the starting points below are the papers' rules, untested."})
    sections.append({"id": "rules", "title": "Starting points (the papers' rules)", "table": {
        "header": ["scheme", "parameters", "rule", "source", "note"],
        "rows": [{"cells": [e["scheme"], ", ".join(f"{k.split('.')[-1]} = {v}" for k, v in e["params"].items()),
                            e["rule"], e["source"], e.get("note", "")]} for e in advice["schemes"]]}})
    rows = []
    for e in advice["schemes"]:
        for p in (e.get("validated") or {}).get("points", []):
            m = p["metrics"]
            rows.append({"best": bool(rec) and e["scheme"] == rec["scheme"] and p["factor"] == rec["factor"],
                         "cells": [e["scheme"], p["factor"], ", ".join(f"{k.split('.')[-1]} = {v}"
                                                                      for k, v in p["params"].items()),
                                   _pm(m["fct_small_avg_us"]), _pm(m["fct_small_p99_us"]), _pm(m["fct_large_avg_us"]),
                                   _pm(m["share_deviation"])]})
    if rows:
        sections.append({"id": "check", "title": "Simulated check", "figures": [f for f in figs.items
                                                                               if f["name"].startswith("check_")],
                         "text": [f"Each point: the starting parameters scaled by the factor, run on the same seeds "
                                  f"(the same traffic) for every scheme. Ranked by small-flow average FCT, then p99. "
                                  f"Scheduling: the largest gap, over the weighted queues of {inp['bottleneck_port']}, "
                                  f"between a queue's share of their goodput and its weight's share (Poisson traffic "
                                  f"does not keep every queue backlogged, so some gap is demand, not the scheme)."],
                         "table": {"header": ["scheme", "factor", "parameters", "small avg (µs)", "small p99 (µs)",
                                              "large avg (µs)", "share gap"], "rows": rows}})
    cfg = advice.get("config", {})
    if cfg:
        sections.append({"id": "config", "title": "Platform configuration (config/)", "table": {
            "header": ["platform", "file", "scheme", "note"],
            "rows": [{"cells": [p, c["file"], c["scheme"] or "–", c["note"]]} for p, c in cfg.items()]}})
    best_figs = [f for f in figs.items if f["name"].startswith("best_")]
    if best_figs:
        sections.append({"id": "best", "title": "The recommended point, first seed", "figures": best_figs})
    return render(out / "report.html", title="ecnlab advise", meta=meta, sections=sections)
