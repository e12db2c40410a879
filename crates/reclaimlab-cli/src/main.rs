//! `reclaimlab`: a thin command line over the reclaimlab library.
//!
//! Also built as a library (`reclaimlab_cli`): [`run_captured`] runs a command line and hands
//! back what it printed, which is how the Python package (crates/reclaimlab-py) calls the very
//! same commands, so Python and the CLI cannot drift apart.

use clap::{Args, Parser, Subcommand, ValueEnum};
use reclaimlab::machine::{DeviceProfile, SwapConfig};
use reclaimlab::metrics::RunResult;
use reclaimlab::options;
use reclaimlab::policy::mglru::Switch;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::trace::TraceFormat;
use reclaimlab::workload::{micro, Scenario};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// stdout that never panics: a failed write (EPIPE from a closed pipe, ENOSPC, EIO...) is
/// remembered, later writes are skipped, and `main` ends with a one-line error and exit 2.
/// (Rust ignores SIGPIPE, so a closed pipe is an EPIPE here, not a silent death.)
mod stdout {
    use std::io::Write;
    use std::sync::Mutex;

    static FAILED: Mutex<Option<String>> = Mutex::new(None);
    /// While `Some`, output goes here instead of stdout (`crate::run_captured`).
    static CAPTURE: Mutex<Option<Vec<u8>>> = Mutex::new(None);

    /// Sends output to a buffer (`true`) or back to stdout (`false`, returning the buffer).
    pub fn capture(on: bool) -> Vec<u8> {
        let mut c = CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
        let taken = c.take().unwrap_or_default();
        if on {
            *c = Some(Vec::new());
        }
        taken
    }

    pub fn write(args: std::fmt::Arguments) {
        if let Some(buf) = CAPTURE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            let _ = buf.write_fmt(args);
            return;
        }
        let mut failed = FAILED.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_none() {
            if let Err(e) = std::io::stdout().lock().write_fmt(args) {
                *failed = Some(e.to_string());
            }
        }
    }

    /// Flushes stdout; the first write error, if any.
    pub fn finish() -> Result<(), String> {
        let flushed = std::io::stdout().lock().flush();
        let failed = FAILED.lock().unwrap_or_else(|e| e.into_inner()).take();
        match (failed, flushed) {
            (Some(e), _) => Err(format!("cannot write to stdout: {e}")),
            (None, Err(e)) => Err(format!("cannot write to stdout: {e}")),
            (None, Ok(())) => Ok(()),
        }
    }
}

macro_rules! out {
    ($($t:tt)*) => { $crate::stdout::write(format_args!($($t)*)) };
}

macro_rules! outln {
    ($($t:tt)*) => { $crate::stdout::write(format_args!("{}\n", format_args!($($t)*))) };
}

mod agents_cli;
mod bisect_cli;
mod plot;
mod report;
pub mod store;
mod sweep;
mod timeseries;

#[derive(Parser)]
#[command(
    name = "reclaimlab",
    version,
    about = "A faithful user-space model of Linux page reclaim"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario (or trace) under one policy and print the kernel's counters.
    Run(RunArgs),
    /// Run one scenario under several policies and print them side by side.
    Compare(CompareArgs),
    /// List the policies.
    Policies,
    /// List the built-in scenarios.
    Scenarios,
    /// The behaviour table: every way the modelled kernels differ, with its first kernel,
    /// upstream commit, kernel functions and requirements (each is a switch of policy strings).
    Behaviours(BehavioursArgs),
    /// Write a scenario's access stream to a reclaimlab trace file.
    Trace(TraceArgs),
    /// Measure the simulator's own speed (accesses per wall-clock second) and memory.
    Bench(BenchArgs),
    /// Miss-ratio curve of a trace: textbook LRU exactly from stack distances in one pass
    /// (optionally SHARDS-sampled), any other policy by a parallel sweep over sizes.
    Mrc(MrcArgs),
    /// Statistics of columns of numbers (a file or stdin): mean and 95% CI, Jain's index with a
    /// bootstrap 95% CI, and each column's 95% CI of the relative change against the first
    /// (Welch's t on the log ratio of the means).
    Stats(StatsArgs),
    /// Replay the validation workloads on real Debian kernels (6.1, 6.12, 7.2) under QEMU, with
    /// MGLRU off and on, and compare the kernels' counters with the model's (fidelity table).
    Validate(ValidateArgs),
    /// Run a grid of scenarios x policies x knobs x seeds (a TOML or JSON file), in parallel,
    /// keeping every run in the results store (a killed sweep resumes where it stopped).
    Sweep(sweep::SweepArgs),
    /// Plot results with matplotlib (through the Python package: `python3 -m reclaimlab.plot`).
    Plot(plot::PlotArgs),
    /// One self-contained HTML report of result files (compare --save, sweep --save).
    Report(report::ReportArgs),
    /// How much memory can a workload give back, and at what cost: each proactive-reclaim
    /// agent over a grid of its main parameter, against the same run without agents.
    SaveMemory(agents_cli::SaveMemoryArgs),
    /// Which MGLRU switch between a good and a bad policy moves a metric: a binary search over
    /// the switches that differ, each step judged by Welch's 95% test on --seeds runs against
    /// both ends (docs/bisect.md).
    Bisect(bisect_cli::BisectArgs),
}

