//! Deficit weighted round robin (Shreedhar & Varghese, "Efficient fair queuing using deficit
//! round robin", SIGCOMM'95), and MQ-ECN's round-time estimator shared with WRR.
//!
//! # DWRR
//! Queue i has `quantum_i = cfg.quantum x weights[i]` bytes per round. Backlogged queues sit
//! in an active list (a FIFO threaded through the per-queue entries: every queue is in it at
//! most once, so nothing is allocated per packet, and walking it touches only the entries a
//! packet reads anyway). Conventions, as in TCN-NS2 `prio_dwrr.cc`,
//! Linux and ns-3 (REFERENCE-IMPLEMENTATIONS §2.7):
//! - a queue that becomes backlogged is appended to the tail with `deficit = quantum_i`;
//! - the head queue sends while its head packet fits (`head <= deficit`, `deficit -= size`);
//! - when it does not fit, `deficit += quantum_i` and the queue moves to the tail (a
//!   *rotation*); the deficit is carried over;
//! - a queue that empties leaves the list and its deficit is reset to 0.
//!
//! MQ-ECN-NS2 `dwrr.cc` instead starts at `deficit = 0` and adds the quantum when the queue
//! reaches the head; the two give the same long-run shares and differ only in the first
//! round after activation. We follow the majority (TCN-NS2, Linux, ns-3).
//!
//! [`Scheduler::select`] performs the rotations and returns the head queue, whose head packet
//! it then accounts in [`Scheduler::on_dequeue`]. Cost: O(1) per packet when
//! `quantum_i >= ` the largest packet (Shreedhar & Varghese's condition, and the usual
//! configuration: one rotation at most per packet). With a smaller quantum a queue may need
//! several rotations to accumulate enough deficit, `ceil(max_pkt / quantum_i)` per packet.
//!
//! # MQ-ECN round time
//! DWRR and WRR report their round events (a queue starts a round, rotates, empties; the
//! round-robin part goes idle and wakes) to MQ-ECN's round-time estimator,
//! [`crate::marking::mq_ecn::RoundTime`], which owns the samples, the EWMA, the idle decay and
//! their parameters (`[marking.mq_ecn]`).
use super::{QueueOcc, Scheduler, SchedulerConfig};
use crate::marking::mq_ecn::{MqEcnParams, RoundTime};
use crate::units::Nanos;

/// Quantum of each queue in bytes: `base x weight`, saturating (absurd configurations only).
pub(crate) fn quanta(base: u64, weights: &[u32]) -> Vec<u64> {
    weights.iter().map(|&w| base.saturating_mul(w as u64).min(u64::MAX / 4)).collect()
}

/// `weight_i / sum of weights of backlogged queues` (`queue` itself counted as backlogged).
pub(crate) fn weighted_share(weights: &[u32], queue: usize, queues: &[QueueOcc]) -> f64 {
    let total: u64 = weights
        .iter()
        .zip(queues)
        .enumerate()
        .filter(|&(i, (_, occ))| i == queue || !occ.is_empty())
        .map(|(_, (&w, _))| w as u64)
        .sum();
    if total == 0 {
        return 0.0;
    }
    weights[queue] as f64 / total as f64
}

/// The DWRR active list: a FIFO of queue indices linked through [`RrQueue::next`]. A separate
/// ring buffer cost one more cache line per packet at fabric scale (benches/DESIGN.md §7);
/// the links live in the entries the scheduler reads anyway.
#[derive(Clone, Copy, Debug, Default)]
struct ActiveList {
    head: u16,
    tail: u16,
    len: u16,
}

