//! Run a scenario TOML file and print its counts (a debugging aid without Python);
//! `run_toml FILE --summary` also prints the summary without its wall time.
fn main() {
    let fail = |m: String| -> ! {
        eprintln!("run_toml: error: {m}");
        std::process::exit(2)
    };
    let Some(path) = std::env::args().nth(1) else { fail("usage: run_toml SCENARIO.toml".into()) };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let scn = ecnlab_sim::Scenario::from_toml(&text).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    scn.validate().unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let t0 = std::time::Instant::now();
    let out = ecnlab_sim::run(&scn, scn.seed).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let s = &out.summary;
    eprintln!("{:.2} s wall, {} events, {} hops", t0.elapsed().as_secs_f64(), s.events, s.packet_hops);
    // `--summary`: the whole summary on stdout (the core's has no wall time), to compare two builds.
    if std::env::args().nth(2).as_deref() == Some("--summary") {
        let s = serde_json::to_value(s).unwrap_or_else(|e| fail(e.to_string()));
        println!("{s:#}");
    }
}
