//! Kernels as data: one row per way the modelled kernels differ ([`TABLE`]). A kernel is the
//! set of behaviours whose first kernel it reaches ([`Behaviours::of`]); the model asks
//! `has(Behaviour::X)` and never compares versions. 6.1 is the baseline: what only 6.1 does is
//! a behaviour that 6.12 *adds* by removing it (e.g. `ext4-writepage-removed`). One exception:
//! 6.12 is Debian's 6.12.117, which also has rows of a later kernel that 7.1 lacks
//! ([`Behaviour::DEBIAN_6_12_117`]).
//!
//! Adding a behaviour (docs/model.md §5.1): one row in [`TABLE`] (and its variant in
//! [`Behaviour`]); its code behind one `has(Behaviour::X)`.

use crate::consts::Kernel;
use std::fmt;
use std::str::FromStr;

/// One way the modelled kernels differ. The order is the table's (and [`Behaviour::ALL`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Behaviour {
    // --- 6.12, outside MGLRU ---
    FolioBatch31,
    CostCountsRotations,
    Eevdf,
    PartialMemcgWalk,
    CacheTrimModeFailed,
    KswapdCountsReclaimed,
    RefaultSwapCheckEvictionMemcg,
    Ext4WritepageRemoved,
    VmaHasRecency,
    SyncSwapIoInPgpg,
    ReadaheadRework,
    MemoryReclaimSwappiness,
    MemoryReclaimQuarterBatch,
    RefaultOfDeadMemcgCounts,
    CgroupCongestedSplit,
    MemcgStatsFlushRatelimited,
    IoUringNowaitByFmode,
    // --- 6.12, MGLRU (Eras A' and B of spec mglru.md §0) ---
    LruGenShrinkNode,
    MemcgLru,
    AgingFromEvictionPath,
    AgingCheckBeforeSizing,
    ForcedAgingNeedsMmWalk,
    IsolateFolioTrustsCallers,
    FlusherWakeupOnUnqueuedDirty,
    RefaultCountsEveryRefault,
    ProactiveMmWalker,
    LookAroundCanSwapByType,
    LookAroundActivatesDirectly,
    DebugfsMmWalkStats,
    ActiveAddClearsRefs,
    // --- 7.1, outside MGLRU ---
    FaultAroundCreditsFaultingFolioOnly,
    MultiMemcgStock,
    NoteCostSkipsZero,
    // --- 7.1, MGLRU (Eras C and D) ---
    WorkingsetTopTier,
    ProtectedAtTier,
    SetRefsOnPteYoung,
    LruGenFolioSeq,
    TypeSelectionAllTiers,
    IndependentMinSeq,
    AgingByGenCount,
    RefaultRecentWindow,
    SwappinessAnonOnly,
    EvictNrToScanBound,
    ProportionalProtection,
    RejectedFolioPlacement,
    WalkSmallMms,
    GetPfnFolioListedOnly,
    DebugfsMemcgId,
    DebugfsCmdTargetsMemcg,
    // --- 7.2: the 2026 series, one row per patch ---
    ConsolidateEvictableSize,
    RenameAgingRotationVars,
    RelocateScanBatchLimit,
    RestructureReclaimLoop,
    ExactScanCount,
    AvoidTypeFallback,
    SmallerReclaimBatch,
    DontAbortAfterAging,
    RemoveSwapConstrainedCheck,
    CommonDirtyWritebackReactivation,
    SimplifyDirtyWriteback,
    DropReclaimingArg,
    RemoveFileTaken,
    RemoveUnqueuedDirty,
    UnifyWritebackThrottling,
    /// Experimental: MGLRU-FG patch 06/32 (not part of any released kernel).
    FgPromotion,
    // --- 7.2.13: MGLRU changes beside the series, as found in Debian's linux 7.2.13 ---
    ReferencedPlacement,
    FaultMarksAccessed,
    SecondAccessPromotion,
    RefaultActivateWorkingsetOnly,
    MemcgReclaimAbortsAtGoal,
}

/// The first kernel that has a behaviour, or none (experimental, opt-in only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum First {
    Kernel(Kernel),
    Experimental,
}

impl fmt::Display for First {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            First::Kernel(k) => write!(f, "{k}"),
            First::Experimental => f.write_str("experimental"),
        }
    }
}

/// One row of the behaviour table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub behaviour: Behaviour,
    /// Kebab-case, as policy strings and `--with`/`--without` spell it.
    pub name: &'static str,
    /// One line.
    pub description: &'static str,
    /// The upstream commit or patch (series and number), or where it was found.
    pub upstream: &'static str,
    pub first: First,
    /// The kernel functions whose modelled code reads it.
    pub functions: &'static [&'static str],
    /// Behaviours it builds on: the kernel never has it without them.
    pub requires: &'static [Behaviour],
}

use Behaviour as B;

const V6_12: First = First::Kernel(Kernel::V6_12);
const V7_1: First = First::Kernel(Kernel::V7_1);
const V7_2: First = First::Kernel(Kernel::V7_2);
const V7_2_13: First = First::Kernel(Kernel::V7_2_13);
/// Found in Debian's linux-source 7.2.13, not traced to a commit.
const DEBIAN: &str = "Debian linux-source 7.2.13, beside the 2026 series; commit not identified";

const fn row(
    behaviour: Behaviour,
    name: &'static str,
    first: First,
    upstream: &'static str,
    functions: &'static [&'static str],
    requires: &'static [Behaviour],
    description: &'static str,
) -> Row {
    Row {
        behaviour,
        name,
        description,
        upstream,
        first,
        functions,
        requires,
    }
}

