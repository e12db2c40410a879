//! Every fuzz target's seed corpus and every input a fuzzer flagged (crash, timeout, slow
//! unit), run on stable through the same functions the targets call (`reclaimlab::fuzzing`).
//! A new crasher goes into fuzz/regressions/<target>/ and is tested from then on.

use std::path::Path;

use reclaimlab::fuzzing;
use reclaimlab::trace::TraceFormat;

/// The files under fuzz/seeds/<target> and fuzz/regressions/<target>, in name order.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut files = Vec::new();
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for e in entries.flatten() {
            let bytes = std::fs::read(e.path()).unwrap();
            files.push((
                format!("{dir}/{target}/{}", e.file_name().to_string_lossy()),
                bytes,
            ));
        }
    }
    files.sort();
    files
}

fn each(target: &str, body: impl Fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no seeds for {target}");
    for (name, bytes) in files {
        eprintln!("{name}");
        body(&bytes);
    }
}

#[test]
fn trace_native_inputs() {
    each("trace_native", |b| {
        fuzzing::replay_bytes(b, &TraceFormat::Native)
    });
}

#[test]
fn trace_oracle_inputs() {
    each("trace_oracle", |b| {
        fuzzing::replay_bytes(b, &TraceFormat::OracleGeneral)
    });
}

#[test]
fn trace_vscsi_inputs() {
    each("trace_vscsi", |b| {
        fuzzing::replay_bytes(b, &TraceFormat::Vscsi)
    });
}

#[test]
fn trace_csv_inputs() {
    each("trace_csv", fuzzing::csv_bytes);
}

#[test]
fn lru_gen_inputs() {
    each("lru_gen", fuzzing::lru_gen_bytes);
}

#[test]
fn option_inputs() {
    each("options", fuzzing::option_bytes);
}
