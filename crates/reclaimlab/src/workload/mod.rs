//! Workloads: a Rust API to describe a machine, its memcgs, processes, files and the access
//! streams of their threads, plus the built-in scenarios.

pub mod appcache;
pub mod fio_hash;
pub mod micro;
pub mod pattern;
pub mod replay;
pub mod seeds;

use crate::access::{Op, PageRef, TraceRecord, Via};
use crate::consts::MAX_CPUS;
use crate::machine::MachineConfig;
use pattern::{Pattern, PatternIter};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One step of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Access one page. `req`: for a read through a file descriptor, the pages of its `read()`
    /// request from this page on, this one included (`TraceRecord::req`); 1 otherwise.
    Access {
        page: PageRef,
        op: Op,
        via: Via,
        req: u32,
    },
    /// Spend CPU time in user mode without touching memory (the application's own work).
    Think(u64),
    /// Spend CPU time in the kernel outside the work the model does itself: an I/O engine's
    /// own submission and completion (io_uring's `io_submit_sqes` and `io_cqring_wait`).
    Syscall(u64),
    /// io_uring issues the next read (`io_read`): inline, or, where the kernel cannot issue it
    /// without blocking (6.1 and a file on a device without QUEUE_FLAG_NOWAIT), through an
    /// io-wq worker, which costs `io_wq_punt_ns` of kernel time.
    IoUringIssue,
    /// Sleep: off the CPU for this long (a delay, a pause between rounds).
    Sleep(u64),
    /// The thread's stream ends this long from now, at its first action boundary from then
    /// on (a time-based run's `runtime`, counted from when the thread gets here).
    RunFor(u64),
    /// The timed operations that begin within this long from now are a warm-up's: they run
    /// but are not counted (fio's `--ramp_time`).
    Ramp(u64),
    /// Wait until an absolute simulated time (trace replay).
    WaitUntil(u64),
    /// munmap part of the process's anonymous area.
    MunmapAnon { start: u64, len: u64 },
    /// A marker the scenario counts (e.g. a round completed).
    Mark,
    /// Write a memcg control file. `memcg` is the machine's memcg id: 0 is the root, then the
    /// memcgs of `MachineConfig::memcgs` in order (the root entry "/" excluded).
    MemcgWrite {
        memcg: u16,
        file: MemcgFile,
        value: u64,
    },
    /// Wait until `parties` threads of barrier `group` have arrived (pthread_join-like).
    Barrier { group: u16, parties: u16 },
    /// A timed operation (a request, a transaction, an app launch) starts now.
    OpBegin,
    /// The operation started by the last `OpBegin` is complete: it counts as one request and
    /// its duration goes into the run's request latencies (`RunResult::requests`).
    OpEnd,
    /// The thread's process exits (`exit_mmap`: every page it maps is unmapped and its
    /// private memory freed); the thread ends.
    Exit,
}

/// A memcg control file that a workload can write (cgroup v2 semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgFile {
    /// memory.max in pages: reclaim down to it, then OOM-kill (`memory_max_write`).
    Max,
    /// memory.high in pages: reclaim down to it, never OOM (`memory_high_write`).
    High,
    /// memory.low / memory.min in pages.
    Low,
    Min,
    /// memory.reclaim of `value` pages, with an optional `swappiness=` (v6.12).
    Reclaim {
        swappiness: Option<u32>,
    },
}

/// A source of actions for one thread.
pub trait ActionSource: Send {
    fn next_action(&mut self) -> Option<Action>;
}

/// Which pages a pattern addresses and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Anon,
    File { file: usize, via: Via },
}

impl Target {
    /// The file `file` read and written through `read`/`write`.
    pub fn fd(file: usize) -> Target {
        Target::File { file, via: Via::Fd }
    }

    /// The file `file` accessed through a mapping.
    pub fn mmap(file: usize) -> Target {
        Target::File {
            file,
            via: Via::Mmap,
        }
    }
}

/// One phase of a thread's stream: `ops` accesses drawn from a pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub pattern: Pattern,
    pub target: Target,
    /// Percentage of accesses that are writes.
    pub write_pct: u32,
    pub ops: u64,
    /// CPU time between accesses, on top of the cost profile's per-access cost.
    pub think_ns: u64,
    /// Page offset added to every generated index.
    pub offset: u64,
    /// Pages per `read()` request of an fd target: the phase's accesses are taken in groups of
    /// this many (the last group of the phase may be shorter), each group one request, so
    /// the pattern must yield consecutive pages within a group (`Pattern::Blocks` of a
    /// multiple of it, or a sequential pattern). 1 (the default): each read is one page.
    /// Writes and mapped or anonymous accesses ignore it.
    pub req_pages: u64,
}

