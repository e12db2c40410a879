//! The validation suite: small, seeded workloads a TCG guest replays in well under a minute,
//! each with the machine it runs on (guest RAM, memcg limits, zram). Every workload is
//! memcg-limited inside a much larger guest, so reclaim is memcg reclaim in the faulting task
//! (deterministic on one vCPU; kswapd stays asleep).
//!
//! To add a workload: write a generator returning a trace (header and records, seeded), and
//! add a [`Workload`] to [`suite`] with its [`MachineSpec`]. Workloads whose processes run
//! concurrently on two vCPUs go into [`smp2`] (`MachineSpec::cpus` = 2, records without times).

use crate::guest::MachineSpec;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reclaimlab::access::{Op, PageRef, TraceRecord, Via};
use reclaimlab::trace::TraceHeader;
use reclaimlab::workload::pattern::Pattern;
use std::collections::BTreeMap;

/// The seed of every suite trace.
pub const SUITE_SEED: u64 = 1;
/// Records of a multi-process trace are `STEP_NS` apart, so the model issues them in the same
/// order as the guest (which runs them in file order, one at a time).
pub const STEP_NS: u64 = 1_000_000;
const MIB: u64 = 1 << 20;

/// One workload of the suite.
pub struct Workload {
    pub name: &'static str,
    pub description: &'static str,
    pub machine: MachineSpec,
    pub generate: fn(u64) -> (TraceHeader, Vec<TraceRecord>),
}

impl Workload {
    pub fn trace(&self) -> (TraceHeader, Vec<TraceRecord>) {
        (self.generate)(SUITE_SEED)
    }
    /// Processes replay in parallel (the `smp2` suite): more than one vCPU.
    pub fn concurrent(&self) -> bool {
        self.machine.cpus > 1
    }
    /// The memcg whose counters are compared: the one with a limit (the top one if several).
    pub fn limited_memcg(&self) -> Option<&str> {
        self.machine.memcg_max.keys().next().map(|s| s.as_str())
    }
}

fn spec(limits: &[(&str, u64)], zram_mib: Option<u64>) -> MachineSpec {
    MachineSpec {
        guest_mib: 512,
        memcg_max: limits
            .iter()
            .map(|(p, m)| (p.to_string(), *m))
            .collect::<BTreeMap<_, _>>(),
        zram_mib,
        swappiness: 60,
        min_ttl_ms: 0,
        cpus: 1,
        read_ahead_kb: 0,
        fault_around_bytes: crate::guest::FAULT_AROUND_OFF,
    }
}

struct Gen {
    header: TraceHeader,
    records: Vec<TraceRecord>,
}

impl Gen {
    fn new(memcgs: &[(u16, &str)], files: &[(u32, u64)]) -> Gen {
        Gen {
            header: TraceHeader {
                memcgs: memcgs.iter().map(|(i, p)| (*i, p.to_string())).collect(),
                files: files.iter().map(|(i, p)| (*i, *p, None)).collect(),
                tmpfs: Vec::new(),
            },
            records: Vec::new(),
        }
    }
    fn push(&mut self, pid: u32, memcg: u16, page: PageRef, op: Op, via: Via) {
        self.records
            .push(TraceRecord::new(0, pid, memcg, page, op, via));
    }
    fn file(&mut self, pid: u32, memcg: u16, file: u32, page: u64, op: Op, via: Via) {
        self.push(pid, memcg, PageRef::File { file, page }, op, via);
    }
    fn anon(&mut self, pid: u32, memcg: u16, page: u64, op: Op) {
        self.push(pid, memcg, PageRef::Anon { page }, op, Via::Mmap);
    }
    /// Gives record i the time (i + 1) * STEP_NS (multi-process traces).
    fn timed(mut self) -> Gen {
        for (i, r) in self.records.iter_mut().enumerate() {
            r.time_ns = (i as u64 + 1) * STEP_NS;
        }
        self
    }
    fn done(self) -> (TraceHeader, Vec<TraceRecord>) {
        (self.header, self.records)
    }
}

