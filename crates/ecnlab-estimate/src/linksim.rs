//! One link's simulation (Parsimon §4.2, `parsimon-core`'s `link_sim_desc`): the flows that
//! cross a directed link, on a topology where that link is the only one they share, run by
//! ecnlab's own engine with the scenario's transport, hosts and the link's switch settings.
//!
//! ```text
//!   sender i --(slowest rate before the link, fixed delay before it)--> a
//!   a --(the link: its rate, delay, buffer, scheduler, marking)--> b
//!   b --(10 x the fastest rate here, fixed delay after it)--> receiver j
//! ```
//!
//! A link from a host is that host's NIC (the sender itself is `a`, with its NIC's
//! settings); a link to a host ends at that receiver (`b` is the receiver). Senders are the
//! flows' real senders, each with its own NIC, so that one host's flows queue behind each
//! other as they do; receivers are the real receivers, behind "fat" links that never queue
//! (Parsimon's). The rest of each flow's path is fixed delay: propagation and one full
//! segment's store-and-forward per hop, so that its round trip is its real one. Every switch
//! takes the settings of the tier the link leaves (or, for a NIC, of the switch it reaches):
//! a shared buffer pool is shared with the link simulation's ports only.
//!
//! A link from a host whose NIC does not mark (a stock NIC: `host.nic_marking = false`) has no
//! marking point in its simulation, while in the fabric the switches after it mark its flows:
//! DCTCP's windows there would grow until the NIC's buffer drops (measured on the README's
//! fabric: 95,587 NIC drops against the exact run's 24,998; none with the cap). [`WindowCap`]
//! caps its senders' windows at the largest bandwidth-delay product of its flows' paths:
//! Parsimon's link simulations run every flow at a fixed window (its `window`, its ns-3's
//! `fwin`), which HPCC's ns-3, its engine, sizes at the largest BDP of the fabric's paths
//! (`maxBdp`) or at each host pair's.
//!
//! More than [`Options::max_hosts`](crate::Options) senders (or receivers) are merged into
//! that many, hosts of the same fixed delay and rate together, so that a link crossed by
//! flows from thousands of hosts stays a small simulation: merged senders share a NIC.

use crate::alone::{bare, Chain, Chains, Egress, Hop, Settings};
use crate::decompose::{full_segment, Crossing};
use crate::flows::{Fabric, FabricFlow};
use crate::job::JobSpec;
use crate::Options;
use ecnlab_core::units::{tx_time_ns, Duration, Rate};
use ecnlab_sim::config::FlowSpec;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Which link simulations cap their senders' congestion windows (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowCap {
    /// None: every sender's window is the scenario's (`transport.max_cwnd`).
    Off,
    /// Those of a link from a host whose NIC does not mark, under a window-based transport
    /// (DCQCN is rate-based: it has no window to cap): at [`bdp_segments`] of the largest
    /// path BDP of the link's flows (or the scenario's `transport.max_cwnd` if lower). Each
    /// flow's window still opens in slow start (Parsimon's start at the window).
    UnmarkedNics,
}

impl WindowCap {
    pub fn describe(self) -> &'static str {
        match self {
            WindowCap::Off => "off: every sender's window is the scenario's",
            WindowCap::UnmarkedNics => {
                "the link simulations of links from a host whose NIC does not mark cap their senders' windows \
                 (transport.max_cwnd) at the largest bandwidth-delay product of their flows' paths: the NIC's rate \
                 times the path's fixed round trip (twice its one-way propagation and full-segment \
                 store-and-forward), in whole segments rounded up; standing for the marking of the switches after \
                 the NIC, which a link simulation does not have (Parsimon's link simulations run at a fixed \
                 window, which HPCC's ns-3, its engine, sizes at the largest path BDP)"
            }
        }
    }
}

/// The window (segments) that fills a pipe of `rate_bps` and round trip `rtt_ns` with
/// segments of `seg` bytes on the wire, rounded up.
pub fn bdp_segments(rate_bps: u64, rtt_ns: u64, seg: u64) -> u64 {
    (rate_bps as u128 * rtt_ns as u128).div_ceil(8_000_000_000u128 * seg.max(1) as u128) as u64
}

