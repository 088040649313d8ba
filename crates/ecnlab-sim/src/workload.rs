//! Workload generation: the scenario's `[[traffic]]` entries become one deterministic,
//! time-sorted list of flow arrivals ([`generate`]). A pure module: it knows hosts only
//! through [`HostInfo`] and nothing of the simulator.
//!
//! Three kinds of traffic (SPEC §4, §6):
//!
//! * **`poisson`** — flow sizes from an empirical CDF ([`cdf`]: built-in `websearch`,
//!   `datamining`, `hadoop`, `cache` in the ns-2 packet format; `websearch_bytes`,
//!   `datamining_bytes`, `fb_trafficgen` in the TrafficGenerator byte format; or a file),
//!   Poisson arrivals at a target load (TCN §6, ECN# §5.1 "flows arrive according to a
//!   Poisson process to achieve the desired network utilization").
//! * **`incast`** — query bursts: at each query instant, flows of U[size_min, size_max] bytes
//!   from many senders to one receiver (ECN# §5.4.1: 3-60 KB query flows; the ns-3
//!   `queue-track` code starts one query flow per sender every 0.1 s, REFERENCE-IMPLEMENTATIONS
//!   §4.4).
//! * **`trace`** — a CSV file of flows replayed exactly ([`trace`]).
//!
//! ## Load
//!
//! `load` is the average offered payload divided by the capacity of the edge that limits:
//!
//! ```text
//! lambda (flows/s) = load x min(sum of the senders' access rates, sum of the receivers' access rates)
//!                    / (8 x mean flow size in bytes)
//! ```
//!
//! With all hosts sending to all hosts this is ns-2's per-sender rate
//! `lambda_host = load x C / (8 x meanFlowSize)` (REFERENCE-IMPLEMENTATIONS §2.11) summed over
//! the senders; with many senders and one receiver (the ECN# star, the TCN testbed client)
//! it is the receiver link's load. `mean flow size` is [`Cdf::mean_bytes`], the exact mean of
//! what is sampled; `mean_bytes` overrides it, e.g. with the ns-2 scripts' hard-coded
//! constants (1671357 web search, 7495019 data mining, 4149016 Hadoop, 913703 cache), which
//! make the offered payload load ~0.3 % below nominal (REFERENCE-IMPLEMENTATIONS §3).
//! The load counts payload bytes, as the papers do, not headers. On an oversubscribed
//! leaf-spine with `inter_leaf` traffic, the core limits before the edge: ns3-ecn-sharp
//! divides by the oversubscription ratio (REFERENCE-IMPLEMENTATIONS §2.11); here, scale
//! `load` yourself.
//!
//! ## Endpoints (`pattern`)
//!
//! * `all_to_all` (default): a flow picks its sender uniformly among `senders`, then its
//!   receiver uniformly among the `receivers` other than the sender.
//! * `inter_leaf`: as `all_to_all`, but the receiver is never in the sender's rack (under
//!   its leaf, edge switch or ToR; the ns3-ecn-sharp `large-scale` model, §2.11).
//! * `pairs`: the ns-2 leaf-spine model (§2.11): every ordered (sender, receiver != sender)
//!   pair is its own Poisson process, at rate lambda_s / (number of receivers of s), where
//!   the sender's share lambda_s = lambda x rate_s / (sum of the senders' rates). Each pair
//!   draws its gaps from its own random stream; the first `flows` arrivals of the merged
//!   processes are kept (ns-2 starts exactly `sim_end` flows).
//!
//! With equal access rates `all_to_all` and `pairs` give the same distribution of traffic;
//! they differ in which random numbers produce it.
//!
//! ## Determinism
//!
//! Each `[[traffic]]` entry i draws from its own streams, `Rng::stream(Stream::TrafficEntry(i)
//! .seed(seed), kind)`, one per kind: arrival gaps, sizes, endpoints, classes (and one
//! gap stream per pair for `pairs`). Changing the classes therefore leaves times, sizes and
//! endpoints unchanged, and adding an entry changes nothing in the others. Times are
//! accumulated in f64 nanoseconds and truncated to whole nanoseconds. The output is sorted
//! by (start_ns, entry index, order of generation).