impl ActiveList {
    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    fn front(&self) -> Option<usize> {
        (self.len > 0).then_some(self.head as usize)
    }
    #[inline]
    fn push_back(&mut self, queues: &mut [RrQueue], q: usize) {
        if self.len == 0 {
            self.head = q as u16;
        } else {
            queues[self.tail as usize].next = q as u16;
        }
        self.tail = q as u16;
        self.len += 1;
    }
    #[inline]
    fn pop_front(&mut self, queues: &[RrQueue]) -> Option<usize> {
        let q = self.front()?;
        self.len -= 1;
        if self.len > 0 {
            self.head = queues[q].next;
        }
        Some(q)
    }
    /// Move the head to the tail.
    #[inline]
    fn rotate(&mut self, queues: &mut [RrQueue]) {
        if self.len > 1 {
            let q = self.pop_front(queues).expect("non-empty");
            self.push_back(queues, q);
        }
    }
    /// Remove `q` wherever it is, keeping the others' order (O(len); only used off the
    /// normal path).
    fn remove(&mut self, queues: &mut [RrQueue], q: usize) {
        for _ in 0..self.len {
            let x = self.pop_front(queues).expect("list length");
            if x != q {
                self.push_back(queues, x);
            }
        }
    }
}

/// What DWRR keeps per queue, together: every packet reads or writes all of it.
#[derive(Clone, Copy, Debug, Default)]
struct RrQueue {
    /// quantum_i in bytes.
    quantum: u64,
    /// Deficit counter (bytes the queue may still send this round).
    deficit: u64,
    /// The queue is in the active list.
    in_list: bool,
    /// The next queue in the active list (meaningful while `in_list`, unless last).
    next: u16,
}

/// Deficit weighted round robin with MQ-ECN round-time estimation.
///
/// `repr(C)`, hot fields first: the per-queue entries, the active list and the round-time
/// estimator's on/off flag follow `Sched`'s tag in one cache line.
#[repr(C)]
#[derive(Clone)]
pub struct Dwrr {
    queues: Box<[RrQueue]>,
    active: ActiveList,
    round: RoundTime,
    weights: Vec<u32>,
}

impl Dwrr {
    pub fn new(cfg: &SchedulerConfig, weights: &[u32], link_rate_bps: u64) -> Self {
        let n = weights.len();
        assert!(n <= u16::MAX as usize + 1, "too many queues for DWRR");
        Dwrr {
            weights: weights.to_vec(),
            queues: quanta(cfg.quantum.0, weights)
                .into_iter()
                .map(|quantum| RrQueue { quantum, ..Default::default() })
                .collect(),
            active: ActiveList::default(),
            round: RoundTime::new(&MqEcnParams::default(), n, link_rate_bps),
        }
    }

    /// Current deficit counter of `queue` (bytes).
    pub fn deficit(&self, queue: usize) -> u64 {
        self.queues[queue].deficit
    }
}

impl Scheduler for Dwrr {
    #[inline]
    fn on_enqueue(&mut self, now: Nanos, queue: usize, _bytes: u32, _queues: &[QueueOcc]) {
        if self.queues[queue].in_list {
            return;
        }
        if self.active.is_empty() {
            self.round.on_idle_end(now);
        }
        self.queues[queue].in_list = true;
        self.queues[queue].deficit = self.queues[queue].quantum;
        self.active.push_back(&mut self.queues, queue);
        self.round.on_activate(queue, now);
    }

    #[inline]
    fn select(&mut self, now: Nanos, queues: &[QueueOcc]) -> usize {
        loop {
            let q = self.active.front().expect("DWRR select called with no backlog");
            debug_assert!(!queues[q].is_empty(), "DWRR active list holds empty queue {q}");
            if queues[q].head_bytes as u64 <= self.queues[q].deficit {
                return q;
            }
            self.queues[q].deficit += self.queues[q].quantum;
            self.active.rotate(&mut self.queues);
            self.round.on_rotate(q, now);
        }
    }

    #[inline]
    fn on_dequeue(&mut self, now: Nanos, queue: usize, bytes: u32, queues: &[QueueOcc]) {
        self.queues[queue].deficit = self.queues[queue].deficit.saturating_sub(bytes as u64);
        self.round.on_sent(queue, now, bytes);
        if queues[queue].is_empty() && self.queues[queue].in_list {
            self.round.on_empty(queue, now, bytes);
            self.queues[queue].deficit = 0;
            self.queues[queue].in_list = false;
            if self.active.front() == Some(queue) {
                self.active.pop_front(&self.queues);
            } else {
                self.active.remove(&mut self.queues, queue);
            }
            if self.active.is_empty() {
                self.round.on_idle_start(now);
            }
        }
    }