#[derive(Args)]
struct BehavioursArgs {
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct MrcArgs {
    /// The trace.
    #[arg(long)]
    trace: PathBuf,
    /// Trace format: native, oracleGeneral, vscsi or csv.
    #[arg(long, default_value = "native")]
    format: String,
    /// `lru` (exact, one pass) or any policy (`classic`, `mglru:7.2`, `clock`...: one run per
    /// size with --cache-pages), comma-separated.
    #[arg(long, default_value = "lru")]
    policy: String,
    /// Cache sizes in pages, comma-separated (default: --points sizes up to the distinct pages).
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<u64>,
    /// Evenly spaced sizes up to the trace's distinct pages, when --sizes is not given.
    #[arg(long, default_value_t = 20)]
    points: u64,
    /// SHARDS fixed-rate spatial sampling (lru only): track pages whose hash falls below this
    /// rate, in (0, 1].
    #[arg(long)]
    sample_rate: Option<f64>,
    /// With --sample-rate: also compute the exact curve and report the sampling error.
    #[arg(long)]
    compare_exact: bool,
    /// Print JSON instead of CSV.
    #[arg(long)]
    json: bool,
    /// Parallel runs of the policy sweep (0: one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// The results store of the policy sweep's runs (default: the user's cache directory,
    /// as for compare).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Run the whole policy sweep, reading and writing no results store.
    #[arg(long)]
    no_store: bool,
}

#[derive(Args)]
struct ValidateArgs {
    /// Run a whole suite: every workload x kernel x mode, --boots fresh boots each. `--suite`
    /// alone is the default suite (one vCPU, serial replay); `--suite smp2` the concurrent one
    /// (two vCPUs on multi-threaded TCG, processes replaying in parallel); `--suite readahead`
    /// one vCPU with the kernel's default readahead (128 KiB) and fault-around (64 KiB);
    /// `--suite steady` one vCPU and a trace ten times as long (the policies' steady state).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "default")]
    suite: Option<String>,
    /// Workloads (comma-separated; `tiny` or suite names, see --list).
    #[arg(long, value_delimiter = ',')]
    workload: Vec<String>,
    /// Kernels: 6.1, 6.12, 7.2 (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    kernel: Vec<String>,
    /// Modes: classic (lru_gen enabled 0), mglru (7) (comma-separated; default both).
    #[arg(long, value_delimiter = ',')]
    mode: Vec<String>,
    /// Fresh boots per workload x kernel x mode.
    #[arg(long, default_value_t = 3)]
    boots: u32,
    /// Cache of kernels, disk images and builds (default $XDG_CACHE_HOME/reclaimlab or
    /// ~/.cache/reclaimlab).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Results directory (default with --suite: validation/results/DATE); each finished cell is
    /// saved in it, then fidelity.md, fidelity.json and packages.txt.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the cells already saved in --out instead of booting them again.
    #[arg(long)]
    resume: bool,
    /// Only recompute the table from the cells saved in --out (no boots).
    #[arg(long)]
    table_only: bool,
    /// Rerun the model side of the cells saved in --out with this build's model (the kernel
    /// runs stay as recorded), save them and recompute the table (no boots).
    #[arg(long)]
    remodel: bool,
    /// List the workloads.
    #[arg(long)]
    list: bool,
    /// Parse a recorded console log of --workload and print it in the result schema (JSON).
    #[arg(long, value_name = "LOG")]
    parse_console: Option<PathBuf>,
    /// A prebuilt static replayer (default: built from this workspace).
    #[arg(long)]
    replayer: Option<PathBuf>,
    /// Seconds a boot may take before it is killed.
    #[arg(long, default_value_t = 900)]
    timeout: u64,
    /// Let the guest clock follow host time instead of the instruction count (-icount
    /// shift=4,sleep=off): time-based kernel decisions then vary from boot to boot.
    #[arg(long)]
    host_clock: bool,
}

#[derive(Args)]
struct StatsArgs {
    /// A file of whitespace- or comma-separated columns with an optional header; - for stdin.
    input: PathBuf,
    /// The values the numbers can take: the mean's 95% CI is cut at its edges (real: not cut;
    /// nonnegative: counts, rates, times; unit: ratios in [0, 1] such as a hit ratio).
    #[arg(long, value_enum, default_value_t = DomainArg::Real)]
    domain: DomainArg,
}

/// `--interleave`: whether other tasks run during a reclaimer's isolated batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Interleave {
    Auto,
    #[value(alias = "true")]
    On,
    #[value(alias = "false")]
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum DomainArg {
    Real,
    Nonnegative,
    Unit,
}

impl From<DomainArg> for reclaimlab::stats::Domain {
    fn from(d: DomainArg) -> Self {
        match d {
            DomainArg::Real => Self::Real,
            DomainArg::Nonnegative => Self::NonNegative,
            DomainArg::Unit => Self::Unit,
        }
    }
}

#[derive(Args)]
struct BenchArgs {
    /// Scenarios to time, comma-separated.
    #[arg(long, default_value = "zipf,mixed-rw,mmap-zipf")]
    scenarios: String,
    /// Policies to time, comma-separated.
    #[arg(long, default_value = "classic,lru")]
    policies: String,
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Repetitions per cell (the best is reported).
    #[arg(long, default_value_t = 3)]
    reps: u32,
    /// Also measure memory per simulated page frame of each policy: the peak RSS difference
    /// between seq-scan on a 4 GiB and on a 1 GiB machine (every frame used), in child
    /// processes.
    #[arg(long)]
    memory: bool,
    /// Instead of the speed table: wall time per simulated access of each scenario at scales
    /// 1/64, 1/16, 1/4 and 1 of its size (up to --max-time simulated seconds each).
    #[arg(long)]
    scaling: bool,
    /// With --scaling: simulated seconds per run.
    #[arg(long, default_value_t = 1.0)]
    max_time: f64,
    /// With --scaling: the scales, comma-separated (fractions like 1/64 allowed).
    #[arg(long, default_value = "1/64,1/16,1/4,1")]
    scales: String,
}

#[derive(Args, Clone)]
struct WorkloadArgs {
    /// A built-in scenario (see `reclaimlab scenarios`); omit with --trace.
    scenario: Option<String>,
    /// Replay a trace file instead of a built-in scenario.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Trace format of --trace: native (the default), oracleGeneral, vscsi or csv.
    #[arg(long)]
    format: Option<String>,
    /// Size of the scenario: 1 = the micro-scenarios' 64 MiB machine and the seed scenarios'
    /// own size; default: 1 for the micro-scenarios, a per-scenario fraction for the seed
    /// scenarios (see `reclaimlab scenarios`).
    #[arg(long)]
    scale: Option<f64>,
    /// Seed of the access generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Memory of a trace replay's machine, MiB [default: 64].
    #[arg(long)]
    memory_mib: Option<u64>,
    /// Pages available to the LRU: textbook caches hold exactly N pages; the kernel policies
    /// get the least memory that leaves at least N pages above the high watermark (the run's
    /// `capacity_pages` says what they got). Not with --memory-mib.
    #[arg(long, value_name = "N")]
    cache_pages: Option<u64>,
    /// Swap of a trace replay's machine: none (the default), zram or disk.
    #[arg(long)]
    swap: Option<String>,
    /// Device holding a trace replay's files: nvme (the default), hdd, ramdisk or pmem.
    #[arg(long)]
    device: Option<String>,
    /// Stop after this much simulated time, seconds.
    #[arg(long)]
    max_time: Option<f64>,
    /// Check every invariant after every event (slow).
    #[arg(long)]
    check: bool,
    /// vm.swappiness (0-200).
    #[arg(long)]
    swappiness: Option<u32>,
    /// The file device's queue/read_ahead_kb [default: 128]; 0 turns readahead off.
    #[arg(long, value_name = "KB")]
    read_ahead_kb: Option<u32>,
    /// /sys/kernel/debug/fault_around_bytes [default: 65536]; 4096 turns fault-around off.
    #[arg(long, value_name = "BYTES")]
    fault_around_bytes: Option<u64>,
    /// Simulated CPUs [default: the scenario's machine; 1 for a trace replay]. Threads share
    /// them with kswapd and the flusher (docs/model.md, "CPUs").
    #[arg(long, value_name = "N")]
    cpus: Option<u32>,
    /// Tasks on other CPUs run while a reclaimer has a batch isolated, before each folio it
    /// examines (docs/model.md §1, "Reclaimers meet at the folio lock"). auto: on where the
    /// machine has its real size and more than one CPU (a trace replay, or a scenario at
    /// --scale 1 other than the miniature file-anon-mix-mini) and for a scaled-down seed
    /// scenario down to the scale it derives (fio-pmem from 1/1024, ycsb-b from 1/16), off
    /// otherwise; on and off need more than one CPU. `--interleave` alone means on
    #[arg(long, value_enum, value_name = "WHEN", num_args = 0..=1,
          default_value_t = Interleave::Auto, default_missing_value = "on")]
    interleave: Interleave,
    /// Override a cost of the simulated clock, e.g. --cost zram_compress_ns=2000 (repeatable;
    /// names as in docs/model.md, "Costs").
    #[arg(long, value_name = "NAME=NS")]
    cost: Vec<String>,
    /// MGLRU: /sys/kernel/mm/lru_gen/enabled (0x0001 core, 0x0002 page-table walks, 0x0004
    /// non-leaf PMD accessed bits; also y/n), as the kernel parses it.
    #[arg(long)]
    enabled: Option<String>,
    /// MGLRU: /sys/kernel/mm/lru_gen/min_ttl_ms (0 disables thrashing prevention).
    #[arg(long)]
    min_ttl_ms: Option<u64>,
    /// Turn on behaviours: any for mglru policies, the classical path's for classic ones
    /// (comma-separated; see `reclaimlab policies` and `reclaimlab behaviours`).
    #[arg(long, value_delimiter = ',')]
    with: Vec<String>,
    /// Turn off behaviours (as --with names them).
    #[arg(long, value_delimiter = ',')]
    without: Vec<String>,
    /// MGLRU: write this to /sys/kernel/debug/lru_gen at a simulated time, "MS:COMMAND"
    /// (e.g. "500:- 2 0 5 60 1000"); repeatable.
    #[arg(long, value_name = "MS:CMD")]
    lru_gen_cmd: Vec<String>,
    /// MGLRU: a proactive-reclaim schedule file: one "MS COMMAND" per line (# comments).
    #[arg(long)]
    lru_gen_schedule: Option<PathBuf>,
    /// MGLRU: record /sys/kernel/debug/lru_gen every this many simulated ms.
    #[arg(long)]
    lru_gen_sample_ms: Option<u64>,
    /// memory.max of a memcg of the scenario, "PATH=SIZE" (SIZE in bytes with an optional
    /// K, M, G or T suffix, or max, as the kernel parses memory.max); repeatable.
    #[arg(long, value_name = "PATH=SIZE")]
    memory_max: Vec<String>,
    /// Record the counters (vmstat, each memcg's memory.current and memory.stat, MGLRU's
    /// generation sizes) every this many simulated ms: the result's `timeseries`.
    #[arg(long, value_name = "MS")]
    sample_ms: Option<u64>,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    w: WorkloadArgs,
    /// Policy: classic[:6.1|:6.12][+behaviour|-behaviour...], mglru[:KERNEL][+behaviour...],
    /// lru, clock, fifo.
    #[arg(long, default_value = "classic")]
    policy: String,
    /// Kernel version for kernel policies (overrides the one in --policy).
    #[arg(long)]
    kernel: Option<String>,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
    /// Print /sys/kernel/debug/lru_gen (MGLRU) at the end of the run.
    #[arg(long)]
    lru_gen: bool,
    /// Print /sys/kernel/debug/lru_gen_full (MGLRU) at the end of the run.
    #[arg(long)]
    lru_gen_full: bool,
    /// Also write the JSON result to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// With --sample-ms: write the time series to this file (written atomically), as CSV or
    /// JSON lines by its extension (.csv, .jsonl/.json) or --timeseries-format.
    #[arg(long, value_name = "FILE")]
    timeseries: Option<PathBuf>,
    /// The format of --timeseries: csv or jsonl.
    #[arg(long, value_name = "FORMAT")]
    timeseries_format: Option<String>,
    /// Attach a user-space memory agent (senpai, memory-high, oomd, lru-gen-age,
    /// damon-reclaim), with its upstream defaults unless overridden; repeatable. The run is
    /// also made without agents, for the slowdown and memory saved (`vs_no_agents`).
    #[arg(long, value_name = "NAME[:KEY=VALUE,...]")]
    agent: Vec<String>,
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    w: WorkloadArgs,
    /// Comma-separated policies, the first is the baseline.
    #[arg(long, default_value = "classic,lru")]
    policies: String,
    /// Run each policy with this many seeds (seed, seed+1, ...) and report means with 95%
    /// CIs and Welch 95% CIs of the relative change against the first policy (6, as in the
    /// seeds); 1 prints the single runs side by side.
    #[arg(long, default_value_t = 6)]
    seeds: u64,
    /// Parallel runs (0 = all cores); results are identical to a serial run.
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Print every run's whole result as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// With --seeds: print the table as CSV.
    #[arg(long)]
    csv: bool,
    /// Also write every run's whole result as JSON to this file (written atomically), so a
    /// table and its raw data come from one set of runs.
    #[arg(long, value_name = "FILE")]
    save: Option<std::path::PathBuf>,
    /// The results store: an SQLite file that keeps every finished run, so a rerun (or a
    /// compare that was killed, run again) reuses them [default: $XDG_CACHE_HOME/reclaimlab/
    /// results.sqlite, or ~/.cache/reclaimlab/results.sqlite].
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Neither read nor write the results store: run everything.
    #[arg(long)]
    no_store: bool,
    /// Attach a user-space memory agent to every run (see `run --agent`); repeatable.
    #[arg(long, value_name = "NAME[:KEY=VALUE,...]")]
    agent: Vec<String>,
}

#[derive(Args)]
struct TraceArgs {
    /// A built-in scenario.
    scenario: String,
    /// Output file.
    #[arg(short, long)]
    output: PathBuf,
    /// Size of the scenario (default: the scenario's default scale).
    #[arg(long)]
    scale: Option<f64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The `reclaimlab` command: runs `std::env::args` and exits with its status.
pub fn main() -> ExitCode {
    match execute(std::env::args_os(), false) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reclaimlab: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Runs the command line `args` (the program name first) as `reclaimlab` would, with what it
/// prints on stdout captured: `Ok(stdout)`, or `Err(the one-line error)` where the command
/// would exit with status 2 (its stdout then is lost, as a failed command's output is
/// unusable). Progress and notes still go to stderr. Calls are serialised: stdout is one.
pub fn run_captured<I, T>(args: I) -> Result<Vec<u8>, String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    stdout::capture(true);
    let r = execute(args, true);
    let out = stdout::capture(false);
    r.map(|()| out)
}

/// The model version results are keyed by (see build.rs).
pub fn model_version() -> &'static str {
    store::MODEL_VERSION
}

