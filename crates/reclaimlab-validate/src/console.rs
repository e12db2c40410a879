//! Parsing the guest's serial console into a [`GuestReport`], and the report into the
//! simulator's result schema ([`RunResult`]).
//!
//! The console carries sections, each opened by a line `=== NAME ===` (see `guest::init_script`
//! and the replayer): `reclaimlab guest v1`, `kernel`, `guest config`, `replay config`,
//! `vmstat before|after`, `memcg PATH before|after`, `lru_gen before|after`,
//! `meminfo before|after`, `misses`, `missmap`, `exits`, `replay end`, `guest done`, and on
//! failure `guest error` or `replay error`. Carriage returns are dropped; kernel messages
//! (`[ 12.345678] ...`) and anything before the first section are ignored.

use reclaimlab::metrics::{LatencySummary, MemcgResult, RunResult, ThreadResult};
use reclaimlab_replayer::PlanRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One memcg's files at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemcgSnap {
    pub current: u64,
    /// None = "max".
    pub max: Option<u64>,
    pub peak: Option<u64>,
    pub swap_current: Option<u64>,
    pub stat: BTreeMap<String, u64>,
    pub events: BTreeMap<String, u64>,
}

/// Per-process results of the replay.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcReport {
    pub pid: u32,
    pub accesses: u64,
    pub misses: u64,
    pub not_run: u64,
    pub killed: bool,
}

/// How fast one process of a concurrent replay went (the replayer's `progress` and
/// `schedstat` sections).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcProgress {
    pub pid: u32,
    /// Microseconds from the go to the start of its own records 0, `every`, 2 × `every`, ...,
    /// and last to the end of its last record.
    pub stamps_us: Vec<u64>,
    /// `/proc/PID/schedstat` after the replay: on a CPU, waiting on a run queue (ns), and
    /// time slices run.
    pub run_ns: Option<u64>,
    pub wait_ns: Option<u64>,
    pub slices: Option<u64>,
}

/// Everything one boot printed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestReport {
    pub release: String,
    pub version: String,
    /// `guest config` key/value lines (read back from the kernel).
    pub config: BTreeMap<String, String>,
    pub records: u64,
    pub vmstat_before: BTreeMap<String, u64>,
    pub vmstat_after: BTreeMap<String, u64>,
    pub memcg_before: BTreeMap<String, MemcgSnap>,
    pub memcg_after: BTreeMap<String, MemcgSnap>,
    pub lru_gen_before: Option<String>,
    pub lru_gen_after: Option<String>,
    /// kB values of /proc/meminfo.
    pub meminfo_before: BTreeMap<String, u64>,
    pub meminfo_after: BTreeMap<String, u64>,
    pub procs: Vec<ProcReport>,
    /// One bit per record in plan order (1 = miss), hex, as printed.
    pub missmap: String,
    pub exits: Vec<String>,
    pub elapsed_ms: u64,
    /// A concurrent replay's progress stamps: one per `progress_every` records of a process.
    pub progress_every: u64,
    pub progress: Vec<ProcProgress>,
    /// The replay's go on CLOCK_MONOTONIC (ns; `replay end`, `go_ns`).
    #[serde(default)]
    pub go_ns: Option<u64>,
    /// The kernel's periodic memcg statistics flushes (`flush_memcg_stats_dwork`) on
    /// CLOCK_MONOTONIC (ns), from the init's function trace (`memcg flushes`); None when the
    /// guest did not trace them.
    #[serde(default)]
    pub memcg_flush_ns: Option<Vec<u64>>,
}

impl GuestReport {
    /// The miss bit of record `i`.
    pub fn missed(&self, i: usize) -> bool {
        let nib = i / 4;
        self.missmap
            .as_bytes()
            .get(nib)
            .and_then(|c| (*c as char).to_digit(16))
            .is_some_and(|d| d & (8 >> (i % 4)) != 0)
    }

    /// A vmstat counter's change over the replay.
    pub fn vmstat_delta(&self, name: &str) -> u64 {
        let a = self.vmstat_after.get(name).copied().unwrap_or(0);
        let b = self.vmstat_before.get(name).copied().unwrap_or(0);
        a.saturating_sub(b)
    }
}

fn is_kernel_message(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('[')
        && t[1..]
            .trim_start()
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
        && t.contains(']')
}

