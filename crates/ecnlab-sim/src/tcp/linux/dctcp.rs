//! DCTCP as Linux's `net/ipv4/tcp_dctcp.c` does it (RFC 8257 is the algorithm; this file
//! follows the kernel's integer arithmetic and hook placement).
//!
//! Read [`super::ca`] first (the hooks and when the sender calls them), then RFC 8257 §3.3.
//! What the kernel does, and so this module:
//! - alpha is an integer in 1/1024 units (`DCTCP_MAX_ALPHA` = 1024 is alpha = 1), starting
//!   at `dctcp_alpha_on_init` (kernel default 1024; here `transport.dctcp_alpha_init` × 1024).
//! - `dctcp_update_alpha` runs in `in_ack_event` on every ACK, but changes alpha only once
//!   per window of data: when `snd_una` reaches `next_seq` (the `snd_nxt` of the previous
//!   update). F is counted in segments from `tp->delivered` / `tp->delivered_ce`, not in
//!   bytes: alpha = alpha - alpha >> g + (delivered_ce << (10 - g)) / delivered, with
//!   `dctcp_shift_g` g = 4 (g = 1/16). `min_not_zero` makes an alpha below 2^g decay to 0 at
//!   once rather than get stuck.
//! - `dctcp_ssthresh` on entering CWR: cwnd - (cwnd × alpha) >> 11, i.e. cwnd × (1 - alpha/2)
//!   with the cut rounded down (the window rounded up), at least 2 segments. The sender's PRR
//!   brings `snd_cwnd` down to it over a round trip.
//! - Losses: `dctcp_state` on entering Recovery and `cwnd_event(Loss)` on an RTO override the
//!   ssthresh just computed with max(cwnd/2, 2) (`dctcp_react_to_loss`). This relies on the
//!   sender calling `ssthresh` before `set_state`, as `tcp_enter_recovery` does.
//! - Growth is Reno's (`tcp_reno_cong_avoid`); `undo_cwnd` returns max(cwnd, cwnd at the last
//!   reduction) (`dctcp_cwnd_undo`).
//! - `needs_ecn` (`TCP_CONG_NEEDS_ECN`): every segment ECT(0); the receiver's half of the
//!   kernel module (`dctcp_ece_ack_update`, the CE state machine) lives in
//!   [`super::receiver`].

use super::ca::{CaEvent, CaSock, CaState, CongestionOps, Reno};

/// alpha = 1 in the kernel's fixed point (`DCTCP_MAX_ALPHA`).
pub const DCTCP_MAX_ALPHA: u32 = 1024;

/// `dctcp_shift_g` for a gain g: g must be 1/2^n with n in 0..=`most` (10 for the kernel
/// module's parameter, 20 for the dual-AQM DCTCP's per-ACK gain). None otherwise.
pub fn dctcp_shift_g(g: f64, most: u32) -> Option<u32> {
    (0..=most).find(|&n| g == 1.0 / (1u64 << n) as f64)
}

/// alpha in 1/1024 units for a fraction in [0, 1] (rounded to nearest, as a sysctl value
/// would be chosen).
pub fn alpha_on_init(alpha: f64) -> u32 {
    ((alpha.clamp(0.0, 1.0) * DCTCP_MAX_ALPHA as f64).round() as u32).min(DCTCP_MAX_ALPHA)
}

/// The sender side of `tcp_dctcp.c` (`struct dctcp` minus the receiver's `ce_state` and
/// `prior_rcv_nxt`).
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// `dctcp_shift_g`.
    shift_g: u32,
    /// `dctcp_alpha_on_init`, 1/1024 units.
    alpha_on_init: u32,
    /// `dctcp_alpha`, 1/1024 units.
    alpha: u32,
    /// `next_seq`: alpha is next updated when `snd_una` reaches it.
    next_seq: u64,
    /// `tp->delivered` / `tp->delivered_ce` at the last update.
    old_delivered: u32,
    old_delivered_ce: u32,
    /// `loss_cwnd`: cwnd at the last reduction, for undo.
    loss_cwnd: u32,
}

