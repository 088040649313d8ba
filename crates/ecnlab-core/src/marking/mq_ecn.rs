//! MQ-ECN (Bai et al., NSDI'16; summarized in TCN §3.3): per-queue DCTCP-RED whose
//! threshold follows the capacity a round-robin scheduler gives the queue,
//! `K_i = min(quantum_i / T_round / C, 1) x k`, where `quantum_i / T_round` is the queue's
//! rate in one round (TCN §3.3) and `k = C x RTT x lambda` is the standard threshold
//! (TCN Eq. 1), so that `K_i = C_i x RTT x lambda` (TCN Eq. 2), capped at `k`.
//!
//! This module only reads `QueueState::quantum` and `QueueState::round_time_ns`: the round
//! time T_round (its samples, EWMA beta = 0.75 and T_idle decay; REFERENCE-IMPLEMENTATIONS
//! §2.3) is kept by the DWRR/WRR scheduler, because its samples are scheduler events.
//! Queues the round robin does not serve (strict-priority queues of SP/DWRR: `quantum` is
//! `None`) keep the static `k`, as in the authors' ns-2 code; so does every queue while
//! T_round is unknown or below 1 ns (ns-2: `K_i = port_thresh_` when T_round < 1 ns).
//!
//! Marking is at enqueue, strict `queue_bytes > K_i` with the arriving packet counted
//! (REFERENCE-IMPLEMENTATIONS §2.2, §2.3) ([`Reason::MqEcnThreshold`]). The rate is computed
//! exactly (quantum x 8 / T_round), not with the Linux module's 2^30 approximation.
//!
//! Default k = 97 500 B (65 packets at 10 Gbps, TCN §6.2 and the MQ-ECN ns-2 scripts).

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::units::{ByteSize, Nanos, NS_PER_S};
use serde::{Deserialize, Serialize};

/// `[marking.mq_ecn]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MqEcnParams {
    /// Standard threshold C x RTT x lambda (strict queues' K); default 97500 B (65 packets at 10 Gbps, TCN §6.2).
    pub k: ByteSize,
}

impl Default for MqEcnParams {
    fn default() -> Self {
        MqEcnParams { k: ByteSize(65 * 1500) }
    }
}

/// The capacity MQ-ECN implies for a queue, `quantum x 8 / T_round` bit/s capped at the
/// line rate, or `None` when the queue is not round-robin or T_round is unknown or < 1 ns
/// (TCN §3.3, Fig. 2c plots this through the EWMA of T_round).
pub fn implied_capacity_bps(quantum: Option<u32>, round_time_ns: Option<f64>, link_rate_bps: u64) -> Option<f64> {
    let (quantum, t_round) = (quantum?, round_time_ns.filter(|t| *t >= 1.0)?); // NaN too
    Some((quantum as f64 * 8.0 * NS_PER_S as f64 / t_round).min(link_rate_bps as f64))
}

/// MQ-ECN on each queue of a port.
#[derive(Clone, Debug)]
pub struct MqEcn {
    k: f64,
    /// Capacity implied at the queue's last enqueue (bit/s), for plots.
    last_estimate: Vec<Option<f64>>,
}

impl MqEcn {
    pub fn new(p: &MqEcnParams, ctx: &BuildCtx) -> Result<Self, String> {
        if p.k.0 == 0 {
            return Err("k: must be larger than 0".into());
        }
        Ok(MqEcn { k: p.k.0 as f64, last_estimate: vec![None; ctx.n_queues] })
    }

    /// The threshold K_i for a packet of the queue described by `q` (bytes).
    pub fn threshold_bytes(&self, q: &QueueState) -> f64 {
        match implied_capacity_bps(q.quantum, q.round_time_ns, q.link_rate_bps) {
            Some(c) => c / q.link_rate_bps as f64 * self.k,
            None => self.k,
        }
    }

    /// The capacity implied for `queue` at its last enqueue (bit/s); `None` before one, or
    /// when it had no round-robin estimate. For a value at any instant, call
    /// [`implied_capacity_bps`] with the scheduler's quantum and round time.
    pub fn capacity_estimate_bps(&self, queue: usize) -> Option<f64> {
        self.last_estimate[queue]
    }
}

impl MarkingScheme for MqEcn {
    fn hooks(&self) -> Hooks {
        Hooks::ENQUEUE
    }

    fn on_enqueue(&mut self, _now: Nanos, _pkt: PacketView, q: &QueueState) -> Decision {
        self.last_estimate[q.queue] = implied_capacity_bps(q.quantum, q.round_time_ns, q.link_rate_bps);
        if q.queue_bytes as f64 > self.threshold_bytes(q) {
            Decision::Mark(Reason::MqEcnThreshold)
        } else {
            Decision::Pass
        }
    }

