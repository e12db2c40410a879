//! Application-managed caches: a database's own cache of file blocks in its anonymous memory,
//! shared by all threads of the process (WiredTiger's cache; InnoDB's buffer pool is the same
//! mechanism with other constants).
//!
//! The cache has a fixed number of slots, each `block_pages` pages of the process's anon area
//! (from `anon_offset`). An operation looks up one block of the data file:
//!
//! - **hit**: the slot's pages are accessed (read; written for an update);
//! - **miss**: if the cache is at its eviction target, the least recently used block is evicted
//!   (written to the file first if dirty: `pwrite`, the fd write path); then the block is read
//!   from the data file (one `pread` of `block_pages`) into a free slot (anon writes).
//!
//! An update dirties the block in the cache and appends a record to the log (the journal);
//! when the dirty blocks exceed the dirty target, the oldest dirty block is written and evicted.
//! A checkpoint writes every dirty block (in block order) and marks them clean; a log commit
//! writes the log pages filled since the previous commit (sequential fd writes, wrapping at the
//! log file's end).
//!
//! Every method returns the accesses the calling thread performs, in order. The state is
//! shared through [`AppCacheShare`] and changes when a thread *generates* its operation, in the
//! engine's processing order, so a run is deterministic; nothing iterates a hash map.
//!
//! Simplifications (docs/model.md §7, "Application caches"): exact LRU by last use (WiredTiger
//! approximates it: its eviction server sorts sampled candidates by read generation and queues
//! the oldest third, source.wiredtiger.com arch-eviction); eviction is done synchronously by
//! the thread that needs the room or made the cache too dirty (WiredTiger's eviction worker
//! threads do it in the background below `eviction_trigger` / `eviction_dirty_trigger` and
//! drafts application threads above them; here the cache never goes beyond its targets, so the
//! triggers are never reached); a block is in the cache from the moment its miss is decided
//! (a second thread that wants it meanwhile hits instead of waiting for the read); blocks in
//! the cache have their on-disk size (WiredTiger's in-memory pages are larger and hold update
//! chains); no fsync (the model has none).

use super::pattern::Pattern;
use super::Action;
use crate::access::{Op, PageRef, Via};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};

/// WiredTiger's and MongoDB's documented defaults.
pub mod wiredtiger {
    /// `eviction_target`: eviction worker threads keep the cache at or below this % of
    /// `cache_size` (wiredtiger_open, WT_CONNECTION reference, source.wiredtiger.com).
    pub const EVICTION_TARGET_PCT: u32 = 80;
    /// `eviction_trigger`: above this % application threads are drafted into eviction
    /// (90 before WiredTiger 3.0). Not reached in the model (see the module docs).
    pub const EVICTION_TRIGGER_PCT: u32 = 95;
    /// `eviction_dirty_target`: eviction threads write dirty pages above this % of the cache.
    pub const EVICTION_DIRTY_TARGET_PCT: u32 = 5;
    /// `eviction_dirty_trigger`: above this % of dirty content application threads evict.
    /// Not reached in the model.
    pub const EVICTION_DIRTY_TRIGGER_PCT: u32 = 20;
    /// MongoDB's `storage.syncPeriodSecs` (`syncdelay`): a checkpoint every 60 s
    /// (`checkpoint=(wait=60)`, SERVER-29210; MongoDB manual, "Snapshots and Checkpoints").
    pub const CHECKPOINT_INTERVAL_NS: u64 = 60_000_000_000;
    /// MongoDB's `storage.journal.commitIntervalMs`: group commit every 100 ms (the default
    /// with the journal on the data files' device; MongoDB manual, configuration options).
    pub const JOURNAL_COMMIT_INTERVAL_NS: u64 = 100_000_000;
    /// WiredTiger's `leaf_page_max` default, 32 KiB (WT_SESSION::create): a leaf is read and
    /// written whole.
    pub const LEAF_PAGE_MAX_BYTES: u64 = 32 * 1024;
    /// WiredTiger's `log=(file_max)` default, 100 MB: one journal file.
    pub const LOG_FILE_MAX_BYTES: u64 = 100 * 1024 * 1024;
}

