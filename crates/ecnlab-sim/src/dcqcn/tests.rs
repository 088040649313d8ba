//! Tests of the DCQCN state machines: the RP formulas driven directly, the NP's CNP
//! spacing, and end-to-end runs over a tiny test-only network: senders and receivers, one
//! forward bottleneck (rate + fixed one-way delay, unbounded FIFO) whose fate function may
//! drop or CE-mark data packets given the backlog they find, and a reverse path with the
//! same delay and no queue.

use super::sender::Stage;
use super::*;
use crate::packet::{flags, Ecn, Kind, Packet, ACK_BYTES, TCP_IP_HEADER};
use ecnlab_core::units::{bytes_in, tx_time_ns, ByteSize, Nanos, NS_PER_MS, NS_PER_US};
use std::collections::VecDeque;

const MSS: u32 = 1460;
const PKT: u64 = MSS as u64 + TCP_IP_HEADER as u64;
const G10: u64 = 10_000_000_000;
const LINE: f64 = 10e9;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Pass,
    Drop,
    Mark,
}

/// (index of the data packet in send order, the packet, backlog in bytes it finds at the
/// bottleneck, itself included) -> fate.
type FateFn = Box<dyn FnMut(u64, &Packet, u64) -> Fate>;

struct Flow {
    s: DcqcnSender,
    r: DcqcnReceiver,
    start: Nanos,
    bytes: u64,
    started: bool,
    finish: Option<Nanos>,
    /// First time the sender's current rate was back at line rate after a cut.
    at_line_since_cut: Option<Nanos>,
}

struct Net {
    flows: Vec<Flow>,
    rate_bps: u64,
    delay: Nanos,
    link_free: Nanos,
    fwd: VecDeque<(Nanos, Packet)>,
    rev: VecDeque<(Nanos, Packet)>,
    now: Nanos,
    n_data: u64,
    fate: FateFn,
    buf: Vec<Packet>,
    /// Data packets handed to the network: (time, packet).
    sent: Vec<(Nanos, Packet)>,
    /// Control packets sent by receivers: (time, packet).
    ctrl: Vec<(Nanos, Packet)>,
    sender_timer_calls: u64,
}

impl Net {
    fn new(delay: Nanos, rate_bps: u64, fate: FateFn) -> Self {
        Net {
            flows: Vec::new(),
            rate_bps,
            delay,
            link_free: 0,
            fwd: VecDeque::new(),
            rev: VecDeque::new(),
            now: 0,
            n_data: 0,
            fate,
            buf: Vec::new(),
            sent: Vec::new(),
            ctrl: Vec::new(),
            sender_timer_calls: 0,
        }
    }

    /// A flow of `bytes` (or [`UNLIMITED`]) starting at `start`; senders are host 1+i,
    /// the receiver host 0.
    fn add_flow(&mut self, cfg: &DcqcnConfig, start: Nanos, bytes: u64) -> usize {
        let i = self.flows.len();
        let h = 1 + i as u16;
        self.flows.push(Flow {
            s: DcqcnSender::new(cfg, MSS, self.rate_bps, i as u32, h, 0, 3),
            r: DcqcnReceiver::new(cfg, i as u32, 0, h),
            start,
            bytes,
            started: false,
            finish: None,
            at_line_since_cut: None,
        });
        i
    }

    fn route_data(&mut self, buf: &mut Vec<Packet>) {
        for mut p in buf.drain(..) {
            assert_eq!(p.kind, Kind::Data);
            assert_eq!(p.size, p.payload + TCP_IP_HEADER);
            assert_eq!(p.tx_ns, self.now);
            assert_eq!(p.ecn, Ecn::Ect0, "data packets are ECT(0), retransmissions too");
            self.sent.push((self.now, p));
            // The host's NIC hands the packet to the link at once (this harness models the
            // bottleneck link, not the NIC): its QP may offer the next (the NIC's arbiter).
            self.flows[p.flow as usize].s.nic_sent();
            let idx = self.n_data;
            self.n_data += 1;
            let backlog = bytes_in(self.link_free.saturating_sub(self.now), self.rate_bps) + p.size as u64;
            match (self.fate)(idx, &p, backlog) {
                Fate::Drop => continue,
                Fate::Mark => p.ecn = Ecn::Ce,
                Fate::Pass => {}
            }
            let depart = self.now.max(self.link_free) + tx_time_ns(p.size as u64, self.rate_bps);
            self.link_free = depart;
            self.fwd.push_back((depart + self.delay, p));
        }
    }

