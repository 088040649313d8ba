"""HTML reports (one per experiment, an index for the catalog) and REPRODUCTION.md.

The pages are static and self-contained: figures are referenced by relative paths next
to the page, no external scripts or styles. A small inline script sets
``data-images-loaded`` / ``data-images-total`` on ``<body>`` once every ``<img>`` has
loaded (complete with a natural width), so a headless browser can check the figures."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
 padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.5em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;font-size:.92em} th,td{border:1px solid #ccc;padding:.35em .5em;
 vertical-align:top;text-align:left} th{background:#f4f4f4}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.shown{background:#e5f5e0}.notshown{background:#fde0dd}.notrun{background:#eee;color:#555}.noteval{background:#fff7d6}
.meta{color:#555;font-size:.92em} code{background:#f4f4f4;padding:0 .2em}
figure{display:inline-block;margin:.8em 1em .8em 0;max-width:100%} figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:.88em;color:#444;max-width:640px}
"""

_SCRIPT = """
<script>
(function(){
  function check(){
    var imgs=Array.prototype.slice.call(document.images);
    var ok=imgs.filter(function(i){return i.complete&&i.naturalWidth>0;}).length;
    document.body.setAttribute('data-images-total',String(imgs.length));
    document.body.setAttribute('data-images-loaded',String(ok));
  }
  window.addEventListener('load',check);
})();
</script>
"""

_STATUS_CLASS = {"shown": "shown", "not shown": "notshown", "not run": "notrun", "not evaluated": "noteval"}


def fmt(v: Any) -> str:
    """A number as a table cell: 4 significant digits, thousands kept readable."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return "–"
        if isinstance(v, int) or float(v).is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        a = abs(v)
        if a >= 100:
            return f"{v:,.0f}"
        if a >= 10:
            return f"{v:.1f}"
        if a >= 1:
            return f"{v:.2f}"
        return f"{v:.3g}"
    return str(v)


def _e(s: Any) -> str:
    return html.escape(str(s))


def _seeds_cell(c: dict[str, Any]) -> str:
    return f"{c['seeds_shown']}/{c['seeds_judged']}" if "seeds_judged" in c else "-"


def _seed_values(c: dict[str, Any]) -> str:
    """Each seed's value and verdict, e.g. 'seed 1: 42.6 (not shown); seed 2: ...'."""
    return "; ".join(f"seed {p['seed']}: {fmt(p['ecnlab'])} ({p['status']})" for p in c.get("per_seed", []))


def value_cell(c: dict[str, Any]) -> str:
    """ecnlab's value, and with several seeds the mean of the per-seed values with its 95 %
    confidence interval, e.g. '59.1 (seeds 59.2, CI 58.7-59.8)'."""
    v = fmt(c.get("ecnlab"))
    if "ci95" in c:
        lo, hi = c["ci95"]
        v += f" (seeds {fmt(c['seed_mean'])}, CI {fmt(lo)} to {fmt(hi)})"
    return v


UNSOUND_SHOWN = 3  # guard lines shown per claim in the tables (claims.json has them all)


def unsound_text(c: dict[str, Any]) -> str:
    u = c.get("unsound") or []
    if not u:
        return ""
    more = f"; and {len(u) - UNSOUND_SHOWN} more (claims.json)" if len(u) > UNSOUND_SHOWN else ""
    return "Unsound baseline: " + "; ".join(u[:UNSOUND_SHOWN]) + more + ". "


def grid_text(m: dict[str, Any]) -> str:
    """", 6 of 162 points of the grid (left: ...)" for a subset; "" for a whole grid."""
    g = m.get("grid") or {}
    if not g or g.get("run") == g.get("points"):
        return ""
    return f", {g['run']} of {g['points']} points of the grid (left: {g['left']})"


def _report_link(m: dict[str, Any]) -> str:
    return f"{m['id']}/report.html"


def why_text(c: dict[str, Any]) -> str:
    """A not-shown claim's reason (``results/reasons.toml``), as the tables lead its note."""
    from .results import WHY

    w = c["why"]
    return f"Why not shown ({w['category']}: {WHY[w['category']]}): {w['text']}"


