//! Kernel constants, each under its kernel name, and the kernel versions reclaimlab models.
//! Every tunable default of the model lives here (or in [`crate::machine::CostProfile`] for costs).

pub use crate::behaviour::{Behaviour, Behaviours, KernelModel};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// `PAGE_SHIFT`: 4 KiB base pages.
pub const PAGE_SHIFT: u32 = 12;
/// `MAX_LFS_FILESIZE` on 64-bit kernels (`LLONG_MAX` bytes): no file page lies beyond it.
pub const MAX_LFS_FILESIZE: u64 = i64::MAX as u64;
/// Pages a file can have: the page index of `MAX_LFS_FILESIZE`'s last byte, plus one.
pub const MAX_LFS_PAGES: u64 = (MAX_LFS_FILESIZE >> PAGE_SHIFT) + 1;
/// `DEF_PRIORITY`: reclaim starts scanning `size >> 12`.
pub const DEF_PRIORITY: i32 = 12;
/// `SWAP_CLUSTER_MAX`: the reclaim batch, in pages.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `MAX_RECLAIM_RETRIES` (mm/internal.h).
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// `MAX_SWAPPINESS`.
pub const MAX_SWAPPINESS: u32 = 200;
/// `vm_swappiness` default.
pub const DEFAULT_SWAPPINESS: u32 = 60;
/// `watermark_scale_factor` default (per 10000).
pub const WATERMARK_SCALE_FACTOR: u64 = 10;
/// `min_free_kbytes` clamp (`calculate_min_free_kbytes`).
pub const MIN_FREE_KBYTES_LOW: u64 = 128;
pub const MIN_FREE_KBYTES_HIGH: u64 = 262_144;

