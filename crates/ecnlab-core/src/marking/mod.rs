//! ECN marking schemes: small stateful objects with a narrow interface.
//!
//! A scheme sees a packet at enqueue and/or at dequeue, together with the state of its queue
//! and port ([`QueueState`]) and, at dequeue, the packet's sojourn time. It answers with a
//! [`Decision`]: pass, mark (with a [`Reason`]) or drop (with a reason). The scheme never
//! touches the packet: the port ([`crate::port::Port`]) applies the decision, decides what a
//! mark means for a packet that is not ECN-capable ([`NonEctPolicy`]), and counts every mark
//! and drop by reason, so every scheme has the same statistics.
//!
//! One scheme object serves a whole egress port (all its queues): per-queue state lives
//! inside it, indexed by `QueueState::queue`. This lets per-port and per-pool schemes, and
//! MQ-ECN's port-wide round time, use the same interface as per-queue ones.
//!
//! Each scheme splits into *params* (what the operator sets; serde-deserialized from the
//! scenario's `[marking.<scheme>]` table, with the papers' names), *state* (what evolves;
//! cleared by `reset`) and, where a scheme has internal counters beyond marks and drops,
//! *stats*.
//!
//! Conventions of the views handed to a scheme:
//! - at enqueue, `queue_bytes`/`port_bytes`/`pool_bytes` already include the arriving packet
//!   (ns-2's TCN/MQ-ECN code appends first, then compares with a strict `>`; see
//!   REFERENCE-IMPLEMENTATIONS §2.2);
//! - at dequeue, they no longer include the departing packet.

pub mod codel;
pub mod dualq;
pub mod ecn_sharp;
pub mod ideal;
pub mod mq_ecn;
pub mod red;
pub mod tcn;
pub mod threshold;

use crate::units::Nanos;
use serde::{Deserialize, Serialize};

/// What a scheme sees of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketView {
    /// Bytes on the wire (what buffers and links account).
    pub size: u32,
    /// ECN-capable transport (ECT(0), ECT(1) or already CE).
    pub ect: bool,
}

/// What a scheme sees of the queue and port a packet is in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueState {
    /// Index of the packet's queue within its port (0-based).
    pub queue: usize,
    /// Number of queues of the port.
    pub n_queues: usize,
    /// Bytes in the packet's queue (see the module doc for enqueue/dequeue conventions).
    pub queue_bytes: u64,
    /// Packets in the packet's queue.
    pub queue_pkts: u32,
    /// Bytes in all queues of the port.
    pub port_bytes: u64,
    /// Bytes in the shared service pool the port draws from (equals `port_bytes` when the
    /// port has no pool shared with other ports).
    pub pool_bytes: u64,
    /// Line rate of the port's link, bits per second.
    pub link_rate_bps: u64,
    /// Round-robin schedulers (DWRR, WRR): the queue's quantum in bytes. Filled in only for
    /// schemes that read it ([`Marking::needs_round_info`]).
    pub quantum: Option<u32>,
    /// Round-robin schedulers: the smoothed round time T_round in ns used by MQ-ECN
    /// (TCN §3.3; MQ-ECN NSDI'16), `None` before the first sample or when no queue is in a round.
    pub round_time_ns: Option<f64>,
    /// Fraction of the line rate the scheduler would give this queue if the backlog stayed
    /// as it is (the "oracle" capacity of ideal ECN/RED). Only filled in when the scheme asks
    /// for it ([`MarkingScheme::needs_oracle_share`]); 1.0 otherwise.
    pub oracle_share: f64,
    /// Queues `0..strict_above` are served by strict priority before this one; what they
    /// take over time is what the oracle subtracts from the line rate (ideal ECN/RED). Filled
    /// in with `oracle_share`; 0 otherwise.
    pub strict_above: usize,
}

