//! # ecnlab-estimate
//!
//! A fabric-wide estimate of flow completion times after Parsimon (Zhao, Goyal, Alizadeh
//! and Anderson, "Scalable Tail Latency Estimates for Data Center Networks", NSDI 2023):
//! a fabric too large to simulate whole is cut into one simulation per directed link, links
//! with alike workloads share one, and each flow's FCT is its FCT alone on its path plus the
//! delays of the links it crosses. The link simulations are ecnlab's own engine
//! (`ecnlab_sim`), with the scenario's transport, hosts and switch settings; they are
//! independent, so they run on every core, or on a Dask cluster (`python/ecnlab/estimate`).
//!
//! The stages, one module each, in the order a [`Plan`] runs them:
//! 1. [`flows`]: the scenario's flows and their connections, as the exact run has them;
//! 2. [`decompose`]: every flow routed by the simulator's own routing and ECMP hash, and what
//!    each link carries;
//! 3. [`cluster`]: links whose workloads are alike, one simulated for all;
//! 4. [`linksim`]: each simulated link's scenario; [`alone`]: each path's FCT alone;
//!    [`job`]: running either ([`Plan::job`], [`job::run_job`]);
//! 5. [`combine`]: delays bucketed by size and class, added along each path;
//!    [`output`]: `summary.json` in the keys of `ecnlab run`, marked approximate, and the
//!    per-flow and per-link files.
//!
//! The passes over every flow (decomposition's, combination's, `flows.csv`'s rows) run on
//! this machine's threads in fixed chunks merged in order ([`passes`], [`Options::split`]):
//! the same result whatever the number of threads.
//!
//! Deviations from Parsimon, each for a reason of ecnlab's: link simulations are packet
//! simulations of the scenario's own hosts (slow start, persistent connections, PIAS,
//! classes and schedulers), so a link's delay is measured against the flow's FCT alone on
//! that simulation's path, not its ideal FCT ([`alone`]); delays are drawn per class as well
//! as per size (strict priority makes a class's delays its own); a gain (a flow faster than
//! alone on a warm connection) is counted once per path ([`combine`]).
//!
//! Not modelled (one link at a time cannot see them): queueing of ACKs behind the reverse
//! direction's data; a shared buffer pool's other ports; PFC pauses spreading beyond one
//! hop. `[rtt_variation]` is refused, `[[probes]]` are not estimated.

pub mod alone;
pub mod cluster;
pub mod combine;
pub mod decompose;
pub mod flows;
pub mod job;
pub mod linksim;
pub mod output;
pub mod passes;

use alone::{Chains, Table};
use cluster::Cluster;
use combine::{Delays, PathDelay};
use decompose::{real_chain, Crossing};
use ecnlab_core::rng::derive_seed;
use ecnlab_sim::topology::Net;
use ecnlab_sim::Scenario;
use flows::{Fabric, FabricFlow, Paths};
use job::{JobOutput, JobSpec, PortOut};
use linksim::LinkSim;
use std::num::NonZeroU64;
use std::time::Instant;

/// SHA-256 of this crate's sources (build.rs): what a Dask worker must share with the
/// driver, with the engine's fingerprint, to run its jobs.
pub const BUILD: &str = env!("ECNLAB_ESTIMATE_BUILD");

/// The estimate's own random streams (of the scenario's seed): a link simulation's seed,
/// an alone simulation's, and the delays drawn for clustered links. The simulator never
/// draws from them (`ecnlab_core::rng::Stream` names the simulator's).
pub const LINK_STREAM: u64 = 0xE571_0000_0000;
pub const ALONE_STREAM: u64 = 0xE572_0000_0000;
pub const SAMPLE_STREAM: u64 = 0xE573_0000_0000;

/// How the estimate is made.
#[derive(Clone, Debug)]
pub struct Options {
    /// Clustering threshold ([`cluster`]): 0 simulates every link.
    pub threshold: f64,
    /// Senders (and receivers) of a link simulation before hosts are merged ([`linksim`]).
    pub max_hosts: usize,
    /// Which link simulations cap their senders' windows ([`linksim::WindowCap`]).
    pub window_cap: linksim::WindowCap,
    /// How the passes over every flow are split over threads ([`passes`]; the result does
    /// not depend on it).
    pub split: passes::Split,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: 0.1,
            max_hosts: 1000,
            window_cap: linksim::WindowCap::UnmarkedNics,
            split: passes::Split::default(),
        }
    }
}

