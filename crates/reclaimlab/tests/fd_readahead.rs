//! Readahead on the read() path (machine/readahead.rs, docs/model.md §2) against the kernel's
//! stated behaviour: mm/filemap.c `filemap_read` → `filemap_get_pages` calls
//! `page_cache_sync_ra` with the pages left in the request on a miss and
//! `filemap_readahead` → `page_cache_async_ra` on a PG_readahead folio; mm/readahead.c
//! `ondemand_readahead` (v6.1), `page_cache_sync_ra`/`page_cache_async_ra` (v6.12),
//! `force_page_cache_ra` (FMODE_RANDOM, or `read_ahead_kb` 0 with one page).

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::Kernel;
use reclaimlab::machine::readahead::{
    ondemand_readahead, sync_ra_v6_12, FileRa, RaBatch, IO_PAGES,
};
use reclaimlab::machine::{pg, Ctx, Machine, MachineConfig, MemcgConfig, Pfn, Slot, Vm};
use reclaimlab::policy::classic::Classic;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::micro::builtin;

const FILE_PAGES: u64 = 4096;
const KERNELS: [Kernel; 2] = [Kernel::V6_1, Kernel::V6_12];

struct Rig {
    m: Machine,
    pol: Classic,
    pid: u32,
    file: u32,
}

fn rig_with(kernel: Kernel, tune: impl FnOnce(&mut MachineConfig)) -> Rig {
    let mut cfg = MachineConfig::simple(16_384);
    cfg.kernel = kernel;
    tune(&mut cfg);
    let mut m = Machine::new(cfg).expect("machine");
    let pol = Classic::new(&m);
    let file = m.create_file("data", FILE_PAGES);
    let memcg = m.memcg_by_path("/").unwrap_or(0);
    let pid = m.create_process("reader", memcg, 0);
    Rig { m, pol, pid, file }
}

fn rig(kernel: Kernel) -> Rig {
    rig_with(kernel, |_| {})
}

impl Rig {
    /// One page of a read() with `req` pages left in its request, a second after the last
    /// access; returns whether it was a major miss.
    fn read(&mut self, page: u64, req: u32) -> bool {
        let at = self.m.ctx.now + self.m.ctx.elapsed + 1_000_000_000;
        self.read_at(page, req, at).major
    }
    fn read_at(&mut self, page: u64, req: u32, at: u64) -> Outcome {
        self.m.ctx = Ctx {
            now: at,
            cpu: 0,
            pid: self.pid,
            ..Default::default()
        };
        let out = self
            .m
            .access_request(
                &mut self.pol,
                self.pid,
                PageRef::File {
                    file: self.file,
                    page,
                },
                Op::Read,
                Via::Fd,
                req,
            )
            .expect("access completed");
        Outcome {
            major: out.major,
            iowait: self.m.ctx.times.iowait_ns,
        }
    }
    /// A whole read() of `n` pages from `page`: one access per page, `req` n, n-1, ..., 1.
    fn pread(&mut self, page: u64, n: u32) -> u64 {
        let mut majors = 0;
        for k in 0..n {
            majors += u64::from(self.read(page + u64::from(k), n - k));
        }
        majors
    }
    /// The folio caching `page`, if any.
    fn pfn(&self, page: u64) -> Option<Pfn> {
        match self.m.files[self.file as usize].slots[page as usize] {
            Slot::Page(pfn) => Some(pfn),
            _ => None,
        }
    }
    fn cached(&self, page: u64) -> bool {
        self.pfn(page).is_some()
    }
    fn cached_range(&self) -> Vec<u64> {
        (0..FILE_PAGES).filter(|&p| self.cached(p)).collect()
    }
    fn marked(&self, page: u64) -> bool {
        self.pfn(page)
            .is_some_and(|pfn| self.m.folios[pfn as usize].test(pg::READAHEAD))
    }
    fn pgpgin_pages(&self) -> u64 {
        self.m.vm.get(Vm::Pgpgin) / 4
    }
    fn ra(&mut self) -> FileRa {
        *self.m.procs[self.pid as usize].file_ra(self.file)
    }
    fn check(&self) {
        self.m.check_invariants(&self.pol).expect("invariants hold");
    }
}

