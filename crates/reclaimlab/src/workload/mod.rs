//! Workloads: a Rust API to describe a machine, its memcgs, processes, files and the access
//! streams of their threads, plus the built-in scenarios.

pub mod micro;
pub mod pattern;

use crate::access::{Op, PageRef, TraceRecord, Via};
use crate::machine::mm::vm;
use crate::machine::MachineConfig;
use pattern::{Pattern, PatternIter};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One step of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Access one page.
    Access { page: PageRef, op: Op, via: Via },
    /// Spend CPU time (or sleep) without touching memory.
    Think(u64),
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
    /// A fixed list of actions (trace replay).
    Actions(Vec<Action>),
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
}

impl Stream {
    /// Whether a thread with this stream is a daemon.
    pub fn is_background(&self) -> bool {
        match self {
            Stream::Background { .. } => true,
            Stream::Delayed { stream, .. } | Stream::Synced { stream, .. } => {
                stream.is_background()
            }
            _ => false,
        }
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
}

/// A file of the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSpec {
    pub name: String,
    pub pages: u64,
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
    /// Checks internal references, naming the first problem.
    pub fn validate(&self) -> Result<(), String> {
        self.machine.validate()?;
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
            let phases: &[Phase] = match t.stream.undelayed().0 {
                Stream::Phases(p)
                | Stream::Rounds { phases: p, .. }
                | Stream::Background { phases: p, .. } => p,
                Stream::Actions(_) | Stream::Delayed { .. } | Stream::Synced { .. } => &[],
            };
            for ph in phases {
                ph.pattern.validate()?;
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

    /// The total pages the workload can touch (anon areas plus files).
    pub fn footprint(&self) -> u64 {
        self.procs.iter().map(|p| p.anon_pages).sum::<u64>()
            + self.files.iter().map(|f| f.pages).sum::<u64>()
    }

    /// Builds a scenario from a trace: one process per pid (in the memcg the trace names), one
    /// thread per process, every record replayed in order at its time (or back to back when
    /// times are 0). `machine` decides memory, swap and devices; the trace's memcgs are added.
    pub fn from_trace(
        name: &str,
        machine: MachineConfig,
        header: &crate::trace::TraceHeader,
        records: &[TraceRecord],
    ) -> Result<Scenario, String> {
        let mut machine = machine;
        let mut memcg_paths = vec!["/".to_string()];
        for (idx, path) in &header.memcgs {
            let i = *idx as usize;
            if memcg_paths.len() <= i {
                memcg_paths.resize(i + 1, String::new());
            }
            memcg_paths[i] = path.clone();
            if path != "/" && !machine.memcgs.iter().any(|m| &m.path == path) {
                machine.memcgs.push(crate::machine::MemcgConfig::new(path));
            }
        }
        let remap = compact_huge_files(header, records);
        let mut files: Vec<FileSpec> = Vec::new();
        let mut ensure_file = |id: u32, pages: u64| {
            let i = id as usize;
            if files.len() <= i {
                files.resize(
                    i + 1,
                    FileSpec {
                        name: String::new(),
                        pages: 0,
                    },
                );
            }
            files[i].name = format!("file{id}");
            files[i].pages = files[i].pages.max(pages);
        };
        for (id, pages, _) in &header.files {
            let pages = remap.get(id).map_or(*pages, |m| m.len() as u64);
            ensure_file(*id, pages);
        }
        let mut pid_index: std::collections::BTreeMap<u32, usize> = Default::default();
        let mut procs: Vec<ProcSpec> = Vec::new();
        let mut actions: Vec<Vec<Action>> = Vec::new();
        for r in records {
            let r = &remap_record(&remap, r);
            let memcg = memcg_paths
                .get(r.memcg as usize)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| format!("trace uses undeclared memcg {}", r.memcg))?
                .clone();
            let pi = *pid_index.entry(r.pid).or_insert_with(|| {
                procs.push(ProcSpec {
                    name: format!("pid{}", r.pid),
                    memcg: memcg.clone(),
                    anon_pages: 0,
                    mmaps: Vec::new(),
                });
                actions.push(Vec::new());
                procs.len() - 1
            });
            match r.page {
                PageRef::Anon { page } => procs[pi].anon_pages = procs[pi].anon_pages.max(page + 1),
                PageRef::File { file, page } => {
                    ensure_file(file, page + 1);
                    if r.via == Via::Mmap
                        && !procs[pi].mmaps.iter().any(|&(f, _)| f == file as usize)
                    {
                        procs[pi].mmaps.push((file as usize, vm::SHARED));
                    }
                }
            }
            if r.time_ns > 0 {
                actions[pi].push(Action::WaitUntil(r.time_ns));
            }
            actions[pi].push(Action::Access {
                page: r.page,
                op: r.op,
                via: r.via,
            });
        }
        let cpus = machine.cpus;
        let threads = actions
            .into_iter()
            .enumerate()
            .map(|(i, a)| ThreadSpec {
                proc: i,
                cpu: i as u32 % cpus,
                stream: Stream::Actions(a),
            })
            .collect();
        Ok(Scenario {
            name: name.to_string(),
            description: "trace replay".into(),
            machine,
            files,
            procs,
            threads,
        })
    }
}

/// Files larger than this (64 GiB) are compacted when a trace is replayed.
pub const MAX_FILE_PAGES: u64 = 1 << 24;

/// For every file a trace declares or uses beyond [`MAX_FILE_PAGES`] (object traces such as
/// oracleGeneral spread objects over a huge page space), a map from each page used to its rank
/// among the pages used, so the replay keeps the order of pages but not the empty space
/// between them.
fn compact_huge_files(
    header: &crate::trace::TraceHeader,
    records: &[TraceRecord],
) -> std::collections::BTreeMap<u32, std::collections::BTreeMap<u64, u64>> {
    use std::collections::BTreeMap;
    let mut size: BTreeMap<u32, u64> = header.files.iter().map(|(id, p, _)| (*id, *p)).collect();
    for r in records {
        if let PageRef::File { file, page } = r.page {
            let s = size.entry(file).or_insert(0);
            *s = (*s).max(page + 1);
        }
    }
    let mut maps: BTreeMap<u32, BTreeMap<u64, u64>> = size
        .into_iter()
        .filter(|&(_, s)| s > MAX_FILE_PAGES)
        .map(|(id, _)| (id, BTreeMap::new()))
        .collect();
    for r in records {
        if let PageRef::File { file, page } = r.page {
            if let Some(m) = maps.get_mut(&file) {
                m.insert(page, 0);
            }
        }
    }
    for m in maps.values_mut() {
        for (rank, v) in m.values_mut().enumerate() {
            *v = rank as u64;
        }
    }
    maps
}

fn remap_record(
    maps: &std::collections::BTreeMap<u32, std::collections::BTreeMap<u64, u64>>,
    r: &TraceRecord,
) -> TraceRecord {
    match r.page {
        PageRef::File { file, page } => match maps.get(&file) {
            Some(m) => TraceRecord {
                page: PageRef::File {
                    file,
                    page: m[&page],
                },
                ..*r
            },
            None => *r,
        },
        _ => *r,
    }
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
}

impl StreamIter {
    pub fn new(stream: &Stream, seed: u64) -> Self {
        let (inner, delay, barrier) = stream.unwrapped();
        let mut it = Self::new_undelayed(inner, seed);
        it.barrier = barrier;
        if delay > 0 {
            it.pending.push(Action::Think(delay));
        }
        it
    }

