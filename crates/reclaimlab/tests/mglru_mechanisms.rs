//! Unit tests of each MGLRU mechanism against the specification
//! (/work/shared/spec/mglru.md, and series-2026.md §A for 7.2), per kernel era where the eras
//! differ: `Kernel::V6_1` = Era A, `V6_12` = Era B, `V7_1`/`V7_2` = Era C (+ Era D items).
//!
//! Covered: tiers from fd accesses (§2.5, §3.1), the PID controller (§2.6, §5.2, §5.3),
//! placement generations (§3.4), inc_max_seq/inc_min_seq (§4.3), the page-table walk's Bloom
//! filter and non-leaf PMD shortcut (§4.4), look-around (§4.5), sort_folio (§5.5, series A.2
//! patch 10), the handling of folios shrink_folio_list rejected (§5.1 step 6) and refault
//! recency (§5.10).
//!
//! Every test builds a small machine, drives one mechanism through public entry points (accesses,
//! drains, the lru_gen debugfs file, `inc_max_seq`/`try_to_inc_max_seq`, the Policy hooks),
//! asserts what the spec says must be observable and checks every invariant at the end. Where a
//! test sets PID counters or hardware accessed bits by hand it says so; those are states the
//! kernel reaches too. The assertions are chosen so that removing or altering the mechanism a
//! test names makes it fail.

use reclaimlab::access::Via;
use reclaimlab::consts::{
    Kernel, LRU_GEN_CORE, LRU_GEN_MM_WALK, LRU_GEN_NONLEAF_YOUNG, MAX_NR_GENS, MAX_NR_TIERS,
    MIN_LRU_BATCH,
};
use reclaimlab::machine::mm::{vm, PTRS_PER_PTE};
use reclaimlab::machine::vmscan::ScanControl;
use reclaimlab::machine::{pg, CostProfile, Ctx, MachineConfig, MemcgConfig, Pfn, SwapConfig, Vm};
use reclaimlab::policy::mglru::walk::{
    self, MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_FOUND, MM_NONLEAF_TOTAL,
};
use reclaimlab::policy::mglru::{positive_ctrl_err, CtrlPos, GenLruvec, MglruConfig, Switch};
use reclaimlab::policy::{FolioRef, Policy};

mod common;
use common::*;

/// `order_base_2(n)` for small n: the tier of a folio read n times through an fd (§2.5).
fn tier_of_reads(n: u64) -> usize {
    [0, 0, 1, 2, 2, 3, 3][n as usize]
}

// ------------------------------------------------------------------------------------------
// §2.5, §3.1: tiers from accesses through file descriptors
// ------------------------------------------------------------------------------------------

/// §3.1 and §2.5: the N-th read(2) of a folio (N = 1..6). Era C encodes ref → counter →
/// workingset (`lru_gen_inc_refs`), Era A/B ref → workingset → counter (`folio_inc_refs`); in
/// both the tier is order_base_2(N). Eviction (§5.10 `lru_gen_eviction`) counts the folio in
/// `evicted[FILE][tier]` and stores refs − 1 and the era's workingset bit in the shadow. A
/// folio whose counter overflowed is not evicted from the oldest generation (§5.5 rule 3): Era
/// C lazily promotes it (not counted in `protected`, keeps PG_workingset, is evicted later in
/// tier 3), Era A/B always protect refs == 4 (counted in `protected[tier − 1]`, flags
/// cleared; Debian's 6.1.176 has this Dec-2023 fix). Two identical folios are used so that
/// the halving of `reset_ctrl_pos` leaves a visible `avg_total`.
#[test]
fn fd_access_count_sets_the_tier_per_era() {
    for kernel in Kernel::ALL {
        for n in 1..=6u64 {
            let ctx = format!("{kernel} N={n}");
            let mut l = Lab::new(kernel, SwapConfig::None);
            let f = l.m.create_file("f", 2);
            let p = l.m.create_process("p", 0, 0);
            // Reading the two pages in turn makes every read a separate access. The first
            // reads add the folios to the LRU (drain) before the others mark them.
            for i in 0..n {
                l.read(p, f, 0);
                l.read(p, f, 1);
                if i == 0 {
                    l.drain();
                }
            }
            let pfns = [l.page(f, 0), l.page(f, 1)];

            let (counter, ws) = match l.era {
                MglruEra::C => (n.min(4) - 1, n >= 5),
                _ => (n.saturating_sub(2).min(3), n >= 2),
            };
            for pfn in pfns {
                assert!(l.has(pfn, pg::REFERENCED), "{ctx}");
                assert_eq!(l.refs(pfn) as u64, counter, "{ctx}: refs counter");
                assert_eq!(l.has(pfn, pg::WORKINGSET), ws, "{ctx}: PG_workingset");
                assert!(!l.has(pfn, pg::ACTIVE), "{ctx}: fd accesses never activate");
            }

            l.settle();
            let min = l.g().min_seq[FILE];
            assert_eq!(
                l.seq(pfns[0]),
                min,
                "{ctx}: starts in the oldest generation"
            );
            l.clear_ctrl(FILE);
            l.evict(min, 0, 2);
            let g = l.g().clone();
            let tier = tier_of_reads(n);
            let protected = n >= 5;
            if !protected {
                assert!(!l.resident(f, 0) && !l.resident(f, 1), "{ctx}: evicted");
                let mut expect = [0; MAX_NR_TIERS];
                expect[tier] = 2;
                assert_eq!(g.evicted[FILE], expect, "{ctx}: evicted[FILE]");
                assert_eq!(l.ev(Vm::Pgrefill), 0, "{ctx}");
                let (token, shadow_ws) = l.shadow(f, 0);
                // refs: Era C counter + 1 (PG_referenced), Era A/B counter + workingset.
                let refs = match l.era {
                    MglruEra::C => counter + 1,
                    _ => counter + ws as u64,
                };
                assert_eq!(token & 3, refs.saturating_sub(1), "{ctx}: token refs");
                let bit = match l.era {
                    MglruEra::C => ws,
                    _ => refs != 0,
                };
                assert_eq!(shadow_ws, bit, "{ctx}: shadow workingset bit");
                l.check();
                continue;
            }
            assert_eq!(l.ev(Vm::Pgrefill), 2, "{ctx}: both sorted");
            // 6.1.176 counts a protection as a workingset activation, later eras do not.
            let activations = if l.era == MglruEra::A { 2 } else { 0 };
            assert_eq!(l.vm(Vm::WorkingsetActivateFile), activations, "{ctx}");
            assert_eq!(l.ev(Vm::PgscanDirect), 0, "{ctx}: none isolated");
            // The oldest generation emptied: min_seq moved on and reset_ctrl_pos folded the
            // counters into the averages.
            assert_eq!(g.min_seq[FILE], min + 1, "{ctx}");
            for pfn in pfns {
                assert_eq!(l.seq(pfn), min + 1, "{ctx}: moved to min_seq + 1");
                assert!(!l.has(pfn, pg::REFERENCED) && l.refs(pfn) == 0, "{ctx}");
            }
            if l.era == MglruEra::C {
                assert!(l.has(pfns[0], pg::WORKINGSET), "{ctx}: keeps PG_workingset");
                assert_eq!(
                    g.avg_total[FILE], [0; 4],
                    "{ctx}: lazy promotion not counted"
                );
                // Evicted from the next generation, in tier 3.
                l.evict(min + 1, 0, 2);
                assert!(!l.resident(f, 0) && !l.resident(f, 1), "{ctx}");
                assert_eq!(
                    l.g().evicted[FILE],
                    [0, 0, 0, 2],
                    "{ctx}: evicted in tier 3"
                );
                assert_eq!(l.shadow(f, 0), ((min + 2) << 2, true), "{ctx}");
            } else {
                assert!(
                    !l.has(pfns[0], pg::WORKINGSET),
                    "{ctx}: folio_inc_gen clears it"
                );
                // protected[tier 3 - 1] += 2, folded into avg_total[3] = 2 / 2.
                assert_eq!(
                    g.avg_total[FILE],
                    [0, 0, 0, 1],
                    "{ctx}: protected in tier 3"
                );
            }
            l.check();
        }
    }
}

// ------------------------------------------------------------------------------------------
// §2.6, §5.2, §5.3: the PID controller
// ------------------------------------------------------------------------------------------

fn pos(refaulted: u64, total: u64, gain: u64) -> CtrlPos {
    CtrlPos {
        refaulted,
        total,
        gain,
    }
}

/// §2.6 `positive_ctrl_err`: positive iff pv.refaulted < MIN_LRU_BATCH or
/// pv.refaulted · (sp.total + 64) · sp.gain ≤ (sp.refaulted + 1) · pv.total · pv.gain — with
/// equality positive, and the +64 and +1 terms mattering.
#[test]
fn positive_ctrl_err_is_the_exact_inequality_with_the_min_lru_batch_floor() {
    let sp = pos(99, 936, 1); // (sp.refaulted + 1) = 100, (sp.total + 64) = 1000
                              // Equality: 200 · 1000 · 1 == 100 · 1000 · 2.
    assert!(positive_ctrl_err(sp, pos(200, 1000, 2)));
    // One more refault tips it (and without the +64 it would still be positive:
    // 201 · 936 < 200000).
    assert!(!positive_ctrl_err(sp, pos(201, 1000, 2)));
    // Without the +1 the equality case would be negative (200000 > 99 · 2000).
    // The gains weigh each side: sp.gain multiplies PV's refaults, pv.gain SP's.
    assert!(positive_ctrl_err(pos(399, 936, 2), pos(200, 1000, 1)));
    assert!(!positive_ctrl_err(pos(399, 936, 2), pos(201, 1000, 1)));
    assert!(positive_ctrl_err(pos(399, 936, 1), pos(800, 1000, 2)));
    assert!(!positive_ctrl_err(pos(399, 936, 1), pos(801, 1000, 2)));
    // The floor: fewer than MIN_LRU_BATCH refaults is positive whatever the rates.
    assert_eq!(MIN_LRU_BATCH, 64);
    assert!(positive_ctrl_err(pos(0, 0, 1), pos(63, 63, 1)));
    assert!(!positive_ctrl_err(pos(0, 0, 1), pos(64, 64, 1)));
    // An empty set point: (0 + 64) · pv.refaulted ≤ 1 · pv.total?
    assert!(positive_ctrl_err(pos(0, 0, 1), pos(64, 4096, 1)));
    assert!(!positive_ctrl_err(pos(0, 0, 1), pos(64, 4095, 1)));
}

