//! The checks of `[topology]`: each kind's own fields, its link delays, its hosts' line
//! rates (a topology file is read and checked whole: [`crate::topology::file`]).

use crate::config::limits::MAX_CORE_LINKS;
use crate::config::topology::Topology;
use crate::topology::{self as tiers, file};
use ecnlab_core::units::{Duration, Rate};

impl Topology {
    /// Each kind's own fields.
    pub(super) fn check(&self) -> Result<(), String> {
        match self {
            Topology::Star { link_rate, host_link_rate, host_link_delay, hosts, .. } => {
                positive_rate("topology.link_rate", *link_rate)?;
                for (i, r) in host_link_rate.iter().enumerate() {
                    positive_rate(&format!("topology.host_link_rate[{i}]"), *r)?;
                }
                for (name, len) in
                    [("host_link_rate", host_link_rate.len()), ("host_link_delay", host_link_delay.len())]
                {
                    if len > *hosts {
                        return Err(format!("topology.{name}: {len} entries for {hosts} hosts"));
                    }
                }
            }
            Topology::Dumbbell { link_rate, bottleneck_rate, .. } => {
                positive_rate("topology.link_rate", *link_rate)?;
                positive_rate("topology.bottleneck_rate", *bottleneck_rate)?;
            }
            Topology::LeafSpine { leaves, spines, link_rate, core_rate, .. } => {
                if *leaves == 0 {
                    return Err("topology.leaves: must be at least 1".into());
                }
                if *spines == 0 {
                    return Err("topology.spines: must be at least 1".into());
                }
                if leaves.saturating_mul(*spines) > MAX_CORE_LINKS {
                    return Err(format!(
                        "topology.spines: {leaves} leaves x {spines} spines is more than {MAX_CORE_LINKS} leaf-spine links"
                    ));
                }
                positive_rate("topology.link_rate", *link_rate)?;
                if let Some(r) = core_rate {
                    positive_rate("topology.core_rate", *r)?;
                }
            }
            Topology::FatTree { k, .. } => {
                if *k < 2 || k % 2 == 1 {
                    return Err(format!("topology.k: {k} is not an even number of at least 2"));
                }
                let cables = k.saturating_mul(*k).saturating_mul(*k) / 2;
                if cables > MAX_CORE_LINKS {
                    return Err(format!(
                        "topology.k: a fat-tree of k = {k} has {cables} switch links, more than {MAX_CORE_LINKS}"
                    ));
                }
                self.check_tier_rates()?;
            }
            Topology::Clos { pods, leaves_per_pod, spines_per_pod, super_spines_per_plane, hosts_per_leaf, .. } => {
                for (name, n) in [
                    ("pods", pods),
                    ("leaves_per_pod", leaves_per_pod),
                    ("spines_per_pod", spines_per_pod),
                    ("super_spines_per_plane", super_spines_per_plane),
                    ("hosts_per_leaf", hosts_per_leaf),
                ] {
                    if *n == 0 {
                        return Err(format!("topology.{name}: must be at least 1"));
                    }
                }
                let cables = pods
                    .saturating_mul(*spines_per_pod)
                    .saturating_mul(leaves_per_pod.saturating_add(*super_spines_per_plane));
                if cables > MAX_CORE_LINKS {
                    return Err(format!(
                        "topology.spines_per_pod: {pods} pods x {spines_per_pod} spines x ({leaves_per_pod} leaves + \
                         {super_spines_per_plane} super-spines) is more than {MAX_CORE_LINKS} switch links"
                    ));
                }
                self.check_tier_rates()?;
            }
            Topology::File { file } => {
                file::read(file).map_err(|e| format!("topology.file: {e}"))?;
            }
        }
        Ok(())
    }

    /// A three-tier fabric's rates: `link_rate` and each tier's own.
    fn check_tier_rates(&self) -> Result<(), String> {
        let (Topology::FatTree { link_rate, host_rate, pod_rate, core_rate, .. }
        | Topology::Clos { link_rate, host_rate, pod_rate, core_rate, .. }) = self
        else {
            return Ok(());
        };
        positive_rate("topology.link_rate", *link_rate)?;
        for (name, r) in [("host_rate", host_rate), ("pod_rate", pod_rate), ("core_rate", core_rate)] {
            if let Some(r) = r {
                positive_rate(&format!("topology.{name}"), *r)?;
            }
        }
        Ok(())
    }

    /// Every link delay the topology gives, with its field (a topology file checks its own).
    pub(super) fn link_delays(&self) -> Vec<(String, Duration)> {
        match self {
            Topology::Star { link_delay, host_link_delay, .. } => {
                std::iter::once(("topology.link_delay".to_string(), *link_delay))
                    .chain(
                        host_link_delay.iter().enumerate().map(|(i, d)| (format!("topology.host_link_delay[{i}]"), *d)),
                    )
                    .collect()
            }
            Topology::Dumbbell { link_delay, bottleneck_delay, .. } => vec![
                ("topology.link_delay".into(), *link_delay),
                ("topology.bottleneck_delay".into(), *bottleneck_delay),
            ],
            Topology::LeafSpine { host_delay, core_delay, .. } => {
                vec![("topology.host_delay".into(), *host_delay), ("topology.core_delay".into(), *core_delay)]
            }
            Topology::FatTree { link_delay, host_delay, pod_delay, core_delay, .. }
            | Topology::Clos { link_delay, host_delay, pod_delay, core_delay, .. } => {
                std::iter::once(("topology.link_delay".to_string(), *link_delay))
                    .chain(
                        [("host_delay", host_delay), ("pod_delay", pod_delay), ("core_delay", core_delay)]
                            .into_iter()
                            .filter_map(|(name, d)| d.map(|d| (format!("topology.{name}"), d))),
                    )
                    .collect()
            }
            Topology::File { .. } => Vec::new(),
        }
    }

    /// The tiers of this topology's switches (`[tiers.<tier>]`), bottom up.
    pub(super) fn tier_names(&self) -> Vec<String> {
        let fixed: &[&str] = match self {
            Topology::Star { .. } | Topology::Dumbbell { .. } => &tiers::STAR_TIERS,
            Topology::LeafSpine { .. } => &tiers::LEAF_SPINE_TIERS,
            Topology::FatTree { .. } => &tiers::FAT_TREE_TIERS,
            Topology::Clos { .. } => &tiers::CLOS_TIERS,
            Topology::File { file } => return file::read(file).map(|f| f.tiers()).unwrap_or_default(),
        };
        fixed.iter().map(|t| t.to_string()).collect()
    }

    /// The slowest line rate of a host (bit/s).
    pub(super) fn slowest_host_rate(&self) -> u64 {
        match self {
            Topology::Star { link_rate, host_link_rate, hosts, .. } => {
                (0..*hosts).map(|h| host_link_rate.get(h).unwrap_or(link_rate).0).min().unwrap_or(link_rate.0)
            }
            Topology::Dumbbell { link_rate, .. } | Topology::LeafSpine { link_rate, .. } => link_rate.0,
            Topology::FatTree { link_rate, host_rate, .. } | Topology::Clos { link_rate, host_rate, .. } => {
                host_rate.unwrap_or(*link_rate).0
            }
            Topology::File { file } => {
                file::read(file).ok().and_then(|f| f.access_rates().into_iter().min()).unwrap_or(u64::MAX)
            }
        }
    }
}

fn positive_rate(field: &str, r: Rate) -> Result<(), String> {
    if r.0 == 0 {
        return Err(format!("{field}: must be larger than 0"));
    }
    Ok(())
}
