//! The scenario: typed structs that a scenario file (TOML, or the JSON the Python front end
//! hands over) deserializes into. Configuration flows one way: file -> these structs ->
//! the built network. Unknown keys are errors; every error names its field path.
//!
//! One room per part of a scenario: [`scenario`] (the whole, and its parsers),
//! [`topology`], [`host`], [`rtt_variation`], [`flows`] (listed flows and probes),
//! [`metrics`], [`tiers`] (switch settings per tier); then what is checked before a run: [`validate`] (checks across fields) and
//! [`memory`] (the memory estimate).

pub mod flows;
pub mod host;
pub mod limits;
pub mod memory;
pub mod metrics;
pub mod rtt_variation;
pub mod scenario;
pub mod tiers;
pub mod topology;
pub mod validate;

pub use flows::{FlowSpec, ProbeSpec};
pub use host::HostConfig;
pub use limits::{MAX_CORE_LINKS, MAX_DELAY_NS, MAX_HOSTS, MAX_MSS, MAX_PACKET_BYTES, MIN_PROBE_BYTES};
pub use memory::MemoryEstimate;
pub use metrics::MetricsConfig;
pub use rtt_variation::{DelayDist, RttVariation, RttVariationMode};
pub use scenario::{mtu_of, Scenario};
pub use tiers::TierConfig;
pub use topology::Topology;

#[cfg(test)]
mod tests;
