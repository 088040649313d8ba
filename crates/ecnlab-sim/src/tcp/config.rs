//! The scenario's `[transport]` table: which congestion control and its parameters.
//!
//! `profile` chooses the host stack (`"linux"`, the default, or `"textbook"`) and with it the
//! defaults of the keys whose value differs between the two. Textbook defaults follow the
//! papers' simulation code where it exists (REFERENCE-IMPLEMENTATIONS §2.9, §4) and the RFCs
//! otherwise; linux defaults are the kernel's (include/net/tcp.h constants, sysctl
//! defaults). Each field says where its defaults come from and which profile reads it.

pub use super::linux::kernel::Kernel;
use ecnlab_core::units::{ByteSize, Duration, NS_PER_US};
use serde::{Deserialize, Serialize};

/// Congestion control flavour of a TCP sender (and the matching receiver ECN behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema)]
pub enum CcKind {
    /// NewReno (RFC 5681 + RFC 6582) without ECN: packets are not-ECT, losses are the only
    /// congestion signal. The receiver never echoes CE. Under `linux`: the kernel's `reno`
    /// (with SACK recovery and PRR).
    #[serde(rename = "newreno", alias = "new_reno", alias = "reno")]
    NewReno,
    /// "ECN*" of the TCN paper: NewReno plus RFC 3168 ECN (halve once per window on ECE,
    /// receiver latches ECE until it sees CWR). Under `linux`: `reno` with `tcp_ecn = 1`.
    #[serde(rename = "ecn_star", alias = "ecn")]
    EcnStar,
    /// DCTCP (Alizadeh et al., SIGCOMM'10; RFC 8257): alpha EWMA once per window of data,
    /// cwnd *= 1 - alpha/2 at most once per window, two-state CE echo at the receiver.
    #[default]
    #[serde(rename = "dctcp")]
    Dctcp,
    /// The modified DCTCP of Kühlewind et al., "Using Data Center TCP (DCTCP) in the
    /// Internet" (dual AQM paper) §III: alpha updated on every ACK (g = 1/2^8) with 2^-20
    /// resolution, progressive window reduction from the window at the start of CWR, window
    /// growth allowed during CWR.
    #[serde(rename = "dctcp_dualq", alias = "dctcp_modified")]
    DctcpDualq,
    /// CUBIC (RFC 9438; Linux's default, net/ipv4/tcp_cubic.c), without ECN. `linux`
    /// profile only. Parameters: `cubic_*`.
    #[serde(rename = "cubic")]
    Cubic,
    /// DCQCN (Zhu et al., SIGCOMM'15): a rate-based transport, not TCP; the simulator drives
    /// `crate::dcqcn` instead of the TCP state machines. Parameters: `[transport.dcqcn]`.
    #[serde(rename = "dcqcn")]
    Dcqcn,
}

impl CcKind {
    /// Whether this flavour sends ECT packets and reacts to ECN-Echo.
    pub fn uses_ecn(self) -> bool {
        !matches!(self, CcKind::NewReno | CcKind::Cubic)
    }
    /// DCQCN (rate-based; not driven by the TCP state machines).
    pub fn is_rate_based(self) -> bool {
        matches!(self, CcKind::Dcqcn)
    }
    /// Whether this flavour is one of the DCTCP variants (two-state CE echo at the receiver).
    pub fn is_dctcp(self) -> bool {
        matches!(self, CcKind::Dctcp | CcKind::DctcpDualq)
    }
}

/// Which partial ACKs of NewReno fast recovery restart the retransmission timer (RFC 6582
/// §3.2 step 5 and §4; the RFC calls neither variant optimal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema)]
pub enum PartialAckRto {
    /// Every partial ACK restarts the timer ("Slow-but-Steady", RFC 6582 §4; ns-2's NewReno
    /// default and RFC 6298 §5.3's rule): recovery repairs one hole per round trip for as
    /// long as it takes, the inflated window keeps sending new data meanwhile.
    #[default]
    #[serde(rename = "slow_but_steady")]
    SlowButSteady,
    /// Only the first partial ACK of a recovery restarts the timer (the algorithm of RFC 6582
    /// §3.2 step 5, its "Impatient" variant; ns-3 does this). When many segments of one
    /// window were lost, the timer fires about one RTO after the first partial ACK and
    /// go-back-N resends the rest instead of repairing one hole per round trip.
    #[serde(rename = "impatient")]
    Impatient,
}

/// Which host stack a connection runs (`transport.profile`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema)]
pub enum Profile {
    /// What Linux does (`tcp::linux`): whole-segment windows, SACK with RFC 6675 recovery,
    /// PRR, delayed ACKs with quick-ACK, the kernel's RTO and congestion-control modules.
    /// The default for a scenario that does not say.
    #[default]
    #[serde(rename = "linux")]
    Linux,
    /// The NewReno of `tcp::sender` / `tcp::receiver` as the papers' ns-2 code has it: byte
    /// windows, no SACK, every window cut at once. Kept bit for bit for the catalog entries
    /// that reproduce ns-2 (and early ns-3) simulations.
    #[serde(rename = "textbook")]
    Textbook,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Linux => "linux",
            Profile::Textbook => "textbook",
        }
    }
}

