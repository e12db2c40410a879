//! The model side: the same trace on reclaimlab, in the matching kernel mode, sized as the
//! guest measured it.
//!
//! Sizing (validation.md pitfall 4: kernel memory counts against memory.max): for every memcg
//! with a limit, the kernel's overhead is `memory.current − (anon + file)` of memory.stat after
//! the replay (page tables, slab, kernel stacks, the per-CPU charge stocks), averaged over the
//! boots. The model charges page tables and keeps charge stocks itself (docs/model.md §2), so
//! its memory.max is the limit minus the part of the overhead it does not model: memory.stat's
//! `kernel` (all kernel memory charged: slab, stacks, page tables) less `pagetables`, plus
//! `sock`, averaged over the boots (`unmodelled_pages`). Cells recorded before the model had
//! page tables and stocks were sized by the limit minus the whole overhead; `--remodel`
//! recomputes their sizing from the recorded kernel runs' memory.stat
//! ([`resize_from_runs`]). The machine has the guest's MemTotal and
//! min_free_kbytes, as many CPUs as the guest has vCPUs (one for the main suite), the zram
//! size, swappiness and dirty ratios read back from the guest.

use crate::console::GuestReport;
use crate::fidelity::Counters;
use crate::guest::{memcg_tree, MachineSpec, Mode};
use crate::packages::KernelKey;
use reclaimlab::access::TraceRecord;
use reclaimlab::consts::{Kernel, FLUSH_TIME_NS};
use reclaimlab::machine::{MachineConfig, MemcgConfig, SwapConfig};
use reclaimlab::metrics::RunResult;
use reclaimlab::policy::mglru::MglruConfig;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::trace::TraceHeader;
use reclaimlab::workload::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The model policy of a kernel and mode. Debian's 7.2 is 7.2.13, whose MGLRU has changes
/// beside the 2026 series: `mglru:7.2.13`; with MGLRU off, `classic:7.2.13` (the classical
/// path of 7.2).
pub fn policy_for(kernel: KernelKey, mode: Mode, min_ttl_ms: u64) -> PolicySpec {
    let k = match kernel {
        KernelKey::V6_1 => Kernel::V6_1,
        KernelKey::V6_12 => Kernel::V6_12,
        KernelKey::V7_2 => Kernel::V7_2_13,
    };
    match mode {
        Mode::Classic => PolicySpec::classic(k),
        Mode::Mglru => {
            let mut c = MglruConfig::new(k);
            c.min_ttl_ms = min_ttl_ms;
            c.enabled = 0x7;
            PolicySpec::Mglru(c)
        }
    }
}

/// What the model is sized from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// Guest MemTotal in pages.
    pub mem_pages: u64,
    pub min_free_kbytes: Option<u64>,
    /// Per limited memcg: the limit in pages, the measured kernel overhead in pages (mean over
    /// boots) and the model's memory.max.
    pub memcgs: BTreeMap<String, MemcgSizing>,
    pub dirty_ratio: Option<u64>,
    pub dirty_background_ratio: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemcgSizing {
    pub limit_pages: u64,
    /// `memory.current − (anon + file)`: everything charged that is no user folio.
    pub overhead_pages: f64,
    /// The part of the overhead the model does not charge itself: `kernel − pagetables +
    /// sock` (None in cells recorded before it was kept: their `model_max_pages` is the limit
    /// minus the whole overhead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmodelled_pages: Option<f64>,
    pub model_max_pages: u64,
}

/// The pages of a memcg's charge the model does not produce itself, from its memory.stat
/// (bytes): kernel memory other than page tables (slab, kernel stacks, percpu, the obj
/// stock), and socket buffers. None without a `kernel` entry.
pub fn unmodelled_bytes(stat: &BTreeMap<String, u64>) -> Option<u64> {
    let kernel = *stat.get("kernel")?;
    let pt = stat.get("pagetables").copied().unwrap_or(0);
    Some(kernel.saturating_sub(pt) + stat.get("sock").copied().unwrap_or(0))
}

