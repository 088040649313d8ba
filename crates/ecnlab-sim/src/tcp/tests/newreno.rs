//! NewReno and ECN: NewReno ignores CE and ECE.

use super::*;

#[test]
fn newreno_ignores_ce_and_ece() {
    let run = |fate: FateFn| {
        let mut net = Net::new(&cfg(CcKind::NewReno), 25 * NS_PER_US, GBPS10, fate);
        net.send(segs(300));
        net.run(u64::MAX);
        net
    };
    let clean = run(Box::new(|_, _| Fate::Pass));
    // A switch would not mark not-ECT packets...
    let marked = run(Box::new(|_, _| Fate::Mark));
    assert!(marked.sent.iter().all(|p| p.ecn == Ecn::NotEct));
    assert_eq!(marked.r.stats().ce_segments, 0);
    // ...and even CE forced onto them is never echoed (ECN not negotiated).
    let forced = run(Box::new(|_, _| Fate::ForceCe));
    assert!(forced.r.stats().ce_segments > 0);
    assert_eq!(forced.r.stats().ece_acks_sent, 0);
    for n in [&marked, &forced] {
        assert_eq!(n.finish, clean.finish);
        assert_eq!(n.s.stats(), clean.s.stats());
        assert!(n.reductions().is_empty());
    }
    // An ECE flag arriving anyway is ignored by the sender.
    let mut s = TcpSender::new(&cfg(CcKind::NewReno), 0, 0, 1, 0);
    let mut out = Vec::new();
    s.add_data(segs(100));
    s.poll(0, &mut out);
    let w = s.cwnd();
    s.on_ack(100, &ack(1, true), &mut out);
    assert_eq!(s.cwnd(), w + MSS, "slow start continues");
    assert_eq!(s.stats().ece_acks, 0);
    assert_eq!(s.stats().ecn_reductions, 0);
    assert!(out.iter().all(|p| p.ecn == Ecn::NotEct && !p.has(flags::CWR)));
}
