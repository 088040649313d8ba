"""`ecnlab advise`: the issue's question ("8 queues, SP + DWRR, 100 Gbps, RTTs of 20-200 us,
web search at 70 % load: TCN, ECN# or per-queue RED?") at a small scale, end to end; the
papers' rules for the starting points; the RTT input; the platforms' files; bad input."""

import json
import tomllib

import pytest

from browser import check_page
from conftest import run_cli

QUESTION = ["--link-rate", "100Gbps", "--rtt", "min=20us,p50=30us,p90=90us,p99=200us", "--queues", "8",
            "--scheduler", "sp_dwrr", "--workload", "websearch", "--load", "0.7",
            "--schemes", "tcn,ecn_sharp,per_queue", "--flows", "60", "--seeds", "2", "--jobs", "2"]


@pytest.fixture(scope="module")
def advice_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("advise") / "a"
    run_cli("advise", *QUESTION, "--out", out, "-q")
    return out


def test_starting_points_follow_the_papers_rules(advice_dir):
    a = json.loads((advice_dir / "advice.json").read_text())
    s = {e["scheme"]: e for e in a["schemes"]}
    assert set(s) == {"tcn", "ecn_sharp", "per_queue"}
    # TCN §4.1 Eq. (3): T = RTT x lambda, RTT p90 = 90 us, lambda = 1 (DCTCP as the papers run it).
    assert s["tcn"]["params"] == {"marking.tcn.threshold": "90us"}
    assert "TCN §4.1" in s["tcn"]["source"]
    # TCN §2.1 Eq. (1): K = C x RTT x lambda = 12.5 GB/s x 90 us = 1,125,000 B.
    assert s["per_queue"]["params"] == {"marking.threshold.k": "1125000B"}
    # ECN# §3.4: ins_target from the high-percentile RTT, pst_interval around it, pst_target >= lambda x mean.
    e = s["ecn_sharp"]["params"]
    assert e["marking.ecn_sharp.ins_target"] == "90us" and e["marking.ecn_sharp.pst_interval"] == "90us"
    mean = a["inputs"]["rtt"]["mean_us"]
    assert float(e["marking.ecn_sharp.pst_target"].removesuffix("us")) == pytest.approx(mean, abs=1e-3)
    for x in s.values():
        assert x["rule"] and x["source"]


def test_recommendation_is_the_best_validated_point(advice_dir):
    a = json.loads((advice_dir / "advice.json").read_text())
    points = [(e["scheme"], p) for e in a["schemes"] for p in e["validated"]["points"]]
    assert len(points) == 12  # 3 schemes x 4 factors (quick)
    for _, p in points:
        m = p["metrics"]["fct_small_avg_us"]
        assert m["n"] == 2 and m["mean"] > 0 and m["ci95"] >= 0
    best = min(points, key=lambda sp: (sp[1]["metrics"]["fct_small_avg_us"]["mean"],
                                       sp[1]["metrics"]["fct_small_p99_us"]["mean"]))
    rec = a["recommendation"]
    assert rec["scheme"] == best[0] and rec["factor"] == best[1]["factor"]
    assert rec["small_avg_us"]["mean"] == best[1]["metrics"]["fct_small_avg_us"]["mean"]
    assert "margin_small_avg_us" in rec and rec["margin_small_avg_us"]["n"] == 2
    # The metrics are the runs' own: recompute one mean from the sweep's results.csv.
    import csv

    rows = list(csv.DictReader(open(advice_dir / "validation" / "results.csv")))
    v = [float(r["fct_small_avg_us"]) for r in rows if r["scheme"] == rec["scheme"]
         and float(r["factor"]) == rec["factor"]]
    assert rec["small_avg_us"]["mean"] == pytest.approx(sum(v) / len(v))


def test_scenario_toml_is_the_recommendation_and_valid(advice_dir):
    a = json.loads((advice_dir / "advice.json").read_text())
    rec = a["recommendation"]
    doc = tomllib.loads((advice_dir / "scenario.toml").read_text())
    assert doc["marking"]["scheme"] == rec["scheme"]
    assert doc["switch"]["queues"] == 8 and doc["switch"]["scheduler"]["kind"] == "sp_dwrr"
    assert doc["topology"]["link_rate"] == "100Gbps" and doc["traffic"][0]["load"] == 0.7
    for k, v in rec["params"].items():
        node = doc
        for part in k.split("."):
            node = node[part]
        assert node == v, k
    run_cli("check", advice_dir / "scenario.toml")


