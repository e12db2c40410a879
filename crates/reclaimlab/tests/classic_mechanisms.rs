//! Unit tests of each classical-LRU mechanism against the specification
//! (/work/shared/spec/classic-lru.md): the per-CPU batches and two-touch promotion (§2),
//! reference checking on the inactive list (§3), get_scan_count (§4.7), lru_note_cost (§4.9),
//! inactive_is_low and active-list aging (§4.10), dirty and writeback folios in reclaim (§4.12,
//! §7), workingset refault detection (§5) and memcg charging with its OOM killer (§6.1).
//!
//! Every test builds a small machine, drives one mechanism directly (accesses, drains, single
//! shrink_* calls), asserts what the spec says must be observable, and checks every machine
//! invariant at the end. The assertions are chosen so that removing or altering the mechanism
//! a test names makes it fail (checked by mutating the model one mechanism at a time).

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::{int_sqrt, Kernel, EVICTION_MASK, MAX_RECLAIM_RETRIES, PAGE_SHIFT};
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::vmscan::ScanControl;
use reclaimlab::machine::writeback::WbStat;
use reclaimlab::machine::{pg, Ctx, Machine, MachineConfig, MemcgConfig, Pfn, SwapConfig, Vm};
use reclaimlab::policy::classic::{
    Classic, ScanBalance, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE,
};
use reclaimlab::policy::Policy;

mod common;
use common::classic::*;
use common::zram;

/// get_scan_count's SCAN_FRACT weights, written out from classic-lru.md §4.7.
fn spec_fraction(swappiness: u64, anon_cost: u64, file_cost: u64) -> [u64; 2] {
    let total = anon_cost + file_cost;
    let a = total + anon_cost;
    let f = total + file_cost;
    let t = a + f;
    [
        swappiness * (t + 1) / (a + 1),
        (200 - swappiness) * (t + 1) / (f + 1),
    ]
}

/// inactive_is_low written out from classic-lru.md §4.10.
fn spec_inactive_is_low(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - PAGE_SHIFT);
    let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

// ------------------------------------------------------------------------------------------
// §2.1, §2.2: per-CPU batches and two-touch promotion
// ------------------------------------------------------------------------------------------

/// §2.2 rows 1 and 3 (PG_lru set): the first read sets PG_referenced on an inactive folio; a
/// second read right after it, within the same folio, does not count (filemap_read marks a
/// folio once per run of reads in it); the next read of it after another page queues it in
/// lru_activate, and the drain moves it to the active list with PGACTIVATE (global and memcg)
/// exactly once. Further reads only set PG_referenced again (row 1 on an active folio), then
/// nothing (row 4).
#[test]
fn fd_read_two_touch_promotion_activates_on_second_read_with_one_pgactivate() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 16);
    let p = m.create_process("p", 0, 0);

    let out = read(&mut m, &mut pol, p, f, 0);
    assert!(!out.hit && out.major, "first read is a miss");
    let pfn = page_of(&m, f, 0);
    // Until the lru_add batch drains, PG_lru is clear and the folio is not in the LRU sizes.
    assert!(has(&m, pfn, pg::IN_BATCH) && !has(&m, pfn, pg::LRU));
    assert_eq!(lru(&pol), [0; 5]);
    drain(&mut m, &mut pol);
    assert!(has(&m, pfn, pg::LRU), "flags {:#x}", flags(&m, pfn));
    assert!(has(&m, pfn, pg::REFERENCED), "one read marks it referenced");
    assert!(!has(&m, pfn, pg::ACTIVE), "one read does not activate");
    assert_eq!(lru(&pol), [0, 0, 1, 0, 0]);
    assert_eq!(m.vm.get(Vm::Pgactivate), 0);
    let age = pol.lruvec(0, 0).nonresident_age;

    // The same folio again at once: one run of reads, one mark.
    read(&mut m, &mut pol, p, f, 0);
    drain(&mut m, &mut pol);
    assert!(!has(&m, pfn, pg::ACTIVE) && has(&m, pfn, pg::REFERENCED));
    assert_eq!(m.vm.get(Vm::Pgactivate), 0);
    assert_eq!(pol.lruvec(0, 0).nonresident_age, age);

    read(&mut m, &mut pol, p, f, 1);
    let out = read(&mut m, &mut pol, p, f, 0);
    assert!(out.hit);
    // folio_activate only queues it: still inactive until the lru_activate batch drains, but
    // PG_referenced is already cleared and workingset_activation has aged the clock.
    assert!(!has(&m, pfn, pg::ACTIVE) && !has(&m, pfn, pg::REFERENCED));
    assert_eq!(m.vm.get(Vm::Pgactivate), 0);
    assert_eq!(pol.lruvec(0, 0).nonresident_age, age + 1);
    drain(&mut m, &mut pol);
    assert!(has(&m, pfn, pg::ACTIVE) && has(&m, pfn, pg::LRU));
    assert_eq!(lru(&pol), [0, 0, 1, 1, 0], "page 1 stays inactive");
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    assert_eq!(m.memcg_events_hier(0).get(Vm::Pgactivate), 1);

    // Active, unreferenced → active, referenced; then nothing at all. (Pages 2 and 3 are read
    // once each in between, so every read of page 0 counts.)
    read(&mut m, &mut pol, p, f, 2);
    read(&mut m, &mut pol, p, f, 0);
    drain(&mut m, &mut pol);
    assert!(has(&m, pfn, pg::ACTIVE) && has(&m, pfn, pg::REFERENCED));
    read(&mut m, &mut pol, p, f, 3);
    read(&mut m, &mut pol, p, f, 0);
    drain(&mut m, &mut pol);
    assert!(has(&m, pfn, pg::ACTIVE) && has(&m, pfn, pg::REFERENCED));
    assert_eq!(lru(&pol), [0, 0, 3, 1, 0]);
    assert_eq!(m.vm.get(Vm::Pgactivate), 1, "PGACTIVATE counted once");
    assert_eq!(pol.lruvec(0, 0).nonresident_age, age + 1);
    check(&m, &pol);
}

/// §2.2 row 3, PG_lru clear: a second read while the folio still sits in this CPU's lru_add
/// batch takes `__lru_cache_activate_folio`: PG_active is set in place and the folio lands on
/// the active list when the batch drains, with no PGACTIVATE (§8: "not counted: ... the
/// set-active-in-batch path").
#[test]
fn second_read_inside_lru_add_batch_sets_active_without_pgactivate() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 16);
    let p = m.create_process("p", 0, 0);
    read(&mut m, &mut pol, p, f, 3);
    read(&mut m, &mut pol, p, f, 4);
    read(&mut m, &mut pol, p, f, 3);
    let pfn = page_of(&m, f, 3);
    assert!(has(&m, pfn, pg::IN_BATCH) && !has(&m, pfn, pg::LRU));
    assert!(has(&m, pfn, pg::ACTIVE), "PG_active set inside the batch");
    assert!(!has(&m, pfn, pg::REFERENCED));
    assert_eq!(m.vm.get(Vm::Pgactivate), 0);
    assert_eq!(
        pol.lruvec(0, 0).nonresident_age,
        1,
        "workingset_activation ran"
    );
    drain(&mut m, &mut pol);
    assert_eq!(
        lru(&pol),
        [0, 0, 1, 1, 0],
        "lru_add put page 3 on the active list, page 4 on the inactive one"
    );
    assert!(has(&m, pfn, pg::ACTIVE) && has(&m, pfn, pg::LRU));
    assert_eq!(m.vm.get(Vm::Pgactivate), 0, "no PGACTIVATE on this path");
    assert_eq!(m.memcg_events_hier(0).get(Vm::Pgactivate), 0);
    check(&m, &pol);
}

/// §2.1 and §11: the per-CPU lru_add batch holds 15 folios in v6.1 and 31 in v6.12; it is
/// moved to the LRU when it fills, not before.
#[test]
fn lru_add_batch_flushes_at_15_folios_in_6_1_and_31_in_6_12() {
    for (kernel, size) in [(Kernel::V6_1, 15u64), (Kernel::V6_12, 31u64)] {
        let (mut m, mut pol) = machine(4096, kernel, SwapConfig::None);
        let f = m.create_file("f", 64);
        let p = m.create_process("p", 0, 0);
        for i in 0..size - 1 {
            read(&mut m, &mut pol, p, f, i);
        }
        assert_eq!(lru(&pol), [0; 5], "{kernel}: nothing on the LRU yet");
        assert_eq!(m.lru_add_batch[0].len() as u64, size - 1, "{kernel}");
        assert!((0..size - 1).all(|i| has(&m, page_of(&m, f, i), pg::IN_BATCH)));
        read(&mut m, &mut pol, p, f, size - 1);
        assert_eq!(
            lru(&pol),
            [0, 0, size, 0, 0],
            "{kernel}: full batch flushed"
        );
        assert!(m.lru_add_batch[0].is_empty(), "{kernel}");
        assert!((0..size).all(|i| has(&m, page_of(&m, f, i), pg::LRU)));
        check(&m, &pol);
    }
}

// ------------------------------------------------------------------------------------------
// §3: folio_check_references
// ------------------------------------------------------------------------------------------

/// §3.2 "activate on the second pass": a mapped file folio whose PTE is young on the first
/// inactive scan is kept (PG_referenced set, back on the inactive list); young again on the
/// second scan, it is activated (PGACTIVATE). A folio that is not touched again between the
/// scans is reclaimed by the second one (rp = 0, rf = 1: RECLAIM_CLEAN, clean), which shows
/// the first scan cleared its young bit.
#[test]
fn mapped_folio_activates_only_when_young_on_two_consecutive_scans() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 8);
    let p = m.create_process("p", 0, 0);
    m.mmap_file(p, f, vm::SHARED);
    load_mapped(&mut m, &mut pol, p, f, 0);
    load_mapped(&mut m, &mut pol, p, f, 1);
    let (hot, cold) = (page_of(&m, f, 0), page_of(&m, f, 1));
    assert_eq!(m.folios[hot as usize].mapcount, 1);
    drain(&mut m, &mut pol);
    // A page-table access does not call folio_mark_accessed.
    assert!(!has(&m, hot, pg::REFERENCED));

    // First pass: one young mapping, no PG_referenced → KEEP with PG_referenced set.
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 32), 0);
    for pfn in [hot, cold] {
        assert!(has(&m, pfn, pg::REFERENCED) && has(&m, pfn, pg::LRU));
        assert!(!has(&m, pfn, pg::ACTIVE), "not activated on the first pass");
    }
    assert_eq!(lru(&pol), [0, 0, 2, 0, 0]);
    assert_eq!(m.vm.get(Vm::Pgactivate), 0);

    // Only `hot` is touched again.
    load_mapped(&mut m, &mut pol, p, f, 0);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 32), 1);
    assert!(
        has(&m, hot, pg::ACTIVE) && has(&m, hot, pg::LRU),
        "second pass activates"
    );
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    assert_eq!(m.memcg_events_hier(0).get(Vm::Pgactivate), 1);
    assert_eq!(lru(&pol), [0, 0, 0, 1, 0]);
    shadow_of(&m, f, 1); // `cold` was unmapped and evicted.
    check(&m, &pol);
}