fn zipf(pages: u64, s: f64, seed: u64) -> impl Iterator<Item = u64> {
    Pattern::Zipf { pages, s }.iter(seed)
}

fn op_of(rng: &mut ChaCha8Rng, write_pct: u32) -> Op {
    if rng.random_range(0..100) < write_pct {
        Op::Write
    } else {
        Op::Read
    }
}

/// 16 Ki-page (64 MiB) file read with pread, Zipf 0.9, 150k accesses.
fn file_pread_zipf(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    pread_zipf(seed, 150_000)
}

/// file-pread-zipf ten times as long: 1.5M preads, ~92 passes over the file (the `steady`
/// suite). Its first 150k records are file-pread-zipf's trace.
fn file_pread_zipf_long(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    pread_zipf(seed, STEADY_ACCESSES)
}

/// The first `n` preads of a Zipf 0.9 stream over a 16 Ki-page file, in memcg /w.
fn pread_zipf(seed: u64, n: usize) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 16384)]);
    for p in zipf(16384, 0.9, seed).take(n) {
        g.file(1, 1, 0, p, Op::Read, Via::Fd);
    }
    g.done()
}

/// Records of the `steady` suite's workload: ten times the default suite's 150k.
pub const STEADY_ACCESSES: usize = 1_500_000;

/// The same file and pattern through a shared mapping (loads).
fn file_mmap_zipf(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 16384)]);
    for p in zipf(16384, 0.9, seed).take(150_000) {
        g.file(1, 1, 0, p, Op::Read, Via::Mmap);
    }
    g.done()
}

/// 12 Ki pages (48 MiB) of anonymous memory: written once in order, then Zipf 0.9 with 30%
/// stores, 150k accesses; swap on zram.
fn anon_zipf(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[]);
    for p in 0..12288 {
        g.anon(1, 1, p, Op::Write);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xa0);
    for p in zipf(12288, 0.9, seed).take(150_000) {
        let op = op_of(&mut rng, 30);
        g.anon(1, 1, p, op);
    }
    g.done()
}

/// A file of 9,000 pages (35 MiB, about 14% more than the memcg holds) read in order with pread,
/// 16 times.
fn file_loop(_seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 9000)]);
    for _ in 0..16 {
        for p in 0..9000 {
            g.file(1, 1, 0, p, Op::Read, Via::Fd);
        }
    }
    g.done()
}

/// A 16 MiB hot set read uniformly, interrupted every 4,000 accesses by 4,000 pages of a
/// one-off scan through a 128 MiB region of the same file (pread), 150k accesses.
fn hot_scan(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 4096 + 32768)]);
    let pat = Pattern::HotScan {
        hot: 4096,
        scan: 32768,
        scan_every: 4000,
        scan_len: 4000,
    };
    for p in pat.iter(seed).take(150_000) {
        g.file(1, 1, 0, p, Op::Read, Via::Fd);
    }
    g.done()
}

/// One process: 24 MiB of anonymous memory (written once, then Zipf 0.9 with 30% stores)
/// interleaved 1:1 with pread of a 48 MiB file (Zipf 0.9), zram swap, 150k accesses after the
/// initial writes.
fn mixed_file_anon(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 12288)]);
    for p in 0..6144 {
        g.anon(1, 1, p, Op::Write);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb0);
    let mut a = zipf(6144, 0.9, seed);
    let mut f = zipf(12288, 0.9, seed + 1);
    for _ in 0..75_000 {
        let op = op_of(&mut rng, 30);
        g.anon(1, 1, a.next().unwrap(), op);
        g.file(1, 1, 0, f.next().unwrap(), Op::Read, Via::Fd);
    }
    g.done()
}

