//! The dual-AQM paper's modified DCTCP (Kühlewind et al., "Using Data Center TCP (DCTCP)
//! in the Internet", §III; /work/shared/papers/dctcp-internet-dual-aqm.txt), rebuilt on the
//! Linux sender's whole-segment windows and PRR.
//!
//! Read [`super::dctcp`] (the kernel module the paper modified) and the paper's §III first.
//! The paper changes four things in the Stanford DCTCP patch for Linux 3.2:
//! - (a) alpha with 2^-20 resolution (`transport.dualq_alpha_bits`), and ssthresh = cwnd
//!   after a cut so that the sender is in congestion avoidance, not slow start. Here the
//!   second holds by construction: PRR ends CWR with cwnd = ssthresh.
//! - (b) the window may grow during CWR, and `snd_cwnd_cnt` is not reset when no reduction
//!   was made (`dualq_grow_in_cwr`);
//! - (c) alpha updated on every ACK with g = 1/2^8 (`dualq_per_ack_alpha`, `dualq_g`):
//!   alpha = (1 - g) alpha + g F, F = 1 for an ACK with ECN-Echo, 0 otherwise, for each ACK
//!   that reports delivered segments, truncated to the resolution;
//! - (d) progressive reduction (`dualq_progressive`): on each ECN-Echo during CWR the target
//!   is recomputed from the window at the start of CWR, cwnd_max (1 - alpha/2), and applied
//!   only if lower.
//!
//! How this meets the Linux sender, whose PRR (RFC 6937) drives `snd_cwnd` towards
//! `snd_ssthresh` on every ACK of the CWR state and sets cwnd = ssthresh when CWR ends:
//! - Entering CWR, `ssthresh` returns cwnd_max - (cwnd_max × alpha) >> (bits + 1), at least
//!   2 segments (DCTCP's cut with the kernel's rounding, at the finer resolution).
//! - (d) is a lower *target*: an ECN-Echo in CWR (seen in `in_ack_event`, which runs before
//!   the sender's PRR step on the same ACK) lowers `snd_ssthresh` when the recomputed
//!   whole-segment target is below it; PRR then spreads the extra reduction over the rest of
//!   the round trip. cwnd is never trimmed by a fraction of a segment, and a recomputation
//!   that does not reach a lower whole segment changes nothing: the textbook model's
//!   fractional-byte trims, each restarting congestion avoidance, are why it rarely grew
//!   (issue 16).
//! - (b) is a higher target: ACKs in CWR that report delivered segments and made no
//!   reduction feed Reno's counter on the target (`tcp_cong_avoid_ai` on ssthresh, kept in
//!   this module because the sender zeroes `snd_cwnd_cnt` when CWR begins); PRR lets cwnd
//!   follow, and at the end of CWR (`CaEvent::CompleteCwr`) the counter carries over into
//!   `snd_cwnd_cnt`. A CWR entry that cuts nothing keeps the counter from before it.
//!   ACKs with ECN-Echo that lowered nothing count too: today's `tcp_may_raise_cwnd` grows
//!   on any ACK that delivers data (the 3.2 kernel the paper patched also excluded ECE ACKs;
//!   the paper does not say whether its change kept that).
//! - Losses are DCTCP's: half the window on entering Recovery or on an RTO, and no
//!   progressive cuts from an older cwnd_max after that.
//!
//! This relies on the sender reading `snd_ssthresh` anew on every PRR step (RFC 6937's
//! formulas use it on every ACK, as `tcp_cwnd_reduction` does), and on calling
//! `in_ack_event` before its PRR step.

use super::ca::{ack_flags, tcp_cong_avoid_ai, CaEvent, CaSock, CaState, CongestionOps, Reno};

/// The paper's knobs, from `[transport]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DualqParams {
    /// g = 1/2^shift_g (`dualq_g`, default 1/2^8).
    pub shift_g: u32,
    /// alpha resolution, fractional bits (`dualq_alpha_bits`, default 20; at most 52).
    pub alpha_bits: u32,
    /// Initial alpha in 2^-alpha_bits units.
    pub alpha_init: u64,
    pub per_ack: bool,
    pub progressive: bool,
    pub grow_in_cwr: bool,
}

/// The modified DCTCP.
#[derive(Clone, Debug)]
pub struct DctcpDualq {
    p: DualqParams,
    /// alpha in 2^-alpha_bits units.
    alpha: u64,
    /// The window when the current CWR period began (None outside CWR, or once a loss
    /// took over the reduction).
    cwnd_max: Option<u32>,
    /// Reno's counter on the target during CWR (b).
    cwr_cnt: u32,
    /// `snd_cwnd_cnt` after the last `cong_avoid` (the sender zeroes it before `ssthresh`).
    ca_cnt: u32,
    /// `tp.delivered` at the previous ACK: which ACKs report segments.
    last_delivered: u32,
    /// Per-window alpha (when not per ACK): as `tcp_dctcp.c`.
    next_seq: u64,
    old_delivered: u32,
    old_delivered_ce: u32,
    /// cwnd at the last reduction, for undo.
    loss_cwnd: u32,
}

