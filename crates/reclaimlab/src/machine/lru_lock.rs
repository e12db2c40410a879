//! `lruvec->lru_lock`: the spinlock that serializes every change to a lruvec's lists
//! (isolation, putback, the per-CPU batches' drains). Reclaimers and faulting tasks whose
//! clocks overlap wait for each other's holds, spinning (kernel time).
//!
//! A lock is a timeline of recent holds. Work runs in event order but each context has its own
//! clock, so a hold may be recorded "ahead" of a later-processed context's clock; an
//! acquisition takes the earliest start at or after its time whose hold overlaps none recorded
//! (first come in processing order, as the spinlock's queue is FIFO).
//!
//! A hold that follows one by another CPU is longer by `lru_lock_handoff_ns`: the lock's,
//! the list head's and the size counter's cache lines come from the previous holder's cache
//! (cache-to-cache transfers, measured by the `calibrate` example).

use super::Machine;

/// At most this many holds are remembered per lock. Holds that end before the event being
/// processed are forgotten first (no context can ask for the lock before that time:
/// `Machine::lock_floor`); the bound only stops memory from growing without limit, and a hold
/// forgotten by it lets a context far behind take the lock beside it.
const REMEMBERED_HOLDS: usize = 1 << 16;

/// Who holds a lock: the CPU of a task, or a kernel thread (whose CPU the scheduler picks
/// after the fact; on a machine with one CPU everything runs on CPU 0).
pub type Holder = u32;

/// The kernel path that takes a lruvec lock, for the accounting of waits and holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockSite {
    /// A per-CPU batch's drain (`folio_batch_move_lru`).
    Batch,
    /// An isolation batch (`isolate_lru_folios`, `scan_folios`).
    Isolate,
    /// The putback of an isolated batch (`move_folios_to_lru`).
    Putback,
    /// `lru_note_cost`.
    NoteCost,
}

/// The lock's waits and holds, by site.
#[derive(Clone, Copy, Debug, Default)]
pub struct SiteTimes {
    pub wait: crate::metrics::LockSites,
    pub hold: crate::metrics::LockSites,
}

impl SiteTimes {
    fn add(&mut self, site: LockSite, wait: u64, hold: u64) {
        for (sites, ns) in [(&mut self.wait, wait), (&mut self.hold, hold)] {
            *match site {
                LockSite::Batch => &mut sites.batch_ns,
                LockSite::Isolate => &mut sites.isolate_ns,
                LockSite::Putback => &mut sites.putback_ns,
                LockSite::NoteCost => &mut sites.note_cost_ns,
            } += ns;
        }
    }
}

/// The holder id of kswapd (any node's) on a machine with more than one CPU.
pub const KSWAPD_HOLDER: Holder = u32::MAX;
/// The holder id of the flusher on a machine with more than one CPU.
pub const FLUSHER_HOLDER: Holder = u32::MAX - 1;

/// A whole batch's share of a lock acquisition, in fixed point (`lru_lock_isolate`).
const BATCH_WEIGHT_ONE: u64 = 1 << 16;

/// A context's lock traffic in a scaled-down scenario (`lru_lock_isolate`): the share of an
/// unscaled batch its last isolated batch stands for, and the isolations and putbacks not yet
/// locked for.
#[derive(Clone, Copy, Debug)]
pub struct ScaledLockTraffic {
    weight: u32,
    isolate_acc: u64,
    isolate_nr: u64,
    putback_acc: u64,
    putback_nr: u64,
    /// The last putback took the lock (as every unscaled one does).
    putback_locked: bool,
}

impl Default for ScaledLockTraffic {
    fn default() -> Self {
        ScaledLockTraffic {
            weight: BATCH_WEIGHT_ONE as u32,
            isolate_acc: 0,
            isolate_nr: 0,
            putback_acc: 0,
            putback_nr: 0,
            putback_locked: true,
        }
    }
}

/// One hold: its start, its end and who held it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hold {
    start: u64,
    end: u64,
    holder: Holder,
}

