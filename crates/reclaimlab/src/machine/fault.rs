//! The access path: loads and stores through page tables (the hardware sets accessed and dirty
//! bits; faults go through do_anonymous_page, do_swap_page, filemap_fault and do_wp_page), and
//! read()/write() through the page cache (filemap_read → folio_mark_accessed,
//! generic_perform_write → folio_mark_dirty → balance_dirty_pages).

use super::mm::{vm, Pte};
use super::swap::SwapSlot;
use super::{pg, Folio, Machine, Owner, Pfn, Slot, Vm};
use crate::access::{Op, PageRef, Via};
use crate::behaviour::Behaviour;
use crate::policy::Policy;

/// What one access cost the machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessOutcome {
    /// The page was resident (a minor fault on a resident page still counts as a hit); a first
    /// touch is a (cold) miss, as in libCacheSim.
    pub hit: bool,
    /// A major fault or a buffered read miss: the task waited for I/O.
    pub major: bool,
}

impl Machine {
    /// Performs one access of process `pid` (a read() of one page through a descriptor).
    /// Returns None if the task was killed (or the allocation failed) during it, or if it
    /// yielded (`ctx.yielded`: the engine runs it again later with `ctx.resumed`, and it goes
    /// on from `resume`); the access then did not happen (yet).
    pub fn access(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        page: PageRef,
        op: Op,
        via: Via,
    ) -> Option<AccessOutcome> {
        self.access_request(pol, pid, page, op, via, 1)
    }

    /// [`Machine::access`] of one page of a read() through a descriptor with `req` pages left
    /// in its request, this one included (`TraceRecord::req`; 1 for any other access).
    pub fn access_request(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        page: PageRef,
        op: Op,
        via: Via,
        req: u32,
    ) -> Option<AccessOutcome> {
        if !self.ctx.resumed {
            self.spend_user(self.cfg.cost.cpu_access_ns);
        }
        // The task runs: lru_gen_use_mm marks its mm for every node's next walk.
        self.procs[pid as usize].mm_used = !0;
        if self.ctx.resumed {
            let (pages, memcg) = std::mem::take(&mut self.resume.over_high);
            self.ctx.over_high += pages;
            if pages > 0 {
                self.ctx.over_high_memcg = memcg;
            }
        }
        let write = op == Op::Write;
        let out = match (page, via) {
            (PageRef::Anon { page }, _) => {
                self.enter_fault(pid, 0);
                self.access_anon(pol, pid, 0, page, write)
            }
            (PageRef::File { file, page }, Via::Fd) => {
                self.ctx.in_lru_fault = false;
                // ksys_pread64 / ksys_pwrite64: the system call around the page-cache work.
                if !self.ctx.resumed {
                    self.spend_sys(self.cfg.cost.fd_syscall_ns);
                }
                self.access_fd(pol, pid, file, page, write, req.into())
            }
            (PageRef::File { file, page }, Via::Mmap) => {
                let vma = self.file_vma_or_map(pid, file);
                self.enter_fault(pid, vma);
                self.access_mapped_file(pol, pid, vma, file, page, write)
            }
        };
        self.ctx.in_lru_fault = false;
        if self.ctx.yielded {
            self.resume.over_high = (self.ctx.over_high, self.ctx.over_high_memcg);
            return None;
        }
        if out.is_some() {
            self.handle_over_high(pol);
        }
        if self.ctx.killed {
            return None;
        }
        out
    }

    /// `lru_gen_enter_fault`: a fault on a vma with recency places new folios as active.
    fn enter_fault(&mut self, pid: u32, vma: u16) {
        self.ctx.in_lru_fault = self.procs[pid as usize].vmas[vma as usize].has_recency();
    }

    /// The node new pages of the current CPU come from (`numa_node_id`).
    pub(super) fn local_node(&self) -> u8 {
        (self.ctx.cpu as usize * self.nodes.len() / self.cfg.cpus as usize) as u8
    }

    /// The process's mapping of `file`, created (MAP_SHARED) on first use by a trace.
    fn file_vma_or_map(&mut self, pid: u32, file: u32) -> u16 {
        match self.procs[pid as usize].file_vma(file) {
            Some(v) => v,
            None => self.mmap_file(pid, file, vm::SHARED),
        }
    }

