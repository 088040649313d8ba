//! CoDel (RFC 8289, with the Linux control law of `include/net/codel_impl.h`), per queue, at
//! dequeue, in mark-only or drop mode.
//!
//! Read RFC 8289 §3-§5 first. Each queue of the port has its own CoDel state. For every
//! departing packet (RFC `dodequeue`): if its sojourn is below `target`, or the queue holds
//! at most `mtu` bytes after it left, `first_above_time` is cleared; otherwise, the first
//! such packet sets `first_above_time = now + interval`, and once `now >= first_above_time`
//! the packet is "ok to drop". Entering the dropping state acts on that packet and sets
//! `count` to 1, or to `count - lastcount` if that exceeds 1 and the last dropping state
//! ended less than 16 intervals ago (the Linux variant that RFC 8289's §5 pseudo-code
//! adopts); the next action comes at `drop_next = now + interval / sqrt(count)`. In the
//! dropping state, a packet that is not ok to drop ends it; otherwise when
//! `now >= drop_next` CoDel acts, `count += 1` and `drop_next += interval / sqrt(count)`.
//!
//! The port calls [`MarkingScheme::on_dequeue`] once per departing packet, and calls it again
//! with the queue's next packet (same `now`) when the answer is `Drop`. The two modes use
//! that as follows:
//! - `mode = "mark"` (TCN testbed and ECN# baselines; Linux with `ecn` on an ECT packet):
//!   at most one packet is marked per dequeue, then `drop_next` advances. This is what
//!   Linux does for ECT packets and what the TCN authors' port does (REFERENCE-
//!   IMPLEMENTATIONS §2.5, item 9 of §5). A non-ECT packet is handed to the port's
//!   `non_ect` policy (pass by default, as TCN-Software's `INET_ECN_set_ce`; `drop` drops
//!   it but does not continue the control-law loop the way Linux would).
//! - `mode = "drop"` (RFC 8289): the RFC's dequeue loop is spread over the port's repeated
//!   calls. After a drop inside the dropping state, the next packet is tested: not ok ends
//!   the state (without advancing `drop_next`), ok advances `drop_next` and drops again while
//!   `now >= drop_next`. After the drop that enters the dropping state, the RFC sends the
//!   next packet ignoring its verdict; the next packet is sent here too (`drop_next` lies
//!   ahead), and if it is not ok it leaves the dropping state one packet earlier than the
//!   RFC, which is unobservable: not ok there means `first_above_time` was cleared, so the
//!   following packet cannot be ok either. Decision sequences equal the RFC pseudo-code's
//!   on a single queue (tested against a transcription). With several queues the "next
//!   packet" is the queue's next one, whenever the scheduler serves it.
//!
//! A queue that drains reaches a dequeue with backlog 0 <= `mtu`, which clears
//! `first_above_time` and the dropping state, as the RFC's and Linux's dequeue of an empty
//! queue would (the port never calls a scheme on an empty queue).
//!
//! Deviations: time is integer ns (Linux uses 1024-ns units, TCN-Software too); the
//! comparison `now >= first_above_time` is the RFC's (Linux tests strictly after: 1 ns
//! here); `inv_sqrt = "exact"` (default) computes 1/sqrt(count) in floating point as the RFC
//! pseudo-code, `"newton"` does Linux's single Newton step per count change on a Q0.32
//! fixed-point value (kept at 32 bits, Linux keeps 16), whose first values are coarse
//! (count 2 gives 0.5, not 0.707).
//!
//! Defaults: `target` 5 ms and `interval` 100 ms are the RFC's (§4) and Linux's.
//! They are Internet values, useless in a datacenter, but no datacenter pair is canonical
//! (TCN §6.1: 51.2 us / 1024 us at 1 Gbps; ECN# §5.2: 85 us / 200 us, §5.4.1: 10 us /
//! 240 us), so scenarios always set them. `mtu` 1514 B is Linux `sch_codel`'s
//! `psched_mtu` for a 1500 B Ethernet MTU (RFC: MAXPACKET; TCN-Software: 1538 wire bytes).
//! `mode` defaults to mark, how both datacenter papers ran CoDel.

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::units::{ByteSize, Duration, Nanos};
use serde::{Deserialize, Serialize};

/// What CoDel does to the packets its control law selects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CodelMode {
    /// Set CE, at most one packet per dequeue (TCN testbed, ECN# baselines).
    #[default]
    Mark,
    /// Drop, looping over the queue as RFC 8289's dequeue does.
    Drop,
}

