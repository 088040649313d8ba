//! CUBIC (RFC 9438) as Linux's `net/ipv4/tcp_cubic.c` computes it, HyStart included.
//!
//! Read RFC 9438 §4 (W_cubic(t) = C (t - K)^3 + W_max, K = cbrt((W_max - cwnd_epoch) / C),
//! the Reno-friendly estimate W_est, fast convergence) and [`super::ca`] first. The kernel's
//! defaults and arithmetic, kept here:
//! - beta = 717/1024 (`beta`), C = 0.4 through `bic_scale` 41: the cubic term is
//!   `(bic_scale · 10 · offs^3) >> 40` with `offs` = |t - K| in 1/1024 s (`BICTCP_HZ`), i.e.
//!   C = 410/1024; K in 1/1024 s is cbrt(2^40 / 410 × (W_max - cwnd)) (`cube_factor`).
//! - Fast convergence on: a loss below the previous W_max sets W_max = cwnd (1 + beta) / 2.
//! - `bictcp_update`: the epoch starts at the first `cong_avoid` after a reduction; the
//!   target is the curve one minimum RTT ahead (t includes `delay_min`); `cnt` = cwnd /
//!   (target - cwnd) ACKed segments per one-segment increase, 100 cwnd when at or above the
//!   target, at most 20 before the first loss (5 % per RTT), lowered by the Reno-friendly
//!   estimate (`tcp_friendliness`: W_est grows by one segment per cwnd × `beta_scale` / 8
//!   ACKed segments, `beta_scale` = 8 (1 + beta) / 3 / (1 - beta) = 15 in integers, i.e.
//!   RFC 9438's alpha_cubic = 3 (1 - beta) / (1 + beta) as 8/15), and capped at 2 (at most
//!   1.5 × cwnd per RTT). `tcp_cong_avoid_ai` then applies `cnt`.
//! - The time base: `tcp_jiffies32` with HZ = 1000 (CONFIG_HZ_1000; distributions also ship
//!   250). t, K, `epoch_start` and `last_time` are in jiffies, so at datacenter RTTs the
//!   curve advances in 1 ms steps and `cnt` is recomputed at most once per jiffy (every ACK
//!   still feeds the Reno-friendly count); delay samples are in microseconds
//!   (`tcp_mstamp`). `cwnd_event(TxStart)` shifts the epoch by the idle time.
//! - HyStart (`hystart` 1, both detectors, `hystart_low_window` 16,
//!   `hystart_ack_delta_us` 2000): in slow start from cwnd 16 on, each round (ended when
//!   `snd_una` passes the `snd_nxt` of its start) ends slow start (ssthresh = cwnd) when
//!   ACKs spaced at most 2 ms apart span more than delay_min / 2 (ACK train; the kernel
//!   halves the threshold without pacing), or when the round's minimum RTT over 8 samples
//!   exceeds delay_min + clamp(delay_min / 8, 4 ms, 16 ms) (delay increase). Once found, it
//!   stays off until an RTO. Delay samples within 1 s of an epoch start are ignored.
//!
//! - `hystart_ack_delay`: the ACK-train threshold gets the kernel's cushion for TSO/GRO
//!   batching, min(1 ms, 4 × `gso_max_size` / pacing rate), with the device default
//!   `gso_max_size` of 64 KiB and the rate `tcp_update_pacing_rate` derives (cwnd × mss /
//!   srtt, × 2 while cwnd < ssthresh / 2, × 1.2 after): the kernel adds it whether or not
//!   the segments were offloaded, and at datacenter RTTs it dominates the threshold (about
//!   330 us instead of 50 us at cwnd 16, 100 us RTT), so it decides where HyStart leaves slow
//!   start.
//!
//! Deviation: `cubic_root` is the exact integer cube root, where the kernel uses a lookup
//! table plus one Newton step (about 0.2 % error in K).

use super::ca::{tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaSock, CaState, CongestionOps};
use ecnlab_core::units::Nanos;