/// The long options of a subcommand (`run`, `compare`, ...): (name, takes a value,
/// repeatable), for front ends that map their own arguments to options (Python's keyword
/// arguments); `None` for an unknown subcommand.
pub fn options_of(subcommand: &str) -> Option<Vec<(String, bool, bool)>> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let sub = cmd.find_subcommand(subcommand)?;
    Some(
        sub.get_arguments()
            .filter_map(|a| {
                let long = a.get_long()?;
                let action = a.get_action();
                Some((
                    long.to_string(),
                    action.takes_values(),
                    matches!(action, clap::ArgAction::Append),
                ))
            })
            .collect(),
    )
}

/// Parses and runs one command line; `captured`: in a library call (--help is printed, not
/// exited on).
fn execute<I, T>(args: I, captured: bool) -> Result<(), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() && !captured => e.exit(), // --help, --version
        Err(e) if !e.use_stderr() => {
            out!("{}", e.render());
            return Ok(());
        }
        Err(e) => {
            // One line, as every other bad input: clap's first line, without its "error: ".
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            return Err(format!(
                "{} (see --help)",
                first.trim_start_matches("error: ")
            ));
        }
    };
    let r = match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
        Cmd::Compare(a) => cmd_compare(a),
        Cmd::Policies => cmd_policies(),
        Cmd::Scenarios => cmd_scenarios(),
        Cmd::Behaviours(a) => cmd_behaviours(a),
        Cmd::Trace(a) => cmd_trace(a),
        Cmd::Bench(a) => cmd_bench(a),
        Cmd::Mrc(a) => cmd_mrc(a),
        Cmd::Stats(a) => cmd_stats(a),
        Cmd::Validate(a) => cmd_validate(a),
        Cmd::Sweep(a) => sweep::cmd_sweep(a),
        Cmd::Plot(a) => plot::cmd_plot(a),
        Cmd::Report(a) => report::cmd_report(a),
        Cmd::SaveMemory(a) => agents_cli::cmd_save_memory(a),
        Cmd::Bisect(a) => bisect_cli::cmd_bisect(a),
    };
    r.and_then(|()| stdout::finish())
}

/// Builds the scenario named on the command line (or a trace replay), with the overrides.
fn load_workload(w: &WorkloadArgs) -> Result<Scenario, String> {
    let mut scn = base_workload(w)?;
    if let Some(pages) = w.cache_pages {
        let got = reclaimlab::sim::fit_capacity(&mut scn, pages)?;
        if got != pages {
            eprintln!(
                "reclaimlab: --cache-pages {pages}: kernel policies get {got} pages ({} pages of \
                 memory is the least that leaves {pages} above the high watermark; a node has at \
                 least 256); textbook caches get {pages}",
                scn.machine.total_pages()
            );
        }
    }
    if let Some(s) = w.swappiness {
        scn.machine.swappiness = s;
    }
    if let Some(kb) = w.read_ahead_kb {
        scn.machine.read_ahead_kb = kb;
    }
    if let Some(b) = w.fault_around_bytes {
        scn.machine.fault_around_bytes = b;
    }
    if let Some(n) = w.cpus {
        scn.set_cpus(n)?;
    }
    scn.machine.interleave = interleave_of(w, &scn)?;
    for spec in &w.memory_max {
        let (path, pages) = options::parse_memory_max(spec)?;
        let memcg = scn
            .machine
            .memcgs
            .iter_mut()
            .find(|m| m.path == path)
            .ok_or_else(|| {
                format!(
                    "--memory-max {spec}: scenario '{}' has no memcg {path}",
                    scn.name
                )
            })?;
        memcg.max = pages.unwrap_or(u64::MAX);
    }
    for c in &w.cost {
        options::apply_cost(&mut scn.machine.cost, c)?;
    }
    scn.machine.validate()?;
    Ok(scn)
}

/// Whether the run interleaves tasks inside reclaim (`MachineConfig::interleave`). `auto` turns
/// it on where the machine has its real size, or a seed scenario's scale keeps its batches a
/// small share of its lists (`micro::interleaves_faithfully`): a batch is `SWAP_CLUSTER_MAX`
/// pages at any scale, so a scaled-down scenario that keeps its thread count lets its
/// concurrent reclaimers hold a share of its LRU lists the seed's machine never sees, and
/// `too_many_isolated` throttles them where the kernel would not (docs/model.md §1).
fn interleave_of(w: &WorkloadArgs, scn: &Scenario) -> Result<bool, String> {
    let one_cpu = scn.machine.cpus < 2;
    match w.interleave {
        Interleave::Auto => Ok(!one_cpu && interleaves_faithfully(w)),
        _ if one_cpu => Err(format!(
            "--interleave: scenario '{}' has one CPU, where no other task can run during \
             reclaim; give --cpus 2 or more",
            scn.name
        )),
        Interleave::On => Ok(true),
        Interleave::Off => Ok(false),
    }
}

/// A trace replay, or a built-in scenario at a scale where interleaving is faithful
/// (`micro::interleaves_faithfully`).
fn interleaves_faithfully(w: &WorkloadArgs) -> bool {
    match &w.scenario {
        Some(name) => micro::interleaves_faithfully(name, scale_of(name, w.scale)),
        None => true,
    }
}

/// Memory of a trace replay's machine when neither --memory-mib nor --cache-pages is given.
const DEFAULT_TRACE_MEMORY_MIB: u64 = 64;

/// The scenario or trace replay named on the command line, before overrides.
fn base_workload(w: &WorkloadArgs) -> Result<Scenario, String> {
    match (&w.scenario, &w.trace) {
        (Some(_), Some(_)) => Err("give a scenario or --trace, not both".into()),
        (None, None) => Err("no scenario given (see `reclaimlab scenarios`) and no --trace".into()),
        (Some(name), None) => {
            if w.memory_mib.is_some() {
                return Err(format!(
                    "--memory-mib sizes a trace replay's machine; scenario '{name}' has its own \
                     (use --scale or --cache-pages)"
                ));
            }
            micro::builtin(name, scale_of(name, w.scale))
        }
        (None, Some(path)) => {
            let format: TraceFormat = w
                .format
                .as_deref()
                .unwrap_or("native")
                .parse()
                .map_err(|e| format!("{e}"))?;
            if w.memory_mib.is_some() && w.cache_pages.is_some() {
                return Err("give --memory-mib or --cache-pages, not both".into());
            }
            let memory_mib = w.memory_mib.unwrap_or(DEFAULT_TRACE_MEMORY_MIB);
            if memory_mib < 4 {
                return Err("--memory-mib must be at least 4".into());
            }
            let pages = memory_mib
                .checked_mul(256)
                .ok_or("--memory-mib is too large")?;
            let mut m = reclaimlab::machine::MachineConfig::simple(pages);
            if let Some(n) = w.cache_pages {
                m.fit_lru_pages(n)?;
            }
            let pages = m.total_pages();
            m.file_device = DeviceProfile::by_name(w.device.as_deref().unwrap_or("nvme"))?;
            m.swap = match w.swap.as_deref().unwrap_or("none") {
                "none" => SwapConfig::None,
                "zram" => SwapConfig::Zram {
                    size_pages: pages,
                    compress_ratio: 3.0,
                },
                "disk" => SwapConfig::Device {
                    size_pages: 2 * pages,
                    device: DeviceProfile::nvme(),
                },
                s => {
                    return Err(format!(
                        "unknown --swap '{s}' (expected none, zram or disk)"
                    ))
                }
            };
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            Scenario::from_trace_file(&name, m, path, &format)
        }
    }
}

/// The scale given, or the scenario's default (1 for an unknown name: the lookup reports it).
fn scale_of(name: &str, scale: Option<f64>) -> f64 {
    scale.unwrap_or_else(|| micro::default_scale(name).unwrap_or(1.0))
}

/// The scale a run of `w` uses, for headers.
fn shown_scale(w: &WorkloadArgs) -> f64 {
    match &w.scenario {
        Some(name) => scale_of(name, w.scale),
        None => w.scale.unwrap_or(1.0),
    }
}

/// A policy string with `--kernel` replacing its kernel (its `+`/`-` behaviours and `@WALK`
/// kept).
fn parse_policy(s: &str, kernel: Option<&str>) -> Result<PolicySpec, String> {
    let Some(k) = kernel else {
        return s.parse();
    };
    let (name, rest) = s.split_at(s.find([':', '+', '-', '@']).unwrap_or(s.len()));
    let tail = match rest.strip_prefix(':') {
        Some(r) => &r[r.find(['+', '-', '@']).unwrap_or(r.len())..],
        None => rest,
    };
    format!("{name}:{k}{tail}").parse()
}

/// Applies the MGLRU run options (--enabled, --min-ttl-ms, --with, --without) to a policy.
fn with_mglru_options(spec: PolicySpec, w: &WorkloadArgs) -> Result<PolicySpec, String> {
    // Validate the options even where they do not apply (a classic or textbook policy).
    let enabled = w
        .enabled
        .as_deref()
        .map(options::parse_enabled)
        .transpose()?;
    for name in w.with.iter().chain(&w.without) {
        name.parse::<Switch>()?;
    }
    if let PolicySpec::Classic(mut k, walk) = spec {
        // The classical path's behaviours; MGLRU's apply to the mglru policies of the same
        // command (check_workload_options refuses them where no policy is mglru).
        let classic = |name: &String| name.parse::<Switch>().ok().filter(|b| b.outside_mglru());
        for b in w.with.iter().filter_map(classic) {
            k.behaviours = k.behaviours.with(b);
        }
        for b in w.without.iter().filter_map(classic) {
            k.behaviours = k.behaviours.without(b);
        }
        k.behaviours.check_requirements()?;
        return Ok(PolicySpec::Classic(k, walk));
    }
    let PolicySpec::Mglru(mut c) = spec else {
        return Ok(spec);
    };
    if let Some(e) = enabled {
        c.enabled = e;
    }
    if let Some(ms) = w.min_ttl_ms {
        c.min_ttl_ms = ms;
    }
    for name in &w.with {
        c.switches = c.switches.with(name.parse::<Switch>()?);
    }
    for name in &w.without {
        c.switches = c.switches.without(name.parse::<Switch>()?);
    }
    c.switches.check_requirements()?;
    Ok(PolicySpec::Mglru(c))
}

