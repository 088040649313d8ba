//! The stable, CI-friendly side of the `scenario` fuzz target (`fuzz/`, run with
//! `cargo +nightly fuzz run scenario`): the same entry point (`fuzz/src/entry.rs`, included
//! below), in the ordinary test profile with overflow checks on, over
//! - every input of the committed corpus `fuzz/corpus/scenario/`;
//! - random mutations of it: raw byte edits (flips, insertions, deletions, splices of two
//!   inputs) and structure-aware ones (a JSON value of a corpus scenario replaced by an
//!   extreme one: 0, -1, `u64::MAX`, 1e308, "0ns", "18446744073709551615", ...), which get
//!   past the parser and into `validate()` and the simulator far more often.
//!
//! - random inputs of the structure-aware target `scenario_edits` (`entry::exercise_edits`).
//!
//! Inputs that once crashed the simulator are kept in `fuzz/regressions/` and must be refused
//! cleanly (`former_crashes_are_refused_cleanly`).
//! `PROPTEST_CASES` raises the number of mutations.

#[path = "../../../fuzz/src/entry.rs"]
mod entry;

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use serde_json::Value;
use std::path::PathBuf;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Files of `fuzz/<sub>`, sorted by name.
fn inputs(sub: &str) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(fuzz_dir().join(sub))
        .unwrap_or_else(|e| panic!("fuzz/{sub}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .filter(|p| p.extension().is_none_or(|x| x != "md"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(cases);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

#[test]
fn corpus_replays_without_crash() {
    let corpus = inputs("corpus/scenario");
    assert!(corpus.len() >= 16, "the corpus holds at least the built-in scenarios");
    let before = entry::RUNS.load(std::sync::atomic::Ordering::Relaxed);
    for (name, data) in &corpus {
        let t = std::time::Instant::now();
        entry::exercise(data);
        eprintln!("{name}: {:?}", t.elapsed());
    }
    // Every small JSON seed runs the simulator (other tests may run too, hence >=).
    let runs = entry::RUNS.load(std::sync::atomic::Ordering::Relaxed) - before;
    let small = corpus.iter().filter(|(n, _)| n.ends_with(".json")).count() as u64;
    assert!(runs >= small, "only {runs} of the corpus reached the simulator");
}

/// The built-in scenarios and their small JSON variants all parse and validate: the corpus
/// is not dead weight that fails at the first step.
#[test]
fn corpus_seeds_are_valid_scenarios() {
    for (name, data) in inputs("corpus/scenario") {
        let text = std::str::from_utf8(&data).unwrap();
        let scn = if name.ends_with(".toml") {
            ecnlab_sim::Scenario::from_toml(text)
        } else if name.ends_with(".json") {
            ecnlab_sim::Scenario::from_json(text)
        } else {
            continue; // inputs the fuzzer added
        };
        let scn = scn.unwrap_or_else(|e| panic!("{name}: {e}"));
        scn.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Inputs that made the simulator panic once (`fuzz/regressions/`, see its README): each
/// must now be refused by `validate()` with a message, and nothing may panic.
#[test]
fn former_crashes_are_refused_cleanly() {
    let found = inputs("regressions");
    assert!(found.len() >= 6, "fuzz/regressions/ holds {} inputs", found.len());
    for (name, data) in found {
        let text = String::from_utf8(data).unwrap();
        let scn = if name.ends_with(".json") {
            ecnlab_sim::Scenario::from_json(&text)
        } else {
            ecnlab_sim::Scenario::from_toml(&text)
        };
        let scn = scn.unwrap_or_else(|e| panic!("{name}: must still parse, to reach validate(): {e}"));
        let err = scn.validate().expect_err(&name);
        assert!(err.contains(": "), "{name}: the message names no field: {err}");
    }
}

/// Values that break assumptions: zero, one, the u64 edge, negatives, floats at the edges,
/// and unit strings at the edges.
fn extreme_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(0u64)),
        Just(Value::from(1u64)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(u64::MAX - 1)),
        Just(Value::from(u32::MAX as u64 + 1)),
        Just(Value::from(-1i64)),
        Just(Value::from(1e308)),
        Just(Value::from(5e-324)),
        Just(Value::from(0.5)),
        Just(Value::from("0ns")),
        Just(Value::from("1ns")),
        Just(Value::from("18446744073709551615")),
        Just(Value::from("9e18s")),
        Just(Value::from("1e30Gbps")),
        Just(Value::from("1bps")),
        Just(Value::from("0B")),
        Just(Value::from("1B")),
        Just(Value::from("1e300")),
        Just(Value::from("")),
        Just(Value::from(true)),
        Just(Value::Array(vec![])),
        Just(Value::Null),
        any::<u64>().prop_map(Value::from),
        (0u64..100).prop_map(Value::from),
    ]
}

/// Replace the `pick`-th leaf (in a depth-first walk, modulo their number) with `v`.
fn replace_leaf(root: &mut Value, pick: usize, v: Value) {
    fn count(x: &Value) -> usize {
        match x {
            Value::Object(m) => m.values().map(count).sum::<usize>().max(1),
            Value::Array(a) => a.iter().map(count).sum::<usize>().max(1),
            _ => 1,
        }
    }
    fn walk(x: &mut Value, k: &mut usize, v: &mut Option<Value>) {
        let leaf = match x {
            Value::Object(m) if !m.is_empty() => {
                m.values_mut().for_each(|c| walk(c, k, v));
                false
            }
            Value::Array(a) if !a.is_empty() => {
                a.iter_mut().for_each(|c| walk(c, k, v));
                false
            }
            _ => true,
        };
        if leaf {
            if *k == 0 {
                if let Some(v) = v.take() {
                    *x = v;
                }
            }
            *k = k.wrapping_sub(1);
        }
    }
    let n = count(root);
    let mut k = pick % n;
    walk(root, &mut k, &mut Some(v));
}

#[derive(Clone, Debug)]
enum Edit {
    Flip {
        at: usize,
        bit: u8,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Delete {
        at: usize,
        len: usize,
    },
    /// Splice another input's tail at `at`.
    Splice {
        at: usize,
        other: usize,
        from: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), 1usize..64).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(at, other, from)| Edit::Splice { at, other, from }),
    ]
}