struct Outcome {
    major: bool,
    iowait: u64,
}

#[test]
fn sequential_one_page_reads_ramp_the_window_from_four_pages() {
    // get_init_ra_size(1, 32) = 4 with the marker 3 from the end (async_size = size - req),
    // then each marker hit pushes a window of get_next_ra_size: 8, 16, 32, 32, ...
    for kernel in KERNELS {
        let mut r = rig(kernel);
        assert!(r.read(0, 1), "{kernel:?}: the first read is a major miss");
        assert_eq!(r.cached_range(), (0..4).collect::<Vec<_>>(), "{kernel:?}");
        assert!(r.marked(1) && !r.marked(0) && !r.marked(2));
        let ra = r.ra();
        assert_eq!((ra.start, ra.size, ra.async_size), (0, 4, 3));
        // Page 1 carries PG_readahead: the next 8 pages, marked at their start.
        assert!(!r.read(1, 1));
        assert!(!r.marked(1));
        assert_eq!(r.cached_range(), (0..12).collect::<Vec<_>>(), "{kernel:?}");
        assert!(r.marked(4));
        for (marker, end) in [(4, 28), (12, 60), (28, 92), (60, 124)] {
            for p in r.ra().start.min(marker)..=marker {
                if !r.cached(p) {
                    panic!("{kernel:?}: page {p} not read ahead");
                }
            }
            for p in (marker - 1)..=marker {
                assert!(!r.read(p, 1), "{kernel:?}: page {p} was read ahead");
            }
            assert_eq!(
                r.cached_range(),
                (0..end).collect::<Vec<_>>(),
                "{kernel:?} after the marker at {marker}"
            );
        }
        // Every page read once, two reads that waited (the first, none since).
        assert_eq!(r.pgpgin_pages(), 124);
        assert_eq!(r.m.vm.get(Vm::Pgmajfault), 0, "read() is not a fault");
        r.check();
    }
}

#[test]
fn a_random_one_page_read_reads_just_its_page() {
    for kernel in KERNELS {
        let mut r = rig(kernel);
        // Not at the start of the file, no previous read, no cached history before it: the
        // request as is.
        assert!(r.read(10, 1));
        assert_eq!(r.cached_range(), vec![10], "{kernel:?}");
        let before = r.ra();
        // Far from the last read: the same.
        assert!(r.read(2000, 1));
        assert!(r.cached(2000) && !r.cached(1999) && !r.cached(2001));
        assert_eq!(r.pgpgin_pages(), 2, "{kernel:?}");
        let after = r.ra();
        assert_eq!(
            (after.start, after.size, after.async_size),
            (before.start, before.size, before.async_size),
            "{kernel:?}: a small random read leaves the window alone"
        );
        r.check();
    }
}

/// A read() that misses pays the miss's own CPU (`major_fault_cpu_ns`: insertion, charge,
/// workingset check, the read's setup) once, as a major fault does, besides the system call
/// and the allocation, and its sleep for an asynchronous device's read (`io_schedule`:
/// `sleep_wake_ns`); on a synchronous device (pmem) it sleeps not and copies instead; a
/// read() that hits pays the system call only.
#[test]
fn a_read_miss_pays_the_miss_paths_cpu_and_a_hit_does_not() {
    use reclaimlab::machine::DeviceProfile;
    let cost = reclaimlab::machine::config::CostProfile::default();
    let mut r = rig(Kernel::V6_12);
    assert!(!r.m.cfg.file_device.is_synchronous());
    r.read_at(10, 1, 1_000_000_000);
    assert_eq!(
        r.m.ctx.times.sys_ns,
        cost.fd_syscall_ns + cost.major_fault_cpu_ns + cost.alloc_page_ns + cost.sleep_wake_ns,
        "system call, miss path, allocation, the sleep for the read"
    );
    r.read_at(10, 1, 2_000_000_000);
    assert_eq!(r.m.ctx.times.sys_ns, cost.fd_syscall_ns, "a hit");

    let pmem = DeviceProfile::pmem();
    let copy = 4096 * 1_000_000_000 / pmem.bandwidth_bytes_per_s;
    let mut r = rig_with(Kernel::V6_12, |c| c.file_device = pmem);
    let out = r.read_at(10, 1, 1_000_000_000);
    assert_eq!(out.iowait, 0);
    assert_eq!(
        r.m.ctx.times.sys_ns,
        cost.fd_syscall_ns + cost.major_fault_cpu_ns + cost.alloc_page_ns + copy,
        "system call, miss path, allocation, the copy: no sleep"
    );
}