def claims_table(claims: list[dict[str, Any]], with_exp: bool = False, link=None) -> str:
    per_seed = any("seeds_judged" in c for c in claims)
    head = ("<tr>" + ("<th>experiment</th>" if with_exp else "")
            + "<th>claim</th><th>paper</th><th>ecnlab</th><th>shown</th>"
            + ("<th title=\"seeds on which the claim is shown, judged one seed at a time\">seeds</th>" if per_seed else "")
            + "<th>note</th></tr>")
    rows = []
    for c in claims:
        cls = _STATUS_CLASS.get(c.get("status", ""), "")
        shown = {"shown": "yes", "not shown": "no"}.get(c.get("status"), c.get("status", ""))
        if c.get("unsound"):
            shown += " (unsound baseline)"
        exp = ""
        if with_exp:
            exp = f"<td><a href=\"{_e(link(c['experiment']) if link else c['experiment'] + '/report.html')}\">{_e(c['experiment'])}</a></td>"
        rows.append(f"<tr class=\"{cls}\">{exp}<td>{_e(c['claim'])}</td><td class=\"num\">{_e(fmt(c['paper']))}</td>"
                    f"<td class=\"num\">{_e(value_cell(c))}</td><td>{_e(shown)}</td>"
                    + (f"<td class=\"num\" title=\"{_e(_seed_values(c))}\">{_seeds_cell(c)}</td>" if per_seed else "")
                    + f"<td>{'<b>' + _e(unsound_text(c)) + '</b>' if c.get('unsound') else ''}"
                    f"{'<b>' + _e(why_text(c)) + '</b> ' if c.get('why') else ''}"
                    f"{_e(c.get('note', ''))}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def write_report(out: Path, manifest: dict[str, Any], claims: list[dict[str, Any]]) -> Path:
    """``out/report.html`` for one experiment."""
    m = manifest
    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ecnlab: {_e(m['id'])}</title>"
             f"<style>{_CSS}</style></head><body>"]
    parts.append(f"<h1>{_e(m['id'])}: {_e(m['title'])}</h1>")
    parts.append(f"<p class=\"meta\">{_e(m['paper'])}, {_e(m['figures'])}. Scale <b>{_e(m['scale'])}</b>, "
                 f"seeds {_e(', '.join(map(str, m.get('seeds', []))))}. ")
    if m["status"] == "not run":
        parts.append(f"<b>Not run: {_e(m['reason'])}</b></p>")
    else:
        r = m.get("runs", {})
        parts.append(f"{r.get('total', 0)} runs ({r.get('ok', 0)} ok, {r.get('failed', 0)} failed, "
                     f"{r.get('reused', 0)} reused from an earlier invocation), "
                     f"wall time {m.get('wall_time_s', 0):.0f} s, runs' time summed {r.get('run_time_s', 0):.0f} s"
                     f"{_e(grid_text(m))}. Data: <a href=\"results.csv\">results.csv</a>, "
                     f"<a href=\"claims.json\">claims.json</a>, "
                     + ("per-run files in <code>runs/&lt;key&gt;/</code>.</p>" if (out / "runs").is_dir() else
                        "per-run files in the run store the runs wrote (not committed).</p>"))
    parts.append(f"<p class=\"meta\">Regenerate: <code>{_e(m['command'])}</code></p>")
    if m.get("scale_note"):
        parts.append(f"<p class=\"meta\">{_e(m['scale_note'])}</p>")
    if m.get("analysis_error"):
        parts.append(f"<p class=\"notshown\">Analysis failed: {_e(m['analysis_error'])}</p>")
    parts.append("<h2>Claims</h2>")
    parts.append(claims_table(claims))
    if m.get("status") == "ran":
        parts.append(guard_section(m.get("guard", [])))
    if m.get("figures_drawn"):
        parts.append("<h2>Figures</h2>")
        for f in m["figures_drawn"]:
            # a run directory has both; a committed results folder only the SVG (results.py)
            ext = "png" if (out / "figures" / f"{f['name']}.png").exists() else "svg"
            parts.append(f"<figure><img src=\"figures/{_e(f['name'])}.{ext}\" alt=\"{_e(f['caption'])}\">"
                         f"<figcaption>{_e(f['caption'])} (<a href=\"figures/{_e(f['name'])}.svg\">SVG</a>)"
                         f"</figcaption></figure>")
    if m.get("failures"):
        parts.append("<h2>Failed runs</h2><table><tr><th>params</th><th>error</th></tr>")
        for f in m["failures"]:
            parts.append(f"<tr><td>{_e(json.dumps(f['params']))}</td><td>{_e(f['error'])}</td></tr>")
        parts.append("</table>")
    notes = list(m.get("notes", [])) + list(m.get("analysis_notes", []))
    if notes:
        parts.append("<h2>Parameters and notes</h2><ul>")
        parts.extend(f"<li>{_e(n)}</li>" for n in notes)
        parts.append("</ul>")
    parts.append(_SCRIPT + "</body></html>\n")
    path = out / "report.html"
    path.write_text("".join(parts))
    return path


