//! A switch's packet buffer: how many queues a port has, the service pool its ports share,
//! each queue's limit, and the admission rules that decide whether an arriving packet gets
//! a place (`switch.buffer_policy`). Each rule is written here once; the port
//! ([`crate::port`]) applies it to its books, in the simulator and in the emulated switch
//! alike; PFC ([`crate::pfc`]) reads the pool's free bytes for its dynamic XOFF threshold.
//!
//! **Static** (the default, [`admit`]): the authors' rule (ns-2 and Linux code,
//! REFERENCE-IMPLEMENTATIONS §2.8): the port's buffer is shared first come first served by
//! its queues (complete sharing, tail drop: the arriving packet must fit whole), optionally
//! capped per queue (`switch.queue_limits`), and drawn from a [`BufferPool`] shared with the
//! switch's other ports (`switch.pool`). A refusal names the limit that refused:
//! [`Reason::BufferFull`] (the port's buffer), [`Reason::QueueLimit`], [`Reason::PoolFull`],
//! checked in that order.
//!
//! **Dynamic** ([`DynamicBuffer`]): the dynamic threshold of Choudhury and Hahne ("Dynamic
//! queue length thresholds for shared-memory packet switches", IEEE/ACM ToN 6(2), 1998), as
//! merchant switch ASICs run it per queue and service pool: a queue is admitted a packet
//! while its length stays within `alpha x (B - Q)`, B the shared buffer and Q the bytes of
//! it in use. With N queues backlogged at once, each settles at `alpha B / (1 + N alpha)`
//! and `B / (1 + N alpha)` stays free for queues that become active. The parts, in SAI's
//! words (`saibuffer.h`, the interface SONiC drives the ASICs through; SONiC's
//! `BUFFER_PROFILE` table writes them as `size`, `dynamic_th` and, for a priority group,
//! `xoff`):
//! - `switch.queue_min` (`SAI_BUFFER_PROFILE_ATTR_RESERVED_BUFFER_SIZE`, SONiC `size`): a
//!   guaranteed minimum per queue, reserved apart from the shared buffer and used first; a
//!   queue's bytes beyond it are its shared use;
//! - `switch.alpha` (`SAI_BUFFER_PROFILE_ATTR_SHARED_DYNAMIC_TH`: "the threshold is set to
//!   the 2^n of available buffer of the pool"; SONiC's `dynamic_th` is that n, so
//!   `alpha = 2^dynamic_th`: `dynamic_th = 0` is alpha 1, `-3` is 1/8, `3` is 8), per queue;
//! - `switch.headroom` (`SAI_BUFFER_PROFILE_ATTR_XOFF_TH`, "the maximum available buffer
//!   for a PG after XOFF is generated (i.e. headroom buffer)"): bytes reserved for the
//!   lossless queues of `[switch.pfc]`, which take a packet the threshold refuses.
//!
//! The shared buffer B is the switch's pool (`switch.pool`) when the port draws from one,
//! else the port's own buffer less its queues' minimums and the headroom. A packet of `s`
//! bytes for queue q, holding `u` bytes of which `h` in headroom, minimum `m`:
//! 1. `port bytes + s > switch.buffer`: [`Reason::BufferFull`] (the port's memory);
//! 2. `u + s > switch.queue_limits[q]`: [`Reason::QueueLimit`];
//! 3. the shared use after it, `max(0, u + s - h - m)`, above `alpha_q x (B - Q)`:
//!    [`Reason::DynamicThreshold`]; or the shared bytes it adds above `B - Q`:
//!    [`Reason::PoolFull`] with a pool, [`Reason::BufferFull`] without (alpha > 1 lets a
//!    queue's threshold pass the free bytes);
//! 4. a packet refused at 3 of a lossless queue goes into the headroom if it fits there,
//!    else [`Reason::HeadroomFull`].
//!
//! The threshold is compared with the queue's shared use *after* the arriving packet, as
//! HPCC's ns-3 MMU does (`switch-mmu.cc`, `CheckIngressAdmission`: `psize + shared_used >
//! threshold` refuses), so that the packet must fit whole, as in the static rule. A packet
//! leaving a queue frees its headroom bytes first (`RemoveFromIngressAdmission` there).
//! Deviations from an ASIC: ecnlab admits at the egress queue only, so the headroom is the
//! egress port's, shared by its lossless queues, where an ASIC keeps it per ingress priority
//! group (PFC itself stays the ingress's: [`crate::pfc`]); buffers are counted in bytes,
//! not cells.

