//! TCN: mark a departing packet whose sojourn time exceeds T = RTT x lambda (TCN §4.1, Eq. 3).
//!
//! Read TCN §4 first. The decision is stateless and per packet, taken at dequeue:
//! `sojourn > threshold` (strict, as in the authors' ns-2, Linux and ns-3 code;
//! REFERENCE-IMPLEMENTATIONS §2.1) marks with [`Reason::TcnSojourn`]. The same threshold
//! serves every queue of the port, whatever the scheduler: that is the point of TCN.
//!
//! Options, both written from the paper text alone (no author code has them, §2.1):
//! - *Probabilistic TCN* (§4.3, "RED-like, probabilistic TCN marking"): with `t_min` and
//!   `t_max` set, a packet is never marked at or below T_min, always above T_max
//!   ([`Reason::TcnSojourn`]), and in between with probability rising linearly from 0 at
//!   T_min to `p_max` at T_max ([`Reason::TcnProbabilistic`]). `threshold` is then unused.
//! - *Hardware timestamp* (§4.2): the chip stores the enqueue time as a `timestamp_bits`-wide
//!   counter of `timestamp_resolution` ticks and subtracts it, modulo 2^bits, from the
//!   dequeue-time counter. We only get the true sojourn and `now`, so we rebuild the enqueue
//!   time as `now - sojourn`, truncate both instants to the counter, and subtract modulo
//!   2^bits. The measured sojourn is thus quantized to whole ticks (the tick boundary
//!   crossings between the two instants), and a sojourn longer than the wrap-around period
//!   (2^bits x resolution, e.g. 8 ns x 2^16 = 524 us) aliases to its remainder and may go
//!   unmarked, exactly the limitation the paper accepts ("a typical RTT ... is at most a few
//!   hundred us").
//!
//! Defaults: `threshold` = 78 us, the paper's 10 Gbps large-scale value (K = 65 packets x
//! 1500 B at 10 Gbps, TCN §6.2; TCN-NS2 derives T from K the same way). The 1 Gbps testbed
//! used 256 us (§6.1). `p_max` = 1.0 (the paper gives no value; a continuous ramp to "mark
//! all" at T_max; DCQCN's own RED recommends 0.01, set it in DCQCN scenarios).
//! `timestamp_resolution` = 8 ns (§4.2's larger example, 524 us of range with 16 bits).

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::rng::Rng;
use crate::units::{Duration, Nanos};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcnParams {
    /// Sojourn-time threshold T = RTT x lambda, marks when sojourn > T (default 78us: TCN §6.2, 10 Gbps).
    pub threshold: Duration,
    /// Probabilistic TCN: no mark at or below T_min; set with `t_max` (default unset: cut-off at `threshold`; TCN §4.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_min: Option<Duration>,
    /// Probabilistic TCN: every packet above T_max is marked; set with `t_min` (default unset; TCN §4.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_max: Option<Duration>,
    /// Probabilistic TCN: marking probability reached at T_max, linear from 0 at T_min (default 1.0; TCN §4.3 gives none).
    pub p_max: f64,
    /// Hardware timestamp width in bits, sojourn computed modulo 2^bits (default unset: exact sojourn; TCN §4.2 suggests 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp_bits: Option<u32>,
    /// Hardware timestamp tick, used only with `timestamp_bits` (default 8ns: TCN §4.2).
    pub timestamp_resolution: Duration,
}

impl Default for TcnParams {
    fn default() -> Self {
        TcnParams {
            threshold: Duration::from_us(78),
            t_min: None,
            t_max: None,
            p_max: 1.0,
            timestamp_bits: None,
            timestamp_resolution: Duration(8),
        }
    }
}

/// The hardware timestamp counter of §4.2.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    /// Tick in ns.
    res: Nanos,
    /// 2^bits - 1.
    mask: u64,
}

