//! `[host]`: the hosts' NICs, connections and tagging.

use ecnlab_core::units::{ByteSize, Duration};
use serde::{Deserialize, Serialize};

/// Host settings.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Buffer of a host's NIC queue (one FIFO, tail drop, no marking). Not under DCQCN,
    /// whose hosts are RDMA NICs: a QP hands the NIC its next packet only once the previous
    /// one has left, so the NIC holds a packet per QP and never drops. Unset: 4 MB under
    /// `textbook`; under `linux` 32 MiB, what a Linux host's default qdisc holds (fq_codel's
    /// `memory_limit`, sch_fq_codel.c `fq_codel_init`: `32 << 20`), since TCP small queues
    /// bound each socket, not the host (at 100 Gbps a 4 MB NIC dropped).
    #[schemars(extend("default" = "33554432B", "x-textbook-default" = "4000000B"))]
    pub nic_buffer: Option<ByteSize>,
    /// Flows of `[[traffic]]` between the same two hosts reuse idle connections (a
    /// persistent connection pool per host pair, as the TCN testbed's TrafficGenerator and
    /// the TCN/MQ-ECN ns-2 scripts do); a flow that finds every connection busy opens a new
    /// one. `false`: every flow gets a fresh connection (the ECN# ns-3 scripts).
    pub persistent_connections: bool,
    /// PIAS tagging at the sender (TCN §6.1.3/§6.2): a message's bytes below
    /// `pias_thresholds[i]` carry DSCP i, the rest the flow's class. Empty = off.
    pub pias_thresholds: Vec<ByteSize>,
    /// DSCP of pure ACKs and DCQCN's CNPs (default: the DSCP of the data segment they
    /// answer). TCN-NS2 sends every pure ACK at priority 0; RDMA NICs send ACKs and CNPs in a
    /// high-priority class of their own.
    pub ack_dscp: Option<u8>,
    /// Apply the scenario's marking scheme at host NIC queues too. A sender whose own NIC is
    /// its bottleneck (several flows from one host) otherwise builds an unmarked queue up to
    /// `nic_buffer`; real Linux hosts avoid that with TCP Small Queues, and the TCN/MQ-ECN
    /// ns-2 scripts install the switch's queue (with its marking) on host links too
    /// (REFERENCE-IMPLEMENTATIONS §5, quirk 6).
    pub nic_marking: bool,
    /// `linux` only. Segmentation offload (TSO/GSO): the largest skb a sender hands its NIC
    /// (`sk_gso_max_size`), whose segments the NIC puts on the wire back to back, as many per
    /// skb as the kernel line's `tcp_tso_autosize` and the window allow; `"off"`: one MSS per
    /// skb. Unset: `"64KiB"`, a stock Linux NIC's (`GSO_MAX_SIZE`).
    #[schemars(extend("default" = "65536B"))]
    pub tso: Option<crate::tcp::linux::offload::Tso>,
    /// `linux` only. Generic Receive Offload: the receiver's NAPI poll merges each flow's
    /// contiguous segments into skbs of up to 64 KB, and TCP ACKs once per skb. Unset: on, as
    /// every Linux NIC driver.
    #[schemars(extend("default" = true))]
    pub gro: Option<bool>,
    /// `linux` only. The receive interrupt coalescing (`ethtool -C rx-usecs`): GRO's NAPI poll
    /// comes this long after a batch's first packet. Unset: 8us (mlx5's).
    #[schemars(extend("default" = "8us"))]
    pub rx_coalesce: Option<Duration>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            nic_buffer: None,
            persistent_connections: true,
            pias_thresholds: Vec::new(),
            ack_dscp: None,
            nic_marking: false,
            tso: None,
            gro: None,
            rx_coalesce: None,
        }
    }
}

impl HostConfig {
    /// The keys left unset take their profile's defaults (the NIC buffer: each profile's; the
    /// offloads: the linux profile's), so that a resolved scenario says what ran; the
    /// textbook hosts have no offloads (left unset, refused if given).
    pub fn resolve(&mut self, profile: crate::tcp::Profile) {
        use crate::tcp::linux::offload::{Tso, GSO_MAX_SIZE, RX_COALESCE_NS};
        self.nic_buffer.get_or_insert(Self::default_nic_buffer(profile));
        if profile == crate::tcp::Profile::Linux {
            self.tso.get_or_insert(Tso::Size(ByteSize(GSO_MAX_SIZE)));
            self.gro.get_or_insert(true);
            self.rx_coalesce.get_or_insert(Duration(RX_COALESCE_NS));
        }
    }

    /// The NIC queue's buffer of a host of `profile` (`nic_buffer`, or its profile's default).
    pub fn nic_buffer(&self, profile: crate::tcp::Profile) -> ByteSize {
        self.nic_buffer.unwrap_or(Self::default_nic_buffer(profile))
    }

    fn default_nic_buffer(profile: crate::tcp::Profile) -> ByteSize {
        match profile {
            crate::tcp::Profile::Textbook => ByteSize(4_000_000),
            crate::tcp::Profile::Linux => ByteSize(32 << 20),
        }
    }

    /// The NIC offloads a host of `profile` runs with (the textbook hosts have none).
    pub fn offloads(&self, profile: crate::tcp::Profile) -> crate::tcp::linux::offload::Offloads {
        use crate::tcp::linux::offload::Offloads;
        match profile {
            crate::tcp::Profile::Linux => Offloads::resolve(self.tso, self.gro, self.rx_coalesce),
            crate::tcp::Profile::Textbook => Offloads::NONE,
        }
    }
}
