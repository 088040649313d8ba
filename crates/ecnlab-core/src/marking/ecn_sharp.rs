//! ECN#: instantaneous marking plus persistent-queue marking (ECN# §3, Algorithm 1).
//!
//! Read ECN# §3.2 and Algorithm 1 first. At dequeue, per queue, a packet is marked when
//! either part says so:
//! - *instantaneous*: its sojourn exceeds `ins_target` (strict; [`Reason::EcnSharpInstantaneous`]);
//! - *persistent* ([`Reason::EcnSharpPersistent`]), Algorithm 1 as printed:
//!   `IsPersistentQueueBuildups` clears `first_above_time` (0 = unset) when the sojourn is
//!   below `pst_target`, sets it to `now()` on the first packet at or above, and reports a
//!   persistent queue once `now() > first_above_time + pst_interval`;
//!   `ShouldPersistentMark` marks the first packet of a persistent queue (`marking_count =
//!   1`, `marking_next = now() + pst_interval`), then every packet with `now() >
//!   marking_next`, doing `marking_count++; marking_next += pst_interval / marking_count`,
//!   and leaves `marking_state` as soon as the queue is no longer persistent.
//!
//! Both parts run on every packet (the persistent state evolves even when the instantaneous
//! part marks). A packet both parts mark is counted once, as persistent, so that the
//! persistent counter counts exactly the control law's marks.
//!
//! Options:
//! - `spacing = "ns3"`: the authors' ns-3 code (REFERENCE-IMPLEMENTATIONS §2.6): the next
//!   persistent mark is due at `now + pst_interval / sqrt(marking_count)` (re-based on the
//!   time of the mark, CoDel's law) and `now >= marking_next` fires it.
//! - `signal = "queue_length"`: the queue-length variant of §3.5 ("Sojourn Time versus Queue
//!   Length"): the same algorithm on the queue's bytes at dequeue (after the departing packet
//!   left, the port's convention), against `ins_target_bytes` and `pst_target_bytes`. Unset,
//!   they default to the sojourn targets times the line rate (Eq. 2, K = T x C), so the two
//!   variants agree on one saturated queue, as the paper reports. `pst_interval` stays a time.
//! - `ins_min` / `ins_max` / `p_max`: the probabilistic instantaneous part for DCQCN (§3.5,
//!   §5.4.4): `ins_target`'s cut-off is replaced by a RED-like ramp, no mark at or below
//!   `ins_min`, probability rising linearly to `p_max` at `ins_max`, every packet above
//!   `ins_max`. The persistent part is unchanged, as the paper prescribes. With
//!   `signal = "queue_length"` the ramp's ends are converted to bytes by Eq. 2.
//! - `switch_faithful = true`: the Tofino implementation of §4. Time is the emulated 32-bit
//!   "microsecond" clock of Algorithm 2: the egress timestamp (ns) shifted right by 10 bits,
//!   i.e. ticks of 1.024 us, wrapping every 2^32 ticks (about 73 minutes). Algorithm 2 builds
//!   it from the low 22 bits of that shift plus a 10-bit wrap counter; the two agree as long
//!   as the switch forwards at least one packet per 2^32 ns (4.3 s), which we assume. All
//!   times of Algorithm 1 (`now()`, `first_above_time`, `marking_next`, `pst_interval`,
//!   rounded to whole ticks) live on that clock and are compared wrap-safely (32-bit signed
//!   difference). `pst_interval / marking_count` is Algorithm 3's lookup-table division: the
//!   math unit's 16-entry table of 8-bit values, indexed by the top 4 significant bits of
//!   the count, scaled by a power of two; the quotient is truncated to whole ticks. Sojourn
//!   comparisons stay exact (the paper does not say how the sojourn is measured).
//!
//! Deviations, all in the switch-faithful mode: (1) Eq. 3 writes `Table_i = ceil(pst_interval
//! / i)`, which fits the 8-bit entries only when `scale = table_offset` (pst_interval of 509
//! to 1016 ticks, as in Fig. 6's 1000); for other intervals we store `ceil(pst_interval /
//! (i 2^(scale - table_offset)))`, the entries Algorithm 3's `scale` implies. (2) The paper does
//! not say how times are compared across the clock's wrap (it chose a clock that wraps only
//! every 73 minutes because a wrap disturbs marking); we compare wrap-safely, which a 32-bit
//! ALU does as cheaply. (3) `first_above_time = 0` still means
//! "unset", so a queue becoming persistent exactly at tick 0 is noticed one packet later, as
//! on the switch.
//!
//! Defaults: `ins_target` 200 us, `pst_interval` 200 us, `pst_target` 85 us, the paper's
//! testbed star experiment (§5.2) following its rule of thumb (§3.4); `p_max` 1.0 (§3.5:
//! "probabilities from 0 to 1"; DCQCN's own RED recommends 0.01).

