//! Classic RED (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", 1993), per queue, at enqueue.
//!
//! Read dual AQM §II-A first (the paper's summary of RED and of DCTCP's step configuration).
//! On every arrival the average queue length is updated, `avg <- (1 - w) avg + w q`, where
//! `q` is the queue the packet finds *before* it joins (F&J; Linux `red.h` and ns-2 RED do the
//! same). Then:
//! - `avg < min_th`: pass;
//! - `min_th <= avg < max_th`: `p_b = max_p (avg - min_th) / (max_th - min_th)` and the packet
//!   is marked with probability `p_a = p_b / (1 - count p_b)`, where `count` is the number of
//!   packets since the last mark (F&J: spreads marks out uniformly rather than
//!   geometrically); [`Reason::RedProbabilistic`];
//! - `avg >= max_th`: mark ([`Reason::RedForced`]). With `gentle` (Floyd, 2000) the
//!   probability instead rises linearly from `max_p` at `max_th` to 1 at `2 max_th`
//!   (still probabilistic), and only `avg >= 2 max_th` forces a mark.
//!
//! Idle periods (F&J): when a packet arrives to an empty queue, the average decays as if
//! `m` packets of `mean_pkt_size` had been sent on the link meanwhile: `avg <- (1 - w)^m avg`,
//! with `m` = idle time / transmission time of `mean_pkt_size`. Following ns-2's reading of
//! F&J, the arriving packet itself then counts as one more sample of the empty queue, so the
//! step configuration (w = 1) sees 0 at an empty queue, whatever the idle time.
//! The idle period starts when the last packet of the queue has been serialized (its
//! dequeue time plus its transmission time at the link rate).
//!
//! Why the queue before the arrival: with `w = 1` and `min_th = max_th = K` RED marks when
//! `q_before >= K`, which for equal-size packets and K a multiple of the packet size is
//! exactly DCTCP-RED's `q_after > K` (REFERENCE-IMPLEMENTATIONS §2.2, ns-2 single-queue
//! DCTCP tests).
//!
//! Deviations: `max_p` above 1 is accepted (p_b is capped at 1) because the dual AQM's
//! equal-sharing rule (dual AQM §IV-C) produces such values; F&J's byte mode (p scaled by
//! packet size) is not implemented. Defaults follow Floyd's "RED: Discussions of setting
//! parameters" (the dual AQM paper's ref. \[9\]): w = 0.002, max_p = 0.1, min_th = 5 packets,
//! max_th = 3 min_th, gentle off (as in F&J and the dual AQM paper).
//!
//! The RED core (`RedCfg`, `RedVars`) is shared with the dual AQM ([`super::dualq`]).

use super::{BuildCtx, Decision, MarkingScheme, PacketView, QueueState, Reason};
use crate::rng::Rng;
use crate::units::{tx_time_ns, ByteSize, Nanos, NS_PER_S};
use serde::{Deserialize, Serialize};

/// `[marking.red]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RedParams {
    /// Minimum threshold on the average queue; default 7500 B (5 packets, Floyd's RED guidelines).
    pub min_th: ByteSize,
    /// Maximum threshold on the average queue; default 22500 B (3 min_th, Floyd's guidelines; dual AQM §IV-A).
    pub max_th: ByteSize,
    /// Marking probability at max_th; default 0.1 (Floyd's guidelines; dual AQM §IV-A). Above
    /// 1 is accepted and the probability capped at 1 (dual AQM §IV-C's equal sharing gives such values).
    pub max_p: f64,
    /// EWMA weight of the average queue length; default 0.002 (Floyd's guidelines; dual AQM §IV-A).
    pub w: f64,
    /// Gentle RED: probability max_p..1 between max_th and 2 max_th; default false (F&J 1993).
    pub gentle: bool,
    /// Typical packet size for the idle-time decay of avg; default 1500 B (F&J's small packet; ns-2 mean_pktsize_).
    pub mean_pkt_size: ByteSize,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_th: ByteSize(7500),
            max_th: ByteSize(22500),
            max_p: 0.1,
            w: 0.002,
            gentle: false,
            mean_pkt_size: ByteSize(1500),
        }
    }
}

