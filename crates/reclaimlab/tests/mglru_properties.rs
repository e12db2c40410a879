//! Property tests of the MGLRU invariants over random machines, workloads, kernels and series
//! switch sets (spec mglru.md §2.2, §2.4, §7.2). Every run goes through the event engine with
//! `check_invariants`, which after every event checks the machine (every page in exactly one
//! place, counters equal what they count) and MGLRU's own invariants: for each lruvec and type
//! MIN_NR_GENS ≤ max_seq − min_seq + 1 ≤ MAX_NR_GENS, every folio on a generation list has
//! PG_lru, no PG_active and a generation inside that window, and `nr_pages` per generation
//! equals the lists' contents. On top of that each run must lose no access (unless its task
//! was OOM-killed), never steal more than it scanned, keep every memcg within memory.max, and
//! print an lru_gen file whose generations form a window of 2 to 4 consecutive sequence
//! numbers per lruvec.

mod prop_workload;

use prop_workload::{PhaseDraw, Sizes};
use proptest::prelude::*;
use reclaimlab::behaviour::{Behaviour, Behaviours};
use reclaimlab::consts::{Kernel, LRU_GEN_CORE, LRU_GEN_MM_WALK, LRU_GEN_NONLEAF_YOUNG};
use reclaimlab::machine::{MachineConfig, SwapConfig};
use reclaimlab::metrics::RunResult;
use reclaimlab::policy::mglru::{MglruConfig, Switch};
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::{Scenario, Stream};

/// A random scenario: memory, swap (none or zram), a limited memcg and an unlimited one, two
/// processes each with anon memory and a shared or private mapping of one file, and phases of
/// anon, fd and mmap accesses with writes.
///
/// The zram device has room for every anon page, so swappiness never drops to 0 because swap
/// filled up (`get_swappiness`: fewer than MIN_LRU_BATCH free slots). When it does, the
/// kernel itself can leave a folio's gen bits outside its type's window, which
/// `check_invariants` rejects: a page-table walk or look-around moves the gen bits of an anon
/// folio sitting on an older list to max_seq, aging at swappiness 0 then advances anon
/// min_seq without carrying that list (`inc_min_seq`, type not evictable), and once swap frees
/// up, `try_to_inc_min_seq` shrinks the anon window past the stale gen bits.
fn scenario(
    mem: u64,
    zram: bool,
    limit_pct: u64,
    phases: Vec<PhaseDraw>,
    kernel: Kernel,
) -> Scenario {
    let mut m = MachineConfig::simple(mem);
    m.kernel = kernel;
    m.cpus = 2;
    m.swap = if zram {
        SwapConfig::Zram {
            size_pages: mem * 4,
            compress_ratio: 2.5,
        }
    } else {
        SwapConfig::None
    };
    // Together more than memory: reclaim runs, globally and in the limited memcg.
    let sizes = Sizes {
        file_pages: mem * 2,
        anon_pages: mem * 3 / 4,
        base_ops: mem * 3 / 2,
    };
    prop_workload::scenario("mglru-prop", m, limit_pct, sizes, phases)
}

/// The MGLRU configuration: the kernel's defaults, then (7.x only) a random set of the
/// series switches, the experimental FG promotion and the 7.2.13 changes, random capability bits (the core bit
/// always on) and min_ttl_ms. With `any_behaviours`, the behaviours are instead a random set of
/// the whole table, closed under the requirements (the states bisect may walk between eras).
fn mglru(
    kernel: Kernel,
    switch_bits: u32,
    any_behaviours: Option<u128>,
    caps: u8,
    min_ttl: bool,
) -> MglruConfig {
    let mut c = MglruConfig::new(kernel);
    if let Some(bits) = any_behaviours {
        c.switches = random_behaviours(bits);
        c.memcg_walk = MglruConfig::default_memcg_walk(c.switches);
    } else if matches!(kernel, Kernel::V7_1 | Kernel::V7_2 | Kernel::V7_2_13) {
        c.switches = Switch::SERIES
            .iter()
            .chain(&[Switch::FgPromotion])
            .chain(&Switch::DEBIAN_7_2_13)
            .enumerate()
            .filter(|(i, _)| switch_bits & (1 << i) != 0)
            .fold(Kernel::V7_1.behaviours(), |s, (_, &w)| s.with(w))
            .without_unmet_requirements();
    }
    c.enabled = LRU_GEN_CORE
        | if caps & 1 != 0 { LRU_GEN_MM_WALK } else { 0 }
        | if caps & 2 != 0 {
            LRU_GEN_NONLEAF_YOUNG
        } else {
            0
        };
    c.min_ttl_ms = if min_ttl { 1000 } else { 0 };
    c
}

