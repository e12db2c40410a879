//! Dirty page accounting, dirty limits and throttling, the flusher, and writeback completion
//! (mm/page-writeback.c, fs/fs-writeback.c, mm/filemap.c).

use super::{pg, Machine, Owner, Pfn, Slot, Vm};
use crate::consts::*;
use crate::policy::Policy;

#[derive(Clone, Debug, Default)]
pub struct WritebackState {
    /// NR_FILE_DIRTY and NR_WRITEBACK (pages).
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    /// NR_FILE_PAGES: page-cache pages.
    pub nr_file_pages: u64,
    /// A WB_REASON_VMSCAN / background request is pending: write everything dirty now.
    pub start_all: bool,
    /// The flusher is scheduled to run (`wb_wakeup`).
    pub flusher_queued: bool,
    /// `mapping->writeback_index` per file: where cyclic writeback resumes.
    pub cursor: Vec<u64>,
}

impl Machine {
    /// `folio_mark_dirty`: set PG_dirty; page-cache folios are counted in NR_FILE_DIRTY and
    /// date their inode (`__mark_inode_dirty`).
    pub fn folio_mark_dirty(&mut self, pfn: Pfn) {
        let f = self.folios[pfn as usize];
        if f.test(pg::DIRTY) {
            return;
        }
        self.folios[pfn as usize].set(pg::DIRTY);
        if let Owner::File { file, .. } = f.owner {
            self.wb.nr_dirty += 1;
            let now = self.now();
            let fl = &mut self.files[file as usize];
            if fl.nr_dirty == 0 {
                fl.dirtied_when = now;
            }
            fl.nr_dirty += 1;
        }
    }

    /// The dirty counters of a page-cache folio that stops being dirty.
    pub fn account_clean(&mut self, pfn: Pfn) {
        if let Owner::File { file, .. } = self.folios[pfn as usize].owner {
            self.wb.nr_dirty -= 1;
            self.files[file as usize].nr_dirty -= 1;
        }
    }

    /// `global_dirtyable_memory`: free pages plus file LRU pages.
    pub fn dirtyable_memory(&self) -> u64 {
        self.nr_free() + self.wb.nr_file_pages + 1
    }

    /// `domain_dirty_limits`: (bg_thresh, thresh).
    pub fn dirty_limits(&self) -> (u64, u64) {
        let d = self.dirtyable_memory();
        let thresh = d * self.cfg.dirty_ratio / 100;
        let mut bg = d * self.cfg.dirty_background_ratio / 100;
        if bg >= thresh {
            bg = thresh / 2;
        }
        (bg, thresh)
    }

    /// `balance_dirty_pages` after a task dirtied a page: start background writeback above
    /// bg_thresh; no pause below the freerun ceiling; a pause growing to max_pause up to
    /// thresh; max_pause above it (the simplified control law of classic-lru.md §7.1).
    pub fn balance_dirty_pages(&mut self) {
        let (bg, thresh) = self.dirty_limits();
        let dirty = self.wb.nr_dirty + self.wb.nr_writeback;
        if self.wb.nr_dirty > bg {
            self.wakeup_flusher(false);
        }
        let freerun = (thresh + bg) / 2;
        if dirty <= freerun {
            return;
        }
        let max_pause = DIRTY_MAX_PAUSE_JIFFIES * NS_PER_JIFFY;
        let pause = if dirty >= thresh {
            max_pause
        } else {
            max_pause * (dirty - freerun) / (thresh - freerun).max(1)
        };
        self.spend(pause);
        self.vm.add(Vm::DirtyThrottleNs, pause);
    }

    /// `wakeup_flusher_threads` / `wb_start_background_writeback`.
    pub fn wakeup_flusher(&mut self, all: bool) {
        self.wb.start_all |= all;
        if !self.wb.flusher_queued {
            self.wb.flusher_queued = true;
            let now = self.now();
            self.queue_flusher(now);
        }
    }

