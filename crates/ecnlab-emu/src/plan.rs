//! The emulation plan: everything `ecnlab emulate` sets up, computed once from the resolved
//! scenario (`ecnlab._core.emulation_plan`), so that the Python side only carries it out
//! (namespaces, the switch, the agents) and collects what they measured.
//!
//! Units are parsed here, once, by the core's grammar: the plan holds numbers (bit/s, ns,
//! bytes; seconds where the agents take seconds), the switch's configuration as its typed
//! [`EmuConfig`], and the `[[traffic]]` messages drawn by the simulator's own generator with
//! the run's seed (the very flows `ecnlab run` simulates). What a kernel host cannot do
//! shows as the plan's warnings, never as a silent change: the time series is sampled at
//! least [`SAMPLE_FLOOR_NS`] apart (the switch's and the agents' samplers run in the hosts'
//! user space), and listed flows' start jitter is not drawn.
//!
//! Scaling (`--rate`, `--scale`, the package doc of `ecnlab.emulate`): the scenario runs at
//! `1/factor` of its rates; `dilate` multiplies every time by `factor`, `rate` divides the
//! marking schemes' queue-length thresholds by it instead. The scaled scenario is the one
//! the run carries out, and the one its results are in the time base of.

use crate::config::{EmuConfig, PortSpec, ShaperConfig, StaticMac};
use ecnlab_core::rng::Stream;
use ecnlab_core::units::{parse_kind, ByteSize, Duration, Rate};
use ecnlab_sim::config::Topology;
use ecnlab_sim::topology::Net;
use ecnlab_sim::workload::{self, FlowArrival};
use ecnlab_sim::Scenario;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The finest sampling of the time series an emulation does: the agents poll their
/// sockets' counters and the switch writes its rows from user space, on a loaded machine.
pub const SAMPLE_FLOOR_NS: u64 = 10_000_000;

/// The emulated link rate when the scenario's is faster and `--rate auto` (the default):
/// what veths and a userspace switch carry without losing frames.
pub const AUTO_RATE_BPS: u64 = 100_000_000;

/// How the run is set up: `ecnlab emulate`'s options.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlanOptions {
    /// The host link rate to run at (`"100Mbit"`), `"auto"` (at most [`AUTO_RATE_BPS`]) or
    /// `None` (the scenario's own).
    pub rate: Option<String>,
    pub scale: ScaleMode,
    /// The run's seed (None: the scenario's).
    pub seed: Option<u64>,
    /// The switch's token bucket (None or `"auto"`: 100 us at the slowest link, at least
    /// 2,500 B).
    pub burst: Option<String>,
    /// Apply the scenario's link delays in the switch.
    pub link_delay: bool,
    /// Run the switch at real-time priority 50.
    pub realtime: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            rate: Some("auto".into()),
            scale: ScaleMode::Dilate,
            seed: None,
            burst: None,
            link_delay: true,
            realtime: true,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleMode {
    /// Times x factor: the same dynamics in a slower time base.
    #[default]
    Dilate,
    /// Queue-length thresholds / factor: the same times, queues in fewer bytes.
    Rate,
}

