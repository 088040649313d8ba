//! The Linux sender against the RFCs' own examples and hand-computed kernel values.

use super::*;
use crate::tcp::config::CcKind;
use crate::tcp::linux::sack_option::SackBlocks;
use crate::tcp::linux::sender::Open;
use crate::tcp::linux::LinuxReceiver;

const MSS: u64 = 1000;

fn cfg(cc: CcKind, init_cwnd: u32) -> TcpConfig {
    TcpConfig {
        cc,
        mss: MSS as u32,
        init_cwnd,
        rto_min: ecnlab_core::units::Duration::from_ms(200),
        // Pre-established: these tests start from an open connection.
        handshake: false,
        // RFC 6675's loss detection; TLP and RACK have their own tests.
        tlp: false,
        rack: false,
        ..TcpConfig::default()
    }
}

fn ack(seq: u64, ece: bool, tx: Nanos) -> Packet {
    Packet { kind: Kind::Ack, seq, tx_ns: tx, flags: if ece { flags::ECE } else { 0 }, ..Packet::default() }
}

fn sack(blocks: &[(u64, u64)]) -> SackBlocks {
    let mut b = SackBlocks::default();
    for &(s, e) in blocks {
        b.push(s * MSS, e * MSS);
    }
    b
}

/// What one ACK made the sender send, a letter per segment: "N" new data (above `hi`,
/// the highest byte sent before), "R" a retransmission.
fn sent(out: &mut Vec<Packet>, hi: &mut u64) -> String {
    let r = out
        .iter()
        .map(|p| {
            if p.seq >= *hi {
                *hi = p.seq + p.payload as u64;
                'N'
            } else {
                'R'
            }
        })
        .collect();
    out.clear();
    r
}

/// A sender with `n` segments of the window sent at t = 0 and nothing else queued beyond
/// `total` segments.
fn started(cc: CcKind, n: u32, total: u64) -> (LinuxSender, Vec<Packet>) {
    let mut s = LinuxSender::new(&cfg(cc, n), 0, 0, 1, 0);
    s.add_data(total * MSS);
    let mut out = Vec::new();
    s.poll(0, &mut out);
    assert_eq!(out.len(), n as usize);
    out.clear();
    (s, out)
}

