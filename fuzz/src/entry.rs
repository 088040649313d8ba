//! What the `scenario` fuzz target (and its stable replay, `crates/ecnlab-sim/tests/
//! parser_fuzz_replay.rs`, which includes this file) does with one input:
//!
//! bytes -> UTF-8 -> `Scenario::from_toml` and `Scenario::from_json` -> `validate()` ->
//! when the scenario is small (few hosts and flows, no trace file) it is capped (2 ms of
//! simulated time, coarse sampling) and run end to end with `ecnlab_sim::run`, the call
//! the Python extension makes.
//!
//! `exercise_edits` is the structure-aware variant (target `scenario_edits`): the input
//! picks a valid base scenario and a list of edits of its JSON tree (a leaf set to an
//! extreme number, a unit string, an enum name; a key removed; an array element
//! duplicated), so that most inputs get past the parser into `validate()` and the run.
//!
//! A crash is a panic anywhere on that path, or a run that reports an internal error
//! (`RunError::Internal`: ecnlab broke one of its own invariants). Errors about the
//! scenario itself are the expected answer to bad input, not crashes.

use ecnlab_sim::config::{Scenario, Topology};
use ecnlab_sim::workload::cdf::builtin_cdf_names;
use ecnlab_sim::workload::TrafficSpec;
use ecnlab_sim::RunError;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};

/// Scenarios run end to end so far (the replay test checks the corpus gets that far).
pub static RUNS: AtomicU64 = AtomicU64::new(0);

/// Simulated time of a fuzzed run.
pub const MAX_RUN_NS: u64 = 2_000_000;
/// Larger networks are only validated, not built.
pub const MAX_HOSTS: usize = 32;
/// Flows (listed, Poisson or incast) above which a scenario is only validated.
pub const MAX_FLOWS: u64 = 500;

/// Feed one input through the parser, the validation and (when small) a short run.
pub fn exercise(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(scn) = Scenario::from_toml(text) {
        check(scn);
    }
    if let Ok(scn) = Scenario::from_json(text) {
        check(scn);
    }
}

/// Whether a run of `scn` stays small enough for a fuzzer's budget.
fn small(scn: &Scenario) -> bool {
    let n = scn.n_hosts();
    if n > MAX_HOSTS || matches!(scn.topology, Topology::File { .. }) {
        return false; // (a topology file: no file I/O from fuzzed input)
    }
    if let Topology::LeafSpine { spines, .. } = &scn.topology {
        if *spines > MAX_HOSTS {
            return false;
        }
    }
    let mut flows: u64 = scn.flows.iter().map(|f| f.count as u64).sum();
    for t in &scn.traffic {
        flows = flows.saturating_add(match t {
            // No file I/O from fuzzed input: built-in CDFs only.
            TrafficSpec::Poisson(p) if !builtin_cdf_names().contains(&p.cdf.as_str()) || p.matrix.is_some() => {
                return false
            }
            TrafficSpec::Poisson(p) => p.flows,
            TrafficSpec::Incast(i) => i.queries.saturating_mul(i.fanout.unwrap_or(i.senders.len()) as u64),
            TrafficSpec::IncastGroups(g) => (g.groups as u64).saturating_mul(g.fanout as u64).saturating_mul(g.queries),
            // No file I/O from fuzzed input.
            TrafficSpec::Trace(_) => return false,
        });
    }
    flows <= MAX_FLOWS && scn.probes.len() <= 16
}

fn check(mut scn: Scenario) {
    if scn.validate().is_err() || !small(&scn) {
        return;
    }
    // Cap the run: a short horizon and coarse sampling, keeping the scenario valid.
    scn.duration.0 = scn.duration.0.min(MAX_RUN_NS);
    if scn.metrics.warmup >= scn.duration {
        scn.metrics.warmup.0 = 0;
    }
    scn.metrics.sample_interval.0 = scn.metrics.sample_interval.0.max(10_000);
    for p in &mut scn.probes {
        p.interval.0 = p.interval.0.max(1_000);
    }
    let seed = scn.seed;
    RUNS.fetch_add(1, Ordering::Relaxed);
    match ecnlab_sim::run(&scn, seed) {
        Ok(_) | Err(RunError::Scenario(_)) => {}
        Err(RunError::Internal(e)) => panic!("internal error on a valid scenario: {e}"),
    }
}

