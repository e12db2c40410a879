//! reclaimlab-validate: replays reclaimlab traces on real Debian kernels under QEMU and compares
//! their counters with the model's (issue 5).
//!
//! * [`packages`]: host tools (installed from Debian when missing) and the kernels (6.1 from
//!   bookworm, 6.12 from trixie, 7.2 from sid, cloud flavour), fetched once into a cache from
//!   the machine's own apt mirror.
//! * [`guest`]: the replay plan made from a trace, the `/init` script, the initramfs (busybox,
//!   modules, the static replayer of `reclaimlab-replayer`), the ext4 data disk.
//! * [`qemu`]: one TCG boot with the serial console in a file.
//! * [`console`]: the console log parsed into a [`console::GuestReport`] and into the
//!   simulator's [`RunResult`].
//! * [`model`]: the same trace on the model, in the matching kernel mode, sized as the guest.
//! * [`suite`]: the workloads (the default suite on one vCPU, `smp2` with concurrent processes
//!   on two); [`fidelity`]: the fidelity table, the sign checks and the concurrent criteria.
//!
//! [`run_cell`] runs one workload on one kernel in one mode (boots and model); [`run_cells`]
//! many, saving each finished cell so an interrupted suite can resume.

pub mod console;
pub mod fidelity;
pub mod guest;
pub mod model;
pub mod pace;
pub mod packages;
pub mod qemu;
pub mod suite;

use fidelity::Cell;
use guest::Mode;
use packages::{KernelImage, KernelKey};
use std::path::{Path, PathBuf};
use std::time::Duration;
use suite::Workload;

/// Writes a file atomically: a temporary next to it, then a rename.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("tmp-reclaimlab");
    std::fs::write(&tmp, data).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// How to run.
pub struct Options<'a> {
    pub cache: PathBuf,
    pub boots: u32,
    pub timeout: Duration,
    /// A prebuilt static replayer; default: build it from this workspace.
    pub replayer: Option<PathBuf>,
    /// Keep every console log here (`<workload>-<kernel>-<mode>-<boot>.log`).
    pub console_dir: Option<PathBuf>,
    /// Guest clock from the instruction count (see [`qemu::Boot::icount`]); false: host time.
    pub icount: bool,
    pub log: &'a dyn Fn(&str),
}

