//! The per-packet pipeline: an enqueue (admission, then the FIFO and the scheduler), a
//! dequeue (the scheduler's choice, the scheme's dequeue hook, the books), and the one-step
//! pass of a packet through an idle port (benches/DESIGN.md §3); what a decision means (CE
//! on an ECT packet, [`NonEctPolicy`] for a non-ECT one) and its count by reason.
//!
//! Each operation runs on the port taken apart ([`Parts`]), with its scheduler and scheme as
//! the types `S` and `M`, so that a caller may compile a path for the pairs it runs most
//! (benches/DESIGN.md §12).

use super::storage::{Books, Cold, Entry};
use super::PortPacket;
use crate::buffer::BufferPool;
use crate::marking::{Decision, MarkingScheme, NonEctPolicy, PacketView, QueueState, Reason};
use crate::sched::{QueueOcc, Scheduler};
use crate::units::Nanos;

impl<P> Books<P> {
    #[inline]
    pub(super) fn count_drop(&mut self, c: &mut Cold, q: usize, r: Reason) {
        c.reasons[q].drops[r as usize] += 1;
        self.total_drops += 1;
    }

    /// Returns false if the packet must be dropped (non-ECT under `NonEctPolicy::Drop`).
    #[inline]
    pub(super) fn apply_mark(&mut self, c: &mut Cold, pkt: &mut P, q: usize, r: Reason) -> bool
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
/// types `S` and `M` ([`super::Rest::with`]).
pub struct Parts<'a, P, S, M> {
    pub(super) b: &'a mut Books<P>,
    pub(super) c: &'a mut Cold,
    pub(super) sched: &'a mut S,
    pub(super) marking: &'a mut M,
}

impl<P: PortPacket, S: Scheduler, M: MarkingScheme> Parts<'_, P, S, M> {
    #[inline(always)]
    pub(super) fn view(&mut self, queue: usize, pool: &BufferPool, extra: u64) -> QueueState {
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

    #[inline(always)]
    pub(super) fn enqueue(mut self, now: Nanos, pkt: P, pool: &mut BufferPool) -> Result<(), (P, Reason)> {
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
        let lane = &mut b.lanes[q];
        lane.enq_pkts += 1;
        lane.enq_bytes += size as u64;
        lane.max_bytes = lane.max_bytes.max(occ.bytes);
        lane.fifo.push_back(Entry { pkt, enq_ns: now });
        b.draw(self.c, q, size, pool);
        self.sched.on_enqueue(now, q, size, &b.occ);
        Ok(())
    }

    /// An empty port whose link is idle: enqueue `pkt` and dequeue it at once, as
    /// [`Parts::enqueue`] then [`Parts::dequeue_with`] at the same `now` would, without the
    /// FIFO. `Ok(None)`: dropped at dequeue, or held by a paused scheduler (then queued).
    #[inline(always)]
    pub(super) fn pass_with(
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
            b.draw(self.c, q, size, pool);
            b.lanes[q].fifo.push_back(Entry { pkt, enq_ns: now });
            return Ok(None);
        }
        let q2 = self.sched.select(now, &b.occ);
        debug_assert_eq!(q2, q, "the only backlogged queue");
        b.occ[q] = QueueOcc::default();
        b.port_bytes -= size as u64;
        b.port_pkts -= 1;
        self.sched.on_dequeue(now, q, size, &b.occ);
        match self.leave::<false>(now, &mut pkt, q, size, pool, 0) {
            None => Ok(Some((pkt, q))),
            Some(r) => {
                dropped(pkt, q, r);
                Ok(None)
            }
        }
    }

    #[inline(always)]
    pub(super) fn dequeue_with(
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
            b.give_back(self.c, q, size, pool);
            self.sched.on_dequeue(now, q, size, &b.occ);
            let sojourn = now.saturating_sub(enq_ns);
            match self.leave::<true>(now, &mut pkt, q, size, pool, sojourn) {
                None => return Some((pkt, q)),
                Some(r) => dropped(pkt, q, r),
            }
        }
    }

    /// The packet `pkt` of `size` bytes leaves queue `q` after `sojourn`: the scheme's dequeue
    /// hook and its decision (a mark, or a drop), then the departure's books. Returns the
    /// reason if the packet is dropped (counted: the caller hands it back). `QUEUED` is false for the
    /// one-step pass, whose sojourn of zero leaves the sojourn sum and maximum unchanged
    /// (not written). One function for both paths, `#[inline(always)]` (benches/DESIGN.md §3).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // the hot path's state, passed in registers
    fn leave<const QUEUED: bool>(
        &mut self,
        now: Nanos,
        pkt: &mut P,
        q: usize,
        size: u32,
        pool: &BufferPool,
        sojourn: Nanos,
    ) -> Option<Reason> {
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
                Decision::Mark(r) => (!self.b.apply_mark(self.c, pkt, q, r)).then_some(r),
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
            return Some(r);
        }
        let lane = &mut self.b.lanes[q];
        lane.deq_pkts += 1;
        lane.deq_bytes += size as u64;
        lane.deq_payload_bytes += pkt.payload_bytes() as u64;
        if QUEUED {
            // Saturates only with clocks near u64::MAX (the robustness traces), never in a run.
            lane.sojourn_sum_ns = lane.sojourn_sum_ns.saturating_add(sojourn);
            lane.sojourn_max_ns = lane.sojourn_max_ns.max(sojourn);
        }
        None
    }
}

