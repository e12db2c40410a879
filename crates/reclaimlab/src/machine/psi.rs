//! Pressure stall information for memory (kernel/sched/psi.c), per memcg and system-wide.
//!
//! Two halves. The machine side (`PsiLog`, the `psi_*` methods on `Machine`) is what the
//! kernel's `psi_memstall_enter`/`psi_memstall_leave` calls and its `io_schedule` waits are:
//! while a task's access runs, each change of the task's state is logged with its time. The
//! accounting side (`Psi`) is what the scheduler's `psi_task_change` feeds: per group and
//! CPU, task counts, the state mask (`test_states`), the state times (`record_times`), their
//! aggregation weighted by non-idle time (`collect_percpu_times`) and the 2 s running averages
//! (`update_averages`, `calc_avgs`). A task's clock runs ahead of the engine's inside an
//! access, so the engine hands the logged changes to `Psi`, which applies them in time order
//! once the engine's clock has passed them (`Psi::advance_to`).

use super::Machine;
use crate::consts::{EXP_10S, EXP_300S, EXP_60S, FIXED_1, FSHIFT, NS_PER_JIFFY, PSI_FREQ};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `enum psi_task_count` bits (`TSK_IOWAIT`, `TSK_MEMSTALL`, `TSK_RUNNING`,
/// `TSK_MEMSTALL_RUNNING`).
pub const TSK_IOWAIT: u8 = 1 << 0;
pub const TSK_MEMSTALL: u8 = 1 << 1;
pub const TSK_RUNNING: u8 = 1 << 2;
pub const TSK_MEMSTALL_RUNNING: u8 = 1 << 3;
const NR_PSI_TASK_COUNTS: usize = 4;

/// The states kept per CPU: `PSI_MEM_SOME`, `PSI_MEM_FULL` and `PSI_NONIDLE` (I/O and CPU
/// pressure are not reported).
const MEM_SOME: usize = 0;
const MEM_FULL: usize = 1;
const NONIDLE: usize = 2;
const NR_STATES: usize = 3;

/// The log's own flags for the current task: in a memory stall (`current->in_memstall`), and
/// sleeping in `io_schedule` (`current->in_iowait`). Neither: running.
pub const LOG_MEMSTALL: u8 = 1 << 0;
pub const LOG_IOWAIT: u8 = 1 << 1;

/// The current task's state changes during one operation (machine side).
#[derive(Clone, Debug, Default)]
pub struct PsiLog {
    /// (time, `LOG_*` flags from then on), in time order.
    pub marks: Vec<(u64, u8)>,
    /// The current task's `LOG_*` flags.
    pub flags: u8,
    /// kswapd runs, each inside `balance_pgdat`'s psi_memstall_enter/leave: (node, start, end).
    pub kswapd: Vec<(u8, u64, u64)>,
}

impl Machine {
    /// Whether the current context is a task whose state PSI tracks (not a kernel thread:
    /// kswapd's runs are logged whole, the flusher and I/O completions are not memory stalls).
    fn psi_tracks_current(&self) -> bool {
        self.ctx.pid != u32::MAX && !self.ctx.is_kswapd && !self.ctx.is_flusher
    }

    fn psi_set_flags(&mut self, at: u64, flags: u8) {
        if self.psi.flags != flags {
            self.psi.flags = flags;
            self.psi.marks.push((at, flags));
        }
    }

    /// `psi_memstall_enter`: returns the previous `in_memstall` (nested calls do nothing).
    pub fn psi_memstall_enter(&mut self) -> bool {
        if !self.psi_tracks_current() {
            return true;
        }
        let was = self.psi.flags & LOG_MEMSTALL != 0;
        if !was {
            let now = self.now();
            self.psi_set_flags(now, self.psi.flags | LOG_MEMSTALL);
        }
        was
    }

    /// `psi_memstall_leave` with the flag `psi_memstall_enter` returned.
    pub fn psi_memstall_leave(&mut self, was: bool) {
        if was || !self.psi_tracks_current() {
            return;
        }
        let now = self.now();
        self.psi_set_flags(now, self.psi.flags & !LOG_MEMSTALL);
    }

    /// A wait of the current task from `start` to `end` that was already spent: a memory
    /// stall if `memstall` (a workingset refault: `folio_wait_bit_common`, `swap_read_folio`),
    /// sleeping in I/O if `iowait`. Logged after the fact where the kernel's decision (the
    /// folio's PG_workingset) is known only after the model has spent the time.
    pub fn psi_wait(&mut self, start: u64, end: u64, memstall: bool, iowait: bool) {
        if !self.psi_tracks_current() || end <= start || (!memstall && !iowait) {
            return;
        }
        let before = self.psi.flags;
        let mut during = before;
        if memstall {
            during |= LOG_MEMSTALL;
        }
        if iowait {
            during |= LOG_IOWAIT;
        }
        self.psi_set_flags(start, during);
        self.psi_set_flags(end, before);
    }

    /// Takes the current task's logged changes (the engine feeds them to `Psi`).
    pub fn psi_take_marks(&mut self, out: &mut Vec<(u64, u8)>) {
        out.append(&mut self.psi.marks);
        self.psi.flags = 0;
    }
}

/// The `TSK_*` bits of an awake task with the log's flags.
pub fn task_bits(log_flags: u8) -> u8 {
    match (log_flags & LOG_MEMSTALL != 0, log_flags & LOG_IOWAIT != 0) {
        (false, false) => TSK_RUNNING,
        (false, true) => TSK_IOWAIT,
        (true, false) => TSK_MEMSTALL | TSK_RUNNING | TSK_MEMSTALL_RUNNING,
        (true, true) => TSK_MEMSTALL | TSK_IOWAIT,
    }
}

/// `struct psi_group_cpu`, memory states only.
#[derive(Clone, Debug, Default)]
struct GroupCpu {
    tasks: [u32; NR_PSI_TASK_COUNTS],
    state_mask: u8,
    state_start: u64,
    times: [u64; NR_STATES],
    times_prev: [u64; NR_STATES],
}

/// `test_states` for memory: SOME while a task is in a memory stall, FULL while, in addition,
/// every running task is a memory-stalled one (nothing productive runs); NONIDLE while any
/// task is running, in I/O or stalled.
pub fn test_states(tasks: &[u32; NR_PSI_TASK_COUNTS]) -> u8 {
    let [iowait, memstall, running, memstall_running] = *tasks;
    let mut mask = 0;
    if memstall > 0 {
        mask |= 1 << MEM_SOME;
        if running == memstall_running {
            mask |= 1 << MEM_FULL;
        }
    }
    if iowait > 0 || memstall > 0 || running > 0 {
        mask |= 1 << NONIDLE;
    }
    mask
}

impl GroupCpu {
    /// `record_times`: the time since the last change goes to the states that were active.
    fn record_times(&mut self, now: u64) {
        let delta = now.saturating_sub(self.state_start);
        self.state_start = now;
        for s in 0..NR_STATES {
            if self.state_mask & (1 << s) != 0 {
                self.times[s] += delta;
            }
        }
    }

    /// `get_recent_times`: state time since the previous collection, live states included.
    fn recent_times(&mut self, now: u64) -> [u64; NR_STATES] {
        let mut out = [0; NR_STATES];
        for (s, o) in out.iter_mut().enumerate() {
            let mut t = self.times[s];
            if self.state_mask & (1 << s) != 0 {
                t += now.saturating_sub(self.state_start);
            }
            *o = t - self.times_prev[s];
            self.times_prev[s] = t;
        }
        out
    }
}

/// `struct psi_group` (memory resource, the PSI_AVGS aggregator).
#[derive(Clone, Debug)]
struct Group {
    cpus: Vec<GroupCpu>,
    /// `total[PSI_AVGS]` of SOME and FULL, ns.
    total: [u64; 2],
    avg_total: [u64; 2],
    /// `avg[state][10s, 60s, 300s]` in FIXED_1 units of percent.
    avg: [[u64; 3]; 2],
    avg_next_update: u64,
    avg_last_update: u64,
    /// When the group's `avgs_work` runs next (None: the clock is stopped).
    work_at: Option<u64>,
}

/// `calc_load`: one step of the fixed-point exponential moving average.
pub fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut newload = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        newload += FIXED_1 - 1;
    }
    newload / FIXED_1
}

