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
//! Measurement: [`crate::report`] (the report and the time series, by
//! [`ecnlab_core::measure`], the code the simulator measures with); here the counters only a
//! switch on sockets has ([`PortCounters`]: frames by kind, ingress drops, socket counters).
//!
//! Propagation delay: each port's link delay is applied inside the switch by two delay
//! lines (FIFOs ordered by release time, since the delay of a port is constant): frames
//! from the host wait `delay` before they join an egress queue, frames to the host wait
//! `delay` after they leave it.

use crate::capture::{Ingress, TcpInfo};
use crate::config::EmuConfig;
use crate::fib::{Fib, Forward};
use crate::frame::{Frame, FramePool};
use crate::shaper::TokenBucket;
use crate::wire::{self, parse_mac, ParseError, L3};
use ecnlab_core::buffer::BufferPool;
use ecnlab_core::port::Port;
use ecnlab_core::rng::Stream;
use ecnlab_core::Nanos;
use serde::Serialize;
use std::collections::VecDeque;

/// Largest frame a slot holds (1500-byte MTU, two VLAN tags, with room to spare). Longer
/// frames (GRO/TSO left on) are dropped and counted as `oversize`.
pub const SLOT_SIZE: usize = 2048;

/// Declares [`PortCounters`]: one `u64` per field, with the window difference generated
/// from the same list, so a new counter cannot be forgotten in it.
macro_rules! port_counters {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// Per-port counters outside the port model.
        #[derive(Clone, Debug, Default, Serialize)]
        pub struct PortCounters {
            $($(#[doc = $doc])* pub $name: u64,)*
        }

        impl PortCounters {
            pub(crate) fn diff(&self, o: &PortCounters) -> PortCounters {
                PortCounters { $($name: self.$name - o.$name,)* }
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
    /// Ingress TCP segments dropped on purpose (`[faults]`, `crate::capture`).
    fault_drops,
    /// PACKET_STATISTICS of the port's socket: frames the kernel passed to it, and frames it
    /// dropped because the socket's receive buffer was full.
    socket_packets,
    socket_drops,
}

impl PortCounters {
    /// Ingress frames the switch dropped before any queue, by reason (the port model's own
    /// drops are in its per-queue `drops_by_reason`).
    pub fn ingress_drops(&self) -> [(&'static str, u64); 8] {
        [
            ("runt", self.runts),
            ("oversize", self.oversize),
            ("link_local", self.link_local),
            ("ipv4_malformed", self.ipv4_malformed),
            ("ipv4_bad_checksum", self.ipv4_bad_checksum),
            ("filtered", self.filtered),
            ("pool_exhausted", self.pool_exhausted),
            ("fault", self.fault_drops),
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

pub struct Switch {
    pub ports: Vec<EgressPort>,
    pub pool: FramePool,
    pub buffer_pool: BufferPool,
    pub fib: Fib,
    non_ip_dscp: u8,
    overhead: u64,
    /// `shaper.rate_fraction`, reported so that the caller need not know its default.
    pub(crate) shaper_rate_fraction: f64,
    pub start_ns: Nanos,
    /// Frames handed to an egress socket.
    pub frames_forwarded: u64,
    /// TCP at ingress: the capture and `[faults]`.
    pub ingress: Ingress,
    /// How late the event loop ran (`main.rs` observes each round).
    pub stalls: crate::stall::Stalls,
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
            ingress: Ingress::new(cfg.capture_frames, &cfg.faults),
            stalls: Default::default(),
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
        if self.ingress.active() && parsed.ipv4().is_some_and(|ip| ip.proto == 6) {
            let tcp = TcpInfo::parse(self.pool.bytes(slot, len), ip_off as usize, payload);
            if let Some(t) = tcp {
                if self.ingress.on_segment(in_port, rx_ns, &t).is_some() {
                    c.fault_drops += 1;
                    self.pool.release(slot);
                    return;
                }
            }
        }
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
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::wire::tests::{ether_frame, refresh_checksum, tcp_frame, tcp_frame_with_options};
    use crate::wire::{ipv4_checksum_ok, Mac, ECN_CE, ECN_ECT0};
    use ecnlab_core::marking::Reason;

    pub(crate) const H: [Mac; 3] = [[2, 0xec, 0, 0, 0, 1], [2, 0xec, 0, 0, 0, 2], [2, 0xec, 0, 0, 0, 3]];

    pub(crate) fn cfg(extra: &str) -> EmuConfig {
        let text = format!(
            r#"{{"ports": [{{"ifname": "p0", "name": "s0->h0", "rate": "100Mbps"}},
                          {{"ifname": "p1", "rate": "100Mbps"}}, {{"ifname": "p2", "rate": "100Mbps"}}],
                "static_macs": [{{"mac": "02:ec:00:00:00:01", "port": 0}}] {extra}}}"#
        );
        EmuConfig::from_json(&text).unwrap()
    }

    pub(crate) fn rx(sw: &mut Switch, port: usize, bytes: &[u8], t: Nanos) {
        let slot = sw.pool.alloc().unwrap();
        sw.pool.slot_mut(slot)[..bytes.len()].copy_from_slice(bytes);
        sw.on_frame(port, slot, bytes.len(), t);
    }

    pub(crate) fn drain(sw: &mut Switch, now: Nanos) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        sw.transmit(now, |p, b| {
            out.push((p, b.to_vec()));
            true
        });
        out
    }

    /// `faults.drop_syns = 1` and a capture: a SYN from h1 is recorded and lost (counted as
    /// the ingress drop `fault`, its slot back in the pool), its retransmission and a data
    /// segment pass; all three are in the report's `ingress_tcp`.
    #[test]
    fn faults_drop_before_any_queue_and_the_capture_sees_every_segment() {
        let mut sw = Switch::new(&cfg(r#", "capture_frames": 10, "faults": {"drop_syns": 1}"#), 0).unwrap();
        let free = sw.pool.available();
        let mut syn = tcp_frame(H[0], H[1], 0, 0);
        syn[14 + 20 + 13] = crate::capture::SYN;
        rx(&mut sw, 1, &syn, 1_000);
        assert_eq!((sw.ports[1].counters.fault_drops, sw.pool.available()), (1, free));
        rx(&mut sw, 1, &syn, 2_000);
        rx(&mut sw, 1, &tcp_frame(H[0], H[1], 0, 100), 3_000);
        assert_eq!(drain(&mut sw, 1_000_000).len(), 2);
        let r = sw.ingress.report().unwrap();
        assert_eq!((r.frames.len(), r.syns_dropped), (3, 1));
        assert_eq!(
            r.frames.iter().map(|f| (f[0], f[1], f[9])).collect::<Vec<_>>(),
            [(1_000, 1, 0), (2_000, 1, 0), (3_000, 1, 100)]
        );
        assert!(sw.ports[1].counters.ingress_drops().contains(&("fault", 1)));
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
        // The report's sums of these (`crate::report`) read the same counters.
        let drops: std::collections::BTreeMap<_, _> = sw.ports[1].counters.ingress_drops().into_iter().collect();
        assert_eq!((drops["runt"], drops["ipv4_malformed"], drops["link_local"]), (3, 3, 2));
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
