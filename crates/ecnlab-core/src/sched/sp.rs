//! Strict priority (queue 0 first), and strict priority over a weighted scheduler
//! (SP/WFQ, SP/DWRR: TCN §6, REFERENCE-IMPLEMENTATIONS §2.7).

use super::{QueueOcc, Scheduler};
use crate::units::Nanos;

/// Strict priority: always the lowest-numbered backlogged queue.
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
    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        debug_assert!(queue < self.n_queues);
        if queues[..queue].iter().any(|q| !q.is_empty()) {
            0.0
        } else {
            1.0
        }
    }
}

/// The first `strict` queues by strict priority; the rest (`strict..n`) by `inner`, which
/// sees only its own queues (re-indexed from 0).
pub struct SpOver<S> {
    strict: usize,
    inner: S,
}

impl<S: Scheduler> SpOver<S> {
    pub fn new(strict: usize, inner: S) -> Self {
        SpOver { strict, inner }
    }
}

impl<S: Scheduler> Scheduler for SpOver<S> {
    fn on_enqueue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        if queue >= self.strict {
            self.inner.on_enqueue(now, queue - self.strict, bytes, &queues[self.strict..]);
        }
    }
    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize {
        if let Some(q) = queues[..self.strict].iter().position(|q| !q.is_empty()) {
            return q;
        }
        self.strict + self.inner.select(now, &queues[self.strict..])
    }
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
    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        let higher_busy = queues[..queue.min(self.strict)].iter().any(|q| !q.is_empty());
        if higher_busy {
            0.0
        } else if queue < self.strict {
            1.0
        } else {
            self.inner.share(queue - self.strict, &queues[self.strict..])
        }
    }
}
