//! The `linux` sender's loss detection beyond RFC 6675 (`transport.tlp`, `transport.rack`),
//! on the rules of [`crate::tcp::linux::recovery`]:
//! - The one retransmission timer and what it stands for (`icsk_pending`: the RTO, a loss
//!   probe, RACK's reordering timeout), re-armed as `tcp_rearm_rto` does: from now for an
//!   RTO, from the head's last transmission when a probe or reordering timeout gives way.
//! - Tail Loss Probe (RFC 8985 §7; `tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
//!   tcp_output.c; `tcp_process_tlp_ack`, tcp_input.c): scheduled after new data goes out and
//!   on ACKs that acknowledge data, in Open (and CWR from 4.x), with SACK; at the probe
//!   timeout it sends one skb of new data past the window or resends the last segment,
//!   recording `tlp_high_seq`; an ACK beyond it (3.18, 4.19) or beyond a resent probe (6.18)
//!   means the probe repaired a loss, and the window is reduced once (CWR entered and left
//!   at once: `tcp_init_cwnd_reduction`, `tcp_end_cwnd_reduction`); a pure duplicate ACK at
//!   it means both arrived, and the episode ends without reduction.
//! - RACK (RFC 8985 §6; `tcp_rack_mark_lost`, `tcp_rack_reo_timeout`, tcp_recovery.c): the
//!   loss scan after each ACK that delivered data, the reordering timer for segments not
//!   yet past their deadline, and Recovery entered from that timer.
//!
//! The receiver marks the ACK of a duplicate segment (`flags::DSACK`, RFC 2883's D-SACK
//! without its block): 6.18 ends the episode on it (`FLAG_DSACK_TLP`); 3.18 and 4.19 skip
//! the reduction only when the ACK beyond `tlp_high_seq` carries it (`FLAG_DSACKING_ACK`),
//! so a probe whose original arrived too still reduces the window there, as in those
//! kernels. Deviations: a probe or RACK episode
//! ends when Recovery, CWR or Loss begins (6.x's `tcp_init_cwnd_reduction`; earlier lines
//! let `tcp_process_tlp_ack` pull a connection out of Recovery); `skb_still_in_host_queue` is
//! not checked; RACK's timeout sends new data after its retransmissions as an ACK would
//! (the kernel's `tcp_xmit_retransmit_queue` sends only those). No
//! Early Retransmit (3.18's `tcp_early_retrans` = 3 has it beside TLP).

use super::LinuxSender;
use crate::packet::Packet;
use crate::tcp::linux::ca::CaState;
use crate::tcp::linux::kernel::Kernel;
use crate::tcp::linux::recovery::TIMEOUT_MIN;
use crate::tcp::linux::scoreboard::RackAck;
use ecnlab_core::units::Nanos;

/// What the retransmission timer stands for when armed (`icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Pending {
    /// The RTO (`ICSK_TIME_RETRANS`), also the SYN's.
    #[default]
    Rto,
    /// The Tail Loss Probe (`ICSK_TIME_LOSS_PROBE`).
    LossProbe,
    /// RACK's reordering timeout (`ICSK_TIME_REO_TIMEOUT`).
    ReoTimeout,
}

/// A probe out and not yet judged (`tp->tlp_high_seq`, 6.x's `tlp_retrans`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TlpEpisode {
    /// `snd_nxt` when the probe went.
    pub high_seq: u64,
    /// The probe resent the last segment (6.18 judges only those).
    pub retrans: bool,
}

impl LinuxSender {
    /// Arms the timer as an RTO at `at`.
    pub(super) fn arm_rto(&mut self, at: Nanos) {
        self.deadline = Some(at);
        self.pending = Pending::Rto;
    }

    /// `tcp_rearm_rto`: none with nothing out; an RTO from now, or, where a probe or RACK's
    /// timeout held the timer, an RTO from the head's last transmission ("offset the time
    /// elapsed after installing regular RTO").
    pub(super) fn rearm_rto(&mut self, now: Nanos) {
        let Some(head) = self.sb.segs().front() else {
            self.deadline = None;
            return;
        };
        let at = match self.pending {
            Pending::Rto => now + self.rto,
            Pending::LossProbe | Pending::ReoTimeout => match head.tx + self.rto {
                at if at > now => at,
                // 3.18: "delta may not be positive": a whole RTO; later lines: at least 1 us.
                _ if self.p.kernel == Kernel::V3_18 => now + self.rto,
                _ => now + 1000,
            },
        };
        self.arm_rto(at);
    }