/// Where a hold was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acquired {
    pub start: u64,
    /// The hold is longer by the handoff cost: the hold before it was by another holder.
    pub handed_off: bool,
}

/// The recent holds of one lock, sorted by start. They never overlap, so their ends are
/// sorted too.
#[derive(Clone, Debug, Default)]
pub struct LockTimeline {
    holds: std::collections::VecDeque<Hold>,
    /// Who held the lock in the last hold forgotten (it may still own the cache lines).
    forgotten_holder: Option<Holder>,
}

impl LockTimeline {
    /// Takes the lock at the earliest time `>= at` for `hold` ns, forgetting holds that end by
    /// `floor` first; returns the start. Who holds it is not recorded (a lock whose handoffs
    /// cost nothing extra).
    pub fn acquire(&mut self, at: u64, hold: u64, floor: u64) -> u64 {
        self.acquire_by(at, hold, 0, 0, floor).start
    }

    /// Takes the lock at the earliest time `>= at` for `holder`, for `hold` ns, or `hold +
    /// handoff` ns when the hold it follows was by another holder (the lock's cache lines
    /// move from that holder's cache). Holds ending at or before `floor`, a time before which
    /// no context can ask any more, are forgotten first.
    pub fn acquire_by(
        &mut self,
        at: u64,
        hold: u64,
        holder: Holder,
        handoff: u64,
        floor: u64,
    ) -> Acquired {
        while self.holds.front().is_some_and(|h| h.end <= floor) {
            self.forget_oldest();
        }
        // The first hold ending after `at`: every hold before it ends by `at`.
        let mut pos = self.holds.partition_point(|h| h.end <= at);
        let mut start = at;
        loop {
            let before = match pos {
                0 => self.forgotten_holder,
                _ => self.holds.get(pos - 1).map(|h| h.holder),
            };
            let handed_off = handoff > 0 && before.is_some_and(|b| b != holder);
            let len = hold + if handed_off { handoff } else { 0 };
            match self.holds.get(pos) {
                Some(h) if h.start < start + len.max(1) => {
                    start = start.max(h.end);
                    pos += 1;
                }
                _ => {
                    let end = start + len;
                    self.holds.insert(pos, Hold { start, end, holder });
                    if self.holds.len() > REMEMBERED_HOLDS {
                        self.forget_oldest();
                    }
                    return Acquired { start, handed_off };
                }
            }
        }
    }

    fn forget_oldest(&mut self) {
        if let Some(h) = self.holds.pop_front() {
            self.forgotten_holder = Some(h.holder);
        }
    }

    /// The start of the first remembered hold that starts at or after `t`.
    pub fn first_hold_from(&self, t: u64) -> Option<u64> {
        self.holds.iter().map(|h| h.start).find(|&s| s >= t)
    }

    /// The end of the hold covering `t`, if one does (a `down_read_trylock` at `t` of a
    /// rwsem whose writers this timeline records fails).
    pub fn held_at(&self, t: u64) -> Option<u64> {
        let pos = self.holds.partition_point(|h| h.end <= t);
        self.holds.get(pos).filter(|h| h.start <= t).map(|h| h.end)
    }
}

impl Machine {
    /// `spin_lock_irq(&lruvec->lru_lock)` for work on `nr` folios of the (memcg, node) lruvec:
    /// the current context spins (kernel time) until the lock is free, then holds it for
    /// `nr × lru_lock_hold_ns` (time its callers already charge), plus
    /// `lru_lock_handoff_ns` (charged here) when another CPU held it last.
    pub fn lru_lock(&mut self, memcg: u16, node: u8, nr: u64) {
        let hold = self.cfg.cost.lru_lock_hold_ns;
        self.lru_lock_holding(LockSite::Batch, memcg, node, nr, hold);
    }