/// The window cap of the simulation of `link` crossed by `crossings`, if it has one.
fn window_cap(fab: &Fabric, link: u32, crossings: &[Crossing], cap: WindowCap) -> Option<u32> {
    let net = &fab.net;
    let spec = &net.links[link as usize];
    let scn = &fab.scn;
    let applies = match cap {
        WindowCap::Off => false,
        WindowCap::UnmarkedNics => {
            !net.is_switch(spec.from) && !scn.host.nic_marking && !scn.transport.cc.is_rate_based()
        }
    };
    if !applies || crossings.is_empty() {
        return None;
    }
    let seg = full_segment(fab);
    let first = spec.delay_ns + tx_time_ns(seg, spec.rate_bps);
    let rtt = crossings.iter().map(|c| 2 * (first + c.down_ns)).max().unwrap_or(0);
    let t = &scn.transport;
    let floor = t.init_cwnd.max(t.min_cwnd) as u64;
    Some(bdp_segments(spec.rate_bps, rtt, seg).max(floor).min(t.max_cwnd as u64) as u32)
}

/// A simulated link, as the combination reads its job's output.
#[derive(Clone, Debug)]
pub struct LinkSim {
    pub link: u32,
    /// Its senders' window cap (segments), if it has one ([`WindowCap`]).
    pub max_cwnd: Option<u32>,
    /// The fabric's flows it carries, in the order of its `flows.csv` (listed flows first).
    pub flows: Vec<u32>,
    /// Each one's chain in the link simulation ([`crate::alone`]).
    pub chains: Vec<u32>,
}

/// Up to `cap` ids for `keys` (each `(host, class of fixed delay and rate)`): one per
/// distinct key while they fit, else hosts of a class share ids, in proportion to the
/// class's size (at least one each).
fn assign<K: Ord + Copy>(keys: &[(u16, K)], cap: usize) -> BTreeMap<(u16, K), usize> {
    let distinct: std::collections::BTreeSet<(u16, K)> = keys.iter().copied().collect();
    if distinct.len() <= cap.max(1) {
        return distinct.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
    }
    let mut by_class: BTreeMap<K, Vec<u16>> = BTreeMap::new();
    for &(h, k) in &distinct {
        by_class.entry(k).or_default().push(h);
    }
    let total = distinct.len();
    let mut out = BTreeMap::new();
    let mut next = 0;
    for (k, hosts) in by_class {
        let slots = (cap * hosts.len() / total).max(1);
        for (i, h) in hosts.iter().enumerate() {
            out.insert((*h, k), next + i % slots);
        }
        next += slots.min(hosts.len());
    }
    out
}