/// A file page mapped by `p` (young) and `q`; `q` then exits from `at`: returns the machine,
/// the folio, `p` and when the exit is done. Its `free_pgtables` holds the anon_vma and then
/// the file's `i_mmap_rwsem` for write, `vma_unlink_ns` each, after its one zapped entry.
fn exit_during_reclaim(kernel: Kernel) -> (Machine, Classic, Pfn, u32, u64) {
    let (mut m, mut pol) = machine(4096, kernel, SwapConfig::None);
    let f = m.create_file("f", 8);
    let p = m.create_process("p", 0, 0);
    let q = m.create_process("q", 0, 0);
    m.mmap_file(p, f, vm::SHARED);
    m.mmap_file(q, f, vm::SHARED);
    load_mapped(&mut m, &mut pol, p, f, 0);
    drain(&mut m, &mut pol);
    let pfn = page_of(&m, f, 0);
    let at = m.now() + 1_000;
    enter_at(&mut m, q, at);
    let end = m.exit_mmap(&mut pol, q, at);
    let cost = &m.cfg.cost;
    assert_eq!(end, at + cost.zap_pte_ns + 2 * cost.vma_unlink_ns);
    (m, pol, pfn, p, end)
}

/// §3.2 "rmap lock contention: rotate": while an exit unlinks its VMA from the file's reverse
/// map (`unlink_file_vma` holds `i_mmap_rwsem` for write), `folio_referenced`'s read trylock
/// fails and returns -1: `shrink_folio_list` keeps the folio without looking at its PTEs (the
/// young bit survives, PG_referenced is not set). Once the exit is done the first pass finds it
/// young as usual and sets PG_referenced.
#[test]
fn rmap_lock_contention_keeps_the_folio_without_looking_at_its_ptes() {
    for kernel in [Kernel::V6_1, Kernel::V6_12] {
        let (mut m, mut pol, pfn, p, end) = exit_during_reclaim(kernel);
        // From the start of the i_mmap_rwsem hold (isolation takes some of it).
        let i_mmap_held_from = end - m.cfg.cost.vma_unlink_ns;
        enter_at(&mut m, 0, i_mmap_held_from);
        let mut sc = ScanControl::new(32, None);
        let freed = pol.shrink_inactive_list(&mut m, 32, 0, 0, &mut sc, LRU_INACTIVE_FILE);
        assert_eq!(freed, 0, "{kernel}");
        assert_eq!(m.rmap_trylock_failed, 1, "{kernel}");
        assert!(
            has(&m, pfn, pg::LRU) && !has(&m, pfn, pg::ACTIVE),
            "{kernel}"
        );
        assert!(!has(&m, pfn, pg::REFERENCED), "{kernel}: not looked at");
        assert!(pte_young(&m, p, 0), "{kernel}: the young bit survives");

        enter_at(&mut m, 0, end);
        let mut sc = ScanControl::new(32, None);
        let freed = pol.shrink_inactive_list(&mut m, 32, 0, 0, &mut sc, LRU_INACTIVE_FILE);
        assert_eq!(freed, 0, "{kernel}");
        assert_eq!(m.rmap_trylock_failed, 1, "{kernel}");
        assert!(
            has(&m, pfn, pg::REFERENCED),
            "{kernel}: first young sighting"
        );
        assert!(!pte_young(&m, p, 0), "{kernel}");
        check(&m, &pol);
    }
}

/// `try_to_unmap` walks the reverse map with a lock that may sleep (`rwc.try_lock` unset):
/// during the exit's write hold it sleeps until the hold ends, then unmaps.
#[test]
fn try_to_unmap_sleeps_until_an_exit_releases_the_mapping() {
    let (mut m, pol, pfn, p, end) = exit_during_reclaim(Kernel::V6_12);
    enter_at(&mut m, 0, end - 100);
    assert!(m.try_to_unmap(pfn));
    assert_eq!((m.ctx.times.sleep_ns, m.rmap_lock_wait_ns), (100, 100));
    // The sleep costs a switch and a wake-up.
    assert_eq!(
        m.now(),
        end + m.cfg.cost.sleep_wake_ns + m.cfg.cost.rmap_pte_ns
    );
    assert_eq!(m.folios[pfn as usize].mapcount, 0);
    assert!(!m.procs[p as usize].vmas[1].ptes[0].is_present());
    check(&m, &pol);
}

/// §3.2: two mappings that both referenced the folio (rp = 2) activate it on the first pass;
/// so does one young mapping of a VM_EXEC file vma.
#[test]
fn folio_young_in_two_mappings_or_exec_activates_on_first_pass() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let shared = m.create_file("shared", 4);
    let text = m.create_file("text", 4);
    let p = m.create_process("p", 0, 0);
    let q = m.create_process("q", 0, 0);
    m.mmap_file(p, shared, vm::SHARED);
    m.mmap_file(q, shared, vm::SHARED);
    m.mmap_file(p, text, vm::EXEC);
    load_mapped(&mut m, &mut pol, p, shared, 0);
    load_mapped(&mut m, &mut pol, q, shared, 0);
    load_mapped(&mut m, &mut pol, p, text, 0);
    let (both, exec) = (page_of(&m, shared, 0), page_of(&m, text, 0));
    assert_eq!(m.folios[both as usize].mapcount, 2);
    drain(&mut m, &mut pol);
    assert_eq!(lru(&pol), [0, 0, 2, 0, 0]);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 32), 0);
    assert!(has(&m, both, pg::ACTIVE), "rp > 1 activates at once");
    assert!(
        has(&m, exec, pg::ACTIVE),
        "VM_EXEC file folio activates at once"
    );
    assert_eq!(lru(&pol), [0, 0, 0, 2, 0]);
    assert_eq!(m.vm.get(Vm::Pgactivate), 2);
    check(&m, &pol);
}

// ------------------------------------------------------------------------------------------
// §4.7: get_scan_count
// ------------------------------------------------------------------------------------------

/// §4.7 step 6 with zero costs: fraction = [swappiness, 200 − swappiness]. 60 gives 30% anon /
/// 70% file; 200 gives all the weight to anon; 0 in global reclaim gives all of it to file.
#[test]
fn scan_fraction_with_zero_costs_follows_swappiness() {
    for (swappiness, expect) in [(60u32, [60u64, 140u64]), (200, [200, 0]), (0, [0, 200])] {
        let mut cfg = MachineConfig::simple(4096);
        cfg.swap = zram(1024);
        cfg.swappiness = swappiness;
        let (m, pol) = build(cfg);
        let sc = ScanControl::new(32, None);
        let (balance, fraction, denominator) = pol.scan_balance(&m, &sc);
        assert_eq!(balance, ScanBalance::Fract, "swappiness {swappiness}");
        assert_eq!(fraction, expect, "swappiness {swappiness}");
        assert_eq!(denominator, 200, "swappiness {swappiness}");
        assert_eq!(fraction, spec_fraction(swappiness as u64, 0, 0));
    }
}

/// §4.7 steps 1–5, in their order: no swap → SCAN_FILE (even at swappiness 200 and priority 0);
/// !may_swap → SCAN_FILE; cgroup reclaim at swappiness 0 → SCAN_FILE (global reclaim at 0 stays
/// SCAN_FRACT); priority 0 → SCAN_EQUAL (unless swappiness is 0); then file_is_tiny → SCAN_ANON;
/// then cache_trim_mode → SCAN_FILE.
#[test]
fn scan_balance_rules_apply_in_spec_order() {
    // No swap at all.
    let mut cfg = MachineConfig::simple(4096);
    cfg.swappiness = 200;
    let (m, pol) = build(cfg);
    let mut sc = ScanControl::new(32, None);
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::File);
    sc.priority = 0;
    sc.file_is_tiny = true;
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::File);

    // Swappiness 0: SCAN_FILE only for cgroup reclaim.
    let mut cfg = MachineConfig::simple(4096);
    cfg.swap = zram(1024);
    cfg.swappiness = 0;
    cfg.memcgs = vec![MemcgConfig::new("/a")];
    let (m, pol) = build(cfg);
    let a = m.memcg_by_path("/a").unwrap();
    let sc = ScanControl::new(32, Some(a));
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::File);
    let mut sc = ScanControl::new(32, None);
    assert_eq!(
        pol.scan_balance(&m, &sc),
        (ScanBalance::Fract, [0, 200], 200)
    );
    sc.priority = 0;
    assert_eq!(
        pol.scan_balance(&m, &sc).0,
        ScanBalance::Fract,
        "priority 0 needs swappiness != 0 for SCAN_EQUAL"
    );

    // Default swappiness with swap.
    let mut cfg = MachineConfig::simple(4096);
    cfg.swap = zram(1024);
    let (m, pol) = build(cfg);
    let mut sc = ScanControl::new(32, None);
    sc.may_swap = false;
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::File);
    let mut sc = ScanControl::new(32, None);
    sc.priority = 0;
    sc.file_is_tiny = true;
    sc.cache_trim_mode = true;
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::Equal);
    sc.priority = 1;
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::Anon);
    sc.file_is_tiny = false;
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::File);
    sc.cache_trim_mode = false;
    assert_eq!(pol.scan_balance(&m, &sc).0, ScanBalance::Fract);
}

/// §4.7 step 6 with a non-zero cost pair: the exact integer formula. anon_cost 10, file_cost 30,
/// swappiness 60: t = 40, A = 50, F = 70, T = 120; ap = 60·121/51 = 142, fp = 140·121/71 = 238.
/// A high anon cost shifts the weight to file, a high file cost to anon.
#[test]
fn scan_fraction_with_costs_uses_the_exact_integer_formula() {
    let mut cfg = MachineConfig::simple(4096);
    cfg.swap = zram(1024);
    let (m, pol) = build(cfg);
    let mut sc = ScanControl::new(32, None);
    for (anon_cost, file_cost, expect) in [
        (10u64, 30u64, [142u64, 238u64]),
        (1000, 0, [89, 419]),
        (0, 1000, [179, 209]),
        // Equal costs keep the 60:140 split, but the weights are not 60 and 140.
        (7, 7, [117, 273]),
    ] {
        sc.anon_cost = anon_cost;
        sc.file_cost = file_cost;
        let (balance, fraction, denominator) = pol.scan_balance(&m, &sc);
        assert_eq!(balance, ScanBalance::Fract);
        assert_eq!(fraction, expect, "costs ({anon_cost}, {file_cost})");
        assert_eq!(fraction, spec_fraction(60, anon_cost, file_cost));
        assert_eq!(denominator, expect[0] + expect[1]);
    }
}