/// Bytes per page.
const PAGE_BYTES: u64 = 4096;

/// When the cache evicts, in % of its slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvictionTargets {
    /// Resident blocks are kept at or below this share (a miss at it evicts first).
    pub target_pct: u32,
    /// Dirty blocks are kept at or below this share (an update beyond it writes and evicts
    /// the oldest dirty block).
    pub dirty_target_pct: u32,
}

impl EvictionTargets {
    /// WiredTiger's defaults.
    pub const WIREDTIGER: EvictionTargets = EvictionTargets {
        target_pct: wiredtiger::EVICTION_TARGET_PCT,
        dirty_target_pct: wiredtiger::EVICTION_DIRTY_TARGET_PCT,
    };
}

/// The log (journal) an application cache's updates append to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogSpec {
    /// The log's file (scenario file index).
    pub file: usize,
    /// Its size in pages: appends wrap to its start (as log files are recycled).
    pub pages: u64,
    /// Bytes appended per update.
    pub bytes_per_update: u64,
}

/// An application cache's configuration. The threads whose steps name the same `id` share
/// one cache (and so must give the same spec).
#[derive(Clone, Debug, PartialEq)]
pub struct AppCacheSpec {
    pub id: u16,
    /// Blocks the cache can hold.
    pub slots: u64,
    /// Pages per block (a slot's size).
    pub block_pages: u64,
    /// The cache's first page in the process's anon area.
    pub anon_offset: u64,
    /// The data file (scenario file index) and its number of blocks.
    pub data_file: usize,
    pub blocks: u64,
    pub eviction: EvictionTargets,
    pub log: Option<LogSpec>,
}

impl AppCacheSpec {
    /// Checks the spec against the sizes of the process's anon area and the files' pages.
    pub fn validate(&self, anon_pages: u64, file_pages: &[u64]) -> Result<(), String> {
        let name = format!("application cache {}", self.id);
        if self.slots == 0 || self.block_pages == 0 || self.blocks == 0 {
            return Err(format!(
                "{name}: slots, block pages and blocks must be positive"
            ));
        }
        if self.slots > u32::MAX as u64 || self.block_pages > u32::MAX as u64 {
            return Err(format!("{name}: more than 2^32 slots or pages per block"));
        }
        let end = self.slots.checked_mul(self.block_pages);
        if end
            .and_then(|e| e.checked_add(self.anon_offset))
            .is_none_or(|e| e > anon_pages)
        {
            return Err(format!(
                "{name}: its slots do not fit the process's anon area"
            ));
        }
        let data = file_pages.get(self.data_file);
        if data.is_none_or(|&p| self.blocks.saturating_mul(self.block_pages) > p) {
            return Err(format!(
                "{name}: its blocks do not fit data file {}",
                self.data_file
            ));
        }
        let t = self.eviction;
        if t.target_pct == 0 || t.target_pct > 100 || t.dirty_target_pct > t.target_pct {
            return Err(format!(
                "{name}: eviction targets must be 0 < dirty <= target <= 100"
            ));
        }
        if let Some(log) = self.log {
            if log.pages == 0 || file_pages.get(log.file).is_none_or(|&p| log.pages > p) {
                return Err(format!("{name}: its log does not fit file {}", log.file));
            }
        }
        Ok(())
    }

    /// Blocks the cache holds at most (its eviction target), at least one.
    pub fn target_slots(&self) -> u64 {
        (self.slots * self.eviction.target_pct as u64 / 100).max(1)
    }

    /// Dirty blocks the cache holds at most (its dirty target), at least one.
    pub fn dirty_target_slots(&self) -> u64 {
        (self.slots * self.eviction.dirty_target_pct as u64 / 100).max(1)
    }
}

