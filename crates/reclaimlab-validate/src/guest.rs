//! What the guest gets: the replay plan made from a trace, the `/init` script, the initramfs
//! (a newc cpio written here: busybox-static, the needed modules, the static replayer, the plan)
//! and the ext4 disk image holding the trace's files.

use crate::packages::KernelImage;
use reclaimlab::access::{Op, PageRef, TraceRecord, Via};
use reclaimlab::trace::TraceHeader;
use reclaimlab_replayer::{PlanFile, PlanHeader, PlanMemcg, PlanProc, PlanRecord, ANON};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// MGLRU off (the classical LRU) or on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Classic,
    Mglru,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Classic, Mode::Mglru];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Classic => "classic",
            Mode::Mglru => "mglru",
        }
    }
    /// The value written to /sys/kernel/mm/lru_gen/enabled.
    pub fn lru_gen_enabled(self) -> u32 {
        match self {
            Mode::Classic => 0,
            Mode::Mglru => 7,
        }
    }
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "classic" => Ok(Mode::Classic),
            "mglru" => Ok(Mode::Mglru),
            _ => Err(format!("unknown mode '{s}' (expected classic or mglru)")),
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The machine a workload runs on: the guest's size and the memcgs' limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineSpec {
    /// Guest RAM (qemu -m), MiB.
    pub guest_mib: u64,
    /// memory.max per memcg path (bytes); memcgs not listed have no limit.
    pub memcg_max: BTreeMap<String, u64>,
    /// zram swap size in MiB (None: no swap).
    pub zram_mib: Option<u64>,
    pub swappiness: u32,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms.
    pub min_ttl_ms: u64,
    /// vCPUs (qemu `-smp`); more than one boots with multi-threaded TCG and the guest clock from
    /// host time (see [`crate::qemu::Boot::cpus`]), and the model runs with as many CPUs.
    #[serde(default = "one_cpu")]
    pub cpus: u32,
    /// The data disk's /sys/block/vda/queue/read_ahead_kb (the ext4 file system's `bdi->ra_pages`
    /// x 4, which every open file's `f_ra.ra_pages` starts from); 0 turns readahead off.
    #[serde(default)]
    pub read_ahead_kb: u32,
    /// /sys/kernel/debug/fault_around_bytes; 4096 (one page) turns fault-around off.
    #[serde(default = "no_fault_around")]
    pub fault_around_bytes: u64,
}

fn one_cpu() -> u32 {
    1
}

/// `fault_around_bytes` of one page: fault-around off.
pub const FAULT_AROUND_OFF: u64 = 4096;

fn no_fault_around() -> u64 {
    FAULT_AROUND_OFF
}

impl MachineSpec {
    /// Readahead and fault-around both off (every fault and every read brings in one page), the
    /// setting of the default and smp2 suites.
    pub fn one_page_per_fault(&self) -> bool {
        self.read_ahead_kb == 0 && self.fault_around_bytes == FAULT_AROUND_OFF
    }
}

/// Names of the trace files on the data disk.
pub fn file_name(id: u32) -> String {
    format!("file{id}")
}

