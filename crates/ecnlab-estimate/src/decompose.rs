//! Decomposition (Parsimon §4.1, `parsimon-core`'s `into_simulations`): every flow routed as
//! the simulator routes it ([`Fabric::paths`]), and what each directed link carries: its
//! workload's features for clustering ([`LinkLoad`]), and, for the links that are simulated,
//! their flows with where the link sits on each flow's path ([`Crossing`]).
//!
//! Memory is bounded by the flows (a compact record each, [`crate::flows::FabricFlow`]) and
//! the links (histograms, a few KB each): paths are recomputed on every pass instead of
//! kept, and only the simulated links keep their flows.

use crate::flows::{Fabric, FabricFlow};
use ecnlab_core::units::tx_time_ns;
use ecnlab_sim::packet::TCP_IP_HEADER;

/// Bins per octave of [`LogHist`] (a bin is 9 % wide).
const BINS_PER_OCTAVE: f64 = 8.0;
const OCTAVES: usize = 64;

/// A histogram of positive values on a log scale, from which quantiles are read (Parsimon
/// keeps the values and takes 1,000 quantiles; a link here may carry millions of flows).
#[derive(Clone, Debug, Default)]
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
#[derive(Clone, Debug, Default)]
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
    /// transmission at every hop of the whole path).
    pub delay_sum_ns: f64,
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
        self.delay_sum_ns += one_way_ns as f64;
        match self.classes.binary_search_by_key(&f.class, |c| c.0) {
            Ok(i) => self.classes[i].1 += 1,
            Err(i) => self.classes.insert(i, (f.class, 1)),
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
        self.delay_sum_ns / self.flows.max(1) as f64
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
    for i in time_order(flows, n_listed) {
        let f = &flows[i];
        if !f.starts_before(fab.end_ns) {
            continue;
        }
        each(i, f, &fab.data_path(f));
    }
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

/// The flows crossing each of `links` (sorted, distinct), in order of start.
pub fn crossings(fab: &Fabric, flows: &[FabricFlow], n_listed: usize, links: &[u32]) -> Vec<Vec<Crossing>> {
    let mut slot = vec![u32::MAX; fab.net.links.len()];
    for (k, &l) in links.iter().enumerate() {
        slot[l as usize] = k as u32;
    }
    let mut out = vec![Vec::new(); links.len()];
    for_each_path(fab, flows, n_listed, |i, _, fwd| {
        for (j, &l) in fwd.iter().enumerate() {
            let k = slot[l as usize];
            if k != u32::MAX {
                out[k as usize].push(crossing(fab, i as u32, fwd, j));
            }
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