pub mod cdf;
mod groups;
mod matrix;
mod trace;

pub use cdf::{builtin_cdf_names, load_cdf, Cdf, CdfFormat, CdfPoint, PACKET_PAYLOAD_BYTES};
pub use groups::IncastGroupsSpec;

use ecnlab_core::rng::{Rng, Stream};
use ecnlab_core::units::{ByteSize, Duration};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use matrix::Matrix;

/// One `[[traffic]]` entry.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
#[schemars(!remote, tag = "kind")]
pub enum TrafficSpec {
    Poisson(PoissonSpec),
    Incast(IncastSpec),
    IncastGroups(IncastGroupsSpec),
    Trace(TraceSpec),
}

crate::de::internally_tagged!(TrafficSpec, "kind");

/// Poisson arrivals of CDF-sized flows at a target load.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    /// A built-in CDF name ([`builtin_cdf_names`]) or a file path.
    pub cdf: String,
    /// Format of a CDF file (default: 3 columns = packets, 2 = bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf_format: Option<CdfFormat>,
    /// Offered load in (0, 1] of the limiting edge (see the module docs): `0.6` or `"60%"`.
    #[serde(deserialize_with = "ecnlab_core::units::fraction")]
    #[schemars(schema_with = "ecnlab_core::units::fraction_schema")]
    pub load: f64,
    /// Number of flows to generate.
    pub flows: u64,
    /// Time origin of the process; the first flow arrives one random gap later.
    #[serde(default)]
    pub start: Duration,
    /// Sending hosts (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub senders: Option<Vec<usize>>,
    /// Receiving hosts (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receivers: Option<Vec<usize>>,
    #[serde(default)]
    pub pattern: Pattern,
    /// DSCP values; each flow takes one at random (uniformly, or by `class_weights`).
    #[serde(default = "default_classes")]
    pub classes: Vec<u8>,
    /// Relative weights of `classes` (same length; default: equal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_weights: Option<Vec<f64>>,
    /// Mean flow size used in the load formula (default: the CDF's exact mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_bytes: Option<f64>,
    /// `pattern = "hotspot"`: the receivers that get `hotspot_share` of the flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hotspots: Option<Vec<usize>>,
    /// `pattern = "hotspot"`: the share of the flows that go to the hotspots, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "optional_fraction")]
    #[schemars(schema_with = "ecnlab_core::units::fraction_schema")]
    pub hotspot_share: Option<f64>,
    /// `pattern = "rack_skewed"`: rack r sends and receives in proportion to 1 / (r + 1)^skew
    /// (0: uniform over racks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skew: Option<f64>,
    /// `pattern = "matrix"`: a CSV file of the fraction of the flows per pair of hosts
    /// (`src,dst,fraction`) or racks (`src_rack,dst_rack,fraction`), summing to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
}

fn optional_fraction<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    ecnlab_core::units::fraction(d).map(Some)
}

fn default_classes() -> Vec<u8> {
    vec![0]
}

/// How a Poisson flow picks its endpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// A sender uniformly, then a receiver uniformly among the others.
    #[default]
    AllToAll,
    /// As all_to_all, never to the sender's own rack.
    InterLeaf,
    /// Every (sender, receiver) pair its own Poisson process (the ns-2 leaf-spine model).
    Pairs,
    /// `hotspot_share` of the flows to the `hotspots`, the rest to the other receivers.
    Hotspot,
    /// Racks send and receive by a Zipf law of exponent `skew`.
    RackSkewed,
    /// The fractions of a `matrix` file.
    Matrix,
}