impl Phase {
    /// `ops` accesses from `pattern` on `target`, `write_pct` % of them writes, no think time,
    /// no offset.
    pub fn new(pattern: Pattern, target: Target, write_pct: u32, ops: u64) -> Phase {
        Phase {
            pattern,
            target,
            write_pct,
            ops,
            think_ns: 0,
            offset: 0,
            req_pages: 1,
        }
    }

    /// The same phase with its fd reads grouped into `read()` requests of `pages` pages.
    pub fn requests(self, pages: u64) -> Phase {
        Phase {
            req_pages: pages,
            ..self
        }
    }
}

/// A thread's whole stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Stream {
    Phases(Vec<Phase>),
    /// Repeat the phases `rounds` times, emitting a Mark after each round and unmapping the
    /// anon range `unmap` (start, len) at the end of each round if given, then sleeping.
    Rounds {
        phases: Vec<Phase>,
        rounds: u64,
        unmap: Option<(u64, u64)>,
        sleep_ns: u64,
    },
    /// A fixed list of actions.
    Actions(Vec<Action>),
    /// One pid's records of a trace, streamed from its reader (see [`replay`]).
    Replay(replay::ReplayStream),
    /// A background thread (a daemon): repeats its phases forever, sleeping `sleep_ns` after
    /// each pass, and does not keep the run alive; the run ends when the other threads do.
    Background {
        phases: Vec<Phase>,
        sleep_ns: u64,
    },
    /// Another stream that starts after `delay_ns` (e.g. after a warm-up by other threads).
    Delayed {
        delay_ns: u64,
        stream: Box<Stream>,
    },
    /// A `Rounds` stream whose threads (`parties` of them, barrier `group`) wait for each other
    /// at the end of every round, before the munmap (the seed's join of the writer threads).
    Synced {
        group: u16,
        parties: u16,
        stream: Box<Stream>,
    },
    /// A script of steps: `setup` once, then `steps` repeated `rounds` times with a Mark after
    /// each round. Added for the seed scenarios (workload/seeds.rs): requests timed with
    /// `OpBegin`/`OpEnd`, barriers inside a round (client/server hand-offs), process exit.
    Script(Script),
    /// Another stream that stops at the absolute simulated time `end_ns` (a time-based run,
    /// as fio `--time_based` or a benchmark's fixed duration): the thread ends at the first
    /// action boundary at or after `end_ns`.
    Until {
        end_ns: u64,
        stream: Box<Stream>,
    },
    /// Another stream run as a daemon: it does not keep the run alive (a database's
    /// checkpoint or journal thread, a script repeated for ever).
    Daemon {
        stream: Box<Stream>,
    },
}

/// See [`Stream::Script`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Script {
    pub setup: Vec<Step>,
    pub steps: Vec<Step>,
    pub rounds: u64,
}

/// One step of a [`Script`].
///
/// A `Phase` step's pattern iterator is created once (per thread and step) and continues
/// across rounds: a Sequential phase of `ops < pages` resumes where the previous round
/// stopped, a `Blocks` phase of `block_pages` ops draws a new block each round. Phase steps
/// with the same pattern, target and offset share one iterator (one stream of keys, e.g. a
/// GET step and a SET step of a key-value client walking the keys in order).
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Phase(Phase),
    /// Spend CPU time in user mode.
    Think(u64),
    /// Spend CPU time in the kernel (see [`Action::Syscall`]).
    Syscall(u64),
    /// io_uring issues the next read (see [`Action::IoUringIssue`]).
    IoUringIssue,
    /// Sleep, off the CPU.
    Sleep(u64),
    /// End the thread this long from now (see [`Action::RunFor`]): threads that start
    /// together, or leave a barrier together, run for the same window, as fio's
    /// `--time_based` jobs do.
    RunFor(u64),
    /// Operations that begin within this long from now are not counted (see
    /// [`Action::Ramp`]).
    Ramp(u64),
    Barrier {
        group: u16,
        parties: u16,
    },
    MunmapAnon {
        start: u64,
        len: u64,
    },
    OpBegin,
    OpEnd,
    /// The process exits; the script ends.
    Exit,
    /// An operation, checkpoint or log commit on an application cache the process's threads
    /// share (`workload/appcache.rs`).
    AppCache(appcache::AppCacheStep),
}

impl Stream {
    /// Whether a thread with this stream is a daemon.
    pub fn is_background(&self) -> bool {
        match self {
            Stream::Background { .. } | Stream::Daemon { .. } => true,
            Stream::Delayed { stream, .. }
            | Stream::Synced { stream, .. }
            | Stream::Until { stream, .. } => stream.is_background(),
            _ => false,
        }
    }

