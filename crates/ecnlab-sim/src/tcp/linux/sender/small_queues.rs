//! TCP Small Queues at the `linux` sender (net/ipv4/tcp_output.c: `tcp_small_queue_check`,
//! `tcp_wfree`, `tcp_tsq_handler`; the limit rule of each kernel line is
//! [`Kernel::tsq_holds`](crate::tcp::linux::kernel::Kernel::tsq_holds)).
//!
//! The socket's skbs below TCP (`sk_wmem_alloc`: handed to the host's NIC, not yet
//! TX-completed) are held here with their `truesize`; the simulator tells each one's TX
//! completion time as the NIC takes it ([`SmallQueues::scheduled`]: the end of its last wire
//! packet's transmission, which a one-queue FIFO NIC fixes at enqueue). A socket that the
//! limit holds back waits (`TSQ_THROTTLED`) until its oldest skb's completion, when
//! `tcp_tsq_handler` sends again (`tcp_xmit_retransmit_queue`, `tcp_write_xmit`); ACKs keep
//! sending meanwhile as the limit allows.
//!
//! Not modelled: NIC TX-completion coalescing (completions come at the end of the wire
//! transmission), `skb_still_in_host_queue` (a retransmission of a segment whose clone is
//! still in the host is not deferred).

use crate::tcp::linux::kernel::{Kernel, TsqCheck, SKB_OVERHEAD};
use ecnlab_core::units::Nanos;
use std::collections::VecDeque;

/// One skb below TCP.
#[derive(Clone, Copy, Debug)]
struct Skb {
    truesize: u64,
    /// Its wire packets the NIC has not yet taken or refused.
    unplaced: u32,
    /// Whether the NIC took any of them, and when the last it took will have left.
    taken: bool,
    done: Nanos,
}

/// TSQ's state of one socket.
#[derive(Clone, Debug)]
pub(super) struct SmallQueues {
    pub kernel: Kernel,
    /// `tcp_limit_output_bytes`.
    pub lob: u64,
    /// Skbs below TCP, oldest first; the first `placed` have all their packets in the NIC
    /// (their TX completion is known), the rest were handed over in this call.
    below: VecDeque<Skb>,
    placed: usize,
    /// Sum of `below`'s truesizes (`sk_wmem_alloc`).
    pub in_host: u64,
    /// Held back by the limit and waiting for a TX completion (`TSQ_THROTTLED`).
    pub throttled: bool,
    /// Times the limit held the socket back.
    pub holds: u64,
}

impl SmallQueues {
    pub fn new(kernel: Kernel, lob: u64) -> Self {
        SmallQueues { kernel, lob, below: VecDeque::new(), placed: 0, in_host: 0, throttled: false, holds: 0 }
    }

    /// `skb->truesize` of an skb carrying `payload` bytes (one header, the kernel's
    /// overhead).
    pub fn truesize(payload: u64) -> u64 {
        payload + crate::packet::TCP_IP_HEADER as u64 + SKB_OVERHEAD
    }

    /// `tcp_small_queue_check` for an skb of `payload` bytes: true when the socket must wait
    /// (and is then throttled).
    pub fn holds(&mut self, payload: u64, rate: Option<u64>, rtx_skbs: u32, retransmission: bool) -> bool {
        let check = TsqCheck {
            in_host: self.in_host,
            truesize: Self::truesize(payload),
            rate,
            lob: self.lob,
            rtx_skbs,
            retransmission,
        };
        let hold = self.kernel.tsq_holds(check);
        if hold {
            self.throttled = true;
            self.holds += 1;
        }
        hold
    }

    /// An skb of `payload` bytes in `packets` wire packets went below TCP
    /// (`refcount_add(truesize, &sk_wmem_alloc)`).
    pub fn handed(&mut self, payload: u64, packets: u32) {
        let truesize = Self::truesize(payload);
        self.below.push_back(Skb { truesize, unplaced: packets.max(1), taken: false, done: 0 });
        self.in_host += truesize;
    }

