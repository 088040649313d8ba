//! Scenario deserialization helpers: error messages that name the field path, and a
//! did-you-mean for misspelt keys and names.
//!
//! serde's derived *internally tagged* enums (`kind = "star"` next to the variant's fields)
//! buffer the table before choosing the variant, so `serde_path_to_error` loses the path
//! inside them: a bad `topology.link_rate` would be reported as `topology: ...`. The enums
//! that take a tag (`topology.kind`, `traffic[i].kind`, `rtt_variation.delay.dist`) are
//! therefore declared with `#[serde(remote = "Self")]` (serde derives the externally tagged
//! form as inherent functions) and [`internally_tagged!`] implements the traits by reshaping
//! `{kind = "star", ...}` into `{star = {...}}` and deserializing that with the path tracked.
//! The nested path travels inside the error message behind [`MARK`] and
//! [`join_error`] splices it onto the outer path.

use serde_json::{Map, Value};
use serde_path_to_error::{Path, Segment};

/// Separates a nested field path from its message inside an error string.
pub const MARK: char = '\u{1F}';

/// `{tag = "v", rest...}` -> `{v = {rest...}}`.
pub fn externalize(v: Value, tag: &str) -> Result<Value, String> {
    let Value::Object(mut map) = v else {
        return Err(format!("invalid type: {}, expected a table with `{tag}`", kind_of(&v)));
    };
    let variant = match map.remove(tag) {
        Some(Value::String(s)) => s,
        Some(other) => return Err(format!("{MARK}{tag}{MARK}invalid type: {}, expected a string", kind_of(&other))),
        None => return Err(format!("missing field `{tag}`")),
    };
    let mut out = Map::new();
    out.insert(variant, Value::Object(map));
    Ok(Value::Object(out))
}

/// `{v = {rest...}}` -> `{tag = "v", rest...}` (serializing). Unit variants stay strings.
pub fn internalize(v: Value, tag: &str) -> Value {
    match v {
        Value::Object(map) if map.len() == 1 => {
            let (variant, inner) = map.into_iter().next().expect("one entry");
            let mut out = Map::new();
            out.insert(tag.to_string(), Value::String(variant));
            if let Value::Object(fields) = inner {
                out.extend(fields);
            }
            Value::Object(out)
        }
        Value::String(variant) => {
            let mut out = Map::new();
            out.insert(tag.to_string(), Value::String(variant));
            Value::Object(out)
        }
        other => other,
    }
}

/// The first place where the document gives an array for a table: serde's derived structs
/// also read a sequence, field by field in order, so `marking = ["red"]` ran RED and
/// `flows = [[0, 1]]` a flow from host 0 to 1, with no word. `read` is the document as
/// given, `canonical` the scenario parsed from it and serialized back (every table an
/// object); `Err("path: ...")` names the first such place.
pub fn refuse_tables_as_arrays(read: &Value, canonical: &Value, path: &str) -> Result<(), String> {
    let at = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
    match (read, canonical) {
        (Value::Array(_), Value::Object(_)) => Err(format!("{path}: invalid type: an array, expected a table")),
        (Value::Object(r), Value::Object(c)) => r
            .iter()
            .filter_map(|(k, v)| c.get(k).map(|cv| (k, v, cv)))
            .try_for_each(|(k, v, cv)| refuse_tables_as_arrays(v, cv, &at(k))),
        (Value::Array(r), Value::Array(c)) => r
            .iter()
            .zip(c)
            .enumerate()
            .try_for_each(|(i, (v, cv))| refuse_tables_as_arrays(v, cv, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

/// The user's view of a path: `traffic[0].load`. Enum variant segments are skipped (the user
/// wrote `kind = "poisson"`, not a `poisson` table).
pub fn path_string(path: &Path) -> String {
    let mut s = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => s.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(key);
            }
            Segment::Enum { .. } => {}
            Segment::Unknown => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push('?');
            }
        }
    }
    s
}

