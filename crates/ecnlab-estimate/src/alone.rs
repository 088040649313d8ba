//! The FCT of a flow alone on its path, with ecnlab's engine: what every link simulation of
//! a flow holds in common, and so what the combination must count once.
//!
//! Parsimon's link simulations start flows at line rate (a window of one BDP), so a flow's
//! FCT in a link simulation less its ideal FCT is the delay of that link alone, and the
//! delays of a path add up. ecnlab's senders start in slow start: a flow alone already
//! takes its extra round trips, in every link simulation it crosses. So each link's
//! contribution is the flow's FCT there less its FCT *alone on that link simulation's path*
//! ([`crate::combine`]), and the estimate is the flow's FCT alone on its real path plus the
//! contributions of its links.
//!
//! Alone FCTs are simulated, not modelled: a path is a [`Chain`] of hops (rate, delay, the
//! egress port's settings), and one simulation per chain and class runs flows of a grid of
//! sizes one after another on fresh connections, far enough apart to never meet
//! ([`alone_job`]). The excess over the ideal FCT is kept per size on the grid: every
//! segment count up to [`EXACT_UP_TO`], then every size the chain's flows have while they are
//! at most [`EXACT_SIZES`] (so that the alone FCT is simulated, not interpolated), else sizes
//! 8 % apart (25 % above 1,024 segments), interpolated linearly between
//! ([`Table::excess_ns`]). Interpolation is not exact: with TSO an alone FCT is a staircase
//! of skbs and slow-start rounds, and between two grid sizes 8 % apart it was off by up to
//! 5.6 us on the one-bottleneck answer key (10 Gbps, flows of 65 to 149 segments).

use crate::job::JobSpec;
use ecnlab_core::units::{tx_time_ns, Duration, Rate};
use ecnlab_sim::config::{FlowSpec, MetricsConfig, Topology};
use ecnlab_sim::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Segment counts simulated one by one (slow start's steps are sharp here).
pub const EXACT_UP_TO: u64 = 64;
/// Above it, grid sizes grow by this factor...
const GRID_STEP: f64 = 1.08;
/// ...and above this many segments by [`COARSE_STEP`]: a long flow's excess over its ideal
/// FCT changes slowly with its size (slow start is over), and the grid's largest sizes are
/// what the alone simulations spend their time on (a geometric grid of step s costs about
/// s / (s - 1) times its largest flow).
const COARSE_FROM: u64 = 1024;
const COARSE_STEP: f64 = 1.25;
/// ...unless the chain's flows have at most this many distinct sizes above it: then those.
pub const EXACT_SIZES: usize = 256;

/// The sizes (segments) of a chain's flows: each of them while they are few, else the
/// largest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    pub max: u64,
    /// Those above [`EXACT_UP_TO`]; None: more than [`EXACT_SIZES`].
    above: Option<std::collections::BTreeSet<u64>>,
}

impl Sizes {
    fn new() -> Sizes {
        Sizes { max: 0, above: Some(Default::default()) }
    }
    fn add(&mut self, segments: u64) {
        self.max = self.max.max(segments);
        if segments > EXACT_UP_TO {
            if let Some(a) = &mut self.above {
                a.insert(segments);
                if a.len() > EXACT_SIZES {
                    self.above = None;
                }
            }
        }
    }
    /// Those of `other` too (as if its flows had been added).
    fn merge(&mut self, other: Sizes) {
        self.max = self.max.max(other.max);
        self.above = match (self.above.take(), other.above) {
            (Some(mut a), Some(b)) => {
                a.extend(b);
                (a.len() <= EXACT_SIZES).then_some(a)
            }
            _ => None,
        };
    }
}

