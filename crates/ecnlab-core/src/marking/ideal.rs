//! Ideal ECN/RED (TCN §3.1, §3.3): per-queue DCTCP-RED with a threshold that follows the
//! queue's capacity, `K_i = C_i x RTT x lambda` (TCN Eq. 2).
//!
//! We write it as `K_i = (C_i / C) x k` with `k = C x RTT x lambda`, the standard threshold at
//! line rate (TCN Eq. 1): the two are the same number, and this way the operator sets the
//! one parameter it already knows (the per-queue K of DCTCP-RED) instead of RTT and lambda.
//! `C_i / C` is capped at 1 (a queue never drains faster than the link), so `K_i <= k`.
//!
//! C_i comes from one of two estimators:
//! - `departure_rate` (default): TCN Algorithm 1, per queue, run at every dequeue (the
//!   queue length it tests is the one the departing packet leaves behind): a measurement
//!   cycle opens when the queue holds at least `dq_thresh` bytes, counts departed bytes and
//!   closes once `dq_thresh` bytes have left, giving a sample `dq_count / (now - dq_start)`
//!   that is smoothed with `avg_rate <- eps avg_rate + (1 - eps) dq_rate`.
//!   `variant = "paper"` (default) follows Algorithm 1 literally. Algorithm 1 leaves the
//!   initial `avg_rate` open; we start it at the line rate C, which is what "K_i = k until
//!   the first sample" means. `variant = "baiwei0427"` is what the authors' only public code
//!   does (REFERENCE-IMPLEMENTATIONS §2.4): the interval includes the last packet's
//!   transmission time, the next cycle re-arms at once while the queue is still at least
//!   `dq_thresh` (starting when that packet has been serialized), and the first sample seeds
//!   `avg_rate`.
//! - `oracle`: the capacity the scheduler grants the queue over time, "assuming the prior
//!   knowledge of queue capacities" (TCN §6.1.1), which no switch has:
//!   `C_i = s_i x (C - R_strict)`, where `R_strict` is the rate the queues served before it
//!   by strict priority take (their departures, averaged over `oracle_window`) and `s_i` its
//!   configured weight share among the backlogged queues of its own priority level
//!   (`QueueState::oracle_share`), averaged over the same window. In TCN §6.1.1 (SP/WFQ, a
//!   500 Mbps strict flow, two equal WFQ queues at 1 Gbps) this is 250 Mbps, K_i = 8 KB for
//!   k = 32 KB, at every instant. An earlier version used the share *at the instant* (0
//!   while a strict packet waited, else the share among the queues busy then), which flips
//!   K_i between 0 and 2 x 8 KB and broke WFQ's equal share (queue 2 got 97 Mbps, queue 3
//!   376). Both averages are exponentially weighted in time (weight `e^(-dt/window)`); the
//!   share is sampled at the queue's own enqueues and held in between; before the first
//!   strict departure `R_strict` is 0.
//!
//! Marking is at enqueue, strict `queue_bytes > K_i` with the arriving packet counted, as
//! in DCTCP-RED (REFERENCE-IMPLEMENTATIONS §2.2) ([`Reason::IdealThreshold`]).
//!
//! Deviation: in the paper variant a cycle whose departures all happen at the same instant
//! (possible only when `dq_thresh` is at most one packet) would divide by zero; the cycle
//! then stays open until time has passed. The paper's own samples overestimate a little
//! (the first packet's bytes count but its transmission time does not); this is the
//! algorithm as published, kept on purpose (TCN Fig. 2 shows overestimation).
//!
//! Defaults: k = 97 500 B (65 packets at 10 Gbps, TCN §6.2), dq_thresh = 10 KB (PIE's value,
//! "recommended by \[25\]" in TCN §3.3), eps = 0.875 (TCN §3.3), oracle_window = 10 ms (ours:
//! long against the RTTs of TCN's set-ups, 100-250 us, so one window spans many rounds and
//! strict packets; short against the 0.2 s phases of its static-flow experiment).

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::units::{tx_time_ns, ByteSize, Duration, Nanos, NS_PER_S};
use serde::{Deserialize, Serialize};

/// How ideal ECN/RED learns C_i.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    /// TCN Algorithm 1 (departure-rate measurement, from PIE).
    #[default]
    DepartureRate,
    /// The scheduler's share given the current backlog (`QueueState::oracle_share`).
    Oracle,
}

