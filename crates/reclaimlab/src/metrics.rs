//! The result schema shared by every policy and front end, and the latency histogram.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A log-linear latency histogram: 8 linear sub-buckets per power of two of nanoseconds
/// (relative error under 12.5%), fixed size, no allocation when recording.
#[derive(Clone, Debug)]
pub struct LatencyHist {
    buckets: Vec<u64>,
    pub count: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
}

const SUB: u32 = 8;

impl Default for LatencyHist {
    fn default() -> Self {
        LatencyHist {
            buckets: vec![0; (64 * SUB) as usize],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl LatencyHist {
    fn index(ns: u64) -> usize {
        if ns < SUB as u64 {
            return ns as usize;
        }
        let exp = 63 - ns.leading_zeros();
        let sub = (ns >> (exp - 3)) & (SUB as u64 - 1);
        ((exp - 2) * SUB + sub as u32) as usize
    }
    /// The upper bound of a bucket (the value reported for a percentile).
    fn upper(idx: usize) -> u64 {
        if idx < SUB as usize {
            return idx as u64;
        }
        let exp = idx as u32 / SUB + 2;
        let sub = idx as u64 % SUB as u64;
        ((SUB as u64 + sub + 1) << (exp - 3)) - 1
    }
    pub fn record(&mut self, ns: u64) {
        self.buckets[Self::index(ns)] += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }
    pub fn merge(&mut self, o: &LatencyHist) {
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
    }
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
    /// The value below which `q` (0..=1) of the samples fall (bucket upper bound).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::upper(i).min(self.max_ns);
            }
        }
        self.max_ns
    }
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            mean_ns: self.mean_ns(),
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p95_ns: self.quantile(0.95),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.max_ns,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// Per-thread results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ThreadResult {
    pub pid: u32,
    pub process: String,
    pub accesses: u64,
    pub misses: u64,
    pub major: u64,
    pub marks: u64,
    pub killed: bool,
    pub write_errors: u64,
    pub finish_ns: u64,
    pub mean_latency_ns: f64,
    /// Operations the thread completed (`OpEnd`; e.g. an app's launch, a client's requests),
    /// and their mean and longest duration.
    pub requests: u64,
    pub request_mean_ns: f64,
    pub request_max_ns: u64,
    /// Where the thread's time went (`utime`, `stime`, `sched_info.run_delay`, ...).
    #[serde(default)]
    pub cpu: ThreadCpu,
}

/// A thread's time: on a CPU in user and kernel mode, waiting for a CPU, and off it (device
/// waits, throttling, sleeps). Their sum is the thread's life.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ThreadCpu {
    /// User mode (`utime`): the application's work per access and its compute steps.
    pub user_ns: u64,
    /// Kernel mode on its behalf (`stime`): faults, allocation, direct reclaim, rmap and
    /// page-table walks, compression.
    pub sys_ns: u64,
    /// Runnable but waiting for a CPU (`sched_info.run_delay`, /proc/PID/schedstat's 2nd field).
    pub runqueue_wait_ns: u64,
    /// Waiting for a block device (`delayacct` blkio).
    pub iowait_ns: u64,
    /// Sleeping in `reclaim_throttle`, `balance_dirty_pages` or memory.high's penalty.
    pub throttled_ns: u64,
    /// Other sleeps: the workload's own, waiting for an OOM victim to exit.
    pub sleep_ns: u64,
}

/// Lock time by kernel path, in ns: the per-CPU batches' drains (`folio_batch_move_lru`:
/// lru_add, activation, deactivation), isolation off a list's tail (`isolate_lru_folios`,
/// MGLRU's `scan_folios`), the putback of an isolated batch (`move_folios_to_lru`), and
/// `lru_note_cost` (after a batch, or a workingset refault's).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct LockSites {
    pub batch_ns: u64,
    pub isolate_ns: u64,
    pub putback_ns: u64,
    pub note_cost_ns: u64,
}

impl LockSites {
    pub fn total(&self) -> u64 {
        self.batch_ns + self.isolate_ns + self.putback_ns + self.note_cost_ns
    }
}