/// §4.7, the per-list targets: scan = (size >> priority) · fraction[type] / denominator, and
/// SCAN_EQUAL keeps size >> priority for every list.
#[test]
fn get_scan_count_scales_list_sizes_by_priority_and_fraction() {
    let mut cfg = MachineConfig::simple(8192);
    cfg.swap = zram(1024);
    let (mut m, mut pol) = build(cfg);
    let f = m.create_file("f", 800);
    let p = m.create_process("p", 0, 400);
    for i in 0..400 {
        write_anon(&mut m, &mut pol, p, i);
    }
    for i in 0..800 {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    assert_eq!(lru(&pol), [400, 0, 800, 0, 0]);

    let mut sc = ScanControl::new(32, None);
    sc.priority = 2;
    // (400 >> 2) · 60/200 = 30; (800 >> 2) · 140/200 = 140.
    assert_eq!(pol.get_scan_count(&mut m, 0, 0, &mut sc), [30, 0, 140, 0]);
    sc.anon_cost = 10;
    sc.file_cost = 30;
    // 100 · 142/380 = 37; 200 · 238/380 = 125.
    assert_eq!(pol.get_scan_count(&mut m, 0, 0, &mut sc), [37, 0, 125, 0]);
    sc.priority = 0;
    assert_eq!(pol.get_scan_count(&mut m, 0, 0, &mut sc), [400, 0, 800, 0]);
    let mut sc = ScanControl::new(32, None);
    sc.priority = 2;
    sc.may_swap = false;
    assert_eq!(pol.get_scan_count(&mut m, 0, 0, &mut sc), [0, 0, 200, 0]);
    check(&m, &pol);
}

// ------------------------------------------------------------------------------------------
// §4.9: lru_note_cost
// ------------------------------------------------------------------------------------------

/// Builds 100 file pages with the 40 mapped (young) ones at the inactive tail, and 8 young anon
/// pages, then rotates 8 anon, then 10, 9 and 1 file pages through shrink_inactive_list (all
/// KEEP: first-pass references). Returns (anon_cost, file_cost) after each of the four steps.
fn rotation_costs(kernel: Kernel) -> [(u64, u64); 4] {
    let (mut m, mut pol) = machine(4096, kernel, SwapConfig::None);
    let mapped = m.create_file("mapped", 40);
    let other = m.create_file("other", 60);
    let p = m.create_process("p", 0, 8);
    m.mmap_file(p, mapped, vm::SHARED);
    for i in 0..40 {
        load_mapped(&mut m, &mut pol, p, mapped, i);
    }
    for i in 0..60 {
        read(&mut m, &mut pol, p, other, i);
    }
    for i in 0..8 {
        write_anon(&mut m, &mut pol, p, i);
    }
    drain(&mut m, &mut pol);
    flush_stats(&mut m); // lru_note_cost reads the LRU size through rstat (6.8+)
    assert_eq!(lru(&pol), [8, 0, 100, 0, 0]);
    let cost = |pol: &Classic| (pol.lruvec(0, 0).anon_cost, pol.lruvec(0, 0).file_cost);
    let mut out = [(0, 0); 4];
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 8), 0);
    out[0] = cost(&pol);
    for (step, nr) in [(1, 10), (2, 9), (3, 1)] {
        assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, nr), 0);
        out[step] = cost(&pol);
    }
    assert_eq!(lru(&pol), [8, 0, 100, 0, 0], "every folio was kept");
    check(&m, &pol);
    out
}

/// §4.9: in v6.12 shrink_inactive_list charges nr_scanned − nr_reclaimed rotations; when
/// anon_cost + file_cost exceeds a quarter of the lruvec's 4 evictable lists (108/4 = 27) both
/// costs are halved. v6.1 charges only pages written (none here), so the costs stay 0.
#[test]
fn lru_note_cost_counts_rotations_in_6_12_only_and_halves_above_a_quarter() {
    // 8 → 8 + 10 = 18 → 8 + 19 = 27 (equal to a quarter: kept) → 8 + 20 = 28 > 27: both
    // halved to (4, 10).
    assert_eq!(
        rotation_costs(Kernel::V6_12),
        [(8, 0), (8, 10), (8, 19), (4, 10)]
    );
    assert_eq!(rotation_costs(Kernel::V6_1), [(0, 0); 4]);
}

/// A machine with zram and a process that wrote 4 anon pages, then read `file_pages` pages of
/// a file once, drained to the LRU lists and with the memcg statistics flushed (lru_note_cost
/// reads the LRU size through rstat from 6.8).
fn four_anon_beside_clean_file(kernel: Kernel, file_pages: u64) -> (Machine, Classic) {
    let (mut m, mut pol) = machine(4096, kernel, zram(256));
    let f = m.create_file("f", file_pages);
    let p = m.create_process("p", 0, 4);
    for i in 0..4 {
        write_anon(&mut m, &mut pol, p, i);
    }
    for i in 0..file_pages {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    flush_stats(&mut m);
    (m, pol)
}

/// §4.9 and §11: pages written by reclaim cost 32 each in v6.12 (plus rotations) and 1 each in
/// v6.1. Four anon pages are kept once (young) and then swapped out to zram.
#[test]
fn lru_note_cost_weights_pageout_by_32_in_6_12_and_1_in_6_1() {
    for (kernel, after_keep, after_swapout) in
        [(Kernel::V6_12, 4, 4 + 4 * 32), (Kernel::V6_1, 0, 4)]
    {
        let (mut m, mut pol) = four_anon_beside_clean_file(kernel, 1000);
        assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 4), 0);
        assert_eq!(pol.lruvec(0, 0).anon_cost, after_keep, "{kernel}");
        assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 4), 4);
        assert_eq!(m.vm.get(Vm::Pswpout), 4);
        assert_eq!(pol.lruvec(0, 0).anon_cost, after_swapout, "{kernel}");
        assert_eq!(pol.lruvec(0, 0).file_cost, 0);
        check(&m, &pol);
    }
}

/// Swaps out 4 anon pages (a first pass keeps them, young) beside 24 clean file pages, then
/// reclaims 8 of those file pages, which costs nothing (no pageout, no rotation). Returns
/// (anon_cost, file_cost) after the swap-out and after the file batch.
fn costs_around_a_free_batch(kernel: Kernel) -> [(u64, u64); 2] {
    let (mut m, mut pol) = four_anon_beside_clean_file(kernel, 24);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 4), 0);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 4), 4);
    flush_stats(&mut m);
    let cost = |pol: &Classic| (pol.lruvec(0, 0).anon_cost, pol.lruvec(0, 0).file_cost);
    let after_swapout = cost(&pol);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 8), 8);
    check(&m, &pol);
    [after_swapout, cost(&pol)]
}

/// §4.9: 6.1's and 6.12's `lru_note_cost` runs its decay after every shrink_inactive_list
/// batch, even one that cost nothing: with 24 file pages left (a quarter is 6) the anon cost
/// is halved again. 7.1's `lru_note_cost_unlock_irq` returns at a cost of 0 and keeps it.
#[test]
fn a_batch_that_costs_nothing_decays_the_costs_before_7_1_only() {
    // 4 rotations, then 4 pageouts at 32 each: 4 + 128 = 132 > 28 / 4, halved to 66. The
    // free batch: 66 > 24 / 4, halved again to 33 in 6.12 only.
    assert_eq!(costs_around_a_free_batch(Kernel::V6_12), [(66, 0), (33, 0)]);
    assert_eq!(costs_around_a_free_batch(Kernel::V7_1), [(66, 0), (66, 0)]);
    assert_eq!(costs_around_a_free_batch(Kernel::V7_2), [(66, 0), (66, 0)]);
}

// ------------------------------------------------------------------------------------------
// §4.10: inactive_is_low and shrink_active_list
// ------------------------------------------------------------------------------------------

/// Reads `active` pages twice and `inactive` pages once from a fresh file (no reclaim), the
/// `active` ones before the others.
fn fill_file_lists(
    m: &mut Machine,
    pol: &mut Classic,
    pid: u32,
    active: u64,
    inactive: u64,
) -> u32 {
    let f = m.create_file("lists", active + inactive);
    read_twice(m, pol, pid, f, 0..active);
    for i in active..active + inactive {
        read(m, pol, pid, f, i);
    }
    drain(m, pol);
    f
}

/// §4.10 below 1 GiB: the ratio is 1, so the inactive list is low only when it is smaller than
/// the active one. One extra promotion flips the answer.
#[test]
fn inactive_is_low_below_1gib_means_inactive_smaller_than_active() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let p = m.create_process("p", 0, 0);
    let f = fill_file_lists(&mut m, &mut pol, p, 10, 10);
    assert_eq!(lru(&pol), [0, 0, 10, 10, 0]);
    flush_stats(&mut m);
    assert!(
        !pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE),
        "10 vs 10"
    );
    read(&mut m, &mut pol, p, f, 10); // the second touch of an inactive page
    drain(&mut m, &mut pol);
    assert_eq!(lru(&pol), [0, 0, 9, 11, 0]);
    flush_stats(&mut m);
    assert!(pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE), "9 vs 11");
    assert!(
        !pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_ANON),
        "empty anon lists"
    );
    check(&m, &pol);
}

/// 6.8+ reclaim reads the memcg statistics through `mem_cgroup_flush_stats_ratelimited`, which
/// leaves the flushing to `flush_memcg_stats_dwork` (every `FLUSH_TIME`): `inactive_is_low`
/// sees the LRU sizes of the last periodic flush. A promotion that makes the inactive list low
/// is seen on 6.12 only after the next flush, on 6.1 (`mem_cgroup_flush_stats` before reading,
/// whenever a few hundred updates are pending) at once.
#[test]
fn inactive_is_low_sees_the_lru_sizes_of_the_last_stats_flush_on_6_12_and_exact_ones_on_6_1() {
    for (kernel, stale) in [(Kernel::V6_12, true), (Kernel::V6_1, false)] {
        let (mut m, mut pol) = machine(4096, kernel, SwapConfig::None);
        let p = m.create_process("p", 0, 0);
        let f = fill_file_lists(&mut m, &mut pol, p, 10, 10);
        flush_stats(&mut m);
        assert!(
            !pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE),
            "10 vs 10"
        );
        read(&mut m, &mut pol, p, f, 10); // the second touch of an inactive page
        drain(&mut m, &mut pol);
        assert_eq!(lru(&pol), [0, 0, 9, 11, 0]);
        let seen = if stale {
            [0, 0, 10, 10, 0]
        } else {
            [0, 0, 9, 11, 0]
        };
        assert_eq!(
            pol.lru_sizes_read(&m, 0, 0),
            seen,
            "{kernel:?} before the next flush"
        );
        assert_eq!(pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE), !stale);
        flush_stats(&mut m);
        assert_eq!(
            pol.lru_sizes_read(&m, 0, 0),
            [0, 0, 9, 11, 0],
            "{kernel:?} after it"
        );
        assert!(pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE));
        check(&m, &pol);
    }
}

