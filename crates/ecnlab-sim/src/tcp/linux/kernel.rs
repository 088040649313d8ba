//! The kernel lines the `linux` profile follows (`transport.kernel`), and the rules that
//! differ between them, each an object of its line written from that line's source:
//! `tcp_update_pacing_rate` (net/ipv4/tcp_input.c) and TCP Small Queues
//! (`tcp_write_xmit` in 3.18, `tcp_small_queue_check` from 4.9 on, net/ipv4/tcp_output.c).
//!
//! Lines, and what in them matters here:
//! - `"3.18"` (the TCN testbed's, TCN §6.1): pacing rate 200 % of cwnd x mss / srtt in every
//!   state; TSQ in `tcp_write_xmit` only, limit = max(`tcp_limit_output_bytes`, rate >> 10)
//!   (so at least 128 KiB, the 3.18 default, below TCP), retransmissions not checked.
//! - `"4.19"`: pacing rate 200 % in slow start (cwnd < ssthresh / 2), 120 % otherwise
//!   (`tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`, since 4.2); `tcp_small_queue_check`:
//!   limit = min(max(2 truesize, rate >> 10), `tcp_limit_output_bytes` = 256 KiB), doubled
//!   for retransmissions (`factor` 1 in `tcp_xmit_retransmit_queue`), and a socket with an
//!   empty retransmission queue always sends.
//! - `"6.18"` (the default: the kernel `ecnlab validate` runs against): the 4.19 rule with
//!   `tcp_limit_output_bytes` = 4 MiB applied to every socket ("tcp: increase
//!   tcp_limit_output_bytes default value to 4MB", "tcp: always use tcp_limit_output_bytes
//!   limitation", 6.16), and a socket whose retransmission queue holds at most one skb always
//!   sends (`tcp_rtx_queue_empty_or_single_skb`, 6.7).
//!
//! Without an RTT sample the pacing rate is unlimited (`sk_pacing_rate` starts at ~0), so
//! the limit is `tcp_limit_output_bytes` (4.19, 6.18) or none (3.18).

use serde::{Deserialize, Serialize};

/// `transport.kernel`: the kernel line whose TCP the `linux` profile follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema)]
pub enum Kernel {
    /// Linux 3.18 (the TCN testbed's kernel, TCN §6.1).
    #[serde(rename = "3.18")]
    V3_18,
    /// Linux 4.19 (LTS).
    #[serde(rename = "4.19")]
    V4_19,
    /// Linux 6.18, the default: the kernel of the machines `ecnlab validate` was run on.
    #[default]
    #[serde(rename = "6.18")]
    V6_18,
}

