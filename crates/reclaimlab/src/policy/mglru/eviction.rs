//! The eviction of vmscan.c's MGLRU: `sort_folio`, `isolate_folio`, `scan_folios`,
//! `isolate_folios`, `evict_folios` and the put-back of what `shrink_folio_list` kept.

use super::*;

impl Mglru {
    /// `sort_folio`: true if the folio was moved (not a candidate for isolation).
    pub(super) fn sort_folio(
        &mut self,
        m: &mut Machine,
        lv: usize,
        pfn: Pfn,
        sc: &mut ScanControl,
        tier_idx: usize,
    ) -> bool {
        let f = m.folios[pfn as usize];
        let t = f.is_file_lru() as usize;
        let min_gen = gen_of(self.lruvecs[lv].min_seq[t]);
        // 1. unevictable
        if f.test(pg::MLOCKED) || f.test(pg::UNEVICTABLE) {
            self.lists.remove(pfn);
            self.update_size(lv, t, Some(f.gen() - 1), None);
            let fm = &mut m.folios[pfn as usize];
            fm.set_gen(0);
            fm.set(pg::UNEVICTABLE);
            self.lruvecs[lv].unevictable += 1;
            m.count(f.memcg, Vm::UnevictablePgsCulled, 1);
            return true;
        }
        // 2. promoted by a page-table walk or look-around
        if f.gen() - 1 != min_gen {
            self.move_to_gen_list(lv, pfn, f.gen() - 1, t, false);
            return true;
        }
        // 3. protected tier, or lazily promoted workingset
        let tier = self.folio_tier(&f);
        let lazy = self.lazily_promoted(&f);
        if tier > tier_idx
            || lazy
            || (!self.has(Behaviour::WorkingsetTopTier)
                && f.refs() == LRU_REFS_MAX
                && f.test(pg::WORKINGSET))
        {
            // 6.1.176 counts protection as activation (6.12 does not).
            if !self.has(Behaviour::RefaultCountsEveryRefault) {
                let ev = if t == FILE {
                    Vm::WorkingsetActivateFile
                } else {
                    Vm::WorkingsetActivateAnon
                };
                m.count(f.memcg, ev, 1);
            }
            let gen = self.folio_inc_gen(m, lv, pfn, false);
            self.move_to_gen_list(lv, pfn, gen, t, !self.has(Behaviour::WorkingsetTopTier));
            if !lazy {
                let idx = if self.has(Behaviour::ProtectedAtTier) {
                    tier
                } else {
                    tier.saturating_sub(1)
                };
                self.lruvecs[lv].protected[t][idx] += 1;
            }
            return true;
        }
        // 5/6. before patch 10: dirty and writeback folios are bumped, never isolated (mainline
        // 7.1; Debian's 6.12.117 sort_folio has no such branch, vmscan.c 4312-4355)
        if !self.has(Behaviour::CommonDirtyWritebackReactivation) {
            let dirty_file = t == FILE && f.test(pg::DIRTY);
            if dirty_file
                && !self.has(Behaviour::RemoveFileTaken)
                && self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
            {
                sc.nr.file_taken += 1;
                if !f.test(pg::WRITEBACK) && !self.has(Behaviour::RemoveUnqueuedDirty) {
                    sc.nr.unqueued_dirty += 1;
                }
            }
            if f.test(pg::WRITEBACK) || dirty_file {
                let gen = self.folio_inc_gen(m, lv, pfn, true);
                self.move_to_gen_list(lv, pfn, gen, t, false);
                return true;
            }
        }
        false
    }

