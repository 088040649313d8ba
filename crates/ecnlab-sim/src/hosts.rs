//! The hosts: connections (each owning its sans-IO `sender` and `receiver`, [`crate::tcp`],
//! [`crate::dcqcn`]), the flows (messages) they carry, persistent-connection pools per host
//! pair, the endpoints' timers, and flow completion.
//!
//! Hosts know nothing of links or events' order: each operation takes `now`, writes the
//! packets it emits into [`Hosts::out`], and tells the event loop ([`crate::sim`]) whether
//! to send them and then re-arm an endpoint's timer, in that order (the order fixes the
//! events' insertion numbers, so it is part of the results). At most one live timer event
//! per endpoint is kept; stale ones are recognised when they fire.

use crate::config::{RttVariation, RttVariationMode, Scenario};
use crate::dcqcn::{DcqcnReceiver, DcqcnSender};
use crate::event::{End, Ev, EventQueue};
use crate::flow::Flow;
use crate::packet::Packet;
use crate::tcp::linux::{LinuxReceiver, LinuxSender};
use crate::tcp::{Profile, TcpConfig, TcpReceiver, TcpSender};
use crate::transport::{Receiver, Sender};
use crate::wire::Wire;
use crate::workload::FlowArrival;
use ecnlab_core::rng::{Rng, Stream};
use ecnlab_core::units::{tx_time_ns, Nanos};
use std::collections::HashMap;

/// A transport connection between two hosts. It carries one long-lived flow, or a
/// sequence of messages (flows) one after another (persistent connections).
pub(crate) struct Conn {
    pub src: u16,
    pub dst: u16,
    pub sender: Sender,
    pub receiver: Receiver,
    /// Time of the pending timer event of each end ([`End`]).
    timer_at: [Option<Nanos>; 2],
    /// The message being sent, if any.
    current: Option<u32>,
    /// A message complete at its receiver whose last bytes the sender has not yet seen
    /// acknowledged (`linux`: the receiver may delay that ACK past the sender's RTO): its
    /// timeouts and retransmissions are still counting, since they resend its bytes.
    settling: Option<u32>,
    /// Application rate limit: one MSS written every `app_gap` ns (listed flows only).
    app_gap: Option<Nanos>,
    app_written: u64,
    /// The application stopped: the connection is torn down, late packets are ignored.
    pub closed: bool,
    /// Opened for generated traffic: returns to its host pair's idle pool when a message
    /// completes (listed flows keep their own connections, which may use another `cc`).
    pooled: bool,
}

impl Conn {
    fn deadline(&self, end: End) -> Option<Nanos> {
        match end {
            End::Sender => self.sender.timer(),
            End::Receiver => self.receiver.timer(),
        }
    }
}

/// Every host's connections and flows.
pub(crate) struct Hosts {
    pub conns: Vec<Conn>,
    /// Each connection's ECMP hash key, apart from the (large) `Conn` so that forwarding
    /// reads 8 dense bytes instead of a cold line of a connection's state.
    pub conn_ecmp: Vec<u64>,
    pub flows: Vec<Flow>,
    /// Idle connections per (src, dst) pair, for persistent connections.
    idle_conns: HashMap<(u16, u16), Vec<u32>>,
    /// Packets emitted by the last operation, for the event loop to send.
    pub out: Vec<Packet>,
    pub mss: u32,
    /// Number of `[[flows]]` entries (generated flows' `spec` follows them).
    pub n_listed_specs: u32,
    pub transport: TcpConfig,
    persistent: bool,
    pias: Vec<u64>,
    /// DSCP of every ACK a host sends (`host.ack_dscp`), if set.
    pub ack_dscp: Option<u8>,
    /// The senders take their data packets' TX completions from their NICs (the `linux`
    /// profile's TCP Small Queues): the loop tells each one ([`Hosts::tx_scheduled`]).
    pub tx_completions: bool,
    /// The `linux` hosts' NIC offloads (`host.tso`, `host.gro`).
    offloads: crate::tcp::linux::offload::Offloads,
    /// Line rate of each host's access link (a DCQCN sender's starting rate).
    access_rate_bps: Vec<u64>,
    rtt_variation: Option<RttVariation>,
    host_delay_ns: Vec<Nanos>,
    delay_rng: Rng,
    seed: u64,
    stop_when_done: bool,
    /// Flows with a size, and how many of them have completed.
    pub finite_flows: usize,
    pub finite_done: usize,
    has_long_lived: bool,
    /// Every flow with a size has completed and the scenario stops then.
    pub done: bool,
}

