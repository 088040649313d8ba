//! Measuring a port: what the difference of two snapshots of its queues' counters
//! ([`QueueStats`], `Port::stats`) says over the window between them (time-averaged
//! queue length, mean sojourn, payload goodput, marks and drops by reason), and the
//! per-queue time series made of such windows ([`TimeSeries`]).
//!
//! The simulator (`ecnlab-sim`: the recorder's warm-up snapshot, `summary.json`'s queues,
//! `timeseries.csv`) and the emulated switch (`ecnlab-emu`: its report's `total` and `window`,
//! its time series) both measure through this module, so a queue's figures are computed by
//! one piece of code and mean the same in `ecnlab run` and `ecnlab emulate`: a queue of
//! `summary.json` is a [`QueueSummary`], listed by one rule ([`QueueSummary::of_window`]),
//! its counts by reason a [`ReasonCounts`].

use crate::marking::Reason;
use crate::port::{Port, PortPacket, QueueStats};
use crate::units::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the difference of two snapshots of a queue says: the window's counts, and the
/// figures computed from them.
impl QueueStats {
    /// The counts between the snapshot `start` and this later one. The peaks
    /// (`max_bytes`, `sojourn_max_ns`) do not subtract: they are this snapshot's, the
    /// window's own when the port's peak was reset at its start (`Port::reset_peak`).
    pub fn since(&self, start: &QueueStats) -> QueueStats {
        let sub = |a: &[u64; Reason::COUNT], b: &[u64; Reason::COUNT]| std::array::from_fn(|i| a[i] - b[i]);
        QueueStats {
            enq_pkts: self.enq_pkts - start.enq_pkts,
            enq_bytes: self.enq_bytes - start.enq_bytes,
            deq_pkts: self.deq_pkts - start.deq_pkts,
            deq_bytes: self.deq_bytes - start.deq_bytes,
            deq_payload_bytes: self.deq_payload_bytes - start.deq_payload_bytes,
            byte_ns: self.byte_ns - start.byte_ns,
            sojourn_sum_ns: self.sojourn_sum_ns - start.sojourn_sum_ns,
            sojourn_max_ns: self.sojourn_max_ns,
            max_bytes: self.max_bytes,
            marks: sub(&self.marks, &start.marks),
            drops: sub(&self.drops, &start.drops),
            unmarkable: sub(&self.unmarkable, &start.unmarkable),
            paused_ns: self.paused_ns - start.paused_ns,
            pauses: self.pauses - start.pauses,
            busy_ns: self.busy_ns - start.busy_ns,
        }
    }

    // The three window figures below are the simulator's summary and time series since
    // they were first written: the same operations in the same order, so results keep
    // their bits.

    /// Time-averaged queue length over a window of `window_ns` (these counts' window).
    pub fn avg_qlen_bytes(&self, window_ns: Nanos) -> f64 {
        self.byte_ns as f64 / window_ns as f64
    }
    /// Payload sent over a window of `window_ns`, as a rate.
    pub fn goodput_bps(&self, window_ns: Nanos) -> f64 {
        self.deq_payload_bytes as f64 * 8e9 / window_ns as f64
    }
    /// Mean sojourn of the packets sent (None when none was).
    pub fn avg_sojourn_us(&self) -> Option<f64> {
        (self.deq_pkts > 0).then(|| self.sojourn_sum_ns as f64 / self.deq_pkts as f64 / 1e3)
    }
}

/// Bytes a port put on the wire: what its queues sent. Cold paths only: it sums the queues.
pub fn tx_bytes<P: PortPacket>(port: &Port<P>) -> u64 {
    (0..port.n_queues()).map(|q| port.queue_stats(q).deq_bytes).sum()
}

/// Counts by reason, named as summaries write them ([`Reason::name`]), zero counts left out.
pub fn by_reason(counts: &[u64; Reason::COUNT]) -> BTreeMap<String, u64> {
    Reason::ALL
        .iter()
        .filter(|r| counts[**r as usize] > 0)
        .map(|r| (r.name().to_string(), counts[*r as usize]))
        .collect()
}