/// `SKB_TRUESIZE` beyond a segment's wire bytes: `struct sk_buff` (256 B aligned) and
/// `struct skb_shared_info` (320 B) of a TCP skb, and its head room for headers
/// (`MAX_TCP_HEADER`, 320 B): an estimate of `skb->truesize` for TSQ's "two packets" floor,
/// which matters only below about 40 Mbps.
pub const SKB_OVERHEAD: u64 = 896;

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::V3_18 => "3.18",
            Kernel::V4_19 => "4.19",
            Kernel::V6_18 => "6.18",
        }
    }

    /// `net.ipv4.tcp_syn_linear_timeouts`'s default: the SYN timeouts an active open waits
    /// `rto_syn` each before it backs off (Linux 6.5 on, tcp_timer.c `tcp_retransmit_timer`;
    /// ip-sysctl.rst: "we would expect SYN RTOs to be: 1, 1, 1, 1, 1, 2, 4, ..."). Before
    /// 6.5 every SYN timeout doubles (0); `tcp_write_timeout` adds them to `tcp_syn_retries`.
    /// `ecnlab validate` measured it on 6.18: the third SYN 2.03-2.05 s after the first, not 3 s.
    pub fn syn_linear_timeouts(self) -> u32 {
        match self {
            Kernel::V3_18 | Kernel::V4_19 => 0,
            Kernel::V6_18 => 4,
        }
    }

    /// `net.ipv4.tcp_limit_output_bytes`'s default.
    pub fn limit_output_bytes(self) -> u64 {
        match self {
            Kernel::V3_18 => 128 << 10,
            Kernel::V4_19 => 256 << 10,
            Kernel::V6_18 => 4 << 20,
        }
    }

    /// `tcp_update_pacing_rate`: bytes per second for a window of `cwnd` segments (and
    /// `packets_out` sent) of `mss` bytes over the smoothed RTT `srtt8` (`tp->srtt_us`:
    /// microseconds << 3, as the kernel divides by it); None (unlimited) before the first
    /// RTT sample.
    pub fn pacing_rate(self, mss: u32, cwnd: u32, ssthresh: u32, packets_out: u32, srtt8: u64) -> Option<u64> {
        if srtt8 == 0 {
            return None;
        }
        let ratio: u64 = match self {
            Kernel::V3_18 => 200,
            // "If snd_cwnd >= (tp->snd_ssthresh / 2), we are approaching end of slow start."
            Kernel::V4_19 | Kernel::V6_18 if cwnd < ssthresh / 2 => 200,
            Kernel::V4_19 | Kernel::V6_18 => 120,
        };
        let segs = cwnd.max(packets_out).max(1) as u64;
        // rate = mss x ((USEC_PER_SEC / 100) << 3) x ratio x segs / srtt_us.
        Some(mss as u64 * 80_000 * ratio * segs / srtt8)
    }

    /// TCP Small Queues: whether a socket with `in_host` bytes (`sk_wmem_alloc`, skbs handed
    /// below TCP whose TX completion has not come) must wait before sending an skb of
    /// `truesize`, its pacing rate `rate` (bytes/s, None: unlimited), `lob` its
    /// `tcp_limit_output_bytes`, `rtx_skbs` the skbs in its retransmission queue, and
    /// `retransmission` whether the skb is one (`factor` 1).
    pub fn tsq_holds(self, t: TsqCheck) -> bool {
        let TsqCheck { in_host, truesize, rate, lob, rtx_skbs, retransmission } = t;
        let per_ms = rate.map_or(u64::MAX, |r| r >> 10); // ~1 ms of the pacing rate
        let limit = match self {
            // tcp_write_xmit of 3.18: retransmissions are not checked.
            Kernel::V3_18 if retransmission => return false,
            Kernel::V3_18 => lob.max(per_ms),
            Kernel::V4_19 | Kernel::V6_18 => (2 * truesize).max(per_ms).min(lob) << retransmission as u32,
        };
        if in_host <= limit {
            return false;
        }
        // "Always send skb if rtx queue is empty [or has one skb]. No need to wait for TX
        // completion to call us back."
        let always = match self {
            Kernel::V3_18 => false,
            Kernel::V4_19 => rtx_skbs == 0,
            Kernel::V6_18 => rtx_skbs <= 1,
        };
        !always
    }
}

impl Kernel {
    /// The most segments one TSO skb carries out of `tcp_write_xmit` (`tcp_tso_segs`, from
    /// `tcp_tso_autosize`; 3.18: the skb `tcp_sendmsg` built, `tcp_xmit_size_goal`), for a
    /// host whose NIC takes skbs of `gso_max` bytes (`sk_gso_max_size`): about a millisecond
    /// of the pacing rate (3.18: half a millisecond), at least `tcp_min_tso_segs` = 2; from
    /// 5.18 plus `gso_max >> (min_rtt / 512 us)` (`tcp_tso_rtt_log` 9), so a flow whose RTT is
    /// below 512 us sends whole `gso_max` skbs.
    pub fn tso_segs(self, mss: u32, gso_max: u64, rate: Option<u64>, min_rtt_us: u32) -> u32 {
        const MIN_TSO_SEGS: u64 = 2;
        let rate = rate.unwrap_or(u64::MAX);
        let bytes = match self {
            // gso_size = sk_pacing_rate / (2 * MSEC_PER_SEC), capped at sk_gso_max_size - 1 - hlen.
            Kernel::V3_18 => (rate / 2000).min(gso_max - 1 - 40),
            // min(sk_pacing_rate >> sk_pacing_shift, sk_gso_max_size - 1 - MAX_TCP_HEADER).
            Kernel::V4_19 => (rate >> 10).min(gso_max - 1 - 320),
            Kernel::V6_18 => {
                let r = min_rtt_us >> 9;
                let extra = if r < 32 { gso_max >> r } else { 0 };
                (rate >> 10).saturating_add(extra).min(gso_max)
            }
        };
        (bytes / mss as u64).max(MIN_TSO_SEGS).min(u32::MAX as u64) as u32
    }

