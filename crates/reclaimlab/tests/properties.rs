//! Property tests of the model's invariants over random machines and workloads: every page is in
//! exactly one place, per-list counts equal list contents, counters add up (checked after every
//! event by `Machine::check_invariants`), pgsteal <= pgscan, no access is lost or duplicated.

mod prop_workload;

use prop_workload::{PhaseDraw, Sizes};
use proptest::prelude::*;
use reclaimlab::behaviour::{Behaviour, Behaviours, KernelModel};
use reclaimlab::consts::Kernel;
use reclaimlab::machine::{DeviceProfile, MachineConfig, MemcgWalk, SwapConfig};
use reclaimlab::policy::mglru::MglruConfig;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::{Scenario, Stream};

/// A random scenario: memory, swap, a limited memcg, two processes, anon/fd/mmap phases.
fn scenario(
    mem: u64,
    swap: u8,
    limit_pct: u64,
    phases: Vec<PhaseDraw>,
    kernel: Kernel,
    tmpfs: bool,
) -> Scenario {
    let mut m = MachineConfig::simple(mem);
    m.kernel = kernel;
    m.cpus = 2;
    m.swap = match swap % 3 {
        0 => SwapConfig::None,
        1 => SwapConfig::Zram {
            size_pages: mem,
            compress_ratio: 2.5,
        },
        _ => SwapConfig::Device {
            size_pages: mem,
            device: DeviceProfile::nvme(),
        },
    };
    let sizes = Sizes {
        file_pages: mem * 3 / 2,
        anon_pages: mem / 2,
        base_ops: mem / 2,
    };
    prop_workload::scenario_on("prop", m, limit_pct, sizes, phases, tmpfs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_every_event(
        mem in 600u64..2000,
        swap in 0u8..3,
        limit_pct in 20u64..90,
        phases in proptest::collection::vec((0u8..3, 0u8..4, 0u8..2, 0u32..101), 1..5),
        v61 in any::<bool>(),
        mixed in any::<bool>(),
        bits in any::<u16>(),
        seed in 0u64..1000,
    ) {
        let kernel = if v61 { Kernel::V6_1 } else { Kernel::V6_12 };
        // Half the cases run a random mix of the classical path's behaviours (the states
        // `reclaimlab bisect` walks between classic:6.1 and classic:6.12).
        let mut km = KernelModel::from(kernel);
        if mixed {
            km.behaviours = Behaviour::OUTSIDE_MGLRU
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .fold(Behaviours::NONE, |s, (_, &b)| s.with(b));
        }
        let scn = scenario(mem, swap, limit_pct, phases, kernel, false);
        let expected: u64 = scn.threads.iter().map(|t| match &t.stream {
            Stream::Phases(p) => p.iter().map(|ph| ph.ops).sum::<u64>(),
            _ => 0,
        }).sum();
        let r = run(&scn, PolicySpec::Classic(km, MemcgWalk::Iter), &RunOptions {
            seed, check_invariants: true, ..Default::default()
        });
        let r = match r { Ok(r) => r, Err(e) => return Err(TestCaseError::fail(e)) };
        // Nothing lost or duplicated: every access ran, unless its task was OOM-killed.
        let killed = r.threads.iter().any(|t| t.killed);
        prop_assert!(r.accesses == expected || (killed && r.accesses < expected),
            "accesses {} expected {expected} killed {killed}", r.accesses);
        prop_assert_eq!(r.hits + r.misses, r.accesses);
        // pgsteal <= pgscan, globally and per memcg.
        let g = |k: &str| r.vmstat[k];
        prop_assert!(g("pgsteal_kswapd") <= g("pgscan_kswapd"));
        prop_assert!(g("pgsteal_direct") <= g("pgscan_direct"));
        prop_assert!(g("pgsteal_anon") + g("pgsteal_file") <= g("pgscan_anon") + g("pgscan_file"));
        for mc in &r.memcgs {
            prop_assert!(mc.stat["pgsteal"] <= mc.stat["pgscan"], "memcg {}", mc.path);
            if let Some(max) = mc.max_pages {
                prop_assert!(mc.current_pages <= max);
            }
        }
        // Swap-out happened only where swap exists.
        if swap % 3 == 0 {
            prop_assert_eq!(g("pswpout"), 0);
        }
        // Workingset activations and restores are subsets of refaults.
        prop_assert!(g("workingset_restore_file") <= g("workingset_activate_file"));
        prop_assert!(g("workingset_activate_file") <= g("workingset_refault_file"));
        prop_assert!(g("workingset_activate_anon") <= g("workingset_refault_anon"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The same random workloads with their file on tmpfs (docs/model.md §2, "tmpfs"): its
    /// folios are swap-backed, swapped out to a file slot's swap entry and read back; every
    /// invariant holds after every event under the classical LRU and MGLRU, nothing is lost,
    /// and a tmpfs file is never written back to the file device.
    #[test]
    fn tmpfs_invariants_hold_after_every_event(
        mem in 600u64..2000,
        swap in 0u8..3,
        limit_pct in 20u64..90,
        phases in proptest::collection::vec((0u8..3, 0u8..4, 0u8..2, 0u32..101), 1..5),
        kernel in 0usize..4,
        mglru in any::<bool>(),
        seed in 0u64..1000,
    ) {
        // The classical path models 6.1 and 6.12.
        let kernel = match mglru {
            true => Kernel::ALL[kernel],
            false => [Kernel::V6_1, Kernel::V6_12][kernel % 2],
        };
        let scn = scenario(mem, swap, limit_pct, phases, kernel, true);
        let expected: u64 = scn.threads.iter().map(|t| match &t.stream {
            Stream::Phases(p) => p.iter().map(|ph| ph.ops).sum::<u64>(),
            _ => 0,
        }).sum();
        let policy = if mglru {
            PolicySpec::Mglru(MglruConfig::new(kernel))
        } else {
            PolicySpec::Classic(KernelModel::from(kernel), MemcgWalk::Iter)
        };
        let r = run(&scn, policy, &RunOptions {
            seed, check_invariants: true, ..Default::default()
        });
        let r = match r { Ok(r) => r, Err(e) => return Err(TestCaseError::fail(e)) };
        let killed = r.threads.iter().any(|t| t.killed);
        prop_assert!(r.accesses == expected || (killed && r.accesses < expected),
            "accesses {} expected {expected} killed {killed}", r.accesses);
        prop_assert_eq!(r.hits + r.misses, r.accesses);
        let g = |k: &str| r.vmstat[k];
        // No file writeback: the only file is on tmpfs (swap I/O is pswpout's).
        prop_assert_eq!(g("nr_dirty"), 0);
        prop_assert_eq!(g("workingset_refault_file"), 0);
        if swap % 3 == 0 {
            prop_assert_eq!(g("pswpout"), 0);
        }
        if swap % 3 != 2 {
            // zram or no swap: every pgpgout is a swap write (7.x counts zram's too).
            prop_assert!(g("pgpgout") <= 4 * g("pswpout"));
        }
        // Activations are a subset of refaults, except under 6.1's MGLRU, whose `sort_folio`
        // also counts a folio protected by its tier as activated: a tmpfs folio is swap-backed
        // (anon type) and read() gives it refs, so it can be protected without refaulting.
        if !(mglru && kernel == Kernel::V6_1) {
            prop_assert!(g("workingset_activate_anon") <= g("workingset_refault_anon"));
        }
    }
}
