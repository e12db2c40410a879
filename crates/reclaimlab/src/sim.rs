//! The discrete-event engine: worker threads with their own clocks, kswapd per node, the flusher
//! and writeback completions, ordered by simulated time (ties by insertion order, so a run is
//! deterministic). Kernel policies run on the machine model; textbook policies on a plain cache.

use crate::access::{PageRef, Via};
use crate::behaviour::{Behaviour, Behaviours, KernelModel};
use crate::consts::*;
use crate::machine::writeback::WbStat;
use crate::machine::{pg, Ctx, Machine, MachineConfig, MemcgWalk, Owner, StepTimes, Vm};
use crate::metrics::*;
use crate::policy::classic::Classic;
use crate::policy::mglru::{Mglru, MglruConfig};
use crate::policy::Policy;
use crate::sched::{Dispatch, Placement, Sched};
use crate::textbook::{TextbookCache, TextbookKind};
use crate::workload::{Action, ActionSource, MemcgFile, Scenario, Stream, StreamIter};
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A policy as named on the command line: `classic[:6.1|6.12][+behaviour...][-behaviour...]`,
/// `mglru[:6.1|6.12|7.1|7.2|7.2.13][+behaviour...][-behaviour...]`, `lru`, `clock`, `fifo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySpec {
    /// The classical LRU of a kernel (its behaviours, with any `+name`/`-name` of
    /// [`Behaviour::OUTSIDE_MGLRU`](crate::behaviour::Behaviour::OUTSIDE_MGLRU)), with its
    /// memcg walk for global reclaim.
    Classic(KernelModel, MemcgWalk),
    Mglru(MglruConfig),
    Textbook(TextbookKind),
}

impl PolicySpec {
    /// The classical LRU of a kernel with `mem_cgroup_iter` walks.
    pub const fn classic(kernel: Kernel) -> Self {
        PolicySpec::Classic(KernelModel::of(kernel), MemcgWalk::Iter)
    }

    /// The memcg walk of a kernel policy.
    pub fn memcg_walk(&self) -> Option<MemcgWalk> {
        match self {
            PolicySpec::Classic(_, w) => Some(*w),
            PolicySpec::Mglru(c) => Some(c.memcg_walk),
            PolicySpec::Textbook(_) => None,
        }
    }

    /// Sets the memcg walk (`POLICY@WALK`), if the policy and kernel have it.
    pub fn with_memcg_walk(self, walk: MemcgWalk) -> Result<Self, String> {
        match self {
            PolicySpec::Classic(k, _) if walk == MemcgWalk::MemcgLru => Err(format!(
                "classic:{k} has no memcg LRU (it is MGLRU's): use @iter or @heat"
            )),
            PolicySpec::Classic(k, _) => Ok(PolicySpec::Classic(k, walk)),
            PolicySpec::Mglru(c)
                if walk == MemcgWalk::MemcgLru && !c.switches.has(Behaviour::MemcgLru) =>
            {
                Err(format!(
                    "{} has no memcg LRU (behaviour memcg-lru, v6.3): use @iter or @heat, or \
                     add +memcg-lru",
                    PolicySpec::Mglru(c)
                ))
            }
            PolicySpec::Mglru(mut c) => {
                c.memcg_walk = walk;
                Ok(PolicySpec::Mglru(c))
            }
            PolicySpec::Textbook(t) => Err(format!("textbook policy '{t}' has no memcgs to walk")),
        }
    }

    /// The kernel a policy models, if it is a kernel policy.
    pub fn kernel(&self) -> Option<Kernel> {
        match self {
            PolicySpec::Classic(k, _) => Some(k.version),
            PolicySpec::Mglru(c) => Some(c.kernel),
            PolicySpec::Textbook(_) => None,
        }
    }
}

/// Splits `KERNEL[+name|-name]...` into the kernel (`default` when empty) and the modifiers.
fn split_kernel(rest: &str, default: Kernel) -> Result<(Kernel, &str), String> {
    let split = rest.find(['+', '-']).unwrap_or(rest.len());
    let (kernel, mods) = rest.split_at(split);
    let kernel = if kernel.is_empty() {
        default
    } else {
        kernel.parse()?
    };
    Ok((kernel, mods))
}

/// Parses `mglru[:KERNEL][+behaviour|-behaviour]...`. The default memcg walk follows the
/// behaviours (`memcg-lru`).
fn parse_mglru(rest: &str) -> Result<PolicySpec, String> {
    let (kernel, mods) = split_kernel(rest, Kernel::V7_2)?;
    let mut cfg = MglruConfig::new(kernel);
    cfg.switches = cfg.switches.apply_modifiers(mods)?;
    cfg.switches.check_requirements()?;
    cfg.memcg_walk = MglruConfig::default_memcg_walk(cfg.switches);
    Ok(PolicySpec::Mglru(cfg))
}

/// Parses `classic[:KERNEL][+behaviour|-behaviour]...`: the behaviours the classical LRU's
/// machine reads ([`Behaviour::OUTSIDE_MGLRU`]) only.
fn parse_classic(rest: &str) -> Result<PolicySpec, String> {
    let (k, mods) = split_kernel(rest, Kernel::V6_12)?;
    let mut km = KernelModel::from(k);
    km.behaviours = km.behaviours.apply_modifiers(mods)?;
    if let Some(b) = Behaviour::ALL
        .into_iter()
        .find(|b| !b.outside_mglru() && km.behaviours.has(*b) != Behaviours::of(k).has(*b))
    {
        return Err(format!(
            "classic:{k}: '{b}' is a behaviour of MGLRU's code, which the classical LRU never \
             runs (see `reclaimlab behaviours`)"
        ));
    }
    km.behaviours.check_requirements()?;
    Ok(PolicySpec::Classic(km, MemcgWalk::Iter))
}

impl FromStr for PolicySpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some((base, walk)) = s.rsplit_once('@') {
            return base.parse::<PolicySpec>()?.with_memcg_walk(walk.parse()?);
        }
        if let Some(rest) = s.strip_prefix("mglru") {
            let rest = rest.strip_prefix(':').unwrap_or(rest);
            return parse_mglru(rest);
        }
        if let Some(rest) = s.strip_prefix("classic") {
            let rest = rest.strip_prefix(':').unwrap_or(rest);
            return parse_classic(rest);
        }
        let (name, kernel) = match s.split_once(':') {
            Some((n, k)) => (n, Some(k.parse::<Kernel>()?)),
            None => (s, None),
        };
        match name {
            "lru" | "clock" | "fifo" if kernel.is_none() => Ok(PolicySpec::Textbook(name.parse()?)),
            "lru" | "clock" | "fifo" => Err(format!("textbook policy '{name}' takes no kernel")),
            _ => Err(format!(
                "unknown policy '{name}' (see `reclaimlab policies`: classic, mglru, lru, clock, fifo)"
            )),
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySpec::Classic(k, w) => {
                let mods = k.behaviours.modifiers_from(k.version.behaviours());
                write!(f, "classic:{k}{mods}")?;
                if *w != MemcgWalk::Iter {
                    write!(f, "@{w}")?;
                }
                Ok(())
            }
            PolicySpec::Mglru(c) => {
                let mods = c.switches.modifiers_from(c.kernel.behaviours());
                write!(f, "mglru:{}{mods}", c.kernel)?;
                if c.memcg_walk != MglruConfig::default_memcg_walk(c.switches) {
                    write!(f, "@{}", c.memcg_walk)?;
                }
                Ok(())
            }
            PolicySpec::Textbook(t) => write!(f, "{t}"),
        }
    }
}

/// Options of one run.
#[derive(Default)]
pub struct RunOptions<'a> {
    pub seed: u64,
    /// Check every invariant after each event (slow; for tests and debugging).
    pub check_invariants: bool,
    /// Stop at this simulated time.
    pub max_sim_ns: Option<u64>,
    /// Called with (accesses done, accesses expected) every 64Ki accesses.
    pub progress: Option<&'a dyn Fn(u64, u64)>,
    /// Record the lru_gen debugfs file every this many ns of simulated time (MGLRU).
    pub lru_gen_sample_ns: Option<u64>,
    /// lru_gen debugfs commands to write at given simulated times (a proactive schedule).
    pub lru_gen_schedule: Vec<(u64, String)>,
    /// Record the counters every this many ns of simulated time (`RunResult::timeseries`).
    pub sample_ns: Option<u64>,
    /// User-space memory agents attached to the run (`agents/`).
    pub agents: Vec<crate::agents::AgentSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A thread becomes runnable (it woke, or goes on after a step without sleeping), or got
    /// its CPU from a dispatch.
    Thread(u32),
    /// A CPU picks its next task (`sched.rs`).
    Dispatch(u32),
    LruGenCmd(usize),
    Agent(u32),
}

/// One access of a thread: the page, load or store, how it reaches the page, and for a
/// `read()` the pages left in its request from this one on (1 otherwise).
#[derive(Clone, Copy, Debug)]
struct Access {
    page: PageRef,
    op: crate::access::Op,
    via: Via,
    req: u32,
}

struct Thread {
    pid: u32,
    /// The CPU the thread runs on, or last ran on (it migrates, `sched.rs`).
    cpu: u32,
    /// The thread goes on without having slept (its CPU's current task).
    continuing: bool,
    /// A dispatch gave it its CPU: its next event runs it without asking the scheduler.
    dispatched: bool,
    /// The time of its queued event, if it has one.
    next_at: Option<u64>,
    /// When it last became runnable (a step it waited for starts then).
    ready_at: u64,
    /// Where its time went, and its time waiting for a CPU.
    times: StepTimes,
    runqueue_wait_ns: u64,
    src: StreamIter,
    accesses: u64,
    misses: u64,
    major: u64,
    marks: u64,
    killed: bool,
    /// Its process's exit_mmap runs: the thread finishes at its next event.
    exiting: bool,
    /// memcg control-file writes that failed (-EINVAL, -EAGAIN).
    write_errors: u64,
    done: bool,
    finish: u64,
    hist: LatencyHist,
    /// A background thread: it does not keep the run alive.
    daemon: bool,
    /// Barrier groups this thread takes part in.
    barrier_groups: Vec<u16>,
    /// The thread stops at this simulated time (`Stream::Until`, `Action::RunFor`).
    deadline: Option<u64>,
    /// Operations that begin before this time are not counted (`Action::Ramp`).
    ramp_until: Option<u64>,
    /// The thread has started (its first placement was a fork's, `Sched::fork`).
    forked: bool,
    /// Start of the operation in progress (`Action::OpBegin`).
    op_start: Option<u64>,
    /// Completed operations (`Action::OpEnd`) and their durations.
    ops: u64,
    op_hist: LatencyHist,
    /// First OpBegin and last OpEnd of this thread.
    op_window: Option<(u64, u64)>,
    /// The access the thread yielded in, and the kernel state it resumes from.
    yielded_access: Option<Access>,
    resume: Option<Box<crate::machine::Resume>>,
    /// When the access in progress started (its latency spans its yields).
    access_start: u64,
    /// When the thread started (`TASK_START_JITTER_NS`).
    start: u64,
    /// The next action, read ahead to see whether it may run nested (`Engine::run_until`).
    peeked: Option<Action>,
    /// Its access yielded at the OOM killer while nested: it goes on at the top level.
    oom_deferred: bool,
    /// It sleeps in `reclaim_throttle` (`vmscan::ThrottleSleep`): its event is queued at the
    /// sleep's deadline and moves earlier if the queue's sleepers are woken.
    throttle_sleep: Option<crate::machine::vmscan::ThrottleSleep>,
}