/// Zipf 0.9 over a 64 MiB file, half pwrite (whole pages) and half pread, 100k accesses: dirty
/// page cache that reclaim meets before writeback has cleaned it.
fn dirty_writeback(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 16384)]);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc0);
    for p in zipf(16384, 0.9, seed).take(100_000) {
        let op = op_of(&mut rng, 50);
        g.file(1, 1, 0, p, op, Via::Fd);
    }
    g.done()
}

/// Two processes in /p/a and /p/b under /p's 48 MiB limit, alternating: a reads a 32 MiB file
/// (Zipf 0.9), b a 64 MiB file (Zipf 0.6), pread, 75k accesses each.
fn two_memcgs(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/p/a"), (2, "/p/b")], &[(0, 8192), (1, 16384)]);
    let mut a = zipf(8192, 0.9, seed);
    let mut b = zipf(16384, 0.6, seed + 1);
    for _ in 0..75_000 {
        g.file(1, 1, 0, a.next().unwrap(), Op::Read, Via::Fd);
        g.file(2, 2, 1, b.next().unwrap(), Op::Read, Via::Fd);
    }
    g.timed().done()
}

/// A tiny workload for the opt-in boot test: 4 MiB memcg, an 8 MiB file, 6,000 preads.
fn tiny_gen(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 2048)]);
    for p in zipf(2048, 0.9, seed).take(6_000) {
        g.file(1, 1, 0, p, Op::Read, Via::Fd);
    }
    g.done()
}

/// The suite, in the order it runs.
pub fn suite() -> Vec<Workload> {
    vec![
        Workload {
            name: "file-pread-zipf",
            description: "pread of a 64 MiB file, Zipf 0.9, 32 MiB memcg",
            machine: spec(&[("/w", 32 * MIB)], None),
            generate: file_pread_zipf,
        },
        Workload {
            name: "file-mmap-zipf",
            description: "loads through a shared mapping of a 64 MiB file, Zipf 0.9, 32 MiB memcg",
            machine: spec(&[("/w", 32 * MIB)], None),
            generate: file_mmap_zipf,
        },
        Workload {
            name: "anon-zipf-zram",
            description: "48 MiB anon, Zipf 0.9, 30% stores, 32 MiB memcg, zram",
            machine: spec(&[("/w", 32 * MIB)], Some(256)),
            generate: anon_zipf,
        },
        Workload {
            name: "file-loop",
            description: "pread loop over a file ~14% larger than the 32 MiB memcg holds, 16 passes",
            machine: spec(&[("/w", 32 * MIB)], None),
            generate: file_loop,
        },
        Workload {
            name: "hot-scan",
            description: "16 MiB hot set plus one-off scans of 128 MiB (pread), 32 MiB memcg",
            machine: spec(&[("/w", 32 * MIB)], None),
            generate: hot_scan,
        },
        Workload {
            name: "mixed-file-anon",
            description: "24 MiB anon (Zipf, 30% stores) and 48 MiB file (Zipf pread) 1:1, 32 MiB memcg, zram",
            machine: spec(&[("/w", 32 * MIB)], Some(256)),
            generate: mixed_file_anon,
        },
        Workload {
            name: "dirty-writeback",
            description: "Zipf 0.9 over 64 MiB, 50% pwrite / 50% pread, 32 MiB memcg",
            machine: spec(&[("/w", 32 * MIB)], None),
            generate: dirty_writeback,
        },
        Workload {
            name: "two-memcgs",
            description: "/p/a (32 MiB file, Zipf 0.9) and /p/b (64 MiB file, Zipf 0.6) alternating under /p = 48 MiB",
            machine: spec(&[("/p", 48 * MIB)], None),
            generate: two_memcgs,
        },
    ]
}

/// `(pid, record)` streams of several processes merged round-robin (for a readable trace; a
/// concurrent plan runs each process's records in its own order whatever the merge).
fn round_robin(g: &mut Gen, streams: Vec<Vec<(u32, PageRef, Op, Via)>>) {
    let longest = streams.iter().map(|s| s.len()).max().unwrap_or(0);
    for i in 0..longest {
        for s in &streams {
            if let Some(&(pid, page, op, via)) = s.get(i) {
                g.push(pid, 1, page, op, via);
            }
        }
    }
}

