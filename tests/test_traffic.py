"""Realistic traffic end to end: generated workloads, persistent connections, PIAS, RTT
variation, incast, traces. Reduced scales so the whole file runs in seconds."""

import csv

import pytest

import ecnlab

QUICK = ["traffic.0.flows=600"]


def _small(res):
    return res.summary["fct"]["small"]


def test_tcn_isolation_small_flows_faster_with_tcn_than_standard_threshold():
    tcn = ecnlab.run("tcn-isolation", overrides=QUICK + ["traffic.0.load=0.7"])
    std = ecnlab.run("tcn-isolation", overrides=QUICK + ["traffic.0.load=0.7", "marking.scheme=per_queue"])
    for r in (tcn, std):
        assert r.summary["flows"]["completed"] == 600
        assert r.summary["flows"]["unfinished"] == 0
    assert _small(tcn)["avg_us"] < _small(std)["avg_us"]
    assert _small(tcn)["p99_us"] < _small(std)["p99_us"]


def test_persistent_connections_reuse_and_per_flow_connections_do_not():
    res = ecnlab.run("tcn-isolation", overrides=QUICK)
    conns = {f["conn"] for f in res.flows}
    assert len(conns) < 600  # messages share connections
    res = ecnlab.run("tcn-isolation", overrides=QUICK + ["host.persistent_connections=false"])
    assert len({f["conn"] for f in res.flows}) == 600


def test_pias_sends_the_first_bytes_through_the_strict_queue():
    res = ecnlab.run("tcn-priority", overrides=QUICK)
    q = {x["queue"]: x for x in res.summary["queues"] if x["port"] == "s0->h0"}
    assert q[0]["goodput_bps"] > 0  # PIAS high-priority bytes
    assert sum(q[i]["goodput_bps"] for i in range(1, 5)) > q[0]["goodput_bps"]
    off = ecnlab.run("tcn-priority", overrides=QUICK + ["host.pias_thresholds=[]"])
    q0 = [x for x in off.summary["queues"] if x["port"] == "s0->h0" and x["queue"] == 0]
    assert not q0 or q0[0]["goodput_bps"] == 0


def test_rtt_variation_raises_fct_of_isolated_small_flows(tmp_path):
    trace = tmp_path / "flows.csv"
    trace.write_text("start,src,dst,size\n" + "".join(f"{i * 0.001},1,0,1460\n" for i in range(50)))
    base = {
        "name": "rv", "duration": "1s",
        "topology": {"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "10us"},
        "traffic": [{"kind": "trace", "file": str(trace)}],
    }
    a = ecnlab.run(base)
    b = ecnlab.run(base | {"rtt_variation": {"mode": "per_flow", "delay": {"dist": "fixed", "value": "100us"}}})
    fa = [f["fct_us"] for f in a.flows]
    fb = [f["fct_us"] for f in b.flows]
    assert len(fa) == len(fb) == 50
    # exactly one extra 100 us per flow; the first also waits for its connection's handshake,
    # whose round trip crosses the added delay too (the pool reuses that connection after)
    extra = [y - x for x, y in zip(fa, fb)]
    assert abs(extra[0] - 200.0) < 1.0, extra[0]
    assert all(abs(e - 100.0) < 1.0 for e in extra[1:]), extra


def test_trace_replayed_exactly_and_flows_csv_documented(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("start,src,dst,size,class\n0.001,1,0,30000,0\n0.002,2,0,2000000,0\n")
    scn = tmp_path / "s.toml"
    scn.write_text(
        'name = "trace"\nduration = "1s"\n[topology]\nkind = "star"\nhosts = 3\n'
        'link_rate = "10Gbps"\nlink_delay = "5us"\n[[traffic]]\nkind = "trace"\nfile = "t.csv"\n'
    )
    res = ecnlab.run(str(scn))  # the trace path is relative to the scenario file
    assert [(f["src"], f["size"], f["start_s"]) for f in res.flows] == [(1, 30000, 0.001), (2, 2000000, 0.002)]
    out = res.write(tmp_path / "out")
    with open(out / "flows.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert set(rows[0]) >= {"id", "src", "dst", "size", "class", "start_s", "finish_s", "fct_us",
                            "ideal_fct_us", "slowdown", "timeouts"}
    assert float(rows[0]["slowdown"]) >= 1.0
    # summary.json's slowdowns are those of flows.csv, bucket by bucket (30 KB small, 2 MB medium).
    fct = res.summary["fct"]
    small, medium = (float(r["slowdown"]) for r in rows)
    assert (fct["small"]["avg_slowdown"], fct["small"]["p99_slowdown"]) == (small, small)
    assert (fct["medium"]["p50_slowdown"], fct["large"]["avg_slowdown"]) == (medium, None)
    assert fct["all"]["avg_slowdown"] == (small + medium) / 2


def test_incast_ecn_sharp_keeps_a_short_queue_without_drops():
    es = ecnlab.run("ecnsharp-incast")
    tail = ecnlab.run("ecnsharp-incast", overrides=["marking.scheme=per_queue"])
    codel = ecnlab.run("ecnsharp-incast", overrides=["marking.scheme=codel"])
    q = lambda r: next(x for x in r.summary["queues"] if x["port"] == "s0->h0")
    assert q(es)["avg_qlen_bytes"] < 0.6 * q(tail)["avg_qlen_bytes"]
    assert q(es)["drops"] < q(codel)["drops"]
    assert es.summary["counting"]["sent"] == (es.summary["counting"]["delivered"] + es.summary["counting"]["dropped"]
                                              + es.summary["counting"]["in_flight"])


def test_dcqcn_transport_runs_and_reacts_to_marks():
    res = ecnlab.run("tcn-buffer", overrides=["transport.cc=dcqcn", "duration=20ms"])
    q = res.summary["queues"][0]
    assert q["goodput_bps"] > 5e9
    assert q["marks"] > 0


@pytest.mark.parametrize("bad,fragment", [
    (["traffic.0.load=1.5"], "traffic[0].load"),
    (["traffic.0.cdf=websurch"], "websearch"),
    (["traffic.0.senders=[1, 99]"], "traffic[0].senders"),
])
def test_bad_traffic_is_named(bad, fragment):
    with pytest.raises(ecnlab.ScenarioError) as e:
        ecnlab.run("tcn-isolation", overrides=bad)
    assert fragment in str(e.value)
