//! The policy-independent part of mm/vmscan.c: `struct scan_control`, `shrink_folio_list` (what
//! happens to each isolated folio), the reclaim drivers (`do_try_to_free_pages` for direct and
//! memcg reclaim, `balance_pgdat` for kswapd) and `reclaim_throttle`.

use super::mm::vm;
use super::swap::{SwapSlot, SwapWrite};
use super::{pg, Machine, Owner, Pfn, Slot, Vm};
use crate::consts::*;
use crate::policy::{FolioRef, Policy};

/// Per-pass counters of `struct scan_control.nr` (classic-lru.md §4.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NrStats {
    pub dirty: u64,
    pub unqueued_dirty: u64,
    pub congested: u64,
    pub writeback: u64,
    pub immediate: u64,
    pub file_taken: u64,
    pub taken: u64,
}

/// `struct reclaim_stat`: what one shrink_folio_list call saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimStat {
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
    pub nr_pageout: u64,
    pub nr_activate: [u64; 2],
    pub nr_ref_keep: u64,
    pub nr_unmap_fail: u64,
}

/// `struct scan_control`.
#[derive(Clone, Debug)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub nr_reclaimed: u64,
    /// Folios locked in shrink_folio_list (not pgscan).
    pub nr_scanned: u64,
    pub priority: i32,
    /// None = global reclaim; Some(memcg) = cgroup reclaim (`cgroup_reclaim(sc)`).
    pub target_mem_cgroup: Option<u16>,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    /// The allocation may do I/O (`__GFP_IO`); false models GFP_NOIO reclaim.
    pub may_io: bool,
    pub proactive: bool,
    pub proactive_swappiness: Option<u32>,
    pub is_kswapd: bool,
    /// DEACTIVATE_ANON = 1, DEACTIVATE_FILE = 2.
    pub may_deactivate: u8,
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub memcg_low_reclaim: bool,
    pub memcg_low_skipped: bool,
    pub memcg_full_walk: bool,
    pub cache_trim_mode: bool,
    pub cache_trim_mode_failed: bool,
    pub no_cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    pub nr: NrStats,
    /// The reclaimer holds an MGLRU mm walker (`current->reclaim_state->mm_walk`) beyond what
    /// `is_kswapd` and `proactive` imply (the lru_gen debugfs writer).
    pub mm_walker: bool,
    /// v6.1 `memcgs_need_aging`: kswapd's aging is skipped while eviction finds enough.
    pub memcgs_need_aging: bool,
    /// v6.1 `last_reclaimed`: nr_reclaimed when kswapd last aged (its should_abort_scan).
    pub last_reclaimed: u64,
    /// Not a kernel field: this scan control resumes a `do_try_to_free_pages` whose task was
    /// preempted between two priorities.
    pub resuming: bool,
    /// Not a kernel field: `shrink_inactive_list` found too many folios isolated on this node
    /// and the task sleeps on VMSCAN_THROTTLE_ISOLATED by yielding (`ThrottleSleep`): the
    /// priority pass unwinds and resumes after the sleep.
    pub isolated_throttle: Option<u8>,
    /// Not a kernel field: the pass resumes after such a sleep, so its first
    /// `shrink_inactive_list` is the one that stalled (`stalled` is set: if there are still
    /// too many isolated, it returns 0 without sleeping again).
    pub isolated_stalled: bool,
    /// Not a kernel field: the pass ended in a NOPROGRESS throttle that the task sleeps by
    /// yielding at the next priority (`ThrottleSleep`).
    pub noprogress_throttle: bool,
    /// The first node of the zonelist `do_try_to_free_pages` walks (`zonelist->_zonerefs`'s
    /// pgdat): the allocation's preferred node for direct reclaim, the reclaimer's own node
    /// (`numa_node_id`) for memcg reclaim. `shrink_zones` starts there; the NOPROGRESS
    /// throttle sleeps and wakes on it.
    pub zonelist_node: u8,
}

pub const DEACTIVATE_ANON: u8 = 1;
pub const DEACTIVATE_FILE: u8 = 2;

impl ScanControl {
    pub fn new(nr_to_reclaim: u64, target: Option<u16>) -> Self {
        ScanControl {
            nr_to_reclaim,
            nr_reclaimed: 0,
            nr_scanned: 0,
            priority: DEF_PRIORITY,
            target_mem_cgroup: target,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_io: true,
            proactive: false,
            proactive_swappiness: None,
            is_kswapd: false,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            memcg_full_walk: false,
            mm_walker: false,
            memcgs_need_aging: false,
            last_reclaimed: 0,
            resuming: false,
            isolated_throttle: None,
            isolated_stalled: false,
            noprogress_throttle: false,
            zonelist_node: 0,
            cache_trim_mode: false,
            cache_trim_mode_failed: false,
            no_cache_trim_mode: false,
            file_is_tiny: false,
            anon_cost: 0,
            file_cost: 0,
            nr: NrStats::default(),
        }
    }
    /// `cgroup_reclaim(sc)`.
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_mem_cgroup.is_some()
    }
    /// The reclaim root: the target memcg, or the root memcg for global reclaim.
    pub fn root(&self) -> u16 {
        self.target_mem_cgroup.unwrap_or(0)
    }
}