    /// One run of the flusher (`wb_workfn` → `wb_do_writeback`): write dirty page cache whose
    /// inode expired (kupdate, 30 s), everything while above the background threshold, or
    /// everything when asked by reclaim. Writes at most MAX_WRITEBACK_PAGES per file per run.
    /// Returns the time the flusher should run again.
    pub fn flusher_run(&mut self) -> u64 {
        self.wb.flusher_queued = false;
        let now = self.now();
        let expire = DIRTY_EXPIRE_CENTISECS * 10_000_000;
        let mut more = false;
        for file in 0..self.files.len() as u32 {
            if self.files[file as usize].nr_dirty == 0 {
                continue;
            }
            let (bg, _) = self.dirty_limits();
            let background = self.wb.nr_dirty > bg;
            // kupdate writes inodes not dirtied after jiffies - dirty_expire_interval
            // (`inode_dirtied_after`): compared in jiffies, as the kernel does.
            let dirtied = self.files[file as usize].dirtied_when / NS_PER_JIFFY;
            let expired = dirtied + expire / NS_PER_JIFFY <= now / NS_PER_JIFFY;
            if !(self.wb.start_all || background || expired) {
                continue;
            }
            self.writeback_file_chunk(file, MAX_WRITEBACK_PAGES);
            more |= self.files[file as usize].nr_dirty > 0;
        }
        if !more {
            self.wb.start_all = false;
        }
        let (bg, _) = self.dirty_limits();
        if more && (self.wb.start_all || self.wb.nr_dirty > bg) {
            // Come back when this chunk's I/O has had time to drain.
            now + 10 * NS_PER_JIFFY
        } else {
            now + DIRTY_WRITEBACK_CENTISECS * 10_000_000
        }
    }

    /// `write_cache_pages` for up to `nr` dirty folios of a file, cyclically from its cursor.
    fn writeback_file_chunk(&mut self, file: u32, nr: u64) {
        if self.wb.cursor.len() < self.files.len() {
            self.wb.cursor.resize(self.files.len(), 0);
        }
        let size = self.files[file as usize].slots.len() as u64;
        let start = self.wb.cursor[file as usize] % size.max(1);
        let mut written = 0;
        for k in 0..size {
            if written >= nr || self.files[file as usize].nr_dirty == 0 {
                self.wb.cursor[file as usize] = (start + k) % size;
                break;
            }
            let idx = (start + k) % size;
            if let Slot::Page(pfn) = self.files[file as usize].slots[idx as usize] {
                let f = self.folios[pfn as usize];
                if f.test(pg::DIRTY) && !f.test(pg::WRITEBACK) {
                    self.folio_start_writeback(pfn);
                    written += 1;
                }
            }
        }
    }

    /// `folio_clear_dirty_for_io` + `folio_start_writeback` + submit: the flusher or reclaim
    /// writes a page-cache folio. Returns the completion time.
    pub fn folio_start_writeback(&mut self, pfn: Pfn) -> u64 {
        self.folio_mkclean(pfn);
        self.account_clean(pfn);
        let f = &mut self.folios[pfn as usize];
        f.clear(pg::DIRTY);
        f.set(pg::WRITEBACK);
        let memcg = f.memcg;
        self.wb.nr_writeback += 1;
        let now = self.now();
        let done = self.file_dev.submit(now, 4096, true);
        self.count(memcg, Vm::Pgpgout, 4);
        self.queue_kthread_work(done, super::kthreads::KthreadWork::WritebackEnd(pfn));
        done
    }

    /// `folio_end_writeback`: clear PG_writeback; a PG_reclaim folio rotates to the inactive
    /// tail (`folio_rotate_reclaimable`); an orphaned anon folio is freed.
    pub fn folio_end_writeback(&mut self, pol: &mut dyn Policy, pfn: Pfn) {
        let f = self.folios[pfn as usize];
        if !f.test(pg::WRITEBACK) {
            return;
        }
        self.wb.nr_writeback -= 1;
        if f.test(pg::RECLAIM) {
            self.folios[pfn as usize].clear(pg::RECLAIM);
            pol.folio_rotate_reclaimable(self, pfn);
        }
        self.folios[pfn as usize].clear(pg::WRITEBACK);
        if let Owner::Anon { pid, .. } = f.owner {
            if pid == super::mm::ORPHAN_PID && !f.test(pg::ISOLATED) {
                self.folio_leave_lru(pol, pfn);
                self.free_folio(pfn);
            }
        }
    }
}
