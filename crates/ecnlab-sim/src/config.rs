//! The scenario: typed structs that a scenario file (TOML, or the JSON the Python front end
//! hands over) deserializes into. Configuration flows one way: file -> these structs ->
//! the built network. Unknown keys are errors; every error names its field path.

use crate::de::{internally_tagged, join_error};
use crate::packet::Packet;
use crate::tcp::{CcKind, TcpConfig};
use crate::workload::TrafficSpec;
use ecnlab_core::port::{Port, PortConfig};
use ecnlab_core::units::{with_packet_size, ByteSize, Duration, Rate};
use ecnlab_core::MarkingConfig;
use serde::{Deserialize, Serialize};

/// A whole experiment.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short identifier, e.g. `tcn-static`.
    pub name: String,
    /// One paragraph: what the scenario is and which paper figure it follows.
    #[serde(default)]
    pub description: String,
    /// What the paper claims for this setup (shown by `ecnlab list`; not used by the run).
    #[serde(default)]
    pub claim: String,
    /// Simulated time.
    pub duration: Duration,
    /// Master seed used when the command line gives none.
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: Topology,
    /// Every switch egress port (queues, buffer, scheduler).
    #[serde(default)]
    pub switch: PortConfig,
    /// The marking scheme applied at every switch egress port.
    #[serde(default)]
    pub marking: MarkingConfig,
    #[serde(default)]
    pub host: HostConfig,
    /// Transport defaults; a flow may override `cc`.
    #[serde(default)]
    pub transport: TcpConfig,
    /// Individually listed flows (long-lived, rate-limited, or of a given size).
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Generated traffic: Poisson arrivals from a flow-size CDF, incast queries, traces.
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
    #[serde(default)]
    pub rtt_variation: Option<RttVariation>,
    #[serde(default)]
    pub probes: Vec<ProbeSpec>,
    #[serde(default)]
    pub metrics: MetricsConfig,
}

fn default_seed() -> u64 {
    1
}

/// Built-in topologies. Host indices are 0-based; in a star, hosts hang off one switch.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
#[schemars(!remote, tag = "kind")]
pub enum Topology {
    /// N hosts on one switch.
    Star {
        /// Number of hosts (0..hosts).
        hosts: usize,
        /// Rate of each host link.
        link_rate: Rate,
        /// One-way propagation delay of each host link.
        link_delay: Duration,
        /// Per-host overrides of `link_delay` (index = host; shorter lists leave the rest).
        #[serde(default)]
        host_link_delay: Vec<Duration>,
        /// Per-host overrides of `link_rate`.
        #[serde(default)]
        host_link_rate: Vec<Rate>,
    },
    /// `left` hosts on switch 0, `right` hosts on switch 1, one bottleneck link between.
    /// Hosts 0..left are on the left.
    Dumbbell {
        /// Hosts on switch 0 (hosts 0..left).
        left: usize,
        /// Hosts on switch 1 (hosts left..left + right).
        right: usize,
        /// Rate of each host link.
        link_rate: Rate,
        /// One-way propagation delay of each host link.
        link_delay: Duration,
        /// Rate of the link between the two switches.
        bottleneck_rate: Rate,
        /// One-way propagation delay of the link between the two switches.
        bottleneck_delay: Duration,
    },
    /// Two-tier Clos: `leaves` ToRs with `hosts_per_leaf` hosts each, every leaf connected
    /// to every spine; per-flow ECMP. Host h sits on leaf h / hosts_per_leaf.
    LeafSpine {
        /// Number of leaf (ToR) switches.
        leaves: usize,
        /// Number of spine switches, each connected to every leaf.
        spines: usize,
        /// Hosts on each leaf.
        hosts_per_leaf: usize,
        /// Rate of each host link.
        link_rate: Rate,
        /// Leaf-spine rate (default: link_rate).
        #[serde(default)]
        core_rate: Option<Rate>,
        /// Host-leaf one-way delay.
        host_delay: Duration,
        /// Leaf-spine one-way delay.
        core_delay: Duration,
    },
}

internally_tagged!(Topology, "kind");