    fn route_ctrl(&mut self, buf: &mut Vec<Packet>, data: Option<&Packet>) {
        for a in buf.drain(..) {
            assert!(matches!(a.kind, Kind::Ack | Kind::Cnp));
            assert_eq!(a.ecn, Ecn::NotEct);
            assert_eq!(a.size, ACK_BYTES);
            if let Some(d) = data {
                assert_eq!((a.dscp, a.flow, a.src, a.dst), (d.dscp, d.flow, d.dst, d.src));
            }
            self.ctrl.push((self.now, a));
            self.rev.push_back((self.now + self.delay, a));
        }
    }

    /// After every call into flow i's sender (`sender`) or receiver: its deadline lies
    /// strictly in the future (no event storm: whatever could be sent now has been), and
    /// the byte counts are consistent.
    fn check(&mut self, i: usize, sender: bool) {
        let now = self.now;
        let f = &mut self.flows[i];
        let t = if sender { f.s.timer() } else { f.r.timer() };
        if let Some(t) = t {
            assert!(t > now, "flow {i} (sender: {sender}): deadline {t} not after now {now}");
        }
        assert!(f.s.acked_bytes() <= f.r.delivered_bytes());
        assert!(f.r.delivered_bytes() <= f.s.added_bytes());
        if f.finish.is_none() && f.started && f.s.is_idle() {
            f.finish = Some(now);
        }
        if f.at_line_since_cut.is_none() && f.s.stats().cnps_received > 0 && f.s.rate_bps() >= LINE {
            f.at_line_since_cut = Some(now);
        }
    }

    /// Runs events up to `until` or until nothing is left to do. Equal-time events go in a
    /// fixed order: forward arrivals, reverse arrivals, flow starts, sender timers,
    /// receiver timers (flows in index order).
    fn run(&mut self, until: Nanos) {
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            let mut t = self.fwd.front().map(|x| x.0);
            let mut take = |x: Option<Nanos>| {
                if let Some(x) = x {
                    t = Some(t.map_or(x, |y: Nanos| y.min(x)));
                }
            };
            take(self.rev.front().map(|x| x.0));
            for f in &self.flows {
                take((!f.started).then_some(f.start));
                take(f.s.timer());
                take(f.r.timer());
            }
            let Some(t) = t else { break };
            if t > until {
                break;
            }
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            if self.fwd.front().is_some_and(|x| x.0 == t) {
                let (_, p) = self.fwd.pop_front().unwrap();
                let i = p.flow as usize;
                self.flows[i].r.on_data(t, &p, &mut buf);
                self.route_ctrl(&mut buf, Some(&p));
                self.check(i, false);
            } else if self.rev.front().is_some_and(|x| x.0 == t) {
                let (_, a) = self.rev.pop_front().unwrap();
                let i = a.flow as usize;
                self.flows[i].s.on_ack(t, &a, &mut buf);
                self.route_data(&mut buf);
                self.check(i, true);
            } else if let Some(i) = self.flows.iter().position(|f| !f.started && f.start == t) {
                let f = &mut self.flows[i];
                f.started = true;
                f.s.add_data(f.bytes);
                f.s.poll(t, &mut buf);
                self.route_data(&mut buf);
                self.check(i, true);
            } else if let Some(i) = self.flows.iter().position(|f| f.s.timer() == Some(t)) {
                self.sender_timer_calls += 1;
                self.flows[i].s.on_timer(t, &mut buf);
                self.route_data(&mut buf);
                self.check(i, true);
            } else {
                let i = self.flows.iter().position(|f| f.r.timer() == Some(t)).unwrap();
                self.flows[i].r.on_timer(t, &mut buf);
                self.route_ctrl(&mut buf, None);
                self.check(i, false);
            }
        }
        self.buf = buf;
    }

    /// Payload goodput of each flow (bits per second) over [t0, t1].
    fn goodput(&mut self, t0: Nanos, t1: Nanos) -> Vec<f64> {
        self.run(t0);
        let d0: Vec<u64> = self.flows.iter().map(|f| f.r.delivered_bytes()).collect();
        self.run(t1);
        self.flows.iter().zip(d0).map(|(f, d)| (f.r.delivered_bytes() - d) as f64 * 8e9 / (t1 - t0) as f64).collect()
    }

    fn cnp_times(&self, flow: u32) -> Vec<Nanos> {
        self.ctrl.iter().filter(|(_, p)| p.kind == Kind::Cnp && p.flow == flow).map(|x| x.0).collect()
    }
}