/// Which reading of Algorithm 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// TCN Algorithm 1 as printed.
    #[default]
    Paper,
    /// baiwei0427/MQ-ECN `prio_dwrr.cc` "PIE marking" (REFERENCE-IMPLEMENTATIONS §2.4).
    #[serde(rename = "baiwei0427")]
    Baiwei0427,
}

/// `[marking.ideal]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IdealParams {
    /// Standard threshold at line rate, C x RTT x lambda; default 97500 B (65 packets at 10 Gbps, TCN §6.2).
    pub k: ByteSize,
    /// Capacity estimator; default `departure_rate` (TCN Algorithm 1).
    pub estimator: Estimator,
    /// Algorithm 1's queue-length threshold and cycle length; default 10 KB (PIE, TCN §3.3).
    pub dq_thresh: ByteSize,
    /// Algorithm 1's averaging parameter epsilon; default 0.875 (TCN §3.3).
    pub eps: f64,
    /// Algorithm 1 as printed (`paper`, default) or as the authors' code does it (`baiwei0427`, REF-IMPL §2.4).
    pub variant: Variant,
    /// Oracle estimator: the time over which it averages what the scheduler grants; default 10 ms.
    pub oracle_window: Duration,
}

impl Default for IdealParams {
    fn default() -> Self {
        IdealParams {
            k: ByteSize(65 * 1500),
            estimator: Estimator::DepartureRate,
            dq_thresh: ByteSize(10_000),
            eps: 0.875,
            variant: Variant::Paper,
            oracle_window: Duration::from_ms(10),
        }
    }
}

/// Algorithm 1's per-queue variables (TCN Table 1).
#[derive(Clone, Copy, Debug, Default)]
struct RateEstimate {
    is_measure: bool,
    dq_count: u64,
    dq_start: Nanos,
    /// Smoothed departure rate (bit/s); `None` before the first sample.
    avg_rate: Option<f64>,
}

/// The oracle's per-queue averages (exponentially weighted in time over `oracle_window`).
#[derive(Clone, Copy, Debug, Default)]
struct Granted {
    /// Departed bits, each weighted by `e^(-age/window)` (as of `dep_at`): rate x window in
    /// the steady state.
    dep_bits: f64,
    dep_at: Nanos,
    /// Time-averaged share within the priority level; `None` before the first enqueue.
    share_avg: Option<f64>,
    /// The share last seen, held until the next enqueue.
    share_held: f64,
    share_at: Nanos,
}

/// `e^(-dt/window)`: the weight of what happened `dt` ago (1 for a clock that went back).
fn decay(dt: Nanos, window: f64) -> f64 {
    (-(dt as f64) / window).exp()
}

/// Ideal ECN/RED on each queue of a port.
#[derive(Clone, Debug)]
pub struct IdealEcn {
    k: f64,
    estimator: Estimator,
    dq_thresh: u64,
    eps: f64,
    variant: Variant,
    link_rate_bps: u64,
    /// Algorithm 1 state per queue (departure-rate estimator).
    rate: Vec<RateEstimate>,
    /// Oracle averaging time (ns).
    window: f64,
    /// Oracle state per queue.
    granted: Vec<Granted>,
    /// Last oracle capacity C_i / C per queue, for [`IdealEcn::capacity_estimate_bps`].
    share: Vec<Option<f64>>,
}

impl IdealEcn {
    pub fn new(p: &IdealParams, ctx: &BuildCtx) -> Result<Self, String> {
        if p.k.0 == 0 {
            return Err("k: must be larger than 0".into());
        }
        if p.dq_thresh.0 == 0 {
            return Err("dq_thresh: must be larger than 0".into());
        }
        if !(0.0..1.0).contains(&p.eps) {
            return Err(format!("eps: {} is not in [0, 1)", p.eps));
        }
        if ctx.link_rate_bps == 0 {
            return Err("link rate must be larger than 0".into());
        }
        if p.oracle_window.0 == 0 {
            return Err("oracle_window: must be larger than 0".into());
        }
        Ok(IdealEcn {
            k: p.k.0 as f64,
            estimator: p.estimator,
            dq_thresh: p.dq_thresh.0,
            eps: p.eps,
            variant: p.variant,
            link_rate_bps: ctx.link_rate_bps,
            rate: vec![RateEstimate::default(); ctx.n_queues],
            window: p.oracle_window.0 as f64,
            granted: vec![Granted::default(); ctx.n_queues],
            share: vec![None; ctx.n_queues],
        })
    }

