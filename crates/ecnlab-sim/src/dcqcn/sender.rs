//! The DCQCN sender: the reaction point (RP, DCQCN paper §3.1) driving a paced go-back-N
//! sender. Sans-IO: every entry point takes `now`; [`DcqcnSender::timer`] says when it
//! next needs attention.
//!
//! Rate control, per the paper:
//! - Start at line rate (RoCE has no slow start; the paper's flows start at line rate).
//! - On a CNP: Rt = Rc; Rc = Rc (1 - alpha/2); alpha = (1 - g) alpha + g (eq. 1: the cut
//!   uses alpha *before* its update); restart the alpha timer, the rate timer and the byte
//!   counter, and zero both event counts.
//! - Every `alpha_timer` (K) without a CNP: alpha = (1 - g) alpha (eq. 2).
//! - Rate-increase events come from the rate timer (every T, counted in `T`) and the byte
//!   counter (every B bytes sent, counted in `BC`). On each event, after counting it, the
//!   stage is ([`Stage::of`]): fast recovery while max(T, BC) <= F (so the first F events
//!   of a counter are fast recovery: "F = 5 successive iterations"), hyper increase once
//!   min(T, BC) > F, additive increase otherwise. Fast recovery: Rc = (Rt + Rc)/2 (eq. 3).
//!   Additive: Rt += R_AI, then Rc = (Rt + Rc)/2 (eq. 4). Hyper: Rt += i R_HAI with
//!   i = min(T, BC) - F, then Rc = (Rt + Rc)/2 (QCN's hyper-active increase).
//! - Rates never exceed the line rate; Rc never falls below `min_rate`.
//!
//! Pacing: a packet goes out when `now >= next_send`; then next_send = now + size·8/Rc,
//! rounded up to a whole nanosecond, using the rate at the time of sending (a later cut
//! does not move an already computed instant, as a NIC's rate limiter).
//!
//! The NIC's arbiter: an RDMA NIC serves its queue pairs in turn at line rate, each as its
//! rate limiter allows (the DCQCN authors' ns3-rdma, `DequeueQCN`), so a QP never queues
//! behind another's backlog in the NIC, and the NIC never overflows. ecnlab's host NIC is a
//! FIFO per priority (one, or the switches' queues with PFC); a QP hands it a packet only
//! when its previous one has left it
//! ([`DcqcnSender::nic_sent`], called by the simulator as it departs): the FIFO then holds at
//! most one packet per QP, which makes it the arbiter's round robin.
//!
//! Deviations and modelling choices, all deliberate:
//! - Rates are f64 bits per second; Rc snaps to Rt when within 1 bps (repeated halving of
//!   the gap would otherwise approach the line rate forever and keep the timer running).
//! - Once Rc = Rt = line rate the rate timer lapses (nothing can increase; the next CNP
//!   restarts it). When the sender is idle (everything acknowledged), the alpha and rate
//!   timers are not reported by `timer()`; the periods that elapsed are replayed, in order,
//!   at the next entry point, which gives the same state as firing them on time (the byte
//!   counter cannot move while idle).
//! - No rate-reduce monitor period (Mellanox NICs cut at most once per few us): the paper
//!   cuts on every CNP, and the NP already spaces CNPs by N.
//! - Loss does not change the rate (DCQCN assumes PFC). Go-back-N: a NAK rewinds to its
//!   sequence; a fixed RTO (no backoff) rewinds to the oldest unacknowledged byte.

use super::config::{DcqcnConfig, ResolvedRates};
use super::NAK;
use crate::packet::{Ecn, Kind, Packet, TCP_IP_HEADER};
use crate::transport::app::{AppWrites, Endpoints};
use ecnlab_core::units::Nanos;

/// Most rate-timer periods replayed one by one after an idle period; beyond it (only with
/// absurdly small R_AI), the remaining periods are skipped.
const MAX_REPLAY: u32 = 1_000_000;
/// Beyond this many elapsed alpha periods, alpha decays by (1-g)^n in one step.
const ALPHA_LOOP_MAX: u64 = 4096;

/// The rate-increase stage of an event (DCQCN paper §3.1, QCN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Rc = (Rt + Rc)/2.
    FastRecovery,
    /// Rt += R_AI, Rc = (Rt + Rc)/2.
    AdditiveIncrease,
    /// Rt += i·R_HAI, Rc = (Rt + Rc)/2, with i the value carried.
    HyperIncrease(u32),
}