/// `fixed_power_int`: `x^n` in fixed point with `frac_bits` fractional bits, rounding each
/// product to nearest (exponentiation by squaring).
pub fn fixed_power_int(mut x: u64, frac_bits: u32, mut n: u32) -> u64 {
    let half = 1u64 << (frac_bits - 1);
    let mut result = 1u64 << frac_bits;
    while n > 0 {
        if n & 1 == 1 {
            result = (result * x + half) >> frac_bits;
        }
        n >>= 1;
        if n == 0 {
            break;
        }
        x = (x * x + half) >> frac_bits;
    }
    result
}

/// `calc_load_n`: `n` steps of `calc_load` with the same `active`.
pub fn calc_load_n(load: u64, exp: u64, active: u64, n: u32) -> u64 {
    calc_load(load, fixed_power_int(exp, FSHIFT, n), active)
}

/// `calc_avgs`: fold `missed` idle periods and one sample of `time` stalled over `period`.
pub fn calc_avgs(avg: &mut [u64; 3], missed: u32, time: u64, period: u64) {
    let exps = [EXP_10S, EXP_60S, EXP_300S];
    if missed > 0 {
        for (a, &e) in avg.iter_mut().zip(&exps) {
            *a = calc_load_n(*a, e, 0, missed);
        }
    }
    let pct = time * 100 / period.max(1) * FIXED_1;
    for (a, &e) in avg.iter_mut().zip(&exps) {
        *a = calc_load(*a, e, pct);
    }
}

