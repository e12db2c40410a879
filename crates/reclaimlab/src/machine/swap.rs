//! Swap: slots, the swap cache, zram (synchronous, compressed, its memory counted) and swap on a
//! block device (asynchronous) (mm/swapfile.c, mm/swap_state.c, mm/page_io.c).

use super::blockdev::BlockDev;
use super::config::SwapConfig;
use super::{pg, Machine, Owner, Pfn, Vm};
use crate::behaviour::Behaviour;
use crate::policy::Policy;

/// One swap slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapSlot {
    Free,
    /// The folio is in the swap cache (the device copy is valid only if the folio is clean).
    Cached(Pfn),
    /// Only on the device; the shadow entry left by reclaim, if any.
    Stored(Option<u64>),
}

#[derive(Clone, Debug)]
pub enum SwapBacking {
    None,
    Zram { ratio: f64 },
    Device(Box<BlockDev>),
}

#[derive(Clone, Debug)]
pub struct Swap {
    pub backing: SwapBacking,
    /// Every slot handed out so far (slots beyond are free and were never used).
    pub slots: Vec<SwapSlot>,
    /// `total_swap_pages`.
    size: u64,
    /// The memcg charged for each slot (`mem_cgroup_swapout` / swap accounting).
    pub slot_memcg: Vec<u16>,
    /// The device (or zram) holds a copy of the slot's data.
    pub on_dev: Vec<bool>,
    free_slots: super::freelist::FreeList,
    /// Pages stored in zram and the page frames its pool occupies.
    pub zram_stored: u64,
    pub zram_frames: Vec<Pfn>,
}

/// What `swap_writepage` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapWrite {
    /// Written synchronously (zram): the folio is clean now.
    Sync,
    /// Submitted asynchronously: the folio is under writeback.
    Async,
    /// Could not be written (zram pool could not grow): AOP_WRITEPAGE_ACTIVATE.
    Activate,
}

impl Swap {
    pub fn new(cfg: &SwapConfig) -> Self {
        let (backing, size) = match cfg {
            SwapConfig::None => (SwapBacking::None, 0),
            SwapConfig::Zram {
                size_pages,
                compress_ratio,
            } => (
                SwapBacking::Zram {
                    ratio: *compress_ratio,
                },
                *size_pages,
            ),
            SwapConfig::Device { size_pages, device } => (
                SwapBacking::Device(Box::new(BlockDev::new(device.clone()))),
                *size_pages,
            ),
        };
        Swap {
            backing,
            slots: Vec::new(),
            size,
            slot_memcg: Vec::new(),
            on_dev: Vec::new(),
            // Low slots first, freed slots again last-in first-out (scan_swap_map's order
            // in the model); the per-slot arrays grow as slots are first handed out.
            free_slots: super::freelist::FreeList::new(0, size as u32),
            zram_stored: 0,
            zram_frames: Vec::new(),
        }
    }
    /// `total_swap_pages`.
    pub fn total(&self) -> u64 {
        self.size
    }
    /// `get_nr_swap_pages`.
    pub fn nr_free(&self) -> u64 {
        self.free_slots.len() as u64
    }
    /// `vm_swap_full`: less than half of swap is free.
    pub fn is_full(&self) -> bool {
        self.nr_free() * 2 < self.total()
    }
    /// SWP_SYNCHRONOUS_IO (zram, pmem).
    pub fn is_synchronous(&self) -> bool {
        matches!(self.backing, SwapBacking::Zram { .. })
    }
    fn zram_pool_pages_for(&self, stored: u64) -> u64 {
        match self.backing {
            SwapBacking::Zram { ratio } => (stored as f64 / ratio).ceil() as u64,
            _ => 0,
        }
    }
}

