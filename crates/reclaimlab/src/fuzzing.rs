//! The bodies of the fuzz targets (fuzz/): each feeds arbitrary bytes to a parser and, where
//! the input is small enough, through the model. They return nothing and must never panic,
//! abort or hang. They live in the library so that every crasher a fuzzer finds becomes a
//! regression test on stable (tests/fuzz_regressions.rs) calling the same function.

use std::io::Write;
use std::path::PathBuf;

use crate::consts::Kernel;
use crate::machine::MachineConfig;
use crate::sim::{run, PolicySpec, RunOptions};
use crate::trace::{records_from, TraceFormat};
use crate::workload::Scenario;

/// Page records a fuzzed trace may expand to before it is left unplanned (a 4 GiB object is
/// a million page records: valid, but too slow to fuzz).
const MAX_PAGE_RECORDS: u64 = 1 << 16;
/// Pages a fuzzed trace may touch and still be replayed.
const MAX_REPLAY_PAGES: u64 = 1 << 16;
/// Simulated time a fuzzed replay may last.
const MAX_REPLAY_NS: u64 = 10_000_000_000;
/// Simulated time a fuzzed lru_gen schedule runs for.
const MAX_LRU_GEN_NS: u64 = 200_000_000;

/// A trace's bytes in `format`: read in full, planned into a scenario through a file (the
/// streaming path a `--trace` run takes) and, when small, replayed under three policies.
pub fn replay_bytes(data: &[u8], format: &TraceFormat) {
    if !reads_within_limits(data, format) {
        return;
    }
    let path = scratch_file(data);
    let machine = MachineConfig::simple(1024);
    if let Ok(scn) = Scenario::from_trace_file("fuzz", machine, &path, format) {
        if scn.footprint() <= MAX_REPLAY_PAGES && scn.threads.len() <= 64 {
            for policy in ["classic", "mglru:7.2", "mglru:6.1", "lru"] {
                let spec: PolicySpec = policy.parse().expect("a known policy");
                let _ = run(&scn, spec, &replay_options(Vec::new()));
            }
        }
    }
    let _ = std::fs::remove_file(path);
}

/// A csv trace: the first line is the `csv:<params>` spec, the rest is the trace.
pub fn csv_bytes(data: &[u8]) {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let Ok(params) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    if let Ok(format) = format!("csv:{params}").parse::<TraceFormat>() {
        replay_bytes(data.get(split + 1..).unwrap_or_default(), &format);
    }
}

/// An lru_gen schedule file: parsed; each command checked against every era's parser and
/// written, at its time, to a small machine running MGLRU of that era.
pub fn lru_gen_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(schedule) = crate::options::parse_lru_gen_schedule(text, "fuzz") else {
        return;
    };
    for (_, cmd) in &schedule {
        for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1] {
            let _ = crate::options::check_lru_gen_command(kernel.behaviours(), cmd);
        }
    }
    if schedule.len() > 16 {
        return;
    }
    let Ok(scn) = crate::workload::micro::builtin("mixed-rw", 1.0 / 64.0) else {
        return;
    };
    // Commands at their times, squeezed into the first simulated seconds.
    let squeezed = schedule
        .into_iter()
        .map(|(t, c)| (t % MAX_LRU_GEN_NS, c))
        .collect();
    let opts = RunOptions {
        max_sim_ns: Some(MAX_LRU_GEN_NS),
        ..replay_options(squeezed)
    };
    for policy in ["mglru:6.1", "mglru:6.12", "mglru:7.2"] {
        let spec: PolicySpec = policy.parse().expect("a known policy");
        let _ = run(&scn, spec, &opts);
    }
}

/// Option values, one per line, each given to its parser in turn: policy, kernel, cost,
/// switch, enabled, trace format, lru_gen command, max-time, and a scenario name with scale.
pub fn option_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut cost = crate::machine::CostProfile::default();
    for line in text.lines() {
        let _ = line.parse::<PolicySpec>();
        let _ = line.parse::<crate::consts::Kernel>();
        let _ = crate::options::apply_cost(&mut cost, line);
        let _ = line.parse::<crate::policy::mglru::Switch>();
        let _ = crate::options::parse_enabled(line);
        let _ = line.parse::<TraceFormat>();
        let _ = crate::options::parse_lru_gen_cmd(line);
        if let Ok(s) = line.trim().parse::<f64>() {
            let _ = crate::options::seconds_to_sim_ns(s, "--max-time");
            for name in ["seq-scan", "memcg-limit", "ycsb-b", "kv-cache"] {
                if let Ok(scn) = crate::workload::micro::builtin(name, s) {
                    let _ = scn.validate();
                }
            }
        }
    }
}

/// Whether reading the trace ends, in an error or not, within [`MAX_PAGE_RECORDS`].
fn reads_within_limits(data: &[u8], format: &TraceFormat) -> bool {
    let input = Box::new(std::io::Cursor::new(data.to_vec()));
    let Ok(mut reader) = records_from(input, format) else {
        return true;
    };
    (0..=MAX_PAGE_RECORDS).any(|_| !matches!(reader.next_record(), Ok(Some(_))))
}

fn replay_options(lru_gen_schedule: Vec<(u64, String)>) -> RunOptions<'static> {
    RunOptions {
        seed: 1,
        check_invariants: false,
        max_sim_ns: Some(MAX_REPLAY_NS),
        progress: None,
        lru_gen_sample_ns: None,
        lru_gen_schedule,
        sample_ns: None,
        agents: Vec::new(),
    }
}

/// A scratch trace file of its own (tests call these functions from several threads at once),
/// holding `data`.
fn scratch_file(data: &[u8]) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("reclaimlab-fuzz-{}-{n}", std::process::id());
    let path = std::env::temp_dir().join(name);
    let mut f = std::fs::File::create(&path).expect("a scratch file in the temp dir");
    f.write_all(data).expect("the scratch file written");
    path
}
