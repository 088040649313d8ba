"""How the command line behaves around a run (issue 20): Ctrl-C, progress, closed pipes,
units, the output directory, and what the result files say about their origin."""

import csv
import json
import os
import pty
import select
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ECNLAB, ROOT, run_cli, summary

# A run long enough to interrupt (about a minute of wall-clock time).
LONG = ["tcn-leafspine"]
SHORT = ["tcn-static", "--set", "duration=5ms", "--set", "metrics.warmup=0s"]


def _sigint_default():
    """A child started by a shell in the background inherits SIGINT ignored (and Python then
    keeps ignoring it); a user's terminal delivers it. Give the child the user's case."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_a_run_within_a_second(tmp_path):
    out = tmp_path / "o"
    p = subprocess.Popen([str(ECNLAB), "run", *LONG, "--out", str(out)], stderr=subprocess.PIPE, text=True, cwd=ROOT,
                         preexec_fn=_sigint_default)
    deadline = time.monotonic() + 60
    while _cpu_seconds(p.pid) < 2.0:  # well into the simulation: set-up takes a fraction of this
        assert p.poll() is None and time.monotonic() < deadline, "the run ended before it could be interrupted"
        time.sleep(0.02)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=30)
    took = time.monotonic() - t0
    err = p.stderr.read()
    assert rc == 130, err
    assert took < 1.0, f"took {took:.2f} s to stop"
    assert err.strip() == "ecnlab: interrupted"
    assert not out.exists(), "an interrupted run must leave no result directory"


# tcn-static with a time series every 10 us: about 4 s, half of it writing 40 MB of results.
SLOW_WRITE = ["tcn-static", "--set", "metrics.sample_interval=10us"]


# The moments, by what the run has written into its temporary directory beside --out: the
# directory alone (simulating), the first file, the time series (40 MB, being written).
MOMENTS = [None, "scenario.json", "timeseries.csv"]  # just before the rename: test_write_faults.py


@pytest.mark.parametrize("written", MOMENTS)
def test_ctrl_c_at_any_moment_leaves_the_old_result_or_the_new_one(tmp_path, written):
    """Results are written aside and renamed into place whole: an interruption, even while
    the files are written, leaves the earlier complete result (with nothing of the new run
    beside it) or the new one (with nothing of the old), and no temporary directory."""
    out = tmp_path / "o"
    run_cli("run", *SHORT, "--seed", "5", "--pcap", "all", "-q", "--out", out)
    old = {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()}
    p = subprocess.Popen([str(ECNLAB), "run", *SLOW_WRITE, "-q", "--out", str(out)], stderr=subprocess.PIPE,
                         text=True, cwd=ROOT, preexec_fn=_sigint_default)
    deadline = time.monotonic() + 60
    while not [d for d in tmp_path.glob(".o.ecnlab-*") if written is None or (d / written).exists()]:
        assert p.poll() is None and time.monotonic() < deadline, "the run ended before that moment"
        time.sleep(0.005)
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=60)
    err = p.stderr.read()
    assert os.listdir(tmp_path) == ["o"], "a temporary directory is left"
    if summary(out)["seed"] == 5:  # the old result, whole
        assert rc == 130 and err == "ecnlab: interrupted\n", (rc, err)
        assert {f.name: f.read_bytes() for f in out.iterdir() if f.is_file()} == old
        assert (out / "pcap").is_dir()
    else:  # the new one, whole (the signal came after the last rename)
        assert sorted(f.name for f in out.iterdir()) == ["flows.csv", "probes.csv", "scenario.json", "summary.json",
                                                          "timeseries.csv"]
        assert json.loads((out / "scenario.json").read_text())["metrics"]["sample_interval"] == "10us"


def test_a_rerun_replaces_the_earlier_result_whole(tmp_path):
    """No file of the earlier run survives beside the new one: not its captures, not its
    report (whose numbers would disagree with the new summary.json)."""
    out = tmp_path / "o"
    run_cli("run", *SHORT, "--pcap", "all", "--report", "-q", "--out", out)
    assert (out / "pcap").is_dir() and (out / "report.html").is_file()
    run_cli("run", *SHORT, "--seed", "3", "-q", "--out", out)
    assert sorted(f.name for f in out.iterdir()) == ["flows.csv", "probes.csv", "scenario.json", "summary.json",
                                                      "timeseries.csv"]
    assert summary(out)["seed"] == 3


def test_an_out_holding_other_files_is_refused_untouched(tmp_path):
    """ecnlab replaces its own results only: a directory with anything else is refused
    before the run, with one line, and left as it was."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    for cmd in (["run", *SHORT], ["advise", "--link-rate", "10Gbps", "--rtt", "p50=30us", "--validate", "none"]):
        p = run_cli(*cmd, "--out", out, check=False)
        assert p.returncode == 2 and p.stderr == (
            f"ecnlab: error: --out {out}: holds files that are not an ecnlab result (notes.txt); give a new or "
            "empty directory, or an earlier result to replace\n"), p.stderr
        assert os.listdir(out) == ["notes.txt"] and os.listdir(tmp_path) == ["mine"]
    # An empty directory is a fine --out.
    (out / "notes.txt").unlink()
    run_cli("run", *SHORT, "-q", "--out", out)
    assert (out / "summary.json").is_file()