/// Two processes in /w fault one 64 MiB file through their own shared mappings (loads), Zipf
/// 0.9 with different seeds, concurrently, 60k accesses each.
fn shared_mmap_2p(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 16384)]);
    let streams = (0..2u32)
        .map(|k| {
            zipf(16384, 0.9, seed + k as u64)
                .take(60_000)
                .map(|p| {
                    (
                        k + 1,
                        PageRef::File { file: 0, page: p },
                        Op::Read,
                        Via::Mmap,
                    )
                })
                .collect()
        })
        .collect();
    round_robin(&mut g, streams);
    g.done()
}

/// Three buffered writers in /w, each on its own 24 MiB file (Zipf 0.9, 70% pwrite of whole
/// pages, 30% pread), concurrently, 35k accesses each: 72 MiB of page cache, much of it dirty,
/// under a 32 MiB limit.
fn buffered_writers_3p(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 6144), (1, 6144), (2, 6144)]);
    let streams = (0..3u32)
        .map(|k| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (0xd0 + k as u64));
            zipf(6144, 0.9, seed + k as u64)
                .take(35_000)
                .map(|p| {
                    let op = op_of(&mut rng, 70);
                    (k + 1, PageRef::File { file: k, page: p }, op, Via::Fd)
                })
                .collect()
        })
        .collect();
    round_robin(&mut g, streams);
    g.done()
}

/// Two allocators in /w, concurrently: one writes 24 MiB of anonymous memory once, then Zipf
/// 0.9 over it with 30% stores (60k accesses); the other preads a 48 MiB file, Zipf 0.9 (60k
/// accesses); zram swap. The anonymous process, which does no I/O, finishes long before the
/// reader: its pages are swapped out but never in.
fn anon_file_2p(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 12288)]);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb0);
    let anon: Vec<_> = (0..6144)
        .map(|p| (1, PageRef::Anon { page: p }, Op::Write, Via::Mmap))
        .chain(
            zipf(6144, 0.9, seed)
                .take(60_000)
                .map(|p| (1, PageRef::Anon { page: p }, op_of(&mut rng, 30), Via::Mmap)),
        )
        .collect();
    let file: Vec<_> = zipf(12288, 0.9, seed + 1)
        .take(60_000)
        .map(|p| (2, PageRef::File { file: 0, page: p }, Op::Read, Via::Fd))
        .collect();
    round_robin(&mut g, vec![anon, file]);
    g.done()
}

/// Two processes in /w, each the single-vCPU suite's mix at half the size, concurrently: 12 MiB
/// of its own anonymous memory written once, then Zipf 0.9 over it (30% stores) interleaved 1:1
/// with pread of one shared 48 MiB file (Zipf 0.9, its own seed), 45k of each; zram swap. Both
/// processes allocate anonymous memory and page cache for their whole run.
fn mixed_file_anon_2p(seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 12288)]);
    let streams = (0..2u32)
        .map(|k| {
            let pid = k + 1;
            let s = seed + 2 * k as u64;
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (0xe0 + k as u64));
            let mut v: Vec<_> = (0..3072)
                .map(|p| (pid, PageRef::Anon { page: p }, Op::Write, Via::Mmap))
                .collect();
            let mut a = zipf(3072, 0.9, s);
            let mut f = zipf(12288, 0.9, s + 1);
            for _ in 0..45_000 {
                let op = op_of(&mut rng, 30);
                v.push((
                    pid,
                    PageRef::Anon {
                        page: a.next().unwrap(),
                    },
                    op,
                    Via::Mmap,
                ));
                let page = f.next().unwrap();
                v.push((pid, PageRef::File { file: 0, page }, Op::Read, Via::Fd));
            }
            v
        })
        .collect();
    round_robin(&mut g, streams);
    g.done()
}