impl QueueState {
    /// What a scheme whose hooks do not read the queue ([`Hooks::queue_state`] false) is
    /// handed: zeros, not the queue.
    pub const UNREAD: QueueState = QueueState {
        queue: 0,
        n_queues: 0,
        queue_bytes: 0,
        queue_pkts: 0,
        port_bytes: 0,
        pool_bytes: 0,
        link_rate_bps: 0,
        quantum: None,
        round_time_ns: None,
        oracle_share: 0.0,
        strict_above: 0,
    };
}

/// Why a packet was marked or dropped. One counter per reason per queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Reason {
    // -- buffer admission (the port's, not a scheme's) --
    /// The port's shared buffer is full.
    BufferFull,
    /// The queue's own limit is reached.
    QueueLimit,
    /// The shared service pool (across ports) is full.
    PoolFull,
    /// The queue holds its dynamic share of the free shared buffer (`switch.buffer_policy =
    /// "dynamic"`: alpha x the free bytes, Choudhury and Hahne; [`crate::buffer`]).
    DynamicThreshold,
    /// A lossless queue's packet over its dynamic threshold found the PFC headroom full
    /// (`switch.headroom`).
    HeadroomFull,
    // -- queue-length thresholds (DCTCP-RED, ideal ECN/RED, MQ-ECN) --
    /// Queue length above the queue's threshold K (per-queue DCTCP-RED).
    QueueThreshold,
    /// Port occupancy above the port threshold (per-port DCTCP-RED).
    PortThreshold,
    /// Service-pool occupancy above the pool threshold (per-pool DCTCP-RED).
    PoolThreshold,
    /// Queue length above K_i = C_i x RTT x lambda with C_i estimated (ideal ECN/RED, TCN §3.3).
    IdealThreshold,
    /// Queue length above MQ-ECN's dynamic threshold.
    MqEcnThreshold,
    // -- RED --
    /// RED probabilistic region (min_th <= avg < max_th).
    RedProbabilistic,
    /// RED forced region (avg >= max_th, or beyond 2 max_th when gentle).
    RedForced,
    // -- CoDel --
    /// CoDel's control law (dropping/marking state).
    Codel,
    // -- TCN --
    /// Sojourn time above T (TCN §4).
    TcnSojourn,
    /// Probabilistic TCN between T_min and T_max.
    TcnProbabilistic,
    // -- ECN# --
    /// Instantaneous sojourn above ins_target (ECN# Alg. 1).
    EcnSharpInstantaneous,
    /// Persistent-queue marking (ECN# Alg. 1).
    EcnSharpPersistent,
    // -- dual AQM --
    /// The scalable (DCTCP) RED instance of the dual AQM.
    DualqScalable,
    /// The classic (Reno) RED instance of the dual AQM.
    DualqClassic,
}

impl Reason {
    pub const COUNT: usize = Reason::DualqClassic as usize + 1;
    pub const ALL: [Reason; Reason::COUNT] = [
        Reason::BufferFull,
        Reason::QueueLimit,
        Reason::PoolFull,
        Reason::DynamicThreshold,
        Reason::HeadroomFull,
        Reason::QueueThreshold,
        Reason::PortThreshold,
        Reason::PoolThreshold,
        Reason::IdealThreshold,
        Reason::MqEcnThreshold,
        Reason::RedProbabilistic,
        Reason::RedForced,
        Reason::Codel,
        Reason::TcnSojourn,
        Reason::TcnProbabilistic,
        Reason::EcnSharpInstantaneous,
        Reason::EcnSharpPersistent,
        Reason::DualqScalable,
        Reason::DualqClassic,
    ];
    /// snake_case name, as written in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Reason::BufferFull => "buffer_full",
            Reason::QueueLimit => "queue_limit",
            Reason::PoolFull => "pool_full",
            Reason::DynamicThreshold => "dynamic_threshold",
            Reason::HeadroomFull => "headroom_full",
            Reason::QueueThreshold => "queue_threshold",
            Reason::PortThreshold => "port_threshold",
            Reason::PoolThreshold => "pool_threshold",
            Reason::IdealThreshold => "ideal_threshold",
            Reason::MqEcnThreshold => "mq_ecn_threshold",
            Reason::RedProbabilistic => "red_probabilistic",
            Reason::RedForced => "red_forced",
            Reason::Codel => "codel",
            Reason::TcnSojourn => "tcn_sojourn",
            Reason::TcnProbabilistic => "tcn_probabilistic",
            Reason::EcnSharpInstantaneous => "ecn_sharp_instantaneous",
            Reason::EcnSharpPersistent => "ecn_sharp_persistent",
            Reason::DualqScalable => "dualq_scalable",
            Reason::DualqClassic => "dualq_classic",
        }
    }
}

