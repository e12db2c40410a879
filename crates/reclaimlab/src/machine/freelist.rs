//! A node's free page frames (the buddy free list for order 0), stored in proportion to the
//! frames ever freed rather than to the node's size: frames never allocated are a range.
//!
//! Order (what the model has always done): frames freed are handed out again last-in
//! first-out; once none are left, never-used frames are handed out from the lowest pfn up.

use super::lists::Pfn;

#[derive(Clone, Debug)]
pub struct FreeList {
    /// Freed frames, the most recently freed last.
    freed: Vec<Pfn>,
    /// Never-allocated frames: `fresh.start..fresh.end`, handed out from the start.
    fresh: std::ops::Range<Pfn>,
}

impl FreeList {
    /// Every frame of `first..first + count` free and never used.
    pub fn new(first: Pfn, count: Pfn) -> Self {
        FreeList {
            freed: Vec::new(),
            fresh: first..first + count,
        }
    }

    pub fn len(&self) -> usize {
        self.freed.len() + self.fresh.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes a free frame.
    pub fn pop(&mut self) -> Option<Pfn> {
        self.freed.pop().or_else(|| self.fresh.next())
    }

    /// Frees a frame.
    pub fn push(&mut self, pfn: Pfn) {
        self.freed.push(pfn);
    }

    /// Every free frame (for the invariant checker).
    pub fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.freed.iter().copied().chain(self.fresh.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The free list as a plain stack of every frame, as the model kept it before.
    fn stack_model(first: Pfn, count: Pfn, ops: &[Option<Pfn>]) -> Vec<Option<Pfn>> {
        let mut stack: Vec<Pfn> = (first..first + count).rev().collect();
        ops.iter()
            .map(|op| match op {
                None => stack.pop(),
                Some(p) => {
                    stack.push(*p);
                    None
                }
            })
            .collect()
    }

    #[test]
    fn hands_out_frames_in_the_order_of_a_full_stack() {
        // pop, pop, free 100, pop, pop, free 101, free 100, pop, pop, pop...
        let ops = [
            None,
            None,
            Some(100),
            None,
            None,
            Some(101),
            Some(100),
            None,
            None,
            None,
            None,
            None,
        ];
        let mut f = FreeList::new(100, 5);
        let got: Vec<Option<Pfn>> = ops
            .iter()
            .map(|op| match op {
                None => f.pop(),
                Some(p) => {
                    f.push(*p);
                    None
                }
            })
            .collect();
        assert_eq!(got, stack_model(100, 5, &ops));
        assert!(f.is_empty());
    }

    #[test]
    fn counts_and_lists_every_free_frame() {
        let mut f = FreeList::new(10, 4);
        assert_eq!(f.len(), 4);
        let a = f.pop().unwrap();
        let b = f.pop().unwrap();
        f.push(a);
        assert_eq!(f.len(), 3);
        let mut all: Vec<Pfn> = f.iter().collect();
        all.sort_unstable();
        assert_eq!(all, vec![10, 12, 13]);
        assert_eq!(b, 11);
    }
}