    /// `tcp_schedule_loss_probe` (`advancing`: the RTO is being re-armed from now by this
    /// ACK, 4.x's `advancing_rto`): arms the probe and returns true, or leaves the timer.
    pub(super) fn schedule_loss_probe(&mut self, now: Nanos, advancing: bool) -> bool {
        let packets_out = self.sb.packets_out();
        if !self.p.tlp || packets_out == 0 {
            return false;
        }
        let k = self.p.kernel;
        let state_ok = match k {
            Kernel::V3_18 => self.tp.ca_state == CaState::Open,
            Kernel::V4_19 | Kernel::V6_18 => matches!(self.tp.ca_state, CaState::Open | CaState::Cwr),
        };
        if !state_ok {
            return false;
        }
        let srtt8 = self.rtt.as_ref().map(|r| r.srtt_us);
        if k == Kernel::V3_18 {
            // "TLP is only scheduled when next timer event is RTO", for connections "either
            // limited by cwnd or application".
            if self.deadline.is_none() || self.pending != Pending::Rto {
                return false;
            }
            if self.tp.snd_cwnd > self.pipe() && self.snd_nxt < self.app.added() {
                return false;
            }
        }
        let Some(mut pto) = k.probe_timeout(srtt8, packets_out, self.p.rto_min) else { return false };
        // "If the RTO formula yields an earlier time, then use that time."
        let rto_left = match k {
            Kernel::V3_18 => self.deadline.map_or(0, |d| d as i64 - now as i64),
            _ if advancing => self.rto as i64,
            _ => self.sb.segs().front().map_or(0, |h| (h.tx + self.rto) as i64 - now as i64),
        };
        if rto_left > 0 {
            pto = pto.min(rto_left as Nanos);
        }
        self.deadline = Some(now + pto);
        self.pending = Pending::LossProbe;
        true
    }

    /// The probe timeout passed (`tcp_send_loss_probe`): one skb of new data past the
    /// window, else the last segment again, at most one probe out; then the RTO.
    pub(super) fn send_loss_probe(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let k = self.p.kernel;
        // 6.x: "At most one outstanding TLP", whatever the probe would be.
        if k == Kernel::V6_18 && self.tlp.is_some() {
            return self.rearm_rto(now);
        }
        let app_limit = self.app.added();
        if self.snd_nxt < app_limit {
            let before = self.sb.packets_out();
            self.write_xmit(now, app_limit, true, out);
            let sent = self.sb.packets_out() > before;
            if sent {
                self.stats.tlp_probes += 1;
                if k == Kernel::V6_18 {
                    self.tlp = Some(TlpEpisode { high_seq: self.snd_nxt, retrans: false });
                }
            }
            // 3.18 restarts the RTO from now in any case; later lines when a probe went.
            if sent || k == Kernel::V3_18 {
                self.pending = Pending::Rto;
            }
            self.rearm_rto(now);
            return self.sync_stats();
        }
        if self.tlp.is_some() || self.sb.packets_out() == 0 {
            if k == Kernel::V3_18 {
                self.pending = Pending::Rto;
            }
            return self.rearm_rto(now);
        }
        // The last segment again (`tcp_fragment` splits a TSO skb to its last MSS).
        let last = self.sb.packets_out() as usize - 1;
        self.resend(now, last, out); // __tcp_retransmit_skb: not counted for undo
        self.stats.tlp_probes += 1;
        self.tlp = Some(TlpEpisode { high_seq: self.snd_nxt, retrans: true });
        self.pending = Pending::Rto;
        self.rearm_rto(now);
        self.sync_stats();
    }