fn num(s: &str, what: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("console: bad number '{}' in {what}", s.trim()))
}

fn key_value(line: &str, what: &str) -> Result<(String, u64), String> {
    let mut it = line.split_whitespace();
    match (it.next(), it.next(), it.next()) {
        (Some(k), Some(v), None) => Ok((k.to_string(), num(v, what)?)),
        _ => Err(format!("console: bad line '{line}' in {what}")),
    }
}

/// Splits a console log into (name, lines) sections.
pub fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for raw in text.split('\n') {
        let line = raw.replace('\r', "");
        if let Some(name) = line
            .trim()
            .strip_prefix("=== ")
            .and_then(|l| l.strip_suffix(" ==="))
        {
            out.push((name.to_string(), Vec::new()));
            continue;
        }
        if is_kernel_message(&line) || line.trim().is_empty() {
            continue;
        }
        if let Some((_, body)) = out.last_mut() {
            body.push(line);
        }
    }
    out
}

/// The process `pid`'s progress entry, made if new.
fn progress_of(r: &mut GuestReport, pid: u32) -> &mut ProcProgress {
    if let Some(i) = r.progress.iter().position(|p| p.pid == pid) {
        return &mut r.progress[i];
    }
    r.progress.push(ProcProgress {
        pid,
        ..ProcProgress::default()
    });
    r.progress.last_mut().expect("just pushed")
}

/// `every K`, then per process `pid P t t ...` continued by `more P t ...`: times that never
/// go back.
fn parse_progress(r: &mut GuestReport, body: &[String]) -> Result<(), String> {
    for l in body {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["every", k] => r.progress_every = num(k, "progress")?,
            [lead @ ("pid" | "more"), pid, ts @ ..] => {
                let pid = num(pid, "progress")? as u32;
                let p = progress_of(r, pid);
                if (*lead == "pid") != p.stamps_us.is_empty() {
                    return Err(format!("console: bad line '{l}' in progress"));
                }
                for t in ts {
                    let t = num(t, "progress")?;
                    if p.stamps_us.last().is_some_and(|&last| t < last) {
                        return Err(format!("console: progress of pid {pid} goes back in time"));
                    }
                    p.stamps_us.push(t);
                }
            }
            _ => return Err(format!("console: bad line '{l}' in progress")),
        }
    }
    if r.progress_every == 0 && !r.progress.is_empty() {
        return Err("console: progress without 'every'".into());
    }
    Ok(())
}

/// `trace on` then `t SECONDS.MICROSECONDS` per flush in time order, or `trace off` (the
/// kernel could not trace `flush_memcg_stats_dwork`).
fn parse_memcg_flushes(r: &mut GuestReport, body: &[String]) -> Result<(), String> {
    let bad = |l: &str| format!("console: bad line '{l}' in memcg flushes");
    for l in body {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["trace", "on"] => r.memcg_flush_ns = Some(Vec::new()),
            ["trace", "off"] => r.memcg_flush_ns = None,
            ["t", t] => {
                let (secs, us) = t.split_once('.').ok_or_else(|| bad(l))?;
                if us.len() != 6 {
                    return Err(bad(l));
                }
                let us = num(us, "memcg flushes")? * 1000;
                let ns = num(secs, "memcg flushes")?
                    .checked_mul(1_000_000_000)
                    .and_then(|s| s.checked_add(us))
                    .ok_or_else(|| bad(l))?;
                let v = r.memcg_flush_ns.as_mut().ok_or_else(|| bad(l))?;
                if v.last().is_some_and(|&last| ns < last) {
                    return Err("console: memcg flushes go back in time".into());
                }
                v.push(ns);
            }
            _ => return Err(bad(l)),
        }
    }
    Ok(())
}

/// `pid P run_ns X wait_ns Y slices Z` per process.
fn parse_schedstat(r: &mut GuestReport, body: &[String]) -> Result<(), String> {
    for l in body {
        let f: Vec<&str> = l.split_whitespace().collect();
        let ["pid", pid, "run_ns", run, "wait_ns", wait, "slices", slices] = f.as_slice() else {
            return Err(format!("console: bad line '{l}' in schedstat"));
        };
        let (run, wait, slices) = (
            num(run, "schedstat")?,
            num(wait, "schedstat")?,
            num(slices, "schedstat")?,
        );
        let p = progress_of(r, num(pid, "schedstat")? as u32);
        p.run_ns = Some(run);
        p.wait_ns = Some(wait);
        p.slices = Some(slices);
    }
    Ok(())
}

