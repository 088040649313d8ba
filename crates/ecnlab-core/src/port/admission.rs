//! Admission: which queue an arriving packet joins (classification by DSCP), whether the
//! buffer has a place for it ([`crate::buffer::admit`], the one admission rule), and the
//! marking scheme's enqueue hook, whose decision the port applies (`pipeline.rs`).

use super::pipeline::Parts;
use super::storage::{Books, Cold};
use super::PortPacket;
use crate::buffer::{self, BufferPool, DynamicBuffer, Fill, Occupancy};
use crate::marking::{Decision, MarkingScheme, PacketView, QueueState, Reason};
use crate::sched::Scheduler;
use crate::units::Nanos;

impl<P> Books<P> {
    /// The queue of a packet of DSCP `dscp`.
    #[inline]
    pub fn classify(&self, c: &Cold, dscp: u8) -> usize {
        if self.default_dscp_map {
            ((dscp & 63) as usize).min(self.occ.len() - 1)
        } else {
            c.dscp_map[(dscp & 63) as usize] as usize
        }
    }
}

/// The dynamic policy's admission (`crate::buffer`'s rules 1 to 4), out of the static
/// rule's path.
#[cold]
#[inline(never)]
fn admit_dynamic<P>(b: &Books<P>, c: &Cold, q: usize, pool: &BufferPool, size: u64) -> Result<(), Reason> {
    let dynamic = c.dynamic.as_deref().expect("a dynamic buffer's books");
    buffer::memory(&Dynamic(b, dynamic), q, size)?;
    dynamic.place(q, b.occ[q].bytes, size, pool).map(|_| ())
}

/// A dynamic port's occupancy as rules 1 and 2 read it: its buffer and queue caps are the
/// dynamic buffer's (the books' are 0, the static rule's exit).
struct Dynamic<'a, P>(&'a Books<P>, &'a DynamicBuffer);

impl<P> Occupancy for Dynamic<'_, P> {
    fn port(&self) -> Fill {
        Fill { used: self.0.port_bytes, limit: self.1.buffer_bytes() }
    }
    fn queue(&self, q: usize) -> Fill {
        Fill { used: self.0.occ[q].bytes, limit: self.0.lanes[q].limit }
    }
}

/// [`Books::draw`] under the dynamic policy, out of the static rule's path.
#[cold]
#[inline(never)]
fn take_dynamic(c: &mut Cold, q: usize, bytes: u64, size: u64, pool: &mut BufferPool) {
    c.dynamic.as_deref_mut().expect("a dynamic buffer's books").take(q, bytes, size, pool);
}

/// [`Books::give_back`] under the dynamic policy, out of the static rule's path.
#[cold]
#[inline(never)]
fn release_dynamic(c: &mut Cold, q: usize, bytes: u64, size: u64, pool: &mut BufferPool) {
    c.dynamic.as_deref_mut().expect("a dynamic buffer's books").release(q, bytes, size, pool);
}

impl<P> Books<P> {
    /// Queue `q`, holding a new packet of `size` bytes, draws it from the pool: all of it
    /// under the static rule, its shared part (or its headroom) under the dynamic one.
    #[inline(always)]
    pub(super) fn draw(&self, c: &mut Cold, q: usize, size: u32, pool: &mut BufferPool) {
        if self.dynamic_buffer {
            take_dynamic(c, q, self.occ[q].bytes - size as u64, size as u64, pool);
        } else {
            pool.used_bytes += size as u64;
        }
    }

    /// A packet of `size` bytes has left queue `q`: what it drew goes back.
    #[inline(always)]
    pub(super) fn give_back(&self, c: &mut Cold, q: usize, size: u32, pool: &mut BufferPool) {
        if self.dynamic_buffer {
            release_dynamic(c, q, self.occ[q].bytes + size as u64, size as u64, pool);
        } else {
            pool.used_bytes -= size as u64;
        }
    }
}

impl<P> Occupancy for Books<P> {
    #[inline(always)]
    fn port(&self) -> Fill {
        Fill { used: self.port_bytes, limit: self.buffer_bytes }
    }
    #[inline(always)]
    fn queue(&self, q: usize) -> Fill {
        Fill { used: self.occ[q].bytes, limit: self.lanes[q].limit }
    }
}

