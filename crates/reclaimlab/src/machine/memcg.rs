//! Memory cgroups v2: the hierarchy, page counters, charging with limit reclaim and the memcg OOM
//! killer, memory.high, memory.low/min protection and memory.reclaim (mm/memcontrol.c,
//! mm/page_counter.c).

use super::config::MemcgConfig;
use super::{Counters, Machine, Vm};
use crate::consts::*;
use crate::policy::Policy;

/// One memory cgroup.
#[derive(Clone, Debug)]
pub struct Memcg {
    pub id: u16,
    pub parent: Option<u16>,
    pub children: Vec<u16>,
    pub path: String,
    pub online: bool,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    /// `memory.current` in pages (hierarchical: the page counter charges every ancestor).
    pub usage: u64,
    /// `memory.peak`: the page counter's watermark, the highest `usage` so far (pages).
    pub peak: u64,
    pub swap_usage: u64,
    /// Effective protection (`emin`, `elow`), computed during the reclaim walk.
    pub emin: u64,
    pub elow: u64,
    /// Event counters: memory.stat events and memory.events (local; summed for output).
    pub events: Counters,
    /// Pages charged to this memcg itself (not its children) by its folios: memory.stat's
    /// anon + file (`usage` also counts the charge stocks' pages).
    pub local_pages: u64,
    /// Pages charged to this memcg (itself, not its children) that sit in the CPUs' charge
    /// stocks (`memcg_stock_pcp`): in memory.current, in no folio and not in memory.stat.
    pub stock_pages: u64,
    /// PTE tables charged to this memcg itself (`pte_alloc`; memory.stat `pagetables`, not in
    /// `anon` or `file`).
    pub pgtable_pages: u64,
    /// Heat-level reclaim state per node (empty until first used; never for the root).
    pub heat: Vec<super::memcg_walk::HeatState>,
    /// Hierarchical NR_FILE_PAGES, NR_FILE_DIRTY and NR_WRITEBACK (pages) of this memcg and
    /// its descendants, for its dirty-throttling domain (`mem_cgroup_wb_stats`).
    pub wb_stat: [u64; 4],
    /// `wb_stat` as `mem_cgroup_wb_stats` reads it (`memcg_page_state` after the last flush;
    /// [`super::rstat`]).
    pub wb_stat_flushed: super::rstat::Flushed<4>,
    /// `wb->dirty_exceeded` of this memcg's writeback (the root's is the global wb's): a
    /// domain was over its dirty threshold at the last `balance_dirty_pages`.
    pub dirty_exceeded: bool,
}

impl Memcg {
    pub fn new(id: u16, parent: Option<u16>, path: String, cfg: &MemcgConfig) -> Self {
        Memcg {
            id,
            parent,
            children: Vec::new(),
            path,
            online: true,
            max: cfg.max,
            high: cfg.high,
            low: cfg.low,
            min: cfg.min,
            usage: 0,
            peak: 0,
            swap_usage: 0,
            emin: 0,
            elow: 0,
            events: Counters::default(),
            local_pages: 0,
            stock_pages: 0,
            pgtable_pages: 0,
            heat: Vec::new(),
            wb_stat: [0; 4],
            wb_stat_flushed: Default::default(),
            dirty_exceeded: false,
        }
    }
}

/// One CPU's memcg charge stock (`struct memcg_stock_pcp`): pages charged to a memcg's page
/// counters ahead of use, which only a charge on this CPU can take (`consume_stock`). 6.1 and
/// 6.12 cache one memcg (slot 0); from 6.16 (`Behaviour::MultiMemcgStock`) up to
/// `NR_MEMCG_STOCK`, `drain_idx` naming the slot to drain when all are taken.
#[derive(Clone, Debug, Default)]
pub struct MemcgStock {
    /// `cached[i]`: the memcg of each slot; 0 for an empty one (the root is never cached).
    pub cached: [u16; NR_MEMCG_STOCK],
    /// `nr_pages[i]`: the pages charged and not used.
    pub nr_pages: [u64; NR_MEMCG_STOCK],
    pub drain_idx: u8,
}

