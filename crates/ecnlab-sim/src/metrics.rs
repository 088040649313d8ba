//! What a run measures: per-queue counters over the measurement window, time series,
//! per-flow records, probe RTTs, and what `summary.json` is built from ([`crate::summary`]).
//!
//! Results are computed from a [`RunView`], a read-only view of a finished run that the
//! simulator hands over (`Simulator::view`): this module does not know the simulator.

use crate::hosts::Flow;
use crate::packet::Packet;
use crate::packet::TCP_IP_HEADER;
use crate::summary::{
    FlowOutcome, Measurements, NicSummary, PortUtilization, ProbeSamples, QueueSummary, ReasonCounts, Summary,
};
use crate::topology::Net;
use crate::traffic::Probe;
use ecnlab_core::marking::Reason;
use ecnlab_core::port::Port;
use ecnlab_core::units::{tx_time_ns, Nanos};
use serde::Serialize;
use std::collections::BTreeMap;

/// Whole-run packet accounting (every packet a host sends is delivered, dropped, or still in
/// the network at the end).
pub use crate::summary::Counting;

/// What the results of a finished run are computed from, read-only.
pub(crate) struct RunView<'a> {
    pub net: &'a Net,
    /// End of the run, and of the warm-up (the measurement window is between).
    pub end: Nanos,
    pub warmup: Nanos,
    pub events: u64,
    pub packet_hops: u64,
    pub counting: Counting,
    /// Every link's egress port, in link order.
    pub ports: Vec<PortView<'a>>,
    pub flows: &'a [Flow],
    /// Per connection.
    pub conns: Vec<ConnView>,
    pub probes: &'a [Probe],
    pub mss: u32,
}

/// One link's egress port, with what the recorder kept of it when the window opened.
pub(crate) struct PortView<'a> {
    pub name: &'a str,
    pub is_switch_port: bool,
    pub rate_bps: u64,
    /// Packets its link sent.
    pub tx_pkts: u64,
    pub port: &'a Port<Packet>,
    pub snapshot: &'a [QueueSnapshot],
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

/// Counters of one queue at one instant (differences of two snapshots give a window).
#[derive(Clone, Debug, Default)]
pub struct QueueSnapshot {
    pub payload: u64,
    pub byte_ns: u128,
    pub deq_pkts: u64,
    pub marks: [u64; Reason::COUNT],
    pub drops: [u64; Reason::COUNT],
    pub unmarkable: [u64; Reason::COUNT],
    pub sojourn_sum_ns: u128,
}

impl QueueSnapshot {
    pub(crate) fn of(port: &Port<Packet>) -> Vec<QueueSnapshot> {
        port.stats()
            .iter()
            .map(|s| QueueSnapshot {
                payload: s.deq_payload_bytes,
                byte_ns: s.byte_ns,
                deq_pkts: s.deq_pkts,
                marks: s.marks,
                drops: s.drops,
                unmarkable: s.unmarkable,
                sojourn_sum_ns: s.sojourn_sum_ns,
            })
            .collect()
    }
}

fn diff(a: &[u64; Reason::COUNT], b: &[u64; Reason::COUNT]) -> [u64; Reason::COUNT] {
    let mut d = [0; Reason::COUNT];
    for i in 0..Reason::COUNT {
        d[i] = a[i] - b[i];
    }
    d
}

/// Per-queue time series in long format (one row per switch port, queue and sample).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeSeries {
    pub t_s: Vec<f64>,
    pub port: Vec<String>,
    pub queue: Vec<u32>,
    /// TCP payload bytes sent from the queue during the sample period, as a rate.
    pub goodput_bps: Vec<f64>,
    /// Queue length at the sample instant.
    pub qlen_bytes: Vec<u64>,
    /// Time-averaged queue length over the sample period.
    pub avg_qlen_bytes: Vec<f64>,
    /// Mean sojourn time of packets sent during the period (NaN -> null when none).
    pub sojourn_us: Vec<Option<f64>>,
    pub marks: Vec<u64>,
    pub drops: Vec<u64>,
    /// The queue's capacity as the marking scheme estimates it at the sample instant: TCN
    /// Alg. 1 or the oracle (ideal ECN/RED), quantum / T_round (MQ-ECN); null otherwise.
    pub est_rate_bps: Vec<Option<f64>>,
}