/// RFC 6937 §5's first example: cwnd 20, one segment lost, Reno (ssthresh = 10), every
/// other segment delivered and SACKed one per ACK, with more data to send. The first two
/// duplicate ACKs each release a new segment (Limited Transmit: pipe leaves SACKed
/// segments out), the third enters recovery and PRR retransmits at once; from then on
/// PRR sends one new segment per two ACKs, sndcnt = CEIL(prr_delivered · ssthresh /
/// RecoverFS) - prr_out, with RecoverFS = the window before the reduction (Linux's
/// `prior_cwnd`). The 19th ACK finds pipe = ssthresh, where the bound ssthresh - pipe
/// allows nothing: R plus 7 new segments in 17 ACKs, and the flight is ssthresh.
#[test]
fn prr_spreads_a_reno_halving_over_the_round_trip_as_rfc6937_shows() {
    let (mut s, mut out) = started(CcKind::NewReno, 20, 1000);
    let mut pattern = Vec::new();
    let mut hi = 20 * MSS;
    for k in 1..=19u64 {
        s.on_ack(1000 * k, &ack(0, false, 0), Some(&sack(&[(1, k + 1)])), &mut out);
        pattern.push(sent(&mut out, &mut hi));
        if k == 3 {
            assert_eq!(s.sock().ca_state, CaState::Recovery);
            assert_eq!((s.sock().snd_ssthresh, s.sock().prior_cwnd), (10, 20));
        }
    }
    let want = ["N", "N", "R", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", "N", "", ""];
    assert_eq!(pattern, want, "pipe {}", s.pipe());
    assert_eq!(s.pipe(), 10, "pipe ends at ssthresh");
    assert_eq!(s.stats().fast_retransmits, 1);
    // The retransmission is acknowledged with everything above it: recovery ends with
    // cwnd = ssthresh (tcp_end_cwnd_reduction).
    s.on_ack(30_000, &ack(22 * MSS, false, 0), None, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().snd_cwnd, 10);
}

/// PRR's bounded part: when losses take pipe below ssthresh, each ACK may send what was
/// delivered (PRR-CRB), one more on an ACK that advances snd_una without new loss
/// (PRR-SSRB), never beyond ssthresh.
#[test]
fn prr_rebuilds_to_ssthresh_when_pipe_falls_below_it() {
    let (mut s, mut out) = started(CcKind::NewReno, 20, 20);
    // Segments 0..=11 lost: only 12..19 arrive, each SACKed.
    for k in 12..20u64 {
        s.on_ack(1000 * k, &ack(0, false, 0), Some(&sack(&[(12, k + 1)])), &mut out);
    }
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    // Recovery began on the third SACK (pipe 5 < ssthresh 10): from then on PRR-CRB sends
    // what each ACK delivered, one segment per ACK for the six ACKs 14..=19, all lost
    // segments' retransmissions.
    assert_eq!(out.len(), 6);
    assert!(out.iter().all(|p| p.seq < 12 * MSS));
    assert_eq!(s.pipe(), 6);
    out.clear();
    // The retransmission of segment 0 arrives: an ACK that advances snd_una without new
    // loss. PRR-SSRB: min(ssthresh - pipe = 5, max(prr_delivered - prr_out, 1) + 1 = 2).
    s.on_ack(30_000, &ack(MSS, false, 0), Some(&sack(&[(12, 20)])), &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(s.pipe(), 7);
}

/// ECN-Echo in Open: CWR (tcp_enter_cwr), the algorithm's ssthresh, PRR down to it, CWR
/// flag on the next new segment; the episode ends with cwnd = ssthresh once data above
/// high_seq is acknowledged.
#[test]
fn ecn_echo_enters_cwr_and_prr_reduces_the_window() {
    let (mut s, mut out) = started(CcKind::EcnStar, 20, 1000);
    s.on_ack(1000, &ack(MSS, true, 0), None, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Cwr);
    assert_eq!(s.sock().snd_ssthresh, 10);
    assert_eq!(s.stats().ecn_reductions, 1);
    assert_eq!(out.len(), 1, "PRR's first ACK sends one (ceil(1·10/20))");
    assert!(out[0].has(flags::CWR), "RFC 3168 §6.1.2: CWR on the first new segment");
    out.clear();
    let mut total = 1;
    for k in 2..=20u64 {
        s.on_ack(1000 * k, &ack(k * MSS, true, 0), None, &mut out);
        total += out.len();
        assert!(out.iter().all(|p| !p.has(flags::CWR)));
        out.clear();
    }
    assert_eq!(s.stats().ecn_reductions, 1, "one reduction per window of data");
    assert_eq!(total, 10, "20 ACKed, 10 sent: cwnd halved over one round trip");
    // The ACK of the first segment sent after the reduction ends CWR.
    s.on_ack(30_000, &ack(21 * MSS, false, 0), None, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Open);
    assert_eq!(s.sock().snd_cwnd, 10);
}

/// RFC 6675 NextSeg rule 4: when the last segment is lost and no new data exists, one
/// rescue retransmission of the highest unSACKed segment goes out in recovery, not an RTO.
#[test]
fn the_rescue_retransmission_repairs_a_lost_tail() {
    let (mut s, mut out) = started(CcKind::NewReno, 10, 10);
    // Segments 0 and 9 lost; 1..=8 arrive.
    let mut rescued = false;
    for k in 1..=8u64 {
        s.on_ack(1000 * k, &ack(0, false, 0), Some(&sack(&[(1, k + 1)])), &mut out);
        rescued |= out.iter().any(|p| p.seq == 9 * MSS);
        out.clear();
    }
    assert!(rescued, "segment 9 was retransmitted by rule 4");
    assert_eq!(s.stats().timeouts, 0);
    assert_eq!(s.stats().retransmitted_bytes, 2 * MSS);
}

/// Without SACK, duplicate ACKs stand for SACKed segments (Linux's Reno emulation): the
/// third one retransmits the head, each partial ACK the next.
#[test]
fn without_sack_three_duplicate_acks_retransmit_the_head() {
    let mut c = cfg(CcKind::NewReno, 10);
    c.sack = false;
    let mut s = LinuxSender::new(&c, 0, 0, 1, 0);
    s.add_data(10 * MSS);
    let mut out = Vec::new();
    s.poll(0, &mut out);
    out.clear();
    for k in 1..=3 {
        s.on_ack(1000 * k, &ack(0, false, 0), None, &mut out);
    }
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert!(out.iter().any(|p| p.seq == 0), "fast retransmit of the head");
    out.clear();
    // A partial ACK (segment 5 was lost too): its retransmission follows.
    s.on_ack(5000, &ack(5 * MSS, false, 0), None, &mut out);
    assert!(out.iter().any(|p| p.seq == 5 * MSS), "{out:?}");
}

/// An RTO: Loss state, cwnd = 1, the head retransmitted, the timer backed off; the next
/// ACK grows cwnd by slow start and the sample ends the backoff.
#[test]
fn a_timeout_enters_loss_and_backs_off() {
    let (mut s, mut out) = started(CcKind::NewReno, 10, 10);
    let rto = s.rto();
    assert_eq!(rto, 1_000_000_000, "rto_init 1 s before any sample (TCP_TIMEOUT_INIT)");
    s.on_timer(rto, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Loss);
    assert_eq!((s.sock().snd_cwnd, s.sock().snd_ssthresh), (1, 5));
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0]);
    assert_eq!(s.rto(), 2 * rto);
    assert_eq!(s.timer(), Some(3 * rto));
    out.clear();
    s.on_ack(rto + 100_000, &ack(MSS, false, rto), None, &mut out);
    assert_eq!(s.sock().snd_cwnd, 2, "slow start in Loss");
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![MSS, 2 * MSS]);
    assert_eq!(s.rto(), 100_000 + 200_000_000, "srtt + rto_min after the first sample");
    // Loss ends when everything outstanding at the timeout is acknowledged.
    s.on_ack(rto + 200_000, &ack(10 * MSS, false, rto), None, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Open);
}

