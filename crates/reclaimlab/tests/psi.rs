//! Pressure stall information in whole runs: which waits are memory stalls (kernel/sched/psi.c
//! and its callers), per memcg and system-wide, and the memory.current mean and peak.

use reclaimlab::machine::{MachineConfig, MemcgConfig};
use reclaimlab::metrics::{MemcgResult, RunResult};
use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::micro::builtin;
use reclaimlab::workload::pattern::Pattern;
use reclaimlab::workload::{FileSpec, Phase, ProcSpec, Scenario, Stream, Target, ThreadSpec};

fn go(scn: &Scenario, spec: &str) -> RunResult {
    run(
        scn,
        spec.parse().expect("policy"),
        &RunOptions {
            seed: 5,
            ..Default::default()
        },
    )
    .expect("run")
}

fn memcg<'a>(r: &'a RunResult, path: &str) -> &'a MemcgResult {
    r.memcgs.iter().find(|m| m.path == path).expect("memcg")
}

/// One reader in memcg /w (no limit) reading `passes` times as many pages as a file of
/// `file_pages` has through read() (in a loop, or Zipf(0.9)), on a machine of `mem_pages`.
fn reader(mem_pages: u64, file_pages: u64, passes: u64) -> Scenario {
    reader_with(
        mem_pages,
        file_pages,
        passes,
        Pattern::Loop { pages: file_pages },
    )
}

fn reader_with(mem_pages: u64, file_pages: u64, passes: u64, pattern: Pattern) -> Scenario {
    let mut machine = MachineConfig::simple(mem_pages);
    machine.memcgs.push(MemcgConfig::new("/w"));
    // One page per read() (no readahead, as the validation guests): each miss is one wait.
    machine.read_ahead_kb = 0;
    Scenario {
        name: "reader".into(),
        description: String::new(),
        machine,
        files: vec![FileSpec::new("data", file_pages)],
        procs: vec![ProcSpec::new("reader", "/w", 0)],
        threads: vec![ThreadSpec {
            proc: 0,
            cpu: 0,
            stream: Stream::Phases(vec![Phase::new(
                pattern,
                Target::fd(0),
                0,
                passes * file_pages,
            )]),
        }],
    }
}

fn zipf_reader(passes: u64) -> Scenario {
    let pages = 6144;
    reader_with(4096, pages, passes, Pattern::Zipf { pages, s: 0.9 })
}

#[test]
fn plain_reads_of_new_pages_are_io_waits_not_memory_stalls() {
    // A file a quarter of memory read twice: every first read waits for the device (major
    // faults), nothing is reclaimed, no page is a workingset refault.
    let r = go(&reader(16384, 4096, 2), "classic");
    assert_eq!(r.major, 4096);
    assert_eq!(r.vmstat["allocstall_movable"], 0);
    for m in &r.memcgs {
        assert_eq!(m.psi.memory.some.total_us, 0, "{}", m.path);
        assert_eq!(m.psi.memory.full.total_us, 0, "{}", m.path);
    }
    assert_eq!(r.psi.expect("psi").memory.some.total_us, 0);
}

#[test]
fn workingset_refaults_are_memory_stalls_and_other_refaults_are_not() {
    // Zipf reads over 1.5x memory: kswapd alone reclaims (no direct reclaim, no memcg limit),
    // so the reader's own memory stalls in /w can only be its waits on workingset refaults.
    // The memcg statistics flushed every millisecond: the run is shorter than FLUSH_TIME, and
    // 6.12's workingset_test_recent would otherwise read the empty sizes of the run's start
    // (docs/model.md §4, "Memcg statistics as reclaim reads them") and activate no refault.
    let mut scn = zipf_reader(8);
    scn.machine.memcg_stats_flush_ns = 1_000_000;
    let r = go(&scn, "classic");
    let w = memcg(&r, "/w");
    assert_eq!(r.vmstat["allocstall_movable"], 0, "direct reclaim");
    assert_eq!(w.stat["pgsteal_direct"], 0);
    assert!(w.stat["workingset_refault_file"] > 0);
    let restores = w.stat["workingset_restore_file"];
    let refaults = w.stat["workingset_refault_file"];
    let stall_us = w.psi.memory.some.total_us;
    assert!(
        restores > 0 && restores < refaults,
        "{restores} of {refaults}"
    );
    // Each workingset refault waited for one device read (80 us on NVMe, plus queueing); the
    // other refaults and the first reads were no stall: at most one read each of the
    // restores', far less than all refaults'.
    assert!(stall_us >= restores * 80, "{stall_us} us for {restores}");
    assert!(
        stall_us < refaults * 80,
        "{stall_us} us for {refaults} refaults"
    );
    // The reader is alone on its CPU: every stall of it is full.
    assert_eq!(w.psi.memory.full.total_us, stall_us);
}

#[test]
fn refaults_without_the_workingset_bit_are_no_memory_stall() {
    // MGLRU restores (PG_workingset on refault) only folios evicted with saturated reference
    // counts or refaulting in a fault (lru_gen_refault); these read() refaults are neither:
    // each waits for the device as a plain read, in I/O and not in a memory stall.
    let r = go(&zipf_reader(8), "mglru");
    let w = memcg(&r, "/w");
    assert_eq!(r.vmstat["allocstall_movable"], 0, "direct reclaim");
    assert!(w.stat["workingset_refault_file"] > 1000);
    assert_eq!(w.stat["workingset_restore_file"], 0);
    assert_eq!(w.psi.memory.some.total_us, 0);
}

#[test]
fn full_is_at_most_some_and_children_stall_no_more_than_their_tasks() {
    for name in [
        "memcg-limit",
        "mixed-rw",
        "swap-storm",
        "file-anon-mix-mini",
    ] {
        let scn = builtin(name, 0.25).expect("scenario");
        for spec in ["classic", "mglru"] {
            let r = go(&scn, spec);
            let sys = r.psi.expect("psi").memory;
            assert!(sys.full.total_us <= sys.some.total_us, "{name} {spec}");
            for m in &r.memcgs {
                let p = m.psi.memory;
                assert!(
                    p.full.total_us <= p.some.total_us,
                    "{name} {spec} {}",
                    m.path
                );
                assert!(p.full.avg10 <= p.some.avg10, "{name} {spec} {}", m.path);
                assert!(p.some.total_us <= r.sim_time_ns / 1000, "{name} {spec}");
                assert!(m.current_mean_pages <= m.peak_pages as f64);
                assert!(m.current_pages <= m.peak_pages);
                if let Some(max) = m.max_pages {
                    assert!(m.peak_pages <= max, "{name} {spec} {}", m.path);
                }
            }
        }
    }
}

#[test]
fn limit_reclaim_is_a_memory_stall_of_the_limited_memcg_only() {
    let r = go(&builtin("memcg-limit", 0.25).expect("scenario"), "classic");
    let limited = memcg(&r, "/limited");
    let free = memcg(&r, "/free");
    assert!(limited.stat["pgsteal_direct"] > 0);
    assert!(limited.psi.memory.some.total_us > 0);
    assert_eq!(free.psi.memory.some.total_us, 0);
}

#[test]
fn mean_and_peak_usage_bracket_the_run() {
    // The file is read twice into a machine that holds it: memory.current rises to the
    // file's size and stays; the time-weighted mean is below the peak (it started at 0).
    let r = go(&reader(16384, 4096, 2), "classic");
    let w = memcg(&r, "/w");
    assert_eq!(w.peak_pages, 4096);
    assert_eq!(w.current_pages, 4096);
    assert!(w.current_mean_pages > 0.0 && w.current_mean_pages < 4096.0);
}
