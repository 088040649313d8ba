//! The event loop: hosts, connections and flows as plain data in vectors, over the links
//! of [`crate::wire`], driven by one event queue (whose order of simultaneous events is
//! stated in [`crate::event`]).
//!
//! Packets are `Copy` structs moved between ring buffers and event nodes: nothing is
//! allocated per packet once those have grown to their high-water marks.
//!
//! Hosts run the sans-IO TCP state machines of [`crate::tcp`]: the loop hands them `now`
//! and the arriving packet, collects the packets they emit in a reused scratch vector, and
//! keeps at most one live timer event per state machine (stale ones are recognised when
//! they fire).

use crate::config::{RttVariation, RttVariationMode, Scenario};
use crate::dcqcn::{DcqcnReceiver, DcqcnSender};
use crate::event::EventQueue;
use crate::metrics::{FlowRecord, ProbeRecord};
use crate::packet::{Kind, Packet};
use crate::recorder::Recorder;
use crate::tcp::linux::{LinuxReceiver, LinuxSender};
use crate::tcp::{Profile, TcpConfig, TcpReceiver, TcpSender};
use crate::topology::Net;
use crate::traffic::{self, Arrivals, Probe};
use crate::transport::{Receiver, Sender};
use crate::wire::{Link, Wire};
use crate::workload::{self, HostInfo};
use ecnlab_core::marking::{MarkingConfig, SchemeName};
use ecnlab_core::port::{BufferPool, Port, PortConfig};
use ecnlab_core::rng::{Rng, Stream};
use ecnlab_core::units::{tx_time_ns, ByteSize, Nanos};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    TxDone(u32),
    /// A packet reaches the far end (a node) of the link it was sent on. The packet rides
    /// in the event itself: a link keeps no queue of packets in propagation, and an
    /// arrival reads nothing of the link it crossed (one cache line less per packet-hop).
    Arrive(u32, Packet),
    /// As `Arrive`, for a packet whose link had more packets waiting when it started: the
    /// link (its index here; the node is the link's far end) is owed its next dequeue,
    /// at the end of this packet's transmission, which is before this arrival. See
    /// [`Wire::catch_up`].
    ArriveResume(u32, Packet),
    /// A connection endpoint's deadline (RTO, delayed ACK, DCQCN timers).
    Timer(u32, End),
    /// A listed flow (`[[flows]]`) starts.
    FlowStart(u32),
    /// A listed long-lived flow's application stops; its connection is torn down.
    FlowStop(u32),
    AppTick(u32),
    /// The next generated flow (`[[traffic]]`) arrives; at most one such event is pending.
    NextArrival,
    ProbeSend(u32),
    Sample,
    Warmup,
}

/// The two ends of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Sender = 0,
    Receiver = 1,
}

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
    /// Application rate limit: one MSS written every `app_gap` ns (listed flows only).
    app_gap: Option<Nanos>,
    app_written: u64,
    /// The application stopped: the connection is torn down, late packets are ignored.
    pub closed: bool,
    /// Opened for generated traffic: returns to its host pair's idle pool when a message
    /// completes (listed flows keep their own connections, which may use another `cc`).
    pooled: bool,
}

impl Flow {
    pub(crate) fn seq_start(&self) -> u64 {
        self.seq_start
    }
}

impl Conn {
    fn deadline(&self, end: End) -> Option<Nanos> {
        match end {
            End::Sender => self.sender.timer(),
            End::Receiver => self.receiver.timer(),
        }
    }
}

/// A flow (message): `size` bytes on a connection, or a long-lived flow (`size` None).
pub(crate) struct Flow {
    pub conn: u32,
    /// `[[flows]]` index, or `flows.len() + [[traffic]] index` for generated flows.
    pub spec: u32,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub size: Option<u64>,
    pub start: Nanos,
    /// Sequence range of the message on its connection.
    seq_start: u64,
    pub finish: Option<Nanos>,
    timeouts_at_start: u64,
    rtx_at_start: u64,
    pub timeouts: u64,
    pub retransmits: u64,
}

/// Whole-run packet accounting (every packet a host sends is delivered, dropped, or still in
/// the network at the end).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counting {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

pub struct Simulator {
    pub(crate) now: Nanos,
    events: EventQueue<Ev>,
    pub(crate) net: Net,
    pub(crate) wire: Wire,
    /// `run_until` has taken the initial snapshot.
    started: bool,
    pub(crate) conns: Vec<Conn>,
    /// Each connection's ECMP hash key, apart from the (large) `Conn` so that forwarding
    /// reads 8 dense bytes instead of a cold line of a connection's state.
    conn_ecmp: Vec<u64>,
    pub(crate) flows: Vec<Flow>,
    /// Idle connections per (src, dst) pair, for persistent connections.
    idle_conns: HashMap<(u16, u16), Vec<u32>>,
    /// Generated flow arrivals (`[[traffic]]`).
    arrivals: Arrivals,
    pub(crate) probes: Vec<Probe>,
    out: Vec<Packet>,
    end: Nanos,
    pub(crate) warmup: Nanos,
    pub(crate) mss: u32,
    /// Number of `[[flows]]` entries (generated flows' `spec` follows them).
    pub(crate) n_listed_specs: u32,
    transport: TcpConfig,
    persistent: bool,
    pias: Vec<u64>,
    ack_dscp: Option<u8>,
    rtt_variation: Option<RttVariation>,
    host_delay_ns: Vec<Nanos>,
    delay_rng: Rng,
    seed: u64,
    pub(crate) counting: Counting,
    stop_when_done: bool,
    /// Flows with a size, and how many of them have completed.
    finite_flows: usize,
    finite_done: usize,
    has_long_lived: bool,
    done: bool,
    /// What is measured: the simulation never reads it.
    pub(crate) recorder: Recorder,
}

