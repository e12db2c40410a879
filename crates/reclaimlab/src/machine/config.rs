//! The description of a machine: memory per node, CPUs, devices, swap, memcgs, tunables and the
//! cost profile that turns work into simulated time.

use crate::consts::*;
use crate::machine::Watermarks;
use serde::{Deserialize, Serialize};

/// Time costs of the simulated clock, in nanoseconds. Defaults are order-of-magnitude figures
/// from published measurements (see docs/model.md, "Costs"); every one can be overridden.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CostProfile {
    /// CPU time of one access that hits (the application's own work per access included).
    pub cpu_access_ns: u64,
    /// A minor fault: page-table update, allocation and zeroing of an anon page, or mapping a
    /// page-cache page (handle_mm_fault without I/O).
    pub minor_fault_ns: u64,
    /// CPU part of a major fault or a buffered read miss, on top of the device time: the miss
    /// path (page-cache insertion, memcg charge, workingset check, the read's setup and
    /// submission; not the sleep, [`CostProfile::sleep_wake_ns`]).
    pub major_fault_cpu_ns: u64,
    /// A task's sleep in the kernel and its wake-up (`schedule` and `try_to_wake_up`: a context
    /// switch and a wake-up), paid by every wait for I/O, a throttle or a lock that sleeps.
    pub sleep_wake_ns: u64,
    /// zram compression of one page (lzo-rle class compressors: a few µs per 4 KiB).
    pub zram_compress_ns: u64,
    /// zram decompression of one page.
    pub zram_decompress_ns: u64,
    /// Reclaim work per folio scanned (isolation, list moves, shrink_folio_list decisions).
    pub reclaim_per_folio_ns: u64,
    /// One rmap/PTE check (folio_referenced_one, try_to_unmap_one).
    pub rmap_pte_ns: u64,
    /// Allocating and freeing a page (buddy allocator, memcg charge).
    pub alloc_page_ns: u64,
    /// One PTE looked at by MGLRU's page-table walk or look-around (a sequential scan of a PTE
    /// table; `get_pte_pfn` passes over none and old entries).
    pub pte_walk_ns: u64,
    /// What a young PTE adds to `pte_walk_ns` in that walk or look-around: `get_pfn_folio`,
    /// `ptep_clear_young_notify` and `folio_update_gen` (or the look-around's flag update).
    pub pte_young_ns: u64,
    /// Unmapping and freeing one page at munmap or exit (`zap_pte_range`).
    pub zap_pte_ns: u64,
    /// A `read()`/`write()` system call of one page through a file descriptor, besides the page
    /// cache's own work: entry and exit, `filemap_get_pages`, the 4 KiB copy to or from user.
    pub fd_syscall_ns: u64,
    /// The part of a `write()`'s `fd_syscall_ns` (its end) that holds the folio lock
    /// (`write_begin` through the copy to `write_end`), during which reclaim's `folio_trylock`
    /// fails; not added to it (at most all of it; 0: writes hold no lock over time).
    pub write_folio_lock_ns: u64,
    /// `lru_lock` held per folio put back or added from a batch (list unlink and link, flags,
    /// counters, on a folio its caller has just touched): only the lock's hold, already part
    /// of the costs above.
    pub lru_lock_hold_ns: u64,
    /// `lru_lock` held per folio an isolation scans from an LRU list's tail
    /// (`isolate_lru_folios`, MGLRU's `scan_folios`): one load of a folio no cache holds any
    /// more, which the list order makes dependent; the hold of the folios isolated (their CPU
    /// is in `reclaim_per_folio_ns`), and the kernel time of a folio MGLRU sorts or skips.
    pub lru_isolate_hold_ns: u64,
    /// What a `lru_lock` hold adds when another CPU held the lock last: the lock's, the list
    /// head's and the size counter's cache lines move from that CPU's cache (sys time of the
    /// new holder, and a longer hold).
    pub lru_lock_handoff_ns: u64,
    /// Starting writeback of one dirty page-cache folio: `->writepages` adding it to a bio and
    /// `submit_bio` (the flusher's CPU per page; also reclaim's `pageout`).
    pub writeback_page_ns: u64,
    /// Mapping one more cached page during fault-around (`filemap_map_pages`: the xarray step,
    /// folio lock and reference, `set_pte_range`, the file rmap and counters).
    pub fault_around_page_ns: u64,
    /// What an io_uring read costs beyond its inline issue when io_uring punts it to an io-wq
    /// worker (`io_queue_iowq`: the request's async state, `io_wq_enqueue` and the worker's
    /// wake-up, its switches in and out, the completion posted from the worker and the
    /// submitter's wake-up), in kernel time; charged where 6.1 punts (behaviour
    /// `io-uring-nowait-by-fmode`).
    pub io_wq_punt_ns: u64,
    /// Unlinking one VMA at munmap or exit, besides its PTEs (`free_pgtables`: the reverse
    /// map's `unlink_file_vma`/`unlink_anon_vmas`; `remove_vma`); the rmap lock's write hold
    /// lasts this long (an upper bound).
    pub vma_unlink_ns: u64,
}