    /// `lru_lock` for `nr` folios held `per_folio` each, by `site`.
    fn lru_lock_holding(&mut self, site: LockSite, memcg: u16, node: u8, nr: u64, per_folio: u64) {
        if nr == 0 {
            return;
        }
        let i = super::lruvec_index(self.nodes.len(), memcg, node);
        if self.lru_locks.len() <= i {
            self.lru_locks.resize(i + 1, LockTimeline::default());
        }
        let now = self.now();
        let hold = nr * per_folio;
        let (holder, handoff) = (self.lock_holder(), self.cfg.cost.lru_lock_handoff_ns);
        let floor = self.lock_floor;
        let got = self.lru_locks[i].acquire_by(now, hold, holder, handoff, floor);
        let wait = got.start - now;
        if wait > 0 {
            self.spend_sys(wait);
            self.lru_lock_wait_ns += wait;
        }
        let held = if got.handed_off {
            self.spend_sys(handoff);
            self.lru_lock_handoffs += 1;
            hold + handoff
        } else {
            hold
        };
        self.lru_lock_sites.add(site, wait, held);
    }

    /// The lock of an isolation batch (`isolate_lru_folios`, MGLRU's `scan_folios`) of `nr`
    /// folios. `cut_by_budget` is the batch's limit when the scan budget (`size >> priority`)
    /// ended it short of that limit (`SWAP_CLUSTER_MAX`, `MIN_LRU_BATCH`). In a scaled-down
    /// scenario the budget shrinks with the memory but the unscaled machine's batch would
    /// have been `min(nr × scale_down, limit)` folios: the lock is then taken once per that
    /// many folios of this CPU's batches, for all of them (as `lock_lru_add` does for the
    /// lru_add batches), and so is the putback's that follows. Lock traffic is a time cost,
    /// which scaling keeps.
    pub fn lru_lock_isolate(&mut self, memcg: u16, node: u8, nr: u64, cut_by_budget: Option<u64>) {
        let weight = match (self.cfg.lru_lock_scale_down, cut_by_budget) {
            (Some(down), Some(limit)) if nr > 0 => {
                let full = (nr * down as u64).min(limit).max(nr);
                (nr * BATCH_WEIGHT_ONE / full) as u32
            }
            _ => BATCH_WEIGHT_ONE as u32,
        };
        let slot = self.lock_slot();
        self.scaled_lock[slot].weight = weight;
        self.lru_lock_weighted(memcg, node, nr, slot, false);
    }

    /// The lock of the putback (`move_folios_to_lru`) of the current context's last isolated
    /// batch: taken as often as that batch's (`lru_lock_isolate`).
    pub fn lru_lock_putback(&mut self, memcg: u16, node: u8, nr: u64) {
        let slot = self.lock_slot();
        self.lru_lock_weighted(memcg, node, nr, slot, true);
    }

    fn lru_lock_weighted(&mut self, memcg: u16, node: u8, nr: u64, slot: usize, putback: bool) {
        let s = &mut self.scaled_lock[slot];
        if putback {
            s.putback_locked = s.weight as u64 == BATCH_WEIGHT_ONE;
        }
        // An isolation's folios come cold off the list's tail; a putback's were just touched.
        let (site, per_folio) = if putback {
            (LockSite::Putback, self.cfg.cost.lru_lock_hold_ns)
        } else {
            (LockSite::Isolate, self.cfg.cost.lru_isolate_hold_ns)
        };
        if s.weight as u64 == BATCH_WEIGHT_ONE {
            return self.lru_lock_holding(site, memcg, node, nr, per_folio);
        }
        let (acc, pending) = if putback {
            (&mut s.putback_acc, &mut s.putback_nr)
        } else {
            (&mut s.isolate_acc, &mut s.isolate_nr)
        };
        *acc += s.weight as u64;
        *pending += nr;
        if *acc >= BATCH_WEIGHT_ONE {
            *acc -= BATCH_WEIGHT_ONE;
            let nr = std::mem::take(pending);
            s.putback_locked |= putback;
            self.lru_lock_holding(site, memcg, node, nr, per_folio);
        }
    }

