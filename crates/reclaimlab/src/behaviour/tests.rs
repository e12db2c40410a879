use super::*;
use crate::machine::MemcgWalk;
use crate::sim::PolicySpec;

/// What the code asked before the table, per behaviour: the old `Kernel` predicates and
/// `MglruEra` comparisons (era A = 6.1, B = 6.12, C = 7.x), and the switch sets of
/// `MglruConfig::new` (7.2: the series; 7.2.13: the series and Debian's changes).
fn old_answer(k: Kernel, b: Behaviour) -> bool {
    let era = match k {
        Kernel::V6_1 => 'A',
        Kernel::V6_12 => 'B',
        _ => 'C',
    };
    match b {
        // consts.rs: `self >= Kernel::V6_12`, `self != V6_1` (lru_batch_size,
        // memory_reclaim_batch), `self == V6_1` (ext4_has_writepage, negated);
        // classic.rs snapshot_refaults: `self.kernel == Kernel::V6_1` (negated).
        B::FolioBatch31
        | B::CostCountsRotations
        | B::Eevdf
        | B::PartialMemcgWalk
        | B::CacheTrimModeFailed
        | B::KswapdCountsReclaimed
        | B::RefaultSwapCheckEvictionMemcg
        | B::Ext4WritepageRemoved
        | B::VmaHasRecency
        | B::SyncSwapIoInPgpg
        | B::ReadaheadRework
        | B::MemoryReclaimSwappiness
        | B::MemoryReclaimQuarterBatch
        | B::RefaultOfDeadMemcgCounts
        | B::CgroupCongestedSplit => k >= Kernel::V6_12,
        // rstat.rs (added after the table): from 6.12 (6.8's ratelimited flush).
        B::MemcgStatsFlushRatelimited => k >= Kernel::V6_12,
        // sim.rs `io_uring_punt_ns` (added after the table): 6.12's `io_file_get_flags`.
        B::IoUringNowaitByFmode => k >= Kernel::V6_12,
        // mglru: `era != A` (or `== A` negated)
        B::LruGenShrinkNode
        | B::MemcgLru
        | B::AgingFromEvictionPath
        | B::AgingCheckBeforeSizing
        | B::ForcedAgingNeedsMmWalk
        | B::IsolateFolioTrustsCallers
        | B::FlusherWakeupOnUnqueuedDirty
        | B::RefaultCountsEveryRefault
        | B::ProactiveMmWalker
        | B::LookAroundCanSwapByType
        | B::LookAroundActivatesDirectly
        | B::DebugfsMmWalkStats => era != 'A',
        // `era == B` is `has(ActiveAddClearsRefs) && !has(LruGenFolioSeq)`: checked below.
        B::ActiveAddClearsRefs => era != 'A',
        // readahead.rs / memcg.rs: `self >= Kernel::V7_1`
        B::FaultAroundCreditsFaultingFolioOnly | B::SwappinessAnonOnly => k >= Kernel::V7_1,
        // memcg.rs (charge stocks, added after the table): from 7.1 (6.16's change).
        B::MultiMemcgStock => k >= Kernel::V7_1,
        // classic.rs lru_note_cost (added after the table): from 7.1 (6.17's change).
        B::NoteCostSkipsZero => k >= Kernel::V7_1,
        // mglru: `era == C` (or `!= C` negated)
        B::WorkingsetTopTier
        | B::ProtectedAtTier
        | B::SetRefsOnPteYoung
        | B::LruGenFolioSeq
        | B::TypeSelectionAllTiers
        | B::IndependentMinSeq
        | B::AgingByGenCount
        | B::RefaultRecentWindow
        | B::EvictNrToScanBound
        | B::ProportionalProtection
        | B::RejectedFolioPlacement
        | B::WalkSmallMms
        | B::GetPfnFolioListedOnly
        | B::DebugfsMemcgId
        | B::DebugfsCmdTargetsMemcg => era == 'C',
        B::FgPromotion => false,
        // Debian's 6.12.117 takes patch 10's path (added with the list; mainline 7.1 does not).
        b if Behaviour::DEBIAN_6_12_117.contains(&b) && k == Kernel::V6_12 => true,
        b if Behaviour::SERIES.contains(&b) => k >= Kernel::V7_2,
        b if Behaviour::DEBIAN_7_2_13.contains(&b) => k == Kernel::V7_2_13,
        b => panic!("{b} has no old answer"),
    }
}

