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

    /// Removes the event `ev` queued at `t` (the earliest inserted, if several); false if there
    /// is none. O(n): for the rare event that moves (a sleeper woken before its timeout).
    pub fn remove(&mut self, t: u64, ev: E) -> bool {
        if self.front.is_some_and(|(ft, _, fev)| ft == t && fev == ev) {
            self.front = None;
            return true;
        }
        let mut items = std::mem::take(&mut self.heap).into_vec();
        let found = items
            .iter()
            .enumerate()
            .filter(|(_, Reverse((it, _, iev)))| *it == t && *iev == ev)
            .min_by_key(|(_, Reverse((_, seq, _)))| *seq)
            .map(|(k, _)| k);
        if let Some(k) = found {
            items.swap_remove(k);
        }
        self.heap = BinaryHeap::from(items);
        found.is_some()
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

        /// Removing an event leaves the others in the order of a plain heap without it; the
        /// earliest inserted of equal events goes, and an absent one changes nothing.
        #[test]
        fn remove_takes_the_earliest_equal_event_only(
            ops in prop::collection::vec((0u8..3, 0u64..10, 0u8..3), 0..300)
        ) {
            let mut q = EventQueue::default();
            let mut plain: Vec<(u64, u64, u8)> = Vec::new();
            let mut seq = 0;
            for (op, t, ev) in ops {
                match op {
                    0 => {
                        q.push(t, ev);
                        seq += 1;
                        plain.push((t, seq, ev));
                    }
                    1 => {
                        let first = plain
                            .iter()
                            .enumerate()
                            .filter(|(_, e)| e.0 == t && e.2 == ev)
                            .min_by_key(|(_, e)| e.1)
                            .map(|(k, _)| k);
                        prop_assert_eq!(q.remove(t, ev), first.is_some());
                        if let Some(k) = first {
                            plain.remove(k);
                        }
                    }
                    _ => {
                        plain.sort();
                        let want = (!plain.is_empty()).then(|| plain.remove(0));
                        prop_assert_eq!(q.pop(), want.map(|(t, _, ev)| (t, ev)));
                    }
                }
            }
        }
    }
}
