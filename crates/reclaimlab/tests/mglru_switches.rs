//! The 2026 "mm/mglru: improve reclaim loop and dirty folio handling" series, switch by switch
//! (spec /work/shared/spec/series-2026.md A.2, A.3 and B), and the MGLRU user interface
//! (spec mglru.md §6.7, §7: page-table walks, min_ttl_ms, the lru_gen file).
//!
//! Every behaviour-changing switch gets the smallest situation in which it changes an
//! observable outcome: a machine is built by hand, a few folios are placed in chosen
//! generations (buffered reads land in the oldest generation, faults of mapped pages in the
//! second youngest, `+` commands age without page-table walks when `enabled` = 0x0001), one
//! `try_to_shrink_lruvec` (or `shrink_node`) call is made, and the difference the spec describes
//! is asserted with the switch on and off. The "no behaviour change" switches (01, 02, 03; 12
//! after 10; 13 and 14 after 11) are run on scenarios that exercise their code paths and must
//! give byte-identical results. The scenario tests at the end use the engine.

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::{
    Kernel, LRU_GEN_CORE, LRU_GEN_MM_WALK, LRU_GEN_NONLEAF_YOUNG, NS_PER_JIFFY,
};
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::vmscan::{try_to_free_mem_cgroup_pages, ScanControl};
use reclaimlab::machine::{
    pg, Ctx, Machine, MachineConfig, MemcgConfig, Pfn, Slot, SwapConfig, Vm,
};
use reclaimlab::metrics::RunResult;
use reclaimlab::policy::mglru::{Mglru, MglruConfig, Switch};
use reclaimlab::policy::Policy;
use reclaimlab::sim::{self, PolicySpec, RunOptions};
use reclaimlab::workload::micro;
use reclaimlab::workload::pattern::Pattern;
use reclaimlab::workload::{FileSpec, Phase, ProcSpec, Scenario, Stream, Target, ThreadSpec};

const ALL_CAPS: u32 = LRU_GEN_CORE | LRU_GEN_MM_WALK | LRU_GEN_NONLEAF_YOUNG;
const ANON: usize = 0;
const FILE: usize = 1;

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

/// The MGLRU configuration of a policy string (`mglru:7.1+switch`, `mglru:7.2-switch`).
fn mglru_cfg(spec: &str) -> MglruConfig {
    match spec.parse::<PolicySpec>() {
        Ok(PolicySpec::Mglru(c)) => c,
        other => panic!("{spec}: not an MGLRU policy: {other:?}"),
    }
}

/// A hand-driven machine with MGLRU.
struct Rig {
    m: Machine,
    p: Mglru,
}

fn zram(pages: u64) -> SwapConfig {
    SwapConfig::Zram {
        size_pages: pages,
        compress_ratio: 3.0,
    }
}

/// A one-node machine of `pages` pages under the policy `spec`, with the given `enabled` bits
/// (0x0001: aging makes a generation without walking page tables).
fn rig_cfg(spec: &str, enabled: u32, mut mc: MachineConfig) -> Rig {
    let mut cfg = mglru_cfg(spec);
    cfg.enabled = enabled;
    mc.kernel = cfg.kernel;
    // One page per fault: tests/readahead.rs covers readahead and fault-around.
    let m = Machine::new(mc.one_page_per_fault()).expect("valid machine");
    let p = Mglru::new(&m, cfg);
    Rig { m, p }
}

fn rig(spec: &str, enabled: u32, pages: u64, swap: SwapConfig) -> Rig {
    let mut mc = MachineConfig::simple(pages);
    mc.swap = swap;
    rig_cfg(spec, enabled, mc)
}

impl Rig {
    /// The context of the next operation: task `pid` on CPU 0, the clock moving on.
    fn enter(&mut self, pid: u32) {
        let now = self.m.ctx.now + self.m.ctx.elapsed;
        self.m.ctx = Ctx {
            now,
            cpu: 0,
            pid,
            ..Default::default()
        };
    }
    fn access(&mut self, pid: u32, page: PageRef, op: Op, via: Via) {
        self.enter(pid);
        self.m
            .access(&mut self.p, pid, page, op, via)
            .expect("the access completed");
    }
    /// A buffered read() (folio_mark_accessed).
    fn read(&mut self, pid: u32, file: u32, page: u64) {
        self.access(pid, PageRef::File { file, page }, Op::Read, Via::Fd);
    }
    /// A buffered write() (dirties the folio, no folio_mark_accessed).
    fn write_fd(&mut self, pid: u32, file: u32, page: u64) {
        self.access(pid, PageRef::File { file, page }, Op::Write, Via::Fd);
    }
    /// A load through the process's mapping of `file` (a fault the first time).
    fn load(&mut self, pid: u32, file: u32, page: u64) {
        self.access(pid, PageRef::File { file, page }, Op::Read, Via::Mmap);
    }
    /// A store to the process's anonymous area.
    fn store_anon(&mut self, pid: u32, page: u64) {
        self.access(pid, PageRef::Anon { page }, Op::Write, Via::Mmap);
    }
    /// Reads every page of `pages` `times` times, pass after pass (never the same page twice
    /// in a row, so every read marks the folio accessed). The LRU batches are drained after
    /// the first pass, so the folios join the LRU as first-touched pages (the oldest
    /// generation), not as PG_workingset ones.
    fn read_passes(&mut self, pid: u32, file: u32, pages: std::ops::Range<u64>, times: u32) {
        assert!(pages.end - pages.start > 1);
        for pass in 0..times {
            for i in pages.clone() {
                self.read(pid, file, i);
            }
            if pass == 0 {
                self.drain();
            }
        }
    }
    fn drain(&mut self) {
        self.enter(0);
        self.m.lru_add_drain(&mut self.p);
    }
    /// A write to /sys/kernel/debug/lru_gen.
    fn cmd(&mut self, c: &str) -> Result<(), &'static str> {
        self.enter(u32::MAX);
        self.p
            .lru_gen_write(&mut self.m, c)
            .expect("MGLRU has an lru_gen file")
    }
    /// One `try_to_shrink_lruvec` on (memcg, node 0); returns need_rotate.
    fn shrink(&mut self, memcg: u16, sc: &mut ScanControl) -> bool {
        self.enter(0);
        self.p.try_to_shrink_lruvec(&mut self.m, memcg, 0, sc)
    }
    fn vm(&self, v: Vm) -> u64 {
        self.m.vm.get(v)
    }
    fn max_seq(&self, memcg: u16) -> u64 {
        self.p.lruvec(memcg, 0).max_seq
    }
    fn min_seq(&self, memcg: u16) -> [u64; 2] {
        self.p.lruvec(memcg, 0).min_seq
    }
    fn page(&self, file: u32, page: u64) -> Pfn {
        match self.m.files[file as usize].slots[page as usize] {
            Slot::Page(pfn) => pfn,
            s => panic!("file {file} page {page} is not resident: {s:?}"),
        }
    }
    fn has(&self, pfn: Pfn, flag: u32) -> bool {
        self.m.folios[pfn as usize].test(flag)
    }
    /// The generation sequence number a folio's gen bits name.
    fn seq_of(&self, pfn: Pfn) -> u64 {
        let f = &self.m.folios[pfn as usize];
        assert!(f.gen() != 0, "pfn {pfn} is not on a generation list");
        let g = self.p.lruvec(f.memcg, f.node);
        let t = f.is_file_lru() as usize;
        (g.min_seq[t]..=g.max_seq)
            .find(|s| s % 4 == (f.gen() - 1) as u64)
            .expect("gen within the window")
    }
    /// Pages of type `t` in generation `seq` of (memcg, node 0).
    fn pages(&self, memcg: u16, seq: u64, t: usize) -> u64 {
        self.p.lruvec(memcg, 0).pages(seq, t)
    }
    fn check(&self) {
        if let Err(e) = self.m.check_invariants(&self.p) {
            panic!("invariant violated: {e}");
        }
    }
    /// Runs the machine's queued writeback completions, as the engine would.
    fn complete_writeback(&mut self) {
        self.enter(0);
        self.m.complete_all_writeback(&mut self.p);
    }
    fn flusher_woken(&self) -> bool {
        self.m.flusher_wakeup_pending()
    }
}

/// Global direct reclaim's scan control at a priority (root reclaim).
fn sc_root(nr_to_reclaim: u64, priority: i32) -> ScanControl {
    let mut sc = ScanControl::new(nr_to_reclaim, None);
    sc.priority = priority;
    sc
}

/// Empties the oldest generations of a fresh lruvec of memcg `id - 1` (no pages in gens 0 and
/// 1): a `-` of generation 0 finds nothing to evict and flushes min_seq up to max_seq - 1.
fn flush_empty_gens(r: &mut Rig, id: u64) {
    r.cmd(&format!("- {id} 0 0 0")).expect("eviction of gen 0");
}

// ------------------------------------------------------------------------------------------
// PolicySpec parsing
// ------------------------------------------------------------------------------------------

#[test]
fn policy_spec_parses_switch_lists() {
    let c = mglru_cfg("mglru:7.1+restructure-reclaim-loop+dont-abort-after-aging");
    assert_eq!(c.kernel, Kernel::V7_1);
    assert_eq!(
        c.switches,
        Kernel::V7_1
            .behaviours()
            .with(Switch::RestructureReclaimLoop)
            .with(Switch::DontAbortAfterAging)
    );
    // 08 changes the loop 04 wrote: without 04 it would do nothing, so it is refused.
    let err = "mglru:7.1+dont-abort-after-aging"
        .parse::<PolicySpec>()
        .unwrap_err();
    assert!(err.contains("requires 'restructure-reclaim-loop'"), "{err}");
    let c = mglru_cfg("mglru:7.2-dont-abort-after-aging");
    assert_eq!(c.kernel, Kernel::V7_2);
    assert_eq!(
        c.switches,
        Kernel::V7_2
            .behaviours()
            .without(Switch::DontAbortAfterAging)
    );
    // Defaults: plain `mglru` is 7.2 with the whole series; older kernels have none of it,
    // but for patch 10's path in 6.12 (Debian's 6.12.117).
    assert_eq!(mglru_cfg("mglru"), MglruConfig::new(Kernel::V7_2));
    assert_eq!(mglru_cfg("mglru:7.2").switches, Kernel::V7_2.behaviours());
    for k in ["6.1", "6.12", "7.1"] {
        let c = mglru_cfg(&format!("mglru:{k}"));
        assert_eq!(c.switches, c.kernel.behaviours());
        let debian = |w: &Switch| k == "6.12" && Switch::DEBIAN_6_12_117.contains(w);
        assert!(
            Switch::SERIES
                .iter()
                .all(|w| c.switches.has(*w) == debian(w)),
            "{k}"
        );
    }
    // '+' and '-' mixed; names containing '-' are split only before a known switch name.
    let c = mglru_cfg("mglru:7.2-exact-scan-count+fg-promotion-smaller-reclaim-batch");
    assert_eq!(
        c.switches,
        Kernel::V7_2
            .behaviours()
            .without(Switch::ExactScanCount)
            .with(Switch::FgPromotion)
            .without(Switch::SmallerReclaimBatch)
    );
    for bad in [
        "mglru:7.1+nope",
        "mglru:7.1+",
        "mglru:7.3",
        "mglru:7.2-fg",
        "mglru:7.1+smaller-reclaim",
    ] {
        assert!(bad.parse::<PolicySpec>().is_err(), "{bad} parsed");
    }
}

