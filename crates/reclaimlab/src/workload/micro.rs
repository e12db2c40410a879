//! Built-in micro-scenarios, for tests and teaching (spec workloads.md, last paragraph). Each
//! takes a `scale`: 1.0 is a 64 MiB machine; every size scales together, costs do not.

use super::pattern::Pattern;
use super::*;
use crate::machine::{MachineConfig, MemcgConfig, SwapConfig};

/// A built-in scenario: name, one-line description, builder taking the scale.
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    pub build: fn(f64) -> Scenario,
    /// The scale used when none is given: 1 for the micro-scenarios; for the seed scenarios
    /// (scale 1 = the seed's size) the largest that runs one policy and seed in seconds.
    pub default_scale: f64,
}

/// Every built-in scenario: the micro-scenarios, then the seed scenarios (workload/seeds.rs).
pub fn builtins() -> Vec<Builtin> {
    let mut v = micro_builtins();
    v.extend(super::seeds::builtins());
    v
}

/// The scale a built-in scenario runs at when none is given.
pub fn default_scale(name: &str) -> Option<f64> {
    builtins()
        .into_iter()
        .find(|b| b.name == name)
        .map(|b| b.default_scale)
}

/// Built-in scenarios that are miniatures of a seed's setup even at scale 1: their memory is
/// scaled down while their thread counts are the seed's (`file-anon-mix-mini` is 1/256 of
/// spec E2's machine), so their reclaimers' batches are a seed-sized share of their lists.
const MINIATURES: &[&str] = &["file-anon-mix-mini"];

/// Whether the built-in scenario `name` at `scale` keeps its concurrent reclaimers' isolated
/// batches as small a share of its lists as its real machine does, so that tasks may run
/// inside each other's batches (`--interleave auto`): at scale 1 (the micro-scenarios' 64 MiB
/// machine, the seed scenarios' own machine) unless it is a miniature, and down to the
/// smallest scale a seed scenario derives for itself (`seeds::interleave_min_scale`).
pub fn interleaves_faithfully(name: &str, scale: f64) -> bool {
    !MINIATURES.contains(&name) && scale >= super::seeds::interleave_min_scale(name).unwrap_or(1.0)
}

/// The micro-scenarios.
fn micro_builtins() -> Vec<Builtin> {
    vec![
        Builtin { name: "seq-scan", description: "one thread reads a file twice the size of memory sequentially, twice (read())", build: seq_scan, default_scale: 1.0 },
        Builtin { name: "uniform", description: "uniform random read() over a file twice the size of memory", build: uniform, default_scale: 1.0 },
        Builtin { name: "zipf", description: "Zipf(0.99) random read() over a file four times the size of memory", build: zipf, default_scale: 1.0 },
        Builtin { name: "loop", description: "read() loop over a file 1/8 larger than memory: LRU's worst case", build: loop_, default_scale: 1.0 },
        Builtin { name: "hot-scan", description: "a hot set of 40% of memory read uniformly, interrupted by one-off scans twice the size of memory", build: hot_scan, default_scale: 1.0 },
        Builtin { name: "anon-only", description: "anonymous Zipf(0.9) loads and stores over 1.5x memory, zram swap", build: anon_only, default_scale: 1.0 },
        Builtin { name: "file-only", description: "read() and write() (20%) Zipf(0.9) over a file twice the size of memory", build: file_only, default_scale: 1.0 },
        Builtin { name: "mixed-rw", description: "an anon Zipf writer (60% of memory) beside a file reader/writer (2x memory), zram swap", build: mixed_rw, default_scale: 1.0 },
        Builtin { name: "mmap-zipf", description: "Zipf(0.99) loads through a shared file mapping twice the size of memory", build: mmap_zipf, default_scale: 1.0 },
        Builtin { name: "swap-storm", description: "four threads touch anonymous memory uniformly over 1.5x memory, zram swap", build: swap_storm, default_scale: 1.0 },
                Builtin { name: "memcg-limit", description: "Zipf(0.9) read() in a memcg limited to half of memory, beside an unlimited anon user", build: memcg_limit, default_scale: 1.0 },
        Builtin { name: "file-anon-mix-mini", description: "the 2026 series' file+anon OOM reproducer in miniature: 4 mmap readers of a hot file, rounds of anon writes over the memcg limit, no swap", build: file_anon_mix_mini, default_scale: 1.0 },
    ]
}