use super::{BuildCtx, Decision, Hooks, MarkingScheme, PacketView, QueueState, Reason};
use crate::rng::Rng;
use crate::units::{bytes_in, ByteSize, Duration, Nanos};
use serde::{Deserialize, Serialize};

/// How the gap between persistent marks shrinks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Spacing {
    /// Algorithm 1: `marking_next += pst_interval / marking_count`, fire when `now > marking_next`.
    #[default]
    Paper,
    /// ns3-ecn-sharp: `marking_next = now + pst_interval / sqrt(marking_count)`, fire when `now >= marking_next`.
    Ns3,
}

/// The congestion signal both parts compare with their targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The packet's sojourn time (the paper's choice).
    #[default]
    Sojourn,
    /// The queue's bytes at dequeue (§3.5).
    QueueLength,
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EcnSharpParams {
    /// Instantaneous threshold: mark when sojourn > ins_target (default 200us: ECN# §5.2, 90th-percentile RTT x lambda).
    pub ins_target: Duration,
    /// Persistent-queue target: sojourn >= pst_target counts as queueing (default 85us: ECN# §5.2).
    pub pst_target: Duration,
    /// Time above pst_target that makes a queue persistent, and base gap of persistent marks (default 200us: ECN# §5.2).
    pub pst_interval: Duration,
    /// `paper` (pst_interval / count, accumulated) or `ns3` (pst_interval / sqrt(count) from now) (default paper: Alg. 1).
    pub spacing: Spacing,
    /// `sojourn` or `queue_length` (default sojourn: ECN# §3.2; queue length: §3.5).
    pub signal: Signal,
    /// Queue-length variant: instantaneous threshold in bytes (default ins_target x line rate, Eq. 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ins_target_bytes: Option<ByteSize>,
    /// Queue-length variant: persistent target in bytes (default pst_target x line rate, Eq. 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pst_target_bytes: Option<ByteSize>,
    /// Probabilistic instantaneous part: no mark at or below ins_min; set with ins_max (default unset: cut-off; ECN# §3.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ins_min: Option<Duration>,
    /// Probabilistic instantaneous part: every packet above ins_max is marked (default unset; ECN# §3.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ins_max: Option<Duration>,
    /// Probabilistic instantaneous part: probability reached at ins_max (default 1.0: ECN# §3.5 "from 0 to 1").
    pub p_max: f64,
    /// Emulate the Tofino implementation: 32-bit 1.024-us clock (Alg. 2), table division (Alg. 3) (default false; ECN# §4).
    pub switch_faithful: bool,
}

impl Default for EcnSharpParams {
    fn default() -> Self {
        EcnSharpParams {
            ins_target: Duration::from_us(200),
            pst_target: Duration::from_us(85),
            pst_interval: Duration::from_us(200),
            spacing: Spacing::Paper,
            signal: Signal::Sojourn,
            ins_target_bytes: None,
            pst_target_bytes: None,
            ins_min: None,
            ins_max: None,
            p_max: 1.0,
            switch_faithful: false,
        }
    }
}

/// log2 of the switch clock's tick in ns (Algorithm 2 shifts the ns timestamp by 10 bits).
const TICK_SHIFT: u32 = 10;
const CLOCK_MASK: u64 = u32::MAX as u64;
/// Algorithm 3's `table_offset`: the table is indexed by counts 8..=15.
const TABLE_OFFSET: i32 = 3;

/// Time base of Algorithm 1: exact ns, or the switch's wrapping 32-bit tick counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    Exact,
    Switch,
}

impl Clock {
    #[inline]
    fn now(self, ns: Nanos) -> u64 {
        match self {
            Clock::Exact => ns,
            Clock::Switch => (ns >> TICK_SHIFT) & CLOCK_MASK,
        }
    }
    #[inline]
    fn add(self, t: u64, d: u64) -> u64 {
        match self {
            Clock::Exact => t.saturating_add(d),
            Clock::Switch => t.wrapping_add(d) & CLOCK_MASK,
        }
    }
    /// a > b (serial-number arithmetic on the switch clock).
    #[inline]
    fn after(self, a: u64, b: u64) -> bool {
        match self {
            Clock::Exact => a > b,
            Clock::Switch => (a.wrapping_sub(b) as u32 as i32) > 0,
        }
    }
}