/// Incast query bursts.
///
/// Query q starts at `start + q x interval` (fixed spacing, as the ns-3 `queue-track` code;
/// one query at `start` is ECN# §5.4.1's "N concurrent query flows at 4 s"). A query is
/// `fanout` flows to `receiver`, all starting at the same instant: if `fanout` <= the number
/// of senders, that many distinct senders chosen at random; if larger, every sender sends
/// fanout / S flows and fanout mod S random distinct senders send one more (ECN# uses N =
/// 25..200 concurrent query flows from 16 senders).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncastSpec {
    /// The host every query flow goes to.
    pub receiver: usize,
    /// The hosts that answer a query.
    pub senders: Vec<usize>,
    /// Flow sizes are uniform integers in [size_min, size_max] bytes.
    pub size_min: ByteSize,
    /// Largest flow size (see `size_min`).
    pub size_max: ByteSize,
    /// Number of queries.
    pub queries: u64,
    /// Time between query starts (required when queries > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// Start of the first query.
    #[serde(default)]
    pub start: Duration,
    /// DSCP of every query flow.
    #[serde(default)]
    pub class: u8,
    /// Flows per query (default: one per sender).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fanout: Option<usize>,
}

/// A CSV file of flows (columns `start`, `src`, `dst`, `size`, optional `class`; see
/// [`trace`]), replayed exactly. A relative path is relative to the working directory.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The CSV file (`start`, `src`, `dst`, `size`, optional `class`).
    pub file: String,
}

/// The largest CDF or trace file read (a trace of ~10 million flows).
pub const MAX_INPUT_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Read a CDF or trace file: a regular file of bounded size, never a FIFO, a device such as
/// `/dev/zero` or a directory (reading those would block or never end).
pub(crate) fn read_input_file(path: &str) -> Result<String, String> {
    let shown = ecnlab_core::units::echo(path);
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() { "a directory" } else { "not a regular file" };
        return Err(format!("{shown} is {kind}"));
    }
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(format!("{shown} is larger than {} MB", MAX_INPUT_FILE_BYTES >> 20));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))
}

/// What the generator needs to know about the hosts.
#[derive(Clone, Debug)]
pub struct HostInfo {
    pub n_hosts: usize,
    /// Rate of each host's access link (index = host).
    pub access_rate_bps: Vec<u64>,
    /// Each host's rack (its ToR's number) in a topology of racks (leaf-spine, fat-tree,
    /// Clos, topology files); none in a star or a dumbbell.
    pub racks: Option<Vec<u32>>,
}

/// One generated flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FlowArrival {
    pub start_ns: u64,
    pub src: u16,
    pub dst: u16,
    /// Bytes of payload.
    pub size: u64,
    /// DSCP.
    pub class: u8,
    /// Index of the `[[traffic]]` entry that produced the flow.
    pub source: u32,
}

/// Random-stream kinds of one traffic entry.
const S_ARRIVALS: u64 = 0;
const S_SIZES: u64 = 1;
const S_ENDPOINTS: u64 = 2;
const S_CLASSES: u64 = 3;
/// Per-pair arrival streams of the `pairs` pattern: `S_PAIR_BASE + pair index`.
const S_PAIR_BASE: u64 = 1 << 32;

fn stream(seed: u64, entry: usize, kind: u64) -> Rng {
    Rng::stream(Stream::TrafficEntry(entry as u64).seed(seed), kind)
}

/// Upper bound on generated flows per entry (a guard against typos such as `flows = 1e12`).
const MAX_FLOWS: u64 = 100_000_000;

