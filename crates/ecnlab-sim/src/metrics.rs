//! What a run measures: per-queue counters over the measurement window, time series,
//! per-flow records, probe RTTs, and what `summary.json` is built from ([`crate::summary`]).
//!
//! Results are computed from a [`RunView`], a read-only view of a finished run that the
//! simulator hands over (`Simulator::view`): this module does not know the simulator.

use crate::flow::Flow;
use crate::packet::Packet;
use crate::packet::TCP_IP_HEADER;
use crate::routing::Routes;
use crate::summary::{
    FlowOutcome, Measurements, NicSummary, PausedQueue, PfcSummary, PortUtilization, ProbeSamples, QueueSummary,
    ReasonCounts, Summary,
};
use crate::topology::Net;
use crate::traffic::Probe;
use crate::workload::FlowArrival;
use ecnlab_core::measure::tx_bytes;
use ecnlab_core::port::Port;
use ecnlab_core::units::{tx_time_ns, Nanos};
use serde::Serialize;

/// Whole-run packet accounting (every packet a host sends is delivered, dropped, or still in
/// the network at the end).
pub use crate::summary::Counting;

/// What the results of a finished run are computed from, read-only.
pub(crate) struct RunView<'a> {
    pub net: &'a Net,
    pub routes: &'a Routes,
    /// Each connection's ECMP key ([`crate::routing::conn_key`]).
    pub conn_keys: &'a [u64],
    /// End of the run, and of the warm-up (the measurement window is between).
    pub end: Nanos,
    pub warmup: Nanos,
    pub events: u64,
    pub packet_hops: u64,
    pub counting: Counting,
    /// Every link's egress port, in link order.
    pub ports: Vec<PortView<'a>>,
    pub flows: &'a [Flow],
    /// Generated flows whose arrival the run did not reach (at or after its end).
    pub pending: &'a [FlowArrival],
    /// Number of `[[flows]]` entries: a generated flow's `spec` follows them.
    pub n_listed_specs: u32,
    /// Per connection.
    pub conns: Vec<ConnView>,
    pub probes: &'a [Probe],
    pub mss: u32,
    /// `[switch.pfc]` is enabled.
    pub pfc: bool,
    /// Connections open with a handshake (`transport.handshake` under `linux`).
    pub handshake: bool,
    /// Senders send tail loss probes (`transport.tlp` under `linux`).
    pub tlp: bool,
    /// Senders undo spurious reductions (the `linux` profile).
    pub undo: bool,
}

/// One link's egress port, with what the recorder kept of it when the window opened.
pub(crate) struct PortView<'a> {
    pub name: &'a str,
    pub is_switch_port: bool,
    pub rate_bps: u64,
    /// Packets its link sent.
    pub tx_pkts: u64,
    pub port: &'a Port<Packet>,
    pub snapshot: &'a [QueueStats],
    pub snapshot_tx_bytes: u64,
}

/// One connection's progress.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnView {
    /// Bytes acknowledged, at the end and when the window opened.
    pub acked_bytes: u64,
    pub acked_at_warmup: u64,
    /// A message completes when its last byte is acknowledged (not when it is received:
    /// `transport::Receiver::completion_bytes`).
    pub completes_on_ack: bool,
}

/// The per-queue time series, and the queue counters it and the summary are computed
/// from: the core's, which the emulated switch measures with too.
pub use ecnlab_core::{measure::TimeSeries, port::QueueStats};

/// One flow's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRecord {
    pub id: usize,
    /// Index of the `[[flows]]` entry it came from; generated flows continue the count
    /// (`[[flows]]` entries first, then `[[traffic]]` entries).
    pub spec: u32,
    /// Connection that carried it (several flows share one with persistent connections);
    /// None for a flow that never started (its start at or after the run's end).
    pub conn: Option<u32>,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    /// Bytes to send (None for long-lived flows).
    pub size: Option<u64>,
    pub start_s: f64,
    pub finish_s: Option<f64>,
    pub fct_us: Option<f64>,
    /// Ideal FCT: the flow alone on its path (see [`ideal_fct_ns`]).
    pub ideal_fct_us: Option<f64>,
    pub slowdown: Option<f64>,
    pub acked_bytes: u64,
    pub timeouts: u64,
    /// Timeouts after the flow finished ([`crate::flow::Flow::late_timeouts`]).
    pub timeouts_after_finish: u64,
    pub retransmits: u64,
    /// Handshake retransmissions the flow waited for ([`crate::hosts::Flow::syn_timeouts`]).
    pub syn_timeouts: u64,
    /// Tail loss probes sent for the flow ([`crate::flow::Flow::tlp_probes`]).
    pub tlp_probes: u64,
    /// Reductions undone for the flow ([`crate::flow::Flow::undos`]).
    pub undos: u64,
}