/// The egress port a hop leaves: a host's NIC, or a switch: of the fabric's tier of that
/// index (`Net::tiers`), or None: of a link simulation (whose switches are one tier's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Egress {
    Nic,
    Switch(Option<u16>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Hop {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub egress: Egress,
}

/// The tier of a link simulation's switches in its topology file (the file's default).
pub const LINK_SIM_TIER: &str = "switch";

/// Whose switch settings a simulation's switches take.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Settings {
    /// The scenario's: `[switch]`, `[marking]` and `[tiers]`, switches in their real tiers.
    Fabric,
    /// Those of one tier for every switch (a link simulation: [`crate::linksim`]).
    Tier(String),
}

/// A path from a sender to a receiver, and the class its flows are sent in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Chain {
    pub settings: Settings,
    /// The first hop leaves the sender's NIC, the others switches.
    pub hops: Vec<Hop>,
    pub class: u8,
    /// The senders' window cap (segments) of the link simulation this chain is part of
    /// ([`crate::linksim::WindowCap`]), so that a flow alone on it is capped as it is there;
    /// None: the scenario's `transport.max_cwnd`.
    pub max_cwnd: Option<u32>,
}

/// The chains the flows use, each with the sizes of the flows that use it.
#[derive(Default)]
pub struct Chains {
    pub list: Vec<Chain>,
    pub sizes: Vec<Sizes>,
    index: HashMap<Chain, u32>,
}

impl Chains {
    /// The id of `chain`, noting a flow of `segments` on it.
    pub fn id(&mut self, chain: Chain, segments: u64) -> u32 {
        let id = self.slot(chain);
        self.sizes[id as usize].add(segments);
        id
    }

    /// Those of `later` too, after these: ids as if its flows had been noted after this one's.
    pub fn merge(&mut self, later: Chains) {
        for (chain, sizes) in later.list.into_iter().zip(later.sizes) {
            let id = self.slot(chain);
            self.sizes[id as usize].merge(sizes);
        }
    }

    /// The id of `chain`, a new one (of no flow yet) if it was not seen.
    fn slot(&mut self, chain: Chain) -> u32 {
        match self.index.get(&chain) {
            Some(&id) => id,
            None => {
                let id = self.list.len() as u32;
                self.index.insert(chain.clone(), id);
                self.list.push(chain);
                self.sizes.push(Sizes::new());
                id
            }
        }
    }

    /// The id of a chain seen before.
    pub fn get(&self, chain: &Chain) -> Option<u32> {
        self.index.get(chain).copied()
    }
}

/// The sizes, in segments, simulated for a chain's flows (module docs).
pub fn grid(sizes: &Sizes) -> Vec<u64> {
    let max = sizes.max;
    let mut g: Vec<u64> = (1..=EXACT_UP_TO.min(max.max(1))).collect();
    if let Some(above) = &sizes.above {
        g.extend(above.iter().copied());
        return g;
    }
    let mut n = EXACT_UP_TO;
    while n < max {
        let step = if n < COARSE_FROM { GRID_STEP } else { COARSE_STEP };
        n = ((n as f64 * step).ceil() as u64).min(max);
        g.push(n);
    }
    g
}

/// The topology file of a chain: `h0`, the switches `s1..`, `h1`; `tiers`: the fabric's.
pub fn chain_topology(chain: &Chain, tiers: &[String]) -> String {
    let mut t = String::from("hosts = 2\n");
    let name = |i: usize, n: usize| {
        if i == 0 {
            "h0".to_string()
        } else if i == n {
            "h1".to_string()
        } else {
            format!("s{i}")
        }
    };
    let n = chain.hops.len();
    for (i, h) in chain.hops.iter().enumerate().skip(1) {
        let tier = match h.egress {
            Egress::Switch(Some(t)) => tiers[t as usize].as_str(),
            Egress::Switch(None) | Egress::Nic => LINK_SIM_TIER,
        };
        t.push_str(&format!("[[switches]]\nname = \"s{i}\"\ntier = \"{tier}\"\n"));
    }
    for (i, h) in chain.hops.iter().enumerate() {
        t.push_str(&format!(
            "[[links]]\nends = [\"{}\", \"{}\"]\nrate = \"{}\"\ndelay = \"{}\"\n",
            name(i, n),
            name(i + 1, n),
            Rate(h.rate_bps),
            Duration(h.delay_ns)
        ));
    }
    t
}

