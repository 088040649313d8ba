//! Units of time, size and rate.
//!
//! The hot path works on plain integers whose names carry the unit (`now: Nanos`,
//! `queue_bytes: u64`, `rate_bps: u64`). The configuration types [`Duration`], [`ByteSize`]
//! and [`Rate`] parse the human forms a scenario file uses (`"256us"`, `"96KB"`,
//! `"10Gbps"`) and convert once, at build time, to those integers.
//!
//! Conventions: 1 KB = 1000 B and 1 KiB = 1024 B; a bare number is nanoseconds, bytes or
//! bits per second.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Simulated or wall-clock time in integer nanoseconds.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_S: Nanos = 1_000_000_000;

/// Time to serialize `bytes` on a link of `rate_bps`, rounded up to a whole nanosecond so
/// that back-to-back packets never overlap. Saturates at `Nanos::MAX` (beyond 584 years,
/// e.g. 4 GB at 1 bps) instead of wrapping.
#[inline]
pub fn tx_time_ns(bytes: u64, rate_bps: u64) -> Nanos {
    debug_assert!(rate_bps > 0);
    // Every packet (< 2.3 GB) takes the 64-bit path: a hardware division, where the u128
    // one is a library call, on every packet-hop. Same result.
    if let Some(bits) = bytes.checked_mul(8 * NS_PER_S) {
        return bits.div_ceil(rate_bps);
    }
    let bits = bytes as u128 * 8 * NS_PER_S as u128;
    bits.div_ceil(rate_bps as u128).min(Nanos::MAX as u128) as Nanos
}

/// Bytes a link of `rate_bps` carries in `ns` (rounded down, saturating at `u64::MAX`).
#[inline]
pub fn bytes_in(ns: Nanos, rate_bps: u64) -> u64 {
    (ns as u128 * rate_bps as u128 / (8 * NS_PER_S as u128)).min(u64::MAX as u128) as u64
}

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
        .unwrap_or(s.len());
    // "e" may also start a unit; only treat it as an exponent if digits follow.
    let (mut num, mut unit) = s.split_at(end);
    if let Some(pos) = num.find(['e', 'E']) {
        if !num[pos + 1..].chars().next().is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '+') {
            unit = &s[pos..];
            num = &s[..pos];
        }
    }
    let v: f64 = num.parse().map_err(|_| format!("`{s}` does not start with a number"))?;
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite number"));
    }
    Ok((v, unit.trim()))
}

macro_rules! unit_newtype {
    ($name:ident, $doc:literal, $parse:ident, $fmt:ident) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u64);

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $parse(s).map($name)
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " as a number or a string with a unit"))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Ok($name(v))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        u64::try_from(v).map($name).map_err(|_| E::custom(format!("{v} is negative")))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        if v < 0.0 || !v.is_finite() {
                            return Err(E::custom(format!("{v} is not a non-negative number")));
                        }
                        Ok($name(v.round() as u64))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$fmt(self.0))
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(&$fmt(self.0))
            }
        }
    };
}

fn scaled(v: f64, mult: f64, what: &str, s: &str) -> Result<u64, String> {
    let x = v * mult;
    if x < 0.0 {
        return Err(format!("{what} `{s}` is negative"));
    }
    if x > u64::MAX as f64 / 2.0 {
        return Err(format!("{what} `{s}` is too large"));
    }
    Ok(x.round() as u64)
}

fn parse_duration(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        u => return Err(format!("unknown time unit `{u}` in `{s}` (use ns, us, ms or s)")),
    };
    scaled(v, mult, "duration", s)
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        u => return Err(format!("unknown size unit `{u}` in `{s}` (use B, KB, MB, GB, KiB, MiB, GiB)")),
    };
    scaled(v, mult, "size", s)
}

fn parse_rate(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" | "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        u => return Err(format!("unknown rate unit `{u}` in `{s}` (use bps, Kbps, Mbps, Gbps)")),
    };
    scaled(v, mult, "rate", s)
}