    /// The earliest `Until` end time among the wrappers, if any.
    pub fn deadline(&self) -> Option<u64> {
        match self {
            Stream::Until { end_ns, stream } => {
                Some(stream.deadline().map_or(*end_ns, |d| d.min(*end_ns)))
            }
            Stream::Delayed { stream, .. }
            | Stream::Synced { stream, .. }
            | Stream::Daemon { stream } => stream.deadline(),
            _ => None,
        }
    }

    /// Every barrier group the thread may wait at (a `Synced` wrapper's, a script's).
    pub fn barrier_groups(&self) -> Vec<u16> {
        let (inner, _, sync) = self.unwrapped();
        let mut g: Vec<u16> = sync.map(|(g, _)| g).into_iter().collect();
        if let Stream::Script(sc) = inner {
            for st in sc.setup.iter().chain(&sc.steps) {
                if let Step::Barrier { group, .. } = st {
                    g.push(*group);
                }
            }
        }
        g.sort_unstable();
        g.dedup();
        g
    }

    /// The stream without its start delay, and the delay.
    pub fn undelayed(&self) -> (&Stream, u64) {
        let (s, d, _) = self.unwrapped();
        (s, d)
    }

    /// The stream without its wrappers: (inner, start delay, round barrier).
    pub fn unwrapped(&self) -> (&Stream, u64, Option<(u16, u16)>) {
        match self {
            Stream::Delayed { delay_ns, stream } => {
                let (s, d, b) = stream.unwrapped();
                (s, d + delay_ns, b)
            }
            Stream::Synced {
                group,
                parties,
                stream,
            } => {
                let (s, d, _) = stream.unwrapped();
                (s, d, Some((*group, *parties)))
            }
            Stream::Until { stream, .. } | Stream::Daemon { stream } => stream.unwrapped(),
            s => (s, 0, None),
        }
    }
}

/// A process of the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcSpec {
    pub name: String,
    pub memcg: String,
    pub anon_pages: u64,
    /// Files mapped (file index, vma flags such as `vm::SHARED`, `vm::SEQ_READ`).
    pub mmaps: Vec<(usize, u32)>,
    /// Files the process reads through a descriptor it advised `POSIX_FADV_RANDOM`
    /// (FMODE_RANDOM: `read()` does no readahead, `force_page_cache_ra` reads the request).
    pub fadvise_random: Vec<usize>,
}

impl ProcSpec {
    /// A process in `memcg` with `anon_pages` of anon memory and no file mapped.
    pub fn new(name: &str, memcg: &str, anon_pages: u64) -> ProcSpec {
        ProcSpec {
            name: name.into(),
            memcg: memcg.into(),
            anon_pages,
            mmaps: Vec::new(),
            fadvise_random: Vec::new(),
        }
    }
}

/// A file of the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSpec {
    pub name: String,
    pub pages: u64,
    /// On tmpfs (shmem): its pages are swap-backed and are swapped out, not written back
    /// (machine/shmem.rs). Its page cache starts empty: a read() of a page never written
    /// reads zeros (a hole) and allocates nothing.
    pub tmpfs: bool,
}

impl FileSpec {
    pub fn new(name: &str, pages: u64) -> FileSpec {
        FileSpec {
            name: name.into(),
            pages,
            tmpfs: false,
        }
    }

    /// A file of `pages` pages on tmpfs.
    pub fn tmpfs(name: &str, pages: u64) -> FileSpec {
        FileSpec {
            tmpfs: true,
            ..FileSpec::new(name, pages)
        }
    }
}

/// A thread: which process it belongs to, its CPU and its stream.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSpec {
    pub proc: usize,
    pub cpu: u32,
    pub stream: Stream,
}

/// A complete, runnable workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub machine: MachineConfig,
    pub files: Vec<FileSpec>,
    pub procs: Vec<ProcSpec>,
    pub threads: Vec<ThreadSpec>,
}

impl Scenario {
    /// Runs the scenario on `n` CPUs (`--cpus`): a thread placed on CPU `c` starts on CPU
    /// `c mod n` (the scheduler migrates it from there).
    pub fn set_cpus(&mut self, n: u32) -> Result<(), String> {
        if n == 0 || n > MAX_CPUS {
            return Err(format!("--cpus {n}: expected 1 to {MAX_CPUS} CPUs"));
        }
        self.machine.cpus = n;
        for t in &mut self.threads {
            t.cpu %= n;
        }
        Ok(())
    }

