//! The scenario: the whole experiment as one typed struct that a scenario file (TOML, or the
//! JSON the Python front end hands over) deserializes into, and the parsers that keep the
//! field path in every error.

use super::flows::{FlowSpec, ProbeSpec};
use super::host::HostConfig;
use super::metrics::MetricsConfig;
use super::rtt_variation::RttVariation;
use super::tiers::{inherit_json, inherit_toml, TierConfig};
use super::topology::Topology;
use crate::de::join_error;
use crate::tcp::TcpConfig;
use crate::workload::TrafficSpec;
use ecnlab_core::fault::FaultConfig;
use ecnlab_core::port::PortConfig;
use ecnlab_core::units::{with_packet_size, Duration};
use ecnlab_core::MarkingConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// The switches of one tier set apart: `tiers.<tier>.switch` and `tiers.<tier>.marking`
    /// take the keys of `[switch]` and `[marking]` (each key left out is theirs), e.g.
    /// `tiers.spine.switch.buffer = "4MB"`. Tiers: `tor` (star, dumbbell), `leaf`, `spine`
    /// (leaf_spine), `edge`, `aggregation`, `core` (fat_tree), `leaf`, `spine`, `super_spine`
    /// (clos), a topology file's own. PFC stays fabric-wide (`[switch.pfc]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tiers: BTreeMap<String, TierConfig>,
    /// Segments every switch loses on purpose (`ecnlab_core::fault`: the first SYNs of each
    /// connection, the segment carrying a given byte), for comparing hosts' timers with
    /// the kernel's (`ecnlab validate`). Off by default.
    #[serde(default, skip_serializing_if = "no_faults")]
    pub faults: FaultConfig,
}

fn no_faults(f: &FaultConfig) -> bool {
    !f.any()
}

fn default_seed() -> u64 {
    1
}

impl Scenario {
    /// Parse a scenario from JSON text; the error names the field path.
    pub fn from_json(text: &str) -> Result<Scenario, String> {
        let text = &*inherit_json(text);
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
            // A name given as a number: serde_json says only "expected value" (de.rs).
            let read = || serde_json::from_str::<serde_json::Value>(text).ok();
            let named = (inner == "expected value").then(read).flatten();
            let plain = named.and_then(|r| crate::de::plain_name_error(&r, &path));
            join_error(&path, plain.as_deref().unwrap_or(inner))
        })?;
        let read = serde_json::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())?;
        scn.refuse_tables_as_arrays(&read)?;
        Ok(scn.resolved())
    }

    /// Defaults that depend on `transport.profile` outside `[transport]` (which resolves its
    /// own): the hosts' offloads.
    fn resolved(mut self) -> Scenario {
        self.host.resolve(self.transport.profile);
        self
    }

    /// See [`crate::de::refuse_tables_as_arrays`].
    fn refuse_tables_as_arrays(&self, read: &serde_json::Value) -> Result<(), String> {
        let canonical = serde_json::to_value(self).map_err(|e| e.to_string())?;
        crate::de::refuse_tables_as_arrays(read, &canonical, "")
    }

    /// Parse a scenario from TOML text.
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        let text = &*inherit_toml(text);
        let mss = toml::from_str::<MssOnly>(text).ok().and_then(|m| m.transport.mss);
        let de = toml::Deserializer::parse(text).map_err(|e| e.message().to_string())?;
        let scn: Scenario = with_packet_size(mtu_of(mss), || serde_path_to_error::deserialize(de)).map_err(|e| {
            let path = e.path().clone();
            join_error(&path, e.into_inner().message())
        })?;
        let read = toml::from_str::<serde_json::Value>(text).map_err(|e| e.message().to_string())?;
        scn.refuse_tables_as_arrays(&read)?;
        Ok(scn.resolved())
    }

    /// The port and marking settings of the switches of tier `tier`.
    pub fn tier_settings(&self, tier: &str) -> (&PortConfig, &MarkingConfig) {
        match self.tiers.get(tier) {
            Some(t) => (&t.switch, &t.marking),
            None => (&self.switch, &self.marking),
        }
    }

    /// Number of hosts (saturating: an absurd topology is rejected by `validate`, not by
    /// an overflow; a topology file is read).
    pub fn n_hosts(&self) -> usize {
        match &self.topology {
            Topology::Star { hosts, .. } => *hosts,
            Topology::Dumbbell { left, right, .. } => left.saturating_add(*right),
            Topology::LeafSpine { leaves, hosts_per_leaf, .. } => leaves.saturating_mul(*hosts_per_leaf),
            Topology::FatTree { k, .. } => k.saturating_mul(k / 2).saturating_mul(k / 2),
            Topology::Clos { pods, leaves_per_pod, hosts_per_leaf, .. } => {
                pods.saturating_mul(*leaves_per_pod).saturating_mul(*hosts_per_leaf)
            }
            // A file that does not read has no hosts (`validate` names the file's error first).
            Topology::File { file } => crate::topology::file::read(file).map_or(0, |f| f.hosts),
        }
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