/// A lruvec holding two tier-1 file folios (two reads each) and one tier-0 folio in the
/// oldest generation, all unmapped and clean, with its PID counters zeroed.
fn tier_lab(kernel: Kernel) -> (Lab, u32) {
    let mut l = Lab::new(kernel, SwapConfig::None);
    let f = l.m.create_file("f", 3);
    let p = l.m.create_process("p", 0, 0);
    for i in 0..2 {
        l.read(p, f, 0);
        l.read(p, f, 1);
        if i == 0 {
            l.read(p, f, 2);
            l.drain();
        }
    }
    l.settle();
    l.clear_ctrl(FILE);
    (l, f)
}

/// §5.3 `get_tier_idx` with hand-built counters (set just before eviction): tier 0 has
/// refaulted 99 of 936 (the set point), tier 1 has R of 1000. Tier 1 is protected iff its
/// refault rate beats tier 0's by the era's gain ratio: Era C gains 2:3 (protect when
/// R > 150), Era A/B 1:2 (R > 200). A protected tier-1 folio is moved to min_seq + 1 and
/// counted in pgrefill and `protected`; otherwise it is isolated and evicted in tier 1.
#[test]
fn tier_protection_threshold_follows_the_era_gains() {
    for kernel in Kernel::ALL {
        for r in [63u64, 150, 151, 175, 200, 201] {
            let ctx = format!("{kernel} R={r}");
            let (mut l, f) = tier_lab(kernel);
            let min = l.g().min_seq[FILE];
            assert_eq!(l.seq(l.page(f, 0)), min, "{ctx}");
            {
                let g = l.g_mut();
                g.avg_refaulted[FILE][0] = 99;
                g.avg_total[FILE][0] = 936;
                g.avg_refaulted[FILE][1] = r;
                g.avg_total[FILE][1] = 1000;
            }
            let limit = if l.era == MglruEra::C { 150 } else { 200 };
            let protect = r > limit;
            l.evict(min, 0, 3);
            let tier1 = [l.resident(f, 0), l.resident(f, 1)];
            assert!(!l.resident(f, 2), "{ctx}: the tier-0 folio is evicted");
            if protect {
                assert_eq!(tier1, [true, true], "{ctx}: tier 1 protected");
                assert_eq!(l.ev(Vm::Pgrefill), 2, "{ctx}");
                for page in 0..2 {
                    let pfn = l.page(f, page);
                    assert_eq!(l.seq(pfn), min + 1, "{ctx}");
                    assert!(!l.has(pfn, pg::REFERENCED) && l.refs(pfn) == 0, "{ctx}");
                }
            } else {
                assert_eq!(tier1, [false, false], "{ctx}: tier 1 evicted");
                assert_eq!(l.ev(Vm::Pgrefill), 0, "{ctx}");
                assert_eq!(l.g().evicted[FILE][1], 2, "{ctx}");
            }
            l.check();
        }
    }
}

/// §2.6: `protected` pages count in their tier's total (`read_ctrl_pos`). Era C keeps them
/// at index `tier`, Era A/B at `tier − 1`. Here tier 1's only total is 1000 protected pages
/// (stored where the era's sort_folio stores them) and its refaults sit exactly at the
/// threshold of §5.3: counted, the tier is not protected; ignored (total 0), it would be.
#[test]
fn protected_pages_count_in_their_own_tier_total() {
    for kernel in Kernel::ALL {
        let (mut l, f) = tier_lab(kernel);
        let min = l.g().min_seq[FILE];
        let c = l.era == MglruEra::C;
        {
            let g = l.g_mut();
            g.avg_refaulted[FILE][0] = 99;
            g.avg_total[FILE][0] = 936;
            g.avg_refaulted[FILE][1] = if c { 150 } else { 200 };
            g.protected[FILE][if c { 1 } else { 0 }] = 1000;
        }
        l.evict(min, 0, 3);
        assert!(
            !l.resident(f, 0) && !l.resident(f, 1),
            "{kernel}: tier 1 must not be protected"
        );
        assert_eq!(l.ev(Vm::Pgrefill), 0, "{kernel}");
        l.check();
    }
}

/// §2.6 `reset_ctrl_pos(carryover = true)` when min_seq advances (here through inc_max_seq
/// with a full window, §4.3): avg = (avg + current) / 2 per tier, the current counters are
/// cleared. Era A/B fold `protected[tier − 1]` into tier ≥ 1 and nothing into tier 0.
#[test]
fn reset_ctrl_pos_folds_counters_into_averages() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        {
            let g = l.g_mut();
            g.avg_refaulted[FILE] = [10, 20, 30, 40];
            g.avg_total[FILE] = [100, 200, 300, 400];
            g.refaulted[FILE] = [2, 4, 6, 8];
            g.evicted[FILE] = [10, 20, 40, 80];
            g.protected[FILE] = [100, 200, 400, 800];
        }
        assert_eq!(l.nr_gens(FILE), MAX_NR_GENS);
        l.age(0);
        let g = l.g();
        assert_eq!(g.min_seq[FILE], 1, "{kernel}");
        assert_eq!(g.avg_refaulted[FILE], [6, 12, 18, 24], "{kernel}");
        let expect = if l.era == MglruEra::C {
            [105, 210, 370, 640]
        } else {
            // protected[0] belongs to tier 1, protected[2] to tier 3, protected[3] unused.
            [55, 160, 270, 440]
        };
        assert_eq!(g.avg_total[FILE], expect, "{kernel}");
        assert_eq!(g.refaulted[FILE], [0; 4], "{kernel}");
        assert_eq!(g.evicted[FILE], [0; 4], "{kernel}");
        assert_eq!(g.protected[FILE][..3], [0; 3], "{kernel}");
        l.check();
    }
}

/// A lruvec with two anon folios (PTEs old) and two unmapped file folios, each type's in its
/// oldest generation, min_seq equal for both types, zram swap and zeroed PID counters.
fn type_lab(kernel: Kernel) -> Lab {
    let mut l = Lab::new(kernel, zram(2048));
    let f = l.m.create_file("f", 2);
    let p = l.m.create_process("p", 0, 2);
    l.store(p, 0);
    l.store(p, 1);
    l.read(p, f, 0);
    l.read(p, f, 1);
    l.drain();
    // Not accessed since: the hardware accessed bits are clear.
    for pte in l.m.procs[p as usize].vmas[0].ptes.iter_mut() {
        pte.mkold();
    }
    let (a, fl) = (l.anon(p, 0), l.page(f, 0));
    for _ in 0..8 {
        let g = l.g();
        if l.seq(a) == g.min_seq[ANON] && l.seq(fl) == g.min_seq[FILE] {
            break;
        }
        l.age(60);
    }
    let g = l.g();
    assert_eq!(l.seq(a), g.min_seq[ANON], "{kernel}");
    assert_eq!(l.seq(fl), g.min_seq[FILE], "{kernel}");
    assert_eq!(g.min_seq[ANON], g.min_seq[FILE], "{kernel}");
    l.clear_ctrl(ANON);
    l.clear_ctrl(FILE);
    l
}

/// Which type one proactive eviction batch scans, from pgscan_anon/pgscan_file.
fn scanned_type(l: &mut Lab, swappiness: u32) -> usize {
    let min = l.g().min_seq[ANON];
    l.evict(min, swappiness, 1);
    let (a, f) = (l.vm(Vm::PgscanAnon), l.vm(Vm::PgscanFile));
    assert!(
        (a == 0) != (f == 0),
        "exactly one type scanned: anon {a} file {f}"
    );
    l.check();
    if a > 0 {
        ANON
    } else {
        FILE
    }
}

/// §5.2 `get_type_to_scan` with hand-built counters: anon is the set point (gain =
/// swappiness), file the process variable (gain = 200 − swappiness); file is scanned iff
/// `positive_ctrl_err`. Era C compares all tiers of each type, Era A/B tier 0 only, so file
/// refaults in tier 2 steer Era C to anon and leave Era A/B on file. Swappiness 1 means file
/// first and 200 anon first whatever the counters.
#[test]
fn type_to_scan_follows_refault_rates_and_swappiness() {
    for kernel in Kernel::ALL {
        let c = era_of(kernel.behaviours()) == MglruEra::C;
        // (case, anon tier 0 (refaulted, total), file (tier, refaulted, total), swappiness,
        // expected type). At the boundary R · 1000 · 60 ≤ 100 · 1000 · 140 ⇔ R ≤ 233.
        let cases = [
            ("no refaults", (0, 0), (0, 0, 0), 60, FILE),
            ("file tier 0 refaults", (0, 1000), (0, 1000, 1000), 60, ANON),
            (
                "the same, swappiness 1",
                (0, 1000),
                (0, 1000, 1000),
                1,
                FILE,
            ),
            ("no refaults, swappiness 200", (0, 0), (0, 0, 0), 200, ANON),
            (
                "file tier 2 refaults",
                (0, 1000),
                (2, 1000, 1000),
                60,
                if c { ANON } else { FILE },
            ),
            ("R = 233", (99, 936), (0, 233, 1000), 60, FILE),
            ("R = 234", (99, 936), (0, 234, 1000), 60, ANON),
        ];
        for (name, anon, (tier, refaulted, total), swappiness, expect) in cases {
            let mut l = type_lab(kernel);
            let g = l.g_mut();
            (g.avg_refaulted[ANON][0], g.avg_total[ANON][0]) = anon;
            (g.avg_refaulted[FILE][tier], g.avg_total[FILE][tier]) = (refaulted, total);
            let t = scanned_type(&mut l, swappiness);
            assert_eq!(t, expect, "{kernel} {name}: scanned type");
        }
    }
}

