//! Tests of what the model's `mglru:6.1` takes from Debian's linux-source-6.1 (6.1.176) where
//! it differs from the spec's Era A and from 6.12: the reclaim loop (`get_nr_to_scan`,
//! `should_abort_scan`, `lru_gen_age_node`), look-around's activation limit, `isolate_folio`'s
//! may_unmap / may_writepage checks, and the 6.x tier cutoff against the other type's tier 0.
//! Each test compares 6.1 with the eras that behave differently, so that it fails when the
//! 6.1 rule is removed.

mod common;
use common::*;

use reclaimlab::consts::{Kernel, MIN_LRU_BATCH};
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::vmscan::ScanControl;
use reclaimlab::machine::{pg, SwapConfig, Vm};
use reclaimlab::policy::Policy;

/// A root lruvec whose file folios (mapped) sit in three generations: 10 in min_seq and 10
/// in min_seq + 1 (PTEs old), and 40 in max_seq (PTEs young). `should_run_aging` wants a generation
/// (three generations and more than half the pages in the youngest).
fn three_gen_lab(kernel: Kernel) -> (Lab, u32) {
    let mut l = Lab::new(kernel, SwapConfig::None);
    let f = l.m.create_file("f", 60);
    let p = l.m.create_process("p", 0, 0);
    l.m.mmap_file(p, f, vm::SHARED);
    for (lo, hi) in [(0, 10), (10, 20), (20, 60)] {
        for i in lo..hi {
            l.load(p, f, i);
        }
        l.drain();
        if hi < 60 {
            // A forced walk clears the young PTEs (their folios are in max_seq already)
            // and makes a new max_seq for the next group.
            let max = l.g().max_seq;
            l.cmd(&format!("+ 1 0 {max}")).expect("aging");
        }
    }
    l.settle();
    let g = l.g();
    assert_eq!(
        g.max_seq - g.min_seq[FILE],
        2,
        "{kernel}: three generations"
    );
    assert_eq!(l.seq(l.page(f, 0)), g.min_seq[FILE], "{kernel}");
    assert_eq!(l.seq(l.page(f, 59)), g.max_seq, "{kernel}");
    (l, f)
}

fn root_sc(nr_to_reclaim: u64, priority: i32, kswapd: bool) -> ScanControl {
    let mut sc = ScanControl::new(nr_to_reclaim, None);
    sc.priority = priority;
    sc.is_kswapd = kswapd;
    sc
}

/// `get_nr_to_scan`: below DEF_PRIORITY a direct reclaimer ages and, in 6.1, goes on
/// evicting with the budget it had; 6.12 ends the pass once it aged. (7.x: the aging and
/// eviction order of 7.1 and 7.2 is tested in mglru_switches.rs.) Kswapd in 6.1 neither ages
/// nor evicts here: it leaves the aging to `lru_gen_age_node`.
#[test]
fn direct_reclaim_keeps_evicting_after_aging_in_6_1_not_6_12() {
    for kernel in [Kernel::V6_1, Kernel::V6_12] {
        let (mut l, _) = three_gen_lab(kernel);
        let max = l.g().max_seq;
        l.enter(0);
        let mut sc = root_sc(32, 1, false);
        l.pol.shrink_node(&mut l.m, 0, &mut sc);
        assert_eq!(l.g().max_seq, max + 1, "{kernel}: aged");
        let evicts = kernel == Kernel::V6_1;
        assert_eq!(
            l.vm(Vm::PgstealDirect) > 0,
            evicts,
            "{kernel}: evicted after aging"
        );
        l.check();
    }
    let (mut l, _) = three_gen_lab(Kernel::V6_1);
    let max = l.g().max_seq;
    l.enter(0);
    let mut sc = root_sc(32, 1, true);
    l.pol.shrink_node(&mut l.m, 0, &mut sc);
    assert_eq!(
        l.g().max_seq,
        max,
        "6.1 kswapd: no aging in the eviction path"
    );
    assert_eq!(l.vm(Vm::PgscanKswapd), 0, "6.1 kswapd: nothing scanned");
    l.check();
}

/// `lru_gen_age_node` (6.1): a fresh balance_pgdat scan_control has `memcgs_need_aging`
/// clear, so the first call only sets it; the second ages. An eviction pass that reclaimed
/// MIN_LRU_BATCH pages without needing aging clears it again.
#[test]
fn kswapd_aging_is_skipped_once_per_balance_pgdat_in_6_1() {
    let (mut l, _) = three_gen_lab(Kernel::V6_1);
    let max = l.g().max_seq;
    l.enter(0);
    let mut sc = root_sc(0, 12, true);
    l.pol.kswapd_age_node(&mut l.m, 0, &mut sc);
    assert_eq!(l.g().max_seq, max, "first call skipped");
    assert!(sc.memcgs_need_aging);
    l.pol.kswapd_age_node(&mut l.m, 0, &mut sc);
    assert_eq!(l.g().max_seq, max + 1, "second call aged");
    // 6.12 ages (if at all) in the eviction path, never here.
    let (mut l, _) = three_gen_lab(Kernel::V6_12);
    let max = l.g().max_seq;
    let mut sc = root_sc(0, 12, true);
    sc.memcgs_need_aging = true;
    l.enter(0);
    l.pol.kswapd_age_node(&mut l.m, 0, &mut sc);
    assert_eq!(l.g().max_seq, max, "6.12 lru_gen_age_node does not age");
}