/// What one RED instance decides for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedVerdict {
    Pass,
    Probabilistic,
    Forced,
}

/// Validated parameters of one RED instance, in the units the per-packet path uses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RedCfg {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    w: f64,
    gentle: bool,
    /// Transmission time of a mean-size packet at the link rate (ns): F&J's idle "slot".
    slot_ns: f64,
}

/// Evolving state of one RED instance on one queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RedVars {
    /// Average queue length (bytes).
    pub avg: f64,
    /// Packets since the last mark while avg is in the probabilistic region; -1 outside (F&J).
    count: i64,
    /// Start of the current idle period (F&J's q_time).
    q_time: Nanos,
}

impl Default for RedVars {
    fn default() -> Self {
        RedVars { avg: 0.0, count: -1, q_time: 0 }
    }
}

impl RedCfg {
    /// Validate; errors start with the field name.
    pub(crate) fn new(
        min_th: ByteSize,
        max_th: ByteSize,
        max_p: f64,
        w: f64,
        gentle: bool,
        mean_pkt_size: ByteSize,
        link_rate_bps: u64,
    ) -> Result<RedCfg, String> {
        if max_th.0 == 0 {
            return Err("max_th: must be larger than 0".into());
        }
        if min_th > max_th {
            return Err(format!("min_th: {min_th} is above max_th ({max_th})"));
        }
        if !(max_p.is_finite() && max_p >= 0.0) {
            return Err(format!("max_p: {max_p} is not a non-negative number"));
        }
        if !(w > 0.0 && w <= 1.0) {
            return Err(format!("w: {w} is not in (0, 1]"));
        }
        if mean_pkt_size.0 == 0 {
            return Err("mean_pkt_size: must be larger than 0".into());
        }
        if link_rate_bps == 0 {
            return Err("link rate must be larger than 0".into());
        }
        let slot_ns = mean_pkt_size.0 as f64 * 8.0 * NS_PER_S as f64 / link_rate_bps as f64;
        Ok(RedCfg { min_th: min_th.0 as f64, max_th: max_th.0 as f64, max_p, w, gentle, slot_ns })
    }

    /// F&J's average update for an arrival that finds `q` bytes queued.
    #[inline]
    pub(crate) fn update_avg(&self, v: &mut RedVars, now: Nanos, q: u64) {
        if q == 0 && now > v.q_time {
            let m = (now - v.q_time) as f64 / self.slot_ns;
            v.avg *= (1.0 - self.w).powf(m);
        }
        v.avg += self.w * (q as f64 - v.avg);
    }

    /// F&J's marking decision on the current average (call after [`RedCfg::update_avg`]).
    #[inline]
    pub(crate) fn decide(&self, v: &mut RedVars, rng: &mut Rng) -> RedVerdict {
        let avg = v.avg;
        let p_b = if avg < self.min_th {
            v.count = -1;
            return RedVerdict::Pass;
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            v.count = 0;
            return RedVerdict::Forced;
        };
        let p_b = p_b.min(1.0);
        v.count += 1;
        let denom = 1.0 - v.count as f64 * p_b;
        let p_a = if denom <= 0.0 { 1.0 } else { p_b / denom };
        if rng.f64() < p_a {
            v.count = 0;
            RedVerdict::Probabilistic
        } else {
            RedVerdict::Pass
        }
    }

    /// Call at dequeue when the packet of `size` bytes left the queue empty: the idle period
    /// starts once it has been serialized.
    #[inline]
    pub(crate) fn queue_emptied(v: &mut RedVars, now: Nanos, size: u32, link_rate_bps: u64) {
        // Saturating: a run whose clock is near `Nanos::MAX` has no idle period to decay.
        v.q_time = now.saturating_add(tx_time_ns(size as u64, link_rate_bps));
    }
}

/// Classic RED on each queue of a port.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedCfg,
    link_rate_bps: u64,
    seed: u64,
    rng: Rng,
    /// One RED state per queue.
    vars: Vec<RedVars>,
}

