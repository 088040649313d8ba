//! Routing: which link a packet leaves a node on. Shortest paths towards every host, and
//! per-flow ECMP among equally short next hops (RFC 2992's hash-threshold family: a hash of
//! the flow's key picks one next hop, so a flow's packets never reorder; here the hash is
//! per node, so that successive tiers choose independently).
//!
//! A pure function of the topology ([`Net`]) and a flow's key: [`Routes::next_hop`] is what
//! the event loop forwards with, and [`Routes::path`] walks the same choices from end to
//! end, so that anything outside the event loop (an estimate, the ideal FCT) routes a flow
//! exactly as the simulation does. A flow's key is its connection's ([`conn_key`]: a
//! packet carries its connection's index; acknowledgements hash with the same key on the
//! way back) or a probe's ([`probe_key`]), from the run's master seed.
//!
//! Speed (the table is read for every packet at every switch): a single next hop, most
//! entries, is stored inline; a host with one link sends on it without a lookup; the ECMP
//! choice `hash % n` is two multiplications ([`Routes::ecmp_rem`]).

use crate::topology::Net;
use ecnlab_core::rng::Stream;

/// Next hops of every node towards every host.
#[derive(Clone, Debug)]
pub struct Routes {
    n_hosts: usize,
    /// For (node, dst host), `(first, len) = route_idx[node * n_hosts + dst]`; a single next
    /// hop (most entries) is `first` itself, several are `route_links[first..first + len]`.
    /// Inline single hops spare the forwarding path a second dependent load.
    route_idx: Vec<(u32, u32)>,
    route_links: Vec<u32>,
    /// A host's only outgoing link (every built-in topology gives a host one), so that
    /// sending from a host needs no route lookup; `u32::MAX` for a host with several.
    host_uplink: Vec<u32>,
    /// `ceil(2^128 / n)` for every next-hop count n >= 2 of the table (index n), so that an
    /// ECMP choice `hash % n` is two multiplications instead of a 64-bit division.
    rem_magic: Vec<u128>,
}

/// The ECMP key of simulated connection `conn` (its index in the order connections are
/// opened: the listed flows' first, one per flow of `[[flows]]` in order, then those
/// generated flows open as they arrive; with `host.persistent_connections = false` every
/// generated flow opens the next one).
pub fn conn_key(seed: u64, conn: u32) -> u64 {
    Stream::ConnEcmp(conn as u64).seed(seed)
}

/// The ECMP key of probe `i` (`[[probes]]` index).
pub fn probe_key(seed: u64, i: usize) -> u64 {
    Stream::ProbeEcmp(i as u64).seed(seed)
}