/// Where shrink_folio_list sends a folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Free,
    Activate,
    Keep,
}

/// `shrink_folio_list`: decide the fate of each isolated folio. Freed folios leave `folios`;
/// the survivors stay (PG_active set for the activated ones) for the caller to put back.
/// Returns the number of pages reclaimed.
pub fn shrink_folio_list(
    m: &mut Machine,
    pol: &mut dyn Policy,
    folios: &mut Vec<Pfn>,
    sc: &mut ScanControl,
    stat: &mut ReclaimStat,
) -> u64 {
    let mut reclaimed = 0;
    let mut i = 0;
    while i < folios.len() {
        // The folio is locked now; until then other CPUs may use it.
        m.let_others_run(pol);
        let pfn = folios[i];
        // folio_trylock: a write holding the folio keeps it (`goto keep`), not scanned.
        if m.folio_trylock_fails(pfn) {
            i += 1;
            continue;
        }
        m.spend_sys(m.cfg.cost.reclaim_per_folio_ns);
        sc.nr_scanned += 1;
        let fate = decide_folio(m, pol, pfn, sc, stat);
        match fate {
            Fate::Free => {
                folios.swap_remove(i);
                reclaimed += 1;
                continue;
            }
            Fate::Activate => activate_locked(m, pfn, stat),
            Fate::Keep => {}
        }
        i += 1;
    }
    m.vm.add(Vm::Pgactivate, stat.nr_activate[0] + stat.nr_activate[1]);
    reclaimed
}

/// The body of shrink_folio_list's loop for one folio (classic-lru.md §4.12).
fn decide_folio(
    m: &mut Machine,
    pol: &mut dyn Policy,
    pfn: Pfn,
    sc: &mut ScanControl,
    stat: &mut ReclaimStat,
) -> Fate {
    let f = m.folios[pfn as usize];
    if f.test(pg::UNEVICTABLE) || f.test(pg::MLOCKED) {
        return Fate::Activate;
    }
    if !sc.may_unmap && f.mapcount > 0 {
        return Fate::Keep;
    }
    // folio_check_dirty_writeback: anon folios never stall reclaim.
    let file = f.is_file_lru();
    let (dirty, writeback) = if file {
        (f.test(pg::DIRTY), f.test(pg::WRITEBACK))
    } else {
        (false, false)
    };
    if dirty || writeback {
        stat.nr_dirty += 1;
    }
    if dirty && !writeback {
        stat.nr_unqueued_dirty += 1;
    }
    if writeback && f.test(pg::RECLAIM) {
        stat.nr_congested += 1;
    }
    if f.test(pg::WRITEBACK) {
        let node = f.node as usize;
        if sc.is_kswapd && f.test(pg::RECLAIM) && m.nodes[node].pgdat_writeback {
            stat.nr_immediate += 1;
            return Fate::Activate;
        }
        // Case 2 (cgroup v2 and global reclaim are "sane"): mark and move on.
        m.folios[pfn as usize].set(pg::RECLAIM);
        stat.nr_writeback += 1;
        return Fate::Activate;
    }
    let refs = pol.folio_check_references(m, pfn, sc);
    match refs {
        FolioRef::Activate => return Fate::Activate,
        FolioRef::Keep => {
            stat.nr_ref_keep += 1;
            return Fate::Keep;
        }
        FolioRef::Reclaim | FolioRef::ReclaimClean => {}
    }
    if f.is_anon() && f.test(pg::SWAPBACKED) && !f.test(pg::SWAPCACHE) {
        // shrink_folio_list: no swap space may be allocated without __GFP_IO.
        if !sc.may_io {
            return Fate::Keep;
        }
        if !m.add_to_swap(pfn) {
            return Fate::Activate;
        }
    }
    if m.folios[pfn as usize].mapcount > 0 && !m.try_to_unmap(pfn) {
        stat.nr_unmap_fail += 1;
        return Fate::Activate;
    }
    if m.folios[pfn as usize].test(pg::DIRTY) {
        if let Some(fate) = pageout_dirty(m, pfn, sc, stat, refs) {
            return fate;
        }
    }
    if remove_mapping(m, pol, pfn, sc) {
        Fate::Free
    } else {
        Fate::Keep
    }
}