impl Hosts {
    /// The hosts of `scn` (`access_rate_bps` per host) with `n_generated` generated flows to
    /// come; the listed flows are added by [`Hosts::add_listed_flows`].
    pub(crate) fn new(scn: &Scenario, seed: u64, access_rate_bps: Vec<u64>, n_generated: usize) -> Hosts {
        let mut delay_rng = Rng::named(seed, Stream::RttVariation);
        let host_delay_ns = match &scn.rtt_variation {
            Some(rv) if rv.mode == RttVariationMode::PerHost => {
                (0..access_rate_bps.len()).map(|_| rv.delay.sample(&mut delay_rng)).collect()
            }
            _ => vec![0; access_rate_bps.len()],
        };
        Hosts {
            conns: Vec::new(),
            conn_ecmp: Vec::new(),
            flows: Vec::with_capacity(n_generated + scn.flows.len()),
            idle_conns: HashMap::new(),
            out: Vec::with_capacity(64),
            mss: scn.transport.mss,
            n_listed_specs: scn.flows.len() as u32,
            transport: scn.transport.clone(),
            persistent: scn.host.persistent_connections,
            pias: scn.host.pias_thresholds.iter().map(|b| b.0).collect(),
            ack_dscp: scn.host.ack_dscp,
            tx_completions: scn.transport.profile == Profile::Linux && scn.transport.small_queues && scn.has_tcp(),
            offloads: scn.host.offloads(scn.transport.profile),
            access_rate_bps,
            rtt_variation: scn.rtt_variation.clone(),
            host_delay_ns,
            delay_rng,
            seed,
            stop_when_done: scn.metrics.stop_when_done,
            finite_flows: 0,
            finite_done: 0,
            has_long_lived: scn.flows.iter().any(|f| f.size.is_none()),
            done: false,
        }
    }

    /// The listed flows (`[[flows]]`), each on its own connection, with their start and stop
    /// events. Start jitter comes from a stream of its own, drawn only for entries that ask
    /// for it, so other runs are unchanged.
    pub(crate) fn add_listed_flows(&mut self, scn: &Scenario, events: &mut EventQueue<Ev>, wire: &mut Wire) {
        let mut jitter_rng = Rng::named(self.seed, Stream::StartJitter);
        for (si, f) in scn.flows.iter().enumerate() {
            let mut cfg = scn.transport.clone();
            if let Some(cc) = f.cc {
                cfg.cc = cc;
            }
            for _ in 0..f.count {
                let c = self.new_conn(&cfg, f.src as u16, f.dst as u16, f.class, wire);
                self.conns[c as usize].app_gap = f.rate.map(|r| tx_time_ns(cfg.mss as u64, r.0).max(1));
                let id = self.flows.len() as u32;
                let start = f.start.0 + f.start_jitter.filter(|j| j.0 > 0).map_or(0, |j| jitter_rng.below(j.0));
                self.flows.push(Flow::new(
                    c,
                    si as u32,
                    f.src as u16,
                    f.dst as u16,
                    f.class,
                    f.size.map(|s| s.0),
                    start,
                ));
                events.push(start, Ev::FlowStart(id));
                if let Some(stop) = f.stop {
                    events.push(stop.0, Ev::FlowStop(id));
                }
            }
        }
    }