impl Stage {
    /// The stage of a rate-increase event, given the timer and byte-counter event counts
    /// since the last CNP (including the event being handled) and F.
    pub fn of(timer_events: u32, byte_events: u32, f: u32) -> Stage {
        let hi = timer_events.max(byte_events);
        let lo = timer_events.min(byte_events);
        if hi <= f {
            Stage::FastRecovery
        } else if lo > f {
            Stage::HyperIncrease(lo - f)
        } else {
            Stage::AdditiveIncrease
        }
    }
}

/// Counters and current values of a sender. Counters only grow; `rate_bps`,
/// `target_rate_bps` and `alpha` are the values after the last event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DcqcnStats {
    /// Current rate Rc, bits per second.
    pub rate_bps: f64,
    /// Target rate Rt, bits per second.
    pub target_rate_bps: f64,
    /// Rate-reduction factor alpha.
    pub alpha: f64,
    /// CNPs received.
    pub cnps_received: u64,
    /// Rate cuts (one per CNP: the paper has no other cut).
    pub rate_cuts: u64,
    /// Alpha decay steps (alpha timer expiries without CNP).
    pub alpha_decays: u64,
    /// Rate-increase events from the rate timer and from the byte counter.
    pub timer_events: u64,
    pub byte_counter_events: u64,
    /// Rate-increase events by stage (events at line rate change nothing and count in no
    /// stage).
    pub fast_recovery_steps: u64,
    pub additive_steps: u64,
    pub hyper_steps: u64,
    /// ACKs received (NAKs included) and NAKs among them.
    pub acks_received: u64,
    pub naks_received: u64,
    /// Go-back-N rewinds caused by a NAK.
    pub nak_rewinds: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// Payload bytes sent again (go-back-N after a NAK or a timeout).
    pub retransmitted_bytes: u64,
    /// Payload bytes sent, retransmissions included.
    pub sent_bytes: u64,
    /// Data packets sent, retransmissions included.
    pub sent_packets: u64,
}

/// A DCQCN sender (RP) for one flow.
#[derive(Clone, Debug)]
pub struct DcqcnSender {
    // --- params (fixed at construction) ---
    ends: Endpoints,
    dscp: u8,
    mss: u64,
    g: f64,
    alpha_timer: Nanos,
    rate_timer: Nanos,
    byte_counter: u64,
    f: u32,
    rates: ResolvedRates,
    rto: Nanos,
    // --- RP state ---
    /// Current rate Rc and target rate Rt, bits per second.
    rc: f64,
    rt: f64,
    alpha: f64,
    /// Rate-increase events since the last CNP: by the timer (T) and the byte counter (BC).
    t_events: u32,
    bc_events: u32,
    /// Wire bytes sent since the last byte-counter event (or CNP).
    byte_acc: u64,
    /// The alpha and rate timers run (set at the first entry point with a `now`).
    started: bool,
    alpha_deadline: Nanos,
    rate_deadline: Nanos,
    // --- pacing ---
    /// Earliest time the next data packet may leave.
    next_send: Nanos,
    /// Data packets of this QP in its host's NIC queue (at most one: the arbiter).
    at_nic: u32,
    // --- go-back-N (bytes) ---
    app: AppWrites,
    /// Oldest unacknowledged byte.
    snd_una: u64,
    /// Next byte to send (moved back by a NAK or a timeout).
    snd_nxt: u64,
    /// Highest byte ever sent + 1.
    high_tx: u64,
    rto_deadline: Option<Nanos>,
    stats: DcqcnStats,
}

impl DcqcnSender {
    /// `mss`: payload bytes per full packet; `line_rate_bps`: the host's link rate (the
    /// initial and maximum rate, and the base of R_AI / R_HAI / min-rate scaling).
    pub fn new(cfg: &DcqcnConfig, mss: u32, line_rate_bps: u64, flow: u32, src: u16, dst: u16, dscp: u8) -> Self {
        let rates = cfg.resolve(line_rate_bps);
        let alpha = cfg.alpha_init.clamp(0.0, 1.0);
        let mut s = DcqcnSender {
            ends: Endpoints { flow, src, dst },
            dscp,
            mss: mss.max(1) as u64,
            g: cfg.g,
            alpha_timer: cfg.alpha_timer.ns().max(1),
            rate_timer: cfg.rate_timer.ns().max(1),
            byte_counter: cfg.byte_counter.bytes().max(1),
            f: cfg.fast_recovery_steps,
            rates,
            rto: cfg.rto.ns().max(1),
            rc: rates.line,
            rt: rates.line,
            alpha,
            t_events: 0,
            bc_events: 0,
            byte_acc: 0,
            started: false,
            alpha_deadline: 0,
            rate_deadline: 0,
            next_send: 0,
            at_nic: 0,
            app: AppWrites::default(),
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            rto_deadline: None,
            stats: DcqcnStats::default(),
        };
        s.sync_stats();
        s
    }

