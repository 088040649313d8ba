//! MQ-ECN (Bai et al., NSDI'16; summarized in TCN §3.3): per-queue DCTCP-RED whose
//! threshold follows the capacity a round-robin scheduler gives the queue,
//! `K_i = min(quantum_i / T_round / C, 1) x k`, where `quantum_i / T_round` is the queue's
//! rate in one round (TCN §3.3) and `k = C x RTT x lambda` is the standard threshold
//! (TCN Eq. 1), so that `K_i = C_i x RTT x lambda` (TCN Eq. 2), capped at `k`.
//!
//! The scheme reads `QueueState::quantum` and `QueueState::round_time_ns`. The round time
//! T_round is estimated here, by [`RoundTime`] with its parameters under `[marking.mq_ecn]`
//! (`round_beta`, `round_idle_slot`, `round_variant`); its samples are scheduler events, so a
//! DWRR/WRR scheduler holds one and reports its events to it (`crate::sched::dwrr`), and only
//! when the port's scheme reads T_round ([`crate::sched::Scheduler::track_round_time`]).
//! Queues the round robin does not serve (strict-priority queues of SP/DWRR: `quantum` is
//! `None`) keep the static `k`, as in the authors' ns-2 code; so does every queue while
//! T_round is unknown or below 1 ns (ns-2: `K_i = port_thresh_` when T_round < 1 ns).
//!
//! Marking is at enqueue, strict `queue_bytes > K_i` with the arriving packet counted
//! (REFERENCE-IMPLEMENTATIONS §2.2, §2.3) ([`Reason::MqEcnThreshold`]). The rate is computed
//! exactly (quantum x 8 / T_round), not with the Linux module's 2^30 approximation.
//!
//! Default k = 97 500 B (65 packets at 10 Gbps, TCN §6.2 and the MQ-ECN ns-2 scripts).
//!
//! # Round time ([`RoundTime`])
//! MQ-ECN (TCN §3.3; Bai et al., NSDI'16) estimates the time T_round to serve every
//! backlogged queue once and smooths it with `T <- beta T + (1 - beta) sample`, starting from
//! T = 0 as all public implementations do (so the first estimate is `(1 - beta) x sample`).
//! Each queue keeps the time `start` at which its current round started; a sample is taken
//! when the queue finishes a round. The three public implementations differ
//! (REFERENCE-IMPLEMENTATIONS §2.3) and are selected by [`RoundTimeVariant`]:
//!
//! | event | `MqEcnNs2` (default) | `TcnNs2` | `Linux` |
//! |---|---|---|---|
//! | activation | `start = max(now, start)` | `start = now` | `start = now` |
//! | rotation | `now - start`; `start = now` | same | `last - start`; `start = last` |
//! | emptying | `now + tx - start`; `start = now + tx` | `now + 2 tx - start` | `last - start` |
//! | idle decay | `T *= beta^floor(idle/slot)` | `T *= beta^(idle/slot)` if >= 1 slot | floor; reset to 0 after > 10 slots |
//!
//! where `tx` is the transmission time of the departing packet (`units::tx_time_ns`) and
//! `last` (Linux) is the end of transmission of the queue's last packet (dequeue time + tx).
//! `now` is the time the port asks for the next packet, i.e. the start of a transmission.
//! Idle decay is applied at the first enqueue after the round-robin part of the port (the
//! queues the round-robin scheduler owns) has been empty; idle time runs from the dequeue that emptied
//! it. `slot` is `round_idle_slot`, or one 1500-byte packet time at the link rate; a zero
//! slot resets T at every idle end (as ns-2 and Linux do when the idle interval is 0).
//! A negative sample (only possible when the port is dequeued faster than the link rate, e.g.
//! MQ-ECN-NS2's `start` set to the end of a transmission that has not finished) counts as 0.
//! Linux variant: a rotation before the queue sent anything in its round (possible only when
//! `quantum_i` < the packet size, which Linux forbids) takes no sample.
//! [`crate::sched::Scheduler::round_time_ns`] is `None` before the first sample and after a Linux reset.

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::units::{tx_time_ns, ByteSize, Duration, Nanos, NS_PER_S};
use serde::{Deserialize, Serialize};