/// Names the scenario format knows (scheme, scheduler, topology, traffic, enum values).
const NAMES: &[&str] = &[
    "star",
    "dumbbell",
    "leaf_spine",
    "sp",
    "wrr",
    "dwrr",
    "wfq",
    "sp_wfq",
    "sp_dwrr",
    "none",
    "red",
    "per_queue",
    "per_port",
    "per_pool",
    "dequeue_red",
    "dctcp_red",
    "ideal",
    "mq_ecn",
    "codel",
    "tcn",
    "ecn_sharp",
    "dualq",
    "poisson",
    "incast",
    "fixed",
    "uniform",
    "choice",
    "empirical",
    "per_flow",
    "per_host",
    "dctcp",
    "drop",
    "mark",
    "pass",
    "oracle",
    "departure_rate",
    "baiwei0427",
    "paper",
    "ns3",
    "queue_length",
    "sojourn",
    "exact",
    "newton",
    "all_to_all",
    "inter_leaf",
    "pairs",
    "mq_ecn_ns2",
    "tcn_ns2",
    "linux",
    "queue",
    "port",
    "pool",
    "enqueue",
    "dequeue",
    "websearch",
    "datamining",
    "hadoop",
    "cache",
    "websearch_bytes",
    "datamining_bytes",
];
const UNITS: &[&str] = &["ns", "us", "ms", "s", "B", "KB", "MB", "KiB", "bps", "Kbps", "Mbps", "Gbps", "Tbps", ""];

/// Reads the input front to back; zeros once it is exhausted.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |acc, _| acc << 8 | self.u8() as u64)
    }
}

/// A value chosen by the input: edges of the integer ranges, unit strings, names.
fn value(b: &mut Bytes) -> Option<Value> {
    let edges = [0u64, 1, 2, u8::MAX as u64, u16::MAX as u64, u32::MAX as u64, i64::MAX as u64, u64::MAX - 1, u64::MAX];
    Some(match b.u8() % 12 {
        0 => Value::from(b.u64()),
        1 => Value::from(edges[b.u8() as usize % edges.len()]),
        2 => Value::from(b.u8() as u64),
        3 => Value::from(-(b.u8() as i64) - 1),
        4 => Value::from(serde_json::Number::from_f64(f64::from_bits(b.u64()))?),
        5 => Value::from(b.u8() as f64 / 255.0),
        6 => Value::from(format!("{}{}", b.u64(), UNITS[b.u8() as usize % UNITS.len()])),
        7 => Value::from(format!("{}{}", b.u8(), UNITS[b.u8() as usize % UNITS.len()])),
        8 => Value::from(format!("{}.{}e{}{}", b.u8(), b.u8(), b.u8() % 40, UNITS[b.u8() as usize % UNITS.len()])),
        9 => Value::from(NAMES[b.u8() as usize % NAMES.len()]),
        10 => Value::from(b.u8() & 1 == 1),
        _ => Value::Array((0..b.u8() % 4).map(|_| Value::from(b.u8() as u64)).collect()),
    })
}

/// The `k`-th node of a depth-first walk (`k` modulo the number of nodes).
fn nth_node(root: &mut Value, k: usize) -> &mut Value {
    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Object(m) => m.values().map(count).sum(),
            Value::Array(a) => a.iter().map(count).sum(),
            _ => 0,
        }
    }
    fn walk(v: &mut Value, k: usize) -> &mut Value {
        if k == 0 {
            return v;
        }
        let mut k = k - 1;
        let children: Vec<&mut Value> = match v {
            Value::Object(m) => m.values_mut().collect(),
            Value::Array(a) => a.iter_mut().collect(),
            _ => unreachable!("k < count"),
        };
        for c in children {
            let n = count(c);
            if k < n {
                return walk(c, k);
            }
            k -= n;
        }
        unreachable!("k < count")
    }
    let n = count(root);
    walk(root, k % n)
}

/// Structure-aware variant: `data` picks one of `bases` and edits it (see the module doc).
pub fn exercise_edits(data: &[u8], bases: &[Value]) {
    if let Some(text) = edited_scenario(data, bases) {
        exercise(text.as_bytes());
    }
}

/// The scenario text (TOML or JSON) that `exercise_edits` feeds for `data`: to read a
/// crash of the `scenario_edits` target as a plain scenario file.
pub fn edited_scenario(data: &[u8], bases: &[Value]) -> Option<String> {
    if bases.is_empty() {
        return None;
    }
    let mut b = Bytes(data);
    let mut scn = bases[b.u8() as usize % bases.len()].clone();
    let as_toml = b.u8() & 1 == 1;
    for _ in 0..(b.u8() % 8) + 1 {
        let at = (b.u8() as usize) << 8 | b.u8() as usize;
        let node = nth_node(&mut scn, at);
        match b.u8() % 8 {
            // Remove a key or an element: defaults and shorter lists.
            0 => match node {
                Value::Object(m) if !m.is_empty() => {
                    let k = m.keys().nth(b.u8() as usize % m.len()).unwrap().clone();
                    m.remove(&k);
                }
                Value::Array(a) if !a.is_empty() => {
                    a.remove(b.u8() as usize % a.len());
                }
                _ => {}
            },
            // Duplicate an element: more flows, probes, traffic entries, queues' limits.
            1 => {
                if let Value::Array(a) = node {
                    if let Some(x) = a.first().cloned() {
                        for _ in 0..b.u8() % 4 + 1 {
                            a.push(x.clone());
                        }
                    }
                }
            }
            _ => {
                if let Some(v) = value(&mut b) {
                    *node = v;
                }
            }
        }
    }
    if as_toml {
        toml::to_string(&scn).ok()
    } else {
        Some(serde_json::to_string(&scn).unwrap())
    }
}
