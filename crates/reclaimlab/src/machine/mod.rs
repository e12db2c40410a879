//! The modelled machine: physical memory per node, folios, page tables, page cache, swap,
//! block devices, memory cgroups and the reclaim core shared by every policy.
//!
//! A policy (classical LRU, later MGLRU) keeps its lists and per-lruvec state itself and talks
//! to the machine only through [`crate::policy::Policy`].

pub mod alloc;
pub mod blockdev;
pub mod check;
pub mod config;
pub mod counters;
pub mod fault;
pub mod folio_lock;
pub mod freelist;
pub mod kthreads;
pub mod lists;
pub mod lru_batch;
pub mod lru_lock;
pub mod memcg;
pub mod memcg_walk;
pub mod mm;
pub mod psi;
pub mod readahead;
pub mod rmap_lock;
pub mod rstat;
pub mod shmem;
pub mod swap;
pub mod vmscan;
pub mod writeback;

pub use config::*;
pub use counters::{Counters, Vm};
pub use lists::{Lists, Pfn, NIL};
pub use memcg_walk::{MemcgWalk, Visit};

use crate::consts::*;
use blockdev::BlockDev;
use memcg::Memcg;
use mm::Process;
use swap::Swap;

/// `PG_*` page flags (include/linux/page-flags.h) plus the model's own location bits.
pub mod pg {
    pub const LRU: u32 = 1 << 0;
    pub const ACTIVE: u32 = 1 << 1;
    pub const REFERENCED: u32 = 1 << 2;
    pub const WORKINGSET: u32 = 1 << 3;
    pub const SWAPBACKED: u32 = 1 << 4;
    pub const SWAPCACHE: u32 = 1 << 5;
    pub const DIRTY: u32 = 1 << 6;
    pub const WRITEBACK: u32 = 1 << 7;
    pub const RECLAIM: u32 = 1 << 8;
    pub const UNEVICTABLE: u32 = 1 << 9;
    pub const MLOCKED: u32 = 1 << 10;
    /// PG_readahead: reaching this folio starts the next asynchronous readahead. It is
    /// PG_reclaim's bit (include/linux/page-flags.h `PG_readahead = PG_reclaim`), so a dirty
    /// folio that reclaim marked PG_reclaim starts a readahead when it is read
    /// (`page_cache_async_ra` skips only folios under writeback; docs/model.md §2).
    pub const READAHEAD: u32 = RECLAIM;
    /// Not a kernel flag: the folio sits in a per-CPU lru_add batch (PG_lru still clear).
    pub const IN_BATCH: u32 = 1 << 16;
    /// Not a kernel flag: isolated by reclaim (off every list, NR_ISOLATED counts it).
    pub const ISOLATED: u32 = 1 << 17;
}

/// What a page frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Free,
    /// Page cache of `file` at `index`.
    File {
        file: u32,
        index: u64,
    },
    /// Anonymous page mapped at page `index` of vma `vma` of process `pid` (no fork: one mapping).
    Anon {
        pid: u32,
        vma: u16,
        index: u64,
    },
    /// A page of the zram pool (compressed swap), unreclaimable.
    Zram,
}

/// One 4 KiB folio (base pages only; classic-lru.md §10), packed into 24 bytes as the
/// kernel packs `struct page`: the owner's kind shares a half-word with the vma index, and
/// the MGLRU generation and reference count share a byte (the kernel keeps both in
/// `folio->flags`, LRU_GEN_MASK and LRU_REFS_MASK). All zeroes is a free frame of node 0
/// ([`Folio::FREE`]), so the folio table is allocated zeroed and frames never used are never
/// touched.
#[derive(Clone, Copy, Debug, bytemuck::Zeroable)]
pub struct Folio {
    pub flags: u32,
    /// The owner's file id or pid.
    owner_id: u32,
    /// The owner's page index (in the file or the vma).
    owner_index: u32,
    /// Swap slot + 1 when in the swap cache, else 0.
    pub swap: u32,
    pub memcg: u16,
    /// The owner's kind (top two bits) and anon vma index (the rest).
    owner_tag: u16,
    /// Number of PTEs mapping it (at most [`MAX_MAPPINGS`]).
    pub mapcount: u16,
    pub node: u8,
    /// MGLRU generation + 1 (low nibble, 0: not on an MGLRU list) and reference count (high
    /// nibble); unused by the classical LRU.
    gen_refs: u8,
}

/// Most mappings of one page (`Folio::mapcount`).
pub const MAX_MAPPINGS: u64 = u16::MAX as u64;
/// Most vmas of one process (`Owner::Anon::vma`).
pub const MAX_VMAS: usize = 1 << 14;
/// Most pages of one file or vma (`Owner::*::index`): 16 TiB.
pub const MAX_INDEX_PAGES: u64 = 1 << 32;