    /// Checks internal references, naming the first problem.
    pub fn validate(&self) -> Result<(), String> {
        self.machine.validate()?;
        self.validate_sizes()?;
        for p in &self.procs {
            if p.memcg != "/" && !self.machine.memcgs.iter().any(|m| m.path == p.memcg) {
                return Err(format!(
                    "process '{}': memcg '{}' not declared",
                    p.name, p.memcg
                ));
            }
            for &(f, _) in &p.mmaps {
                if f >= self.files.len() {
                    return Err(format!("process '{}' maps unknown file {f}", p.name));
                }
            }
            if let Some(f) = p.fadvise_random.iter().find(|&&f| f >= self.files.len()) {
                return Err(format!("process '{}' advises unknown file {f}", p.name));
            }
        }
        for (i, t) in self.threads.iter().enumerate() {
            if t.proc >= self.procs.len() {
                return Err(format!("thread {i}: unknown process {}", t.proc));
            }
            if t.cpu >= self.machine.cpus {
                return Err(format!(
                    "thread {i}: cpu {} >= cpus {}",
                    t.cpu, self.machine.cpus
                ));
            }
            let script_phases: Vec<Phase>;
            let phases: &[Phase] = match t.stream.undelayed().0 {
                Stream::Phases(p)
                | Stream::Rounds { phases: p, .. }
                | Stream::Background { phases: p, .. } => p,
                Stream::Script(sc) => {
                    for st in sc.setup.iter().chain(&sc.steps) {
                        if let Step::Barrier { parties: 0, .. } = st {
                            return Err(format!("thread {i}: a barrier needs parties > 0"));
                        }
                        if let Step::AppCache(step) = st {
                            self.validate_app_cache_step(i, t.proc, step)?;
                        }
                    }
                    script_phases = sc
                        .setup
                        .iter()
                        .chain(&sc.steps)
                        .filter_map(|st| match st {
                            Step::Phase(p) => Some(p.clone()),
                            _ => None,
                        })
                        .collect();
                    &script_phases
                }
                Stream::Actions(_)
                | Stream::Replay(_)
                | Stream::Delayed { .. }
                | Stream::Synced { .. }
                | Stream::Until { .. }
                | Stream::Daemon { .. } => &[],
            };
            for ph in phases {
                ph.pattern.validate()?;
                if ph.req_pages == 0 {
                    return Err(format!("thread {i}: a read request needs req_pages > 0"));
                }
                if let Target::File { file, .. } = ph.target {
                    if file >= self.files.len() {
                        return Err(format!("thread {i}: unknown file {file}"));
                    }
                }
                if ph.write_pct > 100 {
                    return Err(format!("thread {i}: write_pct {} > 100", ph.write_pct));
                }
            }
        }
        Ok(())
    }

    /// Files, anon areas, mappings and vmas within what a folio can record.
    fn validate_sizes(&self) -> Result<(), String> {
        use crate::machine::{MAX_INDEX_PAGES, MAX_MAPPINGS, MAX_VMAS};
        if let Some(f) = self.files.iter().find(|f| f.pages >= MAX_INDEX_PAGES) {
            return Err(format!(
                "file '{}' has {} pages; the model holds files below {MAX_INDEX_PAGES} pages (16 TiB)",
                f.name, f.pages
            ));
        }
        let mut mappings = vec![0u64; self.files.len()];
        for p in &self.procs {
            if p.anon_pages >= MAX_INDEX_PAGES {
                return Err(format!(
                    "process '{}' has {} anon pages; the model holds areas below {MAX_INDEX_PAGES} pages",
                    p.name, p.anon_pages
                ));
            }
            if p.mmaps.len() + 1 >= MAX_VMAS {
                return Err(format!(
                    "process '{}' maps {} files; at most {} vmas are modelled",
                    p.name,
                    p.mmaps.len(),
                    MAX_VMAS - 1
                ));
            }
            for &(f, _) in &p.mmaps {
                if let Some(n) = mappings.get_mut(f) {
                    *n += 1;
                }
            }
        }
        if let Some(f) = mappings.iter().position(|&n| n > MAX_MAPPINGS) {
            return Err(format!(
                "file '{}' is mapped {} times; a page records at most {MAX_MAPPINGS} mappings",
                self.files[f].name, mappings[f]
            ));
        }
        Ok(())
    }