/// The behaviours of `bits` (bit i: row i of the table), less those whose requirements are
/// missing.
fn random_behaviours(bits: u128) -> Behaviours {
    Behaviour::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .fold(Behaviours::NONE, |s, (_, &b)| s.with(b))
        .without_unmet_requirements()
}

/// Checks the lru_gen file: under each ` node` line, the generation lines' sequence numbers
/// are consecutive, ascending and number 2 to 4, and every page count parses.
fn check_lru_gen(text: &str) -> Result<(), String> {
    let mut seqs: Vec<u64> = Vec::new();
    let mut lruvecs = 0;
    let finish = |seqs: &Vec<u64>| -> Result<(), String> {
        if !(2..=4).contains(&seqs.len()) {
            return Err(format!("{} generations shown: {seqs:?}", seqs.len()));
        }
        if seqs.windows(2).any(|w| w[1] != w[0] + 1) {
            return Err(format!("generations not consecutive: {seqs:?}"));
        }
        Ok(())
    };
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.first() {
            Some(&"memcg") => {}
            Some(&"node") => {
                if lruvecs > 0 {
                    finish(&seqs)?;
                }
                lruvecs += 1;
                seqs.clear();
            }
            Some(_) => {
                if fields.len() != 4 {
                    return Err(format!("bad generation line '{line}'"));
                }
                let n: Vec<u64> = fields
                    .iter()
                    .map(|s| s.parse::<u64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("'{line}': {e}"))?;
                seqs.push(n[0]);
            }
            None => {}
        }
    }
    if lruvecs == 0 {
        return Err("no lruvec shown".into());
    }
    finish(&seqs)
}

fn check_result(
    r: &RunResult,
    expected: u64,
    zram: bool,
    behaviours: Behaviours,
) -> Result<(), TestCaseError> {
    // Nothing lost or duplicated: every access ran, unless its task was OOM-killed.
    let killed = r.threads.iter().any(|t| t.killed);
    prop_assert!(
        r.accesses == expected || (killed && r.accesses < expected),
        "accesses {} expected {expected} killed {killed}",
        r.accesses
    );
    prop_assert_eq!(r.hits + r.misses, r.accesses);
    // pgsteal <= pgscan (pgscan counts isolated pages; stolen ones were isolated first).
    let g = |k: &str| r.vmstat.get(k).copied().unwrap_or(0);
    prop_assert!(g("pgsteal_kswapd") <= g("pgscan_kswapd"));
    prop_assert!(g("pgsteal_direct") <= g("pgscan_direct"));
    prop_assert!(g("pgsteal_anon") <= g("pgscan_anon"));
    prop_assert!(g("pgsteal_file") <= g("pgscan_file"));
    for mc in &r.memcgs {
        prop_assert!(mc.stat["pgsteal"] <= mc.stat["pgscan"], "memcg {}", mc.path);
        if let Some(max) = mc.max_pages {
            prop_assert!(mc.current_pages <= max, "memcg {} over max", mc.path);
        }
    }
    // Without swap anon is never evictable: not scanned, not swapped.
    if !zram {
        prop_assert_eq!(g("pswpout"), 0);
        prop_assert_eq!(g("pgscan_anon"), 0);
    }
    // Recent refaults, activations and restores are subsets of refaults (6.1 counts
    // activations in sort_folio, not at refault).
    for t in ["anon", "file"] {
        let refault = g(&format!("workingset_refault_{t}"));
        let activate = g(&format!("workingset_activate_{t}"));
        let restore = g(&format!("workingset_restore_{t}"));
        prop_assert!(
            !behaviours.has(Behaviour::RefaultCountsEveryRefault) || activate <= refault,
            "{} activate {} > refault {}",
            t,
            activate,
            refault
        );
        prop_assert!(
            restore <= refault,
            "{} restore {} > refault {}",
            t,
            restore,
            refault
        );
    }
    let lru_gen = r.lru_gen.as_deref().unwrap_or("");
    if let Err(e) = check_lru_gen(lru_gen) {
        return Err(TestCaseError::fail(format!("lru_gen: {e}\n{lru_gen}")));
    }
    Ok(())
}

