//! The `linux` profile's TCP sender: what net/ipv4/tcp_input.c (`tcp_ack`,
//! `tcp_fastretrans_alert`, `tcp_cong_control`), tcp_output.c (`tcp_write_xmit`,
//! `tcp_xmit_retransmit_queue`) and tcp_timer.c (`tcp_retransmit_timer`) do, as a sans-IO
//! state machine that takes `now`.
//!
//! Read first: RFC 6675 (SACK loss recovery: the scoreboard in [`super::scoreboard`], pipe,
//! NextSeg), RFC 6937 (PRR), RFC 6298 and Linux's `tcp_rtt_estimator`, RFC 3168 §6.1.2 (CWR),
//! and [`super::ca`] for where the congestion-control hooks are called.
//!
//! What it does, in the kernel's words:
//! - Windows in whole segments (`snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt` in [`CaSock`]);
//!   sequence numbers in bytes from 0.
//! - `ca_state` Open / Disorder / CWR / Recovery / Loss as `tcp_fastretrans_alert` moves it.
//!   Recovery starts when a segment is deemed lost (RFC 6675 IsLost: `dupack_thresh`
//!   SACKed segments above it) or `dupack_thresh` segments are SACKed
//!   (`tcp_time_to_recover`); it ends when `high_seq` (RFC 6675 RecoveryPoint) is
//!   cumulatively acknowledged, with `snd_cwnd = snd_ssthresh` (`tcp_end_cwnd_reduction`).
//!   Entered from CWR, it continues CWR's reduction (`tcp_enter_recovery`): CWR's
//!   `high_seq`, `prior_cwnd`, PRR counts and ssthresh (DCTCP's `dctcp_state` still halves
//!   ssthresh on entering Recovery).
//! - ECN-Echo in Open or Disorder enters CWR (`tcp_enter_cwr`): ssthresh from the
//!   algorithm, PRR down to it, CWR set on the next new data segment; CWR ends once data
//!   above `high_seq` is acknowledged.
//! - PRR (RFC 6937, `tcp_cwnd_reduction`) sets `snd_cwnd = pipe + sndcnt` on every ACK of a
//!   reduction, CWR and Recovery alike, with Linux's choice between the conservative and
//!   the slow-start reduction bound (SSRB only on an ACK that advances `snd_una` without new
//!   loss, as RFC 9937).
//! - Sending, as RFC 6675 NextSeg orders it: (1) segments deemed lost, (2) new data, then,
//!   in Recovery only, (3) the first unSACKed segment below SACKed data and (4) one rescue
//!   retransmission per recovery, each while pipe < cwnd (`tcp_packets_in_flight`).
//!   Limited Transmit (RFC 3042) follows from pipe leaving SACKed segments out, as in Linux.
//! - Without SACK (`transport.sack = false`) duplicate ACKs count as SACKed segments
//!   (`tcp_add_reno_sack`), the head is marked lost at the threshold and on each partial ACK
//!   (`tcp_newreno_mark_lost`).
//! - RTO: `tcp_rtt_estimator` in microseconds (srtt << 3, mdev, mdev_max, rttvar floored at
//!   `rto_min` per round trip), RTO = srtt + rttvar, doubled per timeout up to `rto_max`,
//!   recomputed (backoff ended) by the next RTT sample. RTT samples (`tcp_ack_update_rtt`,
//!   Karn's rule): from the oldest segment the cumulative ACK removes that was neither
//!   retransmitted nor SACKed (`first_ackt` of `tcp_clean_rtx_queue`; none if it removes
//!   a retransmitted one), else from the oldest never-retransmitted segment newly SACKed
//!   (`first_sackt` of `tcp_sacktag_one`, also on an ACK that does not move `snd_una`),
//!   else, on an ACK that moves `snd_una`, from the timestamp echo (`tx_ns` of the ACK).
//!   The timer is re-armed to now + RTO on every ACK that acknowledges data and on a
//!   retransmission of the head.
//! - An RTO enters Loss (`tcp_enter_loss`): every segment not SACKed is lost, `snd_cwnd =
//!   pipe + 1`, slow start; Loss ends when `high_seq` is acknowledged.
//! - TCP Small Queues (`transport.small_queues`, [`small_queues`]): before each skb,
//!   `tcp_small_queue_check` of the kernel line (`transport.kernel`); a held socket waits for
//!   its oldest skb's TX completion (`tcp_tsq_handler`); the RTO's head retransmission goes
//!   past it (`tcp_retransmit_timer`).
//! - Slow-start restart after idle (`tcp_slow_start_after_idle_check`, `tcp_cwnd_restart`)
//!   and `tcp_is_cwnd_limited` / `tcp_cwnd_validate` feeding the algorithm.
//! - `delivered` / `delivered_ce` count segments newly acknowledged or SACKed, the latter on
//!   ACKs with ECN-Echo (`tcp_count_delivered`). `in_ack_event` is called after the
//!   scoreboard is updated (the order of Linux 6.14+, so DCTCP sees this ACK's deliveries).
//!
//! Deliberate deviations from Linux:
//! - The handshake is optional (`transport.handshake`, `sender/open.rs`; without it
//!   `rto_init` stands for the RTO a handshake leaves behind), and the receive window is
//!   unlimited (`max_cwnd` stands for it).
//! - Loss detection as the kernel line has it (`transport.tlp`, `transport.rack`; in
//!   `sender/loss_detection.rs`): the Tail Loss Probe, RACK from 4.19; with RACK off, RFC
//!   6675's DupThresh rule (Linux with `tcp_recovery = 0`). F-RTO and the undo of a
//!   spurious reduction (D-SACK, timestamps) in `sender/undo.rs`, with its deviations.
//! - NextSeg rules 3 and 4 (RFC 6675), which Linux does not do (it has TLP instead), only
//!   with `transport.tlp` off (the ns-3 comparisons: ns-3 3.44 has no TLP).
//! - TSO as `host.tso` sets it (`sender/write_xmit.rs`); no pacing (`sk_pacing_rate` only
//!   sizes skbs and TCP Small Queues), no Nagle. No RFC 2861 cwnd decay when
//!   application-limited.
//! - Time is the simulator's nanoseconds, not jiffies: RTOs are not rounded up to the
//!   kernel's HZ ticks, and timestamp RTT samples have microsecond resolution.