/// `psi_period` in ns.
pub const PSI_PERIOD_NS: u64 = PSI_FREQ * NS_PER_JIFFY;

impl Group {
    fn new(nr_cpus: usize) -> Self {
        // group_init at boot/creation (time 0 of the run).
        Group {
            cpus: vec![GroupCpu::default(); nr_cpus],
            total: [0; 2],
            avg_total: [0; 2],
            avg: [[0; 3]; 2],
            avg_next_update: PSI_PERIOD_NS,
            avg_last_update: 0,
            work_at: None,
        }
    }

    /// `psi_group_change` on one CPU (the memory half; no TSK_ONCPU: CPUs are not contended).
    fn change(&mut self, cpu: usize, clear: u8, set: u8, now: u64) {
        let c = &mut self.cpus[cpu];
        for t in 0..NR_PSI_TASK_COUNTS {
            if clear & (1 << t) != 0 {
                debug_assert!(c.tasks[t] > 0, "psi: task underflow");
                c.tasks[t] = c.tasks[t].saturating_sub(1);
            }
            if set & (1 << t) != 0 {
                c.tasks[t] += 1;
            }
        }
        let mask = test_states(&c.tasks);
        c.record_times(now);
        c.state_mask = mask;
        // wake_clock: a change starts the averaging clock if it was stopped.
        if self.work_at.is_none() {
            self.work_at = Some(now + PSI_FREQ * NS_PER_JIFFY);
        }
    }

    /// `collect_percpu_times`: folds each CPU's recent state times into `total`, each CPU
    /// weighted by its non-idle jiffies. Returns whether any CPU was non-idle (reschedule).
    fn collect(&mut self, now: u64) -> bool {
        let mut deltas = [0u128; 2];
        let mut nonidle_total = 0u64;
        let mut any_nonidle = false;
        for c in &mut self.cpus {
            let times = c.recent_times(now);
            any_nonidle |= times[NONIDLE] > 0;
            let nonidle = times[NONIDLE] / NS_PER_JIFFY;
            nonidle_total += nonidle;
            for s in [MEM_SOME, MEM_FULL] {
                deltas[s] += times[s] as u128 * nonidle as u128;
            }
        }
        for s in [MEM_SOME, MEM_FULL] {
            self.total[s] += (deltas[s] / nonidle_total.max(1) as u128) as u64;
        }
        any_nonidle
    }

    /// `update_averages`: the period's stall share into the running averages.
    fn update_averages(&mut self, now: u64) {
        let expires = self.avg_next_update;
        let missed = if now - expires >= PSI_PERIOD_NS {
            (now - expires) / PSI_PERIOD_NS
        } else {
            0
        };
        self.avg_next_update = expires + (1 + missed) * PSI_PERIOD_NS;
        let period = now - (self.avg_last_update + missed * PSI_PERIOD_NS);
        self.avg_last_update = now;
        for s in [MEM_SOME, MEM_FULL] {
            // Time slipped past the period is carried into the next one.
            let sample = (self.total[s] - self.avg_total[s]).min(period);
            self.avg_total[s] += sample;
            calc_avgs(&mut self.avg[s], missed as u32, sample, period);
        }
    }