/// --max-time in simulated ns.
fn max_sim_ns(w: &WorkloadArgs) -> Result<Option<u64>, String> {
    w.max_time
        .map(|s| options::seconds_to_sim_ns(s, "--max-time"))
        .transpose()
}

/// --lru-gen-sample-ms in simulated ns.
fn lru_gen_sample_ns(w: &WorkloadArgs) -> Result<Option<u64>, String> {
    w.lru_gen_sample_ms
        .map(|ms| options::ms_to_sim_ns(ms, "--lru-gen-sample-ms"))
        .transpose()
}

/// Refuses options that would have no effect with the chosen workload and policies (each
/// named, before anything runs or is written).
fn check_workload_options(w: &WorkloadArgs, specs: &[PolicySpec]) -> Result<(), String> {
    let refuse = |opt: &str, why: &str| Err(format!("{opt} has no effect here: {why}"));
    if w.trace.is_none() {
        let trace_only = [
            ("--format", w.format.is_some()),
            ("--swap", w.swap.is_some()),
            ("--device", w.device.is_some()),
        ];
        if let Some((opt, _)) = trace_only.iter().find(|(_, given)| *given) {
            return refuse(
                opt,
                "it sets up a --trace replay; a built-in scenario has its own",
            );
        }
    } else if w.scale.is_some() {
        return refuse(
            "--scale",
            "it sizes a built-in scenario, not a --trace replay",
        );
    }
    let mglru: Vec<&reclaimlab::policy::mglru::MglruConfig> = specs
        .iter()
        .filter_map(|s| match s {
            PolicySpec::Mglru(c) => Some(c),
            _ => None,
        })
        .collect();
    if mglru.is_empty() {
        // Behaviours of the classical path apply to classic policies too.
        let reaches_classic = |names: &[String]| {
            specs.iter().any(|s| matches!(s, PolicySpec::Classic(..)))
                && names
                    .iter()
                    .all(|n| n.parse::<Switch>().is_ok_and(|b| b.outside_mglru()))
        };
        let mglru_only = [
            ("--with", !w.with.is_empty() && !reaches_classic(&w.with)),
            (
                "--without",
                !w.without.is_empty() && !reaches_classic(&w.without),
            ),
            ("--enabled", w.enabled.is_some()),
            ("--min-ttl-ms", w.min_ttl_ms.is_some()),
            ("--lru-gen-cmd", !w.lru_gen_cmd.is_empty()),
            ("--lru-gen-schedule", w.lru_gen_schedule.is_some()),
            ("--lru-gen-sample-ms", w.lru_gen_sample_ms.is_some()),
        ];
        if let Some((opt, _)) = mglru_only.iter().find(|(_, given)| *given) {
            return refuse(opt, "it is an MGLRU knob and no policy here is mglru");
        }
    }
    if specs.iter().all(|s| s.kernel().is_none()) {
        let kernel_only = [
            ("--swappiness", w.swappiness.is_some()),
            ("--read-ahead-kb", w.read_ahead_kb.is_some()),
            ("--fault-around-bytes", w.fault_around_bytes.is_some()),
            ("--check", w.check),
        ];
        if let Some((opt, _)) = kernel_only.iter().find(|(_, given)| *given) {
            return refuse(opt, "textbook caches have no kernel machine");
        }
    }
    if w.lru_gen_sample_ms == Some(0) {
        return Err("--lru-gen-sample-ms 0: expected a positive number of ms".into());
    }
    timeseries::sample_ns(w)?;
    let max = max_sim_ns(w)?;
    for (at, cmd) in lru_gen_schedule(w)? {
        for c in &mglru {
            options::check_lru_gen_command(c.switches, &cmd)?;
        }
        if max.is_some_and(|max| at > max) {
            return Err(format!(
                "lru_gen command '{cmd}' at {} ms would never run: --max-time ends the run first",
                at / 1_000_000
            ));
        }
    }
    Ok(())
}

/// Refuses a result in which a scheduled lru_gen command never ran (the run ended first).
fn check_lru_gen_ran(r: &RunResult, w: &WorkloadArgs) -> Result<(), String> {
    let schedule = lru_gen_schedule(w)?;
    if r.lru_gen_commands.len() < schedule.len() && r.policy.starts_with("mglru") {
        let (at, cmd) = &schedule[r.lru_gen_commands.len()];
        return Err(format!(
            "lru_gen command '{cmd}' at {} ms never ran under {}: the run ended at {:.3} s",
            at / 1_000_000,
            r.policy,
            r.sim_time_ns as f64 / 1e9
        ));
    }
    Ok(())
}

/// The scheduled lru_gen commands from --lru-gen-cmd and --lru-gen-schedule, in time order.
fn lru_gen_schedule(w: &WorkloadArgs) -> Result<Vec<(u64, String)>, String> {
    let mut out = parse_each(&w.lru_gen_cmd, options::parse_lru_gen_cmd)?;
    if let Some(path) = &w.lru_gen_schedule {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        out.extend(options::parse_lru_gen_schedule(
            &text,
            &path.display().to_string(),
        )?);
    }
    out.sort_by_key(|(t, _)| *t);
    Ok(out)
}

/// Runs with a progress bar on a terminal.
fn run_one(
    scn: &Scenario,
    spec: PolicySpec,
    w: &WorkloadArgs,
    agents: &[reclaimlab::agents::AgentSpec],
) -> Result<RunResult, String> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:40}] {pos}/{len} accesses ({eta})",
            )
            .expect("template")
            .progress_chars("=> "),
        );
        b.set_prefix(spec.to_string());
        b
    });
    let progress = |done: u64, total: u64| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    };
    let opts = RunOptions {
        seed: w.seed,
        check_invariants: w.check,
        max_sim_ns: max_sim_ns(w)?,
        progress: Some(&progress),
        lru_gen_sample_ns: lru_gen_sample_ns(w)?,
        lru_gen_schedule: lru_gen_schedule(w)?,
        sample_ns: timeseries::sample_ns(w)?,
        agents: agents.to_vec(),
    };
    let r = run(scn, spec, &opts);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r
}

/// Each of `given` (trimmed) parsed by `parse`; the first error stops it.
fn parse_each<T>(
    given: &[String],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    given.iter().map(|g| parse(g.trim())).collect()
}

/// As `parse_each`, or all of `all` when nothing is given.
fn parse_each_or_all<T: Clone>(
    given: &[String],
    all: &[T],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    if given.is_empty() {
        Ok(all.to_vec())
    } else {
        parse_each(given, parse)
    }
}

/// Writes a file atomically: a temporary next to it, then a rename.
///
/// The temporary file has an unpredictable name in the target's directory and is created
/// exclusively (O_EXCL, so a planted symlink is never followed); it is fsync'd and renamed
/// over `path`, and the directory is fsync'd. If `path` is a symlink, the rename replaces the
/// symlink itself with the new file and never writes through it. A failure (ENOSPC, no such
/// directory...) leaves neither the temporary nor a partial `path` behind.
fn write_atomic(path: &Path, data: &[u8]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".reclaimlab-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(data).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    // The rename itself survives a crash once the directory is on disk.
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(fail)
}

fn cmd_run(a: RunArgs) -> Result<(), String> {
    let spec = with_mglru_options(parse_policy(&a.policy, a.kernel.as_deref())?, &a.w)?;
    check_workload_options(&a.w, &[spec])?;
    let ts_format = timeseries::check_run_options(&a)?;
    if (a.lru_gen || a.lru_gen_full) && !matches!(spec, PolicySpec::Mglru(_)) {
        let opt = if a.lru_gen {
            "--lru-gen"
        } else {
            "--lru-gen-full"
        };
        return Err(format!("{opt} needs an mglru policy (not {spec})"));
    }
    if a.kernel.is_some() && spec.kernel().is_none() {
        return Err(format!(
            "--kernel has no effect here: {spec} is a textbook cache"
        ));
    }
    let agents = agents_cli::parse_agents(&a.agent)?;
    let scn = load_workload(&a.w)?;
    let mut r = run_one(&scn, spec, &a.w, &agents)?;
    if !agents.is_empty() {
        let base = run_one(&scn, spec, &a.w, &[])?;
        r.vs_no_agents = Some(reclaimlab::agents::effect(&base, &r));
    }
    check_lru_gen_ran(&r, &a.w)?;
    let json = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
    if let Some(out) = &a.out {
        write_atomic(out, json.as_bytes())?;
    }
    if let (Some(path), Some(format)) = (&a.timeseries, ts_format) {
        timeseries::write(path, format, r.timeseries.as_ref())?;
    }
    if a.json {
        outln!("{json}");
    } else {
        print_run(&r);
        agents_cli::print_effect(&r);
    }
    if a.lru_gen || a.lru_gen_full {
        let text = if a.lru_gen_full {
            &r.lru_gen_full
        } else {
            &r.lru_gen
        };
        out!("{}", text.as_deref().unwrap_or_default());
    }
    for c in &r.lru_gen_commands {
        eprintln!(
            "lru_gen at {} ms: '{}' -> {}",
            c.time_ns / 1_000_000,
            c.command,
            c.error
                .clone()
                .unwrap_or_else(|| format!("ok, {} pages freed", c.pages_freed))
        );
    }
    Ok(())
}

use reclaimlab::metrics::TABLE_COUNTERS;

fn print_run(r: &RunResult) {
    outln!(
        "scenario {}  policy {}  seed {}  capacity {} pages",
        r.scenario,
        r.policy,
        r.seed,
        r.capacity_pages
    );
    for (k, v) in r.headline() {
        outln!("  {k:<28} {}", fmt_num(v));
    }
    for k in TABLE_COUNTERS {
        if let Some(v) = r.vmstat.get(*k) {
            outln!("  {k:<28} {v}");
        }
    }
    for mc in &r.memcgs {
        if mc.path != "/" {
            outln!(
                "  memcg {:<22} current {} pages, max {}, oom_kill {}",
                mc.path,
                mc.current_pages,
                mc.max_pages.map_or("max".to_string(), |m| m.to_string()),
                mc.events["oom_kill"]
            );
        }
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.4}")
    }
}

