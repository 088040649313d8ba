//! The recorder: what a run measures while it runs, kept apart from what it simulates.
//!
//! The simulator tells the recorder when the measurement window opens (the warm-up
//! snapshot) and when a sample is due; the recorder reads ports only through
//! [`Wire::port_at`], which performs owed dequeues for it alone, and connections' progress
//! through the values handed to it. Nothing it does reaches back into the simulation, so
//! the same scenario and seed simulate the same packets whatever is recorded
//! (tests/observation.rs). [`crate::metrics`] turns what it kept into results.

use crate::wire::Wire;
use ecnlab_core::measure::{tx_bytes, TimeSeries};
use ecnlab_core::port::QueueStats;
use ecnlab_core::units::Nanos;
use std::borrow::Cow;

pub(crate) struct Recorder {
    /// Time-series period, and whether time series are recorded at all.
    pub sample_interval: Nanos,
    pub record_timeseries: bool,
    /// Per link: its queues' counters, and the bytes it had sent, when the window opened.
    pub snapshot: Vec<Vec<QueueStats>>,
    pub snapshot_tx_bytes: Vec<u64>,
    /// Per connection: bytes acknowledged when the window opened.
    pub acked_at_warmup: Vec<u64>,
    pub timeseries: TimeSeries,
    /// Per link: its queues' counters at the previous sample.
    last_sample: Vec<Vec<QueueStats>>,
}

impl Recorder {
    pub(crate) fn new(n_links: usize, sample_interval: Nanos, record_timeseries: bool) -> Recorder {
        Recorder {
            sample_interval,
            record_timeseries,
            snapshot: vec![Vec::new(); n_links],
            snapshot_tx_bytes: vec![0; n_links],
            acked_at_warmup: Vec::new(),
            timeseries: TimeSeries::default(),
            last_sample: vec![Vec::new(); n_links],
        }
    }

    /// The measurement window opens at the point (`now`, `seq`) of the order of events;
    /// `acked` gives each connection's acknowledged bytes then. Peaks restart from the
    /// queues' lengths at that point.
    pub(crate) fn open_window(&mut self, wire: &mut Wire, now: Nanos, seq: u64, acked: impl Iterator<Item = u64>) {
        for i in 0..wire.links.len() {
            let view = wire.port_at(i, now, seq);
            let snap = view.stats();
            let tx = tx_bytes(&view);
            let occ = matches!(view, Cow::Owned(_)).then(|| view.queue_occ().to_vec());
            match occ {
                Some(occ) => wire.links[i].port.reset_peak_to(&occ),
                None => wire.links[i].port.reset_peak(),
            }
            self.snapshot[i] = snap;
            self.snapshot_tx_bytes[i] = tx;
        }
        self.acked_at_warmup = acked.collect();
    }

    /// A sample of every switch port that has sent, at the point (`now`, `seq`).
    pub(crate) fn sample(&mut self, wire: &mut Wire, now: Nanos, seq: u64) {
        if !self.record_timeseries {
            return;
        }
        for i in 0..wire.links.len() {
            if !wire.links[i].is_switch_port || wire.links[i].tx_pkts == 0 {
                continue;
            }
            let rate_bps = wire.links[i].rate_bps;
            let name = wire.names[i].clone();
            let view = wire.port_at(i, now, seq);
            self.timeseries.record(now, &name, &view, rate_bps, &mut self.last_sample[i], self.sample_interval);
        }
    }

    /// Bytes connection `c` had acknowledged when the window opened (0 for connections
    /// opened later).
    pub(crate) fn acked_at_warmup(&self, c: usize) -> u64 {
        self.acked_at_warmup.get(c).copied().unwrap_or(0)
    }
}