/// What a thread's step does with an application cache.
#[derive(Clone, Debug, PartialEq)]
pub enum AppCacheWork {
    /// One operation on a block drawn from `keys` (over the data file's blocks), an update
    /// with probability `write_pct` %.
    Op { keys: Pattern, write_pct: u32 },
    /// Write every dirty block (a checkpoint).
    Checkpoint,
    /// Write the log pages appended since the last commit (a group commit).
    LogCommit,
}

/// A script step on an application cache (`Step::AppCache`).
#[derive(Clone, Debug, PartialEq)]
pub struct AppCacheStep {
    pub spec: AppCacheSpec,
    pub work: AppCacheWork,
}

/// What a cache did over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppCacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Blocks evicted to make room (clean or dirty).
    pub evictions: u64,
    /// Dirty blocks written by eviction (to make room or above the dirty target).
    pub eviction_writes: u64,
    pub checkpoints: u64,
    /// Blocks written by checkpoints.
    pub checkpoint_writes: u64,
    pub updates: u64,
    /// Log pages written by commits.
    pub log_page_writes: u64,
}

/// A block in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Resident {
    block: u64,
    /// The cache's clock at its last use (its key in `by_age`).
    last_use: u64,
    dirty: bool,
}

/// One application cache's state.
#[derive(Debug)]
pub struct AppCache {
    spec: AppCacheSpec,
    /// Block to slot; looked up, never iterated.
    slot_of: HashMap<u64, u32>,
    slots: Vec<Option<Resident>>,
    /// Free slots (the lowest is taken first).
    free: BinaryHeap<Reverse<u32>>,
    /// Resident blocks by last use: slot.
    by_age: BTreeMap<u64, u32>,
    /// Dirty blocks by last use: slot.
    dirty_by_age: BTreeMap<u64, u32>,
    clock: u64,
    /// Bytes appended to the log, and the bytes the last commit covered.
    log_bytes: u64,
    log_committed: u64,
    stats: AppCacheStats,
}

impl AppCache {
    /// An empty cache.
    pub fn new(spec: AppCacheSpec) -> AppCache {
        let n = spec.slots as u32;
        AppCache {
            slots: vec![None; n as usize],
            free: (0..n).map(Reverse).collect(),
            slot_of: HashMap::new(),
            by_age: BTreeMap::new(),
            dirty_by_age: BTreeMap::new(),
            clock: 0,
            log_bytes: 0,
            log_committed: 0,
            stats: AppCacheStats::default(),
            spec,
        }
    }

    pub fn spec(&self) -> &AppCacheSpec {
        &self.spec
    }

    pub fn stats(&self) -> AppCacheStats {
        self.stats
    }

    /// Blocks in the cache.
    pub fn resident(&self) -> u64 {
        self.by_age.len() as u64
    }

    /// Dirty blocks in the cache.
    pub fn dirty(&self) -> u64 {
        self.dirty_by_age.len() as u64
    }

    /// The slot holding `block`, if it is cached.
    pub fn slot_of(&self, block: u64) -> Option<u32> {
        self.slot_of.get(&block).copied()
    }

    /// Whether `block` is cached and dirty.
    pub fn is_dirty(&self, block: u64) -> bool {
        self.slot_of(block)
            .and_then(|s| self.slots[s as usize])
            .is_some_and(|r| r.dirty)
    }

    /// One operation on `block` (an update if `update`): the accesses it performs.
    pub fn operate(&mut self, block: u64, update: bool) -> Vec<Action> {
        let mut out = Vec::new();
        let op = if update { Op::Write } else { Op::Read };
        match self.slot_of(block) {
            Some(slot) => {
                self.stats.hits += 1;
                self.touch(slot);
                self.slot_accesses(slot, op, &mut out);
            }
            None => {
                self.stats.misses += 1;
                self.make_room(&mut out);
                // The read's anon writes are the update's too.
                self.read_into_free_slot(block, &mut out);
            }
        }
        if update {
            self.record_update(block, &mut out);
        }
        out
    }

