//! Answer keys of the estimate against the exact simulator.

use ecnlab_estimate::{run_serially, Options, Plan};
use ecnlab_sim::Scenario;

fn scenario(text: &str) -> Scenario {
    let s = Scenario::from_toml(text).unwrap();
    s.validate().unwrap();
    s
}

/// One bottleneck: senders that each send one flow at a time into one receiver's link. The
/// receiver's link simulation is the exact run; every other link's (the senders' NICs) has
/// its flows alone, so adds nothing: the estimate is the exact run, flow by flow.
#[test]
fn a_single_bottleneck_is_estimated_exactly() {
    let mut text = String::from(
        "name = \"one\"\nduration = \"50ms\"\n[topology]\nkind = \"star\"\nhosts = 9\nlink_rate = \"10Gbps\"\n\
         link_delay = \"5us\"\n[switch]\nbuffer = \"200KB\"\n[marking]\nscheme = \"per_queue\"\n\
         [marking.threshold]\nk = \"30KB\"\n[transport]\ncc = \"dctcp\"\n",
    );
    // A flow every 100 us, 10 to 150 segments (94 % of the receiver's link on average), from
    // eight senders in turn: each sender's flows 800 us apart, so that they meet only at
    // the receiver.
    for i in 0..80u64 {
        let src = 1 + i % 8;
        let size = 1460 * (10 + (i * 37) % 140);
        text.push_str(&format!("[[flows]]\nsrc = {src}\ndst = 0\nsize = \"{size}B\"\nstart = \"{}us\"\n", i * 100));
    }
    let scn = scenario(&text);
    let exact = ecnlab_sim::run(&scn, 1).unwrap();
    let mut plan = Plan::new(scn, 1, Options { threshold: 0.0, ..Options::default() }).unwrap();
    run_serially(&mut plan).unwrap();
    let c = plan.combine().unwrap();
    assert_eq!(plan.n_jobs() - plan.n_alone(), 9, "the receiver's link and eight NICs");
    let slow = exact.flows.iter().filter(|f| f.slowdown.unwrap() > 1.5).count();
    assert!(slow >= 5, "flows must meet at the bottleneck: {slow} slowed down");
    for (f, e) in exact.flows.iter().zip(&c.est) {
        let want = (f.fct_us.unwrap() * 1e3).round() as u64;
        assert_eq!(e.fct_ns(), Some(want), "flow {}: estimate {:?} ns, exact {want} ns", f.id, e.fct_ns());
        assert!((e.ideal_ns() as f64 / 1e3 - f.ideal_fct_us.unwrap()).abs() < 1e-6, "flow {}: ideal", f.id);
    }
    // Where the time goes (combine_with, examples/explain.rs): the same estimate, and each
    // flow told its two links' delays, the slowed flows' at the receiver's link.
    let net = &plan.fabric().net;
    let to_receiver = (0..net.links.len()).find(|&l| net.names[net.links[l].to] == "h0").unwrap() as u32;
    let mut told = vec![Vec::new(); exact.flows.len()];
    let again = plan.combine_with(|f, l, q, _| told[f as usize].push((l, q))).unwrap();
    assert_eq!(again.est, c.est);
    for (f, t) in exact.flows.iter().zip(&told) {
        assert_eq!(t.len(), 2, "flow {}: its NIC and the receiver's link: {t:?}", f.id);
        if f.slowdown.unwrap() > 1.5 {
            let worst = t.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
            assert_eq!(worst.0, to_receiver, "flow {}: {t:?}", f.id);
        }
    }
}