fn pass() -> FateFn {
    Box::new(|_, _, _| Fate::Pass)
}

/// Marks every `k`-th data packet.
fn mark_every(k: u64) -> FateFn {
    Box::new(move |i, _, _| if i % k == k - 1 { Fate::Mark } else { Fate::Pass })
}

/// The DCQCN paper's CP: RED on the instantaneous backlog, probability 0 below Kmin,
/// rising to Pmax at Kmax, 1 above; a test-local xorshift stream keeps it deterministic.
fn red(kmin: u64, kmax: u64, pmax: f64, seed: u64) -> FateFn {
    let mut x = seed | 1;
    Box::new(move |_, _, q| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        let p = if q <= kmin {
            0.0
        } else if q > kmax {
            1.0
        } else {
            pmax * (q - kmin) as f64 / (kmax - kmin) as f64
        };
        if u < p {
            Fate::Mark
        } else {
            Fate::Pass
        }
    })
}

/// Drops the first transmission of the packets whose payload starts at the given packet
/// numbers; `times` transmissions of each (1 = the first only).
fn drop_tx(packets: &'static [u64], times: u32) -> FateFn {
    let mut seen: Vec<(u64, u32)> = Vec::new();
    Box::new(move |_, p, _| {
        let k = p.seq / MSS as u64;
        if !packets.contains(&k) {
            return Fate::Pass;
        }
        let n = match seen.iter_mut().find(|e| e.0 == k) {
            Some(e) => {
                e.1 += 1;
                e.1
            }
            None => {
                seen.push((k, 1));
                1
            }
        };
        if n <= times {
            Fate::Drop
        } else {
            Fate::Pass
        }
    })
}

fn cnp(flow: u32) -> Packet {
    Packet { flow, kind: Kind::Cnp, size: ACK_BYTES, ..Default::default() }
}

fn sender(cfg: &DcqcnConfig) -> DcqcnSender {
    let mut s = DcqcnSender::new(cfg, MSS, G10, 0, 1, 0, 3);
    s.add_data(UNLIMITED);
    s.poll(0, &mut Vec::new());
    s
}

// ------------------------------------------------------------------------------------
// RP: stage logic, cut, alpha
// ------------------------------------------------------------------------------------

#[test]
fn stage_logic_follows_the_paper() {
    use Stage::*;
    // First F events of either counter: fast recovery.
    for t in 0..=5 {
        for b in 0..=5 {
            assert_eq!(Stage::of(t, b, 5), FastRecovery, "T={t} BC={b}");
        }
    }
    // One counter past F: additive increase.
    assert_eq!(Stage::of(6, 0, 5), AdditiveIncrease);
    assert_eq!(Stage::of(100, 5, 5), AdditiveIncrease);
    assert_eq!(Stage::of(3, 6, 5), AdditiveIncrease);
    // Both past F: hyper increase, i = min(T, BC) - F.
    assert_eq!(Stage::of(6, 6, 5), HyperIncrease(1));
    assert_eq!(Stage::of(9, 7, 5), HyperIncrease(2));
    assert_eq!(Stage::of(8, 40, 5), HyperIncrease(3));
}

