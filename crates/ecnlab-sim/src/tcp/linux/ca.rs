//! The congestion-control interface of the `linux` host profile: Linux's
//! `struct tcp_congestion_ops` (include/net/tcp.h), in sans-IO form.
//!
//! Read `include/net/tcp.h` (`tcp_congestion_ops`, `tcp_ca_state`, `tcp_ca_event`) and
//! `net/ipv4/tcp_cong.c` (`tcp_slow_start`, `tcp_cong_avoid_ai`, `tcp_reno_*`) first.
//!
//! The sender (`linux::sender`) owns loss recovery, PRR (RFC 6937) and the RTO, and calls
//! these hooks at the points the kernel does:
//! - `ssthresh` when it enters CWR (ECN-Echo), Recovery (fast retransmit) or Loss (RTO);
//!   PRR then brings `snd_cwnd` down to the returned value over about one round trip;
//! - `cong_avoid` on an ACK that advances `snd_una` in the Open or Disorder state while
//!   the flow is cwnd-limited (`tcp_cong_avoid`), never in CWR, Recovery or Loss;
//! - `in_ack_event` on every ACK (`tcp_in_ack_event`), `pkts_acked` on every ACK that
//!   finds data outstanding (`tcp_clean_rtx_queue`), `set_state` on
//!   every change of `CaState` (`tcp_set_ca_state`), `cwnd_event` for the events below.
//!
//! Windows are in whole segments, as `snd_cwnd`/`snd_ssthresh` are; sequence numbers in
//! bytes. Everything here is integer arithmetic, as in the kernel (no floating point).

use ecnlab_core::units::Nanos;

/// `TCP_INFINITE_SSTHRESH`: ssthresh before the first reduction.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// `enum tcp_ca_state` (include/uapi/linux/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CaState {
    #[default]
    Open,
    /// SACKed or duplicate-ACKed data outstanding, below the recovery threshold.
    Disorder,
    /// Reducing the window after ECN-Echo (or local congestion), PRR in progress.
    Cwr,
    /// Fast recovery (RFC 6675 with PRR).
    Recovery,
    /// After an RTO: go back and retransmit.
    Loss,
}

/// `enum tcp_ca_event`: the events `cwnd_event` is told of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (`CA_EVENT_TX_START`).
    TxStart,
    /// Congestion window restart after idle (`CA_EVENT_CWND_RESTART`).
    CwndRestart,
    /// The end of a CWR period (`CA_EVENT_COMPLETE_CWR`).
    CompleteCwr,
    /// An RTO fired (`CA_EVENT_LOSS`).
    Loss,
}

/// `in_ack_event` flags (`enum tcp_ca_ack_event_flags`).
pub mod ack_flags {
    /// The ACK went through the slow path (`CA_ACK_SLOWPATH`): out of order, SACK, ECE.
    pub const SLOWPATH: u32 = 1 << 0;
    /// The ACK updated the window (`CA_ACK_WIN_UPDATE`).
    pub const WIN_UPDATE: u32 = 1 << 1;
    /// The ACK carries ECN-Echo (`CA_ACK_ECE`).
    pub const ECE: u32 = 1 << 2;
}

/// The subset of `struct tcp_sock` a congestion control reads and writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaSock {
    /// Congestion window, segments (`snd_cwnd`).
    pub snd_cwnd: u32,
    /// Slow-start threshold, segments (`snd_ssthresh`).
    pub snd_ssthresh: u32,
    /// Congestion-avoidance counter of `tcp_cong_avoid_ai` (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Upper bound of `snd_cwnd` (`snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// Oldest unacknowledged byte and next byte to send.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Sender MSS, bytes.
    pub mss: u32,
    /// Segments delivered so far (`tp->delivered`), and those of them whose ACK carried
    /// ECN-Echo (`tp->delivered_ce`): DCTCP's alpha is computed from these.
    pub delivered: u32,
    pub delivered_ce: u32,
    /// Smoothed RTT in microseconds << 3, as `tp->srtt_us` (0 before the first sample).
    pub srtt_us: u32,
    /// Minimum RTT seen, microseconds (`tcp_min_rtt`; u32::MAX before the first sample).
    pub min_rtt_us: u32,
    /// Congestion state, as set by the sender (hooks read it; only the sender writes it).
    pub ca_state: CaState,
    /// The flow used its whole window in the last round (`tcp_is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// cwnd before the last reduction (`prior_cwnd`), for undo.
    pub prior_cwnd: u32,
    /// Simulated time of the call (the kernel's `tcp_jiffies32` / `tcp_clock_us`).
    pub now: Nanos,
    /// Time of the last data transmission (`tp->lsndtime`). At `cwnd_event(TxStart)` it
    /// still holds the transmission before this one (`tcp_event_data_sent` raises the event
    /// before updating it): CUBIC shifts its epoch by the idle time `now - lsndtime`.
    pub lsndtime: Nanos,
}