/// `bdev_synchronous` (brd, pmem): the driver copies inside `submit_bio`, so a miss is the
/// reader's system time, no I/O wait; the same miss on an NVMe is I/O wait. Whether the miss
/// is a first read (page alone) or a readahead window's, the copy's time is charged once.
#[test]
fn a_miss_on_a_synchronous_device_is_the_readers_system_time_not_iowait() {
    use reclaimlab::machine::DeviceProfile;
    for (dev, synchronous) in [
        (DeviceProfile::pmem(), true),
        (DeviceProfile::ramdisk(), true),
        (DeviceProfile::nvme(), false),
    ] {
        assert_eq!(dev.is_synchronous(), synchronous, "{}", dev.name);
        let page_ns = 4096 * 1_000_000_000 / dev.bandwidth_bytes_per_s;
        let name = dev.name.clone();
        for (page, req) in [(10, 1), (0, 1), (2000, 8)] {
            let mut r = rig_with(Kernel::V6_12, |c| c.file_device = dev.clone());
            let pages_before = r.pgpgin_pages();
            let out = r.read_at(page, req, 1_000_000_000);
            let pages = r.pgpgin_pages() - pages_before;
            assert!(out.major && pages >= 1, "{name}: page {page} misses");
            let sys = r.m.ctx.times.sys_ns;
            if synchronous {
                assert_eq!(out.iowait, 0, "{name}: no I/O wait");
                assert!(
                    sys >= dev.read_latency_ns + pages * page_ns,
                    "{name}: {pages} pages copied by the reader in one request: sys {sys} ns"
                );
            } else {
                assert!(
                    out.iowait >= dev.read_latency_ns,
                    "{name}: waits for the device"
                );
                assert!(
                    sys < dev.read_latency_ns,
                    "{name}: the wait is not system time"
                );
            }
            r.check();
        }
    }
}

#[test]
fn a_32k_random_pread_reads_exactly_its_8_pages_in_one_request() {
    for kernel in KERNELS {
        let mut r = rig(kernel);
        r.read(10, 1);
        let reads = r.m.file_dev.reads;
        let majors = r.pread(1000, 8);
        assert_eq!(
            majors, 1,
            "{kernel:?}: only the first page waits for its read"
        );
        assert_eq!(r.m.file_dev.reads, reads + 1, "{kernel:?}: one request");
        assert!((1000..1008).all(|p| r.cached(p)));
        assert!(!r.cached(999) && !r.cached(1008), "{kernel:?}");
        assert!((1000..1008).all(|p| !r.marked(p)), "no marker: no window");
        assert_eq!(r.pgpgin_pages(), 1 + 8);
        r.check();
    }
}

#[test]
fn eight_one_page_reads_are_not_one_8_page_read() {
    // The request length matters: the same 8 pages read one page per read() are a
    // sequential stream (the second read's index follows prev_pos), which opens a window of
    // get_init_ra_size(1) = 4 and ramps it at its marker, reading past the 8 pages.
    for kernel in KERNELS {
        let mut r = rig(kernel);
        r.read(10, 1);
        for p in 1000..1008 {
            r.read(p, 1);
        }
        let read = r.cached_range().len() as u64 - 1;
        assert!(read > 8, "{kernel:?}: {read} pages");
        r.check();
    }
}

