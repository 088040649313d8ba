//! `summary.json`, typed: the [`Summary`] of a run, and the one place it is built
//! ([`Summary::build`]) from what a run measured ([`Measurements`]), whether the simulator
//! measured it (`metrics::summary`, from a `RunView`) or the emulated switch and its hosts
//! (`ecnlab._core.summary_from_measurements`, called by `python/ecnlab/emulate/run.py`).
//! The FCT size classes ([`FCT_CLASSES`]) are defined here and nowhere else; Python reads
//! them through `_core.fct_classes()`.
//!
//! Fields are declared in alphabetical order, in every struct: the order in which
//! `summary.json` has always listed them (it was a `serde_json::Value`, whose maps sort their
//! keys), so that serializing a `Summary` gives the same bytes as before. Fields one kind of
//! run cannot measure are `Option`s left out of the JSON when `None` (the emulator has no
//! `fct_by_class`, `ports`, `nics`, `long_flows` or `counting`; the simulator no `emulation`).

/// A queue over the window, and its counts by reason: the core's, which both engines'
/// switches measure with (`ecnlab_core::measure`).
pub use ecnlab_core::measure::{QueueSummary, ReasonCounts};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One size class of the papers' FCT breakdowns: flows of `above < size <= up_to` bytes
/// (a missing bound is no bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FctClass {
    pub name: &'static str,
    pub above: Option<u64>,
    pub up_to: Option<u64>,
}

impl FctClass {
    pub fn contains(&self, size: u64) -> bool {
        self.above.is_none_or(|a| size > a) && self.up_to.is_none_or(|b| size <= b)
    }
}

/// Largest "small" flow (TCN, ECN#: <= 100 KB).
pub const SMALL_MAX_BYTES: u64 = 100_000;
/// Largest "medium" flow; "large" flows are above it (> 10 MB).
pub const LARGE_MIN_BYTES: u64 = 10_000_000;

/// The FCT classes of `fct` (and of each group of `fct_by_class`), in the order reports show
/// them: every flow, then small, medium and large.
pub const FCT_CLASSES: [FctClass; 4] = [
    FctClass { name: "all", above: None, up_to: None },
    FctClass { name: "small", above: None, up_to: Some(SMALL_MAX_BYTES) },
    FctClass { name: "medium", above: Some(SMALL_MAX_BYTES), up_to: Some(LARGE_MIN_BYTES) },
    FctClass { name: "large", above: Some(LARGE_MIN_BYTES), up_to: None },
];

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Whole-run packet accounting (simulator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counting: Option<Counting>,
    /// Window drops over every queue (the simulator's include host NICs), by reason.
    pub drops: u64,
    pub drops_by_reason: BTreeMap<String, u64>,
    /// Build information, added by the Python front end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecnlab: Option<serde_json::Value>,
    /// The emulator's own block (kernel, switch counters, scaling, host stack, ...): free-form,
    /// added by `emulate/run.py` (it never goes through the core: its figures keep their bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<serde_json::Value>,
    /// Simulated events (0 for an emulation).
    pub events: u64,
    /// FCT of the sized flows that started in the window and completed, by size class.
    pub fct: FctBuckets,
    /// [`FctBuckets`] per flow class and per switch queue (simulator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fct_by_class: Option<FctByClass>,
    pub flows: FlowCounts,
    /// Long-lived flows' window goodput and Jain's index (simulator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_flows: Option<LongFlows>,
    /// Window marks over every queue, by reason.
    pub marks: u64,
    pub marks_by_reason: BTreeMap<String, u64>,
    /// Start of the measurement window (end of warm-up), s.
    pub measure_from_s: f64,
    /// Host NICs that carried traffic (simulator only; the catalog's soundness guard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nics: Option<Vec<NicSummary>>,
    /// Packets moved over a hop (simulator), frames forwarded (emulated switch).
    pub packet_hops: u64,
    /// PFC's pauses over the window (simulator only, with `[switch.pfc]` enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSummary>,
    /// Utilization of the switch ports that carried traffic (simulator only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<PortUtilization>>,
    /// RTT of all probes' samples together.
    pub probe_rtt: Stats,
    pub probes: Vec<ProbeSummary>,
    /// Switch queues that saw traffic, over the window.
    pub queues: Vec<QueueSummary>,
    pub scenario: String,
    pub seed: u64,
    /// Length of the run, s.
    pub sim_time_s: f64,
    /// Marks a scheme wanted on packets that were not ECN-capable, by reason.
    pub unmarkable_by_reason: BTreeMap<String, u64>,
    /// Wall-clock time of the run, added by the caller that measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_time_s: Option<f64>,
}