// Limits of the model itself (no kernel names).
/// The smallest node the model builds (1 MiB): below it the watermarks leave nothing.
pub const MIN_NODE_PAGES: u64 = 256;
/// The latest simulated time a run may reach (2^62 ns, 146 years): trace times, `--max-time`
/// and lru_gen command times beyond it are refused, so that the clock never wraps.
pub const MAX_SIM_NS: u64 = 1 << 62;
/// The largest `--cache-pages` (8 TiB): page frame numbers are 32-bit.
pub const MAX_CACHE_PAGES: u64 = 1 << 31;
/// `VM_READAHEAD_PAGES` × 4 (include/linux/mm.h: SZ_128K): a block device's default
/// `queue/read_ahead_kb`, which becomes `bdi->ra_pages` and each open file's `f_ra.ra_pages`.
pub const VM_READAHEAD_KB: u32 = 128;
/// The default of /sys/kernel/debug/fault_around_bytes (mm/memory.c: 64 KiB, 16 pages).
pub const DEFAULT_FAULT_AROUND_BYTES: u64 = 65_536;
/// `MMAP_LOTSAMISS` (mm/filemap.c): past this many mmap misses in a file, read-around stops.
pub const MMAP_LOTSAMISS: u32 = 100;
/// `vm_dirty_ratio` (%).
pub const VM_DIRTY_RATIO: u64 = 20;
/// `dirty_background_ratio` (%).
pub const DIRTY_BACKGROUND_RATIO: u64 = 10;
/// `dirty_expire_interval` in centiseconds (30 s).
pub const DIRTY_EXPIRE_CENTISECS: u64 = 3000;
/// `dirty_writeback_interval` in centiseconds (5 s).
pub const DIRTY_WRITEBACK_CENTISECS: u64 = 500;
/// `MAX_WRITEBACK_PAGES`: the flusher's chunk per inode.
pub const MAX_WRITEBACK_PAGES: u64 = 1024;
/// `MEMCG_CHARGE_BATCH` (include/linux/memcontrol.h, pages): `try_charge_memcg` charges
/// at least this many and keeps the surplus in the CPU's charge stock (`memcg_stock_pcp`),
/// which `__refill_stock` drains once it holds more. Scaled seed scenarios cap it
/// (`MachineConfig::memcg_charge_batch_cap`).
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// `NR_MEMCG_STOCK` (mm/memcontrol.c, v6.16+): memcgs one CPU's charge stock caches at once
/// (one before: `memcg_stock_pcp::cached`).
pub const NR_MEMCG_STOCK: usize = 7;
/// `MEMCG_MAX_HIGH_DELAY_JIFFIES` = 2*HZ.
pub const MEMCG_MAX_HIGH_DELAY_JIFFIES: u64 = 2 * HZ;
/// `HZ` of the modelled kernel (Debian's configs use 250).
pub const HZ: u64 = 250;
/// Nanoseconds per jiffy.
pub const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;
/// `FLUSH_TIME` (mm/memcontrol.c): 2*HZ, the period of `flush_memcg_stats_dwork`, the flush
/// of the memcg statistics that rstat readers (`lruvec_page_state`, `memcg_page_state`) see
/// (docs/model.md §4, "Memcg statistics as reclaim reads them").
pub const FLUSH_TIME_NS: u64 = 2 * HZ * NS_PER_JIFFY;
/// `MEMCG_ID` width: `MEM_CGROUP_ID_SHIFT`.
pub const MEM_CGROUP_ID_SHIFT: u32 = 16;
/// `NODES_SHIFT` as assumed by the spec (classic-lru.md §5.2: 40 timestamp bits).
pub const NODES_SHIFT: u32 = 6;
/// `WORKINGSET_SHIFT`.
pub const WORKINGSET_SHIFT: u32 = 1;
/// `EVICTION_SHIFT` = BITS_PER_XA_VALUE-free bits used by the shadow packing (mm/workingset.c).
pub const EVICTION_SHIFT: u32 = 1 + WORKINGSET_SHIFT + NODES_SHIFT + MEM_CGROUP_ID_SHIFT;
/// `EVICTION_MASK`.
pub const EVICTION_MASK: u64 = !0u64 >> EVICTION_SHIFT;
/// `MAX_PAUSE` of balance_dirty_pages: HZ/5 (200 ms), the cap of `wb_max_pause`.
pub const DIRTY_MAX_PAUSE_JIFFIES: u64 = HZ / 5;
/// `INIT_BW` (mm/page-writeback.c): a wb's initial write bandwidth estimate, 100 MiB/s in
/// pages per second; the model keeps `avg_write_bandwidth` at it (docs/model.md §9 gap 27).
pub const INIT_BW_PAGES: u64 = 100 << (20 - PAGE_SHIFT);
/// A new task's `nr_dirtied_pause`: `128 >> (PAGE_SHIFT - 10)` pages dirtied between two
/// `balance_dirty_pages` calls (kernel/fork.c).
pub const NR_DIRTIED_PAUSE_INIT: u64 = 32;

/// `PSI_FREQ` (kernel/sched/psi.c): the averaging period of pressure stall information, in
/// jiffies (2 s + 1 jiffy; `psi_period = jiffies_to_nsecs(PSI_FREQ)`).
pub const PSI_FREQ: u64 = 2 * HZ + 1;
/// `FSHIFT` (include/linux/sched/loadavg.h): bits of precision of the fixed-point averages.
pub const FSHIFT: u32 = 11;
/// `FIXED_1`: 1.0 in that fixed point.
pub const FIXED_1: u64 = 1 << FSHIFT;
/// `EXP_10s`: 1/exp(2s/10s) in fixed point (psi.c).
pub const EXP_10S: u64 = 1677;
/// `EXP_60s`: 1/exp(2s/60s).
pub const EXP_60S: u64 = 1981;
/// `EXP_300s`: 1/exp(2s/300s).
pub const EXP_300S: u64 = 2034;
/// The ratelimit while the task's wb has `dirty_exceeded`: `32 >> (PAGE_SHIFT - 10)` pages
/// (`balance_dirty_pages_ratelimited_flags`).
pub const DIRTY_EXCEEDED_RATELIMIT: u64 = 8;
/// kswapd short sleep, `kswapd_try_to_sleep`: HZ/10.
pub const KSWAPD_SHORT_SLEEP_JIFFIES: u64 = HZ / 10;

