//! Processes, VMAs and page tables with hardware accessed/dirty bits, and the reverse map used
//! by reclaim (mm/memory.c, mm/rmap.c, mm/mmap.c).

use super::{pg, Machine, Owner, Pfn, Vm};
use crate::behaviour::Behaviour;
use crate::policy::Policy;

/// VMA flags that reclaim looks at.
pub mod vm {
    pub const SHARED: u32 = 1 << 0;
    pub const EXEC: u32 = 1 << 1;
    /// MADV_SEQUENTIAL.
    pub const SEQ_READ: u32 = 1 << 2;
    /// MADV_RANDOM.
    pub const RAND_READ: u32 = 1 << 3;
    /// mlock.
    pub const LOCKED: u32 = 1 << 4;
}

/// A page-table entry: present (pfn, young, dirty), a swap entry, the shared zero page, or none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Zeroable)]
pub struct Pte(u64);

impl Pte {
    const PRESENT: u64 = 1;
    const SWAP: u64 = 2;
    const YOUNG: u64 = 4;
    const DIRTY: u64 = 8;
    const ZERO: u64 = 16;
    pub const NONE: Pte = Pte(0);

    pub fn present(pfn: Pfn, young: bool, dirty: bool) -> Pte {
        Pte(((pfn as u64) << 8)
            | Self::PRESENT
            | if young { Self::YOUNG } else { 0 }
            | if dirty { Self::DIRTY } else { 0 })
    }
    pub fn swap(slot: u32) -> Pte {
        Pte(((slot as u64) << 8) | Self::SWAP)
    }
    pub fn zero_page() -> Pte {
        Pte(Self::ZERO | Self::YOUNG)
    }
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
    pub fn is_present(self) -> bool {
        self.0 & Self::PRESENT != 0
    }
    pub fn is_swap(self) -> bool {
        self.0 & Self::SWAP != 0
    }
    pub fn is_zero_page(self) -> bool {
        self.0 & Self::ZERO != 0
    }
    pub fn pfn(self) -> Pfn {
        debug_assert!(self.is_present());
        (self.0 >> 8) as Pfn
    }
    pub fn swap_slot(self) -> u32 {
        debug_assert!(self.is_swap());
        (self.0 >> 8) as u32
    }
    pub fn young(self) -> bool {
        self.0 & Self::YOUNG != 0
    }
    pub fn dirty(self) -> bool {
        self.0 & Self::DIRTY != 0
    }
    pub fn mkyoung(&mut self) {
        self.0 |= Self::YOUNG;
    }
    pub fn mkdirty(&mut self) {
        self.0 |= Self::DIRTY;
    }
    pub fn mkold(&mut self) {
        self.0 &= !Self::YOUNG;
    }
    pub fn mkclean(&mut self) {
        self.0 &= !Self::DIRTY;
    }
}

/// What a VMA maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    /// Private anonymous memory.
    Anon,
    /// A file mapping (MAP_SHARED if flags has SHARED, else MAP_PRIVATE with COW on write).
    File { file: u32 },
}

/// A virtual memory area with its own page table (one PTE per page of the area).
#[derive(Clone, Debug)]
pub struct Vma {
    pub kind: VmaKind,
    pub flags: u32,
    pub ptes: Vec<Pte>,
    /// The accessed bit of each non-leaf PMD entry (one per 512 PTEs), which x86 hardware sets
    /// when it walks through it (`arch_has_hw_nonleaf_pmd_young`).
    pub pmd_young: Vec<bool>,
    /// Whether each PTE table (one per 512 PTEs) is allocated (and charged to the process's
    /// memcg): from the first fault in its range (`pte_alloc`) to exit or munmap.
    pub pte_table: Vec<bool>,
}

/// PTEs per PTE table (one PMD entry).
pub const PTRS_PER_PTE: u64 = 512;

