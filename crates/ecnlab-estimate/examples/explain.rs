//! Where an estimate's flows spend their time: every flow's FCT alone, and the delay each
//! link of its path adds (its own link simulation's, or drawn from its cluster's), for the
//! flows of the slowest `TOP` by slowdown among those of at most `MAX_SIZE` bytes; and, over
//! those flows, the share of their added delay by kind of link (`benches/README.md`, "The
//! queues behind the errors").
//!
//! ```text
//! cargo run --release -p ecnlab-estimate --example explain -- SCENARIO.json [TOP [MAX_SIZE]]
//! ```
//!
//! The scenario is JSON as `ecnlab` hands it to the core (`ecnlab.scenario.to_json` of a
//! resolved scenario). Every job runs on this thread, with the estimate's defaults.

use ecnlab_estimate::{run_serially, Options, Plan};
use std::collections::BTreeMap;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).ok_or("usage: explain SCENARIO.json [TOP [MAX_SIZE]]")?;
    let top: usize = args.get(2).map_or(Ok(20), |s| s.parse()).map_err(|e| format!("TOP: {e}"))?;
    let max_size: u64 = args.get(3).map_or(Ok(100_000), |s| s.parse()).map_err(|e| format!("MAX_SIZE: {e}"))?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let scn = ecnlab_sim::Scenario::from_json(&text)?;
    scn.validate()?;
    let seed = scn.seed;
    let mut plan = Plan::new(scn, seed, Options::default())?;
    run_serially(&mut plan)?;
    let mut parts: BTreeMap<u32, Vec<(u32, f64)>> = BTreeMap::new();
    let combined = plan.combine_with(|f, l, q, _| parts.entry(f).or_default().push((l, q)))?;
    let net = &plan.fabric().net;
    let name = |n: usize| net.names[n].as_str();
    // A link's kind: its ends' names without their numbers ("h->edge", "edge->agg", ...).
    let kind = |l: u32| {
        let s = &net.links[l as usize];
        let strip = |n: usize| name(n).trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
        format!("{}->{}", strip(s.from), strip(s.to))
    };
    let mut slow: Vec<(f64, usize)> = (plan.flows().iter().zip(&combined.est).enumerate())
        .filter_map(|(i, (f, e))| {
            let (size, fct) = (f.size?.get(), e.fct_ns()?);
            (size <= max_size && e.ideal_ns() > 0).then_some((fct as f64 / e.ideal_ns() as f64, i))
        })
        .collect();
    slow.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut by_kind: BTreeMap<String, f64> = BTreeMap::new();
    println!("flow size slowdown fct_us ideal_us | link: delay_us ...");
    for &(sd, i) in slow.iter().take(top) {
        let (f, e) = (&plan.flows()[i], &combined.est[i]);
        let mut line = format!(
            "{i} {} {sd:.1} {:.1} {:.1} |",
            f.bytes(),
            e.fct_ns().unwrap_or(0) as f64 / 1e3,
            e.ideal_ns() as f64 / 1e3
        );
        for &(l, q) in parts.get(&(i as u32)).map(Vec::as_slice).unwrap_or(&[]) {
            let s = &net.links[l as usize];
            line += &format!(" {}->{}: {:.1}", name(s.from), name(s.to), q / 1e3);
            *by_kind.entry(kind(l)).or_default() += q.max(0.0);
        }
        println!("{line}");
    }
    let total: f64 = by_kind.values().sum();
    println!("added delay of these flows by kind of link:");
    for (k, v) in &by_kind {
        println!("  {k}: {:.0} % ({:.0} us)", 100.0 * v / total.max(1e-9), v / 1e3);
    }
    Ok(())
}
