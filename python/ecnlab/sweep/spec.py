"""The sweep file (SWEEP.toml) and its points: read, checked whole, expanded.

::

    name = "perport"                    # optional
    scenario = "tcn-perport"            # built-in name, or a TOML path (relative to this file)
    seeds = [1, 2, 3]                   # a list, or N for seeds 1..N (default: the scenario's)
    set = { "metrics.warmup" = "0.2s" } # overrides applied to every point (or a list of "k=v")
    timeout = "10min"                   # optional: per-run wall-clock limit, with its unit
    retries = 2                         # optional: new tries for a run whose process died

    [grid]                              # every combination of these values
    "marking.scheme" = ["per_port", "per_queue", "tcn"]
    "flows.1.count" = [2, 4, 8, 16]

    [zip]                               # optional: lists of one length that move together
    "marking.threshold.k" = ["30KB", "60KB"]
    "marking.tcn.threshold" = ["20us", "40us"]

    [cases.variant]                     # optional: a named axis whose values are override sets
    tail = { "marking.scheme" = "per_queue", "marking.threshold.k" = "250KB" }
    avg  = { "marking.scheme" = "per_queue", "marking.threshold.k" = "80KB" }

The points are the cartesian product of the ``[grid]`` keys, the ``[zip]`` axis, the
``[cases.*]`` axes and the seeds (at most ``MAX_POINTS``, refused before expansion).
``results.csv`` gets one column per grid key, zipped key and case axis. ``points_from_spec``
checks the whole file before anything runs (its keys, with a did-you-mean; types; empty
lists; and every point's scenario, as ``ecnlab check`` does), and names the file and the
field in one line: ``perport.toml: grid."marking.scheme"[1]: marking.scheme: unknown
variant `tcnn`, ...``. An override is ``key=value`` with the value a TOML literal, as
``--set`` takes it (written by ``tomli_w``).
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import tomli_w

from ..inputs import ScenarioError, parse_toml, read_text


@dataclass
class Point:
    """One run of a sweep: a scenario (built-in name, TOML path or dict), overrides
    (``"key=value"`` strings as ``--set``), a seed (None: the scenario's), and ``params``,
    the labels that become columns of ``results.csv`` (e.g. ``{"scheme": "tcn"}``).
    ``timeout`` (seconds) and ``retries``, when given, override the sweep's limits for
    this run; neither is part of the run's key."""

    scenario: str | os.PathLike | dict[str, Any]
    overrides: Sequence[str] = ()
    seed: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    retries: int | None = None


def _canonical(obj: Any) -> str:
    """The canonical JSON of a document (store keys, and telling points apart)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False,
                      default=os.fspath)


def _one_line(e: BaseException) -> str:
    """An error as the one line a failure record and the command line show."""
    msg = str(e).strip()
    first = msg.splitlines()[0] if msg else ""
    name = type(e).__name__
    if isinstance(e, ScenarioError):
        return first or name
    return f"{name}: {first}" if first else name


_SPEC_KEYS = ("name", "description", "scenario", "seeds", "set", "grid", "zip", "cases", "timeout", "retries")

MAX_POINTS = 100_000
"""The most points a sweep may have (axes x seeds): a grid beyond it is refused before it
is expanded (a typo such as `seeds = 1000000000` must not exhaust memory)."""
DEFAULT_RETRIES = 2  # a run whose worker process dies is tried at most 1 + 2 times


@dataclass
class Limits:
    """A sweep's time limit (seconds) and retries; a point's own win."""

    timeout: float | None
    retries: int

    def of(self, r) -> tuple[float | None, int]:
        p = r.point
        t = p.timeout if p.timeout is not None else self.timeout
        n = p.retries if p.retries is not None else self.retries
        return (float(t) if t is not None else None), max(0, int(n))

    def after_death(self, r, attempt: int, why: str, note) -> str | None:
        """A run's process died on its ``attempt``-th try: None when it gets another (said
        through ``note``), else the error to record."""
        retries = self.of(r)[1]
        if attempt <= retries:
            note(f"run {r.key}: {why}; retrying ({attempt + 1} of {retries + 1} attempts)")
            return None
        return f"{why} (on each of {attempt} attempts)" if attempt > 1 else why


class _SweepSpec(dict):
    """A spec read from a file: a dict that remembers the file, for error messages."""

    path: str | None = None


def _field(*parts: Any) -> str:
    """A field path as written in TOML: ``grid."marking.scheme"[2]``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
            continue
        p = str(p)
        bare = p and all(c.isalnum() or c in "_-" for c in p)
        out += ("." if out else "") + (p if bare else json.dumps(p))
    return out


