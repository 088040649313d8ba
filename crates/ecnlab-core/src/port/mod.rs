//! A switch egress port: N FIFO queues, a shared buffer, a scheduler and a marking scheme.
//!
//! The port does the bookkeeping so that schemes and schedulers stay small. Its rooms:
//! - `storage.rs`: the FIFOs and the books, laid out in few cache lines for the per-packet
//!   path (benches/DESIGN.md §5);
//! - `admission.rs`: classification (DSCP -> queue), buffer admission by the rule of
//!   [`crate::buffer`] (the port's buffer shared by its queues, optionally capped per queue
//!   and drawn from a [`BufferPool`] shared with other ports), the scheme's enqueue hook;
//! - `pipeline.rs`: the per-packet operations (enqueue, dequeue, the one-step pass through
//!   an idle port), the scheme's dequeue hook, and what a decision means: CE on an ECT
//!   packet, [`NonEctPolicy`] for a non-ECT one, every mark and drop counted by reason;
//! - `stats.rs`: statistics per queue ([`QueueStats`]) and the invariants the books keep
//!   (checked by tests and the simulator's debug builds): `enq_pkts = deq_pkts + dequeue
//!   drops + queued`, and every arrival is either enqueued or counted in `drops` at enqueue.
//!
//! Here: building a port, reading it, and pausing a queue (PFC, IEEE 802.1Qbb:
//! [`Port::set_paused`]): a paused queue keeps its packets and takes new ones, but leaves the
//! scheduler as if it had emptied until it is resumed, when it rejoins as a newly
//! backlogged queue; what decides pauses is [`crate::pfc`].

mod admission;
mod pipeline;
mod stats;
mod storage;

pub use stats::QueueStats;

use crate::buffer::{self, BufferPolicy, BufferPool, DynamicBuffer, DynamicParams, MAX_QUEUES};
use crate::marking::{BuildCtx, Marking, MarkingConfig, MarkingScheme, NonEctPolicy, Reason};
use crate::pfc::PfcConfig;
use crate::sched::{paused::Paused, QueueOcc, Sched, Scheduler, SchedulerConfig};
use crate::units::{ByteSize, Nanos};
pub use pipeline::{Dequeue, Enqueue, Operation, Parts, Pass};
use serde::{Deserialize, Serialize};
use storage::{Books, BusyBooks, Cold, Lane, PauseBooks, ReasonCounts};

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
    /// How the queues share the buffer: "static" (first come first served, tail drop,
    /// `queue_limits` as caps) or "dynamic" (a queue is admitted a packet while it holds at
    /// most `alpha` x the free shared buffer: Choudhury and Hahne's dynamic threshold, as
    /// merchant switch ASICs; the shared buffer is `pool` if set, else `buffer` less the
    /// queues' `queue_min` and the `headroom`).
    pub buffer_policy: BufferPolicy,
    /// Dynamic policy: each queue's alpha (empty = 1 for every queue; one entry = the same
    /// for every queue). SONiC's `dynamic_th` n is alpha = 2^n (-3: 1/8, 0: 1, 3: 8).
    pub alpha: Vec<f64>,
    /// Dynamic policy: each queue's guaranteed minimum, reserved apart from the shared
    /// buffer and used first (empty = none; one entry = the same for every queue).
    pub queue_min: Vec<ByteSize>,
    /// Dynamic policy: bytes reserved for the lossless queues (`[switch.pfc]`), which take
    /// the packets their dynamic threshold refuses (the bytes in flight after a PAUSE).
    pub headroom: ByteSize,
}

impl PortConfig {
    /// The queue a packet of DSCP `dscp` (its low six bits) joins: `dscp_to_queue[dscp]`,
    /// else `min(dscp, queues - 1)`. The port classifies by this table (built once, checked:
    /// `Port::new`); the emulator's hosts read it to attribute their flows to queues.
    pub fn classify(&self, dscp: u8) -> usize {
        let d = (dscp & 63) as usize;
        self.dscp_to_queue.get(d).copied().unwrap_or(d.min(self.queues.max(1) - 1))
    }
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
            buffer_policy: BufferPolicy::Static,
            alpha: Vec::new(),
            queue_min: Vec::new(),
            headroom: ByteSize(0),
        }
    }
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

/// A port taken apart for one operation ([`Port::split`]): its scheduler and scheme as the
/// enums they are, to be matched by a caller that compiles a path of its own for the pairs
/// its busy ports run (the simulator's `paths.rs`, benches/DESIGN.md §12), and the rest,
/// which [`Rest::with`] joins to the scheduler and scheme as concrete types.
pub struct Split<'a, P> {
    pub sched: &'a mut Sched,
    pub marking: &'a mut Marking,
    pub rest: Rest<'a, P>,
}