#[test]
fn each_kernel_has_what_the_old_predicates_said() {
    for k in Kernel::WITH_DEBIAN_7_2 {
        let set = Behaviours::of(k);
        for b in Behaviour::ALL {
            assert_eq!(set.has(b), old_answer(k, b), "{k} {b}");
        }
        // 6.12's own lru_gen_add_folio rule (the one era == B check).
        let era_b = set.has(B::ActiveAddClearsRefs) && !set.has(B::LruGenFolioSeq);
        assert_eq!(era_b, k == Kernel::V6_12, "{k}");
        assert!(set.check_requirements().is_ok(), "{k}");
    }
    assert_eq!(Behaviours::of(Kernel::V6_1), Behaviours::NONE);
}

#[test]
fn debian_6_12_117_isolates_dirty_folios_and_mainline_7_1_does_not() {
    // Debian's 6.12.117 sort_folio has no dirty/writeback branch (patch 10's path); 7.1 is
    // mainline before the series, which still bumps them; 7.2 has it from the series.
    let w = B::CommonDirtyWritebackReactivation;
    assert_eq!(Behaviour::DEBIAN_6_12_117, [w]);
    assert!(!Behaviours::of(Kernel::V6_1).has(w));
    assert!(Behaviours::of(Kernel::V6_12).has(w));
    assert!(!Behaviours::of(Kernel::V7_1).has(w));
    assert!(Behaviours::of(Kernel::V7_2).has(w) && Behaviours::of(Kernel::V7_2_13).has(w));
    assert_eq!(w.first(), V7_2);
    assert_eq!(w.also_in(), &[Kernel::V6_12]);
    assert!(B::SimplifyDirtyWriteback.also_in().is_empty());
    // Nothing else of the series or of 7.1 comes with it, and 6.12 keeps its flusher wakeup.
    let v6_12 = Behaviours::of(Kernel::V6_12);
    assert_eq!(
        v6_12
            .iter()
            .filter(|b| b.first() > V6_12)
            .collect::<Vec<_>>(),
        vec![w]
    );
    assert!(v6_12.has(B::FlusherWakeupOnUnqueuedDirty) && !v6_12.has(B::SimplifyDirtyWriteback));
    assert!(v6_12.check_requirements().is_ok());
    // Through policy strings and the machine of a kernel.
    let p: PolicySpec = "mglru:6.12".parse().unwrap();
    assert!(p.machine_behaviours().unwrap().has(w));
    let p: PolicySpec = "mglru:7.1".parse().unwrap();
    assert!(!p.machine_behaviours().unwrap().has(w));
    assert_eq!(
        "mglru:6.12-common-dirty-writeback-reactivation"
            .parse::<PolicySpec>()
            .unwrap()
            .to_string(),
        "mglru:6.12-common-dirty-writeback-reactivation"
    );
    assert!(KernelModel::of(Kernel::V6_12).has(w) && !KernelModel::of(Kernel::V7_1).has(w));
}

#[test]
fn table_is_in_enum_order_with_unique_names_that_round_trip() {
    let mut names = std::collections::HashSet::new();
    for (i, r) in TABLE.iter().enumerate() {
        assert_eq!(r.behaviour as usize, i, "{}", r.name);
        assert_eq!(Behaviour::ALL[i], r.behaviour);
        assert!(names.insert(r.name), "{} twice", r.name);
        assert_eq!(r.name.parse::<Behaviour>().unwrap(), r.behaviour);
        assert!(
            r.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{} is not kebab-case",
            r.name
        );
        assert!(!r.description.is_empty() && !r.description.contains('\n'));
        assert!(
            !r.upstream.is_empty() && !r.functions.is_empty(),
            "{}",
            r.name
        );
        assert_ne!(
            r.first,
            First::Kernel(Kernel::V6_1),
            "{}: 6.1 is the baseline",
            r.name
        );
    }
    assert!(TABLE.len() <= 128);
    // Policy strings split `+a-b` only before a known name: no name may continue, after one of
    // its own '-', with another name.
    for r in &TABLE {
        for (i, _) in r.name.match_indices('-') {
            let tail = &r.name[i + 1..];
            assert!(
                !TABLE.iter().any(|o| tail.starts_with(o.name)),
                "{}: '-{tail}' reads as a removal",
                r.name
            );
        }
    }
    assert!("nope".parse::<Behaviour>().is_err());
}