/// TCP parameters (the scenario's `[transport]` table), resolved for one [`Profile`]: every
/// field holds a value, the profile's default where the file gave none. Sizes in bytes or
/// packets (MSS-sized segments), times as [`Duration`]s (`"5ms"`, `"40us"`).
///
/// A key the chosen profile does not use is refused (e.g. `partial_ack_rto` under `linux`,
/// `sack` under `textbook`): the field keeps its value but nothing reads it. Which keys each
/// profile uses, and the defaults that differ, are in [`TcpConfig::for_profile`] and
/// `RawTcpConfig::resolve`, the one place they are decided.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(try_from = "RawTcpConfig", into = "RawTcpConfig")]
// The schema is the table as written (every key optional, the `linux` profile's defaults;
// `crate::schema` adds which keys each profile takes), with these fields' docs.
#[schemars(!try_from, !into, default, deny_unknown_fields)]
pub struct TcpConfig {
    /// `"linux"` (default) or `"textbook"`.
    pub profile: Profile,
    /// Congestion control: `"newreno"`, `"ecn_star"`, `"dctcp"` (default in both profiles),
    /// `"dctcp_dualq"`, `"cubic"` (`linux` only) or `"dcqcn"` (rate-based, either profile).
    /// The default stays `"dctcp"` under `linux` although Linux's own default is Cubic: a
    /// scenario of ecnlab studies ECN marking, and Cubic without ECN would make every
    /// marking threshold inert. Write `cc = "cubic"` for a stock Linux host.
    pub cc: CcKind,
    /// Payload bytes per full segment. Default 1460 (1500-byte packets with the 40-byte
    /// TCP/IP header; TCN-NS2 and MQ-ECN-NS2 scripts).
    pub mss: u32,
    /// Initial congestion window in segments. Default 10 (RFC 6928; Linux TCP_INIT_CWND;
    /// ns3-ecn-sharp InitialCwnd 10). The TCN large-scale experiments use 16.
    pub init_cwnd: u32,
    /// Lower bound of the computed RTO. `textbook` default 5 ms: what both simulation
    /// codebases use (TCN-NS2/MQ-ECN-NS2 `minrto_`, ns3-ecn-sharp MinRto). `linux` default
    /// 200 ms (TCP_RTO_MIN, include/net/tcp.h; `ip route ... rto_min` changes it). The TCN
    /// testbed runs used 10 ms; RFC 6298 §2.4 suggests 1 s for the Internet.
    pub rto_min: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1). `textbook` default 5 ms (TCN-NS2
    /// `rtxcur_init_` = `minrto_` = 5 ms); `linux` default 1 s (TCP_TIMEOUT_INIT). Not
    /// bounded below by `rto_min`.
    pub rto_init: Duration,
    /// Upper bound of the backed-off RTO (RFC 6298 §5.5). `textbook` default 64 s (ns-2
    /// `maxrto_`), `linux` default 120 s (TCP_RTO_MAX).
    pub rto_max: Duration,
    /// `textbook`: the receiver ACKs every `delayed_ack` in-order full segments (RFC 1122
    /// §4.2.3.2, RFC 5681 §4.2); default 1, an ACK per segment, as all three papers'
    /// simulations (ns-2 `segsperack_` 1, ns-3 DelAckCount 1). Out-of-order, duplicate and
    /// gap-filling segments, and segments carrying PSH, are always ACKed at once.
    /// `linux`: 2 (default) is Linux's rule, an ACK once more than one full segment is
    /// unacknowledged (`__tcp_ack_snd_check`), with quick-ACK mode at the start and after
    /// idle; 1 turns delayed ACKs off (as `TCP_QUICKACK` held on). Other values are refused.
    pub delayed_ack: u32,
    /// Delayed-ACK timer, started by the first unacknowledged in-order segment (used only
    /// when `delayed_ack` > 1). `textbook` default 40 us, a datacenter-scaled value (about a
    /// third of the papers' base RTTs). `linux` default 40 ms, the kernel's floor
    /// (TCP_DELACK_MIN); datacenter kernels lower it (`ip route ... quickack`, or a patched
    /// TCP_DELACK_MIN), so it is settable. ns-3's default is 200 ms.
    pub delayed_ack_timeout: Duration,
    /// DCTCP EWMA gain g (`dctcp` only). Default 1/16 (DCTCP paper, RFC 8257, TCN-NS2
    /// scripts, ns3-ecn-sharp; Linux `dctcp_shift_g` 4).
    pub dctcp_g: f64,
    /// Initial DCTCP alpha (both DCTCP variants). `textbook` default 0 as the TCN-NS2 code
    /// (a new flow does not cut on its first marks); `linux` default 1 (tcp_dctcp.c
    /// `dctcp_alpha_on_init` = DCTCP_MAX_ALPHA; RFC 8257 §3.3 recommends 1).
    pub dctcp_alpha_init: f64,
    /// `textbook` only. Resolution of `dctcp`'s alpha as a number of fractional bits: alpha
    /// is truncated to a multiple of 2^-bits after each update. Default 0 = double precision
    /// (ns-2); Linux's fixed 10 bits (DCTCP_MAX_ALPHA 1024) are what `linux` always does.
    pub dctcp_alpha_bits: u32,
    /// Duplicate ACKs (`linux`: segments SACKed above a hole) that trigger fast retransmit
    /// (RFC 5681 §3.2, RFC 6675 DupThresh; Linux `tcp_reordering` 3). Default 3.
    pub dupack_thresh: u32,
    /// Limited Transmit (RFC 3042; RFC 5681 §3.2 SHOULD): on the first and second duplicate
    /// ACK, send one segment of new data each, beyond cwnd by at most 2 SMSS, without
    /// changing cwnd, so that a window of 2-4 segments can still collect the three duplicate
    /// ACKs of fast retransmit. Default true (ns-3's LimitedTransmit default; Linux always,
    /// through `tcp_packets_in_flight` leaving SACKed segments out of the flight).
    pub limited_transmit: bool,
    /// `textbook` only. Which partial ACKs during NewReno fast recovery restart the
    /// retransmission timer: `"slow_but_steady"` (default: each one, RFC 6582 §4) or
    /// `"impatient"` (only the first, RFC 6582 §3.2 step 5). With SACK-less recovery of a
    /// burst of N losses, Slow-but-Steady takes N round trips, Impatient about one RTO plus a
    /// slow start.
    pub partial_ack_rto: PartialAckRto,
    /// Cap on the congestion window in segments (stands for the receiver's advertised
    /// window; Linux `snd_cwnd_clamp`). Default 1,000,000, i.e. no cap in practice; TCN-NS2
    /// uses `window_` 1256.
    pub max_cwnd: u32,
    /// `textbook` only. Floor of the congestion window in segments after an ECN reduction
    /// (ECN* halving, DCTCP cut). Default 2, as Linux's DCTCP (`max(.., 2)`) and RFC 5681's
    /// 2·SMSS floor for ssthresh; ns-2 and ns-3 let it fall to 1. Loss recovery keeps RFC
    /// 5681's rules (ssthresh >= 2 MSS, 1 MSS after a timeout). Under `linux` each
    /// congestion control's `ssthresh` sets its own floor, as in the kernel.
    pub min_cwnd: u32,
    /// Reset cwnd to min(cwnd, init_cwnd) before sending after an idle period longer than
    /// the RTO (RFC 5681 §4.1; `linux`: `tcp_cwnd_restart`, which halves cwnd once per RTO
    /// idle down to the restart window). Default true (TCN-NS2 `slow_start_restart_` true;
    /// Linux `tcp_slow_start_after_idle` 1). Matters for request/response on persistent
    /// connections.
    pub slow_start_restart: bool,
    /// `linux` only. SACK (RFC 2018) with RFC 6675 loss recovery. Default true (Linux
    /// `tcp_sack` 1). False: the receiver sends no SACK blocks and the sender counts
    /// duplicate ACKs as SACKed segments (Linux's `tcp_add_reno_sack`, "Reno emulation").
    pub sack: bool,
    /// `linux` only. Proportional Rate Reduction (RFC 6937, PRR-SSRB as Linux's
    /// `tcp_cwnd_reduction`) for every window reduction: loss recovery and the CWR state after
    /// ECN-Echo. Default true (Linux since 3.2). False: cwnd drops to ssthresh at once when
    /// the reduction starts (what Linux did before PRR, without rate halving).
    pub prr: bool,
    /// `cubic` (`linux` only): multiplicative decrease factor beta. Default 0.7 (RFC 9438
    /// §4.6; tcp_cubic.c `beta` 717/1024).
    pub cubic_beta: f64,
    /// `cubic`: the constant C of W_cubic(t) = C(t - K)^3 + W_max, in segments per second
    /// cubed. Default 0.4 (RFC 9438 §5; tcp_cubic.c `bic_scale` 41).
    pub cubic_c: f64,
    /// `cubic`: fast convergence (RFC 9438 §4.7). Default true (tcp_cubic.c).
    pub cubic_fast_convergence: bool,
    /// `cubic`: HyStart (leave slow start on ACK-train length or delay increase). Default
    /// true (tcp_cubic.c `hystart` 1).
    pub cubic_hystart: bool,
    /// `dctcp_dualq`: EWMA gain per ACK. Default 1/2^8 (dual AQM paper §III-B c).
    pub dualq_g: f64,
    /// `dctcp_dualq`: alpha resolution in fractional bits. Default 20 (paper §III-A a:
    /// "changed the minimum resolution to 1/2^20").
    pub dualq_alpha_bits: u32,
    /// `dctcp_dualq`: update alpha on every ACK (paper §III-B c). Default true; false gives
    /// the once-per-window update of `dctcp` (with `dualq_g`).
    pub dualq_per_ack_alpha: bool,
    /// `dctcp_dualq`: progressive reduction (paper §III-B d): on every ECN-Echo during CWR,
    /// cwnd = min(cwnd, cwnd_max·(1 - alpha/2)) with cwnd_max the window when CWR began.
    /// Default true; false cuts once per window as `dctcp`.
    pub dualq_progressive: bool,
    /// `dctcp_dualq`: let cwnd grow during CWR (paper §III-A b). Default true; false is
    /// Linux's rule (no growth until the reduction window is acknowledged).
    pub dualq_grow_in_cwr: bool,
    /// `linux` only. The kernel line whose TCP the profile follows: `"3.18"` (the TCN
    /// testbed's, TCN §6.1), `"4.19"`, `"6.18"` (default: the kernel `ecnlab validate` runs
    /// against). It picks the rules that differ between lines, each written from that line's
    /// source (`tcp/linux/kernel.rs`): the pacing rate and TCP Small Queues' limit.
    pub kernel: Kernel,
    /// `linux` only. TCP Small Queues (`tcp_small_queue_check`, net/ipv4/tcp_output.c): a
    /// socket waits, instead of queueing in its host's NIC, once about 1 ms of its pacing rate
    /// (at least two packets, at most `limit_output_bytes`) sits below TCP, and resumes when
    /// its packets leave the NIC (their TX completion). Default true (Linux since 3.6); false:
    /// a sender fills its NIC, which drops beyond `host.nic_buffer`.
    pub small_queues: bool,
    /// `linux` only. `net.ipv4.tcp_limit_output_bytes`, TCP Small Queues' cap on a socket's
    /// bytes below TCP (under 3.18 its floor), by default the kernel line's: 128KiB (3.18),
    /// 256KiB (4.19), 4MiB (6.18).
    pub limit_output_bytes: ByteSize,
    /// `linux` only. Tail Loss Probe (`tcp_early_retrans` = 3, Linux 3.10 on; RFC 8985 §7): a
    /// tail unacknowledged for the line's probe timeout (about 2 SRTT, `tcp/linux/recovery.rs`)
    /// sends new data or the last segment again. Default true; needs `sack`.
    pub tlp: bool,
    /// `linux` only. RACK loss detection (`tcp_recovery` = 1, RFC 8985 §6, tcp_recovery.c): lost
    /// once a later-sent segment is delivered and a reordering window (min_rtt / 4) has passed;
    /// replaces DupThresh. Default: the line's (from 4.19; 3.18 has none); needs `sack`.
    pub rack: bool,
    /// `linux` only. Connections open with the three-way handshake (RFC 9293 §3.5, as
    /// `tcp_connect`): the sender's SYN, the receiver's SYN-ACK, then the sender's ACK and its
    /// first data; a lost SYN or SYN-ACK waits `rto_syn`, doubled per retry. Default true (what
    /// every Linux connection does); false: connections are pre-established, with `rto_init`
    /// standing for the RTO a handshake leaves behind.
    pub handshake: bool,
    /// `linux` only. The SYN's and SYN-ACK's retransmission timeout (RFC 6298 §5.7,
    /// `TCP_TIMEOUT_INIT`), doubled per retry (a SYN's after the kernel line's
    /// `tcp_syn_linear_timeouts` first ones: 4 under 6.18). Default 1s.
    pub rto_syn: Duration,
    /// `linux` only. SYN retransmissions before the connection fails (`tcp_syn_retries`;
    /// under 6.18 the linear ones come on top, as `tcp_write_timeout` counts). Default 6.
    pub syn_retries: u32,
    /// `linux` only. SYN-ACK retransmissions before the receiver forgets the connection
    /// request (`tcp_synack_retries`). Default 5.
    pub synack_retries: u32,
    /// DCQCN parameters (used when `cc = "dcqcn"`).
    pub dcqcn: crate::dcqcn::DcqcnConfig,
}