/// CPU time of the whole run (`cpu` in --json): the tasks' (summed over threads) and the
/// kernel threads', and what the scheduler did.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CpuResult {
    /// Simulated CPUs (`--cpus`, or the scenario's machine).
    pub cpus: u32,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// kswapd's CPU time (`balance_pgdat`), all nodes.
    pub kswapd_ns: u64,
    /// The flusher's CPU time (`wb_workfn`: `->writepages`, `folio_mkclean`).
    pub flusher_ns: u64,
    pub runqueue_wait_ns: u64,
    pub iowait_ns: u64,
    pub throttled_ns: u64,
    pub sleep_ns: u64,
    /// Of the kernel time (tasks' and kthreads'), the time spent spinning on a lruvec's
    /// `lru_lock` while another context held it.
    #[serde(default)]
    pub lru_lock_wait_ns: u64,
    /// `lru_lock` holds that followed a hold by another CPU, each `lru_lock_handoff_ns` longer.
    #[serde(default)]
    pub lru_lock_handoffs: u64,
    /// `lru_lock_wait_ns` by the kernel path that waited (`machine::lru_lock::LockSite`).
    #[serde(default)]
    pub lru_lock_wait_by_site: LockSites,
    /// The time the lruvec locks were held (handoffs included), by the path that held them:
    /// the lock's busy time, as a profile's cycles inside the critical sections measure it.
    #[serde(default)]
    pub lru_lock_hold_by_site: LockSites,
    /// Of the sleep time, the time rmap walks that may sleep (`try_to_unmap`,
    /// `folio_mkclean`) waited for a munmap or exit holding the rmap lock for write; and how
    /// many `folio_referenced` walks found it so held and returned -1 (`rwc.contended`).
    #[serde(default)]
    pub rmap_lock_wait_ns: u64,
    #[serde(default)]
    pub rmap_trylock_failed: u64,
    /// `folio_trylock`s of reclaim that failed because a buffered write held the folio
    /// across its copy (the folio was kept, `machine/folio_lock.rs`).
    #[serde(default)]
    pub folio_trylock_failed: u64,
    /// Task-to-task switches of a CPU, task migrations between CPUs, and tasks preempted at
    /// the end of their slice or by a woken task (`nr_switches`, `nr_migrations`).
    pub context_switches: u64,
    pub migrations: u64,
    pub sched_preemptions: u64,
    /// Task steps that ran on other CPUs while a task was suspended in reclaim with a batch
    /// isolated (`machine::Nest`).
    #[serde(default)]
    pub nested_steps: u64,
}

/// The scenario's timed operations ("requests": a YCSB op, a sysbench transaction, a
/// Chrome client iteration, an app launch), each from an `OpBegin` to its `OpEnd`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RequestStats {
    /// Operations completed.
    pub total: u64,
    /// From the first OpBegin to the last OpEnd of the run (warm-up before excluded).
    pub window_ns: u64,
    /// `total` per second of the window.
    pub per_sec: f64,
    /// The sum of each thread's request rate over its own window (first OpBegin to last
    /// OpEnd): what a time-based run's total over its duration measures (seed 000's "Total
    /// requests" of clients that all run the whole time), for runs of fixed work whose threads
    /// end at different times, where `per_sec` divides by the slowest one's window.
    #[serde(default)]
    pub workers_per_sec: f64,
    /// Durations of the operations.
    pub latency: LatencySummary,
    /// Power-of-two buckets of the durations in seconds, as in seed 000's Chrome/Node report:
    /// [0,1), [1,2), [2,4), [4,8), ... s. A request does `scale` times the seed's work, so
    /// at small scales most land in [0,1): see `buckets_us`.
    pub buckets_s: Vec<u64>,
    /// The same in microseconds: [0,1), [1,2), [2,4), ... us.
    pub buckets_us: Vec<u64>,
    /// Jain's index (CoV, min/max, P10-P90) over the request rates of the threads that
    /// completed any (requests over the thread's own first-OpBegin-to-last-OpEnd window), and
    /// over those rates summed per memcg (the seed's fairness report, which uses totals over
    /// a common duration).
    pub fairness_workers: Option<crate::stats::Fairness>,
    pub fairness_memcgs: Option<crate::stats::Fairness>,
}

/// memory.current, memory.stat and memory.events of one memcg (hierarchical, kernel names).
/// Also deserialisable: the validation harness reads it back from result files.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MemcgResult {
    pub path: String,
    pub current_pages: u64,
    pub max_pages: Option<u64>,
    pub swap_pages: u64,
    pub stat: BTreeMap<String, u64>,
    pub events: BTreeMap<String, u64>,
    /// memory.current averaged over the run's simulated time (pages).
    #[serde(default)]
    pub current_mean_pages: f64,
    /// memory.peak: the highest memory.current of the run (pages).
    #[serde(default)]
    pub peak_pages: u64,
    /// memory.pressure (`psi.memory.{some,full}`).
    #[serde(default)]
    pub psi: crate::machine::psi::PsiResult,
}