/// The simulation of link `link`, crossed by `crossings` (in order of start).
pub fn build(
    fab: &Fabric,
    flows: &[FabricFlow],
    link: u32,
    crossings: &[Crossing],
    chains: &mut Chains,
    seed: u64,
    opts: &Options,
) -> (LinkSim, JobSpec) {
    let max_hosts = opts.max_hosts;
    let net = &fab.net;
    let spec = &net.links[link as usize];
    let (from_host, to_host) = (!net.is_switch(spec.from), !net.is_switch(spec.to));
    let tier = net.tier_of(if from_host { spec.to } else { spec.from }).to_string();
    let settings = Settings::Tier(tier);
    let seg = full_segment(fab);
    let fat = 10 * crossings.iter().map(|c| c.up_rate_bps).max().unwrap_or(0).max(spec.rate_bps);
    let down = |c: &Crossing| c.down_ns.saturating_sub(tx_time_ns(seg, fat));

    let src_keys: Vec<(u16, (u64, u64))> = crossings
        .iter()
        .map(|c| (if from_host { 0 } else { flows[c.flow as usize].src }, (c.up_ns, c.up_rate_bps)))
        .collect();
    let dst_keys: Vec<(u16, u64)> =
        crossings.iter().map(|c| if to_host { (0, 0) } else { (flows[c.flow as usize].dst, down(c)) }).collect();
    let senders = assign(&src_keys, max_hosts);
    let receivers = assign(&dst_keys, max_hosts);
    let ns = senders.values().max().map_or(0, |m| m + 1);
    let nd = receivers.values().max().map_or(0, |m| m + 1);

    // The topology: senders h0.., receivers after them.
    let mut topo = format!("hosts = {}\n", ns + nd);
    let a = if from_host { "h0".to_string() } else { "a".to_string() };
    let b = if to_host { format!("h{ns}") } else { "b".to_string() };
    for sw in [(!from_host).then_some(&a), (!to_host).then_some(&b)].into_iter().flatten() {
        let _ = write!(topo, "[[switches]]\nname = \"{sw}\"\n");
    }
    let mut cable = |x: &str, y: &str, rate: u64, delay: u64| {
        let _ = write!(
            topo,
            "[[links]]\nends = [\"{x}\", \"{y}\"]\nrate = \"{}\"\ndelay = \"{}\"\n",
            Rate(rate),
            Duration(delay)
        );
    };
    if !from_host {
        let mut seen = vec![false; ns];
        for (&(_, (up_ns, up_rate)), &id) in &senders {
            if !std::mem::replace(&mut seen[id], true) {
                cable(&format!("h{id}"), &a, up_rate, up_ns);
            }
        }
    }
    cable(&a, &b, spec.rate_bps, spec.delay_ns);
    if !to_host {
        let mut seen = vec![false; nd];
        for (&(_, v), &id) in &receivers {
            if !std::mem::replace(&mut seen[id], true) {
                cable(&b, &format!("h{}", ns + id), fat, v);
            }
        }
    }

    // The flows: listed ones as `[[flows]]`, generated ones as the trace, in order of start.
    let mut scn = bare(&fab.scn, &format!("link{link}"), &settings, seed);
    let max_cwnd = window_cap(fab, link, crossings, opts.window_cap);
    if let Some(cap) = max_cwnd {
        scn.transport.max_cwnd = cap;
    }
    let mut listed = Vec::new();
    let mut traced = Vec::new();
    let mut trace = String::from("start,src,dst,size,class\n");
    for (i, c) in crossings.iter().enumerate() {
        let f = &flows[c.flow as usize];
        let s = senders[&src_keys[i]];
        let d = ns + receivers[&dst_keys[i]];
        let mut hops = Vec::with_capacity(3);
        if !from_host {
            hops.push(Hop { rate_bps: c.up_rate_bps, delay_ns: c.up_ns, egress: Egress::Nic });
        }
        let first = if from_host { Egress::Nic } else { Egress::Switch(None) };
        hops.push(Hop { rate_bps: spec.rate_bps, delay_ns: spec.delay_ns, egress: first });
        if !to_host {
            hops.push(Hop { rate_bps: fat, delay_ns: down(c), egress: Egress::Switch(None) });
        }
        let chain = Chain { settings: settings.clone(), hops, class: f.class, max_cwnd };
        let segments = f.bytes().div_ceil(fab.mss() as u64).max(1);
        let id = chains.id(chain, segments);
        if (f.spec as usize) < fab.scn.flows.len() {
            let orig = &fab.scn.flows[f.spec as usize];
            scn.flows.push(FlowSpec {
                src: s,
                dst: d,
                class: f.class,
                count: 1,
                start: Duration(f.start_ns),
                start_jitter: None,
                ..orig.clone()
            });
            listed.push((c.flow, id));
        } else {
            let _ = writeln!(trace, "{}ns,{s},{d},{},{}", f.start_ns, f.bytes(), f.class);
            traced.push((c.flow, id));
        }
    }
    let port = format!("{a}->{b}");
    let has_trace = !traced.is_empty();
    let order: Vec<(u32, u32)> = listed.into_iter().chain(traced).collect();
    let sim = LinkSim {
        link,
        max_cwnd,
        flows: order.iter().map(|o| o.0).collect(),
        chains: order.iter().map(|o| o.1).collect(),
    };
    (sim, JobSpec::new(scn, topo, has_trace.then_some(trace), Some(port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct keys each get an id while they fit; beyond, hosts of a class share.
    #[test]
    fn hosts_are_merged_by_class_beyond_the_cap() {
        let keys: Vec<(u16, u8)> = (0..10).map(|h| (h, (h % 2) as u8)).collect();
        let ids = assign(&keys, 100);
        assert_eq!(ids.len(), 10);
        assert_eq!(ids.values().copied().collect::<std::collections::BTreeSet<_>>().len(), 10);
        let ids = assign(&keys, 4);
        let used: std::collections::BTreeSet<usize> = ids.values().copied().collect();
        assert_eq!(used.len(), 4);
        // Hosts of different classes never share an id.
        for (&(h1, k1), &i1) in &ids {
            for (&(h2, k2), &i2) in &ids {
                assert!(i1 != i2 || k1 == k2, "{h1} and {h2}");
            }
        }
    }
}
