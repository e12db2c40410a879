//! Readahead and fault-around of mapped files (machine/readahead.rs) against the kernel's
//! stated behaviour: mm/readahead.c (`get_init_ra_size`, `get_next_ra_size`,
//! `ondemand_readahead` in v6.1, `page_cache_sync_ra`/`page_cache_async_ra` in v6.12,
//! `page_cache_next_miss`), mm/filemap.c (`do_sync_mmap_readahead`,
//! `do_async_mmap_readahead`, `filemap_map_pages`) and mm/memory.c (`do_fault_around`).

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::Kernel;
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::readahead::{
    async_ra_v6_12, get_init_ra_size, get_next_ra_size, ondemand_readahead, page_cache_next_miss,
    page_cache_prev_miss, sync_ra_v6_12, FileRa, RaBatch,
};
use reclaimlab::machine::{pg, Ctx, Machine, MachineConfig, MemcgConfig, Slot, Vm};
use reclaimlab::policy::classic::Classic;

const FILE_PAGES: u64 = 4096;

fn batch(index: u64, nr: u64, lookahead: u64) -> Option<RaBatch> {
    Some(RaBatch {
        index,
        nr,
        lookahead,
    })
}

#[test]
fn window_sizes_ramp_up_as_the_kernel_computes_them() {
    // max = 32 pages (read_ahead_kb 128): x4 up to max/32, x2 up to max/4, else max.
    assert_eq!(get_init_ra_size(1, 32), 4);
    assert_eq!(get_init_ra_size(3, 32), 8);
    assert_eq!(get_init_ra_size(8, 32), 16);
    assert_eq!(get_init_ra_size(9, 32), 32);
    // Next: x4 below max/16, x2 up to max/2, else max.
    assert_eq!(get_next_ra_size(1, 32), 4);
    assert_eq!(get_next_ra_size(4, 32), 8);
    assert_eq!(get_next_ra_size(16, 32), 32);
    assert_eq!(get_next_ra_size(32, 32), 32);
}

#[test]
fn a_sequential_stream_marks_the_start_of_each_new_window() {
    let empty = vec![Slot::Empty; 1024];
    for v6_12 in [false, true] {
        let mut ra = FileRa::new(0);
        // MADV_SEQUENTIAL at page 0: page_cache_sync_ra(ra_pages = 32).
        let first = if v6_12 {
            Some(sync_ra_v6_12(&mut ra, &empty, 0, 32, 32))
        } else {
            ondemand_readahead(&mut ra, &empty, 0, 32, 32, false)
        };
        // v6.1 merges its own marker hit (32 pages, marker at 16); v6.12 marks half-way too.
        assert_eq!(first, batch(0, 32, 16), "v6_12 {v6_12}");
        // The marker at 16 is expected: the next window starts at 32, marked at its start.
        let second = if v6_12 {
            async_ra_v6_12(&mut ra, &empty, 16, 32, 32)
        } else {
            ondemand_readahead(&mut ra, &empty, 16, 32, 32, true)
        };
        assert_eq!(second, batch(32, 32, 32), "v6_12 {v6_12}");
        let third = if v6_12 {
            async_ra_v6_12(&mut ra, &empty, 32, 32, 32)
        } else {
            ondemand_readahead(&mut ra, &empty, 32, 32, 32, true)
        };
        assert_eq!(third, batch(64, 32, 32), "v6_12 {v6_12}");
    }
}

#[test]
fn one_page_reads_ramp_up_from_four_pages() {
    // A stream of one-page requests from page 0: 4 pages (marker at 1), then 8, 16, 32.
    let empty = vec![Slot::Empty; 1024];
    let mut ra = FileRa::new(0);
    assert_eq!(
        ondemand_readahead(&mut ra, &empty, 0, 1, 32, false),
        batch(0, 4, 3)
    );
    assert_eq!(
        ondemand_readahead(&mut ra, &empty, 1, 1, 32, true),
        batch(4, 8, 8)
    );
    assert_eq!(
        ondemand_readahead(&mut ra, &empty, 4, 1, 32, true),
        batch(12, 16, 16)
    );
    assert_eq!(
        ondemand_readahead(&mut ra, &empty, 12, 1, 32, true),
        batch(28, 32, 32)
    );
}