/// Kernel tick rate (CONFIG_HZ): one jiffy is 1 ms.
pub const HZ: u64 = 1000;
/// `BICTCP_BETA_SCALE`.
const BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: t and K are in 1/2^10 s.
const BICTCP_HZ: u32 = 10;
/// `HYSTART_MIN_SAMPLES`.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `sk_gso_max_size` of a device by default (`GSO_LEGACY_MAX_SIZE`), bytes.
const GSO_MAX_SIZE: u64 = 65536;
/// `tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio`, percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`, microseconds.
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16000;

/// The module parameters (tcp_cubic.c's `module_param`s), kernel defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicParams {
    pub fast_convergence: bool,
    /// beta × 1024.
    pub beta: u32,
    /// C × 1024 / 10 (41: C = 0.4).
    pub bic_scale: u32,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_ack_train: bool,
    pub hystart_delay: bool,
    /// Segments below which HyStart does not act.
    pub hystart_low_window: u32,
    /// Largest ACK spacing that still counts as a train, microseconds.
    pub hystart_ack_delta_us: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            fast_convergence: true,
            beta: 717,
            bic_scale: 41,
            tcp_friendliness: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
        }
    }
}

/// `struct bictcp`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct CubicState {
    /// ACKed segments per one-segment increase.
    cnt: u32,
    /// W_max, segments.
    last_max_cwnd: u32,
    /// cwnd and jiffy of the last `cnt` computation.
    last_cwnd: u32,
    last_time: u32,
    /// The curve's plateau (W_max, or cwnd when above it) and K in 1/1024 s.
    bic_origin_point: u32,
    bic_k: u32,
    /// Minimum RTT seen, microseconds (0: none yet).
    delay_min: u32,
    /// Jiffy the current epoch began (None: between a reduction and the next growth).
    epoch_start: Option<u32>,
    /// Segments ACKed since W_est last grew.
    ack_cnt: u32,
    /// W_est, the Reno-friendly window.
    tcp_cwnd: u32,
    /// HyStart: samples in this round, exit found, round start and end, last train ACK,
    /// the round's minimum RTT (microseconds).
    sample_cnt: u8,
    found: bool,
    round_start: u32,
    end_seq: u64,
    last_ack: u32,
    curr_rtt: u32,
}

/// CUBIC with the kernel's precomputed scale factors.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// `beta_scale`: W_est grows one segment per cwnd × beta_scale / 8 ACKed segments.
    beta_scale: u32,
    /// `cube_rtt_scale` = bic_scale × 10.
    cube_rtt_scale: u32,
    /// `cube_factor` = 2^40 / (bic_scale × 10).
    cube_factor: u64,
    s: CubicState,
}

/// `tcp_jiffies32`.
#[inline]
fn jiffies(now: Nanos) -> u32 {
    (now / (1_000_000_000 / HZ)) as u32
}

/// `tcp_clock_us` (`tcp_mstamp`), wrapping as the kernel's u32.
#[inline]
fn clock_us(now: Nanos) -> u32 {
    (now / 1000) as u32
}

/// `usecs_to_jiffies`: rounds up.
#[inline]
fn usecs_to_jiffies(us: u32) -> u64 {
    (us as u64 * HZ).div_ceil(1_000_000)
}

/// `hystart_ack_delay`, microseconds: the ACK-train cushion for TSO/GRO batching, from the
/// pacing rate `tcp_update_pacing_rate` would set (none before the first RTT sample: the
/// kernel's undivided rate is then so high that the cushion is 0).
fn hystart_ack_delay(tp: &CaSock) -> u32 {
    if tp.srtt_us == 0 {
        return 0;
    }
    let ratio = if tp.snd_cwnd < tp.snd_ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    // Bytes per second: mss × cwnd / srtt × ratio; srtt_us is microseconds << 3.
    let rate = tp.mss as u64 * ((1_000_000 / 100) << 3) * ratio * tp.snd_cwnd.max(1) as u64 / tp.srtt_us as u64;
    if rate == 0 {
        return 1000;
    }
    (GSO_MAX_SIZE * 4 * 1_000_000 / rate).min(1000) as u32
}

