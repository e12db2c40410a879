//! tmpfs files (mm/shmem.c): page-cache folios that are swap-backed. They sit on the anon LRU
//! (`folio_is_file_lru` is false), are counted in NR_FILE_PAGES and NR_SHMEM, are dirtied
//! without accounting (`noop_dirty_folio`: tmpfs cannot write back), and reclaim moves them to
//! swap (`shmem_writepage`), leaving the swap entry in the file's slot ([`Slot::Swap`]); an
//! access to that slot reads them back (`shmem_swapin_folio`).

use super::fault::AccessOutcome;
use super::swap::SwapSlot;
use super::writeback::WbStat;
use super::{pg, Machine, Owner, Pfn, Slot, Vm};
use crate::policy::Policy;

/// `enum sgp_type`: what `shmem_get_folio_gfp` does on a hole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sgp {
    /// SGP_READ (read()): a hole reads as zeros, nothing is allocated.
    Read,
    /// SGP_CACHE (`shmem_fault`): a hole gets a new zeroed, clean folio.
    Cache,
    /// SGP_WRITE (`shmem_write_begin`): a new folio is PG_referenced, a cached one accessed.
    Write,
}

/// What `shmem_get_folio_gfp` found or made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShmemFolio {
    pub pfn: Pfn,
    /// Was in the page cache (not a hole, not swapped out).
    pub cached: bool,
    /// Read back from the swap device (VM_FAULT_MAJOR).
    pub major: bool,
}

impl Machine {
    /// Whether `file` is on tmpfs (`shmem_mapping`).
    pub fn file_is_shmem(&self, file: u32) -> bool {
        self.files[file as usize].shmem
    }

    /// NR_FILE_PAGES, NR_SHMEM and the memcg's file and shmem pages, by `delta`, for a folio
    /// entering (+1) or leaving (-1) a page cache (`shmem_add_to_page_cache`,
    /// `shmem_delete_from_page_cache`, `filemap_add_folio`, `__filemap_remove_folio`).
    pub(super) fn account_page_cache(&mut self, pfn: Pfn, delta: i64) {
        let f = self.folios[pfn as usize];
        self.wb.nr_file_pages = self.wb.nr_file_pages.wrapping_add_signed(delta);
        self.memcg_wb_stat_add(f.memcg, WbStat::FilePages, delta);
        if f.is_shmem() {
            self.wb.nr_shmem = self.wb.nr_shmem.wrapping_add_signed(delta);
            self.memcg_wb_stat_add(f.memcg, WbStat::Shmem, delta);
        }
    }

    /// `shmem_file_read_iter`: one page of a read(); no readahead. A hole reads the zero page.
    pub(super) fn shmem_read(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
    ) -> Option<AccessOutcome> {
        let Some(got) = self.shmem_get_folio(pol, pid, file, index, Sgp::Read)? else {
            return Some(AccessOutcome::default());
        };
        // "Mark the page accessed if we read the beginning" (whole pages in the model).
        if !self.procs[pid as usize].read_same_page_as_last(file, index) {
            pol.folio_mark_accessed(self, got.pfn);
        }
        Some(AccessOutcome {
            hit: got.cached,
            major: got.major,
        })
    }

    /// `shmem_write_begin` + `shmem_write_end`: one page of a write(); the folio is dirtied
    /// without accounting and the writer is not throttled (no `balance_dirty_pages`).
    pub(super) fn shmem_write(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
    ) -> Option<AccessOutcome> {
        let got = self
            .shmem_get_folio(pol, pid, file, index, Sgp::Write)?
            .expect("SGP_WRITE allocates");
        // shmem_write_begin returns the folio locked; the copy; shmem_write_end unlocks it.
        self.folio_locked_for_copy(got.pfn);
        self.folio_mark_dirty(got.pfn);
        Some(AccessOutcome {
            hit: got.cached,
            major: false,
        })
    }

    /// `shmem_get_folio_gfp`: the folio at `index`, from the page cache, from swap, or newly
    /// allocated (not for SGP_READ: Some(None) is a hole). None if the task was killed or the
    /// allocation failed.
    pub(super) fn shmem_get_folio(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        sgp: Sgp,
    ) -> Option<Option<ShmemFolio>> {
        self.ensure_file_size(file, index);
        match self.files[file as usize].slots[index as usize] {
            Slot::Page(pfn) => {
                if sgp == Sgp::Write {
                    pol.folio_mark_accessed(self, pfn);
                }
                Some(Some(ShmemFolio {
                    pfn,
                    cached: true,
                    major: false,
                }))
            }
            Slot::Swap(slot) => self.shmem_swapin_folio(pol, pid, file, index, slot, sgp),
            Slot::Empty | Slot::Shadow(_) if sgp == Sgp::Read => Some(None),
            Slot::Empty | Slot::Shadow(_) => {
                let pfn = self.shmem_alloc_folio(pol, pid, file, index, sgp)?;
                Some(Some(ShmemFolio {
                    pfn,
                    cached: false,
                    major: false,
                }))
            }
        }
    }