/// Host settings.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Buffer of a host's NIC queue (one FIFO, tail drop, no marking). Not under DCQCN,
    /// whose hosts are RDMA NICs: a QP hands the NIC its next packet only once the previous
    /// one has left, so the NIC holds a packet per QP and never drops.
    pub nic_buffer: ByteSize,
    /// Flows of `[[traffic]]` between the same two hosts reuse idle connections (a
    /// persistent connection pool per host pair, as the TCN testbed's TrafficGenerator and
    /// the TCN/MQ-ECN ns-2 scripts do); a flow that finds every connection busy opens a new
    /// one. `false`: every flow gets a fresh connection (the ECN# ns-3 scripts).
    pub persistent_connections: bool,
    /// PIAS tagging at the sender (TCN §6.1.3/§6.2): a message's bytes below
    /// `pias_thresholds[i]` carry DSCP i, the rest the flow's class. Empty = off.
    pub pias_thresholds: Vec<ByteSize>,
    /// DSCP of pure ACKs and DCQCN's CNPs (default: the DSCP of the data segment they
    /// answer). TCN-NS2 sends every pure ACK at priority 0; RDMA NICs send ACKs and CNPs in a
    /// high-priority class of their own.
    pub ack_dscp: Option<u8>,
    /// Apply the scenario's marking scheme at host NIC queues too. A sender whose own NIC is
    /// its bottleneck (several flows from one host) otherwise builds an unmarked queue up to
    /// `nic_buffer`; real Linux hosts avoid that with TCP Small Queues, and the TCN/MQ-ECN
    /// ns-2 scripts install the switch's queue (with its marking) on host links too
    /// (REFERENCE-IMPLEMENTATIONS §5, quirk 6).
    pub nic_marking: bool,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            nic_buffer: ByteSize(4_000_000),
            persistent_connections: true,
            pias_thresholds: Vec::new(),
            ack_dscp: None,
            nic_marking: false,
        }
    }
}

/// Extra one-way delay to emulate RTT variation (ECN# §2.2, §5): added to the data
/// packets a sender puts on its access link, like the ECN# ns-3 scripts' DelayQueueDisc at
/// the server NIC (REFERENCE-IMPLEMENTATIONS §2.11); ACKs are not delayed.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RttVariation {
    /// Draw one delay per connection (`per_flow`) or one per sending host (`per_host`).
    #[serde(default)]
    pub mode: RttVariationMode,
    pub delay: DelayDist,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RttVariationMode {
    #[default]
    PerFlow,
    PerHost,
}

/// A distribution of extra delays.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
#[schemars(!remote, tag = "dist")]
pub enum DelayDist {
    /// The same delay everywhere.
    Fixed {
        /// The extra one-way delay.
        value: Duration,
    },
    /// Uniform between `min` and `max`.
    Uniform {
        /// Smallest extra delay.
        min: Duration,
        /// Largest extra delay.
        max: Duration,
    },
    /// One of `values`, equally likely (the ECN# ns-3 classes: 1, 20, 50, 80, 160 us).
    Choice {
        /// The delays to choose from, equally likely.
        values: Vec<Duration>,
    },
    /// An empirical CDF: `points = [[delay, cumulative probability], ...]`, linear
    /// interpolation between points.
    Empirical {
        /// `[[delay, cumulative probability], ...]`, non-decreasing, ending at 1.
        points: Vec<(Duration, f64)>,
    },
}

internally_tagged!(DelayDist, "dist");

impl DelayDist {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            DelayDist::Fixed { .. } => Ok(()),
            DelayDist::Uniform { min, max } if min > max => Err("min: larger than max".into()),
            DelayDist::Uniform { .. } => Ok(()),
            DelayDist::Choice { values } if values.is_empty() => Err("values: empty".into()),
            DelayDist::Choice { .. } => Ok(()),
            DelayDist::Empirical { points } => {
                if points.len() < 2 {
                    return Err("points: need at least 2 points".into());
                }
                if let Some(i) = points.iter().position(|p| !p.1.is_finite()) {
                    return Err(format!("points[{i}]: the probability is not a number"));
                }
                for (i, w) in points.windows(2).enumerate() {
                    if w[1].0 < w[0].0 || w[1].1 < w[0].1 {
                        return Err(format!("points[{}]: not non-decreasing", i + 1));
                    }
                }
                let last = points.last().unwrap().1;
                if (last - 1.0).abs() > 1e-9 || points[0].1 < 0.0 {
                    return Err("points: probabilities must lie in [0, 1] and end at 1".into());
                }
                Ok(())
            }
        }
    }

    /// Draw a delay in ns.
    pub fn sample(&self, rng: &mut ecnlab_core::rng::Rng) -> u64 {
        match self {
            DelayDist::Fixed { value } => value.0,
            DelayDist::Uniform { min, max } => rng.uniform(min.0 as f64, max.0 as f64).round() as u64,
            DelayDist::Choice { values } => values[rng.below(values.len() as u64) as usize].0,
            DelayDist::Empirical { points } => {
                let u = rng.f64();
                let i = points.iter().position(|p| p.1 >= u).unwrap_or(points.len() - 1);
                if i == 0 {
                    return points[0].0 .0;
                }
                let (a, b) = (points[i - 1], points[i]);
                let f = if b.1 > a.1 { (u - a.1) / (b.1 - a.1) } else { 1.0 };
                (a.0 .0 as f64 + f * (b.0 .0 as f64 - a.0 .0 as f64)).round() as u64
            }
        }
    }
}