#[test]
fn a_request_longer_than_ra_pages_reads_itself_whole_and_its_marker_reads_on() {
    // A 64-page read at page 0 (start of file; max_pages = the request, io_pages assumed
    // larger): get_init_ra_size(64, 64) = 64 pages, marked half-way (v6.1 merges its own
    // marker hit into size 64, async 32; v6.12 takes size >> 1). The request then reaches
    // its marker at 32 with 32 pages left: page_cache_async_ra pushes the next 64 pages.
    for kernel in KERNELS {
        let mut r = rig(kernel);
        assert_eq!(r.pread(0, 64), 1);
        assert_eq!(r.cached_range(), (0..128).collect::<Vec<_>>(), "{kernel:?}");
        assert!(!r.marked(32) && r.marked(64), "{kernel:?}");
        assert_eq!(r.m.file_dev.reads, 2, "{kernel:?}");
        r.check();
    }
}

#[test]
fn a_request_longer_than_io_pages_reads_io_pages_at_a_time() {
    // A 1000-page read at page 0: max_pages = min(req, io_pages) = 320, so the first window is
    // 320 pages marked half-way; each marker the request reaches pushes 320 more.
    assert_eq!(IO_PAGES, 320);
    for kernel in KERNELS {
        let mut r = rig(kernel);
        assert!(r.read(0, 1000));
        assert_eq!(r.cached_range(), (0..320).collect::<Vec<_>>(), "{kernel:?}");
        assert!(r.marked(160), "{kernel:?}");
        for p in 1..1000u64 {
            assert!(!r.read(p, 1000 - p as u32), "{kernel:?}: page {p}");
        }
        // Markers at 160, 320, 640 and 960 (all before page 1000): windows to 1600.
        let cached = r.cached_range();
        assert_eq!(
            (cached.len(), cached.last()),
            (1600, Some(&1599)),
            "{kernel:?}"
        );
        // FMODE_RANDOM: force_page_cache_ra reads max(io_pages, ra_pages) of it at once.
        let mut r = rig(kernel);
        let (pid, file) = (r.pid, r.file);
        r.m.procs[pid as usize].file_ra(file).random = true;
        assert!(r.read(2000, 1000));
        assert_eq!(
            r.cached_range(),
            (2000..2320).collect::<Vec<_>>(),
            "{kernel:?}"
        );
        r.check();
    }
}

#[test]
fn a_marker_hit_starts_the_async_window_without_waiting() {
    for kernel in KERNELS {
        let mut r = rig(kernel);
        r.pread(0, 1);
        let reads = r.m.file_dev.reads;
        let t = r.m.ctx.now + r.m.ctx.elapsed + 1_000_000_000;
        let out = r.read_at(1, 1, t);
        assert!(!out.major && out.iowait == 0, "{kernel:?}");
        assert_eq!(
            r.m.file_dev.reads,
            reads + 1,
            "the next window went to the device"
        );
        assert!((4..12).all(|p| r.cached(p)) && r.marked(4));
        // A read of that window before its I/O completes waits for it (filemap_update_page).
        let soon = r.m.ctx.now + r.m.ctx.elapsed + 1_000;
        let out = r.read_at(5, 1, soon);
        assert!(
            !out.major && out.iowait > 0,
            "{kernel:?}: waited {}",
            out.iowait
        );
        r.check();
    }
}