    /// A checkpoint: every dirty block is written, in block order, and is clean afterwards.
    pub fn checkpoint(&mut self) -> Vec<Action> {
        let mut dirty: Vec<(u64, u32)> = self
            .dirty_by_age
            .values()
            .map(|&s| (self.resident_in(s).block, s))
            .collect();
        dirty.sort_unstable();
        let mut out = Vec::new();
        for &(block, slot) in &dirty {
            self.write_block(block, &mut out);
            self.mark_clean(slot);
        }
        self.stats.checkpoints += 1;
        self.stats.checkpoint_writes += dirty.len() as u64;
        out
    }

    /// A group commit: the log pages appended to since the last commit are written (the last
    /// one again next time if it was partly filled).
    pub fn commit_log(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        let Some(log) = self.spec.log else {
            return out;
        };
        if self.log_bytes == self.log_committed {
            return out;
        }
        let first = self.log_committed / PAGE_BYTES;
        let end = self.log_bytes.div_ceil(PAGE_BYTES);
        for p in first..end {
            out.push(Action::Access {
                page: PageRef::File {
                    file: log.file as u32,
                    page: p % log.pages,
                },
                op: Op::Write,
                via: Via::Fd,
                req: 1,
            });
        }
        self.stats.log_page_writes += end - first;
        self.log_committed = self.log_bytes;
        out
    }

    fn resident_in(&self, slot: u32) -> Resident {
        self.slots[slot as usize].expect("an indexed slot holds a block")
    }

    /// The block in `slot` is used now: it becomes the most recently used.
    fn touch(&mut self, slot: u32) {
        let mut r = self.resident_in(slot);
        self.by_age.remove(&r.last_use);
        if r.dirty {
            self.dirty_by_age.remove(&r.last_use);
        }
        self.clock += 1;
        r.last_use = self.clock;
        self.by_age.insert(r.last_use, slot);
        if r.dirty {
            self.dirty_by_age.insert(r.last_use, slot);
        }
        self.slots[slot as usize] = Some(r);
    }

    /// At the eviction target, the least recently used block leaves (written first if dirty).
    fn make_room(&mut self, out: &mut Vec<Action>) {
        while self.resident() >= self.spec.target_slots() {
            let Some((_, &slot)) = self.by_age.iter().next() else {
                return;
            };
            self.evict(slot, out);
        }
    }

    /// `slot`'s block leaves the cache, written to the file first if dirty.
    fn evict(&mut self, slot: u32, out: &mut Vec<Action>) {
        let r = self.resident_in(slot);
        if r.dirty {
            self.write_block(r.block, out);
            self.stats.eviction_writes += 1;
            self.dirty_by_age.remove(&r.last_use);
        }
        self.by_age.remove(&r.last_use);
        self.slot_of.remove(&r.block);
        self.slots[slot as usize] = None;
        self.free.push(Reverse(slot));
        self.stats.evictions += 1;
    }

    /// Reads `block` from the data file into the lowest free slot.
    fn read_into_free_slot(&mut self, block: u64, out: &mut Vec<Action>) {
        let Reverse(slot) = self.free.pop().expect("make_room leaves a free slot");
        self.read_block(block, out);
        self.slot_accesses(slot, Op::Write, out);
        self.clock += 1;
        self.slots[slot as usize] = Some(Resident {
            block,
            last_use: self.clock,
            dirty: false,
        });
        self.by_age.insert(self.clock, slot);
        self.slot_of.insert(block, slot);
    }

    /// An update of `block` (cached by now): it is dirty, its log record is appended, and the
    /// oldest dirty blocks beyond the dirty target are written and evicted.
    fn record_update(&mut self, block: u64, out: &mut Vec<Action>) {
        self.stats.updates += 1;
        let slot = self.slot_of(block).expect("an updated block is cached");
        let mut r = self.resident_in(slot);
        if !r.dirty {
            r.dirty = true;
            self.dirty_by_age.insert(r.last_use, slot);
            self.slots[slot as usize] = Some(r);
        }
        if let Some(log) = self.spec.log {
            self.log_bytes += log.bytes_per_update;
        }
        while self.dirty() > self.spec.dirty_target_slots() {
            let (_, &oldest) = self.dirty_by_age.iter().next().expect("dirty blocks");
            self.evict(oldest, out);
        }
    }

