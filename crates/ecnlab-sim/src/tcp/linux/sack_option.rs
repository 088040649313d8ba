//! The SACK option on the simulated wire (RFC 2018 §3).
//!
//! A [`Packet`](crate::packet::Packet) is a small `Copy` struct (at most 48 bytes, pinned by
//! a test), so an ACK does not carry its SACK blocks itself: the receiver writes them into
//! its connection's [`SackLog`] under a serial number and puts `serial + 1` in the ACK's
//! `payload` field (0: no SACK option; a pure ACK has no payload, and nothing counts an
//! ACK's `payload`, see `PortPacket::payload_bytes`). The sender reads the blocks back when
//! the ACK arrives. The log keeps the blocks of the last [`SackLog::DEPTH`] ACKs that
//! carried any: an ACK is read at its arrival, so the bound is on SACK-carrying ACKs in
//! flight at once (during recovery every segment is ACKed, so about a window of 512
//! segments); an older one reads as carrying no SACK option, as if a middlebox had stripped
//! it, which SACK tolerates by design (RFC 2018 §8). The log is allocated at the first ACK
//! with blocks, so connections that never see loss or reordering pay nothing. A dropped ACK
//! loses its blocks with it, as on a real wire.

/// Most blocks one ACK carries: 3, as Linux sends with the timestamp option on (40 bytes
/// of option space: 10 for timestamps, 2 + 8·n for SACK; RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK blocks of one ACK: `[start, end)` byte ranges held above the cumulative ACK,
/// the block holding the most recently received segment first (RFC 2018 §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub len: u8,
    pub blocks: [(u64, u64); MAX_SACK_BLOCKS],
}

impl SackBlocks {
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    /// The blocks in sequence order (how `tcp_sacktag_write_queue` walks them).
    pub fn sort(&mut self) {
        let n = self.len as usize;
        self.blocks[..n].sort_unstable();
    }
    /// Appends a block; ignored when full.
    pub fn push(&mut self, start: u64, end: u64) {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = (start, end);
            self.len += 1;
        }
    }
}

/// The receiver-to-sender side channel of one connection (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct SackLog {
    next: u32,
    slots: Box<[(u32, SackBlocks)]>,
}

impl SackLog {
    /// SACK-carrying ACKs whose blocks are kept (28 KB per connection that needs any).
    pub const DEPTH: usize = 512;

    /// Records the blocks of an ACK about to be sent; returns the value for its `payload`
    /// field (0 when `blocks` is empty: no option).
    pub fn record(&mut self, blocks: &SackBlocks) -> u32 {
        if blocks.len == 0 {
            return 0;
        }
        if self.slots.is_empty() {
            self.slots = vec![(u32::MAX, SackBlocks::default()); Self::DEPTH].into_boxed_slice();
        }
        let serial = self.next;
        self.next = self.next.wrapping_add(1) % (u32::MAX - 1);
        self.slots[serial as usize % Self::DEPTH] = (serial, *blocks);
        serial + 1
    }

    /// The blocks of the ACK whose `payload` field is `tag`, if still kept.
    pub fn read(&self, tag: u32) -> Option<&SackBlocks> {
        let serial = tag.checked_sub(1)?;
        let (s, b) = self.slots.get(serial as usize % Self::DEPTH)?;
        (*s == serial).then_some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_read_back_until_overwritten() {
        let mut log = SackLog::default();
        let mut b = SackBlocks::default();
        assert_eq!(log.record(&b), 0, "no blocks, no option");
        assert!(log.read(0).is_none());
        b.push(3000, 4460);
        let tag = log.record(&b);
        assert_eq!(log.read(tag).unwrap().as_slice(), &[(3000, 4460)]);
        for _ in 0..SackLog::DEPTH {
            log.record(&b);
        }
        assert!(log.read(tag).is_none(), "an ACK older than DEPTH reads as no option");
    }
}
