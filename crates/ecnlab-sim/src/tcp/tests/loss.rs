//! Loss recovery: fast retransmit and NewReno's partial ACKs (RFC 6582), Limited Transmit
//! (RFC 3042), the RTO and its estimator (RFC 6298), slow start after a timeout (RFC 3465).

use super::*;

fn drop_first_tx(segments: &'static [u64]) -> FateFn {
    let mut done = Vec::new();
    Box::new(move |_, p| {
        let k = p.seq / MSS;
        if segments.contains(&k) && !done.contains(&k) {
            done.push(k);
            Fate::Drop
        } else {
            Fate::Pass
        }
    })
}

#[test]
fn single_drop_recovered_by_fast_retransmit() {
    for cc in [CcKind::NewReno, CcKind::EcnStar, CcKind::Dctcp, CcKind::DctcpDualq] {
        let mut net = Net::new(&cfg(cc), 25 * NS_PER_US, GBPS10, drop_first_tx(&[50]));
        net.send(segs(200));
        net.run(u64::MAX);
        let st = net.s.stats().clone();
        assert_eq!(st.fast_retransmits, 1, "{cc:?}");
        assert_eq!(st.timeouts, 0, "{cc:?}");
        assert_eq!(st.retransmitted_bytes, MSS, "{cc:?}");
        assert_eq!(net.r.delivered_bytes(), segs(200));
        assert!(net.finish.unwrap() < 2 * NS_PER_MS, "{cc:?}: {:?}", net.finish);
        // Recovery halved the window: ssthresh = FlightSize / 2 at the time of the loss.
        assert!(st.ssthresh < u64::MAX && st.ssthresh >= 2 * MSS);
    }
}

#[test]
fn two_drops_in_one_window_use_partial_ack() {
    let mut net = Net::new(&cfg(CcKind::NewReno), 25 * NS_PER_US, GBPS10, drop_first_tx(&[50, 55]));
    net.send(segs(300));
    net.run(u64::MAX);
    let st = net.s.stats();
    assert_eq!(st.fast_retransmits, 1, "one recovery episode (RFC 6582)");
    assert_eq!(st.timeouts, 0);
    assert_eq!(st.retransmitted_bytes, 2 * MSS);
    assert_eq!(net.r.delivered_bytes(), segs(300));
}

/// Drops the first transmission of every other segment in [from, to).
fn drop_every_other_first_tx(from: u64, to: u64) -> FateFn {
    let mut done = Vec::new();
    Box::new(move |_, p| {
        let k = p.seq / MSS;
        if k >= from && k < to && (k - from).is_multiple_of(2) && !done.contains(&k) {
            done.push(k);
            Fate::Drop
        } else {
            Fate::Pass
        }
    })
}

/// 40 holes in one window of a 1000-segment NewReno flow (RTT 50 us, RTO 500 us).
fn forty_holes(c: &TcpConfig) -> Net {
    let mut net = Net::new(c, 25 * NS_PER_US, GBPS10, drop_every_other_first_tx(200, 280));
    net.send(segs(1000));
    net.run(u64::MAX);
    assert_eq!(net.r.delivered_bytes(), segs(1000));
    net
}

fn forty_holes_cfg() -> TcpConfig {
    TcpConfig { rto_min: Duration(500 * NS_PER_US), cc: CcKind::NewReno, ..TcpConfig::textbook() }
}

#[test]
fn many_drops_in_one_window_impatient_rto_per_rfc6582() {
    // Repairing one hole per partial ACK would take 40 RTTs = 2 ms. RFC 6582 §3.2 step 5
    // restarts the timer on the FIRST partial ACK only, so it fires one RTO later and
    // go-back-N resends the rest.
    let imp = forty_holes(&TcpConfig { partial_ack_rto: PartialAckRto::Impatient, ..forty_holes_cfg() });
    assert!(imp.s.stats().fast_retransmits >= 1);
    assert_eq!(imp.s.stats().timeouts, 1, "the timer was not restarted by later partial ACKs");
    // It fired one RTO (= rto_min here) after the first partial ACK.
    let first_partial = imp.acks.iter().find(|a| a.in_recovery && a.seq > segs(200)).unwrap().t;
    let t = imp.timeouts_at[0];
    assert!(t >= first_partial + 500 * NS_PER_US && t < first_partial + 510 * NS_PER_US, "{t} vs {first_partial}");

    let slow = forty_holes(&forty_holes_cfg()); // the default
    assert_eq!(slow.s.stats().timeouts, 0, "every partial ACK restarted the timer");
    assert_eq!(slow.s.stats().fast_retransmits, 1);
    assert_eq!(slow.s.stats().retransmitted_bytes, segs(40));
    assert!(imp.finish.unwrap() < slow.finish.unwrap(), "{:?} {:?}", imp.finish, slow.finish);
}

