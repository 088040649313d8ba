//! Structure-aware edits of the committed JSON scenarios (`corpus/scenario/*.json`, read
//! once at start-up): see `exercise_edits` in `src/entry.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::sync::OnceLock;

fn bases() -> &'static [Value] {
    static BASES: OnceLock<Vec<Value>> = OnceLock::new();
    BASES.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/scenario");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("fuzz/corpus/scenario")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files.iter().filter_map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).ok()).collect()
    })
}

fuzz_target!(|data: &[u8]| {
    ecnlab_fuzz::exercise_edits(data, bases());
});