/// Algorithm 3: pst_interval / marking_count with the math unit's lookup table.
#[derive(Clone, Copy, Debug)]
struct DivTable {
    /// Table_i for i in 8..=15 (entries 0..=7 are unused, 0 as in Eq. 3).
    table: [u8; 16],
    /// Algorithm 3's `scale` (already including `table_offset`).
    scale: i32,
}

impl DivTable {
    fn new(interval: u64) -> Self {
        // Smallest s with interval <= 8 * 127 * 2^s, i.e. ceil(log2(interval / (8 * 127))).
        let fits = |s: i32| if s >= 0 { interval <= 1016u64 << s } else { interval << -s <= 1016 };
        let mut s = 0;
        while !fits(s) {
            s += 1;
        }
        while fits(s - 1) {
            s -= 1;
        }
        let mut table = [0u8; 16];
        for (i, e) in table.iter_mut().enumerate().skip(8) {
            let v = if s >= 0 { interval.div_ceil((i as u64) << s) } else { (interval << -s).div_ceil(i as u64) };
            *e = v as u8; // <= 127 by the choice of s
        }
        DivTable { table, scale: s + TABLE_OFFSET }
    }

    /// pst_interval / count in whole ticks.
    fn div(&self, count: u32) -> u64 {
        let count = count.max(1);
        let shift_val = 31 - count.leading_zeros() as i32; // floor(log2(count))
                                                           // The count's 4 leading significant bits, 8..=15.
        let approx = if shift_val >= TABLE_OFFSET {
            count >> (shift_val - TABLE_OFFSET)
        } else {
            count << (TABLE_OFFSET - shift_val)
        };
        let ans = self.table[approx as usize] as u64;
        let e = self.scale - shift_val;
        if e >= 0 {
            ans << e
        } else {
            ans.checked_shr((-e) as u32).unwrap_or(0)
        }
    }
}

/// Per-queue variables of Algorithm 1 (Table 2), on the scheme's clock.
#[derive(Clone, Copy, Debug, Default)]
struct Vars {
    /// When the signal went to or above pst_target; 0 = below.
    first_above_time: u64,
    marking_state: bool,
    marking_count: u32,
    marking_next: u64,
}

#[derive(Clone)]
pub struct EcnSharp {
    signal: Signal,
    /// Thresholds in the signal's unit (ns or bytes).
    ins_target: u64,
    pst_target: u64,
    /// Probabilistic instantaneous part: (ins_min, ins_max) in the signal's unit.
    ramp: Option<(u64, u64)>,
    p_max: f64,
    /// pst_interval on the clock (ns or ticks).
    pst_interval: u64,
    spacing: Spacing,
    clock: Clock,
    /// Algorithm 3 (switch_faithful only).
    table: Option<DivTable>,
    vars: Vec<Vars>,
    seed: u64,
    rng: Rng,
}

impl EcnSharp {
    pub fn new(p: &EcnSharpParams, ctx: &BuildCtx) -> Result<Self, String> {
        if p.pst_interval.ns() == 0 {
            return Err("pst_interval: must be larger than 0".into());
        }
        let ramp = match (p.ins_min, p.ins_max) {
            (None, None) => None,
            (Some(lo), Some(hi)) if lo < hi => Some((lo.ns(), hi.ns())),
            (Some(lo), Some(hi)) => return Err(format!("ins_min: {lo} must be smaller than ins_max ({hi})")),
            _ => return Err("ins_min: ins_min and ins_max must be set together".into()),
        };
        if !(p.p_max > 0.0 && p.p_max <= 1.0) {
            return Err(format!("p_max: {} is not in (0, 1]", p.p_max));
        }
        let (ins_target, pst_target, ramp) = match p.signal {
            Signal::Sojourn => {
                for (name, v) in [("ins_target_bytes", p.ins_target_bytes), ("pst_target_bytes", p.pst_target_bytes)] {
                    if v.is_some() {
                        return Err(format!("{name}: only used with signal = \"queue_length\""));
                    }
                }
                (p.ins_target.ns(), p.pst_target.ns(), ramp)
            }
            Signal::QueueLength => {
                let k = |t: Nanos| bytes_in(t, ctx.link_rate_bps); // Eq. 2: K = T x C
                (
                    p.ins_target_bytes.map_or(k(p.ins_target.ns()), |b| b.bytes()),
                    p.pst_target_bytes.map_or(k(p.pst_target.ns()), |b| b.bytes()),
                    ramp.map(|(lo, hi)| (k(lo), k(hi))),
                )
            }
        };
        let (clock, pst_interval, table) = if p.switch_faithful {
            if p.spacing != Spacing::Paper {
                return Err(
                    "switch_faithful: the switch divides by marking_count (Alg. 3); use spacing = \"paper\"".into()
                );
            }
            // Rounded to the nearest tick; saturating, so an absurd interval is rejected below
            // instead of overflowing.
            let ticks = p.pst_interval.ns().saturating_add(1 << (TICK_SHIFT - 1)) >> TICK_SHIFT;
            if !(1..=1 << 30).contains(&ticks) {
                return Err(format!(
                    "pst_interval: {} is not between one tick of the switch clock (1024ns) and 2^30 ticks",
                    p.pst_interval
                ));
            }
            (Clock::Switch, ticks, Some(DivTable::new(ticks)))
        } else {
            (Clock::Exact, p.pst_interval.ns(), None)
        };
        Ok(EcnSharp {
            signal: p.signal,
            ins_target,
            pst_target,
            ramp,
            p_max: p.p_max,
            pst_interval,
            spacing: p.spacing,
            clock,
            table,
            vars: vec![Vars::default(); ctx.n_queues.max(1)],
            seed: ctx.seed,
            rng: Rng::new(ctx.seed),
        })
    }

