//! The fabric's flows as the exact simulation carries them: the listed flows of `[[flows]]`
//! (their start jitter drawn as `ecnlab_sim::hosts` draws it), the generated arrivals of
//! `[[traffic]]` (`ecnlab_sim::workload::generate`, the same seed), and the connection each
//! one travels on, whose ECMP key ([`ecnlab_sim::routing::conn_key`]) picks its path.
//!
//! Connections are numbered as the simulator opens them: the listed flows' first, one per
//! flow, then each generated flow that finds no idle connection of its host pair opens the
//! next. Without persistent connections (`host.persistent_connections = false`) that is one
//! per generated flow and the paths are those the exact run takes ([`Paths::Exact`]). With
//! them, which flow finds an idle connection depends on when the earlier ones complete,
//! which only the exact run knows: here a connection is idle again at its flow's ideal FCT
//! ([`Paths::ReuseModelled`]), so the paths are drawn from the same ECMP hash but not always
//! those of the exact run (a flow that reuses one more or one fewer connection shifts the
//! numbers of every later one).

use crate::passes::{in_chunks, Split};
use ecnlab_core::rng::{Rng, Stream};
use ecnlab_sim::metrics::ideal_fct_along;
use ecnlab_sim::routing::{conn_key, Routes};
use ecnlab_sim::tcp::{CcKind, Profile};
use ecnlab_sim::topology::Net;
use ecnlab_sim::workload::{self, FlowArrival};
use ecnlab_sim::Scenario;
use std::num::NonZeroU64;

/// A connection number for a flow that never starts (its arrival at or after the run's end).
pub const NO_CONN: u32 = u32::MAX;

/// One flow of the fabric, in the order of the exact run's `flows.csv` (listed flows, then
/// generated ones by arrival).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricFlow {
    pub start_ns: u64,
    /// Bytes; None: long-lived (a listed flow without a size).
    pub size: Option<NonZeroU64>,
    /// Its connection ([`NO_CONN`]: a generated flow that never starts).
    pub conn: u32,
    /// `[[flows]]` index, or `flows.len() + [[traffic]] index` for generated flows.
    pub spec: u32,
    pub src: u16,
    pub dst: u16,
    pub class: u8,
}

impl FabricFlow {
    /// It starts before the run's end (`end_ns`), and so sends.
    pub fn starts_before(&self, end_ns: u64) -> bool {
        self.start_ns < end_ns
    }
    /// Bytes, 0 for a long-lived flow.
    pub fn bytes(&self) -> u64 {
        self.size.map_or(0, NonZeroU64::get)
    }
}

/// Whether the flows' paths are the exact run's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paths {
    Exact,
    /// Persistent connections: reuse modelled with ideal FCTs (module docs).
    ReuseModelled,
}

impl Paths {
    pub fn describe(self) -> &'static str {
        match self {
            Paths::Exact => "the exact run's (one connection per generated flow)",
            Paths::ReuseModelled => {
                "drawn from the exact run's ECMP hash; with persistent connections a flow's connection \
                 (and so its path) follows completions at the ideal FCT, so some paths differ from the exact run's"
            }
        }
    }
}

/// The topology, its routes and what the flows' FCTs are measured as.
pub struct Fabric {
    pub scn: Scenario,
    pub seed: u64,
    pub net: Net,
    pub routes: Routes,
    /// End of the run (`duration`): flows arriving at or after it never start.
    pub end_ns: u64,
}

impl Fabric {
    /// The network of a validated scenario.
    pub fn new(scn: Scenario, seed: u64) -> Result<Fabric, String> {
        let net = Net::build(&scn.topology).map_err(|e| format!("topology.file: {e}"))?;
        let routes = Routes::shortest_paths(&net);
        if let Some(&(s, d)) = routes.unreachable_pairs().first() {
            return Err(format!("topology: host {s} cannot reach host {d}"));
        }
        let end_ns = scn.duration.0;
        Ok(Fabric { scn, seed, net, routes, end_ns })
    }

    pub fn mss(&self) -> u32 {
        self.scn.transport.mss
    }

    /// Whether a flow's FCT ends at the ACK of its last byte (else when its receiver holds
    /// it: the `linux` profile's TCP, `transport::Receiver::completion_bytes`).
    pub fn to_ack(&self, f: &FabricFlow) -> bool {
        let cc = self.cc_of(f);
        self.scn.transport.profile != Profile::Linux || cc.is_rate_based()
    }

    fn cc_of(&self, f: &FabricFlow) -> CcKind {
        self.scn.flows.get(f.spec as usize).and_then(|s| s.cc).unwrap_or(self.scn.transport.cc)
    }

