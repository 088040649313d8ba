//! The simulator's events ([`Ev`]) and the event queue: events ordered by (time, insertion
//! number).
//!
//! The insertion number breaks ties between equal-time events in FIFO order, so the order
//! of events, and with it every result, is a function of the scenario and the seed alone
//! (determinism by construction, as in nexosim). Stale timers are not removed: their owner
//! recognises them when they fire (lazy cancellation).
//!
//! # The order of simultaneous events (the tie rule)
//! Events of the same nanosecond run in the order they were scheduled: the one pushed
//! first runs first. This is the rule of ns-3's default simulator (an event's key is its
//! time, then the uid `Simulator::Schedule` gave it) and of ns-2's scheduler. Chosen for
//! two reasons. Ties are frequent (a one-nanosecond clock, equal link rates and delays:
//! two packets of equal size sent at the same time reach a switch in the same nanosecond)
//! and there is no physical order to recover at that resolution, so the rule should be the
//! reference simulators' own: the benchmark then compares ecnlab and ns-3 on one scenario
//! under one rule, not two tie rules (the rule measurably moves small-flow tails:
//! benches/DESIGN.md §2 and HISTORY.md, where a dequeue-first rule raised the 99th percentile of
//! small flows by 25-42 % at the 5 ms RTO cliff). And it costs nothing: a bucket of the
//! wheel is a FIFO. What it means for packets: of two packets reaching a node in the same
//! nanosecond, the one whose arrival was scheduled first (its transmission started first)
//! is handled, and enqueued, first; a dequeue and an enqueue of one port in the same
//! nanosecond go in the order of their events.
//!
//! Actions the simulator performs without an event take the place the event would have
//! had: a port's owed dequeue holds the number its `TxDone` event would have got
//! ([`EventQueue::reserve_seq`], taken when the transmission before it starts), and every
//! enqueue performs the owed dequeues before its own place ([`EventQueue::current_seq`];
//! `crate::wire`). One difference from scheduling every `TxDone`: the events an owed
//! dequeue schedules (its packet's arrival, the next owed dequeue) are numbered when the
//! wire performs it, at the next enqueue into the port or at the arrival of the packet
//! before, not at its own time; it changes results only where such an arrival ties with
//! another at one node (DESIGN.md §2: over 16 seeds no change with |t| >= 1.6). Readers perform
//! owed dequeues only for the port they read and put the link back (`Wire::port_at`), so
//! what is recorded cannot move a number.
//! `tests::simultaneous_arrivals_run_in_the_order_they_were_scheduled` (sim) holds the rule.
//!
//! # Two levels (benches/DESIGN.md §2)
//! Almost every event of a packet network falls within one link's transmission time plus
//! its propagation delay of `now`: a transmission's end and a packet's arrival. Those go to
//! a *timing wheel* of one-nanosecond buckets covering `[now, now + horizon)`; every bucket
//! holds a single instant, so a FIFO per bucket gives the exact (time, insertion) order with
//! no comparison at all. A bucket is a circular singly-linked list of nodes in a slab (one
//! `u32` per bucket, its tail), so pushing onto the wheel and popping from it are O(1); a
//! two-level occupancy bitmap finds the next non-empty bucket by scanning at most one word
//! and then the summary words (at most 16, as the wheel is capped at 2^16 buckets). Events
//! at or beyond the horizon (timers, flow arrivals, samples), and any before `now`, wait in
//! a 4-ary min-heap keyed by (time << 64 | insertion number), O(log n), as the whole queue
//! did before: its pop was ~190 instructions and the largest single item of a packet-hop.
//!
//! Equal times across the two levels: an event of time t goes to the wheel only if
//! `now <= t < now + horizon` when it is pushed, and to the heap otherwise; `now` (the
//! largest time popped so far) never decreases, so every heap event of time t was pushed
//! before every wheel event of time t. Popping the heap first on a tie therefore keeps the
//! insertion order exactly (the property test checks it against a sorted model).

use crate::packet::Packet;
use ecnlab_core::Nanos;