/// The switch and marking settings of a simulation run with `settings`, in `scn`.
pub fn apply_settings(scn: &mut Scenario, settings: &Settings) {
    if let Settings::Tier(tier) = settings {
        let (sw, m) = scn.tier_settings(tier);
        let (sw, m) = (sw.clone(), m.clone());
        scn.switch = sw;
        scn.marking = m;
        scn.tiers.clear();
    }
}

/// A scenario with nothing of the original's traffic, probes or time series: the base of
/// every simulation of the estimate.
pub fn bare(scn: &Scenario, name: &str, settings: &Settings, seed: u64) -> Scenario {
    let mut s = scn.clone();
    s.name = name.to_string();
    s.description.clear();
    s.claim.clear();
    s.seed = seed;
    s.topology = Topology::File { file: String::new() };
    apply_settings(&mut s, settings);
    s.flows.clear();
    s.traffic.clear();
    s.probes.clear();
    s.rtt_variation = None;
    s.metrics = MetricsConfig { timeseries: false, ..MetricsConfig::default() };
    s
}

/// The simulation of the flows of `grid` segments alone on `chain`, one after another.
pub fn alone_job(scn: &Scenario, tiers: &[String], chain: &Chain, grid: &[u64], seed: u64) -> JobSpec {
    let mss = scn.transport.mss as u64;
    let mut s = bare(scn, "alone", &chain.settings, seed);
    if let Some(cap) = chain.max_cwnd {
        s.transport.max_cwnd = cap;
    }
    // A topology's `[tiers]` must all be in it: keep those of the chain's switches.
    let used: Vec<&str> = chain
        .hops
        .iter()
        .filter_map(|h| match h.egress {
            Egress::Switch(Some(t)) => Some(tiers[t as usize].as_str()),
            _ => None,
        })
        .collect();
    s.tiers.retain(|name, _| used.contains(&name.as_str()));
    let seg = mss + ecnlab_sim::packet::TCP_IP_HEADER as u64;
    let one_way: u64 = chain.hops.iter().map(|h| h.delay_ns + tx_time_ns(seg, h.rate_bps)).sum();
    let slowest = chain.hops.iter().map(|h| h.rate_bps).min().unwrap_or(1).max(1);
    let rto = scn.transport.rto_min.0.max(scn.transport.rto_init.0);
    let mut t = 0u64;
    for &n in grid {
        let size = n * mss;
        s.flows.push(FlowSpec {
            src: 0,
            dst: 1,
            class: chain.class,
            count: 1,
            start: Duration(t),
            start_jitter: None,
            stop: None,
            size: Some(ecnlab_core::units::ByteSize(size)),
            rate: None,
            cc: None,
        });
        // Room for the flow, slow start, a loss and its timeouts: the next never meets it
        // (checked when the results come back, `Table::from_fcts`).
        t += 4 * tx_time_ns(size + n * seg, slowest) + 40 * one_way + 4 * rto + 1_000_000;
    }
    s.duration = Duration(t.min(ecnlab_core::units::MAX_TIME_NS));
    JobSpec::new(s, chain_topology(chain, tiers), None, None)
}

/// A chain's excess FCT over the ideal, per grid size.
#[derive(Clone, Debug)]
pub struct Table {
    grid: Vec<u64>,
    excess: Vec<f64>,
}

