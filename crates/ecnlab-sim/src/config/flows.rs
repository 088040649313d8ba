//! `[[flows]]` and `[[probes]]`: individually listed flows and ping probes.

use crate::tcp::CcKind;
use ecnlab_core::units::{ByteSize, Duration, Rate};
use serde::{Deserialize, Serialize};

/// One flow, or `count` identical flows.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Sending host (0-based).
    pub src: usize,
    /// Receiving host (0-based).
    pub dst: usize,
    /// DSCP (traffic class); selects the switch queue.
    #[serde(default)]
    pub class: u8,
    /// Number of identical flows.
    #[serde(default = "one")]
    pub count: u32,
    /// When the flows start.
    #[serde(default)]
    pub start: Duration,
    /// Each flow of this entry starts at `start` plus a delay drawn uniformly from
    /// [0, start_jitter) from the run's seed (a stream of its own): flows whose start times
    /// are otherwise fixed give different runs for different seeds. None: exactly `start`.
    #[serde(default)]
    pub start_jitter: Option<Duration>,
    /// When the application stops writing (long-lived flows); none = end of run.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Bytes to send; none = long-lived (until `stop`).
    #[serde(default)]
    pub size: Option<ByteSize>,
    /// Application rate limit (the application writes at this rate).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Congestion control of this flow (default: `transport.cc`).
    #[serde(default)]
    pub cc: Option<CcKind>,
}

fn one() -> u32 {
    1
}

/// A ping probe: small non-ECT request/reply packets between two hosts in a class.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Host that sends the pings (0-based).
    pub src: usize,
    /// Host that answers them.
    pub dst: usize,
    /// DSCP of requests and replies; selects the switch queue.
    #[serde(default)]
    pub class: u8,
    /// Time between two pings.
    pub interval: Duration,
    /// First ping.
    #[serde(default)]
    pub start: Duration,
    /// No ping after this time; none = end of run.
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Wire size of a probe packet.
    #[serde(default = "probe_size")]
    pub size: ByteSize,
}

fn probe_size() -> ByteSize {
    ByteSize(64)
}