/// `{count, avg_us, p50_us, p99_us}` of a list of times (µs); nulls when empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub avg_us: Option<f64>,
    pub count: u64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

/// One size bucket's completed flows: their FCTs, and their slowdowns (FCT over the ideal
/// FCT, `flows.csv`'s `slowdown`; the metric of Parsimon's and HPCC's evaluations), nulls
/// when none of them has an ideal FCT.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FctStats {
    #[serde(flatten)]
    pub fct: Stats,
    #[serde(default)]
    pub avg_slowdown: Option<f64>,
    #[serde(default)]
    pub p50_slowdown: Option<f64>,
    #[serde(default)]
    pub p99_slowdown: Option<f64>,
}

/// One [`FctStats`] per entry of [`FCT_CLASSES`] (the field names are the class names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FctBuckets {
    pub all: FctStats,
    pub large: FctStats,
    pub medium: FctStats,
    pub small: FctStats,
}

/// `fct_by_class`: keys are the class (DSCP) and queue numbers as strings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FctByClass {
    pub class: BTreeMap<String, FctBuckets>,
    pub queue: BTreeMap<String, FctBuckets>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowCounts {
    /// Sized flows that started in the window and completed (the `fct` population).
    pub completed: u64,
    pub long_lived: u64,
    /// Retransmission timeouts: the flows' before they finished (simulator), the kernels'
    /// counter (emulator).
    pub timeouts: u64,
    /// The flows' timeouts after they finished (simulator): the `linux` receiver delayed the
    /// ACK of a last segment past the sender's RTO. None from the emulator (its kernels'
    /// counter holds both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts_after_finish: Option<u64>,
    /// The flows' handshake retransmissions (lost SYNs and SYN-ACKs, each a wait of at least
    /// `transport.rto_syn`), when connections open with one (simulator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_timeouts: Option<u64>,
    /// The flows' tail loss probes (each sent instead of waiting for an RTO), when senders
    /// send them (simulator, `transport.tlp` under `linux`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp_probes: Option<u64>,
    /// The flows' reductions undone as spurious (simulator, `linux` profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undos: Option<u64>,
    /// Every flow of the scenario: each generated message, listed flows counted one per
    /// connection, and those that never started.
    pub total: u64,
    /// Sized flows that started in the window and did not complete.
    pub unfinished: u64,
    /// Flows whose start is at or after the run's end (`duration` came first): they never
    /// ran, and are neither completed nor unfinished.
    #[serde(default)]
    pub not_started: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PortUtilization {
    pub port: String,
    pub rate_bps: u64,
    pub utilization: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NicSummary {
    pub avg_qlen_bytes: f64,
    pub drops: u64,
    pub max_qlen_bytes: u64,
    pub port: String,
}

/// PFC over the window: how often and how long the senders' queues were paused.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PfcSummary {
    /// Times a queue was paused, over every port.
    pub pauses: u64,
    /// Every queue that was paused in the window (host NICs and switch ports).
    pub queues: Vec<PausedQueue>,
}

/// One queue's pauses over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PausedQueue {
    /// Paused time / the window.
    pub paused_fraction: f64,
    pub paused_us: f64,
    pub pauses: u64,
    pub port: String,
    pub queue: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LongFlows {
    pub goodput_bps: Vec<f64>,
    pub jain_index: Option<f64>,
}

/// One probe's RTT samples in the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSummary {
    pub avg_us: Option<f64>,
    pub class: u8,
    pub dst: u16,
    pub id: u64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub samples: u64,
    pub src: u16,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counting {
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub sent: u64,
}

/// One flow as the summary sees it (a `flows.csv` row's subset).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowOutcome {
    /// The DSCP it is sent with.
    pub class: u8,
    /// Bytes (None: long-lived).
    pub size: Option<u64>,
    pub start_s: f64,
    /// None: not completed.
    pub fct_us: Option<f64>,
    /// FCT over the ideal FCT (`flows.csv`'s `slowdown`, the same number); None where the
    /// ideal FCT is not known.
    #[serde(default)]
    pub slowdown: Option<f64>,
}

