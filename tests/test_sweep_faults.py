"""Faults in sweeps, done for real: worker processes and Dask workers killed mid-run, the
driver killed mid-sweep, a run whose worker dies every time, a run over its time limit.
Every finished sweep is compared byte for byte with an undisturbed one."""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import ecnlab

from conftest import ECNLAB, ROOT

# Runs of about half a second each (8 long DCTCP flows at 10 Gbps), so a kill lands mid-run.
SPEC = """
scenario = "tcn-buffer"
seeds = [1, 2, 3, 4, 5, 6]
set = {"duration" = "0.15s"}
[grid]
"marking.scheme" = ["tcn"]
"""
RUN_FILES = ("summary.json", "flows.csv", "timeseries.csv", "probes.csv", "scenario.json", "point.json")


def _rows(out):
    with open(Path(out) / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def _comparable(run_dir: Path) -> dict[str, bytes]:
    """A run's result files, byte for byte, except summary.json's wall-clock time."""
    files = {f: (run_dir / f).read_bytes() for f in ("flows.csv", "timeseries.csv", "probes.csv", "scenario.json")}
    files["summary.json"] = re.sub(rb'\n  "wall_time_s": [^\n]*', b"", (run_dir / "summary.json").read_bytes())
    return files


def _assert_same_results(out: Path, ref: Path) -> None:
    rows, ref_rows = _rows(out), _rows(ref)
    assert [r["status"] for r in rows] == ["ok"] * len(ref_rows)
    assert [r["key"] for r in rows] == [r["key"] for r in ref_rows]
    for r in ref_rows:
        assert _comparable(out / "runs" / r["key"]) == _comparable(ref / "runs" / r["key"]), r["key"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The sweep, undisturbed."""
    d = tmp_path_factory.mktemp("faults")
    spec = d / "spec.toml"
    spec.write_text(SPEC)
    ref = d / "reference"
    df = ecnlab.sweep(spec, out=ref, jobs=2, progress=False)
    assert list(df["status"]) == ["ok"] * 6
    return spec, ref


# --------------------------------------------------------------------------------------
# Processes


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            fields = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(d))
    return out


def _run_processes(driver: int) -> list[int]:
    """The processes computing runs: each a child of the driver (a fresh interpreter)."""
    return [c for c in _children(driver) if b"_worker_main" in _cmdline(c)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _sweep_cli(spec, out, *args, env=None):
    return subprocess.Popen([str(ECNLAB), "sweep", str(spec), "--out", str(out), *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)


def _progress(pid: int) -> int | None:
    """How far a run process's run is, in percent of its simulated time: the name it gives
    itself (``ecnlab-run 42%``, ``sweep/worker.py``); None before it says."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None
    return int(comm[len("ecnlab-run "):-1]) if comm.startswith("ecnlab-run ") and comm.endswith("%") else None


def _wait_for_run_in_flight(proc, min_progress: int = 20, count: int = 1, timeout: float = 60) -> list[int]:
    """Pids of the run processes (at least ``count``) whose run is ``min_progress`` percent
    or more done, by their progress marker: the least advanced first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        done = {p: _progress(p) for p in _run_processes(proc.pid)}
        ready = [p for p, pct in done.items() if pct is not None and pct >= min_progress]
        if len(ready) >= count:
            return sorted(ready, key=lambda p: done[p])
        time.sleep(0.02)
    raise AssertionError("no run in flight")


def _done(out):
    runs = Path(out) / "runs"
    return {p.name: (p / "summary.json").stat().st_mtime_ns
            for p in runs.iterdir() if not p.name.startswith(".") and (p / "summary.json").is_file()} \
        if runs.exists() else {}


# --------------------------------------------------------------------------------------
# A worker killed mid-run


def test_local_worker_killed_mid_run_is_retried_and_results_are_identical(reference, tmp_path):
    spec, ref = reference
    out = tmp_path / "out"
    proc = _sweep_cli(spec, out, "--jobs", "2")
    victim = _wait_for_run_in_flight(proc, min_progress=20)[0]
    os.kill(victim, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "killed by SIGKILL; retrying (2 of 3 attempts)" in stderr
    assert "6 ran, 0 failed" in stdout
    attempts = sorted(json.loads((out / "runs" / r["key"] / "point.json").read_text())["attempt"] for r in _rows(out))
    assert attempts == [1, 1, 1, 1, 1, 2]  # exactly the killed run ran again
    assert not (out / "failed").exists() or not list((out / "failed").iterdir())
    _assert_same_results(out, ref)


def test_dask_worker_killed_mid_run_is_retried_and_results_are_identical(reference, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    spec, ref = reference
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        proc = _sweep_cli(spec, out, "--cluster", cluster.scheduler_address)
        deadline = time.monotonic() + 60
        victim = None
        while victim is None:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no run in flight on the Dask workers"
            busy = [w for w, keys in client.processing().items() if any("ecnlab-run-" in str(k) for k in keys)]
            if busy:  # computing a run: a kill now is a death mid-run, whatever its moment
                victim = busy[0]
            else:
                time.sleep(0.02)
        os.kill(pids[victim], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 0, stderr
        assert pids[victim] not in client.run(os.getpid).values()  # that worker really died
    assert "6 ran, 0 failed" in stdout
    _assert_same_results(out, ref)


# --------------------------------------------------------------------------------------
# The driver killed mid-sweep


class _Watcher(threading.Thread):
    """Checks, as often as it can, that whatever is visible under runs/ as a run directory
    is complete and that results.csv, when present, is whole."""

    def __init__(self, out: Path, points: int):
        super().__init__(daemon=True)
        self.out, self.points = out, points
        self.stop = threading.Event()
        self.problems: list[str] = []
        self.checks = 0

    def run(self):
        runs = self.out / "runs"
        while not self.stop.is_set():
            try:
                entries = [p for p in runs.iterdir() if not p.name.startswith(".")] if runs.exists() else []
            except FileNotFoundError:
                entries = []
            for d in entries:
                try:
                    for f in RUN_FILES:
                        text = (d / f).read_text()
                        if not text.endswith("\n"):
                            self.problems.append(f"{d.name}/{f} is truncated")
                    json.loads((d / "summary.json").read_text())["fct"]
                    json.loads((d / "point.json").read_text())["key"]
                except (OSError, ValueError, KeyError) as e:
                    self.problems.append(f"{d.name}: incomplete: {type(e).__name__}: {e}")
            res = self.out / "results.csv"
            try:
                with open(res, newline="") as f:
                    n = len(list(csv.DictReader(f)))
                if n != self.points:
                    self.problems.append(f"results.csv has {n} rows")
            except FileNotFoundError:
                pass
            self.checks += 1
            time.sleep(0.01)


def test_killed_driver_leaves_no_partial_run_and_resumes_without_repeats(reference, tmp_path):
    spec, ref = reference
    out = tmp_path / "out"
    watcher = _Watcher(out, 6)
    watcher.start()
    proc = _sweep_cli(spec, out, "--jobs", "2")
    deadline = time.monotonic() + 60
    while len(_done(out)) < 2:  # some runs finished ...
        assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended too soon"
        time.sleep(0.02)
    in_flight = _wait_for_run_in_flight(proc, min_progress=20)  # ... and some in flight
    os.kill(proc.pid, signal.SIGKILL)  # the driver alone, as the OOM killer or `kill -9` would
    proc.communicate()
    # Its run processes do not go on computing for nobody.
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in in_flight):
        assert time.monotonic() < deadline, "run processes outlived the driver"
        time.sleep(0.05)
    before = _done(out)
    assert 2 <= len(before) < 6, f"{len(before)} runs finished before the kill; the test needs a partial sweep"
    assert not (out / "results.csv").exists()

    p = subprocess.run([str(ECNLAB), "sweep", str(spec), "--out", str(out), "--jobs", "2"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    watcher.stop.set()
    watcher.join()
    assert p.returncode == 0, p.stderr
    assert f"6 runs: {len(before)} already done, {6 - len(before)} to run" in p.stderr
    after = _done(out)
    for key, mtime in before.items():  # finished runs were neither repeated nor rewritten
        assert after[key] == mtime, key
    assert watcher.checks > 20 and not watcher.problems, watcher.problems[:5]
    assert not [d for d in (out / "runs").iterdir() if d.name.startswith(".tmp-")]
    _assert_same_results(out, ref)


LONG_RUNS = """
scenario = "tcn-buffer"
seeds = [1, 2]
set = {"duration" = "30s"}
"""


def test_a_killed_driver_takes_long_runs_with_it(tmp_path):
    """Runs of a minute or more: SIGKILL of the driver stops them at once (they do not go on
    computing, nor later write temporary run directories beside the finished ones)."""
    spec = tmp_path / "long.toml"
    spec.write_text(LONG_RUNS)
    out = tmp_path / "out"
    proc = _sweep_cli(spec, out, "--jobs", "2")
    in_flight = _wait_for_run_in_flight(proc, min_progress=1, count=2)
    assert len(in_flight) == 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    t0 = time.monotonic()
    while any(_alive(p) for p in in_flight):
        assert time.monotonic() - t0 < 1.0, "run processes outlived the driver"
        time.sleep(0.02)
    # Gone, so nothing can write there any more: the store holds nothing of them.
    assert [d.name for d in (out / "runs").iterdir()] == []


def test_sigterm_stops_the_sweep_at_once_and_cleans_up(reference, tmp_path):
    spec, _ = reference
    out = tmp_path / "out"
    proc = _sweep_cli(spec, out, "--jobs", "2")
    in_flight = _wait_for_run_in_flight(proc, min_progress=20)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "ecnlab: interrupted" in stderr
    assert not any(_alive(p) for p in in_flight)  # killed, not left to finish
    assert not [d for d in (out / "runs").iterdir() if d.name.startswith(".tmp-")]
    rows = _rows(out)  # the table says what is done and what is not
    assert len(rows) == 6 and {r["status"] for r in rows} <= {"ok", "missing"} and "missing" in {r["status"] for r in rows}


def test_ctrl_c_on_a_dask_sweep_is_one_line(tmp_path):
    """Ctrl-C reaches the whole process group: the local cluster's workers printed ~70 lines
    of tracebacks (KeyboardInterrupt, CancelledError) under the driver's one line. They now
    start with SIGINT ignored; the driver cancels the runs and closes the cluster."""
    spec = tmp_path / "s.toml"
    spec.write_text('scenario = "tcn-isolation"\nseeds = [1, 2, 3, 4]\nset = { "traffic.0.flows" = 4000 }\n')
    proc = _sweep_cli(spec, tmp_path / "out", "--cluster", "local", "--jobs", "2")
    deadline = time.monotonic() + 120
    while not list((tmp_path / "out").glob("runs/[!.]*/summary.json")):  # a run is back: the others in flight
        assert proc.poll() is None and time.monotonic() < deadline, "no run finished on the cluster"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and stderr.strip().splitlines()[-1] == "ecnlab: interrupted", stderr
    assert len(stderr.strip().splitlines()) <= 2 and "Traceback" not in stderr, stderr


# --------------------------------------------------------------------------------------
# Runs that die every time, or take too long


POISON = """
scenario = "tcn-buffer"
seeds = [1, 13]
retries = 1
timeout = "10s"
[grid]
duration = ["20ms", "60s"]
"""


def _poison_env(tmp_path: Path) -> dict[str, str]:
    """Worker processes that SIGKILL themselves whenever they start the run with seed 13:
    a run that takes its worker down every time (as a segfault or the OOM killer would)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os, signal\n"
        "if os.environ.get('ECNLAB_TEST_POISON_SEED'):\n"
        "    import ecnlab.api\n"
        "    _run = ecnlab.api.run\n"
        "    def run(scenario, seed=None, overrides=(), **kw):\n"
        "        if seed == int(os.environ['ECNLAB_TEST_POISON_SEED']):\n"
        "            os.kill(os.getpid(), signal.SIGKILL)\n"
        "        return _run(scenario, seed, overrides, **kw)\n"
        "    ecnlab.api.run = run\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(hook)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["ECNLAB_TEST_POISON_SEED"] = "13"
    return env


def _check_poison_outcome(out: Path, stdout: str, returncode: int) -> None:
    assert returncode == 1
    assert "4 points: 0 already done, 1 ran, 3 failed" in stdout
    rows = {(r["duration"], r["seed"]): r for r in _rows(out)}
    assert rows[("20ms", "1")]["status"] == "ok"
    slow = rows[("60s", "1")]
    assert slow["status"] == "failed" and slow["error"] == "exceeded the time limit of 10 s (killed)", slow
    for duration in ("20ms", "60s"):
        died = rows[(duration, "13")]
        assert died["status"] == "failed"
        rec = json.loads((out / "failed" / f"{died['key']}.json").read_text())
        assert rec["params"] == {"duration": duration} and rec["seed"] == 13 and rec["attempt"] == 2
        assert rec["error"] == "worker process killed by SIGKILL (on each of 2 attempts)"
    assert "failed {\"duration\": \"20ms\", \"seed\": 13" in stdout
    assert sorted(p.name for p in (out / "runs").iterdir()) == [rows[("20ms", "1")]["key"]]


def test_run_that_kills_its_worker_or_overruns_is_recorded_and_the_rest_go_on(tmp_path):
    spec = tmp_path / "poison.toml"
    spec.write_text(POISON)
    out = tmp_path / "out"
    t0 = time.monotonic()
    proc = _sweep_cli(spec, out, "--jobs", "2", env=_poison_env(tmp_path))
    stdout, stderr = proc.communicate(timeout=120)
    assert time.monotonic() - t0 < 60
    _check_poison_outcome(out, stdout, proc.returncode)
    assert stderr.count("killed by SIGKILL; retrying (2 of 2 attempts)") == 2  # one retry each, then it stops


def test_dask_run_that_kills_its_worker_or_overruns_is_recorded(tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    import dask

    spec = tmp_path / "poison.toml"
    spec.write_text(POISON)
    # Without a time limit a run computes in the Dask worker itself, and the scheduler
    # reschedules it when that worker dies, up to its allowed-failures (here none: a
    # worker restart costs seconds; rescheduling is shown by the test above).
    in_worker = tmp_path / "in-worker.toml"
    in_worker.write_text('scenario = "tcn-buffer"\nseeds = [1, 13]\nset = {duration = "20ms"}\n')
    for k, v in _poison_env(tmp_path).items():
        monkeypatch.setenv(k, v)  # inherited by the worker processes
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster:
        proc = _sweep_cli(spec, tmp_path / "out", "--cluster", cluster.scheduler_address)
        stdout, stderr = proc.communicate(timeout=180)
        _check_poison_outcome(tmp_path / "out", stdout, proc.returncode)
        proc = _sweep_cli(in_worker, tmp_path / "out2", "--cluster", cluster.scheduler_address)
        stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 1, stderr
    assert "2 points: 0 already done, 1 ran, 1 failed" in stdout
    rows = {r["seed"]: r for r in _rows(tmp_path / "out2")}
    assert rows["1"]["status"] == "ok"
    assert rows["13"]["status"] == "failed" and "died on every attempt (KilledWorker)" in rows["13"]["error"]