impl Default for CostProfile {
    fn default() -> Self {
        CostProfile {
            cpu_access_ns: 100,
            minor_fault_ns: 1_000,
            major_fault_cpu_ns: 2_700,
            sleep_wake_ns: 2_600,
            zram_compress_ns: 4_000,
            zram_decompress_ns: 1_500,
            reclaim_per_folio_ns: 300,
            rmap_pte_ns: 100,
            alloc_page_ns: 150,
            pte_walk_ns: 2,
            pte_young_ns: 90,
            zap_pte_ns: 440,
            fd_syscall_ns: 1_000,
            write_folio_lock_ns: 460,
            lru_lock_hold_ns: 8,
            lru_isolate_hold_ns: 100,
            lru_lock_handoff_ns: 265,
            writeback_page_ns: 900,
            fault_around_page_ns: 164,
            vma_unlink_ns: 900,
            io_wq_punt_ns: 1_100,
        }
    }
}

impl CostProfile {
    /// What a wait of `wait_ns` in the kernel adds to its task's CPU: `sleep_wake_ns` if the
    /// task sleeps at all (`schedule` out, `try_to_wake_up` and the switch back in), else 0.
    #[inline]
    pub fn sleep_wake_for(&self, wait_ns: u64) -> u64 {
        if wait_ns > 0 {
            self.sleep_wake_ns
        } else {
            0
        }
    }
}

/// A block device: fixed latency per request, bandwidth, and a queue of `queue_depth` requests
/// served in parallel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceProfile {
    pub name: String,
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    /// How fast one request's data moves.
    pub bandwidth_bytes_per_s: u64,
    pub queue_depth: u32,
    /// What the requests in flight share (`machine/blockdev.rs`).
    #[serde(default)]
    pub channel: Channel,
    /// The queue's QUEUE_FLAG_NOWAIT (`bdev_nowait`): blk-mq queues have it
    /// (QUEUE_FLAG_MQ_DEFAULT), and so does brd (`brd_alloc`); the pmem driver does not set it
    /// (`pmem_attach_disk`, 6.1). 6.1's io_uring punts the reads of a file on a device without
    /// it to an io-wq worker (behaviour `io-uring-nowait-by-fmode`).
    #[serde(default = "yes")]
    pub queue_nowait: bool,
}

fn yes() -> bool {
    true
}

/// The bandwidth a device's requests in flight share, per direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// One channel at the device's `bandwidth_bytes_per_s`: a disk, an SSD behind its link.
    #[default]
    Bandwidth,
    /// One channel at this many bytes per second, while each request moves at
    /// `bandwidth_bytes_per_s` (persistent memory: one CPU's copy against the media's limit).
    BytesPerSec(u64),
    /// Nothing shared: each request is a copy by its own CPU (brd's memcpy), limited only by
    /// memory bandwidth, which is not modelled.
    PerCpuCopy,
}