/// The switches of the 2026 series, the experimental FG promotion and Debian 7.2.13's changes,
/// in the order `reclaimlab policies` lists them.
const SWITCHES: [Switch; 21] = {
    let mut all = [Switch::FgPromotion; 21];
    let mut i = 0;
    while i < 15 {
        all[i] = Switch::SERIES[i];
        i += 1;
    }
    while i < 20 {
        all[i + 1] = Switch::DEBIAN_7_2_13[i - 15];
        i += 1;
    }
    all
};

#[test]
fn policy_spec_accepts_every_switch_name_and_round_trips() {
    // 21 distinct names: the fifteen patches in merge order, fg-promotion, then the five
    // changes beside the series in Debian's 7.2.13.
    let names: Vec<&str> = SWITCHES.iter().map(|w| w.name()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 21);
    assert_eq!(&SWITCHES[..15], &Switch::SERIES[..]);
    assert_eq!(SWITCHES[15], Switch::FgPromotion);
    assert_eq!(&SWITCHES[16..], &Switch::DEBIAN_7_2_13[..]);
    assert_eq!(
        mglru_cfg("mglru:7.2.13").switches,
        Switch::DEBIAN_7_2_13
            .into_iter()
            .fold(Kernel::V7_2.behaviours(), |s, w| s.with(w))
    );
    assert_eq!(
        "mglru:7.2.13".parse::<PolicySpec>().unwrap().to_string(),
        "mglru:7.2.13"
    );
    for w in SWITCHES {
        assert_eq!(w.name().parse::<Switch>(), Ok(w));
        // A switch comes with the ones it requires (12 needs 10; 13, 14 and 15 need 11; 08
        // needs 04): alone it is refused, naming the requirement 7.1 lacks.
        let needs: String = w.requires().iter().map(|r| format!("+{r}")).collect();
        let v7_1 = Kernel::V7_1.behaviours();
        if let Some(r) = w.requires().iter().find(|r| !v7_1.has(**r)) {
            let err = format!("mglru:7.1+{w}").parse::<PolicySpec>().unwrap_err();
            assert!(err.contains(&format!("requires '{r}'")), "{err}");
        }
        let on = format!("mglru:7.1{needs}+{w}");
        let c = mglru_cfg(&on);
        let with_needs = w
            .requires()
            .iter()
            .fold(Kernel::V7_1.behaviours().with(w), |s, r| s.with(*r));
        assert_eq!(c.switches, with_needs, "{on}");
        assert_eq!(
            PolicySpec::Mglru(c).to_string().parse(),
            Ok(PolicySpec::Mglru(c))
        );
        // Removing a switch removes what requires it too (as reverting a patch reverts the
        // ones built on it).
        let dependents: Vec<Switch> = Switch::SERIES
            .into_iter()
            .filter(|d| d.requires().contains(&w))
            .collect();
        if let Some(d) = dependents.first() {
            let err = format!("mglru:7.2-{w}").parse::<PolicySpec>().unwrap_err();
            assert!(err.contains(&format!("'{d}' requires '{w}'")), "{err}");
        }
        let minus: String = dependents.iter().map(|d| format!("-{d}")).collect();
        let off = format!("mglru:7.2-{w}{minus}");
        let c = mglru_cfg(&off);
        let without = dependents
            .iter()
            .fold(Kernel::V7_2.behaviours().without(w), |s, d| s.without(*d));
        assert_eq!(c.switches, without, "{off}");
        if !dependents.is_empty() {
            assert_eq!(
                PolicySpec::Mglru(c).to_string().parse(),
                Ok(PolicySpec::Mglru(c))
            );
            continue;
        }
        // fg-promotion and the 7.2.13 changes are not in 7.2: removing them is a no-op and is
        // not printed.
        let shown = if !Switch::SERIES.contains(&w) {
            "mglru:7.2".to_string()
        } else {
            off.clone()
        };
        assert_eq!(PolicySpec::Mglru(c).to_string(), shown);
        assert_eq!(shown.parse::<PolicySpec>(), Ok(PolicySpec::Mglru(c)));
    }
    // All 21 added to 7.1, all fifteen removed from 7.2.
    let all_on: String = SWITCHES.iter().map(|w| format!("+{w}")).collect();
    let c = mglru_cfg(&format!("mglru:7.1{all_on}"));
    assert!(SWITCHES.iter().all(|&w| c.switches.on(w)));
    assert_eq!(
        PolicySpec::Mglru(c).to_string().parse::<PolicySpec>(),
        Ok(PolicySpec::Mglru(c))
    );
    let all_off: String = Switch::SERIES.iter().map(|w| format!("-{w}")).collect();
    let c = mglru_cfg(&format!("mglru:7.2{all_off}"));
    assert_eq!(c.switches, Kernel::V7_1.behaviours());
    assert_eq!(c.kernel, Kernel::V7_2);
}

// ------------------------------------------------------------------------------------------
// 04 restructure-reclaim-loop
// ------------------------------------------------------------------------------------------

/// A lruvec of 5000 mapped file pages in generation 2 (faults land in max_seq - 1) whose empty
/// generations 0 and 1 were flushed: min_seq[FILE] = 2 = max_seq - 1, so aging is forced.
fn forced_aging_rig(spec: &str, mapped: u64) -> Rig {
    let mut r = rig(spec, LRU_GEN_CORE, 8192, SwapConfig::None);
    let f = r.m.create_file("data", mapped);
    let pid = r.m.create_process("mapper", 0, 0);
    r.m.mmap_file(pid, f, vm::SHARED);
    for i in 0..mapped {
        r.load(pid, f, i);
    }
    r.drain();
    assert_eq!(
        r.pages(0, 2, FILE),
        mapped,
        "faulted pages start in max_seq - 1"
    );
    flush_empty_gens(&mut r, 1);
    assert_eq!((r.min_seq(0)[FILE], r.max_seq(0)), (2, 3));
    r
}

#[test]
fn s04_forced_aging_happens_even_at_def_priority() {
    // Before 04, get_nr_to_scan returns size >> priority at DEF_PRIORITY even when aging is
    // forced (only two generations): with nr_to_scan = 0 the pass is wasted. After 04 the
    // predicate ages whenever min_seq + 2 > max_seq; without 08 the pass then ends.
    for (spec, after) in [
        ("mglru:7.1", false),
        ("mglru:7.1+restructure-reclaim-loop", true),
    ] {
        let mut r = forced_aging_rig(spec, 5000);
        let mut sc = sc_root(32, 12);
        let rotate = r.shrink(0, &mut sc);
        assert_eq!(r.max_seq(0), if after { 4 } else { 3 }, "{spec}");
        assert_eq!(
            rotate, after,
            "{spec}: need_rotate after a successful aging"
        );
        assert_eq!(
            r.vm(Vm::PgscanFile),
            0,
            "{spec}: nothing evicted in this pass"
        );
        r.check();
    }
}