/// Looks a built-in scenario up by name.
pub fn builtin(name: &str, scale: f64) -> Result<Scenario, String> {
    if !(scale > 0.0 && scale <= 1024.0) {
        return Err(format!("scale {scale} must be in (0, 1024]"));
    }
    builtins()
        .into_iter()
        .find(|b| b.name == name)
        .map(|b| (b.build)(scale))
        .ok_or_else(|| format!("unknown scenario '{name}' (see `reclaimlab scenarios`)"))
}

/// Pages of a 64 MiB machine at this scale.
fn mem(scale: f64) -> u64 {
    ((16384.0 * scale) as u64).max(1024)
}

fn frac(pages: u64, f: f64) -> u64 {
    ((pages as f64 * f) as u64).max(1)
}

fn machine(scale: f64) -> MachineConfig {
    MachineConfig::simple(mem(scale))
}

fn with_zram(mut m: MachineConfig) -> MachineConfig {
    let pages = m.total_pages();
    m.swap = SwapConfig::Zram {
        size_pages: pages,
        compress_ratio: 3.0,
    };
    m
}

fn thread(proc: usize, cpu: u32, phases: Vec<Phase>) -> ThreadSpec {
    ThreadSpec {
        proc,
        cpu,
        stream: Stream::Phases(phases),
    }
}

/// A single-thread, single-file fd scenario.
fn one_file(name: &str, desc: &str, scale: f64, file_pages: u64, ph: Phase) -> Scenario {
    Scenario {
        name: name.into(),
        description: desc.into(),
        machine: machine(scale),
        files: vec![FileSpec::new("data", file_pages)],
        procs: vec![ProcSpec::new("reader", "/", 0)],
        threads: vec![thread(0, 0, vec![ph])],
    }
}

fn seq_scan(scale: f64) -> Scenario {
    let pages = 2 * mem(scale);
    one_file(
        "seq-scan",
        "sequential scan",
        scale,
        pages,
        Phase::new(Pattern::Sequential { pages }, Target::fd(0), 0, 2 * pages),
    )
}

fn uniform(scale: f64) -> Scenario {
    let pages = 2 * mem(scale);
    one_file(
        "uniform",
        "uniform random reads",
        scale,
        pages,
        Phase::new(Pattern::Uniform { pages }, Target::fd(0), 0, 8 * pages),
    )
}

fn zipf(scale: f64) -> Scenario {
    let pages = 4 * mem(scale);
    one_file(
        "zipf",
        "Zipf reads",
        scale,
        pages,
        Phase::new(
            Pattern::Zipf { pages, s: 0.99 },
            Target::fd(0),
            0,
            4 * pages,
        ),
    )
}

fn loop_(scale: f64) -> Scenario {
    let pages = mem(scale) + mem(scale) / 8;
    one_file(
        "loop",
        "loop larger than memory",
        scale,
        pages,
        Phase::new(Pattern::Loop { pages }, Target::fd(0), 0, 6 * pages),
    )
}

fn hot_scan(scale: f64) -> Scenario {
    let m = mem(scale);
    let (hot, scan_len) = (frac(m, 0.4), 2 * m);
    let scans = 3;
    let p = Pattern::HotScan {
        hot,
        scan: scan_len * scans,
        scan_every: 6 * hot,
        scan_len,
    };
    one_file(
        "hot-scan",
        "hot set plus one-off scans",
        scale,
        hot + scan_len * scans,
        Phase::new(p, Target::fd(0), 0, scans * (6 * hot + scan_len) + 6 * hot),
    )
}

fn anon_only(scale: f64) -> Scenario {
    let pages = frac(mem(scale), 1.5);
    Scenario {
        name: "anon-only".into(),
        description: "anonymous pressure".into(),
        machine: with_zram(machine(scale)),
        files: vec![],
        procs: vec![ProcSpec::new("anon", "/", pages)],
        threads: vec![thread(
            0,
            0,
            vec![
                Phase::new(Pattern::Sequential { pages }, Target::Anon, 100, pages),
                Phase::new(Pattern::Zipf { pages, s: 0.9 }, Target::Anon, 30, 6 * pages),
            ],
        )],
    }
}