#[test]
fn a_random_read_reads_only_itself_and_keeps_the_state() {
    let empty = vec![Slot::Empty; 1024];
    let mut ra = FileRa::new(0);
    ra.prev_index = Some(10);
    let before = ra;
    assert_eq!(
        ondemand_readahead(&mut ra, &empty, 500, 1, 32, false),
        batch(500, 1, 0)
    );
    assert_eq!(
        sync_ra_v6_12(&mut ra, &empty, 500, 1, 32),
        RaBatch {
            index: 500,
            nr: 1,
            lookahead: 0
        }
    );
    assert_eq!(ra, before);
}

#[test]
fn next_miss_without_a_gap_differs_between_v6_1_and_v6_12() {
    let full = vec![Slot::Page(1); 64];
    // v6.1 returns the last index looked at (inside the range), v6.12 index + max_scan.
    assert_eq!(page_cache_next_miss(&full, 10, 8, false), 17);
    assert_eq!(page_cache_next_miss(&full, 10, 8, true), 18);
    let mut gap = full.clone();
    gap[13] = Slot::Empty;
    assert_eq!(page_cache_next_miss(&gap, 10, 8, false), 13);
    assert_eq!(page_cache_next_miss(&gap, 10, 8, true), 13);
    // prev_miss runs off the start of the file: ULONG_MAX.
    assert_eq!(page_cache_prev_miss(&full, 5, 32), u64::MAX);
    assert_eq!(page_cache_prev_miss(&gap, 20, 32), 13);
}

// ------------------------------------------------------------------------------------------
// On a machine
// ------------------------------------------------------------------------------------------

struct Rig {
    m: Machine,
    pol: Classic,
    pid: u32,
    file: u32,
}

fn rig_with(kernel: Kernel, flags: u32, tune: impl FnOnce(&mut MachineConfig)) -> Rig {
    let mut cfg = MachineConfig::simple(16_384);
    cfg.kernel = kernel;
    tune(&mut cfg);
    let mut m = Machine::new(cfg).expect("machine");
    let pol = Classic::new(&m);
    let file = m.create_file("data", FILE_PAGES);
    let memcg = m.memcg_by_path("/").unwrap_or(0);
    let pid = m.create_process("reader", memcg, 0);
    m.mmap_file(pid, file, vm::SHARED | flags);
    Rig { m, pol, pid, file }
}

fn rig(kernel: Kernel, flags: u32) -> Rig {
    rig_with(kernel, flags, |_| {})
}

impl Rig {
    /// A load from page `page` of the mapped file at time `at` (ns); returns the access's
    /// iowait.
    fn load_at(&mut self, page: u64, at: u64) -> u64 {
        self.m.ctx = Ctx {
            now: at,
            cpu: 0,
            pid: self.pid,
            ..Default::default()
        };
        self.m
            .access(
                &mut self.pol,
                self.pid,
                PageRef::File {
                    file: self.file,
                    page,
                },
                Op::Read,
                Via::Mmap,
            )
            .expect("access completed");
        self.m.ctx.times.iowait_ns
    }
    fn load(&mut self, page: u64) -> u64 {
        let at = self.m.ctx.now + self.m.ctx.elapsed + 1_000_000_000;
        self.load_at(page, at)
    }
    fn cached(&self, page: u64) -> bool {
        matches!(
            self.m.files[self.file as usize].slots[page as usize],
            Slot::Page(_)
        )
    }
    fn cached_range(&self) -> Vec<u64> {
        (0..FILE_PAGES).filter(|&p| self.cached(p)).collect()
    }
    fn marked(&self, page: u64) -> bool {
        match self.m.files[self.file as usize].slots[page as usize] {
            Slot::Page(pfn) => self.m.folios[pfn as usize].test(pg::READAHEAD),
            _ => false,
        }
    }
    fn mapped(&self, page: u64) -> bool {
        self.m.procs[self.pid as usize].vmas[1].ptes[page as usize].is_present()
    }
    fn young(&self, page: u64) -> bool {
        self.m.procs[self.pid as usize].vmas[1].ptes[page as usize].young()
    }
    fn check(&self) {
        self.m.check_invariants(&self.pol).expect("invariants hold");
    }
}

