//! STUB: to be implemented (currently serves the first backlogged queue).
use super::{QueueOcc, Scheduler, SchedulerConfig};
use crate::units::Nanos;

pub struct Dwrr {
    weights: Vec<u32>,
}

impl Dwrr {
    pub fn new(_cfg: &SchedulerConfig, weights: &[u32], _link_rate_bps: u64) -> Self {
        Dwrr { weights: weights.to_vec() }
    }
}

impl Scheduler for Dwrr {
    fn on_enqueue(&mut self, _now: Nanos, _queue: usize, _bytes: u32, _queues: &[QueueOcc]) {}
    fn select(&mut self, _now: Nanos, queues: &[QueueOcc]) -> usize {
        queues.iter().position(|q| !q.is_empty()).unwrap()
    }
    fn on_dequeue(&mut self, _now: Nanos, _queue: usize, _bytes: u32, _queues: &[QueueOcc]) {}
    fn share(&self, _queue: usize, _queues: &[QueueOcc]) -> f64 {
        1.0 / self.weights.len() as f64
    }
}
