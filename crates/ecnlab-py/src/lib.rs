//! `ecnlab._core`: the Python extension. A thin layer: scenarios arrive as JSON text (the
//! Python side reads TOML and applies `--set` overrides), results leave as JSON text.
//! Scenario errors raise `ValueError` with one line naming the field; internal errors
//! (broken invariants) raise `RuntimeError`.

use ecnlab_core::marking::SchemeName;
use ecnlab_core::sched::SchedulerKind;
use ecnlab_sim::de::clip_message;
use ecnlab_sim::{CaptureSpec, RunError, Scenario, Slicing};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod estimate;

/// A scenario error for Python: one line, bounded whatever the input it quotes.
pub(crate) fn value_error(msg: String) -> PyErr {
    PyValueError::new_err(clip_message(&msg))
}

fn parse(scenario_json: &str) -> PyResult<Scenario> {
    let scn = Scenario::from_json(scenario_json).map_err(value_error)?;
    scn.validate().map_err(value_error)?;
    if let Some(available) = available_memory() {
        scn.check_memory(available).map_err(value_error)?;
    }
    Ok(scn)
}

/// Memory this process may still take: Linux's `MemAvailable` (RAM that can be had without
/// swapping), or what the cgroup limit leaves if less; `ECNLAB_MEMORY_LIMIT` (bytes) overrides both.
/// None where neither is known: no check.
fn available_memory() -> Option<u64> {
    if let Some(v) = std::env::var("ECNLAB_MEMORY_LIMIT").ok().and_then(|v| v.trim().parse().ok()) {
        return Some(v);
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?.trim().trim_end_matches("kB").trim();
    let avail = kb.parse::<u64>().ok()?.saturating_mul(1024);
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok()?.trim().parse::<u64>().ok();
    let cgroup = read("memory.max").map(|max| max.saturating_sub(read("memory.current").unwrap_or(0)));
    Some(cgroup.map_or(avail, |c| c.min(avail)))
}

/// `ecnlab_sim::de::clip_message`: for messages Python composes around user input.
#[pyfunction]
fn clip(msg: &str) -> String {
    clip_message(msg)
}

/// Validate a scenario (JSON text); raises ValueError naming the bad field.
#[pyfunction]
fn validate_json(scenario_json: &str) -> PyResult<()> {
    let scn = parse(scenario_json)?;
    ecnlab_sim::Simulator::new(&scn, scn.seed).map_err(value_error)?;
    Ok(())
}

/// Run a scenario (JSON text) with an optional seed; returns `(output, captures,
/// truncated)`: the run output as JSON text (`{"summary": {...}, "flows": [...],
/// "probes": [...], "timeseries": {...}}`), the pcap captures of the switch ports
/// `pcap_ports` (names as in `summary.json`, or `"all"`; at most `pcap_limit` bytes
/// together) as `(port, pcap bytes, packets)`, and whether the limit cut them.
///
/// The simulation runs without the GIL, in slices of about 50 ms of wall-clock time
/// (`ecnlab_sim::run_sliced`; slicing never changes a result). Between slices it takes the
/// GIL to run Python's signal handlers, so Ctrl-C raises `KeyboardInterrupt` within a
/// fraction of a second, and calls `progress(now_ns, end_ns, flows_done, flows_started)`
/// if given (an exception it raises stops the run too).
/// What `run_json` returns: the results' JSON, each capture as `(port, pcap bytes, packets)`,
/// and whether the size limit cut the captures.
type RunOutput<'py> = (String, Vec<(String, Bound<'py, PyBytes>, u64)>, bool);

