//! The reverse map's locks: each file's `i_mmap_rwsem` and each process's anon_vma root
//! `rwsem` (one anon_vma per process: the model has no fork). Writers hold them while they
//! unlink a VMA from the reverse map at munmap and exit (`free_pgtables` →
//! `unlink_file_vma`, `unlink_anon_vmas`). `folio_referenced` takes them with a read trylock
//! (`rwc.try_lock`) and returns -1 when a writer holds them; `try_to_unmap` and
//! `folio_mkclean` take them with a sleeping read lock and wait for the writer.
//!
//! Simplified (docs/model.md §9, gap 2): readers' own holds are not recorded, so a writer never
//! waits for an rmap walk, and a read trylock does not fail because a writer is queued
//! behind readers (RWSEM_FLAG_WAITERS); mmap's `vma_link` and a VMA split's `vma_adjust`
//! (write holds too) are not modelled.

use super::lru_lock::LockTimeline;
use super::{Machine, Owner, Pfn};

impl Machine {
    /// The rmap lock a walk over `pfn`'s mappings takes (`folio_lock_anon_vma_read` or
    /// `i_mmap_lock_read` in `rmap_walk_anon`/`rmap_walk_file`).
    fn rmap_lock_of(&self, pfn: Pfn) -> Option<&LockTimeline> {
        match self.folios[pfn as usize].owner() {
            Owner::Anon { pid, .. } => Some(&self.procs[pid as usize].anon_vma_lock),
            Owner::File { file, .. } => Some(&self.files[file as usize].i_mmap_lock),
            Owner::Free | Owner::Zram => None,
        }
    }

    /// `rwc.try_lock` in `rmap_walk_anon`/`rmap_walk_file`: whether the read trylock of
    /// `pfn`'s rmap lock fails now (a writer holds it), making `folio_referenced` return -1.
    pub fn rmap_trylock_fails(&mut self, pfn: Pfn) -> bool {
        let now = self.now();
        if now >= self.rmap_holds_end {
            return false;
        }
        let held = self
            .rmap_lock_of(pfn)
            .is_some_and(|l| l.held_at(now).is_some());
        self.rmap_trylock_failed += held as u64;
        held
    }

    /// `anon_vma_lock_read`/`i_mmap_lock_read` of a walk that may sleep (`try_to_unmap`,
    /// `folio_mkclean`): the current context sleeps until the writers holding `pfn`'s rmap
    /// lock are done.
    pub fn rmap_lock_read(&mut self, pfn: Pfn) {
        let mut now = self.now();
        if now >= self.rmap_holds_end {
            return;
        }
        while let Some(end) = self.rmap_lock_of(pfn).and_then(|l| l.held_at(now)) {
            self.spend_sleep(end - now);
            self.rmap_lock_wait_ns += end - now;
            now = end;
        }
    }

    /// `i_mmap_lock_write(mapping)` of `file` from `at` for `hold` ns (`unlink_file_vma`);
    /// returns when it is released.
    pub fn i_mmap_lock_write(&mut self, file: u32, at: u64, hold: u64) -> u64 {
        let floor = self.lock_floor;
        let end = self.files[file as usize]
            .i_mmap_lock
            .acquire(at, hold, floor)
            + hold;
        self.rmap_holds_end = self.rmap_holds_end.max(end);
        end
    }

    /// `anon_vma_lock_write` of the anon_vma root of `pid` from `at` for `hold` ns
    /// (`unlink_anon_vmas`); returns when it is released.
    pub fn anon_vma_lock_write(&mut self, pid: u32, at: u64, hold: u64) -> u64 {
        let floor = self.lock_floor;
        let end = self.procs[pid as usize]
            .anon_vma_lock
            .acquire(at, hold, floor)
            + hold;
        self.rmap_holds_end = self.rmap_holds_end.max(end);
        end
    }
}