/// How many tasks may be suspended in reclaim below a running one (`machine::Nest`); deeper,
/// a task's reclaim lets only the kernel threads run. Bounds the stack, not the model: each
/// level needs another CPU, and the scheduler refuses tasks whose CPU is taken.
pub const MAX_NEST_DEPTH: u32 = 32;

/// Steps that may run while another task is suspended in reclaim.
fn runs_nested(a: &Action) -> bool {
    !matches!(
        a,
        Action::Exit | Action::MunmapAnon { .. } | Action::MemcgWrite { .. }
    )
}

impl State {
    /// The time of the next queued task-level event (a task past it yields at the next
    /// preemption point).
    fn next_event_time(&self) -> u64 {
        self.queue.peek_time().unwrap_or(u64::MAX)
    }
}

impl crate::machine::Nest for State {
    fn run_until(
        self: Box<Self>,
        m: &mut Machine,
        pol: &mut dyn Policy,
        until: u64,
    ) -> (Box<dyn crate::machine::Nest>, u64) {
        let mut e = Engine { st: self };
        let yield_at = e.run_nested(m, pol, until);
        (e.st, yield_at)
    }

    fn next_time(&self) -> u64 {
        self.next_event_time()
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

impl Engine {
    /// The other tasks' thread and dispatch events due by `until`, in time order, up to the
    /// first that may not run nested (an lru_gen command, an agent, an exit...); returns the
    /// time the suspended task must now yield at.
    fn run_nested(&mut self, m: &mut Machine, pol: &mut dyn Policy, until: u64) -> u64 {
        let be = &mut Be::Kernel { m, pol };
        let outer = (self.nest_until, self.step_times);
        self.nest_until = self.nest_until.min(until);
        self.depth += 1;
        loop {
            self.wake_throttle_sleepers(be);
            let Some((t, ev)) = self.queue.peek() else {
                break;
            };
            if t > until {
                break;
            }
            // Kernel-thread work due first runs first, as at the top level: work a nested task
            // queued (a flusher wakeup, a writeback completion) is done before the next task
            // step at or after its time, not only at the suspended reclaimer's next folio.
            // Not while a kernel thread is the one suspended (`catch_up`), nor kswapd's own
            // next run beside the kswapd that is suspended: when the work due cannot run, the
            // task events go on (going round again would spin forever).
            if let Be::Kernel { m, pol } = be {
                if !m.in_kthread_work() && m.next_kthread_time().is_some_and(|k| k <= t) {
                    let pol = &mut **pol;
                    if self.lent(m, |m| m.run_next_kthread_work(pol, t, t)) {
                        continue;
                    }
                }
            }
            match ev {
                Ev::Dispatch(c) => {
                    self.queue.pop();
                    self.dispatch_cpu(c, t);
                }
                Ev::Thread(i) if self.may_run_nested(i as usize) => {
                    self.queue.pop();
                    self.nested_steps += 1;
                    self.thread_event(be, i as usize, t);
                }
                _ => break,
            }
        }
        self.depth -= 1;
        (self.nest_until, self.step_times) = outer;
        self.next_event_time().min(self.nest_until)
    }
}

/// Tasks start at a seeded random time in `[0, TASK_START_JITTER_NS)` (100 µs, about what
/// creating a thread or forking a process takes), as the tasks of a benchmark never start at
/// the same instant: runs with different seeds differ in their interleaving even where every
/// access pattern is deterministic, which is where real repetitions get their spread.
pub const TASK_START_JITTER_NS: u64 = 100_000;

/// `n` events over `ns` nanoseconds of simulated time, per second (0 over no time).
fn per_second(n: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        n as f64 * 1e9 / ns as f64
    }
}

/// How an access step ended.
enum AccessEnd {
    /// Done at time `at`.
    Done { hit: bool, major: bool, at: u64 },
    /// The task yielded at `at` and resumes the access then.
    Yielded { at: u64 },
    /// The task was OOM-killed (or its allocation failed).
    Killed,
}

/// The model a run executes on.
enum Backend {
    Kernel {
        m: Box<Machine>,
        pol: Box<dyn Policy>,
    },
    Textbook {
        cache: Box<TextbookCache>,
        cfg: Box<MachineConfig>,
    },
}

/// The model a step runs on, borrowed: from the run's backend, or from the machine that lends
/// the engine back while a task is in the kernel (`machine::Nest`).
enum Be<'a> {
    Kernel {
        m: &'a mut Machine,
        pol: &'a mut dyn Policy,
    },
    Textbook {
        cache: &'a mut TextbookCache,
        cfg: &'a MachineConfig,
    },
}

impl Backend {
    fn be(&mut self) -> Be<'_> {
        match self {
            Backend::Kernel { m, pol } => Be::Kernel {
                m,
                pol: pol.as_mut(),
            },
            Backend::Textbook { cache, cfg } => Be::Textbook { cache, cfg },
        }
    }
}

/// The capacity a textbook cache gets: the memory the workload could use, i.e. the smallest
/// memory.max on the way to the root of the first process's memcg, or all memory above the
/// high watermarks.
pub fn textbook_capacity(scn: &Scenario) -> u64 {
    if let Some(pages) = scn.machine.cache_pages {
        return pages;
    }
    let limit = scn
        .procs
        .first()
        .map_or(u64::MAX, |p| memcg_path_limit(&scn.machine, &p.memcg));
    scn.machine.pages_above_high().min(limit)
}

/// The smallest memory.max of a memcg and its ancestors, from the configuration.
fn memcg_path_limit(cfg: &MachineConfig, path: &str) -> u64 {
    let mut limit = u64::MAX;
    let mut path = path;
    loop {
        if let Some(c) = cfg.memcgs.iter().find(|c| c.path == path) {
            limit = limit.min(c.max);
        }
        match path.rfind('/') {
            Some(0) | None => return limit,
            Some(i) => path = &path[..i],
        }
    }
}

/// The LRU capacity of a kernel policy's machine: the smallest memory.max on the way to the
/// root of the first process's memcg, or all memory above the high watermarks (what kswapd
/// leaves once the nodes are balanced).
pub fn kernel_capacity(scn: &Scenario, m: &Machine) -> u64 {
    let above_high: u64 = m.nodes.iter().map(|n| n.nr_pages - n.wmark.high).sum();
    let limit = scn
        .procs
        .first()
        .and_then(|p| m.memcg_by_path(&p.memcg))
        .map(|mc| {
            m.memcg_ancestors(mc)
                .map(|c| m.memcgs[c as usize].max)
                .min()
                .unwrap_or(u64::MAX)
        })
        .unwrap_or(u64::MAX);
    above_high.min(limit)
}

/// Sets a scenario's machine so that `pages` pages are available to the LRU
/// (`--cache-pages`): textbook caches get exactly `pages`, the kernel policies a one-node
/// machine with the least memory that leaves at least `pages` above the high watermark.
/// Returns the kernel policies' capacity (`pages` or a few more, from the watermarks'
/// rounding). Refused where a memcg limit, not memory, bounds the workload.
pub fn fit_capacity(scn: &mut Scenario, pages: u64) -> Result<u64, String> {
    if let Some(p) = scn.procs.first() {
        if memcg_path_limit(&scn.machine, &p.memcg) != u64::MAX {
            return Err(format!(
                "--cache-pages: a memory.max on memcg {} or above bounds this workload, not \
                 memory; the capacity cannot be set",
                p.memcg
            ));
        }
    }
    scn.machine.fit_lru_pages(pages)
}

/// Bytes the model keeps per simulated page frame for a scenario and policy: the folio
/// table and the policy's per-frame list links (page tables, page-cache
/// slots and swap slots scale with the workload's footprint and are counted separately by
/// the caller if needed).
pub fn model_bytes(scn: &Scenario, spec: PolicySpec) -> Result<u64, String> {
    if let PolicySpec::Textbook(_) = spec {
        // No machine: a slab entry and (at most half-full) two hash buckets per cached page.
        scn.validate()?;
        let per_page = crate::textbook::bytes_per_cached_page();
        return Ok(textbook_capacity(scn) * per_page);
    }
    let m = build_machine(scn)?;
    let frames = m.folios.len() as u64;
    let folio = std::mem::size_of::<crate::machine::Folio>() as u64 * frames;
    let lruvecs = (m.memcgs.len() * m.nr_nodes()) as u64;
    let policy = match spec {
        // prev, next and owner words per frame (machine::Lists).
        PolicySpec::Classic(..) => 12 * frames,
        // Plus per lruvec: the generation state and its two Bloom filters (2^15 bits each).
        PolicySpec::Mglru(_) => {
            12 * frames
                + lruvecs
                    * (std::mem::size_of::<crate::policy::mglru::GenLruvec>() as u64
                        + 2 * (1 << 15) / 8)
        }
        PolicySpec::Textbook(_) => 0,
    };
    let ptes: u64 = m
        .procs
        .iter()
        .flat_map(|p| &p.vmas)
        .map(|v| v.ptes.len() as u64 * 8)
        .sum();
    let slots: u64 = m.files.iter().map(|f| f.slots.len() as u64 * 16).sum();
    Ok(folio + policy + ptes + slots)
}

/// Builds the machine of a scenario: memcgs, files, processes and their mappings.
pub fn build_machine(scn: &Scenario) -> Result<Machine, String> {
    scn.validate()?;
    let mut m = Machine::new(scn.machine.clone())?;
    for f in &scn.files {
        m.create_file_on(&f.name, f.pages, f.tmpfs);
    }
    for p in &scn.procs {
        let memcg = m
            .memcg_by_path(&p.memcg)
            .ok_or_else(|| format!("process '{}': unknown memcg '{}'", p.name, p.memcg))?;
        let pid = m.create_process(&p.name, memcg, p.anon_pages);
        for &(file, flags) in &p.mmaps {
            m.mmap_file(pid, file as u32, flags);
        }
        for &file in &p.fadvise_random {
            m.procs[pid as usize].file_ra(file as u32).random = true;
        }
    }
    Ok(m)
}

/// Runs a scenario under a policy and seed.
pub fn run(scn: &Scenario, spec: PolicySpec, opts: &RunOptions) -> Result<RunResult, String> {
    let mut cfg = scn.machine.clone();
    if let Some(k) = spec.kernel() {
        cfg.kernel = k;
    }
    cfg.behaviours = spec.machine_behaviours();
    let scn_k = Scenario {
        machine: cfg,
        ..scn.clone()
    };
    if let PolicySpec::Textbook(kind) = spec {
        // A textbook cache needs no machine: capacity comes from the configuration.
        scn_k.validate()?;
        let cap = textbook_capacity(&scn_k);
        check_host_memory(&scn_k, Some(cap))?;
        let backend = Backend::Textbook {
            cache: Box::new(TextbookCache::new(kind, cap as usize)),
            cfg: Box::new(scn_k.machine.clone()),
        };
        return run_engine(&scn_k, spec, backend, opts);
    }
    scn_k.validate()?;
    check_host_memory(&scn_k, None)?;
    let m = build_machine(&scn_k)?;
    let backend = match spec {
        PolicySpec::Classic(_, walk) => {
            let pol: Box<dyn Policy> = Box::new(Classic::new(&m).with_memcg_walk(walk));
            Backend::Kernel {
                m: Box::new(m),
                pol,
            }
        }
        // `enabled` without the core bit: the kernel runs the classical LRU.
        PolicySpec::Mglru(c) if c.enabled & crate::consts::LRU_GEN_CORE == 0 => {
            let walk = match c.memcg_walk {
                MemcgWalk::MemcgLru => MemcgWalk::Iter,
                w => w,
            };
            let pol: Box<dyn Policy> = Box::new(Classic::new(&m).with_memcg_walk(walk));
            Backend::Kernel {
                m: Box::new(m),
                pol,
            }
        }
        PolicySpec::Mglru(c) => {
            let pol: Box<dyn Policy> = Box::new(Mglru::new(&m, c));
            Backend::Kernel {
                m: Box::new(m),
                pol,
            }
        }
        PolicySpec::Textbook(_) => unreachable!("textbook caches run without a machine"),
    };
    run_engine(&scn_k, spec, backend, opts)
}

