//! DCTCP (RFC 8257): alpha against the marking fraction, one reduction per window, the
//! receiver's CE echo with delayed ACKs (against a transcription of RFC 8257 §3.2).

use super::*;

#[test]
fn dctcp_alpha_converges_to_marking_fraction_and_cuts_by_alpha_half() {
    for f in [0.25f64, 0.1, 0.5] {
        let every = (1.0 / f).round() as u64;
        let mut net = Net::new(
            &cfg(CcKind::Dctcp),
            25 * NS_PER_US,
            GBPS1,
            Box::new(move |i, _| if i % every == 0 { Fate::Mark } else { Fate::Pass }),
        );
        net.send(UNLIMITED);
        net.run(300 * NS_PER_MS);
        let alpha = net.s.stats().alpha;
        assert!((alpha - f).abs() < 0.04, "F = {f}: alpha = {alpha}");
        // Every reduction is cwnd <- max(cwnd (1 - alpha/2), min_cwnd) with the alpha
        // updated by this very ACK (RFC 8257 §3.3 order). At F = 0.5 the window sits at the
        // 2-segment floor, where cuts change nothing.
        let entries: Vec<_> = net.acks.iter().filter(|a| a.entered).collect();
        assert!(entries.len() > 300, "{}", entries.len());
        assert_eq!(net.s.stats().ecn_reductions as usize, entries.len());
        let mut visible = 0;
        for r in &entries {
            let want = ((r.cwnd_before as f64 * (1.0 - r.alpha / 2.0)) as u64).max(2 * MSS).min(r.cwnd_before);
            assert_eq!(r.cwnd_after, want, "{r:?}");
            visible += (want < r.cwnd_before) as usize;
        }
        if f < 0.5 {
            assert!(visible > 300, "{visible}");
        }
        // No ACK other than a reduction-window entry lowers the window.
        assert_eq!(net.reductions().len(), visible);
        let st = net.s.stats();
        assert_eq!(st.timeouts + st.fast_retransmits, 0);
    }
}

#[test]
fn dctcp_reduces_at_most_once_per_window() {
    // Every packet marked: the window is cut once per RTT, not on every ACK.
    let mut net = Net::new(&cfg(CcKind::Dctcp), 25 * NS_PER_US, GBPS10, Box::new(|_, _| Fate::Mark));
    net.send(UNLIMITED);
    net.run(10 * NS_PER_MS);
    let red: Vec<_> = net.acks.iter().filter(|a| a.entered).collect();
    let rtts = (10 * NS_PER_MS) / (50 * NS_PER_US);
    assert!(red.len() as u64 <= rtts + 1 && red.len() as u64 >= rtts / 2, "{} cuts in {rtts} RTTs", red.len());
    // Reactions are at least an RTT apart, although every ACK carries ECE.
    for w in red.windows(2) {
        assert!(w[1].t - w[0].t >= 50 * NS_PER_US, "{w:?}");
    }
    assert!(net.acks.iter().all(|a| a.ece));
    assert!((net.s.stats().alpha - 1.0).abs() < 0.01);
    assert_eq!(net.s.cwnd(), 2 * MSS, "min_cwnd floor");
}

#[test]
fn dctcp_alpha_init_param() {
    for a0 in [0.0, 1.0, 0.5] {
        let c = TcpConfig { dctcp_alpha_init: a0, ..TcpConfig::textbook() };
        let s = TcpSender::new(&c, 0, 0, 1, 0);
        assert_eq!(s.stats().alpha, a0);
    }
    // With alpha_init = 1, the first mark halves like ECN*; with 0 it barely cuts.
    let first_cut = |a0: f64| {
        let c = TcpConfig { dctcp_alpha_init: a0, ..TcpConfig::textbook() };
        let mut net = Net::new(&c, 25 * NS_PER_US, GBPS10, mark_first_tx(&[5]));
        net.send(segs(100));
        net.run(u64::MAX);
        *net.acks.iter().find(|a| a.entered).unwrap()
    };
    let r1 = first_cut(1.0);
    let r0 = first_cut(0.0);
    // alpha_init 1 decayed once (the first ACK, unmarked, closed the first observation
    // window): 15/16; the cut is then close to a halving.
    assert_eq!(r1.alpha, 15.0 / 16.0);
    assert_eq!(r1.cwnd_after, (r1.cwnd_before as f64 * (1.0 - 15.0 / 32.0)) as u64);
    assert!(r0.cwnd_after as f64 >= r0.cwnd_before as f64 * 0.95);
    assert!(r1.ece && r0.ece);
}