/// `mem_cgroup_wb_stats` (the memcg's dirty-throttling domain) reads NR_FILE_DIRTY as of the
/// last periodic flush on 6.12 (`mem_cgroup_flush_stats_ratelimited`): pages a task dirties
/// count towards its memcg's dirty limit only from the next flush on, while the domain's
/// `wb_dirty` (the wb's own counters, which bound the pause) is exact. 6.1 sees them at once.
#[test]
fn the_memcg_dirty_domain_counts_dirty_pages_from_the_next_stats_flush_on_6_12() {
    for (kernel, stale) in [(Kernel::V6_12, true), (Kernel::V6_1, false)] {
        let mut cfg = MachineConfig::simple(4096);
        cfg.kernel = kernel;
        cfg.memcgs = vec![MemcgConfig::new("/a")];
        let (mut m, mut pol) = build(cfg);
        let a = m.memcg_by_path("/a").unwrap();
        let p = m.create_process("p", a, 0);
        let f = m.create_file("f", 8);
        flush_stats(&mut m);
        for i in 0..8 {
            write_fd(&mut m, &mut pol, p, f, i);
        }
        drain(&mut m, &mut pol);
        assert_eq!(m.memcgs[a as usize].wb_stat[WbStat::Dirty as usize], 8);
        let g = m.global_dirty_domain(true);
        let d = m.memcg_dirty_domain(a, &g, true).unwrap();
        assert_eq!(
            d.dirty,
            if stale { 0 } else { 8 },
            "{kernel:?} before the next flush"
        );
        assert_eq!(d.wb_dirty, 8, "{kernel:?}: the wb's own count is exact");
        flush_stats(&mut m);
        let d = m.memcg_dirty_domain(a, &g, true).unwrap();
        assert_eq!(d.dirty, 8, "{kernel:?} after it");
    }
}

/// §4.10 at 1 GiB (ratio int_sqrt(10) = 3) and at 10 GiB (ratio int_sqrt(100) = 10), on real
/// lists of a machine of that size. At each size the lists are built exactly on the boundary
/// `inactive · ratio == active` (not low), then one folio is promoted (low). A ratio of 1 (no
/// scaling) or any other ratio would give a different answer on one side of the boundary.
#[test]
fn inactive_is_low_uses_int_sqrt_of_10_gib_as_ratio() {
    for (gib, ratio) in [(1u64, 3u64), (10, 10)] {
        let total = gib << (30 - PAGE_SHIFT);
        // The smallest inactive list that is not low: inactive · ratio >= active (equality at
        // 1 GiB, where ratio + 1 divides the total), while one promotion makes it low.
        let inactive = (total + ratio) / (ratio + 1);
        let active = total - inactive;
        assert!(inactive * ratio >= active && (inactive - 1) * ratio < active + 1);
        let (mut m, mut pol) = machine(total + 20_000, Kernel::V6_12, SwapConfig::None);
        let p = m.create_process("p", 0, 0);
        let f = fill_file_lists(&mut m, &mut pol, p, active, inactive);
        assert_eq!(lru(&pol), [0, 0, inactive, active, 0]);
        assert_eq!(int_sqrt(10 * gib), ratio);
        assert!(!spec_inactive_is_low(inactive, active));
        flush_stats(&mut m);
        assert!(
            !pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE),
            "{gib} GiB: {inactive} · {ratio} >= {active}"
        );
        read(&mut m, &mut pol, p, f, active); // promote one inactive folio
        drain(&mut m, &mut pol);
        assert_eq!(lru(&pol), [0, 0, inactive - 1, active + 1, 0]);
        assert!(spec_inactive_is_low(inactive - 1, active + 1));
        flush_stats(&mut m);
        assert!(
            pol.inactive_is_low(&m, 0, 0, LRU_INACTIVE_FILE),
            "{gib} GiB: {} · {ratio} < {}",
            inactive - 1,
            active + 1
        );
        // Plain "inactive < active" would call both states low.
        assert!(inactive < active);
        check(&m, &pol);
    }
}

/// §4.10 shrink_active_list: an unmapped active folio is always deactivated (with
/// PG_workingset set and PGDEACTIVATE, PGREFILL counted) even if it was read again while
/// active; it keeps its PG_referenced, so one more read reactivates it at once, while a
/// deactivated folio without PG_referenced needs two.
#[test]
fn shrink_active_list_deactivates_unmapped_folios_and_keeps_pg_referenced() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 4);
    let p = m.create_process("p", 0, 0);
    for i in [0, 1, 0, 1, 0] {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    let (refd, plain) = (page_of(&m, f, 0), page_of(&m, f, 1));
    assert!(has(&m, refd, pg::ACTIVE) && has(&m, refd, pg::REFERENCED));
    assert!(has(&m, plain, pg::ACTIVE) && !has(&m, plain, pg::REFERENCED));
    assert_eq!(lru(&pol), [0, 0, 0, 2, 0]);
    shrink_active(&mut m, &mut pol, LRU_ACTIVE_FILE, 32);
    for pfn in [refd, plain] {
        assert!(!has(&m, pfn, pg::ACTIVE) && has(&m, pfn, pg::WORKINGSET));
    }
    assert!(
        has(&m, refd, pg::REFERENCED),
        "PG_referenced is left as it was"
    );
    assert_eq!(lru(&pol), [0, 0, 2, 0, 0]);
    assert_eq!(m.vm.get(Vm::Pgdeactivate), 2);
    assert_eq!(m.vm.get(Vm::Pgrefill), 2);
    read(&mut m, &mut pol, p, f, 1);
    read(&mut m, &mut pol, p, f, 0);
    drain(&mut m, &mut pol);
    assert!(has(&m, refd, pg::ACTIVE), "one read reactivates it");
    assert!(!has(&m, plain, pg::ACTIVE) && has(&m, plain, pg::REFERENCED));
    assert_eq!(lru(&pol), [0, 0, 1, 1, 0]);
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    check(&m, &pol);
}

// ------------------------------------------------------------------------------------------
// §4.12, §7: dirty and writeback file folios
// ------------------------------------------------------------------------------------------

/// §4.12 (PG_dirty branch), §7.2 and §7.4: direct reclaim does not free a dirty file folio: it
/// sets PG_reclaim, counts nr_vmscan_immediate_reclaim, activates it and wakes the flusher
/// (every isolated folio was unqueued dirty). When its writeback ends, folio_rotate_reclaimable
/// moves it to the inactive tail with PG_active cleared (+pgrotated), so the next reclaim takes
/// it before the clean folios that were added after it.
#[test]
fn dirty_file_folio_is_activated_then_rotated_to_inactive_tail_after_writeback() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 8);
    let p = m.create_process("p", 0, 0);
    write_fd(&mut m, &mut pol, p, f, 0);
    for i in 1..4 {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    let dirty = page_of(&m, f, 0);
    assert!(has(&m, dirty, pg::DIRTY) && !has(&m, dirty, pg::REFERENCED));
    assert_eq!(lru(&pol), [0, 0, 4, 0, 0]);

    // The dirty folio is the inactive tail: the first folio reclaim looks at.
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 0);
    assert_eq!(page_of(&m, f, 0), dirty, "not freed");
    assert!(has(&m, dirty, pg::RECLAIM) && has(&m, dirty, pg::ACTIVE));
    assert!(has(&m, dirty, pg::DIRTY));
    assert_eq!(m.vm.get(Vm::NrVmscanImmediateReclaim), 1);
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    assert_eq!(m.vm.get(Vm::NrVmscanWrite), 0, "reclaim did not write it");
    assert_eq!(lru(&pol), [0, 0, 3, 1, 0]);
    assert!(m.wb.start_all, "wakeup_flusher_threads(WB_REASON_VMSCAN)");

    // The flusher writes it; the I/O completes.
    enter(&mut m, 0);
    m.flusher_run();
    assert!(has(&m, dirty, pg::WRITEBACK) && !has(&m, dirty, pg::DIRTY));
    assert!(
        has(&m, dirty, pg::ACTIVE),
        "still active while under writeback"
    );
    enter(&mut m, 0);
    m.folio_end_writeback(&mut pol, dirty);
    assert!(!has(&m, dirty, pg::ACTIVE) && !has(&m, dirty, pg::RECLAIM));
    assert!(!has(&m, dirty, pg::WRITEBACK));
    assert_eq!(m.vm.get(Vm::Pgrotated), 1);
    assert_eq!(lru(&pol), [0, 0, 4, 0, 0]);

    // The next reclaim of one folio takes it (it is the tail), not page 1.
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 1);
    shadow_of(&m, f, 0);
    for i in 1..4 {
        page_of(&m, f, i);
    }
    assert_eq!(lru(&pol), [0, 0, 3, 0, 0]);
    check(&m, &pol);
}

/// A file of 8 pages: page 0 written (then under writeback, the flusher having run), page 1
/// read; both on the inactive file list. Returns (machine, policy, file, page 0's pfn).
fn file_folio_under_writeback() -> (Machine, Classic, u32, Pfn) {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 8);
    let p = m.create_process("p", 0, 0);
    write_fd(&mut m, &mut pol, p, f, 0);
    read(&mut m, &mut pol, p, f, 1);
    drain(&mut m, &mut pol);
    let pfn = page_of(&m, f, 0);
    enter(&mut m, 0);
    m.wakeup_flusher(true);
    m.flusher_run();
    assert!(has(&m, pfn, pg::WRITEBACK));
    (m, pol, f, pfn)
}

/// §4.12 writeback case 2 and §7.4: a file folio already under writeback when reclaim meets
/// it is marked PG_reclaim and activated (nr_writeback), not waited on; its completion rotates
/// it to the inactive tail.
#[test]
fn folio_under_writeback_is_marked_for_reclaim_and_rotated_on_completion() {
    let (mut m, mut pol, f, pfn) = file_folio_under_writeback();
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 0);
    assert!(has(&m, pfn, pg::RECLAIM) && has(&m, pfn, pg::ACTIVE));
    assert_eq!(
        m.vm.get(Vm::NrVmscanImmediateReclaim),
        0,
        "not the dirty branch"
    );
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    assert_eq!(lru(&pol), [0, 0, 1, 1, 0]);
    enter(&mut m, 0);
    m.folio_end_writeback(&mut pol, pfn);
    assert_eq!(m.vm.get(Vm::Pgrotated), 1);
    assert_eq!(lru(&pol), [0, 0, 2, 0, 0]);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 1);
    shadow_of(&m, f, 0);
    page_of(&m, f, 1);
    check(&m, &pol);
}

