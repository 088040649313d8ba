//! Robustness of the marking library under arbitrary event sequences (issue 7).
//!
//! Every marking scheme x every scheduler, through real `Port`s that share a buffer pool,
//! on random traces with extreme but valid parameters: 1 and 8 (or 64) queues, quantum 1,
//! weights 1 and `u32::MAX`, 1-byte and 9000-byte packets, 1 kbps to 400 Gbps, thresholds
//! of one byte and of `u64::MAX`, many events at one instant, zero-length idle periods,
//! clocks near `u64::MAX` and across TCN's hardware-timestamp wrap-around (TCN §4.2) and
//! ECN#'s 32-bit switch clock (ECN# §4, Alg. 2).
//!
//! The tests run in the test profile, where overflow checks are on, so "no panic" also means
//! "no arithmetic overflow". Beyond that they check properties, with a model of every FIFO:
//! - buffer, per-queue limit and pool occupancy never exceed their limits and always equal
//!   the model's bytes (never "negative": they are unsigned and overflow-checked);
//! - per queue, arrivals = admitted + dropped at enqueue, and admitted = sent + dropped at
//!   dequeue + still queued, in packets and in bytes; per-reason drops add up to the
//!   port's running total;
//! - FIFO order within a queue, and packets leave from the queue they were classified to;
//! - work conservation: `dequeue` answers `None` only when nothing is left;
//! - the scheduler only ever selects a backlogged queue (checked directly, without a port,
//!   and, through the port, by the packet that comes out);
//! - a non-ECT packet is never CE-marked (a mark becomes `unmarkable` or a drop, per
//!   `non_ect`), mark counters only count ECT packets, and an ECT packet is never dropped
//!   by a scheme at enqueue; a scheme never answers with another scheme's reason, and only
//!   CoDel's drop mode and the dual AQM's classic instance (on non-ECT traffic) drop.
//!
//! Case counts are small so that the whole file runs in a few seconds in debug mode; set
//! `PROPTEST_CASES` for a longer soak (e.g. `PROPTEST_CASES=5000 cargo test --test robustness`).

use ecnlab_core::buffer::BufferPool;
use ecnlab_core::marking::codel::{CodelMode, CodelParams, InvSqrt};
use ecnlab_core::marking::dualq::{DualAqmParams, RedInstanceParams};
use ecnlab_core::marking::ecn_sharp::{EcnSharpParams, Signal, Spacing};
use ecnlab_core::marking::ideal::{Estimator, IdealParams, Variant};
use ecnlab_core::marking::mq_ecn::{MqEcnParams, RoundTimeVariant};
use ecnlab_core::marking::red::RedParams;
use ecnlab_core::marking::tcn::TcnParams;
use ecnlab_core::marking::threshold::{Hook, Scope, ThresholdParams};
use ecnlab_core::marking::{
    BuildCtx, Decision, Marking, MarkingConfig, NonEctPolicy, PacketView, QueueState, Reason, SchemeName,
};
use ecnlab_core::port::{Port, PortConfig, PortPacket};
use ecnlab_core::sched::{QueueOcc, Sched, Scheduler, SchedulerConfig, SchedulerKind};
use ecnlab_core::units::{ByteSize, Duration, Nanos};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::Config as ProptestConfig;
use std::collections::VecDeque;

/// `cases` unless the `PROPTEST_CASES` environment variable says otherwise.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(cases);
    // No regression files: a failure prints the minimal case, which goes into a named test.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------
// Strategies: extreme but valid parameters.
// ---------------------------------------------------------------------------------------

/// A byte count from one byte to `u64::MAX`, with the edges likely.
fn bytes_any() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => Just(1u64),
        2 => 1u64..100,
        4 => 1_000u64..1_000_000,
        1 => Just(u32::MAX as u64),
        1 => Just(u64::MAX / 2),
        1 => Just(u64::MAX),
        1 => any::<u64>(),
    ]
}

/// A duration from 0 to `u64::MAX` ns, with the edges likely.
fn nanos_any() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => Just(0u64),
        2 => 1u64..1_000,
        4 => 1_000u64..10_000_000,
        1 => Just(u64::MAX / 2),
        1 => Just(u64::MAX),
        1 => any::<u64>(),
    ]
}

/// A probability in (0, 1].
fn prob() -> impl Strategy<Value = f64> {
    prop_oneof![Just(1.0), Just(f64::MIN_POSITIVE), Just(1e-9), 1e-6f64..=1.0]
}

/// A packet size on the wire: 1 B to a 9000 B jumbo frame.
fn pkt_size() -> impl Strategy<Value = u32> {
    prop_oneof![Just(1u32), Just(64), Just(1500), Just(9000), 1u32..=9000]
}

/// A packet size as a caller might report it: mostly real sizes, rarely 0 (a runt or a bug
/// upstream, which must still flow through the port).
fn port_pkt_size() -> impl Strategy<Value = u32> {
    prop_oneof![30 => pkt_size(), 1 => Just(0u32)]
}

/// A link rate from 1 kbps to 400 Gbps.
fn link_rate() -> impl Strategy<Value = u64> {
    prop_oneof![Just(1_000u64), Just(400_000_000_000), Just(10_000_000_000), 1_000u64..=400_000_000_000]
}

fn red_params() -> impl Strategy<Value = RedParams> {
    (bytes_any(), bytes_any(), prop_oneof![Just(0.0), prob(), Just(1e6)], prob(), any::<bool>(), bytes_any()).prop_map(
        |(a, b, max_p, w, gentle, mean)| RedParams {
            min_th: ByteSize(a.min(b)),
            max_th: ByteSize(a.max(b)),
            max_p,
            w,
            gentle,
            mean_pkt_size: ByteSize(mean),
        },
    )
}

fn red_instance() -> impl Strategy<Value = RedInstanceParams> {
    prop_oneof![
        bytes_any().prop_map(|k| RedInstanceParams::step(ByteSize(k))),
        (bytes_any(), bytes_any(), prop_oneof![Just(0.0), prob(), Just(50.0)], prob()).prop_map(|(a, b, max_p, w)| {
            RedInstanceParams { min_th: ByteSize(a.min(b)), max_th: ByteSize(a.max(b)), max_p, w }
        }),
    ]
}

fn tcn_params() -> impl Strategy<Value = TcnParams> {
    let ramp = prop_oneof![
        Just(None),
        (nanos_any(), 1u64..10_000_000).prop_map(|(lo, w)| Some((lo.min(u64::MAX - w), lo.min(u64::MAX - w) + w))),
    ];
    // Counters that wrap often (few bits, short ticks), TCN §4.2's 16 x 8 ns, and wide ones.
    let stamp = prop_oneof![
        Just(None),
        (1u32..=63, prop_oneof![Just(1u64), Just(8), 1u64..10_000, Just(u64::MAX)]).prop_map(Some),
    ];
    (prop_oneof![Just(0u64), 1u64..100, 1_000u64..1_000_000, Just(u64::MAX - 1)], ramp, prob(), stamp).prop_map(
        |(threshold, ramp, p_max, stamp)| TcnParams {
            threshold: Duration(threshold),
            t_min: ramp.map(|r: (u64, u64)| Duration(r.0)),
            t_max: ramp.map(|r| Duration(r.1)),
            p_max,
            timestamp_bits: stamp.map(|s: (u32, u64)| s.0),
            timestamp_resolution: Duration(stamp.map_or(8, |s| s.1)),
        },
    )
}