/// A lruvec with many clean, unmapped, old file folios in four generations and plenty of free
/// memory (above the low watermark).
fn clean_lab(kernel: Kernel) -> Lab {
    let mut l = Lab::new(kernel, SwapConfig::None);
    let f = l.m.create_file("f", 2000);
    for i in 0..2000 {
        l.read_n(f, i, 1);
        if i % 500 == 499 {
            l.drain();
            l.age(0);
        }
    }
    l.drain();
    l.settle();
    l
}

/// `should_abort_scan` (6.1): global direct reclaim below priority 10 stops after a batch
/// once every zone is above its low watermark, and credits itself MIN_LRU_BATCH pages; 6.12
/// goes on to its budget.
#[test]
fn direct_reclaim_stops_at_the_watermark_and_credits_a_batch_in_6_1() {
    for kernel in [Kernel::V6_1, Kernel::V6_12] {
        let mut l = clean_lab(kernel);
        let n = &l.m.nodes[0];
        assert!(
            n.nr_free() > n.wmark.low,
            "{kernel}: above the low watermark"
        );
        l.enter(0);
        let mut sc = root_sc(10_000, 3, false);
        l.pol.shrink_node(&mut l.m, 0, &mut sc);
        let stolen = l.vm(Vm::PgstealDirect);
        if kernel == Kernel::V6_1 {
            assert_eq!(stolen, MIN_LRU_BATCH, "{kernel}: one batch");
            assert_eq!(
                sc.nr_reclaimed,
                stolen + MIN_LRU_BATCH,
                "{kernel}: credited"
            );
        } else {
            assert!(stolen > MIN_LRU_BATCH, "{kernel}: {stolen}");
            assert_eq!(sc.nr_reclaimed, stolen, "{kernel}");
        }
        l.check();
    }
}

/// `isolate_folio` (6.1): without may_unmap a mapped folio is skipped (not isolated, not
/// counted in pgscan); 6.12+ never get here without may_unmap (`lru_gen_shrink_node` returns
/// at once).
#[test]
fn isolate_folio_skips_mapped_folios_without_may_unmap_in_6_1() {
    for may_unmap in [false, true] {
        let (mut l, f) = three_gen_lab(Kernel::V6_1);
        l.enter(0);
        let mut sc = root_sc(32, 1, false);
        sc.may_unmap = may_unmap;
        l.pol.shrink_node(&mut l.m, 0, &mut sc);
        let scanned = l.vm(Vm::PgscanDirect);
        assert_eq!(scanned > 0, may_unmap, "may_unmap {may_unmap}: {scanned}");
        assert_eq!(l.resident(f, 0), !may_unmap, "may_unmap {may_unmap}");
        l.check();
    }
}

/// A file of 64 pages mapped by one process, with the target (page 10) in the oldest
/// generation, young, and `extra` other young neighbours (pages 0..extra), all in older
/// generations than max_seq.
fn look_lab(kernel: Kernel, extra: u64) -> (Lab, u32) {
    let mut l = Lab::new(kernel, SwapConfig::None);
    let f = l.m.create_file("f", 64);
    let p = l.m.create_process("p", 0, 0);
    l.m.mmap_file(p, f, vm::SHARED);
    for i in 0..64 {
        l.load(p, f, i);
    }
    l.drain();
    l.cmd(&format!("+ 1 0 {}", l.g().max_seq)).expect("aging");
    l.age(0);
    l.age(0);
    for i in (0..extra).chain([10]) {
        l.load(p, f, i);
    }
    (l, f)
}

/// `lru_gen_look_around` (6.1) without a walker: fewer than PAGEVEC_SIZE young neighbours
/// are activated one by one (PGACTIVATE at the drain); 15 or more go to max_seq under the
/// LRU lock (no PGACTIVATE). 6.12 activates them one by one however many. (With `extra` 20
/// the target is one of the 20: 19 neighbours.)
#[test]
fn look_around_activates_at_most_fourteen_in_6_1() {
    for (kernel, extra, activations) in [
        (Kernel::V6_1, 5, 5),
        (Kernel::V6_1, 20, 0),
        (Kernel::V6_12, 20, 19),
    ] {
        let (mut l, f) = look_lab(kernel, extra);
        let t = l.page(f, 10);
        l.enter(0);
        let sc = ScanControl::new(32, None);
        l.pol.folio_check_references(&mut l.m, t, &sc);
        l.drain();
        let max = l.g().max_seq;
        assert_eq!(l.vm(Vm::Pgactivate), activations, "{kernel} {extra}");
        for i in (0..extra).filter(|&i| i != 10) {
            assert_eq!(l.seq(l.page(f, i)), max, "{kernel} {extra}: page {i}");
        }
        assert!(l.seq(l.page(f, extra)) < max, "{kernel} {extra}: not young");
        l.check();
    }
}