/// Error of a nested (tag-dispatched) deserialization: `MARK path MARK message`, or the bare
/// message when the error is at the table itself. A variant name that is not known is an
/// error of the tag field.
pub fn nested_error(path: &Path, msg: String, tag: &str) -> String {
    let mut p = path_string(path);
    if p.is_empty() && msg.starts_with("unknown variant") {
        p = tag.to_string();
    }
    let (p, msg) = split_nested(&p, &msg);
    if p.is_empty() {
        msg
    } else {
        format!("{MARK}{p}{MARK}{msg}")
    }
}

/// Splice a message that may carry a nested path onto `outer`.
fn split_nested(outer: &str, msg: &str) -> (String, String) {
    if let Some(rest) = msg.strip_prefix(MARK) {
        if let Some((inner, m)) = rest.split_once(MARK) {
            let (inner, m) = split_nested(inner, m);
            return (join_path(outer, &inner), m);
        }
    }
    (outer.to_string(), msg.to_string())
}

fn join_path(outer: &str, inner: &str) -> String {
    match (outer.is_empty() || outer == ".", inner.is_empty()) {
        (true, _) => inner.to_string(),
        (false, true) => outer.to_string(),
        (false, false) if inner.starts_with('[') => format!("{outer}{inner}"),
        (false, false) => format!("{outer}.{inner}"),
    }
}

/// Keys that moved, old path -> new path: refused with the new one named.
pub const MOVED_KEYS: &[(&str, &str)] = &[
    // MQ-ECN's round-time estimator belongs to the scheme (issue 21).
    ("switch.scheduler.round_beta", "marking.mq_ecn.round_beta"),
    ("switch.scheduler.round_idle_slot", "marking.mq_ecn.round_idle_slot"),
    ("switch.scheduler.round_variant", "marking.mq_ecn.round_variant"),
];

/// The final one-line error: `field.path: message`, with a did-you-mean where serde listed
/// the accepted names.
pub fn join_error(outer: &Path, msg: &str) -> String {
    let (p, m) = split_nested(&path_string(outer), msg);
    if m.starts_with("unknown field `") {
        if let Some((_, new)) = MOVED_KEYS.iter().find(|(old, _)| *old == p) {
            return format!("{p}: moved to `{new}`");
        }
    }
    let m = plain_types(&did_you_mean(&m));
    if p.is_empty() {
        m
    } else {
        format!("{p}: {m}")
    }
}

/// serde says "unknown field `buffr`, expected one of `queues`, `buffer`, ..." (or
/// "unknown variant"). When one accepted name is close, say only that one; else keep the list.
pub fn did_you_mean(msg: &str) -> String {
    let Some(what) = ["unknown field `", "unknown variant `"].iter().find(|p| msg.starts_with(**p)) else {
        return msg.to_string();
    };
    let names: Vec<&str> = msg.split('`').skip(1).step_by(2).collect();
    let Some((given, accepted)) = names.split_first() else {
        return msg.to_string();
    };
    let best =
        accepted.iter().map(|a| (edit_distance(&given.to_lowercase(), &a.to_lowercase()), *a)).min_by_key(|(d, _)| *d);
    match best {
        Some((d, a)) if d <= (given.len().max(a.len()) / 3).max(1) || a.contains(*given) && given.len() >= 3 => {
            format!("{what}{given}` (did you mean `{a}`?)")
        }
        _ => msg.to_string(),
    }
}

