//! The per-CPU LRU caches of mm/swap.c: `folio_add_lru` queues new folios in a batch that is
//! moved to the LRU when full or drained; `folio_activate` queues promotions likewise.

use super::{pg, Machine, Pfn, Vm};
use crate::behaviour::Behaviour;
use crate::policy::Policy;

impl Machine {
    /// Per-CPU LRU batch size (`PAGEVEC_SIZE` / folio_batch): 15 up to v6.8, 31 after.
    fn lru_batch_size(&self) -> usize {
        if self.kernel.has(Behaviour::FolioBatch31) {
            crate::consts::FOLIO_BATCH_SIZE
        } else {
            crate::consts::PAGEVEC_SIZE
        }
    }

    /// The lru_add batch's capacity: the kernel's, or at most `MachineConfig::lru_batch_cap`
    /// in a scaled-down scenario (docs/model.md §2, "Per-CPU LRU batches at small scale").
    fn lru_add_capacity(&self) -> usize {
        let size = self.lru_batch_size();
        self.cfg
            .lru_batch_cap
            .map_or(size, |cap| size.min(cap.max(1) as usize))
    }

    /// `folio_add_lru`: queue in this CPU's lru_add batch; flush when it is full.
    pub fn folio_add_lru(&mut self, pol: &mut dyn Policy, pfn: Pfn) {
        let cpu = self.ctx.cpu as usize;
        // MGLRU: a folio added while faulting on a vma with recency starts active (or, 7.2.13,
        // marked accessed).
        if self.ctx.in_lru_fault && !self.folios[pfn as usize].test(pg::MLOCKED) {
            pol.folio_add_lru_in_fault(self, pfn);
        }
        self.folios[pfn as usize].set(pg::IN_BATCH);
        self.lru_add_batch[cpu].push(pfn);
        if self.lru_add_batch[cpu].len() >= self.lru_add_capacity() {
            self.flush_lru_add(pol, cpu);
        }
    }

    /// `folio_batch_move_lru` takes each folio's lruvec lock in turn, relocking only when the
    /// lruvec changes (`folio_lruvec_relock_irqsave`): one hold per run of folios of one lruvec.
    fn lock_batch_lruvecs(&mut self, batch: &[super::Pfn]) {
        let mut run: Option<(u16, u8, u64)> = None;
        for &pfn in batch {
            let f = self.folios[pfn as usize];
            match run {
                Some((mc, n, k)) if mc == f.memcg && n == f.node => run = Some((mc, n, k + 1)),
                _ => {
                    if let Some((mc, n, k)) = run {
                        self.lru_lock(mc, n, k);
                    }
                    run = Some((f.memcg, f.node, 1));
                }
            }
        }
        if let Some((mc, n, k)) = run {
            self.lru_lock(mc, n, k);
        }
    }

    /// `folio_batch_move_lru(lru_add)`: `lru_add` for every queued folio.
    fn flush_lru_add(&mut self, pol: &mut dyn Policy, cpu: usize) {
        let mut batch = std::mem::take(&mut self.lru_add_batch[cpu]);
        self.lock_lru_add(cpu, &batch);
        for &pfn in &batch {
            self.lru_add(pol, pfn);
        }
        batch.clear();
        self.lru_add_batch[cpu] = batch;
    }

    /// The lruvec lock of an lru_add flush. Under `lru_batch_cap` the batch is smaller than the
    /// kernel's but the lock traffic per folio is not (a time cost, which scaling keeps): the
    /// lock is taken once per kernel batch's worth of folios, for all of them, with the lruvec
    /// of the flush that completes it.
    fn lock_lru_add(&mut self, cpu: usize, batch: &[Pfn]) {
        if batch.is_empty() {
            return;
        }
        if self.lru_add_capacity() == self.lru_batch_size() {
            self.lock_batch_lruvecs(batch);
            return;
        }
        self.lru_add_unlocked[cpu] += batch.len() as u32;
        if self.lru_add_unlocked[cpu] as usize >= self.lru_batch_size() {
            let f = self.folios[batch[0] as usize];
            let nr = std::mem::take(&mut self.lru_add_unlocked[cpu]);
            self.lru_lock(f.memcg, f.node, nr as u64);
        }
    }

    /// `lru_add`: set PG_lru and put the folio at the head of its list; unevictable folios are
    /// culled (counted, not linked).
    fn lru_add(&mut self, pol: &mut dyn Policy, pfn: Pfn) {
        let f = &mut self.folios[pfn as usize];
        f.clear(pg::IN_BATCH);
        if f.test(pg::MLOCKED) {
            f.clear(pg::ACTIVE);
            f.set(pg::UNEVICTABLE);
            let memcg = f.memcg;
            self.count(memcg, Vm::UnevictablePgsCulled, 1);
        }
        self.folios[pfn as usize].set(pg::LRU);
        pol.lruvec_add_folio(self, pfn, false);
    }

    /// `folio_activate`: queue a PG_lru folio for promotion in this CPU's batch.
    pub fn folio_activate(&mut self, pol: &mut dyn Policy, pfn: Pfn) {
        let cpu = self.ctx.cpu as usize;
        self.lru_activate_batch[cpu].push(pfn);
        if self.lru_activate_batch[cpu].len() >= self.lru_batch_size() {
            self.flush_lru_activate(pol, cpu);
        }
    }

    /// `lru_activate` for every queued folio still on an inactive list: move it to the active
    /// head and count PGACTIVATE.
    fn flush_lru_activate(&mut self, pol: &mut dyn Policy, cpu: usize) {
        let mut batch = std::mem::take(&mut self.lru_activate_batch[cpu]);
        self.lock_batch_lruvecs(&batch);
        for &pfn in &batch {
            let f = self.folios[pfn as usize];
            if !f.test(pg::LRU) || f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) {
                continue;
            }
            pol.lruvec_del_folio(self, pfn);
            self.folios[pfn as usize].set(pg::ACTIVE);
            pol.lruvec_add_folio(self, pfn, false);
            self.count(f.memcg, Vm::Pgactivate, 1);
        }
        batch.clear();
        self.lru_activate_batch[cpu] = batch;
    }

    /// `__lru_cache_activate_folio`: a folio still in this CPU's lru_add batch is just marked
    /// active (no PGACTIVATE). Returns whether it was found there.
    pub fn lru_cache_activate_folio(&mut self, pfn: Pfn) -> bool {
        let cpu = self.ctx.cpu as usize;
        if self.lru_add_batch[cpu].contains(&pfn) {
            self.folios[pfn as usize].set(pg::ACTIVE);
            true
        } else {
            false
        }
    }

    /// `lru_add_drain`: flush this CPU's batches.
    pub fn lru_add_drain(&mut self, pol: &mut dyn Policy) {
        let cpu = self.ctx.cpu as usize;
        self.flush_lru_add(pol, cpu);
        self.flush_lru_activate(pol, cpu);
    }

    /// `lru_add_drain_all`: flush every CPU's batches.
    pub fn lru_add_drain_all(&mut self, pol: &mut dyn Policy) {
        for cpu in 0..self.lru_add_batch.len() {
            self.flush_lru_add(pol, cpu);
            self.flush_lru_activate(pol, cpu);
        }
    }
}