#[test]
fn s04_tiny_lruvec_with_zero_budget_skips_aging() {
    // Three generations at priority 11 prefer aging. Before 04 the aging ran inside
    // get_nr_to_scan whatever the size; after 04 a lruvec whose budget (50 >> 11) is 0 skips
    // the whole pass, aging included.
    for (spec, ages) in [
        ("mglru:7.1", true),
        ("mglru:7.1+restructure-reclaim-loop", false),
    ] {
        let mut r = forced_aging_rig(spec, 50);
        r.cmd("+ 1 0 3").expect("aging");
        assert_eq!(
            (r.min_seq(0)[FILE], r.max_seq(0)),
            (2, 4),
            "three generations"
        );
        let mut sc = sc_root(32, 11);
        let rotate = r.shrink(0, &mut sc);
        assert_eq!(r.max_seq(0), if ages { 5 } else { 4 }, "{spec}");
        assert_eq!(rotate, ages, "{spec}");
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// 05 exact-scan-count
// ------------------------------------------------------------------------------------------

#[test]
fn s05_no_forced_zero_when_two_generations_remain() {
    // Generation 0: 40 clean read() pages; generation 2: 100 mapped pages; 1 and 3 empty.
    // Evicting generation 0 leaves only two generations. Before 05 evict_folios then returns
    // 0 (forced) and the loop stops without aging; after 05 it returns the 40 pages scanned,
    // the loop goes on, finds aging forced and creates a generation (need_rotate).
    for (spec, after) in [("mglru:7.1", false), ("mglru:7.1+exact-scan-count", true)] {
        let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
        let hot = r.m.create_file("hot", 100);
        let cold = r.m.create_file("cold", 40);
        let pid = r.m.create_process("p", 0, 0);
        r.m.mmap_file(pid, hot, vm::SHARED);
        for i in 0..100 {
            r.load(pid, hot, i);
        }
        for i in 0..40 {
            r.read(pid, cold, i);
        }
        r.drain();
        assert_eq!((r.pages(0, 0, FILE), r.pages(0, 2, FILE)), (40, 100));
        let mut sc = sc_root(1000, 0);
        let rotate = r.shrink(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 40, "{spec}: generation 0 evicted");
        assert_eq!(r.min_seq(0)[FILE], 2, "{spec}");
        assert_eq!(r.max_seq(0), if after { 4 } else { 3 }, "{spec}");
        assert_eq!(rotate, after, "{spec}");
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// 06 avoid-type-fallback
// ------------------------------------------------------------------------------------------

#[test]
fn s06_no_fallback_to_anon_when_file_scan_only_sorted() {
    // Oldest anon generation: 100 anon pages; oldest file generation: 200 lazily promoted file
    // folios (read five times). With no refaults the PID controller picks file. The first
    // 64-entry file scan isolates nothing: before 06 (05 on) evict_folios falls back to anon
    // and isolates 64 anon pages; with 06 it scans file a second time instead.
    for (spec, fallback) in [
        ("mglru:7.2-avoid-type-fallback", true),
        ("mglru:7.2", false),
    ] {
        let mut r = rig(spec, LRU_GEN_CORE, 8192, zram(8192));
        let f = r.m.create_file("data", 200);
        let anon = r.m.create_process("anon", 0, 100);
        let reader = r.m.create_process("reader", 0, 0);
        for i in 0..100 {
            r.store_anon(anon, i);
        }
        r.drain();
        r.cmd("+ 1 0 3").unwrap();
        r.cmd("+ 1 0 4").unwrap();
        r.read_passes(reader, f, 0..200, 5);
        r.drain();
        assert_eq!(r.min_seq(0), [2, 2]);
        assert_eq!((r.pages(0, 2, ANON), r.pages(0, 2, FILE)), (100, 200));
        // budget = 300 >> 2 = 75: one evict_folios call of 64 entries.
        let mut sc = sc_root(1000, 2);
        r.shrink(0, &mut sc);
        if fallback {
            assert_eq!(r.vm(Vm::PgscanAnon), 64, "{spec}: fell back to anon");
            assert_eq!(r.vm(Vm::Pgrefill), 64, "{spec}");
        } else {
            assert_eq!(r.vm(Vm::PgscanAnon), 0, "{spec}: stayed on file");
            assert_eq!(r.vm(Vm::Pgrefill), 128, "{spec}: file scanned twice");
        }
        assert_eq!(r.vm(Vm::PgscanFile), 0, "{spec}");
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// 07 smaller-reclaim-batch
// ------------------------------------------------------------------------------------------

#[test]
fn s07_one_evict_call_visits_at_most_64_entries() {
    // Oldest generation, tail first: 32 clean pages, 500 lazily promoted pages, 500 clean
    // pages. Direct reclaim wants 32. With the 4096 batch the first evict_folios walks past all
    // 500 protected folios to isolate 64 and over-reclaims; with 07 it stops after 64 entries
    // (32 isolated, 32 sorted), which is already the goal.
    for (spec, small) in [
        ("mglru:7.1", false),
        ("mglru:7.1+smaller-reclaim-batch", true),
    ] {
        let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
        let f = r.m.create_file("data", 1032);
        let pid = r.m.create_process("reader", 0, 0);
        for i in 0..32 {
            r.read(pid, f, i);
        }
        r.read_passes(pid, f, 32..532, 5);
        for i in 532..1032 {
            r.read(pid, f, i);
        }
        r.drain();
        assert_eq!(r.pages(0, 0, FILE), 1032);
        let mut sc = sc_root(32, 0);
        r.shrink(0, &mut sc);
        if small {
            assert_eq!(sc.nr_reclaimed, 32, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 32, "{spec}");
        } else {
            assert_eq!(sc.nr_reclaimed, 64, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 500, "{spec}");
        }
        assert_eq!(r.vm(Vm::PgscanDirect), sc.nr_reclaimed, "{spec}");
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// 08 dont-abort-after-aging
// ------------------------------------------------------------------------------------------

/// memcg /a (id 2) with three generations (2, 3, 4) and 1000 clean read() pages in the oldest.
fn three_gen_memcg_rig(spec: &str) -> Rig {
    let mut mc = MachineConfig::simple(8192);
    mc.memcgs = vec![MemcgConfig::new("/a")];
    let mut r = rig_cfg(spec, LRU_GEN_CORE, mc);
    let f = r.m.create_file("data", 1000);
    let pid = r.m.create_process("reader", 1, 0);
    flush_empty_gens(&mut r, 2);
    r.cmd("+ 2 0 3").unwrap();
    for i in 0..1000 {
        r.read(pid, f, i);
    }
    r.drain();
    assert_eq!((r.min_seq(1)[FILE], r.max_seq(1)), (2, 4));
    assert_eq!(r.pages(1, 2, FILE), 1000);
    r
}

#[test]
fn s08_eviction_continues_after_aging() {
    // Priority 1, budget 1000 >> 1 = 500, three generations: the loop ages first. Before 08
    // the pass ends there; after 08 root reclaim evicts one batch and leaves, and cgroup
    // reclaim keeps evicting until the budget is spent.
    for (spec, after) in [
        ("mglru:7.2-dont-abort-after-aging", false),
        ("mglru:7.2", true),
    ] {
        for target in [None, Some(1)] {
            let mut r = three_gen_memcg_rig(spec);
            let mut sc = ScanControl::new(1_000_000, target);
            sc.priority = 1;
            let rotate = r.shrink(1, &mut sc);
            assert!(rotate, "{spec}: aging succeeded");
            assert_eq!(r.max_seq(1), 5, "{spec}");
            let want = match (after, target) {
                (false, _) => 0,
                (true, None) => 64,
                (true, Some(_)) => 500,
            };
            assert_eq!(sc.nr_reclaimed, want, "{spec} target {target:?}");
            r.check();
        }
    }
}

// ------------------------------------------------------------------------------------------
// 09 remove-swap-constrained-check
// ------------------------------------------------------------------------------------------

#[test]
fn s09_noio_reclaim_isolates_anon_and_dirty_folios() {
    // 100 anon pages (no swap cache) in the oldest generation, PTEs already aged old by a
    // walk; vm.swappiness 200 scans anon first. Under GFP_NOIO (may_io = false) the old
    // isolate_folio refuses them (skipped, not counted in pgscan); after 09 they are isolated
    // and shrink_folio_list keeps them (no swap-out without __GFP_IO).
    for (spec, isolated) in [
        ("mglru:7.1", 0),
        ("mglru:7.1+remove-swap-constrained-check", 100),
    ] {
        for may_io in [false, true] {
            let mut mc = MachineConfig::simple(8192);
            mc.swap = zram(8192);
            mc.swappiness = 200;
            let mut r = rig_cfg(spec, ALL_CAPS, mc);
            let anon = r.m.create_process("anon", 0, 100);
            for i in 0..100 {
                r.store_anon(anon, i);
            }
            r.drain();
            r.cmd("+ 1 0 3").unwrap();
            r.cmd("+ 1 0 4").unwrap();
            assert_eq!(r.pages(0, r.min_seq(0)[ANON], ANON), 100);
            let mut sc = sc_root(1000, 0);
            sc.may_io = may_io;
            r.shrink(0, &mut sc);
            if may_io {
                assert_eq!(r.vm(Vm::PgscanAnon), 100, "{spec}");
                assert_eq!(r.vm(Vm::Pswpout), 100, "{spec}: swapped out with __GFP_IO");
            } else {
                assert_eq!(r.vm(Vm::PgscanAnon), isolated, "{spec} NOIO");
                assert_eq!(r.vm(Vm::Pswpout), 0, "{spec}: no swap-out without __GFP_IO");
                assert_eq!(sc.nr_reclaimed, 0);
                let pr = &r.m.procs[anon as usize];
                assert_eq!((pr.rss, pr.swapents), (100, 0), "{spec}: all resident");
            }
            r.check();
        }
    }
    // Dirty file folios (10 on): refused before 09, isolated and reactivated with PG_reclaim
    // after it.
    for (spec, isolated) in [
        ("mglru:7.2-remove-swap-constrained-check", 0),
        ("mglru:7.2", 50),
    ] {
        let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
        let f = r.m.create_file("data", 50);
        let pid = r.m.create_process("writer", 0, 0);
        for i in 0..50 {
            r.write_fd(pid, f, i);
        }
        r.drain();
        let mut sc = sc_root(1000, 0);
        sc.may_io = false;
        r.shrink(0, &mut sc);
        assert_eq!(r.vm(Vm::PgscanFile), isolated, "{spec}");
        assert_eq!(r.vm(Vm::NrVmscanImmediateReclaim), isolated, "{spec}");
        assert_eq!(
            (0..50)
                .filter(|&i| r.has(r.page(f, i), pg::RECLAIM))
                .count() as u64,
            isolated,
            "{spec}"
        );
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// 10 common-dirty-writeback-reactivation
// ------------------------------------------------------------------------------------------

/// Fifty dirty page-cache folios of a file "data" (written, then read once: PG_referenced) in
/// the oldest generation, and ten PG_workingset folios of "ws" in generation 1 (max_seq - 2),
/// so that three generations remain once generation 0 is emptied (otherwise max_seq - 1 would
/// be the oldest generation and the putback would clear the refs of any rejected folio).
/// Returns "data".
fn fifty_dirty_folios_behind_a_workingset(r: &mut Rig) -> u32 {
    let f = r.m.create_file("data", 50);
    let ws = r.m.create_file("ws", 10);
    let pid = r.m.create_process("writer", 0, 0);
    for i in 0..50 {
        r.write_fd(pid, f, i);
    }
    for i in 0..50 {
        r.read(pid, f, i);
    }
    r.drain();
    for _ in 0..5 {
        for i in 0..10 {
            r.read(pid, ws, i);
        }
    }
    r.drain();
    f
}

/// A dirty folio reclaim left to the flusher: PG_reclaim and dirty, and PG_active only while it
/// was isolated (it is back on a list without it).
fn assert_left_to_the_flusher(r: &Rig, pfn: Pfn, spec: &str) {
    assert!(r.has(pfn, pg::RECLAIM) && r.has(pfn, pg::DIRTY), "{spec}");
    assert!(
        !r.has(pfn, pg::ACTIVE),
        "{spec}: PG_active only while isolated"
    );
}

#[test]
fn s10_dirty_folios_are_isolated_and_reactivated() {
    // 50 dirty page-cache folios (written, then read once: PG_referenced) in the oldest
    // generation, direct reclaim. Before 10 sort_folio bumps them to min_seq + 1 with
    // PG_reclaim and clears their refs, never isolating them (pgrefill, no pgscan). After 10
    // they are isolated; shrink_folio_list leaves them to the flusher (NR_VMSCAN_IMMEDIATE,
    // PG_reclaim) and activates them into max_seq - 1 with their refs intact.
    for (spec, after) in [
        ("mglru:7.1", false),
        ("mglru:7.1+common-dirty-writeback-reactivation", true),
    ] {
        let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
        let f = fifty_dirty_folios_behind_a_workingset(&mut r);
        assert_eq!((r.pages(0, 0, FILE), r.pages(0, 1, FILE)), (50, 10));
        let mut sc = sc_root(1000, 0);
        r.shrink(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 0, "{spec}: dirty folios are not reclaimed");
        assert_eq!(r.min_seq(0)[FILE], 1, "{spec}");
        for i in 0..50 {
            let pfn = r.page(f, i);
            assert_left_to_the_flusher(&r, pfn, spec);
            if after {
                // max_seq was 3 when they were put back (the pass aged afterwards)
                assert_eq!(r.seq_of(pfn), 2, "{spec}: activated into max_seq - 1");
                assert!(r.has(pfn, pg::REFERENCED), "{spec}: refs kept");
            } else {
                assert_eq!(r.seq_of(pfn), 1, "{spec}: bumped to min_seq + 1");
                assert!(!r.has(pfn, pg::REFERENCED), "{spec}: refs cleared");
            }
        }
        if after {
            assert_eq!(r.vm(Vm::PgscanFile), 50, "{spec}");
            assert_eq!(r.vm(Vm::NrVmscanImmediateReclaim), 50, "{spec}");
            assert_eq!(r.vm(Vm::Pgactivate), 50, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 0, "{spec}");
        } else {
            assert_eq!(r.vm(Vm::PgscanFile), 0, "{spec}");
            assert_eq!(r.vm(Vm::NrVmscanImmediateReclaim), 0, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 50, "{spec}");
        }
        // Either way the flusher was woken (every file page taken was unqueued dirty); when
        // the writeback ends, folio_rotate_reclaimable moves each folio to the tail of the
        // oldest generation.
        assert!(r.flusher_woken(), "{spec}");
        r.enter(0);
        r.m.flusher_run();
        assert_eq!(r.m.wb.nr_writeback, 50);
        r.complete_writeback();
        assert_eq!(r.vm(Vm::Pgrotated), 50, "{spec}");
        let min = r.min_seq(0)[FILE];
        for i in 0..50 {
            let pfn = r.page(f, i);
            assert_eq!(
                r.seq_of(pfn),
                min,
                "{spec}: rotated to the oldest generation"
            );
            assert!(!r.has(pfn, pg::RECLAIM) && !r.has(pfn, pg::DIRTY), "{spec}");
        }
        r.check();
    }
}

#[test]
fn s10_debian_6_12_isolates_dirty_folios_and_mainline_7_1_bumps_them() {
    // The same fifty dirty folios at the oldest generation's tail, direct reclaim, under the
    // kernels' own behaviours. Debian's 6.12.117 sort_folio has no "waiting for writeback"
    // branch (mm/vmscan.c 4312-4355): they are isolated (pgscan_file, file_taken), counted as
    // unqueued dirty, marked PG_reclaim and counted in nr_vmscan_immediate_reclaim by
    // shrink_folio_list (1347-1374), activated (pgactivate) and put back active into max_seq
    // (the Era B putback, 4609-4623). Mainline 7.1 bumps them in sort_folio to min_seq + 1
    // with PG_reclaim (pgrefill; nothing isolated, nothing counted as immediate reclaim).
    for (spec, isolates) in [("mglru:6.12", true), ("mglru:7.1", false)] {
        let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
        let f = fifty_dirty_folios_behind_a_workingset(&mut r);
        if isolates {
            // 6.12 adds the folios to min_seq + 1: flush the empty generation 0 so that they
            // are the oldest generation's tail, the workingset at its head.
            flush_empty_gens(&mut r, 1);
        }
        assert_eq!(
            r.pages(0, r.min_seq(0)[FILE], FILE),
            50 + 10 * isolates as u64
        );
        let mut sc = sc_root(1000, 0);
        r.shrink(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 0, "{spec}: dirty folios are not reclaimed");
        let (scan, steal) = (r.vm(Vm::PgscanFile), r.vm(Vm::PgstealFile));
        if isolates {
            assert_eq!((scan, steal), (50, 0), "{spec}: isolated, not stolen");
            assert!(scan > steal, "{spec}");
            assert_eq!(r.vm(Vm::NrVmscanImmediateReclaim), 50, "{spec}");
            assert_eq!(r.vm(Vm::Pgactivate), 50, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 10, "{spec}: only the workingset sorted");
            assert_eq!(sc.nr.file_taken, 50, "{spec}: counted by scan_folios");
            assert_eq!(
                sc.nr.unqueued_dirty, 50,
                "{spec}: counted by shrink_folio_list"
            );
        } else {
            assert_eq!((scan, steal), (0, 0), "{spec}: never isolated");
            assert_eq!(r.vm(Vm::NrVmscanImmediateReclaim), 0, "{spec}");
            assert_eq!(r.vm(Vm::Pgactivate), 0, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 50, "{spec}: bumped by sort_folio");
            assert_eq!(sc.nr.file_taken, 50, "{spec}: counted by sort_folio");
            assert_eq!(sc.nr.unqueued_dirty, 50, "{spec}: counted by sort_folio");
        }
        let max = r.max_seq(0);
        for i in 0..50 {
            let pfn = r.page(f, i);
            assert_left_to_the_flusher(&r, pfn, spec);
            // 6.12: activated into the youngest generation; 7.1: min_seq 0 + 1.
            let want = if isolates { max } else { 1 };
            assert_eq!(r.seq_of(pfn), want, "{spec}: page {i}");
        }
        // Both wake the flusher (every file page taken was unqueued dirty, 1bc542c6a0d1), and
        // when the writeback ends folio_rotate_reclaimable moves each folio to the oldest tail.
        assert!(r.flusher_woken(), "{spec}");
        r.enter(0);
        r.m.flusher_run();
        r.complete_writeback();
        assert_eq!(r.vm(Vm::Pgrotated), 50, "{spec}");
        let min = r.min_seq(0)[FILE];
        for i in 0..50 {
            assert_eq!(r.seq_of(r.page(f, i)), min, "{spec}: rotated to the oldest");
        }
        r.check();
    }
}

/// After 10 dirty folios are isolated, so reclaim's `folio_trylock` meets a folio a buffered
/// write holds across its copy: shrink_folio_list keeps it (`goto keep`: no PG_reclaim, no
/// NR_VMSCAN_IMMEDIATE, not activated there), counted in pgscan but not in pgsteal, while the
/// other dirty folios of the batch are left to the flusher with PG_reclaim as above. Before
/// 10 sort_folio bumps it like any dirty folio (the branch that also tests PG_locked).
#[test]
fn s10_a_folio_a_write_holds_is_kept_by_shrink_folio_list() {
    for (spec, after) in [("mglru:7.2", true), ("mglru:7.1", false)] {
        let mut mc = MachineConfig::simple(4096);
        // Writes hold their folio for the last 1 ms of a 1.1 ms system call, so that the
        // reclaimer's own costs over the batch cannot take it past the hold.
        mc.cost.fd_syscall_ns = 1_100_000;
        mc.cost.write_folio_lock_ns = 1_000_000;
        let mut r = rig_cfg(spec, LRU_GEN_CORE, mc);
        let f = fifty_dirty_folios_behind_a_workingset(&mut r);
        let w = r.m.create_process("other writer", 0, 0);
        // `w` writes page 7 at t0: its folio is locked from t0 + 0.1 ms to t0 + 1.1 ms.
        let t0 = r.m.now() + 10_000_000;
        r.m.ctx = Ctx {
            now: t0,
            cpu: 1 % r.m.cfg.cpus,
            pid: w,
            ..Default::default()
        };
        let page = PageRef::File { file: f, page: 7 };
        r.m.access(&mut r.p, w, page, Op::Write, Via::Fd)
            .expect("the write completed");
        r.m.ctx = Ctx {
            now: t0 + 200_000,
            cpu: 0,
            pid: 0,
            ..Default::default()
        };
        let mut sc = sc_root(1000, 0);
        r.p.try_to_shrink_lruvec(&mut r.m, 0, 0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 0, "{spec}");
        let locked = r.page(f, 7);
        if after {
            assert_eq!(r.m.folio_trylock_failed, 1, "{spec}");
            assert_eq!(r.vm(Vm::PgscanFile), 50, "{spec}: isolated, counted");
            assert_eq!(r.vm(Vm::PgstealFile), 0, "{spec}");
            assert_eq!(r.vm(Vm::NrVmscanImmediateReclaim), 49, "{spec}");
            assert_eq!(r.vm(Vm::Pgactivate), 49, "{spec}");
            assert!(!r.has(locked, pg::RECLAIM), "{spec}: kept, not marked");
            for i in (0..50).filter(|&i| i != 7) {
                assert!(r.has(r.page(f, i), pg::RECLAIM), "{spec}");
            }
        } else {
            assert_eq!(r.m.folio_trylock_failed, 0, "{spec}: never isolated");
            assert_eq!(r.vm(Vm::PgscanFile), 0, "{spec}");
            assert_eq!(r.vm(Vm::Pgrefill), 50, "{spec}");
            assert!(r.has(locked, pg::RECLAIM), "{spec}: bumped like the others");
        }
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// 11 simplify-dirty-writeback
// ------------------------------------------------------------------------------------------

#[test]
fn s11_flusher_is_woken_per_batch() {
    // Oldest generation, tail first: `dirty` written pages, then `clean` read pages; one pass
    // of two evict_folios batches. Before 11 the flusher is woken only if the whole pass's
    // unqueued dirty pages equal its file pages taken; after 11 any batch whose isolated
    // pages all came back unqueued dirty wakes it. Woken with WB_REASON_VMSCAN, the flusher
    // writes the dirty pages at once (pgpgout); otherwise they wait for the 30 s expiry.
    for (dirty, clean) in [(64u64, 64u64), (128, 0)] {
        for (spec, after) in [
            ("mglru:7.1+common-dirty-writeback-reactivation", false),
            (
                "mglru:7.1+common-dirty-writeback-reactivation+simplify-dirty-writeback",
                true,
            ),
        ] {
            let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
            let f = r.m.create_file("data", dirty + clean);
            let pid = r.m.create_process("io", 0, 0);
            for i in 0..dirty {
                r.write_fd(pid, f, i);
            }
            for i in dirty..dirty + clean {
                r.read(pid, f, i);
            }
            r.drain();
            let mut sc = sc_root(1000, 0);
            r.shrink(0, &mut sc);
            assert_eq!(sc.nr_reclaimed, clean, "{spec}");
            assert_eq!(
                r.vm(Vm::PgscanFile),
                dirty + clean,
                "{spec}: both batches ran"
            );
            let woken = after || clean == 0;
            // Woken by the first batch, the flusher runs at the second one's start.
            let ran = r.vm(Vm::Pgpgout) > 0;
            assert_eq!(
                r.flusher_woken() || ran,
                woken,
                "{spec} dirty {dirty} clean {clean}"
            );
            r.enter(0);
            r.m.flusher_run();
            let pgpgout = if woken { 4 * dirty } else { 0 };
            assert_eq!(
                r.vm(Vm::Pgpgout),
                pgpgout,
                "{spec} dirty {dirty} clean {clean}"
            );
            r.check();
        }
    }
    // Anon batches never wake it (anon folios are never "dirty" to reclaim).
    let mut r = rig("mglru:7.2", LRU_GEN_CORE, 8192, zram(8192));
    let anon = r.m.create_process("anon", 0, 64);
    for i in 0..64 {
        r.store_anon(anon, i);
    }
    r.drain();
    r.cmd("+ 1 0 3").unwrap();
    r.cmd("+ 1 0 4").unwrap();
    let mut sc = sc_root(1000, 0);
    r.shrink(0, &mut sc);
    assert_eq!(r.vm(Vm::PgscanAnon), 64);
    assert!(!r.flusher_woken());
}

// ------------------------------------------------------------------------------------------
// 15 unify-writeback-throttling
// ------------------------------------------------------------------------------------------

/// memcg /a holding `unqueued` dirty page-cache folios (oldest first) and then 600 folios
/// under writeback that an earlier reclaim pass already marked PG_reclaim (shrink_folio_list's
/// case 2); then one direct `shrink_node` at priority 0 for `target`.
fn writeback_congestion_pass(spec: &str, unqueued: u64, target: Option<u16>) -> (Rig, ScanControl) {
    let mut mc = MachineConfig::simple(4096);
    mc.memcgs = vec![MemcgConfig::new("/a")];
    // The writes stay in flight during the pass (kernel threads run at each batch's start).
    mc.file_device.write_latency_ns = 10_000_000_000;
    let mut r = rig_cfg(spec, LRU_GEN_CORE, mc);
    let dirty = r.m.create_file("dirty", unqueued.max(2));
    let f = r.m.create_file("data", 600);
    let pid = r.m.create_process("writer", 1, 0);
    for i in 0..600 {
        r.write_fd(pid, f, i);
    }
    r.drain();
    r.enter(0);
    r.m.wakeup_flusher(true);
    r.m.flusher_run();
    assert_eq!(r.m.wb.nr_writeback, 600);
    for i in 0..600 {
        let pfn = r.page(f, i);
        r.m.folios[pfn as usize].set(pg::RECLAIM);
    }
    for i in 0..unqueued {
        r.write_fd(pid, dirty, i);
    }
    r.drain();
    let mut sc = ScanControl::new(1_000_000, target);
    sc.priority = 0;
    r.enter(pid);
    r.p.shrink_node(&mut r.m, 0, &mut sc);
    (r, sc)
}

#[test]
fn s15_cgroup_reclaim_of_congested_writeback_throttles() {
    // A cgroup reclaim pass isolates the 600 writeback folios: nr.dirty == nr.congested.
    // After 15 MGLRU feeds sc->nr, so shrink_node sets LRUVEC_CGROUP_CONGESTED and the direct
    // reclaimer sleeps one jiffy (VMSCAN_THROTTLE_CONGESTED); before, sc->nr stays empty for
    // MGLRU and nothing happens.
    for (spec, after) in [
        ("mglru:7.2-unify-writeback-throttling", false),
        ("mglru:7.2", true),
    ] {
        let (mut r, sc) = writeback_congestion_pass(spec, 0, Some(1));
        assert_eq!(
            r.vm(Vm::PgscanFile),
            600,
            "{spec}: every folio isolated once"
        );
        if after {
            let nr = sc.nr;
            assert_eq!(
                (nr.dirty, nr.congested, nr.writeback, nr.taken),
                (600, 600, 600, 600)
            );
        } else {
            assert_eq!(sc.nr.dirty, 0, "{spec}: MGLRU does not feed sc->nr");
        }
        assert_eq!(
            r.m.congested(1, 0)[1],
            after,
            "{spec}: LRUVEC_CGROUP_CONGESTED"
        );
        assert_eq!(
            r.vm(Vm::ThrottleNs),
            if after { NS_PER_JIFFY } else { 0 },
            "{spec}: one jiffy of VMSCAN_THROTTLE_CONGESTED"
        );
        // The bit is cleared at the end of do_try_to_free_pages for cgroup reclaim.
        r.enter(0);
        try_to_free_mem_cgroup_pages(&mut r.m, &mut r.p, 1, 32, true, false, None);
        assert!(!r.m.congested(1, 0)[1], "{spec}");
        r.check();
    }
    // Unqueued dirty folios in the pass (nr.dirty > nr.congested): not congested.
    let (mut r, sc) = writeback_congestion_pass("mglru:7.2", 64, Some(1));
    assert_eq!((sc.nr.dirty, sc.nr.congested), (664, 600));
    assert!(!r.m.congested(1, 0)[1]);
    assert_eq!(r.vm(Vm::ThrottleNs), 0);
    // Root reclaim returns from shrink_node right after lru_gen_shrink_node: no congestion
    // bookkeeping, no throttling, for MGLRU in 7.2 as before.
    let (mut r, _) = writeback_congestion_pass("mglru:7.2", 0, None);
    assert_eq!(r.vm(Vm::PgscanFile), 600);
    assert_eq!(*r.m.congested(0, 0), [false, false]);
    assert_eq!(*r.m.congested(1, 0), [false, false]);
    assert_eq!(r.vm(Vm::ThrottleNs), 0);
}

// ------------------------------------------------------------------------------------------
// MGLRU-FG patch 06/32 (fg-promotion)
// ------------------------------------------------------------------------------------------

#[test]
fn fg_promotion_promotes_on_refs_overflow_at_access_time() {
    // Two pages read five times each (interleaved). The fifth read finds the refs counter at
    // LRU_REFS_MAX. Without FG it only sets PG_workingset (protection comes later, in
    // sort_folio); with FG the folio moves one generation up at once and its count restarts.
    for (spec, fg) in [("mglru:7.2", false), ("mglru:7.2+fg-promotion", true)] {
        let mut r = rig(spec, LRU_GEN_CORE, 4096, SwapConfig::None);
        let f = r.m.create_file("data", 2);
        let pid = r.m.create_process("reader", 0, 0);
        r.read_passes(pid, f, 0..2, 1);
        r.drain();
        r.read_passes(pid, f, 0..2, 3);
        for i in 0..2 {
            let pfn = r.page(f, i);
            assert_eq!(r.seq_of(pfn), 0, "{spec}: not promoted before the overflow");
            assert_eq!(r.m.folios[pfn as usize].refs(), 3);
        }
        r.read_passes(pid, f, 0..2, 1);
        for i in 0..2 {
            let pfn = r.page(f, i);
            let fo = r.m.folios[pfn as usize];
            if fg {
                assert_eq!(r.seq_of(pfn), 1, "{spec}: promoted one generation");
                assert_eq!(fo.refs(), 0, "{spec}: count restarts");
                assert!(!fo.test(pg::WORKINGSET), "{spec}");
            } else {
                assert_eq!(r.seq_of(pfn), 0, "{spec}");
                assert_eq!(fo.refs(), 3, "{spec}");
                assert!(fo.test(pg::WORKINGSET), "{spec}");
            }
        }
        assert_eq!(r.pages(0, 1, FILE), if fg { 2 } else { 0 }, "{spec}");
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// Engine helpers
// ------------------------------------------------------------------------------------------

fn run_cfg(scn: &Scenario, cfg: MglruConfig, opts: &RunOptions) -> RunResult {
    sim::run(scn, PolicySpec::Mglru(cfg), opts).expect("the run completes")
}

fn run_spec(scn: &Scenario, spec: &str) -> RunResult {
    run_cfg(
        scn,
        mglru_cfg(spec),
        &RunOptions {
            seed: 1,
            ..Default::default()
        },
    )
}

fn phase(pattern: Pattern, target: Target, ops: u64, think_ns: u64) -> Phase {
    Phase {
        pattern,
        target,
        write_pct: 0,
        ops,
        think_ns,
        offset: 0,
        req_pages: 1,
    }
}

// ------------------------------------------------------------------------------------------
// Switches without behaviour change: byte-identical runs
// ------------------------------------------------------------------------------------------

/// The whole result as JSON, without the policy name (which names the switches).
fn fingerprint(r: &RunResult) -> String {
    let mut v = serde_json::to_value(r).expect("serialisable");
    v.as_object_mut().expect("an object").remove("policy");
    serde_json::to_string(&v).expect("JSON")
}

/// The lru_gen lines of one memcg (by kernel id) and node 0 in an lru_gen text: the
/// generation lines' (seq, [anon, file]) values.
fn lru_gen_gens(text: &str, memcg_id: u64) -> Vec<(u64, [u64; 2])> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("memcg ") {
            let id: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
            inside = id == memcg_id;
            continue;
        }
        // Generation lines have the sequence number in columns 1..11; tier and mm-walk lines
        // start with at least 12 blanks.
        if !inside || line.starts_with(" node") || line.len() < 12 || line[1..11].trim().is_empty()
        {
            continue;
        }
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|x| {
                x.trim_end_matches(['x', 'r', 'e', 'p', 'R', 'T'])
                    .parse()
                    .unwrap()
            })
            .collect();
        out.push((v[0], [v[2], v[3]]));
    }
    out
}

/// The lru_gen file of a memcg at a simulated time, from a sampling run.
fn sample_at(scn: &Scenario, cfg: MglruConfig, t: u64) -> String {
    let r = run_cfg(
        scn,
        cfg,
        &RunOptions {
            seed: 1,
            lru_gen_sample_ns: Some(t),
            max_sim_ns: Some(t + 1),
            ..Default::default()
        },
    );
    r.lru_gen_samples
        .iter()
        .find(|(at, _)| *at == t)
        .expect("a sample at t")
        .1
        .clone()
}

/// memcg-limit at scale 0.25 with proactive commands on /limited (id 2) at 300 ms: an
/// eviction of everything but the two youngest generations (at most 300 pages, file only), an
/// aging, and a sample of lru_gen every 100 ms. Returns the result.
fn memcg_limit_with_commands(cfg: MglruConfig) -> RunResult {
    let scn = micro::builtin("memcg-limit", 0.25).unwrap();
    let t = 300_000_000;
    let gens = lru_gen_gens(&sample_at(&scn, cfg, t), 2);
    let max = gens.last().unwrap().0;
    run_cfg(
        &scn,
        cfg,
        &RunOptions {
            seed: 1,
            lru_gen_sample_ns: Some(100_000_000),
            lru_gen_schedule: vec![
                (t, format!("- 2 0 {} 0 300", max - 2)),
                (t, format!("+ 2 0 {max}")),
                (2 * t, format!("- 2 0 {} 60", max - 1)),
            ],
            ..Default::default()
        },
    )
}

/// Runs `a` and `b` on scenarios that exercise reclaim of clean and dirty page cache, anon
/// and swap, cgroup reclaim, page-table walks, and the lru_gen commands, and asserts equal
/// results.
fn assert_identical(a: &str, b: &str) {
    let (ca, cb) = (mglru_cfg(a), mglru_cfg(b));
    assert_ne!(ca, cb);
    for name in ["file-only", "mixed-rw", "mmap-zipf"] {
        let scn = micro::builtin(name, 0.25).unwrap();
        let (ra, rb) = (run_spec(&scn, a), run_spec(&scn, b));
        assert!(ra.vmstat["pgscan_kswapd"] + ra.vmstat["pgscan_direct"] > 0);
        assert_eq!(fingerprint(&ra), fingerprint(&rb), "{name}: {a} vs {b}");
    }
    let (ra, rb) = (memcg_limit_with_commands(ca), memcg_limit_with_commands(cb));
    assert!(
        ra.lru_gen_commands.iter().all(|c| c.ok),
        "{:?}",
        ra.lru_gen_commands
    );
    assert_eq!(
        fingerprint(&ra),
        fingerprint(&rb),
        "memcg-limit: {a} vs {b}"
    );
}

#[test]
fn s01_s02_s03_change_nothing() {
    for w in [
        Switch::ConsolidateEvictableSize,
        Switch::RenameAgingRotationVars,
        Switch::RelocateScanBatchLimit,
    ] {
        assert_identical("mglru:7.1", &format!("mglru:7.1+{w}"));
        assert_identical("mglru:7.2", &format!("mglru:7.2-{w}"));
    }
}

#[test]
fn s12_changes_nothing_after_10() {
    assert_identical("mglru:7.2", "mglru:7.2-drop-reclaiming-arg");
    assert_identical(
        "mglru:7.1+common-dirty-writeback-reactivation",
        "mglru:7.1+common-dirty-writeback-reactivation+drop-reclaiming-arg",
    );
}

#[test]
fn s13_s14_change_nothing_after_11() {
    assert_identical("mglru:7.2", "mglru:7.2-remove-file-taken");
    assert_identical("mglru:7.2", "mglru:7.2-remove-unqueued-dirty");
    assert_identical(
        "mglru:7.1+simplify-dirty-writeback",
        "mglru:7.1+simplify-dirty-writeback+remove-file-taken+remove-unqueued-dirty",
    );
}

// ------------------------------------------------------------------------------------------
// Page-table walks (enabled 0x0002)
// ------------------------------------------------------------------------------------------

/// The mm-walk statistics line of the youngest generation of memcg `memcg_id` in an
/// lru_gen_full text: (values, suffix letters).
fn youngest_mm_stats(full: &str, memcg_id: u64) -> (Vec<u64>, String) {
    let mut inside = false;
    let mut last = None;
    for line in full.lines() {
        if let Some(rest) = line.strip_prefix("memcg ") {
            inside = rest
                .split_whitespace()
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                == memcg_id;
        } else if inside && line.len() > 22 && line[..22].trim().is_empty() {
            last = Some(line);
        }
    }
    let line = last.expect("an mm-walk statistics line");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let values = fields
        .iter()
        .map(|f| f[..f.len() - 1].parse().unwrap())
        .collect();
    let marks = fields.iter().map(|f| f.chars().last().unwrap()).collect();
    (values, marks)
}

#[test]
fn page_table_walks_promote_mapped_hot_pages_before_eviction() {
    // mmap-zipf: Zipf loads through a shared mapping twice the size of memory. With 0x0002
    // aging walks the page tables and moves young mapped folios to the youngest generation,
    // so fewer hot folios reach the oldest generation and get isolated, to be rescued only by
    // the rmap check there (kswapd scans ~7% less over seeds); without it the walk statistics
    // stay zero and the outcome differs. (Misses barely move: look-around and the rmap check
    // at eviction rescue most hot mapped folios either way.) One page per fault: read-around
    // fills memory with cold neighbours whose eviction would drown the difference.
    let mut scn = micro::builtin("mmap-zipf", 0.25).unwrap();
    scn.machine = scn.machine.one_page_per_fault();
    let run = |enabled: u32, seed: u64| {
        let mut cfg = mglru_cfg("mglru:7.2");
        cfg.enabled = enabled;
        run_cfg(
            &scn,
            cfg,
            &RunOptions {
                seed,
                ..Default::default()
            },
        )
    };
    let seeds = 1..=6u64;
    let walks: Vec<RunResult> = seeds.clone().map(|s| run(ALL_CAPS, s)).collect();
    for walk in &walks {
        let (stats, marks) = youngest_mm_stats(walk.lru_gen_full.as_ref().unwrap(), 1);
        assert_eq!(marks, "TYFA");
        assert!(
            stats[0] > 0 && stats[1] > 0,
            "leaf PTEs walked and found young: {stats:?}"
        );
        assert!(
            stats[2] > 0 && stats[3] > 0,
            "PTE tables found and added: {stats:?}"
        );
        assert!(stats[1] <= stats[0] && stats[3] <= stats[2]);
    }
    let scanned = |rs: &[RunResult]| -> u64 { rs.iter().map(|r| r.vmstat["pgscan_kswapd"]).sum() };
    for enabled in [LRU_GEN_CORE | LRU_GEN_NONLEAF_YOUNG, LRU_GEN_CORE] {
        let nowalks: Vec<RunResult> = seeds.clone().map(|s| run(enabled, s)).collect();
        for nowalk in &nowalks {
            let (stats, marks) = youngest_mm_stats(nowalk.lru_gen_full.as_ref().unwrap(), 1);
            assert_eq!(
                (stats, marks.as_str()),
                (vec![0; 4], "TYFA"),
                "{enabled:#x}"
            );
        }
        assert!(
            scanned(&walks) * 100 < scanned(&nowalks) * 97,
            "{enabled:#x}: walks keep hot folios out of the oldest generation: {} vs {}",
            scanned(&walks),
            scanned(&nowalks)
        );
        for (walk, nowalk) in walks.iter().zip(&nowalks) {
            assert_ne!(fingerprint(walk), fingerprint(nowalk), "{enabled:#x}");
        }
    }
    // Without walks the non-leaf bit has nothing to do.
    assert_eq!(
        fingerprint(&run(LRU_GEN_CORE | LRU_GEN_NONLEAF_YOUNG, 1)),
        fingerprint(&run(LRU_GEN_CORE, 1))
    );
}

// ------------------------------------------------------------------------------------------
// min_ttl_ms (thrashing prevention)
// ------------------------------------------------------------------------------------------

/// A 64 MiB machine without swap: a process writing 6000 pages of anonymous memory once (then
/// holding them) beside a reader that, after 1.5 s, loads a 12000-page shared file mapping in
/// a loop three times, `think_ns` between loads. The loop does not fit: every pass refaults,
/// and the generations turn over as fast as the reader goes. (64 MiB, because kswapd's first
/// lru_gen_age_node runs at DEF_PRIORITY, where `lruvec_is_sizable` needs 4096 evictable
/// pages: a smaller machine would be OOM-killed at once by any min_ttl_ms.)
fn ttl_scenario(think_ns: u64) -> Scenario {
    let proc_ = |name: &str, anon_pages: u64, mmaps: Vec<(usize, u32)>| ProcSpec {
        name: name.into(),
        memcg: "/".into(),
        anon_pages,
        mmaps,
        fadvise_random: Vec::new(),
    };
    let (anon, loop_pages) = (6000, 12000);
    // One page per fault: the reader's pace is set by its faults, which read-around would batch.
    let mut mc = MachineConfig::simple(16384).one_page_per_fault();
    mc.cpus = 2;
    let hog = Phase {
        write_pct: 100,
        ..phase(Pattern::Sequential { pages: anon }, Target::Anon, anon, 0)
    };
    let mapped = Target::File {
        file: 0,
        via: Via::Mmap,
    };
    let reader = phase(
        Pattern::Loop { pages: loop_pages },
        mapped,
        3 * loop_pages,
        think_ns,
    );
    Scenario {
        name: "min-ttl".into(),
        description: "anon holder plus a mapped file loop larger than memory".into(),
        machine: mc,
        files: vec![FileSpec {
            name: "data".into(),
            pages: loop_pages,
            tmpfs: false,
        }],
        procs: vec![
            proc_("hog", anon, Vec::new()),
            proc_("reader", 0, vec![(0, vm::SHARED)]),
        ],
        threads: vec![
            ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Phases(vec![hog]),
            },
            ThreadSpec {
                proc: 1,
                cpu: 1,
                stream: Stream::Delayed {
                    delay_ns: 1_500_000_000,
                    stream: Box::new(Stream::Phases(vec![reader])),
                },
            },
        ],
    }
}

#[test]
fn min_ttl_ms_kills_when_the_recent_working_set_cannot_be_kept() {
    // A mapped loop larger than memory (no swap) turns generations over in well under a
    // second. With min_ttl_ms = 1000 kswapd finds no generation older than a second and calls
    // the OOM killer, which kills the reader (the largest RSS) once the pressure has made the
    // old boot-time generations go; with min_ttl_ms = 0 or 300 (generations live longer than
    // that) the reader thrashes to the end. A reader ten times slower keeps its generations
    // for more than a second: no kill at 1000 either.
    let run = |think_ns: u64, ttl: u64| {
        let mut cfg = mglru_cfg("mglru:7.2");
        cfg.min_ttl_ms = ttl;
        run_cfg(&ttl_scenario(think_ns), cfg, &RunOptions::default())
    };
    for (think_ns, ttl, kill) in [
        (0, 0, false),
        (0, 300, false),
        (0, 1000, true),
        (100_000, 0, false),
        (100_000, 1000, false),
    ] {
        let r = run(think_ns, ttl);
        let reader = &r.threads[1];
        assert_eq!(
            r.oom_kills, kill as u64,
            "think {think_ns} min_ttl_ms {ttl}"
        );
        assert_eq!(r.vmstat["oom_kill"], kill as u64);
        assert_eq!(reader.killed, kill, "think {think_ns} min_ttl_ms {ttl}");
        assert!(!r.threads[0].killed);
        assert!(
            r.vmstat["workingset_refault_file"] > 1000,
            "the loop thrashed"
        );
        if kill {
            assert!(reader.accesses < 3 * 12000);
            assert!(reader.finish_ns > 1_500_000_000);
        } else {
            assert_eq!(reader.accesses, 3 * 12000);
        }
    }
}

// ------------------------------------------------------------------------------------------
// Proactive lru_gen commands through the engine
// ------------------------------------------------------------------------------------------

#[test]
fn proactive_eviction_reduces_memory_current_and_aging_adds_a_generation() {
    // memcg-limit at scale 0.25: /limited (kernel id 2) reads a file under a 2048-page limit.
    // At 300 ms: evict up to 500 pages of file from every generation but the two youngest,
    // then age once; an eviction touching the two youngest generations fails.
    let scn = micro::builtin("memcg-limit", 0.25).unwrap();
    let cfg = mglru_cfg("mglru:7.2");
    let t = 300_000_000;
    let before = lru_gen_gens(&sample_at(&scn, cfg, t), 2);
    let max = before.last().unwrap().0;
    let pages_before: u64 = before.iter().map(|(_, p)| p[0] + p[1]).sum();
    assert!(pages_before > 1500, "the memcg is full: {pages_before}");
    let r = run_cfg(
        &scn,
        cfg,
        &RunOptions {
            seed: 1,
            lru_gen_sample_ns: Some(t),
            lru_gen_schedule: vec![
                (t, format!("- 2 0 {} 0 500", max - 2)),
                (t, format!("+ 2 0 {max}")),
                (t, format!("- 2 0 {} 0 500", max)),
            ],
            ..Default::default()
        },
    );
    let c = &r.lru_gen_commands;
    assert_eq!(c.len(), 3);
    assert!(c[0].ok, "{:?}", c[0]);
    assert!(
        (500..500 + 64).contains(&c[0].pages_freed),
        "memory.current fell by about nr_to_reclaim: {}",
        c[0].pages_freed
    );
    assert!(c[1].ok, "{:?}", c[1]);
    assert!(
        !c[2].ok && c[2].error.as_deref() == Some("EINVAL"),
        "{:?}",
        c[2]
    );
    // The sample at 300 ms is taken right after the commands.
    let after = lru_gen_gens(&r.lru_gen_samples[0].1, 2);
    assert_eq!(r.lru_gen_samples[0].0, t);
    assert_eq!(
        after.last().unwrap().0,
        max + 1,
        "the aging made a generation"
    );
    // The generations lost the freed pages, less the folios the eviction drained from this
    // CPU's LRU batch onto them (at most one batch, 31).
    let pages_after: u64 = after.iter().map(|(_, p)| p[0] + p[1]).sum();
    let lost = pages_before - pages_after;
    assert!(
        (c[0].pages_freed - 31..=c[0].pages_freed).contains(&lost),
        "{lost} {}",
        c[0].pages_freed
    );
    // The same run without commands keeps the pages.
    let plain = run_cfg(
        &scn,
        cfg,
        &RunOptions {
            seed: 1,
            lru_gen_sample_ns: Some(t),
            ..Default::default()
        },
    );
    let untouched: u64 = lru_gen_gens(&plain.lru_gen_samples[0].1, 2)
        .iter()
        .map(|(_, p)| p[0] + p[1])
        .sum();
    assert_eq!(untouched, pages_before);
}

// ------------------------------------------------------------------------------------------
// lru_gen command validation (spec mglru.md §7.3)
// ------------------------------------------------------------------------------------------

#[test]
fn lru_gen_write_rejects_invalid_commands_like_the_kernel() {
    for spec in ["mglru:7.1", "mglru:7.2"] {
        let mut mc = MachineConfig::simple(4096);
        mc.memcgs = vec![MemcgConfig::new("/a")];
        let mut r = rig_cfg(spec, ALL_CAPS, mc);
        assert_eq!(r.max_seq(0), 3);
        for (cmd, err) in [
            ("+", "EINVAL"),
            ("+ 1 0", "EINVAL"),
            ("- 1", "EINVAL"),
            ("+ 1 0 3x", "EINVAL"),
            ("+ 1 0 3 60 1x", "EINVAL"),
            ("+ 1 0 3 60 1 7", "EINVAL"),
            ("* 1 0 3", "EINVAL"),
            ("a 1 0 3", "EINVAL"),
            ("+ 0 0 3", "EINVAL"),
            ("+ 3 0 3", "EINVAL"),
            ("+ 99 0 3", "EINVAL"),
            ("+ 1 1 3", "EINVAL"),
            ("+ 1 64 3", "EINVAL"),
            ("- 1 0 2", "EINVAL"),
            ("- 1 0 3", "EINVAL"),
            ("+ 1 0 4", "EINVAL"),
            ("+ 1 0 3 202", "EINVAL"),
            ("- 1 0 1 202", "EINVAL"),
        ] {
            assert_eq!(r.cmd(cmd), Err(err), "{spec}: {cmd:?}");
            assert_eq!(r.max_seq(0), 3, "{spec}: {cmd:?} changed nothing");
            assert_eq!(r.min_seq(0), [0, 0], "{spec}: {cmd:?} changed nothing");
        }
        // Several commands per write; the first error stops the rest.
        assert_eq!(r.cmd("+ 1 0 3, + 2 0 3;+ 1 0 4\n"), Ok(()));
        assert_eq!((r.max_seq(0), r.max_seq(1)), (5, 4));
        assert_eq!(r.cmd("+ 1 0 5; + 1 0 9; + 1 0 6"), Err("EINVAL"));
        assert_eq!(r.max_seq(0), 6);
        // 201 and "max" (anon only) are valid swappiness values on 7.x.
        assert_eq!(r.cmd("+ 1 0 6 201"), Ok(()));
        assert_eq!(r.cmd("+ 1 0 7 max 1"), Ok(()));
        assert_eq!(r.max_seq(0), 8);
        assert_eq!(r.cmd("- 1 0 6 max 100"), Ok(()));
        assert_eq!(r.cmd("- 1 0 6 201 100"), Ok(()));
        // Era C: aging answers EEXIST when someone else made the generation: here another
        // reclaimer has finished the mm-list walk for max_seq (mm_state.seq caught up).
        let max = r.max_seq(0);
        r.p.lruvecs[0].mm.seq = max;
        assert_eq!(r.cmd(&format!("+ 1 0 {max}")), Err("EEXIST"));
        assert_eq!(r.max_seq(0), max);
        r.check();
    }
}

#[test]
fn lru_gen_write_era_a_b_window_and_swappiness_rules() {
    for spec in ["mglru:6.1", "mglru:6.12"] {
        let mut r = rig(spec, ALL_CAPS, 4096, SwapConfig::None);
        // A full window (min_seq + MAX_NR_GENS - 1 <= max_seq) without force_scan: ERANGE.
        assert_eq!(r.cmd("+ 1 0 3 60 0"), Err("ERANGE"), "{spec}");
        assert_eq!(r.max_seq(0), 3);
        assert_eq!(
            r.cmd("+ 1 0 3 60"),
            Ok(()),
            "{spec}: force_scan defaults to on"
        );
        assert_eq!(r.max_seq(0), 4);
        assert_eq!(r.cmd("+ 1 0 3"), Ok(()), "{spec}: an old seq is a no-op");
        assert_eq!(r.max_seq(0), 4);
        assert_eq!(r.cmd("+ 1 0 5"), Err("EINVAL"), "{spec}");
        // Swappiness stops at 200; there is no anon-only mode.
        assert_eq!(r.cmd("+ 1 0 4 201"), Err("EINVAL"), "{spec}");
        assert_eq!(r.cmd("+ 1 0 4 max"), Err("EINVAL"), "{spec}");
        assert_eq!(r.cmd("+ 1 0 4 200"), Ok(()), "{spec}");
        assert_eq!(r.max_seq(0), 5);
        assert_eq!(r.cmd("- 1 0 4"), Err("EINVAL"), "{spec}: the two youngest");
        assert_eq!(r.cmd("- 1 0 3"), Ok(()), "{spec}");
        assert_eq!(r.cmd("* 1 0 3"), Err("EINVAL"), "{spec}");
        assert_eq!(r.cmd("+ 1 1 5"), Err("EINVAL"), "{spec}");
        r.check();
    }
}

// ------------------------------------------------------------------------------------------
// The lru_gen and lru_gen_full formats (spec mglru.md §7.2)
// ------------------------------------------------------------------------------------------

/// A right-aligned unsigned field of exactly `width` characters (`%<width>lu`).
fn field(s: &str, width: usize, what: &str) -> u64 {
    assert_eq!(s.len(), width, "{what}: {s:?} is not {width} wide");
    let digits = s.trim_start_matches(' ');
    assert!(
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
        "{what}: {s:?} is not a right-aligned number"
    );
    digits.parse().unwrap()
}

/// ` %10lu%c` groups from column `start` to the end of the line: (value, mark) pairs.
fn groups(line: &str, start: usize) -> Vec<(u64, char)> {
    let rest = &line[start..];
    assert_eq!(rest.len() % 12, 0, "{line:?}: groups of ' %10lu%c'");
    (0..rest.len() / 12)
        .map(|i| {
            let g = &rest[i * 12..(i + 1) * 12];
            assert_eq!(&g[..1], " ", "{line:?}");
            (field(&g[1..11], 10, line), g[11..].chars().next().unwrap())
        })
        .collect()
}

/// One generation line ` %10lu %10u %10lu%c %10lu%c`: (seq, age_ms, [anon, file], marks).
fn gen_line(line: &str) -> (u64, u64, [u64; 2], [char; 2]) {
    assert_eq!(line.len(), 46, "generation line {line:?}");
    assert_eq!(&line[..1], " ");
    assert_eq!(&line[11..12], " ");
    let seq = field(&line[1..11], 10, line);
    let age = field(&line[12..22], 10, line);
    let g = groups(line, 22);
    (seq, age, [g[0].0, g[1].0], [g[0].1, g[1].1])
}

/// One memcg block of an lru_gen file: its header, its node line, and the rest.
struct Block<'a> {
    header: &'a str,
    node: &'a str,
    lines: Vec<&'a str>,
}

fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out: Vec<Block> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(h) = lines.next() {
        assert!(h.starts_with("memcg "), "a memcg header, got {h:?}");
        let node = lines.next().expect("a node line");
        let mut body = Vec::new();
        while let Some(l) = lines.next_if(|l| !l.starts_with("memcg ")) {
            body.push(l);
        }
        out.push(Block {
            header: h,
            node,
            lines: body,
        });
    }
    out
}

/// Checks the header of a memcg: `memcg %5hu %s` (6.x) or, in 7.x, the id as the kernel's
/// 64-bit cgroup id (`%llu`) or still `%5hu`.
fn check_header(header: &str, id: u64, path: &str, era_c: bool) {
    let v6 = format!("memcg {id:5} {path}");
    if era_c {
        let v7 = format!("memcg {id} {path}");
        assert!(header == v6 || header == v7, "{header:?}");
    } else {
        assert_eq!(header, v6);
    }
}

/// The ages (ms) of the generations of memcg `id` in an lru_gen text.
fn gen_lines_of(text: &str, id: u64) -> Vec<u64> {
    let b = blocks(text);
    let blk = b
        .iter()
        .find(|b| b.header.split_whitespace().nth(1) == Some(&id.to_string()))
        .expect("the memcg");
    blk.lines.iter().map(|l| gen_line(l).1).collect()
}

#[test]
fn lru_gen_files_have_the_kernel_format() {
    let scn = micro::builtin("memcg-limit", 0.25).unwrap();
    let memcgs = [(1, "/"), (2, "/limited"), (3, "/free")];
    // Two agings of /limited and one of /free spread the generations' birth times; the
    // latter, with swappiness 200 (anon aged although there is no swap), walks the page
    // tables of /free's anon user.
    let schedule = vec![
        (100_000_000, "+ 2 0 3".to_string()),
        (150_000_000, "+ 3 0 3 200".to_string()),
        (200_000_000, "+ 2 0 4".to_string()),
    ];
    for spec in ["mglru:7.2", "mglru:7.1", "mglru:6.12", "mglru:6.1"] {
        let era_c = spec.starts_with("mglru:7");
        let r = run_cfg(
            &scn,
            mglru_cfg(spec),
            &RunOptions {
                seed: 1,
                lru_gen_schedule: schedule.clone(),
                ..Default::default()
            },
        );
        assert!(r.lru_gen_commands.iter().all(|c| c.ok), "{spec}");
        let short = blocks(r.lru_gen.as_deref().unwrap());
        let full = blocks(r.lru_gen_full.as_deref().unwrap());
        assert_eq!(
            (short.len(), full.len()),
            (3, 3),
            "{spec}: one block per memcg"
        );
        for ((s, f), &(id, path)) in short.iter().zip(&full).zip(&memcgs) {
            check_header(s.header, id, path, era_c);
            assert_eq!(s.header, f.header);
            assert_eq!(s.node, " node     0", "{spec}: ` node %5d`");
            assert_eq!(f.node, s.node);

            // lru_gen: one line per generation, from the oldest shown to max_seq.
            let gens: Vec<_> = s.lines.iter().map(|l| gen_line(l)).collect();
            assert!((2..=4).contains(&gens.len()), "{spec} {path}: {gens:?}");
            for w in gens.windows(2) {
                assert_eq!(w[1].0, w[0].0 + 1, "{spec}: consecutive seqs");
                assert!(w[1].1 <= w[0].1, "{spec}: younger generations are younger");
            }
            assert!(gens.iter().all(|g| g.3 == [' ', ' ']), "{spec}: no marks");

            // lru_gen_full: the last MAX_NR_GENS generations, each followed by four tier
            // lines and the mm-walk statistics line.
            assert_eq!(f.lines.len(), 4 * 6, "{spec} {path}");
            let max_seq = gens.last().unwrap().0;
            let fgens: Vec<_> = (0..4).map(|i| gen_line(f.lines[6 * i])).collect();
            let seqs: Vec<u64> = fgens.iter().map(|g| g.0).collect();
            assert_eq!(seqs, (max_seq - 3..=max_seq).collect::<Vec<_>>(), "{spec}");
            // min_seq of each type: the first generation without the 'x' mark.
            let min_seq: Vec<u64> = (0..2)
                .map(|t| fgens.iter().find(|g| g.3[t] != 'x').unwrap().0)
                .collect();
            for g in &fgens {
                for (&mark, &min) in g.3.iter().zip(&min_seq) {
                    let want = if g.0 < min { 'x' } else { ' ' };
                    assert_eq!(mark, want, "{spec} {path}: seq {}", g.0);
                }
                // The counts agree with lru_gen's for the generations both show.
                if let Some(s) = gens.iter().find(|s| s.0 == g.0) {
                    assert_eq!(s.2, g.2, "{spec}");
                }
            }
            let start = if era_c {
                min_seq[0].min(min_seq[1])
            } else {
                min_seq[0]
            };
            assert_eq!(gens[0].0, start, "{spec} {path}: lru_gen starts at min_seq");
            for (i, g) in fgens.iter().enumerate() {
                let seq = g.0;
                for tier in 0..4 {
                    let line = f.lines[6 * i + 1 + tier];
                    assert_eq!(line.len(), 22 + 6 * 12, "{spec}: tier line {line:?}");
                    assert!(line[..12].trim().is_empty());
                    assert_eq!(field(&line[12..22], 10, line), tier as u64);
                    let gr = groups(line, 22);
                    for t in 0..2 {
                        let m: String = gr[3 * t..3 * t + 3].iter().map(|x| x.1).collect();
                        let v: Vec<u64> = gr[3 * t..3 * t + 3].iter().map(|x| x.0).collect();
                        if seq == max_seq {
                            assert!(m.starts_with("RT"), "{spec}: {line:?}");
                            assert_eq!(v[2], 0);
                        } else if seq == min_seq[t] {
                            assert_eq!(m, "rep", "{spec}: {line:?}");
                            if !era_c && tier == 0 {
                                assert_eq!(v[2], 0, "{spec}: tier 0 is never protected");
                            }
                        } else {
                            assert_eq!(v, [0, 0, 0], "{spec}: {line:?}");
                            if era_c {
                                assert_eq!(m, "xxx", "{spec}: {line:?}");
                            }
                        }
                        if era_c && seq == max_seq {
                            assert_eq!(m, "RTx", "{spec}");
                        }
                    }
                }
                let mm = f.lines[6 * i + 5];
                assert!(mm[..22].trim().is_empty(), "{spec}: {mm:?}");
                let gr = groups(mm, 22);
                let letters: String = gr.iter().map(|x| x.1).collect();
                let names = if spec == "mglru:6.1" {
                    "LOYNFA"
                } else {
                    "TYFA"
                };
                assert_eq!(gr.len(), names.len(), "{spec}: {mm:?}");
                if seq == max_seq {
                    assert_eq!(letters, names, "{spec}");
                } else {
                    assert!(gr.iter().all(|x| x.0 == 0), "{spec}: {mm:?}");
                    if era_c {
                        assert_eq!(letters, "xxxx", "{spec}");
                    }
                }
            }
        }
        // The agings walked the page tables of /free's process; the root was never aged.
        let (stats, _) = youngest_mm_stats(r.lru_gen_full.as_deref().unwrap(), 3);
        assert!(stats[0] > 0, "{spec}: /free was walked: {stats:?}");
        let (stats, _) = youngest_mm_stats(r.lru_gen_full.as_deref().unwrap(), 1);
        assert!(stats.iter().all(|&x| x == 0), "{spec}: {stats:?}");
        let ages: Vec<u64> = gen_lines_of(r.lru_gen.as_deref().unwrap(), 2);
        assert!(
            ages.windows(2).any(|w| w[0] > w[1]),
            "{spec}: ages differ: {ages:?}"
        );
    }
}

#[test]
fn the_series_on_7_1_is_7_2_and_with_debians_changes_7_2_13() {
    // bisect builds its steps as 7.1 plus switches and takes 7.2 (or 7.2.13) as their end.
    let series: String = Switch::SERIES.iter().map(|w| format!("+{w}")).collect();
    let debian: String = Switch::DEBIAN_7_2_13
        .iter()
        .map(|w| format!("+{w}"))
        .collect();
    assert_identical("mglru:7.2", &format!("mglru:7.1{series}"));
    assert_identical("mglru:7.2.13", &format!("mglru:7.1{series}{debian}"));
}

/// `mglru:PREV` plus every behaviour whose first kernel is `next`, and (Debian's 6.12.117) with
/// or without the rows of a later kernel that `next` has and `prev` lacks or the other way
/// round (as `+name`/`-name` modifiers).
fn plus_rows_of(prev: Kernel, next: Kernel) -> String {
    let mods = next.behaviours().modifiers_from(prev.behaviours());
    let rows: String = next
        .behaviours()
        .iter()
        .filter(|w| w.first() == reclaimlab::behaviour::First::Kernel(next))
        .map(|w| format!("+{w}"))
        .collect();
    let debian: String = Switch::DEBIAN_6_12_117
        .iter()
        .filter(|w| next.behaviours().has(**w) != prev.behaviours().has(**w))
        .map(|w| format!("{}{w}", if next.behaviours().has(*w) { '+' } else { '-' }))
        .collect();
    let spec = format!("mglru:{prev}{rows}{debian}");
    assert_eq!(
        spec.parse::<PolicySpec>().unwrap().to_string(),
        format!("mglru:{prev}{mods}")
    );
    spec
}

#[test]
fn a_kernel_version_is_only_a_label_across_eras() {
    // bisect between eras runs "6.1 plus some 6.12 rows": the version a policy names must not
    // change a result beyond its behaviours, for each pair of adjacent kernels. 6.12 (Debian's
    // 6.12.117) also has patch 10's path, which 7.1 lacks.
    let step = plus_rows_of(Kernel::V6_1, Kernel::V6_12);
    assert!(
        step.ends_with("+common-dirty-writeback-reactivation"),
        "{step}"
    );
    assert_identical("mglru:6.12", &step);
    let step = plus_rows_of(Kernel::V6_12, Kernel::V7_1);
    assert!(
        step.ends_with("-common-dirty-writeback-reactivation"),
        "{step}"
    );
    assert_identical("mglru:7.1", &step);
    // The classical path: 6.1 plus the 15 classical rows of 6.12 is 6.12.
    for name in ["file-only", "mixed-rw", "mmap-zipf", "anon-only"] {
        let scn = micro::builtin(name, 0.25).unwrap();
        let classic_rows: String = Switch::OUTSIDE_MGLRU
            .iter()
            .filter(|w| w.first() == reclaimlab::behaviour::First::Kernel(Kernel::V6_12))
            .map(|w| format!("+{w}"))
            .collect();
        let opts = RunOptions {
            seed: 1,
            ..Default::default()
        };
        let a = sim::run(&scn, "classic:6.12".parse().unwrap(), &opts).unwrap();
        let spec: PolicySpec = format!("classic:6.1{classic_rows}").parse().unwrap();
        let b = sim::run(&scn, spec, &opts).unwrap();
        assert_eq!(fingerprint(&a), fingerprint(&b), "{name}");
        assert_ne!(
            fingerprint(&a),
            fingerprint(&sim::run(&scn, "classic:6.1".parse().unwrap(), &opts).unwrap()),
            "{name}: 6.1 and 6.12 differ"
        );
    }
}
