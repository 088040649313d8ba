//! The passes over every flow on several threads (`passes`): what they compute is a single
//! loop's, and the plan and the estimate are the same whatever the split.

use ecnlab_estimate::alone::Chains;
use ecnlab_estimate::decompose::{self, real_chain, Crossing, LinkLoad};
use ecnlab_estimate::flows::{fabric_flows, Fabric};
use ecnlab_estimate::passes::Split;
use ecnlab_estimate::{run_serially, Options, Plan};
use ecnlab_sim::Scenario;
use std::num::NonZeroUsize;

/// 16 hosts on a leaf-spine, web search at 60 % load (600 flows) with persistent connections (reused
/// connections shift the ECMP keys), and listed flows with start jitter (merged into the
/// generated ones by start).
fn scenario() -> Scenario {
    let mut text = String::from(
        "name = \"p\"\nduration = \"100ms\"\n[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\n\
         hosts_per_leaf = 4\nlink_rate = \"10Gbps\"\nhost_delay = \"2us\"\ncore_delay = \"2us\"\n[switch]\nbuffer = \"300KB\"\n\
         [marking]\nscheme = \"per_queue\"\n[marking.threshold]\nk = \"30KB\"\n[transport]\ncc = \"dctcp\"\n\
         [[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.6\nflows = 600\n",
    );
    for i in 0..12 {
        text.push_str(&format!(
            "[[flows]]\nsrc = {}\ndst = {}\nsize = \"{}B\"\nstart = \"{}us\"\nstart_jitter = \"3ms\"\n",
            i % 16,
            (i * 7 + 3) % 16,
            20_000 + 9_000 * i,
            900 * i
        ));
    }
    let s = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    s.validate().unwrap();
    s
}

fn split(threads: usize, chunk: usize) -> Split {
    Split { threads: NonZeroUsize::new(threads).unwrap(), chunk: NonZeroUsize::new(chunk).unwrap() }
}

/// Splits that cut the flows into one chunk, many, and one flow each, on one and more threads.
fn splits() -> [Split; 4] {
    [split(1, 1 << 20), split(3, 97), split(2, 1), split(4, 500)]
}

#[test]
fn loads_and_crossings_are_a_single_loops_whatever_the_split() {
    let fab = Fabric::new(scenario(), 5).unwrap();
    let (flows, _) = fabric_flows(&fab, Split::default()).unwrap();
    let n_listed = 12;
    assert!(flows.len() > 600);
    // The definition: every flow that starts, in order of start, counted at each link.
    let mss = fab.mss() as u64;
    let mut loads: Vec<Option<Box<LinkLoad>>> = vec![None; fab.net.links.len()];
    let mut chains = Chains::default();
    let mut segment_hops = 0;
    let some_links: Vec<u32> = vec![0, 5, 17, 30];
    let mut crossings: Vec<Vec<Crossing>> = vec![Vec::new(); some_links.len()];
    decompose::for_each_path(&fab, &flows, n_listed, |i, f, fwd| {
        let d = decompose::one_way_ns(&fab, fwd);
        segment_hops += f.bytes().div_ceil(mss).max(1) * fwd.len() as u64;
        for (j, &l) in fwd.iter().enumerate() {
            loads[l as usize].get_or_insert_with(Default::default).add_flow(f, d);
            if let Some(k) = some_links.iter().position(|&s| s == l) {
                crossings[k].push(decompose::crossing(&fab, i as u32, fwd, j));
            }
        }
        if f.size.is_some() {
            chains.id(real_chain(&fab, fwd, f.class), f.bytes().div_ceil(mss).max(1));
        }
    });
    assert!(crossings.iter().all(|c| !c.is_empty()), "every link picked carries flows");
    for s in splits() {
        let got = decompose::loads(&fab, &flows, n_listed, s);
        assert_eq!(got.segment_hops, segment_hops, "{s:?}");
        assert_eq!(got.loads, loads, "{s:?}");
        assert_eq!(got.chains.list, chains.list, "{s:?}: chains in the order first seen");
        assert_eq!(got.chains.sizes, chains.sizes, "{s:?}");
        assert_eq!(decompose::crossings(&fab, &flows, n_listed, &some_links, s), crossings, "{s:?}");
    }
}

#[test]
fn the_plan_and_the_estimate_do_not_depend_on_the_split() {
    let plan = |s: Split| Plan::new(scenario(), 5, Options { split: s, ..Options::default() }).unwrap();
    let mut one = plan(splits()[0]);
    // The jobs as handed out (a link's job is not made again once its output is in).
    let jobs: Vec<String> = (0..one.n_jobs()).map(|i| serde_json::to_string(&one.job(i)).unwrap()).collect();
    run_serially(&mut one).unwrap();
    let est = one.combine().unwrap().est;
    let done = est.iter().filter(|e| e.fct_ns().is_some()).count();
    assert!(done > 500, "{done} of {} flows estimated", est.len());
    for s in &splits()[1..] {
        let mut other = plan(*s);
        assert_eq!(other.flows(), one.flows(), "{s:?}: the flows and their (reused) connections");
        assert_eq!(other.links(), one.links(), "{s:?}");
        assert_eq!(other.clusters(), one.clusters(), "{s:?}");
        assert_eq!((other.segment_hops, other.n_jobs()), (one.segment_hops, one.n_jobs()), "{s:?}");
        for (i, job) in jobs.iter().enumerate() {
            assert!(serde_json::to_string(&other.job(i)).unwrap() == *job, "{s:?}: job {i} differs");
            other.set_output(i, one.output(i).unwrap().clone()).unwrap();
        }
        assert_eq!(other.combine().unwrap().est, est, "{s:?}");
    }
    assert_eq!(one.combine_with(|_, _, _, _| {}).unwrap().est, est, "the combination on one thread, in order of start");
}
