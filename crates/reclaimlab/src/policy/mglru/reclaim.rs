//! The per-lruvec reclaim loop of vmscan.c's MGLRU: `should_abort_scan`, `get_nr_to_scan`,
//! `try_to_shrink_lruvec` (before and after the 2026 series' patch 04) and `lruvec_is_sizable`.

use super::*;

impl Mglru {
    /// `should_abort_scan`.
    pub(super) fn should_abort_scan(&self, m: &Machine, node: u8, sc: &ScanControl) -> bool {
        // "don't abort memcg reclaim to ensure fairness" (gone in 7.2.13).
        if !root_reclaim(sc) && !self.has(Behaviour::MemcgReclaimAbortsAtGoal) {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2) {
            return true;
        }
        if !sc.is_kswapd {
            return false;
        }
        let n = &m.nodes[node as usize];
        n.nr_free() > n.wmark.high + MIN_LRU_BATCH
    }

    /// `get_nr_to_scan` before the series (may age; -1 = rotate).
    pub(super) fn get_nr_to_scan_aging(
        &mut self,
        m: &mut Machine,
        lruvec: Lruvec,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> i64 {
        let Lruvec { idx: lv, memcg, .. } = lruvec;
        if m.below_min(sc.root(), memcg) {
            return -1;
        }
        let (need, mut nr) = self.should_run_aging(lv, swappiness);
        if nr > 0 && !m.memcgs[memcg as usize].online {
            return nr as i64;
        }
        if self.has(Behaviour::ProportionalProtection) {
            nr = self.apply_protection(m, memcg, sc, nr);
        }
        if !need || sc.priority == DEF_PRIORITY {
            return (nr >> sc.priority) as i64;
        }
        if self.age_in_reclaim(m, lv, sc, swappiness) {
            -1
        } else {
            0
        }
    }

    /// `get_nr_to_scan` after patch 04: a pure budget.
    pub(super) fn get_nr_to_scan_budget(
        &self,
        m: &Machine,
        lruvec: Lruvec,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> u64 {
        let Lruvec { idx: lv, memcg, .. } = lruvec;
        let size = self.evictable_size(lv, swappiness);
        if !m.memcgs[memcg as usize].online {
            return size;
        }
        self.apply_protection(m, memcg, sc, size) >> sc.priority
    }

    /// `should_run_aging` as a predicate (patch 04): forced even at DEF_PRIORITY.
    pub(super) fn should_age_now(&self, lv: usize, sc: &ScanControl, swappiness: u32) -> bool {
        let max = self.lruvecs[lv].max_seq;
        let min = self.evictable_min_seq(lv, swappiness);
        if min + MIN_NR_GENS > max {
            return true;
        }
        sc.priority != DEF_PRIORITY && min + MIN_NR_GENS == max
    }

    /// `try_to_shrink_lruvec`: returns whether the memcg should rotate to the young gen.
    pub fn try_to_shrink_lruvec(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) -> bool {
        let lruvec = self.lruvec_of(memcg, node);
        let swappiness = self.get_swappiness(m, sc);
        if self.has(Behaviour::RestructureReclaimLoop) {
            return self.shrink_lruvec_restructured(m, lruvec, sc, swappiness);
        }
        let mut scanned = 0;
        let mut n;
        loop {
            n = self.get_nr_to_scan_aging(m, lruvec, sc, swappiness);
            if n <= 0 {
                break;
            }
            let batch = (n as u64).min(if self.has(Behaviour::SmallerReclaimBatch) {
                MIN_LRU_BATCH
            } else {
                MAX_LRU_BATCH
            });
            let d = self.evict_folios(m, lruvec, sc, swappiness, batch);
            if d == 0 {
                break;
            }
            scanned += d;
            if scanned >= n as u64 || self.should_abort_scan(m, node, sc) {
                break;
            }
        }
        self.wake_flusher_if_all_unqueued_dirty(m, sc);
        n < 0
    }

    /// The loop after patch 04 (spec series-2026.md A.3).
    pub(super) fn shrink_lruvec_restructured(
        &mut self,
        m: &mut Machine,
        lruvec: Lruvec,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> bool {
        let Lruvec {
            idx: lv,
            memcg,
            node,
        } = lruvec;
        let mut budget = self.get_nr_to_scan_budget(m, lruvec, sc, swappiness);
        let mut need_rotate = false;
        let mut should_age = false;
        while budget > 0 {
            if m.below_min(sc.root(), memcg) {
                need_rotate = true;
                break;
            }
            if self.should_age_now(lv, sc, swappiness) {
                if self.age_in_reclaim(m, lv, sc, swappiness) {
                    need_rotate = true;
                }
                should_age = true;
                if !self.has(Behaviour::DontAbortAfterAging) {
                    break;
                }
            }
            let batch = budget.min(if self.has(Behaviour::SmallerReclaimBatch) {
                MIN_LRU_BATCH
            } else {
                MAX_LRU_BATCH
            });
            let d = self.evict_folios(m, lruvec, sc, swappiness, batch);
            if d == 0 || self.should_abort_scan(m, node, sc) {
                break;
            }
            if root_reclaim(sc) && should_age {
                break;
            }
            budget = budget.saturating_sub(d);
        }
        self.wake_flusher_if_all_unqueued_dirty(m, sc);
        need_rotate
    }

    /// `try_to_shrink_lruvec`'s flusher wakeup of 1bc542c6a0d1 (before patch 11): wake the
    /// flusher when every file page taken by this lruvec pass was unqueued dirty.
    pub(super) fn wake_flusher_if_all_unqueued_dirty(&self, m: &mut Machine, sc: &ScanControl) {
        // 1bc542c6a0d1 (v6.13) is in 7.1 and in Debian's 6.12.117 (vmscan.c 4812); it compares
        // the sums of the whole shrink_node call, not of this lruvec. In 6.12.117 both sums come
        // from isolation and shrink_folio_list, as after patch 10 (its cgroup v1 throttle there
        // is not modelled).
        if !self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
            || self.has(Behaviour::SimplifyDirtyWriteback)
        {
            return;
        }
        if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
            m.wakeup_flusher(true);
        }
    }

    /// `lruvec_is_sizable`.
    pub(super) fn lruvec_is_sizable(
        &self,
        m: &Machine,
        lruvec: Lruvec,
        sc: &ScanControl,
        swappiness: u32,
    ) -> bool {
        let total = self.evictable_size(lruvec.idx, swappiness);
        if m.memcgs[lruvec.memcg as usize].online {
            total >> sc.priority > 0
        } else {
            total > 0
        }
    }
}
