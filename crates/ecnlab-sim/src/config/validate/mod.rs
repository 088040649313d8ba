//! The checks that need more than one field (serde checks types and names): hosts exist,
//! thresholds below the buffer, times within bounds, ...; each error is one line that
//! names its field.

mod switch;
mod topology;

use super::limits::*;
use super::rtt_variation::DelayDist;
use super::scenario::Scenario;
use crate::tcp::CcKind;
use crate::workload::TrafficSpec;
use ecnlab_core::units::{Duration, Rate, MAX_TIME_NS};

impl Scenario {
    /// Checks that need more than one field (serde checks types and names), in a fixed order:
    /// a scenario with several faults is refused for the first (tests/bad_inputs pins them).
    pub fn validate(&self) -> Result<(), String> {
        check_name(&self.name)?;
        let n = self.check_bounds()?;
        self.topology.check()?;
        self.check_switch()?;
        self.check_tiers()?;
        self.check_offloads()?;
        self.check_flows(n)?;
        self.check_probes(n)?;
        self.check_metrics()?;
        self.transport.validate()?;
        self.check_sends_something()?;
        self.check_dcqcn_min_rate()?;
        self.check_flows_cc()?;
        if let Some(rv) = &self.rtt_variation {
            rv.delay.validate().map_err(|e| format!("rtt_variation.delay.{e}"))?;
        }
        self.check_host()?;
        let dscps = self.switch.dscp_to_queue.len();
        if dscps > 64 {
            return Err(format!("switch.dscp_to_queue: {dscps} entries, but DSCP has 64 values (0..63)"));
        }
        for (i, t) in self.traffic.iter().enumerate() {
            let start = match t {
                TrafficSpec::Poisson(p) => p.start,
                TrafficSpec::Incast(p) => p.start,
                TrafficSpec::IncastGroups(p) => p.start,
                TrafficSpec::Trace(_) => continue,
            };
            if start.0 > MAX_TIME_NS {
                return Err(format!("traffic[{i}].start: later than the longest run, {}", Duration(MAX_TIME_NS)));
            }
        }
        Ok(())
    }

    /// Sizes and times within what the simulator represents; the number of hosts.
    fn check_bounds(&self) -> Result<usize, String> {
        if let crate::config::topology::Topology::File { file } = &self.topology {
            crate::topology::file::read(file).map_err(|e| format!("topology.file: {e}"))?;
        }
        let n = self.n_hosts();
        if n < 2 {
            return Err("topology: needs at least 2 hosts".into());
        }
        if n > MAX_HOSTS {
            return Err(format!("topology: {n} hosts, at most {MAX_HOSTS} (host ids are 16-bit)"));
        }
        if self.duration.0 == 0 {
            return Err("duration: must be larger than 0".into());
        }
        // Bounds on times keep every `now + delay` far from u64 overflow (found by fuzzing).
        if self.duration.0 > MAX_TIME_NS {
            return Err(format!(
                "duration: {} is longer than the longest run, {}",
                self.duration,
                Duration(MAX_TIME_NS)
            ));
        }
        for (field, d) in self.link_delays() {
            if d.0 > MAX_DELAY_NS {
                return Err(format!("{field}: {d} is longer than the longest link delay, {}", Duration(MAX_DELAY_NS)));
            }
        }
        if self.transport.mss > MAX_MSS {
            return Err(format!(
                "transport.mss: {} is larger than an IPv4 packet can carry ({MAX_MSS})",
                self.transport.mss
            ));
        }
        Ok(n)
    }

    /// `host.tso`, `gro`, `rx_coalesce`: NIC offloads of the linux hosts only, a TSO size
    /// that holds one segment.
    fn check_offloads(&self) -> Result<(), String> {
        if self.transport.profile == crate::tcp::Profile::Textbook {
            for (key, given) in [
                ("tso", self.host.tso.is_some()),
                ("gro", self.host.gro.is_some()),
                ("rx_coalesce", self.host.rx_coalesce.is_some()),
            ] {
                if given {
                    return Err(format!(
                        "host.{key}: the textbook profile's hosts have no NIC offloads (remove it, or set transport.profile = \"linux\")"
                    ));
                }
            }
        }
        if let Some(crate::tcp::linux::offload::Tso::Size(b)) = self.host.tso {
            let least = self.transport.mss as u64 + 53;
            if b.0 < least {
                return Err(format!(
                    "host.tso: {} B cannot hold one segment of transport.mss = {} B and its headers (write \"off\" for no TSO, or at least {least} B)",
                    b.0, self.transport.mss
                ));
            }
        }
        Ok(())
    }