    /// Host memory the model reserves for this scenario (an estimate from the configuration,
    /// made before anything is allocated): per frame the folio and the list links, per file
    /// page a page-cache slot, per mapped page a PTE, per replaying thread a read buffer.
    /// `textbook`: the capacity of a textbook cache instead of a machine.
    pub fn host_bytes(&self, textbook: Option<u64>) -> u64 {
        const FRAME_BYTES: u64 = std::mem::size_of::<crate::machine::Folio>() as u64 + 12;
        const SLOT_BYTES: u64 = 16;
        const PTE_BYTES: u64 = 8;
        let machine = match textbook {
            Some(cap) => cap.saturating_mul(crate::textbook::bytes_per_cached_page()),
            None => {
                let slots = self
                    .files
                    .iter()
                    .map(|f| f.pages)
                    .fold(0u64, u64::saturating_add);
                let mapped = self.procs.iter().fold(0u64, |sum, p| {
                    p.mmaps
                        .iter()
                        .filter_map(|&(f, _)| self.files.get(f).map(|f| f.pages))
                        .fold(sum.saturating_add(p.anon_pages), u64::saturating_add)
                });
                self.machine
                    .total_pages()
                    .saturating_mul(FRAME_BYTES)
                    .saturating_add(slots.saturating_mul(SLOT_BYTES))
                    .saturating_add(mapped.saturating_mul(PTE_BYTES))
            }
        };
        // One reader per replay (its threads share it).
        let mut replays: Vec<usize> = self
            .threads
            .iter()
            .filter_map(|t| match t.stream.undelayed().0 {
                Stream::Replay(r) => Some(r.replay_id()),
                _ => None,
            })
            .collect();
        replays.sort_unstable();
        replays.dedup();
        let readers = replays.len() as u64;
        // A reader and, for a compressed trace, its decompressor.
        machine.saturating_add(readers * 2 * crate::trace::READ_BUFFER_BYTES as u64)
    }

