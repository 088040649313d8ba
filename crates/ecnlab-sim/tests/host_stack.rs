//! The `linux` hosts' own stack below TCP, end to end: TCP Small Queues hold a sender whose
//! NIC is its bottleneck to `tcp_limit_output_bytes` below TCP instead of letting its NIC
//! overflow (net/ipv4/tcp_output.c `tcp_small_queue_check`).

use ecnlab_sim::summary::Summary;
use ecnlab_sim::Scenario;

/// One long DCTCP flow over a two-host star at 10 Gbps: the switch forwards at the rate it
/// receives, so the only queue is the sender's NIC, and no switch marks the flow (nothing
/// stops its slow start but the NIC). Offloads off: one segment per skb.
fn nic_bound(transport: &str) -> Summary {
    let text = format!(
        "name = \"nic-bound\"\nduration = \"20ms\"\n[topology]\nkind = \"star\"\nhosts = 2\n\
         link_rate = \"10Gbps\"\nlink_delay = \"5us\"\n[switch]\nbuffer = \"1MB\"\n[host]\n\
         nic_buffer = \"1MB\"\ntso = \"off\"\ngro = false\n[transport]\nrto_min = \"5ms\"\n{transport}\n[[flows]]\nsrc = 0\ndst = 1\n"
    );
    let scn = Scenario::from_toml(&text).unwrap();
    ecnlab_sim::run(&scn, scn.seed).unwrap().summary
}

fn sender_nic(s: &Summary) -> (u64, u64) {
    let n = s.nics.as_ref().unwrap().iter().find(|n| n.port == "h0->s0").unwrap();
    (n.max_qlen_bytes, n.drops)
}

/// By hand, `limit_output_bytes = 64KiB` (the pacing rate's millisecond is far above it at
/// 10 Gbps): the socket may send while at most 65,536 B of skbs sit below TCP, each skb
/// 1,460 + 40 + 896 = 2,396 B of truesize, so at most 28 segments are in the host (the 28th
/// went at 27 x 2,396 = 64,692 B) and the NIC's queue behind the one on the wire holds 27:
/// 40,500 B; 28 for the instant an ACK comes at the very nanosecond a transmission ends and
/// is handled before the NIC's next dequeue of that nanosecond (the ended one is completed,
/// the NIC has not yet taken its successor). Without TCP Small Queues the flow's slow start
/// fills the 1 MB NIC, which drops.
#[test]
fn small_queues_hold_a_nic_bound_sender_to_the_limit() {
    let s = nic_bound("limit_output_bytes = \"64KiB\"");
    let (max, drops) = sender_nic(&s);
    assert!((27 * 1500..=28 * 1500).contains(&max) && drops == 0, "{max} B, {drops} drops");
    assert_eq!(s.drops, 0);
    let g = s.long_flows.as_ref().unwrap().goodput_bps[0];
    assert!(g > 9.5e9, "the limit costs no throughput: {g}");

    let off = nic_bound("small_queues = false");
    let (max, drops) = sender_nic(&off);
    assert!(max > 990_000 && drops > 0, "without TSQ the NIC fills and drops: {max} B, {drops} drops");
}