/// 6.x `get_type_to_scan` also sets the tier cutoff of the type it picks, against the other
/// type's tier 0 at the swappiness gains. Here file is picked (its tier 0 refaults less than
/// anon's), and its tier 1 (800/1000 refaulted) is protected against anon's tier 0
/// (300/1000 at gain 60 vs 140) though not against file's own tier 0 (500/1000 at 1:2).
#[test]
fn tier_cutoff_of_the_picked_type_is_against_the_other_types_tier_0_in_6_x() {
    for kernel in [Kernel::V6_1, Kernel::V6_12] {
        let mut l = Lab::new(kernel, zram(2048));
        let f = l.m.create_file("f", 2);
        let p = l.m.create_process("p", 0, 2);
        l.store(p, 0);
        l.read(p, f, 0);
        l.read(p, f, 1);
        l.drain();
        for pte in l.m.procs[p as usize].vmas[0].ptes.iter_mut() {
            pte.mkold();
        }
        let (a, fl) = (l.anon(p, 0), l.page(f, 0));
        while l.seq(a) != l.g().min_seq[ANON] || l.seq(fl) != l.g().min_seq[FILE] {
            l.age(60);
        }
        // Reads until PG_workingset: refs 1, tier 1 (6.x folio_lru_refs).
        while !l.has(fl, pg::WORKINGSET) {
            l.read_n(f, 0, 1);
        }
        assert_eq!(l.refs(fl), 0, "{kernel}: counter");
        assert!(l.has(fl, pg::WORKINGSET), "{kernel}");
        l.clear_ctrl(ANON);
        l.clear_ctrl(FILE);
        let g = l.g_mut();
        g.avg_refaulted[ANON][0] = 300;
        g.avg_total[ANON][0] = 1000;
        g.avg_refaulted[FILE][0] = 500;
        g.avg_total[FILE][0] = 1000;
        g.avg_refaulted[FILE][1] = 800;
        g.avg_total[FILE][1] = 1000;
        let min = l.g().min_seq[FILE];
        l.evict(min, 60, 1);
        assert_eq!(l.vm(Vm::PgscanAnon), 0, "{kernel}: file picked");
        assert!(l.resident(f, 0), "{kernel}: tier 1 protected");
        assert_eq!(l.seq(fl), min + 1, "{kernel}: moved to min_seq + 1");
        assert!(!l.resident(f, 1), "{kernel}: tier 0 evicted");
        assert_eq!(l.era, era_of(kernel.behaviours()));
        assert_ne!(l.era, MglruEra::C);
        l.check();
    }
}

/// `shrink_node_memcgs` for cgroup reclaim: 6.12+ walk the target's subtree partially with a
/// shared cursor and stop once the goal is met, so a small memory.reclaim of the parent ends
/// in its first child and the next one starts after it; 6.1 visits every memcg at every
/// priority, with no cursor.
#[test]
fn cgroup_reclaim_walks_memcgs_partially_from_6_12() {
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_2] {
        let mut cfg = reclaimlab::machine::MachineConfig::simple(65536);
        cfg.kernel = kernel;
        cfg.memcgs = ["/p", "/p/a", "/p/b"]
            .iter()
            .map(|p| reclaimlab::machine::MemcgConfig::new(p))
            .collect();
        let mut l = Lab::build(cfg, reclaimlab::policy::mglru::MglruConfig::new(kernel));
        let (a, b) = (2u16, 3u16);
        for memcg in [a, b] {
            let f = l.m.create_file("f", 8000);
            let p = l.m.create_process("p", memcg, 0);
            for i in 0..8000 {
                l.read(p, f, i);
            }
            l.drain();
        }
        l.enter(0);
        let freed =
            l.m.memory_reclaim(&mut l.pol, 1, 32, None)
                .expect("reclaimed");
        assert!(freed >= 32, "{kernel}: {freed}");
        let scan = |l: &Lab, mc: u16| l.m.memcgs[mc as usize].events.get(Vm::PgscanDirect);
        let cursor = l.m.reclaim_iter.get(&(1, 0)).copied();
        if kernel == Kernel::V6_1 {
            assert_eq!(cursor, None, "{kernel}: no cursor");
            assert!(scan(&l, b) > 0, "{kernel}: every memcg visited");
        } else {
            assert_eq!(cursor, Some(2), "{kernel}: stopped after /p/a");
            assert!(scan(&l, a) > scan(&l, b), "{kernel}: /p/a reclaimed last");
        }
        l.check();
    }
}