/// The replay plan of a trace: processes in order of first appearance, each in the memcg of its
/// first record (as `Scenario::from_trace` does), records in file order.
pub fn build_plan(
    header: &TraceHeader,
    records: &[TraceRecord],
) -> Result<(PlanHeader, Vec<PlanRecord>), String> {
    let header = header.clone().completed(records);
    let mut h = PlanHeader::default();
    for (idx, path) in &header.memcgs {
        if *idx != 0 {
            h.memcgs.push(PlanMemcg {
                index: *idx,
                path: path.clone(),
            });
        }
    }
    let mut slot_of: BTreeMap<u32, u32> = BTreeMap::new();
    for (id, pages, _) in &header.files {
        slot_of.insert(*id, h.files.len() as u32);
        h.files.push(PlanFile {
            id: *id,
            pages: (*pages).max(1),
            name: file_name(*id),
        });
    }
    let mut proc_of: BTreeMap<u32, u32> = BTreeMap::new();
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        let pi = *proc_of.entry(r.pid).or_insert_with(|| {
            h.procs.push(PlanProc {
                pid: r.pid,
                memcg: r.memcg,
                anon_pages: 0,
            });
            h.procs.len() as u32 - 1
        });
        let (slot, page) = match r.page {
            PageRef::Anon { page } => {
                let p = &mut h.procs[pi as usize];
                p.anon_pages = p.anon_pages.max(page + 1);
                (ANON, page)
            }
            PageRef::File { file, page } => (
                *slot_of
                    .get(&file)
                    .ok_or_else(|| format!("file {file} has no size"))?,
                page,
            ),
        };
        out.push(PlanRecord::new(
            pi,
            slot,
            page,
            r.op == Op::Write,
            r.via == Via::Mmap,
        ));
    }
    h.n_records = out.len() as u64;
    Ok((h, out))
}

pub use reclaimlab_replayer::memcg_tree;

/// The kernel command line.
pub fn kernel_cmdline() -> &'static str {
    // loglevel=1 keeps kernel messages (OOM reports) out of the sections; THP and zswap off;
    // init_on_alloc=0 and mitigations=off only make TCG faster.
    // The function tracer on the memcg statistics flush, on CLOCK_MONOTONIC, 16 KiB a CPU
    // (TRACE_MEMCG_FLUSHES).
    "console=ttyS0 loglevel=1 panic=-1 transparent_hugepage=never zswap.enabled=0 \
     init_on_alloc=0 mitigations=off ftrace=function ftrace_filter=flush_memcg_stats_dwork \
     trace_clock=mono trace_buf_size=16K rdinit=/init"
}

