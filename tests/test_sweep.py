"""Sweeps: results.csv, resume after a killed driver, failed points, Dask = local."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ecnlab
from ecnlab.sweep import Point, point_key

from conftest import ECNLAB, ROOT, run_cli


def _rows(out):
    with open(Path(out) / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def _write(path, text):
    path.write_text(text)
    return path


SMALL = """
scenario = "tcn-perport"
seeds = [1, 2]
set = {"duration" = "0.25s", "metrics.warmup" = "0.05s"}
[grid]
"marking.scheme" = ["per_port", "tcn"]
"flows.1.count" = [2, 8]
"""


def test_small_sweep_writes_results_csv(tmp_path):
    spec = _write(tmp_path / "s.toml", SMALL)
    out = tmp_path / "out"
    p = run_cli("sweep", spec, "--out", out, "--jobs", "2")
    assert "8 points" in p.stdout
    rows = _rows(out)
    assert len(rows) == 8
    assert {r["status"] for r in rows} == {"ok"}
    assert {(r["marking.scheme"], r["flows.1.count"], r["seed"]) for r in rows} == {
        (s, n, seed) for s in ("per_port", "tcn") for n in ("2", "8") for seed in ("1", "2")}
    cols = rows[0].keys()
    for c in ["fct_small_avg_us", "fct_small_p99_us", "fct_large_avg_us", "fct_all_avg_us", "marks", "drops",
              "timeouts", "probe_rtt_avg_us", "goodput_bps[s0->h0:0]", "goodput_bps[s0->h0:1]"]:
        assert c in cols, c
    for r in rows:
        d = out / "runs" / r["key"]
        assert (d / "summary.json").is_file() and (d / "flows.csv").is_file() and (d / "timeseries.csv").is_file()
        # The key is the hash of the resolved scenario and the seed, and differs per point.
        assert point_key(json.loads((d / "scenario.json").read_text()), int(r["seed"])) == r["key"]
        assert json.loads((d / "point.json").read_text())["params"]["marking.scheme"] == r["marking.scheme"]
    assert len({r["key"] for r in rows}) == 8
    # Per-port marking gives service 2 (8 flows) more than TCN does: the metrics are the runs'.
    g = {(r["marking.scheme"], r["flows.1.count"], r["seed"]): float(r["goodput_bps[s0->h0:1]"]) for r in rows}
    assert g[("per_port", "8", "1")] > g[("tcn", "8", "1")]


def test_sweep_api_returns_a_dataframe(tmp_path):
    pts = [Point("tcn-perport", ["duration=\"0.3s\"", f"flows.1.count={n}"], seed=1, params={"n": n}) for n in (2, 4)]
    df = ecnlab.sweep(pts, out=tmp_path / "api", jobs=1, progress=False)
    assert list(df["n"]) == [2, 4] and list(df["status"]) == ["ok", "ok"]
    assert df["goodput_bps[s0->h0:1]"].notna().all()


SLOW = """
scenario = "tcn-buffer"
set = {"duration" = "20ms"}
seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
[grid]
"marking.scheme" = ["per_queue"]
"""


def _done(out):
    runs = Path(out) / "runs"
    return {p.name: (p / "summary.json").stat().st_mtime_ns
            for p in runs.iterdir() if not p.name.startswith(".") and (p / "summary.json").is_file()} \
        if runs.exists() else {}


def _run_processes(driver: int) -> list[int]:
    """The driver's run processes (``sweep/worker.py``), by their command line."""
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == driver and b"_worker_main" in Path(f"/proc/{d}/cmdline").read_bytes():
                out.append(int(d))
        except (OSError, IndexError, ValueError):
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_killed_sweep_resumes_without_repeating_finished_runs(tmp_path):
    spec = _write(tmp_path / "slow.toml", SLOW)
    out = tmp_path / "out"
    proc = subprocess.Popen([str(ECNLAB), "sweep", str(spec), "--out", str(out), "--jobs", "1"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(_done(out)) < 3:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no run finished in 60 s"
        time.sleep(0.02)
    workers = _run_processes(proc.pid)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its worker processes, mid-sweep
    proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers):  # its run processes die with it
        assert time.monotonic() < deadline, "run processes outlived the driver"
        time.sleep(0.02)
    before = _done(out)
    assert 3 <= len(before) < 12, f"{len(before)} runs finished before the kill; the test needs a partial sweep"
    assert not (out / "results.csv").exists()  # it died before writing the table

    p = run_cli("sweep", spec, "--out", out, "--jobs", "1")
    assert f"12 runs: {len(before)} already done, {12 - len(before)} to run" in p.stderr
    assert f"{len(before)} already done, {12 - len(before)} ran, 0 failed" in p.stdout
    after = _done(out)
    assert len(after) == 12
    for key, mtime in before.items():  # finished runs were neither repeated nor rewritten
        assert after[key] == mtime, key
    assert [r["status"] for r in _rows(out)] == ["ok"] * 12
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".tmp-")]

    p = run_cli("sweep", spec, "--out", out, "--jobs", "1")  # a third run has nothing to do
    assert "12 already done, 0 ran" in p.stdout
    assert _done(out) == after


