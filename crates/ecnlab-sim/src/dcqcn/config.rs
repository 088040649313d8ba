//! The scenario's `[transport.dcqcn]` table: DCQCN's reaction-point (RP) and
//! notification-point (NP) parameters, and the go-back-N reliability settings.
//!
//! Sources. The ECN# paper (TCC 2022 §5.1, §5.4.4) states no DCQCN host parameters, only
//! "For DCQCN's probabilistic marking algorithm, we mainly refer to the simulator from
//! DCQCN's paper" and that DCQCN's (marking) parameters are derived from high-percentile
//! RTTs. So the defaults are those of
//! the DCQCN paper (Zhu et al., SIGCOMM 2015, §3.1 and its parameter table), which were
//! given for 40 Gbps links. Times (timers, CNP interval) and the EWMA gain are kept as they
//! are; the two rate steps are *scaled with the line rate* (they are left unset by default
//! and derived from the line rate the sender is built with): R_AI = line / 1000, i.e. the
//! paper's 40 Mbps at 40 Gbps and 10 Mbps at ECN#'s 10 Gbps, and R_HAI = 10 x R_AI (QCN's
//! ratio, IEEE 802.1Qau and the Mellanox NIC defaults 5 / 50 Mbps). The minimum rate is
//! scaled the same way (line / 1000).
//!
//! The byte counter B = 10 MB is the paper's value; at 10 Gbps it fires every 8 ms, so the
//! rate timer drives almost all increases. Many public simulators use far smaller values
//! (and Mellanox NICs ~2 MB); set `byte_counter` to explore them.

use ecnlab_core::units::{ByteSize, Duration, Rate, NS_PER_US};
use serde::{Deserialize, Serialize};

/// DCQCN parameters (`[transport.dcqcn]`). Times are [`Duration`]s (`"55us"`), sizes
/// [`ByteSize`]s (`"10MB"`), rates [`Rate`]s (`"40Mbps"`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DcqcnConfig {
    /// EWMA gain g of the rate-reduction factor alpha (RP). Default 1/256 (DCQCN paper
    /// §3.1 and parameter table).
    pub g: f64,
    /// Initial alpha. Default 1 (DCQCN paper §3.1: "The initial value of alpha is 1"), so
    /// a flow's first CNP halves its rate.
    pub alpha_init: f64,
    /// K: alpha decays, alpha = (1 - g) alpha, every `alpha_timer` without a CNP. Default
    /// 55 us (DCQCN paper §3.1: "K must be larger than the CNP generation timer. Our
    /// implementation uses K = 55 us").
    pub alpha_timer: Duration,
    /// T: period of the rate-increase timer, restarted by every CNP. Default 55 us (DCQCN
    /// paper's parameter table; the QCN standard's 1.5 ms-scale timers were too slow for
    /// 40 Gbps, §3.1/§5).
    pub rate_timer: Duration,
    /// B: the byte counter triggers a rate-increase event every `byte_counter` bytes sent
    /// (wire bytes, retransmissions included), restarted by every CNP. Default 10 MB
    /// (DCQCN paper's parameter table).
    pub byte_counter: ByteSize,
    /// F: number of fast-recovery steps after a cut (the stage logic compares the timer
    /// and byte-counter event counts with F). Default 5 (DCQCN paper §3.1, as in QCN).
    pub fast_recovery_steps: u32,
    /// R_AI, the additive-increase step of the target rate. Unset (default): line rate /
    /// 1000, the DCQCN paper's 40 Mbps at 40 Gbps scaled to the sender's line rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_ai: Option<Rate>,
    /// R_HAI, the hyper-increase step (the i-th hyper step adds i x R_HAI). Unset
    /// (default): 10 x R_AI (QCN's ratio; Mellanox NIC defaults 5 / 50 Mbps).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_hai: Option<Rate>,
    /// Floor of the current rate. Unset (default): line rate / 1000 (the paper gives no
    /// value; ours, scaled like R_AI). Clamped to at most the line rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<Rate>,
    /// N: the NP sends at most one CNP per flow per `cnp_interval`. Default 50 us (DCQCN
    /// paper §3.1: "We use N = 50 us").
    pub cnp_interval: Duration,
    /// The receiver ACKs every `ack_every` in-order data packets (and at once: duplicates,
    /// the first in-order packet after a NAK, packets carrying PSH). Default 1, an ACK per
    /// packet as the DCQCN/HPCC ns-3 simulators' default ACK interval of 1.
    pub ack_every: u32,
    /// Retransmission timeout of go-back-N: with no cumulative progress for `rto`, the
    /// sender resends from the oldest unacknowledged byte. Fixed, no backoff, as a RoCE
    /// QP's ACK timeout (4.096 us x 2^n, set per QP). Default 5 ms, ecnlab's TCP `rto_min`
    /// default, so loss recovery in the DCQCN and TCP experiments compares like with like.
    pub rto: Duration,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: 1.0 / 256.0,
            alpha_init: 1.0,
            alpha_timer: Duration(55 * NS_PER_US),
            rate_timer: Duration(55 * NS_PER_US),
            byte_counter: ByteSize(10_000_000),
            fast_recovery_steps: 5,
            rate_ai: None,
            rate_hai: None,
            min_rate: None,
            cnp_interval: Duration(50 * NS_PER_US),
            ack_every: 1,
            rto: Duration::from_ms(5),
        }
    }
}

