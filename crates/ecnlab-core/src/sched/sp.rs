//! Strict priority (queue 0 first), and strict priority over a weighted scheduler
//! (SP/WFQ, SP/DWRR: TCN §6, REFERENCE-IMPLEMENTATIONS §2.7).

use super::{QueueOcc, Scheduler};
use crate::units::Nanos;

/// Strict priority: always the lowest-numbered backlogged queue.
#[derive(Clone)]
pub struct Sp {
    n_queues: usize,
}

impl Sp {
    pub fn new(n_queues: usize) -> Self {
        Sp { n_queues }
    }
}

impl Scheduler for Sp {
    fn on_enqueue(&mut self, _now: Nanos, _queue: usize, _bytes: u32, _queues: &[QueueOcc]) {}
    fn select(&mut self, _now: Nanos, queues: &[QueueOcc]) -> usize {
        queues.iter().position(|q| !q.is_empty()).expect("select called with no backlog")
    }
    fn on_dequeue(&mut self, _now: Nanos, _queue: usize, _bytes: u32, _queues: &[QueueOcc]) {}
    /// Each queue is a priority level of its own: all of what the queues above it leave.
    fn share(&self, queue: usize, _queues: &[QueueOcc]) -> f64 {
        debug_assert!(queue < self.n_queues);
        1.0
    }
    fn strict_above(&self, queue: usize) -> usize {
        queue
    }
}

/// Strict priority over a single queue, as a type: the port's path compiled for it has no
/// choice to make (`crate::port`, benches/DESIGN.md §12). It keeps no state, so a one-queue
/// `Sp` port can run it in place of its `Sp`.
pub struct Fifo;

impl Scheduler for Fifo {
    #[inline]
    fn on_enqueue(&mut self, _now: Nanos, _queue: usize, _bytes: u32, _queues: &[QueueOcc]) {}
    #[inline]
    fn select(&mut self, _now: Nanos, queues: &[QueueOcc]) -> usize {
        debug_assert!(queues.len() == 1 && !queues[0].is_empty());
        0
    }
    #[inline]
    fn on_dequeue(&mut self, _now: Nanos, _queue: usize, _bytes: u32, _queues: &[QueueOcc]) {}
    fn share(&self, _queue: usize, _queues: &[QueueOcc]) -> f64 {
        1.0
    }
    fn strict_above(&self, _queue: usize) -> usize {
        0
    }
}

/// The first `strict` queues by strict priority; the rest (`strict..n`) by `inner`, which
/// sees only its own queues (re-indexed from 0).
#[repr(C)]
#[derive(Clone)]
pub struct SpOver<S> {
    strict: usize,
    pub(crate) inner: S,
}

impl<S: Scheduler> SpOver<S> {
    pub fn new(strict: usize, inner: S) -> Self {
        SpOver { strict, inner }
    }
}

impl<S: Scheduler> Scheduler for SpOver<S> {
    #[inline]
    fn on_enqueue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        if queue >= self.strict {
            self.inner.on_enqueue(now, queue - self.strict, bytes, &queues[self.strict..]);
        }
    }
    #[inline]
    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize {
        if let Some(q) = queues[..self.strict].iter().position(|q| !q.is_empty()) {
            return q;
        }
        self.strict + self.inner.select(now, &queues[self.strict..])
    }
    #[inline]
    fn on_dequeue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        if queue >= self.strict {
            self.inner.on_dequeue(now, queue - self.strict, bytes, &queues[self.strict..]);
        }
    }
    fn quantum(&self, queue: usize) -> Option<u32> {
        if queue >= self.strict {
            self.inner.quantum(queue - self.strict)
        } else {
            None
        }
    }
    fn round_time_ns(&self) -> Option<f64> {
        self.inner.round_time_ns()
    }
    fn track_round_time(&mut self, on: bool) {
        self.inner.track_round_time(on)
    }
    fn configure_round_time(&mut self, p: &crate::marking::mq_ecn::MqEcnParams) {
        self.inner.configure_round_time(p)
    }
    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        if queue < self.strict {
            1.0
        } else {
            self.inner.share(queue - self.strict, &queues[self.strict..])
        }
    }
    fn strict_above(&self, queue: usize) -> usize {
        queue.min(self.strict)
    }
}

