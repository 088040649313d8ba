//! Weighted fair queueing by virtual finish times, the variant the TCN authors implemented
//! (TCN §6 "Packet Schedulers"; TCN-NS2 `prio_wfq.cc`, Linux `sch_wfq`, ns-3
//! `wfq-queue-disc.cc`; REFERENCE-IMPLEMENTATIONS §2.7):
//! - only head packets carry a finish tag F_i;
//! - one virtual time V = the largest finish tag assigned so far (never reset by the
//!   references; see "rebasing" below for why ours is equivalent);
//! - a queue that becomes backlogged gets `F_i = V + len / w_i`, and `V = F_i`;
//! - after a dequeue from a queue that stays backlogged, the new head gets
//!   `F_i += len_next / w_i`, and `V = max(V, F_i)`;
//! - the backlogged queue with the smallest F_i sends; ties go to the lowest index.
//!
//! This is not textbook WFQ (no GPS simulation) nor SCFQ: a newly backlogged queue starts
//! behind every tag handed out so far, so it behaves like round robin for new arrivals, and
//! continuously backlogged queues share in proportion to their weights (within one packet).
//!
//! Arithmetic: tags are integers in units of `1/S` byte, `len / w` = `len x S / w` in u128.
//! `S` is the least common multiple of the weights when it is at most 2^64 (then every
//! increment is exact and tags never drift; e.g. any weights drawn from 1..=32), otherwise
//! `S = 2^64` and each increment is truncated by less than 2^-64 byte (a bias below 1e-4 byte
//! after 10^15 packets). Overflow cannot happen: an increment is below 2^96, and when V
//! reaches 2^126 all live tags and V are shifted down by the smallest live tag (O(n), at most
//! once per 2^30 maximum-size increments), which preserves every comparison. V is also
//! rebased to 0 whenever every queue is empty (no tag is live, so only differences from V
//! matter). Linux and ns-3 instead use integer `len / w` (truncating), which biases against
//! high weights; we do not reproduce that.
//!
//! Cost: O(n) per packet (a scan for the smallest tag; n <= 64).

use super::dwrr::weighted_share;
use super::{QueueOcc, Scheduler};
use crate::units::Nanos;

/// When V reaches this, tags are shifted down (see the module doc).
const REBASE_AT: u128 = 1 << 126;

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Tag units per byte: lcm(weights) if it fits in 2^64, else 2^64.
fn tag_scale(weights: &[u32]) -> u128 {
    let cap: u128 = 1 << 64;
    let mut l: u128 = 1;
    for &w in weights {
        let w = w.max(1) as u128;
        l = l / gcd(l, w) * w;
        if l > cap {
            return cap;
        }
    }
    l
}

/// Weighted fair queueing (the authors' virtual-finish-time variant).
#[derive(Clone)]
pub struct Wfq {
    weights: Vec<u32>,
    /// Tag units per byte.
    scale: u128,
    /// Finish tag of each backlogged queue's head packet.
    finish: Vec<u128>,
    /// Per queue: backlogged as far as this scheduler knows.
    busy: Vec<bool>,
    n_busy: usize,
    /// Virtual time: the largest finish tag assigned.
    v: u128,
}

impl Wfq {
    pub fn new(weights: &[u32]) -> Self {
        let n = weights.len();
        Wfq {
            weights: weights.to_vec(),
            scale: tag_scale(weights),
            finish: vec![0; n],
            busy: vec![false; n],
            n_busy: 0,
            v: 0,
        }
    }

    /// `len / w_queue` in tag units.
    #[inline]
    fn cost(&self, queue: usize, len: u32) -> u128 {
        len as u128 * self.scale / self.weights[queue].max(1) as u128
    }

    fn maybe_rebase(&mut self) {
        if self.v < REBASE_AT {
            return;
        }
        let m = (0..self.finish.len()).filter(|&q| self.busy[q]).map(|q| self.finish[q]).min().unwrap_or(self.v);
        for q in 0..self.finish.len() {
            if self.busy[q] {
                self.finish[q] -= m;
            }
        }
        self.v -= m;
    }

    /// Finish tag of `queue`'s head packet in bytes-per-weight (for tests and traces).
    pub fn finish_tag(&self, queue: usize) -> Option<f64> {
        self.busy[queue].then(|| self.finish[queue] as f64 / self.scale as f64)
    }
}

impl Scheduler for Wfq {
    fn on_enqueue(&mut self, _now: Nanos, queue: usize, bytes: u32, _queues: &[QueueOcc]) {
        if self.busy[queue] {
            return;
        }
        self.busy[queue] = true;
        self.n_busy += 1;
        let f = self.v + self.cost(queue, bytes);
        self.finish[queue] = f;
        self.v = f;
        self.maybe_rebase();
    }

