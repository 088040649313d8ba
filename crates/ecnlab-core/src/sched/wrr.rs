//! Weighted round robin by bytes, without carry-over, with MQ-ECN round-time estimation.
//!
//! Follows the structure of MQ-ECN-NS2 `wrr.cc` (REFERENCE-IMPLEMENTATIONS §2.7): a fixed
//! round-robin pointer visits the queues in index order, skipping empty ones; the queue
//! under the pointer gets a fresh per-turn counter `quantum_i = cfg.quantum x weights[i]`
//! (nothing carries over from earlier turns, unlike DWRR's deficit).
//!
//! Exact rule (ours):
//! - the queue under the pointer sends its head packet while its counter is **positive**,
//!   whatever the packet's size, and `counter -= size` (it may go negative; the overshoot is
//!   forgotten at the next turn);
//! - its turn ends when the counter is no longer positive (a *rotation* if it still has
//!   packets) or when it empties; the pointer then moves to the next backlogged queue in
//!   index order (wrapping), which starts a turn with `counter = quantum_i`.
//!
//! So per round queue i sends `ceil(quantum_i / size)` packets of one size: exact weighted
//! shares for equal-sized packets, and a bias of up to one packet per turn otherwise (that is
//! what DWRR fixes). Deviation from `wrr.cc`: ns-2 sends only while `size <= counter`, which
//! never sends (and loops forever) when `quantum_i` is smaller than the head packet, and
//! wastes the unused remainder every turn; the positive-counter rule is the common hardware
//! byte-mode WRR and always makes progress.
//!
//! Turns are ended lazily, in [`Scheduler::select`] (the next time the port asks for a
//! packet), as `wrr.cc` does; so MQ-ECN rotation samples are taken at the same instants as
//! DWRR's. The round-time estimator and its variants are described in
//! [`crate::marking::mq_ecn`]. A
//! skipped empty queue restarts its round at the skip time (`wrr.cc`).

use super::dwrr::{quanta, weighted_share};
use super::{QueueOcc, Scheduler, SchedulerConfig};
use crate::marking::mq_ecn::{MqEcnParams, RoundTime};
use crate::units::Nanos;

/// Weighted round robin with MQ-ECN round-time estimation.
#[derive(Clone)]
pub struct Wrr {
    weights: Vec<u32>,
    /// quantum_i in bytes.
    quantum: Vec<u64>,
    /// Bytes the pointer's queue may still start sending in its turn (may go negative).
    counter: i64,
    /// The round-robin pointer.
    current: usize,
    /// Whether `current` is in the middle of a turn.
    in_turn: bool,
    /// Per queue: backlogged as far as this scheduler knows.
    busy: Vec<bool>,
    n_busy: usize,
    round: RoundTime,
}

impl Wrr {
    pub fn new(cfg: &SchedulerConfig, weights: &[u32], link_rate_bps: u64) -> Self {
        let n = weights.len();
        Wrr {
            weights: weights.to_vec(),
            quantum: quanta(cfg.quantum.0, weights),
            counter: 0,
            // The first turn goes to queue 0, as in wrr.cc.
            current: n.saturating_sub(1),
            in_turn: false,
            busy: vec![false; n],
            n_busy: 0,
            round: RoundTime::new(&MqEcnParams::default(), n, link_rate_bps),
        }
    }
}

impl Scheduler for Wrr {
    fn on_enqueue(&mut self, now: Nanos, queue: usize, _bytes: u32, _queues: &[QueueOcc]) {
        if self.busy[queue] {
            return;
        }
        if self.n_busy == 0 {
            self.round.on_idle_end(now);
        }
        self.busy[queue] = true;
        self.n_busy += 1;
        self.round.on_activate(queue, now);
    }

    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize {
        let cur = self.current;
        if self.in_turn && !queues[cur].is_empty() {
            if self.counter > 0 {
                return cur;
            }
            self.round.on_rotate(cur, now);
        }
        self.in_turn = false;
        let n = queues.len();
        for k in 1..=n {
            let q = (cur + k) % n;
            if queues[q].is_empty() {
                self.round.on_skip(q, now);
            } else {
                self.current = q;
                self.in_turn = true;
                self.counter = self.quantum[q].min(i64::MAX as u64 / 2) as i64;
                return q;
            }
        }
        panic!("WRR select called with no backlog");
    }

