//! Textbook reference caches (LRU, CLOCK, FIFO) with libCacheSim semantics.
//!
//! These are *not* models of the kernel: they are the plain object caches that cache research
//! compares against, so reclaimlab's kernel policies can be put next to a number everybody can
//! reproduce with libCacheSim's `cachesim`. Semantics, following libCacheSim's
//! `cache_get_base` (libCacheSim/cache/cache.c):
//!
//! * every request is a lookup, and counts in [`CacheStats::requests`];
//! * a miss is always inserted (no admission policy), evicting first while the cache is full;
//!   an object larger than the whole cache cannot be inserted, so with capacity 0 everything
//!   misses and nothing is stored;
//! * cold (compulsory) misses count as misses, so the miss ratio is `misses / requests`.
//!
//! Policies:
//!
//! * [`TextbookKind::Lru`]: a hit moves the object to the MRU end; evict the LRU end.
//! * [`TextbookKind::Fifo`]: a hit changes nothing; evict in insertion order.
//! * [`TextbookKind::Clock`]: libCacheSim's "Clock" with its default `n-bit-counter=1`, i.e.
//!   FIFO-reinsertion / second chance. Checked against libCacheSim/cache/eviction/Clock.c
//!   (1a1a11a/libCacheSim): `Clock_insert` prepends the new object at `q_head` with
//!   `clock.freq = 0`; `Clock_find` on a hit does `freq += 1` capped at
//!   `max_freq = (1 << n_bit_counter) - 1 = 1`; `Clock_evict` looks at `q_tail` and, while its
//!   `freq >= 1`, decrements it and moves it to `q_head` (counted as `n_obj_rewritten`), then
//!   evicts the first tail object whose `freq` is 0. With one bit that is exactly: a hit sets
//!   the bit, eviction clears-and-reinserts referenced objects until it finds an unreferenced
//!   one, a new object enters with the bit clear.
//!
//! Writes: a write request (hit or miss) marks the resident page dirty; evicting a dirty page
//! counts in [`CacheStats::dirty_evictions`] (a write-back). There is no background
//! writeback: a page stays dirty until it is evicted. libCacheSim has no notion of dirtiness,
//! so this counter is a reclaimlab addition that does not change any hit or miss.
//!
//! Implementation: an index-based intrusive doubly-linked queue over a slab `Vec` (see
//! `list.rs`) and a key → slot map of our own (`table.rs`: open addressing, linear probing,
//! backward-shift deletion, fixed splitmix64 hash; only probed, never iterated, so no order
//! leaks into results). std's `HashMap` was not used because its tombstone clean-up under
//! steady churn can reallocate at its discretion. Storage grows during warm-up only: once the
//! cache has filled, each eviction frees the slot the new object reuses and the map never
//! holds more keys than before, so [`TextbookCache::access`] does not allocate after warm-up.
//! Nothing is allocated up front, so a capacity far above the footprint costs nothing.

mod list;
mod table;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::access::{Op, TraceRecord};
use list::{Queue, NIL};
use table::SlotTable;

/// Which textbook replacement policy a [`TextbookCache`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextbookKind {
    /// Least recently used.
    Lru,
    /// CLOCK / FIFO-reinsertion with a one-bit reference counter.
    Clock,
    /// First in, first out.
    Fifo,
}

impl TextbookKind {
    /// Every kind, in a fixed order.
    pub fn all() -> [TextbookKind; 3] {
        [TextbookKind::Lru, TextbookKind::Clock, TextbookKind::Fifo]
    }

    /// The lowercase name used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            TextbookKind::Lru => "lru",
            TextbookKind::Clock => "clock",
            TextbookKind::Fifo => "fifo",
        }
    }
}

impl fmt::Display for TextbookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy name that is not one of `lru`, `clock`, `fifo`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown textbook policy {0:?} (expected one of: lru, clock, fifo)")]
pub struct ParseTextbookKindError(pub String);

/// Lets callers whose errors are plain `String`s use `?` on a parse.
impl From<ParseTextbookKindError> for String {
    fn from(e: ParseTextbookKindError) -> String {
        e.to_string()
    }
}

impl FromStr for TextbookKind {
    type Err = ParseTextbookKindError;

    /// Parses `lru`, `clock` or `fifo`, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TextbookKind::all()
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseTextbookKindError(s.to_string()))
    }
}

/// Counters of one textbook cache run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Lookups (every access is one).
    pub requests: u64,
    /// Lookups that found the page resident.
    pub hits: u64,
    /// Lookups that did not, cold misses included.
    pub misses: u64,
    /// Requests that were writes (hit or miss).
    pub writes: u64,
    /// Pages removed to make room.
    pub evictions: u64,
    /// Evicted pages that had been written while resident: write-backs.
    pub dirty_evictions: u64,
}

