//! The `linux` profile's RTT estimate and RTO: net/ipv4/tcp_input.c `tcp_rtt_estimator` and
//! `__tcp_set_rto`, line by line, in microseconds (RFC 6298 §2 with Linux's per-round
//! `mdev_max`, so that RTO - srtt never falls below `rto_min`).
//!
//! The estimate exists from the first sample on: a sender holds an `Option<RttEstimator>`
//! (the kernel's `srtt_us == 0` before it).

/// `tcp_rtt_estimator`'s state after at least one sample, microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    /// Smoothed RTT << 3 (`srtt_us`), at least 1.
    pub srtt_us: u64,
    /// Mean deviation << 2 (`mdev_us`), its maximum over the current round (`mdev_max_us`),
    /// and the variance used by the RTO (`rttvar_us`).
    pub mdev_us: u64,
    pub mdev_max_us: u64,
    pub rttvar_us: u64,
    /// `rtt_seq`: the round ends when `snd_una` passes it.
    pub rtt_seq: u64,
}

impl RttEstimator {
    /// The first sample `m` (µs): srtt = m, mdev = m/2, so RTO = 3 RTT (or srtt + rto_min).
    pub fn first(m_us: u64, snd_nxt: u64, rto_min_us: u64) -> Self {
        let m = m_us.max(1);
        let mdev_us = m << 1;
        let rttvar_us = mdev_us.max(rto_min_us);
        RttEstimator { srtt_us: (m << 3).max(1), mdev_us, mdev_max_us: rttvar_us, rttvar_us, rtt_seq: snd_nxt }
    }

    /// One RTT sample `m` (µs) into the estimate so far (`None` before the first), on an ACK
    /// that leaves `snd_una`; `snd_nxt` starts the next round; `rto_min_us` is
    /// `tcp_rto_min_us`.
    pub fn update(est: &mut Option<Self>, m_us: u64, snd_una: u64, snd_nxt: u64, rto_min_us: u64) {
        match est {
            Some(e) => e.sample(m_us, snd_una, snd_nxt, rto_min_us),
            None => *est = Some(Self::first(m_us, snd_nxt, rto_min_us)),
        }
    }

    /// A later sample, line by line `tcp_rtt_estimator`.
    fn sample(&mut self, m_us: u64, snd_una: u64, snd_nxt: u64, rto_min_us: u64) {
        let mut m = m_us.max(1) as i64 - (self.srtt_us >> 3) as i64; // error in the estimate
        let srtt = self.srtt_us as i64 + m; // srtt = 7/8 srtt + 1/8 new
        let mdev = self.mdev_us as i64;
        if m < 0 {
            // RTT fell: a smaller gain (1/32) on mdev, so the RTO does not grow when the
            // RTT drops (the kernel's comment: "similar to one of Eifel findings").
            m = -m - (mdev >> 2);
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= mdev >> 2;
        }
        self.mdev_us = (mdev + m) as u64; // mdev = 3/4 mdev + 1/4 new
        if self.mdev_us > self.mdev_max_us {
            self.mdev_max_us = self.mdev_us;
            if self.mdev_max_us > self.rttvar_us {
                self.rttvar_us = self.mdev_max_us;
            }
        }
        if snd_una > self.rtt_seq {
            // Once per round: rttvar decays towards the round's largest mdev, which restarts
            // at rto_min (so rttvar, and RTO - srtt, never go below rto_min).
            if self.mdev_max_us < self.rttvar_us {
                self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max_us = rto_min_us;
        }
        self.srtt_us = (srtt as u64).max(1);
    }

    /// Smoothed RTT, microseconds.
    pub fn srtt(&self) -> u64 {
        self.srtt_us >> 3
    }

    /// `__tcp_set_rto`: srtt + rttvar, µs.
    pub fn rto_us(&self) -> u64 {
        (self.srtt_us >> 3) + self.rttvar_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tcp_rtt_estimator by hand: the values below are the kernel's arithmetic worked
    /// through on paper (µs; srtt kept << 3, mdev << 2).
    #[test]
    fn the_rto_follows_tcp_rtt_estimator() {
        let sample = |e: &mut Option<RttEstimator>, m, una, nxt, min| RttEstimator::update(e, m, una, nxt, min);
        // rto_min 100 us. First sample 100 us: srtt = 800 (100 << 3), mdev = 200,
        // rttvar = max(mdev, rto_min) = 200: RTO = 100 + 200 = 3 RTT.
        let mut e = None;
        sample(&mut e, 100, 0, 10, 100);
        let v = |e: &Option<RttEstimator>| e.as_ref().map(|e| (e.srtt_us, e.mdev_us, e.rttvar_us, e.rto_us())).unwrap();
        assert_eq!(v(&e), (800, 200, 200, 300));
        // 500 us in a new round: error 400, srtt 1200, mdev = 200 + (400 - 50) = 550 raises
        // mdev_max and rttvar to 550; the round ends (mdev_max back to rto_min): RTO 150 + 550.
        sample(&mut e, 500, 20, 30, 100);
        assert_eq!(v(&e), (1200, 550, 550, 700));
        // 150 us: error 0, mdev = 550 - 137 = 413 (= the round's max); at the round's end
        // rttvar decays by (550 - 413) >> 2 = 34 to 516: RTO 150 + 516.
        sample(&mut e, 150, 40, 50, 100);
        assert_eq!(v(&e), (1200, 413, 516, 666));
        // A falling RTT moves mdev with gain 1/32 ("Eifel"): 60 us after srtt 150:
        // m = -90, |m| - mdev/4 = 90 - 103 < 0, kept as is: mdev = 413 - 13 = 400.
        sample(&mut e, 60, 45, 50, 100);
        assert_eq!(v(&e).0, 1110);
        assert_eq!(v(&e).1, 400);
        // Linux's default rto_min 200 ms dominates a datacenter RTT: RTO = srtt + 200 ms.
        let mut e = None;
        sample(&mut e, 100, 0, 10, 200_000);
        sample(&mut e, 300, 20, 30, 200_000);
        assert_eq!(e.unwrap().rto_us(), 125 + 200_000);
    }
}
