//! The seeds' benchmarks as built-in scenarios (spec workloads.md, the scenario table).
//!
//! Every builder takes a `scale`: 1 is the seed's own size. Sizes shrink together (memory,
//! memcg limits, files, anon areas, caches, buffers, the per-CPU LRU batches, and the run's
//! length in operations, so
//! that each page sees as many accesses per run as in the seed); counts of things (threads,
//! processes, memcgs, files, jobs, rounds) and time costs (device latencies, CPU costs,
//! pauses) do not. Time-based runs (`Stream::Until`) get `scale` times the seed's duration: a
//! request does `scale` times the seed's work, so the run keeps the seed's number of requests.
//! Sizes never drop below one page (or 256 pages per node).
//!
//! Each builder's doc comment lists its parameters at scale 1, how they map to the seed and what
//! it leaves out; docs/scenarios.md has the table. Requests (`Step::OpBegin`..`Step::OpEnd`) are
//! what the seed times: a YCSB operation, a sysbench transaction, a Chrome client iteration, an
//! app launch, a dd block, one 4 KiB fio read, a key-value request.

use super::micro::{file_anon_mix_build, Builtin, FileAnonMix};
use super::pattern::Pattern;
use super::*;
use crate::machine::mm::vm;
use crate::machine::{DeviceProfile, MachineConfig, MemcgConfig, SwapConfig};

/// Pages per GiB.
const GIB: f64 = 262_144.0;
const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// The seed scenarios.
pub fn builtins() -> Vec<Builtin> {
    vec![
        Builtin { name: "ycsb-b", description: "seed 000: MongoDB YCSB workloadb, 32 threads, 95% read / 5% update Zipf(0.99), 10 GiB memcg, 4.5 GiB WiredTiger cache (anon), data on NVMe, no swap", build: ycsb_b, default_scale: 1.0 / 64.0 },
        Builtin { name: "chrome-node", description: "seed 000/004: 32 memcgs without limits x 4 Node.js server / Chrome client pairs, servers touch a random 512 MiB buffer per request, zram", build: chrome_node, default_scale: 1.0 / 4096.0 },
        Builtin { name: "file-anon-mix", description: "seed 000: file+anon OOM reproducer, 16 GiB memcg, 8 GiB file mmap'd by one reader per CPU, 128 rounds of 14 GiB anon writes, no swap", build: file_anon_mix, default_scale: 1.0 / 1024.0 },
        Builtin { name: "dd-throttle", description: "seed 000: a dd-like 1 MiB buffered sequential writer of a file 8x its 1 GiB memcg limit, NVMe, no swap", build: dd_throttle, default_scale: 1.0 / 16.0 },
        Builtin { name: "mysql-ro", description: "seed 000: sysbench oltp_read_only, 48 threads, 24 GiB InnoDB buffer pool (anon) in a 2 GiB memcg, zram", build: mysql_ro, default_scale: 1.0 / 128.0 },
        Builtin { name: "fio-mmap", description: "seed 000: fio randread, mmap engine, 16 jobs x 3 GiB files on a ramdisk, 10 GiB memcg", build: fio_mmap, default_scale: 1.0 / 128.0 },
        Builtin { name: "kernel-build", description: "seed 000: make -j96 as 2400 short-lived compile processes, 3 GiB memcg, zram", build: kernel_build, default_scale: 1.0 / 64.0 },
        Builtin { name: "android-launch", description: "seed 003: 16 GiB phone + 16 GiB zram, 23 apps and the camera cold-started one after another beside background services", build: android_launch, default_scale: 1.0 / 64.0 },
        Builtin { name: "fio-pmem", description: "seed 002: fio 4 KiB buffered randread, 40 jobs (1 per CPU) x 10 GiB files on pmem, 2x memory, uniform", build: fio_pmem, default_scale: 1.0 / 512.0 },
        Builtin { name: "kv-cache", description: "seed 002: memcached/redis-like store, 8 threads, data 2x memory (zram), 90% GET / 10% SET with an append log, uniform keys", build: kv_cache, default_scale: 1.0 / 256.0 },
    ]
}

/// `gib` GiB at `scale`, in pages (at least 1).
fn gib(g: f64, scale: f64) -> u64 {
    ((g * GIB * scale).round() as u64).max(1)
}

/// `mib` MiB at `scale`, in pages (at least 1).
fn mib(m: f64, scale: f64) -> u64 {
    gib(m / 1024.0, scale)
}

/// A count of operations at `scale` (at least 1).
fn count(n: f64, scale: f64) -> u64 {
    ((n * scale).round() as u64).max(1)
}

/// A machine of `nodes` nodes of `node_gib` GiB each (at least 256 pages per node).
fn machine(nodes: usize, node_gib: f64, cpus: u32, scale: f64) -> MachineConfig {
    let mut m = MachineConfig::simple(256);
    m.node_pages = vec![gib(node_gib, scale).max(256); nodes];
    m.cpus = cpus;
    scale_kernel_sizes(&mut m, scale);
    m
}

/// The kernel's own sizes that shrink with a scaled-down scenario's memory (docs/scenarios.md,
/// "Scale"): the per-CPU LRU batches, the scan budget's lock traffic, the memcg charge batch,
/// the PTE tables charged (not below scale 1) and the period of the memcg statistics' flush.
fn scale_kernel_sizes(m: &mut MachineConfig, scale: f64) {
    m.lru_batch_cap = lru_batch_cap(scale);
    m.lru_lock_scale_down = lru_lock_scale_down(scale);
    m.memcg_charge_batch_cap = memcg_charge_batch_cap(scale);
    m.charge_page_tables = scale >= 1.0;
    m.memcg_stats_flush_ns = memcg_stats_flush_ns(scale);
}

/// The memcg statistics' flush period (`FLUSH_TIME`, 2 s), which 6.8+'s reclaim reads through
/// (docs/model.md §2, "Memcg statistics as reclaim reads them"), is a size in disguise: a
/// scaled scenario runs `scale` of the seed's operations at the seed's speed, so its run is
/// `scale` of the seed's and churns its memory 1/scale times as fast. Unscaled, a 1/64 run
/// would see a 64th of the seed's flushes (often none) and statistics 64 times as stale
/// relative to its memory. Scaled: `FLUSH_TIME × scale`, so that a flush falls after the same
/// share of the run and of the memory's churn as on the seed's machine.
fn memcg_stats_flush_ns(scale: f64) -> u64 {
    let t = crate::consts::FLUSH_TIME_NS;
    if scale < 1.0 {
        ((t as f64 * scale).round() as u64).max(1)
    } else {
        t
    }
}

/// The per-CPU LRU batches are a size too: a CPU's batch holds up to 31 folios whatever the
/// memory, so at scale 1/1024 the batches of 96 CPUs could hold 73% of a 16 MiB memcg off the
/// LRU (where the seed's 16 GiB has 0.07% there). Scaled, they keep their share of memory:
/// `FOLIO_BATCH_SIZE × scale` folios, at least one (which moves each folio to its list at once).
fn lru_batch_cap(scale: f64) -> Option<u32> {
    (scale < 1.0).then(|| ((crate::consts::FOLIO_BATCH_SIZE as f64 * scale).round() as u32).max(1))
}

/// The scan budget is a size too (`size >> priority` folios), and at small scale it cuts
/// isolation batches short that the seed's machine would have filled: their lock traffic is
/// taken as the unscaled batches' (`Machine::lru_lock_isolate`). 1/scale, rounded.
fn lru_lock_scale_down(scale: f64) -> Option<u32> {
    (scale < 1.0).then(|| (1.0 / scale).round().max(1.0) as u32)
}