/// Refuses a run whose model would not fit the host's memory, before allocating it.
fn check_host_memory(scn: &Scenario, textbook: Option<u64>) -> Result<(), String> {
    let what = format!(
        "scenario '{}' ({} MiB of simulated memory, {} pages of files and anon areas)",
        scn.name,
        scn.machine.total_pages() >> 8,
        scn.footprint()
    );
    crate::host::check_fits(scn.host_bytes(textbook), &what)
}

/// The most lru_gen samples a run keeps (each is the whole debugfs file): a run that would
/// take more ends in an error instead of filling memory.
pub const MAX_LRU_GEN_SAMPLES: usize = 100_000;

/// Runs the engine of a scenario on a backend to its end.
fn run_engine(
    scn: &Scenario,
    spec: PolicySpec,
    backend: Backend,
    opts: &RunOptions,
) -> Result<RunResult, String> {
    let mut backend = backend;
    let be = &mut backend.be();
    let mut engine = Engine::new(scn, be, opts.seed);
    engine.schedule_lru_gen(opts);
    engine.sampler = opts
        .sample_ns
        .filter(|&n| n > 0)
        .map(crate::timeseries::Sampler::new);
    if engine.sampler.is_some() {
        engine.psi = engine.psi.take().map(|p| Box::new(p.with_reader()));
    }
    engine.start_agents(be, spec, &opts.agents)?;
    engine.run(be, opts)?;
    engine.psi_finish(be);
    let timeseries = engine.sampler.take().map(|s| s.finish());
    Ok(RunResult {
        timeseries,
        ..engine.result(be, scn, spec, opts.seed)
    })
}

/// The run's engine. Its state is boxed, so that lending it to the machine while a task runs
/// in the kernel (`machine::Nest`) moves a pointer.
struct Engine {
    st: Box<State>,
}

impl std::ops::Deref for Engine {
    type Target = State;
    fn deref(&self) -> &State {
        &self.st
    }
}

impl std::ops::DerefMut for Engine {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.st
    }
}

#[derive(Default)]
struct State {
    threads: Vec<Thread>,
    queue: crate::event_queue::EventQueue<Ev>,
    hist: LatencyHist,
    pow2_us: Vec<u64>,
    now: u64,
    expected: u64,
    done_accesses: u64,
    lru_gen_samples: Vec<(u64, String)>,
    lru_gen_results: Vec<LruGenCommandResult>,
    schedule: Vec<(u64, String)>,
    /// The next lru_gen sample's time and the period (`RunOptions::lru_gen_sample_ns`).
    sample_every: Option<(u64, u64)>,
    barriers: BTreeMap<u16, BarrierState>,
    /// Durations of every completed operation, their power-of-two buckets in seconds and in
    /// microseconds, and the window from the first OpBegin to the last OpEnd.
    op_hist: LatencyHist,
    op_pow2_s: Vec<u64>,
    op_pow2_us: Vec<u64>,
    op_window: Option<(u64, u64)>,
    /// Accesses preempted inside the kernel (`RunResult::preemptions`).
    preemptions: u64,
    /// The CPUs (`sched.rs`).
    sched: Sched,
    /// Where the current step's time went.
    step_times: StepTimes,
    /// The counters' time series (`RunOptions::sample_ns`), read-only on the model.
    sampler: Option<crate::timeseries::Sampler>,
    /// Pressure stall accounting (kernel backends): task ids are thread indices, then one
    /// kswapd per node.
    psi: Option<Box<crate::machine::psi::Psi>>,
    psi_marks: Vec<(u64, u8)>,
    /// memory.pressure of every memcg (index: memcg id; 0 is /proc/pressure/memory) at the end.
    psi_final: Vec<crate::machine::psi::PsiMemory>,
    /// Σ memory.current × time per memcg (page·ns) up to `usage_clock`, for the time-weighted
    /// mean of memory.current.
    usage_area: Vec<u128>,
    usage_clock: u64,
    /// memory.current of each memcg since `usage_clock`, and the machine's `usage_epoch` then.
    usage_last: Vec<u64>,
    usage_epoch: u64,
    /// Attached agents, their logs, and each frame's last access time when one needs it.
    agents: Vec<Box<dyn crate::agents::Agent>>,
    agent_logs: Vec<crate::agents::AgentLog>,
    access_ages: Vec<u64>,
    /// Worker threads still running.
    live: usize,
    /// Other tasks may run while a task is in the kernel (`machine::Nest`): a kernel backend
    /// with `MachineConfig::interleave`, more than one thread and more than one CPU.
    nest_enabled: bool,
    /// How many tasks are suspended in reclaim below the one running, and the earliest of
    /// their clocks (a nested task yields once past it, so that they go on).
    depth: u32,
    nest_until: u64,
    /// An empty state to put in the engine's place when it is lent to the machine.
    spare: Option<Box<State>>,
    /// Thread events run nested (`CpuResult::nested_steps`).
    nested_steps: u64,
}

/// Threads waiting at a barrier.
#[derive(Default)]
struct BarrierState {
    parties: u16,
    waiting: Vec<usize>,
    departed: u16,
}

/// Expected accesses of a stream, for the progress bar.
fn expected_accesses(s: &Stream) -> u64 {
    if s.is_background() {
        return 0;
    }
    match s.undelayed().0 {
        Stream::Phases(p) => p.iter().map(|ph| ph.ops).sum(),
        Stream::Rounds { phases, rounds, .. } => {
            phases.iter().map(|ph| ph.ops).sum::<u64>() * rounds
        }
        Stream::Actions(a) => a
            .iter()
            .filter(|a| matches!(a, Action::Access { .. }))
            .count() as u64,
        Stream::Replay(r) => r.records,
        Stream::Script(sc) => {
            let ops = |steps: &[crate::workload::Step]| -> u64 {
                steps
                    .iter()
                    .map(|st| match st {
                        crate::workload::Step::Phase(p) => p.ops,
                        crate::workload::Step::AppCache(c) => c.spec.block_pages,
                        _ => 0,
                    })
                    .sum()
            };
            ops(&sc.setup).saturating_add(ops(&sc.steps).saturating_mul(sc.rounds))
        }
        Stream::Background { .. }
        | Stream::Delayed { .. }
        | Stream::Synced { .. }
        | Stream::Until { .. }
        | Stream::Daemon { .. } => 0,
    }
}