    /// Open a connection (a sender at `src`, a receiver at `dst`); the wire learns its
    /// RTT-variation delay.
    fn new_conn(&mut self, cfg: &TcpConfig, src: u16, dst: u16, class: u8, wire: &mut Wire) -> u32 {
        let id = self.conns.len() as u32;
        let extra_delay_ns = match &self.rtt_variation {
            Some(rv) if rv.mode == RttVariationMode::PerFlow => rv.delay.sample(&mut self.delay_rng),
            Some(_) => self.host_delay_ns[src as usize],
            None => 0,
        };
        let (sender, receiver) = if cfg.cc.is_rate_based() {
            let line_rate = self.access_rate_bps[src as usize];
            (
                Sender::Dcqcn(DcqcnSender::new(&cfg.dcqcn, cfg.mss, line_rate, id, src, dst, class)),
                Receiver::Dcqcn(DcqcnReceiver::new(&cfg.dcqcn, id, dst, src)),
            )
        } else {
            match cfg.profile {
                Profile::Textbook => (
                    Sender::Tcp(TcpSender::new(cfg, id, src, dst, class)),
                    Receiver::Tcp(TcpReceiver::new(cfg, id, dst, src)),
                ),
                Profile::Linux => (
                    Sender::Linux(LinuxSender::new(cfg, id, src, dst, class).with_tso(self.offloads.gso_max)),
                    Receiver::Linux(LinuxReceiver::new(cfg, id, dst, src).with_gro(self.offloads.gro_poll)),
                ),
            }
        };
        self.conns.push(Conn {
            src,
            dst,
            sender,
            receiver,
            timer_at: [None; 2],
            current: None,
            settling: None,
            app_gap: None,
            app_written: 0,
            closed: false,
            pooled: false,
        });
        self.conn_ecmp.push(crate::routing::conn_key(self.seed, id));
        wire.set_conn_delay(id as usize, extra_delay_ns);
        id
    }

    /// A data packet reaches its receiver. False: the connection is closed (nothing to send,
    /// no timer to arm); else send [`Hosts::out`] and arm the receiver's timer.
    pub(crate) fn on_data(&mut self, now: Nanos, pkt: &Packet) -> bool {
        let c = pkt.flow as usize;
        if self.conns[c].closed {
            return false;
        }
        self.conns[c].receiver.on_data(now, pkt, &mut self.out);
        if self.conns[c].receiver.completion_bytes().is_some() {
            self.check_message_done(now, c);
        }
        true
    }

    /// An ACK (or a CNP) reaches its sender; as [`Hosts::on_data`], for the sender's timer.
    pub(crate) fn on_ack(&mut self, now: Nanos, pkt: &Packet) -> bool {
        let c = pkt.flow as usize;
        if self.conns[c].closed {
            return false;
        }
        let conn = &mut self.conns[c];
        conn.sender.on_ack(now, pkt, &conn.receiver, &mut self.out);
        if conn.settling.is_some() {
            self.settle(c, false);
        }
        if self.conns[c].receiver.completion_bytes().is_none() {
            self.check_message_done(now, c);
        }
        true
    }

    /// The settling message of connection `c` stops counting once the sender has all its
    /// bytes acknowledged (or `now_anyway`: a later message settles, the run ends); the
    /// message being sent counts from then on.
    fn settle(&mut self, c: usize, now_anyway: bool) {
        let conn = &mut self.conns[c];
        let Some(f) = conn.settling else { return };
        let flow = &mut self.flows[f as usize];
        if !now_anyway && conn.sender.acked_bytes() < flow.seq_start + flow.size.unwrap_or(0) {
            return;
        }
        let before = flow.timeouts;
        flow.count(&conn.sender, &conn.receiver);
        (flow.late_timeouts, flow.timeouts) = (flow.timeouts.saturating_sub(before), before);
        conn.settling = None;
        if let Some(next) = conn.current {
            self.flows[next as usize].count_from(&conn.sender, &conn.receiver);
        }
    }

    /// Connection `c`'s sender handed its NIC a data packet, which will have left it at `done`
    /// (or was refused: None).
    #[inline]
    pub(crate) fn tx_scheduled(&mut self, c: usize, done: Option<Nanos>) {
        self.conns[c].sender.tx_scheduled(done);
    }

