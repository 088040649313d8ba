"""`ecnlab report` and `--report` for runs and sweeps, fct_by_class in summary.json and
results.csv, and the seed-aggregated summary.csv. The pages are rendered by headless
Chromium (tests/browser.py): every figure listed must be on the page and loaded."""

import csv
import json
import math
import re
import shutil
from html import escape

import pytest

from browser import check_page
from conftest import run_cli, summary

SMALL = ["--set", "traffic.0.flows=150"]  # tcn-isolation: 4 DWRR queues, 4 classes, web search


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "iso"
    run_cli("run", "tcn-isolation", *SMALL, "--out", out, "--report", "-q")
    return out


def test_fct_by_class_partitions_the_flows_by_class_and_by_queue(run_dir):
    s = summary(run_dir)
    by = s["fct_by_class"]
    assert sorted(by["class"], key=int) == ["0", "1", "2", "3"]
    assert sorted(by["queue"], key=int) == ["0", "1", "2", "3"]  # default dscp_to_queue: class i -> queue i
    for b in ("all", "small", "medium", "large"):
        assert sum(g[b]["count"] for g in by["queue"].values()) == s["fct"][b]["count"]
    # Recompute one group from flows.csv: the same flows, the same average.
    with open(run_dir / "flows.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["fct_us"] and r["class"] == "2"
                and float(r["start_s"]) >= s["measure_from_s"] and int(r["size"]) <= 100_000]
    assert by["class"]["2"]["small"]["count"] == len(rows)
    assert by["class"]["2"]["small"]["avg_us"] == pytest.approx(sum(float(r["fct_us"]) for r in rows) / len(rows))


def test_fct_by_class_follows_dscp_to_queue(tmp_path):
    out = tmp_path / "map"
    run_cli("run", "tcn-isolation", *SMALL, "--set", "switch.dscp_to_queue=[0, 1, 1, 1]", "--out", out, "-q")
    by = summary(out)["fct_by_class"]
    assert sorted(by["queue"], key=int) == ["0", "1"]
    assert by["queue"]["1"]["all"]["count"] == sum(by["class"][c]["all"]["count"] for c in "123")


def test_run_report_renders_with_every_figure(run_dir, tmp_path):
    page = run_dir / "report.html"
    html = page.read_text()
    for name in ("fct_by_size", "fct_by_queue", "slowdown_cdf", "queues_over_time", "marks_drops"):
        assert (run_dir / "figures" / f"{name}.png").stat().st_size > 5000, name
        assert (run_dir / "figures" / f"{name}.svg").read_text().lstrip().startswith("<?xml"), name
        assert f'src="figures/{name}.png"' in html, name
    dom = check_page(page, tmp_path / "run.png", min_images=5)
    assert "FCT by queue and by class" in dom


def test_run_report_lists_pfc_pauses(tmp_path):
    # PFC on a shared buffer small enough that the senders are paused (and large enough that
    # nothing is lost); TCP Small Queues need NICs that PFC does not pause.
    out = tmp_path / "pfc"
    run_cli("run", "tcn-isolation", *SMALL, "--set", 'switch.pool="100KB"', "--set", "switch.pfc.enabled=true",
            "--set", "transport.small_queues=false", "--out", out, "--report", "-q")
    s = summary(out)
    assert s["drops"] == 0 and s["pfc"]["pauses"] > 0, s["pfc"]
    html = (out / "report.html").read_text()
    worst = max(s["pfc"]["queues"], key=lambda q: q["paused_fraction"])
    assert "PFC pauses" in html and f"<td>{escape(worst['port'])}</td>" in html