/// A link that carries traffic: its load, and its cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRow {
    pub link: u32,
    pub flows: u32,
    pub bytes: u64,
    pub load: f64,
    /// Index of its cluster in [`Plan::clusters`] (= of its simulation).
    pub cluster: u32,
}

/// One job of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// The simulation of cluster `k`'s representative link.
    Link(u32),
    /// The flows alone on chain `c`.
    Alone(u32),
}

/// An estimate under way: decomposed and clustered, its simulations handed out as jobs
/// ([`Plan::job`]) and their outputs taken back ([`Plan::set_output`]) in any order, then
/// combined into an [`Estimate`] ([`Plan::finish`]).
pub struct Plan {
    fab: Fabric,
    opts: Options,
    flows: Vec<FabricFlow>,
    n_listed: usize,
    paths: Paths,
    links: Vec<LinkRow>,
    clusters: Vec<Cluster>,
    sims: Vec<LinkSim>,
    crossings: Vec<Vec<Crossing>>,
    chains: Chains,
    grids: Vec<Vec<u64>>,
    outputs: Vec<Option<JobOutput>>,
    /// The data segments the exact run would carry, each counted at every link of its path
    /// (sized flows; a long-lived one counts its first segment): what its cost grows with.
    pub segment_hops: u64,
    /// Wall-clock seconds of each stage so far.
    pub stages: Vec<(&'static str, f64)>,
}

impl Plan {
    /// Decompose and cluster a validated scenario.
    pub fn new(scn: Scenario, seed: u64, opts: Options) -> Result<Plan, String> {
        if scn.rtt_variation.is_some() {
            return Err("rtt_variation: not supported by the estimate (a connection's extra delay is drawn as the \
                        exact run opens it; run the scenario exactly)"
                .into());
        }
        let t0 = Instant::now();
        let fab = Fabric::new(scn, seed)?;
        let (flows, paths) = flows::fabric_flows(&fab, opts.split)?;
        let n_listed = fab.scn.flows.iter().map(|f| f.count as usize).sum();
        let decompose::Loads { loads, mut chains, segment_hops } = decompose::loads(&fab, &flows, n_listed, opts.split);
        let t1 = Instant::now();
        let features: Vec<cluster::Features> = loads
            .iter()
            .enumerate()
            .filter_map(|(l, load)| load.as_ref().map(|load| cluster::features(&fab, l as u32, load)))
            .collect();
        let clusters = cluster::cluster(&features, opts.threshold);
        let mut cluster_of = vec![u32::MAX; fab.net.links.len()];
        for (k, c) in clusters.iter().enumerate() {
            for &m in &c.members {
                cluster_of[m as usize] = k as u32;
            }
        }
        let links = features
            .iter()
            .map(|ft| {
                let load = loads[ft.link as usize].as_ref().expect("a link with features has a load");
                LinkRow {
                    link: ft.link,
                    flows: load.flows,
                    bytes: load.bytes,
                    load: ft.load,
                    cluster: cluster_of[ft.link as usize],
                }
            })
            .collect();
        drop(loads);
        let t2 = Instant::now();
        let reps: Vec<u32> = clusters.iter().map(|c| c.representative).collect();
        let crossings = decompose::crossings(&fab, &flows, n_listed, &reps, opts.split);
        let sims = reps
            .iter()
            .zip(&crossings)
            .map(|(&l, cr)| linksim::build(&fab, &flows, l, cr, &mut chains, 0, &opts).0)
            .collect();
        let grids = chains.sizes.iter().map(alone::grid).collect();
        let n_jobs = clusters.len() + chains.list.len();
        let stages = vec![
            ("decompose", (t1 - t0).as_secs_f64() + t2.elapsed().as_secs_f64()),
            ("cluster", (t2 - t1).as_secs_f64()),
        ];
        Ok(Plan {
            fab,
            opts,
            flows,
            n_listed,
            paths,
            links,
            clusters,
            sims,
            crossings,
            chains,
            grids,
            outputs: vec![None; n_jobs],
            segment_hops,
            stages,
        })
    }