use super::ca::{CaEvent, CaSock, CaState, CongestionOps, INFINITE_SSTHRESH};
use super::kernel::Kernel;
use super::rtt::RttEstimator;
use super::sack_option::SackBlocks;
use super::scoreboard::Scoreboard;
use super::{congestion_ops, LinuxCa};
use crate::packet::{flags, Ecn, Kind, Packet};
use crate::tcp::config::TcpConfig;
use crate::tcp::sender::SenderStats;
use crate::transport::app::{AppWrites, Endpoints, Tagging};
use ecnlab_core::units::Nanos;

mod ack;
mod episode;
mod loss_detection;
mod open;
mod small_queues;
mod undo;
mod write_xmit;

use ack::AckKind;
use loss_detection::{Pending, TlpEpisode};
pub use open::Open;
use small_queues::SmallQueues;
use undo::Undo;

const NS_PER_US: u64 = 1000;

/// What `[transport]` sets for a `linux` sender, fixed at construction.
#[derive(Clone, Debug)]
struct SenderParams {
    mss: u32,
    /// `TCP_INIT_CWND` (the restart window after idle too).
    init_cwnd: u32,
    /// `tcp_reordering`: RFC 6675 DupThresh.
    dupthresh: u32,
    rto_max: Nanos,
    /// `tcp_rto_min_us`, and in ns (6.x's probe timeout with one segment out).
    rto_min_us: u64,
    rto_min: Nanos,
    /// Tail Loss Probe and RACK (`transport.tlp`, `transport.rack`; SACK connections only).
    tlp: bool,
    sack: bool,
    prr: bool,
    limited_transmit: bool,
    slow_start_restart: bool,
    /// ECN negotiated (`net.ipv4.tcp_ecn`): ECT on new data; `needs_ecn` adds retransmissions.
    ecn: bool,
    /// `transport.kernel`.
    kernel: Kernel,
    /// TSO (`host.tso`): the largest skb the NIC takes (`sk_gso_max_size`), None when off
    /// (every skb one segment).
    gso_max: Option<u64>,
    /// The SYN's timer (`TCP_TIMEOUT_INIT`) and retries (`tcp_syn_retries`).
    rto_syn: Nanos,
    syn_retries: u32,
}