/// Splits "/a/b" into its parent path "/a".
fn parent_path(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    let i = path.rfind('/')?;
    Some(if i == 0 { "/" } else { &path[..i] })
}

impl Machine {
    /// Creates a memcg (mkdir in cgroupfs). The parent must exist.
    pub fn create_memcg(&mut self, cfg: &MemcgConfig) -> Result<u16, String> {
        if !cfg.path.starts_with('/') || cfg.path.ends_with('/') && cfg.path != "/" {
            return Err(format!(
                "memcg path '{}' must start with '/' and not end with one",
                cfg.path
            ));
        }
        if self.memcg_by_path(&cfg.path).is_some() {
            return Err(format!("memcg '{}' declared twice", cfg.path));
        }
        let parent_p = parent_path(&cfg.path).ok_or("the root memcg cannot be created")?;
        let parent = self
            .memcg_by_path(parent_p)
            .ok_or_else(|| format!("memcg '{}': parent '{parent_p}' does not exist", cfg.path))?;
        let id = self.memcgs.len();
        if id >= (1 << MEM_CGROUP_ID_SHIFT) - 1 {
            return Err("too many memcgs".into());
        }
        let id = id as u16;
        self.memcgs
            .push(Memcg::new(id, Some(parent), cfg.path.clone(), cfg));
        self.memcgs[parent as usize].children.push(id);
        Ok(id)
    }

