//! Criterion: the event queue under the "hold" model — a queue of N pending events; each
//! operation pops the earliest and pushes one later, at the sizes a run holds: ~1k (a star),
//! ~10k (the 144-host leaf-spine) and ~100k pending events (1024 hosts, many timers).
//! The delays mimic the simulator's mix: 9 in 10 are link events within the wheel's horizon
//! (a transmission plus the 20.2 us host-link delay), 1 in 10 a timer 0.1-5 ms away (the
//! far heap).
//!
//! `cargo bench -p ecnlab-sim --bench event_queue`

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ecnlab_sim::event::EventQueue;

#[derive(Clone, Copy, Debug)]
#[allow(dead_code)]
enum Ev {
    Link(u32),
    Timer(u32, u32),
}

/// The wheel's horizon as the leaf-spine sets it (20.2 us host links, 1.2 us transmissions).
const HORIZON: u64 = 21_500;

/// Delay of the next event: 9 in 10 within the horizon, 1 in 10 a timer.
#[inline]
fn delay(r: u64) -> u64 {
    if r.is_multiple_of(10) {
        100_000 + r % 4_900_000
    } else {
        1 + r % (HORIZON - 1)
    }
}

struct XorShift(u64);
impl XorShift {
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn bench_hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    g.throughput(Throughput::Elements(1));
    for n in [1_000usize, 10_000, 100_000] {
        let mut q = EventQueue::new(HORIZON);
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for i in 0..n {
            q.push(delay(rng.next()), Ev::Link(i as u32));
        }
        g.bench_function(BenchmarkId::new("pop_push", n), |b| {
            b.iter(|| {
                let (t, ev) = q.pop().unwrap();
                let ev = black_box(ev);
                let next = match ev {
                    Ev::Link(i) => Ev::Timer(i, 0),
                    Ev::Timer(i, _) => Ev::Link(i),
                };
                q.push(t + delay(rng.next()), next);
            })
        });
    }
    // Bursty mix: push 4 then pop 4 (a packet arrival scheduling several follow-ups).
    for n in [1_000usize, 10_000, 100_000] {
        let mut q = EventQueue::new(HORIZON);
        let mut rng = XorShift(0x1234_5678_9ABC_DEF1);
        for i in 0..n {
            q.push(delay(rng.next()), Ev::Link(i as u32));
        }
        let mut now = 0;
        g.throughput(Throughput::Elements(8));
        g.bench_function(BenchmarkId::new("push4_pop4", n), |b| {
            b.iter(|| {
                for k in 0..4u32 {
                    q.push(now + delay(rng.next()), Ev::Timer(k, k));
                }
                for _ in 0..4 {
                    let (t, ev) = q.pop().unwrap();
                    now = t;
                    black_box(ev);
                }
            })
        });
        g.throughput(Throughput::Elements(1));
    }
    g.finish();
}

criterion_group!(benches, bench_hold);
criterion_main!(benches);