const TAG_FREE: u16 = 0;
const TAG_FILE: u16 = 1 << 14;
const TAG_ANON: u16 = 2 << 14;
const TAG_ZRAM: u16 = 3 << 14;
const TAG_KIND: u16 = 3 << 14;

impl Folio {
    const FREE: Folio = Folio {
        flags: 0,
        owner_id: 0,
        owner_index: 0,
        swap: 0,
        memcg: 0,
        owner_tag: TAG_FREE,
        mapcount: 0,
        node: 0,
        gen_refs: 0,
    };

    /// A folio of `owner` charged to `memcg` on `node`, not yet on any list.
    pub fn new(owner: Owner, memcg: u16, node: u8, flags: u32) -> Folio {
        let mut f = Folio {
            flags,
            memcg,
            node,
            ..Folio::FREE
        };
        f.set_owner(owner);
        f
    }

    /// A free frame of `node`.
    pub fn free_on(node: u8) -> Folio {
        Folio {
            node,
            ..Folio::FREE
        }
    }

    /// Who holds the folio.
    #[inline]
    pub fn owner(&self) -> Owner {
        match self.owner_tag & TAG_KIND {
            TAG_FILE => Owner::File {
                file: self.owner_id,
                index: self.owner_index.into(),
            },
            TAG_ANON => Owner::Anon {
                pid: self.owner_id,
                vma: self.owner_tag & !TAG_KIND,
                index: self.owner_index.into(),
            },
            TAG_ZRAM => Owner::Zram,
            _ => Owner::Free,
        }
    }

    /// Hands the folio to `owner` (indexes below [`MAX_INDEX_PAGES`], vmas below
    /// [`MAX_VMAS`]: the machine refuses larger files and areas when it builds them).
    #[inline]
    pub fn set_owner(&mut self, owner: Owner) {
        let (tag, id, index) = match owner {
            Owner::Free => (TAG_FREE, 0, 0),
            Owner::Zram => (TAG_ZRAM, 0, 0),
            Owner::File { file, index } => (TAG_FILE, file, index),
            Owner::Anon { pid, vma, index } => {
                debug_assert!((vma as usize) < MAX_VMAS);
                (TAG_ANON | (vma & !TAG_KIND), pid, index)
            }
        };
        debug_assert!(index < MAX_INDEX_PAGES);
        self.owner_tag = tag;
        self.owner_id = id;
        self.owner_index = index as u32;
    }

    /// MGLRU generation + 1, 0 when not on an MGLRU list.
    #[inline]
    pub fn gen(&self) -> u8 {
        self.gen_refs & 0x0f
    }

    #[inline]
    pub fn set_gen(&mut self, gen: u8) {
        debug_assert!(gen <= 0x0f);
        self.gen_refs = (self.gen_refs & 0xf0) | gen;
    }

    /// MGLRU reference count (fd accesses beyond the first).
    #[inline]
    pub fn refs(&self) -> u8 {
        self.gen_refs >> 4
    }

    #[inline]
    pub fn set_refs(&mut self, refs: u8) {
        debug_assert!(refs <= 0x0f);
        self.gen_refs = (self.gen_refs & 0x0f) | (refs << 4);
    }

    #[inline]
    pub fn test(&self, f: u32) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn set(&mut self, f: u32) {
        self.flags |= f;
    }
    #[inline]
    pub fn clear(&mut self, f: u32) {
        self.flags &= !f;
    }
    /// `test_and_clear_bit`.
    #[inline]
    pub fn test_clear(&mut self, f: u32) -> bool {
        let was = self.test(f);
        self.clear(f);
        was
    }
    /// `folio_is_file_lru`: !PG_swapbacked.
    #[inline]
    pub fn is_file_lru(&self) -> bool {
        !self.test(pg::SWAPBACKED)
    }
    #[inline]
    pub fn is_anon(&self) -> bool {
        self.owner_tag & TAG_KIND == TAG_ANON
    }
    /// A tmpfs folio (`shmem_mapping(folio->mapping)`): a file folio with PG_swapbacked.
    #[inline]
    pub fn is_shmem(&self) -> bool {
        self.owner_tag & TAG_KIND == TAG_FILE && self.test(pg::SWAPBACKED)
    }
    /// In its file's page cache: a file folio, not a tmpfs folio moved to the swap cache by
    /// `shmem_writepage` (its owner stays the file, its slot holds the swap entry).
    #[inline]
    pub fn in_page_cache(&self) -> bool {
        self.owner_tag & TAG_KIND == TAG_FILE && !self.test(pg::SWAPCACHE)
    }
}

/// Watermarks of a node's single zone (`__setup_per_zone_wmarks`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub promo: u64,
}