/// End to end with a receiver that sends SACK blocks: a window with three losses is
/// repaired in one recovery, without a timeout, and every byte arrives once in order.
#[test]
fn a_burst_of_losses_is_repaired_in_one_recovery() {
    let c = TcpConfig { delayed_ack: 1, ..cfg(CcKind::NewReno, 20) };
    let mut s = LinuxSender::new(&c, 0, 0, 1, 0);
    let mut r = LinuxReceiver::new(&c, 0, 1, 0);
    s.add_data(100 * MSS);
    let (mut to_rcv, mut to_snd) = (Vec::new(), Vec::new());
    let mut now = 0;
    s.poll(now, &mut to_rcv);
    let mut dropped = 0;
    for _round in 0..40 {
        now += 100_000;
        for p in std::mem::take(&mut to_rcv) {
            if !p.has(flags::CWR)
                && [3, 7, 8].contains(&(p.seq / MSS))
                && s.stats().retransmitted_bytes == 0
                && dropped < 3
            {
                dropped += 1;
                continue;
            }
            r.on_data(now, &p, &mut to_snd);
        }
        now += 100_000;
        for a in std::mem::take(&mut to_snd) {
            let blocks = r.sack_log().read(a.payload).copied();
            s.on_ack(now, &a, blocks.as_ref(), &mut to_rcv);
        }
        if s.is_idle() {
            break;
        }
    }
    assert!(s.is_idle(), "all data acknowledged");
    assert_eq!(r.delivered_bytes(), 100 * MSS);
    assert_eq!(dropped, 3);
    assert_eq!((s.stats().fast_retransmits, s.stats().timeouts), (1, 0));
    assert_eq!(s.stats().retransmitted_bytes, 3 * MSS, "only the lost segments are resent");
}

/// tcp_is_cwnd_limited: an application-limited flow (2 segments in flight, cwnd 10) does
/// not grow its window in slow start (cwnd >= 2 · max_packets_out), a cwnd-limited one does.
#[test]
fn only_a_cwnd_limited_flow_grows() {
    let mut s = LinuxSender::new(&cfg(CcKind::NewReno, 10), 0, 0, 1, 0);
    let mut out = Vec::new();
    s.add_data(2 * MSS);
    s.poll(0, &mut out);
    s.on_ack(1000, &ack(2 * MSS, false, 0), None, &mut out);
    assert_eq!(s.sock().snd_cwnd, 10, "application-limited: no growth");
    let (mut s, mut out) = started(CcKind::NewReno, 10, 1000);
    s.on_ack(1000, &ack(2 * MSS, false, 0), None, &mut out);
    assert_eq!(s.sock().snd_cwnd, 12, "slow start: +2 for 2 segments delivered");
}

/// tcp_cwnd_restart: after an idle period, cwnd halves once per RTO that elapsed, down to
/// the initial window; ssthresh keeps 3/4 of the window that was (tcp_current_ssthresh).
#[test]
fn an_idle_period_restarts_the_window() {
    let (mut s, mut out) = started(CcKind::NewReno, 10, 10);
    // A window of 40 after a reduction to ssthresh 20, everything acknowledged.
    s.tp.snd_cwnd = 40;
    s.tp.snd_ssthresh = 20;
    s.on_ack(1000, &ack(10 * MSS, false, 0), None, &mut out);
    let cwnd = s.sock().snd_cwnd;
    let rto = s.rto();
    assert!(s.is_idle());
    // Idle for 2.5 RTO: two halvings (delta - rto > 0 twice), floor 10.
    s.add_data(100 * MSS);
    s.poll(1000 + rto * 5 / 2, &mut out);
    assert_eq!(s.sock().snd_cwnd, (cwnd / 4).max(10));
    assert_eq!(s.sock().snd_ssthresh, (cwnd >> 1) + (cwnd >> 2), "max(20, 3/4 cwnd)");
    assert_eq!(out.len() as u32, s.sock().snd_cwnd);
}

/// Through the sender, DCTCP's alpha is updated once per window of data (tcp_dctcp.c
/// `dctcp_update_alpha`: on the first ACK at or past the snd_nxt recorded at the previous
/// update, in `in_ack_event`, before this ACK releases new data), also inside the CWR state
/// that ECN-Echo opens, where `cong_avoid` is not called: the hooks must see snd_nxt move as
/// segments are sent.
#[test]
fn dctcp_alpha_is_updated_once_per_window_through_the_sender() {
    let mut c = cfg(CcKind::Dctcp, 10);
    c.dctcp_alpha_init = 0.0;
    let mut s = LinuxSender::new(&c, 0, 0, 1, 0);
    s.add_data(1000 * MSS);
    let mut out = Vec::new();
    s.poll(0, &mut out);
    // dctcp_init records snd_nxt before anything is sent: the first ACK updates.
    let (mut next_seq, mut last, mut updates) = (0u64, s.stats().alpha, 0);
    for i in 1..=60u64 {
        let snd_nxt_before = s.sock().snd_nxt;
        out.clear();
        // Every segment ACKed at once, every ACK with ECN-Echo: alpha only grows.
        s.on_ack(i * 10_000, &ack(i * MSS, true, 0), None, &mut out);
        let due = i * MSS >= next_seq;
        if due {
            next_seq = snd_nxt_before;
            updates += 1;
        }
        assert_eq!(s.stats().alpha != last, due, "ACK {i}: alpha {} -> {}", last, s.stats().alpha);
        last = s.stats().alpha;
    }
    assert!(updates >= 5 && last > 0.0, "{updates} updates, alpha {last}");
}

