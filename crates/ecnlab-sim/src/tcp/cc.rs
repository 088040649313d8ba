//! Congestion-control responses to ECN: a small trait with no-op default hooks, dispatched
//! through an enum on the hot path (the smoltcp pattern, STYLE.md).
//!
//! Everything that is the same for all four flavours lives in the sender: slow start and
//! congestion avoidance, NewReno fast retransmit / fast recovery, RTO. A controller only
//! decides, for each ACK, whether and how to cut the window on ECN-Echo and whether the
//! window may grow on this ACK. Read RFC 3168 §6.1.2 and RFC 8257 §3.3 first.

use super::config::{CcKind, TcpConfig};

/// What the sender tells its controller about one ACK.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckInfo {
    /// Bytes newly acknowledged by the cumulative ACK (0 for a duplicate ACK).
    pub acked: u64,
    /// The ACK is a duplicate ACK (outstanding data, no progress).
    pub dup: bool,
    /// The ACK carries ECN-Echo (already false for flavours without ECN).
    pub ece: bool,
    /// The sender is inside a reduction window: this ACK does not yet cover data sent after
    /// the last window reduction (RFC 3168 §6.1.2: react at most once per window of data).
    pub in_cwr: bool,
    /// NewReno fast recovery is in progress (loss already reduced the window).
    pub in_recovery: bool,
}

/// The window variables a controller may change (bytes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    /// Floor for ECN reductions (`min_cwnd` segments).
    pub min_cwnd: u64,
}

impl Window {
    /// Sets cwnd (floored) and ssthresh to the reduced value. ssthresh = cwnd puts the
    /// sender in congestion avoidance (slow start is cwnd < ssthresh): the dual AQM paper
    /// §III-A fixes the original patch, which left the sender in slow start after a cut.
    /// Never raises cwnd (a window already below the floor, e.g. after a timeout, stays).
    fn cut_to(&mut self, target: f64) {
        let v = (target.max(0.0) as u64).max(self.min_cwnd).min(self.cwnd);
        self.cwnd = v;
        self.ssthresh = v;
    }
}

/// The controller's answer for one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Response {
    /// A new reduction window begins (the sender records its end, sets CWR on the next new
    /// segment and counts an ECN reduction).
    pub enter_cwr: bool,
    /// cwnd was lowered on this ACK (the sender resets its congestion-avoidance counter).
    pub reduced: bool,
    /// The window may grow (slow start / congestion avoidance) on this ACK.
    pub allow_growth: bool,
}

const GROW: Response = Response { enter_cwr: false, reduced: false, allow_growth: true };

/// Hooks a congestion controller implements; all default to "plain NewReno".
pub(crate) trait CongestionControl {
    /// The flavour sends ECT packets and reacts to ECN-Echo.
    fn ecn_capable(&self) -> bool {
        false
    }
    /// Called for every new or duplicate ACK, before window growth and loss recovery.
    fn on_ack(&mut self, _a: &AckInfo, _w: &mut Window) -> Response {
        GROW
    }
    /// A loss (fast retransmit or timeout) reduced the window and opened a loss
    /// reduction window.
    fn on_loss(&mut self) {}
    /// Current DCTCP alpha (0 for flavours without one).
    fn alpha(&self) -> f64 {
        0.0
    }
}

/// NewReno without ECN: ECN-Echo is never negotiated, so a stray ECE is ignored.
#[derive(Clone, Debug, Default)]
pub(crate) struct NewReno;
impl CongestionControl for NewReno {}

/// Growth rule shared by ECN* and DCTCP: the window grows on ACKs without ECN-Echo, also
/// inside a reduction window, but not on ACKs carrying ECN-Echo (ns-2
/// `TcpAgent::recv_newack_helper`, which both papers' ns-2 code builds on).
fn grow_unless_ece(a: &AckInfo) -> bool {
    !a.ece
}

