//! `[topology]`: the built-in topologies as the scenario describes them (the network they
//! build is [`crate::topology::Net`]'s).

use crate::de::internally_tagged;
use ecnlab_core::units::{Duration, Rate};
use serde::{Deserialize, Serialize};

/// The topologies. Host indices are 0-based; in a star, hosts hang off one switch.
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
    /// Al-Fares, Loukissas and Vahdat's k-ary fat-tree ("A Scalable, Commodity Data Center
    /// Network Architecture", SIGCOMM 2008, §3): k pods, each of k/2 edge (ToR) and k/2
    /// aggregation switches, every edge switch joined to every aggregation switch of its
    /// pod; (k/2)^2 core switches, aggregation switch i of every pod joined to cores
    /// i k/2 .. i k/2 + k/2 - 1; k/2 hosts on each edge switch, k^3/4 hosts in all. Host h
    /// sits on edge switch h / (k/2), in pod h / (k/2)^2. Tiers `edge`, `aggregation`,
    /// `core`; links of tier `host` (host-edge), `pod` (edge-aggregation), `core`
    /// (aggregation-core).
    FatTree {
        /// Ports per switch: even, at least 2.
        k: usize,
        /// Rate of every link, unless its tier's own rate is given.
        link_rate: Rate,
        /// One-way delay of every link, unless its tier's own delay is given.
        link_delay: Duration,
        /// Host-edge rate (default: link_rate).
        #[serde(default)]
        host_rate: Option<Rate>,
        /// Host-edge one-way delay (default: link_delay).
        #[serde(default)]
        host_delay: Option<Duration>,
        /// Edge-aggregation rate (default: link_rate).
        #[serde(default)]
        pod_rate: Option<Rate>,
        /// Edge-aggregation one-way delay (default: link_delay).
        #[serde(default)]
        pod_delay: Option<Duration>,
        /// Aggregation-core rate (default: link_rate).
        #[serde(default)]
        core_rate: Option<Rate>,
        /// Aggregation-core one-way delay (default: link_delay).
        #[serde(default)]
        core_delay: Option<Duration>,
    },
    /// A three-tier Clos in pods (the Facebook data center fabric's layout): each pod has
    /// `leaves_per_pod` leaves (ToRs) of `hosts_per_leaf` hosts and `spines_per_pod` spines,
    /// every leaf joined to every spine of its pod; the super-spines form `spines_per_pod`
    /// planes of `super_spines_per_plane`, spine i of every pod joined to every super-spine of
    /// plane i. Host h sits on leaf h / hosts_per_leaf, leaf l in pod l / leaves_per_pod.
    /// Oversubscription follows from counts and rates: at a leaf hosts_per_leaf x host_rate
    /// to spines_per_pod x pod_rate, at a spine leaves_per_pod x pod_rate to
    /// super_spines_per_plane x core_rate. Tiers `leaf`, `spine`, `super_spine`; links of
    /// tier `host` (host-leaf), `pod` (leaf-spine), `core` (spine-super-spine).
    Clos {
        /// Number of pods.
        pods: usize,
        /// Leaves (ToRs) in each pod.
        leaves_per_pod: usize,
        /// Spines in each pod (and planes of super-spines).
        spines_per_pod: usize,
        /// Super-spines in each plane.
        super_spines_per_plane: usize,
        /// Hosts on each leaf.
        hosts_per_leaf: usize,
        /// Rate of every link, unless its tier's own rate is given.
        link_rate: Rate,
        /// One-way delay of every link, unless its tier's own delay is given.
        link_delay: Duration,
        /// Host-leaf rate (default: link_rate).
        #[serde(default)]
        host_rate: Option<Rate>,
        /// Host-leaf one-way delay (default: link_delay).
        #[serde(default)]
        host_delay: Option<Duration>,
        /// Leaf-spine rate (default: link_rate).
        #[serde(default)]
        pod_rate: Option<Rate>,
        /// Leaf-spine one-way delay (default: link_delay).
        #[serde(default)]
        pod_delay: Option<Duration>,
        /// Spine-super-spine rate (default: link_rate).
        #[serde(default)]
        core_rate: Option<Rate>,
        /// Spine-super-spine one-way delay (default: link_delay).
        #[serde(default)]
        core_delay: Option<Duration>,
    },
    /// A topology file (TOML: `hosts`, `[[switches]]` with `name` and `tier`, `[[links]]`
    /// with `ends`, `rate` and `delay`; README, "Topology files"), routed by ECMP over
    /// shortest paths. A relative path is relative to the working directory.
    File {
        /// The topology file.
        file: String,
    },
}

internally_tagged!(Topology, "kind");