/// A NUMA node with one zone (ZONE_NORMAL).
#[derive(Clone, Debug)]
pub struct Node {
    pub id: u8,
    pub first_pfn: Pfn,
    pub nr_pages: u64,
    pub free: freelist::FreeList,
    pub wmark: Watermarks,
    pub kswapd_failures: u32,
    pub kswapd_awake: bool,
    /// PGDAT_DIRTY / PGDAT_WRITEBACK.
    pub pgdat_dirty: bool,
    pub pgdat_writeback: bool,
    pub nr_isolated: [u64; 2],
    /// When each task throttled on VMSCAN_THROTTLE_WRITEBACK wakes (`nr_writeback_throttled`
    /// is the number still asleep).
    pub writeback_throttled: Vec<u64>,
    /// Tasks asleep in `reclaim_throttle` as a suspension point (`vmscan::ThrottleSleep`), per
    /// reason (`VmscanThrottle::index`): `reclaim_wait[reason]` is active while above 0.
    pub throttle_sleepers: [u32; crate::consts::NR_VMSCAN_THROTTLE],
    /// The earliest wake-up of each queue (`wake_throttle_isolated`,
    /// `consider_reclaim_throttle`) since the engine last woke its sleepers.
    pub throttle_wake: [Option<u64>; crate::consts::NR_VMSCAN_THROTTLE],
}

impl Node {
    pub fn nr_free(&self) -> u64 {
        self.free.len() as u64
    }
}

/// A file with its page cache (`struct address_space`).
#[derive(Clone, Debug)]
pub struct File {
    pub id: u32,
    pub name: String,
    /// Slots: a page, a shadow entry, or empty (the xarray).
    pub slots: Vec<Slot>,
    pub nr_pages: u64,
    pub nr_shadows: u64,
    pub nr_dirty: u64,
    /// The indexes of dirty folios: the xarray's `PAGECACHE_TAG_DIRTY`, which writeback
    /// walks (`filemap_get_folios_tag`) instead of every slot. May hold stale indexes, which
    /// the walk drops.
    pub dirty_tag: std::collections::BTreeSet<u64>,
    /// `inode->dirtied_when` (ns), valid while nr_dirty > 0.
    pub dirtied_when: u64,
    /// Every (pid, vma) mapping this file: the `i_mmap` tree of rmap_walk_file.
    pub mmaps: Vec<(u32, u16)>,
    pub size_pages: u64,
    /// A tmpfs file (`shmem_mapping`): its folios are swap-backed, and reclaim moves them to
    /// swap, leaving the swap entry in their slot ([`Slot::Swap`]), instead of writing them
    /// back (mm/shmem.c).
    pub shmem: bool,
    /// `mapping->i_mmap_rwsem`'s write holds (`rmap_lock.rs`).
    pub i_mmap_lock: lru_lock::LockTimeline,
}

/// One xarray slot of a page cache or the swap cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Empty,
    Page(Pfn),
    Shadow(u64),
    /// A tmpfs page swapped out: the swap entry `shmem_writepage` stored in place of the folio
    /// (`swp_to_radix_entry`); the folio may still be in the swap cache.
    Swap(u32),
}

/// The context doing the current work: which task, CPU, and the simulated time it has spent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ctx {
    pub now: u64,
    /// Simulated time spent so far in the current operation (added to `now` at the end).
    pub elapsed: u64,
    pub cpu: u32,
    pub pid: u32,
    pub is_kswapd: bool,
    pub is_flusher: bool,
    /// Set when the current task was OOM-killed during the operation.
    pub killed: bool,
    /// Inside a page fault on a vma with recency (`current->in_lru_fault`, set by
    /// `lru_gen_enter_fault`): MGLRU places new folios as active.
    pub in_lru_fault: bool,
    /// Pages charged over memory.high during this operation (`memcg_nr_pages_over_high`).
    pub over_high: u64,
    pub over_high_memcg: u16,
    /// Time spent in direct reclaim and throttling in this operation.
    pub reclaim_ns: u64,
    /// The task may be preempted at the kernel's preemption points (`Machine::preempt_point`):
    /// set for tasks' accesses, not for kernel threads or control-file writes.
    pub may_yield: bool,
    /// The time of the next other event: a task past it yields at the next preemption point.
    pub yield_at: u64,
    /// The task yielded: the access unwinds and resumes later from `Machine::resume`.
    pub yielded: bool,
    /// This access resumes one that yielded (its fault and allocation were counted already).
    pub resumed: bool,
    /// Where `elapsed` went: CPU (user, sys) and the waits off the CPU.
    pub times: StepTimes,
    /// The task runs while another task, suspended in reclaim, has a batch isolated
    /// (`Machine::let_others_run`): it may not OOM-kill (the kill waits for the top level).
    pub nested: bool,
    /// A nested task reached the OOM killer and yielded: it retries at the top level.
    pub oom_deferred: bool,
    /// The task yielded to sleep in `reclaim_throttle` until woken or timed out.
    pub throttle_sleep: Option<vmscan::ThrottleSleep>,
}

