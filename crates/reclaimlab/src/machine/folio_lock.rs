//! PG_locked over time: a buffered write holds its folio's lock from `write_begin` through
//! the copy to `write_end` (`generic_perform_write`: `__filemap_get_folio` with FGP_LOCK, or
//! `shmem_write_begin`; `copy_folio_from_iter_atomic`; the unlock in `write_end`), and
//! reclaim's `folio_trylock` fails meanwhile. A task's write runs in event order, but the
//! reclaimer that meets its folio may be processed later with its clock inside the hold, so
//! the hold is kept as a time interval, like the lruvec lock's (`lru_lock.rs`).
//!
//! The holds are kept until they end before the event being processed (`Machine::lock_floor`,
//! as the lruvec lock's): no context's clock is behind that, so nothing forgotten could still
//! be met. With the latest end kept too, a trylock at or after it finds every folio unlocked
//! without looking.
//!
//! Where reclaim meets it: `folio_trylock` in `shrink_folio_list` (the folio is kept) and in
//! `folio_referenced` of a mapped file folio from `shrink_active_list` (one reference, no
//! walk). MGLRU's `folio_test_locked` in 6.1's `sort_folio` and in 6.1/6.12's `evict_folios`
//! putback needs no check of its own: a folio a write holds is dirty for every reclaimer
//! processed after the write (the write dirties it in the same step), and those branches
//! bump or activate dirty folios too.
//!
//! Simplified (docs/model.md §1, "A buffered write holds its folio's lock"): only buffered
//! writes record holds (not reclaim's own, the flusher's, nor a read's lock of a folio under
//! I/O), so a writer never waits for a reclaimer that has its folio locked; writers of one
//! file wait for each other only on the same folio (ext4 serializes them on the inode's
//! i_rwsem for the whole write, which the model does not have).

use super::{Machine, Owner, Pfn};

/// At most this many holds are remembered. Holds that end before the event being processed
/// are forgotten first (`Machine::lock_floor`); the bound only stops memory from growing
/// without limit (the oldest go), as `lru_lock.rs`'s does.
const REMEMBERED_FOLIO_HOLDS: usize = 1 << 16;

/// One hold: the folio (its frame and owner: a frame freed and reused is another folio), and
/// the interval `[start, end)` it is locked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hold {
    pfn: Pfn,
    owner: Owner,
    start: u64,
    end: u64,
}

/// The folio lock holds of buffered writes that may still be met.
#[derive(Clone, Debug, Default)]
pub struct FolioLocks {
    /// In the order recorded.
    holds: std::collections::VecDeque<Hold>,
    /// How many holds the last forgetting kept: the next one waits until there are twice as
    /// many (amortized constant time per hold).
    kept: usize,
    /// When the latest recorded hold ends.
    end: u64,
}

impl FolioLocks {
    /// Records that `pfn` (of `owner`) is locked during `[start, end)`; holds that end before
    /// `floor` are forgotten.
    pub fn hold(&mut self, pfn: Pfn, owner: Owner, start: u64, end: u64, floor: u64) {
        if self.holds.len() >= (2 * self.kept).max(64) {
            self.holds.retain(|h| h.end > floor);
            self.kept = self.holds.len();
        }
        if self.holds.len() >= REMEMBERED_FOLIO_HOLDS {
            self.holds.pop_front();
        }
        self.holds.push_back(Hold {
            pfn,
            owner,
            start,
            end,
        });
        self.end = self.end.max(end);
    }

    /// The latest end of a hold of `pfn` (still `owner`'s) overlapping `[start, end)`.
    pub fn overlapping(&self, pfn: Pfn, owner: Owner, start: u64, end: u64) -> Option<u64> {
        if start >= self.end {
            return None;
        }
        self.holds
            .iter()
            .filter(|h| h.pfn == pfn && h.owner == owner && h.start < end && start < h.end)
            .map(|h| h.end)
            .max()
    }

