//! Unit tests of tmpfs (shmem) files against what mm/shmem.c, mm/vmscan.c, mm/swap_state.c and
//! mm/page-writeback.c do (docs/model.md §2, "tmpfs"): a tmpfs folio is swap-backed and sits on
//! the anon LRU, is counted in NR_FILE_PAGES/NR_SHMEM (memory.stat `file` and `shmem`, not
//! `anon`), is dirtied without accounting and never written back by the flusher, is swapped
//! out by reclaim (`shmem_writepage`, the swap entry left in its file slot) only while there is
//! swap, refaults from swap as an anon refault (`shmem_swapin_folio`), and read() of it does no
//! readahead. Each test checks every machine invariant at the end.

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::Kernel;
use reclaimlab::machine::fault::AccessOutcome;
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::vmscan::ScanControl;
use reclaimlab::machine::{pg, Machine, MachineConfig, MemcgConfig, Slot, SwapConfig, Vm};
use reclaimlab::policy::classic::{
    Classic, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE,
};
use reclaimlab::policy::Policy;

mod common;
use common::classic::*;
use common::zram;

/// A 6.1 machine of `pages` pages with `swap`, one page per fault.
fn machine_6_1(pages: u64, swap: SwapConfig) -> (Machine, Classic) {
    machine(pages, Kernel::V6_1, swap)
}

/// An access of `file`'s page `page` by `pid`.
fn file_access(
    m: &mut Machine,
    pol: &mut Classic,
    pid: u32,
    file: u32,
    page: u64,
    op: Op,
    via: Via,
) -> AccessOutcome {
    access(m, pol, pid, PageRef::File { file, page }, op, via)
}

/// A machine with a tmpfs file `t` of `n` pages written by process `p` (drained to the LRU).
fn written_tmpfs(n: u64, swap: SwapConfig) -> (Machine, Classic, u32, u32) {
    let (mut m, mut pol) = machine_6_1(1024, swap);
    let t = m.create_file_on("t", n, true);
    let p = m.create_process("p", 0, 0);
    for i in 0..n {
        write_fd(&mut m, &mut pol, p, t, i);
    }
    drain(&mut m, &mut pol);
    (m, pol, t, p)
}

#[test]
fn a_tmpfs_folio_is_swapbacked_on_the_anon_lru_and_counted_as_shmem() {
    let (m, pol, t, _) = written_tmpfs(4, zram(64));
    for i in 0..4 {
        let f = m.folios[page_of(&m, t, i) as usize];
        assert!(f.test(pg::SWAPBACKED) && !f.is_file_lru() && f.is_shmem());
        // shmem_write_end dirties it (noop_dirty_folio: PG_dirty only).
        assert!(f.test(pg::DIRTY));
    }
    let lru = pol.lru_pages(0, 0);
    assert_eq!(lru[LRU_INACTIVE_ANON] + lru[LRU_ACTIVE_ANON], 4);
    assert_eq!(lru[LRU_INACTIVE_FILE] + lru[LRU_ACTIVE_FILE], 0);
    assert_eq!((m.wb.nr_file_pages, m.wb.nr_shmem), (4, 4));
    // Not NR_FILE_DIRTY: tmpfs cannot write back, its dirt is not accounted or tagged.
    assert_eq!(m.wb.nr_dirty, 0);
    assert!(m.files[t as usize].dirty_tag.is_empty());
    let stat = &reclaimlab::sim::memcg_results(&m, &pol)[0].stat;
    assert_eq!(stat["shmem"], 4 * 4096);
    assert_eq!(stat["file"], 4 * 4096);
    assert_eq!(stat["anon"], 0);
    assert_eq!(stat["file_dirty"], 0);
    check(&m, &pol);
}