impl Red {
    pub fn new(p: &RedParams, ctx: &BuildCtx) -> Result<Self, String> {
        let cfg = RedCfg::new(p.min_th, p.max_th, p.max_p, p.w, p.gentle, p.mean_pkt_size, ctx.link_rate_bps)?;
        Ok(Red {
            cfg,
            link_rate_bps: ctx.link_rate_bps,
            seed: ctx.seed,
            rng: Rng::new(ctx.seed),
            vars: vec![RedVars::default(); ctx.n_queues],
        })
    }

    /// Current average queue length of `queue` (bytes).
    pub fn avg_queue_bytes(&self, queue: usize) -> f64 {
        self.vars[queue].avg
    }
}

impl MarkingScheme for Red {
    fn on_enqueue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState) -> Decision {
        let v = &mut self.vars[q.queue];
        // The port's view includes the arriving packet; RED judges the queue it finds.
        self.cfg.update_avg(v, now, q.queue_bytes.saturating_sub(pkt.size as u64));
        match self.cfg.decide(v, &mut self.rng) {
            RedVerdict::Pass => Decision::Pass,
            RedVerdict::Probabilistic => Decision::Mark(Reason::RedProbabilistic),
            RedVerdict::Forced => Decision::Mark(Reason::RedForced),
        }
    }

    fn on_dequeue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState, _sojourn: Nanos) -> Decision {
        if q.queue_bytes == 0 {
            RedCfg::queue_emptied(&mut self.vars[q.queue], now, pkt.size, self.link_rate_bps);
        }
        Decision::Pass
    }

    fn reset(&mut self) {
        self.vars.iter_mut().for_each(|v| *v = RedVars::default());
        self.rng = Rng::new(self.seed);
    }
}

/// Scripted traces for the marking schemes' unit tests (shared by the sibling modules).
#[cfg(test)]
pub(crate) mod script {
    use super::super::{Decision, MarkingScheme, PacketView, QueueState};
    use crate::units::Nanos;

    pub const LINK: u64 = 10_000_000_000;

    /// A single-queue view with `bytes` in the queue, port and pool, on a 10 Gbps link.
    pub fn qs(bytes: u64) -> QueueState {
        QueueState {
            queue: 0,
            n_queues: 1,
            queue_bytes: bytes,
            queue_pkts: bytes.div_ceil(1500) as u32,
            port_bytes: bytes,
            pool_bytes: bytes,
            link_rate_bps: LINK,
            quantum: None,
            round_time_ns: None,
            oracle_share: 1.0,
            strict_above: 0,
        }
    }

    pub fn pkt(size: u32, ect: bool) -> PacketView {
        PacketView { size, ect }
    }

    /// One event of a trace: a packet of `size` bytes (`ect`) at `t` with the queue view `q`.
    #[derive(Clone, Copy, Debug)]
    pub enum Ev {
        Enq { t: Nanos, size: u32, ect: bool, q: QueueState },
        Deq { t: Nanos, size: u32, q: QueueState },
    }

    /// Feed `evs` to `s`, collect its decisions in order.
    pub fn run(s: &mut impl MarkingScheme, evs: &[Ev]) -> Vec<Decision> {
        evs.iter()
            .map(|e| match *e {
                Ev::Enq { t, size, ect, q } => s.on_enqueue(t, pkt(size, ect), &q),
                Ev::Deq { t, size, q } => s.on_dequeue(t, pkt(size, true), &q, 0),
            })
            .collect()
    }

    /// Long-run mark rate of F&J's count spreading at a fixed p_b: the gap X between marks
    /// has P(X = n) = p_b / (1 - p_b) for n < 1/p_b (uniform), so the rate is about 2 p_b,
    /// twice the geometric (count-free) rate p_b.
    pub fn spread_rate(p_b: f64) -> f64 {
        let (mut survive, mut mean_gap, mut n) = (1.0, 0.0, 1.0);
        while survive > 0.0 {
            let p_a = if n * p_b >= 1.0 { 1.0 } else { (p_b / (1.0 - n * p_b)).min(1.0) };
            mean_gap += n * survive * p_a;
            survive *= 1.0 - p_a;
            n += 1.0;
        }
        1.0 / mean_gap
    }