/// The memcg charge batch is a size too, for the same reason: each CPU's charge stock may
/// hold up to `MEMCG_CHARGE_BATCH` (64) pages charged to a memcg and used by no folio, so at
/// scale 1/1024 the stocks of 96 CPUs could hold 6144 pages, more than a third of a 16 MiB
/// memcg. Scaled: `MEMCG_CHARGE_BATCH × scale` pages, at least one (which charges each page
/// alone and leaves the stocks empty).
fn memcg_charge_batch_cap(scale: f64) -> Option<u32> {
    (scale < 1.0)
        .then(|| ((crate::consts::MEMCG_CHARGE_BATCH as f64 * scale).round() as u32).max(1))
}

fn zram(size_pages: u64) -> SwapConfig {
    SwapConfig::Zram {
        size_pages,
        compress_ratio: 3.0,
    }
}

fn at(p: Phase, offset: u64) -> Phase {
    Phase { offset, ..p }
}

fn blocks(of: Pattern, block_pages: u64) -> Pattern {
    Pattern::Blocks {
        of: Box::new(of),
        block_pages,
    }
}

/// A process mapping each file of `mmaps` shared.
fn proc_(name: &str, memcg: &str, anon_pages: u64, mmaps: Vec<usize>) -> ProcSpec {
    ProcSpec {
        mmaps: mmaps.into_iter().map(|f| (f, vm::SHARED)).collect(),
        ..ProcSpec::new(name, memcg, anon_pages)
    }
}

fn script(setup: Vec<Step>, steps: Vec<Step>, rounds: u64) -> Stream {
    Stream::Script(Script {
        setup,
        steps,
        rounds,
    })
}

/// The setup of a fio job run with `--ramp_time=RAMP --runtime=RUNTIME --time_based` (both in
/// seconds at scale 1): the thread's requests begun in the ramp are not counted, and it ends
/// after both. The times are scaled with the files, so that each job reads its file as many
/// times over as the seed's did at the seed's rate.
fn fio_time_based(ramp_s: f64, runtime_s: f64, scale: f64) -> Vec<Step> {
    let ramp = (ramp_s * scale * SEC as f64) as u64;
    let runtime = (runtime_s * scale * SEC as f64) as u64;
    vec![Step::RunFor(ramp + runtime), Step::Ramp(ramp)]
}

fn thread(proc: usize, cpu: u32, stream: Stream) -> ThreadSpec {
    ThreadSpec { proc, cpu, stream }
}

/// `ycsb-b` (seeds 000, 001): MongoDB under YCSB workloadb.
///
/// Scale 1: a 48-core/96-thread machine with 2 nodes of 64 GiB; memcg `/mongo` with
/// memory.max 10 GiB (the Docker container); one process `mongod`; the collection is a 20 GiB
/// file on NVMe (20M records of YCSB's default 10 x 100 B fields) in 32 KiB leaves
/// (WiredTiger's `leaf_page_max`), read through the kernel's readahead: since WiredTiger 2.9
/// `__posix_open_file` (src/os_posix/os_fs.c) advises POSIX_FADV_RANDOM only for a table
/// created with `access_pattern_hint=random` (`__wt_block_open`), and MongoDB creates its
/// collections with the default `access_pattern_hint=none` (their `creationString` in
/// `db.collection.stats()`; before 2.9 every data file was advised random, "Disable
/// read-ahead on trees"); a 100 MB journal file (WiredTiger's `log=(file_max)`); no swap; 32
/// client threads run 6M operations together (6M/32 each, scaled).
///
/// WiredTiger's cache (`workload/appcache.rs`): 4.5 GiB of mongod's anon memory in 32 KiB
/// slots (the seed's cache size / the leaf size), shared by the threads. One operation (a
/// request) looks up its record's leaf (5% updates). The record comes from YCSB's `zipfian`
/// request distribution, the scrambled one ([`Pattern::YcsbZipfian`]: Zipf 0.99 over 10^10
/// ranks hashed onto the 20M records), and the records lie in the collection in insertion
/// order, about 30 to a leaf, so a leaf's popularity is the sum of 30 scattered records'
/// (much flatter than a Zipf over the leaves): a hit reads (an update writes) the slot's pages; a miss first evicts the least
/// recently used leaf if the cache is at `eviction_target` (80%), writing it with `pwrite` if
/// dirty, then reads the leaf with one 32 KiB `pread` into a free slot; an update beyond
/// `eviction_dirty_target` (5% of the slots dirty) writes and evicts the oldest dirty leaf, and
/// appends 100 B (the updated field, YCSB's `fieldlength`) to the journal. Then 20 us of CPU
/// (query processing; an assumption, the seed gives none). A checkpoint thread writes every
/// dirty leaf every 60 s (`storage.syncPeriodSecs`) and a journal thread writes the journal's
/// new pages every 100 ms (`storage.journal.commitIntervalMs`); both intervals are times of
/// the seed's run and get `scale` times their length, as time-based runs do (the run's
/// operations and the cache shrink with the scale while an operation's costs do not), so the
/// run keeps the seed's checkpoints and commits per operation. The cache starts empty (the
/// seed does not say whether mongod was restarted after loading).
///
/// Left out: compression, internal (B-tree) pages, the in-memory representation of leaves
/// (larger than on disk), WiredTiger's block manager (copy-on-write: a written leaf goes to
/// a new place in the file; here it overwrites its own), fsync (the model has none), the
/// eviction worker threads (see `workload/appcache.rs`).
pub fn ycsb_b(scale: f64) -> Scenario {
    use super::appcache::{
        wiredtiger as wt, AppCacheSpec, AppCacheStep, AppCacheWork, EvictionTargets, LogSpec,
    };
    let threads = 32u32;
    let mut mc = machine(2, 64.0, 96, scale);
    mc.memcgs = vec![MemcgConfig::new("/mongo").with_max(gib(10.0, scale))];
    let leaf = wt::LEAF_PAGE_MAX_BYTES / 4096;
    let slots = (gib(4.5, scale) / leaf).max(1);
    let leaves = (gib(20.0, scale) / leaf).max(1);
    let records = count(YCSB_B_RECORDS as f64, scale).max(leaves);
    let journal = mib(wt::LOG_FILE_MAX_BYTES as f64 / (1024.0 * 1024.0), scale);
    let spec = AppCacheSpec {
        id: 0,
        slots,
        block_pages: leaf,
        anon_offset: 0,
        data_file: 0,
        blocks: leaves,
        eviction: EvictionTargets::WIREDTIGER,
        log: Some(LogSpec {
            file: 1,
            pages: journal,
            bytes_per_update: YCSB_FIELD_LENGTH_BYTES,
        }),
    };
    let cache_step = |work| {
        Step::AppCache(AppCacheStep {
            spec: spec.clone(),
            work,
        })
    };
    let rounds = count(6_000_000.0 / threads as f64, scale);
    let mut ts: Vec<ThreadSpec> = (0..threads)
        .map(|i| {
            thread(
                0,
                i * 3 % 96,
                script(
                    vec![],
                    vec![
                        Step::OpBegin,
                        cache_step(AppCacheWork::Op {
                            keys: Pattern::YcsbZipfian {
                                records,
                                pages: leaves,
                            },
                            write_pct: 5,
                        }),
                        Step::Think(20 * US),
                        Step::OpEnd,
                    ],
                    rounds,
                ),
            )
        })
        .collect();
    let scaled = |ns: u64| ((ns as f64 * scale).round() as u64).max(1);
    for (cpu, interval, work) in [
        (1, wt::CHECKPOINT_INTERVAL_NS, AppCacheWork::Checkpoint),
        (2, wt::JOURNAL_COMMIT_INTERVAL_NS, AppCacheWork::LogCommit),
    ] {
        let steps = vec![Step::Sleep(scaled(interval)), cache_step(work)];
        ts.push(thread(
            0,
            cpu,
            Stream::Daemon {
                stream: Box::new(script(vec![], steps, u64::MAX)),
            },
        ));
    }
    Scenario {
        name: "ycsb-b".into(),
        description: "MongoDB YCSB workloadb (seed 000)".into(),
        machine: mc,
        files: vec![
            FileSpec::new("collection", leaves * leaf),
            FileSpec::new("journal", journal),
        ],
        procs: vec![proc_("mongod", "/mongo", slots * leaf, vec![])],
        threads: ts,
    }
}