    /// `psi_avgs_work` at `now`.
    fn avgs_work(&mut self, now: u64) {
        let reschedule = self.collect(now);
        if now >= self.avg_next_update {
            self.update_averages(now);
        }
        self.work_at = reschedule.then(|| {
            now + ((self.avg_next_update.saturating_sub(now)) / NS_PER_JIFFY + 1) * NS_PER_JIFFY
        });
    }

    /// The reading side of `psi_show`: collect, then update the averages if a period is due.
    fn show(&mut self, now: u64) -> PsiMemory {
        self.collect(now);
        if now >= self.avg_next_update {
            self.update_averages(now);
        }
        let line = |s: usize| PsiLine {
            total_us: self.total[s] / 1000,
            avg10: avg_value(self.avg[s][0]),
            avg60: avg_value(self.avg[s][1]),
            avg300: avg_value(self.avg[s][2]),
        };
        PsiMemory {
            some: line(MEM_SOME),
            full: line(MEM_FULL),
        }
    }
}

/// A fixed-point average as psi_show prints it (`LOAD_INT`.`LOAD_FRAC`, two decimals).
pub fn avg_value(avg: u64) -> f64 {
    let int = avg >> FSHIFT;
    let frac = ((avg & (FIXED_1 - 1)) * 100) >> FSHIFT;
    int as f64 + frac as f64 / 100.0
}

/// One line of /proc/pressure/memory.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PsiLine {
    pub total_us: u64,
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
}

/// /proc/pressure/memory or a cgroup's memory.pressure.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PsiMemory {
    pub some: PsiLine,
    pub full: PsiLine,
}

impl PsiMemory {
    /// The file's text, as psi_show formats it.
    pub fn text(&self) -> String {
        let line = |name: &str, l: &PsiLine| {
            format!(
                "{name} avg10={:.2} avg60={:.2} avg300={:.2} total={}\n",
                l.avg10, l.avg60, l.avg300, l.total_us
            )
        };
        line("some", &self.some) + &line("full", &self.full)
    }
}

/// The `psi` object of a run's JSON: the memory resource.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PsiResult {
    pub memory: PsiMemory,
}

/// A task as PSI sees it: its CPU, its groups (its memcg and every ancestor up to the root,
/// whose group is the system's) and its current `TSK_*` bits.
#[derive(Clone, Debug)]
struct Task {
    cpu: usize,
    groups: Vec<u16>,
    bits: u8,
    /// The last change handed to `set` (time, bits): later ones never go back in time.
    last_set: (u64, u8),
}

/// The accounting side: every group's per-CPU state, fed with task state changes in time order.
#[derive(Clone, Debug)]
pub struct Psi {
    groups: Vec<Group>,
    parents: Vec<Option<u16>>,
    tasks: Vec<Task>,
    /// Changes not yet applied: (time, sequence, task, new `TSK_*` bits).
    pending: BinaryHeap<Reverse<(u64, u64, u32, u8)>>,
    seq: u64,
    /// Everything up to this time has been applied.
    clock: u64,
    /// The earliest `work_at` of all groups (time, group), kept as they change.
    next_work: Option<(u64, usize)>,
    /// A reader's copy, fed the same changes (`with_reader`): a time series reads it at its
    /// sample times, so that reading (which collects, as `psi_show` does) never changes the
    /// run's own accounting.
    reader: Option<Box<Psi>>,
}

impl Psi {
    /// PSI over `nr_cpus` CPUs for memcgs with these parents (index 0 is the root, whose group
    /// is the system's).
    pub fn new(nr_cpus: usize, parents: &[Option<u16>]) -> Self {
        Psi {
            groups: (0..parents.len().max(1))
                .map(|_| Group::new(nr_cpus.max(1)))
                .collect(),
            parents: parents.to_vec(),
            tasks: Vec::new(),
            pending: BinaryHeap::new(),
            seq: 0,
            clock: 0,
            next_work: None,
            reader: None,
        }
    }

