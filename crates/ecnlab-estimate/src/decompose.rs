//! Decomposition (Parsimon §4.1, `parsimon-core`'s `into_simulations`): every flow routed as
//! the simulator routes it ([`Fabric::paths`]), and what each directed link carries: its
//! workload's features for clustering ([`LinkLoad`]), and, for the links that are simulated,
//! their flows with where the link sits on each flow's path ([`Crossing`]).
//!
//! Memory is bounded by the flows (a compact record each, [`crate::flows::FabricFlow`]) and
//! the links (histograms, a few KB each): paths are recomputed on every pass instead of
//! kept, and only the simulated links keep their flows.

use crate::alone::{Chain, Chains, Egress, Hop, Settings};
use crate::flows::{Fabric, FabricFlow};
use crate::passes::{in_chunks, Split};
use ecnlab_core::units::tx_time_ns;
use ecnlab_sim::packet::TCP_IP_HEADER;

/// Bins per octave of [`LogHist`] (a bin is 9 % wide).
const BINS_PER_OCTAVE: f64 = 8.0;
const OCTAVES: usize = 64;

/// A histogram of positive values on a log scale, from which quantiles are read (Parsimon
/// keeps the values and takes 1,000 quantiles; a link here may carry millions of flows).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogHist {
    counts: Vec<u32>,
    total: u64,
}

impl LogHist {
    fn bin(v: u64) -> usize {
        if v == 0 {
            0
        } else {
            (((v as f64).log2() * BINS_PER_OCTAVE) as usize + 1).min(OCTAVES * BINS_PER_OCTAVE as usize)
        }
    }
    fn value(bin: usize) -> f64 {
        if bin == 0 {
            0.0
        } else {
            ((bin as f64 - 0.5) / BINS_PER_OCTAVE).exp2()
        }
    }
    pub fn add(&mut self, v: u64) {
        let b = Self::bin(v);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] = self.counts[b].saturating_add(1);
        self.total += 1;
    }
    pub fn total(&self) -> u64 {
        self.total
    }
    /// Those of `other` too.
    fn merge(&mut self, other: &LogHist) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (c, &o) in self.counts.iter_mut().zip(&other.counts) {
            *c = c.saturating_add(o);
        }
        self.total += other.total;
    }
    /// `n` evenly spaced quantiles (`i / n` for i in 0..n), each its bin's middle value.
    pub fn quantiles(&self, n: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(n);
        if self.total == 0 {
            return out;
        }
        let (mut bin, mut below) = (0usize, 0u64);
        for i in 0..n {
            let rank = (i as u64 * self.total) / n as u64;
            while below + self.counts[bin] as u64 <= rank {
                below += self.counts[bin] as u64;
                bin += 1;
            }
            out.push(Self::value(bin) as f32);
        }
        out
    }
}

/// What one directed link carries over the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkLoad {
    /// Flows that cross it (long-lived ones included).
    pub flows: u32,
    pub long_lived: u32,
    pub bytes: u64,
    /// First and last start among its flows.
    pub first_ns: u64,
    pub last_ns: u64,
    pub sizes: LogHist,
    /// Times between successive starts.
    pub gaps: LogHist,
    /// Sum of its flows' one-way fixed delays (propagation and one full segment's
    /// transmission at every hop of the whole path); an integer, so that partial sums add
    /// up to the same ([`LinkLoad::merge`]).
    pub delay_sum_ns: u64,
    /// Flows per class (DSCP), sorted by class.
    pub classes: Vec<(u8, u32)>,
}

impl LinkLoad {
    /// Count flow `f`, of one-way fixed delay `one_way_ns`, as crossing this link.
    pub fn add_flow(&mut self, f: &FabricFlow, one_way_ns: u64) {
        if self.flows == 0 {
            self.first_ns = f.start_ns;
        } else {
            self.gaps.add(f.start_ns.saturating_sub(self.last_ns));
        }
        self.flows += 1;
        self.last_ns = f.start_ns;
        match f.size {
            Some(s) => {
                self.bytes += s.get();
                self.sizes.add(s.get());
            }
            None => self.long_lived += 1,
        }
        self.delay_sum_ns += one_way_ns;
        self.count_class(f.class, 1);
    }

    fn count_class(&mut self, class: u8, n: u32) {
        match self.classes.binary_search_by_key(&class, |c| c.0) {
            Ok(i) => self.classes[i].1 += n,
            Err(i) => self.classes.insert(i, (class, n)),
        }
    }