use crate::marking::Reason;
use crate::units::ByteSize;
use serde::{Deserialize, Serialize};

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
    memory(o, q, size)?;
    if pool.used_bytes.saturating_add(size) > pool.limit_bytes {
        return Err(Reason::PoolFull);
    }
    Ok(())
}

/// The limits both policies check first: the port's memory ([`Reason::BufferFull`]) and
/// the queue's cap ([`Reason::QueueLimit`]).
#[inline(always)]
pub fn memory(o: &impl Occupancy, q: usize, size: u64) -> Result<(), Reason> {
    let port = o.port();
    if port.used + size > port.limit {
        return Err(Reason::BufferFull);
    }
    let queue = o.queue(q);
    if queue.used + size > queue.limit {
        return Err(Reason::QueueLimit);
    }
    Ok(())
}

/// `switch.buffer_policy`: how a port's queues share its buffer (or the pool).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BufferPolicy {
    /// First come first served, tail drop, optional per-queue caps ([`admit`]).
    #[default]
    Static,
    /// Choudhury and Hahne's dynamic threshold over the free shared buffer, with guaranteed
    /// minimums and PFC headroom ([`DynamicBuffer`]).
    Dynamic,
}

/// Where an admitted packet's bytes go: the queue's shared use grows by `shared` (its
/// minimum takes the rest), or the whole packet goes into the headroom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Shared(u64),
    Headroom,
}

/// One port's dynamic-threshold buffer (module doc): its parameters and its state.
#[derive(Clone, Debug)]
pub struct DynamicBuffer {
    // ---- parameters ----
    /// `alpha` of each queue.
    alpha: Box<[f64]>,
    /// Guaranteed minimum of each queue, bytes.
    min: Box<[u64]>,
    /// Headroom of the port's lossless queues, bytes.
    headroom: u64,
    /// The port's buffer (`switch.buffer`).
    buffer: u64,
    /// The lossless queues (PFC), one bit each.
    lossless: u64,
    /// The shared buffer when the port draws from no pool: its buffer less the minimums
    /// and the headroom.
    own_shared: u64,
    // ---- state ----
    /// Bytes of each queue in the headroom.
    in_headroom: Box<[u64]>,
    /// The port's shared use: the bytes of its queues beyond their minimums and headroom
    /// (what it draws from its pool).
    shared_used: u64,
    /// Bytes of the port's headroom in use.
    headroom_used: u64,
}

/// What a port's dynamic buffer is built from: `switch.*` of the scenario.
pub struct DynamicParams<'a> {
    pub queues: usize,
    pub buffer: u64,
    pub alpha: &'a [f64],
    pub queue_min: &'a [ByteSize],
    pub headroom: ByteSize,
    /// The lossless queues of `[switch.pfc]` (0 when PFC is off).
    pub lossless: u64,
}

/// Per-queue values from a list: empty for `default` on every queue, one entry for all, or
/// one per queue. Errors name `switch.<key>`.
fn per_queue<T: Copy>(key: &str, v: &[T], n: usize, default: T) -> Result<Vec<T>, String> {
    match v.len() {
        0 => Ok(vec![default; n]),
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        l => Err(format!("switch.{key}: {l} values given for {n} queues")),
    }
}

