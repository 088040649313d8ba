/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What ecnlab's BPF congestion controls need beyond vmlinux.h.
 *
 * Read first: the kernel's interface for a TCP congestion control written in BPF
 * (struct tcp_congestion_ops registered through a BPF_MAP_TYPE_STRUCT_OPS map,
 * net/ipv4/bpf_tcp_ca.c): a program may read the socket freely but write only
 * snd_cwnd, snd_cwnd_cnt, snd_ssthresh, ecn_flags, icsk_ack.pending and the private
 * area icsk_ca_priv (ICSK_CA_PRIV_SIZE bytes, here `struct` of each algorithm).
 *
 * vmlinux.h is generated at build time from the running kernel's BTF (build.sh), so the
 * struct layouts are the kernel's own; BTF carries no #define, hence the few below,
 * each as in the kernel header named beside it.
 */
#ifndef ECNLAB_TCP_CA_H
#define ECNLAB_TCP_CA_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* include/net/tcp_ecn.h (tcp.h before 6.x): tp->ecn_flags bits. Bit 0 is RFC 3168 ECN
 * negotiated (TCP_ECN_OK, called TCP_ECN_MODE_RFC3168 since AccECN), bit 4 AccECN. */
#define ECNLAB_TCP_ECN_OK 0x1
#define ECNLAB_TCP_ECN_MODE_ACCECN 0x10
#define ECNLAB_TCP_ECN_DEMAND_CWR 0x4
/* include/net/tcp.h: the algorithm needs ECN (the socket sends ECT whatever the
 * net.ipv4.tcp_ecn sysctl says, and the receiver path calls cwnd_event with the CE
 * events). */
#define ECNLAB_TCP_CONG_NEEDS_ECN 0x2
/* include/uapi/linux/tcp.h, include/linux/socket.h: for bpf_setsockopt. */
#define ECNLAB_SOL_TCP 6
#define ECNLAB_TCP_CONGESTION 13

/* Kernel functions a BPF congestion control may call (the kfunc set of bpf_tcp_ca.c). */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

/* Sequence numbers compare modulo 2^32 (RFC 793 §3.3). */
static __always_inline bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline __u32 ecnlab_max_u32(__u32 a, __u32 b)
{
	return a > b ? a : b;
}

static __always_inline __u32 ecnlab_min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

static __always_inline bool ecn_negotiated(const struct tcp_sock *tp)
{
	return tp->ecn_flags & (ECNLAB_TCP_ECN_OK | ECNLAB_TCP_ECN_MODE_ACCECN);
}

/*
 * RFC 8257 §3.2: the receiver's two-state CE echo. The receiver remembers whether the
 * last data packet it received carried CE; while that holds it sets ECN-Echo on every
 * ACK (TCP_ECN_DEMAND_CWR is the flag the kernel's ACK path turns into ECE). When the
 * state changes, the ACK must go out at once so that each ACK's ECE covers packets of
 * one kind only: if an ACK was being delayed, send it first for the bytes received in the
 * old state (up to prior_rcv_nxt, with the old ECE), then ask for an immediate ACK of the
 * new packet. The kernel does the same in net/ipv4/tcp_dctcp.h.
 */
static __always_inline void ce_echo_set(struct sock *sk, __u32 ce)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce)
		tp->ecn_flags |= ECNLAB_TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~ECNLAB_TCP_ECN_DEMAND_CWR;
}

static __always_inline void ce_echo_on_packet(struct sock *sk, enum tcp_ca_event ev, __u32 *prior_rcv_nxt,
					      __u32 *ce_state)
{
	__u32 ce = ev == CA_EVENT_ECN_IS_CE;

	if (*ce_state != ce) {
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			ce_echo_set(sk, *ce_state);
			bpf_tcp_send_ack(sk, *prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	*prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	*ce_state = ce;
	ce_echo_set(sk, ce);
}

/*
 * A connection whose handshake did not negotiate ECN gets no marks to react to: as the
 * kernel's DCTCP (which switches to an internal Reno), hand it to Reno. Changing the
 * algorithm also makes the kernel stop sending ECT, since Reno does not need ECN
 * (tcp_reinit_congestion_control). Returns whether the socket was handed over.
 */
static __always_inline bool hand_to_reno_without_ecn(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	static const char reno[] = "reno";

	if (ecn_negotiated(tp) || sk->__sk_common.skc_state == TCP_LISTEN ||
	    sk->__sk_common.skc_state == TCP_CLOSE)
		return false;
	bpf_setsockopt(sk, ECNLAB_SOL_TCP, ECNLAB_TCP_CONGESTION, (void *)reno, sizeof(reno));
	return true;
}

#endif
