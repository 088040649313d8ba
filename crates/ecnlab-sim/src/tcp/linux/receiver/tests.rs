//! The Linux receiver's ACKs, SACK blocks, ECN echo and GRO against hand-computed kernel behaviour.

use super::*;
use crate::tcp::CcKind;
use ecnlab_core::units::Duration;

const MSS: u32 = 1000;
const US: Nanos = 1000;
const DELACK: Nanos = 200 * US;

fn cfg(cc: CcKind) -> TcpConfig {
    TcpConfig {
        cc,
        mss: MSS,
        delayed_ack_timeout: Duration(DELACK),
        rto_min: Duration(5_000 * US),
        ..TcpConfig::default()
    }
}

fn seg(i: u64, tx: Nanos, ecn: Ecn) -> Packet {
    Packet {
        flow: 1,
        src: 0,
        dst: 1,
        seq: i * MSS as u64,
        tx_ns: tx,
        payload: MSS,
        size: MSS + 40,
        kind: Kind::Data,
        ecn,
        flags: 0,
        dscp: 3,
        in_link: 0,
    }
}

/// Feeds segment `i` at `now`; returns the ACKs as (ack, ece, echoed tx_ns).
fn feed(r: &mut LinuxReceiver, now: Nanos, p: Packet) -> Vec<(u64, bool, Nanos)> {
    let mut out = Vec::new();
    r.on_data(now, &p, &mut out);
    out.iter().map(|a| (a.seq, a.has(flags::ECE), a.tx_ns)).collect()
}

/// Uses up the 16 quick ACKs of connection start with segments 0..16 at 1 us spacing.
fn warmed(cc: CcKind) -> (LinuxReceiver, Nanos) {
    let mut r = LinuxReceiver::new(&cfg(cc), 1, 1, 0);
    let ecn = if cc.uses_ecn() { Ecn::Ect0 } else { Ecn::NotEct };
    for i in 0..16 {
        let acks = feed(&mut r, i * US, seg(i, i * US, ecn));
        assert_eq!(acks.len(), 1, "quick ACK {i}");
    }
    assert_eq!(r.quick_acks_left(), 0);
    (r, 16 * US)
}

/// Linux's `tcp_ecn_send`: DCTCP's pure ACKs are ECT(0) (its sockets set ECT on every
/// packet), classic ECN's and Reno's are Not-ECT. They were Not-ECT under DCTCP too: a
/// port dropping non-ECT packets it would mark (`marking.non_ect = "drop"`) dropped them.
#[test]
fn dctcp_acks_are_ect_others_are_not() {
    for (cc, want) in [(CcKind::Dctcp, Ecn::Ect0), (CcKind::EcnStar, Ecn::NotEct), (CcKind::NewReno, Ecn::NotEct)] {
        let mut r = LinuxReceiver::new(&cfg(cc), 1, 1, 0);
        let mut out = Vec::new();
        let ecn = if cc.uses_ecn() { Ecn::Ect0 } else { Ecn::NotEct };
        r.on_data(0, &seg(0, 0, ecn), &mut out);
        assert_eq!(out.len(), 1, "{cc:?}: the first segment is quick-ACKed");
        assert_eq!(out[0].ecn, want, "{cc:?}");
    }
}

/// `delayed_ack = 1` ACKs every segment after the quick ACKs too; `sack = false` sends
/// no SACK blocks (SACK not negotiated) but still ACKs out-of-order data at once.
#[test]
fn delayed_ack_one_acks_every_segment_and_sack_off_sends_no_blocks() {
    let c = TcpConfig { delayed_ack: 1, sack: false, ..cfg(CcKind::NewReno) };
    let mut r = LinuxReceiver::new(&c, 1, 1, 0);
    for i in 0..40 {
        assert_eq!(feed(&mut r, i * US, seg(i, i * US, Ecn::NotEct)).len(), 1, "segment {i}");
    }
    assert_eq!(r.timer(), None);
    let mut out = Vec::new();
    r.on_data(50 * US, &seg(45, 50 * US, Ecn::NotEct), &mut out);
    assert_eq!(out.len(), 1, "out-of-order data is ACKed at once");
    assert_eq!(out[0].seq, 40 * MSS as u64);
    assert_eq!(out[0].payload, 0, "no SACK option without SACK");
    assert!(r.sack_log().read(out[0].payload).is_none());
}