/// `[marking.mq_ecn]`.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MqEcnParams {
    /// Standard threshold C x RTT x lambda (strict queues' K); default 97500 B (65 packets at 10 Gbps, TCN §6.2).
    pub k: ByteSize,
    /// Round-time estimator: EWMA gain beta (T <- beta T + (1 - beta) sample), in [0, 1); 0.75 in every public implementation.
    pub round_beta: f64,
    /// Round-time estimator: the T_idle slot of the idle decay; empty = one MTU (1500 B) at the link rate.
    pub round_idle_slot: Option<Duration>,
    /// Round-time estimator: whose samples (REFERENCE-IMPLEMENTATIONS §2.3).
    pub round_variant: RoundTimeVariant,
}

impl Default for MqEcnParams {
    fn default() -> Self {
        MqEcnParams {
            k: ByteSize(65 * 1500),
            round_beta: 0.75,
            round_idle_slot: None,
            round_variant: RoundTimeVariant::MqEcnNs2,
        }
    }
}

impl MqEcnParams {
    /// The estimator's parameters are checked for every port, whatever its scheme (a custom
    /// scheme may read T_round); errors are relative to `[marking.mq_ecn]`.
    pub fn check_round(&self) -> Result<(), String> {
        if !(0.0..1.0).contains(&self.round_beta) {
            return Err(format!("round_beta: {} is not in [0, 1)", self.round_beta));
        }
        Ok(())
    }
}

/// How MQ-ECN's round-time samples are taken; the three public implementations differ
/// (REFERENCE-IMPLEMENTATIONS §2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundTimeVariant {
    /// MQ-ECN-NS2 `dwrr.cc` (default): sample on rotation, and on emptying with one tx time.
    #[default]
    MqEcnNs2,
    /// TCN-NS2 `prio_dwrr.cc`: tx time added twice on emptying; unfloored idle decay.
    TcnNs2,
    /// Linux `sch_dwrr`: reset after more than 10 idle slots.
    Linux,
}

/// The capacity MQ-ECN implies for a queue, `quantum x 8 / T_round` bit/s capped at the
/// line rate, or `None` when the queue is not round-robin or T_round is unknown or < 1 ns
/// (TCN §3.3, Fig. 2c plots this through the EWMA of T_round).
pub fn implied_capacity_bps(quantum: Option<u32>, round_time_ns: Option<f64>, link_rate_bps: u64) -> Option<f64> {
    let (quantum, t_round) = (quantum?, round_time_ns.filter(|t| *t >= 1.0)?); // NaN too
    Some((quantum as f64 * 8.0 * NS_PER_S as f64 / t_round).min(link_rate_bps as f64))
}

/// Linux `sch_dwrr`: more idle slots than this reset the round time to 0.
const LINUX_MAX_IDLE_SLOTS: u64 = 10;

/// MQ-ECN's smoothed round time, sampled at round-robin scheduler events.
/// `repr(C)`: `enabled`, checked at every scheduler call, first (see `Dwrr`).
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct RoundTime {
    /// Samples are taken. Off when the port's marking scheme does not read T_round
    /// ([`crate::sched::Scheduler::track_round_time`]): the estimator (with its `powf` per idle period)
    /// is then pure overhead on every packet.
    enabled: bool,
    variant: RoundTimeVariant,
    /// EWMA gain beta.
    beta: f64,
    /// Idle slot T_idle (ns).
    slot_ns: Nanos,
    link_rate_bps: u64,
    /// Smoothed round time (ns); meaningful only when `sampled`.
    t_ns: f64,
    /// At least one sample since construction (or since a Linux reset).
    sampled: bool,
    /// Per queue: start time of the queue's current round (ns).
    start: Vec<Nanos>,
    /// Per queue (Linux): end of transmission of the queue's last packet (ns).
    last_pkt_end: Vec<Nanos>,
    /// Time the round-robin part last became empty.
    idle_since: Nanos,
}