impl Default for TcpConfig {
    /// What a scenario without a `[transport]` table gets: the `linux` profile.
    fn default() -> Self {
        TcpConfig::for_profile(Profile::default())
    }
}

/// Keys only `textbook` reads, and keys only `linux` reads (the rest are shared).
pub const TEXTBOOK_ONLY: [&str; 3] = ["partial_ack_rto", "min_cwnd", "dctcp_alpha_bits"];
pub const LINUX_ONLY: [&str; 15] = [
    "sack",
    "prr",
    "cubic_beta",
    "cubic_c",
    "cubic_fast_convergence",
    "cubic_hystart",
    "kernel",
    "small_queues",
    "limit_output_bytes",
    "tlp",
    "rack",
    "handshake",
    "rto_syn",
    "syn_retries",
    "synack_retries",
];

impl TcpConfig {
    /// Every field at `profile`'s default.
    pub fn for_profile(profile: Profile) -> Self {
        let linux = profile == Profile::Linux;
        let ms = Duration::from_ms;
        TcpConfig {
            profile,
            cc: CcKind::Dctcp,
            mss: 1460,
            init_cwnd: 10,
            rto_min: if linux { ms(200) } else { ms(5) },
            rto_init: if linux { ms(1000) } else { ms(5) },
            rto_max: if linux { ms(120_000) } else { ms(64_000) },
            delayed_ack: if linux { 2 } else { 1 },
            delayed_ack_timeout: if linux { ms(40) } else { Duration(40 * NS_PER_US) },
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: if linux { 1.0 } else { 0.0 },
            dctcp_alpha_bits: 0,
            dupack_thresh: 3,
            limited_transmit: true,
            partial_ack_rto: PartialAckRto::SlowButSteady,
            max_cwnd: 1_000_000,
            min_cwnd: 2,
            slow_start_restart: true,
            sack: true,
            prr: true,
            cubic_beta: 0.7,
            cubic_c: 0.4,
            cubic_fast_convergence: true,
            cubic_hystart: true,
            dualq_g: 1.0 / 256.0,
            dualq_alpha_bits: 20,
            dualq_per_ack_alpha: true,
            dualq_progressive: true,
            dualq_grow_in_cwr: true,
            kernel: Kernel::default(),
            small_queues: true,
            limit_output_bytes: ByteSize(Kernel::default().limit_output_bytes()),
            tlp: true,
            rack: Kernel::default().has_rack(),
            handshake: linux,
            rto_syn: ms(1000),
            syn_retries: 6,
            synack_retries: 5,
            dcqcn: Default::default(),
        }
    }

