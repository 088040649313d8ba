//! PFC (IEEE 802.1Qbb, `[switch.pfc]`) in the simulator: a lossless priority does not drop
//! where the same run without PFC does, its senders are paused for the share the bottleneck
//! denies them, lossy priorities are untouched, DCQCN runs lossless on a leaf-spine, and the
//! end-of-run audit holds the switches' ingress counts to what they queue.

use ecnlab_core::units::{ByteSize, Duration};
use ecnlab_sim::summary::Summary;
use ecnlab_sim::tcp::CcKind;
use ecnlab_sim::workload::TrafficSpec;
use ecnlab_sim::Scenario;
use std::path::Path;

/// Eight long NewReno flows into one 10 Gbps port of a 300 KB shared buffer, no ECN: without
/// PFC the buffer overflows; with it the senders' NICs are paused instead.
fn incast(pfc: &str) -> Scenario {
    Scenario::from_toml(&incast_text(pfc)).unwrap()
}

fn incast_text(pfc: &str) -> String {
    let flows: String = (0..8).map(|h| format!("[[flows]]\nsrc = {h}\ndst = 8\n")).collect();
    format!(
        "name = \"pfc-incast\"\nduration = \"20ms\"\n[metrics]\nwarmup = \"5ms\"\n\
         [topology]\nkind = \"star\"\nhosts = 9\nlink_rate = \"10Gbps\"\nlink_delay = \"2us\"\n\
         [switch]\nbuffer = \"300KB\"\npool = \"300KB\"\n[switch.pfc]\n{pfc}\n[marking]\nscheme = \"none\"\n\
         [transport]\ncc = \"newreno\"\nsmall_queues = false\n{flows}"
    )
}

fn run(scn: &Scenario) -> Summary {
    ecnlab_sim::run(scn, scn.seed).unwrap_or_else(|e| panic!("{}: {e}", scn.name)).summary
}

#[test]
fn pfc_turns_buffer_overflow_into_pauses() {
    let lossy = run(&incast("enabled = false"));
    assert!(lossy.drops > 20, "without PFC the buffer overflows: {} drops", lossy.drops);
    assert!(lossy.pfc.is_none(), "no pfc block without PFC");

    let s = run(&incast("enabled = true"));
    assert_eq!(s.drops, 0, "a lossless priority drops nothing: {:?}", s.drops_by_reason);
    let pfc = s.pfc.expect("the pfc block");
    // Each sender gets an eighth of the bottleneck, so its NIC is paused ~7/8 of the time.
    let nics: Vec<_> = pfc.queues.iter().filter(|q| q.port.starts_with('h')).collect();
    assert_eq!(nics.len(), 8, "{:?}", pfc.queues);
    for q in &nics {
        assert!((0.80..0.95).contains(&q.paused_fraction), "{}: paused {:.3}", q.port, q.paused_fraction);
        assert!(q.pauses > 10);
    }
    assert_eq!(pfc.pauses, pfc.queues.iter().map(|q| q.pauses).sum::<u64>());
    // The bottleneck stays busy, and the switch holds about what the threshold allows:
    // alpha x free with 8 ports paused at once is B / (1 + 8 / 8) = 150 KB, plus what is in
    // flight when the PAUSEs land.
    let port = s.queues.iter().find(|q| q.port == "s0->h8").unwrap();
    assert!(port.goodput_bps > 9.5e9, "{}", port.goodput_bps);
    assert!((150_000..250_000).contains(&port.max_qlen_bytes), "{}", port.max_qlen_bytes);
    assert!(s.long_flows.unwrap().jain_index.unwrap() > 0.99);
}

/// A static threshold pauses without a shared pool; the pause reaches the sender after the
/// frame in transmission, the 64-byte frame and the link delay, so the switch holds at most
/// the threshold plus what arrives meanwhile (2 us each way at 10 Gbps: a few packets).
#[test]
fn a_static_threshold_bounds_each_ingress() {
    let mut scn = incast("enabled = true\nxoff = \"30KB\"");
    scn.switch.pool = None;
    scn.switch.buffer = ByteSize(1_000_000);
    let s = run(&scn);
    assert_eq!(s.drops, 0);
    let port = s.queues.iter().find(|q| q.port == "s0->h8").unwrap();
    // 8 ingress ports x (30 KB + 2 x 2 us x 10 Gbps + 2 packets + 1 packet being sent) < 8 x 38 KB.
    assert!(port.max_qlen_bytes <= 8 * 38_000, "{}", port.max_qlen_bytes);
    assert!(port.max_qlen_bytes >= 8 * 30_000 - 8 * 1_500, "{}", port.max_qlen_bytes);
}

