//! Loss detection by kernel line (`transport.tlp`, `transport.rack`): the Tail Loss Probe's
//! timeout (`tcp_schedule_loss_probe`, net/ipv4/tcp_output.c) and RACK (RFC 8985 §6,
//! net/ipv4/tcp_recovery.c), as rules apart from the sender that runs them
//! (`sender/loss_detection.rs`).
//!
//! The probe timeout (PTO) of each line, before the RTO caps it:
//! - `"3.18"`: 2 SRTT; with one segment out at least 1.5 SRTT + `TCP_DELACK_MAX` (200 ms,
//!   "to account for delayed ack"); at least 10 ms. No RTT sample: no probe.
//! - `"4.19"`: 2 SRTT + `TCP_RTO_MIN` (200 ms) with one segment out, else 2 SRTT +
//!   `TCP_TIMEOUT_MIN` (2 jiffies: 2 ms at HZ = 1000). No sample: `TCP_TIMEOUT_INIT` (1 s).
//! - `"6.18"`: 2 SRTT + `tcp_rto_min_us` (the socket's RTO floor, `transport.rto_min`) with
//!   one segment out, else 2 SRTT + `TCP_TIMEOUT_MIN_US` (2 ms). No sample: 1 s.
//!
//! RACK (4.19 and 6.18 alike: `tcp_rack_reo_wnd`, `tcp_rack_detect_loss`, `tcp_rack_advance`):
//! the reordering window is min_rtt / 4 (one step: DSACKs widen it in the kernel,
//! `tcp_rack_update_reo_wnd`, not modelled), at most SRTT, and 0 when no reordering has been seen and either the
//! connection is in Recovery or Loss, or `dupack_thresh` segments are SACKed (RFC 8985
//! §6.2's "as aggressive as DupThresh"); a segment sent before the most recently sent one
//! delivered is lost once RACK.rtt + the window has passed since its own transmission; the
//! reordering timer waits for the latest such deadline plus 2 ms (`TCP_TIMEOUT_MIN`).
//!
//! Time is the simulator's nanoseconds: the kernel's jiffies rounding is left out.

use super::kernel::Kernel;
use ecnlab_core::units::Nanos;

const MS: Nanos = 1_000_000;
/// `TCP_DELACK_MAX` (HZ / 5).
pub const DELACK_MAX: Nanos = 200 * MS;
/// `TCP_RTO_MIN` (HZ / 5).
pub const RTO_MIN: Nanos = 200 * MS;
/// `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000) and `TCP_TIMEOUT_MIN_US` (2 ms, 6.x).
pub const TIMEOUT_MIN: Nanos = 2 * MS;
/// `TCP_TIMEOUT_INIT`.
pub const TIMEOUT_INIT: Nanos = 1000 * MS;

impl Kernel {
    /// RACK is in the line (Linux 4.4 on; `tcp_recovery` = 1 by default).
    pub fn has_rack(self) -> bool {
        !matches!(self, Kernel::V3_18)
    }

    /// The probe timeout `tcp_schedule_loss_probe` computes before the RTO caps it, from the
    /// smoothed RTT as the kernel keeps it (`srtt8`: `tp->srtt_us`, microseconds << 3; None
    /// before the first sample), `packets_out` segments out and the socket's RTO floor
    /// `rto_min`; None: no probe (3.18 without a sample).
    pub fn probe_timeout(self, srtt8: Option<u64>, packets_out: u32, rto_min: Nanos) -> Option<Nanos> {
        const US: Nanos = 1000;
        let one = packets_out == 1;
        match (self, srtt8) {
            (Kernel::V3_18, None) => None,
            (Kernel::V3_18, Some(s)) => {
                let rtt = (s >> 3) * US;
                let mut t = rtt << 1;
                if one {
                    t = t.max(rtt + (rtt >> 1) + DELACK_MAX);
                }
                Some(t.max(10 * MS))
            }
            (Kernel::V4_19 | Kernel::V6_18, None) => Some(TIMEOUT_INIT),
            // srtt_us >> 2: twice the smoothed RTT.
            (Kernel::V4_19, Some(s)) => Some((s >> 2) * US + if one { RTO_MIN } else { TIMEOUT_MIN }),
            (Kernel::V6_18, Some(s)) => Some((s >> 2) * US + if one { rto_min } else { TIMEOUT_MIN }),
        }
    }
}

/// RACK's state (`tp->rack`): the most recently sent segment delivered so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rack {
    /// `rack.mstamp`, `rack.end_seq`: that segment's (last) transmission time and end.
    pub xmit: Nanos,
    pub end_seq: u64,
    /// `rack.rtt_us`: the RTT of the last delivery that advanced RACK, ns.
    pub rtt: Nanos,
    /// `rack.advanced`: something was delivered since the last loss scan.
    pub advanced: bool,
    /// `tp->reord_seen`: a segment never retransmitted was delivered below the highest
    /// SACKed one (reordering).
    pub reord_seen: bool,
}

impl Rack {
    /// `tcp_rack_sent_after`: (t1, seq1) was sent after (t2, seq2).
    pub fn sent_after(t1: Nanos, seq1: u64, t2: Nanos, seq2: u64) -> bool {
        t1 > t2 || (t1 == t2 && seq1 > seq2)
    }