fn ecn_sharp_params() -> impl Strategy<Value = EcnSharpParams> {
    let ramp = prop_oneof![
        2 => Just(None),
        1 => (nanos_any(), 1u64..10_000_000).prop_map(|(lo, w)| Some((lo.min(u64::MAX - w), lo.min(u64::MAX - w) + w))),
    ];
    let interval = prop_oneof![Just(1u64), 1u64..2_000_000, Just(1024 << 30), Just(u64::MAX / 2), Just(u64::MAX)];
    (
        nanos_any(),
        nanos_any(),
        interval,
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(bytes_any()),
        ramp,
        prob(),
        any::<bool>(),
    )
        .prop_map(|(ins, pst, interval, ns3, queue_length, bytes, ramp, p_max, faithful)| EcnSharpParams {
            ins_target: Duration(ins),
            pst_target: Duration(pst),
            pst_interval: Duration(interval),
            spacing: if ns3 && !faithful { Spacing::Ns3 } else { Spacing::Paper },
            signal: if queue_length { Signal::QueueLength } else { Signal::Sojourn },
            ins_target_bytes: bytes.filter(|_| queue_length).map(ByteSize),
            pst_target_bytes: bytes.filter(|_| queue_length).map(|b| ByteSize(b / 3)),
            ins_min: ramp.map(|r: (u64, u64)| Duration(r.0)),
            ins_max: ramp.map(|r| Duration(r.1)),
            p_max,
            switch_faithful: faithful,
        })
}

/// Every scheme's parameters at once; `n` queues (for `k_per_queue`).
fn marking_config(n: usize) -> impl Strategy<Value = MarkingConfig> {
    let threshold = (
        prop_oneof![Just(Scope::Queue), Just(Scope::Port), Just(Scope::Pool)],
        any::<bool>(),
        bytes_any(),
        proptest::option::of(proptest::collection::vec(bytes_any(), n)),
    )
        .prop_map(|(scope, deq, k, per_queue)| ThresholdParams {
            scope,
            at: if deq { Hook::Dequeue } else { Hook::Enqueue },
            k: ByteSize(k),
            k_per_queue: per_queue.unwrap_or_default().into_iter().map(ByteSize).collect(),
        });
    let ideal = (
        bytes_any(),
        any::<bool>(),
        bytes_any(),
        prop_oneof![Just(0.0), Just(0.875), Just(0.999_999), 0.0f64..1.0],
        any::<bool>(),
        prop_oneof![Just(1u64), nanos_any()],
    )
        .prop_map(|(k, oracle, dq_thresh, eps, baiwei, window)| IdealParams {
            k: ByteSize(k),
            estimator: if oracle { Estimator::Oracle } else { Estimator::DepartureRate },
            dq_thresh: ByteSize(dq_thresh),
            eps,
            variant: if baiwei { Variant::Baiwei0427 } else { Variant::Paper },
            oracle_window: Duration(window),
        });
    let codel = (
        nanos_any(),
        prop_oneof![Just(1u64), 1u64..10_000_000, Just(u64::MAX)],
        any::<bool>(),
        prop_oneof![Just(0u64), Just(1514), bytes_any()],
        any::<bool>(),
    )
        .prop_map(|(target, interval, drop, mtu, newton)| CodelParams {
            target: Duration(target),
            interval: Duration(interval),
            mode: if drop { CodelMode::Drop } else { CodelMode::Mark },
            mtu: ByteSize(mtu),
            inv_sqrt: if newton { InvSqrt::Newton } else { InvSqrt::Exact },
        });
    let mq_ecn = mq_ecn_params();
    let dualq = (red_instance(), red_instance(), bytes_any()).prop_map(|(scalable, classic, mean)| DualAqmParams {
        scalable,
        classic,
        mean_pkt_size: ByteSize(mean),
    });
    (
        proptest::sample::select(SchemeName::ALL.to_vec()),
        any::<bool>(),
        red_params().boxed(),
        threshold.boxed(),
        ideal.boxed(),
        mq_ecn.boxed(),
        codel.boxed(),
        tcn_params().boxed(),
        ecn_sharp_params().boxed(),
        dualq.boxed(),
    )
        .prop_map(|(scheme, drop_non_ect, red, threshold, ideal, mq_ecn, codel, tcn, ecn_sharp, dualq)| {
            MarkingConfig {
                scheme,
                non_ect: if drop_non_ect { NonEctPolicy::Drop } else { NonEctPolicy::Pass },
                red,
                threshold,
                ideal,
                mq_ecn,
                codel,
                tcn,
                ecn_sharp,
                dualq,
            }
        })
}

/// `[marking.mq_ecn]`: the threshold and MQ-ECN's round-time estimator, extremes included.
fn mq_ecn_params() -> impl Strategy<Value = MqEcnParams> {
    (
        bytes_any(),
        prop_oneof![Just(0.0), Just(0.75), Just(0.999_999), 0.0f64..1.0],
        prop_oneof![Just(None), Just(Some(0u64)), Just(Some(1u64)), nanos_any().prop_map(Some)],
        proptest::sample::select(vec![RoundTimeVariant::MqEcnNs2, RoundTimeVariant::TcnNs2, RoundTimeVariant::Linux]),
    )
        .prop_map(|(k, round_beta, slot, round_variant)| MqEcnParams {
            k: ByteSize(k),
            round_beta,
            round_idle_slot: slot.map(Duration),
            round_variant,
        })
}

fn scheduler_config(n: usize) -> impl Strategy<Value = SchedulerConfig> {
    let kinds = vec![
        SchedulerKind::Sp,
        SchedulerKind::Wrr,
        SchedulerKind::Dwrr,
        SchedulerKind::Wfq,
        SchedulerKind::SpWfq,
        SchedulerKind::SpDwrr,
    ];
    (
        proptest::sample::select(kinds),
        0..n.max(1),
        prop_oneof![Just(1u64), Just(1500), Just(9000), 1u64..20_000, Just(u32::MAX as u64), Just(u64::MAX)],
        proptest::collection::vec(prop_oneof![Just(1u32), 1u32..100, Just(u32::MAX)], n),
        any::<bool>(),
    )
        .prop_map(move |(kind, strict, quantum, mut weights, equal)| {
            let hier = matches!(kind, SchedulerKind::SpWfq | SchedulerKind::SpDwrr);
            if hier {
                weights.truncate(n - strict);
            }
            if equal {
                weights.clear();
            }
            SchedulerConfig { kind, strict, quantum: ByteSize(quantum), weights }
        })
}

