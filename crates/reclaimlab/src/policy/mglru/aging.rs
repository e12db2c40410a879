//! The aging of vmscan.c's MGLRU: `inc_min_seq`, `inc_max_seq`, `try_to_inc_max_seq` (with the
//! page-table walk in `walk.rs`), `try_to_inc_min_seq`, `should_run_aging`, and the working set
//! protection of kswapd (`lruvec_is_reclaimable`, `lru_gen_age_node`).

use super::*;

impl Mglru {
    /// `inc_min_seq`: carry the oldest generation of a type forward into the next one.
    pub(super) fn inc_min_seq(&mut self, m: &mut Machine, lv: usize, t: usize, swappiness: u32) {
        if self.type_evictable(t, swappiness) {
            let old_gen = gen_of(self.lruvecs[lv].min_seq[t]);
            let list = self.list_id(lv, old_gen, t);
            while let Some(pfn) = self.lists.tail(list) {
                let f = m.folios[pfn as usize];
                let tier = self.folio_tier(&f);
                let lazy = self.lazily_promoted(&f);
                let new_gen = self.folio_inc_gen(m, lv, pfn, false);
                // Every folio taken off the list counts, walker-promoted ones included.
                if self.has(Behaviour::ProtectedAtTier) && !lazy {
                    self.lruvecs[lv].protected[t][tier] += 1;
                }
                self.move_to_gen_list(lv, pfn, new_gen, t, true);
            }
        }
        self.reset_ctrl_pos(lv, t);
        self.lruvecs[lv].min_seq[t] += 1;
    }

    /// `inc_max_seq`: a new youngest generation (carrying a full type's oldest one forward).
    pub fn inc_max_seq(&mut self, m: &mut Machine, lv: usize, seq: u64, swappiness: u32) -> bool {
        let now = m.now();
        self.inc_max_seq_at(m, lv, seq, swappiness, now)
    }

    /// `inc_max_seq`, the new generation born at `now`.
    pub(super) fn inc_max_seq_at(
        &mut self,
        m: &mut Machine,
        lv: usize,
        seq: u64,
        swappiness: u32,
        now: u64,
    ) -> bool {
        if seq != self.lruvecs[lv].max_seq {
            return false;
        }
        let order = if self.has(Behaviour::IndependentMinSeq) {
            [ANON, FILE]
        } else {
            [FILE, ANON]
        };
        for t in order {
            if self.lruvecs[lv].nr_gens(t) == MAX_NR_GENS {
                self.inc_min_seq(m, lv, t, swappiness);
            }
        }
        let g = &mut self.lruvecs[lv];
        g.timestamps[gen_of(g.max_seq + 1) as usize] = now;
        g.max_seq += 1;
        true
    }

    /// `try_to_inc_max_seq`: walk the page tables (if enabled) and create a generation.
    ///
    /// Walks take time (`pte_walk_ns` per PTE, `pte_young_ns` per young one): the walker's
    /// iteration stays open until its walk ends, and `mm_state.seq` and `max_seq` advance only
    /// then, by the policy timer queued for that time (`sync_aging`): like all kernel-thread
    /// work it runs in time order, so a task whose clock is still before the end sees the walk
    /// under way. A reclaimer that asks for the same generation meanwhile joins the iteration
    /// (`join_walk`).
    pub fn try_to_inc_max_seq(
        &mut self,
        m: &mut Machine,
        lv: usize,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
    ) -> bool {
        if seq <= self.lruvecs[lv].mm.seq {
            return false;
        }
        if let Some(w) = self.lruvecs[lv].mm.walking {
            if w.seq == seq {
                return self.join_walk(m, lv, w);
            }
        }
        // 6.1 walks a forced scan even without the page-table-walk capability.
        let force_walks = force_scan && !self.has(Behaviour::ForcedAgingNeedsMmWalk);
        if self.cfg.enabled & LRU_GEN_MM_WALK == 0 && !force_walks {
            self.lruvecs[lv].mm.seq += 1;
            return self.inc_max_seq(m, lv, seq, swappiness);
        }
        let start = m.now();
        let last_handout = walk::walk_mm_list(self, m, lv, seq, swappiness, force_scan);
        let until = m.now();
        if until == start {
            self.lruvecs[lv].mm.seq += 1;
            return self.inc_max_seq(m, lv, seq, swappiness);
        }
        self.lruvecs[lv].mm.walking = Some(walk::WalkInProgress {
            seq,
            swappiness,
            until,
            last_handout,
            walkers: 1,
        });
        m.queue_kthread_work(
            until,
            crate::machine::kthreads::KthreadWork::PolicyTimer(lv as u64),
        );
        true
    }

