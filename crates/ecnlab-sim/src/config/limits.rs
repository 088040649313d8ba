//! The bounds of what a scenario may ask for: each keeps an absurd input from overflowing
//! a counter or exhausting memory, and each names what bounds it.

/// Host ids are 16-bit in packets.
pub const MAX_HOSTS: usize = u16::MAX as usize;
/// Leaf-spine links, a bound that keeps an absurd fabric from exhausting memory.
pub const MAX_CORE_LINKS: usize = 1_000_000;
/// The longest one-way link delay (or extra RTT-variation delay): 10 s.
pub const MAX_DELAY_NS: u64 = 10 * 1_000_000_000;
/// The largest TCP payload of an IPv4 packet: 65535 - 20 (IP) - 20 (TCP).
pub const MAX_MSS: u32 = 65_495;

/// The smallest probe: an IPv4 header and an ICMP echo header (20 + 8 B).
pub const MIN_PROBE_BYTES: u64 = 28;
/// The largest IPv4 packet.
pub const MAX_PACKET_BYTES: u64 = 65_535;