    /// The `textbook` profile's defaults (today's model).
    pub fn textbook() -> Self {
        Self::for_profile(Profile::Textbook)
    }

    /// A `textbook` configuration with the given congestion control (the unit tests of
    /// `tcp::sender` / `tcp::receiver`).
    pub fn with_cc(cc: CcKind) -> Self {
        TcpConfig { cc, ..Self::textbook() }
    }

    /// Whether `cc` runs under this configuration's profile (a flow's own `cc` included).
    pub fn check_cc(&self, cc: CcKind) -> Result<(), String> {
        if cc == CcKind::Cubic && self.profile != Profile::Linux {
            return Err(format!(
                "cc = \"cubic\" needs transport.profile = \"linux\" (profile is \"{}\")",
                self.profile.name()
            ));
        }
        Ok(())
    }

    /// Checks ranges; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        self.check_cc(self.cc).map_err(|e| format!("transport.{e}"))?;
        if self.cc == CcKind::Dcqcn {
            self.dcqcn.validate()?;
        }
        let gain_ok = |g: f64| g > 0.0 && g <= 1.0;
        if self.mss == 0 {
            return Err("transport.mss: must be > 0".into());
        }
        if self.init_cwnd == 0 {
            return Err("transport.init_cwnd: must be >= 1".into());
        }
        for (key, d) in [("rto_min", self.rto_min), ("rto_init", self.rto_init)] {
            if d.0 == 0 {
                return Err(format!("transport.{key}: must be > 0 (times are whole nanoseconds)"));
            }
        }
        if self.rto_max < self.rto_min || self.rto_max < self.rto_init {
            return Err("transport.rto_max: must be >= rto_min and >= rto_init".into());
        }
        if self.delayed_ack == 0 {
            return Err("transport.delayed_ack: must be >= 1".into());
        }
        if self.profile == Profile::Linux && self.delayed_ack > 2 {
            return Err(format!(
                "transport.delayed_ack: {} under profile \"linux\": 2 is Linux's rule, 1 turns delayed ACKs off",
                self.delayed_ack
            ));
        }
        if self.delayed_ack > 1 && self.delayed_ack_timeout.0 == 0 {
            return Err("transport.delayed_ack_timeout: must be > 0 when delayed_ack > 1".into());
        }
        if !gain_ok(self.dctcp_g) {
            return Err(format!("transport.dctcp_g: {} is not in (0, 1]", self.dctcp_g));
        }
        if !gain_ok(self.dualq_g) {
            return Err(format!("transport.dualq_g: {} is not in (0, 1]", self.dualq_g));
        }
        // The kernel keeps DCTCP's gain as a shift (`dctcp_shift_g`): the linux profile's
        // DCTCPs take g = 1/2^n only, as the emulator's BPF DCTCP does.
        if self.profile == Profile::Linux {
            for (key, g, most) in [("dctcp_g", self.dctcp_g, 10u32), ("dualq_g", self.dualq_g, 20)] {
                if crate::tcp::linux::dctcp::dctcp_shift_g(g, most).is_none() {
                    return Err(format!(
                        "transport.{key}: {g} under profile \"linux\": the kernel keeps the gain as a shift, g = 1/2^n (n = 0..{most})"
                    ));
                }
            }
        }
        if !(0.0..=1.0).contains(&self.dctcp_alpha_init) {
            return Err(format!("transport.dctcp_alpha_init: {} is not in [0, 1]", self.dctcp_alpha_init));
        }
        if self.dctcp_alpha_bits > 52 || self.dualq_alpha_bits > 52 {
            return Err("transport.*_alpha_bits must be <= 52 (0 = double precision)".into());
        }
        if self.dupack_thresh == 0 {
            return Err("transport.dupack_thresh: must be >= 1".into());
        }
        if self.min_cwnd == 0 {
            return Err("transport.min_cwnd: must be >= 1".into());
        }
        if self.max_cwnd < self.init_cwnd.max(self.min_cwnd) {
            return Err("transport.max_cwnd: must be >= init_cwnd and >= min_cwnd".into());
        }
        if !(self.cubic_beta > 0.0 && self.cubic_beta < 1.0) {
            return Err(format!("transport.cubic_beta = {} must be in (0, 1)", self.cubic_beta));
        }
        if self.rack && !self.kernel.has_rack() {
            return Err(format!("transport.rack: kernel {} has no RACK (Linux 4.4 on)", self.kernel.name()));
        }
        if self.handshake && self.rto_syn.0 == 0 {
            return Err("transport.rto_syn: must be > 0 (times are whole nanoseconds)".into());
        }
        if self.small_queues && self.limit_output_bytes.0 == 0 {
            return Err(
                "transport.limit_output_bytes: must be > 0 with small_queues (false turns TCP Small Queues off)".into(),
            );
        }
        if !(self.cubic_c > 0.0 && self.cubic_c.is_finite()) {
            return Err(format!("transport.cubic_c = {} must be > 0", self.cubic_c));
        }
        Ok(())
    }
}