/// serde's type errors in the words of a TOML file: "invalid type: floating point `0.5`,
/// expected a sequence" is "invalid type: a number (0.5), expected an array: write [0.5]";
/// `u64` is "a whole number", `struct Switch` or `a map` "a table".
pub fn plain_types(msg: &str) -> String {
    let Some((head, rest)) = msg.split_once("invalid type: ") else {
        return msg.to_string();
    };
    let Some((got, expected)) = rest.split_once(", expected ") else {
        return msg.to_string();
    };
    let quoted = |s: &str| s.split('`').nth(1).map(str::to_string);
    let (what, value) = if let Some(v) = got.strip_prefix("floating point ").or(got.strip_prefix("integer ")) {
        ("a number", quoted(v))
    } else if let Some(v) = got.strip_prefix("boolean ") {
        ("a boolean", quoted(v))
    } else if let Some(v) = got.strip_prefix("string ") {
        ("a string", Some(v.to_string()))
    } else {
        match got {
            "sequence" => ("an array", None),
            "map" => ("a table", None),
            _ => return msg.to_string(),
        }
    };
    let wanted = match expected {
        "a sequence" => "an array",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number",
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a map" => "a table",
        e if e.starts_with("struct ") => "a table",
        e => e,
    };
    let shown = value.as_deref().map_or(String::new(), |v| format!(" ({v})"));
    let hint = match (&value, wanted) {
        (Some(v), "an array") => format!(": write [{v}]"),
        _ => String::new(),
    };
    format!("{head}invalid type: {what}{shown}, expected {wanted}{hint}")
}

/// serde_json's whole message for a name (a unit enum such as `transport.kernel`) given as
/// anything but a string is "expected value"; `read` is the document, `path` the field's.
pub fn plain_name_error(read: &Value, path: &Path) -> Option<String> {
    let mut v = read;
    for seg in path.iter() {
        v = match seg {
            Segment::Map { key } => v.get(key)?,
            Segment::Seq { index } => v.get(index)?,
            Segment::Enum { .. } => v,
            Segment::Unknown => return None,
        };
    }
    let what = kind_of(v);
    Some(match v {
        Value::Number(_) | Value::Bool(_) => {
            format!("{v} is {what}, where a name is expected: write it in quotes, \"{v}\"")
        }
        _ => format!("{what}, where a name is expected"),
    })
}

/// Edit distance with adjacent transpositions (optimal string alignment): `szie` is one
/// edit from `size`. Names are short, so the O(n m) table is fine.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j - 1] + cost).min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Implement `Deserialize` and `Serialize` in the internally tagged form for an enum whose
/// derives carry `#[serde(remote = "Self")]` (see the module docs).
macro_rules! internally_tagged {
    ($ty:ty, $tag:literal) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::Error;
                let v = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                let ext = $crate::de::externalize(v, $tag).map_err(D::Error::custom)?;
                let mut track = serde_path_to_error::Track::new();
                match <$ty>::deserialize(serde_path_to_error::Deserializer::new(ext, &mut track)) {
                    Ok(x) => Ok(x),
                    Err(e) => Err(D::Error::custom($crate::de::nested_error(&track.path(), e.to_string(), $tag))),
                }
            }
        }
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::Error;
                let v = <$ty>::serialize(self, serde_json::value::Serializer).map_err(S::Error::custom)?;
                serde::Serialize::serialize(&$crate::de::internalize(v, $tag), s)
            }
        }
    };
}
pub(crate) use internally_tagged;

#[cfg(test)]
mod tests {
    use super::*;

    /// serde's structs read a sequence field by field: an array where a table belongs ran
    /// as if the table had been given, in TOML and in JSON.
    #[test]
    fn an_array_is_not_a_table() {
        let base = "name = \"a\"\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 2\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";
        for (doc, path) in [
            (format!("marking = [\"red\"]\n{base}"), "marking"),
            (format!("flows = [[0, 1]]\n{base}"), "flows[0]"),
            (format!("marking = []\n{base}"), "marking"),
            (format!("{base}[switch]\nscheduler = [\"sp\"]\n"), "switch.scheduler"),
        ] {
            let want = format!("{path}: invalid type: an array, expected a table");
            assert_eq!(crate::Scenario::from_toml(&doc).unwrap_err(), want, "{doc}");
            let json = serde_json::to_string(&toml::from_str::<Value>(&doc).unwrap()).unwrap();
            assert_eq!(crate::Scenario::from_json(&json).unwrap_err(), want, "{json}");
        }
        let ok = format!("{base}[[flows]]\nsrc = 0\ndst = 1\n");
        assert!(crate::Scenario::from_toml(&ok).is_ok());
    }

