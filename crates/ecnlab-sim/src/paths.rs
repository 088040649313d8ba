//! The port operations of the wire, with a path compiled for each (scheduler, scheme) pair
//! the busy ports of the built-in and benchmark scenarios run (benches/DESIGN.md §12): one
//! match per operation picks the path, instead of a match on the scheduler and on the
//! scheme at each of their calls inside it. The portable library offers the mechanism
//! (`Port::split`, `Rest::with`, `Operation`); which pairs get a path is the benchmarks'
//! choice, made here: a one-queue strict-priority port (`Fifo`) without a scheme (hosts'
//! NICs), with DCTCP-RED or with TCN, and TCN over SP + DWRR. Every other pair, and a port
//! with a paused queue (`Sched::Paused`), runs the same code over the enums.
//!
//! Each pair is more code in the wire's two callers (`Wire::enqueue`, `Wire::start_tx`):
//! check the benchmark's instruction counts after adding one (DESIGN.md §12 says how it
//! can go wrong).

use crate::packet::Packet;
use ecnlab_core::buffer::BufferPool;
use ecnlab_core::marking::{Marking, NoMarking, Reason};
use ecnlab_core::port::{Dequeue, Enqueue, Operation, Pass, Port, Split};
use ecnlab_core::sched::{sp::Fifo, Sched};
use ecnlab_core::Nanos;

/// Run `op` on `port` through the path compiled for its pair, or the enums' path.
#[inline(always)]
fn run<O: Operation<Packet>>(port: &mut Port<Packet>, op: O) -> O::Out {
    let Split { sched, marking, rest } = port.split();
    match (sched, marking) {
        (Sched::Sp(_), Marking::None) if rest.n_queues() == 1 => op.run(rest.with(&mut Fifo, &mut NoMarking)),
        (Sched::Sp(_), Marking::Threshold(m)) if rest.n_queues() == 1 => op.run(rest.with(&mut Fifo, m)),
        (Sched::Sp(_), Marking::Tcn(m)) if rest.n_queues() == 1 => op.run(rest.with(&mut Fifo, m)),
        (Sched::SpDwrr(s), Marking::Tcn(m)) => op.run(rest.with(s, m)),
        (sched, marking) => op.run(rest.with(sched, marking)),
    }
}

/// [`Port::enqueue`].
#[inline(always)]
pub(crate) fn enqueue(
    port: &mut Port<Packet>,
    now: Nanos,
    pkt: Packet,
    pool: &mut BufferPool,
) -> Result<(), (Packet, Reason)> {
    run(port, Enqueue { now, pkt, pool })
}

/// [`Port::pass_with`].
pub(crate) fn pass_with(
    port: &mut Port<Packet>,
    now: Nanos,
    pkt: Packet,
    pool: &mut BufferPool,
    dropped: impl FnMut(Packet, usize, Reason),
) -> Result<Option<(Packet, usize)>, (Packet, Reason)> {
    run(port, Pass { now, pkt, pool, dropped })
}

/// [`Port::dequeue_with`].
#[inline(always)]
pub(crate) fn dequeue_with(
    port: &mut Port<Packet>,
    now: Nanos,
    pool: &mut BufferPool,
    dropped: impl FnMut(Packet, usize, Reason),
) -> Option<(Packet, usize)> {
    run(port, Dequeue { now, pool, dropped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use ecnlab_core::marking::{MarkingConfig, SchemeName};
    use ecnlab_core::port::PortConfig;
    use ecnlab_core::rng::Rng;
    use ecnlab_core::sched::{SchedulerConfig, SchedulerKind};
    use ecnlab_core::units::{ByteSize, Duration};

    /// The compiled paths are the enum path's code with the types known: the same random
    /// traffic through both, on every pair that has a path of its own, gives the same
    /// packets, marks, drops and counters.
    #[test]
    fn compiled_paths_decide_as_the_enum_path() {
        let go = |cfg: &PortConfig, m: &MarkingConfig, compiled: bool| {
            let mut p: Port<Packet> = Port::new(cfg, m, 1_000_000_000, 3).unwrap();
            let mut pool = BufferPool::unlimited();
            let mut rng = Rng::new(7);
            let mut log = vec![];
            for i in 0..20_000u32 {
                let now = i as u64 * 700;
                let ecn = if rng.below(10) > 0 { Ecn::Ect0 } else { Ecn::NotEct };
                let pkt = Packet {
                    flow: i,
                    size: 64 + rng.below(1437) as u32,
                    dscp: rng.below(8) as u8,
                    ecn,
                    ..Default::default()
                };
                let admitted =
                    if compiled { enqueue(&mut p, now, pkt, &mut pool) } else { p.enqueue(now, pkt, &mut pool) };
                log.push(format!("{:?}", admitted.err().map(|(d, r)| (d.flow, r))));
                if rng.below(9) < 4 {
                    let mut drops = vec![];
                    let dropped = |d: Packet, q, r| drops.push((d.flow, q, r));
                    let sent = if compiled {
                        dequeue_with(&mut p, now, &mut pool, dropped)
                    } else {
                        p.dequeue_with(now, &mut pool, dropped)
                    };
                    log.push(format!("{sent:?} {drops:?}"));
                }
                if p.is_empty() && rng.below(2) == 0 {
                    let pkt = Packet { flow: u32::MAX - i, size: 1500, ecn: Ecn::Ect0, ..Default::default() };
                    let sent = if compiled {
                        pass_with(&mut p, now, pkt, &mut pool, |_, _, _| {})
                    } else {
                        p.pass_with(now, pkt, &mut pool, |_, _, _| {})
                    };
                    log.push(format!("{sent:?}"));
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
                m.tcn.threshold = Duration(20_000);
                let (compiled, generic) = (go(&cfg, &m, true), go(&cfg, &m, false));
                let (_, marks, drops) = &compiled;
                assert!(*drops > 0 && (*marks > 0) == (scheme != SchemeName::None), "{scheme:?}: {marks} marks");
                assert_eq!(compiled, generic, "{queues} queues, {kind:?}, {scheme:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 6);
    }
}
