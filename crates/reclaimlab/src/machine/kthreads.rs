//! The kernel's own threads and timers, which run beside the tasks on other CPUs: kswapd per node
//! (`kswapd`), the flusher (`wb_workfn`), block-I/O completions (`folio_end_writeback` from the
//! bio end_io) and the policies' deferred work (an MGLRU page-table walk that other reclaimers
//! share until it ends).
//!
//! They live in one time-ordered queue owned by the machine. The event engine runs them in time
//! order between the tasks' steps, and a task that spends simulated time inside the kernel
//! (reclaim, throttling, retries) lets them catch up to its current time at the points where the
//! kernel would sleep or loop (`Machine::catch_up`), so writeback completes and kswapd reclaims
//! while a direct reclaimer waits, as on a machine with more than one CPU.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Ctx, Machine, Pfn, Vm};
use crate::consts::*;
use crate::policy::Policy;

/// Work of the kernel's background threads, at a simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KthreadWork {
    /// `kswapd` of a node runs `balance_pgdat` (woken, or running again at once because the
    /// node is still unbalanced).
    Kswapd(u8),
    /// The flusher (`wb_workfn`); stale generations are dropped (a wake-up replaced them).
    Flusher(u64),
    /// `folio_end_writeback` of a page-cache or swap folio (the bio completed).
    WritebackEnd(Pfn),
    /// A policy's deferred work (`Policy::timer`), with the policy's token.
    PolicyTimer(u64),
}

/// The queue of kernel-thread work and the threads' own state.
#[derive(Clone, Debug, Default)]
pub struct Kthreads {
    queue: BinaryHeap<Reverse<(u64, u64, KthreadWork)>>,
    seq: u64,
    /// The flusher's current generation: only the newest queued run is live.
    pub flusher_gen: u64,
    /// When each node's kswapd went to sleep (for `kswapd_low_wmark_hit_quickly`).
    pub kswapd_slept_at: Vec<Option<u64>>,
    /// Set while kernel-thread work runs: no other catch-up inside it, except under kswapd.
    running: bool,
    /// Set while kswapd runs: the flusher, I/O completions and policy timers, which run on
    /// other CPUs and in interrupts, still run meanwhile (at kswapd's folio boundaries).
    kswapd_running: bool,
    /// The time of the next task event while kernel-thread work runs: kswapd past it (or past
    /// other queued kernel-thread work) is preempted between priorities.
    horizon: u64,
    /// A `balance_pgdat` in progress per node, where kswapd was preempted.
    kswapd_state: Vec<Option<Box<super::vmscan::BalancePgdat>>>,
    /// Whether the periodic flusher has been started (`start_periodic_flusher`).
    started: bool,
    /// CPU time the kernel threads used, and their bursts not yet placed on a CPU.
    pub cpu: KthreadCpu,
}

/// The CPU time of kswapd and the flusher (their `se.sum_exec_runtime`), and each run's burst,
/// which the event engine places on a CPU (`sched.rs`): it takes that CPU from the tasks.
#[derive(Clone, Debug, Default)]
pub struct KthreadCpu {
    pub kswapd_ns: u64,
    pub flusher_ns: u64,
    /// (start, CPU time, node) of runs the engine has not placed yet.
    pub bursts: Vec<(u64, u64, u8)>,
}

impl Kthreads {
    fn push(&mut self, at: u64, work: KthreadWork) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, work)));
    }

    /// The time of the earliest queued work.
    pub fn next_time(&self) -> Option<u64> {
        self.queue.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Every queued item, in no particular order (tests and invariant checks).
    pub fn queued(&self) -> impl Iterator<Item = (u64, KthreadWork)> + '_ {
        self.queue.iter().map(|Reverse((t, _, w))| (*t, *w))
    }
}

impl Machine {
    /// Queues kernel-thread work at time `at`.
    pub fn queue_kthread_work(&mut self, at: u64, work: KthreadWork) {
        self.kthreads.push(at, work);
    }

    /// Starts the flusher's periodic wake-up (`dirty_writeback_interval`, 5 s).
    pub fn start_periodic_flusher(&mut self) {
        if !self.kthreads.started {
            self.kthreads.started = true;
            self.queue_kthread_work(
                DIRTY_WRITEBACK_CENTISECS * 10_000_000,
                KthreadWork::Flusher(0),
            );
        }
    }

