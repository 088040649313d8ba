//! The `linux` sender's side of the three-way handshake (RFC 9293 §3.5; net/ipv4/
//! tcp_output.c `tcp_connect`, tcp_timer.c `tcp_retransmit_timer` in SYN_SENT, tcp_input.c
//! `tcp_rcv_synsent_state_process`, `tcp_init_transfer`).
//!
//! The first data the application hands over sends the SYN; the SYN's timer starts at
//! `rto_syn` (`TCP_TIMEOUT_INIT`, 1 s), stays there for the kernel line's
//! `tcp_syn_linear_timeouts` retransmissions (4 from Linux 6.5, none before) and then doubles
//! per retransmission, `syn_retries` times more (`tcp_syn_retries`; `tcp_write_timeout` adds
//! the linear ones to it), after which the connection fails (ETIMEDOUT: its data is never
//! sent). The SYN-ACK gives the first RTT sample (its timestamp echo: the SYN it answers),
//! the sender ACKs it (a pure ACK, ahead of its first data, as `tcp_send_ack` when the
//! application has not written yet) and sends; a SYN sent more than twice leaves a window of
//! one segment (`tp->total_retrans > 1` in `tcp_init_transfer`; RFC 5681 §3.1 asks it after
//! any lost SYN). A SYN-ACK that comes again (its first ACK was lost) is ACKed again.
//!
//! Sequence numbers stay byte offsets of the data from 0 (the SYN takes the ISN below them).

use super::{LinuxSender, NS_PER_US};
use crate::packet::{flags, Ecn, Packet};
use crate::tcp::linux::ca::CongestionOps;
use crate::tcp::linux::rtt::RttEstimator;
use ecnlab_core::units::Nanos;

/// Where the connection's opening stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// Open (or pre-established: `transport.handshake = false`).
    Established,
    /// Nothing sent yet: the first data sends the SYN.
    Closed,
    /// SYN sent `retries` times over (0: the first only).
    SynSent { retries: u32 },
    /// `syn_retries` exhausted: the connection failed, nothing more is sent.
    Failed,
}

impl LinuxSender {
    /// The application wrote before the handshake ended: send the SYN if it has not gone.
    pub(super) fn open_poll(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.open == Open::Closed && self.app.added() > 0 {
            self.open = Open::SynSent { retries: 0 };
            self.send_syn(now, out);
            self.deadline = Some(now + self.p.rto_syn);
        }
    }

    /// The SYN's timer fired (its deadline passed): retransmit with backoff, or fail.
    pub(super) fn syn_timeout(&mut self, now: Nanos, retries: u32, out: &mut Vec<Packet>) {
        // tcp_write_timeout: SYN_SENT gives up after tcp_syn_retries plus the linear ones.
        if retries >= self.p.syn_retries + self.p.kernel.syn_linear_timeouts() {
            self.open = Open::Failed;
            self.deadline = None;
            return;
        }
        let retries = retries + 1;
        self.open = Open::SynSent { retries };
        self.stats.syn_timeouts += 1;
        self.send_syn(now, out);
        // The wait after the `retries`-th retransmission: 1, 1, 1, 1, 1, 2, 4 ... x rto_syn
        // with 4 linear timeouts; 1, 2, 4 ... without.
        let backoff = retries.saturating_sub(self.p.kernel.syn_linear_timeouts()).min(32);
        let rto = self.p.rto_syn.saturating_mul(1 << backoff).min(self.p.rto_max);
        self.deadline = Some(now + rto);
    }

    /// A SYN-ACK (or any ACK while the handshake is under way) arrived.
    pub(super) fn on_synack(&mut self, now: Nanos, ack: &Packet, out: &mut Vec<Packet>) {
        match self.open {
            Open::SynSent { retries } if ack.has(flags::SYN) => {
                // tcp_ack_update_rtt from the timestamp echo (the SYN the receiver answered).
                if ack.tx_ns <= now {
                    let m = ((now - ack.tx_ns) / NS_PER_US).max(1);
                    RttEstimator::update(&mut self.rtt, m, 0, 0, self.p.rto_min_us);
                    let est = self.rtt.as_ref().expect("just sampled");
                    self.tp.srtt_us = est.srtt_us.min(u32::MAX as u64) as u32;
                    self.tp.min_rtt_us = self.tp.min_rtt_us.min(m.min(u32::MAX as u64) as u32);
                    self.rto = (est.rto_us() * NS_PER_US).min(self.p.rto_max).max(1);
                }
                // tcp_init_transfer: one segment after a SYN sent more than twice.
                if retries + 1 > 2 {
                    self.tp.snd_cwnd = 1;
                }
                self.open = Open::Established;
                self.deadline = None;
                self.send_pure_ack(now, out);
                self.transmit(now, false, out);
            }
            // The SYN-ACK again: our ACK was lost.
            Open::Established if ack.has(flags::SYN) => self.send_pure_ack(now, out),
            _ => {}
        }
        self.sync_stats();
    }

    fn send_syn(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        // tcp_ecn_send_syn: a congestion control that needs ECN sends its SYN ECT.
        let ecn = if self.ca.needs_ecn() { Ecn::Ect0 } else { Ecn::NotEct };
        out.push(self.ends.data(now, 0, 0, ecn, flags::SYN, self.tag.dscp_of(0)));
    }

    fn send_pure_ack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let ecn = if self.ca.needs_ecn() { Ecn::Ect0 } else { Ecn::NotEct };
        out.push(self.ends.data(now, 0, 0, ecn, 0, self.tag.dscp_of(0)));
    }
}