impl Simulator {
    /// Build the network and traffic of a validated scenario.
    pub fn new(scn: &Scenario, seed: u64) -> Result<Simulator, String> {
        scn.validate()?;
        let net = Net::build(&scn.topology);
        if let Some(&(s, d)) = net.unreachable_pairs().first() {
            return Err(format!("topology: host {s} cannot reach host {d}"));
        }
        let nic_cfg = PortConfig { queues: 1, buffer: scn.host.nic_buffer, ..Default::default() };
        let no_marking = MarkingConfig { scheme: SchemeName::None, ..Default::default() };
        let mut links = Vec::with_capacity(net.links.len());
        for (i, spec) in net.links.iter().enumerate() {
            let is_switch_port = net.is_switch(spec.from);
            let port = if is_switch_port {
                Port::new(&scn.switch, &scn.marking, spec.rate_bps, Stream::PortMarking(i as u64).seed(seed))?
            } else {
                let m = if scn.host.nic_marking { &scn.marking } else { &no_marking };
                Port::new(&nic_cfg, m, spec.rate_bps, Stream::PortMarking(i as u64).seed(seed))
                    .map_err(|e| format!("host.{e}"))?
            };
            let shared_pool = match scn.switch.pool {
                Some(_) if net.is_switch(spec.from) => Some(spec.from as u32),
                _ => None,
            };
            u32::try_from(spec.to).map_err(|_| "topology: more than 2^32 nodes".to_string())?;
            links.push(Link::new(spec, port, is_switch_port, shared_pool));
        }
        // Shared pools, indexed by node (`Link::shared_pool`); ports of the other nodes
        // draw on their link's own pool.
        let pools = (0..net.n_nodes())
            .map(|n| match scn.switch.pool {
                Some(ByteSize(b)) if net.is_switch(n) => BufferPool::new(b),
                _ => BufferPool::unlimited(),
            })
            .collect();

        let hosts = HostInfo {
            n_hosts: net.n_hosts,
            access_rate_bps: (0..net.n_hosts).map(|h| net.links[net.out_links[h][0] as usize].rate_bps).collect(),
            hosts_per_leaf: match scn.topology {
                crate::config::Topology::LeafSpine { hosts_per_leaf, .. } => Some(hosts_per_leaf),
                _ => None,
            },
        };
        let arrivals = workload::generate(&scn.traffic, &hosts, Stream::Traffic.seed(seed)).map_err(|e| {
            if e.starts_with("traffic") {
                e
            } else {
                format!("traffic: {e}")
            }
        })?;

        let mut delay_rng = Rng::named(seed, Stream::RttVariation);
        let host_delay_ns = match &scn.rtt_variation {
            Some(rv) if rv.mode == RttVariationMode::PerHost => {
                (0..net.n_hosts).map(|_| rv.delay.sample(&mut delay_rng)).collect()
            }
            _ => vec![0; net.n_hosts],
        };

        // The event wheel covers what a link schedules: the end of a transmission and a
        // packet's arrival (delay + transmission time of the largest packet).
        let max_wire = (scn.transport.mss + crate::packet::TCP_IP_HEADER) as u64;
        let event_horizon =
            net.links.iter().map(|l| l.delay_ns + tx_time_ns(max_wire, l.rate_bps) + 1).max().unwrap_or(1);
        let n_links = links.len();
        let mut sim = Simulator {
            now: 0,
            events: EventQueue::new(event_horizon),
            wire: Wire::new(links, pools, (0..net.links.len()).map(|li| crate::metrics::port_name(&net, li)).collect()),
            net,
            started: false,
            conns: Vec::new(),
            conn_ecmp: Vec::new(),
            flows: Vec::with_capacity(arrivals.len() + scn.flows.len()),
            idle_conns: HashMap::new(),
            arrivals: Arrivals::new(arrivals),
            probes: scn.probes.iter().enumerate().map(|(i, p)| Probe::new(i, p, seed)).collect(),
            out: Vec::with_capacity(64),
            end: scn.duration.0,
            warmup: scn.metrics.warmup.0,
            mss: scn.transport.mss,
            n_listed_specs: scn.flows.len() as u32,
            transport: scn.transport.clone(),
            persistent: scn.host.persistent_connections,
            pias: scn.host.pias_thresholds.iter().map(|b| b.0).collect(),
            ack_dscp: scn.host.ack_dscp,
            rtt_variation: scn.rtt_variation.clone(),
            host_delay_ns,
            delay_rng,
            seed,
            counting: Counting::default(),
            stop_when_done: scn.metrics.stop_when_done,
            finite_flows: 0,
            finite_done: 0,
            has_long_lived: scn.flows.iter().any(|f| f.size.is_none()),
            done: false,
            recorder: Recorder::new(n_links, scn.metrics.sample_interval.0, scn.metrics.timeseries),
        };

        // Listed flows: each on its own connection. Start jitter comes from a stream of its
        // own, drawn only for entries that ask for it, so other runs are unchanged.
        let mut jitter_rng = Rng::stream(seed, 6_000_000);
        for (si, f) in scn.flows.iter().enumerate() {
            let mut cfg = scn.transport.clone();
            if let Some(cc) = f.cc {
                cfg.cc = cc;
            }
            for _ in 0..f.count {
                let c = sim.new_conn(&cfg, f.src as u16, f.dst as u16, f.class);
                sim.conns[c as usize].app_gap = f.rate.map(|r| tx_time_ns(cfg.mss as u64, r.0).max(1));
                let id = sim.flows.len() as u32;
                let start = f.start.0 + f.start_jitter.filter(|j| j.0 > 0).map_or(0, |j| jitter_rng.below(j.0));
                sim.flows.push(Flow {
                    conn: c,
                    spec: si as u32,
                    src: f.src as u16,
                    dst: f.dst as u16,
                    class: f.class,
                    size: f.size.map(|s| s.0),
                    start,
                    seq_start: 0,
                    finish: None,
                    timeouts_at_start: 0,
                    rtx_at_start: 0,
                    timeouts: 0,
                    retransmits: 0,
                });
                sim.events.push(start, Ev::FlowStart(id));
                if let Some(stop) = f.stop {
                    sim.events.push(stop.0, Ev::FlowStop(id));
                }
            }
        }
        sim.finite_flows = sim.arrivals.len() + sim.flows.iter().filter(|f| f.size.is_some()).count();
        if let Some(t) = sim.arrivals.first_time() {
            sim.events.push(t, Ev::NextArrival);
        }
        for (i, p) in scn.probes.iter().enumerate() {
            sim.events.push(p.start.0, Ev::ProbeSend(i as u32));
        }
        if sim.warmup > 0 {
            sim.events.push(sim.warmup, Ev::Warmup);
        }
        if scn.metrics.timeseries {
            sim.events.push(scn.metrics.sample_interval.0, Ev::Sample);
        }
        Ok(sim)
    }