fn smp_spec(limits: &[(&str, u64)], zram_mib: Option<u64>, cpus: u32) -> MachineSpec {
    MachineSpec {
        cpus,
        ..spec(limits, zram_mib)
    }
}

/// The `smp2` suite: two vCPUs (multi-threaded TCG) and concurrent processes, so reclaimers run
/// concurrently in one memcg (issue 11, part 5). Records carry no times: in the guest every
/// process runs its records as fast as it can. The replayer records how fast each went, and the
/// model replays each boot on that boot's clock, its records issued at the boot's times
/// ([`crate::pace`]).
pub fn smp2() -> Vec<Workload> {
    vec![
        Workload {
            name: "shared-mmap-2p",
            description: "2 processes load one 64 MiB MAP_SHARED file, Zipf 0.9, 32 MiB memcg, 2 vCPUs",
            machine: smp_spec(&[("/w", 32 * MIB)], None, 2),
            generate: shared_mmap_2p,
        },
        Workload {
            name: "buffered-writers-3p",
            description: "3 writers, own 24 MiB file each, Zipf 0.9, 70% pwrite, 32 MiB memcg, 2 vCPUs",
            machine: smp_spec(&[("/w", 32 * MIB)], None, 2),
            generate: buffered_writers_3p,
        },
        Workload {
            name: "mixed-file-anon-2p",
            description: "2 processes, each 12 MiB anon (Zipf, 30% stores) 1:1 with pread of one 48 MiB file, 32 MiB memcg, zram, 2 vCPUs",
            machine: smp_spec(&[("/w", 32 * MIB)], Some(256), 2),
            generate: mixed_file_anon_2p,
        },
        Workload {
            name: "anon-file-2p",
            description: "24 MiB anon (Zipf, 30% stores) in one process, 48 MiB file pread in another, 32 MiB memcg, zram, 2 vCPUs",
            machine: smp_spec(&[("/w", 32 * MIB)], Some(256), 2),
            generate: anon_file_2p,
        },
    ]
}

/// The kernel's default readahead window (`VM_READAHEAD_PAGES` = 128 KiB) and fault-around
/// (64 KiB): the readahead suite's setting.
pub const DEFAULT_READ_AHEAD_KB: u32 = 128;
pub const DEFAULT_FAULT_AROUND_BYTES: u64 = 65536;

fn ra_spec(limits: &[(&str, u64)]) -> MachineSpec {
    MachineSpec {
        read_ahead_kb: DEFAULT_READ_AHEAD_KB,
        fault_around_bytes: DEFAULT_FAULT_AROUND_BYTES,
        ..spec(limits, None)
    }
}

/// A 64 MiB file read in order through a shared mapping (loads, one per page), 4 passes: the
/// first fault of a pass is a read-around, the rest meets PG_readahead marks (async readahead).
fn mmap_seq(_seed: u64) -> (TraceHeader, Vec<TraceRecord>) {
    let mut g = Gen::new(&[(1, "/w")], &[(0, 16384)]);
    for _ in 0..4 {
        for p in 0..16384 {
            g.file(1, 1, 0, p, Op::Read, Via::Mmap);
        }
    }
    g.done()
}

/// The `readahead` suite: one vCPU (instruction-count clock, as the default suite) with the
/// kernel's default readahead window (128 KiB) and fault-around (64 KiB), the mechanisms the
/// other suites turn off: how many pages a mapped-file miss brings in.
pub fn readahead() -> Vec<Workload> {
    vec![
        Workload {
            name: "mmap-zipf-ra",
            description: "file-mmap-zipf's trace (64 MiB MAP_SHARED file, Zipf 0.9, 32 MiB memcg) with read_ahead_kb 128, fault_around_bytes 65536",
            machine: ra_spec(&[("/w", 32 * MIB)]),
            generate: file_mmap_zipf,
        },
        Workload {
            name: "mmap-seq-ra",
            description: "4 sequential passes of loads over a 64 MiB MAP_SHARED file, 32 MiB memcg, read_ahead_kb 128, fault_around_bytes 65536",
            machine: ra_spec(&[("/w", 32 * MIB)]),
            generate: mmap_seq,
        },
    ]
}

