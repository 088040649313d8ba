//! # ecnlab-sim
//!
//! A deterministic discrete-event packet simulator built on `ecnlab-core`: the scenario
//! ([`config`]) becomes a network of hosts and switches ([`topology`]) whose egress ports
//! are `ecnlab_core::Port`s, driven by one event loop ([`sim`]); hosts run sans-IO TCP
//! ([`tcp`]); [`metrics`] turns the run into per-queue, per-flow and probe results.
//!
//! The same scenario and seed give bit-identical results: integer nanosecond time, FIFO
//! tie-breaking of equal-time events, and one random stream per component derived from the
//! master seed.

pub mod config;
pub mod dcqcn;
pub mod de;
pub mod event;
pub mod metrics;
pub mod packet;
pub mod recorder;
pub mod sim;
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
    pub summary: serde_json::Value,
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

/// Build and run a scenario with the given master seed.
pub fn run(scn: &Scenario, seed: u64) -> Result<RunOutput, RunError> {
    let mut sim = Simulator::new(scn, seed).map_err(RunError::Scenario)?;
    sim.run().map_err(RunError::Internal)?;
    let flows = sim::flow_records(&sim);
    let probes = sim::probe_records(&sim);
    let summary = metrics::summary(&sim, &scn.name, seed, &flows, &probes);
    Ok(RunOutput { summary, flows, probes, timeseries: std::mem::take(&mut sim.recorder.timeseries) })
}