/// The guest's `/init`: mounts, modules, the data disk, the reclaim settings, zram, memcgs,
/// then the replayer, then power-off. `modules` are initramfs paths in load order.
pub fn init_script(
    spec: &MachineSpec,
    mode: Mode,
    modules: &[String],
    memcgs: &[String],
) -> String {
    let mut s = String::new();
    s.push_str(
        "#!/bin/sh\n\
         export PATH=/bin\n\
         mount -t proc proc /proc\n\
         mount -t sysfs sysfs /sys\n\
         mount -t devtmpfs devtmpfs /dev\n\
         mount -t debugfs debugfs /sys/kernel/debug\n\
         mount -t cgroup2 cgroup2 /sys/fs/cgroup\n\
         fail() { echo \"=== guest error ===\"; echo \"$1\"; poweroff -f; }\n\
         echo \"=== reclaimlab guest v1 ===\"\n\
         echo \"=== kernel ===\"\n\
         echo \"release $(uname -r)\"\n\
         echo \"version $(cat /proc/version)\"\n",
    );
    for m in modules {
        s.push_str(&format!("insmod {m} || fail \"insmod {m}\"\n"));
    }
    s.push_str(
        "i=0; while [ ! -b /dev/vda ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n\
         [ -b /dev/vda ] || fail \"no /dev/vda\"\n",
    );
    // The data disk's readahead window is its bdi's (the ext4 file system on vda shares the
    // disk's bdi), set before the mount and before the replayer opens any file.
    s.push_str(&format!(
        "echo {} > /sys/block/vda/queue/read_ahead_kb || fail read_ahead_kb\n\
         mkdir -p /data\n\
         mount -t ext4 -o noatime /dev/vda /data || fail \"mount /dev/vda\"\n\
         echo {} > /sys/kernel/debug/fault_around_bytes || fail fault_around_bytes\n\
         echo 0 > /proc/sys/vm/page-cluster || fail page-cluster\n",
        spec.read_ahead_kb, spec.fault_around_bytes
    ));
    s.push_str(&format!(
        "echo {} > /proc/sys/vm/swappiness || fail swappiness\n",
        spec.swappiness
    ));
    if let Some(mib) = spec.zram_mib {
        s.push_str(&format!(
            "echo {} > /sys/block/zram0/disksize || fail disksize\n\
             mkswap /dev/zram0 > /dev/null || fail mkswap\n\
             swapon /dev/zram0 || fail swapon\n",
            mib << 20
        ));
    }
    s.push_str(&format!(
        "echo {} > /sys/kernel/mm/lru_gen/enabled || fail lru_gen/enabled\n\
         echo {} > /sys/kernel/mm/lru_gen/min_ttl_ms || fail min_ttl_ms\n\
         echo +memory > /sys/fs/cgroup/cgroup.subtree_control || fail subtree_control\n",
        mode.lru_gen_enabled(),
        spec.min_ttl_ms
    ));
    for m in memcgs {
        s.push_str(&format!("mkdir /sys/fs/cgroup{m} || fail \"mkdir {m}\"\n"));
        if memcgs.iter().any(|c| c.starts_with(&format!("{m}/"))) {
            s.push_str(&format!(
                "echo +memory > /sys/fs/cgroup{m}/cgroup.subtree_control || fail \"subtree {m}\"\n"
            ));
        }
        if let Some(max) = spec.memcg_max.get(m) {
            s.push_str(&format!(
                "echo {max} > /sys/fs/cgroup{m}/memory.max || fail \"memory.max {m}\"\n"
            ));
        }
    }
    s.push_str(
        "echo \"=== guest config ===\"\n\
         echo \"lru_gen_enabled $(cat /sys/kernel/mm/lru_gen/enabled)\"\n\
         echo \"min_ttl_ms $(cat /sys/kernel/mm/lru_gen/min_ttl_ms)\"\n\
         echo \"thp $(cat /sys/kernel/mm/transparent_hugepage/enabled)\"\n\
         echo \"page_cluster $(cat /proc/sys/vm/page-cluster)\"\n\
         echo \"swappiness $(cat /proc/sys/vm/swappiness)\"\n\
         echo \"min_free_kbytes $(cat /proc/sys/vm/min_free_kbytes)\"\n\
         echo \"watermark_scale_factor $(cat /proc/sys/vm/watermark_scale_factor)\"\n\
         echo \"dirty_ratio $(cat /proc/sys/vm/dirty_ratio)\"\n\
         echo \"dirty_background_ratio $(cat /proc/sys/vm/dirty_background_ratio)\"\n\
         echo \"fault_around_bytes $(cat /sys/kernel/debug/fault_around_bytes)\"\n\
         echo \"read_ahead_kb $(cat /sys/block/vda/queue/read_ahead_kb)\"\n\
         echo \"swap_kb $(awk 'NR>1 {s+=$3} END {print s+0}' /proc/swaps)\"\n\
         echo \"cmdline $(cat /proc/cmdline)\"\n",
    );
    if spec.zram_mib.is_some() {
        // The kernel's default compressor (lzo-rle in 6.1, lz4 from 6.12, whose zram has its
        // own backends): zram's pool is not charged to memcgs, so it does not enter the counters.
        s.push_str("echo \"zram_comp $(cat /sys/block/zram0/comp_algorithm)\"\n");
    }
    if spec.cpus > 1 {
        s.push_str("echo \"cpus $(awk '/^processor/ {n++} END {print n+0}' /proc/cpuinfo)\"\n");
    }
    for m in memcgs {
        s.push_str(&format!(
            "echo \"memory.max {m} $(cat /sys/fs/cgroup{m}/memory.max)\"\n"
        ));
    }
    s.push_str(TRACE_MEMCG_FLUSHES);
    s.push_str(
        "/bin/reclaimlab-replayer /plan.bin /data /sys/fs/cgroup || echo \"replayer exit $?\"\n",
    );
    s.push_str(PRINT_MEMCG_FLUSHES);
    s.push_str(
        "echo \"=== guest done ===\"\n\
         poweroff -f\n",
    );
    s
}

