"""Where an estimate's simulations run: this machine's cores (threads of this process, each
running one job in the core without the GIL) or a Dask cluster (``--cluster``: the
connection code sweeps use, ``ecnlab.sweep.cluster.dask_client``).

Why threads and not ``sweep/local.py``'s process per run: a job is a pure function of its
text (``ecnlab_estimate::job``), with nothing to kill at a time limit or to isolate; a
fresh interpreter per job would cost more than most jobs (a link carrying a few flows).

Jobs are handed out a few per worker at a time, the link simulations first (they are the
large ones), so that the driver never holds every job's text at once. Each job's output is
given back to the plan by its index: the order of completion changes nothing.
Ctrl-C stops the jobs under way within a slice (``_core.StopFlag``) and cancels the rest.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, Callable

from .. import _core
from ..api import engine_id
from ..scenario import ScenarioError
from ..sweep.cluster import dask_client, dask_failure

# Jobs handed out ahead per worker.
AHEAD = 2


class JobFailed(RuntimeError):
    """A simulation of the estimate failed (ecnlab's fault: the jobs are built by the core)."""


def run_local(plan: Any, workers: int | None, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """Run every job of ``plan`` on ``workers`` threads (default: every core)."""
    n = plan.n_jobs()
    workers = max(1, min(workers or os.cpu_count() or 1, max(n, 1)))
    stop = _core.StopFlag()

    def one(i: int) -> None:
        plan.set_output(i, _core.estimate_job(plan.job(i), stop))

    todo = iter(range(n))
    running: dict = {}
    done = 0
    with ThreadPoolExecutor(workers, thread_name_prefix="ecnlab-estimate") as pool:
        try:
            while True:
                while len(running) < workers * AHEAD:
                    i = next(todo, None)
                    if i is None:
                        break
                    running[pool.submit(one, i)] = i
                if not running:
                    break
                finished, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
                for f in finished:
                    i = running.pop(f)
                    e = f.exception()
                    if e is not None:
                        kind, what = plan.describe(i)
                        raise JobFailed(f"the {kind} simulation of {what}: {e}") from None
                    done += 1
                    progress(done, n)
        except BaseException:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return {"kind": "local", "workers": workers}


def _remote_job(job_json: str, engine: str, build: str) -> str:
    """A Dask task: one job, on a worker of the driver's build."""
    if engine != engine_id() or build != _core.ESTIMATE_BUILD:
        raise JobFailed(f"this worker has another ecnlab build (engine {engine_id()}), the driver's is {engine}; "
                        "install the same ecnlab on every worker")
    return _core.estimate_job(job_json)


def run_dask(plan: Any, cluster: Any, workers: int | None, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """Run every job of ``plan`` on a Dask cluster (``--cluster``)."""
    from dask.distributed import wait as dask_wait

    n = plan.n_jobs()
    with dask_client(cluster, workers, 2) as client:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})) or (workers or 1))
        todo = iter(range(n))
        running: dict = {}
        done = 0
        try:
            while True:
                while len(running) < n_workers * AHEAD:
                    i = next(todo, None)
                    if i is None:
                        break
                    f = client.submit(_remote_job, plan.job(i), engine_id(), _core.ESTIMATE_BUILD,
                                      key=f"ecnlab-estimate-{i}-{os.getpid()}", pure=False)
                    running[f] = i
                if not running:
                    break
                finished = dask_wait(list(running), timeout=None, return_when="FIRST_COMPLETED").done
                for f in finished:
                    i = running.pop(f)
                    try:
                        out = f.result()
                    except JobFailed as e:
                        raise ScenarioError(str(e)) from None
                    except Exception as e:  # noqa: BLE001 - a worker that died too often, a lost connection
                        kind, what = plan.describe(i)
                        raise JobFailed(f"the {kind} simulation of {what}: {dask_failure(e)}") from None
                    f.release()
                    plan.set_output(i, out)
                    done += 1
                    progress(done, n)
        except BaseException:
            client.cancel(list(running))
            raise
        where = cluster if isinstance(cluster, str) else type(cluster).__name__
    return {"kind": "dask", "cluster": where, "workers": n_workers}