#[test]
fn no_spurious_fast_retransmit_after_timeout_rfc6582_careful() {
    // After the timeout above, go-back-N resends segments the receiver already holds; their
    // duplicate ACKs, once the cumulative ACK has reached `recover` (the highest byte sent
    // before the timeout), must not start a second recovery: RFC 6582 §3.2 step 1 requires
    // the ACK to cover MORE than recover.
    let net = forty_holes(&TcpConfig { partial_ack_rto: PartialAckRto::Impatient, ..forty_holes_cfg() });
    assert_eq!(net.s.stats().timeouts, 1);
    assert_eq!(net.s.stats().fast_retransmits, 1, "no fast retransmit after the timeout");
    // The first loss of a connection (recover never set) is still fast-retransmitted.
    let mut first = Net::new(&cfg(CcKind::NewReno), 25 * NS_PER_US, GBPS10, drop_first_tx(&[0]));
    first.send(segs(20));
    first.run(u64::MAX);
    assert_eq!((first.s.stats().fast_retransmits, first.s.stats().timeouts), (1, 0));
}

#[test]
fn timeout_during_fast_recovery_keeps_the_recovery_ssthresh() {
    // The forty-hole recovery, Impatient: the timer fires inside fast recovery, when the
    // flight has grown past twice the ssthresh set at the start of recovery. ssthresh stays
    // (RFC 5681 §3.1: "no more than" FlightSize/2; Linux tcp_enter_loss) instead of
    // rising to half of that inflated flight.
    let c = TcpConfig { partial_ack_rto: PartialAckRto::Impatient, ..forty_holes_cfg() };
    let t = forty_holes(&c).timeouts_at[0];
    let mut net = Net::new(&c, 25 * NS_PER_US, GBPS10, drop_every_other_first_tx(200, 280));
    net.send(segs(1000));
    net.run(t - 1);
    assert!(net.s.in_recovery());
    let before = net.s.stats().ssthresh;
    assert!(net.s.in_flight() / 2 > before, "flight {} ssthresh {before}", net.s.in_flight());
    net.run(t);
    assert_eq!(net.s.stats().timeouts, 1);
    assert_eq!(net.s.stats().ssthresh, before);
    assert_eq!(net.s.cwnd(), MSS);
}

#[test]
fn limited_transmit_rfc3042_turns_a_small_window_loss_into_fast_retransmit() {
    // cwnd 2 segments, the first one lost: one duplicate ACK only, unless each of the first
    // two duplicate ACKs releases a new segment (RFC 3042), whose ACKs complete the three.
    let c = TcpConfig { init_cwnd: 2, cc: CcKind::NewReno, ..TcpConfig::textbook() };
    let mut net = Net::new(&c, 25 * NS_PER_US, GBPS10, drop_first_tx(&[0]));
    net.send(segs(20));
    net.run(u64::MAX);
    let st = net.s.stats();
    assert_eq!((st.fast_retransmits, st.timeouts), (1, 0));
    assert_eq!(st.retransmitted_bytes, MSS);
    // Segments 2 and 3 went out on the first and second duplicate ACK.
    let order: Vec<u64> = net.sent[..5].iter().map(|p| p.seq / MSS).collect();
    assert_eq!(order, vec![0, 1, 2, 3, 0]);
    assert!(net.finish.unwrap() < NS_PER_MS);

    let off = TcpConfig { limited_transmit: false, ..c };
    let mut net = Net::new(&off, 25 * NS_PER_US, GBPS10, drop_first_tx(&[0]));
    net.send(segs(20));
    net.run(u64::MAX);
    assert_eq!((net.s.stats().fast_retransmits, net.s.stats().timeouts), (0, 1));
}

#[test]
fn slow_start_after_a_timeout_counts_one_segment_per_ack_rfc3465() {
    // Segment 0 is lost twice (first transmission and fast retransmit): the timer fires
    // with 9 later segments held by the receiver, and the ACK of the timeout's
    // retransmission covers all 10. RFC 3465 §2.3: L = 1·SMSS in the slow start after a
    // timeout, so cwnd goes 1 -> 2 segments (L = 2 would give 3); afterwards, back to
    // L = 2 once slow start has ended.
    let c = TcpConfig { init_cwnd: 10, cc: CcKind::NewReno, ..TcpConfig::textbook() };
    let mut zero_sent = 0;
    let fate: FateFn = Box::new(move |_, p| {
        if p.seq == 0 {
            zero_sent += 1;
            if zero_sent <= 2 {
                return Fate::Drop;
            }
        }
        Fate::Pass
    });
    let mut net = Net::new(&c, 25 * NS_PER_US, GBPS10, fate);
    net.send(segs(2000));
    net.run(u64::MAX);
    assert_eq!(net.s.stats().timeouts, 1);
    let t = net.timeouts_at[0];
    // (Duplicate ACKs of the segments still in flight at the timeout come first.)
    let first = net.acks.iter().find(|a| a.t > t && a.seq > 0).unwrap();
    assert!(first.seq >= segs(10), "the retransmission's ACK covers the held window: {first:?}");
    assert_eq!((first.cwnd_before, first.cwnd_after), (MSS, 2 * MSS));
    // Every ACK after the timeout added at most one segment.
    assert!(net.acks.iter().filter(|a| a.t > t).count() > 100, "data remained after the timeout");
    for a in net.acks.iter().filter(|a| a.t > t) {
        assert!(a.cwnd_after <= a.cwnd_before + MSS, "{a:?}");
    }
    assert_eq!(net.r.delivered_bytes(), segs(2000));
}