fn apply(data: &mut Vec<u8>, e: &Edit, corpus: &[(String, Vec<u8>)]) {
    let n = data.len().max(1);
    match e {
        Edit::Flip { at, bit } => {
            if !data.is_empty() {
                data[at % n] ^= 1 << bit;
            }
        }
        Edit::Insert { at, bytes } => {
            let at = at % (data.len() + 1);
            data.splice(at..at, bytes.iter().copied());
        }
        Edit::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(data.len());
            if at < end {
                data.drain(at..end);
            }
        }
        Edit::Splice { at, other, from } => {
            let o = &corpus[other % corpus.len()].1;
            let from = from % o.len().max(1);
            data.truncate(at % n);
            data.extend_from_slice(&o[from.min(o.len())..]);
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// A corpus scenario (as JSON) with up to three values replaced by extreme ones.
    #[test]
    fn extreme_values_in_corpus_scenarios(
        which in any::<usize>(),
        edits in proptest::collection::vec((any::<usize>(), extreme_value()), 1..4),
        as_toml in any::<bool>(),
    ) {
        let corpus: Vec<_> = inputs("corpus/scenario").into_iter().filter(|(n, _)| n.ends_with(".json")).collect();
        let (_, data) = &corpus[which % corpus.len()];
        let mut v: Value = serde_json::from_slice(data).unwrap();
        for (pick, x) in edits {
            replace_leaf(&mut v, pick, x);
        }
        let json = serde_json::to_string(&v).unwrap();
        entry::exercise(json.as_bytes());
        if as_toml {
            // The same document as TOML where TOML can say it (no nulls).
            if let Ok(t) = toml::to_string(&v) {
                entry::exercise(t.as_bytes());
            }
        }
    }

    /// The `scenario_edits` fuzz target's input format on random bytes.
    #[test]
    fn structured_edits_of_the_corpus(data in proptest::collection::vec(any::<u8>(), 0..160)) {
        let bases: Vec<Value> = inputs("corpus/scenario")
            .into_iter()
            .filter(|(n, _)| n.ends_with(".json"))
            .map(|(_, d)| serde_json::from_slice(&d).unwrap())
            .collect();
        entry::exercise_edits(&data, &bases);
    }

    /// Raw byte edits of corpus inputs (TOML and JSON).
    #[test]
    fn byte_mutations_of_the_corpus(which in any::<usize>(), edits in proptest::collection::vec(edit(), 1..6)) {
        let corpus = inputs("corpus/scenario");
        let mut data = corpus[which % corpus.len()].1.clone();
        for e in &edits {
            apply(&mut data, e, &corpus);
        }
        entry::exercise(&data);
    }
}
