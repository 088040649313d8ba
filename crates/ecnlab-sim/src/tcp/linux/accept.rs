//! The `linux` receiver's side of the three-way handshake (RFC 9293 §3.5; net/ipv4/
//! tcp_input.c `tcp_conn_request`, tcp_minisocks.c `tcp_check_req`, the request socket's
//! timer `reqsk_timer_handler`).
//!
//! A SYN is answered with a SYN-ACK that echoes the SYN's timestamp; the SYN-ACK's timer
//! starts at `rto_syn` (`TCP_TIMEOUT_INIT`) and doubles per retransmission, `synack_retries`
//! times (`tcp_synack_retries`), after which the request is forgotten (a later SYN starts it
//! again). A SYN that comes again while the request waits is answered again
//! (`inet_rtx_syn_ack`). The sender's ACK, or its first data (which carries the same ACK),
//! opens the connection.

use crate::packet::{flags, Kind, Packet};
use ecnlab_core::units::Nanos;

/// Where a connection request stands at the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// Open (or pre-established: `transport.handshake = false`).
    Established,
    /// No SYN yet (or a request given up).
    Listen,
    /// SYN-ACK sent `retries` times over, the next retransmission at `deadline`; `syn_tx`:
    /// the send time of the SYN it answers (its timestamp, echoed).
    SynReceived { retries: u32, deadline: Nanos, syn_tx: Nanos },
}

/// The handshake's parameters and state at a receiver.
#[derive(Clone, Debug)]
pub struct Listener {
    pub state: Accept,
    rto_syn: Nanos,
    synack_retries: u32,
    /// SYN-ACK retransmissions (timeouts).
    pub synack_timeouts: u64,
}

/// What the receiver does with a packet while the handshake runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Answer with this SYN-ACK (`tx_ns` is its echo).
    SynAck(Nanos),
    /// The packet is handled (a handshake ACK, a stray SYN): nothing more.
    Done,
    /// Data: TCP's receive path takes it (the connection is open now).
    Data,
}

impl Listener {
    pub fn new(handshake: bool, rto_syn: Nanos, synack_retries: u32) -> Self {
        let state = if handshake { Accept::Listen } else { Accept::Established };
        Listener { state, rto_syn: rto_syn.max(1), synack_retries, synack_timeouts: 0 }
    }

    /// A data-direction packet (a SYN, the handshake's ACK, or data) arrived at `now`.
    pub fn on_packet(&mut self, now: Nanos, pkt: &Packet) -> Step {
        debug_assert_eq!(pkt.kind, Kind::Data);
        let syn = pkt.has(flags::SYN);
        match self.state {
            Accept::Listen if syn => {
                self.state = Accept::SynReceived { retries: 0, deadline: now + self.rto_syn, syn_tx: pkt.tx_ns };
                Step::SynAck(pkt.tx_ns)
            }
            Accept::SynReceived { retries, deadline, .. } if syn => {
                // The SYN again: answer it again (its own timestamp), the timer goes on.
                self.state = Accept::SynReceived { retries, deadline, syn_tx: pkt.tx_ns };
                Step::SynAck(pkt.tx_ns)
            }
            _ if syn || pkt.payload == 0 => {
                if matches!(self.state, Accept::SynReceived { .. }) && !syn {
                    self.state = Accept::Established;
                }
                Step::Done
            }
            Accept::SynReceived { .. } => {
                self.state = Accept::Established;
                Step::Data
            }
            Accept::Established | Accept::Listen => Step::Data,
        }
    }

    /// When the SYN-ACK is retransmitted.
    pub fn timer(&self) -> Option<Nanos> {
        match self.state {
            Accept::SynReceived { deadline, .. } => Some(deadline),
            _ => None,
        }
    }

    /// The SYN-ACK's timer at `now`: Some(the echo) to retransmit it, None otherwise.
    pub fn on_timer(&mut self, now: Nanos) -> Option<Nanos> {
        let Accept::SynReceived { retries, deadline, syn_tx } = self.state else { return None };
        if now < deadline {
            return None;
        }
        if retries >= self.synack_retries {
            self.state = Accept::Listen;
            return None;
        }
        let retries = retries + 1;
        self.synack_timeouts += 1;
        let rto = self.rto_syn.saturating_mul(1 << retries.min(32));
        self.state = Accept::SynReceived { retries, deadline: now + rto, syn_tx };
        Some(syn_tx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(fl: u8, payload: u32, tx: Nanos) -> Packet {
        Packet { kind: Kind::Data, flags: fl, payload, tx_ns: tx, ..Packet::default() }
    }

    /// By hand, rto_syn 1 s: the SYN at 0 is answered; the SYN-ACK goes again at 1 s, 3 s
    /// (1 + 2), 7 s (3 + 4); the sender's ACK then opens the connection.
    #[test]
    fn the_synack_backs_off_until_the_ack() {
        let s = 1_000_000_000;
        let mut l = Listener::new(true, s, 5);
        assert_eq!(l.on_packet(0, &pkt(flags::SYN, 0, 7)), Step::SynAck(7));
        assert_eq!(l.timer(), Some(s));
        assert_eq!(l.on_timer(s - 1), None);
        assert_eq!((l.on_timer(s), l.timer()), (Some(7), Some(3 * s)));
        assert_eq!((l.on_timer(3 * s), l.timer()), (Some(7), Some(7 * s)));
        assert_eq!(l.on_packet(7 * s - 1, &pkt(0, 0, 0)), Step::Done);
        assert_eq!((l.state, l.timer(), l.synack_timeouts), (Accept::Established, None, 2));
        assert_eq!(l.on_packet(7 * s, &pkt(0, 1460, 0)), Step::Data);
        // The first data opens it too; a pre-established receiver takes data at once.
        let mut l = Listener::new(true, s, 5);
        l.on_packet(0, &pkt(flags::SYN, 0, 0));
        assert_eq!(l.on_packet(10, &pkt(0, 1460, 0)), Step::Data);
        assert_eq!(l.state, Accept::Established);
        assert_eq!(Listener::new(false, s, 5).on_packet(0, &pkt(0, 1460, 0)), Step::Data);
    }

    #[test]
    fn a_request_is_forgotten_after_its_retries() {
        let mut l = Listener::new(true, 10, 1);
        l.on_packet(0, &pkt(flags::SYN, 0, 0));
        assert_eq!(l.on_timer(10), Some(0));
        assert_eq!(l.on_timer(30), None);
        assert_eq!(l.state, Accept::Listen);
    }
}
