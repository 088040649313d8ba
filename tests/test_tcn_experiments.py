"""End-to-end checks of the three TCN experiments the simulator core must carry
(SPEC §6: tcn-static, tcn-perport, tcn-buffer). They assert the direction of each paper
finding with generous bands, not the paper's exact numbers."""

import pytest

import ecnlab


def _queues(res, port):
    return {q["queue"]: q for q in res.summary["queues"] if q["port"] == port}


def test_tcn_static_preserves_sp_wfq():
    res = ecnlab.run("tcn-static")
    q = _queues(res, "s0->h0")
    g0, g1, g2 = (q[i]["goodput_bps"] / 1e6 for i in range(3))
    assert 450 < g0 < 510, g0                       # the strict queue keeps its 500 Mbps
    assert abs(g1 - g2) / max(g1, g2) < 0.10, (g1, g2)  # WFQ: equal shares of the rest
    assert g0 + g1 + g2 > 900, (g0, g1, g2)         # the link stays busy
    assert res.summary["probe_rtt"]["count"] > 100


def test_tcn_static_tcn_beats_standard_threshold_on_queue3_rtt():
    tcn = ecnlab.run("tcn-static").summary["probe_rtt"]
    std = ecnlab.run("tcn-static", overrides=["marking.scheme=per_queue"]).summary["probe_rtt"]
    assert tcn["avg_us"] < 0.7 * std["avg_us"], (tcn, std)
    assert tcn["p99_us"] < std["p99_us"]


def _share_of_service2(scheme, n=8):
    res = ecnlab.run("tcn-perport", overrides=[f"marking.scheme={scheme}", f"flows.1.count={n}"])
    q = _queues(res, "s0->h0")
    return q[1]["goodput_bps"] / (q[0]["goodput_bps"] + q[1]["goodput_bps"])


def test_tcn_perport_per_port_ecn_breaks_fair_share():
    assert _share_of_service2("per_port") > 0.6


@pytest.mark.parametrize("scheme", ["per_queue", "tcn"])
def test_tcn_perport_per_queue_and_tcn_keep_fair_share(scheme):
    assert 0.45 < _share_of_service2(scheme) < 0.55


def test_tcn_buffer_dequeue_red_peaks_lower():
    peak = {}
    for scheme in ["per_queue", "dequeue_red", "tcn"]:
        res = ecnlab.run("tcn-buffer", overrides=[f"marking.scheme={scheme}"])
        peak[scheme] = max(q["max_qlen_bytes"] for q in res.summary["queues"])
    assert peak["dequeue_red"] < 0.9 * peak["per_queue"], peak
    assert peak["dequeue_red"] < 0.9 * peak["tcn"], peak


def _capacity_trace(overrides):
    """TCN Fig. 2 (§3.3): DWRR 2 queues, quantum 18 KB, 8 flows in queue 1, then 2 flows in
    queue 2 at 10 ms: queue 1's capacity drops from 10 to 5 Gbps."""
    doc = {
        "name": "capacity", "duration": "14ms",
        "topology": {"kind": "star", "hosts": 11, "link_rate": "10Gbps", "link_delay": "24.4us"},
        "switch": {"queues": 2, "buffer": "1MB", "scheduler": {"kind": "dwrr", "quantum": "18KB"}},
        "marking": {"ideal": {"k": "125KB", "estimator": "departure_rate"}, "mq_ecn": {"k": "125KB"}},
        "transport": {"profile": "textbook", "cc": "ecn_star"},  # TCN §3.3 is an ns-2 simulation
        "flows": [{"src": i, "dst": 0, "class": 0} for i in range(1, 9)]
        + [{"src": i, "dst": 0, "class": 1, "start": "10ms"} for i in (9, 10)],
        "metrics": {"sample_interval": "20us"},
    }
    ts = ecnlab.run(doc, overrides=overrides).timeseries
    return [(t, e) for t, p, q, e in zip(ts["t_s"], ts["port"], ts["queue"], ts["est_rate_bps"])
            if p == "s0->h0" and q == 0 and e is not None]


def test_tcn_capacity_estimators_follow_fig2():
    mq = [e for t, e in _capacity_trace(["marking.scheme=mq_ecn"]) if 0.0108 < t < 0.014]
    assert mq and abs(sum(mq) / len(mq) - 5e9) < 0.6e9          # MQ-ECN settles at 5 Gbps
    alg10 = [e for t, e in _capacity_trace(["marking.scheme=ideal", "marking.ideal.dq_thresh=\"10KB\""])
             if 0.0108 < t < 0.014]
    assert sum(alg10) / len(alg10) > 6e9                        # Alg. 1 at 10 KB overestimates
    alg40 = _capacity_trace(["marking.scheme=ideal", "marking.ideal.dq_thresh=\"40KB\""])
    early = [e for t, e in alg40 if 0.0100 < t < 0.0115]
    assert max(early) > 7e9                                      # 40 KB is still far from 5 Gbps
