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
    /// NR_FILE_PAGES: page-cache pages (tmpfs pages included).
    pub nr_file_pages: u64,
    /// NR_SHMEM: tmpfs pages in the page cache (in NR_FILE_PAGES, not on the file LRU).
    pub nr_shmem: u64,
    /// A WB_REASON_VMSCAN / background request is pending: write everything dirty now.
    pub start_all: bool,
    /// The flusher is scheduled to run (`wb_wakeup`).
    pub flusher_queued: bool,
    /// `mapping->writeback_index` per file: where cyclic writeback resumes.
    pub cursor: Vec<u64>,
}

/// The per-memcg writeback statistics (`Memcg::wb_stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WbStat {
    FilePages = 0,
    Dirty = 1,
    Writeback = 2,
    /// NR_SHMEM of the memcg (memory.stat `shmem`).
    Shmem = 3,
}

/// A dirty-throttling domain (`struct dirty_throttle_control`): the global one or a memcg's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyDomain {
    /// Dirtyable memory (`avail`).
    pub avail: u64,
    /// NR_FILE_DIRTY (+ NR_WRITEBACK when throttling), as the domain reads them (a memcg's as of
    /// the last statistics flush on 6.8+).
    pub dirty: u64,
    /// The dirty and writeback pages of the domain's wb (`wb_dirty`: exact per-wb counters).
    pub wb_dirty: u64,
    pub bg_thresh: u64,
    pub thresh: u64,
}

impl DirtyDomain {
    /// `dirty_freerun_ceiling`.
    pub fn freerun(&self) -> u64 {
        (self.thresh + self.bg_thresh) / 2
    }
}

/// `wb_max_pause`: the longest pause (jiffies) of a task dirtying through a wb with `wb_dirty`
/// dirty and writeback pages and an average write bandwidth of `bw` pages per second: the
/// time to write out an eighth of a second's worth of its dirty pages ("8 serves as the safety
/// ratio": a longer sleep could let the device go idle), at most `MAX_PAUSE`.
pub fn wb_max_pause(wb_dirty: u64, bw: u64) -> u64 {
    let t = wb_dirty / (1 + bw / (1 + HZ / 8).next_power_of_two()) + 1;
    t.min(DIRTY_MAX_PAUSE_JIFFIES)
}

impl Machine {
    /// Adds `delta` to a writeback statistic of `memcg` and its ancestors.
    pub fn memcg_wb_stat_add(&mut self, memcg: u16, stat: WbStat, delta: i64) {
        let epoch = self.stats_epoch();
        self.for_each_ancestor(memcg, |mc| {
            mc.wb_stat_flushed.before_update(epoch, &mc.wb_stat);
            let v = &mut mc.wb_stat[stat as usize];
            *v = v.wrapping_add_signed(delta);
        });
    }

    /// `folio_mark_dirty`: set PG_dirty; page-cache folios are counted in NR_FILE_DIRTY and
    /// date their inode (`__mark_inode_dirty`). Returns whether a page-cache folio became
    /// dirty (`folio_account_dirtied`).
    pub fn folio_mark_dirty(&mut self, pfn: Pfn) -> bool {
        let f = self.folios[pfn as usize];
        if f.test(pg::DIRTY) {
            return false;
        }
        self.folios[pfn as usize].set(pg::DIRTY);
        if f.is_shmem() {
            // shmem_aops' noop_dirty_folio: PG_dirty only; tmpfs cannot write back
            // (`mapping_can_writeback` is false), so nothing is accounted or tagged.
            return false;
        }
        if let Owner::File { file, index } = f.owner() {
            self.wb.nr_dirty += 1;
            self.memcg_wb_stat_add(f.memcg, WbStat::Dirty, 1);
            let now = self.now();
            let fl = &mut self.files[file as usize];
            if fl.nr_dirty == 0 {
                fl.dirtied_when = now;
            }
            fl.nr_dirty += 1;
            fl.dirty_tag.insert(index);
            return true;
        }
        false
    }

    /// The dirty counters of a page-cache folio that stops being dirty.
    pub fn account_clean(&mut self, pfn: Pfn) {
        let f = self.folios[pfn as usize];
        if f.is_shmem() {
            return;
        }
        if let Owner::File { file, .. } = f.owner() {
            self.wb.nr_dirty -= 1;
            self.memcg_wb_stat_add(f.memcg, WbStat::Dirty, -1);
            self.files[file as usize].nr_dirty -= 1;
        }
    }

