//! New data out of the `linux` sender (`tcp_write_xmit`, net/ipv4/tcp_output.c), in skbs:
//! with TSO (`host.tso`, the largest skb the NIC takes) each skb carries up to
//! `tcp_tso_segs` segments (the kernel line's `tcp_tso_autosize`), no more than the window
//! lets out (`tcp_cwnd_test`: from 4.x at most half the window per skb, "to have at least 2
//! GSO packets in flight"; `tcp_mss_split_point`), and an skb the window cannot take whole
//! may wait for the next ACK (`tcp_tso_should_defer`). The NIC puts each skb's segments on
//! the wire back to back: the sender hands them over together, MSS by MSS, as the wire
//! packets the switch and the captures see. Without TSO every skb is one segment and
//! nothing is deferred (what the sender did before TSO was modelled).
//!
//! The write queue's skbs (what `tcp_sendmsg` built, `tcp_xmit_size_goal`) are taken as
//! the next `gso_max` bytes of the application's data (3.18: the autosized goal), not the
//! boundaries of its writes: an application that writes a message at once, as ecnlab's do,
//! fills them so.

use super::{Episode, LinuxSender};
use crate::packet::Packet;
use crate::tcp::linux::ca::{CaEvent, CaState, CongestionOps};
use crate::tcp::linux::kernel::{DeferCheck, Kernel};
use ecnlab_core::units::Nanos;

impl LinuxSender {
    /// Sends new data up to `app_limit` as the window, TSO and TCP Small Queues allow;
    /// returns (something was sent, the window limited it). `push_one`: the loss probe's
    /// call (`push_one` = 2): one skb, of at least one segment past the window, not deferred.
    pub(super) fn write_xmit(
        &mut self,
        now: Nanos,
        app_limit: u64,
        push_one: bool,
        out: &mut Vec<Packet>,
    ) -> (bool, bool) {
        let mss = self.p.mss as u64;
        let (mut sent, mut limited) = (false, false);
        while self.snd_nxt < app_limit {
            if !push_one && !self.may_send() {
                limited = true;
                break;
            }
            let left = app_limit - self.snd_nxt;
            let (segs, bytes) = match self.p.gso_max {
                None => (1, left.min(mss)),
                Some(gso) => {
                    let max_segs = self.tso_segs(gso);
                    let write_skb = left.min(self.write_skb_segs(gso, max_segs) as u64 * mss);
                    let quota = if push_one { self.cwnd_quota().max(1) } else { self.cwnd_quota() } as u64;
                    if write_skb > mss && !push_one {
                        if let Some(cwnd_limited) = self.tso_defer(now, write_skb, left > write_skb, max_segs) {
                            limited = cwnd_limited;
                            break;
                        }
                    }
                    let segs = write_skb.div_ceil(mss).min(quota).min(max_segs as u64).max(1);
                    (segs as u32, write_skb.min(segs * mss))
                }
            };
            if self.tsq_holds(bytes, false) {
                break;
            }
            if self.pipe() == 0 {
                self.ca.cwnd_event(&mut self.tp, CaEvent::TxStart);
            }
            if let Some(q) = self.tsq.as_mut() {
                q.handed(bytes, segs);
            }
            let mut left = bytes;
            for k in 0..segs {
                let len = left.min(mss) as u32;
                left -= len as u64;
                let seq = self.snd_nxt;
                self.sb.push(seq, len, now, k == 0);
                self.snd_nxt += len as u64;
                // The hooks read snd_nxt (DCTCP's once-per-window alpha, HyStart's rounds).
                self.tp.snd_nxt = self.snd_nxt;
                self.emit(now, seq, len, true, out);
            }
            sent = true;
            if push_one {
                break;
            }
        }
        (sent, limited)
    }

    /// `tcp_tso_segs` with a NIC that takes skbs of `gso` bytes.
    fn tso_segs(&self, gso: u64) -> u32 {
        self.p.kernel.tso_segs(self.p.mss, gso, self.pacing_rate(), self.tp.min_rtt_us)
    }

    /// The segments of a write-queue skb (`tcp_xmit_size_goal`): 3.18 builds them at the
    /// autosized goal; later lines at `sk_gso_max_size` less the headers (IP 20, TCP with
    /// timestamps 32) and let `tcp_write_xmit` split them.
    fn write_skb_segs(&self, gso: u64, max_segs: u32) -> u32 {
        match self.p.kernel {
            Kernel::V3_18 => max_segs,
            Kernel::V4_19 | Kernel::V6_18 => ((gso - 1 - 52) / self.p.mss as u64).max(1) as u32,
        }
    }

    /// `tcp_cwnd_test`: the segments the window lets out now, from 4.x at most half of it
    /// (one more segment owed a reduction that has sent nothing: `force_one`).
    fn cwnd_quota(&self) -> u32 {
        let cwnd = self.tp.snd_cwnd.min(self.tp.snd_cwnd_clamp);
        let room = cwnd.saturating_sub(self.pipe());
        let quota = match self.p.kernel {
            Kernel::V3_18 => room,
            Kernel::V4_19 | Kernel::V6_18 => room.min((cwnd >> 1).max(1)),
        };
        if self.force_one {
            quota.max(1)
        } else {
            quota
        }
    }

    /// `tcp_tso_should_defer` for a write-queue skb of `skb_len` bytes (`not_tail`: more
    /// data follows it): Some(whether the window limited it) when it waits.
    fn tso_defer(&self, now: Nanos, skb_len: u64, not_tail: bool, max_segs: u32) -> Option<bool> {
        let cwnd = self.tp.snd_cwnd.min(self.tp.snd_cwnd_clamp);
        let cong_win = cwnd.saturating_sub(self.pipe()) as u64 * self.p.mss as u64;
        let d = DeferCheck {
            recovering: matches!(self.episode, Episode::Recovery { .. } | Episode::Loss { .. })
                || self.tp.ca_state == CaState::Recovery,
            since_last_tx: self.lsndtime.map_or(u64::MAX, |t| now.saturating_sub(t)),
            cong_win,
            skb_len,
            not_tail,
            max_segs,
            mss: self.p.mss,
            cwnd,
            head_age: self.sb.segs().front().map(|s| now.saturating_sub(s.tx)),
            srtt8: self.tp.srtt_us as u64,
        };
        self.p.kernel.tso_should_defer(d).then_some(cong_win <= skb_len)
    }
}
