//! Readahead and fault-around of mapped files (mm/readahead.c, mm/filemap.c, mm/memory.c), for
//! order-0 folios (ext4 page cache before v6.16 has no large folios; docs/model.md §2):
//! - a read fault first maps the cached neighbours of its 64 KiB window (`do_fault_around`,
//!   `filemap_map_pages`), young as x86 creates them;
//! - a page-cache miss reads around the faulting page (`do_sync_mmap_readahead`: ra_pages
//!   centred on it, unless `mmap_miss` says the file misses far more than it hits), or ahead of
//!   it under MADV_SEQUENTIAL (`page_cache_sync_ra`); MADV_RANDOM reads the page alone;
//! - a fault on a cached folio marked PG_readahead starts the next window asynchronously
//!   (`do_async_mmap_readahead`, `page_cache_async_ra`).
//!
//! read() through a file descriptor reads ahead as `filemap_read` does (`filemap_get_pages`):
//! a page-cache miss calls `page_cache_sync_ra` with the pages left in the request
//! (`TraceRecord::req`), a cached page marked PG_readahead `page_cache_async_ra`
//! (`filemap_readahead`); FMODE_RANDOM (POSIX_FADV_RANDOM) reads the request as is
//! (`force_page_cache_ra`), and `read_ahead_kb` 0 one page (docs/model.md §2).

use super::mm::vm;
use super::{pg, Folio, Machine, Owner, Pfn, Slot, Vm};
use crate::behaviour::Behaviour;
use crate::consts::MMAP_LOTSAMISS;
use crate::policy::Policy;

/// `struct file_ra_state` of one open file, and the model's record of its last readahead I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileRa {
    pub file: u32,
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    pub mmap_miss: u32,
    /// `prev_pos >> PAGE_SHIFT`: the page after the last byte read() copied (reads are of
    /// whole pages, so one past the last page read; None: `prev_pos` = -1).
    pub prev_index: Option<u64>,
    /// FMODE_RANDOM of the open file (POSIX_FADV_RANDOM): no readahead on read().
    pub random: bool,
    /// Pages `[.0, .1)` were last read ahead and are up to date at `.2` (ns). Until then a
    /// fault on one waits for it (`folio_lock` on a folio under read), and fault-around skips
    /// them (`next_uptodate_page`).
    pub inflight: (u64, u64, u64),
}

impl FileRa {
    /// `file_ra_state_init`: no window yet, `prev_pos` = -1.
    pub fn new(file: u32) -> FileRa {
        FileRa {
            file,
            start: 0,
            size: 0,
            async_size: 0,
            mmap_miss: 0,
            prev_index: None,
            random: false,
            inflight: (0, 0, 0),
        }
    }

    /// When page `index`, read ahead by this file and still under read at `now`, is up to date.
    pub fn reading(&self, index: u64, now: u64) -> Option<u64> {
        let (lo, hi, ready) = self.inflight;
        (index >= lo && index < hi && ready > now).then_some(ready)
    }
}

/// `bdi->io_pages` (the queue's `max_sectors_kb` / 4): the block layer's default cap of
/// `max_sectors_kb`, 1280 KiB (`BLK_DEF_MAX_SECTORS` 2560 sectors in 6.1,
/// `BLK_DEF_MAX_SECTORS_CAP` from 6.8), which NVMe and virtio-blk queues keep.
pub const IO_PAGES: u64 = 320;

/// `ractl_max_pages` (6.12; 6.1's `ondemand_readahead` computes the same): a request above
/// `ra_pages` may read up to itself, at most `io_pages`.
pub fn ractl_max_pages(ra_pages: u64, req: u64) -> u64 {
    if req > ra_pages && IO_PAGES > ra_pages {
        req.min(IO_PAGES)
    } else {
        ra_pages
    }
}

/// `get_init_ra_size`: the first window of a stream, from the request's size.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let n = size.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// One readahead batch (`do_page_cache_ra`): `nr` pages from `index`, PG_readahead on the
/// page `lookahead` pages before its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaBatch {
    pub index: u64,
    pub nr: u64,
    pub lookahead: u64,
}