/// RTT samples as `tcp_clean_rtx_queue`, `tcp_sacktag_one` and `tcp_ack_update_rtt` take
/// them (Karn's rule, RFC 6298 §3): a segment gives its sample when it is first SACKed or
/// cumulatively acknowledged, never from a retransmission. Segment 0 is lost; 1..=3 are
/// SACKed at 2, 3, 4 ms (three samples, on ACKs that do not move snd_una); the third SACK
/// retransmits 0, whose cumulative ACK at 10 ms covers 0..=3: no sequence sample (0 was
/// retransmitted, 1..=3 were SACKed), so the timestamp echo, the retransmission's own send
/// time (RFC 7323 §4.3), gives 6 ms.
#[test]
fn rtt_samples_come_from_sacks_and_follow_karn() {
    let (mut s, mut out) = started(CcKind::NewReno, 4, 4);
    for k in 1..=3u64 {
        s.on_ack(1_000_000 * (k + 1), &ack(0, false, 0), Some(&sack(&[(1, k + 1)])), &mut out);
    }
    let rexmit = out.iter().find(|p| p.seq == 0).expect("fast retransmit of segment 0").tx_ns;
    assert_eq!(rexmit, 4_000_000);
    out.clear();
    let mut e = None;
    for m in [2000, 3000, 4000] {
        RttEstimator::update(&mut e, m, 0, 4 * MSS, 200_000);
    }
    assert_eq!(s.rtt_estimator(), e.as_ref(), "a sample from each newly SACKed segment");
    s.on_ack(10_000_000, &ack(4 * MSS, false, rexmit), None, &mut out);
    RttEstimator::update(&mut e, 6000, 4 * MSS, 4 * MSS, 200_000);
    assert_eq!(s.rtt_estimator(), e.as_ref(), "the echo's 6 ms, not a retransmitted or SACKed segment's send time");
}

/// A loss found during CWR (`tcp_enter_recovery` from `tcp_fastretrans_alert`): the
/// reduction under way continues (`tcp_in_cwnd_reduction`, so no `tcp_init_cwnd_reduction`):
/// `high_seq` stays where CWR set it, and so do PRR's `prior_cwnd`, `prr_delivered` and
/// `prr_out` (no second forced segment). Recovery therefore ends once the data sent before
/// the ECN-Echo is acknowledged, although segments sent since are still outstanding.
#[test]
fn a_loss_during_cwr_keeps_the_reduction_and_its_recovery_point() {
    let (mut s, mut out) = started(CcKind::EcnStar, 20, 1000);
    s.on_ack(1000, &ack(MSS, true, 0), None, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Cwr);
    let cwr_high = 20 * MSS;
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![cwr_high]);
    out.clear();
    // Segment 1 is lost; 2..=4 arrive and are SACKed: the third SACK enters Recovery.
    let mut hi = 21 * MSS;
    for k in 2..=4u64 {
        s.on_ack(1000 * k, &ack(MSS, false, 0), Some(&sack(&[(2, k + 1)])), &mut out);
        sent(&mut out, &mut hi);
    }
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert!(
        matches!(s.episode, Episode::Recovery { high_seq, .. } if high_seq == cwr_high),
        "tcp_enter_recovery keeps CWR's high_seq"
    );
    assert_eq!(s.sock().prior_cwnd, 20, "and its prior_cwnd");
    assert!(hi > cwr_high, "new data went out after the ECN-Echo");
    // The retransmission arrives: everything up to CWR's high_seq is acknowledged.
    s.on_ack(10_000, &ack(cwr_high, false, 0), None, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Open, "Recovery ends at CWR's high_seq");
    assert_eq!(s.sock().snd_ssthresh, 10, "one reduction (CWR's), not a second cut");
}

/// A sender with TSO (64 KiB skbs) and `n` segments of window, 100 segments to send.
fn with_tso(kernel: crate::tcp::config::Kernel, n: u32) -> (LinuxSender, Vec<Packet>) {
    let c = TcpConfig { kernel, ..cfg(CcKind::Dctcp, n) };
    let mut s = LinuxSender::new(&c, 0, 0, 1, 0).with_tso(Some(65536));
    s.add_data(100 * MSS);
    let mut out = Vec::new();
    s.poll(0, &mut out);
    (s, out)
}

/// `tcp_write_xmit` with TSO, by hand: an initial window of 20 goes out as two skbs of 10
/// (`tcp_cwnd_test` gives an skb at most half the window, from 4.x on), as one skb of 20
/// under 3.18; the wire sees 20 segments back to back either way.
#[test]
fn tso_skbs_are_at_most_half_the_window_from_4x() {
    use crate::tcp::config::Kernel;
    let (s, out) = with_tso(Kernel::V6_18, 20);
    assert_eq!((out.len(), s.scoreboard().skbs_out), (20, 2));
    let (s, out) = with_tso(Kernel::V4_19, 20);
    assert_eq!((out.len(), s.scoreboard().skbs_out), (20, 2));
    let (s, out) = with_tso(Kernel::V3_18, 20);
    assert_eq!((out.len(), s.scoreboard().skbs_out), (20, 1));
    let (s, out) = started(CcKind::Dctcp, 20, 100);
    assert_eq!((out.len(), s.scoreboard().skbs_out), (0, 20), "without TSO, an skb per segment");
}