    /// A flow's data path and its ACKs' (the same ECMP key both ways, as the simulator).
    pub fn paths(&self, f: &FabricFlow) -> (Vec<u32>, Vec<u32>) {
        (self.data_path(f), self.ack_path(f))
    }

    /// A flow's data path (each of the estimate's passes routes every flow again: routing is
    /// most of a large fabric's decomposition, so a pass routes only what it reads).
    pub fn data_path(&self, f: &FabricFlow) -> Vec<u32> {
        self.routes.path(&self.net, f.src as usize, f.dst as usize, conn_key(self.seed, f.conn))
    }

    /// Its ACKs' path.
    pub fn ack_path(&self, f: &FabricFlow) -> Vec<u32> {
        self.routes.path(&self.net, f.dst as usize, f.src as usize, conn_key(self.seed, f.conn))
    }

    /// The ideal FCT of a sized flow over its own paths (`flows.csv`'s `ideal_fct_us`).
    pub fn ideal_ns(&self, f: &FabricFlow, fwd: &[u32], rev: &[u32]) -> u64 {
        ideal_fct_along(&self.net, fwd, rev, f.bytes(), self.mss(), self.to_ack(f))
    }
}

/// Every flow of the scenario with its connection, and whether the paths are exact; the
/// persistent connections' reuse worked out on threads as `split` says (the same whatever
/// their number).
pub fn fabric_flows(fab: &Fabric, split: Split) -> Result<(Vec<FabricFlow>, Paths), String> {
    let scn = &fab.scn;
    let mut flows = Vec::new();
    // Listed flows: one connection each, in order; start jitter as `Hosts::add_listed_flows`.
    let mut jitter = Rng::named(fab.seed, Stream::StartJitter);
    for (si, f) in scn.flows.iter().enumerate() {
        for _ in 0..f.count {
            let start = f.start.0 + f.start_jitter.filter(|j| j.0 > 0).map_or(0, |j| jitter.below(j.0));
            // The simulator opens a listed flow's connection when it builds the scenario,
            // whether the flow starts before the end or not.
            let conn = flows.len() as u32;
            flows.push(FabricFlow {
                start_ns: start,
                size: f.size.and_then(|s| NonZeroU64::new(s.0)),
                conn,
                spec: si as u32,
                src: f.src as u16,
                dst: f.dst as u16,
                class: f.class,
            });
        }
    }
    let listed_conns = flows.len() as u32;
    let arrivals = workload::generate(&scn.traffic, &fab.net.host_info(), Stream::Traffic.seed(fab.seed))
        .map_err(|e| if e.starts_with("traffic") { e } else { format!("traffic: {e}") })?;
    let persistent = scn.host.persistent_connections;
    let conns = if persistent {
        let to_ack = scn.transport.profile != Profile::Linux || scn.transport.cc.is_rate_based();
        reused_connections(&arrivals, listed_conns, fab.end_ns, split, |a| {
            let (s, d) = (a.src as usize, a.dst as usize);
            let (fwd, rev) = (fab.routes.first_path(&fab.net, s, d), fab.routes.first_path(&fab.net, d, s));
            ideal_fct_along(&fab.net, &fwd, &rev, a.size, fab.mss(), to_ack)
        })
    } else {
        let mut next = listed_conns;
        arrivals
            .iter()
            .map(|a| {
                if a.start_ns < fab.end_ns {
                    next += 1;
                    next - 1
                } else {
                    NO_CONN
                }
            })
            .collect()
    };
    let n_listed = scn.flows.len() as u32;
    let paths = if persistent && !arrivals.is_empty() { Paths::ReuseModelled } else { Paths::Exact };
    // The arrivals become the flows in their own memory: std collects a `vec::IntoIter`
    // mapped to a type of the same size and alignment in place (the assertion below keeps
    // it so), so a fabric's millions of flows are held once, not twice (23 M make 0.74 GB).
    let generated: Vec<FabricFlow> = (arrivals.into_iter().zip(conns))
        .map(|(a, conn)| FabricFlow {
            start_ns: a.start_ns,
            size: NonZeroU64::new(a.size),
            conn,
            spec: n_listed + a.source,
            src: a.src,
            dst: a.dst,
            class: a.class,
        })
        .collect();
    if flows.is_empty() {
        return Ok((generated, paths));
    }
    let mut all = generated;
    all.splice(0..0, flows); // the listed flows first, as the exact run numbers them
    Ok((all, paths))
}

