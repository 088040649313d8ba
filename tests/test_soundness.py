"""The soundness guard (ecnlab.soundness), shared by `ecnlab run`, the catalog and advise:
each rule flags the run it is about (the test fails without the rule), real runs that should
pass pass, and `ecnlab run` writes the verdict into summary.json."""

import json

import pandas as pd
import pytest
from conftest import run_cli

from ecnlab import soundness as S
from ecnlab.scenario import ScenarioError


def _summary(**kw):
    s = {"sim_time_s": 1.0, "measure_from_s": 0.0, "flows": {"completed": 10, "unfinished": 0, "timeouts": 0},
         "nics": [], "queues": [], "ports": [], "drops_by_reason": {}, "counting": {"sent": 1_000_000}}
    return s | kw


def _flags(run, rule):
    """The flags of ``rule`` when the whole guard judges ``run``."""
    return [f for f in S.assess(run).flags if f.rule == rule]


def test_every_rule_has_a_name_a_phrase_and_its_threshold_once():
    assert len(set(S.RULE_NAMES)) == len(S.RULES) == 10
    for r in S.RULES:
        assert r.phrase and r.__doc__ and len(r.__doc__) > 200, r.name  # the docstring says why
    with pytest.raises(ValueError, match="no soundness rule 'rto'"):
        S.assess(S.Run(_summary(), {}), skip=("rto",))


def test_nic_bound_and_nic_drops():
    nics = [{"port": "h1->s0", "avg_qlen_bytes": 273_000.0, "max_qlen_bytes": 4_000_000, "drops": 2819},
            {"port": "h2->s0", "avg_qlen_bytes": 3_000.0, "max_qlen_bytes": 9_000, "drops": 0}]
    run = S.Run(_summary(nics=nics), {"host": {"nic_marking": False}})
    bound, drops = _flags(run, "nic_bound"), _flags(run, "nic_drops")
    assert [f.at for f in bound] == ["NIC h1->s0"] and "273.0 KB on average" in bound[0].text
    assert [f.at for f in drops] == ["NIC h1->s0"] and drops[0].numbers["drops"] == 2819
    # With host.nic_marking the NIC marks: a standing queue there is sound, a drop is not.
    marked = S.Run(_summary(nics=nics), {"host": {"nic_marking": True}})
    assert not _flags(marked, "nic_bound") and _flags(marked, "nic_drops")


def test_nic_bound_counts_beyond_one_tso_skb_and_leaves_tcp_small_queues_alone():
    nics = [{"port": "h1->s0", "avg_qlen_bytes": 60_000.0, "max_qlen_bytes": 400_000, "drops": 0},
            {"port": "h2->s0", "avg_qlen_bytes": 90_000.0, "max_qlen_bytes": 400_000, "drops": 0}]
    textbook = S.Run(_summary(nics=nics), {"host": {"nic_marking": False}})
    assert [f.at for f in _flags(textbook, "nic_bound")] == ["NIC h1->s0", "NIC h2->s0"]
    # One 64 KiB skb in the NIC is the sender working as designed: 15 KB beyond it is the limit.
    tso = S.Run(_summary(nics=nics), {"host": {"nic_marking": False, "tso": "64KiB"},
                                      "transport": {"profile": "linux", "small_queues": False, "cc": "dctcp"}})
    [f] = _flags(tso, "nic_bound")
    assert f.at == "NIC h2->s0" and f.numbers["limit_bytes"] == 15_000 + 65_536
    # TCP Small Queues bound each socket's share of the NIC as on a real host: not flagged,
    # while a drop there still is.
    tsq = S.Run(_summary(nics=nics + [{"port": "h3->s0", "avg_qlen_bytes": 3e6, "max_qlen_bytes": 4e6, "drops": 5}]),
                {"host": {"nic_marking": False, "tso": "64KiB"},
                 "transport": {"profile": "linux", "small_queues": True, "cc": "dctcp"}})
    assert not _flags(tsq, "nic_bound") and [f.at for f in _flags(tsq, "nic_drops")] == ["NIC h3->s0"]


def test_cut_by_duration():
    run = S.Run(_summary(flows={"completed": 97, "unfinished": 2, "timeouts": 0}, sim_time_s=0.4), {})
    assert _flags(run, "cut_by_duration")[0].text == "cut by duration: 2 flows unfinished at 0.4 s (97 completed)"
    assert not _flags(S.Run(_summary(), {}), "cut_by_duration")


def _flows(rows):
    cols = ["id", "spec", "src", "dst", "class", "size", "start_s", "finish_s", "timeouts"]
    return [dict(zip(cols, r)) for r in rows]