/// Reference model of the receiver's CE echo, transcribed from RFC 8257 §3.2 (two-state
/// machine) for in-order segments 0..n, ACK every `m` segments, delayed-ACK timer at the end.
/// Returns (cumulative ACK in segments, ECE) pairs.
fn reference_dctcp_echo(ce: &[bool], m: u32) -> Vec<(u64, bool)> {
    let mut state = false;
    let mut pending = 0u32;
    let mut acks = Vec::new();
    for (i, &c) in ce.iter().enumerate() {
        if c != state {
            // "If the CE codepoint ... differs from DCTCP.CE: send an immediate ACK
            // (for the segments before this one) with ECE = the old state."
            if pending > 0 {
                acks.push((i as u64, state));
                pending = 0;
            }
            state = c;
        }
        pending += 1;
        if pending >= m {
            acks.push((i as u64 + 1, state));
            pending = 0;
        }
    }
    if pending > 0 {
        acks.push((ce.len() as u64, state));
    }
    acks
}

/// Feeds in-order segments with the given CE pattern, 1 us apart, to a fresh receiver, and
/// lets the delayed-ACK timer fire at the end.
fn run_receiver(cc: CcKind, ce: &[bool], m: u32) -> Vec<(u64, bool)> {
    let c = TcpConfig { cc, delayed_ack: m, delayed_ack_timeout: Duration(100 * NS_PER_US), ..TcpConfig::textbook() };
    let mut r = TcpReceiver::new(&c, 0, 1, 0);
    let mut out = Vec::new();
    for (i, &x) in ce.iter().enumerate() {
        let p = Packet {
            seq: i as u64 * MSS,
            payload: MSS as u32,
            size: MSS as u32 + 40,
            tx_ns: i as u64,
            kind: Kind::Data,
            ecn: if x { Ecn::Ce } else { Ecn::Ect0 },
            ..Default::default()
        };
        r.on_data(i as u64 * NS_PER_US, &p, &mut out);
    }
    if let Some(t) = r.timer() {
        let n = out.len();
        r.on_timer(t - 1, &mut out);
        assert_eq!(out.len(), n, "early timer call is harmless");
        r.on_timer(t, &mut out);
    }
    assert_eq!(r.timer(), None);
    assert_eq!(r.delivered_bytes(), ce.len() as u64 * MSS);
    out.iter().map(|a| (a.seq / MSS, a.has(flags::ECE))).collect()
}

