"""Running catalog entries: points -> sweep -> analysis -> results.csv, figures,
claims.json, report.html (and, for several entries, index.html).

A run may be restricted to a subset of an entry's grid (``where``, ``--where KEY=V,V``:
only the points whose parameters take one of the given values), so that the headline
points of a heavy paper-scale entry run first. The claims are then judged on the points
that ran, each saying so; a claim with no points in the subset is "not run" with what is
left of the grid. The run store keeps every finished run: a wider subset later reuses them."""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..api import engine_id
from ..outdir import STORE_MARKERS, open_store, write_text_atomic
from ..scenario import ScenarioError
from ..sweep import run_points
from . import report
from .base import CATALOG, SCALES, Claim, Context, Experiment, LiveRuns, not_run_claims
from .evaluate import _py, evaluate, mark_subset, mark_unsound


@dataclass
class ReproduceResult:
    """What ``ecnlab.reproduce`` returns: ``claims`` (a DataFrame, one row per claim with
    its experiment), ``results`` (id -> that experiment's results DataFrame), ``manifests``
    (id -> the experiment's metadata: status, runs, figures) and the output directory."""

    out: Path
    claims: Any
    results: dict[str, Any]
    manifests: dict[str, dict[str, Any]]


def _command(ids: Sequence[str] | None, out: Path, scale: str, seeds: int | None, markdown: str | None,
             where: dict[str, list[str]] | None = None) -> str:
    args = [".venv/bin/ecnlab", "reproduce"]
    args += ["--all"] if ids is None else list(ids)
    args += ["--scale", scale, "--out", str(out)]
    if seeds:
        args += ["--seeds", str(seeds)]
    for k, v in (where or {}).items():
        args += ["--where", f"{k}={','.join(v)}"]
    if markdown:
        args += ["--markdown", markdown]
    return " ".join(shlex.quote(a) for a in args)


def parse_where(specs: Sequence[str] | None) -> dict[str, list[str]]:
    """``["load=0.9", "variant=a,b"]`` -> ``{"load": ["0.9"], "variant": ["a", "b"]}``; a
    key given twice takes the union of its values."""
    where: dict[str, list[str]] = {}
    for spec in specs or []:
        key, eq, vals = spec.partition("=")
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if not eq or not key.strip() or not values:
            raise ScenarioError(f"--where: '{spec}' is not KEY=VALUE[,VALUE...] (e.g. load=0.9)")
        where.setdefault(key.strip(), [])
        where[key.strip()] += [v for v in values if v not in where[key.strip()]]
    return where


def _same(value: Any, wanted: str) -> bool:
    """A point's parameter value equals a --where value: as text, or as numbers (0.9 = 0.90)."""
    if str(value) == wanted:
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False