fn cmd_compare(a: CompareArgs) -> Result<(), String> {
    if a.no_store && a.store.is_some() {
        return Err("give --store PATH or --no-store, not both".into());
    }
    let specs = a
        .policies
        .split(',')
        .map(|p| with_mglru_options(p.trim().parse::<PolicySpec>()?, &a.w))
        .collect::<Result<Vec<_>, _>>()?;
    if specs.is_empty() {
        return Err("--policies is empty".into());
    }
    check_workload_options(&a.w, &specs)?;
    if a.seeds == 0 {
        return Err("--seeds 0: expected at least one seed".into());
    }
    if a.csv && a.json {
        return Err("give --csv or --json, not both".into());
    }
    if a.csv && a.seeds == 1 {
        return Err("--csv has no effect here: it prints the --seeds table (use --json)".into());
    }
    if a.w.sample_ms.is_some() && !a.json && a.save.is_none() {
        return Err(
            "--sample-ms has no effect here: compare's table shows no time series (add --json \
             or --save FILE)"
                .into(),
        );
    }
    let scn = load_workload(&a.w)?;
    let seeds: Vec<u64> = if a.seeds > 1 {
        (0..a.seeds).map(|i| a.w.seed + i).collect()
    } else {
        vec![a.w.seed]
    };
    let matrix = compare_runs(&scn, &specs, &seeds, &a)?;
    for r in matrix.iter().flatten() {
        check_lru_gen_ran(r, &a.w)?;
    }
    if a.seeds > 1 {
        return compare_seeds(&scn, &specs, &seeds, &matrix, &a);
    }
    let results: Vec<RunResult> = matrix.into_iter().flatten().collect();
    if let Some(path) = &a.save {
        let json = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
        write_atomic(path, json.as_bytes())?;
    }
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    outln!(
        "scenario {} (scale {}, seed {}): {}",
        scn.name,
        shown_scale(&a.w),
        a.w.seed,
        scn.description
    );
    out!("{:<28}", "metric");
    for r in &results {
        out!(" {:>18}", r.policy);
    }
    outln!("");
    let table: Vec<Vec<(String, f64)>> = results.iter().map(|r| r.metrics()).collect();
    for (i, (k, _)) in table[0].iter().enumerate() {
        // Rows that are zero in every run say nothing.
        if table.iter().all(|row| row[i].1 == 0.0) {
            continue;
        }
        out!("{k:<28}");
        for row in &table {
            out!(" {:>18}", fmt_num(row[i].1));
        }
        outln!("");
    }
    Ok(())
}

fn cmd_policies() -> Result<(), String> {
    for (name, desc) in reclaimlab::policy::catalogue() {
        outln!("{name:<10} {desc}");
    }
    outln!("");
    outln!("MGLRU switches: the 2026 series (mglru:7.1 has none, mglru:7.2 all fifteen; add with");
    outln!("mglru:7.1+NAME or --with NAME, remove with mglru:7.2-NAME or --without NAME):");
    for w in Switch::SERIES {
        outln!("  {:<38} {}", w.name(), w.description());
        let needs: Vec<&str> = w.requires().iter().map(|r| r.name()).collect();
        match (w.commit(), needs.is_empty()) {
            (Some(c), true) => outln!("  {:<38}   commit {c}", ""),
            (Some(c), false) => outln!("  {:<38}   commit {c}; requires {}", "", needs.join(", ")),
            (None, _) => {}
        }
    }
    for w in Switch::DEBIAN_6_12_117 {
        outln!(
            "mglru:6.12 is Debian's 6.12.117, which already has {} (mglru:7.1 does not).",
            w.name()
        );
    }
    outln!("experimental, in no kernel:");
    outln!(
        "  {:<38} {}",
        Switch::FgPromotion.name(),
        Switch::FgPromotion.description()
    );
    outln!("beside the series in Debian's linux 7.2.13 (mglru:7.2.13 = mglru:7.2 and these):");
    for w in Switch::DEBIAN_7_2_13 {
        outln!("  {:<38} {}", w.name(), w.description());
    }
    outln!("and every earlier way the kernels differ (`reclaimlab behaviours`); classic takes the");
    outln!("16 of them its path reads, e.g. classic:6.1+folio-batch-31, classic:6.12-eevdf.");
    outln!("");
    outln!("Memcg walks of global reclaim (append @WALK, e.g. classic:6.12@heat, mglru:7.2@iter):");
    for w in reclaimlab::machine::MemcgWalk::ALL {
        outln!("  {:<10} {}", w.to_string(), w.description());
    }
    Ok(())
}

/// `reclaimlab behaviours`: the behaviour table, as text or JSON.
fn cmd_behaviours(a: BehavioursArgs) -> Result<(), String> {
    use reclaimlab::behaviour::TABLE;
    if a.json {
        let rows: Vec<serde_json::Value> = TABLE
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "description": r.description,
                    "upstream": r.upstream,
                    "first_kernel": r.first.to_string(),
                    "also_in": r.behaviour.also_in().iter().map(|k| k.to_string()).collect::<Vec<_>>(),
                    "functions": r.functions,
                    "requires": r.requires.iter().map(|b| b.name()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
        outln!("{text}");
        return Ok(());
    }
    outln!("Each kernel has every behaviour whose first kernel is at most it (experimental ones");
    outln!("only when asked) and those it is also in (6.12, Debian's 6.12.117, has one row of 7.2");
    outln!(
        "that 7.1 lacks); add with mglru:K+NAME or --with NAME, remove with -NAME or --without."
    );
    for r in &TABLE {
        outln!(
            "{:<42} {:<12} {}",
            r.name,
            r.first.to_string(),
            r.description
        );
        outln!("{:<42} {:<12} upstream: {}", "", "", r.upstream);
        let also: Vec<String> = r
            .behaviour
            .also_in()
            .iter()
            .map(|k| k.to_string())
            .collect();
        if !also.is_empty() {
            outln!("{:<42} {:<12} also in: {}", "", "", also.join(", "));
        }
        let needs: Vec<&str> = r.requires.iter().map(|b| b.name()).collect();
        if needs.is_empty() {
            outln!("{:<42} {:<12} touches: {}", "", "", r.functions.join(", "));
        } else {
            outln!(
                "{:<42} {:<12} touches: {}; requires {}",
                "",
                "",
                r.functions.join(", "),
                needs.join(", ")
            );
        }
    }
    Ok(())
}

fn cmd_scenarios() -> Result<(), String> {
    for b in micro::builtins() {
        outln!(
            "{:<18} default scale {:<10} {}",
            b.name,
            fmt_scale(b.default_scale),
            b.description
        );
    }
    Ok(())
}

/// A scale as "1" or "1/64".
fn fmt_scale(s: f64) -> String {
    if s >= 1.0 || s <= 0.0 {
        return fmt_num(s);
    }
    let inv = 1.0 / s;
    if (inv - inv.round()).abs() < 1e-9 {
        format!("1/{}", inv.round() as u64)
    } else {
        fmt_num(s)
    }
}

fn cmd_trace(a: TraceArgs) -> Result<(), String> {
    let scn = micro::builtin(&a.scenario, scale_of(&a.scenario, a.scale))?;
    let mut buf = Vec::new();
    let n = reclaimlab::workload::write_trace(&scn, a.seed, &mut buf).map_err(|e| e.to_string())?;
    write_atomic(&a.output, &buf)?;
    let _ = std::io::stdout().flush();
    eprintln!("wrote {n} accesses to {}", a.output.display());
    Ok(())
}

/// Peak resident memory of this process in KiB (VmHWM), if the kernel tells.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn cmd_bench(a: BenchArgs) -> Result<(), String> {
    if a.scaling {
        return bench_scaling(&a);
    }
    bench_speed(&a)?;
    if a.memory {
        bench_memory(&a)?;
    }
    Ok(())
}

/// Accesses per second of whole runs, best of `reps`.
fn bench_speed(a: &BenchArgs) -> Result<(), String> {
    outln!(
        "{:<12} {:<14} {:>12} {:>14} {:>16}",
        "scenario",
        "policy",
        "accesses",
        "accesses/s",
        "bytes/sim-page"
    );
    for name in a.scenarios.split(',') {
        let scn = micro::builtin(name.trim(), a.scale)?;
        let pages = scn.machine.total_pages();
        for p in a.policies.split(',') {
            let spec: PolicySpec = p.trim().parse()?;
            let mut best = f64::INFINITY;
            let mut accesses = 0;
            for _ in 0..a.reps.max(1) {
                let start = std::time::Instant::now();
                let r = run(
                    &scn,
                    spec,
                    &RunOptions {
                        seed: 1,
                        ..Default::default()
                    },
                )?;
                best = best.min(start.elapsed().as_secs_f64());
                accesses = r.accesses;
            }
            let bytes = reclaimlab::sim::model_bytes(&scn, spec)? as f64 / pages as f64;
            outln!(
                "{:<12} {:<14} {:>12} {:>14.0} {:>16.1}",
                scn.name,
                spec.to_string(),
                accesses,
                accesses as f64 / best,
                bytes
            );
        }
    }
    if let Some(kib) = peak_rss_kib() {
        outln!("peak RSS of this process: {kib} KiB");
    }
    Ok(())
}

/// One point of a miss-ratio curve.
struct MrcPoint {
    policy: String,
    cache_pages: u64,
    misses: u64,
    accesses: u64,
}