/// The seed's `recordcount` (seed 000: "recordcount:20000000").
const YCSB_B_RECORDS: u64 = 20_000_000;

/// YCSB's `fieldlength` default (100 B): an update of workloadb writes one field
/// (`writeallfields=false`), and its journal record is taken to be that field.
const YCSB_FIELD_LENGTH_BYTES: u64 = 100;

/// The pairs per memcg of `chrome-node`, one per NUMA node.
pub const CHROME_PAIRS_PER_MEMCG: usize = 4;
/// The memcgs of `chrome-node`.
pub const CHROME_MEMCGS: usize = 32;
/// Iterations per `chrome-node` client.
pub const CHROME_ITERATIONS: u64 = 2000;

/// `chrome-node` (seeds 000, 004; spec series-2026.md E1): Yu Zhao's Chrome + Node.js test.
///
/// Scale 1 (Chen Ridong's layout, the one with 4 pairs per memcg: spec workloads.md's 128 GiB
/// with 256 GiB of zram cannot hold 128 servers of 8 GiB): 4 nodes of 256 GiB (1 TiB), 128
/// CPUs, zram of 512 GiB (his two 256 GB swap files); 32 memcgs `/memcg0..31` without limits,
/// so pressure is global; in each, 4 pairs (pair N on the CPUs of node N) of a Node.js server
/// `server-M-N` and a headless Chrome client `client-M-N`: 128 pairs. A server holds 16
/// buffers of 512 MiB (8 GiB; up to 1 TiB in all), allocated lazily as Node's zero-filled
/// buffers are (a page exists once written); per request it picks a random buffer and writes
/// every page of it (`Pattern::Blocks` over 16 buffers). A client starts 60 s after the
/// servers; per iteration (the timed request) it sends the request and waits for the server
/// (two barriers per pair), then allocates 5 MiB and writes every page of it (the
/// BigInt64Array), which is freed again (munmap, as the garbage collector would). Each client
/// runs 2000 iterations (the seeds ran 2 h or 24 h; a time-based run costs too much here,
/// see docs/scenarios.md): throughput is `requests.per_sec`, and the requests' latency buckets ([0,1), [1,2), [2,4) ... s in
/// `requests.buckets_s`; a request does `scale` times the seed's work, so see `buckets_us` at
/// small scales) and Jain's index over the clients' and memcgs' request rates are in
/// `RunResult::requests`.
///
/// Left out: Chrome's and Node's own memory (renderer, V8 heap, binaries and page cache), the
/// HTTP round trip, the exception path (bucket 128 plus a 1 s sleep: a client whose server
/// was OOM-killed passes its barriers at once); NUMA binding only decides where pages are
/// allocated first.
pub fn chrome_node(scale: f64) -> Scenario {
    let nodes = CHROME_PAIRS_PER_MEMCG;
    let cpus = 128u32;
    let mut mc = machine(nodes, 256.0, cpus, scale);
    mc.swap = zram(gib(512.0, scale));
    mc.memcgs = (0..CHROME_MEMCGS)
        .map(|m| MemcgConfig::new(&format!("/memcg{m}")))
        .collect();
    let buf = mib(512.0, scale);
    let server_anon = 16 * buf;
    let alloc = mib(5.0, scale);
    let iterations = CHROME_ITERATIONS;
    let client_delay = (60.0 * scale * SEC as f64) as u64;
    let mut procs = Vec::new();
    let mut threads = Vec::new();
    for m in 0..CHROME_MEMCGS {
        for n in 0..nodes {
            let pair = (m * nodes + n) as u16;
            let (req, resp) = (2 * pair, 2 * pair + 1);
            let cpu = (n as u32) * (cpus / nodes as u32) + m as u32 % (cpus / nodes as u32);
            let memcg = format!("/memcg{m}");
            procs.push(proc_(
                &format!("server-{m}-{n}"),
                &memcg,
                server_anon,
                vec![],
            ));
            procs.push(proc_(&format!("client-{m}-{n}"), &memcg, alloc, vec![]));
            let server = script(
                vec![],
                vec![
                    Step::Barrier {
                        group: req,
                        parties: 2,
                    },
                    Step::Phase(Phase::new(
                        blocks(Pattern::Uniform { pages: 16 }, buf),
                        Target::Anon,
                        100,
                        buf,
                    )),
                    Step::Barrier {
                        group: resp,
                        parties: 2,
                    },
                ],
                iterations,
            );
            let client = script(
                vec![],
                vec![
                    Step::OpBegin,
                    Step::Barrier {
                        group: req,
                        parties: 2,
                    },
                    Step::Barrier {
                        group: resp,
                        parties: 2,
                    },
                    Step::Phase(Phase::new(
                        Pattern::Sequential { pages: alloc },
                        Target::Anon,
                        100,
                        alloc,
                    )),
                    Step::MunmapAnon {
                        start: 0,
                        len: alloc,
                    },
                    Step::OpEnd,
                ],
                iterations,
            );
            let sp = procs.len() - 2;
            threads.push(thread(sp, cpu, server));
            threads.push(thread(
                sp + 1,
                cpu,
                Stream::Delayed {
                    delay_ns: client_delay,
                    stream: Box::new(client),
                },
            ));
        }
    }
    Scenario {
        name: "chrome-node".into(),
        description: "Chrome + Node.js, 32 memcgs x 4 pairs (seeds 000, 004)".into(),
        machine: mc,
        files: vec![],
        procs,
        threads,
    }
}

/// `file-anon-mix` (seed 000; spec series-2026.md E2): the emm-test-project
/// `file-anon-mix-pressure` reproducer as the cover letter ran it, built like the micro
/// `file-anon-mix-mini`.
///
/// Scale 1: the series' test machine (2 nodes of 64 GiB, 96 CPUs); memcg `/mix` with
/// memory.max 16 GiB; an 8 GiB file on a ramdisk (the reproducer suggests a pmem/ramdisk
/// ext4) mapped MAP_SHARED by one reader process per CPU (96), each reading one byte of every
/// page front to back, then pausing 120 ms, forever; after a 2 s head start (the seed waits
/// for every reader's first pass) one process with one writer thread per CPU (96) runs 128
/// rounds: each thread writes its slice of a 14 GiB anon region, the threads join (a barrier),
/// each unmaps its slice, sleeps 1 s. No swap. Rounds completed are `marks` / 96 (each writer
/// marks its rounds; `threads[..96].marks`), OOM kills `oom_kills`.
///
/// Left out: the file's creation and the drop of caches (the file starts uncached), mmap
/// failure paths; the head start is a fixed time.
pub fn file_anon_mix(scale: f64) -> Scenario {
    let mut s = file_anon_mix_build(FileAnonMix {
        limit: gib(16.0, scale),
        node_pages: vec![gib(64.0, scale).max(256); 2],
        cpus: 96,
        rounds: 128,
        warmup_ns: 2 * SEC,
    });
    scale_kernel_sizes(&mut s.machine, scale);
    s.name = "file-anon-mix".into();
    s.description = "file+anon mix OOM reproducer (seed 000)".into();
    s
}

