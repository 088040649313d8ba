//! Tests of the workload generator: CDF means against REFERENCE-IMPLEMENTATIONS §3, sampling
//! rules, validation messages, Poisson load and inter-arrival statistics, endpoint
//! constraints, incast, trace replay, determinism and stream independence.

use super::*;
use serde_json::json;

fn hosts(n: usize, rate_bps: u64) -> HostInfo {
    HostInfo { n_hosts: n, access_rate_bps: vec![rate_bps; n], racks: None }
}

fn leaf_spine(leaves: usize, hpl: usize, rate_bps: u64) -> HostInfo {
    HostInfo {
        n_hosts: leaves * hpl,
        access_rate_bps: vec![rate_bps; leaves * hpl],
        racks: Some((0..leaves * hpl).map(|h| (h / hpl) as u32).collect()),
    }
}

fn spec(v: serde_json::Value) -> TrafficSpec {
    serde_json::from_value(v).expect("valid traffic spec")
}

fn gen(specs: &[serde_json::Value], h: &HostInfo, seed: u64) -> Vec<FlowArrival> {
    let specs: Vec<TrafficSpec> = specs.iter().cloned().map(spec).collect();
    generate(&specs, h, seed).expect("generates")
}

fn gen_err(specs: &[serde_json::Value], h: &HostInfo) -> String {
    let specs: Vec<TrafficSpec> = specs.iter().cloned().map(spec).collect();
    generate(&specs, h, 1).expect_err("must fail")
}

