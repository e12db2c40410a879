//! The memcg LRU of vmscan.c's MGLRU (per node, root reclaim only): `shrink_one`,
//! `lru_gen_rotate_memcg`, `shrink_many`, `lru_gen_shrink_node`, and cgroup reclaim's
//! `shrink_node_memcgs`.

use super::*;

/// The per-node memcg LRU (`pgdat->memcg_lru`).
#[derive(Clone, Debug)]
pub(super) struct MemcgLru {
    pub(super) seq: usize,
    pub(super) nr_memcgs: [usize; MEMCG_NR_GENS],
    pub(super) fifo: Vec<Vec<std::collections::VecDeque<u16>>>,
}

impl MemcgLru {
    pub(super) fn new() -> Self {
        MemcgLru {
            seq: 0,
            nr_memcgs: [0; MEMCG_NR_GENS],
            fifo: vec![vec![Default::default(); MEMCG_NR_BINS]; MEMCG_NR_GENS],
        }
    }
    pub(super) fn old(&self) -> usize {
        self.seq % MEMCG_NR_GENS
    }
    pub(super) fn young(&self) -> usize {
        (self.seq + 1) % MEMCG_NR_GENS
    }
}

impl Mglru {
    /// `shrink_one`: reclaim one memcg's lruvec under root reclaim; returns the memcg-LRU op.
    pub(super) fn shrink_one(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) -> MemcgLruOp {
        let lv = self.lv(memcg, node);
        m.calculate_protection(0, memcg);
        if m.below_min(0, memcg) {
            return MemcgLruOp::Young;
        }
        if m.below_low(0, memcg) {
            if self.lruvecs[lv].seg != SEG_TAIL {
                return MemcgLruOp::Tail;
            }
            m.count_memcg(memcg, Vm::MemcgLow, 1);
        }
        let success = self.try_to_shrink_lruvec(m, memcg, node, sc);
        if success && m.memcgs[memcg as usize].online {
            return MemcgLruOp::Young;
        }
        let swappiness = self.get_swappiness(m, sc);
        if !success && self.lruvec_is_sizable(m, self.lruvec_of(memcg, node), sc, swappiness) {
            return MemcgLruOp::None;
        }
        if self.lruvecs[lv].seg != SEG_TAIL {
            MemcgLruOp::Tail
        } else {
            MemcgLruOp::Young
        }
    }

    /// `lru_gen_rotate_memcg`.
    pub(super) fn rotate_memcg(&mut self, memcg: u16, node: u8, op: MemcgLruOp) {
        if op == MemcgLruOp::None {
            return;
        }
        let lv = self.lv(memcg, node);
        let lru = &mut self.memcg_lru[node as usize];
        let (old_gen, seg) = (self.lruvecs[lv].mgen, self.lruvecs[lv].seg);
        let _ = seg;
        for bin in lru.fifo[old_gen].iter_mut() {
            if let Some(pos) = bin.iter().position(|&x| x == memcg) {
                bin.remove(pos);
                break;
            }
        }
        let (new_gen, new_seg, head) = match op {
            MemcgLruOp::Head => (old_gen, SEG_HEAD, true),
            MemcgLruOp::Tail => (old_gen, SEG_TAIL, false),
            MemcgLruOp::Old => (lru.old(), 0, true),
            MemcgLruOp::Young => (lru.young(), 0, false),
            MemcgLruOp::None => unreachable!(),
        };
        let bin = self.rng.random_range(0..MEMCG_NR_BINS);
        let lru = &mut self.memcg_lru[node as usize];
        if head {
            lru.fifo[new_gen][bin].push_front(memcg);
        } else {
            lru.fifo[new_gen][bin].push_back(memcg);
        }
        lru.nr_memcgs[old_gen] -= 1;
        lru.nr_memcgs[new_gen] += 1;
        if lru.nr_memcgs[old_gen] == 0 && old_gen == lru.old() {
            lru.seq += 1;
        }
        self.lruvecs[lv].mgen = new_gen;
        self.lruvecs[lv].seg = new_seg;
    }

    /// `shrink_many`: walk the memcg LRU's old generation, bin by bin from a random one.
    pub(super) fn shrink_many(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let gen = self.memcg_lru[node as usize].old();
        let first_bin = self.rng.random_range(0..MEMCG_NR_BINS);
        for i in 0..MEMCG_NR_BINS {
            let bin = (first_bin + i) % MEMCG_NR_BINS;
            let members: Vec<u16> = self.memcg_lru[node as usize].fifo[gen][bin]
                .iter()
                .copied()
                .collect();
            for memcg in members {
                let lv = self.lv(memcg, node);
                if self.lruvecs[lv].mgen != gen || !m.memcgs[memcg as usize].online {
                    continue;
                }
                let op = self.shrink_one(m, memcg, node, sc);
                self.rotate_memcg(memcg, node, op);
                if self.should_abort_scan(m, node, sc) {
                    return;
                }
            }
        }
    }

