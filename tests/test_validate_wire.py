"""``ecnlab validate``'s wire rows: trains, the SYN timer, the lost segment's retransmission.

The reading of both engines' captures (``ecnlab.emulate.segments``) and the rows
(``validation.wire_rows``) are pure and checked anywhere: a simulator capture read back, a
train cut where the gap exceeds its threshold, faults that make the rows. Against the kernel
(root, under the suite's lock): a connection whose first two SYNs are lost, and a flow whose
last segment is lost, each through ``ecnlab validate``.
"""

import os
import sys
from pathlib import Path

import pytest

from ecnlab import api
from ecnlab import validation as val
from ecnlab.emulate import HEADER
from ecnlab.emulate import segments as sg

# Measures real time on this machine: run alone, not beside other tests (Makefile, `make test`).
pytestmark = pytest.mark.realtime

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_emulate import assert_nothing_left, needs_netns  # noqa: E402
from test_validate import _validate_when_the_kernel_is_free  # noqa: E402


def syn_scenario(drop_syns: int = 2) -> dict:
    """One 20 KB flow whose first ``drop_syns`` SYNs the switch loses."""
    return {
        "name": "validate-syn", "duration": "5s", "seed": 3,
        "topology": {"kind": "star", "hosts": 2, "link_rate": "100Mbps", "link_delay": "50us"},
        "transport": {"cc": "dctcp"},
        "flows": [{"src": 1, "dst": 0, "size": "20KB", "start": "10ms"}],
        "faults": {"drop_syns": drop_syns},
        "metrics": {"warmup": "0s"},
    }


def tlp_scenario() -> dict:
    """A flow of 8 segments of the kernel's (11584 B; the simulator's 1460-byte MSS makes 8
    too), all in the initial window, whose last segment the switch loses once; the linux
    profile's rto_min (200 ms), so the probe timeout is 2 SRTT + rto_min capped by the RTO."""
    return {
        "name": "validate-tlp", "duration": "2s", "seed": 3,
        "topology": {"kind": "star", "hosts": 2, "link_rate": "100Mbps", "link_delay": "50us"},
        "transport": {"cc": "dctcp"},
        "flows": [{"src": 1, "dst": 0, "size": "11584B", "start": "10ms"}],
        "faults": {"drop_byte": "11583B"},
        "metrics": {"warmup": "0s"},
    }


def _sim_segments(doc: dict) -> list:
    res = api.run(doc, pcap=[f"h{i}->s0" for i in range(doc["topology"]["hosts"])])
    assert set(res.pcaps) == {f"h{i}->s0" for i in range(doc["topology"]["hosts"])}
    return sorted((x for d in res.pcaps.values() for x in sg.from_pcap(d)), key=lambda x: x.t_ns)


def test_the_simulators_lost_syns_are_in_its_nic_capture():
    """Two SYNs lost: the simulator's sender (kernel line 6.18) sends three, 1 s apart
    (rto_syn, linear for the first tcp_syn_linear_timeouts), and the SYN-ACK answers the third."""
    segs = _sim_segments(syn_scenario())
    t = sg.syn_timing(segs, 1, 0)
    assert [round(x / 1e6) for x in t["syns_ns"]] == [0, 1000, 2000]
    assert 2000e6 < t["synack_ns"] < t["first_data_ns"] < 2001e6


def test_the_lost_tail_segment_is_sent_again_once():
    segs = _sim_segments(tlp_scenario())
    r = sg.retransmission_delay(segs, 1, 0, 11583)
    assert r is not None and r["after_last_ack_ns"] is not None
    # The probe timeout with one segment out: 2 SRTT + rto_min (200 ms), at most the RTO.
    assert 200e6 <= r["after_last_ack_ns"] < 203e6, r
    assert sum(1 for x in segs if x.src == 1 and x.payload and x.seq <= 11583 < x.seq + x.payload) == 2


def seg(t_us: float, src: int = 1, payload: int = 1448, **kw) -> sg.Seg:
    d = {"dst": 0, "sport": 40000, "dport": 5001, "seq": 0, "ack": 0, "flags": 0x10} | kw
    return sg.Seg(int(t_us * 1000), src, d["dst"], d["sport"], d["dport"], d["seq"], d["ack"], d["flags"], payload)


