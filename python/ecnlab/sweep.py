"""Sweeps: run a grid of (scenario, overrides, seed) points, locally in parallel processes
or on a Dask cluster, with results stored by a key of their full parameter set.

>>> import ecnlab
>>> df = ecnlab.sweep("my-sweep.toml", out="out/sweep")                # doctest: +SKIP
>>> pts = [ecnlab.Point("tcn-perport", [f"flows.1.count={n}"], seed=1, params={"n": n})
...        for n in (2, 4, 8)]
>>> df = ecnlab.sweep(pts, out="out/perport", jobs=2)                  # doctest: +SKIP

The store
---------
Every point is resolved first (built-in or file scenario + overrides = the exact document
that will run) and gets a key: the first 16 hex digits of the SHA-256 of the canonical
JSON of ``{"scenario": <resolved document>, "seed": <seed>}``. Its files (``summary.json``,
``flows.csv``, ``timeseries.csv``, ``probes.csv``, ``scenario.json``, plus ``point.json``
with the sweep parameters and the attempt that produced it) are written to a temporary
directory and renamed to ``OUT/runs/<key>/`` in one step, so a run directory either is
complete or does not exist. A rerun of the same sweep (or of another sweep sharing points)
runs only the keys that are missing: an interrupted sweep resumes and nothing finished is
lost. ``OUT/results.csv`` has one row per point; ``OUT/summary.csv`` one per parameter
combination, each metric's mean and 95 % interval over the seeds (``ecnlab.report.stats``).

Faults
------
Locally, every run gets a fresh interpreter (``_worker_main``; not a fork, so the caller's
``__main__`` is never re-imported), so the driver knows exactly which run a dead process
was computing. A run whose process
dies (a crash, SIGKILL, the OOM killer) is retried in a new process up to ``retries``
times (default 2); one that raises an error, or exceeds its time limit (``timeout``, then
it is killed), is not retried: the simulation is deterministic and would do the same
again. Either way it leaves ``OUT/failed/<key>.json`` (parameters, attempts, a one-line
error), the other runs go on, and the next sweep tries it again. Run processes die with
the driver (``PR_SET_PDEATHSIG``, even when it is killed with SIGKILL). On Dask, the scheduler reschedules a run whose worker died on another worker
(up to its ``distributed.scheduler.allowed-failures``, set to ``retries`` for
``cluster="local"``); with a time limit, each run computes in a child process of its
worker that is killed when the limit passes.

SWEEP.toml
----------
::

    name = "perport"                    # optional
    scenario = "tcn-perport"            # built-in name, or a TOML path (relative to this file)
    seeds = [1, 2, 3]                   # a list, or N for seeds 1..N (default: the scenario's)
    set = { "metrics.warmup" = "0.2s" } # overrides applied to every point (or a list of "k=v")
    timeout = "10min"                   # optional: per-run wall-clock limit (or seconds)
    retries = 2                         # optional: new tries for a run whose process died

    [grid]                              # every combination of these values
    "marking.scheme" = ["per_port", "per_queue", "tcn"]
    "flows.1.count" = [2, 4, 8, 16]

    [cases.variant]                     # optional: a named axis whose values are override sets
    tail = { "marking.scheme" = "per_queue", "marking.threshold.k" = "250KB" }
    avg  = { "marking.scheme" = "per_queue", "marking.threshold.k" = "80KB" }

The points are the cartesian product of the ``[grid]`` keys, the ``[cases.*]`` axes and
the seeds. ``results.csv`` gets one column per grid key and case axis. ``points_from_spec``
checks the whole file before anything runs (its keys, with a did-you-mean; types; empty
lists; and every point's scenario, as ``ecnlab check`` does), and names the file and the
field in one line: ``perport.toml: grid."marking.scheme"[1]: marking.scheme: unknown
variant `tcnn`, ...``.
"""

from __future__ import annotations

import csv
import difflib
import functools
import hashlib
import itertools
import json
import math
import os
import pickle
import shutil
import signal
import sys
import time
import tomllib
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .api import build_info, engine_id
from .scenario import ScenarioError, read_text_file

__all__ = ["Point", "SweepResult", "sweep", "load_sweep", "points_from_spec", "point_key", "summary_row"]


# --------------------------------------------------------------------------------------
# Points and keys


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