#[test]
fn quick_acks_at_start_then_every_second_segment_or_the_timer() {
    let (mut r, t) = warmed(CcKind::NewReno);
    // Segment 16: one full segment unacknowledged, held; the timer at ato = the floor.
    assert!(feed(&mut r, t, seg(16, t, Ecn::NotEct)).is_empty());
    assert_eq!(r.timer(), Some(t + DELACK));
    // Segment 17: more than one full segment: ACK both, echoing segment 16's time
    // (RFC 7323 §4.3: the earliest unacknowledged segment's TSval).
    assert_eq!(feed(&mut r, t + US, seg(17, t + US, Ecn::NotEct)), vec![(18_000, false, t)]);
    assert_eq!(r.timer(), None);
    // Segment 18 alone: the timer sends it.
    assert!(feed(&mut r, t + 2 * US, seg(18, t + 2 * US, Ecn::NotEct)).is_empty());
    let mut out = Vec::new();
    r.on_timer(t + 2 * US + DELACK - 1, &mut out);
    assert!(out.is_empty(), "not before the deadline");
    r.on_timer(t + 2 * US + DELACK, &mut out);
    assert_eq!((out.len(), out[0].seq, out[0].tx_ns), (1, 19_000, t + 2 * US));
    // The missed delayed ACK inflated ato, but the RTT bound keeps the timer at the floor.
    let now = t + 300 * US;
    assert!(feed(&mut r, now, seg(19, now, Ecn::NotEct)).is_empty());
    assert_eq!(r.timer(), Some(now + DELACK));
    assert_eq!(r.stats().acks_sent, 18);
}

/// `tcp_event_data_recv` with the receiver's RTO (5 ms) below the delayed-ACK floor
/// (40 ms, the linux default; ecnsharp-star and the tcn testbed scenarios run so): a
/// segment 25 ms after the last (over ATO_MIN / 2, under ato) sets ato = min(ato / 2 + m,
/// RTO) = 5 ms; the next, 100 us later, ato / 2 + ATO_MIN / 2 = 22.5 ms, and the delayed
/// ACK waits that long, not the floor: the RTT bound of `tcp_send_delayed_ack` caps ato
/// only from above.
#[test]
fn below_the_floor_ato_follows_the_inter_arrival_times() {
    let c = TcpConfig { delayed_ack_timeout: Duration(40_000 * US), ..cfg(CcKind::NewReno) };
    let mut r = LinuxReceiver::new(&c, 1, 1, 0);
    for i in 0..16 {
        assert_eq!(feed(&mut r, i * US, seg(i, i * US, Ecn::NotEct)).len(), 1, "quick ACK {i}");
    }
    let t = 16 * US;
    assert!(feed(&mut r, t, seg(16, t, Ecn::NotEct)).is_empty());
    assert_eq!(r.timer(), Some(t + 40_000 * US), "the floor");
    assert_eq!(feed(&mut r, t + 25_000 * US, seg(17, t, Ecn::NotEct)).len(), 1, "two full segments");
    let now = t + 25_100 * US;
    assert!(feed(&mut r, now, seg(18, now, Ecn::NotEct)).is_empty());
    assert_eq!(r.timer(), Some(now + 22_500 * US));
}