    /// `set_initial_priority`.
    pub(super) fn set_initial_priority(&self, m: &Machine, node: u8, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let mut reclaimable = 0;
        // Anon counts when any swap is configured (can_reclaim_anon_pages).
        let anon = m.swap.total() > 0;
        for memcg in 0..m.memcgs.len() as u16 {
            let l = self.lru_pages(memcg, node);
            reclaimable += l[2] + if anon { l[0] } else { 0 };
        }
        let fls = |x: u64| 64 - x.leading_zeros() as i32;
        let p = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = p.clamp(6, DEF_PRIORITY);
    }

    /// `lru_gen_shrink_node`: root reclaim (kswapd, direct, root memory.reclaim).
    pub(super) fn lru_gen_shrink_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        if !sc.may_writepage || !sc.may_unmap {
            return;
        }
        m.lru_add_drain(self);
        // set_mm_walk .. clear_mm_walk: a walker the pass allocates ends with it.
        let walker = sc.mm_walker;
        self.set_initial_priority(m, node, sc);
        let saved = sc.nr_reclaimed;
        if sc.is_kswapd {
            sc.nr_reclaimed = 0;
        }
        let before = sc.nr_reclaimed;
        if self.cfg.memcg_walk == MemcgWalk::MemcgLru {
            self.shrink_many(m, node, sc);
        } else {
            self.shrink_node_memcgs_root(m, node, sc);
        }
        let reclaimed = sc.nr_reclaimed - before;
        if sc.is_kswapd {
            sc.nr_reclaimed += saved;
        }
        sc.mm_walker = walker;
        if reclaimed > 0 {
            m.nodes[node as usize].kswapd_failures = 0;
        }
    }

    /// Root reclaim without the memcg LRU (the heat-level RFC's patches 4, 5 and 7):
    /// `shrink_node_memcgs`, skipping memcgs too small for the priority, `try_to_shrink_lruvec`
    /// per memcg (no rotation), stopping on `should_abort_scan`.
    pub(super) fn shrink_node_memcgs_root(
        &mut self,
        m: &mut Machine,
        node: u8,
        sc: &mut ScanControl,
    ) {
        let walk = self.cfg.memcg_walk;
        m.walk_memcgs(node, sc, walk, |m, sc, memcg| {
            let lruvec = self.lruvec_of(memcg, node);
            let swappiness = self.get_swappiness(m, sc);
            if !self.lruvec_is_sizable(m, lruvec, sc, swappiness) {
                return Visit::Skipped;
            }
            self.try_to_shrink_lruvec(m, memcg, node, sc);
            Visit::Reclaimed {
                abort: self.should_abort_scan(m, node, sc),
            }
        });
    }

    /// Cgroup reclaim: `shrink_node_memcgs` → `lru_gen_shrink_lruvec` per memcg, partially
    /// with the shared reclaim cookie (stopping at the goal) as in the classical LRU.
    pub(super) fn shrink_node_memcgs(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let root = sc.root();
        let before = sc.nr_reclaimed;
        let walk = self.cfg.memcg_walk;
        m.walk_memcgs(node, sc, walk, |m, sc, memcg| {
            // lru_gen_shrink_lruvec: set_mm_walk .. clear_mm_walk around the lruvec pass.
            m.lru_add_drain(self);
            let walker = sc.mm_walker;
            let rotate = self.try_to_shrink_lruvec(m, memcg, node, sc);
            sc.mm_walker = walker;
            if rotate && walk == MemcgWalk::MemcgLru {
                self.rotate_memcg(memcg, node, MemcgLruOp::Young);
            }
            Visit::Reclaimed { abort: false }
        });
        // Patch 15: the classical congestion post-processing now applies to MGLRU.
        if self.has(Behaviour::UnifyWritebackThrottling) {
            if sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
                m.congested(root, node)[1] = true;
            }
            if !sc.is_kswapd && m.congested(root, node).iter().any(|&c| c) {
                reclaim_throttle(m, self, node, VmscanThrottle::Congested);
            }
        }
        if sc.nr_reclaimed > before {
            m.nodes[node as usize].kswapd_failures = 0;
        }
    }
}