/// Generate every entry's flows, sorted by (start_ns, entry index, order of generation).
pub fn generate(specs: &[TrafficSpec], hosts: &HostInfo, seed: u64) -> Result<Vec<FlowArrival>, String> {
    if hosts.access_rate_bps.len() != hosts.n_hosts {
        return Err(format!(
            "traffic: internal: {} access rates for {} hosts",
            hosts.access_rate_bps.len(),
            hosts.n_hosts
        ));
    }
    if hosts.n_hosts > u16::MAX as usize + 1 {
        return Err(format!("traffic: {} hosts, at most 65536 are supported", hosts.n_hosts));
    }
    let mut out = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let path = format!("traffic[{i}]");
        match spec {
            TrafficSpec::Poisson(p) => poisson(p, hosts, seed, i, &path, &mut out)?,
            TrafficSpec::Incast(p) => incast(p, hosts, seed, i, &path, &mut out)?,
            TrafficSpec::IncastGroups(p) => {
                let list = host_list(&p.hosts, hosts, &format!("{path}.hosts"))?;
                let g = groups::Groups { spec: p, hosts: list };
                g.check(&path, MAX_FLOWS)?;
                let (mut endpoints, mut sizes) = (stream(seed, i, S_ENDPOINTS), stream(seed, i, S_SIZES));
                g.generate(&mut endpoints, &mut sizes, |start_ns, src, dst, size| {
                    out.push(FlowArrival { start_ns, src, dst, size, class: p.class, source: i as u32 })
                });
            }
            TrafficSpec::Trace(p) => {
                let rows = trace::read_trace(&p.file, hosts.n_hosts).map_err(|e| format!("{path}.file: {e}"))?;
                out.extend(rows.into_iter().map(|r| FlowArrival {
                    start_ns: r.start_ns,
                    src: r.src,
                    dst: r.dst,
                    size: r.size,
                    class: r.class,
                    source: i as u32,
                }));
            }
        }
    }
    // Stable: equal (time, entry) keep the order of generation.
    out.sort_by_key(|f| (f.start_ns, f.source));
    Ok(out)
}

/// Check a host list: indices exist, no duplicates, not empty.
fn host_list(list: &Option<Vec<usize>>, hosts: &HostInfo, path: &str) -> Result<Vec<u16>, String> {
    let n = hosts.n_hosts;
    let Some(list) = list else {
        if n < 2 {
            return Err(format!("{path}: the topology has {n} host(s); traffic needs at least 2"));
        }
        return Ok((0..n as u16).collect());
    };
    if list.is_empty() {
        return Err(format!("{path}: the list is empty"));
    }
    let mut seen = vec![false; n];
    for (k, &h) in list.iter().enumerate() {
        if h >= n {
            return Err(format!("{path}[{k}]: host {h} does not exist ({n} hosts)"));
        }
        if seen[h] {
            return Err(format!("{path}[{k}]: host {h} is listed twice"));
        }
        seen[h] = true;
    }
    Ok(list.iter().map(|&h| h as u16).collect())
}

/// Picks a class by index from a cumulative weight table.
struct ClassPicker {
    classes: Vec<u8>,
    cumulative: Option<Vec<f64>>,
}

impl ClassPicker {
    fn new(classes: &[u8], weights: &Option<Vec<f64>>, path: &str) -> Result<ClassPicker, String> {
        if classes.is_empty() {
            return Err(format!("{path}.classes: the list is empty"));
        }
        if let Some((k, c)) = classes.iter().enumerate().find(|(_, &c)| c > 63) {
            return Err(format!("{path}.classes[{k}]: {c} is not a DSCP value (0..=63)"));
        }
        let cumulative = match weights {
            None => None,
            Some(w) => {
                if w.len() != classes.len() {
                    return Err(format!("{path}.class_weights: {} weights for {} classes", w.len(), classes.len()));
                }
                let mut acc = 0.0;
                let mut cum = Vec::with_capacity(w.len());
                for (k, &x) in w.iter().enumerate() {
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(format!("{path}.class_weights[{k}]: {x} is not a non-negative number"));
                    }
                    acc += x;
                    cum.push(acc);
                }
                if acc <= 0.0 {
                    return Err(format!("{path}.class_weights: the weights sum to 0"));
                }
                Some(cum)
            }
        };
        Ok(ClassPicker { classes: classes.to_vec(), cumulative })
    }

    fn pick(&self, rng: &mut Rng) -> u8 {
        match &self.cumulative {
            None if self.classes.len() == 1 => self.classes[0],
            None => self.classes[rng.below(self.classes.len() as u64) as usize],
            Some(cum) => {
                let u = rng.f64() * cum[cum.len() - 1];
                // First class whose cumulative weight exceeds u (skips zero weights).
                let k = cum.partition_point(|&c| c <= u).min(cum.len() - 1);
                self.classes[k]
            }
        }
    }
}

