//! The `linux` profile's receiver: when Linux acknowledges, what its ACKs carry (cumulative
//! ACK, SACK blocks, ECN-Echo, the timestamp echo), and reassembly.
//!
//! Read RFC 1122 §4.2.3.2 and RFC 5681 §4.2 (delayed ACKs), RFC 2018 §4 (SACK blocks),
//! RFC 7323 §4.3 (which timestamp an ACK echoes), RFC 3168 §6.1.3 and RFC 8257 §3.2 (ECN
//! echo), then the kernel: net/ipv4/tcp_input.c `tcp_data_queue`, `tcp_event_data_recv`,
//! `tcp_incr_quickack`, `tcp_enter_quickack_mode`, `__tcp_ack_snd_check`,
//! `tcp_measure_rcv_mss`, `__tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`,
//! `tcp_sack_new_ofo_skb`, `tcp_sack_remove`, `tcp_replace_ts_recent`; tcp_output.c
//! `tcp_send_delayed_ack`, `tcp_event_ack_sent`; tcp_timer.c `tcp_delack_timer_handler`;
//! tcp_dctcp.h `dctcp_ece_ack_update`.
//!
//! When an ACK goes out, as Linux decides (`__tcp_ack_snd_check`):
//! - in quick-ACK mode, every segment: `quick` ACKs of new data, 16 (`TCP_MAX_QUICKACKS`)
//!   at the first data of the connection and again after the receiver was idle longer than
//!   its RTO (`tcp_event_data_recv`); 2 more on CE under classic ECN (`__tcp_ecn_check_ce`)
//!   and on a not-ECT segment after ECT ones (a retransmission); 16 on a duplicate segment;
//! - otherwise when more than one full segment (`rcv_mss`) is unacknowledged, i.e. every
//!   second full segment;
//! - at once for a segment shorter than `rcv_mss` (`tcp_measure_rcv_mss` sets
//!   `ICSK_ACK_PUSHED`, and `tcp_cleanup_rbuf` acknowledges when the application reads it:
//!   the simulated application reads at once), for out-of-order data and for each segment
//!   while a hole is being filled (the SACK path of `__tcp_ack_snd_check`), for the segment
//!   that fills the last hole (`ICSK_ACK_NOW`, RFC 5681 §4.2), for a data segment with CWR
//!   (`tcp_ecn_accept_cwr`), and when DCTCP's CE state changes;
//! - otherwise at the delayed-ACK timer, `ato` after the first unacknowledged segment.
//!   `ato` starts at `TCP_ATO_MIN` (= `TCP_DELACK_MIN`, 40 ms; `transport.delayed_ack_timeout`
//!   sets it, as datacenter kernels lower it), follows the segments' inter-arrival times
//!   (`tcp_event_data_recv`) and doubles when the timer fires (`tcp_delack_timer_handler`),
//!   each time capped at the receiver's RTO. `tcp_send_delayed_ack` bounds an `ato` above the
//!   floor by max(smoothed RTT, floor): the receiver's RTT comes from the handshake, which the
//!   SYN-less model does not have, so it is taken as below the floor (true of every built-in
//!   scenario), and the timer never exceeds the floor. It runs shorter when the receiver's
//!   RTO (`rto_min` stands for it) is below the floor, as in the kernel (a test shows it).
//!
//! What an ACK carries (in an IP header that is ECT(0) under DCTCP, whose sockets set ECT on
//! every packet, and Not-ECT otherwise: `tcp_ecn_send`):
//! - SACK blocks (RFC 2018 §4): the block holding the most recently received segment
//!   first, then the most recently reported others, 3 on the wire (4 remembered, as Linux);
//!   blocks at or below the cumulative ACK are dropped (`tcp_sack_remove`). Each block is
//!   the whole contiguous run of held data, as the RFC asks (Linux's new block covers only
//!   the arriving segment when the run's older block was pushed out of its four; this
//!   differs only with more than four holes). No D-SACK (RFC 2883).
//! - The echoed `tx_ns` is TS.Recent (RFC 7323 §4.3, `tcp_replace_ts_recent`): updated from
//!   a segment that starts at or below the last ACK sent (`rcv_wup`), so a delayed ACK
//!   echoes the earliest unacknowledged segment's send time, a duplicate ACK for
//!   out-of-order data the last in-order segment's (the first segment's before any, standing
//!   in for the SYN), and a retransmission that fills the hole its own.
//! - ECN-Echo: RFC 3168 (classic ECN, `TCP_ECN_DEMAND_CWR`): set from a CE segment until a
//!   segment with CWR arrives. DCTCP (algorithms with `needs_ecn`, `dctcp_ece_ack_update`):
//!   ECE = the CE bit of the last segment; when it changes while a delayed ACK is pending,
//!   an ACK up to the previous segment with the old ECE goes first (RFC 8257 §3.2), then the
//!   new segment is acknowledged at once.
//!
//! Simplifications (no receive buffer is modelled; the application reads at once):
//! - Quick ACKs at connection start: 16. The kernel's count is rcv_wnd / (2 rcv_mss) capped
//!   at 16, which is 5 with the initial 10-segment window (`tcp_select_initial_window`), but
//!   `tcp_grow_window` then keeps `quick` at 1 or more for every segment while the advertised
//!   window grows towards its clamp (about the first 20 segments with the default
//!   `tcp_rmem`): Linux acknowledges every segment at first, which 16 approximates. Later
//!   quick ACKs from receive-buffer autotuning (`tcp_rcv_space_adjust`) are not modelled;
//!   after idle the kernel's count uses the grown window, 16.
//! - No SACK compression (Linux ≥ 4.18 sends the first three duplicate ACKs for a given
//!   `rcv_nxt` at once, then holds them for min(RTT/20, 1 ms) or 44 ACKs): every
//!   out-of-order segment is acknowledged at once, as the issue asks.
//! - Never in "ping-pong" mode (the receiver sends no data). The segment that carries the
//!   last byte the application handed over (`flags::PSH`) is Linux's PSH segment:
//!   acknowledged at once only when shorter than `rcv_mss`.

