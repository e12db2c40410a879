//! The MGLRU changes beside the 2026 series in Debian's linux 7.2.13 (`mglru:7.2.13`), one
//! switch each; every test fails when its switch's behaviour is removed.

mod common;

use common::*;
use reclaimlab::consts::Kernel;
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::vmscan::ScanControl;
use reclaimlab::machine::{pg, MachineConfig, MemcgConfig, Vm};
use reclaimlab::policy::mglru::{MglruConfig, Switch};
use reclaimlab::policy::{FolioRef, Policy};

/// A 7.2 lab with extra switches.
fn lab(extra: &[Switch]) -> Lab {
    let mut cfg = MachineConfig::simple(8192);
    cfg.kernel = Kernel::V7_2;
    let mut pcfg = MglruConfig::new(Kernel::V7_2);
    pcfg.switches = extra.iter().fold(pcfg.switches, |s, &w| s.with(w));
    Lab::build(cfg, pcfg)
}

/// `lru_gen_folio_seq` (7.2.13): a page read() before the batch is drained carries
/// PG_referenced and is placed like a workingset folio, in max_seq - 2, not the oldest.
#[test]
fn referenced_placement_puts_read_pages_in_the_second_oldest_generation() {
    for (extra, want_back) in [(&[][..], 3), (&[Switch::ReferencedPlacement][..], 2)] {
        let mut l = lab(extra);
        let f = l.m.create_file("f", 64);
        let r = l.m.create_process("r", 0, 0);
        l.read(r, f, 0);
        l.drain();
        let pfn = l.page(f, 0);
        let (max, min) = (l.g().max_seq, l.g().min_seq[1]);
        assert_eq!(l.seq(pfn), (max - want_back).max(min), "{extra:?}");
        l.check();
    }
}

/// `folio_add_lru` in a fault (7.2.13): a mapped page faulted in for the first time is not
/// made active; it is marked accessed (PG_referenced), so with `referenced-placement` it lands
/// in max_seq - 2 instead of the active max_seq - 1.
#[test]
fn fault_marks_accessed_instead_of_activating() {
    for (extra, want_back, referenced) in [
        (&[Switch::ReferencedPlacement][..], 1, false),
        (
            &[Switch::ReferencedPlacement, Switch::FaultMarksAccessed][..],
            2,
            true,
        ),
    ] {
        let mut l = lab(extra);
        let f = l.m.create_file("f", 64);
        let p = l.m.create_process("p", 0, 0);
        assert_eq!(l.m.mmap_file(p, f, vm::SHARED), 1);
        l.load(p, f, 0);
        l.drain();
        let pfn = l.page(f, 0);
        assert_eq!(l.seq(pfn), l.g().max_seq - want_back, "{extra:?}");
        assert_eq!(l.has(pfn, pg::REFERENCED), referenced, "{extra:?}");
        l.check();
    }
}

/// `lru_gen_set_refs` (7.2.13, "promote on second access"): the second sighting of a young
/// mapped folio activates it but only counts a reference; PG_workingset comes with the third.
#[test]
fn second_access_promotion_counts_before_it_promotes() {
    for (extra, workingset_at) in [(&[][..], 2), (&[Switch::SecondAccessPromotion][..], 3)] {
        let mut l = lab(extra);
        let f = l.m.create_file("f", 64);
        let p = l.m.create_process("p", 0, 0);
        l.m.mmap_file(p, f, vm::SHARED);
        l.load(p, f, 0);
        l.drain();
        let pfn = l.page(f, 0);
        let sc = ScanControl::new(32, None);
        for sighting in 1..=3 {
            l.load(p, f, 0);
            l.enter(0);
            let r = l.pol.folio_check_references(&mut l.m, pfn, &sc);
            let want = if sighting == 1 {
                FolioRef::Keep
            } else {
                FolioRef::Activate
            };
            assert_eq!(r, want, "{extra:?} sighting {sighting}");
            assert_eq!(
                l.has(pfn, pg::WORKINGSET),
                sighting >= workingset_at,
                "{extra:?} sighting {sighting}"
            );
        }
    }
}

/// `lru_gen_refault` (7.2.13): a recent refault in a fault counts workingset_activate only if
/// the evicted folio was in the workingset.
#[test]
fn refault_counts_activation_for_workingset_folios_only() {
    for (extra, counted) in [
        (&[][..], true),
        (&[Switch::RefaultActivateWorkingsetOnly][..], false),
    ] {
        let mut l = lab(extra);
        let f = l.m.create_file("f", 64);
        let p = l.m.create_process("p", 0, 0);
        l.m.mmap_file(p, f, vm::SHARED);
        l.load(p, f, 0);
        l.drain();
        l.evict_page(f, 0);
        let (_, ws) = l.shadow(f, 0);
        assert!(!ws, "{extra:?}: evicted outside the workingset");
        let before = l.m.memcgs[0].events.get(Vm::WorkingsetActivateFile);
        l.load(p, f, 0);
        assert_eq!(l.m.memcgs[0].events.get(Vm::WorkingsetRefaultFile), 1);
        let activated = l.m.memcgs[0].events.get(Vm::WorkingsetActivateFile) - before;
        assert_eq!(activated, counted as u64, "{extra:?}");
    }
}

/// `should_abort_scan` (7.2.13): memcg reclaim stops once it has reclaimed its goal, where
/// 7.2 goes on ("don't abort memcg reclaim to ensure fairness") until the budget is used.
#[test]
fn memcg_reclaim_aborts_at_its_goal() {
    let mut reclaimed = Vec::new();
    for extra in [&[][..], &[Switch::MemcgReclaimAbortsAtGoal][..]] {
        let mut cfg = MachineConfig::simple(8192);
        cfg.kernel = Kernel::V7_2;
        cfg.memcgs.push(MemcgConfig::new("/a"));
        let mut pcfg = MglruConfig::new(Kernel::V7_2);
        pcfg.switches = extra.iter().fold(pcfg.switches, |s, &w| s.with(w));
        let mut l = Lab::build(cfg, pcfg);
        let memcg = l.m.memcg_by_path("/a").unwrap();
        let f = l.m.create_file("f", 4096);
        let r = l.m.create_process("r", memcg, 0);
        for page in 0..4096 {
            l.read(r, f, page);
        }
        l.drain();
        let mut sc = ScanControl::new(32, Some(memcg));
        sc.priority = 4;
        l.enter(0);
        l.pol.try_to_shrink_lruvec(&mut l.m, memcg, 0, &mut sc);
        reclaimed.push(sc.nr_reclaimed);
        l.check();
    }
    assert!(reclaimed[0] > 64, "7.2 uses its budget: {reclaimed:?}");
    assert!(
        reclaimed[1] >= 32 && reclaimed[1] <= 64,
        "7.2.13 stops at the goal (one 64-folio batch): {reclaimed:?}"
    );
}
