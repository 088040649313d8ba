//! The switch without its sockets: ingress (parse, learn, forward, enqueue), egress
//! (shaper, dequeue, CE rewrite) and counters. The event loop in `main.rs` feeds it frames
//! and gives it a way to send; tests feed it directly.
//!
//! Each egress port is an unchanged [`ecnlab_core::Port`] over [`Frame`] handles, so
//! classification, the shared buffer, the scheduler, the marking scheme and the per-reason
//! counters are the simulator's code.
//!
//! Frame slots and the port's drops at dequeue: `Port::dequeue_with` hands back every frame a
//! scheme drops at dequeue (CoDel in drop mode, a mark on a not-ECT packet under
//! `non_ect = "drop"`), and its slot goes back to the pool there.
//!
//! Measurement: the report's per-queue figures (`total`, `window`) and the time series are
//! differences of the port's own counters, computed by [`ecnlab_core::measure`], the code the
//! simulator measures with; this module adds only what a switch on sockets has and the
//! simulator has not (frames by kind, ingress drops, socket and pool counters).
//!
//! Propagation delay: each port's link delay is applied inside the switch by two delay
//! lines (FIFOs ordered by release time, since the delay of a port is constant): frames
//! from the host wait `delay` before they join an egress queue, frames to the host wait
//! `delay` after they leave it.

use crate::config::EmuConfig;
use crate::fib::{Fib, Forward};
use crate::frame::{Frame, FramePool};
use crate::shaper::TokenBucket;
use crate::wire::{self, parse_mac, ParseError, L3};
use ecnlab_core::buffer::BufferPool;
use ecnlab_core::measure::{by_reason, TimeSeries};
use ecnlab_core::port::{Port, QueueStats};
use ecnlab_core::rng::Stream;
use ecnlab_core::Nanos;
use serde_json::{json, Map, Value};
use std::collections::VecDeque;

/// Largest frame a slot holds (1500-byte MTU, two VLAN tags, with room to spare). Longer
/// frames (GRO/TSO left on) are dropped and counted as `oversize`.
pub const SLOT_SIZE: usize = 2048;