fn cmd_mrc(a: MrcArgs) -> Result<(), String> {
    use reclaimlab::mrc::{curve_error, even_sizes, PageKey, Shards, StackDistances};
    let format: TraceFormat = a.format.parse().map_err(|e| format!("{e}"))?;
    let policies: Vec<&str> = a.policy.split(',').map(str::trim).collect();
    let sampled = a.sample_rate.is_some();
    if sampled && policies != ["lru"] {
        return Err("--sample-rate samples the exact LRU curve: use it with --policy lru".into());
    }
    if a.compare_exact && !sampled {
        return Err("--compare-exact compares a sampled curve: give --sample-rate".into());
    }
    if a.points == 0 {
        return Err("--points must be at least 1".into());
    }
    if policies.iter().all(|&p| p == "lru") {
        // The exact curve comes from one pass, with no runs to share out or keep.
        let sweep_only = [
            ("--store", a.store.is_some()),
            ("--no-store", a.no_store),
            ("--jobs", a.jobs != 0),
        ];
        if let Some((opt, _)) = sweep_only.iter().find(|(_, given)| *given) {
            return Err(format!(
                "{opt} has no effect here: it is for the sweep of policies other than lru"
            ));
        }
    }
    if a.sizes.contains(&0) {
        return Err(
            "--sizes: a cache of 0 pages misses everything; give sizes of at least 1".into(),
        );
    }
    // One pass: exact distances (lru, or the truth for --compare-exact), SHARDS if asked.
    let need_exact = policies.contains(&"lru") && (!sampled || a.compare_exact);
    let mut exact = need_exact.then(StackDistances::new);
    let mut shards = a.sample_rate.map(Shards::new).transpose()?;
    let mut distinct = reclaimlab::hash::MixSet::default();
    let mut reader = reclaimlab::trace::open_records(&a.trace, &format)
        .map_err(|e| e.located(&a.trace).to_string())?;
    let mut accesses = 0u64;
    while let Some(r) = reader
        .next_record()
        .map_err(|e| e.located(&a.trace).to_string())?
    {
        accesses += 1;
        let key = PageKey::of(&r);
        if let Some(e) = &mut exact {
            e.access(key);
        } else if a.sizes.is_empty() && shards.is_none() {
            distinct.insert(key);
        }
        if let Some(s) = &mut shards {
            s.access(key);
        }
    }
    let distinct_pages = match (&exact, &shards) {
        (Some(e), _) => e.distinct(),
        (None, Some(s)) => s.distinct_estimate(),
        (None, None) => distinct.len() as u64,
    };
    let sizes = if a.sizes.is_empty() {
        even_sizes(distinct_pages.max(1), a.points)
    } else {
        a.sizes.clone()
    };
    let mut points = Vec::new();
    let mut push = |policy: &str, misses: Vec<u64>| {
        for (&size, m) in sizes.iter().zip(misses) {
            points.push(MrcPoint {
                policy: policy.to_string(),
                cache_pages: size,
                misses: m,
                accesses,
            });
        }
    };
    let mut error = None;
    if let Some(s) = &shards {
        let estimate = s.curve(&sizes);
        if let Some(e) = &exact {
            error = Some(curve_error(&e.curve(&sizes), &estimate, accesses));
        }
        push(&format!("lru (SHARDS {})", s.rate()), estimate);
    } else if let Some(e) = &exact {
        push("lru", e.curve(&sizes));
    }
    let swept: Vec<&str> = policies
        .iter()
        .copied()
        .filter(|&p| p != "lru" || sampled)
        .filter(|&p| !(p == "lru" && sampled))
        .collect();
    if !swept.is_empty() {
        for (policy, misses) in mrc_sweep(&a, &format, &swept, &sizes)? {
            push(&policy, misses);
        }
    }
    print_mrc(&points, error, a.json)
}

/// Misses of each policy at each size, from one run per (policy, size), in parallel.
fn mrc_sweep(
    a: &MrcArgs,
    format: &TraceFormat,
    policies: &[&str],
    sizes: &[u64],
) -> Result<Vec<(String, Vec<u64>)>, String> {
    let specs = policies
        .iter()
        .map(|p| p.parse::<PolicySpec>())
        .collect::<Result<Vec<_>, _>>()?;
    let name = a
        .trace
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // One first pass over the trace; each size is a copy with its own machine.
    let base = Scenario::from_trace_file(
        &name,
        reclaimlab::machine::MachineConfig::simple(256),
        &a.trace,
        format,
    )?;
    let mut scenarios = Vec::with_capacity(sizes.len());
    for &size in sizes {
        let mut scn = base.clone();
        reclaimlab::sim::fit_capacity(&mut scn, size)?;
        scenarios.push(scn);
    }
    let jobs: Vec<(usize, usize)> = (0..specs.len())
        .flat_map(|p| (0..sizes.len()).map(move |s| (p, s)))
        .collect();
    // The results store: a run is keyed by the trace's contents, the policy and the machine
    // of its size (as compare keys its runs).
    let store = match (&a.store, a.no_store) {
        (Some(_), true) => return Err("give --store PATH or --no-store, not both".into()),
        (_, true) => None,
        (path, false) => Some(store::Store::open(
            &path.clone().unwrap_or_else(store::default_path),
        )?),
    };
    let options: Vec<String> = match &store {
        None => Vec::new(),
        Some(_) => {
            let (sha256, bytes) = sha256_file(&a.trace)?;
            scenarios
                .iter()
                .map(|scn| {
                    let v = serde_json::json!({
                        "trace": {"file": name, "format": format.to_string(),
                                  "sha256": sha256, "bytes": bytes},
                        "mrc_sweep": true,
                        "machine": serde_json::to_value(&scn.machine).map_err(|e| e.to_string())?,
                    });
                    serde_json::to_string(&v).map_err(|e| e.to_string())
                })
                .collect::<Result<_, String>>()?
        }
    };
    let key = |p: usize, s: usize| store::RunKey {
        scenario: &name,
        scale: "1",
        policy: specs[p].to_string(),
        policy_config: format!("{:?}", specs[p]),
        seed: 0,
        options: &options[s],
    };
    let known: Vec<Option<u64>> = match &store {
        None => vec![None; jobs.len()],
        Some(st) => jobs
            .iter()
            .map(|&(p, s)| Ok(st.get(&key(p, s))?.map(|r| r.misses)))
            .collect::<Result<_, String>>()?,
    };
    let reused = known.iter().flatten().count();
    if let (Some(st), true) = (&store, reused > 0) {
        eprintln!(
            "reused {reused} of {} runs from the store {}",
            jobs.len(),
            st.path().display()
        );
    }
    let threads = match a.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<u64, String>>>> = known
        .iter()
        .map(|k| std::sync::Mutex::new(k.map(Ok)))
        .collect();
    let done: Vec<bool> = known.iter().map(Option::is_some).collect();
    let bar = RunsBar::new("mrc", &done);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(p, s)) = jobs.get(i) else { break };
                if done[i] {
                    continue;
                }
                let progress = |done: u64, expected: u64| bar.progress(i, done, expected);
                let opts = RunOptions {
                    progress: bar.shown().then_some(&progress as &dyn Fn(u64, u64)),
                    ..Default::default()
                };
                let r = run(&scenarios[s], specs[p], &opts);
                if let (Some(st), Ok(result)) = (&store, &r) {
                    if let Err(e) = st.put(&key(p, s), result) {
                        bar.println(&format!("reclaimlab: warning: {e}: run not stored"));
                    }
                }
                let r = r.map(|r| r.misses);
                bar.finished(i);
                *results[i].lock().expect("result slot") = Some(r);
            });
        }
    });
    bar.clear();
    let mut flat = results
        .into_iter()
        .map(|m| m.into_inner().expect("result slot").expect("every job ran"));
    specs
        .iter()
        .map(|spec| {
            let misses = sizes
                .iter()
                .map(|_| flat.next().expect("job"))
                .collect::<Result<Vec<u64>, String>>()?;
            Ok((spec.to_string(), misses))
        })
        .collect()
}

fn print_mrc(points: &[MrcPoint], error: Option<(f64, f64)>, json: bool) -> Result<(), String> {
    if json {
        let rows: Vec<serde_json::Value> = points
            .iter()
            .map(|p| {
                serde_json::json!({
                    "policy": p.policy,
                    "cache_pages": p.cache_pages,
                    "misses": p.misses,
                    "accesses": p.accesses,
                    "miss_ratio": p.misses as f64 / p.accesses.max(1) as f64,
                })
            })
            .collect();
        let mut out = serde_json::json!({ "curve": rows });
        if let Some((mean, max)) = error {
            out["sampling_error"] = serde_json::json!({"mean_abs": mean, "max_abs": max});
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    outln!("policy,cache_pages,misses,accesses,miss_ratio");
    for p in points {
        outln!(
            "{},{},{},{},{:.6}",
            p.policy,
            p.cache_pages,
            p.misses,
            p.accesses,
            p.misses as f64 / p.accesses.max(1) as f64
        );
    }
    if let Some((mean, max)) = error {
        eprintln!(
            "SHARDS error against the exact curve: mean absolute {:.4}%, max {:.4}%",
            mean * 100.0,
            max * 100.0
        );
    }
    Ok(())
}

/// Peak RSS (KiB) of `reclaimlab ARGS` run as a child process (`wait4`'s ru_maxrss).
fn child_peak_rss_kib(args: &[&str]) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("bench: {e}"))?;
    let child = std::process::Command::new(exe)
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("bench: cannot run a child: {e}"))?;
    let mut status = 0;
    // SAFETY: rusage is plain data, zero is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child spawned above, which nothing else waits for.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    if pid < 0 || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!(
            "bench: child 'reclaimlab {}' failed",
            args.join(" ")
        ));
    }
    Ok(usage.ru_maxrss as u64)
}