/// Sizes the model's memcgs again from the kernel runs recorded in a cell (their memory.stat):
/// memory.max = the limit minus the mean unmodelled overhead, where every run reports
/// `kernel`. Keeps the recorded sizing otherwise.
pub fn resize_from_runs(sizing: &mut Sizing, runs: &[crate::fidelity::Counters]) {
    for (path, ms) in sizing.memcgs.iter_mut() {
        let per_run: Option<Vec<u64>> = runs
            .iter()
            .map(|r| {
                r.memcgs
                    .iter()
                    .find(|m| &m.path == path)
                    .and_then(|m| unmodelled_bytes(&m.stat))
            })
            .collect();
        let Some(v) = per_run.filter(|v| !v.is_empty()) else {
            continue;
        };
        let mean = v.iter().map(|&b| (b / 4096) as f64).sum::<f64>() / v.len() as f64;
        ms.unmodelled_pages = Some(mean);
        ms.model_max_pages = ms.limit_pages.saturating_sub(mean.round() as u64);
    }
}

fn cfg_u64(r: &GuestReport, k: &str) -> Option<u64> {
    r.config.get(k).and_then(|v| v.trim().parse().ok())
}

/// Sizes the model from the boots of one (workload, kernel, mode).
pub fn sizing(spec: &MachineSpec, reports: &[GuestReport]) -> Result<Sizing, String> {
    let first = reports
        .first()
        .ok_or("no kernel runs to size the model from")?;
    let mem_kib = first
        .meminfo_before
        .get("MemTotal")
        .copied()
        .ok_or("guest reported no MemTotal")?;
    let mut s = Sizing {
        mem_pages: mem_kib / 4,
        min_free_kbytes: cfg_u64(first, "min_free_kbytes"),
        dirty_ratio: cfg_u64(first, "dirty_ratio"),
        dirty_background_ratio: cfg_u64(first, "dirty_background_ratio"),
        ..Default::default()
    };
    for (path, &max) in &spec.memcg_max {
        let limit_pages = max / 4096;
        let mut sum = 0.0;
        let mut unmodelled = Some(0.0);
        for r in reports {
            let a = r
                .memcg_after
                .get(path)
                .ok_or_else(|| format!("guest reported no memcg {path}"))?;
            let user = (a.stat.get("anon").copied().unwrap_or(0)
                + a.stat.get("file").copied().unwrap_or(0))
                / 4096;
            sum += (a.current / 4096).saturating_sub(user) as f64;
            unmodelled = unmodelled
                .zip(unmodelled_bytes(&a.stat))
                .map(|(u, b)| u + (b / 4096) as f64);
        }
        let n = reports.len() as f64;
        let overhead = sum / n;
        let unmodelled = unmodelled.map(|u| u / n);
        s.memcgs.insert(
            path.clone(),
            MemcgSizing {
                limit_pages,
                overhead_pages: overhead,
                unmodelled_pages: unmodelled,
                model_max_pages: limit_pages
                    .saturating_sub(unmodelled.unwrap_or(overhead).round() as u64),
            },
        );
    }
    Ok(s)
}

