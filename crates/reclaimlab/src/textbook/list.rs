//! The storage behind [`super::TextbookCache`]: a slab of entries threaded on one intrusive,
//! index-based doubly-linked queue (the key → slot map is in `table.rs`).
//!
//! The queue runs from the *head* (newest insertion, or most recently used for LRU) to the
//! *tail* (the eviction end), the same orientation as libCacheSim's `q_head`/`q_tail`.
//! Slots are indexes into one `Vec`, so relinking never allocates; an evicted slot is reused
//! for the object that replaces it, so after the cache first fills the slab never changes
//! size.

/// "No slot": the end of the queue in either direction.
pub(crate) const NIL: usize = usize::MAX;

/// One cached page.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    /// The page's key (see [`crate::access::PageRef::key`]).
    pub key: u64,
    /// Neighbour towards the head (newer), or [`NIL`].
    pub prev: usize,
    /// Neighbour towards the tail (older), or [`NIL`].
    pub next: usize,
    /// CLOCK's one-bit reference counter (libCacheSim `clock.freq` with `n-bit-counter=1`).
    pub referenced: bool,
    /// Written since it was inserted: evicting it is a write-back.
    pub dirty: bool,
}

/// Slab of entries plus the queue threaded through it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Queue {
    /// All slots ever handed out; every slot is linked on the queue (nothing is ever freed
    /// without being refilled at once).
    pub entries: Vec<Entry>,
    /// Newest end.
    pub head: usize,
    /// Eviction end.
    pub tail: usize,
}

impl Queue {
    /// An empty queue.
    pub fn new() -> Self {
        Queue {
            entries: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// Number of linked entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Add a fresh slot for `key` (warm-up only: grows the slab) and return it, unlinked.
    pub fn alloc(&mut self, key: u64) -> usize {
        self.entries.push(Entry {
            key,
            prev: NIL,
            next: NIL,
            referenced: false,
            dirty: false,
        });
        self.entries.len() - 1
    }

    /// Link an unlinked `slot` at the head.
    pub fn push_head(&mut self, slot: usize) {
        let old = self.head;
        {
            let e = &mut self.entries[slot];
            e.prev = NIL;
            e.next = old;
        }
        if old == NIL {
            self.tail = slot;
        } else {
            self.entries[old].prev = slot;
        }
        self.head = slot;
    }

    /// Take `slot` off the queue (it stays in the slab, ready to be relinked).
    pub fn unlink(&mut self, slot: usize) {
        let Entry { prev, next, .. } = self.entries[slot];
        if prev == NIL {
            self.head = next;
        } else {
            self.entries[prev].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.entries[next].prev = prev;
        }
        let e = &mut self.entries[slot];
        e.prev = NIL;
        e.next = NIL;
    }

    /// Move `slot` to the head (LRU promotion, CLOCK reinsertion).
    pub fn move_to_head(&mut self, slot: usize) {
        if self.head != slot {
            self.unlink(slot);
            self.push_head(slot);
        }
    }

    /// Keys from the tail (next to be evicted) to the head, for tests and debugging.
    #[cfg(test)]
    pub fn keys_tail_first(&self) -> Vec<(u64, bool)> {
        let mut out = Vec::with_capacity(self.len());
        let mut s = self.tail;
        while s != NIL {
            out.push((self.entries[s].key, self.entries[s].referenced));
            s = self.entries[s].prev;
        }
        out
    }
}