impl DeviceProfile {
    /// `bdev_synchronous` (BLK_FEAT_SYNCHRONOUS, set by brd and pmem): the driver's
    /// `submit_bio` copies the data on the submitting CPU before it returns, so a read's time
    /// is that task's system time, not I/O wait, and its CPU runs nothing else meanwhile.
    pub fn is_synchronous(&self) -> bool {
        matches!(self.channel, Channel::PerCpuCopy | Channel::BytesPerSec(_))
    }
    /// The bandwidth the requests in flight share, if they share one.
    pub fn shared_bandwidth(&self) -> Option<u64> {
        match self.channel {
            Channel::Bandwidth => Some(self.bandwidth_bytes_per_s),
            Channel::BytesPerSec(bw) => Some(bw),
            Channel::PerCpuCopy => None,
        }
    }
    /// A datacenter NVMe SSD: ~80 µs random 4 KiB read, ~20 µs write (to its cache), 3 GB/s.
    pub fn nvme() -> Self {
        Self::new("nvme", 80_000, 20_000, 3_000_000_000, 128)
    }
    /// A 7200 rpm disk: ~8 ms seek + rotation, 150 MB/s, NCQ depth 32.
    pub fn hdd() -> Self {
        Self::new("hdd", 8_000_000, 8_000_000, 150_000_000, 32)
    }
    /// brd ramdisk: a memcpy, ~2 µs per 4 KiB request including the block layer, by the
    /// submitting CPU (`brd_submit_bio`): requests share no channel.
    pub fn ramdisk() -> Self {
        Self {
            channel: Channel::PerCpuCopy,
            ..Self::new("ramdisk", 2_000, 2_000, 8_000_000_000, 1024)
        }
    }
    /// Persistent memory through the pmem block driver (`pmem_submit_bio`): the submitting CPU
    /// copies each 4 KiB read from the media with `copy_mc_fragile` in 3.7 µs (1.1 GB/s),
    /// measured in seed 002's own profiles (github.com/zhaishuang1/MglruPerf: that function's
    /// cycles per page read, 3.51-3.79 µs in the six 40-job cells;
    /// `scripts/seed002_profile.py`), all reads sharing 15 GiB/s, the random-read throughput
    /// seed 002 gives for its Intel DC Persistent Memory ("up to 36 GiB/s and 15 GiB/s
    /// throughput, respectively, for sequential and random read access"). The write figures
    /// are estimates (no seed writes to pmem).
    pub fn pmem() -> Self {
        Self {
            channel: Channel::BytesPerSec(15 << 30),
            queue_nowait: false,
            ..Self::new("pmem", 0, 5_000, 1_100_000_000, 256)
        }
    }
    pub fn new(name: &str, read_ns: u64, write_ns: u64, bw: u64, qd: u32) -> Self {
        DeviceProfile {
            name: name.to_string(),
            read_latency_ns: read_ns,
            write_latency_ns: write_ns,
            bandwidth_bytes_per_s: bw,
            queue_depth: qd,
            channel: Channel::Bandwidth,
            queue_nowait: true,
        }
    }
    pub fn by_name(name: &str) -> Result<Self, String> {
        match name {
            "nvme" => Ok(Self::nvme()),
            "hdd" => Ok(Self::hdd()),
            "ramdisk" => Ok(Self::ramdisk()),
            "pmem" => Ok(Self::pmem()),
            _ => Err(format!(
                "unknown device profile '{name}' (expected nvme, hdd, ramdisk or pmem)"
            )),
        }
    }
}

/// Swap configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SwapConfig {
    None,
    /// zram: synchronous, compressed pages kept in RAM (`ratio` pages stored per page of RAM).
    Zram {
        size_pages: u64,
        compress_ratio: f64,
    },
    /// A swap partition on a block device (asynchronous I/O).
    Device {
        size_pages: u64,
        device: DeviceProfile,
    },
}

/// Which file system holds the files; it decides whether reclaim may write dirty page cache
/// itself (`->writepage`, classic-lru.md §4.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FsKind {
    Ext4,
    Xfs,
    /// tmpfs/shmem are not modelled as files; this variant is for a file system that keeps
    /// `->writepage` in every version (f2fs).
    F2fs,
}

impl FsKind {
    pub fn has_writepage(self, k: KernelModel) -> bool {
        match self {
            FsKind::Ext4 => !k.has(Behaviour::Ext4WritepageRemoved),
            FsKind::Xfs => false,
            FsKind::F2fs => true,
        }
    }
}

/// One memory cgroup (cgroup v2). Limits in pages; `u64::MAX` is "max".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemcgConfig {
    /// Path such as "/a" or "/a/b"; the parent must be declared first. "/" is the root.
    pub path: String,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
}