impl Vma {
    pub fn new(kind: VmaKind, flags: u32, pages: u64) -> Vma {
        Vma {
            kind,
            flags,
            // Zeroed (Pte::NONE): page-table pages never touched cost nothing, as the kernel
            // allocates a PTE table only on first fault.
            ptes: bytemuck::zeroed_vec(pages as usize),
            pmd_young: vec![false; pages.div_ceil(PTRS_PER_PTE) as usize],
            pte_table: vec![false; pages.div_ceil(PTRS_PER_PTE) as usize],
        }
    }
    /// Grows the page table to cover `index`.
    pub fn ensure(&mut self, index: u64) {
        if index as usize >= self.ptes.len() {
            self.ptes.resize(index as usize + 1, Pte::NONE);
            self.pmd_young
                .resize((index + 1).div_ceil(PTRS_PER_PTE) as usize, false);
            self.pte_table
                .resize((index + 1).div_ceil(PTRS_PER_PTE) as usize, false);
        }
    }
    /// The hardware sets the PTE's accessed (and dirty) bit, and the PMD's accessed bit.
    #[inline]
    pub fn touch(&mut self, index: u64, write: bool) {
        let p = &mut self.ptes[index as usize];
        p.mkyoung();
        if write {
            p.mkdirty();
        }
        self.pmd_young[(index / PTRS_PER_PTE) as usize] = true;
    }
    /// `vma_has_recency`: no MADV_SEQUENTIAL / MADV_RANDOM hint.
    pub fn has_recency(&self) -> bool {
        self.flags & (vm::SEQ_READ | vm::RAND_READ) == 0
    }
}

/// Where a PTE lives: process, vma and page index inside the vma.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PteLoc {
    pub pid: u32,
    pub vma: u16,
    pub index: u64,
}

/// A process (`mm_struct` and its tasks).
#[derive(Clone, Debug)]
pub struct Process {
    pub pid: u32,
    pub memcg: u16,
    pub alive: bool,
    pub vmas: Vec<Vma>,
    /// Resident pages (MM_ANONPAGES + MM_FILEPAGES) and swap entries.
    pub rss: u64,
    pub swapents: u64,
    pub oom_score_adj: i32,
    pub name: String,
    /// Per-node "ran since the last page-table walk" bits (`lru_gen_use_mm`).
    pub mm_used: u64,
    /// The readahead state of each file this process opened or mapped (`file->f_ra`: one
    /// open file per process and file).
    pub ra: Vec<super::readahead::FileRa>,
    /// An OOM victim is exiting until this time (its memory is freed at the kill, but the
    /// OOM killer leaves other tasks alone until it has gone: `tsk_is_oom_victim` without
    /// MMF_OOM_SKIP). 0 = not a victim.
    pub oom_exit_until: u64,
    /// Pages this task dirtied since its last `balance_dirty_pages` (`current->nr_dirtied`)
    /// and how many it may dirty before the next (`current->nr_dirtied_pause`).
    pub nr_dirtied: u64,
    pub nr_dirtied_pause: u64,
    /// munmap holds `mmap_lock` for write until then (`mmap_write_lock` in `do_vmi_munmap`):
    /// `mmap_read_trylock` fails before it.
    pub mmap_write_until: u64,
    /// The anon_vma root `rwsem`'s write holds (`rmap_lock.rs`).
    pub anon_vma_lock: super::lru_lock::LockTimeline,
}

impl Process {
    /// Records a read() of `page` of `file`; returns whether the previous read of this open
    /// file ended in the same page (then filemap_read does not mark it accessed again).
    pub fn read_same_page_as_last(&mut self, file: u32, page: u64) -> bool {
        // pos_same_folio(ki_pos, prev_pos - 1): prev_pos is one past the last byte read.
        let ra = self.file_ra(file);
        ra.prev_index.replace(page + 1) == Some(page + 1)
    }

    /// The readahead state of this process's open `file` (`file_ra_state_init` on first use).
    pub fn file_ra(&mut self, file: u32) -> &mut super::readahead::FileRa {
        match self.ra.iter().position(|r| r.file == file) {
            Some(i) => &mut self.ra[i],
            None => {
                self.ra.push(super::readahead::FileRa::new(file));
                self.ra.last_mut().expect("just pushed")
            }
        }
    }
}

impl Process {
    /// The VMA mapping `file`, if any.
    pub fn file_vma(&self, file: u32) -> Option<u16> {
        self.vmas
            .iter()
            .position(|v| v.kind == VmaKind::File { file })
            .map(|i| i as u16)
    }
}

/// What `folio_referenced` found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Referenced {
    /// Number of mappings (vmas) with a young PTE.
    pub referenced: u32,
    /// OR of the flags of the vmas that referenced it (and VM_LOCKED if a locked vma maps it).
    pub vm_flags: u32,
    /// The rmap lock's read trylock failed and nothing was walked: the kernel's -1
    /// (`rwc.contended`).
    pub contended: bool,
}