/// The guest traces the kernel's periodic memcg statistics flush
/// (`flush_memcg_stats_dwork`, every `FLUSH_TIME` on a deferrable timer queued when the root
/// memcg comes online) with the function tracer on CLOCK_MONOTONIC, so the harness can place
/// the boot's own flushes in its replay (`crate::pace::flush_schedule`): from 6.8 on, reclaim
/// reads memcg statistics as of the last flush, and where the flushes fall in a replay of a
/// few seconds moves its swap-out by tens of percent. The tracer is started from the command
/// line ([`kernel_cmdline`]), in `start_kernel` while one CPU runs, so that turning it on
/// patches no live code under the second vCPU (multi-threaded TCG can run a stale `int3`
/// after a patch: `BOOT_RETRIES` in lib.rs). The init only checks that the tracer, its filter
/// and its clock are the ones asked for, and prints `trace off` otherwise.
const TRACE_MEMCG_FLUSHES: &str = "T=/sys/kernel/debug/tracing\n\
     FLUSH_TRACE=off\n\
     if [ \"$(cat $T/current_tracer)\" = function ] \\\n\
        && [ \"$(cat $T/set_ftrace_filter)\" = flush_memcg_stats_dwork ] \\\n\
        && awk '/\\[mono\\]/ { ok = 1 } END { exit !ok }' $T/trace_clock; then FLUSH_TRACE=on; fi \
     2> /dev/null\n";

/// The `memcg flushes` section: `trace on` and `t SECONDS.MICROSECONDS` per traced flush, or
/// `trace off`.
const PRINT_MEMCG_FLUSHES: &str = "echo \"=== memcg flushes ===\"\n\
     echo \"trace $FLUSH_TRACE\"\n\
     [ $FLUSH_TRACE = on ] && awk '/flush_memcg_stats_dwork/ \\\n\
        { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\\.[0-9]+:$/) print \"t\", substr($i, 1, length($i) - 1) }' \\\n\
        $T/trace\n";

// ---------------------------------------------------------------------------------------------
// cpio (newc)
// ---------------------------------------------------------------------------------------------

/// A newc cpio archive built in memory (what the kernel unpacks as the initramfs).
#[derive(Default)]
pub struct Cpio {
    buf: Vec<u8>,
    ino: u32,
}

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.ino += 1;
        let name_z = name.len() + 1;
        let hdr = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.ino,
            mode,
            0,
            0,
            1,
            0,
            data.len(),
            0,
            0,
            rdev.0,
            rdev.1,
            name_z,
            0
        );
        self.buf.extend_from_slice(hdr.as_bytes());
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        self.pad();
        self.buf.extend_from_slice(data);
        self.pad();
    }
    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }
    pub fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, (0, 0), &[]);
    }
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.entry(name, 0o100000 | mode, (0, 0), data);
    }
    pub fn symlink(&mut self, name: &str, target: &str) {
        self.entry(name, 0o120777, (0, 0), target.as_bytes());
    }
    pub fn char_dev(&mut self, name: &str, major: u32, minor: u32) {
        self.entry(name, 0o020600, (major, minor), &[]);
    }
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, (0, 0), &[]);
        while !self.buf.len().is_multiple_of(512) {
            self.buf.push(0);
        }
        self.buf
    }
}

/// busybox applets the init script uses (never `busybox` itself: validation.md pitfall 8).
pub const APPLETS: &[&str] = &[
    "sh", "mount", "mkdir", "echo", "cat", "insmod", "sleep", "mkswap", "swapon", "poweroff",
    "uname", "awk", "ls", "[", "test",
];

// ---------------------------------------------------------------------------------------------
// Modules
// ---------------------------------------------------------------------------------------------