def _spec_error(spec: dict[str, Any], field_path: str, what: str) -> ScenarioError:
    where = getattr(spec, "path", None) or "sweep"
    return ScenarioError(f"{where}: {field_path}: {what}" if field_path else f"{where}: {what}")


def _type_name(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)



def _literal(v: Any) -> str:
    """A value as the TOML literal ``--set`` parses back to the same value."""
    try:
        json.dumps(v, allow_nan=False)  # the values a scenario can hold, all finite
    except ValueError:
        raise ScenarioError(f"{v}: not a finite number") from None
    except TypeError:
        raise ScenarioError(f"{v!r}: cannot be written as a scenario value") from None
    if isinstance(v, dict):  # tomli_w would write a table; an override needs it inline
        return "{" + ", ".join(f"{_literal(str(k))} = {_literal(x)}" for k, x in v.items()) + "}"
    # On one line (tomli_w writes arrays one item a line; a string never holds a raw newline).
    return " ".join(line.strip() for line in tomli_w.dumps({"v": v}).removeprefix("v = ").splitlines())


def override(key: str, value: Any) -> str:
    """``key=value`` with the value written as a TOML literal."""
    return f"{key}={_literal(value)}"


def _overrides_of(spec: dict[str, Any], obj: Any, where: str) -> list[tuple[str, str]]:
    """(field path, "key=value") for each override of a ``set`` or a case."""
    expected = "expected a table of key = value (or a list of \"key=value\" strings)"
    if obj is None:
        return []
    if isinstance(obj, str):
        obj = [obj]
    if isinstance(obj, list):
        out = []
        for i, s in enumerate(obj):
            if not isinstance(s, str) or "=" not in s:
                raise _spec_error(spec, f"{where}[{i}]", f"{expected}, found {_type_name(s)} {s!r}"[:200])
            out.append((f"{where}[{i}]", s))
        return out
    if isinstance(obj, dict):
        out = []
        for k, v in obj.items():
            try:
                out.append((f"{where}.{_field(k)}", override(k, v)))
            except ScenarioError as e:
                raise _spec_error(spec, f"{where}.{_field(k)}", str(e)) from None
        return out
    raise _spec_error(spec, where, f"{expected}, found {_type_name(obj)}")


def time_limit_s(v: Any) -> float:
    """A positive time limit in seconds from a time with its unit (``"90s"``, ``"10min"``),
    as a sweep file or ``--timeout`` gives it; ValueError (one line) otherwise. A bare
    number is refused, as everywhere a unit belongs (30 could be seconds or minutes)."""
    from .. import _core

    if isinstance(v, (int, float)) and not isinstance(v, bool):
        raise ValueError(f"`{v}` has no unit: a time needs one, e.g. `{v}s` or \"{v}s\" in a file")
    if not isinstance(v, str):
        raise ValueError(f"expected a time such as \"90s\", found {_type_name(v)}")
    secs = _core.parse_unit("time", v) / 1e9
    if not math.isfinite(secs) or secs <= 0:
        raise ValueError(f"{v!r} must be a positive time")
    return secs


def load_sweep(path: str | os.PathLike) -> dict[str, Any]:
    """Read a SWEEP.toml file into a spec dict (see the module docs). Errors in the
    points it describes are found by ``points_from_spec``, and name this file."""
    p = Path(path)
    spec = _SweepSpec(parse_toml(read_text(p, "sweep"), str(p)))
    spec.path = str(p)
    spec.setdefault("name", p.stem)
    scen = spec.get("scenario")
    if isinstance(scen, str) and not Path(scen).is_absolute() and (p.parent / scen).is_file():
        spec["scenario"] = str(p.parent / scen)
    return spec