    /// Allocates and charges a folio for `owner` in the memcg of `pid`
    /// (`folio_alloc` + `mem_cgroup_charge`). None if the task was killed or the charge failed.
    pub(super) fn new_folio(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        owner: Owner,
    ) -> Option<Pfn> {
        let memcg = self.procs[pid as usize].memcg;
        let node = self.local_node();
        let pfn = self.alloc_page(pol, node)?;
        // PG_swapbacked: anon folios, and tmpfs folios (`shmem_alloc_folio` →
        // `__folio_set_swapbacked`).
        let swapbacked = match owner {
            Owner::Anon { .. } => true,
            Owner::File { file, .. } => self.file_is_shmem(file),
            _ => false,
        };
        let flags = if swapbacked { pg::SWAPBACKED } else { 0 };
        self.folios[pfn as usize] = Folio::new(owner, memcg, self.folios[pfn as usize].node, flags);
        if !self.try_charge(pol, memcg, 1) {
            if self.ctx.yielded {
                // The kernel holds the page while the charge sleeps; the model gives it back
                // and allocates again on resume, counting the allocation once.
                self.vm.sub(Vm::PgAlloc, 1);
            }
            let node = self.folios[pfn as usize].node;
            self.folios[pfn as usize] = Folio::free_on(node);
            self.nodes[node as usize].free.push(pfn);
            return None;
        }
        Some(pfn)
    }

    /// Another task (on another CPU, while this one reclaimed for its new folio) put the page
    /// in the page cache first: `filemap_add_folio` fails with -EEXIST, the new folio is put
    /// back (`folio_put`) and the lookup finds the other's. Returns that folio, if so.
    pub(super) fn raced_into_page_cache(&mut self, file: u32, index: u64, new: Pfn) -> Option<Pfn> {
        let Slot::Page(cached) = self.files[file as usize].slots[index as usize] else {
            return None;
        };
        self.free_folio(new);
        Some(cached)
    }

    /// Another thread of the process mapped the page first, while this one reclaimed for its
    /// new folio (`pte_same` fails under the PTE lock): the new folio is put back.
    fn raced_into_pte(&mut self, pid: u32, vma: u16, index: u64, orig: Pte, new: Pfn) -> bool {
        let now = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        if now == orig {
            return false;
        }
        self.free_folio(new);
        true
    }

    /// Installs a PTE for a folio and accounts the mapping.
    pub(super) fn map_folio(&mut self, pid: u32, vma: u16, index: u64, pfn: Pfn, dirty: bool) {
        let v = &mut self.procs[pid as usize].vmas[vma as usize];
        v.ptes[index as usize] = Pte::present(pfn, false, false);
        v.touch(index, dirty);
        self.procs[pid as usize].rss += 1;
        self.folios[pfn as usize].mapcount += 1;
    }

    pub(super) fn count_fault(&mut self, pid: u32, major: bool) {
        // A resumed access continues the fault it yielded in: counted once, before the yield
        // (anon, swap-in) or after it (filemap_fault and shmem_fault count once they have
        // the folio, whose charge may yield).
        if self.ctx.resumed && self.resume.fault_counted {
            return;
        }
        self.resume.fault_counted = true;
        let memcg = self.procs[pid as usize].memcg;
        self.count(memcg, Vm::Pgfault, 1);
        if major {
            self.count(memcg, Vm::Pgmajfault, 1);
            self.spend_sys(self.cfg.cost.major_fault_cpu_ns);
        } else {
            self.spend_sys(self.cfg.cost.minor_fault_ns);
        }
    }

    /// A load or store to private anonymous memory (or a COW'd page of a private file vma).
    fn access_anon(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
        write: bool,
    ) -> Option<AccessOutcome> {
        self.ensure_vma_size(pid, vma, index);
        let pte = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        // do_anonymous_page: the PTE table first.
        if pte.is_none() && !self.pte_alloc(pol, pid, vma, index) {
            return None;
        }
        if pte.is_present() {
            self.procs[pid as usize].vmas[vma as usize].touch(index, write);
            return Some(AccessOutcome {
                hit: true,
                major: false,
            });
        }
        if pte.is_swap() {
            return self.do_swap_page(pol, pid, vma, index, pte.swap_slot(), write);
        }
        if !write {
            // do_anonymous_page maps the shared zero page on a read fault.
            let first_touch = pte.is_none();
            if first_touch {
                self.count_fault(pid, false);
                self.procs[pid as usize].vmas[vma as usize].ptes[index as usize] = Pte::zero_page();
            }
            return Some(AccessOutcome {
                hit: !first_touch,
                major: false,
            });
        }
        self.do_anonymous_page(pol, pid, vma, index)
    }