/// One flow, or `count` identical flows.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Sending host (0-based).
    pub src: usize,
    /// Receiving host (0-based).
    pub dst: usize,
    /// DSCP (traffic class); selects the switch queue.
    #[serde(default)]
    pub class: u8,
    /// Number of identical flows.
    #[serde(default = "one")]
    pub count: u32,
    /// When the flows start.
    #[serde(default)]
    pub start: Duration,
    /// Each flow of this entry starts at `start` plus a delay drawn uniformly from
    /// [0, start_jitter) from the run's seed (a stream of its own): flows whose start times
    /// are otherwise fixed give different runs for different seeds. None: exactly `start`.
    #[serde(default)]
    pub start_jitter: Option<Duration>,
    /// When the application stops writing (long-lived flows); none = end of run.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Bytes to send; none = long-lived (until `stop`).
    #[serde(default)]
    pub size: Option<ByteSize>,
    /// Application rate limit (the application writes at this rate).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Congestion control of this flow (default: `transport.cc`).
    #[serde(default)]
    pub cc: Option<CcKind>,
}

fn one() -> u32 {
    1
}

/// A ping probe: small non-ECT request/reply packets between two hosts in a class.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Host that sends the pings (0-based).
    pub src: usize,
    /// Host that answers them.
    pub dst: usize,
    /// DSCP of requests and replies; selects the switch queue.
    #[serde(default)]
    pub class: u8,
    /// Time between two pings.
    pub interval: Duration,
    /// First ping.
    #[serde(default)]
    pub start: Duration,
    /// No ping after this time; none = end of run.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Wire size of a probe packet.
    #[serde(default = "probe_size")]
    pub size: ByteSize,
}

fn probe_size() -> ByteSize {
    ByteSize(64)
}

/// What is measured and when.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Per-queue statistics and probe RTTs count from this time on.
    pub warmup: Duration,
    /// Time-series sampling period (goodput, queue length, sojourn per queue).
    pub sample_interval: Duration,
    /// Record time series at all.
    pub timeseries: bool,
    /// End the run as soon as every flow of a given size has completed (and no long-lived
    /// flow exists), instead of at `duration`, which then only caps the run.
    pub stop_when_done: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            warmup: Duration(0),
            sample_interval: Duration::from_ms(1),
            timeseries: true,
            stop_when_done: true,
        }
    }
}

