//! A scheduler with paused queues (PFC, IEEE 802.1Qbb: `crate::port::Port::set_paused`).
//!
//! A paused queue is ineligible: the scheduler must not pick it, and a round robin goes on
//! with the others. [`Paused`] wraps the port's scheduler while any of its queues is paused
//! and hands it a view of the queues with the paused ones empty: to the scheduler a queue
//! empties when paused and becomes backlogged again when resumed, so DWRR takes it back at
//! the tail of its active list with a fresh quantum, WRR at its next turn, WFQ with a new
//! finish tag (HPCC's ns-3 round robin keeps a paused queue's place instead: the two differ
//! in where the queue's turn falls in the first round after a pause). The wrapper is a variant of
//! [`Sched`] of its own, so a port without paused queues runs exactly the code it ran before
//! PFC existed, and a port with some takes the enum path.

use super::{QueueOcc, Sched, Scheduler};
use crate::buffer::MAX_QUEUES;
use crate::marking::mq_ecn::MqEcnParams;
use crate::units::Nanos;

/// The port's scheduler while some of its queues are paused.
#[derive(Clone)]
pub struct Paused {
    pub(crate) inner: Sched,
    /// Paused queues, one bit each.
    mask: u64,
}

/// `occ` with the queues of `paused` shown empty (the first `occ.len()` entries).
fn masked(occ: &[QueueOcc], paused: u64) -> ([QueueOcc; MAX_QUEUES], usize) {
    let mut view = [QueueOcc::default(); MAX_QUEUES];
    for (q, (v, o)) in view.iter_mut().zip(occ).enumerate() {
        if paused >> q & 1 == 0 {
            *v = *o;
        }
    }
    (view, occ.len())
}

impl Paused {
    /// Queue `q` of a port whose scheduler is `sched` and whose queues are `occ` has just
    /// changed state; `mask` is the port's paused queues now. Tell the scheduler (it sees
    /// `q` empty or backlogged again), and wrap or unwrap it.
    pub(crate) fn set(sched: &mut Sched, now: Nanos, q: usize, mask: u64, occ: &[QueueOcc]) {
        if mask != 0 && !matches!(sched, Sched::Paused(_)) {
            let inner = std::mem::replace(sched, Sched::Sp(super::sp::Sp::new(1)));
            *sched = Sched::Paused(Box::new(Paused { inner, mask: 0 }));
        }
        let Sched::Paused(p) = sched else { unreachable!("wrapped above, or unpausing a wrapped one") };
        let pausing = mask >> q & 1 == 1;
        p.mask = mask;
        if !occ[q].is_empty() {
            let (view, n) = masked(occ, mask);
            if pausing {
                p.inner.on_dequeue(now, q, 0, &view[..n]); // the queue leaves: it looks empty
            } else {
                p.inner.on_enqueue(now, q, occ[q].head_bytes, &view[..n]); // backlogged again
            }
        }
        if mask == 0 {
            let Sched::Paused(p) = std::mem::replace(sched, Sched::Sp(super::sp::Sp::new(1))) else { unreachable!() };
            *sched = p.inner;
        }
    }
}

impl Scheduler for Paused {
    fn has_backlog(&self, port_pkts: u64, queues: &[QueueOcc]) -> bool {
        port_pkts > 0 && queues.iter().enumerate().any(|(q, o)| o.pkts > 0 && self.mask >> q & 1 == 0)
    }
    fn on_enqueue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        // A packet joining a paused queue stays hidden until the queue is resumed.
        if self.mask >> queue & 1 == 0 {
            let (view, n) = masked(queues, self.mask);
            self.inner.on_enqueue(now, queue, bytes, &view[..n]);
        }
    }
    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize {
        let (view, n) = masked(queues, self.mask);
        self.inner.select(now, &view[..n])
    }
    fn on_dequeue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        let (view, n) = masked(queues, self.mask);
        self.inner.on_dequeue(now, queue, bytes, &view[..n]);
    }
    fn quantum(&self, queue: usize) -> Option<u32> {
        self.inner.quantum(queue)
    }
    fn round_time_ns(&self) -> Option<f64> {
        self.inner.round_time_ns()
    }
    fn track_round_time(&mut self, on: bool) {
        self.inner.track_round_time(on)
    }
    fn configure_round_time(&mut self, p: &MqEcnParams) {
        self.inner.configure_round_time(p)
    }
    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        let (view, n) = masked(queues, self.mask);
        self.inner.share(queue, &view[..n])
    }
    fn strict_above(&self, queue: usize) -> usize {
        self.inner.strict_above(queue)
    }
}
