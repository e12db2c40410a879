//! The reclaim path of `mglru:6.1`, as Debian's linux-source-6.1 (6.1.176) has it: v6.1's
//! loop with the Dec-2023 stable backports. There is no `lru_gen_shrink_node` and no memcg LRU:
//! every reclaim, root or cgroup, goes through the classical `shrink_node` →
//! `shrink_node_memcgs` → `lru_gen_shrink_lruvec` per memcg; kswapd ages in
//! `lru_gen_age_node` before each of its passes.

use super::{Mglru, ANON};
use crate::consts::*;
use crate::machine::vmscan::{shrink_node_writeback_checks, ScanControl};
use crate::machine::{Machine, Visit};

impl Mglru {
    /// `get_swappiness` (6.1): the memcg's swappiness, 0 with fewer than MIN_LRU_BATCH free
    /// swap slots; unlike later eras it does not look at `may_swap`.
    pub(super) fn get_swappiness_6_1(&self, m: &Machine) -> u32 {
        if m.swap.nr_free() < MIN_LRU_BATCH {
            return 0;
        }
        m.cfg.swappiness
    }

    /// The swappiness `lru_gen_shrink_lruvec` (6.1) evicts with: without `may_swap`, global
    /// reclaim still takes file first (1) if it could swap; cgroup reclaim takes file only.
    fn shrink_swappiness_6_1(&self, m: &Machine, sc: &ScanControl) -> u32 {
        let swappiness = self.get_swappiness_6_1(m);
        if sc.may_swap {
            swappiness
        } else if !sc.cgroup_reclaim() && swappiness != 0 {
            1
        } else {
            0
        }
    }