impl Dctcp {
    /// `shift_g` as [`dctcp_shift_g`]; `alpha_on_init` in 1/1024 units.
    pub fn new(shift_g: u32, alpha_on_init: u32) -> Self {
        let a = alpha_on_init.min(DCTCP_MAX_ALPHA);
        Dctcp {
            shift_g: shift_g.min(10),
            alpha_on_init: a,
            alpha: a,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// alpha in 1/1024 units.
    pub fn alpha_raw(&self) -> u32 {
        self.alpha
    }

    /// `dctcp_reset`: a new observation window starts at `snd_nxt`.
    fn reset(&mut self, tp: &CaSock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_react_to_loss`.
    fn react_to_loss(&mut self, tp: &mut CaSock) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionOps for Dctcp {
    fn needs_ecn(&self) -> bool {
        true
    }

    /// `dctcp_init` (ECN is always negotiated in the simulator, so never `dctcp_reno`).
    fn init(&mut self, tp: &mut CaSock) {
        self.alpha = self.alpha_on_init;
        self.loss_cwnd = 0;
        self.reset(tp);
    }

    /// `dctcp_ssthresh`.
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        self.loss_cwnd = tp.snd_cwnd;
        let cut = ((tp.snd_cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CaSock, ack: u64, acked: u32) {
        Reno.cong_avoid(tp, ack, acked)
    }

    /// `dctcp_state`: only a fresh entry into Recovery reacts (an RTO is handled once, in
    /// `cwnd_event(Loss)`).
    fn set_state(&mut self, tp: &mut CaSock, new_state: CaState) {
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react_to_loss(tp);
        }
    }

    /// `dctcp_cwnd_event`: the CE events are the receiver's (see the module doc).
    fn cwnd_event(&mut self, tp: &mut CaSock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    /// `dctcp_update_alpha`.
    fn in_ack_event(&mut self, tp: &mut CaSock, _flags: u32) {
        // Expired RTT: the window of data that began at the last update is acknowledged.
        if tp.snd_una < self.next_seq {
            return;
        }
        let delivered_ce = tp.delivered_ce.wrapping_sub(self.old_delivered_ce);
        let mut alpha = self.alpha;
        // alpha = (1 - g) alpha + g F. `min_not_zero`: when alpha >> g is 0 the whole alpha
        // is subtracted, so a small alpha falls to 0 instead of staying stuck above it.
        let decay = alpha >> self.shift_g;
        alpha -= if decay == 0 { alpha } else { decay };
        if delivered_ce > 0 {
            let delivered = tp.delivered.wrapping_sub(self.old_delivered).max(1);
            // g F in 1/1024 units, F = delivered_ce / delivered (u64: the kernel's u32
            // overflows past 8 M segments per window with g = 1/2, ours never does).
            let gf = ((delivered_ce as u64) << (10 - self.shift_g)) / delivered as u64;
            alpha = (alpha as u64 + gf).min(DCTCP_MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, tp: &CaSock) -> u32 {
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn alpha(&self) -> f64 {
        self.alpha as f64 / DCTCP_MAX_ALPHA as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32) -> CaSock {
        CaSock {
            snd_cwnd: cwnd,
            snd_ssthresh: super::super::ca::INFINITE_SSTHRESH,
            snd_cwnd_clamp: u32::MAX,
            is_cwnd_limited: true,
            mss: 1000,
            ..Default::default()
        }
    }

    #[test]
    fn window_after_a_known_alpha_rounds_as_the_kernel() {
        // RFC 8257 §3.3: cwnd = cwnd × (1 - alpha/2); the kernel subtracts
        // (cwnd × alpha) >> 11, the cut rounded down.
        let cases = [
            (100, 1024, 50), // alpha = 1: halve
            (100, 512, 75),  // alpha = 1/2: cut a quarter
            (100, 100, 96),  // 100 × 100 / 2048 = 4.88: cut 4 (a float 1 - a/2 gives 95.1)
            (10, 1024, 5),   //
            (10, 204, 10),   // 10 × 204 / 2048 = 0.996: no cut at all
            (37, 300, 32),   // 37 × 300 / 2048 = 5.42: cut 5
            (3, 1024, 2),    // 3 - 1 = 2
            (2, 1024, 2),    // 2 - 1 = 1: the two-segment floor
            (1, 1024, 2),    // the floor holds even above a smaller window
        ];
        for (cwnd, alpha, want) in cases {
            let mut d = Dctcp::new(4, alpha);
            assert_eq!(d.ssthresh(&sock(cwnd)), want, "cwnd {cwnd} alpha {alpha}/1024");
            assert_eq!(d.undo_cwnd(&sock(1)), cwnd, "undo restores the window before the cut");
        }
    }

    /// One window of data: `n` segments delivered, `ce` of them ECN-Echoed; `snd_una`
    /// reaches the previous `snd_nxt`.
    fn window(d: &mut Dctcp, tp: &mut CaSock, n: u32, ce: u32) -> u32 {
        tp.delivered += n;
        tp.delivered_ce += ce;
        tp.snd_una = tp.snd_nxt;
        tp.snd_nxt += n as u64 * 1000;
        d.in_ack_event(tp, 0);
        d.alpha_raw()
    }

    #[test]
    fn alpha_follows_a_hand_computed_kernel_trace() {
        // Hand computation of dctcp_update_alpha with dctcp_shift_g = 4 and
        // dctcp_alpha_on_init = 1024:
        //   10/10 CE: 1024 - 64 = 960; (10 << 6) / 10 = 64       -> 1024 (capped)
        //   3/10 CE:  1024 - 64 = 960; (3 << 6) / 10 = 19        -> 979
        //   0/10:     979 - 61 = 918                             -> 918
        //   1/20 CE:  918 - 57 = 861; (1 << 6) / 20 = 3          -> 864
        //   0/10 × 27: repeated x -= x >> 4 ...; x = 15 -> 15 >> 4 = 0, min_not_zero -> 0
        let mut d = Dctcp::new(4, DCTCP_MAX_ALPHA);
        let mut tp = sock(10);
        tp.snd_nxt = 10_000;
        d.init(&mut tp);
        assert_eq!(d.alpha_raw(), 1024);
        // Mid-window ACKs change nothing.
        tp.snd_una = 5000;
        tp.delivered = 5;
        tp.delivered_ce = 5;
        d.in_ack_event(&mut tp, 0);
        assert_eq!(d.alpha_raw(), 1024);
        tp.delivered = 0;
        tp.delivered_ce = 0;
        assert_eq!(window(&mut d, &mut tp, 10, 10), 1024);
        assert_eq!(window(&mut d, &mut tp, 10, 3), 979);
        assert_eq!(window(&mut d, &mut tp, 10, 0), 918);
        assert_eq!(window(&mut d, &mut tp, 20, 1), 864);
        let mut x = 864u32;
        let mut steps = 0;
        while x > 0 {
            let decay = x >> 4;
            x -= if decay == 0 { x } else { decay };
            steps += 1;
            assert_eq!(window(&mut d, &mut tp, 10, 0), x, "decay step {steps}");
        }
        assert_eq!(steps, 72, "alpha reaches exactly 0 after 72 windows without marks");
        assert_eq!(d.alpha(), 0.0);
    }

    #[test]
    fn loss_halves_with_the_two_segment_floor_and_once_per_rto() {
        let mut d = Dctcp::new(4, 100);
        let mut tp = sock(40);
        // Fast retransmit: ssthresh first (DCTCP's cut), then set_state overrides it.
        tp.snd_ssthresh = d.ssthresh(&tp);
        assert_eq!(tp.snd_ssthresh, 39);
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 20);
        // Already in Recovery: no second reaction.
        tp.ca_state = CaState::Recovery;
        tp.snd_cwnd = 10;
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 20);
        // RTO.
        tp.snd_cwnd = 3;
        d.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 2);
        assert!(d.needs_ecn());
    }

    #[test]
    fn grows_as_reno() {
        let mut d = Dctcp::new(4, 0);
        let mut tp = sock(10);
        tp.snd_ssthresh = 5;
        for _ in 0..10 {
            d.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd, 11);
        assert_eq!(dctcp_shift_g(1.0 / 16.0, 10), Some(4));
        assert_eq!(dctcp_shift_g(0.1, 10), None);
        assert_eq!(alpha_on_init(1.0), 1024);
    }
}
