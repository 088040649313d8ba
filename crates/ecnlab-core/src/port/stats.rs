//! A port's statistics and the invariants its books keep.
//!
//! Per queue ([`QueueStats`]): packets and bytes admitted and sent, payload sent, the time
//! integral of its length, the sojourn sum and maximum, the peak length, marks, drops and
//! unmarkable packets by reason, paused and backlogged time. The hot counters live in the
//! queue's `Lane`, the per-reason ones and the pause and busy books apart (`storage.rs`);
//! [`Port::stats`] assembles the snapshot.
//!
//! The invariants ([`Port::check_invariants`], run after every operation in the simulator's
//! debug builds): admitted = sent + dropped at dequeue + queued, per queue in packets and
//! bytes; what the scheduler sees of a queue is its FIFO; the port's totals are its queues'
//! and fit the buffer; the drop total is the sum of the drops by reason.

use super::{Port, PortPacket};
use crate::marking::Reason;
use crate::sched::QueueOcc;
use crate::units::Nanos;
use serde::Serialize;

/// Counters of one queue: a snapshot at one instant ([`Port::stats`] assembles it from the
/// port's per-queue state), or the counts of a window between two snapshots
/// ([`QueueStats::since`], with what a window says in [`crate::measure`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueStats {
    /// Integral of queue bytes over time (byte x ns), for time-averaged queue length.
    pub byte_ns: u128,
    /// Sum of the sojourn times of sent packets (ns).
    pub sojourn_sum_ns: u128,
    /// Packets and bytes admitted to the queue.
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    /// Packets and bytes sent from the queue.
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    /// Payload bytes sent from the queue ([`super::PortPacket::payload_bytes`]): goodput.
    pub deq_payload_bytes: u64,
    /// Longest sojourn time of a sent packet (ns). A peak: it does not subtract
    /// ([`QueueStats::since`] keeps the later snapshot's).
    pub sojourn_max_ns: Nanos,
    /// Largest queue length seen, bytes, since the port's last [`Port::reset_peak`]. A peak,
    /// as `sojourn_max_ns`.
    pub max_bytes: u64,
    /// CE marks set, by reason.
    pub marks: [u64; Reason::COUNT],
    /// Drops (at admission, at enqueue by a scheme, or at dequeue), by reason.
    pub drops: [u64; Reason::COUNT],
    /// Non-ECT packets a scheme would have marked and that passed ([`crate::marking::NonEctPolicy::Pass`]).
    pub unmarkable: [u64; Reason::COUNT],
    /// Time the queue spent paused (PFC), up to the port's clock ([`Port::advance_clock`]).
    pub paused_ns: u64,
    /// Times the queue was paused.
    pub pauses: u64,
    /// Time the queue held at least one packet, up to the port's clock
    /// ([`Port::advance_clock`]): a weighted scheduler owes a queue its share only while it
    /// is backlogged, so this is what its share is judged against.
    pub busy_ns: u64,
}