def test_rto_stall_is_judged_per_flow_not_pooled():
    """dualq-nflows at paper scale: the lone Reno flow's 1,065 timeouts x 200 ms are 35 % of
    its 600 s; pooled with five DCTCP flows that never time out they are 5.9 %."""
    scen = {"transport": {"rto_min": "200ms"}}
    flows = _flows([(i, 0, i, 2, 0, None, 0.0, None, 0) for i in range(5)] + [(5, 1, 1, 3, 0, None, 0.0, None, 1065)])
    run = S.Run(_summary(sim_time_s=600.0, flows={"completed": 0, "unfinished": 0, "timeouts": 1065}), scen, flows)
    (f,) = _flags(run, "rto_stall")
    assert f.numbers["worst_flow"] == 5 and f.numbers["worst_share"] == pytest.approx(0.355)
    assert "1 of 6 flows" in f.text and "long-lived" in f.text
    pooled = 1065 * 0.2 / (6 * 600.0)
    assert pooled < 0.10  # the rule it replaces passed this run
    # A short flow with one timeout is a tail event, not a storm: it lives under 10 RTOs.
    short = _flows([(0, 0, 1, 0, 0, 50_000, 0.0, 0.21, 1)] + [(i, 0, 1, 0, 0, 50_000, 0.0, 0.001, 0) for i in (1, 2)])
    assert not _flags(S.Run(_summary(flows={"timeouts": 1}), scen, short), "rto_stall")


def _series(rows):
    return pd.DataFrame([(0.01 * (i + 1), "s0->h0", q, g, b) for i in range(10) for q, (g, b) in enumerate(rows)],
                        columns=["t_s", "port", "queue", "goodput_bps", "busy_fraction"])


def test_a_weighted_queue_below_its_due():
    scen = {"switch": {"queues": 3, "scheduler": {"kind": "sp_dwrr", "strict": 1, "weights": [2, 1]}}}
    summary = _summary(ports=[{"port": "s0->h0", "rate_bps": 10e9, "utilization": 1.0}])

    def run(rows, s=scen):
        return S.Run(summary, s, None, _series(rows).to_dict("list"))

    # Both weighted queues backlogged, the strict one sends 1 Gbps: queue 1 is owed 2/3 of 9
    # Gbps = 6 and gets 4.5 (50/50 against 2:1).
    (f,) = _flags(run([(1e9, 1.0), (4.5e9, 1.0), (4.5e9, 1.0)]), "scheduler_share")
    assert f.at == "queue s0->h0:1" and "got 4500 Mbps while backlogged (100 ms), owed at least 6000 Mbps" in f.text
    assert not _flags(run([(1e9, 1.0), (6e9, 1.0), (3e9, 1.0)]), "scheduler_share")
    # Bursts: queue 2 backlogged a fifth of the time takes its 3 Gbps of 9 then; queue 1,
    # backlogged 60 %, gets 5 Gbps, more than the 2/3 x (6 - 1) it is owed over its busy time.
    assert not _flags(run([(1e9, 1.0), (5e9, 0.6), (3e9, 0.2)]), "scheduler_share")
    # A queue backlogged under min_samples periods is not judged; nor PFC fabrics.
    assert not _flags(run([(1e9, 1.0), (0.1e9, 0.05), (5e9, 1.0)]), "scheduler_share")
    assert _flags(run([(1e9, 1.0), (0.1e9, 1.0), (5e9, 1.0)]), "scheduler_share")
    pfc = scen | {"switch": scen["switch"] | {"pfc": {"enabled": True}}}
    assert not _flags(run([(1e9, 1.0), (4.5e9, 1.0), (4.5e9, 1.0)], pfc), "scheduler_share")


def _dcqcn(queues, flows=None, pfc=True):
    scen = {"switch": {"queues": 2, "pfc": {"enabled": pfc, "queues": [1]}},
            "transport": {"cc": "dcqcn", "dcqcn": {"rto": "5ms"}}}
    summary = _summary(queues=queues, ports=[{"port": "s0->h0", "rate_bps": 10e9, "utilization": 0.5}])
    return S.Run(summary, scen, flows)


def _q(queue, drops=0, max_qlen=10_000):
    return {"port": "s0->h0", "queue": queue, "drops": drops, "max_qlen_bytes": max_qlen}


def test_drops_in_a_lossless_class():
    (f,) = _flags(_dcqcn([_q(1, drops=5), _q(0, drops=3)]), "lossless_drops")
    assert f.at == "queue s0->h0:1" and "despite PFC" in f.text  # queue 0 (ACKs, CNPs) is not lossless
    assert "with PFC off" in _flags(_dcqcn([_q(0, drops=3)], pfc=False), "lossless_drops")[0].text
    assert not _flags(_dcqcn([_q(1)]), "lossless_drops")
    assert not _flags(S.Run(_summary(queues=[_q(0, drops=9)]), {"transport": {"cc": "dctcp"}}), "lossless_drops")