impl RoundTime {
    pub(crate) fn new(p: &MqEcnParams, n_queues: usize, link_rate_bps: u64) -> Self {
        RoundTime {
            variant: p.round_variant,
            beta: p.round_beta,
            slot_ns: slot_ns(p, link_rate_bps),
            link_rate_bps,
            t_ns: 0.0,
            sampled: false,
            start: vec![0; n_queues],
            last_pkt_end: vec![0; n_queues],
            idle_since: 0,
            enabled: true,
        }
    }

    /// Take the parameters `p` (checked by [`MqEcnParams::check_round`]); the estimate
    /// starts afresh, as [`RoundTime::set_enabled`] does: meant for set-up, before traffic.
    pub(crate) fn configure(&mut self, p: &MqEcnParams) {
        *self = RoundTime { enabled: self.enabled, ..RoundTime::new(p, self.start.len(), self.link_rate_bps) };
    }

    pub(crate) fn get(&self) -> Option<f64> {
        (self.enabled && self.sampled).then_some(self.t_ns)
    }

    /// Turn sampling on or off. Turning it on starts a fresh estimate (no sample yet) with
    /// every round start at time 0: meant for set-up, before traffic. Mid-run, a queue that
    /// stayed backlogged gives one over-long first sample, which the EWMA then forgets.
    pub(crate) fn set_enabled(&mut self, on: bool) {
        if on && !self.enabled {
            self.t_ns = 0.0;
            self.sampled = false;
            self.start.fill(0);
            self.last_pkt_end.fill(0);
            self.idle_since = 0;
        }
        self.enabled = on;
    }

    #[inline]
    fn tx(&self, bytes: u32) -> Nanos {
        if self.link_rate_bps == 0 {
            0
        } else {
            tx_time_ns(bytes as u64, self.link_rate_bps)
        }
    }

    #[inline]
    fn sample(&mut self, end: Nanos, start: Nanos) {
        let s = end.saturating_sub(start) as f64;
        self.t_ns = self.beta * self.t_ns + (1.0 - self.beta) * s;
        self.sampled = true;
    }

    /// Queue `q` became backlogged.
    pub(crate) fn on_activate(&mut self, q: usize, now: Nanos) {
        if !self.enabled {
            return;
        }
        self.start[q] = match self.variant {
            RoundTimeVariant::MqEcnNs2 => self.start[q].max(now),
            RoundTimeVariant::TcnNs2 | RoundTimeVariant::Linux => now,
        };
    }

    /// Queue `q` finished its round with packets left (deficit/counter exhausted).
    pub(crate) fn on_rotate(&mut self, q: usize, now: Nanos) {
        if !self.enabled {
            return;
        }
        match self.variant {
            RoundTimeVariant::MqEcnNs2 | RoundTimeVariant::TcnNs2 => {
                self.sample(now, self.start[q]);
                self.start[q] = now;
            }
            RoundTimeVariant::Linux => {
                let last = self.last_pkt_end[q];
                if last > self.start[q] {
                    self.sample(last, self.start[q]);
                    self.start[q] = last;
                }
            }
        }
    }

    /// A packet of `bytes` left queue `q` at `now`.
    #[inline]
    pub(crate) fn on_sent(&mut self, q: usize, now: Nanos, bytes: u32) {
        if !self.enabled {
            return;
        }
        if self.variant == RoundTimeVariant::Linux {
            self.last_pkt_end[q] = now.saturating_add(self.tx(bytes));
        }
    }

    /// Queue `q` became empty when its last packet (`bytes`) left at `now`.
    #[inline]
    pub(crate) fn on_empty(&mut self, q: usize, now: Nanos, bytes: u32) {
        if self.enabled {
            self.sample_empty(q, now, bytes);
        }
    }

    /// [`RoundTime::on_empty`] when enabled (out of line: the scheduler's dequeue inlines
    /// only the check).
    fn sample_empty(&mut self, q: usize, now: Nanos, bytes: u32) {
        let tx = self.tx(bytes);
        // Instants past the end of the u64 clock saturate (a run near `Nanos::MAX`).
        let end = now.saturating_add(tx);
        match self.variant {
            RoundTimeVariant::MqEcnNs2 => {
                self.sample(end, self.start[q]);
                self.start[q] = end;
            }
            RoundTimeVariant::TcnNs2 => {
                // TCN-NS2 adds the transmission time twice (REFERENCE-IMPLEMENTATIONS §5.1).
                self.sample(end.saturating_add(tx), self.start[q]);
                self.start[q] = end;
            }
            RoundTimeVariant::Linux => {
                self.sample(self.last_pkt_end[q], self.start[q]);
                self.start[q] = self.last_pkt_end[q];
            }
        }
    }