#[test]
fn dctcp_receiver_ce_echo_delayed_ack_2() {
    let x = true;
    let o = false;
    // Scripted by hand from RFC 8257 §3.2 with m = 2.
    let ce = [o, o, x, x, x, o, x, o];
    let want = vec![
        (2, false), // s0, s1: two segments -> ACK, ECE 0
        (4, true),  // s2 (state 0->1, nothing pending), s3 -> ACK, ECE 1
        (5, true),  // s5 changes state: immediate ACK for s4 with the old ECE (1)
        (6, false), // s6 changes state: immediate ACK for s5 with ECE 0
        (7, true),  // s7 changes state: immediate ACK for s6 with ECE 1
        (8, false), // delayed-ACK timer: s7 with ECE 0
    ];
    assert_eq!(run_receiver(CcKind::Dctcp, &ce, 2), want);
    assert_eq!(reference_dctcp_echo(&ce, 2), want);
    // Exhaustively against the reference for all 10-segment CE patterns, m = 1, 2, 3.
    for m in 1..=3 {
        for bits in 0u32..1024 {
            let ce: Vec<bool> = (0..10).map(|i| bits >> i & 1 == 1).collect();
            assert_eq!(run_receiver(CcKind::DctcpDualq, &ce, m), reference_dctcp_echo(&ce, m), "m={m} {ce:?}");
        }
    }
    // Each ECE ACK covers only CE segments, each non-ECE ACK only unmarked ones: the sender
    // can count marked bytes exactly.
    let ce = [o, x, o, o, x, x, o, x, x, x, o];
    let acks = run_receiver(CcKind::Dctcp, &ce, 2);
    let mut prev = 0;
    for (a, ece) in acks {
        assert!(ce[prev as usize..a as usize].iter().all(|&c| c == ece));
        prev = a;
    }
}

#[test]
fn delayed_ack_timer_and_immediate_acks() {
    let c = TcpConfig { delayed_ack: 2, delayed_ack_timeout: Duration(40 * NS_PER_US), ..TcpConfig::textbook() };
    let mut r = TcpReceiver::new(&c, 0, 1, 0);
    let mut out = Vec::new();
    let seg = |k: u64, fin: bool| Packet {
        seq: k * MSS,
        payload: MSS as u32,
        size: MSS as u32 + 40,
        kind: Kind::Data,
        ecn: Ecn::Ect0,
        tx_ns: 1000 + k,
        flags: if fin { flags::PSH } else { 0 },
        dscp: 5,
        ..Default::default()
    };
    r.on_data(100, &seg(0, false), &mut out);
    assert!(out.is_empty());
    assert_eq!(r.timer(), Some(100 + 40 * NS_PER_US));
    r.on_timer(100 + 40 * NS_PER_US - 1, &mut out);
    assert!(out.is_empty(), "early timer call is harmless");
    r.on_timer(100 + 40 * NS_PER_US, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq, out[0].tx_ns, out[0].dscp, out[0].size), (MSS, 1000, 5, crate::packet::ACK_BYTES));
    assert_eq!(r.timer(), None);
    out.clear();
    // Out of order: immediate duplicate ACK echoing the segment that triggered it.
    r.on_data(200, &seg(2, false), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq, out[0].tx_ns), (MSS, 1002));
    assert_eq!(r.ooo_intervals(), &[(2 * MSS, 3 * MSS)]);
    out.clear();
    r.on_data(210, &seg(4, false), &mut out);
    r.on_data(220, &seg(3, false), &mut out);
    assert_eq!(r.ooo_intervals(), &[(2 * MSS, 5 * MSS)]);
    out.clear();
    // Filling the gap: immediate ACK for everything.
    r.on_data(300, &seg(1, false), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 5 * MSS);
    assert!(r.ooo_intervals().is_empty());
    out.clear();
    // Duplicate segment: immediate ACK.
    r.on_data(400, &seg(1, false), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 5 * MSS);
    out.clear();
    // PSH: immediate ACK even with a single pending segment.
    r.on_data(500, &seg(5, true), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, 6 * MSS);
    assert_eq!(r.timer(), None);
}

#[test]
fn delayed_ack_flows_complete() {
    for cc in [CcKind::NewReno, CcKind::Dctcp] {
        let c = TcpConfig { cc, delayed_ack: 2, delayed_ack_timeout: Duration::from_ms(40), ..TcpConfig::textbook() };
        let mut net = Net::pass(&c, 25 * NS_PER_US, GBPS10);
        net.send(segs(21));
        net.run(u64::MAX);
        // The odd last segment carries PSH and is ACKed at once: no 40 ms stall.
        assert!(net.finish.unwrap() < NS_PER_MS, "{:?}", net.finish);
        assert!(net.r.stats().acks_sent <= 12);
    }
}
