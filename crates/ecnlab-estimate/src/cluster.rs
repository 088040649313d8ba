//! Link clustering (Parsimon §4.3, `clustering-impls`): links whose workloads are alike are
//! simulated once, by one of them, the cluster's representative; the others take its delay
//! distributions.
//!
//! Two links may share a cluster only if they are the same kind of port: the same rate, the
//! same switch settings (the tier of the switch they leave, or a host's NIC), the same ends
//! (from a host, to a host, or between switches), the same long-lived flows and classes.
//! Among those, the distance of two workloads is the largest of
//! - the WMAPE (weighted mean absolute percentage error, Parsimon's) of 100 quantiles of
//!   their flow sizes, and of 100 quantiles of the gaps between flow starts;
//! - the relative difference of their offered loads (|a - b| / max(a, b));
//! - the relative difference of their flows' mean one-way fixed delay (their RTTs);
//! - the total variation distance of their class mixes;
//!
//! and links join a cluster when it is at most the threshold ([`crate::Options::threshold`], 0.1 by
//! default; 0 simulates every link). Greedy, as Parsimon's `GreedyClustering`: the most
//! loaded link not yet in a cluster founds one (links in order of kind, load, then index:
//! the same clusters whoever computes them) and takes in every unclustered link within the
//! threshold of it.

use crate::decompose::LinkLoad;
use crate::flows::Fabric;

/// Quantiles compared per distribution.
const QUANTILES: usize = 100;
/// Links with fewer flows are never merged: their distributions say too little.
const MIN_FLOWS: u32 = 2;

/// The distance of [`distance`], and how links are compared.
pub const DISTANCE: &str = "max(WMAPE of 100 flow-size quantiles, WMAPE of 100 quantiles of the gaps between flow \
     starts, relative load difference, relative difference of the flows' mean fixed delay, total variation distance \
     of the class mix), between links of the same rate, switch settings, ends, long-lived flows and classes";

/// One directed link's workload, as clustering compares it.
#[derive(Clone, Debug)]
pub struct Features {
    pub link: u32,
    /// What must be equal (module docs).
    kind: (u64, String, bool, bool, u32, Vec<u8>),
    pub load: f64,
    delay_ns: f64,
    flows: u32,
    sizes: Vec<f32>,
    gaps: Vec<f32>,
    mix: Vec<f64>,
}

/// The features of link `link`.
pub fn features(fab: &Fabric, link: u32, load: &LinkLoad) -> Features {
    let spec = &fab.net.links[link as usize];
    let settings = if fab.net.is_switch(spec.from) { fab.net.tier_of(spec.from).to_string() } else { String::new() };
    let total = load.flows.max(1) as f64;
    Features {
        link,
        kind: (
            spec.rate_bps,
            settings,
            !fab.net.is_switch(spec.from),
            !fab.net.is_switch(spec.to),
            load.long_lived,
            load.classes.iter().map(|c| c.0).collect(),
        ),
        load: load.load(spec.rate_bps),
        delay_ns: load.mean_delay_ns(),
        flows: load.flows,
        sizes: load.sizes.quantiles(QUANTILES),
        gaps: load.gaps.quantiles(QUANTILES),
        mix: load.classes.iter().map(|c| c.1 as f64 / total).collect(),
    }
}

/// Weighted mean absolute percentage error of `b` against `a` (`clustering-impls`'s
/// `wmape`); 0 for two empty lists, 1 for one empty.
fn wmape(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 1.0;
    }
    let num: f64 = a.iter().zip(b).map(|(&x, &y)| (x as f64 - y as f64).abs()).sum();
    let den: f64 = a.iter().map(|&x| (x as f64).abs()).sum();
    if den == 0.0 {
        return if num == 0.0 { 0.0 } else { 1.0 };
    }
    num / den
}

fn relative(a: f64, b: f64) -> f64 {
    let m = a.abs().max(b.abs());
    if m == 0.0 {
        0.0
    } else {
        (a - b).abs() / m
    }
}

/// The distance of two links' workloads (module docs); infinite between different kinds.
pub fn distance(a: &Features, b: &Features) -> f64 {
    if a.kind != b.kind || a.flows < MIN_FLOWS || b.flows < MIN_FLOWS {
        return f64::INFINITY;
    }
    let mix = 0.5 * a.mix.iter().zip(&b.mix).map(|(x, y)| (x - y).abs()).sum::<f64>();
    [
        wmape(&a.sizes, &b.sizes),
        wmape(&a.gaps, &b.gaps),
        relative(a.load, b.load),
        relative(a.delay_ns, b.delay_ns),
        mix,
    ]
    .into_iter()
    .fold(0.0, f64::max)
}