def test_spurious_timeouts_and_deep_queues_in_a_lossless_class():
    """ecnsharp-dcqcn at paper scale, 90 % load: 786 timeouts over 20,000 flows with no drop,
    6 MB peaks at 10 Gbps (4.8 ms against go-back-N's 5 ms timer): they passed as lossless."""
    flows = _flows([(i, 0, 1, 0, 1, 50_000, 0.0, 0.01, 1 if i < 786 else 0) for i in range(20_000)])
    run = _dcqcn([_q(1, max_qlen=6_000_000)], flows)
    (t,) = _flags(run, "lossless_timeouts")
    assert "786 timeouts over 20000 flows (3.9%" in t.text and "spurious (the class dropped nothing)" in t.text
    (d,) = _flags(run, "lossless_deep_queue")
    assert d.numbers["delay_s"] == pytest.approx(4.8e-3) and "4.80 ms at 10 Gbps" in d.text
    few = _flows([(i, 0, 1, 0, 1, 50_000, 0.0, 0.01, 1 if i < 100 else 0) for i in range(20_000)])
    assert not _flags(_dcqcn([_q(1, max_qlen=500_000)], few), "lossless_timeouts")
    assert not _flags(_dcqcn([_q(1, max_qlen=500_000)], few), "lossless_deep_queue")
    # Class 0 (ACKs, CNPs) is not in the lossless class: its flows' timeouts are not judged.
    acks = _flows([(i, 0, 1, 0, 0, 50_000, 0.0, 0.01, 1) for i in range(100)])
    assert not _flags(_dcqcn([_q(1)], acks), "lossless_timeouts")


def _poisson(load, receivers=(0,), senders=(1, 2, 3, 4)):
    return {"traffic": [{"kind": "poisson", "load": load, "receivers": list(receivers), "senders": list(senders)}],
            "transport": {"mss": 1460}}


def _ports(util, rate=10e9, hosts=range(5)):
    return [{"port": f"s0->h{h}", "rate_bps": rate, "utilization": util if h == 0 else 0.01} for h in hosts]


def test_a_drop_rate_far_from_what_the_set_up_should_give():
    """ecnsharp-pias at paper scale, 10 % load: 212k drops and 1,320 timeouts per run passed."""
    pias = _summary(drops_by_reason={"queue_limit": 211_856}, counting={"sent": 48_000_000})
    (f,) = _flags(S.Run(pias, _poisson(0.1)), "light_load_loss")
    assert "211856 packets for want of room, 4.41e-03" in f.text
    # At high load the papers' baselines lose (the rule does not judge), and an AQM's drops of
    # non-ECT packets are its signal, not a want of room.
    assert not _flags(S.Run(pias, _poisson(0.9)), "light_load_loss")
    red = _summary(drops_by_reason={"dualq_classic": 211_856}, counting={"sent": 48_000_000})
    assert not _flags(S.Run(red, _poisson(0.1)), "light_load_loss")
    sound = _summary(drops_by_reason={"buffer_full": 8_000}, counting={"sent": 48_000_000})
    assert not _flags(S.Run(sound, _poisson(0.1)), "light_load_loss")


def test_a_utilization_far_from_what_the_set_up_should_give():
    flows = _flows([(i, 0, 1, 0, 0, 100_000, 0.1 * i, 0.1 * i + 0.01, 0) for i in range(11)])  # arrivals 0-1 s
    run = S.Run(_summary(sim_time_s=1.0, ports=_ports(0.35)), _poisson(0.6), flows)
    (f,) = _flags(run, "load_far_from_stated")
    assert f.numbers["measured"] == pytest.approx(0.35 * 1460 / 1500) and f.numbers["stated"] == 0.6
    assert not _flags(S.Run(_summary(sim_time_s=1.0, ports=_ports(0.6)), _poisson(0.6), flows),
                      "load_far_from_stated")
    # Over a window twice the arrivals' span, the same bytes are half the utilization.
    assert not _flags(S.Run(_summary(sim_time_s=2.0, ports=_ports(0.3)), _poisson(0.6), flows),
                      "load_far_from_stated")
    # A receiver on two cables (a topology file's "s0->h0#2"): its load is both cables' together,
    # (0.35 + 0.85) / 2 = 0.6 as stated; either cable alone would be far from it.
    two = _ports(0.35) + [{"port": "s0->h0#2", "rate_bps": 10e9, "utilization": 0.85}]
    assert not _flags(S.Run(_summary(sim_time_s=1.0, ports=two), _poisson(0.6), flows), "load_far_from_stated")
    two[0]["utilization"] = 0.05
    (f,) = _flags(S.Run(_summary(sim_time_s=1.0, ports=two), _poisson(0.6), flows), "load_far_from_stated")
    assert f.numbers["utilization"] == pytest.approx(0.45)
    # Senders' links limiting (one sender, four receivers): the receivers' links do not measure the load.
    assert not _flags(S.Run(_summary(ports=_ports(0.35)), _poisson(0.6, receivers=(0, 1, 2, 3), senders=(4,)), flows),
                      "load_far_from_stated")