/// PRR's counts over one reduction (RFC 6937 `prr_delivered`, `prr_out`; `tp.prior_cwnd` is
/// RecoverFS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Prr {
    delivered: u32,
    out: u32,
}

/// What the congestion state carries while it lasts: `tp.ca_state` names the state for the
/// congestion controls, this holds its data (`Open` and `Disorder` carry none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Episode {
    /// `Open` or `Disorder`: nothing being reduced or repaired.
    None,
    /// `CWR` after ECN-Echo: PRR towards ssthresh until data above `high_seq` is
    /// acknowledged.
    Cwr { high_seq: u64, prr: Prr },
    /// `Recovery` (RFC 6675 with PRR) until `high_seq` (RecoveryPoint) is acknowledged;
    /// `high_rxt` and `rescue_rxt` are RFC 6675's HighRxt and RescueRxt.
    Recovery { high_seq: u64, prr: Prr, high_rxt: u64, rescue_rxt: Option<u64> },
    /// `Loss` after an RTO, until `high_seq` is acknowledged.
    Loss { high_seq: u64 },
}

impl Episode {
    /// PRR's counts, in CWR and Recovery (`tcp_in_cwnd_reduction`).
    fn prr_mut(&mut self) -> Option<&mut Prr> {
        match self {
            Episode::Cwr { prr, .. } | Episode::Recovery { prr, .. } => Some(prr),
            Episode::None | Episode::Loss { .. } => None,
        }
    }
}

/// A `linux` TCP sender for one flow.
#[derive(Clone, Debug)]
pub struct LinuxSender {
    p: SenderParams,
    ends: Endpoints,
    tag: Tagging,
    app: AppWrites,
    // --- sequence state ---
    /// `snd_nxt`: the next new byte (never moves back; retransmissions come from the
    /// scoreboard).
    snd_nxt: u64,
    sb: Scoreboard,
    /// Reno emulation: duplicate ACKs counted as SACKed segments (`sacked_out` without SACK).
    reno_sacked: u32,
    // --- congestion state ---
    tp: CaSock,
    ca: LinuxCa,
    episode: Episode,
    /// The handshake (`transport.handshake`).
    open: Open,
    /// The probe out, if any (`tlp_high_seq`).
    tlp: Option<TlpEpisode>,
    /// RACK's state (`transport.rack`), None when off.
    rack: Option<super::recovery::Rack>,
    /// A reduction began and nothing has been sent since: one segment may go regardless of
    /// cwnd (PRR's "force fast retransmit" when `prr` is off). It outlives a reduction that
    /// ends before anything was sent, as the segment it allows is still owed.
    force_one: bool,
    /// `TCP_ECN_QUEUE_CWR`: set CWR on the next new data segment.
    queue_cwr: bool,
    // --- undo and F-RTO (sender/undo.rs) ---
    /// What the episode under way (or the last one) may undo; None: nothing.
    undo: Option<Undo>,
    /// `tp->retrans_stamp`: when the first retransmission since the connection was last
    /// Open went.
    retrans_stamp: Option<Nanos>,
    /// F-RTO armed for this Loss episode (`tp->frto`).
    frto: bool,
    /// F-RTO step 2.b on this ACK: new data before retransmissions (`REXMIT_NEW`).
    rexmit_new: bool,
    /// The timestamp echo of the ACK being processed (`rx_opt.rcv_tsecr`).
    ack_tsecr: Nanos,
    // --- cwnd validation (tcp_cwnd_validate) ---
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    /// TCP Small Queues (`transport.small_queues`), None when off.
    tsq: Option<SmallQueues>,
    // --- RTO ---
    rtt: Option<RttEstimator>,
    rto: Nanos,
    /// Consecutive timeouts without progress (`icsk_retransmits`).
    retransmits: u32,
    deadline: Option<Nanos>,
    /// What `deadline` stands for.
    pending: Pending,
    /// Time of the last data transmission; None before the first.
    lsndtime: Option<Nanos>,
    stats: SenderStats,
}