    fn reset(&mut self) {
        self.last_estimate.iter_mut().for_each(|e| *e = None);
    }
}

#[cfg(test)]
mod tests {
    use super::super::red::script::*;
    use super::*;
    use proptest::prelude::*;

    fn mq() -> MqEcn {
        MqEcn::new(
            &MqEcnParams::default(),
            &BuildCtx { n_queues: 2, link_rate_bps: LINK, buffer_bytes: 1_000_000, seed: 0 },
        )
        .unwrap()
    }

    fn rr(bytes: u64, quantum: Option<u32>, t_round: Option<f64>) -> QueueState {
        QueueState { n_queues: 2, quantum, round_time_ns: t_round, ..qs(bytes) }
    }

    #[test]
    fn threshold_from_quantum_and_round_time() {
        let mut s = mq();
        // TCN Fig. 2: quantum 18 KB, two backlogged queues at 10 Gbps: T_round = 2 x 14.4 us.
        let q = rr(0, Some(18_000), Some(28_800.0));
        assert_eq!(implied_capacity_bps(q.quantum, q.round_time_ns, LINK), Some(5e9));
        assert!((s.threshold_bytes(&q) - 48_750.0).abs() < 1e-6);
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &rr(48_750, Some(18_000), Some(28_800.0))), Decision::Pass);
        assert_eq!(
            s.on_enqueue(0, pkt(1500, true), &rr(48_751, Some(18_000), Some(28_800.0))),
            Decision::Mark(Reason::MqEcnThreshold)
        );
        assert_eq!(s.capacity_estimate_bps(0), Some(5e9));
        // Four queues with 1500 B quanta: T_round = 4.8 us, K_i = k / 4.
        assert!((s.threshold_bytes(&rr(0, Some(1500), Some(4800.0))) - 24_375.0).abs() < 1e-6);
        // Dequeues are not MQ-ECN's business.
        assert_eq!(s.on_dequeue(0, pkt(1500, true), &rr(200_000, Some(1500), Some(4800.0)), 0), Decision::Pass);
    }

    #[test]
    fn capped_at_k_and_static_without_estimate() {
        let mut s = mq();
        // Alone in the round: quantum / T_round above the line rate -> K_i = k.
        assert_eq!(s.threshold_bytes(&rr(0, Some(18_000), Some(1000.0))), 97_500.0);
        assert_eq!(implied_capacity_bps(Some(18_000), Some(1000.0), LINK), Some(1e10));
        for q in [
            rr(0, None, Some(28_800.0)),
            rr(0, Some(1500), None),
            rr(0, Some(1500), Some(0.5)),
            rr(0, Some(1500), Some(f64::NAN)),
        ] {
            assert_eq!(s.threshold_bytes(&q), 97_500.0, "{q:?}");
        }
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &rr(97_500, None, Some(28_800.0))), Decision::Pass);
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &rr(97_501, None, None)), Decision::Mark(Reason::MqEcnThreshold));
        assert_eq!(s.capacity_estimate_bps(0), None);
        s.on_enqueue(0, pkt(1500, true), &rr(0, Some(1500), Some(4800.0)));
        s.reset();
        assert_eq!(s.capacity_estimate_bps(0), None);
    }

    #[test]
    fn validation_and_params() {
        let ctx = BuildCtx { n_queues: 1, link_rate_bps: LINK, buffer_bytes: 1, seed: 0 };
        assert_eq!(MqEcn::new(&MqEcnParams { k: ByteSize(0) }, &ctx).err().unwrap(), "k: must be larger than 0");
        let p: MqEcnParams = serde_json::from_str(r#"{"k": "30KB"}"#).unwrap();
        assert_eq!(p.k.0, 30_000);
        assert!(serde_json::from_str::<MqEcnParams>(r#"{"beta": 0.75}"#).is_err());
    }

    proptest! {
        #[test]
        fn decision_matches_formula(bytes in 0u64..200_000, quantum in proptest::option::of(1u32..100_000),
                                    t_round in proptest::option::of(0.0f64..1e6)) {
            let mut s = mq();
            let q = rr(bytes, quantum, t_round);
            let k_i = match (quantum, t_round) {
                (Some(qu), Some(t)) if t >= 1.0 => (qu as f64 * 8e9 / t / LINK as f64).min(1.0) * 97_500.0,
                _ => 97_500.0,
            };
            prop_assert!((s.threshold_bytes(&q) - k_i).abs() < 1e-6 * k_i);
            let d = s.on_enqueue(0, pkt(1500, true), &q);
            prop_assert_eq!(d != Decision::Pass, bytes as f64 > s.threshold_bytes(&q));
        }
    }
}
