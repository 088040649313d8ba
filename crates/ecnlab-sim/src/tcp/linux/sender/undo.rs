//! Undoing a reduction that proves spurious, and F-RTO (net/ipv4/tcp_input.c): the state
//! `tcp_init_undo` records when Recovery or Loss begins (`undo_marker`, `undo_retrans`,
//! `prior_ssthresh`), the two proofs (`tcp_may_undo`: every retransmission reported a
//! duplicate by a D-SACK, RFC 2883 §5 / RFC 3708; or `tcp_packet_delayed`: the ACK echoes a
//! timestamp older than the first retransmission, the Eifel test of RFC 3522), the undo
//! itself (`tcp_undo_cwnd_reduction`: the window from the algorithm's `undo_cwnd`, ssthresh
//! back to `prior_ssthresh`) where `tcp_fastretrans_alert` tries it (`tcp_try_undo_recovery`,
//! `_partial`, `_dsack`, `_loss`), and `tcp_process_loss`: after an RTO, RFC 5682's
//! SACK-enhanced F-RTO (§3.1), which calls a timeout spurious when data never retransmitted
//! is acknowledged or SACKed, and sends new data instead of retransmissions on the first
//! ACK that advances (step 2.b).
//!
//! Kernel lines: all three have these rules (F-RTO as rewritten in 3.10, `tcp_frto` = 2).
//! 3.18's `tcp_process_loss` tries the F-RTO undo first and the plain one last; 4.19 and
//! 6.18 try the plain one first on an ACK that advances `snd_una`.
//!
//! Deviations: the TS clock is the simulator's time in whole milliseconds (the kernels'
//! `tcp_time_stamp`; no random offset, so a zero echo is not "no timestamp"); a D-SACK
//! counts against `undo_retrans` whenever an undo is possible (the receiver flags the ACK
//! of a duplicate segment, `flags::DSACK`, without its block, so the kernel's check that the
//! block lies between `undo_marker` and `snd_una` is not made); Reno (no SACK) keeps the
//! state it has at `high_seq` as SACK does (no "hold until above high_seq").

use super::{Episode, LinuxSender};
use crate::tcp::linux::ca::{CaState, CongestionOps};
use crate::tcp::linux::kernel::Kernel;
use crate::tcp::linux::scoreboard::AckDelta;
use ecnlab_core::units::Nanos;

/// What an episode may undo (`tp->undo_marker` set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Undo {
    /// `undo_marker`: `snd_una` when the episode began.
    pub marker: u64,
    /// `undo_retrans`: the episode's retransmissions not yet reported duplicate; None when
    /// none went (-1 in the kernel, which is not "all reported").
    pub retrans: Option<u32>,
    /// `prior_ssthresh`: 0 leaves the window as it is (a reduction that ECN began).
    pub prior_ssthresh: u32,
}

/// The TS clock: milliseconds (`tcp_time_stamp`).
fn ts(t: Nanos) -> u64 {
    t / 1_000_000
}

impl LinuxSender {
    /// `tcp_current_ssthresh`: the ssthresh to return to.
    fn current_ssthresh(&self) -> u32 {
        let (cwnd, ssthresh) = (self.tp.snd_cwnd, self.tp.snd_ssthresh);
        if self.in_cwnd_reduction() {
            ssthresh
        } else {
            ssthresh.max((cwnd >> 1) + (cwnd >> 2))
        }
    }

    /// `tcp_init_undo` with the episode's `prior_ssthresh` (0: none, `tcp_enter_recovery`
    /// on an ECE or from CWR).
    pub(super) fn init_undo(&mut self, restore: bool) {
        let prior_ssthresh = if restore { self.current_ssthresh() } else { 0 };
        let retrans = (self.sb.retrans_out > 0).then_some(self.sb.retrans_out);
        self.undo = Some(Undo { marker: self.tp.snd_una, retrans, prior_ssthresh });
    }

    /// `tcp_retransmit_skb`'s bookkeeping: the first retransmission's time, one more to undo.
    pub(super) fn undo_count_retransmission(&mut self, now: Nanos) {
        self.retrans_stamp.get_or_insert(now);
        if let Some(u) = self.undo.as_mut() {
            u.retrans = Some(u.retrans.unwrap_or(0) + 1);
        }
    }

