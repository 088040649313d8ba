//! Topologies as plain data: nodes, their tiers, and directed links ([`Net`]), built from
//! the scenario's `[topology]`: star, dumbbell and leaf-spine here, the three-tier fabrics in
//! [`three_tier`], topology files in [`file`]. Which link a packet takes is
//! [`crate::routing`]'s.
//!
//! Node ids: hosts are `0..n_hosts` (a host's id is its index in the scenario), switches
//! follow. Every physical link is two directed links; each directed link has an egress port
//! at its source node. Every switch belongs to a tier (`leaf`, `spine`, ...: the chips a
//! scenario may set apart in `[tiers.<tier>]`); a host's rack is the switch its (first)
//! link reaches.

pub mod file;
pub mod three_tier;

use crate::config::Topology;
use crate::workload::HostInfo;
use ecnlab_core::Nanos;

/// The switch tiers of each kind of topology, bottom up (a topology file names its own).
pub const STAR_TIERS: [&str; 1] = ["tor"];
pub const LEAF_SPINE_TIERS: [&str; 2] = ["leaf", "spine"];
pub const FAT_TREE_TIERS: [&str; 3] = ["edge", "aggregation", "core"];
pub const CLOS_TIERS: [&str; 3] = ["leaf", "spine", "super_spine"];

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub from: usize,
    pub to: usize,
    pub rate_bps: u64,
    pub delay_ns: Nanos,
}

#[derive(Clone, Debug)]
pub struct Net {
    pub n_hosts: usize,
    pub names: Vec<String>,
    pub links: Vec<LinkSpec>,
    /// Outgoing directed links of each node.
    pub out_links: Vec<Vec<u32>>,
    /// The topology's switch tiers, bottom up, and each switch's (index: node - n_hosts).
    pub tiers: Vec<String>,
    pub switch_tier: Vec<u16>,
    /// Hosts sit in racks under ToRs (every kind but star and dumbbell), which traffic
    /// patterns may name ([`Net::host_info`]).
    racked: bool,
}

impl Net {
    pub fn n_nodes(&self) -> usize {
        self.names.len()
    }
    pub fn is_switch(&self, node: usize) -> bool {
        node >= self.n_hosts
    }

    /// The link in the other direction of link `li`'s cable: links are added in duplex
    /// pairs ([`Net::add_duplex`]), `2k` and `2k + 1`.
    #[inline]
    pub fn reverse(li: usize) -> usize {
        li ^ 1
    }

    fn add_duplex(&mut self, a: usize, b: usize, rate_bps: u64, delay_ns: Nanos) {
        for (from, to) in [(a, b), (b, a)] {
            self.out_links[from].push(self.links.len() as u32);
            self.links.push(LinkSpec { from, to, rate_bps, delay_ns });
        }
    }

    /// A network of `n_hosts` hosts and no switch yet.
    fn new(n_hosts: usize, tiers: &[&str], racked: bool) -> Net {
        Net {
            n_hosts,
            names: (0..n_hosts).map(|h| format!("h{h}")).collect(),
            links: Vec::new(),
            out_links: vec![Vec::new(); n_hosts],
            tiers: tiers.iter().map(|t| t.to_string()).collect(),
            switch_tier: Vec::new(),
            racked,
        }
    }

    /// Add `count` switches of tier `tier` (an index into `tiers`), named `prefix0`, ...;
    /// the node id of the first.
    fn add_switches(&mut self, count: usize, prefix: &str, tier: u16) -> usize {
        let first = self.names.len();
        for i in 0..count {
            self.names.push(format!("{prefix}{i}"));
            self.out_links.push(Vec::new());
            self.switch_tier.push(tier);
        }
        first
    }

    /// The tier of switch `node`.
    pub fn tier_of(&self, node: usize) -> &str {
        &self.tiers[self.switch_tier[node - self.n_hosts] as usize]
    }

    /// What the traffic generator knows of the hosts: their access rates and racks (rack r:
    /// the r-th switch, in node order, that hosts link to).
    pub fn host_info(&self) -> HostInfo {
        let tor = |h: usize| self.links[self.out_links[h][0] as usize].to;
        let racks = self.racked.then(|| {
            let mut rank = vec![u32::MAX; self.n_nodes()];
            let mut tors: Vec<usize> = (0..self.n_hosts).map(tor).collect();
            tors.sort_unstable();
            tors.dedup();
            for (r, &t) in tors.iter().enumerate() {
                rank[t] = r as u32;
            }
            (0..self.n_hosts).map(|h| rank[tor(h)]).collect()
        });
        HostInfo {
            n_hosts: self.n_hosts,
            access_rate_bps: (0..self.n_hosts).map(|h| self.links[self.out_links[h][0] as usize].rate_bps).collect(),
            racks,
        }
    }

    /// Build the network of a topology description (a topology file is read again: an
    /// error says what changed since the scenario was checked).
    pub fn build(t: &Topology) -> Result<Net, String> {
        Ok(match t {
            Topology::Star { hosts, link_rate, link_delay, host_link_delay, host_link_rate } => {
                let mut net = Net::new(*hosts, &STAR_TIERS, false);
                let sw = net.add_switches(1, "s", 0);
                for h in 0..*hosts {
                    let rate = host_link_rate.get(h).unwrap_or(link_rate).0;
                    let delay = host_link_delay.get(h).unwrap_or(link_delay).0;
                    net.add_duplex(h, sw, rate, delay);
                }
                net
            }
            Topology::Dumbbell { left, right, link_rate, link_delay, bottleneck_rate, bottleneck_delay } => {
                let n = left + right;
                let mut net = Net::new(n, &STAR_TIERS, false);
                net.add_switches(2, "s", 0);
                for h in 0..n {
                    let sw = if h < *left { n } else { n + 1 };
                    net.add_duplex(h, sw, link_rate.0, link_delay.0);
                }
                net.add_duplex(n, n + 1, bottleneck_rate.0, bottleneck_delay.0);
                net
            }
            Topology::LeafSpine { leaves, spines, hosts_per_leaf, link_rate, core_rate, host_delay, core_delay } => {
                let n = leaves * hosts_per_leaf;
                let mut net = Net::new(n, &LEAF_SPINE_TIERS, true);
                net.add_switches(*leaves, "leaf", 0);
                net.add_switches(*spines, "spine", 1);
                for h in 0..n {
                    net.add_duplex(h, n + h / hosts_per_leaf, link_rate.0, host_delay.0);
                }
                let core = core_rate.unwrap_or(*link_rate).0;
                for l in 0..*leaves {
                    for s in 0..*spines {
                        net.add_duplex(n + l, n + leaves + s, core, core_delay.0);
                    }
                }
                net
            }
            Topology::FatTree { .. } | Topology::Clos { .. } => three_tier::build(t),
            Topology::File { file } => file::read(file)?.build(),
        })
    }
}