#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, progress=None, pcap_ports=Vec::new(), pcap_limit=0))]
fn run_json<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    progress: Option<PyObject>,
    pcap_ports: Vec<String>,
    pcap_limit: u64,
) -> PyResult<RunOutput<'py>> {
    let scn = parse(scenario_json)?;
    let seed = seed.unwrap_or(scn.seed);
    let capture = CaptureSpec { ports: pcap_ports, limit_bytes: pcap_limit };
    let mut stopped_by: Option<PyErr> = None;
    let out = py.allow_threads(|| {
        ecnlab_sim::run_sliced(&scn, seed, &capture, Slicing::default(), |p| {
            Python::with_gil(|py| {
                let r = py.check_signals().and_then(|()| match &progress {
                    Some(f) => f.call1(py, (p.now_ns, p.end_ns, p.flows_done, p.flows_started)).map(drop),
                    None => Ok(()),
                });
                r.map_err(|e| stopped_by = Some(e)).is_ok()
            })
        })
    });
    let (out, caps) = match out {
        Ok(Some(out)) => out,
        Ok(None) => return Err(stopped_by.expect("a run stops only on a Python exception")),
        Err(RunError::Scenario(m)) => return Err(value_error(m)),
        Err(RunError::Internal(m)) => return Err(PyRuntimeError::new_err(m)),
    };
    let text = serde_json::to_string(&out).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let (caps, truncated) = caps.unwrap_or_default();
    let caps = caps.into_iter().map(|c| (c.name, PyBytes::new(py, &c.bytes), c.packets)).collect();
    Ok((text, caps, truncated))
}