/// Memory per simulated page frame, two ways, from child processes' peak RSS:
/// - frames of the machine: the same workload (zipf) on a 4 GiB and a 64 GiB machine
///   (`--cache-pages`); frames the workload never uses are never touched;
/// - frames in use: seq-scan on a 1 GiB and a 4 GiB machine, which it fills (its file, twice
///   the size of memory, adds two page-cache slots per frame).
fn bench_memory(a: &BenchArgs) -> Result<(), String> {
    outln!(
        "\n{:<14} {:>22} {:>22} {:>20}",
        "policy",
        "B/frame of machine",
        "B/frame in use",
        "128 GiB in use (est)"
    );
    let gib = |g: u64| g << 18;
    let seq_pages = |scale: f64| micro::builtin("seq-scan", scale).map(|s| s.machine.total_pages());
    let (seq_small, seq_large) = (seq_pages(16.0)?, seq_pages(64.0)?);
    for p in a.policies.split(',') {
        let p = p.trim();
        let zipf = |pages: u64| {
            child_peak_rss_kib(&[
                "run",
                "zipf",
                "--cache-pages",
                &pages.to_string(),
                "--policy",
                p,
            ])
        };
        let seq =
            |scale: &str| child_peak_rss_kib(&["run", "seq-scan", "--scale", scale, "--policy", p]);
        let per = |small: u64, large: u64, pages: u64| {
            (large.saturating_sub(small) * 1024) as f64 / pages as f64
        };
        let machine = per(zipf(gib(4))?, zipf(gib(64))?, gib(64) - gib(4));
        let (r_small, r_large) = (seq("16")?, seq("64")?);
        let in_use = per(r_small, r_large, seq_large - seq_small);
        let est = (r_small * 1024) as f64 + in_use * (gib(128) - seq_small) as f64;
        outln!(
            "{p:<14} {machine:>22.1} {in_use:>22.1} {:>16.2} GiB",
            est / (1u64 << 30) as f64
        );
    }
    Ok(())
}

/// A positive number written as a decimal or a fraction (`0.25`, `1/64`).
fn parse_fraction(text: &str) -> Result<f64, String> {
    let bad = || format!("'{text}' is not a positive number or fraction such as 1/64");
    let value = match text.trim().split_once('/') {
        Some((n, d)) => {
            let (n, d): (f64, f64) = (
                n.trim().parse().map_err(|_| bad())?,
                d.trim().parse().map_err(|_| bad())?,
            );
            n / d
        }
        None => text.trim().parse().map_err(|_| bad())?,
    };
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(bad())
    }
}

/// Wall time per simulated access at growing scales: flat means cost linear in the work.
fn bench_scaling(a: &BenchArgs) -> Result<(), String> {
    outln!(
        "{:<16} {:<14} {:>10} {:>14} {:>10} {:>12}",
        "scenario",
        "policy",
        "scale",
        "accesses",
        "wall s",
        "ns/access"
    );
    if !(a.max_time.is_finite() && a.max_time > 0.0) {
        return Err(format!(
            "--max-time {}: expected a positive number of seconds",
            a.max_time
        ));
    }
    let max_sim_ns = Some((a.max_time * 1e9) as u64);
    let scales = a
        .scales
        .split(',')
        .map(parse_fraction)
        .collect::<Result<Vec<f64>, String>>()?;
    for name in a.scenarios.split(',') {
        let name = name.trim();
        for p in a.policies.split(',') {
            let spec: PolicySpec = p.trim().parse()?;
            for &scale in &scales {
                let scn = micro::builtin(name, scale)?;
                let opts = RunOptions {
                    seed: 1,
                    max_sim_ns,
                    ..Default::default()
                };
                let start = std::time::Instant::now();
                let r = run(&scn, spec, &opts)?;
                let wall = start.elapsed().as_secs_f64();
                outln!(
                    "{:<16} {:<14} {:>10} {:>14} {:>10.2} {:>12.1}",
                    name,
                    spec.to_string(),
                    if scale >= 1.0 {
                        format!("{scale}")
                    } else {
                        format!("1/{}", (1.0 / scale).round())
                    },
                    r.accesses,
                    wall,
                    wall * 1e9 / r.accesses.max(1) as f64
                );
            }
        }
    }
    Ok(())
}

/// A progress bar of runs on stderr (runs done of the total, and an ETA), drawn only when
/// stderr is a terminal. Each run counts in thousandths as it goes, so the ETA moves between
/// runs too; runs read from the results store count as done from the start.
struct RunsBar {
    bar: Option<indicatif::ProgressBar>,
    /// Thousandths of each run done (by job index).
    units: Vec<std::sync::atomic::AtomicU64>,
    done: std::sync::atomic::AtomicUsize,
    total: usize,
}

const BAR_UNITS: u64 = 1000;

impl RunsBar {
    /// A bar over `total` runs, those with `done[i]` already done.
    fn new(label: &str, done: &[bool]) -> RunsBar {
        use std::sync::atomic::{AtomicU64, AtomicUsize};
        let total = done.len();
        let already = done.iter().filter(|&&d| d).count();
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(total as u64 * BAR_UNITS);
            b.set_style(
                indicatif::ProgressStyle::with_template("{prefix} [{bar:40}] {msg} ({eta} left)")
                    .expect("template")
                    .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            b.set_position(already as u64 * BAR_UNITS);
            b.set_message(format!("{already}/{total} runs"));
            b.reset_eta();
            b.enable_steady_tick(std::time::Duration::from_millis(250));
            b
        });
        RunsBar {
            bar,
            units: done
                .iter()
                .map(|&d| AtomicU64::new(if d { BAR_UNITS } else { 0 }))
                .collect(),
            done: AtomicUsize::new(already),
            total,
        }
    }

    fn shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Run `job` has done `done` of its `expected` accesses.
    fn progress(&self, job: usize, done: u64, expected: u64) {
        if let Some(b) = &self.bar {
            let u = (done.saturating_mul(BAR_UNITS) / expected.max(1)).min(BAR_UNITS - 1);
            let prev = self.units[job].fetch_max(u, std::sync::atomic::Ordering::Relaxed);
            if u > prev {
                b.inc(u - prev);
            }
        }
    }

    /// Run `job` has finished.
    fn finished(&self, job: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        let prev = self.units[job].swap(BAR_UNITS, Relaxed);
        let n = self.done.fetch_add(1, Relaxed) + 1;
        if let Some(b) = &self.bar {
            b.inc(BAR_UNITS.saturating_sub(prev));
            b.set_message(format!("{n}/{} runs", self.total));
        }
    }

    /// A line on stderr that does not tear the bar.
    fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// SHA-256 (hex) and length of a file's contents.
fn sha256_file(path: &Path) -> Result<(String, u64), String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut f = std::fs::File::open(path).map_err(err)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(err)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        len += n as u64;
    }
    let hex = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((hex, len))
}

/// The options part of a stored run's key: canonical JSON of every option that can change a
/// run's result (the scenario's name, scale, policy and seed are keys of their own). Besides
/// the options as given, it holds the machine they produced (memory, watermarks, swap,
/// devices, costs, swappiness, memcgs) and, for a trace, the SHA-256 of its contents.
fn options_fingerprint(
    w: &WorkloadArgs,
    scn: &Scenario,
    opts: &reclaimlab::sim::MatrixOptions,
) -> Result<String, String> {
    let trace = match &w.trace {
        Some(path) => {
            let (sha256, bytes) = sha256_file(path)?;
            serde_json::json!({
                "file": scn.name,
                "format": w.format,
                "sha256": sha256,
                "bytes": bytes,
            })
        }
        None => serde_json::Value::Null,
    };
    let v = serde_json::json!({
        "trace": trace,
        "memory_mib": w.memory_mib,
        "cache_pages": w.cache_pages,
        "swap": w.swap,
        "device": w.device,
        "swappiness": w.swappiness,
        "read_ahead_kb": w.read_ahead_kb,
        "fault_around_bytes": w.fault_around_bytes,
        "cpus": w.cpus,
        "interleave": w.interleave.to_possible_value().map(|v| v.get_name().to_string()),
        "cost": w.cost,
        "enabled": w.enabled,
        "min_ttl_ms": w.min_ttl_ms,
        "with": w.with,
        "without": w.without,
        "check": opts.check_invariants,
        "max_sim_ns": opts.max_sim_ns,
        "lru_gen_sample_ns": opts.lru_gen_sample_ns,
        "lru_gen_schedule": opts.lru_gen_schedule,
        "memory_max": w.memory_max,
        "sample_ns": opts.sample_ns,
        "agents": opts.agents.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        "machine": serde_json::to_value(&scn.machine).map_err(|e| e.to_string())?,
    });
    serde_json::to_string(&v).map_err(|e| e.to_string())
}

/// Every policy x seed of a compare, `[policy][seed]`: the runs the results store has are read
/// from it, the others run in parallel (`--jobs`) and each is stored as soon as it finishes,
/// in a transaction of its own. The matrix is the same whichever runs came from the store.
fn compare_runs(
    scn: &Scenario,
    specs: &[PolicySpec],
    seeds: &[u64],
    a: &CompareArgs,
) -> Result<Vec<Vec<RunResult>>, String> {
    use reclaimlab::sim::{run_matrix_with, MatrixHooks, MatrixOptions};
    let opts = MatrixOptions {
        check_invariants: a.w.check,
        max_sim_ns: max_sim_ns(&a.w)?,
        lru_gen_sample_ns: lru_gen_sample_ns(&a.w)?,
        lru_gen_schedule: lru_gen_schedule(&a.w)?,
        sample_ns: timeseries::sample_ns(&a.w)?,
        agents: agents_cli::parse_agents(&a.agent)?,
    };
    let store = if a.no_store {
        None
    } else {
        let path = a.store.clone().unwrap_or_else(store::default_path);
        Some(store::Store::open(&path)?)
    };
    let options = match &store {
        Some(_) => options_fingerprint(&a.w, scn, &opts)?,
        None => String::new(),
    };
    let scale = shown_scale(&a.w).to_string();
    let key = |p: usize, s: usize| store::RunKey {
        scenario: &scn.name,
        scale: &scale,
        policy: specs[p].to_string(),
        policy_config: format!("{:?}", specs[p]),
        seed: seeds[s],
        options: &options,
    };
    let total = specs.len() * seeds.len();
    let mut known: Vec<Vec<Option<RunResult>>> = Vec::new();
    if let Some(st) = &store {
        for p in 0..specs.len() {
            known.push(
                (0..seeds.len())
                    .map(|s| st.get(&key(p, s)))
                    .collect::<Result<_, _>>()?,
            );
        }
        let reused = known.iter().flatten().filter(|r| r.is_some()).count();
        if reused > 0 {
            eprintln!(
                "reused {reused} of {total} runs from the store {}",
                st.path().display()
            );
        }
    }
    let done: Vec<bool> = if known.is_empty() {
        vec![false; total]
    } else {
        known.iter().flatten().map(Option::is_some).collect()
    };
    let bar = RunsBar::new("compare", &done);
    let warned = std::sync::atomic::AtomicBool::new(false);
    let finished = |p: usize, s: usize, r: &Result<RunResult, String>| {
        if let (Some(st), Ok(r)) = (&store, r) {
            if let Err(e) = st.put(&key(p, s), r) {
                if !warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    bar.println(&format!(
                        "reclaimlab: warning: {e}: finished runs are not being stored"
                    ));
                }
            }
        }
        bar.finished(p * seeds.len() + s);
    };
    let progress = |p: usize, s: usize, done: u64, expected: u64| {
        bar.progress(p * seeds.len() + s, done, expected);
    };
    let hooks = MatrixHooks {
        progress: bar
            .shown()
            .then_some(&progress as &reclaimlab::sim::MatrixProgress<'_>),
        finished: Some(&finished),
    };
    let results = run_matrix_with(scn, specs, seeds, a.jobs, &opts, known, &hooks);
    bar.clear();
    results
}

