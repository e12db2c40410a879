//! The simulator's event queue: a binary heap ordered by (time, insertion sequence) with its
//! minimum held outside the heap. A task that runs on before anyone else is due (the common
//! case: one thread's next access) goes in and out in O(1) instead of two heap operations;
//! the order of events is exactly the heap's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events ordered by time, ties broken by insertion order.
#[derive(Debug)]
pub struct EventQueue<E: Ord> {
    heap: BinaryHeap<Reverse<(u64, u64, E)>>,
    /// The smallest event, when it is not in the heap: never greater than the heap's top.
    front: Option<(u64, u64, E)>,
    seq: u64,
}

impl<E: Ord + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            front: None,
            seq: 0,
        }
    }
}

impl<E: Ord + Copy> EventQueue<E> {
    /// Queues `ev` at time `t`, after every event already queued at `t`.
    pub fn push(&mut self, t: u64, ev: E) {
        self.seq += 1;
        let new = (t, self.seq, ev);
        match self.front.take() {
            Some(front) if new < front => {
                self.heap.push(Reverse(front));
                self.front = Some(new);
            }
            Some(front) => {
                self.heap.push(Reverse(new));
                self.front = Some(front);
            }
            None => match self.heap.peek() {
                Some(Reverse(top)) if *top < new => self.heap.push(Reverse(new)),
                _ => self.front = Some(new),
            },
        }
    }

    /// The time of the next event.
    pub fn peek_time(&self) -> Option<u64> {
        match &self.front {
            Some((t, _, _)) => Some(*t),
            None => self.heap.peek().map(|Reverse((t, _, _))| *t),
        }
    }

    /// The next event, left in the queue: (time, event).
    pub fn peek(&self) -> Option<(u64, E)> {
        match &self.front {
            Some((t, _, ev)) => Some((*t, *ev)),
            None => self.heap.peek().map(|Reverse((t, _, ev))| (*t, *ev)),
        }
    }

    /// Takes the next event: (time, event).
    pub fn pop(&mut self) -> Option<(u64, E)> {
        let (t, _, ev) = match self.front.take() {
            Some(front) => front,
            None => self.heap.pop()?.0,
        };
        Some((t, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any interleaving of pushes and pops gives what a plain heap gives.
        #[test]
        fn pops_in_the_order_of_a_plain_heap(
            ops in prop::collection::vec(prop::option::of((0u64..20, 0u8..4)), 0..300)
        ) {
            let mut q = EventQueue::default();
            let mut plain: BinaryHeap<Reverse<(u64, u64, u8)>> = BinaryHeap::new();
            let mut seq = 0;
            for op in ops {
                match op {
                    Some((t, ev)) => {
                        q.push(t, ev);
                        seq += 1;
                        plain.push(Reverse((t, seq, ev)));
                    }
                    None => {
                        let want = plain.pop().map(|Reverse((t, _, ev))| (t, ev));
                        prop_assert_eq!(q.peek_time(), want.map(|(t, _)| t));
                        prop_assert_eq!(q.pop(), want);
                    }
                }
            }
        }
    }
}