    fn mark_clean(&mut self, slot: u32) {
        let mut r = self.resident_in(slot);
        r.dirty = false;
        self.dirty_by_age.remove(&r.last_use);
        self.slots[slot as usize] = Some(r);
    }

    /// The anon accesses to every page of `slot`.
    fn slot_accesses(&self, slot: u32, op: Op, out: &mut Vec<Action>) {
        let first = self.spec.anon_offset + slot as u64 * self.spec.block_pages;
        for page in first..first + self.spec.block_pages {
            out.push(Action::Access {
                page: PageRef::Anon { page },
                op,
                via: Via::Mmap,
                req: 1,
            });
        }
    }

    /// One `pread` of the whole block.
    fn read_block(&self, block: u64, out: &mut Vec<Action>) {
        let n = self.spec.block_pages;
        for (k, page) in self.block_file_pages(block).enumerate() {
            out.push(Action::Access {
                page,
                op: Op::Read,
                via: Via::Fd,
                req: u32::try_from(n - k as u64).unwrap_or(u32::MAX),
            });
        }
    }

    /// One `pwrite` of the whole block.
    fn write_block(&self, block: u64, out: &mut Vec<Action>) {
        for page in self.block_file_pages(block) {
            out.push(Action::Access {
                page,
                op: Op::Write,
                via: Via::Fd,
                req: 1,
            });
        }
    }

    fn block_file_pages(&self, block: u64) -> impl Iterator<Item = PageRef> {
        let file = self.spec.data_file as u32;
        let first = block * self.spec.block_pages;
        (first..first + self.spec.block_pages).map(move |page| PageRef::File { file, page })
    }
}

/// The application caches of one run, by id.
#[derive(Debug, Default)]
pub struct AppCacheShare {
    caches: Vec<(u16, Arc<Mutex<AppCache>>)>,
}

impl AppCacheShare {
    /// The run's cache with `spec.id`, created empty on first use.
    pub fn cache(&mut self, spec: &AppCacheSpec) -> Arc<Mutex<AppCache>> {
        if let Some((_, c)) = self.caches.iter().find(|(id, _)| *id == spec.id) {
            return Arc::clone(c);
        }
        let c = Arc::new(Mutex::new(AppCache::new(spec.clone())));
        self.caches.push((spec.id, Arc::clone(&c)));
        c
    }