/// Modules the guest needs if the kernel does not have them built in: the PCI transport and
/// the block driver for the data disk, zram and its compressor.
pub const WANTED_MODULES: &[&str] = &["virtio_pci", "virtio_blk", "zram", "lzo_rle", "ext4"];

fn norm(name: &str) -> String {
    name.replace('-', "_")
}

/// A module file's name without `.ko[.xz|.zst|.gz]`.
fn module_name(path: &Path) -> Option<String> {
    let n = path.file_name()?.to_string_lossy().to_string();
    let base = n
        .strip_suffix(".xz")
        .or_else(|| n.strip_suffix(".zst"))
        .or_else(|| n.strip_suffix(".gz"))
        .unwrap_or(&n);
    base.strip_suffix(".ko").map(norm)
}

/// The `depends=` entry of a module's .modinfo section.
pub fn modinfo_depends(ko: &[u8]) -> Vec<String> {
    let pat = b"depends=";
    let mut i = 0;
    while i + pat.len() <= ko.len() {
        if &ko[i..i + pat.len()] == pat && (i == 0 || ko[i - 1] == 0) {
            let start = i + pat.len();
            let end = ko[start..]
                .iter()
                .position(|&b| b == 0)
                .map_or(ko.len(), |e| start + e);
            return String::from_utf8_lossy(&ko[start..end])
                .split(',')
                .filter(|s| !s.is_empty())
                .map(norm)
                .collect();
        }
        i += 1;
    }
    Vec::new()
}

