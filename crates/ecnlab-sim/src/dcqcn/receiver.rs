//! The DCQCN receiver: the notification point (NP, DCQCN paper §3.1) and a go-back-N
//! (RoCE v2 RC) receiver.
//!
//! CNP generation, per the paper: "If a marked packet arrives for a flow, and no CNP has
//! been sent for the flow in the last N microseconds, a CNP is sent immediately. Then, the
//! NIC generates at most one CNP packet every N microseconds for the flow, if any packet
//! that arrives within that time window was marked." So: a CE packet when the last CNP is
//! at least N old sends a CNP at once; a CE packet inside the window is remembered and one
//! CNP goes out when the window ends (the receiver's `timer()`). CNPs are therefore at least
//! N apart, and no mark is ignored for longer than N. CE on every data packet counts,
//! out-of-order and duplicate ones included (the congestion signal does not depend on the
//! sequence).
//!
//! ACKs: cumulative (`seq` = next expected byte), one per `ack_every` in-order packets, and
//! at once for a packet carrying PSH, a duplicate (the sender may have missed our ACK), and
//! the first in-order packet after a NAK. No delayed-ACK timer: with `ack_every` > 1 an
//! unlimited flow is acknowledged by its steady stream, a finite one by its PSH.
//!
//! Go-back-N: no out-of-order buffer. A packet beyond the expected byte is discarded and,
//! the first time for that expected byte, answered with a NAK (an ACK with the
//! [`NAK`] flag, `seq` = expected byte), as a RoCE NIC sends one sequence-error
//! NAK and then waits for the missing packet.

use super::config::DcqcnConfig;
use super::NAK;
use crate::packet::{flags, Ecn, Kind, Packet, ACK_BYTES};
use crate::transport::app::Endpoints;
use ecnlab_core::units::Nanos;

/// Wire size of a CNP: header only, as ACKs (see the module doc on overheads;
/// `Endpoints::reply` builds both).
pub const CNP_BYTES: u32 = ACK_BYTES;

/// Counters of a receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcqcnReceiverStats {
    /// Data packets received (duplicates and discarded out-of-order ones included).
    pub packets: u64,
    /// Data packets that arrived CE-marked.
    pub ce_packets: u64,
    /// ACKs sent (NAKs not included), NAKs sent, CNPs sent.
    pub acks_sent: u64,
    pub naks_sent: u64,
    pub cnps_sent: u64,
    /// Packets beyond the expected byte (discarded).
    pub out_of_order: u64,
    /// Packets entirely below the expected byte (already received).
    pub duplicates: u64,
}

/// A DCQCN receiver for one flow.
#[derive(Clone, Debug)]
pub struct DcqcnReceiver {
    ends: Endpoints,
    cnp_interval: Nanos,
    ack_every: u32,
    /// Next in-order byte expected (= bytes delivered).
    rcv_nxt: u64,
    /// In-order packets not yet acknowledged.
    pending: u32,
    /// The expected byte a NAK was last sent for (one NAK per expected byte).
    nak_for: Option<u64>,
    /// Time of the last CNP sent.
    last_cnp: Option<Nanos>,
    /// A CE packet arrived inside the current CNP window: send a CNP at its end.
    cnp_deadline: Option<Nanos>,
    /// `tx_ns` and DSCP of the latest CE packet (echoed by a deferred CNP).
    cnp_echo: (Nanos, u8),
    stats: DcqcnReceiverStats,
}

impl DcqcnReceiver {
    /// `src` is the receiver host, `dst` the sender host.
    pub fn new(cfg: &DcqcnConfig, flow: u32, src: u16, dst: u16) -> Self {
        DcqcnReceiver {
            ends: Endpoints { flow, src: dst, dst: src },
            cnp_interval: cfg.cnp_interval.ns(),
            ack_every: cfg.ack_every.max(1),
            rcv_nxt: 0,
            pending: 0,
            nak_for: None,
            last_cnp: None,
            cnp_deadline: None,
            cnp_echo: (0, 0),
            stats: DcqcnReceiverStats::default(),
        }
    }

    /// In-order bytes received.
    pub fn delivered_bytes(&self) -> u64 {
        self.rcv_nxt
    }

    /// The end of the CNP window, when a CE mark inside it still owes a CNP.
    pub fn timer(&self) -> Option<Nanos> {
        self.cnp_deadline
    }

    pub fn stats(&self) -> &DcqcnReceiverStats {
        &self.stats
    }

    /// A data packet arrived; pushes the CNP, ACK or NAK it triggers (a CNP first).
    pub fn on_data(&mut self, now: Nanos, pkt: &Packet, out: &mut Vec<Packet>) {
        if pkt.kind != Kind::Data {
            return;
        }
        self.stats.packets += 1;
        // A window that has ended owes its CNP first (the timer call may come after us).
        self.on_timer(now, out);
        if pkt.ecn == Ecn::Ce {
            self.stats.ce_packets += 1;
            self.cnp_echo = (pkt.tx_ns, pkt.dscp);
            match self.last_cnp {
                Some(t) if now < t.saturating_add(self.cnp_interval) => {
                    // Inside the window: owe one CNP at its end.
                    if self.cnp_deadline.is_none() {
                        self.cnp_deadline = Some(t.saturating_add(self.cnp_interval));
                    }
                }
                _ => self.send_cnp(now, out),
            }
        }

        let start = pkt.seq;
        let end = pkt.seq + pkt.payload as u64;
        if end <= self.rcv_nxt {
            self.stats.duplicates += 1;
            self.send_ack(pkt.tx_ns, pkt.dscp, 0, out);
        } else if start > self.rcv_nxt {
            self.stats.out_of_order += 1;
            if self.nak_for != Some(self.rcv_nxt) {
                self.nak_for = Some(self.rcv_nxt);
                self.send_ack(pkt.tx_ns, pkt.dscp, NAK, out);
            }
        } else {
            // In order (possibly overlapping what we have, when go-back-N resegmented).
            let after_nak = self.nak_for.is_some();
            self.nak_for = None;
            self.rcv_nxt = end;
            self.pending += 1;
            if after_nak || pkt.has(flags::PSH) || self.pending >= self.ack_every {
                self.send_ack(pkt.tx_ns, pkt.dscp, 0, out);
            }
        }
    }

    /// The CNP window ended (harmless if early, late or disarmed).
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.cnp_deadline {
            Some(d) if now >= d => self.send_cnp(now, out),
            _ => {}
        }
    }

    fn send_cnp(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.last_cnp = Some(now);
        self.cnp_deadline = None;
        self.stats.cnps_sent += 1;
        let (echo, dscp) = self.cnp_echo;
        out.push(self.ends.reply(Kind::Cnp, self.rcv_nxt, echo, 0, Ecn::NotEct, 0, dscp));
    }

    fn send_ack(&mut self, echo: Nanos, dscp: u8, fl: u8, out: &mut Vec<Packet>) {
        if fl & NAK != 0 {
            self.stats.naks_sent += 1;
        } else {
            self.stats.acks_sent += 1;
        }
        // Cumulative (a NAK too): covers every in-order packet received so far.
        self.pending = 0;
        out.push(self.ends.reply(Kind::Ack, self.rcv_nxt, echo, 0, Ecn::NotEct, fl, dscp));
    }
}
