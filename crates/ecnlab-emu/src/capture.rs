//! What the switch sees of TCP at its ingress, before any queue: the capture of the frames
//! the hosts' kernels sent (`capture_frames`: the trains a sender puts on the wire, SYNs,
//! retransmissions and their times), and the losses of `[faults]` (`ecnlab_core::fault`,
//! the rule the simulator applies too).
//!
//! Read first: RFC 9293 §3.1 (the TCP header). A connection is its 4-tuple; its data offset
//! is counted from the initial sequence number of the SYN the switch saw (ISN + 1 is the
//! first data byte), modulo 2^32 as TCP's sequence space is.
//!
//! The capture is an observer: a record is appended to a vector allocated once
//! (`capture_frames` records at most, then `truncated`); nothing the switch decides reads it.

use ecnlab_core::fault::{Fault, FaultConfig, Faults, Segment};
use ecnlab_core::Nanos;
use serde::Serialize;
use std::collections::HashMap;

/// TCP flag bits (RFC 9293 §3.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const ACK: u8 = 0x10;

/// The capture's columns, in the order of each record.
pub const COLUMNS: [&str; 10] =
    ["t_ns", "in_port", "src_ip", "dst_ip", "sport", "dport", "seq", "ack", "flags", "payload"];
/// The largest capture a configuration may ask for (records of 80 bytes: 80 MB).
pub const MAX_FRAMES: usize = 1_000_000;

/// The TCP header fields the switch reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpInfo {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload: u16,
}

impl TcpInfo {
    /// The TCP header of a well-formed IPv4 frame whose header starts at `ip_off` (`None`:
    /// not TCP, a fragment, or cut short). `payload`: the TCP payload bytes the parser found.
    pub fn parse(frame: &[u8], ip_off: usize, payload: u16) -> Option<TcpInfo> {
        let h = frame.get(ip_off..)?;
        if h.len() < 20 || h[9] != 6 || u16::from_be_bytes([h[6], h[7]]) & 0x1fff != 0 {
            return None;
        }
        let ihl = ((h[0] & 0x0f) as usize) * 4;
        let t = h.get(ihl..ihl + 20)?;
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        Some(TcpInfo {
            src_ip: be32(&h[12..16]),
            dst_ip: be32(&h[16..20]),
            sport: u16::from_be_bytes([t[0], t[1]]),
            dport: u16::from_be_bytes([t[2], t[3]]),
            seq: be32(&t[4..8]),
            ack: be32(&t[8..12]),
            flags: t[13],
            payload,
        })
    }

    /// The connection of a segment in its direction: the low 16 bits of each address (the
    /// emulation's hosts are 10.0.x.y, distinct there) and the two ports.
    pub fn conn(&self) -> u64 {
        (self.src_ip as u64 & 0xffff) << 48
            | (self.dst_ip as u64 & 0xffff) << 32
            | (self.sport as u64) << 16
            | self.dport as u64
    }
}

/// Ingress TCP: the capture and the faults.
#[derive(Debug, Default)]
pub struct Ingress {
    /// Records, `COLUMNS` each (None: no capture asked).
    frames: Option<Vec<[u64; 10]>>,
    cap: usize,
    pub truncated: bool,
    faults: Option<Faults>,
    /// Each connection's ISN, from its SYN (only while faults need data offsets).
    isn: HashMap<u64, u32>,
}

impl Ingress {
    pub fn new(capture_frames: usize, faults: &FaultConfig) -> Ingress {
        let cap = capture_frames.min(MAX_FRAMES);
        Ingress {
            frames: (cap > 0).then(|| Vec::with_capacity(cap)),
            cap,
            truncated: false,
            faults: Faults::new(faults),
            isn: HashMap::new(),
        }
    }

    /// Whether anything here needs the TCP header (else the switch skips parsing it).
    pub fn active(&self) -> bool {
        self.frames.is_some() || self.faults.is_some()
    }

    /// A TCP segment arrived on `in_port` at `rx_ns` (kernel receive timestamp): recorded,
    /// and whether a fault drops it.
    pub fn on_segment(&mut self, in_port: usize, rx_ns: Nanos, t: &TcpInfo) -> Option<Fault> {
        if let Some(v) = self.frames.as_mut() {
            if v.len() < self.cap {
                v.push([
                    rx_ns,
                    in_port as u64,
                    t.src_ip as u64,
                    t.dst_ip as u64,
                    t.sport as u64,
                    t.dport as u64,
                    t.seq as u64,
                    t.ack as u64,
                    t.flags as u64,
                    t.payload as u64,
                ]);
            } else {
                self.truncated = true;
            }
        }
        let f = self.faults.as_mut()?;
        let conn = t.conn();
        let seg = if t.flags & (SYN | ACK) == SYN {
            self.isn.insert(conn, t.seq);
            Segment::Syn
        } else if t.payload > 0 {
            match self.isn.get(&conn) {
                // Data offset modulo 2^32 from ISN + 1.
                Some(&isn) => {
                    Segment::Data { offset: t.seq.wrapping_sub(isn.wrapping_add(1)) as u64, len: t.payload as u32 }
                }
                None => Segment::Other, // a connection opened before the switch started
            }
        } else {
            Segment::Other
        };
        f.drops(conn, seg)
    }