#[test]
fn a_tmpfs_folio_is_charged_to_the_writers_memcg_as_page_cache() {
    let mut cfg = MachineConfig::simple(1024);
    cfg.swap = zram(64);
    cfg.memcgs = vec![MemcgConfig::new("/a")];
    let (mut m, mut pol) = build(cfg);
    let a = m.memcg_by_path("/a").unwrap();
    let t = m.create_file_on("t", 8, true);
    let p = m.create_process("p", a, 0);
    for i in 0..8 {
        write_fd(&mut m, &mut pol, p, t, i);
    }
    drain(&mut m, &mut pol);
    // 8 pages in folios; memory.current also has the other 56 of the charge batch, in the
    // CPU's charge stock.
    assert_eq!(m.memcgs[a as usize].local_pages, 8);
    assert_eq!(m.memcgs[a as usize].usage, 64);
    assert!((0..8).all(|i| m.folios[page_of(&m, t, i) as usize].memcg == a));
    let stats = reclaimlab::sim::memcg_results(&m, &pol);
    let st = &stats.iter().find(|r| r.path == "/a").unwrap().stat;
    assert_eq!(
        (st["shmem"], st["file"], st["anon"]),
        (8 * 4096, 8 * 4096, 0)
    );
    check(&m, &pol);
}

#[test]
fn the_flusher_never_writes_tmpfs_pages() {
    let (mut m, pol, _, _) = written_tmpfs(64, zram(64));
    m.wb.start_all = true;
    enter(&mut m, 0);
    m.flusher_run();
    assert_eq!(m.wb.nr_writeback, 0);
    assert_eq!(m.vm.get(Vm::Pgpgout), 0);
    assert!((0..64).all(|i| m.folios[page_of(&m, 0, i) as usize].test(pg::DIRTY)));
    check(&m, &pol);
}

#[test]
fn reclaim_swaps_a_tmpfs_folio_out_and_leaves_the_swap_entry_in_its_slot() {
    let (mut m, mut pol, t, _) = written_tmpfs(4, zram(64));
    let free_swap = m.swap.nr_free();
    let reclaimed = shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 32);
    assert_eq!(reclaimed, 4, "swapped out and freed, not kept or dropped");
    for i in 0..4 {
        let Slot::Swap(slot) = m.files[t as usize].slots[i] else {
            panic!(
                "slot {i} holds {:?}, not a swap entry",
                m.files[t as usize].slots[i]
            );
        };
        assert!(matches!(
            m.swap.slots[slot as usize],
            reclaimlab::machine::swap::SwapSlot::Stored(Some(_))
        ));
    }
    assert_eq!(m.swap.nr_free(), free_swap - 4);
    assert_eq!(m.vm.get(Vm::Pswpout), 4);
    assert_eq!((m.wb.nr_file_pages, m.wb.nr_shmem), (0, 0));
    assert_eq!(m.files[t as usize].nr_shadows, 0);
    check(&m, &pol);
}

#[test]
fn a_tmpfs_refault_reads_from_swap_and_counts_as_an_anon_refault() {
    let (mut m, mut pol, t, p) = written_tmpfs(4, zram(64));
    let free_swap = m.swap.nr_free();
    shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 32);
    let out = read(&mut m, &mut pol, p, t, 2);
    assert!(out.major && !out.hit);
    assert_eq!(m.vm.get(Vm::Pswpin), 1);
    assert_eq!(m.vm.get(Vm::WorkingsetRefaultAnon), 1);
    assert_eq!(m.vm.get(Vm::WorkingsetRefaultFile), 0);
    let f = m.folios[page_of(&m, t, 2) as usize];
    // Back in the page cache, out of the swap cache, its slot freed, dirty (its only copy).
    assert!(f.is_shmem() && f.test(pg::DIRTY) && !f.test(pg::SWAPCACHE) && f.swap == 0);
    assert_eq!(m.swap.nr_free(), free_swap - 3);
    assert_eq!(m.wb.nr_shmem, 1);
    check(&m, &pol);
}