/// A scheme's answer for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Pass,
    /// Set CE (if the packet is ECT; otherwise the port's [`NonEctPolicy`] applies).
    Mark(Reason),
    /// Drop the packet whatever its ECN capability (e.g. CoDel in drop mode, the dual AQM's
    /// classic instance on non-ECT traffic).
    Drop(Reason),
}

/// What the port does with a non-ECT packet (pure ACKs included) that a scheme would mark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NonEctPolicy {
    /// Let it through unmarked (what the TCN, MQ-ECN and ECN# authors' code does; default).
    #[default]
    Pass,
    /// Drop it (RFC 3168 §7).
    Drop,
}

/// Everything a scheme needs to know about the port it is built for.
#[derive(Clone, Copy, Debug)]
pub struct BuildCtx {
    pub n_queues: usize,
    pub link_rate_bps: u64,
    /// The port's buffer in bytes (for validating thresholds).
    pub buffer_bytes: u64,
    /// Seed of this scheme's own random stream (probabilistic schemes).
    pub seed: u64,
}

/// The interface every marking scheme implements. Hooks default to `Pass` so a scheme
/// implements only the side it acts on.
pub trait MarkingScheme {
    fn on_enqueue(&mut self, _now: Nanos, _pkt: PacketView, _q: &QueueState) -> Decision {
        Decision::Pass
    }
    /// `sojourn` = now - the packet's enqueue time.
    fn on_dequeue(&mut self, _now: Nanos, _pkt: PacketView, _q: &QueueState, _sojourn: Nanos) -> Decision {
        Decision::Pass
    }
    /// Whether the port must fill `QueueState::oracle_share` (costs a scan of the queues).
    fn needs_oracle_share(&self) -> bool {
        false
    }
    /// Which hooks can answer anything but `Pass` or keep state: the port skips building
    /// the queue view and calling the others (a scheme that marks at dequeue costs nothing
    /// at enqueue). Default: both, which is always correct.
    fn hooks(&self) -> Hooks {
        Hooks::BOTH
    }
    /// Clear evolving state, keep parameters.
    fn reset(&mut self);
}

/// The hooks a scheme acts on ([`MarkingScheme::hooks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hooks {
    pub enqueue: bool,
    pub dequeue: bool,
    /// The hooks read their [`QueueState`]. When false the port does not build it and hands
    /// them [`QueueState::UNREAD`] (a sojourn-time scheme such as TCN: building the view was
    /// ~20 instructions of a packet-hop, benches/DESIGN.md §5).
    pub queue_state: bool,
}

impl Hooks {
    pub const BOTH: Hooks = Hooks { enqueue: true, dequeue: true, queue_state: true };
    pub const ENQUEUE: Hooks = Hooks { enqueue: true, dequeue: false, queue_state: true };
    pub const DEQUEUE: Hooks = Hooks { enqueue: false, dequeue: true, queue_state: true };
    /// The dequeue hook, reading only the packet and its sojourn time.
    pub const DEQUEUE_SOJOURN: Hooks = Hooks { enqueue: false, dequeue: true, queue_state: false };
    pub const NONE: Hooks = Hooks { enqueue: false, dequeue: false, queue_state: false };
}

/// A scheme that never acts: `Marking::None` as a type of its own, so that a port without
/// marking can run a path with no hook in it (`crate::port::Rest::with`).
pub struct NoMarking;