/// `dd-throttle` (seed 000, "reproduced using dd and cgroup limit"): one dd writing a file
/// much larger than its memcg's limit.
///
/// Scale 1 (the seed gives no sizes; these are assumptions): the series' test machine (2 nodes
/// of 64 GiB, 96 CPUs), NVMe, ext4, no swap; memcg `/dd` with memory.max 1 GiB; one process
/// writes an 8 GiB file front to back with buffered write() in 1 MiB blocks (`dd bs=1M`; each
/// block is a request). Write throughput is `requests.per_sec` MiB/s; time throttled is
/// vmstat `dirty_throttle_ns` (balance_dirty_pages) and `throttle_ns` (reclaim_throttle);
/// OOM kills `oom_kills`.
///
/// Left out: fsync at the end, the file system's journal and block allocation.
pub fn dd_throttle(scale: f64) -> Scenario {
    let mut mc = machine(2, 64.0, 96, scale);
    mc.memcgs = vec![MemcgConfig::new("/dd").with_max(gib(1.0, scale))];
    let bs = 256u64;
    let size = gib(8.0, scale);
    let rounds = (size / bs).max(1);
    Scenario {
        name: "dd-throttle".into(),
        description: "dd into a small memcg (seed 000)".into(),
        machine: mc,
        files: vec![FileSpec::new("out", rounds * bs)],
        procs: vec![proc_("dd", "/dd", 0, vec![])],
        threads: vec![thread(
            0,
            0,
            script(
                vec![],
                vec![
                    Step::OpBegin,
                    Step::Phase(Phase::new(
                        Pattern::Sequential { pages: rounds * bs },
                        Target::fd(0),
                        100,
                        bs,
                    )),
                    Step::OpEnd,
                ],
                rounds,
            ),
        )],
    }
}

/// `mysql-ro` (seeds 000, 001): sysbench oltp_read_only against MySQL.
///
/// Scale 1: the series' test machine (2 nodes of 64 GiB, 96 CPUs), NVMe, zram of 32 GiB (size
/// not given); memcg `/mysql` with memory.max 2 GiB; `mysqld` with an InnoDB buffer pool of
/// 24.3 GiB (anon; innodb_buffer_pool_size=26106127360) of which the data uses 21.6 GiB; the
/// data is one 21.6 GiB file of 48 tables x 2M rows (`--tables=48 --table-size=2000000`,
/// 000:140-141) of ~235 B with index, table after table, read through the page cache
/// (innodb_flush_method=fsync, the default). 48 threads: each first loads one table (reads
/// its file slice in 16 KiB page reads, InnoDB's default `innodb_page_size`, each one read()
/// request of 4 pages; writes its pool slice, so the pool holds the tables in key order),
/// then runs transactions (requests) as sysbench 1.0's oltp_read_only with its defaults:
/// - 10 point selects: a table drawn uniformly, a key from sysbench's default `special`
///   distribution ([`Pattern::Special`]; the seed's command sets no `--rand-type`), its
///   16 KiB leaf page (4 pool pages);
/// - 4 range selects (simple, sum, order, distinct) of 100 rows each: a table and a first
///   key as above, 6 consecutive pool pages (100 rows of ~235 B);
/// - 1.2 ms of CPU ([`MYSQL_RO_CPU_PER_TRANSACTION_NS`]).
///
/// 600 s x ~17000 tps = 10.2M transactions (scaled).
///
/// Left out: SQL execution beyond its CPU time, the B-tree's root and internal pages (0.1%
/// of the data, touched by every query: always resident), InnoDB's LRU and read-ahead, the
/// redo log; sysbench draws one table for all 10 point selects, the model one per select.
pub fn mysql_ro(scale: f64) -> Scenario {
    let threads = 48u32;
    let mut mc = machine(2, 64.0, 96, scale);
    mc.swap = zram(gib(32.0, scale));
    mc.memcgs = vec![MemcgConfig::new("/mysql").with_max(gib(2.0, scale))];
    let pool = gib(24.3, scale);
    // Whole tables of whole 16 KiB pages and 6-page ranges.
    let table = (gib(21.6, scale).min(pool) / threads as u64 / 12).max(1) * 12;
    let data = table * threads as u64;
    let rounds = count(10_200_000.0 / threads as f64, scale);
    let keys = |block_pages: u64| Pattern::Blocks {
        of: Box::new(Pattern::Tables {
            tables: threads as u64,
            of: Box::new(Pattern::Special {
                pages: table / block_pages,
            }),
        }),
        block_pages,
    };
    let ts = (0..threads)
        .map(|i| {
            let off = i as u64 * table;
            thread(
                0,
                i * 2 % 96,
                script(
                    vec![
                        Step::Phase(at(
                            Phase::new(
                                Pattern::Sequential { pages: table },
                                Target::fd(0),
                                0,
                                table,
                            )
                            .requests(4),
                            off,
                        )),
                        Step::Phase(at(
                            Phase::new(
                                Pattern::Sequential { pages: table },
                                Target::Anon,
                                100,
                                table,
                            ),
                            off,
                        )),
                    ],
                    vec![
                        Step::OpBegin,
                        Step::Phase(Phase::new(keys(4), Target::Anon, 0, 10 * 4)),
                        Step::Phase(Phase::new(keys(6), Target::Anon, 0, 4 * 6)),
                        Step::Think(MYSQL_RO_CPU_PER_TRANSACTION_NS),
                        Step::OpEnd,
                    ],
                    rounds,
                ),
            )
        })
        .collect();
    Scenario {
        name: "mysql-ro".into(),
        description: "sysbench oltp_read_only, buffer pool in a small memcg (seed 000)".into(),
        machine: mc,
        files: vec![FileSpec::new("sbtest", data)],
        procs: vec![proc_("mysqld", "/mysql", pool, vec![])],
        threads: ts,
    }
}

/// CPU time of one sysbench oltp_read_only transaction, MySQL and the sysbench client on one
/// host (the seed's command names no `--mysql-host`): 1.18-1.21 ms measured by Mark
/// Callaghan (github.com/mdcallag/mytools, bench/arc/nov25.sb.mysql/dop40: vmstat us+sy per
/// query x 16 queries per transaction, MySQL 8.0.44 and 8.4.7, 40 clients, EPYC 9454P);
/// 1.57-1.60 ms on a 2-socket Xeon Silver 4214R (dec25.sb.socket.my). docs/scenarios.md.
pub const MYSQL_RO_CPU_PER_TRANSACTION_NS: u64 = 1_200 * US;

/// fio's `--ramp_time` in seed 000's fio-mmap command line (1 min), in seconds at scale 1.
pub const FIO_MMAP_RAMP_TIME_S: f64 = 60.0;
/// fio's `--runtime` in seed 000's fio-mmap command line (5 min), in seconds at scale 1.
pub const FIO_MMAP_RUNTIME_S: f64 = 300.0;

