//! The 2026 "mm/mglru: improve reclaim loop and dirty folio handling" series (Kairui Song, v7,
//! 15 patches, merged in v7.2) as one switch per patch, plus the experimental MGLRU-FG
//! frequency-guided promotion (spec series-2026.md sections A.2 and B), and the MGLRU changes
//! merged beside the series that Debian's linux 7.2.13 has. `--kernel 7.1` has every switch
//! off, `--kernel 7.2` every series switch on (FG stays off), `--kernel 7.2.13` the series and
//! the 7.2.13 changes.

use std::fmt;
use std::str::FromStr;

/// One switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Switch {
    ConsolidateEvictableSize,
    RenameAgingRotationVars,
    RelocateScanBatchLimit,
    RestructureReclaimLoop,
    ExactScanCount,
    AvoidTypeFallback,
    SmallerReclaimBatch,
    DontAbortAfterAging,
    RemoveSwapConstrainedCheck,
    CommonDirtyWritebackReactivation,
    SimplifyDirtyWriteback,
    DropReclaimingArg,
    RemoveFileTaken,
    RemoveUnqueuedDirty,
    UnifyWritebackThrottling,
    /// Experimental: MGLRU-FG patch 06/32 (not part of any released kernel).
    FgPromotion,
    // MGLRU changes beside the series, as found in Debian's linux 7.2.13 (`mglru:7.2.13`).
    ReferencedPlacement,
    FaultMarksAccessed,
    SecondAccessPromotion,
    RefaultActivateWorkingsetOnly,
    MemcgReclaimAbortsAtGoal,
}

impl Switch {
    /// The 15 patches of the series, in merge order.
    pub const SERIES: [Switch; 15] = [
        Switch::ConsolidateEvictableSize,
        Switch::RenameAgingRotationVars,
        Switch::RelocateScanBatchLimit,
        Switch::RestructureReclaimLoop,
        Switch::ExactScanCount,
        Switch::AvoidTypeFallback,
        Switch::SmallerReclaimBatch,
        Switch::DontAbortAfterAging,
        Switch::RemoveSwapConstrainedCheck,
        Switch::CommonDirtyWritebackReactivation,
        Switch::SimplifyDirtyWriteback,
        Switch::DropReclaimingArg,
        Switch::RemoveFileTaken,
        Switch::RemoveUnqueuedDirty,
        Switch::UnifyWritebackThrottling,
    ];
    /// MGLRU changes merged beside the series, as Debian's linux-source 7.2.13 has them.
    pub const DEBIAN_7_2_13: [Switch; 5] = [
        Switch::ReferencedPlacement,
        Switch::FaultMarksAccessed,
        Switch::SecondAccessPromotion,
        Switch::RefaultActivateWorkingsetOnly,
        Switch::MemcgReclaimAbortsAtGoal,
    ];
    /// Every switch: the series, the experimental FG promotion, then the 7.2.13 changes.
    pub const ALL: [Switch; 21] = Switch::series_then_7_2_13_at(16);

    /// The series in slots 0..15, Debian 7.2.13's changes from slot `at`, FG promotion in the
    /// one slot left (15 or 20).
    const fn series_then_7_2_13_at(at: usize) -> [Switch; 21] {
        let mut all = [Switch::FgPromotion; 21];
        let mut i = 0;
        while i < Switch::SERIES.len() {
            all[i] = Switch::SERIES[i];
            i += 1;
        }
        let mut j = 0;
        while j < Switch::DEBIAN_7_2_13.len() {
            all[at + j] = Switch::DEBIAN_7_2_13[j];
            j += 1;
        }
        all
    }