    /// The application has `bytes` more to send ([`super::UNLIMITED`] for a long-lived
    /// flow, which never sends PSH). Nothing is sent, and `timer()` does not account for
    /// the new data, until the next [`poll`](Self::poll): call it right after.
    pub fn add_data(&mut self, bytes: u64) {
        self.app.add(bytes);
    }

    /// The DSCP stamped on subsequent data packets.
    pub fn set_dscp(&mut self, dscp: u8) {
        self.dscp = dscp;
    }

    /// Next deadline: the pacing instant when data is waiting, the rate-increase timer
    /// (unless at line rate) and the alpha timer while the flow is not idle, and the
    /// retransmission timeout.
    pub fn timer(&self) -> Option<Nanos> {
        let mut t = self.rto_deadline;
        let mut take = |d: Nanos| t = Some(t.map_or(d, |x| x.min(d)));
        if self.started {
            if self.snd_nxt < self.app.added() && self.at_nic == 0 {
                take(self.next_send); // else the NIC's departure wakes it (`nic_sent`)
            }
            if !self.is_idle() {
                take(self.alpha_deadline);
                if !self.at_line_rate() {
                    take(self.rate_deadline);
                }
            }
        }
        t
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

    /// Bytes sent and not yet acknowledged, counting from `snd_nxt` (which go-back-N moves
    /// back).
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Current rate Rc, bits per second.
    pub fn rate_bps(&self) -> f64 {
        self.rc
    }

    pub fn stats(&self) -> &DcqcnStats {
        &self.stats
    }

    pub fn flow(&self) -> u32 {
        self.ends.flow
    }

    /// Its data packet left the host's NIC: the QP may hand the NIC its next one (the NIC's
    /// arbiter; module doc; the NIC drops none: its buffer is unlimited and a scheme that
    /// drops at dequeue is refused there, `Scenario::validate`). Call [`poll`](Self::poll) after.
    pub fn nic_sent(&mut self) {
        self.at_nic = self.at_nic.saturating_sub(1);
    }

    /// Sends the next data packet if the rate allows it now and its previous one has left
    /// the NIC (at most one per instant).
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.catch_up(now);
        if self.snd_nxt < self.app.added() && now >= self.next_send && self.at_nic == 0 {
            self.at_nic += 1;
            let seq = self.snd_nxt;
            let len = (self.app.added() - seq).min(self.mss);
            self.emit(now, seq, len, out);
            self.snd_nxt += len;
            self.high_tx = self.high_tx.max(self.snd_nxt);
        }
        if self.rto_deadline.is_none() && self.snd_una < self.high_tx {
            self.rto_deadline = Some(now + self.rto);
        }
        self.sync_stats();
    }

    /// An ACK, a NAK ([`Kind::Ack`], NAK with the [`NAK`] flag) or a CNP ([`Kind::Cnp`])
    /// arrived. Other kinds are ignored. May push a data packet into `out`.
    pub fn on_ack(&mut self, now: Nanos, pkt: &Packet, out: &mut Vec<Packet>) {
        match pkt.kind {
            Kind::Cnp => {
                self.catch_up(now);
                self.on_cnp(now);
            }
            Kind::Ack => {
                self.catch_up(now);
                self.stats.acks_received += 1;
                // Never believe an acknowledgement of bytes not sent yet.
                let a = pkt.seq.min(self.high_tx);
                if a > self.snd_una {
                    self.snd_una = a;
                    // The receiver may be past a go-back-N restart point.
                    self.snd_nxt = self.snd_nxt.max(a);
                    // Progress restarts the timeout (as TCP's RFC 6298 §5.3).
                    self.rto_deadline = if self.snd_una < self.high_tx { Some(now + self.rto) } else { None };
                }
                if pkt.has(NAK) {
                    self.stats.naks_received += 1;
                    // Go-back-N: resend from the receiver's expected byte. A NAK older than
                    // what we know (a < snd_una) was answered already.
                    if a >= self.snd_una && a < self.snd_nxt {
                        self.snd_nxt = a;
                        self.stats.nak_rewinds += 1;
                    }
                }
            }
            _ => return,
        }
        self.poll(now, out);
    }

