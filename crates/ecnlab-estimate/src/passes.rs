//! The estimate's passes over every flow (decomposition's two, combination's one, and
//! `flows.csv`'s rows) on several threads, with the result of one.
//!
//! A pass cuts the flows, in the order it visits them, into chunks ([`CHUNK`]); each chunk
//! is worked on alone (routing its flows, most of a large fabric's time) and its result is
//! merged into the pass's in chunk order, on the calling thread. What a pass computes is
//! therefore the same whatever the number of threads: the chunks do not depend on it, and
//! neither does the order of the merges. A pass whose merge is exact (counts, integer sums,
//! lists concatenated) gives, in addition, what a single loop over the flows gives.

use std::num::NonZeroUsize;

/// Flows in a chunk: enough that a chunk's routing outweighs its merge (a merge of link
/// loads touches every link), few enough that the threads' partial results stay small.
pub const CHUNK: usize = 1 << 18;

/// How a pass is split: chunks of `chunk` items, on up to `threads` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    pub threads: NonZeroUsize,
    pub chunk: NonZeroUsize,
}

impl Split {
    /// Chunks of [`CHUNK`] on `threads` threads.
    pub fn with_threads(threads: NonZeroUsize) -> Split {
        Split { threads, chunk: NonZeroUsize::new(CHUNK).expect("CHUNK > 0") }
    }
}

impl Default for Split {
    /// Chunks of [`CHUNK`] on every core.
    fn default() -> Split {
        Split::with_threads(std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN))
    }
}

/// Cut `items` into chunks, run `work` on each, on several threads as `split` says, and hand
/// each result to `merge` in chunk order (the first chunk's first).
pub fn in_chunks<I, T>(
    items: impl IntoIterator<Item = I>,
    split: Split,
    work: impl Fn(&[I]) -> T + Sync,
    mut merge: impl FnMut(T),
) where
    I: Send + Sync,
    T: Send,
{
    let mut items = items.into_iter();
    let chunk = split.chunk.get();
    loop {
        // A round: one chunk per thread, worked on together, merged in order.
        let round: Vec<Vec<I>> = (0..split.threads.get())
            .map(|_| items.by_ref().take(chunk).collect::<Vec<I>>())
            .take_while(|c| !c.is_empty())
            .collect();
        let Some((first, rest)) = round.split_first() else { return };
        let work = &work;
        let (head, tail) = std::thread::scope(|s| {
            let others: Vec<_> = rest.iter().map(|c| s.spawn(move || work(c))).collect();
            let head = work(first);
            let tail: Vec<T> =
                others.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect();
            (head, tail)
        });
        merge(head);
        tail.into_iter().for_each(&mut merge);
        if round.last().is_none_or(|c| c.len() < chunk) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merges see the chunks in order and every item once, whatever the threads.
    #[test]
    fn chunks_merge_in_order_whatever_the_threads() {
        let n = 3 * 1000 + 17;
        for threads in [1, 2, 3, 8] {
            let split = Split { threads: NonZeroUsize::new(threads).unwrap(), chunk: NonZeroUsize::new(1000).unwrap() };
            let mut seen = Vec::new();
            in_chunks(0..n as u64, split, |c| (c[0], c.len(), c.iter().sum::<u64>()), |r| seen.push(r));
            let firsts: Vec<u64> = seen.iter().map(|r| r.0).collect();
            assert_eq!(firsts, vec![0, 1000, 2000, 3000], "{threads} threads");
            assert_eq!(seen.iter().map(|r| r.1).sum::<usize>(), n);
            assert_eq!(seen.iter().map(|r| r.2).sum::<u64>(), (n as u64 - 1) * n as u64 / 2);
        }
        let mut calls = 0;
        in_chunks(std::iter::empty::<u32>(), Split::default(), |_| (), |_| calls += 1);
        assert_eq!(calls, 0, "no items, no chunk");
    }
}
