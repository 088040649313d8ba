//! `[metrics]`: what is measured and when.

use ecnlab_core::units::Duration;
use serde::{Deserialize, Serialize};

/// What is measured and when.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsConfig {
    /// Per-queue statistics and probe RTTs count from this time on.
    pub warmup: Duration,
    /// Time-series sampling period (goodput, queue length, sojourn per queue).
    pub sample_interval: Duration,
    /// Record time series at all.
    pub timeseries: bool,
    /// End the run as soon as every flow of a given size has completed (and no long-lived
    /// flow exists), instead of at `duration`, which then only caps the run.
    pub stop_when_done: bool,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            warmup: Duration(0),
            sample_interval: Duration::from_ms(1),
            timeseries: true,
            stop_when_done: true,
        }
    }
}