#[test]
fn cnp_cuts_rate_by_half_alpha_and_updates_alpha_exactly() {
    let c = DcqcnConfig { alpha_init: 0.5, ..Default::default() };
    let g = c.g;
    let mut s = sender(&c);
    let mut out = Vec::new();
    assert_eq!(s.rp(), (LINE, LINE, 0.5), "starts at line rate");
    s.on_ack(1000, &cnp(0), &mut out);
    // Eq. (1): Rt = Rc, Rc = Rc (1 - alpha/2) with the old alpha, alpha = (1-g) alpha + g.
    let a1 = (1.0 - g) * 0.5 + g;
    assert_eq!(s.rp(), (LINE * (1.0 - 0.5 / 2.0), LINE, a1));
    s.on_ack(2000, &cnp(0), &mut out);
    let rc1 = LINE * 0.75;
    let a2 = (1.0 - g) * a1 + g;
    assert_eq!(s.rp(), (rc1 * (1.0 - a1 / 2.0), rc1, a2));
    let st = s.stats();
    assert_eq!((st.cnps_received, st.rate_cuts), (2, 2));
    assert_eq!((st.rate_bps, st.target_rate_bps, st.alpha), (rc1 * (1.0 - a1 / 2.0), rc1, a2));
    // Floor: the rate never goes below min_rate (line / 1000 by default).
    for k in 0..100 {
        s.on_ack(3000 + k, &cnp(0), &mut out);
    }
    assert_eq!(s.rate_bps(), LINE / 1000.0);
    // Not a CNP, not an ACK: ignored.
    let before = s.stats().clone();
    s.on_ack(5000, &Packet { kind: Kind::Data, ..cnp(0) }, &mut out);
    assert_eq!(s.stats(), &before);
}

#[test]
fn alpha_decays_every_alpha_timer_without_cnp() {
    let c = DcqcnConfig::default();
    let (g, k) = (c.g, c.alpha_timer.ns());
    assert_eq!(k, 55 * NS_PER_US);
    let mut s = sender(&c);
    let mut out = Vec::new();
    let t0 = 1000;
    s.on_ack(t0, &cnp(0), &mut out);
    let a1 = s.rp().2;
    assert_eq!(a1, 1.0, "alpha_init 1 stays 1 after a CNP: (1-g)·1 + g");
    assert!(s.timer().unwrap() <= t0 + k, "the alpha timer is armed");
    // Early: nothing.
    s.on_timer(t0 + k - 1, &mut out);
    assert_eq!(s.rp().2, a1);
    // On time: one decay, eq. (2).
    s.on_timer(t0 + k, &mut out);
    assert_eq!(s.rp().2, a1 * (1.0 - g));
    // Late by several periods: each elapsed period decays once.
    s.on_timer(t0 + 4 * k + 10, &mut out);
    let a4 = a1 * (1.0 - g) * (1.0 - g) * (1.0 - g) * (1.0 - g);
    assert_eq!(s.rp().2, a4);
    assert_eq!(s.stats().alpha_decays, 4);
    // A CNP restarts the alpha timer: no decay at the old deadline t0 + 5k.
    let t1 = t0 + 4 * k + 20;
    s.on_ack(t1, &cnp(0), &mut out);
    let a5 = (1.0 - g) * a4 + g;
    assert_eq!(s.rp().2, a5);
    s.on_timer(t0 + 5 * k, &mut out);
    assert_eq!(s.rp().2, a5);
    s.on_timer(t1 + k, &mut out);
    assert_eq!(s.rp().2, a5 * (1.0 - g));
}

