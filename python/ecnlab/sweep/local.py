"""Local execution: ``jobs`` runs at a time on this machine, each in a fresh process.

The pool is ``concurrent.futures.ThreadPoolExecutor``: each of its threads drives one run
process (``worker.run_isolated``) and waits for it. A process pool (multiprocessing, loky)
was not chosen because it cannot give what a sweep promises: it reuses a worker for many
runs, so a dead worker's run is not known exactly, one run cannot be killed at its time
limit without taking the pool down, and its workers do not die with a SIGKILLed driver.
Here each of those is a property of one process: a time-out kills that run's process
group; a process that dies is retried (``retries``) in a new one; ``Processes.stop``
(Ctrl-C, SIGTERM) kills them all at once and no new one starts.

Only the driver's main thread touches the store (commits, failure records) and the
progress display; the threads return outcomes.
"""

from __future__ import annotations

import os
import shutil
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable

from .progress import Progress
from .spec import Limits
from .store import Resolved, params_json, tmp_dir
from .worker import Processes, run_isolated


def run_local(todo: list[Resolved], runs: Path, jobs: int | None, finish: Callable, limits: Limits,
              prog: Progress) -> None:
    """Run ``todo``; ``finish(r, ok, payload, tmp, attempt)`` for each outcome."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    procs = Processes()

    def attempt(r: Resolved, n: int) -> tuple[str, object, Path]:
        tmp = tmp_dir(runs, r.key)
        kind, payload = run_isolated(r.doc, r.seed, str(tmp), params_json(r, n), limits.of(r)[0], procs)
        if kind != "ok" or procs.stopping:
            shutil.rmtree(tmp, ignore_errors=True)
        return kind, payload, tmp

    queue: deque[tuple[Resolved, int]] = deque((r, 1) for r in todo)
    running: dict = {}
    with ThreadPoolExecutor(jobs, thread_name_prefix="ecnlab-run") as pool:
        try:
            while queue or running:
                while queue and len(running) < jobs:
                    r, n = queue.popleft()
                    running[pool.submit(attempt, r, n)] = (r, n)
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in done:
                    r, n = running.pop(f)
                    kind, payload, tmp = f.result()
                    if kind == "died":
                        payload = limits.after_death(r, n, payload, prog.note)
                        if payload is None:
                            queue.appendleft((r, n + 1))  # next, as the run it replaces
                            continue
                    finish(r, kind == "ok", payload, tmp if kind == "ok" else None, n)
        except BaseException:
            procs.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            for f in running:  # a run that finished as the stop came: not committed, not kept
                if f.done() and not f.cancelled() and f.exception() is None:
                    shutil.rmtree(f.result()[2], ignore_errors=True)
            raise