/// The FCT of a flow alone in the network, measured as ecnlab measures FCT (from the
/// application's write to the ACK of the last byte), over the first shortest path each way
/// ([`Routes::first_path`]; a flow's own ECMP path is [`ideal_fct_along`]'s): for flows
/// measured outside the simulator.
pub fn ideal_fct_ns(net: &Net, routes: &Routes, src: usize, dst: usize, size: u64, mss: u32) -> Nanos {
    let (fwd, rev) = (routes.first_path(net, src, dst), routes.first_path(net, dst, src));
    ideal_fct_along(net, &fwd, &rev, size, mss, true)
}

/// The FCT of a flow alone on the links `fwd` (its data's path) and `rev` (its ACKs'): one
/// base RTT (propagation both ways plus store-and-forward of one full segment on each hop
/// and of an ACK back) plus the remaining bytes at the path's bottleneck rate. Window growth
/// (slow start) is not included, so large flows approach it and small flows exceed it by
/// their extra RTTs. `to_ack` false leaves out the ACK's way back, for stacks whose FCT ends
/// when the receiver holds the last byte (the `linux` profile,
/// `transport::Receiver::completion_bytes`).
pub fn ideal_fct_along(net: &Net, fwd: &[u32], rev: &[u32], size: u64, mss: u32, to_ack: bool) -> Nanos {
    let seg = (size.min(mss as u64) + TCP_IP_HEADER as u64).max(1);
    let mut t: Nanos = 0;
    let mut bottleneck = u64::MAX;
    for &li in fwd {
        let l = &net.links[li as usize];
        t = t.saturating_add(l.delay_ns).saturating_add(tx_time_ns(seg, l.rate_bps));
        bottleneck = bottleneck.min(l.rate_bps);
    }
    for &li in rev.iter().filter(|_| to_ack) {
        let l = &net.links[li as usize];
        t = t.saturating_add(l.delay_ns).saturating_add(tx_time_ns(crate::packet::ACK_BYTES as u64, l.rate_bps));
    }
    let pkts = size.div_ceil(mss as u64);
    let wire = size.saturating_add(pkts.saturating_mul(TCP_IP_HEADER as u64));
    t.saturating_add(tx_time_ns(wire.saturating_sub(seg), bottleneck))
}

impl FlowRecord {
    pub(crate) fn of(id: usize, f: &Flow, run: &RunView) -> FlowRecord {
        let fct = f.finish.map(|t| t.saturating_sub(f.start));
        let conn = &run.conns[f.conn as usize];
        let to_ack = conn.completes_on_ack;
        // Over the flow's own path (its data there, its ACKs back: the same key).
        let ideal = f.size.map(|s| {
            let (src, dst, key) = (f.src as usize, f.dst as usize, run.conn_keys[f.conn as usize]);
            let (fwd, rev) = (run.routes.path(run.net, src, dst, key), run.routes.path(run.net, dst, src, key));
            ideal_fct_along(run.net, &fwd, &rev, s, run.mss, to_ack)
        });
        let conn_acked = conn.acked_bytes;
        let acked = match f.size {
            Some(s) => conn_acked.saturating_sub(f.seq_start).min(s),
            None => conn_acked,
        };
        FlowRecord {
            id,
            spec: f.spec,
            conn: Some(f.conn),
            src: f.src,
            dst: f.dst,
            class: f.class,
            size: f.size,
            start_s: f.start as f64 / 1e9,
            finish_s: f.finish.map(|t| t as f64 / 1e9),
            fct_us: fct.map(|t| t as f64 / 1e3),
            ideal_fct_us: ideal.map(|t| t as f64 / 1e3),
            slowdown: match (fct, ideal) {
                (Some(a), Some(b)) if b > 0 => Some(a as f64 / b as f64),
                _ => None,
            },
            acked_bytes: acked,
            timeouts: f.timeouts,
            timeouts_after_finish: f.late_timeouts,
            retransmits: f.retransmits,
            syn_timeouts: f.syn_timeouts,
            tlp_probes: f.tlp_probes,
            undos: f.undos,
        }
    }