/// `cubic_root`: floor(cbrt(a)), exact (see the module doc).
pub fn cubic_root(a: u64) -> u32 {
    let mut x = (a as f64).cbrt() as u64;
    // Correct the float estimate by at most a step or two each way.
    while x > 0 && x.checked_pow(3).is_none_or(|c| c > a) {
        x -= 1;
    }
    while (x + 1).checked_pow(3).is_some_and(|c| c <= a) {
        x += 1;
    }
    x as u32
}

impl Cubic {
    pub fn new(p: CubicParams) -> Self {
        let beta_scale = 8 * (BETA_SCALE + p.beta) / 3 / (BETA_SCALE - p.beta);
        let cube_rtt_scale = p.bic_scale * 10;
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale as u64;
        Cubic { p, beta_scale, cube_rtt_scale, cube_factor, s: CubicState::default() }
    }

    /// W_max, segments (for tests and statistics).
    pub fn w_max(&self) -> u32 {
        self.s.last_max_cwnd
    }

    /// K of the current epoch in 1/1024 s.
    pub fn k(&self) -> u32 {
        self.s.bic_k
    }

    /// HyStart found the exit point.
    pub fn hystart_found(&self) -> bool {
        self.s.found
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.s = CubicState::default();
    }

    /// `bictcp_hystart_reset`: a new round starts at `snd_nxt`.
    fn hystart_reset(&mut self, tp: &CaSock) {
        let now = clock_us(tp.now);
        self.s.round_start = now;
        self.s.last_ack = now;
        self.s.end_seq = tp.snd_nxt;
        self.s.curr_rtt = u32::MAX;
        self.s.sample_cnt = 0;
    }

    /// The cubic curve at `t` (1/1024 s since the epoch began): origin ± C (t - K)^3.
    fn bic_target(&self, t: u64) -> u32 {
        let k = self.s.bic_k as u64;
        let offs = t.abs_diff(k);
        // c/rtt × (t - K)^3; u128 so that no epoch length overflows (the kernel's u64 is
        // safe below a million segments).
        let delta = ((self.cube_rtt_scale as u128 * (offs as u128).pow(3)) >> (10 + 3 * BICTCP_HZ)) as u64;
        let origin = self.s.bic_origin_point as u64;
        if t < k {
            origin.saturating_sub(delta) as u32
        } else {
            (origin + delta).min(u32::MAX as u64) as u32
        }
    }