#[test]
fn quick_acks_again_after_idle_longer_than_the_rto() {
    let (mut r, t) = warmed(CcKind::NewReno);
    let later = t + 6_000 * US;
    for i in 0..16 {
        let now = later + i * US;
        assert_eq!(feed(&mut r, now, seg(16 + i, now, Ecn::NotEct)).len(), 1, "quick ACK {i} after idle");
    }
    assert!(feed(&mut r, later + 20 * US, seg(32, later, Ecn::NotEct)).is_empty());
    // A pause shorter than the RTO does not.
    let (mut r, t) = warmed(CcKind::NewReno);
    let later = t + 4_000 * US;
    assert!(feed(&mut r, later, seg(16, later, Ecn::NotEct)).is_empty());
}

#[test]
fn short_segment_is_acked_at_once() {
    let (mut r, t) = warmed(CcKind::NewReno);
    let mut p = seg(16, t, Ecn::NotEct);
    p.payload = 300;
    p.flags = flags::PSH;
    assert_eq!(feed(&mut r, t, p), vec![(16_300, false, t)]);
    // A full-sized last segment waits for the timer as in Linux.
    let mut p = seg(17, t, Ecn::NotEct);
    p.seq = 16_300;
    p.flags = flags::PSH;
    assert!(feed(&mut r, t + US, p).is_empty());
}

fn sacks(r: &LinuxReceiver, p: &Packet) -> Vec<(u64, u64)> {
    r.sack_log().read(p.payload).map(|b| b.as_slice().to_vec()).unwrap_or_default()
}

fn feed_pkts(r: &mut LinuxReceiver, now: Nanos, p: Packet) -> Vec<Packet> {
    let mut out = Vec::new();
    r.on_data(now, &p, &mut out);
    out
}

#[test]
fn out_of_order_data_gets_immediate_acks_with_rfc2018_blocks() {
    let (mut r, t) = warmed(CcKind::NewReno);
    let k = |i: u64| i * MSS as u64;
    // Holes at 16, 18, 20, 22; segments 17, 19, 21, 23 arrive, then 24 extends 23's run.
    let mut last = Vec::new();
    for (n, i) in [17u64, 19, 21, 23, 24].into_iter().enumerate() {
        let acks = feed_pkts(&mut r, t + n as u64 * US, seg(i, t + n as u64 * US, Ecn::NotEct));
        assert_eq!(acks.len(), 1, "immediate duplicate ACK for segment {i}");
        assert_eq!(acks[0].seq, k(16));
        // Duplicate ACKs echo TS.Recent, the last in-order segment's time.
        assert_eq!(acks[0].tx_ns, 15 * US);
        last = sacks(&r, &acks[0]);
    }
    // The run holding the newest segment first, then the most recently reported; 3 sent.
    assert_eq!(last, vec![(k(23), k(25)), (k(21), k(22)), (k(19), k(20))]);
    // A retransmission fills hole 16: immediate ACK, 17 absorbed, its block gone; the
    // ACK echoes the retransmission's own time.
    let acks = feed_pkts(&mut r, t + 10 * US, seg(16, t + 10 * US, Ecn::NotEct));
    assert_eq!((acks.len(), acks[0].seq, acks[0].tx_ns), (1, k(18), t + 10 * US));
    assert_eq!(sacks(&r, &acks[0]), vec![(k(23), k(25)), (k(21), k(22)), (k(19), k(20))]);
    // 19's hole is filled by 18: still holes above, still immediate.
    let acks = feed_pkts(&mut r, t + 11 * US, seg(18, t + 11 * US, Ecn::NotEct));
    assert_eq!((acks.len(), acks[0].seq), (1, k(20)));
    assert_eq!(sacks(&r, &acks[0]), vec![(k(23), k(25)), (k(21), k(22))]);
    feed_pkts(&mut r, t + 12 * US, seg(20, t + 12 * US, Ecn::NotEct));
    // The last hole: ACK at once, no SACK option any more.
    let acks = feed_pkts(&mut r, t + 13 * US, seg(22, t + 13 * US, Ecn::NotEct));
    assert_eq!((acks.len(), acks[0].seq, acks[0].payload), (1, k(25), 0));
    // In order again: delayed.
    assert!(feed(&mut r, t + 14 * US, seg(25, t + 14 * US, Ecn::NotEct)).is_empty());
}

