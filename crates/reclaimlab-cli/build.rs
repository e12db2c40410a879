//! Sets `RECLAIMLAB_MODEL_VERSION`, the model version that keys the results store: the crate
//! version and a hash of every source the results depend on (the library's and this crate's
//! sources and manifests, and the workspace's Cargo.lock), taken at build time. Any edit to
//! them, committed or not, changes it; a git commit id would miss uncommitted edits.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let lib = here.join("../reclaimlab");
    let inputs = [
        here.join("src"),
        here.join("Cargo.toml"),
        lib.join("src"),
        lib.join("Cargo.toml"),
        here.join("../../Cargo.lock"),
    ];
    // (which input, path inside it, path): names relative to the input, so the hash does not
    // depend on where the workspace is checked out.
    let mut files = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        println!("cargo:rerun-if-changed={}", input.display());
        let mut found = Vec::new();
        if input.is_dir() {
            files_under(input, &mut found);
        } else if input.is_file() {
            found.push(input.clone());
        }
        for f in found {
            let rel = f
                .strip_prefix(input)
                .unwrap_or(&f)
                .to_string_lossy()
                .to_string();
            files.push((i, rel, f));
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    files.sort();
    let mut h = Sha256::new();
    for (i, rel, f) in &files {
        h.update(format!("{i}:{rel}").as_bytes());
        h.update([0]);
        let data = std::fs::read(f).unwrap_or_default();
        h.update((data.len() as u64).to_le_bytes());
        h.update(&data);
    }
    let digest = h.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    // Outside the workspace (a packaged crate) the library's sources are not at hand: the
    // version alone is all there is, and it says so.
    let model = if lib.join("src").is_dir() {
        format!("{version}+src.{hex}")
    } else {
        format!("{version}+cli-src.{hex}")
    };
    println!("cargo:rustc-env=RECLAIMLAB_MODEL_VERSION={model}");
    println!(
        "cargo:rustc-env=RECLAIMLAB_BUILD_COMMIT={}",
        build_commit(&here)
    );
}

/// `git describe --always --dirty` of the checkout, for reports ("unknown" outside git); the
/// build reruns when HEAD or the branch it names moves.
fn build_commit(dir: &Path) -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    for file in ["HEAD", "index"] {
        if let Some(p) = git(&["rev-parse", "--git-path", file]) {
            println!("cargo:rerun-if-changed={}", dir.join(p).display());
        }
    }
    if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &head]) {
            println!("cargo:rerun-if-changed={}", dir.join(p).display());
        }
    }
    git(&["describe", "--always", "--dirty", "--abbrev=12"]).unwrap_or_else(|| "unknown".into())
}