    /// `isolate_folio`: take the folio off its generation list for shrink_folio_list.
    pub(super) fn isolate_folio(&mut self, m: &mut Machine, pfn: Pfn, sc: &ScanControl) -> bool {
        let f = m.folios[pfn as usize];
        // 6.1 also refuses under !may_unmap and !may_writepage (later eras skip such reclaim
        // before it gets here).
        let checks_unmap = !self.has(Behaviour::IsolateFolioTrustsCallers);
        if checks_unmap && !sc.may_unmap && f.mapcount > 0 {
            return false;
        }
        let may_io = sc.may_io && (!checks_unmap || sc.may_writepage);
        // Debian's 6.12.117 refuses only dirty non-file folios here (vmscan.c 4361-4365), since
        // its dirty file folios go on to shrink_folio_list; unreachable, as `may_io` is never
        // cleared (docs/model.md §5.2 gap 11), so the mainline test stands for both.
        if !may_io
            && !self.has(Behaviour::RemoveSwapConstrainedCheck)
            && (f.test(pg::DIRTY) || (!f.is_file_lru() && !f.test(pg::SWAPCACHE)))
        {
            return false;
        }
        let fm = &mut m.folios[pfn as usize];
        if !fm.test(pg::REFERENCED) {
            fm.set_refs(0);
            if !self.has(Behaviour::WorkingsetTopTier) {
                fm.clear(pg::WORKINGSET);
            }
        }
        if !self.has(Behaviour::WorkingsetTopTier) {
            fm.clear(pg::REFERENCED);
        }
        // Before patch 10 `folio_clear_reclaim` "for shrink_folio_list()"; after it, and in
        // Debian's 6.12.117 (vmscan.c 4381-4382 clear PG_referenced only), PG_reclaim stays.
        if !self.has(Behaviour::CommonDirtyWritebackReactivation) {
            fm.clear(pg::RECLAIM);
        }
        self.lru_gen_del_folio(m, pfn, true);
        let fm = &mut m.folios[pfn as usize];
        fm.clear(pg::LRU);
        fm.set(pg::ISOLATED);
        m.nodes[f.node as usize].nr_isolated[f.is_file_lru() as usize] += 1;
        true
    }

    /// `scan_folios`: sort or isolate folios from the tail of the oldest generation of a type.
    pub(super) fn scan_folios(
        &mut self,
        m: &mut Machine,
        lruvec: Lruvec,
        sc: &mut ScanControl,
        t: usize,
        tier_idx: usize,
        nr_to_scan: u64,
    ) -> ScanResult {
        let Lruvec { idx: lv, memcg, .. } = lruvec;
        let mut r = ScanResult::default();
        if self.lruvecs[lv].nr_gens(t) == MIN_NR_GENS {
            return r;
        }
        let gen = gen_of(self.lruvecs[lv].min_seq[t]);
        let list = self.list_id(lv, gen, t);
        // Era A/B scan_folios always takes up to MAX_LRU_BATCH folios; Era D bounds it.
        let mut remaining = if self.has(Behaviour::EvictNrToScanBound) {
            nr_to_scan.min(MAX_LRU_BATCH)
        } else {
            MAX_LRU_BATCH
        };
        let (mut sorted, mut skipped) = (0u64, 0u64);
        self.moved.clear();
        while remaining > 0 {
            let Some(pfn) = self.lists.tail(list) else {
                break;
            };
            r.scanned += 1;
            // An isolated folio's CPU is inside shrink_folio_list's `reclaim_per_folio_ns`,
            // measured with its isolation (as classic's isolate_lru_folios); a folio sorted
            // or skipped costs its cold load and list move under the lock (sort_folio,
            // folio_inc_gen).
            if self.sort_folio(m, lv, pfn, sc, tier_idx) {
                m.spend_sys(m.cfg.cost.lru_isolate_hold_ns);
                sorted += 1;
            } else if self.isolate_folio(m, pfn, sc) {
                self.scratch.push(pfn);
                r.isolated += 1;
            } else {
                m.spend_sys(m.cfg.cost.lru_isolate_hold_ns);
                self.lists.remove(pfn);
                self.moved.push(pfn);
                skipped += 1;
            }
            remaining -= 1;
            if r.isolated.max(skipped) >= MIN_LRU_BATCH {
                break;
            }
        }
        for i in (0..self.moved.len()).rev() {
            let pfn = self.moved[i];
            self.lists.push_head(list, pfn);
        }
        // Era D: evict_folios(min(nr_to_scan, MIN_LRU_BATCH)); the budget may cut the batch.
        let cut = (self.has(Behaviour::EvictNrToScanBound)
            && remaining == 0
            && nr_to_scan < MIN_LRU_BATCH)
            .then_some(MIN_LRU_BATCH);
        m.lru_lock_isolate(memcg, (lv % self.nodes) as u8, r.scanned, cut);
        let (scan_ev, _) = reclaimer_events(sc);
        if sc.cgroup_reclaim() {
            m.count_memcg(memcg, scan_ev, r.isolated);
            m.count_memcg(memcg, Vm::Pgrefill, sorted);
        } else {
            m.count(memcg, scan_ev, r.isolated);
            m.count(memcg, Vm::Pgrefill, sorted);
        }
        m.vm.add(
            if t == FILE {
                Vm::PgscanFile
            } else {
                Vm::PgscanAnon
            },
            r.isolated,
        );
        if t == FILE
            && !self.has(Behaviour::SimplifyDirtyWriteback)
            && self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
        {
            sc.nr.file_taken += r.isolated;
        }
        if !self.has(Behaviour::ExactScanCount) && r.isolated == 0 && remaining > 0 {
            r.scanned = 0;
        }
        r
    }