/// How 1/sqrt(count) of the control law is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvSqrt {
    /// Floating point, as RFC 8289's `control_law`.
    #[default]
    Exact,
    /// Linux: one Newton step per change of count on a fixed-point estimate.
    Newton,
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CodelParams {
    /// Acceptable standing sojourn time (default 5ms: RFC 8289 §4; TCN testbed 51.2us, ECN# 85us).
    pub target: Duration,
    /// Time the sojourn must stay above target before acting, and control-law base (default 100ms: RFC 8289 §4; TCN 1024us, ECN# 200us).
    pub interval: Duration,
    /// `mark` (set CE, one per dequeue) or `drop` (RFC 8289 loop) (default mark: TCN §6, ECN# §5).
    pub mode: CodelMode,
    /// Never act while the queue holds at most this many bytes after the dequeue (default 1514B: Linux psched_mtu; RFC MAXPACKET).
    pub mtu: ByteSize,
    /// `exact` (floating-point sqrt, RFC 8289) or `newton` (Linux fixed-point Newton step) (default exact).
    pub inv_sqrt: InvSqrt,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration::from_ms(5),
            interval: Duration::from_ms(100),
            mode: CodelMode::Mark,
            mtu: ByteSize(1514),
            inv_sqrt: InvSqrt::Exact,
        }
    }
}

/// Per-queue CoDel variables (RFC 8289 §5 / Linux `codel_vars`).
#[derive(Clone, Copy, Debug, Default)]
struct Vars {
    /// When the sojourn will have been above target for a whole interval; 0 = not above.
    first_above_time: Nanos,
    /// Time of the next action in the dropping state.
    drop_next: Nanos,
    /// Actions since entering the dropping state (plus the reused part).
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
    /// Q0.32 estimate of 1/sqrt(count) (`inv_sqrt = "newton"`).
    rec_inv_sqrt: u32,
    /// Drop mode: the last call dropped inside the dropping state and the RFC's loop goes
    /// on with this queue's next packet.
    looping: bool,
}

impl Vars {
    /// One Newton step toward 1/sqrt(count): x' = x (3 - count x^2) / 2, in Q0.32.
    fn newton_step(&mut self) {
        let x = self.rec_inv_sqrt as u128;
        let x2 = (x * x) >> 32;
        let val = (3u128 << 32).saturating_sub(self.count as u128 * x2);
        self.rec_inv_sqrt = ((x * val) >> 33).min(u32::MAX as u128) as u32;
    }
}

#[derive(Clone)]
pub struct Codel {
    target: Nanos,
    interval: Nanos,
    mtu: u64,
    mode: CodelMode,
    inv_sqrt: InvSqrt,
    vars: Vec<Vars>,
}

impl Codel {
    pub fn new(p: &CodelParams, ctx: &BuildCtx) -> Result<Self, String> {
        if p.interval.ns() == 0 {
            return Err("interval: must be larger than 0".into());
        }
        Ok(Codel {
            target: p.target.ns(),
            interval: p.interval.ns(),
            mtu: p.mtu.bytes(),
            mode: p.mode,
            inv_sqrt: p.inv_sqrt,
            vars: vec![Vars::default(); ctx.n_queues.max(1)],
        })
    }

    /// `t + interval / sqrt(count)`.
    fn control_law(&self, t: Nanos, v: &Vars) -> Nanos {
        let step = match self.inv_sqrt {
            InvSqrt::Exact => (self.interval as f64 / (v.count.max(1) as f64).sqrt()) as u64,
            InvSqrt::Newton => ((self.interval as u128 * v.rec_inv_sqrt as u128) >> 32) as u64,
        };
        t.saturating_add(step)
    }

    /// In the dropping state: leave it, act (count + 1), or wait for `drop_next`.
    fn dropping_state(&self, now: Nanos, v: &mut Vars, ok_to_drop: bool) -> Decision {
        if !ok_to_drop {
            v.dropping = false;
            return Decision::Pass;
        }
        if now < v.drop_next {
            return Decision::Pass;
        }
        v.count = v.count.saturating_add(1);
        v.newton_step();
        match self.mode {
            // One mark per dequeue (Linux ECN, TCN-Software): schedule the next one now.
            CodelMode::Mark => v.drop_next = self.control_law(v.drop_next, v),
            CodelMode::Drop => v.looping = true,
        }
        self.act()
    }

    fn act(&self) -> Decision {
        match self.mode {
            CodelMode::Mark => Decision::Mark(Reason::Codel),
            CodelMode::Drop => Decision::Drop(Reason::Codel),
        }
    }
}