    /// `wake_up_interruptible(&pgdat->kswapd_wait)`: kswapd of `node` runs at `at`.
    pub fn queue_kswapd(&mut self, at: u64, node: u8) {
        self.queue_kthread_work(at, KthreadWork::Kswapd(node));
    }

    /// `wb_wakeup`: a new flusher run at `at`, replacing any queued one.
    pub fn queue_flusher(&mut self, at: u64) {
        self.kthreads.flusher_gen += 1;
        let g = self.kthreads.flusher_gen;
        self.queue_kthread_work(at, KthreadWork::Flusher(g));
    }

    /// Whether kernel-thread work other than kswapd is running (it runs no other
    /// kernel-thread work inside it; kswapd does).
    pub fn in_kthread_work(&self) -> bool {
        self.kthreads.running && !self.kthreads.kswapd_running
    }

    /// The time of the earliest kernel-thread work.
    pub fn next_kthread_time(&self) -> Option<u64> {
        self.kthreads.next_time()
    }

    /// Runs the earliest kernel-thread work if it is due by `t`, with the next task event at
    /// `horizon`; returns whether it ran. The current task's context is saved and restored
    /// around it.
    pub fn run_next_kthread_work(&mut self, pol: &mut dyn Policy, t: u64, horizon: u64) -> bool {
        let Some(Reverse((at, _, work))) = self.kthreads.queue.peek().copied() else {
            return false;
        };
        let beside_kswapd = self.kthreads.kswapd_running && !matches!(work, KthreadWork::Kswapd(_));
        if at > t || (self.kthreads.running && !beside_kswapd) {
            return false;
        }
        self.kthreads.queue.pop();
        let saved = self.ctx;
        let k = &mut self.kthreads;
        let outer = (k.running, k.kswapd_running, k.horizon);
        (k.running, k.horizon) = (true, horizon);
        k.kswapd_running = matches!(work, KthreadWork::Kswapd(_));
        match work {
            KthreadWork::Kswapd(node) => self.kswapd_run(pol, node, at),
            KthreadWork::Flusher(gen) => self.flusher_work(gen, at),
            KthreadWork::WritebackEnd(pfn) => {
                self.ctx = kthread_ctx(at);
                self.folio_end_writeback(pol, pfn);
            }
            KthreadWork::PolicyTimer(token) => {
                self.ctx = kthread_ctx(at);
                pol.timer(self, token);
            }
        }
        let k = &mut self.kthreads;
        (k.running, k.kswapd_running, k.horizon) = outer;
        self.ctx = saved;
        true
    }

    /// Lets the kernel threads catch up to the current task's time: every queued item due by
    /// `now()` runs (kswapd and the flusher run on other CPUs while this task reclaims or
    /// sleeps). Not from inside kernel-thread work.
    pub fn catch_up(&mut self, pol: &mut dyn Policy) {
        if self.in_kthread_work() {
            return;
        }
        let t = self.now();
        while self.run_next_kthread_work(pol, t, t) {}
    }

    /// A preemption point of a kernel thread (kswapd between priorities): true if a task's
    /// event or other kernel-thread work is due before the thread's clock.
    pub fn kthread_preempt_point(&self) -> bool {
        let next = self
            .kthreads
            .next_time()
            .map_or(self.kthreads.horizon, |k| k.min(self.kthreads.horizon));
        self.kthreads.running && self.now() > next
    }