    /// The ancestors of a memcg, itself first, up to and including the root.
    pub fn memcg_ancestors(&self, memcg: u16) -> impl Iterator<Item = u16> + '_ {
        let mut cur = Some(memcg);
        std::iter::from_fn(move || {
            let c = cur?;
            cur = self.memcgs[c as usize].parent;
            Some(c)
        })
    }

    /// Applies `f` to the memcg and each ancestor up to the root (a page counter walk),
    /// without allocating.
    pub fn for_each_ancestor(&mut self, memcg: u16, mut f: impl FnMut(&mut Memcg)) {
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            f(&mut self.memcgs[c as usize]);
            cur = self.memcgs[c as usize].parent;
        }
    }

    /// `uncharge_batch` of one page: `page_counter_uncharge` straight from the folio (no
    /// charge stock on this path, in 6.1, 6.12 and 7.2 alike).
    pub fn memcg_uncharge(&mut self, memcg: u16) {
        self.memcgs[memcg as usize].local_pages -= 1;
        self.page_counter_uncharge(memcg, 1);
    }

    /// `page_counter_uncharge`: `nr` pages off the memcg's and every ancestor's usage.
    fn page_counter_uncharge(&mut self, memcg: u16, nr: u64) {
        self.usage_epoch += 1;
        self.for_each_ancestor(memcg, |mc| mc.usage -= nr);
    }

    /// `page_counter_try_charge`: the first level (walking up) whose memory.max would be
    /// exceeded, or None after charging every level.
    fn page_counter_try_charge(&mut self, memcg: u16, nr: u64) -> Option<u16> {
        if let Some(over) = self.memcg_ancestors(memcg).find(|&c| {
            let mc = &self.memcgs[c as usize];
            c != 0 && mc.usage + nr > mc.max
        }) {
            return Some(over);
        }
        self.usage_epoch += 1;
        self.for_each_ancestor(memcg, |mc| {
            mc.usage += nr;
            mc.peak = mc.peak.max(mc.usage);
        });
        None
    }

    /// `MEMCG_CHARGE_BATCH`, or the scaled scenario's cap on it.
    pub fn memcg_charge_batch(&self) -> u64 {
        self.cfg
            .memcg_charge_batch_cap
            .map_or(MEMCG_CHARGE_BATCH, |cap| {
                MEMCG_CHARGE_BATCH.min(u64::from(cap.max(1)))
            })
    }

    /// The memcgs a CPU's charge stock can cache at once.
    fn memcg_stock_slots(&self) -> usize {
        if self.kernel.has(Behaviour::MultiMemcgStock) {
            NR_MEMCG_STOCK
        } else {
            1
        }
    }

    /// `consume_stock`: takes `nr` pages from the current CPU's stock of `memcg`, if it holds
    /// that many (and `nr` is at most a batch).
    pub fn consume_stock(&mut self, memcg: u16, nr: u64) -> bool {
        if nr > self.memcg_charge_batch() {
            return false;
        }
        let slots = self.memcg_stock_slots();
        let stock = &mut self.memcg_stock[self.ctx.cpu as usize];
        let Some(i) = (0..slots).find(|&i| stock.cached[i] == memcg) else {
            return false;
        };
        if stock.nr_pages[i] < nr {
            return false;
        }
        stock.nr_pages[i] -= nr;
        self.memcgs[memcg as usize].stock_pages -= nr;
        true
    }

    /// `drain_stock`: gives slot `i` of a CPU's stock back to its memcg's page counters and
    /// empties it.
    fn drain_stock(&mut self, cpu: usize, i: usize) {
        let stock = &mut self.memcg_stock[cpu];
        let (memcg, nr) = (stock.cached[i], stock.nr_pages[i]);
        stock.cached[i] = 0;
        stock.nr_pages[i] = 0;
        if memcg != 0 && nr > 0 {
            self.memcgs[memcg as usize].stock_pages -= nr;
            self.page_counter_uncharge(memcg, nr);
        }
    }

    /// `drain_local_stock` (6.1, 6.12) / `drain_local_memcg_stock` (`drain_stock_fully`):
    /// empties every slot of a CPU's stock.
    fn drain_local_stock(&mut self, cpu: usize) {
        for i in 0..self.memcg_stock_slots() {
            self.drain_stock(cpu, i);
        }
    }

    /// `refill_stock` (6.1, 6.12: `__refill_stock`): puts `nr` charged pages of `memcg` in the
    /// current CPU's stock, draining the slot it takes from another memcg, and the slot itself
    /// once it holds more than a batch.
    pub fn refill_stock(&mut self, memcg: u16, nr: u64) {
        let batch = self.memcg_charge_batch();
        let cpu = self.ctx.cpu as usize;
        let i = if self.kernel.has(Behaviour::MultiMemcgStock) {
            // More than a batch is uncharged at once (never from try_charge_memcg, whose
            // surplus is below a batch).
            if nr > batch {
                self.page_counter_uncharge(memcg, nr);
                return;
            }
            let stock = &self.memcg_stock[cpu];
            match stock.cached.iter().position(|&c| c == memcg) {
                Some(i) => i,
                None => {
                    let i = match stock.cached.iter().position(|&c| c == 0) {
                        Some(i) => i,
                        None => {
                            let stock = &mut self.memcg_stock[cpu];
                            let i = stock.drain_idx as usize;
                            stock.drain_idx = ((i + 1) % NR_MEMCG_STOCK) as u8;
                            self.drain_stock(cpu, i);
                            i
                        }
                    };
                    self.memcg_stock[cpu].cached[i] = memcg;
                    i
                }
            }
        } else {
            if self.memcg_stock[cpu].cached[0] != memcg {
                self.drain_stock(cpu, 0);
                self.memcg_stock[cpu].cached[0] = memcg;
            }
            0
        };
        self.memcg_stock[cpu].nr_pages[i] += nr;
        self.memcgs[memcg as usize].stock_pages += nr;
        if self.memcg_stock[cpu].nr_pages[i] > batch {
            self.drain_stock(cpu, i);
        }
    }

    /// `drain_all_stock`: drains every CPU's stock that holds pages of `root` or a descendant:
    /// the current CPU's at once, the others' by a work item queued on their CPU
    /// (`schedule_work_on`), which `run_stock_drain_work` runs. A CPU with a drain still
    /// queued (FLUSHING_CACHED_CHARGE) is skipped.
    pub fn drain_all_stock(&mut self, root: u16) {
        let cur = self.ctx.cpu;
        let slots = self.memcg_stock_slots();
        for cpu in 0..self.memcg_stock.len() as u32 {
            if self.stock_drain_work.contains(&cpu) {
                continue;
            }
            let stock = &self.memcg_stock[cpu as usize];
            let flush = (0..slots).any(|i| {
                stock.cached[i] != 0
                    && stock.nr_pages[i] > 0
                    && is_descendant(&self.memcgs, stock.cached[i], root)
            });
            if !flush {
                continue;
            }
            if cpu == cur {
                self.drain_local_stock(cpu as usize);
            } else {
                self.stock_drain_work.push(cpu);
            }
        }
    }

    /// The drains `drain_all_stock` queued on other CPUs run (their kworkers).
    pub fn run_stock_drain_work(&mut self) {
        for cpu in std::mem::take(&mut self.stock_drain_work) {
            self.drain_local_stock(cpu as usize);
        }
    }

    /// Headroom below memory.max of a memcg (`mem_cgroup_margin`).
    pub fn memcg_margin(&self, memcg: u16) -> u64 {
        let mc = &self.memcgs[memcg as usize];
        mc.max.saturating_sub(mc.usage)
    }

    /// `try_charge_memcg`'s first charge size: `max(MEMCG_CHARGE_BATCH, nr_pages)`; the root
    /// memcg charges `nr` alone (`try_charge` returns before `try_charge_memcg` for it, so it
    /// has no stock).
    fn charge_batch_for(&self, memcg: u16, nr: u64) -> u64 {
        if memcg == 0 {
            nr
        } else {
            self.memcg_charge_batch().max(nr)
        }
    }

    /// One attempt of `try_charge_memcg` (its `retry:` label): `consume_stock`, else
    /// `page_counter_try_charge` of `batch` pages with the surplus over `nr` to the stock
    /// (`done_restock` → `refill_stock`). None once charged, else the first level (walking
    /// up) whose memory.max `batch` would exceed.
    fn charge_attempt(&mut self, memcg: u16, nr: u64, batch: u64) -> Option<u16> {
        if memcg == 0 || !self.consume_stock(memcg, nr) {
            if let Some(over) = self.page_counter_try_charge(memcg, batch) {
                return Some(over);
            }
            if batch > nr {
                self.refill_stock(memcg, batch - nr);
            }
        }
        self.memcgs[memcg as usize].local_pages += nr;
        None
    }

    /// `try_charge_memcg` for one page: limit reclaim, MAX_RECLAIM_RETRIES zero-progress retries,
    /// then the memcg OOM killer. Returns false when the charge failed (the task was killed,
    /// nothing could be killed, or the task yielded: `ctx.yielded`, the loop's state saved in
    /// `resume.charge`).
    pub fn try_charge(&mut self, pol: &mut dyn Policy, memcg: u16, nr: u64) -> bool {
        let charged = self.try_charge_memcg(pol, memcg, nr);
        // The drains drain_all_stock queued on other CPUs have run by the time it returns.
        self.run_stock_drain_work();
        charged
    }

    fn try_charge_memcg(&mut self, pol: &mut dyn Policy, memcg: u16, nr: u64) -> bool {
        let (mut retries, mut drained, mut batch) = match self.resume.charge.take() {
            Some(c) if c.memcg == memcg => (c.retries, c.drained, c.batch),
            _ => (MAX_RECLAIM_RETRIES, false, self.charge_batch_for(memcg, nr)),
        };
        loop {
            let Some(over) = self.charge_attempt(memcg, nr, batch) else {
                self.resume
                    .reclaim
                    .take_if(|sc| sc.target_mem_cgroup.is_some());
                self.note_over_high(memcg, nr);
                return true;
            };
            // A failed batch falls back to the pages asked for, for the rest of the call.
            if batch > nr {
                batch = nr;
                continue;
            }
            // A reclaim the task was preempted in goes on: the same attempt, no new event.
            let in_reclaim = self
                .resume
                .reclaim
                .as_ref()
                .is_some_and(|sc| sc.target_mem_cgroup == Some(over));
            if !in_reclaim {
                self.count_memcg(over, Vm::MemcgMax, 1);
            }
            // Drains queued on other CPUs by the last drain_all_stock have run by now.
            self.run_stock_drain_work();
            let reclaimed = self.memcg_reclaim_stalled(pol, over, nr);
            if self.ctx.yielded {
                return self.charge_yield(memcg, retries, drained, batch);
            }
            if self.memcg_margin(over) >= nr {
                continue;
            }
            if !drained {
                self.drain_all_stock(over);
                drained = true;
                continue;
            }
            if reclaimed > 0 && nr <= 8 {
                if self.preempt_point(pol) {
                    return self.charge_yield(memcg, retries, drained, batch);
                }
                continue;
            }
            if retries > 0 {
                retries -= 1;
                if self.preempt_point(pol) {
                    return self.charge_yield(memcg, retries, drained, batch);
                }
                continue;
            }
            if self.defer_oom_to_top_level() {
                return self.charge_yield(memcg, 0, drained, batch);
            }
            // mem_cgroup_oom: a kill resets the retries; no victim means -ENOMEM.
            self.count_memcg(over, Vm::MemcgOom, 1);
            if self.ctx.killed || !self.out_of_memory(pol, Some(over)) {
                return false;
            }
            if self.ctx.killed {
                return false;
            }
            retries = MAX_RECLAIM_RETRIES;
        }
    }

    /// `try_charge_memcg` with `__GFP_NORETRY` (readahead): limit reclaim, one more round
    /// after `drain_all_stock`, then failure; never the OOM killer. The caller has yields
    /// turned off.
    pub fn try_charge_noretry(&mut self, pol: &mut dyn Policy, memcg: u16, nr: u64) -> bool {
        let charged = self.try_charge_memcg_noretry(pol, memcg, nr);
        self.run_stock_drain_work();
        charged
    }

    fn try_charge_memcg_noretry(&mut self, pol: &mut dyn Policy, memcg: u16, nr: u64) -> bool {
        let mut batch = self.charge_batch_for(memcg, nr);
        let mut drained = false;
        loop {
            let Some(over) = self.charge_attempt(memcg, nr, batch) else {
                self.note_over_high(memcg, nr);
                return true;
            };
            if batch > nr {
                batch = nr;
                continue;
            }
            self.count_memcg(over, Vm::MemcgMax, 1);
            self.run_stock_drain_work();
            self.memcg_reclaim_stalled(pol, over, nr);
            if self.memcg_margin(over) >= nr {
                continue;
            }
            if !drained {
                self.drain_all_stock(over);
                drained = true;
                continue;
            }
            // __GFP_NORETRY: -ENOMEM.
            return false;
        }
    }

    /// The charging task yields: its retry loop resumes later where it stopped.
    fn charge_yield(&mut self, memcg: u16, retries: u32, drained: bool, batch: u64) -> bool {
        self.resume.charge = Some(super::ChargeLoop {
            memcg,
            retries,
            drained,
            batch,
        });
        false
    }

    /// Records pages charged above memory.high (`current->memcg_nr_pages_over_high`).
    fn note_over_high(&mut self, memcg: u16, nr: u64) {
        let over = self.memcg_ancestors(memcg).any(|c| {
            let mc = &self.memcgs[c as usize];
            c != 0 && mc.usage > mc.high
        });
        if over {
            self.ctx.over_high += nr;
            self.ctx.over_high_memcg = memcg;
        }
    }

    /// `mem_cgroup_handle_over_high`, run on the way back to user space after an access.
    pub fn handle_over_high(&mut self, pol: &mut dyn Policy) {
        let nr_pages = std::mem::take(&mut self.ctx.over_high);
        if nr_pages == 0 || self.ctx.killed {
            return;
        }
        let memcg = self.ctx.over_high_memcg;
        let mut retries = MAX_RECLAIM_RETRIES;
        let mut in_retry = false;
        loop {
            let reclaimed = self.reclaim_high(pol, memcg, if in_retry { 32 } else { nr_pages });
            let penalty = self.high_penalty_jiffies(memcg, nr_pages);
            if penalty <= HZ / 100 {
                return;
            }
            if reclaimed > 0 || retries > 0 {
                if reclaimed == 0 {
                    retries -= 1;
                }
                in_retry = true;
                continue;
            }
            let ns = penalty * NS_PER_JIFFY;
            // mem_cgroup_handle_over_high: the penalty sleep is a memory stall.
            let stall = self.psi_memstall_enter();
            self.spend_throttled(ns);
            self.psi_memstall_leave(stall);
            self.ctx.reclaim_ns += ns;
            self.count(memcg, Vm::ThrottleNs, ns);
            return;
        }
    }

    /// `reclaim_high`: reclaim from the memcg and each non-root ancestor above memory.high.
    fn reclaim_high(&mut self, pol: &mut dyn Policy, memcg: u16, nr: u64) -> u64 {
        let mut reclaimed = 0;
        for c in self.memcg_ancestors(memcg).collect::<Vec<_>>() {
            let mc = &self.memcgs[c as usize];
            if c == 0 || mc.usage <= mc.high {
                continue;
            }
            self.count_memcg(c, Vm::MemcgHigh, 1);
            reclaimed += self.memcg_reclaim_stalled(pol, c, nr);
        }
        reclaimed
    }

    /// `try_to_free_mem_cgroup_pages` of `memcg` (may swap) as the charge path and
    /// `reclaim_high` run it: a PSI memory stall (`psi_memstall_enter`/`leave`). Returns the
    /// pages reclaimed.
    fn memcg_reclaim_stalled(&mut self, pol: &mut dyn Policy, memcg: u16, nr: u64) -> u64 {
        let stall = self.psi_memstall_enter();
        let reclaimed =
            super::vmscan::try_to_free_mem_cgroup_pages(self, pol, memcg, nr, true, false, None);
        self.psi_memstall_leave(stall);
        reclaimed
    }

    /// `calculate_high_delay` in jiffies.
    fn high_penalty_jiffies(&self, memcg: u16, nr_pages: u64) -> u64 {
        let max_overage = self
            .memcg_ancestors(memcg)
            .filter(|&c| c != 0)
            .map(|c| {
                let mc = &self.memcgs[c as usize];
                if mc.usage <= mc.high {
                    0
                } else {
                    ((mc.usage - mc.high) << 20) / mc.high.max(1)
                }
            })
            .max()
            .unwrap_or(0) as u128;
        let penalty = ((max_overage * max_overage * HZ as u128) >> 20 >> 14) * nr_pages as u128
            / MEMCG_CHARGE_BATCH as u128;
        (penalty.min(MEMCG_MAX_HIGH_DELAY_JIFFIES as u128)) as u64
    }

    /// `mem_cgroup_calculate_protection` → `page_counter_calculate_protection` for `memcg`
    /// under reclaim root `root` (non-recursive-prot semantics).
    pub fn calculate_protection(&mut self, root: u16, memcg: u16) {
        if memcg == root || memcg == 0 {
            return;
        }
        let usage = self.memcgs[memcg as usize].usage;
        if usage == 0 {
            return;
        }
        let parent = self.memcgs[memcg as usize].parent.unwrap_or(0);
        let (min, low) = (
            self.memcgs[memcg as usize].min,
            self.memcgs[memcg as usize].low,
        );
        if parent == root {
            let mc = &mut self.memcgs[memcg as usize];
            mc.emin = min;
            mc.elow = low;
            return;
        }
        let (p_emin, p_elow) = (
            self.memcgs[parent as usize].emin,
            self.memcgs[parent as usize].elow,
        );
        let (sib_min, sib_low) = self.children_protected_usage(parent);
        let emin = effective_protection(usage, min, p_emin, sib_min);
        let elow = effective_protection(usage, low, p_elow, sib_low);
        let mc = &mut self.memcgs[memcg as usize];
        mc.emin = emin;
        mc.elow = elow;
    }

    /// `children_min_usage` / `children_low_usage` of a parent.
    fn children_protected_usage(&self, parent: u16) -> (u64, u64) {
        self.memcgs[parent as usize]
            .children
            .iter()
            .map(|&c| &self.memcgs[c as usize])
            .filter(|c| c.online)
            .fold((0, 0), |(a, b), c| {
                (a + c.usage.min(c.min), b + c.usage.min(c.low))
            })
    }

    /// `mem_cgroup_below_min(target, memcg)`.
    pub fn below_min(&self, target: u16, memcg: u16) -> bool {
        let mc = &self.memcgs[memcg as usize];
        memcg != target && memcg != 0 && mc.emin >= mc.usage
    }

    /// `mem_cgroup_below_low(target, memcg)`.
    pub fn below_low(&self, target: u16, memcg: u16) -> bool {
        let mc = &self.memcgs[memcg as usize];
        memcg != target && memcg != 0 && mc.elow >= mc.usage
    }

    /// `mem_cgroup_protection(target, memcg)`: effective (min, low), (0, 0) for the target or root.
    pub fn memcg_protection(&self, target: u16, memcg: u16) -> (u64, u64) {
        if memcg == target || memcg == 0 {
            return (0, 0);
        }
        let mc = &self.memcgs[memcg as usize];
        (mc.emin, mc.elow)
    }

    /// `memory_reclaim`: proactive reclaim of `nr_pages` from a memcg, with the era's batch and
    /// optional swappiness. Returns Err with the kernel's errno name on failure.
    pub fn memory_reclaim(
        &mut self,
        pol: &mut dyn Policy,
        memcg: u16,
        nr_pages: u64,
        swappiness: Option<u32>,
    ) -> Result<u64, &'static str> {
        if swappiness.is_some() && !self.kernel.has(Behaviour::MemoryReclaimSwappiness) {
            return Err("EINVAL");
        }
        // `swappiness=max` (SWAPPINESS_ANON_ONLY) exists from the 7.x kernels (Era D).
        let limit = if self.kernel.has(Behaviour::SwappinessAnonOnly) {
            SWAPPINESS_ANON_ONLY
        } else {
            MAX_SWAPPINESS
        };
        if swappiness.is_some_and(|s| s > limit) {
            return Err("EINVAL");
        }
        let mut done = 0;
        let mut retries = MAX_RECLAIM_RETRIES;
        while done < nr_pages {
            // The final attempt drains the per-CPU LRU caches first.
            if retries == 0 {
                self.lru_add_drain_all(pol);
            }
            let remaining = nr_pages - done;
            let batch = if self.kernel.has(Behaviour::MemoryReclaimQuarterBatch) {
                remaining / 4
            } else {
                remaining
            };
            let r = super::vmscan::try_to_free_mem_cgroup_pages(
                self, pol, memcg, batch, true, true, swappiness,
            );
            // `if (!reclaimed && !nr_retries--) return -EAGAIN`: 17 fruitless calls.
            if r == 0 && !post_decrement(&mut retries) {
                return Err("EAGAIN");
            }
            done += r;
        }
        Ok(done)
    }

    /// `memory_high_write`: set memory.high, then reclaim down to it, giving up after
    /// MAX_RECLAIM_RETRIES calls that reclaim nothing. Never OOM-kills.
    pub fn set_memory_high(&mut self, pol: &mut dyn Policy, memcg: u16, high: u64) {
        self.memcgs[memcg as usize].high = high;
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        let mut drained = false;
        while self.memcgs[memcg as usize].usage > high {
            if !drained {
                self.drain_all_stock(memcg);
                drained = true;
                continue;
            }
            self.run_stock_drain_work();
            let over = self.memcgs[memcg as usize].usage.saturating_sub(high);
            if over == 0 {
                continue;
            }
            let r = super::vmscan::try_to_free_mem_cgroup_pages(
                self, pol, memcg, over, true, false, None,
            );
            if r == 0 && !post_decrement(&mut nr_retries) {
                break;
            }
        }
        self.run_stock_drain_work();
    }

    /// `memory_max_write`: set memory.max, reclaim down to it, then OOM-kill if needed.
    pub fn set_memory_max(&mut self, pol: &mut dyn Policy, memcg: u16, max: u64) {
        self.memcgs[memcg as usize].max = max;
        let mut nr_reclaims = MAX_RECLAIM_RETRIES;
        let mut drained = false;
        loop {
            let usage = self.memcgs[memcg as usize].usage;
            if usage <= max {
                break;
            }
            if !drained {
                self.drain_all_stock(memcg);
                drained = true;
                continue;
            }
            self.run_stock_drain_work();
            let usage = self.memcgs[memcg as usize].usage;
            if usage <= max {
                break;
            }
            if nr_reclaims > 0 {
                let r = super::vmscan::try_to_free_mem_cgroup_pages(
                    self,
                    pol,
                    memcg,
                    usage - max,
                    true,
                    false,
                    None,
                );
                if r == 0 {
                    nr_reclaims -= 1;
                }
                continue;
            }
            self.count_memcg(memcg, Vm::MemcgOom, 1);
            if !self.out_of_memory(pol, Some(memcg)) {
                break;
            }
        }
        self.run_stock_drain_work();
    }
}

