//! Aggregation (Parsimon §4.4, `parsimon-core`'s `DelayNetwork`): each simulated link's
//! delays, bucketed by flow size, and a flow's FCT as its FCT alone on its path plus the
//! delays of the links it crosses.
//!
//! A link's delay for a flow it simulated is the flow's FCT there less its FCT alone on
//! that simulation's path ([`crate::alone`]). A link clustered with a simulated one takes a
//! delay drawn from its representative's, per packet (Parsimon's packet-normalised delay:
//! the delay over the flow's segments), among flows of the same class and a similar size:
//! buckets of at least [`BUCKET_MIN`] flows whose largest is at least twice the smallest
//! (Parsimon's `BucketOpts` x = 2, b = 100). A flow that did not finish in a link
//! simulation is a delay without end: a flow that draws one does not finish.
//!
//! Delays add up along a path. A delay may be negative: a flow faster than alone, on a
//! connection that an earlier message left with a grown window (persistent connections).
//! That gain is the flow's own, present in every link simulation it crosses: it is counted
//! once, the largest of the flow's negative delays, and the positive ones add.

use ecnlab_core::rng::{derive_seed, Rng};

/// Fewest flows in a size bucket.
pub const BUCKET_MIN: usize = 100;
/// Size ratio of a bucket's largest flow to its smallest, at least.
const BUCKET_RATIO: u64 = 2;

/// A delay sample: per segment (ns; infinite: the flow did not finish), and the flow's
/// timeouts there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub per_segment_ns: f32,
    pub timeouts: u32,
}

/// Samples of one class, by size.
#[derive(Clone, Debug, Default)]
pub struct Buckets {
    /// The smallest size of each bucket (the first is 0).
    lower: Vec<u64>,
    samples: Vec<Vec<Sample>>,
}

impl Buckets {
    /// Parsimon's bucketing of `(size, sample)` pairs (sorted here).
    pub fn new(mut data: Vec<(u64, Sample)>) -> Buckets {
        data.sort_by_key(|d| d.0);
        let mut b = Buckets::default();
        let mut acc: Vec<Sample> = Vec::new();
        let mut lo = 0u64;
        let mut i = 0;
        while i < data.len() {
            let (size, s) = data[i];
            acc.push(s);
            i += 1;
            if acc.len() >= BUCKET_MIN && size >= BUCKET_RATIO.saturating_mul(lo.max(1)) {
                while i < data.len() && data[i].0 == size {
                    acc.push(data[i].1);
                    i += 1;
                }
                b.lower.push(lo);
                b.samples.push(std::mem::take(&mut acc));
                lo = size + 1;
            }
        }
        if !acc.is_empty() {
            b.lower.push(lo);
            b.samples.push(acc);
        }
        b
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    fn count(&self) -> usize {
        self.samples.iter().map(Vec::len).sum()
    }

    /// A sample for a flow of `size` bytes.
    fn draw(&self, size: u64, rng: &mut Rng) -> Sample {
        let k = self.lower.partition_point(|&lo| lo <= size).max(1) - 1;
        let s = &self.samples[k];
        s[rng.below(s.len() as u64) as usize]
    }
}

/// One simulated link's delays: its own flows', and what clustered links draw from.
#[derive(Clone, Debug, Default)]
pub struct Delays {
    /// (flow, delay ns, timeouts), sorted by flow.
    own: Vec<(u32, f32, u32)>,
    by_class: Vec<(u8, Buckets)>,
    all: Buckets,
}

impl Delays {
    /// From `(flow, class, size, delay ns, timeouts)` of every sized flow the link simulated
    /// (`mss`: the segment size of the packet normalisation).
    pub fn new(mut flows: Vec<(u32, u8, u64, f64, u32)>, mss: u64) -> Delays {
        let sample = |size: u64, d: f64, timeouts| Sample {
            per_segment_ns: (d / size.div_ceil(mss).max(1) as f64) as f32,
            timeouts,
        };
        flows.sort_by_key(|f| (f.1, f.0));
        let mut by_class = Vec::new();
        let mut i = 0;
        while i < flows.len() {
            let c = flows[i].1;
            let n = flows[i..].iter().take_while(|f| f.1 == c).count();
            let data = flows[i..i + n].iter().map(|f| (f.2, sample(f.2, f.3, f.4))).collect();
            by_class.push((c, Buckets::new(data)));
            i += n;
        }
        let all = Buckets::new(flows.iter().map(|f| (f.2, sample(f.2, f.3, f.4))).collect());
        let mut own: Vec<(u32, f32, u32)> = flows.iter().map(|f| (f.0, f.3 as f32, f.4)).collect();
        own.sort_unstable_by_key(|o| o.0);
        Delays { own, by_class, all }
    }

