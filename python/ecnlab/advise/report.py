"""``DIR/report.html`` of ``ecnlab advise``: the verdict first, then the inputs, how many
runs were unsound and why, the schemes' points and the race (figures ``figures.py``), the
recommendation per queue and class, isolation, drops, probe RTT, and the platform files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..report.figures import Figures
from ..report.page import render
from . import figures, words


def _iv(m: dict[str, Any] | None, show=words.time_us) -> str:
    """``62 us (58-66)``: a mean and its 95 % interval, for people."""
    if not m or m.get("mean") is None:
        return "–"
    if m.get("lo") is None or m["lo"] == m["hi"]:
        return show(m["mean"])
    return f"{show(m['mean'])} ({show(m['lo'])} – {show(m['hi'])})"


def _meta(adv: dict[str, Any]) -> list[str]:
    net, inp = adv["network"], adv["inputs"]
    rtt = inp.get("rtt") or {}
    meta = [net["source"], f"{net['queues']} queues, {net['scheduler']}",
            f"strict: {words.queues(net['strict_queues']) if net['strict_queues'] else 'none'}",
            f"ECN on {words.queues(net['ecn_queues'])}", f"port {words.rate(net['port_rate_bps'])}",
            f"buffer {words.size(net['buffer_bytes'])}"]
    if rtt:
        meta.append(f"RTT p50 {words.time_us(rtt['p50_us'])}, p90 {words.time_us(rtt['p90_us'])}, "
                    f"p99 {words.time_us(rtt['p99_us'])} ({rtt['source']})")
    meta.append(f"validation: {inp['validate']}, {adv['validation']['flows_per_run']} flows per run")
    return meta


def _inputs_table(adv: dict[str, Any]) -> dict[str, Any]:
    rows = [{"cells": [k, v]} for k, v in adv["inputs"]["given"].items()]
    rows += [{"cells": ["(host NICs)", adv["network"]["host_nics"]]}]
    rows += [{"cells": ["(note)", n]} for n in adv["network"]["notes"]]
    return {"header": ["input", "as given"], "rows": rows}


def _soundness(adv: dict[str, Any]) -> dict[str, Any]:
    s = adv["soundness"]
    text = [f"{s['runs']} runs, {s['unsound']} unsound: an unsound run is never ranked, and a point with one is no "
            f"candidate. The guard's rules: {s['rules']}."]
    rows = [{"cells": [rule.replace("_", " "), n, s["examples"].get(rule, "")]} for rule, n in sorted(s["by_rule"].items())]
    return {"id": "soundness", "title": f"Soundness: {s['unsound']} of {s['runs']} runs unsound", "text": text,
            "table": {"header": ["rule", "runs", "example"], "rows": rows} if rows else None}


def _points_table(adv: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for e in adv["schemes"]:
        if e.get("skipped"):
            rows.append({"cells": [e["name"], "–", "skipped: " + e["skipped"], "", ""]})
            continue
        for p in e.get("points", []):
            status = ("not run: " + p["not_run"] if p.get("not_run") else "sound" if p.get("sound") else
                      "unsound: " + "; ".join(sorted({f for r in p.get("runs", []) for f in r["flags"]}))[:300]
                      if p.get("runs") else "")
            rows.append({"best": (e.get("candidate") or {}).get("label") == p["label"],
                         "cells": [e["name"], words.params(p["params"]), status, _iv(p.get("metric")),
                                   e.get("race", "") if (e.get("candidate") or {}).get("label") == p["label"] else ""]})
    return {"header": ["scheme", "parameters", "runs", adv["validation"]["metric"]["words"] + " (95 %)", "race"],
            "rows": rows}


def _per_queue_table(adv: dict[str, Any]) -> dict[str, Any] | None:
    rec = adv.get("recommendation")
    if not rec:
        return None
    rows = []
    for what, m in (("queue", rec["metrics"].get("by_queue", {})), ("class (DSCP)", rec["metrics"].get("by_class", {}))):
        for k in sorted(m, key=int):
            g = m[k]
            rows.append({"cells": [f"{what} {k}", _iv(g["small"].get("avg_us")), _iv(g["small"].get("p99_us")),
                                   _iv(g["small"].get("slowdown_avg"), words.number),
                                   _iv(g["small"].get("slowdown_p99"), words.number), _iv(g["large"].get("avg_us"))]})
    return {"header": ["", "small: avg FCT", "small: p99 FCT", "small: avg slowdown", "small: p99 slowdown",
                       "large: avg FCT"], "rows": rows}


def write_advice_report(out: Path, adv: dict[str, Any]) -> Path:
    figs = Figures(out)
    figures.draw(figs, adv)
    by = {f["name"]: f for f in figs.items}
    v, rec = adv["verdict"], adv.get("recommendation")
    sections = [{"id": "verdict", "title": "Verdict", "text": [v["text"]]}]
    sections.append({"id": "inputs", "title": "Inputs", "table": _inputs_table(adv)})
    sections.append(_soundness(adv))
    sections.append({"id": "points", "title": "The points validated", "table": _points_table(adv),
                     "figures": [by[n] for n in ("check_thresholds", "check_race") if n in by],
                     "text": [f"Each scheme's starting point by its paper's rule, scaled; screened on the same seeds "
                              f"(the same traffic for every scheme), then each scheme's best sound point raced on "
                              f"paired seeds until the interval decides ({adv['validation']['end']}"
                              + (f": {adv['validation']['why_end']}" if adv["validation"]["why_end"] else "") + ")."]})
    if rec:
        m = rec["metrics"]
        sections.append({"id": "recommendation", "title": f"Recommendation: {rec['label']}",
                         "text": [f"{words.params(rec['params'])} on {words.queues(adv['network']['ecn_queues'])}. "
                                  f"Small flows: average {_iv(m['fct']['small']['avg_us'])}, p99 "
                                  f"{_iv(m['fct']['small']['p99_us'])}; large flows: average "
                                  f"{_iv(m['fct']['large']['avg_us'])}; drops per run: "
                                  f"{_iv(m['drops']['switch'], words.number)} at switches, "
                                  f"{_iv(m['drops']['nic'], words.number)} at host NICs (mean, 95 % interval)."],
                         "table": _per_queue_table(adv),
                         "figures": [by[n] for n in ("queues", "isolation", "drops", "probe_rtt") if n in by]})
    cfg = adv.get("config", {})
    if cfg:
        sections.append({"id": "config", "title": "Platform files (config/)", "table": {
            "header": ["platform", "file", "sets", "not expressed"],
            "rows": [{"cells": [p, c["file"], c["summary"], " ".join(c["missing"])]} for p, c in cfg.items()]}})
    return render(out / "report.html", title="ecnlab advise", meta=_meta(adv), sections=sections)