/// `tcp_tso_should_defer`, by hand. 20 segments out at t = 0; at 100 us the ACK of 3 (RTT
/// 100 us) grows cwnd to 23 with 17 in flight: 6 segments of room, below a third of the
/// window (23 x 1,460 / 3 = 11,193 B) and below a whole skb, and the oldest outstanding
/// segment went 100 us ago (at least half an RTT): the skb waits. At 110 us the ACK of 4 more
/// leaves 14 of cwnd 27 free, over a third: one skb of 13 (half the window) goes. Without
/// TSO the first ACK sends its 6 at once.
#[test]
fn tso_defers_a_small_skb_for_the_next_ack() {
    use crate::tcp::config::Kernel;
    let (mut s, mut out) = with_tso(Kernel::V6_18, 20);
    out.clear();
    s.on_ack(100_000, &ack(3 * MSS, false, 0), None, &mut out);
    assert_eq!((s.sock().snd_cwnd, s.pipe()), (23, 17));
    assert!(out.is_empty(), "deferred: {} sent", out.len());
    s.on_ack(110_000, &ack(7 * MSS, false, 0), None, &mut out);
    assert_eq!((out.len(), s.scoreboard().skbs_out), (13, 3));
    assert!(out.windows(2).all(|w| w[1].seq == w[0].seq + MSS), "one skb, contiguous");

    let (mut s, mut out) = started(CcKind::Dctcp, 20, 100);
    s.on_ack(100_000, &ack(3 * MSS, false, 0), None, &mut out);
    assert_eq!(out.len(), 6);
}

/// The handshake by hand on 4.19, whose SYN timeouts all double (rto_syn 1 s): the SYN at 0
/// is lost; its timer fires at 1 s, the second SYN's at 1 + 2 = 3 s; a SYN-ACK at 3.5 s echoing the third SYN (sent at 3 s) gives a
/// 500 ms RTT sample (RTO = 3 x 500 ms), and, the SYN having gone three times
/// (`total_retrans` > 1), a window of one segment: the pure ACK, then one segment. Sent once,
/// the window stays 10.
#[test]
fn the_handshake_backs_off_its_syn_and_opens_with_its_rtt() {
    let s = 1_000_000_000u64;
    let c = TcpConfig { handshake: true, kernel: crate::tcp::config::Kernel::V4_19, ..cfg(CcKind::NewReno, 10) };
    let mut snd = LinuxSender::new(&c, 0, 0, 1, 0);
    snd.add_data(20 * MSS);
    let mut out = Vec::new();
    snd.poll(0, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].has(flags::SYN) && out[0].payload == 0);
    assert_eq!(snd.timer(), Some(s));
    out.clear();
    snd.on_timer(s, &mut out);
    assert_eq!((out.len(), snd.timer()), (1, Some(3 * s)));
    snd.on_timer(3 * s, &mut out);
    assert_eq!((out.len(), snd.timer(), snd.stats().syn_timeouts), (2, Some(7 * s), 2));
    out.clear();
    let synack = Packet { kind: Kind::Ack, flags: flags::SYN, tx_ns: 3 * s, ..Packet::default() };
    snd.on_ack(3 * s + s / 2, &synack, None, &mut out);
    assert_eq!(snd.open_state(), Open::Established);
    assert_eq!(snd.rto(), 3 * s / 2, "srtt 500 ms + rttvar 2 x 500 ms");
    let kinds: Vec<(u32, bool)> = out.iter().map(|p| (p.payload, p.has(flags::SYN))).collect();
    assert_eq!(kinds, vec![(0, false), (1000, false)], "the pure ACK, then a window of one");

    let mut snd = LinuxSender::new(&c, 0, 0, 1, 0);
    snd.add_data(20 * MSS);
    snd.poll(0, &mut out);
    out.clear();
    let synack = Packet { kind: Kind::Ack, flags: flags::SYN, tx_ns: 0, ..Packet::default() };
    snd.on_ack(100_000, &synack, None, &mut out);
    assert_eq!(out.len(), 11, "the pure ACK and the initial window of 10");
    // Failure: six retries, then nothing more.
    let mut snd = LinuxSender::new(&c, 0, 0, 1, 0);
    snd.add_data(MSS);
    snd.poll(0, &mut out);
    let mut t = 0;
    while let Some(d) = snd.timer() {
        t = d;
        snd.on_timer(d, &mut out);
    }
    assert_eq!((snd.open_state(), snd.stats().syn_timeouts), (Open::Failed, 6));
    assert_eq!(t, 127 * s, "1 + 2 + 4 + 8 + 16 + 32 + 64 s: the seventh SYN's timer ends it");
}

/// From Linux 6.5 the first four SYN retransmissions wait `rto_syn` each
/// (`tcp_syn_linear_timeouts` = 4; ip-sysctl.rst: "SYN RTOs to be: 1, 1, 1, 1, 1, 2, 4"), and
/// `tcp_write_timeout` allows 6 + 4 retransmissions: by hand, SYNs at 0, 1, 2, 3, 4, 5, 7, 11,
/// 19, 35 and 67 s, and the eleventh SYN's timer (64 s) ends it at 131 s.
#[test]
fn the_first_syn_timeouts_are_linear_from_linux_6_5() {
    let s = 1_000_000_000u64;
    let c = TcpConfig { handshake: true, kernel: crate::tcp::config::Kernel::V6_18, ..cfg(CcKind::NewReno, 10) };
    let mut snd = LinuxSender::new(&c, 0, 0, 1, 0);
    snd.add_data(MSS);
    let mut out = Vec::new();
    snd.poll(0, &mut out);
    let mut fired = Vec::new();
    while let Some(d) = snd.timer() {
        fired.push(d / s);
        snd.on_timer(d, &mut out);
    }
    assert_eq!(fired, vec![1, 2, 3, 4, 5, 7, 11, 19, 35, 67, 131]);
    let syns: Vec<u64> = out.iter().filter(|p| p.has(flags::SYN)).map(|p| p.tx_ns / s).collect();
    assert_eq!(syns, vec![0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67]);
    assert_eq!((snd.open_state(), snd.stats().syn_timeouts), (Open::Failed, 10));
}