    /// serde's type words (sequence, u64, floating point) in TOML's: array, whole number.
    #[test]
    fn type_errors_are_in_the_words_of_toml() {
        let base = "name = \"a\"\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 2\n\
                    link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";
        for (extra, want) in [
            ("[switch]\nalpha = 0.5\n", "switch.alpha: invalid type: a number (0.5), expected an array: write [0.5]"),
            (
                "[transport]\nkernel = 4.19\n",
                "transport.kernel: 4.19 is a number, where a name is expected: write it in quotes, \"4.19\"",
            ),
            ("[[flows]]\nsrc = 0.5\ndst = 1\n", "flows[0].src: invalid type: a number (0.5), expected a whole number"),
        ] {
            let doc = format!("{base}{extra}");
            let json = serde_json::to_string(&toml::from_str::<Value>(&doc).unwrap()).unwrap();
            assert_eq!(crate::Scenario::from_json(&json).unwrap_err(), want, "{json}");
            // TOML says the same in its own way (the type words are replaced there too).
            let e = crate::Scenario::from_toml(&doc).unwrap_err();
            assert!(!e.contains("sequence") && !e.contains("u64") && !e.contains("floating point"), "{e}");
        }
        assert_eq!(plain_types("x: missing field `a`"), "x: missing field `a`");
    }

    #[test]
    fn a_moved_key_names_its_new_place_in_toml_and_json() {
        let base = "name = \"m\"\nduration = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 2\n";
        for (old, new) in MOVED_KEYS {
            let key = old.rsplit('.').next().unwrap();
            let toml = format!("{base}[switch.scheduler]\n{key} = 0.5\n");
            let e = crate::Scenario::from_toml(&toml).unwrap_err();
            assert_eq!(e, format!("{old}: moved to `{new}`"));
            let json = format!(r#"{{"name": "m", "switch": {{"scheduler": {{"{key}": 0.5}}}}}}"#);
            assert_eq!(crate::Scenario::from_json(&json).unwrap_err(), e);
        }
        // Elsewhere the same name is an unknown field as any other.
        let e = crate::Scenario::from_toml(&format!("{base}[switch]\nround_beta = 0.5\n")).unwrap_err();
        assert!(e.starts_with("switch.round_beta: unknown field"), "{e}");
    }

    #[test]
    fn suggests_the_closest_name_only_when_close() {
        let m = "unknown field `buffr`, expected one of `queues`, `buffer`, `pool`";
        assert_eq!(did_you_mean(m), "unknown field `buffr` (did you mean `buffer`?)");
        let m = "unknown variant `tcnn`, expected one of `red`, `tcn`, `codel`";
        assert_eq!(did_you_mean(m), "unknown variant `tcnn` (did you mean `tcn`?)");
        let m = "unknown field `zzzzzz`, expected one of `queues`, `buffer`";
        assert_eq!(did_you_mean(m), m);
        assert_eq!(did_you_mean("missing field `x`"), "missing field `x`");
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
        assert_eq!(edit_distance("szie", "size"), 1);
    }

    #[test]
    fn nested_paths_are_spliced() {
        let (p, m) = split_nested("traffic[2]", &format!("{MARK}load{MARK}must be at most 1"));
        assert_eq!((p.as_str(), m.as_str()), ("traffic[2].load", "must be at most 1"));
        let (p, _) = split_nested("a", &format!("{MARK}[1]{MARK}x"));
        assert_eq!(p, "a[1]");
        let (p, m) = split_nested("a", "plain");
        assert_eq!((p.as_str(), m.as_str()), ("a", "plain"));
    }
}

/// The longest message an error may be (a few lines' worth), whatever the input.
pub const MAX_MESSAGE_CHARS: usize = 400;

/// An error message bounded whatever the input it quotes: every quoted run (between
/// backticks, single or double quotes) longer than 60 characters is cut to its first 40,
/// and the whole to [`MAX_MESSAGE_CHARS`]. Every message that leaves the core passes here,
/// so no message echoes a 1 MB value (the unit parser already bounds its own echoes).
/// Control characters a value carried (a newline in a string) are escaped (`\n`): a
/// message is one line; so are the characters that would reorder or hide it on a
/// terminal (`disguises`).
pub fn clip_message(msg: &str) -> String {
    const LONG: usize = 60;
    const KEEP: usize = 40;
    let chars: Vec<char> = msg
        .chars()
        .flat_map(|c| if c.is_control() || disguises(c) { c.escape_default().collect() } else { vec![c] })
        .collect();
    let mut out = String::with_capacity(msg.len().min(MAX_MESSAGE_CHARS * 4));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        i += 1;
        // An apostrophe after a letter or digit is English ("the port's"), not a quote.
        let opens = match c {
            '`' | '"' => true,
            '\'' => i < 2 || !chars[i - 2].is_alphanumeric(),
            _ => false,
        };
        if opens {
            if let Some(len) = chars[i..].iter().position(|&d| d == c) {
                if len > LONG {
                    out.extend(&chars[i..i + KEEP]);
                    out.push_str(&format!("...({len} characters)"));
                } else {
                    out.extend(&chars[i..i + len]);
                }
                // Past the closing quote: it opens nothing (the words up to the next quoted
                // value are the message's own, however long).
                out.push(c);
                i += len + 1;
            }
        }
    }
    if out.chars().count() > MAX_MESSAGE_CHARS {
        out = out.chars().take(MAX_MESSAGE_CHARS - 3).collect::<String>() + "...";
    }
    out
}