impl LinuxSender {
    pub fn new(cfg: &TcpConfig, flow: u32, src: u16, dst: u16, dscp: u8) -> Self {
        let mut ca = congestion_ops(cfg);
        let init_cwnd = cfg.init_cwnd.max(1);
        let mut tp = CaSock {
            snd_cwnd: init_cwnd,
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_cwnd_clamp: cfg.max_cwnd.max(init_cwnd),
            mss: cfg.mss.max(1),
            min_rtt_us: u32::MAX,
            ..Default::default()
        };
        ca.init(&mut tp);
        let p = SenderParams {
            mss: cfg.mss.max(1),
            init_cwnd,
            dupthresh: cfg.dupack_thresh.max(1),
            rto_max: cfg.rto_max.ns().max(1),
            rto_min_us: cfg.rto_min.ns() / NS_PER_US,
            rto_min: cfg.rto_min.ns(),
            tlp: cfg.tlp && cfg.sack,
            sack: cfg.sack,
            prr: cfg.prr,
            limited_transmit: cfg.limited_transmit,
            slow_start_restart: cfg.slow_start_restart,
            ecn: cfg.cc.uses_ecn() || ca.needs_ecn(),
            kernel: cfg.kernel,
            gso_max: None,
            rto_syn: cfg.rto_syn.ns().max(1),
            syn_retries: cfg.syn_retries,
        };
        let mut s = LinuxSender {
            p,
            ends: Endpoints { flow, src, dst },
            tag: Tagging::new(dscp),
            app: AppWrites::default(),
            snd_nxt: 0,
            sb: Scoreboard::default(),
            reno_sacked: 0,
            tp,
            ca,
            episode: Episode::None,
            open: if cfg.handshake { Open::Closed } else { Open::Established },
            tlp: None,
            rack: (cfg.rack && cfg.sack).then(super::recovery::Rack::default),
            force_one: false,
            queue_cwr: false,
            undo: None,
            retrans_stamp: None,
            frto: false,
            rexmit_new: false,
            ack_tsecr: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            tsq: cfg.small_queues.then(|| SmallQueues::new(cfg.kernel, cfg.limit_output_bytes.0)),
            rtt: None,
            rto: cfg.rto_init.ns().min(cfg.rto_max.ns()).max(1),
            retransmits: 0,
            deadline: None,
            pending: Pending::Rto,
            lsndtime: None,
            stats: SenderStats::default(),
        };
        s.sync_stats();
        s
    }

    /// Where the connection's opening stands.
    pub fn open_state(&self) -> Open {
        self.open
    }

    /// Segmentation offload at the host's NIC: skbs of up to `gso_max` bytes (None: TSO
    /// off, one MSS).
    pub fn with_tso(mut self, gso_max: Option<u64>) -> Self {
        self.p.gso_max = gso_max.filter(|&g| g > self.p.mss as u64 + 52);
        self
    }

    // --- the driving interface (as `TcpSender`) ---

