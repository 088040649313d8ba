//! # ecnlab-sim
//!
//! A deterministic discrete-event packet simulator built on `ecnlab-core`: the scenario
//! ([`config`]) becomes a network of hosts and switches ([`topology`], routed by
//! [`routing`]) whose egress ports are `ecnlab_core::Port`s, driven by one event loop
//! ([`sim`]); hosts run sans-IO TCP
//! ([`tcp`]); [`metrics`] turns the run into per-queue, per-flow and probe results, and
//! [`summary`] into `summary.json`.
//!
//! The same scenario and seed give bit-identical results: integer nanosecond time, FIFO
//! tie-breaking of equal-time events, and one random stream per component derived from the
//! master seed.

pub mod config;
pub mod dcqcn;
pub mod de;
pub mod event;
pub mod flow;
pub mod hosts;
pub mod metrics;
pub mod packet;
mod paths;
pub mod pcap;
pub mod recorder;
pub mod routing;
pub mod schema;
pub mod sim;
pub mod summary;
pub mod tcp;
pub mod topology;
pub mod traffic;
pub mod transport;
pub mod wire;
pub mod workload;

pub use config::Scenario;
pub use sim::Simulator;

use serde::Serialize;

/// Everything a run produces.
#[derive(Debug, Serialize)]
pub struct RunOutput {
    pub summary: summary::Summary,
    pub flows: Vec<metrics::FlowRecord>,
    pub probes: Vec<metrics::ProbeRecord>,
    pub timeseries: metrics::TimeSeries,
}

/// Why a run failed: the scenario is wrong (the user's to fix), or ecnlab broke an
/// invariant (a bug, reported with the simulated time).
#[derive(Debug)]
pub enum RunError {
    Scenario(String),
    Internal(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            RunError::Scenario(m) | RunError::Internal(m) => f.write_str(m),
        }
    }
}

/// Which switch ports a run captures ([`pcap`]: names as `summary.json` gives them, or
/// `"all"`), and the bound on all captures together, in bytes.
#[derive(Clone, Debug, Default)]
pub struct CaptureSpec {
    pub ports: Vec<String>,
    pub limit_bytes: u64,
}

/// A run's captures, and whether the limit cut them.
pub type Captures = (Vec<pcap::PortCapture>, bool);

/// Build and run a scenario with the given master seed.
pub fn run(scn: &Scenario, seed: u64) -> Result<RunOutput, RunError> {
    run_captured(scn, seed, &CaptureSpec::default()).map(|(out, _)| out)
}

/// [`run`], capturing the switch ports of `capture`; the captures observe and never change
/// the run.
pub fn run_captured(
    scn: &Scenario,
    seed: u64,
    capture: &CaptureSpec,
) -> Result<(RunOutput, Option<Captures>), RunError> {
    let mut sim = build(scn, seed, capture)?;
    sim.run().map_err(RunError::Internal)?;
    Ok(output(scn, seed, sim))
}

/// Where a run stands, as [`run_sliced`] reports it between slices.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time reached (every event up to it has run).
    pub now_ns: ecnlab_core::units::Nanos,
    /// The run's end as known now (it moves earlier when every flow is done).
    pub end_ns: ecnlab_core::units::Nanos,
    /// Flows (messages) completed, and started, so far.
    pub flows_done: usize,
    pub flows_started: usize,
}

/// How [`run_sliced`] cuts the run: slices of simulated time, each grown or shrunk so that
/// it takes about `target` of wall-clock time (the caller's reaction time to Ctrl-C).
#[derive(Clone, Copy, Debug)]
pub struct Slicing {
    pub first_step_ns: ecnlab_core::units::Nanos,
    pub target: std::time::Duration,
}

impl Default for Slicing {
    fn default() -> Self {
        Slicing { first_step_ns: 10_000, target: std::time::Duration::from_millis(50) }
    }
}

/// [`run_captured`] in slices of simulated time ([`Simulator::run_until`]), calling
/// `between` after each one: it may report progress or stop the run by returning `false`
/// (then `Ok(None)`). The slices only decide when `between` is called, never the order of
/// events: the result is [`run`]'s, byte for byte (a test checks it).
pub fn run_sliced(
    scn: &Scenario,
    seed: u64,
    capture: &CaptureSpec,
    slicing: Slicing,
    mut between: impl FnMut(&Progress) -> bool,
) -> Result<Option<(RunOutput, Option<Captures>)>, RunError> {
    let mut sim = build(scn, seed, capture)?;
    let mut step = slicing.first_step_ns.max(1);
    let mut until: ecnlab_core::units::Nanos = 0;
    while until < sim.end() {
        until = until.saturating_add(step).min(sim.end());
        let t0 = std::time::Instant::now();
        sim.run_until(until).map_err(RunError::Internal)?;
        let took = t0.elapsed();
        if took < slicing.target / 2 {
            step = step.saturating_mul(2);
        } else if took > slicing.target * 2 {
            step = (step / 2).max(1);
        }
        let (flows_done, flows_started) = sim.flow_progress();
        let p = Progress { now_ns: until, end_ns: sim.end(), flows_done, flows_started };
        if !between(&p) {
            return Ok(None);
        }
    }
    sim.run().map_err(RunError::Internal)?;
    Ok(Some(output(scn, seed, sim)))
}