/// Where the simulated time of one operation went (`Ctx::elapsed` is their sum): on the CPU in
/// user or kernel mode, or off it waiting for a device, a throttle or a sleep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepTimes {
    /// The application's own work (`utime`).
    pub user_ns: u64,
    /// Kernel work on the task's behalf: faults, allocation, reclaim, rmap and page-table
    /// walks, compression (`stime`).
    pub sys_ns: u64,
    /// Waiting for a block device (`io_schedule`: the task's share of iowait).
    pub iowait_ns: u64,
    /// Sleeping in `reclaim_throttle`, `balance_dirty_pages` or memory.high's penalty.
    pub throttled_ns: u64,
    /// Other sleeps: waiting for an OOM victim to exit, the workload's own sleeps.
    pub sleep_ns: u64,
}

impl StepTimes {
    /// Time on a CPU.
    pub fn cpu_ns(&self) -> u64 {
        self.user_ns + self.sys_ns
    }

    /// Time off the CPU.
    pub fn off_cpu_ns(&self) -> u64 {
        self.iowait_ns + self.throttled_ns + self.sleep_ns
    }

    pub fn add(&mut self, o: &StepTimes) {
        self.user_ns += o.user_ns;
        self.sys_ns += o.sys_ns;
        self.iowait_ns += o.iowait_ns;
        self.throttled_ns += o.throttled_ns;
        self.sleep_ns += o.sleep_ns;
    }
}

/// Where an access that yielded the CPU resumes: the kernel task's state across the reschedule
/// (its loop counters and the direct reclaim it was in the middle of).
#[derive(Clone, Debug, Default)]
pub struct Resume {
    /// `try_charge_memcg`'s retry loop.
    pub charge: Option<ChargeLoop>,
    /// `__alloc_pages_slowpath`'s `no_progress_loops`.
    pub slowpath: Option<u32>,
    /// A `do_try_to_free_pages` between two priorities.
    pub reclaim: Option<vmscan::ScanControl>,
    /// Pages charged above memory.high before the yield (`memcg_nr_pages_over_high`).
    pub over_high: (u64, u16),
    /// The access's fault was counted (and its CPU spent) before the yield.
    pub fault_counted: bool,
}

/// `try_charge_memcg`'s loop state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChargeLoop {
    pub memcg: u16,
    pub retries: u32,
    pub drained: bool,
    /// The pages the loop charges at a time: `max(MEMCG_CHARGE_BATCH, nr_pages)` until a
    /// charge of that many fails, `nr_pages` from then on.
    pub batch: u64,
}