/// ECN*: RFC 3168 §6.1.2, halve cwnd and ssthresh once per window of data.
#[derive(Clone, Debug, Default)]
pub(crate) struct EcnStar;
impl CongestionControl for EcnStar {
    fn ecn_capable(&self) -> bool {
        true
    }
    fn on_ack(&mut self, a: &AckInfo, w: &mut Window) -> Response {
        let mut r = Response { allow_growth: grow_unless_ece(a), ..Response::default() };
        if a.ece && !a.in_cwr && !a.in_recovery {
            // Halve the window (ns-2 halves window(), i.e. cwnd, not the flight size).
            w.cut_to(w.cwnd as f64 / 2.0);
            r.enter_cwr = true;
            r.reduced = true;
        }
        r
    }
}

/// Truncates `x` to a multiple of 2^-bits (bits = 0: unchanged), clamped to [0, 1].
fn quantize(x: f64, bits: u32) -> f64 {
    let x = x.clamp(0.0, 1.0);
    if bits == 0 {
        x
    } else {
        let scale = (1u64 << bits) as f64;
        (x * scale).floor() / scale
    }
}

/// Bytes an ACK contributes to DCTCP's counters: the bytes it newly acknowledges, or one
/// MSS for a duplicate ACK (it reports one segment that arrived out of order; Linux's DCTCP
/// counts it so, where RFC 8257 §3.3 would count SACKed bytes).
fn ack_weight(a: &AckInfo, mss: u64) -> u64 {
    if a.acked > 0 {
        a.acked
    } else if a.dup {
        mss
    } else {
        0
    }
}

/// DCTCP (RFC 8257 §3.3): alpha from the fraction of ECE bytes over each window of data,
/// cwnd *= 1 - alpha/2 at most once per window.
#[derive(Clone, Debug)]
pub(crate) struct Dctcp {
    g: f64,
    bits: u32,
    /// DCTCP.Alpha.
    alpha: f64,
    /// DCTCP.WindowEnd: the observation window ends when the cumulative ACK passes it.
    window_end: u64,
    /// DCTCP.BytesAcked / DCTCP.BytesMarked of the current observation window.
    bytes_acked: u64,
    bytes_marked: u64,
}

impl Dctcp {
    pub(crate) fn new(g: f64, alpha_init: f64, bits: u32) -> Self {
        Dctcp { g, bits, alpha: quantize(alpha_init, bits), window_end: 0, bytes_acked: 0, bytes_marked: 0 }
    }

    /// RFC 8257 §3.3 steps 1-8. `ack` is the cumulative ACK, `snd_nxt` the next new byte.
    /// Returns true when alpha was updated.
    fn observe(&mut self, a: &AckInfo, ack: u64, snd_nxt: u64, mss: u64) -> bool {
        let b = ack_weight(a, mss);
        self.bytes_acked += b;
        if a.ece {
            self.bytes_marked += b;
        }
        if ack <= self.window_end || self.bytes_acked == 0 {
            return false;
        }
        let f = self.bytes_marked as f64 / self.bytes_acked as f64;
        self.alpha = quantize((1.0 - self.g) * self.alpha + self.g * f, self.bits);
        self.window_end = snd_nxt;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
        true
    }
}

/// The dual AQM paper's modified DCTCP (§III): alpha per ACK, progressive reduction from
/// the window at the start of CWR, growth allowed during CWR.
#[derive(Clone, Debug)]
pub(crate) struct DctcpDualq {
    /// Per-window estimator, used when `per_ack` is false (and its alpha field otherwise).
    est: Dctcp,
    per_ack: bool,
    progressive: bool,
    grow_in_cwr: bool,
    /// cwnd when the current CWR period began ("cwnd_max", §III-B d).
    cwnd_max: u64,
}

/// Where the sender's sequence state stands, for controllers that need it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeqState {
    /// Cumulative ACK of this ACK (== snd_una after it).
    pub ack: u64,
    /// Next new byte to send.
    pub snd_nxt: u64,
}