#[test]
fn tail_drop_recovered_by_rto() {
    for cc in [CcKind::NewReno, CcKind::Dctcp] {
        let mut net = Net::new(&cfg(cc), 25 * NS_PER_US, GBPS10, drop_first_tx(&[19]));
        net.send(segs(20));
        net.run(u64::MAX);
        let st = net.s.stats();
        assert_eq!(st.timeouts, 1);
        assert_eq!(st.fast_retransmits, 0);
        assert_eq!(st.retransmitted_bytes, MSS);
        assert_eq!(net.r.delivered_bytes(), segs(20));
        // The timer restarted at the last ACK before the loss was noticed and waited
        // max(rto_min, srtt + 4 rttvar) = rto_min = 5 ms.
        let f = net.finish.unwrap();
        assert_eq!(net.timeouts_at.len(), 1);
        let t = net.timeouts_at[0];
        let last_ack = net.acks.iter().rfind(|a| a.t < t).unwrap().t;
        assert_eq!(t, last_ack + 5 * NS_PER_MS);
        // Retransmission + ACK: one RTT (+ serialization).
        assert!(f > t + 50 * NS_PER_US && f < t + 52 * NS_PER_US, "{f} {t}");
        assert!(net.s.is_idle());
    }
}

#[test]
fn rto_backoff_doubles_up_to_rto_max() {
    // Everything sent before the 16th data packet is lost: the initial window (10) and the
    // retransmissions after the first five timeouts.
    let c = TcpConfig { rto_max: Duration::from_ms(30), cc: CcKind::NewReno, ..TcpConfig::textbook() };
    let mut net = Net::new(&c, 25 * NS_PER_US, GBPS10, Box::new(|i, _| if i < 15 { Fate::Drop } else { Fate::Pass }));
    net.send(segs(30));
    net.run(u64::MAX);
    let ms = NS_PER_MS;
    // No RTT sample yet: RTO = rto_init = 5 ms, then 10, 20, 30 (capped), 30, 30.
    let want = [5 * ms, 15 * ms, 35 * ms, 65 * ms, 95 * ms, 125 * ms];
    assert_eq!(net.timeouts_at, want);
    assert_eq!(net.s.stats().timeouts, 6);
    assert_eq!(net.r.delivered_bytes(), segs(30));
    assert!(net.s.is_idle());
    // After recovery, the RTO is back to max(rto_min, srtt + 4 rttvar) = 5 ms.
    assert_eq!(net.s.stats().rto_ns, 5 * ms);
}

#[test]
fn rto_estimator_follows_rfc6298() {
    // 1 ms one-way delay, rto_min 1 us: RTO = srtt + 4 rttvar with srtt = 2 ms.
    let c = TcpConfig { rto_min: Duration(1_000), cc: CcKind::NewReno, ..TcpConfig::textbook() };
    let mut net = Net::pass(&c, NS_PER_MS, TBPS);
    net.send(segs(1));
    net.run(u64::MAX);
    let st = net.s.stats();
    // First sample R: srtt = R, rttvar = R/2, RTO = R + 2R = 3R.
    let r = net.finish.unwrap();
    assert_eq!(st.srtt_ns, r);
    assert_eq!(st.rto_ns, 3 * r);
}

#[test]
fn go_back_n_after_timeout_with_receiver_buffer() {
    // Lose the first two segments of a 4-segment flow: too few dupacks for fast
    // retransmit; the RTO retransmits segment 0, the receiver then acks up to segment 1's
    // hole, and so on.
    let c = TcpConfig { init_cwnd: 4, cc: CcKind::NewReno, ..TcpConfig::textbook() };
    let mut net = Net::new(&c, 25 * NS_PER_US, GBPS10, drop_first_tx(&[0, 1]));
    net.send(segs(4));
    net.run(u64::MAX);
    assert_eq!(net.r.delivered_bytes(), segs(4));
    assert!(net.s.is_idle());
    assert!(net.s.stats().timeouts >= 1);
    assert_eq!(net.s.stats().fast_retransmits, 0);
    // Go-back-N without SACK: after the timeout, segments 0, 1 and (needlessly, the sender
    // cannot know it was received) 2 are sent again; the ACK for 1 jumps over the buffered
    // 2 and 3, so 3 is not.
    assert_eq!(net.s.stats().retransmitted_bytes, 3 * MSS);
    let rtx: Vec<u64> = net.sent[4..].iter().map(|p| p.seq / MSS).collect();
    assert_eq!(rtx, vec![0, 1, 2]);
    assert_eq!(net.r.stats().duplicates, 1);
}