impl DynamicBuffer {
    /// The buffer of a port under `policy`: None under the static rule (whose keys must then
    /// be unset). Errors name the field (`switch.*`).
    pub fn build(policy: BufferPolicy, p: &DynamicParams) -> Result<Option<DynamicBuffer>, String> {
        if policy == BufferPolicy::Static {
            let set = [
                ("alpha", !p.alpha.is_empty()),
                ("queue_min", !p.queue_min.is_empty()),
                ("headroom", p.headroom.0 > 0),
            ];
            return match set.iter().find(|(_, on)| *on) {
                Some((key, _)) => Err(format!("switch.{key}: only under switch.buffer_policy = \"dynamic\"")),
                None => Ok(None),
            };
        }
        let alpha = per_queue("alpha", p.alpha, p.queues, 1.0)?;
        if let Some(a) = alpha.iter().find(|a| !(a.is_finite() && **a > 0.0 && **a <= 64.0)) {
            return Err(format!("switch.alpha: {a} is not in (0, 64] (SONiC's dynamic_th -6..3 is 1/64..8)"));
        }
        let min: Vec<u64> = per_queue("queue_min", p.queue_min, p.queues, ByteSize(0))?.iter().map(|b| b.0).collect();
        if p.headroom.0 > 0 && p.lossless == 0 {
            return Err("switch.headroom: holds the lossless queues' packets, and switch.pfc is not enabled".into());
        }
        let reserved = min.iter().sum::<u64>().saturating_add(p.headroom.0);
        if reserved >= p.buffer {
            return Err(format!(
                "switch.queue_min: the minimums and switch.headroom reserve {reserved} B, not below switch.buffer = {} B \
                 (no shared buffer would be left)",
                p.buffer
            ));
        }
        Ok(Some(DynamicBuffer {
            alpha: alpha.into(),
            min: min.into(),
            headroom: p.headroom.0,
            buffer: p.buffer,
            lossless: p.lossless,
            own_shared: p.buffer - reserved,
            in_headroom: vec![0; p.queues].into(),
            shared_used: 0,
            headroom_used: 0,
        }))
    }

    /// Queue `q`'s shared use when it holds `bytes`, `in_headroom` of them in the headroom.
    #[inline]
    fn shared_of(&self, q: usize, bytes: u64, in_headroom: u64) -> u64 {
        bytes.saturating_sub(in_headroom).saturating_sub(self.min[q])
    }

    /// The shared buffer and the bytes of it in use: the pool's, or the port's own.
    #[inline]
    fn shared(&self, pool: &BufferPool) -> (u64, u64) {
        if pool.limit_bytes == u64::MAX {
            (self.own_shared, self.shared_used)
        } else {
            (pool.limit_bytes, pool.used_bytes)
        }
    }

    /// Queue `q`'s dynamic threshold now: `alpha_q x` the free shared bytes.
    pub fn threshold(&self, q: usize, pool: &BufferPool) -> u64 {
        let (size, used) = self.shared(pool);
        (self.alpha[q] * size.saturating_sub(used) as f64) as u64
    }

    /// Rules 3 and 4 of the module doc for a packet of `size` bytes arriving at queue `q`,
    /// which holds `bytes` (rules 1 and 2, the port's memory and the queue's cap, are
    /// [`memory`], checked first).
    pub fn place(&self, q: usize, bytes: u64, size: u64, pool: &BufferPool) -> Result<Place, Reason> {
        let h = self.in_headroom[q];
        let (before, after) = (self.shared_of(q, bytes, h), self.shared_of(q, bytes + size, h));
        let (shared, used) = self.shared(pool);
        let refusal = if after as f64 > self.alpha[q] * shared.saturating_sub(used) as f64 {
            Reason::DynamicThreshold
        } else if used + (after - before) > shared {
            if pool.limit_bytes == u64::MAX {
                Reason::BufferFull
            } else {
                Reason::PoolFull
            }
        } else {
            return Ok(Place::Shared(after - before));
        };
        if self.lossless >> q & 1 == 0 {
            Err(refusal)
        } else if self.headroom_used + size <= self.headroom {
            Ok(Place::Headroom)
        } else {
            Err(Reason::HeadroomFull)
        }
    }