    /// One kswapd run at `at`: balance_pgdat (or the rest of one it was preempted in), then
    /// kswapd_try_to_sleep (sleep when balanced or hopeless, otherwise run again once this
    /// run's time has passed).
    fn kswapd_run(&mut self, pol: &mut dyn Policy, node: u8, at: u64) {
        let n = node as usize;
        if self.kthreads.kswapd_slept_at.len() <= n {
            self.kthreads.kswapd_slept_at.resize(self.nodes.len(), None);
            self.kthreads.kswapd_state.resize(self.nodes.len(), None);
        }
        let resume = self.kthreads.kswapd_state[n].take();
        if resume.is_none() {
            if let Some(slept) = self.kthreads.kswapd_slept_at[n].take() {
                if at.saturating_sub(slept) < KSWAPD_SHORT_SLEEP_JIFFIES * NS_PER_JIFFY {
                    self.vm.add(Vm::KswapdLowWmarkHitQuickly, 1);
                }
            }
        }
        self.ctx = Ctx {
            now: at,
            cpu: 0,
            pid: u32::MAX,
            is_kswapd: true,
            ..Ctx::default()
        };
        let end = super::vmscan::balance_pgdat(self, pol, node, resume);
        let cpu_ns = self.ctx.times.cpu_ns();
        self.kthreads.cpu.kswapd_ns += cpu_ns;
        self.kthreads.cpu.bursts.push((at, cpu_ns, node));
        // balance_pgdat runs between psi_memstall_enter and psi_memstall_leave.
        let stalled_until = self.now();
        self.psi.kswapd.push((node, at, stalled_until));
        if let super::vmscan::BalanceEnd::Preempted(st) = end {
            self.kthreads.kswapd_state[n] = Some(st);
            let now = self.now();
            self.queue_kswapd(now.max(at + 1), node);
            return;
        }
        let elapsed = self.ctx.elapsed.max(NS_PER_JIFFY / 100);
        if self.pgdat_balanced(node) || self.nodes[n].kswapd_failures >= MAX_RECLAIM_RETRIES {
            if self.pgdat_balanced(node) {
                super::vmscan::clear_pgdat_congested(self, node);
            }
            self.nodes[n].kswapd_awake = false;
            self.kthreads.kswapd_slept_at[n] = Some(at + elapsed);
        } else {
            self.vm.add(Vm::KswapdHighWmarkHitQuickly, 1);
            self.queue_kswapd(at + elapsed, node);
        }
    }

    /// One flusher run at `at` if it is the live generation; it queues its next run.
    fn flusher_work(&mut self, gen: u64, at: u64) {
        if gen != self.kthreads.flusher_gen {
            return;
        }
        self.ctx = Ctx {
            is_flusher: true,
            ..kthread_ctx(at)
        };
        let idle = self.files.iter().all(|f| f.nr_dirty == 0);
        let mut next = self.flusher_run().max(at + 1);
        let cpu_ns = self.ctx.times.cpu_ns();
        if cpu_ns > 0 {
            self.kthreads.cpu.flusher_ns += cpu_ns;
            // The flusher (a kworker) runs on a CPU of node 0.
            self.kthreads.cpu.bursts.push((at, cpu_ns, 0));
        }
        if idle {
            // Other kernel-thread work may wake a task: skip no further than it either.
            let others = self.kthreads.next_time().unwrap_or(u64::MAX);
            next = skip_idle_periods(at, next, self.kthreads.horizon.min(others));
        }
        self.queue_flusher(next);
    }

    /// The folios whose writeback completion is queued, in completion order (tests).
    pub fn queued_writeback_ends(&self) -> Vec<Pfn> {
        let mut v: Vec<(u64, Pfn)> = self
            .kthreads
            .queued()
            .filter_map(|(t, w)| match w {
                KthreadWork::WritebackEnd(pfn) => Some((t, pfn)),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, p)| p).collect()
    }

    /// Whether a flusher run was requested and has not run yet (`wb_wakeup` pending).
    pub fn flusher_wakeup_pending(&self) -> bool {
        self.wb.flusher_queued
    }

    /// Runs every queued writeback completion now, whatever its time (tests that step the
    /// machine by hand).
    pub fn complete_all_writeback(&mut self, pol: &mut dyn Policy) {
        let ends = self.queued_writeback_ends();
        let rest: Vec<_> = self
            .kthreads
            .queue
            .drain()
            .filter(|Reverse((_, _, w))| !matches!(w, KthreadWork::WritebackEnd(_)))
            .collect();
        self.kthreads.queue.extend(rest);
        let saved = self.ctx;
        for pfn in ends {
            self.ctx = kthread_ctx(saved.now + saved.elapsed);
            self.folio_end_writeback(pol, pfn);
        }
        self.ctx = saved;
    }
}

