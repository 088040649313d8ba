"""``[[traffic]]`` in ``ecnlab emulate``: the TCN testbed's request/response workload
(CDF-sized flows, Poisson arrivals, persistent connections, DSCP per flow by setsockopt).

- The emulation carries exactly the flows ``ecnlab run`` simulates for the same seed (the
  simulator's generator, through ``ecnlab-workload``).
- Live (root, namespaces): every flow completes, flows.csv has an FCT per flow, each
  flow's bytes are classified by its own DSCP at the switch, connections are reused, the run
  ends when the last flow is done, and nothing is left behind.
"""

from __future__ import annotations

import csv
import json
import os

import pytest

from ecnlab import api
from ecnlab import emulate as emu

from test_emulate import WHY_NOT, assert_nothing_left, needs_netns

# Measures real time on this machine: run alone, not beside other tests (Makefile, `make test`).
pytestmark = pytest.mark.realtime

CDF = """# test CDF: 2 KB .. 300 KB (bytes format)
2000 0
20000 0.5
100000 0.8
300000 1
"""


def traffic_scenario(cdf_path: str, flows: int = 50) -> dict:
    return {
        "name": "emu-traffic", "duration": "30s", "seed": 3,
        "topology": {"kind": "star", "hosts": 3, "link_rate": "100Mbps", "link_delay": "50us"},
        "switch": {"queues": 2, "buffer": "200KB", "scheduler": {"kind": "dwrr"}},
        "marking": {"scheme": "tcn", "tcn": {"threshold": "200us"}},
        "transport": {"cc": "ecn_star", "rto_min": "10ms"},
        "host": {"persistent_connections": True},
        "traffic": [{"kind": "poisson", "cdf": cdf_path, "load": 0.4, "flows": flows,
                     "senders": [1, 2], "receivers": [0], "classes": [0, 1]}],
        "metrics": {"sample_interval": "50ms"},
    }