fn poisson(
    p: &PoissonSpec,
    hosts: &HostInfo,
    seed: u64,
    entry: usize,
    path: &str,
    out: &mut Vec<FlowArrival>,
) -> Result<(), String> {
    let cdf = load_cdf(&p.cdf, p.cdf_format).map_err(|e| format!("{path}.cdf: {e}"))?;
    if !(p.load > 0.0 && p.load <= 1.0) {
        return Err(format!("{path}.load: {} is not in (0, 1]", p.load));
    }
    if p.flows == 0 || p.flows > MAX_FLOWS {
        return Err(format!("{path}.flows: {} is not between 1 and {MAX_FLOWS}", p.flows));
    }
    let mean = match p.mean_bytes {
        // A flow is at least one byte: a smaller mean crowds every arrival into microseconds.
        Some(m) if !(m.is_finite() && m >= 1.0) => {
            return Err(format!("{path}.mean_bytes: {m} is not a number of bytes (at least 1)"));
        }
        Some(m) => m,
        None => cdf.mean_bytes(),
    };
    let senders = host_list(&p.senders, hosts, &format!("{path}.senders"))?;
    let receivers = host_list(&p.receivers, hosts, &format!("{path}.receivers"))?;
    let classes = ClassPicker::new(&p.classes, &p.class_weights, path)?;

    let matrix = endpoint_matrix(p, hosts, &senders, &receivers, path)?;
    // Eligible receivers of each sender (index into `senders`); not for a matrix, which
    // picks its own (and a big fabric's lists would be most of memory).
    let eligible = match matrix {
        Some(_) => Vec::new(),
        None => eligible_receivers(p.pattern, hosts, &senders, &receivers, path)?,
    };

    let rate_sum = |l: &[u16]| l.iter().map(|&h| hosts.access_rate_bps[h as usize] as f64).sum::<f64>();
    let (send_bps, recv_bps) = (rate_sum(&senders), rate_sum(&receivers));
    let capacity_bps = send_bps.min(recv_bps);
    if capacity_bps <= 0.0 {
        return Err(format!("{path}: the hosts' access links have no capacity"));
    }
    // Flows per nanosecond.
    let lambda = p.load * capacity_bps / (8.0 * mean) / 1e9;

    let mut sizes = stream(seed, entry, S_SIZES);
    let mut class_rng = stream(seed, entry, S_CLASSES);
    let start = p.start.0 as f64;
    out.reserve(p.flows as usize);
    let mut emit = |t: f64, src: u16, dst: u16| -> Result<(), String> {
        if t >= 1.8e19 {
            return Err(format!("{path}: arrival times overflow (load or mean_bytes far too small?)"));
        }
        out.push(FlowArrival {
            start_ns: t as u64,
            src,
            dst,
            size: cdf.sample(&mut sizes),
            class: classes.pick(&mut class_rng),
            source: entry as u32,
        });
        Ok(())
    };

    if let Some(m) = &matrix {
        let mut arrivals = stream(seed, entry, S_ARRIVALS);
        let mut endpoints = stream(seed, entry, S_ENDPOINTS);
        let gap = 1.0 / lambda;
        let mut t = start;
        for _ in 0..p.flows {
            t += arrivals.exp(gap);
            let (src, dst) = m.pick(&mut endpoints);
            emit(t, src, dst)?;
        }
        return Ok(());
    }
    match p.pattern {
        Pattern::Hotspot | Pattern::RackSkewed | Pattern::Matrix => unreachable!("a matrix above"),
        Pattern::AllToAll | Pattern::InterLeaf => {
            let mut arrivals = stream(seed, entry, S_ARRIVALS);
            let mut endpoints = stream(seed, entry, S_ENDPOINTS);
            let gap = 1.0 / lambda;
            let mut t = start;
            for _ in 0..p.flows {
                t += arrivals.exp(gap);
                let k = endpoints.below(senders.len() as u64) as usize;
                let e = &eligible[k];
                let dst = e[endpoints.below(e.len() as u64) as usize];
                emit(t, senders[k], dst)?;
            }
        }
        Pattern::Pairs => {
            // One process per ordered pair, merged by a min-heap of next arrival times
            // (f64 bits order like the non-negative values; ties go to the lower pair index).
            let mut pairs: Vec<(u16, u16, f64, Rng)> = Vec::new();
            for (k, &s) in senders.iter().enumerate() {
                let share = lambda * hosts.access_rate_bps[s as usize] as f64 / send_bps;
                let pair_gap = eligible[k].len() as f64 / share;
                for &r in &eligible[k] {
                    let rng = stream(seed, entry, S_PAIR_BASE + pairs.len() as u64);
                    pairs.push((s, r, pair_gap, rng));
                }
            }
            let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::with_capacity(pairs.len());
            for (i, pair) in pairs.iter_mut().enumerate() {
                let t = start + pair.3.exp(pair.2);
                heap.push(Reverse((t.to_bits(), i)));
            }
            for _ in 0..p.flows {
                let Reverse((bits, i)) = heap.pop().expect("one entry per pair");
                let t = f64::from_bits(bits);
                let pair = &mut pairs[i];
                emit(t, pair.0, pair.1)?;
                let next = t + pair.3.exp(pair.2);
                heap.push(Reverse((next.to_bits(), i)));
            }
        }
    }
    Ok(())
}

