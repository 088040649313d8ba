//! ECN* (RFC 3168): one halving per window, CWR, the receiver's ECE latch.

use super::*;

#[test]
fn ecn_star_one_mark_one_halving_and_cwr() {
    let mut net = Net::new(&cfg(CcKind::EcnStar), 25 * NS_PER_US, GBPS10, mark_first_tx(&[40]));
    net.send(segs(600));
    net.run(u64::MAX);
    let red = net.reductions();
    assert_eq!(red.len(), 1, "{red:?}");
    assert_eq!(red[0].cwnd_after, red[0].cwnd_before / 2);
    assert!(red[0].ece);
    assert_eq!(net.s.stats().ecn_reductions, 1);
    // The receiver latched ECE until CWR arrived: more than one ECE ACK for one mark.
    let ece_acks = net.acks.iter().filter(|a| a.ece).count();
    assert!(ece_acks > 1, "{ece_acks}");
    assert_eq!(net.s.stats().ece_acks, ece_acks as u64);
    // Exactly one CWR segment, the first new segment after the reduction.
    let cwr: Vec<_> = net.sent.iter().filter(|p| p.has(flags::CWR)).collect();
    assert_eq!(cwr.len(), 1);
    let first_after = net.sent.iter().find(|p| p.tx_ns >= red[0].t).unwrap();
    assert_eq!(cwr[0], first_after);
    // After CWR, the receiver's ECE latch is cleared (no ECE on the last ACKs).
    assert!(!net.acks.last().unwrap().ece);
    assert!(!net.r.ece());
    assert_eq!(net.s.stats().timeouts + net.s.stats().fast_retransmits, 0);
}

#[test]
fn ecn_star_halves_once_per_window() {
    // Two marks in the same window: one halving.
    let mut net = Net::new(&cfg(CcKind::EcnStar), 25 * NS_PER_US, GBPS10, mark_first_tx(&[40, 45]));
    net.send(segs(600));
    net.run(u64::MAX);
    assert_eq!(net.reductions().len(), 1);
    assert_eq!(net.s.stats().ecn_reductions, 1);
    // Marks in different windows: two halvings, two CWR segments.
    let mut net = Net::new(&cfg(CcKind::EcnStar), 25 * NS_PER_US, GBPS10, mark_first_tx(&[40, 400]));
    net.send(segs(600));
    net.run(u64::MAX);
    let red = net.reductions();
    assert_eq!(red.len(), 2, "{red:?}");
    for r in &red {
        assert_eq!(r.cwnd_after, (r.cwnd_before / 2).max(2 * MSS));
    }
    assert_eq!(net.s.stats().ecn_reductions, 2);
    assert_eq!(net.sent.iter().filter(|p| p.has(flags::CWR)).count(), 2);
}

#[test]
fn ecn_star_receiver_latch() {
    let c = cfg(CcKind::EcnStar);
    let mut r = TcpReceiver::new(&c, 0, 1, 0);
    let mut out = Vec::new();
    let seg = |k: u64, ce: bool, cwr: bool| Packet {
        seq: k * MSS,
        payload: MSS as u32,
        size: MSS as u32 + 40,
        kind: Kind::Data,
        ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
        flags: if cwr { flags::CWR } else { 0 },
        ..Default::default()
    };
    let script = [
        (false, false, false),
        (true, false, true),
        (false, false, true),
        (false, true, false),
        (true, true, true),
        (false, false, true),
        (false, true, false),
    ];
    for (k, &(ce, cwr, want_ece)) in script.iter().enumerate() {
        out.clear();
        r.on_data(0, &seg(k as u64, ce, cwr), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].has(flags::ECE), want_ece, "segment {k}");
    }
}
