//! The three-tier fabrics: Al-Fares et al.'s k-ary fat-tree (SIGCOMM 2008, §3) and a Clos
//! of pods with planes of super-spines (the layout of Facebook's data center fabric,
//! Andreyev 2014). Links are added bottom up (hosts, then pod links, then core links), so
//! that a host's uplink is link 2h.

use super::Net;
use crate::config::Topology;
use ecnlab_core::units::{Duration, Rate};

/// Rate and delay of each link tier: host links, links inside a pod, core links.
struct TierLinks {
    host: (u64, u64),
    pod: (u64, u64),
    core: (u64, u64),
}

fn tier_links(link: (Rate, Duration), tiers: [(Option<Rate>, Option<Duration>); 3]) -> TierLinks {
    let pick = |(r, d): (Option<Rate>, Option<Duration>)| (r.unwrap_or(link.0).0, d.unwrap_or(link.1).0);
    TierLinks { host: pick(tiers[0]), pod: pick(tiers[1]), core: pick(tiers[2]) }
}

/// The fabric of a `fat_tree` or `clos` description (validated: counts at least 1, k even).
pub(super) fn build(t: &Topology) -> Net {
    match t {
        Topology::FatTree {
            k,
            link_rate,
            link_delay,
            host_rate,
            host_delay,
            pod_rate,
            pod_delay,
            core_rate,
            core_delay,
        } => {
            let l = tier_links(
                (*link_rate, *link_delay),
                [(*host_rate, *host_delay), (*pod_rate, *pod_delay), (*core_rate, *core_delay)],
            );
            fat_tree(*k, &l)
        }
        Topology::Clos {
            pods,
            leaves_per_pod,
            spines_per_pod,
            super_spines_per_plane,
            hosts_per_leaf,
            link_rate,
            link_delay,
            host_rate,
            host_delay,
            pod_rate,
            pod_delay,
            core_rate,
            core_delay,
        } => {
            let l = tier_links(
                (*link_rate, *link_delay),
                [(*host_rate, *host_delay), (*pod_rate, *pod_delay), (*core_rate, *core_delay)],
            );
            let shape = ClosShape {
                pods: *pods,
                leaves: *leaves_per_pod,
                spines: *spines_per_pod,
                supers: *super_spines_per_plane,
                hosts: *hosts_per_leaf,
            };
            clos(&shape, &l)
        }
        _ => unreachable!("three_tier::build is called for fat_tree and clos only"),
    }
}

/// The k-ary fat-tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores.
fn fat_tree(k: usize, l: &TierLinks) -> Net {
    let half = k / 2;
    let n = k * half * half;
    let mut net = Net::new(n, &super::FAT_TREE_TIERS, true);
    let edge = net.add_switches(k * half, "edge", 0);
    let agg = net.add_switches(k * half, "agg", 1);
    let core = net.add_switches(half * half, "core", 2);
    for h in 0..n {
        net.add_duplex(h, edge + h / half, l.host.0, l.host.1);
    }
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                net.add_duplex(edge + p * half + e, agg + p * half + a, l.pod.0, l.pod.1);
            }
        }
    }
    // Aggregation switch a of every pod reaches cores a k/2 .. a k/2 + k/2 - 1 (§3.3).
    for p in 0..k {
        for a in 0..half {
            for c in 0..half {
                net.add_duplex(agg + p * half + a, core + a * half + c, l.core.0, l.core.1);
            }
        }
    }
    net
}

struct ClosShape {
    pods: usize,
    leaves: usize,
    spines: usize,
    supers: usize,
    hosts: usize,
}

/// Pods of leaves and spines; spine i of every pod joined to the super-spines of plane i.
fn clos(s: &ClosShape, l: &TierLinks) -> Net {
    let n = s.pods * s.leaves * s.hosts;
    let mut net = Net::new(n, &super::CLOS_TIERS, true);
    let leaf = net.add_switches(s.pods * s.leaves, "leaf", 0);
    let spine = net.add_switches(s.pods * s.spines, "spine", 1);
    let sup = net.add_switches(s.spines * s.supers, "super_spine", 2);
    for h in 0..n {
        net.add_duplex(h, leaf + h / s.hosts, l.host.0, l.host.1);
    }
    for p in 0..s.pods {
        for x in 0..s.leaves {
            for y in 0..s.spines {
                net.add_duplex(leaf + p * s.leaves + x, spine + p * s.spines + y, l.pod.0, l.pod.1);
            }
        }
    }
    for p in 0..s.pods {
        for plane in 0..s.spines {
            for j in 0..s.supers {
                net.add_duplex(spine + p * s.spines + plane, sup + plane * s.supers + j, l.core.0, l.core.1);
            }
        }
    }
    net
}

