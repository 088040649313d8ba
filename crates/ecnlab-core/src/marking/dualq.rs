//! Dual AQM (Kühlewind, Wagner, Espinosa, Briscoe, "Using Data Center TCP (DCTCP) in the
//! Internet", 2014, §III-C): one shared FIFO, two differently parameterized RED instances
//! on its length. Packets are classified by ECN capability alone: ECT packets (DCTCP) are
//! judged by the `scalable` instance and *marked* ([`Reason::DualqScalable`]); non-ECT
//! packets (Reno) by the `classic` instance and *dropped* ([`Reason::DualqClassic`]).
//!
//! Each instance is classic RED ([`super::red`], Floyd & Jacobson) with its own `min_th`,
//! `max_th`, `max_p` and EWMA weight `w`, on the queue the arriving packet finds. Both
//! averages are updated at every arrival, whatever its class: they average the same queue,
//! only with different weights; the count since the last mark is per instance and advances
//! only on the packets that instance judges. Gentle mode is off (not in the paper).
//!
//! The two configurations of the scalable instance (§IV, Fig. 3):
//! - step (§II-A, §IV-B): `w = 1`, `min_th = max_th = K` ([`RedInstanceParams::step`]): every
//!   ECT packet that finds at least K bytes queued is marked (= DCTCP-RED's "queue including
//!   the arrival > K" for equal-size packets; see [`super::red`]);
//! - slope (§IV-C): an ordinary RED with `min_th < max_th`.
//!
//! The paper's single FIFO is a one-queue port; with several queues each queue runs its
//! own pair of instances.
//!
//! Defaults: the classic instance uses §IV-A's values (w = 0.002, max_p = 0.1, max_th =
//! 3 min_th, after Floyd's RED guidelines) with min_th = BDP/4 of the paper's scenario
//! (10 Mbps x 25 ms = 31 250 B), and the scalable instance is the step with the equal-
//! sharing K of Table I for that row (K = 1.73 min_th). Scenarios set their own.

use super::red::{RedCfg, RedVars, RedVerdict};
use super::{BuildCtx, Decision, MarkingScheme, PacketView, QueueState, Reason};
use crate::rng::Rng;
use crate::units::{ByteSize, Nanos};
use serde::{Deserialize, Serialize};

/// One RED instance of the dual AQM (`[marking.dualq.scalable]`, `[marking.dualq.classic]`).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RedInstanceParams {
    /// Minimum threshold (MinThresh) on the average queue; default 7812 B (BDP/4, dual AQM §IV-A/B).
    pub min_th: ByteSize,
    /// Maximum threshold (MaxThresh); default 23436 B (3 min_th, dual AQM §IV-A).
    pub max_th: ByteSize,
    /// Marking/dropping probability at max_th (MaxProb); default 0.1 (dual AQM §IV-A). Above 1
    /// is accepted and the probability capped at 1 (§IV-C's equal sharing gives such values).
    pub max_p: f64,
    /// EWMA weight of the average queue; default 0.002 (dual AQM §IV-A).
    pub w: f64,
}

impl Default for RedInstanceParams {
    /// §IV-A's Reno instance for min_th = BDP/4.
    fn default() -> Self {
        RedInstanceParams { min_th: ByteSize(7812), max_th: ByteSize(3 * 7812), max_p: 0.1, w: 0.002 }
    }
}

impl RedInstanceParams {
    /// DCTCP's step: w = 1, min_th = max_th = K (dual AQM §II-A, §IV-B); max_p is unused.
    pub fn step(k: ByteSize) -> Self {
        RedInstanceParams { min_th: k, max_th: k, max_p: 1.0, w: 1.0 }
    }
}

/// The scalable instance's default: DCTCP's step at K = 13515 B (1.73 x BDP/4, Table I).
const SCALABLE_K: ByteSize = ByteSize(13_515);

/// `[marking.dualq.scalable]` as a scenario writes it: the scalable instance's fields, each
/// defaulting to the step's value, so that the instance has one default whether its table is
/// left out or written in part (a field left out of a written table used to take the
/// classic instance's value: w = 0.002 under a step's thresholds).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
struct ScalableTable {
    /// Minimum threshold (MinThresh) on the average queue; default 13515 B (the step's K, 1.73 x BDP/4, Table I).
    min_th: ByteSize,
    /// Maximum threshold (MaxThresh); default 13515 B (= min_th: a step).
    max_th: ByteSize,
    /// Marking probability at max_th (MaxProb); default 1 (unused by a step).
    max_p: f64,
    /// EWMA weight of the average queue; default 1 (the instantaneous queue, as DCTCP).
    w: f64,
}

