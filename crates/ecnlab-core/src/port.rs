//! A switch egress port: N FIFO queues, a shared buffer, a scheduler and a marking scheme.
//!
//! The port does the bookkeeping so that schemes and schedulers stay small:
//! - classification (DSCP -> queue);
//! - buffer admission, by the rule of [`crate::buffer`] (the port's buffer shared by its
//!   queues, optionally capped per queue and drawn from a [`BufferPool`] shared with other
//!   ports);
//! - the marking scheme's enqueue and dequeue hooks, and what a decision means: CE on an ECT
//!   packet, [`NonEctPolicy`] for a non-ECT one, and counting every mark and drop by reason;
//! - statistics per queue, with the invariants (checked by tests):
//!   `enq_pkts = deq_pkts + dequeue drops + queued`, and every arrival is either enqueued or
//!   counted in `drops` at enqueue;
//! - pausing a queue (PFC, IEEE 802.1Qbb: [`Port::set_paused`]): a paused queue keeps its
//!   packets and takes new ones, but leaves the scheduler as if it had emptied until it is
//!   resumed, when it rejoins as a newly backlogged queue; what decides pauses is
//!   [`crate::pfc`].
//!
//! No allocation per packet: each FIFO is a ring buffer that grows to its high-water mark
//! once and is reused.

use crate::buffer::{self, BufferPool, Fill, MAX_QUEUES};
use crate::marking::{
    BuildCtx, Decision, Hooks, Marking, MarkingConfig, MarkingScheme, NonEctPolicy, PacketView, QueueState, Reason,
};
use crate::pfc::PfcConfig;
use crate::sched::{paused::Paused, sp::Fifo, QueueOcc, Sched, Scheduler, SchedulerConfig};
use crate::units::{ByteSize, Nanos};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What the port needs to know of a packet. Implemented by the simulator's and the
/// emulator's packet types.
pub trait PortPacket {
    /// Bytes on the wire.
    fn wire_bytes(&self) -> u32;
    /// ECT(0), ECT(1) or CE.
    fn is_ect(&self) -> bool;
    /// Set the CE codepoint (only called on ECT packets).
    fn set_ce(&mut self);
    /// DSCP (or priority) used for classification.
    fn dscp(&self) -> u8;
    /// Transport payload bytes, counted per queue for goodput
    /// ([`QueueStats::deq_payload_bytes`]); 0 (the default) for a caller that does not count it.
    #[inline]
    fn payload_bytes(&self) -> u32 {
        0
    }
}

/// The port part of a scenario's `[switch]` table.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PortConfig {
    /// Number of queues (1..=64).
    pub queues: usize,
    /// Buffer of the port, shared by its queues.
    pub buffer: ByteSize,
    /// Optional per-queue limits (empty = none; one entry = the same for every queue).
    pub queue_limits: Vec<ByteSize>,
    /// DSCP -> queue map (index = DSCP). Empty = queue min(DSCP, queues - 1).
    pub dscp_to_queue: Vec<usize>,
    pub scheduler: SchedulerConfig,
    /// A service pool shared by all egress ports of a switch (none = no pool). The port
    /// itself only draws from the pool it is handed; the switch builder creates it.
    pub pool: Option<ByteSize>,
    /// Priority flow control (IEEE 802.1Qbb) for the lossless queues ([`crate::pfc`]).
    pub pfc: PfcConfig,
}

impl Default for PortConfig {
    fn default() -> Self {
        PortConfig {
            queues: 1,
            buffer: ByteSize(1_000_000),
            queue_limits: Vec::new(),
            dscp_to_queue: Vec::new(),
            scheduler: SchedulerConfig::default(),
            pool: None,
            pfc: PfcConfig::default(),
        }
    }
}

/// Counters of one queue (a snapshot: [`Port::stats`] assembles it from the port's
/// per-queue state).
#[derive(Clone, Debug, Default, Serialize)]
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
    /// Payload bytes sent from the queue ([`PortPacket::payload_bytes`]): goodput.
    pub deq_payload_bytes: u64,
    /// Longest sojourn time of a sent packet (ns).
    pub sojourn_max_ns: Nanos,
    /// Largest queue length seen, bytes.
    pub max_bytes: u64,
    /// CE marks set, by reason.
    pub marks: [u64; Reason::COUNT],
    /// Drops (at admission, at enqueue by a scheme, or at dequeue), by reason.
    pub drops: [u64; Reason::COUNT],
    /// Non-ECT packets a scheme would have marked and that passed ([`NonEctPolicy::Pass`]).
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

#[derive(Clone, Copy, Debug)]
struct Entry<P> {
    pkt: P,
    enq_ns: Nanos,
}

/// Slots a queue's FIFO is built with: the ring grows past them on demand, but never
/// reallocates while a queue holds fewer packets (a DCTCP queue near its threshold).
const FIFO_SLOTS: usize = 64;

/// One queue's own state: its FIFO, limit and the counters every enqueue or dequeue of it
/// updates, in two cache lines (at fabric scale the port state is out of L1 at every
/// packet, so each separate line costs a miss; these fields used to sit in five arrays).
/// The first line holds what both directions touch, the second the FIFO and what only a
/// dequeue adds. The per-reason counters, touched only on a mark or a drop, live apart.
#[repr(C, align(64))]
#[derive(Clone)]
struct Lane<P> {
    /// When `byte_ns` was last brought up to date.
    last_change_ns: Nanos,
    /// Per-queue buffer limit (`u64::MAX` = none).
    limit: u64,
    byte_ns: u128,
    enq_pkts: u64,
    enq_bytes: u64,
    max_bytes: u64,
    sojourn_max_ns: Nanos,
    fifo: VecDeque<Entry<P>>,
    /// Sum of sojourn times (ns); u64 holds 584 years of summed sojourn, and saturates
    /// rather than wraps beyond.
    sojourn_sum_ns: u64,
    deq_pkts: u64,
    deq_bytes: u64,
    deq_payload_bytes: u64,
}

/// Per-reason counters of one queue, and what it admitted but dropped at dequeue.
#[derive(Clone, Debug, Default)]
struct ReasonCounts {
    marks: [u64; Reason::COUNT],
    drops: [u64; Reason::COUNT],
    unmarkable: [u64; Reason::COUNT],
    /// Packets and bytes admitted but dropped at dequeue (CoDel, a dequeue-hook drop of a
    /// non-ECT packet), for the conservation check of [`Port::check_invariants`].
    deq_dropped: (u64, u64),
}