impl Engine {
    fn new(scn: &Scenario, be: &mut Be<'_>, seed: u64) -> Self {
        let mut share = crate::workload::RunShare::default();
        let threads = scn
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| Thread {
                pid: t.proc as u32,
                cpu: t.cpu,
                continuing: false,
                dispatched: false,
                next_at: None,
                ready_at: 0,
                times: StepTimes::default(),
                runqueue_wait_ns: 0,
                src: StreamIter::new(
                    &t.stream,
                    seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
                    &mut share,
                ),
                accesses: 0,
                misses: 0,
                major: 0,
                marks: 0,
                killed: false,
                write_errors: 0,
                exiting: false,
                done: false,
                finish: 0,
                hist: LatencyHist::default(),
                daemon: t.stream.is_background(),
                barrier_groups: t.stream.barrier_groups(),
                deadline: t.stream.deadline(),
                ramp_until: None,
                forked: false,
                op_start: None,
                ops: 0,
                op_hist: LatencyHist::default(),
                op_window: None,
                yielded_access: None,
                resume: None,
                access_start: 0,
                start: 0,
                peeked: None,
                oom_deferred: false,
                throttle_sleep: None,
            })
            .collect();
        let mut e = Engine {
            st: Box::new(State {
                threads,
                queue: Default::default(),
                hist: LatencyHist::default(),
                pow2_us: vec![0; 1],
                now: 0,
                expected: scn
                    .threads
                    .iter()
                    .map(|t| expected_accesses(&t.stream))
                    .sum(),
                done_accesses: 0,
                lru_gen_samples: Vec::new(),
                lru_gen_results: Vec::new(),
                schedule: Vec::new(),
                sample_every: None,
                barriers: BTreeMap::new(),
                op_hist: LatencyHist::default(),
                op_pow2_s: vec![0; 1],
                op_pow2_us: vec![0; 1],
                op_window: None,
                preemptions: 0,
                sched: Sched::new(
                    scn.machine.cpus,
                    scn.machine.node_pages.len(),
                    scn.machine.kernel_model(),
                ),
                step_times: StepTimes::default(),
                sampler: None,
                psi: None,
                psi_marks: Vec::new(),
                psi_final: Vec::new(),
                usage_area: Vec::new(),
                usage_clock: 0,
                usage_last: Vec::new(),
                usage_epoch: u64::MAX,
                agents: Vec::new(),
                agent_logs: Vec::new(),
                access_ages: Vec::new(),
                live: scn
                    .threads
                    .iter()
                    .filter(|t| !t.stream.is_background())
                    .count(),
                nest_enabled: matches!(be, Be::Kernel { .. })
                    && scn.machine.interleave
                    && scn.threads.len() > 1
                    && scn.machine.cpus > 1,
                depth: 0,
                nest_until: u64::MAX,
                spare: None,
                nested_steps: 0,
            }),
        };
        e.psi_init(be, scn);
        let mut jitter = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x7374_6172_7420_6a69);
        for i in 0..e.threads.len() {
            let start = rand::Rng::random_range(&mut jitter, 0..TASK_START_JITTER_NS);
            e.threads[i].start = start;
            e.push_thread(i, start);
            e.psi_wake(i, start);
        }
        if let Be::Kernel { m, .. } = &mut *be {
            m.start_periodic_flusher();
        }
        e
    }

    /// Sets up PSI on a kernel backend: each thread a task on its CPU in its process's memcg,
    /// and each node's kswapd a task in the root on the node's first CPU.
    fn psi_init(&mut self, be: &mut Be<'_>, _scn: &Scenario) {
        let Be::Kernel { m, .. } = &*be else {
            return;
        };
        let parents: Vec<Option<u16>> = m.memcgs.iter().map(|c| c.parent).collect();
        let cpus = m.cfg.cpus.max(1) as usize;
        let nr_cpus = self
            .threads
            .iter()
            .map(|t| t.cpu as usize + 1)
            .fold(cpus, usize::max);
        let mut psi = crate::machine::psi::Psi::new(nr_cpus, &parents);
        for t in &self.threads {
            psi.add_task(t.cpu, m.procs[t.pid as usize].memcg);
        }
        let nodes = m.nodes.len().max(1);
        for n in 0..nodes {
            psi.add_task((n * cpus / nodes) as u32, 0);
        }
        self.psi = Some(Box::new(psi));
    }

    /// Thread `i` is awake (running) from `t`.
    fn psi_wake(&mut self, i: usize, t: u64) {
        if let Some(p) = self.psi.as_mut() {
            p.set(t, i as u32, crate::machine::psi::TSK_RUNNING);
        }
    }

    /// Thread `i` sleeps (not in I/O) from `t`.
    fn psi_sleep(&mut self, i: usize, t: u64) {
        if let Some(p) = self.psi.as_mut() {
            p.set(t, i as u32, 0);
        }
    }

    /// Hands the machine's log of thread `i`'s stalls and waits to PSI.
    fn psi_take_marks(&mut self, be: &mut Be<'_>, i: usize) {
        let st = &mut *self.st;
        let (Some(p), Be::Kernel { m, .. }) = (st.psi.as_mut(), be) else {
            return;
        };
        m.psi_take_marks(&mut st.psi_marks);
        for (at, flags) in st.psi_marks.drain(..) {
            p.set(at, i as u32, crate::machine::psi::task_bits(flags));
        }
    }

    /// Hands kswapd's runs (memory stalls from start to end) to PSI.
    fn psi_take_kswapd(&mut self, be: &mut Be<'_>) {
        let first = self.threads.len() as u32;
        let (Some(p), Be::Kernel { m, .. }) = (self.st.psi.as_mut(), be) else {
            return;
        };
        use crate::machine::psi::{TSK_MEMSTALL, TSK_MEMSTALL_RUNNING, TSK_RUNNING};
        for (node, start, end) in m.psi.kswapd.drain(..) {
            let task = first + node as u32;
            p.set(
                start,
                task,
                TSK_MEMSTALL | TSK_RUNNING | TSK_MEMSTALL_RUNNING,
            );
            p.set(end, task, 0);
        }
    }

    /// After an event at `t` that changed some memcg's memory.current (charges inside a task's
    /// access count from the time of the event that made them), integrates the usage held
    /// since the last change up to `t`. Events that changed nothing cost one comparison.
    fn meter_usage(&mut self, be: &mut Be<'_>, t: u64) {
        let Be::Kernel { m, .. } = &*be else {
            return;
        };
        if m.usage_epoch == self.usage_epoch {
            return;
        }
        self.usage_epoch = m.usage_epoch;
        let dt = t.saturating_sub(self.usage_clock) as u128;
        self.usage_clock = self.usage_clock.max(t);
        self.usage_area.resize(m.memcgs.len(), 0);
        self.usage_last.resize(m.memcgs.len(), 0);
        let st = &mut *self.st;
        for ((a, last), c) in st
            .usage_area
            .iter_mut()
            .zip(st.usage_last.iter_mut())
            .zip(&m.memcgs)
        {
            *a += *last as u128 * dt;
            *last = c.usage;
        }
    }

    /// The time-weighted mean of memcg `mc`'s memory.current over the run (pages).
    fn current_mean_pages(&self, mc: usize) -> f64 {
        match self.usage_area.get(mc) {
            Some(&a) if self.usage_clock > 0 => a as f64 / self.usage_clock as f64,
            _ => 0.0,
        }
    }

    /// Reads every memcg's memory.pressure at the end of the run.
    fn psi_finish(&mut self, be: &mut Be<'_>) {
        self.psi_take_kswapd(be);
        let end = self
            .threads
            .iter()
            .filter(|t| !t.daemon)
            .map(|t| t.finish)
            .fold(self.now, u64::max);
        // Close the integral at the end of the run.
        self.usage_epoch = self.usage_epoch.wrapping_sub(1);
        self.meter_usage(be, end);
        if let Some(p) = self.psi.as_mut() {
            let n = match &*be {
                Be::Kernel { m, .. } => m.memcgs.len(),
                Be::Textbook { .. } => 0,
            };
            self.psi_final = (0..n).map(|mc| p.show(mc as u16, end)).collect();
        }
    }

    /// Builds the agents and queues their first wake-ups; lru-gen-age needs MGLRU.
    fn start_agents(
        &mut self,
        be: &mut Be<'_>,
        spec: PolicySpec,
        specs: &[crate::agents::AgentSpec],
    ) -> Result<(), String> {
        for (k, s) in specs.iter().enumerate() {
            let agent = s.build()?;
            let Be::Kernel { m, pol } = &*be else {
                return Err(format!(
                    "--agent {}: {spec} is a textbook cache: no cgroups, PSI or lru_gen",
                    s.name
                ));
            };
            if s.name == "lru-gen-age" && pol.lru_gen_show(m, false).is_none() {
                return Err(format!(
                    "--agent lru-gen-age needs an mglru policy (not {spec})"
                ));
            }
            if agent.needs_access_ages() && self.access_ages.is_empty() {
                self.access_ages = vec![0; m.folios.len()];
            }
            self.push(agent.first_wake(), Ev::Agent(k as u32));
            self.agents.push(agent);
            self.agent_logs.push(crate::agents::AgentLog {
                agent: s.to_string(),
                ..Default::default()
            });
        }
        Ok(())
    }

    /// An agent wakes at `t`, acts through the machine's interfaces, and sleeps again.
    fn wake_agent(&mut self, be: &mut Be<'_>, k: usize, t: u64) {
        let Be::Kernel { m, pol } = be else {
            return;
        };
        let st = &mut *self.st;
        let mut sys = crate::agents::sys::MachineSys {
            m,
            pol: &mut **pol,
            psi: st.psi.as_deref_mut(),
            now: t,
            ages: &st.access_ages,
            spent_ns: 0,
        };
        let log = &mut st.agent_logs[k];
        log.wakeups += 1;
        let next = st.agents[k].wake(&mut sys, t, log);
        if let Some(next) = next {
            self.push(next.max(t + 1), Ev::Agent(k as u32));
        }
    }

    /// Records the time of an access on the frame it left resident (DAMON's access ages).
    fn note_access(&mut self, be: &mut Be<'_>, i: usize, page: PageRef, via: Via, t: u64) {
        let Be::Kernel { m, .. } = &*be else {
            return;
        };
        let pid = self.threads[i].pid;
        if let Some(pfn) = crate::agents::sys::resident_frame(m, pid, page, via) {
            if let Some(a) = self.access_ages.get_mut(pfn) {
                *a = t;
            }
        }
    }

    /// Queues the lru_gen samples and commands of the run options.
    fn schedule_lru_gen(&mut self, opts: &RunOptions) {
        self.schedule = opts.lru_gen_schedule.clone();
        for i in 0..self.schedule.len() {
            let t = self.schedule[i].0;
            self.push(t, Ev::LruGenCmd(i));
        }
        if let Some(every) = opts.lru_gen_sample_ns.filter(|&e| e > 0) {
            // Not a queued event: an event in the queue would move the tasks' preemption
            // points (`yield_at`), so sampling would change the run.
            self.sample_every = Some((every, every));
        }
    }

    fn push(&mut self, t: u64, ev: Ev) {
        self.queue.push(t, ev);
    }

    /// Queues thread `i`'s next event at `t`.
    fn push_thread(&mut self, i: usize, t: u64) {
        self.threads[i].next_at = Some(t);
        self.push(t, Ev::Thread(i as u32));
    }

    /// Thread `i` is runnable at `t`: it runs a step if the scheduler gives it a CPU, or waits
    /// in a run queue. Returns true when the thread has finished.
    fn thread_ready(&mut self, be: &mut Be<'_>, i: usize, t: u64) -> bool {
        let th = &mut self.threads[i];
        th.next_at = None;
        let placement = if std::mem::take(&mut th.dispatched) {
            Placement::Run { cpu: th.cpu }
        } else {
            th.ready_at = t;
            let (task, cpu) = (i as u32, th.cpu);
            if std::mem::take(&mut th.continuing) {
                self.sched.resume(task, cpu, t)
            } else if !std::mem::replace(&mut th.forked, true) {
                self.sched.fork(task, cpu, t)
            } else {
                self.sched.wake(task, cpu, t)
            }
        };
        match placement {
            Placement::Wait { cpu, dispatch } => {
                self.threads[i].cpu = cpu;
                if let Some(at) = dispatch {
                    self.push(at, Ev::Dispatch(cpu));
                }
                false
            }
            Placement::Run { cpu } => self.run_step(be, i, t, cpu),
        }
    }

    /// Thread `i` runs its next step on `cpu` from `t`: its CPU time is one burst there, then
    /// its waits off the CPU.
    fn run_step(&mut self, be: &mut Be<'_>, i: usize, t: u64, cpu: u32) -> bool {
        self.threads[i].cpu = cpu;
        self.sched.occupy(cpu);
        self.step_times = StepTimes::default();
        let finished = self.step_thread(be, i, t);
        let times = self.step_times;
        let th = &mut self.threads[i];
        th.times.add(&times);
        let runnable = !finished
            && th.next_at.is_some()
            && times.off_cpu_ns() == 0
            && th.throttle_sleep.is_none();
        th.continuing = runnable;
        if let Some(at) = self.sched.ran(i as u32, cpu, t, times.cpu_ns(), runnable) {
            self.push(at, Ev::Dispatch(cpu));
        }
        finished
    }

    /// A CPU's dispatch event: the task it picks runs now, or when it became runnable if
    /// that is later (it queued, at a later time, behind a task whose burst was not known yet:
    /// it ran nested, `machine::Nest`).
    fn dispatch_cpu(&mut self, cpu: u32, t: u64) {
        match self.sched.dispatch(cpu, t) {
            Dispatch::None => {}
            Dispatch::Again(at) => self.push(at, Ev::Dispatch(cpu)),
            Dispatch::Run { task, waited } => {
                let th = &mut self.threads[task as usize];
                th.dispatched = true;
                th.cpu = cpu;
                th.runqueue_wait_ns += waited;
                let at = t.max(th.ready_at);
                self.push_thread(task as usize, at);
            }
        }
    }

    /// The CPUs' invariants, with the threads': a waiting thread has no queued event and has
    /// not finished, and every live thread is either waiting, has an event queued, or waits
    /// at a barrier.
    fn check_sched(&self) -> Result<(), String> {
        self.sched.check()?;
        for i in self.sched.waiting() {
            let th = &self.threads[i as usize];
            if th.next_at.is_some() || th.done {
                return Err(format!(
                    "thread {i} waits for a CPU but has an event queued or finished"
                ));
            }
        }
        Ok(())
    }

    /// Places the kernel threads' runs since the last call on CPUs (they take CPU time from
    /// the tasks there).
    fn place_kthread_bursts(&mut self, be: &mut Be<'_>) {
        if let Be::Kernel { m, .. } = be {
            for (start, ns, node) in m.kthreads.cpu.bursts.drain(..) {
                self.sched.reserve(node, start, ns);
            }
        }
    }

    fn run(&mut self, be: &mut Be<'_>, opts: &RunOptions) -> Result<(), String> {
        while self.live > 0 {
            let next_task = self.queue.peek_time();
            let next_kthread = match &*be {
                Be::Kernel { m, .. } => m.next_kthread_time(),
                Be::Textbook { .. } => None,
            };
            // Kernel threads first when due at the same time as a task.
            let t = match (next_task, next_kthread) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
            };
            self.take_samples(be, |due| due < t)?;
            self.take_lru_gen_samples(be, |due| due < t)?;
            if opts.max_sim_ns.is_some_and(|max| t > max) {
                break;
            }
            self.now = t;
            if let Be::Kernel { m, .. } = be {
                m.lock_floor = t;
            }
            if let Some(p) = self.psi.as_mut() {
                p.advance_to(t);
            }
            if next_kthread == Some(t) {
                let horizon = next_task.unwrap_or(u64::MAX);
                if let Be::Kernel { m, pol } = be {
                    let pol = &mut **pol;
                    self.lent(m, |m| m.run_next_kthread_work(pol, t, horizon));
                }
            } else {
                let Some((t, ev)) = self.queue.pop() else {
                    break;
                };
                match ev {
                    Ev::Dispatch(c) => self.dispatch_cpu(c, t),
                    Ev::Thread(i) => self.thread_event(be, i as usize, t),
                    Ev::LruGenCmd(i) => self.run_lru_gen_cmd(be, i, t),
                    Ev::Agent(k) => self.wake_agent(be, k as usize, t),
                }
            }
            self.wake_throttle_sleepers(be);
            self.place_kthread_bursts(be);
            self.psi_take_kswapd(be);
            self.meter_usage(be, t);
            if opts.check_invariants {
                self.check_sched()
                    .map_err(|e| format!("invariant broken at t={t}: {e}"))?;
                if let Be::Kernel { m, pol } = &*be {
                    m.check_invariants(&**pol)
                        .map_err(|e| format!("invariant broken at t={t}: {e}"))?;
                }
            }
            if let Some(p) = opts.progress {
                if self.done_accesses & 0xffff == 0 && self.done_accesses > 0 {
                    p(self.done_accesses, self.expected);
                }
            }
        }
        let end = self.now;
        self.take_samples(be, |due| due <= end)?;
        self.take_lru_gen_samples(be, |due| due <= end)?;
        // Threads still running at the time limit finish there.
        let now = self.now;
        for th in self.threads.iter_mut().filter(|th| !th.done) {
            th.finish = now;
        }
        match self.threads.iter().find_map(|th| th.src.error()) {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }

    /// Runs a thread's next action at time `t` (or resumes the access it yielded in); returns
    /// true when the thread has finished.
    fn step_thread(&mut self, be: &mut Be<'_>, i: usize, t: u64) -> bool {
        self.psi_wake(i, t);
        let finished = self.step_thread_inner(be, i, t);
        if finished {
            self.psi_sleep(i, t);
        }
        finished
    }

    fn step_thread_inner(&mut self, be: &mut Be<'_>, i: usize, t: u64) -> bool {
        if let Some(a) = self.threads[i].yielded_access {
            if !self.thread_process_dead(be, self.threads[i].pid) {
                return self.run_access(be, i, t, a);
            }
        }
        if self.threads[i].exiting {
            return self.finish_thread(i, t);
        }
        loop {
            let pid = self.threads[i].pid;
            if self.threads[i].deadline.is_some_and(|d| t >= d) {
                return self.finish_thread(i, t);
            }
            if self.thread_process_dead(be, pid) {
                self.threads[i].killed = true;
                return self.finish_thread(i, t);
            }
            let Some(action) = self.next_action(i) else {
                return self.finish_thread(i, t);
            };
            if self.depth > 0 && !runs_nested(&action) {
                // Not while a reclaimer below has a batch isolated: at the top level.
                self.threads[i].peeked = Some(action);
                self.push_thread(i, t);
                return false;
            }
            match action {
                Action::Mark => {
                    self.threads[i].marks += 1;
                    continue;
                }
                Action::Ramp(ns) => {
                    self.threads[i].ramp_until = Some(t.saturating_add(ns));
                    continue;
                }
                Action::RunFor(ns) => {
                    let end = t.saturating_add(ns);
                    let d = &mut self.threads[i].deadline;
                    *d = Some(d.map_or(end, |d| d.min(end)));
                    continue;
                }
                Action::Barrier { group, parties } => {
                    self.psi_sleep(i, t);
                    self.arrive_at_barrier(i, t, group, parties);
                }
                Action::OpBegin => {
                    // The operation began when the thread became runnable for it.
                    let begin = self.threads[i].ready_at.min(t);
                    if self.threads[i].ramp_until.is_some_and(|r| begin < r) {
                        // A warm-up's operation: it runs, uncounted.
                        self.threads[i].op_start = None;
                        continue;
                    }
                    self.threads[i].op_start = Some(begin);
                    let w = self.op_window.get_or_insert((begin, begin));
                    w.0 = w.0.min(begin);
                    continue;
                }
                Action::OpEnd => {
                    if let Some(start) = self.threads[i].op_start.take() {
                        self.record_op(i, start, t);
                    }
                    continue;
                }
                Action::Exit => {
                    let end = self.exit_process(be, i, t);
                    if end > t {
                        // It finishes when exit_mmap is done.
                        self.threads[i].exiting = true;
                        self.push_thread(i, end);
                        return false;
                    }
                    return self.finish_thread(i, t);
                }
                Action::MemcgWrite { memcg, file, value } => {
                    let elapsed = self.memcg_write(be, i, t, memcg, file, value);
                    self.push_thread(i, t + elapsed.max(1));
                }
                Action::Think(ns) => {
                    self.step_times.user_ns += ns;
                    self.push_thread(i, t + ns);
                }
                Action::Syscall(ns) => {
                    self.step_times.sys_ns += ns;
                    self.push_thread(i, t + ns);
                }
                Action::IoUringIssue => {
                    let ns = self.io_uring_punt_ns(be);
                    self.step_times.sys_ns += ns;
                    self.push_thread(i, t + ns);
                }
                Action::Sleep(ns) => {
                    if ns > 0 {
                        self.psi_sleep(i, t);
                    }
                    self.step_times.sleep_ns += ns;
                    self.push_thread(i, t + ns);
                }
                Action::WaitUntil(at) => {
                    if at > t {
                        self.psi_sleep(i, t);
                    }
                    self.step_times.sleep_ns += at.saturating_sub(t);
                    self.push_thread(i, at.max(t));
                }
                Action::MunmapAnon { start, len } => {
                    let elapsed = self.munmap(be, i, t, start, len);
                    self.push_thread(i, t + elapsed);
                }
                Action::Access { page, op, via, req } => {
                    // Its latency counts from when the thread became runnable for it.
                    self.threads[i].access_start = self.threads[i].ready_at.min(t);
                    return self.run_access(be, i, t, Access { page, op, via, req });
                }
            }
            return false;
        }
    }

    /// A thread reaches a barrier: it waits until `parties` threads of the group have arrived
    /// (or left: a thread that finishes or is killed counts as arrived for good).
    fn arrive_at_barrier(&mut self, i: usize, t: u64, group: u16, parties: u16) {
        let b = self.barriers.entry(group).or_default();
        b.parties = parties;
        b.waiting.push(i);
        self.release_barrier(group, t);
    }

    fn release_barrier(&mut self, group: u16, t: u64) {
        let Some(b) = self.barriers.get_mut(&group) else {
            return;
        };
        if b.parties == 0 || (b.waiting.len() + b.departed as usize) < b.parties as usize {
            return;
        }
        let waiting = std::mem::take(&mut b.waiting);
        for w in waiting {
            self.push_thread(w, t);
        }
    }

    /// A finished or killed thread no longer holds up its barriers.
    fn depart_barriers(&mut self, i: usize, t: u64) {
        let groups: Vec<u16> = self.threads[i].barrier_groups.clone();
        for g in groups {
            self.barriers.entry(g).or_default().departed += 1;
            self.release_barrier(g, t);
        }
    }

    /// A worker's throughput: accesses per simulated second until it finished (or the run
    /// ended), so fixed-work and fixed-time runs compare alike.
    fn worker_rate(t: &Thread) -> f64 {
        per_second(t.accesses, t.finish.saturating_sub(t.start))
    }

    /// Jain's index over the throughput of the worker (non-background) threads.
    fn fairness_workers(&self) -> Option<crate::stats::Fairness> {
        let xs: Vec<f64> = self
            .threads
            .iter()
            .filter(|t| !t.daemon)
            .map(Self::worker_rate)
            .collect();
        (xs.len() > 1).then(|| crate::stats::jain(&xs)).flatten()
    }

    /// Jain's index over the summed worker throughput of each memcg that has workers.
    fn fairness_memcgs(&self, scn: &Scenario) -> Option<crate::stats::Fairness> {
        let mut per: BTreeMap<&str, f64> = BTreeMap::new();
        for t in self.threads.iter().filter(|t| !t.daemon) {
            *per.entry(scn.procs[t.pid as usize].memcg.as_str())
                .or_default() += Self::worker_rate(t);
        }
        let xs: Vec<f64> = per.into_values().collect();
        (xs.len() > 1).then(|| crate::stats::jain(&xs)).flatten()
    }

    fn thread_process_dead(&self, be: &Be<'_>, pid: u32) -> bool {
        match be {
            Be::Kernel { m, .. } => !m.procs[pid as usize].alive,
            Be::Textbook { .. } => false,
        }
    }

    /// One completed operation of thread `i`, begun at `start`, ended at `t`.
    fn record_op(&mut self, i: usize, start: u64, t: u64) {
        let d = t.saturating_sub(start);
        let th = &mut self.threads[i];
        th.ops += 1;
        th.op_hist.record(d);
        let tw = th.op_window.get_or_insert((start, t));
        tw.1 = tw.1.max(t);
        self.op_hist.record(d);
        let st = &mut *self.st;
        for (v, unit) in [
            (&mut st.op_pow2_s, 1_000_000_000),
            (&mut st.op_pow2_us, 1_000),
        ] {
            let b = pow2_index(d, unit);
            if v.len() <= b {
                v.resize(b + 1, 0);
            }
            v[b] += 1;
        }
        let w = self.op_window.get_or_insert((start, t));
        w.1 = w.1.max(t);
    }

    /// Thread `i` is done at `t`; returns true (a finished thread, as the step functions do).
    fn finish_thread(&mut self, i: usize, t: u64) -> bool {
        let th = &mut self.threads[i];
        th.done = true;
        th.finish = t;
        true
    }

    /// `do_exit` of the thread's process from `t`: its mappings go (exit_mmap, the exiting
    /// task's kernel time); returns when it is done.
    fn exit_process(&mut self, be: &mut Be<'_>, i: usize, t: u64) -> u64 {
        let ctx = self.ctx_for(i, t);
        let Be::Kernel { m, pol } = be else {
            return t;
        };
        if !m.procs[ctx.pid as usize].alive {
            return t;
        }
        m.ctx = ctx;
        let end = m.exit_mmap(&mut **pol, ctx.pid, t);
        m.spend_sys(end - t);
        self.step_times.add(&m.ctx.times);
        end
    }

    /// Requests (operations between OpBegin and OpEnd) of the run, if there were any.
    fn requests(&self, scn: &Scenario) -> Option<RequestStats> {
        let total: u64 = self.threads.iter().map(|t| t.ops).sum();
        let (first, last) = self.op_window?;
        let window_ns = last.saturating_sub(first);
        let timed: Vec<&Thread> = self.threads.iter().filter(|t| t.ops > 0).collect();
        // A thread's request rate over its own window (first OpBegin to last OpEnd); for a
        // time-based run, where every window is the run, this orders threads as their totals.
        let rate = |t: &Thread| {
            t.op_window
                .map_or(0.0, |(a, b)| per_second(t.ops, b.saturating_sub(a)))
        };
        let per_worker: Vec<f64> = timed.iter().map(|t| rate(t)).collect();
        let mut per_memcg: BTreeMap<&str, f64> = BTreeMap::new();
        for t in &timed {
            *per_memcg
                .entry(scn.procs[t.pid as usize].memcg.as_str())
                .or_default() += rate(t);
        }
        let per_memcg: Vec<f64> = per_memcg.into_values().collect();
        Some(RequestStats {
            total,
            window_ns,
            per_sec: per_second(total, window_ns),
            workers_per_sec: per_worker.iter().sum(),
            latency: self.op_hist.summary(),
            buckets_s: self.op_pow2_s.clone(),
            buckets_us: self.op_pow2_us.clone(),
            fairness_workers: (per_worker.len() > 1)
                .then(|| crate::stats::jain(&per_worker))
                .flatten(),
            fairness_memcgs: (per_memcg.len() > 1)
                .then(|| crate::stats::jain(&per_memcg))
                .flatten(),
        })
    }

    fn record_access(&mut self, i: usize, hit: bool, major: bool, elapsed: u64) {
        let th = &mut self.threads[i];
        th.accesses += 1;
        th.misses += !hit as u64;
        th.major += major as u64;
        th.hist.record(elapsed);
        self.hist.record(elapsed);
        let b = pow2_us_index(elapsed);
        if self.pow2_us.len() <= b {
            self.pow2_us.resize(b + 1, 0);
        }
        self.pow2_us[b] += 1;
        self.done_accesses += 1;
    }

    fn ctx_for(&self, i: usize, t: u64) -> Ctx {
        Ctx {
            now: t,
            cpu: self.threads[i].cpu,
            pid: self.threads[i].pid,
            ..Ctx::default()
        }
    }

    /// Runs (or resumes) an access of thread `i` at `t` and queues the thread's next step;
    /// returns true if the thread was killed.
    fn run_access(&mut self, be: &mut Be<'_>, i: usize, t: u64, a: Access) -> bool {
        let end = self.access(be, i, t, a);
        let Access { page, via, .. } = a;
        self.psi_take_marks(be, i);
        if !self.access_ages.is_empty() {
            self.note_access(be, i, page, via, t);
        }
        match end {
            AccessEnd::Done { hit, major, at } => {
                self.threads[i].yielded_access = None;
                let elapsed = at - self.threads[i].access_start;
                self.record_access(i, hit, major, elapsed);
                self.push_thread(i, at.max(t + 1));
                false
            }
            AccessEnd::Yielded { at } => {
                self.preemptions += self.threads[i].throttle_sleep.is_none() as u64;
                self.threads[i].yielded_access = Some(a);
                self.push_thread(i, at.max(t + 1));
                false
            }
            AccessEnd::Killed => {
                let th = &mut self.threads[i];
                th.yielded_access = None;
                th.resume = None;
                th.killed = true;
                self.finish_thread(i, t)
            }
        }
    }

    /// Thread `i`'s `reclaim_throttle` sleep ends at `end`: its time asleep is throttling.
    fn end_throttle_sleep(
        &mut self,
        m: Option<&mut Machine>,
        i: usize,
        sleep: &crate::machine::vmscan::ThrottleSleep,
        end: u64,
    ) {
        self.threads[i].times.throttled_ns += end - sleep.start;
        if let Some(m) = m {
            m.end_throttle_sleep(sleep, end);
        }
    }

    /// `wake_up(&pgdat->reclaim_wait[reason])`: the tasks asleep on a queue that was woken
    /// (`Node::throttle_wake`) run again at the wake, or at their own sleep's start if the
    /// waker's clock was behind it; their deadline events go.
    #[inline(always)]
    fn wake_throttle_sleepers(&mut self, be: &mut Be<'_>) {
        if let Be::Kernel { m, .. } = be {
            if std::mem::take(&mut m.throttle_wake_pending) {
                self.wake_woken_queues(m);
            }
        }
    }

    /// The sleepers of every queue woken since the last call.
    fn wake_woken_queues(&mut self, m: &mut Machine) {
        for node in 0..m.nodes.len() {
            for q in 0..crate::consts::NR_VMSCAN_THROTTLE {
                let Some(wake) = m.nodes[node].throttle_wake[q].take() else {
                    continue;
                };
                for i in 0..self.threads.len() {
                    let Some(sleep) = self.threads[i].throttle_sleep else {
                        continue;
                    };
                    let end = wake.max(sleep.start);
                    if sleep.node as usize != node
                        || sleep.reason.index() != q
                        || end >= sleep.deadline
                    {
                        continue;
                    }
                    let removed = self.queue.remove(sleep.deadline, Ev::Thread(i as u32));
                    debug_assert!(removed, "a sleeping thread's event is at its deadline");
                    self.threads[i].throttle_sleep = None;
                    self.end_throttle_sleep(Some(&mut *m), i, &sleep, end);
                    self.push_thread(i, end);
                }
            }
        }
    }

    /// A thread's event at `t`: it runs a step (or waits for a CPU); a thread that finished
    /// leaves its barriers and, if a worker, the run's count of live threads.
    fn thread_event(&mut self, be: &mut Be<'_>, i: usize, t: u64) {
        if let Some(sleep) = self.threads[i].throttle_sleep.take() {
            let m = match be {
                Be::Kernel { m, .. } => Some(&mut **m),
                Be::Textbook { .. } => None,
            };
            self.end_throttle_sleep(m, i, &sleep, t);
        }
        if self.thread_ready(be, i, t) {
            self.depart_barriers(i, t);
            if !self.threads[i].daemon {
                self.live -= 1;
            }
        }
    }

    /// The thread's next action (the one read ahead first).
    fn next_action(&mut self, i: usize) -> Option<Action> {
        let th = &mut self.threads[i];
        th.peeked.take().or_else(|| th.src.next_action())
    }

    /// May thread `i`'s next step run while another task is suspended in reclaim with a batch
    /// isolated? Not an exit, munmap or memcg write (they free or reclaim what the suspended
    /// task may hold), nor an access that reached the OOM killer.
    fn may_run_nested(&mut self, i: usize) -> bool {
        let th = &mut self.threads[i];
        if th.yielded_access.is_some() {
            return !th.oom_deferred;
        }
        if th.peeked.is_none() {
            th.peeked = th.src.next_action();
        }
        th.peeked.as_ref().is_none_or(runs_nested)
    }

    /// Runs `f` (a task's access, a kernel thread's work) with this engine lent to the machine
    /// (`machine::Nest`) when other tasks may run meanwhile: it swaps places with an empty
    /// engine for the duration.
    fn lent<R>(&mut self, m: &mut Machine, f: impl FnOnce(&mut Machine) -> R) -> R {
        if !self.nest_enabled || self.depth >= MAX_NEST_DEPTH {
            return f(m);
        }
        let mut placeholder = self.st.spare.take().unwrap_or_default();
        let deeper = placeholder.spare.take();
        let mut st = std::mem::replace(&mut self.st, placeholder);
        st.spare = deeper;
        m.nest = Some(st);
        let out = f(m);
        let st = m
            .nest
            .take()
            .expect("the lent engine is back")
            .into_any()
            .downcast::<State>()
            .expect("the lent engine is an engine's state");
        let mut placeholder = std::mem::replace(&mut self.st, st);
        placeholder.spare = self.st.spare.take();
        self.st.spare = Some(placeholder);
        out
    }

    /// One access (or its resumption after a yield); `req`: `Action::Access::req`.
    fn access(&mut self, be: &mut Be<'_>, i: usize, t: u64, a: Access) -> AccessEnd {
        let Access { page, op, via, req } = a;
        let mut ctx = self.ctx_for(i, t);
        ctx.may_yield = true;
        ctx.yield_at = self.next_event_time().min(self.nest_until);
        ctx.nested = self.depth > 0;
        let resume = self.threads[i].resume.take();
        ctx.resumed = resume.is_some();
        match be {
            Be::Kernel { m, pol } => {
                m.ctx = ctx;
                m.resume = resume.map(|r| *r).unwrap_or_default();
                let pol = &mut **pol;
                let out = self.lent(m, |m| m.access_request(pol, ctx.pid, page, op, via, req));
                self.step_times.add(&m.ctx.times);
                let at = m.now();
                self.threads[i].oom_deferred = m.ctx.yielded && m.ctx.oom_deferred;
                if m.ctx.yielded {
                    self.threads[i].resume = Some(Box::new(std::mem::take(&mut m.resume)));
                    let sleep = m.ctx.throttle_sleep.take();
                    self.threads[i].throttle_sleep = sleep;
                    return AccessEnd::Yielded {
                        at: sleep.map_or(at, |s| s.deadline),
                    };
                }
                m.resume = Default::default();
                match out {
                    Some(o) => AccessEnd::Done {
                        hit: o.hit,
                        major: o.major,
                        at,
                    },
                    None => AccessEnd::Killed,
                }
            }
            Be::Textbook { cache, cfg, .. } => {
                let hit = cache.access(page.key(ctx.pid), op == crate::access::Op::Write);
                let c = &cfg.cost;
                let syscall = match (page, via) {
                    (PageRef::File { .. }, Via::Fd) => c.fd_syscall_ns,
                    _ => 0,
                };
                let (sys, io) = match (hit, page) {
                    (true, _) => (syscall, 0),
                    (false, PageRef::File { .. }) => {
                        // The wait for the device is a sleep and a wake-up.
                        let io = cfg.file_device.read_latency_ns;
                        (syscall + c.major_fault_cpu_ns + c.sleep_wake_for(io), io)
                    }
                    (false, PageRef::Anon { .. }) => (c.minor_fault_ns, 0),
                };
                let times = StepTimes {
                    user_ns: c.cpu_access_ns,
                    sys_ns: sys,
                    iowait_ns: io,
                    ..StepTimes::default()
                };
                self.step_times.add(&times);
                let elapsed = times.cpu_ns() + times.off_cpu_ns();
                AccessEnd::Done {
                    hit,
                    major: !hit && matches!(page, PageRef::File { .. }),
                    at: t + elapsed,
                }
            }
        }
    }

    /// The kernel time an io_uring read adds by going through an io-wq worker
    /// (`Machine::io_uring_punt_ns`). The textbook backend has no kernel: nothing.
    fn io_uring_punt_ns(&self, be: &Be<'_>) -> u64 {
        match be {
            Be::Kernel { m, .. } => m.io_uring_punt_ns(),
            Be::Textbook { .. } => 0,
        }
    }

    /// A write to a memcg control file by thread `i`; returns the time it took.
    fn memcg_write(
        &mut self,
        be: &mut Be<'_>,
        i: usize,
        t: u64,
        memcg: u16,
        file: MemcgFile,
        value: u64,
    ) -> u64 {
        let ctx = self.ctx_for(i, t);
        let Be::Kernel { m, pol } = be else {
            return 0;
        };
        // The root has memory.reclaim but no memory.max/high/low/min (CFTYPE_NOT_ON_ROOT).
        let not_on_root = !matches!(file, MemcgFile::Reclaim { .. });
        if memcg as usize >= m.memcgs.len() || (memcg == 0 && not_on_root) {
            self.threads[i].write_errors += 1;
            return 0;
        }
        m.ctx = ctx;
        let pol = &mut **pol;
        match file {
            MemcgFile::Max => m.set_memory_max(pol, memcg, value),
            MemcgFile::High => m.set_memory_high(pol, memcg, value),
            MemcgFile::Low => m.memcgs[memcg as usize].low = value,
            MemcgFile::Min => m.memcgs[memcg as usize].min = value,
            MemcgFile::Reclaim { swappiness } => {
                if m.memory_reclaim(pol, memcg, value, swappiness).is_err() {
                    self.threads[i].write_errors += 1;
                }
            }
        }
        self.step_times.add(&m.ctx.times);
        let elapsed = m.ctx.elapsed;
        self.psi_take_marks(be, i);
        elapsed
    }

    fn munmap(&mut self, be: &mut Be<'_>, i: usize, t: u64, start: u64, len: u64) -> u64 {
        let ctx = self.ctx_for(i, t);
        match be {
            Be::Kernel { m, pol } => {
                m.ctx = ctx;
                m.munmap_anon(&mut **pol, ctx.pid, start, len);
                // zap_pte_range over the range, free_pgtables' unlink of the VMA.
                let unmap = len * m.cfg.cost.zap_pte_ns + m.cfg.cost.vma_unlink_ns;
                self.step_times.add(&m.ctx.times);
                self.step_times.sys_ns += unmap;
                let elapsed = m.ctx.elapsed + unmap;
                self.psi_take_marks(be, i);
                elapsed
            }
            Be::Textbook { cfg, .. } => {
                let unmap = len * cfg.cost.zap_pte_ns + cfg.cost.vma_unlink_ns;
                self.step_times.sys_ns += unmap;
                unmap
            }
        }
    }

    /// Takes every sample due (`due(time)`), each of the model's state as it is now.
    fn take_samples(&mut self, be: &mut Be<'_>, due: impl Fn(u64) -> bool) -> Result<(), String> {
        while let Some(at) = self.sampler.as_ref().map(|s| s.next_time()) {
            if !due(at) {
                break;
            }
            let counters = self.counters_at(be, at);
            self.sampler
                .as_mut()
                .expect("checked above")
                .record(counters)?;
        }
        Ok(())
    }

    /// Every counter of the time series at simulated time `at`, read without changing the
    /// model: /proc/vmstat, each memcg's memory.current (bytes) and memory.stat, and MGLRU's
    /// generation sizes, and PSI's stall totals (system-wide and per memcg).
    fn counters_at(&mut self, be: &mut Be<'_>, at: u64) -> crate::timeseries::Counters {
        let mut c = crate::timeseries::Counters::default();
        match be {
            Be::Kernel { m, pol } => {
                c.group(
                    "vmstat",
                    vmstat_map(m, &**pol).iter().map(|(k, &v)| (k.as_str(), v)),
                );
                for mc in memcg_results(m, &**pol) {
                    c.push(
                        format!("memcg.{}.memory.current", mc.path),
                        mc.current_pages * 4096,
                    );
                    c.group(
                        &format!("memcg.{}.memory.stat", mc.path),
                        mc.stat.iter().map(|(k, &v)| (k.as_str(), v)),
                    );
                }
                if let Some(text) = lru_gen_show_at(m, &**pol, at) {
                    c.lru_gen_sizes(&text);
                }
                // memory.pressure of every memcg (the root's is /proc/pressure/memory), read
                // from PSI's reader copy: psi_show collects and averages, which would change
                // the run's own accounting if done on it at other times than the run does.
                if let Some(psi) = self.psi.as_deref_mut() {
                    for (id, mc) in m.memcgs.iter().enumerate().filter(|(_, mc)| mc.online) {
                        let Some(p) = psi.read(id as u16, at) else {
                            break;
                        };
                        let prefix = if id == 0 {
                            "psi.memory".to_string()
                        } else {
                            format!("memcg.{}.memory.pressure", mc.path)
                        };
                        c.push(format!("{prefix}.some.total_us"), p.some.total_us);
                        c.push(format!("{prefix}.full.total_us"), p.full.total_us);
                    }
                }
            }
            Be::Textbook { cache, .. } => {
                let s = cache.stats();
                c.push("vmstat.evictions", s.evictions);
                c.push("vmstat.dirty_evictions", s.dirty_evictions);
            }
        }
        c
    }

    /// Takes every lru_gen sample due (`due(time)`): the lru_gen file as it shows at the
    /// sample's time (`lru_gen_seq_show` reads the clock for the generations' ages), read
    /// without changing the model, with the machine's context put back as it was.
    fn take_lru_gen_samples(
        &mut self,
        be: &mut Be<'_>,
        due: impl Fn(u64) -> bool,
    ) -> Result<(), String> {
        while let Some((at, every)) = self.sample_every {
            if !due(at) {
                break;
            }
            if let Be::Kernel { m, pol } = be {
                if let Some(s) = lru_gen_show_at(m, &**pol, at) {
                    self.lru_gen_samples.push((at, s));
                }
            }
            if self.lru_gen_samples.len() > MAX_LRU_GEN_SAMPLES {
                return Err(format!(
                    "--lru-gen-sample-ms: more than {MAX_LRU_GEN_SAMPLES} samples by \
                     {:.3} s of simulated time; sample less often",
                    at as f64 / 1e9
                ));
            }
            self.sample_every = Some((at + every, every));
        }
        Ok(())
    }

    /// A write to /sys/kernel/debug/lru_gen by the proactive-reclaim schedule.
    fn run_lru_gen_cmd(&mut self, be: &mut Be<'_>, i: usize, t: u64) {
        let cmd = self.schedule[i].1.clone();
        let result: Result<u64, String> = match be {
            Be::Kernel { m, pol } => {
                m.ctx = Ctx {
                    now: t,
                    pid: u32::MAX,
                    ..Ctx::default()
                };
                let before: Vec<u64> = m.memcgs.iter().map(|c| c.local_pages).collect();
                let r = pol.lru_gen_write(m, &cmd);
                let freed = before
                    .iter()
                    .zip(&m.memcgs)
                    .map(|(b, c)| b.saturating_sub(c.local_pages))
                    .sum();
                match r {
                    None => Err("ENOENT (not MGLRU)".to_string()),
                    Some(Ok(())) => Ok(freed),
                    Some(Err(e)) => Err(e.to_string()),
                }
            }
            Be::Textbook { .. } => Err("ENOENT (not MGLRU)".to_string()),
        };
        self.lru_gen_results.push(LruGenCommandResult {
            time_ns: t,
            command: cmd,
            ok: result.is_ok(),
            error: result.as_ref().err().cloned(),
            pages_freed: *result.as_ref().unwrap_or(&0),
        });
    }

    /// The run's CPU time: the threads' summed, the kernel threads', the scheduler's counts.
    fn cpu_result(&self, be: &Be<'_>) -> CpuResult {
        let mut c = CpuResult {
            cpus: self.sched.nr_cpus(),
            context_switches: self.sched.stats.context_switches,
            nested_steps: self.nested_steps,
            migrations: self.sched.stats.migrations,
            sched_preemptions: self.sched.stats.preemptions,
            ..CpuResult::default()
        };
        for t in &self.threads {
            c.user_ns += t.times.user_ns;
            c.sys_ns += t.times.sys_ns;
            c.runqueue_wait_ns += t.runqueue_wait_ns;
            c.iowait_ns += t.times.iowait_ns;
            c.throttled_ns += t.times.throttled_ns;
            c.sleep_ns += t.times.sleep_ns;
        }
        if let Be::Kernel { m, .. } = be {
            c.kswapd_ns = m.kthreads.cpu.kswapd_ns;
            c.flusher_ns = m.kthreads.cpu.flusher_ns;
            c.lru_lock_wait_ns = m.lru_lock_wait_ns;
            c.lru_lock_handoffs = m.lru_lock_handoffs;
            c.lru_lock_wait_by_site = m.lru_lock_sites.wait;
            c.lru_lock_hold_by_site = m.lru_lock_sites.hold;
            c.rmap_lock_wait_ns = m.rmap_lock_wait_ns;
            c.rmap_trylock_failed = m.rmap_trylock_failed;
            c.folio_trylock_failed = m.folio_trylock_failed;
        }
        c
    }

    fn result(&self, be: &Be<'_>, scn: &Scenario, spec: PolicySpec, seed: u64) -> RunResult {
        let sim_time_ns = self
            .threads
            .iter()
            .filter(|t| !t.daemon)
            .map(|t| t.finish)
            .max()
            .unwrap_or(0);
        let accesses: u64 = self.threads.iter().map(|t| t.accesses).sum();
        let misses: u64 = self.threads.iter().map(|t| t.misses).sum();
        let major: u64 = self.threads.iter().map(|t| t.major).sum();
        let ratio = |a: u64| {
            if accesses == 0 {
                0.0
            } else {
                a as f64 / accesses as f64
            }
        };
        let threads = self
            .threads
            .iter()
            .map(|t| ThreadResult {
                pid: t.pid,
                process: scn.procs[t.pid as usize].name.clone(),
                accesses: t.accesses,
                misses: t.misses,
                major: t.major,
                marks: t.marks,
                killed: t.killed,
                write_errors: t.write_errors,
                finish_ns: t.finish,
                mean_latency_ns: t.hist.mean_ns(),
                requests: t.ops,
                request_mean_ns: t.op_hist.mean_ns(),
                request_max_ns: t.op_hist.max_ns,
                cpu: ThreadCpu {
                    user_ns: t.times.user_ns,
                    sys_ns: t.times.sys_ns,
                    runqueue_wait_ns: t.runqueue_wait_ns,
                    iowait_ns: t.times.iowait_ns,
                    throttled_ns: t.times.throttled_ns,
                    sleep_ns: t.times.sleep_ns,
                },
            })
            .collect();
        let cpu = self.cpu_result(be);
        let (vmstat, meminfo, mut memcgs, oom_kills, lru_gen) = match be {
            Be::Kernel { m, pol } => (
                vmstat_map(m, &**pol),
                meminfo_map(m, &**pol),
                memcg_results(m, &**pol),
                m.vm.get(Vm::OomKill),
                pol.lru_gen_show(m, false).zip(pol.lru_gen_show(m, true)),
            ),
            Be::Textbook { cache, .. } => {
                let s = cache.stats();
                let mut v = BTreeMap::new();
                v.insert("evictions".to_string(), s.evictions);
                v.insert("dirty_evictions".to_string(), s.dirty_evictions);
                (v, BTreeMap::new(), Vec::new(), 0, None)
            }
        };
        if let Be::Kernel { m, .. } = be {
            for r in memcgs.iter_mut() {
                let Some(id) = m.memcg_by_path(&r.path) else {
                    continue;
                };
                r.current_mean_pages = self.current_mean_pages(id as usize);
                if let Some(p) = self.psi_final.get(id as usize) {
                    r.psi.memory = *p;
                }
            }
        }
        let policy = spec.to_string();
        let capacity_pages = match be {
            Be::Kernel { m, .. } => kernel_capacity(scn, m),
            Be::Textbook { cache, .. } => cache.capacity() as u64,
        };
        RunResult {
            scenario: scn.name.clone(),
            policy,
            seed,
            capacity_pages,
            sim_time_ns,
            accesses,
            hits: accesses - misses,
            misses,
            major,
            hit_ratio: 1.0 - ratio(misses),
            miss_ratio: ratio(misses),
            ops_per_sec: per_second(accesses, sim_time_ns),
            latency: self.hist.summary(),
            latency_buckets_us: self.pow2_us.clone(),
            oom_kills,
            marks: self.threads.iter().map(|t| t.marks).sum(),
            vmstat,
            meminfo,
            memcgs,
            threads,
            lru_gen: lru_gen.as_ref().map(|(s, _)| s.clone()),
            lru_gen_full: lru_gen.map(|(_, f)| f),
            lru_gen_samples: self.lru_gen_samples.clone(),
            lru_gen_commands: self.lru_gen_results.clone(),
            fairness_workers: self.fairness_workers(),
            fairness_memcgs: self.fairness_memcgs(scn),
            requests: self.requests(scn),
            preemptions: self.preemptions,
            cpu,
            psi: self
                .psi_final
                .first()
                .map(|&memory| crate::machine::psi::PsiResult { memory }),
            agents: self.agent_logs.clone(),
            vs_no_agents: None,
            timeseries: None,
        }
    }
}

