//! Where a port keeps its packets and books, laid out for the per-packet path
//! (benches/DESIGN.md §5): each queue's FIFO, limit and hot counters in one two-cache-line
//! [`Lane`]; the port's own first cache line ([`Books`]) with what enqueue and dequeue read
//! before they reach a queue; what a packet touches only on a mark, a drop or a pause apart
//! ([`Cold`]). Tests pin both layouts.
//!
//! No allocation per packet: each FIFO is a ring buffer that grows to its high-water mark
//! once and is reused.

use super::{Port, PortPacket};
use crate::buffer::DynamicBuffer;
use crate::marking::{Hooks, NonEctPolicy, Reason};
use crate::sched::QueueOcc;
use crate::units::Nanos;
use std::collections::VecDeque;

/// A queued packet and when it joined its queue.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry<P> {
    pub pkt: P,
    pub enq_ns: Nanos,
}

/// Slots a queue's FIFO is built with: the ring grows past them on demand, but never
/// reallocates while a queue holds fewer packets (a DCTCP queue near its threshold).
pub(super) const FIFO_SLOTS: usize = 64;

/// One queue's own state: its FIFO, limit and the counters every enqueue or dequeue of it
/// updates, in two cache lines (at fabric scale the port state is out of L1 at every
/// packet, so each separate line costs a miss; these fields used to sit in five arrays).
/// The first line holds what both directions touch, the second the FIFO and what only a
/// dequeue adds. The per-reason counters, touched only on a mark or a drop, live apart.
#[repr(C, align(64))]
#[derive(Clone)]
pub(super) struct Lane<P> {
    /// When `byte_ns` was last brought up to date.
    pub last_change_ns: Nanos,
    /// Per-queue buffer limit (`u64::MAX` = none).
    pub limit: u64,
    pub byte_ns: u128,
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    pub max_bytes: u64,
    pub sojourn_max_ns: Nanos,
    pub fifo: VecDeque<Entry<P>>,
    /// Sum of sojourn times (ns); u64 holds 584 years of summed sojourn, and saturates
    /// rather than wraps beyond.
    pub sojourn_sum_ns: u64,
    pub deq_pkts: u64,
    pub deq_bytes: u64,
    pub deq_payload_bytes: u64,
}

impl<P> Lane<P> {
    /// An empty queue of `limit` bytes.
    pub fn new(limit: u64) -> Self {
        Lane {
            last_change_ns: 0,
            limit,
            byte_ns: 0,
            enq_pkts: 0,
            enq_bytes: 0,
            max_bytes: 0,
            sojourn_max_ns: 0,
            fifo: VecDeque::with_capacity(FIFO_SLOTS),
            sojourn_sum_ns: 0,
            deq_pkts: 0,
            deq_bytes: 0,
            deq_payload_bytes: 0,
        }
    }
}

/// The port's own books: its first cache line and the dequeue path's port-wide fields,
/// which open the second line before the scheduler.
#[repr(C)]
#[derive(Clone)]
pub(super) struct Books<P> {
    // ---- first cache line ----
    pub port_bytes: u64,
    /// The port's buffer under the static rule; 0 under the dynamic one, whose own limits
    /// then take over where the static rule refuses (`admission.rs`): the static path pays
    /// nothing for the dynamic rule's existence.
    pub buffer_bytes: u64,
    /// Packets in all queues: emptiness is decided on packets, not bytes, so that a packet
    /// reported as 0 bytes still leaves.
    pub port_pkts: u64,
    /// What the scheduler sees of each queue (a dense array it scans).
    pub occ: Box<[QueueOcc]>,
    pub lanes: Box<[Lane<P>]>,
    /// The scheme's hooks ([`crate::marking::MarkingScheme::hooks`]): the others are skipped.
    pub hooks: Hooks,
    /// `dscp_map` is the default `min(dscp, queues - 1)`: classify without reading it.
    pub default_dscp_map: bool,
    pub needs_oracle: bool,
    pub needs_round: bool,
    /// The buffer is the dynamic policy's (`Cold::dynamic`), read here, in the line every
    /// admission reads, so that the static rule's path tests one byte it has at hand.
    pub dynamic_buffer: bool,
    // ---- from the second line on: the dequeue path's port-wide fields, then the scheduler ----
    pub total_drops: u64,
    pub link_rate_bps: u64,
}