// ------------------------------------------------------------------------------------------
// §3.4: placement
// ------------------------------------------------------------------------------------------

/// Expected generation, as an offset from the window of a fresh lruvec (max_seq 3, min_seq
/// 0: four generations), for Era A, B and C.
fn by_era(l: &Lab, a: u64, b: u64, c: u64) -> u64 {
    match l.era {
        MglruEra::A => a,
        MglruEra::B => b,
        MglruEra::C => c,
    }
}

/// §3.4 with four generations (max_seq 3, min_seq 0): a new anon folio faulted in
/// (`in_lru_fault` sets PG_active) goes to max_seq − 1 in Era C and max_seq in Era A/B; faulted
/// without recency (MADV_RANDOM) it is "anon not in swap cache": max_seq − 1. A new file folio
/// read(2) goes to the oldest generation in Era C and min_seq + 1 in Era A/B (four
/// generations; 6.1.176 places as 6.12); faulted through a mapping it goes where the anon
/// fault goes; faulted without recency it goes where read(2) goes.
#[test]
fn new_folios_are_placed_per_era() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, zram(1024));
        let f = l.m.create_file("f", 4);
        let p = l.m.create_process("p", 0, 1);
        let r = l.m.create_process("r", 0, 1);
        l.m.madvise(r, 0, vm::RAND_READ);
        l.m.mmap_file(p, f, vm::SHARED);
        let rv = l.m.mmap_file(r, f, vm::SHARED);
        l.m.madvise(r, rv, vm::RAND_READ);
        l.store(p, 0);
        l.store(r, 0);
        l.read(p, f, 0);
        l.load(p, f, 1);
        l.load(r, f, 2);
        l.drain();
        let g = l.g();
        assert_eq!((g.max_seq, g.min_seq), (3, [0, 0]));
        let cases = [
            ("anon fault", l.anon(p, 0), by_era(&l, 3, 3, 2)),
            (
                "anon fault without recency",
                l.anon(r, 0),
                by_era(&l, 2, 2, 2),
            ),
            ("file read(2)", l.page(f, 0), by_era(&l, 1, 1, 0)),
            ("file fault", l.page(f, 1), by_era(&l, 3, 3, 2)),
            (
                "file fault without recency",
                l.page(f, 2),
                by_era(&l, 1, 1, 0),
            ),
        ];
        for (name, pfn, seq) in cases {
            assert_eq!(l.seq(pfn), seq, "{kernel}: {name}");
            assert!(
                !l.has(pfn, pg::ACTIVE),
                "{kernel}: {name}: PG_active cleared"
            );
        }
        l.check();
    }
}

/// §3.4 Era B: a new non-active file folio goes to min_seq + 1 only while four generations
/// exist; with three it goes to min_seq (Era A/C: the oldest generation either way).
#[test]
fn era_b_file_placement_depends_on_the_number_of_generations() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 1);
        let p = l.m.create_process("p", 0, 0);
        // Empty oldest generations are dropped (to two generations), then one more is made.
        l.settle();
        l.age(0);
        let g = l.g();
        assert_eq!((g.min_seq[FILE], g.max_seq), (2, 4), "{kernel}");
        l.read(p, f, 0);
        l.drain();
        assert_eq!(
            l.seq(l.page(f, 0)),
            2,
            "{kernel}: three generations → min_seq"
        );
        l.check();
    }
}

/// Reads page `page` of `file` `n` times, then evicts it, and ages the lruvec until four file
/// generations exist again (without moving min_seq[FILE]).
fn evicted_after_reads(l: &mut Lab, file: u32, page: u64, n: u64) {
    l.read_n(file, page, 1);
    l.drain();
    l.read_n(file, page, n - 1);
    l.evict_page(file, page);
    let min = l.g().min_seq[FILE];
    while l.nr_gens(FILE) < MAX_NR_GENS {
        l.age(0);
    }
    assert_eq!(l.g().min_seq[FILE], min);
}

/// §3.4 with §5.10: a recent refault whose shadow carries the workingset bit, by read(2) or
/// by a fault, against one without it (a page read once). Era C restores PG_workingset from
/// the shadow bit: read(2) places it at max_seq − 2, a fault at max_seq (without the bit:
/// oldest generation, max_seq − 1). Era A/B restore it for refs ≥ 3 (4 reads) or in a fault;
/// read(2) places it like any new file folio (min_seq + 1 with four generations), a fault at
/// max_seq.
#[test]
fn refaults_with_the_workingset_bit_are_placed_per_era() {
    for kernel in Kernel::ALL {
        for via in [Via::Fd, Via::Mmap] {
            for ws in [true, false] {
                let ctx = format!("{kernel} {via:?} workingset {ws}");
                let mut l = Lab::new(kernel, SwapConfig::None);
                let f = l.m.create_file("f", 1);
                let p = l.m.create_process("p", 0, 0);
                let q = l.m.create_process("q", 0, 0);
                l.m.mmap_file(q, f, vm::SHARED);
                let reads = match (ws, l.era) {
                    (false, _) => 1,
                    (true, MglruEra::C) => 5,
                    (true, _) => 4,
                };
                evicted_after_reads(&mut l, f, 0, reads);
                let (token, bit) = l.shadow(f, 0);
                assert_eq!(bit, ws, "{ctx}: shadow workingset bit");
                let g = l.g().clone();
                // Still recent (§5.10).
                match l.era {
                    MglruEra::C => assert!(g.max_seq - (token >> 2) < MAX_NR_GENS, "{ctx}"),
                    _ => assert_eq!(token >> 2, g.min_seq[FILE], "{ctx}"),
                }
                let restore = l.vm(Vm::WorkingsetRestoreFile);
                match via {
                    Via::Fd => l.read(p, f, 0),
                    Via::Mmap => l.load(q, f, 0),
                }
                l.drain();
                let pfn = l.page(f, 0);
                let restored = ws || (via == Via::Mmap && l.era != MglruEra::C);
                assert_eq!(l.has(pfn, pg::WORKINGSET), restored, "{ctx}: PG_workingset");
                assert_eq!(
                    l.vm(Vm::WorkingsetRestoreFile) - restore,
                    restored as u64,
                    "{ctx}: workingset_restore_file"
                );
                let (max, min) = (g.max_seq, g.min_seq[FILE]);
                let expect = match (via, ws, l.era) {
                    (Via::Mmap, true, _) => max,
                    (Via::Mmap, false, MglruEra::C) => max - 1,
                    (Via::Mmap, false, _) => max,
                    (Via::Fd, true, MglruEra::C) => max - 2,
                    (Via::Fd, false, MglruEra::C) => min,
                    (Via::Fd, _, _) => min + 1,
                };
                assert_eq!(
                    l.seq(pfn),
                    expect,
                    "{ctx}: placement (max {max}, min {min})"
                );
                l.check();
            }
        }
    }
}

/// §3.4 `reclaiming` and §3.5 `folio_rotate_reclaimable`: a dirty file folio met by reclaim
/// gets PG_reclaim (6.x/7.1: bumped to min_seq + 1 by sort_folio; 7.2: isolated and
/// activated by shrink_folio_list); when its writeback ends it is rotated to the **tail** of
/// the oldest generation (Era C: max(max_seq − 3, min_seq); Era A/B: min_seq), PGROTATED.
/// The tail is what the next eviction batch takes first: with 136+ folios ahead of it in the
/// same generation, a 64-folio batch (Era A/B) or a 1-folio batch (Era C) reaches it only if
/// it sits at the tail.
#[test]
fn folio_rotated_at_writeback_end_goes_to_the_oldest_generation_tail() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 256);
        let p = l.m.create_process("p", 0, 0);
        l.write_fd(p, f, 0);
        for i in 1..=200 {
            l.read(p, f, i);
        }
        l.drain();
        let d = l.page(f, 0);
        l.settle();
        let min = l.g().min_seq[FILE];
        assert_eq!(l.seq(d), min, "{kernel}");
        // This test writes the folio back by hand: keep the flusher from being queued (7.2's
        // evict_folios wakes it, and kernel threads run at the next shrink_folio_list).
        l.m.wb.flusher_queued = true;
        l.evict(min, 0, 1);
        assert!(
            l.resident(f, 0),
            "{kernel}: the dirty folio is not reclaimed"
        );
        assert!(l.has(d, pg::RECLAIM) && l.has(d, pg::DIRTY), "{kernel}");
        let before = l.seq(d);
        let g = l.g().clone();
        let oldest = match l.era {
            MglruEra::C => (g.max_seq - 3).max(g.min_seq[FILE]),
            _ => g.min_seq[FILE],
        };
        assert_ne!(
            before, oldest,
            "{kernel}: not in the oldest generation before"
        );

        l.enter(0);
        l.m.folio_start_writeback(d);
        assert!(l.has(d, pg::WRITEBACK) && !l.has(d, pg::DIRTY));
        l.m.folio_end_writeback(&mut l.pol, d);
        assert!(
            !l.has(d, pg::WRITEBACK) && !l.has(d, pg::RECLAIM),
            "{kernel}"
        );
        assert_eq!(l.vm(Vm::Pgrotated), 1, "{kernel}");
        assert_eq!(
            l.seq(d),
            oldest,
            "{kernel}: rotated to the oldest generation"
        );
        assert!(!l.has(d, pg::ACTIVE), "{kernel}");
        let left = l.g().pages(oldest, FILE);
        assert!(
            left > 2 * MIN_LRU_BATCH,
            "{kernel}: {left} folios in the oldest gen"
        );
        l.check();

        l.evict(oldest, 0, 1);
        assert!(
            !l.resident(f, 0),
            "{kernel}: the rotated folio was at the tail"
        );
        l.check();
    }
}

