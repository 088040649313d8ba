//! # ecnlab-emu: the emulated switch
//!
//! A userspace software switch in the spirit of the TCN paper's prototype (TCN §5: a server
//! with several NICs whose qdisc classifies by DSCP, marks at enqueue or dequeue, schedules
//! and shapes each port to 99.5 % of line rate). Here the ports are veth interfaces bound
//! with AF_PACKET, and everything between receive and transmit is ecnlab-core's egress
//! [`Port`](ecnlab_core::Port), unchanged: the same marking and scheduling code as the
//! simulator, now carrying real Linux TCP.
//!
//! Modules:
//! - [`wire`]: Ethernet/IPv4 parsing, CE marking with the RFC 1624 checksum update;
//! - [`frame`]: the frame pool and the `Copy` handle the port queues;
//! - [`fib`]: MAC learning and static entries;
//! - [`shaper`]: the per-port token bucket;
//! - [`capture`]: TCP at ingress: the capture of what the kernels sent, `[faults]`' losses;
//! - [`switch`]: ingress, egress and counters, without sockets (unit-tested);
//! - [`stall`]: how late the event loop ran (the machine's disturbance, seen by the switch);
//! - [`report`]: what the switch measured, typed (the core's queue figures);
//! - [`config`]: the JSON configuration;
//! - [`plan`]: the emulation plan `ecnlab emulate` carries out, built once from the resolved scenario;
//! - [`sys`]: the system calls (the only `unsafe` code).
//!
//! The binary `ecnlab-switch` runs one single-threaded event loop: receive batches from
//! every port socket, transmit what the shapers allow, sleep in ppoll until the next frame
//! or the next shaper deadline.

pub mod capture;
pub mod config;
pub mod fib;
pub mod frame;
pub mod plan;
pub mod report;
pub mod shaper;
pub mod stall;
pub mod switch;
pub mod sys;
pub mod wire;