    /// The flows of `later` too, all of which start at or after these: as if they had been
    /// added one by one after this one's (the gap between the two is counted here).
    pub fn merge(&mut self, later: &LinkLoad) {
        if later.flows == 0 {
            return;
        }
        if self.flows == 0 {
            *self = later.clone();
            return;
        }
        self.gaps.add(later.first_ns.saturating_sub(self.last_ns));
        self.gaps.merge(&later.gaps);
        self.sizes.merge(&later.sizes);
        self.flows += later.flows;
        self.long_lived += later.long_lived;
        self.bytes += later.bytes;
        self.last_ns = later.last_ns;
        self.delay_sum_ns += later.delay_sum_ns;
        for &(class, n) in &later.classes {
            self.count_class(class, n);
        }
    }

    /// Offered load: its flows' bytes over the span of their starts, as a fraction of
    /// `rate_bps` (Parsimon's `load_of`); 0 for a single flow.
    pub fn load(&self, rate_bps: u64) -> f64 {
        let span = self.last_ns.saturating_sub(self.first_ns);
        if span == 0 || rate_bps == 0 {
            return 0.0;
        }
        self.bytes as f64 * 8e9 / span as f64 / rate_bps as f64
    }

    pub fn mean_delay_ns(&self) -> f64 {
        self.delay_sum_ns as f64 / self.flows.max(1) as f64
    }
}

/// The flows in order of their start (the listed flows, in any order, merged with the
/// generated ones, already in order): the order links see them arrive.
pub fn time_order(flows: &[FabricFlow], n_listed: usize) -> impl Iterator<Item = usize> + '_ {
    let mut listed: Vec<usize> = (0..n_listed).collect();
    listed.sort_by_key(|&i| (flows[i].start_ns, i));
    let mut li = 0;
    let mut gi = n_listed;
    std::iter::from_fn(move || {
        let take_listed = match (listed.get(li), flows.get(gi)) {
            (Some(&l), Some(g)) => flows[l].start_ns <= g.start_ns,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if take_listed {
            li += 1;
            Some(listed[li - 1])
        } else {
            gi += 1;
            Some(gi - 1)
        }
    })
}

/// The wire size of a full segment (data packets' store-and-forward time per hop).
pub fn full_segment(fab: &Fabric) -> u64 {
    (fab.mss() + TCP_IP_HEADER) as u64
}

/// A flow's one-way fixed delay: propagation plus one full segment's transmission per hop.
pub fn one_way_ns(fab: &Fabric, path: &[u32]) -> u64 {
    let seg = full_segment(fab);
    path.iter()
        .map(|&l| {
            let l = &fab.net.links[l as usize];
            l.delay_ns + tx_time_ns(seg, l.rate_bps)
        })
        .sum()
}

/// Every flow that starts, with its data path, in order of start; `each(flow index, flow,
/// data path)` (its ACK path: [`Fabric::ack_path`], where needed).
pub fn for_each_path(
    fab: &Fabric,
    flows: &[FabricFlow],
    n_listed: usize,
    mut each: impl FnMut(usize, &FabricFlow, &[u32]),
) {
    for i in starting(fab, flows, n_listed) {
        let f = &flows[i];
        each(i, f, &fab.data_path(f));
    }
}

/// The flows that start, in order of start (what [`for_each_path`] visits).
fn starting<'a>(fab: &Fabric, flows: &'a [FabricFlow], n_listed: usize) -> impl Iterator<Item = usize> + 'a {
    let end_ns = fab.end_ns;
    time_order(flows, n_listed).filter(move |&i| flows[i].starts_before(end_ns))
}

/// The chain of a flow's real path (its hops' rates, delays and egress ports), whose FCT
/// alone [`crate::alone`] simulates.
pub fn real_chain(fab: &Fabric, path: &[u32], class: u8) -> Chain {
    let net = &fab.net;
    let tier_index = |node: usize| {
        let name = net.tier_of(node);
        net.tiers.iter().position(|t| t == name).map(|i| i as u16)
    };
    let hops = path
        .iter()
        .map(|&l| {
            let s = &net.links[l as usize];
            let egress = if net.is_switch(s.from) { Egress::Switch(tier_index(s.from)) } else { Egress::Nic };
            Hop { rate_bps: s.rate_bps, delay_ns: s.delay_ns, egress }
        })
        .collect();
    Chain { settings: Settings::Fabric, hops, class, max_cwnd: None }
}

/// What the first pass over the flows finds: what each link carries, the chains of the
/// sized flows' paths, and the data segment-hops.
pub struct Loads {
    /// By link; None: it carries nothing.
    pub loads: Vec<Option<Box<LinkLoad>>>,
    pub chains: Chains,
    /// The data segments the exact run would carry, each counted at every link of its path
    /// (sized flows; a long-lived one counts its first segment).
    pub segment_hops: u64,
}

impl Loads {
    fn new(n_links: usize) -> Loads {
        Loads { loads: vec![None; n_links], chains: Chains::default(), segment_hops: 0 }
    }