#[test]
fn rate_timer_runs_fast_recovery_then_additive_increase() {
    // Default byte counter (10 MB): only the timer fires in this short window.
    let c = DcqcnConfig::default();
    let t = c.rate_timer.ns();
    let mut s = sender(&c);
    let mut out = Vec::new();
    // Two CNPs: Rt = Rc = line/2, Rc = line/4 (alpha stays 1).
    s.on_ack(0, &cnp(0), &mut out);
    s.on_ack(0, &cnp(0), &mut out);
    let (mut rc, mut rt, _) = s.rp();
    assert_eq!((rc, rt), (LINE / 4.0, LINE / 2.0));
    for n in 1..=8u64 {
        s.on_timer(n * t, &mut out);
        if n <= 5 {
            rc = (rt + rc) / 2.0; // fast recovery
        } else {
            rt += LINE / 1000.0; // additive increase: 10 Mbps at 10 Gbps
            rc = (rt + rc) / 2.0;
        }
        assert_eq!((s.rp().0, s.rp().1), (rc, rt), "event {n}");
    }
    let st = s.stats();
    assert_eq!((st.fast_recovery_steps, st.additive_steps, st.hyper_steps), (5, 3, 0));
    assert_eq!(st.timer_events, 8);
    // A CNP restarts the counts: the next event is fast recovery again.
    s.on_ack(8 * t + 5, &cnp(0), &mut out);
    s.on_timer(9 * t, &mut out);
    assert_eq!(s.stats().fast_recovery_steps, 5, "old deadline, not fired");
    s.on_timer(9 * t + 5, &mut out);
    assert_eq!(s.stats().fast_recovery_steps, 6);
}

// ------------------------------------------------------------------------------------
// NP: CNP generation
// ------------------------------------------------------------------------------------

#[test]
fn np_sends_at_most_one_cnp_per_interval() {
    let c = DcqcnConfig::default();
    let mut r = DcqcnReceiver::new(&c, 4, 0, 1);
    let mut out = Vec::new();
    let mut cnps = Vec::new();
    let mut acks = 0;
    for k in 0..1000u64 {
        let now = k * NS_PER_US;
        if r.timer().is_some_and(|d| d <= now) {
            let d = r.timer().unwrap();
            r.on_timer(d, &mut out);
            for p in out.drain(..) {
                assert_eq!(p.kind, Kind::Cnp);
                cnps.push(d);
            }
        }
        let ce = k < 300 || k == 400 || k == 405;
        let p = Packet {
            flow: 4,
            src: 1,
            dst: 0,
            seq: k * MSS as u64,
            payload: MSS,
            size: PKT as u32,
            kind: Kind::Data,
            ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
            dscp: 5,
            tx_ns: now,
            ..Default::default()
        };
        r.on_data(now, &p, &mut out);
        for a in out.drain(..) {
            assert_eq!((a.flow, a.src, a.dst, a.dscp), (4, 0, 1, 5));
            match a.kind {
                Kind::Cnp => cnps.push(now),
                Kind::Ack => acks += 1,
                k => panic!("{k:?}"),
            }
        }
        if let Some(d) = r.timer() {
            assert!(d > now);
        }
    }
    // Immediate on the first mark; then one per 50 us window that saw a mark, at the
    // window's end; immediate again after a quiet window (400), deferred inside it (405).
    let us = |v: &[u64]| v.iter().map(|x| x * NS_PER_US).collect::<Vec<_>>();
    assert_eq!(cnps, us(&[0, 50, 100, 150, 200, 250, 300, 400, 450]));
    assert!(cnps.windows(2).all(|w| w[1] - w[0] >= 50 * NS_PER_US));
    assert_eq!(r.stats().cnps_sent, 9);
    assert_eq!(r.stats().ce_packets, 302);
    assert_eq!(acks, 1000, "ack_every = 1: an ACK per in-order packet");
    assert_eq!(r.delivered_bytes(), 1000 * MSS as u64);
    // Without marks, no CNP ever.
    let mut r = DcqcnReceiver::new(&c, 0, 0, 1);
    for k in 0..100u64 {
        let p = Packet { seq: k * 1460, payload: MSS, size: PKT as u32, ecn: Ecn::Ect0, ..Default::default() };
        r.on_data(k * NS_PER_US, &p, &mut out);
    }
    assert!(out.iter().all(|p| p.kind == Kind::Ack));
    assert_eq!(r.timer(), None);
}