// Why [`fabric_flows`] holds the flows once: an arrival and a fabric flow take the same
// memory. A field added to either that breaks it stops the build here.
const _: () = assert!(
    std::mem::size_of::<FlowArrival>() == std::mem::size_of::<FabricFlow>()
        && std::mem::align_of::<FlowArrival>() == std::mem::align_of::<FabricFlow>(),
    "FabricFlow must keep FlowArrival's size and alignment (fabric_flows converts in place)"
);

/// The connection of each generated arrival with persistent connections: per host pair, an
/// arrival takes the connection freed last before it (the simulator's idle pool is a stack),
/// a connection being freed `busy(arrival)` after its flow's start; else it opens the next.
/// Host pairs are independent until connections are numbered: their runs are worked out in
/// chunks ([`crate::passes`]; `busy` routes each arrival, most of the time at 23 M flows).
fn reused_connections(
    arr: &[FlowArrival],
    first: u32,
    end_ns: u64,
    split: Split,
    busy: impl Fn(&FlowArrival) -> u64 + Sync,
) -> Vec<u32> {
    const NEW: u32 = u32::MAX;
    let mut order: Vec<u32> = (0..arr.len() as u32).filter(|&i| arr[i as usize].start_ns < end_ns).collect();
    // The keys are distinct (the index is one), so an unstable sort gives the stable order.
    order.sort_unstable_by_key(|&i| (arr[i as usize].src, arr[i as usize].dst, i));
    let pair = |i: u32| (arr[i as usize].src, arr[i as usize].dst);
    let mut runs = Vec::new();
    let mut run_start = 0;
    while run_start < order.len() {
        let p = pair(order[run_start]);
        let run_end = run_start + order[run_start..].iter().take_while(|&&i| pair(i) == p).count();
        runs.push(run_start..run_end);
        run_start = run_end;
    }
    // The earlier arrival whose connection each one reuses.
    let mut parent = vec![NEW; arr.len()];
    let work = |chunk: &[std::ops::Range<usize>]| {
        let mut reuses: Vec<(u32, u32)> = Vec::new();
        for run in chunk {
            let (mut busy_until, mut idle): (Vec<(u64, u32)>, Vec<u32>) = (Vec::new(), Vec::new());
            for &i in &order[run.clone()] {
                let t = arr[i as usize].start_ns;
                let mut freed: Vec<(u64, u32)> = busy_until.iter().copied().filter(|&(f, _)| f <= t).collect();
                if !freed.is_empty() {
                    busy_until.retain(|&(f, _)| f > t);
                    freed.sort_unstable();
                    idle.extend(freed.into_iter().map(|(_, j)| j));
                }
                if let Some(j) = idle.pop() {
                    reuses.push((i, j));
                }
                busy_until.push((t.saturating_add(busy(&arr[i as usize])), i));
            }
        }
        reuses
    };
    in_chunks(runs, split, work, |reuses| {
        for (i, j) in reuses {
            parent[i as usize] = j;
        }
    });
    drop(order);
    let mut conn = vec![NO_CONN; arr.len()];
    let mut next = first;
    for i in 0..arr.len() {
        if arr[i].start_ns >= end_ns {
            continue;
        }
        conn[i] = match parent[i] {
            NEW => {
                next += 1;
                next - 1
            }
            p => conn[p as usize],
        };
    }
    conn
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroUsize;

    fn arrival(start_ns: u64, src: u16, dst: u16) -> FlowArrival {
        FlowArrival { start_ns, src, dst, size: 1000, class: 0, source: 0 }
    }

    /// A connection is reused only by its own host pair, once its flow is done, the one
    /// freed last first; arrivals after the end open nothing.
    #[test]
    fn reuse_follows_the_idle_stack_of_each_pair() {
        let arr = [
            arrival(0, 0, 1),   // conn 5
            arrival(10, 0, 1),  // conn 6 (5 busy until 100)
            arrival(20, 1, 0),  // conn 7 (another pair)
            arrival(150, 0, 1), // 5 and 6 both free (100, 110): the last freed, 6
            arrival(160, 0, 1), // then 5
            arrival(170, 0, 1), // both busy again: conn 8
            arrival(999, 0, 1), // at the end: none
        ];
        let c = reused_connections(&arr, 5, 999, Split::default(), |_| 100);
        assert_eq!(c, vec![5, 6, 7, 6, 5, 8, NO_CONN]);
        // The pairs' runs in chunks of one, on three threads: the same.
        let one = Split { threads: NonZeroUsize::new(3).unwrap(), chunk: NonZeroUsize::MIN };
        assert_eq!(reused_connections(&arr, 5, 999, one, |_| 100), c);
    }
}