impl CacheStats {
    /// `misses / requests`, or 0 before the first request.
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests as f64
        }
    }
}

/// Memory per page a full textbook cache holds: its slab entry and two hash buckets (the
/// table is kept at most half full).
pub fn bytes_per_cached_page() -> u64 {
    (std::mem::size_of::<list::Entry>() + 2 * table::BUCKET_BYTES) as u64
}

/// A fixed-capacity page cache run by one textbook policy. See the module docs for the exact
/// semantics.
#[derive(Clone, Debug)]
pub struct TextbookCache {
    kind: TextbookKind,
    capacity: usize,
    queue: Queue,
    map: SlotTable,
    stats: CacheStats,
}

impl TextbookCache {
    /// An empty cache holding at most `capacity_pages` pages. Nothing is allocated up front, so
    /// a capacity far above the workload's footprint costs nothing.
    pub fn new(kind: TextbookKind, capacity_pages: usize) -> Self {
        TextbookCache {
            kind,
            capacity: capacity_pages,
            queue: Queue::new(),
            map: SlotTable::new(),
            stats: CacheStats::default(),
        }
    }

    /// Look `key` up; on a miss insert it (evicting first if full). Returns `true` on a hit.
    /// `is_write` marks the resident page dirty.
    pub fn access(&mut self, key: u64, is_write: bool) -> bool {
        self.stats.requests += 1;
        self.stats.writes += u64::from(is_write);
        if let Some(slot) = self.map.get(key) {
            self.stats.hits += 1;
            self.on_hit(slot, is_write);
            return true;
        }
        self.stats.misses += 1;
        if self.capacity > 0 {
            self.insert(key, is_write);
        }
        false
    }

    /// [`Self::access`] for a trace record: key from [`crate::access::PageRef::key`] with the
    /// record's pid, write iff the op is [`Op::Write`].
    pub fn access_record(&mut self, rec: &TraceRecord) -> bool {
        self.access(rec.page.key(rec.pid), rec.op == Op::Write)
    }

    /// The counters so far.
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Zero the counters, keeping the cache contents (to exclude a warm-up phase).
    pub fn reset_stats(&mut self) {
        self.stats = CacheStats::default();
    }

    /// Pages resident now.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// No page resident.
    pub fn is_empty(&self) -> bool {
        self.queue.len() == 0
    }

    /// Whether `key` is resident. Does not count as a request or touch any policy state.
    pub fn contains(&self, key: u64) -> bool {
        self.map.contains(key)
    }

    /// The capacity in pages.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The policy.
    pub fn kind(&self) -> TextbookKind {
        self.kind
    }

    /// Policy update on a hit.
    fn on_hit(&mut self, slot: usize, is_write: bool) {
        self.queue.entries[slot].dirty |= is_write;
        match self.kind {
            TextbookKind::Lru => self.queue.move_to_head(slot),
            TextbookKind::Clock => self.queue.entries[slot].referenced = true,
            TextbookKind::Fifo => {}
        }
    }

    /// Insert a missing `key` at the head; the cache has capacity > 0.
    fn insert(&mut self, key: u64, is_write: bool) {
        let slot = if self.queue.len() < self.capacity {
            self.queue.alloc(key)
        } else {
            self.evict()
        };
        let e = &mut self.queue.entries[slot];
        e.key = key;
        e.referenced = false;
        e.dirty = is_write;
        self.queue.push_head(slot);
        self.map.insert(key, slot);
    }

    /// Evict one page and return its now unlinked slot for reuse.
    fn evict(&mut self) -> usize {
        let victim = self.pick_victim();
        self.queue.unlink(victim);
        let e = self.queue.entries[victim];
        self.map.remove(e.key);
        self.stats.evictions += 1;
        self.stats.dirty_evictions += u64::from(e.dirty);
        victim
    }

    /// The slot to evict. For CLOCK this performs the second-chance sweep: referenced tail
    /// objects get their bit cleared and move to the head until an unreferenced one is at the
    /// tail (terminates because every pass clears bits).
    fn pick_victim(&mut self) -> usize {
        debug_assert!(self.queue.tail != NIL);
        if self.kind != TextbookKind::Clock {
            return self.queue.tail;
        }
        loop {
            let tail = self.queue.tail;
            let e = &mut self.queue.entries[tail];
            if !e.referenced {
                return tail;
            }
            e.referenced = false;
            self.queue.move_to_head(tail);
        }
    }

    /// Resident keys from the eviction end to the head, with their CLOCK bit.
    #[cfg(test)]
    fn queue_tail_first(&self) -> Vec<(u64, bool)> {
        self.queue.keys_tail_first()
    }
}
