//! The switch's configuration file (JSON). `ecnlab emulate` writes it from a scenario; a
//! user can also write one by hand (see the crate README).
//!
//! `switch` and `marking` are ecnlab-core's own [`PortConfig`] and [`MarkingConfig`]: the
//! very tables of a scenario file, so the emulated port is configured exactly as a
//! simulated one.

use ecnlab_core::fault::FaultConfig;
use ecnlab_core::port::PortConfig;
use ecnlab_core::units::{ByteSize, Duration, Rate};
use ecnlab_core::MarkingConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EmuConfig {
    /// One entry per switch port, in port order.
    pub ports: Vec<PortSpec>,
    /// Queues, buffer, scheduler of every egress port (a scenario's `[switch]`).
    #[serde(default)]
    pub switch: PortConfig,
    /// Marking scheme of every egress port (a scenario's `[marking]`).
    #[serde(default)]
    pub marking: MarkingConfig,
    #[serde(default)]
    pub shaper: ShaperConfig,
    /// DSCP under which frames that are not IPv4 (ARP, IPv6, ...) are classified.
    #[serde(default)]
    pub non_ip_dscp: u8,
    /// MAC -> port entries installed before the first frame (they win over learning).
    #[serde(default)]
    pub static_macs: Vec<StaticMac>,
    /// Learn source MACs (a transparent bridge). Default true.
    #[serde(default = "yes")]
    pub learn: bool,
    /// Master seed (probabilistic schemes draw from a stream derived per port).
    #[serde(default)]
    pub seed: u64,
    /// Frames in the pool (default: enough for every port's buffer in 64-byte frames,
    /// at most 32768).
    #[serde(default)]
    pub pool_frames: Option<usize>,
    /// Receive buffer of each port's socket (SO_RCVBUFFORCE). Frames waiting here count in
    /// the sojourn time; if it overflows the kernel drops them and PACKET_STATISTICS says so.
    #[serde(default = "default_rcvbuf")]
    pub socket_rcvbuf: ByteSize,
    /// Write cumulative counters every this often (JSON lines) when a time-series file is
    /// given.
    #[serde(default)]
    pub stats_interval: Option<Duration>,
    /// When the next wake-up is closer than this, spin instead of sleeping in ppoll (trades
    /// CPU for timing precision at high rates). Default 0: always sleep.
    #[serde(default)]
    pub spin: Duration,
    /// Run the event loop under SCHED_FIFO at this priority (1..=99; needs CAP_SYS_NICE).
    /// Frames waiting in a socket while the switch is descheduled count in their sojourn, so
    /// on a busy machine the switch should not wait for other processes. The kernel's RT
    /// throttling (sched_rt_runtime_us) still leaves the rest of the system 5 % of each CPU.
    /// Default: none (normal scheduling).
    #[serde(default)]
    pub realtime_priority: Option<u8>,
    /// Record this many TCP frames at ingress (the report's `ingress_tcp`: the kernels'
    /// trains, SYNs and retransmissions with their receive timestamps). Default 0: none.
    #[serde(default)]
    pub capture_frames: usize,
    /// Segments lost on purpose before any queue (a scenario's `[faults]`, the rule the
    /// simulator applies: `ecnlab_core::fault`). `drop_byte` counts the connection's bytes
    /// as the kernel sends them (the agent's message header included).
    #[serde(default)]
    pub faults: FaultConfig,
}

/// A switch without ports, every other field at its default (a file's omitted fields).
impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            ports: Vec::new(),
            switch: PortConfig::default(),
            marking: MarkingConfig::default(),
            shaper: ShaperConfig::default(),
            non_ip_dscp: 0,
            static_macs: Vec::new(),
            learn: yes(),
            seed: 0,
            pool_frames: None,
            socket_rcvbuf: default_rcvbuf(),
            stats_interval: None,
            spin: Duration(0),
            realtime_priority: None,
            capture_frames: 0,
            faults: FaultConfig::default(),
        }
    }
}

fn yes() -> bool {
    true
}
fn default_rcvbuf() -> ByteSize {
    ByteSize(4_000_000)
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    /// Interface to bind (in the switch's network namespace).
    pub ifname: String,
    /// Name in reports (default: the interface name), e.g. `s0->h3`.
    #[serde(default)]
    pub name: Option<String>,
    /// Line rate of the port: the marking scheme's `link_rate_bps` and, times
    /// `shaper.rate_fraction`, the shaper's rate.
    pub rate: Rate,
    /// One-way propagation delay of the link between this port and its host, applied in
    /// both directions inside the switch: a frame from the host joins its egress queue
    /// `delay` after its kernel receive timestamp, and a frame to the host is written to the
    /// socket `delay` after it leaves the queue. (netem is not available everywhere, and
    /// this way the delay is exact to the event loop's timing.) Default 0.
    #[serde(default)]
    pub delay: Duration,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShaperConfig {
    /// Shaper rate as a fraction of the port's rate. Default 0.995 (TCN §5: 995 Mbit/s on
    /// 1 GbE NICs).
    pub rate_fraction: f64,
    /// Bucket depth. Default 2.5 KB (TCN §5: ~1.67 MTU).
    pub burst: ByteSize,
    /// Bytes charged per frame on top of its length (e.g. 24 for preamble, FCS and
    /// inter-frame gap of real Ethernet). Default 0: the frame as the kernel sees it, as
    /// Linux tbf in the TCN prototype.
    pub overhead: u32,
}

impl Default for ShaperConfig {
    fn default() -> Self {
        ShaperConfig { rate_fraction: 0.995, burst: ByteSize(2500), overhead: 0 }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StaticMac {
    pub mac: String,
    pub port: usize,
}

impl EmuConfig {
    /// Parse from JSON; errors name the field path.
    pub fn from_json(text: &str) -> Result<EmuConfig, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let cfg: EmuConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            format!("{path}: {}", e.into_inner())
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.ports.is_empty() {
            return Err("ports: at least one port is needed".into());
        }
        if self.ports.len() > 250 {
            return Err("ports: at most 250 ports".into());
        }
        for (i, p) in self.ports.iter().enumerate() {
            if p.rate.0 == 0 {
                return Err(format!("ports[{i}].rate: must be larger than 0"));
            }
            if p.ifname.is_empty() || p.ifname.len() > 15 {
                return Err(format!("ports[{i}].ifname: `{}` is not an interface name", p.ifname));
            }
        }
        let f = self.shaper.rate_fraction;
        if !(f > 0.0 && f <= 1.0) {
            return Err(format!("shaper.rate_fraction: {f} is not in (0, 1]"));
        }
        if self.non_ip_dscp >= 64 {
            return Err(format!("non_ip_dscp: {} is not in 0..63", self.non_ip_dscp));
        }
        for (i, s) in self.static_macs.iter().enumerate() {
            crate::wire::parse_mac(&s.mac).map_err(|e| format!("static_macs[{i}].mac: {e}"))?;
            if s.port >= self.ports.len() {
                return Err(format!("static_macs[{i}].port: port {} does not exist", s.port));
            }
        }
        if let Some(p) = self.realtime_priority {
            if !(1..=99).contains(&p) {
                return Err(format!("realtime_priority: {p} is not between 1 and 99"));
            }
        }
        if self.capture_frames > crate::capture::MAX_FRAMES {
            return Err(format!("capture_frames: at most {}", crate::capture::MAX_FRAMES));
        }
        if self.pool_frames == Some(0) {
            return Err("pool_frames: must be larger than 0".into());
        }
        Ok(())
    }
}
