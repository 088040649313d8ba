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