/// One egress port. `P` is the caller's packet type.
///
/// Layout: at fabric scale a port is out of L1 at nearly every packet, so each cache line
/// an enqueue or dequeue touches costs a miss (benches/DESIGN.md §5). The first
/// line holds everything both paths read before they reach a queue (occupancy, admission
/// limits, the queue arrays, which hooks run); the scheduler's state starts the second.
/// The books, the scheduler, the scheme and the rarely touched part are separate fields so
/// that the per-packet path can hold each as its own concrete type ([`Parts`]).
#[repr(C, align(64))]
#[derive(Clone)]
pub struct Port<P> {
    b: Books<P>,
    sched: Sched,
    marking: Marking,
    c: Cold,
}

/// The port's own books: its first cache line and the dequeue path's port-wide fields,
/// which open the second line before the scheduler.
#[repr(C)]
#[derive(Clone)]
struct Books<P> {
    // ---- first cache line ----
    port_bytes: u64,
    buffer_bytes: u64,
    /// Packets in all queues: emptiness is decided on packets, not bytes, so that a packet
    /// reported as 0 bytes still leaves.
    port_pkts: u64,
    /// What the scheduler sees of each queue (a dense array it scans).
    occ: Box<[QueueOcc]>,
    lanes: Box<[Lane<P>]>,
    /// The scheme's hooks ([`crate::marking::MarkingScheme::hooks`]): the others are skipped.
    hooks: Hooks,
    /// `dscp_map` is the default `min(dscp, queues - 1)`: classify without reading it.
    default_dscp_map: bool,
    needs_oracle: bool,
    needs_round: bool,
    // ---- from the second line on: the dequeue path's port-wide fields, then the scheduler ----
    total_drops: u64,
    link_rate_bps: u64,
}

/// What a packet touches only on a mark, a drop or a non-default DSCP map.
#[derive(Clone)]
struct Cold {
    non_ect: NonEctPolicy,
    reasons: Box<[ReasonCounts]>,
    dscp_map: [u8; 64],
    /// Paused queues, one bit each ([`Port::set_paused`]).
    paused: u64,
    /// Per queue: when its current pause began, its paused time so far, its pauses.
    pause_books: Box<[PauseBooks]>,
    /// Per queue: since when it holds packets, its backlogged time before that. Written only
    /// when a queue fills from empty or empties, branches the hot path takes anyway.
    busy_books: Box<[BusyBooks]>,
}

/// One queue's backlogged time ([`QueueStats::busy_ns`]).
#[derive(Clone, Copy, Debug, Default)]
struct BusyBooks {
    since: Nanos,
    busy_ns: u64,
}

/// One queue's pauses (PFC).
#[derive(Clone, Copy, Debug, Default)]
struct PauseBooks {
    since: Nanos,
    paused_ns: u64,
    pauses: u64,
}