@dataclass
class _Resolved:
    point: Point
    key: str
    doc: dict[str, Any] | None  # None when the point could not even be resolved
    seed: int | None
    error: str | None = None


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def point_key(doc: dict[str, Any], seed: int) -> str:
    """The store key of a run: SHA-256 (16 hex digits) of the canonical JSON of the
    resolved scenario document, the seed and the simulator build ([`engine_id`]). Files the
    scenario reads (a CDF, a trace) enter by content, not by path: a store moved to another
    directory or machine is reused, and editing such a file in place is a new run. The
    document's own ``seed`` is the one that runs (as its ``scenario.json`` records it), so
    the key of a stored run is the key of its ``scenario.json``."""
    ident = {"scenario": _content_addressed(doc | {"seed": int(seed)}), "seed": int(seed), "engine": engine_id()}
    return hashlib.sha256(_canonical(ident).encode()).hexdigest()[:16]


def _content_addressed(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of `doc` in which each traffic entry's `cdf` or `file` that names an existing
    file is replaced by the SHA-256 of the file's bytes (built-in CDF names stay names)."""
    traffic = doc.get("traffic")
    if not isinstance(traffic, list):
        return doc
    entries = []
    for t in traffic:
        if isinstance(t, dict):
            t = dict(t)
            for k in ("cdf", "file"):
                v = t.get(k)
                if isinstance(v, str) and os.path.isfile(v):
                    st = os.stat(v)
                    t[k] = {"sha256": _file_sha256(os.path.realpath(v), st.st_mtime_ns, st.st_size)}
        entries.append(t)
    return {**doc, "traffic": entries}


@functools.lru_cache(maxsize=256)
def _file_sha256(path: str, _mtime_ns: int, _size: int) -> str:
    """SHA-256 of a file's bytes (cached per path, modification time and size)."""
    return _sha256_of(path)


def _sha256_of(path: str) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _resolve(p: Point) -> _Resolved:
    from .api import resolve

    try:
        doc = resolve(p.scenario, list(p.overrides))
        seed = int(p.seed) if p.seed is not None else int(doc.get("seed", 1))
        if not 0 <= seed < 2**64:
            raise ScenarioError(f"seed: {seed} is not in 0..2^64")
        return _Resolved(p, point_key(doc, seed), doc, seed)
    except (ScenarioError, TypeError, ValueError) as e:
        ident = {"scenario": p.scenario if not isinstance(p.scenario, dict) else p.scenario,
                 "overrides": list(p.overrides), "seed": p.seed}
        key = "bad-" + hashlib.sha256(_canonical(_jsonable(ident)).encode()).hexdigest()[:12]
        return _Resolved(p, key, None, p.seed, _one_line(e))


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, os.PathLike):
        return os.fspath(x)
    return x


def _one_line(e: BaseException) -> str:
    msg = str(e).strip()
    first = msg.splitlines()[0] if msg else ""
    name = type(e).__name__
    if isinstance(e, ScenarioError):
        return first or name
    return f"{name}: {first}" if first else name


# --------------------------------------------------------------------------------------
# SWEEP.toml


_SPEC_KEYS = ("name", "description", "scenario", "seeds", "set", "grid", "zip", "cases", "timeout", "retries")

MAX_POINTS = 100_000
"""The most points a sweep may have (axes x seeds): a grid beyond it is refused before it
is expanded (a typo such as `seeds = 1000000000` must not exhaust memory)."""
DEFAULT_RETRIES = 2  # a run whose worker process dies is tried at most 1 + 2 times


class _SweepSpec(dict):
    """A spec read from a file: a dict that remembers the file, for error messages."""

    path: str | None = None


def _where(spec: dict[str, Any]) -> str:
    return getattr(spec, "path", None) or "sweep"


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
    return ScenarioError(f"{_where(spec)}: {field_path}: {what}" if field_path else f"{_where(spec)}: {what}")


def _type_name(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)


