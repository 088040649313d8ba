//! The SACK scoreboard of RFC 6675 §3-4: one entry per segment sent and not yet cumulatively
//! acknowledged, with Linux's per-segment marks (`TCPCB_SACKED_ACKED`, `TCPCB_LOST`,
//! `TCPCB_SACKED_RETRANS`) and counters (`sacked_out`, `lost_out`, `retrans_out`, kept
//! incrementally as `tcp_sacktag_one` / `tcp_mark_head_lost` do).
//!
//! Read RFC 6675 §2-4 (Update, IsLost, SetPipe, NextSeg) first. Segments are numbered by
//! their first byte; a segment keeps the boundaries it was first sent with (no TSO, no
//! re-segmentation). The entries live in a ring (`VecDeque`) that grows to the largest
//! flight once and is reused: nothing allocates per segment in the steady state.

use super::recovery::Rack;
use ecnlab_core::units::Nanos;
use std::collections::VecDeque;

/// Per-segment marks.
pub mod mark {
    /// Covered by a SACK block (`TCPCB_SACKED_ACKED`).
    pub const SACKED: u8 = 1;
    /// Deemed lost (`TCPCB_LOST`); kept when retransmitted, as in Linux, so that pipe
    /// counts a lost segment's retransmission and not the segment itself (RFC 6675).
    pub const LOST: u8 = 2;
    /// Retransmitted and the retransmission still in flight (`TCPCB_SACKED_RETRANS`).
    pub const RETRANS: u8 = 4;
    /// Retransmitted at least once (`TCPCB_EVER_RETRANS`).
    pub const EVER_RETRANS: u8 = 8;
    /// The first segment of an skb still in the retransmission queue (with TSO an skb
    /// carries several; acknowledging its head passes this to the next).
    pub const SKB_HEAD: u8 = 16;
}

/// One segment of the retransmission queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub seq: u64,
    /// When it was last (re)transmitted (Linux's `skb->skb_mstamp_ns`).
    pub tx: Nanos,
    pub len: u32,
    pub marks: u8,
}

impl Seg {
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    #[inline]
    pub fn has(&self, m: u8) -> bool {
        self.marks & m != 0
    }
}

/// What one ACK changed on the scoreboard, and the send times its RTT samples come from
/// (Karn's rule, RFC 6298 §3: never from a segment that was ever retransmitted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckDelta {
    /// Segments removed by the cumulative ACK that had not been SACKed before (delivered now).
    pub acked: u32,
    /// Every segment removed by the cumulative ACK, SACKed before or not (`pkts_acked` of
    /// `tcp_clean_rtx_queue`).
    pub pkts_acked: u32,
    /// Segments newly SACKed by this ACK's blocks.
    pub sacked: u32,
    /// Any segment was removed by the cumulative ACK.
    pub una_advanced: bool,
    /// Send times of the first and last segment the cumulative ACK removed that were
    /// neither retransmitted nor SACKed before (`first_ackt`, `last_ackt` of
    /// `tcp_clean_rtx_queue`: the estimator's sample and the congestion control's; a
    /// SACKed segment gave its sample when it was SACKed).
    pub first_tx: Option<Nanos>,
    pub last_tx: Nanos,
    /// The same for the segments newly SACKed (`first_sackt`, `last_sackt` of
    /// `tcp_sacktag_one`).
    pub first_sack_tx: Option<Nanos>,
    pub last_sack_tx: Nanos,
    /// A retransmitted segment was cumulatively acknowledged (`FLAG_RETRANS_DATA_ACKED`:
    /// no RTT sample from this ACK's cumulative part).
    pub retrans_acked: bool,
    /// The lowest end of the never-retransmitted segments this ACK delivered (acknowledged
    /// and not SACKed before, or newly SACKed): `FLAG_ORIG_SACK_ACKED` is such a segment at
    /// or below `high_seq` (F-RTO's proof that a timeout was spurious, RFC 5682 §3.1 step 3.b).
    pub orig_end_min: Option<u64>,
    /// RACK's view of the segments this ACK delivers, when RACK runs.
    pub rack: Option<RackAck>,
}

/// RACK over one ACK: `tcp_rack_advance` for each segment it delivers (newly SACKed in
/// `tcp_sacktag_one`, cumulatively acknowledged and not SACKed before in
/// `tcp_clean_rtx_queue`), and the reordering it reveals (`tcp_check_sack_reordering`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackAck {
    pub rack: Rack,
    pub now: Nanos,
    /// `tcp_min_rtt` before this ACK.
    pub min_rtt: Option<Nanos>,
    /// The ACK's timestamp echo: a cumulatively acknowledged retransmission sent after it
    /// was not what the ACK answers (`tcp_skb_spurious_retrans`) and advances nothing.
    pub tsecr: Nanos,
    /// The end of the highest SACKed segment before this ACK (`prior_fack`; None: none).
    pub fack: Option<u64>,
}