impl TimeSeries {
    pub(crate) fn record(
        &mut self,
        t: Nanos,
        port: &Port<Packet>,
        rate_bps: u64,
        prev: &[QueueSnapshot],
        cur: &[QueueSnapshot],
        interval: Nanos,
        name: &str,
    ) {
        let occ = port.queue_occ();
        for (q, c) in cur.iter().enumerate() {
            let p = prev.get(q).cloned().unwrap_or_default();
            let deq = c.deq_pkts - p.deq_pkts;
            self.t_s.push(t as f64 / 1e9);
            self.port.push(name.to_string());
            self.queue.push(q as u32);
            self.goodput_bps.push((c.payload - p.payload) as f64 * 8e9 / interval as f64);
            self.qlen_bytes.push(occ[q].bytes);
            self.avg_qlen_bytes.push((c.byte_ns - p.byte_ns) as f64 / interval as f64);
            self.sojourn_us.push((deq > 0).then(|| (c.sojourn_sum_ns - p.sojourn_sum_ns) as f64 / deq as f64 / 1e3));
            self.marks.push(diff(&c.marks, &p.marks).iter().sum());
            self.drops.push(diff(&c.drops, &p.drops).iter().sum());
            self.est_rate_bps.push(capacity_estimate(port, rate_bps, q));
        }
    }
}

fn capacity_estimate(port: &Port<Packet>, rate_bps: u64, q: usize) -> Option<f64> {
    use ecnlab_core::marking::{mq_ecn, Marking};
    use ecnlab_core::sched::Scheduler;
    match port.marking() {
        Marking::Ideal(m) => m.capacity_estimate_bps(q),
        Marking::MqEcn(_) => {
            let s = port.scheduler();
            mq_ecn::implied_capacity_bps(s.quantum(q), s.round_time_ns(), rate_bps)
        }
        _ => None,
    }
}

/// One flow's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRecord {
    pub id: usize,
    /// Index of the `[[flows]]` entry it came from; generated flows continue the count
    /// (`[[flows]]` entries first, then `[[traffic]]` entries).
    pub spec: u32,
    /// Connection that carried it (several flows share one with persistent connections).
    pub conn: u32,
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
    pub retransmits: u64,
}

/// The FCT of a flow alone in the network, measured as ecnlab measures FCT (from the
/// application's write to the ACK of the last byte): one base RTT (propagation both ways
/// plus store-and-forward of one full segment on each hop and of an ACK back) plus the
/// remaining bytes at the path's bottleneck rate. Window growth (slow start) is not
/// included, so large flows approach it and small flows exceed it by their extra RTTs.
pub fn ideal_fct_ns(net: &Net, src: usize, dst: usize, size: u64, mss: u32) -> Nanos {
    ideal_fct_to_ns(net, src, dst, size, mss, true)
}