// ------------------------------------------------------------------------------------------
// §4.3: inc_max_seq and inc_min_seq
// ------------------------------------------------------------------------------------------

/// §4.3 with a type holding MAX_NR_GENS generations: `inc_max_seq` first runs `inc_min_seq`,
/// which moves every folio of the oldest generation into the next one (`folio_inc_gen`:
/// clears the refs counter and PG_referenced; Era C keeps PG_workingset, Era A/B clear it)
/// and advances min_seq. Era C counts each moved folio in `protected[tier]` except the lazily
/// promoted workingset (refs + workingset = 5); reset_ctrl_pos then folds that into avg_total
/// (4 tier-0 folios → 2, 2 tier-1 folios → 1). Era A/B count nothing. The new generation's
/// timestamp is now; a stale seq changes nothing.
#[test]
fn inc_max_seq_with_a_full_window_carries_the_oldest_generation() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 8);
        let p = l.m.create_process("p", 0, 0);
        // Pages 0-3 read once, 4-5 twice, 6-7 five times (reading pages in turn).
        for round in 0..5 {
            for page in 0..8 {
                let n = [1, 1, 1, 1, 2, 2, 5, 5][page as usize];
                if round < n {
                    l.read(p, f, page);
                }
            }
            if round == 0 {
                l.drain();
            }
        }
        l.settle();
        while l.nr_gens(FILE) < MAX_NR_GENS {
            l.age(0);
        }
        let pfns: Vec<Pfn> = (0..8).map(|i| l.page(f, i)).collect();
        let g0 = l.g().clone();
        let (min, max) = (g0.min_seq[FILE], g0.max_seq);
        assert!(pfns.iter().all(|&pfn| l.seq(pfn) == min), "{kernel}");
        l.clear_ctrl(FILE);

        // A stale seq: nothing happens.
        l.enter(0);
        assert!(!l.pol.inc_max_seq(&mut l.m, 0, max - 1, 0), "{kernel}");
        assert_eq!(l.g().max_seq, max);

        l.enter(0);
        let now = l.m.now();
        assert!(l.pol.inc_max_seq(&mut l.m, 0, max, 0), "{kernel}");
        let g = l.g().clone();
        assert_eq!(g.max_seq, max + 1, "{kernel}");
        assert_eq!(g.min_seq[FILE], min + 1, "{kernel}");
        assert_eq!(
            g.timestamps[((max + 1) % MAX_NR_GENS) as usize],
            now,
            "{kernel}"
        );
        for s in 0..MAX_NR_GENS {
            if s != (max + 1) % MAX_NR_GENS {
                assert_eq!(
                    g.timestamps[s as usize], g0.timestamps[s as usize],
                    "{kernel}"
                );
            }
        }
        assert_eq!(g.pages(min, FILE), 0, "{kernel}");
        assert_eq!(g.pages(min + 1, FILE), 8, "{kernel}");
        for (i, &pfn) in pfns.iter().enumerate() {
            assert_eq!(l.seq(pfn), min + 1, "{kernel} page {i}");
            assert!(
                !l.has(pfn, pg::REFERENCED) && l.refs(pfn) == 0,
                "{kernel} page {i}"
            );
            let ws = l.era == MglruEra::C && i >= 6;
            assert_eq!(l.has(pfn, pg::WORKINGSET), ws, "{kernel} page {i}");
        }
        let expect = if l.era == MglruEra::C {
            [2, 1, 0, 0]
        } else {
            [0; 4]
        };
        assert_eq!(g.avg_total[FILE], expect, "{kernel}: protected, folded");
        l.check();
    }
}

/// §4.3: a type that is not evictable (anon at swappiness 0) is not carried: `inc_min_seq`
/// only advances its min_seq, and its oldest folios stay in their slot, which becomes the new
/// youngest generation ("cold/hot inversion" accepted). With swappiness 60 the same folio is
/// carried into the next generation.
#[test]
fn inc_max_seq_leaves_a_non_evictable_type_in_place() {
    for kernel in Kernel::ALL {
        for swappiness in [0u32, 60] {
            let ctx = format!("{kernel} swappiness {swappiness}");
            let mut l = Lab::new(kernel, zram(1024));
            let p = l.m.create_process("p", 0, 1);
            l.store(p, 0);
            l.drain();
            let a = l.anon(p, 0);
            while l.seq(a) != l.g().min_seq[ANON] || l.nr_gens(ANON) < MAX_NR_GENS {
                l.age(60);
            }
            let g0 = l.g().clone();
            let (min, max) = (g0.min_seq[ANON], g0.max_seq);
            l.age(swappiness);
            let g = l.g().clone();
            assert_eq!(g.min_seq[ANON], min + 1, "{ctx}");
            if swappiness == 0 {
                assert_eq!(l.seq(a), max + 1, "{ctx}: the old slot is the new max_seq");
                assert_eq!(g.pages(max + 1, ANON), 1, "{ctx}");
            } else {
                assert_eq!(l.seq(a), min + 1, "{ctx}: carried to the next generation");
                assert_eq!(g.pages(max + 1, ANON), 0, "{ctx}");
            }
            l.check();
        }
    }
}

/// §4.3 (Era C): `inc_min_seq` counts **every** folio it takes off the oldest list in
/// `protected`, except the lazily promoted workingset — including folios a page-table walk
/// already promoted (their gen bits point past min_seq; `folio_inc_gen` leaves them there,
/// they are tier 3: refs cleared, PG_workingset set). Two such folios are folded by
/// reset_ctrl_pos into avg_total[3] = 1.
#[test]
fn inc_min_seq_counts_folios_promoted_by_the_walk_era_c() {
    for kernel in [Kernel::V7_1, Kernel::V7_2] {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 2);
        let p = l.m.create_process("p", 0, 0);
        let r = l.m.create_process("r", 0, 0);
        l.m.mmap_file(p, f, vm::SHARED);
        l.load(p, f, 0);
        l.load(p, f, 1);
        l.drain();
        let pfns = [l.page(f, 0), l.page(f, 1)];
        while l.seq(pfns[0]) != l.g().min_seq[FILE] || l.nr_gens(FILE) < MAX_NR_GENS {
            l.age(0);
        }
        // A read(2) each: PG_referenced, so the walk's sighting is the second one.
        l.read(r, f, 0);
        l.read(r, f, 1);
        l.clear_ctrl(FILE);
        let (min, max) = (l.g().min_seq[FILE], l.g().max_seq);
        l.enter(0);
        assert!(l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
        // The iteration ends when the walker's time reaches the end of its walk.
        l.m.catch_up(&mut l.pol);
        let g = l.g().clone();
        assert_eq!((g.min_seq[FILE], g.max_seq), (min + 1, max + 1), "{kernel}");
        for pfn in pfns {
            assert_eq!(l.seq(pfn), max, "{kernel}: promoted by the walk");
            assert!(l.has(pfn, pg::WORKINGSET) && !l.has(pfn, pg::REFERENCED));
        }
        assert_eq!(
            g.avg_total[FILE],
            [0, 0, 0, 1],
            "{kernel}: counted in tier 3"
        );
        l.check();
    }
}

// ------------------------------------------------------------------------------------------
// §4.4: the page-table walk: Bloom filter and non-leaf PMD accessed bits
// ------------------------------------------------------------------------------------------

/// A process mapping a 1024-page file (two PTE tables, vma 1), no anon memory.
fn walk_lab(kernel: Kernel, enabled: u32) -> (Lab, u32, u32) {
    let mut cfg = MachineConfig::simple(8192);
    cfg.kernel = kernel;
    let mut pcfg = MglruConfig::new(kernel);
    pcfg.enabled = enabled;
    let mut l = Lab::build(cfg, pcfg);
    let f = l.m.create_file("f", 2 * PTRS_PER_PTE);
    let p = l.m.create_process("p", 0, 0);
    assert_eq!(l.m.mmap_file(p, f, vm::SHARED), 1);
    (l, f, p)
}

