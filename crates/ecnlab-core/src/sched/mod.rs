//! Packet schedulers: which queue of a port sends next.
//!
//! A scheduler never holds packets. The port ([`crate::port::Port`]) owns the FIFOs and tells
//! the scheduler what happens to them; the scheduler answers one question, [`Scheduler::select`]:
//! which backlogged queue sends its head packet now. Queue 0 is the highest priority where
//! priority matters (SP, and the strict part of SP/DWRR and SP/WFQ), as in the TCN authors'
//! ns-2 and Linux code (REFERENCE-IMPLEMENTATIONS §2.7).
//!
//! Round-robin schedulers (WRR, DWRR) also report their events (a queue starts a round,
//! rotates, or empties) to MQ-ECN's round-time estimator T_round (TCN §3.3; MQ-ECN NSDI'16
//! §3), which lives with its parameters in [`crate::marking::mq_ecn`]; they hold one so that
//! the events cost no indirection. MQ-ECN reads it through `QueueState::round_time_ns`.

pub mod dwrr;
pub mod paused;
pub mod sp;
pub mod wfq;
pub mod wrr;

use crate::marking::mq_ecn::MqEcnParams;
use crate::units::{ByteSize, Nanos};
use serde::{Deserialize, Serialize};

/// Occupancy of one queue as the scheduler sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueOcc {
    pub bytes: u64,
    pub pkts: u32,
    /// Wire size of the head packet; 0 when the queue is empty.
    pub head_bytes: u32,
}

impl QueueOcc {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }
}

/// The interface every scheduler implements.
pub trait Scheduler {
    /// A packet of `bytes` joined `queue`; `queues` already includes it.
    fn on_enqueue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]);
    /// Some queue it may serve is backlogged (`port_pkts` packets in all queues): the port
    /// calls [`Scheduler::select`] only then. Every queue counts, unless the port has paused
    /// some (PFC, `Port::set_paused`: [`paused::Paused`]).
    #[inline]
    fn has_backlog(&self, port_pkts: u64, _queues: &[QueueOcc]) -> bool {
        port_pkts > 0
    }
    /// Pick the queue whose head packet is sent now. Called only when some queue is
    /// backlogged; must return a backlogged queue. The packet is then removed and
    /// [`Scheduler::on_dequeue`] follows at once.
    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize;
    /// The head packet (`bytes`) of `queue` left; `queues` no longer includes it.
    fn on_dequeue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]);
    /// Round-robin schedulers: the quantum of `queue` in bytes.
    fn quantum(&self, _queue: usize) -> Option<u32> {
        None
    }
    /// Round-robin schedulers: MQ-ECN's smoothed round time T_round (ns).
    fn round_time_ns(&self) -> Option<f64> {
        None
    }
    /// Round-robin schedulers: keep (true, the default) or stop estimating T_round. A port
    /// turns it off when its marking scheme does not read T_round (the estimator costs a
    /// `powf` per idle period); turning it back on starts a fresh estimate.
    fn track_round_time(&mut self, _on: bool) {}
    /// Round-robin schedulers: give MQ-ECN's estimator the `round_*` parameters of
    /// `[marking.mq_ecn]` (checked by `MqEcnParams::check_round`); set-up only, before traffic.
    fn configure_round_time(&mut self, _p: &MqEcnParams) {}
    /// Fraction of what the strict-priority queues above `queue` leave that this scheduler
    /// gives `queue` if the current backlog of its own priority level persists (`queue`
    /// itself counts as backlogged): the configured weight share among the level's
    /// backlogged queues, 1.0 for a strict queue. Queues served before it by strict priority
    /// ([`Scheduler::strict_above`]) are not looked at: what they take is a rate over time,
    /// which the caller measures (the oracle capacity of ideal ECN/RED, TCN §3.1).
    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64;
    /// Queues `0..strict_above(queue)` are served by strict priority before `queue`.
    fn strict_above(&self, _queue: usize) -> usize {
        0
    }
}

/// Scheduler names as written in scenario files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Strict priority, queue 0 first.
    #[default]
    Sp,
    /// Weighted round robin: up to `quantum_i` bytes per round, no carry-over.
    Wrr,
    /// Deficit weighted round robin (Shreedhar & Varghese).
    Dwrr,
    /// Weighted fair queueing by virtual finish times.
    Wfq,
    /// The first `strict` queues by strict priority, the rest by WFQ.
    SpWfq,
    /// The first `strict` queues by strict priority, the rest by DWRR.
    SpDwrr,
}

/// The `[switch.scheduler]` table.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    pub kind: SchedulerKind,
    /// Number of strict-priority queues (queues 0..strict) for `sp_wfq` and `sp_dwrr`.
    pub strict: usize,
    /// Base quantum of round-robin queues (bytes). Queue i gets `quantum x weights[i]`.
    pub quantum: ByteSize,
    /// Per-queue weights of the weighted queues (DWRR/WRR quantum multiplier, WFQ weight);
    /// empty = all equal. For `sp_*` the list covers only the non-strict queues.
    pub weights: Vec<u32>,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig { kind: SchedulerKind::Sp, strict: 1, quantum: ByteSize(1500), weights: Vec::new() }
    }
}

