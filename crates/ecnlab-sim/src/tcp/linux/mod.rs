//! The `linux` host profile (`transport.profile = "linux"`): a TCP that does what Linux
//! does, beside the `textbook` NewReno of `tcp::sender` / `tcp::receiver`, which stays as
//! it is for the catalog entries that reproduce ns-2 simulations.
//!
//! Layout:
//! - [`accept`]: the receiver's side of the handshake (SYN-ACK and its timer).
//! - [`ca`]: the congestion-control interface (`tcp_congestion_ops`) and Reno.
//! - [`cubic`]: CUBIC (RFC 9438) as `tcp_cubic.c`, HyStart included.
//! - [`dctcp`]: DCTCP as `tcp_dctcp.c`.
//! - [`dctcp_dualq`]: the dual-AQM paper's modified DCTCP on whole segments and PRR.
//! - [`congestion_ops`] / [`LinuxCa`]: `transport.cc` to one of them, enum-dispatched.
//! - [`kernel`]: `transport.kernel`, the rules that differ between kernel lines (pacing
//!   rate, TCP Small Queues).
//! - [`gro`]: the receiver host's GRO (NAPI batches merged per flow into 64 KB skbs).
//! - [`offload`]: `host.tso`, `host.gro`, `host.rx_coalesce` resolved to what the
//!   sender and receiver run with.
//! - [`recovery`]: loss detection by kernel line (the Tail Loss Probe's timeout, RACK).
//! - [`receiver`]: the receiver (delayed ACKs with quick-ACK, SACK blocks, ECN echo).
//! - [`sack_option`]: how SACK blocks travel from the receiver to the sender.
//! - [`sender`]: the sender (loss recovery, PRR, RTO), on the SACK [`scoreboard`]; its
//!   state machine in `sender/episode.rs`, its RTT estimate in [`rtt`].

pub mod accept;
pub mod ca;
pub mod cubic;
pub mod dctcp;
pub mod dctcp_dualq;
pub mod gro;
pub mod kernel;
pub mod offload;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod sack_option;
pub mod scoreboard;
pub mod sender;

pub use receiver::LinuxReceiver;
pub use sender::LinuxSender;

use super::config::{CcKind, TcpConfig};
use ca::{AckSample, CaEvent, CaSock, CaState, CongestionOps, Reno};
use cubic::{Cubic, CubicParams};
use dctcp::Dctcp;
use dctcp_dualq::{DctcpDualq, DualqParams};

/// The congestion controls of the `linux` profile, dispatched by `match` (no `dyn` on the
/// per-ACK path).
#[derive(Clone, Debug)]
pub enum LinuxCa {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    DctcpDualq(DctcpDualq),
}

/// `1/2^n` as n, for the gains the kernel keeps as shifts (`dctcp_shift_g`); the linux
/// profile's validation (`TcpConfig::validate`) refuses other gains.
fn shift_of(g: f64) -> u32 {
    (-g.log2()).round().clamp(0.0, 52.0) as u32
}

/// The algorithm `transport.cc` names, with its `[transport]` parameters.
/// `newreno` and `ecn_star` are Reno (Linux's classic ECN is Reno's response to ECE in
/// the sender plus RFC 3168's echo in the receiver); `dcqcn` never builds a TCP.
pub fn congestion_ops(cfg: &TcpConfig) -> LinuxCa {
    match cfg.cc {
        CcKind::NewReno | CcKind::EcnStar | CcKind::Dcqcn => LinuxCa::Reno(Reno),
        CcKind::Cubic => LinuxCa::Cubic(Cubic::new(CubicParams {
            // tcp_cubic.c keeps beta in 1/1024 and C as bic_scale = C x 1024 / 10.
            beta: (cfg.cubic_beta * 1024.0).round() as u32,
            bic_scale: (cfg.cubic_c * 1024.0 / 10.0).round().max(1.0) as u32,
            fast_convergence: cfg.cubic_fast_convergence,
            hystart: cfg.cubic_hystart,
            ..Default::default()
        })),
        CcKind::Dctcp => LinuxCa::Dctcp(Dctcp::new(shift_of(cfg.dctcp_g), dctcp::alpha_on_init(cfg.dctcp_alpha_init))),
        CcKind::DctcpDualq => {
            let bits = if cfg.dualq_alpha_bits == 0 { 52 } else { cfg.dualq_alpha_bits.min(52) };
            LinuxCa::DctcpDualq(DctcpDualq::new(DualqParams {
                shift_g: shift_of(cfg.dualq_g),
                alpha_bits: bits,
                alpha_init: (cfg.dctcp_alpha_init.clamp(0.0, 1.0) * (1u64 << bits) as f64) as u64,
                per_ack: cfg.dualq_per_ack_alpha,
                progressive: cfg.dualq_progressive,
                grow_in_cwr: cfg.dualq_grow_in_cwr,
            }))
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            LinuxCa::Reno($c) => $e,
            LinuxCa::Cubic($c) => $e,
            LinuxCa::Dctcp($c) => $e,
            LinuxCa::DctcpDualq($c) => $e,
        }
    };
}