/// One probe's RTT samples in the window (a `probes.json` record's subset).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeSamples {
    pub id: u64,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub rtt_us: Vec<f64>,
}

/// The flows a summary is built from, visited in their order: a list of [`FlowOutcome`]s
/// (the simulator's, the emulator's), or anything that can make them one at a time (the
/// estimate's 23 M flows, which as a list would take 1.5 GB). Every figure of the summary is
/// the same whichever gives them.
pub trait Flows {
    fn visit(&self, each: &mut dyn FnMut(&FlowOutcome));
}

impl Flows for [FlowOutcome] {
    fn visit(&self, each: &mut dyn FnMut(&FlowOutcome)) {
        self.iter().for_each(each)
    }
}

impl Flows for Vec<FlowOutcome> {
    fn visit(&self, each: &mut dyn FnMut(&FlowOutcome)) {
        self.as_slice().visit(each)
    }
}

/// The flows the summary's FCTs are of: sized, started in the window and before the end,
/// completed.
struct Completed<'a> {
    flows: &'a dyn Flows,
    from_s: f64,
    end_s: f64,
}

impl Completed<'_> {
    fn measured(&self, f: &FlowOutcome) -> bool {
        f.size.is_some() && f.start_s >= self.from_s && f.start_s < self.end_s
    }
}

impl Flows for Completed<'_> {
    fn visit(&self, each: &mut dyn FnMut(&FlowOutcome)) {
        self.flows.visit(&mut |f| {
            if self.measured(f) && f.fct_us.is_some() {
                each(f)
            }
        })
    }
}

/// What a run measured, from which [`Summary::build`] makes its summary: the simulator
/// fills it from a `RunView` (`metrics::summary`), the emulator from its switch's and hosts'
/// reports (as JSON, `_core.summary_from_measurements`), the estimate from its plan with
/// flows made as they are visited ([`Flows`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurements<F = Vec<FlowOutcome>> {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_s: f64,
    pub measure_from_s: f64,
    #[serde(default)]
    pub events: u64,
    pub packet_hops: u64,
    /// Every flow of the run; sized flows that started at or after `measure_from_s` are
    /// measured.
    pub flows: F,
    /// Retransmission timeouts of the run, before each flow finished.
    #[serde(default)]
    pub timeouts: u64,
    /// [`FlowCounts::timeouts_after_finish`].
    #[serde(default)]
    pub timeouts_after_finish: Option<u64>,
    /// [`FlowCounts::syn_timeouts`].
    #[serde(default)]
    pub syn_timeouts: Option<u64>,
    /// [`FlowCounts::tlp_probes`].
    #[serde(default)]
    pub tlp_probes: Option<u64>,
    /// [`FlowCounts::undos`].
    #[serde(default)]
    pub undos: Option<u64>,
    /// The window counters of every queue the run counts, listed in `queues` or not.
    pub counters: Vec<ReasonCounts>,
    /// The queues the summary lists, as measured.
    pub queues: Vec<QueueSummary>,
    pub probes: Vec<ProbeSamples>,
    /// The queue each flow class maps to (`switch.dscp_to_queue` as the switch port
    /// classifies, for classes 0..len): gives `fct_by_class`. None: no `fct_by_class`.
    #[serde(default)]
    pub class_queue: Option<Vec<u64>>,
    #[serde(default)]
    pub ports: Option<Vec<PortUtilization>>,
    #[serde(default)]
    pub nics: Option<Vec<NicSummary>>,
    #[serde(default)]
    pub long_flow_goodputs_bps: Option<Vec<f64>>,
    #[serde(default)]
    pub counting: Option<Counting>,
    #[serde(default)]
    pub pfc: Option<PfcSummary>,
}

