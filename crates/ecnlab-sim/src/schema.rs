//! The JSON Schema of a scenario file (`ecnlab schema`, `ecnlab list --keys`), derived from
//! the config structs by `schemars`: their doc comments are the descriptions, their
//! `Default`s the defaults, serde's names and tags the keys a user writes. The unit types
//! write their own (`ecnlab_core::units`: a string in the unit grammar, or 0).
//!
//! Draft 07, the newest draft the TOML editors (Taplo, Even Better TOML) read. Checks that
//! need more than one field stay in `Scenario::validate`; the schema holds what an editor
//! can show while typing.

use crate::tcp::config::{LINUX_ONLY, TEXTBOOK_ONLY};
use crate::tcp::{Profile, TcpConfig};
use crate::Scenario;
use schemars::generate::SchemaSettings;
use serde_json::{json, Value};

/// The schema of a scenario file, as JSON.
pub fn scenario_schema() -> Value {
    let generator = SchemaSettings::draft07().into_generator();
    let mut v = generator.into_root_schema_for::<Scenario>().to_value();
    if let Some(m) = v.as_object_mut() {
        m.insert("title".into(), json!("ecnlab scenario"));
    }
    if let Some(tcp) = v.pointer_mut("/definitions/TcpConfig").and_then(Value::as_object_mut) {
        add_profiles(tcp);
    }
    v
}

/// `[transport]`'s keys depend on `profile`: the keys only one profile reads are refused
/// under the other (`RawTcpConfig::resolve`), and some defaults differ. The schema says both:
/// an `if`/`then`/`else` on `profile`, and per key `x-profile` (the only profile that takes
/// it) and `x-textbook-default` (where `textbook`'s default differs from `default`, which is
/// `linux`'s).
fn add_profiles(tcp: &mut serde_json::Map<String, Value>) {
    let forbid = |keys: &[&str]| {
        let props: serde_json::Map<String, Value> = keys.iter().map(|k| (k.to_string(), json!(false))).collect();
        json!({ "properties": props })
    };
    let textbook = Profile::Textbook.name();
    tcp.insert("if".into(), json!({ "properties": { "profile": { "const": textbook } }, "required": ["profile"] }));
    tcp.insert("then".into(), forbid(&LINUX_ONLY));
    tcp.insert("else".into(), forbid(&TEXTBOOK_ONLY));
    let tb = serde_json::to_value(TcpConfig::textbook()).unwrap_or_default();
    let linux = serde_json::to_value(TcpConfig::for_profile(Profile::Linux)).unwrap_or_default();
    let Some(props) = tcp.get_mut("properties").and_then(Value::as_object_mut) else { return };
    for (k, p) in props.iter_mut() {
        let Some(p) = p.as_object_mut() else { continue };
        if LINUX_ONLY.contains(&k.as_str()) {
            p.insert("x-profile".into(), json!(Profile::Linux.name()));
        } else if TEXTBOOK_ONLY.contains(&k.as_str()) {
            p.insert("x-profile".into(), json!(textbook));
            // `linux` never reads it: the default shown is the one that applies.
            if let Some(d) = tb.get(k) {
                p.insert("default".into(), d.clone());
            }
        } else if let (Some(t), Some(l)) = (tb.get(k), linux.get(k)) {
            if t != l && k != "profile" {
                p.insert("x-textbook-default".into(), t.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_has_every_table_and_the_tags_users_write() {
        let s = scenario_schema();
        let props = s["properties"].as_object().unwrap();
        for k in ["topology", "switch", "marking", "transport", "host", "flows", "traffic", "probes", "rtt_variation"] {
            assert!(props.contains_key(k), "{k}");
        }
        let text = s.to_string();
        for tag in ["\"kind\"", "\"dist\"", "\"leaf_spine\"", "\"poisson\"", "\"ecn_sharp\""] {
            assert!(text.contains(tag), "{tag}");
        }
        assert_eq!(s["definitions"]["TcpConfig"]["properties"]["sack"]["x-profile"], "linux");
        assert_eq!(s["definitions"]["TcpConfig"]["properties"]["rto_min"]["x-textbook-default"], "5ms");
    }
}