/// /proc/vmstat: event counters plus the nr_* gauges.
/// The lru_gen file as it shows at simulated time `at` (`lru_gen_seq_show` reads the clock for
/// the generations' ages), read without changing the model: the machine's context is put back
/// as it was.
fn lru_gen_show_at(m: &mut Machine, pol: &dyn Policy, at: u64) -> Option<String> {
    let saved = m.ctx;
    m.ctx = Ctx {
        now: at,
        ..Ctx::default()
    };
    let shown = pol.lru_gen_show(m, false);
    m.ctx = saved;
    shown
}

fn vmstat_map(m: &Machine, pol: &dyn Policy) -> BTreeMap<String, u64> {
    let mut v: BTreeMap<String, u64> =
        m.vm.to_map()
            .into_iter()
            .filter(|(k, _)| !matches!(*k, "low" | "high" | "max" | "oom" | "oom_kill_memcg"))
            .map(|(k, x)| (k.to_string(), x))
            .collect();
    let mut lru = [0u64; 5];
    for mc in 0..m.memcgs.len() as u16 {
        for n in 0..m.nr_nodes() as u8 {
            for (a, b) in lru.iter_mut().zip(pol.lru_pages(mc, n)) {
                *a += b;
            }
        }
    }
    for (name, val) in [
        ("nr_free_pages", m.nr_free()),
        ("nr_inactive_anon", lru[0]),
        ("nr_active_anon", lru[1]),
        ("nr_inactive_file", lru[2]),
        ("nr_active_file", lru[3]),
        ("nr_unevictable", lru[4]),
        ("nr_file_pages", m.wb.nr_file_pages),
        ("nr_dirty", m.wb.nr_dirty),
        ("nr_writeback", m.wb.nr_writeback),
        ("nr_swap_free", m.swap.nr_free()),
        ("nr_zram_pool_pages", m.swap.zram_frames.len() as u64),
    ] {
        v.insert(name.to_string(), val);
    }
    // NR_SHMEM, shown only for machines with tmpfs files (other outputs stay as they were).
    if m.has_shmem() {
        v.insert("nr_shmem".to_string(), m.wb.nr_shmem);
    }
    v
}

