//! The TCP receiver: reassembly, (delayed) cumulative ACKs and the ECN echo.
//!
//! ACK policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2): one ACK per `delayed_ack` in-order
//! segments, or when the delayed-ACK timer expires; an immediate ACK for every
//! out-of-order segment (duplicate ACKs), every duplicate segment, every segment that fills
//! (part of) a gap, and every segment carrying PSH (the last byte the application handed
//! over; a short flow's tail is not held back by the timer).
//!
//! ECN echo, by flavour:
//! - NewReno: ECN is not negotiated; ECE is never set.
//! - ECN* (RFC 3168 §6.1.3): on CE, latch ECE and set it on every ACK until a data segment
//!   with CWR arrives (a CWR segment that is itself CE latches again).
//! - DCTCP (RFC 8257 §3.2, DCTCP paper §3.1): two states, DCTCP.CE = CE of the last
//!   segment. Every ACK carries ECE = DCTCP.CE. When a segment's CE differs from the state
//!   and a delayed ACK is pending, an immediate ACK for the earlier segments is sent first,
//!   with the old ECE value, so each ACK describes segments of one kind.
//!
//! Every ACK echoes the `tx_ns` of the segment that triggered it (timestamp echo) and
//! carries that segment's DSCP.

use super::config::{CcKind, TcpConfig};
use crate::packet::{flags, Ecn, Kind, Packet};
use crate::transport::app::Endpoints;
use crate::transport::reassembly::Reassembly;
use ecnlab_core::units::Nanos;

/// Counters of a receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments received (including duplicates).
    pub segments: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// ACKs sent with ECE.
    pub ece_acks_sent: u64,
    /// Segments that arrived CE-marked.
    pub ce_segments: u64,
    /// Segments that arrived beyond `rcv_nxt` (buffered).
    pub out_of_order: u64,
    /// Segments entirely below `rcv_nxt` (already received).
    pub duplicates: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EchoMode {
    None,
    Rfc3168,
    Dctcp,
}

/// A TCP receiver for one flow.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    ends: Endpoints,
    mode: EchoMode,
    ack_every: u32,
    delack_timeout: Nanos,
    data: Reassembly,
    /// In-order segments received and not yet acknowledged.
    pending: u32,
    /// `tx_ns` and DSCP of the latest of them (echoed by the delayed ACK).
    pending_tx: Nanos,
    pending_dscp: u8,
    delack_deadline: Option<Nanos>,
    /// RFC 3168 ECE latch.
    ece_latched: bool,
    /// DCTCP.CE: CE codepoint of the last segment.
    dctcp_ce: bool,
    stats: ReceiverStats,
}

impl TcpReceiver {
    /// `src` is the receiver host, `dst` the sender host.
    pub fn new(cfg: &TcpConfig, flow: u32, src: u16, dst: u16) -> Self {
        let mode = match cfg.cc {
            // Cubic is a `linux`-profile algorithm without ECN.
            CcKind::NewReno | CcKind::Cubic => EchoMode::None,
            CcKind::EcnStar | CcKind::Dcqcn => EchoMode::Rfc3168,
            CcKind::Dctcp | CcKind::DctcpDualq => EchoMode::Dctcp,
        };
        TcpReceiver {
            ends: Endpoints { flow, src: dst, dst: src },
            mode,
            ack_every: cfg.delayed_ack.max(1),
            delack_timeout: cfg.delayed_ack_timeout.ns().max(1),
            data: Reassembly::default(),
            pending: 0,
            pending_tx: 0,
            pending_dscp: 0,
            delack_deadline: None,
            ece_latched: false,
            dctcp_ce: false,
            stats: ReceiverStats::default(),
        }
    }

    /// In-order bytes received (cumulative).
    pub fn delivered_bytes(&self) -> u64 {
        self.data.rcv_nxt()
    }

    /// Delayed-ACK deadline, if an ACK is being held back.
    pub fn timer(&self) -> Option<Nanos> {
        self.delack_deadline
    }

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// Whether the next ACK would carry ECE.
    pub fn ece(&self) -> bool {
        match self.mode {
            EchoMode::None => false,
            EchoMode::Rfc3168 => self.ece_latched,
            EchoMode::Dctcp => self.dctcp_ce,
        }
    }

    /// A data segment arrived; pushes the ACKs it triggers.
    pub fn on_data(&mut self, now: Nanos, pkt: &Packet, out: &mut Vec<Packet>) {
        if pkt.kind != Kind::Data {
            return;
        }
        self.stats.segments += 1;
        let ce = pkt.ecn == Ecn::Ce;
        if ce {
            self.stats.ce_segments += 1;
        }
        match self.mode {
            EchoMode::None => {}
            EchoMode::Rfc3168 => {
                if pkt.has(flags::CWR) {
                    self.ece_latched = false;
                }
                if ce {
                    self.ece_latched = true;
                }
            }
            EchoMode::Dctcp => {
                if ce != self.dctcp_ce {
                    // RFC 8257 §3.2: acknowledge the segments received so far with the old
                    // state before switching.
                    if self.pending > 0 {
                        let (tx, dscp) = (self.pending_tx, self.pending_dscp);
                        self.send_ack(tx, dscp, out);
                    }
                    self.dctcp_ce = ce;
                }
            }
        }

        let start = pkt.seq;
        let end = pkt.seq + pkt.payload as u64;
        if end <= self.data.rcv_nxt() {
            // Duplicate (or empty): ACK at once so the sender learns where we are.
            self.stats.duplicates += 1;
            self.send_ack(pkt.tx_ns, pkt.dscp, out);
        } else if start > self.data.rcv_nxt() {
            // Out of order: hold it and send a duplicate ACK at once (RFC 5681 §4.2).
            self.stats.out_of_order += 1;
            self.data.insert(start, end);
            self.send_ack(pkt.tx_ns, pkt.dscp, out);
        } else {
            let had_gap = self.data.has_gap();
            self.data.advance(end);
            self.data.absorb();
            self.pending += 1;
            self.pending_tx = pkt.tx_ns;
            self.pending_dscp = pkt.dscp;
            if had_gap || pkt.has(flags::PSH) || self.pending >= self.ack_every {
                self.send_ack(pkt.tx_ns, pkt.dscp, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delack_timeout);
            }
        }
    }

    /// The delayed-ACK timer fired (harmless if early or disarmed).
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.delack_deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        self.delack_deadline = None;
        if self.pending > 0 {
            let (tx, dscp) = (self.pending_tx, self.pending_dscp);
            self.send_ack(tx, dscp, out);
        }
    }

    fn send_ack(&mut self, echo: Nanos, dscp: u8, out: &mut Vec<Packet>) {
        let ece = self.ece();
        self.stats.acks_sent += 1;
        if ece {
            self.stats.ece_acks_sent += 1;
        }
        let fl = if ece { flags::ECE } else { 0 };
        out.push(self.ends.reply(Kind::Ack, self.data.rcv_nxt(), echo, 0, Ecn::NotEct, fl, dscp));
        // This ACK covers every segment received so far.
        self.pending = 0;
        self.delack_deadline = None;
    }

    #[cfg(test)]
    pub(crate) fn ooo_intervals(&self) -> &[(u64, u64)] {
        self.data.runs()
    }
}