#[test]
fn a_sync_miss_at_the_expected_index_pushes_the_window_on_6_1_and_restarts_it_on_6_12() {
    // The window 0..4 (marker at 1) was read, page 1 was since evicted, and the stream reads
    // page 1 (prev_pos one page past page 0). v6.1's ondemand_readahead takes the expected
    // index as the async callback and pushes the window to 4..12 (page 1 then is read alone
    // by filemap_create_folio); v6.12's page_cache_sync_ra has no such case: a sequential
    // miss opens a new initial window at the page.
    let mut slots = vec![Slot::Empty; 64];
    for p in [0, 2, 3] {
        slots[p] = Slot::Page(1);
    }
    let mut ra = FileRa::new(0);
    ra.start = 0;
    ra.size = 4;
    ra.async_size = 3;
    ra.prev_index = Some(1);
    let mut v61 = ra;
    assert_eq!(
        ondemand_readahead(&mut v61, &slots, 1, 1, 32, false),
        Some(RaBatch {
            index: 4,
            nr: 8,
            lookahead: 8
        })
    );
    let mut v612 = ra;
    assert_eq!(
        sync_ra_v6_12(&mut v612, &slots, 1, 1, 32),
        RaBatch {
            index: 1,
            nr: 4,
            lookahead: 3
        }
    );
}

#[test]
fn fadvise_random_reads_each_request_as_is() {
    for kernel in KERNELS {
        let mut r = rig(kernel);
        let (pid, file) = (r.pid, r.file);
        r.m.procs[pid as usize].file_ra(file).random = true;
        // A sequential stream of one-page reads: no window, a device read per page.
        for p in 0..16 {
            assert!(r.read(p, 1), "{kernel:?}: page {p}");
        }
        assert_eq!(r.cached_range(), (0..16).collect::<Vec<_>>());
        assert_eq!(r.m.file_dev.reads, 16);
        // A 32 KiB read: force_page_cache_ra reads the 8 pages in one request.
        assert_eq!(r.pread(500, 8), 1);
        assert_eq!(r.m.file_dev.reads, 17);
        assert_eq!(r.pgpgin_pages(), 24);
        assert!((0..FILE_PAGES).all(|p| !r.marked(p)));
        r.check();
    }
}

#[test]
fn read_ahead_kb_0_reads_one_page_per_miss_even_in_a_long_request() {
    // page_cache_sync_ra forces a one-page read when ra_pages is 0 (the validation guests).
    for kernel in KERNELS {
        let mut r = rig_with(kernel, |c| c.read_ahead_kb = 0);
        assert_eq!(r.pread(0, 8), 8, "{kernel:?}");
        assert_eq!(r.m.file_dev.reads, 8);
        assert_eq!(r.cached_range(), (0..8).collect::<Vec<_>>());
        r.check();
    }
}

#[test]
fn fd_readahead_in_a_full_memcg_never_ooms_and_stays_under_its_limit() {
    // __GFP_NORETRY readahead charges in a 48-page memcg, reads of 8 pages at strides.
    for kernel in KERNELS {
        let mut cfg = MachineConfig::simple(16_384);
        cfg.kernel = kernel;
        cfg.memcgs = vec![MemcgConfig::new("/small").with_max(48)];
        let mut m = Machine::new(cfg).expect("machine");
        let mut pol = Classic::new(&m);
        let file = m.create_file("data", FILE_PAGES);
        let memcg = m.memcg_by_path("/small").expect("memcg");
        let pid = m.create_process("reader", memcg, 0);
        let mut t = 0;
        for i in 0..200u64 {
            // Half sequential, half scattered 8-page requests.
            let base = if i % 2 == 0 {
                i * 4
            } else {
                (i * 389) % (FILE_PAGES - 8)
            };
            for k in 0..8u32 {
                t += 1_000_000;
                m.ctx = Ctx {
                    now: t,
                    cpu: 0,
                    pid,
                    ..Default::default()
                };
                let page = PageRef::File {
                    file,
                    page: base + u64::from(k),
                };
                let out = m.access_request(&mut pol, pid, page, Op::Read, Via::Fd, 8 - k);
                assert!(out.is_some(), "access {i}/{k} failed");
                assert!(m.memcgs[memcg as usize].usage <= 48);
            }
            m.check_invariants(&pol).expect("invariants");
        }
        assert_eq!(m.vm.get(Vm::OomKill), 0);
    }
}

