#![no_main]
//! A libCacheSim oracleGeneral trace: read, planned into a scenario and, when small, replayed.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    reclaimlab::fuzzing::replay_bytes(data, &reclaimlab::trace::TraceFormat::OracleGeneral);
});