    /// `[[flows]]` among `n` hosts.
    fn check_flows(&self, n: usize) -> Result<(), String> {
        for (i, f) in self.flows.iter().enumerate() {
            for (name, h) in [("src", f.src), ("dst", f.dst)] {
                if h >= n {
                    return Err(format!("flows[{i}].{name}: host {h} does not exist ({n} hosts)"));
                }
            }
            if f.src == f.dst {
                return Err(format!("flows[{i}]: src and dst are the same host"));
            }
            if f.rate.is_some_and(|r| r.0 == 0) {
                return Err(format!("flows[{i}].rate: must be larger than 0"));
            }
            if f.size.is_some_and(|s| s.0 == 0) {
                return Err(format!("flows[{i}].size: must be larger than 0"));
            }
            if f.class >= 64 {
                return Err(format!("flows[{i}].class: DSCP {} is not in 0..63", f.class));
            }
            for (name, t) in [("start", Some(f.start)), ("stop", f.stop)] {
                if t.is_some_and(|t| t.0 > MAX_TIME_NS) {
                    return Err(format!("flows[{i}].{name}: later than the longest run, {}", Duration(MAX_TIME_NS)));
                }
            }
            stops_after_start(&format!("flows[{i}]"), f.start, f.stop)?;
        }
        Ok(())
    }

    /// `[[probes]]` among `n` hosts.
    fn check_probes(&self, n: usize) -> Result<(), String> {
        for (i, p) in self.probes.iter().enumerate() {
            for (name, h) in [("src", p.src), ("dst", p.dst)] {
                if h >= n {
                    return Err(format!("probes[{i}].{name}: host {h} does not exist ({n} hosts)"));
                }
            }
            if p.src == p.dst {
                return Err(format!("probes[{i}]: src and dst are the same host"));
            }
            if p.interval.0 == 0 {
                return Err(format!("probes[{i}].interval: must be larger than 0"));
            }
            if p.class >= 64 {
                return Err(format!("probes[{i}].class: DSCP {} is not in 0..63", p.class));
            }
            if !(MIN_PROBE_BYTES..=MAX_PACKET_BYTES).contains(&p.size.0) {
                return Err(format!(
                    "probes[{i}].size: {} is not in {MIN_PROBE_BYTES}..{MAX_PACKET_BYTES} B (IPv4 and ICMP echo headers \
                     to the largest IPv4 packet)",
                    p.size
                ));
            }
            stops_after_start(&format!("probes[{i}]"), p.start, p.stop)?;
            for (name, t) in [("interval", Some(p.interval)), ("start", Some(p.start)), ("stop", p.stop)] {
                if t.is_some_and(|t| t.0 > MAX_TIME_NS) {
                    return Err(format!("probes[{i}].{name}: longer than the longest run, {}", Duration(MAX_TIME_NS)));
                }
            }
        }
        Ok(())
    }

    /// `[metrics]` against the run's duration.
    fn check_metrics(&self) -> Result<(), String> {
        if self.metrics.sample_interval.0 == 0 {
            return Err("metrics.sample_interval: must be larger than 0".into());
        }
        if self.metrics.warmup >= self.duration {
            return Err(format!(
                "metrics.warmup: {} is not shorter than duration = {}",
                self.metrics.warmup, self.duration
            ));
        }
        Ok(())
    }

    /// A run that sends nothing would measure nothing.
    fn check_sends_something(&self) -> Result<(), String> {
        if self.flows.iter().all(|f| f.count == 0) && self.traffic.is_empty() && self.probes.is_empty() {
            // The run would end with nothing measured and a result that looks complete.
            return Err("flows: the scenario sends nothing (no [[flows]] with a count above 0, no [[traffic]], \
                        no [[probes]])"
                .into());
        }
        Ok(())
    }

    /// DCQCN's rate floor below every host's line rate.
    fn check_dcqcn_min_rate(&self) -> Result<(), String> {
        if let (CcKind::Dcqcn, Some(min)) = (self.transport.cc, self.transport.dcqcn.min_rate) {
            // DCQCN never sends below min_rate: at or above a NIC's line rate it cannot slow
            // down at all (it was clamped to the line rate, and the fabric dropped the rest).
            let slowest = self.topology.slowest_host_rate();
            if min.0 >= slowest {
                return Err(format!(
                    "transport.dcqcn.min_rate: {min} is not below the slowest host's line rate, {}: DCQCN could \
                     never lower its rate",
                    Rate(slowest)
                ));
            }
        }
        Ok(())
    }

