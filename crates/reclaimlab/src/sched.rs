//! The CPUs: each runs one thing at a time, tasks wait in a run queue per CPU, and kswapd and
//! the flusher take CPU time from the tasks (kernel/sched/fair.c, simplified; docs/model.md §1).
//!
//! The engine hands every task step to this scheduler. A step's CPU time is served as one
//! burst at the step's start (`Sched::ran`); its off-CPU time (device waits, throttling,
//! sleeps) follows, during which the CPU is free. A task that stays runnable after its burst
//! keeps its CPU until its slice ends (`sched_slice`, or EEVDF's base slice) or a woken task
//! preempts it (`wakeup_preempt`); it then goes to the tail of its CPU's queue. A waking task
//! takes its previous CPU if idle, otherwise an idle CPU of its node (`select_idle_sibling`),
//! otherwise it queues on its previous CPU. A CPU that goes idle pulls a waiting task from
//! the busiest other CPU (`newidle_balance`), nearest node first. Kernel threads' runs are
//! placed after the fact (`Sched::reserve`): on an idle CPU of their node if there is one,
//! otherwise they preempt the CPU that frees first, delaying its tasks by their CPU time.

use crate::consts::*;
use std::collections::VecDeque;

/// One CPU's run queue (`struct rq` with its `cfs_rq`).
#[derive(Clone, Debug, Default)]
struct Cpu {
    /// The CPU runs a burst until then (a task's, or a kernel thread's).
    busy_until: u64,
    /// The task that ran the last task burst here (`rq->curr`).
    curr: Option<u32>,
    /// `curr` is runnable at `busy_until` and its next step is queued (it did not sleep).
    curr_continues: bool,
    /// When `curr`'s slice ends.
    slice_end: u64,
    /// A woken task waits: `curr` yields at its next step (`resched_curr`).
    need_resched: bool,
    /// Runnable tasks waiting for this CPU, with the time each started waiting.
    queue: VecDeque<(u32, u64)>,
    /// The time of the live dispatch event (others are stale).
    dispatch_at: Option<u64>,
    node: u8,
    /// A task's step is running here and its burst is not known yet (`Sched::occupy` ..
    /// `ran`): only other tasks' steps that run meanwhile (`machine::Nest`) can see it.
    running: bool,
}

impl Cpu {
    fn idle_at(&self, t: u64) -> bool {
        !self.running && self.busy_until <= t && !self.curr_continues && self.queue.is_empty()
    }
}

/// Where a task that became runnable goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// It runs now on `cpu`.
    Run { cpu: u32 },
    /// It waits on `cpu`'s run queue; the engine queues a dispatch of that CPU at `dispatch`
    /// if given.
    Wait { cpu: u32, dispatch: Option<u64> },
}

/// What a dispatch event did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Nothing to do (stale, or the current task decides at its next step).
    None,
    /// The CPU is still busy: dispatch again then.
    Again(u64),
    /// `task` gets the CPU now, after waiting `waited` ns.
    Run { task: u32, waited: u64 },
}

/// Counters of the scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedStats {
    /// A CPU switched from one task to another (`nr_switches`, task to task).
    pub context_switches: u64,
    /// A task moved to another CPU (`nr_migrations`).
    pub migrations: u64,
    /// A task was preempted at the end of its slice or by a woken task.
    pub preemptions: u64,
}

/// The machine's CPUs.
#[derive(Clone, Debug, Default)]
pub struct Sched {
    cpus: Vec<Cpu>,
    eevdf: bool,
    /// `1 + ilog2(min(ncpus, 8))` (`get_update_sysctl_factor`).
    factor: u64,
    /// Tasks waiting in all queues (so that "does any CPU have waiters" costs nothing).
    nr_waiting: u64,
    pub stats: SchedStats,
}

impl Sched {
    /// `ncpus` CPUs spread over `nodes` nodes as the machine spreads them (CPU `c` is on node
    /// `c * nodes / ncpus`), with the fair class of `kernel`.
    pub fn new(ncpus: u32, nodes: usize, kernel: impl Into<KernelModel>) -> Sched {
        let ncpus = ncpus.max(1);
        let cpus = (0..ncpus)
            .map(|c| Cpu {
                node: (c as usize * nodes.max(1) / ncpus as usize) as u8,
                ..Cpu::default()
            })
            .collect();
        let factor = 1 + ncpus.min(SCHED_TUNABLESCALING_MAX_CPUS).ilog2() as u64;
        Sched {
            cpus,
            eevdf: kernel.into().has(Behaviour::Eevdf),
            factor,
            nr_waiting: 0,
            stats: SchedStats::default(),
        }
    }

