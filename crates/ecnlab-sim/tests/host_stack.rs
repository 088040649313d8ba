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

/// One segment over a 2-host star (10 Gbps, 10 us per link), offloads off, by hand: with the
/// handshake the SYN (40 B: 32 ns a hop) takes 2 x 10,032 ns, the SYN-ACK as long back; at
/// 40,128 ns the sender's pure ACK (32 ns) and its segment (1,200 ns a hop) leave back to back,
/// and the segment is in at 40,128 + 32 + 2 x 11,200 = 62,560 ns. Pre-established: 22,400 ns.
#[test]
fn the_handshake_costs_one_round_trip_before_the_first_byte() {
    let fct = |handshake: bool| {
        let text = format!(
            "name = \"syn\"\nduration = \"10ms\"\n[topology]\nkind = \"star\"\nhosts = 2\nlink_rate = \"10Gbps\"\n\
             link_delay = \"10us\"\n[host]\ntso = \"off\"\ngro = false\n[transport]\nhandshake = {handshake}\n\
             [[flows]]\nsrc = 0\ndst = 1\nsize = \"1460B\"\n"
        );
        let scn = Scenario::from_toml(&text).unwrap();
        let out = ecnlab_sim::run(&scn, scn.seed).unwrap();
        (out.flows[0].fct_us.unwrap() * 1e3).round() as u64
    };
    assert_eq!(fct(true), 62_560);
    assert_eq!(fct(false), 22_400);
}
