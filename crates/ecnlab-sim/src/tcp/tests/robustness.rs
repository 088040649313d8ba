//! Robustness: bogus and stale ACKs, determinism, and a property test over drops and marks.

use super::*;

#[test]
fn bogus_and_stale_acks_are_harmless() {
    let mut s = TcpSender::new(&cfg(CcKind::Dctcp), 0, 0, 1, 0);
    let mut out = Vec::new();
    s.add_data(segs(5));
    s.poll(0, &mut out);
    assert_eq!(out.len(), 5);
    // ACK beyond anything sent: clamped.
    s.on_ack(10, &ack(1000, false), &mut out);
    assert_eq!(s.acked_bytes(), segs(5));
    assert!(s.is_idle());
    assert_eq!(s.timer(), None);
    // Stale ACK and non-ACK packets: ignored.
    let st = s.stats().clone();
    s.on_ack(20, &ack(2, true), &mut out);
    let data = Packet { kind: Kind::Data, seq: 0, payload: 100, ..Default::default() };
    s.on_ack(20, &data, &mut out);
    assert_eq!(s.acked_bytes(), segs(5));
    assert_eq!(s.stats().cwnd, st.cwnd);
    // Timer calls with nothing armed, or before the deadline, do nothing.
    s.on_timer(1_000_000_000, &mut out);
    assert_eq!(s.stats().timeouts, 0);
    s.add_data(segs(1));
    out.clear();
    s.poll(30, &mut out);
    let d = s.timer().unwrap();
    s.on_timer(d - 1, &mut out);
    assert_eq!(s.stats().timeouts, 0);
    assert_eq!(out.len(), 1);
}

#[test]
fn deterministic() {
    let run = || {
        let c = cfg(CcKind::Dctcp);
        let mut net = Net::new(
            &c,
            25 * NS_PER_US,
            GBPS1,
            Box::new(|i, _| match i % 97 {
                0 => Fate::Drop,
                x if x % 7 == 0 => Fate::Mark,
                _ => Fate::Pass,
            }),
        );
        net.send(segs(2000));
        net.run(u64::MAX);
        (net.finish, net.s.stats().clone(), net.acks.len(), net.sent.len())
    };
    assert_eq!(run(), run());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
        /// Whatever is dropped or marked, every flow completes, delivers exactly the data
        /// added (also across several add_data calls), and never acknowledges more (the
        /// harness checks acked <= delivered <= added at every event).
        #[test]
        fn flows_complete_and_never_overacknowledge(
            drops in proptest::collection::vec(any::<bool>(), 0..80),
            marks in proptest::collection::vec(any::<bool>(), 0..80),
            chunks in proptest::collection::vec(1u64..60_000, 1..4),
            cc in prop_oneof![Just(CcKind::NewReno), Just(CcKind::EcnStar), Just(CcKind::Dctcp), Just(CcKind::DctcpDualq)],
            delack in 1u32..3,
        ) {
            let c = TcpConfig { cc, delayed_ack: delack, ..TcpConfig::textbook() };
            let fate: FateFn = Box::new(move |i, _| {
                let i = i as usize;
                if drops.get(i).copied().unwrap_or(false) && i % 3 != 2 { Fate::Drop }
                else if marks.get(i).copied().unwrap_or(false) { Fate::Mark }
                else { Fate::Pass }
            });
            let mut net = Net::new(&c, 20 * NS_PER_US, GBPS10, fate);
            let mut total = 0;
            for ch in &chunks {
                net.send(*ch);
                total += ch;
                net.run(u64::MAX);
                prop_assert!(net.s.is_idle());
                prop_assert_eq!(net.s.acked_bytes(), total);
                prop_assert_eq!(net.r.delivered_bytes(), total);
                prop_assert_eq!(net.s.timer(), None);
            }
            let st = net.s.stats();
            prop_assert!(st.sent_bytes >= total);
            prop_assert_eq!(st.sent_bytes - st.retransmitted_bytes, total);
        }
    }
}