    /// Book a packet of `size` bytes that joins queue `q`, which held `bytes`, where
    /// [`DynamicBuffer::place`] put it (nothing has changed since).
    pub fn take(&mut self, q: usize, bytes: u64, size: u64, pool: &mut BufferPool) {
        match self.place(q, bytes, size, pool) {
            Ok(Place::Shared(s)) => {
                self.shared_used += s;
                pool.used_bytes += s;
            }
            Ok(Place::Headroom) => {
                self.in_headroom[q] += size;
                self.headroom_used += size;
            }
            // A packet of 0 bytes passes the static rule's exit (`port/admission.rs`): nothing to book.
            Err(r) => debug_assert_eq!(size, 0, "booking a packet its admission refused ({r:?})"),
        }
    }

    /// A packet of `size` bytes leaves queue `q`, which held `bytes` with it: its headroom
    /// bytes go first, then its shared ones.
    pub fn release(&mut self, q: usize, bytes: u64, size: u64, pool: &mut BufferPool) {
        let h = self.in_headroom[q];
        let from_headroom = h.min(size);
        let before = self.shared_of(q, bytes, h);
        let after = self.shared_of(q, bytes - size, h - from_headroom);
        self.in_headroom[q] -= from_headroom;
        self.headroom_used -= from_headroom;
        self.shared_used -= before - after;
        pool.used_bytes -= before - after;
    }