impl Machine {
    /// Creates a process in a memcg with one anonymous area (vma 0) of `anon_pages` pages.
    pub fn create_process(&mut self, name: &str, memcg: u16, anon_pages: u64) -> u32 {
        let pid = self.procs.len() as u32;
        self.procs.push(Process {
            pid,
            memcg,
            alive: true,
            vmas: vec![Vma::new(VmaKind::Anon, 0, anon_pages)],
            rss: 0,
            swapents: 0,
            oom_score_adj: 0,
            name: name.to_string(),
            mm_used: !0,
            ra: Vec::new(),
            oom_exit_until: 0,
            nr_dirtied: 0,
            nr_dirtied_pause: crate::consts::NR_DIRTIED_PAUSE_INIT,
            mmap_write_until: 0,
            anon_vma_lock: Default::default(),
        });
        pid
    }

    /// `mmap` of a whole file into a process; returns the vma index.
    pub fn mmap_file(&mut self, pid: u32, file: u32, flags: u32) -> u16 {
        let pages = self.files[file as usize].size_pages as usize;
        let p = &mut self.procs[pid as usize];
        let idx = p.vmas.len() as u16;
        p.vmas
            .push(Vma::new(VmaKind::File { file }, flags, pages as u64));
        self.files[file as usize].mmaps.push((pid, idx));
        idx
    }

    /// `madvise` hints on a vma (MADV_SEQUENTIAL, MADV_RANDOM, MADV_NORMAL = 0).
    pub fn madvise(&mut self, pid: u32, vma: u16, hint: u32) {
        let v = &mut self.procs[pid as usize].vmas[vma as usize];
        v.flags &= !(vm::SEQ_READ | vm::RAND_READ);
        v.flags |= hint & (vm::SEQ_READ | vm::RAND_READ);
    }

    /// Grows a vma's page table to cover `index`.
    pub fn ensure_vma_size(&mut self, pid: u32, vma: u16, index: u64) {
        self.procs[pid as usize].vmas[vma as usize].ensure(index);
    }

    /// `folio_referenced`: test and clear the young bit of every PTE mapping the folio, counting
    /// one reference per vma with a young PTE. `memcg` restricts the walk to mms of that subtree.
    pub fn folio_referenced(&mut self, pfn: Pfn, memcg: Option<u16>) -> Referenced {
        let mut r = Referenced::default();
        // Look-around follows only the young PTEs of this walk.
        self.young_ptes.clear();
        let folio = self.folios[pfn as usize];
        if folio.mapcount == 0 {
            return r;
        }
        if self.rmap_trylock_fails(pfn) {
            r.contended = true;
            return r;
        }
        let skip_no_recency = self.kernel.has(Behaviour::VmaHasRecency);
        let memcgs = &self.memcgs;
        let young_ptes = &mut self.young_ptes;
        let mut locked = false;
        let visited = rmap_walk_all(
            &mut self.procs,
            &self.files,
            pfn,
            folio.owner(),
            |pte, flags, loc, mm_memcg| {
                if let Some(t) = memcg {
                    if !super::memcg::is_descendant(memcgs, mm_memcg, t) {
                        return true;
                    }
                }
                if skip_no_recency && flags & (vm::SEQ_READ | vm::RAND_READ) != 0 {
                    return true;
                }
                if flags & vm::LOCKED != 0 {
                    locked = true;
                    return false;
                }
                let young = pte.young();
                pte.mkold();
                // v6.1: a reference through a sequentially read mapping does not count.
                if young && flags & vm::SEQ_READ == 0 {
                    r.referenced += 1;
                    r.vm_flags |= flags;
                    young_ptes.push(loc);
                }
                true
            },
        );
        if locked {
            r.vm_flags |= vm::LOCKED;
        }
        self.spend_sys(visited * self.cfg.cost.rmap_pte_ns);
        r
    }