    /// Those of `later`'s flows too, which start at or after these.
    fn merge(&mut self, later: Loads) {
        for (mine, theirs) in self.loads.iter_mut().zip(later.loads) {
            if let Some(t) = theirs {
                match mine {
                    Some(m) => m.merge(&t),
                    None => *mine = Some(t),
                }
            }
        }
        self.chains.merge(later.chains);
        self.segment_hops += later.segment_hops;
    }
}

/// Route every flow that starts and count it at every link of its path, as `split` says
/// ([`crate::passes`]: the merge is exact, so the result is a single loop's).
pub fn loads(fab: &Fabric, flows: &[FabricFlow], n_listed: usize, split: Split) -> Loads {
    let mss = fab.mss() as u64;
    let n_links = fab.net.links.len();
    let mut all = Loads::new(n_links);
    let work = |chunk: &[usize]| {
        let mut part = Loads::new(n_links);
        for &i in chunk {
            let f = &flows[i];
            let fwd = fab.data_path(f);
            let d = one_way_ns(fab, &fwd);
            part.segment_hops += f.bytes().div_ceil(mss).max(1) * fwd.len() as u64;
            for &l in &fwd {
                part.loads[l as usize].get_or_insert_with(Default::default).add_flow(f, d);
            }
            if f.size.is_some() {
                part.chains.id(real_chain(fab, &fwd, f.class), f.bytes().div_ceil(mss).max(1));
            }
        }
        part
    };
    in_chunks(starting(fab, flows, n_listed), split, work, |part| all.merge(part));
    all
}

/// One flow crossing a simulated link: where the link sits on its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crossing {
    pub flow: u32,
    /// The slowest rate before the link (the rate the flow reaches it at at most; 0 when
    /// the link is the flow's first, its sender's NIC).
    pub up_rate_bps: u64,
    /// Fixed delay from the sender to the link, less one full segment's transmission at
    /// `up_rate_bps` (which the link simulation's sender link takes).
    pub up_ns: u64,
    /// Fixed delay from the far end of the link to the receiver (propagation and one full
    /// segment's transmission per hop).
    pub down_ns: u64,
}

/// Where link `j` of `path` sits (see [`Crossing`]).
pub fn crossing(fab: &Fabric, flow: u32, path: &[u32], j: usize) -> Crossing {
    let seg = full_segment(fab);
    let hop = |l: u32| {
        let l = &fab.net.links[l as usize];
        (l.rate_bps, l.delay_ns + tx_time_ns(seg, l.rate_bps))
    };
    let up: Vec<(u64, u64)> = path[..j].iter().map(|&l| hop(l)).collect();
    let up_rate_bps = up.iter().map(|h| h.0).min().unwrap_or(0);
    let up_total: u64 = up.iter().map(|h| h.1).sum();
    let up_ns = if j == 0 { 0 } else { up_total.saturating_sub(tx_time_ns(seg, up_rate_bps)) };
    let down_ns = path[j + 1..].iter().map(|&l| hop(l).1).sum();
    Crossing { flow, up_rate_bps, up_ns, down_ns }
}

/// The flows crossing each of `links` (sorted, distinct), in order of start, as `split` says
/// (each link's list is the chunks' lists end to end: a single loop's).
pub fn crossings(
    fab: &Fabric,
    flows: &[FabricFlow],
    n_listed: usize,
    links: &[u32],
    split: Split,
) -> Vec<Vec<Crossing>> {
    let mut slot = vec![u32::MAX; fab.net.links.len()];
    for (k, &l) in links.iter().enumerate() {
        slot[l as usize] = k as u32;
    }
    let mut out = vec![Vec::new(); links.len()];
    let work = |chunk: &[usize]| {
        let mut part = vec![Vec::new(); links.len()];
        for &i in chunk {
            let fwd = fab.data_path(&flows[i]);
            for (j, &l) in fwd.iter().enumerate() {
                let k = slot[l as usize];
                if k != u32::MAX {
                    part[k as usize].push(crossing(fab, i as u32, &fwd, j));
                }
            }
        }
        part
    };
    in_chunks(starting(fab, flows, n_listed), split, work, |part| {
        for (o, p) in out.iter_mut().zip(part) {
            o.extend(p);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_histogram_quantiles_are_within_a_bin() {
        let mut h = LogHist::default();
        for v in 1..=1000u64 {
            h.add(v * 100);
        }
        let q = h.quantiles(10);
        assert_eq!(q.len(), 10);
        for (i, &x) in q.iter().enumerate() {
            let want = ((i * 1000 / 10) as f64 + 1.0) * 100.0;
            assert!((x as f64 / want - 1.0).abs() < 0.1, "quantile {i}: {x} vs {want}");
        }
        assert!(LogHist::default().quantiles(5).is_empty());
    }
}