/// One switch queue over the window, as `summary.json` lists it (`queues`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueSummary {
    pub avg_qlen_bytes: f64,
    pub avg_sojourn_us: Option<f64>,
    pub drops: u64,
    pub drops_by_reason: BTreeMap<String, u64>,
    /// TCP payload sent from the queue (simulator), application bytes received by the
    /// flows of the queue (emulator), as a rate.
    pub goodput_bps: f64,
    pub marks: u64,
    pub marks_by_reason: BTreeMap<String, u64>,
    pub max_qlen_bytes: u64,
    pub port: String,
    pub queue: u64,
    /// What the emulated switch counted as sent from the queue (emulator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switch_goodput_bps: Option<f64>,
}

/// Counters by reason of one queue over the window (names as `ecnlab_core::marking::Reason`,
/// zero counts left out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReasonCounts {
    #[serde(default)]
    pub marks_by_reason: BTreeMap<String, u64>,
    #[serde(default)]
    pub drops_by_reason: BTreeMap<String, u64>,
    #[serde(default)]
    pub unmarkable_by_reason: BTreeMap<String, u64>,
}

impl QueueSummary {
    /// Queue `queue` of the port named `port` over a window of `window_ns`: `window` its
    /// counts in the window ([`QueueStats::since`]), `total` over the whole run. None for a
    /// queue that never saw a packet: it admitted none in the whole run and dropped none in
    /// the window. The one rule by which both engines list their queues.
    pub fn of_window(
        port: &str,
        queue: usize,
        total: &QueueStats,
        window: &QueueStats,
        window_ns: Nanos,
    ) -> Option<Self> {
        if total.enq_pkts == 0 && window.total_drops() == 0 {
            return None;
        }
        Some(QueueSummary {
            avg_qlen_bytes: window.avg_qlen_bytes(window_ns),
            avg_sojourn_us: window.avg_sojourn_us(),
            drops: window.total_drops(),
            drops_by_reason: by_reason(&window.drops),
            goodput_bps: window.goodput_bps(window_ns),
            marks: window.total_marks(),
            marks_by_reason: by_reason(&window.marks),
            max_qlen_bytes: window.max_bytes,
            port: port.to_string(),
            queue: queue as u64,
            switch_goodput_bps: None,
        })
    }
}

impl ReasonCounts {
    /// A window's counts by reason ([`by_reason`]).
    pub fn of(window: &QueueStats) -> Self {
        ReasonCounts {
            marks_by_reason: by_reason(&window.marks),
            drops_by_reason: by_reason(&window.drops),
            unmarkable_by_reason: by_reason(&window.unmarkable),
        }
    }
}

/// Queue `q`'s capacity as the port's marking scheme estimates it: TCN Alg. 1's or the
/// oracle's (ideal ECN/RED), quantum / T_round (MQ-ECN); None for the other schemes.
pub fn capacity_estimate_bps<P: PortPacket>(port: &Port<P>, rate_bps: u64, q: usize) -> Option<f64> {
    use crate::marking::{mq_ecn, Marking};
    use crate::sched::Scheduler;
    match port.marking() {
        Marking::Ideal(m) => m.capacity_estimate_bps(q),
        Marking::MqEcn(_) => {
            let s = port.scheduler();
            mq_ecn::implied_capacity_bps(s.quantum(q), s.round_time_ns(), rate_bps)
        }
        _ => None,
    }
}

/// Per-queue time series in long format (one row per port, queue and sample), each row the
/// window since the previous sample: `timeseries.csv`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeSeries {
    pub t_s: Vec<f64>,
    pub port: Vec<String>,
    pub queue: Vec<u32>,
    /// Transport payload sent from the queue during the sample period, as a rate.
    pub goodput_bps: Vec<f64>,
    /// Queue length at the sample instant.
    pub qlen_bytes: Vec<u64>,
    /// Time-averaged queue length over the sample period.
    pub avg_qlen_bytes: Vec<f64>,
    /// Mean sojourn time of packets sent during the period (null when none).
    pub sojourn_us: Vec<Option<f64>>,
    /// Share of the sample period in which the queue held at least one packet (0-1).
    pub busy_fraction: Vec<f64>,
    pub marks: Vec<u64>,
    pub drops: Vec<u64>,
    /// The queue's capacity as the marking scheme estimates it at the sample instant
    /// ([`capacity_estimate_bps`]); null otherwise.
    pub est_rate_bps: Vec<Option<f64>>,
}