/// What a log without the guest's first section says: the kernel died (or hung) before
/// `/init`, so nothing of the replay ran.
pub const NEVER_REACHED_INIT: &str = "never reached /init";

/// What a failed boot's error adds when its kernel died of an `int3` trap in kernel text: a
/// breakpoint that live code patching (`text_poke_bp`: static branches, ftrace) left for the
/// other CPUs, which multi-threaded TCG can execute after the patch is over.
pub const INT3_OOPS: &str = "int3 oops, a live-patching race of the emulator";

/// Whether a console log shows an `int3` oops (`Oops: int3: ...`).
pub fn int3_oops(text: &str) -> bool {
    text.lines()
        .any(|l| l.contains("] Oops: int3") || l.starts_with("Oops: int3"))
}

/// Parses a whole console log. A log that does not reach `replay end` is an error naming the
/// last section seen (or the guest's own error message).
pub fn parse_console(text: &str) -> Result<GuestReport, String> {
    let secs = sections(text);
    let Some(first) = secs.iter().position(|(n, _)| n == "reclaimlab guest v1") else {
        return Err(format!(
            "console: no '=== reclaimlab guest v1 ===' line (the guest {NEVER_REACHED_INIT})"
        ));
    };
    let secs = &secs[first..];
    let mut r = GuestReport::default();
    let mut ended = false;
    for (name, body) in secs {
        match name.as_str() {
            "guest error" | "replay error" => {
                return Err(format!(
                    "guest failed: {}",
                    body.first().map(|s| s.trim()).unwrap_or("(no message)")
                ))
            }
            "kernel" => {
                for l in body {
                    if let Some(v) = l.strip_prefix("release ") {
                        r.release = v.trim().to_string();
                    } else if let Some(v) = l.strip_prefix("version ") {
                        r.version = v.trim().to_string();
                    }
                }
            }
            "guest config" => {
                for l in body {
                    if let Some((k, v)) = l.split_once(' ') {
                        if k == "memory.max" {
                            if let Some((p, m)) = v.split_once(' ') {
                                r.config.insert(format!("memory.max {p}"), m.trim().into());
                            }
                        } else {
                            r.config.insert(k.to_string(), v.trim().to_string());
                        }
                    }
                }
            }
            "replay config" => {
                for l in body {
                    if let Some(v) = l.strip_prefix("records ") {
                        r.records = num(v, "replay config")?;
                    }
                }
            }
            "vmstat before" | "vmstat after" => {
                let mut m = BTreeMap::new();
                for l in body {
                    let (k, v) = key_value(l, name)?;
                    m.insert(k, v);
                }
                if name.ends_with("before") {
                    r.vmstat_before = m;
                } else {
                    r.vmstat_after = m;
                }
            }
            "meminfo before" | "meminfo after" => {
                let mut m = BTreeMap::new();
                for l in body {
                    let mut it = l.split_whitespace();
                    if let (Some(k), Some(v)) = (it.next(), it.next()) {
                        m.insert(k.trim_end_matches(':').to_string(), num(v, name)?);
                    }
                }
                if name.ends_with("before") {
                    r.meminfo_before = m;
                } else {
                    r.meminfo_after = m;
                }
            }
            "memcg flushes" => parse_memcg_flushes(&mut r, body)?,
            n if n.starts_with("memcg ") => {
                let rest = &n["memcg ".len()..];
                let (path, when) = rest
                    .rsplit_once(' ')
                    .ok_or_else(|| format!("console: bad section '{n}'"))?;
                let mut s = MemcgSnap::default();
                for l in body {
                    let (k, v) = l
                        .split_once(' ')
                        .ok_or_else(|| format!("console: bad line '{l}' in {n}"))?;
                    match k {
                        "current" => s.current = num(v, n)?,
                        "max" => s.max = (v.trim() != "max").then(|| num(v, n)).transpose()?,
                        "peak" => s.peak = Some(num(v, n)?),
                        "swap.current" => s.swap_current = Some(num(v, n)?),
                        "stat" => {
                            let (k, v) = key_value(v, n)?;
                            s.stat.insert(k, v);
                        }
                        "events" => {
                            let (k, v) = key_value(v, n)?;
                            s.events.insert(k, v);
                        }
                        _ => return Err(format!("console: unknown line '{l}' in {n}")),
                    }
                }
                match when {
                    "before" => r.memcg_before.insert(path.to_string(), s),
                    "after" => r.memcg_after.insert(path.to_string(), s),
                    _ => return Err(format!("console: bad section '{n}'")),
                };
            }
            "lru_gen before" => r.lru_gen_before = Some(body.join("\n") + "\n"),
            "lru_gen after" => r.lru_gen_after = Some(body.join("\n") + "\n"),
            "misses" => {
                for l in body {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    if f.len() != 10
                        || f[0] != "pid"
                        || f[2] != "accesses"
                        || f[4] != "misses"
                        || f[6] != "not_run"
                        || f[8] != "killed"
                    {
                        return Err(format!("console: bad line '{l}' in misses"));
                    }
                    r.procs.push(ProcReport {
                        pid: num(f[1], "misses")? as u32,
                        accesses: num(f[3], "misses")?,
                        misses: num(f[5], "misses")?,
                        not_run: num(f[7], "misses")?,
                        killed: f[9] == "1",
                    });
                }
            }
            "missmap" => {
                for l in body {
                    let t = l.trim();
                    if !t.chars().all(|c| c.is_ascii_hexdigit()) {
                        return Err(format!("console: bad line '{t}' in missmap"));
                    }
                    r.missmap.push_str(t);
                }
            }
            "progress" => parse_progress(&mut r, body)?,
            "schedstat" => parse_schedstat(&mut r, body)?,
            "exits" => r.exits = body.iter().map(|l| l.trim().to_string()).collect(),
            "replay end" => {
                ended = true;
                for l in body {
                    if let Some(v) = l.strip_prefix("elapsed_ms ") {
                        r.elapsed_ms = num(v, "replay end")?;
                    }
                    if let Some(v) = l.strip_prefix("go_ns ") {
                        r.go_ns = Some(num(v, "replay end")?);
                    }
                }
            }
            _ => {}
        }
    }
    if !ended {
        let last = secs.last().map(|(n, _)| n.as_str()).unwrap_or("");
        return Err(format!(
            "console: the log ends before the replay finished (last section: '{last}')"
        ));
    }
    if r.vmstat_before.is_empty() || r.vmstat_after.is_empty() {
        return Err("console: vmstat before/after missing".into());
    }
    let counted: u64 = r.procs.iter().map(|p| p.accesses + p.not_run).sum();
    if counted != r.records {
        return Err(format!(
            "console: {counted} accesses reported for {} records",
            r.records
        ));
    }
    if (r.missmap.len() as u64) < r.records.div_ceil(4) {
        return Err("console: missmap shorter than the replay".into());
    }
    Ok(r)
}

