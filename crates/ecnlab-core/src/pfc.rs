//! Priority-based flow control (PFC, IEEE 802.1Qbb) at a switch's ingress: when to send
//! PAUSE and RESUME for one priority of one ingress port.
//!
//! Read first: PFC makes a priority lossless. A switch counts, per ingress port and priority,
//! the bytes it holds that came in through that port (admitted at an egress queue and not yet
//! sent on, or dropped there); when that count reaches the XOFF threshold it sends the
//! upstream device a PAUSE for the priority, which stops sending that priority once the
//! frame in transmission ends; when the count falls back below the threshold by the resume
//! offset it sends RESUME (a PAUSE of zero time). The bytes still in flight when the PAUSE
//! lands (about twice the link's bandwidth-delay product plus two frames) need room: the
//! headroom. What a pause does to the upstream port is [`crate::port::Port::set_paused`].
//!
//! The rules are those of the public RDMA simulators (HPCC's ns-3 `switch-mmu.cc`, after the
//! DCQCN authors' `ns3-rdma`), which model Broadcom's MMU:
//! - the count rises when a packet is admitted at an egress queue and falls when it leaves
//!   that queue (sent or dropped at dequeue);
//! - XOFF, checked when a packet of the (port, priority) is admitted: count >= threshold;
//! - XON, checked when one leaves: count + resume offset <= threshold, or count = 0;
//! - the threshold is dynamic (Choudhury & Hahne's dynamic threshold, Broadcom's
//!   `dynamic_th`): `alpha x` the free bytes of the switch's shared buffer, so that a few
//!   congested ports may take much of the buffer and many share it; or a static `xoff`;
//! - PAUSE and RESUME are explicit: a pause lasts until its resume (the frame's pause time,
//!   at most 65,535 quanta of 512 bit times, is not modelled; HPCC's simulator does the same).
//!
//! Unlike a Broadcom MMU, ecnlab reserves no headroom apart from the shared buffer: the
//! bytes that arrive after a PAUSE are admitted as any other, while the switch's buffer has
//! room. A lossless priority loses nothing as long as the buffer left free by the threshold,
//! `B / (1 + N x alpha)` with N ingress ports paused at once, holds their headroom; a drop
//! of a lossless packet is counted as any drop, so a run that overflows says so.

use crate::buffer::BufferPool;
use crate::units::ByteSize;
use serde::{Deserialize, Serialize};

/// The `[switch.pfc]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PfcConfig {
    /// Pause upstream devices per priority (IEEE 802.1Qbb) so that the lossless queues do
    /// not drop: a switch sends PAUSE to the port a priority's bytes came in through.
    pub enabled: bool,
    /// The lossless queues (priorities); empty = every queue. Queues not listed are lossy:
    /// never counted, never paused.
    pub queues: Vec<usize>,
    /// Dynamic threshold: pause an ingress port's priority when the bytes it holds in the
    /// switch reach `alpha x` the free bytes of the switch's shared buffer (`switch.pool`).
    /// Default 1/8 (HPCC's simulator; SONiC's Broadcom profiles: `dynamic_th = -3`).
    pub alpha: f64,
    /// Static threshold instead of the dynamic one: pause at this many bytes per ingress port
    /// and priority (needs no shared pool).
    pub xoff: Option<ByteSize>,
    /// Resume once the bytes are this far below the threshold (or none is left). Default
    /// 3 KB (HPCC's simulator; SONiC's `xon_offset` is 2,496 B).
    pub resume_offset: ByteSize,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig { enabled: false, queues: Vec::new(), alpha: 0.125, xoff: None, resume_offset: ByteSize(3_000) }
    }
}

impl PfcConfig {
    /// Check against the port layout: `n_queues` queues, `pool` the shared buffer if any.
    /// Errors name the field relative to `[switch.pfc]`.
    pub fn check(&self, n_queues: usize, buffer: ByteSize, pool: Option<ByteSize>) -> Result<(), String> {
        if !self.enabled {
            return Ok(());
        }
        if let Some(i) = self.queues.iter().position(|&q| q >= n_queues) {
            return Err(format!("queues[{i}]: queue {} does not exist (switch.queues = {n_queues})", self.queues[i]));
        }
        match self.xoff {
            Some(ByteSize(x)) => {
                if x == 0 {
                    return Err("xoff: must be larger than 0".into());
                }
                // A port whose own buffer is full drops before its ingress reaches XOFF.
                if x >= buffer.0 {
                    return Err(format!(
                        "xoff: {x} B is not below switch.buffer = {} B (the port would drop before it pauses)",
                        buffer.0
                    ));
                }
                if self.resume_offset.0 >= x {
                    return Err(format!(
                        "resume_offset: {} B is not below xoff = {x} B (a paused port would never resume before it empties)",
                        self.resume_offset.0
                    ));
                }
            }
            None => {
                if !(self.alpha.is_finite() && self.alpha > 0.0 && self.alpha <= 64.0) {
                    return Err(format!("alpha: {} is not in (0, 64]", self.alpha));
                }
                let Some(pool) = pool else {
                    return Err("alpha: the dynamic threshold is a share of the switch's shared buffer, and \
                                switch.pool is not set (set it, or a static xoff)"
                        .into());
                };
                // One ingress alone pauses at alpha B / (1 + alpha) of the pool B; a port buffer
                // below that drops before anything pauses. (N ingresses into one port hold up to
                // N alpha B / (1 + N alpha) together: a fan-in the buffer cannot hold drops, and
                // the run counts it.)
                let one = (self.alpha * pool.0 as f64 / (1.0 + self.alpha)) as u64;
                if buffer.0 <= one {
                    return Err(format!(
                        "alpha: one ingress may hold {one} B (alpha x switch.pool / (1 + alpha)) before it pauses, \
                         not below switch.buffer = {} B (the port would drop first)",
                        buffer.0
                    ));
                }
            }
        }
        Ok(())
    }