impl Default for ScalableTable {
    fn default() -> Self {
        let s = RedInstanceParams::step(SCALABLE_K);
        ScalableTable { min_th: s.min_th, max_th: s.max_th, max_p: s.max_p, w: s.w }
    }
}

fn scalable_table<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RedInstanceParams, D::Error> {
    let t = ScalableTable::deserialize(d)?;
    Ok(RedInstanceParams { min_th: t.min_th, max_th: t.max_th, max_p: t.max_p, w: t.w })
}

/// `[marking.dualq]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DualAqmParams {
    /// RED instance for ECT traffic, which it marks; default step K = 13515 B (1.73 x BDP/4, Table I).
    #[serde(deserialize_with = "scalable_table")]
    #[schemars(with = "ScalableTable")]
    pub scalable: RedInstanceParams,
    /// RED for non-ECT traffic (dropped); default min_th BDP/4, max_th 3 min_th, max_p 0.1, w 0.002 (§IV-A).
    pub classic: RedInstanceParams,
    /// Typical packet size for RED's idle-time decay of the averages; default 1500 B (F&J; ns-2 mean_pktsize_).
    pub mean_pkt_size: ByteSize,
}

impl Default for DualAqmParams {
    fn default() -> Self {
        DualAqmParams {
            scalable: RedInstanceParams::step(SCALABLE_K),
            classic: RedInstanceParams::default(),
            mean_pkt_size: ByteSize(1500),
        }
    }
}

impl DualAqmParams {
    /// §IV-C "Equal Sharing Configurations" (Fig. 10), for a given `min_th_reno` and
    /// bandwidth-delay product: max_p_Reno = 0.1 / (min_th_Reno / BDP), max_p_DCTCP =
    /// 0.2 / (min_th_Reno / BDP), min_th_DCTCP = min_th_Reno / 2 (x = 2, so Eq. 3 holds),
    /// max_th_Reno = 3 min_th_Reno (§IV-A), w = 0.002 for both (§IV-C). The paper keeps the
    /// DCTCP slope's width equal to Reno's ("the same distance between the thresholds"), so
    /// max_th_DCTCP = min_th_DCTCP + 2 min_th_Reno. max_p may exceed 1 for min_th_Reno
    /// below 0.2 BDP; RED then caps the probability at 1.
    pub fn equal_sharing(min_th_reno: ByteSize, bdp: ByteSize) -> DualAqmParams {
        let m = min_th_reno.0;
        let rel = m as f64 / bdp.0.max(1) as f64;
        DualAqmParams {
            scalable: RedInstanceParams {
                min_th: ByteSize(m / 2),
                max_th: ByteSize(m / 2 + 2 * m),
                max_p: 0.2 / rel,
                w: 0.002,
            },
            classic: RedInstanceParams { min_th: ByteSize(m), max_th: ByteSize(3 * m), max_p: 0.1 / rel, w: 0.002 },
            mean_pkt_size: ByteSize(1500),
        }
    }
}

/// Dual AQM Eq. 3 (§IV-C, Fig. 9): the ratio MinThresh_Reno / MinThresh_DCTCP that gives
/// equal sharing, `x / (x - 1)` with `x = MaxProb_DCTCP / MaxProb_Reno`. Only `x > 1` has an
/// equal-sharing point (with x <= 1 DCTCP gets no more feedback than Reno and, reacting
/// less to each mark, takes more: §IV-C, Fig. 7 at min_th_DCTCP = BDP): returns infinity then.
pub fn equal_sharing_min_th_ratio(max_p_dctcp: f64, max_p_reno: f64) -> f64 {
    let x = max_p_dctcp / max_p_reno;
    if x.is_infinite() {
        1.0
    } else if x > 1.0 {
        x / (x - 1.0)
    } else {
        f64::INFINITY
    }
}

/// The MinThresh_DCTCP that Eq. 3 (§IV-C) pairs with `min_th_reno` for the given MaxProbs.
pub fn equal_sharing_min_th_dctcp(min_th_reno: ByteSize, max_p_dctcp: f64, max_p_reno: f64) -> ByteSize {
    ByteSize((min_th_reno.0 as f64 / equal_sharing_min_th_ratio(max_p_dctcp, max_p_reno)).round() as u64)
}