/// The PG_dirty branch of shrink_folio_list and `pageout`. None means "clean now: go on to
/// free it".
fn pageout_dirty(
    m: &mut Machine,
    pfn: Pfn,
    sc: &mut ScanControl,
    stat: &mut ReclaimStat,
    refs: FolioRef,
) -> Option<Fate> {
    let f = m.folios[pfn as usize];
    let node = f.node as usize;
    if f.is_file_lru() && (!sc.is_kswapd || !f.test(pg::RECLAIM) || !m.nodes[node].pgdat_dirty) {
        // Leave the write to the flusher; reclaim the folio when its I/O completes.
        m.vm.add(Vm::NrVmscanImmediateReclaim, 1);
        m.folios[pfn as usize].set(pg::RECLAIM);
        return Some(Fate::Activate);
    }
    // may_enter_fs: GFP_NOIO has neither __GFP_FS nor __GFP_IO.
    if refs == FolioRef::ReclaimClean || !sc.may_io || !sc.may_writepage {
        return Some(Fate::Keep);
    }
    if f.is_file_lru() {
        // pageout(): only file systems with ->writepage can be written by reclaim.
        if !m.cfg.fs.has_writepage(m.kernel) {
            return Some(Fate::Activate);
        }
        m.folios[pfn as usize].set(pg::RECLAIM);
        m.folio_start_writeback(pfn);
        m.vm.add(Vm::NrVmscanWrite, 1);
        stat.nr_pageout += 1;
        return Some(Fate::Keep);
    }
    if f.is_shmem() && !f.test(pg::SWAPCACHE) && !m.shmem_writepage(pfn) {
        // shmem_writepage's "redirty": AOP_WRITEPAGE_ACTIVATE.
        return Some(Fate::Activate);
    }
    m.folios[pfn as usize].set(pg::RECLAIM);
    match m.swap_writepage(pfn) {
        SwapWrite::Activate => {
            m.folios[pfn as usize].clear(pg::RECLAIM);
            Some(Fate::Activate)
        }
        SwapWrite::Async => {
            m.vm.add(Vm::NrVmscanWrite, 1);
            stat.nr_pageout += 1;
            Some(Fate::Keep)
        }
        SwapWrite::Sync => {
            m.vm.add(Vm::NrVmscanWrite, 1);
            stat.nr_pageout += 1;
            m.folios[pfn as usize].clear(pg::RECLAIM);
            None
        }
    }
}

/// `__remove_mapping`: delete a clean, unmapped folio from the page cache or swap cache,
/// leaving the policy's shadow entry, and free it.
fn remove_mapping(m: &mut Machine, pol: &mut dyn Policy, pfn: Pfn, sc: &ScanControl) -> bool {
    let f = m.folios[pfn as usize];
    if f.test(pg::DIRTY) || f.mapcount > 0 {
        return false;
    }
    match f.owner() {
        Owner::File { file, index } if f.in_page_cache() => {
            // Only file-LRU folios leave a shadow; a clean tmpfs folio (a hole read through
            // a mapping, never written) leaves its slot empty.
            let entry = match f.is_file_lru() {
                true => Slot::Shadow(pol.workingset_eviction(m, pfn, sc.target_mem_cgroup)),
                false => Slot::Empty,
            };
            m.account_page_cache(pfn, -1);
            let fl = &mut m.files[file as usize];
            fl.slots[index as usize] = entry;
            fl.nr_pages -= 1;
            fl.nr_shadows += matches!(entry, Slot::Shadow(_)) as u64;
        }
        // An anon folio, or a tmpfs folio `shmem_writepage` moved to the swap cache.
        Owner::Anon { .. } | Owner::File { .. } => {
            let Some(slot) = f.swap.checked_sub(1) else {
                return false;
            };
            if m.anon_swap_entry_unused(pfn, slot) {
                // put_swap_folio: the cache held the slot's last reference (the PTE was
                // zapped while the folio was isolated), so the slot is freed.
                m.swap_slot_release(slot);
            } else {
                let shadow = pol.workingset_eviction(m, pfn, sc.target_mem_cgroup);
                m.swap.slots[slot as usize] = SwapSlot::Stored(Some(shadow));
            }
        }
        _ => return false,
    }
    m.folios[pfn as usize].clear(pg::ISOLATED);
    let node = f.node as usize;
    m.nodes[node].nr_isolated[f.is_file_lru() as usize] -= 1;
    m.free_folio(pfn);
    true
}

/// The ACTIVATE_LOCKED label: drop the swap slot of a swap-cache folio when swap is getting
/// full, and set PG_active.
fn activate_locked(m: &mut Machine, pfn: Pfn, stat: &mut ReclaimStat) {
    let f = m.folios[pfn as usize];
    if f.test(pg::SWAPCACHE) && (m.swap.is_full() || f.test(pg::MLOCKED)) {
        m.folio_free_swap(pfn);
    }
    if !f.test(pg::MLOCKED) {
        m.folios[pfn as usize].set(pg::ACTIVE);
        stat.nr_activate[f.is_file_lru() as usize] += 1;
        m.count_memcg(f.memcg, Vm::Pgactivate, 1);
    }
}

