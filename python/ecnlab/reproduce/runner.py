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
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..api import engine_id
from ..outdir import STORE_MARKERS, open_store, write_text_atomic
from ..scenario import ScenarioError
from ..sweep import run_points
from .. import soundness
from . import report
from .base import CATALOG, SCALES, Context, Experiment, not_run_claims


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


def _mark_subset(claims: dict[str, Any], scale: str, where: dict[str, list[str]], n_run: int, n_grid: int,
                 left: str) -> None:
    """A subset's claims: the judged ones say which points they rest on; those the subset
    could not judge are "not run" at this scale, with what is left to run."""
    subset = "; ".join(f"{k}={','.join(v)}" for k, v in where.items())
    for c in claims.values():
        if c.status in ("shown", "not shown"):
            c.note = f"Judged on the {scale}-scale subset {subset} ({n_run} of {n_grid} points). {c.note}"
        elif c.status == "not evaluated":
            c.status = "not run"
            c.note = (f"not run at {scale} scale: the runs so far are the subset {subset} ({n_run} of {n_grid} "
                      f"points); left: {left}" + (f" ({c.note})" if c.note else ""))


def run_experiment(exp: Experiment, out: Path, scale: str, seeds: int | None, jobs: int | None, cluster: Any,
                   progress: bool, command: str,
                   where: dict[str, list[str]] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    """Run one entry into ``out`` (only the points ``where`` keeps, if given); returns
    (manifest, claims, results DataFrame)."""
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
    ctx = Context(exp, out, results, scale, seed_list)
    if ok == 0:
        manifest["status"] = "failed"
        manifest["analysis_error"] = "no run succeeded" + (f": {failures[0]['error']}" if failures else "")
        for c in ctx.claims.values():
            c.note = manifest["analysis_error"]
    else:
        manifest["status"] = "ran"
        try:
            exp.analyze(ctx)
        except Exception as e:  # noqa: BLE001 - report it, keep the rest of the catalog going
            manifest["analysis_error"] = f"{type(e).__name__}: {e}"
            manifest["analysis_traceback"] = traceback.format_exc()
            for c in ctx.claims.values():
                if c.status == "not evaluated" and not c.note:
                    c.note = f"analysis failed: {type(e).__name__}: {e}"
        if len(seed_list) > 1:
            _judge_per_seed(exp, out, results, scale, seed_list, ctx)
        if left:
            _mark_subset(ctx.claims, scale, where or {}, len(points), len(grid_points), left)
        manifest["guard"] = _guard(exp, out, ctx, list(points[0].params))
    manifest["figures_drawn"] = [{"name": f.name, "caption": f.caption} for f in ctx.figures]
    manifest["analysis_notes"] = ctx.notes
    manifest["wall_time_s"] = time.monotonic() - t0
    claims = [c.as_dict() for c in ctx.claims.values()]
    _finish(out, manifest, claims)
    return manifest, claims, results


def _judge_per_seed(exp: Experiment, out: Path, results: Any, scale: str, seed_list: list[int], ctx: Context) -> None:
    """Judge every claim again on each seed's runs alone (the analysis without figures),
    so that the report says how many seeds show a claim, not only whether the
    mean over seeds does: at quick scale a claim near its band may flip with the seed."""
    per_seed: dict[str, list[dict[str, Any]]] = {cid: [] for cid in ctx.claims}
    for s in seed_list:
        sub = results[results["seed"] == s]
        one = Context(exp, out, sub, scale, [s], record=False)
        if len(one.df):  # this seed has runs that succeeded
            try:
                exp.analyze(one)
            except Exception:  # noqa: BLE001 - the claims this seed could not judge stay "not evaluated"
                pass
        for cid, c in one.claims.items():
            per_seed[cid].append({"seed": s, "ecnlab": c.ecnlab, "status": c.status})
    for cid, c in ctx.claims.items():
        c.per_seed = per_seed[cid]


def run_soundness(run_dir: Path, skip: tuple[str, ...] = ()) -> soundness.Soundness:
    """A stored run's soundness (``ecnlab.soundness``): the verdict its ``summary.json`` carries,
    or, for a run recorded before ecnlab wrote one, the guard's rules on its files; the rules
    of ``skip`` set aside."""
    from ..inputs import read_json

    stored = soundness.from_summary(read_json(run_dir / "summary.json"))
    if stored is None:
        stored = soundness.assess(soundness.Run.from_dir(run_dir))
    return stored.without(skip)


def _guard(exp: Experiment, out: Path, ctx: Context, param_names: list[str]) -> list[dict[str, Any]]:
    """The soundness flags of every ok run (``run_soundness``), and each claim marked with
    those of the runs it rests on. Returns the runs that have flags, for the report."""
    flagged = []
    for _, r in ctx.df.iterrows():
        try:
            flags = [f.as_dict() for f in run_soundness(ctx.run_dir(r["key"]), exp.guard_expected).flags]
        except (OSError, ValueError, KeyError) as e:  # a run without its files: say so, do not guess
            flags = [{"rule": "files", "at": "run", "text": f"the guard could not read the run: {type(e).__name__}: {e}",
                      "numbers": {}}]
        if flags:
            params = {k: _py(r[k]) for k in param_names if k in r}
            flagged.append({"key": r["key"], "params": params, "seed": _py(r["seed"]), "flags": flags,
                            "facts": [f["text"] for f in flags]})
    for c in ctx.claims.values():
        if c.status not in ("shown", "not shown"):
            continue
        hits = [f for f in flagged if rests_on_run(c.rests_on, f)]
        c.unsound = [f"{_label(f['params'])}seed {f['seed']}: {x}" for f in hits for x in f["facts"]]
    return flagged


def rests_on_run(rests_on: dict[str, Any] | None, run: dict[str, Any]) -> bool:
    """A claim that rests on ``rests_on`` (``Context.claim``) rests on ``run`` (a guard entry:
    ``key``, ``params``): None rests on every run."""
    return not rests_on or all((run["key"] if k == "key" else run["params"].get(k)) in v for k, v in rests_on.items())


def _label(params: dict[str, Any]) -> str:
    return "".join(f"{k}={v}, " for k, v in params.items())


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _finish(out: Path, manifest: dict[str, Any], claims: list[dict[str, Any]]) -> None:
    write_text_atomic(out / "claims.json", json.dumps(claims, indent=2) + "\n")
    write_text_atomic(out / "experiment.json", json.dumps(manifest, indent=2, default=str) + "\n")
    report.write_report(out, manifest, claims)


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
    ``save/<scale>/<id>/``."""
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
    out = open_store(out, STORE_MARKERS + ("experiment.json", "claims.json", "index.html", "claims.csv",
                                         "report.html", *CATALOG))
    _check_layout(out, id_list, single)
    command = _command(None if ids is None else id_list, out, scale, seeds, str(markdown) if markdown else None,
                       where)
    manifests: dict[str, dict[str, Any]] = {}
    results: dict[str, Any] = {}
    all_claims: list[dict[str, Any]] = []
    for i in id_list:
        exp_out = out if single else out / i
        m, claims, df = run_experiment(CATALOG[i], exp_out, scale, seeds, jobs, cluster, progress, command, where)
        manifests[i], results[i] = m, df
        if save is not None:
            from .results import save as save_results

            save_results(exp_out, Path(save))
        all_claims += [{"experiment": i} | c for c in claims]
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
