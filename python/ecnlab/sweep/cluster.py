"""Cluster execution on Dask (``--cluster``): the runs computed on Dask workers, the
results sent back to the driver, which stores them (the workers write nothing).

The scheduler reschedules a run whose worker died on another worker (up to its
``distributed.scheduler.allowed-failures``, set to ``retries`` for ``cluster="local"``).
With a time limit, each run computes in a child process of its worker
(``worker.run_isolated``) that is killed when the limit passes; one that dies is retried
by the driver. A worker with another ecnlab build refuses the run: the run's key promises
results of the driver's build.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import uuid
from typing import Any, Callable, Iterator

from ..api import engine_id
from ..scenario import ScenarioError
from .progress import Progress
from .spec import Limits, _one_line
from .store import Resolved
from .worker import Processes, execute, run_isolated


def run_dask(todo: list[Resolved], cluster: Any, jobs: int | None, finish: Callable, limits: Limits,
             prog: Progress) -> None:
    """Run ``todo`` on ``cluster``; ``finish(r, ok, payload, None, attempt)`` for each outcome."""
    from dask.distributed import as_completed

    with dask_client(cluster, jobs, limits.retries) as client:
        futs: dict[Any, tuple[Resolved, int]] = {}

        def submit(r: Resolved, attempt: int):
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
                    ok, payload = False, dask_failure(e)
                f.release()
                if ok is None:  # the run's own process died (runs with a time limit)
                    ok, payload = False, limits.after_death(r, attempt, payload, prog.note)
                    if payload is None:
                        ac.add(submit(r, attempt + 1))
                        continue
                finish(r, ok, payload, None, attempt)
        except BaseException:
            client.cancel(list(futs))
            raise


def dask_failure(e: BaseException) -> str:
    """A task's failure on Dask, in one line (a worker that died too often, a lost connection)."""
    name = type(e).__name__
    return f"dask: the run's worker died on every attempt ({name})" if name == "KilledWorker" else f"dask: {_one_line(e)}"


@contextlib.contextmanager
def dask_client(cluster: Any, jobs: int | None, retries: int) -> Iterator[Any]:
    """A ``dask.distributed.Client`` for ``--cluster``: a scheduler address, ``"local"`` (a
    LocalCluster of ``jobs`` workers whose failed tasks the scheduler retries ``retries``
    times), a Client, or a cluster object; what it opened is closed after. Shared by sweeps
    and ``ecnlab estimate``."""
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ScenarioError("--cluster needs dask.distributed: pip install 'ecnlab[cluster]'") from None
    own = None
    if isinstance(cluster, Client):
        client = cluster
    elif isinstance(cluster, str):
        if cluster == "local":
            # A run whose worker dies is rescheduled by the scheduler, `retries` times.
            # The workers start with SIGINT ignored (a disposition that survives exec): Ctrl-C
            # reaches the whole process group, and only this process should answer it, by
            # cancelling the runs and closing the cluster, not every worker with a traceback.
            # Their logs stay quiet below CRITICAL: a run's failure is reported by the sweep.
            old = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None
            try:
                with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
                    own = LocalCluster(n_workers=max(1, jobs or os.cpu_count() or 1), threads_per_worker=1,
                                       processes=True, dashboard_address=None, silence_logs=logging.CRITICAL)
            finally:
                if old is not None:
                    signal.signal(signal.SIGINT, old)
            client = Client(own)
        else:
            try:
                client = Client(cluster, timeout="20s")
            except (OSError, TimeoutError) as e:
                raise ScenarioError(f"--cluster {cluster}: cannot connect: {_one_line(e)}") from None
    else:  # a cluster object (LocalCluster, SLURMCluster, ...)
        client = Client(cluster)
    try:
        yield client
    finally:
        if client is not cluster:
            client.close()
        if own is not None:
            own.close()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _execute_remote(doc: dict[str, Any], seed: int, timeout: float | None, engine: str | None = None):
    """A Dask task: (True, RunResult), (False, error), or (None, why) when the run's own
    process died (with a time limit; the driver retries it). ``engine``: the driver's build."""
    if engine is not None and engine != engine_id():
        return False, (f"dask: this worker has another ecnlab build (engine {engine_id()}, the driver's is "
                       f"{engine}); install the same ecnlab on every worker")
    if timeout is None:
        return execute(doc, seed)
    kind, payload = run_isolated(doc, seed, None, None, timeout, Processes())
    return {"ok": True, "failed": False}.get(kind), payload  # None: the process died