/// One per-packet operation of a port, run on the port's [`Parts`] with its scheduler and
/// scheme as the types `S` and `M`: a value, so that a caller can run the same operation on
/// whichever concrete types it matched ([`super::Split`]).
pub trait Operation<P: PortPacket> {
    type Out;
    fn run<S: Scheduler, M: MarkingScheme>(self, parts: Parts<'_, P, S, M>) -> Self::Out;
}

/// [`super::Port::enqueue`].
pub struct Enqueue<'p, P> {
    pub now: Nanos,
    pub pkt: P,
    pub pool: &'p mut BufferPool,
}

impl<P: PortPacket> Operation<P> for Enqueue<'_, P> {
    type Out = Result<(), (P, Reason)>;
    #[inline(always)]
    fn run<S: Scheduler, M: MarkingScheme>(self, parts: Parts<'_, P, S, M>) -> Self::Out {
        parts.enqueue(self.now, self.pkt, self.pool)
    }
}

/// [`super::Port::pass_with`].
pub struct Pass<'p, P, F> {
    pub now: Nanos,
    pub pkt: P,
    pub pool: &'p mut BufferPool,
    pub dropped: F,
}

impl<P: PortPacket, F: FnMut(P, usize, Reason)> Operation<P> for Pass<'_, P, F> {
    type Out = Result<Option<(P, usize)>, (P, Reason)>;
    #[inline(always)]
    fn run<S: Scheduler, M: MarkingScheme>(self, parts: Parts<'_, P, S, M>) -> Self::Out {
        debug_assert!(parts.b.port_pkts == 0, "a pass is into an empty port");
        parts.pass_with(self.now, self.pkt, self.pool, self.dropped)
    }
}

/// [`super::Port::dequeue_with`].
pub struct Dequeue<'p, F> {
    pub now: Nanos,
    pub pool: &'p mut BufferPool,
    pub dropped: F,
}