    /// `shmem_alloc_and_acct_folio` + `shmem_add_to_page_cache` + `folio_add_lru`: a new
    /// swap-backed folio in the hole at `index`, charged to the task's memcg as page cache.
    fn shmem_alloc_folio(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        sgp: Sgp,
    ) -> Option<Pfn> {
        let pfn = self.new_folio(pol, pid, Owner::File { file, index })?;
        if !matches!(
            self.files[file as usize].slots[index as usize],
            Slot::Empty | Slot::Shadow(_)
        ) {
            // Another task filled the slot while this one reclaimed (shmem_add_to_page_cache
            // fails with -EEXIST and the lookup starts over).
            self.free_folio(pfn);
            return self
                .shmem_get_folio(pol, pid, file, index, sgp)?
                .map(|g| g.pfn);
        }
        if sgp == Sgp::Write {
            self.folios[pfn as usize].set(pg::REFERENCED);
        }
        self.shmem_add_to_page_cache(file, index, pfn);
        self.folio_add_lru(pol, pfn);
        Some(pfn)
    }

    /// `shmem_add_to_page_cache`: the folio takes the slot (a hole or its swap entry).
    fn shmem_add_to_page_cache(&mut self, file: u32, index: u64, pfn: Pfn) {
        let f = &mut self.files[file as usize];
        let old = std::mem::replace(&mut f.slots[index as usize], Slot::Page(pfn));
        if let Slot::Shadow(_) = old {
            f.nr_shadows -= 1;
        }
        f.nr_pages += 1;
        self.account_page_cache(pfn, 1);
    }

    /// `shmem_swapin_folio`: the slot holds a swap entry. A folio still in the swap cache is
    /// taken back (minor); otherwise a new folio is read from swap (`shmem_swapin`, major; a
    /// refault of an anon shadow, `workingset_refault` in `__read_swap_cache_async`). Either
    /// way it returns to the page cache, leaves the swap cache and frees the slot
    /// (`delete_from_swap_cache`, `swap_free`), dirty.
    fn shmem_swapin_folio(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        slot: u32,
        sgp: Sgp,
    ) -> Option<Option<ShmemFolio>> {
        let (pfn, major) = match self.swap.slots[slot as usize] {
            SwapSlot::Cached(pfn) => (pfn, false),
            SwapSlot::Stored(shadow) => {
                let pfn = self.new_folio(pol, pid, Owner::File { file, index })?;
                if self.files[file as usize].slots[index as usize] != Slot::Swap(slot) {
                    // Swapped in by another task meanwhile: start over.
                    self.free_folio(pfn);
                    return self.shmem_get_folio(pol, pid, file, index, sgp);
                }
                self.shmem_read_swap(pol, pfn, shadow);
                (pfn, true)
            }
            SwapSlot::Free => unreachable!("tmpfs slot holds a free swap entry"),
        };
        let f = &mut self.folios[pfn as usize];
        f.swap = 0;
        f.clear(pg::SWAPCACHE);
        self.shmem_add_to_page_cache(file, index, pfn);
        self.swap_slot_release(slot);
        if major {
            self.folio_add_lru(pol, pfn);
        }
        if sgp == Sgp::Write {
            pol.folio_mark_accessed(self, pfn);
        }
        self.folio_mark_dirty(pfn);
        Some(Some(ShmemFolio {
            pfn,
            cached: false,
            major,
        }))
    }

    /// The read of `shmem_swapin` into the new folio `pfn`: its time, pswpin/pgpgin, the
    /// refault of the slot's shadow and the PSI stall.
    fn shmem_read_swap(&mut self, pol: &mut dyn Policy, pfn: Pfn, shadow: Option<u64>) {
        let read_start = self.now();
        self.swap_read();
        let read_end = self.now();
        let memcg = self.folios[pfn as usize].memcg;
        self.count(memcg, Vm::Pswpin, 1);
        if !self.swap.is_synchronous()
            || self
                .kernel
                .has(crate::behaviour::Behaviour::SyncSwapIoInPgpg)
        {
            self.count(memcg, Vm::Pgpgin, 4);
        }
        if let Some(shadow) = shadow {
            pol.workingset_refault(self, pfn, shadow);
        }
        let workingset = self.folios[pfn as usize].test(pg::WORKINGSET);
        let iowait = !self.swap.is_synchronous();
        self.psi_wait(read_start, read_end, workingset, iowait);
    }

    /// `shmem_writepage` (reclaim only): move a dirty tmpfs folio from the page cache to the
    /// swap cache, storing the swap entry in its slot (`add_to_swap_cache`,
    /// `shmem_delete_from_page_cache`); the caller then writes it (`swap_writepage`). False
    /// without swap or a free slot: the folio stays dirty and is activated ("redirty").
    pub fn shmem_writepage(&mut self, pfn: Pfn) -> bool {
        if self.swap.total() == 0 {
            return false;
        }
        let Owner::File { file, index } = self.folios[pfn as usize].owner() else {
            unreachable!("shmem_writepage of a folio outside a file");
        };
        if !self.add_to_swap(pfn) {
            return false;
        }
        self.account_page_cache(pfn, -1);
        let slot = self.folios[pfn as usize].swap - 1;
        let f = &mut self.files[file as usize];
        f.slots[index as usize] = Slot::Swap(slot);
        f.nr_pages -= 1;
        true
    }
}