def guard_section(flagged: list[dict[str, Any]]) -> str:
    """The runs the guard flags (``guard.py``: NIC-bound, scheduler shares off by > 10 %,
    cut by duration, RTO storm), or a line saying none is."""
    parts = ["<h2>Baseline soundness</h2>"]
    if not flagged:
        parts.append("<p>No run is flagged (NIC-bound flows, scheduler shares off by more than 10 % with every "
                     "weighted queue backlogged, flows cut by the run's duration, RTO storms; see "
                     "<code>ecnlab/reproduce/guard.py</code>).</p>")
        return "".join(parts)
    parts.append("<table><tr><th>run</th><th>seed</th><th>what makes it unsound</th></tr>")
    for f in flagged:
        parts.append(f"<tr><td>{_e(json.dumps(f['params']))} <code>{_e(f['key'])}</code></td><td>{f['seed']}</td>"
                     f"<td>{'<br>'.join(_e(x) for x in f['facts'])}</td></tr>")
    parts.append("</table>")
    return "".join(parts)


def write_index(out: Path, manifests: list[dict[str, Any]], claims: list[dict[str, Any]], command: str,
                link=_report_link) -> Path:
    """``out/index.html``: every experiment, its status, and every claim. ``link``: a
    manifest's report page relative to ``out``."""
    pages = {m["id"]: link(m) for m in manifests}
    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ecnlab reproduction</title>"
             f"<style>{_CSS}</style></head><body><h1>ecnlab: reproducing TCN, ECN# and the dual AQM</h1>"
             f"<p class=\"meta\">Regenerate: <code>{_e(command)}</code></p>"]
    n = {s: sum(1 for c in claims if c["status"] == s) for s in ("shown", "not shown", "not evaluated", "not run")}
    parts.append(f"<p>{len(claims)} claims: {n['shown']} shown, {n['not shown']} not shown, "
                 f"{n['not evaluated']} not evaluated, {n['not run']} not run.</p>")
    parts.append("<h2>Experiments</h2><table><tr><th>experiment</th><th>paper</th><th>scale</th><th>status</th>"
                 "<th>runs</th><th>run time (sum)</th><th>claims shown</th></tr>")
    for m in manifests:
        cl = [c for c in claims if c["experiment"] == m["id"]]
        shown = sum(1 for c in cl if c["status"] == "shown")
        status = "not run: " + m["reason"] if m["status"] == "not run" else m["status"]
        r = m.get("runs", {})
        parts.append(f"<tr><td><a href=\"{_e(pages[m['id']])}\">{_e(m['id'])}</a></td>"
                     f"<td>{_e(m['paper'])}, {_e(m['figures'])}</td><td>{_e(m['scale'])}</td>"
                     f"<td>{_e(status)}{_e(grid_text(m))}</td>"
                     f"<td class=\"num\">{r.get('ok', 0)}/{r.get('total', 0)}</td>"
                     f"<td class=\"num\">{r.get('run_time_s', 0):.0f} s</td><td class=\"num\">{shown}/{len(cl)}</td></tr>")
    parts.append("</table><h2>Claims</h2>")
    parts.append(claims_table(claims, with_exp=True, link=pages.get))
    parts.append(_SCRIPT + "</body></html>\n")
    path = out / "index.html"
    path.write_text("".join(parts))
    return path


def _md(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


_SCALE_TEXT = {
    "quick": "small flow counts and short runs, so the numbers are noisier than the papers'; in a table built "
             "from committed results, an entry shown at quick scale has not been run at paper scale yet (its last "
             "column)",
    "paper": "the papers' flow counts, loads and durations (a subset of the grid where the table says so)",
}


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s} s" if s < 120 else (f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h")