    /// A generated flow whose arrival comes at or after the run's end: listed, with nothing
    /// sent, so that no flow of the scenario is missing from the results.
    fn not_started(id: usize, a: &FlowArrival, run: &RunView) -> FlowRecord {
        FlowRecord {
            id,
            spec: run.n_listed_specs + a.source,
            conn: None,
            src: a.src,
            dst: a.dst,
            class: a.class,
            size: Some(a.size),
            start_s: a.start_ns as f64 / 1e9,
            finish_s: None,
            fct_us: None,
            ideal_fct_us: None,
            slowdown: None,
            acked_bytes: 0,
            timeouts: 0,
            timeouts_after_finish: 0,
            retransmits: 0,
            syn_timeouts: 0,
            tlp_probes: 0,
            undos: 0,
        }
    }
}

/// One probe's RTT samples (taken after warm-up).
#[derive(Clone, Debug, Serialize)]
pub struct ProbeRecord {
    pub id: usize,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub sent: u64,
    pub rtt_us: Vec<f64>,
}

impl ProbeRecord {
    pub(crate) fn of(id: usize, p: &Probe) -> ProbeRecord {
        ProbeRecord {
            id,
            src: p.src,
            dst: p.dst,
            class: p.class,
            sent: p.sent,
            rtt_us: p.rtts_ns.iter().map(|&r| r as f64 / 1e3).collect(),
        }
    }
}

/// Per-flow records after a run.
pub(crate) fn flow_records(run: &RunView) -> Vec<FlowRecord> {
    let started = run.flows.iter().enumerate().map(|(i, f)| FlowRecord::of(i, f, run));
    let pending = run.pending.iter().enumerate().map(|(i, a)| FlowRecord::not_started(run.flows.len() + i, a, run));
    started.chain(pending).collect()
}

pub(crate) fn probe_records(run: &RunView) -> Vec<ProbeRecord> {
    run.probes.iter().enumerate().map(|(i, p)| ProbeRecord::of(i, p)).collect()
}

/// Build `summary.json` (everything except wall time, which the caller measures): the run's
/// [`Measurements`] for [`Summary::build`].
pub(crate) fn summary(
    run: &RunView,
    scenario: &str,
    seed: u64,
    flows: &[FlowRecord],
    probes: &[ProbeRecord],
) -> Summary {
    let window_ns = (run.end - run.warmup).max(1);
    let mut queues = Vec::new();
    let mut counters = Vec::new();
    for l in &run.ports {
        // Totals count every port, host NICs included; the per-queue list has switch ports
        // that carried traffic.
        let listed = l.is_switch_port && (l.tx_pkts > 0 || l.port.total_drops() > 0);
        for (q, s) in l.port.stats().iter().enumerate() {
            let w = s.since(&l.snapshot.get(q).copied().unwrap_or_default());
            counters.push(ReasonCounts::of(&w));
            if listed {
                queues.extend(QueueSummary::of_window(l.name, q, s, &w, window_ns));
            }
        }
    }
    // Link utilization of switch ports that carried traffic in the window.
    let ports = run
        .ports
        .iter()
        .filter(|l| l.is_switch_port && l.tx_pkts > 0)
        .filter_map(|l| Some((l, tx_bytes(l.port).checked_sub(l.snapshot_tx_bytes).filter(|&b| b > 0)?)))
        .map(|(l, bytes)| PortUtilization {
            port: l.name.to_string(),
            rate_bps: l.rate_bps,
            utilization: bytes as f64 * 8e9 / (l.rate_bps as f64 * window_ns as f64),
        })
        .collect();
    let nics = nic_summaries(run, window_ns);
    let pfc = run.pfc.then(|| paused_queues(run, window_ns));
    // Long-lived flows: goodput in the window (Jain's index over them in the summary).
    let long_goodputs = run
        .flows
        .iter()
        .filter(|f| f.size.is_none())
        .map(|f| {
            let c = &run.conns[f.conn as usize];
            (c.acked_bytes - c.acked_at_warmup) as f64 * 8e9 / window_ns as f64
        })
        .collect();
    // The queue of each class that flows use, as the (first) switch port classifies.
    let switch_port = run.ports.iter().find(|l| l.is_switch_port);
    let max_class = flows.iter().map(|f| f.class as usize + 1).max().unwrap_or(0);
    let class_queue = (0..max_class).map(|c| switch_port.map_or(0, |l| l.port.classify(c as u8) as u64)).collect();
    Summary::build(Measurements {
        scenario: scenario.to_string(),
        seed,
        sim_time_s: run.end as f64 / 1e9,
        measure_from_s: run.warmup as f64 / 1e9,
        events: run.events,
        packet_hops: run.packet_hops,
        flows: flows
            .iter()
            .map(|f| FlowOutcome {
                class: f.class,
                size: f.size,
                start_s: f.start_s,
                fct_us: f.fct_us,
                slowdown: f.slowdown,
            })
            .collect::<Vec<_>>(),
        timeouts: flows.iter().map(|f| f.timeouts).sum(),
        timeouts_after_finish: Some(flows.iter().map(|f| f.timeouts_after_finish).sum()),
        syn_timeouts: run.handshake.then(|| flows.iter().map(|f| f.syn_timeouts).sum()),
        tlp_probes: run.tlp.then(|| flows.iter().map(|f| f.tlp_probes).sum()),
        undos: run.undo.then(|| flows.iter().map(|f| f.undos).sum()),
        counters,
        queues,
        probes: probes
            .iter()
            .map(|p| ProbeSamples { id: p.id as u64, src: p.src, dst: p.dst, class: p.class, rtt_us: p.rtt_us.clone() })
            .collect(),
        class_queue: Some(class_queue),
        ports: Some(ports),
        nics: Some(nics),
        long_flow_goodputs_bps: Some(long_goodputs),
        counting: Some(run.counting),
        pfc,
    })
}

