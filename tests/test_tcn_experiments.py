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
