// SPDX-License-Identifier: GPL-2.0
/*
 * ecnlab_dctcp: DCTCP (RFC 8257) as a BPF struct_ops TCP congestion control, so that
 * `ecnlab emulate` runs the papers' transport on a kernel built without tcp_dctcp.
 *
 * Read first: RFC 8257 §3 (the algorithm), ecnlab_tcp_ca.h (what a BPF congestion
 * control may touch). The behaviour is the kernel's net/ipv4/tcp_dctcp.c, whose choices
 * this file keeps so that the emulator measures what a Linux DCTCP host does:
 *
 *  - alpha in fixed point with 10 fractional bits (1024 = 1), g = 1/2^shift_g and the
 *    initial alpha as parameters (the module's defaults: g = 1/16 as RFC 8257 §4.2
 *    suggests, initial alpha 1; `ecnlab emulate` sets the scenario's);
 *  - the observation window counts packets, not bytes (tp->delivered and
 *    tp->delivered_ce, which the kernel's ACK path keeps per ACK: an ACK with ECE adds
 *    what it delivered to delivered_ce);
 *  - the cut cwnd x (1 - alpha/2) is the slow-start threshold returned when the kernel
 *    enters CWR on an ECE (once per window of data: RFC 8257 §3.3 steps 8-9, the kernel's
 *    CWR state); the kernel then lowers cwnd to it by Proportional Rate Reduction (RFC
 *    6937) over the next round trip, not at once;
 *  - on loss, half the window (RFC 8257 §3.5: as a standard TCP);
 *  - window growth is Reno's (tcp_reno_cong_avoid, a kernel function).
 */
#include "ecnlab_tcp_ca.h"

char _license[] SEC("license") = "GPL";

/* alpha's unit: 1.0 is 1 << ALPHA_BITS. */
#define ALPHA_BITS 10
#define ALPHA_ONE (1U << ALPHA_BITS)

/* Parameters, set by ecnlab-cc-loader from the scenario before loading (the defaults are
 * the kernel module's): g = 1 / 2^shift_g (RFC 8257 §4.2: 1/16; transport.dctcp_g), at
 * most ALPHA_BITS; alpha_init in units of 2^-ALPHA_BITS (transport.dctcp_alpha_init). */
const volatile __u32 shift_g = 4;
const volatile __u32 alpha_init = ALPHA_ONE;

/* Per-connection state, in the socket's icsk_ca_priv (at most ICSK_CA_PRIV_SIZE). */
struct ecnlab_dctcp {
	__u32 alpha;             /* RFC 8257 DCTCP.Alpha, ALPHA_ONE = 1 */
	__u32 window_end;        /* RFC 8257 DCTCP.WindowEnd: snd_nxt when the window began */
	__u32 delivered_start;   /* tp->delivered when the window began (DCTCP.BytesAcked = 0) */
	__u32 delivered_ce_start;/* tp->delivered_ce then (DCTCP.BytesMarked = 0) */
	__u32 loss_cwnd;         /* cwnd before the last reduction, for undo */
	__u32 prior_rcv_nxt;     /* receiver: rcv_nxt before the last data packet */
	__u32 ce_state;          /* receiver: 1 if the last data packet carried CE (§3.2) */
};

static __always_inline void window_start(const struct tcp_sock *tp, struct ecnlab_dctcp *ca)
{
	/* RFC 8257 §3.3 steps 6-7: a new observation window ends with what is sent now. */
	ca->window_end = tp->snd_nxt;
	ca->delivered_start = tp->delivered;
	ca->delivered_ce_start = tp->delivered_ce;
}

SEC("struct_ops/ecnlab_dctcp_init")
void BPF_PROG(ecnlab_dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp *ca = inet_csk_ca(sk);

	if (hand_to_reno_without_ecn(sk))
		return;
	ca->alpha = ecnlab_min_u32(alpha_init, ALPHA_ONE);
	ca->loss_cwnd = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce_state = 0;
	window_start(tp, ca);
}

