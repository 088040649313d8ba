//! Criterion: TCP per-segment processing in steady state (DCTCP, 1 in 8 segments CE-marked,
//! cwnd capped at 64 segments so the pipe is steady).
//!
//! * `tcp/data_and_ack`: TcpReceiver::on_data for one segment + TcpSender::on_ack for the
//!   ACK it produces (and the new segments the sender releases).
//! * `tcp/receiver_on_data`: the receiver alone on an in-order stream.
//!
//! TcpSender::on_ack ~= data_and_ack - receiver_on_data.
//!
//! `cargo bench -p ecnlab-sim --bench tcp_ack`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use ecnlab_sim::packet::{Ecn, Packet};
use ecnlab_sim::tcp::{TcpConfig, TcpReceiver, TcpSender};
use std::collections::VecDeque;

fn cfg() -> TcpConfig {
    let mut c: TcpConfig = serde_json::from_value(serde_json::json!({"profile": "textbook", "cc": "dctcp"})).unwrap();
    c.max_cwnd = 64;
    c
}

fn bench_tcp(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp");
    g.throughput(Throughput::Elements(1));
    {
        let cfg = cfg();
        let mut s = TcpSender::new(&cfg, 0, 1, 2, 0);
        let mut r = TcpReceiver::new(&cfg, 0, 1, 2);
        s.add_data(u64::MAX / 4);
        let mut out = Vec::with_capacity(256);
        let mut acks = Vec::with_capacity(16);
        let mut pipe: VecDeque<Packet> = VecDeque::with_capacity(1024);
        let mut now = 0u64;
        s.poll(now, &mut out);
        pipe.extend(out.drain(..));
        let mut n = 0u64;
        g.bench_function("data_and_ack", |b| {
            b.iter(|| {
                now += 1200;
                let mut pkt = pipe.pop_front().expect("pipe ran dry");
                n += 1;
                if n.is_multiple_of(8) && pkt.ecn != Ecn::NotEct {
                    pkt.ecn = Ecn::Ce;
                }
                r.on_data(now, &pkt, &mut acks);
                for a in acks.drain(..) {
                    s.on_ack(now, &a, &mut out);
                }
                if pipe.is_empty() {
                    s.poll(now, &mut out);
                }
                pipe.extend(out.drain(..));
                black_box(pipe.len());
            })
        });
    }
    {
        let cfg = cfg();
        let mut r = TcpReceiver::new(&cfg, 0, 1, 2);
        let mut acks = Vec::with_capacity(16);
        let mut seq = 0u64;
        let mut now = 0u64;
        g.bench_function("receiver_on_data", |b| {
            b.iter(|| {
                now += 1200;
                let pkt = Packet {
                    flow: 0,
                    src: 1,
                    dst: 2,
                    seq,
                    tx_ns: now,
                    payload: 1460,
                    size: 1500,
                    ecn: if seq.is_multiple_of(8 * 1460) { Ecn::Ce } else { Ecn::Ect0 },
                    ..Default::default()
                };
                seq += 1460;
                r.on_data(now, &pkt, &mut acks);
                black_box(acks.len());
                acks.clear();
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_tcp);
criterion_main!(benches);