/// `reclaim_throttle`: the current task sleeps for the reason's timeout (kernel threads other
/// than kswapd are not throttled). NOPROGRESS and CONGESTED are skipped when kswapd gave up or
/// little of the node is waiting for writeback.
pub fn reclaim_throttle(m: &mut Machine, pol: &dyn Policy, node: u8, reason: VmscanThrottle) {
    if throttle_skipped(m, pol, node, reason) {
        return;
    }
    let timeout = reason.timeout_jiffies() * NS_PER_JIFFY;
    let ns = match reason {
        VmscanThrottle::Writeback => writeback_throttle_sleep(m, node, timeout),
        _ => timeout,
    };
    m.spend_throttled(ns);
    m.ctx.reclaim_ns += ns;
    m.vm.add(Vm::ThrottleNs, ns);
}

/// `reclaim_throttle`'s early returns: the flusher is a kernel thread other than kswapd, and
/// `skip_throttle_noprogress` for NOPROGRESS and CONGESTED.
fn throttle_skipped(m: &Machine, pol: &dyn Policy, node: u8, reason: VmscanThrottle) -> bool {
    if m.ctx.is_flusher {
        return true;
    }
    if !matches!(
        reason,
        VmscanThrottle::NoProgress | VmscanThrottle::Congested
    ) {
        return false;
    }
    let write_pending = m.wb.nr_dirty + m.wb.nr_writeback;
    m.nodes[node as usize].kswapd_failures >= MAX_RECLAIM_RETRIES
        || 2 * write_pending <= m.zone_reclaimable_pages(pol, node)
}

/// A `reclaim_throttle` sleep taken as a suspension point (`schedule_timeout` on
/// `reclaim_wait[reason]`), for the two reasons whose sleepers another reclaimer wakes:
/// VMSCAN_THROTTLE_ISOLATED (`wake_throttle_isolated`, from a `too_many_isolated` that finds
/// the isolations put back) and VMSCAN_THROTTLE_NOPROGRESS (`consider_reclaim_throttle`, from
/// a direct reclaimer's pass that reclaimed more than an eighth of what it scanned). The
/// task's reclaim unwinds and yields, and the engine runs it again at the wake or at the
/// timeout. An ISOLATED sleeper's interrupted pass runs again from its start at the same
/// priority; a NOPROGRESS sleeper goes on at the next priority, as after a preemption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrottleSleep {
    pub node: u8,
    pub reason: VmscanThrottle,
    pub start: u64,
    pub deadline: u64,
    /// The reclaim's target memcg (None: global direct reclaim), whose direct reclaim time
    /// the sleep counts in.
    pub memcg: Option<u16>,
}

impl Machine {
    /// Whether the current task takes a throttle sleep by yielding: a task's access (which
    /// can yield), not a control-file writer or a kernel thread, which sleep in place for the
    /// whole timeout.
    pub fn throttle_sleep_suspends(&self) -> bool {
        self.ctx.may_yield && !self.ctx.is_kswapd && !self.ctx.is_flusher
    }

    /// The current task falls asleep on `reason`'s queue of `node` (`reclaim_throttle`) and
    /// yields; the engine ends the sleep (`end_throttle_sleep`).
    pub fn begin_throttle_sleep(&mut self, node: u8, reason: VmscanThrottle, memcg: Option<u16>) {
        let start = self.now();
        let deadline = start + reason.timeout_jiffies() * NS_PER_JIFFY;
        self.nodes[node as usize].throttle_sleepers[reason.index()] += 1;
        self.ctx.throttle_sleep = Some(ThrottleSleep {
            node,
            reason,
            start,
            deadline,
            memcg,
        });
        self.ctx.yielded = true;
    }

    /// `wake_up(&pgdat->reclaim_wait[reason])` if the queue is active (`wake_throttle_isolated`,
    /// `consider_reclaim_throttle`): the tasks asleep on it wake now (every waiter).
    pub fn wake_throttle(&mut self, node: u8, reason: VmscanThrottle) {
        let now = self.now();
        let n = &mut self.nodes[node as usize];
        let q = reason.index();
        if n.throttle_sleepers[q] > 0 {
            n.throttle_wake[q] = Some(n.throttle_wake[q].map_or(now, |w| w.min(now)));
            self.throttle_wake_pending = true;
        }
    }

    /// The engine ends a task's sleep at `end` (woken, or at its deadline): the time asleep
    /// counts as throttling and, as it is spent inside direct reclaim, as direct reclaim time.
    pub fn end_throttle_sleep(&mut self, s: &ThrottleSleep, end: u64) {
        let n = &mut self.nodes[s.node as usize];
        let q = s.reason.index();
        n.throttle_sleepers[q] -= 1;
        if n.throttle_sleepers[q] == 0 {
            n.throttle_wake[q] = None;
        }
        let ns = end - s.start;
        self.vm.add(Vm::ThrottleNs, ns);
        match s.memcg {
            None => self.vm.add(Vm::DirectReclaimNs, ns),
            Some(memcg) => self.count(memcg, Vm::DirectReclaimNs, ns),
        }
    }
}

