//! Topologies as plain data: nodes, directed links, and ECMP routes.
//!
//! Node ids: hosts are `0..n_hosts` (a host's id is its index in the scenario), switches
//! follow. Every physical link is two directed links; each directed link has an egress port
//! at its source node. Routes are shortest paths towards each destination host; where
//! several next hops are equally short, a flow picks one by hashing (per-flow ECMP), so a
//! flow's packets never reorder.

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
    /// Routing: for (node, dst host), `(first, len) = route_idx[node * n_hosts + dst]`; a
    /// single next hop (most entries) is `first` itself, several are
    /// `route_links[first..first + len]`. Inline single hops spare the forwarding path a
    /// second dependent load; the table is read for every packet at every switch.
    route_idx: Vec<(u32, u32)>,
    route_links: Vec<u32>,
    /// A host's only outgoing link (every built-in topology gives a host one), so that
    /// sending from a host needs no route lookup; `u32::MAX` for a host with several.
    host_uplink: Vec<u32>,
    /// `ceil(2^128 / n)` for every next-hop count n >= 2 of the table (index n), so that an
    /// ECMP choice `hash % n` is two multiplications instead of a 64-bit division.
    rem_magic: Vec<u128>,
}

impl Net {
    pub fn n_nodes(&self) -> usize {
        self.names.len()
    }
    pub fn is_switch(&self, node: usize) -> bool {
        node >= self.n_hosts
    }

    /// Next-hop candidates from `node` towards host `dst`.
    #[inline]
    pub fn next_hops(&self, node: usize, dst: usize) -> &[u32] {
        let e = &self.route_idx[node * self.n_hosts + dst];
        if e.1 == 1 {
            std::slice::from_ref(&e.0)
        } else {
            &self.route_links[e.0 as usize..(e.0 + e.1) as usize]
        }
    }

    /// `hash % n` for a next-hop count `n` >= 2 of the table, exactly, by Lemire, Kaser and
    /// Kurz's direct remainder ("Faster remainder by direct computation", 2019): with
    /// c = ceil(2^128 / n), the remainder is the high 64 bits of (c * hash mod 2^128) * n.
    #[inline]
    pub fn ecmp_rem(&self, hash: u64, n: usize) -> usize {
        let low = self.rem_magic[n].wrapping_mul(hash as u128);
        let n = n as u128;
        let carry = ((low as u64 as u128) * n) >> 64;
        (((low >> 64) * n + carry) >> 64) as usize
    }

    /// The link a host sends every packet on, if it has exactly one.
    #[inline]
    pub fn host_uplink(&self, host: usize) -> Option<u32> {
        let l = self.host_uplink[host];
        (l != u32::MAX).then_some(l)
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
        Net {
            n_hosts,
            names,
            links: Vec::new(),
            out_links: vec![Vec::new(); n],
            route_idx: Vec::new(),
            route_links: Vec::new(),
            host_uplink: Vec::new(),
            rem_magic: Vec::new(),
        }
    }

    /// Build the network of a topology description.
    pub fn build(t: &Topology) -> Net {
        let mut net = match t {
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
        };
        net.compute_routes();
        net
    }