    /// `tcp_tso_should_defer`: whether to hold an skb of `skb_len` bytes (it does not fit
    /// the window at once) for a bigger burst after the next ACK. Rules, in the kernel's
    /// order: never in Recovery or Loss; never if the last transmission is over 1 ms old
    /// ("allowing defer only if the last write was recent"); never if a whole `max_segs` skb
    /// fits the window left (`cong_win`, bytes), nor an skb that is not the write queue's
    /// last (it gets no more data) and fits; never once a third of the window
    /// (`tcp_tso_win_divisor` 3) is free; never if the oldest unacknowledged segment was
    /// sent less than half an RTT ago ("if next ACK is likely to come too late"); never
    /// with nothing outstanding.
    pub fn tso_should_defer(self, d: DeferCheck) -> bool {
        let DeferCheck { recovering, since_last_tx, cong_win, skb_len, not_tail, max_segs, mss, cwnd, head_age, srtt8 } =
            d;
        if recovering || since_last_tx > 1_000_000 {
            return false;
        }
        let mss = mss as u64;
        if cong_win >= max_segs as u64 * mss || (not_tail && cong_win >= skb_len) {
            return false;
        }
        let chunk = cwnd as u64 * mss / 3;
        if cong_win >= chunk {
            return false;
        }
        match head_age {
            None => false,
            // srtt_us >> 4: half the smoothed RTT, in microseconds.
            Some(age) => age >= (srtt8 >> 4) * 1000,
        }
    }
}

/// What `tcp_tso_should_defer` reads (see [`Kernel::tso_should_defer`]); times in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeferCheck {
    /// `icsk_ca_state >= TCP_CA_Recovery`.
    pub recovering: bool,
    /// Since the last transmission.
    pub since_last_tx: u64,
    /// (cwnd - packets in flight) x mss: what the window lets out now.
    pub cong_win: u64,
    pub skb_len: u64,
    /// The skb is not the write queue's last: more data waits behind it.
    pub not_tail: bool,
    /// `tcp_tso_segs`.
    pub max_segs: u32,
    pub mss: u32,
    pub cwnd: u32,
    /// Since the oldest unacknowledged segment was sent (None: nothing outstanding).
    pub head_age: Option<u64>,
    /// `tp->srtt_us` (microseconds << 3).
    pub srtt8: u64,
}

