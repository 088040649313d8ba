//! The memory estimate checked before a run is built.

use super::scenario::Scenario;
use super::topology::Topology;
use crate::packet::Packet;
use crate::topology::three_tier;
use crate::workload::TrafficSpec;
use ecnlab_core::port::Port;

/// A lower bound of the memory a run takes, its largest part named by the field that
/// causes it: checked against the memory available before anything is built, so that a
/// scenario that cannot fit is refused with one line instead of an allocation failure or
/// the OOM killer. Only what grows with the scenario is counted, at the smallest size it
/// takes (per-item costs measured on this build are higher), so a refusal is certain, not a
/// guess; a scenario just under the bound may still not fit.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryEstimate {
    pub bytes: u64,
    /// The field that accounts for most of it, and what it is.
    pub field: String,
    pub what: String,
}

impl Scenario {
    pub fn memory_estimate(&self) -> MemoryEstimate {
        let hosts = self.n_hosts() as u64;
        let (switches, links, multipath_hops) = self.shape(hosts);
        let nodes = hosts.saturating_add(switches);
        // Every switch port's queues, the fewest any tier has (a lower bound).
        let queues = self.tiers.values().map(|t| t.switch.queues).fold(self.switch.queues, usize::min).max(1) as u64;
        // Listed flows are connections built before the run (sender, receiver, record):
        // 1,136 B each measured on this build (`check` with 10^5 and 10^6), counted as 1,000.
        // Generated flows arrive one at a time: their part is counted below.
        let connections: u64 = self.flows.iter().map(|f| f.count as u64).sum();
        let mut flows: u64 = 0;
        let mut biggest_traffic: Option<(String, u64)> = None;
        for (i, t) in self.traffic.iter().enumerate() {
            let (n, key) = match t {
                TrafficSpec::Poisson(p) => (p.flows, "flows"),
                TrafficSpec::Incast(p) => {
                    (p.queries.saturating_mul(p.fanout.unwrap_or(p.senders.len()).max(1) as u64), "queries")
                }
                TrafficSpec::IncastGroups(p) => {
                    ((p.groups as u64).saturating_mul(p.fanout as u64).saturating_mul(p.queries), "queries")
                }
                TrafficSpec::Trace(_) => (0, "file"), // bounded by the file size (workload::MAX_INPUT_FILE_BYTES)
            };
            flows = flows.saturating_add(n);
            if biggest_traffic.as_ref().is_none_or(|(_, m)| n > *m) {
                biggest_traffic = Some((format!("traffic[{i}].{key}"), n));
            }
        }
        let switch_ports = links.saturating_sub(hosts);
        let samples = if self.metrics.timeseries { self.duration.0 / self.metrics.sample_interval.0.max(1) } else { 0 };
        let parts = [
            // Routing: one (first, len) pair of u32 per node and destination host, and the
            // equal-cost next hops.
            (
                nodes.saturating_mul(hosts).saturating_mul(8).saturating_add(multipath_hops.saturating_mul(4)),
                "topology".to_string(),
                format!("routes of {nodes} nodes to {hosts} hosts"),
            ),
            // An egress port per directed link with its queues' FIFOs and counters: a host's
            // NIC has one queue (without PFC).
            (
                (switch_ports.saturating_mul(Port::<Packet>::built_bytes(queues as usize)))
                    .saturating_add(hosts.saturating_mul(Port::<Packet>::built_bytes(1))),
                "topology".into(),
                format!("{switch_ports} switch ports of {queues} queues"),
            ),
            (connections.saturating_mul(1000), "flows".into(), format!("{connections} listed flows")),
            // A generated flow's arrival, its state and its record, ~220 B in the core, and
            // its row of flows.csv on the way through `ecnlab run` (JSON, then Python's
            // lists): 760 B a flow at 10^6 and 3 x 10^6 flows (2026-11-28), counted as 700.
            // At 200, 10^8 flows were estimated at 20 GB and passed on a 24 GB machine.
            (
                flows.saturating_mul(700),
                match biggest_traffic {
                    Some((key, n)) if n.saturating_mul(2) > flows => key,
                    _ => "traffic".into(),
                },
                format!("{flows} generated flows"),
            ),
            // Time series: a row per sample and switch queue, ~360 B a row through `ecnlab run`
            // (kept here, sent to Python as JSON, held there as lists; 2026-11-28), counted
            // as 300. A switch port that never sends records no rows.
            (
                samples.saturating_mul(switch_ports).saturating_mul(queues).saturating_mul(300),
                "metrics.sample_interval".into(),
                format!("{samples} time-series samples of {} queues", switch_ports.saturating_mul(queues)),
            ),
        ];
        let bytes = parts.iter().fold(0u64, |a, p| a.saturating_add(p.0));
        let (_, field, what) = parts.into_iter().max_by_key(|p| p.0).expect("five parts");
        MemoryEstimate { bytes, field, what }
    }