impl RaBatch {
    /// The batch of the window `ra` now describes (`page_cache_ra_order` → `do_page_cache_ra`).
    fn of_window(ra: &FileRa) -> RaBatch {
        RaBatch {
            index: ra.start,
            nr: ra.size,
            lookahead: ra.async_size,
        }
    }
    /// A read of the request as is (`do_page_cache_ra` of `req` pages, no marker): a small
    /// random read, leaving the state untouched.
    fn as_is(index: u64, req: u64) -> RaBatch {
        RaBatch {
            index,
            nr: req,
            lookahead: 0,
        }
    }
}

fn cached(slots: &[Slot], i: u64) -> bool {
    matches!(slots.get(i as usize), Some(Slot::Page(_)))
}

/// `page_cache_next_miss`: the first index from `index` (at most `max_scan` looked at) without
/// a folio. With no gap, v6.1 returns the last index looked at, v6.12 `index + max_scan`.
pub fn page_cache_next_miss(slots: &[Slot], index: u64, max_scan: u64, v6_12: bool) -> u64 {
    let mut i = index;
    for n in 0..max_scan {
        if n > 0 {
            i += 1;
        }
        if !cached(slots, i) {
            return i;
        }
    }
    if v6_12 {
        index + max_scan
    } else {
        i
    }
}

/// `page_cache_prev_miss`: the first index at or below `index` (at most `max_scan` looked at)
/// without a folio; `u64::MAX` (ULONG_MAX) when the scan ran off the start of the file.
pub fn page_cache_prev_miss(slots: &[Slot], index: u64, max_scan: u64) -> u64 {
    let mut i = index;
    for n in 0..max_scan {
        if n > 0 {
            i = i.wrapping_sub(1);
        }
        if i == u64::MAX || !cached(slots, i) {
            return i;
        }
    }
    i
}

/// v6.1 `ondemand_readahead` (`folio`: the call is for a PG_readahead hit), order 0.
pub fn ondemand_readahead(
    ra: &mut FileRa,
    slots: &[Slot],
    index: u64,
    req_size: u64,
    max: u64,
    marker_hit: bool,
) -> Option<RaBatch> {
    let initial = |ra: &mut FileRa| {
        ra.start = index;
        ra.size = get_init_ra_size(req_size, max);
        ra.async_size = if ra.size > req_size {
            ra.size - req_size
        } else {
            ra.size
        };
    };
    let expected = (ra.start + ra.size).wrapping_sub(ra.async_size);
    if index == 0 {
        initial(ra);
    } else if index == expected || index == ra.start + ra.size {
        push_window(ra, max);
    } else if marker_hit {
        window_at_next_miss(ra, slots, index, req_size, max, false)?;
    } else if req_size > max || ra.prev_index.is_some_and(|p| index.wrapping_sub(p) <= 1) {
        // An oversize read, or a sequential miss (the next page, or the same one again).
        initial(ra);
    } else {
        // try_context_readahead: a stream leaves its history in the cache.
        let head = page_cache_prev_miss(slots, index - 1, max);
        let mut size = (index - 1).wrapping_sub(head);
        if size <= req_size {
            // A small random read: as is, the state untouched.
            return Some(RaBatch::as_is(index, req_size));
        }
        if size >= index {
            size *= 2;
        }
        ra.start = index;
        ra.size = (size + req_size).min(max);
        ra.async_size = 1;
    }
    // Will this read hit its own marker? Then merge the next window now.
    if index == ra.start && ra.size == ra.async_size {
        let add = get_next_ra_size(ra.size, max);
        if ra.size + add <= max {
            ra.async_size = add;
            ra.size += add;
        } else {
            ra.size = max;
            ra.async_size = max >> 1;
        }
    }
    Some(RaBatch::of_window(ra))
}