/// Only the listed queues are lossless: priority 1 (lossless) is paused and never drops,
/// priority 0 (lossy) drops and its senders are never paused. DWRR shares the port between
/// them (under strict priority queue 0 would starve queue 1 after its first window).
#[test]
fn only_the_lossless_queues_are_paused() {
    let mut scn = incast("enabled = true\nqueues = [1]");
    scn.switch.queues = 2;
    scn.switch.scheduler.kind = ecnlab_core::sched::SchedulerKind::Dwrr;
    for (i, f) in scn.flows.iter_mut().enumerate() {
        f.class = (i % 2) as u8; // hosts 1, 3, 5, 7 send in queue 1
    }
    let s = run(&scn);
    let q = |n: u64| s.queues.iter().find(|q| q.port == "s0->h8" && q.queue == n).unwrap();
    assert_eq!(q(1).drops, 0, "the lossless queue");
    assert!(q(0).drops > 0, "the lossy queue still overflows");
    let pfc = s.pfc.unwrap();
    let paused: Vec<(&str, u64)> = pfc.queues.iter().map(|q| (q.port.as_str(), q.queue)).collect();
    // Only the senders of queue 1, and only their NICs' queue 1: with PFC a NIC has the
    // switch's queues, so a PAUSE stops one priority (the ACKs of queue 0 still leave).
    assert_eq!(paused, [("h1->s0", 1), ("h3->s0", 1), ("h5->s0", 1), ("h7->s0", 1)]);
}

/// DCQCN on the ECN# leaf-spine with PFC on a 9 MB shared buffer (the DCQCN authors'
/// simulator): no drop, no go-back-N timeout, every flow done; the audit (run's end) holds.
#[test]
fn dcqcn_on_a_lossless_leaf_spine() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/ecnlab/scenarios/ecnsharp-leafspine.toml");
    let mut scn = Scenario::from_toml(&std::fs::read_to_string(&path).unwrap()).unwrap();
    scn.transport.cc = CcKind::Dcqcn;
    scn.switch.buffer = ByteSize(9_000_000);
    scn.switch.pool = Some(ByteSize(9_000_000));
    scn.switch.pfc.enabled = true;
    scn.duration = Duration(2_000_000_000);
    for t in &mut scn.traffic {
        if let TrafficSpec::Poisson(p) = t {
            p.flows = 400;
            p.load = 0.9;
        }
    }
    let s = run(&scn);
    assert_eq!(s.drops, 0, "{:?}", s.drops_by_reason);
    assert_eq!(s.flows.timeouts, 0);
    assert_eq!(s.flows.unfinished, 0);
    assert!(s.pfc.is_some());
}

#[test]
fn bad_pfc_settings_are_refused_with_their_field() {
    let mut scn = incast("enabled = true");
    scn.switch.pool = None;
    assert!(scn.validate().unwrap_err().starts_with("switch.pfc.alpha: the dynamic threshold"));
    let scn = incast("enabled = true\nqueues = [3]");
    assert!(scn.validate().unwrap_err().starts_with("switch.pfc.queues[0]: queue 3 does not exist"));
    let mut scn = incast("enabled = true");
    scn.marking.non_ect = ecnlab_core::marking::NonEctPolicy::Drop;
    assert!(scn.validate().unwrap_err().starts_with("marking.non_ect: \"drop\" drops what switch.pfc keeps lossless"));
    let e = Scenario::from_toml(&incast_text("enabled = true\nxof = \"3KB\"")).unwrap_err();
    assert!(e.contains("switch.pfc") && e.contains("did you mean `xoff`"), "{e}");
}

/// DCQCN's hosts are RDMA NICs whose arbiter serves the QPs in turn (`dcqcn/sender.rs`):
/// eight QPs of one host, each starting at line rate towards its own receiver, share the
/// NIC with at most one packet each in its queue; nothing is dropped and they split the
/// link evenly. (A FIFO NIC fed at each QP's own rate held megabytes and dropped.)
#[test]
fn an_rdma_nic_serves_its_queue_pairs_in_turn() {
    let flows: String = (1..9).map(|d| format!("[[flows]]\nsrc = 0\ndst = {d}\n")).collect();
    let text = format!(
        "name = \"rdma-nic\"\nduration = \"20ms\"\n[metrics]\nwarmup = \"5ms\"\n\
         [topology]\nkind = \"star\"\nhosts = 9\nlink_rate = \"10Gbps\"\nlink_delay = \"2us\"\n\
         [switch]\nbuffer = \"1MB\"\n[marking]\nscheme = \"none\"\n[transport]\ncc = \"dcqcn\"\n{flows}"
    );
    let s = run(&Scenario::from_toml(&text).unwrap());
    assert_eq!(s.drops, 0);
    let nic = s.nics.as_ref().unwrap().iter().find(|n| n.port == "h0->s0").unwrap().clone();
    assert!(nic.max_qlen_bytes <= 8 * 1_500 + 40, "one packet per QP at most: {} B", nic.max_qlen_bytes);
    let long = s.long_flows.unwrap();
    let total: f64 = long.goodput_bps.iter().sum();
    assert!(total > 9.0e9, "the NIC stays busy: {total}");
    assert!(long.jain_index.unwrap() > 0.99, "{:?}", long.goodput_bps);
}
