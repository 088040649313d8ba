//! Decompose and cluster a scenario without simulating it: the stages' times and the plan's
//! size, for profiling the estimate's front half on a large fabric (`benches/README.md`).
//!
//! ```text
//! cargo run --release -p ecnlab-estimate --example plan -- SCENARIO.json [SEED]
//! ```
//!
//! The scenario is JSON as `ecnlab` hands it to the core (`ecnlab.scenario.to_json` of a
//! resolved scenario), so that `--set` and TOML stay Python's.

use ecnlab_estimate::{Options, Plan};
use std::time::Instant;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: plan SCENARIO.json [SEED]")?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let scn = ecnlab_sim::Scenario::from_json(&text)?;
    scn.validate()?;
    let seed = match args.get(2) {
        Some(s) => s.parse().map_err(|e| format!("seed: {e}"))?,
        None => scn.seed,
    };
    let t = Instant::now();
    let plan = Plan::new(scn, seed, Options::default())?;
    println!(
        "flows {} links {} clusters {} alone {} segment-hops {} in {:.2} s",
        plan.flows().len(),
        plan.links().len(),
        plan.clusters().len(),
        plan.n_alone(),
        plan.segment_hops,
        t.elapsed().as_secs_f64()
    );
    for (stage, s) in &plan.stages {
        println!("  {stage} {s:.2} s");
    }
    Ok(())
}
