//! Units of time, size, rate and fraction: the one grammar every entry point uses.
//!
//! The hot path works on plain integers whose names carry the unit (`now: Nanos`,
//! `queue_bytes: u64`, `rate_bps: u64`). The configuration types [`Duration`], [`ByteSize`]
//! and [`Rate`] parse the human forms a scenario file, a `--set`, a sweep file or a command
//! line option uses, and convert once, at build time, to those integers. The Python front
//! end parses nothing itself: it hands the text to this module (`ecnlab._core.parse_unit`).
//!
//! The grammar (a number, optional spaces, a unit):
//! - time: `ns`, `us` (also `µs`, `μs`), `ms`, `s`, `min`, `h`;
//! - size: `B`, `KB` (1000 B), `MB`, `GB`, `KiB` (1024 B), `MiB`, `GiB`, and packets `p`
//!   (also `pkt`, `pkts`, `packets`) of the scenario's MTU = `transport.mss` + 40 B, as the
//!   TCN and ECN# papers and ns-3 write buffer sizes and thresholds (`"65p"`);
//! - rate: bits per second with an optional SI prefix: `bps`, `Kbps`, `Mbps`, `Gbps`,
//!   `Tbps`, also written `Gbit`, `Gbit/s`, `Gb/s` or the bare prefix `25G` (tc and switch
//!   vendors write these); anything with a capital `B` is bytes and refused with a hint;
//! - fraction: a number or a percentage (`"10%"` is 0.1).
//!
//! A bare number where a unit belongs is refused (`100` could be ns, us or ms), except `0`,
//! which is zero in any unit. Error messages echo at most [`ECHO_MAX`] characters of the
//! input, whatever its length.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::cell::Cell;
use std::fmt;

/// Simulated or wall-clock time in integer nanoseconds.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_S: Nanos = 1_000_000_000;

/// The longest run (and any time in a scenario): 10^6 s, 11.6 days. Bounds on times keep
/// every `now + delay` far from u64 overflow.
pub const MAX_TIME_NS: Nanos = 1_000_000 * NS_PER_S;

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

/// Inputs are echoed in error messages up to this many characters (a 1 MB bad value must
/// not produce a 1 MB message).
pub const ECHO_MAX: usize = 40;

/// `s` as an error message shows it: in backticks, cut at [`ECHO_MAX`] characters.
pub fn echo(s: &str) -> String {
    match s.char_indices().nth(ECHO_MAX) {
        Some((i, _)) => format!("`{}...` ({} characters)", &s[..i], s.chars().count()),
        None => format!("`{s}`"),
    }
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
    let v: f64 = num.parse().map_err(|_| format!("{} does not start with a number", echo(s)))?;
    if !v.is_finite() {
        return Err(format!("{} is not a finite number", echo(s)));
    }
    Ok((v, unit.trim()))
}

macro_rules! unit_newtype {
    ($name:ident, $doc:literal, $parse:ident, $fmt:ident, $what:literal, $example:literal, $units:ident, $unit_re:ident) => {
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
                        f.write_str(concat!("a ", $what, " with its unit, e.g. \"1", $example, "\""))
                    }
                    // A number arrives without a unit: only 0 means the same in every unit.
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        match v {
                            0 => Ok($name(0)),
                            _ => Err(E::custom(bare(&v.to_string(), $what, $example, $units))),
                        }
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        match u64::try_from(v) {
                            Ok(v) => self.visit_u64(v),
                            Err(_) => Err(E::custom(format!("{v} is negative"))),
                        }
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        match v {
                            0.0 => Ok($name(0)),
                            _ => Err(E::custom(bare(&v.to_string(), $what, $example, $units))),
                        }
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
        /// A string in the grammar above, or the number 0 (the JSON Schema of `ecnlab schema`).
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                unit_schema($what, $example, $units, $unit_re)
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
        return Err(format!("{what} {} is negative", echo(s)));
    }
    if x > u64::MAX as f64 / 2.0 {
        return Err(format!("{what} {} is too large", echo(s)));
    }
    Ok(x.round() as u64)
}

/// The refusal of a bare number (`what`: "time", "size", "rate"; `e.g.`: a correct form).
fn bare(v: &str, what: &str, example: &str, units: &str) -> String {
    format!("{} has no unit: a {what} needs one, e.g. `{v}{example}` ({units})", echo(v))
}

const TIME_UNITS: &str = "ns, us, ms, s, min, h";
const SIZE_UNITS: &str = "B, KB, MB, GB, KiB, MiB, GiB, or packets p";
const RATE_UNITS: &str = "bps, Kbps, Mbps, Gbps, Tbps, or 25G, 100Mbit";

