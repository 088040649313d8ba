"""CI smoke test of the benchmark suite: tiny scale, ecnlab only. Asserts only that
benches/run.py runs and reports the expected fields (no performance thresholds)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_quick_runs_and_reports(tmp_path):
    out = tmp_path / "results"
    p = subprocess.run(
        [sys.executable, str(ROOT / "benches" / "run.py"), "--quick", "--no-ns3", "--repeat", "1",
         "--out-dir", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    res = json.loads((out / "latest.json").read_text())
    assert res["quick"] is True
    names = {r["scenario"] for r in res["shared"]}
    assert {"dctcp-8long", "websearch-incast60", "tcn-leafspine-small"} <= names
    for r in res["shared"] + res["full"]:
        e = r["ecnlab"]
        for k in ("wall_s", "events_per_s", "hops_per_s", "sim_s_per_wall_s", "peak_rss_mb", "events", "packet_hops"):
            assert k in e, (r["scenario"], k)
        assert e["packet_hops"] > 0 and e["events"] > 0
    assert res["scaling"] and all(s["packet_hops"] > 0 for s in res["scaling"])
    # flows in progress, time-averaged: positive and at most the run's flow count
    for row in res["scaling"]:
        assert 0 < row["mean_active_flows"] <= row["flows"], row
    assert all(0 < r["mean_active_flows"] for r in res["full"])
    md = (out / "latest.md").read_text()
    assert "packet-hops/s" in md and "scaling" in md
    # every row says which command produced it
    assert all(r["command"].startswith("benches/run.py") for r in res["shared"] + res["full"] + res["scaling"])

    # --merge reruns one scenario, keeps the others' rows, and the report names both commands
    p = subprocess.run(
        [sys.executable, str(ROOT / "benches" / "run.py"), "--quick", "--no-ns3", "--repeat", "1", "--merge",
         "--only", "dctcp-8long", "--out-dir", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    merged = json.loads((out / "latest.json").read_text())
    assert {r["scenario"] for r in merged["shared"]} == names
    assert len(merged["scaling"]) == len(res["scaling"])
    by_name = {r["scenario"]: r for r in merged["shared"]}
    assert "--only dctcp-8long" in by_name["dctcp-8long"]["command"]
    assert "--only" not in by_name["websearch-incast60"]["command"]
    md = (out / "latest.md").read_text()
    assert "Merged from these commands" in md and "--only dctcp-8long" in md


def _bench_run_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benches" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # it puts benches/ on sys.path for scenarios.py, traffic.py
    return mod


def test_bench_jittered_draws_ecnlab_only(tmp_path):
    """The chaotic scenarios' jitter path (issue 21), ecnlab only, at quick scale: the draws
    run, their means and sds are reported, and without ns-3 nothing is judged."""
    out = tmp_path / "results"
    p = subprocess.run(
        [sys.executable, str(ROOT / "benches" / "run.py"), "--quick", "--no-ns3", "--repeat", "1",
         "--only", "tcn-leafspine-small", "--draws-ecnlab", "2", "--out-dir", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    (row,) = json.loads((out / "latest.json").read_text())["shared"]
    j = row["jitter"]
    assert len(j["draws"]["ecnlab"]) == 2 and j["draws"]["ns3"] == []
    fct = {a["item"]: a for a in j["agreement"]}["FCT avg all (us)"]
    assert fct["ecnlab_n"] == 2 and fct["ecnlab_mean"] > 0 and fct["ecnlab_sd"] is not None
    assert fct["ns3_mean"] is None and fct["verdict"] == "-"
    # draw 0 is the speed run's own trace
    assert j["draws"]["ecnlab"][0]["FCT avg all (us)"] == row["ecnlab_observables"]["fct"]["all"]["avg_us"]
    md = (out / "latest.md").read_text()
    assert "Agreement over jittered draws" in md and "(n=2)" in md
    # the second draw's trace moves every start by 1-10 ns and nothing else
    base = (out / "work" / "tcn-leafspine-small" / "flows-trace.csv").read_text().splitlines()
    moved = (out / "work" / "tcn-leafspine-small" / "draw-1" / "flows-trace.csv").read_text().splitlines()
    assert base[0] == moved[0] and len(base) == len(moved)
    for a, b in zip(base[1:], moved[1:]):
        a, b = a.split(","), b.split(",")
        assert a[1:] == b[1:]
        assert 1 <= round((float(b[0]) - float(a[0])) * 1e9) <= 10


def test_bench_jitter_rule():
    """The verdict over draws: the difference of the means against the tolerance, 'not firm'
    when the Welch 95 % interval reaches across it."""
    run = _bench_run_module()
    k = "FCT avg all (us)"
    firm_pass = run.jitter_agreement([{k: v} for v in (100, 101, 99, 100)], [{k: v} for v in (102, 101, 103)])
    assert firm_pass[0]["verdict"] == "PASS" and -0.1 < firm_pass[0]["ci95"][0] < firm_pass[0]["ci95"][1] < 0.1
    firm_fail = run.jitter_agreement([{k: v} for v in (100, 101, 99, 100)], [{k: v} for v in (130, 131, 129)])
    assert firm_fail[0]["verdict"] == "FAIL" and firm_fail[0]["ci95"][1] < -0.1
    loose = run.jitter_agreement([{k: v} for v in (100, 120, 80, 100)], [{k: v} for v in (105, 130, 85)])
    assert loose[0]["verdict"] == "PASS (not firm)"
    rows = [(0.000013388, 2, 8, 1460, 1), (0.5, 3, 9, 2920, 2)]
    assert run.jitter_rows(rows, 0, 1, 10) is rows
    assert run.jitter_rows(rows, 3, 1, 10) == run.jitter_rows(rows, 3, 1, 10) != run.jitter_rows(rows, 4, 1, 10)