/// A file in the temp dir, removed on drop.
struct TempFile(std::path::PathBuf);
impl TempFile {
    fn new(name: &str, text: &str) -> TempFile {
        let p = std::env::temp_dir().join(format!("ecnlab-wl-{}-{name}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        TempFile(p)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}
impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

// ---------------------------------------------------------------- CDFs

#[test]
fn builtin_cdfs_parse_and_means_match_the_study() {
    // REFERENCE-IMPLEMENTATIONS §3: packet CDFs with ns-2 round-up, byte CDFs interpolated.
    let expected = [
        ("websearch", CdfFormat::Packets, 1_666_439.0),
        ("datamining", CdfFormat::Packets, 7_470_541.0),
        ("hadoop", CdfFormat::Packets, 4_135_915.0),
        ("cache", CdfFormat::Packets, 911_156.0),
        ("websearch_bytes", CdfFormat::Bytes, 1_711_250.0),
        ("datamining_bytes", CdfFormat::Bytes, 12_658_198.6),
        ("fb_trafficgen", CdfFormat::Bytes, 342.24),
    ];
    assert_eq!(builtin_cdf_names().len(), expected.len());
    for (name, fmt, mean) in expected {
        assert!(builtin_cdf_names().contains(&name));
        let c = load_cdf(name, None).unwrap();
        assert_eq!(c.format(), fmt, "{name}");
        assert_eq!(c.name(), name);
        let m = c.mean_bytes();
        assert!((m - mean).abs() / mean < 0.005, "{name}: mean {m}, study {mean}");
    }
    // The closed form is exact: for websearch every segment has integer ends, so rounding up
    // adds exactly half a packet on the 85 % of mass outside the 6-packet atom. (The study's
    // 1 666 439 B is 12 B below this exact value; all its rounded means are within 0.01 %.)
    let c = load_cdf("websearch", None).unwrap();
    let lin: f64 = 0.15 * 6.0
        + [(6., 13., 0.05), (13., 19., 0.1), (19., 33., 0.1), (33., 53., 0.13), (53., 133., 0.07), (133., 667., 0.1)]
            .iter()
            .chain(&[(667., 1333., 0.1), (1333., 3333., 0.1), (3333., 6667., 0.07), (6667., 20000., 0.03)])
            .map(|(a, b, w)| w * (a + b) / 2.0)
            .sum::<f64>();
    assert!((lin * 1460.0 - 1_665_830.8).abs() < 0.1, "{lin}"); // the study's interpolated mean
    assert!((c.mean_bytes() - (lin + 0.425) * 1460.0).abs() < 1e-3, "{}", c.mean_bytes());
}

#[test]
fn closed_form_means_equal_numerical_integration_of_the_sampler() {
    // Midpoint rule over u of the exact inverse transform `size_at`: independent of the
    // per-segment algebra in `mean_bytes`.
    for name in builtin_cdf_names() {
        let c = load_cdf(name, None).unwrap();
        let n = 2_000_000;
        let num = (0..n).map(|i| c.size_at((i as f64 + 0.5) / n as f64) as f64).sum::<f64>() / n as f64;
        let m = c.mean_bytes();
        assert!((num - m).abs() / m < 2e-4, "{name}: numerical {num}, closed form {m}");
    }
}

#[test]
fn exact_means_of_tiny_cdfs() {
    // X ~ U[0, 3] bytes, rounded to nearest, at least 1: P = 1/6, 1/3, 1/3, 1/6 for 0(->1), 1, 2, 3.
    let c = Cdf::parse("0 0\n3 1\n", None, "t").unwrap();
    assert!((c.mean_bytes() - 5.0 / 3.0).abs() < 1e-9, "{}", c.mean_bytes());
    // X ~ U[0, 2] packets, rounded up: 1 or 2 packets with equal probability.
    let c = Cdf::parse("0 1 0\n2 1 1\n", None, "t").unwrap();
    assert!((c.mean_bytes() - 1.5 * 1460.0).abs() < 1e-6, "{}", c.mean_bytes());
    // Mass below the first point sits on it: 50 % at 10 packets, then U[10, 20] rounded up.
    let c = Cdf::parse("10 1 0.5\n20 1 1\n", None, "t").unwrap();
    let expect = 0.5 * 10.0 + 0.5 * (11.0 + 20.0) / 2.0;
    assert!((c.mean_bytes() - expect * 1460.0).abs() < 1e-6, "{}", c.mean_bytes());
}

/// A CDF whose every size is 0 clamped each flow to 1 B and crowded every arrival into a
/// few microseconds (its mean, ~1 B, sets the arrival rate).
#[test]
fn a_cdf_of_zero_sizes_is_refused() {
    assert_eq!(
        Cdf::parse("0 0.5\n0 1\n", None, "t").unwrap_err(),
        "t: every size is 0: a flow carries at least one byte"
    );
    assert!(Cdf::parse("0 0\n1 1\n", None, "t").is_ok());
}

#[test]
fn empirical_mean_matches_analytic_mean() {
    for (name, seed) in [("websearch", 7u64), ("websearch_bytes", 8)] {
        let c = load_cdf(name, None).unwrap();
        let mut rng = Rng::new(seed);
        let n = 200_000;
        let sum: f64 = (0..n).map(|_| c.sample(&mut rng) as f64).sum();
        let emp = sum / n as f64;
        let m = c.mean_bytes();
        assert!((emp - m).abs() / m < 0.02, "{name}: empirical {emp}, analytic {m}");
    }
}

#[test]
fn sampling_rules() {
    let mut rng = Rng::new(3);
    for name in ["websearch", "datamining", "hadoop", "cache"] {
        let c = load_cdf(name, None).unwrap();
        for _ in 0..20_000 {
            let s = c.sample(&mut rng);
            assert!(s >= 1460 && s.is_multiple_of(1460), "{name}: {s}");
        }
    }
    // ns-2 interpolation and round-up: websearch has 15 % at exactly 6 packets and interpolates
    // 6 -> 13 packets over (0.15, 0.2].
    let c = load_cdf("websearch", None).unwrap();
    assert_eq!(c.size_at(0.0), 6 * 1460);
    assert_eq!(c.size_at(0.1), 6 * 1460);
    assert_eq!(c.size_at(0.15), 6 * 1460);
    assert_eq!(c.size_at(0.175), 10 * 1460); // 6 + 3.5 = 9.5 -> 10
    assert_eq!(c.size_at(0.2), 13 * 1460);
    assert_eq!(c.size_at(0.999_999), 20_000 * 1460);

    for name in ["websearch_bytes", "datamining_bytes", "fb_trafficgen"] {
        let c = load_cdf(name, None).unwrap();
        let sizes: Vec<u64> = (0..20_000).map(|_| c.sample(&mut rng)).collect();
        assert!(sizes.iter().all(|&s| s >= 1));
        let not_packets = sizes.iter().filter(|&&s| !s.is_multiple_of(1460)).count();
        assert!(not_packets > 19_000, "{name}: {not_packets}");
    }
    let c = load_cdf("websearch_bytes", None).unwrap();
    assert_eq!(c.size_at(0.075), 5000); // halfway from 0 to 10000
    assert_eq!(c.size_at(0.175), 15000);
}

#[test]
fn bad_cdfs_are_rejected_with_the_right_message() {
    let cases = [
        ("10 1 0\n5 1 1\n", "line 2: size 5 is below the previous size 10"),
        ("1 1 0\n5 1 0.6\n7 1 0.5\n9 1 1\n", "line 3: probability 0.5 is below the previous probability 0.6"),
        ("1 1 0\n5 1 0.97\n", "the last probability is 0.97, it must be 1"),
        ("1 1 0\nfoo 1 1\n", "line 2: cannot parse 'foo' as a number"),
        ("1 1 1\n", "at least 2 points, found 1"),
        ("# only a comment\n", "at least 2 points, found 0"),
        ("1 1 0\n5 1 1.5\n", "line 2: probability 1.5 is not in [0, 1]"),
        ("1 1 0\n5 1\n", "line 2: expected 3 columns (<packets> <unused> <cdf>) for the packets format, found 2"),
        ("1 2 3 4\n", "line 1: expected 3 columns"),
        ("-1 0\n5 1\n", "line 1: size -1 is negative"),
    ];
    for (text, msg) in cases {
        let e = Cdf::parse(text, None, "'x.cdf'").expect_err(text);
        assert!(e.starts_with("'x.cdf'"), "{e}");
        assert!(e.contains(msg), "{text:?}: got `{e}`, want `{msg}`");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    // Within 1e-9 of 1 is accepted and snapped to 1.
    let c = Cdf::parse("0 0\n10 0.9999999999\n", None, "t").unwrap();
    assert_eq!(c.points()[1].prob, 1.0);
}

#[test]
fn cdf_names_files_and_formats() {
    let e = load_cdf("websurch", None).unwrap_err();
    assert_eq!(e, "no built-in CDF named 'websurch' (did you mean 'websearch'?)");
    let e = load_cdf("zzzzzzzzzzzzzzzzzzzzzz", None).unwrap_err();
    assert!(e.contains("built-ins: websearch, datamining"), "{e}");
    let e = load_cdf("websearch", Some(CdfFormat::Bytes)).unwrap_err();
    assert!(e.contains("is in packets format"), "{e}");
    assert!(load_cdf("websearch", Some(CdfFormat::Packets)).is_ok());
    let e = load_cdf("/nonexistent/dir/x.cdf", None).unwrap_err();
    assert!(e.starts_with("cannot read `/nonexistent/dir/x.cdf`"), "{e}");

    // A user file with comments: 2 columns detected as bytes; forcing packets fails.
    let f = TempFile::new("user.cdf", "# my CDF\n100 0  # trailing comment\n\n300 1\n");
    let c = load_cdf(f.path(), None).unwrap();
    assert_eq!(c.format(), CdfFormat::Bytes);
    assert!((c.mean_bytes() - 200.0).abs() < 1e-6);
    let e = load_cdf(f.path(), Some(CdfFormat::Packets)).unwrap_err();
    assert!(e.contains("line 2: expected 3 columns"), "{e}");
    // The shipped files are the embedded built-ins.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/");
    for name in builtin_cdf_names() {
        let from_file = load_cdf(&format!("{dir}{name}.cdf"), None).unwrap();
        assert_eq!(from_file.points(), load_cdf(name, None).unwrap().points(), "{name}");
    }
}

// ---------------------------------------------------------------- Poisson

fn ks_exponential(gaps: &[f64], mean: f64) -> f64 {
    let mut g = gaps.to_vec();
    g.sort_by(f64::total_cmp);
    let n = g.len() as f64;
    g.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = 1.0 - (-x / mean).exp();
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn poisson_achieves_the_target_load_with_exponential_gaps() {
    let rate = 10_000_000_000u64;
    for pattern in ["all_to_all", "pairs"] {
        let h = hosts(16, rate);
        let load = 0.6;
        let n = 200_000;
        let f = gen(
            &[
                json!({"kind": "poisson", "cdf": "websearch", "load": load, "flows": n, "start": "1s", "pattern": pattern}),
            ],
            &h,
            11,
        );
        assert_eq!(f.len(), n);
        assert!(f.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        assert!(f[0].start_ns >= 1_000_000_000);
        let horizon = (f[n - 1].start_ns - 1_000_000_000) as f64;
        let bytes: f64 = f.iter().map(|x| x.size as f64).sum();
        let offered = bytes * 8.0 / horizon * 1e9; // bps
        let target = load * 16.0 * rate as f64;
        assert!((offered / target - 1.0).abs() < 0.03, "{pattern}: offered {offered}, target {target}");

        let mean_gap = 8.0 * load_cdf("websearch", None).unwrap().mean_bytes() / (load * 16.0 * rate as f64) * 1e9;
        let gaps: Vec<f64> = f.windows(2).map(|w| (w[1].start_ns - w[0].start_ns) as f64).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / gaps.len() as f64;
        let cv = var.sqrt() / m;
        assert!((m / mean_gap - 1.0).abs() < 0.01, "{pattern}: mean gap {m} vs {mean_gap}");
        assert!((cv - 1.0).abs() < 0.02, "{pattern}: CV {cv}");
        let d = ks_exponential(&gaps, mean_gap);
        assert!(d < 1.63 / (gaps.len() as f64).sqrt() * 1.5, "{pattern}: KS {d}");
    }
}

#[test]
fn load_is_limited_by_the_receivers_edge_and_mean_bytes_overrides() {
    // 7 senders -> 1 receiver (ECN# star): the receiver's link is the capacity.
    let h = hosts(8, 10_000_000_000);
    let n = 100_000;
    let base = json!({"kind": "poisson", "cdf": "websearch_bytes", "load": 0.5, "flows": n,
                      "senders": [1, 2, 3, 4, 5, 6, 7], "receivers": [0]});
    let f = gen(std::slice::from_ref(&base), &h, 5);
    let horizon = f[n - 1].start_ns as f64;
    let mean = load_cdf("websearch_bytes", None).unwrap().mean_bytes();
    let expect_horizon = n as f64 * 8.0 * mean / (0.5 * 1e10) * 1e9;
    assert!((horizon / expect_horizon - 1.0).abs() < 0.02, "{horizon} vs {expect_horizon}");
    assert!(f.iter().all(|x| x.dst == 0 && (1..8).contains(&x.src)));
    // Doubling mean_bytes halves the rate: the same arrivals stretched by 2.
    let mut over = base.clone();
    over["mean_bytes"] = json!(2.0 * mean);
    let g = gen(&[over], &h, 5);
    let ratio = g[n - 1].start_ns as f64 / f[n - 1].start_ns as f64;
    assert!((ratio - 2.0).abs() < 1e-6, "{ratio}");
    assert_eq!(f.iter().map(|x| x.size).collect::<Vec<_>>(), g.iter().map(|x| x.size).collect::<Vec<_>>());
}

#[test]
fn pairs_share_the_load_by_sender_rate() {
    // Host 0 has a 3x faster link: it sends 3x as many flows; each pair of a sender is equal.
    let mut h = hosts(4, 1_000_000_000);
    h.access_rate_bps[0] = 3_000_000_000;
    let n = 60_000;
    let f = gen(&[json!({"kind": "poisson", "cdf": "cache", "load": 0.3, "flows": n, "pattern": "pairs"})], &h, 2);
    let from0 = f.iter().filter(|x| x.src == 0).count() as f64;
    assert!((from0 / n as f64 - 0.5).abs() < 0.01, "{from0}");
    for d in 1..4u16 {
        let c = f.iter().filter(|x| x.src == 0 && x.dst == d).count() as f64;
        assert!((c / from0 - 1.0 / 3.0).abs() < 0.02, "0->{d}: {c}");
    }
}

#[test]
fn endpoint_constraints() {
    let h = leaf_spine(4, 4, 10_000_000_000);
    for pattern in ["all_to_all", "inter_leaf", "pairs"] {
        let f = gen(
            &[json!({"kind": "poisson", "cdf": "hadoop", "load": 0.4, "flows": 30_000, "pattern": pattern})],
            &h,
            3,
        );
        assert!(f.iter().all(|x| x.src != x.dst), "{pattern}");
        if pattern == "inter_leaf" {
            assert!(f.iter().all(|x| x.src / 4 != x.dst / 4));
        }
        // Every host sends and receives, about equally.
        for host in 0..16u16 {
            let s = f.iter().filter(|x| x.src == host).count() as f64 / 30_000.0;
            let r = f.iter().filter(|x| x.dst == host).count() as f64 / 30_000.0;
            assert!((s - 1.0 / 16.0).abs() < 0.01 && (r - 1.0 / 16.0).abs() < 0.01, "{pattern} {host}: {s} {r}");
        }
    }
    // Explicit sets are respected.
    let f = gen(
        &[
            json!({"kind": "poisson", "cdf": "cache", "load": 0.4, "flows": 5000, "senders": [0, 1, 2], "receivers": [2, 9]}),
        ],
        &h,
        3,
    );
    assert!(f.iter().all(|x| [0, 1, 2].contains(&x.src) && [2, 9].contains(&x.dst) && x.src != x.dst));
    assert!(f.iter().any(|x| x.src == 2 && x.dst == 9));
}

#[test]
fn classes_uniform_and_weighted() {
    let h = hosts(8, 10_000_000_000);
    let n = 100_000;
    let f = gen(&[json!({"kind": "poisson", "cdf": "cache", "load": 0.5, "flows": n, "classes": [1, 2, 3, 4]})], &h, 4);
    for c in 1..=4u8 {
        let k = f.iter().filter(|x| x.class == c).count() as f64;
        assert!((k / n as f64 - 0.25).abs() < 0.006, "class {c}: {k}");
    }
    let f = gen(
        &[
            json!({"kind": "poisson", "cdf": "cache", "load": 0.5, "flows": n, "classes": [0, 7, 9], "class_weights": [1, 3, 0]}),
        ],
        &h,
        4,
    );
    let k7 = f.iter().filter(|x| x.class == 7).count() as f64;
    assert!((k7 / n as f64 - 0.75).abs() < 0.006, "{k7}");
    assert!(f.iter().all(|x| x.class != 9));
    // Default: class 0.
    let f = gen(&[json!({"kind": "poisson", "cdf": "cache", "load": 0.5, "flows": 100})], &h, 4);
    assert!(f.iter().all(|x| x.class == 0));
}

#[test]
fn determinism_and_independent_streams() {
    let h = leaf_spine(3, 4, 10_000_000_000);
    for pattern in ["all_to_all", "pairs"] {
        let a = json!({"kind": "poisson", "cdf": "websearch", "load": 0.7, "flows": 20_000, "pattern": pattern});
        let f1 = gen(std::slice::from_ref(&a), &h, 42);
        assert_eq!(f1, gen(std::slice::from_ref(&a), &h, 42), "{pattern}: same seed");
        let f2 = gen(std::slice::from_ref(&a), &h, 43);
        assert_ne!(
            f1.iter().map(|x| x.start_ns).collect::<Vec<_>>(),
            f2.iter().map(|x| x.start_ns).collect::<Vec<_>>()
        );
        assert_ne!(f1.iter().map(|x| x.size).collect::<Vec<_>>(), f2.iter().map(|x| x.size).collect::<Vec<_>>());

        // Changing the classes changes nothing else.
        let mut b = a.clone();
        b["classes"] = json!([0, 1, 2, 3, 4, 5, 6]);
        let g = gen(&[b], &h, 42);
        let strip = |v: &[FlowArrival]| v.iter().map(|x| (x.start_ns, x.src, x.dst, x.size)).collect::<Vec<_>>();
        assert_eq!(strip(&f1), strip(&g), "{pattern}");
        assert!(g.iter().any(|x| x.class != 0));

        // Adding another entry before the list's end changes nothing in the first one.
        let inc = json!({"kind": "incast", "receiver": 0, "senders": [1, 2, 3], "size_min": "3KB", "size_max": "60KB",
                         "queries": 50, "interval": "1ms"});
        let both = gen(&[a.clone(), inc], &h, 42);
        let first: Vec<FlowArrival> = both.into_iter().filter(|x| x.source == 0).collect();
        assert_eq!(first, f1, "{pattern}");
    }
}

#[test]
fn changing_the_endpoint_pattern_keeps_sizes_and_times() {
    let h = leaf_spine(3, 4, 10_000_000_000);
    let a = json!({"kind": "poisson", "cdf": "datamining", "load": 0.3, "flows": 5000});
    let mut b = a.clone();
    b["pattern"] = json!("inter_leaf");
    let (f, g) = (gen(&[a], &h, 8), gen(&[b], &h, 8));
    assert_eq!(
        f.iter().map(|x| (x.start_ns, x.size)).collect::<Vec<_>>(),
        g.iter().map(|x| (x.start_ns, x.size)).collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------- incast

#[test]
fn incast_queries_are_synchronized() {
    let h = hosts(17, 10_000_000_000);
    let senders: Vec<usize> = (1..17).collect();
    let f = gen(
        &[json!({"kind": "incast", "receiver": 0, "senders": senders, "size_min": "3KB", "size_max": "60KB",
                 "queries": 20, "interval": "100ms", "start": "1s", "class": 5})],
        &h,
        6,
    );
    assert_eq!(f.len(), 20 * 16);
    for (q, chunk) in f.chunks(16).enumerate() {
        let t = 1_000_000_000 + q as u64 * 100_000_000;
        assert!(chunk.iter().all(|x| x.start_ns == t && x.dst == 0 && x.class == 5));
        let mut srcs: Vec<u16> = chunk.iter().map(|x| x.src).collect();
        srcs.sort();
        assert_eq!(srcs, (1..17).collect::<Vec<u16>>());
    }
    assert!(f.iter().all(|x| (3000..=60000).contains(&x.size)));
    let mean = f.iter().map(|x| x.size as f64).sum::<f64>() / f.len() as f64;
    assert!((mean - 31_500.0).abs() < 2_500.0, "{mean}");

    // fanout below the sender count: distinct random senders; above: spread over all.
    let f = gen(
        &[json!({"kind": "incast", "receiver": 0, "senders": senders, "size_min": "1000B", "size_max": "1000B",
                 "queries": 10, "interval": "1ms", "fanout": 5})],
        &h,
        6,
    );
    assert_eq!(f.len(), 50);
    for chunk in f.chunks(5) {
        let mut s: Vec<u16> = chunk.iter().map(|x| x.src).collect();
        s.dedup();
        assert_eq!(s.len(), 5);
        assert!(chunk.iter().all(|x| x.start_ns == chunk[0].start_ns && x.size == 1000));
    }
    assert!(f.chunks(5).any(|c| c[0].src != f[0].src), "the chosen senders vary");
    let f = gen(
        &[json!({"kind": "incast", "receiver": 0, "senders": senders, "size_min": "3000B", "size_max": "60000B",
                 "queries": 1, "start": "4s", "fanout": 100})],
        &h,
        6,
    );
    assert_eq!(f.len(), 100);
    for s in 1..17u16 {
        let k = f.iter().filter(|x| x.src == s).count();
        assert!(k == 6 || k == 7, "sender {s}: {k}");
    }
    assert!(f.iter().all(|x| x.start_ns == 4_000_000_000));
}

#[test]
fn incast_validation() {
    let h = hosts(4, 10_000_000_000);
    let e = gen_err(
        &[
            json!({"kind": "incast", "receiver": 0, "senders": [1, 0], "size_min": "1B", "size_max": "2B", "queries": 1}),
        ],
        &h,
    );
    assert_eq!(e, "traffic[0].senders[1]: host 0 is the receiver");
    let e = gen_err(
        &[json!({"kind": "incast", "receiver": 0, "senders": [1], "size_min": "5B", "size_max": "2B", "queries": 1})],
        &h,
    );
    assert!(e.starts_with("traffic[0].size_max: 2B is below size_min 5B"), "{e}");
    let e = gen_err(
        &[json!({"kind": "incast", "receiver": 0, "senders": [1], "size_min": "1B", "size_max": "2B", "queries": 3})],
        &h,
    );
    assert!(e.starts_with("traffic[0].interval: required"), "{e}");
    let e = gen_err(
        &[json!({"kind": "incast", "receiver": 9, "senders": [1], "size_min": "1B", "size_max": "2B", "queries": 1})],
        &h,
    );
    assert_eq!(e, "traffic[0].receiver: host 9 does not exist (4 hosts)");
}

// ---------------------------------------------------------------- trace

#[test]
fn trace_replays_exactly() {
    let f = TempFile::new(
        "ok.csv",
        "# a trace\nsrc,dst,start,size,class\n1,0,0.5,1000,3\n2,3,\"20us\",60KB,0\n0,1,1e-3,7,63\n\n3,2,0,1,1\n",
    );
    let h = hosts(4, 1_000_000_000);
    let out = gen(&[json!({"kind": "trace", "file": f.path()})], &h, 1);
    let want = vec![
        FlowArrival { start_ns: 0, src: 3, dst: 2, size: 1, class: 1, source: 0 },
        FlowArrival { start_ns: 20_000, src: 2, dst: 3, size: 60_000, class: 0, source: 0 },
        FlowArrival { start_ns: 1_000_000, src: 0, dst: 1, size: 7, class: 63, source: 0 },
        FlowArrival { start_ns: 500_000_000, src: 1, dst: 0, size: 1000, class: 3, source: 0 },
    ];
    assert_eq!(out, want);
    // Seeds do not matter to a trace.
    assert_eq!(gen(&[json!({"kind": "trace", "file": f.path()})], &h, 99), want);
}

#[test]
fn bad_trace_rows_are_named_by_line_and_column() {
    let h = hosts(4, 1_000_000_000);
    let cases = [
        ("start,src,dst,size\n0,1,2,100\n0.1,1,x,5\n", "line 3, column 3 (dst): cannot parse 'x' as a host index"),
        ("start,src,dst,size\n0,1,7,100\n", "line 2, column 3 (dst): host 7 does not exist (4 hosts)"),
        ("start,src,dst,size\n0,1,1,100\n", "line 2, column 3 (dst): dst 1 equals src"),
        ("start,src,dst,size\nsoon,1,2,100\n", "line 2, column 1 (start): cannot parse 'soon' as a start time"),
        ("start,src,dst,size\n0,1,2,0\n", "line 2, column 4 (size): size must be at least 1 byte"),
        ("start,src,dst,size\n0,1,2,-5\n", "line 2, column 4 (size): size -5 is not a whole number of bytes"),
        ("start,src,dst,size\n-1,1,2,5\n", "line 2, column 1 (start): start '-1' is not a non-negative"),
        ("start,src,dst,size\n0,1,2\n", "line 2: expected 4 fields as in the header, found 3"),
        ("start,src,dst,size,class\n0,1,2,5,64\n", "line 2, column 5 (class): class '64' is not a DSCP value"),
        ("start,src,size\n", "line 1: the header has no 'dst' column"),
        ("start,src,dst,bytes\n", "line 1, column 4: unknown column 'bytes'"),
        ("start,src,dst,size\n", "line 1: a header and no flow"),
        ("# flows\nstart,src,dst,size\n\n# none yet\n", "line 2: a header and no flow"),
    ];
    for (text, msg) in cases {
        let f = TempFile::new("bad.csv", text);
        let e = gen_err(&[json!({"kind": "trace", "file": f.path()})], &h);
        let want = format!("traffic[0].file: '{}' {msg}", f.path());
        assert!(e.starts_with(&want), "got `{e}`\nwant `{want}`");
    }
    let e = gen_err(&[json!({"kind": "trace", "file": "/nonexistent/flows.csv"})], &h);
    assert!(e.starts_with("traffic[0].file: cannot read `/nonexistent/flows.csv`"), "{e}");
}

// ---------------------------------------------------------------- config and errors

#[test]
fn error_messages_name_the_field_path() {
    let h = hosts(16, 10_000_000_000);
    let ok = json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10});
    let e = gen_err(&[ok.clone(), json!({"kind": "poisson", "cdf": "websearch", "load": 1.3, "flows": 10})], &h);
    assert_eq!(e, "traffic[1].load: 1.3 is not in (0, 1]");
    let e = gen_err(
        &[json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10, "senders": [0, 1, 2, 40]})],
        &h,
    );
    assert_eq!(e, "traffic[0].senders[3]: host 40 does not exist (16 hosts)");
    let e = gen_err(&[json!({"kind": "poisson", "cdf": "websurch", "load": 0.5, "flows": 10})], &h);
    assert_eq!(e, "traffic[0].cdf: no built-in CDF named 'websurch' (did you mean 'websearch'?)");
    let e = gen_err(
        &[json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10, "pattern": "inter_leaf"})],
        &h,
    );
    assert_eq!(e, "traffic[0].pattern: inter_leaf needs a topology of racks (leaf_spine, fat_tree, clos, file)");
    let e = gen_err(
        &[json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10, "senders": [3], "receivers": [3]})],
        &h,
    );
    assert_eq!(e, "traffic[0].senders: sender 3 has no receiver other than itself");
    let e = gen_err(&[json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10, "senders": [1, 1]})], &h);
    assert_eq!(e, "traffic[0].senders[1]: host 1 is listed twice");
    let e = gen_err(
        &[
            json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10, "classes": [1, 2], "class_weights": [1]}),
        ],
        &h,
    );
    assert_eq!(e, "traffic[0].class_weights: 1 weights for 2 classes");
    let e = gen_err(&[json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 0})], &h);
    assert!(e.starts_with("traffic[0].flows: 0 is not between 1 and "), "{e}");
    let e = gen_err(&[json!({"kind": "poisson", "cdf": "websearch", "load": 0.5, "flows": 10, "classes": [64]})], &h);
    assert_eq!(e, "traffic[0].classes[0]: 64 is not a DSCP value (0..=63)");
}

