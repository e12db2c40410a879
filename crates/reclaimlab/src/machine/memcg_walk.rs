//! How global reclaim walks memcgs (`shrink_node_memcgs`), shared by the LRU policies: plain
//! `mem_cgroup_iter` iteration with the shared reclaim cookie, and heat-level reclaim (the
//! 2026 RFC "Introduce heat-level memcg reclaim", spec series-2026.md §C.1). The third way,
//! MGLRU's memcg LRU, lives in the MGLRU policy (`shrink_many`).

use super::vmscan::ScanControl;
use super::{Machine, Vm};
use crate::consts::*;
use std::fmt;
use std::str::FromStr;

/// The memcg walk of global reclaim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemcgWalk {
    /// MGLRU's memcg LRU (`shrink_many`; MGLRU from 6.12 on).
    MemcgLru,
    /// `shrink_node_memcgs`: `mem_cgroup_iter` in pre-order, partial with the reclaim cookie.
    Iter,
    /// Heat-level reclaim: up to three `mem_cgroup_iter` passes, cold memcgs first.
    Heat,
}

impl MemcgWalk {
    pub const ALL: [MemcgWalk; 3] = [MemcgWalk::MemcgLru, MemcgWalk::Iter, MemcgWalk::Heat];

    /// One line for `reclaimlab policies`.
    pub fn description(self) -> &'static str {
        match self {
            MemcgWalk::MemcgLru => {
                "MGLRU's memcg LRU: generations x bins of memcgs, rotated per outcome (mglru default from 6.12)"
            }
            MemcgWalk::Iter => {
                "mem_cgroup_iter pre-order, partial with the shared cookie from 6.12 (classic and mglru:6.1 default)"
            }
            MemcgWalk::Heat => {
                "heat levels (2026 RFC, experimental): cold memcgs first, then warm, then hot"
            }
        }
    }
}

impl fmt::Display for MemcgWalk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemcgWalk::MemcgLru => "memcg-lru",
            MemcgWalk::Iter => "iter",
            MemcgWalk::Heat => "heat",
        })
    }
}

impl FromStr for MemcgWalk {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "memcg-lru" => Ok(MemcgWalk::MemcgLru),
            "iter" => Ok(MemcgWalk::Iter),
            "heat" => Ok(MemcgWalk::Heat),
            _ => Err(format!(
                "unknown memcg walk '{s}' (expected memcg-lru, iter or heat)"
            )),
        }
    }
}

/// Heat-level constants (`MEMCG_HEAT_*` of the RFC).
pub const MEMCG_HEAT_WARM: i64 = 4;
pub const MEMCG_HEAT_HOT: i64 = 8;
pub const MEMCG_HEAT_MAX: i64 = 12;
pub const MEMCG_HEAT_DECAY_STEP: i64 = 1;
/// The decay interval: HZ jiffies (1 s).
pub const MEMCG_HEAT_DECAY_INTERVAL: u64 = HZ;
/// Levels: COLD, WARM, HOT.
pub const MEMCG_LEVEL_COLD: u8 = 0;
pub const MEMCG_LEVEL_WARM: u8 = 1;
pub const MEMCG_LEVEL_HOT: u8 = 2;
/// Level passes of root reclaim (`max_level`); cgroup reclaim makes one.
pub const MEMCG_NR_LEVELS: u8 = 3;

/// The heat of one (memcg, node) (`mem_cgroup_per_node`: heat, last_decay, last_refault).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeatState {
    pub heat: i64,
    /// Jiffies of the last decay (allocation time at first).
    pub last_decay: u64,
    /// WORKINGSET_ACTIVATE_ANON + _FILE when last recorded.
    pub last_refault: u64,
}

/// What reclaiming one memcg did, for the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    /// Not reclaimed (MGLRU: the lruvec is not sizable): no heat record.
    Skipped,
    /// Reclaimed; `abort` = the policy's own stop test fired (MGLRU `should_abort_scan`).
    Reclaimed { abort: bool },
}

impl Machine {
    /// Jiffies of the simulated clock.
    pub fn jiffies(&self) -> u64 {
        self.now() / NS_PER_JIFFY
    }

    fn heat_state(&mut self, memcg: u16, node: u8) -> &mut HeatState {
        let nodes = self.nr_nodes();
        let jiffies = self.jiffies();
        let mc = &mut self.memcgs[memcg as usize];
        if mc.heat.len() < nodes {
            mc.heat.resize(
                nodes,
                HeatState {
                    last_decay: jiffies,
                    ..Default::default()
                },
            );
        }
        &mut mc.heat[node as usize]
    }