impl CongestionOps for LinuxCa {
    #[inline]
    fn needs_ecn(&self) -> bool {
        dispatch!(self, c => c.needs_ecn())
    }
    #[inline]
    fn init(&mut self, tp: &mut CaSock) {
        dispatch!(self, c => c.init(tp))
    }
    #[inline]
    fn ssthresh(&mut self, tp: &CaSock) -> u32 {
        dispatch!(self, c => c.ssthresh(tp))
    }
    #[inline]
    fn cong_avoid(&mut self, tp: &mut CaSock, ack: u64, acked: u32) {
        dispatch!(self, c => c.cong_avoid(tp, ack, acked))
    }
    #[inline]
    fn set_state(&mut self, tp: &mut CaSock, new_state: CaState) {
        dispatch!(self, c => c.set_state(tp, new_state))
    }
    #[inline]
    fn cwnd_event(&mut self, tp: &mut CaSock, ev: CaEvent) {
        dispatch!(self, c => c.cwnd_event(tp, ev))
    }
    #[inline]
    fn in_ack_event(&mut self, tp: &mut CaSock, flags: u32) {
        dispatch!(self, c => c.in_ack_event(tp, flags))
    }
    #[inline]
    fn pkts_acked(&mut self, tp: &mut CaSock, sample: &AckSample) {
        dispatch!(self, c => c.pkts_acked(tp, sample))
    }
    #[inline]
    fn undo_cwnd(&mut self, tp: &CaSock) -> u32 {
        dispatch!(self, c => c.undo_cwnd(tp))
    }
    #[inline]
    fn alpha(&self) -> f64 {
        dispatch!(self, c => c.alpha())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factory_picks_the_algorithm_and_its_parameters() {
        let mut cfg = TcpConfig::with_cc(CcKind::Dctcp);
        cfg.dctcp_alpha_init = 1.0;
        let ca = congestion_ops(&cfg);
        assert!(matches!(ca, LinuxCa::Dctcp(_)) && ca.needs_ecn());
        assert_eq!(ca.alpha(), 1.0);
        let tp = CaSock { snd_cwnd: 100, ..Default::default() };
        let mut ca = ca;
        assert_eq!(ca.ssthresh(&tp), 50);
        for (cc, ecn) in
            [(CcKind::NewReno, false), (CcKind::EcnStar, false), (CcKind::Cubic, false), (CcKind::DctcpDualq, true)]
        {
            let ca = congestion_ops(&TcpConfig::with_cc(cc));
            assert_eq!(ca.needs_ecn(), ecn, "{cc:?}");
        }
        assert!(matches!(congestion_ops(&TcpConfig::with_cc(CcKind::Cubic)), LinuxCa::Cubic(_)));
        assert_eq!(shift_of(1.0 / 16.0), 4);
        assert_eq!(shift_of(1.0 / 256.0), 8);
        // dualq: alpha_init 0.5 at 2^-20.
        let mut cfg = TcpConfig::with_cc(CcKind::DctcpDualq);
        cfg.dctcp_alpha_init = 0.5;
        let LinuxCa::DctcpDualq(d) = congestion_ops(&cfg) else { panic!() };
        assert_eq!(d.alpha_raw(), 1 << 19);
    }
}