impl Stamp {
    /// Sojourn as the chip measures it: (counter(now) - counter(enqueue)) mod 2^bits, in ns.
    #[inline]
    fn measure(self, now: Nanos, sojourn: Nanos) -> Nanos {
        let counter = |t: Nanos| (t / self.res) & self.mask;
        let ticks = counter(now).wrapping_sub(counter(now.saturating_sub(sojourn))) & self.mask;
        ticks.saturating_mul(self.res)
    }
}

#[derive(Clone)]
pub struct Tcn {
    /// T in ns (cut-off mode).
    threshold: Nanos,
    /// (T_min, T_max) in ns (probabilistic mode).
    ramp: Option<(Nanos, Nanos)>,
    p_max: f64,
    stamp: Option<Stamp>,
    seed: u64,
    rng: Rng,
}

impl Tcn {
    pub fn new(p: &TcnParams, ctx: &BuildCtx) -> Result<Self, String> {
        let ramp = match (p.t_min, p.t_max) {
            (None, None) => None,
            (Some(lo), Some(hi)) if lo < hi => Some((lo.ns(), hi.ns())),
            (Some(lo), Some(hi)) => return Err(format!("t_min: {lo} must be smaller than t_max ({hi})")),
            _ => return Err("t_min: t_min and t_max must be set together".into()),
        };
        if !(p.p_max > 0.0 && p.p_max <= 1.0) {
            return Err(format!("p_max: {} is not in (0, 1]", p.p_max));
        }
        let stamp = match p.timestamp_bits {
            None => None,
            Some(bits) => {
                if !(1..=63).contains(&bits) {
                    return Err(format!("timestamp_bits: {bits} is not between 1 and 63"));
                }
                let res = p.timestamp_resolution.ns();
                if res == 0 {
                    return Err("timestamp_resolution: must be larger than 0".into());
                }
                let mask = (1u64 << bits) - 1;
                // The largest sojourn the counter can express; beyond it nothing could ever mark.
                let range = (mask as u128 * res as u128).min(u64::MAX as u128) as u64;
                let needed = ramp.map_or(p.threshold.ns(), |(lo, _)| lo);
                if range <= needed {
                    return Err(format!(
                        "timestamp_bits: a {bits}-bit counter of {} ticks measures at most {}, \
                         not above the threshold {}",
                        p.timestamp_resolution,
                        Duration(range),
                        Duration(needed)
                    ));
                }
                Some(Stamp { res, mask })
            }
        };
        Ok(Tcn { threshold: p.threshold.ns(), ramp, p_max: p.p_max, stamp, seed: ctx.seed, rng: Rng::new(ctx.seed) })
    }

    /// The sojourn the switch sees: exact, or through the hardware timestamp counter.
    #[inline]
    fn measured(&self, now: Nanos, sojourn: Nanos) -> Nanos {
        self.stamp.map_or(sojourn, |s| s.measure(now, sojourn))
    }
}

impl MarkingScheme for Tcn {
    /// TCN reads the sojourn time alone (TCN §4), not the queue.
    fn hooks(&self) -> Hooks {
        Hooks::DEQUEUE_SOJOURN
    }

    #[inline]
    fn on_dequeue(&mut self, now: Nanos, _pkt: PacketView, _q: &QueueState, sojourn: Nanos) -> Decision {
        let s = self.measured(now, sojourn);
        match self.ramp {
            None if s > self.threshold => Decision::Mark(Reason::TcnSojourn),
            None => Decision::Pass,
            Some((_, hi)) if s > hi => Decision::Mark(Reason::TcnSojourn),
            Some((lo, _)) if s <= lo => Decision::Pass,
            Some((lo, hi)) => {
                let p = self.p_max * (s - lo) as f64 / (hi - lo) as f64;
                if self.rng.bernoulli(p) {
                    Decision::Mark(Reason::TcnProbabilistic)
                } else {
                    Decision::Pass
                }
            }
        }
    }