/// How long a VMSCAN_THROTTLE_WRITEBACK sleep lasts: until more than SWAP_CLUSTER_MAX ×
/// `nr_writeback_throttled` folios of the node have completed writeback since it began
/// (`acct_reclaim_writeback` → `__acct_reclaim_writeback` wakes `reclaim_wait`), at most the
/// timeout. The completions are the queued `folio_end_writeback`s, whose times are known.
/// Simplified: a sleeper's wake time is fixed when it falls asleep (a later sleeper raising
/// `nr_writeback_throttled` does not delay it), and counting starts at its own sleep rather
/// than the first sleeper's (`nr_reclaim_start`).
fn writeback_throttle_sleep(m: &mut Machine, node: u8, timeout: u64) -> u64 {
    let now = m.now();
    let sleepers = &mut m.nodes[node as usize].writeback_throttled;
    sleepers.retain(|&wake| wake > now);
    let nr_throttled = sleepers.len() as u64 + 1;
    let need = (SWAP_CLUSTER_MAX * nr_throttled + 1) as usize;
    let mut ends: Vec<u64> = m
        .kthreads
        .queued()
        .filter_map(|(t, w)| match w {
            super::kthreads::KthreadWork::WritebackEnd(pfn)
                if t > now && t <= now + timeout && m.folios[pfn as usize].node == node =>
            {
                Some(t)
            }
            _ => None,
        })
        .collect();
    let sleep = if ends.len() >= need {
        let (_, &mut wake, _) = ends.select_nth_unstable(need - 1);
        wake - now
    } else {
        timeout
    };
    m.nodes[node as usize].writeback_throttled.push(now + sleep);
    sleep
}

/// `try_to_free_pages`: direct reclaim of SWAP_CLUSTER_MAX pages for an allocation (resuming
/// the one the task was preempted in, if any).
pub fn try_to_free_pages(m: &mut Machine, pol: &mut dyn Policy, preferred: u8) -> u64 {
    let start = m.ctx.elapsed;
    let mut sc = resumed_scan_control(m, None).unwrap_or_else(|| {
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, None);
        // __alloc_pages_direct_reclaim: ac->zonelist, the preferred node's.
        sc.zonelist_node = preferred;
        sc
    });
    // __alloc_pages_direct_reclaim: direct reclaim is a memory stall.
    let stall = m.psi_memstall_enter();
    let r = do_try_to_free_pages(m, pol, &mut sc);
    m.psi_memstall_leave(stall);
    let ns = m.ctx.elapsed - start;
    m.ctx.reclaim_ns += ns;
    m.vm.add(Vm::DirectReclaimNs, ns);
    r
}

/// The scan control of a `do_try_to_free_pages` for `target` that the task was preempted in.
fn resumed_scan_control(m: &mut Machine, target: Option<u16>) -> Option<ScanControl> {
    m.resume
        .reclaim
        .take_if(|sc| sc.target_mem_cgroup == target)
}

/// `try_to_free_mem_cgroup_pages`: memcg limit, high or proactive reclaim.
pub fn try_to_free_mem_cgroup_pages(
    m: &mut Machine,
    pol: &mut dyn Policy,
    memcg: u16,
    nr_pages: u64,
    may_swap: bool,
    proactive: bool,
    swappiness: Option<u32>,
) -> u64 {
    let start = m.ctx.elapsed;
    let mut sc = resumed_scan_control(m, Some(memcg)).unwrap_or_else(|| {
        let mut sc = ScanControl::new(nr_pages.max(SWAP_CLUSTER_MAX), Some(memcg));
        sc.may_swap = may_swap;
        sc.proactive = proactive;
        sc.proactive_swappiness = swappiness;
        // try_to_free_mem_cgroup_pages: node_zonelist(numa_node_id(), ..).
        sc.zonelist_node = m.local_node();
        sc
    });
    let r = do_try_to_free_pages(m, pol, &mut sc);
    if !m.ctx.is_kswapd {
        let ns = m.ctx.elapsed - start;
        m.ctx.reclaim_ns += ns;
        m.count(memcg, Vm::DirectReclaimNs, ns);
    }
    r
}

