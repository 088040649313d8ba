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

__all__ = ["claims_table", "fmt", "grid_text", "reproduction_markdown", "unsound_text", "value_cell", "write_index",
           "write_report"]

_STATUS_CLASS = {"shown": "shown", "not shown": "notshown", "undecided": "noteval", "not run": "notrun",
                 "not evaluated": "noteval"}
_STATUSES = ("shown", "not shown", "undecided", "not evaluated", "not run")
_VERDICTS = ("shown", "not shown", "undecided", "n/a")


def value_cell(c: dict[str, Any]) -> str:
    """ecnlab's value (the seeds' mean at the point judged) and its 95 % interval, e.g.
    '59.1 (58.7 to 59.8)'."""
    v = fmt(c.get("ecnlab"))
    if c.get("ci95"):
        lo, hi = c["ci95"]
        v += f" ({fmt(lo)} to {fmt(hi)})"
    return v


def paper_cell(c: dict[str, Any]) -> str:
    """The paper's number with its unit, e.g. '12.3 % lower', '450 Mbps'; a direction alone as
    the word."""
    p, unit = c.get("paper"), c.get("unit", "")
    if not isinstance(p, (int, float)):
        return str(p)
    u = {"ratio": "", "x": "x"}.get(unit, f" {unit}")
    return f"{fmt(p)}{u}".replace(" %", " %")


def verdicts_cell(c: dict[str, Any]) -> str:
    """'direction / magnitude' verdicts, e.g. 'shown / undecided'."""
    if "direction" not in c:
        return "-"
    return f"{c['direction']} / {c['magnitude']}"


UNSOUND_SHOWN = 3  # soundness lines shown per claim in the tables (claims.json has them all)


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


def _claims(claims: list[dict[str, Any]], with_exp: bool = False, link=None) -> dict[str, Any]:
    """The claims table as ``claims.html.j2`` draws it: one row of cell texts per claim.
    ``link``: an experiment id's page (default ``ID/report.html``), for the experiment column."""
    from .reasons import text as why_text

    rows = []
    for c in claims:
        status = c.get("status", "")
        if c.get("unsound"):
            status += " (unsound baseline)"
        rows.append({"status": _STATUS_CLASS.get(c.get("status", ""), ""), "experiment": c.get("experiment"),
                     "href": (link(c["experiment"]) if link else c["experiment"] + "/report.html") if with_exp else "",
                     "claim": c["claim"], "paper": paper_cell(c), "ecnlab": value_cell(c), "shown": status,
                     "verdicts": verdicts_cell(c), "quote": f"{c.get('section', '')}: {c.get('quote', '')}",
                     "unsound": unsound_text(c), "why": why_text(c["why"]) if c.get("why") else "",
                     "note": c.get("note", "")})
    return {"with_exp": with_exp, "rows": rows}


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
                  verdict_counts=_verdict_counts(claims),
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