/// Every behaviour, in [`Behaviour`] order. The series rows are the 15 patches of "mm/mglru:
/// improve reclaim loop and dirty folio handling" (Kairui Song, v7; spec series-2026.md §A.2).
#[rustfmt::skip]
pub const TABLE: [Row; 70] = [
    row(B::FolioBatch31, "folio-batch-31", V6_12,
        "9cecde80aae0 mm: increase folio batch size (v6.9)",
        &["folio_batch_add", "folio_add_lru", "folio_activate"], &[],
        "per-CPU LRU batches hold 31 folios (6.1: PAGEVEC_SIZE 15)"),
    row(B::CostCountsRotations, "cost-counts-rotations", V6_12,
        "0538a82c39e9 mm: vmscan: make rotations a secondary factor in balancing anon vs file (v6.2)",
        &["lru_note_cost", "shrink_active_list"], &[],
        "lru_note_cost counts rotations and weighs IO by SWAP_CLUSTER_MAX"),
    row(B::Eevdf, "eevdf", V6_12,
        "147f3efaa241 sched/fair: Implement an EEVDF-like scheduling policy (v6.6)",
        &["pick_eevdf", "sched_slice"], &[],
        "the fair class runs sysctl_sched_base_slice at a time (6.1: CFS divides sched_latency)"),
    row(B::PartialMemcgWalk, "partial-memcg-walk", V6_12,
        "6be5e186fd65 mm: vmscan: restore incremental cgroup iteration (v6.11; release inferred)",
        &["shrink_node_memcgs", "mem_cgroup_iter"], &[],
        "direct reclaim walks memcgs partially with a shared cookie"),
    row(B::CacheTrimModeFailed, "cache-trim-mode-failed", V6_12,
        "d221dd5fea64 mm, vmscan: retry kswapd's priority loop with cache_trim_mode off on failure (v6.9)",
        &["prepare_scan_control", "shrink_node"], &[],
        "cache_trim_mode is skipped after it failed (no_cache_trim_mode)"),
    row(B::KswapdCountsReclaimed, "kswapd-counts-reclaimed", V6_12,
        "3f74e6bd3b84 mm/mglru: fix overshooting shrinker memory (v6.11)",
        &["kswapd_shrink_node"], &[],
        "kswapd_shrink_node returns max(nr_scanned, reclaimed) >= nr_to_reclaim"),
    row(B::RefaultSwapCheckEvictionMemcg, "refault-swap-check-eviction-memcg", V6_12,
        "f78dfc7b77d5 workingset: fix confusion around eviction vs refault container (v6.3)",
        &["workingset_test_recent"], &[],
        "the refault swap check uses the eviction memcg, not the refaulting one"),
    row(B::Ext4WritepageRemoved, "ext4-writepage-removed", V6_12,
        "dae999602eeb ext4: stop providing .writepage hook (v6.2; release inferred)",
        &["pageout"], &[],
        "ext4 has no ->writepage: reclaim cannot write ext4 pages itself (6.1: kswapd may)"),
    row(B::VmaHasRecency, "vma-has-recency", V6_12,
        "8788f6781486 mm: add vma_has_recency() (v6.3)",
        &["folio_referenced_one", "vma_has_recency"], &[],
        "folio_referenced skips VM_SEQ_READ and VM_RAND_READ vmas (6.1: ignores young only for VM_SEQ_READ)"),
    row(B::SyncSwapIoInPgpg, "sync-swap-io-in-pgpg", V6_12,
        "3222d8c2a7f8 block: remove ->rw_page (v6.3)",
        &["swap_read_folio", "__swap_writepage"], &[],
        "swap I/O to zram goes through submit_bio and counts pgpgin/pgpgout"),
    row(B::ReadaheadRework, "readahead-rework", V6_12,
        "v6.2-v6.12 readahead rework; commits not identified",
        &["page_cache_sync_ra", "page_cache_async_ra", "page_cache_next_miss", "page_cache_ra_unbounded", "filemap_map_pages"], &[],
        "sync and async readahead decide for themselves (no ondemand_readahead); ra stops at a failed charge"),
    row(B::MemoryReclaimSwappiness, "memory-reclaim-swappiness", V6_12,
        "68cd9050d871 mm: add swappiness= arg to memory.reclaim (v6.13; the model gives it to 6.12)",
        &["memory_reclaim"], &[],
        "memory.reclaim takes swappiness="),
    row(B::MemoryReclaimQuarterBatch, "memory-reclaim-quarter-batch", V6_12,
        "287d5fedb377 mm: memcg: use larger batches for proactive reclaim (v6.9)",
        &["memory_reclaim"], &[],
        "memory.reclaim asks try_to_free_mem_cgroup_pages for a quarter of what remains (6.1: all of it)"),
    row(B::RefaultOfDeadMemcgCounts, "refault-of-dead-memcg-counts", V6_12,
        "ffcb5f5262b7 workingset: refactor LRU refault to expose refault recency check (v6.5)",
        &["workingset_refault"], &[],
        "a refault whose eviction memcg is gone still counts workingset_refault_*"),
    row(B::CgroupCongestedSplit, "cgroup-congested-split", V6_12,
        "1bc545bff45c mm/vmscan: fix root proactive reclaim unthrottling unbalanced node (v6.5; release inferred)",
        &["do_try_to_free_pages", "snapshot_refaults"], &[],
        "do_try_to_free_pages clears only LRUVEC_CGROUP_CONGESTED (6.1: its one congested bit)"),
    row(B::MemcgStatsFlushRatelimited, "memcg-stats-flush-ratelimited", V6_12,
        "mm: vmscan: use ratelimited memcg stats flush in the reclaim path, and mm: memcg: restore subtree stats flushing (Yosry Ahmed, v6.8); commit ids not looked up",
        &["mem_cgroup_flush_stats_ratelimited", "prepare_scan_control", "inactive_is_low", "workingset_test_recent", "lru_note_cost", "mem_cgroup_wb_stats"], &[],
        "classical reclaim and the memcg dirty domain read memcg statistics as of the last periodic flush (FLUSH_TIME, 2 s; 6.1 flushes them on reading)"),
    row(B::IoUringNowaitByFmode, "io-uring-nowait-by-fmode", V6_12,
        "found by reading 6.1's io_uring/io_uring.c (__io_file_supports_nowait: a regular file needs io_bdev_nowait(i_sb->s_bdev)) and 6.12's (io_file_get_flags: FMODE_NOWAIT alone); commit not identified",
        &["io_file_get_flags", "__io_file_supports_nowait", "io_read"], &[],
        "io_uring reads a file inline when the file has FMODE_NOWAIT (6.1 also needs its block device's QUEUE_FLAG_NOWAIT, which pmem lacks, and punts every other read to an io-wq worker)"),
    row(B::LruGenShrinkNode, "lru-gen-shrink-node", V6_12,
        "e4dde56cd208 mm: multi-gen LRU: per-node lru_gen_folio lists (v6.3)",
        &["lru_gen_shrink_node", "shrink_node_memcgs", "try_to_shrink_lruvec", "should_abort_scan"], &[],
        "MGLRU reclaim goes through lru_gen_shrink_node/try_to_shrink_lruvec (6.1: get_nr_to_scan per memcg)"),
    row(B::MemcgLru, "memcg-lru", V6_12,
        "e4dde56cd208 mm: multi-gen LRU: per-node lru_gen_folio lists (v6.3)",
        &["shrink_many", "lru_gen_rotate_memcg"], &[B::LruGenShrinkNode],
        "the kernel's default memcg walk is the memcg LRU (6.1: mem_cgroup_iter); a policy's walk is its @WALK"),
    row(B::AgingFromEvictionPath, "aging-from-eviction-path", V6_12,
        "7348cc91821b mm: multi-gen LRU: remove aging fairness safeguard (v6.3)",
        &["lru_gen_age_node", "age_lruvec"], &[],
        "kswapd's lru_gen_age_node only checks min_ttl; aging runs from the eviction path (6.1: age_lruvec)"),
    row(B::AgingCheckBeforeSizing, "aging-check-before-sizing", V6_12,
        "7348cc91821b mm: multi-gen LRU: remove aging fairness safeguard (v6.3)",
        &["should_run_aging"], &[],
        "should_run_aging returns before sizing the lruvec when aging is a must"),
    row(B::ForcedAgingNeedsMmWalk, "forced-aging-needs-mm-walk", V6_12,
        "f386e9314025 mm: multi-gen LRU: simplify arch_has_hw_pte_young() check (v6.3)",
        &["try_to_inc_max_seq"], &[],
        "a forced scan walks page tables only with LRU_GEN_MM_WALK (6.1: always)"),
    row(B::IsolateFolioTrustsCallers, "isolate-folio-trusts-callers", V6_12,
        "e9d4e1ee7880 mm: multi-gen LRU: clarify scan_control flags (v6.3)",
        &["isolate_folio"], &[],
        "isolate_folio no longer refuses under !may_unmap or !may_writepage (callers skip such reclaim)"),
    row(B::FlusherWakeupOnUnqueuedDirty, "flusher-wakeup-on-unqueued-dirty", V6_12,
        "1bc542c6a0d1 mm/vmscan: wake up flushers conditionally to avoid cgroup OOM (v6.13; stable 6.12.104; in 7.1 and in Debian's 6.12.117)",
        &["evict_folios", "shrink_node", "wakeup_flusher_threads"], &[],
        "MGLRU feeds sc->nr.file_taken/unqueued_dirty; the flusher wakes when all taken file pages were unqueued dirty"),
    row(B::RefaultCountsEveryRefault, "refault-counts-every-refault", V6_12,
        "3af0191a594d Multi-gen LRU: fix workingset accounting (v6.5)",
        &["lru_gen_refault", "sort_folio"], &[],
        "lru_gen_refault counts workingset_refault for every refault and workingset_activate itself (6.1.176: recent refaults, and sort_folio counts protection as activation)"),
    row(B::ProactiveMmWalker, "proactive-mm-walker", V6_12,
        "e9d4e1ee7880 mm: multi-gen LRU: clarify scan_control flags (v6.3)",
        &["set_mm_walk"], &[],
        "proactive reclaim holds an mm walker (as kswapd does)"),
    row(B::LookAroundCanSwapByType, "look-around-can-swap-by-type", V6_12,
        "a3235ea2a88b Multi-gen LRU: fix can_swap in lru_gen_look_around() (v6.6; id from akpm/mm)",
        &["lru_gen_look_around", "get_pfn_folio"], &[],
        "look-around updates anon neighbours when the folio it starts from is anon (6.1: unless a walker at swappiness 0)"),
    row(B::LookAroundActivatesDirectly, "look-around-activates-directly", V6_12,
        "abf086721a2f mm: multi-gen LRU: simplify lru_gen_look_around() (v6.3)",
        &["lru_gen_look_around"], &[],
        "look-around activates young off-generation folios one by one (6.1: a bitmap batch of at most PAGEVEC_SIZE)"),
    row(B::DebugfsMmWalkStats, "debugfs-mm-walk-stats", V6_12,
        "ddd6d8e975b1 mm: multi-gen LRU: remove MM_LEAF_OLD and MM_NONLEAF_TOTAL stats (v6.12)",
        &["lru_gen_seq_show"], &[],
        "lru_gen_full prints TYFA mm-walk stats and x marks (6.1: LOYNFA and blanks)"),
    row(B::ActiveAddClearsRefs, "active-add-clears-refs", V6_12,
        "6.12.117's lru_gen_add_folio; gone again with lru-gen-folio-seq; commit not identified",
        &["lru_gen_add_folio"], &[],
        "a folio added active also loses its refs counter and PG_referenced (not once lru-gen-folio-seq is in)"),
    row(B::FaultAroundCreditsFaultingFolioOnly, "fault-around-credits-faulting-folio-only", V7_1,
        "0b9c0aeba938 mm/filemap: count only the faulting address as a mmap hit (v7.2 in akpm/mm beside the series; the model gives it to 7.1, as the base the series was measured on (unverified): mglru:7.1-fault-around-credits-faulting-folio-only is 7.1 without it)",
        &["filemap_map_pages"], &[],
        "filemap_map_pages credits mmap_miss once per fault, for the faulting folio only"),
    row(B::MultiMemcgStock, "multi-memcg-stock", V7_1,
        "memcg: multi-memcg percpu charge cache, Shakeel Butt, 2025 (v6.16, from memory); commit id not looked up",
        &["consume_stock", "refill_stock", "drain_all_stock"], &[],
        "each CPU's charge stock caches up to NR_MEMCG_STOCK (7) memcgs, a full one drains its slots round-robin (6.1/6.12: one memcg)"),
    row(B::NoteCostSkipsZero, "note-cost-skips-zero", V7_1,
        "mm: lru_note_cost_unlock_irq() (Hugh Dickins, v6.17, read in 7.2.13's mm/swap.c); commit id not looked up",
        &["lru_note_cost_unlock_irq", "shrink_inactive_list", "shrink_active_list"], &[],
        "lru_note_cost returns at a cost of 0, neither decaying the costs nor locking the ancestors' lruvecs (6.1/6.12: both, whatever the cost); after a reclaim batch it updates the batch's lruvec before releasing its lock (6.1/6.12 release it and queue for it again)"),
    row(B::WorkingsetTopTier, "workingset-top-tier", V7_1, "4d5d14a01e2c mm/mglru: rework workingset protection (v6.14)",
        &["folio_lru_refs", "lru_tier_from_refs", "lru_gen_inc_refs", "sort_folio", "isolate_folio", "lru_gen_eviction"], &[B::RefaultCountsEveryRefault],
        "new tier encoding: PG_workingset is the top tier, fd accesses count ref -> counter -> workingset"),
    row(B::ProtectedAtTier, "protected-at-tier", V7_1, "798c0330c2ca mm/mglru: rework aging feedback (v6.14)",
        &["read_ctrl_pos", "reset_ctrl_pos", "inc_min_seq", "lru_gen_seq_show"], &[B::WorkingsetTopTier],
        "protected counts sit at index tier (tier 0 included) and inc_min_seq counts them"),
    row(B::SetRefsOnPteYoung, "set-refs-on-pte-young", V7_1, "4d5d14a01e2c mm/mglru: rework workingset protection (v6.14)",
        &["folio_update_gen", "lru_gen_set_refs", "lru_gen_look_around", "folio_check_references"], &[B::WorkingsetTopTier],
        "a young PTE first marks PG_referenced, the second sighting promotes and sets workingset; rmap uses lru_gen_set_refs"),
    row(B::LruGenFolioSeq, "lru-gen-folio-seq", V7_1, "4d5d14a01e2c mm/mglru: rework workingset protection (v6.14)",
        &["lru_gen_folio_seq", "lru_gen_add_folio"], &[B::WorkingsetTopTier],
        "placement by lru_gen_folio_seq: max_seq - 3 (or - 2, workingset), faulted max_seq - 1"),
    row(B::TypeSelectionAllTiers, "type-selection-all-tiers", V7_1, "37a260870f2c mm/mglru: rework type selection (v6.14)",
        &["get_type_to_scan", "get_tier_idx", "read_ctrl_pos", "isolate_folios"], &[B::ProtectedAtTier],
        "type choice compares all tiers with gains (s, 200 - s), tier gains 2:3, no older-min_seq-first rule"),
    row(B::IndependentMinSeq, "independent-min-seq", V7_1, "798c0330c2ca mm/mglru: rework aging feedback (v6.14)",
        &["try_to_inc_min_seq", "inc_max_seq", "evictable_min_seq", "lruvec_is_reclaimable", "lru_gen_seq_show"], &[],
        "anon and file min_seq move independently (6.x: anon <= file)"),
    row(B::AgingByGenCount, "aging-by-gen-count", V7_1, "798c0330c2ca mm/mglru: rework aging feedback (v6.14)",
        &["should_run_aging"], &[B::IndependentMinSeq],
        "aging is triggered only by the number of generations (no young/old heuristic)"),
    row(B::RefaultRecentWindow, "refault-recent-window", V7_1, "b1a71694fb00 mm/mglru: rework refault detection (v6.14)",
        &["lru_gen_refault", "lru_gen_test_recent"], &[B::WorkingsetTopTier],
        "a refault is recent within MAX_NR_GENS of max_seq (6.x: token seq == min_seq)"),
    row(B::SwappinessAnonOnly, "swappiness-anon-only", V7_1, "mm: add swappiness=max arg to memory.reclaim for only anon reclaim, Zhongkun He, 2025 (likely v6.16); commit id not found",
        &["get_swappiness", "memory_reclaim", "lru_gen_seq_write", "get_scan_count"], &[],
        "SWAPPINESS_ANON_ONLY (201, \"max\" in memory.reclaim and lru_gen) reclaims anon only"),
    row(B::EvictNrToScanBound, "evict-nr-to-scan-bound", V7_1, "mm: vmscan: apply proportional reclaim pressure for memcg when MGLRU is enabled, Koichiro Den, 2025 (likely v6.16/v6.17); commit id not found",
        &["evict_folios", "scan_folios", "run_eviction"], &[],
        "evict_folios takes an nr_to_scan bound (6.x: always up to MAX_LRU_BATCH)"),
    row(B::ProportionalProtection, "proportional-protection", V7_1, "mm: vmscan: apply proportional reclaim pressure for memcg when MGLRU is enabled, Koichiro Den, 2025 (likely v6.16/v6.17); commit id not found",
        &["get_nr_to_scan", "apply_proportional_protection"], &[],
        "memory.low/min scale nr_to_scan proportionally"),
    row(B::RejectedFolioPlacement, "rejected-folio-placement", V7_1, "4d5d14a01e2c mm/mglru: rework workingset protection (v6.14; the evict_folios hunk not read line by line)",
        &["evict_folios"], &[],
        "evict_folios puts rejected folios back through lru_gen_folio_seq (6.x: keep, max_seq or retry by flags)"),
    row(B::WalkSmallMms, "walk-small-mms", V7_1,
        "7.x iterate_mm_list; commit not identified",
        &["iterate_mm_list"], &[],
        "the mm walk no longer skips mms whose RSS is small"),
    row(B::GetPfnFolioListedOnly, "get-pfn-folio-listed-only", V7_1,
        "7.x get_pfn_folio; its anon-only-if-can-swap test went with 798c0330c2ca mm/mglru: rework aging feedback (v6.14), the listed-only rule: commit not identified",
        &["get_pfn_folio", "lru_gen_look_around"], &[],
        "page-table walks take only folios on a generation list of this lruvec (6.x: also isolated ones, anon only if it can swap)"),
    row(B::DebugfsMemcgId, "debugfs-memcg-id", V7_1,
        "20ccbd89afe4 mm/vmscan: use cgroup ID instead of private memcg ID in lru_gen interface (release unknown, dated 2025-12-25; release not verified)",
        &["lru_gen_seq_show", "lru_gen_seq_write"], &[],
        "lru_gen prints and parses memcg ids as 64-bit (6.x: %5hu, %u) and parses the swappiness as a word"),
    row(B::DebugfsCmdTargetsMemcg, "debugfs-cmd-targets-memcg", V7_1,
        "7.x run_cmd; commit not identified",
        &["run_cmd", "run_aging", "run_eviction"], &[B::IndependentMinSeq],
        "lru_gen commands set target_mem_cgroup and age/evict through the 7.x paths"),
    row(B::ConsolidateEvictableSize, "consolidate-evictable-size", V7_2, "0491e9f75c15, 2026 series 01/15",
        &["lruvec_evictable_size"], &[],
        "01 one helper for the evictable size (no behaviour change)"),
    row(B::RenameAgingRotationVars, "rename-aging-rotation-vars", V7_2, "790d3abeca09, 2026 series 02/15",
        &["try_to_shrink_lruvec"], &[],
        "02 rename aging/rotation variables (no behaviour change)"),
    row(B::RelocateScanBatchLimit, "relocate-scan-batch-limit", V7_2, "aa6ef5b159dc, 2026 series 03/15",
        &["scan_folios", "evict_folios"], &[],
        "03 callers clamp the scan batch (no behaviour change)"),
    row(B::RestructureReclaimLoop, "restructure-reclaim-loop", V7_2, "163bc3d68c9f, 2026 series 04/15",
        &["try_to_shrink_lruvec", "get_nr_to_scan"], &[B::LruGenShrinkNode],
        "04 budget computed once; aging is a predicate inside the loop, even at DEF_PRIORITY when forced"),
    row(B::ExactScanCount, "exact-scan-count", V7_2, "3a72e078b4a3, 2026 series 05/15",
        &["scan_folios", "evict_folios", "isolate_folios"], &[],
        "05 scan_folios/evict_folios return the exact pages visited; min_seq flushed before and after isolation"),
    row(B::AvoidTypeFallback, "avoid-type-fallback", V7_2, "16b475d2ac3c, 2026 series 06/15",
        &["isolate_folios"], &[],
        "06 switch type only when the scan visited nothing (Barry Song)"),
    row(B::SmallerReclaimBatch, "smaller-reclaim-batch", V7_2, "6e9be217a3ce, 2026 series 07/15",
        &["try_to_shrink_lruvec"], &[B::LruGenShrinkNode],
        "07 evict at most 64 entries per loop iteration instead of 4096"),
    row(B::DontAbortAfterAging, "dont-abort-after-aging", V7_2, "12316f7902f8, 2026 series 08/15",
        &["try_to_shrink_lruvec", "should_abort_scan"], &[B::RestructureReclaimLoop],
        "08 keep evicting after aging; root reclaim leaves after one post-aging batch"),
    row(B::RemoveSwapConstrainedCheck, "remove-swap-constrained-check", V7_2, "acd22fbb9f47, 2026 series 09/15",
        &["isolate_folio", "sort_folio"], &[],
        "09 isolate dirty/anon folios under !__GFP_IO too; shrink_folio_list decides"),
    row(B::CommonDirtyWritebackReactivation, "common-dirty-writeback-reactivation", V7_2, "75d4c3f5fb98, 2026 series 10/15; also in Debian's 6.12.117 (its sort_folio has no dirty/writeback branch; backport not identified), not in 7.1",
        &["sort_folio", "isolate_folio", "shrink_folio_list"], &[],
        "10 dirty/writeback folios are isolated and reactivated by shrink_folio_list, not bumped in sort_folio (6.12 too)"),
    row(B::SimplifyDirtyWriteback, "simplify-dirty-writeback", V7_2, "f37d3708b676, 2026 series 11/15",
        &["evict_folios", "wakeup_flusher_threads"], &[],
        "11 wake the flusher per batch when every isolated page was unqueued dirty"),
    row(B::DropReclaimingArg, "drop-reclaiming-arg", V7_2, "32d87083ee97, 2026 series 12/15",
        &["folio_inc_gen"], &[B::CommonDirtyWritebackReactivation],
        "12 folio_inc_gen loses its reclaiming flag (no behaviour change after 10)"),
    row(B::RemoveFileTaken, "remove-file-taken", V7_2, "e621a24e10bb, 2026 series 13/15",
        &["sort_folio", "scan_folios"], &[B::SimplifyDirtyWriteback],
        "13 remove sc->nr.file_taken (no behaviour change for MGLRU after 11)"),
    row(B::RemoveUnqueuedDirty, "remove-unqueued-dirty", V7_2, "183ff2f9ec48, 2026 series 14/15",
        &["evict_folios"], &[B::SimplifyDirtyWriteback],
        "14 remove sc->nr.unqueued_dirty (no behaviour change for MGLRU after 11)"),
    row(B::UnifyWritebackThrottling, "unify-writeback-throttling", V7_2, "39376b9cac1c, 2026 series 15/15",
        &["evict_folios", "handle_reclaim_writeback", "shrink_node"], &[B::SimplifyDirtyWriteback],
        "15 MGLRU feeds sc->nr; cgroup reclaim gets congestion throttling"),
    row(B::FgPromotion, "fg-promotion", First::Experimental,
        "MGLRU-FG RFC, patch 06/32 (spec series-2026.md §B); in no kernel",
        &["lru_gen_inc_refs"], &[B::WorkingsetTopTier],
        "EXPERIMENTAL MGLRU-FG: a file folio whose fd access count overflows is promoted one generation"),
    row(B::ReferencedPlacement, "referenced-placement", V7_2_13, "6cbdd9726fb5 mm/mglru: use folio_mark_accessed to replace folio_set_active (v7.2)",
        &["lru_gen_folio_seq"], &[B::LruGenFolioSeq],
        "7.2.13: lru_gen_folio_seq places PG_referenced folios like workingset ones (max_seq - 2)"),
    row(B::FaultMarksAccessed, "fault-marks-accessed", V7_2_13, "6cbdd9726fb5 mm/mglru: use folio_mark_accessed to replace folio_set_active (v7.2)",
        &["folio_add_lru"], &[B::WorkingsetTopTier],
        "7.2.13: folio_add_lru in a fault activates only workingset folios and marks the others accessed"),
    row(B::SecondAccessPromotion, "second-access-promotion", V7_2_13, "6cbdd9726fb5 mm/mglru: use folio_mark_accessed to replace folio_set_active (v7.2; the lru_gen_set_refs hunk known from a description of the diff)",
        &["lru_gen_set_refs"], &[B::SetRefsOnPteYoung],
        "7.2.13: lru_gen_set_refs promotes to workingset only after two fd/PTE references, else counts one more"),
    row(B::RefaultActivateWorkingsetOnly, "refault-activate-workingset-only", V7_2_13, "6cbdd9726fb5 mm/mglru: use folio_mark_accessed to replace folio_set_active (v7.2)",
        &["lru_gen_refault"], &[B::WorkingsetTopTier],
        "7.2.13: lru_gen_refault counts workingset_activate only for workingset folios"),
    row(B::MemcgReclaimAbortsAtGoal, "memcg-reclaim-aborts-at-goal", V7_2_13, DEBIAN,
        &["should_abort_scan"], &[],
        "7.2.13: should_abort_scan also stops memcg reclaim once it reclaimed its goal"),
];

