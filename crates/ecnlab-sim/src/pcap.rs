//! Packet captures of switch ports and hosts' NICs (`ecnlab run --pcap PORT`): every packet
//! a port sends, at the simulated time its transmission starts, as a nanosecond-resolution
//! pcap frame.
//!
//! Read first: the pcap file format (libpcap's "pcap-savefile", magic `0xa1b23c4d` for
//! nanosecond timestamps, link type 1 = Ethernet), RFC 791 (IPv4 header and its
//! checksum), RFC 3168 §5 (the ECN field: the two low bits of the former TOS byte, DSCP the
//! six high ones), RFC 9293 §3.1 (the TCP header), and the RoCEv2 UDP port 4791.
//!
//! The capture is an observer: [`Capture::record`] reads a packet the port has already
//! dequeued and only appends bytes to its own buffers; nothing it holds is read by the
//! simulation, so a run with captures is bit-identical to one without. Frames carry the
//! headers only (payload omitted: `incl_len` < `orig_len`, as a snaplen does): Ethernet,
//! IPv4 with the packet's DSCP and ECN bits, then TCP (data and ACKs: ports from the
//! connection, sequence and ACK numbers modulo 2^32, SYN/ACK/PSH/ECE/CWR flags: the
//! handshake's SYN and SYN-ACK with the ISN 2^32 - 1 below the data), UDP to port
//! 4791 for DCQCN (data, ACKs, CNPs), or ICMP echo for probes. Hosts are 10.0.x.y and
//! 02:00:00:00:x:y for host index x*256+y. Checksums of TCP/UDP are zero (no payload to
//! sum); the IPv4 header checksum is real.
//!
//! Size: the buffers together stop growing at `limit_bytes`; the ports' captures then end
//! there (`truncated`), which the caller reports.

use crate::packet::{flags, Kind, Packet};
use ecnlab_core::Nanos;

const ETH: usize = 14;
const IP: usize = 20;
const TCP: usize = 20;
const UDP: usize = 8;
const ICMP: usize = 8;
const RECORD_HEADER: usize = 16;
/// TCP port of every receiver (the connection's sender side gets 1024 + flow mod 64000).
pub const SERVER_PORT: u16 = 5001;
/// RoCEv2's UDP destination port.
pub const ROCE_PORT: u16 = 4791;

enum L4 {
    Tcp,
    Udp,
    Icmp,
}

/// One port's capture: a complete pcap file in memory.
#[derive(Debug)]
pub struct PortCapture {
    pub name: String,
    pub bytes: Vec<u8>,
    pub packets: u64,
    pub ce: u64,
}

/// The captures of one run, indexed by link.
#[derive(Debug)]
pub struct Capture {
    ports: Vec<Option<PortCapture>>,
    limit_bytes: u64,
    total_bytes: u64,
    udp: bool,
    pub truncated: bool,
}

fn file_header() -> Vec<u8> {
    let mut h = Vec::with_capacity(24);
    h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond timestamps
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&4u16.to_le_bytes());
    h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    h.extend_from_slice(&65535u32.to_le_bytes()); // snaplen
    h.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    h
}

/// RFC 791 header checksum: one's complement of the one's-complement sum of 16-bit words.
fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut s: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

impl Capture {
    /// Capture the links `ports` (index, name); `udp`: the transport is DCQCN (RoCEv2).
    pub fn new(n_links: usize, ports: &[(usize, String)], limit_bytes: u64, udp: bool) -> Capture {
        let mut v: Vec<Option<PortCapture>> = (0..n_links).map(|_| None).collect();
        let mut total = 0;
        for (li, name) in ports {
            let bytes = file_header();
            total += bytes.len() as u64;
            v[*li] = Some(PortCapture { name: name.clone(), bytes, packets: 0, ce: 0 });
        }
        Capture { ports: v, limit_bytes, total_bytes: total, udp, truncated: false }
    }

