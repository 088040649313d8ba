//! Generic Receive Offload at a `linux` receiver (`host.gro`): the NIC's interrupt comes
//! `host.rx_coalesce` after the first packet of a batch (`ethtool -C rx-usecs`), and the NAPI
//! poll it starts hands TCP what arrived by then, merged per flow into skbs of up to 64 KB
//! (net/core/gro.c `GRO_MAX_SIZE`; `tcp_gro_receive`, net/ipv4/tcp_offload.c), so TCP runs
//! once and ACKs once per aggregate (`__tcp_ack_snd_check`: more than one full segment
//! unacknowledged, an ACK at once).
//!
//! `tcp_gro_receive`'s rules for one flow, as kept here: a segment joins the held aggregate
//! when it starts where the aggregate ends, carries the same ECN codepoint (`inet_gro_receive`
//! compares the TOS byte) and no CWR (a CWR segment flushes what is held), and the aggregate
//! stays within 64 KB; a segment with PSH, or shorter than the MSS, is merged and then ends its
//! aggregate (`flush = len < mss`, `TCP_FLAG_PSH`). Every other segment closes the held
//! aggregate and starts the next. The aggregate's timestamp echo is its first segment's (GRO
//! merges only segments with the same TSval, which ticks once a millisecond).
//!
//! Deviation: the poll is per connection, not per NIC (flows interleaved on one NIC are polled
//! at their own batches' times, not at one shared interrupt's).

use crate::packet::{flags, Packet};
use ecnlab_core::units::Nanos;

/// `GRO_MAX_SIZE`: the largest aggregate, bytes of payload.
pub const GRO_MAX_SIZE: u64 = 65536;

/// One aggregate: the skb TCP will see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aggregate {
    /// Its first segment, with `payload` and `flags` covering the whole aggregate.
    pub skb: Packet,
    /// Wire segments merged, and the first one's payload (`gso_size`).
    pub segments: u32,
    pub gso_size: u32,
    /// Closed: the next segment starts another aggregate.
    pub closed: bool,
}

/// The segments a receiver holds until its next NAPI poll.
#[derive(Clone, Debug)]
pub struct Gro {
    /// Interrupt coalescing: the poll comes this long after a batch's first packet.
    pub coalesce: Nanos,
    /// The sender's MSS (a shorter segment ends its aggregate).
    pub mss: u32,
    /// The aggregates of the batch, in arrival order.
    held: Vec<Aggregate>,
    /// When the batch's poll runs.
    poll_at: Option<Nanos>,
}

impl Gro {
    pub fn new(coalesce: Nanos, mss: u32) -> Self {
        Gro { coalesce, mss, held: Vec::new(), poll_at: None }
    }

    /// When the held batch is handed to TCP.
    pub fn poll_at(&self) -> Option<Nanos> {
        self.poll_at
    }

    /// A data segment arrived at `now`: held for the batch's poll.
    pub fn receive(&mut self, now: Nanos, pkt: &Packet) {
        self.poll_at.get_or_insert(now + self.coalesce.max(1));
        let ends = pkt.has(flags::PSH) || pkt.payload < self.mss;
        if let Some(a) = self.held.last_mut() {
            let s = &mut a.skb;
            let joins = !a.closed
                && pkt.seq == s.seq + s.payload as u64
                && pkt.ecn == s.ecn
                && !pkt.has(flags::CWR)
                && (s.payload + pkt.payload) as u64 <= GRO_MAX_SIZE;
            if joins {
                s.payload += pkt.payload;
                s.size += pkt.payload;
                s.flags |= pkt.flags & flags::PSH;
                s.dscp = pkt.dscp;
                a.segments += 1;
                a.closed = ends;
                return;
            }
            a.closed = true;
        }
        self.held.push(Aggregate { skb: *pkt, segments: 1, gso_size: pkt.payload, closed: ends });
    }

    /// The poll at `now` (if due): the batch's aggregates, oldest first, into `out`.
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<Aggregate>) {
        if self.poll_at.is_some_and(|t| t <= now) {
            self.poll_at = None;
            out.append(&mut self.held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};

    impl Gro {
        fn ecns(&self) -> Vec<Ecn> {
            self.held.iter().map(|a| a.skb.ecn).collect()
        }
    }

    fn seg(i: u64, ecn: Ecn, fl: u8) -> Packet {
        Packet { seq: i * 1460, payload: 1460, size: 1500, kind: Kind::Data, ecn, flags: fl, ..Packet::default() }
    }

    /// By hand: ten back-to-back segments, CE on the 5th and 6th, PSH on the 10th: aggregates
    /// [0..4) ECT, [4..6) CE, [6..10) ECT ending with the PSH; all handed over at the poll, 8 us
    /// after the first arrival; the next segment starts a new batch.
    #[test]
    fn a_batch_merges_contiguous_segments_of_one_codepoint() {
        let mut g = Gro::new(8_000, 1460);
        for i in 0..10 {
            let ecn = if i == 4 || i == 5 { Ecn::Ce } else { Ecn::Ect0 };
            g.receive(1_000 + i * 1_200, &seg(i, ecn, if i == 9 { flags::PSH } else { 0 }));
        }
        assert_eq!(g.ecns(), vec![Ecn::Ect0, Ecn::Ce, Ecn::Ect0]);
        let mut out = Vec::new();
        g.poll(8_999, &mut out);
        assert!(out.is_empty(), "the poll is 8 us after the first arrival");
        g.poll(9_000, &mut out);
        let got: Vec<(u64, u32, u32, bool)> =
            out.iter().map(|a| (a.skb.seq / 1460, a.segments, a.skb.payload, a.skb.has(flags::PSH))).collect();
        assert_eq!(got, vec![(0, 4, 4 * 1460, false), (4, 2, 2 * 1460, false), (6, 4, 4 * 1460, true)]);
        assert_eq!(out[2].skb.size, 4 * 1460 + 40, "one header");
        g.receive(20_000, &seg(10, Ecn::Ect0, 0));
        assert_eq!(g.poll_at(), Some(28_000));
    }

    /// 64 KB: 44 full segments fit (64,240 B), the 45th starts the next aggregate; a gap
    /// (segment 50 missing), a CWR segment and a short one each end one.
    #[test]
    fn aggregates_end_at_64kb_a_hole_cwr_and_a_short_segment() {
        let mut g = Gro::new(100_000, 1460);
        for i in 0..50 {
            g.receive(i, &seg(i, Ecn::Ect0, 0));
        }
        g.receive(51, &seg(51, Ecn::Ect0, 0));
        g.receive(52, &seg(52, Ecn::Ect0, flags::CWR));
        g.receive(53, &seg(53, Ecn::Ect0, 0));
        let mut short = seg(54, Ecn::Ect0, 0);
        short.payload = 100;
        g.receive(54, &short);
        g.receive(55, &Packet { seq: 54 * 1460 + 100, ..seg(0, Ecn::Ect0, 0) });
        let mut out = Vec::new();
        g.poll(u64::MAX, &mut out);
        let segs: Vec<u32> = out.iter().map(|a| a.segments).collect();
        assert_eq!(segs, vec![44, 6, 1, 3, 1]);
    }
}