    /// A data packet of connection `c` left its sender's NIC (DCQCN's NIC arbiter): returns
    /// whether to send [`Hosts::out`] and re-arm the sender's timer.
    pub(crate) fn nic_sent(&mut self, now: Nanos, c: usize) -> bool {
        let conn = &mut self.conns[c];
        if conn.closed {
            return false;
        }
        conn.sender.nic_sent(now, &mut self.out);
        true
    }

    /// The listed flow `f` starts; as [`Hosts::start_message`].
    pub(crate) fn flow_start(&mut self, events: &mut EventQueue<Ev>, now: Nanos, f: usize) -> Option<usize> {
        let c = self.flows[f].conn as usize;
        self.start_message(events, now, f, c)
    }

    /// The listed flow `f`'s application stops; its connection is torn down.
    pub(crate) fn flow_stop(&mut self, f: usize) {
        let c = self.flows[f].conn as usize;
        self.conns[c].closed = true;
    }

    /// A generated flow arrives at `now`: take an idle connection of the pair (persistent
    /// connections) or open a new one, and start it; as [`Hosts::start_message`].
    pub(crate) fn arrival(
        &mut self,
        events: &mut EventQueue<Ev>,
        now: Nanos,
        a: &FlowArrival,
        wire: &mut Wire,
    ) -> Option<usize> {
        let reuse = if self.persistent { self.idle_conns.get_mut(&(a.src, a.dst)).and_then(|v| v.pop()) } else { None };
        let c = match reuse {
            Some(c) => c,
            None => {
                let cfg = self.transport.clone();
                let c = self.new_conn(&cfg, a.src, a.dst, a.class, wire);
                self.conns[c as usize].pooled = true;
                c
            }
        };
        let f = self.flows.len();
        self.flows.push(Flow::new(c, self.n_listed_specs + a.source, a.src, a.dst, a.class, Some(a.size), now));
        self.start_message(events, now, f, c as usize)
    }

    /// Start message `f` on connection `c`. `Some(c)`: send [`Hosts::out`], then arm the
    /// sender's timer; `None`: a rate-limited application writes from its first tick on.
    fn start_message(&mut self, events: &mut EventQueue<Ev>, now: Nanos, f: usize, c: usize) -> Option<usize> {
        let pias = std::mem::take(&mut self.pias);
        let conn = &mut self.conns[c];
        let flow = &mut self.flows[f];
        flow.conn = c as u32;
        flow.seq_start = conn.sender.added_bytes();
        flow.count_from(&conn.sender, &conn.receiver);
        conn.current = Some(f as u32);
        conn.sender.set_dscp(flow.class);
        if !pias.is_empty() {
            conn.sender.set_pias(flow.seq_start, &pias);
        }
        self.pias = pias;
        match (flow.size, conn.app_gap) {
            (_, Some(_)) => {
                // Rate-limited application: it writes one MSS per tick.
                events.push(now, Ev::AppTick(c as u32));
                return None;
            }
            (Some(size), None) => conn.sender.add_data(size),
            (None, None) => conn.sender.add_data(crate::tcp::UNLIMITED.min(crate::dcqcn::UNLIMITED)),
        }
        conn.sender.poll(now, &mut self.out);
        Some(c)
    }

    /// A rate-limited application writes its next MSS. True: send [`Hosts::out`], then arm
    /// the sender's timer.
    pub(crate) fn app_tick(&mut self, events: &mut EventQueue<Ev>, now: Nanos, c: usize) -> bool {
        let mss = self.mss as u64;
        let conn = &mut self.conns[c];
        if conn.closed {
            return false;
        }
        let Some(f) = conn.current else { return false };
        let written = conn.app_written;
        let chunk = match self.flows[f as usize].size {
            Some(s) if written >= s => return false,
            Some(s) => mss.min(s - written),
            None => mss,
        };
        conn.sender.add_data(chunk);
        conn.app_written += chunk;
        conn.sender.poll(now, &mut self.out);
        let gap = conn.app_gap.expect("app tick without a rate");
        events.push(now + gap, Ev::AppTick(c as u32));
        true
    }