impl MemcgConfig {
    pub fn new(path: &str) -> Self {
        MemcgConfig {
            path: path.to_string(),
            max: u64::MAX,
            high: u64::MAX,
            low: 0,
            min: 0,
        }
    }
    pub fn with_max(mut self, pages: u64) -> Self {
        self.max = pages;
        self
    }
}

fn default_read_ahead_kb() -> u32 {
    VM_READAHEAD_KB
}

fn default_fault_around_bytes() -> u64 {
    DEFAULT_FAULT_AROUND_BYTES
}

fn default_memcg_stats_flush_ns() -> u64 {
    FLUSH_TIME_NS
}

fn is_flush_time(ns: &u64) -> bool {
    *ns == FLUSH_TIME_NS
}

fn is_true(b: &bool) -> bool {
    *b
}

/// The whole machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineConfig {
    pub kernel: Kernel,
    /// Memory per NUMA node in 4 KiB pages (one zone, ZONE_NORMAL, per node).
    pub node_pages: Vec<u64>,
    pub cpus: u32,
    pub swap: SwapConfig,
    pub file_device: DeviceProfile,
    pub fs: FsKind,
    pub swappiness: u32,
    /// `min_free_kbytes`; None = the kernel's default for this memory size.
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: u64,
    /// The file device's `queue/read_ahead_kb` (`bdi->ra_pages` × 4; 0 turns readahead off).
    #[serde(default = "default_read_ahead_kb")]
    pub read_ahead_kb: u32,
    /// /sys/kernel/debug/fault_around_bytes (rounded down to a power of two, at least a page,
    /// as the kernel's setter does; 4096 turns fault-around off).
    #[serde(default = "default_fault_around_bytes")]
    pub fault_around_bytes: u64,
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
    /// Tasks interleave with a reclaimer before each folio of its `shrink_folio_list` batch
    /// (`machine::Nest`, docs/model.md §1 "Reclaimers meet at the folio lock"); off, they
    /// interleave only between reclaim priorities. Experimental, off by default: it needs more
    /// than one CPU, and on some seed scenarios it is not understood yet (docs/seed-results.md).
    #[serde(default)]
    pub interleave: bool,
    /// At most this many folios per CPU in each per-CPU LRU batch (`folio_batch`), when a
    /// scaled-down scenario shrinks the batches with its memory (docs/model.md §2, "Per-CPU
    /// LRU batches at small scale"); None = the kernel's 31 (15 before v6.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_batch_cap: Option<u32>,
    /// At most this many pages per memcg charge (`MEMCG_CHARGE_BATCH`), and so in each
    /// per-CPU charge stock, when a scaled-down scenario shrinks it with its memory
    /// (docs/model.md §2, "Memory cgroups"); None = the kernel's 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcg_charge_batch_cap: Option<u32>,
    /// 1/scale of a scaled-down scenario: isolation batches cut short by the scan budget
    /// (`size >> priority`, which shrinks with the memory) take the lruvec lock as often as
    /// the unscaled machine's larger batches would (`Machine::lru_lock_isolate`; docs/model.md
    /// §1, "lru_lock"); None = every batch takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_lock_scale_down: Option<u32>,
    /// Whether PTE tables are charged to the faulting task's memcg (`pte_alloc` with
    /// __GFP_ACCOUNT). Scaled-down seed scenarios turn it off: a vma has at least one table
    /// whatever its size, so at scale 1/1024 their tables would be ~1000 times their seed's
    /// share of memory (docs/model.md §2, "Page tables").
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub charge_page_tables: bool,
    /// The period of the memcg statistics' periodic flush (`FLUSH_TIME`, 2 s), which is all
    /// that classical reclaim and the memcg dirty domain see of them on kernels that ratelimit
    /// their own flushes (6.8+, `memcg-stats-flush-ratelimited`). Scaled seed scenarios flush
    /// every `FLUSH_TIME × scale`; the validation harness sets it to the guest's 2 s in the
    /// model's time (the guest's replay lasts longer than the model's).
    #[serde(
        default = "default_memcg_stats_flush_ns",
        skip_serializing_if = "is_flush_time"
    )]
    pub memcg_stats_flush_ns: u64,
    /// When the first periodic flush falls, in 1..=`memcg_stats_flush_ns` after the run's start
    /// (its phase follows boot, not the run); None = half a period, the mean. The validation
    /// harness averages the model over several phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcg_stats_first_flush_ns: Option<u64>,
    pub memcgs: Vec<MemcgConfig>,
    pub cost: CostProfile,
    /// The capacity asked for with `--cache-pages`: textbook caches hold exactly this many
    /// pages; the kernel policies get a node sized by [`MachineConfig::fit_lru_pages`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_pages: Option<u64>,
    /// The behaviours of the modelled kernel when they are not `kernel`'s own (a policy's
    /// `--with`/`--without`); None = every behaviour of `kernel` ([`crate::behaviour`]).
    #[serde(skip)]
    pub behaviours: Option<Behaviours>,
}

