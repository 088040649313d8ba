//! MERGE NOTE (branch `linux-tcp`): an interim `linux` receiver, so that the `linux`
//! profile runs end to end before branch `linux-cc` brings the real one (`receiver.rs`,
//! `LinuxReceiver`: quick-ACK, Linux's delayed ACKs, RFC 8257 §3.2 immediate ACKs). At the
//! merge, `transport.rs` and `tcp::linux::sender`'s tests switch to `LinuxReceiver`, which
//! has the same interface, and this file is deleted.
//!
//! It is the textbook receiver (`tcp::receiver`) plus SACK blocks (RFC 2018 §4): each ACK
//! carries, through the connection's [`SackLog`], the out-of-order block that holds the
//! segment that triggered it first, then the other blocks from the highest down, at most
//! [`MAX_SACK_BLOCKS`](super::sack_option::MAX_SACK_BLOCKS).

use super::sack_option::{SackBlocks, SackLog};
use crate::packet::{Kind, Packet};
use crate::tcp::config::TcpConfig;
use crate::tcp::receiver::{ReceiverStats, TcpReceiver};
use ecnlab_core::units::Nanos;

#[derive(Clone, Debug)]
pub struct InterimReceiver {
    inner: TcpReceiver,
    sack: bool,
    log: SackLog,
}

impl InterimReceiver {
    /// `src` is the receiver host, `dst` the sender host.
    pub fn new(cfg: &TcpConfig, flow: u32, src: u16, dst: u16) -> Self {
        InterimReceiver { inner: TcpReceiver::new(cfg, flow, src, dst), sack: cfg.sack, log: SackLog::default() }
    }
    pub fn on_data(&mut self, now: Nanos, pkt: &Packet, out: &mut Vec<Packet>) {
        let from = out.len();
        self.inner.on_data(now, pkt, out);
        self.tag(pkt.seq, from, out);
    }
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let from = out.len();
        self.inner.on_timer(now, out);
        self.tag(u64::MAX, from, out);
    }
    pub fn timer(&self) -> Option<Nanos> {
        self.inner.timer()
    }
    pub fn delivered_bytes(&self) -> u64 {
        self.inner.delivered_bytes()
    }
    pub fn stats(&self) -> &ReceiverStats {
        self.inner.stats()
    }
    pub fn sack_log(&self) -> &SackLog {
        &self.log
    }

    /// Records the SACK blocks of the ACKs pushed from `out[from..]`.
    fn tag(&mut self, seq: u64, from: usize, out: &mut [Packet]) {
        if !self.sack || out.len() == from {
            return;
        }
        let ooo = self.inner.ooo_intervals();
        let mut b = SackBlocks::default();
        let first = ooo.iter().position(|&(s, e)| s <= seq && seq < e);
        if let Some(i) = first {
            b.push(ooo[i].0, ooo[i].1);
        }
        for (i, &(s, e)) in ooo.iter().enumerate().rev() {
            if Some(i) != first {
                b.push(s, e);
            }
        }
        let tag = self.log.record(&b);
        for p in &mut out[from..] {
            if p.kind == Kind::Ack {
                p.payload = tag;
            }
        }
    }
}