impl TimeSeries {
    /// The rows of one sample of `port` at `t_ns` (its clock brought there), `interval_ns`
    /// after the previous one, whose counters `last` holds (empty: from zero); `last` then
    /// holds this sample's.
    pub fn record<P: PortPacket>(
        &mut self,
        t_ns: Nanos,
        name: &str,
        port: &Port<P>,
        rate_bps: u64,
        last: &mut Vec<QueueStats>,
        interval_ns: Nanos,
    ) {
        let occ = port.queue_occ();
        let cur = port.stats();
        let prev = std::mem::replace(last, cur);
        for (q, c) in last.iter().enumerate() {
            let w = c.since(&prev.get(q).copied().unwrap_or_default());
            self.t_s.push(t_ns as f64 / 1e9);
            self.port.push(name.to_string());
            self.queue.push(q as u32);
            self.goodput_bps.push(w.goodput_bps(interval_ns));
            self.qlen_bytes.push(occ[q].bytes);
            self.avg_qlen_bytes.push(w.avg_qlen_bytes(interval_ns));
            self.sojourn_us.push(w.avg_sojourn_us());
            self.busy_fraction.push(if interval_ns > 0 { w.busy_ns as f64 / interval_ns as f64 } else { 0.0 });
            self.marks.push(w.total_marks());
            self.drops.push(w.total_drops());
            self.est_rate_bps.push(capacity_estimate_bps(port, rate_bps, q));
        }
    }

    pub fn len(&self) -> usize {
        self.t_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::BufferPool;
    use crate::marking::MarkingConfig;
    use crate::port::PortConfig;

    #[derive(Clone, Copy, Debug)]
    struct Pkt(u32);
    impl PortPacket for Pkt {
        fn wire_bytes(&self) -> u32 {
            self.0
        }
        fn is_ect(&self) -> bool {
            true
        }
        fn set_ce(&mut self) {}
        fn dscp(&self) -> u8 {
            0
        }
        fn payload_bytes(&self) -> u32 {
            self.0 - 40
        }
    }

    /// A scripted queue: its window figures are what the arithmetic says. Two 1000-byte
    /// packets at t = 0, one sent at 1 us, the other at 3 us; the window [1 us, 5 us] holds
    /// 1000 B for 2 us (2e-6 s x 1000 B = 2e6 B ns over 4e3 ns: 500 B on average), one
    /// packet of 960 payload bytes (1.92 Mbit/s over 4 us) with a 3 us sojourn.
    #[test]
    fn a_window_is_the_difference_of_two_snapshots() {
        let cfg: PortConfig = serde_json::from_str(r#"{"buffer": "1MB"}"#).unwrap();
        let mut port = Port::<Pkt>::new(&cfg, &MarkingConfig::default(), 1_000_000_000, 1).unwrap();
        let mut pool = BufferPool::unlimited();
        port.enqueue(0, Pkt(1000), &mut pool).unwrap();
        port.enqueue(0, Pkt(1000), &mut pool).unwrap();
        port.dequeue(1_000, &mut pool).unwrap();
        port.advance_clock(1_000);
        let mut start = port.stats();
        port.dequeue(3_000, &mut pool).unwrap();
        port.advance_clock(5_000);
        let w = port.stats()[0].since(&start[0]);
        let end = port.stats();
        assert_eq!((w.enq_pkts, w.deq_pkts, w.deq_bytes, w.deq_payload_bytes), (0, 1, 1000, 960));
        assert_eq!(w.avg_qlen_bytes(4_000), 500.0);
        assert_eq!(w.goodput_bps(4_000), 1.92e9);
        assert_eq!(w.avg_sojourn_us(), Some(3.0));
        assert_eq!(QueueStats::default().avg_sojourn_us(), None);
        let mut ts = TimeSeries::default();
        ts.record(5_000, "p", &port, 1_000_000_000, &mut start, 4_000);
        assert_eq!((ts.len(), ts.avg_qlen_bytes[0], ts.qlen_bytes[0], ts.sojourn_us[0]), (1, 500.0, 0, Some(3.0)));
        assert_eq!(start, end, "the sample's counters are kept for the next");
    }

    #[test]
    fn by_reason_names_the_nonzero_counts() {
        let mut c = [0; Reason::COUNT];
        c[Reason::TcnSojourn as usize] = 3;
        c[Reason::BufferFull as usize] = 1;
        let m = by_reason(&c);
        assert_eq!(m.into_iter().collect::<Vec<_>>(), [("buffer_full".into(), 1), ("tcn_sojourn".into(), 3)]);
    }
}
