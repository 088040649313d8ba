//! What the switch measured: its report (`--stats`: the whole run and the measurement
//! window) and its time series (`--timeseries`), typed.
//!
//! A queue's figures are the core's ([`ecnlab_core::measure`]), computed by the code the
//! simulator measures with: each port's queues over a section as [`QueueStats`] (their
//! counts), the queues `summary.json` lists as [`QueueSummary`] (by the one rule,
//! [`QueueSummary::of_window`]) and every queue's counts by reason as [`ReasonCounts`], so
//! that `ecnlab emulate` hands them to the summary as they are, adding only what its hosts
//! measured (the flows' goodput). This module adds what a switch on sockets has and the
//! simulator has not: frames by kind, ingress drops, socket and pool counters
//! ([`PortCounters`]).

use crate::stall::{StallSection, Stalls};
use crate::switch::{PortCounters, Switch};
use ecnlab_core::measure::{QueueSummary, ReasonCounts, TimeSeries};
use ecnlab_core::port::QueueStats;
use ecnlab_core::Nanos;
use serde::Serialize;
use std::collections::BTreeMap;

/// What measures the switch: the window's two snapshots, the peaks before it, the time
/// series' previous sample. It reads the switch (`&mut Switch`: its ports' clocks move to
/// the instant read), and the switch knows nothing of it.
#[derive(Debug, Default)]
pub struct Meter {
    /// Largest queue length per port and queue before the window started (`reset_peak`
    /// restarts the port's own maximum at the window start).
    peak_before: Vec<Vec<u64>>,
    pub window_start: Option<Snapshot>,
    pub window_end: Option<Snapshot>,
    /// Each port's queue counters at the previous time-series sample, and its time.
    last_sample: Vec<Vec<QueueStats>>,
    last_sample_ns: Nanos,
    /// The longest stall before the window started (the window restarts it).
    stall_max_before: Nanos,
}

impl Meter {
    /// Nothing measured yet of `sw`, from `now`.
    pub fn new(sw: &Switch, now: Nanos) -> Meter {
        let queues: Vec<usize> = sw.ports.iter().map(|p| p.port.n_queues()).collect();
        Meter {
            peak_before: queues.iter().map(|&n| vec![0; n]).collect(),
            window_start: None,
            window_end: None,
            last_sample: queues.iter().map(|&n| vec![QueueStats::default(); n]).collect(),
            last_sample_ns: now,
            stall_max_before: 0,
        }
    }
}

/// Counters of the whole switch at one instant; two snapshots give a section.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub at_ns: Nanos,
    pub ports: Vec<PortSnapshot>,
    pub stalls: Stalls,
}

#[derive(Clone, Debug)]
pub struct PortSnapshot {
    pub counters: PortCounters,
    /// The port's queue statistics (their counters, and the peaks up to then).
    pub queues: Vec<QueueStats>,
}

/// The report (`--stats`).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Ingress frames the switch dropped before any queue, by reason, summed over ports.
    pub ingress_drops_by_reason: BTreeMap<&'static str, u64>,
    /// Forwarded ingress frames by kind, summed over ports.
    pub ingress_by_kind: BTreeMap<&'static str, u64>,
    pub fib_full: u64,
    pub start_ns: Nanos,
    pub now_ns: Nanos,
    pub frames_forwarded: u64,
    pub frames_received: u64,
    pub socket_drops: u64,
    pub frame_pool: FramePoolReport,
    /// `shaper.rate_fraction`, so that the caller need not know its default.
    pub shaper_rate_fraction: f64,
    /// Since the switch started.
    pub total: Section,
    /// Between `start_window` and `end_window` (or now); `total` if no window was started.
    pub window: Section,
    /// The first send that failed, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_tx_error: Option<String>,
    /// TCP at ingress (`capture_frames`, `faults`; `crate::capture`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ingress_tcp: Option<crate::capture::IngressReport>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FramePoolReport {
    pub slots: usize,
    pub free: usize,
    pub exhausted: u64,
}

/// The switch between two snapshots.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    pub from_ns: Nanos,
    pub to_ns: Nanos,
    pub duration_s: f64,
    pub ports: Vec<PortSection>,
    /// How late the switch's loop ran in the section (`crate::stall`).
    pub stalls: StallSection,
}

