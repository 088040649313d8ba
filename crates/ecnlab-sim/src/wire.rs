//! The wire: directed links, the egress [`Port`] that feeds each, and each link's
//! transmission state. Read first: the order of simultaneous events (`crate::event`, module
//! docs) and benches/DESIGN.md §3 and §4.
//!
//! A packet on the wire rides in its own `Arrive` event, which carries it to the far node at
//! the end of its transmission plus the link's delay: nothing is read of the link it crossed
//! on arrival, and the wheel's FIFO order per nanosecond keeps a link's packets in order
//! (DESIGN.md §3). Queued packets have no events, and a busy link usually none of its own
//! either (DESIGN.md §3): when packets wait behind the one that starts, the link is [`Tx::Owed`]
//! its next dequeue, that packet travels as `ArriveResume`, and the owed dequeue is
//! performed, at its own time and in the place its `TxDone` event would have had in the
//! order of events, by that arrival or by the port's next enqueue, whichever comes first. A
//! `TxDone` event ([`Tx::EventScheduled`]) remains for ports on a switch's shared buffer
//! pool, for packets with an RTT-variation delay, and for a packet enqueued while the link
//! sends one that left an empty queue. (htsim's rule is "one pending event per FIFO or
//! link"; here it is at most one, and usually none.)
//!
//! This module is the only one that knows about owed dequeues. Writers (an enqueue, the
//! end of the run) bring a port up to their place in the order of events first; readers
//! (samples, snapshots) go through [`Wire::port_at`], which performs the owed dequeues for
//! the reader alone and puts the link back as it was, so that what is recorded never
//! changes what is simulated.
//!
//! PFC (`[switch.pfc]`, IEEE 802.1Qbb; the rules in `ecnlab_core::pfc`) lives here too: a
//! switch counts each packet against the link it came in on (`Packet::in_link`) from its
//! admission at an egress port to its departure, and a PAUSE or RESUME it sends reaches that
//! link's sender as an `Ev::Pfc` event, after the frame in transmission on the way back, the
//! frame's own 64 bytes and the link's delay ([`Wire::send_pfc`]); the sender's port pauses
//! the priority's queue ([`Wire::pfc_frame`]). A switch port that counts for PFC dequeues on
//! time (a `TxDone` event), as a port on a shared pool does: its dequeues send RESUMEs.

use crate::event::{Ev, EventQueue};
use crate::packet::{Kind, Packet};
use crate::paths;
use crate::topology::LinkSpec;
use ecnlab_core::buffer::BufferPool;
use ecnlab_core::fault::{Faults, Segment};
use ecnlab_core::pfc::{self, Pfc, PfcConfig};
use ecnlab_core::port::Port;
use ecnlab_core::units::{tx_time_ns, Nanos};
use std::borrow::Cow;

/// What ends the transmission in progress on a link (the link's state machine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Tx {
    /// No dequeue pending: the link is free from `busy_until` on, and the next enqueue
    /// starts a transmission then (at once, or by scheduling a `TxDone` event).
    Idle,
    /// A `TxDone` event at `busy_until` performs the next dequeue.
    EventScheduled,
    /// The next dequeue is owed at `busy_until`, in the place `Wire::owed_seq` holds; no
    /// event covers it: the `ArriveResume` of the packet on the wire, or the port's next
    /// enqueue, whichever comes first, performs it ([`Wire::catch_up`]).
    Owed,
}