/// The engine, lent to the machine while a task runs in the kernel, so that a reclaimer that
/// has dropped its lruvec lock with a batch isolated can let the other tasks run their events
/// up to its time (they run on other CPUs meanwhile).
pub trait Nest {
    /// Runs the other tasks' events due by `until` (the current context's clock); returns
    /// itself and the time the current task must now yield at (`Ctx::yield_at`).
    fn run_until(
        self: Box<Self>,
        m: &mut Machine,
        pol: &mut dyn crate::policy::Policy,
        until: u64,
    ) -> (Box<dyn Nest>, u64);
    /// The time of the next event that might run (u64::MAX if none).
    fn next_time(&self) -> u64;
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// The modelled machine.
pub struct Machine {
    pub cfg: MachineConfig,
    pub kernel: KernelModel,
    pub folios: Vec<Folio>,
    pub nodes: Vec<Node>,
    pub memcgs: Vec<Memcg>,
    pub procs: Vec<Process>,
    pub files: Vec<File>,
    pub swap: Swap,
    pub file_dev: BlockDev,
    pub vm: Counters,
    pub ctx: Ctx,
    /// kswapd, the flusher, I/O completions and policy timers (`kthreads.rs`).
    pub kthreads: kthreads::Kthreads,
    /// The state a yielded access resumes from (taken and restored by the event engine).
    pub resume: Resume,
    /// The current task's memory-stall and I/O-wait changes, and kswapd's runs (PSI).
    pub psi: psi::PsiLog,
    /// Some node's `throttle_wake` is set: the engine has sleepers to wake (one flag to test
    /// after every event instead of every queue).
    pub throttle_wake_pending: bool,
    /// Bumped by every memcg charge and uncharge (the engine integrates memory.current only
    /// after events that changed it).
    pub usage_epoch: u64,
    /// The engine while a task's access runs (`Nest`), if other tasks may run meanwhile.
    pub nest: Option<Box<dyn Nest>>,
    /// Per-CPU `lru_add` and `lru_activate` batches.
    pub lru_add_batch: Vec<Vec<Pfn>>,
    /// Per CPU, folios moved to the LRU under `lru_batch_cap` whose lruvec-lock hold is not
    /// taken yet: the lock is taken once per kernel batch's worth (`flush_lru_add`).
    pub lru_add_unlocked: Vec<u32>,
    pub lru_activate_batch: Vec<Vec<Pfn>>,
    pub wb: writeback::WritebackState,
    /// Processes killed by the OOM killer, in order.
    pub oom_victims: Vec<u32>,
    /// The young PTEs the last `folio_referenced` found (for MGLRU's look-around).
    pub young_ptes: Vec<mm::PteLoc>,
    /// LRUVEC_NODE_CONGESTED / LRUVEC_CGROUP_CONGESTED per (memcg, node) lruvec (a single
    /// LRUVEC_CONGESTED in v6.1, modelled as either bit).
    pub lruvec_congested: Vec<[bool; 2]>,
    /// The shared reclaim cookie of partial memcg walks (`mem_cgroup_reclaim_iter`): per
    /// (reclaim root, node), the pre-order index the next partial walk starts at.
    pub reclaim_iter: std::collections::BTreeMap<(u16, u8), usize>,
    /// Each (memcg, node) lruvec's `lru_lock` (`lru_lock.rs`), and the time spent spinning on
    /// them.
    pub lru_locks: Vec<lru_lock::LockTimeline>,
    pub lru_lock_wait_ns: u64,
    /// `lru_lock` holds that followed one by another CPU (`lru_lock_handoff_ns` each).
    pub lru_lock_handoffs: u64,
    /// The lock's waits and holds by kernel path (`lru_lock::LockSite`).
    pub lru_lock_sites: lru_lock::SiteTimes,
    /// The time of the top-level event being processed: no context asks for a lock before
    /// it, so lock holds ending by then are forgotten (`lru_lock.rs`).
    pub lock_floor: u64,
    /// Per CPU, then kswapd and the flusher: isolation and putback lock traffic not yet
    /// taken in a scaled-down scenario (`Machine::lru_lock_isolate`).
    pub scaled_lock: Vec<lru_lock::ScaledLockTraffic>,
    /// `folio_referenced` walks that found their rmap lock held for write and returned -1,
    /// and the time sleeping rmap walks waited for such a writer (`rmap_lock.rs`).
    pub rmap_trylock_failed: u64,
    pub rmap_lock_wait_ns: u64,
    /// When the last rmap write hold recorded ends: a walk at or after it finds every rmap
    /// lock free without looking (the common case).
    pub rmap_holds_end: u64,
    /// The folio locks buffered writes hold across their copy (`folio_lock.rs`), and the
    /// `folio_trylock`s of reclaim that failed on them.
    pub folio_locks: folio_lock::FolioLocks,
    pub folio_trylock_failed: u64,
    /// Per CPU, the memcg charge stock (`memcg_stock_pcp`, memcg.rs).
    pub memcg_stock: Vec<memcg::MemcgStock>,
    /// CPUs whose stock `drain_all_stock` queued a drain for (`schedule_work_on`: the
    /// FLUSHING_CACHED_CHARGE bit is set); it runs before the charging task's next reclaim or
    /// at the end of its charge (`run_stock_drain_work`).
    pub stock_drain_work: Vec<u32>,
}

impl Machine {
    pub fn new(cfg: MachineConfig) -> Result<Machine, String> {
        cfg.validate()?;
        let total = cfg.total_pages();
        if total >= u32::MAX as u64 {
            return Err("memory too large for the model (max 16 TiB)".into());
        }
        let kernel = cfg.kernel_model();
        let mut nodes = Vec::new();
        let mut first = 0u64;
        for (i, &pages) in cfg.node_pages.iter().enumerate() {
            nodes.push(Node {
                id: i as u8,
                first_pfn: first as Pfn,
                nr_pages: pages,
                // Low pfns are handed out first.
                free: freelist::FreeList::new(first as Pfn, pages as Pfn),
                wmark: Watermarks::default(),
                kswapd_failures: 0,
                kswapd_awake: false,
                pgdat_dirty: false,
                pgdat_writeback: false,
                nr_isolated: [0; 2],
                writeback_throttled: Vec::new(),
                throttle_sleepers: [0; crate::consts::NR_VMSCAN_THROTTLE],
                throttle_wake: [None; crate::consts::NR_VMSCAN_THROTTLE],
            });
            first += pages;
        }
        let ncpu = cfg.cpus as usize;
        let mut m = Machine {
            folios: bytemuck::zeroed_vec(total as usize),
            nodes,
            memcgs: Vec::new(),
            procs: Vec::new(),
            files: Vec::new(),
            swap: Swap::new(&cfg.swap),
            file_dev: BlockDev::new(cfg.file_device.clone()),
            vm: Counters::default(),
            ctx: Ctx::default(),
            kthreads: Default::default(),
            throttle_wake_pending: false,
            resume: Resume::default(),
            psi: Default::default(),
            usage_epoch: 0,
            nest: None,
            lru_add_batch: vec![Vec::with_capacity(32); ncpu],
            lru_add_unlocked: vec![0; ncpu],
            lru_activate_batch: vec![Vec::with_capacity(32); ncpu],
            wb: writeback::WritebackState::default(),
            oom_victims: Vec::new(),
            young_ptes: Vec::with_capacity(8),
            lruvec_congested: Vec::new(),
            reclaim_iter: Default::default(),
            lru_locks: Vec::new(),
            lru_lock_wait_ns: 0,
            lru_lock_handoffs: 0,
            lru_lock_sites: Default::default(),
            lock_floor: 0,
            scaled_lock: vec![Default::default(); ncpu + 2],
            rmap_trylock_failed: 0,
            rmap_lock_wait_ns: 0,
            rmap_holds_end: 0,
            folio_locks: Default::default(),
            folio_trylock_failed: 0,
            memcg_stock: vec![memcg::MemcgStock::default(); ncpu],
            stock_drain_work: Vec::new(),
            kernel,
            cfg,
        };
        m.setup_watermarks();
        m.memcgs
            .push(Memcg::new(0, None, "/".into(), &MemcgConfig::new("/")));
        let memcgs = m.cfg.memcgs.clone();
        for mc in &memcgs {
            if mc.path != "/" {
                m.create_memcg(mc)?;
            }
        }
        Ok(m)
    }