// ---- the simulator's events ----
//
// The vocabulary the event loop (`crate::sim`), the wire (`crate::wire`) and the hosts
// (`crate::hosts`) schedule in: here, below all three, so that none imports another for it.

/// What the event loop schedules.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    TxDone(u32),
    /// A packet reaches the far end (a node) of the link it was sent on. The packet rides
    /// in the event itself: a link keeps no queue of packets in propagation, and an
    /// arrival reads nothing of the link it crossed (one cache line less per packet-hop).
    Arrive(u32, Packet),
    /// As `Arrive`, for a packet whose link had more packets waiting when it started: the
    /// link (its index here; the node is the link's far end) is owed its next dequeue,
    /// at the end of this packet's transmission, which is before this arrival. See
    /// [`crate::wire::Wire::catch_up`].
    ArriveResume(u32, Packet),
    /// A connection endpoint's deadline (RTO, delayed ACK, DCQCN timers).
    Timer(u32, End),
    /// A listed flow (`[[flows]]`) starts.
    FlowStart(u32),
    /// A listed long-lived flow's application stops; its connection is torn down.
    FlowStop(u32),
    AppTick(u32),
    /// A PFC frame reaches the sender of a link: (link, priority, PAUSE or RESUME).
    Pfc(u32, u8, bool),
    /// A data packet of a connection left (or was dropped at) its sender's NIC: DCQCN's
    /// NIC arbiter hands the NIC that QP's next packet.
    NicSent(u32),
    /// The next generated flow (`[[traffic]]`) arrives; at most one such event is pending.
    NextArrival,
    ProbeSend(u32),
    Sample,
    Warmup,
}

/// The two ends of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Sender = 0,
    Receiver = 1,
}

// ---- the event queue ----

/// Arity of the far heap: a 4-ary heap is shallower than a binary one and its children
/// share a cache line.
const D: usize = 4;
/// No node (end of the free list, empty bucket).
const NIL: u32 = u32::MAX;
/// Wheel sizes (buckets of 1 ns): from one bitmap word to 2^16 buckets (65 us: 256 KB of
/// bucket tails, 16 summary words to scan at most). Longer link delays send their arrivals
/// to the heap, which stays correct, only slower.
const MIN_WHEEL_BITS: u32 = 6;
const MAX_WHEEL_BITS: u32 = 16;

#[derive(Clone, Copy, Debug)]
struct Item<E> {
    /// (time << 64) | insertion number: one integer comparison orders by time, then FIFO.
    key: u128,
    ev: E,
}

/// A wheel node: the event and the next node of its bucket's circular list (or of the
/// free list). One cache line each: the simulator's packet arrivals carry their packet
/// (a node of 56 bytes would straddle two lines most of the time).
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Node<E> {
    ev: E,
    next: u32,
    /// Insertion number ([`EventQueue::current_seq`]).
    seq: u64,
}

pub struct EventQueue<E> {
    /// The largest time popped so far: wheel events lie in `[now, now + wheel size)`.
    now: Nanos,
    /// Per bucket (index = time & mask): the tail node of its circular list, or NIL.
    tail: Vec<u32>,
    mask: u64,
    /// Bit b of `bits[w]`: bucket 64 w + b is non-empty; bit i of `summary[s]`: `bits[64 s + i]` != 0.
    bits: Vec<u64>,
    summary: Vec<u64>,
    nodes: Vec<Node<E>>,
    free: u32,
    wheel_len: usize,
    far: Vec<Item<E>>,
    seq: u64,
    popped: u64,
    /// Insertion number of the event popped last.
    current_seq: u64,
}

