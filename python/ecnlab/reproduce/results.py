"""Committed results: what a catalog run leaves in the repository, and every claim judged
again from it, REPRODUCTION.md and the reports rebuilt, without running anything.

A reader must know first: the run store (``--out``, per-run files, hundreds of MB at paper
scale) stays outside the repository; ``save`` copies from it, into ``results/<scale>/<id>/``,
what the claims read and the pages show:

- ``results.csv``: one row per run (the sweep's metrics, no per-flow data);
- ``runs.json.gz``: per run (by store key) its parameters, seed, compact summary (with its
  soundness verdict; ``base.compact_summary``) and the series its entry keeps
  (``Experiment.series``: a trace, a count from flows.csv), gzip with no timestamp, so the
  same runs give the same bytes;
- ``claims.json``: the judged claims; ``experiment.json``: the manifest plus ``engine``
  (the builds that computed the runs), ``grid`` (points run of the scale's grid) and
  ``runs.run_time_s``; ``figures/*.svg``, those the entry drew.

A heavy entry may be run in parts (``--where``, or a store lost with its machine): ``save``
keeps the runs of the same build that an earlier save holds and the new store has not, and
judges the entry again on all of them; ``reproduce --save`` runs only the points not saved
yet for this build. The committed results are then the resumable store across machines.

``rejudge`` judges an entry's claims again from ``results.csv`` and ``runs.json.gz`` (a
changed rule or note costs seconds, no run), after checking that every saved run is a point
of today's grid: a run's store key is the hash of its resolved scenario, seed and build, so
the key of each point of the grid, computed for the build that ran it, must be among the
saved ones (a run whose set-up has changed since is left out, and its point is "left to
run"). Results saved before ``runs.json.gz`` existed are judged from ``results.csv`` alone:
a claim that reads a series is then not evaluated. ``regenerate`` does this for every entry,
paper scale preferred over quick, and writes the pages and REPRODUCTION.md."""

from __future__ import annotations

import gzip
import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from ..api import engine_id
from ..scenario import ScenarioError
from . import reasons as why
from . import report
from .base import CATALOG, SCALES, Claim, Context, Experiment, LiveRuns, RunFiles, SavedRuns, compact_summary

STORE = "<store>"  # what a committed command shows for the run store's path
RUNS = "runs.json.gz"

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


def _write_runs(path: Path, runs: dict[str, Any]) -> None:
    data = json.dumps(runs, sort_keys=True, separators=(",", ":")).encode()
    path.write_bytes(gzip.compress(data, mtime=0))


def read_runs(path: Path) -> dict[str, Any] | None:
    """``runs.json.gz`` as key -> run, None without it; a damaged file is one line."""
    if not path.is_file():
        return None
    try:
        return json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError, EOFError) as e:
        raise ScenarioError(f"{path}: not a gzip JSON file ecnlab wrote ({e}): damaged; save the entry again") from None


def saved_this_build(root: str | Path, exp_id: str, scale: str) -> tuple[Any, dict[str, Any]] | None:
    """The ok rows of ``results.csv`` and the ``runs.json.gz`` that ``root/<scale>/<id>/``
    holds when every run in it is this build's (its manifest's ``engine``): runs a later
    subset adds to, on another machine too, as a run store's. None otherwise."""
    from ..inputs import read_csv, read_json

    d = Path(root) / scale / exp_id
    if not (d / "experiment.json").is_file() or not (d / RUNS).is_file() or not (d / "results.csv").stat().st_size:
        return None
    m = read_json(d / "experiment.json")
    if m.get("engine") != [engine_id()] or m.get("scale") != scale:
        return None
    rows = read_csv(d / "results.csv")
    runs = read_runs(d / RUNS) or {}
    rows = rows[(rows["status"] == "ok") & rows["key"].isin(list(runs))]
    return rows, runs