    fn new_undelayed(stream: &Stream, seed: u64) -> Self {
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
            Stream::Delayed { .. } | Stream::Synced { .. } => {
                unreachable!("unwrapped() strips the wrappers")
            }
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
        }
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
            let idx = idx + ph.offset;
            let op = if ph.write_pct > 0 && self.rng.random_range(0..100) < ph.write_pct {
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
            self.done_in_phase += 1;
            self.think_next = ph.think_ns > 0;
            return Some(Action::Access { page, op, via });
        }
    }

    fn end_round(&mut self) {
        self.round += 1;
        self.phase = 0;
        self.done_in_phase = 0;
        self.iter = None;
        // Pushed in reverse: popped as Mark, Munmap, Sleep.
        if self.sleep_ns > 0 {
            self.pending.push(Action::Think(self.sleep_ns));
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
    };
    let memcg_of = |proc: usize| {
        memcgs
            .iter()
            .find(|(_, p)| *p == scn.procs[proc].memcg)
            .map_or(0, |(i, _)| *i)
    };
    let mut w = crate::trace::NativeWriter::new(out);
    w.write_header(&header)?;
    let mut iters: Vec<StreamIter> = scn
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            StreamIter::new(
                &t.stream,
                seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
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
                    Some(Action::Access { page, op, via }) => {
                        let proc = scn.threads[i].proc;
                        w.write_record(&TraceRecord {
                            time_ns: 0,
                            pid: proc as u32,
                            memcg: memcg_of(proc),
                            page,
                            op,
                            via,
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