fn read_module(path: &Path) -> Result<Vec<u8>, String> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        Some("xz")
    } else if name.ends_with(".zst") {
        Some("zstd")
    } else if name.ends_with(".gz") {
        Some("gzip")
    } else {
        None
    };
    match tool {
        None => std::fs::read(path).map_err(|e| format!("{}: {e}", path.display())),
        Some(t) => {
            let out = Command::new(t)
                .arg("-dc")
                .arg(path)
                .output()
                .map_err(|e| format!("cannot run {t}: {e}"))?;
            if !out.status.success() {
                return Err(format!("{t} -dc {} failed", path.display()));
            }
            Ok(out.stdout)
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
}

/// The modules to load, in order, as (name, uncompressed bytes): each wanted module that is not
/// built in, after its dependencies (from `depends=` in .modinfo; Debian's packages carry no
/// modules.dep, depmod makes it at install time).
pub fn resolve_modules(k: &KernelImage) -> Result<Vec<(String, Vec<u8>)>, String> {
    let builtin: Vec<String> = std::fs::read_to_string(k.modules_dir.join("modules.builtin"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| module_name(Path::new(l)))
        .collect();
    let mut files = Vec::new();
    walk(&k.modules_dir.join("kernel"), &mut files);
    let index: BTreeMap<String, PathBuf> = files
        .into_iter()
        .filter_map(|p| module_name(&p).map(|n| (n, p)))
        .collect();
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    fn visit(
        name: &str,
        index: &BTreeMap<String, PathBuf>,
        builtin: &[String],
        out: &mut Vec<(String, Vec<u8>)>,
        depth: u32,
    ) -> Result<(), String> {
        if builtin.iter().any(|b| b == name) || out.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        if depth > 16 {
            return Err(format!("module dependency loop at {name}"));
        }
        let Some(path) = index.get(name) else {
            return Err(format!("module {name} is neither built in nor shipped"));
        };
        let bytes = read_module(path)?;
        for d in modinfo_depends(&bytes) {
            visit(&d, index, builtin, out, depth + 1)?;
        }
        out.push((name.to_string(), bytes));
        Ok(())
    }
    for m in WANTED_MODULES {
        visit(m, &index, &builtin, &mut out, 0)?;
    }
    Ok(out)
}

/// Builds the initramfs: returns the cpio bytes.
pub fn build_initramfs(
    busybox: &[u8],
    replayer: &[u8],
    plan: &[u8],
    init: &str,
    modules: &[(String, Vec<u8>)],
) -> Vec<u8> {
    let mut c = Cpio::default();
    for d in [
        "bin",
        "dev",
        "proc",
        "sys",
        "data",
        "lib",
        "lib/modules",
        "tmp",
    ] {
        c.dir(d);
    }
    c.char_dev("dev/console", 5, 1);
    c.char_dev("dev/null", 1, 3);
    c.file("bin/busybox", 0o755, busybox);
    for a in APPLETS {
        c.symlink(&format!("bin/{a}"), "busybox");
    }
    c.file("bin/reclaimlab-replayer", 0o755, replayer);
    c.file("plan.bin", 0o644, plan);
    for (name, bytes) in modules {
        c.file(&format!("lib/modules/{name}.ko"), 0o644, bytes);
    }
    c.file("init", 0o755, init.as_bytes());
    c.finish()
}

/// The module paths inside the initramfs, in load order.
pub fn module_paths(modules: &[(String, Vec<u8>)]) -> Vec<String> {
    modules
        .iter()
        .map(|(n, _)| format!("/lib/modules/{n}.ko"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The data disk
// ---------------------------------------------------------------------------------------------

/// The contents of page `page` of file `id`: non-zero everywhere (no holes, not same-filled),
/// so every read is a real block read.
pub fn page_fill(id: u32, page: u64, buf: &mut [u8; 4096]) {
    let seed = ((id as u64) << 40) ^ page;
    for (i, chunk) in buf.chunks_exact_mut(8).enumerate() {
        let v = seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add((i as u64).wrapping_mul(0x0101_0101_0101_0101))
            | 0x0101_0101_0101_0101;
        chunk.copy_from_slice(&v.to_le_bytes());
    }
}

/// Builds (once, cached by file list) the ext4 image holding the plan's files; returns its path.
/// No journal, no lazy inode-table init (no background writes after mount).
pub fn build_disk(cache: &Path, files: &[PlanFile]) -> Result<PathBuf, String> {
    let key: String = files
        .iter()
        .map(|f| format!("{}-{}", f.id, f.pages))
        .collect::<Vec<_>>()
        .join("_");
    let key = if key.is_empty() { "empty".into() } else { key };
    let key = if key.len() > 80 {
        format!("h{:016x}", fnv(key.as_bytes()))
    } else {
        key
    };
    let dir = cache.join("disks");
    let img = dir.join(format!("{key}.ext4"));
    if img.is_file() {
        return Ok(img);
    }
    let src = dir.join(format!("{key}.src"));
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    let mut total = 0u64;
    for f in files {
        use std::io::Write;
        let path = src.join(&f.name);
        let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = std::io::BufWriter::new(file);
        let mut buf = [0u8; 4096];
        for p in 0..f.pages {
            page_fill(f.id, p, &mut buf);
            w.write_all(&buf).map_err(|e| e.to_string())?;
        }
        w.flush().map_err(|e| e.to_string())?;
        total += f.pages;
    }
    let size_kib = total * 4 * 11 / 10 + 32 * 1024;
    let tmp = dir.join(format!("{key}.ext4.tmp"));
    let out = Command::new("mkfs.ext4")
        .args([
            "-q",
            "-F",
            "-b",
            "4096",
            "-m",
            "0",
            "-O",
            "^has_journal",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0",
            "-d",
        ])
        .arg(&src)
        .arg(&tmp)
        .arg(format!("{size_kib}k"))
        .output()
        .map_err(|e| format!("cannot run mkfs.ext4: {e}"))?;
    let _ = std::fs::remove_dir_all(&src);
    if !out.status.success() {
        return Err(format!(
            "mkfs.ext4 failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    std::fs::rename(&tmp, &img).map_err(|e| e.to_string())?;
    Ok(img)
}

/// FNV-1a, for cache keys.
pub fn fnv(b: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use reclaimlab::trace::read_native;

    const TRACE: &str = "# reclaimlab-trace v1\n# memcg 1 /p/a\n# memcg 2 /p/b\n# file 3 8 data\n\
        1 10 1 f 3 7 r f\n2 20 2 a 0 5 w m\n3 10 1 f 3 0 w m\n4 20 2 f 3 1 r m\n5 10 2 a 0 0 r m\n";

    #[test]
    fn plan_from_trace() {
        let (h, r) = read_native(TRACE.as_bytes()).unwrap();
        let (ph, pr) = build_plan(&h, &r).unwrap();
        assert_eq!(ph.procs.len(), 2);
        assert_eq!(ph.procs[0].pid, 10);
        assert_eq!(ph.procs[0].memcg, 1, "memcg of the first record");
        assert_eq!(ph.procs[0].anon_pages, 1);
        assert_eq!(ph.procs[1].anon_pages, 6);
        assert_eq!(ph.files[0].name, "file3");
        assert_eq!(ph.files[0].pages, 8);
        assert_eq!(pr.len(), 5);
        assert!(!pr[0].is_mmap() && !pr[0].is_write() && pr[0].page == 7);
        assert!(pr[1].is_anon() && pr[1].is_write() && pr[1].proc_index() == 1);
        assert!(pr[2].is_mmap() && pr[2].is_write() && !pr[2].is_anon());
        // The encoded plan passes the guest's own checks.
        let bytes = reclaimlab_replayer::encode_plan(&ph, &pr);
        assert!(reclaimlab_replayer::decode_plan(&bytes).is_ok());
    }

    #[test]
    fn init_script_sets_everything() {
        let spec = MachineSpec {
            guest_mib: 512,
            memcg_max: [("/p".to_string(), 48 << 20)].into_iter().collect(),
            zram_mib: Some(256),
            swappiness: 60,
            min_ttl_ms: 0,
            cpus: 1,
            read_ahead_kb: 0,
            fault_around_bytes: FAULT_AROUND_OFF,
        };
        assert!(spec.one_page_per_fault());
        let memcgs = memcg_tree(["/p/a".to_string(), "/p/b".to_string()]);
        assert_eq!(memcgs, vec!["/p", "/p/a", "/p/b"]);
        let s = init_script(
            &spec,
            Mode::Mglru,
            &["/lib/modules/zram.ko".into()],
            &memcgs,
        );
        for needle in [
            "insmod /lib/modules/zram.ko",
            "echo 7 > /sys/kernel/mm/lru_gen/enabled",
            "echo 0 > /sys/kernel/mm/lru_gen/min_ttl_ms",
            "echo 268435456 > /sys/block/zram0/disksize",
            "swapon /dev/zram0",
            "echo +memory > /sys/fs/cgroup/p/cgroup.subtree_control",
            "echo 50331648 > /sys/fs/cgroup/p/memory.max",
            "mkdir /sys/fs/cgroup/p/a",
            "echo 0 > /proc/sys/vm/page-cluster",
            "echo 4096 > /sys/kernel/debug/fault_around_bytes",
            "echo 0 > /sys/block/vda/queue/read_ahead_kb",
            "/bin/reclaimlab-replayer /plan.bin /data /sys/fs/cgroup",
            "poweroff -f",
        ] {
            assert!(s.contains(needle), "missing {needle}");
        }
        assert!(!s.contains("/sys/fs/cgroup/p/a/cgroup.subtree_control"));
        assert!(
            !s.contains("echo \"cpus"),
            "one CPU: the script is as before"
        );
        let smp = init_script(
            &MachineSpec {
                cpus: 2,
                ..spec.clone()
            },
            Mode::Mglru,
            &[],
            &memcgs,
        );
        assert!(smp.contains("echo \"cpus $(awk"));
        // The memcg flushes are traced before the replayer and printed after it.
        let (trace, replay, print) = (
            smp.find("= flush_memcg_stats_dwork ]").unwrap(),
            smp.find("/bin/reclaimlab-replayer").unwrap(),
            smp.find("=== memcg flushes ===").unwrap(),
        );
        assert!(trace < replay && replay < print);
        // The script is valid sh (where the host has one).
        if let Ok(o) = std::process::Command::new("sh")
            .args(["-n", "-c", &smp])
            .output()
        {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        // The readahead suite's kernel defaults reach the script, in place of the off values.
        let ra_spec = MachineSpec {
            read_ahead_kb: 128,
            fault_around_bytes: 65536,
            ..spec.clone()
        };
        assert!(!ra_spec.one_page_per_fault());
        let ra = init_script(&ra_spec, Mode::Classic, &[], &memcgs);
        for needle in [
            "echo 128 > /sys/block/vda/queue/read_ahead_kb",
            "echo 65536 > /sys/kernel/debug/fault_around_bytes",
            "echo \"read_ahead_kb $(cat /sys/block/vda/queue/read_ahead_kb)\"",
        ] {
            assert!(ra.contains(needle), "missing {needle}");
        }
        assert!(!ra.contains("echo 0 > /sys/block/vda/queue/read_ahead_kb"));
        assert!(!ra.contains("echo 4096 > /sys/kernel/debug/fault_around_bytes"));
        // Readahead is set before the data disk is mounted (and so before any file is opened).
        assert!(ra.find("read_ahead_kb ||").unwrap() < ra.find("mount -t ext4").unwrap());
        // A spec saved before the fields existed reads back with both off.
        let mut j = serde_json::to_value(&spec).unwrap();
        j.as_object_mut().unwrap().remove("read_ahead_kb");
        j.as_object_mut().unwrap().remove("fault_around_bytes");
        let old: MachineSpec = serde_json::from_value(j).unwrap();
        assert_eq!(old, spec);
        let c = init_script(
            &MachineSpec {
                zram_mib: None,
                ..spec
            },
            Mode::Classic,
            &[],
            &memcgs,
        );
        assert!(c.contains("echo 0 > /sys/kernel/mm/lru_gen/enabled"));
        assert!(!c.contains("zram"));
        assert!(kernel_cmdline().contains("transparent_hugepage=never"));
        assert!(kernel_cmdline().contains("ftrace_filter=flush_memcg_stats_dwork"));
    }

    #[test]
    fn cpio_is_newc() {
        let b = build_initramfs(
            b"BB",
            b"RP",
            b"PLAN",
            "#!/bin/sh\n",
            &[("zram".into(), vec![1, 2])],
        );
        assert_eq!(&b[0..6], b"070701");
        assert_eq!(b.len() % 512, 0);
        let text = String::from_utf8_lossy(&b);
        assert!(text.contains("bin/reclaimlab-replayer"));
        assert!(text.contains("lib/modules/zram.ko"));
        assert!(text.contains("TRAILER!!!"));
        assert!(
            !text.contains("bin/busybox\0busybox"),
            "no busybox symlink over itself"
        );
    }

    #[test]
    fn modinfo_parsing() {
        let ko = b"\0license=GPL\0depends=zsmalloc,lzo-rle\0name=zram\0";
        assert_eq!(modinfo_depends(ko), vec!["zsmalloc", "lzo_rle"]);
        assert!(modinfo_depends(b"\0depends=\0").is_empty());
        assert_eq!(
            module_name(Path::new("a/virtio_blk.ko.xz")).as_deref(),
            Some("virtio_blk")
        );
    }

    #[test]
    fn pages_are_not_holes() {
        let mut b = [0u8; 4096];
        page_fill(0, 0, &mut b);
        assert!(b.iter().all(|&x| x != 0));
        let first = b;
        page_fill(0, 1, &mut b);
        assert_ne!(first, b);
    }
}