impl MachineConfig {
    /// The modelled kernel: `kernel` with `behaviours` (or its own).
    pub fn kernel_model(&self) -> KernelModel {
        KernelModel {
            version: self.kernel,
            behaviours: self.behaviours.unwrap_or(Behaviours::of(self.kernel)),
        }
    }

    /// One node of `pages` pages, one CPU, no swap, an NVMe file device, ext4, default tunables.
    pub fn simple(pages: u64) -> Self {
        MachineConfig {
            kernel: Kernel::V6_12,
            node_pages: vec![pages],
            cpus: 1,
            swap: SwapConfig::None,
            file_device: DeviceProfile::nvme(),
            fs: FsKind::Ext4,
            swappiness: DEFAULT_SWAPPINESS,
            min_free_kbytes: None,
            watermark_scale_factor: WATERMARK_SCALE_FACTOR,
            read_ahead_kb: VM_READAHEAD_KB,
            fault_around_bytes: DEFAULT_FAULT_AROUND_BYTES,
            dirty_ratio: VM_DIRTY_RATIO,
            dirty_background_ratio: DIRTY_BACKGROUND_RATIO,
            interleave: false,
            lru_batch_cap: None,
            memcg_charge_batch_cap: None,
            lru_lock_scale_down: None,
            charge_page_tables: true,
            memcg_stats_flush_ns: FLUSH_TIME_NS,
            memcg_stats_first_flush_ns: None,
            memcgs: Vec::new(),
            cost: CostProfile::default(),
            cache_pages: None,
            behaviours: None,
        }
    }

    /// Readahead and fault-around off (`read_ahead_kb` 0, `fault_around_bytes` 4096): one
    /// page per fault, as the validation guests run (and as mechanism tests want it).
    pub fn one_page_per_fault(mut self) -> Self {
        self.read_ahead_kb = 0;
        self.fault_around_bytes = 4096;
        self
    }

    /// `__setup_per_zone_wmarks` for one zone per node: each node's watermarks.
    pub fn watermarks(&self) -> Vec<Watermarks> {
        let lowmem = self.total_pages().max(1);
        let min_free_kbytes = self
            .min_free_kbytes
            .unwrap_or_else(|| default_min_free_kbytes(lowmem));
        let pages_min = min_free_kbytes / 4;
        self.node_pages
            .iter()
            .map(|&nr_pages| {
                let tmp = pages_min * nr_pages / lowmem;
                let gap = (tmp >> 2).max(nr_pages * self.watermark_scale_factor / 10_000);
                Watermarks {
                    min: tmp,
                    low: tmp + gap,
                    high: tmp + 2 * gap,
                    promo: tmp + 3 * gap,
                }
            })
            .collect()
    }

    /// The pages above every node's high watermark: what kswapd leaves to the LRUs once it
    /// has balanced the nodes (`pgdat_balanced`), the machine's LRU capacity.
    pub fn pages_above_high(&self) -> u64 {
        self.node_pages
            .iter()
            .zip(self.watermarks())
            .map(|(&pages, w)| pages.saturating_sub(w.high))
            .sum()
    }