#[test]
fn first_segment_out_of_order_echoes_its_own_time() {
    let mut r = LinuxReceiver::new(&cfg(CcKind::NewReno), 1, 1, 0);
    assert_eq!(feed(&mut r, 7 * US, seg(2, 5 * US, Ecn::NotEct)), vec![(0, false, 5 * US)]);
    assert_eq!(feed(&mut r, 8 * US, seg(3, 6 * US, Ecn::NotEct)), vec![(0, false, 5 * US)]);
    assert_eq!(feed(&mut r, 9 * US, seg(0, 7 * US, Ecn::NotEct)), vec![(1000, false, 7 * US)]);
}

#[test]
fn duplicate_segment_acks_at_once_and_reenters_quick_ack_mode() {
    let (mut r, t) = warmed(CcKind::NewReno);
    assert_eq!(feed(&mut r, t, seg(3, t, Ecn::NotEct)), vec![(16_000, false, t)]);
    assert_eq!(r.stats().duplicates, 1);
    assert_eq!(r.quick_acks_left(), MAX_QUICKACKS - 1);
}

#[test]
fn dctcp_ce_change_sends_the_pending_ack_with_the_old_state_first() {
    let (mut r, t) = warmed(CcKind::Dctcp);
    // 16 held (timer armed), then 17 arrives CE: ACK 17000 with ECE = 0, then 18000 with
    // ECE = 1 at once (RFC 8257 §3.2).
    assert!(feed(&mut r, t, seg(16, t, Ecn::Ect0)).is_empty());
    let acks = feed(&mut r, t + US, seg(17, t + US, Ecn::Ce));
    assert_eq!(acks, vec![(17_000, false, t), (18_000, true, t)]);
    // CE continues: delayed ACKs every second segment, all with ECE.
    assert!(feed(&mut r, t + 2 * US, seg(18, t + 2 * US, Ecn::Ce)).is_empty());
    assert_eq!(feed(&mut r, t + 3 * US, seg(19, t + 3 * US, Ecn::Ce)), vec![(20_000, true, t + 2 * US)]);
    // CE ends with nothing pending: only the immediate ACK, ECE = 0.
    assert_eq!(feed(&mut r, t + 4 * US, seg(20, t + 4 * US, Ecn::Ect0)), vec![(21_000, false, t + 4 * US)]);
    assert!(feed(&mut r, t + 5 * US, seg(21, t + 5 * US, Ecn::Ect0)).is_empty());
    // DCTCP sets ECE itself: no quick-ACK mode on CE.
    assert_eq!(r.quick_acks_left(), 0);
    assert_eq!(r.stats().ce_segments, 3);
    assert_eq!(r.stats().ece_acks_sent, 2);
}

#[test]
fn classic_ecn_latches_ece_until_cwr_and_quick_acks_on_ce() {
    let (mut r, t) = warmed(CcKind::EcnStar);
    // CE: ECE latched, two quick ACKs.
    assert_eq!(feed(&mut r, t, seg(16, t, Ecn::Ce)), vec![(17_000, true, t)]);
    assert_eq!(feed(&mut r, t + US, seg(17, t + US, Ecn::Ect0)), vec![(18_000, true, t + US)]);
    // Quick ACKs used: back to delayed ACKs, still ECE.
    assert!(feed(&mut r, t + 2 * US, seg(18, t + 2 * US, Ecn::Ect0)).is_empty());
    assert_eq!(feed(&mut r, t + 3 * US, seg(19, t + 3 * US, Ecn::Ect0)), vec![(20_000, true, t + 2 * US)]);
    // A CWR segment clears the latch and is acknowledged at once.
    let mut p = seg(20, t + 4 * US, Ecn::Ect0);
    p.flags = flags::CWR;
    assert_eq!(feed(&mut r, t + 4 * US, p), vec![(21_000, false, t + 4 * US)]);
    // A not-ECT segment after ECT ones (a retransmission): two quick ACKs.
    assert_eq!(feed(&mut r, t + 5 * US, seg(21, t + 5 * US, Ecn::NotEct)).len(), 1);
    // Without ECN negotiated nothing is echoed.
    let (mut r, t) = warmed(CcKind::Cubic);
    feed(&mut r, t, seg(16, t, Ecn::Ce));
    assert!(!r.ece());
}