/// vmstat names that are gauges (their value after the replay is reported); every other name
/// is an event counter (its change over the replay is reported).
pub fn is_gauge(name: &str) -> bool {
    name.starts_with("nr_")
        && !matches!(
            name,
            "nr_vmscan_write"
                | "nr_vmscan_immediate_reclaim"
                | "nr_dirtied"
                | "nr_written"
                | "nr_foll_pin_acquired"
                | "nr_foll_pin_released"
                | "nr_unstable"
        )
}

/// memory.stat names that are event counts (reported as changes); sizes are reported as is.
pub fn is_memcg_event(name: &str) -> bool {
    name.starts_with("pg")
        || name.starts_with("workingset_")
        || name.starts_with("thp_")
        || name.starts_with("zswp")
}

fn zero_latency() -> LatencySummary {
    LatencySummary {
        mean_ns: 0.0,
        p50_ns: 0,
        p90_ns: 0,
        p95_ns: 0,
        p99_ns: 0,
        p999_ns: 0,
        max_ns: 0,
    }
}

/// The report in the simulator's result schema: counters under the same names and units
/// (vmstat events as changes over the replay, gauges after it; memory.stat sizes in bytes after,
/// its events as changes), misses from mincore(), `major` = misses that needed I/O (not a first
/// touch of anonymous memory, not an fd write: both need no read), hits = accesses − misses.
/// Times are emulation times and meaningless: `sim_time_ns` is the replay's guest wall time,
/// latencies are zero.
pub fn to_run_result(
    r: &GuestReport,
    scenario: &str,
    policy: &str,
    records: &[PlanRecord],
) -> RunResult {
    let mut vmstat = BTreeMap::new();
    for k in r.vmstat_after.keys() {
        let v = if is_gauge(k) {
            r.vmstat_after[k]
        } else {
            r.vmstat_delta(k)
        };
        vmstat.insert(k.clone(), v);
    }
    let mut memcgs = Vec::new();
    for (path, after) in &r.memcg_after {
        let before = r.memcg_before.get(path).cloned().unwrap_or_default();
        let mut stat = BTreeMap::new();
        for (k, v) in &after.stat {
            let v = if is_memcg_event(k) {
                v.saturating_sub(before.stat.get(k).copied().unwrap_or(0))
            } else {
                *v
            };
            stat.insert(k.clone(), v);
        }
        let events = after
            .events
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v.saturating_sub(before.events.get(k).copied().unwrap_or(0)),
                )
            })
            .collect();
        memcgs.push(MemcgResult {
            path: path.clone(),
            current_pages: after.current / 4096,
            max_pages: after.max.map(|m| m / 4096),
            swap_pages: after.swap_current.unwrap_or(0) / 4096,
            stat,
            events,
            ..Default::default()
        });
    }
    // Per-process major misses from the miss map.
    let mut major = vec![0u64; r.procs.len()];
    let mut seen_anon: Vec<std::collections::HashSet<u64>> =
        vec![Default::default(); r.procs.len()];
    for (i, rec) in records.iter().enumerate() {
        let p = rec.proc_index();
        if p >= major.len() {
            continue;
        }
        let first_anon = rec.is_anon() && seen_anon[p].insert(rec.page);
        if r.missed(i) && !first_anon && !(rec.is_write() && !rec.is_mmap() && !rec.is_anon()) {
            major[p] += 1;
        }
    }
    let accesses: u64 = r.procs.iter().map(|p| p.accesses).sum();
    let misses: u64 = r.procs.iter().map(|p| p.misses).sum();
    let threads = r
        .procs
        .iter()
        .zip(&major)
        .map(|(p, &maj)| ThreadResult {
            pid: p.pid,
            process: format!("pid{}", p.pid),
            accesses: p.accesses,
            misses: p.misses,
            major: maj,
            marks: 0,
            killed: p.killed,
            write_errors: 0,
            finish_ns: r.elapsed_ms * 1_000_000,
            mean_latency_ns: 0.0,
            requests: 0,
            request_mean_ns: 0.0,
            request_max_ns: 0,
            // The replayer does not read /proc/PID/stat or schedstat back.
            cpu: Default::default(),
        })
        .collect();
    let ratio = |x: u64| {
        if accesses == 0 {
            0.0
        } else {
            x as f64 / accesses as f64
        }
    };
    RunResult {
        scenario: scenario.to_string(),
        policy: policy.to_string(),
        seed: 0,
        // A real kernel's LRU capacity is not read back from the guest.
        capacity_pages: 0,
        sim_time_ns: r.elapsed_ms * 1_000_000,
        accesses,
        hits: accesses - misses,
        misses,
        major: major.iter().sum(),
        hit_ratio: ratio(accesses - misses),
        miss_ratio: ratio(misses),
        ops_per_sec: 0.0,
        latency: zero_latency(),
        latency_buckets_us: Vec::new(),
        oom_kills: r.vmstat_delta("oom_kill"),
        marks: 0,
        vmstat,
        meminfo: r.meminfo_after.clone(),
        memcgs,
        threads,
        lru_gen: r.lru_gen_after.clone(),
        lru_gen_full: None,
        lru_gen_samples: Vec::new(),
        lru_gen_commands: Vec::new(),
        fairness_workers: None,
        fairness_memcgs: None,
        requests: None,
        // The model's own figure; a real kernel has no counterpart.
        preemptions: 0,
        cpu: Default::default(),
        psi: None,
        agents: Vec::new(),
        vs_no_agents: None,
        timeseries: None,
    }
}