    /// `try_to_unmap`: replace every PTE of the folio by a swap entry (anon in the swap cache) or
    /// nothing (file), moving PTE dirty bits to PG_dirty. Returns true when no mapping is left.
    pub fn try_to_unmap(&mut self, pfn: Pfn) -> bool {
        let folio = self.folios[pfn as usize];
        if folio.mapcount > 0 {
            self.rmap_lock_read(pfn);
        }
        let swap_slot = folio.swap.checked_sub(1);
        let mut dirty = false;
        let mut unmapped_pids: Vec<u32> = Vec::new();
        let visited = rmap_walk_pids(
            &mut self.procs,
            &self.files,
            pfn,
            folio.owner(),
            |pte, flags, pid| {
                if flags & vm::LOCKED != 0 {
                    return true;
                }
                dirty |= pte.dirty();
                *pte = match swap_slot {
                    Some(slot) if folio.is_anon() => Pte::swap(slot),
                    _ => Pte::NONE,
                };
                unmapped_pids.push(pid);
                true
            },
        );
        self.spend_sys(visited * self.cfg.cost.rmap_pte_ns);
        for pid in unmapped_pids {
            let p = &mut self.procs[pid as usize];
            p.rss -= 1;
            if folio.is_anon() {
                p.swapents += 1;
            }
            self.folios[pfn as usize].mapcount -= 1;
        }
        if dirty {
            self.folio_mark_dirty(pfn);
        }
        self.folios[pfn as usize].mapcount == 0
    }

    /// `folio_mkclean` on writeback: clear the dirty bit of every PTE mapping the folio.
    pub fn folio_mkclean(&mut self, pfn: Pfn) {
        if self.folios[pfn as usize].mapcount == 0 {
            return;
        }
        self.rmap_lock_read(pfn);
        let owner = self.folios[pfn as usize].owner();
        rmap_walk_pids(&mut self.procs, &self.files, pfn, owner, |pte, _, _| {
            pte.mkclean();
            true
        });
    }

    /// Frees a folio that is off every list: uncharge, clear, back to the node's free list.
    pub fn free_folio(&mut self, pfn: Pfn) {
        let f = self.folios[pfn as usize];
        debug_assert!(
            !f.test(pg::LRU) && !f.test(pg::IN_BATCH),
            "freeing a listed folio"
        );
        if f.test(pg::DIRTY) && matches!(f.owner(), Owner::File { .. }) {
            self.account_clean(pfn);
        }
        if f.owner() != Owner::Zram {
            self.memcg_uncharge(f.memcg);
        }
        let node = f.node;
        self.folios[pfn as usize] = super::Folio::free_on(node);
        self.nodes[node as usize].free.push(pfn);
        self.vm.add(Vm::PgFree, 1);
    }

    /// Takes a folio off its LRU list or per-CPU batch before it is freed outside reclaim
    /// (`lruvec_del_folio` via `folio_put` → `__folio_put` → `lru_cache` removal).
    pub fn folio_leave_lru(&mut self, pol: &mut dyn Policy, pfn: Pfn) {
        let f = self.folios[pfn as usize];
        if f.test(pg::LRU) {
            pol.lruvec_del_folio(self, pfn);
            self.folios[pfn as usize].clear(pg::LRU);
        } else if f.test(pg::IN_BATCH) {
            for b in &mut self.lru_add_batch {
                b.retain(|&p| p != pfn);
            }
            self.folios[pfn as usize].clear(pg::IN_BATCH);
        }
        for b in &mut self.lru_activate_batch {
            b.retain(|&p| p != pfn);
        }
    }

    /// `exit_mmap` of `pid`, from `at`: `unmap_vmas` unmaps and frees everything the process
    /// maps (`zap_pte_ns` per mapped page or swap entry, done at once in the model), then
    /// `free_pgtables` unlinks each VMA from the reverse map, holding the anon_vma's or the
    /// file's rmap lock for write for `vma_unlink_ns` (`unlink_anon_vmas`, `unlink_file_vma`).
    /// Returns when the exit is done; the caller charges the time.
    pub fn exit_mmap(&mut self, pol: &mut dyn Policy, pid: u32, at: u64) -> u64 {
        let p = &self.procs[pid as usize];
        let zap = (p.rss + p.swapents).max(1) * self.cfg.cost.zap_pte_ns;
        self.zap_all_vmas(pol, pid);
        self.unlink_vmas(pid, at + zap)
    }

    /// `free_pgtables` of an exiting `pid` from `at`: each VMA leaves its reverse map under
    /// the rmap lock's write hold, one after another; returns when the last is done.
    fn unlink_vmas(&mut self, pid: u32, at: u64) -> u64 {
        let hold = self.cfg.cost.vma_unlink_ns;
        let mut t = at;
        for vi in 0..self.procs[pid as usize].vmas.len() {
            let v = &self.procs[pid as usize].vmas[vi];
            let (kind, private) = (v.kind, v.flags & vm::SHARED == 0);
            // unlink_anon_vmas: an anonymous VMA, or a private file one (its COW copies).
            if private {
                t = self.anon_vma_lock_write(pid, t, hold);
            }
            if let VmaKind::File { file } = kind {
                t = self.i_mmap_lock_write(file, t, hold);
            }
        }
        t
    }

