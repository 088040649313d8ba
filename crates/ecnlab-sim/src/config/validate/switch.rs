//! The checks of the switches' settings: `[switch]` with `[marking]`, then each tier's
//! (`[tiers.<tier>]`, whose errors name the tier's keys: `tiers.spine.switch.buffer`).

use crate::config::scenario::{mtu_of, Scenario};
use crate::tcp::CcKind;
use ecnlab_core::marking::MarkingConfig;
use ecnlab_core::port::PortConfig;
use ecnlab_core::units::ByteSize;

/// One set of switch settings and the prefix its fields are named with ("" for `[switch]`
/// and `[marking]`, "tiers.spine." for a tier's).
struct Switches<'a> {
    prefix: String,
    sw: &'a PortConfig,
    m: &'a MarkingConfig,
}

impl Scenario {
    /// `[switch]` and `[marking]`: buffers, marking against them, the shared pool and PFC.
    pub(super) fn check_switch(&self) -> Result<(), String> {
        let base = Switches { prefix: String::new(), sw: &self.switch, m: &self.marking };
        base.check_thresholds()?;
        self.check_room_for_a_packet(&base)?;
        base.check_pool_marking()?;
        base.check_pfc()?;
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

    /// `[tiers.<tier>]`: tiers the topology has, each checked as `[switch]` is; PFC the
    /// fabric's.
    pub(super) fn check_tiers(&self) -> Result<(), String> {
        if self.tiers.is_empty() {
            return Ok(());
        }
        let names = self.topology.tier_names();
        for (name, t) in &self.tiers {
            if !names.contains(name) {
                return Err(format!(
                    "tiers.{name}: this topology has no tier {} (its tiers: {})",
                    ecnlab_core::units::echo(name),
                    names.join(", ")
                ));
            }
            let p = format!("tiers.{name}.");
            // PFC's frames and counters are set up once for the fabric (`wire::PfcWire`).
            if serde_json::to_value(&t.switch.pfc).ok() != serde_json::to_value(&self.switch.pfc).ok() {
                return Err(format!("{p}switch.pfc: PFC is fabric-wide: set it in [switch.pfc]"));
            }
            if self.switch.pfc.enabled && t.switch.queues != self.switch.queues {
                return Err(format!(
                    "{p}switch.queues: {}, but PFC counts switch.queues = {} queues at every switch",
                    t.switch.queues, self.switch.queues
                ));
            }
            let tier = Switches { prefix: p.clone(), sw: &t.switch, m: &t.marking };
            tier.check_thresholds()?;
            self.check_room_for_a_packet(&tier)?;
            tier.check_pool_marking()?;
            tier.check_pfc()?;
            let dscps = t.switch.dscp_to_queue.len();
            if dscps > 64 {
                return Err(format!("{p}switch.dscp_to_queue: {dscps} entries, but DSCP has 64 values (0..63)"));
            }
        }
        Ok(())
    }

    /// Every buffer holds at least one full-size packet: a smaller one drops every data
    /// segment (admission is whole packets, tail drop), and the run would deliver nothing
    /// yet look complete.
    fn check_room_for_a_packet(&self, s: &Switches) -> Result<(), String> {
        let mtu = mtu_of(Some(self.transport.mss));
        let (p, sw) = (&s.prefix, s.sw);
        let limits = sw.queue_limits.iter().enumerate().map(|(i, b)| (format!("{p}switch.queue_limits[{i}]"), *b));
        // The hosts' NICs are `[host]`'s: checked with `[switch]`.
        let nic = p.is_empty().then(|| ("host.nic_buffer".to_string(), self.host.nic_buffer(self.transport.profile)));
        let buffers = [(format!("{p}switch.buffer"), Some(sw.buffer)), (format!("{p}switch.pool"), sw.pool)]
            .into_iter()
            .filter_map(|(f, b)| b.map(|b| (f, b)))
            .chain(limits)
            .chain(nic);
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

impl Switches<'_> {
    /// A queue-length threshold of the chosen scheme at or above the port buffer can never
    /// act (the queue is dropped before it is reached): almost surely a unit slip.
    fn check_thresholds(&self) -> Result<(), String> {
        use ecnlab_core::marking::SchemeName::*;
        let m = self.m;
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
        let (p, buffer) = (&self.prefix, self.sw.buffer);
        match th.into_iter().find(|(_, k)| k.0 > buffer.0 || (k.0 == buffer.0 && buffer.0 > 0)) {
            Some((name, k)) => {
                Err(format!("{p}marking.{name}: {k} is not below the port buffer {p}switch.buffer = {buffer}"))
            }
            Option::None => Ok(()),
        }
    }

    /// A scheme that compares a shared pool's occupancy needs a pool.
    fn check_pool_marking(&self) -> Result<(), String> {
        use ecnlab_core::marking::{threshold::Scope, SchemeName};
        let (p, m) = (&self.prefix, self.m);
        let on_pool =
            m.scheme == SchemeName::PerPool || (m.scheme == SchemeName::DctcpRed && m.threshold.scope == Scope::Pool);
        if on_pool && self.sw.pool.is_none() {
            // Without a pool a port's "pool occupancy" is its own bytes: per-port marking
            // reported as pool marking.
            return Err(format!(
                "{p}marking.scheme: {} compares a shared pool's occupancy, and {p}switch.pool is not set",
                if m.scheme == SchemeName::PerPool { "per_pool" } else { "threshold.scope = \"pool\"" }
            ));
        }
        Ok(())
    }

    /// PFC's thresholds against the buffer, and no scheme that drops what PFC keeps.
    fn check_pfc(&self) -> Result<(), String> {
        let (p, sw, m) = (&self.prefix, self.sw, self.m);
        sw.pfc.check(sw.queues, sw.buffer, sw.pool).map_err(|e| format!("{p}switch.pfc.{e}"))?;
        if sw.pfc.enabled {
            // PFC counts a packet from its admission to its departure; a packet a scheme drops
            // at dequeue would leave a lossless queue by a way PFC does not count (and a
            // lossless queue that drops by design is a contradiction).
            use ecnlab_core::marking::{codel::CodelMode, NonEctPolicy, SchemeName};
            if m.scheme == SchemeName::Codel && m.codel.mode == CodelMode::Drop {
                return Err(format!(
                    "{p}marking.codel.mode: \"drop\" drops what switch.pfc keeps lossless (use \"mark\")"
                ));
            }
            if m.non_ect == NonEctPolicy::Drop {
                return Err(format!(
                    "{p}marking.non_ect: \"drop\" drops what switch.pfc keeps lossless (use \"pass\")"
                ));
            }
        }
        Ok(())
    }
}