def _rows(path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.fixture
def cdf(tmp_path):
    p = tmp_path / "small.cdf"
    p.write_text(CDF)
    return str(p)


def test_the_emulation_carries_the_simulators_flows(tmp_path, cdf):
    doc = emu.resolve_scenario(api.resolve(traffic_scenario(cdf, flows=40), []))
    msgs = emu.emulation_plan(doc, rate=None, seed=3)["messages"]
    res = api.run(doc, seed=3)
    res.write(tmp_path / "sim")
    sim = _rows(tmp_path / "sim" / "flows.csv")
    assert len(msgs) == len(sim) == 40
    for m, r in zip(msgs, sim):
        assert (m["id"], m["src"], m["dst"], m["class"], m["size"]) == \
            (int(r["id"]), int(r["src"]), int(r["dst"]), int(r["class"]), int(r["size"]))
        assert abs(m["start_s"] - float(r["start_s"])) < 1e-9
    # The emulator's ideal FCT is the simulator's to the ACK of the last byte, flow by flow:
    # an emulated FCT ends at the receiver's one-byte reply, as the textbook profile's at
    # the last ACK (the linux profile's ends at the receiver, one way less).
    rows = [{"src": m["src"], "dst": m["dst"], "size": m["size"], "fct_us": None} for m in msgs]
    emu._fill_ideal_fct(doc, rows)
    tb = emu.resolve_scenario(api.resolve(traffic_scenario(cdf, flows=40), ["transport.profile=textbook"]))
    to_ack = _rows(api.run(tb, seed=3).write(tmp_path / "sim-textbook") / "flows.csv")
    for row, r in zip(rows, to_ack):
        assert row["ideal_fct_us"] == pytest.approx(float(r["ideal_fct_us"]), rel=1e-9) and row["slowdown"] is None
    # A flow the topology cannot have leaves the columns empty with a warning, never an error.
    bad = [{"src": 0, "dst": 0, "size": 1000, "fct_us": 5.0, "ideal_fct_us": None, "slowdown": None}]
    emu._fill_ideal_fct(doc, bad)
    assert bad[0]["ideal_fct_us"] is None and bad[0]["slowdown"] is None
    # Dilated x10: the same flows, arrivals 10 x later.
    rate = emu.parse_rate_bps(doc["topology"]["link_rate"]) // 10
    slow = emu.emulation_plan(doc, rate=f"{rate}bps", seed=3)["messages"]
    assert [(m["src"], m["size"], m["class"]) for m in slow] == [(m["src"], m["size"], m["class"]) for m in msgs]
    assert all(abs(a["start_s"] - 10 * b["start_s"]) < 1e-6 for a, b in zip(slow, msgs))


@pytest.fixture(scope="module")
def switch_exe():
    if WHY_NOT is not None:
        pytest.skip(WHY_NOT)
    try:
        return emu.switch_binary(build=True)
    except emu.EmulationError as e:
        pytest.skip(str(e))


@needs_netns
def test_traffic_flows_complete_with_fcts_and_their_own_dscp(tmp_path, cdf, switch_exe):
    out = tmp_path / "emu"
    s = emu.emulate(traffic_scenario(cdf), out, rate=None)
    rows = _rows(out / "flows.csv")
    assert len(rows) == 50 and s["flows"]["total"] == 50
    assert s["flows"]["completed"] == 50 and s["flows"]["unfinished"] == 0, s["flows"]
    # An FCT can never beat the payload's serialization at the shaped rate, less what the
    # switch's token bucket lets through at once (its burst: the host's and the switch's
    # buckets in series pass the smaller of their two bursts at once, then the rate), plus a
    # base RTT (4 x 50 us); it should not take seconds either. (Without the burst, a 9,954-
    # byte flow on a warm connection took 911 us against a "floor" of 1,000.)
    report = json.loads((out / "emulation" / "switch-stats.json").read_text())
    burst = next(p for p in report["total"]["ports"] if p["name"] == "s0->h0")["shaper_burst_bytes"]
    assert 0 < burst < 10_000, burst
    for r in rows:
        fct = float(r["fct_us"])
        floor = max(int(r["size"]) - burst, 0) * 8 / 99.5e6 * 1e6 + 200
        assert floor * 0.95 < fct < 2e6, r
        # Slowdown against the simulator's ideal FCT (no slow start, line rate, each segment
        # serialised on both hops). Usually >= 1, but a flow's first packets may pass the
        # host's and the switch's token buckets (2.5-3 KB of burst each) without waiting, so
        # a small flow can finish under its ideal (0.945 seen on a loaded machine); what
        # holds is the physical floor above.
        ideal = float(r["ideal_fct_us"])
        assert float(r["slowdown"]) == pytest.approx(fct / ideal) and float(r["slowdown"]) > 0.95 * floor / ideal, r
    # The run ends when the last flow is done, not at the 30 s cap.
    assert s["sim_time_s"] < 10, s["sim_time_s"]
    # Persistent connections: far fewer connections than flows.
    tr = s["emulation"]["traffic"]
    assert tr["generated"] == tr["started"] == 50
    assert 2 <= tr["connections"] < 25, tr
    # DSCP per flow: the switch classified each class's bytes into its own queue.
    port0 = next(p for p in report["total"]["ports"] if p["name"] == "s0->h0")
    for c in (0, 1):
        want = sum(int(r["size"]) for r in rows if int(r["class"]) == c)
        got = port0["queues"][c]["deq_payload_bytes"]
        assert want > 0 and want <= got < 1.05 * want + 20_000, (c, want, got)
    assert s["emulation"]["receiver_ce_packets"] > 0 or s["marks"] == 0
    assert s["fct"]["all"]["count"] == 50
    assert_nothing_left(os.getpid(), out)


@needs_netns
def test_pias_sends_each_flows_first_bytes_in_the_strict_queue(tmp_path, cdf, switch_exe):
    """PIAS (host.pias_thresholds): the first 20 KB of every flow carry DSCP 0 (queue 0,
    strict), the rest the flow's class: the switch's per-queue payload shows the split."""
    doc = traffic_scenario(cdf, flows=30)
    doc["switch"] = {"queues": 3, "buffer": "200KB", "scheduler": {"kind": "sp_dwrr", "strict": 1}}
    doc["host"]["pias_thresholds"] = ["20KB"]
    doc["traffic"][0]["classes"] = [1, 2]
    out = tmp_path / "pias"
    s = emu.emulate(doc, out, rate=None)
    assert s["flows"]["completed"] == 30
    rows = _rows(out / "flows.csv")
    report = json.loads((out / "emulation" / "switch-stats.json").read_text())
    q = next(p for p in report["total"]["ports"] if p["name"] == "s0->h0")["queues"]
    head = sum(min(int(r["size"]), 20_000) for r in rows)
    assert head <= q[0]["deq_payload_bytes"] < head + 30 * 13 + 20_000, (head, q[0]["deq_payload_bytes"])
    for c in (1, 2):
        tail = sum(max(0, int(r["size"]) - 20_000) for r in rows if int(r["class"]) == c)
        assert tail - 20_000 <= q[c]["deq_payload_bytes"] <= 1.05 * tail + 20_000, (c, tail, q[c]["deq_payload_bytes"])
    assert_nothing_left(os.getpid(), out)