    /// The application has `bytes` more to send (see `TcpSender::add_data`).
    pub fn add_data(&mut self, bytes: u64) {
        self.app.add(bytes);
    }
    pub fn set_dscp(&mut self, dscp: u8) {
        self.tag.set_dscp(dscp);
    }
    /// PIAS tagging, as `TcpSender::set_pias`.
    pub fn set_pias(&mut self, start_seq: u64, thresholds: &[u64]) {
        self.tag.set_pias(start_seq, thresholds);
    }
    /// The next deadline: the retransmission timer, or the TX completion that wakes a
    /// socket TCP Small Queues holds back, whichever is first.
    pub fn timer(&self) -> Option<Nanos> {
        match self.tsq.as_ref().and_then(SmallQueues::wake) {
            Some(w) => Some(self.deadline.map_or(w, |d| d.min(w))),
            None => self.deadline,
        }
    }
    /// The host's NIC took this sender's oldest segment not yet placed, to leave it at
    /// `done` (the end of its transmission), or refused it (None): TCP Small Queues' TX
    /// completion. A sender without them ignores it.
    pub fn tx_scheduled(&mut self, done: Option<Nanos>) {
        if let Some(q) = self.tsq.as_mut() {
            q.scheduled(done);
        }
    }
    /// Times TCP Small Queues held this sender back.
    pub fn small_queue_holds(&self) -> u64 {
        self.tsq.as_ref().map_or(0, |q| q.holds)
    }
    pub fn is_idle(&self) -> bool {
        self.tp.snd_una >= self.app.added()
    }
    pub fn acked_bytes(&self) -> u64 {
        self.tp.snd_una
    }
    pub fn added_bytes(&self) -> u64 {
        self.app.added()
    }
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// The congestion-control view of the socket (windows in segments, state).
    pub fn sock(&self) -> &CaSock {
        &self.tp
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    /// `tcp_packets_in_flight` (RFC 6675 pipe), segments.
    pub fn pipe(&self) -> u32 {
        self.sb.pipe() - self.reno_sacked.min(self.sb.pipe())
    }
    pub fn rto(&self) -> Nanos {
        self.rto
    }
    /// The RTT estimate (None before the first sample).
    pub fn rtt_estimator(&self) -> Option<&RttEstimator> {
        self.rtt.as_ref()
    }

    /// Sends what NextSeg and the window allow.
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.tp.now = now;
        if self.open != Open::Established {
            self.open_poll(now, out);
            return;
        }
        self.tsq_complete(now);
        self.transmit(now, false, out);
        self.sync_stats();
    }

    /// An ACK arrived; `sack` holds its SACK blocks (none without the option). The steps
    /// are `tcp_ack`'s (tcp_input.c), in its order; each is in `sender/ack.rs` or named after
    /// the kernel function it follows.
    pub fn on_ack(&mut self, now: Nanos, ack: &Packet, sack: Option<&SackBlocks>, out: &mut Vec<Packet>) {
        if ack.kind != Kind::Ack {
            return;
        }
        self.tp.now = now;
        if self.open != Open::Established || ack.has(flags::SYN) {
            self.on_synack(now, ack, out);
            return;
        }
        self.tsq_complete(now);
        self.stats.acks_received += 1;
        self.ack_tsecr = ack.tx_ns;
        let a = ack.seq.min(self.snd_nxt);
        if a < self.tp.snd_una {
            // Older than what we know (`before(ack, prior_snd_una)`): ignored.
            self.transmit(now, false, out);
            self.sync_stats();
            return;
        }
        let ece = self.p.ecn && ack.has(flags::ECE);
        if ece {
            self.stats.ece_acks += 1;
        }
        let prior_packets = self.sb.packets_out();
        let prior_delivered = self.tp.delivered;
        let prior_una = self.tp.snd_una;

        let d = self.sacktag_and_clean(now, ack, a, sack);
        if ack.has(flags::DSACK) {
            self.undo_dsack_seen();
        }
        let una_advanced = a > prior_una;
        let dupack = !una_advanced && d.sacked == 0 && prior_packets > 0;
        let kind = AckKind { ece, una_advanced, dupack };
        self.count_delivered(&d, kind);
        let ca_rtt = self.ack_update_rtt(now, ack.tx_ns, &d, a, una_advanced);
        // 4.x: tcp_process_tlp_ack, then tcp_set_xmit_timer (a probe if one may go, else the
        // RTO); 3.18 re-arms the RTO here and judges and schedules probes after the alert.
        let later_tlp = self.p.tlp && self.p.kernel != Kernel::V3_18;
        if later_tlp {
            self.process_tlp_ack(a, dupack, ack.has(flags::DSACK));
        }
        if una_advanced {
            self.retransmits = 0;
            if !(later_tlp && self.schedule_loss_probe(now, true)) {
                self.rearm_rto(now);
            }
        }
        self.ca_ack_hooks(prior_packets > 0, &d, ca_rtt, kind);

        // tcp_fastretrans_alert (an ACK is "dubious" unless in Open with a clean advance).
        let newly_lost = self.fastretrans_alert(now, &d, kind);
        let tlp_318 = self.p.tlp && self.p.kernel == Kernel::V3_18;
        if tlp_318 {
            self.process_tlp_ack(a, dupack, ack.has(flags::DSACK));
        }
        self.cong_control(a, &d, prior_delivered, newly_lost, una_advanced);
        if tlp_318 {
            self.schedule_loss_probe(now, false);
        }
        self.transmit(now, false, out);
        self.sync_stats();
    }