/// A directed link and the egress port that feeds it.
///
/// Layout: at fabric scale a link is out of L1 at nearly every packet, so all an enqueue
/// and a transmission touch of the link itself is packed in one cache line (transmission
/// state, the constants a transmission needs, its packet counter, the port's own buffer
/// pool), and the port (its first line: admission state) follows on the next.
#[repr(C, align(64))]
pub(crate) struct Link {
    // ---- first cache line ----
    /// End of the transmission in progress: the link is free from then on.
    pub busy_until: Nanos,
    /// `spec.rate_bps` and `spec.delay_ns`, copied here for the transmission path.
    pub rate_bps: u64,
    delay_ns: Nanos,
    /// The port's own, unlimited pool when its switch shares none: kept here rather than
    /// in a per-node vector, so that it costs no cache line of its own.
    own_pool: BufferPool,
    /// Packets put on the wire (packet-hops). Bytes are counted by the port's queues
    /// ([`QueueStats`](ecnlab_core::port::QueueStats), payload apart): see
    /// [`ecnlab_core::measure::tx_bytes`].
    pub tx_pkts: u64,
    /// `spec.to`: the node at the far end.
    pub to: u32,
    /// The switch's shared buffer pool (its index in `Wire::pools`), or [`OWN_POOL`].
    shared_pool: u32,
    pub tx: Tx,
    pub is_switch_port: bool,
    /// Dequeues must happen at their own time, by a `TxDone` event, never owed: other ports
    /// read them (a shared pool's admission), they send PFC frames, or they wake a sender.
    on_time: bool,
    /// `pfc_counted || nic_arbiter`: the one flag the per-packet path tests.
    watched: bool,
    /// A switch port under PFC: it counts its packets against their ingress links.
    pfc_counted: bool,
    /// A host NIC whose arbiter serves DCQCN's QPs (`dcqcn/sender.rs`): each data packet's
    /// departure is an `Ev::NicSent` for its connection. Its buffer is unlimited (an RDMA
    /// NIC holds its QPs' data until it sends it; the arbiter bounds it to a packet per QP).
    nic_arbiter: bool,
    /// A host NIC whose TX completions are told to the senders (TCP Small Queues): each
    /// admission advances `Wire::tx_done_at` (exact for a one-queue FIFO that is never
    /// paused and drops nothing at dequeue, which `Simulator::new` requires of it).
    predicts_tx_done: bool,
    // ---- from the second line on ----
    pub port: Port<Packet>,
    pub spec: LinkSpec,
}

/// `Link::shared_pool` of a port without a shared buffer pool.
pub(crate) const OWN_POOL: u32 = u32::MAX;

impl Link {
    /// `pfc`: the port counts its packets for its switch's PFC; `nic_arbiter`: a host NIC
    /// that reports its data packets' departures to their senders.
    pub(crate) fn new(
        spec: &LinkSpec,
        port: Port<Packet>,
        is_switch_port: bool,
        shared_pool: Option<u32>,
        pfc: bool,
        nic_arbiter: bool,
    ) -> Link {
        Link {
            busy_until: 0,
            rate_bps: spec.rate_bps,
            delay_ns: spec.delay_ns,
            own_pool: BufferPool::unlimited(),
            tx_pkts: 0,
            to: spec.to as u32,
            shared_pool: shared_pool.unwrap_or(OWN_POOL),
            tx: Tx::Idle,
            is_switch_port,
            on_time: shared_pool.is_some() || pfc || nic_arbiter,
            watched: pfc || nic_arbiter,
            pfc_counted: pfc,
            nic_arbiter,
            predicts_tx_done: false,
            port,
            spec: spec.clone(),
        }
    }

    /// The port and the buffer pool it draws on: its switch's shared pool, or its own.
    #[inline]
    fn port_and_pool<'a>(&'a mut self, pools: &'a mut [BufferPool]) -> (&'a mut Port<Packet>, &'a mut BufferPool) {
        let pool =
            if self.shared_pool == OWN_POOL { &mut self.own_pool } else { &mut pools[self.shared_pool as usize] };
        (&mut self.port, pool)
    }

    #[cfg(debug_assertions)]
    fn pool<'a>(&'a self, pools: &'a [BufferPool]) -> &'a BufferPool {
        if self.shared_pool == OWN_POOL {
            &self.own_pool
        } else {
            &pools[self.shared_pool as usize]
        }
    }
}

/// Every link of the network, its port and the buffer pools the ports draw on.
pub(crate) struct Wire {
    pub links: Vec<Link>,
    /// Shared buffer pools, indexed by node (`Link::shared_pool`).
    pools: Vec<BufferPool>,
    /// Per link: the insertion number taken for the dequeue it is owed ([`Tx::Owed`]), in
    /// place of the `TxDone` event's, so that an owed dequeue and an event of the same
    /// nanosecond keep the order the event queue gives them (read only on such ties, hence
    /// not in the link's cache line).
    owed_seq: Vec<u64>,
    /// Per connection: the extra one-way delay of its data packets on its sender's access
    /// link (RTT variation); empty without RTT variation.
    conn_delay_ns: Vec<Nanos>,
    /// Per link that predicts them (`Link::predicts_tx_done`): when its last admitted packet
    /// ends its transmission (packets leave a FIFO back to back: each starts when the one
    /// before it ends, or at its admission if the link is free by then).
    tx_done_at: Vec<Nanos>,
    /// Packets dropped by ports, at admission or at dequeue (CoDel).
    pub dropped: u64,
    /// `"s0->h3"` per link (error messages, time series).
    pub names: Vec<String>,
    /// The first broken invariant seen by the debug-build checks (never set in release).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub violation: Option<String>,
    /// Where [`Wire::port_at`] sends the events of the dequeues it performs for a reader
    /// (drained at once; kept to reuse its memory).
    scratch: Option<EventQueue<Ev>>,
    /// Packet captures (`--pcap`): an observer of the transmissions that happen, read by
    /// nothing in the simulation; the dequeues [`Wire::port_at`] performs for a reader are
    /// not recorded (they are undone).
    pub capture: Option<Box<crate::pcap::Capture>>,
    /// PFC, when `[switch.pfc]` is enabled.
    pub pfc: Option<Box<PfcWire>>,
    /// `[faults]`: segments the switches lose on purpose, before any port (so not in
    /// `dropped`, which the ports' counts must equal).
    pub faults: Option<Box<Faults>>,
}

