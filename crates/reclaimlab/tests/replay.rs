//! Trace replay streamed from a file: the same runs as from records in memory, compaction of
//! sparse files, and read errors that end the run with an error.

use std::path::{Path, PathBuf};

use reclaimlab::access::{Op, PageRef, TraceRecord, Via};
use reclaimlab::machine::MachineConfig;
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{self, PolicySpec, RunOptions};
use reclaimlab::trace::{open_trace, write_native, TraceFormat, TraceHeader};
use reclaimlab::workload::{micro, Scenario, Stream};

/// A file in the temp directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!(
            "reclaimlab-replay-test-{}-{name}",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn go(scn: &Scenario, policy: &str) -> RunResult {
    let spec: PolicySpec = policy.parse().unwrap();
    let opts = RunOptions {
        seed: 7,
        ..Default::default()
    };
    sim::run(scn, spec, &opts).unwrap()
}

fn json(r: &RunResult) -> String {
    serde_json::to_string(r).unwrap()
}

/// The scenario of a trace file, streamed and from its records in memory.
fn both(path: &Path, format: &TraceFormat, machine: MachineConfig) -> (Scenario, Scenario) {
    let streamed = Scenario::from_trace_file("t", machine.clone(), path, format).unwrap();
    let (header, records) = open_trace(path, format).unwrap();
    let memory = Scenario::from_trace("t", machine, &header, &records).unwrap();
    (streamed, memory)
}

/// Two processes in two memcgs, anon and mapped file pages, times and writes.
fn two_process_trace() -> Vec<u8> {
    let mut records = Vec::new();
    for i in 0..4_000u64 {
        let (pid, memcg) = if i % 3 == 0 { (20, 2) } else { (10, 1) };
        let page = match i % 4 {
            0 => PageRef::Anon {
                page: (i * 7) % 900,
            },
            1 => PageRef::File {
                file: 3,
                page: (i * 13) % 2_000,
            },
            _ => PageRef::File {
                file: 5,
                page: (i * 31) % 3_000,
            },
        };
        records.push(TraceRecord {
            time_ns: i * 1_000,
            pid,
            memcg,
            page,
            op: if i % 5 == 0 { Op::Write } else { Op::Read },
            via: if i % 4 <= 1 { Via::Mmap } else { Via::Fd },
        });
    }
    let header = TraceHeader {
        memcgs: vec![(1, "/a".into()), (2, "/b".into())],
        files: vec![(3, 2_000, Some("mapped".into()))],
    };
    write_native(Vec::new(), &header, &records).unwrap()
}

#[test]
fn a_streamed_native_trace_runs_as_its_records_in_memory() {
    let f = TempFile::new("two.rtrace", &two_process_trace());
    let (streamed, memory) = both(&f.0, &TraceFormat::Native, MachineConfig::simple(2_048));
    assert_eq!(streamed.procs, memory.procs);
    assert_eq!(streamed.files, memory.files);
    assert_eq!(streamed.procs.len(), 2);
    assert_eq!(streamed.procs[0].memcg, "/b"); // pid 20 comes first
    assert_eq!(streamed.procs[1].memcg, "/a");
    for policy in ["classic", "mglru:7.2", "lru"] {
        let a = go(&streamed, policy);
        assert_eq!(json(&a), json(&go(&memory, policy)), "{policy}");
        assert_eq!(a.accesses, 4_000);
    }
}

#[test]
fn a_generated_run_replays_from_its_trace_file() {
    let scn = micro::builtin("zipf", 0.125).unwrap();
    let mut buf = Vec::new();
    reclaimlab::workload::write_trace(&scn, 7, &mut buf).unwrap();
    let f = TempFile::new("zipf.rtrace", &buf);
    let replay =
        Scenario::from_trace_file("zipf", scn.machine.clone(), &f.0, &TraceFormat::Native).unwrap();
    let a = go(&scn, "classic");
    let b = go(&replay, "classic");
    assert_eq!(a.vmstat, b.vmstat);
    assert_eq!(a.sim_time_ns, b.sim_time_ns);
}

fn oracle_bytes(records: &[(u32, u64, u32)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for &(t, id, size) in records {
        bytes.extend_from_slice(&t.to_le_bytes());
        bytes.extend_from_slice(&id.to_le_bytes());
        bytes.extend_from_slice(&size.to_le_bytes());
        bytes.extend_from_slice(&(-1i64).to_le_bytes());
    }
    bytes
}

#[test]
fn sparse_object_ids_are_compacted_in_order() {
    // Objects far apart (obj_id << 20 pages each), one of them two pages long.
    let ids = [1u64 << 30, 5, 1 << 30, 77, 5, 1 << 40];
    let records: Vec<(u32, u64, u32)> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (100 + i as u32, id, if id == 77 { 8_000 } else { 100 }))
        .collect();
    let f = TempFile::new("sparse.oracle", &oracle_bytes(&records));
    let (streamed, memory) = both(
        &f.0,
        &TraceFormat::OracleGeneral,
        MachineConfig::simple(1_024),
    );
    // Pages used: objects 5, 77 (two pages), 2^30 and 2^40: five pages.
    assert_eq!(streamed.files[0].pages, 5);
    assert_eq!(streamed.files, memory.files);
    for policy in ["classic", "lru"] {
        assert_eq!(json(&go(&streamed, policy)), json(&go(&memory, policy)));
    }
    let r = go(&streamed, "lru");
    assert_eq!((r.accesses, r.misses), (7, 5));
    // Times are rebased: the first request is issued at once, the last 5 s later.
    assert!(r.sim_time_ns >= 5_000_000_000 && r.sim_time_ns < 5_100_000_000);
}

#[test]
fn a_trace_that_cannot_be_read_again_ends_the_run_with_an_error() {
    let f = TempFile::new("vanishing.rtrace", &two_process_trace());
    let scn = Scenario::from_trace_file(
        "t",
        MachineConfig::simple(2_048),
        &f.0,
        &TraceFormat::Native,
    )
    .unwrap();
    std::fs::write(&f.0, b"# reclaimlab-trace v1\n0 10 1 f 3 0 r x\n").unwrap();
    let err = sim::run(&scn, "classic".parse().unwrap(), &RunOptions::default()).unwrap_err();
    assert!(err.contains("vanishing.rtrace"), "{err}");
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn a_replay_holds_no_records() {
    let f = TempFile::new("norecords.rtrace", &two_process_trace());
    let scn = Scenario::from_trace_file(
        "t",
        MachineConfig::simple(2_048),
        &f.0,
        &TraceFormat::Native,
    )
    .unwrap();
    for t in &scn.threads {
        let Stream::Replay(r) = &t.stream else {
            panic!("a replay thread streams its records");
        };
        assert!(r.records > 0);
    }
}

#[test]
fn an_anon_page_beyond_what_a_folio_records_is_refused() {
    let f = TempFile::new(
        "huge-anon.rtrace",
        b"# reclaimlab-trace v1\n0 1 0 a 0 18446744073709551615 r m\n",
    );
    let scn = Scenario::from_trace_file(
        "t",
        MachineConfig::simple(2_048),
        &f.0,
        &TraceFormat::Native,
    )
    .unwrap();
    let err = sim::run(&scn, "classic".parse().unwrap(), &RunOptions::default()).unwrap_err();
    assert!(err.contains("anon pages"), "{err}");
}