    /// An application cache step of thread `i` (of process `proc`): its spec fits the process
    /// and the files, every step naming its cache gives the same spec, and its keys are valid.
    fn validate_app_cache_step(
        &self,
        i: usize,
        proc: usize,
        step: &appcache::AppCacheStep,
    ) -> Result<(), String> {
        let file_pages: Vec<u64> = self.files.iter().map(|f| f.pages).collect();
        let spec = &step.spec;
        spec.validate(self.procs[proc].anon_pages, &file_pages)
            .map_err(|e| format!("thread {i}: {e}"))?;
        if let appcache::AppCacheWork::Op { keys, write_pct } = &step.work {
            keys.validate()?;
            if keys.footprint() > spec.blocks || *write_pct > 100 {
                return Err(format!(
                    "thread {i}: cache keys beyond its blocks or write_pct > 100"
                ));
            }
        }
        let other_specs = self
            .threads
            .iter()
            .flat_map(|t| match t.stream.undelayed().0 {
                Stream::Script(sc) => sc
                    .setup
                    .iter()
                    .chain(&sc.steps)
                    .filter_map(|st| match st {
                        Step::AppCache(s) if s.spec.id == spec.id => Some((t.proc, &s.spec)),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            });
        for (p, other) in other_specs {
            if p != proc || other != spec {
                return Err(format!(
                    "thread {i}: application cache {} is given another spec or process elsewhere",
                    spec.id
                ));
            }
        }
        Ok(())
    }

    /// The total pages the workload can touch (anon areas plus files).
    pub fn footprint(&self) -> u64 {
        let anon = self.procs.iter().map(|p| p.anon_pages);
        anon.chain(self.files.iter().map(|f| f.pages))
            .fold(0, u64::saturating_add)
    }
}

pub use replay::{ReplayShare, MAX_FILE_PAGES};

/// What the threads of one run share: the trace readers of its replays and its application
/// caches.
#[derive(Default)]
pub struct RunShare {
    pub replays: ReplayShare,
    pub app_caches: appcache::AppCacheShare,
}

/// Turns a thread's stream into actions, seeded per thread.
pub struct StreamIter {
    phases: Vec<Phase>,
    rounds: u64,
    unmap: Option<(u64, u64)>,
    sleep_ns: u64,
    round: u64,
    phase: usize,
    done_in_phase: u64,
    iter: Option<PatternIter>,
    rng: ChaCha8Rng,
    seed: u64,
    pending: Vec<Action>,
    actions: std::vec::IntoIter<Action>,
    think_next: bool,
    /// Emit a Mark after each round (not for background threads).
    marks: bool,
    /// The round barrier (group, parties), if the threads of a round wait for each other.
    barrier: Option<(u16, u16)>,
    /// A script stream's state.
    script: Option<ScriptIter>,
    /// A trace replay's state.
    replay: Option<replay::ReplayIter>,
}

/// One access of a phase: the page `idx` (before the phase's offset), read or write; `done`
/// accesses of the phase came before it.
fn phase_access(ph: &Phase, idx: u64, done: u64, rng: &mut ChaCha8Rng) -> Action {
    let idx = idx + ph.offset;
    let op = if ph.write_pct > 0 && rng.random_range(0..100) < ph.write_pct {
        Op::Write
    } else {
        Op::Read
    };
    let (page, via) = match ph.target {
        Target::Anon => (PageRef::Anon { page: idx }, Via::Mmap),
        Target::File { file, via } => (
            PageRef::File {
                file: file as u32,
                page: idx,
            },
            via,
        ),
    };
    let req = if op == Op::Read && via == Via::Fd && ph.req_pages > 1 {
        let left = ph.req_pages - done % ph.req_pages;
        u32::try_from(left.min(ph.ops.saturating_sub(done)).max(1)).unwrap_or(u32::MAX)
    } else {
        1
    };
    Action::Access { page, op, via, req }
}

/// The accesses of one application cache step: an operation on a block drawn from its keys
/// (`keys` keeps the thread's iterator, `rng` decides updates), a checkpoint or a log commit.
fn app_cache_actions(
    step: &appcache::AppCacheStep,
    cache: &Mutex<appcache::AppCache>,
    keys: &mut Option<PatternIter>,
    rng: &mut ChaCha8Rng,
    seed: u64,
) -> Vec<Action> {
    let mut cache = cache.lock().expect("application cache lock");
    match &step.work {
        appcache::AppCacheWork::Op {
            keys: pattern,
            write_pct,
        } => {
            let it = keys.get_or_insert_with(|| pattern.iter(seed));
            let update = *write_pct > 0 && rng.random_range(0..100) < *write_pct;
            it.next()
                .map_or_else(Vec::new, |block| cache.operate(block, update))
        }
        appcache::AppCacheWork::Checkpoint => cache.checkpoint(),
        appcache::AppCacheWork::LogCommit => cache.commit_log(),
    }
}

/// The state of a [`Script`] stream.
struct ScriptIter {
    script: Script,
    /// In the setup steps (true) or the repeated steps.
    in_setup: bool,
    round: u64,
    pos: usize,
    done_in_step: u64,
    /// One pattern iterator per step (setup steps first), created on first use.
    iters: Vec<Option<PatternIter>>,
    /// The application cache of each `Step::AppCache` (setup steps first).
    caches: Vec<Option<Arc<Mutex<appcache::AppCache>>>>,
    /// The accesses of an application cache step still to come.
    queue: VecDeque<Action>,
    /// The step whose iterator a step uses (the first with the same pattern and target).
    share: Vec<usize>,
    rng: ChaCha8Rng,
    seed: u64,
    think_next: bool,
    exited: bool,
    /// Emit a Mark after each round (not for daemons).
    marks: bool,
}

impl ScriptIter {
    fn new(script: Script, seed: u64, app_caches: &mut appcache::AppCacheShare) -> Self {
        let all: Vec<&Step> = script.setup.iter().chain(&script.steps).collect();
        let n = all.len();
        let caches = all
            .iter()
            .map(|st| match st {
                Step::AppCache(step) => Some(app_caches.cache(&step.spec)),
                _ => None,
            })
            .collect();
        let share = (0..n)
            .map(|i| match all[i] {
                Step::Phase(p) => (0..i)
                    .find(|&j| match all[j] {
                        Step::Phase(q) => {
                            q.pattern == p.pattern && q.target == p.target && q.offset == p.offset
                        }
                        _ => false,
                    })
                    .unwrap_or(i),
                _ => i,
            })
            .collect();
        ScriptIter {
            share,
            script,
            in_setup: true,
            round: 0,
            pos: 0,
            done_in_step: 0,
            iters: (0..n).map(|_| None).collect(),
            caches,
            queue: VecDeque::new(),
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5c21),
            seed,
            think_next: false,
            exited: false,
            marks: true,
        }
    }

    fn next_action(&mut self) -> Option<Action> {
        loop {
            if let Some(a) = self.queue.pop_front() {
                return Some(a);
            }
            if self.exited {
                return None;
            }
            let steps = if self.in_setup {
                &self.script.setup
            } else {
                // A daemon (no marks) with no steps would loop for ever.
                let idle_daemon = !self.marks && self.script.steps.is_empty();
                if self.round >= self.script.rounds || idle_daemon {
                    return None;
                }
                &self.script.steps
            };
            if self.pos >= steps.len() {
                self.pos = 0;
                self.done_in_step = 0;
                if self.in_setup {
                    self.in_setup = false;
                    continue;
                }
                self.round += 1;
                if !self.marks {
                    continue;
                }
                return Some(Action::Mark);
            }
            let slot = if self.in_setup {
                self.pos
            } else {
                self.script.setup.len() + self.pos
            };
            let step_index = slot;
            let slot = self.share[slot];
            let step = &steps[self.pos];
            if let Step::AppCache(step) = step {
                let cache = self.caches[step_index]
                    .as_ref()
                    .expect("a cache per cache step");
                let seed = self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (slot as u64 + 1);
                let keys = &mut self.iters[slot];
                let actions = app_cache_actions(step, cache, keys, &mut self.rng, seed);
                self.queue.extend(actions);
                self.pos += 1;
                continue;
            }
            let ph = match step {
                Step::Phase(ph) => ph,
                other => {
                    self.pos += 1;
                    return Some(match *other {
                        Step::Think(ns) => Action::Think(ns),
                        Step::Syscall(ns) => Action::Syscall(ns),
                        Step::IoUringIssue => Action::IoUringIssue,
                        Step::Sleep(ns) => Action::Sleep(ns),
                        Step::RunFor(ns) => Action::RunFor(ns),
                        Step::Ramp(ns) => Action::Ramp(ns),
                        Step::Barrier { group, parties } => Action::Barrier { group, parties },
                        Step::MunmapAnon { start, len } => Action::MunmapAnon { start, len },
                        Step::OpBegin => Action::OpBegin,
                        Step::OpEnd => Action::OpEnd,
                        Step::Exit => {
                            self.exited = true;
                            Action::Exit
                        }
                        Step::Phase(_) | Step::AppCache(_) => continue,
                    });
                }
            };
            if self.done_in_step >= ph.ops {
                self.pos += 1;
                self.done_in_step = 0;
                continue;
            }
            if self.think_next {
                self.think_next = false;
                return Some(Action::Think(ph.think_ns));
            }
            let seed = self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (slot as u64 + 1);
            let it = self.iters[slot].get_or_insert_with(|| ph.pattern.iter(seed));
            let Some(idx) = it.next() else {
                // An invalid pattern yields nothing: the step ends.
                self.done_in_step = u64::MAX;
                continue;
            };
            let a = phase_access(ph, idx, self.done_in_step, &mut self.rng);
            self.done_in_step += 1;
            self.think_next = ph.think_ns > 0;
            return Some(a);
        }
    }
}

impl StreamIter {
    /// The iterator of one thread's stream; `share` holds the readers the run's replay
    /// threads share.
    pub fn new(stream: &Stream, seed: u64, share: &mut RunShare) -> Self {
        let (inner, delay, barrier) = stream.unwrapped();
        let mut it = Self::new_undelayed(inner, seed, share);
        it.barrier = barrier;
        if let Some(sc) = it.script.as_mut() {
            sc.marks = !stream.is_background();
        }
        if delay > 0 {
            it.pending.push(Action::Sleep(delay));
        }
        it
    }