impl MarkingScheme for NoMarking {
    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }
    fn reset(&mut self) {}
}

/// Scheme names as written in scenario files (`marking.scheme`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchemeName {
    /// No AQM: tail drop only.
    None,
    /// Classic RED on the averaged queue length (`[marking.red]`).
    Red,
    /// DCTCP-RED on a queue's bytes (`[marking.threshold]` with scope = queue).
    PerQueue,
    /// DCTCP-RED on the port's bytes.
    PerPort,
    /// DCTCP-RED on the shared pool's bytes.
    PerPool,
    /// DCTCP-RED with the queue length seen at dequeue (TCN §4.3, Fig. 3).
    DequeueRed,
    /// DCTCP-RED as configured by `[marking.threshold]` (scope and hook given there).
    DctcpRed,
    /// Ideal ECN/RED: K_i = C_i x RTT x lambda with C_i estimated (TCN Alg. 1) or oracle.
    Ideal,
    /// MQ-ECN (round-robin schedulers only).
    MqEcn,
    /// CoDel (RFC 8289 / Linux), mark or drop mode.
    Codel,
    /// TCN: sojourn time threshold (TCN §4).
    #[default]
    Tcn,
    /// ECN#: instantaneous + persistent-queue marking (ECN# Alg. 1).
    EcnSharp,
    /// Dual AQM: one FIFO, one RED for ECT, one for non-ECT (Kühlewind et al.).
    Dualq,
}

impl SchemeName {
    pub const ALL: [SchemeName; 13] = [
        SchemeName::None,
        SchemeName::Red,
        SchemeName::PerQueue,
        SchemeName::PerPort,
        SchemeName::PerPool,
        SchemeName::DequeueRed,
        SchemeName::DctcpRed,
        SchemeName::Ideal,
        SchemeName::MqEcn,
        SchemeName::Codel,
        SchemeName::Tcn,
        SchemeName::EcnSharp,
        SchemeName::Dualq,
    ];
}

/// The `[marking]` table of a scenario: the chosen scheme plus every scheme's parameters,
/// so that `--set marking.scheme=...` switches between fully configured schemes.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MarkingConfig {
    pub scheme: SchemeName,
    /// Non-ECT packets where the scheme would mark. Defaults to `pass` (the datacenter
    /// schemes' authors' code); the dual AQM's classic instance drops by design.
    pub non_ect: NonEctPolicy,
    pub red: red::RedParams,
    pub threshold: threshold::ThresholdParams,
    pub ideal: ideal::IdealParams,
    pub mq_ecn: mq_ecn::MqEcnParams,
    pub codel: codel::CodelParams,
    pub tcn: tcn::TcnParams,
    pub ecn_sharp: ecn_sharp::EcnSharpParams,
    pub dualq: dualq::DualAqmParams,
}

/// A built marking scheme. Enum dispatch keeps the per-packet path free of virtual calls;
/// `Custom` keeps the trait open for extension.
pub enum Marking {
    None,
    Red(red::Red),
    Threshold(threshold::ThresholdEcn),
    Ideal(ideal::IdealEcn),
    MqEcn(mq_ecn::MqEcn),
    Codel(codel::Codel),
    Tcn(tcn::Tcn),
    EcnSharp(ecn_sharp::EcnSharp),
    Dualq(dualq::DualAqm),
    Custom(Box<dyn MarkingScheme + Send>),
}

/// A copy of a port's scheme, state included (the simulator copies a port to put it back
/// after a reader has seen it as it will be at a later time: `ecnlab_sim::wire`). A `Custom` scheme is a trait object and cannot be
/// copied; ports built from a scenario never hold one.
impl Clone for Marking {
    fn clone(&self) -> Self {
        match self {
            Marking::None => Marking::None,
            Marking::Red(s) => Marking::Red(s.clone()),
            Marking::Threshold(s) => Marking::Threshold(s.clone()),
            Marking::Ideal(s) => Marking::Ideal(s.clone()),
            Marking::MqEcn(s) => Marking::MqEcn(s.clone()),
            Marking::Codel(s) => Marking::Codel(s.clone()),
            Marking::Tcn(s) => Marking::Tcn(s.clone()),
            Marking::EcnSharp(s) => Marking::EcnSharp(s.clone()),
            Marking::Dualq(s) => Marking::Dualq(s.clone()),
            Marking::Custom(_) => panic!("a custom marking scheme cannot be copied"),
        }
    }
}