fn file_only(scale: f64) -> Scenario {
    let pages = 2 * mem(scale);
    one_file(
        "file-only",
        "file pressure",
        scale,
        pages,
        Phase::new(
            Pattern::Zipf { pages, s: 0.9 },
            Target::fd(0),
            20,
            6 * pages,
        ),
    )
}

fn mixed_rw(scale: f64) -> Scenario {
    let m = mem(scale);
    let (anon, fpages) = (frac(m, 0.6), 2 * m);
    let mut mc = with_zram(machine(scale));
    mc.cpus = 2;
    Scenario {
        name: "mixed-rw".into(),
        description: "anon and file together".into(),
        machine: mc,
        files: vec![FileSpec::new("data", fpages)],
        procs: vec![
            ProcSpec::new("anon", "/", anon),
            ProcSpec::new("file", "/", 0),
        ],
        threads: vec![
            thread(
                0,
                0,
                vec![
                    Phase::new(Pattern::Sequential { pages: anon }, Target::Anon, 100, anon),
                    Phase::new(
                        Pattern::Zipf {
                            pages: anon,
                            s: 0.9,
                        },
                        Target::Anon,
                        50,
                        8 * anon,
                    ),
                ],
            ),
            thread(
                1,
                1,
                vec![Phase::new(
                    Pattern::Zipf {
                        pages: fpages,
                        s: 0.9,
                    },
                    Target::fd(0),
                    20,
                    4 * fpages,
                )],
            ),
        ],
    }
}

fn mmap_zipf(scale: f64) -> Scenario {
    let pages = 2 * mem(scale);
    Scenario {
        name: "mmap-zipf".into(),
        description: "mapped file Zipf".into(),
        machine: machine(scale),
        files: vec![FileSpec::new("data", pages)],
        procs: vec![ProcSpec {
            mmaps: vec![(0, crate::machine::mm::vm::SHARED)],
            ..ProcSpec::new("mapper", "/", 0)
        }],
        threads: vec![thread(
            0,
            0,
            vec![Phase::new(
                Pattern::Zipf { pages, s: 0.99 },
                Target::mmap(0),
                0,
                5 * pages,
            )],
        )],
    }
}

fn swap_storm(scale: f64) -> Scenario {
    let pages = frac(mem(scale), 1.5);
    let per = pages / 4;
    let mut mc = with_zram(machine(scale));
    mc.cpus = 4;
    Scenario {
        name: "swap-storm".into(),
        description: "anon thrashing".into(),
        machine: mc,
        files: vec![],
        procs: (0..4)
            .map(|i| ProcSpec::new(&format!("storm{i}"), "/", per))
            .collect(),
        threads: (0..4)
            .map(|i| {
                thread(
                    i,
                    i as u32,
                    vec![
                        Phase::new(Pattern::Sequential { pages: per }, Target::Anon, 100, per),
                        Phase::new(Pattern::Uniform { pages: per }, Target::Anon, 50, 4 * per),
                    ],
                )
            })
            .collect(),
    }
}

fn memcg_limit(scale: f64) -> Scenario {
    let m = mem(scale);
    let limit = m / 2;
    let fpages = 2 * m;
    let anon = frac(m, 0.3);
    let mut mc = machine(scale);
    mc.cpus = 2;
    mc.memcgs = vec![
        MemcgConfig::new("/limited").with_max(limit),
        MemcgConfig::new("/free"),
    ];
    Scenario {
        name: "memcg-limit".into(),
        description: "memcg limit reclaim".into(),
        machine: mc,
        files: vec![FileSpec::new("data", fpages)],
        procs: vec![
            ProcSpec::new("limited", "/limited", 0),
            ProcSpec::new("free", "/free", anon),
        ],
        threads: vec![
            thread(
                0,
                0,
                vec![Phase::new(
                    Pattern::Zipf {
                        pages: fpages,
                        s: 0.9,
                    },
                    Target::fd(0),
                    10,
                    4 * fpages,
                )],
            ),
            thread(
                1,
                1,
                vec![Phase::new(
                    Pattern::Sequential { pages: anon },
                    Target::Anon,
                    100,
                    4 * anon,
                )],
            ),
        ],
    }
}

