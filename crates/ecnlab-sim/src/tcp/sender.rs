//! The TCP sender: a sans-IO state machine (it owns no clock: every entry point takes
//! `now`, and [`TcpSender::timer`] says when it next needs attention).
//!
//! Read RFC 5681 (slow start, congestion avoidance, fast retransmit), RFC 6582 (NewReno fast
//! recovery), RFC 6298 (RTO) and RFC 3168 §6.1.2 (ECN at the sender) first. Sequence numbers
//! are byte offsets from 0; the connection is pre-established (no SYN), as in the papers'
//! ns-2 setups. The window is kept in bytes.
//!
//! Deviations, all deliberate:
//! - No SACK (not required; the papers' ns-2 FullTcp runs were NewReno-style).
//! - RTT samples come from the timestamp echoed in every ACK (`tx_ns`), as with the TCP
//!   timestamp option (RFC 7323 §4), so Karn's rule is not needed; samples are taken on ACKs
//!   that advance `snd_una`.
//! - The RTO is restarted on every ACK that acknowledges new data, also during fast
//!   recovery (RFC 6298 §5.3; RFC 6582 §4's "Slow-but-Steady" variant; Linux does the same),
//!   unless `partial_ack_rto = "impatient"` selects RFC 6582 §3.2 step 5's rule (only the
//!   first partial ACK of a recovery restarts it; ns-3 does this).
//! - Slow start grows by min(acked, 2·MSS) per ACK (RFC 3465 §2.2, L = 2), but by at most
//!   1·MSS per ACK in the slow start that follows a retransmission timeout (RFC 3465 §2.3:
//!   the cumulative ACK of the retransmission may cover a whole window the receiver held,
//!   and the path has just shown it cannot take one); congestion avoidance counts bytes:
//!   +1 MSS per cwnd bytes acknowledged (RFC 3465 §2.1).
//! - Segments go out only when a whole segment (or the last, short one) fits in the window,
//!   or when nothing is in flight. Limited Transmit (RFC 3042) lets the first and second
//!   duplicate ACK each release one new segment beyond cwnd (`limited_transmit`).
//! - RFC 3168 §6.1.2's "cwnd = 1 MSS: wait an RTO before sending" rule is not modelled;
//!   ECN reductions floor at `min_cwnd`.
//! - Retransmissions are ECT too when the flavour uses ECN (as the TCN ns-2 code does for
//!   DCTCP; RFC 3168 §6.1.5 would send them not-ECT).

use super::cc::{AckInfo, Cc, SeqState, Window};
use super::config::{PartialAckRto, TcpConfig};
use crate::packet::{flags, Ecn, Kind, Packet};
/// PIAS's levels, for the scenario's check (`host.pias_thresholds`).
pub use crate::transport::app::MAX_PIAS_LEVELS;
use crate::transport::app::{AppWrites, Endpoints, Tagging};
use ecnlab_core::units::Nanos;

/// Counters and current values of a sender. Counters only grow; `cwnd`, `ssthresh`,
/// `alpha`, `srtt_ns`, `rto_ns` are the values after the last event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Retransmission timeouts that fired (each backoff step counts).
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Payload bytes sent again (fast/partial-ACK retransmissions and go-back-N after a
    /// timeout).
    pub retransmitted_bytes: u64,
    /// Payload bytes sent, retransmissions included.
    pub sent_bytes: u64,
    /// Data segments sent, retransmissions included.
    pub sent_segments: u64,
    /// ACKs received (new and duplicate).
    pub acks_received: u64,
    /// ACKs received carrying ECN-Echo (flavours with ECN only).
    pub ece_acks: u64,
    /// ECN reduction windows entered (a halving for ECN*, a DCTCP cut, the start of a CWR
    /// period for `dctcp_dualq`, whose progressive cuts within it are not counted again).
    pub ecn_reductions: u64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes (u64::MAX until the first reduction).
    pub ssthresh: u64,
    /// DCTCP alpha (0 for NewReno and ECN*).
    pub alpha: f64,
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt_ns: u64,
    /// Current retransmission timeout including backoff, ns.
    pub rto_ns: u64,
    /// SYN retransmissions (`linux` with `transport.handshake`).
    pub syn_timeouts: u64,
    /// Tail loss probes sent (`linux` with `transport.tlp`, `LINUX_MIB_TCPLOSSPROBES`).
    pub tlp_probes: u64,
    /// Probes that repaired a loss (the episode's cwnd reduction,
    /// `LINUX_MIB_TCPLOSSPROBERECOVERY`).
    pub tlp_recoveries: u64,
    /// Reductions undone as spurious (`linux`: `tcp_undo_cwnd_reduction`; the kernel's
    /// TCPFullUndo, TCPPartialUndo, TCPDSACKUndo and TCPLossUndo together).
    pub undos: u64,
}