impl Machine {
    /// `add_to_swap`: allocate a slot, put the folio in the swap cache and mark it dirty.
    pub fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        let Some(slot) = self.swap.free_slots.pop() else {
            return false;
        };
        if slot as usize >= self.swap.slots.len() {
            let n = slot as usize + 1;
            self.swap.slots.resize(n, SwapSlot::Free);
            self.swap.slot_memcg.resize(n, 0);
            self.swap.on_dev.resize(n, false);
        }
        let memcg = self.folios[pfn as usize].memcg;
        self.swap.slots[slot as usize] = SwapSlot::Cached(pfn);
        self.swap.slot_memcg[slot as usize] = memcg;
        self.for_each_ancestor(memcg, |mc| mc.swap_usage += 1);
        let f = &mut self.folios[pfn as usize];
        f.swap = slot + 1;
        f.set(pg::SWAPCACHE);
        self.folio_mark_dirty(pfn);
        true
    }

    /// Returns a slot to the free pool (`swap_entry_free`), uncharging its memcg.
    pub fn swap_slot_release(&mut self, slot: u32) {
        if std::mem::take(&mut self.swap.on_dev[slot as usize]) {
            self.zram_release(1);
        }
        self.swap.slots[slot as usize] = SwapSlot::Free;
        let memcg = self.swap.slot_memcg[slot as usize];
        self.for_each_ancestor(memcg, |mc| mc.swap_usage -= 1);
        self.swap.free_slots.push(slot);
    }

    /// A swap PTE is zapped: free the slot, and the swap-cache folio if it only lived there
    /// (`free_swap_and_cache`).
    pub fn swap_entry_free(&mut self, pol: &mut dyn Policy, slot: u32) {
        if let SwapSlot::Cached(pfn) = self.swap.slots[slot as usize] {
            let f = &mut self.folios[pfn as usize];
            f.swap = 0;
            f.clear(pg::SWAPCACHE);
            if f.mapcount == 0 && !f.test(pg::ISOLATED) {
                if f.test(pg::WRITEBACK) {
                    f.set_owner(Owner::Anon {
                        pid: super::mm::ORPHAN_PID,
                        vma: 0,
                        index: 0,
                    });
                } else {
                    self.folio_leave_lru(pol, pfn);
                    self.free_folio(pfn);
                }
            }
        }
        self.swap_slot_release(slot);
    }

    /// Whether no swap PTE names the slot of anonymous swap-cache folio `pfn` any more: its
    /// process exited or unmapped the page while reclaim had it isolated (`__swap_count` 0,
    /// only SWAP_HAS_CACHE left). A tmpfs folio's slot is named by its file.
    pub fn anon_swap_entry_unused(&self, pfn: Pfn, slot: u32) -> bool {
        match self.folios[pfn as usize].owner() {
            Owner::Anon { pid, vma, index } => {
                let named = self.procs.get(pid as usize).is_some_and(|p| {
                    p.vmas
                        .get(vma as usize)
                        .and_then(|v| v.ptes.get(index as usize))
                        .is_some_and(|pte| pte.is_swap() && pte.swap_slot() == slot)
                });
                !named
            }
            _ => false,
        }
    }

    /// `folio_free_swap`: drop the swap slot of a swap-cache folio that stays in memory; the
    /// folio becomes dirty (its only copy is now in RAM).
    pub fn folio_free_swap(&mut self, pfn: Pfn) {
        let f = self.folios[pfn as usize];
        let Some(slot) = f.swap.checked_sub(1) else {
            return;
        };
        // folio_swapped: a tmpfs folio's entry is also held by its file's slot.
        if f.test(pg::WRITEBACK) || f.is_shmem() {
            return;
        }
        self.swap_slot_release(slot);
        let f = &mut self.folios[pfn as usize];
        f.swap = 0;
        f.clear(pg::SWAPCACHE);
        f.set(pg::DIRTY);
    }

    /// `swap_writepage`: zram compresses synchronously; a swap device writes asynchronously.
    pub fn swap_writepage(&mut self, pfn: Pfn) -> SwapWrite {
        let memcg = self.folios[pfn as usize].memcg;
        let slot = self.folios[pfn as usize].swap as usize - 1;
        let rewrite = self.swap.on_dev[slot];
        match &mut self.swap.backing {
            SwapBacking::None => SwapWrite::Activate,
            SwapBacking::Zram { .. } => {
                if !rewrite && !self.zram_grow(1) {
                    return SwapWrite::Activate;
                }
                self.swap.on_dev[slot] = true;
                self.spend_sys(self.cfg.cost.zram_compress_ns);
                self.folios[pfn as usize].clear(pg::DIRTY);
                self.count(memcg, Vm::Pswpout, 1);
                if self.kernel.has(Behaviour::SyncSwapIoInPgpg) {
                    self.count(memcg, Vm::Pgpgout, 4);
                }
                SwapWrite::Sync
            }
            SwapBacking::Device(dev) => {
                let now = self.ctx.now + self.ctx.elapsed;
                let done = dev.submit(now, 4096, true, self.lock_floor);
                self.swap.on_dev[slot] = true;
                let f = &mut self.folios[pfn as usize];
                f.clear(pg::DIRTY);
                f.set(pg::WRITEBACK);
                self.wb.nr_writeback += 1;
                self.memcg_wb_stat_add(memcg, super::writeback::WbStat::Writeback, 1);
                self.queue_kthread_work(done, super::kthreads::KthreadWork::WritebackEnd(pfn));
                self.count(memcg, Vm::Pswpout, 1);
                self.count(memcg, Vm::Pgpgout, 4);
                SwapWrite::Async
            }
        }
    }

    /// `swap_read_folio`: the read's time (zram decompression on the CPU, or a device wait).
    pub fn swap_read(&mut self) {
        let (now, floor) = (self.now(), self.lock_floor);
        match &mut self.swap.backing {
            SwapBacking::None => {}
            // zram_read_page: decompression on the faulting CPU.
            SwapBacking::Zram { .. } => self.spend_sys(self.cfg.cost.zram_decompress_ns),
            SwapBacking::Device(dev) => {
                let done = dev.submit(now, 4096, false, floor);
                self.spend_iowait(done - now);
            }
        }
    }

    /// Stores one more page in zram, growing its pool from free memory; false if no frame.
    fn zram_grow(&mut self, n: u64) -> bool {
        let need = self.swap.zram_pool_pages_for(self.swap.zram_stored + n);
        while (self.swap.zram_frames.len() as u64) < need {
            let Some(pfn) = self.take_free_page_any() else {
                return false;
            };
            self.folios[pfn as usize].set_owner(Owner::Zram);
            self.swap.zram_frames.push(pfn);
        }
        self.swap.zram_stored += n;
        self.vm.add(Vm::ZramStored, n);
        true
    }

    /// Removes pages from zram, shrinking its pool.
    pub fn zram_release(&mut self, n: u64) {
        if !matches!(self.swap.backing, SwapBacking::Zram { .. }) {
            return;
        }
        self.swap.zram_stored -= n;
        let need = self.swap.zram_pool_pages_for(self.swap.zram_stored);
        while self.swap.zram_frames.len() as u64 > need {
            let pfn = self.swap.zram_frames.pop().expect("pool frame");
            let node = self.folios[pfn as usize].node;
            self.folios[pfn as usize].set_owner(Owner::Free);
            self.nodes[node as usize].free.push(pfn);
        }
    }
}
