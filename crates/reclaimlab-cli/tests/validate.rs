//! `reclaimlab validate` without booting: bad input, the workload list, recorded console logs.

use std::process::{Command, Output};

fn reclaimlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(args)
        .output()
        .expect("run reclaimlab")
}

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../reclaimlab-validate/tests/fixtures/file-pread-zipf-6.1-classic-1.log"
);

fn assert_one_line_error(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.starts_with("reclaimlab: error: "), "{e}");
    assert!(e.contains(needle), "{e}");
    assert!(o.stdout.is_empty());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    assert_one_line_error(
        &reclaimlab(&["validate", "--workload", "nope"]),
        "unknown workload 'nope'",
    );
    assert_one_line_error(
        &reclaimlab(&["validate", "--workload", "tiny", "--kernel", "5.10"]),
        "unknown kernel '5.10'",
    );
    assert_one_line_error(
        &reclaimlab(&["validate", "--workload", "tiny", "--mode", "lru"]),
        "unknown mode 'lru'",
    );
    assert_one_line_error(&reclaimlab(&["validate"]), "give --suite");
    assert_one_line_error(
        &reclaimlab(&["validate", "--suite", "smp3"]),
        "unknown suite 'smp3'",
    );
    let dir = std::env::temp_dir().join(format!("rl-validate-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    assert_one_line_error(
        &reclaimlab(&["validate", "--table-only", "--out", dir.to_str().unwrap()]),
        "cells",
    );
    assert!(
        !dir.join("fidelity.md").exists(),
        "no results file for bad input"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lists_the_suite() {
    let o = reclaimlab(&["validate", "--list"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for w in [
        "file-pread-zipf",
        "file-mmap-zipf",
        "anon-zipf-zram",
        "file-loop",
        "hot-scan",
        "mixed-file-anon",
        "dirty-writeback",
        "two-memcgs",
        "tiny",
        "shared-mmap-2p",
        "buffered-writers-3p",
        "mixed-file-anon-2p",
        "anon-file-2p",
    ] {
        assert!(text.contains(w), "{w} missing");
    }
}

#[test]
fn parses_a_recorded_console_log() {
    let o = reclaimlab(&[
        "validate",
        "--workload",
        "file-pread-zipf",
        "--parse-console",
        FIXTURE,
    ]);
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["misses"], 25412);
    assert_eq!(v["accesses"], 150000);
    assert_eq!(v["policy"], "kernel 6.1.0-50-cloud-amd64");
    // The wrong workload for the log, and a truncated log, are errors.
    assert_one_line_error(
        &reclaimlab(&["validate", "--workload", "tiny", "--parse-console", FIXTURE]),
        "records",
    );
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let cut = std::env::temp_dir().join(format!("rl-validate-cut-{}.log", std::process::id()));
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    assert_one_line_error(
        &reclaimlab(&[
            "validate",
            "--workload",
            "file-pread-zipf",
            "--parse-console",
            cut.to_str().unwrap(),
        ]),
        "ends before the replay finished",
    );
    std::fs::remove_file(&cut).unwrap();
}