/// One port over a section.
#[derive(Clone, Debug, Serialize)]
pub struct PortSection {
    pub name: String,
    pub ifname: String,
    pub rate_bps: u64,
    pub shaper_rate_bps: u64,
    pub shaper_burst_bytes: u64,
    pub delay_ns: Nanos,
    /// The section's frames by kind, ingress drops, socket counters.
    #[serde(flatten)]
    pub counters: PortCounters,
    /// Each queue's counts over the section (its peaks: over the section; in `total`, over
    /// the run).
    pub queues: Vec<QueueStats>,
    /// The queues as `summary.json` lists them: those that saw a packet
    /// ([`QueueSummary::of_window`]), `goodput_bps` the payload the switch sent.
    pub summary: Vec<QueueSummary>,
    /// Every queue's counts by reason (the summary's totals count every queue).
    pub by_reason: Vec<ReasonCounts>,
}

/// The switch's counters at `now` (its ports' clocks brought there).
pub fn snapshot(sw: &mut Switch, now: Nanos) -> Snapshot {
    let ports = sw
        .ports
        .iter_mut()
        .map(|p| {
            p.port.advance_clock(now);
            PortSnapshot { counters: p.counters.clone(), queues: p.port.stats() }
        })
        .collect();
    Snapshot { at_ns: now, ports, stalls: sw.stalls }
}

impl Meter {
    /// Start the measurement window: counters are reported relative to now, and queue
    /// maxima restart.
    pub fn start_window(&mut self, sw: &mut Switch, now: Nanos) {
        for (i, p) in sw.ports.iter_mut().enumerate() {
            for (q, s) in p.port.stats().iter().enumerate() {
                let before = &mut self.peak_before[i][q];
                *before = (*before).max(s.max_bytes);
            }
            p.port.reset_peak();
        }
        self.stall_max_before = self.stall_max_before.max(sw.stalls.max_ns);
        sw.stalls.reset_max();
        self.window_start = Some(snapshot(sw, now));
        self.window_end = None;
    }

    /// End the measurement window (the final report still covers the whole run too).
    pub fn end_window(&mut self, sw: &mut Switch, now: Nanos) {
        if self.window_start.is_some() && self.window_end.is_none() {
            self.window_end = Some(snapshot(sw, now));
        }
    }

    /// The report at `now`: the whole run and the window.
    pub fn report(&self, sw: &mut Switch, now: Nanos) -> Report {
        let mut cur = snapshot(sw, now);
        let zero = Snapshot {
            at_ns: sw.start_ns,
            ports: (cur.ports.iter())
                .map(|p| PortSnapshot {
                    counters: PortCounters::default(),
                    queues: vec![QueueStats::default(); p.queues.len()],
                })
                .collect(),
            stalls: Stalls::default(),
        };
        let window = match (&self.window_start, &self.window_end) {
            (Some(a), Some(b)) => Some(section(sw, a, b, &cur)),
            (Some(a), None) => Some(section(sw, a, &cur, &cur)),
            (None, _) => None,
        };
        // The whole run's peak: before the window's reset too.
        for (p, before) in cur.ports.iter_mut().zip(&self.peak_before) {
            for (s, &b) in p.queues.iter_mut().zip(before) {
                s.max_bytes = s.max_bytes.max(b);
            }
        }
        let mut total = section(sw, &zero, &cur, &cur);
        total.stalls.max_ms = total.stalls.max_ms.max(self.stall_max_before as f64 / 1e6);
        let (mut drops, mut kinds) = (BTreeMap::new(), BTreeMap::new());
        for p in &sw.ports {
            for (k, v) in p.counters.ingress_drops() {
                *drops.entry(k).or_insert(0) += v;
            }
            for (k, v) in p.counters.ingress_kinds() {
                *kinds.entry(k).or_insert(0) += v;
            }
        }
        let sum = |f: fn(&PortCounters) -> u64| sw.ports.iter().map(|p| f(&p.counters)).sum::<u64>();
        Report {
            ingress_drops_by_reason: drops,
            ingress_by_kind: kinds,
            fib_full: sum(|c| c.fib_full),
            start_ns: sw.start_ns,
            now_ns: now,
            frames_forwarded: sw.frames_forwarded,
            frames_received: sum(|c| c.rx_frames),
            socket_drops: sum(|c| c.socket_drops),
            frame_pool: FramePoolReport {
                slots: sw.pool.capacity(),
                free: sw.pool.available(),
                exhausted: sum(|c| c.pool_exhausted),
            },
            shaper_rate_fraction: sw.shaper_rate_fraction,
            window: window.unwrap_or_else(|| total.clone()),
            total,
            first_tx_error: None,
            ingress_tcp: sw.ingress.report(),
        }
    }

