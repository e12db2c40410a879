//! Key → slot map for the textbook caches: open addressing with linear probing and
//! backward-shift deletion (Knuth, TAOCP vol. 3, 6.4 Algorithm R), so removals leave no
//! tombstones.
//!
//! Why not std's `HashMap`: its tombstones make it rehash now and then under steady
//! insert/remove churn, and whether that rehash reallocates depends on its internals. Here the
//! bucket array only grows when the number of keys exceeds its previous maximum, which for a
//! cache means during warm-up only; after that, lookups, inserts and removals never allocate.
//! The table is only ever probed, never iterated, so its layout cannot leak into results; the
//! hash (splitmix64) is fixed, so runs are reproducible.

use super::list::NIL;

/// One bucket: `slot == NIL` marks it empty.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    key: u64,
    slot: usize,
}

const EMPTY: Bucket = Bucket { key: 0, slot: NIL };

/// Size of one bucket.
pub(crate) const BUCKET_BYTES: usize = std::mem::size_of::<Bucket>();

/// Smallest bucket array allocated.
const MIN_BUCKETS: usize = 16;

/// Open-addressing `u64 → usize` map kept at most half full.
#[derive(Clone, Debug, Default)]
pub(crate) struct SlotTable {
    buckets: Vec<Bucket>,
    len: usize,
}

impl SlotTable {
    /// An empty table; nothing allocated until the first insert.
    pub fn new() -> Self {
        SlotTable::default()
    }

    /// Number of keys.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Size of the bucket array (changes only when the table grows).
    #[cfg(test)]
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// The slot stored for `key`.
    pub fn get(&self, key: u64) -> Option<usize> {
        self.find(key).map(|i| self.buckets[i].slot)
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: u64) -> bool {
        self.find(key).is_some()
    }

    /// Store `key → slot`; `key` must be absent and `slot` not [`NIL`].
    pub fn insert(&mut self, key: u64, slot: usize) {
        debug_assert!(slot != NIL && !self.contains(key));
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
        }
        self.place(Bucket { key, slot });
        self.len += 1;
    }

    /// Remove `key`, returning its slot.
    pub fn remove(&mut self, key: u64) -> Option<usize> {
        let mut hole = self.find(key)?;
        let slot = self.buckets[hole].slot;
        self.buckets[hole] = EMPTY;
        self.len -= 1;
        // Backward shift: pull later members of the probe run into the hole when their home
        // bucket does not lie cyclically in (hole, j].
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let b = self.buckets[j];
            if b.slot == NIL {
                return Some(slot);
            }
            let home = self.home(b.key);
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                self.buckets[hole] = b;
                self.buckets[j] = EMPTY;
                hole = j;
            }
        }
    }

    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    fn home(&self, key: u64) -> usize {
        splitmix64(key) as usize & self.mask()
    }

    /// Bucket index holding `key`.
    fn find(&self, key: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            let b = self.buckets[i];
            if b.slot == NIL {
                return None;
            }
            if b.key == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Put `b` in the first free bucket of its probe run (there is one: load <= 1/2).
    fn place(&mut self, b: Bucket) {
        let mask = self.mask();
        let mut i = self.home(b.key);
        while self.buckets[i].slot != NIL {
            i = (i + 1) & mask;
        }
        self.buckets[i] = b;
    }

    /// Double the bucket array (warm-up only) and reinsert every key.
    fn grow(&mut self) {
        let n = (self.buckets.len() * 2).max(MIN_BUCKETS);
        let old = std::mem::replace(&mut self.buckets, vec![EMPTY; n]);
        for b in old.into_iter().filter(|b| b.slot != NIL) {
            self.place(b);
        }
    }
}

pub(crate) use crate::hash::splitmix64;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Random inserts and removals agree with std's HashMap; small key ranges force long
        /// probe runs and wrap-around so backward shifting is exercised.
        #[test]
        fn agrees_with_hashmap(ops in prop::collection::vec((any::<bool>(), 0u64..64), 0..600)) {
            let mut t = SlotTable::new();
            let mut m: HashMap<u64, usize> = HashMap::new();
            for (i, (ins, k)) in ops.into_iter().enumerate() {
                if ins && !m.contains_key(&k) {
                    t.insert(k, i);
                    m.insert(k, i);
                } else if !ins {
                    prop_assert_eq!(t.remove(k), m.remove(&k));
                }
                prop_assert_eq!(t.len(), m.len());
                for probe in 0..64 {
                    prop_assert_eq!(t.get(probe), m.get(&probe).copied());
                }
            }
        }
    }

    #[test]
    fn removal_keeps_colliding_keys_reachable() {
        // Keys sharing a home bucket: remove the first, the rest must still be found.
        let mut t = SlotTable::new();
        t.insert(0, 0); // allocate
        let home0 = t.home(0);
        let same: Vec<u64> = (1..100_000u64)
            .filter(|&k| t.home(k) == home0)
            .take(4)
            .collect();
        for (i, &k) in same.iter().enumerate() {
            t.insert(k, i + 1);
        }
        assert_eq!(t.remove(0), Some(0));
        for (i, &k) in same.iter().enumerate() {
            assert_eq!(t.get(k), Some(i + 1), "key {k}");
        }
        assert_eq!(t.remove(0), None);
    }
}
