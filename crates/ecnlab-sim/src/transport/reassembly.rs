//! A TCP receiver's reassembly, written once for the textbook and `linux` receivers: the
//! next in-order byte (`rcv_nxt`, RFC 9293 §3.3.1) and the out-of-order data held above it
//! (Linux's `out_of_order_queue`, as byte runs without payload).

/// In-order progress and out-of-order runs of one connection's receiver.
#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    /// Next in-order byte expected (= bytes delivered in order).
    rcv_nxt: u64,
    /// Out-of-order data held above `rcv_nxt`: sorted, disjoint, non-adjacent [start, end)
    /// runs. A small Vec reused for the connection's life.
    ooo: Vec<(u64, u64)>,
}

impl Reassembly {
    /// Next in-order byte expected.
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Data is held above a hole.
    #[inline]
    pub fn has_gap(&self) -> bool {
        !self.ooo.is_empty()
    }

    /// The held runs, lowest first.
    pub fn runs(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// In-order data up to `end` arrived (a segment that starts at or below `rcv_nxt`).
    #[inline]
    pub fn advance(&mut self, end: u64) {
        self.rcv_nxt = end;
    }

    /// Adds [start, end) to the out-of-order runs, merging overlapping or adjacent ones;
    /// returns the run that now holds it.
    pub fn insert(&mut self, mut start: u64, mut end: u64) -> (u64, u64) {
        // First run that ends at or after `start` (candidates for merging).
        let i = self.ooo.partition_point(|&(_, e)| e < start);
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= end {
            start = start.min(self.ooo[j].0);
            end = end.max(self.ooo[j].1);
            j += 1;
        }
        if i == j {
            self.ooo.insert(i, (start, end));
        } else {
            self.ooo[i] = (start, end);
            self.ooo.drain(i + 1..j);
        }
        (start, end)
    }

    /// Moves `rcv_nxt` over held data that has become contiguous (`tcp_ofo_queue`).
    pub fn absorb(&mut self) {
        let mut k = 0;
        while k < self.ooo.len() && self.ooo[k].0 <= self.rcv_nxt {
            self.rcv_nxt = self.rcv_nxt.max(self.ooo[k].1);
            k += 1;
        }
        if k > 0 {
            self.ooo.drain(..k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_and_fill_in_order() {
        let mut r = Reassembly::default();
        assert_eq!(r.insert(3000, 4000), (3000, 4000));
        assert_eq!(r.insert(6000, 7000), (6000, 7000));
        // Adjacent to the first run: merged; overlapping both: one run.
        assert_eq!(r.insert(4000, 5000), (3000, 5000));
        assert_eq!(r.runs(), &[(3000, 5000), (6000, 7000)]);
        assert_eq!(r.insert(4500, 6500), (3000, 7000));
        assert_eq!(r.runs(), &[(3000, 7000)]);
        r.advance(2000);
        r.absorb();
        assert_eq!((r.rcv_nxt(), r.has_gap()), (2000, true));
        r.advance(3000);
        r.absorb();
        assert_eq!((r.rcv_nxt(), r.has_gap()), (7000, false));
    }
}
