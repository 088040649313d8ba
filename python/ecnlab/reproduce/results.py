"""Committed results: what a catalog run leaves in the repository, and REPRODUCTION.md and
the reports rebuilt from it without running anything.

A reader must know first: the run store (``--out``, per-run files, hundreds of MB at paper
scale) stays outside the repository; ``save`` copies from it only what the tables and
figures need, into ``results/<scale>/<id>/``:

- ``results.csv``: one row per run (the sweep's metrics, no per-flow data);
- ``claims.json``: the judged claims, as the run wrote them;
- ``experiment.json``: the run's manifest plus ``engine`` (the simulator builds that
  computed the runs, read from each run's ``point.json``: the store keys runs by it, so a
  later build does not reuse them), ``grid`` (points run of the scale's grid, the subset
  and what is left) and ``runs.run_time_s`` (the runs' wall-clock time summed from the
  store's per-run ``wall_time_s``);
- ``figures/*.svg``, those the entry drew (``figures_drawn``: a store shared by several
  entries holds all their figures in one folder), vector only: the PNGs would double the size.

``results/reasons.toml`` says, for each claim the committed results do not show (or cannot
evaluate), why (``reasons.py``).

``regenerate`` reads those folders, paper scale preferred over quick for each entry, and
writes ``report.html`` in each folder, ``index.html`` at the top and the Markdown
(REPRODUCTION.md)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from ..scenario import ScenarioError
from . import report
from .base import CATALOG, SCALES
from .reasons import UNJUDGED, load_reasons

STORE = "<store>"  # what a committed command shows for the run store's path

REGENERATE = ".venv/bin/ecnlab reproduce --from results --markdown REPRODUCTION.md"

def _engines(exp_out: Path, keys) -> list[str]:
    """The builds that computed the runs ``keys`` (``point.json``'s ``ecnlab.build``)."""
    found = set()
    for k in keys:
        try:
            found.add(json.loads((exp_out / "runs" / str(k) / "point.json").read_text())["ecnlab"]["build"])
        except (OSError, ValueError, KeyError):
            continue
    return sorted(found)


#: What a committed command line shows for the paths a run was given (a committed file
#: names no machine's directories).
_PLACEHOLDERS = {"--out": STORE, "--markdown": "REPRODUCTION.md", "--save": "results"}


def _scrub_command(command: str) -> str:
    args = shlex.split(command)
    for i, a in enumerate(args[:-1]):
        if a in _PLACEHOLDERS:
            args[i + 1] = _PLACEHOLDERS[a]
    return " ".join(a if a == STORE else shlex.quote(a) for a in args)


def save(exp_out: str | Path, root: str | Path) -> Path:
    """Copy one entry's run directory ``exp_out`` (written by ``run_experiment``) into
    ``root/<scale>/<id>/``, replacing what was there. Returns that folder."""
    exp_out, root = Path(exp_out), Path(root)
    m = json.loads((exp_out / "experiment.json").read_text())
    dest = root / m["scale"] / m["id"]
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "figures").mkdir(parents=True)
    results = pd.read_csv(exp_out / "results.csv") if (exp_out / "results.csv").stat().st_size else pd.DataFrame()
    shutil.copyfile(exp_out / "results.csv", dest / "results.csv")
    shutil.copyfile(exp_out / "claims.json", dest / "claims.json")
    for f in m.get("figures_drawn") or []:  # not the folder's glob: other entries' figures share it
        svg = exp_out / "figures" / f"{f['name']}.svg"
        if svg.is_file():
            shutil.copyfile(svg, dest / "figures" / svg.name)
    m["command"] = _scrub_command(m["command"])
    m.pop("analysis_traceback", None)  # names the machine's paths; analysis_error says what failed
    m["engine"] = _engines(exp_out, results["key"]) if "key" in results else []
    if "grid" not in m and m.get("status") != "not run":  # a run from before subsets existed: the whole grid
        exp = CATALOG[m["id"]]
        m["grid"] = {"points": len(exp.points(m["scale"], m["seeds"])), "run": len(results), "where": {}, "left": ""}
    if len(results) and "wall_time_s" in results:
        m.setdefault("runs", {})["run_time_s"] = float(results["wall_time_s"].fillna(0).sum())
    (dest / "experiment.json").write_text(json.dumps(m, indent=2, default=str) + "\n")
    return dest