/// `fio-mmap` (seeds 000, 001): fio randread with the mmap engine on a ramdisk.
///
/// Scale 1: the series' test machine (2 nodes of 64 GiB, 96 CPUs); the files on a 64 GiB
/// ramdisk (brd: 2 us per request); no swap (not mentioned); memcg `/fio` with memory.max
/// 10 GiB; 16 jobs, each a process mapping its own 3 GiB file (MAP_SHARED) and reading
/// random 4 KiB pages (`--norandommap`, uniform), time-based as fio ran them, all jobs side by
/// side from the start: the seed's 1 min ramp, whose reads are not counted, then its 5 min
/// runtime, both times the scale (each read a request; MB/s = `requests.per_sec` x 4096 /
/// 1e6). Until stop 39 the jobs read counts (2 file sizes of ramp, 10 timed) and ended apart,
/// and in the last milliseconds the jobs still reading had the memcg to themselves.
///
/// fio's mmap engine madvises the mapping of a random job MADV_RANDOM (its `fadvise_hint`
/// option, on by default; engines/mmap.c), so there is no read-around, and from v6.12 neither
/// `folio_referenced` nor MGLRU's walk counts references through it (`vma_has_recency`);
/// fault-around still maps cached neighbours.
///
/// Left out: fio's memcpy of the 4 KiB (its CPU cost is the per-access cost).
pub fn fio_mmap(scale: f64) -> Scenario {
    let jobs = 16usize;
    let mut mc = machine(2, 64.0, 96, scale);
    mc.file_device = DeviceProfile::ramdisk();
    mc.memcgs = vec![MemcgConfig::new("/fio").with_max(gib(10.0, scale))];
    let size = gib(3.0, scale);
    let ts = (0..jobs)
        .map(|j| {
            let uniform = Pattern::Uniform { pages: size };
            thread(
                j,
                j as u32 * 6 % 96,
                script(
                    // `--ramp_time=1m --runtime=5m --time_based` (seed 000 line 157).
                    fio_time_based(FIO_MMAP_RAMP_TIME_S, FIO_MMAP_RUNTIME_S, scale),
                    vec![
                        Step::OpBegin,
                        Step::Phase(Phase::new(uniform, Target::mmap(j), 0, 1)),
                        Step::OpEnd,
                    ],
                    u64::MAX,
                ),
            )
        })
        .collect();
    Scenario {
        name: "fio-mmap".into(),
        description: "fio randread, mmap engine, ramdisk, 10 GiB memcg (seed 000)".into(),
        machine: mc,
        files: (0..jobs)
            .map(|j| FileSpec::new(&format!("test.{j}.img"), size))
            .collect(),
        procs: (0..jobs)
            .map(|j| ProcSpec {
                // fio's mmap engine madvises a random job's mapping MADV_RANDOM
                // (`fadvise_hint`, on by default).
                mmaps: vec![(j, vm::SHARED | vm::RAND_READ)],
                ..ProcSpec::new(&format!("fio{j}"), "/fio", 0)
            })
            .collect(),
        threads: ts,
    }
}

/// Compile jobs of `kernel-build`.
pub const KBUILD_JOBS: usize = 2400;
/// `make -j`.
pub const KBUILD_PARALLEL: usize = 96;
/// The barrier the first `make -j` jobs wait at for the tree's untar (the later jobs' barrier
/// groups are their own index, from KBUILD_PARALLEL on).
const KBUILD_UNTAR_BARRIER: u16 = 0;

/// `kernel-build` (seeds 000, 001): `make -j96` of defconfig, sources on tmpfs, in a 3 GiB
/// memcg with zram.
///
/// Scale 1: the series' test machine (2 nodes of 64 GiB, 96 CPUs), zram of 32 GiB (size not
/// given); memcg `/build` with memory.max 3 GiB. The kernel tree is on tmpfs (seed 000:
/// "kernel source on tmpfs", "on top of tmpfs"; the objects are built in the tree, so they
/// are tmpfs pages too): the header tree, the sources and the objects are tmpfs files, whose
/// pages sit on the anon LRU and are swapped to zram under pressure, never written back; the
/// compiler binary stays a regular file on the (ramdisk) root file system. First a process
/// `untar` in `/build` writes the header tree and the sources (one write() per page; the
/// tree is charged to `/build`, as when it is unpacked in the build's memcg, which the seed
/// does not say), then the build starts: 2400 compile jobs (about defconfig's
/// translation units), 96 at a time: job j starts when job j-96 has exited (make's `wait4`
/// returns once `do_exit` has run `exit_mm`, whose `exit_mmap` frees the job's memory, and then
/// `exit_notify`: the older job's barrier step comes after its `Exit`, never reached, and its
/// end releases the barrier). Each job is a process
/// `cc-J` that maps the 32 MiB compiler binary (shared; touches 16 MiB of it), reads 8 MiB of
/// headers (Zipf 0.9 over a shared 256 MiB header tree, one page per read()) and its own
/// 48 KiB source (one read() of the whole file, as libcpp's `read_file_guts` reads
/// `st_size` bytes), builds a
/// 96 MiB heap (writes it, then touches it twice more, Zipf 0.9, 30% writes), writes a
/// 192 KiB object, and exits. Each job is a request (its duration); elapsed time is
/// `sim_time_ns`. The seed's "system time" is the jobs' kernel time, `cpu.sys_ns` (faults,
/// allocation, direct reclaim, compression: the model's kernel work; kswapd's is
/// `cpu.kswapd_ns`, which `time make` does not count).
///
/// The untar's time is in `sim_time_ns` and its kernel time in `cpu.sys_ns` (about the same
/// under every policy: the tree fits in the memcg, nothing is reclaimed while it is written).
///
/// Left out: make's own processes, the link steps, the dependency order, user CPU time
/// (compilation is the per-access cost only), swap readahead of tmpfs pages (6.1's
/// `shmem_swapin` reads a `page-cluster` window even from zram; the model reads one page, as
/// it does for anon: docs/model.md §2, "tmpfs").
pub fn kernel_build(scale: f64) -> Scenario {
    let mut mc = machine(2, 64.0, 96, scale);
    mc.file_device = DeviceProfile::ramdisk();
    mc.swap = zram(gib(32.0, scale));
    mc.memcgs = vec![MemcgConfig::new("/build").with_max(gib(3.0, scale))];
    let cc1 = mib(32.0, scale);
    let headers = mib(256.0, scale);
    let src = mib(48.0 / 1024.0, scale);
    let obj = mib(192.0 / 1024.0, scale);
    let heap = mib(96.0, scale);
    let sources = src * KBUILD_JOBS as u64;
    let files = vec![
        FileSpec::new("cc1", cc1),
        FileSpec::tmpfs("include", headers),
        FileSpec::tmpfs("sources", sources),
        FileSpec::tmpfs("objects", obj * KBUILD_JOBS as u64),
    ];
    let mut procs = Vec::new();
    let mut threads = Vec::new();
    for j in 0..KBUILD_JOBS {
        procs.push(proc_(&format!("cc-{j}"), "/build", heap, vec![0]));
        let mut setup = Vec::new();
        if j < KBUILD_PARALLEL {
            setup.push(Step::Barrier {
                group: KBUILD_UNTAR_BARRIER,
                parties: KBUILD_PARALLEL as u16 + 1,
            });
        } else {
            setup.push(Step::Barrier {
                group: j as u16,
                parties: 2,
            });
        }
        let mut steps = vec![
            Step::OpBegin,
            Step::Phase(Phase::new(
                Pattern::Sequential { pages: cc1 },
                Target::mmap(0),
                0,
                cc1 / 2,
            )),
            Step::Phase(Phase::new(
                Pattern::Zipf {
                    pages: headers,
                    s: 0.9,
                },
                Target::fd(1),
                0,
                mib(8.0, scale),
            )),
            Step::Phase(at(
                Phase::new(Pattern::Sequential { pages: src }, Target::fd(2), 0, src).requests(src),
                j as u64 * src,
            )),
            Step::Phase(Phase::new(
                Pattern::Sequential { pages: heap },
                Target::Anon,
                100,
                heap,
            )),
            Step::Phase(Phase::new(
                Pattern::Zipf {
                    pages: heap,
                    s: 0.9,
                },
                Target::Anon,
                30,
                2 * heap,
            )),
            Step::Phase(at(
                Phase::new(Pattern::Sequential { pages: obj }, Target::fd(3), 100, obj),
                j as u64 * obj,
            )),
            Step::OpEnd,
            Step::Exit,
        ];
        if j + KBUILD_PARALLEL < KBUILD_JOBS {
            steps.push(Step::Barrier {
                group: (j + KBUILD_PARALLEL) as u16,
                parties: 2,
            });
        }
        threads.push(thread(
            j,
            (j % KBUILD_PARALLEL) as u32,
            script(setup, steps, 1),
        ));
    }
    procs.push(proc_("untar", "/build", 0, vec![]));
    let untar = vec![
        Step::Phase(Phase::new(
            Pattern::Sequential { pages: headers },
            Target::fd(1),
            100,
            headers,
        )),
        Step::Phase(Phase::new(
            Pattern::Sequential { pages: sources },
            Target::fd(2),
            100,
            sources,
        )),
        // The build starts once tar has exited (its end releases the barrier).
        Step::Exit,
        Step::Barrier {
            group: KBUILD_UNTAR_BARRIER,
            parties: KBUILD_PARALLEL as u16 + 1,
        },
    ];
    threads.push(thread(KBUILD_JOBS, 0, script(vec![], untar, 1)));
    Scenario {
        name: "kernel-build".into(),
        description: "make -j96 defconfig in a 3 GiB memcg with zram (seed 000)".into(),
        machine: mc,
        files,
        procs,
        threads,
    }
}