    /// The connection's current message is complete: record its FCT and free the
    /// connection for the next message. Complete means fully acknowledged (from its arrival
    /// to the ACK of its last byte, as the ns-2 scripts measure), or, for the `linux`
    /// profile, fully received in order (as the testbeds' applications measure: the
    /// receiver's delayed ACK of a last odd segment is not the application's wait;
    /// [`Receiver::completion_bytes`]).
    fn check_message_done(&mut self, now: Nanos, c: usize) {
        let conn = &mut self.conns[c];
        let Some(f) = conn.current else { return };
        let flow = &mut self.flows[f as usize];
        let Some(size) = flow.size else { return };
        let done_bytes = conn.receiver.completion_bytes().unwrap_or_else(|| conn.sender.acked_bytes());
        if done_bytes >= flow.seq_start + size {
            flow.finish = Some(now);
            self.finite_done += 1;
            if self.stop_when_done && !self.has_long_lived && self.finite_done == self.finite_flows {
                self.done = true;
            }
            let unacked = conn.sender.acked_bytes() < flow.seq_start + size;
            if unacked && conn.settling.is_some() {
                // An earlier message still settling stops here (its bytes came first, and
                // this one's are all received); this one counts from here.
                self.settle(c, true);
            }
            let conn = &mut self.conns[c];
            self.flows[f as usize].count(&conn.sender, &conn.receiver);
            if unacked {
                conn.settling = Some(f);
            }
            conn.current = None;
            if self.persistent && conn.pooled {
                self.idle_conns.entry((conn.src, conn.dst)).or_default().push(c as u32);
            }
        }
    }

    /// Keep one live event for the endpoint's deadline: a new event only when the deadline
    /// moved earlier than the pending one (later moves are caught when that one fires).
    pub(crate) fn arm(&mut self, events: &mut EventQueue<Ev>, now: Nanos, c: usize, end: End) {
        let conn = &mut self.conns[c];
        if let Some(t) = conn.deadline(end) {
            let pending = &mut conn.timer_at[end as usize];
            if pending.is_none_or(|p| t < p) {
                *pending = Some(t);
                events.push(t.max(now), Ev::Timer(c as u32, end));
            }
        }
    }

    /// An endpoint's timer event fires. `None`: stale (another event owns the timer) or the
    /// connection is closed; `Some(fired)`: send [`Hosts::out`] if the deadline had passed,
    /// then re-arm.
    pub(crate) fn timer(&mut self, now: Nanos, c: usize, end: End) -> Option<bool> {
        let conn = &mut self.conns[c];
        if conn.timer_at[end as usize] != Some(now) {
            return None; // stale: another event owns the timer
        }
        conn.timer_at[end as usize] = None;
        if conn.closed {
            return None;
        }
        let fired = conn.deadline(end).is_some_and(|t| t <= now);
        if fired {
            match end {
                End::Sender => conn.sender.on_timer(now, &mut self.out),
                End::Receiver => {
                    conn.receiver.on_timer(now, &mut self.out);
                    // GRO hands TCP its held segments at the NAPI poll, a receiver timer.
                    if conn.receiver.completion_bytes().is_some() {
                        self.check_message_done(now, c);
                    }
                }
            }
        }
        Some(fired)
    }

    /// Flows (messages) completed so far, and flows started so far.
    pub(crate) fn flow_progress(&self) -> (usize, usize) {
        (self.flows.iter().filter(|f| f.finish.is_some()).count(), self.flows.len())
    }

    /// Timeouts and retransmissions of the flows still settling or running at the end.
    pub(crate) fn settle_flow_counters(&mut self) {
        for c in 0..self.conns.len() {
            self.settle(c, true);
        }
        for (f, flow) in self.flows.iter_mut().enumerate() {
            if flow.finish.is_none() {
                let conn = &self.conns[flow.conn as usize];
                if conn.current == Some(f as u32) {
                    flow.count(&conn.sender, &conn.receiver);
                }
            }
        }
    }
}