    /// `global_dirtyable_memory`: free pages plus file LRU pages (tmpfs pages are on the anon
    /// LRU).
    pub fn dirtyable_memory(&self) -> u64 {
        self.nr_free() + self.wb.nr_file_pages - self.wb.nr_shmem + 1
    }

    /// `domain_dirty_limits`: (bg_thresh, thresh) of the global domain.
    pub fn dirty_limits(&self) -> (u64, u64) {
        self.domain_limits(self.dirtyable_memory())
    }

    /// `domain_dirty_limits` for a domain with `avail` dirtyable pages: (bg_thresh, thresh).
    fn domain_limits(&self, avail: u64) -> (u64, u64) {
        let thresh = avail * self.cfg.dirty_ratio / 100;
        let mut bg = avail * self.cfg.dirty_background_ratio / 100;
        if bg >= thresh {
            bg = thresh / 2;
        }
        (bg, thresh)
    }

    /// The global domain (`gdtc`, `domain_dirty_avail`), counting pages under writeback as
    /// dirty when throttling.
    pub fn global_dirty_domain(&self, include_writeback: bool) -> DirtyDomain {
        let avail = self.dirtyable_memory();
        let (bg_thresh, thresh) = self.domain_limits(avail);
        let wb = if include_writeback {
            self.wb.nr_writeback
        } else {
            0
        };
        DirtyDomain {
            avail,
            dirty: self.wb.nr_dirty + wb,
            wb_dirty: self.wb.nr_dirty + wb,
            bg_thresh,
            thresh,
        }
    }

    /// The memcg domain of cgroup writeback (`mdtc`: `mem_cgroup_wb_stats`,
    /// `mdtc_calc_avail`): the memcg's file pages plus the clean memory it could still get
    /// (its headroom below memory.max/high, up to the clean pages elsewhere). None for the
    /// root, which has no domain of its own.
    pub fn memcg_dirty_domain(
        &self,
        memcg: u16,
        global: &DirtyDomain,
        include_writeback: bool,
    ) -> Option<DirtyDomain> {
        if memcg == 0 {
            return None;
        }
        let mc = &self.memcgs[memcg as usize];
        let st = mc.wb_stat_flushed.read(self.stats_epoch(), &mc.wb_stat);
        // mem_cgroup_wb_stats counts the file LRU: tmpfs pages are on the anon LRU.
        let filepages = st[WbStat::FilePages as usize] - st[WbStat::Shmem as usize];
        let mut dirty = st[WbStat::Dirty as usize];
        let mut wb_dirty = mc.wb_stat[WbStat::Dirty as usize];
        if include_writeback {
            dirty += st[WbStat::Writeback as usize];
            wb_dirty += mc.wb_stat[WbStat::Writeback as usize];
        }
        let headroom = self
            .memcg_ancestors(memcg)
            .filter(|&c| c != 0)
            .map(|c| {
                let m = &self.memcgs[c as usize];
                let ceiling = m.max.min(m.high);
                ceiling - ceiling.min(m.usage)
            })
            .min()
            .unwrap_or(u64::MAX);
        let clean = filepages - filepages.min(dirty);
        let global_clean = global.avail - global.avail.min(global.dirty);
        let other_clean = global_clean - global_clean.min(clean);
        let avail = filepages + headroom.min(other_clean);
        let (bg_thresh, thresh) = self.domain_limits(avail);
        Some(DirtyDomain {
            avail,
            dirty,
            wb_dirty,
            bg_thresh,
            thresh,
        })
    }

    /// `balance_dirty_pages_ratelimited` after task `pid` wrote to the page cache: the task
    /// counts the pages it newly dirtied and enters `balance_dirty_pages` once it has dirtied
    /// `nr_dirtied_pause` of them (at most 8 while its wb has `dirty_exceeded`).
    pub fn balance_dirty_pages_ratelimited(&mut self, pid: u32, newly_dirtied: bool) {
        let memcg = self.procs[pid as usize].memcg;
        let exceeded = self.memcgs[memcg as usize].dirty_exceeded;
        let p = &mut self.procs[pid as usize];
        p.nr_dirtied += newly_dirtied as u64;
        let mut ratelimit = p.nr_dirtied_pause;
        if exceeded {
            ratelimit = ratelimit.min(DIRTY_EXCEEDED_RATELIMIT);
        }
        if p.nr_dirtied >= ratelimit {
            self.balance_dirty_pages(pid);
        }
    }