/*
 * RFC 8257 §3.3 steps 3-7, on every ACK: once the ACK passes the end of the window,
 * alpha <- (1 - g) alpha + g F with F the fraction of the window's packets that were
 * echoed as marked, then a new window starts.
 */
SEC("struct_ops/ecnlab_dctcp_in_ack_event")
void BPF_PROG(ecnlab_dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp *ca = inet_csk_ca(sk);
	__u32 alpha = ca->alpha;
	__u32 marked, delivered;

	if (seq_before(tp->snd_una, ca->window_end))
		return;
	/* (1 - g) alpha, letting alpha reach 0 once alpha >> shift_g truncates to 0. */
	alpha -= (alpha >> shift_g) ? (alpha >> shift_g) : alpha;
	marked = tp->delivered_ce - ca->delivered_ce_start;
	if (marked) {
		delivered = ecnlab_max_u32(tp->delivered - ca->delivered_start, 1);
		/* + g F = marked / delivered / 2^shift_g, in units of 2^-ALPHA_BITS (u64: a
		 * small g on a long window must not overflow). */
		alpha = ecnlab_min_u32(alpha + ((__u64)marked << (ALPHA_BITS - shift_g)) / delivered, ALPHA_ONE);
	}
	ca->alpha = alpha;
	window_start(tp, ca);
}

/* RFC 8257 §3.3 step 9: cwnd <- cwnd x (1 - alpha / 2), at least 2 segments. */
SEC("struct_ops/ecnlab_dctcp_ssthresh")
__u32 BPF_PROG(ecnlab_dctcp_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp *ca = inet_csk_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->loss_cwnd = cwnd;
	return ecnlab_max_u32(cwnd - (__u32)(((__u64)cwnd * ca->alpha) >> (ALPHA_BITS + 1)), 2);
}

/* RFC 8257 §3.5: a loss halves the window, whatever alpha says. */
static __always_inline void react_to_loss(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ecnlab_dctcp *ca = inet_csk_ca(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = ecnlab_max_u32(tp->snd_cwnd >> 1, 2);
}

/*
 * Entering fast recovery: the kernel asked ssthresh() first (the alpha cut); a loss
 * overrides it with the halving. An RTO arrives as CA_EVENT_LOSS instead, so that one
 * loss episode reduces once.
 */
SEC("struct_ops/ecnlab_dctcp_set_state")
void BPF_PROG(ecnlab_dctcp_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Recovery && new_state != BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state))
		react_to_loss(sk);
}

SEC("struct_ops/ecnlab_dctcp_cwnd_event")
void BPF_PROG(ecnlab_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct ecnlab_dctcp *ca = inet_csk_ca(sk);

	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE)
		ce_echo_on_packet(sk, ev, &ca->prior_rcv_nxt, &ca->ce_state);
	else if (ev == CA_EVENT_LOSS)
		react_to_loss(sk);
}

/* A reduction found spurious (D-SACK, timestamps) is undone to the window before it. */
SEC("struct_ops/ecnlab_dctcp_undo_cwnd")
__u32 BPF_PROG(ecnlab_dctcp_undo_cwnd, struct sock *sk)
{
	const struct ecnlab_dctcp *ca = inet_csk_ca(sk);

	return ecnlab_max_u32(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops/ecnlab_dctcp_cong_avoid")
void BPF_PROG(ecnlab_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_dctcp = {
	.init = (void *)ecnlab_dctcp_init,
	.in_ack_event = (void *)ecnlab_dctcp_in_ack_event,
	.cwnd_event = (void *)ecnlab_dctcp_cwnd_event,
	.ssthresh = (void *)ecnlab_dctcp_ssthresh,
	.cong_avoid = (void *)ecnlab_dctcp_cong_avoid,
	.undo_cwnd = (void *)ecnlab_dctcp_undo_cwnd,
	.set_state = (void *)ecnlab_dctcp_set_state,
	.flags = ECNLAB_TCP_CONG_NEEDS_ECN,
	.name = "ecnlab_dctcp",
};