    /// Sizes a one-node machine so that at least `pages` pages lie above its high watermark,
    /// with the least memory that does (the watermarks grow with memory, so the result may
    /// exceed `pages` by the watermarks' rounding step); returns the capacity obtained.
    pub fn fit_lru_pages(&mut self, pages: u64) -> Result<u64, String> {
        if self.node_pages.len() != 1 {
            return Err(format!(
                "--cache-pages needs a one-node machine (this one has {} nodes)",
                self.node_pages.len()
            ));
        }
        if pages == 0 || pages > MAX_CACHE_PAGES {
            return Err(format!(
                "--cache-pages {pages} is out of range (1..={MAX_CACHE_PAGES})"
            ));
        }
        let above = |cfg: &mut MachineConfig, total: u64| {
            cfg.node_pages[0] = total;
            cfg.pages_above_high()
        };
        let mut total = pages.max(MIN_NODE_PAGES);
        while above(self, total) < pages {
            total += (pages - self.pages_above_high()).max(1);
        }
        while total > MIN_NODE_PAGES && above(self, total - 1) >= pages {
            total -= 1;
        }
        let got = above(self, total);
        self.cache_pages = Some(pages);
        Ok(got)
    }

    pub fn total_pages(&self) -> u64 {
        self.node_pages.iter().sum()
    }

    /// Checks the configuration, naming the first problem found.
    pub fn validate(&self) -> Result<(), String> {
        if self.node_pages.is_empty() || self.node_pages.iter().any(|&p| p < MIN_NODE_PAGES) {
            return Err("every node needs at least 256 pages (1 MiB) of memory".into());
        }
        if self.node_pages.len() > 64 {
            return Err("at most 64 nodes are modelled".into());
        }
        if self.cpus == 0 || self.cpus > MAX_CPUS {
            return Err(format!("cpus must be 1 to {MAX_CPUS}, not {}", self.cpus));
        }
        if self.swappiness > MAX_SWAPPINESS {
            return Err(format!(
                "swappiness {} is above {MAX_SWAPPINESS}",
                self.swappiness
            ));
        }
        if self.dirty_ratio == 0 || self.dirty_ratio > 100 || self.dirty_background_ratio > 100 {
            return Err("dirty ratios must be percentages, dirty_ratio > 0".into());
        }
        if self.fault_around_bytes < 4096 || !self.fault_around_bytes.is_power_of_two() {
            return Err(format!(
                "fault_around_bytes {} is not a power of two of at least 4096 (the kernel's \
                 setter rounds it down to one)",
                self.fault_around_bytes
            ));
        }
        if self.fault_around_bytes > 512 * 4096 {
            return Err("fault_around_bytes is at most one page table (2 MiB)".into());
        }
        if !self.read_ahead_kb.is_multiple_of(4) || self.read_ahead_kb > 1 << 20 {
            return Err(format!(
                "read_ahead_kb {} is not a multiple of 4 up to 1 GiB",
                self.read_ahead_kb
            ));
        }
        if self.memcg_stats_flush_ns == 0 {
            return Err("memcg_stats_flush_ns must be above 0".into());
        }
        if let Some(f) = self.memcg_stats_first_flush_ns {
            if f == 0 || f > self.memcg_stats_flush_ns {
                return Err(format!(
                    "memcg_stats_first_flush_ns {f} is not in 1..=memcg_stats_flush_ns ({})",
                    self.memcg_stats_flush_ns
                ));
            }
        }
        if self.watermark_scale_factor == 0 || self.watermark_scale_factor > 3000 {
            return Err("watermark_scale_factor must be in 1..=3000".into());
        }
        let swap_pages = match &self.swap {
            SwapConfig::None => 0,
            SwapConfig::Zram { size_pages, .. } | SwapConfig::Device { size_pages, .. } => {
                *size_pages
            }
        };
        if swap_pages >= u32::MAX as u64 {
            return Err("swap too large for the model (max 16 TiB)".into());
        }
        if let SwapConfig::Zram { compress_ratio, .. } = self.swap {
            if compress_ratio.is_nan() || compress_ratio < 1.0 {
                return Err("zram compress_ratio must be >= 1".into());
            }
        }
        let swap_dev = match &self.swap {
            SwapConfig::Device { device, .. } => Some(device),
            _ => None,
        };
        for dev in std::iter::once(&self.file_device).chain(swap_dev) {
            if dev.bandwidth_bytes_per_s == 0 || dev.queue_depth == 0 {
                return Err(format!(
                    "device {} needs bandwidth and queue depth",
                    dev.name
                ));
            }
            if dev.channel == Channel::BytesPerSec(0) {
                return Err(format!("device {}: a channel of 0 bytes/s", dev.name));
            }
        }
        if self.memcgs.len() > 4096 {
            return Err("at most 4096 memcgs are modelled".into());
        }
        Ok(())
    }
}