    /// Switches, directed links and equal-cost next hops stored beyond the first (routing's
    /// `route_links`, u32 each) of the topology, counted without building it; `hosts` is
    /// [`Scenario::n_hosts`].
    pub(crate) fn shape(&self, hosts: u64) -> (u64, u64, u64) {
        // Multipath routes keep every equal-cost next hop: a leaf has one per spine to each
        // host under another leaf (`Routes::shortest_paths`, u32 each).
        match &self.topology {
            Topology::Star { hosts, .. } => (1u64, 2 * *hosts as u64, 0u64),
            Topology::Dumbbell { left, right, .. } => (2, 2 * (*left as u64 + *right as u64 + 1), 0),
            Topology::LeafSpine { leaves, spines, hosts_per_leaf, .. } => {
                let (l, s, h) = (*leaves as u64, *spines as u64, *hosts_per_leaf as u64);
                let remote_hosts = l.saturating_sub(1).saturating_mul(h);
                let multipath = if s > 1 { l.saturating_mul(remote_hosts).saturating_mul(s) } else { 0 };
                (l + s, 2 * l.saturating_mul(h) + 2 * l.saturating_mul(s), multipath)
            }
            Topology::FatTree { k, .. } => {
                // An edge switch has k/2 ways up to each host under another, an aggregation
                // switch k/2 to each host of another pod.
                let (k, half, h) = (*k as u64, *k as u64 / 2, hosts);
                let multipath = if half > 1 {
                    let edge = k.saturating_mul(half).saturating_mul(h.saturating_sub(half)).saturating_mul(half);
                    let agg = k.saturating_mul(half).saturating_mul(h.saturating_sub(half * half)).saturating_mul(half);
                    edge.saturating_add(agg)
                } else {
                    0
                };
                let (switches, cables, _) = three_tier::counts(&self.topology).expect("a fat-tree");
                (switches, cables.saturating_mul(2), multipath)
            }
            Topology::Clos { pods, leaves_per_pod, spines_per_pod, super_spines_per_plane, hosts_per_leaf, .. } => {
                // A leaf has a way up per spine of its pod to each host under another leaf, a
                // spine one per super-spine of its plane to each host of another pod.
                let (p, l, s, u, hl) = (
                    *pods as u64,
                    *leaves_per_pod as u64,
                    *spines_per_pod as u64,
                    *super_spines_per_plane as u64,
                    *hosts_per_leaf as u64,
                );
                let up = |switches: u64, remote: u64, ways: u64| {
                    if ways > 1 {
                        switches.saturating_mul(remote).saturating_mul(ways)
                    } else {
                        0
                    }
                };
                let multipath = up(p.saturating_mul(l), hosts.saturating_sub(hl), s).saturating_add(up(
                    p.saturating_mul(s),
                    hosts.saturating_sub(l.saturating_mul(hl)),
                    u,
                ));
                let (switches, cables, _) = three_tier::counts(&self.topology).expect("a Clos");
                (switches, cables.saturating_mul(2), multipath)
            }
            // Counted from the file (its multipath routes not: a lower bound).
            Topology::File { file } => match crate::topology::file::read(file) {
                Ok(f) => (f.switches.len() as u64, 2 * f.links.len() as u64, 0),
                Err(_) => (0, 0, 0),
            },
        }
    }

    /// Refuse a scenario whose [`memory_estimate`](Self::memory_estimate) exceeds
    /// `available` bytes.
    pub fn check_memory(&self, available: u64) -> Result<(), String> {
        let m = self.memory_estimate();
        if m.bytes <= available {
            return Ok(());
        }
        let gb = |b: u64| b as f64 / 1e9;
        Err(format!(
            "{}: this scenario needs at least {:.1} GB of memory ({}), more than the {:.1} GB available",
            m.field,
            gb(m.bytes),
            m.what,
            gb(available)
        ))
    }
}