/// The dual AQM on each queue of a port.
#[derive(Clone, Debug)]
pub struct DualAqm {
    scalable: RedCfg,
    classic: RedCfg,
    link_rate_bps: u64,
    seed: u64,
    rng: Rng,
    /// (scalable, classic) RED state per queue.
    vars: Vec<(RedVars, RedVars)>,
}

impl DualAqm {
    pub fn new(p: &DualAqmParams, ctx: &BuildCtx) -> Result<Self, String> {
        let inst = |i: &RedInstanceParams, name: &str| {
            RedCfg::new(i.min_th, i.max_th, i.max_p, i.w, false, p.mean_pkt_size, ctx.link_rate_bps).map_err(|e| {
                if e.starts_with("mean_pkt_size") || e.starts_with("link") {
                    e
                } else {
                    format!("{name}.{e}")
                }
            })
        };
        Ok(DualAqm {
            scalable: inst(&p.scalable, "scalable")?,
            classic: inst(&p.classic, "classic")?,
            link_rate_bps: ctx.link_rate_bps,
            seed: ctx.seed,
            rng: Rng::new(ctx.seed),
            vars: vec![(RedVars::default(), RedVars::default()); ctx.n_queues],
        })
    }

    /// Average queue lengths (bytes) of `queue` as the (scalable, classic) instances see them.
    pub fn avg_queue_bytes(&self, queue: usize) -> (f64, f64) {
        let (s, c) = &self.vars[queue];
        (s.avg, c.avg)
    }
}

impl MarkingScheme for DualAqm {
    fn on_enqueue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState) -> Decision {
        let (s, c) = &mut self.vars[q.queue];
        let found = q.queue_bytes.saturating_sub(pkt.size as u64);
        self.scalable.update_avg(s, now, found);
        self.classic.update_avg(c, now, found);
        if pkt.ect {
            match self.scalable.decide(s, &mut self.rng) {
                RedVerdict::Pass => Decision::Pass,
                _ => Decision::Mark(Reason::DualqScalable),
            }
        } else {
            match self.classic.decide(c, &mut self.rng) {
                RedVerdict::Pass => Decision::Pass,
                _ => Decision::Drop(Reason::DualqClassic),
            }
        }
    }

    fn on_dequeue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState, _sojourn: Nanos) -> Decision {
        if q.queue_bytes == 0 {
            let (s, c) = &mut self.vars[q.queue];
            RedCfg::queue_emptied(s, now, pkt.size, self.link_rate_bps);
            RedCfg::queue_emptied(c, now, pkt.size, self.link_rate_bps);
        }
        Decision::Pass
    }

    fn reset(&mut self) {
        self.vars.iter_mut().for_each(|v| *v = (RedVars::default(), RedVars::default()));
        self.rng = Rng::new(self.seed);
    }
}

#[cfg(test)]
mod tests {
    use super::super::red::script::*;
    use super::super::threshold::{ThresholdEcn, ThresholdParams};
    use super::*;
    use proptest::prelude::*;

    fn ctx() -> BuildCtx {
        BuildCtx { n_queues: 1, link_rate_bps: 10_000_000, buffer_bytes: 1_000_000, seed: 3 }
    }

    fn dual(p: DualAqmParams) -> DualAqm {
        DualAqm::new(&p, &ctx()).unwrap()
    }

