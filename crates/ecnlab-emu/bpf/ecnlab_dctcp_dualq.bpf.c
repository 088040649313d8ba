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
 *  - §III-B c: alpha updated on every ACK that acknowledges data, with g = 1/2^8:
 *    alpha <- (1 - g) alpha + g F, F = 1 if the ACK carries ECN-Echo, else 0.
 *  - §III-B d: progressive reduction. The cut at the start of CWR is taken from
 *    cwnd_max, the window then; on each further ECN-Echo during CWR the target
 *    cwnd_max x (1 - alpha/2) is recomputed with the newer alpha and applied if lower.
 *    In Linux the reduction during CWR is carried out by Proportional Rate Reduction
 *    towards snd_ssthresh (RFC 6937; tcp_cwnd_reduction sets cwnd on every ACK, and
 *    cwnd = ssthresh when CWR ends), so the target is applied by lowering snd_ssthresh:
 *    PRR takes it from the next ACK on.
 *  - §III-A b, window growth during CWR: NOT implemented. While the socket is in CWR the
 *    kernel never calls cong_avoid (tcp_cong_control runs PRR instead), and PRR rewrites
 *    cwnd on every ACK; the only way around is the cong_control hook, which replaces the
 *    kernel's whole per-ACK window logic (PRR in loss recovery and the pacing-rate update
 *    included) and would make this an algorithm other than the paper's on Linux.
 *  - §III-A, ssthresh after a reduction equals the new cwnd: as in the kernel already.
 */
#include "ecnlab_tcp_ca.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_BITS 20
#define ALPHA_ONE (1U << ALPHA_BITS)
/* g = 1 / 2^G_SHIFT (§III-B c). */
#define G_SHIFT 8

struct ecnlab_dctcp_dq {
	__u32 alpha;         /* DCTCP alpha, ALPHA_ONE = 1 */
	__u32 last_snd_una;  /* snd_una after the previous ACK: did this ACK acknowledge data? */
	__u32 cwnd_max;      /* cwnd when the current CWR period began (§III-B d); 0 outside */
	__u32 loss_cwnd;     /* cwnd before the last reduction, for undo */
	__u32 prior_rcv_nxt; /* receiver: rcv_nxt before the last data packet */
	__u32 ce_state;      /* receiver: 1 if the last data packet carried CE (RFC 8257 §3.2) */
};

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
	ca->alpha = ALPHA_ONE;
	ca->last_snd_una = tp->snd_una;
	ca->cwnd_max = 0;
	ca->loss_cwnd = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = 0;
}

SEC("struct_ops/ecnlab_dctcp_dq_in_ack_event")
void BPF_PROG(ecnlab_dctcp_dq_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);
	__u32 alpha = ca->alpha, target;

	/* An ACK that acknowledges nothing (a window update, a duplicate) reports no
	 * packet, marked or not: alpha stays. */
	if (tp->snd_una == ca->last_snd_una)
		return;
	ca->last_snd_una = tp->snd_una;
	alpha -= (alpha >> G_SHIFT) ? (alpha >> G_SHIFT) : alpha;
	if (flags & CA_ACK_ECE)
		alpha = ecnlab_min_u32(alpha + (ALPHA_ONE >> G_SHIFT), ALPHA_ONE);
	ca->alpha = alpha;

	/* §III-B d: a further ECN-Echo during CWR recomputes the cut from cwnd_max. The ACK
	 * that starts CWR comes here first (the kernel enters CWR after this hook) and is
	 * cut by ssthresh() with this alpha. */
	if (!(flags & CA_ACK_ECE) || !ca->cwnd_max ||
	    BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state) != TCP_CA_CWR)
		return;
	target = cut(ca->cwnd_max, alpha);
	if (target < tp->snd_ssthresh)
		tp->snd_ssthresh = target;
}

SEC("struct_ops/ecnlab_dctcp_dq_ssthresh")
__u32 BPF_PROG(ecnlab_dctcp_dq_ssthresh, struct sock *sk)
{
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	ca->loss_cwnd = cwnd;
	ca->cwnd_max = cwnd;
	return cut(cwnd, ca->alpha);
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
	else if (new_state == TCP_CA_Open)
		ca->cwnd_max = 0;
}

SEC("struct_ops/ecnlab_dctcp_dq_cwnd_event")
void BPF_PROG(ecnlab_dctcp_dq_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct ecnlab_dctcp_dq *ca = inet_csk_ca(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ce_echo_on_packet(sk, ev, &ca->prior_rcv_nxt, &ca->ce_state);
	else if (ev == CA_EVENT_LOSS)
		react_to_loss(sk);
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
	tcp_reno_cong_avoid(sk, ack, acked);
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
