"""One run in a fresh interpreter: the process a local sweep starts for each run (and a
Dask worker for each run with a time limit), and the driver's side of it.

A fresh interpreter (``python -c``), not a fork: the run never imports the caller's
``__main__``, so a plain script without a ``__main__`` guard can call ``ecnlab.sweep``, and
the driver knows exactly which run a dead process was computing. The process gets the
pickled (driver pid, document, seed, directory, point.json) on stdin and writes one pickled
outcome on stdout at its end. It lives in its own session (Ctrl-C on the terminal reaches
the driver only, which stops it) and dies with the driver: ``PR_SET_PDEATHSIG`` (SIGKILL),
even when the driver is SIGKILLed, so no run computes for nobody or writes a temporary
directory after its driver is gone. Linux sends that signal when the *thread* that started
the process ends; the driver's threads outlive the processes they start (``local.py``).
While it runs, the process is named ``ecnlab-run N%`` (``ps``, ``top``): how far its run
has got in simulated time (``_show_progress``).
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from ..outdir import storage_error
from ..parent_death import die_with_parent, set_name
from .spec import _one_line
from .store import write_run

# "_worker_main" in the command line is how tests find run processes among the driver's.
_CMD = [sys.executable, "-c", "from ecnlab.sweep.worker import _worker_main; _worker_main()"]


class Processes:
    """The run processes alive, so that ``stop`` reaches every one, and none starts after."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen] = set()
        self.stopping = False

    def start(self) -> subprocess.Popen | None:
        with self._lock:
            if self.stopping:
                return None
            p = subprocess.Popen(_CMD, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            self._live.add(p)
            return p

    def forget(self, p: subprocess.Popen) -> None:
        with self._lock:
            self._live.discard(p)

    def stop(self) -> None:
        """Kill every run process now (Ctrl-C, SIGTERM, an error in the driver)."""
        with self._lock:
            self.stopping = True
            for p in self._live:
                _kill(p)


def run_isolated(doc: dict[str, Any], seed: int, tmp_dir: str | None, meta: dict[str, Any] | None,
                 timeout: float | None, procs: Processes) -> tuple[str, Any]:
    """Run one point in its own process: ("ok", None) with its files written to ``tmp_dir``
    (or ("ok", RunResult) without one), ("failed", one-line error) for a run that raised or
    exceeded ``timeout`` seconds (then it is killed), ("died", why) for a process that ended
    without an outcome, ("stopped", None) when ``procs`` is stopping."""
    proc = procs.start()
    if proc is None:
        return "stopped", None
    try:
        try:
            data, _ = proc.communicate(pickle.dumps((os.getpid(), doc, seed, tmp_dir, meta)), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.communicate()
            return "failed", f"exceeded the time limit of {timeout:g} s (killed)"
    finally:
        procs.forget(proc)
    if data:
        try:
            ok, payload = pickle.loads(data)
            return ("ok", payload) if ok else ("failed", payload)
        except Exception:  # noqa: BLE001 - a truncated outcome: the process died writing it
            pass
    return "died", _death(proc.returncode if proc.returncode != 0 else None)


def _kill(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)  # its own session: its group is its pid
    except OSError:
        pass


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


def execute(doc: dict[str, Any], seed: int, tmp_dir: str | None = None, meta: dict[str, Any] | None = None,
            progress=None):
    """Run one point in this process. With ``tmp_dir`` the run's files are written there
    (the driver shares the disk) and it returns (True, None); without, (True, RunResult) for
    the driver to write. A failure returns (False, one-line error)."""
    from .. import api  # looked up at call time: tests replace api.run in run processes

    try:
        res = api.run(doc, seed=seed, progress=progress)
    except BaseException as e:  # noqa: BLE001 - a Rust panic arrives as PanicException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return False, _one_line(e)
    if tmp_dir is None:
        return True, res
    try:
        write_run(Path(tmp_dir), res, meta or {})
    except OSError as e:
        shutil.rmtree(tmp_dir, ignore_errors=True)
        # A full or read-only store stops the sweep (the driver raises it), with one line.
        runs = Path(tmp_dir).parent
        return False, storage_error(e, f"--out {runs.parent}", (runs,)) or f"cannot write results: {_one_line(e)}"
    return True, None


def _die_with_driver(parent: int) -> None:
    """Die when the thread that started this process goes (with the driver, even by
    SIGKILL). SIGKILL, not a signal the run could handle: a run whose driver is gone has
    no one to report to, and must not go on to write its temporary directory. If the
    driver died before this call, exit at once."""
    die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _show_progress(now_ns: int, end_ns: int, _done: int, _started: int) -> None:
    """The run's progress as this process's name (``ps``, ``top``; tests wait for it):
    ``ecnlab-run 42%`` of the simulated time."""
    set_name(f"ecnlab-run {min(100, 100 * now_ns // end_ns) if end_ns else 100}%")


def _worker_main() -> None:
    """The run process: exactly one run, its outcome pickled on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    parent, doc, seed, tmp_dir, meta = pickle.load(sys.stdin.buffer)
    _die_with_driver(parent)
    set_name("ecnlab-run 0%")
    try:
        outcome = execute(doc, seed, tmp_dir, meta, _show_progress)
    except BaseException as e:  # noqa: BLE001
        outcome = (False, _one_line(e))
    sys.stdout.buffer.write(pickle.dumps(outcome))
    sys.stdout.buffer.flush()