impl Behaviour {
    /// Every behaviour, in table order.
    pub const ALL: [Behaviour; 70] = {
        let mut all = [Behaviour::FolioBatch31; 70];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].behaviour;
            i += 1;
        }
        all
    };
    /// The 15 patches of the 2026 series, in merge order.
    pub const SERIES: [Behaviour; 15] = [
        B::ConsolidateEvictableSize,
        B::RenameAgingRotationVars,
        B::RelocateScanBatchLimit,
        B::RestructureReclaimLoop,
        B::ExactScanCount,
        B::AvoidTypeFallback,
        B::SmallerReclaimBatch,
        B::DontAbortAfterAging,
        B::RemoveSwapConstrainedCheck,
        B::CommonDirtyWritebackReactivation,
        B::SimplifyDirtyWriteback,
        B::DropReclaimingArg,
        B::RemoveFileTaken,
        B::RemoveUnqueuedDirty,
        B::UnifyWritebackThrottling,
    ];
    /// MGLRU changes merged beside the series, as Debian's linux-source 7.2.13 has them.
    pub const DEBIAN_7_2_13: [Behaviour; 5] = [
        B::ReferencedPlacement,
        B::FaultMarksAccessed,
        B::SecondAccessPromotion,
        B::RefaultActivateWorkingsetOnly,
        B::MemcgReclaimAbortsAtGoal,
    ];
    /// Rows of a later kernel that Debian's linux 6.12.117, the 6.12 that validation boots,
    /// already has and mainline 7.1 does not: its `sort_folio` has no "waiting for writeback"
    /// branch (mm/vmscan.c 4312-4355), so dirty and writeback folios take series patch 10's
    /// path. [`Behaviours::of`] gives them to 6.12 only.
    pub const DEBIAN_6_12_117: [Behaviour; 1] = [B::CommonDirtyWritebackReactivation];
    /// The behaviours the classical LRU's machine reads (outside MGLRU's code): the only ones a
    /// `classic` policy may add or remove.
    pub const OUTSIDE_MGLRU: [Behaviour; 21] = [
        B::FolioBatch31,
        B::CostCountsRotations,
        B::Eevdf,
        B::PartialMemcgWalk,
        B::CacheTrimModeFailed,
        B::KswapdCountsReclaimed,
        B::RefaultSwapCheckEvictionMemcg,
        B::Ext4WritepageRemoved,
        B::VmaHasRecency,
        B::SyncSwapIoInPgpg,
        B::ReadaheadRework,
        B::MemoryReclaimSwappiness,
        B::MemoryReclaimQuarterBatch,
        B::RefaultOfDeadMemcgCounts,
        B::CgroupCongestedSplit,
        B::MemcgStatsFlushRatelimited,
        B::IoUringNowaitByFmode,
        B::FaultAroundCreditsFaultingFolioOnly,
        B::MultiMemcgStock,
        B::NoteCostSkipsZero,
        B::SwappinessAnonOnly,
    ];
    /// Every behaviour in the order bisect applies them: by first kernel (6.12, 7.1, 7.2,
    /// 7.2.13), then the experimental ones, and within a kernel in table (series) order, so
    /// that a behaviour comes after those it requires.
    pub const BISECT_ORDER: [Behaviour; TABLE.len()] = {
        let mut out = [B::FgPromotion; TABLE.len()];
        let mut n = 0;
        let firsts = [V6_12, V7_1, V7_2, V7_2_13, First::Experimental];
        let mut k = 0;
        while k < firsts.len() {
            let mut i = 0;
            while i < TABLE.len() {
                if first_eq(TABLE[i].first, firsts[k]) {
                    out[n] = TABLE[i].behaviour;
                    n += 1;
                }
                i += 1;
            }
            k += 1;
        }
        assert!(n == TABLE.len());
        out
    };

    pub const fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }
    pub const fn name(self) -> &'static str {
        self.row().name
    }
    /// One line for `reclaimlab policies` and `reclaimlab behaviours`.
    pub const fn description(self) -> &'static str {
        self.row().description
    }
    pub const fn first(self) -> First {
        self.row().first
    }
    /// The upstream commit id, where the row names one (its `upstream` field starts with
    /// at least 12 hex digits).
    pub fn commit(self) -> Option<&'static str> {
        let up = self.row().upstream;
        let n = up
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(up.len());
        (n >= 12).then(|| &up[..n])
    }
    pub const fn requires(self) -> &'static [Behaviour] {
        self.row().requires
    }
    /// The kernels that have it although they come before its first kernel (and so a kernel
    /// between them may lack it): 6.12 for [`Behaviour::DEBIAN_6_12_117`].
    pub fn also_in(self) -> &'static [Kernel] {
        if Behaviour::DEBIAN_6_12_117.contains(&self) {
            &[Kernel::V6_12]
        } else {
            &[]
        }
    }
    /// Whether the classical LRU's machine reads it ([`Behaviour::OUTSIDE_MGLRU`]).
    pub fn outside_mglru(self) -> bool {
        Behaviour::OUTSIDE_MGLRU.contains(&self)
    }
    const fn bit(self) -> u128 {
        1 << self as u32
    }
}