/// What `[transport]` sets for a sender, fixed at construction (bytes and nanoseconds).
#[derive(Clone, Debug)]
struct SenderParams {
    mss: u64,
    /// Initial window (and the restart window after idle).
    iw: u64,
    max_cwnd: u64,
    dupack_thresh: u32,
    rto_min: Nanos,
    rto_init: Nanos,
    rto_max: Nanos,
    slow_start_restart: bool,
    /// RFC 3042 Limited Transmit.
    limited_transmit: bool,
    /// RFC 6582 §4 "Slow-but-Steady": every partial ACK restarts the retransmission timer.
    rto_every_partial_ack: bool,
    /// The flavour uses ECN: ECT segments, ECE understood, CWR sent.
    ecn: bool,
}

impl SenderParams {
    fn new(cfg: &TcpConfig, ecn: bool) -> Self {
        let mss = cfg.mss.max(1) as u64;
        let iw = cfg.init_cwnd.max(1) as u64 * mss;
        SenderParams {
            mss,
            iw,
            max_cwnd: (cfg.max_cwnd.max(1) as u64 * mss).max(iw),
            dupack_thresh: cfg.dupack_thresh.max(1),
            rto_min: cfg.rto_min.ns(),
            rto_init: cfg.rto_init.ns(),
            rto_max: cfg.rto_max.ns().max(1),
            slow_start_restart: cfg.slow_start_restart,
            limited_transmit: cfg.limited_transmit,
            rto_every_partial_ack: cfg.partial_ack_rto == PartialAckRto::SlowButSteady,
            ecn,
        }
    }
}

/// Where loss recovery stands (RFC 5681, RFC 6582, RFC 3465 §2.3), with what each state
/// carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Slow start or congestion avoidance (cwnd against ssthresh says which).
    Open,
    /// The slow start that follows a retransmission timeout: ABC's L is 1·MSS (RFC 3465
    /// §2.3: the cumulative ACK of the retransmission may cover a whole window the receiver
    /// held, and the path has just shown it cannot take one) until cwnd reaches ssthresh or
    /// another loss is detected.
    AfterTimeout,
    /// NewReno fast recovery (RFC 6582 §3.2) until `recover` is acknowledged; `partial_acked`:
    /// a partial ACK has arrived (step 5: the first one restarts the timer in either
    /// variant, later ones only under Slow-but-Steady).
    Fast { partial_acked: bool },
}

/// The RFC 6298 §2 estimate, from the first RTT sample on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rtt {
    srtt: u64,
    rttvar: u64,
}