def save(exp_out: str | Path, root: str | Path) -> Path:
    """Copy one entry's run directory ``exp_out`` (written by ``run_experiment``) into
    ``root/<scale>/<id>/``, replacing what was there, except the runs of this build that an
    earlier save holds and ``exp_out`` has not (``saved_this_build``): those are kept, and
    the entry judged again on all of them (``rejudge``, figures drawn), so that a heavy
    entry's grid is run in parts, on different machines, and saved as one. Returns that
    folder."""
    exp_out, root = Path(exp_out), Path(root)
    m = json.loads((exp_out / "experiment.json").read_text())
    exp = CATALOG[m["id"]]
    dest = root / m["scale"] / m["id"]
    results = pd.read_csv(exp_out / "results.csv") if (exp_out / "results.csv").stat().st_size else pd.DataFrame()
    earlier = saved_this_build(root, m["id"], m["scale"]) if len(results) else None
    kept = earlier[0][~earlier[0]["key"].isin(list(results["key"]))] if earlier else pd.DataFrame()
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "figures").mkdir(parents=True)
    if len(kept):
        order = {k: i for i, k in enumerate(_grid_keys(exp, m["scale"], m["seeds"], [engine_id()]))}
        both = pd.concat([results, kept], ignore_index=True)
        both = both.iloc[sorted(range(len(both)), key=lambda i: (order.get(both["key"].iat[i], len(order)), i))]
        both.to_csv(dest / "results.csv", index=False)
    else:
        shutil.copyfile(exp_out / "results.csv", dest / "results.csv")
    shutil.copyfile(exp_out / "claims.json", dest / "claims.json")
    for f in m.get("figures_drawn") or []:  # not the folder's glob: other entries' figures share it
        svg = exp_out / "figures" / f"{f['name']}.svg"
        if svg.is_file():
            shutil.copyfile(svg, dest / "figures" / svg.name)
    if len(results):
        live = LiveRuns(exp, exp_out)
        params = [c for c in results.columns[: list(results.columns).index("seed")]]
        runs = {}
        for _, r in results[results["status"] == "ok"].iterrows():
            runs[r["key"]] = {"params": {k: _py(r[k]) for k in params}, "seed": int(r["seed"]),
                              "summary": compact_summary(RunFiles(exp_out / "runs" / r["key"]).summary()),
                              "series": live.series(r["key"])}
        runs |= {k: earlier[1][k] for k in kept["key"]} if len(kept) else {}
        _write_runs(dest / RUNS, runs)
    m["command"] = _scrub_command(m["command"])
    m.pop("analysis_traceback", None)  # names the machine's paths; analysis_error says what failed
    m["engine"] = _engines(exp_out, results["key"]) if "key" in results else []
    if len(results) and "wall_time_s" in results:
        m.setdefault("runs", {})["run_time_s"] = float(results["wall_time_s"].fillna(0).sum())
    if len(kept):  # the earlier save's runs are this build's (saved_this_build)
        m["engine"] = sorted(set(m["engine"]) | {engine_id()})
        m["runs"] = (m.get("runs") or {}) | {"kept_from_earlier_save": len(kept)}
        m["runs"]["run_time_s"] = m["runs"].get("run_time_s", 0.0) + float(kept["wall_time_s"].fillna(0).sum())
        m["grid"] = (m.get("grid") or {}) | {"where": {}}
    (dest / "experiment.json").write_text(json.dumps(m, indent=2, default=str) + "\n")
    if len(kept):
        rejudge(root, m["id"], m["scale"], draw=True)
    return dest


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def load(root: str | Path, exp_id: str, scale: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(manifest, claims) of ``root/<scale>/<id>/``, or None if it has not been saved."""
    d = Path(root) / scale / exp_id
    if not (d / "experiment.json").is_file() or not (d / "claims.json").is_file():
        return None
    from ..inputs import read_json  # a damaged file: one line naming it, not an internal error

    return read_json(d / "experiment.json"), read_json(d / "claims.json")


def _grid_keys(exp: Experiment, scale: str, seeds: list[int], engines: list[str]) -> dict[str, Any]:
    """Store key -> point, for every point of today's ``scale`` grid under each build."""
    from ..sweep.store import point_key, resolve_point

    out = {}
    for p in exp.points(scale, seeds):
        r = resolve_point(p)
        if r.doc is None:
            continue
        for e in engines:
            out[point_key(r.doc, r.seed, engine=e)] = p
    return out


def rejudge(root: str | Path, exp_id: str, scale: str,
            draw: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One entry's claims judged again from its saved results (nothing runs); its
    ``claims.json`` and ``report.html`` rewritten; ``draw``: its figures too (SVG, from the
    same data). Returns (manifest, claims)."""
    from .evaluate import evaluate, mark_subset, mark_unsound

    d = Path(root) / scale / exp_id
    got = load(root, exp_id, scale)
    if got is None:
        raise ScenarioError(f"--from: {d} holds no saved results")
    m, old = got
    exp = CATALOG[exp_id]
    if m.get("status") == "not run":
        claims = old
    else:
        from ..inputs import read_csv

        results = read_csv(d / "results.csv")
        runs = read_runs(d / RUNS)
        seeds = list(range(1, exp.seeds.get(scale, 1) + 1))
        want = _grid_keys(exp, scale, seeds, m.get("engine") or [])
        kept = results[results["key"].isin(list(want))].copy() if len(results) else results
        for name in {k for p in want.values() for k in p.params}:  # today's parameters (a new axis: its value)
            kept[name] = [want[k].params.get(name) for k in kept["key"]]
        stale = len(results) - len(kept)
        grid_n = len(exp.points(scale, seeds))
        if draw:
            for f in (d / "figures").glob("*.svg"):
                f.unlink()
        ctx = Context(exp, d, kept, scale, seeds, SavedRuns(exp, runs), record=draw, formats=("svg",))
        n_ok = int((kept["status"] == "ok").sum()) if len(kept) else 0
        claims_by = evaluate(exp, ctx, m) if n_ok else {c.id: Claim(c.id, c.text, c.number) for c in exp.claims}
        left = "" if n_ok >= grid_n else f"{grid_n - n_ok} of {grid_n} points"
        if stale:
            left += f"{'; ' if left else ''}{stale} saved runs left out: their set-up is not today's grid"
        if runs is None:
            m["legacy"] = "saved before per-run data: claims that read a series are not evaluated"
        if n_ok < grid_n:
            mark_subset(claims_by, scale, {}, n_ok, grid_n, left)
        params = [c for c in kept.columns[: list(kept.columns).index("seed")]] if len(kept) else []
        if runs is not None:
            m["guard"] = mark_unsound(ctx, claims_by, params)
        else:
            _legacy_unsound(claims_by, m)
        m["grid"] = (m.get("grid") or {}) | {"points": grid_n, "run": n_ok, "left": left}
        # The runs judged (an entry saved in parts holds more than its last part ran).
        m["runs"] = (m.get("runs") or {}) | {"total": len(kept), "ok": n_ok, "failed": len(kept) - n_ok}
        if draw:
            m["figures_drawn"] = [{"name": f.name, "caption": f.caption} for f in ctx.figures]
            m["analysis_notes"] = ctx.notes
        m["seeds"] = seeds
        claims = [c.as_dict() for c in claims_by.values()]
    (d / "claims.json").write_text(json.dumps(claims, indent=2) + "\n")
    (d / "experiment.json").write_text(json.dumps(m, indent=2, default=str) + "\n")
    return m, claims


def _legacy_unsound(claims, m) -> None:
    """Results saved before runs carried their soundness verdict: the guard of their build, as
    the manifest lists its flagged runs (every claim rests on them: which runs a claim
    read was not saved)."""
    from .evaluate import rests_on_run

    flagged = m.get("guard") or []
    for c in claims.values():
        if c.status in ("not evaluated", "not run"):
            continue
        hits = [f for f in flagged if rests_on_run(c.rests_on, f)]
        c.unsound = [f"{', '.join(f'{k}={v}' for k, v in f['params'].items())}, seed {f['seed']}: {x} (the guard of "
                     "that build)" for f in hits for x in f.get("facts", [])]


def _quick_aside(c: dict[str, Any], quick: dict[str, dict[str, Any]]) -> str:
    """For a claim not run at paper scale: its quick-scale verdict, so the row still says
    what ecnlab measured."""
    q = quick.get(c["id"])
    if not q or q.get("status") not in ("shown", "not shown", "undecided"):
        return ""
    return f" At quick scale: {report.value_cell(q)}, {report.verdicts_cell(q)}: {q['status']}."


def _left(exp, m: dict[str, Any]) -> str:
    """What the table's "left to run" says: the rest of the paper grid (an entry shown at
    quick scale: all of it)."""
    if m.get("status") == "not run":
        return ""
    want = list(range(1, exp.seeds.get("paper", 1) + 1))
    full = len(exp.points("paper", want))
    if m["scale"] == "quick":
        return f"paper scale: all {full} points ({len(want)} seed{'s' if len(want) > 1 else ''})"
    return (m.get("grid") or {}).get("left", "")


def regenerate(root: str | Path, markdown: str | Path | None = None,
               ids: list[str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every entry of ``ids`` (default: the whole catalog, in its order) judged again from the
    committed results under ``root`` (``rejudge``, paper scale where it was saved, else
    quick), then REPRODUCTION.md (``markdown``), ``root/index.html`` and each entry's
    ``report.html``; nothing runs. Returns (manifests, claims)."""
    root = Path(root)
    if not root.is_dir():
        raise ScenarioError(f"--from: no results folder '{root}'")
    manifests, claims = [], []
    reasons = why.load_reasons(root)
    # Everything is read, and what is damaged or missing refused, before any report is written.
    chosen = {exp_id: [s for s in ("paper", "quick") if load(root, exp_id, s)] for exp_id in ids or list(CATALOG)}
    missing = [exp_id for exp_id, have in chosen.items() if not have]
    if missing:
        some = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
        raise ScenarioError(f"--from: {root} has no results for {len(missing)} of the {len(chosen)} entries ({some}); "
                            f"name the entries it has (ecnlab reproduce ID ... --from {root}), or save the others "
                            f"(ecnlab reproduce ID --out STORE --save {root})")
    for exp_id, have in chosen.items():
        judged = {s: rejudge(root, exp_id, s) for s in have}
        scale = have[0]
        m, cl = judged[scale]
        quick = {c["id"]: c for c in judged["quick"][1]} if scale == "paper" and "quick" in judged else {}
        cl = [c | {"note": (c.get("note", "").rstrip(".") + "." if c.get("note") else "") + _quick_aside(c, quick)}
              if c["status"] in ("not run", "not evaluated") and _quick_aside(c, quick) else c for c in cl]
        cl = [c | {"why": reasons[k]} if c["status"] in why.UNJUDGED and (k := (exp_id, c["id"], scale)) in reasons
              else c for c in cl]
        claims += [{"experiment": exp_id} | c for c in cl]
        for s, (ms, cs) in judged.items():
            report.write_report(root / s / exp_id, ms, cs if s != scale else cl)
        manifests.append(m | {"grid": (m.get("grid") or {}) | {"left": _left(CATALOG[exp_id], m)}})
    report.write_index(root, manifests, claims, REGENERATE, link=lambda m: f"{m['scale']}/{m['id']}/report.html")
    if markdown:
        Path(markdown).write_text(report.reproduction_markdown(manifests, claims, REGENERATE, committed=True))
    return manifests, claims


__all__ = ["save", "saved_this_build", "load", "read_runs", "rejudge", "regenerate", "REGENERATE", "RUNS", "STORE",
           "SCALES"]