impl RackAck {
    fn delivered(&mut self, s: &Seg, cumulative: bool) {
        let retransmitted = s.has(mark::EVER_RETRANS);
        if cumulative && retransmitted && self.tsecr < s.tx {
            return;
        }
        self.rack.advance(self.now, s.tx, s.end(), retransmitted, self.min_rtt);
        // "New sack for not retransmitted frame, which was in hole. It is reordering."
        if !retransmitted && self.fack.is_some_and(|f| s.seq < f) {
            self.rack.reord_seen = true;
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// `sacked_out`, `lost_out`, `retrans_out` (segments).
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Skbs in the retransmission queue (segments marked `SKB_HEAD`).
    pub skbs_out: u32,
}

impl Scoreboard {
    /// Segments sent and not cumulatively acknowledged (`packets_out`).
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// RFC 6675 SetPipe, as Linux's `tcp_packets_in_flight`: the segments outstanding,
    /// less those SACKed and those deemed lost, plus retransmissions in flight.
    #[inline]
    pub fn pipe(&self) -> u32 {
        self.packets_out() - self.sacked_out - self.lost_out + self.retrans_out
    }

    pub fn segs(&self) -> &VecDeque<Seg> {
        &self.segs
    }

    /// A new segment `[seq, seq + len)` went out (above every segment held), the first of
    /// an skb if `skb_head`.
    pub fn push(&mut self, seq: u64, len: u32, tx: Nanos, skb_head: bool) {
        debug_assert!(self.segs.back().is_none_or(|s| s.end() <= seq));
        debug_assert!(skb_head || !self.segs.is_empty(), "an skb starts with its head");
        self.segs.push_back(Seg { seq, tx, len, marks: if skb_head { mark::SKB_HEAD } else { 0 } });
        self.skbs_out += skb_head as u32;
    }

    fn unmark(&mut self, i: usize, m: u8) {
        let s = &mut self.segs[i];
        if s.marks & m == 0 {
            return;
        }
        s.marks &= !m;
        match m {
            mark::SACKED => self.sacked_out -= 1,
            mark::LOST => self.lost_out -= 1,
            mark::RETRANS => self.retrans_out -= 1,
            _ => {}
        }
    }

    fn set_mark(&mut self, i: usize, m: u8) {
        let s = &mut self.segs[i];
        if s.marks & m != 0 {
            return;
        }
        s.marks |= m;
        match m {
            mark::SACKED => self.sacked_out += 1,
            mark::LOST => self.lost_out += 1,
            mark::RETRANS => self.retrans_out += 1,
            _ => {}
        }
    }

    /// The cumulative ACK moved to `una`: drops the segments wholly below it (a segment
    /// acknowledged in part is trimmed, `tcp_trim_head`).
    pub fn cumulative_ack(&mut self, una: u64, d: &mut AckDelta) {
        while let Some(s) = self.segs.front().copied() {
            if s.end() <= una {
                d.pkts_acked += 1;
                if !s.has(mark::SACKED) {
                    if let Some(r) = d.rack.as_mut() {
                        r.delivered(&s, true);
                    }
                }
                if s.has(mark::EVER_RETRANS) {
                    d.retrans_acked = true;
                } else if !s.has(mark::SACKED) {
                    d.first_tx.get_or_insert(s.tx);
                    d.last_tx = s.tx;
                    d.orig_end_min.get_or_insert(s.end());
                }
                if !s.has(mark::SACKED) {
                    d.acked += 1;
                }
                for m in [mark::SACKED, mark::LOST, mark::RETRANS] {
                    self.unmark(0, m);
                }
                self.segs.pop_front();
                if s.has(mark::SKB_HEAD) {
                    // The skb's rest, if any, is still one skb (`tcp_trim_head`).
                    match self.segs.front_mut() {
                        Some(n) if !n.has(mark::SKB_HEAD) => n.marks |= mark::SKB_HEAD,
                        _ => self.skbs_out -= 1,
                    }
                }
                d.una_advanced = true;
            } else {
                if s.seq < una {
                    let f = &mut self.segs[0];
                    f.len -= (una - f.seq) as u32;
                    f.seq = una;
                }
                break;
            }
        }
    }

    /// RFC 6675 Update() for one SACK block `[start, end)`: marks the segments it wholly
    /// covers (`tcp_sacktag_one`), clearing their loss and retransmission marks.
    pub fn sack_block(&mut self, start: u64, end: u64, d: &mut AckDelta) {
        let mut i = self.segs.partition_point(|s| s.seq < start);
        while i < self.segs.len() && self.segs[i].end() <= end {
            if !self.segs[i].has(mark::SACKED) {
                if let Some(r) = d.rack.as_mut() {
                    r.delivered(&self.segs[i], false);
                }
                if !self.segs[i].has(mark::EVER_RETRANS) {
                    d.first_sack_tx.get_or_insert(self.segs[i].tx);
                    d.last_sack_tx = self.segs[i].tx;
                    let end = self.segs[i].end();
                    d.orig_end_min = Some(d.orig_end_min.map_or(end, |e| e.min(end)));
                }
                self.unmark(i, mark::LOST);
                self.unmark(i, mark::RETRANS);
                self.set_mark(i, mark::SACKED);
                d.sacked += 1;
            }
            i += 1;
        }
    }

    /// RFC 6675 IsLost() applied to every segment (the scan of `tcp_mark_head_lost`): a
    /// segment not SACKed, with at least `dupthresh` SACKed segments above it, is lost
    /// (unless already retransmitted, whose retransmission is judged only by the RTO, as
    /// in Linux without RACK). Returns the segments newly marked.
    pub fn mark_lost(&mut self, dupthresh: u32) -> u32 {
        let mut above = 0u32;
        let mut newly = 0;
        for i in (0..self.segs.len()).rev() {
            let s = self.segs[i];
            if s.has(mark::SACKED) {
                above += 1;
            } else if above >= dupthresh && !s.has(mark::LOST) && !s.has(mark::EVER_RETRANS) {
                self.set_mark(i, mark::LOST);
                newly += 1;
            }
        }
        newly
    }

    /// RACK's loss scan (`tcp_rack_detect_loss`, RFC 8985 §6.2 step 5): every segment not
    /// SACKed, and not already lost and waiting for its retransmission, that was sent before
    /// RACK's segment is lost once `rack.rtt + reo_wnd` has passed since its own (last)
    /// transmission; a retransmission so judged is lost again (`tcp_mark_skb_lost`). Returns
    /// the segments newly taken out of the pipe and the longest wait of those not yet lost
    /// (ns; 0: none).
    pub fn rack_detect_loss(&mut self, rack: &Rack, now: Nanos, reo_wnd: Nanos) -> (u32, Nanos) {
        let (mut newly, mut wait) = (0u32, 0i64);
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.has(mark::SACKED) || (s.has(mark::LOST) && !s.has(mark::RETRANS)) {
                continue;
            }
            if !Rack::sent_after(rack.xmit, rack.end_seq, s.tx, s.end()) {
                // Sent after RACK's segment. Originals leave in sequence order, so every
                // later original did too (the kernel's time-sorted list ends here); a
                // retransmission may sit below older originals.
                if s.has(mark::EVER_RETRANS) {
                    continue;
                }
                break;
            }
            let remaining = rack.remaining(now, s.tx, reo_wnd);
            if remaining <= 0 {
                self.set_mark(i, mark::LOST);
                self.unmark(i, mark::RETRANS);
                newly += 1;
            } else {
                wait = wait.max(remaining);
            }
        }
        (newly, wait as Nanos)
    }

    /// The end of the highest SACKed segment (`tcp_highest_sack_seq`), None when none is.
    pub fn highest_sack_end(&self) -> Option<u64> {
        if self.sacked_out == 0 {
            return None;
        }
        self.segs.iter().rposition(|s| s.has(mark::SACKED)).map(|i| self.segs[i].end())
    }

    /// Marks the first segment lost (`tcp_mark_head_lost` with one packet: Reno emulation,
    /// no SACK).
    pub fn mark_head_lost(&mut self) -> u32 {
        match self.segs.front() {
            Some(s) if !s.has(mark::SACKED) && !s.has(mark::LOST) && !s.has(mark::RETRANS) => {
                self.set_mark(0, mark::LOST);
                1
            }
            _ => 0,
        }
    }

    /// After an RTO (`tcp_enter_loss`): every segment not SACKed is lost, earlier
    /// retransmissions included (they are presumed lost too).
    pub fn mark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            self.unmark(i, mark::RETRANS);
            if !self.segs[i].has(mark::SACKED) {
                self.set_mark(i, mark::LOST);
            }
        }
    }

    /// An undo (`tcp_undo_cwnd_reduction` with `unmark_loss`): no segment is lost any more.
    pub fn unmark_all_lost(&mut self) {
        for i in 0..self.segs.len() {
            self.unmark(i, mark::LOST);
        }
    }

    /// `tcp_any_retrans_done`: a retransmission in flight, or the head ever retransmitted.
    pub fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || self.segs.front().is_some_and(|s| s.has(mark::EVER_RETRANS))
    }

    /// RFC 6675 NextSeg() rule 1: the first segment deemed lost and not retransmitted.
    pub fn next_lost(&self) -> Option<usize> {
        if self.lost_out == 0 {
            return None;
        }
        self.segs.iter().position(|s| s.has(mark::LOST) && !s.has(mark::RETRANS))
    }

    /// NextSeg() rule 3: the first segment above `high_rxt` that is neither SACKed nor
    /// retransmitted and has SACKed data above it.
    pub fn next_unsacked_below_sack(&self, high_rxt: u64) -> Option<usize> {
        let top = self.segs.iter().rposition(|s| s.has(mark::SACKED))?;
        let from = self.segs.partition_point(|s| s.seq < high_rxt);
        (from..top).find(|&i| {
            let s = &self.segs[i];
            !s.has(mark::SACKED) && !s.has(mark::EVER_RETRANS)
        })
    }

    /// NextSeg() rule 4 (the rescue retransmission): the highest segment not SACKed.
    pub fn highest_unsacked(&self) -> Option<usize> {
        self.segs.iter().rposition(|s| !s.has(mark::SACKED))
    }

    /// Segment `i` was retransmitted.
    pub fn retransmitted(&mut self, i: usize, now: Nanos) {
        self.segs[i].tx = now;
        self.set_mark(i, mark::RETRANS);
        self.segs[i].marks |= mark::EVER_RETRANS;
    }

    pub fn seg(&self, i: usize) -> Seg {
        self.segs[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten 1000-byte segments 0..10000 outstanding.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        for k in 0..10 {
            b.push(k * 1000, 1000, 0, true);
        }
        b
    }

    /// RFC 6675 §4 SetPipe on scripted scoreboards: pipe counts each segment that is
    /// neither SACKed nor lost, plus each retransmission in flight.
    #[test]
    fn pipe_follows_rfc6675_setpipe() {
        let mut b = board();
        assert_eq!(b.pipe(), 10);
        let mut d = AckDelta::default();
        // Segment 0 lost; 1, 2 SACKed: two SACKed above, below DupThresh, nothing lost yet.
        b.sack_block(1000, 3000, &mut d);
        assert_eq!((d.sacked, b.mark_lost(3), b.pipe()), (2, 0, 8));
        // A third SACKed segment (3) above segment 0: IsLost(0), pipe drops by one more.
        b.sack_block(1000, 4000, &mut d);
        assert_eq!(b.mark_lost(3), 1);
        assert_eq!((b.sacked_out, b.lost_out, b.pipe()), (3, 1, 10 - 3 - 1));
        // Retransmitting it puts one segment back in the pipe (RFC 6675: "pipe += 1" for
        // a retransmitted octet).
        assert_eq!(b.next_lost(), Some(0));
        b.retransmitted(0, 0);
        assert_eq!((b.lost_out, b.retrans_out, b.pipe()), (1, 1, 7));
        assert_eq!(b.next_lost(), None);
        // Two blocks: 5 and 7..=8 SACKed. Segment 4 has three SACKed segments above it
        // (5, 7, 8): lost. Segment 6 has two (7, 8): not yet.
        b.sack_block(5000, 6000, &mut d);
        b.sack_block(7000, 9000, &mut d);
        assert_eq!(b.mark_lost(3), 1);
        let lost: Vec<u64> = b.segs().iter().filter(|s| s.has(mark::LOST)).map(|s| s.seq).collect();
        assert_eq!(lost, vec![0, 4000]);
        assert_eq!(b.seg(b.next_lost().unwrap()).seq, 4000);
        // 10 out - 6 SACKed - 2 lost + 1 retransmitted = 3: segments 6 and 9, and segment
        // 0's retransmission (SetPipe counts a lost segment only by its retransmission).
        assert_eq!(b.pipe(), 3);
        // The cumulative ACK of the retransmission covers 0..4000 (1..=3 were SACKed).
        let mut d = AckDelta::default();
        b.cumulative_ack(4000, &mut d);
        // One delivered now (0), four removed (`pkts_acked`), no sequence RTT sample (Karn).
        assert_eq!((d.acked, d.pkts_acked, d.una_advanced, d.retrans_acked), (1, 4, true, true));
        assert_eq!(d.first_tx, None);
        assert_eq!((b.packets_out(), b.sacked_out, b.lost_out, b.retrans_out), (6, 3, 1, 0));
        assert_eq!(b.pipe(), 2);
        // NextSeg rule 3 and the rescue candidate: segment 9 is the highest unSACKed one.
        assert_eq!(b.next_unsacked_below_sack(0), Some(0));
        assert_eq!(b.seg(b.highest_unsacked().unwrap()).seq, 9000);
    }

    #[test]
    fn an_rto_marks_everything_unsacked_lost() {
        let mut b = board();
        let mut d = AckDelta::default();
        b.sack_block(2000, 3000, &mut d);
        b.retransmitted(0, 0);
        b.mark_all_lost();
        assert_eq!((b.sacked_out, b.lost_out, b.retrans_out, b.pipe()), (1, 9, 0, 0));
        assert_eq!(b.next_lost(), Some(0), "the earlier retransmission is presumed lost too");
    }
}