    pub fn name(self) -> &'static str {
        match self {
            Switch::ConsolidateEvictableSize => "consolidate-evictable-size",
            Switch::RenameAgingRotationVars => "rename-aging-rotation-vars",
            Switch::RelocateScanBatchLimit => "relocate-scan-batch-limit",
            Switch::RestructureReclaimLoop => "restructure-reclaim-loop",
            Switch::ExactScanCount => "exact-scan-count",
            Switch::AvoidTypeFallback => "avoid-type-fallback",
            Switch::SmallerReclaimBatch => "smaller-reclaim-batch",
            Switch::DontAbortAfterAging => "dont-abort-after-aging",
            Switch::RemoveSwapConstrainedCheck => "remove-swap-constrained-check",
            Switch::CommonDirtyWritebackReactivation => "common-dirty-writeback-reactivation",
            Switch::SimplifyDirtyWriteback => "simplify-dirty-writeback",
            Switch::DropReclaimingArg => "drop-reclaiming-arg",
            Switch::RemoveFileTaken => "remove-file-taken",
            Switch::RemoveUnqueuedDirty => "remove-unqueued-dirty",
            Switch::UnifyWritebackThrottling => "unify-writeback-throttling",
            Switch::FgPromotion => "fg-promotion",
            Switch::ReferencedPlacement => "referenced-placement",
            Switch::FaultMarksAccessed => "fault-marks-accessed",
            Switch::SecondAccessPromotion => "second-access-promotion",
            Switch::RefaultActivateWorkingsetOnly => "refault-activate-workingset-only",
            Switch::MemcgReclaimAbortsAtGoal => "memcg-reclaim-aborts-at-goal",
        }
    }

    /// One line for `reclaimlab policies`.
    pub fn description(self) -> &'static str {
        match self {
            Switch::ConsolidateEvictableSize => "01 one helper for the evictable size (no behaviour change)",
            Switch::RenameAgingRotationVars => "02 rename aging/rotation variables (no behaviour change)",
            Switch::RelocateScanBatchLimit => "03 callers clamp the scan batch (no behaviour change)",
            Switch::RestructureReclaimLoop => "04 budget computed once; aging is a predicate inside the loop, even at DEF_PRIORITY when forced",
            Switch::ExactScanCount => "05 scan_folios/evict_folios return the exact pages visited; min_seq flushed before and after isolation",
            Switch::AvoidTypeFallback => "06 switch type only when the scan visited nothing (Barry Song)",
            Switch::SmallerReclaimBatch => "07 evict at most 64 entries per loop iteration instead of 4096",
            Switch::DontAbortAfterAging => "08 keep evicting after aging; root reclaim leaves after one post-aging batch",
            Switch::RemoveSwapConstrainedCheck => "09 isolate dirty/anon folios under !__GFP_IO too; shrink_folio_list decides",
            Switch::CommonDirtyWritebackReactivation => "10 dirty/writeback folios are isolated and reactivated by shrink_folio_list, not bumped in sort_folio",
            Switch::SimplifyDirtyWriteback => "11 wake the flusher per batch when every isolated page was unqueued dirty",
            Switch::DropReclaimingArg => "12 folio_inc_gen loses its reclaiming flag (no behaviour change after 10)",
            Switch::RemoveFileTaken => "13 remove sc->nr.file_taken (no behaviour change for MGLRU after 11)",
            Switch::RemoveUnqueuedDirty => "14 remove sc->nr.unqueued_dirty (no behaviour change for MGLRU after 11)",
            Switch::UnifyWritebackThrottling => "15 MGLRU feeds sc->nr; cgroup reclaim gets congestion throttling",
            Switch::FgPromotion => "EXPERIMENTAL MGLRU-FG: a file folio whose fd access count overflows is promoted one generation",
            Switch::ReferencedPlacement => "7.2.13: lru_gen_folio_seq places PG_referenced folios like workingset ones (max_seq - 2)",
            Switch::FaultMarksAccessed => "7.2.13: folio_add_lru in a fault activates only workingset folios and marks the others accessed",
            Switch::SecondAccessPromotion => "7.2.13: lru_gen_set_refs promotes to workingset only after two fd/PTE references, else counts one more",
            Switch::RefaultActivateWorkingsetOnly => "7.2.13: lru_gen_refault counts workingset_activate only for workingset folios",
            Switch::MemcgReclaimAbortsAtGoal => "7.2.13: should_abort_scan also stops memcg reclaim once it reclaimed its goal",
        }
    }

    /// The upstream commit of a series patch (spec series-2026.md §A.2); None for the
    /// experimental FG promotion and for Debian 7.2.13's changes (found in its source, not
    /// traced to a commit).
    pub fn commit(self) -> Option<&'static str> {
        Some(match self {
            Switch::ConsolidateEvictableSize => "0491e9f75c15",
            Switch::RenameAgingRotationVars => "790d3abeca09",
            Switch::RelocateScanBatchLimit => "aa6ef5b159dc",
            Switch::RestructureReclaimLoop => "163bc3d68c9f",
            Switch::ExactScanCount => "3a72e078b4a3",
            Switch::AvoidTypeFallback => "16b475d2ac3c",
            Switch::SmallerReclaimBatch => "6e9be217a3ce",
            Switch::DontAbortAfterAging => "12316f7902f8",
            Switch::RemoveSwapConstrainedCheck => "acd22fbb9f47",
            Switch::CommonDirtyWritebackReactivation => "75d4c3f5fb98",
            Switch::SimplifyDirtyWriteback => "f37d3708b676",
            Switch::DropReclaimingArg => "32d87083ee97",
            Switch::RemoveFileTaken => "e621a24e10bb",
            Switch::RemoveUnqueuedDirty => "183ff2f9ec48",
            Switch::UnifyWritebackThrottling => "39376b9cac1c",
            _ => return None,
        })
    }

    /// Switches this one builds on: patches whose code it changes or removes, so the kernel
    /// never has it without them. 12 drops the `reclaiming` argument whose last user 10
    /// removed; 13 and 14 remove `sc->nr.file_taken` and `unqueued_dirty`, which MGLRU stopped
    /// feeding in 11; 15's `handle_reclaim_writeback` carries 11's flusher wake-up rule.
    pub fn requires(self) -> &'static [Switch] {
        match self {
            Switch::DropReclaimingArg => &[Switch::CommonDirtyWritebackReactivation],
            Switch::RemoveFileTaken | Switch::RemoveUnqueuedDirty => {
                &[Switch::SimplifyDirtyWriteback]
            }
            Switch::UnifyWritebackThrottling => &[Switch::SimplifyDirtyWriteback],
            _ => &[],
        }
    }

    /// The order bisect applies switches in: by first kernel (the series, in 7.2; Debian
    /// 7.2.13's changes), then the experimental FG promotion, and within a kernel in series
    /// order.
    pub const BISECT_ORDER: [Switch; 21] = Switch::series_then_7_2_13_at(15);

    fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl fmt::Display for Switch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Switch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Switch::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("unknown switch '{s}' (see `reclaimlab policies`)"))
    }
}