/// `do_try_to_free_pages` (classic-lru.md §4.4). Between two priorities the task may be
/// preempted (`cond_resched`): it then saves `sc` in `m.resume` and returns 0 with
/// `m.ctx.yielded` set; the resumed call goes on at the next priority.
pub fn do_try_to_free_pages(m: &mut Machine, pol: &mut dyn Policy, sc: &mut ScanControl) -> u64 {
    let initial_priority = DEF_PRIORITY;
    loop {
        if !std::mem::take(&mut sc.resuming) && !sc.cgroup_reclaim() {
            m.vm.add(Vm::AllocstallMovable, 1);
        }
        loop {
            sc.nr_scanned = 0;
            shrink_zones(m, pol, sc);
            if let Some(node) = sc.isolated_throttle.take() {
                m.begin_throttle_sleep(node, VmscanThrottle::Isolated, sc.target_mem_cgroup);
                sc.isolated_stalled = true;
                return suspend_reclaim(m, sc);
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
            if sc.priority < 10 {
                sc.may_writepage = true;
            }
            sc.priority -= 1;
            if sc.priority < 0 {
                break;
            }
            if std::mem::take(&mut sc.noprogress_throttle) {
                let node = sc.zonelist_node;
                m.begin_throttle_sleep(node, VmscanThrottle::NoProgress, sc.target_mem_cgroup);
                return suspend_reclaim(m, sc);
            }
            if m.preempt_point(pol) {
                return suspend_reclaim(m, sc);
            }
        }
        for node in 0..m.nr_nodes() as u8 {
            pol.snapshot_refaults(m, sc.target_mem_cgroup, node);
        }
        if sc.nr_reclaimed > 0 {
            return sc.nr_reclaimed;
        }
        if m.kernel.has(Behaviour::PartialMemcgWalk) && !sc.memcg_full_walk {
            sc.priority = initial_priority;
            sc.memcg_full_walk = true;
            continue;
        }
        if sc.skipped_deactivate {
            sc.priority = initial_priority;
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
            continue;
        }
        if sc.memcg_low_skipped {
            sc.priority = initial_priority;
            sc.force_deactivate = false;
            sc.memcg_low_reclaim = true;
            sc.memcg_low_skipped = false;
            continue;
        }
        return 0;
    }
}

/// The reclaimer yields (a throttle sleep, a preemption point) with its scan control saved in
/// `resume`: when it runs again it goes on where it stopped. Returns the 0 it reports now.
fn suspend_reclaim(m: &mut Machine, sc: &mut ScanControl) -> u64 {
    sc.resuming = true;
    m.resume.reclaim = Some(sc.clone());
    0
}

/// `shrink_zones`: shrink_node on every node in the zonelist's order (the reclaimer's
/// zonelist node first), then `consider_reclaim_throttle`.
fn shrink_zones(m: &mut Machine, pol: &mut dyn Policy, sc: &mut ScanControl) {
    let before = (sc.nr_reclaimed, sc.nr_scanned);
    let n = m.nr_nodes() as u8;
    let head = sc.zonelist_node;
    for node in (0..n).map(|i| (head + i) % n) {
        pol.shrink_node(m, node, sc);
        if sc.isolated_throttle.is_some() {
            return;
        }
    }
    consider_reclaim_throttle(m, pol, sc, before);
}

/// `consider_reclaim_throttle`: a pass that reclaimed more than an eighth of what it scanned
/// wakes the NOPROGRESS sleepers; global direct reclaim that reclaimed nothing at priority 1
/// sleeps on NOPROGRESS (by yielding at the next priority when the task can).
fn consider_reclaim_throttle(
    m: &mut Machine,
    pol: &mut dyn Policy,
    sc: &mut ScanControl,
    before: (u64, u64),
) {
    let (reclaimed, scanned) = (sc.nr_reclaimed - before.0, sc.nr_scanned - before.1);
    let node = sc.zonelist_node;
    if reclaimed > scanned / 8 {
        m.wake_throttle(node, VmscanThrottle::NoProgress);
        return;
    }
    if !sc.cgroup_reclaim() && sc.priority == 1 && sc.nr_reclaimed == 0 {
        let reason = VmscanThrottle::NoProgress;
        if m.throttle_sleep_suspends() && !throttle_skipped(m, pol, node, reason) {
            sc.noprogress_throttle = true;
        } else {
            reclaim_throttle(m, pol, node, reason);
        }
    }
}

/// The end of `shrink_node`: from the pass's `sc.nr` sums, flag the node PGDAT_WRITEBACK /
/// PGDAT_DIRTY and throttle kswapd on immediate-reclaim folios; mark the target lruvec
/// congested when every dirty folio was congested, and throttle direct reclaimers on it.
pub fn shrink_node_writeback_checks(
    m: &mut Machine,
    pol: &mut dyn Policy,
    node: u8,
    sc: &ScanControl,
) {
    let root = sc.root();
    if sc.is_kswapd {
        let nr = sc.nr;
        if nr.writeback > 0 && nr.writeback == nr.taken {
            m.nodes[node as usize].pgdat_writeback = true;
        }
        if nr.unqueued_dirty == nr.file_taken {
            m.nodes[node as usize].pgdat_dirty = true;
        }
        if nr.immediate > 0 {
            reclaim_throttle(m, pol, node, VmscanThrottle::Writeback);
        }
    }
    if sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
        if sc.cgroup_reclaim() {
            m.congested(root, node)[1] = true;
        }
        if sc.is_kswapd {
            m.congested(root, node)[0] = true;
        }
    }
    let flags = *m.congested(root, node);
    if !sc.is_kswapd && (flags[0] || flags[1]) {
        reclaim_throttle(m, pol, node, VmscanThrottle::Congested);
    }
}

