//! The three-tier fabrics, topology files, per-tier switch settings and traffic matrices,
//! end to end: answer keys (an isolated flow's FCT is its ideal FCT across three tiers; ECMP
//! takes only shortest paths), determinism, and that each setting reaches the ports and
//! flows it names.

use ecnlab_sim::{run, RunOutput, Scenario};
use std::collections::BTreeMap;
use std::io::Write;

fn scenario(text: &str) -> Scenario {
    let s = Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    s.validate().unwrap_or_else(|e| panic!("{e}\n{text}"));
    s
}

const FAT_TREE: &str = r#"
name = "t"
duration = "50ms"
[topology]
kind = "fat_tree"
k = 4
link_rate = "400Gbps"
link_delay = "1us"
host_rate = "100Gbps"
pod_delay = "2us"
[switch]
buffer = "4MB"
"#;

const CLOS: &str = r#"
name = "t"
duration = "50ms"
[topology]
kind = "clos"
pods = 2
leaves_per_pod = 2
spines_per_pod = 2
super_spines_per_plane = 2
hosts_per_leaf = 4
link_rate = "400Gbps"
link_delay = "1us"
host_rate = "100Gbps"
core_delay = "3us"
[switch]
buffer = "4MB"
"#;

/// A flow alone, its window never limiting: paced by the links alone, it takes its ideal
/// FCT (one base RTT over its own path plus its bytes at the bottleneck), within one
/// packet's time at the hosts' 100 Gbps, across pods of a fat-tree and of a Clos (6 links
/// each way), within a pod (4) and under one ToR (2).
#[test]
fn an_isolated_flow_takes_its_ideal_fct_across_three_tiers() {
    let flows = |dst: usize| {
        format!(
            "[transport]\nprofile = \"textbook\"\ncc = \"dctcp\"\ninit_cwnd = 100000\nmax_cwnd = 100000\n\
             [[flows]]\nsrc = 0\ndst = {dst}\nsize = \"2000000B\"\n"
        )
    };
    for (base, dsts) in [(FAT_TREE, [1, 2, 15]), (CLOS, [1, 4, 12])] {
        for dst in dsts {
            let out = run(&scenario(&format!("{base}{}", flows(dst))), 1).unwrap();
            let f = &out.flows[0];
            let (fct, ideal) = (f.fct_us.unwrap(), f.ideal_fct_us.unwrap());
            assert!((fct - ideal).abs() <= 0.12, "0 -> {dst}: fct {fct} us vs ideal {ideal} us");
            assert!(ideal > 160.0, "2 MB at 100 Gbps take 160 us: {ideal}");
        }
    }
}

fn websearch(base: &str, extra: &str) -> String {
    format!(
        "{base}[transport]\ncc = \"dctcp\"\n[marking]\nscheme = \"per_queue\"\n[marking.threshold]\nk = \"200KB\"\n\
         [[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.6\nflows = 300\n{extra}"
    )
}

fn bytes(o: &RunOutput) -> String {
    serde_json::to_string(o).unwrap()
}

/// The same scenario and seed give the same bytes; another seed other flows.
#[test]
fn fabric_runs_are_deterministic() {
    for base in [FAT_TREE, CLOS] {
        let scn = scenario(&websearch(base, ""));
        let (a, b, c) = (run(&scn, 4).unwrap(), run(&scn, 4).unwrap(), run(&scn, 5).unwrap());
        assert_eq!(bytes(&a), bytes(&b));
        assert_ne!(bytes(&a), bytes(&c));
        assert!(a.summary.flows.completed > 250, "{:?}", a.summary.flows);
    }
}

/// Per-port marks by the tier of the switch the port belongs to (port names "edge3->agg1").
fn marks_by_tier(o: &RunOutput) -> BTreeMap<String, u64> {
    let v = serde_json::to_value(&o.summary).unwrap();
    let mut out = BTreeMap::new();
    for q in v["queues"].as_array().unwrap() {
        let port = q["port"].as_str().unwrap();
        let from = port.split("->").next().unwrap();
        let tier: String = from.chars().take_while(|c| c.is_ascii_alphabetic() || *c == '_').collect();
        let marks = q["marks"].as_u64().unwrap();
        *out.entry(tier).or_insert(0) += marks;
    }
    out
}

/// `[tiers.<tier>]` reaches that tier's ports alone, and inherits the rest of `[switch]`:
/// marking only at the edge switches (where the 100 Gbps host links congest) marks only
/// there; the same buffer everywhere.
#[test]
fn tier_settings_reach_their_tier_alone() {
    let text = format!(
        "{FAT_TREE}[transport]\ncc = \"dctcp\"\n[marking]\nscheme = \"none\"\n\
         [tiers.edge.marking]\nscheme = \"per_queue\"\n[tiers.edge.marking.threshold]\nk = \"20KB\"\n\
         [[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.8\nflows = 300\npattern = \"inter_leaf\"\n"
    );
    let scn = scenario(&text);
    assert_eq!(scn.tiers["edge"].switch.buffer, scn.switch.buffer, "inherited from [switch]");
    let out = run(&scn, 1).unwrap();
    let m = marks_by_tier(&out);
    assert!(m["edge"] > 0, "{m:?}");
    assert_eq!((m["agg"], m["core"]), (0, 0), "{m:?}");
    // Without the tier: no marks at all.
    let plain = scenario(
        &text
            .replace("[tiers.edge.marking]", "[other]")
            .replace("[other]\nscheme = \"per_queue\"\n[tiers.edge.marking.threshold]\nk = \"20KB\"\n", ""),
    );
    assert!(marks_by_tier(&run(&plain, 1).unwrap()).values().all(|&n| n == 0));
}