    /// What was captured and dropped, for the report.
    pub fn report(&self) -> Option<IngressReport> {
        if !self.active() {
            return None;
        }
        Some(IngressReport {
            columns: COLUMNS,
            frames: self.frames.clone().unwrap_or_default(),
            truncated: self.truncated,
            syns_dropped: self.faults.as_ref().map_or(0, |f| f.syns_dropped),
            bytes_dropped: self.faults.as_ref().map_or(0, |f| f.bytes_dropped),
        })
    }
}

/// The report's `ingress_tcp`.
#[derive(Clone, Debug, Serialize)]
pub struct IngressReport {
    pub columns: [&'static str; 10],
    /// One record per TCP frame received, in the order the switch read them.
    pub frames: Vec<[u64; 10]>,
    /// `capture_frames` were reached: later frames are not recorded.
    pub truncated: bool,
    /// Segments `[faults]` dropped, by fault.
    pub syns_dropped: u64,
    pub bytes_dropped: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{parse, tests::tcp_frame};
    use ecnlab_core::units::ByteSize;

    /// A frame of `tcp_frame` with the TCP fields set.
    fn segment(sport: u16, seq: u32, flags: u8, payload: usize) -> (Vec<u8>, TcpInfo) {
        let mut f = tcp_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], 0, payload);
        let ip = 14;
        let ihl = ((f[ip] & 0x0f) as usize) * 4;
        f[ip + ihl..ip + ihl + 2].copy_from_slice(&sport.to_be_bytes());
        f[ip + ihl + 4..ip + ihl + 8].copy_from_slice(&seq.to_be_bytes());
        f[ip + ihl + 13] = flags;
        let p = parse(&f).unwrap().ipv4().unwrap();
        let t = TcpInfo::parse(&f, p.offset as usize, p.payload).unwrap();
        (f, t)
    }

    #[test]
    fn the_tcp_header_is_read_where_the_ip_header_ends() {
        let (_, t) = segment(40000, 7, SYN, 0);
        assert_eq!((t.sport, t.seq, t.flags, t.payload), (40000, 7, SYN, 0));
        let (_, d) = segment(40000, 8, ACK, 100);
        assert_eq!(d.payload, 100);
        assert_eq!(t.conn(), d.conn());
    }

    /// Two SYNs lost, then byte 2999 of the data: with ISN 2^32 - 2 (the offsets wrap), the
    /// segment at seq ISN + 1 + 1448 * 2 = 2894 (mod 2^32) carries bytes 2896..4344... the
    /// one that holds 2999 is lost once.
    #[test]
    fn faults_count_data_from_the_isn_across_the_wrap() {
        let faults = FaultConfig { drop_syns: 2, drop_byte: Some(ByteSize(2999)) };
        let mut ing = Ingress::new(10, &faults);
        let isn = u32::MAX - 1;
        let (_, syn) = segment(40000, isn, SYN, 0);
        assert_eq!(ing.on_segment(1, 0, &syn), Some(Fault::Syn));
        assert_eq!(ing.on_segment(1, 1, &syn), Some(Fault::Syn));
        assert_eq!(ing.on_segment(1, 3, &syn), None);
        let at = |k: u32| isn.wrapping_add(1).wrapping_add(1448 * k);
        let (_, d1) = segment(40000, at(1), ACK, 1448);
        let (_, d2) = segment(40000, at(2), ACK, 1448);
        assert_eq!(ing.on_segment(1, 4, &d1), None);
        assert_eq!(ing.on_segment(1, 5, &d2), Some(Fault::Byte));
        assert_eq!(ing.on_segment(1, 6, &d2), None);
        let r = ing.report().unwrap();
        assert_eq!((r.syns_dropped, r.bytes_dropped, r.frames.len(), r.truncated), (2, 1, 6, false));
        assert_eq!(r.frames[4][6], at(2) as u64);
    }

    #[test]
    fn the_capture_stops_at_its_size() {
        let mut ing = Ingress::new(1, &FaultConfig::default());
        let (_, t) = segment(1, 1, ACK, 0);
        ing.on_segment(0, 0, &t);
        ing.on_segment(0, 1, &t);
        let r = ing.report().unwrap();
        assert_eq!((r.frames.len(), r.truncated), (1, true));
        assert!(Ingress::new(0, &FaultConfig::default()).report().is_none());
    }
}
