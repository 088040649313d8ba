//! The window cap of the link simulations of unmarked NICs (`linksim::WindowCap`): a stock
//! NIC's link simulation caps its senders at the largest BDP of its flows' paths, alone
//! simulations of its chains the same; no other link simulation is capped, nor any with the
//! cap off or with the NICs marking.

use ecnlab_estimate::decompose::{full_segment, one_way_ns};
use ecnlab_estimate::linksim::{bdp_segments, WindowCap};
use ecnlab_estimate::{JobKind, Options, Plan};
use ecnlab_sim::Scenario;

const FAT_TREE: &str = "name = \"ft\"\nduration = \"20ms\"\n[topology]\nkind = \"fat_tree\"\nk = 4\n\
    link_rate = \"40Gbps\"\nlink_delay = \"1us\"\nhost_rate = \"10Gbps\"\npod_delay = \"2us\"\n[switch]\n\
    buffer = \"1MB\"\n[marking]\nscheme = \"per_queue\"\n[marking.threshold]\nk = \"60KB\"\n[transport]\n\
    cc = \"dctcp\"\n";

/// Host 0 sends under its edge switch (host 1), within its pod (host 2) and across pods
/// (host 9): three path lengths, the cross-pod one the longest round trip.
fn plan(extra: &str, cap: WindowCap) -> Plan {
    let mut text = format!("{FAT_TREE}{extra}");
    for (i, d) in [1, 2, 9].iter().enumerate() {
        text.push_str(&format!("[[flows]]\nsrc = 0\ndst = {d}\nsize = \"300000B\"\nstart = \"{}us\"\n", 10 * i));
    }
    let scn = Scenario::from_toml(&text).unwrap();
    scn.validate().unwrap();
    Plan::new(scn, 3, Options { threshold: 0.0, window_cap: cap, ..Options::default() }).unwrap()
}

#[test]
fn bdp_is_in_whole_segments_rounded_up() {
    // 100 Gbps x 12 us = 150,000 B = 100 segments of 1,500 B on the wire; a nanosecond more: 101.
    assert_eq!(bdp_segments(100_000_000_000, 12_000, 1500), 100);
    assert_eq!(bdp_segments(100_000_000_000, 12_001, 1500), 101);
    assert_eq!(bdp_segments(10_000_000_000, 0, 1500), 0);
}

#[test]
fn only_an_unmarked_nics_link_simulation_is_capped_at_its_longest_paths_bdp() {
    let p = plan("", WindowCap::UnmarkedNics);
    let fab = p.fabric();
    let seg = full_segment(fab);
    let longest = p.flows().iter().map(|f| 2 * one_way_ns(fab, &fab.data_path(f))).max().unwrap();
    let nic_rate = fab.net.links[fab.data_path(&p.flows()[0])[0] as usize].rate_bps;
    let want = bdp_segments(nic_rate, longest, seg) as u32;
    assert!(want > fab.scn.transport.init_cwnd, "the cap is the BDP here, not the floor: {want}");
    let (mut capped, mut alone_capped) = (0, 0);
    for i in 0..p.n_jobs() {
        let job = p.job(i);
        let cwnd = job.scenario.transport.max_cwnd;
        match p.kind(i) {
            JobKind::Link(k) => {
                let l = p.clusters()[k as usize].representative as usize;
                if fab.net.is_switch(fab.net.links[l].from) {
                    assert_eq!(cwnd, fab.scn.transport.max_cwnd, "a switch's link {l} is not capped");
                } else {
                    assert_eq!(cwnd, want, "host 0's NIC");
                    capped += 1;
                }
            }
            JobKind::Alone(_) => alone_capped += (cwnd == want) as u32,
        }
    }
    assert_eq!((capped, p.window_caps()), (1, vec![want]));
    assert!(alone_capped >= 1, "the NIC simulation's chains are simulated alone with its cap");

    for (extra, cap) in [("[host]\nnic_marking = true\n", WindowCap::UnmarkedNics), ("", WindowCap::Off)] {
        let p = plan(extra, cap);
        assert!(p.window_caps().is_empty(), "{extra} {cap:?}");
        assert!((0..p.n_jobs()).all(|i| p.job(i).scenario.transport.max_cwnd == p.fabric().scn.transport.max_cwnd));
    }
}
