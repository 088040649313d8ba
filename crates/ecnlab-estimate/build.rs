//! The estimate's build fingerprint (`ecnlab_estimate::BUILD`): SHA-256 of this crate's
//! sources and manifest. The engine's fingerprint (`ecnlab._core.ENGINE`, `ecnlab-py`'s
//! build.rs) leaves this crate out, so that the simulator's stored runs outlive a change of
//! the estimate; a Dask worker checks both before it runs a job of the driver's.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(path).expect("readable directory").map(|e| e.expect("entry").path()).collect();
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
    for input in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={input}");
        let mut list = Vec::new();
        files(&here.join(input), &mut list);
        for f in list {
            let rel = f.strip_prefix(&here).unwrap_or(&f).to_string_lossy().into_owned();
            let bytes = std::fs::read(&f).expect("readable file");
            h.update((rel.len() as u64).to_le_bytes());
            h.update(rel.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=ECNLAB_ESTIMATE_BUILD={hex}");
}
