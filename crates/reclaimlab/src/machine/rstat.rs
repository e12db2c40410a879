//! Memcg statistics as their rstat readers see them (`lruvec_page_state`, `memcg_page_state`).
//!
//! The kernel keeps memcg statistics per CPU and folds them into the values readers see only
//! when they are flushed (`cgroup_rstat_flush`). 6.1's reclaim flushes them before reading
//! whenever more than a few hundred updates are pending (`mem_cgroup_flush_stats`), so the
//! model gives 6.1 the exact values. From 6.8 on (`memcg-stats-flush-ratelimited`) the readers
//! call `mem_cgroup_flush_stats_ratelimited`, which flushes only when the periodic
//! `flush_memcg_stats_dwork` (every `FLUSH_TIME`, 2 s) is a whole period late: they see the
//! values of the last periodic flush. The classical LRU's readers (`policy/classic.rs`) and
//! the memcg dirty domain (`mem_cgroup_wb_stats`, `machine/writeback.rs`) use this.
//!
//! [`Flushed`] gives a statistic's value at the last flush without a timer: the flushes fall
//! half a period into the run (by default) and every period after (the epoch of
//! `Machine::stats_epoch`), and a statistic remembers its value just before its first update
//! of a new epoch, which is its value at that epoch's flush.

/// The value of `N` statistics at the last periodic flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flushed<const N: usize> {
    /// The epoch of the last update (0 before any).
    epoch: u64,
    /// The values at the flush that began `epoch` (all 0 before the first update: the run
    /// starts empty, as after the flush of a memory.stat read).
    at_flush: [u64; N],
}

impl<const N: usize> Default for Flushed<N> {
    fn default() -> Self {
        Flushed {
            epoch: 0,
            at_flush: [0; N],
        }
    }
}

impl<const N: usize> Flushed<N> {
    /// Called before `current` changes at `epoch` (None: the kernel reads exact values): the
    /// first update of a new epoch records the values its flush saw.
    #[inline]
    pub fn before_update(&mut self, epoch: Option<u64>, current: &[u64; N]) {
        if let Some(e) = epoch {
            if e > self.epoch {
                self.at_flush = *current;
                self.epoch = e;
            }
        }
    }

    /// What a reader sees at `epoch` of statistics whose exact values are `current`: the
    /// values at the epoch's flush (`current` when nothing changed since it, or when the kernel
    /// reads exact values).
    #[inline]
    pub fn read(&self, epoch: Option<u64>, current: &[u64; N]) -> [u64; N] {
        match epoch {
            Some(e) if e <= self.epoch => self.at_flush,
            _ => *current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a reference that takes a snapshot at every flush (every `period` from
        /// `period / 2`, as `Machine::stats_epoch` places them): at any time, a reader sees
        /// the values the last flush took, whatever the times of the updates in between.
        #[test]
        fn a_reader_sees_what_the_last_flush_took(
            period in 1u64..50,
            steps in proptest::collection::vec((0u64..40, 0usize..2, 0u64..5, any::<bool>()), 1..80),
        ) {
            let epoch = |t: u64| (t + period / 2) / period;
            let mut now = 0u64;
            let mut cur = [0u64; 2];
            let mut f = Flushed::<2>::default();
            let mut snapshot = [0u64; 2];
            let mut last_epoch = 0u64;
            for (dt, i, delta, read) in steps {
                now += dt;
                let e = epoch(now);
                if e > last_epoch {
                    // The reference flushes before anything happens at time `now`.
                    snapshot = cur;
                    last_epoch = e;
                }
                if read {
                    prop_assert_eq!(f.read(Some(e), &cur), snapshot);
                } else {
                    f.before_update(Some(e), &cur);
                    cur[i] += delta;
                }
            }
        }
    }

    /// A reader sees the value of the last flush: updates within an epoch are invisible until
    /// the next epoch begins; without an epoch (6.1) every update is seen at once.
    #[test]
    fn a_reader_sees_the_value_at_the_last_flush() {
        let mut v = [0u64; 1];
        let mut f = Flushed::<1>::default();
        // Epoch 0 (before the first periodic flush): updates are not seen.
        for _ in 0..5 {
            f.before_update(Some(0), &v);
            v[0] += 1;
        }
        assert_eq!(f.read(Some(0), &v), [0]);
        // Epoch 1 began with the flush of 5; no update yet in it: 5 is seen.
        assert_eq!(f.read(Some(1), &v), [5]);
        f.before_update(Some(1), &v);
        v[0] += 10;
        assert_eq!(f.read(Some(1), &v), [5]);
        // Two epochs later nothing changed since: the flush saw 15.
        assert_eq!(f.read(Some(3), &v), [15]);
        // Exact readers (6.1) see every update.
        assert_eq!(f.read(None, &v), [15]);
        f.before_update(None, &v);
        v[0] = 2;
        assert_eq!(f.read(None, &v), [2]);
    }
}