    /// Algorithm 1, `IsPersistentQueueBuildups`.
    fn is_persistent_queue_buildups(&self, v: &mut Vars, now: u64, signal: u64) -> bool {
        if signal < self.pst_target {
            v.first_above_time = 0;
            return false;
        }
        if v.first_above_time == 0 {
            v.first_above_time = now;
            return false;
        }
        self.clock.after(now, self.clock.add(v.first_above_time, self.pst_interval))
    }

    /// Algorithm 1, `ShouldPersistentMark` (or the ns-3 variant of the spacing).
    fn should_persistent_mark(&self, v: &mut Vars, now: u64, signal: u64) -> bool {
        let detected = self.is_persistent_queue_buildups(v, now, signal);
        if !v.marking_state {
            if detected {
                v.marking_state = true;
                v.marking_count = 1;
                v.marking_next = self.clock.add(now, self.pst_interval);
            }
            return detected;
        }
        if !detected {
            v.marking_state = false;
            return false;
        }
        match self.spacing {
            Spacing::Paper if self.clock.after(now, v.marking_next) => {
                v.marking_count = v.marking_count.saturating_add(1);
                let step = match &self.table {
                    Some(t) => t.div(v.marking_count),
                    None => self.pst_interval / v.marking_count as u64,
                };
                v.marking_next = self.clock.add(v.marking_next, step);
                true
            }
            Spacing::Ns3 if !self.clock.after(v.marking_next, now) => {
                v.marking_count = v.marking_count.saturating_add(1);
                let step = self.pst_interval as f64 / (v.marking_count as f64).sqrt();
                v.marking_next = self.clock.add(now, step as u64);
                true
            }
            _ => false,
        }
    }

    /// The instantaneous part: cut-off at ins_target, or the DCQCN ramp.
    fn instantaneous(&mut self, signal: u64) -> bool {
        match self.ramp {
            None => signal > self.ins_target,
            Some((_, hi)) if signal > hi => true,
            Some((lo, _)) if signal <= lo => false,
            Some((lo, hi)) => self.rng.bernoulli(self.p_max * (signal - lo) as f64 / (hi - lo) as f64),
        }
    }
}

impl MarkingScheme for EcnSharp {
    fn hooks(&self) -> Hooks {
        Hooks::DEQUEUE
    }

    fn on_dequeue(&mut self, now: Nanos, _pkt: PacketView, q: &QueueState, sojourn: Nanos) -> Decision {
        let signal = match self.signal {
            Signal::Sojourn => sojourn,
            Signal::QueueLength => q.queue_bytes,
        };
        let mut v = self.vars[q.queue];
        let persistent = self.should_persistent_mark(&mut v, self.clock.now(now), signal);
        self.vars[q.queue] = v;
        if persistent {
            Decision::Mark(Reason::EcnSharpPersistent)
        } else if self.instantaneous(signal) {
            Decision::Mark(Reason::EcnSharpInstantaneous)
        } else {
            Decision::Pass
        }
    }