    fn new_undelayed(stream: &Stream, seed: u64, share: &mut RunShare) -> Self {
        let (phases, rounds, unmap, sleep_ns, actions) = match stream {
            Stream::Phases(p) => (p.clone(), 1, None, 0, Vec::new()),
            Stream::Rounds {
                phases,
                rounds,
                unmap,
                sleep_ns,
            } => (phases.clone(), *rounds, *unmap, *sleep_ns, Vec::new()),
            Stream::Actions(a) => (Vec::new(), 0, None, 0, a.clone()),
            Stream::Background { phases, sleep_ns } => {
                (phases.clone(), u64::MAX, None, *sleep_ns, Vec::new())
            }
            Stream::Script(sc) => {
                let mut it = Self::new_undelayed(&Stream::Actions(Vec::new()), seed, share);
                it.script = Some(ScriptIter::new(sc.clone(), seed, &mut share.app_caches));
                return it;
            }
            Stream::Replay(r) => {
                let mut it = Self::new_undelayed(&Stream::Actions(Vec::new()), seed, share);
                it.replay = Some(r.iter(&mut share.replays));
                return it;
            }
            // unwrapped() strips the wrappers: nothing to generate.
            Stream::Delayed { .. }
            | Stream::Synced { .. }
            | Stream::Until { .. }
            | Stream::Daemon { .. } => (Vec::new(), 0, None, 0, Vec::new()),
        };
        let marks = !stream.is_background();
        StreamIter {
            phases,
            rounds,
            unmap,
            sleep_ns,
            round: 0,
            phase: 0,
            done_in_phase: 0,
            iter: None,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
            seed,
            pending: Vec::new(),
            actions: actions.into_iter(),
            think_next: false,
            marks,
            barrier: None,
            script: None,
            replay: None,
        }
    }

