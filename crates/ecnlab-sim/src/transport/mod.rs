//! One driving interface over the transports (window-based TCP flavours and rate-based
//! DCQCN), dispatched by enum so the event loop makes no virtual calls per packet; what
//! their endpoints share is written once beneath it: [`app`] (the connection's hosts and
//! packets, the application's writes, PSH, PIAS tagging) and [`reassembly`] (a TCP
//! receiver's in-order point and out-of-order runs).

pub mod app;
pub mod reassembly;

use crate::dcqcn::{DcqcnReceiver, DcqcnSender};
use crate::packet::Packet;
use crate::tcp::linux::{LinuxReceiver, LinuxSender};
use crate::tcp::{TcpReceiver, TcpSender};
use ecnlab_core::Nanos;

// Unboxed: a connection's sender is read on every ACK; the textbook and DCQCN senders pay the
// linux one's size (about 230 B more) per connection in memory, never a pointer chase.
#[allow(clippy::large_enum_variant)]
pub enum Sender {
    /// The `textbook` profile's TCP.
    Tcp(TcpSender),
    /// The `linux` profile's TCP.
    Linux(LinuxSender),
    Dcqcn(DcqcnSender),
}

// Unboxed, as `Sender`.
#[allow(clippy::large_enum_variant)]
pub enum Receiver {
    Tcp(TcpReceiver),
    Linux(LinuxReceiver),
    Dcqcn(DcqcnReceiver),
}

macro_rules! each {
    ($self:expr, $t:ident, $s:ident => $e:expr) => {
        match $self {
            $t::Tcp($s) => $e,
            $t::Linux($s) => $e,
            $t::Dcqcn($s) => $e,
        }
    };
}

impl Sender {
    #[inline]
    pub fn add_data(&mut self, bytes: u64) {
        each!(self, Sender, s => s.add_data(bytes))
    }
    #[inline]
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        each!(self, Sender, s => s.poll(now, out))
    }
    /// An ACK (or CNP) arrived; `rcv` is the connection's receiver, whose SACK log holds
    /// the blocks the ACK carries (`tcp::linux::sack_option`).
    #[inline]
    pub fn on_ack(&mut self, now: Nanos, pkt: &Packet, rcv: &Receiver, out: &mut Vec<Packet>) {
        match self {
            Sender::Tcp(s) => s.on_ack(now, pkt, out),
            Sender::Linux(s) => {
                let sack = match rcv {
                    Receiver::Linux(r) => r.sack_log().read(pkt.payload),
                    _ => None,
                };
                s.on_ack(now, pkt, sack, out)
            }
            Sender::Dcqcn(s) => s.on_ack(now, pkt, out),
        }
    }
    #[inline]
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        each!(self, Sender, s => s.on_timer(now, out))
    }
    /// A data packet of this sender left its host's NIC (DCQCN's NIC arbiter; TCP does not
    /// wait for its NIC): send what that allows.
    pub fn nic_sent(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if let Sender::Dcqcn(s) = self {
            s.nic_sent();
            s.poll(now, out);
        }
    }
    /// The host's NIC took this sender's oldest data packet not yet placed, to leave it at
    /// `done`, or refused it (None): the TX completions of the linux sender's TCP Small
    /// Queues (the other senders ignore them).
    #[inline]
    pub fn tx_scheduled(&mut self, done: Option<Nanos>) {
        if let Sender::Linux(s) = self {
            s.tx_scheduled(done);
        }
    }
    #[inline]
    pub fn timer(&self) -> Option<Nanos> {
        each!(self, Sender, s => s.timer())
    }
    #[inline]
    pub fn acked_bytes(&self) -> u64 {
        each!(self, Sender, s => s.acked_bytes())
    }
    #[inline]
    pub fn is_idle(&self) -> bool {
        each!(self, Sender, s => s.is_idle())
    }
    pub fn set_dscp(&mut self, dscp: u8) {
        each!(self, Sender, s => s.set_dscp(dscp))
    }
    /// Bytes the application has handed over so far (where the next message starts).
    pub fn added_bytes(&self) -> u64 {
        each!(self, Sender, s => s.added_bytes())
    }
    pub fn set_pias(&mut self, start_seq: u64, thresholds: &[u64]) {
        match self {
            Sender::Tcp(s) => s.set_pias(start_seq, thresholds),
            Sender::Linux(s) => s.set_pias(start_seq, thresholds),
            Sender::Dcqcn(_) => {} // PIAS tags TCP flows only
        }
    }
    /// Retransmission timeouts so far.
    pub fn timeouts(&self) -> u64 {
        match self {
            Sender::Tcp(s) => s.stats().timeouts,
            Sender::Linux(s) => s.stats().timeouts,
            Sender::Dcqcn(s) => s.stats().timeouts,
        }
    }
    /// SYN retransmissions so far (the `linux` handshake).
    pub fn syn_timeouts(&self) -> u64 {
        match self {
            Sender::Linux(s) => s.stats().syn_timeouts,
            Sender::Tcp(_) | Sender::Dcqcn(_) => 0,
        }
    }
    /// Tail loss probes so far (the `linux` sender's TLP).
    pub fn tlp_probes(&self) -> u64 {
        match self {
            Sender::Linux(s) => s.stats().tlp_probes,
            Sender::Tcp(_) | Sender::Dcqcn(_) => 0,
        }
    }
    /// Reductions undone so far (the `linux` sender's undo).
    pub fn undos(&self) -> u64 {
        match self {
            Sender::Linux(s) => s.stats().undos,
            Sender::Tcp(_) | Sender::Dcqcn(_) => 0,
        }
    }
    /// Fast retransmissions so far.
    pub fn fast_retransmits(&self) -> u64 {
        match self {
            Sender::Tcp(s) => s.stats().fast_retransmits,
            Sender::Linux(s) => s.stats().fast_retransmits,
            Sender::Dcqcn(s) => s.stats().nak_rewinds,
        }
    }
}

impl Receiver {
    #[inline]
    pub fn on_data(&mut self, now: Nanos, pkt: &Packet, out: &mut Vec<Packet>) {
        each!(self, Receiver, r => r.on_data(now, pkt, out))
    }
    #[inline]
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        each!(self, Receiver, r => r.on_timer(now, out))
    }
    #[inline]
    pub fn timer(&self) -> Option<Nanos> {
        each!(self, Receiver, r => r.timer())
    }
    /// SYN-ACK retransmissions so far (the `linux` handshake).
    pub fn synack_timeouts(&self) -> u64 {
        match self {
            Receiver::Linux(r) => r.synack_timeouts(),
            Receiver::Tcp(_) | Receiver::Dcqcn(_) => 0,
        }
    }
    /// In-order bytes the application holds, where a message's completion is taken at the
    /// receiver: the `linux` profile, whose delayed ACKs would otherwise add up to the
    /// delayed-ACK timer to a message that ends on an odd full segment. `None` for the
    /// stacks whose FCT ends at the ACK of the last byte (the papers' ns-2 convention).
    #[inline]
    pub fn completion_bytes(&self) -> Option<u64> {
        match self {
            Receiver::Linux(r) => Some(r.delivered_bytes()),
            Receiver::Tcp(_) | Receiver::Dcqcn(_) => None,
        }
    }
}