def _verdict_counts(claims: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    return {k: {v: sum(1 for c in claims if c.get(k) == v) for v in _VERDICTS} for k in ("direction", "magnitude")}


def reproduction_markdown(manifests: list[dict[str, Any]], claims: list[dict[str, Any]], command: str,
                          committed: bool = False) -> str:
    """The text of REPRODUCTION.md: the counts (claims shown, direction and magnitude shown
    apart), one table row per claim, then one row per experiment (scale, seeds, points run of
    the grid, the runs' summed time, the build). ``committed``: built from the committed
    ``results/`` (``results.regenerate``), each entry at the scale it has."""
    from .. import soundness
    from .reasons import text as why_text
    from .rules import BAND

    n = {s: sum(1 for c in claims if c["status"] == s) for s in _STATUSES}
    v = _verdict_counts(claims)
    scales = {m["id"]: m["scale"] for m in manifests}
    used = [s for s in ("paper", "quick") if s in scales.values()]
    if committed:
        origin = ["Generated by ecnlab from the committed results in `results/<scale>/<id>/` (each entry's "
                  "`results.csv`, `runs.json.gz` (every run's compact summary and the series its claims read), "
                  "`claims.json`, `experiment.json` and figures); do not edit by hand. Every claim is judged again "
                  "from them (nothing runs, seconds) with:", "", "```sh", command, "```", "",
                  "An entry's results come from `.venv/bin/ecnlab reproduce ID --scale paper --out <store> --save "
                  "results`; the whole catalog on one build, resumable: `REPRODUCTION.md`'s last section. Paper "
                  "scale is shown where an entry has it, else quick scale."]
    else:
        from .base import CATALOG

        ran = ("the whole catalog" if len(manifests) == len(CATALOG)
               else f"{len(manifests)} of the catalog's {len(CATALOG)} entries")
        origin = [f"Generated by ecnlab from an actual run of {ran} (SPEC §6); do not edit by hand.",
                  "Regenerate with:", "", "```sh", command, "```"]
    lines = ["# Reproduction: TCN, ECN# and the dual AQM in ecnlab", "", *origin, ""]
    lines += [f"Scale **{s}** ({sum(1 for x in scales.values() if x == s)} entries): {_SCALE_TEXT[s]}." for s in used]
    lines += ["", "## How a claim is judged", "",
              "Each paper's quoted numbers are one table (`python/ecnlab/reproduce/papers/*.toml`: value, unit, "
              "section, the sentence itself, its baseline and its point); a claim reads one value per seed at the "
              "paper's point (its load, N, ...) and gets two verdicts (`python/ecnlab/reproduce/rules.py`):", "",
              "- **direction**: the effect has the paper's sign (a reduction above 0, a ratio below 1, ...): shown "
              "when the seeds' 95 % interval lies on the paper's side, not shown when it lies on the other, "
              "undecided when it straddles; n/a for a claim without one (a value, a 'within').",
              f"- **magnitude**, on the scale the paper reports: the band is the paper's value ±{BAND:.0%} for every "
              f"claim (a bound relaxed by the same {BAND:.0%}); shown when the interval lies inside the band, not "
              "shown when it lies outside, undecided when it straddles an edge (more seeds decide it); n/a without a "
              "number.",
              "- A claim is **shown** when both are (or one is and the other is n/a); **undecided** when one is "
              "undecided and neither is not shown. For 'up to X %' the verdicts are at the paper's point where the "
              "paper names it (ecnlab's largest effect is judged too and shown in the note), else at ecnlab's "
              "largest; for 'within X %' and 'similar', at the point farthest off.", "",
              f"{len(claims)} claims: **{n['shown']} shown** ({sum(1 for c in claims if c['status'] == 'shown' and c.get('unsound'))} "
              "of them resting on a run that is not a sound baseline, ⚠), "
              f"{n['not shown']} not shown, {n['undecided']} undecided, "
              f"{n['not evaluated']} not evaluated, {n['not run']} not run. Direction: {v['direction']['shown']} shown, "
              f"{v['direction']['not shown']} not shown, {v['direction']['undecided']} undecided, "
              f"{v['direction']['n/a']} without a direction. Magnitude: {v['magnitude']['shown']} shown, "
              f"{v['magnitude']['not shown']} not shown, {v['magnitude']['undecided']} undecided, "
              f"{v['magnitude']['n/a']} without a number.", "",
              f"⚠: the claim rests on a run that is not a sound baseline ({sum(1 for c in claims if c.get('unsound'))} "
              f"claims; the note says which run and why): {soundness.described()}; `python/ecnlab/soundness.py` "
              "says why each is unsound.", ""]
    if committed:
        lines += ["Each claim not shown leads its note with why, from `results/reasons.toml`: the paper's claim "
                  "cannot hold as stated, or leaves the set-up it depends on unstated (each with the paper's sentence "
                  "or the absence it rests on), a difference ecnlab cannot explain (with the numbers), too few flows "
                  "or seeds at this scale, or an unsound baseline.", ""]
    lines += ["| experiment | scale | claim | paper | ecnlab (95 % interval) | direction / magnitude | status | note |",
              "|---|---|---|---|---|---|---|---|"]
    for c in claims:
        status = {"shown": "yes", "not shown": "**no**"}.get(c["status"], c["status"])
        if c.get("unsound"):
            status += " ⚠"
        # each lead in bold of its own: a closing ** after a space would not close it (CommonMark)
        leads = [t for t in (unsound_text(c).strip(), why_text(c["why"]) if c.get("why") else "") if t]
        lead = "".join(f"**{_md(t)}** " for t in leads)
        lines.append(f"| {_md(c['experiment'])} | {scales.get(c['experiment'], '')} | {_md(c['claim'])} "
                     f"| {_md(paper_cell(c))} | {_md(value_cell(c))} | {verdicts_cell(c)} | {status} "
                     f"| {lead}{_md(c.get('note', ''))} |")
    lines += ["", "## Experiments", "",
              "Run time: the simulations' wall-clock time summed over the runs (one core each, each run's "
              "`wall_time_s` as the run store recorded it; starting the run's process and writing its per-run files "
              "come on top). Points: runs of this scale's grid that ran (seeds included). Engine: the simulator "
              "build that computed the runs (`ecnlab.api.engine_id`).", "",
              "| experiment | paper | scale | seeds | points run / grid | runs ok | run time | engine | left to run |",
              "|---|---|---|---|---|---|---|---|---|"]
    for m in manifests:
        r, g = m.get("runs", {}), m.get("grid") or {}
        status = "not run: " + m["reason"] if m["status"] == "not run" else (g.get("left") or "-")
        if m.get("legacy"):
            status += f" ({m['legacy']})"
        seeds = m.get("seeds", [])
        seeds_txt = f"{len(seeds)} ({seeds[0]}-{seeds[-1]})" if len(seeds) > 1 else ", ".join(map(str, seeds))
        lines.append(f"| {m['id']} | {_md(m['paper'])}, {_md(m['figures'])} | {m['scale']} | {seeds_txt} "
                     f"| {g.get('run', r.get('total', 0))} / {g.get('points', '?')} | {r.get('ok', 0)}/{r.get('total', 0)} "
                     f"| {_hms(r.get('run_time_s', 0))} | {', '.join(m.get('engine', [])) or '-'} | {_md(status)} |")
    engines = sorted({e for m in manifests for e in m.get("engine", [])})
    lines += ["", f"The results above come from {len(engines)} build{'s' if len(engines) != 1 else ''} of the "
              f"simulator ({', '.join(engines) or '-'}).", ""]
    lines += _RERUN
    return "\n".join(lines) + "\n"


# The final rerun: the whole catalog at paper scale on one build, as a background job.
_RERUN = ["## Rerunning the whole catalog on one build", "",
          "The run store keeps every finished run (one directory per run, renamed into place whole, so a kill loses "
          "at most the runs in progress) under a key that includes the build, so the same command run again runs "
          "only what is missing for this build. In the background, at low priority:", "",
          "```sh",
          "nohup nice -n 19 .venv/bin/ecnlab reproduce --all --scale paper --out ../ecnlab-store \\",
          "    --save results --markdown REPRODUCTION.md > ../ecnlab-store.log 2>&1 &",
          ".venv/bin/ecnlab reproduce --all --scale paper --out ../ecnlab-store --status   # runs stored / grid",
          "```", "",
          "Killed, the same command resumes it (`../ecnlab-store/progress.json` names the entries done and the one "
          "running). On another machine, the store lost with the first, it resumes from the committed results: with "
          "`--save results` a point whose run `results/` holds for this build is not run again, and an entry's new "
          "runs are added to those saved, so commit `results/` as entries (or parts of one, `--where`) finish. "
          "When it ends, `results/paper/*` and REPRODUCTION.md are this build's; commit them with "
          "`results/reasons.toml` brought up to date (`ecnlab reproduce --from results` warns of reasons without a "
          "claim and claims without a reason).", ""]