    /// A reclaimer asks `iterate_mm_list` for an mm of the iteration under way. Once every mm
    /// has been handed out it finds the list's end: it ends the iteration itself, at once, and
    /// creates the generation (true). Before that it takes its share of the mms left (the rest
    /// of the hand-outs and walks go `k + 1` times as fast with `k` walkers so far), walks
    /// until the last one is handed out, and then finds the end itself: the iteration ends then
    /// (by the policy timer, in time order), and it returns false.
    pub(super) fn join_walk(
        &mut self,
        m: &mut Machine,
        lv: usize,
        w: walk::WalkInProgress,
    ) -> bool {
        let now = m.now();
        if now >= w.last_handout {
            self.lruvecs[lv].mm.walking = None;
            self.lruvecs[lv].mm.seq += 1;
            return self.inc_max_seq_at(m, lv, w.seq, w.swappiness, now);
        }
        let k = w.walkers as u64;
        let share = |t: u64| now + (t - now) * k / (k + 1);
        let end = share(w.last_handout);
        self.lruvecs[lv].mm.walking = Some(walk::WalkInProgress {
            until: end,
            last_handout: end,
            walkers: w.walkers + 1,
            ..w
        });
        m.queue_kthread_work(
            end,
            crate::machine::kthreads::KthreadWork::PolicyTimer(lv as u64),
        );
        m.spend_sys(end - now);
        false
    }