/// Everything a run produces. Serialised with sorted keys: byte-identical for equal inputs.
/// Deserialisable too: a stored result read back serialises to the same JSON (with
/// serde_json's `float_roundtrip`, so every `f64` comes back bit for bit), which is what lets
/// the CLI's results store reuse runs without changing a table.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    pub policy: String,
    pub seed: u64,
    /// Pages available to the LRU: a textbook cache's capacity; for a kernel policy, the
    /// memory above the high watermarks or the workload's memcg limit, whichever is smaller.
    pub capacity_pages: u64,
    pub sim_time_ns: u64,
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub major: u64,
    pub hit_ratio: f64,
    pub miss_ratio: f64,
    pub ops_per_sec: f64,
    pub latency: LatencySummary,
    /// Power-of-two latency buckets: [0,1), [1,2), [2,4), ... microseconds, as counts.
    pub latency_buckets_us: Vec<u64>,
    pub oom_kills: u64,
    pub marks: u64,
    pub vmstat: BTreeMap<String, u64>,
    pub meminfo: BTreeMap<String, u64>,
    pub memcgs: Vec<MemcgResult>,
    pub threads: Vec<ThreadResult>,
    /// /sys/kernel/debug/lru_gen and lru_gen_full at the end of the run (MGLRU only).
    pub lru_gen: Option<String>,
    pub lru_gen_full: Option<String>,
    /// (simulated ns, lru_gen) samples over time: working-set estimation.
    pub lru_gen_samples: Vec<(u64, String)>,
    /// The outcome of every scheduled lru_gen command.
    pub lru_gen_commands: Vec<LruGenCommandResult>,
    /// Jain's index (with CoV, min/max, P10-P90) of each worker thread's throughput (accesses
    /// per simulated second of its life; background threads excluded), and of the throughput
    /// summed per memcg.
    pub fairness_workers: Option<crate::stats::Fairness>,
    pub fairness_memcgs: Option<crate::stats::Fairness>,
    /// Timed operations, when the scenario marks any (`Action::OpBegin`/`OpEnd`).
    pub requests: Option<RequestStats>,
    /// Model-only: how often a task was preempted inside the kernel (between reclaim
    /// priorities or charge and allocation retries) so that other tasks ran before it went on.
    pub preemptions: u64,
    /// CPU time of the tasks and kernel threads.
    #[serde(default)]
    pub cpu: CpuResult,
    /// /proc/pressure/memory at the end of the run (kernel policies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi: Option<crate::machine::psi::PsiResult>,
    /// What each attached agent did (none: the key is absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<crate::agents::AgentLog>,
    /// With agents: the same run without them, compared (`agents::effect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_no_agents: Option<crate::agents::AgentEffect>,
    /// Counters over simulated time (`--sample-ms`); absent from the JSON when not sampled,
    /// so a result's JSON without sampling is what it always was. Last: a sampled result's
    /// JSON is the unsampled one up to this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<crate::timeseries::TimeSeries>,
}

/// One scheduled write to the lru_gen debugfs file and its outcome.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LruGenCommandResult {
    pub time_ns: u64,
    pub command: String,
    pub ok: bool,
    /// The kernel's errno name (EINVAL, EEXIST, ERANGE) when it failed.
    pub error: Option<String>,
    /// memory.current reduction summed over memcgs, in pages.
    pub pages_freed: u64,
}

impl RunResult {
    /// Pages reclaimed by tasks themselves, global and memcg reclaim alike: the root memcg's
    /// hierarchical `pgsteal_direct` (/proc/vmstat's counts only global reclaim, as the
    /// kernel's do).
    pub fn direct_reclaim_pages(&self) -> u64 {
        self.memcgs
            .iter()
            .find(|m| m.path == "/")
            .and_then(|m| m.stat.get("pgsteal_direct").copied())
            .unwrap_or_else(|| self.vmstat.get("pgsteal_direct").copied().unwrap_or(0))
    }