    /// A deadline passed (harmless if early): a TX completion that wakes a socket TCP Small
    /// Queues held back (`tcp_tsq_handler`), the retransmission timer (`tcp_retransmit_timer`).
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.tsq.as_mut().is_some_and(|q| q.complete(now)) {
            self.tp.now = now;
            self.transmit(now, false, out);
            self.sync_stats();
        }
        match self.deadline {
            Some(t) if now >= t => {}
            _ => return,
        }
        if let Open::SynSent { retries } = self.open {
            return self.syn_timeout(now, retries, out);
        }
        match self.pending {
            Pending::LossProbe => return self.send_loss_probe(now, out),
            Pending::ReoTimeout => return self.rack_reo_timeout(now, out),
            Pending::Rto => {}
        }
        self.deadline = None;
        if self.sb.packets_out() == 0 {
            return;
        }
        self.tp.now = now;
        self.stats.timeouts += 1;
        self.enter_loss();
        // Retransmit the head now (`tcp_retransmit_skb`, past TCP Small Queues), then back the
        // timer off (`inet_csk_rto_backoff`).
        self.transmit(now, true, out);
        self.retransmits += 1;
        self.rto = self.rto.saturating_mul(2).min(self.p.rto_max);
        self.arm_rto(now + self.rto);
        self.sync_stats();
    }

    // --- transmission ---

    /// `tcp_cwnd_validate` after a transmission round; `tcp_is_cwnd_limited` into `tp`.
    fn cwnd_validate(&mut self, limited_now: bool) {
        let packets_out = self.sb.packets_out();
        if self.tp.snd_una >= self.cwnd_usage_seq
            || limited_now
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = limited_now;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        self.update_cwnd_limited();
    }

    fn update_cwnd_limited(&mut self) {
        self.tp.is_cwnd_limited =
            self.is_cwnd_limited || (self.tp.in_slow_start() && self.tp.snd_cwnd < 2 * self.max_packets_out);
    }

    /// The window test of `tcp_cwnd_test` (pipe < cwnd), with the one segment a new
    /// reduction may always send; without Limited Transmit, SACKed segments count in the
    /// flight until recovery starts.
    fn may_send(&self) -> bool {
        let flight = if !self.p.limited_transmit && self.tp.ca_state == CaState::Disorder {
            self.sb.packets_out() - self.sb.lost_out + self.sb.retrans_out
        } else {
            self.pipe()
        };
        flight < self.tp.snd_cwnd.min(self.tp.snd_cwnd_clamp) || self.force_one
    }

    /// Sends as NextSeg orders it; `rto_head`: the first retransmission is the RTO's, which
    /// `tcp_retransmit_timer` sends past TCP Small Queues.
    fn transmit(&mut self, now: Nanos, rto_head: bool, out: &mut Vec<Packet>) {
        let (mut sent, mut limited, mut new_sent) = (false, false, false);
        let app_limit = self.app.added();
        // F-RTO step 2.b (tcp_xmit_recovery with REXMIT_NEW): new data, and no
        // retransmission if any went; else the conventional recovery.
        let mut new_only = false;
        if std::mem::take(&mut self.rexmit_new) {
            let before = self.snd_nxt;
            (sent, limited) = self.write_xmit(now, app_limit, false, out);
            new_sent = sent;
            new_only = self.snd_nxt > before;
            self.frto &= new_only;
        }
        // (1) Segments deemed lost (tcp_xmit_retransmit_queue).
        while !new_only && self.sb.lost_out > 0 {
            if !self.may_send() {
                limited = true;
                break;
            }
            let Some(i) = self.sb.next_lost() else { break };
            if (sent || !rto_head) && self.tsq_holds(self.sb.seg(i).len as u64, true) {
                break;
            }
            self.retransmit(now, i, out);
            sent = true;
        }
        // (2) New data (tcp_write_xmit), with the slow-start restart check first.
        if !limited && !new_only && self.snd_nxt < app_limit {
            if let Some(last) = self.lsndtime {
                if self.p.slow_start_restart && self.sb.packets_out() == 0 && now.saturating_sub(last) > self.rto {
                    self.cwnd_restart(now - last);
                }
            }
            let (s, l) = self.write_xmit(now, app_limit, false, out);
            (sent, limited, new_sent) = (sent || s, l, s);
        }
        // (3) and (4): RFC 6675 NextSeg's last rules, in Recovery with SACK only; Linux has
        // none (TLP repairs a lost tail), so only without TLP.
        if !limited && self.p.sack && !self.p.tlp && self.snd_nxt >= app_limit {
            while let Episode::Recovery { high_seq, high_rxt, rescue_rxt, .. } = self.episode {
                if !self.may_send() {
                    break;
                }
                if let Some(i) = self.sb.next_unsacked_below_sack(high_rxt) {
                    if self.tsq_holds(self.sb.seg(i).len as u64, true) {
                        break;
                    }
                    self.retransmit(now, i, out);
                    sent = true;
                } else {
                    if rescue_rxt.is_none_or(|r| self.tp.snd_una > r) {
                        if let Some(i) =
                            self.sb.highest_unsacked().filter(|&i| !self.tsq_holds(self.sb.seg(i).len as u64, true))
                        {
                            // The rescue retransmission: HighRxt is not updated.
                            self.retransmit(now, i, out);
                            if let Episode::Recovery { high_rxt: h, rescue_rxt: r, .. } = &mut self.episode {
                                (*h, *r) = (high_rxt, Some(high_seq));
                            }
                            sent = true;
                        }
                    }
                    break;
                }
            }
        }
        if sent || limited {
            self.cwnd_validate(limited);
        }
        // RFC 6298 §5.1 / tcp_event_new_data_sent: arm the timer if data is outstanding.
        if self.deadline.is_none() && self.sb.packets_out() > 0 {
            self.arm_rto(now + self.rto);
        }
        // tcp_event_new_data_sent re-arms an RTO a probe held; tcp_write_xmit then schedules
        // the probe ("one loss probe per tail loss episode").
        if self.p.tlp && new_sent {
            if self.pending == Pending::LossProbe {
                self.rearm_rto(now);
            }
            self.schedule_loss_probe(now, false);
        }
    }

    /// The TX completions up to `now` (`tcp_wfree`).
    fn tsq_complete(&mut self, now: Nanos) {
        if let Some(q) = self.tsq.as_mut() {
            q.complete(now);
        }
    }

    /// `tcp_small_queue_check` before an skb of `len` bytes (a `retransmission`: `factor`
    /// 1): true when the socket must wait for a TX completion.
    fn tsq_holds(&mut self, len: u64, retransmission: bool) -> bool {
        if self.tsq.is_none() {
            return false;
        }
        let (rate, skbs) = (self.pacing_rate(), self.sb.skbs_out);
        self.tsq.as_mut().is_some_and(|q| q.holds(len, rate, skbs, retransmission))
    }

    /// `sk_pacing_rate` (`tcp_update_pacing_rate`), bytes per second; None before an RTT
    /// sample (unlimited).
    fn pacing_rate(&self) -> Option<u64> {
        let tp = &self.tp;
        self.p.kernel.pacing_rate(self.p.mss, tp.snd_cwnd, tp.snd_ssthresh, self.sb.packets_out(), tp.srtt_us as u64)
    }

    /// `tcp_cwnd_restart`: halve cwnd once per RTO of idle, down to the restart window.
    fn cwnd_restart(&mut self, idle: Nanos) {
        self.ca.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        // tcp_current_ssthresh.
        let cwnd = self.tp.snd_cwnd;
        if !self.in_cwnd_reduction() {
            self.tp.snd_ssthresh = self.tp.snd_ssthresh.max((cwnd >> 1) + (cwnd >> 2));
        }
        let restart = self.p.init_cwnd.min(cwnd);
        let mut c = cwnd;
        let mut delta = idle as i128;
        loop {
            delta -= self.rto as i128;
            if delta <= 0 || c <= restart {
                break;
            }
            c >>= 1;
        }
        self.tp.snd_cwnd = c.max(restart);
    }

    /// `tcp_retransmit_skb`: segment `i` again, counted for undo.
    fn retransmit(&mut self, now: Nanos, i: usize, out: &mut Vec<Packet>) {
        self.resend(now, i, out);
        self.undo_count_retransmission(now);
    }

    /// `__tcp_retransmit_skb`: segment `i` again (a loss probe's goes uncounted for undo).
    fn resend(&mut self, now: Nanos, i: usize, out: &mut Vec<Packet>) {
        let s = self.sb.seg(i);
        self.sb.retransmitted(i, now);
        if let Episode::Recovery { high_rxt, .. } = &mut self.episode {
            *high_rxt = (*high_rxt).max(s.end());
        }
        if i == 0 && self.pending != Pending::ReoTimeout {
            // Retransmitting the head restarts the timer (not RACK's: tcp_xmit_retransmit_queue).
            self.arm_rto(now + self.rto);
        }
        self.stats.retransmitted_bytes += s.len as u64;
        if let Some(q) = self.tsq.as_mut() {
            q.handed(s.len as u64, 1);
        }
        self.emit(now, s.seq, s.len, false, out);
    }

    fn emit(&mut self, now: Nanos, seq: u64, len: u32, new_data: bool, out: &mut Vec<Packet>) {
        let mut fl = 0u8;
        // tcp_ecn_send: CWR on the first new data segment after a reduction; a
        // retransmission is ECT only for algorithms that need ECN (RFC 3168 §6.1.5).
        let ect = self.p.ecn && (new_data || self.ca.needs_ecn());
        if new_data && self.queue_cwr {
            fl |= flags::CWR;
            self.queue_cwr = false;
        }
        fl |= self.app.push_flag(seq, len as u64);
        if let Some(prr) = self.episode.prr_mut() {
            prr.out += 1;
        }
        self.force_one = false;
        self.stats.sent_bytes += len as u64;
        self.stats.sent_segments += 1;
        self.lsndtime = Some(now);
        // `tp->lsndtime`, after the TxStart event (CUBIC's epoch shift reads the idle time).
        self.tp.lsndtime = now;
        let ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
        out.push(self.ends.data(now, seq, len, ecn, fl, self.tag.dscp_of(seq)));
    }

    fn sync_stats(&mut self) {
        let mss = self.p.mss as u64;
        self.stats.cwnd = self.tp.snd_cwnd as u64 * mss;
        self.stats.ssthresh =
            if self.tp.snd_ssthresh >= INFINITE_SSTHRESH { u64::MAX } else { self.tp.snd_ssthresh as u64 * mss };
        self.stats.alpha = self.ca.alpha();
        self.stats.srtt_ns = self.rtt.as_ref().map_or(0, |r| r.srtt() * NS_PER_US);
        self.stats.rto_ns = self.rto;
        debug_assert_eq!(
            self.episode == Episode::None,
            matches!(self.tp.ca_state, CaState::Open | CaState::Disorder),
            "the episode's data and ca_state agree"
        );
    }
}

#[cfg(test)]
mod tests;