impl DctcpDualq {
    pub fn new(p: DualqParams) -> Self {
        let p = DualqParams { alpha_bits: p.alpha_bits.clamp(1, 52), ..p };
        let p =
            DualqParams { shift_g: p.shift_g.min(p.alpha_bits), alpha_init: p.alpha_init.min(1 << p.alpha_bits), ..p };
        DctcpDualq {
            p,
            alpha: p.alpha_init,
            cwnd_max: None,
            cwr_cnt: 0,
            ca_cnt: 0,
            last_delivered: 0,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// alpha in 2^-alpha_bits units.
    pub fn alpha_raw(&self) -> u64 {
        self.alpha
    }

    /// alpha = (1 - g) alpha + g F with F = marked / total, truncated to the resolution.
    fn ewma(&mut self, marked: u64, total: u64) {
        let (s, b) = (self.p.shift_g, self.p.alpha_bits);
        let keep = ((self.alpha as u128) << s) - self.alpha as u128;
        let f = ((marked as u128) << b) / total.max(1) as u128;
        self.alpha = ((keep + f) >> s).min(1u128 << b) as u64;
    }

    /// cwnd_max (1 - alpha/2) in whole segments: the cut rounded down as the kernel's
    /// `dctcp_ssthresh`, at least 2.
    fn target(&self, cwnd_max: u32) -> u32 {
        let cut = ((cwnd_max as u128 * self.alpha as u128) >> (self.p.alpha_bits + 1)) as u32;
        (cwnd_max - cut).max(2)
    }

    fn react_to_loss(&mut self, tp: &mut CaSock) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
        self.cwnd_max = None;
    }
}

impl CongestionOps for DctcpDualq {
    fn needs_ecn(&self) -> bool {
        true
    }

    fn init(&mut self, tp: &mut CaSock) {
        self.alpha = self.p.alpha_init;
        self.cwnd_max = None;
        self.last_delivered = tp.delivered;
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// Entering CWR (or, overridden by `set_state`/`cwnd_event`, Recovery or Loss).
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        let cwnd = tp.snd_cwnd;
        self.loss_cwnd = cwnd;
        self.cwnd_max = Some(cwnd);
        let target = self.target(cwnd);
        // (b): the counter survives a CWR entry that reduced nothing.
        self.cwr_cnt = if target < cwnd { 0 } else { self.ca_cnt };
        target
    }

    fn cong_avoid(&mut self, tp: &mut CaSock, ack: u64, acked: u32) {
        Reno.cong_avoid(tp, ack, acked);
        self.ca_cnt = tp.snd_cwnd_cnt;
    }

    fn set_state(&mut self, tp: &mut CaSock, new_state: CaState) {
        match new_state {
            CaState::Recovery if tp.ca_state != CaState::Recovery => self.react_to_loss(tp),
            CaState::Open | CaState::Disorder | CaState::Loss => self.cwnd_max = None,
            _ => {}
        }
    }

    fn cwnd_event(&mut self, tp: &mut CaSock, ev: CaEvent) {
        match ev {
            CaEvent::Loss => self.react_to_loss(tp),
            CaEvent::CompleteCwr => {
                let was_in_cwr = self.cwnd_max.take().is_some();
                if was_in_cwr && self.p.grow_in_cwr {
                    tp.snd_cwnd_cnt = self.cwr_cnt;
                    self.ca_cnt = self.cwr_cnt;
                }
            }
            _ => {}
        }
    }