impl<E: Copy> EventQueue<E> {
    /// A queue whose wheel covers `horizon_ns` rounded up to a power of two, within 64 ns to
    /// 65.5 us: pass the longest delay at which events are usually scheduled (a link's delay
    /// plus a packet's transmission time). Later events still work, through the heap.
    pub fn new(horizon_ns: Nanos) -> Self {
        let pow2 = horizon_ns.max(1).checked_next_power_of_two().unwrap_or(1 << 63);
        let bits = pow2.trailing_zeros().clamp(MIN_WHEEL_BITS, MAX_WHEEL_BITS);
        let size = 1usize << bits;
        let words = size / 64;
        EventQueue {
            now: 0,
            tail: vec![NIL; size],
            mask: size as u64 - 1,
            bits: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
            nodes: Vec::with_capacity(1024),
            free: NIL,
            wheel_len: 0,
            far: Vec::with_capacity(1024),
            seq: 0,
            popped: 0,
            current_seq: 0,
        }
    }

    /// Number of one-nanosecond buckets of the wheel.
    pub fn horizon_ns(&self) -> Nanos {
        self.mask + 1
    }

    #[inline]
    pub fn push(&mut self, time: Nanos, ev: E) {
        let seq = self.seq;
        self.seq += 1;
        if time >= self.now && time - self.now <= self.mask {
            self.push_wheel(time, seq, ev);
        } else {
            // Beyond the horizon (or, never in the simulator, before `now`).
            self.push_far(((time as u128) << 64) | seq as u128, ev);
        }
    }

