"""The one evaluator of the catalog's claims (``rules`` says how a claim is judged): a claim's
reader gives one value per seed at the point its rule and the paper's number pick, and its
rule two verdicts; the note is written here, once, from the same numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rules import (NA, NOT_SHOWN, SHOWN, UNDECIDED, Estimate, Grows, Near, Reduction, Rule, Unavailable, band,
                    beyond, combine, inside)


@dataclass
class Judgement:
    """A claim's outcome: ``status`` (shown, not shown, undecided, not evaluated), its two
    verdicts, ecnlab's value (the seeds' mean) with its interval, each seed's value, the band,
    the point judged, and, for "up to", the same at ecnlab's largest point (``best``)."""

    status: str
    direction: str = NA
    magnitude: str = NA
    value: float | None = None
    interval: tuple[float, float] | None = None
    per_seed: list[dict[str, Any]] = field(default_factory=list)
    band: tuple[float, float] | None = None
    at: Any = None
    at_label: str = ""
    best: dict[str, Any] | None = None
    note: str = ""
    rests_on: dict[str, list[Any]] | None = None


def _fmt(x: float) -> str:
    if x is None:
        return "-"
    a = abs(x)
    return f"{x:.3g}" if a < 1000 else f"{x:,.0f}"


def _axis(reader) -> str:
    return "load" if hasattr(reader, "metric") else (getattr(reader, "axis", None) or "point")


def _point_label(reader, at, why: str) -> str:
    if at is None:
        return ""
    axis = _axis(reader)
    v = f"{at:.0%}" if axis == "load" and isinstance(at, float) else f"{at}"
    return f"at {axis} {v} ({why})"


def _values(reader, per_seed: dict[int, Any], at) -> tuple[list[dict[str, Any]], Unavailable | None]:
    rows, missing = [], None
    for s, d in per_seed.items():
        v = reader.read(d, at) if at is not None else reader.read(d)
        if isinstance(v, Unavailable):
            missing = v
            continue
        rows.append({"seed": s, "ecnlab": v})
    return rows, (missing if not rows else None)


def _estimate(rows) -> Estimate | None:
    return Estimate.of([r["ecnlab"] for r in rows if r["ecnlab"] is not None])


def _verdicts(rule, est: Estimate | None, rows, number) -> tuple[str, str, Any]:
    exists = isinstance(rule, Near) and rule.exists
    if exists:
        have = sum(r["ecnlab"] is not None for r in rows)
        direction = SHOWN if rows and have == len(rows) else NOT_SHOWN if have == 0 else UNDECIDED
    elif type(rule).direction is not Rule.direction:
        direction = rule.direction(est) if est is not None else NOT_SHOWN
    else:
        direction = NA
    if number is None or number.unit in ("direction", "set-up", "fit") or type(rule).magnitude is Rule.magnitude:
        return direction, NA, None
    if est is None:
        return direction, NOT_SHOWN, None
    magnitude, b = rule.magnitude(est, number)
    return direction, magnitude, b


def _seed_text(rows, est: Estimate | None) -> str:
    vals = [r["ecnlab"] for r in rows]
    if len(vals) < 2:
        return ""
    lo, hi = est.interval if est is not None else (None, None)
    each = "/".join(_fmt(v) if v is not None else "none" for v in vals)
    return f" (seeds {each}; 95 % interval {_fmt(lo)} to {_fmt(hi)})" if est is not None else f" (seeds {each})"


def _band_text(b, paper: float, unit: str) -> str:
    if b is None:
        return ""
    lo, hi = b
    if lo == hi:
        return f"exactly {_fmt(lo)}"
    if hi == float("inf"):
        return f"at least {_fmt(lo)}"
    if lo == float("-inf") or (lo == 0 and paper > 0 and hi == paper * 1.25):
        return f"at most {_fmt(hi)}"
    return f"{_fmt(lo)} to {_fmt(hi)}"


