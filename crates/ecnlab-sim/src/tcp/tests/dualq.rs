//! dctcp_dualq (dual AQM paper §III): per-ACK alpha, progressive reduction and growth in
//! CWR.

use super::*;

#[test]
fn dualq_alpha_per_ack_with_2_pow_minus_20_resolution() {
    let scale = (1u64 << 20) as f64;
    let c = TcpConfig { cc: CcKind::DctcpDualq, init_cwnd: 100, ..TcpConfig::textbook() };
    let mut s = TcpSender::new(&c, 0, 0, 1, 0);
    let mut out = Vec::new();
    s.add_data(UNLIMITED);
    s.poll(0, &mut out);
    assert_eq!(out.len(), 100);
    let w0 = s.cwnd();
    // ACK 1 with ECE: alpha = g = 1/256 (2^12 units of 2^-20); CWR starts, cwnd cut from
    // cwnd_max by alpha/2.
    s.on_ack(10, &ack(1, true), &mut out);
    assert_eq!(s.stats().alpha * scale, 4096.0);
    let c1 = (w0 as f64 * (1.0 - s.stats().alpha / 2.0)) as u64;
    assert_eq!(s.cwnd(), c1);
    assert_eq!(s.stats().ssthresh, c1);
    assert_eq!(s.stats().ecn_reductions, 1);
    // ACK 2 without ECE: alpha decays on this ACK already (not once per window).
    s.on_ack(11, &ack(2, false), &mut out);
    assert_eq!(s.stats().alpha * scale, 4080.0);
    // ACK 3 with ECE: 4080·255/256 + 4096 = 8160.06 -> truncated to 8160; progressive cut
    // from cwnd_max (not from the already reduced cwnd), counted in the same CWR period.
    s.on_ack(12, &ack(3, true), &mut out);
    assert_eq!(s.stats().alpha * scale, 8160.0);
    let c3 = (w0 as f64 * (1.0 - 8160.0 / scale / 2.0)) as u64;
    assert_eq!(s.cwnd(), c3);
    assert_eq!(s.stats().ecn_reductions, 1);
    // Every value is on the 2^-20 grid.
    for k in 4..60 {
        s.on_ack(12 + k, &ack(k, k % 3 == 0), &mut out);
        assert_eq!((s.stats().alpha * scale).fract(), 0.0);
    }

    // Plain DCTCP on the same script keeps alpha until the window ends.
    let c = TcpConfig { cc: CcKind::Dctcp, init_cwnd: 100, ..TcpConfig::textbook() };
    let mut d = TcpSender::new(&c, 0, 0, 1, 0);
    d.add_data(UNLIMITED);
    d.poll(0, &mut out);
    d.on_ack(10, &ack(1, true), &mut out); // passes WindowEnd = 0
    let a1 = d.stats().alpha;
    assert_eq!(a1, 1.0 / 16.0);
    for k in 2..=50 {
        d.on_ack(10 + k, &ack(k, k % 2 == 0), &mut out);
        assert_eq!(d.stats().alpha, a1, "alpha must not move inside the window");
    }
}

/// Runs the dualq script: 100 segments, ECE on ACK 1 and 3, then clean ACKs up to `upto`.
fn dualq_script(grow_in_cwr: bool, progressive: bool, upto: u64) -> TcpSender {
    let c = TcpConfig {
        cc: CcKind::DctcpDualq,
        init_cwnd: 100,
        dualq_grow_in_cwr: grow_in_cwr,
        dualq_progressive: progressive,
        ..TcpConfig::textbook()
    };
    let mut s = TcpSender::new(&c, 0, 0, 1, 0);
    let mut out = Vec::new();
    s.add_data(UNLIMITED);
    s.poll(0, &mut out);
    for k in 1..=upto {
        s.on_ack(k, &ack(k, k == 1 || k == 3), &mut out);
    }
    s
}

#[test]
fn dualq_progressive_reduction_and_growth_in_cwr() {
    // Without progressive reduction the second ECE in the same CWR period does nothing.
    let p = dualq_script(true, true, 3);
    let np = dualq_script(true, false, 3);
    assert!(p.cwnd() < np.cwnd(), "{} vs {}", p.cwnd(), np.cwnd());
    assert!(p.in_cwr());
    // Growth in CWR (§III-A b): the ACKs inside the CWR period count toward the next
    // congestion-avoidance increase, so it comes right after the period ends (ACK ~103);
    // with Linux's rule (no growth in CWR) it comes a whole window later.
    let c3 = p.cwnd();
    let g = dualq_script(true, true, 103);
    let ng = dualq_script(false, true, 103);
    assert!(!g.in_cwr());
    assert_eq!(g.cwnd(), c3 + MSS);
    assert_eq!(ng.cwnd(), c3);
    let ng = dualq_script(false, true, 210);
    assert_eq!(ng.cwnd(), c3 + MSS);
}

#[test]
fn dualq_long_flow_alpha_tracks_marking() {
    let c = cfg(CcKind::DctcpDualq);
    let mut net =
        Net::new(&c, 25 * NS_PER_US, GBPS1, Box::new(|i, _| if i % 5 == 0 { Fate::Mark } else { Fate::Pass }));
    net.send(UNLIMITED);
    net.run(300 * NS_PER_MS);
    let a = net.s.stats().alpha;
    assert!((a - 0.2).abs() < 0.05, "{a}");
    let st = net.s.stats();
    assert_eq!(st.timeouts + st.fast_retransmits, 0);
    assert!(st.ecn_reductions > 100);
}
