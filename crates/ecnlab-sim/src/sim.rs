//! The event loop: links, ports, hosts and flows as plain data in vectors, driven by one
//! event queue.
//!
//! Each directed link has an egress [`Port`] at its source node and at most two pending
//! events: the end of the current transmission (`TxDone`) and the arrival of the oldest
//! packet in flight (`Arrive`); packets propagating on a link wait in a FIFO, since a link's
//! delay is constant (htsim's "one pending event per FIFO or link"). Packets are `Copy`
//! structs moved between ring buffers: nothing is allocated per packet once the buffers
//! have grown to their high-water marks.
//!
//! Hosts run the sans-IO TCP state machines of [`crate::tcp`]: the loop hands them `now`
//! and the arriving packet, collects the packets they emit in a reused scratch vector, and
//! keeps at most one live timer event per state machine (stale ones are recognised when
//! they fire).

use crate::config::Scenario;
use crate::event::EventQueue;
use crate::metrics::{FlowRecord, ProbeRecord, QueueSnapshot, TimeSeries};
use crate::packet::{Ecn, Kind, Packet};
use crate::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::topology::{LinkSpec, Net};
use ecnlab_core::marking::{MarkingConfig, SchemeName};
use ecnlab_core::port::{BufferPool, Port, PortConfig};
use ecnlab_core::rng::derive_seed;
use ecnlab_core::units::{tx_time_ns, ByteSize, Nanos};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone(u32),
    Arrive(u32),
    SndTimer(u32),
    RcvTimer(u32),
    FlowStart(u32),
    FlowStop(u32),
    AppTick(u32),
    ProbeSend(u32),
    Sample,
    Warmup,
}

pub(crate) struct Link {
    pub spec: LinkSpec,
    pub port: Port<Packet>,
    pub is_switch_port: bool,
    busy: bool,
    in_tx: Packet,
    in_tx_queue: u8,
    pipe: VecDeque<(Nanos, Packet)>,
    /// Packets and bytes put on the wire (packet-hops).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// TCP payload bytes of data packets sent, per queue of the port.
    pub payload_by_queue: Vec<u64>,
}

pub(crate) struct Flow {
    pub spec: u32,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub size: Option<u64>,
    pub start: Nanos,
    /// Application rate limit: one MSS written every `app_gap` ns.
    app_gap: Option<Nanos>,
    /// Bytes the rate-limited application has written so far.
    app_written: u64,
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    snd_timer: Option<Nanos>,
    rcv_timer: Option<Nanos>,
    pub started: bool,
    /// The application stopped: the connection is torn down, late packets are ignored.
    pub stopped: bool,
    pub finish: Option<Nanos>,
    ecmp: u64,
}

pub(crate) struct Probe {
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub size: u32,
    pub interval: Nanos,
    pub stop: Option<Nanos>,
    pub sent: u64,
    pub rtts_ns: Vec<Nanos>,
    ecmp: u64,
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
    pub(crate) links: Vec<Link>,
    pools: Vec<BufferPool>,
    pub(crate) flows: Vec<Flow>,
    pub(crate) probes: Vec<Probe>,
    out: Vec<Packet>,
    end: Nanos,
    pub(crate) warmup: Nanos,
    sample_interval: Nanos,
    record_timeseries: bool,
    mss: u32,
    pub(crate) counting: Counting,
    pub(crate) snapshot: Vec<Vec<QueueSnapshot>>,
    pub(crate) timeseries: TimeSeries,
    last_sample: Vec<Vec<QueueSnapshot>>,
}