/// A TCP sender for one flow.
#[derive(Clone, Debug)]
pub struct TcpSender {
    p: SenderParams,
    ends: Endpoints,
    tag: Tagging,
    app: AppWrites,
    // --- sequence state (bytes) ---
    /// Oldest unacknowledged byte.
    snd_una: u64,
    /// Next byte to send (moved back to `snd_una` by a timeout: go-back-N).
    snd_nxt: u64,
    /// Highest byte ever sent + 1 (bytes below it that are sent again are retransmissions).
    high_tx: u64,
    // --- window ---
    win: Window,
    /// Bytes acknowledged since the last congestion-avoidance increase (RFC 3465).
    ca_acc: u64,
    cc: Cc,
    // --- loss recovery (RFC 5681 / 6582) ---
    recovery: Recovery,
    dupacks: u32,
    /// RFC 6582 `recover`: high_tx when the last fast recovery (or timeout) began; None
    /// before the first.
    recover: Option<u64>,
    // --- ECN (RFC 3168 §6.1.2) ---
    /// End of the current reduction window: a congestion signal about data below it
    /// (ECE on an ACK <= it, a loss starting below it) belongs to a window already reduced.
    cwr_until: u64,
    /// Set CWR on the next new data segment.
    send_cwr: bool,
    // --- RTO (RFC 6298) ---
    rtt: Option<Rtt>,
    backoff: u32,
    deadline: Option<Nanos>,
    /// Time of the last segment sent (slow-start restart); None before the first.
    last_send: Option<Nanos>,
    stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, flow: u32, src: u16, dst: u16, dscp: u8) -> Self {
        let cc = Cc::new(cfg);
        let p = SenderParams::new(cfg, cc.ecn_capable());
        let win = Window { cwnd: p.iw, ssthresh: u64::MAX, mss: p.mss, min_cwnd: cfg.min_cwnd.max(1) as u64 * p.mss };
        let mut s = TcpSender {
            p,
            ends: Endpoints { flow, src, dst },
            tag: Tagging::new(dscp),
            app: AppWrites::default(),
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            win,
            ca_acc: 0,
            cc,
            recovery: Recovery::Open,
            dupacks: 0,
            recover: None,
            cwr_until: 0,
            send_cwr: false,
            rtt: None,
            backoff: 0,
            deadline: None,
            last_send: None,
            stats: SenderStats::default(),
        };
        s.sync_stats();
        s
    }

    /// The application has `bytes` more to send ([`super::UNLIMITED`] or any amount from
    /// `u64::MAX / 8` up for an unlimited flow, which never sends PSH). Nothing is sent until
    /// the next [`poll`](Self::poll) (or ACK). The segment that carries the last byte added
    /// so far has PSH set, so with a rate-limited application every write's end is flagged
    /// (like PSH) and the receiver ACKs it at once.
    pub fn add_data(&mut self, bytes: u64) {
        self.app.add(bytes);
    }

    /// The DSCP stamped on subsequent segments.
    pub fn set_dscp(&mut self, dscp: u8) {
        self.tag.set_dscp(dscp);
    }

    /// PIAS tagging of the message that starts at `start_seq` ([`Tagging::set_pias`]).
    pub fn set_pias(&mut self, start_seq: u64, thresholds: &[u64]) {
        self.tag.set_pias(start_seq, thresholds);
    }

    /// Next deadline (the retransmission timer), if armed.
    pub fn timer(&self) -> Option<Nanos> {
        self.deadline
    }

    /// All data added so far is acknowledged.
    pub fn is_idle(&self) -> bool {
        self.snd_una >= self.app.added()
    }

    /// Bytes cumulatively acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.snd_una
    }

    /// Total bytes the application has added.
    pub fn added_bytes(&self) -> u64 {
        self.app.added()
    }

    /// Bytes sent and not yet acknowledged (counting from `snd_nxt`, which a timeout moves
    /// back).
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.win.cwnd
    }

    /// Inside a reduction window (RFC 3168 "CWR" period / loss recovery window).
    pub fn in_cwr(&self) -> bool {
        self.snd_una <= self.cwr_until && self.cwr_until > 0
    }

    /// Where loss recovery stands.
    pub fn recovery(&self) -> Recovery {
        self.recovery
    }

    /// Fast recovery in progress.
    pub fn in_recovery(&self) -> bool {
        matches!(self.recovery, Recovery::Fast { .. })
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    pub fn flow(&self) -> u32 {
        self.ends.flow
    }

    /// Emits every segment the window allows now: new data (or go-back-N retransmissions
    /// after a timeout).
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.transmit(now, false, out);
    }

    /// As [`poll`](Self::poll), after a fast or partial-ACK retransmission of `snd_una`
    /// first when `rtx_head`.
    fn transmit(&mut self, now: Nanos, rtx_head: bool, out: &mut Vec<Packet>) {
        let mss = self.p.mss;
        if rtx_head && self.snd_una < self.high_tx {
            // RFC 5681 §3.2 step 4 / RFC 6582 §3.2 step 5: retransmit the first
            // unacknowledged segment regardless of the window.
            let len = (self.high_tx - self.snd_una).min(mss);
            self.emit(now, self.snd_una, len, out);
        }
        let app_limit = self.app.added();
        // RFC 5681 §4.1: restart from at most the initial window after an idle period
        // longer than the RTO.
        if self.p.slow_start_restart
            && self.snd_una == self.high_tx
            && self.snd_nxt < app_limit
            && self.last_send.is_some_and(|t| now.saturating_sub(t) > self.current_rto())
        {
            self.win.cwnd = self.win.cwnd.min(self.p.iw);
            self.ca_acc = 0;
        }
        let wnd = self.win.cwnd.min(self.p.max_cwnd);
        // RFC 3042 / RFC 5681 §3.2: after the first and second duplicate ACK (outside
        // recovery) the flight may exceed cwnd by that many segments of NEW data.
        let lt = if self.p.limited_transmit && !self.in_recovery() && self.dupacks < self.p.dupack_thresh {
            self.dupacks.min(2) as u64 * mss
        } else {
            0
        };
        while self.snd_nxt < app_limit {
            let len = (app_limit - self.snd_nxt).min(mss);
            let flight = self.snd_nxt - self.snd_una;
            let allowed = if self.snd_nxt >= self.high_tx { wnd + lt } else { wnd };
            if flight > 0 && flight + len > allowed {
                break;
            }
            let seq = self.snd_nxt;
            self.emit(now, seq, len, out);
            self.snd_nxt += len;
            self.high_tx = self.high_tx.max(self.snd_nxt);
        }
        // RFC 6298 §5.1: arm the timer when data is outstanding and it is not running.
        if self.deadline.is_none() && self.snd_una < self.high_tx {
            self.deadline = Some(now + self.current_rto());
        }
        self.sync_stats();
    }

    /// An ACK arrived. May push segments into `out`.
    pub fn on_ack(&mut self, now: Nanos, ack: &Packet, out: &mut Vec<Packet>) {
        if ack.kind != Kind::Ack {
            return;
        }
        self.stats.acks_received += 1;
        // Never believe an ACK for bytes not sent yet.
        let a = ack.seq.min(self.high_tx);
        if a < self.snd_una {
            // Older than what we know (stale, reordered): nothing to learn.
            self.poll(now, out);
            return;
        }
        let ece = self.p.ecn && ack.has(flags::ECE);
        if ece {
            self.stats.ece_acks += 1;
        }
        let acked = a - self.snd_una;
        // RFC 5681 §2 (duplicate ACK): outstanding data and no progress.
        let dup = acked == 0 && self.snd_una < self.high_tx;
        if acked > 0 {
            self.snd_una = a;
            // The receiver may hold data beyond a go-back-N restart point.
            self.snd_nxt = self.snd_nxt.max(a);
            // RFC 6298 §2.2-2.3 (timestamp sample, RFC 7323 §4) and §5.7: a valid sample
            // ends the backoff.
            if ack.tx_ns <= now {
                self.rtt_sample(now - ack.tx_ns);
            }
            self.backoff = 0;
        }

        // ECN response (and DCTCP estimation) through the controller.
        let info = AckInfo { acked, dup, ece, in_cwr: a <= self.cwr_until, in_recovery: self.in_recovery() };
        let seqs = SeqState { ack: a, snd_nxt: self.snd_nxt };
        let r = self.cc.on_ack(&info, seqs, &mut self.win);
        if r.enter_cwr {
            self.cwr_until = self.high_tx;
            self.send_cwr = true;
            self.stats.ecn_reductions += 1;
        }
        if r.reduced {
            // A cut restarts congestion avoidance's byte counter, as Linux zeroes
            // snd_cwnd_cnt (tcp_init_cwnd_reduction); ns-2 and ns-3 keep the progress, which
            // is worth ~7 % of the marks on 8 long DCTCP flows (benches/results/marks-gap.md).
            self.ca_acc = 0;
        }

        let mut rtx_head = false;
        if acked > 0 {
            // RFC 6298 §5.3 restarts the timer on every ACK of new data; RFC 6582 §3.2 step 5
            // only on the first partial ACK of a recovery.
            let mut restart_timer = true;
            match self.recovery {
                Recovery::Fast { .. } if self.recover.is_some_and(|r| a >= r) => {
                    // RFC 6582 §3.2 step 3 (full ACK), option 1: deflate to
                    // min(ssthresh, max(FlightSize, SMSS) + SMSS).
                    let flight = self.snd_nxt - self.snd_una;
                    self.win.cwnd = self.win.ssthresh.min(flight.max(self.p.mss) + self.p.mss);
                    self.recovery = Recovery::Open;
                    self.dupacks = 0;
                    self.ca_acc = 0;
                }
                Recovery::Fast { partial_acked } => {
                    // Partial ACK (RFC 6582 §3.2 step 5): retransmit the next hole, deflate
                    // by the amount acknowledged, add back one SMSS if at least one was.
                    rtx_head = true;
                    let add_back = if acked >= self.p.mss { self.p.mss } else { 0 };
                    self.win.cwnd = (self.win.cwnd.saturating_sub(acked) + add_back).max(self.p.mss);
                    restart_timer = !partial_acked || self.p.rto_every_partial_ack;
                    self.recovery = Recovery::Fast { partial_acked: true };
                }
                Recovery::Open | Recovery::AfterTimeout => {
                    self.dupacks = 0;
                    if r.allow_growth {
                        self.grow(acked);
                    }
                }
            }
            // RFC 6298 §5.2 / §5.3.
            if self.snd_una >= self.high_tx {
                self.deadline = None;
            } else if restart_timer || self.deadline.is_none() {
                self.deadline = Some(now + self.current_rto());
            }
        } else if dup {
            self.dupacks += 1;
            if self.in_recovery() {
                // RFC 5681 §3.2 step 4: inflate for the segment that left the network.
                self.win.cwnd += self.p.mss;
            } else if self.dupacks == self.p.dupack_thresh && self.recover.is_none_or(|r| a > r) {
                // RFC 6582 §3.2 step 1 ("careful" variant, §4.1): fast retransmit only when
                // the ACK covers more than `recover`, so duplicate ACKs caused by go-back-N
                // resending data the receiver already holds do not start a second,
                // spurious recovery (BSD: th_ack > snd_recover).
                self.enter_fast_recovery();
                rtx_head = true;
            }
        }
        self.transmit(now, rtx_head, out);
    }

    /// The retransmission timer fired (harmless if early or disarmed).
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        if self.snd_una >= self.high_tx {
            self.deadline = None;
            return;
        }
        self.stats.timeouts += 1;
        let mss = self.p.mss;
        // RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS); when the
        // retransmission itself is lost (we are still backed off), keep ssthresh.
        if self.backoff == 0 {
            let flight = self.snd_nxt - self.snd_una;
            let half = (flight / 2).max(2 * mss);
            // A timeout inside fast recovery belongs to the loss episode that already set
            // ssthresh from the flight at its start; the flight has since grown by the data
            // the inflated window let out, so keep the smaller value (RFC 5681 §3.1 sets
            // ssthresh to "no more than" FlightSize/2; Linux keeps it, tcp_enter_loss).
            self.win.ssthresh = if self.in_recovery() { self.win.ssthresh.min(half) } else { half };
        }
        // Loss window of one segment, go-back-N from snd_una.
        self.win.cwnd = mss;
        self.ca_acc = 0;
        self.recovery = Recovery::AfterTimeout;
        self.snd_nxt = self.snd_una;
        self.dupacks = 0;
        // RFC 6582 §3.2 step 4 (after a timeout, record recover) and RFC 3168 §6.1.2 (a
        // timeout is a reduction: no further one for this window, CWR on new data).
        self.recover = Some(self.high_tx);
        self.cwr_until = self.high_tx;
        self.send_cwr = self.p.ecn;
        self.cc.on_loss();
        // RFC 6298 §5.5-5.6: back off and restart the timer.
        self.backoff = (self.backoff + 1).min(63);
        self.deadline = Some(now + self.current_rto());
        self.poll(now, out);
    }

    // ---------------------------------------------------------------------------------

    /// RFC 6582 §3.2 steps 1-2; the caller retransmits the head.
    fn enter_fast_recovery(&mut self) {
        self.stats.fast_retransmits += 1;
        let mss = self.p.mss;
        let a = self.snd_una;
        if a >= self.cwr_until {
            // RFC 5681 §3.2 step 2 / RFC 6582 §3.2 step 2.
            let flight = self.snd_nxt - self.snd_una;
            self.win.ssthresh = (flight / 2).max(2 * mss);
        } else {
            // The lost segment was sent before the last ECN reduction: that window was
            // already reduced (RFC 3168 §6.1.2; Linux keeps ssthresh when entering
            // recovery from CWR). Recover from the reduced window.
            self.win.ssthresh = self.win.ssthresh.min(self.win.cwnd).max(2 * mss);
        }
        self.win.cwnd = self.win.ssthresh + self.p.dupack_thresh as u64 * mss;
        self.ca_acc = 0;
        self.recovery = Recovery::Fast { partial_acked: false };
        self.recover = Some(self.high_tx);
        self.cwr_until = self.cwr_until.max(self.high_tx);
        self.send_cwr = self.p.ecn;
        self.cc.on_loss();
    }

    /// RFC 5681 §3.1 / RFC 3465.
    fn grow(&mut self, acked: u64) {
        let mss = self.p.mss;
        let w = &mut self.win;
        if w.cwnd < w.ssthresh {
            let limit = if self.recovery == Recovery::AfterTimeout { mss } else { 2 * mss };
            w.cwnd += acked.min(limit);
            if w.cwnd >= w.ssthresh {
                self.recovery = Recovery::Open;
            }
        } else {
            self.ca_acc += acked;
            if self.ca_acc >= w.cwnd {
                self.ca_acc -= w.cwnd;
                w.cwnd += mss;
            }
        }
        if w.cwnd > self.p.max_cwnd {
            w.cwnd = self.p.max_cwnd;
        }
    }

    /// RFC 6298 §2.2-2.3 in integer nanoseconds.
    fn rtt_sample(&mut self, r: u64) {
        self.rtt = Some(match self.rtt {
            None => Rtt { srtt: r, rttvar: r / 2 },
            Some(Rtt { srtt, rttvar }) => {
                let err = srtt.abs_diff(r);
                Rtt { srtt: (7 * srtt + r) / 8, rttvar: (3 * rttvar + err) / 4 }
            }
        });
    }

    /// RTO with backoff: max(rto_min, srtt + 4·rttvar) (rto_init before any sample),
    /// doubled per backoff step, capped at rto_max.
    fn current_rto(&self) -> Nanos {
        let base = match self.rtt {
            Some(Rtt { srtt, rttvar }) => (srtt + 4 * rttvar).max(self.p.rto_min),
            None => self.p.rto_init,
        };
        let shifted = if self.backoff >= 63 { u64::MAX } else { base.saturating_mul(1u64 << self.backoff) };
        shifted.min(self.p.rto_max).max(1)
    }

    fn emit(&mut self, now: Nanos, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let mut fl = self.app.push_flag(seq, len);
        let new_data = seq >= self.high_tx;
        if new_data && self.send_cwr {
            // RFC 3168 §6.1.2: CWR on the first new data segment after a reduction.
            fl |= flags::CWR;
            self.send_cwr = false;
        }
        if seq < self.high_tx {
            self.stats.retransmitted_bytes += len.min(self.high_tx - seq);
        }
        self.stats.sent_bytes += len;
        self.stats.sent_segments += 1;
        self.last_send = Some(now);
        let ecn = if self.p.ecn { Ecn::Ect0 } else { Ecn::NotEct };
        out.push(self.ends.data(now, seq, len as u32, ecn, fl, self.tag.dscp_of(seq)));
    }

    fn sync_stats(&mut self) {
        self.stats.cwnd = self.win.cwnd;
        self.stats.ssthresh = self.win.ssthresh;
        self.stats.alpha = self.cc.alpha();
        self.stats.srtt_ns = self.rtt.map_or(0, |r| r.srtt);
        self.stats.rto_ns = self.current_rto();
    }
}
