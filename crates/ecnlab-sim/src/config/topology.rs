//! `[topology]`: the built-in topologies as the scenario describes them (the network they
//! build is [`crate::topology::Net`]'s).

use crate::de::internally_tagged;
use ecnlab_core::units::{Duration, Rate};
use serde::{Deserialize, Serialize};

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