/// Port configuration for `n` queues: shared buffer, optional per-queue limits, DSCP map, pool.
fn port_config(n: usize) -> impl Strategy<Value = PortConfig> {
    let limits = prop_oneof![
        Just(Vec::new()),
        bytes_any().prop_map(|l| vec![l]),
        proptest::collection::vec(prop_oneof![Just(1u64), 1u64..50_000, Just(u64::MAX)], n),
    ];
    (
        prop_oneof![Just(1u64), 1u64..20_000, 20_000u64..2_000_000, Just(u64::MAX)],
        limits,
        prop_oneof![Just(Vec::new()), proptest::collection::vec(0..n, 0..64)],
        scheduler_config(n).boxed(),
        proptest::option::of(prop_oneof![Just(1u64), 1u64..100_000, Just(u64::MAX - 1)]),
    )
        .prop_map(move |(buffer, limits, dscp, scheduler, pool)| PortConfig {
            queues: n,
            buffer: ByteSize(buffer),
            queue_limits: limits.into_iter().map(ByteSize).collect(),
            dscp_to_queue: dscp,
            scheduler,
            pool: pool.map(ByteSize),
            ..Default::default()
        })
}

fn n_queues() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(1usize), 6 => 2usize..=7, 3 => Just(8), 1 => Just(64)]
}

/// One step of a trace; two ports (0 and 1) draw from one pool.
#[derive(Clone, Copy, Debug)]
enum Op {
    Enq {
        port: u8,
        dscp: u8,
        size: u32,
        ect: bool,
    },
    /// `n` packets at the same instant.
    Burst {
        port: u8,
        dscp: u8,
        size: u32,
        ect: bool,
        n: u8,
    },
    Deq {
        port: u8,
    },
    /// Dequeue until empty, at the same instant.
    Drain {
        port: u8,
    },
    /// Advance the clock (0 = more events at the same instant).
    Wait(u64),
    /// PFC pauses (`on`) or resumes queue `queue % queues` of `port`.
    Pause {
        port: u8,
        queue: u8,
        on: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..2, 0u8..64, port_pkt_size(), any::<bool>()).prop_map(|(port, dscp, size, ect)| Op::Enq { port, dscp, size, ect }),
        1 => (0u8..2, 0u8..64, port_pkt_size(), any::<bool>(), 1u8..40).prop_map(|(port, dscp, size, ect, n)| Op::Burst { port, dscp, size, ect, n }),
        7 => (0u8..2).prop_map(|port| Op::Deq { port }),
        1 => (0u8..2).prop_map(|port| Op::Drain { port }),
        3 => Just(Op::Wait(0)),
        3 => (1u64..2_000).prop_map(Op::Wait),
        2 => (2_000u64..5_000_000).prop_map(Op::Wait),
        1 => (1u64 << 20..1u64 << 44).prop_map(Op::Wait),
        1 => any::<u64>().prop_map(Op::Wait),
        2 => (0u8..2, any::<u8>(), any::<bool>()).prop_map(|(port, queue, on)| Op::Pause { port, queue, on }),
    ]
}

/// Start of the trace: 0, anywhere, just below `u64::MAX`, or just below a wrap of a
/// typical timestamp counter (TCN §4.2's 16 bits x 8 ns; ECN#'s 2^32 ticks of 1024 ns).
fn start_time() -> impl Strategy<Value = Nanos> {
    prop_oneof![
        Just(0u64),
        any::<u64>(),
        (0u64..10_000_000).prop_map(|d| u64::MAX - d),
        (1u64..1000, 0u64..5_000).prop_map(|(k, d)| (k * (8 << 16)).saturating_sub(d)),
        (1u64..4, 0u64..5_000_000).prop_map(|(k, d)| (k << 42).saturating_sub(d)),
        (1u32..=63, 0u64..10_000).prop_map(|(b, d)| (1u64 << b).saturating_sub(d)),
    ]
}

// ---------------------------------------------------------------------------------------
// The port harness: two ports on one pool, with a model of every FIFO.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pkt {
    id: u64,
    size: u32,
    dscp: u8,
    ect: bool,
    ce: bool,
}

impl PortPacket for Pkt {
    fn wire_bytes(&self) -> u32 {
        self.size
    }
    fn is_ect(&self) -> bool {
        self.ect
    }
    fn set_ce(&mut self) {
        assert!(self.ect, "set_ce on a non-ECT packet");
        self.ce = true;
    }
    fn dscp(&self) -> u8 {
        self.dscp
    }
}

/// A packet as the model remembers it.
#[derive(Clone, Copy, Debug)]
struct Queued {
    id: u64,
    size: u32,
    ect: bool,
    /// CE set at enqueue.
    marked: bool,
}

/// Per-queue model counters.
#[derive(Clone, Debug, Default)]
struct Model {
    fifo: VecDeque<Queued>,
    bytes: u64,
    arrivals: u64,
    arrival_bytes: u64,
    enq_drops: u64,
    enq_drop_bytes: u64,
    deq_drops: u64,
    deq_drop_bytes: u64,
}

const ADMISSION: [Reason; 3] = [Reason::BufferFull, Reason::QueueLimit, Reason::PoolFull];

/// Reasons a scheme may give.
fn scheme_reasons(m: &MarkingConfig) -> Vec<Reason> {
    fn threshold_reason(scope: Scope) -> Reason {
        match scope {
            Scope::Queue => Reason::QueueThreshold,
            Scope::Port => Reason::PortThreshold,
            Scope::Pool => Reason::PoolThreshold,
        }
    }
    match m.scheme {
        SchemeName::None => vec![],
        SchemeName::Red => vec![Reason::RedProbabilistic, Reason::RedForced],
        SchemeName::PerQueue | SchemeName::DequeueRed => vec![Reason::QueueThreshold],
        SchemeName::PerPort => vec![Reason::PortThreshold],
        SchemeName::PerPool => vec![Reason::PoolThreshold],
        SchemeName::DctcpRed => vec![threshold_reason(m.threshold.scope)],
        SchemeName::Ideal => vec![Reason::IdealThreshold],
        SchemeName::MqEcn => vec![Reason::MqEcnThreshold],
        SchemeName::Codel => vec![Reason::Codel],
        SchemeName::Tcn => vec![Reason::TcnSojourn, Reason::TcnProbabilistic],
        SchemeName::EcnSharp => vec![Reason::EcnSharpInstantaneous, Reason::EcnSharpPersistent],
        SchemeName::Dualq => vec![Reason::DualqScalable, Reason::DualqClassic],
    }
}

struct Harness {
    ports: Vec<Port<Pkt>>,
    models: Vec<Vec<Model>>,
    pool: BufferPool,
    cfg: PortConfig,
    marking: MarkingConfig,
    limits: Vec<u64>,
    reasons: Vec<Reason>,
    now: Nanos,
    next_id: u64,
    /// Packets that came out, by ECT: (ect, non-ECT).
    sent: (u64, u64),
    /// Paused queues of each port (PFC), as the trace set them.
    paused: [u64; 2],
}