    /// A FIFO of equal packets driven by arrivals and departures: returns the enqueue
    /// events (`true`) and dequeue events (`false`) as views, for traces with a real queue.
    pub fn fifo_trace(ops: &[(Nanos, bool)], size: u32) -> Vec<Ev> {
        let mut bytes = 0u64;
        let mut evs = Vec::with_capacity(ops.len());
        for &(t, arrive) in ops {
            if arrive {
                bytes += size as u64;
                evs.push(Ev::Enq { t, size, ect: true, q: qs(bytes) });
            } else if bytes > 0 {
                bytes -= size as u64;
                evs.push(Ev::Deq { t, size, q: qs(bytes) });
            }
        }
        evs
    }
}

#[cfg(test)]
mod tests {
    use super::script::*;
    use super::*;
    use crate::rng::Rng;
    use proptest::prelude::*;

    fn ctx(n_queues: usize, seed: u64) -> BuildCtx {
        BuildCtx { n_queues, link_rate_bps: LINK, buffer_bytes: 1_000_000, seed }
    }

    fn red(p: RedParams) -> Red {
        Red::new(&p, &ctx(1, 7)).unwrap()
    }

    /// F&J 1993's algorithm, transcribed for the tests with the same random stream;
    /// the empty-queue branch counts the arrival as one more sample (see the module doc).
    struct ReferenceRed {
        p: RedParams,
        avg: f64,
        count: i64,
        q_time: Nanos,
        rng: Rng,
    }
    impl ReferenceRed {
        fn arrival(&mut self, now: Nanos, q: f64) -> Decision {
            let (w, min, max) = (self.p.w, self.p.min_th.0 as f64, self.p.max_th.0 as f64);
            if q > 0.0 {
                self.avg = (1.0 - w) * self.avg + w * q;
            } else {
                let s = self.p.mean_pkt_size.0 as f64 * 8.0 / LINK as f64 * 1e9;
                let m = now.saturating_sub(self.q_time) as f64 / s;
                self.avg *= (1.0 - w).powf(m + 1.0);
            }
            if min <= self.avg && self.avg < max {
                self.count += 1;
                let p_b = self.p.max_p * (self.avg - min) / (max - min);
                let p_a = if self.count as f64 * p_b >= 1.0 { 1.0 } else { p_b / (1.0 - self.count as f64 * p_b) };
                if self.rng.f64() < p_a {
                    self.count = 0;
                    return Decision::Mark(Reason::RedProbabilistic);
                }
                Decision::Pass
            } else if max <= self.avg {
                self.count = 0;
                Decision::Mark(Reason::RedForced)
            } else {
                self.count = -1;
                Decision::Pass
            }
        }
    }

    /// A random arrival/departure trace of 1500 B packets.
    fn random_ops(seed: u64, n: usize, p_arrive: f64) -> Vec<(Nanos, bool)> {
        let mut r = Rng::new(seed);
        let mut t = 0;
        (0..n)
            .map(|_| {
                t += r.below(3000);
                (t, r.bernoulli(p_arrive))
            })
            .collect()
    }

    #[test]
    fn matches_floyd_jacobson_reference() {
        let p = RedParams { min_th: ByteSize(15_000), max_th: ByteSize(45_000), w: 0.02, ..Default::default() };
        let mut s = red(p.clone());
        let mut reference = ReferenceRed { p, avg: 0.0, count: -1, q_time: 0, rng: Rng::new(7) };
        let evs = fifo_trace(&random_ops(3, 20_000, 0.52), 1500);
        let mut marks = 0;
        for e in &evs {
            let d = run(&mut s, std::slice::from_ref(e))[0];
            match *e {
                Ev::Enq { t, size, q, .. } => {
                    let want = reference.arrival(t, (q.queue_bytes - size as u64) as f64);
                    assert_eq!(d, want, "at t = {t}");
                    let (got, avg) = (s.avg_queue_bytes(0), reference.avg);
                    assert!((got - avg).abs() < 1e-6 * (1.0 + avg), "t {t}: {got} vs {avg}");
                    marks += (want != Decision::Pass) as u32;
                }
                Ev::Deq { t, size, q } => {
                    if q.queue_bytes == 0 {
                        reference.q_time = t + tx_time_ns(size as u64, LINK);
                    }
                }
            }
        }
        assert!(marks > 100, "the trace must reach the marking regions ({marks} marks)");
    }

