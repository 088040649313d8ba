"""The command-line contract: `ecnlab run` and `ecnlab list`, output files, errors."""

import csv
import json

from conftest import run_cli, summary

FCT_KEYS = {"count", "avg_us", "p50_us", "p99_us", "avg_slowdown", "p50_slowdown", "p99_slowdown"}
QUEUE_KEYS = {"port", "queue", "goodput_bps", "avg_qlen_bytes", "max_qlen_bytes", "marks", "drops"}


def test_list_names_every_builtin_and_the_set_keys():
    p = run_cli("list")
    for name in ["tcn-static", "tcn-perport", "tcn-buffer"]:
        assert name in p.stdout
    k = run_cli("list", "--keys").stdout
    for key in ["marking.scheme", "marking.tcn.threshold", "marking.ecn_sharp.pst_interval",
                "switch.scheduler.kind", "transport.cc", "marking.threshold.k"]:
        assert key in k, key
    assert "ecn_sharp" in k and "sp_dwrr" in k


def test_default_run_writes_the_contract(tmp_path):
    out = tmp_path / "default"
    run_cli("run", "--out", out, "--quiet")
    s = summary(out)
    for key in ["scenario", "seed", "sim_time_s", "wall_time_s", "events", "packet_hops", "fct",
                "flows", "marks", "drops", "queues"]:
        assert key in s, key
    assert s["scenario"] == "tcn-static"
    assert set(s["fct"]) >= {"all", "small", "medium", "large"}
    for v in s["fct"].values():
        assert set(v) >= FCT_KEYS
    assert set(s["flows"]) >= {"completed", "unfinished", "timeouts"}
    assert s["events"] > 0 and s["packet_hops"] > 0
    assert s["queues"] and all(set(q) >= QUEUE_KEYS for q in s["queues"])
    for f in ["flows.csv", "timeseries.csv", "probes.csv", "scenario.json"]:
        assert (out / f).exists(), f
    with open(out / "timeseries.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {"t_s", "port", "queue", "goodput_bps", "qlen_bytes"} <= set(rows[0])


def test_same_seed_same_results_bit_for_bit(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b):
        run_cli("run", "tcn-perport", "--out", d, "--seed", "7", "--quiet", "--set", "duration=0.2s",
                "--set", "metrics.warmup=0.1s")
    run_cli("run", "tcn-perport", "--out", c, "--seed", "8", "--quiet", "--set", "duration=0.2s",
            "--set", "metrics.warmup=0.1s")
    sa, sb, sc = summary(a), summary(b), summary(c)
    for s in (sa, sb, sc):
        s.pop("wall_time_s")
    assert json.dumps(sa, sort_keys=True) == json.dumps(sb, sort_keys=True)
    assert (a / "flows.csv").read_text() == (b / "flows.csv").read_text()
    assert (a / "timeseries.csv").read_text() == (b / "timeseries.csv").read_text()
    assert sc["seed"] == 8


def test_scenario_json_runs_again_bit_for_bit(tmp_path):
    """scenario.json is the scenario exactly as run (overrides and seed in it): given back
    to ecnlab run, it gives the same results, through the same validation as a TOML file."""
    a, b = tmp_path / "a", tmp_path / "b"
    run_cli("run", "tcn-perport", "--out", a, "--seed", "7", "-q", "--set", "duration=0.05s",
            "--set", "metrics.warmup=0.01s", "--set", "flows.1.count=3")
    run_cli("run", a / "scenario.json", "--out", b, "-q")
    sa, sb = summary(a), summary(b)
    sa.pop("wall_time_s"), sb.pop("wall_time_s")
    assert json.dumps(sa) == json.dumps(sb)
    for f in ("flows.csv", "timeseries.csv", "probes.csv", "scenario.json"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    run_cli("check", a / "scenario.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "duration": 5}')
    p = run_cli("check", bad, check=False)
    assert p.returncode == 2 and p.stderr.startswith(f"ecnlab: error: {bad}: duration") and p.stderr.count("\n") == 1


def test_flows_csv_has_the_readme_columns(tmp_path):
    out = tmp_path / "f"
    run_cli("run", "tcn-static", "--set", "duration=5ms", "--set", "metrics.warmup=0s", "-q", "--out", out)
    with open(out / "flows.csv") as fh:
        header = next(csv.reader(fh))
    assert header == ["id", "spec", "conn", "src", "dst", "class", "size", "start_s", "finish_s", "fct_us",
                      "ideal_fct_us", "slowdown", "acked_bytes", "timeouts", "timeouts_after_finish", "retransmits",
                      "syn_timeouts", "tlp_probes", "undos"]


def _expect_error(args, fragment, tmp_path):
    out = tmp_path / "bad"
    p = run_cli("run", *args, "--out", out, check=False)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("ecnlab: error: ")
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in p.stderr
    assert not (out / "summary.json").exists()


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    _expect_error(["tcn-statik"], "did you mean 'tcn-static'", tmp_path)
    _expect_error(["tcn-static", "--set", "marking.tcn.treshold=100us"], "marking.tcn", tmp_path)
    _expect_error(["tcn-static", "--set", "marking.scheme=magic"], "marking.scheme", tmp_path)
    _expect_error(["tcn-static", "--set", "marking.tcn.threshold=fast"], "marking.tcn.threshold", tmp_path)
    _expect_error(["tcn-static", "--set", "switch.queues=0"], "switch.queues", tmp_path)
    _expect_error(["tcn-static", "--set", "flows.0.src=99"], "flows[0]", tmp_path)
    _expect_error(["tcn-static", "--set", "flows.9.src=1"], "tcn-static: --set flows.9: index 9 out of range", tmp_path)
    _expect_error(["tcn-static", "--set", "nonsense"], "key=value", tmp_path)
    _expect_error(["tcn-static", "--set", "switch.scheduler.kind=fifo"], "switch.scheduler.kind", tmp_path)
    bad = tmp_path / "broken.toml"
    bad.write_text("name = 'x'\nduration = [")
    _expect_error([bad], "not valid TOML", tmp_path)
    _expect_error([tmp_path / "missing.toml"], "no scenario file", tmp_path)


def test_failed_rerun_does_not_leave_an_old_summary(tmp_path):
    out = tmp_path / "r"
    run_cli("run", "tcn-buffer", "--out", out, "--quiet", "--set", "duration=2ms")
    assert (out / "summary.json").exists()
    p = run_cli("run", "tcn-buffer", "--out", out, "--set", "switch.buffer=0", check=False)
    assert p.returncode == 2
    # Validation fails before anything is written: the previous complete result stays intact.
    assert summary(out)["sim_time_s"] == 0.002


def test_emulate_is_wired_into_the_cli():
    p = run_cli("emulate", "--help")
    assert "usage: ecnlab emulate" in p.stdout
    assert "emulate" in run_cli("--help").stdout


def test_bench_is_wired_into_the_cli():
    p = run_cli("bench", "--help")
    assert "--quick" in p.stdout