impl Harness {
    fn new(cfg: PortConfig, marking: MarkingConfig, rate: u64, now: Nanos) -> Result<Self, String> {
        let n = cfg.queues;
        let ports = (0..2).map(|s| Port::new(&cfg, &marking, rate, s)).collect::<Result<Vec<_>, _>>()?;
        let pool = cfg.pool.map_or(BufferPool::unlimited(), |b| BufferPool::new(b.0));
        let limits = match cfg.queue_limits.len() {
            0 => vec![u64::MAX; n],
            1 => vec![cfg.queue_limits[0].0; n],
            _ => cfg.queue_limits.iter().map(|b| b.0).collect(),
        };
        Ok(Harness {
            ports,
            models: vec![vec![Model::default(); n]; 2],
            pool,
            reasons: scheme_reasons(&marking),
            cfg,
            marking,
            limits,
            now,
            next_id: 0,
            sent: (0, 0),
            paused: [0; 2],
        })
    }

    fn enqueue(&mut self, p: usize, dscp: u8, size: u32, ect: bool) {
        let pkt = Pkt { id: self.next_id, size, dscp, ect, ce: false };
        self.next_id += 1;
        let port = &mut self.ports[p];
        let q = port.classify(dscp);
        assert!(q < self.cfg.queues);
        let before = port.stats()[q];
        let drops_before = port.total_drops();
        let occ = port.queue_occ()[q];
        let fits_buffer = port.bytes() + size as u64 <= self.cfg.buffer.0;
        let fits_queue = occ.bytes + size as u64 <= self.limits[q];
        let fits_pool = self.pool.used_bytes.saturating_add(size as u64) <= self.pool.limit_bytes;
        let res = port.enqueue(self.now, pkt, &mut self.pool);
        let after = &port.stats()[q];
        let m = &mut self.models[p][q];
        m.arrivals += 1;
        m.arrival_bytes += size as u64;
        let marks = after.total_marks() - before.total_marks();
        let unmarkable: u64 = after.unmarkable.iter().sum::<u64>() - before.unmarkable.iter().sum::<u64>();
        match res {
            Err((back, r)) => {
                assert_eq!(back.id, pkt.id, "the port handed back another packet");
                assert_eq!(port.total_drops(), drops_before + 1);
                assert_eq!(after.drops[r as usize], before.drops[r as usize] + 1, "{r:?} not counted");
                assert_eq!(after.enq_pkts, before.enq_pkts);
                let admission = match r {
                    Reason::BufferFull => !fits_buffer,
                    Reason::QueueLimit => fits_buffer && !fits_queue,
                    Reason::PoolFull => fits_buffer && fits_queue && !fits_pool,
                    _ => false,
                };
                if ADMISSION.contains(&r) {
                    assert!(admission, "{r:?} drop of {size} B although it fits");
                } else {
                    assert!(fits_buffer && fits_queue && fits_pool, "admitted over a limit");
                    assert!(self.reasons.contains(&r), "{r:?} is not a reason of {:?}", self.marking.scheme);
                    // A scheme drops at enqueue only a non-ECT packet: its own choice (dual
                    // AQM classic) or a mark under `non_ect = "drop"`.
                    assert!(!ect, "ECT packet dropped at enqueue by {:?} ({r:?})", self.marking.scheme);
                    if r != Reason::DualqClassic {
                        assert_eq!(self.marking.non_ect, NonEctPolicy::Drop, "{r:?}");
                    }
                }
                assert_eq!(marks, 0);
                m.enq_drops += 1;
                m.enq_drop_bytes += size as u64;
            }
            Ok(()) => {
                assert!(fits_buffer && fits_queue && fits_pool, "admitted over a limit");
                assert!(marks <= 1 && unmarkable <= 1 && marks + unmarkable <= 1);
                assert!(marks == 0 || ect, "mark counted for a non-ECT packet");
                assert!(unmarkable == 0 || (!ect && self.marking.non_ect == NonEctPolicy::Pass));
                assert_eq!(after.enq_pkts, before.enq_pkts + 1);
                m.fifo.push_back(Queued { id: pkt.id, size, ect, marked: marks == 1 });
                m.bytes += size as u64;
            }
        }
    }

    /// One `Port::dequeue`; returns whether a packet came out.
    fn dequeue(&mut self, p: usize) -> bool {
        let port = &mut self.ports[p];
        let before: Vec<_> = port.stats().to_vec();
        let was_empty = self.models[p].iter().all(|m| m.fifo.is_empty());
        assert_eq!(port.is_empty(), was_empty);
        let out = port.dequeue(self.now, &mut self.pool);
        let after = port.stats();
        let mut marks_total = 0;
        for q in 0..self.cfg.queues {
            let (b, a) = (&before[q], &after[q]);
            for r in ADMISSION {
                assert_eq!(a.drops[r as usize], b.drops[r as usize], "admission drop at dequeue");
            }
            let dropped = a.total_drops() - b.total_drops();
            let codel = a.drops[Reason::Codel as usize] - b.drops[Reason::Codel as usize];
            let m = &mut self.models[p][q];
            let mut non_ect_dropped = 0;
            for _ in 0..dropped {
                let h = m.fifo.pop_front().expect("a drop at dequeue from an empty queue");
                m.bytes -= h.size as u64;
                m.deq_drops += 1;
                m.deq_drop_bytes += h.size as u64;
                non_ect_dropped += !h.ect as u64;
            }
            // Drops at dequeue: CoDel's drop mode, or a mark of a non-ECT packet under `drop`.
            let policy_drop = self.marking.non_ect == NonEctPolicy::Drop;
            if self.marking.codel.mode == CodelMode::Mark {
                assert!(dropped == 0 || policy_drop, "queue {q}: drop at dequeue without a reason to");
                assert!(dropped <= non_ect_dropped, "queue {q}: an ECT packet dropped for a mark");
            } else if !policy_drop {
                assert_eq!(dropped, codel, "queue {q}: non-CoDel drop at dequeue under non_ect = pass");
            } else {
                assert!(dropped - codel <= non_ect_dropped, "queue {q}: an ECT packet dropped for a mark");
            }
            marks_total += a.total_marks() - b.total_marks();
        }
        assert!(marks_total <= 1, "more than one mark for one departure");
        match out {
            None => {
                let paused = self.paused[p];
                let idle = self.models[p].iter().enumerate().all(|(q, m)| m.fifo.is_empty() || paused >> q & 1 == 1);
                assert!(idle, "port idles with a backlog that is not paused");
                assert_eq!(marks_total, 0);
                false
            }
            Some((pkt, q)) => {
                assert!(!was_empty, "a packet out of an empty port");
                assert_eq!(self.paused[p] >> q & 1, 0, "a packet out of paused queue {q}");
                assert_eq!(self.ports[p].classify(pkt.dscp), q, "left from another queue than classified");
                let m = &mut self.models[p][q];
                let h = m.fifo.pop_front().expect("the scheduler chose an empty queue");
                assert_eq!(h.id, pkt.id, "reordering within queue {q}");
                m.bytes -= h.size as u64;
                assert!(pkt.ect || !pkt.ce, "non-ECT packet left with CE");
                assert_eq!(pkt.ce, h.marked || marks_total == 1, "CE without a counted mark (or the reverse)");
                if pkt.ect {
                    self.sent.0 += 1;
                } else {
                    self.sent.1 += 1;
                }
                true
            }
        }
    }