#[test]
fn random_arrivals_keep_acks_cumulative_and_blocks_well_formed() {
    // Segments 0..400 sent with reordering, duplicates, CE marks and drops that are
    // retransmitted later; the ACK stream must stay cumulative, every SACK block above
    // the ACK, inside received data, disjoint, at most 3, the first holding the segment
    // that triggered an out-of-order ACK; the timer flushes the rest.
    for seed in 1..=20u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let cc = [CcKind::Dctcp, CcKind::EcnStar, CcKind::Cubic][seed as usize % 3];
        let mut r = LinuxReceiver::new(&cfg(cc), 1, 1, 0);
        let n = 400u64;
        let mut order: Vec<u64> = (0..n).collect();
        for i in 0..n as usize {
            let j = (i + rnd(6) as usize).min(n as usize - 1);
            order.swap(i, j);
        }
        // Drops are retransmitted after the first pass; a few segments arrive twice.
        let (mut arrivals, mut later) = (Vec::new(), Vec::new());
        for &i in &order {
            match rnd(20) {
                0 | 1 => later.push(i),
                2 => {
                    arrivals.push(i);
                    later.push(i);
                }
                _ => arrivals.push(i),
            }
        }
        arrivals.extend(later);
        let mut held = vec![false; n as usize];
        let (mut now, mut last_ack, mut acks) = (0, 0u64, 0u64);
        let mut out = Vec::new();
        for (k, &i) in arrivals.iter().enumerate() {
            now += 1 + rnd(3) * US;
            if let Some(d) = r.timer() {
                if d <= now {
                    r.on_timer(d, &mut out);
                }
            }
            let ecn = if !cc.uses_ecn() {
                Ecn::NotEct
            } else if rnd(4) == 0 {
                Ecn::Ce
            } else {
                Ecn::Ect0
            };
            let mut p = seg(i, now, ecn);
            if rnd(50) == 0 {
                p.flags = flags::CWR;
            }
            let above = i * MSS as u64 >= r.delivered_bytes();
            held[i as usize] = true;
            out.clear();
            r.on_data(now, &p, &mut out);
            for (m, a) in out.iter().enumerate() {
                acks += 1;
                assert!(a.seq >= last_ack, "seed {seed} step {k}: ACK went back");
                last_ack = a.seq;
                assert!(a.tx_ns <= now);
                let blocks = sacks(&r, a);
                assert!(blocks.len() <= MAX_SACK_BLOCKS);
                for (b, &(s, e)) in blocks.iter().enumerate() {
                    assert!(s > a.seq && s < e, "seed {seed}: block {s}..{e} vs ACK {}", a.seq);
                    assert!((s..e).step_by(MSS as usize).all(|q| held[(q / MSS as u64) as usize]));
                    for &(s2, e2) in &blocks[b + 1..] {
                        assert!(e < s2 || e2 < s, "blocks overlap or touch");
                    }
                }
                let last = m == out.len() - 1;
                if last && above && i * MSS as u64 > a.seq {
                    let q = i * MSS as u64;
                    assert!(blocks[0].0 <= q && q < blocks[0].1, "seed {seed}: first block not the newest");
                }
            }
        }
        out.clear();
        if let Some(d) = r.timer() {
            r.on_timer(d, &mut out);
        }
        acks += out.len() as u64;
        assert_eq!(r.delivered_bytes(), n * MSS as u64);
        assert_eq!(out.last().map_or(last_ack, |a| a.seq), n * MSS as u64, "seed {seed}: all acknowledged");
        assert_eq!(r.timer(), None);
        assert_eq!(r.stats().acks_sent, acks);
    }
}