impl<P: PortPacket, F: FnMut(P, usize, Reason)> Operation<P> for Dequeue<'_, F> {
    type Out = Option<(P, usize)>;
    #[inline(always)]
    fn run<S: Scheduler, M: MarkingScheme>(self, parts: Parts<'_, P, S, M>) -> Self::Out {
        parts.dequeue_with(self.now, self.pool, self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, TestPkt};
    use super::super::{Port, PortConfig};
    use super::*;
    use crate::marking::{MarkingConfig, SchemeName};
    use crate::sched::{SchedulerConfig, SchedulerKind};
    use crate::units::ByteSize;

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

    /// A path of its own for a (scheduler, scheme) pair, as a caller compiles it
    /// (`ecnlab-sim`'s `paths.rs`): the port taken apart, its parts run with concrete types
    /// (stand-ins for the stateless ones).
    fn concrete<O: Operation<TestPkt>>(p: &mut Port<TestPkt>, op: O) -> O::Out {
        use crate::marking::{Marking, NoMarking};
        use crate::sched::{sp::Fifo, Sched};
        let super::super::Split { sched, marking, rest } = p.split();
        match (sched, marking) {
            (Sched::Sp(_), Marking::None) if rest.n_queues() == 1 => op.run(rest.with(&mut Fifo, &mut NoMarking)),
            (Sched::Sp(_), Marking::Threshold(m)) if rest.n_queues() == 1 => op.run(rest.with(&mut Fifo, m)),
            (Sched::SpDwrr(s), Marking::Tcn(m)) => op.run(rest.with(s, m)),
            _ => unreachable!("a pair the test does not run"),
        }
    }

    /// The same operations on concrete types ([`super::super::Rest::with`]) decide as on
    /// the enums: the same random traffic through both, on pairs with stand-ins (one-queue
    /// SP as [`crate::sched::sp::Fifo`], no scheme as `NoMarking`) and without, gives the
    /// same packets, marks, drops and counters.
    #[test]
    fn concrete_paths_decide_as_the_enum_path() {
        use crate::rng::Rng;
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
                let op = Enqueue { now, pkt, pool: &mut pool };
                let admitted = if generic { p.run(op) } else { concrete(&mut p, op) };
                log.push(format!("{:?}", admitted.err().map(|(d, r)| (d.id, r))));
                if rng.below(9) < 4 {
                    let mut drops = vec![];
                    let op = Dequeue { now, pool: &mut pool, dropped: |d: TestPkt, q, r| drops.push((d.id, q, r)) };
                    let sent = if generic { p.run(op) } else { concrete(&mut p, op) };
                    log.push(format!("{sent:?} {drops:?}"));
                }
            }
            p.advance_clock(20_000 * 700);
            let stats = p.stats();
            log.push(format!("{stats:?}"));
            let marks: u64 = stats.iter().map(|s| s.total_marks()).sum();
            (log, marks, p.total_drops())
        };
        let pairs = [
            (1, SchedulerKind::Sp, SchemeName::None),
            (1, SchedulerKind::Sp, SchemeName::PerQueue),
            (8, SchedulerKind::SpDwrr, SchemeName::Tcn),
        ];
        for (queues, kind, scheme) in pairs {
            let cfg = PortConfig {
                queues,
                buffer: ByteSize(60_000),
                scheduler: SchedulerConfig { kind, ..Default::default() },
                ..Default::default()
            };
            let mut m = MarkingConfig { scheme, ..Default::default() };
            m.threshold.k = ByteSize(20_000);
            m.tcn.threshold = crate::units::Duration(20_000);
            let (compiled, generic) = (run(&cfg, &m, false), run(&cfg, &m, true));
            let (_, marks, drops) = &compiled;
            assert!(*drops > 0 && (*marks > 0) == (scheme != SchemeName::None), "{scheme:?}: {marks} marks");
            assert_eq!(compiled, generic, "{queues} queues, {kind:?}, {scheme:?}");
        }
    }

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
                for ((queues, limit), dynamic) in
                    [(1, u64::MAX), (4, 40_000)].into_iter().flat_map(|c| [(c, false), (c, true)])
                {
                    if queues == 1 && matches!(kind, SpWfq | SpDwrr) {
                        continue; // needs a weighted queue next to the strict one
                    }
                    let mut cfg = PortConfig {
                        queues,
                        buffer: ByteSize(60_000),
                        scheduler: SchedulerConfig { kind, quantum: ByteSize(1), ..Default::default() },
                        pool: (limit != u64::MAX).then_some(ByteSize(limit)),
                        ..Default::default()
                    };
                    if dynamic {
                        // The dynamic buffer's books move with a pass as with the two steps.
                        cfg.buffer_policy = crate::buffer::BufferPolicy::Dynamic;
                        cfg.alpha = vec![0.5];
                        cfg.queue_min = vec![ByteSize(2_000)];
                    }
                    let mut m = MarkingConfig { scheme, ..Default::default() };
                    m.threshold.k = ByteSize(3_000);
                    m.tcn.threshold = Duration(4_000);
                    m.codel.mode = CodelMode::Drop;
                    m.codel.target = Duration(1_000);
                    m.codel.interval = Duration(10_000);
                    for non_ect in [NonEctPolicy::Pass, NonEctPolicy::Drop] {
                        m.non_ect = non_ect;
                        let fused = run(&cfg, &m, limit, true);
                        assert_eq!(
                            fused,
                            run(&cfg, &m, limit, false),
                            "{scheme:?} x {kind:?}, {queues} queues, dynamic {dynamic}"
                        );
                        assert!(fused.1 > 1_000, "{scheme:?} x {kind:?}: {} passes", fused.1);
                        checked += 1;
                        marked += (fused.2 > 0) as u32;
                        dropped += (fused.3 > 0) as u32;
                    }
                }
            }
        }
        assert_eq!(checked, 13 * 10 * 2 * 2);
        assert!(marked > 100 && dropped > 50, "{marked} runs marked, {dropped} dropped");
    }

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
}