#[test]
fn requirements_come_no_later_than_their_requirers() {
    for r in &TABLE {
        for q in r.requires {
            assert!(
                q.first() <= r.first,
                "{} requires {q}, which comes later",
                r.name
            );
            assert_ne!(*q, r.behaviour);
        }
    }
}

#[test]
fn a_requirement_violation_is_refused() {
    let err = Behaviours::of(Kernel::V7_2)
        .without(B::SimplifyDirtyWriteback)
        .check_requirements()
        .unwrap_err();
    assert!(err.contains("requires 'simplify-dirty-writeback'"), "{err}");
    assert!(Behaviours::NONE
        .with(B::DropReclaimingArg)
        .check_requirements()
        .is_err());
    let err = Behaviours::of(Kernel::V7_1)
        .without(B::WorkingsetTopTier)
        .check_requirements()
        .unwrap_err();
    assert!(err.contains("requires 'workingset-top-tier'"), "{err}");
    // Through a policy string and its `+`/`-` modifiers.
    let err = "mglru:7.1-workingset-top-tier"
        .parse::<PolicySpec>()
        .unwrap_err();
    assert!(err.contains("requires 'workingset-top-tier'"), "{err}");
    let err = "mglru:6.1+memcg-lru".parse::<PolicySpec>().unwrap_err();
    assert!(err.contains("requires 'lru-gen-shrink-node'"), "{err}");
    assert!("mglru:6.1+lru-gen-shrink-node+memcg-lru"
        .parse::<PolicySpec>()
        .is_ok());
}

#[test]
fn kernels_are_first_kernels_and_series_order_is_kept() {
    assert_eq!(
        Behaviours::of(Kernel::V7_2)
            .iter()
            .filter(|b| b.first() == V7_2)
            .count(),
        15
    );
    assert!(!Behaviours::of(Kernel::V7_2_13).has(B::FgPromotion));
    for (b, w) in Behaviours::of(Kernel::V7_2_13)
        .without(B::FgPromotion)
        .iter()
        .filter(|b| b.first() >= V7_2)
        .zip(Behaviour::SERIES.iter().chain(&Behaviour::DEBIAN_7_2_13))
    {
        assert_eq!(b, *w);
    }
    assert!(Behaviour::SERIES.iter().all(|w| w.commit().is_some()));
    assert_eq!(B::ConsolidateEvictableSize.commit(), Some("0491e9f75c15"));
    assert_eq!(B::Eevdf.commit(), Some("147f3efaa241"));
    assert_eq!(B::WalkSmallMms.commit(), None);
}

#[test]
fn bisect_order_has_every_behaviour_by_first_kernel_and_requirements_first() {
    let mut order = Behaviour::BISECT_ORDER.to_vec();
    order.sort();
    order.dedup();
    assert_eq!(order.len(), TABLE.len());
    assert_eq!(Behaviour::BISECT_ORDER.last(), Some(&B::FgPromotion));
    for (i, w) in Behaviour::BISECT_ORDER.iter().enumerate() {
        for r in w.requires() {
            assert!(Behaviour::BISECT_ORDER[..i].contains(r), "{w} before {r}");
        }
        if i > 0 {
            assert!(Behaviour::BISECT_ORDER[i - 1].first() <= w.first());
        }
    }
}

#[test]
fn turning_a_behaviour_off_takes_its_dependents_with_it() {
    let b = Behaviours::of(Kernel::V7_2).without(B::SimplifyDirtyWriteback);
    assert!(b.check_requirements().is_err());
    let c = b.without_unmet_requirements();
    assert!(c.check_requirements().is_ok());
    for w in [
        B::RemoveFileTaken,
        B::RemoveUnqueuedDirty,
        B::UnifyWritebackThrottling,
    ] {
        assert!(b.has(w) && !c.has(w), "{w}");
    }
    // Transitively: no lru_gen_shrink_node, no memcg LRU, no reclaim loop of patch 04, and so
    // none of 08 either.
    let c = Behaviours::of(Kernel::V7_2)
        .without(B::LruGenShrinkNode)
        .without_unmet_requirements();
    for w in [
        B::MemcgLru,
        B::RestructureReclaimLoop,
        B::DontAbortAfterAging,
    ] {
        assert!(!c.has(w), "{w}");
    }
    assert!(c.has(B::ExactScanCount));
    assert_eq!(
        Behaviours::of(Kernel::V7_2).without_unmet_requirements(),
        Behaviours::of(Kernel::V7_2)
    );
}