    /// `balance_dirty_pages` for task `pid`: start background writeback above the global
    /// bg_thresh (or whenever a domain is past its freerun ceiling); no pause while both the
    /// global and the task's memcg domain are below their freerun ceilings (the task may then
    /// dirty `dirty_poll_interval` pages before it comes back); otherwise a pause growing to
    /// max_pause up to thresh and max_pause above it (the simplified control law of
    /// classic-lru.md §7.1), from the more restrictive domain.
    pub fn balance_dirty_pages(&mut self, pid: u32) {
        let memcg = self.procs[pid as usize].memcg;
        let g = self.global_dirty_domain(true);
        let mdtc = self.memcg_dirty_domain(memcg, &g, true);
        if self.wb.nr_dirty > g.bg_thresh {
            self.wakeup_flusher(false);
        }
        let over = |d: &DirtyDomain| d.dirty > d.freerun();
        let exceeded = |d: &DirtyDomain| d.dirty > d.thresh;
        let poll = |d: &DirtyDomain| dirty_poll_interval(d.dirty, d.thresh);
        let p = &mut self.procs[pid as usize];
        p.nr_dirtied = 0;
        p.nr_dirtied_pause = poll(&g).min(mdtc.as_ref().map_or(u64::MAX, poll));
        self.memcgs[memcg as usize].dirty_exceeded =
            exceeded(&g) || mdtc.as_ref().is_some_and(exceeded);
        if !over(&g) && !mdtc.as_ref().is_some_and(over) {
            return;
        }
        self.wakeup_flusher(false);
        let pause_of = |d: &DirtyDomain| {
            let max_pause = wb_max_pause(d.wb_dirty, INIT_BW_PAGES) * NS_PER_JIFFY;
            let freerun = d.freerun();
            if d.dirty <= freerun {
                0
            } else if d.dirty >= d.thresh {
                max_pause
            } else {
                max_pause * (d.dirty - freerun) / (d.thresh - freerun).max(1)
            }
        };
        let pause = pause_of(&g).max(mdtc.as_ref().map_or(0, pause_of));
        let start = self.now();
        self.spend_throttled(pause);
        // io_schedule_timeout: an I/O wait, not a memory stall.
        self.psi_wait(start, start + pause, false, true);
        self.vm.add(Vm::DirtyThrottleNs, pause);
    }

    /// `wb_over_bg_thresh`: background writeback goes on while the global domain, or the domain
    /// of some memcg, has more dirty pages than its background threshold.
    fn over_bg_thresh(&self) -> bool {
        let g = self.global_dirty_domain(false);
        if g.dirty > g.bg_thresh {
            return true;
        }
        (1..self.memcgs.len() as u16).any(|c| {
            self.memcgs[c as usize].wb_stat[WbStat::Dirty as usize] > 0
                && self
                    .memcg_dirty_domain(c, &g, false)
                    .is_some_and(|d| d.dirty > d.bg_thresh)
        })
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
            let background = self.over_bg_thresh();
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
        if more && (self.wb.start_all || self.over_bg_thresh()) {
            // Come back when this chunk's I/O has had time to drain.
            now + 10 * NS_PER_JIFFY
        } else {
            now + DIRTY_WRITEBACK_CENTISECS * 10_000_000
        }
    }

    /// `write_cache_pages` for up to `nr` dirty folios of a file, cyclically from its cursor,
    /// visiting only the slots tagged dirty (`tag_pages_for_writeback`).
    fn writeback_file_chunk(&mut self, file: u32, nr: u64) {
        if self.wb.cursor.len() < self.files.len() {
            self.wb.cursor.resize(self.files.len(), 0);
        }
        let size = self.files[file as usize].slots.len() as u64;
        let start = self.wb.cursor[file as usize] % size.max(1);
        if nr == 0 || self.files[file as usize].nr_dirty == 0 {
            return;
        }
        let mut written = 0;
        let mut pos = start;
        let mut wrapped = false;
        loop {
            let tags = &self.files[file as usize].dirty_tag;
            let next = if wrapped {
                tags.range(pos..start).next()
            } else {
                tags.range(pos..).next()
            };
            let Some(&idx) = next else {
                if wrapped {
                    return;
                }
                (wrapped, pos) = (true, 0);
                continue;
            };
            pos = idx + 1;
            let folio = match self.files[file as usize].slots.get(idx as usize) {
                Some(&Slot::Page(pfn)) if self.folios[pfn as usize].test(pg::DIRTY) => pfn,
                _ => {
                    self.files[file as usize].dirty_tag.remove(&idx);
                    continue;
                }
            };
            if self.folios[folio as usize].test(pg::WRITEBACK) {
                continue;
            }
            self.folio_start_writeback(folio);
            written += 1;
            if written >= nr || self.files[file as usize].nr_dirty == 0 {
                self.wb.cursor[file as usize] = (idx + 1) % size;
                return;
            }
        }
    }

