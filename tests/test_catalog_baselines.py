"""The catalog's baselines are what they claim to be (issue 17): each test runs the part of
a built-in scenario that a fix changed and checks the behaviour the paper's set-up implies,
so that it fails on the old scenario or rule."""

from ecnlab import api


def test_ecnsharp_sched_tcn_long_flow_is_switch_bound():
    # ECN# §5.4.3: TCN is the baseline over DWRR. Phase 1 (0-0.1 s) has one long flow alone
    # in queue 1: its bottleneck is the switch port, where TCN marks, so it fills the link
    # without loss. Without host.nic_marking its own 10 Gbps NIC is the bottleneck: an
    # unmarked 4 MB queue, slow start to an 8 MB window, ~2,800 drops, < 1 Gbps.
    r = api.run("ecnsharp-sched", overrides=['marking.scheme="tcn"', 'duration="0.1s"'])
    s = r.summary
    assert s["drops"] == 0, s["drops_by_reason"]
    assert s["long_flows"]["goodput_bps"][0] > 9.0e9, s["long_flows"]


def test_tcn_static_ideal_oracle_keeps_wfq_equal_share():
    # TCN §6.1.1: queues 2 and 3 share what the 500 Mbps strict flow leaves under WFQ with
    # equal weights; ideal ECN/RED knows their capacities (250 Mbps, K = 8 KB). The oracle
    # gives each queue the capacity granted over time, so marking does not undo WFQ. The
    # per-instant share it used before gave queue 2 97 Mbps and queue 3 376.
    r = api.run("tcn-static", overrides=['marking.scheme="ideal"'])
    g = {q["queue"]: q["goodput_bps"] for q in r.summary["queues"] if q["port"] == "s0->h0"}
    assert abs(g[1] - g[2]) <= 0.10 * max(g[1], g[2]), g
    assert g[1] + g[2] > 0.9 * (1e9 - g[0]) * 1460 / 1500, g


def _bytes(v):
    return float(str(v).strip('"').rstrip("B"))


def test_dualq_equal_moves_only_the_minimum_thresholds():
    # Dual AQM §IV-C, Fig. 10: "we scale the maximum marking probability by
    # MinThresh_Reno/BDP and altered only the minimum threshold": both RED slopes keep the
    # 2 BDP width of the Figs. 7-9 configuration while min_th_Reno = m BDP moves, with
    # max_p_Reno = 0.1 / m and max_p_DCTCP = 0.2 / m. (The catalog used to widen them, 2 m BDP.)
    from ecnlab.reproduce import CATALOG
    from ecnlab.reproduce.dualq import BDP

    pts = CATALOG["dualq-equal"].points("quick", [1])
    assert len({p.params["min_th_reno"] for p in pts}) >= 5
    for p in pts:
        m = p.params["min_th_reno"]
        doc = api.validate(p.scenario, p.overrides)["marking"]["dualq"]
        c, s = doc["classic"], doc["scalable"]
        assert abs(_bytes(c["min_th"]) - m * BDP) <= 1 and abs(_bytes(s["min_th"]) - m / 2 * BDP) <= 1, m
        for red in (c, s):
            assert abs(_bytes(red["max_th"]) - _bytes(red["min_th"]) - 2 * BDP) <= 1, (m, red)
        assert abs(float(c["max_p"]) - 0.1 / m) < 1e-9 and abs(float(s["max_p"]) - min(1.0, 0.2 / m)) < 1e-9