    /// `isolate_folios`: pick a type with the PID controller, fall back to the other.
    pub(super) fn isolate_folios(
        &mut self,
        m: &mut Machine,
        lruvec: Lruvec,
        sc: &mut ScanControl,
        swappiness: u32,
        nr_to_scan: u64,
    ) -> (usize, u64) {
        let lv = lruvec.idx;
        let (lo, hi) = self.evictable_types(swappiness);
        let both = lo != hi;
        let (mut t, mut tier) = if !both {
            (lo, None)
        } else if !self.has(Behaviour::TypeSelectionAllTiers)
            && self.lruvecs[lv].min_seq[ANON] < self.lruvecs[lv].min_seq[FILE]
        {
            (ANON, None)
        } else {
            self.get_type_to_scan(lv, swappiness)
        };
        let mut total = 0;
        for _ in 0..if both { 2 } else { 1 } {
            let tier_idx = tier.take().unwrap_or_else(|| self.get_tier_idx(lv, t));
            let r = self.scan_folios(m, lruvec, sc, t, tier_idx, nr_to_scan);
            if self.has(Behaviour::ExactScanCount) {
                total += r.scanned;
                if r.isolated > 0 {
                    return (t, total);
                }
                if self.has(Behaviour::AvoidTypeFallback) && r.scanned > 0 {
                    continue;
                }
            } else if r.scanned > 0 {
                return (t, r.scanned);
            }
            t = 1 - t;
        }
        (t, total)
    }