    /// `tcp_rack_advance` for a segment delivered now (newly SACKed, or cumulatively
    /// acknowledged without SACK), last sent at `xmit`, `retransmitted` ever: a
    /// retransmission delivered sooner than `min_rtt` after it was sent is ambiguous (the
    /// original may have arrived) and advances nothing.
    pub fn advance(&mut self, now: Nanos, xmit: Nanos, end_seq: u64, retransmitted: bool, min_rtt: Option<Nanos>) {
        let rtt = now.saturating_sub(xmit);
        if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if Self::sent_after(xmit, end_seq, self.xmit, self.end_seq) {
            (self.xmit, self.end_seq) = (xmit, end_seq);
        }
    }

    /// `tcp_rack_reo_wnd`: `recovering` is ca_state >= Recovery; `dupthresh_met` that at
    /// least `tp->reordering` segments are SACKed.
    pub fn reo_wnd(&self, min_rtt: Option<Nanos>, srtt: Nanos, recovering: bool, dupthresh_met: bool) -> Nanos {
        if !self.reord_seen && (recovering || dupthresh_met) {
            return 0;
        }
        // No min_rtt yet (tcp_min_rtt's ~0U): the SRTT cap.
        min_rtt.map_or(srtt, |m| m / 4).min(srtt)
    }

    /// `tcp_rack_skb_timeout`: how long a segment sent at `xmit` still has before it is
    /// lost (<= 0: lost now), with the window `reo_wnd`.
    pub fn remaining(&self, now: Nanos, xmit: Nanos, reo_wnd: Nanos) -> i64 {
        self.rtt as i64 + reo_wnd as i64 - now.saturating_sub(xmit) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1000;

    /// The PTO by hand, SRTT 100 us, rto_min 10 ms. 3.18: 2 SRTT = 200 us, floored at 10 ms;
    /// one segment out: 1.5 x 100 us + 200 ms = 200.15 ms. 4.19: 200 us + 2 ms = 2.2 ms,
    /// one out 200 us + 200 ms; 6.18 one out: 200 us + rto_min = 10.2 ms. No sample: none
    /// (3.18), TCP_TIMEOUT_INIT (later lines). SRTT 20 ms under 3.18: 40 ms (over the floor).
    #[test]
    fn the_probe_timeout_is_each_lines_formula() {
        let (srtt, rto_min) = (Some(800), 10 * MS); // 100 us << 3
        assert_eq!(Kernel::V3_18.probe_timeout(srtt, 5, rto_min), Some(10 * MS));
        assert_eq!(Kernel::V3_18.probe_timeout(srtt, 1, rto_min), Some(200_150 * US));
        assert_eq!(Kernel::V3_18.probe_timeout(Some(20_000 << 3), 5, rto_min), Some(40 * MS));
        assert_eq!(Kernel::V3_18.probe_timeout(None, 5, rto_min), None);
        assert_eq!(Kernel::V4_19.probe_timeout(srtt, 5, rto_min), Some(2_200 * US));
        assert_eq!(Kernel::V4_19.probe_timeout(srtt, 1, rto_min), Some(200_200 * US));
        assert_eq!(Kernel::V6_18.probe_timeout(srtt, 5, rto_min), Some(2_200 * US));
        assert_eq!(Kernel::V6_18.probe_timeout(srtt, 1, rto_min), Some(10_200 * US));
        assert_eq!(Kernel::V6_18.probe_timeout(None, 1, rto_min), Some(1000 * MS));
    }

    /// RACK's reordering window by hand: min_rtt 80 us gives 20 us, capped by SRTT (15 us);
    /// 0 once three segments are SACKed or in Recovery, unless reordering was seen.
    #[test]
    fn the_reordering_window_is_a_quarter_of_min_rtt() {
        let mut r = Rack::default();
        assert_eq!(r.reo_wnd(Some(80 * US), 100 * US, false, false), 20 * US);
        assert_eq!(r.reo_wnd(Some(80 * US), 15 * US, false, false), 15 * US);
        assert_eq!(r.reo_wnd(Some(80 * US), 100 * US, false, true), 0);
        assert_eq!(r.reo_wnd(Some(80 * US), 100 * US, true, false), 0);
        r.reord_seen = true;
        assert_eq!(r.reo_wnd(Some(80 * US), 100 * US, true, true), 20 * US);
        // A segment sent at 0, RACK.rtt 100 us from one sent at 50 us, now 140 us: 100 + 20
        // - 140 = -20 us, lost; one sent at 30 us has 10 us left.
        r.advance(150 * US, 50 * US, 2000, false, Some(80 * US));
        assert_eq!((r.xmit, r.rtt, r.advanced), (50 * US, 100 * US, true));
        assert_eq!(r.remaining(140 * US, 0, 20 * US), -20_000);
        assert_eq!(r.remaining(140 * US, 30 * US, 20 * US), 10_000);
        // A retransmission delivered within min_rtt of its sending is ambiguous: no advance.
        let before = r;
        r.advance(200 * US, 150 * US, 3000, true, Some(80 * US));
        assert_eq!(r, before);
    }
}
