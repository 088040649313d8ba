//! Traffic sources that are not connections: the generated flow arrivals of `[[traffic]]`
//! (computed up front by [`crate::workload`], handed out one event at a time) and the
//! probes of `[[probes]]` (pings at a fixed interval, whose echoes give RTT samples).
//!
//! Sans-IO: the simulator calls in with `now` when an event of theirs fires and gets back
//! what to send and when to call again; the sources never touch the network or the clock.

use crate::config::ProbeSpec;
use crate::packet::{Ecn, Kind, Packet};
use crate::workload::FlowArrival;
use ecnlab_core::units::Nanos;

/// The generated flow arrivals, sorted by time, and the next one to hand out.
pub(crate) struct Arrivals {
    list: Vec<FlowArrival>,
    next: usize,
}

impl Arrivals {
    pub(crate) fn new(list: Vec<FlowArrival>) -> Arrivals {
        Arrivals { list, next: 0 }
    }
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }
    /// Time of the first arrival, if any (its event is scheduled at the start).
    pub(crate) fn first_time(&self) -> Option<Nanos> {
        self.list.first().map(|a| a.start_ns)
    }
    /// The arrivals still to come: after a run, those at or after its end, which never
    /// started (`flows.not_started`).
    pub(crate) fn pending(&self) -> &[FlowArrival] {
        &self.list[self.next..]
    }
    /// The arrival whose event fires now, and the time of the one after it (at most one
    /// arrival event is pending).
    pub(crate) fn take(&mut self) -> (FlowArrival, Option<Nanos>) {
        let a = self.list[self.next];
        self.next += 1;
        (a, self.list.get(self.next).map(|n| n.start_ns))
    }
}

/// A probe: pings from `src` to `dst` every `interval`, until `stop`.
pub(crate) struct Probe {
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub size: u32,
    pub interval: Nanos,
    pub stop: Option<Nanos>,
    pub sent: u64,
    /// RTTs of the pings sent from `measure_from` on.
    pub rtts_ns: Vec<Nanos>,
    /// The probe's ECMP hash key.
    pub ecmp: u64,
}

impl Probe {
    /// Probe `i` of the scenario, seeded from the master seed.
    pub(crate) fn new(i: usize, p: &ProbeSpec, seed: u64) -> Probe {
        Probe {
            src: p.src as u16,
            dst: p.dst as u16,
            class: p.class,
            size: p.size.0.max(28) as u32,
            interval: p.interval.0,
            stop: p.stop.map(|s| s.0),
            sent: 0,
            rtts_ns: Vec::new(),
            ecmp: crate::routing::probe_key(seed, i),
        }
    }

    /// The probe's send event fires at `now`: the ping to send and the time of the next
    /// send event, or None once the probe has stopped. `id` is the probe's index (the
    /// ping's `flow`).
    pub(crate) fn ping(&mut self, id: usize, now: Nanos) -> Option<(Packet, Nanos)> {
        if self.stop.is_some_and(|s| now >= s) {
            return None;
        }
        self.sent += 1;
        let pkt = Packet {
            flow: id as u32,
            src: self.src,
            dst: self.dst,
            seq: self.sent,
            tx_ns: now,
            payload: 0,
            size: self.size,
            kind: Kind::Ping,
            ecn: Ecn::NotEct,
            flags: 0,
            dscp: self.class,
            in_link: 0,
        };
        Some((pkt, now + self.interval))
    }

    /// The echo of a ping comes back at `now`: its RTT is kept if the ping was sent from
    /// `measure_from` on.
    pub(crate) fn on_pong(&mut self, pong: &Packet, now: Nanos, measure_from: Nanos) {
        if pong.tx_ns >= measure_from {
            self.rtts_ns.push(now - pong.tx_ns);
        }
    }
}

/// The echo a host returns for a ping.
pub(crate) fn pong(ping: &Packet) -> Packet {
    Packet { kind: Kind::Pong, src: ping.dst, dst: ping.src, ecn: Ecn::NotEct, ..*ping }
}