fn expected_accesses(scn: &Scenario) -> u64 {
    scn.threads
        .iter()
        .map(|t| match &t.stream {
            Stream::Phases(p) => p.iter().map(|ph| ph.ops).sum::<u64>(),
            _ => 0,
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random workloads under every kernel with random switch sets and capability bits.
    #[test]
    fn mglru_invariants_hold_after_every_event(
        mem in 600u64..1500,
        zram in any::<bool>(),
        limit_pct in 20u64..90,
        phases in proptest::collection::vec((0u8..3, 0u8..4, 0u8..2, 0u32..101), 1..5),
        kernel in 0usize..5,
        switch_bits in any::<u32>(),
        caps in 0u8..4,
        min_ttl in proptest::bool::weighted(0.2),
        seed in 0u64..1000,
    ) {
        let kernel = Kernel::WITH_DEBIAN_7_2[kernel];
        let scn = scenario(mem, zram, limit_pct, phases, kernel);
        let expected = expected_accesses(&scn);
        let cfg = mglru(kernel, switch_bits, None, caps, min_ttl);
        let r = run(&scn, PolicySpec::Mglru(cfg), &RunOptions {
            seed, check_invariants: true, ..Default::default()
        });
        let r = match r { Ok(r) => r, Err(e) => return Err(TestCaseError::fail(e)) };
        check_result(&r, expected, zram, cfg.switches)?;
    }

    /// Random workloads under random sets of every behaviour of the table (closed under the
    /// requirements): any state `reclaimlab bisect` may run between two kernels of different
    /// eras keeps every invariant.
    #[test]
    fn mglru_invariants_hold_under_any_behaviour_set(
        mem in 600u64..1500,
        zram in any::<bool>(),
        limit_pct in 20u64..90,
        phases in proptest::collection::vec((0u8..3, 0u8..4, 0u8..2, 0u32..101), 1..5),
        bits in any::<u128>(),
        caps in 0u8..4,
        min_ttl in proptest::bool::weighted(0.2),
        seed in 0u64..1000,
    ) {
        let scn = scenario(mem, zram, limit_pct, phases, Kernel::V7_2);
        let expected = expected_accesses(&scn);
        let cfg = mglru(Kernel::V7_2, 0, Some(bits), caps, min_ttl);
        let r = run(&scn, PolicySpec::Mglru(cfg), &RunOptions {
            seed, check_invariants: true, ..Default::default()
        });
        let r = match r { Ok(r) => r, Err(e) => return Err(TestCaseError::fail(e)) };
        check_result(&r, expected, zram, cfg.switches)?;
    }

    /// The same with proactive reclaim: lru_gen `+` (aging) and `-` (eviction) commands on
    /// random memcgs and generations at random times, most of them refused by the kernel's
    /// validation (EINVAL, EEXIST, ERANGE), some aging or evicting for real.
    #[test]
    fn mglru_invariants_hold_with_lru_gen_commands(
        mem in 600u64..1200,
        zram in any::<bool>(),
        phases in proptest::collection::vec((0u8..3, 0u8..4, 0u8..2, 0u32..101), 1..4),
        kernel in 0usize..5,
        cmds in proptest::collection::vec(
            (0u64..4_000_000, any::<bool>(), 1u64..4, 0u64..10, 0u64..300), 1..12),
        seed in 0u64..1000,
    ) {
        let kernel = Kernel::WITH_DEBIAN_7_2[kernel];
        let scn = scenario(mem, zram, 60, phases, kernel);
        let expected = expected_accesses(&scn);
        let schedule = cmds
            .into_iter()
            .map(|(t, age, memcg, seq, nr)| {
                let c = if age {
                    format!("+ {memcg} 0 {seq}")
                } else if nr == 0 {
                    format!("- {memcg} 0 {seq}")
                } else {
                    // Anon only where there is swap.
                    let swappiness = if zram { 60 } else { 0 };
                    format!("- {memcg} 0 {seq} {swappiness} {nr}")
                };
                (t, c)
            })
            .collect();
        let r = run(&scn, PolicySpec::Mglru(MglruConfig::new(kernel)), &RunOptions {
            seed,
            check_invariants: true,
            lru_gen_schedule: schedule,
            ..Default::default()
        });
        let r = match r { Ok(r) => r, Err(e) => return Err(TestCaseError::fail(e)) };
        check_result(&r, expected, zram, kernel.behaviours())?;
        for c in &r.lru_gen_commands {
            prop_assert!(c.ok != c.error.is_some(), "{:?}", c);
        }
    }
}