    /// `__setup_per_zone_wmarks` for one zone per node.
    fn setup_watermarks(&mut self) {
        for (n, w) in self.nodes.iter_mut().zip(self.cfg.watermarks()) {
            n.wmark = w;
        }
    }

    pub fn nr_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The congestion flags of a (memcg, node) lruvec: [NODE, CGROUP].
    pub fn congested(&mut self, memcg: u16, node: u8) -> &mut [bool; 2] {
        let i = lruvec_index(self.nodes.len(), memcg, node);
        if self.lruvec_congested.len() <= i {
            self.lruvec_congested.resize(i + 1, [false; 2]);
        }
        &mut self.lruvec_congested[i]
    }

    /// The node a pfn belongs to.
    pub fn pfn_node(&self, pfn: Pfn) -> u8 {
        self.folios[pfn as usize].node
    }

    /// Charges kernel CPU time (faults, allocation, reclaim, walks) to the current context.
    #[inline]
    pub fn spend_sys(&mut self, ns: u64) {
        self.ctx.elapsed += ns;
        self.ctx.times.sys_ns += ns;
    }

    /// Charges the application's own CPU time (user mode) to the current context.
    #[inline]
    pub fn spend_user(&mut self, ns: u64) {
        self.ctx.elapsed += ns;
        self.ctx.times.user_ns += ns;
    }

    /// The current context waits for a block device (`io_schedule`).
    #[inline]
    pub fn spend_iowait(&mut self, ns: u64) {
        self.spend_sleep_and_wake(ns);
        self.ctx.elapsed += ns;
        self.ctx.times.iowait_ns += ns;
    }

    /// The current context sleeps in a throttle (`reclaim_throttle`, `balance_dirty_pages`,
    /// `mem_cgroup_handle_over_high`).
    #[inline]
    pub fn spend_throttled(&mut self, ns: u64) {
        self.spend_sleep_and_wake(ns);
        self.ctx.elapsed += ns;
        self.ctx.times.throttled_ns += ns;
    }

    /// The current context sleeps for another reason (`schedule_timeout_killable` while an OOM
    /// victim exits, a reverse-map lock's `rwsem_down_read_slowpath`).
    #[inline]
    pub fn spend_sleep(&mut self, ns: u64) {
        self.spend_sleep_and_wake(ns);
        self.ctx.elapsed += ns;
        self.ctx.times.sleep_ns += ns;
    }

    /// What a sleep of `ns` in the kernel costs its task's CPU
    /// (`CostProfile::sleep_wake_for`), as system time.
    #[inline]
    fn spend_sleep_and_wake(&mut self, ns: u64) {
        let cost = self.cfg.cost.sleep_wake_for(ns);
        self.spend_sys(cost);
    }

    /// The kernel time an io_uring read adds by going through an io-wq worker: 6.1's
    /// `__io_file_supports_nowait` issues a regular file's read inline (IOCB_NOWAIT) only if
    /// its file system's block device has QUEUE_FLAG_NOWAIT, and `io_read` otherwise punts it
    /// to io-wq (`io_queue_iowq`); 6.12's `io_file_get_flags` asks the file's FMODE_NOWAIT
    /// alone, which ext4 and xfs set.
    pub fn io_uring_punt_ns(&self) -> u64 {
        let inline =
            self.kernel.has(Behaviour::IoUringNowaitByFmode) || self.cfg.file_device.queue_nowait;
        if inline {
            0
        } else {
            self.cfg.cost.io_wq_punt_ns
        }
    }