/// The scenario (JSON text) as the core reads it (JSON text): every default filled in,
/// `transport` resolved for its profile (only the keys that profile uses), units in their
/// canonical form (`"200ms"`, `"97500B"` for `"65p"`, `"25Gbps"` for `"25G"`). It reads back
/// to the same scenario. For front ends that act on a scenario outside the simulator (the
/// emulator's hosts and switch), so that they take their defaults from here and nowhere else.
#[pyfunction]
fn resolve_json(scenario_json: &str) -> PyResult<String> {
    let scn = Scenario::from_json(scenario_json).map_err(value_error)?;
    scn.validate().map_err(value_error)?;
    serde_json::to_string(&scn).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Parse a value of one unit kind, `"time"` (-> ns), `"size"` (-> bytes) or `"rate"`
/// (-> bit/s), with the grammar of scenario files (`ecnlab_core::units`): for command-line
/// options and sweep files, so that every entry point reads units the same way. Raises
/// ValueError with one line.
#[pyfunction]
fn parse_unit(kind: &str, text: &str) -> PyResult<u64> {
    ecnlab_core::units::parse_kind(kind, text).map_err(value_error)
}

/// The propagation round trip (us) of the scenario's longest host-to-host path, on the
/// routes the simulator takes (the first of equal paths, there and back), with its two
/// hosts: the papers' rules take it as the RTT floor. Every pair is measured up to 1,024
/// hosts; above, every destination from 256 evenly spaced sources (a fabric's pods alike).
/// Also the slowest host access link's rate (bit/s), a receiver's last hop.
#[pyfunction]
fn longest_rtt_us(scenario_json: &str) -> PyResult<(f64, String, String, u64)> {
    let scn = parse(scenario_json)?;
    let net = ecnlab_sim::topology::Net::build(&scn.topology).map_err(value_error)?;
    let routes = ecnlab_sim::routing::Routes::shortest_paths(&net);
    let n = net.n_hosts;
    let delay = |path: Vec<u32>| path.iter().map(|&li| net.links[li as usize].delay_ns).sum::<u64>();
    let step = if n <= 1024 { 1 } else { n.div_ceil(256) };
    let mut best = (0u64, 0usize, 0usize);
    for src in (0..n).step_by(step).chain([n - 1]) {
        for dst in (0..n).filter(|&d| d != src) {
            let rtt = delay(routes.first_path(&net, src, dst)) + delay(routes.first_path(&net, dst, src));
            if rtt > best.0 {
                best = (rtt, src, dst);
            }
        }
    }
    let access = net.host_info().access_rate_bps.into_iter().min().unwrap_or(0);
    Ok((best.0 as f64 / 1e3, net.names[best.1].clone(), net.names[best.2].clone(), access))
}

/// Ideal FCT (us) of each `(src, dst, size)` flow in a scenario's topology, as the run's
/// `flows.csv` defines it (`ecnlab_sim::metrics::ideal_fct_ns`): for flows measured outside
/// the simulator, e.g. by the emulator.
#[pyfunction]
fn ideal_fct_us(scenario_json: &str, flows: Vec<(usize, usize, u64)>) -> PyResult<Vec<f64>> {
    let scn = parse(scenario_json)?;
    let net = ecnlab_sim::topology::Net::build(&scn.topology).map_err(value_error)?;
    let routes = ecnlab_sim::routing::Routes::shortest_paths(&net);
    flows
        .iter()
        .map(|&(src, dst, size)| {
            if src >= net.n_hosts || dst >= net.n_hosts || src == dst {
                return Err(PyValueError::new_err(format!(
                    "flow {src} -> {dst}: hosts must differ and be below {}",
                    net.n_hosts
                )));
            }
            Ok(ecnlab_sim::metrics::ideal_fct_ns(&net, &routes, src, dst, size, scn.transport.mss) as f64 / 1e3)
        })
        .collect()
}

/// `summary.json` of what an emulation measured (JSON text of
/// `ecnlab_sim::summary::Measurements`: flows' outcomes, the switch's per-queue window
/// counters, the queues it lists, probes' RTT samples), built by the code that builds the
/// simulator's (`ecnlab_sim::summary::Summary::build`); JSON text, without the emulator's own
/// `emulation` block (the caller adds it).
/// Raises ValueError on measurements that do not read (a key missing, unknown or mistyped).
#[pyfunction]
fn summary_from_measurements(measurements_json: &str) -> PyResult<String> {
    let m: ecnlab_sim::summary::Measurements =
        serde_json::from_str(measurements_json).map_err(|e| value_error(format!("measurements: {e}")))?;
    serde_json::to_string(&ecnlab_sim::summary::Summary::build(m)).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Whether `summary.json` text reads as the summary both engines write
/// (`ecnlab_sim::summary::Summary`); else ValueError, `field.path: what`. `ecnlab report`
/// reads a run's summary through it (`ecnlab.inputs.read_summary`): the schema is the type,
/// written once.
#[pyfunction]
fn check_summary(summary_json: &str) -> PyResult<()> {
    let de = &mut serde_json::Deserializer::from_str(summary_json);
    serde_path_to_error::deserialize::<_, ecnlab_sim::summary::Summary>(de).map(|_| ()).map_err(|e| {
        let at = ecnlab_sim::de::path_string(e.path());
        value_error(if at.is_empty() { e.inner().to_string() } else { format!("{at}: {}", e.inner()) })
    })
}

/// The emulation plan of a resolved scenario (JSON text, `resolve_json`'s) under
/// `ecnlab emulate`'s options (JSON text of `ecnlab_emu::plan::PlanOptions`): every unit
/// parsed, the scenario scaled, the switch's configuration, the flows, messages and probes
/// (`ecnlab_emu::plan`). JSON text. Raises ValueError with one line for what the emulator
/// cannot run.
#[pyfunction]
fn emulation_plan(resolved_json: &str, options_json: &str) -> PyResult<String> {
    let opts: ecnlab_emu::plan::PlanOptions =
        serde_json::from_str(options_json).map_err(|e| value_error(format!("emulate options: {e}")))?;
    let doc: serde_json::Value = serde_json::from_str(resolved_json).map_err(|e| value_error(e.to_string()))?;
    let plan = ecnlab_emu::plan::plan(&doc, &opts).map_err(value_error)?;
    serde_json::to_string(&plan).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The FCT size classes of `summary.json` (`ecnlab_sim::summary::FCT_CLASSES`), in report
/// order: `(name, above, up_to)`, flows of `above < size <= up_to` bytes (None: no bound).
#[pyfunction]
fn fct_classes() -> Vec<(&'static str, Option<u64>, Option<u64>)> {
    ecnlab_sim::summary::FCT_CLASSES.iter().map(|c| (c.name, c.above, c.up_to)).collect()
}

/// Scheme names accepted by `marking.scheme`.
#[pyfunction]
fn scheme_names() -> Vec<String> {
    SchemeName::ALL.iter().map(|s| serde_json::to_value(s).unwrap().as_str().unwrap().to_string()).collect()
}

/// Scheduler names accepted by `switch.scheduler.kind`.
#[pyfunction]
fn scheduler_names() -> Vec<String> {
    use SchedulerKind::*;
    [Sp, Wrr, Dwrr, Wfq, SpWfq, SpDwrr]
        .iter()
        .map(|s| serde_json::to_value(s).unwrap().as_str().unwrap().to_string())
        .collect()
}

/// Every `[transport]` key: the default (`linux`) profile's, plus the keys only `textbook`
/// reads, at their textbook defaults.
fn transport_defaults() -> serde_json::Value {
    use ecnlab_sim::tcp::TcpConfig;
    let mut v = serde_json::to_value(TcpConfig::default()).unwrap_or_default();
    if let (Some(m), Ok(serde_json::Value::Object(tb))) =
        (v.as_object_mut(), serde_json::to_value(TcpConfig::textbook()))
    {
        for (k, x) in tb {
            m.entry(k).or_insert(x);
        }
    }
    v
}

/// `[host]`'s defaults as the default profile (`linux`) resolves them.
fn linux_host_defaults() -> ecnlab_sim::config::HostConfig {
    let mut h = ecnlab_sim::config::HostConfig::default();
    h.resolve(ecnlab_sim::tcp::Profile::Linux);
    h
}

/// The full default configuration of every table (for `ecnlab list --keys`).
#[pyfunction]
fn defaults_json() -> String {
    serde_json::json!({
        "switch": ecnlab_core::port::PortConfig::default(),
        "marking": ecnlab_core::MarkingConfig::default(),
        "transport": transport_defaults(),
        "host": linux_host_defaults(),
        "metrics": ecnlab_sim::config::MetricsConfig::default(),
    })
    .to_string()
}

/// The JSON Schema (draft 07) of a scenario file, as JSON text (`ecnlab schema`; `ecnlab
/// list --keys` is read from it): `ecnlab_sim::schema`.
#[pyfunction]
fn schema_json() -> String {
    ecnlab_sim::schema::scenario_schema().to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_names, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add_function(wrap_pyfunction!(defaults_json, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(longest_rtt_us, m)?)?;
    m.add_function(wrap_pyfunction!(ideal_fct_us, m)?)?;
    m.add_function(wrap_pyfunction!(parse_unit, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_json, m)?)?;
    m.add_function(wrap_pyfunction!(clip, m)?)?;
    m.add_function(wrap_pyfunction!(summary_from_measurements, m)?)?;
    m.add_function(wrap_pyfunction!(check_summary, m)?)?;
    m.add_function(wrap_pyfunction!(fct_classes, m)?)?;
    m.add_function(wrap_pyfunction!(emulation_plan, m)?)?;
    m.add_function(wrap_pyfunction!(estimate::estimate_plan, m)?)?;
    m.add_function(wrap_pyfunction!(estimate::estimate_job, m)?)?;
    m.add_function(wrap_pyfunction!(estimate::exact_memory_refusal, m)?)?;
    m.add_class::<estimate::EstimatePlan>()?;
    m.add_class::<estimate::StopFlag>()?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    // What the core was built from (build.rs): the key of every stored sweep run.
    m.add("ENGINE", env!("ECNLAB_ENGINE"))?;
    m.add("ESTIMATE_BUILD", ecnlab_estimate::BUILD)?;
    Ok(())
}