    #[inline]
    fn push_wheel(&mut self, time: Nanos, seq: u64, ev: E) {
        let n = if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = Node { ev, next: n, seq };
            n
        } else {
            let n = self.nodes.len() as u32;
            assert!(n != NIL, "more than 4 G pending events");
            self.nodes.push(Node { ev, next: n, seq });
            n
        };
        let b = (time & self.mask) as usize;
        let t = self.tail[b];
        if t == NIL {
            // First event of the bucket: a one-node circle (`next` is itself).
            let w = b >> 6;
            if self.bits[w] == 0 {
                self.summary[w >> 6] |= 1 << (w & 63);
            }
            self.bits[w] |= 1 << (b & 63);
        } else {
            // Append after the tail: the new node points at the head.
            self.nodes[n as usize].next = self.nodes[t as usize].next;
            self.nodes[t as usize].next = n;
        }
        self.tail[b] = n;
        self.wheel_len += 1;
    }

    #[cold]
    #[inline(never)]
    fn push_far(&mut self, key: u128, ev: E) {
        // Sift up: move parents down until the new item's slot is found.
        let mut i = self.far.len();
        self.far.push(Item { key, ev });
        while i > 0 {
            let parent = (i - 1) / D;
            if self.far[parent].key <= key {
                break;
            }
            self.far[i] = self.far[parent];
            i = parent;
        }
        self.far[i] = Item { key, ev };
    }

    /// The earliest non-empty bucket at or after `now` in wheel order, and its time.
    #[inline]
    fn wheel_min(&self) -> Option<(usize, Nanos)> {
        if self.wheel_len == 0 {
            return None;
        }
        let start = (self.now & self.mask) as usize;
        let b = self.find_from(start).or_else(|| self.find_from(0)).expect("wheel_len > 0");
        let offset = (b as u64).wrapping_sub(self.now) & self.mask;
        Some((b, self.now + offset))
    }

    /// First non-empty bucket in `[from, size)`.
    #[inline]
    fn find_from(&self, from: usize) -> Option<usize> {
        let w = from >> 6;
        let m = self.bits[w] & (!0u64 << (from & 63));
        if m != 0 {
            return Some((w << 6) | m.trailing_zeros() as usize);
        }
        let w = w + 1;
        if w == self.bits.len() {
            return None;
        }
        let mut s = w >> 6;
        let mut sm = self.summary[s] & (!0u64 << (w & 63));
        loop {
            if sm != 0 {
                let word = (s << 6) | sm.trailing_zeros() as usize;
                return Some((word << 6) | self.bits[word].trailing_zeros() as usize);
            }
            s += 1;
            if s == self.summary.len() {
                return None;
            }
            sm = self.summary[s];
        }
    }

    /// The earliest event: its time, and its wheel bucket (None: the heap's top). On equal
    /// times the heap's event is the older one (module docs).
    #[inline]
    fn next(&self) -> Option<(Nanos, Option<usize>)> {
        let wheel = self.wheel_min();
        let far_time = self.far.first().map(|i| (i.key >> 64) as Nanos);
        match (wheel, far_time) {
            (None, None) => None,
            (Some((b, tw)), Some(tf)) if tw < tf => Some((tw, Some(b))),
            (Some((b, tw)), None) => Some((tw, Some(b))),
            (_, Some(tf)) => Some((tf, None)),
        }
    }

    /// Pop the earliest event if its time is at most `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        let (time, bucket) = self.next().filter(|&(t, _)| t <= until)?;
        let ev = match bucket {
            Some(b) => self.pop_bucket(b),
            None => self.pop_far(),
        };
        self.now = self.now.max(time);
        self.popped += 1;
        Some((time, ev))
    }

    /// Pop the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.pop_until(Nanos::MAX)
    }

    #[inline]
    fn pop_bucket(&mut self, b: usize) -> E {
        let t = self.tail[b];
        let h = self.nodes[t as usize].next;
        if h == t {
            self.tail[b] = NIL;
            let w = b >> 6;
            self.bits[w] &= !(1 << (b & 63));
            if self.bits[w] == 0 {
                self.summary[w >> 6] &= !(1 << (w & 63));
            }
        } else {
            self.nodes[t as usize].next = self.nodes[h as usize].next;
        }
        let ev = self.nodes[h as usize].ev;
        self.current_seq = self.nodes[h as usize].seq;
        self.nodes[h as usize].next = self.free;
        self.free = h;
        self.wheel_len -= 1;
        ev
    }

    #[inline]
    fn pop_far(&mut self) -> E {
        let top = self.far[0];
        self.current_seq = top.key as u64;
        let last = self.far.pop().expect("non-empty");
        let n = self.far.len();
        if n > 0 {
            // Sift the last item down from the root.
            let mut i = 0;
            loop {
                let first = i * D + 1;
                if first >= n {
                    break;
                }
                let end = (first + D).min(n);
                let mut m = first;
                for c in first + 1..end {
                    if self.far[c].key < self.far[m].key {
                        m = c;
                    }
                }
                if self.far[m].key >= last.key {
                    break;
                }
                self.far[i] = self.far[m];
                i = m;
            }
            self.far[i] = last;
        }
        top.ev
    }

    /// Drop every pending event, keeping the memory (a scratch queue reused cold: popping
    /// would add a caller to the pop that the event loop inlines).
    pub fn clear(&mut self) {
        self.tail.fill(NIL);
        self.bits.fill(0);
        self.summary.fill(0);
        self.nodes.clear();
        self.free = NIL;
        self.wheel_len = 0;
        self.far.clear();
    }

    /// Visit every pending event, in no particular order (end-of-run checks).
    pub fn for_each_pending(&self, mut f: impl FnMut(&E)) {
        for &t in self.tail.iter().filter(|&&t| t != NIL) {
            let mut n = t;
            loop {
                n = self.nodes[n as usize].next;
                f(&self.nodes[n as usize].ev);
                if n == t {
                    break;
                }
            }
        }
        for item in &self.far {
            f(&item.ev);
        }
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.next().map(|(t, _)| t)
    }
    /// The insertion number of the event popped last: with its time, its place in the
    /// order of events (0 before the first pop).
    pub fn current_seq(&self) -> u64 {
        self.current_seq
    }

    /// Take an insertion number for an event that is not pushed: a simulator that
    /// performs an action later than its time, in place of an event, can order it against
    /// the events of the same time as that event would have been ordered.
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Events executed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.wheel_len + self.far.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_cleared_queue_is_empty_and_works_again() {
        let mut q = EventQueue::new(64);
        for t in [3, 3, 70, 1_000] {
            q.push(t, t);
        }
        q.pop();
        q.clear();
        assert_eq!(q.pop(), None);
        q.push(5, 1);
        q.push(5, 2);
        q.push(500, 3);
        assert_eq!((q.pop(), q.pop(), q.pop(), q.pop()), (Some((5, 1)), Some((5, 2)), Some((500, 3)), None));
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new(1000);
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn far_events_come_back_in_order_with_wheel_events_at_the_same_time() {
        let mut q = EventQueue::new(64);
        assert_eq!(q.horizon_ns(), 64);
        q.push(1_000, "far");
        q.push(10, "near");
        assert_eq!(q.pop(), Some((10, "near")));
        // Still beyond the horizon from now = 10: goes to the heap too.
        q.push(1_000, "far2");
        q.push(990, "a");
        assert_eq!(q.pop(), Some((990, "a")));
        // Now within the horizon: a wheel event at the same time as two heap events.
        q.push(1_000, "wheel");
        assert_eq!(q.peek_time(), Some(1_000));
        assert_eq!(q.pop_until(999), None);
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, vec![(1_000, "far"), (1_000, "far2"), (1_000, "wheel")]);
        assert!(q.is_empty());
        assert_eq!(q.popped(), 5);
    }

    #[test]
    fn wraps_around_the_wheel_many_times() {
        let mut q = EventQueue::new(64);
        let mut now = 0;
        q.push(0, 0u64);
        for i in 1..10_000u64 {
            let (t, e) = q.pop().unwrap();
            assert_eq!((t, e), (now, i - 1));
            now = t + 1 + (i * 37) % 63;
            q.push(now, i);
        }
    }

    /// One operation of the model test: push at `now + delay` or `now - delay`, or pop.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        PushPast(u64),
        Pop,
        PopUntil(u64),
        PopUntilPast(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u64..80).prop_map(Op::Push),          // within a 64-ns wheel, or just beyond
            1 => (0u64..5_000).prop_map(Op::Push),       // far for small wheels
            2 => (0u64..140_000).prop_map(Op::Push),     // across summary words, past 2^16
            1 => Just(0u64).prop_map(Op::Push),          // at now: same-time ties
            1 => (1u64..100).prop_map(Op::PushPast),     // before now (never in the simulator)
            3 => Just(Op::Pop),
            1 => (0u64..100).prop_map(Op::PopUntil),
            1 => (1u64..100).prop_map(Op::PopUntilPast),
        ]
    }

    proptest! {
        /// Against a sorted model: every pop returns the smallest (time, insertion) pending.
        #[test]
        fn matches_a_sorted_model(
            ops in proptest::collection::vec(op(), 0..400),
            horizon in prop_oneof![1u64..300, 4_000u64..70_000],
            start in prop_oneof![Just(0u64), Just(1_000_000_000_000_000u64), Just(u64::MAX - 1_000_000)],
        ) {
            let mut q = EventQueue::new(horizon);
            let mut model: std::collections::BTreeSet<(u64, u64)> = Default::default();
            let (mut now, mut n) = (start, 0u64);
            q.push(start, n);
            model.insert((start, n));
            n += 1;
            for o in ops {
                match o {
                    Op::Push(d) | Op::PushPast(d) => {
                        let t = if let Op::Push(_) = o { now.saturating_add(d) } else { now.saturating_sub(d) };
                        q.push(t, n);
                        model.insert((t, n));
                        n += 1;
                    }
                    Op::Pop | Op::PopUntil(_) | Op::PopUntilPast(_) => {
                        let until = match o {
                            Op::PopUntil(d) => now.saturating_add(d),
                            Op::PopUntilPast(d) => now.saturating_sub(d),
                            _ => u64::MAX,
                        };
                        prop_assert_eq!(q.peek_time(), model.first().map(|&(t, _)| t));
                        let want = model.first().copied().filter(|&(t, _)| t <= until);
                        let got = q.pop_until(until);
                        prop_assert_eq!(got, want);
                        if let Some(w) = want {
                            model.remove(&w);
                            now = w.0;
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                let mut pending = Vec::new();
                q.for_each_pending(|&e| pending.push(e));
                pending.sort_unstable();
                let mut want: Vec<u64> = model.iter().map(|&(_, e)| e).collect();
                want.sort_unstable();
                prop_assert_eq!(pending, want);
            }
            while let Some(w) = model.pop_first() {
                prop_assert_eq!(q.pop(), Some(w));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