    /// Append the frame of `pkt`, sent by link `li` at `at`.
    #[inline]
    pub fn record(&mut self, li: usize, at: Nanos, pkt: &Packet) {
        let Some(Some(pc)) = self.ports.get_mut(li) else { return };
        let (l4, l4_len, proto) = match (pkt.kind, self.udp) {
            (Kind::Ping | Kind::Pong, _) => (L4::Icmp, ICMP, 1),
            (_, true) | (Kind::Cnp, _) => (L4::Udp, UDP, 17),
            _ => (L4::Tcp, TCP, 6),
        };
        let incl = ETH + IP + l4_len;
        // Once a frame does not fit, none after it is kept, however small: the files hold
        // the run's beginning, not a beginning with a ping from much later.
        if self.truncated || self.total_bytes + (RECORD_HEADER + incl) as u64 > self.limit_bytes {
            self.truncated = true;
            return;
        }
        self.total_bytes += (RECORD_HEADER + incl) as u64;
        pc.packets += 1;
        pc.ce += (pkt.ecn as u8 == 3) as u64;
        let b = &mut pc.bytes;
        let orig = ETH + (pkt.size as usize).max(IP + l4_len);
        b.extend_from_slice(&((at / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((at % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(incl as u32).to_le_bytes());
        b.extend_from_slice(&(orig as u32).to_le_bytes());
        // Ethernet: destination, source, IPv4.
        for h in [pkt.dst, pkt.src] {
            b.extend_from_slice(&[0x02, 0, 0, 0, (h >> 8) as u8, h as u8]);
        }
        b.extend_from_slice(&0x0800u16.to_be_bytes());
        // IPv4.
        let mut ip = [0u8; IP];
        ip[0] = 0x45;
        ip[1] = (pkt.dscp << 2) | (pkt.ecn as u8 & 3);
        ip[2..4].copy_from_slice(&((orig - ETH).min(65535) as u16).to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&[10, 0, (pkt.src >> 8) as u8, pkt.src as u8]);
        ip[16..20].copy_from_slice(&[10, 0, (pkt.dst >> 8) as u8, pkt.dst as u8]);
        let c = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        b.extend_from_slice(&ip);
        let client = 1024 + (pkt.flow % 64000) as u16;
        // Data goes client -> server; ACKs (and CNPs) come back.
        let (sport, dport) = if pkt.kind == Kind::Data { (client, SERVER_PORT) } else { (SERVER_PORT, client) };
        match l4 {
            L4::Icmp => {
                b.push(if pkt.kind == Kind::Ping { 8 } else { 0 });
                b.extend_from_slice(&[0, 0, 0]); // code, checksum
                b.extend_from_slice(&(pkt.flow as u16).to_be_bytes());
                b.extend_from_slice(&(pkt.seq as u16).to_be_bytes());
            }
            L4::Udp => {
                b.extend_from_slice(&sport.to_be_bytes());
                b.extend_from_slice(&ROCE_PORT.to_be_bytes());
                b.extend_from_slice(&(((pkt.size as usize).max(IP + UDP) - IP).min(65535) as u16).to_be_bytes());
                b.extend_from_slice(&[0, 0]);
            }
            L4::Tcp => {
                let (mut seq, ack) = if pkt.kind == Kind::Data { (pkt.seq as u32, 0u32) } else { (0, pkt.seq as u32) };
                let mut f: u8 = 0x10; // ACK: every segment of an established connection
                if pkt.has(flags::SYN) {
                    // The handshake: data numbering starts at the ISN + 1, so the ISN is
                    // 2^32 - 1 on both sides; the SYN alone carries no ACK.
                    seq = u32::MAX;
                    f = if pkt.kind == Kind::Data { 0x02 } else { 0x12 };
                }
                if pkt.has(flags::PSH) {
                    f |= 0x08;
                }
                if pkt.has(flags::ECE) {
                    f |= 0x40;
                }
                if pkt.has(flags::CWR) {
                    f |= 0x80;
                }
                b.extend_from_slice(&sport.to_be_bytes());
                b.extend_from_slice(&dport.to_be_bytes());
                b.extend_from_slice(&seq.to_be_bytes());
                b.extend_from_slice(&ack.to_be_bytes());
                b.extend_from_slice(&[0x50, f]);
                b.extend_from_slice(&65535u16.to_be_bytes());
                b.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent
            }
        }
    }

    /// The captures, in link order.
    pub fn into_ports(self) -> Vec<PortCapture> {
        self.ports.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;

    #[test]
    fn frame_carries_dscp_ecn_ports_and_numbers() {
        let mut c = Capture::new(2, &[(1, "s0->h0".into())], 1 << 20, false);
        let p = Packet {
            flow: 3,
            src: 2,
            dst: 0,
            seq: (1u64 << 32) + 1460,
            payload: 1460,
            size: 1500,
            kind: Kind::Data,
            ecn: Ecn::Ce,
            dscp: 5,
            ..Default::default()
        };
        c.record(0, 10, &p); // link 0 is not captured
        c.record(1, 1_500_000_123, &p);
        let pc = c.into_ports().pop().unwrap();
        assert_eq!((pc.packets, pc.ce), (1, 1));
        let r = &pc.bytes[24..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 500_000_123);
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 54);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 1514);
        let ip = &r[16 + 14..16 + 34];
        assert_eq!(ip[1], (5 << 2) | 3);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1500);
        assert_eq!(ipv4_checksum(ip), 0, "a header with its checksum sums to zero");
        let tcp = &r[16 + 34..];
        assert_eq!(u16::from_be_bytes([tcp[0], tcp[1]]), 1024 + 3);
        assert_eq!(u16::from_be_bytes([tcp[2], tcp[3]]), SERVER_PORT);
        assert_eq!(u32::from_be_bytes(tcp[4..8].try_into().unwrap()), 1460, "sequence numbers modulo 2^32");
    }

    /// The handshake's frames: a SYN (flags 0x02, ISN 2^32 - 1, no ACK) and a SYN-ACK (0x12,
    /// acknowledging the ISN + 1, the data's first byte 0).
    #[test]
    fn syn_and_synack_frames_carry_their_flags() {
        let mut c = Capture::new(1, &[(0, "p".into())], 1 << 20, false);
        let syn =
            Packet { flow: 1, src: 0, dst: 1, size: 40, kind: Kind::Data, flags: flags::SYN, ..Default::default() };
        let synack =
            Packet { flow: 1, src: 1, dst: 0, size: 40, kind: Kind::Ack, flags: flags::SYN, ..Default::default() };
        c.record(0, 0, &syn);
        c.record(0, 1, &synack);
        let b = c.into_ports().pop().unwrap().bytes;
        let frame = |k: usize| &b[24 + k * (16 + 54) + 16..24 + (k + 1) * (16 + 54)];
        let tcp = |k: usize| &frame(k)[34..];
        assert_eq!((tcp(0)[13], u32::from_be_bytes(tcp(0)[4..8].try_into().unwrap())), (0x02, u32::MAX));
        assert_eq!(u32::from_be_bytes(tcp(0)[8..12].try_into().unwrap()), 0);
        assert_eq!((tcp(1)[13], u32::from_be_bytes(tcp(1)[4..8].try_into().unwrap())), (0x12, u32::MAX));
        assert_eq!(u32::from_be_bytes(tcp(1)[8..12].try_into().unwrap()), 0, "acknowledges ISN + 1");
    }

    #[test]
    fn capture_stops_at_its_limit() {
        let mut c = Capture::new(1, &[(0, "p".into())], 24 + 3 * 70 + 60, false);
        let p = Packet { size: 1500, ..Default::default() };
        for t in 0..10 {
            c.record(0, t, &p);
        }
        assert!(c.truncated);
        // A ping's frame (58 B) would still fit in the 60 B left after the third: not kept.
        let ping = Packet { size: 64, kind: Kind::Ping, ..Default::default() };
        c.record(0, 11, &ping);
        assert_eq!(c.into_ports()[0].packets, 3);
    }
}
