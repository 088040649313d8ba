//! `ecnlab._core`: the Python extension. A thin layer: scenarios arrive as JSON text (the
//! Python side reads TOML and applies `--set` overrides), results leave as JSON text.
//! Scenario errors raise `ValueError` with one line naming the field; internal errors
//! (broken invariants) raise `RuntimeError`.

use ecnlab_core::marking::SchemeName;
use ecnlab_core::sched::SchedulerKind;
use ecnlab_sim::{RunError, Scenario};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn parse(scenario_json: &str) -> PyResult<Scenario> {
    let scn = Scenario::from_json(scenario_json).map_err(PyValueError::new_err)?;
    scn.validate().map_err(PyValueError::new_err)?;
    Ok(scn)
}

/// Validate a scenario (JSON text); raises ValueError naming the bad field.
#[pyfunction]
fn validate_json(scenario_json: &str) -> PyResult<()> {
    let scn = parse(scenario_json)?;
    ecnlab_sim::Simulator::new(&scn, scn.seed).map_err(PyValueError::new_err)?;
    Ok(())
}

/// Run a scenario (JSON text) with an optional seed; returns the run output as JSON text:
/// `{"summary": {...}, "flows": [...], "probes": [...], "timeseries": {...}}`.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn run_json(py: Python<'_>, scenario_json: &str, seed: Option<u64>) -> PyResult<String> {
    let scn = parse(scenario_json)?;
    let seed = seed.unwrap_or(scn.seed);
    let out = py.allow_threads(|| ecnlab_sim::run(&scn, seed)).map_err(|e| match e {
        RunError::Scenario(m) => PyValueError::new_err(m),
        RunError::Internal(m) => PyRuntimeError::new_err(m),
    })?;
    serde_json::to_string(&out).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// [`run_json`] with packet captures of the switch ports `ports` (names as in
/// `summary.json`, or `"all"`), at most `limit_bytes` together: returns the run output,
/// the captures as `(port, pcap bytes, packets)` and whether the limit cut them.
#[pyfunction]
fn run_json_pcap<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    ports: Vec<String>,
    limit_bytes: u64,
) -> PyResult<(String, Vec<(String, Bound<'py, PyBytes>, u64)>, bool)> {
    let scn = parse(scenario_json)?;
    let seed = seed.unwrap_or(scn.seed);
    let (out, caps) =
        py.allow_threads(|| ecnlab_sim::run_captured(&scn, seed, &ports, limit_bytes)).map_err(|e| match e {
            RunError::Scenario(m) => PyValueError::new_err(m),
            RunError::Internal(m) => PyRuntimeError::new_err(m),
        })?;
    let text = serde_json::to_string(&out).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let (caps, truncated) = caps.unwrap_or_default();
    let caps = caps.into_iter().map(|c| (c.name, PyBytes::new(py, &c.bytes), c.packets)).collect();
    Ok((text, caps, truncated))
}

/// Ideal FCT (us) of each `(src, dst, size)` flow in a scenario's topology, as the run's
/// `flows.csv` defines it (`ecnlab_sim::metrics::ideal_fct_ns`): for flows measured outside
/// the simulator, e.g. by the emulator.
#[pyfunction]
fn ideal_fct_us(scenario_json: &str, flows: Vec<(usize, usize, u64)>) -> PyResult<Vec<f64>> {
    let scn = parse(scenario_json)?;
    let net = ecnlab_sim::topology::Net::build(&scn.topology);
    flows
        .iter()
        .map(|&(src, dst, size)| {
            if src >= net.n_hosts || dst >= net.n_hosts || src == dst {
                return Err(PyValueError::new_err(format!(
                    "flow {src} -> {dst}: hosts must differ and be below {}",
                    net.n_hosts
                )));
            }
            Ok(ecnlab_sim::metrics::ideal_fct_ns(&net, src, dst, size, scn.transport.mss) as f64 / 1e3)
        })
        .collect()
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

/// The full default configuration of every table (for `ecnlab list --keys`).
#[pyfunction]
fn defaults_json() -> String {
    serde_json::json!({
        "switch": ecnlab_core::port::PortConfig::default(),
        "marking": ecnlab_core::MarkingConfig::default(),
        "transport": transport_defaults(),
        "host": ecnlab_sim::config::HostConfig::default(),
        "metrics": ecnlab_sim::config::MetricsConfig::default(),
    })
    .to_string()
}

/// A value with its unit as the scenario files write it (`"30us"`, `"96KB"`, `"65p"` is not
/// one: packets need the scenario's MTU), in ecnlab's base unit: `kind` = `"duration"`
/// (ns), `"bytes"` or `"rate"` (bit/s). The one parser of units, for the Python side
/// (`ecnlab advise` reads RTTs and link rates); a bad value raises `ValueError`.
#[pyfunction]
fn parse_unit(kind: &str, text: &str) -> PyResult<u64> {
    use ecnlab_core::units::{ByteSize, Duration, Rate};
    let r = match kind {
        "duration" => text.parse::<Duration>().map(|v| v.0),
        "bytes" => text.parse::<ByteSize>().map(|v| v.0),
        "rate" => text.parse::<Rate>().map(|v| v.0),
        _ => Err(format!("unknown unit kind `{kind}` (duration, bytes, rate)")),
    };
    r.map_err(PyValueError::new_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(scheme_names, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add_function(wrap_pyfunction!(defaults_json, m)?)?;
    m.add_function(wrap_pyfunction!(ideal_fct_us, m)?)?;
    m.add_function(wrap_pyfunction!(parse_unit, m)?)?;
    m.add_function(wrap_pyfunction!(run_json_pcap, m)?)?;
    Ok(())
}