    /// `get_nr_to_scan` (6.1): the pages to scan (0 = stop) and `need_aging` (None when the
    /// memcg is protected, which leaves the caller's flag as it was). Kswapd leaves aging to
    /// `lru_gen_age_node`; a successful aging keeps evicting with the pre-aging budget.
    fn get_nr_to_scan_6_1(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> (u64, Option<bool>) {
        let root = sc.root();
        if m.below_min(root, memcg) || (m.below_low(root, memcg) && !sc.memcg_low_reclaim) {
            return (0, None);
        }
        let (need_aging, total) = self.should_run_aging(lv, swappiness);
        let nr_to_scan = if m.memcgs[memcg as usize].online {
            total >> sc.priority
        } else {
            total
        };
        if !need_aging {
            return (nr_to_scan, Some(false));
        }
        if sc.priority != DEF_PRIORITY {
            if sc.is_kswapd {
                return (0, Some(true));
            }
            if self.age_in_reclaim(m, lv, sc, swappiness) {
                return (nr_to_scan, Some(true));
            }
        }
        let enough =
            self.evictable_min_seq(lv, swappiness) + MIN_NR_GENS <= self.lruvecs[lv].max_seq;
        (if enough { nr_to_scan } else { 0 }, Some(true))
    }

    /// `should_abort_scan` (6.1). `seq` is max_seq when the lruvec pass began. Direct reclaim
    /// stops after aging twice, or at the goal once it swapped; cgroup reclaim goes on.
    /// Global reclaim below priority 10 stops when every zone is above its watermark (high
    /// for kswapd, low otherwise), crediting itself MIN_LRU_BATCH pages as the kernel does.
    fn should_abort_scan_6_1(
        &self,
        m: &Machine,
        lv: usize,
        node: u8,
        seq: u64,
        sc: &mut ScanControl,
        need_swapping: bool,
    ) -> bool {
        if !sc.is_kswapd {
            if self.lruvecs[lv].max_seq - seq > 1 {
                return true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim && need_swapping {
                return true;
            }
            if sc.cgroup_reclaim() {
                return false;
            }
        } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
            return false;
        }
        if sc.priority > DEF_PRIORITY - 2 {
            return false;
        }
        let n = &m.nodes[node as usize];
        let wmark = if sc.is_kswapd {
            n.wmark.high
        } else {
            n.wmark.low
        };
        if wmark > n.nr_free() {
            return false;
        }
        sc.nr_reclaimed += MIN_LRU_BATCH;
        true
    }

    /// `lru_gen_shrink_lruvec` (6.1): evict in batches until the budget (recomputed, and
    /// possibly aged, every round) is scanned or `should_abort_scan` says stop.
    pub(super) fn lru_gen_shrink_lruvec_6_1(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) {
        let lv = self.lv(memcg, node);
        m.lru_add_drain(self);
        // set_mm_walk .. clear_mm_walk: a walker aging allocates lasts for this pass.
        let walker = sc.mm_walker;
        self.shrink_lruvec_pass_6_1(m, lv, memcg, node, sc);
        sc.mm_walker = walker;
    }

    /// The body of 6.1's `lru_gen_shrink_lruvec`, between `set_mm_walk` and `clear_mm_walk`.
    fn shrink_lruvec_pass_6_1(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) {
        let seq = self.lruvecs[lv].max_seq;
        let reclaimed = sc.nr_reclaimed;
        let (mut need_aging, mut need_swapping) = (false, false);
        let mut scanned = 0;
        loop {
            let swappiness = self.shrink_swappiness_6_1(m, sc);
            let (nr_to_scan, aging) = self.get_nr_to_scan_6_1(m, lv, memcg, sc, swappiness);
            if let Some(a) = aging {
                need_aging = a;
            }
            if nr_to_scan == 0 {
                return;
            }
            let delta = self.evict_folios(
                m,
                self.lruvec_of(memcg, node),
                sc,
                swappiness,
                MAX_LRU_BATCH,
            );
            if self.evicted_type == Some(ANON) {
                need_swapping = true;
            }
            if delta == 0 {
                return;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break;
            }
            if self.should_abort_scan_6_1(m, lv, node, seq, sc, need_swapping) {
                break;
            }
        }
        if sc.nr_reclaimed - reclaimed >= MIN_LRU_BATCH && !need_aging {
            sc.memcgs_need_aging = false;
        }
    }

    /// `shrink_node` (6.1 with MGLRU): `shrink_node_memcgs` over the reclaim root's whole
    /// subtree (protection as in the classical LRU; heat levels with `@heat`), then the
    /// classical end of `shrink_node`.
    /// MGLRU leaves `sc.nr` empty in 6.1, so kswapd always flags PGDAT_DIRTY.
    pub(super) fn shrink_node_6_1(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let before = sc.nr_reclaimed;
        let walk = self.cfg.memcg_walk;
        m.walk_memcgs(node, sc, walk, |m, sc, memcg| {
            self.lru_gen_shrink_lruvec_6_1(m, memcg, node, sc);
            Visit::Reclaimed { abort: false }
        });
        shrink_node_writeback_checks(m, self, node, sc);
        if sc.nr_reclaimed > before {
            m.nodes[node as usize].kswapd_failures = 0;
        }
    }

    /// `age_lruvec` (6.1): whether the memcg counts as reclaimable for min_ttl_ms; ages it if
    /// `should_run_aging` says so and its oldest file generation is older than min_ttl.
    fn age_lruvec_6_1(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &ScanControl,
        min_ttl_ns: u64,
    ) -> bool {
        let lv = self.lv(memcg, node);
        let swappiness = self.get_swappiness_6_1(m);
        m.calculate_protection(0, memcg);
        if m.below_min(0, memcg) {
            return false;
        }
        let (need_aging, total) = self.should_run_aging(lv, swappiness);
        let nr_to_scan = if m.memcgs[memcg as usize].online {
            total >> sc.priority
        } else {
            total
        };
        if min_ttl_ns > 0 {
            let g = &self.lruvecs[lv];
            let birth = g.timestamps[super::gen_of(g.min_seq[super::FILE]) as usize];
            if birth + min_ttl_ns > m.now() {
                return false;
            }
            if nr_to_scan == 0 && sc.priority != DEF_PRIORITY {
                return false;
            }
        }
        if need_aging {
            let max_seq = self.lruvecs[lv].max_seq;
            self.try_to_inc_max_seq(m, lv, max_seq, swappiness, false);
        }
        true
    }

    /// `lru_gen_age_node` (6.1), kswapd before each balance_pgdat pass: skipped once after
    /// an eviction pass that found enough without needing aging; otherwise ages every memcg
    /// and, with min_ttl_ms set, OOM-kills when none is reclaimable.
    pub(super) fn lru_gen_age_node_6_1(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let min_ttl_ns = self.cfg.min_ttl_ms * 1_000_000;
        sc.last_reclaimed = sc.nr_reclaimed;
        if !sc.memcgs_need_aging {
            sc.memcgs_need_aging = true;
            return;
        }
        let mut success = false;
        for memcg in m.memcg_subtree(0) {
            if self.age_lruvec_6_1(m, memcg, node, sc, min_ttl_ns) {
                success = true;
            }
        }
        if success || min_ttl_ns == 0 {
            return;
        }
        m.out_of_memory(self, None);
    }
}