// ------------------------------------------------------------------------------------
// End to end
// ------------------------------------------------------------------------------------

#[test]
fn unmarked_flow_runs_at_line_rate_and_completes_on_time() {
    let d = 10 * NS_PER_US;
    let n_bytes = 1_000_000u64;
    let mut net = Net::new(d, G10, pass());
    net.add_flow(&DcqcnConfig::default(), 0, n_bytes);
    net.run(u64::MAX);
    let f = &net.flows[0];
    assert_eq!(f.r.delivered_bytes(), n_bytes);
    assert!(f.s.is_idle());
    assert_eq!(f.s.timer(), None, "no deadline once everything is acknowledged");
    assert_eq!(f.r.timer(), None);
    let st = f.s.stats();
    assert_eq!((st.sent_bytes, st.retransmitted_bytes, st.cnps_received, st.timeouts), (n_bytes, 0, 0, 0));
    assert_eq!(st.rate_bps, LINE);
    // Answer key: paced exactly at line rate, so no queue; the last packet leaves after
    // the others' serialization times, then one serialization + one RTT.
    let sizes: Vec<u64> = net.sent.iter().map(|(_, p)| p.size as u64).collect();
    let n_pkts = n_bytes.div_ceil(MSS as u64);
    assert_eq!(sizes.len() as u64, n_pkts);
    let last_tx: u64 = sizes[..sizes.len() - 1].iter().map(|&s| tx_time_ns(s, G10)).sum();
    assert_eq!(net.sent.last().unwrap().0, last_tx);
    let fct = last_tx + tx_time_ns(*sizes.last().unwrap(), G10) + 2 * d;
    assert_eq!(f.finish, Some(fct));
    // PSH on the last packet only; addressing and DSCP as given.
    assert!(net.sent.last().unwrap().1.has(flags::PSH));
    assert_eq!(net.sent.iter().filter(|(_, p)| p.has(flags::PSH)).count(), 1);
    assert!(net.sent.iter().all(|(_, p)| p.dscp == 3 && p.src == 1 && p.dst == 0));
    // No event storm: a timer call per packet plus the alpha timer's periods.
    assert!(net.sender_timer_calls <= n_pkts + fct / (55 * NS_PER_US) + 2, "{}", net.sender_timer_calls);
}

#[test]
fn recovers_to_line_rate_through_all_stages() {
    // Two CNPs at the start leave Rt = 5 Gbps, Rc = 2.5 Gbps; no marks afterwards.
    let run = |byte_counter: u64| {
        let c = DcqcnConfig { byte_counter: ByteSize(byte_counter), ..Default::default() };
        let mut net = Net::new(10 * NS_PER_US, G10, pass());
        net.add_flow(&c, 0, UNLIMITED);
        net.run(0);
        let mut out = Vec::new();
        net.flows[0].s.on_ack(0, &cnp(0), &mut out);
        net.flows[0].s.on_ack(0, &cnp(0), &mut out);
        assert!(out.is_empty(), "the first packet left at t = 0, the next is paced");
        let mut last_rate = 0.0;
        let mut t = 0;
        while t < 40 * NS_PER_MS {
            t += 10 * NS_PER_US;
            net.run(t);
            let r = net.flows[0].s.rate_bps();
            assert!(r >= last_rate, "the rate only grows without CNPs");
            last_rate = r;
        }
        let g = net.goodput(40 * NS_PER_MS, 45 * NS_PER_MS)[0];
        let st = net.flows[0].s.stats().clone();
        (net.flows[0].at_line_since_cut.expect("back at line rate"), st, g)
    };
    // Paper's B = 10 MB: the timer does almost all the work; Rt climbs by R_AI = 10 Mbps
    // per T = 55 us from 5 to 10 Gbps, ~500 steps, ~27.5 ms (plus a few byte-counter
    // steps, which are additive too).
    let (t_slow, st, g) = run(10_000_000);
    assert!(st.fast_recovery_steps >= 5 && st.additive_steps > 300, "{st:?}");
    assert_eq!(st.hyper_steps, 0);
    assert!((22 * NS_PER_MS..32 * NS_PER_MS).contains(&t_slow), "{t_slow}");
    assert!(g > 0.97 * LINE * MSS as f64 / PKT as f64, "{g}");
    // A small byte counter reaches hyper increase and recovers much faster.
    let (t_fast, st, _) = run(150_000);
    assert!(st.fast_recovery_steps >= 5 && st.additive_steps >= 1 && st.hyper_steps >= 1, "{st:?}");
    assert!(t_fast * 4 < t_slow, "{t_fast} vs {t_slow}");
    assert_eq!(st.rate_bps, LINE);
}