/// One aging walk (`try_to_inc_max_seq`, not forced) of the root lruvec, to its end.
fn walk(l: &mut Lab) {
    l.enter(0);
    let max = l.g().max_seq;
    assert!(l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
    l.m.catch_up(&mut l.pol);
    assert_eq!(l.g().max_seq, max + 1);
}

/// `iterate_mm_list` shares an iteration. Four processes map the file (four mms); a second
/// reclaimer that asks for the same generation while the first one's walk is under way takes
/// its share of the mms left (the rest goes twice as fast), walks until the last one is handed
/// out and returns false; `max_seq` advances only then, by the policy timer, for everyone.
#[test]
fn a_walk_under_way_is_joined_not_repeated() {
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1] {
        let (mut l, f, p) = walk_lab(kernel, 0x7);
        let mut procs = vec![p];
        for i in 1..4 {
            let q = l.m.create_process(&format!("q{i}"), 0, 0);
            l.m.mmap_file(q, f, vm::SHARED);
            procs.push(q);
        }
        for &q in &procs {
            for page in 0..2 * PTRS_PER_PTE {
                l.load(q, f, page);
            }
        }
        l.enter(0);
        let start = l.m.now();
        let max = l.g().max_seq;
        assert!(l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
        let until = l.m.now();
        assert!(until > start, "{kernel}: a walk takes time");
        let w = l.g().mm.walking.expect("a walk under way");
        // Four equal mms: the last is handed out after three walks, at 3/4 of the walk.
        assert_eq!(w.last_handout - start, (until - start) / 4 * 3, "{kernel}");
        assert_eq!(l.g().max_seq, max, "{kernel}: the generation waits");
        // A second reclaimer at the start joins: the hand-outs left go twice as fast.
        l.m.ctx = Ctx {
            now: start,
            ..Ctx::default()
        };
        assert!(!l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
        let end = start + (w.last_handout - start) / 2;
        assert_eq!(l.m.now(), end, "{kernel}: the joiner walks its share");
        assert_eq!(
            l.g().max_seq,
            max,
            "{kernel}: the end is the policy timer's"
        );
        l.m.catch_up(&mut l.pol);
        assert_eq!(
            l.g().max_seq,
            max + 1,
            "{kernel}: then the generation exists"
        );
        assert!(!l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
        l.check();
    }
}

/// With one mm (a single multi-threaded process), the only mm is handed out at once: a
/// reclaimer that asks while its walk is under way finds the list's end, ends the iteration
/// itself and creates the generation at once, without waiting (`iterate_mm_list`'s `last`).
#[test]
fn a_reclaimer_that_finds_every_mm_taken_ends_the_iteration() {
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1] {
        let (mut l, f, p) = walk_lab(kernel, 0x7);
        for page in 0..2 * PTRS_PER_PTE {
            l.load(p, f, page);
        }
        l.enter(0);
        let start = l.m.now();
        let max = l.g().max_seq;
        assert!(l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
        assert!(l.m.now() > start);
        l.m.ctx = Ctx {
            now: start + 1,
            ..Ctx::default()
        };
        assert!(l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
        assert_eq!(l.m.now(), start + 1, "{kernel}: no waiting");
        assert_eq!(l.g().max_seq, max + 1, "{kernel}");
        assert!(l.g().mm.walking.is_none());
        l.check();
    }
}

/// `walk_pte_range` reads every entry of a PTE table (`pte_walk_ns` each: `get_pte_pfn`
/// passes over none and old ones) and pays `get_pfn_folio`, `ptep_clear_young_notify` and
/// `folio_update_gen` only for a young one (`pte_young_ns` more). The first walk of a new mm
/// visits both tables of the mapping, 1024 entries, of which 528 are young: it takes
/// 1024 × `pte_walk_ns` + 528 × `pte_young_ns` longer than the same walk at no cost.
#[test]
fn a_walk_costs_every_pte_it_reads_and_each_young_one_more() {
    for kernel in Kernel::ALL {
        let took = |walk_ns: u64, young_ns: u64| {
            let (mut l, f, p) = walk_lab(kernel, 0x7);
            l.m.cfg.cost.pte_walk_ns = walk_ns;
            l.m.cfg.cost.pte_young_ns = young_ns;
            for i in (0..PTRS_PER_PTE).chain(PTRS_PER_PTE..PTRS_PER_PTE + 16) {
                l.load(p, f, i);
            }
            l.drain();
            l.enter(0);
            let start = l.m.now();
            let max = l.g().max_seq;
            assert!(l.pol.try_to_inc_max_seq(&mut l.m, 0, max, 0, false));
            let st = &l.g().mm.stats;
            assert_eq!(
                (st[MM_LEAF_TOTAL], st[MM_LEAF_YOUNG]),
                (1024, 528),
                "{kernel}"
            );
            l.m.now() - start
        };
        let cost = CostProfile::default();
        assert!(cost.pte_young_ns > cost.pte_walk_ns);
        assert_eq!(
            took(cost.pte_walk_ns, cost.pte_young_ns) - took(0, 0),
            1024 * cost.pte_walk_ns + 528 * cost.pte_young_ns,
            "{kernel}"
        );
    }
}

/// `walk_mm`: `mmap_read_trylock` fails while munmap holds the mm's `mmap_lock` for write,
/// and the walk skips that mm (its young bits stay); once the munmap is over it is walked.
#[test]
fn a_walk_skips_an_mm_whose_mmap_lock_munmap_holds() {
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1] {
        let (mut l, f, p) = walk_lab(kernel, LRU_GEN_CORE | LRU_GEN_MM_WALK);
        for page in 0..2 * PTRS_PER_PTE {
            l.load(p, f, page);
        }
        l.enter(0);
        let now = l.m.now();
        l.m.procs[p as usize].mmap_write_until = now + 1_000_000;
        walk(&mut l);
        assert!(young(&l, p, 0), "{kernel}: skipped, young bit kept");
        assert_eq!(l.g().mm.trylock_failed, 1, "{kernel}");
        assert_eq!(
            l.g().mm.stats[MM_NONLEAF_TOTAL],
            0,
            "{kernel}: no PMD visited"
        );
        // After the munmap the mm is walked (its PMDs visited; the Bloom filter, which the
        // skipped walk left empty, now skips its PTE tables, as the kernel's would).
        l.m.ctx = Ctx {
            now: now + 2_000_000,
            ..Ctx::default()
        };
        l.m.procs[p as usize].mm_used = !0;
        walk(&mut l);
        assert!(l.g().mm.stats[MM_NONLEAF_TOTAL] > 0, "{kernel}: walked");
        assert_eq!(l.g().mm.trylock_failed, 1, "{kernel}");
        l.check();
    }
}

fn young(l: &Lab, p: u32, page: u64) -> bool {
    l.m.procs[p as usize].vmas[1].ptes[page as usize].young()
}

/// §4.4 Bloom filters: a walk adds a PTE table to the filter the next walk tests only if it
/// was dense (`suitable_to_scan`: one young PTE in 8). Table A (512 of 512 young) is walked by
/// the next walk; table B (16 of 512) is skipped, so its young bits survive; A walked again
/// while sparse is skipped by the walk after. (The first walk force-scans the new mm.)
#[test]
fn bloom_filter_carries_dense_pte_tables_to_the_next_walk() {
    for kernel in Kernel::ALL {
        for enabled in [0x7, 0x3] {
            let ctx = format!("{kernel} enabled {enabled:#x}");
            let (mut l, f, p) = walk_lab(kernel, enabled);
            let b = PTRS_PER_PTE;
            for i in (0..PTRS_PER_PTE).chain(b..b + 16) {
                l.load(p, f, i);
            }
            l.drain();
            walk(&mut l);
            let seq = l.g().max_seq;
            let (ka, kb) = (walk::bloom_keys(p, 1, 0), walk::bloom_keys(p, 1, 1));
            assert!(
                walk::test_bloom(&l.g().mm, seq, ka),
                "{ctx}: A (dense) added"
            );
            assert!(
                !walk::test_bloom(&l.g().mm, seq, kb),
                "{ctx}: B (sparse) not added"
            );
            assert!(
                !young(&l, p, 0) && !young(&l, p, b),
                "{ctx}: the first walk saw both"
            );

            for i in (0..16).chain(b..b + 16) {
                l.load(p, f, i);
            }
            let found = l.g().mm.stats[MM_NONLEAF_FOUND];
            walk(&mut l);
            assert_eq!(l.g().mm.stats[MM_NONLEAF_FOUND], found + 1, "{ctx}: only A");
            assert!((0..16).all(|i| !young(&l, p, i)), "{ctx}: A walked");
            assert!((b..b + 16).all(|i| young(&l, p, i)), "{ctx}: B skipped");
            let seq = l.g().max_seq;
            assert!(
                !walk::test_bloom(&l.g().mm, seq, ka),
                "{ctx}: A was sparse this time"
            );

            for i in 0..PTRS_PER_PTE {
                l.load(p, f, i);
            }
            walk(&mut l);
            assert!(
                (0..PTRS_PER_PTE).all(|i| young(&l, p, i)),
                "{ctx}: A skipped"
            );
            assert!((b..b + 16).all(|i| young(&l, p, i)), "{ctx}: B skipped");
            l.check();
        }
    }
}

/// §4.4 non-leaf young shortcut (cap bit 0x0004): a PMD whose accessed bit is clear is
/// skipped by a non-forced walk even when the Bloom filter holds it; with the bit off
/// (enabled 0x0003) the same PTE table is walked. The walk clears the PMD accessed bits it
/// passes only under the shortcut.
#[test]
fn pmd_not_seen_young_is_skipped_only_with_the_nonleaf_bit() {
    for kernel in Kernel::ALL {
        for enabled in [
            LRU_GEN_CORE | LRU_GEN_MM_WALK | LRU_GEN_NONLEAF_YOUNG,
            LRU_GEN_CORE | LRU_GEN_MM_WALK,
        ] {
            let ctx = format!("{kernel} enabled {enabled:#x}");
            let nonleaf = enabled & LRU_GEN_NONLEAF_YOUNG != 0;
            let (mut l, f, p) = walk_lab(kernel, enabled);
            for _ in 0..2 {
                for i in 0..PTRS_PER_PTE {
                    l.load(p, f, i);
                }
                l.drain();
                walk(&mut l);
            }
            assert_eq!(
                l.m.procs[p as usize].vmas[1].pmd_young[0], !nonleaf,
                "{ctx}: PMD accessed bit cleared by the walk"
            );
            // The task runs (lru_gen_use_mm) without touching the mapping.
            l.m.procs[p as usize].mm_used = !0;
            let (found, total) = (
                l.g().mm.stats[MM_NONLEAF_FOUND],
                l.g().mm.stats[MM_LEAF_TOTAL],
            );
            walk(&mut l);
            let st = l.g().mm.stats;
            let walked = if nonleaf { 0 } else { 1 };
            assert_eq!(st[MM_NONLEAF_FOUND], found + walked, "{ctx}");
            assert_eq!(st[MM_LEAF_TOTAL], total + walked * PTRS_PER_PTE, "{ctx}");
            l.check();
        }
    }
}

// ------------------------------------------------------------------------------------------
// §4.5: look-around
// ------------------------------------------------------------------------------------------

/// A 64-page mapped file: page 10 (the target) alone in the oldest generation, the 63 others
/// two generations younger (not the youngest), every PTE young; pages below 32 were also read
/// once through an fd (PG_referenced). The Bloom filter look-around feeds is allocated.
fn look_around_lab(kernel: Kernel) -> (Lab, u32, u32) {
    let mut l = Lab::new(kernel, SwapConfig::None);
    let f = l.m.create_file("f", 64);
    let p = l.m.create_process("p", 0, 0);
    l.m.mmap_file(p, f, vm::SHARED);
    l.load(p, f, 10);
    l.drain();
    let t = l.page(f, 10);
    while l.seq(t) != l.g().min_seq[FILE] || l.nr_gens(FILE) < MAX_NR_GENS {
        l.age(0);
    }
    for i in (0..64).filter(|&i| i != 10) {
        l.load(p, f, i);
    }
    l.drain();
    l.age(0);
    l.read_n_each(f, (0..32).filter(|&i| i != 10));
    let g = l.g().clone();
    assert_eq!(l.seq(t), g.min_seq[FILE], "{kernel}");
    assert!(l.seq(l.page(f, 0)) < g.max_seq, "{kernel}");
    let max = g.max_seq;
    walk::reset_bloom(&mut l.g_mut().mm, max);
    (l, f, p)
}

impl Lab {
    /// One read(2) of each page, by a new task (so each read marks the folio).
    fn read_n_each(&mut self, file: u32, pages: impl Iterator<Item = u64>) {
        for page in pages {
            self.read_n(file, page, 1);
        }
    }
}

/// §4.5 with a walker (proactive reclaim has one): reclaiming the target finds its PTE young,
/// and look-around clears the young bits of the other 63 PTEs of its table and updates their
/// folios with `folio_update_gen`: Era C promotes (to max_seq, PG_workingset) only folios seen
/// before (PG_referenced), the others just get PG_referenced; Era A/B promote every one. The
/// dense table is added to the Bloom filter of max_seq (the next walk's).
#[test]
fn look_around_with_a_walker_updates_young_neighbours() {
    for kernel in Kernel::ALL {
        let (mut l, f, p) = look_around_lab(kernel);
        let min = l.g().min_seq[FILE];
        let before: Vec<u64> = (0..64).map(|i| l.seq(l.page(f, i))).collect();
        l.evict(min, 0, 1);
        assert!(l.resident(f, 10), "{kernel}: the young target is kept");
        let max = l.g().max_seq;
        for i in (0..64).filter(|&i| i != 10) {
            let pfn = l.page(f, i);
            assert!(!young(&l, p, i), "{kernel} page {i}: young bit cleared");
            let promote = l.era != MglruEra::C || i < 32;
            if promote {
                assert_eq!(l.seq(pfn), max, "{kernel} page {i}: promoted");
                assert!(!l.has(pfn, pg::REFERENCED), "{kernel} page {i}");
                assert_eq!(
                    l.has(pfn, pg::WORKINGSET),
                    l.era == MglruEra::C,
                    "{kernel} {i}"
                );
            } else {
                assert_eq!(
                    l.seq(pfn),
                    before[i as usize],
                    "{kernel} page {i}: not moved"
                );
                assert!(l.has(pfn, pg::REFERENCED), "{kernel} page {i}: marked");
            }
        }
        let key = walk::bloom_keys(p, 1, 0);
        assert!(
            walk::test_bloom(&l.g().mm, max, key),
            "{kernel}: fed the Bloom filter"
        );
        l.check();
    }
}

/// §4.5 without a walker (direct reclaim): Era C marks first-seen neighbours PG_referenced
/// and, for those seen before, sets PG_workingset and queues `folio_activate` (→ max_seq at
/// the drain, PGACTIVATE); Era B queues every neighbour not in max_seq; Era A, finding 63
/// (≥ PAGEVEC_SIZE), moves them to max_seq under the LRU lock instead (no PGACTIVATE).
#[test]
fn look_around_without_a_walker_activates_neighbours() {
    for kernel in Kernel::ALL {
        let (mut l, f, p) = look_around_lab(kernel);
        let t = l.page(f, 10);
        let before: Vec<u64> = (0..64).map(|i| l.seq(l.page(f, i))).collect();
        l.enter(0);
        let sc = ScanControl::new(32, None);
        l.pol.folio_check_references(&mut l.m, t, &sc);
        l.drain();
        let max = l.g().max_seq;
        let mut activated = 0;
        for i in (0..64).filter(|&i| i != 10) {
            let pfn = l.page(f, i);
            assert!(!young(&l, p, i), "{kernel} page {i}: young bit cleared");
            let promote = l.era != MglruEra::C || i < 32;
            if promote {
                activated += (l.era != MglruEra::A) as u64;
                assert_eq!(l.seq(pfn), max, "{kernel} page {i}: activated");
                assert_eq!(
                    l.has(pfn, pg::WORKINGSET),
                    l.era == MglruEra::C,
                    "{kernel} {i}"
                );
            } else {
                assert_eq!(
                    l.seq(pfn),
                    before[i as usize],
                    "{kernel} page {i}: not moved"
                );
                assert!(l.has(pfn, pg::REFERENCED), "{kernel} page {i}: marked");
            }
        }
        assert_eq!(l.vm(Vm::Pgactivate), activated, "{kernel}");
        l.check();
    }
}

/// Look-around follows only the folio being checked (`lru_gen_look_around` is called from
/// `folio_referenced_one`, which an unmapped folio never reaches): checking an unmapped folio
/// right after the mapped target leaves the target's neighbours, young again, alone.
#[test]
fn look_around_does_not_repeat_for_an_unmapped_folio() {
    for kernel in Kernel::ALL {
        let (mut l, f, p) = look_around_lab(kernel);
        let g = l.m.create_file("g", 1);
        l.read_n(g, 0, 1);
        l.drain();
        let sc = ScanControl::new(32, None);
        l.enter(0);
        let t = l.page(f, 10);
        l.pol.folio_check_references(&mut l.m, t, &sc);
        l.drain();
        for i in (0..64).filter(|&i| i != 10) {
            l.load(p, f, i);
        }
        l.enter(0);
        let unmapped = l.page(g, 0);
        l.pol.folio_check_references(&mut l.m, unmapped, &sc);
        for i in (0..64).filter(|&i| i != 10) {
            assert!(young(&l, p, i), "{kernel} page {i}: young bit left alone");
        }
        l.check();
    }
}

/// "rmap lock contention: rotate" in every era: while an exiting process's `free_pgtables`
/// holds the file's `i_mmap_rwsem` for write, `folio_referenced` returns -1 and
/// `folio_check_references` keeps the folio without looking at (or around) its PTEs.
#[test]
fn rmap_lock_contention_keeps_the_folio_without_a_look_around() {
    for kernel in Kernel::ALL {
        let (mut l, f, p) = look_around_lab(kernel);
        let q = l.m.create_process("q", 0, 0);
        l.m.mmap_file(q, f, vm::SHARED);
        let t = l.page(f, 10);
        l.enter(q);
        let at = l.m.now();
        let end = l.m.exit_mmap(&mut l.pol, q, at);
        l.m.ctx = Ctx {
            now: end - 1,
            ..Default::default()
        };
        let sc = ScanControl::new(32, None);
        let r = l.pol.folio_check_references(&mut l.m, t, &sc);
        assert_eq!(r, FolioRef::Keep, "{kernel}");
        assert_eq!(l.m.rmap_trylock_failed, 1, "{kernel}");
        for i in 0..64 {
            assert!(young(&l, p, i), "{kernel} page {i}: not looked at");
        }
        l.check();
    }
}

// ------------------------------------------------------------------------------------------
// §5.5: sort_folio
// ------------------------------------------------------------------------------------------

/// A lruvec whose oldest file generation holds the target (page 0, written or read first:
/// the list tail) and two clean unmapped fillers (pages 1 and 2), with `cfg`'s switches.
fn sort_lab(pcfg: MglruConfig, dirty: bool) -> (Lab, u32, Pfn) {
    let mut cfg = MachineConfig::simple(8192);
    cfg.kernel = pcfg.kernel;
    let mut l = Lab::build(cfg, pcfg);
    let f = l.m.create_file("f", 3);
    let p = l.m.create_process("p", 0, 0);
    if dirty {
        l.write_fd(p, f, 0);
    } else {
        l.read(p, f, 0);
    }
    l.read(p, f, 1);
    l.read(p, f, 2);
    l.drain();
    l.settle();
    let t = l.page(f, 0);
    assert_eq!(l.seq(t), l.g().min_seq[FILE]);
    (l, f, t)
}

/// Pages isolated by the fillers' eviction: one 1-folio batch in Era C, one batch of the
/// whole generation in Era A/B.
fn fillers_isolated(l: &Lab) -> u64 {
    if l.era == MglruEra::C {
        1
    } else {
        2
    }
}

/// §5.5 rule 1: an mlocked folio found on a generation list is culled to the unevictable
/// list (PG_unevictable, UNEVICTABLE_PGCULLED, counted as sorted in pgrefill), not isolated.
#[test]
fn sort_folio_culls_unevictable_folios() {
    for kernel in Kernel::ALL {
        let (mut l, f, t) = sort_lab(MglruConfig::new(kernel), false);
        // mlock_folio on a folio still on its LRU list.
        l.m.folios[t as usize].set(pg::MLOCKED);
        let min = l.g().min_seq[FILE];
        l.evict(min, 0, 1);
        assert!(l.resident(f, 0), "{kernel}");
        assert!(
            l.has(t, pg::UNEVICTABLE) && l.m.folios[t as usize].gen() == 0,
            "{kernel}"
        );
        assert_eq!(l.g().unevictable, 1, "{kernel}");
        assert_eq!(l.vm(Vm::UnevictablePgsCulled), 1, "{kernel}");
        assert_eq!(l.ev(Vm::Pgrefill), 1, "{kernel}");
        assert_eq!(l.ev(Vm::PgscanDirect), fillers_isolated(&l), "{kernel}");
        assert_eq!(l.pol.lru_pages(0, 0)[4], 1, "{kernel}");
        l.check();
    }
}

/// §5.5 rule 6 before series patch 10 (6.1, 7.1): a dirty file folio in the oldest
/// generation is never isolated: `folio_inc_gen(reclaiming)` moves it to min_seq + 1 with
/// PG_reclaim (pgrefill). With patch 10 (7.2, or 7.1 + the switch, and Debian's 6.12.117) it
/// is isolated (pgscan) and shrink_folio_list sets PG_reclaim and activates it (pgactivate,
/// placed at max_seq − 1, or in 6.12's putback at max_seq); 7.2 or 6.12 without the switch
/// bumps it again (7.2 without PG_reclaim: patch 12 removed folio_inc_gen's flag). The same
/// holds for a folio under writeback.
#[test]
fn sort_folio_bumps_dirty_folios_until_common_reactivation() {
    // (configuration, isolated, generations below max_seq when activated)
    let cases = [
        (MglruConfig::new(Kernel::V6_1), false, 0),
        (MglruConfig::new(Kernel::V6_12), true, 0),
        (
            with_switch(
                Kernel::V6_12,
                Switch::CommonDirtyWritebackReactivation,
                false,
            ),
            false,
            0,
        ),
        (MglruConfig::new(Kernel::V7_1), false, 1),
        (MglruConfig::new(Kernel::V7_2), true, 1),
        (
            with_switch(Kernel::V7_1, Switch::CommonDirtyWritebackReactivation, true),
            true,
            1,
        ),
        (
            with_switch(
                Kernel::V7_2,
                Switch::CommonDirtyWritebackReactivation,
                false,
            ),
            false,
            1,
        ),
    ];
    for (writeback, kind) in [(false, "dirty"), (true, "writeback")] {
        for (pcfg, isolate, below_max) in cases {
            let ctx = format!("{} {:?} {kind}", pcfg.kernel, pcfg.switches);
            let (mut l, f, t) = sort_lab(pcfg, true);
            if writeback {
                l.enter(0);
                l.m.folio_start_writeback(t);
            }
            let min = l.g().min_seq[FILE];
            let max = l.g().max_seq;
            l.evict(min, 0, 1);
            assert!(l.resident(f, 0), "{ctx}: not reclaimed");
            // Patch 12 drops folio_inc_gen's PG_reclaim: without patch 10 nothing sets it.
            let reclaim = isolate || !pcfg.switches.on(Switch::DropReclaimingArg);
            assert_eq!(l.has(t, pg::RECLAIM), reclaim, "{ctx}: PG_reclaim");
            assert!(!l.resident(f, 1), "{ctx}: a filler was reclaimed");
            let isolated = l.ev(Vm::PgscanDirect);
            let fillers = fillers_isolated(&l);
            if isolate {
                assert_eq!(isolated, fillers + 1, "{ctx}: isolated");
                assert_eq!(l.ev(Vm::Pgrefill), 0, "{ctx}");
                assert_eq!(l.vm(Vm::Pgactivate), 1, "{ctx}: activated");
                assert_eq!(l.seq(t), max - below_max, "{ctx}: active placement");
            } else {
                assert_eq!(isolated, fillers, "{ctx}: not isolated");
                assert_eq!(l.ev(Vm::Pgrefill), 1, "{ctx}: sorted");
                assert_eq!(l.vm(Vm::Pgactivate), 0, "{ctx}");
                assert_eq!(l.seq(t), min + 1, "{ctx}: bumped one generation");
            }
            l.check();
        }
    }
}

fn with_switch(kernel: Kernel, w: Switch, on: bool) -> MglruConfig {
    let mut c = MglruConfig::new(kernel);
    c.switches = if on {
        c.switches.with(w)
    } else {
        c.switches.without(w)
    };
    c
}

/// §5.5 rule 7: a clean, unmapped, unprotected folio of the oldest generation is isolated
/// and reclaimed (pgscan, pgsteal), nothing sorted. (Era C batches stop at the 1 page asked
/// for; Era A/B's `run_eviction` batch takes the whole generation.)
#[test]
fn sort_folio_lets_plain_folios_be_isolated() {
    for kernel in Kernel::ALL {
        let (mut l, f, _) = sort_lab(MglruConfig::new(kernel), false);
        let min = l.g().min_seq[FILE];
        l.evict(min, 0, 1);
        assert!(
            !l.resident(f, 0),
            "{kernel}: the tail folio is reclaimed first"
        );
        let n = if l.era == MglruEra::C { 1 } else { 3 };
        assert_eq!(l.ev(Vm::PgscanDirect), n, "{kernel}");
        assert_eq!(l.ev(Vm::PgstealDirect), n, "{kernel}");
        assert_eq!(l.vm(Vm::PgscanFile), n, "{kernel}");
        assert_eq!(l.ev(Vm::Pgrefill), 0, "{kernel}");
        l.check();
    }
}

/// §5.5 rule 2: a folio whose gen bits a page-table walk moved past min_seq, but which still
/// sits on the oldest list (the walk does not move list entries, and with three generations
/// aging does not run inc_min_seq), is moved to its own generation's list by sort_folio
/// (pgrefill), not isolated.
#[test]
fn sort_folio_moves_walker_promoted_folios_to_their_generation() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 2);
        let p = l.m.create_process("p", 0, 0);
        l.m.mmap_file(p, f, vm::SHARED);
        l.load(p, f, 0);
        l.read(p, f, 1);
        l.drain();
        let q = l.page(f, 0);
        // Reclaim the read folio (the oldest); then age (Era A/B also flush the empty oldest
        // generation) until Q is the oldest of three generations.
        l.evict_page(f, 1);
        for _ in 0..8 {
            let min = l.g().min_seq[FILE];
            match (l.seq(q) - min, l.nr_gens(FILE)) {
                (0, 3) => break,
                (1, 4) => l.settle(),
                _ => l.age(0),
            }
        }
        assert_eq!(
            (l.seq(q), l.nr_gens(FILE)),
            (l.g().min_seq[FILE], 3),
            "{kernel}"
        );
        // A filler in the same generation, and a first sighting for Era C.
        l.read_n(f, 1, 1);
        l.drain();
        assert_eq!(l.seq(l.page(f, 1)), l.g().min_seq[FILE], "{kernel}");
        l.read_n(f, 0, 1);
        let (min, max) = (l.g().min_seq[FILE], l.g().max_seq);
        walk(&mut l);
        assert_eq!(l.seq(q), max, "{kernel}: gen bits promoted by the walk");
        assert_eq!(l.g().min_seq[FILE], min, "{kernel}: no inc_min_seq");
        let (refill, scan) = (l.ev(Vm::Pgrefill), l.ev(Vm::PgscanDirect));
        l.evict(min, 0, 1);
        assert!(l.resident(f, 0), "{kernel}");
        assert_eq!(l.seq(q), max, "{kernel}");
        assert_eq!(l.ev(Vm::Pgrefill) - refill, 1, "{kernel}: sorted");
        assert!(!l.resident(f, 1), "{kernel}: the filler was reclaimed");
        assert_eq!(
            l.ev(Vm::PgscanDirect) - scan,
            1,
            "{kernel}: only the filler isolated"
        );
        l.check();
    }
}