/// The `[transport]` table as written: every key optional, so that a default can depend on
/// the profile and a key the profile does not use can be refused. Serializing a
/// [`TcpConfig`] writes every key its profile uses and no other, so it reads back equal.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTcpConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    profile: Option<Profile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cc: Option<CcKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mss: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    init_cwnd: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rto_min: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rto_init: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rto_max: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delayed_ack: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delayed_ack_timeout: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dctcp_g: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dctcp_alpha_init: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dctcp_alpha_bits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dupack_thresh: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limited_transmit: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_ack_rto: Option<PartialAckRto>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_cwnd: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_cwnd: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slow_start_restart: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prr: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cubic_beta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cubic_c: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cubic_fast_convergence: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cubic_hystart: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dualq_g: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dualq_alpha_bits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dualq_per_ack_alpha: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dualq_progressive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dualq_grow_in_cwr: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<Kernel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    small_queues: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limit_output_bytes: Option<ByteSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tlp: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    handshake: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rto_syn: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    syn_retries: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    synack_retries: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dcqcn: Option<crate::dcqcn::DcqcnConfig>,
}

impl RawTcpConfig {
    /// The keys given in the file that `profile` does not use.
    fn unused_key(&self, profile: Profile) -> Option<&'static str> {
        let given = |k: &str| match k {
            "partial_ack_rto" => self.partial_ack_rto.is_some(),
            "min_cwnd" => self.min_cwnd.is_some(),
            "dctcp_alpha_bits" => self.dctcp_alpha_bits.is_some(),
            "sack" => self.sack.is_some(),
            "prr" => self.prr.is_some(),
            "cubic_beta" => self.cubic_beta.is_some(),
            "cubic_c" => self.cubic_c.is_some(),
            "cubic_fast_convergence" => self.cubic_fast_convergence.is_some(),
            "cubic_hystart" => self.cubic_hystart.is_some(),
            "kernel" => self.kernel.is_some(),
            "small_queues" => self.small_queues.is_some(),
            "limit_output_bytes" => self.limit_output_bytes.is_some(),
            "tlp" => self.tlp.is_some(),
            "rack" => self.rack.is_some(),
            "handshake" => self.handshake.is_some(),
            "rto_syn" => self.rto_syn.is_some(),
            "syn_retries" => self.syn_retries.is_some(),
            "synack_retries" => self.synack_retries.is_some(),
            _ => unreachable!("{k} is not a profile-specific key"),
        };
        let other: &[&'static str] = match profile {
            Profile::Linux => &TEXTBOOK_ONLY,
            Profile::Textbook => &LINUX_ONLY,
        };
        other.iter().copied().find(|k| given(k))
    }

    /// The profile's defaults with the given keys over them.
    fn resolve(self) -> Result<TcpConfig, String> {
        let profile = self.profile.unwrap_or_default();
        if let Some(k) = self.unused_key(profile) {
            return Err(format!("`{k}` is not used by profile \"{}\" (remove it or set profile)", profile.name()));
        }
        let d = TcpConfig::for_profile(profile);
        let kernel = self.kernel.unwrap_or(d.kernel);
        Ok(TcpConfig {
            profile,
            cc: self.cc.unwrap_or(d.cc),
            mss: self.mss.unwrap_or(d.mss),
            init_cwnd: self.init_cwnd.unwrap_or(d.init_cwnd),
            rto_min: self.rto_min.unwrap_or(d.rto_min),
            rto_init: self.rto_init.unwrap_or(d.rto_init),
            rto_max: self.rto_max.unwrap_or(d.rto_max),
            delayed_ack: self.delayed_ack.unwrap_or(d.delayed_ack),
            delayed_ack_timeout: self.delayed_ack_timeout.unwrap_or(d.delayed_ack_timeout),
            dctcp_g: self.dctcp_g.unwrap_or(d.dctcp_g),
            dctcp_alpha_init: self.dctcp_alpha_init.unwrap_or(d.dctcp_alpha_init),
            dctcp_alpha_bits: self.dctcp_alpha_bits.unwrap_or(d.dctcp_alpha_bits),
            dupack_thresh: self.dupack_thresh.unwrap_or(d.dupack_thresh),
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            partial_ack_rto: self.partial_ack_rto.unwrap_or(d.partial_ack_rto),
            max_cwnd: self.max_cwnd.unwrap_or(d.max_cwnd),
            min_cwnd: self.min_cwnd.unwrap_or(d.min_cwnd),
            slow_start_restart: self.slow_start_restart.unwrap_or(d.slow_start_restart),
            sack: self.sack.unwrap_or(d.sack),
            prr: self.prr.unwrap_or(d.prr),
            cubic_beta: self.cubic_beta.unwrap_or(d.cubic_beta),
            cubic_c: self.cubic_c.unwrap_or(d.cubic_c),
            cubic_fast_convergence: self.cubic_fast_convergence.unwrap_or(d.cubic_fast_convergence),
            cubic_hystart: self.cubic_hystart.unwrap_or(d.cubic_hystart),
            dualq_g: self.dualq_g.unwrap_or(d.dualq_g),
            dualq_alpha_bits: self.dualq_alpha_bits.unwrap_or(d.dualq_alpha_bits),
            dualq_per_ack_alpha: self.dualq_per_ack_alpha.unwrap_or(d.dualq_per_ack_alpha),
            dualq_progressive: self.dualq_progressive.unwrap_or(d.dualq_progressive),
            dualq_grow_in_cwr: self.dualq_grow_in_cwr.unwrap_or(d.dualq_grow_in_cwr),
            kernel,
            small_queues: self.small_queues.unwrap_or(d.small_queues),
            limit_output_bytes: self.limit_output_bytes.unwrap_or(ByteSize(kernel.limit_output_bytes())),
            tlp: self.tlp.unwrap_or(d.tlp),
            rack: self.rack.unwrap_or(kernel.has_rack()),
            handshake: self.handshake.unwrap_or(d.handshake),
            rto_syn: self.rto_syn.unwrap_or(d.rto_syn),
            syn_retries: self.syn_retries.unwrap_or(d.syn_retries),
            synack_retries: self.synack_retries.unwrap_or(d.synack_retries),
            dcqcn: self.dcqcn.unwrap_or(d.dcqcn),
        })
    }
}