#[test]
fn constant_marking_fraction_settles_below_line_rate() {
    let goodput = |k: u64| {
        let mut net = Net::new(10 * NS_PER_US, G10, mark_every(k));
        net.add_flow(&DcqcnConfig::default(), 0, UNLIMITED);
        let g1 = net.goodput(30 * NS_PER_MS, 40 * NS_PER_MS)[0];
        let g2 = net.goodput(40 * NS_PER_MS, 50 * NS_PER_MS)[0];
        // Settled: two consecutive 10 ms windows agree.
        assert!((g1 / g2 - 1.0).abs() < 0.1, "k={k}: {g1} then {g2}");
        let st = net.flows[0].s.stats().clone();
        assert!(st.cnps_received > 50, "{st:?}");
        assert_eq!(st.cnps_received, net.flows[0].r.stats().cnps_sent);
        (g1 + g2) / 2.0
    };
    let full = LINE * MSS as f64 / PKT as f64;
    let g_low = goodput(200); // 0.5 % marked: ~6.4 Gbps
    let g_high = goodput(20); // 5 % marked: ~0.7 Gbps
    assert!(g_low < 0.9 * full && g_low > 0.3 * full, "{g_low}");
    assert!(g_high > 0.02 * full && g_high < 0.5 * g_low, "{g_high} vs {g_low}");
}

#[test]
fn dropped_packet_recovered_by_go_back_n() {
    let n = 300 * MSS as u64;
    let mut net = Net::new(10 * NS_PER_US, G10, drop_tx(&[50], 1));
    net.add_flow(&DcqcnConfig::default(), 0, n);
    net.run(u64::MAX);
    let f = &net.flows[0];
    let (st, rs) = (f.s.stats(), f.r.stats());
    assert_eq!(f.r.delivered_bytes(), n);
    assert_eq!((rs.naks_sent, st.naks_received, st.nak_rewinds, st.timeouts), (1, 1, 1, 0));
    // Everything from packet 50 up to what was sent before the NAK arrived goes again:
    // about one RTT (20 us) of packets at 1.2 us each.
    let resent = st.retransmitted_bytes / MSS as u64;
    assert!((15..=25).contains(&resent), "{resent}");
    assert_eq!(rs.out_of_order, resent - 1, "the go-back-N receiver discards them");
    assert!(f.finish.unwrap() < NS_PER_MS);
}

#[test]
fn tail_loss_and_lost_retransmission_recovered_by_rto() {
    let n = 300 * MSS as u64;
    // The last packet: nothing follows it, so no NAK; the RTO resends it.
    let mut net = Net::new(10 * NS_PER_US, G10, drop_tx(&[299], 1));
    net.add_flow(&DcqcnConfig::default(), 0, n);
    net.run(u64::MAX);
    let f = &net.flows[0];
    assert_eq!(f.r.delivered_bytes(), n);
    assert_eq!((f.s.stats().timeouts, f.r.stats().naks_sent, f.s.stats().retransmitted_bytes), (1, 0, MSS as u64));
    let fin = f.finish.unwrap();
    assert!(fin > 5 * NS_PER_MS && fin < 6 * NS_PER_MS, "{fin}");
    // Packet 50 and its first retransmission lost: one NAK (RoCE NAKs an expected PSN once),
    // then the RTO.
    let mut net = Net::new(10 * NS_PER_US, G10, drop_tx(&[50], 2));
    net.add_flow(&DcqcnConfig::default(), 0, n);
    net.run(u64::MAX);
    let f = &net.flows[0];
    assert_eq!(f.r.delivered_bytes(), n);
    assert_eq!((f.r.stats().naks_sent, f.s.stats().timeouts), (1, 1));
    assert!(f.s.is_idle() && f.s.timer().is_none());
}