    /// The current capacity estimate C_i of `queue` (bit/s): Algorithm 1's smoothed rate
    /// (uncapped, as TCN Fig. 2 plots it), or the last oracle share seen times the line
    /// rate. `None` before the first sample.
    pub fn capacity_estimate_bps(&self, queue: usize) -> Option<f64> {
        match self.estimator {
            Estimator::DepartureRate => self.rate[queue].avg_rate,
            Estimator::Oracle => self.share[queue].map(|s| s * self.link_rate_bps as f64),
        }
    }

    /// The threshold K_i of `queue` now (bytes).
    pub fn threshold_bytes(&self, queue: usize) -> f64 {
        match self.capacity_estimate_bps(queue) {
            Some(c) => (c / self.link_rate_bps as f64).clamp(0.0, 1.0) * self.k,
            None => self.k,
        }
    }

    /// The oracle's C_i / C for the queue `q` describes, at `now` (TCN §3.1 with §6.1.1's
    /// "prior knowledge of queue capacities"; see the module doc).
    fn oracle_fraction(&mut self, now: Nanos, q: &QueueState) -> f64 {
        let window = self.window;
        let g = &mut self.granted[q.queue];
        let share = q.oracle_share.clamp(0.0, 1.0);
        g.share_avg = Some(match g.share_avg {
            None => share,
            Some(avg) => {
                let w = decay(now.saturating_sub(g.share_at), window);
                w * avg + (1.0 - w) * g.share_held
            }
        });
        g.share_held = share;
        g.share_at = g.share_at.max(now);
        let strict_bits: f64 = self.granted[..q.strict_above.min(self.granted.len())]
            .iter()
            .map(|h| h.dep_bits * decay(now.saturating_sub(h.dep_at), window))
            .sum();
        let strict_rate = strict_bits * NS_PER_S as f64 / window;
        let left = (1.0 - strict_rate / self.link_rate_bps as f64).clamp(0.0, 1.0);
        self.granted[q.queue].share_avg.unwrap_or(share) * left
    }

    /// The oracle's record of a departure from `queue` (the rate of the strict queues).
    fn oracle_departure(&mut self, now: Nanos, queue: usize, size: u32) {
        let g = &mut self.granted[queue];
        g.dep_bits = g.dep_bits * decay(now.saturating_sub(g.dep_at), self.window) + size as f64 * 8.0;
        g.dep_at = g.dep_at.max(now);
    }

    /// TCN Algorithm 1, upon the departure of `size` bytes leaving `qlen` bytes in the queue.
    fn on_departure(&mut self, now: Nanos, queue: usize, size: u32, qlen: u64) {
        let (thresh, eps, variant, link) = (self.dq_thresh, self.eps, self.variant, self.link_rate_bps);
        let e = &mut self.rate[queue];
        // 1. Decide to be in a measurement cycle.
        if qlen >= thresh && !e.is_measure {
            e.dq_count = 0;
            e.dq_start = now;
            e.is_measure = true;
        }
        // 2. During the measurement cycle.
        if !e.is_measure {
            return;
        }
        e.dq_count += size as u64;
        if e.dq_count < thresh {
            return;
        }
        let end = match variant {
            Variant::Paper => now,
            Variant::Baiwei0427 => now.saturating_add(tx_time_ns(size as u64, link)),
        };
        if end <= e.dq_start {
            return; // no time has passed yet (see the module doc)
        }
        let dq_rate = e.dq_count as f64 * 8.0 * NS_PER_S as f64 / (end - e.dq_start) as f64;
        e.avg_rate = Some(match (variant, e.avg_rate) {
            (Variant::Baiwei0427, None) => dq_rate,
            (Variant::Paper, None) => eps * link as f64 + (1.0 - eps) * dq_rate,
            (_, Some(avg)) => eps * avg + (1.0 - eps) * dq_rate,
        });
        e.is_measure = false;
        if variant == Variant::Baiwei0427 && qlen >= thresh {
            e.is_measure = true;
            e.dq_count = 0;
            e.dq_start = end;
        }
    }
}