    #[test]
    fn ewma_follows_the_formula() {
        let mut s = red(RedParams { w: 0.25, ..Default::default() });
        // Queue seen by the arrivals: 0, 1500, 3000, 4500 (the view includes the arrival).
        let mut avg = 0.0;
        for (i, q) in [0u64, 1500, 3000, 4500].into_iter().enumerate() {
            s.on_enqueue(i as u64 * 100, pkt(1500, true), &qs(q + 1500));
            avg = 0.75 * avg + 0.25 * q as f64;
            assert!((s.avg_queue_bytes(0) - avg).abs() < 1e-9, "step {i}: {} vs {avg}", s.avg_queue_bytes(0));
        }
        assert!((avg - (0.25 * 4500.0 + 0.1875 * 3000.0 + 0.140625 * 1500.0)).abs() < 1e-9);
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut s = red(RedParams { w: 0.1, ..Default::default() });
        for i in 0..50 {
            s.on_enqueue(i, pkt(1500, true), &qs(30_000));
        }
        let before = s.avg_queue_bytes(0);
        // The queue empties at t = 1000; the packet is on the wire for 1200 ns.
        s.on_dequeue(1000, pkt(1500, true), &qs(0), 0);
        // 12 slots of 1.2 us idle, then the arrival itself: (1 - w)^13.
        s.on_enqueue(2200 + 12 * 1200, pkt(1500, true), &qs(1500));
        let want = before * 0.9f64.powi(13);
        assert!((s.avg_queue_bytes(0) - want).abs() < 1e-6, "{} vs {want}", s.avg_queue_bytes(0));
    }

    #[test]
    fn regions_non_gentle() {
        // w = 1: avg is the queue the arrival finds.
        let p =
            RedParams { min_th: ByteSize(30_000), max_th: ByteSize(60_000), w: 1.0, max_p: 1.0, ..Default::default() };
        let mut s = red(p);
        for q in (0..30_000).step_by(500) {
            assert_eq!(s.on_enqueue(0, pkt(1500, true), &qs(q + 1500)), Decision::Pass, "q = {q}");
        }
        for q in (60_000..200_000).step_by(700) {
            assert_eq!(s.on_enqueue(0, pkt(1500, true), &qs(q + 1500)), Decision::Mark(Reason::RedForced), "q = {q}");
        }
    }