    fn check(&self) {
        let mut pool_bytes = 0;
        for (p, port) in self.ports.iter().enumerate() {
            let models = &self.models[p];
            let total: u64 = models.iter().map(|m| m.bytes).sum();
            assert_eq!(port.bytes(), total, "port {p} bytes");
            assert!(port.bytes() <= self.cfg.buffer.0, "port {p} over its buffer");
            pool_bytes += port.bytes();
            let mut drops = 0;
            for (q, (m, (occ, st))) in models.iter().zip(port.queue_occ().iter().zip(port.stats())).enumerate() {
                assert_eq!(occ.bytes, m.bytes, "queue {q} bytes");
                assert_eq!(occ.pkts as usize, m.fifo.len(), "queue {q} packets");
                assert_eq!(occ.head_bytes, m.fifo.front().map_or(0, |h| h.size), "queue {q} head");
                assert!(occ.bytes <= self.limits[q], "queue {q} over its limit");
                assert!(st.max_bytes >= occ.bytes);
                // Conservation, packets and bytes.
                assert_eq!(m.arrivals, st.enq_pkts + m.enq_drops, "queue {q}: arrivals");
                assert_eq!(m.arrival_bytes, st.enq_bytes + m.enq_drop_bytes, "queue {q}: arrival bytes");
                assert_eq!(st.enq_pkts, st.deq_pkts + m.deq_drops + occ.pkts as u64, "queue {q}: packets");
                assert_eq!(st.enq_bytes, st.deq_bytes + m.deq_drop_bytes + occ.bytes, "queue {q}: bytes");
                assert_eq!(st.total_drops(), m.enq_drops + m.deq_drops, "queue {q}: drops by reason");
                for r in Reason::ALL {
                    let i = r as usize;
                    if !ADMISSION.contains(&r) && !self.reasons.contains(&r) {
                        assert_eq!(st.marks[i] + st.drops[i] + st.unmarkable[i], 0, "foreign reason {r:?}");
                    }
                }
                if self.marking.non_ect == NonEctPolicy::Drop {
                    assert_eq!(st.unmarkable.iter().sum::<u64>(), 0);
                }
                drops += st.total_drops();
            }
            assert_eq!(port.total_drops(), drops, "port {p}: running total of drops");
        }
        assert_eq!(self.pool.used_bytes, pool_bytes, "pool bytes");
        if self.cfg.pool.is_some() {
            assert!(self.pool.used_bytes <= self.pool.limit_bytes, "pool over its limit");
        }
    }

    fn run(&mut self, ops: &[Op]) {
        for &op in ops {
            match op {
                Op::Enq { port, dscp, size, ect } => self.enqueue(port as usize, dscp, size, ect),
                Op::Burst { port, dscp, size, ect, n } => {
                    for _ in 0..n {
                        self.enqueue(port as usize, dscp, size, ect);
                    }
                }
                Op::Deq { port } => {
                    self.dequeue(port as usize);
                }
                Op::Drain { port } => {
                    let mut guard = 0;
                    while self.dequeue(port as usize) {
                        guard += 1;
                        assert!(guard <= 100_000, "drain does not end");
                    }
                }
                Op::Wait(dt) => self.now = self.now.saturating_add(dt),
                Op::Pause { port, queue, on } => {
                    let (p, q) = (port as usize, queue as usize % self.cfg.queues);
                    let changed = self.ports[p].set_paused(self.now, q, on);
                    assert_eq!(changed, (self.paused[p] >> q & 1 == 1) != on, "pause state of queue {q}");
                    self.paused[p] = self.paused[p] & !(1 << q) | (on as u64) << q;
                    assert_eq!(self.ports[p].is_paused(q), on);
                }
            }
            self.check();
        }
        // The time integrals stay consistent up to the last instant.
        for port in &mut self.ports {
            port.advance_clock(self.now);
        }
    }
}

/// Everything a port-level case needs.
fn port_case() -> impl Strategy<Value = (PortConfig, MarkingConfig, u64, Nanos, Vec<Op>)> {
    n_queues().prop_flat_map(|n| {
        (
            port_config(n).boxed(),
            marking_config(n).boxed(),
            link_rate().boxed(),
            start_time().boxed(),
            proptest::collection::vec(op().boxed(), 1..120).boxed(),
        )
    })
}

proptest! {
    #![proptest_config(config(160))]

    /// Any scheme x any scheduler x any buffer layout, on any trace: no panic, and every
    /// property listed in the module doc.
    #[test]
    fn port_survives_any_trace((cfg, marking, rate, start, ops) in port_case()) {
        if let Ok(mut h) = Harness::new(cfg, marking, rate, start) {
            h.run(&ops);
        }
    }
}