impl MarkingScheme for IdealEcn {
    fn on_enqueue(&mut self, now: Nanos, _pkt: PacketView, q: &QueueState) -> Decision {
        if self.estimator == Estimator::Oracle {
            let f = self.oracle_fraction(now, q);
            self.share[q.queue] = Some(f);
        }
        if q.queue_bytes as f64 > self.threshold_bytes(q.queue) {
            Decision::Mark(Reason::IdealThreshold)
        } else {
            Decision::Pass
        }
    }

    fn on_dequeue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState, _sojourn: Nanos) -> Decision {
        match self.estimator {
            Estimator::DepartureRate => self.on_departure(now, q.queue, pkt.size, q.queue_bytes),
            Estimator::Oracle => self.oracle_departure(now, q.queue, pkt.size),
        }
        Decision::Pass
    }

    fn needs_oracle_share(&self) -> bool {
        self.estimator == Estimator::Oracle
    }

    /// Marks at enqueue; both estimators learn from departures at dequeue.
    fn hooks(&self) -> Hooks {
        Hooks::BOTH
    }

    fn reset(&mut self) {
        self.rate.iter_mut().for_each(|e| *e = RateEstimate::default());
        self.granted.iter_mut().for_each(|g| *g = Granted::default());
        self.share.iter_mut().for_each(|s| *s = None);
    }
}

#[cfg(test)]
mod tests {
    use super::super::red::script::*;
    use super::*;
    use crate::rng::Rng;
    use proptest::prelude::*;

    fn ctx(n_queues: usize) -> BuildCtx {
        BuildCtx { n_queues, link_rate_bps: LINK, buffer_bytes: 1_000_000, seed: 0 }
    }

    fn ideal(p: IdealParams) -> IdealEcn {
        IdealEcn::new(&p, &ctx(2)).unwrap()
    }

    /// Algorithm 1 exactly as printed in TCN §3.3, transcribed for the tests.
    #[derive(Default)]
    struct Algorithm1 {
        is_measure: bool,
        dq_count: f64,
        dq_start: f64,
        avg_rate: f64,
    }
    impl Algorithm1 {
        fn departure(&mut self, now: f64, qlen: f64, dq_pktsize: f64, dq_thresh: f64, eps: f64) {
            if qlen >= dq_thresh && !self.is_measure {
                self.dq_count = 0.0;
                self.dq_start = now;
                self.is_measure = true;
            }
            if self.is_measure {
                self.dq_count += dq_pktsize;
                if self.dq_count >= dq_thresh {
                    let dq_rate = self.dq_count * 8e9 / (now - self.dq_start);
                    self.avg_rate = eps * self.avg_rate + (1.0 - eps) * dq_rate;
                    self.is_measure = false;
                }
            }
        }
    }

    /// Queue 0 of a two-queue port served in rounds: `burst` back-to-back 1500 B packets at
    /// line rate, then a gap in which the other queue sends as much. Queue 0 stays
    /// backlogged with `backlog` bytes (its sender keeps it full), so its departure rate is
    /// half the link. Returns (time, queue bytes after departure) per departure.
    fn half_rate_departures(n: usize, burst: usize, backlog: u64) -> Vec<(Nanos, u64)> {
        let tx = tx_time_ns(1500, LINK);
        (0..n).map(|i| (((i / burst) * 2 * burst + i % burst) as u64 * tx, backlog)).collect()
    }

    fn run_estimator(s: &mut IdealEcn, deps: &[(Nanos, u64)]) -> Vec<f64> {
        deps.iter()
            .map(|&(t, qlen)| {
                let q = QueueState { n_queues: 2, ..qs(qlen) };
                assert_eq!(s.on_dequeue(t, pkt(1500, true), &q, 0), Decision::Pass);
                s.capacity_estimate_bps(0).unwrap_or(f64::NAN)
            })
            .collect()
    }

    #[test]
    fn paper_variant_matches_algorithm_1() {
        let mut s = ideal(IdealParams::default());
        let mut reference = Algorithm1 { avg_rate: LINK as f64, ..Default::default() };
        let mut r = Rng::new(5);
        let (mut t, mut qlen) = (0u64, 0u64);
        for _ in 0..5000 {
            t += 1200 + r.below(3000);
            qlen = (qlen + r.below(4) * 1500).saturating_sub(1500).min(60_000);
            s.on_dequeue(t, pkt(1500, true), &QueueState { n_queues: 2, ..qs(qlen) }, 0);
            reference.departure(t as f64, qlen as f64, 1500.0, 10_000.0, 0.875);
            let got = s.capacity_estimate_bps(0).unwrap_or(LINK as f64);
            assert!((got - reference.avg_rate).abs() < 1e-3, "t {t}: {got} vs {}", reference.avg_rate);
        }
    }

