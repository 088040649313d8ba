//! Slow start, completion, idleness: the harness's flows without loss.

use super::*;

#[test]
fn slow_start_completes_in_expected_rtts() {
    // IW 10, one ACK per segment: rounds of 10, 20, 40, 80 segments.
    let d = 25 * NS_PER_US; // RTT 50 us, 1 Tbps: serialization negligible (12 ns/packet)
    let rtt = 2 * d;
    for cc in [CcKind::NewReno, CcKind::EcnStar, CcKind::Dctcp, CcKind::DctcpDualq] {
        for (n, rounds) in [(1u64, 1u64), (10, 1), (11, 2), (30, 2), (31, 3), (70, 3), (71, 4), (150, 4)] {
            let mut net = Net::pass(&cfg(cc), d, TBPS);
            net.send(segs(n));
            net.run(u64::MAX);
            let f = net.finish.expect("flow finished");
            assert!(
                f >= rounds * rtt && f < rounds * rtt + 5 * NS_PER_US,
                "{cc:?} n={n}: finish {f} ns, want {rounds} RTTs"
            );
            assert_eq!(net.r.delivered_bytes(), segs(n));
            assert_eq!(net.s.stats().retransmitted_bytes, 0);
            assert_eq!(net.s.stats().sent_bytes, segs(n));
        }
    }
}

#[test]
fn partial_last_segment_and_fin() {
    let mut net = Net::pass(&cfg(CcKind::Dctcp), 10 * NS_PER_US, GBPS10);
    net.send(10_000);
    net.run(u64::MAX);
    assert_eq!(net.r.delivered_bytes(), 10_000);
    let last = net.sent.last().unwrap();
    assert_eq!(last.payload as u64, 10_000 - 6 * MSS);
    assert!(last.has(flags::PSH));
    assert_eq!(net.sent.iter().filter(|p| p.has(flags::PSH)).count(), 1);
    // Every data segment is ECT(0) for an ECN flavour; DSCP and addressing as given.
    assert!(net.sent.iter().all(|p| p.ecn == Ecn::Ect0 && p.dscp == 3 && p.src == 1 && p.dst == 2 && p.flow == 7));
}

#[test]
fn idle_after_completion_and_request_response() {
    let mut net = Net::pass(&cfg(CcKind::Dctcp), 25 * NS_PER_US, GBPS10);
    assert!(net.s.is_idle(), "nothing added yet");
    net.send(100_000);
    assert!(!net.s.is_idle());
    net.run(u64::MAX);
    assert!(net.s.is_idle());
    assert_eq!(net.s.timer(), None, "no timer once everything is acknowledged");
    assert_eq!(net.s.acked_bytes(), 100_000);
    // A second request on the same connection, after an idle period > RTO: the window
    // restarts from at most the initial window (RFC 5681 §4.1).
    let grown = net.s.cwnd();
    assert!(grown > 10 * MSS);
    net.now += 20 * NS_PER_MS;
    net.send(50_000);
    assert!(!net.s.is_idle());
    assert_eq!(net.s.cwnd(), 10 * MSS);
    assert_eq!(net.s.in_flight(), 10 * MSS);
    net.run(u64::MAX);
    assert!(net.s.is_idle());
    assert_eq!(net.r.delivered_bytes(), 150_000);
    assert_eq!(net.s.acked_bytes(), 150_000);
    assert_eq!(net.sent.iter().filter(|p| p.has(flags::PSH)).count(), 2);
}

#[test]
fn unlimited_flow_never_sends_fin_and_respects_max_cwnd() {
    let c = TcpConfig { max_cwnd: 20, cc: CcKind::NewReno, ..TcpConfig::textbook() };
    let mut net = Net::pass(&c, 25 * NS_PER_US, TBPS);
    net.send(UNLIMITED);
    net.run(2 * NS_PER_MS);
    assert!(!net.s.is_idle());
    assert!(net.sent.iter().all(|p| !p.has(flags::PSH)));
    assert_eq!(net.s.cwnd(), 20 * MSS);
    assert!(net.s.in_flight() <= 20 * MSS);
    // ~20 segments per 50 us RTT.
    let per_rtt = net.sent.len() as f64 / 40.0;
    assert!((18.0..=21.0).contains(&per_rtt), "{per_rtt}");
}
