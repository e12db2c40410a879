//! The classical-LRU test rig shared by the classic and tmpfs test files: a machine with the
//! classical LRU driven one operation at a time through public entry points.

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::Kernel;
use reclaimlab::machine::fault::AccessOutcome;
use reclaimlab::machine::vmscan::ScanControl;
use reclaimlab::machine::{Ctx, Machine, MachineConfig, Pfn, Slot, SwapConfig};
use reclaimlab::policy::classic::Classic;
use reclaimlab::policy::Policy;

/// A machine with one page per fault (no readahead or fault-around: tests/readahead.rs covers
/// those), so that each test sees the pages it touches and no others.
pub fn build(cfg: MachineConfig) -> (Machine, Classic) {
    build_with_readahead(cfg.one_page_per_fault())
}

/// A machine with `cfg`'s readahead and fault-around as they are.
pub fn build_with_readahead(cfg: MachineConfig) -> (Machine, Classic) {
    let m = Machine::new(cfg).expect("valid machine");
    let pol = Classic::new(&m);
    (m, pol)
}

pub fn machine(pages: u64, kernel: Kernel, swap: SwapConfig) -> (Machine, Classic) {
    let mut cfg = MachineConfig::simple(pages);
    cfg.kernel = kernel;
    cfg.swap = swap;
    build(cfg)
}

/// Sets the context of the next operation: task `pid` on CPU 0, the clock moving on.
pub fn enter(m: &mut Machine, pid: u32) {
    let now = m.ctx.now + m.ctx.elapsed;
    m.ctx = Ctx {
        now,
        cpu: 0,
        pid,
        ..Default::default()
    };
}

/// Moves the clock to the next periodic flush of the memcg statistics (`flush_memcg_stats_dwork`,
/// every `memcg_stats_flush_ns`): what 6.8+'s reclaim reads of them (`lruvec_page_state`) is
/// then what the lists hold now. 6.1 reads them exact.
#[allow(dead_code)]
pub fn flush_stats(m: &mut Machine) {
    m.ctx.now = m.next_stats_flush();
    m.ctx.elapsed = 0;
}

pub fn access(
    m: &mut Machine,
    pol: &mut Classic,
    pid: u32,
    page: PageRef,
    op: Op,
    via: Via,
) -> AccessOutcome {
    enter(m, pid);
    m.access(pol, pid, page, op, via)
        .expect("the access completed")
}

/// A buffered read() of one page (filemap_read → folio_mark_accessed).
pub fn read(m: &mut Machine, pol: &mut Classic, pid: u32, file: u32, page: u64) -> AccessOutcome {
    access(m, pol, pid, PageRef::File { file, page }, Op::Read, Via::Fd)
}

/// Reads every page of `pages` once, then each again: the second pass activates them all (the
/// reads of one page are never consecutive, so each counts as a touch, §2.2).
pub fn read_twice(
    m: &mut Machine,
    pol: &mut Classic,
    pid: u32,
    file: u32,
    pages: std::ops::Range<u64>,
) {
    assert!(
        pages.end - pages.start != 1,
        "a lone page would be re-read consecutively"
    );
    for _ in 0..2 {
        for i in pages.clone() {
            read(m, pol, pid, file, i);
        }
    }
}

/// A buffered write() of one page (no FGP_ACCESSED: the folio is dirtied, not marked accessed).
pub fn write_fd(m: &mut Machine, pol: &mut Classic, pid: u32, file: u32, page: u64) {
    access(
        m,
        pol,
        pid,
        PageRef::File { file, page },
        Op::Write,
        Via::Fd,
    );
}

/// A load through the process's mapping of `file` (sets the PTE young bit).
pub fn load_mapped(m: &mut Machine, pol: &mut Classic, pid: u32, file: u32, page: u64) {
    access(
        m,
        pol,
        pid,
        PageRef::File { file, page },
        Op::Read,
        Via::Mmap,
    );
}

/// A store to private anonymous memory.
pub fn write_anon(m: &mut Machine, pol: &mut Classic, pid: u32, page: u64) {
    access(m, pol, pid, PageRef::Anon { page }, Op::Write, Via::Mmap);
}

/// `lru_add_drain` on CPU 0.
pub fn drain(m: &mut Machine, pol: &mut Classic) {
    enter(m, 0);
    m.lru_add_drain(pol);
}

pub fn page_of(m: &Machine, file: u32, page: u64) -> Pfn {
    match m.files[file as usize].slots[page as usize] {
        Slot::Page(pfn) => pfn,
        s => panic!("file {file} page {page} is not resident: {s:?}"),
    }
}

pub fn shadow_of(m: &Machine, file: u32, page: u64) -> u64 {
    match m.files[file as usize].slots[page as usize] {
        Slot::Shadow(s) => s,
        s => panic!("file {file} page {page} holds no shadow entry: {s:?}"),
    }
}

pub fn flags(m: &Machine, pfn: Pfn) -> u32 {
    m.folios[pfn as usize].flags
}

pub fn has(m: &Machine, pfn: Pfn, flag: u32) -> bool {
    m.folios[pfn as usize].test(flag)
}

/// The root lruvec's list sizes: [inactive_anon, active_anon, inactive_file, active_file,
/// unevictable].
pub fn lru(pol: &Classic) -> [u64; 5] {
    pol.lru_pages(0, 0)
}

/// One `shrink_inactive_list` call of global direct reclaim at DEF_PRIORITY on the root lruvec.
pub fn shrink_inactive(m: &mut Machine, pol: &mut Classic, list: usize, nr: u64) -> u64 {
    enter(m, 0);
    let mut sc = ScanControl::new(32, None);
    pol.shrink_inactive_list(m, nr, 0, 0, &mut sc, list)
}

/// One `shrink_active_list` call of global direct reclaim on the root lruvec.
pub fn shrink_active(m: &mut Machine, pol: &mut Classic, list: usize, nr: u64) {
    enter(m, 0);
    let mut sc = ScanControl::new(32, None);
    pol.shrink_active_list(m, nr, 0, 0, &mut sc, list);
}

pub fn check(m: &Machine, pol: &Classic) {
    if let Err(e) = m.check_invariants(pol) {
        panic!("invariant violated: {e}");
    }
}

/// Sets the context of the next operation: task `pid` on CPU 0 at time `t`.
pub fn enter_at(m: &mut Machine, pid: u32, t: u64) {
    m.ctx = Ctx {
        now: t,
        cpu: 0,
        pid,
        ..Default::default()
    };
}

pub fn pte_young(m: &Machine, pid: u32, page: u64) -> bool {
    m.procs[pid as usize].vmas[1].ptes[page as usize].young()
}
