//! The scenario's `[transport]` table: which congestion control and its parameters.
//!
//! Defaults follow the papers' simulation code where it exists (REFERENCE-IMPLEMENTATIONS
//! §2.9, §4) and the RFCs otherwise; each field says where its default comes from.

use ecnlab_core::units::{Duration, NS_PER_US};
use serde::{Deserialize, Serialize};

/// Congestion control flavour of a TCP sender (and the matching receiver ECN behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum CcKind {
    /// NewReno (RFC 5681 + RFC 6582) without ECN: packets are not-ECT, losses are the only
    /// congestion signal. The receiver never echoes CE.
    #[serde(rename = "newreno", alias = "new_reno", alias = "reno")]
    NewReno,
    /// "ECN*" of the TCN paper: NewReno plus RFC 3168 ECN (halve once per window on ECE,
    /// receiver latches ECE until it sees CWR).
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
    /// CUBIC (RFC 9438) as Linux's net/ipv4/tcp_cubic.c, without ECN (the `linux`
    /// profile only; `tcp::linux::cubic`).
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize)]
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

/// TCP parameters (the scenario's `[transport]` table). Sizes in bytes or packets (MSS-sized
/// segments), times as [`Duration`]s (`"5ms"`, `"40us"`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control: `"newreno"`, `"ecn_star"`, `"dctcp"` (default), `"dctcp_dualq"`, or
    /// `"dcqcn"` (rate-based).
    pub cc: CcKind,
    /// Payload bytes per full segment. Default 1460 (1500-byte packets with the 40-byte
    /// TCP/IP header; TCN-NS2 and MQ-ECN-NS2 scripts).
    pub mss: u32,
    /// Initial congestion window in segments. Default 10 (RFC 6928; ns3-ecn-sharp
    /// InitialCwnd 10). The TCN large-scale experiments use 16.
    pub init_cwnd: u32,
    /// Lower bound of the computed RTO. Default 5 ms: what both simulation codebases use
    /// (TCN-NS2/MQ-ECN-NS2 `minrto_`, ns3-ecn-sharp MinRto). The TCN testbed runs (Linux)
    /// used 10 ms; RFC 6298 §2.4 suggests 1 s for the Internet.
    pub rto_min: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1). Default 5 ms (TCN-NS2
    /// `rtxcur_init_` = `minrto_` = 5 ms). Not bounded below by `rto_min`.
    pub rto_init: Duration,
    /// Upper bound of the backed-off RTO (RFC 6298 §5.5). Default 64 s (ns-2 `maxrto_`).
    pub rto_max: Duration,
    /// The receiver ACKs every `delayed_ack` in-order full segments (RFC 1122 §4.2.3.2,
    /// RFC 5681 §4.2). Default 1: an ACK per segment, as all three papers' simulations
    /// (ns-2 `segsperack_` 1, ns-3 DelAckCount 1). Out-of-order, duplicate and gap-filling
    /// segments, and segments carrying FIN, are always ACKed at once.
    pub delayed_ack: u32,
    /// Delayed-ACK timer, started by the first unacknowledged in-order segment (used only
    /// when `delayed_ack` > 1). Default 40 us, a datacenter-scaled value (about a third of
    /// the papers' base RTTs); Linux's floor is 40 ms (TCP_DELACK_MIN) and ns-3's default
    /// 200 ms: set `"40ms"` to model an unmodified Linux receiver.
    pub delayed_ack_timeout: Duration,
    /// DCTCP EWMA gain g (`dctcp` only). Default 1/16 (DCTCP paper, RFC 8257, TCN-NS2
    /// scripts, ns3-ecn-sharp).
    pub dctcp_g: f64,
    /// Initial DCTCP alpha (both DCTCP variants). Default 0 as the TCN-NS2 ns-2 code (a
    /// new flow does not cut on its first marks); ns-3 and Linux start at 1 (RFC 8257 §3.3
    /// recommends 1, the conservative choice).
    pub dctcp_alpha_init: f64,
    /// Resolution of `dctcp`'s alpha as a number of fractional bits: alpha is truncated to
    /// a multiple of 2^-bits after each update. Default 0 = double precision (ns-2);
    /// Linux and the original Stanford patch use 10.
    pub dctcp_alpha_bits: u32,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2). Default 3.
    pub dupack_thresh: u32,
    /// Limited Transmit (RFC 3042; RFC 5681 §3.2 SHOULD): on the first and second duplicate
    /// ACK, send one segment of new data each, beyond cwnd by at most 2 SMSS, without
    /// changing cwnd, so that a window of 2-4 segments can still collect the three duplicate
    /// ACKs of fast retransmit. Default true (ns-3's LimitedTransmit default; Linux).
    pub limited_transmit: bool,
    /// Which partial ACKs during NewReno fast recovery restart the retransmission timer:
    /// `"slow_but_steady"` (default: each one, RFC 6582 §4) or `"impatient"` (only the
    /// first, RFC 6582 §3.2 step 5). With SACK-less recovery of a burst of N losses,
    /// Slow-but-Steady takes N round trips, Impatient about one RTO plus a slow start.
    pub partial_ack_rto: PartialAckRto,
    /// Cap on the congestion window in segments (stands for the receiver's advertised
    /// window; the window never grows past it). Default 1,000,000, i.e. no cap in practice;
    /// TCN-NS2 uses `window_` 1256.
    pub max_cwnd: u32,
    /// Floor of the congestion window in segments after an ECN reduction (ECN* halving,
    /// DCTCP cut). Default 2, as Linux's DCTCP (`max(.., 2)`) and RFC 5681's 2·SMSS floor
    /// for ssthresh; ns-2 and ns-3 let it fall to 1. Loss recovery keeps RFC 5681's rules
    /// (ssthresh >= 2 MSS, 1 MSS after a timeout).
    pub min_cwnd: u32,
    /// Reset cwnd to min(cwnd, init_cwnd) before sending after an idle period longer than
    /// the RTO (RFC 5681 §4.1). Default true (TCN-NS2 `slow_start_restart_` true; Linux
    /// `tcp_slow_start_after_idle` 1). Matters for request/response on persistent
    /// connections.
    pub slow_start_restart: bool,
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
    /// `cubic`: HyStart (tcp_cubic.c's `hystart` module parameter), which leaves slow start
    /// early on an ACK train as long as the minimum RTT or on a delay increase. Default
    /// true, as the kernel.
    pub hystart: bool,
    /// DCQCN parameters (used when `cc = "dcqcn"`).
    pub dcqcn: crate::dcqcn::DcqcnConfig,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Dctcp,
            mss: 1460,
            init_cwnd: 10,
            rto_min: Duration::from_ms(5),
            rto_init: Duration::from_ms(5),
            rto_max: Duration::from_ms(64_000),
            delayed_ack: 1,
            delayed_ack_timeout: Duration(40 * NS_PER_US),
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 0.0,
            dctcp_alpha_bits: 0,
            dupack_thresh: 3,
            limited_transmit: true,
            partial_ack_rto: PartialAckRto::SlowButSteady,
            max_cwnd: 1_000_000,
            min_cwnd: 2,
            slow_start_restart: true,
            dualq_g: 1.0 / 256.0,
            dualq_alpha_bits: 20,
            dualq_per_ack_alpha: true,
            dualq_progressive: true,
            dualq_grow_in_cwr: true,
            hystart: true,
            dcqcn: Default::default(),
        }
    }
}