    fn in_ack_event(&mut self, tp: &mut CaSock, flags: u32) {
        let ece = flags & ack_flags::ECE != 0;
        let delivered = tp.delivered.wrapping_sub(self.last_delivered);
        self.last_delivered = tp.delivered;
        // (c) alpha.
        if self.p.per_ack {
            if delivered > 0 {
                self.ewma(ece as u64, 1);
            }
        } else if tp.snd_una >= self.next_seq {
            let d = tp.delivered.wrapping_sub(self.old_delivered);
            let ce = tp.delivered_ce.wrapping_sub(self.old_delivered_ce);
            self.ewma(ce as u64, d as u64);
            self.next_seq = tp.snd_nxt;
            self.old_delivered = tp.delivered;
            self.old_delivered_ce = tp.delivered_ce;
        }
        let Some(cwnd_max) = self.cwnd_max else { return };
        if tp.ca_state != CaState::Cwr {
            return;
        }
        // (d) a further ECN-Echo lowers the target by whole segments, never raises it.
        if ece && self.p.progressive {
            let target = self.target(cwnd_max);
            if target < tp.snd_ssthresh {
                tp.snd_ssthresh = target;
                self.cwr_cnt = 0;
                return;
            }
        }
        // (b) no reduction on this ACK: the target grows as Reno's window would.
        if self.p.grow_in_cwr && delivered > 0 && tp.is_cwnd_limited {
            let mut t = CaSock {
                snd_cwnd: tp.snd_ssthresh,
                snd_cwnd_cnt: self.cwr_cnt,
                snd_cwnd_clamp: tp.snd_cwnd_clamp,
                ..Default::default()
            };
            let w = t.snd_cwnd;
            tcp_cong_avoid_ai(&mut t, w, delivered);
            tp.snd_ssthresh = t.snd_cwnd;
            self.cwr_cnt = t.snd_cwnd_cnt;
        }
    }