/// Run `$body` with `$parts`, the port's [`Parts`] with its scheduler and scheme as concrete
/// types: one match per operation picks a path compiled for that pair, instead of a match
/// on the scheduler and on the scheme at each of their calls inside it (benches/DESIGN.md
/// §12). The pairs with a path of their own are the busy ports of the built-in and benchmark
/// scenarios: one strict-priority queue ([`Fifo`]) without a scheme (hosts' NICs), with
/// DCTCP-RED or with TCN, and TCN over SP + DWRR; every other pair runs the same code over
/// the enums (`compiled_paths_decide_as_the_enum_path` checks that they agree). A port with a
/// paused queue holds its scheduler as [`Sched::Paused`], which takes the enum path.
macro_rules! with_parts {
    ($port:expr, $parts:ident => $body:expr) => {{
        let Port { b, sched, marking, c } = $port;
        match (sched, marking) {
            (Sched::Sp(_), Marking::None) if b.occ.len() == 1 => {
                let $parts = Parts { b, c, sched: &mut Fifo, marking: &mut NoMarking };
                $body
            }
            (Sched::Sp(_), Marking::Threshold(m)) if b.occ.len() == 1 => {
                let $parts = Parts { b, c, sched: &mut Fifo, marking: m };
                $body
            }
            (Sched::Sp(_), Marking::Tcn(m)) if b.occ.len() == 1 => {
                let $parts = Parts { b, c, sched: &mut Fifo, marking: m };
                $body
            }
            (Sched::SpDwrr(s), Marking::Tcn(m)) => {
                let $parts = Parts { b, c, sched: s, marking: m };
                $body
            }
            (sched, marking) => {
                let $parts = Parts { b, c, sched, marking };
                $body
            }
        }
    }};
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

    /// Build a port. Errors name the field relative to the scenario (`switch.*`, `marking.*`).
    pub fn new(cfg: &PortConfig, marking: &MarkingConfig, link_rate_bps: u64, seed: u64) -> Result<Self, String> {
        let n = cfg.queues;
        if n == 0 || n > MAX_QUEUES {
            return Err(format!("switch.queues: {n} is not between 1 and {MAX_QUEUES}"));
        }
        if cfg.buffer.0 == 0 {
            return Err("switch.buffer: must be larger than 0".into());
        }
        if link_rate_bps == 0 {
            return Err("link rate must be larger than 0".into());
        }
        let queue_limits = buffer::queue_limits(&cfg.queue_limits, n)?;
        let mut dscp_map = [0u8; 64];
        let default_dscp_map = cfg.dscp_to_queue.iter().enumerate().all(|(d, &q)| q == d.min(n - 1));
        for (d, slot) in dscp_map.iter_mut().enumerate() {
            *slot = match cfg.dscp_to_queue.get(d) {
                Some(&q) if q < n => q as u8,
                Some(&q) => {
                    return Err(format!("switch.dscp_to_queue[{d}]: queue {q} does not exist (the port has {n})"))
                }
                None => d.min(n - 1) as u8,
            };
        }
        let mut sched = Sched::build(&cfg.scheduler, n, link_rate_bps).map_err(|e| format!("switch.scheduler.{e}"))?;
        marking.mq_ecn.check_round().map_err(|e| format!("marking.mq_ecn.{e}"))?;
        sched.configure_round_time(&marking.mq_ecn);
        let ctx = BuildCtx { n_queues: n, link_rate_bps, buffer_bytes: cfg.buffer.0, seed };
        let marking_built = Marking::build(marking, &ctx)?;
        let needs_oracle = marking_built.needs_oracle_share();
        let needs_round = marking_built.needs_round_info();
        let hooks = marking_built.hooks();
        sched.track_round_time(needs_round);
        let lanes = queue_limits
            .into_iter()
            .map(|limit| Lane {
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
            })
            .collect::<Vec<_>>()
            .into_boxed_slice();
        Ok(Port {
            b: Books {
                lanes,
                occ: vec![QueueOcc::default(); n].into_boxed_slice(),
                port_bytes: 0,
                port_pkts: 0,
                buffer_bytes: cfg.buffer.0,
                default_dscp_map,
                link_rate_bps,
                needs_oracle,
                needs_round,
                hooks,
                total_drops: 0,
            },
            sched,
            marking: marking_built,
            c: Cold {
                non_ect: marking.non_ect,
                reasons: vec![ReasonCounts::default(); n].into_boxed_slice(),
                dscp_map,
                paused: 0,
                pause_books: vec![PauseBooks::default(); n].into_boxed_slice(),
                busy_books: vec![BusyBooks::default(); n].into_boxed_slice(),
            },
        })
    }

    /// Replace the marking scheme (e.g. a custom one from a library user).
    pub fn set_marking(&mut self, marking: Marking, non_ect: NonEctPolicy) {
        self.b.needs_oracle = marking.needs_oracle_share();
        self.b.needs_round = marking.needs_round_info();
        self.b.hooks = marking.hooks();
        self.sched.track_round_time(self.b.needs_round);
        self.marking = marking;
        self.c.non_ect = non_ect;
    }

    pub fn n_queues(&self) -> usize {
        self.b.occ.len()
    }
    pub fn link_rate_bps(&self) -> u64 {
        self.b.link_rate_bps
    }
    /// Bytes queued in the whole port.
    pub fn bytes(&self) -> u64 {
        self.b.port_bytes
    }
    pub fn is_empty(&self) -> bool {
        self.b.port_pkts == 0
    }
    pub fn queue_occ(&self) -> &[QueueOcc] {
        &self.b.occ
    }
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
    /// Drops of all queues, every reason (a running total).
    #[inline]
    pub fn total_drops(&self) -> u64 {
        self.b.total_drops
    }
    pub fn scheduler(&self) -> &Sched {
        &self.sched
    }
    /// The marking scheme (e.g. to read an estimator's state for a plot).
    pub fn marking(&self) -> &Marking {
        &self.marking
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
    /// The packet that joined queue `q` last, if it is still there.
    pub fn newest(&self, q: usize) -> Option<&P> {
        self.b.lanes[q].fifo.back().map(|e| &e.pkt)
    }

    /// Queue a packet of DSCP `dscp` goes to.
    #[inline]
    pub fn classify(&self, dscp: u8) -> usize {
        self.b.classify(&self.c, dscp)
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

    /// Queue `q` is paused (true) or may send again (false) from `now` on: PFC's PAUSE and
    /// RESUME for its priority (IEEE 802.1Qbb; [`crate::pfc`] decides when). A paused queue
    /// keeps its packets and admits new ones (admission is the buffer's business, not the
    /// pause's), and the packet in transmission finishes; but the scheduler stops seeing it:
    /// to the scheduler it empties when paused and becomes backlogged again when resumed, so
    /// that a round robin moves on to the other queues and takes it back at the tail of its
    /// round with a fresh quantum (DWRR), or with a new finish tag (WFQ), as a switch treats
    /// an ineligible queue. Returns whether the state changed.
    pub fn set_paused(&mut self, now: Nanos, q: usize, paused: bool) -> bool {
        let bit = 1u64 << q;
        if (self.c.paused & bit != 0) == paused {
            return false;
        }
        let books = &mut self.c.pause_books[q];
        if paused {
            books.since = now;
            books.pauses += 1;
        } else {
            books.paused_ns += now.saturating_sub(books.since);
        }
        self.c.paused ^= bit;
        Paused::set(&mut self.sched, now, q, self.c.paused, &self.b.occ);
        true
    }

    /// Queue `q` is paused.
    pub fn is_paused(&self, q: usize) -> bool {
        self.c.paused >> q & 1 == 1
    }

    /// Some packet may be sent now: a queue is backlogged and not paused.
    pub fn has_eligible(&self) -> bool {
        self.sched.has_backlog(self.b.port_pkts, &self.b.occ)
    }

    /// Offer a packet to the port at `now`. Returns `Err((pkt, reason))` if it was dropped
    /// (admission or the scheme's enqueue hook), so the caller can recycle or trace it.
    #[inline(always)]
    pub fn enqueue(&mut self, now: Nanos, pkt: P, pool: &mut BufferPool) -> Result<(), (P, Reason)> {
        with_parts!(self, parts => parts.enqueue(now, pkt, pool))
    }

    /// [`Port::enqueue`] into an empty port, then [`Port::dequeue_with`] at once (the link is
    /// idle): the same decisions and books, without the FIFO.
    pub fn pass_with(
        &mut self,
        now: Nanos,
        pkt: P,
        pool: &mut BufferPool,
        dropped: impl FnMut(P, usize, Reason),
    ) -> Result<Option<(P, usize)>, (P, Reason)> {
        debug_assert!(self.is_empty());
        with_parts!(self, parts => parts.pass_with(now, pkt, pool, dropped))
    }

    /// Take the next packet to transmit at `now`, after the scheduler's choice and the
    /// scheme's dequeue hook (packets the scheme drops at dequeue are counted and discarded:
    /// [`Port::dequeue_with`] hands them back). Returns the packet and the queue it came from.
    pub fn dequeue(&mut self, now: Nanos, pool: &mut BufferPool) -> Option<(P, usize)> {
        self.dequeue_with(now, pool, |_, _, _| {})
    }

    /// [`Port::dequeue`], handing every packet the scheme drops at dequeue on the way (CoDel,
    /// a mark on a non-ECT packet under [`NonEctPolicy::Drop`]) to `dropped` with its queue and
    /// reason, already counted by the port: the caller frees what the packet holds (the
    /// emulated switch's frame slots) or counts it without reading the port's total around
    /// every dequeue (one more cache line per packet). Monomorphized: a caller that ignores
    /// drops pays nothing.
    #[inline(always)]
    pub fn dequeue_with(
        &mut self,
        now: Nanos,
        pool: &mut BufferPool,
        dropped: impl FnMut(P, usize, Reason),
    ) -> Option<(P, usize)> {
        with_parts!(self, parts => parts.dequeue_with(now, pool, dropped))
    }
}

/// A scheme that never acts: `Marking::None` as a type of its own, so that a port without
/// marking runs a path with no hook in it.
struct NoMarking;

impl MarkingScheme for NoMarking {
    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }
    fn reset(&mut self) {}
}

impl<P> Books<P> {
    #[inline]
    fn classify(&self, c: &Cold, dscp: u8) -> usize {
        if self.default_dscp_map {
            ((dscp & 63) as usize).min(self.occ.len() - 1)
        } else {
            c.dscp_map[(dscp & 63) as usize] as usize
        }
    }

    /// Bring one queue's time integral up to `now` (before its length changes).
    #[inline(always)]
    fn advance_queue(&mut self, q: usize, now: Nanos) {
        let lane = &mut self.lanes[q];
        let dt = now.saturating_sub(lane.last_change_ns);
        if dt > 0 {
            lane.byte_ns += self.occ[q].bytes as u128 * dt as u128;
            lane.last_change_ns = now;
        }
    }

    #[inline]
    fn count_drop(&mut self, c: &mut Cold, q: usize, r: Reason) {
        c.reasons[q].drops[r as usize] += 1;
        self.total_drops += 1;
    }

    /// Returns false if the packet must be dropped (non-ECT under `NonEctPolicy::Drop`).
    #[inline]
    fn apply_mark(&mut self, c: &mut Cold, pkt: &mut P, q: usize, r: Reason) -> bool
    where
        P: PortPacket,
    {
        if pkt.is_ect() {
            pkt.set_ce();
            c.reasons[q].marks[r as usize] += 1;
            true
        } else {
            match c.non_ect {
                NonEctPolicy::Pass => {
                    c.reasons[q].unmarkable[r as usize] += 1;
                    true
                }
                NonEctPolicy::Drop => {
                    self.count_drop(c, q, r);
                    false
                }
            }
        }
    }
}

/// A port taken apart for one operation: its books, and its scheduler and scheme as the
/// types `S` and `M` ([`with_parts`]).
struct Parts<'a, P, S, M> {
    b: &'a mut Books<P>,
    c: &'a mut Cold,
    sched: &'a mut S,
    marking: &'a mut M,
}

