//! The classical active/inactive LRU with workingset refault detection, as in v6.1 and v6.12
//! (spec classic-lru.md). List, cost and workingset state per lruvec live here; page tables,
//! shrink_folio_list and the reclaim drivers are the machine's.

use super::{FolioRef, Policy};
use crate::consts::*;
use crate::machine::mm::vm;
use crate::machine::rstat::Flushed;
use crate::machine::vmscan::{
    reclaim_throttle, shrink_folio_list, shrink_node_writeback_checks, ReclaimStat, ScanControl,
    DEACTIVATE_ANON, DEACTIVATE_FILE,
};
use crate::machine::{pg, Lists, Machine, MemcgWalk, Pfn, Visit, Vm};

/// `enum lru_list`.
pub const LRU_INACTIVE_ANON: usize = 0;
pub const LRU_ACTIVE_ANON: usize = 1;
pub const LRU_INACTIVE_FILE: usize = 2;
pub const LRU_ACTIVE_FILE: usize = 3;
pub const LRU_UNEVICTABLE: usize = 4;

const ANON: usize = 0;
const FILE: usize = 1;

/// Per-(memcg, node) state of `struct lruvec` that the classical LRU uses.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    pub anon_cost: u64,
    pub file_cost: u64,
    /// The workingset clock.
    pub nonresident_age: u64,
    /// Snapshots of WORKINGSET_ACTIVATE_{ANON,FILE} (`snapshot_refaults`).
    pub refaults: [u64; 2],
    /// Hierarchical LRU sizes (`lruvec_page_state`: this memcg and its descendants).
    pub hier: [u64; 5],
    /// Hierarchical WORKINGSET_ACTIVATE_{ANON,FILE}.
    pub hier_activate: [u64; 2],
    /// `hier` as rstat readers see it (`lruvec_page_state` after the last flush).
    pub hier_flushed: Flushed<5>,
    /// `hier_activate` as rstat readers see it.
    pub hier_activate_flushed: Flushed<2>,
    /// Pages counted on the (unlinked) unevictable list.
    pub unevictable: u64,
}

/// The classical LRU policy.
pub struct Classic {
    kernel: KernelModel,
    nodes: usize,
    lists: Lists,
    lruvecs: Vec<Lruvec>,
    /// How global reclaim walks memcgs (`iter` or `heat`).
    walk: MemcgWalk,
    /// Reused buffers: isolation never allocates after warm-up.
    scratch: Vec<Pfn>,
    scratch2: Vec<Pfn>,
}

/// `get_scan_count`'s balance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    Equal,
    Fract,
    Anon,
    File,
}

/// Which folios `isolate_lru_folios` returned.
struct Isolated {
    taken: u64,
    scanned: u64,
}

impl Classic {
    /// The same policy with another memcg walk for global reclaim.
    pub fn with_memcg_walk(mut self, walk: MemcgWalk) -> Self {
        self.walk = walk;
        self
    }

    pub fn new(m: &Machine) -> Self {
        let nodes = m.nr_nodes();
        let mut c = Classic {
            kernel: m.kernel,
            nodes,
            lists: Lists::new(m.folios.len(), 0),
            lruvecs: Vec::new(),
            walk: MemcgWalk::Iter,
            scratch: Vec::with_capacity(64),
            scratch2: Vec::with_capacity(64),
        };
        for mc in 0..m.memcgs.len() as u16 {
            c.memcg_created(m, mc);
        }
        c
    }

    #[inline]
    fn lv(&self, memcg: u16, node: u8) -> usize {
        crate::machine::lruvec_index(self.nodes, memcg, node)
    }
    #[inline]
    fn list_id(&self, memcg: u16, node: u8, lru: usize) -> u32 {
        (self.lv(memcg, node) * 4 + lru) as u32
    }

    pub fn lruvec(&self, memcg: u16, node: u8) -> &Lruvec {
        &self.lruvecs[self.lv(memcg, node)]
    }

    /// `folio_lru_list`.
    fn folio_lru_list(m: &Machine, pfn: Pfn) -> usize {
        let f = &m.folios[pfn as usize];
        if f.test(pg::UNEVICTABLE) {
            return LRU_UNEVICTABLE;
        }
        let base = if f.is_file_lru() {
            LRU_INACTIVE_FILE
        } else {
            LRU_INACTIVE_ANON
        };
        base + f.test(pg::ACTIVE) as usize
    }

    /// Adds `delta` to a hierarchical LRU size of the lruvec and every ancestor's.
    fn update_hier(&mut self, m: &Machine, memcg: u16, node: u8, lru: usize, delta: i64) {
        let epoch = m.stats_epoch();
        for c in m.memcg_ancestors(memcg) {
            let i = self.lv(c, node);
            let lv = &mut self.lruvecs[i];
            lv.hier_flushed.before_update(epoch, &lv.hier);
            let v = &mut lv.hier[lru];
            *v = (*v as i64 + delta) as u64;
        }
    }