/// Switches and cables (each two directed links) of a fat-tree or Clos, by counting alone
/// (the memory estimate, before anything is built): (switches, cables, hosts).
pub fn counts(t: &Topology) -> Option<(u64, u64, u64)> {
    match t {
        Topology::FatTree { k, .. } => {
            let (k, half) = (*k as u64, *k as u64 / 2);
            let hosts = k.saturating_mul(half).saturating_mul(half);
            // Per pod: half x half edge-aggregation cables, and as many aggregation-core ones.
            Some((k.saturating_mul(k) + half * half, hosts.saturating_mul(3), hosts))
        }
        Topology::Clos { pods, leaves_per_pod, spines_per_pod, super_spines_per_plane, hosts_per_leaf, .. } => {
            let (p, l, s, u, h) = (
                *pods as u64,
                *leaves_per_pod as u64,
                *spines_per_pod as u64,
                *super_spines_per_plane as u64,
                *hosts_per_leaf as u64,
            );
            let hosts = p.saturating_mul(l).saturating_mul(h);
            let switches = p.saturating_mul(l + s).saturating_add(s.saturating_mul(u));
            let cables = hosts
                .saturating_add(p.saturating_mul(l).saturating_mul(s))
                .saturating_add(p.saturating_mul(s).saturating_mul(u));
            Some((switches, cables, hosts))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{conn_key, Routes};

    fn fat_tree_of(k: usize) -> Net {
        Net::build(&Topology::FatTree {
            k,
            link_rate: Rate::gbps(400),
            link_delay: Duration::from_us(1),
            host_rate: Some(Rate::gbps(100)),
            host_delay: None,
            pod_rate: None,
            pod_delay: Some(Duration::from_us(2)),
            core_rate: None,
            core_delay: None,
        })
        .unwrap()
    }

    /// The k = 4 fat-tree of Al-Fares et al.'s Fig. 3: 16 hosts, 20 switches; paths of 2, 4
    /// and 6 links within an edge switch, a pod and across pods; 2 next hops up at an edge
    /// switch, 2 at an aggregation switch, 1 down; 4 equal paths between pods, which flows
    /// spread over evenly.
    #[test]
    fn a_k4_fat_tree_routes_as_the_paper_draws_it() {
        let net = fat_tree_of(4);
        assert_eq!((net.n_hosts, net.n_nodes(), net.links.len()), (16, 36, 2 * 48));
        assert_eq!(counts(&fat_tree_args()), Some((20, 48, 16)));
        let r = Routes::shortest_paths(&net);
        assert!(r.unreachable_pairs().is_empty());
        let hops = |s, d| r.first_path(&net, s, d).len();
        assert_eq!((hops(0, 1), hops(0, 2), hops(0, 4), hops(0, 15)), (2, 4, 6, 6));
        let (edge0, agg0, core0) = (16, 24, 32);
        assert_eq!(net.tier_of(edge0), "edge");
        assert_eq!(net.tier_of(agg0), "aggregation");
        assert_eq!(net.tier_of(core0), "core");
        assert_eq!(r.next_hops(edge0, 4).len(), 2);
        assert_eq!(r.next_hops(agg0, 4).len(), 2);
        assert_eq!(r.next_hops(agg0, 2).len(), 1, "down to host 2's edge switch");
        assert_eq!(r.next_hops(core0, 4).len(), 1);
        // Rates and delays per tier along a path across pods.
        let p = r.first_path(&net, 0, 15);
        let rates: Vec<u64> = p.iter().map(|&l| net.links[l as usize].rate_bps / 1_000_000_000).collect();
        let delays: Vec<u64> = p.iter().map(|&l| net.links[l as usize].delay_ns).collect();
        assert_eq!(rates, [100, 400, 400, 400, 400, 100]);
        assert_eq!(delays, [1000, 2000, 1000, 1000, 2000, 1000]);
        // ECMP spread: 4,000 connections from host 0 to host 15 over the 4 core switches.
        let mut per_core = [0u32; 4];
        for c in 0..4000 {
            let p = r.path(&net, 0, 15, conn_key(5, c));
            per_core[net.links[p[2] as usize].to - core0] += 1;
        }
        assert!(per_core.iter().all(|&n| (900..1100).contains(&n)), "{per_core:?}");
        let info = net.host_info();
        assert_eq!(info.racks.unwrap(), (0..16).map(|h| h / 2).collect::<Vec<u32>>());
    }

    fn fat_tree_args() -> Topology {
        Topology::FatTree {
            k: 4,
            link_rate: Rate::gbps(1),
            link_delay: Duration::from_us(1),
            host_rate: None,
            host_delay: None,
            pod_rate: None,
            pod_delay: None,
            core_rate: None,
            core_delay: None,
        }
    }

    /// A Clos of 2 pods, 2 leaves and 2 spines each, 3 super-spines per plane: 6 paths
    /// between pods (2 spines x 3 super-spines), 2 within a pod, and each spine reaches only
    /// its plane.
    #[test]
    fn a_clos_joins_pods_through_planes() {
        let t = Topology::Clos {
            pods: 2,
            leaves_per_pod: 2,
            spines_per_pod: 2,
            super_spines_per_plane: 3,
            hosts_per_leaf: 2,
            link_rate: Rate::gbps(400),
            link_delay: Duration::from_us(1),
            host_rate: Some(Rate::gbps(100)),
            host_delay: None,
            pod_rate: None,
            pod_delay: None,
            core_rate: None,
            core_delay: None,
        };
        let net = Net::build(&t).unwrap();
        let (switches, cables, hosts) = counts(&t).unwrap();
        assert_eq!(
            (net.n_hosts as u64, (net.n_nodes() - net.n_hosts) as u64, net.links.len() as u64 / 2),
            (hosts, switches, cables)
        );
        assert_eq!((hosts, switches, cables), (8, 14, 8 + 8 + 12));
        let r = Routes::shortest_paths(&net);
        let (leaf0, spine0, sup0) = (8, 12, 16);
        assert_eq!(net.tier_of(sup0), "super_spine");
        assert_eq!(r.next_hops(leaf0, 2).len(), 2, "same pod: either spine");
        assert_eq!(r.first_path(&net, 0, 2).len(), 4);
        assert_eq!(r.next_hops(leaf0, 4).len(), 2);
        assert_eq!(r.next_hops(spine0, 4).len(), 3, "the 3 super-spines of plane 0");
        let planes: Vec<usize> = r.next_hops(spine0, 4).iter().map(|&l| net.links[l as usize].to).collect();
        assert_eq!(planes, [sup0, sup0 + 1, sup0 + 2]);
        assert_eq!(r.first_path(&net, 0, 4).len(), 6);
    }
}