fn go(name: &str, spec: PolicySpec, read_ahead_kb: u32) -> reclaimlab::metrics::RunResult {
    let mut scn = builtin(name, 1.0).expect("scenario");
    scn.machine.read_ahead_kb = read_ahead_kb;
    run(
        &scn,
        spec,
        &RunOptions {
            seed: 7,
            ..Default::default()
        },
    )
    .expect("run")
}

#[test]
fn seq_scan_waits_for_a_read_once_per_window_not_once_per_page() {
    for spec in [
        PolicySpec::classic(Kernel::V6_1),
        PolicySpec::classic(Kernel::V6_12),
    ] {
        let off = go("seq-scan", spec, 0);
        let on = go("seq-scan", spec, 128);
        // Without readahead every page of both passes is a major miss; with it, only each
        // pass's first read waits (the asynchronous windows stay ahead of the reader), and
        // every page is still read from the device once per pass.
        assert_eq!(off.major, off.accesses, "{spec:?}");
        assert!(
            on.major * 32 <= off.major / 1000,
            "{spec:?}: {} majors",
            on.major
        );
        assert_eq!(on.vmstat["pgpgin"], off.vmstat["pgpgin"], "{spec:?}");
        assert!(on.ops_per_sec > 2.0 * off.ops_per_sec, "{spec:?}");
    }
}

#[test]
fn a_dirty_folio_that_reclaim_marked_pg_reclaim_starts_a_readahead_when_read() {
    // PG_readahead is PG_reclaim's bit (include/linux/page-flags.h). shrink_folio_list and
    // MGLRU's sort_folio before the 2026 series set PG_reclaim on the dirty file folios they
    // meet; a read of such a folio finds "PG_readahead" and page_cache_async_ra reads a window
    // after the first hole past it (the "marked folio without valid readahead state" case),
    // unless the folio is under writeback ("Same bit is used for PG_readahead and PG_reclaim").
    for kernel in KERNELS {
        let mut r = rig(kernel);
        // A standalone 32 KiB read: the request as is, no marker, the state untouched.
        assert_eq!(r.pread(500, 8), 1, "{kernel:?}");
        assert_eq!(r.cached_range(), (500..508).collect::<Vec<_>>());
        // The page is dirtied, and reclaim marks it PG_reclaim (activate_locked).
        let p = r.pfn(504).expect("cached");
        r.m.folio_mark_dirty(p);
        r.m.folios[p as usize].set(pg::RECLAIM);
        assert!(r.marked(504), "one bit");
        let reads = r.m.file_dev.reads;
        assert!(!r.read(504, 1), "{kernel:?}: a hit");
        assert!(!r.marked(504), "{kernel:?}: the mark is cleared");
        assert_eq!(r.m.file_dev.reads, reads + 1, "{kernel:?}: one window");
        // The first hole is 508: size 508 - 504 + 1 = 5, get_next_ra_size doubles it.
        assert_eq!(
            r.cached_range(),
            (500..518).collect::<Vec<_>>(),
            "{kernel:?}"
        );
        assert!(r.marked(508), "{kernel:?}: the window's marker");
        r.check();

        // Under writeback the bit is PG_reclaim's: no readahead, and it stays set.
        let mut r = rig(kernel);
        r.pread(500, 8);
        let p = r.pfn(504).expect("cached");
        r.m.folio_mark_dirty(p);
        r.m.folio_start_writeback(p);
        r.m.folios[p as usize].set(pg::RECLAIM);
        let reads = r.m.file_dev.reads;
        assert!(!r.read(504, 1), "{kernel:?}");
        assert_eq!(r.m.file_dev.reads, reads, "{kernel:?}: no readahead");
        assert!(r.m.folios[p as usize].test(pg::RECLAIM));
        assert_eq!(r.cached_range(), (500..508).collect::<Vec<_>>());
    }
}
