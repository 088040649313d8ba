//! DCTCP-RED: mark every packet while the instantaneous occupancy is above K (TCN §2.1;
//! dual AQM §II-A), on a queue's, the port's or the shared pool's bytes (TCN §3.2:
//! per-queue, per-port, per-service-pool ECN/RED), at enqueue or at dequeue (TCN §4.3, Fig. 3).
//!
//! The test is strict, `occupancy > K`, with the arriving packet already counted at enqueue
//! and the departing packet already removed at dequeue (the port's conventions, which follow
//! the authors' ns-2 code: append first, then compare; REFERENCE-IMPLEMENTATIONS §2.2).
//! Stateless: no EWMA (w = 1), one threshold per queue.
//!
//! Default K = 65 x 1500 B = 97 500 B, the TCN paper's DCTCP value at 10 Gbps (§6.2, the
//! authors' ns-2 scripts); scenarios at other rates set their own. `k_per_queue` gives each
//! queue its own K; with scope `port` or `pool` it is the threshold the port's or pool's
//! occupancy is compared with for packets of that queue.

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::units::{ByteSize, Nanos};
use serde::{Deserialize, Serialize};

/// Which occupancy DCTCP-RED compares with K.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The packet's queue (per-queue ECN/RED).
    #[default]
    Queue,
    /// All queues of the port (per-port ECN/RED).
    Port,
    /// The service pool shared across ports (per-service-pool ECN/RED).
    Pool,
}

/// Where the comparison happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    #[default]
    Enqueue,
    /// Dequeue ECN/RED (TCN §4.3): the length the departing packet leaves behind.
    Dequeue,
}

/// `[marking.threshold]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ThresholdParams {
    /// Occupancy compared with K; default `queue` (per-queue ECN/RED, TCN §3.2.1).
    pub scope: Scope,
    /// Hook where the comparison happens; default `enqueue` (DCTCP; TCN §2.1).
    pub at: Hook,
    /// Marking threshold K; default 97500 B (65 packets, TCN §6.2 at 10 Gbps).
    pub k: ByteSize,
    /// Per-queue thresholds K_i; default empty (= `k` for every queue).
    pub k_per_queue: Vec<ByteSize>,
}

impl Default for ThresholdParams {
    fn default() -> Self {
        ThresholdParams { scope: Scope::Queue, at: Hook::Enqueue, k: ByteSize(65 * 1500), k_per_queue: Vec::new() }
    }
}

/// DCTCP-RED with a static threshold per queue.
#[derive(Clone, Debug)]
pub struct ThresholdEcn {
    scope: Scope,
    at: Hook,
    /// K_i in bytes, one per queue.
    k: Vec<u64>,
}

impl ThresholdEcn {
    pub fn new(p: &ThresholdParams, ctx: &BuildCtx) -> Result<Self, String> {
        if p.k.0 == 0 {
            return Err("k: must be larger than 0".into());
        }
        let k = match p.k_per_queue.len() {
            0 => vec![p.k.0; ctx.n_queues],
            l if l == ctx.n_queues => {
                if let Some(i) = p.k_per_queue.iter().position(|k| k.0 == 0) {
                    return Err(format!("k_per_queue[{i}]: must be larger than 0"));
                }
                p.k_per_queue.iter().map(|k| k.0).collect()
            }
            l => return Err(format!("k_per_queue: {l} thresholds given for {} queues", ctx.n_queues)),
        };
        Ok(ThresholdEcn { scope: p.scope, at: p.at, k })
    }

    /// The threshold K_i of `queue` (bytes).
    pub fn k_bytes(&self, queue: usize) -> u64 {
        self.k[queue]
    }

    #[inline]
    fn judge(&self, q: &QueueState) -> Decision {
        let (occupancy, reason) = match self.scope {
            Scope::Queue => (q.queue_bytes, Reason::QueueThreshold),
            Scope::Port => (q.port_bytes, Reason::PortThreshold),
            Scope::Pool => (q.pool_bytes, Reason::PoolThreshold),
        };
        if occupancy > self.k[q.queue] {
            Decision::Mark(reason)
        } else {
            Decision::Pass
        }
    }
}