impl QueueStats {
    pub fn total_marks(&self) -> u64 {
        self.marks.iter().sum()
    }
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

impl<P: PortPacket> Port<P> {
    /// A snapshot of every queue's counters (call [`Port::advance_clock`] first for an
    /// up-to-date `byte_ns`).
    pub fn stats(&self) -> Vec<QueueStats> {
        (0..self.n_queues()).map(|q| self.queue_stats(q)).collect()
    }
    /// A snapshot of queue `q`'s counters.
    pub fn queue_stats(&self, q: usize) -> QueueStats {
        let (l, r) = (&self.b.lanes[q], &self.c.reasons[q]);
        QueueStats {
            byte_ns: l.byte_ns,
            sojourn_sum_ns: l.sojourn_sum_ns as u128,
            enq_pkts: l.enq_pkts,
            enq_bytes: l.enq_bytes,
            deq_pkts: l.deq_pkts,
            deq_bytes: l.deq_bytes,
            deq_payload_bytes: l.deq_payload_bytes,
            sojourn_max_ns: l.sojourn_max_ns,
            max_bytes: l.max_bytes,
            marks: r.marks,
            drops: r.drops,
            unmarkable: r.unmarkable,
            paused_ns: self.c.pause_books[q].paused_ns,
            pauses: self.c.pause_books[q].pauses,
            busy_ns: self.c.busy_books[q].busy_ns,
        }
    }
    /// The bytes this port draws from its pool: all it holds under the static rule, those
    /// beyond its queues' minimums and headroom under the dynamic one ([`crate::buffer`]).
    pub fn pool_bytes(&self) -> u64 {
        self.c.dynamic.as_ref().map_or(self.b.port_bytes, |d| d.shared_used())
    }
    /// Drops of all queues, every reason (a running total).
    #[inline]
    pub fn total_drops(&self) -> u64 {
        self.b.total_drops
    }
    /// Start a new peak measurement (`max_bytes` restarts from the current length).
    pub fn reset_peak(&mut self) {
        for (lane, occ) in self.b.lanes.iter_mut().zip(&self.b.occ) {
            lane.max_bytes = occ.bytes;
        }
    }
    /// Start a new peak measurement from the given lengths (`occ[q].bytes`): those of a copy
    /// of this port brought to the measurement's start, when this one is not there yet.
    pub fn reset_peak_to(&mut self, occ: &[QueueOcc]) {
        for (lane, o) in self.b.lanes.iter_mut().zip(occ) {
            lane.max_bytes = o.bytes;
        }
    }
    /// Bring the time integrals up to `now` (call before reading `byte_ns`).
    pub fn advance_clock(&mut self, now: Nanos) {
        for q in 0..self.b.occ.len() {
            self.b.advance_queue(q, now);
            let books = &mut self.c.busy_books[q];
            if self.b.occ[q].pkts > 0 && now > books.since {
                books.busy_ns += now - books.since;
                books.since = now;
            }
        }
        if self.c.paused != 0 {
            for (q, p) in self.c.pause_books.iter_mut().enumerate() {
                if self.c.paused >> q & 1 == 1 && now > p.since {
                    p.paused_ns += now - p.since;
                    p.since = now;
                }
            }
        }
    }

