#![no_main]
//! lru_gen: a schedule file's text, and each of its commands written to
//! /sys/kernel/debug/lru_gen of a small machine of every MGLRU era.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    reclaimlab::fuzzing::lru_gen_bytes(data);
});
