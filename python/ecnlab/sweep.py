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
with the sweep parameters) are written to a temporary directory and renamed to
``OUT/runs/<key>/`` in one step, so a run directory either is complete or does not exist.
A rerun of the same sweep (or of another sweep sharing points) runs only the keys that
are missing: an interrupted sweep resumes and nothing finished is lost. A failed run
leaves ``OUT/failed/<key>.json`` (its parameters and a one-line error) and the others go
on; failed points are retried on the next run. ``OUT/results.csv`` has one row per point.

SWEEP.toml
----------
::

    name = "perport"                    # optional
    scenario = "tcn-perport"            # built-in name, or a TOML path (relative to this file)
    seeds = [1, 2, 3]                   # a list, or N for seeds 1..N (default: the scenario's)
    set = ["metrics.warmup=0.2s"]       # overrides applied to every point (or a table)

    [grid]                              # every combination of these values
    "marking.scheme" = ["per_port", "per_queue", "tcn"]
    "flows.1.count" = [2, 4, 8, 16]

    [cases.variant]                     # optional: a named axis whose values are override sets
    tail = { "marking.scheme" = "per_queue", "marking.threshold.k" = "250KB" }
    avg  = { "marking.scheme" = "per_queue", "marking.threshold.k" = "80KB" }

The points are the cartesian product of the ``[grid]`` keys, the ``[cases.*]`` axes and
the seeds. ``results.csv`` gets one column per grid key and case axis.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import math
import multiprocessing as mp
import os
import shutil
import sys
import time
import tomllib
import uuid
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .scenario import ScenarioError

__all__ = ["Point", "SweepResult", "sweep", "load_sweep", "points_from_spec", "point_key", "summary_row"]


# --------------------------------------------------------------------------------------
# Points and keys