    /// The main figures as (name, value) rows for tables.
    pub fn headline(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("accesses", self.accesses as f64),
            ("hit_ratio", self.hit_ratio),
            ("misses", self.misses as f64),
            ("major", self.major as f64),
            ("ops_per_sec", self.ops_per_sec),
            ("lat_mean_us", self.latency.mean_ns / 1e3),
            ("lat_p99_us", self.latency.p99_ns as f64 / 1e3),
            ("sim_time_s", self.sim_time_ns as f64 / 1e9),
            ("oom_kills", self.oom_kills as f64),
            ("marks", self.marks as f64),
            (
                "requests",
                self.requests.as_ref().map_or(0.0, |r| r.total as f64),
            ),
            (
                "requests_per_sec",
                self.requests.as_ref().map_or(0.0, |r| r.per_sec),
            ),
            (
                "requests_per_sec_workers",
                self.requests.as_ref().map_or(0.0, |r| r.workers_per_sec),
            ),
            (
                "req_lat_mean_us",
                self.requests
                    .as_ref()
                    .map_or(0.0, |r| r.latency.mean_ns / 1e3),
            ),
            (
                "req_lat_p95_us",
                self.requests
                    .as_ref()
                    .map_or(0.0, |r| r.latency.p95_ns as f64 / 1e3),
            ),
            (
                "direct_reclaim_ms",
                self.vmstat.get("direct_reclaim_ns").copied().unwrap_or(0) as f64 / 1e6,
            ),
            ("direct_reclaim_pages", self.direct_reclaim_pages() as f64),
        ]
    }
}

/// The kernel counters shown in tables (`reclaimlab run`, `compare`), /proc/vmstat names.
pub const TABLE_COUNTERS: &[&str] = &[
    "pgpgin",
    "pgpgout",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgrefill",
    "pgactivate",
    "pgdeactivate",
    "pgrotated",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "allocstall_movable",
    "oom_kill",
    "throttle_ns",
    "dirty_throttle_ns",
];

/// The seed Chrome/Node report's latency buckets in seconds: [0,1), [1,2), ... [128,∞).
pub const REQUEST_BUCKETS_S: usize = 9;

/// The domain of a [`RunResult::metrics`] row, for intervals that respect it: hit ratios and
/// Jain's indices (0 when missing) lie in [0, 1], every other row (counts, rates, times,
/// coefficients of variation) is nonnegative.
pub fn metric_domain(name: &str) -> crate::stats::Domain {
    match name {
        "hit_ratio" | "jain_workers" | "jain_memcgs" | "req_jain_workers" | "req_jain_memcgs" => {
            crate::stats::Domain::Unit
        }
        _ => crate::stats::Domain::NonNegative,
    }
}