def test_platform_files_say_what_each_platform_can_express(advice_dir):
    a = json.loads((advice_dir / "advice.json").read_text())
    rec = a["recommendation"]
    by = {e["scheme"]: e["validated"]["params"] for e in a["schemes"]}
    sonic = json.loads((advice_dir / "config" / "sonic-config_db.json").read_text())
    k = int(by["per_queue"]["marking.threshold.k"].removesuffix("B"))
    prof = next(iter(sonic["WRED_PROFILE"].values()))
    if rec["scheme"] == "per_queue":
        assert "_comment" not in sonic
    else:  # a sojourn-time scheme: SONiC cannot express it, the file says so and gives per-queue ECN
        assert "no equivalent on sonic" in sonic["_comment"] and "per_queue" in sonic["_comment"]
    assert prof == {"ecn": "ecn_all", "wred_green_enable": "true", "green_min_threshold": str(k),
                    "green_max_threshold": str(k), "green_drop_probability": "100"}
    assert sorted(sonic["QUEUE"]) == [f"Ethernet0|{q}" for q in range(8)]
    tc = (advice_dir / "config" / "tc.sh").read_text()
    junos = (advice_dir / "config" / "junos.conf").read_text()
    assert "ets bands 8 strict 1" in tc
    if rec["scheme"] == "tcn":
        t_ns = round(float(rec["params"]["marking.tcn.threshold"].removesuffix("us")) * 1000)
        assert f"threshold {t_ns};" in junos
        assert "codel ce_threshold" in tc
    elif rec["scheme"] == "ecn_sharp":
        assert "latency-ecn" in junos and "persistent-queue part has no Junos equivalent" in junos
        assert "codel ce_threshold" in tc
    else:
        assert f"min {k} max {k + 1500}" in tc
        assert "no equivalent on junos" in junos
    nvue = (advice_dir / "config" / "nvue.sh").read_text()
    assert f"min-threshold {k}" in nvue and "probability 100" in nvue
    # A script runs as one: its shebang stays the first line, a platform's note after it.
    assert tc.startswith("#!/bin/sh\n") and nvue.startswith("#!/bin/sh\n"), (tc[:80], nvue[:80])


def test_advice_report_renders_with_every_figure(advice_dir, tmp_path):
    import re

    page = advice_dir / "report.html"
    figs = re.findall(r'src="(figures/[^"]+\.png)"', page.read_text())
    assert {"figures/check_vs_factor.png", "figures/check_vs_scheme.png", "figures/best_fct_by_queue.png"} <= set(figs)
    for f in figs:
        assert (advice_dir / f).stat().st_size > 5000
    dom = check_page(page, tmp_path / "advice.png", min_images=len(figs), height=2400)
    assert "Recommendation:" in dom


def test_rtt_file_reads_samples_and_ping_output(tmp_path):
    from ecnlab.advise.rtt import from_file, from_percentiles

    f = tmp_path / "rtt.txt"
    f.write_text("# measured\n20us\n30 us\n0.04ms\n\n100us\n")
    p = from_file(f)
    assert (p.min_us, p.samples, p.p99_us) == (20, 4, 100) and p.mean_us == pytest.approx(47.5)
    ping = tmp_path / "ping.txt"
    ping.write_text("PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
                    "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.051 ms\n"
                    "64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=0.120 ms\n\n"
                    "--- 10.0.0.2 ping statistics ---\n2 packets transmitted, 2 received, 0% packet loss, time 1001ms\n"
                    "rtt min/avg/max/mdev = 0.051/0.085/0.120/0.034 ms\n")
    q = from_file(ping)
    assert q.samples == 2 and q.min_us == pytest.approx(51) and q.p99_us == pytest.approx(120)
    r = from_percentiles("min=20us,p50=30us,p90=90us,p99=200us")
    assert (r.p50_us, r.p90_us, r.p99_us) == (30, 90, 200)
    # The mean of the piecewise-linear distribution through (0,20) (.5,30) (.9,90) (.99,200) (1,200).
    assert r.mean_us == pytest.approx(0.5 * 25 + 0.4 * 60 + 0.09 * 145 + 0.01 * 200)


def test_codel_times_round_to_the_kernels_tick():
    from ecnlab.advise.platforms import _codel_us

    assert _codel_us("45us") == "45.056us"  # 44 ticks of 1024 ns
    assert _codel_us("1us") == "1.024us"