/// The model's machine for a workload and sizing.
pub fn machine(spec: &MachineSpec, sizing: &Sizing, header: &TraceHeader) -> MachineConfig {
    // The guest's readahead window and fault-around (guest.rs): off in the default and smp2
    // suites (`one_page_per_fault`), the kernel defaults in the readahead suite.
    let mut m = MachineConfig::simple(sizing.mem_pages.max(256));
    if spec.one_page_per_fault() {
        m = m.one_page_per_fault();
    } else {
        m.read_ahead_kb = spec.read_ahead_kb;
        m.fault_around_bytes = spec.fault_around_bytes;
    }
    // As many CPUs as the guest has vCPUs; `Scenario::from_trace` puts process i on CPU i % cpus.
    m.cpus = spec.cpus.max(1);
    // Concurrent plans: tasks on the other vCPU run during reclaim batches.
    m.interleave = m.cpus > 1;
    m.min_free_kbytes = sizing.min_free_kbytes;
    m.swappiness = spec.swappiness;
    if let Some(d) = sizing.dirty_ratio {
        m.dirty_ratio = d;
    }
    if let Some(d) = sizing.dirty_background_ratio {
        m.dirty_background_ratio = d;
    }
    m.swap = match spec.zram_mib {
        Some(mib) => SwapConfig::Zram {
            size_pages: mib * 256,
            compress_ratio: 3.0,
        },
        None => SwapConfig::None,
    };
    let paths = memcg_tree(
        header
            .memcgs
            .iter()
            .filter(|(i, _)| *i != 0)
            .map(|(_, p)| p.clone())
            .chain(spec.memcg_max.keys().cloned()),
    );
    for p in paths {
        let mut c = MemcgConfig::new(&p);
        if let Some(ms) = sizing.memcgs.get(&p) {
            c.max = ms.model_max_pages;
        }
        m.memcgs.push(c);
    }
    m
}

/// Runs the model on a trace, with the guest's periodic flush of the memcg statistics as
/// often per replay as in `kernel_runs` ([`guest_flush_period`]), averaged over
/// [`FLUSH_PHASES`] phases of it ([`mean_of_runs`]). When every kernel run recorded its
/// processes' progress (the concurrent suite), the model replays each boot on that boot's
/// clock instead: its records issued at the boot's times ([`crate::pace`]) and the flush at
/// the boot's own traced flush times ([`crate::pace::flush_schedule`]), or, for a boot without
/// that trace, every `FLUSH_TIME` at each of the phases; the mean is over boots (and phases).
#[allow(clippy::too_many_arguments)]
pub fn run_model(
    name: &str,
    spec: &MachineSpec,
    sizing: &Sizing,
    header: &TraceHeader,
    records: &[TraceRecord],
    kernel: KernelKey,
    mode: Mode,
    kernel_runs: &[Counters],
) -> Result<RunResult, String> {
    let m = machine(spec, sizing, header);
    let run = |m: MachineConfig, records: &[TraceRecord]| {
        run_model_on(name, m, spec.min_ttl_ms, header, records, kernel, mode)
    };
    let paces: Option<Vec<_>> = kernel_runs.iter().map(crate::pace::of_run).collect();
    let mut runs = Vec::new();
    match paces {
        Some(p) if !p.is_empty() => {
            for (boot, k) in p.iter().zip(kernel_runs) {
                let paced = crate::pace::paced(records, boot)?;
                match crate::pace::flush_schedule(k) {
                    // The boot's own flushes, as traced.
                    Some((first, period)) => {
                        runs.push(run(with_flushes(&m, first, period), &paced)?);
                    }
                    None => {
                        for mk in flush_phases(&m, FLUSH_TIME_NS) {
                            runs.push(run(mk, &paced)?);
                        }
                    }
                }
            }
        }
        _ => {
            // Unpaced, the boots' traced flushes are not used: scaled by the model's time over
            // the boot's, a flush falls at the wrong record, since the guest does not go
            // through the trace at an even pace (on the single-vCPU suite it gave 17 flags of
            // 215 where the four phases give 11: validation/results/2026-11-27-flushes-1vcpu).
            let first = run(m.clone(), records)?;
            let Some(period) = guest_flush_period(first.sim_time_ns, kernel_runs) else {
                return Ok(first);
            };
            for mk in flush_phases(&m, period) {
                runs.push(run(mk, records)?);
            }
        }
    }
    mean_of_runs(&runs)
}

/// The machine `m` with the guest's flush period and the first flush at each of
/// [`FLUSH_PHASES`] phases: the guest's flushes fall where its boot's timing put them, which
/// without a trace of them (or unpaced) is unknown, so the model takes the mean over phases.
fn flush_phases(m: &MachineConfig, period: u64) -> Vec<MachineConfig> {
    (0..FLUSH_PHASES)
        .map(|k| {
            with_flushes(
                m,
                ((2 * k + 1) * period / (2 * FLUSH_PHASES)).max(1),
                period,
            )
        })
        .collect()
}