    /// `memcg_adjust_heat`: heat + delta, clamped to [0, MEMCG_HEAT_MAX].
    fn memcg_adjust_heat(&mut self, memcg: u16, node: u8, delta: i64) {
        let h = self.heat_state(memcg, node);
        h.heat = (h.heat + delta).clamp(0, MEMCG_HEAT_MAX);
    }

    /// `memcg_decay_heat`: one step down if more than the interval passed since the last
    /// decay (one step per check, however long the memcg was idle).
    pub fn memcg_decay_heat(&mut self, memcg: u16, node: u8) {
        if memcg == 0 {
            return;
        }
        let now = self.jiffies();
        let h = self.heat_state(memcg, node);
        if now > h.last_decay + MEMCG_HEAT_DECAY_INTERVAL {
            h.last_decay = now;
            self.memcg_adjust_heat(memcg, node, -MEMCG_HEAT_DECAY_STEP);
        }
    }

    /// `memcg_heat_level`: decay, then HOT at ≥ 8, WARM at ≥ 4, else COLD; the root is COLD.
    pub fn memcg_heat_level(&mut self, memcg: u16, node: u8) -> u8 {
        if memcg == 0 {
            return MEMCG_LEVEL_COLD;
        }
        self.memcg_decay_heat(memcg, node);
        let heat = self.heat_state(memcg, node).heat;
        if heat >= MEMCG_HEAT_HOT {
            MEMCG_LEVEL_HOT
        } else if heat >= MEMCG_HEAT_WARM {
            MEMCG_LEVEL_WARM
        } else {
            MEMCG_LEVEL_COLD
        }
    }

    /// `memcg_record_reclaim_result`: decay; +12 if nothing was scanned, −2 if at least half,
    /// −1 if at least a quarter of the scanned pages were reclaimed, else +1; then +1 if the
    /// workingset activations since the last record exceed the pages reclaimed, or −1 if
    /// there were none and the delta is positive.
    pub fn memcg_record_reclaim_result(
        &mut self,
        memcg: u16,
        node: u8,
        scanned: u64,
        reclaimed: u64,
    ) {
        if memcg == 0 {
            return;
        }
        self.memcg_decay_heat(memcg, node);
        let mut delta: i64 = if scanned == 0 {
            MEMCG_HEAT_MAX
        } else if 2 * reclaimed >= scanned {
            -2
        } else if 4 * reclaimed >= scanned {
            -1
        } else {
            1
        };
        let ev = self.memcg_events_hier(memcg);
        let refaults = ev.get(Vm::WorkingsetActivateAnon) + ev.get(Vm::WorkingsetActivateFile);
        let h = self.heat_state(memcg, node);
        let refault_delta = refaults.saturating_sub(h.last_refault);
        h.last_refault = refaults;
        if refault_delta > reclaimed {
            delta += 1;
        } else if refault_delta == 0 && delta > 0 {
            delta -= 1;
        }
        self.memcg_adjust_heat(memcg, node, delta);
    }

