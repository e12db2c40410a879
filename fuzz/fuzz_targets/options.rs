#![no_main]
//! Option values: --cost, --with/--without, --enabled, --policy, --format, --lru-gen-cmd,
//! --max-time, --scale with a scenario name (one per line).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    reclaimlab::fuzzing::option_bytes(data);
});