use super::accept::{Listener, Step};
use super::ca::CongestionOps;
use super::congestion_ops;
use super::gro::{Aggregate, Gro};
use super::sack_option::{SackBlocks, SackLog, MAX_SACK_BLOCKS};
use crate::packet::{flags, Ecn, Kind, Packet};
use crate::tcp::config::TcpConfig;
use crate::tcp::receiver::ReceiverStats;
use crate::transport::app::Endpoints;
use crate::transport::reassembly::Reassembly;
use ecnlab_core::units::Nanos;

/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_MSS_DEFAULT`: `rcv_mss` before the first full segment (`tcp_initialize_rcv_mss`).
const MSS_DEFAULT: u32 = 536;
/// SACK blocks remembered (`TCP_NUM_SACKS`).
const NUM_SACKS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EchoMode {
    /// ECN not negotiated.
    None,
    /// RFC 3168: ECE latched until CWR.
    Rfc3168,
    /// DCTCP's CE state machine.
    Dctcp,
}

/// A Linux receiver for one flow (the API of [`crate::tcp::TcpReceiver`], plus
/// [`sack_log`](Self::sack_log)).
#[derive(Clone, Debug)]
pub struct LinuxReceiver {
    ends: Endpoints,
    mode: EchoMode,
    /// `transport.delayed_ack = 2` (Linux's rule); 1 ACKs every segment, as a socket with
    /// `TCP_QUICKACK` set after every read.
    delayed: bool,
    /// SACK negotiated (`transport.sack`; `net.ipv4.tcp_sack`): ACKs carry SACK blocks.
    sack: bool,
    /// `TCP_ATO_MIN` / `TCP_DELACK_MIN`.
    ato_min: Nanos,
    /// The receiver's RTO (`icsk_rto`): idle detection and the bound of `ato`.
    rto: Nanos,
    /// Largest segment the sender sends (`advmss`).
    advmss: u32,

    /// `rcv_nxt` and the out-of-order queue.
    data: Reassembly,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    rcv_wup: u64,
    /// SACK blocks to report, most recent first (`selective_acks`).
    sacks: [(u64, u64); NUM_SACKS],
    num_sacks: usize,
    /// Estimated sender MSS (`icsk_ack.rcv_mss`).
    rcv_mss: u32,
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// Delayed-ACK timeout estimate (`icsk_ack.ato`; None before the first data).
    ato: Option<Nanos>,
    /// Arrival time of the last in-order data (`icsk_ack.lrcvtime`).
    lrcvtime: Nanos,
    /// Data arrived since the last ACK (`ICSK_ACK_SCHED`).
    ack_scheduled: bool,
    /// This segment must be acknowledged at once (`ICSK_ACK_NOW`).
    ack_now: bool,
    /// A duplicate segment arrived: the next ACK carries a D-SACK (`tcp_dsack_set`).
    dsack: bool,
    /// Delayed-ACK timer (`ICSK_ACK_TIMER` and its deadline).
    delack_deadline: Option<Nanos>,
    /// TS.Recent: the `tx_ns` the next ACK echoes, and the DSCP of the last segment.
    ts_recent: Nanos,
    dscp: u8,
    /// ECE on outgoing ACKs (`TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// An ECT or CE segment was seen (`TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// DCTCP: CE of the last segment, and `rcv_nxt` after it (`ce_state`, `prior_rcv_nxt`).
    ce_state: bool,
    prior_rcv_nxt: u64,
    sack_log: SackLog,
    /// The handshake (`transport.handshake`): the connection request's state.
    listen: Listener,
    /// GRO (`host.gro`): segments held for the next NAPI poll; None when off.
    gro: Option<Gro>,
    /// The aggregates of a poll (reused).
    batch: Vec<Aggregate>,
    stats: ReceiverStats,
}