    /// Why the stream ended early, if it did (a trace that could not be read to its end).
    pub fn error(&self) -> Option<&str> {
        self.replay.as_ref().and_then(|r| r.error.as_deref())
    }

    fn next_generated(&mut self) -> Option<Action> {
        loop {
            if self.round >= self.rounds || self.phases.is_empty() {
                return None;
            }
            if self.phase >= self.phases.len() {
                self.end_round();
                if let Some(a) = self.pending.pop() {
                    return Some(a);
                }
                continue;
            }
            let ph = &self.phases[self.phase];
            if self.done_in_phase >= ph.ops {
                self.phase += 1;
                self.done_in_phase = 0;
                self.iter = None;
                continue;
            }
            if self.think_next {
                self.think_next = false;
                return Some(Action::Think(ph.think_ns));
            }
            let seed = self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ ((self.round << 16) + self.phase as u64);
            let it = self.iter.get_or_insert_with(|| ph.pattern.iter(seed));
            let Some(idx) = it.next() else {
                // An invalid pattern yields nothing: the phase ends.
                self.done_in_phase = u64::MAX;
                continue;
            };
            let a = phase_access(ph, idx, self.done_in_phase, &mut self.rng);
            self.done_in_phase += 1;
            self.think_next = ph.think_ns > 0;
            return Some(a);
        }
    }

    fn end_round(&mut self) {
        self.round += 1;
        self.phase = 0;
        self.done_in_phase = 0;
        self.iter = None;
        // Pushed in reverse: popped as Mark, Munmap, Sleep.
        if self.sleep_ns > 0 {
            self.pending.push(Action::Sleep(self.sleep_ns));
        }
        if let Some((start, len)) = self.unmap {
            self.pending.push(Action::MunmapAnon { start, len });
        }
        if let Some((group, parties)) = self.barrier {
            self.pending.push(Action::Barrier { group, parties });
        }
        if self.marks {
            self.pending.push(Action::Mark);
        }
    }
}

impl ActionSource for StreamIter {
    fn next_action(&mut self) -> Option<Action> {
        if let Some(a) = self.pending.pop() {
            return Some(a);
        }
        if let Some(a) = self.actions.next() {
            return Some(a);
        }
        if let Some(sc) = &mut self.script {
            return sc.next_action();
        }
        if let Some(r) = &mut self.replay {
            return r.next_action();
        }
        self.next_generated()
    }
}

/// Writes a scenario's access stream as a reclaimlab trace: the streams of all threads,
/// interleaved one access at a time (round robin), with time 0 (closed loop). Thinking,
/// munmap and round markers are not part of trace format v1. Returns the number of records.
pub fn write_trace<W: std::io::Write>(
    scn: &Scenario,
    seed: u64,
    out: W,
) -> Result<u64, crate::trace::TraceError> {
    let memcgs: Vec<(u16, String)> = std::iter::once("/".to_string())
        .chain(
            scn.machine
                .memcgs
                .iter()
                .map(|m| m.path.clone())
                .filter(|p| p != "/"),
        )
        .enumerate()
        .map(|(i, p)| (i as u16, p))
        .collect();
    let header = crate::trace::TraceHeader {
        memcgs: memcgs.clone(),
        files: scn
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (i as u32, f.pages, Some(f.name.clone())))
            .collect(),
        tmpfs: (0..scn.files.len() as u32)
            .filter(|&i| scn.files[i as usize].tmpfs)
            .collect(),
    };
    let memcg_of = |proc: usize| {
        memcgs
            .iter()
            .find(|(_, p)| *p == scn.procs[proc].memcg)
            .map_or(0, |(i, _)| *i)
    };
    let mut w = crate::trace::NativeWriter::new(out);
    w.write_header(&header)?;
    let mut share = RunShare::default();
    let mut iters: Vec<StreamIter> = scn
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            StreamIter::new(
                &t.stream,
                seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
                &mut share,
            )
        })
        .collect();
    let mut live: Vec<bool> = vec![true; iters.len()];
    let mut n = 0;
    while live.iter().any(|&l| l) {
        for (i, it) in iters.iter_mut().enumerate() {
            if !live[i] {
                continue;
            }
            loop {
                match it.next_action() {
                    None => {
                        live[i] = false;
                        break;
                    }
                    Some(Action::Access { page, op, via, req }) => {
                        let proc = scn.threads[i].proc;
                        w.write_record(&TraceRecord {
                            time_ns: 0,
                            pid: proc as u32,
                            memcg: memcg_of(proc),
                            page,
                            op,
                            via,
                            req,
                        })?;
                        n += 1;
                        break;
                    }
                    Some(_) => continue,
                }
            }
        }
    }
    w.finish()?;
    Ok(n)
}