    /// The end of a hold of `pfn` (still `owner`'s) covering time `t`, if one does.
    pub fn held_at(&self, pfn: Pfn, owner: Owner, t: u64) -> Option<u64> {
        self.overlapping(pfn, owner, t, t.saturating_add(1))
    }
}

impl Machine {
    /// `folio_trylock` by reclaim at the current context's clock: whether it fails because a
    /// buffered write holds the folio's lock now.
    pub fn folio_trylock_fails(&mut self, pfn: Pfn) -> bool {
        let now = self.now();
        if now >= self.folio_locks.end {
            return false;
        }
        let owner = self.folios[pfn as usize].owner();
        let held = self.folio_locks.held_at(pfn, owner, now).is_some();
        self.folio_trylock_failed += held as u64;
        held
    }

    /// A buffered write's folio lock, held from `write_begin` (`folio_lock`) through the copy
    /// (`copy_folio_from_iter_atomic`) to `write_end`: the last `write_folio_lock_ns` of the
    /// write's system call, whose time (`fd_syscall_ns`, entry, lookup and copy) the model
    /// spends at its start, so the hold ends now. If another write holds the folio then, this
    /// one sleeps until it is released (`folio_lock`, an I/O wait) and holds it after that.
    pub fn folio_locked_for_copy(&mut self, pfn: Pfn) {
        let hold = self
            .cfg
            .cost
            .write_folio_lock_ns
            .min(self.cfg.cost.fd_syscall_ns);
        if hold == 0 {
            return;
        }
        let owner = self.folios[pfn as usize].owner();
        let now = self.now();
        let mut start = now.saturating_sub(hold);
        while let Some(end) = self
            .folio_locks
            .overlapping(pfn, owner, start, start + hold)
        {
            start = end;
        }
        // folio_wait_bit_common sleeps in io_schedule: I/O wait.
        if start + hold > now {
            self.spend_iowait(start + hold - now);
        }
        let floor = self.lock_floor;
        self.folio_locks
            .hold(pfn, owner, start, start + hold, floor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_covers_its_interval_of_its_folio_only() {
        let mut l = FolioLocks::default();
        let owner = Owner::File { file: 0, index: 3 };
        l.hold(7, owner, 100, 150, 0);
        assert_eq!(l.held_at(7, owner, 99), None);
        assert_eq!(l.held_at(7, owner, 100), Some(150));
        assert_eq!(l.held_at(7, owner, 149), Some(150));
        assert_eq!(l.held_at(7, owner, 150), None);
        assert_eq!(l.held_at(8, owner, 120), None);
        // The frame freed and reused by another folio is not locked by the old hold.
        let other = Owner::File { file: 0, index: 4 };
        assert_eq!(l.held_at(7, other, 120), None);
        assert_eq!(l.overlapping(7, owner, 140, 200), Some(150));
        assert_eq!(l.overlapping(7, owner, 150, 200), None);
        assert_eq!(l.overlapping(7, owner, 50, 101), Some(150));
    }

    #[test]
    fn a_hold_is_forgotten_only_once_it_ends_before_the_floor() {
        let mut l = FolioLocks::default();
        let owner = Owner::File { file: 1, index: 0 };
        // A long hold, then many short ones: the long one is remembered while it may be met
        // (it ends after the floor), however many holds come after it.
        l.hold(1, owner, 0, 1_000_000, 0);
        for i in 0..1000u64 {
            l.hold(2, owner, 10 + i, 11 + i, 10 + i);
        }
        assert_eq!(l.held_at(1, owner, 500), Some(1_000_000));
        assert!(
            l.holds.len() < 1000,
            "ended holds are forgotten: {}",
            l.holds.len()
        );
        // Once the floor passes its end it goes too.
        for i in 0..1000u64 {
            l.hold(2, owner, 2_000_000 + i, 2_000_001 + i, 2_000_000 + i);
        }
        assert!(l.holds.iter().all(|h| h.pfn == 2));
    }
}