#[test]
fn modifiers_read_the_longest_name_and_print_back() {
    let base = Behaviours::of(Kernel::V6_12);
    // Names contain '-': each modifier takes the longest name that ends at a + or -.
    let b = base
        .apply_modifiers("-memcg-lru-lru-gen-shrink-node+eevdf")
        .unwrap();
    assert!(!b.has(B::MemcgLru) && !b.has(B::LruGenShrinkNode) && b.has(B::Eevdf));
    assert_eq!(b.modifiers_from(base), "-lru-gen-shrink-node-memcg-lru");
    assert_eq!(base.apply_modifiers(&b.modifiers_from(base)).unwrap(), b);
    let err = base.apply_modifiers("+no-such-thing").unwrap_err();
    assert!(err.contains("unknown behaviour 'no-such-thing'"), "{err}");
    assert!(base.apply_modifiers("eevdf").is_err());
}

#[test]
fn classic_policies_take_the_behaviours_of_the_classical_path_only() {
    let p: PolicySpec = "classic:6.1+folio-batch-31+sync-swap-io-in-pgpg"
        .parse()
        .unwrap();
    let b = p.machine_behaviours().unwrap();
    assert!(b.has(B::FolioBatch31) && b.has(B::SyncSwapIoInPgpg) && !b.has(B::Eevdf));
    assert_eq!(
        p.to_string(),
        "classic:6.1+folio-batch-31+sync-swap-io-in-pgpg"
    );
    assert_eq!(p.kernel(), Some(Kernel::V6_1));
    let p: PolicySpec = "classic:6.12-eevdf@heat".parse().unwrap();
    assert_eq!(p.to_string(), "classic:6.12-eevdf@heat");
    let err = "classic:6.12+workingset-top-tier"
        .parse::<PolicySpec>()
        .unwrap_err();
    assert!(err.contains("MGLRU's code"), "{err}");
    let err = "classic:6.12-lru-gen-shrink-node"
        .parse::<PolicySpec>()
        .unwrap_err();
    assert!(err.contains("MGLRU's code"), "{err}");
    for w in Behaviour::OUTSIDE_MGLRU {
        assert!(
            w.requires().is_empty(),
            "{w}: the classical path has no requirements"
        );
        assert!(w.first() <= V7_1, "{w}");
    }
}

#[test]
fn mglru_memcg_walk_follows_the_memcg_lru_behaviour() {
    let p: PolicySpec = "mglru:6.1+lru-gen-shrink-node+memcg-lru".parse().unwrap();
    assert_eq!(p.memcg_walk(), Some(MemcgWalk::MemcgLru));
    assert_eq!(p.to_string(), "mglru:6.1+lru-gen-shrink-node+memcg-lru");
    let p: PolicySpec = "mglru:6.12-memcg-lru".parse().unwrap();
    assert_eq!(p.memcg_walk(), Some(MemcgWalk::Iter));
    assert_eq!(p.to_string(), "mglru:6.12-memcg-lru");
    assert!("mglru:6.12-memcg-lru@memcg-lru"
        .parse::<PolicySpec>()
        .is_err());
    let p: PolicySpec = "mglru:6.12@iter".parse().unwrap();
    assert_eq!(p.to_string(), "mglru:6.12@iter");
}

#[test]
fn policy_strings_print_and_parse_with_any_behaviour() {
    for s in [
        "mglru:7.1+restructure-reclaim-loop",
        "mglru:7.2-unify-writeback-throttling+fg-promotion",
        "mglru:6.12+eevdf-partial-memcg-walk",
        "mglru:6.1+readahead-rework",
        "mglru:7.1-fault-around-credits-faulting-folio-only",
    ] {
        let p: PolicySpec = s.parse().unwrap();
        assert_eq!(p.to_string().parse::<PolicySpec>().unwrap(), p, "{s}");
    }
    let p: PolicySpec = "mglru:6.1+readahead-rework".parse().unwrap();
    let b = p.machine_behaviours().unwrap();
    assert!(b.has(B::ReadaheadRework) && !b.has(B::Eevdf));
}