    fn select(&mut self, _now: Nanos, queues: &[QueueOcc]) -> usize {
        let mut best: Option<usize> = None;
        for q in 0..queues.len() {
            if self.busy[q] && best.is_none_or(|b| self.finish[q] < self.finish[b]) {
                best = Some(q);
            }
        }
        let q = best.expect("WFQ select called with no backlog");
        debug_assert!(!queues[q].is_empty(), "WFQ tag on empty queue {q}");
        q
    }

    fn on_dequeue(&mut self, _now: Nanos, queue: usize, _bytes: u32, queues: &[QueueOcc]) {
        if !self.busy[queue] {
            return;
        }
        if queues[queue].is_empty() {
            self.busy[queue] = false;
            self.n_busy -= 1;
            if self.n_busy == 0 {
                self.v = 0;
            }
        } else {
            let f = self.finish[queue] + self.cost(queue, queues[queue].head_bytes);
            self.finish[queue] = f;
            self.v = self.v.max(f);
            self.maybe_rebase();
        }
    }

    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        weighted_share(&self.weights, queue, queues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(pkts: u32, head: u32) -> QueueOcc {
        QueueOcc { bytes: (pkts * head) as u64, pkts, head_bytes: head }
    }

    #[test]
    fn scale_is_exact_lcm_or_capped() {
        assert_eq!(tag_scale(&[2, 1, 1]), 2);
        assert_eq!(tag_scale(&[4, 6, 10]), 60);
        let all: Vec<u32> = (1..=64).collect();
        assert_eq!(tag_scale(&all), 1 << 64);
        assert_eq!(Wfq::new(&[3]).cost(0, 1000), 1000); // 1000 x 3 / 3 exactly
    }

    #[test]
    fn tags_follow_the_authors_rules() {
        let mut s = Wfq::new(&[2, 1]);
        let mut q = vec![occ(1, 1000), QueueOcc::default()];
        s.on_enqueue(0, 0, 1000, &q); // F0 = 0 + 500, V = 500
        assert_eq!(s.finish_tag(0), Some(500.0));
        q[1] = occ(1, 300);
        s.on_enqueue(0, 1, 300, &q); // F1 = 500 + 300, V = 800
        assert_eq!(s.finish_tag(1), Some(800.0));
        assert_eq!(s.select(0, &q), 0);
        q[0] = occ(1, 1500); // a second packet of 1500 B is now the head
        s.on_dequeue(0, 0, 1000, &q); // F0 = 500 + 750 = 1250, V = 1250
        assert_eq!(s.finish_tag(0), Some(1250.0));
        assert_eq!(s.v, 1250 * s.scale);
        assert_eq!(s.select(0, &q), 1);
        q[1] = QueueOcc::default();
        s.on_dequeue(0, 1, 300, &q);
        assert_eq!(s.finish_tag(1), None);
        // A newly backlogged queue starts behind V.
        q[1] = occ(1, 100);
        s.on_enqueue(0, 1, 100, &q);
        assert_eq!(s.finish_tag(1), Some(1350.0));
        assert_eq!(s.select(0, &q), 0);
    }

    #[test]
    fn ties_go_to_the_lowest_index() {
        let mut s = Wfq::new(&[1, 1]);
        let q = vec![occ(1, 1000), occ(1, 1000)];
        s.on_enqueue(0, 1, 1000, &q);
        // Force equal tags.
        s.on_enqueue(0, 0, 1000, &q);
        s.finish[0] = s.finish[1];
        assert_eq!(s.select(0, &q), 0);
    }

    #[test]
    fn rebase_preserves_order() {
        let mut s = Wfq::new(&[1, 3]);
        let mut q = vec![occ(2, 1500), occ(2, 1500)];
        s.on_enqueue(0, 0, 1500, &q);
        s.on_enqueue(0, 1, 1500, &q);
        s.v = REBASE_AT - 10;
        s.finish[0] = REBASE_AT - 4000;
        s.finish[1] = REBASE_AT - 10;
        q[0] = occ(1, 1500);
        s.on_dequeue(0, 0, 1500, &q); // F0 = REBASE_AT - 4000 + 4500 -> V >= REBASE_AT: rebase
        assert!(s.v < REBASE_AT);
        assert_eq!(s.finish[1], 0);
        assert_eq!(s.finish[0], 510);
        assert_eq!(s.select(0, &q), 1);
    }

    #[test]
    fn idle_resets_v() {
        let mut s = Wfq::new(&[1]);
        let mut q = vec![occ(1, 1500)];
        s.on_enqueue(0, 0, 1500, &q);
        q[0] = QueueOcc::default();
        s.on_dequeue(0, 0, 1500, &q);
        assert_eq!(s.v, 0);
    }
}