    /// `lruvec_page_state` of the LRU sizes: the hierarchical sizes as of the last flush of
    /// the memcg statistics (exact in 6.1; [`crate::machine::rstat`]).
    pub fn lru_sizes_read(&self, m: &Machine, memcg: u16, node: u8) -> [u64; 5] {
        let lv = self.lruvec(memcg, node);
        lv.hier_flushed.read(m.stats_epoch(), &lv.hier)
    }

    /// `lruvec_page_state` of WORKINGSET_ACTIVATE_{ANON,FILE}, as of the last flush.
    fn activations_read(&self, m: &Machine, memcg: u16, node: u8) -> [u64; 2] {
        let lv = self.lruvec(memcg, node);
        lv.hier_activate_flushed
            .read(m.stats_epoch(), &lv.hier_activate)
    }

    /// `workingset_age_nonresident`: advance the clock of a lruvec and its ancestors.
    fn workingset_age_nonresident(&mut self, m: &Machine, memcg: u16, node: u8, n: u64) {
        for c in m.memcg_ancestors(memcg) {
            let i = self.lv(c, node);
            self.lruvecs[i].nonresident_age += n;
        }
    }

    /// `inactive_is_low`, from the sizes as of the last statistics flush.
    pub fn inactive_is_low(&self, m: &Machine, memcg: u16, node: u8, inactive_lru: usize) -> bool {
        let sizes = self.lru_sizes_read(m, memcg, node);
        let ina = sizes[inactive_lru];
        let act = sizes[inactive_lru + 1];
        let gb = (ina + act) >> (30 - PAGE_SHIFT);
        let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
        ina * ratio < act
    }

    /// `lru_note_cost` (`lru_note_cost_unlock_irq` from 7.1): add reclaim cost to the lruvec
    /// and its ancestors, halving both costs when they exceed a quarter of the LRU size.
    /// 6.1 and 6.12 do so even at a cost of 0, which then only decays; from 7.1 a cost of 0
    /// returns at once (`note-cost-skips-zero`), taking none of the ancestors' lruvec locks.
    /// `after_putback`: the caller has just put a reclaim batch back under the lruvec's lock
    /// (see `Machine::lru_lock_note_cost`); a refault has not.
    #[allow(clippy::too_many_arguments)]
    fn lru_note_cost(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        file: bool,
        io: u64,
        rotated: u64,
        after_putback: bool,
    ) {
        let cost = if self.kernel.has(Behaviour::CostCountsRotations) {
            io * SWAP_CLUSTER_MAX + rotated
        } else {
            io
        };
        if cost == 0 && self.kernel.has(Behaviour::NoteCostSkipsZero) {
            return;
        }
        let epoch = m.stats_epoch();
        for c in m.memcg_ancestors(memcg) {
            let i = self.lv(c, node);
            let lv = &mut self.lruvecs[i];
            if file {
                lv.file_cost += cost;
            } else {
                lv.anon_cost += cost;
            }
            // lruvec_page_state: as of the last statistics flush.
            let lrusize: u64 = lv.hier_flushed.read(epoch, &lv.hier)[..4].iter().sum();
            if lv.file_cost + lv.anon_cost > lrusize / 4 {
                lv.file_cost /= 2;
                lv.anon_cost /= 2;
            }
        }
        let keeps_lock = self.kernel.has(Behaviour::NoteCostSkipsZero);
        m.lru_lock_note_cost(memcg, node, after_putback, keeps_lock);
    }

    /// `pack_shadow`, see [`super::pack_shadow`].
    pub fn pack_shadow(memcgid: u16, node: u8, eviction: u64, workingset: bool) -> u64 {
        super::pack_shadow(memcgid, node, eviction, workingset)
    }

    /// `unpack_shadow`, see [`super::unpack_shadow`].
    pub fn unpack_shadow(shadow: u64) -> (u16, u8, u64, bool) {
        super::unpack_shadow(shadow)
    }