/// v6.12 `page_cache_sync_ra` (readahead on, no FMODE_RANDOM), order 0.
pub fn sync_ra_v6_12(
    ra: &mut FileRa,
    slots: &[Slot],
    index: u64,
    req_count: u64,
    max: u64,
) -> RaBatch {
    let sequential = ra.prev_index.is_some_and(|p| index.wrapping_sub(p) <= 1);
    if index == 0 || req_count > max || sequential {
        ra.start = index;
        ra.size = get_init_ra_size(req_count, max);
        ra.async_size = if ra.size > req_count {
            ra.size - req_count
        } else {
            ra.size >> 1
        };
        return RaBatch::of_window(ra);
    }
    let miss = page_cache_prev_miss(slots, index - 1, max);
    let mut contig = index.wrapping_sub(miss).wrapping_sub(1);
    if contig <= req_count {
        return RaBatch::as_is(index, req_count);
    }
    if miss == u64::MAX {
        contig *= 2;
    }
    ra.start = index;
    ra.size = (contig + req_count).min(max);
    ra.async_size = 1;
    RaBatch::of_window(ra)
}

/// v6.12 `page_cache_async_ra` after the PG_readahead folio was found and cleared, order 0.
pub fn async_ra_v6_12(
    ra: &mut FileRa,
    slots: &[Slot],
    index: u64,
    req_count: u64,
    max: u64,
) -> Option<RaBatch> {
    let expected = (ra.start + ra.size).wrapping_sub(ra.async_size);
    if index == expected {
        push_window(ra, max);
    } else {
        window_at_next_miss(ra, slots, index, req_count, max, true)?;
    }
    Some(RaBatch::of_window(ra))
}

/// The sequential case of `ondemand_readahead` and `page_cache_async_ra`: the next window
/// right after the current one, ramping up, all of it asynchronous.
fn push_window(ra: &mut FileRa, max: u64) {
    ra.start += ra.size;
    ra.size = ra.size.max(get_next_ra_size(ra.size, max));
    ra.async_size = ra.size;
}

/// A marked folio without valid state (interleaved streams): the page cache says how far the
/// stream got, and the window starts at its first gap after `index`. None when there is no
/// gap within `max` pages.
fn window_at_next_miss(
    ra: &mut FileRa,
    slots: &[Slot],
    index: u64,
    req: u64,
    max: u64,
    v6_12: bool,
) -> Option<()> {
    let start = page_cache_next_miss(slots, index + 1, max, v6_12);
    if start == 0 || start - index > max {
        return None;
    }
    ra.start = start;
    ra.size = get_next_ra_size(start - index + req, max);
    ra.async_size = ra.size;
    Some(())
}

impl Machine {
    /// The file device's `bdi->ra_pages` (each open file's `f_ra.ra_pages`).
    fn ra_pages(&self) -> u64 {
        self.cfg.read_ahead_kb as u64 / 4
    }

    /// `fault_around_pages`.
    fn fault_around_pages(&self) -> u64 {
        self.cfg.fault_around_bytes / 4096
    }

    /// `do_read_fault`'s `should_fault_around` and `do_fault_around` → `filemap_map_pages`:
    /// maps every cached, up-to-date folio of the aligned window around `index` whose PTE is
    /// none, young (x86's protections carry the accessed bit). Returns whether the faulting
    /// page itself was mapped (VM_FAULT_NOPAGE: the fault is done).
    pub(super) fn do_fault_around(&mut self, pid: u32, vma: u16, file: u32, index: u64) -> bool {
        let nr = self.fault_around_pages();
        if nr <= 1 {
            return false;
        }
        let from = index & !(nr - 1);
        let end = (from + nr)
            .min(self.files[file as usize].size_pages)
            .min(self.procs[pid as usize].vmas[vma as usize].ptes.len() as u64);
        let now = self.now();
        let v6_12 = self.kernel.has(Behaviour::ReadaheadRework);
        let ra = *self.procs[pid as usize].file_ra(file);
        let (mut found, mut mapped, mut target) = (0u32, 0u64, false);
        for i in from..end {
            let Slot::Page(pfn) = self.files[file as usize].slots[i as usize] else {
                continue;
            };
            // next_uptodate_page: not a folio under read, nor one marked PG_readahead.
            let f = self.folios[pfn as usize];
            if f.test(pg::READAHEAD) || ra.reading(i, now).is_some() {
                continue;
            }
            // v6.12 (filemap_map_folio_range): workingset folios earn no mmap_miss credit.
            if !(v6_12 && f.test(pg::WORKINGSET)) {
                found += 1;
            }
            if !self.procs[pid as usize].vmas[vma as usize].ptes[i as usize].is_none() {
                continue;
            }
            self.map_folio(pid, vma, i, pfn, false);
            self.procs[pid as usize].vmas[vma as usize].touch(i, false);
            target |= i == index;
            mapped += 1;
        }
        if self
            .kernel
            .has(Behaviour::FaultAroundCreditsFaultingFolioOnly)
        {
            found = self.fault_around_credit_7x(pid, vma, file, index, target);
        }
        let ra = self.procs[pid as usize].file_ra(file);
        ra.mmap_miss = ra.mmap_miss.saturating_sub(found);
        let around = mapped - target as u64;
        self.spend_sys(around * self.cfg.cost.fault_around_page_ns);
        target
    }