def test_a_train_ends_where_a_gap_exceeds_its_threshold():
    """At 100 Mbit/s a full frame takes 121 us; gaps up to 1.75 of that (212 us) keep a train
    going: 3 back to back (one after a 0 us gap, as tbf's bucket sends), a pause, 2, then 1.
    ACKs and another flow's segments neither extend nor break it."""
    segs = [seg(0), seg(0), seg(121), seg(121, payload=0), seg(150, sport=1), seg(600), seg(800), seg(1100)]
    assert sg.trains(segs, 100e6) == [3, 1, 2, 1]
    assert sg.trains(segs, 100e6, t_from=500_000) == [2, 1]
    f = sg.train_figures([3, 2, 1])
    assert f["mean"] == 2 and f["p90"] == 3 and f["per_segment"] == pytest.approx(14 / 6)


def test_wire_rows_compare_trains_syns_and_the_lost_segment():
    """Made-up captures: equal trains are within their band, a kernel whose second SYN
    retransmission comes 1 s after the first (linear timeouts) is not, and the lost segment's
    byte is counted past the agent's header on the kernel's side."""
    from ecnlab.emulate import resolve_scenario

    doc = resolve_scenario(api.validate(syn_scenario(), []))
    trains = [seg(4e6 + 1000 * k + 121 * i) for k in range(30) for i in range(4)]
    syn = lambda t, src=1, dst=0, sp=40000, dp=5001, fl=0x02: seg(t, src, 0, dst=dst, sport=sp, dport=dp,  # noqa
                                                                  flags=fl)
    sim = [syn(0), syn(1e6), syn(3e6), syn(3e6 + 100, 0, 1, 5001, 40000, 0x12), seg(3e6 + 200)] + trains
    emu = [syn(0), syn(1.03e6), syn(2.05e6), syn(2.05e6 + 100, 0, 1, 5001, 40000, 0x12), seg(2.05e6 + 200)] + trains
    rows = {r["metric"]: r for r in val.wire_rows(doc, sorted(sim, key=lambda x: x.t_ns), (4_000_000_000, None),
                                                  [(sorted(emu, key=lambda x: x.t_ns), (4_000_000_000, None))])}
    mean = rows["train length mean (h1, data segments back to back)"]
    assert mean["sim"] == mean["emu"] == pytest.approx(4.0) and mean["within"]
    assert rows["SYN 2 sent after the first SYN (h1->h0, 2 SYNs lost)"]["within"]
    third = rows["SYN 3 sent after the first SYN (h1->h0, 2 SYNs lost)"]
    assert (third["sim"], third["emu"], third["within"]) == (3000.0, 2050.0, False)

    doc = resolve_scenario(api.validate(tlp_scenario(), []))
    last = 11583
    s = [syn(0), seg(100, seq=1 + 10136, payload=1448), seg(200, 0, 0, dst=1, sport=5001, dport=40000),
         seg(200_400, seq=1 + 10136, payload=1448)]
    e = [syn(0), seg(100, seq=1 + 10136 + HEADER.size, payload=1448),
         seg(200, 0, 0, dst=1, sport=5001, dport=40000), seg(204_400, seq=1 + 10136 + HEADER.size, payload=1448)]
    rows = {r["metric"]: r for r in val.wire_rows(doc, s, (0, None), [(e, (0, None))])}
    r = rows[f"lost segment (byte {last}, h1->h0) sent again after the last ACK before it"]
    assert r["sim"] == pytest.approx(200.2) and r["emu"] == pytest.approx(204.2) and r["within"]
    # An ACK-clocked sender sends the segment just after the ACK before it (kernel 6.18 here):
    # that ACK is the last one before the probe, though it came before the first sending.
    e = [syn(0), seg(200, 0, 0, dst=1, sport=5001, dport=40000), seg(214, seq=1 + 10136 + HEADER.size, payload=1448),
         seg(206_014, seq=1 + 10136 + HEADER.size, payload=1448)]
    rows = {r["metric"]: r for r in val.wire_rows(doc, s, (0, None), [(e, (0, None))])}
    r = rows[f"lost segment (byte {last}, h1->h0) sent again after the last ACK before it"]
    assert r["emu"] == pytest.approx(205.814) and r["within"]