/// A few /proc/meminfo-like gauges, in KiB.
fn meminfo_map(m: &Machine, pol: &dyn Policy) -> BTreeMap<String, u64> {
    let _ = pol;
    let mut v = BTreeMap::new();
    v.insert("MemTotal".into(), m.cfg.total_pages() * 4);
    v.insert("MemFree".into(), m.nr_free() * 4);
    v.insert("Cached".into(), m.wb.nr_file_pages * 4);
    if m.has_shmem() {
        v.insert("Shmem".into(), m.wb.nr_shmem * 4);
    }
    v.insert("SwapTotal".into(), m.swap.total() * 4);
    v.insert("SwapFree".into(), m.swap.nr_free() * 4);
    v.insert("Dirty".into(), m.wb.nr_dirty * 4);
    v.insert("Writeback".into(), m.wb.nr_writeback * 4);
    v
}

/// memory.current / memory.stat / memory.events of every memcg, hierarchical, kernel units
/// (memory.stat sizes in bytes, events in counts).
pub fn memcg_results(m: &Machine, pol: &dyn Policy) -> Vec<MemcgResult> {
    let n = m.memcgs.len();
    let mut local = vec![[0u64; 6]; n];
    for f in &m.folios {
        let slot = match f.owner() {
            Owner::Anon { .. } => 0,
            Owner::File { .. } => 1,
            _ => continue,
        };
        let l = &mut local[f.memcg as usize];
        l[slot] += 1;
        // NR_FILE_DIRTY: tmpfs folios are dirtied without accounting (noop_dirty_folio).
        if slot == 1 && f.test(pg::DIRTY) && !f.is_shmem() {
            l[2] += 1;
        }
        if f.test(pg::WRITEBACK) {
            l[3] += 1;
        }
        if slot == 1 && f.mapcount > 0 {
            l[4] += 1;
        }
        if f.test(pg::SWAPCACHE) {
            l[5] += 1;
        }
    }
    (0..n as u16)
        .filter(|&mc| m.memcgs[mc as usize].online)
        .map(|mc| {
            let mut sums = [0u64; 6];
            let mut lru = [0u64; 5];
            for c in m.memcg_subtree(mc) {
                for k in 0..6 {
                    sums[k] += local[c as usize][k];
                }
                for node in 0..m.nr_nodes() as u8 {
                    for (a, b) in lru.iter_mut().zip(pol.lru_pages(c, node)) {
                        *a += b;
                    }
                }
            }
            let mut stat: BTreeMap<String, u64> = BTreeMap::new();
            for (name, pages) in [
                ("anon", sums[0]),
                ("file", sums[1]),
                ("file_dirty", sums[2]),
                ("file_writeback", sums[3]),
                ("file_mapped", sums[4]),
                ("swapcached", sums[5]),
                ("inactive_anon", lru[0]),
                ("active_anon", lru[1]),
                ("inactive_file", lru[2]),
                ("active_file", lru[3]),
                ("unevictable", lru[4]),
            ] {
                stat.insert(name.to_string(), pages * 4096);
            }
            // memory.stat `pagetables`: the PTE tables charged (`pte_alloc`).
            let pgtables: u64 = m
                .memcg_subtree(mc)
                .iter()
                .map(|&c| m.memcgs[c as usize].pgtable_pages)
                .sum();
            stat.insert("pagetables".into(), pgtables * 4096);
            if m.has_shmem() {
                let shmem = m.memcgs[mc as usize].wb_stat[WbStat::Shmem as usize];
                stat.insert("shmem".into(), shmem * 4096);
            }
            let ev = m.memcg_events_hier(mc);
            for v in [
                Vm::Pgfault,
                Vm::Pgmajfault,
                Vm::PgscanKswapd,
                Vm::PgscanDirect,
                Vm::PgstealKswapd,
                Vm::PgstealDirect,
                Vm::Pgrefill,
                Vm::Pgactivate,
                Vm::Pgdeactivate,
                Vm::Pglazyfree,
                Vm::Pglazyfreed,
                Vm::WorkingsetRefaultAnon,
                Vm::WorkingsetRefaultFile,
                Vm::WorkingsetActivateAnon,
                Vm::WorkingsetActivateFile,
                Vm::WorkingsetRestoreAnon,
                Vm::WorkingsetRestoreFile,
                Vm::WorkingsetNodereclaim,
            ] {
                stat.insert(v.name().to_string(), ev.get(v));
            }
            stat.insert(
                "pgscan".into(),
                ev.get(Vm::PgscanKswapd) + ev.get(Vm::PgscanDirect),
            );
            stat.insert(
                "pgsteal".into(),
                ev.get(Vm::PgstealKswapd) + ev.get(Vm::PgstealDirect),
            );
            let mut events = BTreeMap::new();
            for (name, v) in [
                ("low", Vm::MemcgLow),
                ("high", Vm::MemcgHigh),
                ("max", Vm::MemcgMax),
                ("oom", Vm::MemcgOom),
                ("oom_kill", Vm::MemcgOomKill),
            ] {
                events.insert(name.to_string(), ev.get(v));
            }
            let mcg = &m.memcgs[mc as usize];
            MemcgResult {
                path: mcg.path.clone(),
                current_pages: mcg.usage,
                max_pages: (mcg.max != u64::MAX).then_some(mcg.max),
                swap_pages: mcg.swap_usage,
                stat,
                events,
                peak_pages: mcg.peak,
                ..Default::default()
            }
        })
        .collect()
}

