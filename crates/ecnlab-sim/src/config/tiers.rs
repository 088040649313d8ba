//! `[tiers.<tier>]`: the switches of one tier set apart (a ToR and a spine are different
//! chips): their egress ports' `switch` keys (buffer, pool, queues, scheduler, ...) and their
//! `marking`. Each key a tier leaves out is `[switch]`'s or `[marking]`'s, so that
//! `--set tiers.spine.switch.buffer=4MB` changes that and nothing else; without `[tiers]`
//! every switch is `[switch]` with `[marking]`, as before tiers existed.
//!
//! The inheritance is done on the document, before it is typed ([`inherit_toml`],
//! [`inherit_json`]): the typed tier is then a whole `PortConfig` and `MarkingConfig`, and
//! an error in a tier's key names it (`tiers.spine.switch.buffer`). A topology's tiers:
//! `tor` (star, dumbbell), `leaf`/`spine` (leaf-spine), `edge`/`aggregation`/`core`
//! (fat-tree), `leaf`/`spine`/`super_spine` (Clos), the file's own names (topology files).
//! PFC is fabric-wide: a tier's `switch.pfc` must be `[switch.pfc]`.

use ecnlab_core::port::PortConfig;
use ecnlab_core::MarkingConfig;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The settings of one tier's switches.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    /// This tier's egress ports: the keys of `[switch]`; each key left out is `[switch]`'s.
    #[serde(default)]
    pub switch: PortConfig,
    /// This tier's marking: the keys of `[marking]`; each key left out is `[marking]`'s.
    #[serde(default)]
    pub marking: MarkingConfig,
}

/// The tables a tier inherits.
const INHERITED: [&str; 2] = ["switch", "marking"];

/// A TOML scenario whose tiers' tables hold every key of `[switch]` and `[marking]` they do
/// not give themselves (the text unchanged without `[tiers]`, or when it does not parse:
/// the parser then says why).
pub fn inherit_toml(text: &str) -> Cow<'_, str> {
    let Ok(mut doc) = text.parse::<toml::Table>() else { return Cow::Borrowed(text) };
    let Some(toml::Value::Table(tiers)) = doc.get("tiers").cloned() else { return Cow::Borrowed(text) };
    let mut tiers = tiers;
    for (_, tier) in tiers.iter_mut() {
        let toml::Value::Table(tier) = tier else { continue };
        for name in INHERITED {
            let Some(toml::Value::Table(base)) = doc.get(name) else { continue };
            let own = tier.entry(name).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(own) = own {
                merge_toml(own, base);
            }
        }
    }
    doc.insert("tiers".into(), toml::Value::Table(tiers));
    toml::to_string(&doc).map_or(Cow::Borrowed(text), Cow::Owned)
}

fn merge_toml(own: &mut toml::Table, base: &toml::Table) {
    for (k, v) in base {
        match (own.get_mut(k), v) {
            (Some(toml::Value::Table(o)), toml::Value::Table(b)) => merge_toml(o, b),
            (Some(_), _) => {}
            (None, v) => {
                own.insert(k.clone(), v.clone());
            }
        }
    }
}

/// [`inherit_toml`] for a JSON scenario.
pub fn inherit_json(text: &str) -> Cow<'_, str> {
    use serde_json::Value;
    let Ok(Value::Object(mut doc)) = serde_json::from_str::<Value>(text) else { return Cow::Borrowed(text) };
    let Some(Value::Object(mut tiers)) = doc.get("tiers").cloned() else { return Cow::Borrowed(text) };
    for (_, tier) in tiers.iter_mut() {
        let Value::Object(tier) = tier else { continue };
        for name in INHERITED {
            let Some(Value::Object(base)) = doc.get(name) else { continue };
            let own = tier.entry(name).or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(own) = own {
                merge_json(own, base);
            }
        }
    }
    doc.insert("tiers".into(), Value::Object(tiers));
    serde_json::to_string(&doc).map_or(Cow::Borrowed(text), Cow::Owned)
}

fn merge_json(own: &mut serde_json::Map<String, serde_json::Value>, base: &serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    for (k, v) in base {
        match (own.get_mut(k), v) {
            (Some(Value::Object(o)), Value::Object(b)) => merge_json(o, b),
            (Some(_), _) => {}
            (None, v) => {
                own.insert(k.clone(), v.clone());
            }
        }
    }
}