    /// The port's buffer (`switch.buffer`): rule 1's limit.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer
    }

    /// The port's shared use: the bytes it draws from its pool.
    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }

    /// Check the books against the queues' lengths `bytes`: the headroom and shared use are
    /// what the queues hold beyond their minimums. Errors name the queue.
    pub fn check(&self, bytes: impl Iterator<Item = u64>) -> Result<(), String> {
        let mut shared = 0;
        for (q, b) in bytes.enumerate() {
            if self.in_headroom[q] > b {
                return Err(format!("queue {q}: {} B in headroom, {b} B queued", self.in_headroom[q]));
            }
            shared += self.shared_of(q, b, self.in_headroom[q]);
        }
        if shared != self.shared_used {
            return Err(format!("the dynamic buffer counts {} B shared, its queues hold {shared} B", self.shared_used));
        }
        let h: u64 = self.in_headroom.iter().sum();
        if h != self.headroom_used || h > self.headroom {
            return Err(format!("{h} B in headroom, counted {} B of {} B", self.headroom_used, self.headroom));
        }
        Ok(())
    }
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

    fn dynamic(queues: usize, buffer: u64, alpha: &[f64], min: &[u64], headroom: u64, lossless: u64) -> DynamicBuffer {
        let queue_min: Vec<ByteSize> = min.iter().map(|&b| ByteSize(b)).collect();
        let p = DynamicParams { queues, buffer, alpha, queue_min: &queue_min, headroom: ByteSize(headroom), lossless };
        DynamicBuffer::build(BufferPolicy::Dynamic, &p).unwrap().unwrap()
    }

    /// A port's queues as the dynamic buffer sees them: their lengths beside its books.
    struct Queues {
        d: DynamicBuffer,
        bytes: Vec<u64>,
        pool: BufferPool,
    }

    impl Queues {
        /// Offer `size` bytes to queue `q`; Ok if admitted (and booked).
        fn offer(&mut self, q: usize, size: u64) -> Result<Place, Reason> {
            let place = self.d.place(q, self.bytes[q], size, &self.pool)?;
            self.d.take(q, self.bytes[q], size, &mut self.pool);
            self.bytes[q] += size;
            Ok(place)
        }
        fn leave(&mut self, q: usize, size: u64) {
            self.d.release(q, self.bytes[q], size, &mut self.pool);
            self.bytes[q] -= size;
        }
        /// Fill queue `q` with `size`-byte packets until it refuses one; the refusal.
        fn fill(&mut self, q: usize, size: u64) -> Reason {
            loop {
                if let Err(r) = self.offer(q, size) {
                    return r;
                }
            }
        }
    }

    fn queues(d: DynamicBuffer, pool: BufferPool) -> Queues {
        let n = d.alpha.len();
        Queues { d, bytes: vec![0; n], pool }
    }

    /// Two queues on a 100 KB buffer, 1 KB packets, alpha 1 and 1/8, by hand. The k-th packet
    /// of a queue is admitted while k (its length after it, KB) <= alpha x the free KB before
    /// it. Queue 0 alone: k <= 100 - (k - 1), so 50 packets. Then queue 1, alpha 1/8: k <=
    /// (50 - (k - 1)) / 8, 9k <= 51: 5 packets. Queue 0's 51st: 51 > 45.
    #[test]
    fn two_queues_alpha_one_and_one_eighth() {
        let mut qs = queues(dynamic(2, 100_000, &[1.0, 0.125], &[], 0, 0), BufferPool::unlimited());
        assert_eq!(qs.fill(0, 1_000), Reason::DynamicThreshold);
        assert_eq!(qs.bytes[0], 50_000);
        assert_eq!(qs.d.threshold(0, &qs.pool), 50_000);
        assert_eq!(qs.fill(1, 1_000), Reason::DynamicThreshold);
        assert_eq!(qs.bytes[1], 5_000);
        assert_eq!(qs.offer(0, 1_000), Err(Reason::DynamicThreshold));
        for _ in 0..5 {
            qs.leave(1, 1_000);
        }
        assert_eq!(qs.d.shared_used(), 50_000);
        assert_eq!(qs.offer(1, 1_000), Ok(Place::Shared(1_000)));
        qs.d.check(qs.bytes.iter().copied()).unwrap();
    }

    /// The steady state of Choudhury and Hahne: N queues backlogged at once, each with alpha,
    /// settle at alpha B / (1 + N alpha) each (within a packet), leaving B / (1 + N alpha)
    /// free. Filled in turn, packet by packet, until none is admitted.
    #[test]
    fn n_backlogged_queues_each_hold_alpha_b_over_one_plus_n_alpha() {
        let b = 1_000_000u64;
        for (n, alpha) in [(1, 1.0), (2, 1.0), (4, 1.0), (4, 0.5), (8, 2.0), (3, 0.125), (2, 8.0)] {
            let mut qs = queues(dynamic(n, b, &[alpha], &[], 0, 0), BufferPool::unlimited());
            let pkt = 100;
            while (0..n).map(|q| qs.offer(q, pkt).is_ok() as usize).sum::<usize>() > 0 {}
            let each = alpha * b as f64 / (1.0 + n as f64 * alpha);
            for q in 0..n {
                let got = qs.bytes[q] as f64;
                assert!((got - each).abs() <= (n as f64 + 1.0) * pkt as f64, "N={n} alpha={alpha}: {got} vs {each}");
            }
            let free = (b - qs.d.shared_used()) as f64;
            assert!(
                (free - b as f64 / (1.0 + n as f64 * alpha)).abs() <= (n as f64 + 1.0) * pkt as f64 * alpha.max(1.0)
            );
        }
    }

    /// The guaranteed minimum is used first and counts apart: two queues of 10 KB minimum on
    /// 100 KB leave 80 KB shared; queue 0 takes its 10 KB without touching it, then its
    /// shared use obeys the threshold (alpha 1: k <= 80 - (k - 1), 40 KB more). A queue's
    /// bytes beyond its minimum are its shared use, whichever packet crosses it.
    #[test]
    fn the_minimum_is_used_first() {
        let mut qs = queues(dynamic(2, 100_000, &[1.0], &[10_000], 0, 0), BufferPool::unlimited());
        for _ in 0..10 {
            assert_eq!(qs.offer(0, 1_000), Ok(Place::Shared(0)));
        }
        assert_eq!(qs.d.shared_used(), 0);
        assert_eq!(qs.d.own_shared, 80_000, "100 KB less two minimums of 10 KB");
        assert_eq!(qs.fill(0, 1_000), Reason::DynamicThreshold);
        assert_eq!(qs.bytes[0], 10_000 + 40_000, "40 <= 80 - 40 (KB)");
        // A packet across the minimum: 9.5 KB held in queue 1, 1 KB more puts 0.5 KB in shared.
        for _ in 0..19 {
            qs.offer(1, 500).unwrap();
        }
        assert_eq!(qs.offer(1, 1_000), Ok(Place::Shared(500)));
        qs.leave(1, 1_000);
        assert_eq!(qs.d.shared_used(), 40_000);
        qs.d.check(qs.bytes.iter().copied()).unwrap();
    }

    /// A lossless queue's packets over the threshold go into the headroom, and leave it
    /// first; a lossy queue's are dropped; a full headroom drops with its own reason.
    #[test]
    fn the_headroom_takes_what_the_threshold_refuses_of_lossless_queues() {
        let mut qs = queues(dynamic(2, 100_000, &[1.0], &[], 4_000, 0b01), BufferPool::unlimited());
        assert_eq!(qs.d.own_shared, 96_000);
        assert_eq!(qs.fill(1, 1_000), Reason::DynamicThreshold, "queue 1 is lossy");
        assert_eq!(qs.bytes[1], 48_000);
        // 96 KB shared: queue 1 takes k <= 96 - (k - 1), 48 KB; queue 0 then k <= 48 - (k - 1),
        // 24 KB, and its 25th packet goes into the headroom, as do the next three.
        while qs.offer(0, 1_000) == Ok(Place::Shared(1_000)) {}
        assert_eq!(qs.bytes[0], 24_000 + 1_000);
        assert_eq!(qs.fill(0, 1_000), Reason::HeadroomFull);
        assert_eq!(qs.bytes[0], 24_000 + 4_000, "4 KB of headroom");
        qs.leave(0, 1_000);
        assert_eq!((qs.d.headroom_used, qs.d.shared_used()), (3_000, 72_000), "the headroom empties first");
        qs.d.check(qs.bytes.iter().copied()).unwrap();
    }

    /// With a pool the shared buffer is the pool's: two ports' queues see one free count.
    /// Port a (alpha 1) takes k <= 30 - (k - 1): 15 KB of the 30 KB pool; port b's alpha 8
    /// admits a 10 KB packet, but the next one (20 KB <= 8 x 5 KB) does not fit the 5 KB left.
    #[test]
    fn a_pool_is_the_shared_buffer_of_its_ports() {
        let pool = BufferPool::new(30_000);
        let mut a = queues(dynamic(1, 1_000_000, &[1.0], &[], 0, 0), pool);
        assert_eq!(a.fill(0, 1_000), Reason::DynamicThreshold);
        assert_eq!((a.bytes[0], a.pool.used_bytes), (15_000, 15_000));
        let mut b = queues(dynamic(1, 1_000_000, &[8.0], &[], 0, 0), a.pool);
        assert_eq!(b.offer(0, 10_000), Ok(Place::Shared(10_000)));
        assert_eq!(b.offer(0, 10_000), Err(Reason::PoolFull));
        assert_eq!(b.pool.used_bytes, 25_000);
    }

    #[test]
    fn the_dynamic_keys_are_checked_and_named() {
        let p = |alpha: &'static [f64], min: &'static [ByteSize], headroom: u64, lossless: u64| DynamicParams {
            queues: 2,
            buffer: 10_000,
            alpha,
            queue_min: min,
            headroom: ByteSize(headroom),
            lossless,
        };
        let e = |policy, p: DynamicParams| DynamicBuffer::build(policy, &p).unwrap_err();
        assert_eq!(
            e(BufferPolicy::Static, p(&[1.0], &[], 0, 0)),
            "switch.alpha: only under switch.buffer_policy = \"dynamic\""
        );
        assert_eq!(
            e(BufferPolicy::Static, p(&[], &[], 10, 1)),
            "switch.headroom: only under switch.buffer_policy = \"dynamic\""
        );
        assert!(e(BufferPolicy::Dynamic, p(&[0.0], &[], 0, 0)).starts_with("switch.alpha: 0 is not in (0, 64]"));
        assert_eq!(
            e(BufferPolicy::Dynamic, p(&[1.0, 1.0, 1.0], &[], 0, 0)),
            "switch.alpha: 3 values given for 2 queues"
        );
        assert!(e(BufferPolicy::Dynamic, p(&[], &[], 10, 0)).starts_with("switch.headroom: holds the lossless"));
        assert!(
            e(BufferPolicy::Dynamic, p(&[], &[ByteSize(5_000)], 0, 0)).starts_with("switch.queue_min: the minimums")
        );
        assert!(DynamicBuffer::build(BufferPolicy::Static, &p(&[], &[], 0, 0)).unwrap().is_none());
    }

    proptest::proptest! {
        /// Whatever the parameters and the traffic, the dynamic buffer never holds more than
        /// the buffer: the port's bytes within `switch.buffer`, the shared use within the
        /// shared buffer, the headroom within its size, and no queue's shared use above its
        /// threshold when its packet was admitted; the books balance after every step.
        #[test]
        fn the_dynamic_buffer_never_exceeds_the_buffer(
            n in 1usize..6,
            alpha in proptest::collection::vec(0.01f64..16.0, 1..6),
            min in 0u64..4_000,
            headroom in 0u64..8_000,
            buffer in 20_000u64..200_000,
            ops in proptest::collection::vec((0usize..6, 64u64..3_000, proptest::bool::ANY), 1..600),
        ) {
            let alpha: Vec<f64> = alpha.iter().cycle().take(n).copied().collect();
            let lossless = if headroom > 0 { 1 } else { 0 };
            // Minimums and headroom that leave no shared buffer are a scenario error (refused
            // by build, tested apart), not a buffer to exercise: up to 5 x 4 KB + 8 KB here
            // against a buffer from 20 KB, which failed about one run in two.
            let queue_min = [ByteSize(min)];
            let p = DynamicParams { queues: n, buffer, alpha: &alpha, queue_min: &queue_min, headroom: ByteSize(headroom), lossless };
            proptest::prop_assume!(DynamicBuffer::build(BufferPolicy::Dynamic, &p).is_ok());
            let mut qs = queues(dynamic(n, buffer, &alpha, &[min], headroom, lossless), BufferPool::unlimited());
            let mut fifos: Vec<std::collections::VecDeque<u64>> = vec![Default::default(); n];
            for (q, size, arrive) in ops {
                let q = q % n;
                if arrive {
                    let total: u64 = qs.bytes.iter().sum();
                    if total + size > buffer {
                        continue; // rule 1, the port's (`memory`)
                    }
                    let free = qs.d.own_shared - qs.d.shared_used();
                    if let Ok(place) = qs.offer(q, size) {
                        fifos[q].push_back(size);
                        if let Place::Shared(_) = place {
                            let shared = qs.d.shared_of(q, qs.bytes[q], qs.d.in_headroom[q]);
                            proptest::prop_assert!(shared as f64 <= alpha[q] * free as f64 + 1e-6);
                        }
                    }
                } else if let Some(size) = fifos[q].pop_front() {
                    qs.leave(q, size);
                }
                proptest::prop_assert!(qs.bytes.iter().sum::<u64>() <= buffer);
                proptest::prop_assert!(qs.d.shared_used() <= qs.d.own_shared);
                proptest::prop_assert!(qs.d.headroom_used <= headroom);
                proptest::prop_assert_eq!(qs.d.check(qs.bytes.iter().copied()), Ok(()));
            }
        }
    }
}