/// `effective_protection` (mm/page_counter.c) without memory_recursiveprot.
pub fn effective_protection(
    usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings_protected: u64,
) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective && siblings_protected > 0 {
        (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64
    } else {
        protected
    }
}

/// The kernel's `nr_retries--` in a condition: true if retries were left (and uses one).
fn post_decrement(retries: &mut u32) -> bool {
    let left = *retries > 0;
    *retries = retries.saturating_sub(1);
    left
}

/// Is `memcg` equal to `ancestor` or below it (`mem_cgroup_is_descendant`)?
pub fn is_descendant(memcgs: &[Memcg], mut memcg: u16, ancestor: u16) -> bool {
    loop {
        if memcg == ancestor {
            return true;
        }
        match memcgs[memcg as usize].parent {
            Some(p) => memcg = p,
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protection_is_shared_proportionally_when_overcommitted() {
        // Two children each claim 100 of a parent's 100 effective: each gets 50.
        assert_eq!(effective_protection(200, 100, 100, 200), 50);
        // Not overcommitted: the child's own min(usage, setting).
        assert_eq!(effective_protection(80, 100, 300, 180), 80);
    }

    /// `__refill_stock` / 7.x `refill_stock`: a stock of exactly a batch is kept, one above
    /// it is drained (`drain_stock` uncharges every page and empties the slot); 7.x gives a
    /// refill of more than a batch straight back (`memcg_uncharge`).
    #[test]
    fn a_stock_above_a_batch_is_drained() {
        use crate::machine::MachineConfig;
        for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_2] {
            let mut cfg = MachineConfig::simple(4096);
            cfg.kernel = kernel;
            cfg.memcgs = vec![MemcgConfig::new("/a").with_max(4096)];
            let mut m = Machine::new(cfg).unwrap();
            let a = m.memcg_by_path("/a").unwrap();
            let stock = |m: &Machine| (m.memcg_stock[0].cached[0], m.memcg_stock[0].nr_pages[0]);
            assert!(m.page_counter_try_charge(a, 60).is_none());
            m.refill_stock(a, 60);
            assert!(m.page_counter_try_charge(a, 4).is_none());
            m.refill_stock(a, 4);
            assert_eq!(
                stock(&m),
                (a, MEMCG_CHARGE_BATCH),
                "{kernel}: a batch is kept"
            );
            assert_eq!(m.memcgs[a as usize].usage, MEMCG_CHARGE_BATCH);
            assert!(m.page_counter_try_charge(a, 1).is_none());
            m.refill_stock(a, 1);
            assert_eq!(stock(&m), (0, 0), "{kernel}: above a batch: drained");
            assert_eq!(m.memcgs[a as usize].usage, 0, "{kernel}");
            assert_eq!(m.memcgs[a as usize].stock_pages, 0, "{kernel}");
            assert!(m.page_counter_try_charge(a, 65).is_none());
            m.refill_stock(a, 65);
            assert_eq!(stock(&m), (0, 0), "{kernel}");
            assert_eq!(m.memcgs[a as usize].usage, 0, "{kernel}");
        }
    }

    #[test]
    fn parent_path_splits() {
        assert_eq!(parent_path("/a"), Some("/"));
        assert_eq!(parent_path("/a/b"), Some("/a"));
        assert_eq!(parent_path("/"), None);
    }
}
