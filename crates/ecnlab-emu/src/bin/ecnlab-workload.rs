//! `ecnlab-workload`: the flow arrivals of a scenario's `[[traffic]]`, exactly as the
//! simulator generates them (same code, same seed derivation), for `ecnlab emulate`.
//!
//! ```text
//! ecnlab-workload SCENARIO.json [--seed N]      # JSON lines: start_ns, src, dst, size, class, source
//! ```
//!
//! The simulator draws arrivals with `workload::generate(traffic, hosts,
//! Stream::Traffic.seed(seed))`, hosts' access rates taken from the topology
//! (`Simulator::new`); this does the same, so an emulation of a scenario with the same seed
//! carries the very flows `ecnlab run` simulates.

use ecnlab_core::rng::Stream;
use ecnlab_sim::topology::Net;
use ecnlab_sim::workload::{self, HostInfo};
use ecnlab_sim::Scenario;
use std::io::Write;

fn run() -> Result<(), String> {
    let mut path = None;
    let mut seed = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => {
                let v = it.next().ok_or("--seed needs a value")?;
                seed = Some(v.parse::<u64>().map_err(|_| format!("--seed {v}: not an unsigned integer"))?);
            }
            "-h" | "--help" => {
                println!("usage: ecnlab-workload SCENARIO.json [--seed N]");
                return Ok(());
            }
            _ if path.is_none() => path = Some(a),
            _ => return Err(format!("unexpected argument `{a}`")),
        }
    }
    let path = path.ok_or("usage: ecnlab-workload SCENARIO.json [--seed N]")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let scn = Scenario::from_json(&text)?;
    scn.validate()?;
    let seed = seed.unwrap_or(scn.seed);
    let net = Net::build(&scn.topology);
    let hosts = HostInfo {
        n_hosts: net.n_hosts,
        access_rate_bps: (0..net.n_hosts).map(|h| net.links[net.out_links[h][0] as usize].rate_bps).collect(),
        hosts_per_leaf: match scn.topology {
            ecnlab_sim::config::Topology::LeafSpine { hosts_per_leaf, .. } => Some(hosts_per_leaf),
            _ => None,
        },
    };
    let arrivals = workload::generate(&scn.traffic, &hosts, Stream::Traffic.seed(seed))?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    for a in &arrivals {
        writeln!(w, "{}", serde_json::to_string(a).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    }
    w.flush().map_err(|e| e.to_string())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ecnlab-workload: error: {e}");
        std::process::exit(2);
    }
}