/// A packet as the fault rule sees it: SYNs and data of TCP connections (the `linux`
/// hosts' SYN is a `Data` packet without payload; its SYN-ACK an `Ack`).
#[inline]
fn fault_segment(pkt: &Packet) -> Segment {
    match pkt.kind {
        Kind::Data if pkt.flags & crate::packet::flags::SYN != 0 => Segment::Syn,
        Kind::Data if pkt.payload > 0 => Segment::Data { offset: pkt.seq, len: pkt.payload },
        _ => Segment::Other,
    }
}

/// PFC across the network: the switches' ingress counts (indexed by the link a packet came
/// in on) and, per link, the priorities its sender has been paused for.
pub(crate) struct PfcWire {
    pub ctl: Pfc,
    /// Per link: the priorities (bits) of the PAUSEs in force at its sending port.
    paused_classes: Vec<u64>,
}

impl PfcWire {
    pub(crate) fn new(cfg: &PfcConfig, n_links: usize, n_classes: usize) -> PfcWire {
        PfcWire { ctl: Pfc::new(cfg, n_links, n_classes), paused_classes: vec![0; n_links] }
    }
}

impl Wire {
    /// Whether `[faults]` loses `pkt`, which has reached a switch (counted by the rule,
    /// [`Wire::fault_drops`], apart from the ports' `dropped`).
    #[inline]
    pub(crate) fn lost_on_purpose(&mut self, pkt: &Packet) -> bool {
        self.faults.as_deref_mut().is_some_and(|f| f.drops(pkt.flow as u64, fault_segment(pkt)).is_some())
    }

    /// Capture the switch ports `names` (`"all"`: every switch port) from now on
    /// ([`crate::pcap`]); an unknown name is an error naming the ports there are. A host's
    /// NIC (`"h1->s0"`) is taken by name too: what it sends is what its switch receives,
    /// the trains a sender puts on the wire (`ecnlab validate`).
    pub fn capture_ports(&mut self, names: &[String], limit_bytes: u64, udp: bool) -> Result<(), String> {
        let switch: Vec<(usize, String)> = (0..self.links.len())
            .filter(|&li| self.links[li].is_switch_port)
            .map(|li| (li, self.names[li].clone()))
            .collect();
        let mut pick: Vec<(usize, String)> = Vec::new();
        for n in names {
            let nic = (0..self.links.len()).find(|&li| !self.links[li].is_switch_port && self.names[li] == *n);
            if n == "all" {
                pick.extend(switch.iter().cloned());
            } else if let Some(p) = switch.iter().find(|(_, s)| s == n) {
                pick.push(p.clone());
            } else if let Some(li) = nic {
                pick.push((li, n.clone()));
            } else {
                let known: Vec<&str> = switch.iter().map(|(_, s)| s.as_str()).take(12).collect();
                let more = if switch.len() > known.len() { ", ..." } else { "" };
                return Err(format!("--pcap: no switch port `{n}` (ports: {}{more}; or all)", known.join(", ")));
            }
        }
        pick.sort();
        pick.dedup();
        self.capture = Some(Box::new(crate::pcap::Capture::new(self.links.len(), &pick, limit_bytes, udp)));
        Ok(())
    }

    /// Segments `[faults]` dropped.
    pub fn fault_drops(&self) -> u64 {
        self.faults.as_ref().map_or(0, |f| f.syns_dropped + f.bytes_dropped)
    }

