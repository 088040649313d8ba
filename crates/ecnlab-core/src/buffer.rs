//! A switch's packet buffer: how many queues a port has, the service pool its ports share,
//! each queue's limit, and the admission rule that decides whether an arriving packet gets
//! a place.
//!
//! The rule today is the authors' (ns-2 and Linux code, REFERENCE-IMPLEMENTATIONS §2.8):
//! the port's buffer is shared first come first served by its queues (complete sharing,
//! tail drop: the arriving packet must fit whole), optionally capped per queue
//! (`switch.queue_limits`), and drawn from a [`BufferPool`] shared with the switch's other
//! ports (`switch.pool`). A refusal names the limit that refused: [`Reason::BufferFull`]
//! (the port's buffer), [`Reason::QueueLimit`], [`Reason::PoolFull`], checked in that order.
//!
//! The port ([`crate::port`]) applies the rule to its books; PFC ([`crate::pfc`]) reads the
//! pool's free bytes for its dynamic XOFF threshold.

use crate::marking::Reason;
use crate::units::ByteSize;

/// Queues a port may have: each has one bit in the masks of paused and lossless queues.
pub const MAX_QUEUES: usize = 64;

/// A buffer shared by several ports (a switch's service pool).
#[derive(Clone, Copy, Debug)]
pub struct BufferPool {
    pub limit_bytes: u64,
    pub used_bytes: u64,
}

impl BufferPool {
    /// A pool that never refuses (ports without a shared pool).
    pub fn unlimited() -> Self {
        BufferPool { limit_bytes: u64::MAX, used_bytes: 0 }
    }
    pub fn new(limit_bytes: u64) -> Self {
        BufferPool { limit_bytes, used_bytes: 0 }
    }
    /// Bytes not in use (all of them for an unlimited pool).
    pub fn free_bytes(&self) -> u64 {
        self.limit_bytes.saturating_sub(self.used_bytes)
    }
}

/// Each of `n` queues' limit in bytes (`u64::MAX`: none), from `switch.queue_limits`: empty
/// for none, one entry for the same limit on every queue, or one per queue.
pub fn queue_limits(limits: &[ByteSize], n: usize) -> Result<Vec<u64>, String> {
    match limits.len() {
        0 => Ok(vec![u64::MAX; n]),
        1 => Ok(vec![limits[0].0; n]),
        l if l == n => Ok(limits.iter().map(|b| b.0).collect()),
        l => Err(format!("switch.queue_limits: {l} limits given for {n} queues")),
    }
}

/// What admission reads of one part of the buffer: the bytes it holds and its size.
#[derive(Clone, Copy, Debug)]
pub struct Fill {
    pub used: u64,
    pub limit: u64,
}

/// What admission reads of a port, read as the rule needs it: a packet the port's buffer
/// refuses costs no read of its queue's lines (the port implements it over its books, every
/// read inlined).
pub trait Occupancy {
    /// The port's buffer: the bytes its queues hold, and its size.
    fn port(&self) -> Fill;
    /// Queue `q`: the bytes it holds, and its limit (`u64::MAX`: none).
    fn queue(&self, q: usize) -> Fill;
}

/// The admission rule: may a packet of `size` bytes join queue `q` of the port `o`, drawing
/// from `pool`? `Err` names the first limit it would pass.
#[inline(always)]
pub fn admit(o: &impl Occupancy, q: usize, pool: &BufferPool, size: u64) -> Result<(), Reason> {
    let port = o.port();
    if port.used + size > port.limit {
        return Err(Reason::BufferFull);
    }
    let queue = o.queue(q);
    if queue.used + size > queue.limit {
        return Err(Reason::QueueLimit);
    }
    if pool.used_bytes.saturating_add(size) > pool.limit_bytes {
        return Err(Reason::PoolFull);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port of one queue: (its fill, the queue's fill).
    struct One(Fill, Fill);
    impl Occupancy for One {
        fn port(&self) -> Fill {
            self.0
        }
        fn queue(&self, _: usize) -> Fill {
            self.1
        }
    }

    #[test]
    fn the_first_limit_passed_is_named() {
        let fill = |used, limit| Fill { used, limit };
        let pool = BufferPool::new(10_000);
        assert_eq!(admit(&One(fill(3_000, 4_500), fill(0, u64::MAX)), 0, &pool, 1_500), Ok(()));
        assert_eq!(admit(&One(fill(3_001, 4_500), fill(0, 1)), 0, &pool, 1_500), Err(Reason::BufferFull));
        assert_eq!(admit(&One(fill(0, 4_500), fill(1_000, 2_000)), 0, &pool, 1_500), Err(Reason::QueueLimit));
        let full = BufferPool { limit_bytes: 10_000, used_bytes: 9_000 };
        assert_eq!(admit(&One(fill(0, 4_500), fill(0, u64::MAX)), 0, &full, 1_500), Err(Reason::PoolFull));
        let unlimited = BufferPool::unlimited();
        assert_eq!(admit(&One(fill(0, 4_500), fill(0, u64::MAX)), 0, &unlimited, 1_500), Ok(()));
        assert_eq!(BufferPool::unlimited().free_bytes(), u64::MAX);
        assert_eq!(full.free_bytes(), 1_000);
    }

    #[test]
    fn queue_limits_are_none_one_for_all_or_one_each() {
        let b = |v: u64| ByteSize(v);
        assert_eq!(queue_limits(&[], 2), Ok(vec![u64::MAX; 2]));
        assert_eq!(queue_limits(&[b(5)], 3), Ok(vec![5; 3]));
        assert_eq!(queue_limits(&[b(5), b(6)], 2), Ok(vec![5, 6]));
        assert_eq!(queue_limits(&[b(5), b(6)], 3).unwrap_err(), "switch.queue_limits: 2 limits given for 3 queues");
    }
}
