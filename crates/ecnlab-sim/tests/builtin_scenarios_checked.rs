//! Every built-in scenario, shrunk to at most 30 ms and 100 generated flows, runs to the end with the counting
//! invariants checked: after every enqueue and dequeue in debug builds (how `cargo test`
//! builds this test) and in full at the end of the run. Each runs twice, under the
//! `transport.profile` it states and under the other one.

use ecnlab_core::units::Duration;
use ecnlab_sim::tcp::config::LINUX_ONLY;
use ecnlab_sim::workload::TrafficSpec;
use ecnlab_sim::Scenario;
use std::path::Path;

#[test]
fn every_builtin_scenario_keeps_its_books() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ecnlab/scenarios");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the built-in scenarios") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("\nprofile = \""),
            "{}: every catalog entry states its transport.profile",
            path.display()
        );
        let other = if text.contains("profile = \"linux\"") {
            // The keys only `linux` reads (a testbed's kernel mechanisms) go with it.
            let linux_only = |l: &str| LINUX_ONLY.iter().any(|k| l.trim_start().starts_with(&format!("{k} =")));
            let kept: Vec<&str> = text.lines().filter(|l| !linux_only(l)).collect();
            kept.join("\n").replace("profile = \"linux\"", "profile = \"textbook\"")
        } else {
            text.replace("profile = \"textbook\"", "profile = \"linux\"")
        };
        for text in [text, other] {
            let mut scn = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            scn.duration = Duration(scn.duration.0.min(30_000_000));
            scn.metrics.warmup = Duration(0);
            for t in &mut scn.traffic {
                match t {
                    TrafficSpec::Poisson(p) => p.flows = p.flows.min(100),
                    TrafficSpec::Incast(i) => i.queries = i.queries.min(2),
                    TrafficSpec::IncastGroups(g) => g.queries = g.queries.min(2),
                    TrafficSpec::Trace(_) => {}
                }
            }
            let out = ecnlab_sim::run(&scn, scn.seed).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(out.summary.packet_hops > 0, "{}: nothing was sent", path.display());
        }
        names.push(path.file_stem().unwrap().to_string_lossy().to_string());
    }
    assert!(names.len() >= 10, "found only {names:?}");
}
