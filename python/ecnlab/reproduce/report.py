"""The catalog's pages (one ``report.html`` per experiment, ``index.html`` over all of
them) and REPRODUCTION.md.

The pages are the templates ``experiment.html.j2`` and ``index.html.j2`` of
``ecnlab/report/templates/``, rendered by ``ecnlab.report.page`` like ``ecnlab report``'s:
static and self-contained (figures by relative paths next to the page, no external scripts
or styles), with the ``data-images-loaded`` hook a headless browser reads. This module
only turns manifests and claims into the cells the templates show; numbers go through the
one ``fmt``, in the pages as in the Markdown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import soundness
from ..report.page import environment, fmt, render
from .reasons import WHY

__all__ = ["claims_table", "fmt", "grid_text", "reproduction_markdown", "unsound_text", "value_cell", "why_text",
           "write_index", "write_report"]

_STATUS_CLASS = {"shown": "shown", "not shown": "notshown", "not run": "notrun", "not evaluated": "noteval"}
_STATUSES = ("shown", "not shown", "not evaluated", "not run")


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
    w = c["why"]
    return f"Why not shown ({w['category']}: {WHY[w['category']]}): {w['text']}"


def _claims(claims: list[dict[str, Any]], with_exp: bool = False, link=None) -> dict[str, Any]:
    """The claims table as ``claims.html.j2`` draws it: one row of cell texts per claim.
    ``link``: an experiment id's page (default ``ID/report.html``), for the experiment column."""
    rows = []
    for c in claims:
        shown = {"shown": "yes", "not shown": "no"}.get(c.get("status"), c.get("status", ""))
        if c.get("unsound"):
            shown += " (unsound baseline)"
        rows.append({"status": _STATUS_CLASS.get(c.get("status", ""), ""), "experiment": c.get("experiment"),
                     "href": (link(c["experiment"]) if link else c["experiment"] + "/report.html") if with_exp else "",
                     "claim": c["claim"], "paper": fmt(c["paper"]), "ecnlab": value_cell(c), "shown": shown,
                     "seeds": _seeds_cell(c), "seed_values": _seed_values(c), "unsound": unsound_text(c),
                     "why": why_text(c) if c.get("why") else "", "note": c.get("note", "")})
    return {"with_exp": with_exp, "per_seed": any("seeds_judged" in c for c in claims), "rows": rows}


def claims_table(claims: list[dict[str, Any]], with_exp: bool = False, link=None) -> str:
    """The claims table alone, as the catalog's pages show it (HTML)."""
    return str(environment().get_template("claims.html.j2").module.claims_table(_claims(claims, with_exp, link)))


def write_report(out: Path, manifest: dict[str, Any], claims: list[dict[str, Any]]) -> Path:
    """``out/report.html`` for one experiment."""
    m = manifest
    figures = []
    for f in m.get("figures_drawn") or []:
        # a run directory has both; a committed results folder only the SVG (results.py)
        ext = "png" if (out / "figures" / f"{f['name']}.png").exists() else "svg"
        figures.append({"src": f"figures/{f['name']}.{ext}", "svg": f"figures/{f['name']}.svg",
                        "caption": f["caption"]})
    return render(out / "report.html", "experiment.html.j2", title=f"ecnlab: {m['id']}", m=m, grid=grid_text(m),
                  runs_here=(out / "runs").is_dir(), claims=_claims(claims),
                  guard=[{**f, "params": json.dumps(f["params"])} for f in m.get("guard", [])],
                  soundness_rules=soundness.described(),
                  figures=figures,
                  failures=[{"params": json.dumps(f["params"]), "error": f["error"]} for f in m.get("failures", [])],
                  notes=list(m.get("notes", [])) + list(m.get("analysis_notes", [])))


def write_index(out: Path, manifests: list[dict[str, Any]], claims: list[dict[str, Any]], command: str,
                link=_report_link) -> Path:
    """``out/index.html``: every experiment, its status, and every claim. ``link``: a
    manifest's report page relative to ``out``."""
    pages = {m["id"]: link(m) for m in manifests}
    experiments = []
    for m in manifests:
        cl = [c for c in claims if c["experiment"] == m["id"]]
        experiments.append({"manifest": m, "href": pages[m["id"]], "grid": grid_text(m),
                            "status": "not run: " + m["reason"] if m["status"] == "not run" else m["status"],
                            "shown": sum(1 for c in cl if c["status"] == "shown"), "claims": len(cl)})
    return render(out / "index.html", "index.html.j2", title="ecnlab reproduction", command=command,
                  counts={s: sum(1 for c in claims if c["status"] == s) for s in _STATUSES},
                  experiments=experiments, claims=_claims(claims, with_exp=True, link=pages.get))


def _md(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


_SCALE_TEXT = {
    "quick": "small flow counts and short runs, so the numbers are noisier than the papers'; in a table built "
             "from committed results, an entry shown at quick scale has not been run at paper scale yet (its last "
             "column)",
    "paper": "the papers' flow counts, loads and durations (a subset of the grid where the table says so)",
}


def _hms(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"  # a quick entry's runs: 0.48 s is not "0 s"
    s = int(round(seconds))
    return f"{s} s" if s < 120 else (f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h")


def reproduction_markdown(manifests: list[dict[str, Any]], claims: list[dict[str, Any]], command: str,
                          committed: bool = False) -> str:
    """The text of REPRODUCTION.md: one table row per claim, then one row per experiment
    (scale, seeds, points run of the grid, the runs' summed time, the build). ``committed``:
    built from the committed ``results/`` (``results.regenerate``), each entry at the scale
    it has, rather than from the run that just finished."""
    n = {s: sum(1 for c in claims if c["status"] == s) for s in _STATUSES}
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
        from .base import CATALOG

        ran = ("the whole catalog" if len(manifests) == len(CATALOG)
               else f"{len(manifests)} of the catalog's {len(CATALOG)} entries")
        origin = [f"Generated by ecnlab from an actual run of {ran} (SPEC §6); do not edit by hand.",
                  "Regenerate with:", "", "```sh", command, "```"]
    lines = ["# Reproduction: TCN, ECN# and the dual AQM in ecnlab", "", *origin, ""]
    lines += [f"Scale **{s}** ({sum(1 for v in scales.values() if v == s)} entries): {_SCALE_TEXT[s]}." for s in used]
    lines += ["", "Every claim is judged by direction and a band written in its note; no scheme or scenario is tuned "
              "to a claim. Each experiment's `report.html` has the figures, the runs and the parameter choices with "
              "their sources.", "",
              f"{len(claims)} claims: {n['shown']} shown, {n['not shown']} not shown, {n['not evaluated']} not "
              f"evaluated, {n['not run']} not run.", "",
              f"⚠: the claim rests on a run that is not a sound baseline ({sum(1 for c in claims if c.get('unsound'))} "
              f"claims; the note says which run and why): {soundness.described()}; `python/ecnlab/soundness.py` says "
              "why each is unsound.", ""]
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
        # each lead in bold of its own: a closing ** after a space would not close it (CommonMark)
        leads = [t for t in (unsound_text(c).strip(), why_text(c) if c.get("why") else "") if t]
        unsound = "".join(f"**{_md(t)}** " for t in leads)
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
