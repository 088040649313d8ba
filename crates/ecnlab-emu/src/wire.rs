//! Just enough Ethernet and IPv4 to classify a frame and mark it.
//!
//! The switch forwards at layer 2 and never rewrites anything but the ECN field of the
//! IPv4 header (RFC 3168 §5) and, with it, the header checksum. Parsing is defensive: a
//! frame shorter than an Ethernet header is a runt (dropped and counted); anything that is
//! not a complete, well-formed IPv4 header is forwarded as "not IP", and so is never marked.

/// A MAC address.
pub type Mac = [u8; 6];

pub const ETH_HDR: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IEEE 802.1Q and 802.1ad tags: skipped to find the inner EtherType.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_QINQ: u16 = 0x88a8;
pub const IPPROTO_TCP: u8 = 6;
pub const IPPROTO_UDP: u8 = 17;

/// ECN codepoints (RFC 3168 §5).
pub const ECN_NOT_ECT: u8 = 0b00;
pub const ECN_ECT1: u8 = 0b01;
pub const ECN_ECT0: u8 = 0b10;
pub const ECN_CE: u8 = 0b11;

/// What the switch needs of an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Offset of the IPv4 header in the frame.
    pub offset: u16,
    pub dscp: u8,
    pub ecn: u8,
    pub proto: u8,
    /// TCP or UDP payload bytes (0 for other protocols, fragments after the first, or when
    /// the transport header is cut off): what "goodput" counts at the switch.
    pub payload: u16,
}

/// A parsed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub dst: Mac,
    pub src: Mac,
    /// `None` for ARP, IPv6 and anything that is not a complete IPv4 header.
    pub ipv4: Option<Ipv4Info>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Shorter than an Ethernet header.
    Runt,
}

#[inline]
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Parse an Ethernet frame (without FCS, as AF_PACKET delivers it).
pub fn parse(frame: &[u8]) -> Result<Parsed, ParseError> {
    if frame.len() < ETH_HDR {
        return Err(ParseError::Runt);
    }
    let mut dst = [0u8; 6];
    let mut src = [0u8; 6];
    dst.copy_from_slice(&frame[0..6]);
    src.copy_from_slice(&frame[6..12]);
    let mut off = 12;
    let mut ethertype = be16(frame, off);
    // At most two VLAN tags (QinQ); a frame cut inside a tag is simply "not IP".
    for _ in 0..2 {
        if ethertype != ETHERTYPE_VLAN && ethertype != ETHERTYPE_QINQ {
            break;
        }
        if frame.len() < off + 6 {
            return Ok(Parsed { dst, src, ipv4: None });
        }
        off += 4;
        ethertype = be16(frame, off);
    }
    let ip = off + 2;
    let ipv4 = if ethertype == ETHERTYPE_IPV4 { parse_ipv4(frame, ip) } else { None };
    Ok(Parsed { dst, src, ipv4 })
}

fn parse_ipv4(frame: &[u8], ip: usize) -> Option<Ipv4Info> {
    let h = frame.get(ip..)?;
    if h.len() < 20 || h[0] >> 4 != 4 {
        return None;
    }
    let ihl = ((h[0] & 0x0f) as usize) * 4;
    if ihl < 20 || h.len() < ihl {
        return None;
    }
    let total = be16(h, 2) as usize;
    let tos = h[1];
    let proto = h[9];
    // Payload of the first fragment's TCP/UDP segment, bounded by what was captured.
    let frag_off = be16(h, 6) & 0x1fff;
    let l4_len = total.min(h.len()).saturating_sub(ihl);
    let payload = if frag_off != 0 {
        0
    } else {
        match proto {
            IPPROTO_TCP if l4_len >= 20 => {
                let doff = ((h[ihl + 12] >> 4) as usize) * 4;
                l4_len.saturating_sub(doff.max(20))
            }
            IPPROTO_UDP if l4_len >= 8 => l4_len - 8,
            _ => 0,
        }
    };
    Some(Ipv4Info { offset: ip as u16, dscp: tos >> 2, ecn: tos & 0b11, proto, payload: payload as u16 })
}

/// One's-complement sum of 16-bit big-endian words (RFC 1071), folded to 16 bits.
fn ones_sum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u32) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The IPv4 header checksum computed from scratch (RFC 791), ignoring the stored one.
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let ihl = ((hdr[0] & 0x0f) as usize) * 4;
    let mut sum = ones_sum(&hdr[..10]) as u32 + ones_sum(&hdr[12..ihl]) as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether the header's stored checksum is right (the sum over the header is 0xffff).
