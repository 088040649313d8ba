//! Losses a switch causes on purpose (`[faults]`), so that a host's timers can be compared
//! with the kernel's on the same loss: the simulator and the emulated switch apply this one
//! rule to the TCP segments that reach a switch, before any queue (`ecnlab validate`'s SYN
//! and tail-loss-probe rows).
//!
//! - `drop_syns = n`: the first n SYNs of every connection are lost (the request and its
//!   retransmissions: the SYN timer's `TCP_TIMEOUT_INIT` and backoff, `tcp_syn_retries`;
//!   net/ipv4/tcp_timer.c `tcp_retransmit_timer`, `tcp_write_timeout`).
//! - `drop_byte = "B"`: once per connection, the first data segment that carries byte B of
//!   the connection's data (0: its first byte) is lost: a sized flow's last byte makes its
//!   tail segment the lost one (the Tail Loss Probe, `tcp_schedule_loss_probe`,
//!   net/ipv4/tcp_output.c). Its retransmission passes.
//!
//! Off by default: a scenario without `[faults]` loses nothing here and runs as before.

use crate::units::ByteSize;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `[faults]`: what the switches lose on purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultConfig {
    /// Drop the first this many SYNs of every TCP connection (0: none).
    #[serde(default)]
    pub drop_syns: u32,
    /// Drop, once per connection, the first data segment carrying this byte of the
    /// connection's data (counted from its first byte, e.g. a sized flow's size less 1B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_byte: Option<ByteSize>,
}

impl FaultConfig {
    /// Whether any fault is asked for.
    pub fn any(&self) -> bool {
        self.drop_syns > 0 || self.drop_byte.is_some()
    }
}

/// A TCP segment as the rule sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A connection request (SYN without ACK).
    Syn,
    /// Data: the offset of its first byte in the connection's data, and its length.
    Data { offset: u64, len: u32 },
    /// Anything else (ACKs, the SYN-ACK): never lost here.
    Other,
}

/// Why a fault dropped a segment (counted apart from the ports' drops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    Syn,
    Byte,
}

/// What each connection has lost so far.
#[derive(Clone, Copy, Debug, Default)]
struct Lost {
    syns: u32,
    byte: bool,
}

/// The rule with its state: connections are told apart by a key the caller chooses (the
/// simulator's connection index, the emulated switch's 4-tuple). Looked up, never iterated:
/// the order of a hash map cannot reach the result.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    cfg: FaultConfig,
    lost: HashMap<u64, Lost>,
    /// Segments dropped, by fault.
    pub syns_dropped: u64,
    pub bytes_dropped: u64,
}

impl Faults {
    /// None when the configuration asks for nothing (the caller then pays nothing).
    pub fn new(cfg: &FaultConfig) -> Option<Faults> {
        cfg.any().then(|| Faults { cfg: *cfg, ..Faults::default() })
    }

    /// Whether `seg` of connection `conn` is lost, and by which fault.
    pub fn drops(&mut self, conn: u64, seg: Segment) -> Option<Fault> {
        match seg {
            Segment::Syn if self.cfg.drop_syns > 0 => {
                let l = self.lost.entry(conn).or_default();
                (l.syns < self.cfg.drop_syns).then(|| {
                    l.syns += 1;
                    self.syns_dropped += 1;
                    Fault::Syn
                })
            }
            Segment::Data { offset, len } => {
                let b = self.cfg.drop_byte?.0;
                if len == 0 || b < offset || b >= offset + len as u64 {
                    return None;
                }
                let l = self.lost.entry(conn).or_default();
                (!l.byte).then(|| {
                    l.byte = true;
                    self.bytes_dropped += 1;
                    Fault::Byte
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(drop_syns: u32, drop_byte: Option<u64>) -> Faults {
        Faults::new(&FaultConfig { drop_syns, drop_byte: drop_byte.map(ByteSize) }).unwrap()
    }

    #[test]
    fn nothing_asked_is_no_rule() {
        assert!(Faults::new(&FaultConfig::default()).is_none());
    }

    /// Two SYNs lost per connection: the request and its first retransmission of each
    /// connection go, the third passes; ACKs and data never go.
    #[test]
    fn the_first_syns_of_each_connection_are_lost() {
        let mut f = faults(2, None);
        assert_eq!(f.drops(7, Segment::Syn), Some(Fault::Syn));
        assert_eq!(f.drops(8, Segment::Syn), Some(Fault::Syn));
        assert_eq!(f.drops(7, Segment::Syn), Some(Fault::Syn));
        assert_eq!(f.drops(7, Segment::Syn), None);
        assert_eq!(f.drops(7, Segment::Other), None);
        assert_eq!(f.drops(7, Segment::Data { offset: 0, len: 1448 }), None);
        assert_eq!(f.syns_dropped, 3);
    }

    /// Byte 14479 (a 14480-byte flow's last): the segment [13032, 14480) is lost once; its
    /// retransmission, and the segment before it, pass.
    #[test]
    fn the_segment_carrying_the_byte_is_lost_once() {
        let mut f = faults(0, Some(14479));
        assert_eq!(f.drops(1, Segment::Data { offset: 11584, len: 1448 }), None);
        assert_eq!(f.drops(1, Segment::Data { offset: 13032, len: 1448 }), Some(Fault::Byte));
        assert_eq!(f.drops(1, Segment::Data { offset: 13032, len: 1448 }), None);
        assert_eq!(f.drops(2, Segment::Data { offset: 14479, len: 1 }), Some(Fault::Byte));
        assert_eq!(f.drops(2, Segment::Syn), None);
        assert_eq!(f.bytes_dropped, 2);
    }
}