    /// `bictcp_update`: recompute `cnt` for window `cwnd` after `acked` segments.
    fn update(&mut self, cwnd: u32, acked: u32, now: Nanos) {
        let jf = jiffies(now);
        let s = &mut self.s;
        s.ack_cnt = s.ack_cnt.wrapping_add(acked);
        if s.last_cwnd == cwnd && (jf.wrapping_sub(s.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        // The curve moves at most once per jiffy; a reduction clears `epoch_start`, which
        // forces a recomputation.
        if s.epoch_start.is_none() || jf != s.last_time {
            s.last_cwnd = cwnd;
            s.last_time = jf;
            let epoch_start = match s.epoch_start {
                Some(e) => e,
                None => {
                    s.epoch_start = Some(jf);
                    s.ack_cnt = acked;
                    s.tcp_cwnd = cwnd;
                    if s.last_max_cwnd <= cwnd {
                        s.bic_k = 0;
                        s.bic_origin_point = cwnd;
                    } else {
                        s.bic_k = cubic_root(self.cube_factor * (s.last_max_cwnd - cwnd) as u64);
                        s.bic_origin_point = s.last_max_cwnd;
                    }
                    jf
                }
            };
            // t one minimum RTT ahead (RFC 9438 §4.2's W_cubic(t + RTT)), in 1/1024 s.
            let t = ((jf.wrapping_sub(epoch_start) as i32 as i64).max(0) as u64 + usecs_to_jiffies(s.delay_min))
                << BICTCP_HZ;
            let t = t / HZ;
            let target = self.bic_target(t);
            let s = &mut self.s;
            s.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // Before the first loss the bandwidth is unknown: at least 5 % per RTT.
            if s.last_max_cwnd == 0 && s.cnt > 20 {
                s.cnt = 20;
            }
        }
        let s = &mut self.s;
        if self.p.tcp_friendliness {
            // W_est (RFC 9438 §4.3): one segment per cwnd × beta_scale / 8 ACKed segments.
            let per = (cwnd * self.beta_scale) >> 3;
            if per > 0 {
                while s.ack_cnt > per {
                    s.ack_cnt -= per;
                    s.tcp_cwnd += 1;
                }
            }
            if s.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (s.tcp_cwnd - cwnd);
                s.cnt = s.cnt.min(max_cnt);
            }
        }
        // At most one segment per two ACKed: 1.5 × cwnd per RTT.
        s.cnt = s.cnt.max(2);
    }

    /// `hystart_update`.
    fn hystart_update(&mut self, tp: &mut CaSock, delay: u32) {
        if tp.snd_una > self.s.end_seq {
            self.hystart_reset(tp);
        }
        if tp.snd_cwnd < self.p.hystart_low_window {
            return;
        }
        let s = &mut self.s;
        if self.p.hystart_ack_train {
            let now = clock_us(tp.now);
            if (now.wrapping_sub(s.last_ack) as i32) <= self.p.hystart_ack_delta_us as i32 {
                s.last_ack = now;
                // Halved: hosts without fq do not pace (SK_PACING_NONE), so a train may
                // arrive up to twice as fast as the RTT suggests.
                let threshold = (s.delay_min + hystart_ack_delay(tp)) >> 1;
                if (now.wrapping_sub(s.round_start) as i32) > threshold as i32 {
                    s.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
        if self.p.hystart_delay {
            s.curr_rtt = s.curr_rtt.min(delay);
            if s.sample_cnt < HYSTART_MIN_SAMPLES {
                s.sample_cnt += 1;
            } else {
                let thresh = (s.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if s.curr_rtt > s.delay_min + thresh {
                    s.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
    }
}

impl CongestionOps for Cubic {
    /// `cubictcp_init` (`initial_ssthresh` 0: ssthresh stays infinite).
    fn init(&mut self, tp: &mut CaSock) {
        self.reset();
        if self.p.hystart {
            self.hystart_reset(tp);
        }
    }

    /// `cubictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        self.s.epoch_start = None;
        let cwnd = tp.snd_cwnd;
        // W_max, and fast convergence (RFC 9438 §4.7): a flow that lost below its previous
        // W_max releases bandwidth by remembering a lower plateau.
        self.s.last_max_cwnd = if cwnd < self.s.last_max_cwnd && self.p.fast_convergence {
            ((cwnd as u64 * (BETA_SCALE + self.p.beta) as u64) / (2 * BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        ((cwnd as u64 * self.p.beta as u64 / BETA_SCALE as u64) as u32).max(2)
    }

    /// `cubictcp_cong_avoid`.
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
        self.update(tp.snd_cwnd, acked, tp.now);
        tcp_cong_avoid_ai(tp, self.s.cnt, acked);
    }

    /// `cubictcp_state`: an RTO forgets everything, HyStart included.
    fn set_state(&mut self, tp: &mut CaSock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    /// `cubictcp_cwnd_event`: after an application-limited idle period, shift the epoch so
    /// that the curve resumes where it stopped instead of jumping ahead.
    fn cwnd_event(&mut self, tp: &mut CaSock, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let now = jiffies(tp.now);
        let delta = now.wrapping_sub(jiffies(tp.lsndtime)) as i32;
        if let Some(e) = self.s.epoch_start {
            if delta > 0 {
                let e = e.wrapping_add(delta as u32);
                // after(epoch_start, now)
                self.s.epoch_start = Some(if (e.wrapping_sub(now) as i32) > 0 { now } else { e });
            }
        }
    }

    /// `cubictcp_acked`: delay_min and HyStart.
    fn pkts_acked(&mut self, tp: &mut CaSock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Discard delay samples right after a reduction.
        if let Some(e) = self.s.epoch_start {
            if (jiffies(tp.now).wrapping_sub(e) as i32) < HZ as i32 {
                return;
            }
        }
        let delay = (sample.rtt_us as u32).max(1);
        if self.s.delay_min == 0 || self.s.delay_min > delay {
            self.s.delay_min = delay;
        }
        if !self.s.found && tp.in_slow_start() && self.p.hystart {
            self.hystart_update(tp, delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ca::INFINITE_SSTHRESH;
    use super::*;

    const MS: Nanos = 1_000_000;
    const US: Nanos = 1_000;

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

    /// RFC 9438 §4.2 with C = 0.4, beta = 0.7, in floating point.
    fn w_cubic(t: f64, w_max: f64) -> f64 {
        let k = (w_max * (1.0 - 0.7) / 0.4).cbrt();
        0.4 * (t - k).powi(3) + w_max
    }

    #[test]
    fn cubic_root_is_exact() {
        for a in [0u64, 1, 7, 8, 26, 27, 1000, 999_999, u64::MAX] {
            let x = cubic_root(a) as u128;
            assert!(x.pow(3) <= a as u128 && (x + 1).pow(3) > a as u128, "{a}");
        }
    }

    #[test]
    fn loss_sets_beta_and_k_as_rfc9438() {
        let mut c = Cubic::new(CubicParams::default());
        let mut tp = sock(100);
        // ssthresh = 100 × 717 / 1024 = 70.02 -> 70 (RFC: cwnd × 0.7).
        assert_eq!(c.ssthresh(&tp), 70);
        assert_eq!(c.w_max(), 100);
        tp.snd_cwnd = 70;
        tp.snd_ssthresh = 70;
        tp.now = 10_000 * MS;
        c.cong_avoid(&mut tp, 0, 1);
        // K = cbrt(30 / 0.4) = 4.217 s; the kernel's is in 1/1024 s with C = 410/1024.
        let k_rfc = (30.0f64 / 0.4).cbrt();
        let k = c.k() as f64 / 1024.0;
        assert!((k - k_rfc).abs() < 0.005, "K {k} vs RFC {k_rfc}");
        // The curve at known elapsed times (the kernel's C is 0.4004).
        for t in [0.0, 1.0, 2.0, 4.217, 5.0, 6.0] {
            let got = c.bic_target((t * 1024.0) as u64) as f64;
            let want = w_cubic(t, 100.0);
            assert!((got - want).abs() <= 1.0, "W_cubic({t}) = {got}, RFC {want}");
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut c = Cubic::new(CubicParams::default());
        c.ssthresh(&sock(100));
        // A second loss at 90 < W_max: W_max = 90 × (1 + 0.7) / 2 = 76.5 -> 76 (1741/2048).
        assert_eq!(c.ssthresh(&sock(90)), 63);
        assert_eq!(c.w_max(), 76);
        // Without fast convergence W_max is the window at the loss.
        let mut c = Cubic::new(CubicParams { fast_convergence: false, ..Default::default() });
        c.ssthresh(&sock(100));
        c.ssthresh(&sock(90));
        assert_eq!(c.w_max(), 90);
        assert_eq!(c.ssthresh(&sock(2)), 2, "two-segment floor");
    }

    /// Drives `rounds` round trips of `rtt`: each delivers cwnd one-segment ACKs spread
    /// evenly, each with an RTT sample. Returns cwnd at the end.
    fn run(c: &mut Cubic, tp: &mut CaSock, rtt: Nanos, rounds: u32) -> u32 {
        for _ in 0..rounds {
            let n = tp.snd_cwnd;
            let start = tp.now;
            for i in 0..n {
                tp.now = start + rtt * (i as u64 + 1) / n as u64;
                tp.snd_una += 1000;
                let sample = AckSample { pkts_acked: 1, rtt_us: (rtt / 1000) as i32 };
                c.pkts_acked(tp, &sample);
                c.cong_avoid(tp, tp.snd_una, 1);
            }
            tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64 * 1000;
        }
        tp.snd_cwnd
    }

    /// A flow at W_max = 100 that lost, seen afterwards: `rtt` per round.
    fn after_loss(rtt: Nanos, hystart: bool) -> (Cubic, CaSock) {
        let mut c = Cubic::new(CubicParams { hystart, ..Default::default() });
        let mut tp = sock(100);
        tp.now = 5000 * MS;
        c.init(&mut tp);
        tp.snd_ssthresh = 100;
        // delay_min from samples before the loss.
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: (rtt / 1000) as i32 });
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh; // PRR's end point
        (c, tp)
    }

    #[test]
    fn window_after_known_elapsed_time_follows_w_cubic() {
        // RTT 100 ms: the cubic region (W_est stays below the curve until ~6 s).
        let (mut c, mut tp) = after_loss(100 * MS, false);
        for t in 1..=5u32 {
            let cwnd = run(&mut c, &mut tp, 100 * MS, 10) as f64;
            let want = w_cubic(t as f64, 100.0);
            assert!((cwnd - want).abs() <= 2.0, "t = {t} s: cwnd {cwnd}, RFC 9438 W_cubic {want:.1}");
        }
    }

    #[test]
    fn reno_friendly_region_at_short_rtt() {
        // RTT 1 ms: in 40 ms the curve rises less than a segment, W_est (RFC 9438 §4.3,
        // alpha_cubic = 3 (1 - 0.7) / 1.7 per RTT) rises about 21: cwnd follows W_est.
        let (mut c, mut tp) = after_loss(MS, false);
        let cwnd0 = tp.snd_cwnd as f64;
        assert_eq!(cwnd0, 70.0);
        let mut w_est = cwnd0;
        let alpha = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
        let mut cwnd = cwnd0;
        for _ in 0..40 {
            // One RTT of cwnd ACKs adds alpha_cubic segments to W_est.
            w_est += alpha;
            cwnd = run(&mut c, &mut tp, MS, 1) as f64;
        }
        assert!((cwnd - w_est).abs() <= 2.0, "cwnd {cwnd}, RFC W_est {w_est:.1}");
        assert!(cwnd > w_cubic(0.041, 100.0) + 15.0, "well above the curve");
        // Without tcp_friendliness the window stays on the curve.
        let mut c2 = Cubic::new(CubicParams { hystart: false, tcp_friendliness: false, ..Default::default() });
        let mut tp2 = sock(100);
        tp2.now = 5000 * MS;
        tp2.snd_ssthresh = c2.ssthresh(&tp2);
        tp2.snd_cwnd = tp2.snd_ssthresh;
        assert!(run(&mut c2, &mut tp2, MS, 40) <= 72);
    }

    #[test]
    fn cnt_cap_limits_growth_to_one_and_a_half_per_rtt() {
        // Far past the plateau the curve asks for more than cwnd per RTT; cnt >= 2 caps it.
        let mut c = Cubic::new(CubicParams { hystart: false, ..Default::default() });
        let mut tp = sock(20);
        tp.now = 1000 * MS;
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 100;
        c.cong_avoid(&mut tp, 0, 1); // the epoch starts (cwnd above W_max: K = 0)
        tp.now += 60_000 * MS;
        let before = tp.snd_cwnd;
        for _ in 0..before {
            c.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd, before + before / 2);
    }

    #[test]
    fn idle_shifts_the_epoch() {
        let (mut c, mut tp) = after_loss(100 * MS, false);
        run(&mut c, &mut tp, 100 * MS, 10);
        let e = c.s.epoch_start.unwrap();
        tp.lsndtime = tp.now;
        tp.now += 500 * MS;
        c.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(c.s.epoch_start, Some(e + 500));
    }

    /// Slow start at cwnd 20 with samples of `rtt_us` (ACKs every `spacing`), after a round
    /// at 10 ms that set delay_min. Returns whether HyStart ended slow start.
    fn hystart_round(p: CubicParams, spacing: Nanos, rtt_us: i32) -> (bool, u32) {
        let mut c = Cubic::new(p);
        let mut tp = sock(20);
        tp.now = 1000 * MS;
        tp.snd_nxt = 20_000;
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: 10_000 });
        // Next round: snd_una passes end_seq.
        tp.snd_una = 21_000;
        tp.snd_nxt = 60_000;
        for _ in 0..12 {
            tp.now += spacing;
            c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us });
            tp.snd_una += 1000;
        }
        (c.hystart_found(), tp.snd_ssthresh)
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_delay_increase() {
        // ACKs 3 ms apart: no ACK train. 10 ms + clamp(10/8, 4, 16) = 14 ms.
        let p = CubicParams::default();
        assert_eq!(hystart_round(p, 3 * MS, 15_000), (true, 20));
        assert_eq!(hystart_round(p, 3 * MS, 13_000), (false, INFINITE_SSTHRESH), "below the threshold");
        let off = CubicParams { hystart: false, ..p };
        assert_eq!(hystart_round(off, 3 * MS, 15_000), (false, INFINITE_SSTHRESH), "HyStart off");
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_after_half_the_min_rtt() {
        // ACKs 1 ms apart at an unchanged 10 ms RTT: the train spans 5 ms after 6 ACKs.
        let p = CubicParams { hystart_delay: false, ..Default::default() };
        assert_eq!(hystart_round(p, MS, 10_000), (true, 20));
        // Below hystart_low_window nothing happens.
        let mut c = Cubic::new(p);
        let mut tp = sock(15);
        c.init(&mut tp);
        for _ in 0..20 {
            tp.now += MS;
            c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: 10_000 });
        }
        assert!(!c.hystart_found());
    }

    #[test]
    fn hystart_ack_train_threshold_includes_the_tso_cushion() {
        // cwnd 16 in early slow start, mss 1460, srtt 100 us: pacing rate = 2 × 16 × 1460 B /
        // 100 us = 467.2 MB/s; cushion = 4 × 65536 B / rate = 561 us (below the 1 ms cap).
        let mut tp = sock(16);
        tp.mss = 1460;
        tp.srtt_us = 100 << 3;
        assert_eq!(hystart_ack_delay(&tp), 561);
        // From ssthresh / 2 on the ratio is 1.2: 280.3 MB/s, 935 us.
        tp.snd_ssthresh = 20;
        assert_eq!(hystart_ack_delay(&tp), 935);
        tp.srtt_us = 0;
        assert_eq!(hystart_ack_delay(&tp), 0);
        // A 100 us path with ACKs 10 us apart: the train must span (100 + 561) / 2 = 330 us,
        // not 50 us, before slow start ends.
        let p = CubicParams { hystart_delay: false, ..Default::default() };
        let mut c = Cubic::new(p);
        let mut tp = sock(16);
        tp.mss = 1460;
        tp.srtt_us = 100 << 3;
        tp.snd_nxt = 16_000;
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: 100 });
        tp.snd_una = 17_000;
        tp.snd_nxt = 60_000;
        let start = tp.now;
        while !c.hystart_found() {
            tp.now += 10 * US;
            c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_us: 100 });
            tp.snd_una += 1000;
        }
        // The round starts with its first ACK, 10 us in; the first ACK more than 330 us later.
        assert_eq!(tp.now - start, 350 * US);
    }
}