def points_from_spec(spec: dict[str, Any], validate: bool = True) -> list[Point]:
    """Expand a sweep spec (a dict as ``load_sweep`` returns) into its points.

    Everything is checked before anything runs: the spec's own keys and types, and (with
    ``validate``) every point's resolved scenario, by the same validation as ``ecnlab
    check``. A mistake raises ``ScenarioError`` with one line naming the file, the field
    path in the sweep file and what is wrong."""
    if not isinstance(spec, dict):
        raise ScenarioError(f"sweep: expected a table, found {_type_name(spec)}")
    for k in spec:
        if k not in _SPEC_KEYS:
            near = difflib.get_close_matches(str(k), _SPEC_KEYS, n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            raise _spec_error(spec, "", f"unknown key `{k}`{hint}, expected one of {', '.join(_SPEC_KEYS)}")
    for k in ("name", "description"):
        if k in spec and not isinstance(spec[k], str):
            raise _spec_error(spec, k, f"expected a string, found {_type_name(spec[k])}")
    if "scenario" not in spec:
        raise _spec_error(spec, "", "missing key `scenario` (a built-in name or a scenario file)")
    scenario = spec["scenario"]
    if not isinstance(scenario, (str, os.PathLike, dict)):
        raise _spec_error(spec, "scenario", f"expected a built-in name or a file, found {_type_name(scenario)}")
    seeds = spec.get("seeds")
    if seeds is None:
        seed_list: list[int | None] = [None]
    elif isinstance(seeds, bool) or not isinstance(seeds, (int, list)):
        raise _spec_error(spec, "seeds", f"expected a list of seeds or a count, found {_type_name(seeds)}")
    elif isinstance(seeds, int):
        if seeds < 1:
            raise _spec_error(spec, "seeds", f"a count must be >= 1, found {seeds}")
        if seeds > MAX_POINTS:
            raise _spec_error(spec, "seeds", f"{seeds} seeds, more than a sweep's {MAX_POINTS:,} points")
        seed_list = list(range(1, seeds + 1))
    else:
        if not seeds:
            raise _spec_error(spec, "seeds", "an empty list: no runs")
        for i, s in enumerate(seeds):
            if isinstance(s, bool) or not isinstance(s, int):
                raise _spec_error(spec, f"seeds[{i}]", f"expected an integer, found {_type_name(s)}")
            if not 0 <= s < 2**64:
                raise _spec_error(spec, f"seeds[{i}]", f"{s} is not in 0..2^64")
        seed_list = list(seeds)
        first = {}
        for i, sd in enumerate(seeds):  # a seed listed twice would run once and count twice
            if sd in first:
                raise _spec_error(spec, f"seeds[{i}]", f"{sd} is listed twice (also seeds[{first[sd]}]): a seed runs once")
            first[sd] = i
    try:
        timeout = time_limit_s(spec["timeout"]) if spec.get("timeout") is not None else None
    except ValueError as e:
        raise _spec_error(spec, "timeout", str(e)) from None
    retries = spec.get("retries")
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
        raise _spec_error(spec, "retries", f"expected an integer >= 0, found {retries!r}")
    fixed = _overrides_of(spec, spec.get("set"), "set")
    grid = spec.get("grid", {})
    if grid is None:
        grid = {}
    if not isinstance(grid, dict):
        raise _spec_error(spec, "grid", f"expected a table of key = [values], found {_type_name(grid)}")
    # Each axis: (column name, [(label, [(field path, "key=value")])]).
    axes: list[tuple[str, list[tuple[Any, list[tuple[str, str]]]]]] = []
    for k, vals in grid.items():
        if not isinstance(vals, list):
            raise _spec_error(spec, _field("grid", k), f"expected a list of values, found {_type_name(vals)}")
        if not vals:
            raise _spec_error(spec, _field("grid", k), "an empty list: the grid has no points")
        axis = []
        for i, v in enumerate(vals):
            try:
                axis.append((v, [(f"{_field('grid', k)}[{i}]", override(k, v))]))
            except ScenarioError as e:
                raise _spec_error(spec, f"{_field('grid', k)}[{i}]", str(e)) from None
        _no_repeats(spec, axis, lambda i: f"{_field('grid', k)}[{i}]")
        axes.append((k, axis))
    zipped = spec.get("zip")
    if zipped is not None:
        axes.append((_ZIP, _zip_axis(spec, zipped, grid)))
    cases = spec.get("cases", {})
    if cases is None:
        cases = {}
    if not isinstance(cases, dict):
        raise _spec_error(spec, "cases", f"expected tables of named override sets, found {_type_name(cases)}")
    for ax, named in cases.items():
        if not isinstance(named, dict):
            raise _spec_error(spec, _field("cases", ax),
                              f"expected a table of name = {{ key = value, ... }}, found {_type_name(named)}")
        if not named:
            raise _spec_error(spec, _field("cases", ax), "an empty table: the axis has no cases")
        if ax in grid:
            raise _spec_error(spec, _field("cases", ax), "the axis name is also a grid key")
        axis = [(name, _overrides_of(spec, ov, _field("cases", ax, name))) for name, ov in named.items()]
        _no_repeats(spec, axis, lambda i: _field("cases", ax, axis[i][0]))
        axes.append((ax, axis))
    _one_axis_per_key(spec, axes)
    fixed_ovs = [o for _, o in fixed]
    points = []
    n_points = math.prod(len(vals) for _, vals in axes) * len(seed_list)
    if n_points > MAX_POINTS:
        sizes = " x ".join([str(len(vals)) for _, vals in axes] + [f"{len(seed_list)} seeds"])
        raise _spec_error(spec, "grid", f"{sizes} = {n_points:,} points, more than a sweep's {MAX_POINTS:,}")
    combos = list(itertools.product(*[vals for _, vals in axes]))
    if validate:
        _validate_combos(spec, scenario, fixed, axes, combos)
    for combo in combos:
        params: dict[str, Any] = {}
        for (name, _), (v, _) in zip(axes, combo):
            params.update(v if name == _ZIP else {name: v})
        ovs = fixed_ovs + [o for _, ovs_ in combo for _, o in ovs_]
        for s in seed_list:
            points.append(Point(scenario, ovs, s, dict(params), timeout=timeout, retries=retries))
    return points


_ZIP = "\0zip"  # the axis of [zip]; its values are {key: value} dicts, one column per key


def _zip_axis(spec: dict[str, Any], zipped: Any, grid: dict[str, Any]) -> list[tuple[dict, list[tuple[str, str]]]]:
    """``[zip]``: keys whose equal-length lists move together, one axis whose i-th point sets
    every key to its i-th value ("TCN at 20/40/80 us, per-queue at 30/60/120 KB" with
    ``marking.scheme`` in ``[grid]``)."""
    if not isinstance(zipped, dict) or not zipped:
        raise _spec_error(spec, "zip", f"expected a table of key = [values] of one length, found {_type_name(zipped)}")
    n = None
    for k, vals in zipped.items():
        if not isinstance(vals, list) or not vals:
            raise _spec_error(spec, _field("zip", k), f"expected a non-empty list of values, found {_type_name(vals)}")
        if k in grid:
            raise _spec_error(spec, _field("zip", k), "the key is also a grid key")
        if n is not None and len(vals) != n:
            first = next(iter(zipped))
            raise _spec_error(spec, _field("zip", k),
                              f"{len(vals)} values, but {_field('zip', first)} has {n}: zipped lists move together")
        n = len(vals)
    axis = []
    for i in range(n):
        ovs = []
        for k, vals in zipped.items():
            try:
                ovs.append((f"{_field('zip', k)}[{i}]", override(k, vals[i])))
            except ScenarioError as e:
                raise _spec_error(spec, f"{_field('zip', k)}[{i}]", str(e)) from None
        axis.append(({k: vals[i] for k, vals in zipped.items()}, ovs))
    _no_repeats(spec, axis, lambda i: f"zip (point {i}: {', '.join(f'{_field(k)}[{i}]' for k in zipped)})")
    return axis


def _no_repeats(spec: dict[str, Any], axis: list[tuple[Any, list[tuple[str, str]]]], where) -> None:
    """Refuse an axis value given twice (the same overrides): it would run once and count
    as two points, two seeds in ``summary.csv``. ``where(i)`` names the i-th value."""
    first: dict[tuple[str, ...], int] = {}
    for i, (_, entries) in enumerate(axis):
        ovs = tuple(sorted(_normal(o) for _, o in entries))
        if ovs in first:
            raise _spec_error(spec, "", f"{where(i)}: the same as {where(first[ovs])}: each value runs once")
        first[ovs] = i


def _normal(assignment: str) -> str:
    k, v = assignment.split("=", 1)
    return f"{_key(assignment)}={v.strip()}"


def _key(assignment: str) -> str:
    """The key an override sets, as ``--set`` reads it."""
    return assignment.split("=", 1)[0].strip()


def _one_axis_per_key(spec: dict[str, Any], axes: list[tuple[str, list[tuple[Any, list[tuple[str, str]]]]]]) -> None:
    """Refuse a key (or a table and a key inside it) set by two axes: the later override
    would run while ``results.csv`` labels the row with the earlier axis's value."""
    owner: list[tuple[str, str, int]] = []  # (key, field path, axis index)
    for n, (_, axis) in enumerate(axes):
        for _, entries in axis:
            for where, o in entries:
                k = _key(o)
                for k0, where0, n0 in owner:
                    if n0 != n and (k == k0 or k.startswith(k0 + ".") or k0.startswith(k + ".")):
                        also = "it" if k == k0 else k0
                        raise _spec_error(spec, where, f"sets {k}, and {where0} also sets {also}: one axis per key, "
                                                       f"or a row's label would not say what ran")
                if not any(k == k0 and n0 == n for k0, _, n0 in owner):
                    owner.append((k, where, n))


def _validate_combos(spec: dict[str, Any], scenario: Any, fixed: list[tuple[str, str]],
                     axes: list[tuple[str, list[tuple[Any, list[tuple[str, str]]]]]], combos: list) -> None:
    """Resolve and validate every distinct point before anything runs; name the sweep-file
    field that makes a point invalid (or the point, when only a combination is)."""
    from ..api import resolve, validate

    try:
        base = resolve(scenario, [])
    except ScenarioError as e:
        raise _spec_error(spec, "scenario", str(e)) from None
    for where, o in fixed:
        try:
            base = resolve(base, [o])
        except ScenarioError as e:
            raise _spec_error(spec, where, str(e)) from None
    alone: dict[str, str | None] = {}  # field path -> error with base + set + that field alone

    def error_of(doc: dict[str, Any], ovs: list[str]) -> str | None:
        try:
            validate(doc, ovs)
            return None
        except ScenarioError as e:
            return str(e)

    def blame_base(err: str) -> None:
        """An error of the scenario with ``set`` applied: name the ``set`` entry that
        causes it on its own, else ``set``, else the scenario."""
        raw = resolve(scenario, [])
        if fixed and error_of(raw, []) is None:
            for where, o in fixed:
                e = error_of(raw, [o])
                if e is not None:
                    raise _spec_error(spec, where, e)
            raise _spec_error(spec, "set", err)
        raise _spec_error(spec, "scenario", err)

    base_err = error_of(base, [])
    if base_err is not None and not axes:
        blame_base(base_err)
    def label(combo) -> str:
        params: dict[str, Any] = {}
        for (name, _), (value, _) in zip(axes, combo):
            params.update(value if name == _ZIP else {name: value})
        return "point " + json.dumps(params, default=str)

    seen: dict[str, Any] = {}  # the canonical document -> the combination that gives it
    for combo in combos:
        ovs = [o for _, ovs_ in combo for _, o in ovs_]
        try:
            doc = resolve(base, ovs)
        except ScenarioError:
            doc = None
        if doc is not None:
            h = _canonical(doc)
            if h in seen:  # one run, two labels: it would count twice in summary.csv
                raise _spec_error(spec, label(combo), f"runs the very scenario of {label(seen[h])}: each point "
                                                      f"must differ")
            seen[h] = combo
        err = error_of(base, ovs)
        if err is None:
            continue
        if err == base_err:
            blame_base(err)
        for _, entries in combo:  # which field is wrong on its own?
            for where, o in entries:
                if where not in alone:
                    alone[where] = error_of(base, [o])
                if alone[where] is not None and alone[where] != base_err:
                    raise _spec_error(spec, where, alone[where])
        raise _spec_error(spec, label(combo), err)


