//! The decomposition on a k = 4 fat-tree (Al-Fares et al.: 16 hosts, 20 switches, two
//! equal-cost choices per tier): every flow's links are its route's, and its route is the one
//! the exact simulation takes.

use ecnlab_estimate::{Options, Plan};
use ecnlab_sim::metrics::port_name;
use ecnlab_sim::Scenario;
use std::collections::BTreeSet;

const FAT_TREE: &str = "name = \"ft\"\nduration = \"20ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n\
    link_rate = \"40Gbps\"\nlink_delay = \"1us\"\nhost_rate = \"10Gbps\"\npod_delay = \"2us\"\n[switch]\n\
    buffer = \"1MB\"\n[marking]\nscheme = \"per_queue\"\n[marking.threshold]\nk = \"60KB\"\n[transport]\n\
    cc = \"dctcp\"\n";

fn scenario(text: &str) -> Scenario {
    let s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    s.validate().unwrap();
    s
}

/// Hosts 0..16: 2 per edge switch, 4 per pod. Twelve flows between chosen pairs: under one
/// edge switch (2 links), within a pod (4), across pods (6); each on its own connection, so
/// each takes its own ECMP draw.
#[test]
fn every_flow_crosses_exactly_its_routes_links_and_the_exact_runs() {
    let pairs = [(0, 1), (2, 3), (0, 2), (1, 3), (4, 7), (5, 6), (0, 4), (1, 9), (3, 14), (8, 12), (10, 15), (13, 6)];
    let mut text = String::from(FAT_TREE);
    for (i, (s, d)) in pairs.iter().enumerate() {
        text.push_str(&format!("[[flows]]\nsrc = {s}\ndst = {d}\nsize = \"30000B\"\nstart = \"{}us\"\n", 50 * i));
    }
    let scn = scenario(&text);
    let exact = ecnlab_sim::run(&scn, 7).unwrap();
    let plan = Plan::new(scn, 7, Options::default()).unwrap();
    let fab = plan.fabric();
    let net = &fab.net;
    let mut used = BTreeSet::new();
    let mut per_link = vec![0u32; net.links.len()];
    for (i, f) in plan.flows().iter().enumerate() {
        let (fwd, rev) = fab.paths(f);
        let (src, dst) = (f.src as usize, f.dst as usize);
        let want = if src / 2 == dst / 2 {
            2
        } else if src / 4 == dst / 4 {
            4
        } else {
            6
        };
        for (path, from, to) in [(&fwd, src, dst), (&rev, dst, src)] {
            assert_eq!(path.len(), want, "flow {i} {from}->{to}: {path:?}");
            assert_eq!(net.links[path[0] as usize].from, from);
            assert_eq!(net.links[*path.last().unwrap() as usize].to, to);
            assert!(path.windows(2).all(|w| net.links[w[0] as usize].to == net.links[w[1] as usize].from), "{path:?}");
        }
        for &l in &fwd {
            per_link[l as usize] += 1;
        }
        used.extend(
            fwd.iter().chain(&rev).filter(|&&l| net.is_switch(net.links[l as usize].from)).map(|&l| l as usize),
        );
        // The exact run's ideal FCT is over its own paths: equal delays, equal path.
        let ideal = fab.ideal_ns(f, &fwd, &rev) as f64 / 1e3;
        assert!((ideal - exact.flows[i].ideal_fct_us.unwrap()).abs() < 1e-6, "flow {i}: ideal {ideal} us");
    }
    // The switch ports the exact run sent on (data and ACKs) are those of the routes.
    let exact_ports: BTreeSet<String> = exact.summary.ports.as_ref().unwrap().iter().map(|p| p.port.clone()).collect();
    let routed: BTreeSet<String> = used.iter().map(|&l| port_name(net, l)).collect();
    assert_eq!(routed, exact_ports);
    assert!(routed.len() > 20, "the flows spread over the fabric: {}", routed.len());
    // Each link that carries data carries exactly the flows whose route crosses it.
    let rows: Vec<(u32, u32)> = plan.links().iter().map(|r| (r.link, r.flows)).collect();
    let want: Vec<(u32, u32)> =
        per_link.iter().enumerate().filter(|(_, &n)| n > 0).map(|(l, &n)| (l as u32, n)).collect();
    assert_eq!(rows, want);
}