    /// The lossless queues as a bit mask, for a port of `n_queues`.
    pub fn lossless_mask(&self, n_queues: usize) -> u64 {
        if self.queues.is_empty() {
            if n_queues >= 64 {
                u64::MAX
            } else {
                (1u64 << n_queues) - 1
            }
        } else {
            self.queues.iter().fold(0, |m, &q| m | 1 << q)
        }
    }
}

/// A PFC frame a switch sends upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Stop sending this priority.
    Pause,
    /// Send it again (a PAUSE of zero time).
    Resume,
}

/// Wire size of a PFC frame (a MAC control frame of minimum size).
pub const FRAME_BYTES: u64 = 64;

/// Frames sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PfcStats {
    pub pause_frames: u64,
    pub resume_frames: u64,
}

/// The ingress side of every switch of a network: per ingress port and priority, the bytes
/// held and whether a PAUSE is in force. Ingress ports are numbered by the caller (the
/// simulator uses its link numbers: the link a packet came in on).
#[derive(Clone, Debug)]
pub struct Pfc {
    lossless: u64,
    xoff: Option<u64>,
    alpha: f64,
    resume_offset: u64,
    n_classes: usize,
    /// Bytes held, `[ingress * n_classes + class]`.
    held: Vec<u64>,
    /// Per ingress: the priorities it has been sent PAUSE for and no RESUME since.
    paused: Vec<u64>,
    pub stats: PfcStats,
}

impl Pfc {
    /// `n_ingress` ingress ports, priorities `0..n_classes` (the switch's queues).
    pub fn new(cfg: &PfcConfig, n_ingress: usize, n_classes: usize) -> Pfc {
        Pfc {
            lossless: cfg.lossless_mask(n_classes),
            xoff: cfg.xoff.map(|b| b.0),
            alpha: cfg.alpha,
            resume_offset: cfg.resume_offset.0,
            n_classes,
            held: vec![0; n_ingress * n_classes],
            paused: vec![0; n_ingress],
            stats: PfcStats::default(),
        }
    }

    /// Priority `class` is lossless (counted and paused).
    #[inline]
    pub fn is_lossless(&self, class: usize) -> bool {
        self.lossless >> class & 1 == 1
    }

    /// The XOFF threshold now: the static one, or `alpha x` the free bytes of `pool`.
    fn threshold(&self, pool: &BufferPool) -> u64 {
        match self.xoff {
            Some(x) => x,
            None => (self.alpha * pool.free_bytes() as f64) as u64,
        }
    }

    /// A packet of `bytes` from `ingress`, priority `class`, was admitted at an egress queue of
    /// the switch whose shared buffer is `pool` (after the admission). Returns the PAUSE to
    /// send upstream, if the count reached the threshold.
    pub fn on_admit(&mut self, ingress: usize, class: usize, bytes: u64, pool: &BufferPool) -> Option<Frame> {
        if !self.is_lossless(class) {
            return None;
        }
        let i = ingress * self.n_classes + class;
        self.held[i] += bytes;
        if self.paused[ingress] >> class & 1 == 0 && self.held[i] >= self.threshold(pool) {
            self.paused[ingress] |= 1 << class;
            self.stats.pause_frames += 1;
            return Some(Frame::Pause);
        }
        None
    }

    /// A packet of `bytes` from `ingress`, priority `class`, left the switch's egress queue
    /// (sent, or dropped at dequeue). Returns the RESUME to send upstream, if the count fell
    /// far enough below the threshold.
    pub fn on_leave(&mut self, ingress: usize, class: usize, bytes: u64, pool: &BufferPool) -> Option<Frame> {
        if !self.is_lossless(class) {
            return None;
        }
        let i = ingress * self.n_classes + class;
        debug_assert!(self.held[i] >= bytes, "PFC: ingress {ingress} class {class} releases more than it holds");
        self.held[i] -= bytes;
        if self.paused[ingress] >> class & 1 == 1
            && (self.held[i] == 0 || self.held[i] + self.resume_offset <= self.threshold(pool))
        {
            self.paused[ingress] &= !(1 << class);
            self.stats.resume_frames += 1;
            return Some(Frame::Resume);
        }
        None
    }

    /// Bytes held from `ingress` in `class`.
    pub fn held(&self, ingress: usize, class: usize) -> u64 {
        self.held[ingress * self.n_classes + class]
    }

