//! `ecnlab._core`'s side of `ecnlab estimate` (`ecnlab_estimate`): a plan held for Python
//! (decomposed and clustered), its jobs handed out and taken back as JSON text, and the
//! jobs themselves run without the GIL, so that Python's threads (or Dask's workers) run
//! them in parallel. `python/ecnlab/estimate` is the orchestration.

use ecnlab_estimate::job::{run_job, JobError, JobOutput, JobSpec};
use ecnlab_estimate::{Options, Plan};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

fn internal(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// A flag the driver raises to stop the jobs under way (Ctrl-C): they end within a slice.
#[pyclass(module = "ecnlab._core")]
#[derive(Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

#[pymethods]
impl StopFlag {
    #[new]
    fn new() -> Self {
        Self::default()
    }
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// An estimate under way (`ecnlab_estimate::Plan`); None once finished (`finish` takes the
/// plan, to free what only the simulations needed).
#[pyclass(module = "ecnlab._core")]
pub struct EstimatePlan(Mutex<Option<Plan>>);

impl EstimatePlan {
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Option<Plan>>> {
        self.0.lock().map_err(|_| internal("the estimate's plan was poisoned by a panic"))
    }
    fn with<T>(&self, f: impl FnOnce(&mut Plan) -> T) -> PyResult<T> {
        let mut p = self.lock()?;
        Ok(f(p.as_mut().ok_or_else(|| internal("the estimate is finished"))?))
    }
}

#[pymethods]
impl EstimatePlan {
    fn n_jobs(&self) -> PyResult<usize> {
        self.with(|p| p.n_jobs())
    }

    /// Job `i` as JSON text (`ecnlab_estimate::job::JobSpec`).
    fn job(&self, py: Python<'_>, i: usize) -> PyResult<String> {
        let spec = py.allow_threads(|| self.with(|p| (i < p.n_jobs()).then(|| p.job(i))))?;
        let spec = spec.ok_or_else(|| PyValueError::new_err(format!("no job {i}")))?;
        serde_json::to_string(&spec).map_err(internal)
    }

    /// "link" or "alone", and what the job simulates (a port name, or a chain's hops).
    fn describe(&self, i: usize) -> PyResult<(String, String)> {
        self.with(|p| match p.kind(i) {
            ecnlab_estimate::JobKind::Link(k) => {
                let l = p.clusters()[k as usize].representative as usize;
                ("link".to_string(), ecnlab_sim::metrics::port_name(&p.fabric().net, l))
            }
            ecnlab_estimate::JobKind::Alone(c) => ("alone".to_string(), format!("path {c}")),
        })
    }

    /// Job `i`'s output (JSON text of `ecnlab_estimate::job::JobOutput`).
    fn set_output(&self, py: Python<'_>, i: usize, output_json: &str) -> PyResult<()> {
        let out: JobOutput = serde_json::from_str(output_json).map_err(internal)?;
        py.allow_threads(|| self.with(|p| p.set_output(i, out)))?.map_err(internal)
    }

    /// What the plan holds (JSON): flows, links, clusters, jobs, stage times.
    fn info(&self) -> PyResult<String> {
        self.with(|p| {
            serde_json::json!({
                "flows": p.flows().len(),
                "links": p.links().len(),
                "clusters": p.clusters().len(),
                "alone": p.n_alone(),
                "jobs": p.n_jobs(),
                "segment_hops": p.segment_hops,
                "stages_s": p.stages.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
            })
            .to_string()
        })
    }

    /// Combine the outputs, write `flows.csv` and `links.csv` into `out_dir`, and return
    /// `summary.json`'s text; `stages_json`: `[[stage, seconds], ...]` to report,
    /// `workers_json`: where the jobs ran.
    fn finish(&self, py: Python<'_>, out_dir: &str, stages_json: &str, workers_json: &str) -> PyResult<String> {
        let stages: Vec<(String, f64)> = serde_json::from_str(stages_json).map_err(internal)?;
        let workers: serde_json::Value = serde_json::from_str(workers_json).map_err(internal)?;
        let plan = self.lock()?.take().ok_or_else(|| internal("the estimate is finished"))?;
        py.allow_threads(|| -> Result<String, String> {
            let t0 = std::time::Instant::now();
            let e = plan.finish()?;
            let combine_s = t0.elapsed().as_secs_f64();
            let dir = std::path::Path::new(out_dir);
            let io = |what: &str, err: std::io::Error| format!("{}: {err}", dir.join(what).display());
            let t1 = std::time::Instant::now();
            let f = std::fs::File::create(dir.join("flows.csv")).map_err(|err| io("flows.csv", err))?;
            ecnlab_estimate::output::write_flows(&e, f).map_err(|err| io("flows.csv", err))?;
            let f = std::fs::File::create(dir.join("links.csv")).map_err(|err| io("links.csv", err))?;
            ecnlab_estimate::output::write_links(&e, f).map_err(|err| io("links.csv", err))?;
            let mut all: Vec<(String, f64)> = e.stages.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            all.extend(stages.iter().cloned());
            all.push(("combine".into(), combine_s));
            all.push(("write".into(), t1.elapsed().as_secs_f64()));
            let t2 = std::time::Instant::now();
            let mut v = ecnlab_estimate::output::summary(&e, &all, &workers)?;
            // The summary's own making (every flow visited per figure) is a stage too.
            if let Some(st) = v.pointer_mut("/estimate/stages_s").and_then(|s| s.as_object_mut()) {
                st.insert("summary".into(), serde_json::json!(t2.elapsed().as_secs_f64()));
            }
            serde_json::to_string(&v).map_err(|err| err.to_string())
        })
        .map_err(PyRuntimeError::new_err)
    }
}

/// Decompose and cluster a scenario (JSON text) for an estimate; ValueError: the scenario is
/// wrong, or not one the estimate takes. `window_cap`: `"nics"` (the unmarked NICs' link
/// simulations capped, the default) or `"off"` (`ecnlab_estimate::linksim::WindowCap`).
/// `threads`: of the passes over every flow, here and in `finish` (default: every core;
/// the result is the same whatever their number).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, threshold=0.1, max_hosts=1000, window_cap="nics", threads=None))]
pub fn estimate_plan(
    py: Python<'_>,
    scenario_json: &str,
    seed: Option<u64>,
    threshold: f64,
    max_hosts: usize,
    window_cap: &str,
    threads: Option<usize>,
) -> PyResult<EstimatePlan> {
    use ecnlab_estimate::linksim::WindowCap;
    let window_cap = match window_cap {
        "nics" => WindowCap::UnmarkedNics,
        "off" => WindowCap::Off,
        other => return Err(crate::value_error(format!("window_cap: '{other}' is not nics or off"))),
    };
    let scn = ecnlab_sim::Scenario::from_json(scenario_json).map_err(crate::value_error)?;
    scn.validate().map_err(crate::value_error)?;
    let seed = seed.unwrap_or(scn.seed);
    let split = match threads.and_then(std::num::NonZeroUsize::new) {
        Some(t) => ecnlab_estimate::passes::Split::with_threads(t),
        None => ecnlab_estimate::passes::Split::default(),
    };
    let opts = Options { threshold, max_hosts: max_hosts.max(1), window_cap, split };
    let plan = py.allow_threads(|| Plan::new(scn, seed, opts)).map_err(crate::value_error)?;
    Ok(EstimatePlan(Mutex::new(Some(plan))))
}

/// Why the exact run of a scenario (JSON text) would not fit in memory: the core's memory
/// estimate against what is available (`ecnlab run`'s own check), or None: it fits.
#[pyfunction]
pub fn exact_memory_refusal(scenario_json: &str) -> PyResult<Option<String>> {
    let scn = ecnlab_sim::Scenario::from_json(scenario_json).map_err(crate::value_error)?;
    scn.validate().map_err(crate::value_error)?;
    Ok(crate::available_memory().and_then(|a| scn.check_memory(a).err()))
}

/// Run one job (JSON text of `JobSpec`) without the GIL; its output as JSON text. `stop`:
/// raised, the job ends within a slice with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (job_json, stop=None))]
pub fn estimate_job(py: Python<'_>, job_json: &str, stop: Option<StopFlag>) -> PyResult<String> {
    let spec: JobSpec = serde_json::from_str(job_json).map_err(internal)?;
    let flag = stop.map(|s| s.0);
    let out = py.allow_threads(|| run_job(&spec, || flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))));
    match out {
        Ok(o) => serde_json::to_string(&o).map_err(internal),
        Err(JobError::Stopped) => Err(PyKeyboardInterrupt::new_err("stopped")),
        Err(JobError::Failed(m)) => Err(internal(m)),
    }
}