#[cfg(test)]
mod tests {
    use super::super::dwrr::Dwrr;
    use super::super::wfq::Wfq;
    use super::super::SchedulerConfig;
    use super::*;

    fn occ(pkts: &[u32]) -> Vec<QueueOcc> {
        pkts.iter()
            .map(|&p| QueueOcc { bytes: p as u64 * 1500, pkts: p, head_bytes: if p > 0 { 1500 } else { 0 } })
            .collect()
    }

    #[test]
    fn sp_serves_lowest_backlogged_index() {
        let mut s = Sp::new(4);
        assert_eq!(s.select(0, &occ(&[0, 0, 3, 1])), 2);
        assert_eq!(s.select(0, &occ(&[1, 0, 3, 1])), 0);
        assert_eq!(s.select(0, &occ(&[0, 0, 0, 1])), 3);
    }

    #[test]
    #[should_panic(expected = "no backlog")]
    fn sp_select_without_backlog_panics() {
        Sp::new(2).select(0, &occ(&[0, 0]));
    }

    #[test]
    fn sp_share_is_what_the_higher_queues_leave() {
        let s = Sp::new(3);
        let q = occ(&[0, 2, 5]);
        // Every queue is its own level: all of what the queues above it leave, however
        // backlogged they are now (that is a rate over time, measured by the caller).
        assert_eq!(s.share(0, &q), 1.0);
        assert_eq!(s.share(1, &q), 1.0);
        assert_eq!(s.share(2, &q), 1.0);
        assert_eq!((s.strict_above(0), s.strict_above(2)), (0, 2));
        assert_eq!(s.quantum(0), None);
        assert_eq!(s.round_time_ns(), None);
    }

    #[test]
    fn sp_over_reindexes_the_inner_scheduler() {
        let cfg = SchedulerConfig::default();
        let mut s = SpOver::new(2, Dwrr::new(&cfg, &[2, 1], 10_000_000_000));
        assert_eq!(s.quantum(1), None);
        assert_eq!(s.quantum(2), Some(3000));
        assert_eq!(s.quantum(3), Some(1500));
        // Inner queues 2 and 3 backlogged, then strict queue 1.
        let mut q = occ(&[0, 0, 1, 1]);
        s.on_enqueue(0, 2, 1500, &q);
        s.on_enqueue(0, 3, 1500, &q);
        assert_eq!(s.select(0, &q), 2);
        q[1] = QueueOcc { bytes: 1500, pkts: 1, head_bytes: 1500 };
        s.on_enqueue(0, 1, 1500, &q);
        assert_eq!(s.select(0, &q), 1);
        q[1] = QueueOcc::default();
        s.on_dequeue(0, 1, 1500, &q);
        assert_eq!(s.select(0, &q), 2);
    }

    #[test]
    fn sp_over_share() {
        let s = SpOver::new(1, Wfq::new(&[3, 1]));
        let q = occ(&[0, 1, 1]);
        assert_eq!(s.share(0, &q), 1.0);
        assert!((s.share(1, &q) - 0.75).abs() < 1e-12);
        assert!((s.share(2, &q) - 0.25).abs() < 1e-12);
        // A backlogged strict queue does not change the WFQ level's split of what it leaves.
        let q = occ(&[1, 1, 1]);
        assert_eq!(s.share(0, &q), 1.0);
        assert!((s.share(1, &q) - 0.75).abs() < 1e-12);
        assert!((s.share(2, &q) - 0.25).abs() < 1e-12);
        assert_eq!((s.strict_above(0), s.strict_above(1), s.strict_above(2)), (0, 1, 1));
        assert_eq!(SpOver::new(2, Wfq::new(&[1])).strict_above(1), 1);
    }
}