// ------------------------------------------------------------------------------------------
// §5.10: which refaults are recent
// ------------------------------------------------------------------------------------------

fn refaulted(g: &GenLruvec, t: usize) -> u64 {
    g.refaulted[t].iter().sum()
}

/// Reads pages 0 and 1 of a new file once and evicts both in one batch (same token).
/// Returns (file, token seq).
fn two_evicted(l: &mut Lab) -> (u32, u64) {
    let f = l.m.create_file("f", 2);
    l.read_n(f, 0, 1);
    l.read_n(f, 1, 1);
    l.drain();
    let max = l.g().max_seq;
    l.evict(max - 2, 0, 2);
    let (t0, t1) = (l.shadow(f, 0).0 >> 2, l.shadow(f, 1).0 >> 2);
    assert_eq!(t0, t1);
    (f, t0)
}

/// Refaults page `page` by read(2); returns (refaulted delta, workingset_refault_file delta,
/// workingset_activate_file delta).
fn refault(l: &mut Lab, file: u32, page: u64) -> (u64, u64, u64) {
    let before = (
        refaulted(l.g(), FILE),
        l.vm(Vm::WorkingsetRefaultFile),
        l.vm(Vm::WorkingsetActivateFile),
    );
    l.read_n(file, page, 1);
    l.drain();
    (
        refaulted(l.g(), FILE) - before.0,
        l.vm(Vm::WorkingsetRefaultFile) - before.1,
        l.vm(Vm::WorkingsetActivateFile) - before.2,
    )
}