#[test]
fn a_major_fault_reads_around_it_in_one_request() {
    for kernel in [Kernel::V6_1, Kernel::V6_12] {
        let mut r = rig(kernel, 0);
        let iowait = r.load(100);
        // ra_pages 32 centred on the fault: 84..115, one read of 128 KiB, marker 8 from the end.
        assert_eq!(r.cached_range(), (84..116).collect::<Vec<_>>());
        assert_eq!(r.m.file_dev.reads, 1);
        assert_eq!(r.m.vm.get(Vm::Pgpgin), 32 * 4);
        assert_eq!(r.m.vm.get(Vm::Pgmajfault), 1);
        assert!(r.marked(108) && !r.marked(107) && !r.marked(100));
        // The task waited for the whole request (latency + 128 KiB transfer).
        let dev = &r.m.cfg.file_device;
        let want = dev.read_latency_ns + 32 * 4096 * 1_000_000_000 / dev.bandwidth_bytes_per_s;
        assert_eq!(iowait, want);
        // Only the faulting page is mapped; the batch is on the inactive file list.
        assert!(r.mapped(100) && !r.mapped(101));
        r.check();
    }
}

#[test]
fn fault_around_maps_cached_neighbours_young_but_not_the_marked_one() {
    let mut r = rig(Kernel::V6_12, 0);
    r.load(100);
    let rss = r.m.procs[r.pid as usize].rss;
    let iowait = r.load(101);
    assert_eq!(iowait, 0);
    assert_eq!(r.m.vm.get(Vm::Pgmajfault), 1, "a minor fault");
    assert_eq!(r.m.file_dev.reads, 1, "no new I/O");
    // The aligned 16-page window 96..111: all cached; 100 was mapped, 108 carries PG_readahead.
    for p in 96..112 {
        assert_eq!(r.mapped(p), p != 108, "page {p}");
        if p != 108 {
            assert!(r.young(p), "page {p}: x86 maps prefaulted PTEs young");
        }
    }
    assert!(!r.mapped(95) && !r.mapped(112));
    assert_eq!(r.m.procs[r.pid as usize].rss, rss + 14);
    r.check();
}

#[test]
fn the_marker_starts_the_next_window_asynchronously() {
    for (kernel, next) in [(Kernel::V6_1, 116..148), (Kernel::V6_12, 116..148)] {
        let mut r = rig(kernel, 0);
        r.load(100);
        // Fault on the marked page (fault-around skips it): a minor fault, no wait, and the
        // next 32 pages go to the device, marked at their start.
        let t = r.m.ctx.now + r.m.ctx.elapsed + 1_000_000_000;
        let iowait = r.load_at(108, t);
        assert_eq!(iowait, 0);
        assert!(!r.marked(108));
        assert_eq!(r.m.file_dev.reads, 2);
        assert!(next.clone().all(|p| r.cached(p)), "{kernel:?}");
        assert!(r.marked(116));
        // A fault on a page of that window before its read completes waits for it.
        let soon = r.m.ctx.now + r.m.ctx.elapsed + 1_000;
        let waited = r.load_at(130, soon);
        assert!(waited > 0, "{kernel:?}: waited {waited}");
        r.check();
    }
}

#[test]
fn madv_random_reads_the_page_alone_and_madv_sequential_reads_ahead() {
    let mut r = rig(Kernel::V6_12, vm::RAND_READ);
    r.load(100);
    assert_eq!(r.cached_range(), vec![100]);
    assert_eq!(r.m.vm.get(Vm::Pgpgin), 4);
    let mut r = rig(Kernel::V6_12, vm::SEQ_READ);
    r.load(100);
    // page_cache_sync_ra(ra_pages) at an index without history: a "small random read" of the
    // request as is, which is ra_pages long, unmarked and leaving the state untouched.
    assert_eq!(r.cached_range(), (100..132).collect::<Vec<_>>());
    assert!((100..132).all(|p| !r.marked(p)));
    // From the start of the file: a 32-page window marked half-way.
    r.load(0);
    assert!((0..32).all(|p| r.cached(p)));
    assert!(r.marked(16));
    r.check();
}