@pytest.mark.parametrize("args,msg", [
    (["--rtt", "p50=fast"], "--rtt: p50:"),
    (["--rtt", "p50=30us", "--schemes", "tcn,bogus"], "--schemes: unknown scheme `bogus`"),
    (["--rtt", "p50=90us,p90=30us"], "percentiles must not decrease"),
    (["--rtt", "p50=30us,p50=90us"], "--rtt: p50 is given twice (as p50=30us and p50=90us)"),
    (["--rtt", "min=20us,p0=30us"], "--rtt: p0 is given twice"),
    (["--rtt", "p50=30us", "--queues", "100"], "--queues: switch.queues: 100 is not between 1 and 64"),
    (["--rtt", "p50=30us", "--workload", "nope"], "--workload: traffic[0].cdf: no built-in CDF named 'nope'"),
    (["--rtt", "p50=30us", "--seeds", "0"], "argument --seeds: 0 must be >= 1"),
    (["--rtt", "p50=30us", "--flows", "0"], "argument --flows: 0 must be >= 1"),
    (["--rtt", "p50=30us", "--load", "1.5"], "--load: 1.5 is not in (0, 1]"),
    # K = 100 Gbps x 30 us = 375 KB cannot mark in a 10 KB buffer, nor be configured.
    (["--rtt", "p50=30us", "--buffer", "10KB", "--validate", "none"],
     "--buffer 10KB: the starting marking.threshold.k of per_queue (375000B, by its rule) is not below it"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, args, msg):
    p = run_cli("advise", "--link-rate", "100Gbps", *args, "--out", tmp_path / "x", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert msg in p.stderr, p.stderr
    assert not (tmp_path / "x").exists(), "a refused advice must leave no directory"


def test_seeds_and_flows_are_the_counts_given(tmp_path):
    """A count is never 0-as-unset: --seeds 1 runs one seed (the API refuses 0 too)."""
    from ecnlab.advise import Inputs, advise
    from ecnlab.advise.rtt import from_percentiles
    from ecnlab.scenario import ScenarioError

    for field in ("seeds", "flows"):
        with pytest.raises(ScenarioError, match=f"--{field}: 0 must be at least 1"):
            advise(Inputs(link_rate="10Gbps", rtt=from_percentiles("p50=30us"), **{field: 0}), tmp_path / "a")
    assert not (tmp_path / "a").exists()


def test_without_a_check_nothing_is_called_validated(tmp_path):
    """--validate none: the platform files name the papers' starting points as such."""
    out = tmp_path / "a"
    run_cli("advise", "--link-rate", "10Gbps", "--rtt", "p50=30us", "--schemes", "tcn,per_queue", "--validate", "none",
            "--load", "1", "--out", out, "-q")
    a = json.loads((out / "advice.json").read_text())
    assert a["recommendation"] is None and a["inputs"]["load"] == 1
    for c in a["config"].values():
        assert "validated" not in c["note"], c["note"]
    note = json.loads((out / "config" / "sonic-config_db.json").read_text())["_comment"]
    assert "tcn (the first of --schemes; --validate none) has no equivalent on sonic" in note
    assert "per_queue, below, at its papers' starting point (unchecked)" in note


def test_rules_reproduce_the_ecn_sharp_testbed_settings():
    """ECN# §5.2 (10 Gbps, RTT 70-210 us, long-tailed; the distribution of the built-in
    ecnsharp-star: base 70 us plus 0/30/90/120/140 us at 0/50/80/90/100 %) set, by its §3.4
    rule of thumb, ins_target = pst_interval = 200 us, and DCTCP-RED-Tail's K = 250 KB.
    The rules give 190 us and 237.5 KB (5 % lower: p90 of this distribution is 190 us).
    pst_target: the paper's 85 us is below lambda x mean RTT at lambda = 1 (119 us here),
    i.e. the paper took DCTCP's smaller lambda for it; the rule's floor with lambda = 0.17
    (20 us) is far below 85. ecnlab starts at lambda = 1 (119 us) and sweeps down to 0.25x."""
    from ecnlab.advise.rtt import from_percentiles
    from ecnlab.advise.rules import starting_points

    rtt = from_percentiles("min=70us,p50=100us,p80=160us,p90=190us,p100=210us")
    s = {x.scheme: x.params for x in starting_points(["ecn_sharp", "per_queue"], 10e9, rtt, "dctcp", "sp")}
    ins = float(s["ecn_sharp"]["marking.ecn_sharp.ins_target"].removesuffix("us"))
    assert ins == pytest.approx(200, rel=0.06)
    assert float(s["ecn_sharp"]["marking.ecn_sharp.pst_interval"].removesuffix("us")) == pytest.approx(200, rel=0.06)
    assert int(s["per_queue"]["marking.threshold.k"].removesuffix("B")) == pytest.approx(250_000, rel=0.06)
    pst = float(s["ecn_sharp"]["marking.ecn_sharp.pst_target"].removesuffix("us"))
    assert pst == pytest.approx(119, rel=0.02) and 0.25 * pst < 85 < pst  # the paper's value is inside the sweep


def test_points_beyond_the_buffer_are_named_not_dropped(tmp_path):
    """An 800 KB buffer: per_queue's 2 x point (K = 1,043,368 B) cannot run. It was left out
    with no word; advice.json and the printout now say which point and why."""
    p = run_cli("advise", "--link-rate", "25Gbps", "--rtt", "p50=20us,p99=200us", "--queues", "8", "--buffer",
                "800KB", "--schemes", "per_queue", "--validate", "quick", "--flows", "30", "--seeds", "1",
                "--out", tmp_path / "a")
    adv = json.loads((tmp_path / "a" / "advice.json").read_text())
    (e,) = adv["schemes"]
    assert e["not_run"] == ["2.0 x: marking.threshold.k = 1043368B is not below the buffer, 800000 B"], e
    assert [pt["factor"] for pt in e["validated"]["points"]] == [0.25, 0.5, 1.0]
    assert "not run: 2.0 x: marking.threshold.k = 1043368B" in p.stdout, p.stdout


def test_a_platforms_fallback_at_the_edge_of_the_sweep_says_so(tmp_path):
    """The edge-of-sweep warning was the recommendation's alone: a platform that cannot
    express it got the next scheme's best point with no word that this point was the
    lowest factor swept."""
    from ecnlab.advise.platforms import write_configs

    ranked = [("tcn", {"marking.tcn.threshold": "50us"}), ("per_queue", {"marking.threshold.k": "30000B"})]
    sched = {"kind": "sp_dwrr", "strict": 1, "quantum": "1500B"}
    got = write_configs(tmp_path, ["nvue"], ranked, 8, sched, 12_000_000, edges={"per_queue": "lowest"})
    assert "per_queue, below. Its best point is the lowest factor swept" in got["nvue"]["note"], got
    script = (tmp_path / "nvue.sh").read_text()
    assert script.startswith("#!/bin/sh\n# the recommended tcn has no equivalent on nvue") and "lowest factor" in script
    got = write_configs(tmp_path, ["nvue"], ranked, 8, sched, 12_000_000)
    assert "factor swept" not in got["nvue"]["note"]


def test_an_interrupted_check_keeps_its_finished_runs_for_the_next(tmp_path):
    """Ctrl-C during the simulated check leaves no advice (nothing half written) but keeps
    the runs it finished beside --out; the next advise into the same --out reuses them (the
    same files, hard-linked) and, once complete, removes what was kept."""
    import os
    import signal
    import subprocess
    import time

    from conftest import ECNLAB, ROOT

    args = ["advise", "--link-rate", "25Gbps", "--rtt", "p50=20us,p99=200us", "--schemes", "per_queue",
            "--flows", "30", "--seeds", "3", "--jobs", "1", "-q", "--out", str(tmp_path / "a")]
    p = subprocess.Popen([str(ECNLAB), *args], stderr=subprocess.PIPE, text=True, cwd=ROOT,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".a.ecnlab-[0-9]*/validation/runs/[!.]*/summary.json")):
        assert p.poll() is None and time.monotonic() < deadline, "no run finished, or the advice ended first"
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=60) == 130, p.stderr.read()
    assert p.stderr.read() == "ecnlab: interrupted\n"
    kept = tmp_path / ".a.ecnlab-kept" / "validation" / "runs"
    assert sorted(x.name for x in tmp_path.iterdir()) == [".a.ecnlab-kept"], "no advice, no temporary directory"
    inodes = {r.name: (r / "summary.json").stat().st_ino for r in kept.iterdir() if (r / "summary.json").exists()}
    assert 1 <= len(inodes) < 12, inodes  # 4 factors x 3 seeds

    run_cli(*args)
    runs = tmp_path / "a" / "validation" / "runs"
    assert len(list(runs.iterdir())) == 12
    assert {k: (runs / k / "summary.json").stat().st_ino for k in inodes} == inodes, "kept runs were run again"
    assert sorted(os.listdir(tmp_path)) == ["a"]