impl LinuxReceiver {
    /// `src` is the receiver host, `dst` the sender host.
    pub fn new(cfg: &TcpConfig, flow: u32, src: u16, dst: u16) -> Self {
        let mode = if congestion_ops(cfg).needs_ecn() {
            EchoMode::Dctcp
        } else if cfg.cc.uses_ecn() {
            EchoMode::Rfc3168
        } else {
            EchoMode::None
        };
        LinuxReceiver {
            ends: Endpoints { flow, src: dst, dst: src },
            mode,
            delayed: cfg.delayed_ack >= 2,
            sack: cfg.sack,
            ato_min: cfg.delayed_ack_timeout.ns().max(1),
            rto: cfg.rto_min.ns().max(1),
            advmss: cfg.mss,
            data: Reassembly::default(),
            rcv_wup: 0,
            sacks: [(0, 0); NUM_SACKS],
            num_sacks: 0,
            rcv_mss: cfg.mss.min(MSS_DEFAULT),
            quick: 0,
            ato: None,
            lrcvtime: 0,
            ack_scheduled: false,
            ack_now: false,
            dsack: false,
            delack_deadline: None,
            ts_recent: 0,
            dscp: 0,
            demand_cwr: false,
            ecn_seen: false,
            ce_state: false,
            prior_rcv_nxt: 0,
            sack_log: SackLog::default(),
            listen: Listener::new(cfg.handshake, cfg.rto_syn.ns(), cfg.synack_retries),
            gro: None,
            batch: Vec::new(),
            stats: ReceiverStats::default(),
        }
    }

    /// GRO at the host's NIC, its NAPI poll `coalesce` after a batch's first packet (None:
    /// off, TCP sees each wire segment as it arrives).
    pub fn with_gro(mut self, coalesce: Option<Nanos>) -> Self {
        self.gro = coalesce.map(|c| Gro::new(c, self.advmss));
        self
    }

    /// In-order bytes received.
    pub fn delivered_bytes(&self) -> u64 {
        self.data.rcv_nxt()
    }

    /// The next deadline: GRO's poll, if segments are held, or the delayed ACK, if one is
    /// being held back.
    pub fn timer(&self) -> Option<Nanos> {
        let t = match self.gro.as_ref().and_then(Gro::poll_at) {
            Some(p) => Some(self.delack_deadline.map_or(p, |d| d.min(p))),
            None => self.delack_deadline,
        };
        match self.listen.timer() {
            Some(s) => Some(t.map_or(s, |t| t.min(s))),
            None => t,
        }
    }