def _toml_literal(v: Any) -> str:
    """A value as the TOML literal ``--set`` parses back to the same value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            raise ScenarioError(f"{v}: not a finite number")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_literal(x)}" for k, x in v.items()) + "}"
    raise ScenarioError(f"{v!r}: cannot be written as a scenario value")


def override(key: str, value: Any) -> str:
    """``key=value`` with the value written as a TOML literal."""
    return f"{key}={_toml_literal(value)}"


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


def _duration_s(spec: dict[str, Any], name: str, v: Any) -> float:
    """A time limit in seconds: a number of seconds, or a time with its unit in the grammar of
    scenario files ("90s", "10min", "2h"; ``ecnlab._core.parse_unit``)."""
    try:
        secs = time_limit_s(v)
    except ValueError as e:
        raise _spec_error(spec, name, str(e)) from None
    return secs


def time_limit_s(v: Any) -> float:
    """A positive time limit in seconds from a number of seconds or a string with a unit;
    ValueError (one line) otherwise."""
    from . import _core

    if isinstance(v, (int, float)) and not isinstance(v, bool):
        secs = float(v)
    elif isinstance(v, str):
        secs = _core.parse_unit("time", v) / 1e9
    else:
        raise ValueError(f"expected seconds or a string such as \"90s\", found {_type_name(v)}")
    if not math.isfinite(secs) or secs <= 0:
        raise ValueError(f"{v!r} must be a positive time")
    return secs


def load_sweep(path: str | os.PathLike) -> dict[str, Any]:
    """Read a SWEEP.toml file into a spec dict (see the module docs). Errors in the
    points it describes are found by ``points_from_spec``, and name this file."""
    p = Path(path)
    try:
        data = tomllib.loads(read_text_file(p, "sweep"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: {e}") from None
    spec = _SweepSpec(data)
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
    timeout = _duration_s(spec, "timeout", spec["timeout"]) if spec.get("timeout") is not None else None
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
        axes.append((ax, [(name, _overrides_of(spec, ov, _field("cases", ax, name))) for name, ov in named.items()]))
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
    return axis


def _validate_combos(spec: dict[str, Any], scenario: Any, fixed: list[tuple[str, str]],
                     axes: list[tuple[str, list[tuple[Any, list[tuple[str, str]]]]]], combos: list) -> None:
    """Resolve and validate every distinct point before anything runs; name the sweep-file
    field that makes a point invalid (or the point, when only a combination is)."""
    from .api import resolve, validate

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
    seen: set[str] = set()
    for combo in combos:
        ovs = [o for _, ovs_ in combo for _, o in ovs_]
        try:
            doc = resolve(base, ovs)
        except ScenarioError:
            doc = None
        if doc is not None:
            h = _canonical(doc)
            if h in seen:
                continue
            seen.add(h)
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
        params: dict[str, Any] = {}
        for (name, _), (label, _) in zip(axes, combo):
            params.update(label if name == _ZIP else {name: label})
        raise _spec_error(spec, "point " + json.dumps(_jsonable(params), default=str), err)


# --------------------------------------------------------------------------------------
# Summary -> one flat row


_FCT = ("all", "small", "medium", "large")
MAX_QUEUE_COLUMNS = 24


def summary_row(s: dict[str, Any]) -> dict[str, Any]:
    """Flatten a ``summary.json`` into the metrics columns of ``results.csv``."""
    row: dict[str, Any] = {
        "sim_time_s": s.get("sim_time_s"),
        "wall_time_s": s.get("wall_time_s"),
        "events": s.get("events"),
    }
    fct = s.get("fct", {})
    for c in _FCT:
        f = fct.get(c, {}) or {}
        row[f"fct_{c}_count"] = f.get("count")
        for m in ("avg_us", "p50_us", "p99_us"):
            row[f"fct_{c}_{m}"] = f.get(m)
    for group, label in (("queue", "queue"), ("class", "class")):  # fct_by_class, small topologies or not
        for k, buckets in sorted((s.get("fct_by_class") or {}).get(group, {}).items(), key=lambda kv: int(kv[0])):
            for c in _FCT:
                f = buckets.get(c, {}) or {}
                row[f"fct_{c}_count[{label}={k}]"] = f.get("count")
                for m in ("avg_us", "p50_us", "p99_us"):
                    row[f"fct_{c}_{m}[{label}={k}]"] = f.get(m)
    fl = s.get("flows", {})
    row["flows_completed"] = fl.get("completed")
    row["flows_unfinished"] = fl.get("unfinished")
    row["timeouts"] = fl.get("timeouts")
    row["marks"] = s.get("marks")
    row["drops"] = s.get("drops")
    qs = s.get("queues", []) or []
    row["max_qlen_bytes"] = max((q.get("max_qlen_bytes", 0) for q in qs), default=None)
    pr = s.get("probe_rtt", {}) or {}
    row["probe_rtt_count"] = pr.get("count")
    for m in ("avg_us", "p50_us", "p99_us"):
        row[f"probe_rtt_{m}"] = pr.get(m)
    lf = s.get("long_flows") or {}
    if lf.get("goodput_bps"):
        row["long_jain_index"] = lf.get("jain_index")
        row["long_goodput_bps_total"] = sum(lf["goodput_bps"])
    active = [q for q in qs if (q.get("goodput_bps") or 0) > 0 or q.get("drops")]
    if 0 < len(active) <= MAX_QUEUE_COLUMNS:  # per-queue columns for small topologies
        for q in active:
            tag = f"{q['port']}:{q['queue']}"
            row[f"goodput_bps[{tag}]"] = q.get("goodput_bps")
            row[f"avg_qlen_bytes[{tag}]"] = q.get("avg_qlen_bytes")
            row[f"max_qlen_bytes[{tag}]"] = q.get("max_qlen_bytes")
            row[f"marks[{tag}]"] = q.get("marks")
            row[f"drops[{tag}]"] = q.get("drops")
    ports = s.get("ports") or []
    if 0 < len(ports) <= MAX_QUEUE_COLUMNS:
        for p in ports:
            row[f"utilization[{p['port']}]"] = p.get("utilization")
    return row


# --------------------------------------------------------------------------------------
# Execution


def _execute(doc: dict[str, Any], seed: int, tmp_dir: str | None = None, meta: dict[str, Any] | None = None):
    """Run one point (in a worker process or on a Dask worker). With ``tmp_dir`` the worker
    writes the run's files there (local processes share the disk) and returns (True, None);
    without, it returns (True, RunResult) for the driver to write. A failure returns
    (False, one-line error)."""
    from . import api

    try:
        res = api.run(doc, seed=seed)
    except BaseException as e:  # noqa: BLE001 - a Rust panic arrives as PanicException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return False, _one_line(e)
    if tmp_dir is None:
        return True, res
    try:
        _write_run(Path(tmp_dir), res, meta or {})
    except OSError as e:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        return False, f"cannot write results: {_one_line(e)}"
    return True, None


def _write_run(tmp: Path, res, meta: dict[str, Any]) -> None:
    res.write(tmp)
    meta = meta | {"finished_at": time.time(), "pid": os.getpid()}
    (tmp / "point.json").write_text(json.dumps(meta, indent=2) + "\n")


def _death(code: int | None) -> str:
    """Why a worker process ended without a result, from its exit code."""
    if code is None:
        return "worker process vanished"
    if code < 0:
        try:
            return f"worker process killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"worker process killed by signal {-code}"
    return f"worker process exited with status {code}"


def _die_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when its parent, the driver, goes (even by SIGKILL), so
    a killed driver leaves no run computing for nobody and no temporary directory written
    after it. If the driver died before this call, exit at once."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def _worker_main() -> None:
    """A local run process (``python -c 'from ecnlab.sweep import _worker_main; ...'``):
    exactly one run, pickled (driver pid, doc, seed, tmp_dir, meta) on stdin, the pickled
    outcome on stdout. A fresh interpreter, not a fork: it never imports the driver's
    ``__main__`` (a plain script without a ``__main__`` guard can call ``ecnlab.sweep``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    parent, doc, seed, tmp_dir, meta = pickle.load(sys.stdin.buffer)
    _die_with_parent(parent)
    try:
        outcome = _execute(doc, seed, tmp_dir, meta)
    except BaseException as e:  # noqa: BLE001
        outcome = (False, _one_line(e))
    sys.stdout.buffer.write(pickle.dumps(outcome))
    sys.stdout.buffer.flush()


def _sandbox_main() -> None:
    """``python -c 'from ecnlab.sweep import _sandbox_main; _sandbox_main()'``: one run,
    pickled (doc, seed) on stdin, pickled (ok, RunResult | error) on stdout."""
    doc, seed = pickle.load(sys.stdin.buffer)
    outcome = _execute(doc, seed)
    sys.stdout.buffer.write(pickle.dumps(outcome))
    sys.stdout.buffer.flush()


def _execute_remote(doc: dict[str, Any], seed: int, timeout: float | None, engine: str | None = None):
    """A Dask task. Without a time limit the run happens in the worker process itself (if
    it dies, the scheduler reschedules the task on another worker, up to its
    ``allowed-failures``). With one, the run happens in a child process that is killed
    when the limit passes; ok None means that child died (the driver retries it).
    `engine` is the driver's build ([`engine_id`]): a worker with another build refuses the
    run, whose key promises results of the driver's build."""
    if engine is not None and engine != engine_id():
        return False, (f"dask: this worker has another ecnlab build (engine {engine_id()}, the driver's is "
                       f"{engine}); install the same ecnlab on every worker")
    if timeout is None:
        return _execute(doc, seed)
    import subprocess

    cmd = [sys.executable, "-c", "from ecnlab.sweep import _sandbox_main; _sandbox_main()"]
    try:
        p = subprocess.run(cmd, input=pickle.dumps((doc, seed)), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, _timeout_error(timeout)
    if p.returncode != 0 or not p.stdout:
        return None, _death(p.returncode if p.returncode != 0 else None)
    return pickle.loads(p.stdout)


def _timeout_error(timeout: float) -> str:
    return f"exceeded the time limit of {timeout:g} s (killed)"


class _Progress:
    """Plain-text progress on stderr: runs done / total, failed, elapsed, ETA."""

    def __init__(self, total: int, cached: int, label: str, enabled: bool, stream=None):
        self.total, self.cached, self.label, self.enabled = total, cached, label, enabled
        self.stream = stream or sys.stderr
        self.done = self.failed = 0
        self.t0 = time.monotonic()
        self.last = 0.0
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        if enabled:
            todo = total - cached
            self._line(f"{self.label}{total} runs: {cached} already done, {todo} to run", final=True)

    def _line(self, text: str, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        if self.enabled:
            self._line(f"{self.label}{text}", final=True)

    def update(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if not self.enabled:
            return
        now = time.monotonic()
        finished = self.done + self.failed
        todo = self.total - self.cached
        if not self.tty and now - self.last < 2.0 and finished < todo:
            return
        self.last = now
        el = now - self.t0
        eta = el / finished * (todo - finished) if finished else float("nan")
        width = 24
        frac = (self.cached + finished) / self.total if self.total else 1.0
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        self._line(f"{self.label}[{bar}] {self.cached + finished}/{self.total} done, {self.failed} failed, "
                   f"elapsed {_hms(el)}, ETA {_hms(eta)}")

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _hms(s: float) -> str:
    if not math.isfinite(s):
        return "--:--"
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


@dataclass
class SweepResult:
    """What ``run_points`` returns: one row per point (params, status, error, metrics),
    the output directory, and counts."""

    rows: list[dict[str, Any]]
    out: Path
    ran: int
    cached: int
    failed: int

    def frame(self):
        """``rows`` as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows)


def _params_json(r: _Resolved, attempt: int = 1) -> dict[str, Any]:
    p = r.point
    return _jsonable({
        "key": r.key,
        "params": p.params,
        "scenario": p.scenario if isinstance(p.scenario, (str, os.PathLike)) else (p.scenario.get("name") or "<dict>"),
        "overrides": list(p.overrides),
        "seed": r.seed,
        "attempt": attempt,
        "ecnlab": build_info(),
    })


def _tmp_dir(runs: Path, key: str) -> Path:
    """Where a run is written before it is renamed into place; named after the driver, so
    that a driver clears only what dead drivers left (two sweeps may share a store)."""
    return runs / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _clear_stale(runs: Path) -> None:
    """Remove temporary run directories whose driver is gone (killed mid-write)."""
    for stale in runs.glob(".tmp-*"):
        parts = stale.name.split("-")
        try:
            pid = int(parts[2])
            os.kill(pid, 0)
            if pid != os.getpid():
                continue  # a live driver is writing it
        except (IndexError, ValueError, ProcessLookupError):
            pass  # malformed, or its driver is dead
        except PermissionError:
            continue  # alive, someone else's
        shutil.rmtree(stale, ignore_errors=True)


def _commit(runs: Path, r: _Resolved, tmp: Path) -> None:
    """Move a complete run directory into place: one rename, so runs/<key>/ either is
    complete or does not exist."""
    final = runs / r.key
    try:
        os.rename(tmp, final)
    except OSError:
        if (final / "summary.json").exists():  # someone else finished it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)


def _store(runs: Path, r: _Resolved, res, attempt: int = 1) -> None:
    """Write a RunResult returned by a remote worker: temp dir, then rename."""
    tmp = _tmp_dir(runs, r.key)
    try:
        _write_run(tmp, res, _params_json(r, attempt))
        _commit(runs, r, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _record_failure(failed_dir: Path, r: _Resolved, error: str, attempts: int = 1) -> None:
    failed_dir.mkdir(parents=True, exist_ok=True)
    rec = _params_json(r, attempts) | {"error": error, "failed_at": time.time()}
    tmp = failed_dir / f".{r.key}.{uuid.uuid4().hex[:8]}"
    tmp.write_text(json.dumps(rec, indent=2) + "\n")
    os.replace(tmp, failed_dir / f"{r.key}.json")


def _is_done(runs: Path, key: str) -> bool:
    return (runs / key / "summary.json").is_file()


def run_points(
    points: Iterable[Point],
    out: str | os.PathLike,
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = True,
    label: str = "",
    retry_failed: bool = True,
    timeout: float | None = None,
    retries: int | None = None,
) -> SweepResult:
    """Run the points that are not stored yet under ``out/runs`` and return one row per
    point. ``jobs``: local worker processes (default: CPU count). ``cluster``: a Dask
    scheduler address (``tcp://host:port``), ``"local"`` (a LocalCluster of ``jobs``
    workers), or a ``dask.distributed.Client``/cluster object; None runs locally.

    ``timeout``: a per-run wall-clock limit in seconds (a point's own ``timeout`` wins); a
    run that exceeds it is killed and recorded as failed. ``retries``: how many more times
    a run whose worker process died is tried (default 2; a point's own wins); a run that
    raises an error or times out is not retried within this call (the simulation is
    deterministic: it would do the same again)."""
    out = Path(out)
    runs = out / "runs"
    failed_dir = out / "failed"
    resolved = [_resolve(p) for p in points]
    runs.mkdir(parents=True, exist_ok=True)
    _clear_stale(runs)
    # Unique work: several points may share a key (same resolved scenario and seed).
    todo: dict[str, _Resolved] = {}
    status: dict[str, tuple[str, str]] = {}
    for r in resolved:
        if r.error is not None:
            status[r.key] = ("failed", r.error)
            _record_failure(failed_dir, r, r.error)
        elif _is_done(runs, r.key):
            status[r.key] = ("ok", "")
        elif not retry_failed and (failed_dir / f"{r.key}.json").exists():
            status[r.key] = ("failed", json.loads((failed_dir / f"{r.key}.json").read_text())["error"])
        else:
            todo.setdefault(r.key, r)
    unique = len({r.key for r in resolved})
    prog = _Progress(unique, unique - len(todo) - sum(1 for k, v in status.items() if v[0] == "failed"),
                     label, progress)
    for k, v in status.items():
        if v[0] == "failed":
            prog.update(False)
    ran = 0

    def finish(r: _Resolved, ok: bool, payload, tmp: Path | None = None, attempt: int = 1) -> None:
        nonlocal ran
        if ok:
            if tmp is not None:
                _commit(runs, r, tmp)
            else:
                _store(runs, r, payload, attempt)
            (failed_dir / f"{r.key}.json").unlink(missing_ok=True)
            status[r.key] = ("ok", "")
            ran += 1
        else:
            _record_failure(failed_dir, r, payload, attempt)
            status[r.key] = ("failed", payload)
        prog.update(ok)

    limits = _Limits(timeout, DEFAULT_RETRIES if retries is None else retries)
    try:
        if todo:
            if cluster is not None:
                _run_dask(list(todo.values()), cluster, jobs, finish, limits, prog)
            else:
                _run_local(list(todo.values()), runs, jobs, finish, limits, prog)
    finally:
        prog.close()
        rows = _rows(resolved, status, runs)
        _write_results(out / "results.csv", rows)
        _write_summary(out, rows, resolved)
    n_failed = sum(1 for st, _ in status.values() if st == "failed")
    return SweepResult(rows, out, ran, unique - len(todo), n_failed)


@dataclass
class _Limits:
    timeout: float | None
    retries: int

    def of(self, r: _Resolved) -> tuple[float | None, int]:
        p = r.point
        t = p.timeout if p.timeout is not None else self.timeout
        n = p.retries if p.retries is not None else self.retries
        return (float(t) if t is not None else None), max(0, int(n))


@dataclass
class _Task:
    r: _Resolved
    attempt: int
    tmp: Path
    proc: Any
    conn: Any
    started: float
    timeout: float | None


def _run_local(todo: list[_Resolved], runs: Path, jobs: int | None, finish: Callable, limits: _Limits,
               prog: _Progress) -> None:
    """One fresh process per run (forked from a server that has ecnlab loaded): a run that
    crashes, is killed or times out is known exactly, and takes nothing else down."""
    import multiprocessing.connection as mpc
    import subprocess

    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    queue: deque[tuple[_Resolved, int]] = deque((r, 1) for r in todo)
    running: list[_Task] = []
    cmd = [sys.executable, "-c", "from ecnlab.sweep import _worker_main; _worker_main()"]

    def start(r: _Resolved, attempt: int) -> _Task:
        tmp = _tmp_dir(runs, r.key)
        # Its own session: Ctrl-C on the terminal reaches the driver only, which stops it.
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.stdin.write(pickle.dumps((os.getpid(), r.doc, r.seed, str(tmp), _params_json(r, attempt))))
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it died at once: its exit status says why
        return _Task(r, attempt, tmp, proc, proc.stdout, time.monotonic(), limits.of(r)[0])

    try:
        while queue or running:
            while queue and len(running) < jobs:
                running.append(start(*queue.popleft()))
            now = time.monotonic()
            left = [t.started + t.timeout - now for t in running if t.timeout is not None]
            ready = set(mpc.wait([t.conn for t in running], timeout=max(0.0, min(left)) if left else None))
            now = time.monotonic()
            for t in list(running):
                if t.conn in ready:
                    kind, payload = _outcome(t)
                elif t.timeout is not None and now - t.started >= t.timeout:
                    _stop(t)
                    kind, payload = "failed", _timeout_error(t.timeout)
                else:
                    continue
                running.remove(t)
                if kind == "ok":
                    finish(t.r, True, None, t.tmp, t.attempt)
                    continue
                shutil.rmtree(t.tmp, ignore_errors=True)
                if kind == "died":
                    retries = limits.of(t.r)[1]
                    if t.attempt <= retries:
                        prog.note(f"run {t.r.key}: {payload}; retrying ({t.attempt + 1} of {retries + 1} attempts)")
                        queue.appendleft((t.r, t.attempt + 1))
                        continue
                    payload = f"{payload} (on each of {t.attempt} attempts)" if t.attempt > 1 else payload
                finish(t.r, False, payload, None, t.attempt)
    except BaseException:
        for t in running:
            _stop(t)
            shutil.rmtree(t.tmp, ignore_errors=True)
        raise


def _outcome(t: _Task) -> tuple[str, Any]:
    """("ok", None), ("failed", error) or ("died", why) for a task whose output pipe became
    ready: the child writes its outcome once, at its end, so this reads to EOF."""
    try:
        data = t.conn.read()
    except OSError:
        data = b""
    t.conn.close()
    try:
        code = t.proc.wait(10)
    except Exception:  # noqa: BLE001 - it hangs after its result: no use to anyone
        t.proc.kill()
        code = t.proc.wait()
    if data:
        try:
            ok, payload = pickle.loads(data)
            return ("ok", None) if ok else ("failed", payload)
        except Exception:  # noqa: BLE001 - a truncated result: the process died writing it
            pass
    return "died", _death(code if code != 0 else None)


def _stop(t: _Task) -> None:
    """Kill a run's process at once (time limit, Ctrl-C, SIGTERM)."""
    try:
        t.proc.kill()
    except OSError:
        pass
    try:
        t.proc.wait(10)
    except Exception:  # noqa: BLE001
        pass
    try:
        t.conn.close()
    except OSError:
        pass


def _run_dask(todo: list[_Resolved], cluster: Any, jobs: int | None, finish: Callable, limits: _Limits,
              prog: _Progress) -> None:
    try:
        import dask
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ScenarioError("--cluster needs dask.distributed: pip install 'ecnlab[cluster]'") from None
    own = None
    if isinstance(cluster, Client):
        client = cluster
    elif isinstance(cluster, str):
        if cluster == "local":
            # A run whose worker dies is rescheduled by the scheduler, `retries` times.
            with dask.config.set({"distributed.scheduler.allowed-failures": limits.retries}):
                own = LocalCluster(n_workers=max(1, jobs or os.cpu_count() or 1), threads_per_worker=1,
                                   processes=True, dashboard_address=None)
            client = Client(own)
        else:
            try:
                client = Client(cluster, timeout="20s")
            except (OSError, TimeoutError) as e:
                raise ScenarioError(f"--cluster {cluster}: cannot connect: {_one_line(e)}") from None
    else:  # a cluster object (LocalCluster, SLURMCluster, ...)
        client = Client(cluster)
    try:
        futs: dict[Any, tuple[_Resolved, int]] = {}

        def submit(r: _Resolved, attempt: int):
            f = client.submit(_execute_remote, r.doc, r.seed, limits.of(r)[0], engine_id(),
                              key=f"ecnlab-run-{r.key}-{attempt}-{uuid.uuid4().hex[:6]}", pure=False)
            futs[f] = (r, attempt)
            return f

        ac = as_completed([submit(r, 1) for r in todo])
        try:
            for f in ac:
                r, attempt = futs.pop(f)
                try:
                    ok, payload = f.result()
                except Exception as e:  # noqa: BLE001 - a worker that died too often, a lost connection
                    name = type(e).__name__
                    ok = False
                    payload = (f"dask: the run's worker died on every attempt ({name})" if name == "KilledWorker"
                               else f"dask: {_one_line(e)}")
                f.release()
                if ok is None:  # the run's own process died (runs with a time limit)
                    retries = limits.of(r)[1]
                    if attempt <= retries:
                        prog.note(f"run {r.key}: {payload}; retrying ({attempt + 1} of {retries + 1} attempts)")
                        ac.add(submit(r, attempt + 1))
                        continue
                    ok, payload = False, f"{payload} (on each of {attempt} attempts)" if attempt > 1 else payload
                finish(r, ok, payload, None, attempt)
        except BaseException:
            client.cancel(list(futs))
            raise
    finally:
        if client is not cluster:
            client.close()
        if own is not None:
            own.close()


def _rows(resolved: list[_Resolved], status: dict[str, tuple[str, str]], runs: Path) -> list[dict[str, Any]]:
    rows = []
    for r in resolved:
        st, err = status.get(r.key, ("missing", ""))
        row: dict[str, Any] = dict(r.point.params)
        row["seed"] = r.seed
        row["key"] = r.key
        row["status"] = st
        row["error"] = err
        if st == "ok":
            try:
                s = json.loads((runs / r.key / "summary.json").read_text())
                row |= summary_row(s)
            except (OSError, ValueError) as e:
                row["status"], row["error"] = "failed", f"unreadable summary.json: {_one_line(e)}"
        rows.append(row)
    return rows


def _write_results(path: Path, rows: list[dict[str, Any]]) -> None:
    cols: list[str] = []
    seen = set()
    for r in rows:
        for k in r:
            if k not in seen:
                seen.add(k)
                cols.append(k)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    os.replace(tmp, path)


def _write_summary(out: Path, rows: list[dict[str, Any]], resolved: list[_Resolved]) -> None:
    """``summary.csv``: the rows of results.csv aggregated over seeds (ecnlab.report.stats)."""
    from .report.stats import write_summary_csv

    write_summary_csv(out, rows, list(dict.fromkeys(k for r in resolved for k in r.point.params)))


def sweep(
    spec: str | os.PathLike | dict[str, Any] | Sequence[Point],
    out: str | os.PathLike,
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = True,
    retry_failed: bool = True,
    timeout: float | None = None,
    retries: int | None = None,
):
    """Run a sweep and return its ``results.csv`` as a pandas DataFrame (one row per
    point: the grid parameters, ``seed``, ``key``, ``status`` (ok/failed), ``error`` and
    the summary metrics).

    ``spec``: a SWEEP.toml path, a spec dict of the same shape, or a list of ``Point``.
    ``out``: the result directory (``runs/<key>/``, ``failed/``, ``results.csv``); points
    already stored there are not run again. ``jobs``: local worker processes (default: all
    cores). ``cluster``: ``"tcp://host:port"`` of a Dask scheduler, ``"local"``, or a
    ``dask.distributed.Client``; the workers need ecnlab installed, and write nothing: the
    results come back to this process, which stores them. ``timeout``: seconds a run may
    take before it is killed and recorded as failed (a spec's ``timeout`` wins);
    ``retries``: how many more times a run whose worker died is tried (default 2).

    A spec (file or dict) is checked whole before anything runs; a mistake raises
    ``ScenarioError`` naming the file and field and leaves ``out`` untouched."""
    if isinstance(spec, (str, os.PathLike)):
        spec = load_sweep(spec)
    points = points_from_spec(spec) if isinstance(spec, dict) else list(spec)
    res = run_points(points, out, jobs=jobs, cluster=cluster, progress=progress, retry_failed=retry_failed,
                     timeout=timeout, retries=retries)
    return res.frame()


class _CallableModule(type(sys)):
    """``ecnlab.sweep`` is this module and ``ecnlab.sweep(...)`` calls ``sweep.sweep``."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