def _cpu_seconds(pid: int) -> float:
    """CPU time a process has used: how far it has got, whatever else loads the machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run_on_a_terminal(args, until: str | None = None, cpu_seconds: float | None = None, timeout: float = 90):
    """Run ecnlab with stderr (and stdout) on a pseudo-terminal until it has printed
    ``until`` there, or has computed ``cpu_seconds`` (then it is past the point where a run
    shows its progress); return what it printed, then interrupt it."""
    master, slave = pty.openpty()
    p = subprocess.Popen([str(ECNLAB), *args], stdout=slave, stderr=slave, cwd=ROOT, preexec_fn=_sigint_default)
    os.close(slave)
    text = b""
    deadline = time.monotonic() + timeout
    while (until is None or until.encode() not in text) and (cpu_seconds is None or _cpu_seconds(p.pid) < cpu_seconds):
        assert time.monotonic() < deadline and p.poll() is None, text
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                text += os.read(master, 4096)
            except OSError:
                break
    p.send_signal(signal.SIGINT)
    p.wait(timeout=30)
    os.close(master)
    return text.decode(errors="replace")


def test_a_long_run_shows_progress_on_a_terminal_only(tmp_path):
    text = _run_on_a_terminal(["run", *LONG, "--out", str(tmp_path / "t")], until="flows done")
    assert "s simulated" in text and "ETA" in text and "flows done" in text, text
    # Well past the second after which a run shows its progress (its CPU time is its own,
    # whatever else loads the machine), -q has shown none.
    quiet = _run_on_a_terminal(["run", *LONG, "-q", "--out", str(tmp_path / "q")], cpu_seconds=2.5)
    assert "simulated" not in quiet, quiet
    # Not a terminal: nothing on stderr (the run is short, and long enough for every flow to
    # start, else a warning says how many did not).
    p = run_cli("run", *SHORT, "--set", "duration=0.6s", "--out", tmp_path / "p")
    assert p.stderr == ""


@pytest.mark.parametrize("setting, says", [
    ("marking.tcn.threshold=100", "`100` has no unit: a time needs one, e.g. `100us`"),
    ("topology.link_rate=25", "`25` has no unit: a rate needs one, e.g. `25Gbps`"),
    ("switch.buffer=1500", "`1500` has no unit: a size needs one"),
    ("topology.link_rate='1GBps'", "bytes per second"),
])
def test_a_bare_number_where_a_unit_belongs_is_refused(setting, says, tmp_path):
    p = run_cli("run", "tcn-static", "--set", setting, "--out", tmp_path / "o", check=False)
    assert p.returncode == 2, p.stderr
    assert says in p.stderr and f"(set by --set {setting})" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("setting, says", [
    ("duration=1979-05-27", "--set duration: `1979-05-27` is a TOML date or time, which no key takes"),
    ("duration=07:32:00", "--set duration: `07:32:00` is a TOML date or time"),
    ("marking.tcn.threshold=nan", "--set marking.tcn.threshold: `nan` is not a finite number"),
    ("flows.0.size=-inf", "--set flows.0.size: `-inf` is not a finite number"),
    ("claim=" + "[" * 1000 + "]" * 1000, "--set claim: nested more than 16 tables or arrays deep"),
    ("name=a\nb", "name: `a\\nb` is not a plain name"),  # a real newline, echoed escaped
])
def test_values_toml_holds_and_no_key_takes_are_one_line(setting, says, tmp_path):
    """TOML dates and times, nan and inf, arrays nested 1,000 deep (internal errors: JSON
    could not hold them, or Python's recursion limit), a newline in an echoed value (a
    second line): each one line, exit 2."""
    p = run_cli("run", "tcn-static", "--set", setting, "--out", tmp_path / "o", check=False)
    assert p.returncode == 2 and p.stderr.startswith("ecnlab: error: "), p.stderr
    assert says in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("setting, says", [
    ("transport.rto_min=0.1ns", "transport.rto_min: must be > 0 (times are whole nanoseconds)"),
    ("transport.dupack_thresh=0", "transport.dupack_thresh: must be >= 1"),
    ("transport.cc=dcqcn", None),  # a valid change, then DCQCN's own key below
])
def test_transport_errors_name_the_set_that_caused_them(setting, says, tmp_path):
    """The transport's and DCQCN's checks wrote `field must be ...` with no colon: the error
    did not name the --set behind it, as every other field's does."""
    args = ["check", "tcn-static", "--set", setting]
    if says is None:
        args += ["--set", "transport.dcqcn.g=2", "--set", "switch.pfc.enabled=true", "--set", "switch.pfc.xoff=50KB"]
        setting, says = "transport.dcqcn.g=2", "transport.dcqcn.g: 2 is not in (0, 1]"
    p = run_cli(*args, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"{says} (set by --set {setting})" in p.stderr, p.stderr


def test_units_a_user_would_type_are_accepted(tmp_path):
    """25G, 1min, 78µs, 10%, and sizes in packets of the scenario's MTU."""
    out = tmp_path / "o"
    run_cli("run", *SHORT, "--set", "topology.link_rate=10G", "--set", "marking.tcn.threshold=78µs",
            "--set", "duration=0.001min", "--set", "switch.buffer=200p", "-q", "--out", out)
    s = summary(out)
    assert s["sim_time_s"] == pytest.approx(0.06)
    p = run_cli("check", "ecnsharp-star", "--set", "traffic.0.load=40%")
    assert p.returncode == 0
    # 200 packets of 1500 B is 300 KB: a threshold of 300KB is at the buffer, refused.
    p = run_cli("check", "tcn-perport", "--set", "switch.buffer=200p", "--set", "marking.scheme=per_queue",
                "--set", "marking.threshold.k=300KB", check=False)
    assert p.returncode == 2 and "not below the port buffer switch.buffer = 300KB" in p.stderr, p.stderr
    # ... and with jumbo frames (MSS 8960, MTU 9000) the same 200p is 1.8 MB.
    run_cli("check", "tcn-perport", "--set", "switch.buffer=200p", "--set", "transport.mss=8960",
            "--set", "marking.scheme=per_queue", "--set", "marking.threshold.k=300KB")


def test_a_closed_pipe_is_no_error():
    for cmd in ([str(ECNLAB), "list", "-v"], [str(ECNLAB), "list", "--keys"]):
        p = subprocess.run(" ".join(cmd) + " | head -1", shell=True, capture_output=True, text=True, cwd=ROOT,
                           executable="/bin/bash")
        assert p.stderr == "", p.stderr
        assert len(p.stdout.splitlines()) == 1
        p = subprocess.run(" ".join(cmd) + " | head -1 >/dev/null; echo ${PIPESTATUS[0]}", shell=True,
                           capture_output=True, text=True, cwd=ROOT, executable="/bin/bash")
        assert p.stdout.strip() == "0" and p.stderr == ""


def test_bare_command_prints_help_and_version_works():
    p = run_cli()
    assert p.stdout.startswith("usage: ecnlab") and "run" in p.stdout and p.returncode == 0
    v = run_cli("-V").stdout
    assert v.startswith("ecnlab 0.") and "build" in v
    assert run_cli("--version").stdout == v


def test_an_unwritable_out_is_refused_before_the_run(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("")
    t0 = time.monotonic()
    p = run_cli("run", *LONG, "--out", afile / "o", check=False)
    assert time.monotonic() - t0 < 10, "the whole run happened first"
    assert p.returncode == 2
    assert p.stderr == f"ecnlab: error: --out {afile / 'o'}: cannot write there: Not a directory\n"


def test_a_name_never_leaves_the_output_root(tmp_path):
    for name in ["../escaped", "/tmp/abs", ".hidden", "a/b", ""]:
        p = subprocess.run([str(ECNLAB), "run", *SHORT, "--set", f"name='{name}'", "-q"], capture_output=True,
                           text=True, cwd=tmp_path)
        assert p.returncode == 2, (name, p.stderr)
        assert "name: " in p.stderr
    assert list(tmp_path.iterdir()) == [] and not Path("/tmp/abs").exists()


def test_result_files_are_group_readable_and_name_their_origin(tmp_path):
    out = tmp_path / "o"
    old = os.umask(0o022)
    try:
        run_cli("run", *SHORT, "--seed", "9", "--report", "--pcap", "all", "-q", "--out", out)
    finally:
        os.umask(old)
    assert (out / "report.html").is_file()  # written apart from the others: it was once 0600
    for f in out.rglob("*"):
        assert stat.S_IMODE(f.stat().st_mode) == (0o755 if f.is_dir() else 0o644), f
    s = summary(out)
    v = run_cli("-V").stdout.split()
    assert s["ecnlab"] == {"version": v[1], "build": v[3].rstrip(")")}
    assert json.loads((out / "scenario.json").read_text())["seed"] == 9


def test_special_files_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for cmd, path, says in [
        ("check", fifo, "is not a regular file"),
        ("check", "/dev/zero", "is not a regular file"),
        ("check", tmp_path, "is a directory"),
        ("sweep", fifo, "is not a regular file"),
    ]:
        extra = ["--dry-run"] if cmd == "sweep" else []
        p = subprocess.run([str(ECNLAB), cmd, str(path), *extra], capture_output=True, text=True, timeout=10)
        assert p.returncode == 2 and says in p.stderr and p.stderr.count("\n") == 1, (path, p.stderr)


def test_an_error_message_stays_short_whatever_the_input(tmp_path):
    huge = "9" * 100_000 + "parsecs"  # an argument is at most 128 KB (execve)
    p = run_cli("check", "tcn-static", "--set", f"marking.tcn.threshold={huge}", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert len(p.stderr) < 500, len(p.stderr)
    bad = tmp_path / "long.toml"
    bad.write_text((ROOT / "python/ecnlab/scenarios/tcn-static.toml").read_text()
                   + f'\n[[traffic]]\nkind = "poisson"\ncdf = "{"x" * 1_000_000}.cdf"\nload = 0.5\nflows = 1\n')
    p = run_cli("check", bad, check=False)
    assert p.returncode == 2 and len(p.stderr) < 500 and "characters" in p.stderr, p.stderr[:600]


@pytest.mark.parametrize("setting, field", [
    (["topology.hosts=65535"], "topology: this scenario needs at least 41.3 GB of memory (routes of 65536 nodes"),
    (["flows.0.count=4000000000", "flows.1.count=4000000000"], "flows: this scenario needs at least 8000.0 GB"),
    # A listed flow is a connection built before the run (10^7 took 11 GB in `check`); at
    # 200 B each, 10^8 were estimated at 20 GB and passed on a 24 GB machine, then were killed.
    (["flows.0.count=100000000"], "flows: this scenario needs at least 100.0 GB of memory (100000005 listed"),
])
def test_a_scenario_beyond_memory_is_refused_before_it_is_built(setting, field):
    """Estimated before anything is allocated: `check` answers at once, with one line."""
    env = dict(os.environ, ECNLAB_MEMORY_LIMIT=str(8 * 10**9))
    args = [a for s in setting for a in ("--set", s)]
    t0 = time.monotonic()
    p = subprocess.run([str(ECNLAB), "check", "tcn-static", *args], capture_output=True, text=True, env=env,
                       timeout=60)
    assert time.monotonic() - t0 < 5
    assert p.returncode == 2 and field in p.stderr and "more than the 8.0 GB available" in p.stderr, p.stderr
    # Without the override the machine's own memory is the bound: still refused, not killed.
    p = subprocess.run([str(ECNLAB), "check", "tcn-static", *args], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr


def test_the_memory_estimate_counts_a_fabrics_ports_and_routes():
    """An 80 x 80 leaf-spine (14,720 ports of 8 queues, each queue's FIFO built with 64
    slots; 80 next hops per leaf and remote host) takes ~0.48 GB in `check`. The estimate
    once counted 0.03 GB for it (and 0.1 GB for a 200 x 200 fabric that took 3 GB): now it
    refuses it under 0.3 GB, and, being a lower bound, lets it through at what it takes."""
    args = [str(ECNLAB), "check", "tcn-leafspine", "--set", "topology.leaves=80", "--set", "topology.spines=80"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ECNLAB_MEMORY_LIMIT=str(3 * 10**8)))
    assert p.returncode == 2 and "topology: this scenario needs at least" in p.stderr \
        and "switch ports of 8 queues" in p.stderr, p.stderr
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={k: v for k, v in os.environ.items() if k != "ECNLAB_MEMORY_LIMIT"})
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    p = subprocess.run(args, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ECNLAB_MEMORY_LIMIT=str(usage.ru_maxrss * 1024)))
    assert p.returncode == 0, (usage.ru_maxrss, p.stderr)


def test_the_memory_estimate_counts_a_time_series_as_written(tmp_path):
    """tcn-static sampled every 10 us writes 1.02 M time-series rows: `run` took 0.83 GB
    when the estimate said 0.2 GB (a row per queue of every link at 64 B), 0.40 GB once the
    CSV was written from the columns. Refused under 0.3 GB; run within what it took."""
    setting = ["--set", "metrics.sample_interval=10us"]
    p = subprocess.run([str(ECNLAB), "check", "tcn-static", *setting], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ECNLAB_MEMORY_LIMIT=str(3 * 10**8)))
    assert p.returncode == 2 and "metrics.sample_interval: this scenario needs at least" in p.stderr, p.stderr
    child = subprocess.Popen([str(ECNLAB), "run", "tcn-static", *setting, "-q", "--out", str(tmp_path / "r")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert usage.ru_maxrss * 1024 < 6 * 10**8, usage.ru_maxrss  # the rows are not copied again
    p = subprocess.run([str(ECNLAB), "check", "tcn-static", *setting], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ECNLAB_MEMORY_LIMIT=str(usage.ru_maxrss * 1024)))
    assert p.returncode == 0, (usage.ru_maxrss, p.stderr)


def test_the_memory_estimate_counts_generated_flows_as_written(tmp_path):
    """10^6 generated flows take ~0.8 GB through `ecnlab run` (~220 B each in the core, the
    rest their rows of flows.csv on the way). At 200 B a flow, 10^8 were estimated at 20 GB,
    passed on a 24 GB machine and were killed at 23.5 GB. Refused under 0.5 GB; run within
    what it took. An incast's count is its queries, and the error names them."""
    setting = ["--set", "traffic.0.flows=1000000", "--set", "duration=5ms", "--set", "metrics.warmup=0s"]
    p = subprocess.run([str(ECNLAB), "check", "ecnsharp-star", *setting], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ECNLAB_MEMORY_LIMIT=str(5 * 10**8)))
    assert p.returncode == 2 and "traffic[0].flows: this scenario needs at least 0.7 GB" in p.stderr, p.stderr
    child = subprocess.Popen([str(ECNLAB), "run", "ecnsharp-star", *setting, "-q", "--out", str(tmp_path / "r")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    p = subprocess.run([str(ECNLAB), "check", "ecnsharp-star", *setting], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, ECNLAB_MEMORY_LIMIT=str(usage.ru_maxrss * 1024)))
    assert p.returncode == 0, (usage.ru_maxrss, p.stderr)
    p = run_cli("check", "ecnsharp-sched", "--set", "traffic.0.queries=4294967296", check=False)
    assert p.returncode == 2 and "traffic[0].queries: this scenario needs at least" in p.stderr, p.stderr


def test_flows_after_the_end_are_listed_and_said(tmp_path):
    """200 flows asked, the run cut at 1 s: the 162 that would arrive later were missing
    from flows.csv and from every count. Now each is a row without a connection, counted in
    flows.not_started and total, and the run says so on stderr."""
    out = tmp_path / "r"
    p = run_cli("run", "tcn-isolation", "--set", "traffic.0.flows=200", "--set", "duration=1s", "-q", "--out", out)
    s = summary(out)["flows"]
    with open(out / "flows.csv") as f:
        rows = list(csv.DictReader(f))
    never = [r for r in rows if r["conn"] == ""]
    assert len(rows) == s["total"] == 200
    assert never and s["not_started"] == len(never) and all(float(r["start_s"]) >= 1.0 for r in never)
    assert all(r["finish_s"] == "" and r["acked_bytes"] == "0" for r in never)
    assert f"{len(never)} of 200 flows start at or after the run's end" in p.stderr, p.stderr
    # A fixed window (ecnsharp-incast's way) asks for no more than the window: counted, not warned.
    p = run_cli("run", "tcn-isolation", "--set", "traffic.0.flows=200", "--set", "duration=1s", "--set",
                "metrics.stop_when_done=false", "-q", "--out", tmp_path / "w")
    assert summary(tmp_path / "w")["flows"]["not_started"] == len(never) and p.stderr == "", p.stderr