#[test]
fn read_around_stops_after_lots_of_misses_without_hits() {
    let mut r = rig(Kernel::V6_12, 0);
    // Faults 64 pages apart: each reads 32 around it, and nothing of it is ever used.
    for i in 0..(FILE_PAGES / 64) {
        r.load(i * 64 + 32);
    }
    let reads = r.m.file_dev.reads;
    // 64 faults so far: mmap_miss 64 < MMAP_LOTSAMISS, every one read around.
    assert_eq!(r.m.vm.get(Vm::Pgpgin), 64 * 32 * 4);
    assert_eq!(reads, 64);
    let ra = *r.m.procs[r.pid as usize].file_ra(r.file);
    assert_eq!(ra.mmap_miss, 64);
    // The misses fall between the windows read so far (+16 is read; +48 is not); 37 more
    // misses make 101 > MMAP_LOTSAMISS, after which a miss reads its page alone.
    let mut misses = 0;
    let mut p = 48;
    while misses < 40 {
        if !r.cached(p) {
            r.load(p);
            misses += 1;
        }
        p += 64;
    }
    let ra = *r.m.procs[r.pid as usize].file_ra(r.file);
    assert_eq!(ra.mmap_miss, 104);
    // Misses 65..=100 read around, but half of each window (k*64+32..k*64+47) is cached:
    // 16 new pages each, one request; misses 101..104 read their page alone.
    assert_eq!(r.m.file_dev.reads, 64 + 40);
    assert_eq!(r.m.vm.get(Vm::Pgpgin), (64 * 32 + 36 * 16 + 4) * 4);
    r.check();
}

#[test]
fn readahead_and_fault_around_off_fault_one_page_at_a_time() {
    // The validation harness's guest setting: read_ahead_kb 0, fault_around_bytes 4096.
    let mut r = rig_with(Kernel::V6_12, 0, |c| {
        c.read_ahead_kb = 0;
        c.fault_around_bytes = 4096;
    });
    for p in 0..64 {
        r.load(p);
    }
    assert_eq!(r.cached_range(), (0..64).collect::<Vec<_>>());
    assert_eq!(r.m.file_dev.reads, 64);
    assert_eq!(r.m.vm.get(Vm::Pgmajfault), 64);
    r.check();
}

#[test]
fn readahead_in_a_full_memcg_never_ooms_and_stays_under_its_limit() {
    // A 48-page memcg: each read-around wants 32 pages; __GFP_NORETRY charges reclaim once
    // and give up, and the faulting page itself is charged normally.
    let mut cfg = MachineConfig::simple(16_384);
    cfg.memcgs = vec![MemcgConfig::new("/small").with_max(48)];
    let mut m = Machine::new(cfg).expect("machine");
    let mut pol = Classic::new(&m);
    let file = m.create_file("data", FILE_PAGES);
    let memcg = m.memcg_by_path("/small").expect("memcg");
    let pid = m.create_process("reader", memcg, 0);
    m.mmap_file(pid, file, vm::SHARED);
    let mut t = 0;
    for i in 0..200u64 {
        t += 1_000_000_000;
        m.ctx = Ctx {
            now: t,
            cpu: 0,
            pid,
            ..Default::default()
        };
        let page = (i * 389) % FILE_PAGES;
        let out = m.access(
            &mut pol,
            pid,
            PageRef::File { file, page },
            Op::Read,
            Via::Mmap,
        );
        assert!(out.is_some(), "access {i} failed");
        assert!(m.memcgs[memcg as usize].usage <= 48);
        m.check_invariants(&pol).expect("invariants");
    }
    assert_eq!(m.vm.get(Vm::OomKill), 0);
    assert!(m.vm.get(Vm::Pgpgin) > 200 * 4, "read-around happened");
}

#[test]
fn fault_around_credits_mmap_miss_per_folio_before_7x_and_once_per_fault_after() {
    // Three misses read around 1000, 2000 and 100 (mmap_miss 3); a fault at 101 is served by
    // fault-around, which maps the cached window 96..111. 6.12 credits every folio it finds
    // (15, PG_readahead's 108 skipped), bringing mmap_miss to 0; 7.x credits one, for the
    // folio of the fault it served (validation/results/2026-11-26-readahead).
    for (kernel, after) in [(Kernel::V6_12, 0), (Kernel::V7_1, 2), (Kernel::V7_2, 2)] {
        let mut r = rig(kernel, 0);
        for p in [1000, 2000, 100] {
            r.load(p);
        }
        assert_eq!(r.m.procs[r.pid as usize].file_ra(r.file).mmap_miss, 3);
        r.load(101);
        assert_eq!(
            r.m.procs[r.pid as usize].file_ra(r.file).mmap_miss,
            after,
            "{kernel:?}"
        );
        r.check();
    }
}
