//! Frames: bytes in a preallocated pool, and a small `Copy` handle the port queues.
//!
//! The egress [`Port`](ecnlab_core::Port) stores packets by value, so what it stores is a
//! 32-byte [`Frame`]: where the bytes are (a pool slot), what classification and marking
//! need (DSCP, ECN, size), and the kernel receive timestamp. The pool is allocated once; a
//! slot is taken when a frame is received and returned when it is sent or dropped, so the
//! per-packet path allocates nothing.

use crate::wire;
use ecnlab_core::port::PortPacket;
use ecnlab_core::Nanos;

/// A queued frame. `set_ce` only records the decision: the header is rewritten (CE and
/// checksum) when the frame leaves, the one moment the switch touches the bytes anyway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Kernel receive timestamp (CLOCK_REALTIME, ns): sojourn counts from here.
    pub rx_ns: Nanos,
    /// Pool slot holding the bytes.
    pub slot: u32,
    /// Frame length (Ethernet header to end of payload, no FCS).
    pub len: u16,
    /// Offset of the IPv4 header; 0 = not IPv4 (never marked).
    pub ip_off: u16,
    /// TCP/UDP payload bytes (goodput accounting at the switch).
    pub payload: u16,
    /// DSCP used for classification (the configured one for non-IPv4 frames).
    pub dscp: u8,
    /// ECN codepoint at arrival.
    pub ecn: u8,
    /// Ingress port.
    pub in_port: u8,
    /// The port decided to mark: set CE on transmission.
    pub ce: bool,
}

impl PortPacket for Frame {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        self.len as u32
    }
    #[inline]
    fn is_ect(&self) -> bool {
        self.ip_off != 0 && self.ecn != wire::ECN_NOT_ECT
    }
    #[inline]
    fn set_ce(&mut self) {
        self.ce = true;
    }
    #[inline]
    fn dscp(&self) -> u8 {
        self.dscp
    }
    /// The port counts it per queue as it counts the simulator's packets' (goodput).
    #[inline]
    fn payload_bytes(&self) -> u32 {
        self.payload as u32
    }
}

/// Fixed-size slots in one allocation, and a free list.
pub struct FramePool {
    buf: Vec<u8>,
    slot_size: usize,
    free: Vec<u32>,
}

impl FramePool {
    /// `slots` frames of up to `slot_size` bytes. The memory is zero-initialised by the
    /// allocator (calloc), so pages are only touched when a slot is first used.
    pub fn new(slots: usize, slot_size: usize) -> Self {
        assert!(slots > 0 && slots <= u32::MAX as usize && slot_size > 0);
        FramePool { buf: vec![0u8; slots * slot_size], slot_size, free: (0..slots as u32).rev().collect() }
    }
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }
    pub fn capacity(&self) -> usize {
        self.buf.len() / self.slot_size
    }
    pub fn available(&self) -> usize {
        self.free.len()
    }
    #[inline]
    pub fn alloc(&mut self) -> Option<u32> {
        self.free.pop()
    }
    #[inline]
    pub fn release(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot), "slot {slot} released twice");
        self.free.push(slot);
    }
    /// The whole slot (to receive into).
    #[inline]
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let s = slot as usize * self.slot_size;
        &mut self.buf[s..s + self.slot_size]
    }
    /// The first `len` bytes of a slot.
    #[inline]
    pub fn bytes(&self, slot: u32, len: usize) -> &[u8] {
        let s = slot as usize * self.slot_size;
        &self.buf[s..s + len]
    }
    /// Copy the first `len` bytes of slot `from` into slot `to`.
    #[inline]
    pub fn copy_slot(&mut self, from: u32, to: u32, len: usize) {
        let (f, t) = (from as usize * self.slot_size, to as usize * self.slot_size);
        self.buf.copy_within(f..f + len, t);
    }
    #[inline]
    pub fn bytes_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        let s = slot as usize * self.slot_size;
        &mut self.buf[s..s + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_is_small_and_copy() {
        assert!(std::mem::size_of::<Frame>() <= 32);
    }

    #[test]
    fn pool_recycles_slots() {
        let mut p = FramePool::new(3, 64);
        let a = p.alloc().unwrap();
        let b = p.alloc().unwrap();
        let c = p.alloc().unwrap();
        assert_eq!(p.alloc(), None);
        assert_ne!(a, b);
        p.slot_mut(b)[..3].copy_from_slice(&[1, 2, 3]);
        assert_eq!(p.bytes(b, 3), &[1, 2, 3]);
        p.release(b);
        assert_eq!(p.alloc(), Some(b));
        p.release(a);
        p.release(c);
        assert_eq!(p.available(), 2);
    }
}
