//! The steps of `tcp_ack` (net/ipv4/tcp_input.c) that [`LinuxSender::on_ack`] takes in the
//! kernel's order: the scoreboard (`tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`), the
//! deliveries (`tcp_count_delivered`, Reno's SACK emulation), the RTT sample
//! (`tcp_ack_update_rtt`), the congestion control's ACK hooks (`pkts_acked`,
//! `in_ack_event`) and the window's growth or reduction (`tcp_cong_control`).

use super::{LinuxSender, NS_PER_US};
use crate::packet::Packet;
use crate::tcp::linux::ca::{ack_flags, AckSample, CongestionOps};
use crate::tcp::linux::rtt::RttEstimator;
use crate::tcp::linux::sack_option::SackBlocks;
use crate::tcp::linux::scoreboard::AckDelta;
use ecnlab_core::units::Nanos;

impl LinuxSender {
    /// `tcp_sacktag_write_queue`, then `tcp_clean_rtx_queue`: the scoreboard takes the SACK
    /// blocks above `a` and the cumulative ACK `a`; `snd_una` moves to `a`.
    pub(super) fn sacktag_and_clean(
        &mut self,
        now: Nanos,
        ack: &Packet,
        a: u64,
        sack: Option<&SackBlocks>,
    ) -> AckDelta {
        let mut d = AckDelta { rack: self.rack_ack(now, ack.tx_ns), ..AckDelta::default() };
        if self.p.sack {
            if let Some(b) = sack {
                let mut blocks = *b;
                if d.rack.is_some() {
                    // tcp_sacktag_write_queue walks the blocks in sequence order (RACK's RTT
                    // is its last delivery's).
                    blocks.sort();
                }
                for &(s, e) in blocks.as_slice() {
                    if e > a {
                        self.sb.sack_block(s.max(a), e.min(self.snd_nxt), &mut d);
                    }
                }
            }
        }
        self.sb.cumulative_ack(a, &mut d);
        if let Some(r) = d.rack {
            self.rack = Some(r.rack);
        }
        self.tp.snd_una = a;
        d
    }

    /// `tcp_count_delivered`: the segments this ACK delivered (acknowledged or SACKed; with
    /// ECN-Echo, also as CE-delivered). Without SACK, `tcp_remove_reno_sacks` /
    /// `tcp_add_reno_sack` first count duplicate ACKs as SACKed segments.
    pub(super) fn count_delivered(&mut self, d: &AckDelta, ack: AckKind) {
        let mut delivered = d.acked + d.sacked;
        if !self.p.sack {
            if ack.una_advanced {
                delivered = d.acked.saturating_sub(self.reno_sacked).max(1);
                self.reno_sacked = self.reno_sacked.saturating_sub(d.acked.saturating_sub(1));
            } else if ack.dupack {
                let before = self.reno_sacked;
                self.reno_sacked = (self.reno_sacked + 1).min(self.sb.packets_out().saturating_sub(1));
                delivered = self.reno_sacked - before;
            }
            self.reno_sacked = self.reno_sacked.min(self.sb.packets_out().saturating_sub(self.sb.lost_out.max(1)));
        }
        self.tp.delivered = self.tp.delivered.wrapping_add(delivered);
        if ack.ece {
            self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(delivered);
        }
    }

    /// `tcp_ack_update_rtt`: the sequence sample (first_ackt, Karn's rule), else the SACK
    /// one (first_sackt), else the timestamp echo `tsecr` on an ACK that removes data, into
    /// the estimator and the RTO. Returns the congestion control's sample, the last
    /// segment's (ca_rtt_us: last_ackt or last_sackt).
    pub(super) fn ack_update_rtt(
        &mut self,
        now: Nanos,
        tsecr: Nanos,
        d: &AckDelta,
        a: u64,
        una_advanced: bool,
    ) -> Option<Nanos> {
        let since = |tx: Nanos| (tx <= now).then(|| now - tx);
        let seq_rtt = d.first_tx.filter(|_| !d.retrans_acked).and_then(since);
        let sack_rtt = d.first_sack_tx.and_then(since);
        let mut ca_rtt = if sack_rtt.is_some() { since(d.last_sack_tx) } else { seq_rtt.and(since(d.last_tx)) };
        let mut rtt = seq_rtt.or(sack_rtt);
        if rtt.is_none() && una_advanced {
            rtt = since(tsecr);
            ca_rtt = rtt;
        }
        if let Some(r) = rtt {
            RttEstimator::update(&mut self.rtt, (r / NS_PER_US).max(1), a, self.snd_nxt, self.p.rto_min_us);
            let est = self.rtt.as_ref().expect("just sampled");
            self.tp.srtt_us = est.srtt_us.min(u32::MAX as u64) as u32;
            let ca_us = ca_rtt.map_or(u64::MAX, |c| (c / NS_PER_US).max(1));
            self.tp.min_rtt_us = self.tp.min_rtt_us.min(ca_us.min(u32::MAX as u64) as u32);
            self.rto = (est.rto_us() * NS_PER_US).min(self.p.rto_max).max(1);
        }
        ca_rtt
    }

    /// The congestion control's view of the ACK: `pkts_acked` (`tcp_clean_rtx_queue`'s hook,
    /// on every ACK that finds data outstanding: the segments the cumulative ACK removed,
    /// SACKed before or not, and ca_rtt_us), then `in_ack_event` (the slow path unless the
    /// ACK only advances `snd_una`).
    pub(super) fn ca_ack_hooks(&mut self, data_outstanding: bool, d: &AckDelta, ca_rtt: Option<Nanos>, ack: AckKind) {
        if data_outstanding {
            let rtt_us = ca_rtt.map_or(-1, |r| (r / NS_PER_US).min(i32::MAX as u64) as i32);
            let sample = AckSample { pkts_acked: d.pkts_acked, rtt_us };
            self.ca.pkts_acked(&mut self.tp, &sample);
        }
        let slow = ack.ece || d.sacked > 0 || ack.dupack || !ack.una_advanced;
        let mut ev = if slow { ack_flags::SLOWPATH } else { ack_flags::WIN_UPDATE };
        if ack.ece {
            ev |= ack_flags::ECE;
        }
        self.ca.in_ack_event(&mut self.tp, ev);
    }

    /// `tcp_cong_control`: PRR during a reduction (`tcp_cwnd_reduction`), else the
    /// algorithm's `cong_avoid` on an ACK that advances `snd_una` and delivers something.
    /// `prior_delivered` is `tp.delivered` before this ACK.
    pub(super) fn cong_control(
        &mut self,
        a: u64,
        d: &AckDelta,
        prior_delivered: u32,
        newly_lost: u32,
        una_advanced: bool,
    ) {
        let acked_sacked = self.tp.delivered.wrapping_sub(prior_delivered);
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked, newly_lost, una_advanced);
        } else if una_advanced && d.acked + d.sacked > 0 {
            self.update_cwnd_limited();
            self.tp.snd_nxt = self.snd_nxt;
            self.ca.cong_avoid(&mut self.tp, a, acked_sacked);
        }
    }
}

/// What `tcp_ack` learnt of an ACK before its steps: the flags its hooks and the alert see.
#[derive(Clone, Copy, Debug)]
pub(super) struct AckKind {
    /// ECN-Echo, on a connection that negotiated ECN.
    pub ece: bool,
    /// `snd_una` moved.
    pub una_advanced: bool,
    /// A duplicate ACK: no advance, nothing newly SACKed, data outstanding.
    pub dupack: bool,
}