impl<P: PortPacket, S: Scheduler, M: MarkingScheme> Parts<'_, P, S, M> {
    #[inline(always)]
    fn view(&mut self, queue: usize, pool: &BufferPool, extra: u64) -> QueueState {
        let b = &mut *self.b;
        let occ = b.occ[queue];
        let (oracle_share, strict_above) = if b.needs_oracle {
            // The oracle sees the queue as backlogged, as it is once this packet joins.
            let saved = b.occ[queue].pkts;
            b.occ[queue].pkts = saved.max(1);
            let share = self.sched.share(queue, &b.occ);
            b.occ[queue].pkts = saved;
            (share, self.sched.strict_above(queue))
        } else {
            (1.0, 0)
        };
        QueueState {
            queue,
            n_queues: b.occ.len(),
            queue_bytes: occ.bytes + extra,
            queue_pkts: occ.pkts + (extra > 0) as u32,
            port_bytes: b.port_bytes + extra,
            pool_bytes: if pool.limit_bytes == u64::MAX { b.port_bytes + extra } else { pool.used_bytes + extra },
            link_rate_bps: b.link_rate_bps,
            quantum: if b.needs_round { self.sched.quantum(queue) } else { None },
            round_time_ns: if b.needs_round { self.sched.round_time_ns() } else { None },
            oracle_share,
            strict_above,
        }
    }

    /// Admission and the enqueue hook: the packet (maybe marked), its queue and size.
    #[inline(always)]
    fn admit(&mut self, now: Nanos, mut pkt: P, pool: &mut BufferPool) -> Result<(P, usize, u32), (P, Reason)> {
        let size = pkt.wire_bytes();
        let q = self.b.classify(self.c, pkt.dscp());
        let b = &mut *self.b;
        let port = Fill { used: b.port_bytes, limit: b.buffer_bytes };
        let queue = || Fill { used: b.occ[q].bytes, limit: b.lanes[q].limit };
        if let Err(r) = buffer::admit(port, queue, pool, size as u64) {
            b.count_drop(self.c, q, r);
            return Err((pkt, r));
        }
        if self.b.hooks.enqueue {
            let built;
            let view = if self.b.hooks.queue_state {
                built = self.view(q, pool, size as u64);
                &built
            } else {
                &QueueState::UNREAD
            };
            let pv = PacketView { size, ect: pkt.is_ect() };
            match self.marking.on_enqueue(now, pv, view) {
                Decision::Pass => {}
                Decision::Mark(r) => {
                    if !self.b.apply_mark(self.c, &mut pkt, q, r) {
                        return Err((pkt, r));
                    }
                }
                Decision::Drop(r) => {
                    self.b.count_drop(self.c, q, r);
                    return Err((pkt, r));
                }
            }
        }
        Ok((pkt, q, size))
    }

    #[inline(always)]
    fn enqueue(mut self, now: Nanos, pkt: P, pool: &mut BufferPool) -> Result<(), (P, Reason)> {
        let (pkt, q, size) = self.admit(now, pkt, pool)?;
        let b = &mut *self.b;
        b.advance_queue(q, now);
        let occ = &mut b.occ[q];
        if occ.pkts == 0 {
            occ.head_bytes = size;
            self.c.busy_books[q].since = now;
        }
        occ.pkts += 1;
        occ.bytes += size as u64;
        b.port_bytes += size as u64;
        b.port_pkts += 1;
        pool.used_bytes += size as u64;
        let lane = &mut b.lanes[q];
        lane.enq_pkts += 1;
        lane.enq_bytes += size as u64;
        lane.max_bytes = lane.max_bytes.max(occ.bytes);
        lane.fifo.push_back(Entry { pkt, enq_ns: now });
        self.sched.on_enqueue(now, q, size, &b.occ);
        Ok(())
    }

    /// An empty port whose link is idle: enqueue `pkt` and dequeue it at once, as
    /// [`Parts::enqueue`] then [`Parts::dequeue_with`] at the same `now` would, without the
    /// FIFO. `Ok(None)`: dropped at dequeue, or held by a paused scheduler (then queued).
    #[inline(always)]
    fn pass_with(
        mut self,
        now: Nanos,
        pkt: P,
        pool: &mut BufferPool,
        mut dropped: impl FnMut(P, usize, Reason),
    ) -> Result<Option<(P, usize)>, (P, Reason)> {
        let (mut pkt, q, size) = self.admit(now, pkt, pool)?;
        let b = &mut *self.b;
        // Books the two steps would leave unchanged are not written: the time integral (the
        // queue held nothing since its last change and holds nothing after), the backlogged
        // time (zero), the sojourn sum and maximum (a sojourn of zero).
        b.occ[q] = QueueOcc { bytes: size as u64, pkts: 1, head_bytes: size };
        b.port_bytes += size as u64;
        b.port_pkts += 1;
        let lane = &mut b.lanes[q];
        lane.enq_pkts += 1;
        lane.enq_bytes += size as u64;
        lane.max_bytes = lane.max_bytes.max(size as u64);
        self.sched.on_enqueue(now, q, size, &b.occ);
        if !self.sched.has_backlog(b.port_pkts, &b.occ) {
            // Paused: the packet waits like any other. The queue held nothing until now, so
            // its time integral only moves its clock (`occ` already counts the packet).
            b.lanes[q].last_change_ns = now;
            self.c.busy_books[q].since = now;
            pool.used_bytes += size as u64;
            b.lanes[q].fifo.push_back(Entry { pkt, enq_ns: now });
            return Ok(None);
        }
        let q2 = self.sched.select(now, &b.occ);
        debug_assert_eq!(q2, q, "the only backlogged queue");
        b.occ[q] = QueueOcc::default();
        b.port_bytes -= size as u64;
        b.port_pkts -= 1;
        self.sched.on_dequeue(now, q, size, &b.occ);
        // The dequeue hook and its books as in `dequeue_with`, written twice on purpose: one
        // function shared by both cost +3 % instructions (benches/DESIGN.md §3);
        // `pass_decides_as_enqueue_then_dequeue` holds the two copies together.
        let drop = if self.b.hooks.dequeue {
            let built;
            let view = if self.b.hooks.queue_state {
                built = self.view(q, pool, 0);
                &built
            } else {
                &QueueState::UNREAD
            };
            let pv = PacketView { size, ect: pkt.is_ect() };
            match self.marking.on_dequeue(now, pv, view, 0) {
                Decision::Pass => None,
                Decision::Mark(r) => (!self.b.apply_mark(self.c, &mut pkt, q, r)).then_some(r),
                Decision::Drop(r) => {
                    self.b.count_drop(self.c, q, r);
                    Some(r)
                }
            }
        } else {
            None
        };
        if let Some(r) = drop {
            let d = &mut self.c.reasons[q].deq_dropped;
            d.0 += 1;
            d.1 += size as u64;
            dropped(pkt, q, r);
            Ok(None)
        } else {
            let lane = &mut self.b.lanes[q];
            lane.deq_pkts += 1;
            lane.deq_bytes += size as u64;
            lane.deq_payload_bytes += pkt.payload_bytes() as u64;
            Ok(Some((pkt, q)))
        }
    }

    #[inline(always)]
    fn dequeue_with(
        mut self,
        now: Nanos,
        pool: &mut BufferPool,
        mut dropped: impl FnMut(P, usize, Reason),
    ) -> Option<(P, usize)> {
        loop {
            let b = &mut *self.b;
            if !self.sched.has_backlog(b.port_pkts, &b.occ) {
                return None;
            }
            let q = self.sched.select(now, &b.occ);
            b.advance_queue(q, now);
            let fifo = &mut b.lanes[q].fifo;
            let Entry { mut pkt, enq_ns } = fifo.pop_front().expect("scheduler chose an empty queue");
            if fifo.is_empty() {
                // Restart the ring at its first slot: a queue that holds a packet or two at a
                // time then reuses the same cache lines instead of cycling through its whole
                // buffer (kilobytes per queue, megabytes over a fabric's ports).
                fifo.clear();
                let books = &mut self.c.busy_books[q];
                books.busy_ns += now.saturating_sub(books.since);
            }
            let size = pkt.wire_bytes();
            let occ = &mut b.occ[q];
            occ.pkts -= 1;
            occ.bytes -= size as u64;
            occ.head_bytes = b.lanes[q].fifo.front().map_or(0, |e| e.pkt.wire_bytes());
            b.port_bytes -= size as u64;
            b.port_pkts -= 1;
            pool.used_bytes -= size as u64;
            self.sched.on_dequeue(now, q, size, &b.occ);
            let sojourn = now.saturating_sub(enq_ns);
            let drop = if self.b.hooks.dequeue {
                let built;
                let view = if self.b.hooks.queue_state {
                    built = self.view(q, pool, 0);
                    &built
                } else {
                    &QueueState::UNREAD
                };
                let pv = PacketView { size, ect: pkt.is_ect() };
                match self.marking.on_dequeue(now, pv, view, sojourn) {
                    Decision::Pass => None,
                    Decision::Mark(r) => (!self.b.apply_mark(self.c, &mut pkt, q, r)).then_some(r),
                    Decision::Drop(r) => {
                        self.b.count_drop(self.c, q, r);
                        Some(r)
                    }
                }
            } else {
                None
            };
            if let Some(r) = drop {
                let d = &mut self.c.reasons[q].deq_dropped;
                d.0 += 1;
                d.1 += size as u64;
                dropped(pkt, q, r);
            } else {
                let lane = &mut self.b.lanes[q];
                lane.deq_pkts += 1;
                lane.deq_bytes += size as u64;
                lane.deq_payload_bytes += pkt.payload_bytes() as u64;
                // Saturates only with clocks near u64::MAX (the robustness traces), never in a run.
                lane.sojourn_sum_ns = lane.sojourn_sum_ns.saturating_add(sojourn);
                lane.sojourn_max_ns = lane.sojourn_max_ns.max(sojourn);
                return Some((pkt, q));
            }
        }
    }
}