    pub(crate) fn new(links: Vec<Link>, pools: Vec<BufferPool>, names: Vec<String>) -> Wire {
        let n = links.len();
        Wire {
            links,
            pools,
            owed_seq: vec![0; n],
            conn_delay_ns: Vec::new(),
            tx_done_at: vec![0; n],
            dropped: 0,
            names,
            violation: None,
            scratch: None,
            capture: None,
            pfc: None,
            faults: None,
        }
    }

    /// Host NICs tell the TX completions of what they take ([`Wire::enqueue_from_host`]).
    pub(crate) fn predict_host_tx_done(&mut self) {
        for l in self.links.iter_mut().filter(|l| !l.is_switch_port) {
            l.predicts_tx_done = true;
        }
    }

    /// As [`Wire::enqueue`], for a packet a host hands its NIC (link `li`): when it will
    /// have left the NIC (the end of its transmission), or None if the NIC refused it.
    pub(crate) fn enqueue_from_host(
        &mut self,
        events: &mut EventQueue<Ev>,
        now: Nanos,
        li: usize,
        pkt: Packet,
    ) -> Option<Nanos> {
        debug_assert!(self.links[li].predicts_tx_done);
        let before = self.tx_done_at[li];
        self.enqueue(events, now, li, pkt);
        // An admission moves the time on by at least a nanosecond (`tx_time_ns` >= 1).
        let after = self.tx_done_at[li];
        (after != before).then_some(after)
    }

    /// A predicting link admitted a packet of `size` bytes at `now`.
    #[cold]
    #[inline(never)]
    fn predict_tx_done(&mut self, now: Nanos, li: usize, size: u32) {
        let start = self.tx_done_at[li].max(now);
        self.tx_done_at[li] = start + tx_time_ns(size as u64, self.links[li].rate_bps);
    }

    /// Record connection `c`'s RTT-variation delay (connections are numbered in order).
    pub(crate) fn set_conn_delay(&mut self, c: usize, delay_ns: Nanos) {
        if delay_ns > 0 || !self.conn_delay_ns.is_empty() {
            self.conn_delay_ns.resize(c + 1, 0);
            self.conn_delay_ns[c] = delay_ns;
        }
    }

    /// Hand a packet to the egress port of link `li` at `now`, from the event being handled
    /// (its place: `events.current_seq()`); start transmitting if the link is idle.
    #[inline]
    pub(crate) fn enqueue(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, pkt: Packet) {
        // Dequeues owed before this event come first: the packet must not be seen by a
        // dequeue that happened before it arrived.
        self.catch_up(events, now, li, now, events.current_seq());
        let link = &self.links[li];
        if link.tx == Tx::Idle && now >= link.busy_until && link.port.is_empty() && !link.watched {
            // An empty port on an idle link (most hops of a fabric): the packet would be
            // enqueued and dequeued at once by `kick`, so it takes one pass instead, with the
            // same decisions and books (`Port::pass_with`; benches/DESIGN.md §3). Watched ports
            // (PFC, the NIC arbiter) keep the two steps: their books see each one.
            let size = pkt.size;
            let (port, pool) = self.links[li].port_and_pool(&mut self.pools);
            let dropped = &mut self.dropped;
            let r = paths::pass_with(port, now, pkt, pool, |_, _, _| *dropped += 1);
            #[cfg(debug_assertions)]
            self.debug_check_port(now, li);
            if r.is_ok() && self.links[li].predicts_tx_done {
                self.predict_tx_done(now, li, size);
            }
            match r {
                Err(_) => self.dropped += 1,
                Ok(Some((pkt, _))) => self.launch(events, now, li, now, pkt),
                Ok(None) => {} // dropped at dequeue (or queued behind a pause): idle, as after `kick`
            }
            return;
        }
        let (dscp, size) = (pkt.dscp, pkt.size);
        let (port, pool) = self.links[li].port_and_pool(&mut self.pools);
        let admitted = paths::enqueue(port, now, pkt, pool).is_ok();
        #[cfg(debug_assertions)]
        self.debug_check_port(now, li);
        if !admitted {
            self.dropped += 1;
            return;
        }
        if self.links[li].predicts_tx_done {
            self.predict_tx_done(now, li, size);
        }
        if self.links[li].watched {
            self.watched_admitted(events, now, li, dscp);
        }
        self.kick(events, now, li);
    }