    fn undo_cwnd(&mut self, tp: &CaSock) -> u32 {
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn alpha(&self) -> f64 {
        self.alpha as f64 / (1u64 << self.p.alpha_bits) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::ca::INFINITE_SSTHRESH;
    use super::*;
    use crate::tcp::cc::{AckInfo, Cc, SeqState, Window};
    use crate::tcp::{CcKind, TcpConfig};

    const P: DualqParams =
        DualqParams { shift_g: 8, alpha_bits: 20, alpha_init: 0, per_ack: true, progressive: true, grow_in_cwr: true };

    fn sock(cwnd: u32) -> CaSock {
        CaSock {
            snd_cwnd: cwnd,
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_cwnd_clamp: u32::MAX,
            is_cwnd_limited: true,
            mss: 1000,
            ..Default::default()
        }
    }

    /// One ACK delivering `n` segments.
    fn ack(d: &mut DctcpDualq, tp: &mut CaSock, n: u32, ece: bool) {
        tp.delivered += n;
        if ece {
            tp.delivered_ce += n;
        }
        tp.snd_una += n as u64 * 1000;
        d.in_ack_event(tp, if ece { ack_flags::ECE } else { 0 });
    }

    #[test]
    fn per_ack_alpha_matches_the_paper_at_2_pow_minus_20() {
        // By hand: F = 1 from 0: (0 + 2^20) / 256 = 4096; again: (4096·255 + 2^20) / 256 =
        // 8176; F = 0: 8176·255 / 256 = 8144.06 -> 8144.
        let mut d = DctcpDualq::new(P);
        let mut tp = sock(10);
        d.init(&mut tp);
        ack(&mut d, &mut tp, 1, true);
        assert_eq!(d.alpha_raw(), 4096);
        ack(&mut d, &mut tp, 2, true);
        assert_eq!(d.alpha_raw(), 8176);
        ack(&mut d, &mut tp, 1, false);
        assert_eq!(d.alpha_raw(), 8144);
        // An ACK that reports no delivered segment leaves alpha alone.
        d.in_ack_event(&mut tp, ack_flags::ECE);
        assert_eq!(d.alpha_raw(), 8144);
    }

    #[test]
    fn per_ack_alpha_equals_the_textbook_model_bit_for_bit() {
        // The textbook `cc::DctcpDualq` computes the same EWMA in floating point truncated
        // to 2^-20; on a pseudo-random ECN-Echo pattern both give the same alpha.
        let cfg = TcpConfig::with_cc(CcKind::DctcpDualq);
        let mut tb = Cc::new(&cfg);
        let mut d = DctcpDualq::new(P);
        let mut tp = sock(10);
        d.init(&mut tp);
        let mut x = 12345u32;
        let mut w = Window { cwnd: 1 << 40, ssthresh: 1 << 40, mss: 1000, min_cwnd: 2 };
        for i in 0..5000u64 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let ece = x % 5 < if i < 2500 { 3 } else { 1 };
            let a = AckInfo { acked: 1000, dup: false, ece, in_cwr: true, in_recovery: true };
            tb.on_ack(&a, SeqState { ack: (i + 1) * 1000, snd_nxt: 1 << 40 }, &mut w);
            ack(&mut d, &mut tp, 1, ece);
            assert_eq!(d.alpha(), tb.alpha(), "ACK {i}");
        }
        assert!(d.alpha() > 0.1);
    }

    /// Enters CWR at `cwnd` with alpha set to `alpha` (2^-20 units).
    fn in_cwr(p: DualqParams, cwnd: u32, alpha: u64) -> (DctcpDualq, CaSock) {
        let mut d = DctcpDualq::new(DualqParams { alpha_init: alpha, ..p });
        let mut tp = sock(cwnd);
        d.init(&mut tp);
        tp.snd_ssthresh = d.ssthresh(&tp);
        d.set_state(&mut tp, CaState::Cwr);
        tp.ca_state = CaState::Cwr;
        (d, tp)
    }

    #[test]
    fn progressive_reduction_lowers_the_target_in_whole_segments_from_cwnd_max() {
        // alpha = 104858 / 2^20 (0.1000004): 100 - (100 · 104858) >> 21 = 100 - 5 = 95 (one
        // unit less, 0.0999994, would cut only 4).
        let (mut d, mut tp) = in_cwr(P, 100, 104_858);
        assert_eq!(tp.snd_ssthresh, 95);
        // PRR lowers cwnd meanwhile; the target is always from cwnd_max = 100.
        tp.snd_cwnd = 97;
        let mut seen = vec![tp.snd_ssthresh];
        for _ in 0..200 {
            ack(&mut d, &mut tp, 1, true);
            let want = 100 - ((100 * d.alpha_raw()) >> 21) as u32;
            assert_eq!(tp.snd_ssthresh, want.min(*seen.last().unwrap()));
            seen.push(tp.snd_ssthresh);
        }
        // alpha rose towards 1 (0.1 + 0.9 (1 - 255/256^200) = 0.59): 100 (1 - 0.59/2) = 70.
        assert_eq!(tp.snd_ssthresh, 71);
        assert!(seen.windows(2).all(|w| w[1] <= w[0]), "never raised by an ECN-Echo");
        // Without progressive reduction the target stays at the entry cut (and grows).
        let (mut d, mut tp) = in_cwr(DualqParams { progressive: false, grow_in_cwr: false, ..P }, 100, 104_858);
        for _ in 0..200 {
            ack(&mut d, &mut tp, 1, true);
        }
        assert_eq!(tp.snd_ssthresh, 95);
    }

    #[test]
    fn target_grows_during_cwr_and_the_counter_carries_over() {
        let (mut d, mut tp) = in_cwr(P, 100, 104_858);
        assert_eq!(tp.snd_ssthresh, 95);
        // 95 segments delivered without ECN-Echo: one more segment (Reno on the target).
        for _ in 0..94 {
            ack(&mut d, &mut tp, 1, false);
        }
        assert_eq!(tp.snd_ssthresh, 95);
        ack(&mut d, &mut tp, 1, false);
        assert_eq!(tp.snd_ssthresh, 96);
        for _ in 0..10 {
            ack(&mut d, &mut tp, 1, false);
        }
        // End of CWR: PRR sets cwnd = ssthresh, the counter continues in congestion avoidance.
        tp.snd_cwnd = tp.snd_ssthresh;
        tp.snd_cwnd_cnt = 0;
        d.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!(tp.snd_cwnd_cnt, 10);
        tp.ca_state = CaState::Open;
        for _ in 0..86 {
            d.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd, 97, "96 segments after the increase, counted across CWR's end");
        // With growth in CWR off (Linux's rule) the target does not move.
        let (mut d, mut tp) = in_cwr(DualqParams { grow_in_cwr: false, ..P }, 100, 104_858);
        for _ in 0..300 {
            ack(&mut d, &mut tp, 1, false);
        }
        assert_eq!(tp.snd_ssthresh, 95);
    }

    #[test]
    fn a_cwr_that_cuts_nothing_keeps_the_counter() {
        // alpha so small that 40 × alpha / 2 < 1 segment: no reduction, counter kept.
        let mut d = DctcpDualq::new(DualqParams { alpha_init: 1000, ..P });
        let mut tp = sock(40);
        tp.snd_ssthresh = 10;
        d.init(&mut tp);
        for _ in 0..30 {
            d.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd_cnt, 30);
        tp.snd_cwnd_cnt = 0; // tcp_init_cwnd_reduction
        tp.snd_ssthresh = d.ssthresh(&tp);
        assert_eq!(tp.snd_ssthresh, 40);
        tp.ca_state = CaState::Cwr;
        for _ in 0..10 {
            ack(&mut d, &mut tp, 1, false);
        }
        assert_eq!(tp.snd_ssthresh, 41, "30 before CWR + 10 in it = one window of 40");
    }

    #[test]
    fn loss_halves_and_ends_progressive_cuts() {
        let (mut d, mut tp) = in_cwr(P, 100, 1 << 19);
        assert_eq!(tp.snd_ssthresh, 75);
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 50);
        tp.ca_state = CaState::Recovery;
        ack(&mut d, &mut tp, 1, true);
        assert_eq!(tp.snd_ssthresh, 50, "no progressive cut outside CWR");
        tp.snd_cwnd = 3;
        d.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 2);
        assert_eq!(d.undo_cwnd(&tp), 3);
    }
}