    /// The time series' rows of the period since the previous sample (or the start), one per
    /// port and queue: the simulator's `timeseries.csv` rows, by the same code. `t_s` is
    /// the switch's clock (CLOCK_REALTIME).
    pub fn sample(&mut self, sw: &mut Switch, now: Nanos) -> TimeSeries {
        let mut ts = TimeSeries::default();
        let interval = now.saturating_sub(self.last_sample_ns).max(1);
        for (p, prev) in sw.ports.iter_mut().zip(self.last_sample.iter_mut()) {
            p.port.advance_clock(now);
            ts.record(now, &p.name, &p.port, p.rate_bps, prev, interval);
        }
        self.last_sample_ns = now;
        ts
    }
}

/// The section from snapshot `a` to `b`; `run` is the whole run up to now (which
/// queues saw a packet).
fn section(sw: &Switch, a: &Snapshot, b: &Snapshot, run: &Snapshot) -> Section {
    let dt = b.at_ns.saturating_sub(a.at_ns).max(1);
    let ports = (sw.ports.iter().enumerate())
        .map(|(i, p)| {
            let (pa, pb) = (&a.ports[i], &b.ports[i]);
            let queues: Vec<QueueStats> = pb.queues.iter().zip(&pa.queues).map(|(sb, sa)| sb.since(sa)).collect();
            let summary = (queues.iter().enumerate())
                .filter_map(|(q, w)| QueueSummary::of_window(&p.name, q, &run.ports[i].queues[q], w, dt))
                .collect();
            PortSection {
                name: p.name.clone(),
                ifname: p.ifname.clone(),
                rate_bps: p.rate_bps,
                shaper_rate_bps: p.shaper.rate_bps(),
                shaper_burst_bytes: p.shaper.burst_bytes(),
                delay_ns: p.delay_ns,
                counters: pb.counters.diff(&pa.counters),
                by_reason: queues.iter().map(ReasonCounts::of).collect(),
                summary,
                queues,
            }
        })
        .collect();
    Section {
        from_ns: a.at_ns,
        to_ns: b.at_ns,
        duration_s: dt as f64 / 1e9,
        ports,
        stalls: b.stalls.since(&a.stalls, dt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ShaperConfig;
    use crate::switch::tests::{cfg, drain, rx, H};
    use crate::wire::tests::tcp_frame;
    use crate::wire::ECN_ECT0;

    #[test]
    fn non_ip_frames_use_the_configured_dscp_and_report_has_window() {
        let cfgx = cfg(r#", "non_ip_dscp": 2, "switch": {"queues": 3}"#);
        let mut sw = Switch::new(&cfgx, 0).unwrap();
        let mut arp = H[0].to_vec();
        arp.extend_from_slice(&H[1]);
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.resize(42, 0);
        rx(&mut sw, 1, &arp, 10);
        assert_eq!(sw.ports[0].port.queue_occ()[2].pkts, 1);
        let mut meter = Meter::new(&sw, 0);
        meter.start_window(&mut sw, 100);
        drain(&mut sw, 1_000_000);
        let r = meter.report(&mut sw, 2_000_000);
        assert_eq!((r.window.ports[0].queues[2].deq_pkts, r.window.ports[0].queues[2].enq_pkts), (1, 0));
        assert_eq!(r.total.ports[0].queues[2].enq_pkts, 1);
        assert_eq!(r.total.ports[0].name, "s0->h0");
        // The queue saw its packet before the window: listed (the simulator's rule), once.
        let listed: Vec<u64> = r.window.ports[0].summary.iter().map(|q| q.queue).collect();
        assert_eq!(listed, [2], "queues 0 and 1 never saw a packet");
        assert_eq!(r.window.ports[0].by_reason.len(), 3, "every queue's counts by reason");
        // The shaper's rate fraction is the switch's default, reported for `ecnlab emulate`.
        assert_eq!(r.shaper_rate_fraction, ShaperConfig::default().rate_fraction);
    }

    /// The loop's stalls: the window counts its own, the whole run all of them, each its own
    /// longest (the window restarts it, as the queues' peaks).
    #[test]
    fn stalls_are_reported_per_section() {
        let mut sw = Switch::new(&cfg(""), 0).unwrap();
        let mut meter = Meter::new(&sw, 0);
        sw.stalls.observe(30_000_000, 0); // 30 ms before the window
        meter.start_window(&mut sw, 100_000_000);
        sw.stalls.observe(205_000_000, 200_000_000); // 5 ms in it
        meter.end_window(&mut sw, 1_100_000_000);
        let r = meter.report(&mut sw, 1_200_000_000);
        assert_eq!((r.window.stalls.count, r.window.stalls.max_ms), (1, 5.0));
        assert!((r.window.stalls.stalled_fraction - 0.005).abs() < 1e-12, "5 ms of a 1 s window");
        assert_eq!((r.total.stalls.count, r.total.stalls.max_ms), (2, 30.0));
        assert!((r.total.stalls.stalled_s - 0.035).abs() < 1e-12);
    }

    /// The report as written to `--stats`: ingress drops and kinds summed over the ports, each
    /// port's counters flattened into its section beside its queues.
    #[test]
    fn the_report_sums_the_ports_and_flattens_their_counters() {
        let mut sw = Switch::new(&cfg(""), 0).unwrap();
        let meter = Meter::new(&sw, 0);
        rx(&mut sw, 1, &[1, 2, 3], 10);
        rx(&mut sw, 2, &[1], 20);
        let mut ipv6 = crate::wire::tests::ether_frame(H[0], H[1], crate::wire::ETHERTYPE_IPV6, 80);
        ipv6[14] = 0x60;
        rx(&mut sw, 1, &ipv6, 30);
        drain(&mut sw, 1_000_000);
        let r = serde_json::to_value(meter.report(&mut sw, 2_000_000)).unwrap();
        assert_eq!(r["ingress_drops_by_reason"]["runt"], 2);
        assert_eq!(r["ingress_by_kind"]["ipv6"], 1);
        assert_eq!(
            (r["total"]["ports"][1]["runts"].as_u64(), r["total"]["ports"][2]["runts"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(r["total"]["ports"][0]["queues"][0]["enq_pkts"], 1, "the IPv6 frame, to h0");
        assert!(r.get("first_tx_error").is_none(), "none happened");
    }

    /// The time series and the report measure alike (both are `ecnlab_core::measure`): the
    /// rows of a sample taken at the window's start and end are the report's window, queue by
    /// queue; goodput counts the frames' TCP payload; the scheme's capacity estimate is a
    /// column, as in the simulator's `timeseries.csv`.
    #[test]
    fn time_series_rows_are_the_report_window() {
        let extra = r#", "switch": {"queues": 2}, "marking": {"scheme": "ideal", "ideal": {"k": "3KB"}}"#;
        let mut sw = Switch::new(&cfg(extra), 0).unwrap();
        let (t0, t1) = (1_000_000, 9_000_000);
        let mut meter = Meter::new(&sw, 0);
        meter.sample(&mut sw, t0);
        meter.start_window(&mut sw, t0);
        for i in 0..30 {
            rx(
                &mut sw,
                1 + i % 2,
                &tcp_frame(H[0], H[1 + i % 2], ((i % 2) << 2) as u8 | ECN_ECT0, 1448),
                t0 + i as u64,
            );
        }
        let mut t = t0;
        while t < t1 {
            t += 50_000;
            drain(&mut sw, t);
        }
        let ts = meter.sample(&mut sw, t1);
        let r = meter.report(&mut sw, t1);
        assert_eq!(ts.len(), 3 * 2, "a row per port and queue");
        assert_eq!((ts.t_s[0], ts.port[0].as_str()), (t1 as f64 / 1e9, "s0->h0"));
        let (w, listed) = (&r.window.ports[0].queues, &r.window.ports[0].summary);
        for q in 0..2 {
            assert_eq!(w[q].deq_pkts, 15);
            assert_eq!(w[q].deq_payload_bytes, 15 * 1448);
            assert_eq!(listed[q].queue, q as u64);
            assert_eq!(ts.goodput_bps[q], listed[q].goodput_bps);
            assert_eq!(ts.avg_qlen_bytes[q], listed[q].avg_qlen_bytes);
            assert_eq!(ts.sojourn_us[q], listed[q].avg_sojourn_us);
            assert_eq!(ts.marks[q], listed[q].marks);
            assert!(ts.marks[q] > 0, "a 3 KB threshold marks a 15-frame burst");
            assert!(ts.est_rate_bps[q].is_some_and(|c| c > 0.0), "the oracle's capacity is a column");
        }
    }
}