# --------------------------------------------------------------------------------------
# Real runs


def test_ecnlab_run_writes_the_verdict_and_sound_runs_pass(tmp_path):
    out = tmp_path / "static"
    p = run_cli("run", "tcn-static", "--out", out)
    s = json.loads((out / "summary.json").read_text())["soundness"]
    assert s == {"sound": True, "rules": list(S.RULE_NAMES), "flags": []}
    assert "not sound" not in p.stdout
    for args in (["ecnsharp-sched", "--set", 'duration="0.1s"'],
                 ["tcn-isolation", "--set", "traffic.0.flows=300", "--set", "traffic.0.load=0.6"]):
        o = tmp_path / args[0]
        run_cli("run", *args, "--out", o)
        assert json.loads((o / "summary.json").read_text())["soundness"]["sound"], args
        assert S.assess(S.Run.from_dir(o)).sound  # the same rules read from the files


def test_real_unsound_runs_are_flagged(tmp_path):
    # The lone long flow of ecnsharp-sched overflows its unmarked NIC.
    out = tmp_path / "nic"
    p = run_cli("run", "ecnsharp-sched", "--set", 'marking.scheme="tcn"', "--set", 'duration="0.1s"',
                "--set", "host.nic_marking=false", "--out", out)
    flags = json.loads((out / "summary.json").read_text())["soundness"]["flags"]
    assert {f["rule"] for f in flags} == {"nic_bound", "nic_drops"} and "not sound (2 flags" in p.stdout
    assert any(f["at"] == "NIC h1->s0" and f["numbers"].get("drops", 0) > 0 for f in flags)
    # PIAS at 10 % load loses in its lowest priority.
    out = tmp_path / "pias"
    run_cli("run", "ecnsharp-pias", "--set", "traffic.0.load=0.1", "--set", "traffic.0.flows=800", "--set",
            "marking.scheme=tcn", "--out", out)
    assert [f["rule"] for f in json.loads((out / "summary.json").read_text())["soundness"]["flags"]] == \
        ["light_load_loss"]
    # One Reno flow against four DCTCP flows at a high step K: RTO-bound (the dual-AQM testbed's
    # Linux 3.2.18 had neither Tail Loss Probe nor RACK, which repair its tails before the RTO).
    out = tmp_path / "reno"
    run_cli("run", "dualq-nflows", "--set", "flows.0.count=4", "--set", 'duration="40s"',
            "--set", "transport.tlp=false", "--set", "transport.rack=false",
            "--set", 'marking.dualq.scalable.min_th="11719B"', "--set", 'marking.dualq.scalable.max_th="11719B"',
            "--out", out)
    (f,) = json.loads((out / "summary.json").read_text())["soundness"]["flags"]
    assert f["rule"] == "rto_stall" and f["numbers"]["worst_share"] > 0.2, f


def test_a_damaged_run_is_one_line():
    from pathlib import Path
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "summary.json").write_text('{"ports": [')
        with pytest.raises(ScenarioError, match=r"summary\.json: not valid JSON"):
            S.Run.from_dir(d)
        (d / "summary.json").write_text(json.dumps(_summary(flows={"timeouts": 3})))
        (d / "scenario.json").write_text(json.dumps({"transport": {"rto_min": "5ms"}}))
        (d / "flows.csv").write_text('id,start_s\n1,"unclosed\n')
        with pytest.raises(ScenarioError, match=r"flows\.csv: not a CSV file ecnlab wrote"):
            S.assess(S.Run.from_dir(d))
        (d / "flows.csv").unlink()
        (d / "scenario.json").write_text(json.dumps({"switch": {"queues": 2, "scheduler": {"kind": "dwrr"}}}))
        (d / "timeseries.csv").write_text('t_s,port,queue,goodput_bps,busy_fraction\n1,"unclosed\n')
        with pytest.raises(ScenarioError, match=r"timeseries\.csv: not a CSV file ecnlab wrote"):
            S.assess(S.Run.from_dir(d))
