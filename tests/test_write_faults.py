"""The writer discipline (``ecnlab/outdir.py``) as a matrix: for each command that writes,
each fault (a read-only target, a full file system, a target that is a file, a target
holding the user's files, SIGINT, SIGTERM and SIGKILL at several moments, two writers at
once), what must hold: the exit status, one line, nothing finished lost, nothing
half-written, a rerun reuses what was finished.

The moments of a signal are exact, not timed: a small driver (``_DRIVER``) runs the command
in a process of its own and sends the signal to itself from inside a step of the writer
(before the run, after the first file, before the final rename; after the first run a
sweep or an advise committed), so no test sleeps and hopes. The file-system faults use a
small tmpfs (root only; skipped with the reason elsewhere)."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import contextlib
from pathlib import Path

import pytest

from conftest import ECNLAB, ROOT, run_cli

SMALL = ["--set", "duration=2ms", "--set", "metrics.warmup=0s"]
SWEEP = 'scenario = "tcn-static"\nseeds = [1, 2, 3]\nset = {"duration" = "2ms", "metrics.warmup" = "0s"}\n'
ADVISE = ["advise", "--link-rate", "25Gbps", "--rtt", "p50=20us,p99=200us", "--schemes", "per_queue", "--flows", "20",
          "--seeds", "2", "--jobs", "1", "-q"]


def command(name: str, out: Path, tmp: Path) -> list[str]:
    """The arguments of a small run of ``name`` writing ``out``."""
    if name == "run":
        return ["run", "tcn-static", *SMALL, "-q", "--out", str(out)]
    if name == "sweep":
        spec = tmp / "sweep.toml"
        spec.write_text(SWEEP)
        return ["sweep", str(spec), "--jobs", "1", "-q", "--out", str(out)]
    if name == "advise":
        return [*ADVISE, "--out", str(out)]
    if name == "reproduce":
        return ["reproduce", "tcn-buffer", "--scale", "quick", "--seeds", "1", "--jobs", "1", "-q", "--out", str(out)]
    if name == "emulate":
        return ["emulate", "tcn-static", "-q", "--out", str(out)]
    if name == "validate":
        return ["validate", "tcn-static", "--out", str(out)]
    raise ValueError(name)


def ecnlab(*args, check=False, env=None):
    return subprocess.run([str(ECNLAB), *map(str, args)], capture_output=True, text=True, cwd=ROOT, env=env)


def assert_one_line(p, status: int, *says: str) -> None:
    assert p.returncode == status, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    for s in says:
        assert s in lines[0], (s, p.stderr)


def leftovers(parent: Path, out: Path) -> list[str]:
    """Temporary directories of ``out`` left beside it (the kept store is not one)."""
    return [n for n in os.listdir(parent) if n.startswith(f".{out.name}.ecnlab-") and not n.endswith("-kept")]


# --------------------------------------------------------------------------------------
# File-system faults

@contextlib.contextmanager
def tmpfs(path: Path, *options: str):
    """A tmpfs at ``path`` (root); the test is skipped, with the reason, where none can be mounted."""
    path.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(path)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({p.stderr.strip() or 'not root'}): the file-system faults need one")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


WRITERS = ["run", "sweep", "advise", "reproduce", "emulate", "validate"]


@pytest.mark.parametrize("name", WRITERS)
def test_a_target_that_is_a_file_is_one_line(tmp_path, name):
    out = tmp_path / "out"
    out.write_text("mine\n")
    assert_one_line(ecnlab(*command(name, out, tmp_path)), 2, f"--out {out}", "not a directory")
    assert out.read_text() == "mine\n"


@pytest.mark.parametrize("name", WRITERS)
def test_a_target_holding_the_users_files_is_refused_and_left_alone(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    assert_one_line(ecnlab(*command(name, out, tmp_path)), 2, f"--out {out}", "notes.txt")
    assert os.listdir(out) == ["notes.txt"] and (out / "notes.txt").read_text() == "mine\n"


def test_an_earlier_result_holding_the_users_files_is_not_replaced(tmp_path):
    """It was replaced whole, the user's file with it."""
    out = tmp_path / "out"
    run_cli(*command("run", out, tmp_path))
    (out / "notes.txt").write_text("mine\n")
    before = (out / "summary.json").read_bytes()
    assert_one_line(ecnlab(*command("run", out, tmp_path)), 2, f"--out {out}", "notes.txt")
    assert (out / "notes.txt").read_text() == "mine\n" and (out / "summary.json").read_bytes() == before


