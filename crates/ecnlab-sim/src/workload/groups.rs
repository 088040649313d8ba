//! `incast_groups`: many partition-aggregate groups at once (Alizadeh et al., DCTCP,
//! SIGCOMM 2010, §2.2: an aggregator's query fans out to its workers, whose answers return
//! at once). `groups` aggregators are drawn from `hosts`, each with `fanout` workers among
//! the other hosts (a worker may serve several aggregators); every `interval` a group's
//! workers answer its query together, each group's first query at `start` plus an offset
//! drawn uniformly in [0, interval), so that groups do not all fire in the same nanosecond.

use ecnlab_core::rng::Rng;
use ecnlab_core::units::{ByteSize, Duration};
use serde::{Deserialize, Serialize};

/// Incast groups (see the module docs).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncastGroupsSpec {
    /// Number of groups (aggregators, distinct hosts).
    pub groups: usize,
    /// Workers of each group.
    pub fanout: usize,
    /// The hosts aggregators and workers are drawn from (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<usize>>,
    /// Queries of each group.
    pub queries: u64,
    /// Time between two queries of one group.
    pub interval: Duration,
    /// Start of the first round of queries.
    #[serde(default)]
    pub start: Duration,
    /// Answer sizes are uniform integers in [size_min, size_max] bytes.
    pub size_min: ByteSize,
    /// Largest answer size (see `size_min`).
    pub size_max: ByteSize,
    /// DSCP of every answer.
    #[serde(default)]
    pub class: u8,
}

/// The checked numbers of a spec, its hosts as given.
pub(super) struct Groups<'a> {
    pub spec: &'a IncastGroupsSpec,
    pub hosts: Vec<u16>,
}

impl Groups<'_> {
    /// Check the spec's numbers against its hosts; `max_flows` bounds the total.
    pub(super) fn check(&self, path: &str, max_flows: u64) -> Result<(), String> {
        let p = self.spec;
        let n = self.hosts.len();
        if p.groups == 0 || p.groups > n {
            return Err(format!("{path}.groups: {} is not between 1 and the {n} hosts", p.groups));
        }
        if p.fanout == 0 || p.fanout >= n {
            return Err(format!("{path}.fanout: {} is not between 1 and {} (the other hosts)", p.fanout, n - 1));
        }
        if p.queries == 0 {
            return Err(format!("{path}.queries: must be at least 1"));
        }
        if p.interval.0 == 0 {
            return Err(format!("{path}.interval: must be positive"));
        }
        let (lo, hi) = (p.size_min.0, p.size_max.0);
        if lo == 0 {
            return Err(format!("{path}.size_min: must be at least 1 byte"));
        }
        if hi < lo {
            return Err(format!("{path}.size_max: {} is below size_min {}", p.size_max, p.size_min));
        }
        if p.class > 63 {
            return Err(format!("{path}.class: {} is not a DSCP value (0..=63)", p.class));
        }
        let total = (p.groups as u64).saturating_mul(p.fanout as u64).saturating_mul(p.queries);
        if total > max_flows {
            return Err(format!("{path}: groups x fanout x queries = {total} flows, more than {max_flows}"));
        }
        if p.queries.checked_mul(p.interval.0).and_then(|x| x.checked_add(p.start.0)).is_none() {
            return Err(format!("{path}.interval: the last query starts after the end of time"));
        }
        Ok(())
    }

    /// Every answer of every query, as `emit(start_ns, src, dst, size)`; membership and
    /// offsets from `endpoints`, sizes from `sizes`.
    pub(super) fn generate(&self, endpoints: &mut Rng, sizes: &mut Rng, mut emit: impl FnMut(u64, u16, u16, u64)) {
        let p = self.spec;
        let mut pool = self.hosts.clone();
        // Partial Fisher-Yates: the first `groups` hosts become the aggregators.
        for j in 0..p.groups {
            let r = j + endpoints.below((pool.len() - j) as u64) as usize;
            pool.swap(j, r);
        }
        let aggregators: Vec<u16> = pool[..p.groups].to_vec();
        for &agg in &aggregators {
            let mut others: Vec<u16> = self.hosts.iter().copied().filter(|&h| h != agg).collect();
            for j in 0..p.fanout {
                let r = j + endpoints.below((others.len() - j) as u64) as usize;
                others.swap(j, r);
            }
            let offset = endpoints.below(p.interval.0);
            for q in 0..p.queries {
                let t = p.start.0 + offset + q * p.interval.0;
                for &w in &others[..p.fanout] {
                    let size = p.size_min.0 + sizes.below(p.size_max.0 - p.size_min.0 + 1);
                    emit(t, w, agg, size);
                }
            }
        }
    }
}
