//! Criterion: one egress port's enqueue + dequeue, for each scheduler and marking scheme.
//!
//! Steady state: an 8-queue 10 Gbps port (1 MB buffer) holds a standing backlog of about
//! 64 packets spread over its queues; every iteration enqueues one 1500 B ECT packet (the
//! next queue in turn) and dequeues one, advancing the clock by one packet time (1.2 us),
//! so schemes see a realistic, non-empty queue and sojourn times of tens of microseconds.
//!
//! `cargo bench -p ecnlab-core --bench port` (CARGO_TARGET_DIR of your choice).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ecnlab_core::buffer::BufferPool;
use ecnlab_core::marking::MarkingConfig;
use ecnlab_core::port::{Port, PortConfig};
use ecnlab_core::PortPacket;
use serde_json::json;

#[derive(Clone, Copy, Debug)]
struct Pkt {
    size: u32,
    ecn: u8,
    dscp: u8,
}

impl PortPacket for Pkt {
    fn wire_bytes(&self) -> u32 {
        self.size
    }
    fn is_ect(&self) -> bool {
        self.ecn != 0
    }
    fn set_ce(&mut self) {
        self.ecn = 3;
    }
    fn dscp(&self) -> u8 {
        self.dscp
    }
}

const SCHEDULERS: [&str; 4] = ["sp", "dwrr", "wfq", "sp_dwrr"];
const SCHEMES: [&str; 8] = ["none", "per_queue", "tcn", "ecn_sharp", "codel", "red", "mq_ecn", "ideal"];
const QUEUES: usize = 8;
const PKT_NS: u64 = 1200; // 1500 B at 10 Gbps
const BACKLOG: usize = 64;

fn build(sched: &str, scheme: &str) -> Result<Port<Pkt>, String> {
    let cfg: PortConfig = serde_json::from_value(json!({
        "queues": QUEUES, "buffer": "1MB",
        "scheduler": {"kind": sched, "strict": 1, "quantum": "1.5KB"},
    }))
    .map_err(|e| e.to_string())?;
    let mk: MarkingConfig = serde_json::from_value(json!({
        "scheme": scheme,
        "threshold": {"k": "30KB"},
        "tcn": {"threshold": "20us"},
        "codel": {"target": "10us", "interval": "100us"},
        "ecn_sharp": {"ins_target": "40us", "pst_target": "10us", "pst_interval": "100us"},
        "red": {"min_th": "15KB", "max_th": "45KB", "max_p": 0.1, "w": 0.002},
        "mq_ecn": {"k": "30KB"},
        "ideal": {"k": "30KB"},
    }))
    .map_err(|e| e.to_string())?;
    Port::new(&cfg, &mk, 10_000_000_000, 1)
}

fn bench_port(c: &mut Criterion) {
    let mut g = c.benchmark_group("port_enq_deq");
    g.throughput(Throughput::Elements(1));
    for sched in SCHEDULERS {
        for scheme in SCHEMES {
            let mut port = match build(sched, scheme) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("skip {sched}/{scheme}: {e}");
                    continue;
                }
            };
            let mut pool = BufferPool::unlimited();
            let mut now = 0u64;
            let mut i = 0u8;
            for _ in 0..BACKLOG {
                let _ = port.enqueue(now, Pkt { size: 1500, ecn: 2, dscp: i % QUEUES as u8 }, &mut pool);
                i = i.wrapping_add(1);
            }
            g.bench_function(BenchmarkId::new(sched, scheme), |b| {
                b.iter(|| {
                    now += PKT_NS;
                    let _ = port.enqueue(now, Pkt { size: 1500, ecn: 2, dscp: i % QUEUES as u8 }, &mut pool);
                    i = i.wrapping_add(1);
                    black_box(port.dequeue(now, &mut pool));
                    // keep the backlog from draining away if a scheme dropped
                    if port.bytes() < (BACKLOG as u64 / 2) * 1500 {
                        let _ = port.enqueue(now, Pkt { size: 1500, ecn: 2, dscp: i % QUEUES as u8 }, &mut pool);
                    }
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_port);
criterion_main!(benches);
