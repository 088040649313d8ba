//! `[rtt_variation]`: extra one-way delays at the senders, and their distributions.

use crate::de::internally_tagged;
use ecnlab_core::units::Duration;
use serde::{Deserialize, Serialize};

/// Extra one-way delay to emulate RTT variation (ECN# §2.2, §5): added to the data
/// packets a sender puts on its access link, like the ECN# ns-3 scripts' DelayQueueDisc at
/// the server NIC (REFERENCE-IMPLEMENTATIONS §2.11); ACKs are not delayed.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RttVariation {
    /// Draw one delay per connection (`per_flow`) or one per sending host (`per_host`).
    #[serde(default)]
    pub mode: RttVariationMode,
    pub delay: DelayDist,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RttVariationMode {
    #[default]
    PerFlow,
    PerHost,
}

/// A distribution of extra delays.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
#[schemars(!remote, tag = "dist")]
pub enum DelayDist {
    /// The same delay everywhere.
    Fixed {
        /// The extra one-way delay.
        value: Duration,
    },
    /// Uniform between `min` and `max`.
    Uniform {
        /// Smallest extra delay.
        min: Duration,
        /// Largest extra delay.
        max: Duration,
    },
    /// One of `values`, equally likely (the ECN# ns-3 classes: 1, 20, 50, 80, 160 us).
    Choice {
        /// The delays to choose from, equally likely.
        values: Vec<Duration>,
    },
    /// An empirical CDF: `points = [[delay, cumulative probability], ...]`, linear
    /// interpolation between points.
    Empirical {
        /// `[[delay, cumulative probability], ...]`, non-decreasing, ending at 1.
        points: Vec<(Duration, f64)>,
    },
}

internally_tagged!(DelayDist, "dist");

impl DelayDist {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            DelayDist::Fixed { .. } => Ok(()),
            DelayDist::Uniform { min, max } if min > max => Err("min: larger than max".into()),
            DelayDist::Uniform { .. } => Ok(()),
            DelayDist::Choice { values } if values.is_empty() => Err("values: empty".into()),
            DelayDist::Choice { .. } => Ok(()),
            DelayDist::Empirical { points } => {
                if points.len() < 2 {
                    return Err("points: need at least 2 points".into());
                }
                if let Some(i) = points.iter().position(|p| !p.1.is_finite()) {
                    return Err(format!("points[{i}]: the probability is not a number"));
                }
                for (i, w) in points.windows(2).enumerate() {
                    if w[1].0 < w[0].0 || w[1].1 < w[0].1 {
                        return Err(format!("points[{}]: not non-decreasing", i + 1));
                    }
                }
                let last = points.last().unwrap().1;
                if (last - 1.0).abs() > 1e-9 || points[0].1 < 0.0 {
                    return Err("points: probabilities must lie in [0, 1] and end at 1".into());
                }
                Ok(())
            }
        }
    }

    /// Draw a delay in ns.
    pub fn sample(&self, rng: &mut ecnlab_core::rng::Rng) -> u64 {
        match self {
            DelayDist::Fixed { value } => value.0,
            DelayDist::Uniform { min, max } => rng.uniform(min.0 as f64, max.0 as f64).round() as u64,
            DelayDist::Choice { values } => values[rng.below(values.len() as u64) as usize].0,
            DelayDist::Empirical { points } => {
                let u = rng.f64();
                let i = points.iter().position(|p| p.1 >= u).unwrap_or(points.len() - 1);
                if i == 0 {
                    return points[0].0 .0;
                }
                let (a, b) = (points[i - 1], points[i]);
                let f = if b.1 > a.1 { (u - a.1) / (b.1 - a.1) } else { 1.0 };
                (a.0 .0 as f64 + f * (b.0 .0 as f64 - a.0 .0 as f64)).round() as u64
            }
        }
    }
}