// ------------------------------------------------------------------------------------------
// §5: workingset refault detection
// ------------------------------------------------------------------------------------------

/// What one refault experiment saw.
struct Refault {
    m: Machine,
    pol: Classic,
    file: u32,
    /// Distance and workingset size computed from the spec's formulas (§5.3).
    distance: u64,
    ws: u64,
    age_before_refault: u64,
    pgactivate_before_refault: u64,
}

/// Builds `active` active file pages (file A, each read twice), `anon` inactive anon pages and
/// 64 inactive file pages (file B, read once); evicts B0 (the inactive tail), then `n` more
/// pages, then reads B0 again.
fn refault_after(n: u64, active: u64, anon: u64, swap: SwapConfig) -> Refault {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, swap);
    let a = m.create_file("a", active);
    let b = m.create_file("b", 64);
    let p = m.create_process("p", 0, anon);
    for i in 0..anon {
        write_anon(&mut m, &mut pol, p, i);
    }
    read_twice(&mut m, &mut pol, p, a, 0..active);
    drain(&mut m, &mut pol);
    for i in 0..64 {
        read(&mut m, &mut pol, p, b, i);
    }
    drain(&mut m, &mut pol);
    assert_eq!(lru(&pol), [anon, 0, 64, active, 0]);

    let clock = pol.lruvec(0, 0).nonresident_age;
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 1);
    let (memcg, node, eviction, workingset) = Classic::unpack_shadow(shadow_of(&m, b, 0));
    assert_eq!((memcg, node, workingset), (0, 0, false));
    assert_eq!(eviction, clock, "the stamp is read before the clock ages");
    assert_eq!(pol.lruvec(0, 0).nonresident_age, clock + 1);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, n), n);
    assert_eq!(pol.lruvec(0, 0).nonresident_age, clock + 1 + n);

    let now = pol.lruvec(0, 0).nonresident_age;
    let distance = now.wrapping_sub(eviction) & EVICTION_MASK;
    let l = lru(&pol);
    let mut ws = l[LRU_ACTIVE_FILE];
    if m.swap.nr_free() > 0 {
        ws += l[LRU_ACTIVE_ANON] + l[LRU_INACTIVE_ANON];
    }
    assert_eq!(m.vm.get(Vm::WorkingsetRefaultFile), 0);
    let pgactivate_before_refault = m.vm.get(Vm::Pgactivate);
    // workingset_test_recent reads the sizes of the last statistics flush (6.8+).
    flush_stats(&mut m);
    read(&mut m, &mut pol, p, b, 0);
    Refault {
        m,
        pol,
        file: b,
        distance,
        ws,
        age_before_refault: now,
        pgactivate_before_refault,
    }
}

fn assert_refault_activated(mut r: Refault) {
    assert!(r.distance <= r.ws);
    let pfn = page_of(&r.m, r.file, 0);
    assert!(has(&r.m, pfn, pg::ACTIVE), "a recent refault is activated");
    assert!(has(&r.m, pfn, pg::IN_BATCH), "before it reaches the LRU");
    assert_eq!(r.m.vm.get(Vm::WorkingsetRefaultFile), 1);
    assert_eq!(r.m.vm.get(Vm::WorkingsetActivateFile), 1);
    assert_eq!(r.m.vm.get(Vm::WorkingsetRestoreFile), 0);
    assert_eq!(r.m.memcg_events_hier(0).get(Vm::WorkingsetActivateFile), 1);
    assert_eq!(
        r.m.vm.get(Vm::Pgactivate),
        r.pgactivate_before_refault,
        "refault activation is not PGACTIVATE"
    );
    assert_eq!(
        r.pol.lruvec(0, 0).nonresident_age,
        r.age_before_refault + 1,
        "the refault activation ages the clock"
    );
    let before = lru(&r.pol);
    drain(&mut r.m, &mut r.pol);
    let after = lru(&r.pol);
    assert_eq!(after[LRU_ACTIVE_FILE], before[LRU_ACTIVE_FILE] + 1);
    assert_eq!(r.m.vm.get(Vm::Pgactivate), r.pgactivate_before_refault);
    check(&r.m, &r.pol);
}

fn assert_refault_not_activated(mut r: Refault) {
    assert!(r.distance > r.ws);
    let pfn = page_of(&r.m, r.file, 0);
    assert!(
        !has(&r.m, pfn, pg::ACTIVE),
        "a distant refault stays inactive"
    );
    assert_eq!(
        r.m.vm.get(Vm::WorkingsetRefaultFile),
        1,
        "but it is counted"
    );
    assert_eq!(r.m.vm.get(Vm::WorkingsetActivateFile), 0);
    assert_eq!(r.pol.lruvec(0, 0).nonresident_age, r.age_before_refault);
    let before = lru(&r.pol);
    drain(&mut r.m, &mut r.pol);
    let after = lru(&r.pol);
    assert_eq!(after[LRU_INACTIVE_FILE], before[LRU_INACTIVE_FILE] + 1);
    assert_eq!(after[LRU_ACTIVE_FILE], before[LRU_ACTIVE_FILE]);
    check(&r.m, &r.pol);
}

/// §5.2–5.4 without swap: ws = active_file = 20. Evicting B0 and then 19 more pages gives a
/// refault distance of exactly 20 (inside: activated); 20 more gives 21 (outside: not).
#[test]
fn refault_inside_workingset_activates_and_outside_does_not() {
    let r = refault_after(19, 20, 0, SwapConfig::None);
    assert_eq!((r.distance, r.ws), (20, 20));
    assert_refault_activated(r);
    let r = refault_after(20, 20, 0, SwapConfig::None);
    assert_eq!((r.distance, r.ws), (21, 20));
    assert_refault_not_activated(r);
}

/// §5.3 with free swap: a file refault's workingset also counts all anon pages
/// (ws = active_file + active_anon + inactive_anon = 20 + 0 + 5), so distance 21 is recent
/// here although it was not without swap; distance 26 is not.
#[test]
fn refault_workingset_includes_anon_when_swap_is_free() {
    let r = refault_after(20, 20, 5, zram(256));
    assert_eq!((r.distance, r.ws), (21, 25));
    assert_refault_activated(r);
    let r = refault_after(25, 20, 5, zram(256));
    assert_eq!((r.distance, r.ws), (26, 25));
    assert_refault_not_activated(r);
    // The same anon pages without swap do not count.
    let r = refault_after(20, 20, 5, SwapConfig::None);
    assert_eq!((r.distance, r.ws), (21, 20));
    assert_refault_not_activated(r);
}

/// §5.4 restore and §4.9/§11: a folio deactivated by shrink_active_list gets PG_workingset; the
/// bit travels in its shadow; its recent refault sets PG_workingset, counts
/// workingset_restore_file and charges lru_note_cost_refault: 32 per page in v6.12, 1 in v6.1.
#[test]
fn workingset_restore_sets_pg_workingset_and_costs_32_in_6_12_and_1_in_6_1() {
    for (kernel, cost) in [(Kernel::V6_12, 32u64), (Kernel::V6_1, 1u64)] {
        let (mut m, mut pol) = machine(4096, kernel, SwapConfig::None);
        let a = m.create_file("a", 21);
        let b = m.create_file("b", 200);
        let p = m.create_process("p", 0, 0);
        read_twice(&mut m, &mut pol, p, a, 0..21);
        drain(&mut m, &mut pol);
        assert_eq!(lru(&pol), [0, 0, 0, 21, 0]);
        let a0 = page_of(&m, a, 0);
        // a0 is the active tail: deactivated with PG_workingset.
        shrink_active(&mut m, &mut pol, LRU_ACTIVE_FILE, 1);
        assert!(has(&m, a0, pg::WORKINGSET) && !has(&m, a0, pg::ACTIVE));
        assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 1);
        let (_, _, _, workingset) = Classic::unpack_shadow(shadow_of(&m, a, 0));
        assert!(workingset, "{kernel}: the shadow carries PG_workingset");
        for i in 0..200 {
            read(&mut m, &mut pol, p, b, i);
        }
        drain(&mut m, &mut pol);
        assert_eq!(pol.lruvec(0, 0).file_cost, 0);
        flush_stats(&mut m); // workingset_test_recent reads sizes through rstat (6.8+)
                             // Distance 1 (only its own eviction aged the clock) <= active_file = 20.
        read(&mut m, &mut pol, p, a, 0);
        let a0 = page_of(&m, a, 0);
        assert!(
            has(&m, a0, pg::ACTIVE) && has(&m, a0, pg::WORKINGSET),
            "{kernel}"
        );
        assert_eq!(m.vm.get(Vm::WorkingsetActivateFile), 1);
        assert_eq!(m.vm.get(Vm::WorkingsetRestoreFile), 1);
        // 220 LRU pages: a quarter is 55, so no halving hides the cost.
        assert_eq!(pol.lruvec(0, 0).file_cost, cost, "{kernel}");
        assert_eq!(pol.lruvec(0, 0).anon_cost, 0);
        drain(&mut m, &mut pol);
        check(&m, &pol);
    }
}

/// Swaps out anon page 0 (after a first, keeping pass that clears its young bit), then evicts
/// `n` of 30 inactive file pages, with 10 active file pages and 3 more inactive anon pages, and
/// faults page 0 back in from zram. Returns (distance, activated).
fn anon_refault_after(n: u64) -> (u64, bool) {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, zram(256));
    let f = m.create_file("f", 40);
    let p = m.create_process("p", 0, 4);
    for i in 0..4 {
        write_anon(&mut m, &mut pol, p, i);
    }
    read_twice(&mut m, &mut pol, p, f, 0..10);
    for i in 10..40 {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    assert_eq!(lru(&pol), [4, 0, 30, 10, 0]);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 4), 0);
    let clock = pol.lruvec(0, 0).nonresident_age;
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_ANON, 1), 1);
    assert_eq!(m.vm.get(Vm::Pswpout), 1);
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, n), n);
    let distance = pol.lruvec(0, 0).nonresident_age - clock;
    assert_eq!(distance, n + 1);
    // §5.3 for an anon refault: all file pages, plus active anon when swap is free; the
    // inactive anon pages do not count.
    let l = lru(&pol);
    assert_eq!(l, [3, 0, 30 - n, 10, 0]);
    let ws = l[LRU_ACTIVE_FILE] + l[LRU_INACTIVE_FILE] + l[LRU_ACTIVE_ANON];
    flush_stats(&mut m); // workingset_test_recent reads sizes through rstat (6.8+)
    let out = access(
        &mut m,
        &mut pol,
        p,
        PageRef::Anon { page: 0 },
        Op::Read,
        Via::Mmap,
    );
    assert!(out.major, "read back from swap");
    assert_eq!(m.vm.get(Vm::WorkingsetRefaultAnon), 1);
    assert_eq!(m.vm.get(Vm::WorkingsetRefaultFile), 0);
    let pfn = *m.lru_add_batch[0]
        .last()
        .expect("the swapped-in folio is queued");
    let activated = has(&m, pfn, pg::ACTIVE);
    assert_eq!(activated, distance <= ws, "distance {distance}, ws {ws}");
    assert_eq!(m.vm.get(Vm::WorkingsetActivateAnon), activated as u64);
    drain(&mut m, &mut pol);
    check(&m, &pol);
    (distance, activated)
}

