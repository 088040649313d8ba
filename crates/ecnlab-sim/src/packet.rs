//! The simulated packet: a small plain struct, copied by value, without payload bytes.

use ecnlab_core::Nanos;
use ecnlab_core::PortPacket;

/// ECN codepoint of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Kind {
    /// TCP segment carrying payload (from the sender).
    #[default]
    Data = 0,
    /// Pure TCP ACK (from the receiver).
    Ack = 1,
    /// Ping probe request (ICMP-echo-like) and its reply.
    Ping = 2,
    Pong = 3,
    /// DCQCN congestion notification packet (reserved for the rate-based transport).
    Cnp = 4,
}

/// TCP flag bits carried in `flags`.
pub mod flags {
    /// ECN-Echo: the receiver saw CE (RFC 3168 §6.1.3).
    pub const ECE: u8 = 1;
    /// Congestion Window Reduced: the sender reacted (RFC 3168 §6.1.2).
    pub const CWR: u8 = 2;
    /// The segment that carries the last byte of an application write (a flow's, or a
    /// persistent connection's message's): TCP's PSH. Receivers ACK it at once (the
    /// textbook profile, DCQCN) or when short (Linux); connections are never closed, so no
    /// segment is a FIN.
    pub const PSH: u8 = 4;
    /// TCP's SYN: the opening of a connection (RFC 9293 §3.5). A SYN is a `Data` packet
    /// without payload from the sender; the SYN-ACK an `Ack` with this flag (bit 8 is DCQCN's
    /// NAK).
    pub const SYN: u8 = 16;
    /// The ACK reports a duplicate segment (RFC 2883's D-SACK, the first SACK block below
    /// the cumulative ACK), which the `linux` sender's loss probe reads; carried as a flag so
    /// that it takes no SACK block.
    pub const DSACK: u8 = 32;
}

/// Header bytes added to a TCP payload on the wire (IP 20 + TCP 20); a 1460-byte MSS gives
/// 1500-byte packets as in the papers' simulations.
pub const TCP_IP_HEADER: u32 = 40;
/// Wire size of a pure ACK (header only, no padding: ns-2 and ns-3 both use 40 B).
pub const ACK_BYTES: u32 = 40;

/// A packet. `Copy`, 64 bytes or less, so queues and links hold it by value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// Flow (connection) index; a probe's index in the probe table for pings.
    pub flow: u32,
    /// Source and destination host indices.
    pub src: u16,
    pub dst: u16,
    /// Data: first payload byte's sequence number. Ack: cumulative ACK (next expected byte).
    pub seq: u64,
    /// Time the segment (or probe) was sent; echoed back in ACKs for RTT sampling, as the
    /// TCP timestamp option does.
    pub tx_ns: Nanos,
    /// Payload bytes (0 for pure ACKs).
    pub payload: u32,
    /// Bytes on the wire.
    pub size: u32,
    pub kind: Kind,
    pub ecn: Ecn,
    /// [`flags`] bits.
    pub flags: u8,
    /// DSCP, i.e. traffic class; selects the switch queue.
    pub dscp: u8,
    /// The link the packet is on or came in by, set when its transmission starts: a switch's
    /// PFC counts the packet against that ingress port (`crate::wire`). Fills what was padding.
    pub in_link: u32,
}

impl Packet {
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

impl PortPacket for Packet {
    #[inline]
    fn wire_bytes(&self) -> u32 {
        self.size
    }
    #[inline]
    fn is_ect(&self) -> bool {
        self.ecn != Ecn::NotEct
    }
    #[inline]
    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }
    #[inline]
    fn dscp(&self) -> u8 {
        self.dscp
    }
    /// TCP payload of data segments: per-queue goodput counts it.
    #[inline]
    fn payload_bytes(&self) -> u32 {
        if self.kind == Kind::Data {
            self.payload
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_is_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 40, "{}", std::mem::size_of::<super::Packet>());
    }
}