/// GRO, by hand: segments 16..=22 arrive 1.2 us apart from t (a train at 10 Gbps), the
/// poll 8 us after the first hands TCP the seven as one 7-segment skb: one ACK, at once
/// (more than one full segment unacknowledged), covering them all and echoing the first's
/// time; without GRO the same train is ACKed every second segment.
#[test]
fn gro_acks_once_per_aggregate() {
    let (r, t) = warmed(CcKind::NewReno);
    let mut r = r.with_gro(Some(8 * US));
    let mut out = Vec::new();
    for i in 0..7u64 {
        let now = t + i * 1_200;
        r.on_data(now, &seg(16 + i, now, Ecn::NotEct), &mut out);
    }
    assert!(out.is_empty() && r.timer() == Some(t + 8 * US), "held for the poll");
    r.on_timer(t + 8 * US, &mut out);
    assert_eq!(out.iter().map(|a| (a.seq, a.tx_ns)).collect::<Vec<_>>(), vec![(23_000, t)]);
    assert_eq!((r.stats().segments, r.stats().acks_sent, r.timer()), (23, 17, None));

    let (mut r, t) = warmed(CcKind::NewReno);
    let mut out = Vec::new();
    for i in 0..7u64 {
        let now = t + i * 1_200;
        r.on_data(now, &seg(16 + i, now, Ecn::NotEct), &mut out);
    }
    assert_eq!(out.iter().map(|a| a.seq).collect::<Vec<_>>(), vec![18_000, 20_000, 22_000]);
}

#[test]
fn dctcp_echo_conveys_exactly_the_marked_bytes() {
    // RFC 8257 §3.2's purpose: with the CE state machine every ACK covers segments of
    // one kind, so the bytes that ECE ACKs newly acknowledge are exactly the CE-marked
    // bytes, however ACKs are delayed. In-order arrivals, runs of CE, gaps that let the
    // delayed-ACK timer fire.
    let mut r = LinuxReceiver::new(&cfg(CcKind::Dctcp), 1, 1, 0);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let (mut now, mut ce, mut acked, mut ece_bytes, mut ce_bytes) = (0, false, 0u64, 0u64, 0u64);
    let mut out = Vec::new();
    let take = |out: &mut Vec<Packet>, acked: &mut u64, ece_bytes: &mut u64| {
        for a in out.drain(..) {
            if a.has(flags::ECE) {
                *ece_bytes += a.seq - *acked;
            }
            *acked = a.seq;
        }
    };
    for i in 0..3000 {
        now += if rnd(10) == 0 { DELACK + 1 } else { 1 + rnd(5) * US };
        if let Some(d) = r.timer() {
            if d <= now {
                r.on_timer(d, &mut out);
                take(&mut out, &mut acked, &mut ece_bytes);
            }
        }
        if rnd(6) == 0 {
            ce = !ce;
        }
        if ce {
            ce_bytes += MSS as u64;
        }
        r.on_data(now, &seg(i, now, if ce { Ecn::Ce } else { Ecn::Ect0 }), &mut out);
        take(&mut out, &mut acked, &mut ece_bytes);
    }
    r.on_timer(u64::MAX / 2, &mut out);
    take(&mut out, &mut acked, &mut ece_bytes);
    assert_eq!(acked, 3000 * MSS as u64);
    assert_eq!(ece_bytes, ce_bytes);
    assert!(r.stats().acks_sent < 2400, "delayed ACKs were in play: {}", r.stats().acks_sent);
}