/// A built scheduler (enum dispatch on the hot path; `Custom` for extension).
///
/// `repr(C, u8)`: the tag first, then the variant, whose hot fields come first (`SpOver`,
/// `Dwrr`): the tag and what a packet reads share the cache line that `Port` opens with
/// its scheduler (benches/DESIGN.md §7).
#[repr(C, u8)]
pub enum Sched {
    Sp(sp::Sp),
    Wrr(wrr::Wrr),
    Dwrr(dwrr::Dwrr),
    Wfq(wfq::Wfq),
    SpWfq(sp::SpOver<wfq::Wfq>),
    SpDwrr(sp::SpOver<dwrr::Dwrr>),
    /// Any of the above while some of the port's queues are paused (PFC).
    Paused(Box<paused::Paused>),
    Custom(Box<dyn Scheduler + Send>),
}

/// A copy of a scheduler, state included (see `Marking`'s `Clone`); a `Custom` one cannot be
/// copied, and ports built from a scenario never hold one.
impl Clone for Sched {
    fn clone(&self) -> Self {
        match self {
            Sched::Sp(s) => Sched::Sp(s.clone()),
            Sched::Wrr(s) => Sched::Wrr(s.clone()),
            Sched::Dwrr(s) => Sched::Dwrr(s.clone()),
            Sched::Wfq(s) => Sched::Wfq(s.clone()),
            Sched::SpWfq(s) => Sched::SpWfq(s.clone()),
            Sched::SpDwrr(s) => Sched::SpDwrr(s.clone()),
            Sched::Paused(s) => Sched::Paused(s.clone()),
            Sched::Custom(_) => panic!("a custom scheduler cannot be copied"),
        }
    }
}

macro_rules! sdispatch {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            Sched::Sp($s) => $e,
            Sched::Wrr($s) => $e,
            Sched::Dwrr($s) => $e,
            Sched::Wfq($s) => $e,
            Sched::SpWfq($s) => $e,
            Sched::SpDwrr($s) => $e,
            Sched::Paused($s) => $e,
            Sched::Custom($s) => $e,
        }
    };
}

impl SchedulerConfig {
    /// Per-queue weights for `n` weighted queues (all 1 when none are given).
    pub fn weights_for(&self, n: usize) -> Result<Vec<u32>, String> {
        if self.weights.is_empty() {
            return Ok(vec![1; n]);
        }
        if self.weights.len() != n {
            return Err(format!("weights: {} weights given for {} weighted queues", self.weights.len(), n));
        }
        if let Some(i) = self.weights.iter().position(|&w| w == 0) {
            return Err(format!("weights[{i}]: a weight must be at least 1"));
        }
        Ok(self.weights.clone())
    }
}

impl Sched {
    /// Build for a port of `n_queues` queues on a link of `link_rate_bps`.
    /// Errors name the field (relative to `[switch.scheduler]`).
    pub fn build(cfg: &SchedulerConfig, n_queues: usize, link_rate_bps: u64) -> Result<Sched, String> {
        if n_queues == 0 {
            return Err("a port needs at least one queue".into());
        }
        if cfg.quantum.0 == 0 {
            return Err("quantum: must be at least 1 byte".into());
        }
        let strict = cfg.strict;
        let hier = |kind: &str| -> Result<usize, String> {
            if strict >= n_queues {
                return Err(format!("strict: {strict} strict queues leave no {kind} queue among {n_queues}"));
            }
            Ok(n_queues - strict)
        };
        Ok(match cfg.kind {
            SchedulerKind::Sp => Sched::Sp(sp::Sp::new(n_queues)),
            SchedulerKind::Wrr => Sched::Wrr(wrr::Wrr::new(cfg, &cfg.weights_for(n_queues)?, link_rate_bps)),
            SchedulerKind::Dwrr => Sched::Dwrr(dwrr::Dwrr::new(cfg, &cfg.weights_for(n_queues)?, link_rate_bps)),
            SchedulerKind::Wfq => Sched::Wfq(wfq::Wfq::new(&cfg.weights_for(n_queues)?)),
            SchedulerKind::SpWfq => {
                let n = hier("WFQ")?;
                Sched::SpWfq(sp::SpOver::new(strict, wfq::Wfq::new(&cfg.weights_for(n)?)))
            }
            SchedulerKind::SpDwrr => {
                let n = hier("DWRR")?;
                Sched::SpDwrr(sp::SpOver::new(strict, dwrr::Dwrr::new(cfg, &cfg.weights_for(n)?, link_rate_bps)))
            }
        })
    }
}

impl Scheduler for Sched {
    #[inline]
    fn has_backlog(&self, port_pkts: u64, queues: &[QueueOcc]) -> bool {
        match self {
            Sched::Paused(s) => s.has_backlog(port_pkts, queues),
            _ => port_pkts > 0,
        }
    }
    #[inline]
    fn on_enqueue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        sdispatch!(self, s => s.on_enqueue(now, queue, bytes, queues))
    }
    #[inline]
    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize {
        sdispatch!(self, s => s.select(now, queues))
    }
    #[inline]
    fn on_dequeue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        sdispatch!(self, s => s.on_dequeue(now, queue, bytes, queues))
    }
    fn quantum(&self, queue: usize) -> Option<u32> {
        sdispatch!(self, s => s.quantum(queue))
    }
    fn round_time_ns(&self) -> Option<f64> {
        sdispatch!(self, s => s.round_time_ns())
    }
    fn track_round_time(&mut self, on: bool) {
        sdispatch!(self, s => s.track_round_time(on))
    }
    fn configure_round_time(&mut self, p: &MqEcnParams) {
        sdispatch!(self, s => s.configure_round_time(p))
    }
    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        sdispatch!(self, s => s.share(queue, queues))
    }
    fn strict_above(&self, queue: usize) -> usize {
        sdispatch!(self, s => s.strict_above(queue))
    }
}