impl MarkingScheme for Codel {
    fn hooks(&self) -> Hooks {
        Hooks::DEQUEUE
    }

    fn on_dequeue(&mut self, now: Nanos, _pkt: PacketView, q: &QueueState, sojourn: Nanos) -> Decision {
        let mut v = self.vars[q.queue];
        // RFC `dodequeue`: is the sojourn persistently above target?
        let ok_to_drop = if sojourn < self.target || q.queue_bytes <= self.mtu {
            v.first_above_time = 0;
            false
        } else if v.first_above_time == 0 {
            v.first_above_time = now.saturating_add(self.interval);
            false
        } else {
            now >= v.first_above_time
        };
        if std::mem::take(&mut v.looping) && ok_to_drop {
            // RFC: the loop schedules the next drop once the next packet proves ok to drop.
            v.drop_next = self.control_law(v.drop_next, &v);
        }
        let decision = if v.dropping {
            self.dropping_state(now, &mut v, ok_to_drop)
        } else if ok_to_drop {
            // Enter the dropping state. Reuse the last drop rate if we left it recently
            // (RFC 8289 §5; `drop_next` is at most an interval after the last action).
            let delta = v.count.saturating_sub(v.lastcount);
            if delta > 1 && (now as i128 - v.drop_next as i128) < 16 * self.interval as i128 {
                v.count = delta;
                v.newton_step();
            } else {
                v.count = 1;
                v.rec_inv_sqrt = u32::MAX;
            }
            v.lastcount = v.count;
            v.drop_next = self.control_law(now, &v);
            v.dropping = true;
            self.act()
        } else {
            Decision::Pass
        };
        self.vars[q.queue] = v;
        decision
    }