    /// A point where the kernel may reschedule the current task (between reclaim priorities,
    /// between charge and allocation retries): if another event is due before this task's
    /// time, the task yields and returns true (its caller saves its state in `resume` and
    /// unwinds); otherwise the kernel threads catch up to its time and it goes on.
    pub fn preempt_point(&mut self, pol: &mut dyn crate::policy::Policy) -> bool {
        if self.ctx.may_yield && self.now() > self.ctx.yield_at {
            self.ctx.yielded = true;
            return true;
        }
        self.catch_up(pol);
        false
    }

    /// `shrink_folio_list` with the batch isolated and the lruvec lock dropped: the kernel
    /// threads due by now run, and, when the engine is lent (a task's access on a machine with
    /// other CPUs), so do the other tasks' events due by now. They see the batch off the LRU,
    /// and may reference, dirty or write back its folios before this reclaimer examines them.
    pub fn let_others_run(&mut self, pol: &mut dyn crate::policy::Policy) {
        self.catch_up(pol);
        let until = self.now();
        let Some(nest) = self.nest.take_if(|n| n.next_time() <= until) else {
            return;
        };
        let ctx = self.ctx;
        let resume = std::mem::take(&mut self.resume);
        let (nest, yield_at) = nest.run_until(self, pol, until);
        self.ctx = ctx;
        self.ctx.yield_at = yield_at;
        self.resume = resume;
        self.nest = Some(nest);
    }

    /// The OOM killer (`mem_cgroup_oom`, `__alloc_pages_may_oom`) of a task that runs nested
    /// (`Ctx::nested`) waits for the top level, where no reclaimer below has a batch isolated:
    /// the task yields instead (`Ctx::oom_deferred`). True when it does; its caller saves the
    /// retry loop's state and unwinds.
    pub(super) fn defer_oom_to_top_level(&mut self) -> bool {
        if self.ctx.nested {
            self.ctx.yielded = true;
            self.ctx.oom_deferred = true;
        }
        self.ctx.nested
    }

    /// The current simulated time inside an operation.
    #[inline]
    pub fn now(&self) -> u64 {
        self.ctx.now + self.ctx.elapsed
    }

    /// The epoch of the memcg statistics' periodic flush (`flush_memcg_stats_dwork`) that
    /// rstat readers see now; None where they read exact values (6.1: `mem_cgroup_flush_stats`
    /// before reading). The flush's phase follows boot, not the run: the first falls
    /// `memcg_stats_first_flush_ns` into the run (default half a period, the mean), then one
    /// every period. See [`rstat`].
    #[inline]
    pub fn stats_epoch(&self) -> Option<u64> {
        self.kernel
            .has(Behaviour::MemcgStatsFlushRatelimited)
            .then(|| self.stats_flush_epoch_at(self.now()))
    }

    /// When the next periodic flush of the memcg statistics falls (the start of the epoch
    /// after the current one of [`Machine::stats_epoch`]).
    pub fn next_stats_flush(&self) -> u64 {
        let period = self.cfg.memcg_stats_flush_ns;
        (self.stats_flush_epoch_at(self.now()) + 1) * period - self.stats_flush_shift()
    }

    /// The flush epoch at time `t`: epoch k begins at the k-th flush,
    /// `first + (k - 1) * period`.
    #[inline]
    fn stats_flush_epoch_at(&self, t: u64) -> u64 {
        (t + self.stats_flush_shift()) / self.cfg.memcg_stats_flush_ns
    }

    /// `period - first`, where `first` is when the first flush falls (default half a period).
    #[inline]
    fn stats_flush_shift(&self) -> u64 {
        let period = self.cfg.memcg_stats_flush_ns;
        self.cfg
            .memcg_stats_first_flush_ns
            .map_or(period / 2, |first| period - first)
    }

    /// Free pages of all nodes.
    pub fn nr_free(&self) -> u64 {
        self.nodes.iter().map(|n| n.nr_free()).sum()
    }

    /// Looks a memcg up by path.
    pub fn memcg_by_path(&self, path: &str) -> Option<u16> {
        self.memcgs
            .iter()
            .position(|m| m.path == path && m.online)
            .map(|i| i as u16)
    }

    /// Creates a file of `size_pages` pages (its page cache starts empty).
    pub fn create_file(&mut self, name: &str, size_pages: u64) -> u32 {
        self.create_file_on(name, size_pages, false)
    }

    /// Creates a file of `size_pages` pages on tmpfs (`shmem`) or on the file device.
    pub fn create_file_on(&mut self, name: &str, size_pages: u64, shmem: bool) -> u32 {
        let id = self.files.len() as u32;
        self.files.push(File {
            id,
            name: name.to_string(),
            slots: vec![Slot::Empty; size_pages as usize],
            nr_pages: 0,
            nr_shadows: 0,
            nr_dirty: 0,
            dirty_tag: Default::default(),
            dirtied_when: 0,
            mmaps: Vec::new(),
            size_pages,
            shmem,
            i_mmap_lock: Default::default(),
        });
        id
    }

