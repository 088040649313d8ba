//! Deterministic random streams.
//!
//! One master seed per run; every component (a marking scheme, a traffic generator, a
//! host) derives its own stream from `(master, stream id)`, so adding a component or
//! reordering events in one place never changes the numbers another component draws.
//! xoshiro256++ (Blackman & Vigna), seeded through SplitMix64 as its authors recommend.

/// SplitMix64 step: used to expand seeds.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mix a master seed and a stream id into one seed.
pub fn derive_seed(master: u64, stream: u64) -> u64 {
    let mut s = master ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
    splitmix64(&mut s);
    splitmix64(&mut s)
}

/// The named random streams of a run: every component that draws random numbers (or a
/// hash key) takes its seed from `(master seed, its stream)`, here and nowhere else. The
/// numbers are those the components used before they were named (results stay
/// bit-identical); ranges of numbered families are 1,000,000 wide, so a family with more
/// members than that would share its next neighbour's seeds (a million connections or
/// links; probes are few).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// The marking scheme of the egress port of simulated link `i` (RED's coin flips).
    PortMarking(u64),
    /// The ECMP hash key of simulated connection `i`.
    ConnEcmp(u64),
    /// The ECMP hash key of probe `i`.
    ProbeEcmp(u64),
    /// The generated flow arrivals of `[[traffic]]` (the simulator's and `ecnlab-workload`'s).
    Traffic,
    /// RTT-variation delays (`[rtt_variation]`).
    RttVariation,
    /// The start jitter of listed flows (`[[flows]] start_jitter`).
    StartJitter,
    /// Within [`Stream::Traffic`]: the streams of `[[traffic]]` entry `i`.
    TrafficEntry(u64),
    /// The marking scheme of port `i` of the emulated switch.
    EmuPortMarking(u64),
}

impl Stream {
    /// The stream's number under its master seed.
    pub fn id(self) -> u64 {
        match self {
            Stream::PortMarking(i) => 1_000_000 + i,
            Stream::ConnEcmp(i) => 2_000_000 + i,
            Stream::ProbeEcmp(i) => 3_000_000 + i,
            Stream::Traffic => 4_000_000,
            Stream::RttVariation => 5_000_000,
            Stream::StartJitter => 6_000_000,
            Stream::TrafficEntry(i) => 0x574C_0000 + i,
            Stream::EmuPortMarking(i) => 0xE3_0000 + i,
        }
    }
    /// The stream's seed: `derive_seed(master, id)`.
    pub fn seed(self, master: u64) -> u64 {
        derive_seed(master, self.id())
    }
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut st = seed;
        let s = [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        Rng { s }
    }

    /// The stream `stream` of the run seeded with `master`.
    pub fn stream(master: u64, stream: u64) -> Self {
        Rng::new(derive_seed(master, stream))
    }

    /// The named stream of the run seeded with `master`.
    pub fn named(master: u64, stream: Stream) -> Self {
        Rng::new(stream.seed(master))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0].wrapping_add(self.s[3]).rotate_left(23).wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        // 1 - f64() lies in (0, 1], so ln never sees 0.
        -mean * (1.0 - self.f64()).ln()
    }

    /// True with probability p.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(1, 7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::stream(1, 7).next_u64(), Rng::stream(1, 8).next_u64());
        assert_ne!(Rng::stream(1, 7).next_u64(), Rng::stream(2, 7).next_u64());
    }

    /// Named streams keep the numbers they had when they were numbered by hand: renaming
    /// must not change a result.
    #[test]
    fn named_streams_keep_their_numbers() {
        assert_eq!(Stream::PortMarking(7).seed(3), derive_seed(3, 1_000_007));
        assert_eq!(Stream::ConnEcmp(5).seed(3), derive_seed(3, 2_000_005));
        assert_eq!(Stream::ProbeEcmp(2).seed(3), derive_seed(3, 3_000_002));
        assert_eq!(Stream::Traffic.seed(3), derive_seed(3, 4_000_000));
        assert_eq!(Rng::named(3, Stream::RttVariation).next_u64(), Rng::stream(3, 5_000_000).next_u64());
        assert_eq!(Rng::named(3, Stream::StartJitter).next_u64(), Rng::stream(3, 6_000_000).next_u64());
        assert_eq!(Stream::TrafficEntry(1).seed(3), derive_seed(3, 0x574C_0001));
        assert_eq!(Stream::EmuPortMarking(4).seed(3), derive_seed(3, 0xE3_0004));
    }

    #[test]
    fn uniform_mean_and_exp_mean() {
        let mut r = Rng::new(42);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.f64()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.005, "{m}");
        let e: f64 = (0..n).map(|_| r.exp(3.0)).sum::<f64>() / n as f64;
        assert!((e - 3.0).abs() < 0.05, "{e}");
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