/// The `steady` suite: one vCPU, a trace ten times the default suite's, for the policies'
/// steady state. Over the default suite's 150k preads of file-pread-zipf 6.1's MGLRU misses
/// 3% more than its classic; over 1.5M, once its tiers have learned the refaults, 8.8% less,
/// on the kernel and in the model (validation/results/2026-11-28-steady; seed 002's skewed
/// fio cells, which run 30 min, are such a steady state: validation/seed002-fio-profile.md).
pub fn steady() -> Vec<Workload> {
    vec![Workload {
        name: "file-pread-zipf-long",
        description: "file-pread-zipf ten times as long: 1.5M preads of a 64 MiB file, Zipf 0.9, 32 MiB memcg",
        machine: spec(&[("/w", 32 * MIB)], None),
        generate: file_pread_zipf_long,
    }]
}

/// A suite by name: `default` (one vCPU, serial replay), `smp2` (two vCPUs, concurrent),
/// `readahead` (one vCPU, the kernel's default readahead and fault-around) or `steady` (one
/// vCPU, a long trace).
pub fn suite_named(name: &str) -> Result<Vec<Workload>, String> {
    match name {
        "default" | "" => Ok(suite()),
        "smp2" => Ok(smp2()),
        "readahead" => Ok(readahead()),
        "steady" => Ok(steady()),
        _ => Err(format!(
            "unknown suite '{name}' (expected default, smp2, readahead or steady)"
        )),
    }
}

/// The workload of the opt-in boot test (not part of the suite).
pub fn tiny() -> Workload {
    Workload {
        name: "tiny",
        description: "pread of an 8 MiB file, Zipf 0.9, 4 MiB memcg, 6,000 accesses",
        machine: spec(&[("/w", 4 * MIB)], None),
        generate: tiny_gen,
    }
}