    /// Link `li`'s port has a packet to send: start a transmission if the link is idle (at
    /// once, or by a `TxDone` event at the end of the one in progress).
    #[inline]
    fn kick(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize) {
        let link = &mut self.links[li];
        if link.tx != Tx::Idle {
            return; // the transmission in progress ends with a dequeue that takes the next
        }
        if now >= link.busy_until {
            self.start_tx(events, now, li, now);
        } else {
            link.tx = Tx::EventScheduled;
            events.push(link.busy_until, Ev::TxDone(li as u32));
        }
    }

    /// A watched port (PFC, the NIC arbiter) has just admitted a packet of DSCP `dscp`.
    #[cold]
    #[inline(never)]
    fn watched_admitted(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, dscp: u8) {
        if self.links[li].pfc_counted {
            let port = &self.links[li].port;
            let q = port.classify(dscp);
            let p = *port.newest(q).expect("just admitted");
            self.pfc_count(events, now, li, p.in_link, q, p.size, true);
        }
    }

    /// A watched port sends `pkt` now.
    #[cold]
    #[inline(never)]
    fn watched_sent(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, pkt: &Packet) {
        debug_assert!(self.links[li].on_time, "a watched port dequeues on time, never owed");
        if self.links[li].pfc_counted {
            let q = self.links[li].port.classify(pkt.dscp);
            self.pfc_count(events, now, li, pkt.in_link, q, pkt.size, false);
        }
        if self.links[li].nic_arbiter && pkt.kind == Kind::Data {
            events.push(now, Ev::NicSent(pkt.flow));
        }
    }

