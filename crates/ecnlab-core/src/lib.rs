//! # ecnlab-core
//!
//! The portable heart of ecnlab: ECN marking schemes ([`marking`]), packet schedulers
//! ([`sched`]) and the switch egress port that glues them to FIFOs and a shared buffer
//! ([`port`]), and how a port is measured over a window ([`measure`]). Nothing here knows about a simulator or a network: callers hand in the
//! current time and packets, and get decisions back. The discrete-event simulator
//! (`ecnlab-sim`) and the emulated switch use this crate unchanged.
//!
//! Papers (full texts in the project's shared papers folder):
//! - TCN: Bai et al., "Enabling ECN over Generic Packet Scheduling", CoNEXT 2016.
//! - ECN#: Zhang et al., "Enabling ECN for Datacenter Networks with RTT Variations", TCC 2022.
//! - Dual AQM: Kühlewind et al., "Using Data Center TCP (DCTCP) in the Internet", 2014.

pub mod buffer;
pub mod fault;
pub mod marking;
pub mod measure;
pub mod pfc;
pub mod port;
pub mod rng;
pub mod sched;
pub mod units;

pub use buffer::BufferPool;
pub use marking::{Decision, Marking, MarkingConfig, MarkingScheme, NonEctPolicy, PacketView, QueueState, Reason};
pub use port::{Port, PortConfig, PortPacket, QueueStats};
pub use sched::{QueueOcc, Sched, Scheduler, SchedulerConfig, SchedulerKind};
pub use units::Nanos;