/// Declares [`PortCounters`]: one `u64` per field, with the window difference and the
/// JSON of the report generated from the same list, so a new counter cannot be forgotten in
/// either.
macro_rules! port_counters {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// Per-port counters outside the port model.
        #[derive(Clone, Debug, Default)]
        pub struct PortCounters {
            $($(#[doc = $doc])* pub $name: u64,)*
        }

        impl PortCounters {
            fn diff(&self, o: &PortCounters) -> PortCounters {
                PortCounters { $($name: self.$name - o.$name,)* }
            }
            fn to_json(&self) -> Value {
                let mut m = Map::new();
                $(m.insert(stringify!($name).into(), json!(self.$name));)*
                Value::Object(m)
            }
        }
    };
}

port_counters! {
    /// Frames received on this port (ingress), whatever they are.
    rx_frames,
    rx_bytes,
    /// Frames sent on this port (egress).
    tx_frames,
    tx_bytes,
    /// Frames whose CE bit the switch set on egress.
    ce_set,
    /// Sends that failed (the frame is lost; counted, never hidden).
    tx_errors,
    /// Ingress, forwarded: well-formed IPv4, ECT(0), ECT(1) or CE.
    ipv4_ect,
    /// Ingress, forwarded: well-formed IPv4, not-ECT (never marked).
    ipv4_not_ect,
    /// Ingress, forwarded: IPv4 with header options (also counted as ECT or not-ECT).
    ipv4_options,
    /// Ingress, forwarded, never marked: ARP.
    arp,
    /// Ingress, forwarded, never marked: IPv6.
    ipv6,
    /// Ingress, forwarded, never marked: any other EtherType (or a cut VLAN tag).
    other_ethertype,
    /// Ingress, dropped: shorter than an Ethernet header (0..13 bytes).
    runts,
    /// Ingress, dropped: longer than a slot (offloads left on?).
    oversize,
    /// Ingress, dropped: to 01:80:c2:00:00:0x (STP, pause, LACP, LLDP), which a bridge
    /// never forwards.
    link_local,
    /// Ingress, dropped: EtherType IPv4 but no valid IPv4 header (cut, version, IHL, lengths).
    ipv4_malformed,
    /// Ingress, dropped: IPv4 header checksum wrong.
    ipv4_bad_checksum,
    /// Ingress, dropped: the destination is behind the ingress port.
    filtered,
    /// Ingress frames flooded (unknown unicast, broadcast, multicast).
    flooded,
    /// Ingress frames whose source MAC was not learned because the table was full (their
    /// replies are flooded).
    fib_full,
    /// Ingress frames (or flood copies) dropped because the frame pool was empty.
    pool_exhausted,
    /// PACKET_STATISTICS of the port's socket: frames the kernel passed to it, and frames it
    /// dropped because the socket's receive buffer was full.
    socket_packets,
    socket_drops,
}

impl PortCounters {
    /// Ingress frames the switch dropped before any queue, by reason (the port model's own
    /// drops are in its per-queue `drops_by_reason`).
    pub fn ingress_drops(&self) -> [(&'static str, u64); 7] {
        [
            ("runt", self.runts),
            ("oversize", self.oversize),
            ("link_local", self.link_local),
            ("ipv4_malformed", self.ipv4_malformed),
            ("ipv4_bad_checksum", self.ipv4_bad_checksum),
            ("filtered", self.filtered),
            ("pool_exhausted", self.pool_exhausted),
        ]
    }
    /// Forwarded ingress frames by kind.
    pub fn ingress_kinds(&self) -> [(&'static str, u64); 6] {
        [
            ("ipv4_ect", self.ipv4_ect),
            ("ipv4_not_ect", self.ipv4_not_ect),
            ("ipv4_options", self.ipv4_options),
            ("arp", self.arp),
            ("ipv6", self.ipv6),
            ("other_ethertype", self.other_ethertype),
        ]
    }
}

/// One egress port: the core's port model, its shaper and its bookkeeping.
pub struct EgressPort {
    pub name: String,
    pub ifname: String,
    pub rate_bps: u64,
    pub port: Port<Frame>,
    pub shaper: TokenBucket,
    pub counters: PortCounters,
    /// Enqueue times handed to the port never go backwards (see `Switch::on_frame`).
    last_enq_ns: Nanos,
    /// One-way propagation delay of the port's link.
    pub delay_ns: Nanos,
    /// Frames from this port's host still on the wire: (arrival at the switch, frame).
    ingress_line: VecDeque<Frame>,
    /// Frames to this port's host on the wire: (delivery time, slot, length).
    egress_line: VecDeque<(Nanos, u32, u16)>,
}

/// Counters of the whole switch at one instant; two snapshots give a window.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub at_ns: Nanos,
    pub ports: Vec<PortSnapshot>,
}

#[derive(Clone, Debug)]
pub struct PortSnapshot {
    pub counters: PortCounters,
    /// The port's queue statistics (their counters, and the peaks up to then).
    pub queues: Vec<QueueStats>,
}

pub struct Switch {
    pub ports: Vec<EgressPort>,
    pub pool: FramePool,
    pub buffer_pool: BufferPool,
    pub fib: Fib,
    non_ip_dscp: u8,
    overhead: u64,
    /// `shaper.rate_fraction`, reported so that the caller need not know its default.
    shaper_rate_fraction: f64,
    pub start_ns: Nanos,
    /// Frames handed to an egress socket.
    pub frames_forwarded: u64,
    /// Largest queue length per port and queue before the window started (`reset_peak`
    /// restarts the port's own maximum at the window start).
    peak_before: Vec<Vec<u64>>,
    pub window_start: Option<Snapshot>,
    pub window_end: Option<Snapshot>,
    /// Each port's queue counters at the previous time-series sample, and its time.
    last_sample: Vec<Vec<QueueStats>>,
    last_sample_ns: Nanos,
}

impl Switch {
    pub fn new(cfg: &EmuConfig, now: Nanos) -> Result<Switch, String> {
        let mut ports = Vec::with_capacity(cfg.ports.len());
        for (i, p) in cfg.ports.iter().enumerate() {
            let seed = Stream::EmuPortMarking(i as u64).seed(cfg.seed);
            let port = Port::new(&cfg.switch, &cfg.marking, p.rate.0, seed)?;
            let shaper_rate = ((p.rate.0 as f64) * cfg.shaper.rate_fraction).round().max(1.0) as u64;
            ports.push(EgressPort {
                name: p.name.clone().unwrap_or_else(|| p.ifname.clone()),
                ifname: p.ifname.clone(),
                rate_bps: p.rate.0,
                port,
                shaper: TokenBucket::new(shaper_rate, cfg.shaper.burst.0, now),
                counters: PortCounters::default(),
                last_enq_ns: 0,
                delay_ns: p.delay.0,
                ingress_line: VecDeque::with_capacity(256),
                egress_line: VecDeque::with_capacity(256),
            });
        }
        let buffer_pool = match cfg.switch.pool {
            Some(b) => BufferPool::new(b.0),
            None => BufferPool::unlimited(),
        };
        let frames = cfg.pool_frames.unwrap_or_else(|| {
            // The buffer in small frames, plus what the two delay lines hold at line rate.
            let on_wire: u64 = cfg.ports.iter().map(|p| p.rate.0 / 8 * 2 * p.delay.0 / 1_000_000_000 / 64).sum();
            let per_port = (cfg.switch.buffer.0 / 64) as usize + 64;
            (per_port * cfg.ports.len() + on_wire as usize + 1024).min(32768)
        });
        let mut fib = Fib::new(cfg.learn);
        for s in &cfg.static_macs {
            fib.add_static(parse_mac(&s.mac)?, s.port as u8);
        }
        let peak_before = ports.iter().map(|p| vec![0; p.port.n_queues()]).collect();
        let last_sample = ports.iter().map(|p| vec![QueueStats::default(); p.port.n_queues()]).collect();
        Ok(Switch {
            ports,
            pool: FramePool::new(frames, SLOT_SIZE),
            buffer_pool,
            fib,
            non_ip_dscp: cfg.non_ip_dscp,
            overhead: cfg.shaper.overhead as u64,
            shaper_rate_fraction: cfg.shaper.rate_fraction,
            start_ns: now,
            frames_forwarded: 0,
            peak_before,
            window_start: None,
            window_end: None,
            last_sample,
            last_sample_ns: now,
        })
    }

    /// A frame of `len` bytes was received into `slot` on `in_port`, with kernel timestamp
    /// `rx_ns`. The switch owns the slot from now on.
    ///
    /// The frame joins its egress queue with enqueue time `rx_ns`, so its sojourn includes
    /// the time it waited in the socket (TCN measures sojourn from arrival at the switch).
    /// Frames from different ingress sockets are handled a batch at a time, so their
    /// timestamps can arrive slightly out of order; the time handed to a port is clamped to
    /// never go backwards (schemes keep state across arrivals in time order).
    pub fn on_frame(&mut self, in_port: usize, slot: u32, len: usize, rx_ns: Nanos) {
        let c = &mut self.ports[in_port].counters;
        c.rx_frames += 1;
        c.rx_bytes += len as u64;
        if len > SLOT_SIZE {
            c.oversize += 1;
            self.pool.release(slot);
            return;
        }
        let parsed = match wire::parse(self.pool.bytes(slot, len)) {
            Ok(p) => p,
            Err(e) => {
                *match e {
                    ParseError::Runt => &mut c.runts,
                    ParseError::LinkLocal => &mut c.link_local,
                    ParseError::Ipv4Malformed => &mut c.ipv4_malformed,
                    ParseError::Ipv4BadChecksum => &mut c.ipv4_bad_checksum,
                } += 1;
                self.pool.release(slot);
                return;
            }
        };
        let (ip_off, dscp, ecn, payload) = match parsed.l3 {
            L3::Ipv4(ip) => {
                if ip.ecn == wire::ECN_NOT_ECT {
                    c.ipv4_not_ect += 1;
                } else {
                    c.ipv4_ect += 1;
                }
                c.ipv4_options += ip.options as u64;
                (ip.offset, ip.dscp, ip.ecn, ip.payload)
            }
            other => {
                *match other {
                    L3::Arp => &mut c.arp,
                    L3::Ipv6 => &mut c.ipv6,
                    _ => &mut c.other_ethertype,
                } += 1;
                (0, self.non_ip_dscp, wire::ECN_NOT_ECT, 0)
            }
        };
        if !self.fib.learn(&parsed.src, in_port as u8) {
            c.fib_full += 1;
        }
        let d = self.ports[in_port].delay_ns;
        let frame = Frame {
            rx_ns: rx_ns + d,
            slot,
            len: len as u16,
            ip_off,
            payload,
            dscp,
            ecn,
            in_port: in_port as u8,
            ce: false,
        };
        if d > 0 {
            self.ports[in_port].ingress_line.push_back(frame);
        } else {
            self.forward(frame);
        }
    }

    /// Frames whose propagation to the switch has ended by `now` join their queues.
    pub fn release_ingress(&mut self, now: Nanos) {
        for p in 0..self.ports.len() {
            while let Some(f) = self.ports[p].ingress_line.front().copied() {
                if f.rx_ns > now {
                    break;
                }
                self.ports[p].ingress_line.pop_front();
                self.forward(f);
            }
        }
    }

    /// Forward a frame that has arrived (its `rx_ns` is its arrival time at the switch).
    fn forward(&mut self, frame: Frame) {
        let in_port = frame.in_port as usize;
        let slot = frame.slot;
        let len = frame.len as usize;
        let dst = {
            let b = self.pool.bytes(slot, 6);
            [b[0], b[1], b[2], b[3], b[4], b[5]]
        };
        match self.fib.lookup(&dst, in_port as u8) {
            Forward::Port(p) if (p as usize) < self.ports.len() => self.enqueue(p as usize, frame),
            Forward::Port(_) | Forward::Filter => {
                self.ports[in_port].counters.filtered += 1;
                self.pool.release(slot);
            }
            Forward::Flood => {
                self.ports[in_port].counters.flooded += 1;
                // Copies for all but the last egress port; the last one takes the original.
                let last = (0..self.ports.len()).rev().find(|&p| p != in_port);
                let Some(last) = last else {
                    self.pool.release(slot);
                    return;
                };
                for p in 0..last {
                    if p == in_port {
                        continue;
                    }
                    match self.pool.alloc() {
                        Some(s) => {
                            self.pool.copy_slot(slot, s, len);
                            self.enqueue(p, Frame { slot: s, ..frame });
                        }
                        None => self.ports[in_port].counters.pool_exhausted += 1,
                    }
                }
                self.enqueue(last, frame);
            }
        }
    }

    fn enqueue(&mut self, p: usize, frame: Frame) {
        let ep = &mut self.ports[p];
        let t = frame.rx_ns.max(ep.last_enq_ns);
        ep.last_enq_ns = t;
        if let Err((f, _reason)) = ep.port.enqueue(t, frame, &mut self.buffer_pool) {
            self.pool.release(f.slot);
        }
    }

    /// Release arrived frames, send every frame the shapers allow at `now`, and deliver
    /// the frames whose propagation delay has passed. `send(port, bytes)` returns false if
    /// the frame could not be sent (counted in `tx_errors`).
    pub fn transmit(&mut self, now: Nanos, mut send: impl FnMut(usize, &[u8]) -> bool) {
        self.release_ingress(now);
        for p in 0..self.ports.len() {
            loop {
                let ep = &mut self.ports[p];
                if ep.port.is_empty() || !ep.shaper.ready(now) {
                    break;
                }
                // The slots of frames the scheme drops at dequeue go back at once.
                let pool = &mut self.pool;
                let out = ep.port.dequeue_with(now, &mut self.buffer_pool, |f, _, _| pool.release(f.slot));
                let Some((frame, _)) = out else { break };
                let len = frame.len as usize;
                if frame.ce && frame.ip_off != 0 {
                    let bytes = self.pool.bytes_mut(frame.slot, len);
                    if wire::set_ce(&mut bytes[frame.ip_off as usize..]) {
                        ep.counters.ce_set += 1;
                    }
                }
                ep.shaper.consume(now, len as u64 + self.overhead);
                if ep.delay_ns > 0 {
                    ep.egress_line.push_back((now + ep.delay_ns, frame.slot, frame.len));
                    continue;
                }
                if send(p, self.pool.bytes(frame.slot, len)) {
                    ep.counters.tx_frames += 1;
                    ep.counters.tx_bytes += len as u64;
                    self.frames_forwarded += 1;
                } else {
                    ep.counters.tx_errors += 1;
                }
                self.pool.release(frame.slot);
            }
            let ep = &mut self.ports[p];
            while let Some(&(t, slot, len)) = ep.egress_line.front() {
                if t > now {
                    break;
                }
                ep.egress_line.pop_front();
                if send(p, self.pool.bytes(slot, len as usize)) {
                    ep.counters.tx_frames += 1;
                    ep.counters.tx_bytes += len as u64;
                    self.frames_forwarded += 1;
                } else {
                    ep.counters.tx_errors += 1;
                }
                self.pool.release(slot);
            }
        }
    }

    /// The earliest time `transmit` has work: a backlogged port's shaper allows a frame, or
    /// a frame in a delay line is due (None: nothing pending).
    pub fn next_tx_at(&mut self, now: Nanos) -> Option<Nanos> {
        let mut t: Option<Nanos> = None;
        for p in self.ports.iter_mut() {
            let mut cand = [None, None, None];
            if !p.port.is_empty() {
                cand[0] = Some(p.shaper.ready_at(now));
            }
            cand[1] = p.ingress_line.front().map(|f| f.rx_ns);
            cand[2] = p.egress_line.front().map(|e| e.0);
            for c in cand.into_iter().flatten() {
                t = Some(t.map_or(c, |x: Nanos| x.min(c)));
            }
        }
        t
    }

    pub fn snapshot(&mut self, now: Nanos) -> Snapshot {
        let ports = self
            .ports
            .iter_mut()
            .map(|p| {
                p.port.advance_clock(now);
                PortSnapshot { counters: p.counters.clone(), queues: p.port.stats() }
            })
            .collect();
        Snapshot { at_ns: now, ports }
    }

    /// Start the measurement window: counters are reported relative to now, and queue
    /// maxima restart.
    pub fn start_window(&mut self, now: Nanos) {
        for (i, p) in self.ports.iter_mut().enumerate() {
            for (q, s) in p.port.stats().iter().enumerate() {
                self.peak_before[i][q] = self.peak_before[i][q].max(s.max_bytes);
            }
            p.port.reset_peak();
        }
        self.window_start = Some(self.snapshot(now));
        self.window_end = None;
    }

    /// End the measurement window (the final report still covers the whole run too).
    pub fn end_window(&mut self, now: Nanos) {
        if self.window_start.is_some() && self.window_end.is_none() {
            self.window_end = Some(self.snapshot(now));
        }
    }

    /// The report: `total` (since start) and `window` (between `start_window` and
    /// `end_window` or now; equal to `total` if no window was started).
    pub fn report(&mut self, now: Nanos) -> Value {
        let cur = self.snapshot(now);
        let zero = Snapshot {
            at_ns: self.start_ns,
            ports: cur
                .ports
                .iter()
                .map(|p| PortSnapshot {
                    counters: PortCounters::default(),
                    queues: vec![QueueStats::default(); p.queues.len()],
                })
                .collect(),
        };
        let total = self.section(&zero, &cur, true);
        let window = match (&self.window_start, &self.window_end) {
            (Some(a), Some(b)) => self.section(a, b, false),
            (Some(a), None) => self.section(a, &cur, false),
            (None, _) => total.clone(),
        };
        let pool_exhausted: u64 = self.ports.iter().map(|p| p.counters.pool_exhausted).sum();
        let mut drops = Map::new();
        let mut kinds = Map::new();
        for p in &self.ports {
            for (k, v) in p.counters.ingress_drops() {
                *drops.entry(k).or_insert(json!(0u64)) = json!(drops.get(k).and_then(Value::as_u64).unwrap_or(0) + v);
            }
            for (k, v) in p.counters.ingress_kinds() {
                *kinds.entry(k).or_insert(json!(0u64)) = json!(kinds.get(k).and_then(Value::as_u64).unwrap_or(0) + v);
            }
        }
        json!({
            "ingress_drops_by_reason": drops,
            "ingress_by_kind": kinds,
            "fib_full": self.ports.iter().map(|p| p.counters.fib_full).sum::<u64>(),
            "start_ns": self.start_ns,
            "now_ns": now,
            "frames_forwarded": self.frames_forwarded,
            "frames_received": self.ports.iter().map(|p| p.counters.rx_frames).sum::<u64>(),
            "socket_drops": self.ports.iter().map(|p| p.counters.socket_drops).sum::<u64>(),
            "frame_pool": {"slots": self.pool.capacity(), "free": self.pool.available(), "exhausted": pool_exhausted},
            "shaper_rate_fraction": self.shaper_rate_fraction,
            "total": total,
            "window": window,
        })
    }

    fn section(&self, a: &Snapshot, b: &Snapshot, whole_run: bool) -> Value {
        let dt = b.at_ns.saturating_sub(a.at_ns).max(1);
        let ports: Vec<Value> = self
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (pa, pb) = (&a.ports[i], &b.ports[i]);
                let occ = p.port.queue_occ();
                let queues: Vec<Value> = (0..pb.queues.len())
                    .map(|q| {
                        let (sa, sb) = (&pa.queues[q], &pb.queues[q]);
                        let w = sb.since(sa);
                        let max_q = if whole_run { sb.max_bytes.max(self.peak_before[i][q]) } else { sb.max_bytes };
                        let mut v = json!({
                            "queue": q,
                            "enq_pkts": w.enq_pkts,
                            "enq_bytes": w.enq_bytes,
                            "deq_pkts": w.deq_pkts,
                            "deq_bytes": w.deq_bytes,
                            "payload_bytes": w.deq_payload_bytes,
                            "goodput_bps": w.goodput_bps(dt),
                            "marks": w.total_marks(),
                            "drops": w.total_drops(),
                            "marks_by_reason": by_reason(&w.marks),
                            "drops_by_reason": by_reason(&w.drops),
                            "unmarkable_by_reason": by_reason(&w.unmarkable),
                            "avg_qlen_bytes": w.avg_qlen_bytes(dt),
                            "max_qlen_bytes": max_q,
                            "qlen_bytes": occ[q].bytes,
                            "avg_sojourn_us": w.avg_sojourn_us(),
                        });
                        if whole_run {
                            v["max_sojourn_us"] = json!(sb.sojourn_max_ns as f64 / 1e3);
                        }
                        v
                    })
                    .collect();
                let mut v = pb.counters.diff(&pa.counters).to_json();
                let m = v.as_object_mut().unwrap();
                m.insert("name".into(), json!(p.name));
                m.insert("ifname".into(), json!(p.ifname));
                m.insert("rate_bps".into(), json!(p.rate_bps));
                m.insert("shaper_rate_bps".into(), json!(p.shaper.rate_bps()));
                m.insert("shaper_burst_bytes".into(), json!(p.shaper.burst_bytes()));
                m.insert("delay_ns".into(), json!(p.delay_ns));
                m.insert("queues".into(), Value::Array(queues));
                v
            })
            .collect();
        json!({"from_ns": a.at_ns, "to_ns": b.at_ns, "duration_s": dt as f64 / 1e9, "ports": ports})
    }

    /// The time series' rows of the period since the previous sample (or the start), one per
    /// port and queue: the simulator's `timeseries.csv` rows, by the same code. `t_s` is
    /// the switch's clock (CLOCK_REALTIME).
    pub fn sample(&mut self, now: Nanos) -> TimeSeries {
        let mut ts = TimeSeries::default();
        let interval = now.saturating_sub(self.last_sample_ns).max(1);
        for (p, prev) in self.ports.iter_mut().zip(self.last_sample.iter_mut()) {
            p.port.advance_clock(now);
            ts.record(now, &p.name, &p.port, p.rate_bps, prev, interval);
        }
        self.last_sample_ns = now;
        ts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ShaperConfig;
    use crate::wire::tests::{ether_frame, refresh_checksum, tcp_frame, tcp_frame_with_options};
    use crate::wire::{ipv4_checksum_ok, Mac, ECN_CE, ECN_ECT0};
    use ecnlab_core::marking::Reason;

    const H: [Mac; 3] = [[2, 0xec, 0, 0, 0, 1], [2, 0xec, 0, 0, 0, 2], [2, 0xec, 0, 0, 0, 3]];

    fn cfg(extra: &str) -> EmuConfig {
        let text = format!(
            r#"{{"ports": [{{"ifname": "p0", "name": "s0->h0", "rate": "100Mbps"}},
                          {{"ifname": "p1", "rate": "100Mbps"}}, {{"ifname": "p2", "rate": "100Mbps"}}],
                "static_macs": [{{"mac": "02:ec:00:00:00:01", "port": 0}}] {extra}}}"#
        );
        EmuConfig::from_json(&text).unwrap()
    }

    fn rx(sw: &mut Switch, port: usize, bytes: &[u8], t: Nanos) {
        let slot = sw.pool.alloc().unwrap();
        sw.pool.slot_mut(slot)[..bytes.len()].copy_from_slice(bytes);
        sw.on_frame(port, slot, bytes.len(), t);
    }

    fn drain(sw: &mut Switch, now: Nanos) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        sw.transmit(now, |p, b| {
            out.push((p, b.to_vec()));
            true
        });
        out
    }

    #[test]
    fn forwards_by_static_and_learned_macs_and_floods_unknown() {
        let mut sw = Switch::new(&cfg(""), 0).unwrap();
        let free = sw.pool.available();
        // h1 -> h0: static entry for h0.
        rx(&mut sw, 1, &tcp_frame(H[0], H[1], 0, 100), 10);
        // h0 -> h2: h2 unknown yet -> flooded to ports 1 and 2.
        rx(&mut sw, 0, &tcp_frame(H[2], H[0], 0, 100), 20);
        let out = drain(&mut sw, 1_000_000);
        let ports: Vec<usize> = out.iter().map(|(p, _)| *p).collect();
        assert_eq!(ports, vec![0, 1, 2]);
        // h1 was learned on port 1 from its first frame.
        rx(&mut sw, 0, &tcp_frame(H[1], H[0], 0, 100), 30);
        let out = drain(&mut sw, 2_000_000);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 1);
        // A frame for a host behind its own ingress port is filtered.
        rx(&mut sw, 1, &tcp_frame(H[1], H[0], 0, 100), 40);
        assert!(drain(&mut sw, 3_000_000).is_empty());
        assert_eq!(sw.ports[1].counters.filtered, 1);
        // Runts are dropped and counted; every slot came back.
        rx(&mut sw, 2, &[1, 2, 3], 50);
        assert_eq!(sw.ports[2].counters.runts, 1);
        assert_eq!(sw.pool.available(), free);
        assert_eq!(sw.frames_forwarded, 4);
    }

    /// TCN with a 100 us threshold: a frame that waited longer (counted from its kernel
    /// receive timestamp) leaves with CE and a valid checksum; a not-ECT one passes unmarked.
    #[test]
    fn marks_ect_frames_from_kernel_timestamps_and_fixes_the_checksum() {
        let mut sw = Switch::new(&cfg(r#", "marking": {"scheme": "tcn", "tcn": {"threshold": "100us"}}"#), 0).unwrap();
        let t = 1_000_000;
        rx(&mut sw, 1, &tcp_frame(H[0], H[1], (4 << 2) | ECN_ECT0, 1448), t);
        rx(&mut sw, 1, &tcp_frame(H[0], H[1], 4 << 2, 1448), t);
        rx(&mut sw, 2, &tcp_frame(H[0], H[2], (4 << 2) | ECN_ECT0, 1448), t + 150_000);
        // At t + 200 us the first two have waited 200 us (> 100 us): the 2.5 KB bucket lets
        // both go, 528 B into debt, paid back at 99.5 Mbit/s by t + 242.5 us. The third then
        // leaves at t + 245 us having waited 95 us: no mark.
        let mut out = drain(&mut sw, t + 200_000);
        assert_eq!(out.len(), 2);
        assert!(drain(&mut sw, t + 242_000).is_empty());
        out.extend(drain(&mut sw, t + 245_000));
        assert_eq!(out.len(), 3);
        let tos: Vec<u8> = out.iter().map(|(_, b)| b[15]).collect();
        assert_eq!(tos[0], (4 << 2) | ECN_CE, "ECT frame past the threshold is marked");
        assert_eq!(tos[1], 4 << 2, "not-ECT frame is never marked");
        assert_eq!(tos[2], (4 << 2) | ECN_ECT0, "95 us < 100 us: not marked");
        for (_, b) in &out {
            assert!(ipv4_checksum_ok(&b[14..34]));
        }
        let st = &sw.ports[0].port.stats()[0];
        assert_eq!(st.marks[Reason::TcnSojourn as usize], 1);
        assert_eq!(st.unmarkable[Reason::TcnSojourn as usize], 1);
        assert_eq!(sw.ports[0].counters.ce_set, 1);
    }

    /// Link delays: 1 ms on both links. A frame received at t joins the queue at t + 1 ms
    /// (its sojourn counts from there) and reaches the receiver at t + 2 ms.
    #[test]
    fn propagation_delay_on_both_links() {
        let text = r#"{"ports": [{"ifname": "p0", "rate": "100Mbps", "delay": "1ms"},
                                  {"ifname": "p1", "rate": "100Mbps", "delay": "1ms"}],
                       "static_macs": [{"mac": "02:ec:00:00:00:01", "port": 0}],
                       "marking": {"scheme": "tcn", "tcn": {"threshold": "100us"}}}"#;
        let mut sw = Switch::new(&EmuConfig::from_json(text).unwrap(), 0).unwrap();
        let free = sw.pool.available();
        let t = 1_000_000_000;
        rx(&mut sw, 1, &tcp_frame(H[0], H[1], ECN_ECT0, 1000), t);
        assert!(drain(&mut sw, t + 999_999).is_empty());
        assert!(sw.ports[0].port.is_empty(), "still on the wire");
        assert_eq!(sw.next_tx_at(t + 500_000), Some(t + 1_000_000));
        assert!(drain(&mut sw, t + 1_000_000).is_empty(), "dequeued, now on the egress wire");
        assert_eq!(sw.next_tx_at(t + 1_000_000), Some(t + 2_000_000));
        let out = drain(&mut sw, t + 2_000_000);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1[15] & 3, ECN_ECT0, "no queueing: propagation is not sojourn");
        assert_eq!(sw.pool.available(), free);
        assert_eq!(sw.next_tx_at(t + 2_000_000), None);
    }

    /// TCN marking not-ECT frames under `non_ect = "drop"` drops at dequeue: the port hands
    /// those frames back and their slots return to the pool.
    #[test]
    fn dequeue_drops_return_their_slots() {
        let extra = r#", "marking": {"scheme": "tcn", "non_ect": "drop", "tcn": {"threshold": "10us"}}"#;
        let mut sw = Switch::new(&cfg(extra), 0).unwrap();
        let free = sw.pool.available();
        for i in 0..20 {
            rx(&mut sw, 1, &tcp_frame(H[0], H[1], 0, 1448), 1000 + i);
        }
        let mut sent = 0;
        let mut t = 1_000_000;
        while !sw.ports[0].port.is_empty() {
            sent += drain(&mut sw, t).len();
            t += 1_000_000;
        }
        let st = &sw.ports[0].port.stats()[0];
        assert_eq!(sent as u64 + st.total_drops(), 20);
        assert!(st.total_drops() > 0);
        assert_eq!(sw.pool.available(), free, "every slot is back in the pool");
    }

    #[test]
    fn non_ip_frames_use_the_configured_dscp_and_report_has_window() {
        let cfgx = cfg(r#", "non_ip_dscp": 2, "switch": {"queues": 3}"#);
        let mut sw = Switch::new(&cfgx, 0).unwrap();
        let mut arp = H[0].to_vec();
        arp.extend_from_slice(&H[1]);
        arp.extend_from_slice(&[0x08, 0x06]);
        arp.resize(42, 0);
        rx(&mut sw, 1, &arp, 10);
        assert_eq!(sw.ports[0].port.queue_occ()[2].pkts, 1);
        sw.start_window(100);
        drain(&mut sw, 1_000_000);
        let r = sw.report(2_000_000);
        assert_eq!(r["window"]["ports"][0]["queues"][2]["deq_pkts"], 1);
        assert_eq!(r["window"]["ports"][0]["queues"][2]["enq_pkts"], 0);
        assert_eq!(r["total"]["ports"][0]["queues"][2]["enq_pkts"], 1);
        assert_eq!(r["total"]["ports"][0]["name"], "s0->h0");
        // The shaper's rate fraction is the switch's default, reported for `ecnlab emulate`.
        assert_eq!(r["shaper_rate_fraction"], ShaperConfig::default().rate_fraction);
    }

    /// The time series and the report measure alike (both are `ecnlab_core::measure`): the
    /// rows of a sample taken at the window's start and end are the report's window, queue by
    /// queue; goodput counts the frames' TCP payload; the scheme's capacity estimate is a
    /// column, as in the simulator's `timeseries.csv`.
    #[test]
    fn time_series_rows_are_the_report_window() {
        let extra = r#", "switch": {"queues": 2}, "marking": {"scheme": "ideal", "ideal": {"k": "3KB"}}"#;
        let mut sw = Switch::new(&cfg(extra), 0).unwrap();
        let (t0, t1) = (1_000_000, 9_000_000);
        sw.sample(t0);
        sw.start_window(t0);
        for i in 0..30 {
            rx(
                &mut sw,
                1 + i % 2,
                &tcp_frame(H[0], H[1 + i % 2], ((i % 2) << 2) as u8 | ECN_ECT0, 1448),
                t0 + i as u64,
            );
        }
        let mut t = t0;
        while t < t1 {
            t += 50_000;
            drain(&mut sw, t);
        }
        let ts = sw.sample(t1);
        let r = sw.report(t1);
        assert_eq!(ts.len(), 3 * 2, "a row per port and queue");
        assert_eq!((ts.t_s[0], ts.port[0].as_str()), (t1 as f64 / 1e9, "s0->h0"));
        let w = &r["window"]["ports"][0]["queues"];
        for q in 0..2 {
            assert_eq!(w[q]["deq_pkts"], 15);
            assert_eq!(w[q]["payload_bytes"], 15 * 1448);
            assert_eq!(ts.goodput_bps[q], w[q]["goodput_bps"].as_f64().unwrap());
            assert_eq!(ts.avg_qlen_bytes[q], w[q]["avg_qlen_bytes"].as_f64().unwrap());
            assert_eq!(ts.sojourn_us[q], w[q]["avg_sojourn_us"].as_f64());
            assert_eq!(ts.marks[q], w[q]["marks"].as_u64().unwrap());
            assert!(ts.marks[q] > 0, "a 3 KB threshold marks a 15-frame burst");
            assert!(ts.est_rate_bps[q].is_some_and(|c| c > 0.0), "the oracle's capacity is a column");
        }
    }

    /// Every kind of frame a port can receive, as the ingress path sees it: each lands in
    /// its own counter, the droppable ones free their slot at once, the forwardable ones
    /// leave (unmarked unless ECT IPv4), and a valid frame after all of them still goes
    /// through with a mark.
    #[test]
    fn bad_and_odd_frames_are_counted_by_kind_and_never_stop_forwarding() {
        let marking = r#", "marking": {"scheme": "tcn", "tcn": {"threshold": "1us"}}"#;
        let mut sw = Switch::new(&cfg(marking), 0).unwrap();
        let free = sw.pool.available();
        let ect = (3 << 2) | ECN_ECT0;
        let good = tcp_frame(H[0], H[1], ect, 1000);
        let mut bad_ck = good.clone();
        bad_ck[22] ^= 0x01; // TTL changed, checksum not
        let mut bad_ver = good.clone();
        bad_ver[14] = 0x55;
        refresh_checksum(&mut bad_ver);
        let mut too_long = good.clone();
        too_long[16..18].copy_from_slice(&2000u16.to_be_bytes());
        refresh_checksum(&mut too_long);
        let mut ipv6 = ether_frame(H[0], H[1], wire::ETHERTYPE_IPV6, 80);
        ipv6[14] = 0x60 | 0x0b; // traffic class bits that would read as ECT
        let frames: Vec<(Vec<u8>, bool)> = vec![
            (vec![], false),
            (vec![0xff], false),
            (good[..13].to_vec(), false),
            (good[..20].to_vec(), false), // IPv4 header cut
            (bad_ck, false),
            (bad_ver, false),
            (too_long, false),
            (ether_frame([0x01, 0x80, 0xc2, 0, 0, 0x0e], H[1], 0x88cc, 60), false), // LLDP
            (ether_frame([0x01, 0x80, 0xc2, 0, 0, 0x01], H[1], 0x8808, 60), false), // pause
            (ether_frame(H[0], H[1], wire::ETHERTYPE_ARP, 42), true),
            (ipv6, true),
            (ether_frame(H[0], H[1], 0x1234, 60), true),
            (tcp_frame(H[0], H[1], 3 << 2, 500), true), // not-ECT
            (tcp_frame_with_options(H[0], H[1], ect, 500, 3), true),
        ];
        let t = 1_000_000;
        let mut expected = 0;
        for (f, fwd) in &frames {
            rx(&mut sw, 1, f, t);
            expected += *fwd as usize;
        }
        let oversize = sw.pool.alloc().unwrap();
        sw.on_frame(1, oversize, SLOT_SIZE + 1, t);
        // Everything waits 1 ms in the queue (far past TCN's 1 us), then leaves.
        let out = drain(&mut sw, t + 1_000_000);
        assert_eq!(out.len(), expected);
        assert!(out.iter().all(|(p, _)| *p == 0));
        let c = &sw.ports[1].counters;
        assert_eq!(c.runts, 3);
        assert_eq!(c.ipv4_malformed, 3);
        assert_eq!(c.ipv4_bad_checksum, 1);
        assert_eq!(c.link_local, 2);
        assert_eq!(c.oversize, 1);
        assert_eq!((c.arp, c.ipv6, c.other_ethertype), (1, 1, 1));
        assert_eq!((c.ipv4_ect, c.ipv4_not_ect, c.ipv4_options), (1, 1, 1));
        assert_eq!(c.rx_frames, frames.len() as u64 + 1);
        // Only the ECT frame with options was marked; non-IPv4 frames are byte-for-byte
        // unchanged; every IPv4 frame that left has a valid checksum.
        assert_eq!(sw.ports[0].counters.ce_set, 1);
        for (_, b) in &out {
            if let Ok(wire::Parsed { l3: L3::Ipv4(ip), .. }) = wire::parse(b) {
                let ihl = (b[14] & 0x0f) as usize * 4;
                assert!(ipv4_checksum_ok(&b[14..14 + ihl]));
                assert_eq!(ip.ecn == ECN_CE, ip.options);
            } else {
                assert!(frames.iter().any(|(f, fwd)| *fwd && f == b), "non-IPv4 frame changed: {b:02x?}");
            }
        }
        assert_eq!(sw.pool.available(), free, "every slot is back");
        // And the switch still forwards (and marks) a good frame.
        rx(&mut sw, 1, &good, t + 2_000_000);
        let out = drain(&mut sw, t + 3_000_000);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1[15] & 3, ECN_CE);
        let r = sw.report(t + 3_000_000);
        let d = &r["ingress_drops_by_reason"];
        assert_eq!(
            (d["runt"].as_u64(), d["ipv4_malformed"].as_u64(), d["link_local"].as_u64()),
            (Some(3), Some(3), Some(2))
        );
        assert_eq!(r["ingress_by_kind"]["ipv6"], 1);
        assert_eq!(r["total"]["ports"][1]["ipv4_bad_checksum"], 1);
    }

    /// A flood of frames from ever-new source MACs to unknown destinations: the learned
    /// table stops at its bound, every frame is flooded, and no slot is lost.
    #[test]
    fn random_source_macs_do_not_grow_the_table() {
        let mut sw = Switch::new(&cfg(""), 0).unwrap();
        let free = sw.pool.available();
        let mut t = 1_000_000;
        for i in 0..20_000u32 {
            let b = i.to_be_bytes();
            let src = [2, 0xaa, b[0], b[1], b[2], b[3]];
            let dst = [2, 0xbb, b[0], b[1], b[2], b[3]];
            rx(&mut sw, 1, &tcp_frame(dst, src, 0, 0), t);
            t += 100_000;
            drain(&mut sw, t);
        }
        assert_eq!(sw.fib.learned_len(), crate::fib::DEFAULT_MAX_LEARNED);
        assert_eq!(sw.ports[1].counters.fib_full, 20_000 - crate::fib::DEFAULT_MAX_LEARNED as u64);
        assert_eq!(sw.ports[1].counters.flooded, 20_000);
        drain(&mut sw, t + 1_000_000_000);
        assert_eq!(sw.pool.available(), free);
    }
}