def reproduction_markdown(manifests: list[dict[str, Any]], claims: list[dict[str, Any]], command: str,
                          committed: bool = False) -> str:
    """The text of REPRODUCTION.md: one table row per claim, then one row per experiment
    (scale, seeds, points run of the grid, the runs' summed time, the build). ``committed``:
    built from the committed ``results/`` (``results.regenerate``), each entry at the scale
    it has, rather than from the run that just finished."""
    n = {s: sum(1 for c in claims if c["status"] == s) for s in ("shown", "not shown", "not evaluated", "not run")}
    scales = {m["id"]: m["scale"] for m in manifests}
    used = [s for s in ("paper", "quick") if s in scales.values()]
    if committed:
        origin = ["Generated by ecnlab from the committed results in `results/<scale>/<id>/` (each entry's "
                  "`results.csv`, `claims.json`, `experiment.json` and figures, as its runs wrote them); do not edit "
                  "by hand. Regenerate (nothing runs) with:", "", "```sh", command, "```", "",
                  "An entry's results come from `.venv/bin/ecnlab reproduce ID --scale paper --out <store> --save "
                  "results` (`--where KEY=V,...` for a subset of its grid; the run store keeps finished runs, so a "
                  "wider subset later reuses them). Paper scale is shown where an entry has it, else quick scale."]
    else:
        origin = ["Generated by ecnlab from an actual run of the whole catalog (SPEC §6); do not edit by hand.",
                  "Regenerate with:", "", "```sh", command, "```"]
    lines = ["# Reproduction: TCN, ECN# and the dual AQM in ecnlab", "", *origin, ""]
    lines += [f"Scale **{s}** ({sum(1 for v in scales.values() if v == s)} entries): {_SCALE_TEXT[s]}." for s in used]
    lines += ["", "Every claim is judged by direction and a band written in its note; no scheme or scenario is tuned "
              "to a claim. Each experiment's `report.html` has the figures, the runs and the parameter choices with "
              "their sources.", "",
              f"{len(claims)} claims: {n['shown']} shown, {n['not shown']} not shown, {n['not evaluated']} not "
              f"evaluated, {n['not run']} not run.", "",
              f"⚠: the claim rests on a run that is not a sound baseline ({sum(1 for c in claims if c.get('unsound'))} "
              "claims; the note says which run and why): a flow bound by its own NIC, a scheduler whose measured "
              "shares differ from its configured ones by more than 10 % with every weighted queue backlogged, flows "
              "cut by the run's duration, or an RTO storm (timeouts x rto_min at least 10 % of the flows' time); "
              "`python/ecnlab/reproduce/guard.py` says why each is unsound.", ""]
    if committed:
        lines += ["Each claim not shown (or not evaluated) leads its note with why, from `results/reasons.toml`: the "
                  "paper's claim cannot hold as stated, the paper leaves the set-up it depends on unstated, a "
                  "difference ecnlab cannot explain, too few flows or seeds at this scale, or an unsound baseline.", ""]
    per_seed = any("seeds_judged" in c for c in claims)
    if per_seed:
        robust = sum(1 for c in claims if c["status"] == "shown" and c.get("seeds_shown") == c.get("seeds_judged"))
        lines += ["The seeds are the same for every scheme (hence the same traffic); a claim's value and verdict come "
                  "from all of them together (means over seeds, unless its note says otherwise), with the 95 % "
                  "interval of the per-seed values (Student's t). *Seeds* says on how many seeds, judged one at a "
                  f"time, the claim is shown: {robust} of the {n['shown']} claims shown on the mean are shown on "
                  "every seed.", ""]
        lines += ["| experiment | scale | claim | paper | ecnlab | shown | seeds | note |",
                  "|---|---|---|---|---|---|---|---|"]
    else:
        lines += ["| experiment | scale | claim | paper | ecnlab | shown | note |", "|---|---|---|---|---|---|---|"]
    for c in claims:
        shown = {"shown": "yes", "not shown": "**no**"}.get(c["status"], c["status"])
        if c.get("unsound"):
            shown += " ⚠"
        seeds_cell = f" {c['seeds_shown']}/{c['seeds_judged']} |" if "seeds_judged" in c else (" - |" if per_seed else "")
        unsound = f"**{_md(unsound_text(c))}**" if c.get("unsound") else ""
        if c.get("why"):
            unsound += f"**{_md(why_text(c))}** "
        lines.append(f"| {_md(c['experiment'])} | {scales.get(c['experiment'], '')} | {_md(c['claim'])} "
                     f"| {_md(fmt(c['paper']))} | {_md(value_cell(c))} | {shown} |{seeds_cell} "
                     f"{unsound}{_md(c.get('note', ''))} |")
    lines += ["", "## Experiments", "",
              "Run time: the simulations' wall-clock time summed over the runs (one core each, each run's "
              "`wall_time_s` as the run store recorded it; starting the run's process and writing its per-run files "
              "come on top, e.g. ecnsharp-incast's 10-us queue traces). Points: runs of this scale's grid that ran (seeds included). Engine: the simulator "
              "build that computed the runs (`ecnlab.api.engine_id`).", "",
              "| experiment | paper | scale | seeds | points run / grid | runs ok | run time | engine | left to run |",
              "|---|---|---|---|---|---|---|---|---|"]
    for m in manifests:
        r, g = m.get("runs", {}), m.get("grid") or {}
        status = "not run: " + m["reason"] if m["status"] == "not run" else (g.get("left") or "-")
        seeds = m.get("seeds", [])
        seeds_txt = f"{len(seeds)} ({seeds[0]}-{seeds[-1]})" if len(seeds) > 1 else ", ".join(map(str, seeds))
        lines.append(f"| {m['id']} | {_md(m['paper'])}, {_md(m['figures'])} | {m['scale']} | {seeds_txt} "
                     f"| {g.get('run', r.get('total', 0))} / {g.get('points', '?')} | {r.get('ok', 0)}/{r.get('total', 0)} "
                     f"| {_hms(r.get('run_time_s', 0))} | {', '.join(m.get('engine', [])) or '-'} | {_md(status)} |")
    return "\n".join(lines) + "\n"