    fn reset(&mut self) {
        self.vars.fill(Vars::default());
        self.rng = Rng::new(self.seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marking::tcn::tests::{ctx, qs, PKT};
    use proptest::prelude::*;

    const US: Nanos = 1_000;

    fn sharp(p: &EcnSharpParams) -> EcnSharp {
        EcnSharp::new(p, &ctx()).unwrap()
    }
    fn params(ins_us: u64, pst_target_us: u64, pst_interval_us: u64) -> EcnSharpParams {
        EcnSharpParams {
            ins_target: Duration::from_us(ins_us),
            pst_target: Duration::from_us(pst_target_us),
            pst_interval: Duration::from_us(pst_interval_us),
            ..Default::default()
        }
    }
    fn deq(s: &mut EcnSharp, now: Nanos, sojourn: Nanos) -> Decision {
        s.on_dequeue(now, PKT, &qs(0, 30_000), sojourn)
    }
    /// Times of persistent marks for one packet every `step` ns in [start, end) at `sojourn`.
    fn persistent_marks(s: &mut EcnSharp, start: Nanos, end: Nanos, step: Nanos, sojourn: Nanos) -> Vec<Nanos> {
        (start..end)
            .step_by(step as usize)
            .filter(|&t| deq(s, t, sojourn) == Decision::Mark(Reason::EcnSharpPersistent))
            .collect()
    }

    /// ECN# Algorithm 1 exactly as printed (§3.2, 0 meaning "unset"), with the instantaneous
    /// cut-off; or, with `ns3`, the authors' ns-3 state machine as REFERENCE-IMPLEMENTATIONS
    /// §2.6 describes it (first_above = now + interval, `>=`, interval / sqrt(count) from now).
    #[derive(Default, Clone)]
    struct Alg1 {
        ins_target: u64,
        pst_target: u64,
        pst_interval: u64,
        ns3: bool,
        marking_state: bool,
        marking_count: u64,
        marking_next: u64,
        first_above_time: u64,
    }

    impl Alg1 {
        #[allow(clippy::needless_bool)] // kept in the paper's shape
        fn is_persistent_queue_buildups(&mut self, now: u64, sojourn: u64) -> bool {
            if sojourn < self.pst_target {
                self.first_above_time = 0;
                return false;
            }
            if self.ns3 {
                if self.first_above_time == 0 {
                    self.first_above_time = now + self.pst_interval;
                    return false;
                }
                return now > self.first_above_time;
            }
            if self.first_above_time == 0 {
                self.first_above_time = now;
                false
            } else if now > self.first_above_time + self.pst_interval {
                true
            } else {
                false
            }
        }
        fn should_persistent_mark(&mut self, now: u64, sojourn: u64) -> bool {
            let detected = self.is_persistent_queue_buildups(now, sojourn);
            if self.marking_state {
                if !detected {
                    self.marking_state = false;
                    return false;
                } else if !self.ns3 && now > self.marking_next {
                    self.marking_count += 1;
                    self.marking_next += self.pst_interval / self.marking_count;
                    return true;
                } else if self.ns3 && now >= self.marking_next {
                    self.marking_count += 1;
                    self.marking_next = now + (self.pst_interval as f64 / (self.marking_count as f64).sqrt()) as u64;
                    return true;
                }
            } else if detected {
                self.marking_state = true;
                self.marking_count = 1;
                self.marking_next = now + self.pst_interval;
                return true;
            }
            false
        }
        fn decide(&mut self, now: u64, sojourn: u64) -> Decision {
            if self.should_persistent_mark(now, sojourn) {
                Decision::Mark(Reason::EcnSharpPersistent)
            } else if sojourn > self.ins_target {
                Decision::Mark(Reason::EcnSharpInstantaneous)
            } else {
                Decision::Pass
            }
        }
    }

    #[test]
    fn persistent_marking_waits_one_interval_then_spaces_marks_by_interval_over_count() {
        let (t0, i) = (10 * US, 100 * US);
        let mut s = sharp(&params(1_000, 50, 100));
        // Sojourn exactly pst_target counts as above (Alg. 1 resets only when below).
        let m = persistent_marks(&mut s, t0, t0 + 3_000 * US, 100, 50 * US);
        assert_eq!(
            m[0],
            t0 + i + 100,
            "first persistent mark: first packet with now > first_above_time + pst_interval"
        );
        let mut due = m[0] + i;
        // While the gaps exceed the packet spacing (past that, marking_next lags and every packet is marked).
        for (k, &t) in m.iter().enumerate().take(500).skip(1) {
            assert!(t > due && t <= due + 100, "mark {k} at {t}, due after {due}");
            due += i / (k as u64 + 1);
        }
        // The gaps shrink like 1/count: the 10th gap is a tenth of the first, within a packet.
        let gap = |k: usize| (m[k + 1] - m[k]) as i64;
        assert!((gap(10) - (i / 11) as i64).abs() <= 100, "{}", gap(10));
        assert!(m.len() > 1000, "aggressive by design: {}", m.len());
        // Instantaneous marks strictly above ins_target only (persistent marking needs the
        // sojourn back above pst_target for an interval first).
        assert_eq!(deq(&mut s, t0 + 3_000 * US, 0), Decision::Pass);
        assert_eq!(deq(&mut s, t0 + 3_001 * US, 1_000 * US), Decision::Pass);
        assert_eq!(deq(&mut s, t0 + 3_002 * US, 1_000 * US + 1), Decision::Mark(Reason::EcnSharpInstantaneous));
    }

    #[test]
    fn ns3_spacing_rebases_on_now_with_inverse_sqrt() {
        let (t0, i) = (10 * US, 100 * US);
        let mut s = sharp(&EcnSharpParams { spacing: Spacing::Ns3, ..params(1_000, 50, 100) });
        let m = persistent_marks(&mut s, t0, t0 + 3_000 * US, 100, 50 * US);
        assert_eq!(m[0], t0 + i + 100);
        for k in 1..m.len() {
            let due = m[k - 1] + (i as f64 / (k as f64).sqrt()) as u64;
            assert!(m[k] >= due && m[k] < due + 100, "mark {k} at {}, due {due}", m[k]);
        }
        assert!(m.len() > 100 && m.len() < 1000, "{}", m.len());
    }

    #[test]
    fn a_packet_below_pst_target_ends_persistent_marking() {
        let (t0, i) = (10 * US, 100 * US);
        let mut s = sharp(&params(1_000, 50, 100));
        let m = persistent_marks(&mut s, t0, t0 + 300 * US, 100, 60 * US);
        assert!(m.len() > 2);
        let t1 = t0 + 300 * US;
        assert_eq!(deq(&mut s, t1, 49 * US), Decision::Pass);
        // Above target again: a whole new interval of observation, then count restarts at 1.
        let m2 = persistent_marks(&mut s, t1 + 100, t1 + 2 * i + 400, 100, 60 * US);
        assert_eq!(m2, vec![t1 + i + 200, t1 + 2 * i + 300]);
        assert_eq!(s.vars[0].marking_count, 2);
    }

    #[test]
    fn queues_are_independent() {
        let mut s = sharp(&params(1_000, 50, 100));
        let mut r =
            vec![Alg1 { ins_target: 1_000 * US, pst_target: 50 * US, pst_interval: 100 * US, ..Default::default() }; 2];
        for t in (1..2_000u64).map(|k| k * 500) {
            let q = (t / 500 % 3 == 0) as usize;
            let sojourn = if q == 0 { 60 * US } else { 40 * US + (t % 30) * US };
            assert_eq!(s.on_dequeue(t, PKT, &qs(q, 0), sojourn), r[q].decide(t, sojourn), "t {t} q {q}");
        }
    }

    #[test]
    fn queue_length_variant() {
        // Defaults by Eq. 2 at 10 Gbps: 200 us -> 250 KB, 85 us -> 106.25 KB.
        let p = EcnSharpParams { signal: Signal::QueueLength, ..Default::default() };
        let s = sharp(&p);
        assert_eq!((s.ins_target, s.pst_target), (250_000, 106_250));
        // On one queue drained at line rate, queue bytes = sojourn x C: same decisions.
        let mut by_len = sharp(&EcnSharpParams { signal: Signal::QueueLength, ..params(200, 80, 100) });
        let mut by_time = sharp(&params(200, 80, 100));
        for k in 0..20_000u64 {
            let t = 1 + k * 400;
            let sojourn = (50 + (k / 700) % 200) * 800; // multiples of 1000 B at 10 Gbps
            let d_len = by_len.on_dequeue(t, PKT, &qs(0, bytes_in(sojourn, 10_000_000_000)), 0);
            assert_eq!(d_len, deq(&mut by_time, t, sojourn), "k {k}");
        }
        let explicit =
            sharp(&EcnSharpParams { signal: Signal::QueueLength, ins_target_bytes: Some(ByteSize(9_000)), ..p });
        assert_eq!(explicit.ins_target, 9_000);
    }

    #[test]
    fn probabilistic_instantaneous_part() {
        let p = EcnSharpParams {
            ins_min: Some(Duration::from_us(50)),
            ins_max: Some(Duration::from_us(150)),
            p_max: 0.2,
            pst_target: Duration::from_ms(100), // keep the persistent part out of the way
            ..Default::default()
        };
        let mut s = sharp(&p);
        let mut hits = 0;
        for k in 0..50_000u64 {
            assert_eq!(deq(&mut s, k, 50 * US), Decision::Pass);
            assert_eq!(deq(&mut s, k, 150 * US + 1), Decision::Mark(Reason::EcnSharpInstantaneous));
            hits += (deq(&mut s, k, 100 * US) != Decision::Pass) as u32;
        }
        let f = hits as f64 / 50_000.0;
        assert!((f - 0.1).abs() < 0.01, "{f}");
    }

    #[test]
    fn validation_names_the_field() {
        let err = |p: EcnSharpParams| EcnSharp::new(&p, &ctx()).err().unwrap();
        let e = err(EcnSharpParams { pst_interval: Duration(0), ..Default::default() });
        assert_eq!(e, "pst_interval: must be larger than 0");
        assert!(err(EcnSharpParams { ins_min: Some(Duration(1)), ..Default::default() }).starts_with("ins_min:"));
        let p = EcnSharpParams { ins_min: Some(Duration(5)), ins_max: Some(Duration(4)), ..Default::default() };
        assert!(err(p).starts_with("ins_min:"));
        assert!(err(EcnSharpParams { p_max: 1.5, ..Default::default() }).starts_with("p_max:"));
        assert!(err(EcnSharpParams { pst_target_bytes: Some(ByteSize(1)), ..Default::default() })
            .starts_with("pst_target_bytes:"));
        let p = EcnSharpParams { switch_faithful: true, spacing: Spacing::Ns3, ..Default::default() };
        assert!(err(p).starts_with("switch_faithful:"));
        let p = EcnSharpParams { switch_faithful: true, pst_interval: Duration(500), ..Default::default() };
        assert!(err(p).starts_with("pst_interval:"));
        let p: EcnSharpParams = serde_json::from_str(
            r#"{"ins_target": "70us", "spacing": "ns3", "signal": "queue_length", "switch_faithful": false}"#,
        )
        .unwrap();
        assert_eq!((p.ins_target.ns(), p.spacing, p.signal), (70_000, Spacing::Ns3, Signal::QueueLength));
        assert!(serde_json::from_str::<EcnSharpParams>(r#"{"pst_intervall": "1us"}"#).is_err());
    }

    // ---- switch-faithful mode (§4) ----

    #[test]
    fn table_division_matches_fig6_and_stays_within_its_precision() {
        // Fig. 6: pst_interval = 1000, scale = table_offset, Table_i = ceil(1000 / i).
        let t = DivTable::new(1000);
        assert_eq!(t.scale, TABLE_OFFSET);
        assert_eq!(&t.table[8..], &[125, 112, 100, 91, 84, 77, 72, 67]);
        assert_eq!((1..=8).map(|c| t.div(c)).collect::<Vec<_>>(), vec![1000, 500, 336, 250, 200, 168, 144, 125]);
        assert_eq!(t.div(16), 62);
        for interval in [1u64, 2, 7, 98, 195, 196, 977, 1000, 1016, 1017, 4096, 100_000, 1 << 30] {
            let t = DivTable::new(interval);
            assert!(t.table[8] <= 127 && t.table[8] > 0, "{interval}: {:?}", t.table);
            for count in 1..5_000u32 {
                let exact = interval as f64 / count as f64;
                let got = t.div(count) as f64;
                // The count keeps 4 significant bits (quotient up to 9/8 too large), entries
                // are rounded up, and the quotient is truncated to whole ticks.
                let hi = exact * 1.125 * (1.0 + 1.0 / t.table[15] as f64) + 1.0;
                assert!(got <= hi && got >= exact - 1.0, "{interval} / {count}: {got} vs {exact}");
            }
        }
    }

    fn faithful(p: &EcnSharpParams) -> EcnSharp {
        sharp(&EcnSharpParams { switch_faithful: true, ..p.clone() })
    }

    #[test]
    fn switch_faithful_agrees_with_exact_within_precision() {
        let p = params(200, 85, 200);
        let (mut exact, mut sw) = (sharp(&p), faithful(&p));
        let (t0, end, step) = (1_000_000, 3_000_000, 500);
        let me = persistent_marks(&mut exact, t0, end, step, 100 * US);
        let ms = persistent_marks(&mut sw, t0, end, step, 100 * US);
        assert!(me[0].abs_diff(ms[0]) <= 3 * 1024 + step, "{} vs {}", me[0], ms[0]);
        for k in 1..40 {
            let (ge, gs) = (me[k] - me[k - 1], ms[k] - ms[k - 1]);
            assert!(gs.abs_diff(ge) as f64 <= 0.15 * ge as f64 + 3.0 * 1024.0, "gap {k}: {gs} vs {ge}");
        }
        // Instantaneous marking is untouched.
        assert_eq!(deq(&mut sw, end, 201 * US), deq(&mut exact, end, 201 * US));
    }

    #[test]
    fn switch_faithful_survives_the_clock_wrap() {
        let p = params(200, 85, 200);
        let wrap: Nanos = 1 << (32 + TICK_SHIFT); // 2^32 ticks of 1024 ns
        let start = wrap - 150 * US; // persistent queue detected before the wrap, marks across it
        let run = |offset: Nanos| {
            let mut s = faithful(&p);
            (0..4_000u64).map(|k| deq(&mut s, offset + k * 500, 100 * US)).collect::<Vec<_>>()
        };
        let across = run(start);
        // 2^31 ticks earlier: the same tick fractions, no wrap.
        let baseline = run(start - wrap / 2);
        assert_eq!(across, baseline);
        let after_wrap = across[(150 * US / 500) as usize..].iter().filter(|d| **d != Decision::Pass).count();
        assert!(after_wrap > 100, "{after_wrap}");
    }

    // ---- comparisons with the references and robustness ----

    fn trace() -> impl Strategy<Value = Vec<(u64, u64, usize)>> {
        // (gap before the packet, sojourn, queue); gaps include 0 and long idle periods.
        let gap = prop_oneof![3 => 0u64..2_000, 1 => Just(0u64), 1 => 0u64..1_000_000];
        // Whole microseconds hit the (whole-microsecond) targets exactly.
        let sojourn = prop_oneof![0u64..300_000, 40_000u64..60_000, (0u64..300).prop_map(|x| x * US)];
        prop::collection::vec((gap, sojourn, 0usize..2), 1..800)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn matches_algorithm_1(ins in (0u64..300).prop_map(|x| x * US), pst_target in (0u64..100).prop_map(|x| x * US), interval in 1u64..300_000, ns3 in any::<bool>(),
                               start in prop_oneof![Just(0u64), Just(1u64), 0..u64::MAX / 2], trace in trace()) {
            // The ns-3 code detects with first_above = now + interval: same as Alg. 1 except at now = 0.
            let start = if ns3 { start.max(1) } else { start };
            let p = EcnSharpParams {
                ins_target: Duration(ins), pst_target: Duration(pst_target), pst_interval: Duration(interval),
                spacing: if ns3 { Spacing::Ns3 } else { Spacing::Paper }, ..Default::default()
            };
            let mut s = sharp(&p);
            let r = Alg1 { ins_target: ins, pst_target, pst_interval: interval, ns3, ..Default::default() };
            let mut refs = [r.clone(), r];
            let mut now = start;
            for (gap, sojourn, q) in trace {
                now += gap;
                let d = s.on_dequeue(now, PKT, &qs(q, 0), sojourn);
                prop_assert_eq!(d, refs[q].decide(now, sojourn), "at {} queue {}", now, q);
                // The instantaneous part marks whenever sojourn > ins_target.
                if sojourn > ins { prop_assert!(d != Decision::Pass); }
            }
        }

        #[test]
        fn never_panics(ins in any::<u64>(), pst_target in any::<u64>(), interval in 1u64.., faithful in any::<bool>(),
                        ns3 in any::<bool>(), qlen in any::<bool>(), ramp in any::<bool>(),
                        calls in prop::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), 0usize..4), 1..200)) {
            let p = EcnSharpParams {
                ins_target: Duration(ins), pst_target: Duration(pst_target),
                pst_interval: Duration(if faithful { 1024 + interval % (1 << 40) } else { interval }),
                spacing: if ns3 && !faithful { Spacing::Ns3 } else { Spacing::Paper },
                signal: if qlen { Signal::QueueLength } else { Signal::Sojourn },
                ins_min: ramp.then_some(Duration(ins / 2)), ins_max: ramp.then_some(Duration(ins / 2 + 1)),
                switch_faithful: faithful, ..Default::default()
            };
            let mut s = sharp(&p);
            for &(now, sojourn, bytes, q) in &calls {
                s.on_dequeue(now, PKT, &qs(q, bytes), sojourn);
            }
            // Huge, monotone times with zero-length gaps, persistently above target.
            let mut s = sharp(&EcnSharpParams { switch_faithful: faithful, ..params(200, 85, 200) });
            let marks = (0..3_000u64)
                .filter(|i| deq(&mut s, u64::MAX / 2 + (i / 3) * 1_000, 100 * US) != Decision::Pass)
                .count();
            prop_assert!(marks > 10);
        }
    }
}