fn fmt_duration(ns: u64) -> String {
    if ns != 0 && ns.is_multiple_of(NS_PER_S) {
        format!("{}s", ns / NS_PER_S)
    } else if ns != 0 && ns.is_multiple_of(NS_PER_MS) {
        format!("{}ms", ns / NS_PER_MS)
    } else if ns != 0 && ns.is_multiple_of(NS_PER_US) {
        format!("{}us", ns / NS_PER_US)
    } else {
        format!("{ns}ns")
    }
}
fn fmt_bytes(b: u64) -> String {
    if b != 0 && b.is_multiple_of(1_000_000) {
        format!("{}MB", b / 1_000_000)
    } else if b != 0 && b.is_multiple_of(1000) {
        format!("{}KB", b / 1000)
    } else {
        format!("{b}B")
    }
}
fn fmt_rate(r: u64) -> String {
    if r != 0 && r.is_multiple_of(1_000_000_000) {
        format!("{}Gbps", r / 1_000_000_000)
    } else if r != 0 && r.is_multiple_of(1_000_000) {
        format!("{}Mbps", r / 1_000_000)
    } else {
        format!("{r}bps")
    }
}

unit_newtype!(
    Duration,
    "A time span in nanoseconds, parsed from `\"256us\"`, `\"10ms\"`, `\"0.5s\"` or a bare number of ns.",
    parse_duration,
    fmt_duration
);
unit_newtype!(
    ByteSize,
    "A size in bytes, parsed from `\"96KB\"` (1000 B), `\"1.5KiB\"` (1024 B) or a bare number.",
    parse_bytes,
    fmt_bytes
);
unit_newtype!(
    Rate,
    "A rate in bits per second, parsed from `\"10Gbps\"`, `\"500Mbps\"` or a bare number.",
    parse_rate,
    fmt_rate
);

impl Duration {
    pub const fn from_us(us: u64) -> Self {
        Duration(us * NS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Self {
        Duration(ms * NS_PER_MS)
    }
    pub fn ns(self) -> Nanos {
        self.0
    }
}
impl ByteSize {
    pub fn bytes(self) -> u64 {
        self.0
    }
}
impl Rate {
    pub const fn gbps(g: u64) -> Self {
        Rate(g * 1_000_000_000)
    }
    pub const fn mbps(m: u64) -> Self {
        Rate(m * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The 64-bit path of `tx_time_ns` agrees with the exact 128-bit formula.
        #[test]
        fn tx_time_fast_path_is_exact(bytes in prop_oneof![0u64..100_000, 0u64..u64::MAX], rate in 1u64..1_000_000_000_000) {
            let exact = (bytes as u128 * 8 * NS_PER_S as u128).div_ceil(rate as u128).min(Nanos::MAX as u128) as Nanos;
            prop_assert_eq!(tx_time_ns(bytes, rate), exact);
        }
    }

    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!("256us".parse::<Duration>().unwrap().0, 256_000);
        assert_eq!("0.5s".parse::<Duration>().unwrap().0, 500_000_000);
        assert_eq!("96KB".parse::<ByteSize>().unwrap().0, 96_000);
        assert_eq!("1.5KiB".parse::<ByteSize>().unwrap().0, 1536);
        assert_eq!("10Gbps".parse::<Rate>().unwrap().0, 10_000_000_000);
        assert_eq!("1e3".parse::<ByteSize>().unwrap().0, 1000);
        assert!("10 parsecs".parse::<Duration>().is_err());
        assert!("-1ms".parse::<Duration>().is_err());
        assert!("fast".parse::<Rate>().is_err());
    }

    #[test]
    fn serialization_time_rounds_up() {
        assert_eq!(tx_time_ns(1500, 10_000_000_000), 1200);
        assert_eq!(tx_time_ns(1500, 1_000_000_000), 12_000);
        assert_eq!(tx_time_ns(1, 3_000_000_000), 3); // 2.67 ns -> 3
        assert_eq!(bytes_in(1200, 10_000_000_000), 1500);
    }

    #[test]
    fn display_round_trips() {
        for s in ["256us", "10ms", "2s", "96KB", "10Gbps", "500Mbps", "7ns", "1234B"] {
            let d = s.parse::<Duration>().map(|d| d.to_string());
            let b = s.parse::<ByteSize>().map(|d| d.to_string());
            let r = s.parse::<Rate>().map(|d| d.to_string());
            assert!(d.as_deref() == Ok(s) || b.as_deref() == Ok(s) || r.as_deref() == Ok(s), "{s}");
        }
    }
}