    /// `tcp_check_dsack`: a D-SACK reports one retransmission that was not needed.
    pub(super) fn undo_dsack_seen(&mut self) {
        if let Some(Undo { retrans: Some(n), .. }) = self.undo.as_mut() {
            *n = n.saturating_sub(1);
        }
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp from before the first retransmission,
    /// so an original, not a retransmission, made it.
    fn packet_delayed(&self) -> bool {
        self.retrans_stamp.is_some_and(|r| ts(self.ack_tsecr) < ts(r))
    }

    /// `tcp_may_undo`.
    fn may_undo(&self) -> bool {
        self.undo.is_some_and(|u| u.retrans == Some(0) || self.packet_delayed())
    }

    /// `tcp_undo_cwnd_reduction`: the window the algorithm restores and the old ssthresh;
    /// with `unmark_loss`, nothing is lost any more.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_all_lost();
        }
        if let Some(u) = self.undo.take() {
            if u.prior_ssthresh != 0 {
                self.tp.snd_cwnd = self.ca.undo_cwnd(&self.tp);
                if u.prior_ssthresh > self.tp.snd_ssthresh {
                    self.tp.snd_ssthresh = u.prior_ssthresh;
                    self.queue_cwr = false; // tcp_ecn_withdraw_cwr
                }
            }
            self.stats.undos += 1;
        }
        if let Some(r) = self.rack.as_mut() {
            r.advanced = true; // "Force RACK to re-exam losses"
        }
    }

    /// `tcp_try_keep_open`: out of the episode, Disorder while anything is SACKed, lost or
    /// retransmitted.
    pub(super) fn try_keep_open(&mut self) {
        self.episode = Episode::None;
        let disorder = self.sb.sacked_out + self.sb.lost_out > 0 || self.sb.any_retrans_done();
        self.set_state(if disorder { CaState::Disorder } else { CaState::Open });
    }

    /// `tcp_try_undo_recovery`, as Recovery or Loss reaches `high_seq`: undo if it may, and
    /// the episode ends (Open).
    pub(super) fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        }
        self.episode = Episode::None;
        self.set_state(CaState::Open);
    }

    /// `tcp_try_undo_partial` on a partial ACK in Recovery: the hole was filled by a delayed
    /// original. True: nothing more is marked lost or retransmitted on this ACK.
    pub(super) fn try_undo_partial(&mut self) -> bool {
        if self.undo.is_none() || !self.packet_delayed() {
            return false;
        }
        if self.sb.retrans_out > 0 {
            return true;
        }
        if !self.sb.any_retrans_done() {
            self.retrans_stamp = None;
        }
        self.undo_cwnd_reduction(true);
        self.try_keep_open();
        true
    }

    /// `tcp_try_undo_dsack`: every retransmission of the episode was a duplicate.
    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.undo.is_some_and(|u| u.retrans == Some(0)) {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_loss` (`frto_undo`: F-RTO proved the timeout spurious).
    fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if !(frto_undo || self.may_undo()) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        self.retransmits = 0;
        if frto_undo || self.p.sack {
            self.episode = Episode::None;
            self.set_state(CaState::Open);
        }
        true
    }

    /// `tcp_process_loss`, in Loss after an RTO. Returns true when F-RTO's step 2.b asks
    /// for new data instead of retransmissions on this ACK (`REXMIT_NEW`).
    pub(super) fn process_loss(&mut self, d: &AckDelta, una_advanced: bool, dupack: bool) -> bool {
        let Episode::Loss { high_seq } = self.episode else { return false };
        let una = self.tp.snd_una;
        let recovered = una >= high_seq;
        let v318 = self.p.kernel == Kernel::V3_18;
        let orig_acked = d.orig_end_min.is_some_and(|e| e <= high_seq);
        if !v318 && una_advanced && self.try_undo_loss(false) {
            return false;
        }
        if self.frto {
            // Step 3.b: a timeout is spurious if never-retransmitted data are (s)acked.
            if (orig_acked || v318) && self.try_undo_loss(orig_acked) {
                return false;
            }
            if self.snd_nxt > high_seq {
                if d.sacked > 0 || dupack {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if una_advanced && !recovered {
                // Step 2.b: send new data (deferred until this ACK has moved cwnd);
                // otherwise the conventional recovery.
                self.episode = Episode::Loss { high_seq: self.snd_nxt };
                if self.snd_nxt < self.app.added() {
                    return true;
                }
                self.frto = false;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a.
            self.try_undo_recovery();
            return false;
        }
        if v318 {
            self.try_undo_loss(false);
        }
        false
    }
}
