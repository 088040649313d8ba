//! Observation changes nothing: the same scenario and seed simulate the same packets whatever
//! is recorded. Samples and the warm-up snapshot read ports through `Wire::port_at` (owed
//! dequeues performed for the reader alone, the link put back), so the sample interval, time series on or off, and the
//! start of the measurement window must leave every packet-hop, mark, drop and per-flow
//! record unchanged. Intervals include ones that do not divide a packet's transmission time
//! (1.2 us for 1500 B at 10 Gbps): 1,234 ns and 7 us. Before the fix, a sample performed
//! owed dequeues itself and the 3 ms leaf-spine below sent one packet-hop fewer and 88
//! marks fewer with 1,234 ns samples than without.

use ecnlab_core::units::{ByteSize, Duration};
use ecnlab_sim::tcp::CcKind;
use ecnlab_sim::workload::TrafficSpec;
use ecnlab_sim::Scenario;
use serde_json::{json, Value};
use std::path::Path;

fn builtin(name: &str, duration_ns: u64, max_flows: u64) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../python/ecnlab/scenarios/{name}.toml"));
    let mut scn = Scenario::from_toml(&std::fs::read_to_string(&path).unwrap()).unwrap();
    scn.duration = Duration(duration_ns);
    scn.metrics.warmup = Duration(duration_ns / 3);
    for t in &mut scn.traffic {
        match t {
            TrafficSpec::Poisson(p) => p.flows = p.flows.min(max_flows),
            TrafficSpec::Incast(i) => i.queries = i.queries.min(2),
            TrafficSpec::IncastGroups(g) => g.queries = g.queries.min(2),
            TrafficSpec::Trace(_) => {}
        }
    }
    scn
}

/// What was simulated, apart from what depends on the measurement window: every count of
/// the run and every flow's record (`flows.csv`); with `window`, also the window's marks,
/// drops, per-queue results and probe RTTs (taken after the warm-up).
fn simulated(scn: &Scenario, window: bool) -> Value {
    let out = ecnlab_sim::run(scn, scn.seed).unwrap_or_else(|e| panic!("{}: {e}", scn.name));
    let s = &serde_json::to_value(&out.summary).unwrap();
    let mut v = json!({
        "packet_hops": s["packet_hops"],
        "counting": s["counting"],
        "flows": serde_json::to_value(&out.flows).unwrap(),
    });
    if window {
        v["probes"] = serde_json::to_value(&out.probes).unwrap();
        for k in ["marks", "drops", "fct", "queues", "long_flows"] {
            v[k] = s[k].clone();
        }
    }
    v
}

fn assert_pure(base: Scenario) {
    let mut reference = base.clone();
    reference.metrics.timeseries = false;
    let want = simulated(&reference, true);
    assert!(want["packet_hops"].as_u64().unwrap() > 10_000, "{}: too little traffic to test", base.name);
    for interval in [1_234, 7_000, 10_000, 1_000_000] {
        let mut scn = base.clone();
        scn.metrics.timeseries = true;
        scn.metrics.sample_interval = Duration(interval);
        assert!(simulated(&scn, true) == want, "{}: sampling every {interval} ns changed the run", base.name);
    }
    // The measurement window's start only moves what is measured.
    for warmup in [0, base.duration.0 / 2 + 617] {
        let mut scn = reference.clone();
        scn.metrics.warmup = Duration(warmup);
        assert!(
            simulated(&scn, false) == simulated(&reference, false),
            "{}: a warm-up of {warmup} ns changed the run",
            base.name
        );
    }
}

#[test]
fn sampling_does_not_change_the_tcn_leaf_spine() {
    assert_pure(builtin("tcn-leafspine", 3_000_000, 300));
}

#[test]
fn sampling_does_not_change_a_star_with_probes() {
    let scn = builtin("tcn-static", 120_000_000, 0);
    assert!(!scn.probes.is_empty());
    assert_pure(scn);
}

#[test]
fn sampling_does_not_change_a_leaf_spine_with_rtt_variation() {
    let scn = builtin("ecnsharp-leafspine", 4_000_000, 300);
    assert!(scn.rtt_variation.is_some());
    assert_pure(scn);
}

#[test]
fn sampling_does_not_change_a_shared_buffer_pool() {
    let mut scn = builtin("tcn-leafspine", 3_000_000, 300);
    scn.switch.pool = Some(ByteSize(1_000_000));
    assert_pure(scn);
}

#[test]
fn sampling_does_not_change_dcqcn() {
    let mut scn = builtin("ecnsharp-incast", 30_000_000, 100);
    scn.transport.cc = CcKind::Dcqcn;
    scn.name = "ecnsharp-incast-dcqcn".into();
    assert_pure(scn);
}

#[test]
fn sampling_does_not_change_pfc() {
    // DCQCN on a lossless leaf-spine: PAUSE and RESUME events, paused NICs and switch ports.
    let mut scn = builtin("ecnsharp-leafspine", 20_000_000, 300);
    scn.transport.cc = CcKind::Dcqcn;
    scn.switch.buffer = ByteSize(300_000);
    scn.switch.pool = Some(ByteSize(300_000)); // small enough that ports pause
    scn.switch.pfc.enabled = true;
    scn.marking.scheme = ecnlab_core::marking::SchemeName::None; // so that queues build up
    scn.name = "ecnsharp-leafspine-pfc".into();
    let out = ecnlab_sim::run(&scn, scn.seed).unwrap();
    assert!(out.summary.pfc.as_ref().is_some_and(|p| p.pauses > 0), "no pause to test");
    assert_pure(scn);
}