// The units the parsers below accept, as regular expressions (for the JSON Schema; the
// parsers stay the one judge, a test checks both agree on examples).
const TIME_UNIT_RE: &str = "ns|us|µs|μs|ms|s|sec|min|h";
const SIZE_UNIT_RE: &str = "B|[kK]B|MB|GB|KiB|MiB|GiB|p|pkts?|packets";
const RATE_UNIT_RE: &str = "[kKMGT]?(bps|bit|bit/s|b/s)|[kKMGT]";
/// A non-negative number as `split_number` reads it.
const NUMBER_RE: &str = r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?";

/// The JSON Schema of a value with a unit: a string of a number and one of `unit_re`, a
/// string that is zero, or the number 0.
fn unit_schema(what: &str, example: &str, units: &str, unit_re: &str) -> schemars::Schema {
    schemars::json_schema!({
        "description": format!("A {what} with its unit, e.g. \"1{example}\" ({units}); 0 needs none."),
        "anyOf": [
            {
                "type": "string",
                "pattern": format!(r"^\s*\+?({NUMBER_RE}\s*({unit_re})|0+\.?0*|\.0+)\s*$")
            },
            { "type": "number", "const": 0 }
        ]
    })
}

thread_local! {
    /// Bytes of one packet (the scenario's MTU) while a scenario is being read, for sizes
    /// written in packets; `None` outside [`with_packet_size`].
    static PACKET_BYTES: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Run `f` (the deserialization of one scenario) with sizes in packets meaning `mtu` bytes
/// each. The scenario's MTU is only known once `transport.mss` is read, hence this scope
/// instead of a parameter threaded through serde.
pub fn with_packet_size<R>(mtu: u64, f: impl FnOnce() -> R) -> R {
    let prev = PACKET_BYTES.with(|c| c.replace(Some(mtu)));
    let out = f();
    PACKET_BYTES.with(|c| c.set(prev));
    out
}

fn parse_duration(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" if v == 0.0 => 0.0,
        "" => return Err(bare(s.trim(), "time", "us", TIME_UNITS)),
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        u => return Err(format!("unknown time unit {} in {} (use {TIME_UNITS})", echo(u), echo(s))),
    };
    scaled(v, mult, "duration", s)
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let mult = match unit {
        "" if v == 0.0 => 0.0,
        "" => return Err(bare(s.trim(), "size", "KB", SIZE_UNITS)),
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "p" | "pkt" | "pkts" | "packets" => match PACKET_BYTES.with(Cell::get) {
            Some(mtu) => mtu as f64,
            None => return Err(format!("{}: a size in packets needs a scenario (its MTU)", echo(s))),
        },
        u => return Err(format!("unknown size unit {} in {} (use {SIZE_UNITS})", echo(u), echo(s))),
    };
    scaled(v, mult, "size", s)
}

fn parse_rate(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    if unit.is_empty() {
        return if v == 0.0 { Ok(0) } else { Err(bare(s.trim(), "rate", "Gbps", RATE_UNITS)) };
    }
    if unit.contains('B') {
        return Err(format!(
            "{} is bytes per second: rates are in bits (e.g. `{}Gbps`; use {RATE_UNITS})",
            echo(s),
            v * 8.0
        ));
    }
    let (prefix, rest) = match unit.chars().next() {
        Some(c @ ('K' | 'k' | 'M' | 'G' | 'T')) => (c, &unit[1..]),
        _ => (' ', unit),
    };
    let mult = match prefix {
        'K' | 'k' => 1e3,
        'M' => 1e6,
        'G' => 1e9,
        'T' => 1e12,
        _ => 1.0,
    };
    match rest {
        "bps" | "bit" | "bit/s" | "b/s" => {}
        "" if prefix != ' ' => {}
        _ => return Err(format!("unknown rate unit {} in {} (use {RATE_UNITS})", echo(unit), echo(s))),
    }
    scaled(v, mult, "rate", s)
}

/// A fraction from a number or a percentage (`"10%"` is 0.1). The field it fills checks
/// its own range (a load is in (0, 1], a probability in [0, 1]).
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s)?;
    let f = match unit {
        "" => v,
        "%" => v / 100.0,
        u => {
            return Err(format!(
                "unknown unit {} in {} (a fraction is a number in [0, 1] or a percentage)",
                echo(u),
                echo(s)
            ))
        }
    };
    Ok(f)
}

/// `#[serde(deserialize_with = "fraction")]` for an `f64` field that holds a fraction:
/// `0.1` or `"10%"`.
pub fn fraction<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    struct V;
    impl de::Visitor<'_> for V {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a fraction: a number in [0, 1] or a percentage such as \"10%\"")
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            self.visit_f64(v as f64)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            self.visit_f64(v as f64)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
            parse_fraction(v).map_err(E::custom)
        }
    }
    d.deserialize_any(V)
}

/// The JSON Schema of a [`fraction`] field (`#[schemars(schema_with = "fraction_schema")]`).
pub fn fraction_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "A fraction: a number or a percentage such as \"10%\".",
        "anyOf": [
            { "type": "number" },
            { "type": "string", "pattern": format!(r"^\s*[+-]?{NUMBER_RE}\s*%?\s*$") }
        ]
    })
}