/// §5.10 `lru_gen_test_recent`: Era A/B count a refault as recent only while min_seq of its
/// type is still the one stored at eviction; Era C while max_seq is within MAX_NR_GENS − 1 of
/// it, however far min_seq moved. Here min_seq[FILE] moves on (by evicting another folio)
/// without aging: Era A/B stop counting, Era C still counts. Every refault in the same
/// lruvec counts in workingset_refault_file (Era A: only recent ones); recent ones in
/// `refaulted[]` and, in Era B, workingset_activate_file (Era C only for refaults in a
/// fault; Era A counts activation in sort_folio instead).
#[test]
fn refault_recency_follows_min_seq_in_era_a_b_and_max_seq_in_era_c() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let (f, token) = two_evicted(&mut l);
        assert_eq!(l.g().min_seq[FILE], token, "{kernel}");
        let activate = (l.era == MglruEra::B) as u64;
        assert_eq!(refault(&mut l, f, 0), (1, 1, activate), "{kernel}: recent");
        // Evict the refaulted folio again: min_seq[FILE] moves past the token.
        l.age(0);
        let pfn = l.page(f, 0);
        assert_eq!(l.seq(pfn), token, "{kernel}");
        l.evict(token, 0, 1);
        assert!(!l.resident(f, 0));
        let g = l.g();
        assert!(g.min_seq[FILE] > token, "{kernel}");
        assert!(g.max_seq - token < MAX_NR_GENS, "{kernel}");
        let expect = match l.era {
            MglruEra::C => (1, 1, 0),
            MglruEra::B => (0, 1, 0),
            MglruEra::A => (0, 0, 0),
        };
        assert_eq!(refault(&mut l, f, 1), expect, "{kernel}: min_seq moved on");
        l.check();
    }
}