    /// `do_anonymous_page` (or `do_wp_page` on the zero page): a new inactive anon folio.
    fn do_anonymous_page(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
    ) -> Option<AccessOutcome> {
        self.count_fault(pid, false);
        let orig = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        let pfn = self.new_folio(pol, pid, Owner::Anon { pid, vma, index })?;
        if self.raced_into_pte(pid, vma, index, orig, pfn) {
            return self.access_anon(pol, pid, vma, index, true);
        }
        if self.procs[pid as usize].vmas[vma as usize].flags & vm::LOCKED != 0 {
            self.folios[pfn as usize].set(pg::MLOCKED);
        }
        self.folio_add_lru(pol, pfn);
        self.map_folio(pid, vma, index, pfn, true);
        Some(AccessOutcome {
            hit: false,
            major: false,
        })
    }

    /// `do_swap_page`: from the swap cache (minor) or from the swap device (major; zram skips
    /// the swap cache and frees the slot, SWP_SYNCHRONOUS_IO).
    fn do_swap_page(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
        slot: u32,
        write: bool,
    ) -> Option<AccessOutcome> {
        let (pfn, major) = match self.swap.slots[slot as usize] {
            SwapSlot::Cached(pfn) => {
                self.count_fault(pid, false);
                (pfn, false)
            }
            SwapSlot::Stored(shadow) => match self.swap_in(pol, pid, vma, index, slot, shadow)? {
                Some(pfn) => (pfn, true),
                None => return self.access_anon(pol, pid, vma, index, write),
            },
            SwapSlot::Free => unreachable!("swap PTE points to a free slot"),
        };
        // The slot may have been freed by the swap-in itself (zram).
        let p = &mut self.procs[pid as usize];
        p.swapents -= 1;
        let cached = self.folios[pfn as usize].swap != 0;
        if !cached {
            p.vmas[vma as usize].ptes[index as usize] = Pte::NONE;
        }
        if let Owner::Anon { .. } = self.folios[pfn as usize].owner() {
            self.folios[pfn as usize].set_owner(Owner::Anon { pid, vma, index });
        }
        self.map_folio(pid, vma, index, pfn, write);
        // should_try_to_free_swap: a write fault or a fullish swap drops the slot.
        if cached && (write || self.swap.is_full()) {
            self.folio_free_swap(pfn);
        }
        Some(AccessOutcome { hit: !major, major })
    }

    /// Reads a page back from swap into a new folio; Some(None) if another thread of the
    /// process swapped it in first (`pte_same` fails): the fault starts over.
    fn swap_in(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
        slot: u32,
        shadow: Option<u64>,
    ) -> Option<Option<Pfn>> {
        self.count_fault(pid, true);
        let orig = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        let pfn = self.new_folio(pol, pid, Owner::Anon { pid, vma, index })?;
        if self.raced_into_pte(pid, vma, index, orig, pfn) {
            return Some(None);
        }
        let read_start = self.now();
        self.swap_read();
        let read_ns = self.now() - read_start;
        let memcg = self.folios[pfn as usize].memcg;
        self.count(memcg, Vm::Pswpin, 1);
        if !self.swap.is_synchronous() || self.kernel.has(Behaviour::SyncSwapIoInPgpg) {
            self.count(memcg, Vm::Pgpgin, 4);
        }
        if self.swap.is_synchronous() {
            self.swap_slot_release(slot);
            self.folios[pfn as usize].set(pg::DIRTY);
        } else {
            self.swap.slots[slot as usize] = SwapSlot::Cached(pfn);
            let f = &mut self.folios[pfn as usize];
            f.swap = slot + 1;
            f.set(pg::SWAPCACHE);
        }
        if let Some(shadow) = shadow {
            pol.workingset_refault(self, pfn, shadow);
        }
        // swap_read_folio (and folio_wait_bit_common for an asynchronous read): waiting for a
        // workingset folio is a memory stall; a disk read sleeps in I/O, zram decompresses.
        let workingset = self.folios[pfn as usize].test(pg::WORKINGSET);
        let iowait = !self.swap.is_synchronous();
        self.psi_wait(read_start, read_start + read_ns, workingset, iowait);
        self.folio_add_lru(pol, pfn);
        Some(Some(pfn))
    }