/// Runs every policy × seed of a scenario, spread over `threads` OS threads (0 = all cores).
/// Each run is independent and deterministic, and results come back in (policy, seed) order,
/// so the output is identical to a serial run.
pub fn run_matrix(
    scn: &Scenario,
    specs: &[PolicySpec],
    seeds: &[u64],
    threads: usize,
) -> Result<Vec<Vec<RunResult>>, String> {
    run_matrix_with(
        scn,
        specs,
        seeds,
        threads,
        &MatrixOptions::default(),
        Vec::new(),
        &MatrixHooks::default(),
    )
}

/// The options every run of a matrix shares (each run has its own seed).
#[derive(Clone, Debug, Default)]
pub struct MatrixOptions {
    /// As [`RunOptions::check_invariants`].
    pub check_invariants: bool,
    /// As [`RunOptions::max_sim_ns`].
    pub max_sim_ns: Option<u64>,
    /// As [`RunOptions::lru_gen_sample_ns`].
    pub lru_gen_sample_ns: Option<u64>,
    /// As [`RunOptions::lru_gen_schedule`].
    pub lru_gen_schedule: Vec<(u64, String)>,
    /// As [`RunOptions::sample_ns`].
    pub sample_ns: Option<u64>,
    /// As [`RunOptions::agents`].
    pub agents: Vec<crate::agents::AgentSpec>,
}