/// Every scheme x every scheduler, each pair at least once, with sane parameters (so that
/// none is skipped by validation) and a busy trace through a shared pool.
#[test]
fn every_scheme_with_every_scheduler() {
    use SchedulerKind::*;
    let kinds = [Sp, Wrr, Dwrr, Wfq, SpWfq, SpDwrr];
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let ops = proptest::collection::vec(op(), 300..301);
    for scheme in SchemeName::ALL {
        for kind in kinds {
            for (n, limits, pool) in [(1, vec![], None), (4, vec![ByteSize(30_000)], Some(ByteSize(60_000)))] {
                if n == 1 && matches!(kind, SpWfq | SpDwrr) {
                    continue; // needs a weighted queue next to the strict one
                }
                let cfg = PortConfig {
                    queues: n,
                    buffer: ByteSize(100_000),
                    queue_limits: limits,
                    scheduler: SchedulerConfig { kind, quantum: ByteSize(1), weights: vec![], ..Default::default() },
                    pool,
                    ..Default::default()
                };
                let mut marking = MarkingConfig { scheme, ..Default::default() };
                marking.codel.mode = CodelMode::Drop;
                marking.codel.target = Duration(1_000);
                marking.codel.interval = Duration(10_000);
                marking.tcn.timestamp_bits = Some(16);
                marking.ecn_sharp.switch_faithful = true;
                for non_ect in [NonEctPolicy::Pass, NonEctPolicy::Drop] {
                    marking.non_ect = non_ect;
                    let trace = ops.new_tree(&mut runner).unwrap().current();
                    let start = u64::MAX - 20_000_000;
                    let mut h = Harness::new(cfg.clone(), marking.clone(), 10_000_000_000, start)
                        .unwrap_or_else(|e| panic!("{scheme:?} x {kind:?}: {e}"));
                    h.run(&trace);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Schedulers alone: `select` only ever returns a backlogged queue.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum SOp {
    Push { queue: usize, size: u32 },
    Pop,
    Wait(u64),
}

fn sched_case() -> impl Strategy<Value = ((SchedulerConfig, MqEcnParams), usize, u64, Nanos, Vec<SOp>)> {
    prop_oneof![Just(1usize), 2usize..=8, Just(64)].prop_flat_map(|n| {
        let sop = prop_oneof![
            5 => (0..n, pkt_size()).prop_map(|(queue, size)| SOp::Push { queue, size }),
            5 => Just(SOp::Pop),
            2 => prop_oneof![Just(0u64), 1u64..10_000, any::<u64>()].prop_map(SOp::Wait),
        ];
        (
            (scheduler_config(n), mq_ecn_params()).boxed(),
            Just(n),
            link_rate().boxed(),
            start_time().boxed(),
            proptest::collection::vec(sop.boxed(), 1..300).boxed(),
        )
    })
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn scheduler_selects_only_backlogged_queues(((cfg, round), n, rate, start, ops) in sched_case()) {
        let Ok(mut s) = Sched::build(&cfg, n, rate) else { return Ok(()) };
        s.configure_round_time(&round);
        let strict = match cfg.kind {
            SchedulerKind::Sp => n,
            SchedulerKind::SpWfq | SchedulerKind::SpDwrr => cfg.strict,
            _ => 0,
        };
        let mut fifos: Vec<VecDeque<u32>> = vec![VecDeque::new(); n];
        let mut occ = vec![QueueOcc::default(); n];
        let mut now = start;
        for op in ops {
            match op {
                SOp::Push { queue, size } => {
                    fifos[queue].push_back(size);
                    let o = &mut occ[queue];
                    if o.pkts == 0 {
                        o.head_bytes = size;
                    }
                    o.pkts += 1;
                    o.bytes += size as u64;
                    s.on_enqueue(now, queue, size, &occ);
                }
                SOp::Pop => {
                    if occ.iter().all(QueueOcc::is_empty) {
                        continue;
                    }
                    let q = s.select(now, &occ);
                    prop_assert!(q < n, "queue {} of {}", q, n);
                    prop_assert!(!occ[q].is_empty(), "selected empty queue {}", q);
                    // Strict priority: no higher strict queue waits.
                    let first = occ.iter().position(|o| !o.is_empty()).unwrap();
                    if first < strict {
                        prop_assert_eq!(q, first, "strict priority violated");
                    }
                    let size = fifos[q].pop_front().unwrap();
                    let o = &mut occ[q];
                    o.pkts -= 1;
                    o.bytes -= size as u64;
                    o.head_bytes = fifos[q].front().copied().unwrap_or(0);
                    s.on_dequeue(now, q, size, &occ);
                }
                SOp::Wait(dt) => now = now.saturating_add(dt),
            }
            if let Some(t) = s.round_time_ns() {
                prop_assert!(t >= 0.0 && !t.is_nan(), "round time {}", t);
            }
            for q in 0..n {
                let share = s.share(q, &occ);
                prop_assert!((0.0..=1.0).contains(&share), "share {} of queue {}", share, q);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Schemes alone, on arbitrary (even inconsistent) views and non-monotonic clocks.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct SchemeEv {
    dequeue: bool,
    now: Nanos,
    sojourn: Nanos,
    size: u32,
    ect: bool,
    queue: usize,
    queue_bytes: u64,
    port_bytes: u64,
    quantum: Option<u32>,
    round_time_ns: Option<f64>,
    oracle_share: f64,
}

fn scheme_ev(n: usize) -> impl Strategy<Value = SchemeEv> {
    (
        any::<bool>(),
        prop_oneof![nanos_any(), start_time()],
        nanos_any(),
        prop_oneof![Just(0u32), pkt_size(), Just(u32::MAX)],
        any::<bool>(),
        0..n,
        prop_oneof![Just(0u64), bytes_any()],
        bytes_any(),
        proptest::option::of(prop_oneof![Just(0u32), Just(1), any::<u32>()]),
        proptest::option::of(prop_oneof![Just(0.0), Just(1.0), Just(f64::INFINITY), Just(f64::NAN), 0.0f64..1e12]),
        prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0],
    )
        .prop_map(
            |(
                dequeue,
                now,
                sojourn,
                size,
                ect,
                queue,
                queue_bytes,
                port_bytes,
                quantum,
                round_time_ns,
                oracle_share,
            )| {
                SchemeEv {
                    dequeue,
                    now,
                    sojourn,
                    size,
                    ect,
                    queue,
                    queue_bytes,
                    port_bytes,
                    quantum,
                    round_time_ns,
                    oracle_share,
                }
            },
        )
}

fn scheme_case() -> impl Strategy<Value = (MarkingConfig, usize, u64, u64, Vec<SchemeEv>)> {
    prop_oneof![Just(1usize), 2usize..=8].prop_flat_map(|n| {
        (
            marking_config(n).boxed(),
            Just(n),
            link_rate().boxed(),
            bytes_any().boxed(),
            proptest::collection::vec(scheme_ev(n).boxed(), 1..200).boxed(),
        )
    })
}

proptest! {
    #![proptest_config(config(300))]

    /// The narrow interface on its own: whatever a caller hands in (sizes of 0 and
    /// `u32::MAX`, occupancies up to `u64::MAX`, clocks that jump back, NaN round times),
    /// a scheme answers without panicking, with one of its own reasons, and drops only
    /// where its paper says it does.
    #[test]
    fn scheme_answers_any_view((marking, n, rate, buffer, evs) in scheme_case()) {
        let ctx = BuildCtx { n_queues: n, link_rate_bps: rate, buffer_bytes: buffer, seed: 5 };
        let Ok(mut s) = Marking::build(&marking, &ctx) else { return Ok(()) };
        let reasons = scheme_reasons(&marking);
        for (i, e) in evs.iter().enumerate() {
            let q = QueueState {
                queue: e.queue,
                n_queues: n,
                queue_bytes: e.queue_bytes,
                queue_pkts: e.queue_bytes.min(u32::MAX as u64) as u32,
                port_bytes: e.port_bytes.max(e.queue_bytes),
                pool_bytes: e.port_bytes,
                link_rate_bps: rate,
                quantum: e.quantum,
                round_time_ns: e.round_time_ns,
                oracle_share: e.oracle_share,
                strict_above: e.queue,
            };
            let pkt = PacketView { size: e.size, ect: e.ect };
            let d = if e.dequeue { s.on_dequeue(e.now, pkt, &q, e.sojourn) } else { s.on_enqueue(e.now, pkt, &q) };
            match d {
                Decision::Pass => {}
                Decision::Mark(r) => {
                    prop_assert!(reasons.contains(&r), "{:?} marks with {:?}", marking.scheme, r);
                    // The dual AQM classifies by ECN capability: it never asks to mark non-ECT.
                    prop_assert!(r != Reason::DualqClassic);
                    prop_assert!(marking.scheme != SchemeName::Dualq || e.ect, "dual AQM marks non-ECT");
                }
                Decision::Drop(r) => {
                    prop_assert!(reasons.contains(&r), "{:?} drops with {:?}", marking.scheme, r);
                    let codel = r == Reason::Codel && marking.codel.mode == CodelMode::Drop && e.dequeue;
                    let classic = r == Reason::DualqClassic && !e.ect && !e.dequeue;
                    prop_assert!(codel || classic, "{:?} drops {:?}", marking.scheme, e);
                }
            }
            if i == evs.len() / 2 {
                s.reset();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Regressions: each panic the properties above found, as a named case.
// ---------------------------------------------------------------------------------------

/// MQ-ECN's round-time samples (TCN §3.3; MQ-ECN NSDI'16 §3) end at "dequeue time + the
/// packet's transmission time"; near the end of the u64 clock that sum overflowed in every
/// variant (`RoundTime::on_sent`, `on_empty`). It now saturates.
#[test]
fn round_time_near_the_end_of_the_clock() {
    for kind in [SchedulerKind::Dwrr, SchedulerKind::Wrr, SchedulerKind::SpDwrr] {
        for round_variant in [RoundTimeVariant::MqEcnNs2, RoundTimeVariant::TcnNs2, RoundTimeVariant::Linux] {
            let cfg = SchedulerConfig { kind, strict: 0, ..Default::default() };
            let mut s = Sched::build(&cfg, 2, 1_000).unwrap(); // 1 kbps: 12 s per 1500 B packet
            s.configure_round_time(&MqEcnParams { round_variant, ..Default::default() });
            let mut occ = vec![QueueOcc { bytes: 1500, pkts: 1, head_bytes: 1500 }, QueueOcc::default()];
            let now = u64::MAX - 10;
            s.on_enqueue(now, 0, 1500, &occ);
            assert_eq!(s.select(now, &occ), 0);
            occ[0] = QueueOcc::default();
            s.on_dequeue(now, 0, 1500, &occ);
            let t = s.round_time_ns().expect("the emptying sample");
            assert!(t.is_finite() && t >= 0.0, "{kind:?} {round_variant:?}: {t}");
        }
    }
}

/// RED's idle period starts when the last packet has been serialized (Floyd & Jacobson
/// 1993 §4 "q_time"; dual AQM §II-A uses the same RED); `now + tx` overflowed for a queue
/// emptying near the end of the clock, in RED and in both instances of the dual AQM.
#[test]
fn red_idle_start_near_the_end_of_the_clock() {
    for scheme in [SchemeName::Red, SchemeName::Dualq] {
        let ctx = BuildCtx { n_queues: 1, link_rate_bps: 1_000, buffer_bytes: 1 << 20, seed: 1 };
        let mut s = Marking::build(&MarkingConfig { scheme, ..Default::default() }, &ctx).unwrap();
        let empty = QueueState {
            queue: 0,
            n_queues: 1,
            queue_bytes: 0,
            queue_pkts: 0,
            port_bytes: 0,
            pool_bytes: 0,
            link_rate_bps: 1_000,
            quantum: None,
            round_time_ns: None,
            oracle_share: 1.0,
            strict_above: 0,
        };
        let pkt = PacketView { size: 1500, ect: true };
        assert_eq!(s.on_dequeue(u64::MAX - 1, pkt, &empty, 0), Decision::Pass);
        let one = QueueState { queue_bytes: 1500, queue_pkts: 1, port_bytes: 1500, pool_bytes: 1500, ..empty };
        assert_eq!(s.on_enqueue(u64::MAX, pkt, &one), Decision::Pass, "{scheme:?}");
    }
}

/// TCN Algorithm 1 as the authors' code runs it (§3.3; REFERENCE-IMPLEMENTATIONS §2.4):
/// the measurement interval ends after the last packet's transmission, `now + tx`, which
/// overflowed near the end of the clock.
#[test]
fn ideal_baiwei_cycle_near_the_end_of_the_clock() {
    let p = IdealParams { dq_thresh: ByteSize(1), variant: Variant::Baiwei0427, ..Default::default() };
    let ctx = BuildCtx { n_queues: 1, link_rate_bps: 10_000_000_000, buffer_bytes: 1 << 20, seed: 1 };
    let mut s =
        Marking::build(&MarkingConfig { scheme: SchemeName::Ideal, ideal: p, ..Default::default() }, &ctx).unwrap();
    let q = QueueState {
        queue: 0,
        n_queues: 1,
        queue_bytes: 3000,
        queue_pkts: 2,
        port_bytes: 3000,
        pool_bytes: 3000,
        link_rate_bps: 10_000_000_000,
        quantum: None,
        round_time_ns: None,
        oracle_share: 1.0,
        strict_above: 0,
    };
    for now in [u64::MAX - 2000, u64::MAX - 1000, u64::MAX] {
        assert_eq!(s.on_dequeue(now, PacketView { size: 1500, ect: true }, &q, 0), Decision::Pass);
    }
}

/// ECN# §4 (Alg. 2): the switch clock ticks every 1024 ns, so `pst_interval` is rounded to
/// whole ticks; rounding `u64::MAX` ns overflowed while building the scheme, reachable from
/// a scenario file (`pst_interval = 18446744073709551615`). It is now rejected as too long.
#[test]
fn ecn_sharp_switch_interval_near_u64_max_is_an_error() {
    let ctx = BuildCtx { n_queues: 1, link_rate_bps: 10_000_000_000, buffer_bytes: 1 << 20, seed: 1 };
    for ns in [u64::MAX, u64::MAX - 511, u64::MAX / 2] {
        let p = EcnSharpParams { pst_interval: Duration(ns), switch_faithful: true, ..Default::default() };
        let m = MarkingConfig { scheme: SchemeName::EcnSharp, ecn_sharp: p, ..Default::default() };
        let e = Marking::build(&m, &ctx).err().expect("2^30 ticks at most");
        assert!(e.starts_with("marking.ecn_sharp.pst_interval:"), "{e}");
    }
}

/// Unit conversions saturate instead of wrapping: 4 GB at 1 bps takes longer than the u64
/// clock, and ECN#'s queue-length variant converts a `u64::MAX` target to bytes (Eq. 2,
/// K = T x C), which used to wrap to a small threshold.
#[test]
fn unit_conversions_saturate() {
    use ecnlab_core::units::{bytes_in, tx_time_ns};
    assert_eq!(tx_time_ns(u32::MAX as u64, 1), u64::MAX);
    assert_eq!(tx_time_ns(u64::MAX, 1), u64::MAX);
    assert_eq!(tx_time_ns(1500, 10_000_000_000), 1200);
    assert_eq!(bytes_in(u64::MAX, 400_000_000_000), u64::MAX);
    assert_eq!(bytes_in(1200, 10_000_000_000), 1500);
}

/// A packet the caller reports as 0 bytes (a runt, or a bug upstream) still occupies a
/// FIFO slot. `Port::dequeue` used to test for an empty port by its bytes only, so a
/// queue holding only such packets answered `None` forever while `is_empty()` was false:
/// the port idled with a backlog. It now counts packets.
#[test]
fn zero_byte_packets_leave_too() {
    for kind in [SchedulerKind::Sp, SchedulerKind::Dwrr, SchedulerKind::Wrr, SchedulerKind::Wfq] {
        let cfg =
            PortConfig { queues: 2, scheduler: SchedulerConfig { kind, ..Default::default() }, ..Default::default() };
        let mut port: Port<Pkt> = Port::new(&cfg, &MarkingConfig::default(), 10_000_000_000, 1).unwrap();
        let mut pool = BufferPool::unlimited();
        for (id, (size, dscp)) in [(0, 1), (1500, 0), (0, 0)].into_iter().enumerate() {
            let p = Pkt { id: id as u64, size, dscp, ect: true, ce: false };
            port.enqueue(0, p, &mut pool).unwrap();
        }
        let out: Vec<u64> = std::iter::from_fn(|| port.dequeue(10, &mut pool)).map(|(p, _)| p.id).collect();
        assert_eq!(out.len(), 3, "{kind:?}: {out:?}");
        assert!(port.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// Hardware clocks: TCN's timestamp counter (TCN §4.2) and ECN#'s switch clock (ECN# §4).
// ---------------------------------------------------------------------------------------

/// The sojourn a `bits`-wide counter of `res`-ns ticks measures (TCN §4.2), in u128.
fn tcn_reference(now: u64, sojourn: u64, bits: u32, res: u64) -> u64 {
    let wrap = 1u128 << bits;
    let counter = |t: u64| (t / res) as u128 % wrap;
    let ticks = (counter(now) + wrap - counter(now.saturating_sub(sojourn))) % wrap;
    (ticks * res as u128).min(u64::MAX as u128) as u64
}

fn tcn_with_stamp(bits: u32, res: u64, threshold: u64) -> Option<Marking> {
    let p = TcnParams {
        threshold: Duration(threshold),
        timestamp_bits: Some(bits),
        timestamp_resolution: Duration(res),
        ..Default::default()
    };
    let ctx = BuildCtx { n_queues: 1, link_rate_bps: 10_000_000_000, buffer_bytes: 1 << 20, seed: 1 };
    Marking::build(&MarkingConfig { scheme: SchemeName::Tcn, tcn: p, ..Default::default() }, &ctx).ok()
}

fn one_queue_view() -> QueueState {
    QueueState {
        queue: 0,
        n_queues: 1,
        queue_bytes: 1500,
        queue_pkts: 1,
        port_bytes: 1500,
        pool_bytes: 1500,
        link_rate_bps: 10_000_000_000,
        quantum: None,
        round_time_ns: None,
        oracle_share: 1.0,
        strict_above: 0,
    }
}

proptest! {
    #![proptest_config(config(500))]

    /// TCN §4.2 with any counter width (1..=63 bits) and tick (1 ns .. 2^40 ns), at instants
    /// anywhere up to `u64::MAX`, around the counter's wrap: the decision is exactly
    /// "measured sojourn > T" with the measurement done in u128, and shifting the clock by
    /// whole ticks (across wraps and up to the end of the u64 clock) changes nothing.
    #[test]
    fn tcn_timestamp_counter_anywhere_on_the_clock(
        bits in 1u32..=63,
        res in prop_oneof![Just(1u64), Just(8), 1u64..1_000_000, Just(1u64 << 40)],
        thr_frac in 0.0f64..1.0,
        base in prop_oneof![any::<u64>(), (0u64..1 << 20).prop_map(|d| u64::MAX - d), (1u32..=63).prop_map(|b| 1u64 << b)],
        sojourn in prop_oneof![0u64..100_000, any::<u64>()],
        shift_ticks in any::<u64>(),
    ) {
        let range = ((1u128 << bits) - 1) * res as u128;
        let threshold = ((range.min(u64::MAX as u128) as f64) * thr_frac) as u64;
        let Some(mut tcn) = tcn_with_stamp(bits, res, threshold.min((range - 1).min(u64::MAX as u128) as u64)) else {
            return Ok(());
        };
        let threshold = threshold.min((range - 1).min(u64::MAX as u128) as u64);
        let pkt = PacketView { size: 1500, ect: true };
        let q = one_queue_view();
        let d = tcn.on_dequeue(base, pkt, &q, sojourn);
        let measured = tcn_reference(base, sojourn, bits, res);
        prop_assert_eq!(d == Decision::Mark(Reason::TcnSojourn), measured > threshold, "measured {}", measured);
        prop_assert!(d == Decision::Pass || d == Decision::Mark(Reason::TcnSojourn));
        // Shift both instants by whole ticks, staying within the clock and above the enqueue.
        let sojourn = sojourn.min(base);
        let room = (u64::MAX - base) / res;
        let later = base + (shift_ticks % (room + 1)) * res;
        let d2 = tcn.on_dequeue(later, pkt, &q, sojourn);
        prop_assert_eq!(d2, tcn.on_dequeue(base, pkt, &q, sojourn), "shift {} -> {}", base, later);
    }

    /// ECN# on the switch's 32-bit clock of 1024-ns ticks (§4, Alg. 2; wraps every ~73 min):
    /// since its comparisons are wrap-safe, a trace gives the same decisions wherever it
    /// lies on the clock, across the wrap included, and near the end of the u64 clock.
    #[test]
    fn ecn_sharp_switch_clock_is_translation_invariant(
        interval_ticks in prop_oneof![1u64..64, 64u64..20_000],
        pst_target in 0u64..200_000,
        ins_target in prop_oneof![0u64..2_000_000, Just(u64::MAX)],
        trace in proptest::collection::vec((prop_oneof![0u64..5_000, 0u64..400_000], 0u64..400_000), 1..300),
        start_a in 0u64..1 << 30,
        wraps in 0u64..4,
        before_wrap in 0u64..20_000_000,
        end_of_clock in any::<bool>(),
    ) {
        let p = EcnSharpParams {
            ins_target: Duration(ins_target),
            pst_target: Duration(pst_target),
            pst_interval: Duration(interval_ticks * 1024),
            switch_faithful: true,
            ..Default::default()
        };
        let ctx = BuildCtx { n_queues: 1, link_rate_bps: 10_000_000_000, buffer_bytes: 1 << 20, seed: 1 };
        let m = MarkingConfig { scheme: SchemeName::EcnSharp, ecn_sharp: p, ..Default::default() };
        let span: u64 = trace.iter().map(|t| t.0).sum();
        let off_a = start_a * 1024;
        let off_b = if end_of_clock {
            (u64::MAX - span) / 1024 * 1024 - before_wrap / 1024 * 1024
        } else {
            ((wraps + 1) << 42) - before_wrap / 1024 * 1024
        };
        let decide = |off: u64| -> Option<Vec<Decision>> {
            let mut s = Marking::build(&m, &ctx).unwrap();
            let mut t = off;
            let mut out = Vec::new();
            for &(dt, sojourn) in &trace {
                t += dt;
                if (t >> 10) & 0xFFFF_FFFF == 0 {
                    return None; // tick 0 doubles as "unset" (the module's deviation 3)
                }
                out.push(s.on_dequeue(t, PacketView { size: 1500, ect: true }, &one_queue_view(), sojourn));
            }
            Some(out)
        };
        let (Some(a), Some(b)) = (decide(off_a), decide(off_b)) else { return Ok(()) };
        prop_assert_eq!(a, b);
    }
}
