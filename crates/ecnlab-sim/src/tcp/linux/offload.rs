//! The `linux` hosts' NIC offloads as `[host]` writes them: `tso` (segmentation offload: the
//! largest skb a sender hands its NIC, or `"off"`), `gro` and `rx_coalesce` (Generic Receive
//! Offload and the NAPI poll's interrupt coalescing), with the defaults a stock Linux host
//! has, resolved here once ([`Offloads::resolve`]). The `textbook` hosts have none.
//!
//! Defaults: TSO on with `sk_gso_max_size` = 64 KiB (`GSO_MAX_SIZE`, what `ethtool -K tso on`
//! gives every common NIC driver; BIG TCP's larger sizes are opt-in), GRO on (every driver's
//! default), `rx-usecs` = 8 us (mlx5's default; other drivers differ, and datacenter
//! operators tune it).

use ecnlab_core::units::{ByteSize, Duration, Nanos};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `GSO_MAX_SIZE`: the default largest TSO skb.
pub const GSO_MAX_SIZE: u64 = 65536;
/// `ethtool -C rx-usecs` of the default: mlx5's.
pub const RX_COALESCE_NS: Nanos = 8_000;

/// `host.tso`: a size (the largest skb), or off (`"off"` or `false`: one MSS per skb).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tso {
    Off,
    Size(ByteSize),
}

impl<'de> Deserialize<'de> for Tso {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Text(String),
            Number(f64),
        }
        match Raw::deserialize(d)? {
            Raw::Flag(false) => Ok(Tso::Off),
            Raw::Flag(true) => Ok(Tso::Size(ByteSize(GSO_MAX_SIZE))),
            Raw::Text(t) if t.trim() == "off" => Ok(Tso::Off),
            Raw::Text(t) => t.parse::<ByteSize>().map(Tso::Size).map_err(serde::de::Error::custom),
            Raw::Number(n) => Err(serde::de::Error::custom(format!(
                "{n} has no unit: write the largest skb with its unit (\"64KiB\") or \"off\""
            ))),
        }
    }
}

impl Serialize for Tso {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tso::Off => s.serialize_str("off"),
            Tso::Size(b) => b.serialize(s),
        }
    }
}

impl schemars::JsonSchema for Tso {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Tso".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let size = g.subschema_for::<ByteSize>();
        schemars::json_schema!({
            "description": "The largest skb a sender hands its NIC, e.g. \"64KiB\", or \"off\" (one MSS).",
            "anyOf": [{ "const": "off" }, { "type": "boolean" }, size]
        })
    }
}

/// The offloads a `linux` host's TCP runs with, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offloads {
    /// `sk_gso_max_size`, None: TSO off.
    pub gso_max: Option<u64>,
    /// GRO's NAPI poll delay after a batch's first packet, None: GRO off.
    pub gro_poll: Option<Nanos>,
}

impl Offloads {
    /// None: the textbook hosts, which have no offloads.
    pub const NONE: Offloads = Offloads { gso_max: None, gro_poll: None };

    /// The `[host]` keys over a stock Linux host's defaults.
    pub fn resolve(tso: Option<Tso>, gro: Option<bool>, rx_coalesce: Option<Duration>) -> Offloads {
        let gso_max = match tso.unwrap_or(Tso::Size(ByteSize(GSO_MAX_SIZE))) {
            Tso::Off => None,
            Tso::Size(b) => Some(b.0),
        };
        let coalesce = rx_coalesce.map_or(RX_COALESCE_NS, |d| d.0);
        Offloads { gso_max, gro_poll: gro.unwrap_or(true).then_some(coalesce) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Serialize)]
    struct T {
        tso: Tso,
    }

    #[test]
    fn tso_is_a_size_or_off() {
        let t = |s: &str| toml::from_str::<T>(&format!("tso = {s}")).map(|t| t.tso);
        assert_eq!(t("\"64KiB\"").unwrap(), Tso::Size(ByteSize(65536)));
        assert_eq!(t("\"off\"").unwrap(), Tso::Off);
        assert_eq!(t("false").unwrap(), Tso::Off);
        assert_eq!(t("true").unwrap(), Tso::Size(ByteSize(GSO_MAX_SIZE)));
        assert!(t("65536").unwrap_err().to_string().contains("no unit"));
        assert!(t("\"64 kilobytes\"").is_err());
        assert_eq!(toml::to_string(&T { tso: Tso::Off }).unwrap().trim(), "tso = \"off\"");
        let d = Offloads::resolve(None, None, None);
        assert_eq!(d, Offloads { gso_max: Some(65536), gro_poll: Some(8_000) });
        let off = Offloads::resolve(Some(Tso::Off), Some(false), Some(Duration(1)));
        assert_eq!(off, Offloads::NONE);
    }
}