    pub fn n_jobs(&self) -> usize {
        self.outputs.len()
    }

    pub fn kind(&self, i: usize) -> JobKind {
        if i < self.clusters.len() {
            JobKind::Link(i as u32)
        } else {
            JobKind::Alone((i - self.clusters.len()) as u32)
        }
    }

    /// Job `i`'s simulation (each seeded from the scenario's seed and the link's, or the
    /// chain's, identity).
    pub fn job(&self, i: usize) -> JobSpec {
        let seed = self.fab.seed;
        match self.kind(i) {
            JobKind::Link(k) => {
                let l = self.clusters[k as usize].representative;
                let mut chains = Chains::default();
                let s = derive_seed(seed, LINK_STREAM + l as u64);
                linksim::build(&self.fab, &self.flows, l, &self.crossings[k as usize], &mut chains, s, &self.opts).1
            }
            JobKind::Alone(c) => {
                let s = derive_seed(seed, ALONE_STREAM + c as u64);
                alone::alone_job(
                    &self.fab.scn,
                    &self.fab.net.tiers,
                    &self.chains.list[c as usize],
                    &self.grids[c as usize],
                    s,
                )
            }
        }
    }

    /// Job `i`'s output. Err: it does not fit the job (a bug, or another ecnlab's worker).
    pub fn set_output(&mut self, i: usize, out: JobOutput) -> Result<(), String> {
        let want = match self.kind(i) {
            JobKind::Link(k) => self.sims[k as usize].flows.len(),
            JobKind::Alone(c) => self.grids[c as usize].len(),
        };
        if out.flows.len() != want {
            return Err(format!("job {i}: {} flows came back, {want} were sent", out.flows.len()));
        }
        if let JobKind::Link(k) = self.kind(i) {
            self.crossings[k as usize] = Vec::new(); // its job is done: no longer needed
        }
        self.outputs[i] = Some(out);
        Ok(())
    }

    pub fn clusters(&self) -> &[Cluster] {
        &self.clusters
    }
    pub fn links(&self) -> &[LinkRow] {
        &self.links
    }
    pub fn flows(&self) -> &[FabricFlow] {
        &self.flows
    }
    pub fn fabric(&self) -> &Fabric {
        &self.fab
    }
    pub fn paths(&self) -> Paths {
        self.paths
    }
    pub fn options(&self) -> &Options {
        &self.opts
    }
    /// Job `i`'s output, if it came back.
    pub fn output(&self, i: usize) -> Option<&JobOutput> {
        self.outputs[i].as_ref()
    }
    /// The window caps (segments) of the link simulations that have one
    /// ([`linksim::WindowCap`]).
    pub fn window_caps(&self) -> Vec<u32> {
        self.sims.iter().filter_map(|s| s.max_cwnd).collect()
    }
    pub fn n_alone(&self) -> usize {
        self.chains.list.len()
    }

    /// Combine the jobs' outputs into the [`Estimate`], which keeps only what the outputs are
    /// written from: the link simulations' scenarios and flows, the crossings, the alone
    /// simulations and the routing table are freed before the summary and `flows.csv` are
    /// made (at 6,144 hosts and 23 M flows, about 0.3 GB of the peak). Err: as
    /// [`Plan::combine`].
    pub fn finish(self) -> Result<Estimate, String> {
        let Combined { est } = self.combine()?;
        let window_caps = self.window_caps();
        let n_alone = self.n_alone();
        let k0 = self.clusters.len();
        let (mut events, mut packet_hops) = (0, 0);
        let mut ports = Vec::with_capacity(k0);
        for (i, o) in self.outputs.into_iter().enumerate() {
            let o = o.expect("combine found every output");
            events += o.events;
            packet_hops += o.packet_hops;
            if i < k0 {
                ports.push(o.port);
            }
        }
        let Fabric { scn, seed, net, end_ns, .. } = self.fab;
        Ok(Estimate {
            scn,
            seed,
            net,
            end_ns,
            opts: self.opts,
            flows: self.flows,
            paths: self.paths,
            links: self.links,
            clusters: self.clusters,
            ports,
            events,
            packet_hops,
            window_caps,
            n_alone,
            est,
            stages: self.stages,
        })
    }

