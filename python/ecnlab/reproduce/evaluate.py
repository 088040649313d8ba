"""Judging an entry's runs, wherever they come from (a run store just filled, or the
committed results): its analysis on all runs and on each seed's alone, every claim through
the one evaluator (``judge``), the soundness flags of the runs each claim rests on, and what
a subset of the grid leaves unjudged. ``runner`` (a run) and ``results`` (``--from``) both
call it."""

from __future__ import annotations

import traceback
from typing import Any

from .base import Claim, Context, Experiment, NoRunData
from .judge import judge


def evaluate(exp: Experiment, ctx: Context, manifest: dict[str, Any]) -> dict[str, Claim]:
    """Every claim of ``exp`` judged (``judge``) on the analysis of all its runs and of each
    seed's runs alone, and the figures drawn from the former (when ``ctx.record``). An
    analysis that fails is reported in ``manifest`` and leaves its claims not evaluated."""
    claims = {c.id: Claim(c.id, c.text, c.number) for c in exp.claims}
    try:
        pooled = exp.tables(ctx)
    except NoRunData as e:  # saved results that cannot give what this entry's analysis reads
        for c in claims.values():
            c.note = str(e)
        return claims
    except Exception as e:  # noqa: BLE001 - report it, keep the rest of the catalog going
        manifest["analysis_error"] = f"{type(e).__name__}: {e}"
        manifest["analysis_traceback"] = traceback.format_exc()
        for c in claims.values():
            c.note = f"analysis failed: {type(e).__name__}: {e}"
        return claims
    seeds = sorted({int(s) for s in ctx.df["seed"]}) if len(ctx.df) else []
    per_seed: dict[int, Any] = {}
    for s in seeds:
        try:
            per_seed[s] = pooled if len(seeds) == 1 else exp.tables(ctx.seed_only(s))
        except Exception:  # noqa: BLE001 - this seed's claims read nothing (NoRunData as above)
            per_seed[s] = {}
    for c in exp.claims:
        j = judge(c, pooled, per_seed)
        claims[c.id] = Claim(c.id, c.text, c.number, j.status, j, j.note, j.rests_on)
    if ctx.record and exp.draw is not None:
        exp.draw(ctx, pooled)
    return claims


def mark_unsound(ctx: Context, claims: dict[str, Claim], param_names: list[str]) -> list[dict[str, Any]]:
    """The soundness flags of every ok run (``ctx.soundness``), and each judged claim marked
    with those of the runs it rests on. Returns the runs that have flags, for the report."""
    flagged = []
    for _, r in ctx.df.iterrows():
        try:
            flags = [f.as_dict() for f in ctx.soundness(r["key"]).flags]
        except (OSError, ValueError, KeyError) as e:  # a run without its files: say so, do not guess
            flags = [{"rule": "files", "at": "run", "text": f"the guard could not read the run: {type(e).__name__}: {e}",
                      "numbers": {}}]
        if flags:
            params = {k: _py(r[k]) for k in param_names if k in r}
            flagged.append({"key": r["key"], "params": params, "seed": _py(r["seed"]), "flags": flags,
                            "facts": [f["text"] for f in flags]})
    for c in claims.values():
        if c.status in ("not evaluated", "not run"):
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


def mark_subset(claims: dict[str, Any], scale: str, where: dict[str, list[str]], n_run: int, n_grid: int,
                 left: str) -> None:
    """A subset's claims (a ``--where``, or saved results that hold part of the grid): the
    judged ones say which points they rest on; those the subset could not judge are "not
    run" at this scale, with what is left to run."""
    if where:
        subset = "the subset " + "; ".join(f"{k}={','.join(v)}" for k, v in where.items())
        judged = f"Judged on the {scale}-scale subset {subset[11:]} ({n_run} of {n_grid} points). "
    else:
        subset = "the saved runs"
        judged = f"Judged on the {n_run} of {n_grid} points of the {scale}-scale grid saved. "
    for c in claims.values():
        if c.status in ("shown", "not shown", "undecided"):
            c.note = judged + c.note
        elif c.status == "not evaluated":
            c.status = "not run"
            c.note = (f"not run at {scale} scale: the runs so far are {subset} ({n_run} of {n_grid} "
                      f"points); left: {left}" + (f" ({c.note})" if c.note else ""))