/// A sender of `kernel`'s loss detection (TLP, and RACK where the line has it), Reno, with
/// `n` segments sent at t = 0 of `total`.
fn probing(kernel: crate::tcp::config::Kernel, n: u32, total: u64) -> (LinuxSender, Vec<Packet>) {
    let c = TcpConfig { tlp: true, rack: kernel.has_rack(), kernel, ..cfg(CcKind::NewReno, n) };
    let mut s = LinuxSender::new(&c, 0, 0, 1, 0);
    s.add_data(total * MSS);
    let mut out = Vec::new();
    s.poll(0, &mut out);
    assert_eq!(out.len(), n as usize);
    out.clear();
    (s, out)
}

const US: Nanos = 1000;

/// RFC 8985 §7's tail loss, by hand (4.19, 6.18): ten segments at t = 0, the last two lost,
/// ACKs of the first eight at 100 us (SRTT 100 us; RTO = 100 us + rto_min = 200.1 ms). Two
/// segments out: PTO = 2 SRTT + 2 ms = 2.2 ms, so the probe (segment 9 again) goes at 2.3 ms;
/// its SACK at 2.4 ms shows RACK that segment 8, sent before the probe and 2.4 ms ago, is
/// past RACK.rtt (100 us) + min_rtt / 4 (25 us): lost, Recovery, retransmitted at once. All
/// is acknowledged at 2.5 ms, without a timeout: the RTO would have fired at 200.2 ms.
#[test]
fn a_lost_tail_is_repaired_by_the_probe_and_rack_long_before_the_rto() {
    use crate::tcp::config::Kernel;
    for k in [Kernel::V4_19, Kernel::V6_18] {
        let (mut s, mut out) = probing(k, 10, 10);
        for i in 1..=8 {
            s.on_ack(100 * US, &ack(i * MSS, false, 0), None, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(s.rto(), 200_100 * US);
        assert_eq!(s.timer(), Some(100 * US + 2_200 * US), "{k:?}");
        s.on_timer(2_300 * US, &mut out);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![9 * MSS]);
        assert_eq!(s.stats().tlp_probes, 1);
        out.clear();
        s.on_ack(2_400 * US, &ack(8 * MSS, false, 2_300 * US), Some(&sack(&[(9, 10)])), &mut out);
        assert_eq!(s.sock().ca_state, CaState::Recovery);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![8 * MSS]);
        out.clear();
        s.on_ack(2_500 * US, &ack(10 * MSS, false, 2_400 * US), None, &mut out);
        assert!(s.is_idle());
        assert_eq!((s.stats().timeouts, s.sock().ca_state), (0, CaState::Open));
        // Recovery's reduction (Reno: half of the 18 segments slow start reached).
        assert_eq!(s.sock().snd_cwnd, 9);
    }
}

/// RACK's reordering window by hand (6.18): ten segments at t = 0; segment 1's SACK at
/// 100 us (SRTT = min_rtt = 100 us). Segment 0, sent before it, has RACK.rtt + min_rtt / 4 -
/// 100 us = 25 us left: the reordering timer waits that plus TCP_TIMEOUT_MIN (2 ms), to
/// 2.125 ms, then marks it lost and Recovery retransmits it. Three SACKed segments make the
/// window 0 (as aggressive as DupThresh): lost on that ACK. 3.18 (no RACK) waits for a third
/// SACK or the RTO (1 s, TCP_TIMEOUT_INIT, armed at t = 0).
#[test]
fn rack_waits_a_quarter_of_min_rtt_for_reordering() {
    use crate::tcp::config::Kernel;
    let (mut s, mut out) = probing(Kernel::V6_18, 10, 10);
    s.on_ack(100 * US, &ack(0, false, 0), Some(&sack(&[(1, 2)])), &mut out);
    assert!(out.is_empty());
    assert_eq!(s.sock().ca_state, CaState::Disorder);
    assert_eq!(s.timer(), Some(2_125 * US));
    s.on_timer(2_125 * US, &mut out);
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0]);

    let (mut s, mut out) = probing(Kernel::V6_18, 10, 10);
    s.on_ack(100 * US, &ack(0, false, 0), Some(&sack(&[(1, 4)])), &mut out);
    assert_eq!(s.sock().ca_state, CaState::Recovery);
    assert_eq!(out.first().map(|p| p.seq), Some(0));

    let (mut s, mut out) = probing(Kernel::V3_18, 10, 10);
    s.on_ack(100 * US, &ack(0, false, 0), Some(&sack(&[(1, 2)])), &mut out);
    assert_eq!((s.sock().ca_state, s.timer()), (CaState::Disorder, Some(1_000_000 * US)));
}