    /// `lru_note_cost` of 6.1 and 6.12 (and `lru_note_cost_folio`/`_refault` of a workingset
    /// refault): the lruvec of `memcg` and of each ancestor up to the root are locked in turn,
    /// each for one short update of its cost, whatever the cost. After a reclaim batch
    /// (`after_putback`), 6.x's `shrink_inactive_list` and `shrink_active_list` have released
    /// the batch's lruvec lock (`spin_unlock_irq`) and take it again, behind any CPU that
    /// queued for it meanwhile; v6.17's `lru_note_cost_unlock_irq` (`keeps_lock`,
    /// `classic:7.x`) updates it before releasing it, so only the ancestors are taken (and a
    /// zero cost skips them too, `note-cost-skips-zero`: `Classic::lru_note_cost` then
    /// returns before calling this). After a batch, the locks are taken as often as that
    /// putback's (`lru_lock_putback`'s scaled traffic); a refault takes every one, every time.
    pub fn lru_lock_note_cost(
        &mut self,
        memcg: u16,
        node: u8,
        after_putback: bool,
        keeps_lock: bool,
    ) {
        let mut cur = Some(memcg);
        if after_putback {
            if !self.scaled_lock[self.lock_slot()].putback_locked {
                return;
            }
            if keeps_lock {
                cur = self.memcgs[memcg as usize].parent;
            }
        }
        let hold = self.cfg.cost.lru_lock_hold_ns;
        while let Some(c) = cur {
            self.lru_lock_holding(LockSite::NoteCost, c, node, 1, hold);
            cur = self.memcgs[c as usize].parent;
        }
    }

    /// The per-context slot of the scaled lock traffic: a task's CPU, then kswapd, then the
    /// flusher.
    fn lock_slot(&self) -> usize {
        let cpus = self.scaled_lock.len() - 2;
        if self.ctx.is_kswapd {
            cpus
        } else if self.ctx.is_flusher {
            cpus + 1
        } else {
            (self.ctx.cpu as usize).min(cpus - 1)
        }
    }