impl TryFrom<RawTcpConfig> for TcpConfig {
    type Error = String;
    fn try_from(raw: RawTcpConfig) -> Result<Self, String> {
        raw.resolve()
    }
}

impl From<TcpConfig> for RawTcpConfig {
    fn from(c: TcpConfig) -> Self {
        let linux = c.profile == Profile::Linux;
        let tb = !linux;
        RawTcpConfig {
            profile: Some(c.profile),
            cc: Some(c.cc),
            mss: Some(c.mss),
            init_cwnd: Some(c.init_cwnd),
            rto_min: Some(c.rto_min),
            rto_init: Some(c.rto_init),
            rto_max: Some(c.rto_max),
            delayed_ack: Some(c.delayed_ack),
            delayed_ack_timeout: Some(c.delayed_ack_timeout),
            dctcp_g: Some(c.dctcp_g),
            dctcp_alpha_init: Some(c.dctcp_alpha_init),
            dctcp_alpha_bits: tb.then_some(c.dctcp_alpha_bits),
            dupack_thresh: Some(c.dupack_thresh),
            limited_transmit: Some(c.limited_transmit),
            partial_ack_rto: tb.then_some(c.partial_ack_rto),
            max_cwnd: Some(c.max_cwnd),
            min_cwnd: tb.then_some(c.min_cwnd),
            slow_start_restart: Some(c.slow_start_restart),
            sack: linux.then_some(c.sack),
            prr: linux.then_some(c.prr),
            cubic_beta: linux.then_some(c.cubic_beta),
            cubic_c: linux.then_some(c.cubic_c),
            cubic_fast_convergence: linux.then_some(c.cubic_fast_convergence),
            cubic_hystart: linux.then_some(c.cubic_hystart),
            dualq_g: Some(c.dualq_g),
            dualq_alpha_bits: Some(c.dualq_alpha_bits),
            dualq_per_ack_alpha: Some(c.dualq_per_ack_alpha),
            dualq_progressive: Some(c.dualq_progressive),
            dualq_grow_in_cwr: Some(c.dualq_grow_in_cwr),
            kernel: linux.then_some(c.kernel),
            small_queues: linux.then_some(c.small_queues),
            limit_output_bytes: linux.then_some(c.limit_output_bytes),
            tlp: linux.then_some(c.tlp),
            rack: linux.then_some(c.rack),
            handshake: linux.then_some(c.handshake),
            rto_syn: linux.then_some(c.rto_syn),
            syn_retries: linux.then_some(c.syn_retries),
            synack_retries: linux.then_some(c.synack_retries),
            dcqcn: Some(c.dcqcn),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_parse() {
        TcpConfig::default().validate().unwrap();
        TcpConfig::textbook().validate().unwrap();
        let c: TcpConfig = toml::from_str(
            r#"
            profile = "textbook"
            cc = "dctcp_dualq"
            init_cwnd = 16
            rto_min = "10ms"
            delayed_ack_timeout = "40ms"
            "#,
        )
        .unwrap();
        assert_eq!(c.cc, CcKind::DctcpDualq);
        assert_eq!(c.init_cwnd, 16);
        assert_eq!(c.rto_min.ns(), 10_000_000);
        assert_eq!(c.mss, 1460);
        for (s, k) in [
            ("newreno", CcKind::NewReno),
            ("ecn_star", CcKind::EcnStar),
            ("dctcp", CcKind::Dctcp),
            ("cubic", CcKind::Cubic),
        ] {
            let c: TcpConfig = toml::from_str(&format!("cc = \"{s}\"")).unwrap();
            assert_eq!(c.cc, k);
        }
        assert!(toml::from_str::<TcpConfig>("bogus = 1").is_err());
        assert!(TcpConfig { dctcp_g: 0.0, ..Default::default() }.validate().is_err());
        // Round trip through serde, both profiles: only the keys the profile uses are written.
        for c in [TcpConfig::default(), TcpConfig::textbook(), c] {
            let s = toml::to_string(&c).unwrap();
            assert_eq!(toml::from_str::<TcpConfig>(&s).unwrap(), c, "{s}");
        }
    }

    /// The textbook profile's defaults are the values every field had before profiles
    /// existed (written out here as they were), so that `profile = "textbook"` is today's
    /// model: the sender and receiver code it drives is unchanged.
    #[test]
    fn textbook_defaults_are_the_pre_profile_defaults() {
        let t: TcpConfig = toml::from_str(r#"profile = "textbook""#).unwrap();
        assert_eq!(t, TcpConfig::textbook());
        assert_eq!(t.cc, CcKind::Dctcp);
        assert_eq!((t.mss, t.init_cwnd), (1460, 10));
        assert_eq!(
            (t.rto_min, t.rto_init, t.rto_max),
            (Duration::from_ms(5), Duration::from_ms(5), Duration::from_ms(64_000))
        );
        assert_eq!((t.delayed_ack, t.delayed_ack_timeout), (1, Duration::from_us(40)));
        assert_eq!((t.dctcp_g, t.dctcp_alpha_init, t.dctcp_alpha_bits), (1.0 / 16.0, 0.0, 0));
        assert_eq!((t.dupack_thresh, t.limited_transmit, t.partial_ack_rto), (3, true, PartialAckRto::SlowButSteady));
        assert_eq!((t.max_cwnd, t.min_cwnd, t.slow_start_restart), (1_000_000, 2, true));
        assert_eq!((t.dualq_g, t.dualq_alpha_bits), (1.0 / 256.0, 20));
        assert!(t.dualq_per_ack_alpha && t.dualq_progressive && t.dualq_grow_in_cwr);
    }

    #[test]
    fn linux_is_the_default_profile_with_the_kernels_defaults() {
        let l: TcpConfig = toml::from_str("").unwrap();
        assert_eq!(l.profile, Profile::Linux);
        assert_eq!(l, TcpConfig::default());
        assert_eq!(l.rto_min, Duration::from_ms(200)); // TCP_RTO_MIN
        assert_eq!(l.rto_init, Duration::from_ms(1000)); // TCP_TIMEOUT_INIT
        assert_eq!(l.rto_max, Duration::from_ms(120_000)); // TCP_RTO_MAX
        assert_eq!((l.delayed_ack, l.delayed_ack_timeout), (2, Duration::from_ms(40))); // TCP_DELACK_MIN
        assert_eq!(l.init_cwnd, 10); // TCP_INIT_CWND
        assert_eq!(l.dctcp_alpha_init, 1.0); // dctcp_alpha_on_init = DCTCP_MAX_ALPHA
        assert!(l.sack && l.prr);
        // The kernel line and TCP Small Queues, with tcp_limit_output_bytes as that line has it.
        assert_eq!((l.kernel, l.small_queues, l.limit_output_bytes), (Kernel::V6_18, true, ByteSize(4 << 20)));
        let old: TcpConfig = toml::from_str("kernel = \"3.18\"").unwrap();
        assert_eq!(old.limit_output_bytes, ByteSize(128 << 10));
        let set: TcpConfig = toml::from_str("kernel = \"4.19\"\nlimit_output_bytes = \"1MiB\"").unwrap();
        assert_eq!(set.limit_output_bytes, ByteSize(1 << 20));
        let e = toml::from_str::<TcpConfig>("kernel = \"5.4\"").unwrap_err().to_string();
        assert!(e.contains("3.18") && e.contains("6.18"), "{e}");
        // Each part settable on its own.
        let l: TcpConfig = toml::from_str("sack = false\nprr = false\nrto_min = \"10ms\"\ndelayed_ack = 1").unwrap();
        assert!(!l.sack && !l.prr);
        assert_eq!((l.rto_min, l.delayed_ack), (Duration::from_ms(10), 1));
        l.validate().unwrap();
        assert!(TcpConfig { delayed_ack: 3, ..Default::default() }.validate().unwrap_err().contains("delayed_ack"));
    }

    #[test]
    fn a_key_the_profile_does_not_use_is_refused_by_name() {
        for k in ["partial_ack_rto = \"impatient\"", "min_cwnd = 1", "dctcp_alpha_bits = 10"] {
            let e = toml::from_str::<TcpConfig>(k).unwrap_err().to_string();
            let name = k.split(' ').next().unwrap();
            assert!(e.contains(&format!("`{name}` is not used by profile \"linux\"")), "{e}");
            toml::from_str::<TcpConfig>(&format!("profile = \"textbook\"\n{k}")).unwrap();
        }
        for k in [
            "sack = true",
            "prr = false",
            "cubic_beta = 0.5",
            "cubic_c = 0.4",
            "cubic_hystart = false",
            "cubic_fast_convergence = true",
            "kernel = \"3.18\"",
            "small_queues = true",
            "limit_output_bytes = \"1MB\"",
        ] {
            let e = toml::from_str::<TcpConfig>(&format!("profile = \"textbook\"\n{k}")).unwrap_err().to_string();
            let name = k.split(' ').next().unwrap();
            assert!(e.contains(&format!("`{name}` is not used by profile \"textbook\"")), "{e}");
        }
        let tb: TcpConfig = toml::from_str("profile = \"textbook\"\ncc = \"cubic\"").unwrap();
        assert!(tb.validate().unwrap_err().contains("cubic"), "cubic needs the linux profile");
    }
}
