//! The engine fingerprint (`ecnlab._core.ENGINE`): SHA-256 of everything that decides what
//! the compiled core computes — the sources of the marking, simulator and binding crates,
//! the flow-size CDFs they embed, the manifests and `Cargo.lock` — plus the compiler, target,
//! profile and flags. Sweep stores key their runs by it (`python/ecnlab/api.py`,
//! `engine_id`). A hash of the built library would not do: its debug info names the build
//! directory, so two checkouts of the same commit would never share a store.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Inputs relative to this crate's directory; directories are read recursively.
const INPUTS: &[&str] = &[
    "src",
    "Cargo.toml",
    "../ecnlab-core/src",
    "../ecnlab-core/Cargo.toml",
    "../ecnlab-sim/src",
    "../ecnlab-sim/Cargo.toml",
    "../../workloads",
    "../../Cargo.toml",
    "../../Cargo.lock",
];

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(path).expect("readable input directory").map(|e| e.expect("entry").path()).collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut h = Sha256::new();
    for input in INPUTS {
        println!("cargo:rerun-if-changed={input}");
        let mut list = Vec::new();
        files(&here.join(input), &mut list);
        for f in list {
            // The path relative to this crate and the bytes, each length-prefixed: where a file
            // lives matters, the checkout's own location does not.
            let rel = f.strip_prefix(&here).unwrap_or(&f).to_string_lossy().into_owned();
            let bytes = std::fs::read(&f).expect("readable input file");
            h.update((rel.len() as u64).to_le_bytes());
            h.update(rel.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc).arg("-vV").output().map(|o| o.stdout).unwrap_or_default();
    h.update(&version);
    for var in ["TARGET", "PROFILE", "OPT_LEVEL", "CARGO_ENCODED_RUSTFLAGS", "CARGO_CFG_TARGET_FEATURE"] {
        println!("cargo:rerun-if-env-changed={var}");
        h.update(var.as_bytes());
        h.update(std::env::var(var).unwrap_or_default().as_bytes());
    }
    let digest = h.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=ECNLAB_ENGINE={hex}");
}