/// §5.10 Era C: recent ⇔ |max_seq − token seq| < MAX_NR_GENS. With the token at s, a refault
/// at max_seq = s + 3 is recent, at s + 4 it is not (only workingset_refault_file counts).
#[test]
fn era_c_refault_is_recent_within_four_generations_of_max_seq() {
    for kernel in [Kernel::V7_1, Kernel::V7_2] {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let (f, token) = two_evicted(&mut l);
        while l.g().max_seq < token + 3 {
            l.age(0);
        }
        assert_eq!(
            refault(&mut l, f, 0),
            (1, 1, 0),
            "{kernel}: max_seq = token + 3"
        );
        l.age(0);
        assert_eq!(l.g().max_seq, token + 4);
        assert_eq!(
            refault(&mut l, f, 1),
            (0, 1, 0),
            "{kernel}: max_seq = token + 4"
        );
        l.check();
    }
}

/// §5.10 step 1: a refault into another lruvec than the one the folio was evicted from (here
/// another memcg reads the page back) is not counted at all: no workingset_refault_file, no
/// `refaulted` in either lruvec, no restored workingset.
#[test]
fn refault_into_another_memcg_is_not_counted() {
    for kernel in Kernel::ALL {
        let mut cfg = MachineConfig::simple(8192);
        cfg.kernel = kernel;
        cfg.memcgs = vec![MemcgConfig::new("/a"), MemcgConfig::new("/b")];
        let mut l = Lab::build(cfg, MglruConfig::new(kernel));
        let (a, b) = (
            l.m.memcg_by_path("/a").unwrap(),
            l.m.memcg_by_path("/b").unwrap(),
        );
        let f = l.m.create_file("f", 2);
        let pa = l.m.create_process("pa", a, 0);
        let pb = l.m.create_process("pb", b, 0);
        for pid in [pa, pb] {
            l.read(pid, f, 0);
            l.read(pid, f, 1);
        }
        l.drain();
        let max = l.pol.lruvec(a, 0).max_seq;
        let c = format!("- {} 0 {} 0 2", a + 1, max - 2);
        l.cmd(&c).unwrap();
        assert!(!l.resident(f, 0) && !l.resident(f, 1), "{kernel}");
        let before = (
            refaulted(l.pol.lruvec(a, 0), FILE),
            refaulted(l.pol.lruvec(b, 0), FILE),
            l.vm(Vm::WorkingsetRefaultFile),
        );
        // Page 0 comes back in /b, page 1 in /a (the control).
        let rb = l.m.create_process("rb", b, 0);
        l.read(rb, f, 0);
        let ra = l.m.create_process("ra", a, 0);
        l.read(ra, f, 1);
        l.drain();
        assert_eq!(l.m.folios[l.page(f, 0) as usize].memcg, b);
        let after = (
            refaulted(l.pol.lruvec(a, 0), FILE),
            refaulted(l.pol.lruvec(b, 0), FILE),
            l.vm(Vm::WorkingsetRefaultFile),
        );
        assert_eq!(
            (after.0 - before.0, after.1 - before.1, after.2 - before.2),
            (1, 0, 1),
            "{kernel}: only the refault into /a is counted"
        );
        l.check();
    }
}

// ------------------------------------------------------------------------------------------
// §5.1 step 6 / §5.8: folios shrink_folio_list rejected
// ------------------------------------------------------------------------------------------

/// §5.1 step 6 and its Era A/B variant. A mapped folio with a young PTE, read three times
/// through an fd, is isolated from the tail of the oldest generation (70 clean folios behind
/// it keep that generation populated). Era A/B: shrink_folio_list keeps it (first young
/// sighting, classic rules), and evict_folios, because it is mapped/referenced, clears its
/// refs counter, PG_referenced and PG_workingset and sets PG_active: it goes to max_seq.
/// Era C: the young sighting of a PG_referenced folio activates it (`lru_gen_set_refs` sets
/// PG_workingset): max_seq, PGACTIVATE.
#[test]
fn rejected_mapped_folios_are_activated_per_era() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 128);
        let p = l.m.create_process("p", 0, 0);
        l.m.mmap_file(p, f, vm::SHARED);
        l.load(p, f, 0);
        l.drain();
        let t = l.page(f, 0);
        while l.seq(t) != l.g().min_seq[FILE] || l.nr_gens(FILE) < MAX_NR_GENS {
            l.age(0);
        }
        for i in 1..=70 {
            l.read(p, f, i);
        }
        l.drain();
        if l.seq(l.page(f, 1)) != l.seq(t) {
            // Era B reads land in min_seq + 1: carrying the target puts it at their tail.
            l.age(0);
        }
        let min = l.g().min_seq[FILE];
        assert!((0..=70).all(|i| l.seq(l.page(f, i)) == min), "{kernel}");
        assert!(young(&l, p, 0), "{kernel}");
        l.read_n(f, 0, 3);
        l.evict(min, 0, 1);
        let g = l.g().clone();
        assert_eq!(
            g.min_seq[FILE], min,
            "{kernel}: the oldest generation stays"
        );
        assert_eq!(g.max_seq - g.min_seq[FILE] + 1, MAX_NR_GENS, "{kernel}");
        assert!(l.resident(f, 0), "{kernel}: kept");
        assert_eq!(
            l.seq(t),
            g.max_seq,
            "{kernel}: placed in the youngest generation"
        );
        assert!(!l.has(t, pg::REFERENCED) && l.refs(t) == 0, "{kernel}");
        let c = l.era == MglruEra::C;
        assert_eq!(l.has(t, pg::WORKINGSET), c, "{kernel}: PG_workingset");
        assert_eq!(l.vm(Vm::Pgactivate), c as u64, "{kernel}: PGACTIVATE");
        l.check();
    }
}

/// `set_mm_walk(NULL, true)` in `try_to_inc_max_seq`: a direct reclaimer that walks for its own
/// aging keeps the walker (look-around then updates generations instead of activating) until
/// `lru_gen_shrink_lruvec`/`lru_gen_shrink_node` clear it at the end of the pass.
#[test]
fn a_reclaimers_aging_walker_lasts_until_the_end_of_its_pass() {
    // (6.1 reaches the same code through its own lru_gen_shrink_lruvec, set_mm_walk included.)
    for kernel in [Kernel::V6_12, Kernel::V7_1, Kernel::V7_2] {
        let (mut l, f, p) = walk_lab(kernel, 0x7);
        for page in 0..2 * PTRS_PER_PTE {
            l.load(p, f, page);
        }
        l.drain();
        // At DEF_PRIORITY nothing ages: no walker.
        let mut sc = ScanControl::new(32, None);
        l.enter(0);
        l.pol.try_to_shrink_lruvec(&mut l.m, 0, 0, &mut sc);
        assert!(!sc.mm_walker, "{kernel}: no aging at DEF_PRIORITY");
        // Below it (low enough for 7.2's budget to be non-zero), with the empty oldest
        // generations dropped, the lruvec ages with a walk: the walker stays with the task.
        sc.priority = 8;
        l.settle();
        let max = l.g().max_seq;
        l.enter(0);
        l.pol.try_to_shrink_lruvec(&mut l.m, 0, 0, &mut sc);
        assert!(
            l.g().mm.walking.is_some() || l.g().max_seq > max,
            "{kernel}: aged"
        );
        assert!(sc.mm_walker, "{kernel}: the aging walker is kept");
        // The node pass (shrink_node) ends with clear_mm_walk.
        let mut sc = ScanControl::new(32, None);
        sc.priority = 11;
        l.enter(0);
        l.pol.shrink_node(&mut l.m, 0, &mut sc);
        assert!(!sc.mm_walker, "{kernel}: cleared at the end of the pass");
        l.check();
    }
}

/// `lru_gen_add_folio` of an active folio (a `folio_activate`): 6.12 (6.12.117) also clears its
/// refs counter and PG_referenced, 6.1 (6.1.192) and 7.x clear only PG_active, so a folio read
/// three times keeps its references through the activation there.
#[test]
fn activation_clears_the_references_in_6_12_only() {
    for kernel in Kernel::ALL {
        let mut l = Lab::new(kernel, SwapConfig::None);
        let f = l.m.create_file("f", 1);
        l.read_n(f, 0, 3);
        l.drain();
        let pfn = l.page(f, 0);
        assert!(l.has(pfn, pg::REFERENCED), "{kernel}");
        let refs = l.m.folios[pfn as usize].refs();
        assert!(refs > 0 || l.era != MglruEra::C, "{kernel}: counted");
        l.enter(0);
        l.m.folio_activate(&mut l.pol, pfn);
        l.drain();
        let cleared = kernel == Kernel::V6_12;
        assert_eq!(
            !l.has(pfn, pg::REFERENCED),
            cleared,
            "{kernel}: PG_referenced"
        );
        let want_refs = if cleared { 0 } else { refs };
        assert_eq!(l.m.folios[pfn as usize].refs(), want_refs, "{kernel}: refs");
        // Active goes to max_seq (6.x), or max_seq - 1 without PG_workingset (7.x).
        let back = (l.era == MglruEra::C && !l.has(pfn, pg::WORKINGSET)) as u64;
        assert_eq!(l.seq(pfn), l.g().max_seq - back, "{kernel}: activated");
        l.check();
    }
}