// --- Multi-gen LRU (include/linux/mmzone.h, mm/vmscan.c) ---
/// `MIN_NR_GENS`: the two youngest generations are "active".
pub const MIN_NR_GENS: u64 = 2;
/// `MAX_NR_GENS`: the generation ring size.
pub const MAX_NR_GENS: u64 = 4;
/// `MAX_NR_TIERS`.
pub const MAX_NR_TIERS: usize = 4;
/// `LRU_REFS_WIDTH`: the refs counter saturates at 3.
pub const LRU_REFS_MAX: u8 = 3;
/// `MIN_LRU_BATCH` = BITS_PER_LONG.
pub const MIN_LRU_BATCH: u64 = 64;
/// `MAX_LRU_BATCH` = MIN_LRU_BATCH * 64.
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// `BLOOM_FILTER_SHIFT`: 2^15 bits, 2 hash functions, `NR_BLOOM_FILTERS` = 2.
pub const BLOOM_FILTER_SHIFT: u32 = 15;
/// `MEMCG_NR_GENS` (v6.7+) and `MEMCG_NR_BINS` of the memcg LRU.
pub const MEMCG_NR_GENS: usize = 3;
pub const MEMCG_NR_BINS: usize = 8;
/// `SWAPPINESS_ANON_ONLY` (`MAX_SWAPPINESS + 1`, "max").
pub const SWAPPINESS_ANON_ONLY: u32 = MAX_SWAPPINESS + 1;
/// `enabled` capability bits: LRU_GEN_CORE, LRU_GEN_MM_WALK, LRU_GEN_NONLEAF_YOUNG.
pub const LRU_GEN_CORE: u32 = 0x0001;
pub const LRU_GEN_MM_WALK: u32 = 0x0002;
pub const LRU_GEN_NONLEAF_YOUNG: u32 = 0x0004;
/// `suitable_to_scan` density: one young PTE per `cache_line_size / sizeof(pte_t)` = 8.
pub const SUITABLE_TO_SCAN_RATIO: u64 = 8;

/// `PAGEVEC_SIZE` (v6.1; also 6.1's look-around activation limit).
pub const PAGEVEC_SIZE: usize = 15;
/// `PAGEVEC_SIZE` / `FOLIO_BATCH_SIZE` after v6.8.
pub const FOLIO_BATCH_SIZE: usize = 31;

/// `reclaim_throttle` reasons and their timeouts (in jiffies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmscanThrottle {
    /// VMSCAN_THROTTLE_WRITEBACK, HZ/10.
    Writeback,
    /// VMSCAN_THROTTLE_ISOLATED, HZ/50.
    Isolated,
    /// VMSCAN_THROTTLE_NOPROGRESS, 1 jiffy.
    NoProgress,
    /// VMSCAN_THROTTLE_CONGESTED, 1 jiffy.
    Congested,
}

/// `NR_VMSCAN_THROTTLE`: the reasons, one `pgdat->reclaim_wait` queue each.
pub const NR_VMSCAN_THROTTLE: usize = 4;

impl VmscanThrottle {
    /// The reason's `reclaim_wait` queue.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn timeout_jiffies(self) -> u64 {
        match self {
            VmscanThrottle::Writeback => HZ / 10,
            VmscanThrottle::Isolated => HZ / 50,
            VmscanThrottle::NoProgress | VmscanThrottle::Congested => 1,
        }
    }
}

/// The kernel whose behaviour is modelled. Classical LRU distinguishes 6.1 and 6.12 (spec
/// classic-lru.md §11) and 7.x by the rows of `crate::behaviour` the classical path reads
/// (`Behaviour::OUTSIDE_MGLRU`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kernel {
    V6_1,
    V6_12,
    V7_1,
    V7_2,
    /// Debian's linux 7.2.13: 7.2 with the MGLRU changes merged beside the 2026 series.
    V7_2_13,
}