def select(exp: Experiment, points: list, where: dict[str, list[str]], scale: str) -> list:
    """The points of ``exp``'s grid that ``where`` keeps; a key the entry does not have, or
    a value its grid at this scale does not hold, is refused (ScenarioError, one line)."""
    if not where:
        return points
    names = list(points[0].params) if points else []
    for key, wanted in where.items():
        if key not in names:
            import difflib

            near = difflib.get_close_matches(key, names, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ScenarioError(f"--where: {exp.id} has no parameter '{key}'{hint}; its parameters: {', '.join(names)}")
        have = list(dict.fromkeys(p.params[key] for p in points))
        for w in wanted:
            if not any(_same(v, w) for v in have):
                raise ScenarioError(f"--where: {key}={w} is not in {exp.id}'s {scale} grid "
                                    f"({', '.join(map(str, have))})")
    chosen = [p for p in points if all(any(_same(p.params[k], w) for w in ws) for k, ws in where.items())]
    if not chosen:  # each value exists, but never together
        raise ScenarioError(f"--where: no point of {exp.id}'s {scale} grid has "
                            + " and ".join(f"{k} in {','.join(ws)}" for k, ws in where.items()))
    return chosen


def grid_left(points: list, chosen: list, where: dict[str, list[str]]) -> str:
    """What a subset leaves out of the grid, in words: "156 of 162 points: load in 0.1, ..., 0.8"."""
    if len(chosen) == len(points):
        return ""
    parts = []
    for key, wanted in where.items():
        rest = [v for v in dict.fromkeys(p.params[key] for p in points) if not any(_same(v, w) for w in wanted)]
        if rest:
            parts.append(f"{key} in {', '.join(map(str, rest))}")
    return f"{len(points) - len(chosen)} of {len(points)} points: " + " or ".join(parts)


def run_experiment(exp: Experiment, out: Path, scale: str, seeds: int | None, jobs: int | None, cluster: Any,
                   progress: bool, command: str, where: dict[str, list[str]] | None = None,
                   saved: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    """Run one entry into ``out`` (only the points ``where`` keeps, if given, and of those
    only the ones whose store key is not in ``saved``: runs the committed results hold);
    returns (manifest, claims, results DataFrame)."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    n = seeds or exp.seeds.get(scale, 1)
    seed_list = list(range(1, n + 1))
    manifest: dict[str, Any] = {
        "id": exp.id, "title": exp.title, "paper": exp.paper, "figures": exp.figures, "scale": scale,
        "seeds": seed_list, "command": command, "notes": list(exp.notes), "scale_note": exp.scale_notes.get(scale, ""),
        "scenario": exp.scenario,
    }
    t0 = time.monotonic()
    reason = exp.requires() if exp.requires else None
    if reason:
        manifest |= {"status": "not run", "reason": reason, "runs": {"total": 0, "ok": 0, "failed": 0}, "wall_time_s": 0.0}
        claims = not_run_claims(exp, reason)
        results = pd.DataFrame()
        (out / "results.csv").write_text("")
        _finish(out, manifest, claims)
        return manifest, claims, results
    grid_points = exp.points(scale, seed_list)
    points = select(exp, grid_points, where or {}, scale)
    left = grid_left(grid_points, points, where or {})
    if saved:
        from ..sweep.store import resolve_point

        points = [p for p in points if resolve_point(p).key not in saved]
    manifest["grid"] = {"points": len(grid_points), "run": len(points), "where": where or {}, "left": left}
    res = run_points(points, out, jobs=jobs, cluster=cluster, progress=progress, label=f"{exp.id}: ")
    results = pd.read_csv(out / "results.csv") if res.rows else pd.DataFrame()
    ok = int((results["status"] == "ok").sum()) if len(results) else 0
    failures = [{"params": {k: _py(r[k]) for k in points[0].params} | {"seed": _py(r["seed"])}, "error": r["error"]}
                for _, r in results.iterrows() if r["status"] != "ok"] if len(results) else []
    run_s = float(results["wall_time_s"].fillna(0).sum()) if "wall_time_s" in results else 0.0
    manifest |= {"runs": {"total": len(results), "ok": ok, "failed": len(results) - ok, "reused": res.cached,
                          "run_time_s": run_s},
                 "failures": failures,
                 # The store's keys include the build, so every run here is this build's.
                 "engine": [engine_id()] if ok else []}
    ctx = Context(exp, out, results, scale, seed_list, LiveRuns(exp, out))
    if ok == 0:
        manifest["status"] = "failed"
        manifest["analysis_error"] = "no run succeeded" + (f": {failures[0]['error']}" if failures else "")
        claims = {c.id: Claim(c.id, c.text, c.number, note=manifest["analysis_error"]) for c in exp.claims}
    else:
        manifest["status"] = "ran"
        claims = evaluate(exp, ctx, manifest)
        if left:
            mark_subset(claims, scale, where or {}, len(points), len(grid_points), left)
        manifest["guard"] = mark_unsound(ctx, claims, list(points[0].params))
    manifest["figures_drawn"] = [{"name": f.name, "caption": f.caption} for f in ctx.figures]
    manifest["analysis_notes"] = ctx.notes
    manifest["wall_time_s"] = time.monotonic() - t0
    claims = [c.as_dict() for c in claims.values()]
    _finish(out, manifest, claims)
    return manifest, claims, results


def _finish(out: Path, manifest: dict[str, Any], claims: list[dict[str, Any]]) -> None:
    write_text_atomic(out / "claims.json", json.dumps(claims, indent=2) + "\n")
    write_text_atomic(out / "experiment.json", json.dumps(manifest, indent=2, default=str) + "\n")
    report.write_report(out, manifest, claims)


PROGRESS = "progress.json"


def _progress(out: Path, scale: str, ids: list[str], done: list[str], current: str | None) -> None:
    """``out/progress.json``: the entries of this run, those done, the one running (a
    background run's progress; ``status`` adds the runs stored)."""
    from ..outdir import write_text_atomic

    write_text_atomic(out / PROGRESS, json.dumps({"scale": scale, "entries": ids, "done": done, "running": current,
                                                  "updated_at": time.time()}, indent=2) + "\n")


def status(ids: str | Sequence[str] | None, out: Path, scale: str, seeds: int | None,
           save: str | Path | None = None) -> list[str]:
    """Per entry, how many of its ``scale`` grid's runs the store ``out`` holds for this build
    (and what ``progress.json`` says is running), and with ``save`` how many of them the
    committed results hold instead (``results.saved_this_build``: not run again): the lines
    ``--status`` prints."""
    from ..sweep.store import resolve_point
    from .results import saved_this_build

    single = isinstance(ids, str)
    id_list = list(CATALOG) if ids is None else ([ids] if single else list(ids))
    prog = {}
    if (out / PROGRESS).is_file():
        try:
            prog = json.loads((out / PROGRESS).read_text())
        except ValueError:
            prog = {}
    lines, have_all, want_all = [], 0, 0
    for i in id_list:
        exp = CATALOG[i]
        if exp.requires and exp.requires():
            lines.append(f"{i:<22} not run: {exp.requires()}")
            continue
        n = seeds or exp.seeds.get(scale, 1)
        keys = {resolve_point(p).key for p in exp.points(scale, list(range(1, n + 1)))}
        runs = (out if single else out / i) / "runs"
        held = saved_this_build(save, i, scale) if save is not None else None
        saved = set(held[0]["key"]) & keys if held is not None else set()
        stored = {k for k in keys if (runs / k / "summary.json").is_file()}
        have = len(stored | saved)
        have_all, want_all = have_all + have, want_all + len(keys)
        state = "running" if prog.get("running") == i else ("done" if i in prog.get("done", []) else "")
        extra = f" ({len(saved - stored)} of them saved in {save})" if saved - stored else ""
        lines.append(f"{i:<22} {have:>5} / {len(keys):<5} runs stored{extra} {state}".rstrip())
    lines.append(f"{'all':<22} {have_all:>5} / {want_all:<5} runs stored for build {engine_id()}")
    return lines


def _saved(exp: Experiment, save: str | Path | None, scale: str, seeds: int | None,
           where: dict[str, list[str]] | None) -> tuple[Any, bool] | None:
    """With ``--save``: the rows the committed results hold of this build for ``exp``
    (``results.saved_this_build``), and whether they cover every point this run would run;
    None without ``--save`` or with nothing of this build saved."""
    if save is None or (exp.requires and exp.requires()):
        return None
    from ..sweep.store import resolve_point
    from .results import saved_this_build

    held = saved_this_build(save, exp.id, scale)
    if held is None:
        return None
    n = seeds or exp.seeds.get(scale, 1)
    want = {resolve_point(p).key for p in select(exp, exp.points(scale, list(range(1, n + 1))), where or {}, scale)}
    return held[0], want <= set(held[0]["key"])


def _check_layout(out: Path, id_list: list[str], single: bool) -> None:
    """One entry writes its files into ``out`` itself, several write one folder each: refuse
    a folder that holds the other layout, whose files would mix with this run's."""
    if single:
        nested = [p.parent.name for p in sorted(out.glob("*/experiment.json")) if p.parent.name in CATALOG]
        if nested or (out / "index.html").exists():
            held = f" ({', '.join(nested[:3])}{' ...' if len(nested) > 3 else ''})" if nested else ""
            raise ScenarioError(f"--out: {out} holds a reproduction of several entries{held}, one folder each; "
                                f"one entry writes its files into --out itself: give --out {out / id_list[0]} "
                                "or another folder")
    elif (out / "experiment.json").exists():
        try:
            held = json.loads((out / "experiment.json").read_text()).get("id", "one entry")
        except (OSError, ValueError, AttributeError):
            held = "one entry"
        raise ScenarioError(f"--out: {out} holds the reproduction of {held} alone, its files at the top; "
                            "several entries write one folder each: give another --out")


def reproduce(
    ids: str | Sequence[str] | None = None,
    out: str | Path = "out/reproduce",
    scale: str = "quick",
    seeds: int | None = None,
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = True,
    markdown: str | Path | None = None,
    where: dict[str, list[str]] | Sequence[str] | None = None,
    save: str | Path | None = None,
) -> ReproduceResult:
    """Run catalog entries (``ids``: one id, a list, or None for the whole catalog).

    One id writes into ``out`` itself: ``results.csv``, ``figures/*.png|svg``,
    ``claims.json``, ``report.html`` and ``runs/<key>/``. Several ids (or all) write one
    such directory per id under ``out`` plus ``out/index.html`` and ``out/claims.csv``;
    ``markdown`` also writes the REPRODUCTION.md table there. ``scale``: ``"quick"`` (a few
    minutes per entry on a laptop) or ``"paper"`` (the paper's sizes). ``seeds``: number of
    seeds (default: the entry's, 3). Runs already in ``out`` are reused; a folder holding the
    other layout (one entry's files, or one folder per entry) is refused.

    ``where``: only the points whose parameters take the given values (``{"load":
    ["0.9"]}`` or ``["load=0.9"]``), checked against every entry before anything runs.
    ``save``: also copy each entry's committed results (``results.save``) into
    ``save/<scale>/<id>/``; points whose runs are saved there for this build are not run
    again, and the new runs are added to them (a heavy entry run in parts, on several
    machines)."""
    import pandas as pd

    if scale not in SCALES:
        raise ScenarioError(f"--scale: '{scale}' is not one of {', '.join(SCALES)}")
    if seeds is not None and seeds < 1:
        raise ScenarioError("--seeds: must be >= 1")
    single = isinstance(ids, str)
    id_list = list(CATALOG) if ids is None else ([ids] if single else list(ids))
    for i in id_list:
        if i not in CATALOG:
            import difflib

            near = difflib.get_close_matches(i, list(CATALOG), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ScenarioError(f"no catalog entry '{i}'{hint}; ecnlab reproduce --list shows them")
    if where is not None and not isinstance(where, dict):
        where = parse_where(where)
    if where:  # refuse a bad subset before the first run of the first entry
        for i in id_list:
            exp = CATALOG[i]
            if not (exp.requires and exp.requires()):
                select(exp, exp.points(scale, list(range(1, (seeds or exp.seeds.get(scale, 1)) + 1))), where, scale)
    # A store that grows (outdir.open_store): new, empty, or a reproduction's; other files refused.
    out = open_store(out, STORE_MARKERS + (PROGRESS, "experiment.json", "claims.json", "index.html", "claims.csv",
                                         "report.html", *CATALOG))
    _check_layout(out, id_list, single)
    command = _command(None if ids is None else id_list, out, scale, seeds, str(markdown) if markdown else None,
                       where)
    manifests: dict[str, dict[str, Any]] = {}
    results: dict[str, Any] = {}
    all_claims: list[dict[str, Any]] = []
    out.mkdir(parents=True, exist_ok=True)
    if single:  # progress.json sits beside the runs: the sweep's store marker first, or it refuses the folder
        (out / "runs").mkdir(exist_ok=True)
    done: list[str] = []
    for i in id_list:
        _progress(out, scale, id_list, done, i)
        exp_out = out if single else out / i
        held = _saved(CATALOG[i], save, scale, seeds, where)
        if held is not None and held[1]:  # every point is saved for this build: judged from there
            from .results import rejudge

            (m, claims), df = rejudge(Path(save), i, scale), held[0]
        else:
            m, claims, df = run_experiment(CATALOG[i], exp_out, scale, seeds, jobs, cluster, progress, command, where,
                                           frozenset(held[0]["key"]) if held is not None else frozenset())
            if save is not None:
                from .results import load as load_saved
                from .results import save as save_results

                save_results(exp_out, Path(save))
                if held is not None and len(held[0]):  # merged with the earlier save: its verdicts
                    m, claims = load_saved(save, i, scale)
        done.append(i)
        manifests[i], results[i] = m, df
        all_claims += [{"experiment": i} | c for c in claims]
    _progress(out, scale, id_list, done, None)
    claims_df = pd.DataFrame(all_claims)
    if not single:
        out.mkdir(parents=True, exist_ok=True)
        claims_df.to_csv(out / "claims.csv", index=False)
        report.write_index(out, list(manifests.values()), all_claims, command)
        if markdown:
            Path(markdown).write_text(report.reproduction_markdown(list(manifests.values()), all_claims, command))
    elif markdown:
        Path(markdown).write_text(report.reproduction_markdown(list(manifests.values()), all_claims, command))
    return ReproduceResult(out, claims_df, results, manifests)
