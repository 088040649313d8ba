//! Admission: which queue an arriving packet joins (classification by DSCP), whether the
//! buffer has a place for it ([`crate::buffer::admit`], the one admission rule), and the
//! marking scheme's enqueue hook, whose decision the port applies (`pipeline.rs`).

use super::pipeline::Parts;
use super::storage::{Books, Cold};
use super::PortPacket;
use crate::buffer::{self, BufferPool, Fill, Occupancy};
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
        if let Err(r) = buffer::admit(b, q, pool, size as u64) {
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