impl Simulator {
    /// Build the network and traffic of a validated scenario.
    pub fn new(scn: &Scenario, seed: u64) -> Result<Simulator, String> {
        scn.validate()?;
        check_thresholds(scn, scn.switch.buffer)?;
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
                Port::new(&scn.switch, &scn.marking, spec.rate_bps, derive_seed(seed, 1_000_000 + i as u64))?
            } else {
                Port::new(&nic_cfg, &no_marking, spec.rate_bps, 0).map_err(|e| format!("host.{e}"))?
            };
            let nq = port.n_queues();
            links.push(Link {
                spec: spec.clone(),
                port,
                is_switch_port,
                busy: false,
                in_tx: Packet::default(),
                in_tx_queue: 0,
                pipe: VecDeque::with_capacity(16),
                tx_pkts: 0,
                tx_bytes: 0,
                payload_by_queue: vec![0; nq],
            });
        }
        let pools = (0..net.n_nodes())
            .map(|n| match scn.switch.pool {
                Some(ByteSize(b)) if net.is_switch(n) => BufferPool::new(b),
                _ => BufferPool::unlimited(),
            })
            .collect();

        let mut events = EventQueue::with_capacity(1024);
        let mut flows = Vec::new();
        for (si, f) in scn.flows.iter().enumerate() {
            let mut cfg: TcpConfig = scn.transport.clone();
            if let Some(cc) = f.cc {
                cfg.cc = cc;
            }
            for _ in 0..f.count {
                let id = flows.len() as u32;
                let app_gap = f.rate.map(|r| tx_time_ns(cfg.mss as u64, r.0).max(1));
                flows.push(Flow {
                    spec: si as u32,
                    src: f.src as u16,
                    dst: f.dst as u16,
                    class: f.class,
                    size: f.size.map(|s| s.0),
                    start: f.start.0,
                    app_gap,
                    app_written: 0,
                    sender: TcpSender::new(&cfg, id, f.src as u16, f.dst as u16, f.class),
                    receiver: TcpReceiver::new(&cfg, id, f.dst as u16, f.src as u16),
                    snd_timer: None,
                    rcv_timer: None,
                    started: false,
                    stopped: false,
                    finish: None,
                    ecmp: derive_seed(seed, 2_000_000 + id as u64),
                });
                events.push(f.start.0, Ev::FlowStart(id));
                if let Some(stop) = f.stop {
                    events.push(stop.0, Ev::FlowStop(id));
                }
            }
        }
        let mut probes = Vec::new();
        for (i, p) in scn.probes.iter().enumerate() {
            probes.push(Probe {
                src: p.src as u16,
                dst: p.dst as u16,
                class: p.class,
                size: p.size.0.max(28) as u32,
                interval: p.interval.0,
                stop: p.stop.map(|s| s.0),
                sent: 0,
                rtts_ns: Vec::new(),
                ecmp: derive_seed(seed, 3_000_000 + i as u64),
            });
            events.push(p.start.0, Ev::ProbeSend(i as u32));
        }
        let warmup = scn.metrics.warmup.0;
        if warmup > 0 {
            events.push(warmup, Ev::Warmup);
        }
        if scn.metrics.timeseries {
            events.push(scn.metrics.sample_interval.0, Ev::Sample);
        }
        let n_links = links.len();
        Ok(Simulator {
            now: 0,
            events,
            net,
            links,
            pools,
            flows,
            probes,
            out: Vec::with_capacity(64),
            end: scn.duration.0,
            warmup,
            sample_interval: scn.metrics.sample_interval.0,
            record_timeseries: scn.metrics.timeseries,
            mss: scn.transport.mss,
            counting: Counting::default(),
            snapshot: vec![Vec::new(); n_links],
            timeseries: TimeSeries::default(),
            last_sample: vec![Vec::new(); n_links],
        })
    }

    /// Events executed so far.
    pub fn events(&self) -> u64 {
        self.events.popped()
    }
    /// Packet transmissions on links so far.
    pub fn packet_hops(&self) -> u64 {
        self.links.iter().map(|l| l.tx_pkts).sum()
    }
    pub fn now(&self) -> Nanos {
        self.now
    }
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// Run to the scenario's end.
    pub fn run(&mut self) -> Result<(), String> {
        if self.warmup == 0 {
            self.take_snapshot();
        }
        while let Some(t) = self.events.peek_time() {
            if t > self.end {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            self.now = t;
            self.handle(ev);
        }
        self.now = self.end;
        for l in &mut self.links {
            l.port.advance_clock(self.end);
        }
        self.check_counting()
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone(l) => self.tx_done(l as usize),
            Ev::Arrive(l) => self.arrive(l as usize),
            Ev::SndTimer(f) => self.snd_timer(f as usize),
            Ev::RcvTimer(f) => self.rcv_timer(f as usize),
            Ev::FlowStart(f) => self.flow_start(f as usize),
            Ev::FlowStop(f) => {
                self.flows[f as usize].stopped = true;
            }
            Ev::AppTick(f) => self.app_tick(f as usize),
            Ev::ProbeSend(p) => self.probe_send(p as usize),
            Ev::Sample => {
                self.sample();
                self.events.push(self.now + self.sample_interval, Ev::Sample);
            }
            Ev::Warmup => self.take_snapshot(),
        }
    }

    // ---- links ----

    /// Hand a packet to the egress port of `link`; start transmitting if the link is idle.
    #[inline]
    fn enqueue(&mut self, li: usize, pkt: Packet) {
        let link = &mut self.links[li];
        let pool = &mut self.pools[link.spec.from];
        if link.port.enqueue(self.now, pkt, pool).is_err() {
            self.counting.dropped += 1;
            return;
        }
        if !link.busy {
            self.start_tx(li);
        }
    }

    #[inline]
    fn start_tx(&mut self, li: usize) {
        let link = &mut self.links[li];
        let pool = &mut self.pools[link.spec.from];
        let before = link.port.stats().iter().map(|s| s.total_drops()).sum::<u64>();
        let next = link.port.dequeue(self.now, pool);
        let after = link.port.stats().iter().map(|s| s.total_drops()).sum::<u64>();
        self.counting.dropped += after - before; // drops at dequeue (CoDel drop mode)
        match next {
            Some((pkt, q)) => {
                link.busy = true;
                link.in_tx = pkt;
                link.in_tx_queue = q as u8;
                let done = self.now + tx_time_ns(pkt.size as u64, link.spec.rate_bps);
                self.events.push(done, Ev::TxDone(li as u32));
            }
            None => link.busy = false,
        }
    }

    fn tx_done(&mut self, li: usize) {
        let link = &mut self.links[li];
        let pkt = link.in_tx;
        link.tx_pkts += 1;
        link.tx_bytes += pkt.size as u64;
        if pkt.kind == Kind::Data {
            link.payload_by_queue[link.in_tx_queue as usize] += pkt.payload as u64;
        }
        let at = self.now + link.spec.delay_ns;
        link.pipe.push_back((at, pkt));
        if link.pipe.len() == 1 {
            self.events.push(at, Ev::Arrive(li as u32));
        }
        self.start_tx(li);
    }

    fn arrive(&mut self, li: usize) {
        let link = &mut self.links[li];
        let (_, pkt) = link.pipe.pop_front().expect("arrival without a packet in flight");
        if let Some(&(t, _)) = link.pipe.front() {
            self.events.push(t, Ev::Arrive(li as u32));
        }
        let node = link.spec.to;
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
        let hops = self.net.next_hops(node, pkt.dst as usize);
        let li = if hops.len() == 1 {
            hops[0]
        } else {
            let h = self.ecmp_key(&pkt) ^ (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            hops[(mix64(h) % hops.len() as u64) as usize]
        } as usize;
        self.enqueue(li, pkt);
    }

    fn ecmp_key(&self, pkt: &Packet) -> u64 {
        match pkt.kind {
            Kind::Ping | Kind::Pong => self.probes[pkt.flow as usize].ecmp,
            _ => self.flows[pkt.flow as usize].ecmp,
        }
    }

    /// A host injects a packet into the network.
    #[inline]
    fn host_send(&mut self, pkt: Packet) {
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
                let f = pkt.flow as usize;
                if self.flows[f].stopped {
                    return;
                }
                let flow = &mut self.flows[f];
                flow.receiver.on_data(self.now, &pkt, &mut self.out);
                self.flush_out();
                self.arm_rcv(f);
            }
            Kind::Ack => {
                let f = pkt.flow as usize;
                if self.flows[f].stopped {
                    return;
                }
                let flow = &mut self.flows[f];
                flow.sender.on_ack(self.now, &pkt, &mut self.out);
                if flow.finish.is_none() && flow.size.is_some_and(|s| flow.sender.acked_bytes() >= s) {
                    flow.finish = Some(self.now);
                }
                self.flush_out();
                self.arm_snd(f);
            }
            Kind::Ping => {
                let reply = Packet { kind: Kind::Pong, src: pkt.dst, dst: pkt.src, ecn: Ecn::NotEct, ..pkt };
                self.host_send(reply);
            }
            Kind::Pong => {
                let p = &mut self.probes[pkt.flow as usize];
                if pkt.tx_ns >= self.warmup {
                    p.rtts_ns.push(self.now - pkt.tx_ns);
                }
            }
            Kind::Cnp => {}
        }
    }

    fn flow_start(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        flow.started = true;
        match (flow.size, flow.app_gap) {
            (_, Some(_)) => {
                // Rate-limited application: it writes one MSS per tick.
                self.events.push(self.now, Ev::AppTick(f as u32));
                return;
            }
            (Some(size), None) => flow.sender.add_data(size),
            (None, None) => flow.sender.add_data(u64::MAX / 4),
        }
        flow.sender.poll(self.now, &mut self.out);
        self.flush_out();
        self.arm_snd(f);
    }

    fn app_tick(&mut self, f: usize) {
        let mss = self.mss as u64;
        let flow = &mut self.flows[f];
        if flow.stopped {
            return;
        }
        let written = flow.app_written;
        let chunk = match flow.size {
            Some(s) if written >= s => return,
            Some(s) => mss.min(s - written),
            None => mss,
        };
        flow.sender.add_data(chunk);
        flow.app_written += chunk;
        flow.sender.poll(self.now, &mut self.out);
        let gap = flow.app_gap.expect("app tick without a rate");
        self.events.push(self.now + gap, Ev::AppTick(f as u32));
        self.flush_out();
        self.arm_snd(f);
    }

    fn arm_snd(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if let Some(t) = flow.sender.timer() {
            if flow.snd_timer.is_none_or(|p| t < p) {
                flow.snd_timer = Some(t);
                self.events.push(t.max(self.now), Ev::SndTimer(f as u32));
            }
        }
    }

    fn arm_rcv(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if let Some(t) = flow.receiver.timer() {
            if flow.rcv_timer.is_none_or(|p| t < p) {
                flow.rcv_timer = Some(t);
                self.events.push(t.max(self.now), Ev::RcvTimer(f as u32));
            }
        }
    }

    fn snd_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if flow.snd_timer != Some(self.now) {
            return; // stale: a later or earlier event owns the timer
        }
        flow.snd_timer = None;
        if flow.stopped {
            return;
        }
        if flow.sender.timer().is_some_and(|t| t <= self.now) {
            flow.sender.on_timer(self.now, &mut self.out);
            self.flush_out();
        }
        self.arm_snd(f);
    }

    fn rcv_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if flow.rcv_timer != Some(self.now) {
            return;
        }
        flow.rcv_timer = None;
        if flow.stopped {
            return;
        }
        if flow.receiver.timer().is_some_and(|t| t <= self.now) {
            flow.receiver.on_timer(self.now, &mut self.out);
            self.flush_out();
        }
        self.arm_rcv(f);
    }

    fn probe_send(&mut self, p: usize) {
        let pr = &mut self.probes[p];
        if pr.stop.is_some_and(|s| self.now >= s) {
            return;
        }
        pr.sent += 1;
        let pkt = Packet {
            flow: p as u32,
            src: pr.src,
            dst: pr.dst,
            seq: pr.sent,
            tx_ns: self.now,
            payload: 0,
            size: pr.size,
            kind: Kind::Ping,
            ecn: Ecn::NotEct,
            flags: 0,
            dscp: pr.class,
        };
        let next = self.now + pr.interval;
        self.events.push(next, Ev::ProbeSend(p as u32));
        self.host_send(pkt);
    }

    // ---- measurement ----

    fn take_snapshot(&mut self) {
        for (i, l) in self.links.iter_mut().enumerate() {
            l.port.advance_clock(self.now);
            l.port.reset_peak();
            self.snapshot[i] = QueueSnapshot::of(l);
        }
    }

    fn sample(&mut self) {
        if !self.record_timeseries {
            return;
        }
        let t = self.now;
        for (i, l) in self.links.iter_mut().enumerate() {
            if !l.is_switch_port || l.tx_pkts == 0 {
                continue;
            }
            l.port.advance_clock(t);
            let cur = QueueSnapshot::of(l);
            let prev = std::mem::take(&mut self.last_sample[i]);
            let name = crate::metrics::port_name(&self.net, i);
            self.timeseries.record(t, i as u32, l, &prev, &cur, self.sample_interval, &name);
            self.last_sample[i] = cur;
        }
    }

    fn check_counting(&mut self) -> Result<(), String> {
        let mut in_flight = 0u64;
        for l in &self.links {
            in_flight += l.port.queue_occ().iter().map(|q| q.pkts as u64).sum::<u64>();
            in_flight += l.busy as u64 + l.pipe.len() as u64;
        }
        self.counting.in_flight = in_flight;
        let port_drops: u64 = self.links.iter().flat_map(|l| l.port.stats()).map(|s| s.total_drops()).sum();
        let c = self.counting;
        if port_drops != c.dropped {
            return Err(format!(
                "internal error at t={} ns: ports counted {} drops, the network {}",
                self.now, port_drops, c.dropped
            ));
        }
        if c.sent != c.delivered + c.dropped + c.in_flight {
            return Err(format!(
                "internal error at t={} ns: packet accounting broken: sent {} != delivered {} + dropped {} + in flight {}",
                self.now, c.sent, c.delivered, c.dropped, c.in_flight
            ));
        }
        Ok(())
    }
}

/// Threshold sanity: a queue-length threshold above the buffer can never act.
fn check_thresholds(scn: &Scenario, buffer: ByteSize) -> Result<(), String> {
    let m = &scn.marking;
    let k = m.threshold.k.0;
    let uses_threshold = matches!(
        m.scheme,
        SchemeName::PerQueue
            | SchemeName::PerPort
            | SchemeName::PerPool
            | SchemeName::DequeueRed
            | SchemeName::DctcpRed
    );
    if uses_threshold && k >= buffer.0 {
        return Err(format!(
            "marking.threshold.k: {} is not below the port buffer switch.buffer = {}",
            m.threshold.k, buffer
        ));
    }
    Ok(())
}

#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Per-flow records after a run.
pub(crate) fn flow_records(sim: &Simulator) -> Vec<FlowRecord> {
    sim.flows.iter().enumerate().map(|(i, f)| FlowRecord::of(i, f, &sim.net, sim.mss)).collect()
}

pub(crate) fn probe_records(sim: &Simulator) -> Vec<ProbeRecord> {
    sim.probes.iter().enumerate().map(|(i, p)| ProbeRecord::of(i, p)).collect()
}