    /// A listed flow's own `cc` under the transport's profile.
    fn check_flows_cc(&self) -> Result<(), String> {
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(cc) = f.cc {
                self.transport.check_cc(cc).map_err(|e| format!("flows[{i}].{e}"))?;
            }
        }
        Ok(())
    }

    /// `[host]`: ACK DSCP and PIAS thresholds.
    fn check_host(&self) -> Result<(), String> {
        if let Some(d) = self.host.ack_dscp {
            if d >= 64 {
                return Err(format!("host.ack_dscp: {d} is not in 0..63"));
            }
        }
        if self.host.pias_thresholds.windows(2).any(|w| w[1] <= w[0]) {
            return Err("host.pias_thresholds: must be increasing".into());
        }
        let pias = self.host.pias_thresholds.len();
        if pias > crate::tcp::sender::MAX_PIAS_LEVELS {
            return Err(format!(
                "host.pias_thresholds: {pias} thresholds, at most {} (PIAS tags DSCP 0..{})",
                crate::tcp::sender::MAX_PIAS_LEVELS,
                crate::tcp::sender::MAX_PIAS_LEVELS
            ));
        }
        Ok(())
    }

    /// Every one-way delay a packet can be given: link delays and RTT-variation delays.
    fn link_delays(&self) -> Vec<(String, Duration)> {
        let mut v = self.topology.link_delays();
        if let Some(rv) = &self.rtt_variation {
            let f = "rtt_variation.delay";
            match &rv.delay {
                DelayDist::Fixed { value } => v.push((format!("{f}.value"), *value)),
                DelayDist::Uniform { min, max } => v.extend([(format!("{f}.min"), *min), (format!("{f}.max"), *max)]),
                DelayDist::Choice { values } => {
                    v.extend(values.iter().enumerate().map(|(i, d)| (format!("{f}.values[{i}]"), *d)))
                }
                DelayDist::Empirical { points } => {
                    v.extend(points.iter().enumerate().map(|(i, p)| (format!("{f}.points[{i}]"), p.0)))
                }
            }
        }
        v
    }

    /// Whether some connection is TCP (a `[[flows]]` entry may run its own `cc`).
    pub fn has_tcp(&self) -> bool {
        !self.transport.cc.is_rate_based() || self.flows.iter().any(|f| f.cc.is_some_and(|c| !c.is_rate_based()))
    }

    /// TCP Small Queues take each packet's TX completion from its host's NIC, known at
    /// admission for a one-queue FIFO that nothing pauses and that drops nothing at dequeue
    /// (`Wire::enqueue_from_host`). Checked once the ports are built, after their own checks.
    pub fn check_small_queues(&self) -> Result<(), String> {
        if !(self.transport.profile == crate::tcp::Profile::Linux && self.transport.small_queues && self.has_tcp()) {
            return Ok(());
        }
        use ecnlab_core::marking::{codel::CodelMode, NonEctPolicy, SchemeName};
        if self.switch.pfc.enabled {
            return Err("transport.small_queues: TCP Small Queues need the TX completions of a host NIC that \
                        PFC does not pause (set transport.small_queues = false with switch.pfc)"
                .into());
        }
        let drops_at_dequeue = (self.marking.scheme == SchemeName::Codel && self.marking.codel.mode == CodelMode::Drop)
            || self.marking.non_ect == NonEctPolicy::Drop;
        if self.host.nic_marking && drops_at_dequeue {
            return Err("transport.small_queues: with host.nic_marking the scheme drops in the host NIC at \
                        dequeue, which TCP Small Queues' TX completions do not allow (set \
                        transport.small_queues = false, or host.nic_marking = false)"
                .into());
        }
        Ok(())
    }
}

/// `stop`, when given, must come after `start`: a flow or probe that stops before it starts
/// would silently do nothing.
fn stops_after_start(what: &str, start: Duration, stop: Option<Duration>) -> Result<(), String> {
    match stop {
        Some(stop) if stop <= start => Err(format!("{what}.stop: {stop} is not after start = {start}")),
        _ => Ok(()),
    }
}

/// A scenario's name names its default result directory (`out/<name>`), so it must be one
/// plain path component: never `..`, an absolute path or a hidden file.
fn check_name(name: &str) -> Result<(), String> {
    const MAX: usize = 100;
    let plain = |c: char| c.is_alphanumeric() || "-_.+=,@".contains(c);
    if name.is_empty() {
        return Err("name: empty".into());
    }
    if name.chars().count() > MAX {
        return Err(format!("name: longer than {MAX} characters"));
    }
    if name.starts_with('.') || !name.chars().all(plain) {
        return Err(format!(
            "name: {} is not a plain name (letters, digits and -_.+=,@, not starting with a dot): it names the result directory",
            ecnlab_core::units::echo(name)
        ));
    }
    Ok(())
}
