//! `lruvec->lru_lock`: the spinlock that serializes every change to a lruvec's lists
//! (isolation, putback, the per-CPU batches' drains). Reclaimers and faulting tasks whose
//! clocks overlap wait for each other's holds, spinning (kernel time).
//!
//! A lock is a timeline of recent holds. Work runs in event order but each context has its own
//! clock, so a hold may be recorded "ahead" of a later-processed context's clock; an
//! acquisition takes the earliest start at or after its time whose hold overlaps none recorded
//! (first come in processing order, as the spinlock's queue is FIFO).

use super::Machine;

/// Holds remembered per lruvec: older ones are behind every clock in practice (a context
/// processed later than 64 holds of the same lruvec).
const REMEMBERED_HOLDS: usize = 64;

/// The recent holds of one lruvec's lock, sorted by start.
#[derive(Clone, Debug, Default)]
pub struct LockTimeline {
    holds: std::collections::VecDeque<(u64, u64)>,
}

impl LockTimeline {
    /// Takes the lock at the earliest time `>= at` for `hold` ns; returns the start.
    pub fn acquire(&mut self, at: u64, hold: u64) -> u64 {
        let mut start = at;
        while let Some(&(_, end)) = self
            .holds
            .iter()
            .find(|&&(s, e)| s < start + hold.max(1) && start < e)
        {
            start = end;
        }
        let pos = self.holds.partition_point(|&(s, _)| s <= start);
        self.holds.insert(pos, (start, start + hold));
        if self.holds.len() > REMEMBERED_HOLDS {
            self.holds.pop_front();
        }
        start
    }

    /// The end of the hold covering `t`, if one does (a `down_read_trylock` at `t` of a
    /// rwsem whose writers this timeline records fails).
    pub fn held_at(&self, t: u64) -> Option<u64> {
        self.holds
            .iter()
            .find(|&&(s, e)| s <= t && t < e)
            .map(|&(_, e)| e)
    }
}

impl Machine {
    /// `spin_lock_irq(&lruvec->lru_lock)` for work on `nr` folios of the (memcg, node) lruvec:
    /// the current context spins (kernel time) until the lock is free, then holds it for
    /// `nr × lru_lock_hold_ns` (time its callers already charge).
    pub fn lru_lock(&mut self, memcg: u16, node: u8, nr: u64) {
        if nr == 0 {
            return;
        }
        let i = super::lruvec_index(self.nodes.len(), memcg, node);
        if self.lru_locks.len() <= i {
            self.lru_locks.resize(i + 1, LockTimeline::default());
        }
        let now = self.now();
        let hold = nr * self.cfg.cost.lru_lock_hold_ns;
        let start = self.lru_locks[i].acquire(now, hold);
        if start > now {
            self.spend_sys(start - now);
            self.lru_lock_wait_ns += start - now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_holds_wait_and_gaps_are_used() {
        let mut l = LockTimeline::default();
        assert_eq!(l.acquire(100, 50), 100);
        // Inside the first hold: waits for its end.
        assert_eq!(l.acquire(120, 10), 150);
        // A hold recorded ahead of a later caller's clock: it waits past both.
        assert_eq!(l.acquire(140, 20), 160);
        // Fits in the gap before a hold recorded later in time.
        assert_eq!(l.acquire(1000, 10), 1000);
        assert_eq!(l.acquire(500, 10), 500);
        // Three contenders at once queue up: each waits for all before it.
        let mut q = LockTimeline::default();
        let starts: Vec<u64> = (0..3).map(|_| q.acquire(0, 100)).collect();
        assert_eq!(starts, vec![0, 100, 200]);
    }

    #[test]
    fn a_time_inside_a_hold_finds_it_held_until_its_end() {
        let mut l = LockTimeline::default();
        l.acquire(100, 50);
        assert_eq!(l.held_at(99), None);
        assert_eq!(l.held_at(100), Some(150));
        assert_eq!(l.held_at(149), Some(150));
        assert_eq!(l.held_at(150), None);
    }

    #[test]
    fn the_timeline_stays_bounded() {
        let mut l = LockTimeline::default();
        for i in 0..1000 {
            l.acquire(i * 10, 5);
        }
        assert_eq!(l.holds.len(), REMEMBERED_HOLDS);
    }
}