def judge(claim, pooled: dict[str, Any], per_seed: dict[int, dict[str, Any]]) -> Judgement:
    """``claim`` (a ``ClaimDef``) judged on the entry's analysis of all its runs (``pooled``)
    and of each seed's runs alone (``per_seed``)."""
    rule, number = claim.rule, claim.number
    reader = rule.of
    paper = number.value if number is not None else None
    unit = number.unit if number is not None else ""
    points = reader.points(pooled) if hasattr(reader, "points") else None
    if isinstance(points, Unavailable):
        return Judgement("not evaluated", note=points.reason)
    at, why, best_at = None, "", None
    if points is not None:
        if not points:
            return Judgement("not evaluated", note="no point of the grid at this scale")
        axis = _axis(reader)
        paper_at = (number.at or {}).get(axis) if number is not None else None
        pooled_vals = {p: v for p in points if (v := reader.read(pooled, p)) is not None
                       and not isinstance(v, Unavailable)}
        chosen = rule.pick(pooled_vals) if pooled_vals and rule.over else None
        if paper_at is not None:
            match = [p for p in points if _same(p, paper_at)]
            if not match:
                return Judgement("not evaluated", note=f"the paper's point ({axis} {paper_at}) is not in this "
                                 f"scale's grid ({', '.join(map(str, points))})")
            at, why = match[0], "the paper's point"
            if isinstance(rule, Reduction) and rule.upto and chosen is not None and not _same(chosen, at):
                best_at = chosen
        elif chosen is not None:
            at, why = chosen, {"best": "ecnlab's largest", "weakest": "ecnlab's smallest"}.get(rule.over,
                                                                                             "ecnlab's farthest")
        else:
            return Judgement("not evaluated", note="no value at any point of the grid")
    rows, missing = _values(reader, per_seed, at)
    if missing is not None:
        return Judgement("not evaluated", note=missing.reason)
    est = _estimate(rows)
    if isinstance(rule, Grows):
        return _judge_grows(claim, pooled, per_seed, rows, est, at, why)
    direction, magnitude, b = _verdicts(rule, est, rows, number)
    label = _point_label(reader, at, why)
    j = Judgement(combine(direction, magnitude), direction, magnitude, est.mean if est else None,
                  est.interval if est else None, rows, b, at, label, rests_on=_rests(reader, pooled))
    if best_at is not None:
        brows, _ = _values(reader, per_seed, best_at)
        best = _estimate(brows)
        if best is not None:
            bd, bm, bb = _verdicts(rule, best, brows, number)
            j.best = {"at": best_at, "at_label": _point_label(reader, best_at, "ecnlab's largest"),
                      "ecnlab": best.mean, "ci95": list(best.interval), "direction": bd, "magnitude": bm}
    j.note = _note(claim, pooled, j, est, paper, unit)
    return j


def _same(a, b) -> bool:
    if a == b:
        return True
    try:
        return abs(float(a) - float(b)) < 1e-9
    except (TypeError, ValueError):
        return str(a) == str(b)


def _rests(reader, pooled):
    r = reader.rests_on(pooled) if hasattr(reader, "rests_on") else None
    return {k: list(v) for k, v in r.items()} if r else None


def _note(claim, pooled, j: Judgement, est, paper, unit) -> str:
    rule = claim.rule
    what = rule.of.words(pooled)
    where = f" {j.at_label}" if j.at_label else ""
    value = "no value" if est is None else _fmt(est.mean)
    parts = [f"{what}{where}: {value}{_seed_text(j.per_seed, est)}"]
    crit = rule.criterion(paper) if paper is not None else ""
    if j.direction != NA:
        parts.append(f"direction {j.direction}")
    if j.magnitude != NA:
        bt = _band_text(j.band, paper, unit)
        parts.append(f"magnitude {j.magnitude}" + (f" (band {bt}: the paper's {crit} ±25 %)" if bt else ""))
    if j.best is not None:
        parts.append(f"{j.best['at_label']}: {_fmt(j.best['ecnlab'])}, magnitude {j.best['magnitude']}")
    n = claim.number
    if n is not None:
        parts.append(f"paper: {n.section}" + (f", {n.at_text()}" if n.at else ""))
    return "; ".join(parts)


def _judge_grows(claim, pooled, per_seed, rows, est, at, why) -> Judgement:
    """Two values (``low`` and ``of``): the direction is their per-seed difference above 0,
    the magnitude each within its paper value ±25 %."""
    rule, paper = claim.rule, claim.number.value
    lrows, missing = _values(rule.low, per_seed, None)
    if missing is not None:
        return Judgement("not evaluated", note=missing.reason)
    low = _estimate(lrows)
    pairs = {r["seed"]: r["ecnlab"] for r in rows}
    diffs = [pairs[r["seed"]] - r["ecnlab"] for r in lrows
             if r["ecnlab"] is not None and pairs.get(r["seed"]) is not None]
    d = Estimate.of(diffs)
    direction = NOT_SHOWN if d is None else beyond(d, 0.0, +1)
    mags = []
    for e, n in ((est, claim.number), (low, rule.low_number)):
        mags.append(NOT_SHOWN if e is None else inside(e, *band(n.value, n.precision)))
    magnitude = NOT_SHOWN if NOT_SHOWN in mags else UNDECIDED if UNDECIDED in mags else SHOWN
    j = Judgement(combine(direction, magnitude), direction, magnitude, est.mean if est else None,
                  est.interval if est else None, rows, band(paper, claim.number.precision), at,
                  rests_on=_rests(rule.of, pooled))
    lw = rule.low.words(pooled)
    j.note = (f"{lw}: {_fmt(low.mean) if low else 'no value'}{_seed_text(lrows, low)}; "
              f"{rule.of.words(pooled)}: {_fmt(est.mean) if est else 'no value'}{_seed_text(rows, est)}; "
              f"direction {direction} (the second above the first); magnitude {magnitude} (each within ±25 % of the "
              f"paper's {rule.low_number.value:g} and {paper:g}); paper: {claim.number.section}")
    return j