    /// The delay of a flow this link simulated.
    pub fn own(&self, flow: u32) -> Option<(f64, u32)> {
        let i = self.own.binary_search_by_key(&flow, |o| o.0).ok()?;
        Some((self.own[i].1 as f64, self.own[i].2))
    }

    /// A delay drawn for a flow of `class` and `size` on a link clustered with this one:
    /// among its class's flows, or all flows when its class has fewer than a bucket.
    pub fn draw(&self, class: u8, size: u64, mss: u64, rng: &mut Rng) -> Option<(f64, u32)> {
        let b = match self.by_class.binary_search_by_key(&class, |c| c.0) {
            Ok(i) if self.by_class[i].1.count() >= BUCKET_MIN => &self.by_class[i].1,
            _ => &self.all,
        };
        if b.is_empty() {
            return None;
        }
        let s = b.draw(size, rng);
        Some((s.per_segment_ns as f64 * size.div_ceil(mss).max(1) as f64, s.timeouts))
    }
}

/// The random stream of the delays drawn for `flow` on `link` (of the estimate's seed):
/// the same whatever order flows are combined in.
pub fn draw_rng(seed: u64, flow: u32, link: u32) -> Rng {
    Rng::new(derive_seed(derive_seed(seed, crate::SAMPLE_STREAM + link as u64), flow as u64))
}

/// A flow's delays along its path, added: positive ones each, the largest negative once
/// (module docs). Infinite: the flow does not finish.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathDelay {
    positive: f64,
    gain: f64,
    pub timeouts: u32,
}

impl PathDelay {
    pub fn add(&mut self, delay_ns: f64, timeouts: u32) {
        if delay_ns >= 0.0 {
            self.positive += delay_ns;
        } else {
            self.gain = self.gain.min(delay_ns);
        }
        self.timeouts = self.timeouts.saturating_add(timeouts);
    }
    pub fn total_ns(&self) -> f64 {
        self.positive + self.gain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(d: f32) -> Sample {
        Sample { per_segment_ns: d, timeouts: 0 }
    }

    /// Buckets hold at least 100 flows and double in size (Parsimon's rule); equal sizes
    /// never straddle two; the rest, however few, is the last.
    #[test]
    fn buckets_follow_parsimons_rule() {
        let data: Vec<(u64, Sample)> = (1..=1000u64).map(|i| (i * 10, s(i as f32))).collect();
        let b = Buckets::new(data);
        assert!(b.samples[..b.samples.len() - 1].iter().all(|x| x.len() >= BUCKET_MIN));
        assert_eq!(b.lower[0], 0);
        assert_eq!(b.count(), 1000);
        let mut rng = Rng::new(1);
        // A flow of 5,000 B draws from the bucket holding 5,000.
        let k = b.lower.partition_point(|&lo| lo <= 5000) - 1;
        let v = b.draw(5000, &mut rng).per_segment_ns;
        assert!(b.samples[k].iter().any(|x| x.per_segment_ns == v));
        let equal: Vec<(u64, Sample)> = (0..250).map(|i| (if i < 150 { 7 } else { 20 }, s(1.0))).collect();
        let b = Buckets::new(equal);
        assert_eq!(b.samples.iter().map(Vec::len).collect::<Vec<_>>(), vec![150, 100]);
    }

    #[test]
    fn a_gain_counts_once_and_delays_add() {
        let mut p = PathDelay::default();
        for (d, t) in [(10.0, 1), (-4.0, 0), (5.0, 0), (-6.0, 2)] {
            p.add(d, t);
        }
        assert_eq!((p.total_ns(), p.timeouts), (9.0, 3));
        let mut q = PathDelay::default();
        q.add(f64::INFINITY, 0);
        assert!(q.total_ns().is_infinite());
    }

    #[test]
    fn own_delays_and_draws() {
        let flows: Vec<(u32, u8, u64, f64, u32)> =
            (0..300).map(|i| (i * 2, (i % 2) as u8, 1000 + i as u64, i as f64 * 100.0, 0)).collect();
        let d = Delays::new(flows, 1000);
        assert_eq!(d.own(20), Some((1000.0, 0)));
        assert_eq!(d.own(21), None);
        let mut rng = Rng::new(3);
        let (x, _) = d.draw(1, 1100, 1000, &mut rng).unwrap();
        // Class 1's flows have odd indices: delays 100 x odd, per segment over 2 segments.
        assert!(x >= 0.0);
        assert!(d.draw(9, 1100, 1000, &mut rng).is_some(), "an unknown class draws from all");
    }
}