    #[test]
    fn step_marks_ect_like_a_threshold() {
        // K = 20 packets; classic instance never fires (huge thresholds).
        let p = DualAqmParams {
            scalable: RedInstanceParams::step(ByteSize(30_000)),
            classic: RedInstanceParams {
                min_th: ByteSize(1_000_000),
                max_th: ByteSize(2_000_000),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut s = dual(p);
        let mut t = ThresholdEcn::new(&ThresholdParams { k: ByteSize(30_000), ..Default::default() }, &ctx()).unwrap();
        // Up to 40 packets and back down to empty, then up again.
        let ops: Vec<(Nanos, bool)> = (0..40)
            .map(|i| (i, true))
            .chain((40..80).map(|i| (i, false)))
            .chain((80..120).map(|i| (i, true)))
            .collect();
        let evs = fifo_trace(&ops, 1500);
        let got = run(&mut s, &evs);
        let want = run(&mut t, &evs);
        let as_marks = |d: &[Decision]| d.iter().map(|x| *x != Decision::Pass).collect::<Vec<_>>();
        assert_eq!(as_marks(&got), as_marks(&want));
        assert!(got.iter().all(|d| matches!(d, Decision::Pass | Decision::Mark(Reason::DualqScalable))));
        assert_eq!(got.iter().filter(|d| **d != Decision::Pass).count(), 2 * 20);
    }

    #[test]
    fn ect_marked_by_scalable_non_ect_dropped_by_classic() {
        // Both as steps, at different K: 10 KB for ECT, 40 KB for non-ECT.
        let p = DualAqmParams {
            scalable: RedInstanceParams::step(ByteSize(10_000)),
            classic: RedInstanceParams::step(ByteSize(40_000)),
            ..Default::default()
        };
        let mut s = dual(p);
        let arrive = |s: &mut DualAqm, found: u64, ect: bool| s.on_enqueue(0, pkt(1500, ect), &qs(found + 1500));
        assert_eq!(arrive(&mut s, 9_999, true), Decision::Pass);
        assert_eq!(arrive(&mut s, 10_000, true), Decision::Mark(Reason::DualqScalable));
        assert_eq!(arrive(&mut s, 10_000, false), Decision::Pass);
        assert_eq!(arrive(&mut s, 39_999, false), Decision::Pass);
        assert_eq!(arrive(&mut s, 40_000, false), Decision::Drop(Reason::DualqClassic));
        assert_eq!(arrive(&mut s, 40_000, true), Decision::Mark(Reason::DualqScalable));
        assert_eq!(s.on_dequeue(0, pkt(1500, true), &qs(100_000), 0), Decision::Pass);
    }

    #[test]
    fn averages_with_own_weights_on_every_arrival() {
        let mut s = dual(DualAqmParams::default()); // scalable w = 1, classic w = 0.002
        s.on_enqueue(0, pkt(1500, false), &qs(10_000 + 1500));
        s.on_enqueue(1, pkt(1500, true), &qs(20_000 + 1500));
        let (a_s, a_c) = s.avg_queue_bytes(0);
        assert_eq!(a_s, 20_000.0);
        let want = 0.998 * (0.002 * 10_000.0) + 0.002 * 20_000.0;
        assert!((a_c - want).abs() < 1e-9, "{a_c} vs {want}");
        s.reset();
        assert_eq!(s.avg_queue_bytes(0), (0.0, 0.0));
    }

    #[test]
    fn classic_slope_drops_in_proportion() {
        // w = 1 to pin avg; avg in the middle of [min_th, max_th): p_b = max_p / 2.
        let classic = RedInstanceParams { min_th: ByteSize(10_000), max_th: ByteSize(30_000), max_p: 0.2, w: 1.0 };
        let mut s = dual(DualAqmParams { classic, ..Default::default() });
        let n = 50_000;
        let drops = (0..n).filter(|_| s.on_enqueue(0, pkt(1500, false), &qs(20_000 + 1500)) != Decision::Pass).count();
        let f = drops as f64 / n as f64;
        let want = spread_rate(0.1); // F&J count spreading, about 2 p_b
        assert!((f - want).abs() < 0.1 * want, "{f} vs {want}");
    }

    #[test]
    fn equal_sharing_rule() {
        assert_eq!(equal_sharing_min_th_ratio(0.2, 0.1), 2.0);
        assert!((equal_sharing_min_th_ratio(0.3, 0.1) - 1.5).abs() < 1e-12);
        assert!((equal_sharing_min_th_ratio(0.5, 0.1) - 1.25).abs() < 1e-12);
        assert_eq!(equal_sharing_min_th_ratio(0.1, 0.1), f64::INFINITY);
        assert_eq!(equal_sharing_min_th_ratio(0.05, 0.1), f64::INFINITY);
        assert_eq!(equal_sharing_min_th_ratio(0.1, 0.0), 1.0);
        assert_eq!(equal_sharing_min_th_dctcp(ByteSize(31_250), 0.4, 0.1), ByteSize(23_438));
        // Fig. 10's configurations satisfy Eq. 3.
        let bdp = ByteSize(31_250);
        for m in [0.1, 0.3, 0.5, 1.0] {
            let p = DualAqmParams::equal_sharing(ByteSize((m * 31_250.0) as u64), bdp);
            assert!((p.classic.max_p - 0.1 / m).abs() < 1e-3 && (p.scalable.max_p - 0.2 / m).abs() < 1e-3);
            let ratio = p.classic.min_th.0 as f64 / p.scalable.min_th.0 as f64;
            assert!((ratio - equal_sharing_min_th_ratio(p.scalable.max_p, p.classic.max_p)).abs() < 0.01, "{m}");
            assert_eq!(p.classic.max_th.0, 3 * p.classic.min_th.0);
            assert!(DualAqm::new(&p, &ctx()).is_ok());
        }
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |p: DualAqmParams| DualAqm::new(&p, &ctx()).err().unwrap();
        let e =
            bad(DualAqmParams { scalable: RedInstanceParams { w: 0.0, ..Default::default() }, ..Default::default() });
        assert!(e.starts_with("scalable.w:"), "{e}");
        let e = bad(DualAqmParams {
            classic: RedInstanceParams { min_th: ByteSize(10), max_th: ByteSize(5), ..Default::default() },
            ..Default::default()
        });
        assert!(e.starts_with("classic.min_th:"), "{e}");
        assert!(bad(DualAqmParams { mean_pkt_size: ByteSize(0), ..Default::default() }).starts_with("mean_pkt_size:"));
        let p: DualAqmParams = serde_json::from_str(
            r#"{"scalable": {"min_th": "15KB", "max_th": "15KB", "w": 1}, "classic": {"min_th": "3906B"}}"#,
        )
        .unwrap();
        assert_eq!((p.scalable.min_th.0, p.scalable.w, p.classic.min_th.0, p.classic.max_p), (15_000, 1.0, 3906, 0.1));
        assert!(serde_json::from_str::<DualAqmParams>(r#"{"scalable": {"K": 1}}"#).is_err());
        // One default for the scalable instance: the step, whether its table is left out,
        // written empty, or written in part (a field left out keeps the step's value).
        let step = RedInstanceParams::step(ByteSize(13_515));
        let key = |r: &RedInstanceParams| (r.min_th.0, r.max_th.0, r.max_p, r.w);
        for text in [r#"{}"#, r#"{"scalable": {}}"#] {
            let p: DualAqmParams = serde_json::from_str(text).unwrap();
            assert_eq!(key(&p.scalable), key(&step), "{text}");
            assert_eq!(key(&p.scalable), key(&DualAqmParams::default().scalable));
        }
        let p: DualAqmParams = serde_json::from_str(r#"{"scalable": {"min_th": "20KB", "max_th": "20KB"}}"#).unwrap();
        assert_eq!(key(&p.scalable), (20_000, 20_000, 1.0, 1.0));
        // The classic instance keeps its own (§IV-A) defaults.
        let p: DualAqmParams = serde_json::from_str(r#"{"classic": {"min_th": "5KB"}}"#).unwrap();
        assert_eq!(key(&p.classic), (5_000, 23_436, 0.1, 0.002));
    }

    proptest! {
        #[test]
        fn marks_only_ect_drops_only_non_ect(ops in proptest::collection::vec(
                                                 (0u64..100_000, any::<bool>(), any::<bool>(), 40u32..1500), 1..400),
                                            seed in any::<u64>()) {
            let p = DualAqmParams::equal_sharing(ByteSize(7812), ByteSize(31_250));
            let mut s = DualAqm::new(&p, &BuildCtx { seed, ..ctx() }).unwrap();
            let (mut t, mut bytes) = (0, 0u64);
            for (dt, arrive, ect, size) in ops {
                t += dt;
                if arrive {
                    bytes += size as u64;
                    match s.on_enqueue(t, pkt(size, ect), &qs(bytes)) {
                        Decision::Pass => {}
                        Decision::Mark(r) => prop_assert!(ect && r == Reason::DualqScalable),
                        Decision::Drop(r) => { prop_assert!(!ect && r == Reason::DualqClassic); bytes -= size as u64; }
                    }
                    let (a, b) = s.avg_queue_bytes(0);
                    prop_assert!(a.is_finite() && b.is_finite() && a >= 0.0 && b >= 0.0);
                } else {
                    let size = size.min(bytes as u32);
                    bytes -= size as u64;
                    prop_assert_eq!(s.on_dequeue(t, pkt(size, true), &qs(bytes), 0), Decision::Pass);
                }
            }
        }
    }
}