fn two_flows(seed: u64) -> Net {
    // The DCQCN paper's CP: Kmin = 5 KB, Kmax = 200 KB, Pmax = 1 %.
    let mut net = Net::new(10 * NS_PER_US, G10, red(5_000, 200_000, 0.01, seed));
    let c = DcqcnConfig::default();
    net.add_flow(&c, 0, UNLIMITED);
    net.add_flow(&c, 5 * NS_PER_MS, UNLIMITED);
    net
}

#[test]
fn two_flows_sharing_a_marking_bottleneck_converge() {
    let mut net = two_flows(42);
    let g = net.goodput(60 * NS_PER_MS, 100 * NS_PER_MS);
    let full = LINE * MSS as f64 / PKT as f64;
    assert!(g[0] + g[1] > 0.9 * full, "{g:?}");
    let ratio = g[0] / g[1];
    assert!((0.8..1.25).contains(&ratio), "{g:?}");
    for f in &net.flows {
        assert!(f.s.stats().cnps_received > 10);
        assert_eq!(f.s.stats().timeouts, 0);
        let cnps = net.cnp_times(f.s.flow());
        assert!(cnps.windows(2).all(|w| w[1] - w[0] >= 50 * NS_PER_US), "NP spacing");
    }
}

#[test]
fn runs_are_deterministic() {
    let go = || {
        let mut net = two_flows(7);
        // Add losses: a flow with drops on top of the RED bottleneck.
        let mut red = red(5_000, 200_000, 0.01, 7);
        net.fate = Box::new(move |i, p, q| if i % 997 == 500 { Fate::Drop } else { red(i, p, q) });
        net.run(20 * NS_PER_MS);
        let stats: Vec<_> = net.flows.iter().map(|f| (f.s.stats().clone(), f.r.stats().clone())).collect();
        (net.sent, net.ctrl, stats)
    };
    let (a, b) = (go(), go());
    assert!(a.2.iter().any(|(s, _)| s.naks_received > 0 && s.cnps_received > 0));
    assert!(a == b);
}

#[test]
fn timer_calls_are_harmless() {
    let c = DcqcnConfig::default();
    let mut s = DcqcnSender::new(&c, MSS, G10, 0, 1, 0, 0);
    assert_eq!(s.timer(), None, "nothing to do before data");
    assert!(s.is_idle());
    let mut out = Vec::new();
    s.on_timer(123, &mut out);
    assert!(out.is_empty());
    s.add_data(3 * MSS as u64);
    s.poll(1000, &mut out);
    assert_eq!(out.len(), 1);
    // Until the NIC has sent it, the QP offers nothing more and sets no pacing deadline.
    assert!(s.timer() > Some(1000 + tx_time_ns(PKT, G10)), "no pacing deadline: {:?}", s.timer());
    s.poll(1000 + tx_time_ns(PKT, G10), &mut out);
    assert_eq!(out.len(), 1, "the NIC still holds the first packet");
    s.nic_sent();
    // Repeated or early calls at the same instant send nothing more: the next packet is
    // one serialization time later.
    for _ in 0..3 {
        s.on_timer(1000, &mut out);
        s.poll(1000, &mut out);
    }
    assert_eq!(out.len(), 1);
    assert_eq!(s.timer(), Some(1000 + tx_time_ns(PKT, G10)));
    s.on_timer(1000 + tx_time_ns(PKT, G10), &mut out);
    assert_eq!(out.len(), 2);
    // A receiver timer call with nothing pending is harmless too.
    let mut r = DcqcnReceiver::new(&c, 0, 0, 1);
    r.on_timer(5, &mut out);
    assert_eq!(out.len(), 2);
}