    /// Total bytes held from every ingress (for the end-of-run audit: it equals the lossless
    /// bytes queued in the switches).
    pub fn held_total(&self) -> u64 {
        self.held.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(xoff: Option<u64>) -> PfcConfig {
        PfcConfig { enabled: true, xoff: xoff.map(ByteSize), ..Default::default() }
    }

    /// HPCC's rules with a static threshold: XOFF when the count reaches 10 KB, XON once it is
    /// 3 KB below (7 KB), each sent once.
    #[test]
    fn static_threshold_pauses_at_xoff_and_resumes_an_offset_below() {
        let mut p = Pfc::new(&cfg(Some(10_000)), 2, 1);
        let pool = BufferPool::unlimited();
        let frames: Vec<_> = (0..8).map(|_| p.on_admit(1, 0, 1_500, &pool)).collect();
        // 1.5, 3, ..., 9 KB: nothing; 10.5 KB: PAUSE; 12 KB: already paused.
        assert_eq!(frames.iter().position(|f| f.is_some()), Some(6));
        assert_eq!(frames.iter().flatten().count(), 1);
        assert_eq!(p.held(1, 0), 12_000);
        assert_eq!(p.held(0, 0), 0, "another ingress is untouched");
        // 10.5, 9, 7.5 KB: still paused (7.5 + 3 > 10); 6 KB: RESUME.
        let frames: Vec<_> = (0..4).map(|_| p.on_leave(1, 0, 1_500, &pool)).collect();
        assert_eq!(frames, [None, None, None, Some(Frame::Resume)]);
        assert_eq!(p.stats, PfcStats { pause_frames: 1, resume_frames: 1 });
    }

    /// The dynamic threshold follows the free buffer: alpha = 1/8 of a 1 MB pool with 200 KB
    /// used pauses at 100 KB; freeing the pool raises the threshold, so the XON comes sooner.
    #[test]
    fn dynamic_threshold_is_alpha_times_the_free_pool() {
        let mut p = Pfc::new(&cfg(None), 1, 1);
        let mut pool = BufferPool::new(1_000_000);
        pool.used_bytes = 200_000;
        assert_eq!(p.threshold(&pool), 100_000);
        assert_eq!(p.on_admit(0, 0, 99_000, &pool), None);
        assert_eq!(p.on_admit(0, 0, 1_000, &pool), Some(Frame::Pause));
        // 97 KB held + 3 KB = 100 KB <= 100 KB: resume.
        assert_eq!(p.on_leave(0, 0, 3_000, &pool), Some(Frame::Resume));
        assert_eq!(p.on_admit(0, 0, 3_000, &pool), Some(Frame::Pause));
        pool.used_bytes = 0; // the threshold rises to 125 KB
        assert_eq!(p.on_leave(0, 0, 1, &pool), Some(Frame::Resume));
    }

    #[test]
    fn lossy_queues_are_neither_counted_nor_paused() {
        let c = PfcConfig { queues: vec![1], ..cfg(Some(3_000)) };
        assert_eq!(c.lossless_mask(4), 0b10);
        assert_eq!(cfg(None).lossless_mask(3), 0b111);
        assert_eq!(cfg(None).lossless_mask(64), u64::MAX);
        let mut p = Pfc::new(&c, 1, 4);
        let pool = BufferPool::unlimited();
        assert_eq!(p.on_admit(0, 0, 10_000, &pool), None);
        assert_eq!(p.held(0, 0), 0);
        assert_eq!(p.on_admit(0, 1, 10_000, &pool), Some(Frame::Pause));
    }

    #[test]
    fn configuration_errors_name_the_field() {
        let mb = ByteSize(1_000_000);
        let e = |c: PfcConfig, pool: Option<u64>| c.check(4, mb, pool.map(ByteSize)).unwrap_err();
        assert!(e(PfcConfig { queues: vec![4], ..cfg(None) }, Some(1)).starts_with("queues[0]: queue 4 does not exist"));
        assert!(e(cfg(None), None).starts_with("alpha: the dynamic threshold"));
        assert!(e(PfcConfig { alpha: 0.0, ..cfg(None) }, Some(1)).starts_with("alpha: 0 is not in"));
        assert!(e(cfg(Some(2_000)), None).starts_with("resume_offset: 3000 B is not below xoff"));
        assert!(e(cfg(Some(0)), None).starts_with("xoff: must be larger than 0"));
        // The port's own buffer must not fill before its ingresses pause.
        assert!(e(cfg(Some(1_000_000)), None).starts_with("xoff: 1000000 B is not below switch.buffer = 1000000 B"));
        assert!(e(cfg(None), Some(9_000_000)).starts_with("alpha: one ingress may hold 1000000 B"));
        assert_eq!(cfg(None).check(4, mb, Some(ByteSize(8_000_000))), Ok(()));
        assert_eq!(cfg(None).check(4, mb, Some(mb)), Ok(()));
        assert_eq!(cfg(Some(10_000)).check(4, mb, None), Ok(()));
        assert_eq!(PfcConfig::default().check(0, mb, None), Ok(()), "off: nothing to check");
    }
}