impl<P: PortPacket, S: Scheduler, M: MarkingScheme> Parts<'_, P, S, M> {
    /// Admission and the enqueue hook: the packet (maybe marked), its queue and size.
    #[inline(always)]
    pub(super) fn admit(
        &mut self,
        now: Nanos,
        mut pkt: P,
        pool: &mut BufferPool,
    ) -> Result<(P, usize, u32), (P, Reason)> {
        let size = pkt.wire_bytes();
        let q = self.b.classify(self.c, pkt.dscp());
        let b = &mut *self.b;
        // A port under the dynamic policy has no static buffer (`Books::buffer_bytes` 0): its
        // packets leave the static rule at its first comparison, for the dynamic one.
        if let Err(r) = buffer::admit(b, q, pool, size as u64).or_else(|r| {
            if b.dynamic_buffer {
                admit_dynamic(b, self.c, q, pool, size as u64)
            } else {
                Err(r)
            }
        }) {
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, port, TestPkt};
    use super::super::{Port, PortConfig};
    use crate::buffer::BufferPool;
    use crate::marking::{MarkingConfig, Reason, SchemeName};
    use crate::units::ByteSize;

    /// The dynamic buffer through a port (`crate::buffer`'s hand-computed case): 100 KB, two
    /// queues of alpha 1 and 1/8, 1 KB packets: queue 0 keeps 50, queue 1 then 5, the rest
    /// dropped as `dynamic_threshold`; the books balance and the pool holds the shared bytes.
    #[test]
    fn the_dynamic_buffer_admits_by_alpha_and_drops_by_its_reason() {
        use crate::buffer::BufferPolicy;
        let cfg = PortConfig {
            queues: 2,
            buffer: ByteSize(100_000),
            buffer_policy: BufferPolicy::Dynamic,
            alpha: vec![1.0, 0.125],
            ..Default::default()
        };
        let mut p: Port<TestPkt> = Port::new(&cfg, &MarkingConfig::default(), 10_000_000_000, 1).unwrap();
        let mut pool = BufferPool::unlimited();
        let offer = |p: &mut Port<TestPkt>, pool: &mut BufferPool, dscp: u8, n: u32| {
            (0..n).filter(|&i| p.enqueue(0, TestPkt { size: 1_000, ..pkt(i, dscp) }, pool).is_ok()).count()
        };
        assert_eq!(offer(&mut p, &mut pool, 0, 60), 50);
        assert_eq!(offer(&mut p, &mut pool, 1, 10), 5);
        let st = p.stats();
        assert_eq!(
            (st[0].drops[Reason::DynamicThreshold as usize], st[1].drops[Reason::DynamicThreshold as usize]),
            (10, 5)
        );
        assert_eq!((p.bytes(), p.pool_bytes()), (55_000, 55_000));
        assert_eq!(p.check_invariants(true), Ok(()));
        while p.dequeue(1, &mut pool).is_some() {}
        assert_eq!((p.pool_bytes(), p.check_invariants(true)), (0, Ok(())));
        // The static rule's keys are refused without the policy, naming the field.
        let bad = PortConfig { alpha: vec![1.0], ..Default::default() };
        let e = Port::<TestPkt>::new(&bad, &MarkingConfig::default(), 1, 0).err().unwrap();
        assert_eq!(e, "switch.alpha: only under switch.buffer_policy = \"dynamic\"");
    }

    /// A lossless queue (PFC) over its threshold takes the headroom, then drops as
    /// `headroom_full`; its headroom bytes are not drawn from the pool.
    #[test]
    fn a_lossless_queue_uses_the_headroom() {
        use crate::buffer::BufferPolicy;
        let mut cfg = PortConfig {
            queues: 2,
            buffer: ByteSize(50_000),
            pool: Some(ByteSize(20_000)),
            buffer_policy: BufferPolicy::Dynamic,
            headroom: ByteSize(3_000),
            ..Default::default()
        };
        cfg.pfc.enabled = true;
        cfg.pfc.queues = vec![0];
        let mut p: Port<TestPkt> = Port::new(&cfg, &MarkingConfig::default(), 10_000_000_000, 1).unwrap();
        let mut pool = BufferPool::new(20_000);
        // The pool is the shared buffer: k <= 20 - (k - 1), 10 KB shared, then 3 KB of headroom.
        let sent = (0..20).filter(|&i| p.enqueue(0, TestPkt { size: 1_000, ..pkt(i, 0) }, &mut pool).is_ok()).count();
        assert_eq!(sent, 13);
        assert_eq!(p.stats()[0].drops[Reason::HeadroomFull as usize], 7);
        assert_eq!((pool.used_bytes, p.pool_bytes(), p.bytes()), (10_000, 10_000, 13_000));
        assert_eq!(p.check_invariants(true), Ok(()));
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
}