    /// `workingset_test_recent`: is a refault's distance within the workingset size?
    fn refault_is_recent(&self, m: &Machine, shadow: u64, file: bool, refault_memcg: u16) -> bool {
        let (memcgid, node, eviction, _) = Self::unpack_shadow(shadow);
        let lv = self.lruvec(memcgid, node);
        let distance = lv.nonresident_age.wrapping_sub(eviction) & EVICTION_MASK;
        // lruvec_page_state, after mem_cgroup_flush_stats_ratelimited (6.8+).
        let sizes = self.lru_sizes_read(m, memcgid, node);
        let mut ws = sizes[LRU_ACTIVE_FILE];
        if !file {
            ws += sizes[LRU_INACTIVE_FILE];
        }
        let _swap_memcg = if self.kernel.has(Behaviour::RefaultSwapCheckEvictionMemcg) {
            memcgid
        } else {
            refault_memcg
        };
        // mem_cgroup_get_nr_swap_pages: free swap (swap.max is not modelled, so every memcg
        // sees the global free swap).
        if m.swap.nr_free() > 0 {
            ws += sizes[LRU_ACTIVE_ANON];
            if file {
                ws += sizes[LRU_INACTIVE_ANON];
            }
        }
        distance <= ws
    }

    /// `isolate_lru_folios` from the tail of one list into `self.scratch`.
    fn isolate_lru_folios(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        lru: usize,
        nr_to_scan: u64,
        may_unmap: bool,
    ) -> Isolated {
        let list = self.list_id(memcg, node, lru);
        let mut scanned = 0;
        let mut taken = 0;
        let mut skipped = 0u64;
        while scanned < nr_to_scan {
            let Some(pfn) = self.lists.tail(list) else {
                break;
            };
            scanned += 1;
            let f = m.folios[pfn as usize];
            self.lists.remove(pfn);
            if !may_unmap && f.mapcount > 0 {
                // Cannot be taken: rotate to the head.
                self.lists.push_head(list, pfn);
                skipped += 1;
                if skipped > self.lists.len(list) {
                    break;
                }
                continue;
            }
            self.update_hier(m, memcg, node, lru, -1);
            let f = &mut m.folios[pfn as usize];
            f.clear(pg::LRU);
            f.set(pg::ISOLATED);
            self.scratch.push(pfn);
            taken += 1;
        }
        m.nodes[node as usize].nr_isolated[(lru >= LRU_INACTIVE_FILE) as usize] += taken;
        // shrink_lruvec: nr_to_scan = min(nr[lru], SWAP_CLUSTER_MAX), the budget may cut it.
        let cut =
            (nr_to_scan < SWAP_CLUSTER_MAX && scanned >= nr_to_scan).then_some(SWAP_CLUSTER_MAX);
        m.lru_lock_isolate(memcg, node, scanned, cut);
        Isolated { taken, scanned }
    }

    /// `move_folios_to_lru`: put isolated folios back at the head of their lists; every folio
    /// put back active ages the workingset clock. Returns the number moved.
    fn move_folios_to_lru(&mut self, m: &mut Machine, memcg: u16, node: u8, folios: &[Pfn]) -> u64 {
        m.lru_lock_putback(memcg, node, folios.len() as u64);
        let mut moved = 0;
        for &pfn in folios {
            let f = &mut m.folios[pfn as usize];
            f.clear(pg::ISOLATED);
            let file = f.is_file_lru();
            m.nodes[node as usize].nr_isolated[file as usize] -= 1;
            let f = &mut m.folios[pfn as usize];
            if f.test(pg::MLOCKED) {
                // folio_putback_lru of an unevictable folio.
                f.clear(pg::ACTIVE);
                f.set(pg::UNEVICTABLE);
            }
            f.set(pg::LRU);
            let active = f.test(pg::ACTIVE);
            self.lruvec_add_folio(m, pfn, false);
            if active {
                self.workingset_age_nonresident(m, memcg, node, 1);
            }
            moved += 1;
        }
        moved
    }

    /// `shrink_active_list` (classic-lru.md §4.10).
    pub fn shrink_active_list(
        &mut self,
        m: &mut Machine,
        nr_to_scan: u64,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
        lru: usize,
    ) {
        m.lru_add_drain(self);
        let file = lru == LRU_ACTIVE_FILE;
        self.scratch.clear();
        let iso = self.isolate_lru_folios(m, memcg, node, lru, nr_to_scan, sc.may_unmap);
        if sc.cgroup_reclaim() {
            m.count_memcg(memcg, Vm::Pgrefill, iso.scanned);
        } else {
            m.count(memcg, Vm::Pgrefill, iso.scanned);
        }
        let mut hold = std::mem::take(&mut self.scratch);
        let mut keep_active = std::mem::take(&mut self.scratch2);
        keep_active.clear();
        let mut rotated = 0;
        let mut deactivate = 0usize;
        for i in 0..hold.len() {
            let pfn = hold[i];
            m.spend_sys(m.cfg.cost.reclaim_per_folio_ns);
            // folio_referenced trylocks a mapped file folio it was not given locked: held by
            // a write, it counts one reference without walking (no VM_EXEC: deactivated).
            let f = m.folios[pfn as usize];
            let r = if f.mapcount > 0 && !f.is_anon() && m.folio_trylock_fails(pfn) {
                crate::machine::mm::Referenced {
                    referenced: 1,
                    ..Default::default()
                }
            } else {
                m.folio_referenced(pfn, sc.target_mem_cgroup)
            };
            if r.referenced > 0 && r.vm_flags & vm::EXEC != 0 && file {
                rotated += 1;
                keep_active.push(pfn);
                continue;
            }
            let f = &mut m.folios[pfn as usize];
            f.clear(pg::ACTIVE);
            f.set(pg::WORKINGSET);
            hold[deactivate] = pfn;
            deactivate += 1;
        }
        hold.truncate(deactivate);
        self.move_folios_to_lru(m, memcg, node, &keep_active);
        let nr_deactivate = self.move_folios_to_lru(m, memcg, node, &hold);
        m.count(memcg, Vm::Pgdeactivate, nr_deactivate);
        // 6.12 notes only a batch with rotations; 7.x notes every batch, returning at 0.
        if rotated > 0 && self.kernel.has(Behaviour::CostCountsRotations) {
            self.lru_note_cost(m, memcg, node, file, 0, rotated, true);
        }
        hold.clear();
        keep_active.clear();
        self.scratch = hold;
        self.scratch2 = keep_active;
    }