/// The receivers each sender may pick under `all_to_all`, `inter_leaf` or `pairs`.
fn eligible_receivers(
    pattern: Pattern,
    hosts: &HostInfo,
    senders: &[u16],
    receivers: &[u16],
    path: &str,
) -> Result<Vec<Vec<u16>>, String> {
    let rack_of = match (pattern, &hosts.racks) {
        (Pattern::InterLeaf, None) => {
            return Err(format!(
                "{path}.pattern: inter_leaf needs a topology of racks (leaf_spine, fat_tree, clos, file)"
            ));
        }
        (Pattern::InterLeaf, Some(racks)) => Some(racks),
        _ => None,
    };
    let eligible: Vec<Vec<u16>> = senders
        .iter()
        .map(|&s| {
            receivers
                .iter()
                .copied()
                .filter(|&r| r != s && rack_of.is_none_or(|rack| rack[r as usize] != rack[s as usize]))
                .collect()
        })
        .collect();
    if let Some(k) = eligible.iter().position(|e| e.is_empty()) {
        let why = if rack_of.is_some() { "outside its rack" } else { "other than itself" };
        return Err(format!("{path}.senders: sender {} has no receiver {why}", senders[k]));
    }
    Ok(eligible)
}

/// A pattern as a scenario writes it.
fn pattern_name(p: Pattern) -> String {
    serde_json::to_value(p).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// The traffic matrix of a `hotspot`, `rack_skewed` or `matrix` pattern ([`matrix`]), none
/// for the others; each pattern's own keys are refused under another.
fn endpoint_matrix(
    p: &PoissonSpec,
    hosts: &HostInfo,
    senders: &[u16],
    receivers: &[u16],
    path: &str,
) -> Result<Option<Matrix>, String> {
    let own: [(&str, bool, Pattern); 4] = [
        ("hotspots", p.hotspots.is_some(), Pattern::Hotspot),
        ("hotspot_share", p.hotspot_share.is_some(), Pattern::Hotspot),
        ("skew", p.skew.is_some(), Pattern::RackSkewed),
        ("matrix", p.matrix.is_some(), Pattern::Matrix),
    ];
    for (key, given, pattern) in own {
        let name = pattern_name(pattern);
        if given && p.pattern != pattern {
            return Err(format!("{path}.{key}: only with pattern = \"{name}\""));
        }
        if !given && p.pattern == pattern {
            return Err(format!("{path}.{key}: required with pattern = \"{name}\""));
        }
    }
    let racks = || {
        hosts.racks.as_ref().ok_or_else(|| {
            format!(
                "{path}.pattern: {} needs a topology of racks (leaf_spine, fat_tree, clos, file)",
                pattern_name(p.pattern)
            )
        })
    };
    let sorted = |mut v: Vec<u16>| {
        v.sort_unstable();
        v
    };
    let (senders, receivers) = (sorted(senders.to_vec()), sorted(receivers.to_vec()));
    let within = |group: &[u16], of: &[u16]| group.iter().copied().filter(|h| of.binary_search(h).is_ok()).collect();
    let m = match p.pattern {
        Pattern::AllToAll | Pattern::InterLeaf | Pattern::Pairs => return Ok(None),
        Pattern::Hotspot => {
            let hot = host_list(&p.hotspots, hosts, &format!("{path}.hotspots"))?;
            let share = p.hotspot_share.expect("checked above");
            if !(share > 0.0 && share <= 1.0) {
                return Err(format!("{path}.hotspot_share: {share} is not in (0, 1]"));
            }
            let hot = sorted(hot);
            let cold: Vec<u16> = receivers.iter().copied().filter(|h| hot.binary_search(h).is_err()).collect();
            let mut m = Matrix::new(vec![senders.clone(), hot, cold]);
            if !m.add(0, 1, share) {
                return Err(format!("{path}.hotspots: no sender has a hotspot other than itself"));
            }
            if share < 1.0 && !m.add(0, 2, 1.0 - share) {
                return Err(format!("{path}.receivers: no receiver is left outside the hotspots"));
            }
            m
        }
        Pattern::RackSkewed => {
            let skew = p.skew.expect("checked above");
            if !(skew.is_finite() && skew >= 0.0) {
                return Err(format!("{path}.skew: {skew} is not a non-negative number"));
            }
            let racks = matrix::rack_groups(racks()?);
            let n = racks.len();
            let mut groups: Vec<Vec<u16>> = racks.iter().map(|r| within(r, &senders)).collect();
            groups.extend(racks.iter().map(|r| within(r, &receivers)));
            let mut m = Matrix::new(groups);
            let weight = |r: usize| 1.0 / ((r + 1) as f64).powf(skew);
            for a in 0..n {
                for b in 0..n {
                    m.add(a as u32, (n + b) as u32, weight(a) * weight(b));
                }
            }
            m
        }
        Pattern::Matrix => {
            let file = p.matrix.as_deref().expect("checked above");
            let n_racks = hosts.racks.as_ref().map(|r| r.iter().map(|&x| x as usize + 1).max().unwrap_or(0));
            let f = matrix::read_matrix(file, hosts.n_hosts, n_racks).map_err(|e| format!("{path}.matrix: {e}"))?;
            let cells: Vec<Vec<u16>> = match f.by_rack {
                true => matrix::rack_groups(racks()?),
                false => (0..hosts.n_hosts as u16).map(|h| vec![h]).collect(),
            };
            let n = cells.len();
            let mut groups: Vec<Vec<u16>> = cells.iter().map(|c| within(c, &senders)).collect();
            groups.extend(cells.iter().map(|c| within(c, &receivers)));
            let mut m = Matrix::new(groups);
            for (k, &(a, b, x)) in f.rows.iter().enumerate() {
                if x > 0.0 && !m.add(a as u32, (n + b) as u32, x) {
                    let what = if f.by_rack { "rack" } else { "host" };
                    return Err(format!(
                        "{path}.matrix: '{file}' row {}: {what} {a} has no sender with a receiver in {what} {b}",
                        k + 1
                    ));
                }
            }
            m
        }
    };
    if m.is_empty() {
        return Err(format!("{path}.senders: no sender has a receiver other than itself"));
    }
    Ok(Some(m))
}

fn incast(
    p: &IncastSpec,
    hosts: &HostInfo,
    seed: u64,
    entry: usize,
    path: &str,
    out: &mut Vec<FlowArrival>,
) -> Result<(), String> {
    let n = hosts.n_hosts;
    if p.receiver >= n {
        return Err(format!("{path}.receiver: host {} does not exist ({n} hosts)", p.receiver));
    }
    let senders = host_list(&Some(p.senders.clone()), hosts, &format!("{path}.senders"))?;
    if let Some(k) = senders.iter().position(|&s| s as usize == p.receiver) {
        return Err(format!("{path}.senders[{k}]: host {} is the receiver", p.receiver));
    }
    let (lo, hi) = (p.size_min.0, p.size_max.0);
    if lo == 0 {
        return Err(format!("{path}.size_min: must be at least 1 byte"));
    }
    if hi < lo {
        return Err(format!("{path}.size_max: {} is below size_min {}", p.size_max, p.size_min));
    }
    if p.queries == 0 {
        return Err(format!("{path}.queries: must be at least 1"));
    }
    let interval = match p.interval {
        Some(Duration(0)) if p.queries > 1 => return Err(format!("{path}.interval: must be positive")),
        Some(d) => d.0,
        None if p.queries > 1 => {
            return Err(format!("{path}.interval: required when queries > 1 (time between query starts)"))
        }
        None => 0,
    };
    if p.class > 63 {
        return Err(format!("{path}.class: {} is not a DSCP value (0..=63)", p.class));
    }
    let s_count = senders.len();
    let fanout = p.fanout.unwrap_or(s_count);
    if fanout == 0 {
        return Err(format!("{path}.fanout: must be at least 1"));
    }
    let total = p.queries.saturating_mul(fanout as u64);
    if total > MAX_FLOWS {
        return Err(format!("{path}: queries x fanout = {total} flows, more than {MAX_FLOWS}"));
    }
    let last = (p.queries - 1).checked_mul(interval).and_then(|x| x.checked_add(p.start.0));
    if last.is_none() {
        return Err(format!("{path}.interval: the last query starts after the end of time"));
    }

    let mut endpoints = stream(seed, entry, S_ENDPOINTS);
    let mut sizes = stream(seed, entry, S_SIZES);
    let (base, extra) = (fanout / s_count, fanout % s_count);
    let mut order: Vec<usize> = (0..s_count).collect();
    let mut count = vec![0usize; s_count];
    out.reserve(total as usize);
    for q in 0..p.queries {
        let t = p.start.0 + q * interval;
        count.fill(base);
        if extra > 0 {
            // Partial Fisher-Yates: the first `extra` entries become a uniform random subset.
            for j in 0..extra {
                let r = j + endpoints.below((s_count - j) as u64) as usize;
                order.swap(j, r);
            }
            for &k in &order[..extra] {
                count[k] += 1;
            }
        }
        for (k, &src) in senders.iter().enumerate() {
            for _ in 0..count[k] {
                out.push(FlowArrival {
                    start_ns: t,
                    src,
                    dst: p.receiver as u16,
                    size: lo + sizes.below(hi - lo + 1),
                    class: p.class,
                    source: entry as u32,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