/// Apps cold-started by `android-launch` (the last is the camera).
pub const ANDROID_APPS: usize = 24;

/// `android-launch` (seed 003): apps cold-started one after another on a phone.
///
/// Scale 1: 16 GiB of RAM (one node, 8 CPUs), zram of 16 GiB, UFS storage modelled as NVMe;
/// each app in its own memcg `/apps/appK` without limits (Android's per-app cgroups; reclaim
/// is global). Always running: `system` (3 GiB anon, 2 GiB of mapped libraries/framework;
/// touches 5% of each per second) and two background services, `navigation` (400 MiB anon,
/// 200 MiB mapped) and `assistant` (300 MiB anon, 150 MiB mapped), touching 10% per second.
/// Then 23 apps and finally the camera are cold-started in turn: an app's launch (the
/// request) maps its 160 MiB package (camera 250 MiB) and reads 40% of it in random 64 KiB
/// chunks, and writes a third of its 600 MiB heap (camera 800 MiB); then it is used briefly
/// (it writes its whole heap, then Zipf 0.9 over it, twice its size, 30% writes, and Zipf
/// over its package, once its size),
/// then 1 s later the next app starts. Used apps stay alive in the background (cached). Per-app
/// launch time: `threads[i].request_mean_ns` of the app threads (processes `app00`..`app22`,
/// `camera`); mean and P50/P90/P95 over the apps in `requests.latency`; direct reclaim time
/// and pages: vmstat `direct_reclaim_ns` and `pgsteal_direct`.
///
/// Left out: lmkd (no app is killed to free memory), the launcher between apps, ART's JIT
/// and GC, dmabuf/GPU memory, the camera's photo capture, the vendor hooks seed 003 suspects.
pub fn android_launch(scale: f64) -> Scenario {
    let mut mc = machine(1, 16.0, 8, scale);
    mc.swap = zram(gib(16.0, scale));
    let mut memcgs = vec![MemcgConfig::new("/apps")];
    let mut files = Vec::new();
    let mut procs = Vec::new();
    let mut threads = Vec::new();
    let tick = 100 * MS;
    // Background: (name, anon GiB, mapped GiB, share touched per second).
    for (name, anon_g, file_g, per_s) in [
        ("system", 3.0, 2.0, 0.05),
        ("navigation", 0.4, 0.2, 0.10),
        ("assistant", 0.3, 0.15, 0.10),
    ] {
        let (anon, fpages) = (gib(anon_g, scale), gib(file_g, scale));
        let f = files.len();
        files.push(FileSpec::new(&format!("{name}.so"), fpages));
        let p = procs.len();
        procs.push(proc_(name, "/", anon, vec![f]));
        let per_tick = |pages: u64| ((pages as f64 * per_s / 10.0).round() as u64).max(1);
        threads.push(thread(
            p,
            p as u32,
            script(
                vec![
                    Step::Phase(Phase::new(
                        Pattern::Sequential { pages: anon },
                        Target::Anon,
                        100,
                        anon,
                    )),
                    Step::Phase(Phase::new(
                        Pattern::Sequential { pages: fpages },
                        Target::mmap(f),
                        0,
                        fpages,
                    )),
                ],
                vec![],
                0,
            ),
        ));
        threads.push(thread(
            p,
            p as u32,
            Stream::Delayed {
                delay_ns: SEC,
                stream: Box::new(Stream::Background {
                    phases: vec![
                        Phase::new(
                            Pattern::Zipf {
                                pages: anon,
                                s: 0.9,
                            },
                            Target::Anon,
                            20,
                            per_tick(anon),
                        ),
                        Phase::new(
                            Pattern::Zipf {
                                pages: fpages,
                                s: 0.9,
                            },
                            Target::mmap(f),
                            0,
                            per_tick(fpages),
                        ),
                    ],
                    sleep_ns: tick,
                }),
            },
        ));
    }
    for k in 0..ANDROID_APPS {
        let camera = k + 1 == ANDROID_APPS;
        let name = if camera {
            "camera".to_string()
        } else {
            format!("app{k:02}")
        };
        let memcg = format!("/apps/{name}");
        memcgs.push(MemcgConfig::new(&memcg));
        let (pkg, heap) = if camera {
            (mib(250.0, scale), mib(800.0, scale))
        } else {
            (mib(160.0, scale), mib(600.0, scale))
        };
        let chunk = mib(0.0625, scale);
        let f = files.len();
        files.push(FileSpec::new(&format!("{name}.apk"), pkg));
        let p = procs.len();
        procs.push(proc_(&name, &memcg, heap, vec![f]));
        let mut setup = vec![Step::Sleep(2 * SEC)];
        if k > 0 {
            setup.push(Step::Barrier {
                group: k as u16,
                parties: 2,
            });
        }
        let read = (pkg * 2 / 5).max(chunk);
        let steps = vec![
            Step::OpBegin,
            Step::Phase(Phase::new(
                blocks(
                    Pattern::Uniform {
                        pages: (pkg / chunk).max(1),
                    },
                    chunk,
                ),
                Target::mmap(f),
                0,
                read,
            )),
            Step::Phase(Phase::new(
                Pattern::Sequential { pages: heap },
                Target::Anon,
                100,
                (heap / 3).max(1),
            )),
            Step::OpEnd,
            Step::Phase(Phase::new(
                Pattern::Sequential { pages: heap },
                Target::Anon,
                100,
                heap,
            )),
            Step::Phase(Phase::new(
                Pattern::Zipf {
                    pages: heap,
                    s: 0.9,
                },
                Target::Anon,
                30,
                2 * heap,
            )),
            Step::Phase(Phase::new(
                Pattern::Zipf { pages: pkg, s: 0.9 },
                Target::mmap(f),
                0,
                pkg,
            )),
            Step::Sleep(SEC),
            Step::Barrier {
                group: k as u16 + 1,
                parties: if camera { 1 } else { 2 },
            },
        ];
        threads.push(thread(p, (k % 8) as u32, script(setup, steps, 1)));
    }
    mc.memcgs = memcgs;
    Scenario {
        name: "android-launch".into(),
        description: "Android app cold starts under memory pressure (seed 003)".into(),
        machine: mc,
        files,
        procs,
        threads,
    }
}