    /// Keeps a reader's copy: an exact copy now, fed every change from now on.
    pub fn with_reader(mut self) -> Self {
        self.reader = Some(Box::new(self.clone()));
        self
    }

    /// memory.pressure of a memcg at `t` as the reader's copy shows it (None without one).
    pub fn read(&mut self, memcg: u16, t: u64) -> Option<PsiMemory> {
        self.reader.as_mut().map(|r| r.show(memcg, t))
    }

    fn update_next_work(&mut self) {
        self.next_work = self
            .groups
            .iter()
            .enumerate()
            .filter_map(|(i, g)| g.work_at.map(|w| (w, i)))
            .min();
    }

    /// Adds a task on `cpu` in `memcg` (idle until its first change); returns its id.
    pub fn add_task(&mut self, cpu: u32, memcg: u16) -> u32 {
        if let Some(r) = self.reader.as_mut() {
            r.add_task(cpu, memcg);
        }
        let mut groups = Vec::new();
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            groups.push(c);
            cur = self.parents.get(c as usize).copied().flatten();
        }
        let nr_cpus = self.groups[0].cpus.len();
        self.tasks.push(Task {
            cpu: cpu as usize % nr_cpus,
            groups,
            bits: 0,
            last_set: (0, 0),
        });
        (self.tasks.len() - 1) as u32
    }

    /// From `at` on, task `task` has the `TSK_*` bits `bits` (0: asleep, not in I/O).
    pub fn set(&mut self, at: u64, task: u32, bits: u8) {
        if let Some(r) = self.reader.as_mut() {
            r.set(at, task, bits);
        }
        let tk = &mut self.tasks[task as usize];
        if tk.last_set.1 == bits {
            return;
        }
        let at = at.max(tk.last_set.0);
        tk.last_set = (at, bits);
        // Everything up to the clock is applied: a change at the clock goes in at once.
        if at <= self.clock {
            self.apply(self.clock, task, bits);
            return;
        }
        self.seq += 1;
        self.pending.push(Reverse((at, self.seq, task, bits)));
    }

    /// Applies the changes and runs the averaging work due by `t`, in time order. The engine
    /// calls it with its clock: no change is logged at an earlier time after that.
    pub fn advance_to(&mut self, t: u64) {
        if let Some(r) = self.reader.as_mut() {
            r.advance_to(t);
        }
        loop {
            let next_change = self.pending.peek().map(|Reverse(r)| r.0);
            let next_work = self.next_work;
            match (next_change, next_work) {
                (Some(c), w) if c <= t && w.is_none_or(|(w, _)| c <= w) => {
                    let Some(Reverse((at, _, task, bits))) = self.pending.pop() else {
                        break;
                    };
                    self.apply(at.max(self.clock), task, bits);
                }
                (_, Some((w, g))) if w <= t => {
                    self.clock = self.clock.max(w);
                    self.groups[g].avgs_work(w);
                    self.update_next_work();
                }
                _ => break,
            }
        }
        self.clock = self.clock.max(t);
    }

    /// `psi_task_change`: the task's bits change in every group it belongs to.
    fn apply(&mut self, at: u64, task: u32, bits: u8) {
        self.clock = at;
        let tk = &mut self.tasks[task as usize];
        let (clear, set) = (tk.bits & !bits, bits & !tk.bits);
        tk.bits = bits;
        if clear == 0 && set == 0 {
            return;
        }
        let mut clock_started = false;
        for &g in &tk.groups {
            let grp = &mut self.groups[g as usize];
            clock_started |= grp.work_at.is_none();
            grp.change(tk.cpu, clear, set, at);
        }
        if clock_started {
            self.update_next_work();
        }
    }

    /// Reads a group's memory.pressure (the root's: /proc/pressure/memory) at `t`.
    pub fn show(&mut self, memcg: u16, t: u64) -> PsiMemory {
        self.advance_to(t);
        let now = self.clock;
        self.groups[memcg as usize].show(now)
    }

    /// The time everything has been applied to.
    pub fn clock(&self) -> u64 {
        self.clock
    }
}

#[cfg(test)]
mod tests;