impl Summary {
    /// The summary of what a run measured.
    pub fn build<F: Flows>(m: Measurements<F>) -> Summary {
        let done = Completed { flows: &m.flows, from_s: m.measure_from_s, end_s: m.sim_time_s };
        let mut n = FlowCounts::default();
        m.flows.visit(&mut |f| {
            n.total += 1;
            n.long_lived += u64::from(f.size.is_none());
            n.not_started += u64::from(f.start_s >= m.sim_time_s);
            if done.measured(f) {
                match f.fct_us {
                    Some(_) => n.completed += 1,
                    None => n.unfinished += 1,
                }
            }
        });
        let (mut marks, mut drops, mut unmarkable) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for c in &m.counters {
            for (src, dst) in [
                (&c.marks_by_reason, &mut marks),
                (&c.drops_by_reason, &mut drops),
                (&c.unmarkable_by_reason, &mut unmarkable),
            ] {
                for (k, &v) in src.iter().filter(|(_, &v)| v > 0) {
                    *dst.entry(k.clone()).or_insert(0) += v;
                }
            }
        }
        let mut all_rtts: Vec<f64> = m.probes.iter().flat_map(|p| p.rtt_us.iter().copied()).collect();
        all_rtts.sort_by(|a, b| a.total_cmp(b));
        let probes = m
            .probes
            .iter()
            .map(|p| {
                let s = stats(p.rtt_us.clone());
                ProbeSummary {
                    avg_us: s.avg_us,
                    class: p.class,
                    dst: p.dst,
                    id: p.id,
                    p50_us: s.p50_us,
                    p99_us: s.p99_us,
                    samples: s.count,
                    src: p.src,
                }
            })
            .collect();
        let fct = fct_buckets(&done, &|_| true);
        let fct_by_class = m.class_queue.as_ref().map(|cq| {
            // Classes beyond the map go to queue 0, as a port without that class would.
            fct_by_class(&done, &fct, |c| cq.get(c as usize).copied().unwrap_or(0))
        });
        Summary {
            counting: m.counting,
            drops: drops.values().sum(),
            drops_by_reason: drops,
            ecnlab: None,
            emulation: None,
            events: m.events,
            fct,
            fct_by_class,
            flows: FlowCounts {
                timeouts: m.timeouts,
                timeouts_after_finish: m.timeouts_after_finish,
                syn_timeouts: m.syn_timeouts,
                tlp_probes: m.tlp_probes,
                undos: m.undos,
                ..n
            },
            long_flows: m.long_flow_goodputs_bps.map(|g| LongFlows { jain_index: jain_index(&g), goodput_bps: g }),
            marks: marks.values().sum(),
            marks_by_reason: marks,
            measure_from_s: m.measure_from_s,
            nics: m.nics,
            packet_hops: m.packet_hops,
            pfc: m.pfc,
            ports: m.ports,
            probe_rtt: stats(all_rtts),
            probes,
            queues: m.queues,
            scenario: m.scenario,
            seed: m.seed,
            sim_time_s: m.sim_time_s,
            unmarkable_by_reason: unmarkable,
            wall_time_s: None,
        }
    }
}

/// Nearest-rank percentile on sorted data: `sorted[floor(q n)]`, as the papers' scripts.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((q * sorted.len() as f64) as usize).min(sorted.len() - 1);
    sorted[i]
}