/// (policy index, seed index, accesses done, accesses expected) as a run goes.
pub type MatrixProgress<'a> = dyn Fn(usize, usize, u64, u64) + Sync + 'a;

/// (policy index, seed index, outcome) once a run has finished.
pub type MatrixFinished<'a> = dyn Fn(usize, usize, &Result<RunResult, String>) + Sync + 'a;

/// Callbacks of [`run_matrix_with`], called from the threads that do the runs (hence `Sync`).
#[derive(Default, Clone, Copy)]
pub struct MatrixHooks<'a> {
    /// As [`RunOptions::progress`], for each run.
    pub progress: Option<&'a MatrixProgress<'a>>,
    /// Once per run, as soon as it finishes: in completion order, which varies; the returned
    /// matrix does not.
    pub finished: Option<&'a MatrixFinished<'a>>,
}

/// [`run_matrix`] with shared run options, callbacks, and results already known: `known` is
/// empty or `[policy][seed]` of `Option<RunResult>`, and a known run is not run again (nor
/// reported to the hooks) but placed at its index as it is. The result is the same matrix
/// whichever runs were known, provided each known run is the one its (policy, seed, options)
/// would produce; the first failed run (in (policy, seed) order) is the error.
pub fn run_matrix_with(
    scn: &Scenario,
    specs: &[PolicySpec],
    seeds: &[u64],
    threads: usize,
    opts: &MatrixOptions,
    known: Vec<Vec<Option<RunResult>>>,
    hooks: &MatrixHooks,
) -> Result<Vec<Vec<RunResult>>, String> {
    if !known.is_empty()
        && (known.len() != specs.len() || known.iter().any(|k| k.len() != seeds.len()))
    {
        return Err("run_matrix_with: `known` is not a policy x seed matrix".into());
    }
    let slots: Vec<std::sync::Mutex<Option<Result<RunResult, String>>>> = if known.is_empty() {
        (0..specs.len() * seeds.len())
            .map(|_| std::sync::Mutex::new(None))
            .collect()
    } else {
        known
            .into_iter()
            .flatten()
            .map(|k| std::sync::Mutex::new(k.map(Ok)))
            .collect()
    };
    // The runs still to do, in (policy, seed) order.
    let jobs: Vec<(usize, usize)> = (0..specs.len())
        .flat_map(|p| (0..seeds.len()).map(move |s| (p, s)))
        .filter(|&(p, s)| {
            slots[p * seeds.len() + s]
                .lock()
                .expect("result slot")
                .is_none()
        })
        .collect();
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
    .clamp(1, jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(p, s)) = jobs.get(i) else {
                    break;
                };
                let progress = |done: u64, total: u64| {
                    if let Some(f) = hooks.progress {
                        f(p, s, done, total);
                    }
                };
                let run_opts = RunOptions {
                    seed: seeds[s],
                    check_invariants: opts.check_invariants,
                    max_sim_ns: opts.max_sim_ns,
                    progress: hooks
                        .progress
                        .is_some()
                        .then_some(&progress as &dyn Fn(u64, u64)),
                    lru_gen_sample_ns: opts.lru_gen_sample_ns,
                    lru_gen_schedule: opts.lru_gen_schedule.clone(),
                    sample_ns: opts.sample_ns,
                    agents: opts.agents.clone(),
                };
                let r = run(scn, specs[p], &run_opts);
                if let Some(f) = hooks.finished {
                    f(p, s, &r);
                }
                *slots[p * seeds.len() + s].lock().expect("result slot") = Some(r);
            });
        }
    });
    let mut flat = slots
        .into_iter()
        .map(|m| m.into_inner().expect("result slot").expect("every job ran"));
    let mut out = Vec::with_capacity(specs.len());
    for _ in specs {
        let mut per_seed = Vec::with_capacity(seeds.len());
        for _ in seeds {
            per_seed.push(flat.next().expect("job")?);
        }
        out.push(per_seed);
    }
    Ok(out)
}
