"""``ecnlab estimate`` end to end: the result directory contract, the one-bottleneck answer
key through the command, bad input refused in one line, clustering deterministic, and the
same bytes from local threads and from a Dask cluster (a LocalCluster of processes)."""

import csv
import fnmatch
import json
import os

import pytest

from conftest import ROOT, run_cli, summary

FAT_TREE = """name = "ft4"
duration = "20ms"
[topology]
kind = "fat_tree"
k = 4
link_rate = "400Gbps"
link_delay = "1us"
host_rate = "100Gbps"
[switch]
buffer = "4MB"
[marking]
scheme = "per_queue"
[marking.threshold]
k = "200KB"
[transport]
cc = "dctcp"
[[traffic]]
kind = "poisson"
cdf = "websearch"
load = 0.5
flows = 300
"""

# What differs between two estimates of the same scenario: when and where they ran.
VOLATILE = ("wall_time_s", "ecnlab")


def _fabric(tmp_path):
    f = tmp_path / "ft4.toml"
    f.write_text(FAT_TREE)
    return f


def _same(a, b):
    """Two result directories hold the same estimate, byte for byte but for wall times."""
    for name in ("flows.csv", "links.csv", "scenario.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sa, sb = summary(a), summary(b)
    for s in (sa, sb):
        for k in VOLATILE:
            s.pop(k)
        s["estimate"].pop("stages_s")
        s["estimate"].pop("workers")
    assert sa == sb


def test_the_result_directory_is_whole_and_marked_approximate(tmp_path):
    from ecnlab.outdir import RESULT_ENTRIES

    out = tmp_path / "o"
    run_cli("estimate", _fabric(tmp_path), "--out", out, "-q")
    for n in os.listdir(out):
        assert any(fnmatch.fnmatchcase(n, e) for e in RESULT_ENTRIES), f"{n} is not in RESULT_ENTRIES"
    assert sorted(os.listdir(out)) == ["flows.csv", "links.csv", "scenario.json", "summary.json"]
    s = summary(out)
    assert s["approximate"] is True
    e = s["estimate"]
    assert set(e["stages_s"]) == {"decompose", "cluster", "simulate", "combine", "write", "summary"}
    assert all(t >= 0 for t in e["stages_s"].values())
    assert e["link_simulations"] == e["clusters"] <= e["links"] == 96  # a k = 4 fat-tree's 96 directed links
    assert e["clustering"]["threshold"] == 0.1 and "WMAPE" in e["clustering"]["distance"]
    assert e["workers"]["kind"] == "local"
    # Stock NICs: each sender's NIC simulation is capped (tests of the rule: window_cap.rs).
    nics = [r for r in csv.DictReader((out / "links.csv").open()) if r["port"].startswith("h")]
    assert e["window_cap"]["link_simulations_capped"] == len(nics) > 0 and "BDP" in e["window_cap"]["rule"].upper()
    assert 10 <= e["window_cap"]["segments_min"] <= e["window_cap"]["segments_max"] < 1000
    # The keys of `ecnlab run` where they apply, and flows.csv in a run's columns.
    run_cli("run", _fabric(tmp_path), "--out", tmp_path / "x", "-q")
    x = summary(tmp_path / "x")
    for k in ("scenario", "seed", "fct", "flows", "queues", "marks", "drops", "soundness"):
        assert k in s and type(s[k]) is type(x[k]), k
    header = lambda d: (d / "flows.csv").open().readline()  # noqa: E731
    assert header(out) == header(tmp_path / "x")
    rows = list(csv.DictReader((out / "flows.csv").open()))
    assert len(rows) == s["flows"]["total"] == 300
    assert s["flows"]["completed"] + s["flows"]["unfinished"] + s["flows"]["not_started"] == 300
    # A rerun replaces it; a directory of the user's is refused, untouched.
    run_cli("estimate", _fabric(tmp_path), "--out", out, "-q")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    p = run_cli("estimate", _fabric(tmp_path), "--out", mine, "-q", check=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "notes.txt" in p.stderr
    assert os.listdir(mine) == ["notes.txt"]


def test_the_summary_is_the_one_its_flows_give(tmp_path):
    """The estimate builds its summary from flows it makes one at a time (summary.rs, Flows):
    the summary the core builds from flows.csv as a list is the same, figure for figure."""
    from ecnlab import _core

    out = tmp_path / "o"
    run_cli("estimate", _fabric(tmp_path), "--out", out, "-q")
    s = summary(out)
    num = lambda v, t: t(v) if v != "" else None  # noqa: E731
    flows = [{"class": int(r["class"]), "size": num(r["size"], int), "start_s": float(r["start_s"]),
              "fct_us": num(r["fct_us"], float), "slowdown": num(r["slowdown"], float)}
             for r in csv.DictReader((out / "flows.csv").open())]
    m = {"scenario": s["scenario"], "seed": s["seed"], "sim_time_s": s["sim_time_s"],
         "measure_from_s": s["measure_from_s"], "packet_hops": 0, "flows": flows, "counters": [], "queues": [],
         "probes": [], "class_queue": [0]}  # one queue: every class in queue 0
    rebuilt = json.loads(_core.summary_from_measurements(json.dumps(m)))
    assert s["fct"]["all"]["count"] > 0
    for k in ("fct", "fct_by_class", "flows"):
        assert rebuilt[k] == s[k], k


def _star(tmp_path):
    """Eight senders, one flow each at a time, into one receiver: one bottleneck."""
    text = ('name = "one"\nduration = "50ms"\n[topology]\nkind = "star"\nhosts = 9\nlink_rate = "10Gbps"\n'
            'link_delay = "5us"\n[switch]\nbuffer = "200KB"\n[marking]\nscheme = "per_queue"\n'
            '[marking.threshold]\nk = "30KB"\n[transport]\ncc = "dctcp"\n')
    for i in range(80):
        text += (f'[[flows]]\nsrc = {1 + i % 8}\ndst = 0\nsize = "{1460 * (10 + (i * 37) % 140)}B"\n'
                 f'start = "{i * 100}us"\n')
    f = tmp_path / "star.toml"
    f.write_text(text)
    return f


def test_one_bottleneck_is_estimated_as_the_exact_run(tmp_path):
    """The answer key through the command: with one bottleneck, every flow's estimated FCT
    is the exact run's (the link simulation of the receiver's link is the exact run)."""
    star = _star(tmp_path)
    run_cli("estimate", star, "--out", tmp_path / "e", "--threshold", "0", "-q")
    run_cli("run", star, "--out", tmp_path / "x", "-q")
    est = list(csv.DictReader((tmp_path / "e" / "flows.csv").open()))
    exact = list(csv.DictReader((tmp_path / "x" / "flows.csv").open()))
    assert len(est) == len(exact) == 80
    slowed = [r for r in exact if float(r["slowdown"]) > 1.5]
    assert len(slowed) >= 5, "the flows meet at the bottleneck"
    for e, x in zip(est, exact):
        assert float(e["fct_us"]) == pytest.approx(float(x["fct_us"]), abs=1e-3), e["id"]
        assert float(e["ideal_fct_us"]) == pytest.approx(float(x["ideal_fct_us"]), abs=1e-3), e["id"]


@pytest.mark.parametrize("case", ["corpus", "rtt_variation", "threshold", "missing", "set", "window_cap"])
def test_bad_input_is_one_line_exit_2_and_no_directory(tmp_path, case):
    out = tmp_path / "o"
    args, want = {
        "corpus": ([ROOT / "tests" / "bad_inputs" / "scenarios" / "bare-number-rate.toml"], "bare-number-rate.toml"),
        "rtt_variation": (["ecnsharp-leafspine"], "rtt_variation: not supported by the estimate"),
        "threshold": ([_fabric(tmp_path), "--threshold", "-1"], "--threshold"),
        "missing": ([tmp_path / "nowhere.toml"], "no scenario file or built-in scenario named"),
        "set": ([_fabric(tmp_path), "--set", "topology.k=3"], "topology.k=3"),
        "window_cap": ([_fabric(tmp_path), "--window-cap", "bdp"], "--window-cap"),
    }[case]
    p = run_cli("estimate", *args, "--out", out, check=False)
    assert p.returncode == 2, p.stderr
    assert p.stdout == "" and p.stderr.count("\n") == 1 and want in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists()


def test_clustering_is_deterministic_and_stated(tmp_path):
    """The same clusters and the same estimate whatever the number of workers (jobs finish
    in another order); a larger threshold merges links, 0 simulates every one."""
    ft = _fabric(tmp_path)
    more = ["--set", "traffic.0.flows=1500"]
    run_cli("estimate", ft, *more, "--threshold", "0.5", "--workers", "1", "--out", tmp_path / "a", "-q")
    run_cli("estimate", ft, *more, "--threshold", "0.5", "--workers", "2", "--out", tmp_path / "b", "-q")
    _same(tmp_path / "a", tmp_path / "b")
    e = summary(tmp_path / "a")["estimate"]
    assert e["links_clustered_with_another"] > 0 and e["link_simulations"] < e["links"]
    links = list(csv.DictReader((tmp_path / "a" / "links.csv").open()))
    reps = {r["cluster"] for r in links}
    assert len(reps) == e["link_simulations"]
    assert all(r["simulated"] == "1" for r in links if r["port"] in reps)
    run_cli("estimate", ft, *more, "--threshold", "0", "--out", tmp_path / "c", "-q")
    e0 = summary(tmp_path / "c")["estimate"]
    assert e0["link_simulations"] == e0["links"] == e["links"] and e0["links_clustered_with_another"] == 0


def test_a_dask_cluster_gives_the_local_estimate(tmp_path):
    """The link simulations on Dask (a LocalCluster of two worker processes, ``--cluster
    local``) give the same bytes as this machine's threads."""
    pytest.importorskip("dask.distributed")
    ft = _fabric(tmp_path)
    run_cli("estimate", ft, "--workers", "2", "--out", tmp_path / "local", "-q")
    run_cli("estimate", ft, "--cluster", "local", "--workers", "2", "--out", tmp_path / "dask", "-q")
    _same(tmp_path / "local", tmp_path / "dask")
    w = summary(tmp_path / "dask")["estimate"]["workers"]
    assert w["kind"] == "dask" and w["workers"] == 2


def test_a_flows_file_beyond_the_guards_reader_leaves_its_per_flow_rules_unjudged(tmp_path, monkeypatch):
    """A fabric's flows.csv can be larger than ecnlab.inputs reads (64 MB): the estimate
    still finishes, and its soundness says which rules it could not judge and why."""
    import ecnlab.estimate
    import ecnlab.inputs

    monkeypatch.setattr(ecnlab.inputs, "MAX_FILE_BYTES", 1000)
    s = ecnlab.estimate.estimate(_star(tmp_path), tmp_path / "o", threshold=0)
    assert {"rto_stall", "lossless_timeouts"} <= set(s["soundness"]["not_judged"])
    assert "larger than the guard reads" in s["soundness"]["note"]
    assert (tmp_path / "o" / "summary.json").exists()


def test_advise_validates_with_the_estimate_beyond_exact_simulation(tmp_path, monkeypatch):
    """`advise --scenario fabric.toml` runs exactly while a run is within exact simulation,
    and estimates each candidate's runs once beyond it (the threshold lowered here so that a
    small fabric is beyond it), saying so; the estimates are what is ranked."""
    import ecnlab.estimate
    from ecnlab.advise import advise
    from ecnlab.advise.cli import build_parser, inputs_of
    from ecnlab.api import resolve

    f = _fabric(tmp_path)
    assert ecnlab.estimate.beyond_exact(resolve(str(f))) is None, "300 flows on 16 hosts are simulated exactly"
    monkeypatch.setattr(ecnlab.estimate, "EXACT_LIMIT_SEGMENT_HOPS", 1000)
    why = ecnlab.estimate.beyond_exact(resolve(str(f)))
    assert why is not None and "segment-hops, more than the 1e+03" in why
    out = tmp_path / "advice"
    a = build_parser().parse_args(["--scenario", str(f), "--schemes", "tcn,per_queue", "--flows", "60",
                                   "--budget", "10runs", "--seeds", "2", "--platform", "tc", "--out", str(out)])
    adv = advise(inputs_of(a), out, progress=False)
    assert adv["validation"]["engine"].startswith("ecnlab estimate (approximate")
    assert any("validated with ecnlab estimate" in n and "segment-hops" in n for n in adv["network"]["notes"])
    runs = sorted((out / "validation" / "estimates").glob("*/summary.json"))
    assert len(runs) >= 4, "two schemes' points on two seeds at least"
    assert all(json.loads(r.read_text())["approximate"] is True for r in runs)
    assert not (out / "validation" / "runs").exists(), "nothing ran exactly"
    ranked = [e for e in adv["schemes"] if e.get("candidate")]
    assert ranked and all(e["candidate_value"]["n"] >= 1 for e in ranked)


def test_the_calibration_runs_from_ecnlab_bench(tmp_path):
    """`ecnlab bench estimate` is the calibration benchmark (benches/estimate.py): one fabric,
    one scheme, at its quick scale, exact and estimated side by side, with the window cap the
    estimate ran with."""
    assert "--window-cap" in run_cli("bench", "estimate", "--help").stdout
    run_cli("bench", "estimate", "--quick", "--only", "ft128-nic-marking", "--schemes", "tcn", "--out", tmp_path)
    r = json.loads((tmp_path / "estimate-quick.json").read_text())["results"]
    assert [(x["fabric"], x["scheme"]) for x in r] == [("ft128-nic-marking", "tcn")]
    assert r[0]["exact"]["slowdown"]["all"]["n"] > 0 and r[0]["estimate"]["slowdown"]["all"]["n"] > 0
    assert r[0]["estimate"]["window_cap"]["link_simulations_capped"] == 0, "the NICs mark: nothing capped"
    assert "| ft128-nic-marking | tcn | all |" in (tmp_path / "estimate-quick.md").read_text()