/// 3.18's probe with one segment out, and what a repairing probe does to the window: ten
/// segments at t = 0, the last lost, the others ACKed at 100 us (RTO 200.1 ms). The ACKs
/// before the last left a probe armed (10 ms, two segments out), so the last re-arms the RTO
/// from the head's transmission (tcp_rearm_rto: "offset the time elapsed"), at 200.1 ms; PTO
/// = max(2 SRTT, 1.5 SRTT + TCP_DELACK_MAX, 10 ms) = 200.15 ms is past it and takes its time:
/// the probe resends segment 9 at 200.1 ms in the RTO's place (no Loss, no timeout). Its
/// ACK reaches tlp_high_seq exactly and judges nothing; the next ACK beyond it shows the
/// probe repaired a loss: one reduction (Reno: ssthresh = cwnd / 2), Open again.
#[test]
fn a_probe_takes_the_rtos_place_and_a_repair_halves_the_window_once() {
    use crate::tcp::config::Kernel;
    let (mut s, mut out) = probing(Kernel::V3_18, 10, 10);
    for i in 1..=9 {
        s.on_ack(100 * US, &ack(i * MSS, false, 0), None, &mut out);
    }
    assert_eq!(s.timer(), Some(200_100 * US));
    s.on_timer(200_100 * US, &mut out);
    assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![9 * MSS]);
    out.clear();
    assert_eq!((s.stats().timeouts, s.stats().tlp_probes, s.sock().ca_state), (0, 1, CaState::Open));
    s.on_ack(200_300 * US, &ack(10 * MSS, false, 200_200 * US), None, &mut out);
    let cwnd = s.sock().snd_cwnd;
    assert_eq!(s.stats().tlp_recoveries, 0);
    s.add_data(5 * MSS);
    s.poll(200_300 * US, &mut out);
    assert_eq!(out.len(), 5);
    s.on_ack(200_400 * US, &ack(11 * MSS, false, 200_300 * US), None, &mut out);
    assert_eq!(s.stats().tlp_recoveries, 1);
    assert_eq!((s.sock().snd_ssthresh, s.sock().ca_state), (cwnd / 2, CaState::Open));
    assert_eq!(s.sock().snd_cwnd, cwnd / 2);
}

/// A probe whose original arrived too (the receiver had delayed its ACK): the ACK of the
/// duplicate carries a D-SACK. 6.18 ends the episode on it (FLAG_DSACK_TLP): no reduction
/// when later data is acknowledged. 3.18 reduces at that later ACK, which has none.
#[test]
fn a_probe_answered_by_a_dsack_reduces_nothing_under_6_18() {
    use crate::tcp::config::Kernel;
    for (k, reductions) in [(Kernel::V6_18, 0), (Kernel::V3_18, 1)] {
        let (mut s, mut out) = probing(k, 10, 10);
        for i in 1..=9 {
            s.on_ack(100 * US, &ack(i * MSS, false, 0), None, &mut out);
        }
        let t = s.timer().unwrap();
        s.on_timer(t, &mut out);
        assert_eq!(s.stats().tlp_probes, 1);
        let dup = Packet { flags: flags::DSACK, ..ack(10 * MSS, false, t) };
        s.on_ack(t + 100 * US, &dup, None, &mut out);
        s.add_data(5 * MSS);
        s.poll(t + 100 * US, &mut out);
        s.on_ack(t + 200 * US, &ack(11 * MSS, false, t + 100 * US), None, &mut out);
        assert_eq!(s.stats().tlp_recoveries, reductions, "{k:?}");
    }
}

/// A sender of `total` segments, `n` of them out at t = 0, on a kernel line, SACK without
/// TLP or RACK (RFC 6675's loss detection), so that only the undo rules act; no TCP Small
/// Queues (nothing here completes a transmission, and a 1 s RTT sample would hold it).
fn undoing(kernel: crate::tcp::config::Kernel, n: u32, total: u64) -> (LinuxSender, Vec<Packet>) {
    let c = TcpConfig { kernel, small_queues: false, ..cfg(CcKind::NewReno, n) };
    let mut s = LinuxSender::new(&c, 0, 0, 1, 0);
    s.add_data(total * MSS);
    let mut out = Vec::new();
    s.poll(0, &mut out);
    out.clear();
    (s, out)
}

const KERNELS: [crate::tcp::config::Kernel; 3] =
    [crate::tcp::config::Kernel::V3_18, crate::tcp::config::Kernel::V4_19, crate::tcp::config::Kernel::V6_18];

/// The Eifel test (RFC 3522; `tcp_packet_delayed`, `tcp_try_undo_loss`): ten segments at
/// t = 0, the RTO (1 s, no sample yet) retransmits segment 0 at 1 s, then the ACK of the
/// original arrives echoing its timestamp (0 ms, before the retransmission's 1,000 ms). The
/// timeout was spurious: cwnd back to max(cwnd, prior_cwnd) = 10, ssthresh to its value
/// before (infinite), Open, nothing lost; slow start makes cwnd 11, pipe is 9, so two new
/// segments go and no retransmission. Every kernel line has it.
#[test]
fn a_timeout_that_the_timestamp_echo_proves_spurious_is_undone() {
    for k in KERNELS {
        let (mut s, mut out) = undoing(k, 10, 20);
        s.on_timer(1_000_000_000, &mut out);
        assert_eq!((s.sock().ca_state, s.sock().snd_cwnd, s.sock().snd_ssthresh), (CaState::Loss, 1, 5));
        out.clear();
        let mut hi = 10 * MSS;
        s.on_ack(1_000_100_000, &ack(MSS, false, 0), None, &mut out);
        assert_eq!(s.stats().undos, 1, "{k:?}");
        assert_eq!(s.sock().ca_state, CaState::Open);
        assert_eq!((s.sock().snd_cwnd, s.sock().snd_ssthresh), (11, INFINITE_SSTHRESH));
        assert_eq!(s.scoreboard().lost_out, 0);
        assert_eq!(sent(&mut out, &mut hi), "NN", "{k:?}");
    }
}

