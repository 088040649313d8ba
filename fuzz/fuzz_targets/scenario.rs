//! Scenario parser and simulator setup on arbitrary bytes: see `src/entry.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ecnlab_fuzz::exercise(data);
});