impl CaSock {
    /// `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }
}

/// What `pkts_acked` is told (`struct ack_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSample {
    /// Segments the cumulative ACK removed, SACKed before or not (SACKed ones reach the
    /// window through `cong_avoid`'s `acked`, i.e. `tp->delivered`, not through here).
    pub pkts_acked: u32,
    /// The RTT of the last segment this ACK newly acknowledged or SACKed that was never
    /// retransmitted (`ca_rtt_us`), in microseconds; -1 when this ACK gave none. The
    /// kernel's `in_flight` is left out: no algorithm here reads it.
    pub rtt_us: i32,
}

/// `struct tcp_congestion_ops`. Hooks with a default do nothing, as a NULL hook.
pub trait CongestionOps {
    /// The algorithm needs ECN (`TCP_CONG_NEEDS_ECN`): its segments are sent ECT(0), and
    /// the receiver echoes CE the DCTCP way (RFC 8257 §3.2) when true.
    fn needs_ecn(&self) -> bool {
        false
    }
    /// `init`: the connection starts.
    fn init(&mut self, _tp: &mut CaSock) {}
    /// `ssthresh`: the new slow-start threshold on entering CWR, Recovery or Loss.
    fn ssthresh(&mut self, tp: &CaSock) -> u32;
    /// `cong_avoid`: grow the window; `acked` segments were newly acknowledged.
    fn cong_avoid(&mut self, tp: &mut CaSock, ack: u64, acked: u32);
    /// `set_state`: called before `tp.ca_state` changes to `new_state`.
    fn set_state(&mut self, _tp: &mut CaSock, _new_state: CaState) {}
    /// `cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut CaSock, _ev: CaEvent) {}
    /// `in_ack_event`, with [`ack_flags`].
    fn in_ack_event(&mut self, _tp: &mut CaSock, _flags: u32) {}
    /// `pkts_acked`.
    fn pkts_acked(&mut self, _tp: &mut CaSock, _sample: &AckSample) {}
    /// `undo_cwnd`: the window to restore when a reduction proves spurious.
    fn undo_cwnd(&mut self, tp: &CaSock) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }
    /// DCTCP's alpha as a fraction (for statistics), 0 for algorithms without one.
    fn alpha(&self) -> f64 {
        0.0
    }
}

/// `tcp_slow_start` (net/ipv4/tcp_cong.c): grow by the segments acknowledged, up to
/// ssthresh; returns the acknowledged segments left over for congestion avoidance.
pub fn tcp_slow_start(tp: &mut CaSock, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let left = acked - (cwnd - tp.snd_cwnd).min(acked);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// `tcp_cong_avoid_ai` (net/ipv4/tcp_cong.c): in theory `snd_cwnd += acked / w`, counted
/// in `snd_cwnd_cnt` so that the window grows by one segment per `w` segments acknowledged.
pub fn tcp_cong_avoid_ai(tp: &mut CaSock, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// Reno (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`): the kernel's fallback algorithm,
/// and the growth rule the ECN-only flavours keep.
#[derive(Clone, Debug, Default)]
pub struct Reno;

impl CongestionOps for Reno {
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        (tp.snd_cwnd >> 1).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut CaSock, _ack: u64, mut acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let w = tp.snd_cwnd;
        tcp_cong_avoid_ai(tp, w, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32, ssthresh: u32) -> CaSock {
        CaSock {
            snd_cwnd: cwnd,
            snd_ssthresh: ssthresh,
            snd_cwnd_clamp: u32::MAX,
            is_cwnd_limited: true,
            ..Default::default()
        }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_back_the_rest() {
        let mut tp = sock(10, 12);
        assert_eq!(tcp_slow_start(&mut tp, 5), 3);
        assert_eq!(tp.snd_cwnd, 12);
    }

    #[test]
    fn reno_grows_one_segment_per_window_acknowledged() {
        let mut tp = sock(10, 5);
        let mut reno = Reno;
        for _ in 0..9 {
            reno.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
        reno.cong_avoid(&mut tp, 0, 1);
        assert_eq!(tp.snd_cwnd, 11);
        assert_eq!(tp.snd_cwnd_cnt, 0);
        assert_eq!(reno.ssthresh(&tp), 5);
        assert_eq!(reno.ssthresh(&sock(3, 1)), 2);
    }
}