/// What a packet touches only on a mark, a drop or a non-default DSCP map.
#[derive(Clone)]
pub(super) struct Cold {
    pub non_ect: NonEctPolicy,
    pub reasons: Box<[ReasonCounts]>,
    pub dscp_map: [u8; 64],
    /// Paused queues, one bit each ([`Port::set_paused`]).
    pub paused: u64,
    /// Per queue: when its current pause began, its paused time so far, its pauses.
    pub pause_books: Box<[PauseBooks]>,
    /// Per queue: since when it holds packets, its backlogged time before that. Written only
    /// when a queue fills from empty or empties, branches the hot path takes anyway.
    pub busy_books: Box<[BusyBooks]>,
    /// The dynamic buffer's parameters and books (`switch.buffer_policy = "dynamic"`);
    /// None under the static rule.
    pub dynamic: Option<Box<DynamicBuffer>>,
}

/// Per-reason counters of one queue, and what it admitted but dropped at dequeue.
#[derive(Clone, Debug, Default)]
pub(super) struct ReasonCounts {
    pub marks: [u64; Reason::COUNT],
    pub drops: [u64; Reason::COUNT],
    pub unmarkable: [u64; Reason::COUNT],
    /// Packets and bytes admitted but dropped at dequeue (CoDel, a dequeue-hook drop of a
    /// non-ECT packet), for the conservation check of [`Port::check_invariants`].
    pub deq_dropped: (u64, u64),
}

/// One queue's backlogged time ([`super::QueueStats::busy_ns`]).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct BusyBooks {
    pub since: Nanos,
    pub busy_ns: u64,
}

/// One queue's pauses (PFC).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PauseBooks {
    pub since: Nanos,
    pub paused_ns: u64,
    pub pauses: u64,
}

impl<P: PortPacket> Port<P> {
    /// The bytes a port of `queues` queues takes when built, before it holds a packet: for
    /// the memory estimate that refuses a fabric too large to build
    /// (`ecnlab_sim::config::Scenario::memory_estimate`). Schedulers and schemes with
    /// per-queue state add more.
    pub fn built_bytes(queues: usize) -> u64 {
        use std::mem::size_of;
        let per_queue = size_of::<Lane<P>>()
            + FIFO_SLOTS * size_of::<Entry<P>>()
            + size_of::<QueueOcc>()
            + size_of::<ReasonCounts>()
            + size_of::<PauseBooks>()
            + size_of::<BusyBooks>();
        (size_of::<Port<P>>() + queues * per_queue) as u64
    }
}

impl<P> Books<P> {
    /// Bring one queue's time integral up to `now` (before its length changes).
    #[inline(always)]
    pub fn advance_queue(&mut self, q: usize, now: Nanos) {
        let lane = &mut self.lanes[q];
        let dt = now.saturating_sub(lane.last_change_ns);
        if dt > 0 {
            lane.byte_ns += self.occ[q].bytes as u128 * dt as u128;
            lane.last_change_ns = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::TestPkt;
    use super::*;

    #[test]
    fn a_queue_state_fits_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Lane<TestPkt>>(), 128);
        assert_eq!(std::mem::offset_of!(Lane<TestPkt>, fifo), 64, "the FIFO opens the second line");
    }

    #[test]
    fn a_port_header_fits_one_cache_line() {
        assert_eq!(std::mem::align_of::<Port<TestPkt>>(), 64);
        for end in [
            std::mem::offset_of!(Port<TestPkt>, b.needs_round) + 1,
            std::mem::offset_of!(Port<TestPkt>, b.dynamic_buffer) + 1,
            std::mem::offset_of!(Port<TestPkt>, b.lanes) + 16,
            std::mem::offset_of!(Port<TestPkt>, b.occ) + 16,
        ] {
            assert!(end <= 64, "a first-line field ends at byte {end}");
        }
        assert_eq!(
            std::mem::offset_of!(Port<TestPkt>, b.total_drops),
            64,
            "the second line opens with the dequeue path's fields"
        );
        assert_eq!(std::mem::offset_of!(Port<TestPkt>, sched), 80, "then the scheduler");
    }
}