/// Whether [`wmape`] of `b` against `a` is at most `t`, leaving off as soon as it cannot be
/// (the partial sums only grow): the same answer as `wmape(a, b) <= t`.
fn wmape_within(a: &[f32], b: &[f32], t: f64) -> bool {
    if a.len() != b.len() {
        return 1.0 <= t;
    }
    let den: f64 = a.iter().map(|&x| (x as f64).abs()).sum();
    if den == 0.0 {
        return wmape(a, b) <= t;
    }
    // Summed in wmape's order, so that the last comparison is wmape's own.
    let mut num = 0.0f64;
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        num += (x as f64 - y as f64).abs();
        if i % 16 == 15 && num / den > t {
            return false;
        }
    }
    num / den <= t
}

/// Whether two links of the same kind are within `t` of each other: `distance(a, b) <= t`,
/// the cheap terms first (clustering compares every pair of a kind's links in the worst
/// case: at 240,000 flows on the 6,144-host fabric the distance took a quarter of the plan).
fn within(a: &Features, b: &Features, t: f64) -> bool {
    if a.flows < MIN_FLOWS || b.flows < MIN_FLOWS {
        return false;
    }
    relative(a.load, b.load) <= t
        && relative(a.delay_ns, b.delay_ns) <= t
        && 0.5 * a.mix.iter().zip(&b.mix).map(|(x, y)| (x - y).abs()).sum::<f64>() <= t
        && wmape_within(&a.sizes, &b.sizes, t)
        && wmape_within(&a.gaps, &b.gaps, t)
}

/// A cluster: its representative (the link simulated) and every member (itself included),
/// in link order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub representative: u32,
    pub members: Vec<u32>,
}

/// Greedy clustering of `links` at `threshold` (module docs); threshold 0: one cluster per
/// link. Clusters come in order of their representative's link index.
pub fn cluster(links: &[Features], threshold: f64) -> Vec<Cluster> {
    let mut order: Vec<usize> = (0..links.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&links[i], &links[j]);
        a.kind.cmp(&b.kind).then(b.load.total_cmp(&a.load)).then(a.link.cmp(&b.link))
    });
    let mut taken = vec![false; links.len()];
    let mut clusters = Vec::new();
    for (pos, &r) in order.iter().enumerate() {
        if taken[r] {
            continue;
        }
        taken[r] = true;
        let rep = &links[r];
        let mut members = vec![rep.link];
        if threshold > 0.0 {
            for &c in &order[pos + 1..] {
                let cand = &links[c];
                if cand.kind != rep.kind {
                    break;
                }
                // Sorted by falling load: past this one, every load differs by more.
                if relative(rep.load, cand.load) > threshold && cand.load < rep.load {
                    break;
                }
                if !taken[c] && within(rep, cand, threshold) {
                    taken[c] = true;
                    members.push(cand.link);
                }
            }
        }
        members.sort_unstable();
        clusters.push(Cluster { representative: rep.link, members });
    }
    clusters.sort_by_key(|c| c.representative);
    clusters
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feat(link: u32, load: f64, scale: f32) -> Features {
        Features {
            link,
            kind: (10, "leaf".into(), false, false, 0, vec![0]),
            load,
            delay_ns: 1000.0,
            flows: 100,
            sizes: (1..=100).map(|i| i as f32 * scale).collect(),
            gaps: (1..=100).map(|i| i as f32).collect(),
            mix: vec![1.0],
        }
    }

    #[test]
    fn wmape_is_parsimons() {
        // clustering-impls' own example: 67 %.
        assert_eq!((wmape(&[1., 2., 1., 2.], &[2., 1., 2., 1.]) * 100.0).round(), 67.0);
        assert_eq!(wmape(&[], &[]), 0.0);
    }

    /// Alike links share a cluster whose representative is the most loaded; others stay
    /// apart; a threshold of 0 keeps every link apart; the result does not depend on the
    /// order the links are given in.
    #[test]
    fn greedy_clusters_alike_links_deterministically() {
        let links = vec![feat(3, 0.50, 1.0), feat(1, 0.52, 1.02), feat(7, 0.30, 1.0), feat(5, 0.51, 2.0)];
        let c = cluster(&links, 0.1);
        assert_eq!(
            c,
            vec![
                Cluster { representative: 1, members: vec![1, 3] },
                Cluster { representative: 5, members: vec![5] },
                Cluster { representative: 7, members: vec![7] },
            ]
        );
        let mut rev = links.clone();
        rev.reverse();
        assert_eq!(cluster(&rev, 0.1), c);
        assert_eq!(cluster(&links, 0.0).len(), 4);
        for a in &links {
            for b in &links {
                for t in [0.0, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0, 2.0] {
                    assert_eq!(within(a, b, t), distance(a, b) <= t, "{} {} {t}", a.link, b.link);
                }
            }
        }
        let mut other = feat(9, 0.5, 1.0);
        other.kind.1 = "spine".into();
        assert_eq!(distance(&links[0], &other), f64::INFINITY);
    }
}