    /// `shrink_node_memcgs` with `mem_cgroup_iter` (and, for `Heat` under root reclaim, the
    /// three level passes): for each memcg of the reclaim root's subtree in pre-order, the
    /// protection checks, then `visit` reclaims it. The walk is partial (shared cookie, stop
    /// at the goal) for non-kswapd reclaim on kernels that have it, unless a full walk was
    /// asked for; it also stops when `visit` reports the policy's abort.
    ///
    /// Heat levels: pass `level` reclaims memcgs whose level is ≤ `level` and skips the
    /// others; another pass runs only if one was skipped (also after a stop at the goal, as
    /// the RFC's code does). Every reclaimed memcg's result is recorded.
    pub fn walk_memcgs(
        &mut self,
        node: u8,
        sc: &mut ScanControl,
        walk: MemcgWalk,
        mut visit: impl FnMut(&mut Machine, &mut ScanControl, u16) -> Visit,
    ) {
        let root = sc.root();
        let heat = walk == MemcgWalk::Heat && !sc.cgroup_reclaim();
        let levels = if heat { MEMCG_NR_LEVELS } else { 1 };
        for level in 0..levels {
            let partial = self.kernel.has(Behaviour::PartialMemcgWalk)
                && !sc.is_kswapd
                && !sc.memcg_full_walk;
            let (order, start) = self.reclaim_iter_begin(root, node, partial);
            let mut next = 0;
            let mut need_next_level = false;
            for (i, &memcg) in order.iter().enumerate().skip(start) {
                self.calculate_protection(root, memcg);
                if self.below_min(root, memcg) {
                    continue;
                }
                if self.below_low(root, memcg) {
                    if !sc.memcg_low_reclaim {
                        sc.memcg_low_skipped = true;
                        continue;
                    }
                    self.count_memcg(memcg, Vm::MemcgLow, 1);
                }
                if heat && self.memcg_heat_level(memcg, node) > level {
                    need_next_level = true;
                    continue;
                }
                let (scanned, reclaimed) = (sc.nr_scanned, sc.nr_reclaimed);
                let abort = match visit(self, sc, memcg) {
                    Visit::Skipped => false,
                    Visit::Reclaimed { abort } => {
                        if heat {
                            self.memcg_record_reclaim_result(
                                memcg,
                                node,
                                sc.nr_scanned - scanned,
                                sc.nr_reclaimed - reclaimed,
                            );
                        }
                        abort
                    }
                };
                if abort || (partial && sc.nr_reclaimed >= sc.nr_to_reclaim) {
                    next = i + 1;
                    break;
                }
            }
            if partial {
                self.reclaim_iter_end(root, node, next);
            }
            if !need_next_level {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{MachineConfig, MemcgConfig};

    /// A machine with `n` memcgs under the root, each charged 100 pages (an empty memcg is
    /// below its memory.min of 0 and skipped, as in the kernel).
    fn machine_with(n: usize) -> Machine {
        let mut cfg = MachineConfig::simple(4096);
        cfg.memcgs = (0..n)
            .map(|i| MemcgConfig::new(&format!("/m{i}")))
            .collect();
        let mut m = Machine::new(cfg).expect("machine");
        for mc in 1..=n {
            m.memcgs[mc].usage = 100;
        }
        m
    }

    fn at_jiffies(m: &mut Machine, j: u64) {
        m.ctx.now = j * NS_PER_JIFFY;
        m.ctx.elapsed = 0;
    }

    #[test]
    fn levels_follow_the_thresholds_and_the_root_is_cold() {
        let mut m = machine_with(1);
        for (heat, level) in [(0, 0), (3, 0), (4, 1), (7, 1), (8, 2), (12, 2)] {
            m.heat_state(1, 0).heat = heat;
            assert_eq!(m.memcg_heat_level(1, 0), level, "heat {heat}");
        }
        m.memcg_record_reclaim_result(0, 0, 0, 0);
        assert_eq!(m.memcg_heat_level(0, 0), MEMCG_LEVEL_COLD);
        assert!(m.memcgs[0].heat.is_empty(), "the root has no heat");
    }

    #[test]
    fn decay_is_one_step_per_check_after_more_than_a_second() {
        let mut m = machine_with(1);
        at_jiffies(&mut m, 0);
        m.heat_state(1, 0).heat = 10;
        at_jiffies(&mut m, HZ);
        m.memcg_decay_heat(1, 0);
        assert_eq!(m.heat_state(1, 0).heat, 10, "exactly 1 s: no decay");
        at_jiffies(&mut m, 10 * HZ);
        m.memcg_decay_heat(1, 0);
        assert_eq!(m.heat_state(1, 0).heat, 9, "10 s idle: one step");
        m.memcg_decay_heat(1, 0);
        assert_eq!(m.heat_state(1, 0).heat, 9, "the interval restarts");
        assert_eq!(m.heat_state(1, 0).last_decay, 10 * HZ);
        m.heat_state(1, 0).heat = 0;
        at_jiffies(&mut m, 20 * HZ);
        m.memcg_decay_heat(1, 0);
        assert_eq!(m.heat_state(1, 0).heat, 0, "clamped at 0");
    }

    /// Each base delta, with no refaults (the −1 for "no refaults and delta > 0" applies to
    /// the positive deltas).
    #[test]
    fn record_deltas_without_refaults() {
        for (scanned, reclaimed, expect) in [
            (0, 0, 11),   // +12, −1 (no refaults)
            (100, 50, 0), // −2, clamped at 0
            (100, 25, 0), // −1
            (100, 24, 0), // +1, −1
        ] {
            let mut m = machine_with(1);
            m.memcg_record_reclaim_result(1, 0, scanned, reclaimed);
            assert_eq!(m.heat_state(1, 0).heat, expect, "{scanned}/{reclaimed}");
        }
        let mut m = machine_with(1);
        m.heat_state(1, 0).heat = 6;
        m.memcg_record_reclaim_result(1, 0, 100, 50);
        assert_eq!(m.heat_state(1, 0).heat, 4, "−2");
        m.memcg_record_reclaim_result(1, 0, 100, 25);
        assert_eq!(m.heat_state(1, 0).heat, 3, "−1");
        m.memcg_record_reclaim_result(1, 0, 0, 0);
        assert_eq!(m.heat_state(1, 0).heat, MEMCG_HEAT_MAX, "clamped at 12");
    }

    /// The refault term: activations since the last record above the pages reclaimed add 1;
    /// the first record sees the whole cumulative count.
    #[test]
    fn record_refault_term() {
        let mut m = machine_with(1);
        m.count(1, Vm::WorkingsetActivateFile, 30);
        m.count(1, Vm::WorkingsetActivateAnon, 10);
        m.memcg_record_reclaim_result(1, 0, 100, 24);
        assert_eq!(m.heat_state(1, 0).heat, 2, "+1 base, +1 for 40 > 24");
        assert_eq!(m.heat_state(1, 0).last_refault, 40);
        m.count(1, Vm::WorkingsetActivateFile, 5);
        m.memcg_record_reclaim_result(1, 0, 100, 24);
        assert_eq!(m.heat_state(1, 0).heat, 3, "+1 base, 5 ≤ 24: no term");
        m.memcg_record_reclaim_result(1, 0, 100, 60);
        assert_eq!(
            m.heat_state(1, 0).heat,
            1,
            "−2, none since: no term (delta < 0)"
        );
    }

    /// Three passes: cold memcgs in the first, warm ones join in the second, hot ones in the
    /// third; another pass runs only if one was skipped. Cgroup reclaim makes one pass.
    #[test]
    fn passes_reclaim_cold_then_warm_then_hot() {
        let mut m = machine_with(3);
        m.heat_state(1, 0).heat = 0;
        m.heat_state(2, 0).heat = MEMCG_HEAT_WARM;
        m.heat_state(3, 0).heat = MEMCG_HEAT_HOT;
        let mut sc = ScanControl::new(u64::MAX, None);
        sc.is_kswapd = true;
        let mut visits = Vec::new();
        m.walk_memcgs(0, &mut sc, MemcgWalk::Heat, |_, _, mc| {
            visits.push(mc);
            Visit::Skipped
        });
        assert_eq!(visits, [0, 1, 0, 1, 2, 0, 1, 2, 3]);
        // Without a hot or warm memcg: one pass.
        let mut m = machine_with(2);
        let mut visits = Vec::new();
        m.walk_memcgs(0, &mut sc, MemcgWalk::Heat, |_, _, mc| {
            visits.push(mc);
            Visit::Skipped
        });
        assert_eq!(visits, [0, 1, 2]);
        // Cgroup reclaim: one pass over everything.
        let mut m = machine_with(3);
        m.heat_state(3, 0).heat = MEMCG_HEAT_HOT;
        let mut sc = ScanControl::new(u64::MAX, Some(0));
        sc.is_kswapd = true;
        let mut visits = Vec::new();
        m.walk_memcgs(0, &mut sc, MemcgWalk::Heat, |_, _, mc| {
            visits.push(mc);
            Visit::Skipped
        });
        assert_eq!(visits, [0, 1, 2, 3]);
    }

    /// A partial walk that meets its goal in pass 0 after skipping a warm memcg still starts
    /// pass 1 (the RFC's code tests "skipped" after the early exit), which stops again after
    /// its first memcg; the shared cursor carries over between passes.
    #[test]
    fn a_pass_that_met_the_goal_still_starts_the_next_level() {
        let mut m = machine_with(3);
        m.kernel = Kernel::V6_12.into();
        m.heat_state(1, 0).heat = MEMCG_HEAT_WARM;
        let mut sc = ScanControl::new(1, None);
        let mut visits = Vec::new();
        m.walk_memcgs(0, &mut sc, MemcgWalk::Heat, |_, sc, mc| {
            visits.push(mc);
            if mc == 3 {
                sc.nr_reclaimed += 1;
            }
            Visit::Skipped
        });
        assert_eq!(visits, [0, 2, 3, 0]);
        assert_eq!(m.reclaim_iter.get(&(0, 0)), Some(&1));
    }

    /// A reclaimed memcg's result is recorded (an empty memcg scans nothing: it turns hot and
    /// is left to the last pass next time); a skipped one is not.
    #[test]
    fn walk_records_reclaimed_memcgs_only() {
        let mut m = machine_with(2);
        let mut sc = ScanControl::new(u64::MAX, None);
        sc.is_kswapd = true;
        m.walk_memcgs(0, &mut sc, MemcgWalk::Heat, |_, _, mc| {
            if mc == 2 {
                Visit::Skipped
            } else {
                Visit::Reclaimed { abort: false }
            }
        });
        assert_eq!(m.heat_state(1, 0).heat, 11);
        assert_eq!(m.heat_state(2, 0).heat, 0);
        assert_eq!(m.memcg_heat_level(1, 0), MEMCG_LEVEL_HOT);
    }
}