    /// Open a connection (a sender at `src`, a receiver at `dst`).
    fn new_conn(&mut self, cfg: &TcpConfig, src: u16, dst: u16, class: u8) -> u32 {
        let id = self.conns.len() as u32;
        let extra_delay_ns = match &self.rtt_variation {
            Some(rv) if rv.mode == RttVariationMode::PerFlow => rv.delay.sample(&mut self.delay_rng),
            Some(_) => self.host_delay_ns[src as usize],
            None => 0,
        };
        let (sender, receiver) = if cfg.cc.is_rate_based() {
            let line_rate = self.net.links[self.net.out_links[src as usize][0] as usize].rate_bps;
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
                    Sender::Linux(LinuxSender::new(cfg, id, src, dst, class)),
                    Receiver::Linux(LinuxReceiver::new(cfg, id, dst, src)),
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
            app_gap: None,
            app_written: 0,
            closed: false,
            pooled: false,
        });
        self.conn_ecmp.push(Stream::ConnEcmp(id as u64).seed(self.seed));
        self.wire.set_conn_delay(id as usize, extra_delay_ns);
        id
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.events.popped()
    }
    /// Packet transmissions on links so far.
    pub fn packet_hops(&self) -> u64 {
        self.wire.packet_hops()
    }
    /// Flows (messages) completed so far, and flows started so far.
    pub fn flow_progress(&self) -> (usize, usize) {
        (self.flows.iter().filter(|f| f.finish.is_some()).count(), self.flows.len())
    }
    pub fn now(&self) -> Nanos {
        self.now
    }
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// Capture the switch ports `names` (`"all"`: every switch port) from now on
    /// ([`crate::pcap`]); an unknown name is an error naming the ports there are.
    pub fn capture_ports(&mut self, names: &[String], limit_bytes: u64) -> Result<(), String> {
        let switch: Vec<(usize, String)> = (0..self.wire.links.len())
            .filter(|&li| self.wire.links[li].is_switch_port)
            .map(|li| (li, crate::metrics::port_name(&self.net, li)))
            .collect();
        let mut pick: Vec<(usize, String)> = Vec::new();
        for n in names {
            if n == "all" {
                pick.extend(switch.iter().cloned());
            } else if let Some(p) = switch.iter().find(|(_, s)| s == n) {
                pick.push(p.clone());
            } else {
                let known: Vec<&str> = switch.iter().map(|(_, s)| s.as_str()).take(12).collect();
                let more = if switch.len() > known.len() { ", ..." } else { "" };
                return Err(format!("--pcap: no switch port `{n}` (ports: {}{more}; or all)", known.join(", ")));
            }
        }
        pick.sort();
        pick.dedup();
        let udp = matches!(self.transport.cc, crate::tcp::config::CcKind::Dcqcn);
        self.wire.capture = Some(Box::new(crate::pcap::Capture::new(self.wire.links.len(), &pick, limit_bytes, udp)));
        Ok(())
    }

    /// Run to the scenario's end, then check the counting invariants.
    pub fn run(&mut self) -> Result<(), String> {
        self.run_until(self.end)?;
        self.finish()
    }

    /// Execute every event up to simulated time `until` (capped at the scenario's end).
    /// May be called repeatedly with increasing times (the soak benchmark samples memory
    /// between calls); [`Simulator::run`] is `run_until(end)` plus the end-of-run checks.
    pub fn run_until(&mut self, until: Nanos) -> Result<(), String> {
        if !self.started {
            self.started = true;
            if self.warmup == 0 {
                self.take_snapshot();
            }
        }
        let until = until.min(self.end);
        while !self.done {
            let Some((t, ev)) = self.events.pop_until(until) else { break };
            debug_assert!(t >= self.now, "event at {t} ns after {} ns: time went back", self.now);
            self.now = t;
            self.handle(ev);
            #[cfg(debug_assertions)]
            if let Some(v) = self.wire.violation.take() {
                return Err(v);
            }
            if self.done {
                self.end = self.now.max(self.warmup + 1);
            }
        }
        Ok(())
    }

    /// Close the run at its end time and check the counting invariants.
    fn finish(&mut self) -> Result<(), String> {
        self.now = self.end;
        self.wire.catch_up_all(&mut self.events, self.end, self.end, u64::MAX);
        for l in &mut self.wire.links {
            l.port.advance_clock(self.end);
        }
        for f in 0..self.flows.len() {
            self.settle_flow_counters(f);
        }
        self.check_counting()
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone(l) => self.wire.tx_done(&mut self.events, self.now, l as usize),
            Ev::Arrive(node, pkt) => self.arrive(node as usize, pkt),
            Ev::ArriveResume(li, pkt) => {
                let node = self.wire.arrive_resume(&mut self.events, self.now, li as usize);
                self.arrive(node, pkt);
            }
            Ev::Timer(c, end) => self.timer(c as usize, end),
            Ev::FlowStart(f) => self.flow_start(f as usize),
            Ev::FlowStop(f) => {
                let c = self.flows[f as usize].conn as usize;
                self.conns[c].closed = true;
            }
            Ev::AppTick(c) => self.app_tick(c as usize),
            Ev::NextArrival => self.next_arrival(),
            Ev::ProbeSend(p) => self.probe_send(p as usize),
            Ev::Sample => {
                self.recorder.sample(&mut self.wire, self.now, self.events.current_seq());
                self.events.push(self.now + self.recorder.sample_interval, Ev::Sample);
            }
            Ev::Warmup => self.take_snapshot(),
        }
    }

    // ---- forwarding ----

    /// Hand a packet to the egress port of link `li` (the wire catches the port up first).
    #[inline]
    fn enqueue(&mut self, li: usize, pkt: Packet) {
        self.wire.enqueue(&mut self.events, self.now, li, pkt);
    }

    /// A packet reaches `node` at the end of a link.
    #[inline]
    fn arrive(&mut self, node: usize, pkt: Packet) {
        if self.net.is_switch(node) {
            self.forward(node, pkt);
        } else {
            self.counting.delivered += 1;
            self.host_receive(node, pkt);
        }
    }

    /// Send `pkt` out of `node` towards its destination (per-flow ECMP).
    #[inline]
    fn forward(&mut self, node: usize, pkt: Packet) {
        if !self.net.is_switch(node) {
            if let Some(li) = self.net.host_uplink(node) {
                return self.enqueue(li as usize, pkt);
            }
        }
        let hops = self.net.next_hops(node, pkt.dst as usize);
        let li = if hops.len() == 1 {
            hops[0]
        } else {
            let h = self.ecmp_key(&pkt) ^ (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            hops[self.net.ecmp_rem(mix64(h), hops.len())]
        } as usize;
        self.enqueue(li, pkt);
    }

    fn ecmp_key(&self, pkt: &Packet) -> u64 {
        match pkt.kind {
            Kind::Ping | Kind::Pong => self.probes[pkt.flow as usize].ecmp,
            _ => self.conn_ecmp[pkt.flow as usize],
        }
    }

    /// A host injects a packet into the network.
    #[inline]
    fn host_send(&mut self, mut pkt: Packet) {
        if pkt.kind == Kind::Ack {
            if let Some(d) = self.ack_dscp {
                pkt.dscp = d;
            }
        }
        self.counting.sent += 1;
        self.forward(pkt.src as usize, pkt);
    }

    fn flush_out(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        for p in out.drain(..) {
            self.host_send(p);
        }
        self.out = out;
    }

    // ---- hosts ----

    fn host_receive(&mut self, host: usize, pkt: Packet) {
        debug_assert_eq!(pkt.dst as usize, host);
        match pkt.kind {
            Kind::Data => {
                let c = pkt.flow as usize;
                if self.conns[c].closed {
                    return;
                }
                self.conns[c].receiver.on_data(self.now, &pkt, &mut self.out);
                if self.conns[c].receiver.completion_bytes().is_some() {
                    self.check_message_done(c);
                }
                self.flush_out();
                self.arm_rcv(c);
            }
            Kind::Ack | Kind::Cnp => {
                let c = pkt.flow as usize;
                if self.conns[c].closed {
                    return;
                }
                let conn = &mut self.conns[c];
                conn.sender.on_ack(self.now, &pkt, &conn.receiver, &mut self.out);
                if conn.receiver.completion_bytes().is_none() {
                    self.check_message_done(c);
                }
                self.flush_out();
                self.arm_snd(c);
            }
            Kind::Ping => self.host_send(traffic::pong(&pkt)),
            Kind::Pong => self.probes[pkt.flow as usize].on_pong(&pkt, self.now, self.warmup),
        }
    }

    /// The connection's current message is complete: record its FCT and free the
    /// connection for the next message. Complete means fully acknowledged (from its arrival
    /// to the ACK of its last byte, as the ns-2 scripts measure), or, for the `linux`
    /// profile, fully received in order (as the testbeds' applications measure: the
    /// receiver's delayed ACK of a last odd segment is not the application's wait;
    /// [`Receiver::completion_bytes`]).
    fn check_message_done(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let Some(f) = conn.current else { return };
        let flow = &mut self.flows[f as usize];
        let Some(size) = flow.size else { return };
        let done_bytes = conn.receiver.completion_bytes().unwrap_or_else(|| conn.sender.acked_bytes());
        if done_bytes >= flow.seq_start + size {
            flow.finish = Some(self.now);
            self.finite_done += 1;
            if self.stop_when_done && !self.has_long_lived && self.finite_done == self.finite_flows {
                self.done = true;
            }
            flow.timeouts = conn.sender.timeouts() - flow.timeouts_at_start;
            flow.retransmits = conn.sender.fast_retransmits() - flow.rtx_at_start;
            conn.current = None;
            if self.persistent && conn.pooled {
                self.idle_conns.entry((conn.src, conn.dst)).or_default().push(c as u32);
            }
        }
    }

    /// Start message `f` on connection `c`.
    fn start_message(&mut self, f: usize, c: usize) {
        let pias = std::mem::take(&mut self.pias);
        let conn = &mut self.conns[c];
        let flow = &mut self.flows[f];
        flow.conn = c as u32;
        flow.seq_start = conn.sender.added_bytes();
        flow.timeouts_at_start = conn.sender.timeouts();
        flow.rtx_at_start = conn.sender.fast_retransmits();
        conn.current = Some(f as u32);
        conn.sender.set_dscp(flow.class);
        if !pias.is_empty() {
            conn.sender.set_pias(flow.seq_start, &pias);
        }
        self.pias = pias;
        match (flow.size, conn.app_gap) {
            (_, Some(_)) => {
                // Rate-limited application: it writes one MSS per tick.
                self.events.push(self.now, Ev::AppTick(c as u32));
                return;
            }
            (Some(size), None) => conn.sender.add_data(size),
            (None, None) => conn.sender.add_data(crate::tcp::UNLIMITED.min(crate::dcqcn::UNLIMITED)),
        }
        conn.sender.poll(self.now, &mut self.out);
        self.flush_out();
        self.arm_snd(c);
    }

    fn flow_start(&mut self, f: usize) {
        let c = self.flows[f].conn as usize;
        self.start_message(f, c);
    }

    /// A generated flow arrives: take an idle connection of the pair (persistent
    /// connections) or open a new one.
    fn next_arrival(&mut self) {
        let (a, next) = self.arrivals.take();
        if let Some(t) = next {
            self.events.push(t, Ev::NextArrival);
        }
        let reuse = if self.persistent { self.idle_conns.get_mut(&(a.src, a.dst)).and_then(|v| v.pop()) } else { None };
        let c = match reuse {
            Some(c) => c,
            None => {
                let cfg = self.transport.clone();
                let c = self.new_conn(&cfg, a.src, a.dst, a.class);
                self.conns[c as usize].pooled = true;
                c
            }
        };
        let f = self.flows.len();
        self.flows.push(Flow {
            conn: c,
            spec: self.n_listed_specs + a.source,
            src: a.src,
            dst: a.dst,
            class: a.class,
            size: Some(a.size),
            start: self.now,
            seq_start: 0,
            finish: None,
            timeouts_at_start: 0,
            rtx_at_start: 0,
            timeouts: 0,
            retransmits: 0,
        });
        self.start_message(f, c as usize);
    }

    fn app_tick(&mut self, c: usize) {
        let mss = self.mss as u64;
        let conn = &mut self.conns[c];
        if conn.closed {
            return;
        }
        let Some(f) = conn.current else { return };
        let written = conn.app_written;
        let chunk = match self.flows[f as usize].size {
            Some(s) if written >= s => return,
            Some(s) => mss.min(s - written),
            None => mss,
        };
        conn.sender.add_data(chunk);
        conn.app_written += chunk;
        conn.sender.poll(self.now, &mut self.out);
        let gap = conn.app_gap.expect("app tick without a rate");
        self.events.push(self.now + gap, Ev::AppTick(c as u32));
        self.flush_out();
        self.arm_snd(c);
    }

    fn arm_snd(&mut self, c: usize) {
        self.arm(c, End::Sender);
    }

    fn arm_rcv(&mut self, c: usize) {
        self.arm(c, End::Receiver);
    }

    /// Keep one live event for the endpoint's deadline: a new event only when the deadline
    /// moved earlier than the pending one (later moves are caught when that one fires).
    fn arm(&mut self, c: usize, end: End) {
        let conn = &mut self.conns[c];
        if let Some(t) = conn.deadline(end) {
            let pending = &mut conn.timer_at[end as usize];
            if pending.is_none_or(|p| t < p) {
                *pending = Some(t);
                self.events.push(t.max(self.now), Ev::Timer(c as u32, end));
            }
        }
    }

    fn timer(&mut self, c: usize, end: End) {
        let conn = &mut self.conns[c];
        if conn.timer_at[end as usize] != Some(self.now) {
            return; // stale: another event owns the timer
        }
        conn.timer_at[end as usize] = None;
        if conn.closed {
            return;
        }
        if conn.deadline(end).is_some_and(|t| t <= self.now) {
            match end {
                End::Sender => conn.sender.on_timer(self.now, &mut self.out),
                End::Receiver => conn.receiver.on_timer(self.now, &mut self.out),
            }
            self.flush_out();
        }
        self.arm(c, end);
    }

    fn probe_send(&mut self, p: usize) {
        if let Some((ping, next)) = self.probes[p].ping(p, self.now) {
            self.events.push(next, Ev::ProbeSend(p as u32));
            self.host_send(ping);
        }
    }

    // ---- measurement ----

    /// The measurement window opens (at the warm-up's end, or at the start).
    fn take_snapshot(&mut self) {
        let acked = self.conns.iter().map(|c| c.sender.acked_bytes());
        self.recorder.open_window(&mut self.wire, self.now, self.events.current_seq(), acked);
    }

    /// Timeouts and retransmissions of a flow still running at the end.
    fn settle_flow_counters(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if flow.finish.is_none() {
            let conn = &self.conns[flow.conn as usize];
            if conn.current == Some(f as u32) {
                flow.timeouts = conn.sender.timeouts() - flow.timeouts_at_start;
                flow.retransmits = conn.sender.fast_retransmits() - flow.rtx_at_start;
            }
        }
    }

    /// The counting audit, at the end of every run: the wire's books ([`Wire::audit`]) and
    /// packets sent = delivered + dropped + in flight (queued, or on the wire in an arrival
    /// event). A violation is an internal error.
    fn check_counting(&mut self) -> Result<(), String> {
        let mut in_flight = self.wire.audit(self.now, &self.net.names)?;
        self.events.for_each_pending(|ev| in_flight += matches!(ev, Ev::Arrive(..) | Ev::ArriveResume(..)) as u64);
        self.counting.in_flight = in_flight;
        self.counting.dropped = self.wire.dropped;
        let c = self.counting;
        if c.sent != c.delivered + c.dropped + c.in_flight {
            return Err(format!(
                "internal error at t={} ns: packet accounting broken: sent {} != delivered {} + dropped {} + in flight {}",
                self.now, c.sent, c.delivered, c.dropped, c.in_flight
            ));
        }
        Ok(())
    }
}