/// Enum dispatch over the four flavours.
#[derive(Clone, Debug)]
pub(crate) enum Cc {
    NewReno(NewReno),
    EcnStar(EcnStar),
    Dctcp(Dctcp),
    DctcpDualq(DctcpDualq),
}

impl Cc {
    pub(crate) fn new(cfg: &TcpConfig) -> Self {
        match cfg.cc {
            // Cubic is refused under the textbook profile (`TcpConfig::check_cc`); a
            // textbook sender built by hand with it behaves as NewReno.
            CcKind::NewReno | CcKind::Cubic => Cc::NewReno(NewReno),
            // DCQCN connections never build a TCP sender; a stray one behaves as ECN*.
            CcKind::EcnStar | CcKind::Dcqcn => Cc::EcnStar(EcnStar),
            CcKind::Dctcp => Cc::Dctcp(Dctcp::new(cfg.dctcp_g, cfg.dctcp_alpha_init, cfg.dctcp_alpha_bits)),
            CcKind::DctcpDualq => Cc::DctcpDualq(DctcpDualq {
                est: Dctcp::new(cfg.dualq_g, cfg.dctcp_alpha_init, cfg.dualq_alpha_bits),
                per_ack: cfg.dualq_per_ack_alpha,
                progressive: cfg.dualq_progressive,
                grow_in_cwr: cfg.dualq_grow_in_cwr,
                cwnd_max: 0,
            }),
        }
    }

    #[inline]
    pub(crate) fn ecn_capable(&self) -> bool {
        match self {
            Cc::NewReno(c) => c.ecn_capable(),
            Cc::EcnStar(c) => c.ecn_capable(),
            Cc::Dctcp(_) | Cc::DctcpDualq(_) => true,
        }
    }

    #[inline]
    pub(crate) fn on_loss(&mut self) {
        match self {
            Cc::NewReno(c) => c.on_loss(),
            Cc::EcnStar(c) => c.on_loss(),
            Cc::Dctcp(_) => {}
            Cc::DctcpDualq(c) => c.on_loss(),
        }
    }

    #[inline]
    pub(crate) fn alpha(&self) -> f64 {
        match self {
            Cc::NewReno(c) => c.alpha(),
            Cc::EcnStar(c) => c.alpha(),
            Cc::Dctcp(c) => c.alpha,
            Cc::DctcpDualq(c) => c.alpha(),
        }
    }

    /// Per-ACK hook (see [`CongestionControl::on_ack`]); the DCTCP variants also need the
    /// sequence state for their observation windows.
    #[inline]
    pub(crate) fn on_ack(&mut self, a: &AckInfo, s: SeqState, w: &mut Window) -> Response {
        match self {
            Cc::NewReno(c) => c.on_ack(a, w),
            Cc::EcnStar(c) => c.on_ack(a, w),
            Cc::Dctcp(c) => {
                // RFC 8257 §3.3: update the estimate first, then react to ECE with it.
                c.observe(a, s.ack, s.snd_nxt, w.mss);
                let mut r = Response { allow_growth: grow_unless_ece(a), ..Response::default() };
                if a.ece && !a.in_cwr && !a.in_recovery {
                    w.cut_to(w.cwnd as f64 * (1.0 - c.alpha / 2.0));
                    r.enter_cwr = true;
                    r.reduced = true;
                }
                r
            }
            Cc::DctcpDualq(c) => c.on_ack(a, s, w),
        }
    }
}

impl CongestionControl for DctcpDualq {
    fn ecn_capable(&self) -> bool {
        true
    }
    fn on_loss(&mut self) {
        // The reduction window now belongs to loss recovery: no progressive ECN cuts from
        // an older cwnd_max inside it.
        self.cwnd_max = 0;
    }
    fn alpha(&self) -> f64 {
        self.est.alpha
    }
}

