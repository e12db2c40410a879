//! Intrusive doubly linked lists over page frame numbers: the `struct list_head` of the model.
//! Policies keep their LRU lists here; nothing allocates after construction.
//! The head is the most recently added end; reclaim takes from the tail (`lru_to_folio`).

pub type Pfn = u32;
pub const NIL: Pfn = u32::MAX;

#[derive(Clone, Copy, Debug, Default)]
struct Head {
    head: Pfn,
    tail: Pfn,
    len: u64,
}

/// A set of lists sharing one link array; a pfn is on at most one list at a time.
///
/// The per-pfn words are stored inverted (`!x`), so that "none" (`NIL`, `u32::MAX`) is 0 and
/// the arrays are allocated zeroed: the pages of frames that never reach a list are never
/// touched, and a machine far larger than its workload costs only what the workload uses.
#[derive(Clone, Debug)]
pub struct Lists {
    prev: Vec<Pfn>,
    next: Vec<Pfn>,
    owner: Vec<u32>,
    heads: Vec<Head>,
}

/// Reads an inverted word.
#[inline]
fn get(words: &[u32], pfn: Pfn) -> u32 {
    !words[pfn as usize]
}

/// Writes an inverted word.
#[inline]
fn put(words: &mut [u32], pfn: Pfn, value: u32) {
    words[pfn as usize] = !value;
}

impl Lists {
    pub fn new(nr_pfns: usize, nr_lists: usize) -> Self {
        Lists {
            prev: vec![0; nr_pfns],
            next: vec![0; nr_pfns],
            owner: vec![0; nr_pfns],
            heads: vec![
                Head {
                    head: NIL,
                    tail: NIL,
                    len: 0
                };
                nr_lists
            ],
        }
    }

    pub fn nr_lists(&self) -> usize {
        self.heads.len()
    }

    /// Grows the number of lists (e.g. a memcg created at run time).
    pub fn ensure_lists(&mut self, n: usize) {
        if self.heads.len() < n {
            self.heads.resize(
                n,
                Head {
                    head: NIL,
                    tail: NIL,
                    len: 0,
                },
            );
        }
    }

    #[inline]
    pub fn len(&self, list: u32) -> u64 {
        self.heads[list as usize].len
    }
    #[inline]
    pub fn is_empty(&self, list: u32) -> bool {
        self.len(list) == 0
    }
    /// The list a pfn is on, if any.
    #[inline]
    pub fn list_of(&self, pfn: Pfn) -> Option<u32> {
        let o = get(&self.owner, pfn);
        (o != u32::MAX).then_some(o)
    }
    #[inline]
    pub fn tail(&self, list: u32) -> Option<Pfn> {
        let t = self.heads[list as usize].tail;
        (t != NIL).then_some(t)
    }
    #[inline]
    pub fn head(&self, list: u32) -> Option<Pfn> {
        let h = self.heads[list as usize].head;
        (h != NIL).then_some(h)
    }
    /// The next element towards the tail.
    #[inline]
    pub fn next_of(&self, pfn: Pfn) -> Option<Pfn> {
        let n = get(&self.next, pfn);
        (n != NIL).then_some(n)
    }
    /// The next element towards the head.
    #[inline]
    pub fn prev_of(&self, pfn: Pfn) -> Option<Pfn> {
        let p = get(&self.prev, pfn);
        (p != NIL).then_some(p)
    }

    /// `list_add`: at the head.
    pub fn push_head(&mut self, list: u32, pfn: Pfn) {
        debug_assert!(
            get(&self.owner, pfn) == u32::MAX,
            "pfn {pfn} already listed"
        );
        let h = &mut self.heads[list as usize];
        put(&mut self.prev, pfn, NIL);
        put(&mut self.next, pfn, h.head);
        if h.head != NIL {
            put(&mut self.prev, h.head, pfn);
        } else {
            h.tail = pfn;
        }
        h.head = pfn;
        h.len += 1;
        put(&mut self.owner, pfn, list);
    }

    /// `list_add_tail`: at the tail.
    pub fn push_tail(&mut self, list: u32, pfn: Pfn) {
        debug_assert!(
            get(&self.owner, pfn) == u32::MAX,
            "pfn {pfn} already listed"
        );
        let h = &mut self.heads[list as usize];
        put(&mut self.next, pfn, NIL);
        put(&mut self.prev, pfn, h.tail);
        if h.tail != NIL {
            put(&mut self.next, h.tail, pfn);
        } else {
            h.head = pfn;
        }
        h.tail = pfn;
        h.len += 1;
        put(&mut self.owner, pfn, list);
    }

    /// `list_del`.
    pub fn remove(&mut self, pfn: Pfn) {
        let list = get(&self.owner, pfn);
        debug_assert!(list != u32::MAX, "pfn {pfn} not listed");
        let (p, n) = (get(&self.prev, pfn), get(&self.next, pfn));
        let h = &mut self.heads[list as usize];
        if p != NIL {
            put(&mut self.next, p, n);
        } else {
            h.head = n;
        }
        if n != NIL {
            put(&mut self.prev, n, p);
        } else {
            h.tail = p;
        }
        h.len -= 1;
        put(&mut self.prev, pfn, NIL);
        put(&mut self.next, pfn, NIL);
        put(&mut self.owner, pfn, u32::MAX);
    }

    /// Pops the tail.
    pub fn pop_tail(&mut self, list: u32) -> Option<Pfn> {
        let t = self.tail(list)?;
        self.remove(t);
        Some(t)
    }

    /// Walks a list head to tail (for invariant checks and output, not the hot path).
    pub fn iter(&self, list: u32) -> impl Iterator<Item = Pfn> + '_ {
        let mut cur = self.heads[list as usize].head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let c = cur;
            cur = get(&self.next, c);
            Some(c)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn head_and_tail_order() {
        let mut l = Lists::new(8, 2);
        l.push_head(0, 1);
        l.push_head(0, 2);
        l.push_tail(0, 3);
        assert_eq!(l.iter(0).collect::<Vec<_>>(), vec![2, 1, 3]);
        assert_eq!(l.pop_tail(0), Some(3));
        l.remove(2);
        assert_eq!(l.iter(0).collect::<Vec<_>>(), vec![1]);
        assert_eq!(l.len(0), 1);
        assert_eq!(l.list_of(1), Some(0));
        assert_eq!(l.list_of(2), None);
    }

    proptest! {
        #[test]
        fn lengths_match_contents(ops in proptest::collection::vec((0u32..16, 0u32..3, 0u8..3), 0..200)) {
            let mut l = Lists::new(16, 3);
            for (pfn, list, op) in ops {
                match (l.list_of(pfn), op) {
                    (None, 0) => l.push_head(list, pfn),
                    (None, 1) => l.push_tail(list, pfn),
                    (Some(_), _) => l.remove(pfn),
                    _ => {}
                }
            }
            for list in 0..3 {
                let items: Vec<_> = l.iter(list).collect();
                prop_assert_eq!(items.len() as u64, l.len(list));
                for p in items { prop_assert_eq!(l.list_of(p), Some(list)); }
            }
        }
    }
}