    /// `unmap_vmas` of an exiting `pid`: every PTE zapped, the process gone from its files'
    /// `i_mmap`.
    fn zap_all_vmas(&mut self, pol: &mut dyn Policy, pid: u32) {
        let nvmas = self.procs[pid as usize].vmas.len();
        for vi in 0..nvmas {
            let n = self.procs[pid as usize].vmas[vi].ptes.len();
            for i in 0..n {
                let pte = self.procs[pid as usize].vmas[vi].ptes[i];
                self.zap_pte(pol, pid, vi as u16, i as u64, pte);
            }
            // free_pgtables: every PTE table of the vma.
            let tables = self.procs[pid as usize].vmas[vi].pte_table.len();
            for t in 0..tables {
                self.pte_free(pid, vi as u16, t);
            }
        }
        self.procs[pid as usize].alive = false;
        let files: Vec<u32> = self.procs[pid as usize]
            .vmas
            .iter()
            .filter_map(|v| match v.kind {
                VmaKind::File { file } => Some(file),
                _ => None,
            })
            .collect();
        for file in files {
            self.files[file as usize].mmaps.retain(|&(p, _)| p != pid);
        }
    }

    /// Unmaps and frees an anon range of a process (munmap of part of vma 0).
    pub fn munmap_anon(&mut self, pol: &mut dyn Policy, pid: u32, start: u64, len: u64) {
        let n = self.procs[pid as usize].vmas[0].ptes.len() as u64;
        // mmap_lock is held for write while zap_pte_range runs over the range and
        // free_pgtables unlinks the detached VMA (unlink_anon_vmas, anon_vma held for write).
        let zap = len.min(n.saturating_sub(start)) * self.cfg.cost.zap_pte_ns;
        let unlinked = self.anon_vma_lock_write(pid, self.now() + zap, self.cfg.cost.vma_unlink_ns);
        self.procs[pid as usize].mmap_write_until = unlinked;
        for i in start..(start + len).min(n) {
            let pte = self.procs[pid as usize].vmas[0].ptes[i as usize];
            self.zap_pte(pol, pid, 0, i, pte);
        }
        // free_pgtables: the PTE tables whose whole range was unmapped.
        let end = (start + len).min(n);
        for t in start.div_ceil(PTRS_PER_PTE)..end / PTRS_PER_PTE {
            self.pte_free(pid, 0, t as usize);
        }
    }

    /// `pte_alloc` (`__pte_alloc` → `pte_alloc_one`, GFP_PGTABLE_USER with __GFP_ACCOUNT):
    /// the PTE table covering `index` of a vma, allocated at the first fault in its range and
    /// charged to the task's memcg (`__memcg_kmem_charge_page` → `obj_cgroup_charge_pages` →
    /// `try_charge_memcg`; the root memcg has no objcg and charges nothing). False if the
    /// charge failed (the task was killed or yielded).
    pub(super) fn pte_alloc(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        index: u64,
    ) -> bool {
        let t = (index / PTRS_PER_PTE) as usize;
        // A process whose exit_mmap ran while one of its threads was in a fault (the model
        // runs it at once; the kernel's waits for the mm's last user) has no page tables.
        if self.procs[pid as usize].vmas[vma as usize].pte_table[t]
            || !self.procs[pid as usize].alive
        {
            return true;
        }
        let memcg = self.procs[pid as usize].memcg;
        if memcg != 0 && self.cfg.charge_page_tables {
            if !self.try_charge(pol, memcg, 1) {
                // A resumed access does not count its fault again (it was counted before the
                // yield): count it now, as a minor one (a file fault whose table charge yields
                // and whose read then waits is not counted major).
                if self.ctx.yielded && !self.ctx.resumed {
                    self.count_fault(pid, false);
                }
                return false;
            }
            // memcg_account_kmem: a kernel page, not a folio.
            let mc = &mut self.memcgs[memcg as usize];
            mc.local_pages -= 1;
            mc.pgtable_pages += 1;
        }
        self.procs[pid as usize].vmas[vma as usize].pte_table[t] = true;
        true
    }