/// The context of a kernel thread other than kswapd and the flusher (an I/O completion, a timer).
fn kthread_ctx(at: u64) -> Ctx {
    Ctx {
        now: at,
        pid: u32::MAX,
        ..Ctx::default()
    }
}

/// Idle time is free: a flusher run that found nothing dirty would run again every period,
/// finding nothing each time, until a task can dirty a page at `horizon` (the next task
/// event or other kernel-thread work; kernel threads dirty nothing). Its next run moves to the last of those periods at or before `horizon`,
/// which the engine reaches in one step: the same runs that matter, without the empty ones.
fn skip_idle_periods(at: u64, next: u64, horizon: u64) -> u64 {
    let period = next - at;
    if horizon <= next {
        return next;
    }
    at + (horizon - at) / period * period
}

#[cfg(test)]
mod tests {
    use super::skip_idle_periods;
    use crate::access::{Op, PageRef, Via};
    use crate::machine::{pg, Ctx, Machine, MachineConfig};
    use crate::policy::classic::Classic;

    /// A machine with one file page written and under writeback (the flusher has run), its
    /// completion queued; returns the folio.
    fn folio_under_writeback() -> (Machine, Classic, crate::machine::Pfn) {
        let mut m = Machine::new(MachineConfig::simple(4096)).expect("valid machine");
        let mut pol = Classic::new(&m);
        let f = m.create_file("f", 8);
        let p = m.create_process("p", 0, 0);
        m.ctx = Ctx {
            pid: p,
            ..Ctx::default()
        };
        let page = PageRef::File { file: f, page: 0 };
        m.access(&mut pol, p, page, Op::Write, Via::Fd)
            .expect("the write completed");
        m.wakeup_flusher(true);
        m.flusher_run();
        let pfn = match m.files[f as usize].slots[0] {
            crate::machine::Slot::Page(pfn) => pfn,
            s => panic!("not resident: {s:?}"),
        };
        assert!(m.folios[pfn as usize].test(pg::WRITEBACK));
        (m, pol, pfn)
    }

    #[test]
    fn io_completions_run_beside_kswapd_but_not_inside_other_kernel_thread_work() {
        // Inside kswapd's work (its batch, at a folio boundary), a completion due by kswapd's
        // clock runs: the interrupt and the flusher are not kswapd's to hold up.
        let (mut m, mut pol, pfn) = folio_under_writeback();
        (m.kthreads.running, m.kthreads.kswapd_running) = (true, true);
        m.ctx.elapsed += 1_000_000_000;
        m.catch_up(&mut pol);
        assert!(!m.folios[pfn as usize].test(pg::WRITEBACK));
        assert!(
            m.kthreads.running && m.kthreads.kswapd_running,
            "kswapd's state is kept"
        );
        // Inside other kernel-thread work (the flusher, a completion) nothing else runs.
        let (mut m, mut pol, pfn) = folio_under_writeback();
        (m.kthreads.running, m.kthreads.kswapd_running) = (true, false);
        m.ctx.elapsed += 1_000_000_000;
        m.catch_up(&mut pol);
        assert!(m.folios[pfn as usize].test(pg::WRITEBACK));
        // And kswapd work never runs inside kswapd's.
        let (mut m, mut pol, _) = folio_under_writeback();
        m.kthreads.push(0, super::KthreadWork::Kswapd(0));
        (m.kthreads.running, m.kthreads.kswapd_running) = (true, true);
        assert!(!m.run_next_kthread_work(&mut pol, u64::MAX, u64::MAX));
    }

    #[test]
    fn idle_flusher_periods_are_skipped_up_to_the_horizon() {
        const S: u64 = 1_000_000_000;
        // Runs at 5 s would come at 10, 15, 20, 25 s: the last before a task at 27 s is 25 s.
        assert_eq!(skip_idle_periods(5 * S, 10 * S, 27 * S), 25 * S);
        // On a period boundary, the run at the boundary stays (kernel threads go first).
        assert_eq!(skip_idle_periods(5 * S, 10 * S, 30 * S), 30 * S);
        // Nothing to skip when the horizon is before the next run.
        assert_eq!(skip_idle_periods(5 * S, 10 * S, 7 * S), 10 * S);
        assert_eq!(skip_idle_periods(5 * S, 10 * S, u64::MAX) % (5 * S), 0);
    }
}