/// The change against the baseline when neither varies across seeds (a deterministic
/// metric): "=" when equal, else the one relative change "(exact)"; no interval to speak of.
fn exact_change(base: &[f64], xs: &[f64]) -> Option<String> {
    let constant = |v: &[f64]| v.iter().all(|&x| x == v[0]);
    if base.is_empty() || xs.is_empty() || !constant(base) || !constant(xs) {
        return None;
    }
    let (b, x) = (base[0], xs[0]);
    Some(if x == b {
        "=".to_string()
    } else if b != 0.0 {
        format!(
            "{} (exact)",
            reclaimlab::stats::fmt_pct((x / b - 1.0) * 100.0)
        )
    } else {
        format!("diff {} (exact)", fmt_num(x - b))
    })
}

/// `compare --seeds N`: per metric the mean and 95% CI per policy (cut at the edges of the
/// metric's domain) and the 95% CI of the relative change against the first policy (Welch's t
/// on the log ratio of the means; where a mean is 0, the Welch CI of the difference, in the
/// metric's units, prefixed "diff"), from `results[policy][seed]`.
fn compare_seeds(
    scn: &Scenario,
    specs: &[PolicySpec],
    seeds: &[u64],
    results: &[Vec<RunResult>],
    a: &CompareArgs,
) -> Result<(), String> {
    use reclaimlab::metrics::metric_domain;
    use reclaimlab::stats::{fmt_pct, summary_in, welch_relative_change};
    if let Some(path) = &a.save {
        let json = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
        write_atomic(path, json.as_bytes())?;
    }
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    let table: Vec<Vec<Vec<(String, f64)>>> = results
        .iter()
        .map(|per_policy| per_policy.iter().map(|r| r.metrics()).collect())
        .collect();
    let metrics: Vec<String> = table[0][0].iter().map(|(k, _)| k.clone()).collect();
    let column = |p: usize, m: usize| -> Vec<f64> { table[p].iter().map(|r| r[m].1).collect() };
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (m, name) in metrics.iter().enumerate() {
        // Rows that are zero in every run say nothing.
        if (0..specs.len()).all(|p| column(p, m).iter().all(|&x| x == 0.0)) {
            continue;
        }
        let base = column(0, m);
        for (p, spec) in specs.iter().enumerate() {
            let xs = column(p, m);
            let s = summary_in(&xs, metric_domain(name));
            let vs = if p == 0 {
                "baseline".to_string()
            } else if let Some(exact) = exact_change(&base, &xs) {
                exact
            } else {
                match welch_relative_change(&base, &xs) {
                    Some(w) if w.significant => match w.rel {
                        Some(r) => format!("{} .. {}", fmt_pct(r.pct.0), fmt_pct(r.pct.1)),
                        None => format!("diff {} .. {}", fmt_num(w.ci95.0), fmt_num(w.ci95.1)),
                    },
                    Some(_) => "no significance".to_string(),
                    None => "-".to_string(),
                }
            };
            rows.push(vec![
                name.to_string(),
                spec.to_string(),
                fmt_num(s.mean),
                fmt_num(s.ci95_low),
                fmt_num(s.ci95_high),
                vs,
            ]);
        }
    }
    let header = [
        "metric",
        "policy",
        "mean",
        "ci95_low",
        "ci95_high",
        "vs_first_welch95",
    ];
    if a.csv {
        outln!("{}", header.join(","));
        for r in &rows {
            outln!("{}", r.join(","));
        }
        return Ok(());
    }
    outln!(
        "scenario {} (scale {}, seeds {}..={}): {}",
        scn.name,
        shown_scale(&a.w),
        seeds[0],
        seeds[seeds.len() - 1],
        scn.description
    );
    outln!(
        "{:<14} {:<22} {:>16} {:>33} {}",
        header[0],
        header[1],
        header[2],
        "95% CI",
        header[5]
    );
    for r in &rows {
        outln!(
            "{:<14} {:<22} {:>16} {:>16} .. {:<14} {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5]
        );
    }
    Ok(())
}

fn cmd_stats(a: StatsArgs) -> Result<(), String> {
    let text = if a.input.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| e.to_string())?;
        s
    } else {
        std::fs::read_to_string(&a.input).map_err(|e| format!("{}: {e}", a.input.display()))?
    };
    let columns = reclaimlab::stats::parse_columns(&text)?;
    out!(
        "{}",
        reclaimlab::stats::stats_report(&columns, a.domain.into())
    );
    Ok(())
}

fn cmd_validate(a: ValidateArgs) -> Result<(), String> {
    use reclaimlab_validate::{guest::Mode, packages::KernelKey, suite};
    if a.list {
        for w in suite::suite().into_iter().chain([suite::tiny()]) {
            outln!("{:<20} {}", w.name, w.description);
        }
        for name in ["smp2", "readahead", "steady"] {
            outln!("suite {name}:");
            for w in suite::suite_named(name)? {
                outln!("{:<20} {}", w.name, w.description);
            }
        }
        return Ok(());
    }
    let workloads = if let Some(name) = &a.suite {
        if !a.workload.is_empty() {
            return Err("give --suite or --workload, not both".into());
        }
        suite::suite_named(name)?
    } else {
        parse_each(&a.workload, suite::workload)?
    };
    let kernels = parse_each_or_all(&a.kernel, &KernelKey::ALL, KernelKey::parse)?;
    let modes = parse_each_or_all(&a.mode, &Mode::ALL, Mode::parse)?;
    if let Some(log) = &a.parse_console {
        let [w] = &workloads[..] else {
            return Err("--parse-console needs exactly one --workload".into());
        };
        let text = std::fs::read_to_string(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let report = reclaimlab_validate::console::parse_console(&text)?;
        let (h, r) = w.trace();
        let (_, plan) = reclaimlab_validate::guest::build_plan(&h, &r)?;
        if report.records != plan.len() as u64 {
            return Err(format!(
                "{}: {} records, workload {} has {}",
                log.display(),
                report.records,
                w.name,
                plan.len()
            ));
        }
        let res = reclaimlab_validate::console::to_run_result(
            &report,
            w.name,
            &format!("kernel {}", report.release),
            &plan,
        );
        outln!(
            "{}",
            serde_json::to_string_pretty(&res).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    let out = a.out.clone().or_else(|| {
        (a.suite.is_some() || a.table_only || a.remodel)
            .then(|| PathBuf::from("validation/results").join(reclaimlab_validate::today()))
    });
    let title = "reclaimlab fidelity: real kernels vs the model";
    if a.table_only || a.remodel {
        let out = out.expect("set above");
        let cells = if a.remodel {
            reclaimlab_validate::remodel_cells(&out)?
        } else {
            reclaimlab_validate::load_cells(&out)?
        };
        if cells.is_empty() {
            return Err(format!("no cells in {}", out.display()));
        }
        out!(
            "{}",
            reclaimlab_validate::write_results(&out, &cells, title)?
        );
        return Ok(());
    }
    if workloads.is_empty() {
        return Err("give --suite, --workload NAME, --table-only or --list".into());
    }
    if a.boots == 0 {
        return Err("--boots must be at least 1".into());
    }
    let log = |m: &str| eprintln!("validate: {m}");
    let scratch_out;
    let out_dir = match &out {
        Some(o) => o.as_path(),
        None => {
            scratch_out =
                std::env::temp_dir().join(format!("reclaimlab-validate-{}", std::process::id()));
            scratch_out.as_path()
        }
    };
    let opts = reclaimlab_validate::Options {
        cache: a
            .cache
            .clone()
            .unwrap_or_else(reclaimlab_validate::packages::default_cache_dir),
        boots: a.boots,
        timeout: std::time::Duration::from_secs(a.timeout),
        replayer: a.replayer.clone(),
        console_dir: out.as_ref().map(|o| o.join("consoles")),
        icount: !a.host_clock,
        log: &log,
    };
    let cells = reclaimlab_validate::run_cells(
        &workloads,
        &kernels,
        &modes,
        out_dir,
        a.resume && out.is_some(),
        &opts,
    )?;
    let table = match &out {
        Some(o) => {
            let all = reclaimlab_validate::load_cells(o)?;
            reclaimlab_validate::write_results(o, &all, title)?
        }
        None => {
            let _ = std::fs::remove_dir_all(out_dir);
            reclaimlab_validate::fidelity::markdown(&cells, title)
        }
    };
    out!("{table}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::exact_change;

    #[test]
    fn deterministic_metrics_show_their_exact_change() {
        assert_eq!(
            exact_change(&[5.0, 5.0], &[5.0, 5.0, 5.0]).as_deref(),
            Some("=")
        );
        assert_eq!(
            exact_change(&[200.0; 6], &[201.0; 6]).as_deref(),
            Some("+0.50% (exact)")
        );
        assert_eq!(
            exact_change(&[0.0; 3], &[7.0; 3]).as_deref(),
            Some("diff 7 (exact)")
        );
        // Any variation: the interval methods decide.
        assert_eq!(exact_change(&[1.0, 2.0], &[3.0, 3.0]), None);
        assert_eq!(exact_change(&[3.0, 3.0], &[3.0, 4.0]), None);
    }
}