macro_rules! dispatch {
    ($self:expr, $s:ident => $e:expr, $none:expr) => {
        match $self {
            Marking::None => $none,
            Marking::Red($s) => $e,
            Marking::Threshold($s) => $e,
            Marking::Ideal($s) => $e,
            Marking::MqEcn($s) => $e,
            Marking::Codel($s) => $e,
            Marking::Tcn($s) => $e,
            Marking::EcnSharp($s) => $e,
            Marking::Dualq($s) => $e,
            Marking::Custom($s) => $e,
        }
    };
}

impl Marking {
    /// Build the scheme `cfg.scheme` for one port. Errors name the offending field.
    pub fn build(cfg: &MarkingConfig, ctx: &BuildCtx) -> Result<Marking, String> {
        use threshold::{Hook, Scope};
        let thr = |scope: Option<Scope>, hook: Option<Hook>| {
            let mut p = cfg.threshold.clone();
            if let Some(s) = scope {
                p.scope = s;
            }
            if let Some(h) = hook {
                p.at = h;
            }
            threshold::ThresholdEcn::new(&p, ctx).map(Marking::Threshold).map_err(|e| format!("marking.threshold.{e}"))
        };
        Ok(match cfg.scheme {
            SchemeName::None => Marking::None,
            SchemeName::Red => Marking::Red(red::Red::new(&cfg.red, ctx).map_err(|e| format!("marking.red.{e}"))?),
            SchemeName::PerQueue => thr(Some(Scope::Queue), Some(Hook::Enqueue))?,
            SchemeName::PerPort => thr(Some(Scope::Port), Some(Hook::Enqueue))?,
            SchemeName::PerPool => thr(Some(Scope::Pool), Some(Hook::Enqueue))?,
            SchemeName::DequeueRed => thr(Some(Scope::Queue), Some(Hook::Dequeue))?,
            SchemeName::DctcpRed => thr(None, None)?,
            SchemeName::Ideal => {
                Marking::Ideal(ideal::IdealEcn::new(&cfg.ideal, ctx).map_err(|e| format!("marking.ideal.{e}"))?)
            }
            SchemeName::MqEcn => {
                Marking::MqEcn(mq_ecn::MqEcn::new(&cfg.mq_ecn, ctx).map_err(|e| format!("marking.mq_ecn.{e}"))?)
            }
            SchemeName::Codel => {
                Marking::Codel(codel::Codel::new(&cfg.codel, ctx).map_err(|e| format!("marking.codel.{e}"))?)
            }
            SchemeName::Tcn => Marking::Tcn(tcn::Tcn::new(&cfg.tcn, ctx).map_err(|e| format!("marking.tcn.{e}"))?),
            SchemeName::EcnSharp => Marking::EcnSharp(
                ecn_sharp::EcnSharp::new(&cfg.ecn_sharp, ctx).map_err(|e| format!("marking.ecn_sharp.{e}"))?,
            ),
            SchemeName::Dualq => {
                Marking::Dualq(dualq::DualAqm::new(&cfg.dualq, ctx).map_err(|e| format!("marking.dualq.{e}"))?)
            }
        })
    }