pub fn ipv4_checksum_ok(hdr: &[u8]) -> bool {
    let ihl = ((hdr[0] & 0x0f) as usize) * 4;
    ones_sum(&hdr[..ihl]) == 0xffff
}

/// Set CE in the IPv4 header at the start of `hdr` and update its checksum incrementally.
/// Returns false (and changes nothing) if the packet is not ECT: a switch must never turn a
/// not-ECT packet into CE (RFC 3168 §5).
///
/// The checksum update is RFC 1624 §3, Eqn. 3: HC' = ~(~HC + ~m + m'), with m the 16-bit
/// word holding version/IHL and TOS before the change and m' after, in one's-complement
/// arithmetic. Eqn. 3 (not RFC 1141's Eqn. 2) is the form that never yields the -0 that a
/// recomputation would not produce.
#[inline]
pub fn set_ce(hdr: &mut [u8]) -> bool {
    let ecn = hdr[1] & 0b11;
    if ecn == ECN_NOT_ECT {
        return false;
    }
    if ecn == ECN_CE {
        return true;
    }
    let m = be16(hdr, 0) as u32;
    hdr[1] |= ECN_CE;
    let m_new = be16(hdr, 0) as u32;
    let hc = be16(hdr, 10) as u32;
    let mut sum = (!hc & 0xffff) + (!m & 0xffff) + m_new;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let hc_new = !(sum as u16);
    hdr[10..12].copy_from_slice(&hc_new.to_be_bytes());
    true
}