/// Rates of one sender, resolved against its line rate (bits per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ResolvedRates {
    pub line: f64,
    pub ai: f64,
    pub hai: f64,
    pub min: f64,
}

impl DcqcnConfig {
    /// Checks ranges; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        let p = "transport.dcqcn";
        if !(self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("{p}.g: {} is not in (0, 1]", self.g));
        }
        if !(0.0..=1.0).contains(&self.alpha_init) {
            return Err(format!("{p}.alpha_init: {} is not in [0, 1]", self.alpha_init));
        }
        for (name, d) in [("alpha_timer", self.alpha_timer), ("rate_timer", self.rate_timer), ("rto", self.rto)] {
            if d.0 == 0 {
                return Err(format!("{p}.{name}: must be > 0"));
            }
        }
        if self.byte_counter.0 == 0 {
            return Err(format!("{p}.byte_counter: must be > 0"));
        }
        if self.ack_every == 0 {
            return Err(format!("{p}.ack_every: must be >= 1"));
        }
        for (name, r) in [("rate_ai", self.rate_ai), ("rate_hai", self.rate_hai), ("min_rate", self.min_rate)] {
            if r == Some(Rate(0)) {
                return Err(format!("{p}.{name}: must be > 0 (leave it unset for the scaled default)"));
            }
        }
        Ok(())
    }

    /// R_AI, R_HAI and the minimum rate for a sender whose line rate is `line_bps`.
    pub(crate) fn resolve(&self, line_bps: u64) -> ResolvedRates {
        let line = line_bps.max(1) as f64;
        let ai = self.rate_ai.map_or(line / 1000.0, |r| r.bps() as f64);
        let hai = self.rate_hai.map_or(10.0 * ai, |r| r.bps() as f64);
        let min = self.min_rate.map_or(line / 1000.0, |r| r.bps() as f64).min(line);
        ResolvedRates { line, ai, hai, min }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_parse_and_round_trip() {
        let d = DcqcnConfig::default();
        d.validate().unwrap();
        let c: DcqcnConfig = toml::from_str(
            r#"
            g = 0.0625
            rate_timer = "300us"
            byte_counter = "2MB"
            rate_ai = "5Mbps"
            "#,
        )
        .unwrap();
        assert_eq!(c.g, 0.0625);
        assert_eq!(c.rate_timer.ns(), 300_000);
        assert_eq!(c.byte_counter.bytes(), 2_000_000);
        assert_eq!(c.rate_ai, Some(Rate::mbps(5)));
        assert_eq!(c.rate_hai, None);
        assert_eq!(c.cnp_interval.ns(), 50_000);
        assert!(toml::from_str::<DcqcnConfig>("bogus = 1").is_err());
        assert!(DcqcnConfig { g: 0.0, ..d.clone() }.validate().is_err());
        assert!(DcqcnConfig { rate_ai: Some(Rate(0)), ..d.clone() }.validate().is_err());
        assert!(DcqcnConfig { ack_every: 0, ..d.clone() }.validate().is_err());
        for x in [d.clone(), c] {
            let s = toml::to_string(&x).unwrap();
            assert_eq!(toml::from_str::<DcqcnConfig>(&s).unwrap(), x);
            let j = serde_json::to_string(&x).unwrap();
            assert_eq!(serde_json::from_str::<DcqcnConfig>(&j).unwrap(), x);
        }
        // Scaling: the paper's 40 Mbps at 40 Gbps; 10 / 100 Mbps at 10 Gbps.
        assert_eq!(d.resolve(40_000_000_000).ai, 40e6);
        let r = d.resolve(10_000_000_000);
        assert_eq!((r.ai, r.hai, r.min), (10e6, 100e6, 10e6));
        let r = DcqcnConfig { rate_ai: Some(Rate::mbps(5)), ..d }.resolve(10_000_000_000);
        assert_eq!((r.ai, r.hai), (5e6, 50e6));
    }
}