/// The workspace this crate was built from (for building the replayer).
fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The static replayer: the given file, or built from the workspace with
/// `RUSTFLAGS=-C target-feature=+crt-static` in its own target directory under the cache.
pub fn replayer_binary(opts: &Options) -> Result<Vec<u8>, String> {
    let path = match &opts.replayer {
        Some(p) => p.clone(),
        None => {
            let target = opts.cache.join("replayer-target");
            (opts.log)("building the static replayer");
            let out = std::process::Command::new(
                std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            )
            .current_dir(workspace_dir())
            .env("RUSTFLAGS", "-C target-feature=+crt-static")
            .env("CARGO_TARGET_DIR", &target)
            .args([
                "build",
                "--release",
                "-q",
                "-p",
                "reclaimlab-replayer",
                "--target",
                "x86_64-unknown-linux-gnu",
            ])
            .output()
            .map_err(|e| format!("cannot run cargo to build the replayer: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "building the replayer failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            target.join("x86_64-unknown-linux-gnu/release/reclaimlab-replayer")
        }
    };
    let b = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !packages::elf_is_static(&b) {
        return Err(format!("{} is not a static executable", path.display()));
    }
    Ok(b)
}

/// Everything a boot needs that does not change between boots of a workload.
pub struct Prepared {
    pub busybox: Vec<u8>,
    pub replayer: Vec<u8>,
}

/// Installs missing host tools and builds the replayer.
pub fn prepare(opts: &Options) -> Result<Prepared, String> {
    packages::ensure_host_tools(&mut |m| (opts.log)(m))?;
    let bb = packages::busybox_path();
    let busybox = std::fs::read(&bb).map_err(|e| format!("{}: {e}", bb.display()))?;
    if !packages::elf_is_static(&busybox) {
        return Err(format!(
            "{} is not static (install busybox-static)",
            bb.display()
        ));
    }
    Ok(Prepared {
        busybox,
        replayer: replayer_binary(opts)?,
    })
}

/// Checks that the guest runs what was asked: the LRU mode, THP off, page-cluster 0, the spec's
/// fault-around and readahead (one page and none but in the readahead suite), swap as configured.
pub fn check_guest_config(
    r: &console::GuestReport,
    mode: Mode,
    spec: &guest::MachineSpec,
) -> Result<(), String> {
    let get = |k: &str| r.config.get(k).map(|s| s.as_str()).unwrap_or("");
    let enabled = u32::from_str_radix(get("lru_gen_enabled").trim_start_matches("0x"), 16)
        .map_err(|_| format!("guest: lru_gen enabled '{}'", get("lru_gen_enabled")))?;
    let want_on = mode == Mode::Mglru;
    if (enabled & 1 != 0) != want_on {
        return Err(format!(
            "guest: lru_gen enabled {enabled:#x}, wanted {}",
            mode.lru_gen_enabled()
        ));
    }
    let checks = [
        ("page_cluster", "0".to_string()),
        ("fault_around_bytes", spec.fault_around_bytes.to_string()),
        ("read_ahead_kb", spec.read_ahead_kb.to_string()),
        ("min_ttl_ms", spec.min_ttl_ms.to_string()),
        ("swappiness", spec.swappiness.to_string()),
    ];
    for (k, want) in checks {
        if get(k) != want {
            return Err(format!("guest: {k} is '{}', wanted {want}", get(k)));
        }
    }
    if !get("thp").contains("[never]") {
        return Err(format!("guest: THP is '{}'", get("thp")));
    }
    let swap_kb: u64 = get("swap_kb").parse().unwrap_or(0);
    if (swap_kb > 0) != spec.zram_mib.is_some() {
        return Err(format!("guest: {swap_kb} KiB of swap"));
    }
    if spec.cpus > 1 && get("cpus") != spec.cpus.to_string() {
        return Err(format!(
            "guest: {} CPUs online, wanted {}",
            get("cpus"),
            spec.cpus
        ));
    }
    for (path, max) in &spec.memcg_max {
        if get(&format!("memory.max {path}")) != max.to_string() {
            return Err(format!("guest: memory.max of {path} not set"));
        }
    }
    Ok(())
}

/// One boot of a workload: returns the report and the console text.
#[allow(clippy::too_many_arguments)]
pub fn boot_once(
    prep: &Prepared,
    w: &Workload,
    k: &KernelImage,
    mode: Mode,
    plan: &[u8],
    disk: &Path,
    scratch: &Path,
    timeout: Duration,
    icount: bool,
) -> Result<(console::GuestReport, String), String> {
    let modules = guest::resolve_modules(k)?;
    let (h, _) = w.trace();
    let memcgs = guest::memcg_tree(
        h.memcgs
            .iter()
            .filter(|(i, _)| *i != 0)
            .map(|(_, p)| p.clone())
            .chain(w.machine.memcg_max.keys().cloned()),
    );
    let init = guest::init_script(&w.machine, mode, &guest::module_paths(&modules), &memcgs);
    let initrd = guest::build_initramfs(&prep.busybox, &prep.replayer, plan, &init, &modules);
    let initrd_path = scratch.join("initrd.cpio");
    write_atomic(&initrd_path, &initrd)?;
    let console_path = scratch.join("console.log");
    let (text, _) = qemu::boot(&qemu::Boot {
        vmlinuz: &k.vmlinuz,
        initrd: &initrd_path,
        disk,
        memory_mib: w.machine.guest_mib,
        cmdline: guest::kernel_cmdline(),
        console: &console_path,
        timeout,
        icount,
        cpus: w.machine.cpus,
    })?;
    let report = console::parse_console(&text).map_err(|e| {
        let int3 = if console::int3_oops(&text) {
            format!(" ({})", console::INT3_OOPS)
        } else {
            String::new()
        };
        format!("{e}{int3} (console log: {})", console_path.display())
    })?;
    check_guest_config(&report, mode, &w.machine)?;
    if !report.release.starts_with(&k.release) && report.release != k.release {
        return Err(format!(
            "guest runs {}, expected {}",
            report.release, k.release
        ));
    }
    Ok((report, text))
}

/// How often a boot is tried again whose kernel died before `/init`, or died of an `int3`
/// oops before the replay finished: emulation faults of multi-threaded TCG, not results, since
/// the replay did not finish. Seen twice in the 125 boots of 2026-11-27's smp2 suite (6.12 and
/// 7.2): an oops at `sched_clock_cpu+0x9`, the static-branch site the other vCPU was patching
/// (`text_poke`) 1.0-1.2 s into the boot; and once in 2026-11-27-smp2-flushes' first attempt
/// (7.2): an `int3` oops at `get_random_u32+0x24`, the `crng_ready()` static branch being
/// patched when the crng became ready 4.25 s into the boot, as the replay began. An int3 in
/// kernel text is left only by live patching (`text_poke_bp`), so the rule cannot hide a
/// reclaim failure.
const BOOT_RETRIES: u32 = 2;

/// One workload on one kernel in one mode: `opts.boots` fresh boots and the model.
pub fn run_cell(
    prep: &Prepared,
    w: &Workload,
    key: KernelKey,
    mode: Mode,
    opts: &Options,
) -> Result<Cell, String> {
    let k = packages::fetch_kernel(&opts.cache, key, &mut |m| (opts.log)(m))?;
    let (header, records) = w.trace();
    let (mut ph, pr) = guest::build_plan(&header, &records)?;
    ph.concurrent = w.concurrent();
    let plan = reclaimlab_replayer::encode_plan(&ph, &pr);
    let disk = guest::build_disk(&opts.cache, &ph.files)?;
    let scratch = qemu::scratch(&opts.cache, &format!("{}-{}-{}", w.name, key, mode))?;
    let mut reports = Vec::new();
    let mut runs: Vec<fidelity::Counters> = Vec::new();
    let model_policy = model::policy_for(key, mode, w.machine.min_ttl_ms).to_string();
    for b in 0..opts.boots {
        let t = std::time::Instant::now();
        let boot = || {
            boot_once(
                prep,
                w,
                &k,
                mode,
                &plan,
                &disk,
                &scratch,
                opts.timeout,
                opts.icount,
            )
        };
        let mut attempt = boot();
        for _ in 0..BOOT_RETRIES {
            match &attempt {
                Err(e)
                    if e.contains(console::NEVER_REACHED_INIT)
                        || e.contains(console::INT3_OOPS) =>
                {
                    (opts.log)(&format!(
                        "{} {key} {mode} boot {}: {e}; booting again",
                        w.name,
                        b + 1
                    ));
                    attempt = boot();
                }
                _ => break,
            }
        }
        let (rep, text) = attempt?;
        if let Some(dir) = &opts.console_dir {
            write_atomic(
                &dir.join(format!("{}-{}-{}-{}.log", w.name, key, mode, b + 1)),
                text.as_bytes(),
            )?;
        }
        let label = format!("kernel {} {mode}", k.release);
        let r = console::to_run_result(&rep, w.name, &label, &pr);
        (opts.log)(&format!(
            "{} {key} {mode} boot {}: {} accesses, {} misses, {:.0} s",
            w.name,
            b + 1,
            r.accesses,
            r.misses,
            t.elapsed().as_secs_f64()
        ));
        let mut run = fidelity::Counters::of(&r);
        pace::attach(&mut run, &rep);
        reports.push(rep);
        runs.push(run);
    }
    let sizing = model::sizing(&w.machine, &reports)?;
    let model = model::run_model(
        w.name, &w.machine, &sizing, &header, &records, key, mode, &runs,
    )?;
    (opts.log)(&format!(
        "{} {key} {mode} model {model_policy}: {} misses",
        w.name, model.misses
    ));
    Ok(Cell {
        workload: w.name.to_string(),
        kernel: key,
        mode,
        memcg: w.limited_memcg().unwrap_or("/").to_string(),
        packages: k.package_versions(),
        release: k.release.clone(),
        model_policy,
        guest_clock: if w.machine.cpus > 1 {
            format!("host (-smp {}, multi-threaded TCG)", w.machine.cpus)
        } else if opts.icount {
            format!("icount {}", qemu::ICOUNT)
        } else {
            "host".to_string()
        },
        cpus: w.machine.cpus,
        sizing,
        kernel_runs: runs,
        model: fidelity::Counters::of(&model),
    })
}

/// Reruns the model side of every cell saved in `dir` with this build's model (the kernel
/// runs stay as recorded; the sizing is recomputed from their memory.stat,
/// [`model::resize_from_runs`]), saves the cells again
/// (atomically) and returns them: how a model change is checked against recorded kernels
/// without booting again.
pub fn remodel_cells(dir: &Path) -> Result<Vec<Cell>, String> {
    let mut cells = load_cells(dir)?;
    for c in &mut cells {
        let model = remodel(c)?;
        let w = suite::workload(&c.workload)?;
        c.model_policy = model::policy_for(c.kernel, c.mode, w.machine.min_ttl_ms).to_string();
        c.model = fidelity::Counters::of(&model);
        let json = serde_json::to_string(&*c).map_err(|e| e.to_string())?;
        write_atomic(&cell_path(dir, w.name, c.kernel, c.mode), json.as_bytes())?;
    }
    Ok(cells)
}

/// This build's model on a saved cell's workload, beside its recorded kernel runs: the cell's
/// sizing is recomputed from their memory.stat first (the model charges page tables and keeps
/// charge stocks: it is sized from the runs' unmodelled kernel memory, model.rs).
pub fn remodel(c: &mut Cell) -> Result<reclaimlab::metrics::RunResult, String> {
    let w = suite::workload(&c.workload)?;
    let (header, records) = w.trace();
    model::resize_from_runs(&mut c.sizing, &c.kernel_runs);
    model::run_model(
        w.name,
        &w.machine,
        &c.sizing,
        &header,
        &records,
        c.kernel,
        c.mode,
        &c.kernel_runs,
    )
}

/// The file a finished cell is saved in.
pub fn cell_path(dir: &Path, w: &str, k: KernelKey, m: Mode) -> PathBuf {
    dir.join("cells").join(format!("{w}-{k}-{m}.json"))
}

/// The saved cell of (`workload`, `kernel`, `mode`) among `cells`, the kernel and mode as
/// printed ("6.12", "classic").
pub fn find_cell<'a>(
    cells: &'a [Cell],
    workload: &str,
    kernel: &str,
    mode: &str,
) -> Option<&'a Cell> {
    cells.iter().find(|c| {
        c.workload == workload && c.kernel.to_string() == kernel && c.mode.to_string() == mode
    })
}

