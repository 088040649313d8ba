//! The per-port token-bucket rate limiter.
//!
//! TCN §5 ("Rate Limiter"): without shaping, frames would queue in the NIC driver and
//! hardware instead of in the qdisc, and the queue the marking scheme sees would be smaller
//! than the real one. The prototype shaped each port at 99.5 % of line rate with a bucket of
//! about 1.67 MTU (2.5 KB). Here the same holds for a veth, which has no rate at all: the
//! shaper *is* the link rate, and the queue builds in the emulated port.
//!
//! One difference from Linux tbf: tbf peeks at the head packet and waits until the bucket
//! holds its size; the port's scheduler cannot be asked "who is next" without committing,
//! so this bucket lets a frame leave as soon as the bucket is not negative and charges its
//! size afterwards (it may go into debt by at most one frame). The long-run rate is exact;
//! a burst is at most `burst` plus one frame.
//!
//! Tokens are kept in "bit-nanoseconds per second" (bytes x 8 x 1e9), so that a refill of
//! `dt` ns at `rate` bit/s adds exactly `dt x rate` units: integer arithmetic, no drift.

use ecnlab_core::Nanos;

const UNITS_PER_BYTE: i128 = 8 * 1_000_000_000;

#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u64,
    /// Bucket depth in units.
    depth: i128,
    /// Current tokens in units (negative = debt).
    tokens: i128,
    last_ns: Nanos,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub fn new(rate_bps: u64, burst_bytes: u64, now: Nanos) -> Self {
        assert!(rate_bps > 0);
        let depth = burst_bytes as i128 * UNITS_PER_BYTE;
        TokenBucket { rate_bps, depth, tokens: depth, last_ns: now }
    }
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    /// Bucket depth in bytes.
    pub fn burst_bytes(&self) -> u64 {
        (self.depth / UNITS_PER_BYTE) as u64
    }

    fn refill(&mut self, now: Nanos) {
        if now > self.last_ns {
            let dt = (now - self.last_ns) as i128;
            self.tokens = (self.tokens + dt * self.rate_bps as i128).min(self.depth);
            self.last_ns = now;
        }
    }

    /// May a frame leave at `now`?
    #[inline]
    pub fn ready(&mut self, now: Nanos) -> bool {
        self.refill(now);
        self.tokens >= 0
    }

    /// Charge a frame of `bytes` that left at `now`.
    #[inline]
    pub fn consume(&mut self, now: Nanos, bytes: u64) {
        self.refill(now);
        self.tokens -= bytes as i128 * UNITS_PER_BYTE;
    }

    /// The earliest time at which [`TokenBucket::ready`] is true (`now` if it already is).
    pub fn ready_at(&mut self, now: Nanos) -> Nanos {
        self.refill(now);
        if self.tokens >= 0 {
            now
        } else {
            let r = self.rate_bps as i128;
            now + ((-self.tokens + r - 1) / r) as Nanos
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Send 1500-byte frames as early as the bucket allows: after the initial burst, the
    /// k-th frame leaves at k x 120 us (100 Mbit/s), and the rate over a long run is exact.
    #[test]
    fn frames_leave_at_the_configured_rate() {
        let rate = 100_000_000;
        let t0 = 1_000_000_000;
        let mut tb = TokenBucket::new(rate, 2500, t0);
        let mut now = t0;
        let mut times = Vec::new();
        for _ in 0..1000 {
            now = tb.ready_at(now);
            assert!(tb.ready(now));
            tb.consume(now, 1500);
            times.push(now - t0);
        }
        // Bucket of 2500 B: two frames at t0 (the second goes 500 B into debt).
        assert_eq!(&times[..2], &[0, 0]);
        // Then the debt (500 B = 40 us) and each further frame (1500 B = 120 us) are paid.
        assert_eq!(times[2], 40_000);
        for k in 3..1000 {
            assert_eq!(times[k] - times[k - 1], 120_000, "frame {k}");
        }
        let sent_bits = 1000.0 * 1500.0 * 8.0;
        let span = times[999] as f64 / 1e9;
        // Long-run rate: the initial burst is at most burst + one frame.
        assert!((sent_bits - (2500.0 + 1500.0) * 8.0) / span <= rate as f64 * 1.0001);
    }

    #[test]
    fn idle_refills_only_up_to_the_burst() {
        let mut tb = TokenBucket::new(1_000_000_000, 3000, 0);
        tb.consume(0, 3000);
        assert!(tb.ready(0));
        tb.consume(0, 1500);
        assert!(!tb.ready(0));
        // 1500 B at 1 Gbit/s = 12 us.
        assert_eq!(tb.ready_at(0), 12_000);
        assert!(!tb.ready(11_999));
        assert!(tb.ready(12_000));
        // A long idle period gives back at most the bucket: 3000 B then debt.
        let t = 10_000_000_000;
        assert!(tb.ready(t));
        tb.consume(t, 1500);
        tb.consume(t, 1500);
        assert!(tb.ready(t));
        tb.consume(t, 1);
        assert!(!tb.ready(t));
        assert_eq!(tb.ready_at(t), t + 8); // 1 byte = 8 ns at 1 Gbit/s
    }

    #[test]
    fn ready_at_rounds_up_to_whole_nanoseconds() {
        // 3 Gbit/s: one byte is 8/3 ns; the bucket must never say "ready" early.
        let mut tb = TokenBucket::new(3_000_000_000, 0, 0);
        tb.consume(0, 1);
        let t = tb.ready_at(0);
        assert_eq!(t, 3);
        assert!(!tb.ready(2));
        assert!(tb.ready(3));
    }
}
