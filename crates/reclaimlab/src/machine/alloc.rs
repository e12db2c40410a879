//! Page allocation with watermarks, kswapd wake-ups, direct reclaim, the retry gate and the OOM
//! killer (mm/page_alloc.c, mm/oom_kill.c). Order-0 allocations only.

use super::{Machine, Pfn, Vm};
use crate::consts::*;
use crate::policy::Policy;

/// Which watermark an allocation attempt must stay above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wmark {
    Min,
    Low,
    High,
}

impl Machine {
    /// `__zone_watermark_ok` for order 0: free pages strictly above the mark.
    pub fn zone_watermark_ok(&self, node: u8, mark: Wmark) -> bool {
        let n = &self.nodes[node as usize];
        let m = match mark {
            Wmark::Min => n.wmark.min,
            Wmark::Low => n.wmark.low,
            Wmark::High => n.wmark.high,
        };
        n.nr_free() > m
    }

    /// `pgdat_balanced` for a single zone at order 0: free pages above the high watermark.
    pub fn pgdat_balanced(&self, node: u8) -> bool {
        self.zone_watermark_ok(node, Wmark::High)
    }

    /// The zonelist: the preferred node first, then the others in order.
    fn zonelist(&self, preferred: u8) -> impl Iterator<Item = u8> {
        let n = self.nodes.len() as u8;
        (0..n).map(move |i| (preferred + i) % n)
    }

    /// `get_page_from_freelist` at a watermark.
    fn get_page_from_freelist(&mut self, preferred: u8, mark: Wmark) -> Option<Pfn> {
        let node = self
            .zonelist(preferred)
            .find(|&n| self.zone_watermark_ok(n, mark))?;
        self.take_from_node(node)
    }

    /// Takes a free frame of `node`; the frame's folio records its node (`folio_nid`).
    fn take_from_node(&mut self, node: u8) -> Option<Pfn> {
        let pfn = self.nodes[node as usize].free.pop()?;
        self.folios[pfn as usize].node = node;
        Some(pfn)
    }

    /// Takes any free page, ignoring watermarks (zram's pool allocations dip into reserves).
    pub fn take_free_page_any(&mut self) -> Option<Pfn> {
        let node = (0..self.nodes.len()).find(|&n| !self.nodes[n].free.is_empty())?;
        self.take_from_node(node as u8)
    }

    /// `wakeup_kswapd`: not if kswapd gave up (16 failures) or the node is balanced.
    pub fn wakeup_kswapd(&mut self, node: u8) {
        let n = &self.nodes[node as usize];
        if n.kswapd_failures >= MAX_RECLAIM_RETRIES || self.pgdat_balanced(node) {
            return;
        }
        if !n.kswapd_awake {
            self.nodes[node as usize].kswapd_awake = true;
            let now = self.now();
            self.queue_kswapd(now, node);
        }
    }

    /// `__alloc_pages` for one user page (GFP_HIGHUSER_MOVABLE): the fast path at the low
    /// watermark, then the slow path: wake kswapd, min watermark, direct reclaim, the retry
    /// gate, and the OOM killer. None when the current task was killed or nothing is left.
    pub fn alloc_page(&mut self, pol: &mut dyn Policy, preferred: u8) -> Option<Pfn> {
        self.spend_sys(self.cfg.cost.alloc_page_ns);
        // A task preempted in the slow path goes on there.
        if self.resume.slowpath.is_none() {
            if let Some(p) = self.get_page_from_freelist(preferred, Wmark::Low) {
                self.vm.add(Vm::PgAlloc, 1);
                return Some(p);
            }
        }
        let p = self.alloc_slowpath(pol, preferred);
        if p.is_some() {
            self.vm.add(Vm::PgAlloc, 1);
        }
        p
    }

    /// `__alloc_pages` with `__GFP_NORETRY` (readahead's `readahead_gfp_mask`): the fast path,
    /// then one round of the slow path (wake kswapd, min watermark, one direct reclaim, min
    /// again) and no retries or OOM kill. The caller has yields turned off.
    pub fn alloc_page_noretry(&mut self, pol: &mut dyn Policy, preferred: u8) -> Option<Pfn> {
        self.spend_sys(self.cfg.cost.alloc_page_ns);
        let page = self
            .get_page_from_freelist(preferred, Wmark::Low)
            .or_else(|| {
                for n in 0..self.nodes.len() as u8 {
                    self.wakeup_kswapd(n);
                }
                self.get_page_from_freelist(preferred, Wmark::Min)
            })
            .or_else(|| {
                super::vmscan::try_to_free_pages(self, pol, preferred);
                self.get_page_from_freelist(preferred, Wmark::Min)
            });
        if page.is_some() {
            self.vm.add(Vm::PgAlloc, 1);
        }
        page
    }