/// The machine `m` with its memcg statistics flushed first `first` ns into the run, then every
/// `period` ns (`flush_memcg_stats_dwork`; docs/model.md §4).
pub fn with_flushes(m: &MachineConfig, first: u64, period: u64) -> MachineConfig {
    let mut mk = m.clone();
    mk.memcg_stats_flush_ns = period;
    mk.memcg_stats_first_flush_ns = Some(first);
    mk
}

/// How many phases of the guest's memcg statistics flush the model is averaged over: the
/// first flush at 1/8, 3/8, 5/8 and 7/8 of a period into the replay.
pub const FLUSH_PHASES: u64 = 4;

/// The mean of runs of one scenario: every number the mean of the runs' (integers rounded to
/// the nearest), element by element in lists of equal length; anything else the first run's.
pub fn mean_of_runs(runs: &[RunResult]) -> Result<RunResult, String> {
    let values: Vec<serde_json::Value> = runs
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let refs: Vec<&serde_json::Value> = values.iter().collect();
    serde_json::from_value(mean_value(&refs)).map_err(|e| e.to_string())
}

fn mean_value(vs: &[&serde_json::Value]) -> serde_json::Value {
    use serde_json::Value;
    let first = vs[0];
    match first {
        Value::Number(_) if vs.iter().all(|v| v.is_number()) => {
            if vs.iter().all(|v| v.is_u64()) {
                let n = vs.len() as u128;
                let sum: u128 = vs.iter().map(|v| v.as_u64().unwrap_or(0) as u128).sum();
                Value::from(((sum + n / 2) / n) as u64)
            } else {
                let n = vs.len() as f64;
                let mean = vs.iter().map(|v| v.as_f64().unwrap_or(0.0)).sum::<f64>() / n;
                if vs.iter().all(|v| v.is_i64()) {
                    Value::from(mean.round() as i64)
                } else {
                    serde_json::Number::from_f64(mean).map_or(first.clone(), Value::Number)
                }
            }
        }
        Value::Array(a)
            if vs
                .iter()
                .all(|v| v.as_array().is_some_and(|b| b.len() == a.len())) =>
        {
            Value::Array(
                (0..a.len())
                    .map(|i| mean_value(&vs.iter().map(|v| &v[i]).collect::<Vec<_>>()))
                    .collect(),
            )
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let same: Vec<&Value> = vs.iter().filter_map(|v| v.get(k)).collect();
                    let v = if same.len() == vs.len() {
                        mean_value(&same)
                    } else {
                        x.clone()
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        _ => first.clone(),
    }
}

/// The guest's `FLUSH_TIME` (2 s) in the model's time. Emulated, the guest replays a trace
/// many times slower than the machine whose costs the model charges (its `sim_time_ns` is
/// seconds to minutes where the model's is under one), so its periodic flush of the memcg
/// statistics (`flush_memcg_stats_dwork`, which reclaim reads on 6.8+: docs/model.md §4)
/// falls after far more of the trace than 2 s of the model's time hold. The flush comes at
/// the same point of the replay when its period is FLUSH_TIME × model time / the kernel's
/// mean replay time. None without kernel times.
pub fn guest_flush_period(model_ns: u64, kernel_runs: &[Counters]) -> Option<u64> {
    let n = kernel_runs.len() as u128;
    let total: u128 = kernel_runs.iter().map(|r| r.sim_time_ns as u128).sum();
    if n == 0 || total == 0 || model_ns == 0 {
        return None;
    }
    let period = FLUSH_TIME_NS as u128 * model_ns as u128 * n / total;
    Some(period.clamp(1, u64::MAX as u128) as u64)
}

/// Runs the model on a trace with the machine `m` (what [`machine`] gives, or a variant of
/// it: other CPUs, other limits), seed 1 as in every cell.
pub fn run_model_on(
    name: &str,
    m: MachineConfig,
    min_ttl_ms: u64,
    header: &TraceHeader,
    records: &[TraceRecord],
    kernel: KernelKey,
    mode: Mode,
) -> Result<RunResult, String> {
    let scn = Scenario::from_trace(name, m, header, records)?;
    let policy = policy_for(kernel, mode, min_ttl_ms);
    run(
        &scn,
        policy,
        &RunOptions {
            seed: 1,
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::MemcgSnap;

    /// The mean of runs: integers to the nearest, floats exactly, lists element by element,
    /// strings and lists of other lengths from the first run.
    #[test]
    fn runs_are_averaged_number_by_number() {
        use serde_json::json;
        let a = json!({"n": 1, "f": 0.5, "s": "a", "l": [1, 10], "m": [1], "i": -3});
        let b = json!({"n": 2, "f": 1.0, "s": "b", "l": [3, 20], "m": [1, 2], "i": -4});
        let m = mean_value(&[&a, &b]);
        assert_eq!(
            m,
            json!({"n": 2, "f": 0.75, "s": "a", "l": [2, 15], "m": [1], "i": -4})
        );
        assert_eq!(mean_value(&[&a]), a);
    }

    /// The guest's 2 s flush in the model's time: a model run of 1 s against guest replays of
    /// 6 s and 10 s (mean 8 s) flushes every 250 ms; without kernel times, no period.
    #[test]
    fn the_guest_flush_period_scales_flush_time_by_the_model_over_the_guest_time() {
        let run = |ns: u64| -> Counters {
            let mut c: Counters = serde_json::from_value(serde_json::json!({
                "scenario": "s", "policy": "p", "sim_time_ns": 0, "accesses": 0, "hits": 0,
                "misses": 0, "major": 0, "hit_ratio": 0.0, "oom_kills": 0, "vmstat": {},
                "memcgs": [], "threads": [], "lru_gen": null
            }))
            .unwrap();
            c.sim_time_ns = ns;
            c
        };
        let runs = [run(6_000_000_000), run(10_000_000_000)];
        assert_eq!(guest_flush_period(1_000_000_000, &runs), Some(250_000_000));
        assert_eq!(guest_flush_period(1_000_000_000, &[]), None);
        assert_eq!(guest_flush_period(0, &runs), None);
        assert_eq!(guest_flush_period(1_000_000_000, &[run(0)]), None);
    }

    #[test]
    fn policies_per_kernel_and_mode() {
        assert_eq!(
            policy_for(KernelKey::V7_2, Mode::Classic, 0).to_string(),
            "classic:7.2.13"
        );
        assert_eq!(
            policy_for(KernelKey::V6_1, Mode::Classic, 0).to_string(),
            "classic:6.1"
        );
        assert_eq!(
            policy_for(KernelKey::V6_12, Mode::Mglru, 0).to_string(),
            "mglru:6.12"
        );
        assert_eq!(
            policy_for(KernelKey::V7_2, Mode::Mglru, 0).to_string(),
            "mglru:7.2.13"
        );
    }

    /// `--remodel`: a cell's sizing is recomputed from its recorded runs' memory.stat; a memcg
    /// some run reports no `kernel` for keeps its recorded sizing.
    #[test]
    fn remodel_resizes_from_the_recorded_runs() {
        let run = |kernel: Option<u64>| -> crate::fidelity::Counters {
            let mut stat = serde_json::json!({"anon": 0, "file": 0, "pagetables": 16 * 4096});
            if let Some(k) = kernel {
                stat["kernel"] = (k * 4096).into();
            }
            serde_json::from_value(serde_json::json!({
                "scenario": "s", "policy": "p", "sim_time_ns": 0, "accesses": 0, "hits": 0,
                "misses": 0, "major": 0, "hit_ratio": 0.0, "oom_kills": 0, "vmstat": {},
                "memcgs": [{"path": "/w", "current_pages": 0, "max_pages": 8192, "swap_pages": 0,
                            "stat": stat, "events": {}}],
                "threads": [], "lru_gen": null
            }))
            .unwrap()
        };
        let recorded = MemcgSizing {
            limit_pages: 8192,
            overhead_pages: 66.8,
            unmodelled_pages: None,
            model_max_pages: 8125,
        };
        let mut s = Sizing::default();
        s.memcgs.insert("/w".into(), recorded.clone());
        resize_from_runs(&mut s, &[run(Some(48)), run(Some(47))]);
        assert_eq!(s.memcgs["/w"].unmodelled_pages, Some(31.5));
        assert_eq!(s.memcgs["/w"].model_max_pages, 8192 - 32);
        let mut s = Sizing::default();
        s.memcgs.insert("/w".into(), recorded.clone());
        resize_from_runs(&mut s, &[run(Some(48)), run(None)]);
        assert_eq!(s.memcgs["/w"], recorded);
    }

    #[test]
    fn sizes_memcg_from_measured_overhead() {
        let spec = crate::suite::suite().remove(0).machine;
        let mut r = GuestReport::default();
        r.meminfo_before.insert("MemTotal".into(), 480_000);
        r.config.insert("min_free_kbytes".into(), "2816".into());
        let mut a = MemcgSnap {
            current: 32 << 20,
            ..Default::default()
        };
        a.stat.insert("anon".into(), 100 * 4096);
        a.stat.insert("file".into(), 7_900 * 4096);
        r.memcg_after.insert("/w".into(), a);
        let mut r2 = r.clone();
        r2.memcg_after
            .get_mut("/w")
            .unwrap()
            .stat
            .insert("file".into(), 7_898 * 4096);
        let s = sizing(&spec, &[r.clone(), r2.clone()]).unwrap();
        let w = &s.memcgs["/w"];
        assert_eq!(w.limit_pages, 8192);
        assert_eq!(w.overhead_pages, 193.0);
        assert_eq!(w.unmodelled_pages, None, "no `kernel` in memory.stat");
        assert_eq!(w.model_max_pages, 7999);
        // With memory.stat's kernel memory: the limit less what the model does not charge
        // itself (kernel − pagetables + sock), not the page tables and charge stocks.
        for (rep, kernel) in [(&mut r, 150u64), (&mut r2, 152)] {
            let st = &mut rep.memcg_after.get_mut("/w").unwrap().stat;
            st.insert("kernel".into(), kernel * 4096);
            st.insert("pagetables".into(), 20 * 4096);
            st.insert("sock".into(), 4096);
        }
        let k = sizing(&spec, &[r, r2]).unwrap();
        assert_eq!(k.memcgs["/w"].unmodelled_pages, Some(132.0));
        assert_eq!(k.memcgs["/w"].model_max_pages, 8192 - 132);
        assert_eq!(s.mem_pages, 120_000);
        let (h, _) = crate::suite::suite()[0].trace();
        let m = machine(&spec, &s, &h);
        assert_eq!(m.memcgs.len(), 1);
        assert_eq!(m.memcgs[0].max, 7999);
        assert_eq!(m.min_free_kbytes, Some(2816));
        // The default suite's guest has readahead and fault-around off; so has the model.
        assert_eq!((m.read_ahead_kb, m.fault_around_bytes), (0, 4096));
        // The readahead suite's kernel defaults reach the model's machine.
        let ra = crate::suite::workload("mmap-zipf-ra").unwrap();
        let mr = machine(&ra.machine, &s, &ra.trace().0);
        assert_eq!((mr.read_ahead_kb, mr.fault_around_bytes), (128, 65536));
        assert_eq!(mr.memcgs[0].max, 7999);
        let odd = MachineSpec {
            read_ahead_kb: 0,
            fault_around_bytes: 32768,
            ..ra.machine.clone()
        };
        let mo = machine(&odd, &s, &ra.trace().0);
        assert_eq!((mo.read_ahead_kb, mo.fault_around_bytes), (0, 32768));
        assert!(sizing(&spec, &[]).is_err());
    }
}