/// fio's own user CPU per request of fio-pmem beyond the `cpu_access_ns` (100 ns) every
/// access is charged: fio's `usr_cpu` per request, 348-388 ns, running the seed's command
/// line (`--ioengine=io_uring --iodepth_batch_submit=32 --iodepth_batch_complete=32`, 4 KiB
/// buffered random reads) over a file the host has cached (`scripts/calibrate-fio.sh`,
/// 2026-11-27, medians of 5 runs at depths 32 and 64; docs/model.md §3, "fio's request").
pub const FIO_REQUEST_USER_NS: u64 = 270;

/// The kernel CPU per fio-pmem request beyond the `fd_syscall_ns` (1 µs) a read through a
/// file descriptor is charged: fio's `sys_cpu` per request in the same measurement,
/// 1,583-1,594 ns at depths 32 and 64 (io_uring's SQE and CQE handling, and a random page's
/// lookup and copy from lines no longer cached, where `fd_syscall_ns` was timed reading
/// sequentially). At depths 96 and 128 this host gives 3.2-3.4 µs: 384 KiB or more of fio's
/// buffers no longer fit its 512 KiB L2, where the seed's Xeon (DC Persistent Memory needs a
/// Cascade Lake or later, 1 MiB of L2 or more) holds the seed's 128 × 4 KiB.
pub const FIO_IO_URING_REQUEST_SYS_NS: u64 = 590;

/// How long seed 002's machine held a lruvec's `lru_lock` per folio its per-CPU batches added
/// to an LRU list: 225 ns, the mean of the six 5.15 (classical LRU) cells of its fio matrix
/// (195-254 ns; 213-318 ns in the MGLRU cells), the cycles of `__pagevec_lru_add` outside the
/// lock's spin per folio added (pgpgin / 4), from its own flame graphs
/// (github.com/zhaishuang1/MglruPerf; `scripts/seed002_profile.py`,
/// validation/seed002-fio-profile.md). fio-pmem's machine (`CostProfile::lru_lock_hold_ns`);
/// the default, 8 ns, was timed here with one CPU adding (docs/model.md §9, gap 39).
pub const SEED_002_LRU_ADD_HOLD_NS: u64 = 225;

/// The smallest scale at which fio-pmem's reclaimers may run inside each other's batches
/// (`--interleave auto`; docs/model.md §1, "When it is on"): 1/1024. Its memory is page cache
/// (files twice its size) and under `classic:6.1` the inactive file list ends its default run
/// (1/512, seed 1) at 57,020 pages (56,449 with the count-based jobs before stop 39), 58% of
/// the file LRU: an eighth of it, 7,127 pages, is the limit, and the 40 jobs and kswapd
/// holding a batch each isolate 1,312 pages, 18% (37% at 1/1024, 75% at 1/2048; seed 002's
/// machine: under 1%). The seed's 80-job cells
/// (`fio_pmem_with(.., 2)`) ended with 27,813 inactive pages at 1/512 and 2,592 isolated, 75%
/// (stop 38, count-based jobs):
/// under the limit (no run of theirs is throttled) but over half of it. 6.1's MGLRU
/// (`evict_folios`) does not check `too_many_isolated`.
pub const FIO_PMEM_INTERLEAVE_MIN_SCALE: f64 = 1.0 / 1024.0;

/// The smallest scale at which ycsb-b's reclaimers may run inside each other's batches: 1/16.
/// Its memcg holds WiredTiger's 4.5 GiB cache as anon, which it cannot swap, so reclaim takes
/// file folios; its classic:6.12 run at 1/64 (seed 1) ends with 16,234 inactive file pages,
/// 8,117 per node: an eighth is 1,015, and the 32 client threads' batches, counted on one
/// node, are 1,024 pages: 101% (50.4% at 1/32, 25% at 1/16).
pub const YCSB_B_INTERLEAVE_MIN_SCALE: f64 = 1.0 / 16.0;

/// The smallest scale at which the seed scenario `name` interleaves under `--interleave auto`,
/// where all its reclaimers' batches at once stay under half of `too_many_isolated`'s limit
/// (`micro::interleaves_faithfully`; docs/model.md §1, "When it is on", has every seed
/// scenario's arithmetic); the others interleave at scale 1 only. fio-mmap meets the criterion
/// at its default scale (40%) but stays off: its jobs convoy at the memcg limit when
/// interleaved, as the kernel's would, but at 1/128 only 6.x's MGLRU batches have their real
/// size (MAX_LRU_BATCH at any scale), while classic's and 7.x's are cut by the scaled scan
/// budget to a few folios, too short to convoy; the comparison would be uneven (docs/model.md
/// §1, "When it is on").
pub fn interleave_min_scale(name: &str) -> Option<f64> {
    match name {
        "fio-pmem" => Some(FIO_PMEM_INTERLEAVE_MIN_SCALE),
        "ycsb-b" => Some(YCSB_B_INTERLEAVE_MIN_SCALE),
        _ => None,
    }
}

/// fio-pmem's access distributions (`--random_distribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FioDist {
    /// `random`: fio's uniform draws, not hashed.
    Uniform,
    /// `zipf:0.8`, fio's generator and hash (`Pattern::FioZipf`).
    Zipf08,
    /// `normal:40`, as fio 3.20 and later draw it and hash it (`Pattern::FioNormal`).
    Normal40,
}

/// fio's `--ramp_time` in seed 002's command line (20 min), in seconds at scale 1.
pub const FIO_PMEM_RAMP_TIME_S: f64 = 1200.0;
/// fio's `--runtime` in seed 002's command line (10 min), in seconds at scale 1.
pub const FIO_PMEM_RUNTIME_S: f64 = 600.0;

/// `fio-pmem` (seed 002, Shuang Zhai's benchmark), uniform and 1 job per CPU.
pub fn fio_pmem(scale: f64) -> Scenario {
    fio_pmem_with(scale, FioDist::Uniform, 1)
}