    /// Combine the jobs' outputs into every flow's estimate, on the plan's threads ([`Options::split`]; each
    /// flow's is its own: the same whatever their number). Err: a job's output is missing,
    /// or an alone simulation finished no flow.
    pub fn combine(&self) -> Result<Combined, String> {
        let delays = self.path_delays()?;
        let end_ns = self.fab.end_ns;
        let mut est = Vec::with_capacity(self.flows.len());
        let work = |chunk: &[usize]| -> Vec<FlowEstimate> {
            let one = |&i: &usize| {
                let f = &self.flows[i];
                if !f.starts_before(end_ns) {
                    return FlowEstimate::default();
                }
                self.flow_estimate(&delays, i, &self.fab.data_path(f), |_, _, _, _| {})
            };
            chunk.iter().map(one).collect()
        };
        passes::in_chunks(0..self.flows.len(), self.opts.split, work, |part| est.extend(part));
        Ok(Combined { est })
    }

    /// [`Plan::combine`] on this thread, telling `each(flow, link, delay ns, timeouts)` every
    /// delay a flow's estimate adds up (its own where the link was simulated, else drawn):
    /// where a flow's time goes (`examples/explain.rs`).
    pub fn combine_with(&self, mut each: impl FnMut(u32, u32, f64, u32)) -> Result<Combined, String> {
        let delays = self.path_delays()?;
        let mut est = vec![FlowEstimate::default(); self.flows.len()];
        decompose::for_each_path(&self.fab, &self.flows, self.n_listed, |i, _, fwd| {
            est[i] = self.flow_estimate(&delays, i, fwd, &mut each);
        });
        Ok(Combined { est })
    }

    /// What the combination reads from the jobs' outputs: each chain's FCTs alone, each
    /// simulated link's delays, and each link's cluster.
    fn path_delays(&self) -> Result<PathDelays, String> {
        let out = |i: usize| self.outputs[i].as_ref().ok_or_else(|| format!("job {i} has no output"));
        let k0 = self.clusters.len();
        let mut tables = Vec::with_capacity(self.chains.list.len());
        for c in 0..self.chains.list.len() {
            let o = out(k0 + c)?;
            let fl: Vec<(Option<u64>, u64, u64, u32)> =
                o.flows.iter().map(|f| (f.fct_ns, f.ideal_ns, f.start_ns, f.timeouts)).collect();
            tables.push(Table::from_fcts(&self.grids[c], &fl).map_err(|e| format!("alone simulation {c}: {e}"))?);
        }
        let mss = self.fab.mss() as u64;
        let mut delays = Vec::with_capacity(k0);
        for (k, sim) in self.sims.iter().enumerate() {
            let o = out(k)?;
            let mut d = Vec::with_capacity(sim.flows.len());
            for ((&fid, &chain), fo) in sim.flows.iter().zip(&sim.chains).zip(&o.flows) {
                let f = &self.flows[fid as usize];
                let Some(size) = f.size else { continue };
                let alone = fo.ideal_ns as f64 + tables[chain as usize].excess_ns(size.get().div_ceil(mss).max(1));
                let q = fo.fct_ns.map_or(f64::INFINITY, |fct| fct as f64 - alone);
                d.push((fid, f.class, size.get(), q, fo.timeouts));
            }
            delays.push(Delays::new(d, mss));
        }
        let mut cluster_of = vec![u32::MAX; self.fab.net.links.len()];
        for r in &self.links {
            cluster_of[r.link as usize] = r.cluster;
        }
        Ok(PathDelays { tables, delays, cluster_of })
    }