/// Where the behaviour name at the start of `body` ends: after the longest known name that
/// is followed by the end, '+' or '-' (names themselves contain '-'); else at the first '+'
/// (the unknown name then gets its error).
fn modifier_end(body: &str) -> usize {
    let ends_there = |n: usize| matches!(body.as_bytes().get(n), None | Some(b'+' | b'-'));
    Behaviour::ALL
        .iter()
        .map(|b| b.name())
        .filter(|name| body.starts_with(name) && ends_there(name.len()))
        .map(str::len)
        .max()
        .unwrap_or_else(|| body.find('+').unwrap_or(body.len()))
}

const fn first_eq(a: First, b: First) -> bool {
    match (a, b) {
        (First::Kernel(x), First::Kernel(y)) => x as u8 == y as u8,
        (First::Experimental, First::Experimental) => true,
        _ => false,
    }
}

impl fmt::Display for Behaviour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Behaviour {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Behaviour::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown behaviour '{s}' (see `reclaimlab behaviours`)"))
    }
}

/// A set of behaviours: what a modelled kernel does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Behaviours(u128);

impl Behaviours {
    pub const NONE: Behaviours = Behaviours(0);

    /// Every behaviour whose first kernel is at most `k` (experimental ones stay opt-in), and
    /// for 6.12 those of Debian's 6.12.117 ([`Behaviour::DEBIAN_6_12_117`]), which 7.1 lacks.
    pub const fn of(k: Kernel) -> Behaviours {
        let mut bits = 0;
        let mut i = 0;
        while i < TABLE.len() {
            if let First::Kernel(f) = TABLE[i].first {
                if f as u8 <= k as u8 {
                    bits |= TABLE[i].behaviour.bit();
                }
            }
            i += 1;
        }
        if k as u8 == Kernel::V6_12 as u8 {
            let mut i = 0;
            while i < Behaviour::DEBIAN_6_12_117.len() {
                bits |= Behaviour::DEBIAN_6_12_117[i].bit();
                i += 1;
            }
        }
        Behaviours(bits)
    }
    pub fn with(self, b: Behaviour) -> Behaviours {
        Behaviours(self.0 | b.bit())
    }
    pub fn without(self, b: Behaviour) -> Behaviours {
        Behaviours(self.0 & !b.bit())
    }
    /// Those of `self` that `other` has too.
    pub fn and(self, other: Behaviours) -> Behaviours {
        Behaviours(self.0 & other.0)
    }
    #[inline]
    pub fn has(self, b: Behaviour) -> bool {
        self.0 & b.bit() != 0
    }
    /// Same as [`Behaviours::has`] (the name policy code used for switches).
    #[inline]
    pub fn on(self, b: Behaviour) -> bool {
        self.has(b)
    }
    pub fn iter(self) -> impl Iterator<Item = Behaviour> {
        Behaviour::ALL.into_iter().filter(move |&b| self.has(b))
    }
    /// `self` changed by policy-string modifiers: `+name` turns a behaviour on, `-name` off,
    /// e.g. "+avoid-type-fallback-folio-batch-31". Names contain '-': a modifier ends at '+' or
    /// at a '-' that starts a known name.
    pub fn apply_modifiers(self, mut mods: &str) -> Result<Behaviours, String> {
        let mut out = self;
        while !mods.is_empty() {
            let add = match mods.as_bytes()[0] {
                b'+' => true,
                b'-' => false,
                _ => return Err(format!("'{mods}': a behaviour modifier starts with + or -")),
            };
            let body = &mods[1..];
            let end = modifier_end(body);
            let b: Behaviour = body[..end].parse()?;
            out = if add { out.with(b) } else { out.without(b) };
            mods = &body[end..];
        }
        Ok(out)
    }
    /// The modifiers that turn `base` into `self`, in table order ("+a-b"), as
    /// [`Behaviours::apply_modifiers`] reads them.
    pub fn modifiers_from(self, base: Behaviours) -> String {
        let mut s = String::new();
        for b in Behaviour::ALL {
            if self.has(b) != base.has(b) {
                s.push(if self.has(b) { '+' } else { '-' });
                s.push_str(b.name());
            }
        }
        s
    }
    /// `self` without every behaviour whose requirements it lacks, directly or through others
    /// (what turning a behaviour off takes with it).
    pub fn without_unmet_requirements(self) -> Behaviours {
        let mut out = self;
        while let Some(w) = out
            .iter()
            .find(|w| w.requires().iter().any(|r| !out.has(*r)))
        {
            out = out.without(w);
        }
        out
    }
    /// Every behaviour that is on has the behaviours it requires on ([`Behaviour::requires`]).
    pub fn check_requirements(self) -> Result<(), String> {
        for w in self.iter() {
            if let Some(r) = w.requires().iter().find(|r| !self.has(**r)) {
                return Err(format!(
                    "switch '{w}' requires '{r}' (the kernel has it only on top of that one): turn '{r}' on too"
                ));
            }
        }
        Ok(())
    }
}