    #[test]
    fn gentle_region_is_probabilistic() {
        let p = RedParams {
            min_th: ByteSize(30_000),
            max_th: ByteSize(60_000),
            w: 1.0,
            gentle: true,
            ..Default::default()
        };
        let mut s = red(p);
        // avg = 1.025 max_th: p_b = 0.1 + 0.9 x 0.025 = 0.1225.
        let d: Vec<Decision> = (0..20_000).map(|_| s.on_enqueue(0, pkt(1500, true), &qs(61_500 + 1500))).collect();
        let f = d.iter().filter(|&&x| x == Decision::Mark(Reason::RedProbabilistic)).count() as f64 / d.len() as f64;
        let want = spread_rate(0.1225);
        assert!((f - want).abs() < 0.1 * want, "{f} vs {want}");
        assert!(!d.contains(&Decision::Mark(Reason::RedForced)));
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &qs(119_999 + 1500)), Decision::Mark(Reason::RedProbabilistic));
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &qs(120_000 + 1500)), Decision::Mark(Reason::RedForced));
    }

    #[test]
    fn count_spreading_bounds_the_gap_between_marks() {
        // p_b = 0.1: the gap between two marks is at most 1/p_b - 1 = 9 packets.
        let p = RedParams { min_th: ByteSize(0), max_th: ByteSize(100_000), w: 1.0, max_p: 0.2, ..Default::default() };
        let mut s = red(p);
        let mut gap = 0;
        for _ in 0..10_000 {
            gap += 1;
            if s.on_enqueue(0, pkt(1500, true), &qs(50_000 + 1500)) != Decision::Pass {
                assert!(gap <= 9, "{gap}");
                gap = 0;
            }
        }
    }

    #[test]
    fn per_queue_state_and_reset() {
        let mut s = Red::new(&RedParams { w: 0.5, ..Default::default() }, &ctx(2, 1)).unwrap();
        let q1 = QueueState { queue: 1, n_queues: 2, ..qs(50_000) };
        s.on_enqueue(0, pkt(1500, true), &q1);
        assert_eq!(s.avg_queue_bytes(0), 0.0);
        assert!(s.avg_queue_bytes(1) > 0.0);
        let first: Vec<Decision> = (0..100).map(|_| s.on_enqueue(0, pkt(1500, true), &q1)).collect();
        s.reset();
        assert_eq!(s.avg_queue_bytes(1), 0.0);
        s.on_enqueue(0, pkt(1500, true), &q1);
        let again: Vec<Decision> = (0..100).map(|_| s.on_enqueue(0, pkt(1500, true), &q1)).collect();
        assert_eq!(first, again, "reset restarts the random stream too");
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |p: RedParams| Red::new(&p, &ctx(1, 0)).err().unwrap();
        assert!(bad(RedParams { min_th: ByteSize(30_000), max_th: ByteSize(20_000), ..Default::default() })
            .starts_with("min_th:"));
        assert!(
            bad(RedParams { max_th: ByteSize(0), min_th: ByteSize(0), ..Default::default() }).starts_with("max_th:")
        );
        assert!(bad(RedParams { w: 0.0, ..Default::default() }).starts_with("w:"));
        assert!(bad(RedParams { w: 1.5, ..Default::default() }).starts_with("w:"));
        assert!(bad(RedParams { max_p: -0.1, ..Default::default() }).starts_with("max_p:"));
        assert!(bad(RedParams { max_p: f64::NAN, ..Default::default() }).starts_with("max_p:"));
        assert!(bad(RedParams { mean_pkt_size: ByteSize(0), ..Default::default() }).starts_with("mean_pkt_size:"));
    }

    #[test]
    fn params_deserialize_with_units() {
        let p: RedParams = serde_json::from_str(r#"{"min_th": "30KB", "max_th": "90KB", "gentle": true}"#).unwrap();
        assert_eq!((p.min_th.0, p.max_th.0, p.gentle, p.w), (30_000, 90_000, true, 0.002));
        assert!(serde_json::from_str::<RedParams>(r#"{"minth": 1}"#).is_err());
    }

    proptest! {
        #[test]
        fn never_marks_below_min_th(ops in proptest::collection::vec((0u64..5000, any::<bool>(), 1u32..9000), 1..400),
                                    w in 0.001f64..1.0, gentle in any::<bool>(), seed in any::<u64>()) {
            let p = RedParams {
                min_th: ByteSize(20_000), max_th: ByteSize(40_000), w, gentle, max_p: 0.5, ..Default::default()
            };
            let mut s = Red::new(&p, &ctx(1, seed)).unwrap();
            let (mut t, mut bytes) = (0, 0u64);
            for (dt, arrive, size) in ops {
                t += dt;
                if arrive {
                    bytes += size as u64;
                    let d = s.on_enqueue(t, pkt(size, true), &qs(bytes));
                    let avg = s.avg_queue_bytes(0);
                    prop_assert!(avg >= 0.0 && avg.is_finite());
                    if avg < 20_000.0 { prop_assert_eq!(d, Decision::Pass); }
                    if !gentle && avg >= 40_000.0 { prop_assert_eq!(d, Decision::Mark(Reason::RedForced)); }
                } else {
                    let size = size.min(bytes as u32);
                    bytes -= size as u64;
                    prop_assert_eq!(s.on_dequeue(t, pkt(size, true), &qs(bytes), 0), Decision::Pass);
                }
            }
        }
    }
}