#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Per-flow records after a run.
pub(crate) fn flow_records(sim: &Simulator) -> Vec<FlowRecord> {
    sim.flows.iter().enumerate().map(|(i, f)| FlowRecord::of(i, f, sim)).collect()
}

pub(crate) fn probe_records(sim: &Simulator) -> Vec<ProbeRecord> {
    sim.probes.iter().enumerate().map(|(i, p)| ProbeRecord::of(i, p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::wire::Tx;

    fn small_run() -> Simulator {
        let text = "name = \"t\"\nduration = \"3ms\"\n[topology]\nkind = \"star\"\nhosts = 3\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"5us\"\n[switch]\nbuffer = \"60KB\"\n\
                    [[flows]]\nsrc = 0\ndst = 2\n[[flows]]\nsrc = 1\ndst = 2\n";
        let scn = Scenario::from_toml(text).unwrap();
        let mut sim = Simulator::new(&scn, 1).unwrap();
        sim.run().expect("a healthy run passes every check");
        sim
    }

    /// A busy strict-priority port owes its dequeues to the packet on the wire, not to
    /// `TxDone` events: each dequeue still happens at its own time and sees exactly the
    /// packets enqueued by then (PROFILE.md, session 7).
    #[test]
    fn a_busy_port_dequeues_at_the_true_times_without_events_of_its_own() {
        let text = "name = \"t\"\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"10us\"\n[switch]\nqueues = 2\nbuffer = \"1MB\"\n\
                    [switch.scheduler]\nkind = \"sp\"\n[[flows]]\nsrc = 0\ndst = 2\nstart = \"0.5ms\"\n";
        let mut sim = Simulator::new(&Scenario::from_toml(text).unwrap(), 1).unwrap();
        let li =
            (0..sim.wire.links.len()).find(|&i| sim.wire.links[i].is_switch_port && sim.wire.links[i].to == 2).unwrap();
        let pkt = |seq: u64, dscp: u8| Packet {
            flow: 0,
            src: 0,
            dst: 2,
            seq,
            tx_ns: 0,
            payload: 1460,
            size: 1500, // 1.2 us at 10 Gbps
            kind: Kind::Data,
            ecn: Ecn::Ect0,
            flags: 0,
            dscp,
        };
        // t = 0: four low-priority packets. The first starts at once with nothing behind it
        // (a plain arrival), so the second, finding the link busy, needs a `TxDone` event;
        // from the dequeue that event performs on, the packet on the wire carries the debt.
        for seq in 0..4 {
            sim.enqueue(li, pkt(seq, 1));
        }
        assert_eq!(sim.wire.links[li].tx, Tx::TxDoneScheduled);
        let (t, ev) = sim.events.pop_until(1_200).expect("the TxDone at 1.2 us");
        assert!(matches!(ev, Ev::TxDone(_)));
        sim.now = t;
        sim.handle(ev);
        assert_eq!(sim.wire.links[li].tx, Tx::Owed);
        // t = 3.6 us, the very time of an owed dequeue: a high-priority packet, enqueued by
        // an event older in the queue's order than that dequeue (here the TxDone handled at
        // 1.2 us; the owed dequeue's number is taken when the one before it is performed).
        // The dequeue owed at 2.4 us must not see it (catch-up first); the one at 3.6 us
        // must (the order of events: dequeue-first would send seq 3 before it).
        sim.now = 3_600;
        sim.enqueue(li, pkt(101, 0));
        sim.wire.catch_up_all(&mut sim.events, 3_600, 1_000_000, u64::MAX);
        assert!(sim.wire.links[li].port.is_empty());
        let mut arrivals = vec![];
        while let Some((t, ev)) = sim.events.pop_until(100_000) {
            match ev {
                Ev::Arrive(_, p) | Ev::ArriveResume(_, p) => arrivals.push((p.seq, t)),
                Ev::TxDone(_) => panic!("a TxDone event for a port with its own pool"),
                _ => {}
            }
        }
        // Starts at 0, 1.2, 2.4, 3.6 (seq 101), 4.8 us; each arrives 1.2 + 10 us later.
        let want: Vec<(u64, Nanos)> = [0, 1, 2, 101, 3]
            .iter()
            .zip([0, 1_200, 2_400, 3_600, 4_800])
            .map(|(&seq, start)| (seq, start + 11_200))
            .collect();
        assert_eq!(arrivals, want);
        assert_eq!(sim.wire.links[li].tx_pkts, 5);
    }

    /// A reader sees a busy port as it is at its time (the owed dequeues done) and leaves the
    /// link exactly as it was: the same transmissions follow at the same times.
    #[test]
    fn reading_a_port_owing_dequeues_changes_nothing() {
        let text = "name = \"t\"\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"10us\"\n[switch]\nbuffer = \"1MB\"\n\
                    [[flows]]\nsrc = 0\ndst = 2\nstart = \"0.5ms\"\n";
        let mut sim = Simulator::new(&Scenario::from_toml(text).unwrap(), 1).unwrap();
        let li =
            (0..sim.wire.links.len()).find(|&i| sim.wire.links[i].is_switch_port && sim.wire.links[i].to == 2).unwrap();
        let pkt = |seq: u64| Packet {
            flow: 0,
            src: 0,
            dst: 2,
            seq,
            tx_ns: 0,
            payload: 1460,
            size: 1500, // 1.2 us at 10 Gbps
            kind: Kind::Data,
            ecn: Ecn::Ect0,
            flags: 0,
            dscp: 0,
        };
        for seq in 0..4 {
            sim.enqueue(li, pkt(seq));
        }
        let (t, ev) = sim.events.pop_until(1_200).expect("the TxDone at 1.2 us");
        sim.now = t;
        sim.handle(ev);
        // Sent: seq 0 (at 0) and 1 (at 1.2 us); owed: the dequeue of seq 2 at 2.4 us.
        let link = &sim.wire.links[li];
        let before = (link.tx, link.busy_until, link.tx_pkts, link.port.queue_occ()[0].pkts, sim.wire.dropped);
        assert_eq!(before, (Tx::Owed, 2_400, 2, 2, 0));
        let view = sim.wire.port_at(li, 3_000, u64::MAX);
        assert_eq!(view.queue_occ()[0].pkts, 1, "at 3 us seq 2 has left; seq 3 leaves at 3.6 us");
        assert_eq!(view.stats()[0].deq_pkts, 3);
        drop(view);
        let link = &sim.wire.links[li];
        assert_eq!((link.tx, link.busy_until, link.tx_pkts, link.port.queue_occ()[0].pkts, sim.wire.dropped), before);
        sim.wire.catch_up_all(&mut sim.events, 3_000, 1_000_000, u64::MAX);
        let mut arrivals = vec![];
        while let Some((t, ev)) = sim.events.pop_until(100_000) {
            if let Ev::Arrive(_, p) | Ev::ArriveResume(_, p) = ev {
                arrivals.push((p.seq, t));
            }
        }
        let want: Vec<(u64, Nanos)> = (0..4).map(|s| (s, s * 1_200 + 11_200)).collect();
        assert_eq!(arrivals, want);
    }

    /// The tie rule (`crate::event`, module docs): two equal packets sent by hosts 0 and 1 at
    /// t = 0 over equal links reach the switch in the same nanosecond; the one scheduled
    /// first is enqueued first and so reaches host 2 first, whichever host sent it.
    #[test]
    fn simultaneous_arrivals_run_in_the_order_they_were_scheduled() {
        let text = "name = \"t\"\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"10us\"\n[[flows]]\nsrc = 0\ndst = 2\nstart = \"0.5ms\"\n";
        for order in [[0u16, 1], [1, 0]] {
            let mut sim = Simulator::new(&Scenario::from_toml(text).unwrap(), 1).unwrap();
            for src in order {
                let pkt = Packet {
                    flow: 0,
                    src,
                    dst: 2,
                    seq: src as u64,
                    tx_ns: 0,
                    payload: 1460,
                    size: 1500,
                    kind: Kind::Data,
                    ecn: Ecn::Ect0,
                    flags: 0,
                    dscp: 0,
                };
                sim.host_send(pkt);
            }
            let (mut at_switch, mut at_host) = (vec![], vec![]);
            while let Some((t, ev)) = sim.events.pop_until(100_000) {
                sim.now = t;
                match ev {
                    Ev::Arrive(node, p) if node == 2 => at_host.push((p.src, t)),
                    Ev::ArriveResume(li, p) if sim.wire.links[li as usize].to == 2 => {
                        sim.wire.catch_up(&mut sim.events, t, li as usize, t, u64::MAX);
                        at_host.push((p.src, t));
                    }
                    Ev::Arrive(node, p) => {
                        at_switch.push((p.src, t));
                        sim.handle(Ev::Arrive(node, p));
                    }
                    ev => sim.handle(ev),
                }
            }
            // Both reach the switch at 1.2 + 10 us, in the order they were sent.
            assert_eq!(at_switch, vec![(order[0], 11_200), (order[1], 11_200)]);
            // The first scheduled goes first: the other waits one transmission (1.2 us).
            assert_eq!(at_host, vec![(order[0], 22_400), (order[1], 23_600)]);
        }
    }

    /// Hosts that both send data with RTT-variation delays (which keep `TxDone` events) and
    /// ACKs (which do not) on one access link: dequeues performed by a catch-up mix both
    /// kinds, and time must never go back (debug builds check every event and every
    /// port operation).
    #[test]
    fn rtt_variation_with_two_way_traffic_keeps_the_books() {
        let text = "name = \"t\"\nduration = \"20ms\"\n[topology]\nkind = \"star\"\nhosts = 4\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"5us\"\n[rtt_variation]\nmode = \"per_flow\"\n\
                    [rtt_variation.delay]\ndist = \"empirical\"\npoints = [[\"0us\", 0.0], [\"100us\", 1.0]]\n\
                    [switch]\nbuffer = \"200KB\"\n[transport]\ncc = \"dctcp\"\n[[traffic]]\nkind = \"poisson\"\n\
                    cdf = \"websearch_bytes\"\nload = 0.6\nflows = 200\n";
        let mut sim = Simulator::new(&Scenario::from_toml(text).unwrap(), 7).unwrap();
        sim.run().expect("every check passes");
        assert!(sim.finite_done > 20, "flows complete: {}", sim.finite_done);
    }

    #[test]
    fn the_end_of_run_check_catches_broken_counts() {
        let mut sim = small_run();
        assert!(sim.counting.dropped > 0, "two senders into a 60 KB buffer must overflow it");
        sim.counting.delivered += 1;
        let e = sim.check_counting().unwrap_err();
        assert!(e.starts_with("internal error at t=3000000 ns: packet accounting broken"), "{e}");

        let mut sim = small_run();
        let li = (0..sim.wire.links.len()).find(|&i| sim.wire.links[i].tx_pkts > 0).unwrap();
        sim.wire.links[li].tx_pkts += 1;
        let e = sim.check_counting().unwrap_err();
        assert!(e.contains("dequeued") && e.contains("its link sent"), "{e}");

        let mut sim = small_run();
        sim.wire.dropped += 1;
        assert!(sim.check_counting().unwrap_err().contains("drops"));
    }
}