/// What one kswapd run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KswapdRun {
    pub reclaimed: u64,
    pub balanced: bool,
}

/// A `balance_pgdat` between two priorities, where kswapd was preempted.
#[derive(Clone, Debug)]
pub struct BalancePgdat {
    sc: ScanControl,
    total: u64,
    no_cache_trim_mode: bool,
    trim_failed: bool,
}

/// How a `balance_pgdat` call ended.
#[derive(Clone, Debug)]
pub enum BalanceEnd {
    Done(KswapdRun),
    /// kswapd was preempted (`cond_resched` between priorities): it goes on from this state.
    Preempted(Box<BalancePgdat>),
}

/// `balance_pgdat` for order 0 without watermark boosting (classic-lru.md §4.3). Between two
/// priorities kswapd may be preempted (`Machine::kthread_preempt_point`); it then returns its
/// state, and the next call with that state goes on at the next priority.
pub fn balance_pgdat(
    m: &mut Machine,
    pol: &mut dyn Policy,
    node: u8,
    resume: Option<Box<BalancePgdat>>,
) -> BalanceEnd {
    let mut st = match resume {
        Some(st) => *st,
        None => {
            m.vm.add(Vm::Pageoutrun, 1);
            BalancePgdat {
                sc: kswapd_scan_control(false),
                total: 0,
                no_cache_trim_mode: false,
                trim_failed: false,
            }
        }
    };
    let mut balanced;
    loop {
        loop {
            balanced = m.pgdat_balanced(node);
            if balanced {
                break;
            }
            let sc = &mut st.sc;
            let mut raise_priority = true;
            sc.may_writepage = true;
            sc.may_swap = true;
            pol.kswapd_age_node(m, node, sc);
            if sc.priority < 10 {
                sc.may_writepage = true;
            }
            sc.nr_scanned = 0;
            let before = sc.nr_reclaimed;
            if kswapd_shrink_node(m, pol, node, sc) {
                raise_priority = false;
            }
            st.trim_failed |= sc.cache_trim_mode_failed;
            let delta = sc.nr_reclaimed - before;
            if raise_priority || delta == 0 {
                sc.priority -= 1;
            }
            if sc.priority < 1 {
                break;
            }
            if m.kthread_preempt_point() {
                return BalanceEnd::Preempted(Box::new(st));
            }
        }
        st.total += st.sc.nr_reclaimed;
        pol.snapshot_refaults(m, None, node);
        if !balanced
            && st.total == 0
            && m.kernel.has(Behaviour::CacheTrimModeFailed)
            && st.trim_failed
            && !st.no_cache_trim_mode
        {
            st.no_cache_trim_mode = true;
            st.sc = kswapd_scan_control(true);
            st.trim_failed = false;
            continue;
        }
        break;
    }
    if st.total == 0 && !balanced {
        m.nodes[node as usize].kswapd_failures += 1;
    }
    BalanceEnd::Done(KswapdRun {
        reclaimed: st.total,
        balanced,
    })
}

/// kswapd's scan control for one pass of `balance_pgdat`.
fn kswapd_scan_control(no_cache_trim_mode: bool) -> ScanControl {
    let mut sc = ScanControl::new(0, None);
    sc.is_kswapd = true;
    sc.no_cache_trim_mode = no_cache_trim_mode;
    sc
}

/// `kswapd_shrink_node`: reclaim up to the high watermark. Returns "enough was scanned".
fn kswapd_shrink_node(
    m: &mut Machine,
    pol: &mut dyn Policy,
    node: u8,
    sc: &mut ScanControl,
) -> bool {
    sc.nr_to_reclaim = m.nodes[node as usize].wmark.high.max(SWAP_CLUSTER_MAX);
    let before = sc.nr_reclaimed;
    pol.shrink_node(m, node, sc);
    let reclaimed = sc.nr_reclaimed - before;
    if m.kernel.has(Behaviour::KswapdCountsReclaimed) {
        sc.nr_scanned.max(reclaimed) >= sc.nr_to_reclaim
    } else {
        sc.nr_scanned >= sc.nr_to_reclaim
    }
}

