//! The event queue: a 4-ary min-heap ordered by (time, insertion number).
//!
//! The insertion number breaks ties between equal-time events in FIFO order, so the order
//! of events, and with it every result, is a function of the scenario and the seed alone
//! (determinism by construction, as in nexosim). Stale timers are not removed from the heap:
//! their owner recognises them when they fire (lazy cancellation), which keeps pushes and
//! pops O(log n) with no search.

use ecnlab_core::Nanos;

/// Arity of the heap: a 4-ary heap is shallower than a binary one and its children share
/// a cache line, which measured faster for the simulator's event mix.
const D: usize = 4;

#[derive(Clone, Copy, Debug)]
struct Item<E> {
    /// (time << 64) | insertion number: one integer comparison orders by time, then FIFO.
    key: u128,
    ev: E,
}

pub struct EventQueue<E> {
    heap: Vec<Item<E>>,
    seq: u64,
    popped: u64,
}

impl<E: Copy> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: Vec::with_capacity(n), seq: 0, popped: 0 }
    }

    #[inline]
    pub fn push(&mut self, time: Nanos, ev: E) {
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        // Sift up: move parents down until the new item's slot is found.
        let mut i = self.heap.len();
        self.heap.push(Item { key, ev });
        while i > 0 {
            let parent = (i - 1) / D;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = Item { key, ev };
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("non-empty");
        let n = self.heap.len();
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
                    if self.heap[c].key < self.heap[m].key {
                        m = c;
                    }
                }
                if self.heap[m].key >= last.key {
                    break;
                }
                self.heap[i] = self.heap[m];
                i = m;
            }
            self.heap[i] = last;
        }
        self.popped += 1;
        Some(((top.key >> 64) as Nanos, top.ev))
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.first().map(|i| (i.key >> 64) as Nanos)
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