/// The books of a port taken apart ([`Split`]).
pub struct Rest<'a, P> {
    b: &'a mut Books<P>,
    c: &'a mut Cold,
}

impl<'a, P> Rest<'a, P> {
    /// The port's number of queues (a one-queue strict-priority port is a plain FIFO:
    /// [`crate::sched::sp::Fifo`]).
    #[inline(always)]
    pub fn n_queues(&self) -> usize {
        self.b.occ.len()
    }
    /// The port's parts for one operation, with `sched` and `marking` standing for the
    /// port's own (the ones [`Split`] handed out, or stateless stand-ins of the same
    /// behaviour: [`crate::sched::sp::Fifo`] for a one-queue `Sp`, [`crate::marking::NoMarking`] for
    /// `Marking::None`).
    #[inline(always)]
    pub fn with<S: Scheduler, M: MarkingScheme>(self, sched: &'a mut S, marking: &'a mut M) -> Parts<'a, P, S, M> {
        Parts { b: self.b, c: self.c, sched, marking }
    }
}

impl<P: PortPacket> Port<P> {
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
        let lossless = if cfg.pfc.enabled { cfg.pfc.lossless_mask(n) } else { 0 };
        let params = DynamicParams {
            queues: n,
            buffer: cfg.buffer.0,
            alpha: &cfg.alpha,
            queue_min: &cfg.queue_min,
            headroom: cfg.headroom,
            lossless,
        };
        let dynamic = DynamicBuffer::build(cfg.buffer_policy, &params)?.map(Box::new);
        let mut dscp_map = [0u8; 64];
        let default_dscp_map = cfg.dscp_to_queue.iter().enumerate().all(|(d, &q)| q == d.min(n - 1));
        for (d, slot) in dscp_map.iter_mut().enumerate() {
            let q = cfg.classify(d as u8);
            if q >= n {
                return Err(format!("switch.dscp_to_queue[{d}]: queue {q} does not exist (the port has {n})"));
            }
            *slot = q as u8;
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
        let lanes = queue_limits.into_iter().map(Lane::new).collect::<Vec<_>>().into_boxed_slice();
        Ok(Port {
            b: Books {
                lanes,
                occ: vec![QueueOcc::default(); n].into_boxed_slice(),
                port_bytes: 0,
                port_pkts: 0,
                buffer_bytes: if dynamic.is_some() { 0 } else { cfg.buffer.0 },
                default_dscp_map,
                link_rate_bps,
                needs_oracle,
                needs_round,
                hooks,
                dynamic_buffer: dynamic.is_some(),
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
                dynamic,
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
    pub fn scheduler(&self) -> &Sched {
        &self.sched
    }
    /// The marking scheme (e.g. to read an estimator's state for a plot).
    pub fn marking(&self) -> &Marking {
        &self.marking
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
        self.run(Enqueue { now, pkt, pool })
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
        self.run(Pass { now, pkt, pool, dropped })
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
        self.run(Dequeue { now, pool, dropped })
    }

    /// The port taken apart, for a caller that runs an [`Operation`] on the concrete types
    /// of the (scheduler, scheme) pairs its busy ports have ([`Split`]).
    #[inline(always)]
    pub fn split(&mut self) -> Split<'_, P> {
        let Port { b, sched, marking, c } = self;
        Split { sched, marking, rest: Rest { b, c } }
    }

    /// Run `op` over the scheduler and scheme enums: the portable path, which every
    /// operation of [`Port`] takes.
    #[inline(always)]
    pub fn run<O: Operation<P>>(&mut self, op: O) -> O::Out {
        let Split { sched, marking, rest } = self.split();
        op.run(rest.with(sched, marking))
    }
}

/// Packets and ports for the port's tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::marking::SchemeName;

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

    pub fn pkt(id: u32, dscp: u8) -> TestPkt {
        TestPkt { size: 1500, dscp, ect: true, ce: false, id }
    }

    pub fn port(queues: usize, buffer: u64, scheme: SchemeName) -> Port<TestPkt> {
        let cfg = PortConfig { queues, buffer: ByteSize(buffer), ..Default::default() };
        let m = MarkingConfig { scheme, ..Default::default() };
        Port::new(&cfg, &m, 10_000_000_000, 1).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{pkt, TestPkt};
    use super::*;
    use crate::marking::SchemeName;
    use crate::sched::SchedulerKind;

    fn sched_port(queues: usize, kind: SchedulerKind) -> Port<TestPkt> {
        let cfg = PortConfig {
            queues,
            buffer: ByteSize(1_000_000),
            scheduler: SchedulerConfig { kind, strict: 1, ..Default::default() },
            ..Default::default()
        };
        Port::new(&cfg, &MarkingConfig { scheme: SchemeName::None, ..Default::default() }, 10_000_000_000, 1).unwrap()
    }

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