#[test]
fn a_mapped_tmpfs_page_faults_back_from_swap_as_a_major_fault() {
    let (mut m, mut pol) = machine_6_1(1024, zram(64));
    let t = m.create_file_on("t", 4, true);
    let p = m.create_process("p", 0, 0);
    m.mmap_file(p, t, vm::SHARED);
    for i in 0..4 {
        file_access(&mut m, &mut pol, p, t, i, Op::Write, Via::Mmap);
    }
    drain(&mut m, &mut pol);
    // The PTEs are young: the first pass activates, so let them age first.
    let mut reclaimed = 0;
    for _ in 0..4 {
        reclaimed += shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 32);
        enter(&mut m, 0);
        let mut sc = ScanControl::new(32, None);
        pol.shrink_active_list(&mut m, 32, 0, 0, &mut sc, LRU_ACTIVE_ANON);
    }
    assert_eq!(reclaimed, 4);
    assert!(matches!(m.files[t as usize].slots[1], Slot::Swap(_)));
    // try_to_unmap of a file folio clears the PTE: the swap entry lives in the file only.
    assert_eq!(m.procs[p as usize].swapents, 0);
    let majors = m.vm.get(Vm::Pgmajfault);
    let out = file_access(&mut m, &mut pol, p, t, 1, Op::Read, Via::Mmap);
    assert!(out.major);
    assert_eq!(m.vm.get(Vm::Pgmajfault), majors + 1);
    assert_eq!(m.vm.get(Vm::WorkingsetRefaultAnon), 1);
    check(&m, &pol);
}

#[test]
fn tmpfs_folios_are_not_reclaimable_without_swap() {
    let (mut m, mut pol, t, _) = written_tmpfs(4, SwapConfig::None);
    let reclaimed = shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 32);
    assert_eq!(reclaimed, 0);
    // shmem_writepage redirties and activates them (AOP_WRITEPAGE_ACTIVATE).
    for i in 0..4 {
        let f = m.folios[page_of(&m, t, i) as usize];
        assert!(f.test(pg::DIRTY) && f.test(pg::ACTIVE));
    }
    assert_eq!(m.vm.get(Vm::Pswpout), 0);
    // get_scan_count / can_reclaim_anon_pages: no anon (so no tmpfs) pages count as
    // reclaimable without free swap.
    assert_eq!(m.zone_reclaimable_pages(&pol, 0), 0);
    check(&m, &pol);
}

#[test]
fn reading_a_tmpfs_file_does_no_readahead_and_a_hole_allocates_nothing() {
    // Readahead on (read_ahead_kb 128): a regular file would read a window.
    let mut cfg = MachineConfig::simple(1024);
    cfg.swap = zram(256);
    let (mut m, mut pol) = build_with_readahead(cfg);
    let t = m.create_file_on("t", 64, true);
    let p = m.create_process("p", 0, 0);
    let out = read(&mut m, &mut pol, p, t, 0);
    assert!(!out.hit && !out.major);
    assert_eq!(
        m.files[t as usize].nr_pages, 0,
        "SGP_READ: a hole reads the zero page"
    );
    assert_eq!(m.memcgs[0].usage, 0);
    for i in 0..64 {
        write_fd(&mut m, &mut pol, p, t, i);
    }
    drain(&mut m, &mut pol);
    while shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 64) > 0 {}
    assert_eq!(m.files[t as usize].nr_pages, 0);
    enter(&mut m, p);
    m.access_request(
        &mut pol,
        p,
        PageRef::File { file: t, page: 0 },
        Op::Read,
        Via::Fd,
        64,
    )
    .expect("read");
    assert_eq!(m.files[t as usize].nr_pages, 1, "one page read, no window");
    assert_eq!(m.vm.get(Vm::Pswpin), 1);
    // Only the swap read's 4 KiB (zram counts it in pgpgin from 6.12): no file-device read.
    assert!(m.vm.get(Vm::Pgpgin) <= 4);
    check(&m, &pol);
}