/// The plan (`_core.emulation_plan`).
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub seed: u64,
    pub scale: Scaling,
    /// The resolved scenario, scaled: what runs.
    pub scenario: Value,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// The agents' and the switch's sampling period.
    pub sample_interval_s: f64,
    /// Per host: its MAC and its link.
    pub hosts: Vec<HostPlan>,
    /// `[[flows]]`, one per flow (`count` expanded), ids in order as in `ecnlab run`.
    pub flows: Vec<FlowPlan>,
    /// `[[traffic]]` messages, ids after the flows'.
    pub messages: Vec<MessagePlan>,
    pub probes: Vec<ProbePlan>,
    /// The queue of each DSCP (0..64), as the switch classifies.
    pub class_queue: Vec<u64>,
    pub mss: u32,
    pub nic_buffer_bytes: u64,
    pub pias_thresholds_bytes: Vec<u64>,
    pub ack_dscp: Option<u8>,
    pub persistent_connections: bool,
    /// End the run when every message is done (`metrics.stop_when_done`, with only sized
    /// flows and some messages).
    pub stop_when_done: bool,
    /// `ecnlab-switch`'s configuration (`--config`).
    pub switch: EmuConfig,
    /// What the emulation does otherwise than the scenario says.
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Scaling {
    pub factor: f64,
    pub mode: ScaleMode,
    pub scenario_link_rate_bps: u64,
    pub emulated_link_rate_bps: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct HostPlan {
    pub mac: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowPlan {
    pub id: usize,
    /// Its `[[flows]]` entry.
    pub spec: usize,
    pub src: usize,
    pub dst: usize,
    pub class: u8,
    pub queue: u64,
    pub start_s: f64,
    pub stop_s: Option<f64>,
    pub size: Option<u64>,
    pub rate_bps: Option<u64>,
    /// `cc` as the scenario names it (the flow's, or `transport.cc`).
    pub cc_name: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct MessagePlan {
    pub id: usize,
    /// Its `[[traffic]]` entry, counted after the `[[flows]]` entries.
    pub spec: usize,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
    pub queue: u64,
    pub size: u64,
    pub start_s: f64,
    pub cc_name: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProbePlan {
    pub id: usize,
    pub src: usize,
    pub dst: usize,
    pub class: u8,
    pub interval_s: f64,
    pub start_s: f64,
    pub stop_s: Option<f64>,
    pub size: u64,
}

/// The MAC of host `i` (locally administered).
pub fn host_mac(i: usize) -> String {
    format!("02:ec:77:00:{:02x}:{:02x}", (i >> 8) & 0xff, i & 0xff)
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The plan of `resolved` (`_core.resolve_json`'s scenario) under `opts`. Errors are what
/// the emulator cannot run, in one line.
pub fn plan(resolved: &Value, opts: &PlanOptions) -> Result<Plan, String> {
    let orig = star_link_rate(&Scenario::from_json(&resolved.to_string())?, resolved)?;
    let target = emulated_rate(orig, opts)?;
    let factor = orig as f64 / target as f64;
    let scaled = scale(resolved, factor, opts.scale);
    let scn = Scenario::from_json(&scaled.to_string())?;
    let mut warnings = Vec::new();
    let hosts = host_plans(&scn);
    let sample_ns = scn.metrics.sample_interval.0.max(SAMPLE_FLOOR_NS);
    if sample_ns > scn.metrics.sample_interval.0 {
        warnings.push(format!(
            "metrics.sample_interval: {} ns sampled every {SAMPLE_FLOOR_NS} ns (the emulation's finest)",
            scn.metrics.sample_interval.0
        ));
    }
    let class_queue: Vec<u64> = (0..64u8).map(|d| scn.switch.classify(d) as u64).collect();
    let flows = flow_plans(&scn, &class_queue, &mut warnings);
    let seed = opts.seed.unwrap_or(scn.seed);
    let messages = message_plans(&scn, seed, flows.len(), &class_queue)?;
    let stop_when_done = !messages.is_empty() && flows.iter().all(|f| f.size.is_some()) && scn.metrics.stop_when_done;
    let switch = switch_config(&scn, &hosts, opts, sample_ns, seed)?;
    Ok(Plan {
        seed,
        scale: Scaling { factor, mode: opts.scale, scenario_link_rate_bps: orig, emulated_link_rate_bps: target },
        duration_s: secs(scn.duration.0),
        warmup_s: secs(scn.metrics.warmup.0),
        sample_interval_s: secs(sample_ns),
        hosts,
        flows,
        messages,
        probes: probe_plans(&scn),
        class_queue,
        mss: scn.transport.mss,
        nic_buffer_bytes: scn.host.nic_buffer(scn.transport.profile).0,
        pias_thresholds_bytes: scn.host.pias_thresholds.iter().map(|b| b.0).collect(),
        ack_dscp: scn.host.ack_dscp,
        persistent_connections: scn.host.persistent_connections,
        stop_when_done,
        switch,
        warnings,
        scenario: scaled,
    })
}

/// The star's host link rate, or what the emulator cannot run.
fn star_link_rate(scn: &Scenario, resolved: &Value) -> Result<u64, String> {
    if scn.rtt_variation.is_some() {
        return Err("emulate does not support `rtt_variation` yet (use [[flows]] and [[probes]])".into());
    }
    if scn.switch.pfc.enabled {
        // The emulated switch does not pause its hosts' NICs (802.1Qbb frames on the veths).
        return Err("emulate does not support `switch.pfc` (PFC): the simulator does".into());
    }
    let Topology::Star { link_rate, .. } = &scn.topology else {
        return Err(format!("emulate supports star topologies only (this one is `{}`)", topology_kind(resolved)));
    };
    Ok(link_rate.0)
}

/// The link rate the emulation runs at (`--rate`): the scenario's `orig`, at most
/// [`AUTO_RATE_BPS`] under `auto`, or the one given.
fn emulated_rate(orig: u64, opts: &PlanOptions) -> Result<u64, String> {
    let target = match opts.rate.as_deref() {
        None | Some("none") | Some("off") => orig,
        Some("auto") => orig.min(AUTO_RATE_BPS),
        Some(r) => parse_kind("rate", r).map_err(|e| format!("--rate {r}: {e}"))?,
    };
    if target == 0 {
        return Err("--rate must be larger than 0".into());
    }
    Ok(target)
}

/// Each host's MAC and link (the star's, or its own `host_link_*`).
fn host_plans(scn: &Scenario) -> Vec<HostPlan> {
    let Topology::Star { hosts: n, link_rate, link_delay, host_link_rate, host_link_delay } = &scn.topology else {
        unreachable!("the star stays a star")
    };
    (0..*n)
        .map(|i| HostPlan {
            mac: host_mac(i),
            rate_bps: host_link_rate.get(i).unwrap_or(link_rate).0,
            delay_ns: host_link_delay.get(i).unwrap_or(link_delay).0,
        })
        .collect()
}

/// `cc` as the scenario names it: `c`, else `transport.cc`.
fn cc_name(scn: &Scenario, c: Option<ecnlab_sim::tcp::config::CcKind>) -> String {
    serde_json::to_value(c.unwrap_or(scn.transport.cc))
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// `[[flows]]`, `count` expanded; start jitter, which the emulator does not draw, warned.
fn flow_plans(scn: &Scenario, class_queue: &[u64], warnings: &mut Vec<String>) -> Vec<FlowPlan> {
    let mut flows = Vec::new();
    for (spec, f) in scn.flows.iter().enumerate() {
        for _ in 0..f.count {
            flows.push(FlowPlan {
                id: flows.len(),
                spec,
                src: f.src,
                dst: f.dst,
                class: f.class,
                queue: class_queue[(f.class & 63) as usize],
                start_s: secs(f.start.0),
                stop_s: f.stop.map(|d| secs(d.0)),
                size: f.size.map(|b| b.0),
                rate_bps: f.rate.map(|r| r.0),
                cc_name: cc_name(scn, f.cc),
            });
        }
    }
    if let Some(i) = scn.flows.iter().position(|f| f.start_jitter.is_some_and(|d| d.0 > 0)) {
        let others = scn.flows.iter().filter(|f| f.start_jitter.is_some_and(|d| d.0 > 0)).count() > 1;
        warnings.push(format!(
            "flows[{i}].start_jitter{}: not applied (the emulator starts each listed flow at its start)",
            if others { " and others" } else { "" }
        ));
    }
    flows
}

/// The `[[traffic]]` messages of the run's `seed`, ids from `first_id` (after the flows').
fn message_plans(scn: &Scenario, seed: u64, first_id: usize, class_queue: &[u64]) -> Result<Vec<MessagePlan>, String> {
    Ok(arrivals(scn, seed)?
        .into_iter()
        .enumerate()
        .map(|(i, a)| MessagePlan {
            id: first_id + i,
            spec: scn.flows.len() + a.source as usize,
            src: a.src,
            dst: a.dst,
            class: a.class,
            queue: class_queue[(a.class & 63) as usize],
            size: a.size,
            start_s: secs(a.start_ns),
            cc_name: cc_name(scn, None),
        })
        .collect())
}

fn probe_plans(scn: &Scenario) -> Vec<ProbePlan> {
    (scn.probes.iter().enumerate())
        .map(|(id, p)| ProbePlan {
            id,
            src: p.src,
            dst: p.dst,
            class: p.class,
            interval_s: secs(p.interval.0),
            start_s: secs(p.start.0),
            stop_s: p.stop.map(|d| secs(d.0)),
            size: p.size.0,
        })
        .collect()
}

fn topology_kind(resolved: &Value) -> String {
    resolved["topology"]["kind"].as_str().unwrap_or("?").to_string()
}

/// `ecnlab-switch`'s configuration: a port per host (`s<i>`, named `s0->h<i>` as the
/// simulator names the star's switch ports), the scenario's `[switch]` and `[marking]`.
fn switch_config(
    scn: &Scenario,
    hosts: &[HostPlan],
    opts: &PlanOptions,
    sample_ns: u64,
    seed: u64,
) -> Result<EmuConfig, String> {
    let slowest = hosts.iter().map(|h| h.rate_bps).min().unwrap_or(1);
    let burst = match opts.burst.as_deref() {
        None | Some("auto") => (slowest as f64 * 100e-6 / 8.0).max(2500.0) as u64,
        Some(b) => parse_kind("size", b).map_err(|e| format!("--burst {b}: {e}"))?,
    };
    let cfg = EmuConfig {
        ports: (hosts.iter().enumerate())
            .map(|(i, h)| PortSpec {
                ifname: format!("s{i}"),
                name: Some(format!("s0->h{i}")),
                rate: Rate(h.rate_bps),
                delay: Duration(if opts.link_delay { h.delay_ns } else { 0 }),
            })
            .collect(),
        switch: scn.switch.clone(),
        marking: scn.marking.clone(),
        // The shaper's rate fraction is the switch's own default (the report says which ran).
        shaper: ShaperConfig { burst: ByteSize(burst), ..ShaperConfig::default() },
        static_macs: (0..hosts.len()).map(|i| StaticMac { mac: host_mac(i), port: i }).collect(),
        seed,
        stats_interval: Some(Duration(sample_ns)),
        realtime_priority: opts.realtime.then_some(50),
        ..EmuConfig::default()
    };
    cfg.validate()?;
    Ok(cfg)
}

/// The `[[traffic]]` flow arrivals of `scn`, drawn as the simulator draws them
/// (`workload::generate` with the hosts' access rates and `Stream::Traffic`'s seed).
pub fn arrivals(scn: &Scenario, seed: u64) -> Result<Vec<FlowArrival>, String> {
    if scn.traffic.is_empty() {
        return Ok(Vec::new());
    }
    let net = Net::build(&scn.topology)?;
    let hosts = net.host_info();
    workload::generate(&scn.traffic, &hosts, Stream::Traffic.seed(seed)).map_err(|e| format!("traffic: {e}"))
}

/// Queue-length thresholds, scaled with the rate in `rate` mode.
const QLEN_KEYS: [&str; 5] = ["k", "k_per_queue", "min_th", "max_th", "dq_thresh"];
/// Free text and identifiers, never scaled.
const TEXT_KEYS: [&str; 4] = ["name", "description", "claim", "seed"];

/// The resolved scenario at `1/factor` of its rates (module doc). The core writes every
/// time, size and rate of a resolved scenario as a string in its canonical unit, and these
/// unit sets are disjoint, so a string's kind is the parser that takes it. Values are
/// written back in base units (ns, bps, B): nothing is rounded to a display unit.
pub fn scale(doc: &Value, factor: f64, mode: ScaleMode) -> Value {
    if factor == 1.0 {
        return doc.clone();
    }
    fn walk(path: &str, key: &str, v: &Value, factor: f64, mode: ScaleMode) -> Value {
        if TEXT_KEYS.contains(&path) {
            return v.clone();
        }
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                        (k.clone(), walk(&p, k, x, factor, mode))
                    })
                    .collect(),
            ),
            Value::Array(a) => {
                Value::Array(a.iter().map(|x| walk(&format!("{path}.*"), key, x, factor, mode)).collect())
            }
            Value::String(s) if s.starts_with(|c: char| c.is_ascii_digit()) => {
                let of = |kind| parse_kind(kind, s).ok();
                let scaled = if let Some(bps) = of("rate") {
                    format!("{}bps", ((bps as f64 / factor).round_ties_even() as u64).max(1))
                } else if let (Some(ns), ScaleMode::Dilate) = (of("time"), mode) {
                    format!("{}ns", (ns as f64 * factor).round_ties_even() as u64)
                } else if let (Some(b), ScaleMode::Rate, true) =
                    (of("size"), mode, path.starts_with("marking.") && QLEN_KEYS.contains(&key))
                {
                    format!("{}B", ((b as f64 / factor).round_ties_even() as u64).max(1))
                } else {
                    return v.clone();
                };
                Value::String(scaled)
            }
            _ => v.clone(),
        }
    }
    walk("", "", doc, factor, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resolved scenario (every default filled in, as `_core.resolve_json` writes it).
    fn resolved(extra: Value) -> Value {
        let mut doc = serde_json::json!({
            "name": "plan", "duration": "1s", "seed": 5,
            "topology": {"kind": "star", "hosts": 3, "link_rate": "1Gbps", "link_delay": "10us",
                         "host_link_delay": ["20us"]},
            "switch": {"queues": 2, "buffer": "200KB", "dscp_to_queue": [1, 0]},
            "marking": {"scheme": "per_queue", "threshold": {"k": "30KB"}},
            "metrics": {"warmup": "100ms", "sample_interval": "1ms"},
            "flows": [{"src": 1, "dst": 0, "count": 2, "size": "1MB", "start": "5ms"},
                      {"src": 2, "dst": 0, "class": 1, "rate": "200Mbps", "cc": "cubic"}],
        });
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        let scn = Scenario::from_json(&doc.to_string()).unwrap();
        scn.validate().unwrap();
        serde_json::to_value(&scn).unwrap()
    }

    /// 1 Gbit/s run at 100 Mbit/s (`--rate auto`), dilated x10: times x10, rates / 10,
    /// sizes kept; units as numbers, the agents' in seconds.
    #[test]
    fn dilation_scales_times_and_rates() {
        let p = plan(&resolved(serde_json::json!({})), &PlanOptions::default()).unwrap();
        assert_eq!((p.scale.factor, p.scale.emulated_link_rate_bps), (10.0, 100_000_000));
        assert_eq!((p.duration_s, p.warmup_s), (10.0, 1.0));
        assert_eq!((p.hosts[0].delay_ns, p.hosts[1].delay_ns), (200_000, 100_000), "host 0's own delay, x10");
        assert_eq!(p.hosts[2].rate_bps, 100_000_000);
        assert_eq!(p.hosts[1].mac, "02:ec:77:00:00:01");
        let f = &p.flows;
        assert_eq!(f.len(), 3, "count expanded");
        assert_eq!((f[1].id, f[1].spec, f[1].start_s, f[1].size), (1, 0, 0.05, Some(1_000_000)));
        assert_eq!((f[2].rate_bps, f[2].cc_name.as_str(), f[2].queue), (Some(20_000_000), "cubic", 0));
        assert_eq!((f[0].cc_name.as_str(), f[0].queue), ("dctcp", 1), "transport.cc; DSCP 0 -> queue 1 by the map");
        assert_eq!(p.scenario["marking"]["threshold"]["k"], "30KB", "dilation keeps sizes");
        assert_eq!(p.scenario["topology"]["link_delay"], "100000ns");
        // 1 ms x 10 = 10 ms: at the floor, no warning.
        assert_eq!((p.sample_interval_s, p.warnings.len()), (0.01, 0));
        assert_eq!(p.switch.stats_interval, Some(Duration(10_000_000)));
        assert_eq!(p.switch.ports[0].delay, Duration(200_000));
        assert_eq!(p.switch.static_macs[2].mac, host_mac(2));
        assert_eq!(p.switch.shaper.burst, ByteSize(2_500), "100 us at 100 Mbit/s is 1,250 B: the 2,500 B floor");
        assert!(!p.stop_when_done, "no messages");
    }

    /// `--scale rate`: times kept, queue-length thresholds / factor; a sample interval under
    /// the floor is raised and says so.
    #[test]
    fn rate_mode_scales_thresholds_and_the_floor_is_stated() {
        let opts = PlanOptions { scale: ScaleMode::Rate, ..PlanOptions::default() };
        let p = plan(&resolved(serde_json::json!({})), &opts).unwrap();
        assert_eq!(p.scenario["marking"]["threshold"]["k"], "3000B");
        assert_eq!(p.scenario["topology"]["link_delay"], "10us");
        assert_eq!(p.scenario["switch"]["buffer"], "200KB", "buffers are not scaled");
        assert_eq!(p.sample_interval_s, 0.01);
        assert_eq!(
            p.warnings,
            ["metrics.sample_interval: 1000000 ns sampled every 10000000 ns (the emulation's finest)"]
        );
        let none = PlanOptions { rate: None, ..PlanOptions::default() };
        assert_eq!(plan(&resolved(serde_json::json!({})), &none).unwrap().scale.factor, 1.0);
    }

    #[test]
    fn what_the_emulator_cannot_run_is_refused_in_one_line() {
        let e = |extra: Value, opts: PlanOptions| plan(&resolved(extra), &opts).unwrap_err();
        let pfc =
            serde_json::json!({"switch": {"queues": 2, "buffer": "200KB", "pool": "1MB", "pfc": {"enabled": true}}});
        assert_eq!(e(pfc, PlanOptions::default()), "emulate does not support `switch.pfc` (PFC): the simulator does");
        let bad = PlanOptions { rate: Some("0bps".into()), ..PlanOptions::default() };
        assert_eq!(e(serde_json::json!({}), bad), "--rate must be larger than 0");
        let bad = PlanOptions { burst: Some("lots".into()), ..PlanOptions::default() };
        assert!(e(serde_json::json!({}), bad).starts_with("--burst lots: "));
    }
}