    fn reset(&mut self) {
        // TCN keeps no state across packets; restart the random stream for reproducibility.
        self.rng = Rng::new(self.seed);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn ctx() -> BuildCtx {
        BuildCtx { n_queues: 4, link_rate_bps: 10_000_000_000, buffer_bytes: 1_000_000, seed: 9 }
    }
    pub(crate) fn qs(queue: usize, bytes: u64) -> QueueState {
        QueueState {
            queue,
            n_queues: 4,
            queue_bytes: bytes,
            queue_pkts: bytes.div_ceil(1500) as u32,
            port_bytes: bytes,
            pool_bytes: bytes,
            link_rate_bps: 10_000_000_000,
            quantum: None,
            round_time_ns: None,
            oracle_share: 1.0,
            strict_above: 0,
        }
    }
    pub(crate) const PKT: PacketView = PacketView { size: 1500, ect: true };

    fn tcn(p: TcnParams) -> Tcn {
        Tcn::new(&p, &ctx()).unwrap()
    }
    fn marks(t: &mut Tcn, now: Nanos, sojourn: Nanos) -> bool {
        matches!(t.on_dequeue(now, PKT, &qs(0, 3000), sojourn), Decision::Mark(_))
    }

    #[test]
    fn cut_off_is_strict() {
        let mut t = tcn(TcnParams::default());
        assert!(!marks(&mut t, 1_000_000, 78_000));
        assert!(marks(&mut t, 1_000_000, 78_001));
        assert_eq!(t.on_dequeue(5, PKT, &qs(3, 0), 100_000), Decision::Mark(Reason::TcnSojourn));
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |p: TcnParams| Tcn::new(&p, &ctx()).err().unwrap();
        let us = Duration::from_us;
        assert!(bad(TcnParams { t_min: Some(us(5)), ..Default::default() }).starts_with("t_min:"));
        assert!(bad(TcnParams { t_min: Some(us(5)), t_max: Some(us(5)), ..Default::default() }).starts_with("t_min:"));
        assert!(bad(TcnParams { p_max: 0.0, ..Default::default() }).starts_with("p_max:"));
        assert!(bad(TcnParams { p_max: f64::NAN, ..Default::default() }).starts_with("p_max:"));
        assert!(bad(TcnParams { timestamp_bits: Some(0), ..Default::default() }).starts_with("timestamp_bits:"));
        // 8 bits x 8 ns = 2 us of range cannot express 78 us.
        assert!(bad(TcnParams { timestamp_bits: Some(8), ..Default::default() }).starts_with("timestamp_bits:"));
        let p = TcnParams { timestamp_bits: Some(16), timestamp_resolution: Duration(0), ..Default::default() };
        assert!(bad(p).starts_with("timestamp_resolution:"));
        let toml_like: TcnParams =
            serde_json::from_str(r#"{"threshold": "256us", "t_min": "50us", "t_max": "100us"}"#).unwrap();
        assert_eq!(toml_like.threshold.ns(), 256_000);
        assert!(serde_json::from_str::<TcnParams>(r#"{"treshold": "1us"}"#).is_err());
    }

    #[test]
    fn probabilistic_ramp() {
        let us = Duration::from_us;
        let p = TcnParams { t_min: Some(us(50)), t_max: Some(us(150)), p_max: 0.5, ..Default::default() };
        let mut t = tcn(p);
        assert_eq!(t.on_dequeue(0, PKT, &qs(0, 0), 150_001), Decision::Mark(Reason::TcnSojourn));
        // Midway: p = 0.25.
        let n = 40_000;
        let hits = (0..n).filter(|_| t.on_dequeue(0, PKT, &qs(0, 0), 100_000) != Decision::Pass).count();
        let f = hits as f64 / n as f64;
        assert!((f - 0.25).abs() < 0.01, "{f}");
        // reset restarts the random stream.
        let a: Vec<_> = (0..50).map(|_| t.on_dequeue(0, PKT, &qs(0, 0), 90_000)).collect();
        t.reset();
        let mut fresh = tcn(TcnParams { t_min: Some(us(50)), t_max: Some(us(150)), p_max: 0.5, ..Default::default() });
        let b: Vec<_> = (0..50).map(|_| fresh.on_dequeue(0, PKT, &qs(0, 0), 90_000)).collect();
        let c: Vec<_> = (0..50).map(|_| t.on_dequeue(0, PKT, &qs(0, 0), 90_000)).collect();
        assert_eq!(b, c);
        assert!(a.contains(&Decision::Mark(Reason::TcnProbabilistic)));
    }

    #[test]
    fn timestamp_quantizes_and_aliases() {
        // 16 bits of 8 ns: wraps every 524_288 ns.
        let p = TcnParams { timestamp_bits: Some(16), ..Default::default() };
        let t = tcn(p.clone());
        let wrap = 8 << 16;
        assert_eq!(t.measured(1_000_000, 100_000), 100_000);
        // Tick boundaries crossed, not the true difference: 7 ns spanning one boundary reads 8.
        assert_eq!(t.measured(1_000_003, 7), 8);
        assert_eq!(t.measured(1_000_007, 7), 0);
        // A 600 us sojourn reads as 600 - 524.288 us and is not marked.
        assert_eq!(t.measured(10_000_000, 600_000), 600_000 - wrap);
        let mut t = tcn(p);
        assert!(!marks(&mut t, 10_000_000, 600_000));
        assert!(marks(&mut t, 10_000_000, wrap + 80_000));
        assert!(marks(&mut t, 10_000_000, 80_000));
        // Across the counter's own wrap (now just past a multiple of 2^16 ticks).
        let now = 3 * wrap + 16;
        assert_eq!(t.measured(now, 100_000), 100_000);
    }

    proptest! {
        #[test]
        fn marks_exactly_above_threshold(thr in 0u64..1_000_000, now in any::<u64>(), sojourn in any::<u64>()) {
            let mut t = tcn(TcnParams { threshold: Duration(thr), ..Default::default() });
            let d = t.on_dequeue(now, PKT, &qs(0, 1500), sojourn);
            prop_assert_eq!(d == Decision::Mark(Reason::TcnSojourn), sojourn > thr);
            prop_assert!(d == Decision::Pass || d == Decision::Mark(Reason::TcnSojourn));
        }

        #[test]
        fn probabilistic_bounds(lo in 0u64..500_000, width in 1u64..500_000, p_max in 0.001f64..=1.0,
                                 trace in prop::collection::vec(0u64..1_500_000, 1..200)) {
                let mut t = tcn(TcnParams { t_min: Some(Duration(lo)), t_max: Some(Duration(lo + width)), p_max, ..Default::default() });
            for s in trace {
                let d = t.on_dequeue(s, PKT, &qs(0, 0), s);
                if s <= lo { prop_assert_eq!(d, Decision::Pass); }
                if s > lo + width { prop_assert_eq!(d, Decision::Mark(Reason::TcnSojourn)); }
                if d == Decision::Mark(Reason::TcnProbabilistic) { prop_assert!(s > lo && s <= lo + width); }
            }
        }

        #[test]
        fn timestamp_reads_sojourn_modulo_wrap(bits in 8u32..40, res in 1u64..2000, now in 0u64..u64::MAX / 2, sojourn in any::<u64>()) {
            let p = TcnParams { threshold: Duration(0), timestamp_bits: Some(bits), timestamp_resolution: Duration(res), ..Default::default() };
            let t = tcn(p);
            let sojourn = sojourn.min(now);
            let m = t.measured(now, sojourn);
            let wrap = (res as u128) << bits;
            // Whole ticks, below the wrap period, and congruent to the true sojourn within a tick.
            prop_assert_eq!(m % res, 0);
            prop_assert!((m as u128) < wrap);
            let diff = (sojourn as u128 % wrap + wrap - m as u128) % wrap;
            prop_assert!(diff < res as u128 || wrap - diff < res as u128, "m {} sojourn {} diff {}", m, sojourn, diff);
        }
    }
}
