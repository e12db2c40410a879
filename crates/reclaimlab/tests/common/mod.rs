//! The MGLRU test lab shared by the MGLRU test files: a machine with MGLRU driven one
//! operation at a time through public entry points.
#![allow(dead_code)]

pub mod classic;

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::behaviour::{Behaviour, Behaviours};
use reclaimlab::consts::{Kernel, MAX_NR_GENS, MAX_NR_TIERS};
use reclaimlab::machine::{Ctx, Machine, MachineConfig, Pfn, Slot, SwapConfig, Vm};
use reclaimlab::policy::mglru::{GenLruvec, Mglru, MglruConfig};
use reclaimlab::policy::{unpack_shadow, Policy};

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

pub const ANON: usize = 0;
pub const FILE: usize = 1;

/// The MGLRU era (spec mglru.md §0) whose expectations a test checks: C with the Dec-2024
/// rework's tiers, B with 6.12's reclaim path, else A. The model itself asks behaviours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MglruEra {
    A,
    B,
    C,
}

/// The era of a kernel's behaviours.
pub fn era_of(b: Behaviours) -> MglruEra {
    if b.has(Behaviour::WorkingsetTopTier) {
        MglruEra::C
    } else if b.has(Behaviour::LruGenShrinkNode) {
        MglruEra::B
    } else {
        MglruEra::A
    }
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

/// A machine with MGLRU, driven one operation at a time.
pub struct Lab {
    pub m: Machine,
    pub pol: Mglru,
    pub era: MglruEra,
}

pub fn zram(pages: u64) -> SwapConfig {
    SwapConfig::Zram {
        size_pages: pages,
        compress_ratio: 3.0,
    }
}

impl Lab {
    pub fn new(kernel: Kernel, swap: SwapConfig) -> Lab {
        let mut cfg = MachineConfig::simple(8192);
        cfg.kernel = kernel;
        cfg.swap = swap;
        Lab::build(cfg, MglruConfig::new(kernel))
    }

    /// One page per fault (no readahead or fault-around: tests/readahead.rs covers those), so
    /// that each test sees the pages it touches and no others.
    pub fn build(cfg: MachineConfig, pcfg: MglruConfig) -> Lab {
        let m = Machine::new(cfg.one_page_per_fault()).expect("valid machine");
        let pol = Mglru::new(&m, pcfg);
        Lab {
            era: era_of(pcfg.switches),
            m,
            pol,
        }
    }

    /// Sets the context of the next operation: task `pid` on CPU 0, the clock moving on.
    pub fn enter(&mut self, pid: u32) {
        let now = self.m.ctx.now + self.m.ctx.elapsed + 1_000;
        self.m.ctx = Ctx {
            now,
            cpu: 0,
            pid,
            ..Default::default()
        };
    }

    pub fn access(&mut self, pid: u32, page: PageRef, op: Op, via: Via) {
        self.enter(pid);
        self.m
            .access(&mut self.pol, pid, page, op, via)
            .expect("the access completed");
    }

    /// read(2) of one page: filemap_read → folio_mark_accessed.
    pub fn read(&mut self, pid: u32, file: u32, page: u64) {
        self.access(pid, PageRef::File { file, page }, Op::Read, Via::Fd);
    }

    /// write(2) of one page: dirties it, no folio_mark_accessed.
    pub fn write_fd(&mut self, pid: u32, file: u32, page: u64) {
        self.access(pid, PageRef::File { file, page }, Op::Write, Via::Fd);
    }

    /// A load through the process's mapping of `file` (sets the PTE accessed bit).
    pub fn load(&mut self, pid: u32, file: u32, page: u64) {
        self.access(pid, PageRef::File { file, page }, Op::Read, Via::Mmap);
    }

    /// A store to private anonymous memory.
    pub fn store(&mut self, pid: u32, page: u64) {
        self.access(pid, PageRef::Anon { page }, Op::Write, Via::Mmap);
    }

    /// Reads a page `n` times through a file descriptor, each time by a new task of the root
    /// memcg, so that every read counts as a separate access (filemap_read marks a folio once
    /// per run of reads of the same open file).
    pub fn read_n(&mut self, file: u32, page: u64, n: u64) {
        for _ in 0..n {
            let r = self.m.create_process("reader", 0, 0);
            self.read(r, file, page);
        }
    }

    pub fn drain(&mut self) {
        self.enter(0);
        self.m.lru_add_drain(&mut self.pol);
    }

    pub fn page(&self, file: u32, page: u64) -> Pfn {
        match self.m.files[file as usize].slots[page as usize] {
            Slot::Page(pfn) => pfn,
            s => panic!("file {file} page {page} is not resident: {s:?}"),
        }
    }

    pub fn resident(&self, file: u32, page: u64) -> bool {
        matches!(
            self.m.files[file as usize].slots[page as usize],
            Slot::Page(_)
        )
    }

    /// The shadow entry of an evicted page: (token, workingset bit).
    pub fn shadow(&self, file: u32, page: u64) -> (u64, bool) {
        match self.m.files[file as usize].slots[page as usize] {
            Slot::Shadow(s) => {
                let (_, _, token, ws) = unpack_shadow(s);
                (token, ws)
            }
            s => panic!("file {file} page {page} holds no shadow entry: {s:?}"),
        }
    }

    /// The anon folio at `page` of process `pid`'s anon area.
    pub fn anon(&self, pid: u32, page: u64) -> Pfn {
        let pte = self.m.procs[pid as usize].vmas[0].ptes[page as usize];
        assert!(pte.is_present(), "anon page {page} of {pid} not present");
        pte.pfn()
    }

    /// The root lruvec of node 0.
    pub fn g(&self) -> &GenLruvec {
        self.pol.lruvec(0, 0)
    }

    pub fn g_mut(&mut self) -> &mut GenLruvec {
        &mut self.pol.lruvecs[0]
    }

    pub fn has(&self, pfn: Pfn, flag: u32) -> bool {
        self.m.folios[pfn as usize].test(flag)
    }

    pub fn refs(&self, pfn: Pfn) -> u8 {
        self.m.folios[pfn as usize].refs()
    }

    /// The sequence number of the generation a folio is in (from its gen bits).
    pub fn seq(&self, pfn: Pfn) -> u64 {
        let f = &self.m.folios[pfn as usize];
        assert!(f.gen() != 0, "pfn {pfn} is on no generation list");
        let lv = self.pol.lruvec(f.memcg, f.node);
        let t = f.is_file_lru() as usize;
        (lv.min_seq[t]..=lv.max_seq)
            .find(|s| s % MAX_NR_GENS == (f.gen() - 1) as u64)
            .unwrap_or_else(|| panic!("pfn {pfn}: gen {} outside the window", f.gen() - 1))
    }

    pub fn nr_gens(&self, t: usize) -> u64 {
        self.g().max_seq - self.g().min_seq[t] + 1
    }

    /// A write to the lru_gen debugfs file.
    pub fn cmd(&mut self, c: &str) -> Result<(), &'static str> {
        self.enter(0);
        self.pol
            .lru_gen_write(&mut self.m, c)
            .expect("MGLRU has lru_gen")
    }

    /// `- 1 0 seq swappiness nr`: proactive eviction of the root lruvec, at most `nr` pages.
    pub fn evict(&mut self, seq: u64, swappiness: u32, nr: u64) {
        let c = format!("- 1 0 {seq} {swappiness} {nr}");
        self.cmd(&c).unwrap_or_else(|e| panic!("'{c}' failed: {e}"));
    }

    /// Evicts one page from the oldest file generation of the root lruvec.
    pub fn evict_one_file(&mut self) {
        let min = self.g().min_seq[FILE];
        self.evict(min, 0, 1);
    }

    /// `inc_max_seq` on the root lruvec (aging without a page-table walk).
    pub fn age(&mut self, swappiness: u32) {
        self.enter(0);
        let max = self.g().max_seq;
        assert!(self.pol.inc_max_seq(&mut self.m, 0, max, swappiness));
    }

    /// Run the proactive eviction on an empty oldest file generation: try_to_inc_min_seq
    /// moves min_seq to the first populated one (needed in Era B, where new file folios start
    /// in min_seq + 1).
    pub fn settle(&mut self) {
        loop {
            let g = self.g();
            let min = g.min_seq[FILE];
            if g.pages(min, FILE) != 0 || min + 2 > g.max_seq {
                return;
            }
            self.evict(min, 0, 1);
            assert!(self.g().min_seq[FILE] > min, "min_seq did not move");
        }
    }

    /// Evicts file page `page` (the only file folio of the root lruvec), ageing when the window
    /// is too short to evict.
    pub fn evict_page(&mut self, file: u32, page: u64) {
        for _ in 0..16 {
            if !self.resident(file, page) {
                return;
            }
            let g = self.g();
            if g.min_seq[FILE] + 2 <= g.max_seq {
                self.evict_one_file();
            } else {
                self.age(0);
            }
        }
        panic!("file {file} page {page} was never evicted");
    }

    pub fn vm(&self, v: Vm) -> u64 {
        self.m.vm.get(v)
    }

    /// An event of the root memcg (memory.stat): counted by global and cgroup reclaim alike
    /// (the lru_gen file reclaims as cgroup reclaim in Era C).
    pub fn ev(&self, v: Vm) -> u64 {
        self.m.memcgs[0].events.get(v)
    }

    /// Zeroes every PID counter of one type of the root lruvec.
    pub fn clear_ctrl(&mut self, t: usize) {
        let g = self.g_mut();
        g.avg_refaulted[t] = [0; MAX_NR_TIERS];
        g.avg_total[t] = [0; MAX_NR_TIERS];
        g.refaulted[t] = [0; MAX_NR_TIERS];
        g.evicted[t] = [0; MAX_NR_TIERS];
        g.protected[t] = [0; MAX_NR_TIERS];
    }

    pub fn check(&self) {
        if let Err(e) = self.m.check_invariants(&self.pol) {
            panic!("invariant violated: {e}");
        }
    }
}