    /// `tcp_process_tlp_ack` for an ACK of `ack` (`pure_dup`: it neither moved `snd_una`
    /// nor SACKed anything; `dsack`: it reports a duplicate segment).
    pub(super) fn process_tlp_ack(&mut self, ack: u64, pure_dup: bool, dsack: bool) {
        let Some(ep) = self.tlp else { return };
        match self.p.kernel {
            Kernel::V3_18 | Kernel::V4_19 => {
                if ack == ep.high_seq && pure_dup {
                    self.tlp = None;
                } else if ack > ep.high_seq {
                    // "Don't reduce cwnd if DSACK arrives for TLP retrans."
                    self.tlp = None;
                    if !dsack {
                        self.tlp_reduce();
                    }
                }
            }
            Kernel::V6_18 => {
                if ack < ep.high_seq {
                } else if !ep.retrans {
                    // "TLP of new data has been acknowledged".
                    self.tlp = None;
                } else if dsack {
                    // FLAG_DSACK_TLP: "original and TLP probe arrived; no loss".
                    self.tlp = None;
                } else if ack > ep.high_seq {
                    self.tlp_reduce();
                } else if pure_dup {
                    // "original and TLP probe arrived; no loss".
                    self.tlp = None;
                }
            }
        }
    }

    /// The probe repaired a loss: one reduction, entered and completed at once (CWR), then
    /// `tcp_try_keep_open`.
    fn tlp_reduce(&mut self) {
        self.tlp = None;
        self.stats.tlp_recoveries += 1;
        self.init_cwnd_reduction();
        self.set_state(CaState::Cwr);
        self.end_cwnd_reduction(true);
        // Nothing is owed to a reduction that is already over.
        self.force_one = false;
        let disorder = self.sb.sacked_out > 0 || self.sb.lost_out > 0 || self.sb.retrans_out > 0;
        self.set_state(if disorder { CaState::Disorder } else { CaState::Open });
    }

    /// The RACK state an ACK updates, when RACK runs (`RackAck` for `AckDelta::rack`).
    pub(super) fn rack_ack(&self, now: Nanos, tsecr: Nanos) -> Option<RackAck> {
        let rack = self.rack?;
        let min_rtt = self.min_rtt();
        Some(RackAck { rack, now, min_rtt, tsecr, fack: self.sb.highest_sack_end() })
    }

    fn min_rtt(&self) -> Option<Nanos> {
        (self.tp.min_rtt_us != u32::MAX).then(|| self.tp.min_rtt_us as Nanos * 1000)
    }

    /// RACK's scan with the window of the moment: (segments newly lost, longest wait).
    fn rack_detect(&mut self, now: Nanos) -> (u32, Nanos) {
        let Some(rack) = self.rack else { return (0, 0) };
        let srtt = self.rtt.as_ref().map_or(0, |r| r.srtt() * 1000);
        let recovering = matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss);
        let reo_wnd = rack.reo_wnd(self.min_rtt(), srtt, recovering, self.sb.sacked_out >= self.p.dupthresh);
        self.sb.rack_detect_loss(&rack, now, reo_wnd)
    }

    /// `tcp_rack_mark_lost` after an ACK: the scan if RACK advanced, and the reordering
    /// timer (capped at the RTO) for what is not yet late enough. Returns the segments
    /// newly lost.
    pub(super) fn rack_mark_lost(&mut self, now: Nanos) -> u32 {
        match self.rack.as_mut() {
            Some(r) if r.advanced => r.advanced = false,
            _ => return 0,
        }
        let (lost, wait) = self.rack_detect(now);
        if wait > 0 {
            self.deadline = Some(now + (wait + TIMEOUT_MIN).min(self.rto));
            self.pending = Pending::ReoTimeout;
        }
        lost
    }

    /// RACK's reordering timeout (`tcp_rack_reo_timeout`): what is now late is lost; with
    /// the pipe changed, Recovery (entered here if not yet, with one PRR step) retransmits.
    pub(super) fn rack_reo_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let prior_pipe = self.pipe();
        self.rack_detect(now);
        if self.pipe() != prior_pipe {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                self.cwnd_reduction(1, 0, false);
            }
            self.transmit(now, false, out);
        }
        if self.pending != Pending::Rto {
            self.rearm_rto(now);
        }
        self.sync_stats();
    }
}