    /// Who the current context is to a lock's cache lines: its CPU, or one id per kind of
    /// kernel thread on a machine with more than one CPU (where the scheduler places a
    /// kthread's bursts after the fact).
    fn lock_holder(&self) -> Holder {
        if self.cfg.cpus <= 1 {
            0
        } else if self.ctx.is_kswapd {
            KSWAPD_HOLDER
        } else if self.ctx.is_flusher {
            FLUSHER_HOLDER
        } else {
            self.ctx.cpu
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_holds_wait_and_gaps_are_used() {
        let mut l = LockTimeline::default();
        assert_eq!(l.acquire(100, 50, 0), 100);
        // Inside the first hold: waits for its end.
        assert_eq!(l.acquire(120, 10, 0), 150);
        // A hold recorded ahead of a later caller's clock: it waits past both.
        assert_eq!(l.acquire(140, 20, 0), 160);
        // Fits in the gap before a hold recorded later in time.
        assert_eq!(l.acquire(1000, 10, 0), 1000);
        assert_eq!(l.acquire(500, 10, 0), 500);
        // Three contenders at once queue up: each waits for all before it.
        let mut q = LockTimeline::default();
        let starts: Vec<u64> = (0..3).map(|_| q.acquire(0, 100, 0)).collect();
        assert_eq!(starts, vec![0, 100, 200]);
    }

    #[test]
    fn a_hold_after_another_holders_is_longer_by_the_handoff() {
        let mut l = LockTimeline::default();
        // The first hold follows nobody: no transfer.
        let a = l.acquire_by(0, 100, 0, 30, 0);
        assert_eq!((a.start, a.handed_off), (0, false));
        // The same holder again: its cache has the lines.
        let b = l.acquire_by(200, 100, 0, 30, 0);
        assert_eq!((b.start, b.handed_off), (200, false));
        // Another CPU takes it after CPU 0, even long after: the lines are in CPU 0's cache.
        let c = l.acquire_by(1000, 100, 1, 30, 0);
        assert_eq!((c.start, c.handed_off), (1000, true));
        assert_eq!(l.held_at(1129), Some(1130));
        // A contender queued behind it waits for the longer hold, and pays the handoff too.
        let d = l.acquire_by(1010, 100, 0, 30, 0);
        assert_eq!((d.start, d.handed_off), (1130, true));
        // A gap too short for a hold plus its handoff is skipped.
        let mut g = LockTimeline::default();
        g.acquire_by(0, 100, 0, 30, 0);
        g.acquire_by(220, 100, 0, 30, 0);
        let e = g.acquire_by(100, 100, 1, 30, 0);
        assert_eq!((e.start, e.handed_off), (320, true));
    }

    #[test]
    fn a_time_inside_a_hold_finds_it_held_until_its_end() {
        let mut l = LockTimeline::default();
        l.acquire(100, 50, 0);
        assert_eq!(l.held_at(99), None);
        assert_eq!(l.held_at(100), Some(150));
        assert_eq!(l.held_at(149), Some(150));
        assert_eq!(l.held_at(150), None);
    }

    /// A machine of `cpus` CPUs, scaled down by `down` if any.
    fn machine(cpus: u32, down: Option<u32>) -> Machine {
        let mut cfg = crate::machine::MachineConfig::simple(4096);
        cfg.cpus = cpus;
        cfg.lru_lock_scale_down = down;
        Machine::new(cfg).expect("machine")
    }

    /// `nr` folios isolated and put back `rounds` times, each batch cut by the budget at 32, by
    /// CPUs 0 and 1 in turn; returns the handoffs: one per batch whose locks were taken, but
    /// the first (a putback follows its own CPU's isolation).
    fn isolate_rounds(m: &mut Machine, rounds: u64, nr: u64) -> u64 {
        for i in 0..rounds {
            m.ctx.cpu = (i % 2) as u32;
            m.ctx.now = i * 100_000;
            m.lru_lock_isolate(0, 0, nr, Some(32));
            m.lru_lock_putback(0, 0, nr);
        }
        m.lru_lock_handoffs
    }

    #[test]
    fn a_scaled_down_budget_cut_batch_locks_as_the_unscaled_batch_would() {
        // Unscaled: every batch of 4 takes the lock to isolate and to put back.
        let mut m = machine(2, None);
        assert_eq!(isolate_rounds(&mut m, 64, 4), 64 - 1);
        // At scale 1/8 the unscaled batch is 32: one lock per 8 batches of a CPU, each way.
        let mut m = machine(2, Some(8));
        assert_eq!(isolate_rounds(&mut m, 64, 4), 64 / 8 - 1);
        // At scale 1/4 the unscaled batch is 16: one per 4.
        let mut m = machine(2, Some(4));
        assert_eq!(isolate_rounds(&mut m, 64, 4), 64 / 4 - 1);
        // A batch that was not cut by the budget takes it every time, scaled or not.
        let mut m = machine(2, Some(8));
        for i in 0..8 {
            m.ctx.cpu = (i % 2) as u32;
            m.ctx.now = i * 100_000;
            m.lru_lock_isolate(0, 0, 32, None);
        }
        assert_eq!(m.lru_lock_handoffs, 7);
    }

    /// An isolation holds the lock `lru_isolate_hold_ns` per folio (each a cold load off the
    /// list's tail), its putback `lru_lock_hold_ns` per folio (folios just touched): a second
    /// CPU asking meanwhile waits for exactly that long.
    #[test]
    fn an_isolation_holds_the_lock_per_cold_folio_and_its_putback_per_hot_one() {
        let mut m = machine(2, None);
        let c = m.cfg.cost.clone();
        assert!(c.lru_isolate_hold_ns > c.lru_lock_hold_ns);
        let wait_behind = |m: &mut Machine, isolate: bool| {
            m.ctx.cpu = 0;
            m.ctx.now = 0;
            if isolate {
                m.lru_lock_isolate(0, 0, 32, None);
            } else {
                m.lru_lock_putback(0, 0, 32);
            }
            m.ctx.cpu = 1;
            m.ctx.now = 1;
            let before = m.lru_lock_wait_ns;
            m.lru_lock(0, 0, 1);
            m.lru_lock_wait_ns - before
        };
        assert_eq!(wait_behind(&mut m, true), 32 * c.lru_isolate_hold_ns - 1);
        let mut m = machine(2, None);
        assert_eq!(wait_behind(&mut m, false), 32 * c.lru_lock_hold_ns - 1);
    }

    /// 6.x's `shrink_inactive_list` releases the lruvec lock after its putback and takes it
    /// again in `lru_note_cost`: a CPU that queued during the putback goes first, and the
    /// reclaimer waits for its hold. 7.x's `lru_note_cost_unlock_irq` updates the cost before
    /// releasing the lock: no second acquisition, no wait.
    #[test]
    fn note_cost_after_a_putback_queues_again_on_6x_and_keeps_the_lock_on_7x() {
        for keeps_lock in [false, true] {
            let mut m = machine(2, None);
            let c = m.cfg.cost.clone();
            m.ctx.cpu = 0;
            m.ctx.now = 0;
            m.lru_lock_putback(0, 0, 32);
            let putback_end = 32 * c.lru_lock_hold_ns;
            // CPU 1 asks while the putback holds it: it goes next.
            m.ctx.cpu = 1;
            m.ctx.now = 1;
            m.lru_lock(0, 0, 1);
            let other_end = putback_end + c.lru_lock_hold_ns + c.lru_lock_handoff_ns;
            // CPU 0 notes the batch's cost when its putback ends (its own clock).
            m.ctx.cpu = 0;
            m.ctx.now = putback_end;
            m.ctx.elapsed = 0;
            let (wait, handoffs) = (m.lru_lock_wait_ns, m.lru_lock_handoffs);
            m.lru_lock_note_cost(0, 0, true, keeps_lock);
            let waited = m.lru_lock_wait_ns - wait;
            if keeps_lock {
                assert_eq!((waited, m.lru_lock_handoffs - handoffs), (0, 0));
                assert_eq!(m.lru_lock_sites.hold.note_cost_ns, 0);
            } else {
                assert_eq!(waited, other_end - putback_end, "behind CPU 1's hold");
                assert_eq!(m.lru_lock_sites.wait.note_cost_ns, waited);
                assert_eq!(m.lru_lock_sites.wait.batch_ns, putback_end - 1, "CPU 1's");
                let note_hold = c.lru_lock_hold_ns + c.lru_lock_handoff_ns;
                assert_eq!(m.lru_lock_sites.hold.note_cost_ns, note_hold);
                assert_eq!(m.lru_lock_handoffs - handoffs, 1, "CPU 1 held it last");
            }
        }
    }

    #[test]
    fn holds_before_the_floor_are_forgotten_and_no_other_hold_is() {
        let mut l = LockTimeline::default();
        for i in 0..1000 {
            l.acquire_by(i * 10, 5, (i % 2) as Holder, 0, 0);
        }
        // Without a floor every hold is remembered: a context far behind still waits.
        assert_eq!(l.holds.len(), 1000);
        assert_eq!(l.acquire(0, 5, 0), 5);
        // The floor forgets what ends by it; the handoff still sees who held it last.
        let got = l.acquire_by(9_000, 5, 2, 30, 8_000);
        assert!(l.holds.iter().all(|h| h.end > 8_000));
        assert_eq!(l.holds.len(), 1000 - 800 + 1);
        assert!(got.handed_off);
        let mut m = LockTimeline::default();
        m.acquire_by(0, 5, 1, 30, 0);
        let after = m.acquire_by(100, 5, 2, 30, 50);
        assert!(m.holds.len() == 1 && after.handed_off);
    }

    #[test]
    fn a_busy_lock_makes_a_context_far_behind_wait() {
        // 200 holds back to back by other CPUs: a context asking at the start waits for all
        // of them (the 64-hold memory of before let it in beside the forgotten ones).
        let mut l = LockTimeline::default();
        for i in 0..200 {
            l.acquire_by(i * 100, 100, 1 + (i % 2) as Holder, 0, 0);
        }
        assert_eq!(l.acquire_by(0, 50, 0, 0, 0).start, 200 * 100);
    }
}