    fn quantum(&self, queue: usize) -> Option<u32> {
        Some(self.queues[queue].quantum.min(u32::MAX as u64) as u32)
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
    use crate::marking::mq_ecn::RoundTimeVariant;
    use crate::units::{tx_time_ns, ByteSize, Duration};

    const RATE: u64 = 10_000_000_000;

    /// Minimal port stand-in: FIFOs of packet sizes plus the occupancy the scheduler sees.
    struct Bench {
        fifos: Vec<std::collections::VecDeque<u32>>,
        occ: Vec<QueueOcc>,
    }

    impl Bench {
        fn new(n: usize) -> Self {
            Bench { fifos: vec![Default::default(); n], occ: vec![QueueOcc::default(); n] }
        }
        fn push<S: Scheduler>(&mut self, s: &mut S, now: Nanos, q: usize, bytes: u32) {
            self.fifos[q].push_back(bytes);
            let o = &mut self.occ[q];
            if o.pkts == 0 {
                o.head_bytes = bytes;
            }
            o.pkts += 1;
            o.bytes += bytes as u64;
            s.on_enqueue(now, q, bytes, &self.occ);
        }
        fn pop<S: Scheduler>(&mut self, s: &mut S, now: Nanos) -> (usize, u32) {
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

    /// One queue of quantum 1500 B whose estimator takes `est`.
    fn with_estimator(est: MqEcnParams) -> Dwrr {
        let mut s = Dwrr::new(&cfg(1500), &[1], RATE);
        s.configure_round_time(&est);
        s
    }

    #[test]
    fn activation_gives_one_quantum_and_rotation_adds_one() {
        let mut s = Dwrr::new(&cfg(1000), &[1, 1], RATE);
        let mut b = Bench::new(2);
        for _ in 0..3 {
            b.push(&mut s, 0, 0, 600);
        }
        b.push(&mut s, 0, 1, 1500);
        b.push(&mut s, 0, 1, 100);
        assert_eq!(s.deficit(0), 1000);
        // q0: 600 fits (400 left), next 600 does not -> deficit 1400, rotate.
        assert_eq!(b.pop(&mut s, 0), (0, 600));
        assert_eq!(s.deficit(0), 400);
        // q1: 1500 > 1000 -> 2000, rotate; q0: 600 <= 1400.
        assert_eq!(b.pop(&mut s, 1), (0, 600));
        assert_eq!(s.deficit(0), 800);
        assert_eq!(s.deficit(1), 2000);
        assert_eq!(b.pop(&mut s, 2), (0, 600));
        // q0 emptied: deficit reset, left the list.
        assert_eq!(s.deficit(0), 0);
        assert_eq!(b.pop(&mut s, 3), (1, 1500));
        assert_eq!(s.deficit(1), 500);
        assert_eq!(b.pop(&mut s, 4), (1, 100));
        assert_eq!(s.deficit(1), 0);
        assert!(s.active.is_empty());
    }

    #[test]
    fn weights_scale_quanta_and_share() {
        let s = Dwrr::new(&cfg(1500), &[2, 1, 1], RATE);
        assert_eq!(s.quantum(0), Some(3000));
        assert_eq!(s.quantum(2), Some(1500));
        let mut occ = vec![QueueOcc::default(); 3];
        assert_eq!(s.share(1, &occ), 1.0);
        occ[0] = QueueOcc { bytes: 1, pkts: 1, head_bytes: 1 };
        assert!((s.share(1, &occ) - 1.0 / 3.0).abs() < 1e-12);
        occ[2] = occ[0];
        assert!((s.share(0, &occ) - 2.0 / 3.0).abs() < 1e-12); // queue 1 empty: not counted
    }

    #[test]
    fn small_quantum_needs_several_rotations() {
        let mut s = Dwrr::new(&cfg(500), &[1, 1], RATE);
        let mut b = Bench::new(2);
        b.push(&mut s, 0, 0, 1500);
        b.push(&mut s, 0, 1, 1000);
        // q0 500 -> 1000, q1 500 -> 1000, q0 1000 -> 1500, q1 sends? order: q0 rotated first,
        // then q1 (1000 > 500) rotated, then q0 (1500 > 1000) rotated, then q1 fits.
        assert_eq!(b.pop(&mut s, 0), (1, 1000));
        assert_eq!(b.pop(&mut s, 1), (0, 1500));
    }

    #[test]
    fn round_time_sampled_on_rotation() {
        // Two saturated 1500 B queues at 10G, quantum 1500: each queue rotates every
        // 2 x 1200 ns, so the samples are 2400 ns after the first partial round.
        let mut s = Dwrr::new(&cfg(1500), &[1, 1], RATE);
        let mut b = Bench::new(2);
        for q in 0..2 {
            for _ in 0..4 {
                b.push(&mut s, 0, q, 1500);
            }
        }
        assert_eq!(s.round_time_ns(), None);
        let mut now = 0;
        for _ in 0..100 {
            let (q, bytes) = b.pop(&mut s, now);
            b.push(&mut s, now, q, 1500);
            now += tx_time_ns(bytes as u64, RATE);
        }
        let t = s.round_time_ns().unwrap();
        assert!((t - 2400.0).abs() < 1.0, "{t}");
    }

    #[test]
    fn round_time_off_takes_no_samples_and_restarts_fresh() {
        // The same saturated run as above with tracking off: no estimate, same schedule.
        let run = |s: &mut Dwrr, b: &mut Bench, now: &mut Nanos| -> Vec<usize> {
            (0..100)
                .map(|_| {
                    let (q, bytes) = b.pop(s, *now);
                    b.push(s, *now, q, 1500);
                    *now += tx_time_ns(bytes as u64, RATE);
                    q
                })
                .collect()
        };
        let (mut on, mut off) = (Dwrr::new(&cfg(1500), &[1, 1], RATE), Dwrr::new(&cfg(1500), &[1, 1], RATE));
        off.track_round_time(false);
        let (mut b_on, mut b_off) = (Bench::new(2), Bench::new(2));
        for q in 0..2 {
            for _ in 0..4 {
                b_on.push(&mut on, 0, q, 1500);
                b_off.push(&mut off, 0, q, 1500);
            }
        }
        let (mut t_on, mut t_off) = (0, 0);
        assert_eq!(run(&mut on, &mut b_on, &mut t_on), run(&mut off, &mut b_off, &mut t_off));
        assert!(on.round_time_ns().is_some());
        assert_eq!(off.round_time_ns(), None);
        // Turned on mid-run: a fresh estimate; the first (over-long) samples are forgotten.
        off.track_round_time(true);
        assert_eq!(off.round_time_ns(), None);
        run(&mut off, &mut b_off, &mut t_off);
        let t = off.round_time_ns().unwrap();
        assert!((t - 2400.0).abs() < 1.0, "{t}");
    }

    #[test]
    fn idle_decay_per_variant() {
        for (variant, idle, expect) in [
            (RoundTimeVariant::MqEcnNs2, 3_000, 0.75f64.powi(2)), // floor(2.5) = 2 slots
            (RoundTimeVariant::TcnNs2, 3_000, 0.75f64.powf(2.5)),
            (RoundTimeVariant::TcnNs2, 1_000, 1.0), // < 1 slot: no decay
            (RoundTimeVariant::Linux, 3_000, 0.75f64.powi(2)),
            (RoundTimeVariant::Linux, 12_000, 0.75f64.powi(10)),
            (RoundTimeVariant::Linux, 13_200, 0.0), // 11 slots: reset
        ] {
            let mut s = with_estimator(MqEcnParams { round_variant: variant, ..Default::default() });
            let mut b = Bench::new(1);
            b.push(&mut s, 0, 0, 1500);
            b.pop(&mut s, 0); // emptying sample
            let t0 = s.round_time_ns().unwrap();
            assert!(t0 > 0.0);
            b.push(&mut s, idle, 0, 1500);
            let t1 = s.round_time_ns().unwrap_or(0.0);
            assert!((t1 - t0 * expect).abs() < 1e-9 * t0, "{variant:?} {idle}: {t1} vs {}", t0 * expect);
            if expect == 0.0 {
                assert_eq!(s.round_time_ns(), None);
            }
        }
    }

    #[test]
    fn emptying_sample_per_variant() {
        // One queue, one packet: activation at 0, dequeue at 0, tx = 1200 ns.
        for (variant, sample) in [
            (RoundTimeVariant::MqEcnNs2, 1200.0),
            (RoundTimeVariant::TcnNs2, 2400.0),
            (RoundTimeVariant::Linux, 1200.0),
        ] {
            let mut s = with_estimator(MqEcnParams { round_variant: variant, round_beta: 0.5, ..Default::default() });
            let mut b = Bench::new(1);
            b.push(&mut s, 0, 0, 1500);
            b.pop(&mut s, 0);
            assert_eq!(s.round_time_ns(), Some(0.5 * sample), "{variant:?}");
        }
    }

    #[test]
    fn configured_idle_slot_and_zero_slot() {
        let mut s = with_estimator(MqEcnParams { round_idle_slot: Some(Duration(100)), ..Default::default() });
        let mut b = Bench::new(1);
        b.push(&mut s, 0, 0, 1500);
        b.pop(&mut s, 0);
        let t0 = s.round_time_ns().unwrap();
        b.push(&mut s, 300, 0, 1500);
        assert!((s.round_time_ns().unwrap() - t0 * 0.75f64.powi(3)).abs() < 1e-9);
        let mut s = with_estimator(MqEcnParams { round_idle_slot: Some(Duration(0)), ..Default::default() });
        let mut b = Bench::new(1);
        b.push(&mut s, 0, 0, 1500);
        b.pop(&mut s, 0);
        b.push(&mut s, 1, 0, 1500);
        assert_eq!(s.round_time_ns(), Some(0.0));
    }

    #[test]
    fn the_hot_fields_come_first() {
        // With `Sched`'s tag (8 B) and `SpOver::strict` (8 B) before it, at `Port` offset 80
        // (port/storage.rs), everything up to the round-time flag stays within the port's second line.
        use std::mem::offset_of;
        assert_eq!(offset_of!(Dwrr, queues), 0);
        assert!(offset_of!(Dwrr, round) < 128 - 80 - 16, "{}", offset_of!(Dwrr, round));
        assert_eq!(offset_of!(crate::sched::sp::SpOver<Dwrr>, inner), 8);
    }

    #[test]
    fn active_list_rotates_and_removes_in_fifo_order() {
        let mut qs = vec![RrQueue::default(); 4];
        let mut l = ActiveList::default();
        for q in [3, 0, 2] {
            l.push_back(&mut qs, q);
        }
        l.rotate(&mut qs); // 0 2 3
        l.rotate(&mut qs); // 2 3 0
        assert_eq!(l.front(), Some(2));
        l.remove(&mut qs, 3); // 2 0
        l.push_back(&mut qs, 1); // 2 0 1
        l.rotate(&mut qs); // 0 1 2
        assert_eq!(l.pop_front(&qs), Some(0));
        assert_eq!(l.pop_front(&qs), Some(1));
        l.rotate(&mut qs); // a single queue stays
        assert_eq!(l.pop_front(&qs), Some(2));
        assert_eq!(l.pop_front(&qs), None);
        assert!(l.is_empty());
        l.push_back(&mut qs, 3); // an emptied list starts afresh
        assert_eq!(l.front(), Some(3));
    }
}