/// Format a MAC address as `aa:bb:cc:dd:ee:ff`.
pub fn mac_to_string(m: &Mac) -> String {
    format!("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
}

/// Parse `aa:bb:cc:dd:ee:ff` (or with `-`).
pub fn parse_mac(s: &str) -> Result<Mac, String> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(format!("`{s}` is not a MAC address (six hex bytes)"));
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        m[i] = u8::from_str_radix(p, 16).map_err(|_| format!("`{s}` is not a MAC address"))?;
    }
    Ok(m)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ecnlab_core::rng::Rng;

    /// An Ethernet + IPv4 + TCP frame with `payload` bytes, a valid IP checksum.
    pub fn tcp_frame(dst: Mac, src: Mac, tos: u8, payload: usize) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(&dst);
        f.extend_from_slice(&src);
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let total = (20 + 32 + payload) as u16;
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = tos;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = IPPROTO_TCP;
        ip[12..16].copy_from_slice(&[10, 0, 0, 2]);
        ip[16..20].copy_from_slice(&[10, 0, 0, 1]);
        let c = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        let mut tcp = [0u8; 32];
        tcp[12] = 8 << 4; // data offset 32 bytes (timestamps option)
        f.extend_from_slice(&tcp);
        f.resize(f.len() + payload, 0xab);
        f
    }

    const A: Mac = [2, 0, 0, 0, 0, 1];
    const B: Mac = [2, 0, 0, 0, 0, 2];

    #[test]
    fn parses_ipv4_tcp() {
        let f = tcp_frame(B, A, (5 << 2) | ECN_ECT0, 1448);
        let p = parse(&f).unwrap();
        assert_eq!(p.dst, B);
        assert_eq!(p.src, A);
        let ip = p.ipv4.unwrap();
        assert_eq!(ip.offset, 14);
        assert_eq!(ip.dscp, 5);
        assert_eq!(ip.ecn, ECN_ECT0);
        assert_eq!(ip.proto, IPPROTO_TCP);
        assert_eq!(ip.payload, 1448);
        assert!(ipv4_checksum_ok(&f[14..34]));
    }

    #[test]
    fn parses_vlan_tagged_ipv4() {
        let mut f = tcp_frame(B, A, 3 << 2, 100);
        let tag = [0x81, 0x00, 0x00, 0x05];
        f.splice(12..12, tag);
        let ip = parse(&f).unwrap().ipv4.unwrap();
        assert_eq!(ip.offset, 18);
        assert_eq!(ip.dscp, 3);
        assert_eq!(ip.payload, 100);
    }

    #[test]
    fn non_ipv4_frames_are_not_ip() {
        // ARP request (broadcast).
        let mut arp = vec![0xff; 6];
        arp.extend_from_slice(&A);
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.resize(42, 0);
        let p = parse(&arp).unwrap();
        assert_eq!(p.ipv4, None);
        assert_eq!(p.dst, [0xff; 6]);
        // IPv6 with traffic class bits that would look like ECT if misread.
        let mut v6 = tcp_frame(B, A, 0, 10);
        v6[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
        v6[14] = 0x60;
        assert_eq!(parse(&v6).unwrap().ipv4, None);
        // EtherType IPv4 but version 6 in the header.
        let mut bad = tcp_frame(B, A, ECN_ECT0, 10);
        bad[14] = 0x65;
        assert_eq!(parse(&bad).unwrap().ipv4, None);
        // IHL below 5.
        let mut bad = tcp_frame(B, A, ECN_ECT0, 10);
        bad[14] = 0x44;
        assert_eq!(parse(&bad).unwrap().ipv4, None);
    }

    #[test]
    fn truncated_frames() {
        let f = tcp_frame(B, A, ECN_ECT0, 1000);
        assert_eq!(parse(&f[..13]), Err(ParseError::Runt));
        assert_eq!(parse(&[]), Err(ParseError::Runt));
        // Ethernet header only, or an IPv4 header cut short: forwarded as not-IP.
        assert_eq!(parse(&f[..14]).unwrap().ipv4, None);
        assert_eq!(parse(&f[..14 + 19]).unwrap().ipv4, None);
        // Complete IP header, TCP header cut: IP (markable), payload unknown = 0.
        let ip = parse(&f[..14 + 20 + 10]).unwrap().ipv4.unwrap();
        assert_eq!(ip.payload, 0);
        // Payload bounded by what was captured.
        assert_eq!(parse(&f[..14 + 20 + 32 + 7]).unwrap().ipv4.unwrap().payload, 7);
        // IHL claiming options beyond the frame.
        let mut opt = f.clone();
        opt[14] = 0x4f;
        assert_eq!(parse(&opt[..14 + 40]).unwrap().ipv4, None);
        // VLAN tag cut in the middle.
        let mut v = f.clone();
        v.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        assert_eq!(parse(&v[..15]).unwrap().ipv4, None);
    }

    #[test]
    fn ce_only_on_ect_and_checksum_stays_valid() {
        for ecn in [ECN_ECT0, ECN_ECT1] {
            let mut f = tcp_frame(B, A, (10 << 2) | ecn, 0);
            assert!(set_ce(&mut f[14..]));
            assert_eq!(f[15], (10 << 2) | ECN_CE);
            assert!(ipv4_checksum_ok(&f[14..34]));
        }
        let mut f = tcp_frame(B, A, 10 << 2, 0);
        let before = f.clone();
        assert!(!set_ce(&mut f[14..]));
        assert_eq!(f, before, "a not-ECT packet must not change");
        let mut f = tcp_frame(B, A, ECN_CE, 0);
        let before = f.clone();
        assert!(set_ce(&mut f[14..]));
        assert_eq!(f, before, "already CE: nothing to change");
    }

    /// RFC 1624's incremental update must equal a full recomputation, for random headers
    /// (random options, addresses, TTLs, lengths) and both ECT codepoints.
    #[test]
    fn incremental_checksum_equals_full_recomputation() {
        let mut rng = Rng::new(42);
        for i in 0..200_000u32 {
            let ihl = 5 + (rng.next_u64() % 11) as usize;
            let mut h = vec![0u8; ihl * 4];
            for b in h.iter_mut() {
                *b = rng.next_u64() as u8;
            }
            h[0] = 0x40 | ihl as u8;
            let ect = if i % 2 == 0 { ECN_ECT0 } else { ECN_ECT1 };
            h[1] = (h[1] & !0b11) | ect;
            // Force the edge cases where the sum folds to 0xffff or close to it.
            if i % 1000 == 0 {
                let n = h.len();
                h[2..10].fill(0xff);
                h[12..n].fill(0xff);
            }
            let c = ipv4_checksum(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            assert!(ipv4_checksum_ok(&h));
            let mut inc = h.clone();
            assert!(set_ce(&mut inc));
            let mut full = h.clone();
            full[1] |= ECN_CE;
            let c2 = ipv4_checksum(&full);
            full[10..12].copy_from_slice(&c2.to_be_bytes());
            assert_eq!(inc, full, "header {h:02x?}");
            assert!(ipv4_checksum_ok(&inc));
        }
    }

    #[test]
    fn mac_round_trip() {
        let m = parse_mac("02:ec:00:0a:ff:01").unwrap();
        assert_eq!(m, [2, 0xec, 0, 0x0a, 0xff, 1]);
        assert_eq!(mac_to_string(&m), "02:ec:00:0a:ff:01");
        assert!(parse_mac("02:ec:00").is_err());
        assert!(parse_mac("zz:ec:00:0a:ff:01").is_err());
    }
}