def test_failing_point_is_recorded_and_the_rest_go_on(tmp_path):
    # Points given to the API are not checked up front: a bad one is recorded, the rest run.
    base = ["duration=\"0.3s\""]
    pts = [Point("tcn-perport", base + ["marking.scheme=\"tcn\""], 1, {"variant": "good"}),
           Point("tcn-perport", base + ["marking.tcn.treshold=\"100us\""], 1, {"variant": "typo"}),
           Point("tcn-perport", base + ["marking.scheme=\"per_queue\""], 1, {"variant": "also_good"})]
    out = tmp_path / "out"
    df = ecnlab.sweep(pts, out=out, jobs=2, progress=False)
    assert list(df["status"]) == ["ok", "failed", "ok"]
    rows = {r["variant"]: r for r in _rows(out)}
    bad = rows["typo"]
    assert bad["status"] == "failed"
    assert "treshold" in bad["error"] and "\n" not in bad["error"]
    rec = json.loads((out / "failed" / f"{bad['key']}.json").read_text())
    assert rec["params"] == {"variant": "typo"} and "marking.tcn.treshold=\"100us\"" in rec["overrides"]
    assert "treshold" in rec["error"]


def test_bad_sweep_file_is_one_line_exit_2(tmp_path):
    spec = _write(tmp_path / "x.toml", 'scenario = "tcn-perport"\ngird = {}\n')
    p = run_cli("sweep", spec, "--out", tmp_path / "o", check=False)
    assert p.returncode == 2
    assert p.stderr.startswith(f"ecnlab: error: {spec}: unknown key `gird` (did you mean `grid`?)")
    assert p.stderr.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_dask_local_cluster_gives_the_same_results(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    spec = _write(tmp_path / "s.toml", SMALL)
    local = ecnlab.sweep(spec, out=tmp_path / "local", jobs=2, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        remote = ecnlab.sweep(spec, out=tmp_path / "dask", cluster=client, progress=False)
    drop = ["wall_time_s"]
    assert list(local.columns) == list(remote.columns)
    assert local.drop(columns=drop).equals(remote.drop(columns=drop))
    a, b = _rows(tmp_path / "local"), _rows(tmp_path / "dask")
    assert [{k: v for k, v in r.items() if k not in drop} for r in a] == \
        [{k: v for k, v in r.items() if k not in drop} for r in b]
    for r in a:  # identical per-run files too
        for f in ("flows.csv", "timeseries.csv"):
            assert (tmp_path / "local" / "runs" / r["key"] / f).read_bytes() == \
                (tmp_path / "dask" / "runs" / r["key"] / f).read_bytes()


# Sweep files are checked whole before anything runs: (file text, the error after "FILE: ").
BAD_SWEEPS = [
    ('scenario = "tcn-perport"\ngird = {}\n', "unknown key `gird` (did you mean `grid`?), expected one of"),
    ('scenario = "tcn-perport"\nseed = 3\n', "unknown key `seed` (did you mean `seeds`?)"),
    ('seeds = 3\n', "missing key `scenario`"),
    ('scenario = 5\n', "scenario: expected a built-in name or a file, found an integer"),
    ('scenario = "tcn-perportt"\n', "scenario: no scenario file or built-in scenario named 'tcn-perportt' "
                                    "(did you mean 'tcn-perport'?)"),
    ('scenario = "tcn-perport"\nname = 3\n', "name: expected a string, found an integer"),
    ('scenario = "tcn-perport"\nseeds = "3"\n', "seeds: expected a list of seeds or a count, found a string"),
    ('scenario = "tcn-perport"\nseeds = []\n', "seeds: an empty list: no runs"),
    ('scenario = "tcn-perport"\nseeds = 1000000000000\n', "seeds: 1000000000000 seeds, more than a sweep's 100,000 points"),
    ('scenario = "tcn-perport"\nseeds = 1000\n[grid]\n"flows.1.count" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n'
     '"duration" = ["1ms", "2ms", "3ms", "4ms", "5ms", "6ms", "7ms", "8ms", "9ms", "10ms", "11ms"]\n',
     "grid: 10 x 11 x 1000 seeds = 110,000 points, more than a sweep's 100,000"),
    ('scenario = "tcn-perport"\n[zip]\n"marking.tcn.threshold" = ["20us", "40us"]\n"marking.threshold.k" = ["30KB"]\n',
     'zip."marking.threshold.k": 1 values, but zip."marking.tcn.threshold" has 2: zipped lists move together'),
    ('scenario = "tcn-perport"\n[zip]\n"marking.tcn.threshold" = ["20us", "40"]\n',
     'zip."marking.tcn.threshold"[1]: marking.tcn.threshold: `40` has no unit'),
    ('scenario = "tcn-perport"\nseeds = 0\n', "seeds: a count must be >= 1"),
    ('scenario = "tcn-perport"\nseeds = [1, "2"]\n', "seeds[1]: expected an integer, found a string"),
    ('scenario = "tcn-perport"\nseeds = [1, -2]\n', "seeds[1]: -2 is not in 0..2^64"),
    ('scenario = "tcn-perport"\ngrid = [1]\n', "grid: expected a table of key = [values], found a list"),
    ('scenario = "tcn-perport"\n[grid]\n"marking.scheme" = []\n', 'grid."marking.scheme": an empty list'),
    ('scenario = "tcn-perport"\n[grid]\n"marking.scheme" = "tcn"\n',
     'grid."marking.scheme": expected a list of values, found a string'),
    ('scenario = "tcn-perport"\n[grid]\n"marking.scheme" = ["tcn", "tcnn"]\n',
     'grid."marking.scheme"[1]: marking.scheme: unknown variant `tcnn`'),
    ('scenario = "tcn-perport"\n[grid]\n"marking.tcn.treshold" = ["100us"]\n',
     'grid."marking.tcn.treshold"[0]: marking.tcn.treshold: unknown field `treshold`'),
    ('scenario = "tcn-perport"\n[grid]\n"flows.1.count" = [2, "many"]\n', 'grid."flows.1.count"[1]: flows[1].count'),
    ('scenario = "tcn-perport"\nset = 5\n', "set: expected a table of key = value"),
    ('scenario = "tcn-perport"\nset = ["duration"]\n', "set[0]: expected a table of key = value"),
    ('scenario = "tcn-perport"\nset = {"flows.7.count" = 3}\n', 'set."flows.7.count": --set flows.7: index 7 out of range'),
    ('scenario = "tcn-perport"\nset = {"duration" = "-1s"}\n', 'set.duration: duration: duration `-1s` is negative'),
    ('scenario = "tcn-perport"\nset = {"metrics.warmup" = "0.1s", "duration" = "0.1s"}\n',
     'set.duration: metrics.warmup: 200ms is not shorter than duration = 100ms'),
    ('scenario = "tcn-perport"\n[cases.variant]\n', "cases.variant: an empty table"),
    ('scenario = "tcn-perport"\n[cases]\nvariant = 3\n', "cases.variant: expected a table of name = "),
    ('scenario = "tcn-perport"\n[cases.variant]\ngood = {"marking.scheme" = "tcn"}\n'
     'typo = {"marking.tcn.treshold" = "100us"}\n',
     'cases.variant.typo."marking.tcn.treshold": marking.tcn.treshold: unknown field `treshold`'),
    # A bare number is refused as everywhere a unit belongs (it was taken as seconds).
    ('scenario = "tcn-perport"\ntimeout = 30\n', "timeout: `30` has no unit: a time needs one, e.g. `30s`"),
    ('scenario = "tcn-perport"\ntimeout = -1\n', "timeout: `-1` has no unit"),
    ('scenario = "tcn-perport"\ntimeout = "0s"\n', "timeout: '0s' must be a positive time"),
    ('scenario = "tcn-perport"\ntimeout = "fast"\n', "timeout: `fast` does not start with a number"),
    ('scenario = "tcn-perport"\ntimeout = "90"\n', "timeout: `90` has no unit: a time needs one"),
    ('scenario = "tcn-perport"\nretries = -1\n', "retries: expected an integer >= 0"),
    ('scenario = "tcn-perport"\n[grid\n', "not valid TOML"),
]


@pytest.mark.parametrize("text,expected", BAD_SWEEPS, ids=[f"bad{i}" for i in range(len(BAD_SWEEPS))])
def test_bad_sweep_files_name_file_and_field(tmp_path, text, expected):
    from ecnlab.scenario import ScenarioError
    from ecnlab.sweep import load_sweep, points_from_spec

    spec = _write(tmp_path / "bad.toml", text)
    with pytest.raises(ScenarioError) as e:
        points_from_spec(load_sweep(spec))
    msg = str(e.value)
    assert msg.startswith(f"{spec}: ") and "\n" not in msg, msg
    assert expected in msg, msg


def test_bad_sweep_file_leaves_an_existing_output_untouched(tmp_path):
    good = _write(tmp_path / "good.toml", 'scenario = "tcn-perport"\nset = {"duration" = "0.3s"}\n')
    out = tmp_path / "o"
    run_cli("sweep", good, "--out", out, "-q")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    bad = _write(tmp_path / "bad.toml", 'scenario = "tcn-perport"\n[grid]\n"marking.scheme" = ["tcn", "tcnn"]\n')
    p = run_cli("sweep", bad, "--out", out, check=False)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f'ecnlab: error: {bad}: grid."marking.scheme"[1]: marking.scheme: unknown variant `tcnn` ' \
        '(did you mean `tcn`?)\n'
    assert p.stderr.count("\n") == 1
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_a_sweep_clears_only_what_dead_drivers_left(tmp_path):
    spec = _write(tmp_path / "s.toml", 'scenario = "tcn-perport"\nset = {"duration" = "0.3s"}\n')
    runs = tmp_path / "o" / "runs"
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = runs / f".tmp-0123456789abcdef-{dead.pid}-00000000"  # its driver was killed mid-write
    live = runs / f".tmp-0123456789abcdef-{os.getpid()}-00000000"  # another sweep, still writing
    for d in (left, live):
        d.mkdir(parents=True)
        (d / "flows.csv").write_text("id\n")
    run_cli("sweep", spec, "--out", tmp_path / "o", "-q")
    assert not left.exists() and live.exists()
    assert [r["status"] for r in _rows(tmp_path / "o")] == ["ok"]


def test_sweep_command_line_limits_are_checked(tmp_path, capsys):
    from ecnlab.cli import main

    for bad, msg in (("0", "must be a positive time"), ("10", "`10` has no unit: a time needs one"),
                     ("soon", "`soon` does not start with a number"),
                     ("10 parsecs", "unknown time unit `parsecs`")):
        with pytest.raises(SystemExit) as e:
            main(["sweep", "x.toml", "--out", str(tmp_path / "o"), "--timeout", bad])
        assert e.value.code == 2
        assert msg in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["sweep", "x.toml", "--out", str(tmp_path / "o"), "--retries", "-1"])
    assert e.value.code == 2 and not (tmp_path / "o").exists()


def test_a_new_simulator_build_does_not_reuse_old_runs(monkeypatch):
    """The run key includes the core's fingerprint: results of another build are never
    taken for this one's."""
    import ecnlab.sweep.store as store

    doc = {"name": "x"}
    monkeypatch.setattr(store, "engine_id", lambda: "build-a")
    a = store.point_key(doc, 1)
    monkeypatch.setattr(store, "engine_id", lambda: "build-b")
    assert store.point_key(doc, 1) != a
    monkeypatch.undo()
    assert len(store.engine_id()) == 16 and store.engine_id() == store.engine_id()


def test_run_keys_name_scenario_files_by_content(tmp_path):
    """A CDF or trace enters the key by content: the same file elsewhere gives the same key
    (a moved store is reused); the same path with other content gives another (no stale
    results after editing a CDF in place)."""
    import os
    import time

    import ecnlab.sweep as sw

    cdf = "0 0\n10000 0.5\n100000 1\n"
    a, b = tmp_path / "a" / "w.cdf", tmp_path / "b" / "other.cdf"
    for f in (a, b):
        f.parent.mkdir()
        f.write_text(cdf)

    def doc(path):
        return {"name": "x", "traffic": [{"kind": "poisson", "cdf": str(path), "load": 0.5}]}

    assert sw.point_key(doc(a), 1) == sw.point_key(doc(b), 1)
    builtin = {"name": "x", "traffic": [{"kind": "poisson", "cdf": "websearch", "load": 0.5}]}
    assert sw.point_key(builtin, 1) != sw.point_key(doc(a), 1)
    before = sw.point_key(doc(a), 1)
    a.write_text(cdf.replace("0.5", "0.6"))
    os.utime(a, ns=(time.time_ns(), time.time_ns() + 10**9))  # a new mtime even on coarse clocks
    assert sw.point_key(doc(a), 1) != before


def test_a_worker_with_another_build_refuses_the_run():
    """On a cluster the driver's key promises results of its own build: a worker whose
    build differs answers with an error instead of a result."""
    from ecnlab.sweep.cluster import _execute_remote

    ok, msg = _execute_remote({"name": "x"}, 1, None, engine="0123456789abcdef")
    assert ok is False and "another ecnlab build" in msg and "0123456789abcdef" in msg


def test_sweep_from_a_plain_script_without_a_main_guard(tmp_path):
    """`ecnlab.sweep()` at the top level of a script: run processes never re-import it."""
    script = tmp_path / "plain.py"
    script.write_text(
        "import ecnlab\n"
        f"df = ecnlab.sweep([ecnlab.Point('tcn-static', ['duration=5ms', 'metrics.warmup=0s'], seed=s) "
        f"for s in (1, 2)], out={str(tmp_path / 'out')!r}, jobs=2, progress=False)\n"
        "print('statuses', sorted(df['status']))\n")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.count("statuses") == 1 and "['ok', 'ok']" in p.stdout
    assert "Traceback" not in p.stderr


ZIPPED = """
scenario = "tcn-perport"
set = {"duration" = "5ms", "metrics.warmup" = "0s"}
[grid]
"marking.scheme" = ["tcn", "per_queue"]
[zip]          # level i of each: TCN at 20/40/80 us, per-queue at 30/60/120 KB
"marking.tcn.threshold" = ["20us", "40us", "80us"]
"marking.threshold.k" = ["30KB", "60KB", "120KB"]
"""


def test_zipped_axes_move_together_and_dry_run_lists_the_points(tmp_path):
    spec = _write(tmp_path / "z.toml", ZIPPED)
    p = run_cli("sweep", spec, "--dry-run")
    points = [json.loads(line) for line in p.stdout.splitlines()]
    assert p.stderr.strip() == "6 points" and not (tmp_path / "out").exists()
    pairs = {(q["marking.scheme"], q["marking.tcn.threshold"], q["marking.threshold.k"]) for q in points}
    assert pairs == {(s, t, k) for s in ("tcn", "per_queue") for t, k in
                     (("20us", "30KB"), ("40us", "60KB"), ("80us", "120KB"))}
    # The points run as listed, each with its own results.csv columns.
    df = ecnlab.sweep(spec, out=tmp_path / "out", jobs=2, progress=False)
    assert len(df) == 6 and set(df["status"]) == {"ok"}
    assert {"marking.scheme", "marking.tcn.threshold", "marking.threshold.k"} <= set(df.columns)
    for r in _rows(tmp_path / "out"):
        doc = json.loads((tmp_path / "out" / "runs" / r["key"] / "scenario.json").read_text())
        assert doc["marking"]["tcn"]["threshold"] == r["marking.tcn.threshold"]
        assert doc["marking"]["threshold"]["k"] == r["marking.threshold.k"]


def test_store_keys_are_pinned(monkeypatch):
    """A run store outlives releases (paper-scale stores take days to fill): the key of a
    fixed document, seed and build must never change, or every stored run is lost."""
    import ecnlab.sweep.store as sw

    monkeypatch.setattr(sw, "engine_id", lambda: "pinned-engine-01")
    doc = {"name": "pin", "duration": "10ms", "marking": {"scheme": "tcn", "threshold": {"sojourn": "20us"}},
           "traffic": [{"kind": "poisson", "cdf": "websearch", "load": 0.5}], "x": [1, 2.5, True, None]}
    assert sw.point_key(doc, 7) == "a26ec6b9a2905a71"


def test_overrides_are_one_toml_line_that_parses_back_to_the_value():
    """`override` writes values with tomli_w; `--set` must read each back unchanged."""
    import tomllib

    from ecnlab.scenario import ScenarioError
    from ecnlab.sweep import override

    for v in (3, -0.5, 1e300, True, 'a "quoted"\nline', [1, [2.5, "x"]], {"a b": {"c": [1, {"d": "e"}]}}, [], {}):
        text = override("k", v)
        assert "\n" not in text and text.startswith("k=")
        assert tomllib.loads(f"v = {text[2:]}")["v"] == v, text
    for bad in (float("nan"), [1, float("inf")], object()):
        with pytest.raises(ScenarioError):
            override("k", bad)