def load(root: str | Path, exp_id: str, scale: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(manifest, claims) of ``root/<scale>/<id>/``, or None if it has not been saved."""
    d = Path(root) / scale / exp_id
    if not (d / "experiment.json").is_file() or not (d / "claims.json").is_file():
        return None
    from ..inputs import read_json  # a damaged file: one line naming it, not an internal error

    return read_json(d / "experiment.json"), read_json(d / "claims.json")


def _quick_aside(c: dict[str, Any], quick: dict[str, dict[str, Any]]) -> str:
    """For a claim not run at paper scale: its quick-scale verdict, so the row still says
    what ecnlab measured."""
    q = quick.get(c["id"])
    if not q or q.get("status") not in ("shown", "not shown"):
        return ""
    seeds = f", {q['seeds_shown']}/{q['seeds_judged']} seeds" if "seeds_judged" in q else ""
    return f" At quick scale: {report.value_cell(q)}, {q['status']}{seeds}."


def _left(exp, m: dict[str, Any]) -> tuple[str, int]:
    """What the table's "left to run" says: the rest of the paper grid with the entry's
    default seeds (an entry shown at quick scale: all of it), and that grid's size."""
    if m.get("status") == "not run":
        return "", 0
    want = list(range(1, max(exp.seeds.get("paper", 1), len(m["seeds"])) + 1))
    full = len(exp.points("paper", want))
    if m["scale"] == "quick":
        return f"paper scale: all {full} points ({len(want)} seeds)", full
    g = m.get("grid") or {}
    more = [s for s in want if s not in m["seeds"]]
    if not more:
        return g.get("left", ""), full
    seeds = f"seed {more[0]}" if len(more) == 1 else f"seeds {more[0]}-{more[-1]}"
    rest = g.get("left", "").split(": ", 1)[-1] if g.get("left") else ""
    return f"{full - g.get('run', 0)} of {full} points: " + "; ".join(x for x in (rest, f"{seeds} of every point")
                                                                       if x), full


def regenerate(root: str | Path, markdown: str | Path | None = None,
               ids: list[str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """REPRODUCTION.md (``markdown``), ``root/index.html`` and each entry's ``report.html``
    from the committed results under ``root``; nothing runs. Every entry of ``ids`` (default:
    the whole catalog, in its order) must have been saved at some scale. Returns
    (manifests, claims)."""
    root = Path(root)
    if not root.is_dir():
        raise ScenarioError(f"--from: no results folder '{root}'")
    manifests, claims = [], []
    reasons = load_reasons(root)
    # Everything is read, and what is missing refused, before any report is written.
    saved = {exp_id: {s: load(root, exp_id, s) for s in SCALES} for exp_id in ids or list(CATALOG)}
    missing = [exp_id for exp_id, got in saved.items() if not got["paper"] and not got["quick"]]
    if missing:
        some = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise ScenarioError(f"--from: {root} has no results for {len(missing)} of the {len(saved)} entries ({some}); "
                            f"name the entries it has (ecnlab reproduce ID ... --from {root}), or save the others "
                            f"(ecnlab reproduce ID --out STORE --save {root})")
    for exp_id, got in saved.items():
        scale = "paper" if got["paper"] else "quick"
        m, cl = got[scale]
        quick = {c["id"]: c for c in got["quick"][1]} if scale == "paper" and got["quick"] else {}
        cl = [c | {"note": c.get("note", "") + _quick_aside(c, quick)} if c["status"] == "not run" else c for c in cl]
        cl = [c | {"why": reasons[k]} if c["status"] in UNJUDGED and (k := (exp_id, c["id"], scale)) in reasons
              else c for c in cl]
        claims += [{"experiment": exp_id} | c for c in cl]
        report.write_report(root / scale / exp_id, m, cl)
        left, full = _left(CATALOG[exp_id], m)
        if m["scale"] == "paper" and full:  # the grid with the entry's own seeds, as "left" counts it
            m = m | {"grid": (m.get("grid") or {}) | {"left": left, "points": full}}
        else:
            m = m | {"grid": (m.get("grid") or {}) | {"left": left}}
        if scale == "paper" and got["quick"]:  # the quick folder's own page stays current too
            report.write_report(root / "quick" / exp_id, *got["quick"])
        manifests.append(m)
    report.write_index(root, manifests, claims, REGENERATE, link=lambda m: f"{m['scale']}/{m['id']}/report.html")
    if markdown:
        Path(markdown).write_text(report.reproduction_markdown(manifests, claims, REGENERATE, committed=True))
    return manifests, claims
