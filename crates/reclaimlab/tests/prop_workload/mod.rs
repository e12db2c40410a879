//! The random workload shared by the property tests: two processes, one in a limited memcg
//! `/a` and one in an unlimited `/b`, each with anon memory and a shared (`a`) or private (`b`)
//! mapping of one file, running phases of anon, fd and mmap accesses with writes. Sequential
//! fd phases read in requests of 1 to 8 pages (readahead sees each as one read()), and with an
//! odd number of phases `b` reads the file through a descriptor advised POSIX_FADV_RANDOM.

use reclaimlab::access::Via;
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::{MachineConfig, MemcgConfig};
use reclaimlab::workload::pattern::Pattern;
use reclaimlab::workload::{FileSpec, Phase, ProcSpec, Scenario, Stream, Target, ThreadSpec};

/// A phase as proptest draws it: (target, pattern kind, process, write percentage).
pub type PhaseDraw = (u8, u8, u8, u32);

/// The sizes of the workload, in pages, and the length of its phases.
pub struct Sizes {
    pub file_pages: u64,
    pub anon_pages: u64,
    /// Accesses of the first phase; each later phase `i` runs `base_ops + 7 i`.
    pub base_ops: u64,
}

fn pattern(kind: u8, pages: u64) -> Pattern {
    match kind % 4 {
        0 => Pattern::Uniform { pages },
        1 => Pattern::Zipf { pages, s: 0.9 },
        2 => Pattern::Sequential { pages },
        _ => Pattern::HotScan {
            hot: pages / 4 + 1,
            scan: pages,
            scan_every: pages / 2 + 1,
            scan_len: pages / 4 + 1,
        },
    }
}

fn target(draw: u8, sizes: &Sizes) -> (Target, u64) {
    let file = |via| Target::File { file: 0, via };
    match draw % 3 {
        0 => (Target::Anon, sizes.anon_pages),
        1 => (file(Via::Fd), sizes.file_pages),
        _ => (file(Via::Mmap), sizes.file_pages),
    }
}

/// The scenario on machine `m` (whose memcgs it sets: `/a` limited to `limit_pct` % of
/// memory, `/b` unlimited).
#[allow(dead_code)]
pub fn scenario(
    name: &str,
    m: MachineConfig,
    limit_pct: u64,
    sizes: Sizes,
    phases: Vec<PhaseDraw>,
) -> Scenario {
    scenario_on(name, m, limit_pct, sizes, phases, false)
}

/// [`scenario`] with its file on tmpfs if `tmpfs`.
#[allow(dead_code)]
pub fn scenario_on(
    name: &str,
    mut m: MachineConfig,
    limit_pct: u64,
    sizes: Sizes,
    phases: Vec<PhaseDraw>,
    tmpfs: bool,
) -> Scenario {
    m.memcgs = vec![
        MemcgConfig::new("/a").with_max(m.total_pages() * limit_pct / 100),
        MemcgConfig::new("/b"),
    ];
    let procs = vec![
        ProcSpec {
            name: "a".into(),
            memcg: "/a".into(),
            anon_pages: sizes.anon_pages,
            mmaps: vec![(0, vm::SHARED)],
            fadvise_random: Vec::new(),
        },
        ProcSpec {
            name: "b".into(),
            memcg: "/b".into(),
            anon_pages: sizes.anon_pages,
            mmaps: vec![(0, 0)],
            fadvise_random: if phases.len() % 2 == 1 {
                vec![0]
            } else {
                Vec::new()
            },
        },
    ];
    let mut threads = vec![Vec::new(), Vec::new()];
    for (i, (tgt, kind, proc, write)) in phases.into_iter().enumerate() {
        let (target, pages) = target(tgt, &sizes);
        let req = if kind % 4 == 2 {
            1 + u64::from(write % 8)
        } else {
            1
        };
        threads[(proc % 2) as usize].push(
            Phase::new(
                pattern(kind, pages),
                target,
                write % 101,
                sizes.base_ops + i as u64 * 7,
            )
            .requests(req),
        );
    }
    Scenario {
        name: name.into(),
        description: String::new(),
        machine: m,
        files: vec![FileSpec {
            name: "f".into(),
            pages: sizes.file_pages,
            tmpfs,
        }],
        procs,
        threads: threads
            .into_iter()
            .enumerate()
            .map(|(i, p)| ThreadSpec {
                proc: i,
                cpu: i as u32,
                stream: Stream::Phases(p),
            })
            .collect(),
    }
}