fn build(scn: &Scenario, seed: u64, capture: &CaptureSpec) -> Result<Simulator, RunError> {
    let mut sim = Simulator::new(scn, seed).map_err(RunError::Scenario)?;
    if !capture.ports.is_empty() {
        sim.capture_ports(&capture.ports, capture.limit_bytes).map_err(RunError::Scenario)?;
    }
    Ok(sim)
}

/// The results of a finished run.
fn output(scn: &Scenario, seed: u64, mut sim: Simulator) -> (RunOutput, Option<Captures>) {
    let captures = sim.wire.capture.take().map(|c| {
        let t = c.truncated;
        (c.into_ports(), t)
    });
    let run = sim.view();
    let flows = metrics::flow_records(&run);
    let probes = metrics::probe_records(&run);
    let summary = metrics::summary(&run, &scn.name, seed, &flows, &probes);
    drop(run);
    (RunOutput { summary, flows, probes, timeseries: std::mem::take(&mut sim.recorder.timeseries) }, captures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "name = \"t\"\nduration = \"20ms\"\n[topology]\nkind = \"star\"\nhosts = 4\n\
             link_rate = \"10Gbps\"\nlink_delay = \"5us\"\n\
             [[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = \"60%\"\nflows = 40\n{extra}"
        );
        let s = Scenario::from_toml(&text).unwrap();
        s.validate().unwrap();
        s
    }

    fn bytes(o: &RunOutput) -> String {
        serde_json::to_string(o).unwrap()
    }

    /// Slicing never changes a result: 1-us slices (thousands of them) give `run`'s bytes.
    #[test]
    fn slicing_does_not_change_results() {
        for extra in ["", "[metrics]\nstop_when_done = false\nwarmup = \"3ms\"\n"] {
            let scn = scenario(extra);
            let whole = bytes(&run(&scn, 3).unwrap());
            let mut calls = 0;
            let tiny = Slicing { first_step_ns: 1_000, target: std::time::Duration::ZERO };
            let sliced = run_sliced(&scn, 3, &CaptureSpec::default(), tiny, |_| {
                calls += 1;
                true
            })
            .unwrap()
            .unwrap();
            assert!(calls > 1_000, "only {calls} slices");
            assert_eq!(bytes(&sliced.0), whole);
            let adaptive = run_sliced(&scn, 3, &CaptureSpec::default(), Slicing::default(), |_| true).unwrap().unwrap();
            assert_eq!(bytes(&adaptive.0), whole);
        }
    }

    /// A run cut by `duration` before every generated flow arrived lists the flows it never
    /// reached (no connection, nothing sent) and counts them as not started: every flow the
    /// scenario asked for is in the results.
    #[test]
    fn flows_arriving_after_the_end_are_listed_as_not_started() {
        // 40 flows at 60 % load arrive over several ms; the run stops at 5 ms.
        let mut scn = scenario("");
        scn.duration = ecnlab_core::units::Duration(5_000_000);
        let o = run(&scn, 3).unwrap();
        let end_s = o.summary.sim_time_s;
        assert_eq!(end_s, 0.005);
        assert_eq!(o.flows.len(), 40);
        let never: Vec<_> = o.flows.iter().filter(|f| f.start_s >= end_s).collect();
        assert!(!never.is_empty() && never.len() < 40, "{} of 40 after the end", never.len());
        assert!(never.iter().all(|f| f.conn.is_none() && f.finish_s.is_none() && f.acked_bytes == 0));
        assert!(o.flows.iter().filter(|f| f.start_s < end_s).all(|f| f.conn.is_some()));
        assert_eq!(o.flows.iter().map(|f| f.id).collect::<Vec<_>>(), (0..40).collect::<Vec<_>>());
        let c = &o.summary.flows;
        assert_eq!((c.total, c.not_started), (40, never.len() as u64));
        assert_eq!(c.completed + c.unfinished + c.not_started, 40);
        // The whole run: nothing is left out, nothing counted as not started.
        let mut long = scenario("");
        long.duration = ecnlab_core::units::Duration(1_000_000_000);
        let all = run(&long, 3).unwrap();
        assert_eq!((all.summary.flows.total, all.summary.flows.not_started), (40, 0));
    }

    /// `between` stops the run, and sees simulated time advance.
    #[test]
    fn between_can_stop_a_run() {
        let scn = scenario("");
        let mut seen = Vec::new();
        let tiny = Slicing { first_step_ns: 1_000, target: std::time::Duration::ZERO };
        let out = run_sliced(&scn, 3, &CaptureSpec::default(), tiny, |p| {
            seen.push(p.now_ns);
            seen.len() < 5
        })
        .unwrap();
        assert!(out.is_none());
        assert_eq!(seen.len(), 5);
        assert!(seen.windows(2).all(|w| w[0] <= w[1]) && seen[4] > 0, "{seen:?}");
    }
}
