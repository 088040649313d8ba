//! Topologies as plain data: nodes and directed links ([`Net`]), built from the scenario's
//! `[topology]`. Which link a packet takes is [`crate::routing`]'s.
//!
//! Node ids: hosts are `0..n_hosts` (a host's id is its index in the scenario), switches
//! follow. Every physical link is two directed links; each directed link has an egress port
//! at its source node.

use crate::config::Topology;
use ecnlab_core::Nanos;

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

    fn new(n_hosts: usize, switch_names: Vec<String>) -> Net {
        let mut names: Vec<String> = (0..n_hosts).map(|h| format!("h{h}")).collect();
        names.extend(switch_names);
        let n = names.len();
        Net { n_hosts, names, links: Vec::new(), out_links: vec![Vec::new(); n] }
    }

    /// Build the network of a topology description.
    pub fn build(t: &Topology) -> Net {
        match t {
            Topology::Star { hosts, link_rate, link_delay, host_link_delay, host_link_rate } => {
                let mut net = Net::new(*hosts, vec!["s0".into()]);
                let sw = *hosts;
                for h in 0..*hosts {
                    let rate = host_link_rate.get(h).unwrap_or(link_rate).0;
                    let delay = host_link_delay.get(h).unwrap_or(link_delay).0;
                    net.add_duplex(h, sw, rate, delay);
                }
                net
            }
            Topology::Dumbbell { left, right, link_rate, link_delay, bottleneck_rate, bottleneck_delay } => {
                let n = left + right;
                let mut net = Net::new(n, vec!["s0".into(), "s1".into()]);
                for h in 0..n {
                    let sw = if h < *left { n } else { n + 1 };
                    net.add_duplex(h, sw, link_rate.0, link_delay.0);
                }
                net.add_duplex(n, n + 1, bottleneck_rate.0, bottleneck_delay.0);
                net
            }
            Topology::LeafSpine { leaves, spines, hosts_per_leaf, link_rate, core_rate, host_delay, core_delay } => {
                let n = leaves * hosts_per_leaf;
                let mut sw_names: Vec<String> = (0..*leaves).map(|l| format!("leaf{l}")).collect();
                sw_names.extend((0..*spines).map(|s| format!("spine{s}")));
                let mut net = Net::new(n, sw_names);
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
        }
    }
}