#[test]
fn toml_config_parses_with_defaults_and_rejects_unknown_keys() {
    #[derive(Deserialize)]
    struct Doc {
        traffic: Vec<TrafficSpec>,
    }
    let doc: Doc = toml::from_str(
        r#"
        [[traffic]]
        kind = "poisson"
        cdf = "websearch"
        load = 1
        flows = 5000
        start = "1ms"
        pattern = "pairs"
        classes = [1, 2]

        [[traffic]]
        kind = "incast"
        receiver = 0
        senders = [1, 2]
        size_min = "3KB"
        size_max = "60KB"
        queries = 1

        [[traffic]]
        kind = "trace"
        file = "flows.csv"
        "#,
    )
    .unwrap();
    let TrafficSpec::Poisson(p) = &doc.traffic[0] else { panic!() };
    assert_eq!((p.load, p.flows, p.start.0, p.pattern), (1.0, 5000, 1_000_000, Pattern::Pairs));
    assert_eq!((p.senders.clone(), p.cdf_format, p.mean_bytes), (None, None, None));
    let TrafficSpec::Incast(i) = &doc.traffic[1] else { panic!() };
    assert_eq!((i.size_min.0, i.size_max.0, i.class, i.fanout, i.interval), (3000, 60000, 0, None, None));
    assert!(matches!(&doc.traffic[2], TrafficSpec::Trace(t) if t.file == "flows.csv"));
    let defaults = spec(json!({"kind": "poisson", "cdf": "cache", "load": 0.1, "flows": 1}));
    let TrafficSpec::Poisson(p) = defaults else { panic!() };
    assert_eq!((p.classes, p.pattern, p.start.0), (vec![0], Pattern::AllToAll, 0));

    for bad in [
        json!({"kind": "poisson", "cdf": "cache", "load": 0.1, "flows": 1, "lod": 2}),
        json!({"kind": "incast", "receiver": 0, "senders": [1], "size_min": "1B", "size_max": "2B", "queries": 1, "qps": 3}),
        json!({"kind": "trace", "file": "x", "offset": 1}),
        json!({"kind": "poison", "cdf": "cache", "load": 0.1, "flows": 1}),
        json!({"kind": "poisson", "cdf": "cache", "load": 0.1}),
    ] {
        let r: Result<TrafficSpec, _> = serde_json::from_value(bad.clone());
        assert!(r.is_err(), "{bad}");
    }
    // Round trip through serde (the scenario is echoed as scenario.json).
    let s = serde_json::to_value(&doc.traffic).unwrap();
    let back: Vec<TrafficSpec> = serde_json::from_value(s).unwrap();
    assert_eq!(back.len(), 3);
}

#[test]
fn hundred_thousand_flows_generate_quickly() {
    // 144 hosts, 20592 pair processes; budget generous for debug-ish test builds.
    let h = leaf_spine(12, 12, 10_000_000_000);
    for pattern in ["all_to_all", "pairs"] {
        let t0 = std::time::Instant::now();
        let f = gen(
            &[
                json!({"kind": "poisson", "cdf": "websearch", "load": 0.9, "flows": 100_000, "pattern": pattern, "classes": [1,2,3,4,5,6,7]}),
            ],
            &h,
            1,
        );
        let dt = t0.elapsed();
        assert_eq!(f.len(), 100_000);
        assert!(dt.as_secs_f64() < 1.0, "{pattern}: {dt:?}");
    }
}