/// `clear_pgdat_congested`, run by `prepare_kswapd_sleep` when kswapd finds the node
/// balanced: the root lruvec's congestion bits and PGDAT_DIRTY / PGDAT_WRITEBACK.
pub fn clear_pgdat_congested(m: &mut Machine, node: u8) {
    *m.congested(0, node) = [false; 2];
    let n = &mut m.nodes[node as usize];
    n.pgdat_dirty = false;
    n.pgdat_writeback = false;
}

/// Whether a vma flag set includes VM_EXEC (for folio_check_references).
pub fn is_exec(vm_flags: u32) -> bool {
    vm_flags & vm::EXEC != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::kthreads::KthreadWork;
    use crate::machine::MachineConfig;

    const MS: u64 = 1_000_000;

    /// A machine with writeback completions of node 0 queued every 100 us from 0.1 ms.
    fn machine_with_completions(n: u64) -> Machine {
        let mut m = Machine::new(MachineConfig::simple(4096)).expect("machine");
        for i in 0..n {
            m.queue_kthread_work((i + 1) * 100_000, KthreadWork::WritebackEnd(i as Pfn));
        }
        m
    }

    #[test]
    fn a_writeback_throttle_wakes_after_more_than_32_completions() {
        // 33 completions are needed (nr_written > SWAP_CLUSTER_MAX): the 33rd is at 3.3 ms.
        let mut m = machine_with_completions(1000);
        assert_eq!(writeback_throttle_sleep(&mut m, 0, 100 * MS), 33 * 100_000);
        // A second sleeper meanwhile: nr_writeback_throttled = 2, so 65 completions.
        assert_eq!(writeback_throttle_sleep(&mut m, 0, 100 * MS), 65 * 100_000);
    }

    #[test]
    fn a_writeback_throttle_sleeps_its_timeout_without_enough_completions() {
        let mut m = machine_with_completions(32);
        assert_eq!(writeback_throttle_sleep(&mut m, 0, 100 * MS), 100 * MS);
        // Completions of another node do not count.
        let mut cfg = MachineConfig::simple(4096);
        cfg.node_pages = vec![2048, 2048];
        let mut m = Machine::new(cfg).expect("machine");
        for i in 0..100u64 {
            m.queue_kthread_work((i + 1) * 100_000, KthreadWork::WritebackEnd(i as Pfn));
        }
        assert_eq!(writeback_throttle_sleep(&mut m, 1, 100 * MS), 100 * MS);
        assert_eq!(writeback_throttle_sleep(&mut m, 0, 100 * MS), 33 * 100_000);
    }

    /// `__remove_mapping` of an anon swap-cache folio whose PTE was zapped (a munmap or exit)
    /// while reclaim had it isolated: `put_swap_folio` drops the cache's reference, the last
    /// one, so the slot is freed, not left holding a shadow that no swap entry names.
    #[test]
    fn a_swap_cache_folio_unmapped_while_isolated_frees_its_slot() {
        use crate::access::{Op, PageRef, Via};
        let mut cfg = MachineConfig::simple(4096);
        cfg.swap = crate::machine::SwapConfig::Zram {
            size_pages: 64,
            compress_ratio: 3.0,
        };
        let mut m = Machine::new(cfg).expect("machine");
        let mut pol = crate::policy::classic::Classic::new(&m);
        let p = m.create_process("p", 0, 4);
        for page in 0..2 {
            m.access(&mut pol, p, PageRef::Anon { page }, Op::Write, Via::Mmap)
                .expect("fault");
        }
        m.lru_add_drain(&mut pol);
        let pfn_of = |m: &Machine, i: usize| m.procs[p as usize].vmas[0].ptes[i].pfn();
        let (gone, kept) = (pfn_of(&m, 0), pfn_of(&m, 1));
        let sc = ScanControl::new(32, None);
        for pfn in [gone, kept] {
            // Isolated, in the swap cache, unmapped by try_to_unmap, written to zram.
            pol.lruvec_del_folio(&mut m, pfn);
            m.folios[pfn as usize].clear(pg::LRU);
            m.folios[pfn as usize].set(pg::ISOLATED);
            m.nodes[0].nr_isolated[0] += 1;
            assert!(m.add_to_swap(pfn));
        }
        assert!(m.try_to_unmap(kept));
        // `gone`'s process unmaps it before try_to_unmap gets to it.
        m.munmap_anon(&mut pol, p, 0, 1);
        for pfn in [gone, kept] {
            m.folios[pfn as usize].clear(pg::DIRTY);
            assert!(remove_mapping(&mut m, &mut pol, pfn, &sc));
        }
        let kept_slot = m.procs[p as usize].vmas[0].ptes[1].swap_slot() as usize;
        assert!(matches!(m.swap.slots[kept_slot], SwapSlot::Stored(Some(_))));
        assert_eq!(
            m.swap.slots[1 - kept_slot],
            SwapSlot::Free,
            "the unnamed slot is freed"
        );
    }
}