/// What `tcp_small_queue_check` reads (see [`Kernel::tsq_holds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TsqCheck {
    pub in_host: u64,
    pub truesize: u64,
    pub rate: Option<u64>,
    pub lob: u64,
    pub rtx_skbs: u32,
    pub retransmission: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tcp_update_pacing_rate` by hand: mss 1460, cwnd 10, srtt 100 us (800 << 3): cwnd x mss / srtt =
    /// 146 MB/s; 200 % in slow start (292 MB/s), 120 % in congestion avoidance (175.2 MB/s);
    /// 3.18 always 200 %.
    #[test]
    fn pacing_rate_is_a_ratio_of_cwnd_over_srtt() {
        let ss = u32::MAX; // ssthresh before the first reduction
        assert_eq!(Kernel::V6_18.pacing_rate(1460, 10, ss, 4, 800), Some(292_000_000));
        assert_eq!(Kernel::V6_18.pacing_rate(1460, 10, 20, 4, 800), Some(175_200_000));
        assert_eq!(Kernel::V4_19.pacing_rate(1460, 10, 22, 4, 800), Some(292_000_000), "10 < 22 / 2");
        assert_eq!(Kernel::V4_19.pacing_rate(1460, 10, 21, 4, 800), Some(175_200_000), "10 < 21 / 2 is false");
        assert_eq!(Kernel::V3_18.pacing_rate(1460, 10, 20, 4, 800), Some(292_000_000));
        // packets_out above cwnd (after a reduction) counts.
        assert_eq!(Kernel::V6_18.pacing_rate(1460, 5, 8, 10, 800), Some(175_200_000));
        assert_eq!(Kernel::V6_18.pacing_rate(1460, 10, 20, 4, 0), None);
    }

    fn check(in_host: u64, rate: Option<u64>, rtx_skbs: u32, retransmission: bool) -> TsqCheck {
        TsqCheck { in_host, truesize: 1500 + SKB_OVERHEAD, rate, lob: 0, rtx_skbs, retransmission }
    }

    /// tcp_small_queue_check by hand. 175.2 MB/s >> 10 = 171,093 B (about 1 ms): a socket
    /// with 171,093 B below TCP may send, one byte more waits; a retransmission may have
    /// twice that; with the rtx queue empty it always sends (4.19), with one skb too (6.18).
    #[test]
    fn small_queues_hold_a_socket_to_about_a_millisecond_of_its_pacing_rate() {
        let rate = Some(175_200_000);
        let k = Kernel::V6_18;
        let lob = k.limit_output_bytes();
        let c = |h, rtx, re| TsqCheck { lob, ..check(h, rate, rtx, re) };
        assert!(!k.tsq_holds(c(171_093, 5, false)));
        assert!(k.tsq_holds(c(171_094, 5, false)));
        assert!(!k.tsq_holds(c(342_186, 5, true)), "limit <<= factor for a retransmission");
        assert!(k.tsq_holds(c(342_187, 5, true)));
        assert!(!k.tsq_holds(c(1 << 30, 1, false)), "6.18: one skb in the rtx queue, send");
        assert!(Kernel::V4_19.tsq_holds(TsqCheck { lob: 256 << 10, ..c(171_094, 1, false) }));
        assert!(!Kernel::V4_19.tsq_holds(TsqCheck { lob: 256 << 10, ..c(1 << 30, 0, false) }));
        // tcp_limit_output_bytes caps it (4.19's 256 KiB at a 1 GB/s rate) ...
        let fast = TsqCheck { lob: 256 << 10, ..check(262_145, Some(1_000_000_000), 5, false) };
        assert!(Kernel::V4_19.tsq_holds(fast));
        // ... and is 3.18's floor: max(128 KiB, rate >> 10), retransmissions unchecked.
        let slow = TsqCheck { lob: 128 << 10, ..check(131_072, Some(10_000_000), 5, false) };
        assert!(!Kernel::V3_18.tsq_holds(slow));
        assert!(Kernel::V3_18.tsq_holds(TsqCheck { in_host: 131_073, ..slow }));
        assert!(!Kernel::V3_18.tsq_holds(TsqCheck { in_host: 1 << 30, retransmission: true, ..slow }));
        // Two skbs' truesize is the floor at low rates: 2 x 2,396 B at 1 MB/s (976 B/ms).
        let low = TsqCheck { lob, ..check(4_792, Some(1_000_000), 5, false) };
        assert!(!k.tsq_holds(low));
        assert!(k.tsq_holds(TsqCheck { in_host: 4_793, ..low }));
        // No RTT sample yet: the pacing rate is unlimited, tcp_limit_output_bytes bounds.
        assert!(!k.tsq_holds(TsqCheck { lob, ..check(4 << 20, None, 5, false) }));
        assert!(k.tsq_holds(TsqCheck { lob, ..check((4 << 20) + 1, None, 5, false) }));
    }
}