    /// `pte_free` of an allocated PTE table: `__memcg_kmem_uncharge_page` →
    /// `obj_cgroup_uncharge_pages`, which gives the page to this CPU's charge stock
    /// (`refill_stock`), not straight to the page counter.
    fn pte_free(&mut self, pid: u32, vma: u16, t: usize) {
        let v = &mut self.procs[pid as usize].vmas[vma as usize];
        if !std::mem::take(&mut v.pte_table[t]) {
            return;
        }
        let memcg = self.procs[pid as usize].memcg;
        if memcg != 0 && self.cfg.charge_page_tables {
            self.memcgs[memcg as usize].pgtable_pages -= 1;
            self.refill_stock(memcg, 1);
        }
    }

    /// `zap_pte_range` for one PTE.
    fn zap_pte(&mut self, pol: &mut dyn Policy, pid: u32, vma: u16, index: u64, pte: Pte) {
        self.procs[pid as usize].vmas[vma as usize].ptes[index as usize] = Pte::NONE;
        if pte.is_swap() {
            self.procs[pid as usize].swapents -= 1;
            self.swap_entry_free(pol, pte.swap_slot());
            return;
        }
        if !pte.is_present() {
            return;
        }
        let pfn = pte.pfn();
        self.procs[pid as usize].rss -= 1;
        self.folios[pfn as usize].mapcount -= 1;
        let f = self.folios[pfn as usize];
        if pte.dirty() && !f.is_anon() {
            self.folio_mark_dirty(pfn);
        }
        if f.is_anon() && !f.test(pg::ISOLATED) {
            if let Some(slot) = f.swap.checked_sub(1) {
                self.swap_slot_release(slot);
                self.folios[pfn as usize].swap = 0;
                self.folios[pfn as usize].clear(pg::SWAPCACHE);
            }
            if f.test(pg::WRITEBACK) {
                // The page is freed when its I/O ends (the bio holds a reference).
                self.folios[pfn as usize].set_owner(Owner::Anon {
                    pid: ORPHAN_PID,
                    vma: 0,
                    index: 0,
                });
                return;
            }
            self.folio_leave_lru(pol, pfn);
            self.free_folio(pfn);
        }
    }
}

/// The owner pid of an anon folio whose process unmapped it while its swap-out was in flight;
/// it is freed when the write ends.
pub const ORPHAN_PID: u32 = u32::MAX;

/// The rmap walk (`rmap_walk_anon` / `rmap_walk_file`): calls `f(pte, vma_flags, where,
/// mm_memcg)` on every live PTE mapping `pfn` until it returns false. Returns the number of
/// PTEs looked at.
fn rmap_walk_all(
    procs: &mut [Process],
    files: &[super::File],
    pfn: Pfn,
    owner: Owner,
    mut f: impl FnMut(&mut Pte, u32, PteLoc, u16) -> bool,
) -> u64 {
    match owner {
        Owner::Anon { pid, vma, index } if pid != ORPHAN_PID => {
            let p = &mut procs[pid as usize];
            let memcg = p.memcg;
            let v = &mut p.vmas[vma as usize];
            let flags = v.flags;
            let pte = &mut v.ptes[index as usize];
            if pte.is_present() && pte.pfn() == pfn {
                f(pte, flags, PteLoc { pid, vma, index }, memcg);
            }
            1
        }
        Owner::File { file, index } => {
            let mut visited = 0;
            for &(pid, vma) in &files[file as usize].mmaps {
                let p = &mut procs[pid as usize];
                if !p.alive {
                    continue;
                }
                let memcg = p.memcg;
                let v = &mut p.vmas[vma as usize];
                let flags = v.flags;
                if let Some(pte) = v.ptes.get_mut(index as usize) {
                    visited += 1;
                    let loc = PteLoc { pid, vma, index };
                    if pte.is_present() && pte.pfn() == pfn && !f(pte, flags, loc, memcg) {
                        break;
                    }
                }
            }
            visited
        }
        _ => 0,
    }
}

/// [`rmap_walk_all`] passing the pid.
fn rmap_walk_pids(
    procs: &mut [Process],
    files: &[super::File],
    pfn: Pfn,
    owner: Owner,
    mut f: impl FnMut(&mut Pte, u32, u32) -> bool,
) -> u64 {
    rmap_walk_all(procs, files, pfn, owner, |pte, fl, loc, _| {
        f(pte, fl, loc.pid)
    })
}