    fn alloc_slowpath(&mut self, pol: &mut dyn Policy, preferred: u8) -> Option<Pfn> {
        let mut no_progress_loops = self.resume.slowpath.take().unwrap_or(0);
        loop {
            // A direct reclaim the task was preempted in goes on first.
            let in_reclaim = self
                .resume
                .reclaim
                .as_ref()
                .is_some_and(|sc| sc.target_mem_cgroup.is_none());
            if !in_reclaim {
                for n in 0..self.nodes.len() as u8 {
                    self.wakeup_kswapd(n);
                }
                if let Some(p) = self.get_page_from_freelist(preferred, Wmark::Min) {
                    return Some(p);
                }
            }
            let progress = super::vmscan::try_to_free_pages(self, pol, preferred);
            if self.ctx.yielded {
                self.resume.slowpath = Some(no_progress_loops);
                return None;
            }
            if let Some(p) = self.get_page_from_freelist(preferred, Wmark::Min) {
                return Some(p);
            }
            if progress > 0 {
                no_progress_loops = 0;
            } else {
                no_progress_loops += 1;
            }
            if no_progress_loops <= MAX_RECLAIM_RETRIES && self.should_reclaim_retry(pol) {
                if self.preempt_point(pol) {
                    self.resume.slowpath = Some(no_progress_loops);
                    return None;
                }
                continue;
            }
            // __alloc_pages_may_oom: one last try at the high watermark, then kill.
            if let Some(p) = self.get_page_from_freelist(preferred, Wmark::High) {
                return Some(p);
            }
            if self.defer_oom_to_top_level() {
                self.resume.slowpath = Some(no_progress_loops);
                return None;
            }
            if !self.out_of_memory(pol, None) || self.ctx.killed {
                return None;
            }
            no_progress_loops = 0;
        }
    }

    /// `should_reclaim_retry`: would the reclaimable pages plus free pages pass the min
    /// watermark of some zone?
    fn should_reclaim_retry(&self, pol: &dyn Policy) -> bool {
        (0..self.nodes.len() as u8).any(|n| {
            let available = self.zone_reclaimable_pages(pol, n) + self.nodes[n as usize].nr_free();
            available > self.nodes[n as usize].wmark.min
        })
    }

    /// `zone_reclaimable_pages`: file LRU pages, plus anon LRU pages if swap space is free.
    pub fn zone_reclaimable_pages(&self, pol: &dyn Policy, node: u8) -> u64 {
        let swap_free = self.swap.nr_free() > 0;
        (0..self.memcgs.len() as u16)
            .map(|mc| {
                let l = pol.lru_pages(mc, node);
                l[2] + l[3] + if swap_free { l[0] + l[1] } else { 0 }
            })
            .sum()
    }

    /// `out_of_memory`: kill the process with the highest `oom_badness` (globally, or inside
    /// `memcg`). Returns false when there was nothing to kill.
    pub fn out_of_memory(&mut self, pol: &mut dyn Policy, memcg: Option<u16>) -> bool {
        let totalpages = match memcg {
            Some(mc) => self.memcgs[mc as usize].max.min(self.cfg.total_pages()),
            None => self.cfg.total_pages() + self.swap.total(),
        };
        // select_bad_process aborts while a victim in the scope is still exiting: the caller
        // waits for it (its retry finds the memory it freed) and nobody else is killed.
        let now = self.now();
        let exiting = self
            .procs
            .iter()
            .filter(|p| p.oom_exit_until > now)
            .filter(|p| memcg.is_none_or(|mc| self.memcg_is_descendant(p.memcg, mc)))
            .map(|p| p.oom_exit_until)
            .max();
        if let Some(until) = exiting {
            self.spend_sleep(until - now);
            return true;
        }
        let mut chosen: Option<(i64, u32)> = None;
        for p in &self.procs {
            if !p.alive || memcg.is_some_and(|mc| !self.memcg_is_descendant(p.memcg, mc)) {
                continue;
            }
            let pgtables: u64 = p.vmas.iter().map(|v| v.ptes.len() as u64 / 512).sum();
            let points = (p.rss + p.swapents + pgtables) as i64
                + p.oom_score_adj as i64 * totalpages as i64 / 1000;
            // Equal points: the later task wins, as in oom_evaluate_task.
            if chosen.is_none_or(|(best, _)| points >= best) {
                chosen = Some((points, p.pid));
            }
        }
        let Some((_, victim)) = chosen else {
            return false;
        };
        let victim_memcg = self.procs[victim as usize].memcg;
        self.vm.add(Vm::OomKill, 1);
        self.memcgs[victim_memcg as usize]
            .events
            .add(Vm::MemcgOomKill, 1);
        self.memcgs[victim_memcg as usize]
            .events
            .add(Vm::OomKill, 1);
        self.oom_victims.push(victim);
        self.procs[victim as usize].oom_exit_until = self.exit_mmap(pol, victim, now);
        if victim == self.ctx.pid {
            self.ctx.killed = true;
        }
        true
    }
}