    /// Shortest-path next hops towards every host, by BFS on the reversed graph. Paths
    /// never transit through a host.
    fn compute_routes(&mut self) {
        let n = self.n_nodes();
        let mut in_links: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            in_links[l.to].push(i as u32);
        }
        let mut idx = vec![(0u32, 0u32); n * self.n_hosts];
        let mut route_links = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut frontier = std::collections::VecDeque::new();
        for dst in 0..self.n_hosts {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                if v != dst && !self.is_switch(v) {
                    continue; // hosts do not forward
                }
                for &li in &in_links[v] {
                    let u = self.links[li as usize].from;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        frontier.push_back(u);
                    }
                }
            }
            for u in 0..n {
                let start = route_links.len() as u32;
                if u != dst && dist[u] != u32::MAX {
                    for &li in &self.out_links[u] {
                        let v = self.links[li as usize].to;
                        if dist[v] != u32::MAX && dist[v] + 1 == dist[u] && (v == dst || self.is_switch(v)) {
                            route_links.push(li);
                        }
                    }
                }
                let len = route_links.len() as u32 - start;
                idx[u * self.n_hosts + dst] =
                    if len == 1 { (route_links.pop().expect("one hop"), 1) } else { (start, len) };
            }
        }
        self.route_idx = idx;
        self.route_links = route_links;
        let widest = self.route_idx.iter().map(|&(_, len)| len as usize).max().unwrap_or(0);
        self.rem_magic = (0..=widest).map(|n| if n >= 2 { u128::MAX / n as u128 + 1 } else { 0 }).collect();
        self.host_uplink = (0..self.n_hosts)
            .map(|h| if self.out_links[h].len() == 1 { self.out_links[h][0] } else { u32::MAX })
            .collect();
    }

    /// Hosts that cannot reach each other (empty for the built-in topologies).
    pub fn unreachable_pairs(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for s in 0..self.n_hosts {
            for d in 0..self.n_hosts {
                if s != d && self.next_hops(s, d).is_empty() {
                    out.push((s, d));
                }
            }
        }
        out
    }

    /// Sum of propagation delays along a path from `src` to `dst` (first candidate at each
    /// hop) and the links traversed, for ideal-FCT computations.
    pub fn path(&self, src: usize, dst: usize) -> Vec<u32> {
        let mut node = src;
        let mut path = Vec::new();
        while node != dst {
            let li = self.next_hops(node, dst)[0];
            path.push(li);
            node = self.links[li as usize].to;
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecnlab_core::units::{Duration, Rate};

    #[test]
    fn leaf_spine_has_ecmp_over_all_spines() {
        let t = Topology::LeafSpine {
            leaves: 3,
            spines: 4,
            hosts_per_leaf: 2,
            link_rate: Rate::gbps(10),
            core_rate: None,
            host_delay: Duration::from_us(1),
            core_delay: Duration::from_us(1),
        };
        let net = Net::build(&t);
        assert_eq!(net.n_hosts, 6);
        assert!(net.unreachable_pairs().is_empty());
        // host 0 -> its leaf only
        assert_eq!(net.next_hops(0, 5).len(), 1);
        let leaf0 = 6;
        assert_eq!(net.next_hops(leaf0, 5).len(), 4, "4 spines to choose from");
        assert_eq!(net.next_hops(leaf0, 1).len(), 1, "same leaf: straight down");
        // a single next hop is stored inline: it must still be the link towards the host
        assert_eq!(net.links[net.next_hops(leaf0, 1)[0] as usize].to, 1);
        let spines: Vec<usize> = net.next_hops(leaf0, 5).iter().map(|&l| net.links[l as usize].to).collect();
        assert_eq!(spines, vec![9, 10, 11, 12]);
        // a host's uplink is its only route, whatever the destination
        assert_eq!(net.host_uplink(0), Some(net.next_hops(0, 5)[0]));
        assert_eq!(net.links[net.host_uplink(0).unwrap() as usize].to, leaf0);
        assert_eq!(net.path(0, 5).len(), 4);
        assert_eq!(net.path(0, 1).len(), 2);
    }

    #[test]
    fn ecmp_remainder_is_exact() {
        let t = Topology::LeafSpine {
            leaves: 2,
            spines: 300,
            hosts_per_leaf: 1,
            link_rate: Rate::gbps(10),
            core_rate: None,
            host_delay: Duration::from_us(1),
            core_delay: Duration::from_us(1),
        };
        let net = Net::build(&t);
        assert_eq!(net.next_hops(2, 1).len(), 300);
        let mut rng = ecnlab_core::rng::Rng::new(7);
        for n in 2..=300usize {
            for h in [0, 1, n as u64 - 1, n as u64, u64::MAX, u64::MAX - 1, u64::MAX / n as u64 * n as u64] {
                assert_eq!(net.ecmp_rem(h, n), (h % n as u64) as usize, "{h} % {n}");
            }
            for _ in 0..2000 {
                let h = rng.next_u64();
                assert_eq!(net.ecmp_rem(h, n), (h % n as u64) as usize, "{h} % {n}");
            }
        }
    }

    #[test]
    fn star_and_dumbbell_paths() {
        let star = Net::build(&Topology::Star {
            hosts: 4,
            link_rate: Rate::gbps(1),
            link_delay: Duration::from_us(10),
            host_link_delay: vec![Duration::from_us(50)],
            host_link_rate: vec![],
        });
        assert_eq!(star.path(0, 3).len(), 2);
        assert_eq!(star.links[star.path(0, 3)[0] as usize].delay_ns, 50_000);
        let db = Net::build(&Topology::Dumbbell {
            left: 2,
            right: 2,
            link_rate: Rate::gbps(1),
            link_delay: Duration::from_us(1),
            bottleneck_rate: Rate::mbps(10),
            bottleneck_delay: Duration::from_ms(1),
        });
        let p = db.path(0, 3);
        assert_eq!(p.len(), 3);
        assert_eq!(db.links[p[1] as usize].rate_bps, 10_000_000);
    }
}