impl MarkingScheme for ThresholdEcn {
    #[inline]
    fn on_enqueue(&mut self, _now: Nanos, _pkt: PacketView, q: &QueueState) -> Decision {
        match self.at {
            Hook::Enqueue => self.judge(q),
            Hook::Dequeue => Decision::Pass,
        }
    }

    #[inline]
    fn on_dequeue(&mut self, _now: Nanos, _pkt: PacketView, q: &QueueState, _sojourn: Nanos) -> Decision {
        match self.at {
            Hook::Dequeue => self.judge(q),
            Hook::Enqueue => Decision::Pass,
        }
    }

    fn hooks(&self) -> Hooks {
        match self.at {
            Hook::Enqueue => Hooks::ENQUEUE,
            Hook::Dequeue => Hooks::DEQUEUE,
        }
    }

    /// Stateless: nothing to clear.
    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::super::red::script::*;
    use super::*;
    use proptest::prelude::*;

    fn ctx(n_queues: usize) -> BuildCtx {
        BuildCtx { n_queues, link_rate_bps: LINK, buffer_bytes: 1_000_000, seed: 0 }
    }

    fn thr(scope: Scope, at: Hook, k: u64) -> ThresholdEcn {
        ThresholdEcn::new(&ThresholdParams { scope, at, k: ByteSize(k), ..Default::default() }, &ctx(2)).unwrap()
    }

    /// A view of queue `queue` of a 2-queue port with distinct queue, port and pool bytes.
    fn view(queue: usize, queue_bytes: u64, port_bytes: u64, pool_bytes: u64) -> QueueState {
        QueueState { queue, n_queues: 2, queue_bytes, port_bytes, pool_bytes, ..qs(0) }
    }

    #[test]
    fn strict_threshold_on_each_scope() {
        let k = 30_000;
        for (scope, reason) in [
            (Scope::Queue, Reason::QueueThreshold),
            (Scope::Port, Reason::PortThreshold),
            (Scope::Pool, Reason::PoolThreshold),
        ] {
            let mut s = thr(scope, Hook::Enqueue, k);
            let pick = |q: u64| match scope {
                Scope::Queue => view(1, q, 1_000_000, 1_000_000),
                Scope::Port => view(1, 0, q, 1_000_000),
                Scope::Pool => view(1, 1_000_000, 1_000_000, q),
            };
            // Exactly K passes (strict >), one byte more marks; the other occupancies don't matter.
            assert_eq!(s.on_enqueue(0, pkt(1500, true), &pick(k)), Decision::Pass, "{scope:?}");
            assert_eq!(s.on_enqueue(0, pkt(1500, true), &pick(k + 1)), Decision::Mark(reason), "{scope:?}");
            assert_eq!(s.on_enqueue(0, pkt(1500, true), &pick(0)), Decision::Pass, "{scope:?}");
        }
    }

    #[test]
    fn hook_enqueue_only_or_dequeue_only() {
        let over = view(0, 50_000, 50_000, 50_000);
        let mut enq = thr(Scope::Queue, Hook::Enqueue, 30_000);
        assert_eq!(enq.on_enqueue(0, pkt(1500, true), &over), Decision::Mark(Reason::QueueThreshold));
        assert_eq!(enq.on_dequeue(0, pkt(1500, true), &over, 0), Decision::Pass);
        let mut deq = thr(Scope::Queue, Hook::Dequeue, 30_000);
        assert_eq!(deq.on_enqueue(0, pkt(1500, true), &over), Decision::Pass);
        assert_eq!(deq.on_dequeue(0, pkt(1500, true), &over, 0), Decision::Mark(Reason::QueueThreshold));
    }

    #[test]
    fn fifo_trace_marks_above_k_packets() {
        // K = 20 packets: on the way up arrivals 21.. are marked at enqueue; at dequeue,
        // departures that leave more than 20 packets behind.
        let ops: Vec<(Nanos, bool)> = (0..30).map(|i| (i, true)).chain((30..60).map(|i| (i, false))).collect();
        let evs = fifo_trace(&ops, 1500);
        let marked = |d: &[Decision]| d.iter().map(|x| *x != Decision::Pass).collect::<Vec<_>>();
        let e = marked(&run(&mut thr(Scope::Queue, Hook::Enqueue, 30_000), &evs));
        let want_e: Vec<bool> = (1..=30).map(|n| n > 20).chain((0..30).map(|_| false)).collect();
        assert_eq!(e, want_e);
        let d = marked(&run(&mut thr(Scope::Queue, Hook::Dequeue, 30_000), &evs));
        let want_d: Vec<bool> = (0..30).map(|_| false).chain((0..30).map(|i| 29 - i > 20)).collect();
        assert_eq!(d, want_d);
    }