    /// A deadline passed (harmless if early, late or for a deadline that has moved): alpha
    /// decay, rate increase, retransmission timeout, pacing.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.catch_up(now);
        if let Some(d) = self.rto_deadline {
            if now >= d {
                if self.snd_una < self.high_tx {
                    self.stats.timeouts += 1;
                    self.snd_nxt = self.snd_una;
                    self.rto_deadline = Some(now + self.rto);
                } else {
                    self.rto_deadline = None;
                }
            }
        }
        self.poll(now, out);
    }

    // ---------------------------------------------------------------------------------

    fn at_line_rate(&self) -> bool {
        self.rc >= self.rates.line && self.rt >= self.rates.line
    }

    /// DCQCN eq. (1), the reaction to a CNP.
    fn on_cnp(&mut self, now: Nanos) {
        self.stats.cnps_received += 1;
        self.stats.rate_cuts += 1;
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.rates.min);
        self.alpha = (1.0 - self.g) * self.alpha + self.g;
        self.t_events = 0;
        self.bc_events = 0;
        self.byte_acc = 0;
        self.alpha_deadline = now + self.alpha_timer;
        self.rate_deadline = now + self.rate_timer;
        self.sync_stats();
    }

    /// Fires the alpha and rate timers whose deadlines are <= now, in order of their
    /// periods (they touch disjoint state, so their mutual order does not matter). Starts
    /// both timers at the first call.
    fn catch_up(&mut self, now: Nanos) {
        if !self.started {
            self.started = true;
            self.alpha_deadline = now + self.alpha_timer;
            self.rate_deadline = now + self.rate_timer;
            return;
        }
        if now >= self.alpha_deadline {
            // DCQCN eq. (2), once per elapsed period.
            let n = (now - self.alpha_deadline) / self.alpha_timer + 1;
            if n <= ALPHA_LOOP_MAX {
                for _ in 0..n {
                    self.alpha *= 1.0 - self.g;
                }
            } else {
                self.alpha *= (1.0 - self.g).powf(n as f64);
            }
            self.stats.alpha_decays += n;
            self.alpha_deadline += n * self.alpha_timer;
        }
        let mut replayed = 0u32;
        while now >= self.rate_deadline {
            if self.at_line_rate() || replayed >= MAX_REPLAY {
                // Nothing can increase (or the replay cap is hit): let the elapsed periods
                // lapse; a CNP restarts the timer.
                let n = (now - self.rate_deadline) / self.rate_timer + 1;
                self.rate_deadline += n * self.rate_timer;
                break;
            }
            self.rate_deadline += self.rate_timer;
            self.t_events = self.t_events.saturating_add(1);
            self.stats.timer_events += 1;
            self.increase();
            replayed += 1;
        }
    }

    /// One rate-increase event (DCQCN eqs. 3-4 and hyper increase), after the event has
    /// been counted in `t_events` or `bc_events`.
    fn increase(&mut self) {
        if self.at_line_rate() {
            return;
        }
        let line = self.rates.line;
        match Stage::of(self.t_events, self.bc_events, self.f) {
            Stage::FastRecovery => self.stats.fast_recovery_steps += 1,
            Stage::AdditiveIncrease => {
                self.rt = (self.rt + self.rates.ai).min(line);
                self.stats.additive_steps += 1;
            }
            Stage::HyperIncrease(i) => {
                self.rt = (self.rt + i as f64 * self.rates.hai).min(line);
                self.stats.hyper_steps += 1;
            }
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(line);
        if self.rt - self.rc < 1.0 {
            self.rc = self.rt;
        }
    }

    fn emit(&mut self, now: Nanos, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let size = len + TCP_IP_HEADER as u64;
        let fl = self.app.push_flag(seq, len);
        if seq < self.high_tx {
            self.stats.retransmitted_bytes += len.min(self.high_tx - seq);
        }
        self.stats.sent_bytes += len;
        self.stats.sent_packets += 1;
        // Pacing at the current rate; at least 1 ns so one instant sends one packet.
        let gap = ((size * 8) as f64 * 1e9 / self.rc).ceil().max(1.0);
        self.next_send = now.saturating_add(gap as Nanos);
        out.push(self.ends.data(now, seq, len as u32, Ecn::Ect0, fl, self.dscp));
        // The byte counter (QCN / DCQCN §3.1): one rate-increase event per B bytes sent.
        self.byte_acc += size;
        while self.byte_acc >= self.byte_counter {
            self.byte_acc -= self.byte_counter;
            self.bc_events = self.bc_events.saturating_add(1);
            self.stats.byte_counter_events += 1;
            self.increase();
        }
    }

    fn sync_stats(&mut self) {
        self.stats.rate_bps = self.rc;
        self.stats.target_rate_bps = self.rt;
        self.stats.alpha = self.alpha;
    }

    /// Test access: alpha and target rate without going through stats.
    #[cfg(test)]
    pub(crate) fn rp(&self) -> (f64, f64, f64) {
        (self.rc, self.rt, self.alpha)
    }
}