    /// `try_to_inc_max_seq` from a reclaimer's own aging: if it walks (or joins a walk), it
    /// allocates an mm walker (`set_mm_walk(NULL, true)`) that stays with the task until the
    /// end of its lruvec pass (cgroup reclaim) or node pass (root reclaim), so the rest of that
    /// pass's look-arounds update generations through it.
    pub(super) fn age_in_reclaim(
        &mut self,
        m: &mut Machine,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> bool {
        let max_seq = self.lruvecs[lv].max_seq;
        if self.cfg.enabled & LRU_GEN_MM_WALK != 0 && max_seq > self.lruvecs[lv].mm.seq {
            sc.mm_walker = true;
        }
        self.try_to_inc_max_seq(m, lv, max_seq, swappiness, false)
    }

    /// Ends the lruvec's walk iteration if its time has come (the policy timer, or a debugfs
    /// writer that walked it itself): `mm_state.seq` advances and `inc_max_seq` creates the
    /// generation, born when the walk ended.
    pub(super) fn sync_aging(&mut self, m: &mut Machine, lv: usize) {
        let Some(w) = self.lruvecs[lv].mm.walking else {
            return;
        };
        if m.now() < w.until {
            return;
        }
        self.lruvecs[lv].mm.walking = None;
        self.lruvecs[lv].mm.seq += 1;
        self.inc_max_seq_at(m, lv, w.seq, w.swappiness, w.until);
    }

    /// `try_to_inc_min_seq` (Era C): drop empty oldest generations; keep the types within
    /// max_seq - 2 of each other. Era A/B: anon never ahead of file.
    pub(super) fn try_to_inc_min_seq(&mut self, lv: usize, swappiness: u32) -> bool {
        let g = &self.lruvecs[lv];
        let mut min_seq = g.min_seq;
        for t in 0..2 {
            if !self.type_evictable(t, swappiness) {
                continue;
            }
            while min_seq[t] + MIN_NR_GENS <= g.max_seq {
                let gen = gen_of(min_seq[t]);
                if !self.lists.is_empty(self.list_id(lv, gen, t)) {
                    break;
                }
                min_seq[t] += 1;
            }
        }
        if self.has(Behaviour::IndependentMinSeq) {
            if swappiness > 0 && swappiness <= MAX_SWAPPINESS {
                let s = g.max_seq - 2;
                if min_seq[ANON] > s && min_seq[FILE] < s {
                    min_seq[ANON] = s;
                } else if min_seq[FILE] > s && min_seq[ANON] < s {
                    min_seq[FILE] = s;
                }
            }
        } else if swappiness > 0 {
            min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
            min_seq[FILE] = min_seq[ANON].max(g.min_seq[FILE]);
        }
        let mut advanced = false;
        for t in 0..2 {
            if min_seq[t] > self.lruvecs[lv].min_seq[t] {
                self.reset_ctrl_pos(lv, t);
                self.lruvecs[lv].min_seq[t] = min_seq[t];
                advanced = true;
            }
        }
        advanced
    }

    /// `should_run_aging`: (must or should age, nr_to_scan = evictable pages).
    pub(super) fn should_run_aging(&self, lv: usize, swappiness: u32) -> (bool, u64) {
        let g = &self.lruvecs[lv];
        if self.has(Behaviour::AgingByGenCount) {
            let min = self.evictable_min_seq(lv, swappiness);
            if min + MIN_NR_GENS > g.max_seq {
                return (true, 0);
            }
            (
                min + MIN_NR_GENS == g.max_seq,
                self.evictable_size(lv, swappiness),
            )
        } else {
            let t = if swappiness != 0 { ANON } else { FILE };
            let min = g.min_seq[t];
            let total = self.evictable_size(lv, swappiness);
            if min + MIN_NR_GENS > g.max_seq {
                // 6.1 sizes the lruvec before this test, 6.12 after it.
                let nr = if self.has(Behaviour::AgingCheckBeforeSizing) {
                    0
                } else {
                    total
                };
                return (true, nr);
            }
            if min + MIN_NR_GENS < g.max_seq {
                return (false, total);
            }
            let young: u64 = (t..2).map(|t| g.pages(g.max_seq, t)).sum();
            let old: u64 = (t..2).map(|t| g.pages(g.max_seq - MIN_NR_GENS, t)).sum();
            (
                young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total,
                total,
            )
        }
    }

    /// `apply_proportional_protection` (Era D; 7.x).
    pub(super) fn apply_protection(
        &self,
        m: &Machine,
        memcg: u16,
        sc: &mut ScanControl,
        scan: u64,
    ) -> u64 {
        let (min, low) = m.memcg_protection(sc.root(), memcg);
        if min == 0 && low == 0 {
            return scan;
        }
        let protection = if !sc.memcg_low_reclaim && low > min {
            sc.memcg_low_skipped = true;
            low
        } else {
            min
        };
        let usage = m.memcgs[memcg as usize].usage.max(protection);
        let s = scan - (scan as u128 * protection as u128 / (usage as u128 + 1)) as u64;
        s.max(SWAP_CLUSTER_MAX)
    }

    /// `lruvec_is_reclaimable` for min_ttl: not below min, sizable, and the oldest evictable
    /// generation was born more than min_ttl ago.
    pub(super) fn lruvec_is_reclaimable(
        &self,
        m: &Machine,
        lruvec: Lruvec,
        sc: &ScanControl,
        min_ttl_ns: u64,
    ) -> bool {
        let lv = lruvec.idx;
        if m.below_min(0, lruvec.memcg) {
            return false;
        }
        let swappiness = self.get_swappiness(m, sc);
        if !self.lruvec_is_sizable(m, lruvec, sc, swappiness) {
            return false;
        }
        let g = &self.lruvecs[lv];
        let seq = if self.has(Behaviour::IndependentMinSeq) {
            self.evictable_min_seq(lv, swappiness)
        } else {
            g.min_seq[FILE]
        };
        let birth = g.timestamps[gen_of(seq) as usize];
        birth + min_ttl_ns < m.now()
    }

    /// `lru_gen_age_node` (6.12+; 6.1 is `lru_gen_age_node_6_1`): with min_ttl_ms set, OOM-kill
    /// when no memcg's working set of the last min_ttl_ms can be kept.
    pub(super) fn lru_gen_age_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let min_ttl_ns = self.cfg.min_ttl_ms * 1_000_000;
        let memcgs = m.memcg_subtree(0);
        if min_ttl_ns == 0 {
            return;
        }
        self.set_initial_priority(m, node, sc);
        let mut reclaimable = false;
        for &memcg in &memcgs {
            m.calculate_protection(0, memcg);
            let lruvec = self.lruvec_of(memcg, node);
            if !reclaimable && self.lruvec_is_reclaimable(m, lruvec, sc, min_ttl_ns) {
                reclaimable = true;
            }
        }
        if !reclaimable {
            m.out_of_memory(self, None);
        }
    }
}