def test_report_command_rewrites_and_refuses_other_dirs(run_dir, tmp_path):
    (run_dir / "report.html").unlink()
    p = run_cli("report", run_dir)
    assert (run_dir / "report.html").exists() and "report.html" in p.stdout
    bad = run_cli("report", tmp_path, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "neither an ecnlab run" in bad.stderr


@pytest.mark.parametrize("text, says", [
    ('{"bad":', "not valid JSON (Expecting value at line 1, column 8)"),
    ("\xff\xfe", "not valid JSON"),
])
def test_a_damaged_summary_is_one_line_naming_the_file(tmp_path, text, says):
    d = tmp_path / "corrupt"
    d.mkdir()
    (d / "summary.json").write_text(text)
    p = run_cli("report", d, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"ecnlab: error: {d / 'summary.json'}: ") and says in p.stderr, p.stderr
    assert sorted(x.name for x in d.iterdir()) == ["summary.json"], "a failed report leaves nothing behind"


@pytest.mark.parametrize("name, text, says", [
    ("flows.csv", "id,start_s\n1,\"unclosed\n", "not a CSV file ecnlab wrote"),
    ("timeseries.csv", "t_s,port\n0.1,s0->h0\n", "has no column 'queue'"),
    ("flows.csv", b"\xff\xfe\x00bad", "not UTF-8 text"),
])
def test_a_damaged_csv_is_one_line_naming_the_file(run_dir, tmp_path, name, text, says):
    d = tmp_path / "damaged"
    shutil.copytree(run_dir, d)
    (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    p = run_cli("report", d, check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"ecnlab: error: {d / name}: ") and says in p.stderr, p.stderr


def test_a_report_replaces_the_earlier_figures_whole(run_dir):
    (run_dir / "figures" / "stale.png").write_bytes(b"old")
    run_cli("report", run_dir, "-q")
    assert not (run_dir / "figures" / "stale.png").exists()
    assert (run_dir / "figures" / "fct_by_size.png").is_file()
    assert not [x for x in run_dir.iterdir() if x.name.startswith(".")]


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    spec = d / "s.toml"
    spec.write_text('scenario = "tcn-isolation"\nseeds = 3\nset = { "traffic.0.flows" = 120 }\n'
                    '[grid]\n"marking.scheme" = ["tcn", "per_queue"]\n"traffic.0.load" = [0.3, 0.6]\n')
    run_cli("sweep", spec, "--out", d / "out", "--jobs", "2", "--report", "-q")
    return d / "out"


def _t975(df):
    return {1: 12.706, 2: 4.303, 3: 3.182}[df]


def test_sweep_results_have_fct_by_class_and_summary_aggregates_seeds(sweep_dir):
    with open(sweep_dir / "results.csv") as f:
        res = list(csv.DictReader(f))
    assert len(res) == 12
    r0 = res[0]
    s = json.loads((sweep_dir / "runs" / r0["key"] / "summary.json").read_text())
    assert float(r0["fct_small_avg_us[queue=1]"]) == pytest.approx(s["fct_by_class"]["queue"]["1"]["small"]["avg_us"])
    assert int(r0["fct_all_count[class=3]"]) == s["fct_by_class"]["class"]["3"]["all"]["count"]
    with open(sweep_dir / "summary.csv") as f:
        agg = list(csv.DictReader(f))
    assert len(agg) == 4 and all(a["seeds"] == "3" for a in agg)
    a = next(a for a in agg if a["marking.scheme"] == "tcn" and a["traffic.0.load"] == "0.6")
    v = [float(r["fct_small_p99_us"]) for r in res if r["marking.scheme"] == "tcn" and r["traffic.0.load"] == "0.6"]
    m = sum(v) / 3
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / 2)
    assert float(a["fct_small_p99_us_mean"]) == pytest.approx(m)
    assert float(a["fct_small_p99_us_ci95"]) == pytest.approx(_t975(2) * sd / math.sqrt(3))
    assert "fct_small_avg_us[queue=1]_mean" in a


def test_sweep_report_renders_each_swept_parameter(sweep_dir, tmp_path):
    page = sweep_dir / "report.html"
    html = page.read_text()
    figs = re.findall(r'src="(figures/[^"]+\.png)"', html)
    assert sorted(figs) == ["figures/vs_marking_scheme.png", "figures/vs_traffic_0_load.png"]
    for f in figs:
        assert (sweep_dir / f).stat().st_size > 5000 and (sweep_dir / f).with_suffix(".svg").exists()
    check_page(page, tmp_path / "sweep.png", min_images=2, height=1400)


def test_a_sweep_whose_runs_all_failed_has_a_report_saying_so(tmp_path):
    """Every run over its time limit: the sweep exits 1 and names each failure, and its
    report (which divided by the number of metrics measured, zero) says no run succeeded."""
    spec = tmp_path / "s.toml"
    spec.write_text('scenario = "tcn-isolation"\nseeds = [1]\n[grid]\n"marking.scheme" = ["tcn", "per_queue"]\n')
    p = run_cli("sweep", spec, "--out", tmp_path / "out", "--timeout", "10ms", "-q", check=False)
    assert p.returncode == 1, p.stderr
    p = run_cli("report", tmp_path / "out", check=False)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert "2 runs (0 ok, 2 failed)" in page and "No run succeeded" in page
