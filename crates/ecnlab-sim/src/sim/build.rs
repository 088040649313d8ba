//! What [`Simulator::new`](super::Simulator::new) assembles from a validated scenario: the
//! wire (an egress [`Port`] per directed link, switch ports with their tier's settings,
//! host NICs with the host's; the shared buffer pools; PFC's side), the generated
//! arrivals, and the event wheel's horizon.

use crate::config::Scenario;
use crate::tcp::config::CcKind;
use crate::topology::Net;
use crate::wire::{Link, PfcWire, Wire};
use crate::workload::{self, FlowArrival, HostInfo};
use ecnlab_core::buffer::BufferPool;
use ecnlab_core::marking::{MarkingConfig, SchemeName};
use ecnlab_core::port::{Port, PortConfig};
use ecnlab_core::rng::Stream;
use ecnlab_core::units::{tx_time_ns, ByteSize, Nanos};

/// The wire of `net` under `scn`; an error names the scenario key behind it.
pub(super) fn wire(scn: &Scenario, net: &Net, seed: u64) -> Result<Wire, String> {
    // DCQCN's hosts are RDMA NICs whose arbiter serves the QPs in turn (dcqcn/sender.rs):
    // they hold a packet per QP and never drop their own.
    let rdma = scn.transport.cc == CcKind::Dcqcn;
    let nic_buffer = if rdma { ByteSize(u64::MAX) } else { scn.host.nic_buffer(scn.transport.profile) };
    // A host's NIC is one FIFO; with PFC it has the switches' queues under strict priority
    // and their DSCP map, so that a PAUSE stops only its priority (IEEE 802.1Qbb is per
    // priority at every device: an RDMA NIC sends its ACKs and CNPs while data is paused).
    let nic_cfg = if scn.switch.pfc.enabled {
        let sw = &scn.switch;
        PortConfig {
            queues: sw.queues,
            buffer: nic_buffer,
            dscp_to_queue: sw.dscp_to_queue.clone(),
            ..Default::default()
        }
    } else {
        PortConfig { queues: 1, buffer: nic_buffer, ..Default::default() }
    };
    let no_marking = MarkingConfig { scheme: SchemeName::None, ..Default::default() };
    let mut links = Vec::with_capacity(net.links.len());
    for (i, spec) in net.links.iter().enumerate() {
        let is_switch_port = net.is_switch(spec.from);
        let port = if is_switch_port {
            let tier = net.tier_of(spec.from);
            let (sw, m) = scn.tier_settings(tier);
            Port::new(sw, m, spec.rate_bps, Stream::PortMarking(i as u64).seed(seed)).map_err(|e| {
                if scn.tiers.contains_key(tier) {
                    format!("tiers.{tier}.{e}")
                } else {
                    e
                }
            })?
        } else {
            let m = if scn.host.nic_marking { &scn.marking } else { &no_marking };
            // The NIC's marking is the scenario's, and with PFC its queues and DSCP map are
            // the switch's: their errors name those keys; only its buffer is its own.
            Port::new(&nic_cfg, m, spec.rate_bps, Stream::PortMarking(i as u64).seed(seed)).map_err(|e| {
                match e.strip_prefix("switch.buffer") {
                    Some(rest) => format!("host.nic_buffer{rest}"),
                    None => e,
                }
            })?
        };
        let shared_pool = match net.is_switch(spec.from) {
            true if scn.tier_settings(net.tier_of(spec.from)).0.pool.is_some() => Some(spec.from as u32),
            _ => None,
        };
        u32::try_from(spec.to).map_err(|_| "topology: more than 2^32 nodes".to_string())?;
        let pfc = is_switch_port && scn.switch.pfc.enabled;
        let arbiter = !is_switch_port && rdma;
        links.push(Link::new(spec, port, is_switch_port, shared_pool, pfc, arbiter));
    }
    scn.check_small_queues()?;
    // Shared pools, indexed by node (`Link::shared_pool`); ports of the other nodes
    // draw on their link's own pool.
    let pools = (0..net.n_nodes())
        .map(|n| match net.is_switch(n).then(|| scn.tier_settings(net.tier_of(n)).0.pool).flatten() {
            Some(ByteSize(b)) => BufferPool::new(b),
            None => BufferPool::unlimited(),
        })
        .collect();
    let n_links = links.len();
    let names = (0..net.links.len()).map(|li| crate::metrics::port_name(net, li)).collect();
    let mut wire = Wire::new(links, pools, names);
    if scn.switch.pfc.enabled {
        wire.pfc = Some(Box::new(PfcWire::new(&scn.switch.pfc, n_links, scn.switch.queues)));
    }
    wire.faults = ecnlab_core::fault::Faults::new(&scn.faults).map(Box::new);
    Ok(wire)
}

/// The `[[traffic]]` arrivals among `hosts`, from the traffic's own random stream.
pub(super) fn arrivals(scn: &Scenario, hosts: &HostInfo, seed: u64) -> Result<Vec<FlowArrival>, String> {
    workload::generate(&scn.traffic, hosts, Stream::Traffic.seed(seed)).map_err(|e| {
        if e.starts_with("traffic") {
            e
        } else {
            format!("traffic: {e}")
        }
    })
}

/// How far ahead the event wheel reaches: what a link schedules, the end of a transmission
/// and a packet's arrival (delay + transmission time of the largest packet).
pub(super) fn event_horizon(scn: &Scenario, net: &Net) -> Nanos {
    let max_wire = (scn.transport.mss + crate::packet::TCP_IP_HEADER) as u64;
    net.links.iter().map(|l| l.delay_ns + tx_time_ns(max_wire, l.rate_bps) + 1).max().unwrap_or(1)
}
