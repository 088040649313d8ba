//! One simulation of the estimate, as data: a scenario for `ecnlab_sim` with its topology
//! file and flow trace as text ([`JobSpec`], JSON on its way to a worker, local or on Dask),
//! and what comes back ([`JobOutput`]). A job is a pure function of its spec: its seed is in
//! it, so whoever runs it gives the same output.

use ecnlab_sim::config::Topology;
use ecnlab_sim::summary::{NicSummary, QueueSummary};
use ecnlab_sim::workload::{TraceSpec, TrafficSpec};
use ecnlab_sim::{CaptureSpec, RunError, Scenario, Slicing};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// A simulation to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobSpec {
    /// Its `topology.file` and trace entry's `file` are set when it runs.
    pub scenario: Scenario,
    /// The topology file's text.
    pub topology: String,
    /// The flow trace's text (`[[traffic]]` kind `trace`), if it has generated flows.
    pub trace: Option<String>,
    /// The port whose queues the output reports, as `summary.json` names ports.
    pub port: Option<String>,
}

impl JobSpec {
    pub fn new(scenario: Scenario, topology: String, trace: Option<String>, port: Option<String>) -> JobSpec {
        JobSpec { scenario, topology, trace, port }
    }
}

/// One flow's outcome, in the order of the job's `flows.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowOut {
    pub start_ns: u64,
    pub fct_ns: Option<u64>,
    pub ideal_ns: u64,
    pub timeouts: u32,
}

/// What the reported port measured: its queues (a switch port), or the NIC's (a host's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PortOut {
    pub queues: Vec<QueueSummary>,
    pub nic: Option<NicSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobOutput {
    pub flows: Vec<FlowOut>,
    pub port: PortOut,
    pub events: u64,
    pub packet_hops: u64,
}

/// Why a job did not finish.
#[derive(Debug)]
pub enum JobError {
    /// `stop` asked it to.
    Stopped,
    /// The job's files could not be written, or the simulation failed.
    Failed(String),
}

static JOBS: AtomicU64 = AtomicU64::new(0);

/// A directory of this process's, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let n = JOBS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ecnlab-estimate-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir); // a dead process's with the same pid
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
    fn write(&self, name: &str, text: &str) -> Result<String, String> {
        let p = self.0.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        Ok(p.to_string_lossy().into_owned())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run a job; `stop()` is asked between slices of the simulation (about 20 times a second).
pub fn run_job(spec: &JobSpec, mut stop: impl FnMut() -> bool) -> Result<JobOutput, JobError> {
    let fail = JobError::Failed;
    let scratch = Scratch::new().map_err(fail)?;
    let mut scn = spec.scenario.clone();
    scn.topology = Topology::File { file: scratch.write("topology.toml", &spec.topology).map_err(fail)? };
    if let Some(trace) = &spec.trace {
        let file = scratch.write("trace.csv", trace).map_err(fail)?;
        scn.traffic = vec![TrafficSpec::Trace(TraceSpec { file })];
    }
    scn.validate().map_err(|e| fail(format!("{}: {e}", scn.name)))?;
    let out = ecnlab_sim::run_sliced(&scn, scn.seed, &CaptureSpec::default(), Slicing::default(), |_| !stop());
    let (out, _) = match out {
        Ok(Some(o)) => o,
        Ok(None) => return Err(JobError::Stopped),
        Err(RunError::Scenario(m)) | Err(RunError::Internal(m)) => return Err(fail(format!("{}: {m}", scn.name))),
    };
    let ns = |us: f64| (us * 1e3).round() as u64;
    let flows = out
        .flows
        .iter()
        .map(|f| FlowOut {
            start_ns: (f.start_s * 1e9).round() as u64,
            fct_ns: f.fct_us.map(ns),
            ideal_ns: f.ideal_fct_us.map_or(0, ns),
            timeouts: f.timeouts.min(u32::MAX as u64) as u32,
        })
        .collect();
    let s = &out.summary;
    let port = match &spec.port {
        Some(p) => PortOut {
            queues: s.queues.iter().filter(|q| &q.port == p).cloned().collect(),
            nic: s.nics.iter().flatten().find(|n| &n.port == p).cloned(),
        },
        None => PortOut::default(),
    };
    let output = JobOutput { flows, port, events: s.events, packet_hops: s.packet_hops };
    drop(out);
    release_freed_memory();
    Ok(output)
}

/// Give the memory a finished job freed back to the system. glibc keeps freed blocks of its
/// arenas for reuse, so a process that ran a 300 MB link simulation on each of its threads
/// holds that much per thread long after (at 6,144 hosts the estimate's peak fell from 2.68 to
/// 2.01 GiB with this, benches/README.md); the jobs' own results are unchanged.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}