impl DctcpDualq {
    fn on_ack(&mut self, a: &AckInfo, s: SeqState, w: &mut Window) -> Response {
        // §III-B c: alpha <- (1-g) alpha + g F on every ACK, F the marked fraction of what
        // this ACK reports (0 or 1: an ACK either carries ECE or not). ACKs that report
        // nothing (pure window updates) leave alpha alone.
        if self.per_ack {
            if ack_weight(a, w.mss) > 0 {
                let f = if a.ece { 1.0 } else { 0.0 };
                let e = &mut self.est;
                e.alpha = quantize((1.0 - e.g) * e.alpha + e.g * f, e.bits);
            }
        } else {
            self.est.observe(a, s.ack, s.snd_nxt, w.mss);
        }
        let alpha = self.est.alpha;
        let mut r = Response::default();
        if a.ece && !a.in_recovery {
            if !a.in_cwr {
                // Start of a CWR period: remember the window to reduce from.
                self.cwnd_max = w.cwnd;
                r.enter_cwr = true;
                let before = w.cwnd;
                w.cut_to(self.cwnd_max as f64 * (1.0 - alpha / 2.0));
                r.reduced = w.cwnd < before;
            } else if self.progressive && self.cwnd_max > 0 {
                // §III-B d: recompute from cwnd_max on each ECN-Echo, apply only if lower.
                let target = ((self.cwnd_max as f64 * (1.0 - alpha / 2.0)).max(0.0) as u64).max(w.min_cwnd);
                if target < w.cwnd {
                    w.cwnd = target;
                    w.ssthresh = target;
                    r.reduced = true;
                }
            }
        }
        // §III-A b: growth allowed during CWR; the congestion-avoidance counter is reset only
        // when a reduction was actually performed (the sender does that on `reduced`).
        let in_cwr_now = a.in_cwr || r.enter_cwr;
        r.allow_growth = !r.reduced && (self.grow_in_cwr || !in_cwr_now);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_truncates_to_grid() {
        assert_eq!(quantize(0.3, 0), 0.3);
        let q = quantize(0.3, 20);
        assert!(q <= 0.3 && 0.3 - q < 1.0 / (1u64 << 20) as f64);
        assert_eq!((q * (1u64 << 20) as f64).fract(), 0.0);
        assert_eq!(quantize(1.5, 10), 1.0);
        assert_eq!(quantize(-0.1, 10), 0.0);
        // Truncation lets alpha decay to exactly 0 (no stuck floor).
        let mut a = 1.0 / (1u64 << 20) as f64 * 100.0;
        for _ in 0..10_000 {
            a = quantize(a * (1.0 - 1.0 / 256.0), 20);
        }
        assert_eq!(a, 0.0);
    }

    #[test]
    fn dctcp_observation_window_per_rfc8257() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.0, 0);
        let mk = |acked, ece| AckInfo { acked, dup: false, ece, in_cwr: false, in_recovery: false };
        // First ACK passes WindowEnd = 0: alpha updated with F of that ACK alone.
        assert!(d.observe(&mk(1000, true), 1000, 10_000, 1000));
        assert_eq!(d.alpha, 1.0 / 16.0);
        // Inside the window (ack <= 10_000): only counted.
        assert!(!d.observe(&mk(1000, true), 2000, 12_000, 1000));
        assert!(!d.observe(&mk(8000, false), 10_000, 20_000, 1000));
        // Passing the window: F = 1000 / 10000 (this ACK's bytes included).
        assert!(d.observe(&mk(1000, false), 11_000, 21_000, 1000));
        let want = (15.0 / 16.0) * (1.0 / 16.0) + (1.0 / 16.0) * (1000.0 / 10_000.0);
        assert!((d.alpha - want).abs() < 1e-15, "{} vs {want}", d.alpha);
        assert_eq!(d.window_end, 21_000);
    }
}