    #[test]
    fn variants_differ_as_documented() {
        // Back-to-back 1500 B departures at 10 Gbps with a standing queue; dq_thresh 10 KB
        // closes a cycle on its 7th packet (10.5 KB).
        let tx = tx_time_ns(1500, LINK);
        let deps: Vec<(Nanos, u64)> = (0..14).map(|i| (i * tx, 50_000)).collect();
        let paper = run_estimator(&mut ideal(IdealParams::default()), &deps);
        let code = run_estimator(&mut ideal(IdealParams { variant: Variant::Baiwei0427, ..Default::default() }), &deps);
        assert!(paper[5].is_nan() && code[5].is_nan(), "no sample before the 7th departure");
        // Paper: 7 packets over 6 transmission times, averaged with the initial C.
        let first = 0.875 * 1e10 + 0.125 * (7.0 / 6.0 * 1e10);
        assert!((paper[6] - first).abs() < 1.0, "{}", paper[6]);
        // Code: the last packet's transmission time counts, and the first sample seeds avg.
        assert!((code[6] - 1e10).abs() < 1.0, "{}", code[6]);
        // Paper: the next cycle opens at the 8th departure, so its first packet's time is
        // lost again; code: it re-armed at the end of the 7th packet: exact again.
        assert!((paper[13] - (0.875 * first + 0.125 * (7.0 / 6.0 * 1e10))).abs() < 1.0);
        assert!((code[13] - 1e10).abs() < 1.0);
    }

    #[test]
    fn converges_to_the_departure_rate() {
        // Rounds of 12 packets (18 KB, TCN Fig. 2's quantum) alternate with the other queue.
        let deps = half_rate_departures(20_000, 12, 100_000);
        for variant in [Variant::Paper, Variant::Baiwei0427] {
            // dq_thresh = 40 KB spans more than a round: samples close to 5 Gbps.
            let mut s = ideal(IdealParams { dq_thresh: ByteSize(40_000), variant, ..Default::default() });
            let est = *run_estimator(&mut s, &deps).last().unwrap();
            assert!((est - 5e9).abs() < 0.1 * 5e9, "{variant:?}: {est}");
            let k = s.threshold_bytes(0);
            assert!((k - 97_500.0 / 2.0).abs() < 0.1 * 97_500.0 / 2.0, "{variant:?}: K_i = {k}");
        }
        // With dq_thresh = 10 KB, below the 18 KB quantum, samples are either within a round
        // (line rate) or span a gap: the estimate stays well above 5 Gbps (TCN Fig. 2b).
        let mut s =
            ideal(IdealParams { dq_thresh: ByteSize(10_000), variant: Variant::Baiwei0427, ..Default::default() });
        let est = run_estimator(&mut s, &deps);
        let tail = &est[10_000..];
        assert!(tail.iter().all(|&e| e > 5.5e9), "10 KB overestimates");
    }

    #[test]
    fn larger_dq_thresh_converges_slower() {
        // Queue 0 alone at line rate, then (from departure 2000 on) sharing the link.
        let tx = tx_time_ns(1500, LINK);
        let mut deps: Vec<(Nanos, u64)> = (0..2000).map(|i| (i * tx, 100_000)).collect();
        let t0 = 2000 * tx;
        deps.extend(half_rate_departures(20_000, 12, 100_000).into_iter().map(|(t, q)| (t0 + t, q)));
        let estimates = |thresh: u64| {
            let mut s =
                ideal(IdealParams { dq_thresh: ByteSize(thresh), variant: Variant::Baiwei0427, ..Default::default() });
            let est = run_estimator(&mut s, &deps);
            assert!((est[1999] - 1e10).abs() < 1e8, "{thresh}: line rate first ({})", est[1999]);
            est
        };
        // Time after the change until the estimate first drops below 7 Gbps (reaction) and
        // until it stays within 10 % of 5 Gbps (convergence).
        let react = |est: &[f64]| deps[est.iter().position(|&e| e < 7e9).unwrap()].0 - t0;
        let settle = |est: &[f64]| deps[est.iter().rposition(|e| (e - 5e9).abs() > 0.1 * 5e9).unwrap()].0 - t0;
        let (e10, e20, e40) = (estimates(10_000), estimates(20_000), estimates(40_000));
        assert!(react(&e40) > 2 * react(&e10), "40 KB reacts in {} ns, 10 KB in {} ns", react(&e40), react(&e10));
        assert!(settle(&e40) > settle(&e20), "40 KB settles in {} ns, 20 KB in {} ns", settle(&e40), settle(&e20));
        // ~18 samples of dq_thresh bytes at 5 Gbps bring 1 - eps^n below 10 %: about 1.2 ms.
        assert!(settle(&e40) > 800_000, "{}", settle(&e40));
    }

