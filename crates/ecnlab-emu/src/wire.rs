//! Just enough Ethernet and IPv4 to classify a frame and mark it.
//!
//! The switch forwards at layer 2 and never rewrites anything but the ECN field of the
//! IPv4 header (RFC 3168 §5) and, with it, the header checksum. Parsing is defensive and
//! total: every byte sequence, down to an empty one, yields a [`Parsed`] or a
//! [`ParseError`], and the switch counts each outcome under its own name.
//!
//! What a frame becomes, as a switch that marks IPv4 (a layer-3 device, RFC 1812) would do:
//!
//! | frame | outcome |
//! |---|---|
//! | shorter than an Ethernet header (0..13 bytes) | dropped: `runt` |
//! | destination 01:80:c2:00:00:0x (STP, pause, LACP, LLDP...) | dropped: `link_local` (IEEE 802.1D §7.12.6: a bridge never forwards these) |
//! | ARP, IPv6, any other EtherType, a cut VLAN tag | forwarded, never marked: `arp`, `ipv6`, `other` |
//! | EtherType IPv4, but fewer than 20 bytes, version not 4, IHL < 5, options beyond the frame, total length < IHL or beyond the frame | dropped: `ipv4_malformed` (RFC 1812 §5.2.2; Linux `ip_rcv_core` counts these as header errors or truncated packets) |
//! | IPv4 with a wrong header checksum | dropped: `ipv4_bad_checksum` (RFC 1812 §5.2.2) |
//! | IPv4 with options (IHL > 5) | forwarded, markable (the checksum update covers the whole header): `ipv4_options` |
//! | IPv4, not-ECT | forwarded, never marked (the marking scheme's decision goes to `unmarkable`, or to a drop under `non_ect = "drop"`) |
//!
//! Ethernet padding (an IPv4 total length below the frame's length) is normal and allowed.

/// A MAC address.
pub type Mac = [u8; 6];

pub const ETH_HDR: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
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
    /// The header carries options (IHL > 5).
    pub options: bool,
    /// TCP or UDP payload bytes (0 for other protocols, fragments after the first, or when
    /// the transport header is cut off): what "goodput" counts at the switch.
    pub payload: u16,
}

/// The layer-3 content of a frame the switch forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L3 {
    /// A complete, well-formed IPv4 header with a valid checksum.
    Ipv4(Ipv4Info),
    Arp,
    Ipv6,
    /// Any other EtherType, or a VLAN tag cut short.
    Other,
}

/// A parsed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub dst: Mac,
    pub src: Mac,
    pub l3: L3,
}

impl Parsed {
    /// The IPv4 header, if the frame carries a well-formed one.
    pub fn ipv4(&self) -> Option<Ipv4Info> {
        match self.l3 {
            L3::Ipv4(ip) => Some(ip),
            _ => None,
        }
    }
}

/// Why a frame is dropped at ingress (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Shorter than an Ethernet header.
    Runt,
    /// Destination in 01:80:c2:00:00:00..0f, which bridges never forward.
    LinkLocal,
    /// EtherType IPv4 but not a valid IPv4 header (cut, bad version, IHL or lengths).
    Ipv4Malformed,
    /// IPv4 header checksum wrong.
    Ipv4BadChecksum,
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
    if dst[..5] == [0x01, 0x80, 0xc2, 0x00, 0x00] && dst[5] <= 0x0f {
        return Err(ParseError::LinkLocal);
    }
    let mut off = 12;
    let mut ethertype = be16(frame, off);
    // At most two VLAN tags (QinQ); a frame cut inside a tag is "other".
    for _ in 0..2 {
        if ethertype != ETHERTYPE_VLAN && ethertype != ETHERTYPE_QINQ {
            break;
        }
        if frame.len() < off + 6 {
            return Ok(Parsed { dst, src, l3: L3::Other });
        }
        off += 4;
        ethertype = be16(frame, off);
    }
    let ip = off + 2;
    let l3 = match ethertype {
        ETHERTYPE_IPV4 => L3::Ipv4(parse_ipv4(frame, ip)?),
        ETHERTYPE_ARP => L3::Arp,
        ETHERTYPE_IPV6 => L3::Ipv6,
        _ => L3::Other,
    };
    Ok(Parsed { dst, src, l3 })
}