    /// 7.x `filemap_map_pages`'s `mmap_miss` credit: one, for the faulting folio when
    /// fault-around mapped it, unless it is workingset or the mapping is VM_SEQ_READ or
    /// VM_EXEC. Simplified: no FAULT_FLAG_TRIED retries to exclude (the model does not retry
    /// faults).
    fn fault_around_credit_7x(
        &self,
        pid: u32,
        vma: u16,
        file: u32,
        index: u64,
        served: bool,
    ) -> u32 {
        let flags = self.procs[pid as usize].vmas[vma as usize].flags;
        if !served || flags & (vm::SEQ_READ | vm::EXEC) != 0 {
            return 0;
        }
        match self.files[file as usize].slots[index as usize] {
            Slot::Page(pfn) if !self.folios[pfn as usize].test(pg::WORKINGSET) => 1,
            _ => 0,
        }
    }

    /// `do_sync_mmap_readahead`: what a page-cache miss at `index` reads with it (None: the
    /// page alone).
    fn do_sync_mmap_readahead(
        &mut self,
        pid: u32,
        vma: u16,
        file: u32,
        index: u64,
    ) -> Option<RaBatch> {
        let flags = self.procs[pid as usize].vmas[vma as usize].flags;
        let max = self.ra_pages();
        if flags & vm::RAND_READ != 0 || max == 0 {
            return None;
        }
        let v6_12 = self.kernel.has(Behaviour::ReadaheadRework);
        let slots = &self.files[file as usize].slots;
        let ra = self.procs[pid as usize].file_ra(file);
        if flags & vm::SEQ_READ != 0 {
            return if v6_12 {
                Some(sync_ra_v6_12(ra, slots, index, max, max))
            } else {
                ondemand_readahead(ra, slots, index, max, max, false)
            };
        }
        if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
            ra.mmap_miss += 1;
        }
        if ra.mmap_miss > MMAP_LOTSAMISS {
            return None;
        }
        // mmap read-around: ra_pages centred on the fault, a quarter of it the lookahead.
        ra.start = index.saturating_sub(max / 2);
        ra.size = max;
        ra.async_size = max / 4;
        Some(RaBatch::of_window(ra))
    }

    /// `filemap_fault` on a page-cache miss of a mapped file: the folio is allocated and
    /// charged as any fault's (it may yield), then read with its readahead batch; the task
    /// waits for the request that holds it. Returns the folio, on the LRU, not yet mapped.
    pub(super) fn filemap_fault_miss(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        file: u32,
        index: u64,
    ) -> Option<Pfn> {
        let pfn = self.new_folio(pol, pid, Owner::File { file, index })?;
        if let Some(cached) = self.raced_into_page_cache(file, index, pfn) {
            return Some(cached);
        }
        self.page_cache_add(pol, file, index, pfn, true);
        let now = self.now();
        let batch = self.do_sync_mmap_readahead(pid, vma, file, index);
        let done = match batch {
            Some(b) => self.page_cache_ra_unbounded(pol, pid, file, b, Some(index)),
            None => self.read_pages(pid, file, index, 1),
        };
        // The folio joins the LRU after its batch: unlike the kernel, where it is locked and
        // referenced while the batch allocates, the model has no lock that keeps reclaim off it.
        self.folio_add_lru(pol, pfn);
        let start = self.now().max(now);
        self.wait_for_folio_read(pfn, start, done);
        Some(pfn)
    }

    /// `filemap_fault` finding the folio cached: a folio still under this file's readahead
    /// is waited for, then `do_async_mmap_readahead` (after the folio is mapped, so that
    /// its batch's reclaim cannot take it: the kernel holds a reference meanwhile).
    pub(super) fn filemap_fault_hit(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        vma: u16,
        file: u32,
        index: u64,
        pfn: Pfn,
    ) {
        self.wait_if_under_read(pid, file, index, pfn);
        let flags = self.procs[pid as usize].vmas[vma as usize].flags;
        let max = self.ra_pages();
        if flags & vm::RAND_READ != 0 || max == 0 {
            return;
        }
        let ra = self.procs[pid as usize].file_ra(file);
        ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
        self.page_cache_async_ra(pol, pid, file, index, pfn, max);
    }

    /// `page_cache_async_ra` on folio `pfn` at `index`, for a request of `req` pages: if
    /// readahead is on and the folio is marked PG_readahead (and not under writeback: the bit
    /// is then PG_reclaim's), the mark is cleared and the next window read without waiting.
    fn page_cache_async_ra(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        pfn: Pfn,
        req: u64,
    ) {
        let ra_pages = self.ra_pages();
        let f = self.folios[pfn as usize];
        if ra_pages == 0 || !f.test(pg::READAHEAD) || f.test(pg::WRITEBACK) {
            return;
        }
        self.folios[pfn as usize].clear(pg::READAHEAD);
        let max = ractl_max_pages(ra_pages, req);
        let slots = &self.files[file as usize].slots;
        let ra = self.procs[pid as usize].file_ra(file);
        let batch = if self.kernel.has(Behaviour::ReadaheadRework) {
            async_ra_v6_12(ra, slots, index, req, max)
        } else {
            ondemand_readahead(ra, slots, index, req, max, true)
        };
        if let Some(b) = batch {
            self.page_cache_ra_unbounded(pol, pid, file, b, None);
        }
    }

    /// The wait of a task that needs folio `pfn`, from `since` until its read completes at
    /// `done` (`folio_wait_bit_common`): I/O wait, and a memory stall when the read is a
    /// workingset refault's.
    fn wait_for_folio_read(&mut self, pfn: Pfn, since: u64, done: u64) {
        if done > since {
            self.spend_iowait(done - since);
        }
        let workingset = self.folios[pfn as usize].test(pg::WORKINGSET);
        self.psi_wait(since, done.max(since), workingset, true);
    }

    /// A folio found cached while this file's readahead still reads it is waited for
    /// (`filemap_fault`'s and `filemap_update_page`'s lock of a folio under read).
    fn wait_if_under_read(&mut self, pid: u32, file: u32, index: u64, pfn: Pfn) {
        let now = self.now();
        if let Some(ready) = self.procs[pid as usize].file_ra(file).reading(index, now) {
            self.wait_for_folio_read(pfn, now, ready);
        }
    }

    /// `page_cache_sync_ra` (`page_cache_sync_readahead`) from `filemap_get_pages`: what a
    /// read() missing page `index`, with `req` pages left in its request, reads with it.
    /// None: the page alone (`read_ahead_kb` 0 forces a one-page read; FMODE_RANDOM reads
    /// the request as is, which for one page is the page alone).
    fn page_cache_sync_readahead(
        &mut self,
        pid: u32,
        file: u32,
        index: u64,
        req: u64,
    ) -> Option<RaBatch> {
        let ra_pages = self.ra_pages();
        let req = req.max(1);
        let slots = &self.files[file as usize].slots;
        let ra = self.procs[pid as usize].file_ra(file);
        if ra_pages == 0 {
            return None;
        }
        // force_page_cache_ra: the request as is (at most max(io_pages, ra_pages) pages; its
        // 2 MiB chunks are contiguous), no window, no marker.
        if ra.random {
            let nr = req.min(IO_PAGES.max(ra_pages));
            return (nr > 1).then_some(RaBatch::as_is(index, nr));
        }
        let max = ractl_max_pages(ra_pages, req);
        if self.kernel.has(Behaviour::ReadaheadRework) {
            Some(sync_ra_v6_12(ra, slots, index, req, max))
        } else {
            ondemand_readahead(ra, slots, index, req, max, false)
        }
    }

    /// `filemap_read` → `filemap_get_pages` on a page-cache miss of a read() with `req` pages
    /// left in its request: the folio is allocated and charged, then read with its
    /// `page_cache_sync_ra` batch; the task waits for the request that holds it. Returns the
    /// folio, on the LRU. Without a batch it is the one-page read of `read_ahead_kb` 0.
    /// The miss's own CPU (`major_fault_cpu_ns`, as a major fault's: the page-cache
    /// insertion, the memcg charge, the workingset check, the read's setup) is the task's
    /// system time.
    pub(super) fn filemap_read_miss(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        pfn: Pfn,
        req: u64,
    ) {
        self.spend_sys(self.cfg.cost.major_fault_cpu_ns);
        let now = self.now();
        match self.page_cache_sync_readahead(pid, file, index, req) {
            Some(b) => {
                let done = self.page_cache_ra_unbounded(pol, pid, file, b, Some(index));
                // As for a fault: the folio joins the LRU after its batch.
                self.folio_add_lru(pol, pfn);
                let start = self.now().max(now);
                self.wait_for_folio_read(pfn, start, done);
            }
            None => {
                // filemap_create_folio → filemap_read_folio: one 4 KiB read. Its pgpgin goes
                // to the reader's memcg, which the folio was just charged to (`new_folio`).
                self.folio_add_lru(pol, pfn);
                let done = self.read_pages(pid, file, index, 1);
                let since = self.now();
                self.wait_for_folio_read(pfn, since, done);
            }
        }
    }

    /// `filemap_get_pages` finding page `index` of a read() cached: a folio still under
    /// this file's readahead is waited for (`filemap_update_page`).
    pub(super) fn filemap_read_wait(&mut self, pid: u32, file: u32, index: u64, pfn: Pfn) {
        self.wait_if_under_read(pid, file, index, pfn);
    }

    /// `filemap_readahead` → `page_cache_async_ra`: a read() found page `index` cached and
    /// marked PG_readahead, with `req` pages left in its request: the mark is cleared and the
    /// next window read without waiting.
    pub(super) fn filemap_readahead(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
        pfn: Pfn,
        req: u64,
    ) {
        self.page_cache_async_ra(pol, pid, file, index, pfn, req.max(1));
    }

    /// `do_page_cache_ra` → `page_cache_ra_unbounded` → `read_pages`: allocates the batch's
    /// missing folios (`readahead_gfp_mask`: __GFP_NORETRY), marks PG_readahead, and submits
    /// one read per run of contiguous new folios. `target`, already in the page cache, is
    /// read with its run. Returns when the target's read completes (0 without a target).
    fn page_cache_ra_unbounded(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        b: RaBatch,
        target: Option<u64>,
    ) -> u64 {
        let size = self.files[file as usize].size_pages;
        if b.index >= size {
            return match target {
                Some(t) => self.read_pages(pid, file, t, 1),
                None => 0,
            };
        }
        let nr = b.nr.min(size - b.index);
        let mark = nr.checked_sub(b.lookahead);
        let stop_at_enomem = self.kernel.has(Behaviour::ReadaheadRework);
        // The batch's reclaim runs to its end: a readahead is not a point where the engine
        // lets another task in (docs/model.md §1).
        let may_yield = std::mem::replace(&mut self.ctx.may_yield, false);
        let (mut run, mut target_done, mut last_done) = (None::<(u64, u64)>, 0, 0);
        let mut flush = |m: &mut Machine, run: &mut Option<(u64, u64)>| {
            if let Some((lo, n)) = run.take() {
                let done = m.read_pages(pid, file, lo, n);
                if target.is_some_and(|t| t >= lo && t < lo + n) {
                    target_done = done;
                }
                last_done = last_done.max(done);
            }
        };
        for i in 0..nr {
            let idx = b.index + i;
            let new = if target == Some(idx) {
                true
            } else if cached(&self.files[file as usize].slots, idx) {
                false
            } else if let Some(pfn) = self.readahead_folio(pol, pid, file, idx) {
                if mark == Some(i) {
                    self.folios[pfn as usize].set(pg::READAHEAD);
                }
                true
            } else if cached(&self.files[file as usize].slots, idx) {
                // Read by another task while this one reclaimed for it.
                false
            } else if stop_at_enomem {
                break;
            } else {
                false
            };
            if !new {
                flush(self, &mut run);
                continue;
            }
            run = Some(match run {
                Some((lo, n)) => (lo, n + 1),
                None => (idx, 1),
            });
        }
        flush(self, &mut run);
        // A batch cut short before the target still reads the target.
        if let Some(t) = target.filter(|_| target_done == 0) {
            target_done = self.read_pages(pid, file, t, 1);
        }
        self.ctx.may_yield = may_yield;
        let ra = self.procs[pid as usize].file_ra(file);
        ra.inflight = (b.index, b.index + nr, last_done.max(target_done));
        target_done
    }

    /// `read_pages` → `submit_bio`: one read of the `n` contiguous pages of `file` from
    /// `index`; returns its completion. PGPGIN counts each page (in KiB). On a synchronous
    /// device (`bdev_synchronous`: brd, pmem) the submitting task copies the data itself, so
    /// it returns with the read done; a workingset refault among the pages makes that time a
    /// memory stall (`read_pages`'s `psi_memstall_enter`).
    fn read_pages(&mut self, pid: u32, file: u32, index: u64, n: u64) -> u64 {
        let done = self.submit_file_read(file, index, n);
        let memcg = self.procs[pid as usize].memcg;
        self.count(memcg, Vm::Pgpgin, 4 * n);
        done
    }

    /// `submit_bio` of a read of the `n` pages of `file` from `index`; returns its completion.
    /// A synchronous device's driver (`pmem_submit_bio`, `brd_submit_bio`) copies before it
    /// returns: the submitting task's system time.
    fn submit_file_read(&mut self, file: u32, index: u64, n: u64) -> u64 {
        let now = self.now();
        let done = self.file_dev.submit(now, n * 4096, false, self.lock_floor);
        if self.file_dev.profile.is_synchronous() && done > now {
            let workingset = self.any_workingset(file, index, n);
            self.spend_sys(done - now);
            self.psi_wait(now, done, workingset, false);
        }
        done
    }

    /// Whether a folio of the `n` cached pages of `file` from `index` is a workingset refault's.
    fn any_workingset(&self, file: u32, index: u64, n: u64) -> bool {
        let slots = &self.files[file as usize].slots;
        (index..index + n).any(|i| match slots.get(i as usize) {
            Some(&Slot::Page(pfn)) => self.folios[pfn as usize].test(pg::WORKINGSET),
            _ => false,
        })
    }

    /// One folio of a readahead batch: allocated and charged without retries (a failure ends
    /// or skips it), added to the page cache (refault check) and the LRU.
    fn readahead_folio(
        &mut self,
        pol: &mut dyn Policy,
        pid: u32,
        file: u32,
        index: u64,
    ) -> Option<Pfn> {
        let memcg = self.procs[pid as usize].memcg;
        let node = self.local_node();
        let pfn = self.alloc_page_noretry(pol, node)?;
        let frame_node = self.folios[pfn as usize].node;
        self.folios[pfn as usize] = Folio::new(Owner::File { file, index }, memcg, frame_node, 0);
        if !self.try_charge_noretry(pol, memcg, 1) {
            self.folios[pfn as usize] = Folio::free_on(frame_node);
            self.nodes[frame_node as usize].free.push(pfn);
            return None;
        }
        // Another task may have read the page while this one reclaimed (it ran nested).
        if self.raced_into_page_cache(file, index, pfn).is_some() {
            return None;
        }
        self.page_cache_add(pol, file, index, pfn, true);
        self.folio_add_lru(pol, pfn);
        Some(pfn)
    }
}