    #[test]
    fn marks_above_k_i_at_enqueue_only() {
        let mut s = ideal(IdealParams { dq_thresh: ByteSize(40_000), ..Default::default() });
        let q = |b: u64| QueueState { n_queues: 2, ..qs(b) };
        // Before any sample K_i = k.
        assert_eq!(s.capacity_estimate_bps(0), None);
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &q(97_500)), Decision::Pass);
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &q(97_501)), Decision::Mark(Reason::IdealThreshold));
        assert_eq!(s.on_dequeue(0, pkt(1500, true), &q(200_000), 0), Decision::Pass);
        // Half-rate samples lower K_i towards k / 2.
        run_estimator(&mut s, &half_rate_departures(20_000, 12, 100_000));
        let k_i = s.threshold_bytes(0);
        assert!(k_i < 60_000.0, "{k_i}");
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &q(k_i as u64 + 1)), Decision::Mark(Reason::IdealThreshold));
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &q(k_i as u64 - 1)), Decision::Pass);
        // Queue 1 has no estimate of its own.
        assert_eq!(s.threshold_bytes(1), 97_500.0);
        s.reset();
        assert_eq!(s.capacity_estimate_bps(0), None);
    }

    #[test]
    fn oracle_uses_oracle_share() {
        let mut s = ideal(IdealParams { estimator: Estimator::Oracle, ..Default::default() });
        assert!(s.needs_oracle_share());
        assert!(!ideal(IdealParams::default()).needs_oracle_share());
        let q = |b: u64, share: f64| QueueState { n_queues: 2, oracle_share: share, ..qs(b) };
        // No strict queue above: C_i is the share, as long as it holds.
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &q(30_000, 0.25)), Decision::Mark(Reason::IdealThreshold));
        assert_eq!(s.capacity_estimate_bps(0), Some(2.5e9));
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &q(24_375, 0.25)), Decision::Pass);
        // A share that changes moves the average over the window, not at once: after one
        // window at 0.5 the average is 0.5 - 0.25 / e.
        let w = 10_000_000;
        s.on_enqueue(0, pkt(1500, true), &q(0, 0.5));
        s.on_enqueue(w, pkt(1500, true), &q(0, 0.5));
        let avg = 0.5 - 0.25 * (-1f64).exp();
        assert!((s.capacity_estimate_bps(0).unwrap() - avg * 1e10).abs() < 1.0);
        let k_i = avg * 97_500.0;
        assert_eq!(s.on_enqueue(w, pkt(1500, true), &q(k_i as u64 + 1, 0.5)), Decision::Mark(Reason::IdealThreshold));
        assert_eq!(s.on_enqueue(w, pkt(1500, true), &q(k_i as u64 - 1, 0.5)), Decision::Pass);
        // Departures of a queue with nothing strict above it do not lower its capacity.
        s.on_dequeue(w, pkt(1500, true), &q(100_000, 0.5), 0);
        assert_eq!(s.on_enqueue(w, pkt(1500, true), &q(0, 0.5)), Decision::Pass);
        assert!((s.capacity_estimate_bps(0).unwrap() - avg * 1e10).abs() < 1.0);
    }

    /// TCN §6.1.1 (Fig. 5): SP/WFQ at 1 Gbps, a 500 Mbps flow in strict queue 0, queues 1
    /// and 2 WFQ with equal weights, k = 32 KB: "ideal ECN/RED ... 8 KB". The strict
    /// queue holds a packet only part of the time; queue 2's peer empties now and then.
    /// The oracle gives queue 2 what the scheduler grants over time, so K_2 stays near
    /// 8 KB; a per-instant share would flip it between 0 and 16 KB.
    #[test]
    fn oracle_gives_the_capacity_granted_over_time() {
        let link = 1_000_000_000;
        let ctx = BuildCtx { n_queues: 3, link_rate_bps: link, buffer_bytes: 96_000, seed: 0 };
        let p = IdealParams { k: ByteSize(32_000), estimator: Estimator::Oracle, ..Default::default() };
        let mut s = IdealEcn::new(&p, &ctx).unwrap();
        let view = |queue: usize, share: f64| QueueState {
            queue,
            n_queues: 3,
            link_rate_bps: link,
            oracle_share: share,
            strict_above: queue.min(1),
            ..qs(20_000)
        };
        let tx = tx_time_ns(1500, link); // 12 us
        let mut r = Rng::new(3);
        let (mut ks, mut t) = (Vec::new(), 0);
        // 1500 B strict packets every 24 us (500 Mbps); between them queue 2 gets an
        // enqueue, with its peer empty (share 1.0) one time in ten.
        for i in 0..20_000u64 {
            t = i * 2 * tx;
            s.on_dequeue(t, pkt(1500, true), &view(0, 1.0), 0);
            let share = if r.below(10) == 0 { 1.0 } else { 0.5 };
            s.on_enqueue(t + tx / 2, pkt(1500, true), &view(2, share));
            if t > 50_000_000 {
                ks.push(s.threshold_bytes(2));
            }
        }
        let (lo, hi) = ks.iter().fold((f64::MAX, 0f64), |(a, b), &k| (a.min(k), b.max(k)));
        // Share 0.55 on average of the 500 Mbps left: 275 Mbps, K = 8.8 KB.
        assert!(lo > 0.95 * 8_800.0 && hi < 1.05 * 8_800.0, "K_2 in [{lo}, {hi}]");
        assert!((s.capacity_estimate_bps(2).unwrap() - 275e6).abs() < 0.05 * 275e6);
        // The strict queue itself has nothing above it: all of the link.
        s.on_enqueue(t, pkt(1500, true), &view(0, 1.0));
        assert_eq!(s.threshold_bytes(0), 32_000.0);
    }

    #[test]
    fn validation_and_params() {
        let bad = |p: IdealParams| IdealEcn::new(&p, &ctx(1)).err().unwrap();
        assert!(bad(IdealParams { k: ByteSize(0), ..Default::default() }).starts_with("k:"));
        assert!(bad(IdealParams { dq_thresh: ByteSize(0), ..Default::default() }).starts_with("dq_thresh:"));
        assert!(bad(IdealParams { eps: 1.0, ..Default::default() }).starts_with("eps:"));
        assert!(bad(IdealParams { oracle_window: Duration(0), ..Default::default() }).starts_with("oracle_window:"));
        let p: IdealParams =
            serde_json::from_str(r#"{"estimator": "oracle", "variant": "baiwei0427", "dq_thresh": "40KB"}"#).unwrap();
        assert_eq!(
            (p.estimator, p.variant, p.dq_thresh.0, p.eps),
            (Estimator::Oracle, Variant::Baiwei0427, 40_000, 0.875)
        );
    }

    proptest! {
        #[test]
        fn no_panic_and_k_i_within_0_k(ops in proptest::collection::vec(
                                           (0u64..5000, any::<bool>(), 64u32..9000, 0u64..200_000), 1..300),
                                       thresh in 1u64..50_000, baiwei in any::<bool>()) {
            let variant = if baiwei { Variant::Baiwei0427 } else { Variant::Paper };
            let mut s = ideal(IdealParams { dq_thresh: ByteSize(thresh), variant, ..Default::default() });
            let mut t = 0;
            for (dt, enq, size, qlen) in ops {
                t += dt;
                let q = QueueState { n_queues: 2, ..qs(qlen) };
                if enq {
                    let d = s.on_enqueue(t, pkt(size, true), &q);
                    let k_i = s.threshold_bytes(0);
                    prop_assert!((0.0..=97_500.0).contains(&k_i));
                    prop_assert_eq!(d != Decision::Pass, qlen as f64 > k_i);
                } else {
                    prop_assert_eq!(s.on_dequeue(t, pkt(size, true), &q, 0), Decision::Pass);
                    if let Some(c) = s.capacity_estimate_bps(0) { prop_assert!(c.is_finite() && c > 0.0); }
                }
            }
        }
    }
}