def test_every_entry_a_command_writes_is_known_as_ecnlabs(tmp_path):
    """``outdir.RESULT_ENTRIES`` lists what a rerun may replace: every entry `run --report
    --pcap` and `advise` write is on it (else their reruns would be refused)."""
    import fnmatch

    from ecnlab.outdir import RESULT_ENTRIES

    run_cli("run", "tcn-static", *SMALL, "--report", "--pcap", "all", "-q", "--out", tmp_path / "r")
    run_cli(*ADVISE, "--out", tmp_path / "a")
    for d in ("r", "a"):
        for n in os.listdir(tmp_path / d):
            assert any(fnmatch.fnmatchcase(n, e) for e in RESULT_ENTRIES), f"{d}/{n} is not in RESULT_ENTRIES"
    run_cli(*ADVISE, "--out", tmp_path / "a")  # and a rerun replaces it


@pytest.mark.parametrize("name", ["run", "sweep", "advise", "reproduce", "emulate", "validate", "report"])
def test_a_read_only_target_is_one_line(tmp_path, name):
    ro = tmp_path / "ro"
    if name == "report":
        run_cli(*command("run", tmp_path / "r", tmp_path))
    with tmpfs(ro, "size=4m"):
        if name == "report":
            shutil.copytree(tmp_path / "r", ro / "out")
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        out = ro / "out"
        p = ecnlab("report", out) if name == "report" else ecnlab(*command(name, out, tmp_path))
        assert_one_line(p, 2, str(out), "Read-only file system")


@pytest.mark.parametrize("name", ["run", "sweep", "advise", "report"])
def test_a_full_file_system_is_one_line_and_leaves_nothing_half_written(tmp_path, name):
    full = tmp_path / "full"
    if name == "report":
        run_cli(*command("run", tmp_path / "r", tmp_path))
    # Room for a sweep's first run or so; for less than one result of the others.
    with tmpfs(full, f"size={64 if name in ('sweep', 'report') else 12}k"):
        out = full / "out"
        if name == "report":
            shutil.copytree(tmp_path / "r", out)
            with contextlib.suppress(OSError):  # fill what is left
                with open(full / "filler", "wb") as f:
                    f.write(b"\0" * (1 << 20))
            before = sorted(os.listdir(out))
            p = ecnlab("report", out)
            assert_one_line(p, 2, str(out), "No space left on device")
            assert sorted(os.listdir(out)) == before, "a failed report leaves the directory as it was"
            return
        p = ecnlab(*command(name, out, tmp_path))
        assert_one_line(p, 2, f"--out {out}", "No space left on device")
        assert leftovers(full, out) == [], "no temporary directory is left"
        if name == "sweep":  # a store: what is in runs/ is whole
            for d in (out / "runs").iterdir():
                assert not d.name.startswith("."), d
                json.loads((d / "summary.json").read_text())
        else:
            assert not out.exists(), "a result directory is there whole or not at all"


# --------------------------------------------------------------------------------------
# Signals at exact moments

# Runs `ecnlab ARGS` after wrapping one step so that the process signals itself there.
_DRIVER = """
import os, signal, sys
import ecnlab.api, ecnlab.outdir, ecnlab.sweep.store
from ecnlab.cli import main
at, sig, n = sys.argv[1], getattr(signal, sys.argv[2]), int(sys.argv[3])
calls = [0]
def hook(mod, name, before=True):
    orig = getattr(mod, name)
    def wrapped(*a, **k):
        calls[0] += 1
        if before and calls[0] == n:
            os.kill(os.getpid(), sig)
        r = orig(*a, **k)
        if not before and calls[0] == n:
            os.kill(os.getpid(), sig)
        return r
    setattr(mod, name, wrapped)
if at == "run":          # as the simulation starts
    hook(ecnlab.api._core, "run_json")
elif at == "write":      # the result files half written
    hook(ecnlab.api, "_write_csv", before=False)
elif at == "rename":     # complete, before its rename into place
    hook(ecnlab.outdir, "_replace")
elif at == "commit":     # after the n-th run a sweep committed
    hook(ecnlab.sweep.store, "commit", before=False)
    import ecnlab.sweep
    ecnlab.sweep.commit = ecnlab.sweep.store.commit
sys.exit(main(sys.argv[4:]))
"""


