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