/// [`ideal_fct_ns`], or without the ACK's way back (`to_ack` false) for stacks whose FCT
/// ends when the receiver holds the last byte (the `linux` profile,
/// `transport::Receiver::completion_bytes`).
pub fn ideal_fct_to_ns(net: &Net, src: usize, dst: usize, size: u64, mss: u32, to_ack: bool) -> Nanos {
    let fwd = net.path(src, dst);
    let rev = net.path(dst, src);
    let seg = (size.min(mss as u64) + TCP_IP_HEADER as u64).max(1);
    let mut t: Nanos = 0;
    let mut bottleneck = u64::MAX;
    for &li in &fwd {
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
        let ideal = f.size.map(|s| ideal_fct_to_ns(run.net, f.src as usize, f.dst as usize, s, run.mss, to_ack));
        let conn_acked = conn.acked_bytes;
        let acked = match f.size {
            Some(s) => conn_acked.saturating_sub(f.seq_start()).min(s),
            None => conn_acked,
        };
        FlowRecord {
            id,
            spec: f.spec,
            conn: f.conn,
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
            retransmits: f.retransmits,
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
    run.flows.iter().enumerate().map(|(i, f)| FlowRecord::of(i, f, run)).collect()
}

pub(crate) fn probe_records(run: &RunView) -> Vec<ProbeRecord> {
    run.probes.iter().enumerate().map(|(i, p)| ProbeRecord::of(i, p)).collect()
}

fn by_reason(v: &[u64; Reason::COUNT]) -> BTreeMap<String, u64> {
    Reason::ALL.iter().filter(|r| v[**r as usize] > 0).map(|r| (r.name().to_string(), v[*r as usize])).collect()
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
            let snap = l.snapshot.get(q).cloned().unwrap_or_default();
            let marks = diff(&s.marks, &snap.marks);
            let drops = diff(&s.drops, &snap.drops);
            let unm = diff(&s.unmarkable, &snap.unmarkable);
            counters.push(ReasonCounts {
                marks_by_reason: by_reason(&marks),
                drops_by_reason: by_reason(&drops),
                unmarkable_by_reason: by_reason(&unm),
            });
            if !listed {
                continue;
            }
            let deq = s.deq_pkts - snap.deq_pkts;
            if s.deq_payload_bytes == 0 && s.enq_pkts == 0 && drops.iter().all(|&d| d == 0) {
                continue; // a queue that never saw a packet
            }
            queues.push(QueueSummary {
                avg_qlen_bytes: (s.byte_ns - snap.byte_ns) as f64 / window_ns as f64,
                avg_sojourn_us: (deq > 0).then(|| (s.sojourn_sum_ns - snap.sojourn_sum_ns) as f64 / deq as f64 / 1e3),
                drops: drops.iter().sum(),
                drops_by_reason: by_reason(&drops),
                goodput_bps: (s.deq_payload_bytes - snap.payload) as f64 * 8e9 / window_ns as f64,
                marks: marks.iter().sum(),
                marks_by_reason: by_reason(&marks),
                max_qlen_bytes: s.max_bytes,
                port: l.name.to_string(),
                queue: q as u64,
                switch_goodput_bps: None,
            });
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
    // Host NICs (a host's own uplink queue), so that a reader can tell a run whose flows are
    // bound by their sender's NIC rather than by the switch under study (the catalog's
    // soundness guard): the window's drops and time-averaged queue, and the peak.
    let nics = run
        .ports
        .iter()
        .filter(|l| !l.is_switch_port && (l.tx_pkts > 0 || l.port.total_drops() > 0))
        .map(|l| {
            let (mut drops, mut byte_ns, mut max_bytes) = (0u64, 0u128, 0u64);
            for (q, s) in l.port.stats().iter().enumerate() {
                let snap = l.snapshot.get(q).cloned().unwrap_or_default();
                drops += diff(&s.drops, &snap.drops).iter().sum::<u64>();
                byte_ns += s.byte_ns - snap.byte_ns;
                max_bytes = max_bytes.max(s.max_bytes);
            }
            NicSummary {
                avg_qlen_bytes: byte_ns as f64 / window_ns as f64,
                drops,
                max_qlen_bytes: max_bytes,
                port: l.name.to_string(),
            }
        })
        .collect();
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
            .map(|f| FlowOutcome { class: f.class, size: f.size, start_s: f.start_s, fct_us: f.fct_us })
            .collect(),
        timeouts: flows.iter().map(|f| f.timeouts).sum(),
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
    })
}

/// Bytes a port put on the wire: what its queues sent (the end-of-run check holds the
/// packet counts of port and link equal). Cold paths only: it sums the queues.
pub(crate) fn tx_bytes(port: &Port<Packet>) -> u64 {
    (0..port.n_queues()).map(|q| port.queue_stats(q).deq_bytes).sum()
}

/// "s0->h3": a switch port named by its two ends.
pub fn port_name(net: &Net, li: usize) -> String {
    let l = &net.links[li];
    format!("{}->{}", net.names[l.from], net.names[l.to])
}