/// Reads every saved cell of a results directory, in suite order.
pub fn load_cells(dir: &Path) -> Result<Vec<Cell>, String> {
    let cdir = dir.join("cells");
    let rd = std::fs::read_dir(&cdir).map_err(|e| format!("{}: {e}", cdir.display()))?;
    let mut cells = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json") {
            let t = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let c: Cell = serde_json::from_str(&t).map_err(|e| format!("{}: {e}", p.display()))?;
            cells.push(c);
        }
    }
    let order: Vec<&str> = suite::suite()
        .iter()
        .chain(suite::smp2().iter())
        .chain(suite::readahead().iter())
        .map(|w| w.name)
        .collect();
    cells.sort_by_key(|c| {
        (
            order
                .iter()
                .position(|n| *n == c.workload)
                .unwrap_or(usize::MAX),
            c.workload.clone(),
            c.kernel,
            c.mode,
        )
    });
    Ok(cells)
}

/// Runs workloads × kernels × modes, saving each finished cell under `out/cells/` (atomically),
/// and skipping cells already saved there when `resume` is set. One boot at a time.
pub fn run_cells(
    workloads: &[Workload],
    kernels: &[KernelKey],
    modes: &[Mode],
    out: &Path,
    resume: bool,
    opts: &Options,
) -> Result<Vec<Cell>, String> {
    let prep = prepare(opts)?;
    let mut cells = Vec::new();
    for w in workloads {
        for &k in kernels {
            for &m in modes {
                let path = cell_path(out, w.name, k, m);
                if resume {
                    if let Ok(t) = std::fs::read_to_string(&path) {
                        if let Ok(c) = serde_json::from_str::<Cell>(&t) {
                            if c.kernel_runs.len() as u32 >= opts.boots {
                                (opts.log)(&format!(
                                    "{} {k} {m}: kept from {}",
                                    w.name,
                                    path.display()
                                ));
                                cells.push(c);
                                continue;
                            }
                        }
                    }
                }
                let c = run_cell(&prep, w, k, m, opts)?;
                write_atomic(
                    &path,
                    serde_json::to_string(&c)
                        .map_err(|e| e.to_string())?
                        .as_bytes(),
                )?;
                cells.push(c);
            }
        }
    }
    Ok(cells)
}

