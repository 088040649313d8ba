//! The event queue: a binary heap ordered by (time, insertion number).
//!
//! The insertion number breaks ties between equal-time events in FIFO order, so the order
//! of events, and with it every result, is a function of the scenario and the seed alone
//! (determinism by construction, as in nexosim). Stale timers are not removed from the heap:
//! their owner recognises them when they fire (lazy cancellation), which keeps pushes and
//! pops O(log n) with no search.

use ecnlab_core::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Item<E> {
    time: Nanos,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Item<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Item<E> {}
impl<E> PartialOrd for Item<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Item<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (then first-inserted).
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Item<E>>,
    seq: u64,
    popped: u64,
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), seq: 0, popped: 0 }
    }
    #[inline]
    pub fn push(&mut self, time: Nanos, ev: E) {
        self.heap.push(Item { time, seq: self.seq, ev });
        self.seq += 1;
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let it = self.heap.pop()?;
        self.popped += 1;
        Some((it.time, it.ev))
    }
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|i| i.time)
    }
    /// Events executed so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    proptest! {
        #[test]
        fn pops_sorted_by_time_then_insertion(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::with_capacity(8);
            for (i, &t) in times.iter().enumerate() { q.push(t, i); }
            let mut prev: Option<(u64, usize)> = None;
            while let Some((t, i)) = q.pop() {
                if let Some((pt, pi)) = prev { prop_assert!(pt < t || (pt == t && pi < i)); }
                prev = Some((t, i));
            }
            prop_assert_eq!(q.popped() as usize, times.len());
        }
    }
}