    /// `too_many_isolated`: kswapd never waits; below the limit, the node's tasks asleep on
    /// VMSCAN_THROTTLE_ISOLATED are woken (`wake_throttle_isolated`).
    fn too_many_isolated(&self, m: &mut Machine, node: u8, file: bool, sc: &ScanControl) -> bool {
        if sc.is_kswapd {
            return false;
        }
        let isolated = m.nodes[node as usize].nr_isolated[file as usize];
        let lru = if file {
            LRU_INACTIVE_FILE
        } else {
            LRU_INACTIVE_ANON
        };
        let inactive = self.lruvec(0, node).hier[lru] >> 3;
        let too_many = isolated > inactive;
        if !too_many {
            m.wake_throttle(node, VmscanThrottle::Isolated);
        }
        too_many
    }

    /// `shrink_inactive_list` (classic-lru.md §4.11).
    pub fn shrink_inactive_list(
        &mut self,
        m: &mut Machine,
        nr_to_scan: u64,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
        lru: usize,
    ) -> u64 {
        let file = lru == LRU_INACTIVE_FILE;
        let stalled = std::mem::take(&mut sc.isolated_stalled);
        if self.too_many_isolated(m, node, file, sc) {
            if stalled {
                return 0;
            }
            if m.throttle_sleep_suspends() {
                sc.isolated_throttle = Some(node);
                return 0;
            }
            reclaim_throttle(m, self, node, VmscanThrottle::Isolated);
            if self.too_many_isolated(m, node, file, sc) {
                return 0;
            }
        }
        m.lru_add_drain(self);
        self.scratch.clear();
        let iso = self.isolate_lru_folios(m, memcg, node, lru, nr_to_scan, sc.may_unmap);
        let (scan_ev, steal_ev) = if sc.is_kswapd {
            (Vm::PgscanKswapd, Vm::PgstealKswapd)
        } else {
            (Vm::PgscanDirect, Vm::PgstealDirect)
        };
        self.count_gated(m, memcg, sc, scan_ev, iso.scanned);
        m.vm.add(
            if file { Vm::PgscanFile } else { Vm::PgscanAnon },
            iso.scanned,
        );
        if iso.taken == 0 {
            return 0;
        }
        let mut list = std::mem::take(&mut self.scratch);
        let mut stat = ReclaimStat::default();
        let reclaimed = shrink_folio_list(m, self, &mut list, sc, &mut stat);
        self.move_folios_to_lru(m, memcg, node, &list);
        list.clear();
        self.scratch = list;
        self.count_gated(m, memcg, sc, steal_ev, reclaimed);
        m.vm.add(
            if file {
                Vm::PgstealFile
            } else {
                Vm::PgstealAnon
            },
            reclaimed,
        );
        self.lru_note_cost(
            m,
            memcg,
            node,
            file,
            stat.nr_pageout,
            iso.scanned - reclaimed,
            true,
        );
        if stat.nr_unqueued_dirty == iso.taken {
            m.wakeup_flusher(true);
        }
        let nr = &mut sc.nr;
        nr.dirty += stat.nr_dirty;
        nr.congested += stat.nr_congested;
        nr.unqueued_dirty += stat.nr_unqueued_dirty;
        nr.writeback += stat.nr_writeback;
        nr.immediate += stat.nr_immediate;
        nr.taken += iso.taken;
        if file {
            nr.file_taken += iso.taken;
        }
        reclaimed
    }

