//! Tests of the TCP state machines, with a tiny test-only network: one sender, one
//! receiver, a forward bottleneck (rate + fixed one-way delay, unbounded FIFO) whose fate
//! function may drop or CE-mark data packets, and a reverse path with the same delay.

use super::*;
use crate::packet::{flags, Ecn, Kind, Packet};
use ecnlab_core::units::{tx_time_ns, Duration, Nanos, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

mod completion;
mod dctcp;
mod dualq;
mod ecn_star;
mod loss;
mod newreno;
mod robustness;

const MSS: u64 = 1460;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Pass,
    Drop,
    /// CE-mark if ECN-capable (what a switch does).
    Mark,
    /// Set CE even on a not-ECT packet (a misbehaving network).
    ForceCe,
}

/// One ACK as the sender processed it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct AckRec {
    t: Nanos,
    seq: u64,
    ece: bool,
    cwnd_before: u64,
    cwnd_after: u64,
    alpha: f64,
    in_recovery: bool,
    /// This ACK started an ECN reduction window (stats.ecn_reductions went up).
    entered: bool,
}

type FateFn = Box<dyn FnMut(u64, &Packet) -> Fate>;

struct Net {
    s: TcpSender,
    r: TcpReceiver,
    delay: Nanos,
    rate_bps: u64,
    link_free: Nanos,
    fwd: VecDeque<(Nanos, Packet)>,
    rev: VecDeque<(Nanos, Packet)>,
    now: Nanos,
    /// Data packets handed to the network so far (the fate function's index).
    n_data: u64,
    fate: FateFn,
    buf: Vec<Packet>,
    acks: Vec<AckRec>,
    sent: Vec<Packet>,
    timeouts_at: Vec<Nanos>,
    finish: Option<Nanos>,
}

impl Net {
    fn new(cfg: &TcpConfig, delay: Nanos, rate_bps: u64, fate: FateFn) -> Self {
        Net {
            s: TcpSender::new(cfg, 7, 1, 2, 3),
            r: TcpReceiver::new(cfg, 7, 2, 1),
            delay,
            rate_bps,
            link_free: 0,
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            now: 0,
            n_data: 0,
            fate,
            buf: Vec::new(),
            acks: Vec::new(),
            sent: Vec::new(),
            timeouts_at: Vec::new(),
            finish: None,
        }
    }

    fn pass(cfg: &TcpConfig, delay: Nanos, rate_bps: u64) -> Self {
        Self::new(cfg, delay, rate_bps, Box::new(|_, _| Fate::Pass))
    }

    /// The application adds `bytes` at the current time.
    fn send(&mut self, bytes: u64) {
        self.s.add_data(bytes);
        self.finish = None;
        let mut buf = std::mem::take(&mut self.buf);
        self.s.poll(self.now, &mut buf);
        self.route_data(&mut buf);
        self.buf = buf;
    }

    fn route_data(&mut self, buf: &mut Vec<Packet>) {
        for mut p in buf.drain(..) {
            assert_eq!(p.kind, Kind::Data);
            assert_eq!(p.size, p.payload + crate::packet::TCP_IP_HEADER);
            assert_eq!(p.tx_ns, self.now);
            self.sent.push(p);
            let idx = self.n_data;
            self.n_data += 1;
            match (self.fate)(idx, &p) {
                Fate::Drop => continue,
                Fate::Mark if p.ecn != Ecn::NotEct => p.ecn = Ecn::Ce,
                Fate::ForceCe => p.ecn = Ecn::Ce,
                _ => {}
            }
            let depart = self.now.max(self.link_free) + tx_time_ns(p.size as u64, self.rate_bps);
            self.link_free = depart;
            self.fwd.push_back((depart + self.delay, p));
        }
    }

    /// Runs events up to `until` or until nothing is left to do.
    fn run(&mut self, until: Nanos) {
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            let t_fwd = self.fwd.front().map(|x| x.0);
            let t_rev = self.rev.front().map(|x| x.0);
            let t_rt = self.r.timer();
            let t_st = self.s.timer();
            let Some(t) = [t_fwd, t_rev, t_rt, t_st].into_iter().flatten().min() else { break };
            if t > until {
                break;
            }
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            if t_fwd == Some(t) {
                let (_, p) = self.fwd.pop_front().unwrap();
                self.r.on_data(t, &p, &mut buf);
                for a in buf.drain(..) {
                    assert_eq!(a.kind, Kind::Ack);
                    assert_eq!(a.ecn, Ecn::NotEct);
                    assert_eq!(a.dscp, p.dscp);
                    self.rev.push_back((t + self.delay, a));
                }
            } else if t_rev == Some(t) {
                let (_, a) = self.rev.pop_front().unwrap();
                let before = self.s.cwnd();
                let n_red = self.s.stats().ecn_reductions;
                self.s.on_ack(t, &a, &mut buf);
                self.acks.push(AckRec {
                    t,
                    seq: a.seq,
                    ece: a.has(flags::ECE),
                    cwnd_before: before,
                    cwnd_after: self.s.cwnd(),
                    alpha: self.s.stats().alpha,
                    in_recovery: self.s.in_recovery(),
                    entered: self.s.stats().ecn_reductions > n_red,
                });
                self.route_data(&mut buf);
            } else if t_rt == Some(t) {
                self.r.on_timer(t, &mut buf);
                for a in buf.drain(..) {
                    self.rev.push_back((t + self.delay, a));
                }
            } else {
                let n = self.s.stats().timeouts;
                self.s.on_timer(t, &mut buf);
                if self.s.stats().timeouts > n {
                    self.timeouts_at.push(t);
                }
                self.route_data(&mut buf);
            }
            // Invariants at every step.
            assert!(self.s.acked_bytes() <= self.s.added_bytes());
            assert!(self.r.delivered_bytes() <= self.s.added_bytes());
            assert!(self.s.acked_bytes() <= self.r.delivered_bytes());
            if self.finish.is_none() && self.s.added_bytes() > 0 && self.s.is_idle() {
                self.finish = Some(t);
            }
        }
        self.buf = buf;
    }

    fn reductions(&self) -> Vec<AckRec> {
        self.acks.iter().copied().filter(|a| a.cwnd_after < a.cwnd_before && !a.in_recovery).collect()
    }
}

fn cfg(cc: CcKind) -> TcpConfig {
    TcpConfig::with_cc(cc)
}

const TBPS: u64 = 1_000_000_000_000;
const GBPS10: u64 = 10_000_000_000;
const GBPS1: u64 = 1_000_000_000;

fn segs(n: u64) -> u64 {
    n * MSS
}

/// CE-marks the first transmission of the segments starting at the given segment numbers.
fn mark_first_tx(segments: &'static [u64]) -> FateFn {
    let mut done = Vec::new();
    Box::new(move |_, p| {
        let k = p.seq / MSS;
        if segments.contains(&k) && !done.contains(&k) {
            done.push(k);
            Fate::Mark
        } else {
            Fate::Pass
        }
    })
}

/// The cumulative ACK of segment `k`, with ECN-Echo if `ece`.
fn ack(k: u64, ece: bool) -> Packet {
    Packet { seq: k * MSS, kind: Kind::Ack, size: 40, flags: if ece { flags::ECE } else { 0 }, ..Default::default() }
}