    /// A packet of `size` bytes and priority `class` that came in on link `ingress` joined
    /// (`admitted`) or left the switch at the end of link `li`'s egress port: count it for
    /// PFC, and send the PAUSE or RESUME that follows, if any.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn pfc_count(
        &mut self,
        events: &mut EventQueue<Ev>,
        now: Nanos,
        li: usize,
        ingress: u32,
        class: usize,
        size: u32,
        admitted: bool,
    ) {
        let l = &self.links[li];
        let unlimited = BufferPool::unlimited();
        let pool = if l.shared_pool == OWN_POOL { &unlimited } else { &self.pools[l.shared_pool as usize] };
        let ctl = &mut self.pfc.as_deref_mut().expect("PFC is on").ctl;
        let frame = if admitted {
            ctl.on_admit(ingress as usize, class, size as u64, pool)
        } else {
            ctl.on_leave(ingress as usize, class, size as u64, pool)
        };
        if let Some(f) = frame {
            self.send_pfc(events, now, ingress as usize, class, f);
        }
    }

    /// The switch at the end of link `ingress` sends a PFC frame for `class` to that link's
    /// sender. It goes back over the same cable (the reverse link, a port of the switch),
    /// after the frame in transmission there (802.1Qbb does not preempt a frame) and its own
    /// 64 bytes, plus the link's delay; it takes nothing from that link's data (64 bytes a
    /// pause, far below a percent of it).
    fn send_pfc(&mut self, events: &mut EventQueue<Ev>, now: Nanos, ingress: usize, class: usize, f: pfc::Frame) {
        let back = &self.links[crate::topology::Net::reverse(ingress)];
        debug_assert_eq!(back.to as usize, self.links[ingress].spec.from, "links come in duplex pairs");
        let start = now.max(back.busy_until);
        let at = start + tx_time_ns(pfc::FRAME_BYTES, back.rate_bps) + back.delay_ns;
        events.push(at, Ev::Pfc(ingress as u32, class as u8, f == pfc::Frame::Pause));
    }

    /// A PFC frame for `class` reaches the sender of link `li`: pause or resume the queue
    /// that carries the class (the queue of the same number: with PFC a host's NIC has the
    /// switches' queues; a one-queue port is paused while any class is), then send if it
    /// may again.
    pub(crate) fn pfc_frame(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, class: u8, pause: bool) {
        // The port's dequeues owed before this frame happen first.
        self.catch_up(events, now, li, now, events.current_seq());
        let pw = self.pfc.as_deref_mut().expect("PFC frames only with PFC on");
        let m = &mut pw.paused_classes[li];
        *m = if pause { *m | 1 << class } else { *m & !(1 << class) };
        let classes = *m;
        let port = &mut self.links[li].port;
        let n = port.n_queues();
        for q in 0..n {
            let carried = if n == 1 { u64::MAX } else { 1 << q };
            port.set_paused(now, q, classes & carried != 0);
        }
        if !pause && port.has_eligible() {
            self.kick(events, now, li);
        }
    }

    /// The `TxDone` event of link `li`.
    pub(crate) fn tx_done(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize) {
        self.links[li].tx = Tx::Idle;
        self.start_tx(events, now, li, now);
    }

    /// The `ArriveResume` event of a packet sent on link `li`: perform the dequeue it owes,
    /// and return the node the packet reaches. The arrival comes right after that dequeue's
    /// place in the order of events (the owed number was taken just after this event's), so
    /// this catch-up is inclusive. (An older packet's arrival at the very time of the owed
    /// dequeue performs it a little earlier in that order, which matters only if an event
    /// in between enqueues into this port.)
    #[inline]
    pub(crate) fn arrive_resume(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize) -> usize {
        self.catch_up(events, now, li, now, u64::MAX);
        self.links[li].to as usize
    }

    /// The link is free at `at` (`now`, or an earlier time during [`Wire::catch_up`]):
    /// send the port's next packet, if any. The packet leaves in its own arrival event, at
    /// the end of its transmission plus the link delay (plus the connection's RTT-variation
    /// delay on a sender's access link, so that a packet with a smaller one may overtake
    /// another connection's).
    ///
    /// If more packets wait, the link is owed its next dequeue at the end of this
    /// transmission ([`Tx::Owed`]), which needs no event of its own: the packet travels as
    /// `ArriveResume`. Two cases keep a `TxDone` event ([`Tx::EventScheduled`]): a port
    /// drawing on its switch's shared pool (another port's admission must see this port's
    /// dequeues as they happen) and a packet with an RTT-variation delay (a later packet
    /// with a smaller one could arrive, and start its own successor, before this packet's
    /// arrival).
    #[inline]
    fn start_tx(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, at: Nanos) {
        let (port, pool) = self.links[li].port_and_pool(&mut self.pools);
        let dropped = &mut self.dropped;
        // Drops at dequeue (CoDel, ...). A PFC-counted port has none (`config/validate.rs` refuses a
        // scheme that drops at dequeue with PFC; the audit would catch a leak).
        let next = paths::dequeue_with(port, at, pool, |_, _, _| *dropped += 1);
        #[cfg(debug_assertions)]
        self.debug_check_port(now, li);
        let Some((pkt, _)) = next else {
            self.links[li].tx = Tx::Idle;
            return;
        };
        self.launch(events, now, li, at, pkt);
    }

    /// `pkt` leaves link `li` at `at` (see [`Wire::start_tx`]).
    #[inline(always)]
    fn launch(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, at: Nanos, mut pkt: Packet) {
        if self.links[li].watched {
            self.watched_sent(events, now, li, &pkt);
        }
        pkt.in_link = li as u32;
        if let Some(c) = self.capture.as_deref_mut() {
            c.record(li, at, &pkt);
        }
        let extra = if !self.conn_delay_ns.is_empty() && !self.links[li].is_switch_port && pkt.kind == Kind::Data {
            self.conn_delay_ns.get(pkt.flow as usize).copied().unwrap_or(0)
        } else {
            0
        };
        let link = &mut self.links[li];
        let done = at + tx_time_ns(pkt.size as u64, link.rate_bps);
        link.busy_until = done;
        link.tx_pkts += 1;
        let arrival = done + link.delay_ns + extra;
        // A dequeue performed late by a catch-up (`at` < `now`) still schedules its arrival
        // after `now`: the catch-up runs at the latest at the arrival of an earlier packet
        // of this link, `at + delay` or before, and this packet needs `at + tx + delay`.
        debug_assert!(arrival >= now, "arrival at {arrival} ns scheduled at {now} ns");
        let owes_dequeue = !link.port.is_empty();
        // The TX completion told at admission is this one, when nothing queued behind it.
        #[cfg(debug_assertions)]
        if link.predicts_tx_done && !owes_dequeue && done != self.tx_done_at[li] && self.violation.is_none() {
            self.violation = Some(format!(
                "internal error at t={now} ns: port {}: a packet ends its transmission at {done} ns, told {} ns",
                self.names[li], self.tx_done_at[li]
            ));
        }
        let carries_it = owes_dequeue && !link.on_time && extra == 0;
        events.push(arrival, if carries_it { Ev::ArriveResume(li as u32, pkt) } else { Ev::Arrive(link.to, pkt) });
        link.tx = if !owes_dequeue {
            Tx::Idle
        } else if carries_it || done < now {
            // `done < now`: inside a catch-up on a link with RTT variation, whose loop goes
            // on from here.
            self.owed_seq[li] = events.reserve_seq(); // where the TxDone event was
            Tx::Owed
        } else {
            events.push(done, Ev::TxDone(li as u32));
            Tx::EventScheduled
        };
    }

    /// Link `li` is owed a dequeue before the point (`until`, `seq`) in the order of events.
    #[inline]
    fn owes_before(&self, li: usize, until: Nanos, seq: u64) -> bool {
        let l = &self.links[li];
        l.tx == Tx::Owed && (l.busy_until < until || (l.busy_until == until && self.owed_seq[li] < seq))
    }

    /// Perform the dequeues link `li` is owed before the point (`until`, `seq`) in the order
    /// of events (time, then insertion number), each at its own time (the end of the
    /// transmission before it). An owed dequeue holds the insertion number its `TxDone`
    /// event would have had, so it falls where that event would have: every enqueue into
    /// the port catches up to its own event first, and the packets a dequeue at time t sees
    /// are exactly those the event order put before it.
    #[inline]
    pub(crate) fn catch_up(&mut self, events: &mut EventQueue<Ev>, now: Nanos, li: usize, until: Nanos, seq: u64) {
        while self.owes_before(li, until, seq) {
            self.links[li].tx = Tx::Idle;
            let at = self.links[li].busy_until;
            self.start_tx(events, now, li, at);
        }
    }

    /// Perform every dequeue owed before (`until`, `seq`): the end of the run.
    pub(crate) fn catch_up_all(&mut self, events: &mut EventQueue<Ev>, now: Nanos, until: Nanos, seq: u64) {
        for li in 0..self.links.len() {
            self.catch_up(events, now, li, until, seq);
        }
    }

    /// Port `li` as it is at the point (`now`, `seq`) in the order of events: the one way
    /// a reader (samples, the warm-up snapshot) sees a port. A port owing nothing is read
    /// in place, its time integrals brought up to `now` (exact, and no part of what the
    /// port decides). Otherwise the owed dequeues are performed by the wire's own
    /// transmission path into a scratch event queue, the caught-up port is handed to the
    /// reader, and the link is put back as it was (its port from a copy taken first): the
    /// real dequeues happen later, when the wire performs them anyway. Performing them for
    /// real now would give the events they schedule other insertion numbers, and so reorder
    /// events of the same nanosecond: what is recorded would change what is simulated
    /// (tests/observation.rs). (Going through `start_tx` rather than a second call of the
    /// port's dequeue also keeps that dequeue inlined into the hot path: a second caller
    /// cost 3.5 % more instructions on the 8-flow star.)
    pub(crate) fn port_at(&mut self, li: usize, now: Nanos, seq: u64) -> Cow<'_, Port<Packet>> {
        if !self.owes_before(li, now, seq) {
            self.links[li].port.advance_clock(now);
            return Cow::Borrowed(&self.links[li].port);
        }
        let l = &self.links[li];
        let saved_port = l.port.clone();
        let saved = (l.busy_until, l.tx, l.tx_pkts, l.own_pool, self.owed_seq[li], self.dropped);
        let saved_pool = (l.shared_pool != OWN_POOL).then(|| self.pools[l.shared_pool as usize]);
        let mut scratch = self.scratch.take().unwrap_or_else(|| EventQueue::new(1));
        // A reader's dequeues are undone: not captured, nor counted for PFC (a PFC-counted
        // port never owes a dequeue, so none is reached here).
        let capture = self.capture.take();
        let pfc = self.pfc.take();
        // As `catch_up`: the first owed dequeue is due by its place in the order; each one
        // after it would be numbered after the reader's event, so is due only before `now`.
        loop {
            self.links[li].tx = Tx::Idle;
            let at = self.links[li].busy_until;
            self.start_tx(&mut scratch, now, li, at);
            if !(self.links[li].tx == Tx::Owed && self.links[li].busy_until < now) {
                break;
            }
        }
        scratch.clear();
        self.scratch = Some(scratch);
        self.capture = capture;
        self.pfc = pfc;
        let l = &mut self.links[li];
        let mut view = std::mem::replace(&mut l.port, saved_port);
        (l.busy_until, l.tx, l.tx_pkts, l.own_pool, self.owed_seq[li], self.dropped) = saved;
        if let Some(pool) = saved_pool {
            self.pools[l.shared_pool as usize] = pool;
        }
        view.advance_clock(now);
        Cow::Owned(view)
    }

    /// Packets put on the wire so far (packet-hops).
    pub(crate) fn packet_hops(&self) -> u64 {
        self.links.iter().map(|l| l.tx_pkts).sum()
    }

    /// Debug builds check a port's books after every enqueue and dequeue (O(queues)); the
    /// first violation stops the run with its event time.
    #[cfg(debug_assertions)]
    fn debug_check_port(&mut self, now: Nanos, li: usize) {
        if self.violation.is_some() {
            return;
        }
        let link = &self.links[li];
        let pool = link.pool(&self.pools);
        let res = link.port.check_invariants(false).and_then(|_| {
            if pool.used_bytes > pool.limit_bytes {
                Err(format!("shared pool holds {} B, its limit is {} B", pool.used_bytes, pool.limit_bytes))
            } else {
                Ok(())
            }
        });
        if let Err(e) = res {
            self.violation = Some(format!("internal error at t={now} ns: port {}: {e}", self.names[li]));
        }
    }

    /// The wire's part of the counting audit (after [`Wire::catch_up_all`]): every port's
    /// books ([`Port::check_invariants`] in full), packets each port dequeued = packets its
    /// link sent (a packet is counted as sent when its transmission starts), shared pools =
    /// the ports drawing from them, drops counted by the ports = drops counted here.
    /// Returns the packets still queued.
    pub(crate) fn audit(&self, at: Nanos, node_names: &[String]) -> Result<u64, String> {
        let mut pool_use = vec![0u64; self.pools.len()];
        let mut queued = 0u64;
        for (li, l) in self.links.iter().enumerate() {
            let fail = |e: String| format!("internal error at t={at} ns: port {}: {e}", self.names[li]);
            l.port.check_invariants(true).map_err(fail)?;
            let deq_pkts: u64 = l.port.stats().iter().map(|st| st.deq_pkts).sum();
            if deq_pkts != l.tx_pkts {
                return Err(fail(format!("its queues dequeued {deq_pkts} packets but its link sent {}", l.tx_pkts)));
            }
            if l.shared_pool == OWN_POOL {
                if l.own_pool.used_bytes != l.port.pool_bytes() {
                    return Err(fail(format!(
                        "its own pool counts {} B, it holds {} B",
                        l.own_pool.used_bytes,
                        l.port.pool_bytes()
                    )));
                }
            } else {
                pool_use[l.shared_pool as usize] += l.port.pool_bytes();
            }
            queued += l.port.queue_occ().iter().map(|q| q.pkts as u64).sum::<u64>();
        }
        for (n, p) in self.pools.iter().enumerate() {
            if p.limit_bytes != u64::MAX && (p.used_bytes != pool_use[n] || p.used_bytes > p.limit_bytes) {
                return Err(format!(
                    "internal error at t={at} ns: the shared pool of {} counts {} B, its ports hold {} B (limit {} B)",
                    node_names[n], p.used_bytes, pool_use[n], p.limit_bytes
                ));
            }
        }
        if let Some(pw) = self.pfc.as_deref() {
            // Every lossless byte queued at a switch port is held against its ingress, and no
            // other byte is.
            let queued: u64 = (self.links.iter().filter(|l| l.is_switch_port))
                .flat_map(|l| l.port.queue_occ().iter().enumerate().filter(|(q, _)| pw.ctl.is_lossless(*q)))
                .map(|(_, o)| o.bytes)
                .sum();
            if queued != pw.ctl.held_total() {
                return Err(format!(
                    "internal error at t={at} ns: PFC holds {} B against ingress ports, the switches queue {queued} lossless B",
                    pw.ctl.held_total()
                ));
            }
        }
        let port_drops: u64 = self.links.iter().map(|l| l.port.total_drops()).sum();
        if port_drops != self.dropped {
            return Err(format!(
                "internal error at t={at} ns: ports counted {port_drops} drops, the network {}",
                self.dropped
            ));
        }
        Ok(queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_packs_its_transmission_path_in_one_cache_line() {
        use std::mem::offset_of;
        assert!(offset_of!(Link, is_switch_port) < 64);
        assert!(offset_of!(Link, tx) < 64);
        assert!(offset_of!(Link, own_pool) + std::mem::size_of::<BufferPool>() <= 64);
        assert!(offset_of!(Link, tx_pkts) + 8 <= 64);
        assert_eq!(offset_of!(Link, port), 64, "the port starts on the second line");
    }
}