    /// SYN-ACK retransmissions (the handshake's timeouts at this end).
    pub fn synack_timeouts(&self) -> u64 {
        self.listen.synack_timeouts
    }

    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// The SACK blocks of this connection's ACKs, by the tag in their `payload`.
    pub fn sack_log(&self) -> &SackLog {
        &self.sack_log
    }

    /// Whether the next ACK would carry ECE.
    pub fn ece(&self) -> bool {
        self.mode != EchoMode::None && self.demand_cwr
    }

    /// Quick ACKs left (for tests and probes).
    pub fn quick_acks_left(&self) -> u32 {
        self.quick
    }

    /// A data segment arrived; pushes the ACKs it triggers.
    pub fn on_data(&mut self, now: Nanos, pkt: &Packet, out: &mut Vec<Packet>) {
        if pkt.kind != Kind::Data {
            return;
        }
        match self.listen.on_packet(now, pkt) {
            Step::SynAck(echo) => return self.send_synack(echo, pkt.dscp, out),
            Step::Done => return,
            Step::Data => {}
        }
        match self.gro.as_mut() {
            Some(g) => g.receive(now, pkt),
            None => self.on_skb(now, pkt, 1, pkt.payload, out),
        }
    }

    /// TCP's receive path for one skb (`tcp_rcv_established` / `tcp_data_queue`): a wire
    /// segment, or a GRO aggregate of `segments` segments of `gso_size` bytes each.
    fn on_skb(&mut self, now: Nanos, pkt: &Packet, segments: u32, gso_size: u32, out: &mut Vec<Packet>) {
        let first = self.stats.segments == 0;
        self.stats.segments += segments as u64;
        if pkt.ecn == Ecn::Ce {
            self.stats.ce_segments += segments as u64;
        }
        self.dscp = pkt.dscp;
        let start = pkt.seq;
        let end = pkt.seq + pkt.payload as u64;
        // RFC 7323 §4.3 / tcp_replace_ts_recent (with PAWS: never backwards). The handshake
        // would have set TS.Recent from the SYN; without one the first segment stands in.
        if first || (start <= self.rcv_wup && pkt.tx_ns >= self.ts_recent) {
            self.ts_recent = pkt.tx_ns;
        }
        // tcp_ecn_accept_cwr: the sender reduced; ACK at once, its window may be tiny.
        if self.mode != EchoMode::None && pkt.has(flags::CWR) {
            self.demand_cwr = false;
            if pkt.payload > 0 {
                self.ack_now = true;
            }
        }

        if end <= self.data.rcv_nxt() {
            // A retransmission of data we hold: quick-ACK mode, ACK at once.
            self.stats.duplicates += 1;
            self.dsack = true;
            self.enter_quickack_mode(MAX_QUICKACKS);
            self.ack_scheduled = true;
        } else if start > self.data.rcv_nxt() {
            // tcp_data_queue_ofo.
            self.stats.out_of_order += 1;
            self.ecn_check_ce(pkt, out);
            let run = self.data.insert(start, end);
            self.sack_new_block(run);
            self.ack_scheduled = true;
        } else {
            self.data.advance(end);
            self.event_data_recv(now, pkt, gso_size, out);
            if self.data.has_gap() {
                self.data.absorb();
                if !self.data.has_gap() {
                    // RFC 5681 §4.2: ACK at once when the last gap is filled.
                    self.ack_now = true;
                }
            }
            self.sack_remove();
        }
        self.ack_snd_check(now, out);
    }