    pub fn nr_cpus(&self) -> u32 {
        self.cpus.len() as u32
    }

    /// The tasks waiting in every run queue, in CPU order.
    pub fn waiting(&self) -> impl Iterator<Item = u32> + '_ {
        self.cpus
            .iter()
            .flat_map(|c| c.queue.iter().map(|&(t, _)| t))
    }

    /// The scheduler's invariants: the waiting count is the queues' lengths summed, and no task
    /// waits twice.
    pub fn check(&self) -> Result<(), String> {
        let queued: Vec<u32> = self.waiting().collect();
        if queued.len() as u64 != self.nr_waiting {
            return Err(format!(
                "sched: {} tasks queued, nr_waiting {}",
                queued.len(),
                self.nr_waiting
            ));
        }
        let mut sorted = queued.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("sched: task {} waits on two queues", w[0]));
        }
        Ok(())
    }

    /// The slice of a task on a CPU with `nr_running` runnable tasks: EEVDF's
    /// `sysctl_sched_base_slice`, or CFS's `sched_slice` (its share of `__sched_period`).
    pub fn slice(&self, nr_running: u64) -> u64 {
        let n = nr_running.max(1);
        if self.eevdf {
            return SYSCTL_SCHED_BASE_SLICE_NS * self.factor;
        }
        let latency = SYSCTL_SCHED_LATENCY_NS * self.factor;
        let min_gran = SYSCTL_SCHED_MIN_GRANULARITY_NS * self.factor;
        let period = latency.max(n * min_gran);
        period / n
    }

    /// An idle CPU of `prev`'s node, looking from the CPU after `prev` onwards
    /// (`select_idle_cpu`).
    fn idle_sibling(&self, prev: u32, t: u64) -> Option<u32> {
        let n = self.nr_cpus();
        let node = self.cpus[prev as usize].node;
        (1..n)
            .map(|k| (prev + k) % n)
            .find(|&c| self.cpus[c as usize].node == node && self.cpus[c as usize].idle_at(t))
    }

    /// The runnable tasks of `cpu` at `t`: its queue, and the one running or about to go on.
    fn nr_running(&self, cpu: usize, t: u64) -> usize {
        let c = &self.cpus[cpu];
        c.queue.len() + usize::from(c.running || c.busy_until > t || c.curr_continues)
    }

    /// A new task starts at `t`, forked on `parent` (`wake_up_new_task`: `select_task_rq_fair`
    /// with SD_BALANCE_FORK, `find_idlest_cpu`): it goes to the CPU of `parent`'s node with
    /// the fewest runnable tasks, `parent` itself on a tie, then the next ones after it.
    pub fn fork(&mut self, task: u32, parent: u32, t: u64) -> Placement {
        let n = self.nr_cpus();
        let parent = parent.min(n - 1);
        let node = self.cpus[parent as usize].node;
        let idlest = (0..n)
            .map(|k| (parent + k) % n)
            .filter(|&c| self.cpus[c as usize].node == node)
            .min_by_key(|&c| self.nr_running(c as usize, t))
            .unwrap_or(parent);
        if idlest != parent {
            self.stats.migrations += 1;
        }
        self.place_on(task, idlest, t)
    }

    /// A task that slept becomes runnable at `t` (`try_to_wake_up` with
    /// `select_task_rq_fair`): its previous CPU if idle, else an idle CPU of the same node,
    /// else it waits on its previous CPU and preempts the task there at its next step.
    pub fn wake(&mut self, task: u32, prev: u32, t: u64) -> Placement {
        let prev = prev.min(self.nr_cpus() - 1);
        if !self.cpus[prev as usize].idle_at(t) {
            if let Some(c) = self.idle_sibling(prev, t) {
                self.stats.migrations += 1;
                return Placement::Run { cpu: c };
            }
        }
        self.place_on(task, prev, t)
    }

    /// A runnable task goes to `cpu`: it runs there if the CPU is idle, else it waits in its
    /// queue and preempts the task there at its next step (`wakeup_preempt`).
    fn place_on(&mut self, task: u32, prev: u32, t: u64) -> Placement {
        if self.cpus[prev as usize].idle_at(t) {
            return Placement::Run { cpu: prev };
        }
        let cpu = &mut self.cpus[prev as usize];
        cpu.queue.push_back((task, t));
        cpu.need_resched = true;
        self.nr_waiting += 1;
        let continues = cpu.curr_continues;
        Placement::Wait {
            cpu: prev,
            dispatch: if continues { None } else { self.arm(prev, t) },
        }
    }

    /// The task that ran the last burst on `cpu` goes on at `t` without having slept: it keeps
    /// the CPU unless its slice ended or a woken task waits (`check_preempt_tick`,
    /// `wakeup_preempt`), or a kernel thread took the CPU meanwhile.
    pub fn resume(&mut self, task: u32, cpu: u32, t: u64) -> Placement {
        let c = &mut self.cpus[cpu as usize];
        debug_assert_eq!(c.curr, Some(task));
        c.curr_continues = false;
        if c.busy_until > t {
            // A kernel thread preempted it: it runs again first once the CPU is free.
            c.queue.push_front((task, t));
            self.nr_waiting += 1;
            return Placement::Wait {
                cpu,
                dispatch: self.arm(cpu, t),
            };
        }
        if c.queue.is_empty() {
            return Placement::Run { cpu };
        }
        if !c.need_resched && t < c.slice_end {
            return Placement::Run { cpu };
        }
        c.queue.push_back((task, t));
        self.nr_waiting += 1;
        self.stats.preemptions += 1;
        Placement::Wait {
            cpu,
            dispatch: self.arm(cpu, t),
        }
    }

    /// Arms the dispatch of `cpu` at the later of `t` and the end of its burst; returns the
    /// event time to queue, if no dispatch is armed by then.
    fn arm(&mut self, cpu: u32, t: u64) -> Option<u64> {
        let c = &mut self.cpus[cpu as usize];
        let at = c.busy_until.max(t);
        if c.dispatch_at.is_some_and(|d| d <= at) {
            return None;
        }
        c.dispatch_at = Some(at);
        Some(at)
    }

    /// The dispatch event of `cpu` at `t` (`__schedule` → `pick_next_task`): the head of its
    /// queue, or a task pulled from another CPU (`newidle_balance`), gets the CPU.
    pub fn dispatch(&mut self, cpu: u32, t: u64) -> Dispatch {
        let c = &mut self.cpus[cpu as usize];
        if c.dispatch_at != Some(t) {
            return Dispatch::None;
        }
        c.dispatch_at = None;
        if c.running {
            // Its task's `ran` arms the next dispatch.
            return Dispatch::None;
        }
        if c.busy_until > t {
            c.dispatch_at = Some(c.busy_until);
            return Dispatch::Again(c.busy_until);
        }
        if c.curr_continues {
            return Dispatch::None;
        }
        let (task, since) = match self.cpus[cpu as usize].queue.pop_front() {
            Some(w) => w,
            None => match self.pull(cpu) {
                Some(w) => w,
                None => return Dispatch::None,
            },
        };
        self.nr_waiting -= 1;
        let nr = self.cpus[cpu as usize].queue.len() as u64 + 1;
        let slice = self.slice(nr);
        let c = &mut self.cpus[cpu as usize];
        if c.curr != Some(task) {
            self.stats.context_switches += 1;
        }
        // A task that a kernel thread preempted goes on with what was left of its slice.
        if c.curr != Some(task) || c.slice_end <= t {
            c.slice_end = t + slice;
        }
        c.curr = Some(task);
        c.curr_continues = true;
        c.busy_until = t;
        c.need_resched = false;
        Dispatch::Run {
            task,
            waited: t - since.min(t),
        }
    }

    /// `newidle_balance`: the longest queue of another CPU gives up its head, nearest node
    /// first (ties: the lowest CPU).
    fn pull(&mut self, cpu: u32) -> Option<(u32, u64)> {
        let node = self.cpus[cpu as usize].node;
        let best = self
            .cpus
            .iter()
            .enumerate()
            .filter(|(i, c)| *i != cpu as usize && !c.queue.is_empty())
            .max_by_key(|(i, c)| (c.node == node, c.queue.len(), std::cmp::Reverse(*i)))
            .map(|(i, _)| i)?;
        self.stats.migrations += 1;
        self.cpus[best].queue.pop_front()
    }

    /// A task's step starts on `cpu`: the CPU is taken until its `ran`.
    pub fn occupy(&mut self, cpu: u32) {
        self.cpus[cpu as usize].running = true;
    }

    /// A task ran a step on `cpu` from `t` with `cpu_ns` of CPU time; `runnable` if it goes on
    /// at once (no off-CPU time; a task that finished or was killed is not). Returns a dispatch to queue if the CPU frees with tasks
    /// waiting (here or, for an idle balance, elsewhere).
    pub fn ran(&mut self, task: u32, cpu: u32, t: u64, cpu_ns: u64, runnable: bool) -> Option<u64> {
        self.cpus[cpu as usize].running = false;
        let nr = self.cpus[cpu as usize].queue.len() as u64 + 1;
        let slice = self.slice(nr);
        let c = &mut self.cpus[cpu as usize];
        if c.curr != Some(task) {
            if c.curr.is_some() {
                self.stats.context_switches += 1;
            }
            c.curr = Some(task);
            c.slice_end = t + slice;
            c.need_resched = false;
        }
        c.busy_until = c.busy_until.max(t) + cpu_ns;
        c.curr_continues = runnable;
        if runnable {
            return None;
        }
        let busy_until = c.busy_until;
        if self.nr_waiting > 0 {
            self.arm(cpu, busy_until)
        } else {
            None
        }
    }

    /// A kernel thread of `node` ran `ns` of CPU from `start`: on an idle CPU of its node if
    /// one is idle then, otherwise on the node's CPU that frees first, which it preempts
    /// (a woken kernel thread preempts a task at once, `wakeup_preempt`); that CPU's tasks
    /// wait for it.
    pub fn reserve(&mut self, node: u8, start: u64, ns: u64) {
        if ns == 0 {
            return;
        }
        let on_node = |c: &Cpu| c.node == node;
        let any_on_node = self.cpus.iter().any(on_node);
        let pick = self
            .cpus
            .iter()
            .enumerate()
            .filter(|(_, c)| !any_on_node || on_node(c))
            .min_by_key(|(i, c)| (!c.idle_at(start), c.busy_until, *i))
            .map(|(i, _)| i)
            .unwrap_or(0);
        let c = &mut self.cpus[pick];
        c.busy_until = c.busy_until.max(start) + ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn slices_follow_cfs_and_eevdf() {
        // 8 CPUs: factor 1 + ilog2(8) = 4. CFS: 24 ms period shared, at least 3 ms each.
        let cfs = Sched::new(8, 1, Kernel::V6_1);
        assert_eq!(cfs.slice(1), 24 * MS);
        assert_eq!(cfs.slice(2), 12 * MS);
        assert_eq!(cfs.slice(16), 3 * MS);
        // EEVDF: base slice 0.75 ms x 4 whatever the load.
        let eevdf = Sched::new(8, 1, Kernel::V6_12);
        assert_eq!(eevdf.slice(1), 3 * MS);
        assert_eq!(eevdf.slice(16), 3 * MS);
        // One CPU: factor 1.
        assert_eq!(Sched::new(1, 1, Kernel::V6_12).slice(3), 750_000);
    }

    #[test]
    fn a_waking_task_takes_an_idle_cpu_of_its_node_before_waiting() {
        let mut s = Sched::new(4, 2, Kernel::V6_12);
        // Task 0 runs a 10 us burst on CPU 0 and goes on.
        assert_eq!(s.wake(0, 0, 0), Placement::Run { cpu: 0 });
        assert_eq!(s.ran(0, 0, 0, 10_000, true), None);
        // Task 1 wakes on CPU 0: CPU 1 (same node) is idle.
        assert_eq!(s.wake(1, 0, 5_000), Placement::Run { cpu: 1 });
        assert_eq!(s.stats.migrations, 1);
        s.ran(1, 1, 5_000, 10_000, true);
        // Task 2 wakes on CPU 0: node 0 is busy, CPUs 2-3 are on node 1: it waits.
        assert_eq!(
            s.wake(2, 0, 6_000),
            Placement::Wait {
                cpu: 0,
                dispatch: None
            }
        );
    }

    #[test]
    fn a_woken_task_preempts_the_running_one_at_its_next_step() {
        let mut s = Sched::new(1, 1, Kernel::V6_12);
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 1_000, true);
        assert!(matches!(s.wake(1, 0, 500), Placement::Wait { .. }));
        // Task 0's next step at 1 us: task 1 waits, so task 0 yields and a dispatch is due.
        assert_eq!(
            s.resume(0, 0, 1_000),
            Placement::Wait {
                cpu: 0,
                dispatch: Some(1_000)
            }
        );
        assert_eq!(
            s.dispatch(0, 1_000),
            Dispatch::Run {
                task: 1,
                waited: 500
            }
        );
        assert_eq!(s.stats.preemptions, 1);
        assert_eq!(s.stats.context_switches, 1);
    }

    /// One CPU (6.12): task 0 runs 100 ns; task 1, woken at 50 ns, waits; task 0 yields to it
    /// at 100 ns and task 1 gets the CPU there. Returns the scheduler and the slice of two.
    fn task_1_takes_the_cpu_at_100_ns() -> (Sched, u64) {
        let mut s = Sched::new(1, 1, Kernel::V6_12);
        let slice = s.slice(2);
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 100, true);
        assert!(matches!(s.wake(1, 0, 50), Placement::Wait { .. }));
        assert!(matches!(s.resume(0, 0, 100), Placement::Wait { .. }));
        assert!(matches!(s.dispatch(0, 100), Dispatch::Run { task: 1, .. }));
        (s, slice)
    }

    /// Task 1 runs CPU-bound on CPU 0 in steps of 100 ns from `t` until it must yield: the
    /// time it yields, and the steps it went on at without yielding.
    fn task_1_runs_until_it_yields(s: &mut Sched, mut t: u64) -> (u64, u64) {
        let mut steps = 0;
        loop {
            s.ran(1, 0, t, 100, true);
            t += 100;
            match s.resume(1, 0, t) {
                Placement::Run { .. } => steps += 1,
                Placement::Wait { .. } => return (t, steps),
            }
        }
    }

    #[test]
    fn a_cpu_bound_task_keeps_its_cpu_for_its_slice() {
        // Task 1 was woken: task 0 yields at once; then task 1 runs CPU-bound.
        let (mut s, slice) = task_1_takes_the_cpu_at_100_ns();
        // Task 1 keeps the CPU (task 0 was preempted, not woken) until its slice ends.
        let (t, steps) = task_1_runs_until_it_yields(&mut s, 100);
        assert_eq!(t, 100 + slice);
        assert_eq!(steps, slice / 100 - 1);
        assert_eq!(
            s.dispatch(0, t),
            Dispatch::Run {
                task: 0,
                waited: t - 100
            }
        );
    }

    #[test]
    fn a_sleeping_task_frees_its_cpu_for_the_next_in_queue() {
        let mut s = Sched::new(1, 1, Kernel::V6_1);
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 2_000, true);
        let Placement::Wait { dispatch, .. } = s.wake(1, 0, 1_000) else {
            panic!("CPU 0 is busy")
        };
        assert_eq!(dispatch, None, "task 0 decides at its next step");
        // Task 0's next step: 1 us of CPU, then it sleeps (I/O).
        assert!(matches!(s.resume(0, 0, 2_000), Placement::Wait { .. }));
        assert_eq!(
            s.dispatch(0, 2_000),
            Dispatch::Run {
                task: 1,
                waited: 1_000
            }
        );
        assert_eq!(s.ran(1, 0, 2_000, 1_000, false), Some(3_000));
        assert_eq!(
            s.dispatch(0, 3_000),
            Dispatch::Run {
                task: 0,
                waited: 1_000
            }
        );
    }

    #[test]
    fn an_idle_cpu_pulls_a_waiting_task() {
        let mut s = Sched::new(2, 1, Kernel::V6_12);
        // Both CPUs busy with continuing tasks; task 2 waits on CPU 0.
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 10_000, true);
        s.wake(1, 1, 0);
        s.ran(1, 1, 0, 3_000, true);
        assert!(matches!(s.wake(2, 0, 100), Placement::Wait { cpu: 0, .. }));
        // Task 1 sleeps after its burst: CPU 1 goes idle at 3 us and pulls task 2.
        let again = s.ran(1, 1, 3_000, 0, false);
        assert_eq!(again, Some(3_000));
        assert_eq!(
            s.dispatch(1, 3_000),
            Dispatch::Run {
                task: 2,
                waited: 2_900
            }
        );
        assert_eq!(s.stats.migrations, 1);
    }

    #[test]
    fn a_kernel_thread_takes_an_idle_cpu_or_delays_a_busy_one() {
        let mut s = Sched::new(2, 1, Kernel::V6_12);
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 1_000, true);
        // kswapd at 500 ns: CPU 1 is idle, it goes there; task 0 is not delayed.
        s.reserve(0, 500, 50_000);
        assert_eq!(s.resume(0, 0, 1_000), Placement::Run { cpu: 0 });
        s.ran(0, 0, 1_000, 1_000, true);
        // Another 10 us burst at 1.5 us: both CPUs busy; CPU 0 frees first (2 us): task 0
        // waits for it and runs again first.
        s.reserve(0, 1_500, 10_000);
        assert_eq!(
            s.resume(0, 0, 2_000),
            Placement::Wait {
                cpu: 0,
                dispatch: Some(12_000)
            }
        );
        assert_eq!(
            s.dispatch(0, 12_000),
            Dispatch::Run {
                task: 0,
                waited: 10_000
            }
        );
    }

    /// `wake_up_new_task` spreads new tasks over the least loaded CPUs of the parent's node
    /// (`find_idlest_cpu`): four CPU-bound tasks forked on CPU 0 of a two-CPU node end two
    /// per CPU, where placing each on its parent's CPU queued three there.
    #[test]
    fn new_tasks_go_to_the_least_loaded_cpu_of_the_node() {
        let mut s = Sched::new(4, 2, Kernel::V6_12);
        let mut on = Vec::new();
        for task in 0..4 {
            let cpu = match s.fork(task, 0, 10 * task as u64) {
                Placement::Run { cpu } => {
                    s.ran(task, cpu, 10 * task as u64, 1_000_000, true);
                    cpu
                }
                Placement::Wait { cpu, .. } => cpu,
            };
            on.push(cpu);
        }
        // Parent's CPU first on a tie, never node 1's CPUs 2-3.
        assert_eq!(on, [0, 1, 0, 1]);
        assert_eq!(s.stats.migrations, 2);
    }

    /// A task a kernel thread preempted goes on with what was left of its slice
    /// (`check_preempt_tick` measures the slice in the task's own runtime; the kernel thread's
    /// time is not the task's): a fresh slice after every kernel-thread burst let the task on
    /// a CPU kswapd kept visiting keep it, while the one queued behind it starved.
    #[test]
    fn a_kernel_thread_does_not_give_the_preempted_task_a_new_slice() {
        // Task 1 waits; task 0 yields to it, then task 1 runs its slice from 100 ns.
        let (mut s, slice) = task_1_takes_the_cpu_at_100_ns();
        s.ran(1, 0, 100, 100, true);
        // kswapd takes the CPU for 1 us at 200 ns; task 1 goes on after it.
        s.reserve(0, 200, 1_000);
        assert!(matches!(
            s.resume(1, 0, 200),
            Placement::Wait {
                dispatch: Some(1_200),
                ..
            }
        ));
        assert!(matches!(
            s.dispatch(0, 1_200),
            Dispatch::Run { task: 1, .. }
        ));
        // It keeps the CPU until its first slice ends (100 ns + slice), not 1.2 us + slice.
        let (t, _) = task_1_runs_until_it_yields(&mut s, 1_200);
        assert_eq!(t, 100 + slice);
    }

    #[test]
    fn the_checker_finds_a_task_queued_twice() {
        let mut s = Sched::new(1, 1, Kernel::V6_12);
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 1_000, true);
        s.wake(1, 0, 10);
        assert_eq!(s.check(), Ok(()));
        // An engine bug: the same task woken again while it waits.
        s.wake(1, 0, 20);
        assert!(s.check().unwrap_err().contains("two queues"));
    }

    #[test]
    fn stale_dispatches_do_nothing() {
        let mut s = Sched::new(1, 1, Kernel::V6_12);
        assert_eq!(s.dispatch(0, 5), Dispatch::None);
        s.wake(0, 0, 0);
        s.ran(0, 0, 0, 100, false);
        assert_eq!(s.dispatch(0, 100), Dispatch::None);
    }
}
