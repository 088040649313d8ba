//! The `linux` sender's congestion state machine: `tcp_fastretrans_alert` (net/ipv4/
//! tcp_input.c) moving `ca_state` Open / Disorder / CWR / Recovery / Loss, the reductions it
//! starts and ends (`tcp_init_cwnd_reduction`, `tcp_end_cwnd_reduction`), PRR
//! (`tcp_cwnd_reduction`, RFC 6937) and the RTO's `tcp_enter_loss`. Each state's data lives
//! in [`Episode`]; `tp.ca_state` names the state for the congestion controls' hooks, set
//! through [`LinuxSender::set_state`] where the kernel calls `tcp_set_ca_state`.

use super::ack::AckKind;
use super::{Episode, LinuxSender, Prr};
use crate::tcp::linux::ca::{CaEvent, CaState, CongestionOps, INFINITE_SSTHRESH};
use crate::tcp::linux::scoreboard::AckDelta;
use ecnlab_core::units::Nanos;

impl LinuxSender {
    /// `tcp_in_cwnd_reduction`: CWR or Recovery.
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.episode, Episode::Cwr { .. } | Episode::Recovery { .. })
    }

    /// `tcp_set_ca_state`: the hook sees the change before `ca_state` does.
    pub(super) fn set_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.ca.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// `tcp_init_cwnd_reduction`: a CWR or Recovery episode begins; its `high_seq` and PRR
    /// counts for the caller's episode.
    pub(super) fn init_cwnd_reduction(&mut self) -> (u64, Prr) {
        // A reduction ends a probe's episode (6.x resets tlp_high_seq here).
        self.tlp = None;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.tp.snd_cwnd_cnt = 0; // tcp_init_cwnd_reduction
        self.tp.snd_ssthresh = self.ca.ssthresh(&self.tp);
        self.queue_cwr = self.p.ecn;
        self.force_one = true;
        if !self.p.prr {
            // Without PRR the window drops to ssthresh at once.
            self.tp.snd_cwnd = self.tp.snd_ssthresh.max(1);
        }
        (self.snd_nxt, Prr::default())
    }

    /// `tcp_end_cwnd_reduction`: cwnd to ssthresh if `reset` ("in CWR or Recovery (unless
    /// it's undone)": the caller's CWR, or an undo still possible).
    pub(super) fn end_cwnd_reduction(&mut self, reset: bool) {
        if reset && self.tp.snd_ssthresh < INFINITE_SSTHRESH {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        self.ca.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// `tcp_fastretrans_alert`, with the undo attempts of `sender/undo.rs` where the
    /// kernel makes them; returns the segments newly marked lost.
    pub(super) fn fastretrans_alert(&mut self, now: Nanos, d: &AckDelta, ack: AckKind) -> u32 {
        let AckKind { ece, una_advanced, dupack } = ack;
        let una = self.tp.snd_una;
        if self.tp.ca_state == CaState::Open {
            self.retrans_stamp = None;
        }
        // D. Exit conditions: the episode ends once high_seq is acknowledged.
        match self.episode {
            Episode::Cwr { high_seq, .. } if una > high_seq => {
                self.end_cwnd_reduction(true);
                self.episode = Episode::None;
                self.set_state(CaState::Open);
            }
            Episode::Recovery { high_seq, .. } if una >= high_seq => {
                self.reno_sacked = 0;
                self.try_undo_recovery();
                self.end_cwnd_reduction(self.undo.is_some());
            }
            _ => {}
        }
        // E. The state's own processing.
        match self.episode {
            Episode::Recovery { .. } => {
                if una_advanced && self.try_undo_partial() {
                    return 0;
                }
                if self.try_undo_dsack() {
                    self.try_keep_open();
                    return 0;
                }
                return self.identify_packet_loss(now, una_advanced);
            }
            Episode::Loss { .. } => {
                self.rexmit_new = self.process_loss(d, una_advanced, dupack);
                let lost = self.identify_packet_loss(now, una_advanced);
                if self.episode != Episode::None {
                    return lost;
                }
                // Undone: on as in Open.
                return lost + self.try_to_recover(ece, dupack);
            }
            Episode::None | Episode::Cwr { .. } => {}
        }
        if matches!(self.tp.ca_state, CaState::Open | CaState::Disorder) {
            self.try_undo_dsack();
        }
        let lost = self.identify_packet_loss(now, una_advanced);
        lost + self.try_to_recover(ece, dupack)
    }

    /// `tcp_identify_packet_loss`: RACK, RFC 6675 IsLost over the scoreboard, or Reno
    /// emulation; the segments newly marked lost.
    fn identify_packet_loss(&mut self, now: Nanos, una_advanced: bool) -> u32 {
        if self.rack.is_some() {
            self.rack_mark_lost(now)
        } else if self.p.sack {
            if self.sb.sacked_out > 0 {
                self.sb.mark_lost(self.p.dupthresh)
            } else {
                0
            }
        } else {
            let rec = matches!(self.episode, Episode::Recovery { .. });
            if (!rec && self.reno_sacked >= self.p.dupthresh) || (rec && una_advanced) {
                self.sb.mark_head_lost()
            } else {
                0
            }
        }
    }

    /// `tcp_time_to_recover`, then Recovery or `tcp_try_to_open`; the segments newly marked
    /// lost on entering Recovery.
    fn try_to_recover(&mut self, ece: bool, dupack: bool) -> u32 {
        let sacked = if self.p.sack { self.sb.sacked_out } else { self.reno_sacked };
        // With RACK only a proven loss enters Recovery ("Not-A-Trick#2" is for the rest).
        if self.sb.lost_out > 0 || (self.rack.is_none() && sacked >= self.p.dupthresh) {
            self.enter_recovery(ece);
            if self.sb.lost_out == 0 {
                return self.sb.mark_head_lost();
            }
            return 0;
        }
        // tcp_try_to_open.
        let in_cwr = matches!(self.episode, Episode::Cwr { .. });
        if ece && !in_cwr {
            // tcp_enter_cwr: "prior_ssthresh = 0", and no undo of what ECN reduces.
            self.undo = None;
            let (high_seq, prr) = self.init_cwnd_reduction();
            self.episode = Episode::Cwr { high_seq, prr };
            self.stats.ecn_reductions += 1;
            self.set_state(CaState::Cwr);
        } else if !in_cwr {
            let disorder = sacked > 0 || self.sb.retrans_out > 0 || (dupack && !self.p.sack);
            self.set_state(if disorder { CaState::Disorder } else { CaState::Open });
        }
        0
    }

    /// `tcp_enter_recovery`: a reduction already under way (CWR) continues with its
    /// high_seq (the recovery point), prior_cwnd and PRR counts; what it may undo
    /// (`tcp_init_undo`) restores the window only if it starts here, not on an ECE.
    pub(super) fn enter_recovery(&mut self, ece: bool) {
        self.init_undo(!self.in_cwnd_reduction() && !ece);
        let (high_seq, prr) = match self.episode {
            Episode::Cwr { high_seq, prr } => (high_seq, prr),
            _ => self.init_cwnd_reduction(),
        };
        self.episode = Episode::Recovery { high_seq, prr, high_rxt: self.tp.snd_una, rescue_rxt: None };
        self.stats.fast_retransmits += 1;
        self.set_state(CaState::Recovery);
    }

    /// `tcp_cwnd_reduction` (RFC 6937 PRR; Linux's bound selection).
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if !self.p.prr || newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let pipe = self.pipe() as i64;
        let Some(prr) = self.episode.prr_mut() else { return };
        prr.delivered += newly_acked_sacked;
        let Prr { delivered, out } = *prr;
        let ssthresh = self.tp.snd_ssthresh as i64;
        let delta = ssthresh - pipe;
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let d = ssthresh as u64 * delivered as u64 + self.tp.prior_cwnd as u64 - 1;
            (d / self.tp.prior_cwnd as u64) as i64 - out as i64
        } else {
            // Bounded part: PRR-CRB, or PRR-SSRB (+1) on an ACK that advances snd_una
            // without new loss.
            let mut n = (delivered as i64 - out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // Force a fast retransmit upon entering the reduction.
        sndcnt = sndcnt.max(if out > 0 { 0 } else { 1 });
        self.tp.snd_cwnd = (pipe + sndcnt).max(1) as u32;
    }

    /// `tcp_enter_loss`, with F-RTO armed for a new episode or a repeated timeout (RFC 5682
    /// §3.1 step 1, §3.2).
    pub(super) fn enter_loss(&mut self) {
        let una = self.tp.snd_una;
        let fresh = match self.episode {
            Episode::None => true,
            Episode::Cwr { high_seq, .. } | Episode::Recovery { high_seq, .. } => high_seq <= una,
            Episode::Loss { high_seq } => high_seq <= una || self.retransmits == 0,
        };
        let new_recovery = matches!(self.episode, Episode::None | Episode::Cwr { .. });
        self.frto = new_recovery || self.retransmits > 0;
        if fresh {
            self.init_undo(true);
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.ca.ssthresh(&self.tp);
            self.ca.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        self.reno_sacked = 0;
        self.tlp = None;
        self.sb.mark_all_lost();
        self.tp.snd_cwnd = self.pipe() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.episode = Episode::Loss { high_seq: self.snd_nxt };
        self.set_state(CaState::Loss);
        self.queue_cwr = self.p.ecn;
        self.force_one = false;
    }
}