    /// A deadline passed (harmless if early or disarmed): GRO's NAPI poll, which hands TCP
    /// the aggregates it holds, and the delayed-ACK timer.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if let Some(echo) = self.listen.on_timer(now) {
            let dscp = self.dscp;
            self.send_synack(echo, dscp, out);
        }
        if let Some(g) = self.gro.as_mut() {
            let mut batch = std::mem::take(&mut self.batch);
            g.poll(now, &mut batch);
            for a in batch.drain(..) {
                let gso = if a.segments > 1 { a.gso_size } else { a.skb.payload };
                self.on_skb(now, &a.skb, a.segments, gso, out);
            }
            self.batch = batch;
        }
        match self.delack_deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        self.delack_deadline = None;
        if self.ack_scheduled {
            // tcp_delack_timer_handler: the delayed ACK was "missed", inflate ato.
            if let Some(a) = self.ato {
                self.ato = Some((a * 2).min(self.rto));
            }
            self.send_ack(out);
        }
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, max_quickacks: u32) {
        self.quick = self.quick.max(max_quickacks);
    }

    /// `tcp_enter_quickack_mode`.
    fn enter_quickack_mode(&mut self, max_quickacks: u32) {
        self.incr_quickack(max_quickacks);
        self.ato = Some(self.ato_min);
    }

    /// `tcp_event_data_recv`: in-order data arrived.
    fn event_data_recv(&mut self, now: Nanos, pkt: &Packet, gso_size: u32, out: &mut Vec<Packet>) {
        self.ack_scheduled = true;
        // tcp_measure_rcv_mss (`gso_size ?: skb->len`): a full segment sets the estimate; a
        // shorter one is "pushed".
        if gso_size >= self.rcv_mss {
            self.rcv_mss = gso_size.min(self.advmss);
        } else {
            self.ack_now = true;
        }
        match self.ato {
            None => {
                // The first data of the connection.
                self.incr_quickack(MAX_QUICKACKS);
                self.ato = Some(self.ato_min);
            }
            Some(ato) => {
                let m = now.saturating_sub(self.lrcvtime);
                if m <= self.ato_min / 2 {
                    self.ato = Some(ato / 2 + self.ato_min / 2);
                } else if m < ato {
                    self.ato = Some((ato / 2 + m).min(self.rto));
                } else if m > self.rto {
                    // Idle longer than the RTO: the sender restarts from a small window.
                    self.incr_quickack(MAX_QUICKACKS);
                }
            }
        }
        self.lrcvtime = now;
        self.ecn_check_ce(pkt, out);
    }

    /// `__tcp_ecn_check_ce`, with DCTCP's `dctcp_ece_ack_update` for `needs_ecn`.
    fn ecn_check_ce(&mut self, pkt: &Packet, out: &mut Vec<Packet>) {
        if self.mode == EchoMode::None {
            return;
        }
        match pkt.ecn {
            Ecn::NotEct => {
                // After ECT segments a not-ECT one is probably a retransmission.
                if self.ecn_seen {
                    self.enter_quickack_mode(2);
                }
            }
            Ecn::Ce => {
                if self.mode == EchoMode::Dctcp {
                    self.dctcp_ece_ack_update(true, out);
                }
                if !self.demand_cwr {
                    // "Better not delay acks, sender can have a very low cwnd."
                    self.enter_quickack_mode(2);
                    self.demand_cwr = true;
                }
                self.ecn_seen = true;
            }
            _ => {
                if self.mode == EchoMode::Dctcp {
                    self.dctcp_ece_ack_update(false, out);
                }
                self.ecn_seen = true;
            }
        }
    }

    /// `dctcp_ece_ack_update` (RFC 8257 §3.2).
    fn dctcp_ece_ack_update(&mut self, ce: bool, out: &mut Vec<Packet>) {
        if self.ce_state != ce {
            if self.delack_deadline.is_some() {
                // Acknowledge the segments before this one with the old CE state.
                let (ack, ece) = (self.prior_rcv_nxt, self.ce_state);
                self.push_ack(ack, ece, out);
                if ack == self.data.rcv_nxt() {
                    // An ordinary ACK after all (out-of-order arrival): it clears the timer.
                    self.ack_sent();
                }
            }
            self.ack_now = true;
        }
        self.prior_rcv_nxt = self.data.rcv_nxt();
        self.ce_state = ce;
        self.demand_cwr = ce;
    }

    /// `__tcp_ack_snd_check`.
    fn ack_snd_check(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if !self.ack_scheduled {
            return;
        }
        let more_than_one_full = self.data.rcv_nxt() - self.rcv_wup > self.rcv_mss as u64;
        if !self.delayed || more_than_one_full || self.quick > 0 || self.ack_now || self.data.has_gap() {
            self.send_ack(out);
            return;
        }
        // tcp_send_delayed_ack: the RTT bound caps ato at the floor (module doc).
        let ato = self.ato.unwrap_or(self.ato_min).min(self.ato_min);
        let mut deadline = now + ato;
        if let Some(d) = self.delack_deadline {
            // The timer is about to fire anyway: ACK now.
            if d <= now + ato / 4 {
                self.send_ack(out);
                return;
            }
            deadline = deadline.min(d);
        }
        self.delack_deadline = Some(deadline);
    }

    /// Sends an ACK of everything received (`tcp_send_ack` + `tcp_event_ack_sent`).
    fn send_ack(&mut self, out: &mut Vec<Packet>) {
        let ece = self.ece();
        self.push_ack(self.data.rcv_nxt(), ece, out);
        self.ack_sent();
    }

    /// `tcp_event_ack_sent`: one quick ACK used, timer cleared, window edge recorded.
    fn ack_sent(&mut self) {
        if self.ack_scheduled && self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = Some(self.ato_min);
            }
        }
        self.ack_scheduled = false;
        self.ack_now = false;
        self.delack_deadline = None;
        self.rcv_wup = self.data.rcv_nxt();
    }

    fn push_ack(&mut self, ack: u64, ece: bool, out: &mut Vec<Packet>) {
        let mut blocks = SackBlocks::default();
        let n = if self.sack { self.num_sacks.min(MAX_SACK_BLOCKS) } else { 0 };
        for &(s, e) in &self.sacks[..n] {
            blocks.push(s, e);
        }
        let tag = self.sack_log.record(&blocks);
        self.stats.acks_sent += 1;
        if ece {
            self.stats.ece_acks_sent += 1;
        }
        // `tcp_ecn_send` clears ECT on pure ACKs only when the congestion control does not
        // need ECN; DCTCP's sockets set ECT at the handshake (`tcp_ecn_send_syn`,
        // `tcp_ecn_send_synack`), so its ACKs leave ECT(0), classic ECN's Not-ECT.
        let ecn = if self.mode == EchoMode::Dctcp { Ecn::Ect0 } else { Ecn::NotEct };
        let mut fl = if ece { flags::ECE } else { 0 };
        if std::mem::take(&mut self.dsack) {
            fl |= flags::DSACK;
        }
        out.push(self.ends.reply(Kind::Ack, ack, self.ts_recent, tag, ecn, fl, self.dscp));
    }

    /// The SYN-ACK, echoing the SYN's timestamp (ECT under a congestion control that needs
    /// ECN: `tcp_ecn_send_synack`, as its ACKs).
    fn send_synack(&mut self, echo: Nanos, dscp: u8, out: &mut Vec<Packet>) {
        self.dscp = dscp;
        let ecn = if self.mode == EchoMode::Dctcp { Ecn::Ect0 } else { Ecn::NotEct };
        out.push(self.ends.reply(Kind::Ack, 0, echo, 0, ecn, flags::SYN, dscp));
    }

    /// RFC 2018 §4: the run holding the new segment goes first; runs it absorbed leave.
    fn sack_new_block(&mut self, (s, e): (u64, u64)) {
        let mut kept = [(0, 0); NUM_SACKS];
        let mut n = 1;
        kept[0] = (s, e);
        for &(bs, be) in &self.sacks[..self.num_sacks] {
            let inside = bs >= s && be <= e;
            if !inside && n < NUM_SACKS {
                kept[n] = (bs, be);
                n += 1;
            }
        }
        self.sacks = kept;
        self.num_sacks = n;
    }

    /// `tcp_sack_remove`: blocks the cumulative ACK has reached go.
    fn sack_remove(&mut self) {
        let mut n = 0;
        for i in 0..self.num_sacks {
            if self.sacks[i].0 > self.data.rcv_nxt() {
                self.sacks[n] = self.sacks[i];
                n += 1;
            }
        }
        self.num_sacks = n;
    }
}

#[cfg(test)]
mod tests;