    /// Some file is on tmpfs (the shmem counters are reported only then).
    pub fn has_shmem(&self) -> bool {
        self.files.iter().any(|f| f.shmem)
    }

    /// Grows a file so that `index` is inside it (writes past EOF extend it).
    pub fn ensure_file_size(&mut self, file: u32, index: u64) {
        let f = &mut self.files[file as usize];
        if index >= f.size_pages {
            f.size_pages = index + 1;
            f.slots.resize(f.size_pages as usize, Slot::Empty);
        }
    }

    /// Counts a vmstat event globally and in the memcg (memory.stat is hierarchical on output).
    #[inline]
    pub fn count(&mut self, memcg: u16, v: Vm, n: u64) {
        self.vm.add(v, n);
        self.memcgs[memcg as usize].events.add(v, n);
    }

    /// Counts an event in the memcg only (cgroup reclaim's pgscan/pgsteal/pgrefill).
    #[inline]
    pub fn count_memcg(&mut self, memcg: u16, v: Vm, n: u64) {
        self.memcgs[memcg as usize].events.add(v, n);
    }

    /// Hierarchical memory.stat event counters of a memcg.
    pub fn memcg_events_hier(&self, memcg: u16) -> Counters {
        let mut c = Counters::default();
        for id in self.memcg_subtree(memcg) {
            c.add_all(&self.memcgs[id as usize].events);
        }
        c
    }

    /// The memcgs one `shrink_node_memcgs` pass visits: `root`'s subtree in pre-order and the
    /// index to start at. A partial walk (v6.12+ direct and cgroup reclaim) starts where the
    /// previous partial walk of (root, node) stopped (`mem_cgroup_iter` with a cookie).
    pub fn reclaim_iter_begin(&self, root: u16, node: u8, partial: bool) -> (Vec<u16>, usize) {
        let order = self.memcg_subtree(root);
        let start = if partial {
            self.reclaim_iter.get(&(root, node)).copied().unwrap_or(0)
        } else {
            0
        };
        let start = if start >= order.len() { 0 } else { start };
        (order, start)
    }

    /// Ends a partial walk: the next one starts at index `next` (0 after a full round).
    pub fn reclaim_iter_end(&mut self, root: u16, node: u8, next: usize) {
        self.reclaim_iter.insert((root, node), next);
    }

    /// The memcg and its descendants in pre-order (`mem_cgroup_iter`).
    pub fn memcg_subtree(&self, root: u16) -> Vec<u16> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if !self.memcgs[id as usize].online {
                continue;
            }
            out.push(id);
            for &c in self.memcgs[id as usize].children.iter().rev() {
                stack.push(c);
            }
        }
        out
    }

    /// Is `memcg` equal to `ancestor` or below it?
    pub fn memcg_is_descendant(&self, memcg: u16, ancestor: u16) -> bool {
        memcg::is_descendant(&self.memcgs, memcg, ancestor)
    }

    /// Resident anon and file pages and swap entries of a process (`get_mm_rss` + swapents).
    pub fn process_rss(&self, pid: u32) -> (u64, u64) {
        let p = &self.procs[pid as usize];
        (p.rss, p.swapents)
    }
}

/// The index of the (memcg, node) lruvec in per-lruvec arrays (`mem_cgroup_lruvec`), shared by
/// the machine and every policy.
#[inline]
pub fn lruvec_index(nr_nodes: usize, memcg: u16, node: u8) -> usize {
    memcg as usize * nr_nodes + node as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zeroed_folio_is_a_free_frame() {
        let zeroed: Folio = bytemuck::Zeroable::zeroed();
        assert_eq!(format!("{zeroed:?}"), format!("{:?}", Folio::FREE));
        assert_eq!(zeroed.owner(), Owner::Free);
        assert_eq!(std::mem::size_of::<Folio>(), 24);
    }

    #[test]
    fn owners_round_trip_through_the_packed_folio() {
        let owners = [
            Owner::Free,
            Owner::Zram,
            Owner::File {
                file: u32::MAX,
                index: MAX_INDEX_PAGES - 1,
            },
            Owner::Anon {
                pid: 7,
                vma: (MAX_VMAS - 1) as u16,
                index: 12345,
            },
        ];
        for owner in owners {
            let mut f = Folio::new(owner, 3, 1, pg::DIRTY);
            f.set_gen(4);
            f.set_refs(3);
            assert_eq!(f.owner(), owner);
            assert_eq!((f.gen(), f.refs(), f.memcg, f.node), (4, 3, 3, 1));
            f.set_gen(0);
            assert_eq!((f.gen(), f.refs()), (0, 3));
        }
    }
}