    /// `evict_folios`: isolate a batch, run shrink_folio_list, put the rest back; one retry
    /// pass for clean folios. Returns the pages scanned.
    pub(super) fn evict_folios(
        &mut self,
        m: &mut Machine,
        lruvec: Lruvec,
        sc: &mut ScanControl,
        swappiness: u32,
        nr_to_scan: u64,
    ) -> u64 {
        let Lruvec { idx: lv, memcg, .. } = lruvec;
        // The per-CPU batches are drained once per shrink call (lru_gen_shrink_node,
        // lru_gen_shrink_lruvec), not per batch, and never by the debugfs eviction.
        if self.has(Behaviour::ExactScanCount) {
            self.try_to_inc_min_seq(lv, swappiness);
        }
        self.scratch.clear();
        let (t, mut scanned) = self.isolate_folios(m, lruvec, sc, swappiness, nr_to_scan);
        if self.has(Behaviour::ExactScanCount) {
            if scanned > 0 {
                self.try_to_inc_min_seq(lv, swappiness);
            }
        } else {
            scanned += self.try_to_inc_min_seq(lv, swappiness) as u64;
            if self.evictable_min_seq(lv, swappiness) + MIN_NR_GENS > self.lruvecs[lv].max_seq {
                scanned = 0;
            }
        }
        if self.scratch.is_empty() {
            self.evicted_type = None;
            return scanned;
        }
        self.evicted_type = Some(t);
        let isolated = self.scratch.len() as u64;
        let mut list = std::mem::take(&mut self.scratch);
        let mut first_pass = true;
        loop {
            let mut stat = ReclaimStat::default();
            let reclaimed = shrink_folio_list(m, self, &mut list, sc, &mut stat);
            sc.nr_reclaimed += reclaimed;
            let (_, steal_ev) = reclaimer_events(sc);
            if sc.cgroup_reclaim() {
                m.count_memcg(memcg, steal_ev, reclaimed);
            } else {
                m.count(memcg, steal_ev, reclaimed);
            }
            m.vm.add(
                if t == FILE {
                    Vm::PgstealFile
                } else {
                    Vm::PgstealAnon
                },
                reclaimed,
            );
            if first_pass {
                self.account_writeback(m, lv, sc, &stat, isolated);
            }
            self.clean.clear();
            let mut keep = 0;
            for i in 0..list.len() {
                let pfn = list[i];
                let f = m.folios[pfn as usize];
                if !self.has(Behaviour::RejectedFolioPlacement) && !f.test(pg::MLOCKED) {
                    // evict_folios (Era A/B): under I/O with PG_reclaim keeps its place;
                    // referenced, mapped, active or dirty goes to max_seq; the rest is retried.
                    // 6.12.117 (vmscan.c 4609-4623) also activates a locked folio: in the model
                    // only a write holds one, and its folio is dirty already. A dirty folio that
                    // shrink_folio_list activated with PG_reclaim (patch 10's path, 6.12.117)
                    // keeps PG_active and goes to max_seq.
                    let fm = &mut m.folios[pfn as usize];
                    if f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)) {
                        if f.test(pg::WORKINGSET) {
                            fm.set(pg::REFERENCED);
                        }
                    } else if !first_pass
                        || f.test(pg::ACTIVE)
                        || f.test(pg::REFERENCED)
                        || f.mapcount > 0
                        || f.test(pg::DIRTY)
                        || f.test(pg::WRITEBACK)
                    {
                        fm.set(pg::ACTIVE);
                        fm.set_refs(0);
                        fm.clear(pg::REFERENCED);
                        fm.clear(pg::WORKINGSET);
                    } else {
                        self.clean.push(pfn);
                        continue;
                    }
                    list[keep] = pfn;
                    keep += 1;
                    continue;
                }
                if first_pass
                    && !f.test(pg::ACTIVE)
                    && f.mapcount == 0
                    && !f.test(pg::DIRTY)
                    && !f.test(pg::WRITEBACK)
                    && !f.test(pg::MLOCKED)
                {
                    self.clean.push(pfn);
                    continue;
                }
                if !f.test(pg::MLOCKED)
                    && self.folio_seq(m, lv, pfn, false)
                        == self.lruvecs[lv].min_seq[f.is_file_lru() as usize]
                {
                    let fm = &mut m.folios[pfn as usize];
                    fm.set(pg::ACTIVE);
                    fm.set_refs(0);
                    fm.clear(pg::REFERENCED);
                }
                list[keep] = pfn;
                keep += 1;
            }
            list.truncate(keep);
            self.putback(m, &list);
            list.clear();
            if self.clean.is_empty() || !first_pass {
                if !self.clean.is_empty() {
                    let clean = std::mem::take(&mut self.clean);
                    self.putback(m, &clean);
                    self.clean = clean;
                }
                break;
            }
            std::mem::swap(&mut list, &mut self.clean);
            first_pass = false;
        }
        list.clear();
        self.scratch = list;
        scanned
    }

    /// The writeback bookkeeping of an evict_folios batch (patches 11 and 15).
    pub(super) fn account_writeback(
        &mut self,
        m: &mut Machine,
        _lv: usize,
        sc: &mut ScanControl,
        stat: &ReclaimStat,
        isolated: u64,
    ) {
        if self.has(Behaviour::SimplifyDirtyWriteback) && stat.nr_unqueued_dirty == isolated {
            m.wakeup_flusher(true);
        } else if !self.has(Behaviour::RemoveUnqueuedDirty)
            && !self.has(Behaviour::SimplifyDirtyWriteback)
            && self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
        {
            sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
        }
        if self.has(Behaviour::UnifyWritebackThrottling) {
            let nr = &mut sc.nr;
            nr.dirty += stat.nr_dirty;
            nr.congested += stat.nr_congested;
            nr.writeback += stat.nr_writeback;
            nr.immediate += stat.nr_immediate;
            nr.taken += isolated;
        }
    }

    /// `move_folios_to_lru` for MGLRU: re-add with `lru_gen_add_folio(reclaiming=false)`.
    pub(super) fn putback(&mut self, m: &mut Machine, folios: &[Pfn]) {
        if let Some(&first) = folios.first() {
            let f = m.folios[first as usize];
            m.lru_lock_putback(f.memcg, f.node, folios.len() as u64);
        }
        for &pfn in folios {
            let f = &mut m.folios[pfn as usize];
            f.clear(pg::ISOLATED);
            let (node, file) = (f.node, f.is_file_lru());
            if f.test(pg::MLOCKED) {
                f.clear(pg::ACTIVE);
                f.set(pg::UNEVICTABLE);
            }
            f.set(pg::LRU);
            m.nodes[node as usize].nr_isolated[file as usize] -= 1;
            self.lru_gen_add_folio(m, pfn, false);
        }
    }
}