/// A modelled kernel: the version it is named by and the behaviours it has (by default those
/// of the version; `--with`/`--without` change them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelModel {
    pub version: Kernel,
    pub behaviours: Behaviours,
}

impl KernelModel {
    #[inline]
    pub fn has(self, b: Behaviour) -> bool {
        self.behaviours.has(b)
    }
}

impl KernelModel {
    /// A kernel with its own behaviours.
    pub const fn of(version: Kernel) -> KernelModel {
        KernelModel {
            version,
            behaviours: Behaviours::of(version),
        }
    }
}

impl From<Kernel> for KernelModel {
    fn from(version: Kernel) -> Self {
        KernelModel::of(version)
    }
}

impl fmt::Display for KernelModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.version.fmt(f)
    }
}

impl crate::sim::PolicySpec {
    /// The behaviours of a kernel policy's machine: an MGLRU policy's own (with its
    /// `--with`/`--without`), a classical policy's kernel's. Without MGLRU (`enabled` lacks
    /// LRU_GEN_CORE) the machine reclaims as 6.12's classical LRU does: 6.12's at most.
    pub fn machine_behaviours(&self) -> Option<Behaviours> {
        match self {
            crate::sim::PolicySpec::Classic(k, _) => Some(k.behaviours),
            crate::sim::PolicySpec::Mglru(c) => Some(c.switches),
            crate::sim::PolicySpec::Textbook(_) => None,
        }
    }
}

#[cfg(test)]
mod tests;