    #[inline]
    pub fn on_enqueue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState) -> Decision {
        dispatch!(self, s => s.on_enqueue(now, pkt, q), Decision::Pass)
    }
    #[inline]
    pub fn on_dequeue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState, sojourn: Nanos) -> Decision {
        dispatch!(self, s => s.on_dequeue(now, pkt, q, sojourn), Decision::Pass)
    }
    pub fn needs_oracle_share(&self) -> bool {
        dispatch!(self, s => s.needs_oracle_share(), false)
    }
    /// The hooks the scheme acts on (`Marking::None`: neither).
    pub fn hooks(&self) -> Hooks {
        dispatch!(self, s => s.hooks(), Hooks::NONE)
    }
    /// Whether the scheme reads the scheduler's quantum and round time (MQ-ECN; custom
    /// schemes may). The port skips asking the scheduler otherwise.
    pub fn needs_round_info(&self) -> bool {
        matches!(self, Marking::MqEcn(_) | Marking::Custom(_))
    }
    pub fn reset(&mut self) {
        dispatch!(self, s => s.reset(), ())
    }
}

/// The built scheme as a [`MarkingScheme`]: a port whose scheme has no path of its own
/// (`crate::port::Port::run`, the portable path) runs the enum's, one match per call.
impl MarkingScheme for Marking {
    #[inline]
    fn on_enqueue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState) -> Decision {
        Marking::on_enqueue(self, now, pkt, q)
    }
    #[inline]
    fn on_dequeue(&mut self, now: Nanos, pkt: PacketView, q: &QueueState, sojourn: Nanos) -> Decision {
        Marking::on_dequeue(self, now, pkt, q, sojourn)
    }
    fn needs_oracle_share(&self) -> bool {
        Marking::needs_oracle_share(self)
    }
    fn hooks(&self) -> Hooks {
        Marking::hooks(self)
    }
    fn reset(&mut self) {
        Marking::reset(self)
    }
}

#[cfg(test)]
mod hooks_tests {
    use super::*;

    /// A hook a scheme declares unused (`hooks()`) is skipped by the port: it must answer
    /// `Pass` whatever the queue, so skipping it cannot change a decision. Checked for every
    /// scheme (and both `dctcp_red` hooks) on long queues, long sojourns and non-ECT packets.
    #[test]
    fn undeclared_hooks_always_pass() {
        let ctx = BuildCtx { n_queues: 2, link_rate_bps: 10_000_000_000, buffer_bytes: 1 << 30, seed: 1 };
        let mut configs: Vec<MarkingConfig> =
            SchemeName::ALL.iter().map(|&scheme| MarkingConfig { scheme, ..Default::default() }).collect();
        for hook in [threshold::Hook::Enqueue, threshold::Hook::Dequeue] {
            let mut c = MarkingConfig { scheme: SchemeName::DctcpRed, ..Default::default() };
            c.threshold.at = hook;
            configs.push(c);
        }
        let mut checked = 0;
        for cfg in configs {
            let mut m = Marking::build(&cfg, &ctx).unwrap_or_else(|e| panic!("{:?}: {e}", cfg.scheme));
            let hooks = m.hooks();
            for (i, bytes) in [0u64, 1_500, 100_000, 10_000_000, 500_000_000].into_iter().enumerate() {
                for ect in [true, false] {
                    let now = 1_000_000 * (i as u64 + 1);
                    let q = QueueState {
                        queue: i % 2,
                        n_queues: 2,
                        queue_bytes: bytes,
                        queue_pkts: (bytes / 1500) as u32,
                        port_bytes: bytes,
                        pool_bytes: bytes,
                        link_rate_bps: ctx.link_rate_bps,
                        quantum: Some(1500),
                        round_time_ns: Some(1e6),
                        oracle_share: 0.5,
                        strict_above: 0,
                    };
                    let pv = PacketView { size: 1500, ect };
                    if !hooks.enqueue {
                        assert_eq!(m.on_enqueue(now, pv, &q), Decision::Pass, "{:?} enqueue", cfg.scheme);
                        checked += 1;
                    }
                    if !hooks.dequeue {
                        assert_eq!(
                            m.on_dequeue(now, pv, &q, 1_000_000_000),
                            Decision::Pass,
                            "{:?} dequeue",
                            cfg.scheme
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked >= 100, "{checked}");
    }
}