impl<P: PortPacket> Port<P> {
    /// Check the port's bookkeeping: what the scheduler sees of each queue (`QueueOcc`)
    /// matches its FIFO, no queue exceeds its limit, the port's total matches its queues and
    /// fits the buffer, and the drop total matches the per-reason counters. `full` also walks
    /// every FIFO (O(packets)) and checks per-queue conservation: packets and bytes admitted
    /// = sent + dropped at dequeue + still queued. Without `full` the check is O(queues), cheap
    /// enough to run after every operation in debug builds. Errors name the queue.
    pub fn check_invariants(&self, full: bool) -> Result<(), String> {
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
            if occ.bytes > lane.limit || occ.bytes > self.b.buffer_bytes {
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
        if self.b.port_bytes > self.b.buffer_bytes {
            return Err(format!("{} B queued in a buffer of {} B", self.b.port_bytes, self.b.buffer_bytes));
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
    use super::*;
    use crate::marking::SchemeName;
    use crate::sched::SchedulerKind;

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
    fn a_queue_state_fits_two_cache_lines() {
        assert_eq!(std::mem::size_of::<Lane<TestPkt>>(), 128);
        assert_eq!(std::mem::offset_of!(Lane<TestPkt>, fifo), 64, "the FIFO opens the second line");
    }

    #[test]
    fn a_port_header_fits_one_cache_line() {
        assert_eq!(std::mem::align_of::<Port<TestPkt>>(), 64);
        for end in [
            std::mem::offset_of!(Port<TestPkt>, b.needs_round) + 1,
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

    #[test]
    fn dequeue_drops_are_handed_back_and_keep_the_books_balanced() {
        // Drops at dequeue: CoDel in drop mode (target 100 us / interval 1 ms, so that the
        // 12 ms below hold many intervals), and TCN marking non-ECT packets under
        // `non_ect = "drop"`. Admitted = sent + dropped at dequeue + queued, and every packet
        // dropped at dequeue comes back to the caller exactly once, with its reason.
        let cfg = PortConfig { queues: 1, buffer: ByteSize(1_000_000), ..Default::default() };
        let mut codel = MarkingConfig { scheme: SchemeName::Codel, ..Default::default() };
        codel.codel.mode = crate::marking::codel::CodelMode::Drop;
        codel.codel.target = crate::units::Duration(100_000);
        codel.codel.interval = crate::units::Duration(1_000_000);
        let tcn = MarkingConfig { scheme: SchemeName::Tcn, non_ect: NonEctPolicy::Drop, ..Default::default() };
        for (m, reason) in [(codel, Reason::Codel), (tcn, Reason::TcnSojourn)] {
            let mut p: Port<TestPkt> = Port::new(&cfg, &m, 1_000_000_000, 1).unwrap();
            let mut pool = BufferPool::unlimited();
            let mut t = 0;
            let (mut sent_ids, mut dropped_ids, mut payload) = (vec![], vec![], 0u64);
            for i in 0..2000 {
                let _ = p.enqueue(t, TestPkt { ect: false, ..pkt(i, 0) }, &mut pool);
                if i % 2 == 0 {
                    let sent = p.dequeue_with(t, &mut pool, |d, q, r| {
                        assert_eq!((q, r), (0, reason));
                        dropped_ids.push(d.id);
                    });
                    if let Some((pkt, _)) = sent {
                        payload += pkt.payload_bytes() as u64;
                        sent_ids.push(pkt.id);
                    }
                }
                t += 6_000;
            }
            let at_dequeue = p.c.reasons[0].deq_dropped.0;
            assert!(at_dequeue > 0, "{reason:?}: the scheme must have dropped at dequeue");
            assert_eq!(dropped_ids.len() as u64, at_dequeue, "every drop at dequeue is handed back");
            let mut all: Vec<u32> = sent_ids.iter().chain(&dropped_ids).copied().collect();
            all.sort_unstable();
            assert!(all.windows(2).all(|w| w[0] < w[1]), "a packet is either sent or handed back, once");
            assert_eq!(p.total_drops(), at_dequeue + p.queue_stats(0).drops[Reason::BufferFull as usize]);
            assert_eq!(payload, p.queue_stats(0).deq_payload_bytes, "payload counted for sent packets only");
            assert!(payload > 0);
            assert_eq!(p.check_invariants(true), Ok(()));
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    pub(crate) struct TestPkt {
        pub size: u32,
        pub dscp: u8,
        pub ect: bool,
        pub ce: bool,
        pub id: u32,
    }
    impl PortPacket for TestPkt {
        fn wire_bytes(&self) -> u32 {
            self.size
        }
        fn is_ect(&self) -> bool {
            self.ect
        }
        fn set_ce(&mut self) {
            self.ce = true;
        }
        fn dscp(&self) -> u8 {
            self.dscp
        }
        fn payload_bytes(&self) -> u32 {
            self.size.saturating_sub(40)
        }
    }

    fn pkt(id: u32, dscp: u8) -> TestPkt {
        TestPkt { size: 1500, dscp, ect: true, ce: false, id }
    }

    fn port(queues: usize, buffer: u64, scheme: SchemeName) -> Port<TestPkt> {
        let cfg = PortConfig { queues, buffer: ByteSize(buffer), ..Default::default() };
        let m = MarkingConfig { scheme, ..Default::default() };
        Port::new(&cfg, &m, 10_000_000_000, 1).unwrap()
    }

    #[test]
    fn shared_buffer_tail_drops_and_counts() {
        let mut p = port(2, 4500, SchemeName::None);
        let mut pool = BufferPool::unlimited();
        assert!(p.enqueue(0, pkt(0, 0), &mut pool).is_ok());
        assert!(p.enqueue(0, pkt(1, 1), &mut pool).is_ok());
        assert!(p.enqueue(0, pkt(2, 1), &mut pool).is_ok());
        assert_eq!(p.enqueue(0, pkt(3, 0), &mut pool).unwrap_err().1, Reason::BufferFull);
        assert_eq!(p.bytes(), 4500);
        assert_eq!(p.stats()[0].drops[Reason::BufferFull as usize], 1);
        // SP: queue 0 first, then FIFO order within queue 1.
        let ids: Vec<u32> = std::iter::from_fn(|| p.dequeue(10, &mut pool)).map(|(p, _)| p.id).collect();
        assert_eq!(ids, vec![0, 1, 2]);
        assert!(p.is_empty());
        assert_eq!(pool.used_bytes, 0);
    }

    #[test]
    fn pool_shared_by_ports() {
        let mut a = port(1, 1_000_000, SchemeName::None);
        let mut b = port(1, 1_000_000, SchemeName::None);
        let mut pool = BufferPool::new(3000);
        assert!(a.enqueue(0, pkt(0, 0), &mut pool).is_ok());
        assert!(b.enqueue(0, pkt(1, 0), &mut pool).is_ok());
        assert_eq!(b.enqueue(0, pkt(2, 0), &mut pool).unwrap_err().1, Reason::PoolFull);
        a.dequeue(1, &mut pool);
        assert!(b.enqueue(2, pkt(3, 0), &mut pool).is_ok());
    }

    #[test]
    fn classification_by_dscp_map() {
        let cfg = PortConfig { queues: 3, dscp_to_queue: vec![2, 1, 0], ..Default::default() };
        let p: Port<TestPkt> = Port::new(&cfg, &MarkingConfig::default(), 1_000_000_000, 0).unwrap();
        assert_eq!(p.classify(0), 2);
        assert_eq!(p.classify(2), 0);
        assert_eq!(p.classify(40), 2); // unmapped: min(dscp, n-1)
                                       // No map, or one that spells out the default: min(dscp, n-1) without the table.
        for map in [vec![], vec![0, 1, 2, 2]] {
            let cfg = PortConfig { queues: 3, dscp_to_queue: map, ..Default::default() };
            let p: Port<TestPkt> = Port::new(&cfg, &MarkingConfig::default(), 1_000_000_000, 0).unwrap();
            assert!(p.b.default_dscp_map);
            assert_eq!([0, 1, 2, 63, 64 + 1].map(|d| p.classify(d)), [0, 1, 2, 2, 1]);
        }
        let bad = PortConfig { queues: 2, dscp_to_queue: vec![5], ..Default::default() };
        let e = Port::<TestPkt>::new(&bad, &MarkingConfig::default(), 1, 0).err().unwrap();
        assert!(e.starts_with("switch.dscp_to_queue[0]"), "{e}");
    }

    /// The paths compiled for a (scheduler, scheme) pair (`with_parts`) are the enum path's
    /// code with the types known: the same random traffic through both, on every pair that
    /// has a path of its own, gives the same packets, marks, drops and counters.
    #[test]
    fn compiled_paths_decide_as_the_enum_path() {
        use crate::rng::Rng;
        use crate::sched::SchedulerKind;
        let run = |cfg: &PortConfig, m: &MarkingConfig, generic: bool| {
            let mut p: Port<TestPkt> = Port::new(cfg, m, 1_000_000_000, 3).unwrap();
            let mut pool = BufferPool::unlimited();
            let mut rng = Rng::new(7);
            let mut log = vec![];
            for i in 0..20_000u32 {
                let now = i as u64 * 700;
                let pkt = TestPkt {
                    size: 64 + rng.below(1437) as u32,
                    dscp: rng.below(8) as u8,
                    ect: rng.below(10) > 0,
                    ..pkt(i, 0)
                };
                let admitted = if generic {
                    let Port { b, sched, marking, c } = &mut p;
                    Parts { b, c, sched, marking }.enqueue(now, pkt, &mut pool)
                } else {
                    p.enqueue(now, pkt, &mut pool)
                };
                log.push(format!("{:?}", admitted.err().map(|(d, r)| (d.id, r))));
                if rng.below(9) < 4 {
                    let mut drops = vec![];
                    let sent = if generic {
                        let Port { b, sched, marking, c } = &mut p;
                        Parts { b, c, sched, marking }.dequeue_with(now, &mut pool, |d, q, r| drops.push((d.id, q, r)))
                    } else {
                        p.dequeue_with(now, &mut pool, |d, q, r| drops.push((d.id, q, r)))
                    };
                    log.push(format!("{sent:?} {drops:?}"));
                }
            }
            p.advance_clock(20_000 * 700);
            let stats = p.stats();
            log.push(format!("{stats:?}"));
            let marks: u64 = stats.iter().map(|s| s.total_marks()).sum();
            (log, marks, p.total_drops())
        };
        let mut checked = 0;
        for (queues, kind) in [(1, SchedulerKind::Sp), (8, SchedulerKind::SpDwrr)] {
            let cfg = PortConfig {
                queues,
                buffer: ByteSize(60_000),
                scheduler: SchedulerConfig { kind, ..Default::default() },
                ..Default::default()
            };
            for scheme in [SchemeName::None, SchemeName::PerQueue, SchemeName::Tcn] {
                let mut m = MarkingConfig { scheme, ..Default::default() };
                m.threshold.k = ByteSize(20_000);
                m.tcn.threshold = crate::units::Duration(20_000);
                let (compiled, generic) = (run(&cfg, &m, false), run(&cfg, &m, true));
                let (_, marks, drops) = &compiled;
                assert!(*drops > 0 && (*marks > 0) == (scheme != SchemeName::None), "{scheme:?}: {marks} marks");
                assert_eq!(compiled, generic, "{queues} queues, {kind:?}, {scheme:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 6);
    }

    /// An idle port's one-step pass (`Port::pass_with`) decides as an enqueue followed at
    /// once by a dequeue: every scheme with every scheduler, one queue and four on a shared
    /// pool, CoDel dropping at dequeue, both non-ECT policies; the same random traffic through
    /// both ports gives the same packets, marks, drops and counters, also for the packets
    /// that queue behind later (the scheduler's and the scheme's state carried over).
    #[test]
    fn pass_decides_as_enqueue_then_dequeue() {
        use crate::marking::codel::CodelMode;
        use crate::rng::Rng;
        use crate::units::Duration;
        use SchedulerKind::*;
        let run = |cfg: &PortConfig, m: &MarkingConfig, limit: u64, fused: bool| {
            let mut p: Port<TestPkt> = Port::new(cfg, m, 1_000_000_000, 3).unwrap();
            let mut pool = BufferPool::new(limit);
            let mut rng = Rng::new(11);
            let (mut log, mut passes) = (vec![], 0u32);
            for i in 0..6_000u32 {
                let now = i as u64 * 5_000;
                let pkt = TestPkt {
                    size: 64 + rng.below(1437) as u32,
                    dscp: rng.below(8) as u8,
                    ect: rng.below(10) > 0,
                    ..pkt(i, 0)
                };
                let mut drops = vec![];
                if p.is_empty() && rng.below(4) > 0 {
                    // An idle link: the packet starts at once.
                    passes += 1;
                    let sent = if fused {
                        p.pass_with(now, pkt, &mut pool, |d, q, r| drops.push((d.id, q, r))).map_err(|(d, r)| (d.id, r))
                    } else {
                        p.enqueue(now, pkt, &mut pool)
                            .map(|()| p.dequeue_with(now, &mut pool, |d, q, r| drops.push((d.id, q, r))))
                            .map_err(|(d, r)| (d.id, r))
                    };
                    log.push(format!("{sent:?} {drops:?}"));
                } else {
                    log.push(format!("{:?}", p.enqueue(now, pkt, &mut pool).err().map(|(d, r)| (d.id, r))));
                    for _ in 0..rng.below(4) {
                        let sent = p.dequeue_with(now + 2_500, &mut pool, |d, q, r| drops.push((d.id, q, r)));
                        log.push(format!("{sent:?} {drops:?}"));
                    }
                }
                p.check_invariants(false).unwrap();
                if i % 97 == 0 {
                    // Peaks restart from the current length: a pass must raise them too.
                    p.advance_clock(now);
                    log.push(format!("{:?}", p.stats()));
                    p.reset_peak();
                }
            }
            p.advance_clock(6_000 * 5_000);
            let stats = p.stats();
            log.push(format!("{stats:?} {}", pool.used_bytes));
            let marks: u64 = stats.iter().map(|s| s.total_marks()).sum();
            (log, passes, marks, p.total_drops())
        };
        let (mut checked, mut marked, mut dropped) = (0, 0, 0);
        for scheme in SchemeName::ALL {
            for kind in [Sp, Wrr, Dwrr, Wfq, SpWfq, SpDwrr] {
                for (queues, limit) in [(1, u64::MAX), (4, 40_000)] {
                    if queues == 1 && matches!(kind, SpWfq | SpDwrr) {
                        continue; // needs a weighted queue next to the strict one
                    }
                    let cfg = PortConfig {
                        queues,
                        buffer: ByteSize(60_000),
                        scheduler: SchedulerConfig { kind, quantum: ByteSize(1), ..Default::default() },
                        pool: (limit != u64::MAX).then_some(ByteSize(limit)),
                        ..Default::default()
                    };
                    let mut m = MarkingConfig { scheme, ..Default::default() };
                    m.threshold.k = ByteSize(3_000);
                    m.tcn.threshold = Duration(4_000);
                    m.codel.mode = CodelMode::Drop;
                    m.codel.target = Duration(1_000);
                    m.codel.interval = Duration(10_000);
                    for non_ect in [NonEctPolicy::Pass, NonEctPolicy::Drop] {
                        m.non_ect = non_ect;
                        let fused = run(&cfg, &m, limit, true);
                        assert_eq!(fused, run(&cfg, &m, limit, false), "{scheme:?} x {kind:?}, {queues} queues");
                        assert!(fused.1 > 1_000, "{scheme:?} x {kind:?}: {} passes", fused.1);
                        checked += 1;
                        marked += (fused.2 > 0) as u32;
                        dropped += (fused.3 > 0) as u32;
                    }
                }
            }
        }
        assert_eq!(checked, 13 * 10 * 2);
        assert!(marked > 100 && dropped > 50, "{marked} runs marked, {dropped} dropped");
    }

    /// A pass into a port whose only queue is paused (PFC) leaves the packet queued, with
    /// the books an enqueue would have written: the two ports agree after the pause ends.
    #[test]
    fn pass_into_a_paused_queue_queues() {
        let cfg = PortConfig { queues: 2, buffer: ByteSize(60_000), ..Default::default() };
        let m = MarkingConfig { scheme: SchemeName::None, ..Default::default() };
        let ports = [true, false].map(|fused| {
            let mut p: Port<TestPkt> = Port::new(&cfg, &m, 1_000_000_000, 3).unwrap();
            let mut pool = BufferPool::unlimited();
            p.set_paused(1_000, 0, true);
            let pkt = TestPkt { size: 1_500, ..pkt(1, 0) };
            let sent = if fused {
                p.pass_with(5_000, pkt, &mut pool, |_, _, _| {}).ok().flatten()
            } else {
                p.enqueue(5_000, pkt, &mut pool).unwrap();
                p.dequeue(5_000, &mut pool)
            };
            assert!(sent.is_none() && !p.is_empty(), "held by the pause");
            p.set_paused(9_000, 0, false);
            let sent = p.dequeue(9_000, &mut pool).map(|(d, q)| (d.id, q));
            p.advance_clock(20_000);
            (sent, format!("{:?}", p.stats()), pool.used_bytes)
        });
        assert_eq!(ports[0], ports[1]);
        assert_eq!(ports[0].0, Some((1, 0)));
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

    fn sched_port(queues: usize, kind: SchedulerKind) -> Port<TestPkt> {
        let cfg = PortConfig {
            queues,
            buffer: ByteSize(1_000_000),
            scheduler: SchedulerConfig { kind, strict: 1, ..Default::default() },
            ..Default::default()
        };
        Port::new(&cfg, &MarkingConfig { scheme: SchemeName::None, ..Default::default() }, 10_000_000_000, 1).unwrap()
    }

    /// PFC pauses a priority (IEEE 802.1Qbb): under strict priority a paused queue 0 lets
    /// queue 1 send; its packets, old and new, wait in order and go first once resumed.
    #[test]
    fn a_paused_queue_keeps_its_packets_and_lets_the_others_send() {
        let mut p = sched_port(2, SchedulerKind::Sp);
        let mut pool = BufferPool::unlimited();
        for i in 0..3 {
            p.enqueue(0, pkt(i, 0), &mut pool).unwrap();
            p.enqueue(0, pkt(10 + i, 1), &mut pool).unwrap();
        }
        assert_eq!(p.dequeue(1, &mut pool).unwrap().0.id, 0);
        assert!(p.set_paused(100, 0, true));
        assert!(!p.set_paused(150, 0, true), "already paused");
        p.enqueue(200, pkt(3, 0), &mut pool).unwrap(); // a paused queue still admits
        let sent: Vec<u32> = (0..3).map(|i| p.dequeue(300 + i, &mut pool).unwrap().0.id).collect();
        assert_eq!(sent, [10, 11, 12]);
        assert!(p.dequeue(400, &mut pool).is_none(), "only the paused queue holds packets");
        assert!(!p.has_eligible() && !p.is_empty());
        assert_eq!(p.check_invariants(true), Ok(()));
        p.set_paused(1_000, 0, false);
        let sent: Vec<u32> = (0..3).map(|i| p.dequeue(1_000 + i, &mut pool).unwrap().0.id).collect();
        assert_eq!(sent, [1, 2, 3]);
        p.advance_clock(2_000);
        let st = &p.stats()[0];
        assert_eq!((st.paused_ns, st.pauses), (900, 1));
        assert_eq!(p.check_invariants(true), Ok(()));
    }

    /// Under DWRR a paused queue leaves the round (the other takes the whole link) and rejoins
    /// it when resumed; under WFQ it gets a new finish tag. Equal weights then alternate again.
    #[test]
    fn round_robins_skip_a_paused_queue_and_take_it_back() {
        for kind in [SchedulerKind::Dwrr, SchedulerKind::Wfq, SchedulerKind::Wrr, SchedulerKind::SpDwrr] {
            let queues = if kind == SchedulerKind::SpDwrr { 3 } else { 2 };
            let first = queues - 2; // the two weighted queues
            let mut p = sched_port(queues, kind);
            let mut pool = BufferPool::unlimited();
            for i in 0..20 {
                p.enqueue(0, pkt(i, first as u8), &mut pool).unwrap();
                p.enqueue(0, pkt(100 + i, first as u8 + 1), &mut pool).unwrap();
            }
            let take = |p: &mut Port<TestPkt>, pool: &mut BufferPool, t: &mut Nanos, n: usize| -> Vec<usize> {
                (0..n)
                    .map(|_| {
                        *t += 1;
                        p.dequeue(*t, pool).unwrap().1
                    })
                    .collect()
            };
            let mut t = 1;
            // Equal weights share within a packet (WFQ breaks a tie towards the lower queue).
            let fair = |v: &[usize]| (v.len() / 2).abs_diff(v.iter().filter(|&&q| q == first).count()) <= 1;
            let before = take(&mut p, &mut pool, &mut t, 4);
            assert!(fair(&before), "{kind:?}: {before:?}");
            p.set_paused(t, first, true);
            assert_eq!(take(&mut p, &mut pool, &mut t, 6), vec![first + 1; 6], "{kind:?}");
            p.set_paused(t, first, false);
            let after = take(&mut p, &mut pool, &mut t, 6);
            assert!(fair(&after), "{kind:?}: {after:?}");
            assert_eq!(p.check_invariants(true), Ok(()), "{kind:?}");
        }
    }
}