def signalled(at: str, sig: str, args: list[str], n: int = 1):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", _DRIVER, at, sig, str(n), *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


STATUS = {"SIGINT": 130, "SIGTERM": 130, "SIGKILL": -9}


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("at", ["run", "write", "rename"])
def test_run_signalled_at_any_moment_leaves_the_old_result_or_the_new_one(tmp_path, at, sig):
    out = tmp_path / "out"
    run_cli("run", "tcn-static", *SMALL, "--seed", "5", "--pcap", "all", "-q", "--out", out)
    old = {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()}
    p = signalled(at, sig, command("run", out, tmp_path))
    new = json.loads((out / "summary.json").read_text())
    if at == "rename" and sig != "SIGKILL":  # held until the renames are done: the new result, whole
        assert p.returncode == 130 and new["seed"] != 5
        assert sorted(os.listdir(out)) == ["flows.csv", "probes.csv", "scenario.json", "summary.json",
                                           "timeseries.csv"]
    else:
        assert p.returncode == STATUS[sig], p.stderr
        assert {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()} == old and (out / "pcap").is_dir()
    if sig == "SIGKILL":
        assert p.stderr == ""
    else:
        assert p.stderr == "ecnlab: interrupted\n", p.stderr
        assert leftovers(tmp_path, out) == []
    run_cli(*command("run", out, tmp_path))  # the next run clears what a SIGKILL left, and writes
    assert leftovers(tmp_path, out) == [] and json.loads((out / "summary.json").read_text())["seed"] != 5


def _finished(runs: Path) -> dict[str, float]:
    return {d.name: json.loads((d / "point.json").read_text())["finished_at"]
            for d in runs.iterdir() if not d.name.startswith(".")} if runs.is_dir() else {}


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_sweep_signalled_after_a_run_keeps_it_and_the_rerun_reuses_it(tmp_path, sig):
    out = tmp_path / "out"
    p = signalled("commit", sig, command("sweep", out, tmp_path))
    assert p.returncode == STATUS[sig], p.stderr
    done = _finished(out / "runs")
    assert len(done) == 1
    r = ecnlab(*command("sweep", out, tmp_path)[:-3], "--out", out)
    assert r.returncode == 0, r.stderr
    assert "3 runs: 1 already done, 2 to run" in r.stderr
    after = _finished(out / "runs")
    assert len(after) == 3 and all(after[k] == t for k, t in done.items()), "a finished run ran again"
    assert not [d for d in (out / "runs").iterdir() if d.name.startswith(".")]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_advise_signalled_after_validation_runs_keeps_them_and_the_rerun_reuses_them(tmp_path, sig):
    """SIGKILL lost them: the next advise removed the dead one's temporary directory."""
    out = tmp_path / "a"
    p = signalled("commit", sig, [*ADVISE, "--out", str(out)], n=2)
    assert p.returncode == STATUS[sig], p.stderr
    assert not out.exists()
    # Finished: in the kept store (Ctrl-C, kill) or in the dead one's temporary directory (kill -9).
    done = {d.parent.name: json.loads(d.read_text())["finished_at"]
            for d in tmp_path.glob(".a.ecnlab-*/validation/runs/[!.]*/point.json")}
    assert len(done) == 2, sorted(os.listdir(tmp_path))
    r = ecnlab(*ADVISE, "--out", out)
    assert r.returncode == 0, r.stderr
    after = _finished(out / "validation" / "runs")
    assert len(after) > 2 and all(after[k] == t for k, t in done.items()), "a finished run ran again"
    assert sorted(os.listdir(tmp_path)) == ["a"], "no temporary or kept directory is left"


# --------------------------------------------------------------------------------------
# Two writers at once


@pytest.mark.parametrize("name", ["run", "sweep", "advise"])
def test_two_writers_at_once_leave_one_whole_result(tmp_path, name):
    out = tmp_path / "out"
    args = command(name, out, tmp_path)
    procs = [subprocess.Popen([str(ECNLAB), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT) for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in results] == [0, 0], results
    assert leftovers(tmp_path, out) == [] and not (tmp_path / ".out.ecnlab-kept").exists()
    if name == "sweep":
        with open(out / "results.csv", newline="") as f:
            assert [r["status"] for r in csv.DictReader(f)] == ["ok"] * 3
        assert not [d for d in (out / "runs").iterdir() if d.name.startswith(".")]
    else:
        marker = "advice.json" if name == "advise" else "summary.json"
        json.loads((out / marker).read_text())