    #[test]
    fn per_queue_thresholds() {
        let p = ThresholdParams { k_per_queue: vec![ByteSize(10_000), ByteSize(40_000)], ..Default::default() };
        let mut s = ThresholdEcn::new(&p, &ctx(2)).unwrap();
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &view(0, 20_000, 0, 0)), Decision::Mark(Reason::QueueThreshold));
        assert_eq!(s.on_enqueue(0, pkt(1500, true), &view(1, 20_000, 0, 0)), Decision::Pass);
        assert_eq!(s.k_bytes(1), 40_000);
        assert_eq!(ThresholdEcn::new(&ThresholdParams::default(), &ctx(3)).unwrap().k_bytes(2), 97_500);
    }

    #[test]
    fn validation_names_the_field() {
        let e = ThresholdEcn::new(&ThresholdParams { k: ByteSize(0), ..Default::default() }, &ctx(2)).err().unwrap();
        assert_eq!(e, "k: must be larger than 0");
        let p = ThresholdParams { k_per_queue: vec![ByteSize(1)], ..Default::default() };
        assert!(ThresholdEcn::new(&p, &ctx(2)).err().unwrap().starts_with("k_per_queue:"));
        let p = ThresholdParams { k_per_queue: vec![ByteSize(1), ByteSize(0)], ..Default::default() };
        assert!(ThresholdEcn::new(&p, &ctx(2)).err().unwrap().starts_with("k_per_queue[1]:"));
    }

    #[test]
    fn params_deserialize() {
        let p: ThresholdParams = serde_json::from_str(r#"{"scope": "pool", "at": "dequeue", "k": "32KB"}"#).unwrap();
        assert_eq!((p.scope, p.at, p.k.0), (Scope::Pool, Hook::Dequeue, 32_000));
        assert!(serde_json::from_str::<ThresholdParams>(r#"{"K": 1}"#).is_err());
    }

    fn scope_strategy() -> impl Strategy<Value = Scope> {
        prop_oneof![Just(Scope::Queue), Just(Scope::Port), Just(Scope::Pool)]
    }

    proptest! {
        #[test]
        fn decision_is_occupancy_above_k(scope in scope_strategy(), dequeue in any::<bool>(), k in 1u64..200_000,
                                         views in proptest::collection::vec(
                                             (0usize..2, 0u64..300_000, 0u64..300_000, 0u64..300_000), 1..100)) {
            let at = if dequeue { Hook::Dequeue } else { Hook::Enqueue };
            let mut s = thr(scope, at, k);
            for (queue, qb, pb, plb) in views {
                let v = view(queue, qb, pb, plb);
                let occ = match scope { Scope::Queue => qb, Scope::Port => pb, Scope::Pool => plb };
                let e = s.on_enqueue(0, pkt(1500, true), &v);
                let d = s.on_dequeue(0, pkt(1500, true), &v, 0);
                let (active, idle) = if dequeue { (d, e) } else { (e, d) };
                prop_assert_eq!(idle, Decision::Pass);
                prop_assert_eq!(active != Decision::Pass, occ > k);
                // The boundary, which random occupancies rarely hit.
                for b in [k - 1, k, k + 1] {
                    let v = match scope {
                        Scope::Queue => view(queue, b, pb, plb),
                        Scope::Port => view(queue, qb, b, plb),
                        Scope::Pool => view(queue, qb, pb, b),
                    };
                    let d = if dequeue {
                        s.on_dequeue(0, pkt(1500, true), &v, 0)
                    } else {
                        s.on_enqueue(0, pkt(1500, true), &v)
                    };
                    prop_assert_eq!(d != Decision::Pass, b > k);
                }
            }
        }
    }
}