    /// Each cache's id and statistics, in order of first use.
    pub fn stats(&self) -> Vec<(u16, AppCacheStats)> {
        self.caches
            .iter()
            .map(|(id, c)| (*id, c.lock().expect("cache lock").stats()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BP: u64 = 4;

    /// A cache of `slots` slots of 4 pages over 100 blocks of file 0, anon from page 10, a
    /// log of 3 pages in file 1 with 1000 B per update.
    fn spec(slots: u64, target_pct: u32, dirty_target_pct: u32) -> AppCacheSpec {
        AppCacheSpec {
            id: 0,
            slots,
            block_pages: BP,
            anon_offset: 10,
            data_file: 0,
            blocks: 100,
            eviction: EvictionTargets {
                target_pct,
                dirty_target_pct,
            },
            log: Some(LogSpec {
                file: 1,
                pages: 3,
                bytes_per_update: 1000,
            }),
        }
    }

    fn cache(slots: u64) -> AppCache {
        AppCache::new(spec(slots, 100, 100))
    }

    /// (file, page, op, req) of each fd access, in order.
    fn fd(actions: &[Action]) -> Vec<(u32, u64, Op, u32)> {
        actions
            .iter()
            .filter_map(|a| match *a {
                Action::Access {
                    page: PageRef::File { file, page },
                    op,
                    via: Via::Fd,
                    req,
                } => Some((file, page, op, req)),
                _ => None,
            })
            .collect()
    }

    /// (anon page, op) of each anon access, in order.
    fn anon(actions: &[Action]) -> Vec<(u64, Op)> {
        actions
            .iter()
            .filter_map(|a| match *a {
                Action::Access {
                    page: PageRef::Anon { page },
                    op,
                    ..
                } => Some((page, op)),
                _ => None,
            })
            .collect()
    }

    fn reads(block: u64) -> Vec<(u32, u64, Op, u32)> {
        (0..BP)
            .map(|k| (0, block * BP + k, Op::Read, (BP - k) as u32))
            .collect()
    }

    fn writes(block: u64) -> Vec<(u32, u64, Op, u32)> {
        (0..BP).map(|k| (0, block * BP + k, Op::Write, 1)).collect()
    }

    fn slot_pages(slot: u64, op: Op) -> Vec<(u64, Op)> {
        (0..BP).map(|k| (10 + slot * BP + k, op)).collect()
    }

    #[test]
    fn a_miss_reads_the_block_into_the_lowest_free_slot() {
        let mut c = cache(4);
        let a = c.operate(7, false);
        assert_eq!(fd(&a), reads(7), "one pread of the whole block");
        assert_eq!(anon(&a), slot_pages(0, Op::Write), "copied into slot 0");
        assert_eq!(c.slot_of(7), Some(0));
        assert_eq!(c.operate(8, false).len(), 2 * BP as usize);
        assert_eq!(c.slot_of(8), Some(1));
        assert_eq!(c.stats().misses, 2);
    }

    #[test]
    fn a_hit_touches_only_the_slot() {
        let mut c = cache(4);
        c.operate(7, false);
        c.operate(8, false);
        let a = c.operate(7, false);
        assert!(fd(&a).is_empty(), "a hit does no file I/O");
        assert_eq!(anon(&a), slot_pages(0, Op::Read));
        let a = c.operate(8, true);
        assert!(fd(&a).is_empty());
        assert_eq!(
            anon(&a),
            slot_pages(1, Op::Write),
            "an update writes its slot"
        );
        assert!(c.is_dirty(8) && !c.is_dirty(7));
        assert_eq!(c.stats().hits, 2);
    }

    #[test]
    fn a_miss_in_a_full_cache_evicts_the_least_recently_used() {
        let mut c = cache(2);
        c.operate(1, false);
        c.operate(2, false);
        c.operate(1, false); // 2 is now the least recently used
        let a = c.operate(3, false);
        assert_eq!(fd(&a), reads(3), "a clean victim is not written");
        assert_eq!(c.slot_of(2), None);
        assert_eq!(c.slot_of(3), Some(1), "3 takes 2's slot");
        assert_eq!(c.slot_of(1), Some(0));
        assert_eq!(c.stats().evictions, 1);
    }

    #[test]
    fn a_dirty_victim_is_written_before_the_read() {
        let mut c = cache(2);
        c.operate(1, true);
        c.operate(2, false);
        let a = c.operate(3, false);
        let mut expect = writes(1);
        expect.extend(reads(3));
        assert_eq!(
            fd(&a),
            expect,
            "pwrite of the victim, then pread of the new block"
        );
        assert_eq!(c.stats().eviction_writes, 1);
        assert_eq!(c.dirty(), 0);
    }

    #[test]
    fn a_checkpoint_writes_every_dirty_block_in_block_order_and_cleans_them() {
        let mut c = cache(4);
        for b in [9, 3, 5] {
            c.operate(b, true);
        }
        c.operate(6, false);
        let a = c.checkpoint();
        let mut expect = writes(3);
        expect.extend(writes(5));
        expect.extend(writes(9));
        assert_eq!(fd(&a), expect);
        assert!(anon(&a).is_empty());
        assert_eq!(c.dirty(), 0);
        assert!(![3, 5, 9].iter().any(|&b| c.is_dirty(b)));
        assert_eq!(c.resident(), 4, "a checkpoint evicts nothing");
        assert!(c.checkpoint().is_empty(), "nothing left to write");
        assert_eq!(c.stats().checkpoint_writes, 3);
        assert_eq!(c.stats().checkpoints, 2);
    }

    #[test]
    fn the_cache_stays_at_its_eviction_target() {
        // 10 slots, target 80%: at most 8 blocks.
        let mut c = AppCache::new(spec(10, 80, 100));
        for b in 0..20 {
            c.operate(b, false);
            assert!(c.resident() <= 8);
        }
        assert_eq!(c.resident(), 8);
        assert_eq!(c.stats().evictions, 12);
        assert!(
            (0..20).filter_map(|b| c.slot_of(b)).all(|s| s < 8),
            "slots 8 and 9 are never used"
        );
        assert_eq!(
            c.slot_of(19),
            Some(3),
            "19 takes the slot of the LRU victim, 11"
        );
    }

    #[test]
    fn updates_beyond_the_dirty_target_write_and_evict_the_oldest_dirty_block() {
        // 20 slots, dirty target 10%: at most 2 dirty blocks.
        let mut c = AppCache::new(spec(20, 100, 10));
        c.operate(1, true);
        c.operate(2, true);
        assert_eq!(c.dirty(), 2);
        c.operate(1, false); // 2 is now the oldest dirty block
        let a = c.operate(3, true);
        let mut expect = reads(3);
        expect.extend(writes(2));
        assert_eq!(fd(&a), expect);
        assert_eq!(c.slot_of(2), None, "written and evicted");
        assert_eq!(c.dirty(), 2);
        assert!(c.is_dirty(1) && c.is_dirty(3));
    }

    #[test]
    fn log_commits_write_the_pages_appended_since_the_last_commit() {
        let mut c = cache(4);
        assert!(c.commit_log().is_empty(), "nothing appended");
        for b in 0..5 {
            c.operate(b, true); // 5000 B: pages 0 and 1
        }
        c.operate(9, false);
        let pages = |a: &[Action]| fd(a).iter().map(|x| (x.0, x.1)).collect::<Vec<_>>();
        assert_eq!(pages(&c.commit_log()), vec![(1, 0), (1, 1)]);
        assert!(c.commit_log().is_empty());
        for b in 0..5 {
            c.operate(b, true); // to 10000 B: page 1 again, page 2
        }
        assert_eq!(pages(&c.commit_log()), vec![(1, 1), (1, 2)]);
        for b in 0..3 {
            c.operate(b, true); // to 13000 B: page 3 wraps to 0
        }
        assert_eq!(pages(&c.commit_log()), vec![(1, 2), (1, 0)]);
        assert_eq!(c.stats().log_page_writes, 6);
    }

    #[test]
    fn threads_share_one_cache_per_id() {
        let mut share = AppCacheShare::default();
        let a = share.cache(&spec(4, 100, 100));
        let b = share.cache(&spec(4, 100, 100));
        assert!(Arc::ptr_eq(&a, &b));
        a.lock().unwrap().operate(1, false);
        assert_eq!(b.lock().unwrap().slot_of(1), Some(0));
        let other = share.cache(&AppCacheSpec {
            id: 1,
            ..spec(4, 100, 100)
        });
        assert!(!Arc::ptr_eq(&a, &other));
        assert_eq!(share.stats()[0].1.misses, 1);
    }

    #[test]
    fn validate_rejects_a_cache_that_does_not_fit() {
        let s = spec(4, 80, 5);
        assert!(s.validate(10 + 16, &[400, 3]).is_ok());
        assert!(
            s.validate(10 + 15, &[400, 3]).is_err(),
            "anon area too small"
        );
        assert!(s.validate(26, &[399, 3]).is_err(), "data file too small");
        assert!(s.validate(26, &[400, 2]).is_err(), "log file too small");
        assert!(spec(4, 80, 90).validate(26, &[400, 3]).is_err());
        assert!(spec(0, 80, 5).validate(26, &[400, 3]).is_err());
    }
}
