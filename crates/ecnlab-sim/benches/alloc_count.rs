//! Not a Criterion bench: counts heap allocations of a whole run with a counting global
//! allocator, split into set-up (`Simulator::new`) and the event loop (`Simulator::run`),
//! and reports allocations per packet-hop.
//!
//! `cargo bench -p ecnlab-sim --bench alloc_count -- [SCENARIO.toml] [FLOWS_DIVISOR]`
//! (default: python/ecnlab/scenarios/tcn-leafspine.toml with its flow counts divided by 25).

use ecnlab_sim::{Scenario, Simulator};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static REALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(l.size() as u64, Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        REALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(n.saturating_sub(l.size()) as u64, Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn snap() -> (u64, u64, u64) {
    (ALLOCS.load(Relaxed), REALLOCS.load(Relaxed), BYTES.load(Relaxed))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let path = args.first().cloned().unwrap_or_else(|| format!("{root}/python/ecnlab/scenarios/tcn-leafspine.toml"));
    let div: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(25);
    let mut text = std::fs::read_to_string(&path).expect("read scenario");
    if div > 1 {
        // scale every `flows = N` of [[traffic]] down by div
        text = text
            .lines()
            .map(|l| {
                match l.trim().strip_prefix("flows = ").and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok()) {
                    Some(n) => format!("flows = {}", (n / div).max(1)),
                    None => l.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    std::env::set_current_dir(root).ok();
    let scn = Scenario::from_toml(&text).expect("scenario");
    // Set-up alone (built and dropped), then a whole run (set-up + loop + results).
    let s0 = snap();
    drop(Simulator::new(&scn, 1).expect("build"));
    let s1 = snap();
    let t = std::time::Instant::now();
    let out = ecnlab_sim::run(&scn, 1).expect("run");
    let wall = t.elapsed().as_secs_f64();
    let s2 = snap();
    let (hops, events) = (out.summary.packet_hops, out.summary.events);
    let (setup_a, setup_r, setup_b) = (s1.0 - s0.0, s1.1 - s0.1, s1.2 - s0.2);
    let (loop_a, loop_r, loop_b) =
        (s2.0 - s1.0 - setup_a, s2.1 - s1.1 - setup_r, (s2.2 - s1.2).saturating_sub(setup_b));
    println!("scenario: {path} (flows / {div})");
    println!("setup (Simulator::new): {setup_a} allocs, {setup_r} reallocs, {setup_b} bytes");
    println!("loop + results        : {loop_a} allocs, {loop_r} reallocs, {loop_b} bytes ({wall:.3} s whole run)");
    println!("events : {events}, packet-hops: {hops}, flows: {}", out.flows.len());
    println!(
        "per packet-hop (loop + results): {:.4} allocs, {:.4} reallocs, {:.1} bytes",
        loop_a as f64 / hops as f64,
        loop_r as f64 / hops as f64,
        loop_b as f64 / hops as f64
    );
    let flows = &out.flows;
    println!("per flow: {:.2} allocs", loop_a as f64 / flows.len().max(1) as f64);
}