    /// pgscan/pgsteal per reclaimer: global only outside cgroup reclaim; memcg always.
    fn count_gated(&self, m: &mut Machine, memcg: u16, sc: &ScanControl, v: Vm, n: u64) {
        if sc.cgroup_reclaim() {
            m.count_memcg(memcg, v, n);
        } else {
            m.count(memcg, v, n);
        }
    }

    /// `shrink_list`.
    fn shrink_list(
        &mut self,
        m: &mut Machine,
        lru: usize,
        n: u64,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) -> u64 {
        let file = lru >= LRU_INACTIVE_FILE;
        if lru == LRU_ACTIVE_ANON || lru == LRU_ACTIVE_FILE {
            let bit = if file {
                DEACTIVATE_FILE
            } else {
                DEACTIVATE_ANON
            };
            if sc.may_deactivate & bit != 0 {
                self.shrink_active_list(m, n, memcg, node, sc, lru);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(m, n, memcg, node, sc, lru)
    }

    /// `get_scan_count` (classic-lru.md §4.7): the number of pages to scan on each list.
    pub fn get_scan_count(
        &self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) -> [u64; 4] {
        let (balance, fraction, denominator) = self.scan_balance(m, sc);
        let root = sc.root();
        let (min, low) = m.memcg_protection(root, memcg);
        let sizes = self.lru_pages(memcg, node);
        let mut nr = [0u64; 4];
        for (lru, out) in nr.iter_mut().enumerate() {
            let size = sizes[lru];
            let file = lru >= LRU_INACTIVE_FILE;
            let mut scan = if min > 0 || low > 0 {
                let protection = if !sc.memcg_low_reclaim && low > min {
                    sc.memcg_low_skipped = true;
                    low
                } else {
                    min
                };
                let cgroup_size = m.memcgs[memcg as usize].usage.max(protection);
                let s =
                    size - (size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
                s.max(SWAP_CLUSTER_MAX)
            } else {
                size
            };
            scan >>= sc.priority;
            *out = match balance {
                ScanBalance::Equal => scan,
                ScanBalance::Fract => {
                    (scan as u128 * fraction[file as usize] as u128 / denominator as u128) as u64
                }
                ScanBalance::File => {
                    if file {
                        scan
                    } else {
                        0
                    }
                }
                ScanBalance::Anon => {
                    if file {
                        0
                    } else {
                        scan
                    }
                }
            };
        }
        nr
    }

    /// The balance part of `get_scan_count`: (balance, fraction[anon, file], denominator).
    pub fn scan_balance(&self, m: &Machine, sc: &ScanControl) -> (ScanBalance, [u64; 2], u64) {
        let swappiness = sc.proactive_swappiness.unwrap_or(m.cfg.swappiness) as u64;
        // can_reclaim_anon_pages: free swap slots remain (no demotion in the model).
        if !sc.may_swap || m.swap.nr_free() == 0 {
            return (ScanBalance::File, [0, 1], 1);
        }
        if sc.cgroup_reclaim() && swappiness == 0 {
            return (ScanBalance::File, [0, 1], 1);
        }
        // memory.reclaim's swappiness=max (7.x; memory_reclaim refuses it before).
        if swappiness == SWAPPINESS_ANON_ONLY as u64 {
            return (ScanBalance::Anon, [1, 0], 1);
        }
        if sc.priority == 0 && swappiness != 0 {
            return (ScanBalance::Equal, [1, 1], 1);
        }
        if sc.file_is_tiny {
            return (ScanBalance::Anon, [1, 0], 1);
        }
        if sc.cache_trim_mode {
            return (ScanBalance::File, [0, 1], 1);
        }
        let (anon_cost, file_cost) = (sc.anon_cost, sc.file_cost);
        let total = anon_cost + file_cost;
        let a = total + anon_cost;
        let f = total + file_cost;
        let t = a + f;
        let ap = swappiness * (t + 1) / (a + 1);
        let fp = (MAX_SWAPPINESS as u64 - swappiness) * (t + 1) / (f + 1);
        (ScanBalance::Fract, [ap, fp], (ap + fp).max(1))
    }

    /// `shrink_lruvec` (classic-lru.md §4.8).
    pub fn shrink_lruvec(&mut self, m: &mut Machine, memcg: u16, node: u8, sc: &mut ScanControl) {
        let mut nr = self.get_scan_count(m, memcg, node, sc);
        let targets = nr;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let mut reclaimed = 0;
        let proportional = !sc.cgroup_reclaim() && !sc.is_kswapd && sc.priority == DEF_PRIORITY;
        let mut scan_adjusted = false;
        'scan: while nr[LRU_INACTIVE_ANON] > 0
            || nr[LRU_ACTIVE_FILE] > 0
            || nr[LRU_INACTIVE_FILE] > 0
        {
            for (lru, left) in nr.iter_mut().enumerate() {
                if *left > 0 {
                    let n = (*left).min(SWAP_CLUSTER_MAX);
                    *left -= n;
                    reclaimed += self.shrink_list(m, lru, n, memcg, node, sc);
                    if sc.isolated_throttle.is_some() {
                        break 'scan;
                    }
                }
            }
            if reclaimed < nr_to_reclaim || proportional || scan_adjusted {
                continue;
            }
            let nr_file = nr[LRU_INACTIVE_FILE] + nr[LRU_ACTIVE_FILE];
            let nr_anon = nr[LRU_INACTIVE_ANON] + nr[LRU_ACTIVE_ANON];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (small, other, pct) = if nr_file > nr_anon {
                let pct = nr_anon * 100 / (targets[0] + targets[1] + 1);
                (0usize, 2usize, pct)
            } else {
                let pct = nr_file * 100 / (targets[2] + targets[3] + 1);
                (2usize, 0usize, pct)
            };
            nr[small] = 0;
            nr[small + 1] = 0;
            for l in [other, other + 1] {
                let done = targets[l] - nr[l];
                nr[l] = targets[l] * (100 - pct) / 100;
                nr[l] -= nr[l].min(done);
            }
            scan_adjusted = true;
        }
        sc.nr_reclaimed += reclaimed;
        if sc.isolated_throttle.is_some() {
            return;
        }
        if m.swap.total() > 0 && self.inactive_is_low(m, memcg, node, LRU_INACTIVE_ANON) {
            self.shrink_active_list(m, SWAP_CLUSTER_MAX, memcg, node, sc, LRU_ACTIVE_ANON);
        }
    }

    /// `prepare_scan_control` (classic-lru.md §4.6).
    fn prepare_scan_control(&self, m: &Machine, node: u8, sc: &mut ScanControl) {
        let root = sc.root();
        let lv = self.lruvec(root, node);
        sc.anon_cost = lv.anon_cost;
        sc.file_cost = lv.file_cost;
        // lruvec_page_state: as of the last statistics flush (6.8+: the ratelimited flush).
        let activations = self.activations_read(m, root, node);
        if sc.force_deactivate {
            sc.may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE;
        } else {
            sc.may_deactivate = 0;
            for (t, bit, ina) in [
                (ANON, DEACTIVATE_ANON, LRU_INACTIVE_ANON),
                (FILE, DEACTIVATE_FILE, LRU_INACTIVE_FILE),
            ] {
                if activations[t] != lv.refaults[t] || self.inactive_is_low(m, root, node, ina) {
                    sc.may_deactivate |= bit;
                }
            }
        }
        let no_trim = self.kernel.has(Behaviour::CacheTrimModeFailed) && sc.no_cache_trim_mode;
        let inactive_file = self.lru_sizes_read(m, root, node)[LRU_INACTIVE_FILE];
        sc.cache_trim_mode = (inactive_file >> sc.priority) != 0
            && sc.may_deactivate & DEACTIVATE_FILE == 0
            && !no_trim;
        if !sc.cgroup_reclaim() {
            // node_page_state: exact.
            let root_lv = self.lruvec(0, node);
            let file = root_lv.hier[LRU_ACTIVE_FILE] + root_lv.hier[LRU_INACTIVE_FILE];
            let free = m.nodes[node as usize].nr_free();
            let total_high = m.nodes[node as usize].wmark.high;
            let anon = root_lv.hier[LRU_INACTIVE_ANON];
            sc.file_is_tiny = file + free <= total_high
                && sc.may_deactivate & DEACTIVATE_ANON == 0
                && (anon >> sc.priority) != 0;
        }
    }

    /// `shrink_node_memcgs`: walk the reclaim root's subtree (partially with a shared per-node
    /// cursor for v6.12 direct reclaim; in heat-level passes with `@heat`).
    fn shrink_node_memcgs(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let walk = self.walk;
        m.walk_memcgs(node, sc, walk, |m, sc, memcg| {
            self.shrink_lruvec(m, memcg, node, sc);
            Visit::Reclaimed {
                abort: sc.isolated_throttle.is_some(),
            }
        });
    }
}

impl Policy for Classic {
    fn name(&self) -> String {
        let base = self.kernel.version.behaviours();
        format!(
            "classic:{}{}",
            self.kernel,
            self.kernel.behaviours.modifiers_from(base)
        )
    }

    fn memcg_created(&mut self, m: &Machine, memcg: u16) {
        let need = (memcg as usize + 1) * self.nodes;
        if self.lruvecs.len() < need {
            self.lruvecs.resize(need, Lruvec::default());
        }
        self.lists.ensure_lists(need * 4);
        let _ = m;
    }

    fn lruvec_add_folio(&mut self, m: &mut Machine, pfn: Pfn, tail: bool) {
        let f = m.folios[pfn as usize];
        let lru = Self::folio_lru_list(m, pfn);
        if lru == LRU_UNEVICTABLE {
            let i = self.lv(f.memcg, f.node);
            self.lruvecs[i].unevictable += 1;
        } else {
            let list = self.list_id(f.memcg, f.node, lru);
            if tail {
                self.lists.push_tail(list, pfn);
            } else {
                self.lists.push_head(list, pfn);
            }
        }
        self.update_hier(m, f.memcg, f.node, lru, 1);
    }

    fn lruvec_del_folio(&mut self, m: &mut Machine, pfn: Pfn) {
        let f = m.folios[pfn as usize];
        let lru = Self::folio_lru_list(m, pfn);
        if lru == LRU_UNEVICTABLE {
            let i = self.lv(f.memcg, f.node);
            self.lruvecs[i].unevictable -= 1;
        } else {
            self.lists.remove(pfn);
        }
        self.update_hier(m, f.memcg, f.node, lru, -1);
    }

    fn folio_mark_accessed(&mut self, m: &mut Machine, pfn: Pfn) {
        let f = m.folios[pfn as usize];
        if !f.test(pg::REFERENCED) {
            m.folios[pfn as usize].set(pg::REFERENCED);
            return;
        }
        if f.test(pg::UNEVICTABLE) || f.test(pg::ACTIVE) {
            return;
        }
        if f.test(pg::LRU) {
            m.folio_activate(self, pfn);
        } else {
            m.lru_cache_activate_folio(pfn);
        }
        m.folios[pfn as usize].clear(pg::REFERENCED);
        // workingset_activation.
        self.workingset_age_nonresident(m, f.memcg, f.node, 1);
    }

    fn folio_rotate_reclaimable(&mut self, m: &mut Machine, pfn: Pfn) {
        let f = m.folios[pfn as usize];
        if !f.test(pg::LRU) || f.test(pg::DIRTY) || f.test(pg::UNEVICTABLE) {
            return;
        }
        self.lruvec_del_folio(m, pfn);
        m.folios[pfn as usize].clear(pg::ACTIVE);
        self.lruvec_add_folio(m, pfn, true);
        m.count(f.memcg, Vm::Pgrotated, 1);
    }

    fn workingset_eviction(&mut self, m: &mut Machine, pfn: Pfn, target: Option<u16>) -> u64 {
        let f = m.folios[pfn as usize];
        let memcg = target.unwrap_or(0);
        let eviction = self.lruvec(memcg, f.node).nonresident_age;
        self.workingset_age_nonresident(m, memcg, f.node, 1);
        Self::pack_shadow(memcg, f.node, eviction, f.test(pg::WORKINGSET))
    }

    fn workingset_refault(&mut self, m: &mut Machine, pfn: Pfn, shadow: u64) {
        let f = m.folios[pfn as usize];
        let file = f.is_file_lru();
        let (memcgid, _, _, workingset) = Self::unpack_shadow(shadow);
        let alive = (memcgid as usize) < m.memcgs.len() && m.memcgs[memcgid as usize].online;
        if !alive && !self.kernel.has(Behaviour::RefaultOfDeadMemcgCounts) {
            return;
        }
        let (refault_ev, activate_ev, restore_ev) = if file {
            (
                Vm::WorkingsetRefaultFile,
                Vm::WorkingsetActivateFile,
                Vm::WorkingsetRestoreFile,
            )
        } else {
            (
                Vm::WorkingsetRefaultAnon,
                Vm::WorkingsetActivateAnon,
                Vm::WorkingsetRestoreAnon,
            )
        };
        m.count(f.memcg, refault_ev, 1);
        if !alive || !self.refault_is_recent(m, shadow, file, f.memcg) {
            return;
        }
        m.folios[pfn as usize].set(pg::ACTIVE);
        self.workingset_age_nonresident(m, f.memcg, f.node, 1);
        m.count(f.memcg, activate_ev, 1);
        let epoch = m.stats_epoch();
        for c in m.memcg_ancestors(f.memcg) {
            let i = self.lv(c, f.node);
            let lv = &mut self.lruvecs[i];
            lv.hier_activate_flushed
                .before_update(epoch, &lv.hier_activate);
            lv.hier_activate[file as usize] += 1;
        }
        if workingset {
            m.folios[pfn as usize].set(pg::WORKINGSET);
            // lru_note_cost_refault: 32 per page (v6.2+), 1 per page in v6.1.
            self.lru_note_cost(m, f.memcg, f.node, file, 1, 0, false);
            m.count(f.memcg, restore_ev, 1);
        }
    }

    fn folio_check_references(&mut self, m: &mut Machine, pfn: Pfn, sc: &ScanControl) -> FolioRef {
        let r = m.folio_referenced(pfn, sc.target_mem_cgroup);
        let rf = m.folios[pfn as usize].test_clear(pg::REFERENCED);
        let file = m.folios[pfn as usize].is_file_lru();
        if r.vm_flags & vm::LOCKED != 0 {
            m.folios[pfn as usize].set(pg::MLOCKED);
            return FolioRef::Activate;
        }
        // rmap lock contention: rotate (PG_referenced already cleared, 6.1 and 6.12).
        if r.contended {
            return FolioRef::Keep;
        }
        if r.referenced > 0 {
            m.folios[pfn as usize].set(pg::REFERENCED);
            if rf || r.referenced > 1 {
                return FolioRef::Activate;
            }
            if r.vm_flags & vm::EXEC != 0 && file {
                return FolioRef::Activate;
            }
            return FolioRef::Keep;
        }
        if rf && file {
            return FolioRef::ReclaimClean;
        }
        FolioRef::Reclaim
    }

    fn shrink_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        sc.nr = Default::default();
        let before = sc.nr_reclaimed;
        self.prepare_scan_control(m, node, sc);
        self.shrink_node_memcgs(m, node, sc);
        if sc.isolated_throttle.is_some() {
            return;
        }
        let node_reclaimed = sc.nr_reclaimed - before;
        shrink_node_writeback_checks(m, self, node, sc);
        if node_reclaimed > 0 {
            m.nodes[node as usize].kswapd_failures = 0;
        } else if sc.cache_trim_mode {
            sc.cache_trim_mode_failed = true;
        }
    }

    fn kswapd_age_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        if m.swap.total() == 0 || !self.inactive_is_low(m, 0, node, LRU_INACTIVE_ANON) {
            return;
        }
        for memcg in m.memcg_subtree(0) {
            self.shrink_active_list(m, SWAP_CLUSTER_MAX, memcg, node, sc, LRU_ACTIVE_ANON);
        }
    }

    fn snapshot_refaults(&mut self, m: &mut Machine, target: Option<u16>, node: u8) {
        let root = target.unwrap_or(0);
        let activations = self.activations_read(m, root, node);
        let i = self.lv(root, node);
        self.lruvecs[i].refaults = activations;
        if let Some(t) = target {
            // do_try_to_free_pages clears the target's CGROUP_CONGESTED (v6.1: the one bit).
            let flags = m.congested(t, node);
            flags[1] = false;
            if !self.kernel.has(Behaviour::CgroupCongestedSplit) {
                flags[0] = false;
            }
        }
    }

    fn lru_pages(&self, memcg: u16, node: u8) -> [u64; 5] {
        let i = self.lv(memcg, node);
        if i >= self.lruvecs.len() {
            return [0; 5];
        }
        let mut out = [0; 5];
        for (lru, o) in out.iter_mut().enumerate().take(4) {
            *o = self.lists.len(self.list_id(memcg, node, lru));
        }
        out[LRU_UNEVICTABLE] = self.lruvecs[i].unevictable;
        out
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        for memcg in 0..m.memcgs.len() as u16 {
            for node in 0..self.nodes as u8 {
                for lru in 0..4 {
                    let list = self.list_id(memcg, node, lru);
                    let mut n = 0;
                    for pfn in self.lists.iter(list) {
                        n += 1;
                        let f = &m.folios[pfn as usize];
                        if !f.test(pg::LRU) || f.test(pg::ISOLATED) || f.test(pg::IN_BATCH) {
                            return Err(format!(
                                "pfn {pfn} on list {lru} with flags {:#x}",
                                f.flags
                            ));
                        }
                        if Self::folio_lru_list(m, pfn) != lru || f.memcg != memcg || f.node != node
                        {
                            return Err(format!("pfn {pfn} on the wrong list {lru}"));
                        }
                    }
                    if n != self.lists.len(list) {
                        return Err(format!(
                            "list {list} length {} but {n} entries",
                            self.lists.len(list)
                        ));
                    }
                }
                // Hierarchical sizes equal the sums over the subtree.
                let mut sum = [0u64; 5];
                for c in m.memcg_subtree(memcg) {
                    let l = self.lru_pages(c, node);
                    for k in 0..5 {
                        sum[k] += l[k];
                    }
                }
                if sum != self.lruvec(memcg, node).hier {
                    return Err(format!(
                        "memcg {memcg} node {node}: hierarchical sizes {:?} != sums {sum:?}",
                        self.lruvec(memcg, node).hier
                    ));
                }
            }
        }
        Ok(())
    }
}