/// A file in a directory of this test process's own, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("ecnlab-fabrics-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(dir: &TempDir, name: &str, text: &str) -> String {
    let path = dir.0.join(name);
    std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
    path.to_str().unwrap().to_string()
}

/// A topology file with an unequal pair of paths between two ToRs (one through spine0, two
/// links; one through spine1 and spine2, three): every flow takes the short one, and its
/// FCT is its ideal FCT over it.
#[test]
fn a_topology_file_routes_over_shortest_paths_only() {
    let dir = TempDir::new("file");
    let file = write(
        &dir,
        "fabric.toml",
        r#"
hosts = 4
link_rate = "10Gbps"
link_delay = "1us"
[[switches]]
name = "tor0"
tier = "tor"
[[switches]]
name = "tor1"
tier = "tor"
[[switches]]
name = "spine0"
tier = "spine"
[[switches]]
name = "spine1"
tier = "spine"
[[switches]]
name = "spine2"
tier = "spine"
[[links]]
ends = ["h0", "tor0"]
[[links]]
ends = ["h1", "tor0"]
[[links]]
ends = ["h2", "tor1"]
[[links]]
ends = ["h3", "tor1"]
[[links]]
ends = ["tor0", "spine0"]
delay = "5us"
[[links]]
ends = ["tor0", "spine1"]
[[links]]
ends = ["spine1", "spine2"]
[[links]]
ends = ["spine2", "tor1"]
[[links]]
ends = ["spine0", "tor1"]
delay = "5us"
"#,
    );
    let text = format!(
        "name = \"t\"\nduration = \"50ms\"\n[topology]\nkind = \"file\"\nfile = \"{file}\"\n\
         [transport]\nprofile = \"textbook\"\ncc = \"dctcp\"\ninit_cwnd = 100000\nmax_cwnd = 100000\n\
         [[flows]]\nsrc = 0\ndst = 3\nsize = \"500000B\"\n[tiers.spine.switch]\nbuffer = \"2MB\"\n"
    );
    let out = run(&scenario(&text), 1).unwrap();
    let f = &out.flows[0];
    let (fct, ideal) = (f.fct_us.unwrap(), f.ideal_fct_us.unwrap());
    assert!((fct - ideal).abs() <= 1.2, "fct {fct} us vs ideal {ideal} us");
    // Propagation 1 + 5 + 5 + 1 us each way: the long path (1 + 1 + 1 + 1 + 1) was not taken.
    assert!(ideal > 24.0 + 400.0, "{ideal}");
    let v = serde_json::to_value(&out.summary).unwrap();
    let sent_on = |port: &str| {
        v["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["port"] == port)
            .map_or(0.0, |p| p["utilization"].as_f64().unwrap())
    };
    assert!(sent_on("tor0->spine0") > 0.0);
    assert_eq!(sent_on("tor0->spine1"), 0.0);
}

/// Hotspots get their share of the flows; rack skew sends most from and to rack 0; a matrix
/// file's fractions hold per rack pair; incast groups answer their aggregators together.
#[test]
fn traffic_matrices_give_the_shares_they_state() {
    let dir = TempDir::new("matrix");
    let count = |extra: &str, f: &dyn Fn(u16, u16) -> bool| {
        let text = format!(
            "{FAT_TREE}[[traffic]]\nkind = \"poisson\"\ncdf = \"websearch\"\nload = 0.3\nflows = 4000\n{extra}"
        );
        let scn = scenario(&text);
        let hosts = ecnlab_sim::topology::Net::build(&scn.topology).unwrap().host_info();
        let a = ecnlab_sim::workload::generate(&scn.traffic, &hosts, 7).unwrap();
        assert!(a.iter().all(|x| x.src != x.dst));
        a.iter().filter(|x| f(x.src, x.dst)).count() as f64 / a.len() as f64
    };
    let hot = count("pattern = \"hotspot\"\nhotspots = [3, 9]\nhotspot_share = 0.5\n", &|_, d| d == 3 || d == 9);
    assert!((0.47..0.53).contains(&hot), "{hot}");
    // skew 1 over 8 racks (2 hosts each): rack 0 sends 1 / H(8) = 36.8 % of the flows.
    let rack0 = count("pattern = \"rack_skewed\"\nskew = 1.0\n", &|s, _| s / 2 == 0);
    assert!((0.33..0.40).contains(&rack0), "{rack0}");
    let m = write(&dir, "m.csv", "src_rack,dst_rack,fraction\n0,7,0.75\n7,0,0.25\n");
    let to7 = count(&format!("pattern = \"matrix\"\nmatrix = \"{m}\"\n"), &|s, d| s / 2 == 0 && d / 2 == 7);
    assert!((0.72..0.78).contains(&to7), "{to7}");
    let text = format!(
        "{FAT_TREE}[[traffic]]\nkind = \"incast_groups\"\ngroups = 3\nfanout = 5\nqueries = 4\ninterval = \"1ms\"\n\
         size_min = \"10KB\"\nsize_max = \"20KB\"\n"
    );
    let out = run(&scenario(&text), 2).unwrap();
    assert_eq!(out.flows.len(), 3 * 5 * 4);
    let mut by_start: BTreeMap<u64, (Vec<u16>, Vec<u16>)> = BTreeMap::new();
    for f in &out.flows {
        let e = by_start.entry((f.start_s * 1e9).round() as u64).or_default();
        e.0.push(f.src);
        e.1.push(f.dst);
    }
    assert_eq!(by_start.len(), 12, "each group's queries at their own instants");
    for (srcs, dsts) in by_start.values() {
        assert_eq!(srcs.len(), 5);
        assert!(dsts.iter().all(|&d| d == dsts[0]) && !srcs.contains(&dsts[0]));
    }
}