    fn reset(&mut self) {
        self.vars.fill(Vars::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marking::tcn::tests::{ctx, qs, PKT};
    use proptest::prelude::*;
    use std::collections::VecDeque;

    const US: Nanos = 1_000;

    fn codel(target: Nanos, interval: Nanos, mode: CodelMode, inv_sqrt: InvSqrt) -> Codel {
        let p = CodelParams {
            target: Duration(target),
            interval: Duration(interval),
            mode,
            inv_sqrt,
            ..Default::default()
        };
        Codel::new(&p, &ctx()).unwrap()
    }

    /// Dequeue one packet every `step` ns from `start` to `end`, each with `sojourn` and a
    /// backlog of `backlog` bytes after it; returns the times of the marks.
    fn mark_times(c: &mut Codel, start: Nanos, end: Nanos, step: Nanos, sojourn: Nanos, backlog: u64) -> Vec<Nanos> {
        (start..end)
            .step_by(step as usize)
            .filter(|&t| c.on_dequeue(t, PKT, &qs(0, backlog), sojourn) == Decision::Mark(Reason::Codel))
            .collect()
    }

    #[test]
    fn waits_a_full_interval_then_follows_the_control_law() {
        let (target, interval) = (10 * US, 100 * US);
        let mut c = codel(target, interval, CodelMode::Mark, InvSqrt::Exact);
        // Sojourn just below target for a long time: never.
        assert!(mark_times(&mut c, 0, 1_000 * US, 100, target - 1, 30_000).is_empty());
        // From t0 = 1000 us at target: first mark at the first dequeue with now >= t0 + interval.
        let t0 = 1_000 * US;
        let m = mark_times(&mut c, t0, t0 + 2_000 * US, 100, target, 30_000);
        assert_eq!(m[0], t0 + interval);
        // Then mark k+1 is due at next_k + interval / sqrt(k+1), met by the first dequeue at or after it.
        let mut next = m[0];
        for (k, &t) in m.iter().enumerate().skip(1) {
            next += (interval as f64 / (k as f64).sqrt()) as u64;
            assert!(t >= next && t < next + 100, "mark {k} at {t}, due {next}");
        }
        assert!(m.len() > 20);
        // A packet below target leaves the dropping state at once.
        assert_eq!(c.on_dequeue(t0 + 2_000 * US, PKT, &qs(0, 30_000), 0), Decision::Pass);
        assert!(!c.vars[0].dropping);
    }

    #[test]
    fn backlog_of_one_mtu_is_never_marked() {
        let mut c = codel(10 * US, 100 * US, CodelMode::Mark, InvSqrt::Exact);
        assert!(mark_times(&mut c, 0, 10_000 * US, 500, 1_000 * US, 1514).is_empty());
        assert!(!mark_times(&mut c, 10_000 * US, 20_000 * US, 500, 1_000 * US, 1515).is_empty());
        // Each queue has its own state: queue 1 starts from scratch.
        assert_eq!(c.on_dequeue(20_000 * US, PKT, &qs(1, 30_000), 1_000 * US), Decision::Pass);
    }

    #[test]
    fn reenters_with_the_last_rate() {
        let interval = 100 * US;
        let mut c = codel(10 * US, interval, CodelMode::Mark, InvSqrt::Exact);
        let m = mark_times(&mut c, 0, 1_000 * US, 100, 20 * US, 30_000);
        let count = c.vars[0].count;
        assert_eq!(count as usize, m.len());
        c.on_dequeue(1_000 * US, PKT, &qs(0, 30_000), 0); // leave
                                                          // Back above target soon after: count restarts at count - lastcount (lastcount = 1).
        let t1 = 1_100 * US;
        let m2 = mark_times(&mut c, t1, t1 + interval + 200, 100, 20 * US, 30_000);
        assert_eq!(m2.len(), 1);
        assert_eq!(c.vars[0].count, count - 1);
        assert_eq!(c.vars[0].drop_next, m2[0] + (interval as f64 / ((count - 1) as f64).sqrt()) as u64);
        // More marks at the reused rate, leave, and come back long after (> 16 intervals):
        // although count - lastcount > 1, count restarts at 1.
        let more = mark_times(&mut c, t1 + interval + 200, t1 + 600 * US, 100, 20 * US, 30_000);
        assert!(more.len() > 2);
        c.on_dequeue(t1 + 600 * US, PKT, &qs(0, 30_000), 0);
        let t2 = t1 + 600 * US + 20 * interval;
        assert_eq!(mark_times(&mut c, t2, t2 + interval + 200, 100, 20 * US, 30_000), vec![t2 + interval]);
        assert_eq!(c.vars[0].count, 1);
    }

    #[test]
    fn newton_matches_linux_first_steps_and_converges() {
        let mut v = Vars { count: 1, rec_inv_sqrt: u32::MAX, ..Default::default() };
        let as_f = |v: &Vars| v.rec_inv_sqrt as f64 / 2f64.powi(32);
        v.count = 2;
        v.newton_step();
        assert!((as_f(&v) - 0.5).abs() < 1e-6, "{}", as_f(&v)); // Linux's coarse second step
        for count in 3..2000 {
            v.count = count;
            v.newton_step();
        }
        assert!((as_f(&v) - 1.0 / 1999f64.sqrt()).abs() < 1e-4);
        // And the Newton scheme marks at the same cadence, give or take the early coarse steps.
        let mut a = codel(10 * US, 100 * US, CodelMode::Mark, InvSqrt::Exact);
        let mut b = codel(10 * US, 100 * US, CodelMode::Mark, InvSqrt::Newton);
        let ma = mark_times(&mut a, 0, 5_000 * US, 100, 20 * US, 30_000);
        let mb = mark_times(&mut b, 0, 5_000 * US, 100, 20 * US, 30_000);
        assert_eq!(ma[0], mb[0]);
        assert!((ma.len() as f64 / mb.len() as f64 - 1.0).abs() < 0.1, "{} vs {}", ma.len(), mb.len());
    }

    #[test]
    fn drop_mode_drops_and_validation() {
        let mut c = codel(10 * US, 100 * US, CodelMode::Drop, InvSqrt::Exact);
        let d: Vec<_> = (0..=200).map(|i| c.on_dequeue(i * US, PKT, &qs(0, 30_000), 20 * US)).collect();
        // Above target since t = 0: the drop entering the dropping state comes at t = interval,
        // the next packet is sent (RFC), the next drop is due one interval later.
        assert!(d[..100].iter().all(|x| *x == Decision::Pass));
        assert_eq!(d[100], Decision::Drop(Reason::Codel));
        assert!(d[101..200].iter().all(|x| *x == Decision::Pass));
        assert_eq!(d[200], Decision::Drop(Reason::Codel));
        let e = Codel::new(&CodelParams { interval: Duration(0), ..Default::default() }, &ctx()).err().unwrap();
        assert!(e.starts_with("interval:"), "{e}");
        let p: CodelParams =
            serde_json::from_str(r#"{"target": "51.2us", "interval": "1024us", "mode": "drop"}"#).unwrap();
        assert_eq!((p.target.ns(), p.interval.ns(), p.mode), (51_200, 1_024_000, CodelMode::Drop));
    }

    // ---- RFC 8289 §5 pseudo-code, transcribed for the tests, on a real FIFO ----

    #[derive(Default)]
    struct RfcCodel {
        q: VecDeque<(u32, Nanos, u64)>, // id, enqueue time, bytes
        bytes: u64,
        first_above_time: Nanos,
        drop_next: Nanos,
        count: u32,
        lastcount: u32,
        dropping: bool,
        target: Nanos,
        interval: Nanos,
        maxpacket: u64,
        mark: bool,
    }

    impl RfcCodel {
        fn control_law(&self, t: Nanos) -> Nanos {
            t + (self.interval as f64 / (self.count as f64).sqrt()) as u64
        }
        /// Returns the packet and ok_to_drop.
        fn dodequeue(&mut self, now: Nanos) -> (Option<u32>, bool) {
            let Some((id, enq, b)) = self.q.pop_front() else {
                self.first_above_time = 0;
                return (None, false);
            };
            self.bytes -= b;
            let sojourn = now - enq;
            let mut ok = false;
            if sojourn < self.target || self.bytes <= self.maxpacket {
                self.first_above_time = 0;
            } else if self.first_above_time == 0 {
                self.first_above_time = now + self.interval;
            } else if now >= self.first_above_time {
                ok = true;
            }
            (Some(id), ok)
        }
        /// The packet sent (with its CE mark) and the packets dropped.
        fn dequeue(&mut self, now: Nanos) -> (Option<(u32, bool)>, Vec<u32>) {
            let mut dropped = vec![];
            let (mut p, mut ok) = self.dodequeue(now);
            let mut marked = false;
            if self.dropping {
                if !ok {
                    self.dropping = false;
                }
                if self.mark {
                    // Linux with ECN: one mark per dequeue, then schedule the next.
                    if self.dropping && now >= self.drop_next {
                        self.count += 1;
                        marked = true;
                        self.drop_next = self.control_law(self.drop_next);
                    }
                } else {
                    while now >= self.drop_next && self.dropping {
                        dropped.push(p.unwrap());
                        self.count += 1;
                        (p, ok) = self.dodequeue(now);
                        if !ok {
                            self.dropping = false;
                        } else {
                            self.drop_next = self.control_law(self.drop_next);
                        }
                    }
                }
            } else if ok {
                if self.mark {
                    marked = true;
                } else {
                    dropped.push(p.unwrap());
                    (p, _) = self.dodequeue(now);
                }
                self.dropping = true;
                let delta = self.count - self.lastcount;
                self.count = 1;
                if delta > 1 && (now as i128 - self.drop_next as i128) < 16 * self.interval as i128 {
                    self.count = delta;
                }
                self.drop_next = self.control_law(now);
                self.lastcount = self.count;
            }
            (p.map(|id| (id, marked)), dropped)
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Enq(u32, u32), // n packets of this size
        Deq,
        Wait(Nanos),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => (1u32..6, prop_oneof![Just(64u32), Just(1500), 64u32..1500]).prop_map(|(n, s)| Op::Enq(n, s)),
            3 => Just(Op::Deq),
            3 => prop_oneof![Just(0u64), 0u64..3_000, 0u64..300_000].prop_map(Op::Wait),
        ]
    }

    /// Runs the trace through the implementation behind a FIFO that dequeues as the port
    /// does (call again with the next packet while the answer is Drop), and through the RFC
    /// transcription; both must send, mark and drop the same packets.
    fn compare_with_rfc(mode: CodelMode, start: Nanos, ops: &[Op]) -> Result<(), TestCaseError> {
        let (target, interval) = (10 * US, 100 * US);
        let mut imp = codel(target, interval, mode, InvSqrt::Exact);
        let mut rfc =
            RfcCodel { target, interval, maxpacket: 1514, mark: mode == CodelMode::Mark, ..Default::default() };
        let mut fifo: VecDeque<(u32, Nanos, u64)> = VecDeque::new();
        let (mut now, mut id, mut bytes) = (start, 0u32, 0u64);
        for op in ops {
            match *op {
                Op::Wait(dt) => now += dt,
                Op::Enq(n, size) => {
                    for _ in 0..n {
                        fifo.push_back((id, now, size as u64));
                        rfc.q.push_back((id, now, size as u64));
                        rfc.bytes += size as u64;
                        bytes += size as u64;
                        id += 1;
                    }
                }
                Op::Deq => {
                    let mut dropped = vec![];
                    let mut sent = None;
                    while let Some((pid, enq, b)) = fifo.pop_front() {
                        bytes -= b;
                        let st = QueueState { queue_pkts: fifo.len() as u32, ..qs(0, bytes) };
                        match imp.on_dequeue(now, PKT, &st, now - enq) {
                            Decision::Drop(_) => dropped.push(pid),
                            Decision::Mark(_) => {
                                sent = Some((pid, true));
                                break;
                            }
                            Decision::Pass => {
                                sent = Some((pid, false));
                                break;
                            }
                        }
                    }
                    let (rsent, rdropped) = rfc.dequeue(now);
                    prop_assert_eq!((sent, &dropped), (rsent, &rdropped), "at {}", now);
                }
            }
        }
        Ok(())
    }

    #[test]
    fn scripted_overload_matches_rfc_in_both_modes() {
        // A standing queue of 20 packets refilled at line rate, then overload, then drain.
        let mut ops = vec![Op::Enq(20, 1500)];
        for i in 0..3000 {
            ops.push(Op::Wait(1_200));
            ops.push(Op::Enq(if i % 50 < 30 { 2 } else { 1 }, 1500));
            ops.push(Op::Deq);
        }
        ops.extend(std::iter::repeat_n(Op::Deq, 200));
        for mode in [CodelMode::Mark, CodelMode::Drop] {
            compare_with_rfc(mode, 0, &ops).unwrap();
        }
    }

    #[test]
    fn drop_mode_through_the_port() {
        use crate::buffer::BufferPool;
        use crate::marking::{MarkingConfig, SchemeName};
        use crate::port::{Port, PortConfig, PortPacket};
        #[derive(Clone, Copy)]
        struct P;
        impl PortPacket for P {
            fn wire_bytes(&self) -> u32 {
                1500
            }
            fn is_ect(&self) -> bool {
                true
            }
            fn set_ce(&mut self) {}
            fn dscp(&self) -> u8 {
                0
            }
        }
        let codel = CodelParams {
            target: Duration(10 * US),
            interval: Duration(100 * US),
            mode: CodelMode::Drop,
            ..Default::default()
        };
        let m = MarkingConfig { scheme: SchemeName::Codel, codel, ..Default::default() };
        let mut port: Port<P> =
            Port::new(&PortConfig { buffer: ByteSize(10_000_000), ..Default::default() }, &m, 10_000_000_000, 1)
                .unwrap();
        let mut pool = BufferPool::unlimited();
        let mut sent = 0u64;
        for t in 0..5_000u64 {
            let now = t * 1_200;
            for _ in 0..(1 + (t % 10 == 0) as u32) {
                port.enqueue(now, P, &mut pool).ok().unwrap();
            }
            sent += port.dequeue(now, &mut pool).is_some() as u64;
        }
        let st = &port.stats()[0];
        assert!(st.drops[Reason::Codel as usize] > 0);
        assert_eq!(st.enq_pkts, sent + st.drops[Reason::Codel as usize] + port.queue_occ()[0].pkts as u64);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn random_traces_match_rfc(mark in any::<bool>(), start in prop_oneof![Just(0u64), 0..u64::MAX / 2],
                                   ops in prop::collection::vec(op(), 1..600)) {
            let mode = if mark { CodelMode::Mark } else { CodelMode::Drop };
            compare_with_rfc(mode, start, &ops)?;
        }

        #[test]
        fn never_panics(target in any::<u64>(), interval in 1u64.., newton in any::<bool>(), drop in any::<bool>(),
                        calls in prop::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), 0usize..4), 1..300)) {
            let p = CodelParams {
                target: Duration(target % (interval.saturating_add(1))),
                interval: Duration(interval),
                mode: if drop { CodelMode::Drop } else { CodelMode::Mark },
                inv_sqrt: if newton { InvSqrt::Newton } else { InvSqrt::Exact },
                ..Default::default()
            };
            let mut c = Codel::new(&p, &ctx()).unwrap();
            for (now, sojourn, backlog, q) in calls {
                c.on_dequeue(now, PKT, &qs(q, backlog), sojourn);
            }
            // Huge but monotone times with zero-length gaps.
            let mut c = codel(10 * US, 100 * US, p.mode, p.inv_sqrt);
            for i in 0..2_000u64 {
                let now = u64::MAX / 2 + (i / 3) * 7_000;
                c.on_dequeue(now, PKT, &qs(0, 30_000), 50 * US);
            }
            prop_assert!(c.vars[0].count > 1);
        }
    }
}