    fn on_dequeue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        if queue == self.current {
            self.counter -= bytes as i64;
        }
        self.round.on_sent(queue, now, bytes);
        if queues[queue].is_empty() && self.busy[queue] {
            self.round.on_empty(queue, now, bytes);
            self.busy[queue] = false;
            self.n_busy -= 1;
            if queue == self.current {
                self.in_turn = false;
            }
            if self.n_busy == 0 {
                self.round.on_idle_start(now);
            }
        }
    }

    fn quantum(&self, queue: usize) -> Option<u32> {
        Some(self.quantum[queue].min(u32::MAX as u64) as u32)
    }

    fn round_time_ns(&self) -> Option<f64> {
        self.round.get()
    }

    fn track_round_time(&mut self, on: bool) {
        self.round.set_enabled(on);
    }

    fn configure_round_time(&mut self, p: &MqEcnParams) {
        self.round.configure(p);
    }

    fn share(&self, queue: usize, queues: &[QueueOcc]) -> f64 {
        weighted_share(&self.weights, queue, queues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{tx_time_ns, ByteSize};
    use std::collections::VecDeque;

    const RATE: u64 = 10_000_000_000;

    struct Bench {
        fifos: Vec<VecDeque<u32>>,
        occ: Vec<QueueOcc>,
    }

    impl Bench {
        fn new(n: usize) -> Self {
            Bench { fifos: vec![VecDeque::new(); n], occ: vec![QueueOcc::default(); n] }
        }
        fn push(&mut self, s: &mut Wrr, now: Nanos, q: usize, bytes: u32) {
            self.fifos[q].push_back(bytes);
            let o = &mut self.occ[q];
            if o.pkts == 0 {
                o.head_bytes = bytes;
            }
            o.pkts += 1;
            o.bytes += bytes as u64;
            s.on_enqueue(now, q, bytes, &self.occ);
        }
        fn pop(&mut self, s: &mut Wrr, now: Nanos) -> (usize, u32) {
            let q = s.select(now, &self.occ);
            let bytes = self.fifos[q].pop_front().expect("scheduler chose an empty queue");
            let o = &mut self.occ[q];
            o.pkts -= 1;
            o.bytes -= bytes as u64;
            o.head_bytes = self.fifos[q].front().copied().unwrap_or(0);
            s.on_dequeue(now, q, bytes, &self.occ);
            (q, bytes)
        }
    }

    fn cfg(quantum: u64) -> SchedulerConfig {
        SchedulerConfig { quantum: ByteSize(quantum), ..Default::default() }
    }

    #[test]
    fn positive_counter_rule_and_no_carry_over() {
        // quantum 2000: q0 sends 1500 (500 left, positive) then 1500 (-1000): 2 packets;
        // next turn starts again at 2000, the -1000 is forgotten.
        let mut s = Wrr::new(&cfg(2000), &[1, 1], RATE);
        let mut b = Bench::new(2);
        for _ in 0..6 {
            b.push(&mut s, 0, 0, 1500);
            b.push(&mut s, 0, 1, 1000);
        }
        let order: Vec<usize> = (0..12).map(|t| b.pop(&mut s, t).0).collect();
        assert_eq!(order, vec![0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1]);
    }

    #[test]
    fn pointer_skips_empty_queues_in_index_order() {
        let mut s = Wrr::new(&cfg(1500), &[1, 1, 1], RATE);
        let mut b = Bench::new(3);
        b.push(&mut s, 0, 2, 1500);
        b.push(&mut s, 0, 2, 1500);
        b.push(&mut s, 0, 0, 1500);
        assert_eq!(b.pop(&mut s, 0).0, 0);
        assert_eq!(b.pop(&mut s, 1).0, 2);
        b.push(&mut s, 2, 1, 1500);
        // Pointer at 2 (turn over): next is 0 (empty), then 1.
        assert_eq!(b.pop(&mut s, 2).0, 1);
        assert_eq!(b.pop(&mut s, 3).0, 2);
    }

    #[test]
    fn quantum_smaller_than_packet_still_progresses() {
        let mut s = Wrr::new(&cfg(100), &[1, 3], RATE);
        let mut b = Bench::new(2);
        for _ in 0..4 {
            b.push(&mut s, 0, 0, 1500);
            b.push(&mut s, 0, 1, 1500);
        }
        let order: Vec<usize> = (0..8).map(|t| b.pop(&mut s, t).0).collect();
        assert_eq!(order, vec![0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(s.quantum(1), Some(300));
    }

    #[test]
    fn round_time_with_saturated_queues() {
        // Weights 2:1, quantum 1500, 1500 B packets at 10G: a round is 3 packets = 3600 ns.
        let mut s = Wrr::new(&cfg(1500), &[2, 1], RATE);
        let mut b = Bench::new(2);
        for q in 0..2 {
            for _ in 0..4 {
                b.push(&mut s, 0, q, 1500);
            }
        }
        let mut now = 0;
        for _ in 0..200 {
            let (q, bytes) = b.pop(&mut s, now);
            b.push(&mut s, now, q, 1500);
            now += tx_time_ns(bytes as u64, RATE);
        }
        let t = s.round_time_ns().unwrap();
        assert!((t - 3600.0).abs() < 1.0, "{t}");
    }
}