impl RunResult {
    /// Every figure a comparison reports, as (name, value) rows in a fixed order: the headline,
    /// Jain's fairness over workers and memcgs (of throughput and of request rates), the
    /// request latency buckets in seconds, the kernel counters of `TABLE_COUNTERS`, and the
    /// model's preemption count. Missing values are 0, so rows line up across runs.
    pub fn metrics(&self) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = self
            .headline()
            .into_iter()
            .map(|(k, x)| (k.to_string(), x))
            .collect();
        let jain = |f: &Option<crate::stats::Fairness>| f.as_ref().map_or(0.0, |f| f.jain);
        let cov = |f: &Option<crate::stats::Fairness>| f.as_ref().map_or(0.0, |f| f.cov);
        v.push(("jain_workers".into(), jain(&self.fairness_workers)));
        v.push(("cov_workers".into(), cov(&self.fairness_workers)));
        v.push(("jain_memcgs".into(), jain(&self.fairness_memcgs)));
        let rq = self.requests.as_ref();
        v.push((
            "req_jain_workers".into(),
            rq.map_or(0.0, |r| jain(&r.fairness_workers)),
        ));
        v.push((
            "req_cov_workers".into(),
            rq.map_or(0.0, |r| cov(&r.fairness_workers)),
        ));
        v.push((
            "req_jain_memcgs".into(),
            rq.map_or(0.0, |r| jain(&r.fairness_memcgs)),
        ));
        for b in 0..REQUEST_BUCKETS_S {
            let n: u64 = rq.map_or(0, |r| {
                if b + 1 == REQUEST_BUCKETS_S {
                    r.buckets_s.iter().skip(b).sum()
                } else {
                    r.buckets_s.get(b).copied().unwrap_or(0)
                }
            });
            let lo = if b == 0 { 0 } else { 1u64 << (b - 1) };
            let name = if b + 1 == REQUEST_BUCKETS_S {
                format!("req_[{lo},inf)s")
            } else {
                format!("req_[{lo},{})s", 1u64 << b)
            };
            v.push((name, n as f64));
        }
        for k in TABLE_COUNTERS {
            v.push((
                k.to_string(),
                self.vmstat.get(*k).copied().unwrap_or(0) as f64,
            ));
        }
        v.push(("preemptions".into(), self.preemptions as f64));
        let c = &self.cpu;
        for (k, x) in [
            ("cpu.user_ns", c.user_ns),
            ("cpu.sys_ns", c.sys_ns),
            ("cpu.kswapd_ns", c.kswapd_ns),
            ("cpu.flusher_ns", c.flusher_ns),
            ("cpu.runqueue_wait_ns", c.runqueue_wait_ns),
            ("cpu.iowait_ns", c.iowait_ns),
            ("cpu.throttled_ns", c.throttled_ns),
            ("cpu.lru_lock_wait_ns", c.lru_lock_wait_ns),
            ("cpu.lru_lock_hold_ns", c.lru_lock_hold_by_site.total()),
        ] {
            v.push((k.to_string(), x as f64));
        }
        let root = self.memcgs.iter().find(|m| m.path == "/");
        v.push((
            "mem_mean_pages".into(),
            root.map_or(0.0, |m| m.current_mean_pages),
        ));
        v.push((
            "mem_peak_pages".into(),
            root.map_or(0.0, |m| m.peak_pages as f64),
        ));
        let psi = self.psi.unwrap_or_default().memory;
        v.push(("psi_some_us".into(), psi.some.total_us as f64));
        v.push(("psi_full_us".into(), psi.full.total_us as f64));
        v
    }
}

/// The power-of-two microsecond bucket of a latency: [0,1) us is 0, [1,2) is 1, [2,4) is 2...
pub fn pow2_us_index(ns: u64) -> usize {
    pow2_index(ns, 1000)
}

/// The power-of-two bucket of `ns` in units of `unit_ns`: [0,1) is 0, [1,2) is 1, [2,4) is
/// 2, [4,8) is 3... (seed 000's Chrome/Node histogram with `unit_ns` = 1 s). A zero unit
/// counts as 1 ns.
pub fn pow2_index(ns: u64, unit_ns: u64) -> usize {
    let u = ns / unit_ns.max(1);
    if u == 0 {
        0
    } else {
        64 - u.leading_zeros() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_an_eighth() {
        let mut h = LatencyHist::default();
        for v in 1..=10_000u64 {
            h.record(v * 100);
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.125, "p50 {p50}");
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(h.count, 10_000);
    }

    #[test]
    fn bucket_bounds_contain_values() {
        for ns in [0u64, 1, 7, 8, 9, 100, 4095, 4096, 123_456_789] {
            let i = LatencyHist::index(ns);
            assert!(LatencyHist::upper(i) >= ns, "{ns}");
            if i > 0 {
                assert!(LatencyHist::upper(i - 1) < ns, "{ns}");
            }
        }
    }

    #[test]
    fn pow2_buckets() {
        let idx: Vec<usize> = [0, 999, 1000, 2500, 4000]
            .iter()
            .map(|&n| pow2_us_index(n))
            .collect();
        assert_eq!(idx, vec![0, 0, 1, 2, 3]);
    }

    #[test]
    fn pow2_second_buckets_match_the_seed_report() {
        let s = 1_000_000_000u64;
        // [0,1) [1,2) [2,4) [4,8) [8,16) ... seconds.
        let idx: Vec<usize> = [
            0,
            s - 1,
            s,
            2 * s - 1,
            2 * s,
            3 * s,
            4 * s,
            7 * s,
            8 * s,
            200 * s,
        ]
        .iter()
        .map(|&n| pow2_index(n, s))
        .collect();
        assert_eq!(idx, vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 8]);
        assert_eq!(pow2_index(5, 0), 3);
    }

    #[test]
    fn p95_lies_between_p90_and_p99() {
        let mut h = LatencyHist::default();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert!(s.p90_ns <= s.p95_ns && s.p95_ns <= s.p99_ns, "{s:?}");
        assert!((s.p95_ns as f64 - 950_000.0).abs() / 950_000.0 < 0.125);
    }
}
