//! A flow (message) as the hosts carry it and the results read it: its endpoints, size,
//! start and finish, and the timeouts and fast retransmissions of its connection's sender
//! that resent its bytes, and the handshake's retransmissions its start waited for. Here, apart from the hosts ([`crate::hosts`]) that update it, so
//! that the results ([`crate::metrics`]) read flows without importing the hosts.

use crate::transport::{Receiver, Sender};
use ecnlab_core::units::Nanos;

/// A flow (message): `size` bytes on a connection, or a long-lived flow (`size` None).
pub(crate) struct Flow {
    pub conn: u32,
    /// `[[flows]]` index, or `flows.len() + [[traffic]] index` for generated flows.
    pub spec: u32,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub size: Option<u64>,
    pub start: Nanos,
    /// Sequence range of the message on its connection.
    pub seq_start: u64,
    pub finish: Option<Nanos>,
    timeouts_at_start: u64,
    rtx_at_start: u64,
    syn_at_start: u64,
    tlp_at_start: u64,
    undo_at_start: u64,
    /// Timeouts before the flow finished (each a stall of at least `rto_min`).
    pub timeouts: u64,
    /// Timeouts after it finished at its receiver, while its last ACK was delayed: spurious,
    /// they stall nothing of this flow (the sender's window collapses for the next one).
    pub late_timeouts: u64,
    pub retransmits: u64,
    /// Retransmissions of the handshake this flow's start waited for (SYNs and SYN-ACKs,
    /// each after a timeout of at least `transport.rto_syn`): lost SYNs.
    pub syn_timeouts: u64,
    /// Tail loss probes sent while the flow's bytes were outstanding (`transport.tlp`: a
    /// probe after PTO instead of waiting for the RTO; RFC 8985 §7, tcp_send_loss_probe).
    pub tlp_probes: u64,
    /// Reductions undone as spurious while the flow's bytes were outstanding (`linux`:
    /// D-SACK, timestamps, F-RTO; tcp_undo_cwnd_reduction).
    pub undos: u64,
}

/// The handshake's timeouts of a connection so far, at both ends.
fn syn_timeouts(sender: &Sender, receiver: &Receiver) -> u64 {
    sender.syn_timeouts() + receiver.synack_timeouts()
}

impl Flow {
    pub(crate) fn new(conn: u32, spec: u32, src: u16, dst: u16, class: u8, size: Option<u64>, start: Nanos) -> Flow {
        Flow {
            conn,
            spec,
            src,
            dst,
            class,
            size,
            start,
            seq_start: 0,
            finish: None,
            timeouts_at_start: 0,
            rtx_at_start: 0,
            syn_at_start: 0,
            tlp_at_start: 0,
            undo_at_start: 0,
            undos: 0,
            syn_timeouts: 0,
            tlp_probes: 0,
            timeouts: 0,
            late_timeouts: 0,
            retransmits: 0,
        }
    }

    /// Its timeouts and fast retransmissions: the sender's since the flow began counting.
    pub(crate) fn count(&mut self, sender: &Sender, receiver: &Receiver) {
        self.timeouts = sender.timeouts() - self.timeouts_at_start;
        self.retransmits = sender.fast_retransmits() - self.rtx_at_start;
        self.syn_timeouts = syn_timeouts(sender, receiver) - self.syn_at_start;
        self.tlp_probes = sender.tlp_probes() - self.tlp_at_start;
        self.undos = sender.undos() - self.undo_at_start;
    }

    /// Count from here on (what the sender did before was for an earlier message's bytes).
    pub(crate) fn count_from(&mut self, sender: &Sender, receiver: &Receiver) {
        self.timeouts_at_start = sender.timeouts();
        self.rtx_at_start = sender.fast_retransmits();
        self.syn_at_start = syn_timeouts(sender, receiver);
        self.tlp_at_start = sender.tlp_probes();
        self.undo_at_start = sender.undos();
    }
}