@dataclass
class Point:
    """One run of a sweep: a scenario (built-in name, TOML path or dict), overrides
    (``"key=value"`` strings as ``--set``), a seed (None: the scenario's), and ``params``,
    the labels that become columns of ``results.csv`` (e.g. ``{"scheme": "tcn"}``)."""

    scenario: str | os.PathLike | dict[str, Any]
    overrides: Sequence[str] = ()
    seed: int | None = None
    params: dict[str, Any] = field(default_factory=dict)


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
    resolved scenario document and the seed."""
    return hashlib.sha256(_canonical({"scenario": doc, "seed": int(seed)}).encode()).hexdigest()[:16]


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


_SPEC_KEYS = {"name", "description", "scenario", "seeds", "set", "grid", "cases"}


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


def _overrides_of(obj: Any, where: str) -> list[str]:
    if obj is None:
        return []
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, list):
        if not all(isinstance(s, str) for s in obj):
            raise ScenarioError(f"{where}: expected a list of \"key=value\" strings or a table")
        return list(obj)
    if isinstance(obj, dict):
        return [override(k, v) for k, v in obj.items()]
    raise ScenarioError(f"{where}: expected a list of \"key=value\" strings or a table")


def load_sweep(path: str | os.PathLike) -> dict[str, Any]:
    """Read a SWEEP.toml file into a spec dict (see the module docs)."""
    p = Path(path)
    try:
        spec = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such sweep file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory, not a sweep file") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: {e}") from None
    spec.setdefault("name", p.stem)
    scen = spec.get("scenario")
    if isinstance(scen, str) and not Path(scen).is_absolute() and (p.parent / scen).is_file():
        spec["scenario"] = str(p.parent / scen)
    return spec


def points_from_spec(spec: dict[str, Any]) -> list[Point]:
    """Expand a sweep spec (a dict as ``load_sweep`` returns) into its points."""
    unknown = sorted(set(spec) - _SPEC_KEYS)
    if unknown:
        raise ScenarioError(f"sweep: unknown key `{unknown[0]}`, expected one of {', '.join(sorted(_SPEC_KEYS))}")
    if "scenario" not in spec:
        raise ScenarioError("sweep: missing key `scenario`")
    scenario = spec["scenario"]
    seeds = spec.get("seeds")
    if seeds is None:
        seed_list: list[int | None] = [None]
    elif isinstance(seeds, bool) or not isinstance(seeds, (int, list)):
        raise ScenarioError("sweep.seeds: expected a list of seeds or a count")
    elif isinstance(seeds, int):
        if seeds < 1:
            raise ScenarioError("sweep.seeds: a count must be >= 1")
        seed_list = list(range(1, seeds + 1))
    else:
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
            raise ScenarioError("sweep.seeds: expected a non-empty list of integers")
        seed_list = list(seeds)
    fixed = _overrides_of(spec.get("set"), "sweep.set")
    grid = spec.get("grid", {}) or {}
    if not isinstance(grid, dict):
        raise ScenarioError("sweep.grid: expected a table of key = [values]")
    axes: list[tuple[str, list[tuple[Any, list[str]]]]] = []
    for k, vals in grid.items():
        if not isinstance(vals, list) or not vals:
            raise ScenarioError(f"sweep.grid.{k}: expected a non-empty list of values")
        axes.append((k, [(v, [override(k, v)]) for v in vals]))
    cases = spec.get("cases", {}) or {}
    if not isinstance(cases, dict):
        raise ScenarioError("sweep.cases: expected tables of named override sets")
    for axis, named in cases.items():
        if not isinstance(named, dict) or not named:
            raise ScenarioError(f"sweep.cases.{axis}: expected a table of name = {{ key = value, ... }}")
        axes.append((axis, [(name, _overrides_of(ov, f"sweep.cases.{axis}.{name}")) for name, ov in named.items()]))
    points = []
    for combo in itertools.product(*[vals for _, vals in axes]):
        params = {name: v for (name, _), (v, _) in zip(axes, combo)}
        ovs = fixed + [o for _, os_ in combo for o in os_]
        for s in seed_list:
            points.append(Point(scenario, ovs, s, dict(params)))
    return points


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


def _params_json(r: _Resolved) -> dict[str, Any]:
    p = r.point
    return _jsonable({
        "key": r.key,
        "params": p.params,
        "scenario": p.scenario if isinstance(p.scenario, (str, os.PathLike)) else (p.scenario.get("name") or "<dict>"),
        "overrides": list(p.overrides),
        "seed": r.seed,
    })


def _tmp_dir(runs: Path, key: str) -> Path:
    return runs / f".tmp-{key}-{uuid.uuid4().hex[:8]}"


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


def _store(runs: Path, r: _Resolved, res) -> None:
    """Write a RunResult returned by a remote worker: temp dir, then rename."""
    tmp = _tmp_dir(runs, r.key)
    try:
        _write_run(tmp, res, _params_json(r))
        _commit(runs, r, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _record_failure(failed_dir: Path, r: _Resolved, error: str) -> None:
    failed_dir.mkdir(parents=True, exist_ok=True)
    rec = _params_json(r) | {"error": error, "failed_at": time.time()}
    tmp = failed_dir / f".{r.key}.{uuid.uuid4().hex[:8]}"
    tmp.write_text(json.dumps(rec, indent=2) + "\n")
    os.replace(tmp, failed_dir / f"{r.key}.json")


def _is_done(runs: Path, key: str) -> bool:
    return (runs / key / "summary.json").is_file()


def _local_pool(jobs: int) -> ProcessPoolExecutor:
    method = "forkserver" if sys.platform.startswith("linux") else "spawn"
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["ecnlab.api"])
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


def run_points(
    points: Iterable[Point],
    out: str | os.PathLike,
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = True,
    label: str = "",
    retry_failed: bool = True,
) -> SweepResult:
    """Run the points that are not stored yet under ``out/runs`` and return one row per
    point. ``jobs``: local worker processes (default: CPU count). ``cluster``: a Dask
    scheduler address (``tcp://host:port``), ``"local"`` (a LocalCluster of ``jobs``
    workers), or a ``dask.distributed.Client``/cluster object; None runs locally."""
    out = Path(out)
    runs = out / "runs"
    failed_dir = out / "failed"
    runs.mkdir(parents=True, exist_ok=True)
    for stale in runs.glob(".tmp-*"):  # left by a driver that was killed mid-write
        shutil.rmtree(stale, ignore_errors=True)
    resolved = [_resolve(p) for p in points]
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
    ran = failed = 0

    def finish(r: _Resolved, ok: bool, payload, tmp: Path | None = None) -> None:
        nonlocal ran, failed
        if ok:
            if tmp is not None:
                _commit(runs, r, tmp)
            else:
                _store(runs, r, payload)
            (failed_dir / f"{r.key}.json").unlink(missing_ok=True)
            status[r.key] = ("ok", "")
            ran += 1
        else:
            _record_failure(failed_dir, r, payload)
            status[r.key] = ("failed", payload)
            failed += 1
        prog.update(ok)

    try:
        if todo:
            if cluster is not None:
                _run_dask(list(todo.values()), cluster, jobs, finish)
            else:
                _run_local(list(todo.values()), runs, jobs, finish)
    finally:
        prog.close()
        rows = _rows(resolved, status, runs)
        _write_results(out / "results.csv", rows)
    n_failed = sum(1 for st, _ in status.values() if st == "failed")
    return SweepResult(rows, out, ran, unique - len(todo), n_failed)


def _run_local(todo: list[_Resolved], runs: Path, jobs: int | None, finish: Callable) -> None:
    jobs = max(1, jobs or os.cpu_count() or 1)
    if jobs == 1 or len(todo) == 1:
        # Still a separate process: a crash in the core must not take the driver down.
        jobs = 1
    pool = _local_pool(min(jobs, len(todo)))
    pending: dict[Any, tuple[_Resolved, Path]] = {}
    queue = list(todo)
    try:
        # Keep at most 2 x jobs in flight so an interrupt loses little queued work.
        while queue or pending:
            while queue and len(pending) < 2 * jobs:
                r = queue.pop(0)
                tmp = _tmp_dir(runs, r.key)
                pending[pool.submit(_execute, r.doc, r.seed, str(tmp), _params_json(r))] = (r, tmp)
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for f in done:
                item = pending.pop(f, None)
                if item is None:  # re-queued after a broken pool
                    continue
                r, tmp = item
                try:
                    ok, payload = f.result()
                except BrokenProcessPool:
                    ok, payload = False, "worker process died (crash or out of memory)"
                    shutil.rmtree(tmp, ignore_errors=True)
                    pool.shutdown(wait=False, cancel_futures=True)
                    for r2, t2 in pending.values():
                        shutil.rmtree(t2, ignore_errors=True)
                        queue.insert(0, r2)
                    pending.clear()
                    pool = _local_pool(min(jobs, max(1, len(queue))))
                finish(r, ok, payload, tmp if ok else None)
    except BaseException:
        for f in pending:
            f.cancel()
        _kill_pool(pool)
        for _, tmp in pending.values():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    pool.shutdown(wait=True)


def _kill_pool(pool: ProcessPoolExecutor) -> None:
    """Stop at once (Ctrl-C): terminate the workers instead of waiting for their runs."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        try:
            p.terminate()
        except Exception:  # noqa: BLE001 - already gone
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.join(timeout=5)


