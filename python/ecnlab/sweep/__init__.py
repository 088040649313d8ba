"""Sweeps: run a grid of (scenario, overrides, seed) points, locally in parallel processes
or on a Dask cluster, with results stored by a key of their full parameter set.

>>> import ecnlab
>>> df = ecnlab.sweep("my-sweep.toml", out="out/sweep")                # doctest: +SKIP
>>> pts = [ecnlab.Point("tcn-perport", [f"flows.1.count={n}"], seed=1, params={"n": n})
...        for n in (2, 4, 8)]
>>> df = ecnlab.sweep(pts, out="out/perport", jobs=2)                  # doctest: +SKIP

The modules, in the order a run passes through them: ``spec`` (the sweep file and its
points), ``store`` (keys, the run store, results.csv), ``local`` (runs on this machine, one
fresh process each, ``worker``) or ``cluster`` (runs on Dask), ``progress``.

A run that raises an error or exceeds its time limit (``timeout``, then it is killed) is
recorded as failed and not retried: the simulation is deterministic and would do the same
again. One whose process dies (a crash, SIGKILL, the OOM killer) is retried up to
``retries`` times (default 2). Either way the other runs go on, and the next sweep tries
it again. ``ecnlab.sweep`` is this module, and calling it calls ``sweep``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..outdir import StorageError, open_store, storage
from .progress import Progress
from .spec import DEFAULT_RETRIES, MAX_POINTS, Limits, Point, load_sweep, override, points_from_spec, time_limit_s
from .store import (Resolved, SweepResult, clear_stale, commit, point_key, record_failure, resolve_point,
                    result_rows, store_result, summary_row, write_results, write_summary)

__all__ = ["Point", "SweepResult", "sweep", "run_points", "load_sweep", "points_from_spec", "override",
           "time_limit_s", "point_key", "summary_row", "MAX_POINTS"]


def run_points(points: Iterable[Point], out: str | os.PathLike, jobs: int | None = None, cluster: Any = None,
               progress: bool = True, label: str = "", retry_failed: bool = True, timeout: float | None = None,
               retries: int | None = None) -> SweepResult:
    """Run the points that are not stored yet under ``out/runs`` and return one row per
    point. ``jobs``: local worker processes (default: CPU count). ``cluster``: a Dask
    scheduler address (``tcp://host:port``), ``"local"`` (a LocalCluster of ``jobs``
    workers), or a ``dask.distributed.Client``/cluster object; None runs locally.
    ``timeout``: a per-run wall-clock limit in seconds; ``retries``: how many more times a
    run whose process died is tried (default 2); a point's own of either wins.
    ``retry_failed=False`` keeps the recorded failures instead of running them again."""
    resolved = [resolve_point(p) for p in points]
    out = open_store(out)  # a new, empty or earlier store, writable; other files refused
    with storage(f"--out {out}", out):
        return _run_resolved(resolved, out, jobs, cluster, progress, label, retry_failed, timeout, retries)


def _run_resolved(resolved: list[Resolved], out: Path, jobs: int | None, cluster: Any, progress: bool, label: str,
                  retry_failed: bool, timeout: float | None, retries: int | None) -> SweepResult:
    runs = out / "runs"
    failed_dir = out / "failed"
    runs.mkdir(exist_ok=True)
    clear_stale(runs)
    # Unique work: several points may share a key (same resolved scenario and seed).
    todo: dict[str, Resolved] = {}
    status: dict[str, tuple[str, str]] = {}
    for r in resolved:
        if r.error is not None:
            status[r.key] = ("failed", r.error)
            record_failure(failed_dir, r, r.error)
        elif (runs / r.key / "summary.json").is_file():  # stored already
            status[r.key] = ("ok", "")
        elif not retry_failed and (failed_dir / f"{r.key}.json").exists():
            status[r.key] = ("failed", json.loads((failed_dir / f"{r.key}.json").read_text())["error"])
        else:
            todo.setdefault(r.key, r)
    unique = len({r.key for r in resolved})
    failed = sum(1 for st, _ in status.values() if st == "failed")
    prog = Progress(unique, unique - len(todo) - failed, failed, label, progress)
    ran = 0

    def finish(r: Resolved, ok: bool, payload, tmp: Path | None = None, attempt: int = 1) -> None:
        nonlocal ran
        if ok:
            if tmp is not None:
                commit(runs, r, tmp)
            else:
                store_result(runs, r, payload, attempt)
            (failed_dir / f"{r.key}.json").unlink(missing_ok=True)
            status[r.key] = ("ok", "")
            ran += 1
        elif isinstance(payload, StorageError):  # the run could not write its files: nor will the others
            raise payload
        else:
            record_failure(failed_dir, r, payload, attempt)
            status[r.key] = ("failed", payload)
        prog.update(ok)

    limits = Limits(timeout, DEFAULT_RETRIES if retries is None else retries)
    try:
        if todo:
            # Imported here: every run process imports this package, and needs neither.
            if cluster is not None:
                from .cluster import run_dask

                run_dask(list(todo.values()), cluster, jobs, finish, limits, prog)
            else:
                from .local import run_local

                run_local(list(todo.values()), runs, jobs, finish, limits, prog)
    finally:
        prog.close()
        rows = result_rows(resolved, status, runs)
        write_results(out / "results.csv", rows)
        write_summary(out, rows, resolved)
    n_failed = sum(1 for st, _ in status.values() if st == "failed")
    return SweepResult(rows, out, ran, unique - len(todo), n_failed)


def sweep(spec: str | os.PathLike | dict[str, Any] | Sequence[Point], out: str | os.PathLike, jobs: int | None = None,
          cluster: Any = None, progress: bool = True, retry_failed: bool = True, timeout: float | None = None,
          retries: int | None = None):
    """Run a sweep and return its ``results.csv`` as a pandas DataFrame (one row per
    point: the grid parameters, ``seed``, ``key``, ``status`` (ok/failed), ``error`` and
    the summary metrics). ``spec``: a SWEEP.toml path, a spec dict of the same shape, or a
    list of ``Point``; the other arguments as ``run_points`` (a spec's ``timeout`` and
    ``retries`` win). On a cluster the workers need the same ecnlab, and write nothing:
    the results come back to this process, which stores them.

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
