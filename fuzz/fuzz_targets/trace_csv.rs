#![no_main]
//! A csv trace: the first line is the `--format csv:<params>` spec, the rest the trace.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    reclaimlab::fuzzing::csv_bytes(data);
});