/// §5.3 for anon: ws = active_file + inactive_file + active_anon = 10 + (30 − n) + 0. n = 19
/// gives distance 20 ≤ 21 (activated), n = 20 distance 21 > 20 (not). Counting the 3 inactive
/// anon pages, as a file refault would, would activate both.
#[test]
fn anon_refault_workingset_counts_all_file_pages_but_not_inactive_anon() {
    assert_eq!(anon_refault_after(19), (20, true));
    assert_eq!(anon_refault_after(20), (21, false));
}

/// §5.2: shadow entries pack (timestamp, memcg id, node, workingset) into an xarray value entry
/// (low bit set) and unpack to the same fields; the timestamp keeps 64 − EVICTION_SHIFT = 40
/// bits, so the clock wraps modulo 2^40.
#[test]
fn shadow_entry_pack_unpack_round_trips() {
    for &(memcg, node, eviction, ws) in &[
        (0u16, 0u8, 0u64, false),
        (1, 0, 1, true),
        (65_535, 63, EVICTION_MASK, true),
        (4095, 7, 123_456_789, false),
        (17, 1, (1u64 << 40) - 2, true),
    ] {
        let s = Classic::pack_shadow(memcg, node, eviction, ws);
        assert_eq!(s & 1, 1, "an xarray value entry");
        assert_eq!(Classic::unpack_shadow(s), (memcg, node, eviction, ws));
    }
    assert_eq!(EVICTION_MASK, (1u64 << 40) - 1);
    let wrapped = Classic::pack_shadow(3, 2, (1u64 << 40) + 5, false);
    assert_eq!(Classic::unpack_shadow(wrapped), (3, 2, 5, false));
}

// ------------------------------------------------------------------------------------------
// §6.1: memcg charging, limit reclaim and the memcg OOM killer
// ------------------------------------------------------------------------------------------

/// A memcg "/a" with memory.max = 64 pages and no swap; `q` owns 39 anon pages and `p` 23,
/// each with its PTE table, so the memcg is at its limit and nothing in it is reclaimable (anon
/// without swap: SCAN_FILE, and the file lists are empty).
fn full_memcg(kernel: Kernel) -> (Machine, Classic, u16, u32, u32) {
    let mut cfg = MachineConfig::simple(4096);
    cfg.kernel = kernel;
    cfg.memcgs = vec![MemcgConfig::new("/a").with_max(64)];
    let (mut m, mut pol) = build(cfg);
    let a = m.memcg_by_path("/a").unwrap();
    let q = m.create_process("q", a, 40);
    let p = m.create_process("p", a, 25);
    for i in 0..39 {
        write_anon(&mut m, &mut pol, q, i);
    }
    for i in 0..23 {
        write_anon(&mut m, &mut pol, p, i);
    }
    assert_eq!(m.memcgs[a as usize].usage, 64);
    assert_eq!(m.memcgs[a as usize].pgtable_pages, 2);
    assert_eq!(m.memcg_events_hier(a).get(Vm::MemcgMax), 0);
    (m, pol, a, p, q)
}

/// §6.1: a charge over memory.max that reclaim cannot help calls try_to_free_mem_cgroup_pages
/// once, once more after draining the charge stocks, then MAX_RECLAIM_RETRIES (16) more times,
/// each recorded as a memory.events "max" event, and only then invokes the memcg OOM killer
/// ("oom" +1). The killer picks the larger task `q`; the charge then succeeds.
#[test]
fn memcg_oom_fires_after_max_reclaim_retries_without_progress_and_not_before() {
    for kernel in [Kernel::V6_1, Kernel::V6_12] {
        let (mut m, mut pol, a, p, q) = full_memcg(kernel);
        enter(&mut m, p);
        let out = m.access(
            &mut pol,
            p,
            PageRef::Anon { page: 23 },
            Op::Write,
            Via::Mmap,
        );
        assert!(out.is_some(), "{kernel}: p survives, q was the victim");
        let ev = m.memcg_events_hier(a);
        // 1 first attempt + 1 after drain_all_stock + 16 retries.
        assert_eq!(
            ev.get(Vm::MemcgMax),
            2 + MAX_RECLAIM_RETRIES as u64,
            "{kernel}: reclaim attempts before the OOM kill"
        );
        assert_eq!(ev.get(Vm::MemcgOom), 1, "{kernel}");
        assert_eq!(ev.get(Vm::MemcgOomKill), 1, "{kernel}");
        assert_eq!(m.vm.get(Vm::OomKill), 1, "{kernel}");
        assert_eq!(m.oom_victims, vec![q], "{kernel}");
        assert!(!m.procs[q as usize].alive && m.procs[p as usize].alive);
        // p's 24 pages and PTE table; q's table went to this CPU's stock and the charge took it.
        assert_eq!(m.memcgs[a as usize].usage, 25, "{kernel}");
        assert_eq!(m.memcgs[a as usize].usage, m.procs[p as usize].rss + 1);
        assert_eq!(m.memcgs[a as usize].stock_pages, 0);
        // Nothing was reclaimable, so nothing was scanned.
        assert_eq!(ev.get(Vm::PgstealDirect), 0);
        check(&m, &pol);
    }
}

/// §6.1: when the only task in the memcg is the one charging, the OOM killer kills it: the
/// access does not complete, and it still took 18 reclaim attempts to get there.
#[test]
fn memcg_oom_kills_the_charging_task_when_it_is_the_only_one() {
    let mut cfg = MachineConfig::simple(4096);
    cfg.memcgs = vec![MemcgConfig::new("/a").with_max(32)];
    let (mut m, mut pol) = build(cfg);
    let a = m.memcg_by_path("/a").unwrap();
    let p = m.create_process("p", a, 33);
    // 31 pages and their PTE table.
    for i in 0..31 {
        write_anon(&mut m, &mut pol, p, i);
    }
    enter(&mut m, p);
    let out = m.access(
        &mut pol,
        p,
        PageRef::Anon { page: 31 },
        Op::Write,
        Via::Mmap,
    );
    assert!(out.is_none(), "the charging task was killed");
    let ev = m.memcg_events_hier(a);
    assert_eq!(ev.get(Vm::MemcgMax), 18);
    assert_eq!(ev.get(Vm::MemcgOom), 1);
    assert_eq!(m.vm.get(Vm::OomKill), 1);
    assert_eq!(m.oom_victims, vec![p]);
    // The folios are uncharged; the PTE table went to this CPU's charge stock
    // (`obj_cgroup_uncharge_pages` → `refill_stock`), still charged.
    assert_eq!(m.memcgs[a as usize].usage, 1);
    assert_eq!(m.memcgs[a as usize].stock_pages, 1);
    check(&m, &pol);
}

/// §6.1: a charge whose limit reclaim frees pages (clean page cache in the memcg) succeeds on the
/// next attempt: one "max" event, no OOM.
#[test]
fn memcg_charge_that_reclaim_makes_room_for_does_not_oom() {
    let mut cfg = MachineConfig::simple(4096);
    cfg.memcgs = vec![MemcgConfig::new("/b").with_max(64)];
    let (mut m, mut pol) = build(cfg);
    let b = m.memcg_by_path("/b").unwrap();
    let f = m.create_file("f", 32);
    let p = m.create_process("p", b, 33);
    // 31 anon pages, their PTE table and 32 page-cache pages.
    for i in 0..32 {
        if i < 31 {
            write_anon(&mut m, &mut pol, p, i);
        }
        read(&mut m, &mut pol, p, f, i);
    }
    assert_eq!(m.memcgs[b as usize].usage, 64);
    write_anon(&mut m, &mut pol, p, 31);
    let ev = m.memcg_events_hier(b);
    assert_eq!(ev.get(Vm::MemcgMax), 1);
    assert_eq!(ev.get(Vm::MemcgOom), 0);
    assert_eq!(m.vm.get(Vm::OomKill), 0);
    assert!(m.oom_victims.is_empty());
    assert!(
        ev.get(Vm::PgstealDirect) > 0,
        "limit reclaim freed page cache"
    );
    assert!(m.memcgs[b as usize].usage <= 64);
    assert_eq!(m.procs[p as usize].rss, 32);
    check(&m, &pol);
}

// ------------------------------------------------------------------------------------------
// Concurrent reclaimers: other CPUs' tasks and kernel threads while a batch is isolated
// ------------------------------------------------------------------------------------------

/// A memcg `/w` of 64 pages filled with clean page cache by process `p` reading file `f`
/// (128 pages); returns (machine, policy, memcg, p, f).
fn full_memcg_of_clean_cache() -> (Machine, Classic, u16, u32, u32) {
    let mut cfg = MachineConfig::simple(4096);
    let mut mc = MemcgConfig::new("/w");
    mc.max = 64;
    cfg.memcgs.push(mc);
    let (mut m, mut pol) = build(cfg);
    let w = m.memcg_by_path("/w").expect("memcg");
    let f = m.create_file("f", 128);
    let p = m.create_process("p", w, 0);
    for i in 0..64 {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    (m, pol, w, p, f)
}

/// Kernel threads run while a batch is isolated (shrink_folio_list runs with the lruvec lock
/// dropped, and kswapd, the flusher and I/O completions go on on other CPUs): a writeback
/// completion due before the reclaimer's time runs at the batch's start, so the folio, clean by
/// then, is reclaimed in this batch instead of being activated with PG_reclaim.
#[test]
fn a_writeback_completion_due_during_the_batch_lets_the_folio_be_reclaimed() {
    let (mut m, mut pol, f, _) = file_folio_under_writeback();
    // The reclaimer reaches the folio a second later, with no preemption point on the way.
    m.ctx.elapsed += 1_000_000_000;
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 1), 1);
    shadow_of(&m, f, 0);
    assert_eq!(m.vm.get(Vm::Pgactivate), 0);
    check(&m, &pol);
}