def _run_dask(todo: list[_Resolved], cluster: Any, jobs: int | None, finish: Callable) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ScenarioError("--cluster needs dask.distributed: pip install 'ecnlab[cluster]'") from None
    own = None
    if isinstance(cluster, Client):
        client = cluster
    elif isinstance(cluster, str):
        if cluster == "local":
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
        futs = {}
        for r in todo:
            f = client.submit(_execute, r.doc, r.seed, key=f"ecnlab-run-{r.key}", pure=False)
            futs[f] = r
        try:
            for f in as_completed(list(futs)):
                r = futs[f]
                try:
                    ok, payload = f.result()
                except Exception as e:  # noqa: BLE001 - a worker that died, a lost connection
                    ok, payload = False, f"dask: {_one_line(e)}"
                finish(r, ok, payload)
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


def sweep(
    spec: str | os.PathLike | dict[str, Any] | Sequence[Point],
    out: str | os.PathLike,
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = True,
    retry_failed: bool = True,
):
    """Run a sweep and return its ``results.csv`` as a pandas DataFrame (one row per
    point: the grid parameters, ``seed``, ``key``, ``status`` (ok/failed), ``error`` and
    the summary metrics).

    ``spec``: a SWEEP.toml path, a spec dict of the same shape, or a list of ``Point``.
    ``out``: the result directory (``runs/<key>/``, ``failed/``, ``results.csv``); points
    already stored there are not run again. ``jobs``: local worker processes (default: all
    cores). ``cluster``: ``"tcp://host:port"`` of a Dask scheduler, ``"local"``, or a
    ``dask.distributed.Client``; the workers need ecnlab installed, and write nothing: the
    results come back to this process, which stores them."""
    if isinstance(spec, (str, os.PathLike)):
        spec = load_sweep(spec)
    points = points_from_spec(spec) if isinstance(spec, dict) else list(spec)
    res = run_points(points, out, jobs=jobs, cluster=cluster, progress=progress, retry_failed=retry_failed)
    return res.frame()


class _CallableModule(type(sys)):
    """``ecnlab.sweep`` is this module and ``ecnlab.sweep(...)`` calls ``sweep.sweep``."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