/// [`Stats`] of a list of times (µs). Empty -> count 0 and nulls.
pub fn stats(mut v: Vec<f64>) -> Stats {
    if v.is_empty() {
        return Stats::default();
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let avg = v.iter().sum::<f64>() / v.len() as f64;
    Stats {
        avg_us: Some(avg),
        count: v.len() as u64,
        p50_us: Some(percentile(&v, 0.5)),
        p99_us: Some(percentile(&v, 0.99)),
    }
}

/// [`FctBuckets`] of the completed flows `sel` keeps. One bucket's values are held at a
/// time, counted first so that each list is allocated once: with millions of flows (an
/// estimate's) the lists, not the flows, are what a summary's memory is.
pub fn fct_buckets(done: &dyn Flows, sel: &dyn Fn(&FlowOutcome) -> bool) -> FctBuckets {
    let of = |c: &FctClass| {
        let kept = |f: &FlowOutcome| sel(f) && c.contains(f.size.unwrap_or(0));
        let (mut n, mut n_sd) = (0usize, 0usize);
        done.visit(&mut |f| {
            if kept(f) {
                n += 1;
                n_sd += usize::from(f.slowdown.is_some());
            }
        });
        let (mut fcts, mut sds) = (Vec::with_capacity(n), Vec::with_capacity(n_sd));
        done.visit(&mut |f| {
            if kept(f) {
                fcts.extend(f.fct_us);
                sds.extend(f.slowdown);
            }
        });
        // The two lists are sorted at once (each sort is most of a bucket's time at millions
        // of flows): the same statistics as one after the other.
        let (fct, sd) = std::thread::scope(|s| {
            let sd = s.spawn(move || stats(sds));
            (stats(fcts), sd.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        FctStats { fct, avg_slowdown: sd.avg_us, p50_slowdown: sd.p50_us, p99_slowdown: sd.p99_us }
    };
    let [all, small, medium, large] = &FCT_CLASSES;
    FctBuckets { all: of(all), large: of(large), medium: of(medium), small: of(small) }
}

/// [`FctByClass`]: [`fct_buckets`] per flow class (the DSCP a flow is sent with) and per
/// switch queue (the queue that class maps to, `queue_of`). With PIAS tagging a flow's first
/// bytes go with other DSCPs: it is counted under its own class, the service class of its
/// remaining bytes. `all`: [`fct_buckets`] of every flow of `done`, which a class or a queue
/// that has every flow takes as it is, and a queue of one class its class's (the same flows,
/// so the same figures, without sorting them again: with one class, two thirds of a summary's
/// time at millions of flows).
pub fn fct_by_class(done: &dyn Flows, all: &FctBuckets, queue_of: impl Fn(u8) -> u64) -> FctByClass {
    let mut classes = BTreeSet::new();
    done.visit(&mut |f| {
        classes.insert(f.class);
    });
    let single = classes.len() == 1;
    let class: BTreeMap<String, FctBuckets> = classes
        .iter()
        .map(|&c| (c.to_string(), if single { all.clone() } else { fct_buckets(done, &|f| f.class == c) }))
        .collect();
    let queues: BTreeSet<u64> = classes.iter().map(|&c| queue_of(c)).collect();
    let queue = queues
        .iter()
        .map(|&q| {
            let mine: Vec<u8> = classes.iter().copied().filter(|&c| queue_of(c) == q).collect();
            let b = match mine[..] {
                _ if mine.len() == classes.len() => all.clone(),
                [c] => class[&c.to_string()].clone(),
                _ => fct_buckets(done, &|f| queue_of(f.class) == q),
            };
            (q.to_string(), b)
        })
        .collect();
    FctByClass { class, queue }
}

/// Jain's fairness index (sum x)^2 / (n sum x^2); None for no flows or all zero.
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    (!x.is_empty() && s2 > 0.0).then(|| s * s / (x.len() as f64 * s2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(class: u8, size: u64, fct_us: f64) -> FlowOutcome {
        FlowOutcome { class, size: Some(size), start_s: 0.0, fct_us: Some(fct_us), slowdown: None }
    }

    #[test]
    fn fct_by_class_splits_by_class_and_by_the_queue_each_class_maps_to() {
        // Classes 0, 1, 2; classes 1 and 2 share queue 1 (as dscp_to_queue = [0, 1, 1]).
        let f = [
            flow(0, 10_000, 10.0),
            flow(0, 20_000_000, 1000.0),
            flow(1, 50_000, 30.0),
            flow(2, 50_000, 50.0),
            flow(2, 1_000_000, 400.0),
        ];
        let done = f.to_vec();
        let v = fct_by_class(&done, &fct_buckets(&done, &|_| true), |c| c.min(1) as u64);
        assert_eq!(v.class.len(), 3);
        assert_eq!(v.class["0"].all.fct.count, 2);
        assert_eq!(v.class["0"].small.fct.avg_us, Some(10.0));
        assert_eq!(v.class["0"].large.fct.count, 1);
        assert_eq!(v.class["2"].medium.fct.avg_us, Some(400.0));
        assert_eq!(v.queue.len(), 2);
        assert_eq!(v.queue["1"].small.fct.count, 2);
        assert_eq!(v.queue["1"].small.fct.avg_us, Some(40.0));
        assert_eq!(v.queue["1"].all.fct.count, 3);
        assert_eq!(v.queue["1"].large.fct.count, 0);
        // The per-queue groups partition the flows, as the whole-run breakdown counts them.
        let all = fct_buckets(&done, &|_| true);
        assert_eq!(v.queue.values().map(|b| b.all.fct.count).sum::<u64>(), all.all.fct.count);
    }

    /// The groups taken as they are from the whole or from a class are those a selection
    /// of their own flows gives: one class, one queue for all, queues of one class or several.
    #[test]
    fn groups_reused_from_the_whole_or_a_class_are_their_own_flows_figures() {
        let with =
            |class: u8, size: u64, fct: f64, sd: f64| FlowOutcome { slowdown: Some(sd), ..flow(class, size, fct) };
        let many: Vec<FlowOutcome> = (0..300u64)
            .map(|i| with((i % 3) as u8, 1_000 + i * 40_000, 5.0 + (i * 37 % 101) as f64, 1.0 + (i % 7) as f64))
            .collect();
        let one: Vec<FlowOutcome> = many.iter().map(|f| FlowOutcome { class: 4, ..*f }).collect();
        let maps: [(&[FlowOutcome], fn(u8) -> u64); 4] =
            [(&one, |_| 2), (&many, |_| 0), (&many, |c| c as u64), (&many, |c| c.min(1) as u64)];
        for (i, (done, queue_of)) in maps.into_iter().enumerate() {
            let done = done.to_vec();
            let v = fct_by_class(&done, &fct_buckets(&done, &|_| true), queue_of);
            for (c, b) in &v.class {
                let c: u8 = c.parse().unwrap();
                assert_eq!(b, &fct_buckets(&done, &|f| f.class == c), "map {i}, class {c}");
            }
            for (q, b) in &v.queue {
                let q: u64 = q.parse().unwrap();
                assert_eq!(b, &fct_buckets(&done, &|f| queue_of(f.class) == q), "map {i}, queue {q}");
            }
        }
    }

    /// A bucket's slowdowns are those of its flows that have one.
    #[test]
    fn slowdowns_are_of_the_flows_with_an_ideal_fct() {
        let with = |fct: f64, slowdown: Option<f64>| FlowOutcome { slowdown, ..flow(0, 10_000, fct) };
        let f = [with(10.0, Some(2.0)), with(30.0, Some(3.0)), with(8.0, None), with(4.0, None)];
        let b = fct_buckets(&f.to_vec(), &|_| true);
        assert_eq!(b.small.fct.count, 4);
        assert_eq!(
            (b.small.avg_slowdown, b.small.p50_slowdown, b.small.p99_slowdown),
            (Some(2.5), Some(3.0), Some(3.0))
        );
        assert_eq!(b.large.avg_slowdown, None);
    }

    #[test]
    fn the_buckets_fields_are_the_classes_and_the_bounds_split_at_100kb_and_10mb() {
        let v = serde_json::to_value(FctBuckets::default()).unwrap();
        let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, FCT_CLASSES.iter().map(|c| c.name).collect());
        let names = |s| FCT_CLASSES.iter().filter(|c| c.contains(s)).map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(names(100_000), ["all", "small"]);
        assert_eq!(names(100_001), ["all", "medium"]);
        assert_eq!(names(10_000_000), ["all", "medium"]);
        assert_eq!(names(10_000_001), ["all", "large"]);
    }

    #[test]
    fn an_emulators_measurements_give_its_keys_and_no_others() {
        let m: Measurements = serde_json::from_value(serde_json::json!({
            "scenario": "x", "seed": 1, "sim_time_s": 2.0, "measure_from_s": 0.5, "packet_hops": 10,
            "flows": [{"class": 0, "size": 1000, "start_s": 0.4, "fct_us": 5.0},
                      {"class": 0, "size": 1000, "start_s": 0.6, "fct_us": 7.0},
                      {"class": 0, "size": 20_000_000, "start_s": 0.6, "fct_us": null},
                      {"class": 1, "size": null, "start_s": 0.0, "fct_us": null},
                      {"class": 0, "size": 1000, "start_s": 2.0, "fct_us": null}],
            "timeouts": 3,
            "counters": [{"marks_by_reason": {"threshold": 2}, "drops_by_reason": {}},
                         {"marks_by_reason": {"threshold": 1, "sojourn": 4}, "drops_by_reason": {"buffer": 1}}],
            "queues": [],
            "probes": [{"id": 0, "src": 0, "dst": 1, "class": 0, "rtt_us": [3.0, 1.0, 2.0]}],
        }))
        .unwrap();
        let s = serde_json::to_value(Summary::build(m)).unwrap();
        let keys: Vec<&str> = s.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert!(["fct_by_class", "ports", "nics", "long_flows", "counting", "emulation"]
            .iter()
            .all(|k| !keys.contains(k)));
        // The emulator gives no ideal FCTs here: no slowdowns.
        assert_eq!(
            s["fct"]["small"],
            serde_json::json!({"count": 1, "avg_us": 7.0, "p50_us": 7.0, "p99_us": 7.0,
                               "avg_slowdown": null, "p50_slowdown": null, "p99_slowdown": null})
        );
        assert_eq!(
            s["flows"],
            serde_json::json!({"total": 5, "completed": 1, "unfinished": 1, "not_started": 1, "long_lived": 1, "timeouts": 3})
        );
        assert_eq!((s["marks"].as_u64(), s["drops"].as_u64()), (Some(7), Some(1)));
        assert_eq!(s["marks_by_reason"], serde_json::json!({"threshold": 3, "sojourn": 4}));
        assert_eq!(s["probes"][0]["p50_us"], 2.0);
        assert_eq!(s["probe_rtt"]["count"], 3);
        // What it wrote reads back as the same summary.
        let back: Summary = serde_json::from_value(s.clone()).unwrap();
        assert_eq!(serde_json::to_value(back).unwrap(), s);
    }

    /// What Python or Rust writes (the shortest text that reads back to the same double)
    /// reads back bit for bit: the emulator's measurements come to `Summary::build` as JSON
    /// text, and its pass-through figures must keep their bits. Values measured as the
    /// switch measures them (a ratio of counters); without serde_json's `float_roundtrip`
    /// about one in eight moved by an ulp.
    #[test]
    fn measured_floats_read_back_bit_for_bit() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let queues: Vec<QueueSummary> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let ratio = (x >> 20) as f64 / ((x & 0xf_ffff) as f64 + 1.0);
                QueueSummary { avg_qlen_bytes: ratio, goodput_bps: ratio * 8e9, ..Default::default() }
            })
            .collect();
        let m: Measurements = Measurements { queues, ..Default::default() };
        let back: Measurements = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        let moved = m.queues.iter().zip(&back.queues).filter(|(a, b)| a != b).count();
        assert_eq!(moved, 0, "{moved} of {} queues changed in a JSON round trip", m.queues.len());
    }
}