/// A task on another CPU, as the engine lent to the machine runs it (`machine::Nest`): at its
/// first call it writes page `page` of `file` through write() (a buffered write that dirties
/// the folio wherever it is), and it records the clocks it was called with.
struct WriterOnAnotherCpu {
    pid: u32,
    file: u32,
    page: u64,
    calls: Vec<u64>,
}

impl reclaimlab::machine::Nest for WriterOnAnotherCpu {
    fn run_until(
        mut self: Box<Self>,
        m: &mut Machine,
        pol: &mut dyn Policy,
        until: u64,
    ) -> (Box<dyn reclaimlab::machine::Nest>, u64) {
        if self.calls.is_empty() {
            m.ctx = Ctx {
                now: until,
                cpu: m.cfg.cpus - 1,
                pid: self.pid,
                nested: true,
                ..Ctx::default()
            };
            let page = PageRef::File {
                file: self.file,
                page: self.page,
            };
            m.access(pol, self.pid, page, Op::Write, Via::Fd)
                .expect("the write completed");
        }
        self.calls.push(until);
        (self, u64::MAX)
    }

    fn next_time(&self) -> u64 {
        0
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// Other tasks run while a batch is isolated (`shrink_folio_list` locks each folio in turn,
/// with the lruvec lock dropped): a write on another CPU to a folio of the batch, before the
/// reclaimer locks it, leaves it dirty, so the reclaimer activates it (PG_reclaim, the write
/// left to the flusher) instead of freeing it. The others run up to the reclaimer's clock
/// before each folio, and the reclaimer's own context is restored after them.
#[test]
fn a_folio_written_by_another_task_while_isolated_is_not_reclaimed() {
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let f = m.create_file("f", 8);
    let p = m.create_process("p", 0, 0);
    let w = m.create_process("w", 0, 0);
    for i in 0..8 {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    let last = page_of(&m, f, 7);
    m.nest = Some(Box::new(WriterOnAnotherCpu {
        pid: w,
        file: f,
        page: 7,
        calls: Vec::new(),
    }));
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 8), 7);
    assert_eq!(page_of(&m, f, 7), last, "the written folio stays cached");
    assert!(has(&m, last, pg::DIRTY) && has(&m, last, pg::RECLAIM));
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    assert_eq!(m.ctx.pid, 0, "the reclaimer's context is back");
    let nest = m.nest.take().expect("the nest is back").into_any();
    let calls = nest.downcast::<WriterOnAnotherCpu>().expect("ours").calls;
    assert_eq!(calls.len(), 8, "before each folio");
    assert!(calls.windows(2).all(|w| w[0] < w[1]), "{calls:?}");
    check(&m, &pol);
}

/// A 6.12 machine whose buffered writes hold their folio's lock for the last 100 µs of a
/// 110 µs system call (costs enlarged so that a reclaimer's own costs cannot leave the hold).
fn build_with_long_write_locks() -> (Machine, Classic) {
    let mut cfg = MachineConfig::simple(4096);
    cfg.kernel = Kernel::V6_12;
    cfg.cost.fd_syscall_ns = 110_000;
    cfg.cost.write_folio_lock_ns = 100_000;
    build(cfg)
}

/// Eight clean cached pages of a file, then page 0 (the inactive tail) written by another task
/// `w` at `t0`, whose write holds the folio lock for the last 100 µs of its 110 µs system call
/// (costs enlarged so that the reclaimer's own costs cannot leave the hold); returns (machine,
/// policy, file, page 0's folio, t0).
fn folio_locked_by_a_write() -> (Machine, Classic, u32, Pfn, u64) {
    let (mut m, mut pol) = build_with_long_write_locks();
    let f = m.create_file("f", 8);
    let p = m.create_process("p", 0, 0);
    let w = m.create_process("w", 0, 0);
    for i in 0..8 {
        read(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    let t0 = m.ctx.now + m.ctx.elapsed + 1_000_000;
    enter_at(&mut m, w, t0);
    let page = PageRef::File { file: f, page: 0 };
    m.access(&mut pol, w, page, Op::Write, Via::Fd)
        .expect("the write completed");
    let pfn = page_of(&m, f, 0);
    (m, pol, f, pfn, t0)
}

/// `folio_trylock` in shrink_folio_list fails while a buffered write holds the folio across
/// its copy (`generic_perform_write`: write_begin to write_end): the folio is kept (`goto
/// keep`: back on the inactive list, not activated, no PG_reclaim), counted in pgscan (it was
/// isolated) but neither in pgsteal nor in sc->nr_scanned. Met after the hold, the same dirty
/// folio is activated with PG_reclaim instead (the write left to the flusher).
#[test]
fn a_folio_locked_by_a_write_is_kept_by_reclaim() {
    let (mut m, mut pol, _, pfn, t0) = folio_locked_by_a_write();
    enter_at(&mut m, 0, t0 + 50_000);
    let mut sc = ScanControl::new(32, None);
    assert_eq!(
        pol.shrink_inactive_list(&mut m, 1, 0, 0, &mut sc, LRU_INACTIVE_FILE),
        0
    );
    assert_eq!(m.folio_trylock_failed, 1);
    assert_eq!(m.vm.get(Vm::PgscanDirect), 1, "isolated: counted in pgscan");
    assert_eq!(m.vm.get(Vm::PgstealDirect), 0);
    assert_eq!(sc.nr_scanned, 0, "never locked by reclaim");
    assert_eq!(m.vm.get(Vm::Pgactivate), 0, "kept, not activated");
    assert!(has(&m, pfn, pg::DIRTY) && !has(&m, pfn, pg::RECLAIM) && !has(&m, pfn, pg::ACTIVE));
    assert_eq!(lru(&pol)[LRU_INACTIVE_FILE], 8);
    check(&m, &pol);

    // After the hold: the dirty folio is activated for the flusher to write.
    let (mut m, mut pol, _, pfn, t0) = folio_locked_by_a_write();
    enter_at(&mut m, 0, t0 + 200_000);
    let mut sc = ScanControl::new(32, None);
    pol.shrink_inactive_list(&mut m, 1, 0, 0, &mut sc, LRU_INACTIVE_FILE);
    assert_eq!(m.folio_trylock_failed, 0);
    assert_eq!(sc.nr_scanned, 1);
    assert_eq!(m.vm.get(Vm::Pgactivate), 1);
    assert!(has(&m, pfn, pg::RECLAIM) && has(&m, pfn, pg::ACTIVE));
    check(&m, &pol);
}

/// A reclaimer processed after the write but with its clock before the hold (the write's
/// system call had not reached write_begin yet) locks the folio: only the interval counts.
#[test]
fn a_folio_is_locked_only_during_the_write_copy() {
    let (mut m, mut pol, _, _, t0) = folio_locked_by_a_write();
    enter_at(&mut m, 0, t0 + 5_000);
    let mut sc = ScanControl::new(32, None);
    pol.shrink_inactive_list(&mut m, 1, 0, 0, &mut sc, LRU_INACTIVE_FILE);
    assert_eq!(m.folio_trylock_failed, 0);
    assert_eq!(sc.nr_scanned, 1);
    check(&m, &pol);
}

/// Two writes of one folio: the second's `folio_lock` in write_begin sleeps until the first
/// releases it, then holds it for its own copy.
#[test]
fn a_write_waits_for_another_write_holding_its_folio() {
    let (mut m, mut pol, f, pfn, t0) = folio_locked_by_a_write();
    let v = m.create_process("v", 0, 0);
    // v's system call starts 20 µs after w's: its copy would begin 30 µs after w's start,
    // inside w's hold (10..110 µs), so it begins at 110 µs and v sleeps 80 µs longer.
    enter_at(&mut m, v, t0 + 20_000);
    let page = PageRef::File { file: f, page: 0 };
    m.access(&mut pol, v, page, Op::Write, Via::Fd)
        .expect("the write completed");
    let cost = &m.cfg.cost;
    let w_end = t0 + cost.cpu_access_ns + cost.fd_syscall_ns;
    // The sleep itself costs a switch and a wake-up (`sleep_wake_ns`).
    let end = t0 + 20_000 + cost.cpu_access_ns + cost.fd_syscall_ns + 80_000 + cost.sleep_wake_ns;
    assert_eq!(m.now(), end);
    assert_eq!(
        m.ctx.times.iowait_ns, 80_000,
        "folio_lock sleeps in io_schedule"
    );
    let owner = m.folios[pfn as usize].owner();
    // v holds the lock from w's release; its sleep's switch and wake-up are counted after.
    let hold_end = end - cost.sleep_wake_ns;
    assert_eq!(m.folio_locks.held_at(pfn, owner, w_end), Some(hold_end));
    assert_eq!(m.folio_locks.held_at(pfn, owner, hold_end), None);
    check(&m, &pol);
}

/// `folio_referenced` from shrink_active_list (the folio not locked by its caller) trylocks a
/// mapped file folio: held by a write, it counts one reference without walking the rmap, so
/// the mapping's young bit survives (no VM_EXEC: the folio is deactivated all the same).
#[test]
fn folio_referenced_does_not_walk_a_mapped_folio_a_write_holds() {
    for during_hold in [true, false] {
        let (mut m, mut pol) = build_with_long_write_locks();
        let f = m.create_file("f", 8);
        let p = m.create_process("p", 0, 0);
        m.mmap_file(p, f, vm::SHARED);
        for _ in 0..2 {
            read(&mut m, &mut pol, p, f, 0);
            read(&mut m, &mut pol, p, f, 1);
        }
        drain(&mut m, &mut pol);
        load_mapped(&mut m, &mut pol, p, f, 0);
        let pfn = page_of(&m, f, 0);
        assert!(has(&m, pfn, pg::ACTIVE) && pte_young(&m, p, 0));
        let t0 = m.now() + 1_000_000;
        enter_at(&mut m, p, t0);
        let page = PageRef::File { file: f, page: 0 };
        m.access(&mut pol, p, page, Op::Write, Via::Fd)
            .expect("the write completed");
        let at = if during_hold {
            t0 + 50_000
        } else {
            t0 + 200_000
        };
        enter_at(&mut m, 0, at);
        let mut sc = ScanControl::new(32, None);
        pol.shrink_active_list(&mut m, 2, 0, 0, &mut sc, LRU_ACTIVE_FILE);
        assert_eq!(m.folio_trylock_failed, during_hold as u64);
        assert_eq!(
            pte_young(&m, p, 0),
            during_hold,
            "walked only when unlocked"
        );
        assert!(!has(&m, pfn, pg::ACTIVE), "deactivated either way");
        check(&m, &pol);
    }
}

/// A task that runs nested (another task is suspended in reclaim with a batch isolated) does
/// not OOM-kill: its charge yields before the OOM killer (`Ctx::oom_deferred`), and the kill
/// happens when it retries at the top level.
#[test]
fn a_nested_task_defers_the_oom_kill_to_the_top_level() {
    for nested in [true, false] {
        let mut cfg = MachineConfig::simple(4096);
        cfg.memcgs = vec![MemcgConfig::new("/a").with_max(32)];
        let (mut m, mut pol) = build(cfg);
        let a = m.memcg_by_path("/a").unwrap();
        let p = m.create_process("p", a, 33);
        // 31 pages and their PTE table fill it.
        for i in 0..31 {
            write_anon(&mut m, &mut pol, p, i);
        }
        enter(&mut m, p);
        m.ctx.nested = nested;
        m.ctx.may_yield = true;
        m.ctx.yield_at = u64::MAX;
        let page = PageRef::Anon { page: 31 };
        let out = m.access(&mut pol, p, page, Op::Write, Via::Mmap);
        assert!(out.is_none());
        assert_eq!(m.ctx.yielded, nested);
        assert_eq!(m.ctx.oom_deferred, nested);
        assert_eq!(m.vm.get(Vm::OomKill), !nested as u64);
        check(&m, &pol);
    }
}

/// A task that reclaims for a page-cache miss can find, once its folio is allocated, that a
/// task on another CPU read the same page meanwhile (it ran while the first reclaimed):
/// `filemap_add_folio` fails with -EEXIST, the new folio is put back (uncharged, freed) and
/// the other's folio is used. Nothing is cached twice.
#[test]
fn a_page_another_task_cached_during_our_reclaim_is_not_cached_twice() {
    let (mut m, mut pol, w, p, f) = full_memcg_of_clean_cache();
    let reader = m.create_process("r", 0, 0);
    m.nest = Some(Box::new(WriterOnAnotherCpu {
        pid: reader,
        file: f,
        page: 100,
        calls: Vec::new(),
    }));
    enter(&mut m, p);
    let out = m
        .access(
            &mut pol,
            p,
            PageRef::File { file: f, page: 100 },
            Op::Read,
            Via::Fd,
        )
        .expect("the read completed");
    assert!(!out.hit);
    m.nest = None;
    let pfn = page_of(&m, f, 100);
    assert_eq!(m.folios[pfn as usize].memcg, 0, "the other task's folio");
    // /w holds its surviving pages of 0..64, not the folio it allocated for page 100.
    let resident = m.files[f as usize].nr_pages;
    assert!(resident < 64, "{resident}");
    assert_eq!(m.memcgs[w as usize].usage, resident - 1);
    check(&m, &pol);
}

/// §4.11 `too_many_isolated` (mm/vmscan.c, 6.1: `shrink_inactive_list`, `reclaim_throttle`,
/// `wake_throttle_isolated`): a direct reclaimer that finds more folios isolated on the node
/// than an eighth of its inactive list sleeps on VMSCAN_THROTTLE_ISOLATED. A task that can yield
/// takes the sleep as a suspension point: its reclaim unwinds at once (nothing scanned), it
/// yields with a sleep of HZ/50 and keeps its scan control, marked stalled. The next
/// `too_many_isolated` that finds the isolations below the limit wakes the node's sleepers at
/// its time; a resumed reclaimer that still finds too many returns without sleeping again. A
/// control-file writer (it cannot yield) sleeps the whole timeout in place.
#[test]
fn too_many_isolated_sleeps_until_a_check_finds_the_isolations_put_back() {
    use reclaimlab::consts::{VmscanThrottle, NS_PER_JIFFY, SWAP_CLUSTER_MAX};
    use reclaimlab::machine::vmscan::{do_try_to_free_pages, ThrottleSleep};
    let (mut m, mut pol) = machine(4096, Kernel::V6_12, SwapConfig::None);
    let p = m.create_process("p", 0, 0);
    fill_file_lists(&mut m, &mut pol, p, 0, 800);
    let hz50 = VmscanThrottle::Isolated.timeout_jiffies() * NS_PER_JIFFY;
    // Another reclaimer holds 101 file folios isolated: more than 800 / 8.
    m.nodes[0].nr_isolated[1] = 101;
    enter(&mut m, p);
    m.ctx.may_yield = true;
    m.ctx.yield_at = u64::MAX;
    let t0 = m.now();
    let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, None);
    assert_eq!(do_try_to_free_pages(&mut m, &mut pol, &mut sc), 0);
    assert!(m.ctx.yielded, "the sleep is a suspension point");
    assert_eq!(
        m.ctx.throttle_sleep,
        Some(ThrottleSleep {
            node: 0,
            reason: VmscanThrottle::Isolated,
            start: t0,
            deadline: t0 + hz50,
            memcg: None,
        })
    );
    assert_eq!(
        m.nodes[0].throttle_sleepers[VmscanThrottle::Isolated.index()],
        1
    );
    assert_eq!(m.ctx.times.throttled_ns, 0, "the engine counts the sleep");
    assert_eq!(
        m.vm.get(Vm::PgscanDirect),
        0,
        "nothing isolated before the sleep"
    );
    let saved = m.resume.reclaim.take().expect("the scan control is kept");
    assert!(saved.isolated_stalled && saved.resuming);
    assert_eq!(saved.priority, sc.priority, "the same priority goes on");

    // A check that still finds too many wakes no one.
    enter(&mut m, p);
    m.ctx.now = t0 + 1_000;
    assert_eq!(shrink_inactive(&mut m, &mut pol, LRU_INACTIVE_FILE, 32), 0);
    assert_eq!(m.nodes[0].throttle_wake, [None; 4]);
    // The isolations are put back: the next check wakes the sleepers at its time.
    m.nodes[0].nr_isolated[1] = 0;
    let t1 = t0 + 5_000_000;
    enter(&mut m, p);
    m.ctx.now = t1;
    let mut other = ScanControl::new(SWAP_CLUSTER_MAX, None);
    pol.shrink_inactive_list(&mut m, 32, 0, 0, &mut other, LRU_INACTIVE_FILE);
    assert_eq!(
        m.nodes[0].throttle_wake[VmscanThrottle::Isolated.index()],
        Some(t1)
    );
    let sleep = ThrottleSleep {
        node: 0,
        reason: VmscanThrottle::Isolated,
        start: t0,
        deadline: t0 + hz50,
        memcg: None,
    };
    let throttled = m.vm.get(Vm::ThrottleNs);
    m.end_throttle_sleep(&sleep, t1);
    assert_eq!(m.vm.get(Vm::ThrottleNs) - throttled, t1 - t0);
    assert_eq!(
        (m.nodes[0].throttle_sleepers, m.nodes[0].throttle_wake),
        ([0; 4], [None; 4])
    );

    // Resumed while the isolations are back above the limit: no second sleep.
    m.nodes[0].nr_isolated[1] = 101;
    enter(&mut m, p);
    m.ctx.may_yield = true;
    m.ctx.yield_at = u64::MAX;
    let mut resumed = saved;
    assert_eq!(
        pol.shrink_inactive_list(&mut m, 32, 0, 0, &mut resumed, LRU_INACTIVE_FILE),
        0
    );
    assert!(!m.ctx.yielded && resumed.isolated_throttle.is_none());
    assert_eq!(m.ctx.times.throttled_ns, 0);

    // A task that cannot yield sleeps the whole timeout in place.
    enter(&mut m, p);
    let mut writer = ScanControl::new(SWAP_CLUSTER_MAX, None);
    pol.shrink_inactive_list(&mut m, 32, 0, 0, &mut writer, LRU_INACTIVE_FILE);
    assert_eq!(m.ctx.times.throttled_ns, hz50);
    assert!(!m.ctx.yielded);
    m.nodes[0].nr_isolated[1] = 0;
    m.check_invariants(&pol).expect("invariants");
}

/// §4.4 `consider_reclaim_throttle` (mm/vmscan.c, 6.1): global direct reclaim that reclaims
/// nothing at priority 1, while more than half of what is reclaimable waits for writeback,
/// sleeps on VMSCAN_THROTTLE_NOPROGRESS (1 jiffy). A task that can yield takes the sleep as a
/// suspension point and goes on at the next priority; the next direct reclaim pass that
/// reclaims more than an eighth of what it scanned wakes the sleepers at its time.
#[test]
fn noprogress_sleepers_wake_when_another_pass_makes_progress() {
    use reclaimlab::consts::{VmscanThrottle, NS_PER_JIFFY, SWAP_CLUSTER_MAX};
    use reclaimlab::machine::vmscan::{do_try_to_free_pages, ThrottleSleep};
    // Without swap the anonymous memory is not reclaimable; the only file folios are dirty,
    // on a disk whose writeback (started by reclaim's flusher wakeup) takes milliseconds.
    let mut cfg = MachineConfig::simple(1024);
    cfg.file_device = reclaimlab::machine::DeviceProfile::hdd();
    let (mut m, mut pol) = build(cfg);
    let p = m.create_process("p", 0, 700);
    for i in 0..700 {
        write_anon(&mut m, &mut pol, p, i);
    }
    let f = m.create_file("dirty", 48);
    for i in 0..48 {
        write_fd(&mut m, &mut pol, p, f, i);
    }
    drain(&mut m, &mut pol);
    enter(&mut m, p);
    m.ctx.may_yield = true;
    m.ctx.yield_at = u64::MAX;
    let t0 = m.now();
    let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, None);
    sc.priority = 1;
    assert_eq!(do_try_to_free_pages(&mut m, &mut pol, &mut sc), 0);
    let q = VmscanThrottle::NoProgress.index();
    assert!(m.ctx.yielded);
    assert_eq!(
        m.ctx.throttle_sleep,
        Some(ThrottleSleep {
            node: 0,
            reason: VmscanThrottle::NoProgress,
            start: m.now(),
            deadline: m.now() + NS_PER_JIFFY,
            memcg: None,
        })
    );
    assert!(m.now() >= t0);
    assert_eq!(m.nodes[0].throttle_sleepers[q], 1);
    let saved = m.resume.reclaim.take().expect("the scan control is kept");
    assert_eq!(saved.priority, 0, "it goes on at the next priority");
    // A second later the writeback has completed: another task's pass reclaims the folios
    // and wakes the sleepers at its time.
    enter(&mut m, p);
    let t1 = m.now() + 1_000_000_000;
    m.ctx.now = t1;
    m.catch_up(&mut pol);
    let mut other = ScanControl::new(SWAP_CLUSTER_MAX, None);
    other.priority = 1;
    assert!(do_try_to_free_pages(&mut m, &mut pol, &mut other) > 0);
    let wake = m.nodes[0].throttle_wake[q].expect("the sleepers are woken");
    assert!(
        (t1..=m.now()).contains(&wake),
        "woken at {wake}, the pass ran {t1}..{}",
        m.now()
    );
    m.check_invariants(&pol).expect("invariants");
}