impl Table {
    /// From the alone job's flows (`(fct, ideal, start, timeouts)` per grid size, ns): a flow
    /// that did not finish, finished after the next one started, or took a timeout is left
    /// out (its neighbours are interpolated). Why a timeout: slow start alone can overrun an
    /// unmarked queue (a 100 Gbps NIC's) and wait out an RTO at one size and not the next, a
    /// cliff of 200 ms that interpolation would spread over the sizes around it and that is
    /// no part of what a flow's link simulations share (each counts its own timeouts).
    /// Err: no flow finished alone without one.
    pub fn from_fcts(grid: &[u64], flows: &[(Option<u64>, u64, u64, u32)]) -> Result<Table, String> {
        let mut g = Vec::new();
        let mut e = Vec::new();
        for (i, (&n, &(fct, ideal, start, timeouts))) in grid.iter().zip(flows).enumerate() {
            let Some(fct) = fct.filter(|_| timeouts == 0) else { continue };
            if flows.get(i + 1).is_some_and(|next| start + fct > next.2) {
                continue;
            }
            g.push(n);
            e.push(fct as f64 - ideal as f64);
        }
        if g.is_empty() {
            return Err("no flow completed alone on its path without a timeout".into());
        }
        Ok(Table { grid: g, excess: e })
    }

    /// The excess FCT (ns) of a flow of `segments` alone: linear between grid sizes, the
    /// last grid size's beyond it.
    pub fn excess_ns(&self, segments: u64) -> f64 {
        let i = self.grid.partition_point(|&n| n < segments);
        if i == 0 {
            return self.excess[0];
        }
        if i == self.grid.len() {
            return self.excess[i - 1];
        }
        let (n0, n1) = (self.grid[i - 1] as f64, self.grid[i] as f64);
        let w = (segments as f64 - n0) / (n1 - n0);
        self.excess[i - 1] + w * (self.excess[i] - self.excess[i - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_exact_then_geometric_and_ends_at_the_largest() {
        let many = Sizes { max: 20_000, above: None };
        let g = grid(&many);
        assert_eq!(&g[..64], &(1..=64).collect::<Vec<_>>()[..]);
        assert_eq!(*g.last().unwrap(), 20_000);
        assert!(g.windows(2).all(|w| w[1] > w[0] && (w[1] as f64) <= (w[0] as f64 * COARSE_STEP).ceil()));
        assert!(g.windows(2).filter(|w| w[0] < COARSE_FROM).all(|w| (w[1] as f64) <= (w[0] as f64 * GRID_STEP).ceil()));
        assert!(g.len() < 120, "{}", g.len());
        // 8 % steps all the way would cost 13.5 x the largest.
        assert!(g.iter().sum::<u64>() < 7 * 20_000, "the alone simulations' cost: {}", g.iter().sum::<u64>());
        let mut few = Sizes::new();
        for n in [3, 1, 500, 70, 500] {
            few.add(n);
        }
        assert_eq!(grid(&few), (1..=64).chain([70, 500]).collect::<Vec<_>>(), "few sizes: each simulated");
        let mut small = Sizes::new();
        small.add(3);
        assert_eq!(grid(&small), vec![1, 2, 3]);
        for n in 65..=(65 + EXACT_SIZES as u64) {
            few.add(n);
        }
        assert!(few.above.is_none(), "too many sizes: the geometric grid");
    }

    #[test]
    fn excess_interpolates_and_skips_flows_that_met() {
        // Sizes 1, 2, 10, 11 segments; the second overran the third's start, the last timed
        // out: both left out.
        let flows = [
            (Some(110), 100, 0, 0),
            (Some(5000), 200, 1000, 0),
            (Some(1200), 1000, 2000, 0),
            (Some(9999), 1100, 9000, 1),
        ];
        let t = Table::from_fcts(&[1, 2, 10, 11], &flows).unwrap();
        assert_eq!(t.excess_ns(1), 10.0);
        assert_eq!(t.excess_ns(10), 200.0);
        assert_eq!(t.excess_ns(5), 10.0 + 190.0 * 4.0 / 9.0);
        assert_eq!(t.excess_ns(99), 200.0);
        assert_eq!(t.excess_ns(11), 200.0, "a flow that timed out alone is left out");
        assert!(Table::from_fcts(&[1], &[(None, 1, 0, 0)]).is_err());
        assert!(Table::from_fcts(&[1], &[(Some(5), 1, 0, 1)]).is_err());
    }
}