/// The hash a switch `node` gives a flow's `key` (the node mixed in, so that the tiers of a
/// fabric choose independently).
#[inline]
pub fn ecmp_hash(key: u64, node: usize) -> u64 {
    mix64(key ^ (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// SplitMix64's finalizer (Steele, Lea and Flood, 2014): every key bit moves every hash bit.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Routes {
    /// Shortest-path next hops towards every host, by BFS on the reversed graph (hop count;
    /// every link counts one). Paths never transit through a host.
    pub fn shortest_paths(net: &Net) -> Routes {
        let n = net.n_nodes();
        let n_hosts = net.n_hosts;
        let mut in_links: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, l) in net.links.iter().enumerate() {
            in_links[l.to].push(i as u32);
        }
        let mut idx = vec![(0u32, 0u32); n * n_hosts];
        let mut route_links = Vec::new();
        let mut dist = vec![u32::MAX; n];
        let mut frontier = std::collections::VecDeque::new();
        for dst in 0..n_hosts {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                if v != dst && !net.is_switch(v) {
                    continue; // hosts do not forward
                }
                for &li in &in_links[v] {
                    let u = net.links[li as usize].from;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        frontier.push_back(u);
                    }
                }
            }
            for u in 0..n {
                let start = route_links.len() as u32;
                if u != dst && dist[u] != u32::MAX {
                    for &li in &net.out_links[u] {
                        let v = net.links[li as usize].to;
                        if dist[v] != u32::MAX && dist[v] + 1 == dist[u] && (v == dst || net.is_switch(v)) {
                            route_links.push(li);
                        }
                    }
                }
                let len = route_links.len() as u32 - start;
                idx[u * n_hosts + dst] = if len == 1 { (route_links.pop().expect("one hop"), 1) } else { (start, len) };
            }
        }
        let widest = idx.iter().map(|&(_, len)| len as usize).max().unwrap_or(0);
        Routes {
            n_hosts,
            route_idx: idx,
            route_links,
            host_uplink: (0..n_hosts)
                .map(|h| if net.out_links[h].len() == 1 { net.out_links[h][0] } else { u32::MAX })
                .collect(),
            rem_magic: (0..=widest).map(|n| if n >= 2 { u128::MAX / n as u128 + 1 } else { 0 }).collect(),
        }
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

    /// The link a packet of the flow whose ECMP key `key` gives leaves `node` on towards
    /// host `dst`. `key` is called only where there is a choice (reading it is a memory
    /// load on the forwarding path). `dst` must be reachable from `node`.
    #[inline]
    pub fn next_hop(&self, node: usize, dst: usize, key: impl FnOnce() -> u64) -> u32 {
        if node < self.n_hosts {
            if let Some(li) = self.host_uplink(node) {
                return li;
            }
        }
        let hops = self.next_hops(node, dst);
        if hops.len() == 1 {
            hops[0]
        } else {
            hops[self.ecmp_rem(ecmp_hash(key(), node), hops.len())]
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

    /// Equal-cost next hops stored out of line (entries of several next hops), for the
    /// memory estimate's check.
    pub fn multipath_hops(&self) -> usize {
        self.route_links.len()
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

    /// The links a packet of the flow with ECMP key `key` crosses from host `src` to host
    /// `dst`, in order: [`Routes::next_hop`] at every node, as the simulation forwards it.
    pub fn path(&self, net: &Net, src: usize, dst: usize, key: u64) -> Vec<u32> {
        self.walk(net, src, dst, |node, hops| hops[self.ecmp_rem(ecmp_hash(key, node), hops.len())])
    }

    /// A shortest path from `src` to `dst` that takes the first candidate (the lowest link
    /// index) at every hop: for figures that do not depend on the flow, e.g. an ideal FCT
    /// where every shortest path has the same delays and rates.
    pub fn first_path(&self, net: &Net, src: usize, dst: usize) -> Vec<u32> {
        self.walk(net, src, dst, |_, hops| hops[0])
    }

    fn walk(&self, net: &Net, src: usize, dst: usize, choose: impl Fn(usize, &[u32]) -> u32) -> Vec<u32> {
        let mut node = src;
        let mut path = Vec::new();
        while node != dst {
            let li = match self.host_uplink.get(node).filter(|&&l| l != u32::MAX) {
                Some(&l) => l,
                None => match self.next_hops(node, dst) {
                    [] => panic!("routing: no path from {src} to {dst} (checked before a run)"),
                    [one] => *one,
                    hops => choose(node, hops),
                },
            };
            path.push(li);
            node = net.links[li as usize].to;
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Topology;
    use ecnlab_core::units::{Duration, Rate};

    fn leaf_spine(leaves: usize, spines: usize, hosts_per_leaf: usize) -> Net {
        Net::build(&Topology::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            link_rate: Rate::gbps(10),
            core_rate: None,
            host_delay: Duration::from_us(1),
            core_delay: Duration::from_us(1),
        })
        .unwrap()
    }

    #[test]
    fn leaf_spine_has_ecmp_over_all_spines() {
        let net = leaf_spine(3, 4, 2);
        let r = Routes::shortest_paths(&net);
        assert_eq!(net.n_hosts, 6);
        assert!(r.unreachable_pairs().is_empty());
        // host 0 -> its leaf only
        assert_eq!(r.next_hops(0, 5).len(), 1);
        let leaf0 = 6;
        assert_eq!(r.next_hops(leaf0, 5).len(), 4, "4 spines to choose from");
        assert_eq!(r.next_hops(leaf0, 1).len(), 1, "same leaf: straight down");
        // a single next hop is stored inline: it must still be the link towards the host
        assert_eq!(net.links[r.next_hops(leaf0, 1)[0] as usize].to, 1);
        let spines: Vec<usize> = r.next_hops(leaf0, 5).iter().map(|&l| net.links[l as usize].to).collect();
        assert_eq!(spines, vec![9, 10, 11, 12]);
        // a host's uplink is its only route, whatever the destination
        assert_eq!(r.host_uplink(0), Some(r.next_hops(0, 5)[0]));
        assert_eq!(net.links[r.host_uplink(0).unwrap() as usize].to, leaf0);
        assert_eq!(r.first_path(&net, 0, 5).len(), 4);
        assert_eq!(r.first_path(&net, 0, 1).len(), 2);
    }

    /// `path` takes at every node the link `next_hop` forwards on, and over many keys a leaf
    /// spreads flows over every spine.
    #[test]
    fn a_path_follows_the_forwarding_decisions() {
        let net = leaf_spine(3, 4, 2);
        let r = Routes::shortest_paths(&net);
        let mut spines = [0u32; 4];
        for conn in 0..4000 {
            let key = conn_key(9, conn);
            let p = r.path(&net, 0, 5, key);
            let mut node = 0;
            for &li in &p {
                assert_eq!(r.next_hop(node, 5, || key), li);
                node = net.links[li as usize].to;
            }
            assert_eq!(node, 5);
            spines[net.links[p[1] as usize].to - 9] += 1;
        }
        assert!(spines.iter().all(|&n| (900..1100).contains(&n)), "{spines:?}");
    }

    #[test]
    fn ecmp_remainder_is_exact() {
        let net = leaf_spine(2, 300, 1);
        let r = Routes::shortest_paths(&net);
        assert_eq!(r.next_hops(2, 1).len(), 300);
        let mut rng = ecnlab_core::rng::Rng::new(7);
        for n in 2..=300usize {
            for h in [0, 1, n as u64 - 1, n as u64, u64::MAX, u64::MAX - 1, u64::MAX / n as u64 * n as u64] {
                assert_eq!(r.ecmp_rem(h, n), (h % n as u64) as usize, "{h} % {n}");
            }
            for _ in 0..2000 {
                let h = rng.next_u64();
                assert_eq!(r.ecmp_rem(h, n), (h % n as u64) as usize, "{h} % {n}");
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
        })
        .unwrap();
        let r = Routes::shortest_paths(&star);
        assert_eq!(r.first_path(&star, 0, 3).len(), 2);
        assert_eq!(star.links[r.first_path(&star, 0, 3)[0] as usize].delay_ns, 50_000);
        let db = Net::build(&Topology::Dumbbell {
            left: 2,
            right: 2,
            link_rate: Rate::gbps(1),
            link_delay: Duration::from_us(1),
            bottleneck_rate: Rate::mbps(10),
            bottleneck_delay: Duration::from_ms(1),
        })
        .unwrap();
        let r = Routes::shortest_paths(&db);
        let p = r.first_path(&db, 0, 3);
        assert_eq!(p.len(), 3);
        assert_eq!(db.links[p[1] as usize].rate_bps, 10_000_000);
        assert_eq!(r.path(&db, 0, 3, 12345), p);
    }
}
