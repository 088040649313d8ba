// SPDX-License-Identifier: GPL-2.0
/*
 * ecnlab_dctcp_dq: the dual-AQM paper's modified DCTCP (Kühlewind et al., "Using Data
 * Center TCP (DCTCP) in the Internet", §III) as a BPF struct_ops TCP congestion control;
 * the simulator's `dctcp_dualq` (crates/ecnlab-sim/src/tcp/cc.rs, DctcpDualq).
 *
 * Read first: ecnlab_dctcp.bpf.c (standard DCTCP, RFC 8257), whose receiver side and loss
 * reaction this shares. What the paper changes, and how each maps onto the kernel:
 *
 *  - §III-A a: alpha with 2^-20 resolution (ALPHA_BITS = 20).
 *  - §III-B c: alpha updated on every ACK that reports delivered segments, with
 *    g = 1/2^8: alpha <- (1 - g) alpha + g F, F = 1 if the ACK carries ECN-Echo, else 0.
 *  - §III-B d: progressive reduction. The cut at the start of CWR is taken from
 *    cwnd_max, the window then; on each further ECN-Echo during CWR the target
 *    cwnd_max x (1 - alpha/2) is recomputed with the newer alpha and applied if lower.
 *  - §III-A b: the window may grow during CWR, and Reno's counter is not reset when no
 *    reduction was made.
 *
 * How this meets Linux, whose Proportional Rate Reduction (RFC 6937, tcp_cwnd_reduction)
 * sets cwnd on every ACK of the CWR state from snd_ssthresh, its target, and ends CWR with
 * cwnd = ssthresh; cong_avoid is never called in CWR. Both (d) and (b) therefore move the
 * target, in in_ack_event, which runs before PRR on the same ACK:
 *  - (d) lowers snd_ssthresh to the recomputed whole-segment target when it is lower;
 *  - (b) on an ACK that reports delivered segments, made no reduction and finds the
 *    socket cwnd-limited, grows snd_ssthresh as Reno grows a window (tcp_cong_avoid_ai on
 *    the target, with a counter of its own: the kernel zeroes snd_cwnd_cnt when CWR
 *    begins); when CWR completes the counter carries over into snd_cwnd_cnt. A CWR entry
 *    that cuts nothing keeps the counter from before it.
 * The simulator's `linux` host profile models the same (tcp/linux/dctcp_dualq.rs).
 * The paper's other fix (ssthresh = cwnd after a cut) holds by construction: PRR ends CWR
 * with cwnd = ssthresh.
 */
#include "ecnlab_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_BITS 20
#define ALPHA_ONE (1U << ALPHA_BITS)

/* Parameters, set by ecnlab-cc-loader from the scenario before loading (defaults: the
 * paper's): g = 1 / 2^shift_g (§III-B c: 1/2^8; transport.dualq_g), alpha_init in units
 * of 2^-ALPHA_BITS (transport.dctcp_alpha_init), and the switches of (d) and (b)
 * (transport.dualq_progressive, dualq_grow_in_cwr). */
const volatile __u32 shift_g = 8;
const volatile __u32 alpha_init = ALPHA_ONE;
const volatile __u32 progressive = 1;
const volatile __u32 grow_in_cwr = 1;

struct ecnlab_dctcp_dq {
	__u32 alpha;          /* DCTCP alpha, ALPHA_ONE = 1 */
	__u32 last_delivered; /* tp->delivered at the previous ACK: which ACKs report segments */
	__u32 cwnd_max;       /* cwnd when the current CWR period began (§III-B d); 0 outside */
	__u32 cwr_cnt;        /* Reno's counter on the target during CWR (§III-A b) */
	__u32 ca_cnt;         /* snd_cwnd_cnt after the last cong_avoid (zeroed by the kernel
			       * before ssthresh() is asked) */
	__u32 loss_cwnd;      /* cwnd before the last reduction, for undo */
	__u32 prior_rcv_nxt;  /* receiver: rcv_nxt before the last data packet */
	__u32 ce_state;       /* receiver: 1 if the last data packet carried CE (RFC 8257 §3.2) */
};

/* cwnd_max (1 - alpha/2) in whole segments, rounded down as the kernel's DCTCP, >= 2. */
static __always_inline __u32 cut(__u32 cwnd, __u32 alpha)
{
	return ecnlab_max_u32(cwnd - (__u32)(((__u64)cwnd * alpha) >> (ALPHA_BITS + 1)), 2);
}

SEC("struct_ops/ecnlab_dctcp_dq_init")
void BPF_PROG(ecnlab_dctcp_dq_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	if (hand_to_reno_without_ecn(sk))
		return;
	ca->alpha = ecnlab_min_u32(alpha_init, ALPHA_ONE);
	ca->last_delivered = tp->delivered;
	ca->cwnd_max = 0;
	ca->cwr_cnt = 0;
	ca->ca_cnt = 0;
	ca->loss_cwnd = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = 0;
}

