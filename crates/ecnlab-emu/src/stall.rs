//! How late the switch's event loop ran: the machine's disturbance, seen by the switch.
//!
//! The loop knows, each time round, when it should run next: at once after a batch of
//! frames, else at its ppoll deadline (the next shaper transmission, sample or sockstat read,
//! at most `MAX_SLEEP_NS` away). Starting later than that by over [`STALL_NS`] means the
//! process did not get a CPU: other processes, or the hypervisor (steal time), took it. Every
//! frame waiting in the switch then waits as long, and a probe's RTT with it: a few such
//! stalls move a p99 without moving any average the harness measures (its CPU and steal
//! figures are means over the run). Counted here, so that `ecnlab emulate` can say which
//! runs the machine disturbed.

use ecnlab_core::Nanos;
use serde::Serialize;

/// Lateness below this is the scheduler's ordinary wake-up latency (tens of µs idle), not a
/// stall: a millisecond is 12 KB at 100 Mbps, a queue the marking thresholds notice.
pub const STALL_NS: Nanos = 1_000_000;

/// The loop's stalls: those over [`STALL_NS`], how many and how long in all, and the
/// longest since [`Stalls::reset_max`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stalls {
    pub count: u64,
    pub total_ns: Nanos,
    pub max_ns: Nanos,
}

impl Stalls {
    /// The loop starts a round at `now`; it was due at `due`.
    pub fn observe(&mut self, now: Nanos, due: Nanos) {
        let late = now.saturating_sub(due);
        if late > STALL_NS {
            self.count += 1;
            self.total_ns += late;
            self.max_ns = self.max_ns.max(late);
        }
    }

    /// The longest stall restarts (at the measurement window's start, as the queues' peaks).
    pub fn reset_max(&mut self) {
        self.max_ns = 0;
    }

    /// The stalls between snapshot `earlier` and this one, over `duration_ns`; the longest
    /// is this snapshot's (since the last `reset_max`).
    pub fn since(&self, earlier: &Stalls, duration_ns: Nanos) -> StallSection {
        let total = self.total_ns.saturating_sub(earlier.total_ns);
        StallSection {
            count: self.count.saturating_sub(earlier.count),
            stalled_s: total as f64 / 1e9,
            max_ms: self.max_ns as f64 / 1e6,
            stalled_fraction: total as f64 / duration_ns.max(1) as f64,
        }
    }
}

/// The stalls over a section of the run, as the report gives them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StallSection {
    /// Rounds the loop started over [`STALL_NS`] late.
    pub count: u64,
    /// Their lateness in all.
    pub stalled_s: f64,
    /// The longest.
    pub max_ms: f64,
    /// `stalled_s` over the section's duration.
    pub stalled_fraction: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lateness_over_the_threshold_counts() {
        let mut s = Stalls::default();
        s.observe(100, 200); // early (a frame woke the loop): not late
        s.observe(STALL_NS, 0); // exactly the threshold: ordinary latency
        s.observe(5_000_000, 1_000_000); // 4 ms late
        s.observe(13_000_000, 10_000_000); // 3 ms late
        assert_eq!(s, Stalls { count: 2, total_ns: 7_000_000, max_ns: 4_000_000 });
    }

    #[test]
    fn a_section_counts_what_happened_in_it_and_its_own_longest() {
        let mut s = Stalls::default();
        s.observe(20_000_000, 0); // before the window: 20 ms
        let start = s;
        s.reset_max();
        s.observe(32_000_000, 30_000_000);
        let w = s.since(&start, 1_000_000_000);
        assert_eq!((w.count, w.max_ms), (1, 2.0));
        assert!((w.stalled_s - 0.002).abs() < 1e-12 && (w.stalled_fraction - 0.002).abs() < 1e-12);
    }
}