/// The checks of RFC 1812 §5.2.2 (and Linux `ip_rcv_core`), in that order.
fn parse_ipv4(frame: &[u8], ip: usize) -> Result<Ipv4Info, ParseError> {
    let h = frame.get(ip..).unwrap_or(&[]);
    if h.len() < 20 || h[0] >> 4 != 4 {
        return Err(ParseError::Ipv4Malformed);
    }
    let ihl = ((h[0] & 0x0f) as usize) * 4;
    if ihl < 20 || h.len() < ihl {
        return Err(ParseError::Ipv4Malformed);
    }
    if !ipv4_checksum_ok(&h[..ihl]) {
        return Err(ParseError::Ipv4BadChecksum);
    }
    let total = be16(h, 2) as usize;
    if total < ihl || total > h.len() {
        return Err(ParseError::Ipv4Malformed);
    }
    let tos = h[1];
    let proto = h[9];
    // Payload of the first fragment's TCP/UDP segment (within the total length: what
    // follows it is Ethernet padding).
    let frag_off = be16(h, 6) & 0x1fff;
    let l4_len = total - ihl;
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
    Ok(Ipv4Info {
        offset: ip as u16,
        dscp: tos >> 2,
        ecn: tos & 0b11,
        proto,
        options: ihl > 20,
        payload: payload.min(u16::MAX as usize) as u16,
    })
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
    if hdr.len() < 20 {
        return 0;
    }
    let ihl = (((hdr[0] & 0x0f) as usize) * 4).clamp(20, hdr.len());
    let mut sum = ones_sum(&hdr[..10]) as u32 + ones_sum(&hdr[12..ihl]) as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether the header's stored checksum is right (the sum over the header is 0xffff).
pub fn ipv4_checksum_ok(hdr: &[u8]) -> bool {
    let ihl = ((hdr.first().copied().unwrap_or(0) & 0x0f) as usize) * 4;
    ihl >= 20 && hdr.len() >= ihl && ones_sum(&hdr[..ihl]) == 0xffff
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
    if hdr.len() < 20 {
        return false; // not an IPv4 header: nothing to mark (the parser never lets one through)
    }
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
    use proptest::prelude::*;

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

    /// The same frame with `words` 32-bit words of IPv4 options (NOPs, then EOL), valid
    /// checksum.
    pub fn tcp_frame_with_options(dst: Mac, src: Mac, tos: u8, payload: usize, words: usize) -> Vec<u8> {
        let mut f = tcp_frame(dst, src, tos, payload);
        let mut opts = vec![1u8; words * 4]; // NOP
        *opts.last_mut().unwrap() = 0; // EOL
        f.splice(34..34, opts);
        f[14] = 0x40 | (5 + words) as u8;
        let total = (20 + words * 4 + 32 + payload) as u16;
        f[16..18].copy_from_slice(&total.to_be_bytes());
        refresh_checksum(&mut f);
        f
    }

    /// Recompute the IPv4 header checksum of an untagged frame after editing its header.
    pub fn refresh_checksum(f: &mut [u8]) {
        let ihl = ((f[14] & 0x0f) as usize * 4).max(20);
        f[24..26].fill(0);
        let c = ipv4_checksum(&f[14..14 + ihl]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
    }

    /// A frame of EtherType `et` with `len` bytes in all.
    pub fn ether_frame(dst: Mac, src: Mac, et: u16, len: usize) -> Vec<u8> {
        let mut f = dst.to_vec();
        f.extend_from_slice(&src);
        f.extend_from_slice(&et.to_be_bytes());
        f.resize(len.max(14), 0x5a);
        f
    }

    const A: Mac = [2, 0, 0, 0, 0, 1];
    const B: Mac = [2, 0, 0, 0, 0, 2];
    const BCAST: Mac = [0xff; 6];
    const LLDP: Mac = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];
    const PAUSE: Mac = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];

    #[test]
    fn parses_ipv4_tcp() {
        let f = tcp_frame(B, A, (5 << 2) | ECN_ECT0, 1448);
        let p = parse(&f).unwrap();
        assert_eq!(p.dst, B);
        assert_eq!(p.src, A);
        let ip = p.ipv4().unwrap();
        assert_eq!(ip.offset, 14);
        assert_eq!(ip.dscp, 5);
        assert_eq!(ip.ecn, ECN_ECT0);
        assert_eq!(ip.proto, IPPROTO_TCP);
        assert_eq!(ip.payload, 1448);
        assert!(!ip.options);
        assert!(ipv4_checksum_ok(&f[14..34]));
    }

    #[test]
    fn parses_vlan_tagged_ipv4() {
        let mut f = tcp_frame(B, A, 3 << 2, 100);
        f.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        let ip = parse(&f).unwrap().ipv4().unwrap();
        assert_eq!(ip.offset, 18);
        assert_eq!(ip.dscp, 3);
        assert_eq!(ip.payload, 100);
        // QinQ: two tags.
        f.splice(12..12, [0x88, 0xa8, 0x00, 0x07]);
        assert_eq!(parse(&f).unwrap().ipv4().unwrap().offset, 22);
    }

    #[test]
    fn non_ipv4_frames_are_forwarded_as_their_kind() {
        let arp = ether_frame(BCAST, A, ETHERTYPE_ARP, 42);
        let p = parse(&arp).unwrap();
        assert_eq!(p.l3, L3::Arp);
        assert_eq!(p.dst, BCAST);
        // IPv6 with traffic-class bits that would look like ECT if misread as IPv4.
        let mut v6 = tcp_frame(B, A, ECN_ECT0, 10);
        v6[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        v6[14] = 0x60;
        assert_eq!(parse(&v6).unwrap().l3, L3::Ipv6);
        // Unknown EtherTypes, and a length field (802.3 frame) instead of an EtherType.
        assert_eq!(parse(&ether_frame(B, A, 0x1234, 60)).unwrap().l3, L3::Other);
        assert_eq!(parse(&ether_frame(B, A, 0x0040, 60)).unwrap().l3, L3::Other);
        // Ethernet header only, with any EtherType but IPv4.
        assert_eq!(parse(&ether_frame(B, A, ETHERTYPE_ARP, 14)).unwrap().l3, L3::Arp);
        // VLAN tag cut in the middle.
        let mut v = tcp_frame(B, A, 0, 10);
        v.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        assert_eq!(parse(&v[..15]).unwrap().l3, L3::Other);
        assert_eq!(parse(&v[..17]).unwrap().l3, L3::Other);
    }

    #[test]
    fn bridge_local_destinations_are_never_forwarded() {
        assert_eq!(parse(&ether_frame(LLDP, A, 0x88cc, 60)), Err(ParseError::LinkLocal));
        assert_eq!(parse(&ether_frame(PAUSE, A, 0x8808, 60)), Err(ParseError::LinkLocal));
        // Just outside the reserved block: an ordinary multicast, forwarded.
        let mut d = LLDP;
        d[5] = 0x10;
        assert_eq!(parse(&ether_frame(d, A, 0x88cc, 60)).unwrap().l3, L3::Other);
    }

    /// Every prefix of a valid frame, from 0 bytes up: runts below 14 bytes, malformed
    /// IPv4 while the header or the total length is cut, the whole frame parses.
    #[test]
    fn every_truncation_of_an_ipv4_frame() {
        let f = tcp_frame(B, A, ECN_ECT0, 100);
        for n in 0..=f.len() {
            let r = parse(&f[..n]);
            match n {
                0..=13 => assert_eq!(r, Err(ParseError::Runt), "{n} bytes"),
                _ if n < f.len() => assert_eq!(r, Err(ParseError::Ipv4Malformed), "{n} bytes"),
                _ => assert_eq!(r.unwrap().ipv4().unwrap().payload, 100),
            }
        }
        assert_eq!(parse(&[]), Err(ParseError::Runt));
        assert_eq!(parse(&[0x45]), Err(ParseError::Runt));
    }

    #[test]
    fn malformed_ipv4_headers_are_dropped() {
        let good = tcp_frame(B, A, ECN_ECT0, 10);
        let edit = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut x = good.clone();
            f(&mut x);
            refresh_checksum(&mut x);
            parse(&x)
        };
        // Version 6 in an IPv4 EtherType; IHL 0..4; IHL 15 (40 bytes of options) beyond a
        // 54-byte frame; total length below the header, or beyond the frame.
        assert_eq!(edit(&|x| x[14] = 0x65), Err(ParseError::Ipv4Malformed));
        for ihl in 0..5u8 {
            assert_eq!(edit(&|x| x[14] = 0x40 | ihl), Err(ParseError::Ipv4Malformed), "IHL {ihl}");
        }
        let mut cut = good.clone();
        cut[14] = 0x4f;
        assert_eq!(parse(&cut[..14 + 40]), Err(ParseError::Ipv4Malformed));
        assert_eq!(edit(&|x| x[16..18].copy_from_slice(&19u16.to_be_bytes())), Err(ParseError::Ipv4Malformed));
        let too_long = (good.len() - 14 + 1) as u16;
        assert_eq!(edit(&|x| x[16..18].copy_from_slice(&too_long.to_be_bytes())), Err(ParseError::Ipv4Malformed));
        // A header that is only a header: total length 20, no transport.
        let hdr_only = edit(&|x| {
            x.truncate(34);
            x[16..18].copy_from_slice(&20u16.to_be_bytes())
        });
        assert_eq!(hdr_only.unwrap().ipv4().unwrap().payload, 0);
    }

    #[test]
    fn bad_checksums_are_dropped_whatever_the_flipped_bit() {
        let good = tcp_frame(B, A, ECN_ECT0, 10);
        for byte in 14..34 {
            for bit in 0..8 {
                let mut x = good.clone();
                x[byte] ^= 1 << bit;
                let r = parse(&x);
                // A flip in version/IHL or total length may be caught as malformed first;
                // any other flip is a checksum error. Never accepted.
                assert!(
                    matches!(r, Err(ParseError::Ipv4BadChecksum) | Err(ParseError::Ipv4Malformed)),
                    "byte {byte} bit {bit}: {r:?}"
                );
                if !(14..=17).contains(&byte) {
                    assert_eq!(r, Err(ParseError::Ipv4BadChecksum), "byte {byte} bit {bit}");
                }
            }
        }
    }

    #[test]
    fn options_are_forwarded_and_markable() {
        for words in 1..=10 {
            let mut f = tcp_frame_with_options(B, A, (7 << 2) | ECN_ECT1, 200, words);
            let ip = parse(&f).unwrap().ipv4().unwrap();
            assert!(ip.options);
            assert_eq!(ip.payload, 200, "{words} option words");
            assert_eq!(ip.dscp, 7);
            assert!(set_ce(&mut f[14..]));
            assert_eq!(f[15] & 3, ECN_CE);
            let ihl = 20 + 4 * words;
            assert!(ipv4_checksum_ok(&f[14..14 + ihl]), "{words} option words");
            assert!(parse(&f).is_ok(), "still well-formed after marking");
        }
    }

    #[test]
    fn ethernet_padding_is_not_payload() {
        // A 60-byte minimum frame carrying a bare 40-byte IPv4+TCP ACK: 6 bytes of padding.
        let mut f = tcp_frame(B, A, ECN_ECT0, 0);
        f[14 + 32] = 5 << 4; // TCP header without options
        f.truncate(14 + 20 + 20);
        f[16..18].copy_from_slice(&40u16.to_be_bytes());
        refresh_checksum(&mut f);
        f.resize(60, 0);
        let ip = parse(&f).unwrap().ipv4().unwrap();
        assert_eq!(ip.payload, 0);
    }

    #[test]
    fn fragments_carry_no_counted_payload() {
        let mut f = tcp_frame(B, A, ECN_ECT0, 100);
        f[20..22].copy_from_slice(&0x0010u16.to_be_bytes()); // offset 16 x 8 bytes
        refresh_checksum(&mut f);
        assert_eq!(parse(&f).unwrap().ipv4().unwrap().payload, 0);
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
        // Too short to be a header: untouched, never a panic.
        for n in 0..20 {
            let mut h = vec![0x46u8; n];
            assert!(!set_ce(&mut h));
            assert!(h.iter().all(|&b| b == 0x46));
        }
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

    /// What the switch relies on for any accepted IPv4 frame: the header lies inside the
    /// frame, its checksum is valid, marking keeps it valid and well-formed, and the
    /// payload fits in the frame.
    fn accepted_frame_invariants(f: &[u8]) {
        if let Ok(Parsed { l3: L3::Ipv4(ip), .. }) = parse(f) {
            let off = ip.offset as usize;
            let ihl = (f[off] & 0x0f) as usize * 4;
            assert!(off + ihl <= f.len());
            assert!(ipv4_checksum_ok(&f[off..off + ihl]));
            assert!((ip.payload as usize) < f.len());
            let mut g = f.to_vec();
            let marked = set_ce(&mut g[off..]);
            assert_eq!(marked, ip.ecn != ECN_NOT_ECT);
            assert!(ipv4_checksum_ok(&g[off..off + ihl]));
            assert!(parse(&g).is_ok());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// Any bytes at all: parse and mark never panic.
        #[test]
        fn arbitrary_bytes_never_panic(f in proptest::collection::vec(any::<u8>(), 0..120)) {
            accepted_frame_invariants(&f);
        }

        /// Any bytes behind an IPv4 EtherType (the interesting space), with or without a
        /// VLAN tag.
        #[test]
        fn arbitrary_ipv4_headers_never_panic(
            body in proptest::collection::vec(any::<u8>(), 0..90),
            vlan in any::<bool>(),
            fix_checksum in any::<bool>(),
        ) {
            let mut f = ether_frame(B, A, if vlan { ETHERTYPE_VLAN } else { ETHERTYPE_IPV4 }, 14);
            if vlan {
                f.extend_from_slice(&[0x00, 0x05, 0x08, 0x00]);
            }
            let off = f.len();
            f.extend_from_slice(&body);
            if fix_checksum && body.len() >= 20 {
                let ihl = ((body[0] & 0x0f) as usize * 4).clamp(20, body.len());
                f[off + 10..off + 12].fill(0);
                let c = ipv4_checksum(&f[off..off + ihl]);
                f[off + 10..off + 12].copy_from_slice(&c.to_be_bytes());
            }
            accepted_frame_invariants(&f);
        }

        /// A valid frame with a few random bytes overwritten and a random cut.
        #[test]
        fn corrupted_valid_frames_never_panic(
            edits in proptest::collection::vec((0usize..120, any::<u8>()), 0..6),
            cut in 0usize..130,
            opts in 0usize..4,
        ) {
            let mut f = if opts == 0 { tcp_frame(B, A, ECN_ECT0, 40) } else { tcp_frame_with_options(B, A, ECN_ECT0, 40, opts) };
            for (at, v) in edits {
                if at < f.len() {
                    f[at] = v;
                }
            }
            f.truncate(cut);
            accepted_frame_invariants(&f);
        }
    }
}