SEC("struct_ops/ecnlab_dctcp_dq_in_ack_event")
void BPF_PROG(ecnlab_dctcp_dq_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);
	__u32 delivered = tp->delivered - ca->last_delivered;
	__u32 alpha = ca->alpha, target, w, cnt;

	ca->last_delivered = tp->delivered;
	/* (c) An ACK that reports no segment (a window update, a duplicate) leaves alpha. */
	if (delivered) {
		alpha -= (alpha >> shift_g) ? (alpha >> shift_g) : alpha;
		if (flags & CA_ACK_ECE)
			alpha = ecnlab_min_u32(alpha + (ALPHA_ONE >> shift_g), ALPHA_ONE);
		ca->alpha = alpha;
	}
	/* The ACK that starts CWR comes here first (the kernel enters CWR after this hook)
	 * and is cut by ssthresh() with this alpha. */
	if (!ca->cwnd_max || BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state) != TCP_CA_CWR)
		return;
	/* (d) A further ECN-Echo lowers the target by whole segments, never raises it. */
	if (progressive && (flags & CA_ACK_ECE)) {
		target = cut(ca->cwnd_max, alpha);
		if (target < tp->snd_ssthresh) {
			tp->snd_ssthresh = target;
			ca->cwr_cnt = 0;
			return;
		}
	}
	/* (b) No reduction on this ACK: the target grows as Reno's window would
	 * (tcp_cong_avoid_ai with w = the target). */
	if (!grow_in_cwr || !delivered || !BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return;
	w = tp->snd_ssthresh;
	cnt = ca->cwr_cnt;
	if (cnt >= w) {
		cnt = 0;
		w++;
	}
	cnt += delivered;
	if (cnt >= w) {
		__u32 delta = cnt / w;

		cnt -= delta * w;
		w += delta;
	}
	tp->snd_ssthresh = ecnlab_min_u32(w, tp->snd_cwnd_clamp);
	ca->cwr_cnt = cnt;
}

/* Entering CWR (or, overridden by set_state / cwnd_event, Recovery or Loss). */
SEC("struct_ops/ecnlab_dctcp_dq_ssthresh")
__u32 BPF_PROG(ecnlab_dctcp_dq_ssthresh, struct sock *sk)
{
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;
	__u32 target = cut(cwnd, ca->alpha);

	ca->loss_cwnd = cwnd;
	ca->cwnd_max = cwnd;
	/* (b) The counter survives a CWR entry that reduces nothing. */
	ca->cwr_cnt = target < cwnd ? 0 : ca->ca_cnt;
	return target;
}

static __always_inline void react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	/* The reduction now belongs to loss recovery: no progressive ECN cuts inside it. */
	ca->cwnd_max = 0;
	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = ecnlab_max_u32(tp->snd_cwnd >> 1, 2);
}

SEC("struct_ops/ecnlab_dctcp_dq_set_state")
void BPF_PROG(ecnlab_dctcp_dq_set_state, struct sock *sk, __u8 new_state)
{
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Recovery && new_state != BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state))
		react_to_loss(sk);
	else if (new_state != TCP_CA_CWR && new_state != TCP_CA_Recovery)
		ca->cwnd_max = 0;
}

SEC("struct_ops/ecnlab_dctcp_dq_cwnd_event")
void BPF_PROG(ecnlab_dctcp_dq_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE) {
		ce_echo_on_packet(sk, ev, &ca->prior_rcv_nxt, &ca->ce_state);
	} else if (ev == CA_EVENT_LOSS) {
		react_to_loss(sk);
	} else if (ev == CA_EVENT_COMPLETE_CWR && ca->cwnd_max && grow_in_cwr) {
		/* (b) CWR ends with cwnd = ssthresh; Reno's counter continues from the target's. */
		ca->cwnd_max = 0;
		tcp_sk(sk)->snd_cwnd_cnt = ca->cwr_cnt;
		ca->ca_cnt = ca->cwr_cnt;
	}
}

SEC("struct_ops/ecnlab_dctcp_dq_undo_cwnd")
__u32 BPF_PROG(ecnlab_dctcp_dq_undo_cwnd, struct sock *sk)
{
	const struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	return ecnlab_max_u32(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops/ecnlab_dctcp_dq_cong_avoid")
void BPF_PROG(ecnlab_dctcp_dq_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	tcp_reno_cong_avoid(sk, ack, acked);
	ca->ca_cnt = tcp_sk(sk)->snd_cwnd_cnt;
}

SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_dctcp_dq = {
	.init = (void *)ecnlab_dctcp_dq_init,
	.in_ack_event = (void *)ecnlab_dctcp_dq_in_ack_event,
	.cwnd_event = (void *)ecnlab_dctcp_dq_cwnd_event,
	.ssthresh = (void *)ecnlab_dctcp_dq_ssthresh,
	.cong_avoid = (void *)ecnlab_dctcp_dq_cong_avoid,
	.undo_cwnd = (void *)ecnlab_dctcp_dq_undo_cwnd,
	.set_state = (void *)ecnlab_dctcp_dq_set_state,
	.flags = ECNLAB_TCP_CONG_NEEDS_ECN,
	.name = "ecnlab_dctcp_dq",
};
