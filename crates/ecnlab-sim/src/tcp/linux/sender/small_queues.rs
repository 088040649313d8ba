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

/// TSQ's state of one socket.
#[derive(Clone, Debug)]
pub(super) struct SmallQueues {
    pub kernel: Kernel,
    /// `tcp_limit_output_bytes`.
    pub lob: u64,
    /// Skbs below TCP, oldest first: `truesize` and the TX completion time, once the NIC has
    /// taken it (the first `scheduled` entries; the rest were handed over in this call).
    below: VecDeque<(u64, Nanos)>,
    scheduled: usize,
    /// Sum of `below`'s truesizes (`sk_wmem_alloc`).
    pub in_host: u64,
    /// Held back by the limit and waiting for a TX completion (`TSQ_THROTTLED`).
    pub throttled: bool,
    /// Times the limit held the socket back.
    pub holds: u64,
}

impl SmallQueues {
    pub fn new(kernel: Kernel, lob: u64) -> Self {
        SmallQueues { kernel, lob, below: VecDeque::new(), scheduled: 0, in_host: 0, throttled: false, holds: 0 }
    }

    /// `skb->truesize` of an skb of `payload` bytes in one segment (its wire bytes and the
    /// kernel's overhead).
    pub fn truesize(payload: u32) -> u64 {
        payload as u64 + crate::packet::TCP_IP_HEADER as u64 + SKB_OVERHEAD
    }

    /// `tcp_small_queue_check` for an skb of `payload` bytes: true when the socket must wait
    /// (and is then throttled).
    pub fn holds(&mut self, payload: u32, rate: Option<u64>, rtx_skbs: u32, retransmission: bool) -> bool {
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

    /// An skb of `payload` bytes went below TCP (`refcount_add(truesize, &sk_wmem_alloc)`).
    pub fn handed(&mut self, payload: u32) {
        let t = Self::truesize(payload);
        self.below.push_back((t, Nanos::MAX));
        self.in_host += t;
    }

    /// The NIC took the oldest skb handed over in the last call, to complete at `done`; or
    /// refused it (None): it is freed at once. A packet this sender did not hand over (a
    /// test's) is ignored.
    pub fn scheduled(&mut self, done: Option<Nanos>) {
        let i = self.scheduled;
        if i >= self.below.len() {
            return;
        }
        match done {
            Some(t) => {
                self.below[i].1 = t;
                self.scheduled += 1;
            }
            None => {
                if let Some((t, _)) = self.below.remove(i) {
                    self.in_host -= t;
                }
            }
        }
    }

    /// The TX completions up to `now` (`tcp_wfree`); true when a throttled socket is woken
    /// by one (`tcp_tsq_handler` then sends).
    pub fn complete(&mut self, now: Nanos) -> bool {
        let mut freed = false;
        while self.scheduled > 0 {
            let (t, done) = self.below[0];
            if done > now {
                break;
            }
            self.below.pop_front();
            self.scheduled -= 1;
            self.in_host -= t;
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
        if self.throttled && self.scheduled > 0 {
            Some(self.below[0].1)
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
            q.handed(1460);
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
}