    /// read()/write() of one page through a file descriptor; a read has `req` pages left in
    /// its request (this one included).
    fn access_fd(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        write: bool,
        req: u64,
    ) -> Option<AccessOutcome> {
        if self.file_is_shmem(file) {
            return match write {
                true => self.shmem_write(pol, pid, file, index),
                false => self.shmem_read(pol, pid, file, index),
            };
        }
        self.ensure_file_size(file, index);
        let (pfn, hit) = match self.files[file as usize].slots[index as usize] {
            Slot::Page(pfn) => (pfn, true),
            _ => (
                self.page_cache_miss(pol, pid, file, index, write, req)?,
                false,
            ),
        };
        if write {
            // generic_perform_write: no FGP_ACCESSED, so no folio_mark_accessed; the folio is
            // locked from write_begin through the copy to write_end.
            self.folio_locked_for_copy(pfn);
            let newly = self.folio_mark_dirty(pfn);
            self.balance_dirty_pages_ratelimited(pid, newly);
        } else {
            if hit {
                self.filemap_read_wait(pid, file, index, pfn);
            }
            // filemap_read marks a folio once per run of reads within it (pos_same_folio).
            if !self.procs[pid as usize].read_same_page_as_last(file, index) {
                pol.folio_mark_accessed(self, pfn);
            }
            // filemap_get_pages → filemap_readahead on a PG_readahead folio (after the copy
            // here: the kernel holds the folio meanwhile, the model has no reference to keep
            // the batch's reclaim off it).
            if hit {
                self.filemap_readahead(pol, pid, file, index, pfn, req);
            }
        }
        Some(AccessOutcome {
            hit,
            major: !hit && !write,
        })
    }

    /// A page-cache miss: allocate, charge, insert (refault check unless __GFP_WRITE), add to
    /// the LRU, and read it (with its readahead, `req` pages left in the read() request)
    /// unless it is about to be overwritten whole.
    fn page_cache_miss(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        write: bool,
        req: u64,
    ) -> Option<Pfn> {
        let pfn = self.new_folio(pol, pid, Owner::File { file, index })?;
        if let Some(cached) = self.raced_into_page_cache(file, index, pfn) {
            return Some(cached);
        }
        self.page_cache_add(pol, file, index, pfn, !write);
        if write {
            self.folio_add_lru(pol, pfn);
        } else {
            self.filemap_read_miss(pol, pid, file, index, pfn, req);
        }
        Some(pfn)
    }

    /// `filemap_add_folio`: puts a new folio in the page cache; a shadow entry it replaces is
    /// a refault (`workingset_refault`) unless the folio is about to be overwritten whole
    /// (__GFP_WRITE: `refault` false).
    pub(super) fn page_cache_add(
        &mut self,
        pol: &mut dyn Policy,
        file: u32,
        index: u64,
        pfn: Pfn,
        refault: bool,
    ) {
        let f = &mut self.files[file as usize];
        let old = std::mem::replace(&mut f.slots[index as usize], Slot::Page(pfn));
        f.nr_pages += 1;
        self.account_page_cache(pfn, 1);
        if let Slot::Shadow(shadow) = old {
            self.files[file as usize].nr_shadows -= 1;
            if refault {
                pol.workingset_refault(self, pfn, shadow);
            }
        }
    }

    /// A load or store through a file mapping.
    fn access_mapped_file(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        file: u32,
        index: u64,
        write: bool,
    ) -> Option<AccessOutcome> {
        self.ensure_file_size(file, index);
        self.ensure_vma_size(pid, vma, index);
        let shared = self.procs[pid as usize].vmas[vma as usize].flags & vm::SHARED != 0;
        let pte = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        // The PTE table (`pte_alloc`), charged before the folio (the kernel's do_read_fault
        // allocates it after filemap_fault unless fault-around preallocates it).
        if pte.is_none() && !self.pte_alloc(pol, pid, vma, index) {
            return None;
        }
        if pte.is_present() {
            let pfn = pte.pfn();
            if write && !shared && !self.folios[pfn as usize].is_anon() {
                return self.cow_private_file_page(pol, pid, vma, index, pfn);
            }
            if pte.is_swap() || self.folios[pfn as usize].is_anon() {
                return self.access_anon(pol, pid, vma, index, write);
            }
            let v = &mut self.procs[pid as usize].vmas[vma as usize];
            let was_dirty = v.ptes[index as usize].dirty();
            v.touch(index, write);
            if write && !was_dirty {
                // Write-protect fault on a clean shared page: do_page_mkwrite dirties it
                // (tmpfs has no ->page_mkwrite: wp_page_shared only dirties it).
                self.count_fault(pid, false);
                self.dirty_file_folio(pid, pfn);
            }
            return Some(AccessOutcome {
                hit: true,
                major: false,
            });
        }
        if pte.is_swap() {
            return self.access_anon(pol, pid, vma, index, write);
        }
        // do_read_fault: fault-around first; it may map the page itself (VM_FAULT_NOPAGE).
        if !write && self.do_fault_around(pid, vma, file, index) {
            self.count_fault(pid, false);
            return Some(AccessOutcome {
                hit: true,
                major: false,
            });
        }
        if self.file_is_shmem(file) {
            return self.shmem_fault(pol, pid, vma, file, index, write);
        }
        // filemap_fault, with readahead (machine/readahead.rs).
        let (pfn, hit) = match self.files[file as usize].slots[index as usize] {
            Slot::Page(pfn) => (pfn, true),
            _ => (self.filemap_fault_miss(pol, pid, vma, file, index)?, false),
        };
        self.count_fault(pid, !hit);
        if write && !shared {
            let fault = AccessOutcome { hit, major: !hit };
            return self.cow_file_fault(pol, pid, vma, index, pfn, fault);
        }
        self.map_folio(pid, vma, index, pfn, write && shared);
        if hit {
            self.filemap_fault_hit(pol, pid, vma, file, index, pfn);
        }
        if write && shared {
            self.dirty_file_folio(pid, pfn);
        }
        Some(AccessOutcome { hit, major: !hit })
    }

