//! Which congestion control a `linux` sender runs: `transport.cc` mapped to a
//! [`CongestionOps`], dispatched by enum (no virtual call per ACK).
//!
//! `newreno` is the kernel's `reno`; `ecn_star` is `reno` with ECN negotiated
//! (`net.ipv4.tcp_ecn = 1`: RFC 3168's once-per-window halving, [`EcnReno`]).
//!
//! MERGE NOTE (branch `linux-tcp`): the kernel's other algorithms (`cubic.rs`, `dctcp.rs`,
//! `dctcp_dualq.rs`) come from branch `linux-cc`. Until they are merged, `dctcp` and
//! `dctcp_dualq` run [`EcnReno`] and `cubic` runs Reno, as stand-ins. At the merge, add one
//! variant per algorithm below and map `CcKind::Cubic`, `Dctcp`, `DctcpDualq` to them;
//! nothing else in the sender changes.

use super::ca::{AckSample, CaEvent, CaSock, CaState, CongestionOps, Reno};
use crate::tcp::config::{CcKind, TcpConfig};

/// Reno with ECN negotiated (`tcp_reno` with `net.ipv4.tcp_ecn` = 1): the sender enters
/// CWR on ECN-Echo and Reno's ssthresh halves the window (RFC 3168 §6.1.2).
#[derive(Clone, Debug, Default)]
pub struct EcnReno(Reno);

impl CongestionOps for EcnReno {
    fn needs_ecn(&self) -> bool {
        true
    }
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        self.0.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut CaSock, ack: u64, acked: u32) {
        self.0.cong_avoid(tp, ack, acked)
    }
}

/// The congestion control of one `linux` sender.
#[derive(Clone, Debug)]
pub enum Algorithm {
    Reno(Reno),
    EcnReno(EcnReno),
}

impl Algorithm {
    pub fn new(cfg: &TcpConfig) -> Self {
        match cfg.cc {
            CcKind::NewReno | CcKind::Cubic => Algorithm::Reno(Reno),
            // DCQCN connections never build a TCP sender.
            CcKind::EcnStar | CcKind::Dctcp | CcKind::DctcpDualq | CcKind::Dcqcn => {
                Algorithm::EcnReno(EcnReno::default())
            }
        }
    }
}

macro_rules! each {
    ($self:expr, $a:ident => $e:expr) => {
        match $self {
            Algorithm::Reno($a) => $e,
            Algorithm::EcnReno($a) => $e,
        }
    };
}

impl CongestionOps for Algorithm {
    fn needs_ecn(&self) -> bool {
        each!(self, a => a.needs_ecn())
    }
    fn init(&mut self, tp: &mut CaSock) {
        each!(self, a => a.init(tp))
    }
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        each!(self, a => a.ssthresh(tp))
    }
    fn cong_avoid(&mut self, tp: &mut CaSock, ack: u64, acked: u32) {
        each!(self, a => a.cong_avoid(tp, ack, acked))
    }
    fn set_state(&mut self, tp: &mut CaSock, new_state: CaState) {
        each!(self, a => a.set_state(tp, new_state))
    }
    fn cwnd_event(&mut self, tp: &mut CaSock, ev: CaEvent) {
        each!(self, a => a.cwnd_event(tp, ev))
    }
    fn in_ack_event(&mut self, tp: &mut CaSock, flags: u32) {
        each!(self, a => a.in_ack_event(tp, flags))
    }
    fn pkts_acked(&mut self, tp: &mut CaSock, sample: &AckSample) {
        each!(self, a => a.pkts_acked(tp, sample))
    }
    fn undo_cwnd(&mut self, tp: &CaSock) -> u32 {
        each!(self, a => a.undo_cwnd(tp))
    }
    fn alpha(&self) -> f64 {
        each!(self, a => a.alpha())
    }
}
