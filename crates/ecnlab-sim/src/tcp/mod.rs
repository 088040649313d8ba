//! TCP transports as sans-IO state machines: NewReno, ECN*, DCTCP and the dual AQM paper's
//! modified DCTCP (SPEC §3).
//!
//! A [`TcpSender`] and a [`TcpReceiver`] own no clock and no queue. The simulator hands them
//! `now` and a caller-owned `Vec<Packet>` to push into; each says when it next needs
//! attention (`timer()`), and a timer call that comes late or after the deadline moved is
//! harmless. Nothing allocates per packet on the sender path; the receiver keeps a small
//! reused interval list for out-of-order data. No randomness, no hash maps, no system time.
//!
//! Layout:
//! - [`config`]: the `[transport]` table ([`TcpConfig`], [`CcKind`]) with sourced defaults.
//! - `cc`: the per-flavour ECN response (trait with no-op default hooks, enum dispatch).
//! - [`sender`]: windows, NewReno loss recovery (RFC 5681/6582), RTO (RFC 6298), segment
//!   emission.
//! - [`receiver`]: reassembly, (delayed) ACKs, ECN echo (RFC 3168 §6.1.3, RFC 8257 §3.2).
//!
//! Conventions: sequence numbers are byte offsets from 0; connections are pre-established
//! (no handshake, as in the papers' ns-2 setups). Data segments are `size = payload + 40`;
//! ACKs are 40 bytes, not-ECT, `seq` = cumulative ACK, `tx_ns` = echoed send time of the
//! segment that triggered them. The flavours that use ECN send every data segment ECT(0),
//! retransmissions included (as the TCN ns-2 code does for DCTCP). The segment carrying the
//! last byte the application has added so far has PSH set (none for unlimited flows).

pub(crate) mod cc;
pub mod config;
pub mod linux;
pub mod receiver;
pub mod sender;

pub use config::{CcKind, PartialAckRto, Profile, TcpConfig};
pub use receiver::{ReceiverStats, TcpReceiver};
pub use sender::{Recovery, SenderStats, TcpSender};

/// Pass to [`TcpSender::add_data`] for a long-lived flow that always has data.
pub use crate::transport::app::UNLIMITED;

#[cfg(test)]
mod tests;