    /// WRR's pointer passed over the empty queue `q` (MQ-ECN-NS2 `wrr.cc` restarts its round
    /// there; harmless for the other variants, whose activation overwrites `start`).
    #[inline]
    pub(crate) fn on_skip(&mut self, q: usize, now: Nanos) {
        if !self.enabled {
            return;
        }
        self.start[q] = now;
    }

    /// The round-robin part became empty at `now`.
    #[inline]
    pub(crate) fn on_idle_start(&mut self, now: Nanos) {
        if !self.enabled {
            return;
        }
        self.idle_since = now;
    }

    /// First enqueue after the round-robin part was empty: decay T by the idle time.
    pub(crate) fn on_idle_end(&mut self, now: Nanos) {
        if !self.enabled {
            return;
        }
        if !self.sampled {
            return;
        }
        let idle = now.saturating_sub(self.idle_since);
        if self.slot_ns == 0 {
            self.t_ns = 0.0;
            return;
        }
        match self.variant {
            RoundTimeVariant::MqEcnNs2 => {
                let n = idle / self.slot_ns;
                self.t_ns *= self.beta.powf(n as f64);
            }
            RoundTimeVariant::TcnNs2 => {
                let n = idle as f64 / self.slot_ns as f64;
                if n >= 1.0 {
                    self.t_ns *= self.beta.powf(n);
                }
            }
            RoundTimeVariant::Linux => {
                let n = idle / self.slot_ns;
                if n > LINUX_MAX_IDLE_SLOTS {
                    self.t_ns = 0.0;
                    self.sampled = false;
                } else {
                    self.t_ns *= self.beta.powi(n as i32);
                }
            }
        }
    }
}

/// The idle slot T_idle (ns): `round_idle_slot`, or one 1500-byte packet time at the link rate.
fn slot_ns(p: &MqEcnParams, link_rate_bps: u64) -> Nanos {
    match p.round_idle_slot {
        Some(d) => d.ns(),
        None if link_rate_bps > 0 => tx_time_ns(1500, link_rate_bps),
        None => 0,
    }
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
        assert_eq!(
            MqEcn::new(&MqEcnParams { k: ByteSize(0), ..Default::default() }, &ctx).err().unwrap(),
            "k: must be larger than 0"
        );
        let p: MqEcnParams = serde_json::from_str(r#"{"k": "30KB"}"#).unwrap();
        assert_eq!(p.k.0, 30_000);
        assert!(serde_json::from_str::<MqEcnParams>(r#"{"beta": 0.75}"#).is_err());
    }

    #[test]
    fn round_time_params_under_mq_ecn() {
        let p: MqEcnParams =
            serde_json::from_str(r#"{"round_beta": 0.5, "round_idle_slot": "5us", "round_variant": "tcn_ns2"}"#)
                .unwrap();
        assert_eq!(
            (p.round_beta, p.round_idle_slot, p.round_variant),
            (0.5, Some(Duration(5_000)), RoundTimeVariant::TcnNs2)
        );
        assert_eq!(p.check_round(), Ok(()));
        assert_eq!(MqEcnParams::default().check_round(), Ok(()));
        for beta in [1.0, -0.1, f64::NAN] {
            let e = MqEcnParams { round_beta: beta, ..Default::default() }.check_round().unwrap_err();
            assert!(e.starts_with("round_beta: ") && e.ends_with(" is not in [0, 1)"), "{e}");
        }
        // The default slot is one 1500 B packet time; `enabled`, read on every scheduler
        // event, opens the estimator (see `sched::dwrr`'s layout test).
        assert_eq!(slot_ns(&MqEcnParams::default(), LINK), 1_200);
        assert_eq!(std::mem::offset_of!(RoundTime, enabled), 0);
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
