//! What every transport's endpoints share, written once for the textbook and `linux` TCPs
//! and DCQCN: the connection's two hosts and the packets between them ([`Endpoints`]), the
//! application's writes and the PSH rule ([`AppWrites`]), and the DSCP a segment carries,
//! PIAS tagging included ([`Tagging`]).
//!
//! PIAS (Bai et al., NSDI'15), as the TCN simulations use it (TCN §6.2): the first bytes of
//! each message go with the highest priorities, thresholds counted from the message's first
//! byte; `TCN-NS2`'s `piasPrio` is the rule (a segment whose offset is at most a threshold
//! stays at that level).

use crate::packet::{flags, Ecn, Kind, Packet, ACK_BYTES, TCP_IP_HEADER};
use ecnlab_core::units::Nanos;

/// Data amounts at or above this are "unlimited" (a long-lived flow): no PSH is ever sent.
const UNLIMITED_FROM: u64 = u64::MAX / 8;
/// Cap of the application's total data, so that sequence arithmetic never overflows.
const APP_CAP: u64 = u64::MAX / 2;

/// Pass to a sender's `add_data` for a long-lived flow that always has data.
pub const UNLIMITED: u64 = u64::MAX / 2;

/// Most PIAS priority levels a sender tags (PIAS uses up to 8 priorities).
pub const MAX_PIAS_LEVELS: usize = 7;

/// A connection's flow index and its two hosts, as its data travels: `src` sends data,
/// `dst` receives it and sends the ACKs back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    pub flow: u32,
    pub src: u16,
    pub dst: u16,
}

impl Endpoints {
    /// A data segment of `len` payload bytes from `src`, sent at `now`.
    #[inline]
    pub fn data(&self, now: Nanos, seq: u64, len: u32, ecn: Ecn, fl: u8, dscp: u8) -> Packet {
        Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            seq,
            tx_ns: now,
            payload: len,
            size: len + TCP_IP_HEADER,
            kind: Kind::Data,
            ecn,
            flags: fl,
            dscp,
            in_link: 0,
        }
    }

    /// A header-only packet back from `dst` to `src` (an ACK, a NAK, a CNP): `seq` is what it
    /// acknowledges, `echo` the send time it echoes, `tag` what it carries in `payload` (the
    /// `linux` receiver's SACK-log tag, else 0).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn reply(&self, kind: Kind, seq: u64, echo: Nanos, tag: u32, ecn: Ecn, fl: u8, dscp: u8) -> Packet {
        Packet {
            flow: self.flow,
            src: self.dst,
            dst: self.src,
            seq,
            tx_ns: echo,
            payload: tag,
            size: ACK_BYTES,
            kind,
            ecn,
            flags: fl,
            dscp,
            in_link: 0,
        }
    }
}

/// The bytes the application has handed a sender (sequence numbers count from 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppWrites {
    /// Total bytes added so far.
    limit: u64,
}

impl AppWrites {
    /// `bytes` more to send ([`UNLIMITED`], or any amount from `u64::MAX / 8` up, for an
    /// unlimited flow).
    #[inline]
    pub fn add(&mut self, bytes: u64) {
        self.limit = self.limit.saturating_add(bytes).min(APP_CAP);
    }

    /// Total bytes added (where the next message starts).
    #[inline]
    pub fn added(&self) -> u64 {
        self.limit
    }

    /// [`flags::PSH`] for the segment `[seq, seq + len)` if it carries the last byte added
    /// so far (so with a rate-limited application every write's end is flagged), never for
    /// an unlimited flow; else 0.
    #[inline]
    pub fn push_flag(&self, seq: u64, len: u64) -> u8 {
        if seq + len == self.limit && self.limit < UNLIMITED_FROM {
            flags::PSH
        } else {
            0
        }
    }
}

/// The DSCP of a sender's segments: the flow's service class, or a PIAS priority for the
/// first bytes of the current message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tagging {
    /// The flow's class (the DSCP of bytes beyond every PIAS threshold).
    dscp: u8,
    /// Levels in use (0: PIAS off).
    levels: u8,
    /// First byte of the message the thresholds count from.
    start: u64,
    /// Bytes of the message at offsets at most `thresholds[i]` go with DSCP i.
    thresholds: [u64; MAX_PIAS_LEVELS],
}

impl Tagging {
    pub fn new(dscp: u8) -> Self {
        Tagging { dscp, levels: 0, start: 0, thresholds: [0; MAX_PIAS_LEVELS] }
    }

    /// The class of subsequent segments.
    pub fn set_dscp(&mut self, dscp: u8) {
        self.dscp = dscp;
    }

    /// Tag the message that starts at byte `start_seq`: its bytes at offsets up to
    /// `thresholds[i]` get DSCP i, the rest the flow's. An empty slice turns tagging off;
    /// thresholds beyond [`MAX_PIAS_LEVELS`] are ignored.
    pub fn set_pias(&mut self, start_seq: u64, thresholds: &[u64]) {
        let n = thresholds.len().min(MAX_PIAS_LEVELS);
        self.start = start_seq;
        self.thresholds[..n].copy_from_slice(&thresholds[..n]);
        self.levels = n as u8;
    }

    /// The DSCP of the segment whose first byte is `seq`.
    #[inline]
    pub fn dscp_of(&self, seq: u64) -> u8 {
        let off = seq.saturating_sub(self.start);
        // TCN-NS2 `piasPrio`: a segment whose offset is <= the threshold stays high.
        match self.thresholds[..self.levels as usize].iter().position(|&t| off <= t) {
            Some(level) => level as u8,
            None => self.dscp,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psh_marks_the_last_byte_added_and_never_an_unlimited_flow() {
        let mut a = AppWrites::default();
        a.add(3000);
        assert_eq!((a.push_flag(0, 1460), a.push_flag(1460, 1460), a.push_flag(2920, 80)), (0, 0, flags::PSH));
        a.add(UNLIMITED);
        assert_eq!(a.added(), APP_CAP, "capped");
        assert_eq!(a.push_flag(APP_CAP - 1460, 1460), 0);
    }

    #[test]
    fn pias_tags_a_message_from_its_first_byte() {
        let mut t = Tagging::new(5);
        assert_eq!(t.dscp_of(0), 5, "off: the flow's class");
        t.set_pias(10_000, &[1_000, 4_000]);
        // Offsets 0 and 1000 are level 0 (<= the threshold), 1001..=4000 level 1, beyond: 5.
        assert_eq!([10_000, 11_000, 11_001, 14_000, 14_001].map(|s| t.dscp_of(s)), [0, 0, 1, 1, 5]);
        t.set_dscp(3);
        assert_eq!(t.dscp_of(20_000), 3);
        t.set_pias(0, &[]);
        assert_eq!(t.dscp_of(0), 3);
    }

    #[test]
    fn replies_go_back_to_the_sender() {
        let e = Endpoints { flow: 7, src: 1, dst: 2 };
        let d = e.data(5, 100, 1460, Ecn::Ect0, flags::PSH, 3);
        assert_eq!((d.src, d.dst, d.size, d.kind, d.tx_ns), (1, 2, 1500, Kind::Data, 5));
        let a = e.reply(Kind::Ack, 1560, 5, 9, Ecn::NotEct, flags::ECE, 3);
        assert_eq!((a.src, a.dst, a.size, a.payload, a.seq), (2, 1, ACK_BYTES, 9, 1560));
    }
}