impl Scenario {
    /// Parse a scenario from JSON text; the error names the field path.
    pub fn from_json(text: &str) -> Result<Scenario, String> {
        let mss = serde_json::from_str::<MssOnly>(text).ok().and_then(|m| m.transport.mss);
        let de = &mut serde_json::Deserializer::from_str(text);
        let scn: Scenario = with_packet_size(mtu_of(mss), || serde_path_to_error::deserialize(de)).map_err(|e| {
            let path = e.path().clone();
            let inner = e.into_inner().to_string();
            // serde_json appends " at line L column C" which means nothing to a user of TOML.
            let inner = match inner.rfind(" at line ") {
                Some(i) => &inner[..i],
                None => &inner,
            };
            join_error(&path, inner)
        })?;
        let read = serde_json::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())?;
        scn.refuse_tables_as_arrays(&read)?;
        Ok(scn)
    }

    /// See [`crate::de::refuse_tables_as_arrays`].
    fn refuse_tables_as_arrays(&self, read: &serde_json::Value) -> Result<(), String> {
        let canonical = serde_json::to_value(self).map_err(|e| e.to_string())?;
        crate::de::refuse_tables_as_arrays(read, &canonical, "")
    }

    /// Parse a scenario from TOML text.
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        let mss = toml::from_str::<MssOnly>(text).ok().and_then(|m| m.transport.mss);
        let de = toml::Deserializer::parse(text).map_err(|e| e.message().to_string())?;
        let scn: Scenario = with_packet_size(mtu_of(mss), || serde_path_to_error::deserialize(de)).map_err(|e| {
            let path = e.path().clone();
            join_error(&path, e.into_inner().message())
        })?;
        let read = toml::from_str::<serde_json::Value>(text).map_err(|e| e.message().to_string())?;
        scn.refuse_tables_as_arrays(&read)?;
        Ok(scn)
    }

    /// Number of hosts (saturating: an absurd topology is rejected by `validate`, not by
    /// an overflow).
    pub fn n_hosts(&self) -> usize {
        match &self.topology {
            Topology::Star { hosts, .. } => *hosts,
            Topology::Dumbbell { left, right, .. } => left.saturating_add(*right),
            Topology::LeafSpine { leaves, hosts_per_leaf, .. } => leaves.saturating_mul(*hosts_per_leaf),
        }
    }

    /// Checks that need more than one field (serde checks types and names).
    pub fn validate(&self) -> Result<(), String> {
        check_name(&self.name)?;
        let n = self.n_hosts();
        if n < 2 {
            return Err("topology: needs at least 2 hosts".into());
        }
        if n > MAX_HOSTS {
            return Err(format!("topology: {n} hosts, at most {MAX_HOSTS} (host ids are 16-bit)"));
        }
        if self.duration.0 == 0 {
            return Err("duration: must be larger than 0".into());
        }
        // Bounds on times keep every `now + delay` far from u64 overflow (found by fuzzing).
        if self.duration.0 > MAX_TIME_NS {
            return Err(format!(
                "duration: {} is longer than the longest run, {}",
                self.duration,
                Duration(MAX_TIME_NS)
            ));
        }
        for (field, d) in self.link_delays() {
            if d.0 > MAX_DELAY_NS {
                return Err(format!("{field}: {d} is longer than the longest link delay, {}", Duration(MAX_DELAY_NS)));
            }
        }
        if self.transport.mss > MAX_MSS {
            return Err(format!(
                "transport.mss: {} is larger than an IPv4 packet can carry ({MAX_MSS})",
                self.transport.mss
            ));
        }
        match &self.topology {
            Topology::Star { link_rate, host_link_rate, host_link_delay, hosts, .. } => {
                positive_rate("topology.link_rate", *link_rate)?;
                for (i, r) in host_link_rate.iter().enumerate() {
                    positive_rate(&format!("topology.host_link_rate[{i}]"), *r)?;
                }
                for (name, len) in
                    [("host_link_rate", host_link_rate.len()), ("host_link_delay", host_link_delay.len())]
                {
                    if len > *hosts {
                        return Err(format!("topology.{name}: {len} entries for {hosts} hosts"));
                    }
                }
            }
            Topology::Dumbbell { link_rate, bottleneck_rate, .. } => {
                positive_rate("topology.link_rate", *link_rate)?;
                positive_rate("topology.bottleneck_rate", *bottleneck_rate)?;
            }
            Topology::LeafSpine { leaves, spines, link_rate, core_rate, .. } => {
                if *leaves == 0 {
                    return Err("topology.leaves: must be at least 1".into());
                }
                if *spines == 0 {
                    return Err("topology.spines: must be at least 1".into());
                }
                if leaves.saturating_mul(*spines) > MAX_CORE_LINKS {
                    return Err(format!(
                        "topology.spines: {leaves} leaves x {spines} spines is more than {MAX_CORE_LINKS} leaf-spine links"
                    ));
                }
                positive_rate("topology.link_rate", *link_rate)?;
                if let Some(r) = core_rate {
                    positive_rate("topology.core_rate", *r)?;
                }
            }
        }
        self.check_thresholds()?;
        self.check_room_for_a_packet()?;
        {
            use ecnlab_core::marking::{threshold::Scope, SchemeName};
            let m = &self.marking;
            let on_pool = m.scheme == SchemeName::PerPool
                || (m.scheme == SchemeName::DctcpRed && m.threshold.scope == Scope::Pool);
            if on_pool && self.switch.pool.is_none() {
                // Without a pool a port's "pool occupancy" is its own bytes: per-port marking
                // reported as pool marking.
                return Err(format!(
                    "marking.scheme: {} compares a shared pool's occupancy, and switch.pool is not set",
                    if m.scheme == SchemeName::PerPool { "per_pool" } else { "threshold.scope = \"pool\"" }
                ));
            }
        }
        self.switch
            .pfc
            .check(self.switch.queues, self.switch.buffer, self.switch.pool)
            .map_err(|e| format!("switch.pfc.{e}"))?;
        if self.switch.pfc.enabled {
            // PFC counts a packet from its admission to its departure; a packet a scheme drops
            // at dequeue would leave a lossless queue by a way PFC does not count (and a
            // lossless queue that drops by design is a contradiction).
            use ecnlab_core::marking::{codel::CodelMode, NonEctPolicy, SchemeName};
            if self.marking.scheme == SchemeName::Codel && self.marking.codel.mode == CodelMode::Drop {
                return Err("marking.codel.mode: \"drop\" drops what switch.pfc keeps lossless (use \"mark\")".into());
            }
            if self.marking.non_ect == NonEctPolicy::Drop {
                return Err("marking.non_ect: \"drop\" drops what switch.pfc keeps lossless (use \"pass\")".into());
            }
        }
        if self.transport.cc == CcKind::Dcqcn && self.host.nic_marking {
            // An RDMA NIC hands its arbiter a QP's next packet when the previous one has left
            // (dcqcn/sender.rs): a packet dropped at dequeue would never leave, and its QP
            // would wait for good.
            use ecnlab_core::marking::{codel::CodelMode, SchemeName};
            if self.marking.scheme == SchemeName::Codel && self.marking.codel.mode == CodelMode::Drop {
                return Err(
                    "marking.codel.mode: \"drop\" with transport.cc = \"dcqcn\" and host.nic_marking drops in \
                            the RDMA NIC, which never drops its QPs' packets (use \"mark\")"
                        .into(),
                );
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            for (name, h) in [("src", f.src), ("dst", f.dst)] {
                if h >= n {
                    return Err(format!("flows[{i}].{name}: host {h} does not exist ({n} hosts)"));
                }
            }
            if f.src == f.dst {
                return Err(format!("flows[{i}]: src and dst are the same host"));
            }
            if f.rate.is_some_and(|r| r.0 == 0) {
                return Err(format!("flows[{i}].rate: must be larger than 0"));
            }
            if f.size.is_some_and(|s| s.0 == 0) {
                return Err(format!("flows[{i}].size: must be larger than 0"));
            }
            if f.class >= 64 {
                return Err(format!("flows[{i}].class: DSCP {} is not in 0..63", f.class));
            }
            for (name, t) in [("start", Some(f.start)), ("stop", f.stop)] {
                if t.is_some_and(|t| t.0 > MAX_TIME_NS) {
                    return Err(format!("flows[{i}].{name}: later than the longest run, {}", Duration(MAX_TIME_NS)));
                }
            }
            stops_after_start(&format!("flows[{i}]"), f.start, f.stop)?;
        }
        for (i, p) in self.probes.iter().enumerate() {
            for (name, h) in [("src", p.src), ("dst", p.dst)] {
                if h >= n {
                    return Err(format!("probes[{i}].{name}: host {h} does not exist ({n} hosts)"));
                }
            }
            if p.src == p.dst {
                return Err(format!("probes[{i}]: src and dst are the same host"));
            }
            if p.interval.0 == 0 {
                return Err(format!("probes[{i}].interval: must be larger than 0"));
            }
            if p.class >= 64 {
                return Err(format!("probes[{i}].class: DSCP {} is not in 0..63", p.class));
            }
            if !(MIN_PROBE_BYTES..=MAX_PACKET_BYTES).contains(&p.size.0) {
                return Err(format!(
                    "probes[{i}].size: {} is not in {MIN_PROBE_BYTES}..{MAX_PACKET_BYTES} B (IPv4 and ICMP echo headers \
                     to the largest IPv4 packet)",
                    p.size
                ));
            }
            stops_after_start(&format!("probes[{i}]"), p.start, p.stop)?;
            for (name, t) in [("interval", Some(p.interval)), ("start", Some(p.start)), ("stop", p.stop)] {
                if t.is_some_and(|t| t.0 > MAX_TIME_NS) {
                    return Err(format!("probes[{i}].{name}: longer than the longest run, {}", Duration(MAX_TIME_NS)));
                }
            }
        }
        if self.metrics.sample_interval.0 == 0 {
            return Err("metrics.sample_interval: must be larger than 0".into());
        }
        if self.metrics.warmup >= self.duration {
            return Err(format!(
                "metrics.warmup: {} is not shorter than duration = {}",
                self.metrics.warmup, self.duration
            ));
        }
        self.transport.validate()?;
        if self.flows.iter().all(|f| f.count == 0) && self.traffic.is_empty() && self.probes.is_empty() {
            // The run would end with nothing measured and a result that looks complete.
            return Err("flows: the scenario sends nothing (no [[flows]] with a count above 0, no [[traffic]], \
                        no [[probes]])"
                .into());
        }
        if let (CcKind::Dcqcn, Some(min)) = (self.transport.cc, self.transport.dcqcn.min_rate) {
            // DCQCN never sends below min_rate: at or above a NIC's line rate it cannot slow
            // down at all (it was clamped to the line rate, and the fabric dropped the rest).
            let slowest = match &self.topology {
                Topology::Star { link_rate, host_link_rate, hosts, .. } => {
                    (0..*hosts).map(|h| host_link_rate.get(h).unwrap_or(link_rate).0).min().unwrap_or(link_rate.0)
                }
                Topology::Dumbbell { link_rate, .. } | Topology::LeafSpine { link_rate, .. } => link_rate.0,
            };
            if min.0 >= slowest {
                return Err(format!(
                    "transport.dcqcn.min_rate: {min} is not below the slowest host's line rate, {}: DCQCN could \
                     never lower its rate",
                    Rate(slowest)
                ));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(cc) = f.cc {
                self.transport.check_cc(cc).map_err(|e| format!("flows[{i}].{e}"))?;
            }
        }
        if let Some(rv) = &self.rtt_variation {
            rv.delay.validate().map_err(|e| format!("rtt_variation.delay.{e}"))?;
        }
        if let Some(d) = self.host.ack_dscp {
            if d >= 64 {
                return Err(format!("host.ack_dscp: {d} is not in 0..63"));
            }
        }
        if self.host.pias_thresholds.windows(2).any(|w| w[1] <= w[0]) {
            return Err("host.pias_thresholds: must be increasing".into());
        }
        let pias = self.host.pias_thresholds.len();
        if pias > crate::tcp::sender::MAX_PIAS_LEVELS {
            return Err(format!(
                "host.pias_thresholds: {pias} thresholds, at most {} (PIAS tags DSCP 0..{})",
                crate::tcp::sender::MAX_PIAS_LEVELS,
                crate::tcp::sender::MAX_PIAS_LEVELS
            ));
        }
        let dscps = self.switch.dscp_to_queue.len();
        if dscps > 64 {
            return Err(format!("switch.dscp_to_queue: {dscps} entries, but DSCP has 64 values (0..63)"));
        }
        for (i, t) in self.traffic.iter().enumerate() {
            let start = match t {
                TrafficSpec::Poisson(p) => p.start,
                TrafficSpec::Incast(p) => p.start,
                TrafficSpec::Trace(_) => continue,
            };
            if start.0 > MAX_TIME_NS {
                return Err(format!("traffic[{i}].start: later than the longest run, {}", Duration(MAX_TIME_NS)));
            }
        }
        Ok(())
    }

    /// Every one-way delay a packet can be given: link delays and RTT-variation delays.
    fn link_delays(&self) -> Vec<(String, Duration)> {
        let mut v: Vec<(String, Duration)> = match &self.topology {
            Topology::Star { link_delay, host_link_delay, .. } => {
                std::iter::once(("topology.link_delay".to_string(), *link_delay))
                    .chain(
                        host_link_delay.iter().enumerate().map(|(i, d)| (format!("topology.host_link_delay[{i}]"), *d)),
                    )
                    .collect()
            }
            Topology::Dumbbell { link_delay, bottleneck_delay, .. } => vec![
                ("topology.link_delay".into(), *link_delay),
                ("topology.bottleneck_delay".into(), *bottleneck_delay),
            ],
            Topology::LeafSpine { host_delay, core_delay, .. } => {
                vec![("topology.host_delay".into(), *host_delay), ("topology.core_delay".into(), *core_delay)]
            }
        };
        if let Some(rv) = &self.rtt_variation {
            let f = "rtt_variation.delay";
            match &rv.delay {
                DelayDist::Fixed { value } => v.push((format!("{f}.value"), *value)),
                DelayDist::Uniform { min, max } => v.extend([(format!("{f}.min"), *min), (format!("{f}.max"), *max)]),
                DelayDist::Choice { values } => {
                    v.extend(values.iter().enumerate().map(|(i, d)| (format!("{f}.values[{i}]"), *d)))
                }
                DelayDist::Empirical { points } => {
                    v.extend(points.iter().enumerate().map(|(i, p)| (format!("{f}.points[{i}]"), p.0)))
                }
            }
        }
        v
    }

    /// A queue-length threshold of the chosen scheme at or above the port buffer can never
    /// act (the queue is dropped before it is reached): almost surely a unit slip.
    fn check_thresholds(&self) -> Result<(), String> {
        use ecnlab_core::marking::SchemeName::*;
        let m = &self.marking;
        let mut th: Vec<(String, ByteSize)> = Vec::new();
        match m.scheme {
            PerQueue | PerPort | PerPool | DequeueRed | DctcpRed => {
                th.push(("threshold.k".into(), m.threshold.k));
                for (i, k) in m.threshold.k_per_queue.iter().enumerate() {
                    th.push((format!("threshold.k_per_queue[{i}]"), *k));
                }
            }
            Red => {
                th.push(("red.min_th".into(), m.red.min_th));
                th.push(("red.max_th".into(), m.red.max_th));
            }
            Ideal => th.push(("ideal.k".into(), m.ideal.k)),
            MqEcn => th.push(("mq_ecn.k".into(), m.mq_ecn.k)),
            EcnSharp => {
                th.extend(m.ecn_sharp.ins_target_bytes.map(|b| ("ecn_sharp.ins_target_bytes".into(), b)));
                th.extend(m.ecn_sharp.pst_target_bytes.map(|b| ("ecn_sharp.pst_target_bytes".into(), b)));
            }
            Dualq => {
                for (inst, p) in [("scalable", &m.dualq.scalable), ("classic", &m.dualq.classic)] {
                    th.push((format!("dualq.{inst}.min_th"), p.min_th));
                    th.push((format!("dualq.{inst}.max_th"), p.max_th));
                }
            }
            None | Codel | Tcn => {}
        }
        let buffer = self.switch.buffer;
        match th.into_iter().find(|(_, k)| k.0 > buffer.0 || (k.0 == buffer.0 && buffer.0 > 0)) {
            Some((name, k)) => {
                Err(format!("marking.{name}: {k} is not below the port buffer switch.buffer = {buffer}"))
            }
            Option::None => Ok(()),
        }
    }
}

impl Scenario {
    /// Every buffer holds at least one full-size packet: a smaller one drops every data
    /// segment (admission is whole packets, tail drop), and the run would deliver nothing
    /// yet look complete.
    fn check_room_for_a_packet(&self) -> Result<(), String> {
        let mtu = mtu_of(Some(self.transport.mss));
        let sw = &self.switch;
        let limits = sw.queue_limits.iter().enumerate().map(|(i, b)| (format!("switch.queue_limits[{i}]"), *b));
        let buffers = [("switch.buffer".to_string(), Some(sw.buffer)), ("switch.pool".to_string(), sw.pool)]
            .into_iter()
            .filter_map(|(f, b)| b.map(|b| (f, b)))
            .chain(limits)
            .chain([("host.nic_buffer".to_string(), self.host.nic_buffer)]);
        for (field, b) in buffers {
            if b.0 < mtu {
                return Err(format!(
                    "{field}: {b} cannot hold one full-size packet ({mtu} B: transport.mss + 40 B of headers)"
                ));
            }
        }
        Ok(())
    }
}

/// The one field sizes in packets depend on, read before the rest of the scenario.
#[derive(Deserialize, Default)]
struct MssOnly {
    #[serde(default)]
    transport: MssOfTransport,
}
#[derive(Deserialize, Default)]
struct MssOfTransport {
    mss: Option<u32>,
}

/// Bytes of one packet on the wire, for sizes written in packets (`"65p"`): the MSS plus 40
/// bytes of TCP/IP headers, as the papers' MTU of 1500 B for an MSS of 1460 B.
pub fn mtu_of(mss: Option<u32>) -> u64 {
    mss.unwrap_or(TcpConfig::default().mss) as u64 + crate::packet::TCP_IP_HEADER as u64
}

/// Host ids are 16-bit in packets.
pub const MAX_HOSTS: usize = u16::MAX as usize;
/// Leaf-spine links, a bound that keeps an absurd fabric from exhausting memory.
pub const MAX_CORE_LINKS: usize = 1_000_000;
/// The longest run (and any time in a scenario): 10^6 s, 11.6 days.
pub const MAX_TIME_NS: u64 = 1_000_000 * 1_000_000_000;
/// The longest one-way link delay (or extra RTT-variation delay): 10 s.
pub const MAX_DELAY_NS: u64 = 10 * 1_000_000_000;
/// The largest TCP payload of an IPv4 packet: 65535 - 20 (IP) - 20 (TCP).
pub const MAX_MSS: u32 = 65_495;

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
        // Multipath routes keep every equal-cost next hop: a leaf has one per spine to each
        // host under another leaf (`Net::compute_routes`, u32 each).
        let (switches, links, multipath_hops) = match &self.topology {
            Topology::Star { hosts, .. } => (1u64, 2 * *hosts as u64, 0u64),
            Topology::Dumbbell { left, right, .. } => (2, 2 * (*left as u64 + *right as u64 + 1), 0),
            Topology::LeafSpine { leaves, spines, hosts_per_leaf, .. } => {
                let (l, s, h) = (*leaves as u64, *spines as u64, *hosts_per_leaf as u64);
                let remote_hosts = l.saturating_sub(1).saturating_mul(h);
                let multipath = if s > 1 { l.saturating_mul(remote_hosts).saturating_mul(s) } else { 0 };
                (l + s, 2 * l.saturating_mul(h) + 2 * l.saturating_mul(s), multipath)
            }
        };
        let nodes = hosts.saturating_add(switches);
        let queues = self.switch.queues.max(1) as u64;
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

/// The smallest probe: an IPv4 header and an ICMP echo header (20 + 8 B).
pub const MIN_PROBE_BYTES: u64 = 28;
/// The largest IPv4 packet.
pub const MAX_PACKET_BYTES: u64 = 65_535;

/// `stop`, when given, must come after `start`: a flow or probe that stops before it starts
/// would silently do nothing.
fn stops_after_start(what: &str, start: Duration, stop: Option<Duration>) -> Result<(), String> {
    match stop {
        Some(stop) if stop <= start => Err(format!("{what}.stop: {stop} is not after start = {start}")),
        _ => Ok(()),
    }
}

/// A scenario's name names its default result directory (`out/<name>`), so it must be one
/// plain path component: never `..`, an absolute path or a hidden file.
fn check_name(name: &str) -> Result<(), String> {
    const MAX: usize = 100;
    let plain = |c: char| c.is_alphanumeric() || "-_.+=,@".contains(c);
    if name.is_empty() {
        return Err("name: empty".into());
    }
    if name.chars().count() > MAX {
        return Err(format!("name: longer than {MAX} characters"));
    }
    if name.starts_with('.') || !name.chars().all(plain) {
        return Err(format!(
            "name: {} is not a plain name (letters, digits and -_.+=,@, not starting with a dot): it names the result directory",
            ecnlab_core::units::echo(name)
        ));
    }
    Ok(())
}

fn positive_rate(field: &str, r: Rate) -> Result<(), String> {
    if r.0 == 0 {
        return Err(format!("{field}: must be larger than 0"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "name = \"t\"\nduration = \"1ms\"\n";

    fn err(toml_text: &str) -> String {
        Scenario::from_toml(toml_text).and_then(|s| s.validate().map(|_| s)).expect_err("must be rejected")
    }

    #[test]
    fn errors_inside_tagged_tables_name_the_field() {
        let star = "[topology]\nkind = \"star\"\nhosts = 2\nlink_delay = \"1us\"\n";
        let e = err(&format!("{HEAD}{star}link_rate = \"-1Gbps\"\n"));
        assert!(e.starts_with("topology.link_rate: "), "{e}");
        let e = err(&format!("{HEAD}{star}link_rate = \"1Gbps\"\n[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.5\nflows = \"many\"\n"));
        assert!(e.starts_with("traffic[0].flows: invalid type"), "{e}");
        let e = err(&format!(
            "{HEAD}{star}link_rate = \"1Gbps\"\n[rtt_variation]\ndelay = {{ dist = \"fixed\", value = \"x\" }}\n"
        ));
        assert!(e.starts_with("rtt_variation.delay.value: "), "{e}");
        let e = err(&format!("{HEAD}[topology]\nkind = \"stra\"\n"));
        assert_eq!(e, "topology.kind: unknown variant `stra` (did you mean `star`?)");
    }

    #[test]
    fn tagged_tables_round_trip_through_json() {
        let text = format!(
            "{HEAD}[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\n\
             link_rate = \"10Gbps\"\nhost_delay = \"1us\"\ncore_delay = \"1us\"\n\
             [[traffic]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2]\nsize_min = \"1KB\"\nsize_max = \"2KB\"\nqueries = 1\n"
        );
        let s = Scenario::from_toml(&text).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"kind\":\"leaf_spine\"") && json.contains("\"kind\":\"incast\""), "{json}");
        let back = Scenario::from_json(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    #[test]
    fn a_threshold_above_the_buffer_is_rejected() {
        let star = "[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"1Gbps\"\nlink_delay = \"1us\"\n";
        let e = err(&format!(
            "{HEAD}{star}[switch]\nbuffer = \"50KB\"\n[marking]\nscheme = \"mq_ecn\"\n[marking.mq_ecn]\nk = \"60KB\"\n"
        ));
        assert!(e.starts_with("marking.mq_ecn.k: 60KB is not below the port buffer"), "{e}");
        // The same K is fine when another scheme is chosen: only the active scheme's count.
        assert!(Scenario::from_toml(&format!(
            "{HEAD}{star}[switch]\nbuffer = \"50KB\"\n[marking.mq_ecn]\nk = \"60KB\"\n[[flows]]\nsrc = 0\ndst = 1\n"
        ))
        .unwrap()
        .validate()
        .is_ok());
    }
}