    /// The NIC took the oldest wire packet handed over and not yet placed, to leave it at
    /// `done`, or refused it (None). An skb is complete when the last packet the NIC took
    /// has left; one it refused whole is freed at once. A packet this sender did not hand
    /// over (a test's) is ignored.
    pub fn scheduled(&mut self, done: Option<Nanos>) {
        let i = self.placed;
        let Some(skb) = self.below.get_mut(i) else { return };
        if let Some(t) = done {
            (skb.taken, skb.done) = (true, t);
        }
        skb.unplaced -= 1;
        if skb.unplaced > 0 {
            return;
        }
        if skb.taken {
            self.placed += 1;
        } else if let Some(skb) = self.below.remove(i) {
            self.in_host -= skb.truesize;
        }
    }

    /// The TX completions up to `now` (`tcp_wfree`); true when a throttled socket is woken
    /// by one (`tcp_tsq_handler` then sends).
    pub fn complete(&mut self, now: Nanos) -> bool {
        let mut freed = false;
        while self.placed > 0 {
            let skb = self.below[0];
            if skb.done > now {
                break;
            }
            self.below.pop_front();
            self.placed -= 1;
            self.in_host -= skb.truesize;
            freed = true;
        }
        let woken = freed && self.throttled;
        if woken {
            self.throttled = false;
        }
        woken
    }

    /// When a throttled socket is woken: its oldest skb's TX completion.
    pub fn wake(&self) -> Option<Nanos> {
        if self.throttled && self.placed > 0 {
            Some(self.below[0].done)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_free_in_order_and_wake_a_throttled_socket() {
        let mut q = SmallQueues::new(Kernel::V6_18, 4 << 20);
        let t = SmallQueues::truesize(1460);
        assert_eq!(t, 1500 + SKB_OVERHEAD);
        for _ in 0..4 {
            q.handed(1460, 1);
        }
        assert_eq!(q.in_host, 4 * t);
        q.scheduled(Some(1_200));
        q.scheduled(None); // refused by the NIC: freed at once
        q.scheduled(Some(2_400));
        q.scheduled(Some(3_600));
        assert_eq!(q.in_host, 3 * t);
        // A 1 MB/s rate allows 976 B/ms: the floor of two truesizes (4,792 B) binds, and three
        // are below TCP: held (one skb in the rtx queue is not enough under 4.19's rule,
        // which needs it empty).
        q.kernel = Kernel::V4_19;
        assert!(q.holds(1460, Some(1_000_000), 1, false));
        assert_eq!(q.wake(), Some(1_200));
        assert!(!q.complete(1_199));
        assert!(q.complete(1_200), "the first completion wakes it");
        assert_eq!((q.in_host, q.throttled, q.wake()), (2 * t, false, None));
        assert!(!q.complete(5_000), "not throttled: nothing to wake");
        assert_eq!(q.in_host, 0);
    }

    /// A TSO skb of three packets completes when the last the NIC took has left: one truesize
    /// (its 4,380 B of payload, one header and the overhead), freed at once if the NIC took
    /// none of its packets.
    #[test]
    fn a_tso_skb_completes_with_its_last_packet() {
        let mut q = SmallQueues::new(Kernel::V6_18, 4 << 20);
        q.handed(3 * 1460, 3);
        assert_eq!(q.in_host, 3 * 1460 + 40 + SKB_OVERHEAD);
        q.scheduled(Some(1_200));
        q.scheduled(Some(2_400));
        q.scheduled(None);
        q.throttled = true;
        assert_eq!(q.wake(), Some(2_400), "the last packet taken");
        assert!(!q.complete(2_399) && q.complete(2_400));
        q.handed(2 * 1460, 2);
        q.scheduled(None);
        q.scheduled(None);
        assert_eq!(q.in_host, 0, "refused whole: freed");
    }
}