    /// `folio_clear_dirty_for_io` + `folio_start_writeback` + submit: the flusher or reclaim
    /// writes a page-cache folio. Returns the completion time.
    pub fn folio_start_writeback(&mut self, pfn: Pfn) -> u64 {
        self.folio_mkclean(pfn);
        self.account_clean(pfn);
        if let Owner::File { file, index } = self.folios[pfn as usize].owner() {
            self.files[file as usize].dirty_tag.remove(&index);
        }
        let f = &mut self.folios[pfn as usize];
        f.clear(pg::DIRTY);
        f.set(pg::WRITEBACK);
        let memcg = f.memcg;
        self.wb.nr_writeback += 1;
        self.memcg_wb_stat_add(memcg, WbStat::Writeback, 1);
        // ->writepages building and submitting the bio (`submit_bio`).
        self.spend_sys(self.cfg.cost.writeback_page_ns);
        let now = self.now();
        let done = self.file_dev.submit(now, 4096, true, self.lock_floor);
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
        self.memcg_wb_stat_add(f.memcg, WbStat::Writeback, -1);
        if f.test(pg::RECLAIM) {
            self.folios[pfn as usize].clear(pg::RECLAIM);
            pol.folio_rotate_reclaimable(self, pfn);
        }
        self.folios[pfn as usize].clear(pg::WRITEBACK);
        if let Owner::Anon { pid, .. } = f.owner() {
            if pid == super::mm::ORPHAN_PID && !f.test(pg::ISOLATED) {
                self.folio_leave_lru(pol, pfn);
                self.free_folio(pfn);
            }
        }
    }
}

/// `dirty_poll_interval`: how many pages a task may dirty before it checks the limits again,
/// about the square root of the distance to the threshold.
pub fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << ((thresh - dirty).ilog2() >> 1)
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_interval_is_about_the_square_root_of_the_distance() {
        assert_eq!(dirty_poll_interval(0, 100), 8);
        assert_eq!(dirty_poll_interval(90, 100), 2);
        assert_eq!(dirty_poll_interval(100, 100), 1);
        assert_eq!(dirty_poll_interval(200, 100), 1);
        assert_eq!(dirty_poll_interval(0, 1 << 20), 1024);
    }

    /// `wb_max_pause` at HZ 250 and INIT_BW (25,600 pages/s): `bw / roundup_pow_of_two(1 +
    /// HZ/8)` = 25600 / 32 = 800, so a jiffy per 801 dirty pages plus one, at most MAX_PAUSE
    /// (50 jiffies).
    #[test]
    fn wb_max_pause_is_the_time_to_write_an_eighth_of_a_second_of_dirty_pages() {
        assert_eq!((1 + HZ / 8).next_power_of_two(), 32);
        assert_eq!(INIT_BW_PAGES, 25_600);
        assert_eq!(wb_max_pause(0, INIT_BW_PAGES), 1);
        assert_eq!(wb_max_pause(800, INIT_BW_PAGES), 1);
        assert_eq!(wb_max_pause(801, INIT_BW_PAGES), 2);
        assert_eq!(wb_max_pause(8010, INIT_BW_PAGES), 11);
        assert_eq!(wb_max_pause(40_000, INIT_BW_PAGES), 50);
        assert_eq!(
            wb_max_pause(1 << 30, INIT_BW_PAGES),
            DIRTY_MAX_PAUSE_JIFFIES
        );
        // A slow device (bw 0) pauses a jiffy per dirty page, capped.
        assert_eq!(wb_max_pause(10, 0), 11);
    }
}