/// Today's date (UTC) as YYYY-MM-DD.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil_date(secs / 86_400)
}

/// Days since 1970-01-01 to YYYY-MM-DD (Howard Hinnant's civil_from_days).
pub fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// Writes the fidelity table (`fidelity.md`), all cells in one file (`results.json`) and the
/// kernel packages (`packages.txt`) into `out`, atomically; returns the table.
pub fn write_results(out: &Path, cells: &[Cell], title: &str) -> Result<String, String> {
    let md = fidelity::markdown(cells, title);
    write_atomic(&out.join("fidelity.md"), md.as_bytes())?;
    let mut summary = serde_json::json!({
        "rows": fidelity::rows(cells),
        "sign_checks": fidelity::sign_checks(cells),
    });
    let concurrent = fidelity::concurrent_checks(cells);
    if !concurrent.is_empty() {
        summary["concurrent_checks"] = serde_json::json!(concurrent);
    }
    write_atomic(
        &out.join("fidelity.json"),
        serde_json::to_string_pretty(&summary)
            .map_err(|e| e.to_string())?
            .as_bytes(),
    )?;
    let mut pk: Vec<String> = cells
        .iter()
        .map(|c| format!("{} {} {}", c.kernel, c.release, c.packages))
        .collect();
    pk.sort();
    pk.dedup();
    write_atomic(&out.join("packages.txt"), (pk.join("\n") + "\n").as_bytes())?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(20_415), "2025-11-23");
        assert_eq!(civil_date(20_780), "2026-11-23");
    }
}