/// `fio-pmem` with any cell of the seed's matrix: distribution and jobs per CPU (1 or 2).
///
/// Scale 1: one node of 192 GiB with 40 CPUs (fio was bound to one socket), the files on pmem
/// (`DeviceProfile::pmem`), swap on (size not given: 16 GiB on NVMe); 40 (or 80) jobs, each a
/// process reading its own 10 GiB (or 5 GiB) file: files total 400 GiB, ~2x memory. Each job
/// does buffered 4 KiB random reads (read(), the page cache; one-page requests, `bs=4k`) with
/// the chosen distribution, on a file it advised POSIX_FADV_RANDOM (fio's `fadvise_hint`
/// defaults to 1, which for `rw=randread` is POSIX_FADV_RANDOM: no readahead):
/// time-based as fio's `--time_based` jobs run, all side by side from the start: the seed's
/// 20 min ramp, whose requests are not counted, then its 10 min runtime, both times the
/// scale (each read a request; MiB/s = `requests.per_sec` / 256, p99 =
/// `requests.latency.p99_ns`). Scaling the times with the files keeps the passes over each
/// file the seed's at the seed's rate (about 12 in the runtime at 54k requests/s per job).
/// Until stop 39 each job read 2 file sizes of ramp, then 8 of timed reads, and the jobs
/// ended apart; the ramp's reads did not pay fio's and io_uring's CPU.
///
/// Each timed request also costs what fio and io_uring spend besides the page cache's
/// lookup and copy, measured with the seed's command line ([`FIO_REQUEST_USER_NS`],
/// [`FIO_IO_URING_REQUEST_SYS_NS`]); the ramp's reads do not, as its time is not measured.
///
/// io_uring issues each request (`Step::IoUringIssue`): 6.1 punts every read to an io-wq
/// worker, as the seed's 5.15 did (pmem has no QUEUE_FLAG_NOWAIT), and the job pays the punt
/// (`CostProfile::io_wq_punt_ns`) as kernel time; 6.12 and later read inline. The machine's
/// `lru_lock` holds per folio added are the seed's own ([`SEED_002_LRU_ADD_HOLD_NS`]).
///
/// Left out: the io-wq workers as threads of their own (the job's CPU runs its reads; with
/// every CPU busy, as in the seed, the CPU time is the same, but a worker that sleeps between
/// reads and one that does not pay the same punt), io_uring's queue depth of 128 (each job has
/// one read in flight: the pmem's bio completes in `pmem_submit_bio` on the reading CPU, so
/// the depth buys no overlap of CPU with I/O), the second, unused socket.
pub fn fio_pmem_with(scale: f64, dist: FioDist, jobs_per_cpu: u32) -> Scenario {
    let cpus = 40u32;
    let jpc = jobs_per_cpu.clamp(1, 2);
    let jobs = (cpus * jpc) as usize;
    let mut mc = machine(1, 192.0, cpus, scale);
    mc.file_device = DeviceProfile::pmem();
    mc.cost.lru_lock_hold_ns = SEED_002_LRU_ADD_HOLD_NS;
    mc.swap = SwapConfig::Device {
        size_pages: gib(16.0, scale),
        device: DeviceProfile::nvme(),
    };
    let size = gib(10.0 / jpc as f64, scale);
    // fio hashes the skewed draws over the seed's file (`nranges`: 10 or 5 GiB of 4 KiB
    // blocks), whatever the scale.
    let nranges = Some(gib(10.0 / jpc as f64, 1.0));
    let pattern = match dist {
        FioDist::Uniform => Pattern::Uniform { pages: size },
        FioDist::Zipf08 => Pattern::FioZipf {
            pages: size,
            theta: 0.8,
            nranges,
        },
        FioDist::Normal40 => Pattern::FioNormal {
            pages: size,
            dev_pct: 40,
            nranges,
        },
    };
    let ts = (0..jobs)
        .map(|j| {
            thread(
                j,
                j as u32 % cpus,
                script(
                    // `--ramp_time=20m --runtime=10m --time_based` (seed 002 line 476).
                    fio_time_based(FIO_PMEM_RAMP_TIME_S, FIO_PMEM_RUNTIME_S, scale),
                    vec![
                        Step::Think(FIO_REQUEST_USER_NS),
                        Step::OpBegin,
                        Step::Syscall(FIO_IO_URING_REQUEST_SYS_NS),
                        Step::IoUringIssue,
                        Step::Phase(Phase::new(pattern.clone(), Target::fd(j), 0, 1)),
                        Step::OpEnd,
                    ],
                    u64::MAX,
                ),
            )
        })
        .collect();
    Scenario {
        name: "fio-pmem".into(),
        description: format!(
            "fio buffered randread on pmem, {dist:?}, {jpc} job(s)/CPU (seed 002)"
        ),
        machine: mc,
        files: (0..jobs)
            .map(|j| FileSpec::new(&format!("randread.{j}"), size))
            .collect(),
        procs: (0..jobs)
            .map(|j| ProcSpec {
                fadvise_random: vec![j],
                ..proc_(&format!("fio{j}"), "/", 0, vec![])
            })
            .collect(),
        threads: ts,
    }
}

/// kv-cache's key distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDist {
    Sequential,
    Uniform,
    /// Gaussian around the middle of the key space, sd 10% of it (memtier's
    /// `--key-pattern=G:G` default deviation is range/6; an assumption).
    Gaussian,
}

/// `kv-cache` (seed 002: the Memcached and Redis reports), uniform keys.
pub fn kv_cache(scale: f64) -> Scenario {
    kv_cache_with(scale, KeyDist::Uniform)
}

/// `kv-cache` with a key distribution.
///
/// Scale 1 (the lab's reports are not in the seed; sizes are assumptions within its "data 2x
/// memory"): one node of 64 GiB, 16 CPUs, zram of 128 GiB (the swap device is not given;
/// with a 128 GiB swap partition on NVMe the model OOM-kills the server while it loads, see
/// docs/scenarios.md, "Gaps"); a server `kvd` with 8
/// worker threads and a 128 GiB store of 4 KiB values (anon), which the threads first load
/// (each its slice); an append-only log file of 16 GiB (Redis's AOF; written sequentially,
/// wrapping as a rewrite would). Requests: 9 GETs (read one value) then 1 SET (write one value
/// and append one page to the log), memtier's 1:10 ratio; 2 x the store's values in all.
///
/// Left out: the network, the hash table and slab allocator (values map 1:1 to pages), THP,
/// fsync of the log.
pub fn kv_cache_with(scale: f64, dist: KeyDist) -> Scenario {
    let workers = 8u32;
    let mut mc = machine(1, 64.0, 16, scale);
    mc.swap = zram(gib(128.0, scale));
    let store = gib(128.0, scale);
    let log = gib(16.0, scale);
    let slice = (store / workers as u64).max(1);
    let keys = match dist {
        KeyDist::Sequential => Pattern::Sequential { pages: store },
        KeyDist::Uniform => Pattern::Uniform { pages: store },
        KeyDist::Gaussian => Pattern::Normal {
            pages: store,
            sigma_pct: 10.0,
        },
    };
    let rounds = count(2.0 * 128.0 * GIB / 10.0 / workers as f64, scale);
    let ts = (0..workers)
        .map(|w| {
            let mut steps = Vec::new();
            for _ in 0..9 {
                steps.push(Step::OpBegin);
                steps.push(Step::Phase(Phase::new(keys.clone(), Target::Anon, 0, 1)));
                steps.push(Step::OpEnd);
            }
            steps.push(Step::OpBegin);
            steps.push(Step::Phase(Phase::new(keys.clone(), Target::Anon, 100, 1)));
            steps.push(Step::Phase(Phase::new(
                Pattern::Sequential { pages: log },
                Target::fd(0),
                100,
                1,
            )));
            steps.push(Step::OpEnd);
            thread(
                0,
                w,
                script(
                    vec![Step::Phase(at(
                        Phase::new(
                            Pattern::Sequential { pages: slice },
                            Target::Anon,
                            100,
                            slice,
                        ),
                        w as u64 * slice,
                    ))],
                    steps,
                    rounds,
                ),
            )
        })
        .collect();
    Scenario {
        name: "kv-cache".into(),
        description: format!("key-value store, data 2x memory, {dist:?} keys (seed 002)"),
        machine: mc,
        files: vec![FileSpec::new("appendonly.aof", log)],
        procs: vec![proc_("kvd", "/", store, vec![])],
        threads: ts,
    }
}