/// The emm-test-project `file-anon-mix-pressure` reproducer (spec series-2026.md E2) at 1/256
/// of workloads.md's size (scale 1 = a 64 MiB memcg): a file of half the limit read through
/// MAP_SHARED by one reader process per CPU (one byte per page per pass, 120 ms pause); one
/// process whose threads (one per CPU) write anon memory of 7/8 of the limit each round, then
/// unmap it and sleep 1 s; no swap. The writer threads meet at a barrier after each round
/// (the seed joins them), then each unmaps its slice. 32 rounds instead of 128.
fn file_anon_mix_mini(scale: f64) -> Scenario {
    let limit = mem(scale);
    let mut s = file_anon_mix_build(FileAnonMix {
        limit,
        node_pages: vec![limit * 2],
        cpus: 4,
        rounds: 32,
        warmup_ns: 2_000_000_000,
    });
    s.name = "file-anon-mix-mini".into();
    s.description = "file+anon mix OOM reproducer, miniature".into();
    s
}

/// The parameters of the file+anon mix reproducer (spec series-2026.md E2): the memcg limit,
/// the machine's nodes, one reader process and one anon writer thread per CPU, the rounds and
/// the readers' head start. The file is half the limit, the anon region 7/8 of it.
pub(crate) struct FileAnonMix {
    pub limit: u64,
    pub node_pages: Vec<u64>,
    pub cpus: u32,
    pub rounds: u64,
    pub warmup_ns: u64,
}

/// Builds the file+anon mix reproducer (shared by `file-anon-mix-mini` and `file-anon-mix`).
/// Process 0 is the anon writer (one thread per CPU, threads 0..cpus), processes 1..=cpus the
/// readers (threads cpus..2*cpus).
pub(crate) fn file_anon_mix_build(p: FileAnonMix) -> Scenario {
    let limit = p.limit;
    let file_pages = (limit / 2).max(1);
    let anon = limit * 7 / 8;
    let cpus = p.cpus.max(1);
    let slice = (anon / cpus as u64).max(1);
    let mut mc = MachineConfig::simple(limit);
    mc.node_pages = p.node_pages;
    mc.cpus = cpus;
    mc.memcgs = vec![MemcgConfig::new("/mix").with_max(limit)];
    // The seed suggests a ramdisk- or pmem-backed ext4 so that reads are fast.
    mc.file_device = crate::machine::DeviceProfile::ramdisk();
    let mut procs = vec![ProcSpec::new("anon", "/mix", anon)];
    let mut threads = Vec::new();
    for c in 0..cpus {
        let pages = slice;
        // The pressure starts once the readers have read the file once (the seed's parent
        // waits for every reader's first pass).
        threads.push(ThreadSpec {
            proc: 0,
            cpu: c,
            stream: Stream::Delayed {
                delay_ns: p.warmup_ns,
                stream: Box::new(Stream::Synced {
                    group: 0,
                    parties: cpus as u16,
                    stream: Box::new(Stream::Rounds {
                        phases: vec![Phase {
                            offset: c as u64 * slice,
                            ..Phase::new(Pattern::Sequential { pages }, Target::Anon, 100, pages)
                        }],
                        rounds: p.rounds,
                        unmap: Some((c as u64 * slice, slice)),
                        sleep_ns: 1_000_000_000,
                    }),
                }),
            },
        });
    }
    for c in 0..cpus {
        procs.push(ProcSpec {
            mmaps: vec![(0, crate::machine::mm::vm::SHARED)],
            ..ProcSpec::new(&format!("reader{c}"), "/mix", 0)
        });
        threads.push(ThreadSpec {
            proc: 1 + c as usize,
            cpu: c,
            stream: Stream::Background {
                phases: vec![Phase::new(
                    Pattern::Sequential { pages: file_pages },
                    Target::mmap(0),
                    0,
                    file_pages,
                )],
                sleep_ns: 120_000_000,
            },
        });
    }
    Scenario {
        name: "file-anon-mix-mini".into(),
        description: "file+anon mix OOM reproducer, miniature".into(),
        machine: mc,
        files: vec![FileSpec::new("data", file_pages)],
        procs,
        threads,
    }
}