@needs_netns
def test_the_kernels_syn_timer_against_the_simulators(tmp_path):
    """Two SYNs lost at the switch. The kernel retransmits the first after TCP_TIMEOUT_INIT
    (1 s, within the band: the timer wheel makes it up to 1/8 late); its second comes 1 s
    later again, not 2 s: Linux 6.5 on keep the first ``tcp_syn_linear_timeouts`` (4) SYN
    timeouts linear (tcp_retransmit_timer), as the simulator's 6.18 line does."""
    r = _validate_when_the_kernel_is_free(tmp_path, scenario=syn_scenario())
    rows = {x["metric"]: x for x in r["rows"]}
    second = rows["SYN 2 sent after the first SYN (h1->h0, 2 SYNs lost)"]
    assert second["sim"] == pytest.approx(1000, abs=1) and second["within"], val.table(r)
    third = rows["SYN 3 sent after the first SYN (h1->h0, 2 SYNs lost)"]
    assert third["sim"] == pytest.approx(2000, abs=1), val.table(r)
    assert 1990 < third["emu"] < 2300 and third["within"], val.table(r)
    assert_nothing_left(os.getpid(), tmp_path)


@needs_netns
def test_the_kernels_tail_loss_probe_against_the_simulators(tmp_path):
    """The last of 8 segments lost once: the kernel sends it again 2 SRTT + rto_min (capped by
    the RTO) after the last ACK (tcp_schedule_loss_probe, one segment out), as the simulator."""
    r = _validate_when_the_kernel_is_free(tmp_path, scenario=tlp_scenario())
    rows = [x for x in r["rows"] if x["kind"] == "tlp_time"]
    assert len(rows) == 2 and all(x["sim"] and x["emu"] for x in rows), val.table(r)
    assert all(x["within"] for x in rows), val.table(r)
    # One probe and no timeout on both sides, the kernel's by its own MIB counters.
    counts = {x["metric"].split(",")[0]: (x["sim"], x["emu"], x["within"]) for x in r["rows"] if x["kind"] == "loss_events"}
    assert counts == {"tail loss probes sent": (1.0, 1.0, True), "retransmission timeouts": (0.0, 0.0, True)}, val.table(r)
    assert_nothing_left(os.getpid(), tmp_path)


def test_fault_counter_rows_hold_the_kernels_mib_to_the_simulators_counts():
    """Pure: the counts must be equal (whole events of a known loss); a kernel that also
    timed out fails the row; without drop_byte there are no such rows."""
    sim = {"flows": {"tlp_probes": 1, "timeouts": 0, "timeouts_after_finish": 0}}
    emu = lambda probes, rto: {"emulation": {"hosts": {"0": {}, "1": {"TcpExtTCPLossProbes": probes,  # noqa: E731
                                                                  "TcpExtTCPTimeouts": rto}}}}
    rows = val.fault_counter_rows(tlp_scenario(), sim, [emu(1, 0)])
    assert [(x["sim"], x["emu"], x["within"]) for x in rows] == [(1.0, 1.0, True), (0.0, 0.0, True)]
    rows = val.fault_counter_rows(tlp_scenario(), sim, [emu(1, 1)])
    assert [x["within"] for x in rows] == [True, False]
    assert val.fault_counter_rows(syn_scenario(), sim, [emu(1, 0)]) == []


def test_the_switch_counts_the_lost_byte_past_the_agents_header():
    """The kernel's stream carries the agent's header before the message: the emulated
    switch is told byte B + HEADER.size; no faults, no keys (the switch's defaults)."""
    from ecnlab.emulate import resolve_scenario, switch_ingress

    doc = resolve_scenario(api.validate(tlp_scenario(), []))
    assert switch_ingress(doc, 5) == {"capture_frames": 5,
                                      "faults": {"drop_syns": 0, "drop_byte": f"{11583 + HEADER.size}B"}}
    assert switch_ingress(resolve_scenario(api.validate(syn_scenario(), []))) == {"faults": {"drop_syns": 2}}
    assert switch_ingress(resolve_scenario(api.validate(syn_scenario(0), []))) == {}