/// A set of switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Switches(u32);

impl Switches {
    pub const NONE: Switches = Switches(0);

    /// Every patch of the series (the 7.2 kernel).
    pub fn series() -> Switches {
        Switch::SERIES
            .into_iter()
            .fold(Switches::NONE, |s, w| s.with(w))
    }
    /// The series and the MGLRU changes beside it in Debian's 7.2.13.
    pub fn debian_7_2_13() -> Switches {
        Switch::DEBIAN_7_2_13
            .into_iter()
            .fold(Switches::series(), |s, w| s.with(w))
    }
    pub fn with(self, w: Switch) -> Switches {
        Switches(self.0 | w.bit())
    }
    pub fn without(self, w: Switch) -> Switches {
        Switches(self.0 & !w.bit())
    }
    #[inline]
    pub fn on(self, w: Switch) -> bool {
        self.0 & w.bit() != 0
    }
    pub fn iter(self) -> impl Iterator<Item = Switch> {
        Switch::ALL.into_iter().filter(move |&w| self.on(w))
    }
    /// Every switch that is on has the switches it requires on ([`Switch::requires`]).
    pub fn check_requirements(self) -> Result<(), String> {
        for w in self.iter() {
            if let Some(r) = w.requires().iter().find(|r| !self.on(**r)) {
                return Err(format!(
                    "switch '{w}' requires '{r}' (the kernel has it only on top of that patch): turn '{r}' on too"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_series_has_fifteen() {
        for w in Switch::ALL {
            assert_eq!(w.name().parse::<Switch>().unwrap(), w);
        }
        assert_eq!(Switches::series().iter().count(), 15);
        assert!(!Switches::series().on(Switch::FgPromotion));
        assert!("nope".parse::<Switch>().is_err());
    }

    #[test]
    fn the_series_and_7_2_13_meet_their_requirements_and_bisect_order_has_every_switch() {
        assert!(Switches::series().check_requirements().is_ok());
        assert!(Switches::debian_7_2_13().check_requirements().is_ok());
        let err = Switches::series()
            .without(Switch::SimplifyDirtyWriteback)
            .check_requirements()
            .unwrap_err();
        assert!(err.contains("requires 'simplify-dirty-writeback'"), "{err}");
        assert!(Switches::NONE
            .with(Switch::DropReclaimingArg)
            .check_requirements()
            .is_err());
        let mut order = Switch::BISECT_ORDER.to_vec();
        order.sort();
        order.dedup();
        assert_eq!(order.len(), Switch::ALL.len());
        // Requirements come earlier in bisect order.
        for (i, w) in Switch::BISECT_ORDER.iter().enumerate() {
            for r in w.requires() {
                assert!(Switch::BISECT_ORDER[..i].contains(r), "{w} before {r}");
            }
        }
        assert!(Switch::SERIES.iter().all(|w| w.commit().is_some()));
    }
}