impl TcpConfig {
    /// A default configuration with the given congestion control.
    pub fn with_cc(cc: CcKind) -> Self {
        TcpConfig { cc, ..Default::default() }
    }

    /// Checks ranges; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.cc == CcKind::Dcqcn {
            self.dcqcn.validate()?;
        }
        let gain_ok = |g: f64| g > 0.0 && g <= 1.0;
        if self.mss == 0 {
            return Err("transport.mss must be > 0".into());
        }
        if self.init_cwnd == 0 {
            return Err("transport.init_cwnd must be >= 1".into());
        }
        if self.rto_min.0 == 0 || self.rto_init.0 == 0 {
            return Err("transport.rto_min and transport.rto_init must be > 0".into());
        }
        if self.rto_max < self.rto_min || self.rto_max < self.rto_init {
            return Err("transport.rto_max must be >= rto_min and >= rto_init".into());
        }
        if self.delayed_ack == 0 {
            return Err("transport.delayed_ack must be >= 1".into());
        }
        if self.delayed_ack > 1 && self.delayed_ack_timeout.0 == 0 {
            return Err("transport.delayed_ack_timeout must be > 0 when delayed_ack > 1".into());
        }
        if !gain_ok(self.dctcp_g) {
            return Err(format!("transport.dctcp_g = {} must be in (0, 1]", self.dctcp_g));
        }
        if !gain_ok(self.dualq_g) {
            return Err(format!("transport.dualq_g = {} must be in (0, 1]", self.dualq_g));
        }
        if !(0.0..=1.0).contains(&self.dctcp_alpha_init) {
            return Err(format!("transport.dctcp_alpha_init = {} must be in [0, 1]", self.dctcp_alpha_init));
        }
        if self.dctcp_alpha_bits > 52 || self.dualq_alpha_bits > 52 {
            return Err("transport.*_alpha_bits must be <= 52 (0 = double precision)".into());
        }
        if self.dupack_thresh == 0 {
            return Err("transport.dupack_thresh must be >= 1".into());
        }
        if self.min_cwnd == 0 {
            return Err("transport.min_cwnd must be >= 1".into());
        }
        if self.max_cwnd < self.init_cwnd.max(self.min_cwnd) {
            return Err("transport.max_cwnd must be >= init_cwnd and >= min_cwnd".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_parse() {
        TcpConfig::default().validate().unwrap();
        let c: TcpConfig = toml::from_str(
            r#"
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
        // Round trip through serde.
        let s = toml::to_string(&TcpConfig::default()).unwrap();
        assert_eq!(toml::from_str::<TcpConfig>(&s).unwrap(), TcpConfig::default());
    }
}
