//! Memory over a long run: run a scenario in steps of simulated time and print the resident
//! memory after each step (Linux `/proc/self/status`). `ecnlab` keeps no per-packet state
//! beyond packets in flight, so RSS must stay flat once the network is loaded; what may
//! grow is only what the run reports (one record per flow, probe RTTs, time-series rows),
//! which the scenarios in `benches/soak/` switch off or account for.
//!
//! usage: soak SCENARIO.toml [STEP_SECONDS]   (duration and everything else from the file)

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let fail = |m: String| -> ! {
        eprintln!("soak: error: {m}");
        std::process::exit(2)
    };
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else { fail("usage: soak SCENARIO.toml [STEP_SECONDS]".into()) };
    let step_s: f64 =
        args.get(2).map_or(Ok(60.0), |s| s.parse()).unwrap_or_else(|_| fail("STEP_SECONDS: not a number".into()));
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let scn = ecnlab_sim::Scenario::from_toml(&text).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let rss_before = rss_kb();
    let t0 = std::time::Instant::now();
    let mut sim = ecnlab_sim::Simulator::new(&scn, scn.seed).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let step = (step_s * 1e9) as u64;
    println!("| simulated s | wall s | events | packet-hops | flows done / started | RSS MB |");
    println!("|---:|---:|---:|---:|---:|---:|");
    println!("| 0 (built) | {:.1} | 0 | 0 | 0 / 0 | {:.1} |", t0.elapsed().as_secs_f64(), rss_kb() as f64 / 1024.0);
    let mut t = 0;
    while t < sim.end() {
        t = (t + step).min(sim.end());
        sim.run_until(t).unwrap_or_else(|e| fail(e));
        let (done, started) = sim.flow_progress();
        println!(
            "| {:.0} | {:.1} | {} | {} | {done} / {started} | {:.1} |",
            t as f64 / 1e9,
            t0.elapsed().as_secs_f64(),
            sim.events(),
            sim.packet_hops(),
            rss_kb() as f64 / 1024.0
        );
        if sim.now() >= sim.end() {
            break;
        }
    }
    sim.run().unwrap_or_else(|e| fail(e));
    eprintln!("RSS before building: {:.1} MB", rss_before as f64 / 1024.0);
}