/// Parse a value of one unit kind (`"time"` -> ns, `"size"` -> bytes, `"rate"` -> bit/s)
/// for entry points outside a scenario (command-line options, a sweep's `timeout`).
pub fn parse_kind(kind: &str, s: &str) -> Result<u64, String> {
    match kind {
        "time" => parse_duration(s),
        "size" => parse_bytes(s),
        "rate" => parse_rate(s),
        k => Err(format!("unknown unit kind `{k}` (time, size, rate)")),
    }
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
    "A time span in nanoseconds, parsed from `\"256us\"`, `\"10ms\"`, `\"0.5s\"`, `\"1min\"`.",
    parse_duration,
    fmt_duration,
    "time",
    "us",
    TIME_UNITS,
    TIME_UNIT_RE
);
unit_newtype!(
    ByteSize,
    "A size in bytes, parsed from `\"96KB\"` (1000 B), `\"1.5KiB\"` (1024 B), `\"65p\"` (packets of the scenario's MTU).",
    parse_bytes,
    fmt_bytes,
    "size",
    "KB",
    SIZE_UNITS,
    SIZE_UNIT_RE
);
unit_newtype!(
    Rate,
    "A rate in bits per second, parsed from `\"10Gbps\"`, `\"25G\"`, `\"100Mbit\"`.",
    parse_rate,
    fmt_rate,
    "rate",
    "Gbps",
    RATE_UNITS,
    RATE_UNIT_RE
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
        assert_eq!("1e3B".parse::<ByteSize>().unwrap().0, 1000);
        assert!("10 parsecs".parse::<Duration>().is_err());
        assert!("-1ms".parse::<Duration>().is_err());
        assert!("fast".parse::<Rate>().is_err());
    }

    /// What a user types is accepted: the forms of tc, switch vendors and the papers.
    #[test]
    fn accepts_what_a_user_types() {
        for (s, bps) in [
            ("25G", 25e9),
            ("25Gbps", 25e9),
            ("25 Gbps", 25e9),
            ("100Mbit", 100e6),
            ("100Mbit/s", 100e6),
            ("40Gb/s", 40e9),
            ("1.5Tbps", 1.5e12),
            ("9600bps", 9600.0),
            ("10k", 1e4),
        ] {
            assert_eq!(s.parse::<Rate>().unwrap().0, bps as u64, "{s}");
        }
        for (s, ns) in [("78us", 78e3), ("78µs", 78e3), ("78μs", 78e3), ("1min", 60e9), ("2h", 7200e9), ("5 ms", 5e6)]
        {
            assert_eq!(s.parse::<Duration>().unwrap().0, ns as u64, "{s}");
        }
        assert_eq!(parse_fraction("10%").unwrap(), 0.1);
        assert_eq!(parse_fraction("0.25").unwrap(), 0.25);
        assert_eq!(parse_fraction("110%").unwrap(), 1.1); // the field checks its range
        assert!(parse_fraction("10 percent").is_err());
    }

    /// A bare number where a unit belongs is refused, as a string or as a number; 0 is not.
    #[test]
    fn a_bare_number_is_refused() {
        let e = "100".parse::<Duration>().unwrap_err();
        assert!(e.contains("`100` has no unit") && e.contains("`100us`"), "{e}");
        assert!("25".parse::<Rate>().unwrap_err().contains("`25Gbps`"));
        assert!("1500".parse::<ByteSize>().is_err());
        let e = serde_json::from_str::<Duration>("100").unwrap_err().to_string();
        assert!(e.contains("`100` has no unit"), "{e}");
        assert!(serde_json::from_str::<Rate>("2.5").is_err());
        assert_eq!(serde_json::from_str::<Duration>("0").unwrap().0, 0);
        assert_eq!("0".parse::<ByteSize>().unwrap().0, 0);
        // Bytes per second is not a rate here: the hint says how to write it.
        assert!("1GBps".parse::<Rate>().unwrap_err().contains("bytes per second"));
    }

    /// Sizes in packets count the scenario's MTU each, and need a scenario.
    #[test]
    fn sizes_in_packets() {
        assert!("65p".parse::<ByteSize>().unwrap_err().contains("needs a scenario"));
        let b = with_packet_size(1500, || "65p".parse::<ByteSize>().unwrap().0);
        assert_eq!(b, 97_500);
        assert_eq!(with_packet_size(9040, || "2 packets".parse::<ByteSize>().unwrap().0), 18_080);
        assert!("65p".parse::<ByteSize>().is_err(), "the scope ends with the closure");
    }

    /// A huge bad value is echoed cut short.
    #[test]
    fn errors_echo_a_bounded_input() {
        let long = "9".repeat(1_000_000) + "parsecs";
        let e = long.parse::<Duration>().unwrap_err();
        assert!(e.len() < 300, "{} characters", e.len());
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