    /// `folio_mark_dirty` by a task, then `balance_dirty_pages_ratelimited`, which returns at
    /// once for a mapping that cannot write back (tmpfs: no BDI_CAP_WRITEBACK).
    fn dirty_file_folio(&mut self, pid: u32, pfn: Pfn) {
        let newly = self.folio_mark_dirty(pfn);
        if !self.folios[pfn as usize].is_shmem() {
            self.balance_dirty_pages_ratelimited(pid, newly);
        }
    }

    /// `shmem_fault` (after fault-around, which tmpfs has: `filemap_map_pages`): the folio
    /// from the page cache, from swap (major) or a new zeroed one; no readahead.
    fn shmem_fault(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        file: u32,
        index: u64,
        write: bool,
    ) -> Option<AccessOutcome> {
        let shared = self.procs[pid as usize].vmas[vma as usize].flags & vm::SHARED != 0;
        let orig = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        let got = self
            .shmem_get_folio(pol, pid, file, index, super::shmem::Sgp::Cache)?
            .expect("SGP_CACHE allocates");
        self.count_fault(pid, got.major);
        let now = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        if now != orig {
            // Another thread mapped it while this one reclaimed: its fault is done.
            return self.access_mapped_file(pol, pid, vma, file, index, write);
        }
        if write && !shared {
            let fault = AccessOutcome {
                hit: got.cached,
                major: got.major,
            };
            return self.cow_file_fault(pol, pid, vma, index, got.pfn, fault);
        }
        self.map_folio(pid, vma, index, got.pfn, write && shared);
        if write && shared {
            self.dirty_file_folio(pid, got.pfn);
        }
        Some(AccessOutcome {
            hit: got.cached,
            major: got.major,
        })
    }

    /// `do_cow_fault` after the page-cache folio was found (`fault`: how): the folio is
    /// mapped, then copied into the task's own anon folio.
    fn cow_file_fault(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
        pfn: Pfn,
        fault: AccessOutcome,
    ) -> Option<AccessOutcome> {
        self.map_folio(pid, vma, index, pfn, false);
        self.cow_private_file_page(pol, pid, vma, index, pfn)
            .map(|o| AccessOutcome {
                hit: fault.hit,
                major: fault.major || o.major,
            })
    }

    /// `do_wp_page` on a private file mapping: copy the page-cache page into a new anon folio.
    fn cow_private_file_page(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
        old: Pfn,
    ) -> Option<AccessOutcome> {
        self.count_fault(pid, false);
        let new = self.new_folio(pol, pid, Owner::Anon { pid, vma, index })?;
        // The old PTE may have been unmapped by reclaim during the allocation, or replaced by
        // another thread's copy.
        let pte = self.procs[pid as usize].vmas[vma as usize].ptes[index as usize];
        if pte.is_present() && self.folios[pte.pfn() as usize].is_anon() {
            self.free_folio(new);
            self.procs[pid as usize].vmas[vma as usize].touch(index, true);
            return Some(AccessOutcome {
                hit: true,
                major: false,
            });
        }
        if pte.is_present() && pte.pfn() == old {
            self.procs[pid as usize].rss -= 1;
            self.folios[old as usize].mapcount -= 1;
        }
        self.folio_add_lru(pol, new);
        self.map_folio(pid, vma, index, new, true);
        Some(AccessOutcome {
            hit: true,
            major: false,
        })
    }
}
