//! The checks that need more than one field (serde checks types and names): hosts exist,
//! thresholds below the buffer, times within bounds, ...; each error is one line that
//! names its field.

use super::rtt_variation::DelayDist;
use super::scenario::{mtu_of, Scenario};
use super::topology::Topology;
use crate::tcp::CcKind;
use crate::workload::TrafficSpec;
use ecnlab_core::units::{ByteSize, Duration, Rate, MAX_TIME_NS};

/// Host ids are 16-bit in packets.
pub const MAX_HOSTS: usize = u16::MAX as usize;
/// Leaf-spine links, a bound that keeps an absurd fabric from exhausting memory.
pub const MAX_CORE_LINKS: usize = 1_000_000;
/// The longest one-way link delay (or extra RTT-variation delay): 10 s.
pub const MAX_DELAY_NS: u64 = 10 * 1_000_000_000;
/// The largest TCP payload of an IPv4 packet: 65535 - 20 (IP) - 20 (TCP).
pub const MAX_MSS: u32 = 65_495;

/// The smallest probe: an IPv4 header and an ICMP echo header (20 + 8 B).
pub const MIN_PROBE_BYTES: u64 = 28;
/// The largest IPv4 packet.
pub const MAX_PACKET_BYTES: u64 = 65_535;

impl Scenario {
    /// Checks that need more than one field (serde checks types and names), in a fixed order:
    /// a scenario with several faults is refused for the first (tests/bad_inputs pins them).
    pub fn validate(&self) -> Result<(), String> {
        check_name(&self.name)?;
        let n = self.check_bounds()?;
        self.check_topology()?;
        self.check_switch()?;
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

    /// Each topology's own fields.
    fn check_topology(&self) -> Result<(), String> {
        match &self.topology {
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
        }
        Ok(())
    }

    /// The switches' buffers, marking against them, the shared pool and PFC.
    fn check_switch(&self) -> Result<(), String> {
        self.check_thresholds()?;
        self.check_room_for_a_packet()?;
        {
            use ecnlab_core::marking::{threshold::Scope, SchemeName};
            let m = &self.marking;
            let on_pool = m.scheme == SchemeName::PerPool
                || (m.scheme == SchemeName::DctcpRed && m.threshold.scope == Scope::Pool);
            if on_pool && self.switch.pool.is_none() {
                // Without a pool a port's "pool occupancy" is its own bytes: per-port marking
                // reported as pool marking.
                return Err(format!(
                    "marking.scheme: {} compares a shared pool's occupancy, and switch.pool is not set",
                    if m.scheme == SchemeName::PerPool { "per_pool" } else { "threshold.scope = \"pool\"" }
                ));
            }
        }
        self.switch
            .pfc
            .check(self.switch.queues, self.switch.buffer, self.switch.pool)
            .map_err(|e| format!("switch.pfc.{e}"))?;
        if self.switch.pfc.enabled {
            // PFC counts a packet from its admission to its departure; a packet a scheme drops
            // at dequeue would leave a lossless queue by a way PFC does not count (and a
            // lossless queue that drops by design is a contradiction).
            use ecnlab_core::marking::{codel::CodelMode, NonEctPolicy, SchemeName};
            if self.marking.scheme == SchemeName::Codel && self.marking.codel.mode == CodelMode::Drop {
                return Err("marking.codel.mode: \"drop\" drops what switch.pfc keeps lossless (use \"mark\")".into());
            }
            if self.marking.non_ect == NonEctPolicy::Drop {
                return Err("marking.non_ect: \"drop\" drops what switch.pfc keeps lossless (use \"pass\")".into());
            }
        }
        if self.transport.cc == CcKind::Dcqcn && self.host.nic_marking {
            // An RDMA NIC hands its arbiter a QP's next packet when the previous one has left
            // (dcqcn/sender.rs): a packet dropped at dequeue would never leave, and its QP
            // would wait for good.
            use ecnlab_core::marking::{codel::CodelMode, SchemeName};
            if self.marking.scheme == SchemeName::Codel && self.marking.codel.mode == CodelMode::Drop {
                return Err(
                    "marking.codel.mode: \"drop\" with transport.cc = \"dcqcn\" and host.nic_marking drops in \
                            the RDMA NIC, which never drops its QPs' packets (use \"mark\")"
                        .into(),
                );
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
            let slowest = match &self.topology {
                Topology::Star { link_rate, host_link_rate, hosts, .. } => {
                    (0..*hosts).map(|h| host_link_rate.get(h).unwrap_or(link_rate).0).min().unwrap_or(link_rate.0)
                }
                Topology::Dumbbell { link_rate, .. } | Topology::LeafSpine { link_rate, .. } => link_rate.0,
            };
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
        let mut v: Vec<(String, Duration)> = match &self.topology {
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
        };
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

    /// A queue-length threshold of the chosen scheme at or above the port buffer can never
    /// act (the queue is dropped before it is reached): almost surely a unit slip.
    fn check_thresholds(&self) -> Result<(), String> {
        use ecnlab_core::marking::SchemeName::*;
        let m = &self.marking;
        let mut th: Vec<(String, ByteSize)> = Vec::new();
        match m.scheme {
            PerQueue | PerPort | PerPool | DequeueRed | DctcpRed => {
                th.push(("threshold.k".into(), m.threshold.k));
                for (i, k) in m.threshold.k_per_queue.iter().enumerate() {
                    th.push((format!("threshold.k_per_queue[{i}]"), *k));
                }
            }
            Red => {
                th.push(("red.min_th".into(), m.red.min_th));
                th.push(("red.max_th".into(), m.red.max_th));
            }
            Ideal => th.push(("ideal.k".into(), m.ideal.k)),
            MqEcn => th.push(("mq_ecn.k".into(), m.mq_ecn.k)),
            EcnSharp => {
                th.extend(m.ecn_sharp.ins_target_bytes.map(|b| ("ecn_sharp.ins_target_bytes".into(), b)));
                th.extend(m.ecn_sharp.pst_target_bytes.map(|b| ("ecn_sharp.pst_target_bytes".into(), b)));
            }
            Dualq => {
                for (inst, p) in [("scalable", &m.dualq.scalable), ("classic", &m.dualq.classic)] {
                    th.push((format!("dualq.{inst}.min_th"), p.min_th));
                    th.push((format!("dualq.{inst}.max_th"), p.max_th));
                }
            }
            None | Codel | Tcn => {}
        }
        let buffer = self.switch.buffer;
        match th.into_iter().find(|(_, k)| k.0 > buffer.0 || (k.0 == buffer.0 && buffer.0 > 0)) {
            Some((name, k)) => {
                Err(format!("marking.{name}: {k} is not below the port buffer switch.buffer = {buffer}"))
            }
            Option::None => Ok(()),
        }
    }
    /// Every buffer holds at least one full-size packet: a smaller one drops every data
    /// segment (admission is whole packets, tail drop), and the run would deliver nothing
    /// yet look complete.
    fn check_room_for_a_packet(&self) -> Result<(), String> {
        let mtu = mtu_of(Some(self.transport.mss));
        let sw = &self.switch;
        let limits = sw.queue_limits.iter().enumerate().map(|(i, b)| (format!("switch.queue_limits[{i}]"), *b));
        let buffers = [("switch.buffer".to_string(), Some(sw.buffer)), ("switch.pool".to_string(), sw.pool)]
            .into_iter()
            .filter_map(|(f, b)| b.map(|b| (f, b)))
            .chain(limits)
            .chain([("host.nic_buffer".to_string(), self.host.nic_buffer)]);
        for (field, b) in buffers {
            if b.0 < mtu {
                return Err(format!(
                    "{field}: {b} cannot hold one full-size packet ({mtu} B: transport.mss + 40 B of headers)"
                ));
            }
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

fn positive_rate(field: &str, r: Rate) -> Result<(), String> {
    if r.0 == 0 {
        return Err(format!("{field}: must be larger than 0"));
    }
    Ok(())
}