/// Host NICs (a host's own uplink queue), so that a reader can tell a run whose flows are
/// bound by their sender's NIC rather than by the switch under study (the catalog's
/// soundness guard): the window's drops and time-averaged queue, and the peak.
fn nic_summaries(run: &RunView, window_ns: u64) -> Vec<NicSummary> {
    run.ports
        .iter()
        .filter(|l| !l.is_switch_port && (l.tx_pkts > 0 || l.port.total_drops() > 0))
        .map(|l| {
            let (mut drops, mut byte_ns, mut max_bytes) = (0u64, 0u128, 0u64);
            for (q, s) in l.port.stats().iter().enumerate() {
                let w = s.since(&l.snapshot.get(q).copied().unwrap_or_default());
                drops += w.total_drops();
                byte_ns += w.byte_ns;
                max_bytes = max_bytes.max(s.max_bytes);
            }
            NicSummary {
                avg_qlen_bytes: byte_ns as f64 / window_ns as f64,
                drops,
                max_qlen_bytes: max_bytes,
                port: l.name.to_string(),
            }
        })
        .collect()
}

/// PFC: every queue, NIC or switch port, paused in the window.
fn paused_queues(run: &RunView, window_ns: u64) -> PfcSummary {
    let queues: Vec<PausedQueue> = (run.ports.iter())
        .flat_map(|l| {
            l.port.stats().into_iter().enumerate().filter_map(move |(q, s)| {
                let w = s.since(&l.snapshot.get(q).copied().unwrap_or_default());
                (w.pauses > 0 || w.paused_ns > 0).then(|| PausedQueue {
                    paused_fraction: w.paused_ns as f64 / window_ns as f64,
                    paused_us: w.paused_ns as f64 / 1e3,
                    pauses: w.pauses,
                    port: l.name.to_string(),
                    queue: q as u64,
                })
            })
        })
        .collect();
    PfcSummary { pauses: queues.iter().map(|q| q.pauses).sum(), queues }
}

/// "s0->h3": a switch port named by its two ends. Parallel links (a topology file may lay
/// two cables between the same switches) are told apart by their order: "s0->s1", then
/// "s0->s1#2", so that no two ports share a name in the summary or for `--pcap`.
pub fn port_name(net: &Net, li: usize) -> String {
    let l = &net.links[li];
    let earlier = net.out_links[l.from].iter().filter(|&&o| (o as usize) < li && net.links[o as usize].to == l.to);
    match earlier.count() {
        0 => format!("{}->{}", net.names[l.from], net.names[l.to]),
        n => format!("{}->{}#{}", net.names[l.from], net.names[l.to], n + 1),
    }
}
