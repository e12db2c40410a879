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
            req: 1,
        });
    }
    let header = TraceHeader {
        memcgs: vec![(1, "/a".into()), (2, "/b".into())],
        files: vec![(3, 2_000, Some("mapped".into()))],
        tmpfs: Vec::new(),
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

fn native_trace(body: &str) -> TempFile {
    let name = format!("t{}.rtrace", body.len());
    TempFile::new(&name, format!("# reclaimlab-trace v1\n{body}").as_bytes())
}

fn from_native(f: &TempFile) -> Result<Scenario, String> {
    Scenario::from_trace_file(
        "t",
        MachineConfig::simple(2_048),
        &f.0,
        &TraceFormat::Native,
    )
}

#[test]
fn the_order_of_different_pids_in_the_file_does_not_matter() {
    // The same records, once interleaved by time and once pid by pid: the threads share one
    // reader, which must hold one pid's records while the other catches up.
    let line = |i: u64, pid: u32| format!("{} {pid} 0 f {pid} {} r f\n", i * 10_000, i % 700);
    let interleaved: String = (0..3_000).flat_map(|i| [line(i, 1), line(i, 2)]).collect();
    let grouped: String = [1, 2]
        .iter()
        .flat_map(|&pid| (0..3_000).map(move |i| line(i, pid)))
        .collect();
    let (a, b) = (native_trace(&interleaved), native_trace(&grouped));
    let (a, b) = (from_native(&a).unwrap(), from_native(&b).unwrap());
    for policy in ["classic", "mglru:7.2"] {
        let (ra, rb) = (go(&a, policy), go(&b, policy));
        assert_eq!(ra.accesses, 6_000);
        assert_eq!(ra.vmstat, rb.vmstat, "{policy}");
        assert_eq!(ra.sim_time_ns, rb.sim_time_ns, "{policy}");
    }
}

#[test]
fn sparse_file_ids_cost_one_file_each() {
    let f = native_trace("0 1 0 f 4294967295 3 r f\n0 1 0 f 7 0 r f\n0 1 0 f 4294967295 3 r f\n");
    let scn = from_native(&f).unwrap();
    assert_eq!(scn.files.len(), 2);
    assert_eq!(scn.files[1].name, "file4294967295");
    assert_eq!(scn.files[1].pages, 4);
    let r = go(&scn, "classic");
    assert_eq!((r.accesses, r.misses), (3, 2));
}

#[test]
fn a_time_beyond_the_models_clock_is_refused() {
    let f = native_trace("0 1 0 f 1 0 r f\n18446744073709551615 1 0 f 1 1 r f\n");
    let err = from_native(&f).unwrap_err();
    assert!(
        err.contains("record 2: time 18446744073709551615 ns"),
        "{err}"
    );
    assert!(err.contains("beyond the model's clock"), "{err}");
}

#[test]
fn idle_time_is_skipped_and_dirty_pages_still_written_back() {
    // A write, 31 years of nothing, another write and a read a minute later: both writes are
    // written back by the flusher (dirty_expire 30 s), as without the skip.
    let f = native_trace(
        "0 1 0 f 1 0 w f\n1000000000000000000 1 0 f 1 1 w f\n1000000060000000000 1 0 f 1 2 r f\n",
    );
    let scn = from_native(&f).unwrap();
    let r = go(&scn, "classic");
    assert_eq!(r.accesses, 3);
    assert!(r.sim_time_ns >= 1_000_000_060_000_000_000);
    assert_eq!(r.vmstat["pgpgout"], 8, "two pages written back (in KiB)");
}

#[test]
fn object_pages_are_not_file_pages() {
    // oracleGeneral pages are `obj_id << 20`: an id of 2^40 is far beyond MAX_LFS_FILESIZE as
    // a page number but a fine object, renumbered.
    let f = TempFile::new(
        "big-id.oracle",
        &oracle_bytes(&[(0, 1 << 40, 1), (1, 3, 1)]),
    );
    let scn = Scenario::from_trace_file(
        "t",
        MachineConfig::simple(2_048),
        &f.0,
        &TraceFormat::OracleGeneral,
    )
    .unwrap();
    assert_eq!(go(&scn, "lru").accesses, 2);
}

#[test]
fn a_tmpfs_declaration_replays_the_file_on_tmpfs() {
    // Two files written whole, 3000 pages each on a 2048-page machine with zram: the tmpfs one
    // is swapped out, the regular one written back.
    let body = |tmpfs: &str| {
        let mut s = format!("# file 0 3000\n# file 1 3000\n{tmpfs}");
        for f in [0, 1] {
            for p in 0..3000 {
                s.push_str(&format!("0 1 0 f {f} {p} w f\n"));
            }
        }
        s
    };
    let with = native_trace(&body("# tmpfs 0\n"));
    let mut scn = from_native(&with).unwrap();
    assert_eq!(
        scn.files.iter().map(|f| f.tmpfs).collect::<Vec<_>>(),
        [true, false]
    );
    scn.machine.swap = reclaimlab::machine::SwapConfig::Zram {
        size_pages: 4096,
        compress_ratio: 3.0,
    };
    let r = go(&scn, "classic");
    assert!(r.vmstat["pswpout"] > 0);
    assert!(r.vmstat.contains_key("nr_shmem"));
    let without = native_trace(&body(""));
    assert!(from_native(&without)
        .unwrap()
        .files
        .iter()
        .all(|f| !f.tmpfs));
}