/// RFC 5682 §3.1, SACK-enhanced F-RTO, by hand: after the RTO of the test above, the ACK
/// of the retransmission (it echoes the retransmission's timestamp: no Eifel proof)
/// advances snd_una below high_seq: step 2.b sends new data (segments 10 and 11, cwnd 2 by
/// slow start) instead of retransmitting 1 and 2. Then either the originals arrive
/// (segment 1 acknowledged, never retransmitted: step 3.b, the timeout was spurious, undone
/// to cwnd 10) or only the new data does (a SACK of segment 10: step 3.a, the loss is
/// real and the retransmissions start, segment 1 first).
#[test]
fn f_rto_sends_new_data_first_and_then_undoes_or_recovers() {
    for k in KERNELS {
        for spurious in [true, false] {
            let (mut s, mut out) = undoing(k, 10, 20);
            let rto = 1_000_000_000;
            s.on_timer(rto, &mut out);
            out.clear();
            let mut hi = 10 * MSS;
            s.on_ack(rto + 100_000, &ack(MSS, false, rto), None, &mut out);
            assert_eq!(s.sock().ca_state, CaState::Loss);
            assert_eq!(sent(&mut out, &mut hi), "NN", "{k:?}: step 2.b, new data");
            if spurious {
                s.on_ack(rto + 200_000, &ack(2 * MSS, false, 0), None, &mut out);
                assert_eq!(s.stats().undos, 1, "{k:?}");
                assert_eq!(s.sock().ca_state, CaState::Open);
                assert_eq!(s.sock().snd_ssthresh, INFINITE_SSTHRESH);
                assert!(s.sock().snd_cwnd >= 10, "{k:?}: {}", s.sock().snd_cwnd);
                assert!(!sent(&mut out, &mut hi).contains('R'), "{k:?}: nothing retransmitted");
            } else {
                s.on_ack(rto + 200_000, &ack(MSS, false, rto), Some(&sack(&[(10, 11)])), &mut out);
                assert_eq!(s.stats().undos, 0, "{k:?}");
                assert_eq!((s.sock().ca_state, s.sock().snd_cwnd), (CaState::Loss, 2));
                let r = out.iter().map(|p| p.seq).collect::<Vec<_>>();
                assert_eq!(r, vec![MSS], "{k:?}: step 3.a, the conventional recovery");
            }
        }
    }
}

/// RFC 2883 §5 / RFC 3708 (`tcp_try_undo_dsack`): segment 0 is only late. Segments 1-3
/// arrive first (three SACKs at 100-300 us): Recovery, segment 0 retransmitted at 300 us.
/// The original then arrives (ACK of 4, echoing 0 ms: the same millisecond as the
/// retransmission, so no Eifel proof), and the retransmission after it draws a D-SACK:
/// every retransmission was a duplicate, the halving is undone (cwnd 10, ssthresh as
/// before) and the connection is Open. Under ECN (a Recovery that CWR began: prior_ssthresh
/// 0) the undo restores nothing: the window ECN reduced stays reduced.
#[test]
fn a_dsack_for_every_retransmission_undoes_the_recovery() {
    for ecn_first in [false, true] {
        let cc = if ecn_first { CcKind::EcnStar } else { CcKind::NewReno };
        let mut s = LinuxSender::new(&cfg(cc, 10), 0, 0, 1, 0);
        s.add_data(10 * MSS);
        let mut out = Vec::new();
        s.poll(0, &mut out);
        out.clear();
        if ecn_first {
            s.on_ack(50 * US, &ack(0, true, 0), None, &mut out);
            assert_eq!(s.sock().ca_state, CaState::Cwr);
        }
        for k in 1..=3u64 {
            s.on_ack(100 * k * US, &ack(0, false, 0), Some(&sack(&[(1, k + 1)])), &mut out);
        }
        assert_eq!(s.sock().ca_state, CaState::Recovery);
        assert!(out.iter().any(|p| p.seq == 0), "segment 0 retransmitted");
        out.clear();
        let reduced = s.sock().snd_ssthresh;
        s.on_ack(400 * US, &ack(4 * MSS, false, 0), None, &mut out);
        assert_eq!(s.sock().ca_state, CaState::Recovery, "no proof yet");
        // One D-SACK per retransmission: segment 0's, and under ECN (PRR's larger budget
        // from CWR) the rescue retransmission of RFC 6675 NextSeg rule 4 as well.
        let retransmissions = s.stats().retransmitted_bytes / MSS;
        assert_eq!(retransmissions, if ecn_first { 2 } else { 1 });
        for k in 0..retransmissions {
            assert_eq!(s.stats().undos, 0, "an undo only when every retransmission is reported");
            let dup = Packet { flags: flags::DSACK, ..ack(4 * MSS, false, 300 * US) };
            s.on_ack((500 + 100 * k) * US, &dup, None, &mut out);
        }
        assert_eq!(s.stats().undos, 1);
        // tcp_try_keep_open: Disorder while the rescue retransmission is out.
        assert_eq!(s.sock().ca_state, if ecn_first { CaState::Disorder } else { CaState::Open });
        if ecn_first {
            assert_eq!(s.sock().snd_ssthresh, reduced, "what ECN reduced is not undone");
        } else {
            assert_eq!((s.sock().snd_cwnd, s.sock().snd_ssthresh), (10, INFINITE_SSTHRESH));
        }
    }
}