    /// Flow `i`'s estimate, over its data path `fwd`: its FCT alone on the path plus the
    /// delays of its links (`each` told of each).
    fn flow_estimate(
        &self,
        pd: &PathDelays,
        i: usize,
        fwd: &[u32],
        mut each: impl FnMut(u32, u32, f64, u32),
    ) -> FlowEstimate {
        let f = &self.flows[i];
        let Some(size) = f.size else { return FlowEstimate::default() };
        let mss = self.fab.mss() as u64;
        let ideal = self.fab.ideal_ns(f, fwd, &self.fab.ack_path(f));
        let chain = self.chains.get(&real_chain(&self.fab, fwd, f.class)).expect("every path's chain was seen");
        let alone = ideal as f64 + pd.tables[chain as usize].excess_ns(size.get().div_ceil(mss).max(1));
        let mut path = PathDelay::default();
        for &l in fwd {
            let k = pd.cluster_of[l as usize] as usize;
            let d = &pd.delays[k];
            let got = if self.clusters[k].representative == l {
                d.own(i as u32)
            } else {
                d.draw(f.class, size.get(), mss, &mut combine::draw_rng(self.fab.seed, i as u32, l))
            };
            if let Some((q, t)) = got {
                each(i as u32, l, q, t);
                path.add(q, t);
            }
        }
        let fct = (alone + path.total_ns()).max(ideal as f64);
        FlowEstimate::new(ideal, fct.is_finite().then(|| fct.round() as u64), path.timeouts)
    }
}

/// What [`Plan::flow_estimate`] reads ([`Plan::path_delays`]).
struct PathDelays {
    /// Each chain's FCT alone, by size.
    tables: Vec<Table>,
    /// Each cluster's representative's delays.
    delays: Vec<Delays>,
    /// Each link's cluster (`u32::MAX`: it carries nothing).
    cluster_of: Vec<u32>,
}

/// A flow's estimate: one per flow of the fabric, so it is kept small (24 bytes: 23 M flows
/// hold 0.55 GB; with `Option<u64>` it was 32).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowEstimate {
    ideal_ns: u64,
    fct_ns: Option<NonZeroU64>,
    pub timeouts: u32,
}

const _: () = assert!(std::mem::size_of::<FlowEstimate>() == 24);

impl FlowEstimate {
    pub fn new(ideal_ns: u64, fct_ns: Option<u64>, timeouts: u32) -> FlowEstimate {
        // An FCT is at least the ideal, which is above 0: a 0 would read as "not finished".
        FlowEstimate { ideal_ns, fct_ns: fct_ns.map(|t| NonZeroU64::new(t).unwrap_or(NonZeroU64::MIN)), timeouts }
    }

    /// The flow's FCT alone on an idle fabric (ns), as `flows.csv`'s `ideal_fct_us`.
    pub fn ideal_ns(&self) -> u64 {
        self.ideal_ns
    }

    /// The estimated FCT (ns). None: it does not finish in a link simulation (before the
    /// end), or long-lived, or it never starts.
    pub fn fct_ns(&self) -> Option<u64> {
        self.fct_ns.map(NonZeroU64::get)
    }
}

/// Every flow's estimate, in the order of [`Plan::flows`].
pub struct Combined {
    pub est: Vec<FlowEstimate>,
}

/// A finished estimate ([`Plan::finish`]): every flow's estimate, and what [`output`] writes
/// beside it.
pub struct Estimate {
    pub scn: Scenario,
    pub seed: u64,
    pub net: Net,
    /// `duration` (ns): flows arriving at or after it never start.
    pub end_ns: u64,
    pub opts: Options,
    pub flows: Vec<FabricFlow>,
    pub paths: Paths,
    pub links: Vec<LinkRow>,
    pub clusters: Vec<Cluster>,
    /// What each cluster's representative link measured, by cluster.
    pub ports: Vec<PortOut>,
    /// Events and packet-hops of every job, link and alone simulations.
    pub events: u64,
    pub packet_hops: u64,
    /// [`Plan::window_caps`].
    pub window_caps: Vec<u32>,
    /// Alone simulations ([`alone`]).
    pub n_alone: usize,
    /// Every flow's estimate, in the order of `flows`.
    pub est: Vec<FlowEstimate>,
    /// Wall-clock seconds of the plan's stages ([`Plan::stages`]).
    pub stages: Vec<(&'static str, f64)>,
}

/// Run every job of `plan` on this thread, in order (tests, and small estimates).
pub fn run_serially(plan: &mut Plan) -> Result<(), String> {
    for i in 0..plan.n_jobs() {
        let out = job::run_job(&plan.job(i), || false).map_err(|e| match e {
            job::JobError::Failed(m) => m,
            job::JobError::Stopped => "stopped".into(),
        })?;
        plan.set_output(i, out)?;
    }
    Ok(())
}