    /// Check the port's bookkeeping: what the scheduler sees of each queue (`QueueOcc`)
    /// matches its FIFO, no queue exceeds its limit, the port's total matches its queues and
    /// fits the buffer, and the drop total matches the per-reason counters. `full` also walks
    /// every FIFO (O(packets)) and checks per-queue conservation: packets and bytes admitted
    /// = sent + dropped at dequeue + still queued. Without `full` the check is O(queues), cheap
    /// enough to run after every operation in debug builds. Errors name the queue.
    pub fn check_invariants(&self, full: bool) -> Result<(), String> {
        let buffer = self.c.dynamic.as_ref().map_or(self.b.buffer_bytes, |d| d.buffer_bytes());
        let (mut sum, mut pkts) = (0u64, 0u64);
        for (q, (occ, lane)) in self.b.occ.iter().zip(&self.b.lanes).enumerate() {
            let fifo = &lane.fifo;
            if occ.pkts as usize != fifo.len() {
                return Err(format!(
                    "queue {q}: the scheduler sees {} packets, the FIFO holds {}",
                    occ.pkts,
                    fifo.len()
                ));
            }
            let head = fifo.front().map_or(0, |e| e.pkt.wire_bytes());
            if occ.head_bytes != head {
                return Err(format!("queue {q}: head packet of {head} B recorded as {} B", occ.head_bytes));
            }
            if occ.bytes > lane.limit || occ.bytes > buffer {
                return Err(format!("queue {q}: {} B queued, above its limit", occ.bytes));
            }
            sum += occ.bytes;
            pkts += occ.pkts as u64;
            if full {
                let bytes: u64 = fifo.iter().map(|e| e.pkt.wire_bytes() as u64).sum();
                if bytes != occ.bytes {
                    return Err(format!("queue {q}: the FIFO holds {bytes} B, the scheduler sees {} B", occ.bytes));
                }
                let (st, (dp, db)) = (lane, self.c.reasons[q].deq_dropped);
                if st.enq_pkts != st.deq_pkts + dp + fifo.len() as u64 || st.enq_bytes != st.deq_bytes + db + bytes {
                    return Err(format!(
                        "queue {q}: admitted {} pkts / {} B != sent {} / {} + dropped at dequeue {dp} / {db} + queued {} / {bytes}",
                        st.enq_pkts,
                        st.enq_bytes,
                        st.deq_pkts,
                        st.deq_bytes,
                        fifo.len()
                    ));
                }
            }
        }
        if sum != self.b.port_bytes {
            return Err(format!("the port counts {} B, its queues {sum} B", self.b.port_bytes));
        }
        if pkts != self.b.port_pkts {
            return Err(format!("the port counts {} packets, its queues {pkts}", self.b.port_pkts));
        }
        if self.b.port_bytes > buffer {
            return Err(format!("{} B queued in a buffer of {buffer} B", self.b.port_bytes));
        }
        if let Some(d) = &self.c.dynamic {
            d.check(self.b.occ.iter().map(|o| o.bytes))?;
        }
        let by_reason: u64 = self.c.reasons.iter().map(|r| r.drops.iter().sum::<u64>()).sum();
        if by_reason != self.b.total_drops {
            return Err(format!("{} drops in total, {by_reason} by reason", self.b.total_drops));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, port, TestPkt};
    use super::*;
    use crate::buffer::BufferPool;
    use crate::marking::SchemeName;

    #[test]
    fn the_invariant_check_catches_broken_bookkeeping() {
        let mut p = port(2, 10_000, SchemeName::None);
        let mut pool = BufferPool::unlimited();
        for i in 0..4 {
            p.enqueue(0, pkt(i, (i % 2) as u8), &mut pool).unwrap();
        }
        p.dequeue(1, &mut pool).unwrap();
        assert_eq!(p.check_invariants(true), Ok(()));
        let bad = |f: &dyn Fn(&mut Port<TestPkt>)| {
            let mut c = port(2, 10_000, SchemeName::None);
            let mut pool = BufferPool::unlimited();
            for i in 0..4 {
                c.enqueue(0, pkt(i, (i % 2) as u8), &mut pool).unwrap();
            }
            f(&mut c);
            c.check_invariants(true).unwrap_err()
        };
        assert!(bad(&|c| c.b.occ[1].bytes += 1).starts_with("queue 1:"));
        assert!(bad(&|c| c.b.occ[0].pkts -= 1).starts_with("queue 0: the scheduler sees"));
        assert!(bad(&|c| c.b.port_bytes += 1500).starts_with("the port counts"));
        assert_eq!(bad(&|c| c.b.port_pkts += 1), "the port counts 5 packets, its queues 4");
        assert!(bad(&|c| c.b.lanes[0].deq_pkts += 1).starts_with("queue 0: admitted"));
        assert!(bad(&|c| c.b.total_drops += 1).contains("drops in total"));
        assert!(bad(&|c| {
            c.b.buffer_bytes = 2000;
        })
        .contains("above its limit"));
    }

    #[test]
    fn backlogged_time_counts_from_fill_to_empty_and_up_to_the_clock() {
        let mut p = port(2, 1_000_000, SchemeName::None);
        let mut pool = BufferPool::unlimited();
        p.enqueue(1_000, pkt(0, 0), &mut pool).unwrap();
        p.enqueue(1_500, pkt(1, 0), &mut pool).unwrap();
        p.dequeue(2_000, &mut pool);
        p.dequeue(3_000, &mut pool); // queue 0 empty: backlogged 1,000 -> 3,000
        p.enqueue(5_000, pkt(2, 0), &mut pool).unwrap();
        p.advance_clock(6_000); // and 5,000 -> 6,000, still backlogged
        assert_eq!(p.stats()[0].busy_ns, 3_000);
        p.advance_clock(6_500);
        assert_eq!(p.stats()[0].busy_ns, 3_500, "the clock carries an open busy period");
        p.dequeue(7_000, &mut pool);
        p.advance_clock(9_000);
        assert_eq!(p.stats()[0].busy_ns, 4_000, "an empty queue's clock adds nothing");
        assert_eq!(p.stats()[1].busy_ns, 0);
    }

    #[test]
    fn time_average_queue_length() {
        let mut p = port(1, 1_000_000, SchemeName::None);
        let mut pool = BufferPool::unlimited();
        p.enqueue(0, pkt(0, 0), &mut pool).unwrap();
        p.enqueue(0, pkt(1, 0), &mut pool).unwrap();
        p.dequeue(1000, &mut pool); // 3000 B for 1000 ns
        p.dequeue(2000, &mut pool); // 1500 B for 1000 ns
        p.advance_clock(4000);
        assert_eq!(p.stats()[0].byte_ns, 3000 * 1000 + 1500 * 1000);
        assert_eq!(p.stats()[0].max_bytes, 3000);
        assert_eq!(p.stats()[0].sojourn_max_ns, 2000);
    }
}