/// A workload by name (any suite's or `tiny`).
pub fn workload(name: &str) -> Result<Workload, String> {
    if name == "tiny" {
        return Ok(tiny());
    }
    let all = || {
        suite()
            .into_iter()
            .chain(smp2())
            .chain(readahead())
            .chain(steady())
    };
    all().find(|w| w.name == name).ok_or_else(|| {
        let names: Vec<&str> = all().map(|w| w.name).collect();
        format!(
            "unknown workload '{name}' (expected tiny or one of {})",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_has_eight_deterministic_workloads() {
        let s = suite();
        assert!(s.len() >= 8);
        for w in &s {
            let (h, r) = w.trace();
            let (h2, r2) = w.trace();
            assert_eq!(h, h2);
            assert_eq!(r, r2, "{} is deterministic", w.name);
            assert!(
                (90_000..=300_000).contains(&r.len()),
                "{}: {} records",
                w.name,
                r.len()
            );
            assert!(w.limited_memcg().is_some());
            let mut buf = Vec::new();
            reclaimlab::trace::write_native(&mut buf, &h, &r).unwrap();
            let (h3, r3) = reclaimlab::trace::read_native(&buf[..]).unwrap();
            assert_eq!(r3, r, "{} survives the native format", w.name);
            assert_eq!(h3.memcgs, h.memcgs);
        }
        assert!(s.iter().all(|w| !w.concurrent() && w.machine.cpus == 1));
        assert!(workload("nope").err().unwrap().contains("unknown workload"));
        assert_eq!(workload("tiny").unwrap().trace().1.len(), 6000);
    }

    #[test]
    fn smp2_has_three_deterministic_concurrent_workloads() {
        let s = smp2();
        assert!(s.len() >= 3);
        for w in &s {
            assert!(w.concurrent() && w.machine.cpus == 2, "{}", w.name);
            let (h, r) = w.trace();
            assert_eq!(
                (h.clone(), r.clone()),
                w.trace(),
                "{} is deterministic",
                w.name
            );
            let pids: std::collections::BTreeSet<u32> = r.iter().map(|x| x.pid).collect();
            assert!(pids.len() >= 2, "{}: concurrent processes", w.name);
            assert!(
                r.iter().all(|x| x.time_ns == 0),
                "{}: no serializing times",
                w.name
            );
            assert!(r.iter().all(|x| x.memcg == 1), "{}: one memcg", w.name);
            assert_eq!(w.limited_memcg(), Some("/w"));
            let (mut ph, pr) = crate::guest::build_plan(&h, &r).unwrap();
            ph.concurrent = w.concurrent();
            let bytes = reclaimlab_replayer::encode_plan(&ph, &pr);
            assert_eq!(&bytes[..8], reclaimlab_replayer::PLAN_MAGIC_FLAGS);
            assert!(
                reclaimlab_replayer::decode_plan(&bytes)
                    .unwrap()
                    .0
                    .concurrent
            );
            assert_eq!(workload(w.name).unwrap().machine, w.machine);
        }
        assert_eq!(suite_named("smp2").unwrap().len(), s.len());
        assert_eq!(suite_named("default").unwrap().len(), suite().len());
        assert!(suite_named("smp3").err().unwrap().contains("unknown suite"));
    }

    #[test]
    fn readahead_suite_is_deterministic_with_kernel_defaults() {
        let s = readahead();
        assert!(s.len() >= 2);
        for w in &s {
            let (h, r) = w.trace();
            assert_eq!(
                (h.clone(), r.clone()),
                w.trace(),
                "{} is deterministic",
                w.name
            );
            assert!(!w.concurrent() && w.machine.cpus == 1, "{}", w.name);
            assert_eq!(w.machine.read_ahead_kb, 128);
            assert_eq!(w.machine.fault_around_bytes, 65536);
            assert!(!w.machine.one_page_per_fault());
            assert_eq!(w.limited_memcg(), Some("/w"));
            assert!(r.iter().all(|x| x.via == Via::Mmap && x.op == Op::Read));
            // The mapping is twice the memcg limit, as file-mmap-zipf's.
            assert_eq!(h.files[0].1 * 4096, 2 * w.machine.memcg_max["/w"]);
            assert_eq!(workload(w.name).unwrap().machine, w.machine);
        }
        // mmap-zipf-ra is file-mmap-zipf's trace, readahead aside.
        let base = workload("file-mmap-zipf").unwrap();
        assert_eq!(s[0].trace(), base.trace());
        assert_eq!(
            MachineSpec {
                read_ahead_kb: 0,
                fault_around_bytes: crate::guest::FAULT_AROUND_OFF,
                ..s[0].machine.clone()
            },
            base.machine
        );
        // Every other suite keeps readahead and fault-around off.
        assert!(suite()
            .iter()
            .chain(smp2().iter())
            .all(|w| w.machine.one_page_per_fault()));
        assert_eq!(suite_named("readahead").unwrap().len(), s.len());
    }

    /// The steady suite's workload is file-pread-zipf continued: the same machine, the same
    /// first 150k records, then more of the same stream.
    #[test]
    fn steady_suite_continues_file_pread_zipf() {
        let s = suite_named("steady").unwrap();
        assert_eq!(s.len(), 1);
        let (w, base) = (&s[0], workload("file-pread-zipf").unwrap());
        assert_eq!(w.machine, base.machine);
        assert_eq!(workload(w.name).unwrap().machine, w.machine);
        let ((h, r), (bh, br)) = (w.trace(), base.trace());
        assert_eq!(h, bh);
        assert_eq!(r.len(), STEADY_ACCESSES);
        assert_eq!(&r[..br.len()], &br[..]);
        assert!(!w.concurrent());
    }
}