impl Kernel {
    /// The kernels of the spec's eras (issue 3). `V7_2_13`, Debian's 7.2 as validation boots
    /// it, is 7.2 with more switches on; it is in `WITH_DEBIAN_7_2`.
    pub const ALL: [Kernel; 4] = [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1, Kernel::V7_2];
    /// `ALL` and Debian's 7.2.13.
    pub const WITH_DEBIAN_7_2: [Kernel; 5] = [
        Kernel::V6_1,
        Kernel::V6_12,
        Kernel::V7_1,
        Kernel::V7_2,
        Kernel::V7_2_13,
    ];

    /// Every behaviour whose first kernel is at most this one ([`crate::behaviour`]).
    pub fn behaviours(self) -> crate::behaviour::Behaviours {
        crate::behaviour::Behaviours::of(self)
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kernel::V6_1 => "6.1",
            Kernel::V6_12 => "6.12",
            Kernel::V7_1 => "7.1",
            Kernel::V7_2 => "7.2",
            Kernel::V7_2_13 => "7.2.13",
        })
    }
}

impl FromStr for Kernel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "6.1" => Ok(Kernel::V6_1),
            "6.12" => Ok(Kernel::V6_12),
            "7.1" => Ok(Kernel::V7_1),
            "7.2" => Ok(Kernel::V7_2),
            "7.2.13" => Ok(Kernel::V7_2_13),
            _ => Err(format!(
                "unknown kernel '{s}' (expected 6.1, 6.12, 7.1, 7.2 or 7.2.13)"
            )),
        }
    }
}

/// `int_sqrt`.
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// `calculate_min_free_kbytes`: int_sqrt(lowmem_kbytes * 16) clamped to [128, 262144].
pub fn default_min_free_kbytes(lowmem_pages: u64) -> u64 {
    let kbytes = lowmem_pages * 4;
    int_sqrt(kbytes * 16).clamp(MIN_FREE_KBYTES_LOW, MIN_FREE_KBYTES_HIGH)
}

// --- The scheduler (kernel/sched/fair.c) ---

/// `sysctl_sched_latency` before scaling: CFS's targeted preemption latency (6 ms).
pub const SYSCTL_SCHED_LATENCY_NS: u64 = 6_000_000;
/// `sysctl_sched_min_granularity` before scaling: CFS's shortest slice (0.75 ms).
pub const SYSCTL_SCHED_MIN_GRANULARITY_NS: u64 = 750_000;
/// `sysctl_sched_base_slice` before scaling: EEVDF's slice (0.75 ms, v6.6+).
pub const SYSCTL_SCHED_BASE_SLICE_NS: u64 = 750_000;
/// `get_update_sysctl_factor` with SCHED_TUNABLESCALING_LOG: the tunables above are multiplied
/// by `1 + ilog2(min(ncpus, 8))`.
pub const SCHED_TUNABLESCALING_MAX_CPUS: u32 = 8;
/// Most simulated CPUs: `CONFIG_NR_CPUS` of Debian's x86-64 kernels (8192).
pub const MAX_CPUS: u32 = 8192;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sqrt_is_floor() {
        for x in 0..10_000u64 {
            let r = int_sqrt(x);
            assert!(r * r <= x && (r + 1) * (r + 1) > x, "x={x} r={r}");
        }
    }

    #[test]
    fn min_free_kbytes_matches_kernel_table() {
        // Documentation/vm: 16 MiB -> 512k, 1 GiB -> 4096k, 16 GiB -> 16384k (int_sqrt(16*kb)).
        assert_eq!(default_min_free_kbytes(16 << 8), 512);
        assert_eq!(default_min_free_kbytes(1 << 18), 4096);
        assert_eq!(default_min_free_kbytes(16 << 18), 16384);
        assert_eq!(default_min_free_kbytes(1), 128);
    }

    #[test]
    fn eviction_bits_leave_40_timestamp_bits() {
        assert_eq!(64 - EVICTION_SHIFT, 40);
    }
}
