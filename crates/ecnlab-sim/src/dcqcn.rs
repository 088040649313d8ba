//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015)
//! as sans-IO state machines, for SPEC §3's rate-based transport and §6's ecnsharp-dcqcn
//! experiment (ECN# TCC 2022 §5.4.4, Fig. 21).
//!
//! Read the DCQCN paper §3.1 first. Its three parts and where they live:
//! - CP, the congestion point: the switch's RED-like ECN marking (Kmin, Kmax, Pmax). That is
//!   ecnlab-core's marking library, not this module.
//! - NP, the notification point ([`DcqcnReceiver`]): turns CE marks into congestion
//!   notification packets (CNPs, [`Kind::Cnp`](crate::packet::Kind::Cnp)), at most one per
//!   flow per `cnp_interval` (N = 50 us).
//! - RP, the reaction point ([`DcqcnSender`]): a paced sender whose current rate Rc is cut
//!   on each CNP (Rt = Rc, Rc = Rc (1 - alpha/2), alpha = (1 - g) alpha + g), whose alpha
//!   decays every `alpha_timer` without CNP, and whose rate recovers through fast recovery,
//!   additive increase and hyper increase, driven by a timer and a byte counter as in QCN.
//!
//! Both halves follow the TCP module's driving conventions ([`crate::tcp`]): they own no
//! clock; every entry point takes `now` and a caller-owned `Vec<Packet>` to push into;
//! `timer()` is the next deadline; a late or early timer call is harmless. No allocation per
//! packet, no randomness, no hash maps.
//!
//! Reliability: RoCE v2 RC semantics, go-back-N. The receiver keeps no out-of-order data:
//! a packet beyond the expected byte is discarded and answered by one NAK (an ACK carrying
//! [`NAK`]) per expected sequence number, as RoCE NICs send one sequence-error NAK and then
//! stay silent until the missing packet arrives; the sender resends from the NAK's sequence.
//! A fixed retransmission timeout (`rto`) covers lost NAKs, lost retransmissions and tail
//! losses. DCQCN does not react to loss (the paper assumes PFC); ecnlab has no PFC, so
//! losses cost go-back-N retransmissions and, at worst, an RTO.
//!
//! Conventions shared with the TCP transport, so that results compare: sequence numbers are
//! byte offsets from 0; data packets are `payload + 40` bytes on the wire, ACKs, NAKs and
//! CNPs 40 bytes (RoCE v2's real overheads, IP+UDP+BTH+ICRC = 44 B per data packet and ~60 B
//! per CNP at the IP layer, are not modelled); the packet carrying the last byte added so far
//! has PSH set; ACKs/NAKs/CNPs are not-ECT, echo the triggering packet's `tx_ns` and DSCP.
//! Data packets, retransmissions included, are ECT(0). Real deployments send CNPs in a
//! high-priority class; here they take the data's DSCP (the simulator may restamp them).
//!
//! Layout: [`config`] ([`DcqcnConfig`], the `[transport.dcqcn]` table with sourced defaults
//! and the line-rate scaling of R_AI / R_HAI), [`sender`] (RP + go-back-N sender),
//! [`receiver`] (NP + go-back-N receiver).

pub mod config;
pub mod receiver;
pub mod sender;

pub use config::DcqcnConfig;
pub use receiver::{DcqcnReceiver, DcqcnReceiverStats};
pub use sender::{DcqcnSender, DcqcnStats, Stage};

/// Flag bit (in [`Packet::flags`](crate::packet::Packet::flags)) marking an ACK as a
/// go-back-N NAK: "resend from `seq`". Chosen clear of [`crate::packet::flags`]' ECE, CWR
/// and PSH bits.
pub const NAK: u8 = 8;

/// Pass to [`DcqcnSender::add_data`] for a long-lived flow that always has data.
pub use crate::transport::app::UNLIMITED;

#[cfg(test)]
mod tests;