/// Characters that reorder or hide the text around them on a terminal: Unicode's
/// bidirectional formatting characters (UAX #9: embeddings, overrides, isolates, marks) and
/// the invisible ones. A name echoed in an error line must not rewrite the rest of the
/// line ("Trojan Source", CVE-2021-42574); they are written escaped, as control characters.
fn disguises(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

#[cfg(test)]
mod clip_tests {
    use super::*;

    /// Possessives are words: text between two of them is the message's own, never cut.
    #[test]
    fn apostrophes_in_words_open_no_quote() {
        let m = "advise: the switch's buffer cannot hold the smallest threshold any scheme starts from, nor the port's";
        assert_eq!(clip_message(m), m);
        let huge = "y".repeat(500);
        let m = clip_message(&format!("the file's name '{huge}' is too long"));
        assert!(m.starts_with("the file's name 'yyyy") && m.contains("(500 characters)"), "{m}");
    }

    #[test]
    fn long_quoted_values_are_cut_and_short_ones_kept() {
        let huge = "x".repeat(1_000_000);
        let m = clip_message(&format!("traffic[0].cdf: cannot read '{huge}': No such file (echoed `{huge}`)"));
        assert!(m.len() < 300, "{}", m.len());
        assert!(m.starts_with("traffic[0].cdf: cannot read 'xxxxxxxx") && m.contains("(1000000 characters)"), "{m}");
        let short = "marking.tcn.threshold: unknown time unit `parsecs` in `10parsecs`";
        assert_eq!(clip_message(short), short);
        // The text between two quoted values is not a value (it was clipped as one).
        let two = "marking.codel.mode: \"drop\" with transport.cc = \"dcqcn\" and host.nic_marking drops in \
                   the RDMA NIC, which never drops its packets (use \"mark\")";
        assert_eq!(clip_message(two), two);
        assert!(clip_message(&"y".repeat(5000)).chars().count() <= MAX_MESSAGE_CHARS);
        assert_eq!(clip_message("name: `a\nb\tc\r` is bad"), "name: `a\\nb\\tc\\r` is bad");
        // A right-to-left override and an isolate would reorder the line on a terminal.
        assert_eq!(clip_message("name: `a\u{202e}b\u{2066}c` is bad"), "name: `a\\u{202e}b\\u{2066}c` is bad");
        assert_eq!(clip_message("x\u{200f}\u{feff}y é"), "x\\u{200f}\\u{feff}y é");
    }
}
