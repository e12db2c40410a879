//! CPUs as a resource (`sched.rs`): tasks share CPUs, kswapd and the flusher take CPU time
//! from them, and every thread's time adds up to its life.

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::Kernel;
use reclaimlab::machine::mm::vm;
use reclaimlab::machine::{MachineConfig, MemcgConfig, SwapConfig};
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::pattern::Pattern;
use reclaimlab::workload::{
    micro, Action, FileSpec, Phase, ProcSpec, Scenario, Stream, Target, ThreadSpec,
};

const CLASSIC: PolicySpec = PolicySpec::classic(Kernel::V6_12);

fn go(scn: &Scenario, spec: PolicySpec) -> RunResult {
    run(
        scn,
        spec,
        &RunOptions {
            seed: 3,
            check_invariants: false,
            ..Default::default()
        },
    )
    .expect("run")
}

/// `threads` threads on `cpus` CPUs, each computing `steps` times for `ns` (user mode, no
/// memory touched).
fn compute(threads: u32, cpus: u32, steps: usize, ns: u64) -> Scenario {
    let mut m = MachineConfig::simple(4096);
    m.cpus = cpus;
    Scenario {
        name: "compute".into(),
        description: String::new(),
        machine: m,
        files: vec![],
        procs: vec![ProcSpec::new("p", "/", 0)],
        threads: (0..threads)
            .map(|_| ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(vec![Action::Think(ns); steps]),
            })
            .collect(),
    }
}

/// Each thread's user + sys + run-queue wait + iowait + throttled + sleep is its life.
fn assert_times_add_up(r: &RunResult, start_jitter: u64) {
    for (i, t) in r.threads.iter().enumerate() {
        let c = &t.cpu;
        let sum =
            c.user_ns + c.sys_ns + c.runqueue_wait_ns + c.iowait_ns + c.throttled_ns + c.sleep_ns;
        assert!(
            sum <= t.finish_ns && t.finish_ns - sum <= start_jitter + t.accesses,
            "thread {i}: times {c:?} sum {sum}, finished at {}",
            t.finish_ns
        );
    }
}

#[test]
fn tasks_on_one_cpu_share_it_and_wait_for_it() {
    // Four CPU-bound threads, 1 ms of work each in 100 us steps.
    let alone = go(&compute(4, 4, 10, 100_000), CLASSIC);
    let shared = go(&compute(4, 1, 10, 100_000), CLASSIC);
    let life = |r: &RunResult| r.threads.iter().map(|t| t.finish_ns).max().unwrap();
    // Spread over four CPUs the work takes 1 ms; on one CPU, 4 ms.
    assert!(life(&alone) < 1_200_000, "{}", life(&alone));
    assert!(
        (4_000_000..4_200_000).contains(&life(&shared)),
        "{}",
        life(&shared)
    );
    assert_eq!(alone.cpu.runqueue_wait_ns, 0);
    // On one CPU each thread waits for the other three's work: 3 ms each, 12 ms in all
    // (less what the start jitter overlaps).
    assert!(
        (11_000_000..=12_000_000).contains(&shared.cpu.runqueue_wait_ns),
        "{:?}",
        shared.cpu
    );
    assert_eq!(shared.cpu.user_ns, 4 * 1_000_000);
    assert!(shared.cpu.context_switches >= 3);
    assert_times_add_up(&shared, 100_000);
    assert_times_add_up(&alone, 100_000);
}

#[test]
fn a_waking_task_migrates_to_an_idle_cpu() {
    // Four threads all placed on CPU 0 of a 4-CPU machine: they spread out.
    let r = go(&compute(4, 4, 10, 100_000), CLASSIC);
    assert!(r.cpu.migrations >= 3, "{:?}", r.cpu);
    assert_eq!(r.cpu.runqueue_wait_ns, 0);
}

#[test]
fn cfs_and_eevdf_slices_set_how_long_a_task_keeps_its_cpu() {
    // Two CPU-bound threads on one CPU, 10 ms of work each in 10 us steps: with CFS (6.1,
    // one CPU: 6 ms latency, slices of 3 ms each) a thread waits in ~3 ms stretches; with
    // EEVDF (6.12: 0.75 ms base slice) in ~0.75 ms stretches. The total wait is the same.
    let mut cfs = compute(2, 1, 1000, 10_000);
    cfs.machine.kernel = Kernel::V6_1;
    let eevdf = compute(2, 1, 1000, 10_000);
    let a = go(&cfs, PolicySpec::classic(Kernel::V6_1));
    let b = go(&eevdf, CLASSIC);
    let switches = |r: &RunResult| r.cpu.context_switches;
    // 20 ms of work: ~6 switches with 3 ms slices, ~26 with 0.75 ms ones.
    assert!((5..=8).contains(&switches(&a)), "CFS {:?}", a.cpu);
    assert!((24..=28).contains(&switches(&b)), "EEVDF {:?}", b.cpu);
    let wait = |r: &RunResult| r.cpu.runqueue_wait_ns as i64;
    assert!(
        (wait(&a) - wait(&b)).abs() < 1_000_000,
        "{:?} {:?}",
        a.cpu,
        b.cpu
    );
}

/// One thread writing anon memory past memory (kswapd reclaims to zram), on `cpus` CPUs.
fn anon_writer(cpus: u32) -> Scenario {
    let mut m = MachineConfig::simple(16384);
    m.cpus = cpus;
    m.swap = SwapConfig::Zram {
        size_pages: 16384,
        compress_ratio: 3.0,
    };
    Scenario {
        name: "anon-writer".into(),
        description: String::new(),
        machine: m,
        files: vec![],
        procs: vec![ProcSpec::new("p", "/", 24576)],
        threads: vec![ThreadSpec {
            proc: 0,
            cpu: 0,
            stream: Stream::Phases(vec![Phase::new(
                Pattern::Sequential { pages: 24576 },
                Target::Anon,
                100,
                3 * 24576,
            )]),
        }],
    }
}

#[test]
fn kswapd_takes_cpu_from_the_only_task_but_not_from_an_idle_cpu() {
    let one = go(&anon_writer(1), CLASSIC);
    let two = go(&anon_writer(2), CLASSIC);
    assert!(one.cpu.kswapd_ns > 1_000_000, "{:?}", one.cpu);
    assert!(two.cpu.kswapd_ns > 1_000_000, "{:?}", two.cpu);
    // On one CPU the writer waits while kswapd runs; with a second CPU kswapd runs there.
    assert!(
        one.cpu.runqueue_wait_ns * 2 > one.cpu.kswapd_ns,
        "{:?}",
        one.cpu
    );
    assert_eq!(two.cpu.runqueue_wait_ns, 0, "{:?}", two.cpu);
    assert!(one.sim_time_ns > two.sim_time_ns);
    // Reclaim, faults and compression are kernel time; the access itself user time.
    assert!(one.cpu.sys_ns > one.cpu.user_ns, "{:?}", one.cpu);
    assert_eq!(one.cpu.user_ns, 3 * 24576 * 100);
    assert_times_add_up(&one, 100_000);
}

#[test]
fn device_waits_are_iowait_and_leave_the_cpu_to_others() {
    // A reader of a file bigger than memory (every miss waits 80 us for NVMe) beside a
    // CPU-bound thread, on one CPU: the CPU-bound thread runs while the reader waits.
    let mut m = MachineConfig::simple(4096);
    m.cpus = 1;
    let reads: Vec<Action> = (0..2000u64)
        .map(|i| Action::Access {
            page: PageRef::File {
                file: 0,
                page: (i * 7919) % 16384,
            },
            op: Op::Read,
            via: Via::Fd,
            req: 1,
        })
        .collect();
    let scn = Scenario {
        name: "io-and-cpu".into(),
        description: String::new(),
        machine: m,
        files: vec![FileSpec::new("f", 16384)],
        procs: vec![ProcSpec::new("p", "/", 0)],
        threads: vec![
            ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(reads),
            },
            ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(vec![Action::Think(10_000); 10_000]),
            },
        ],
    };
    let r = go(&scn, CLASSIC);
    let (reader, hog) = (&r.threads[0].cpu, &r.threads[1].cpu);
    assert!(reader.iowait_ns > 100_000_000, "{reader:?}");
    // 100 ms of compute finishes while the reader's 2000 reads wait (~160 ms of I/O).
    assert!(
        r.threads[1].finish_ns < r.threads[0].finish_ns,
        "{:?}",
        r.threads
    );
    // The woken reader preempts the hog at its next step: its waits stay short.
    assert!(
        reader.runqueue_wait_ns < 2000 * 20_000,
        "{reader:?} {hog:?}"
    );
    assert_times_add_up(&r, 100_000);
}

#[test]
fn cpus_option_remaps_threads_and_keeps_runs_deterministic() {
    let mut scn = micro::builtin("swap-storm", 1.0).expect("scenario");
    scn.set_cpus(1).expect("1 CPU");
    assert!(scn.threads.iter().all(|t| t.cpu == 0));
    let a = go(&scn, CLASSIC);
    let b = go(&scn, CLASSIC);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let four = go(&micro::builtin("swap-storm", 1.0).unwrap(), CLASSIC);
    assert_eq!(four.cpu.cpus, 4);
    assert_eq!(a.cpu.cpus, 1);
    // Four threads on one CPU wait for it; on four they do not wait for each other.
    assert!(a.cpu.runqueue_wait_ns > four.cpu.runqueue_wait_ns);
    assert!(scn.clone().set_cpus(0).is_err());
    assert!(scn.set_cpus(reclaimlab::consts::MAX_CPUS + 1).is_err());
}

/// `k` threads on `k` CPUs (and one more, for kswapd) writing their own slices of one
/// process's anon memory, 2x memory in all, zram: they fault, fill their LRU batches and
/// reclaim in one lruvec.
fn contended_writers(k: u32) -> Scenario {
    let mut m = MachineConfig::simple(8192);
    m.cpus = k + 1;
    m.swap = SwapConfig::Zram {
        size_pages: 16384,
        compress_ratio: 3.0,
    };
    let slice = 16384 / k as u64;
    Scenario {
        name: "contended".into(),
        description: String::new(),
        machine: m,
        files: vec![],
        procs: vec![ProcSpec::new("p", "/", 16384)],
        threads: (0..k)
            .map(|c| ThreadSpec {
                proc: 0,
                cpu: c,
                stream: Stream::Phases(vec![Phase {
                    offset: c as u64 * slice,
                    ..Phase::new(
                        Pattern::Sequential { pages: slice },
                        Target::Anon,
                        100,
                        2 * 16384 / k as u64,
                    )
                }]),
            })
            .collect(),
    }
}

#[test]
fn lru_lock_waits_grow_with_the_number_of_contenders() {
    let wait = |k: u32| go(&contended_writers(k), CLASSIC).cpu.lru_lock_wait_ns;
    let (w1, w2, w4, w8) = (wait(1), wait(2), wait(4), wait(8));
    assert!(
        w1 < w2 && w2 < w4 && w4 < w8,
        "lru_lock waits: 1 {w1}, 2 {w2}, 4 {w4}, 8 {w8}"
    );
    // Spinning is kernel time of the tasks (or kswapd).
    let r = go(&contended_writers(4), CLASSIC);
    assert!(r.cpu.sys_ns + r.cpu.kswapd_ns >= r.cpu.lru_lock_wait_ns);
}

/// A lruvec lock taken by one CPU after another's hold costs the cache lines' transfer
/// (`lru_lock_handoff_ns`): none on one CPU (the single writer's kswapd shares it), some with
/// four writers on four CPUs, and they are the new holder's kernel time: without the cost the
/// same run has less sys time and a less busy lock.
#[test]
fn lru_lock_handoffs_between_cpus_cost_kernel_time() {
    let mut one = contended_writers(1);
    one.machine.cpus = 1;
    assert_eq!(go(&one, CLASSIC).cpu.lru_lock_handoffs, 0);
    let four = contended_writers(4);
    let r = go(&four, CLASSIC);
    assert!(r.cpu.lru_lock_handoffs > 100, "{}", r.cpu.lru_lock_handoffs);
    let mut free = four.clone();
    free.machine.cost.lru_lock_handoff_ns = 0;
    let f = go(&free, CLASSIC);
    assert_eq!(f.cpu.lru_lock_handoffs, 0);
    assert!(
        r.cpu.sys_ns + r.cpu.kswapd_ns > f.cpu.sys_ns + f.cpu.kswapd_ns,
        "sys with handoffs {} + {}, without {} + {}",
        r.cpu.sys_ns,
        r.cpu.kswapd_ns,
        f.cpu.sys_ns,
        f.cpu.kswapd_ns
    );
    // The lock is busier by the handoffs (the waits depend on how the writers interleave,
    // which the longer holds change: here isolation waits less with them).
    let (busy, busy_free) = (
        r.cpu.lru_lock_hold_by_site.total(),
        f.cpu.lru_lock_hold_by_site.total(),
    );
    assert!(
        busy > busy_free,
        "held {busy} ns with handoffs, {busy_free} without"
    );
}

/// The lock's waits and holds are reported by the kernel path that took it, and add up: the
/// sites' waits are `lru_lock_wait_ns`; writers under a memcg limit take the lock in their
/// lru_add batches, isolations, putbacks and (classic 6.x) `lru_note_cost`; the holds are at
/// least the folios' minimum and include every handoff.
#[test]
fn lru_lock_waits_and_holds_are_reported_by_site_and_add_up() {
    let r = go(&contended_writers(4), CLASSIC);
    let (w, h) = (r.cpu.lru_lock_wait_by_site, r.cpu.lru_lock_hold_by_site);
    assert_eq!(w.total(), r.cpu.lru_lock_wait_ns);
    assert!(w.total() > 0, "four writers contend");
    for (site, ns) in [
        ("batch", h.batch_ns),
        ("isolate", h.isolate_ns),
        ("putback", h.putback_ns),
        ("note_cost", h.note_cost_ns),
    ] {
        assert!(ns > 0, "{site} holds the lock");
    }
    let cost = reclaimlab::machine::config::CostProfile::default();
    assert!(h.total() >= r.cpu.lru_lock_handoffs * cost.lru_lock_handoff_ns);
}

/// Tasks run on other CPUs while a task is in reclaim with a batch isolated
/// (`machine::Nest`, `MachineConfig::interleave`): swap-storm's four threads reclaim directly
/// on four CPUs, so some of their steps run nested; on one CPU none can (the reclaimer holds
/// it), nor with interleaving off. Every invariant
/// holds after every event, and the same seed gives the same result.
#[test]
fn other_cpus_run_tasks_while_a_reclaimer_has_a_batch_isolated() {
    for spec in ["classic:6.12", "mglru:6.12", "mglru:7.2"] {
        let spec: PolicySpec = spec.parse().expect("policy");
        let mut scn = micro::builtin("swap-storm", 0.125).expect("scenario");
        let checked = |scn: &Scenario| {
            run(
                scn,
                spec,
                &RunOptions {
                    seed: 5,
                    check_invariants: true,
                    ..Default::default()
                },
            )
            .expect("run")
        };
        scn.machine.interleave = true;
        scn.set_cpus(4).expect("cpus");
        let four = checked(&scn);
        assert!(four.cpu.nested_steps > 0, "{spec}: {:?}", four.cpu);
        assert_eq!(four, checked(&scn), "{spec}: deterministic");
        assert_times_add_up(&four, 100_000);
        // A task queued behind a reclaimer's CPU while it ran nested starts no earlier than
        // it became runnable: no access ends before it began.
        assert!(four.latency.max_ns < four.sim_time_ns, "{:?}", four.latency);
        scn.set_cpus(1).expect("cpus");
        assert_eq!(checked(&scn).cpu.nested_steps, 0, "{spec}");
        scn.set_cpus(4).expect("cpus");
        scn.machine.interleave = false;
        assert_eq!(checked(&scn).cpu.nested_steps, 0, "{spec}: off by default");
    }
}

/// VMSCAN_THROTTLE_ISOLATED sleeps end at `wake_throttle_isolated`, not always at the timeout:
/// with interleaving, kernel-build's 96 classic direct reclaimers find each other's batches
/// isolated (`too_many_isolated`). When each sleep lasted its whole HZ/50, most of the tasks
/// could be asleep at once and the memcg hardly filled: some seeds reclaimed a tenth of what
/// the same build reclaims without interleaving. Woken when a check finds the isolations put
/// back, every seed reclaims about as much as without interleaving, and the time asleep is the
/// tasks' throttled time.
#[test]
fn isolated_throttle_sleepers_wake_when_the_isolations_are_put_back() {
    let scale = 1.0 / 128.0;
    let pgsteal = |scn: &Scenario, seed: u64| {
        let r = run(
            scn,
            CLASSIC,
            &RunOptions {
                seed,
                ..Default::default()
            },
        )
        .expect("run");
        // The sleeps are the tasks' throttled time (no dirty or memory.high throttling here).
        let throttled: u64 = r.threads.iter().map(|t| t.cpu.throttled_ns).sum();
        assert_eq!(throttled, r.vmstat["throttle_ns"], "seed {seed}");
        r.vmstat["pgsteal_anon"] + r.vmstat["pgsteal_file"]
    };
    let mut scn = reclaimlab::workload::seeds::kernel_build(scale);
    let plain = pgsteal(&scn, 1);
    scn.machine.interleave = true;
    for seed in 1..=4 {
        let nested = pgsteal(&scn, seed);
        assert!(
            nested * 4 >= plain * 3 && nested * 4 <= plain * 5,
            "seed {seed}: pgsteal {nested} with interleaving, {plain} without"
        );
    }
}

/// While kswapd is suspended in its `shrink_folio_list` with other tasks running beside it
/// (`--interleave`), kernel-thread work that cannot run there — kswapd's own next run — does
/// not stop the nested task events: chrome-node's first reclaim at 16 ms used to spin in the
/// nested loop forever. The first 20 ms run, with tasks nested in kswapd's batches.
#[test]
fn nested_tasks_go_on_when_kswapds_own_next_run_is_due() {
    let mut scn = reclaimlab::workload::seeds::chrome_node(1.0 / 4096.0);
    scn.machine.interleave = true;
    let r = run(
        &scn,
        CLASSIC,
        &RunOptions {
            seed: 1,
            max_sim_ns: Some(20_000_000),
            ..Default::default()
        },
    )
    .expect("run");
    assert!(r.vmstat["pgsteal_kswapd"] > 0, "kswapd reclaimed");
    assert!(r.cpu.nested_steps > 0, "{:?}", r.cpu);
}

/// Readers of MADV_RANDOM shared mappings (`vm::RAND_READ`), reader i mapping its own file of
/// `file_pages` in the memcg `memcg_of[i]`, on CPU i mod `cpus`, reading `accesses` of its
/// pages at random, on a 16384-page machine: limit reclaim only.
fn rand_read_mmap_readers(
    cpus: u32,
    memcgs: Vec<MemcgConfig>,
    memcg_of: &[&str],
    file_pages: u64,
    accesses: u64,
) -> Scenario {
    let mut m = MachineConfig::simple(16384);
    m.cpus = cpus;
    m.memcgs = memcgs;
    let n = memcg_of.len();
    Scenario {
        name: "rand-read-mmap-readers".into(),
        description: String::new(),
        machine: m,
        files: (0..n)
            .map(|i| FileSpec::new(&format!("f{i}"), file_pages))
            .collect(),
        procs: (0..n)
            .map(|i| ProcSpec {
                mmaps: vec![(i, vm::SHARED | vm::RAND_READ)],
                ..ProcSpec::new(&format!("p{i}"), memcg_of[i], 0)
            })
            .collect(),
        threads: (0..n)
            .map(|i| ThreadSpec {
                proc: i,
                cpu: i as u32 % cpus,
                stream: Stream::Phases(vec![Phase::new(
                    Pattern::Uniform { pages: file_pages },
                    Target::mmap(i),
                    0,
                    accesses,
                )]),
            })
            .collect(),
    }
}

/// One reader of a 4096-page file, alone on one CPU, in a memcg of 1024 pages, so the run's
/// order does not depend on its costs.
fn random_mmap_reader() -> Scenario {
    let mut scn = rand_read_mmap_readers(
        1,
        vec![MemcgConfig::new("/r").with_max(1024)],
        &["/r"],
        4096,
        16384,
    );
    // MGLRU's page-table walks are shared by time (joined walks): free, so that only the
    // cost under test moves the sys time.
    scn.machine.cost.pte_walk_ns = 0;
    scn.machine.cost.pte_young_ns = 0;
    scn
}

/// `reclaim_per_folio_ns` (measured as MADV_PAGEOUT of a mapped clean page, its isolation
/// included) is charged once per folio that `shrink_folio_list` takes, under either policy:
/// MGLRU's `scan_folios` does not charge it again for the folios it isolates (it did, which
/// made MGLRU's eviction cost twice classic's). The sys time a run loses with the cost at 0
/// is exactly the cost times pgsteal.
#[test]
fn an_evicted_folio_costs_reclaim_per_folio_once_under_either_policy() {
    for spec in ["classic:6.12", "mglru:6.1", "mglru:6.12", "mglru:7.2"] {
        let spec: PolicySpec = spec.parse().expect("policy");
        let scn = random_mmap_reader();
        let mut free = scn.clone();
        free.machine.cost.reclaim_per_folio_ns = 0;
        let (r, f) = (go(&scn, spec), go(&free, spec));
        let (scan, steal) = (r.vmstat["pgscan_file"], r.vmstat["pgsteal_file"]);
        assert!(steal > 10_000, "{spec}: pgsteal_file {steal}");
        assert_eq!(scan, f.vmstat["pgscan_file"], "{spec}");
        assert_eq!(steal, f.vmstat["pgsteal_file"], "{spec}");
        // 6.1 counts the young PTE of a VM_RAND_READ mapping (its folios are activated);
        // later kernels skip the VMA (`invalid_folio_referenced_vma`).
        if spec.to_string() != "mglru:6.1" {
            assert_eq!(scan, steal, "{spec}: every scanned folio evicted");
        }
        // pgscan counts the folios isolated for shrink_folio_list. Lock waits depend on how
        // far apart the holds fall, which the cost moves.
        let work = |r: &RunResult| r.cpu.sys_ns + r.cpu.kswapd_ns - r.cpu.lru_lock_wait_ns;
        let per_folio = scn.machine.cost.reclaim_per_folio_ns;
        assert_eq!(work(&r) - work(&f), per_folio * scan, "{spec}");
    }
}

/// Two readers on two CPUs, each in its own memcg (/a, /b) with a limit, each in its own
/// lruvecs.
fn sibling_memcg_readers() -> Scenario {
    let memcgs = vec![
        MemcgConfig::new("/a").with_max(512),
        MemcgConfig::new("/b").with_max(512),
    ];
    rand_read_mmap_readers(2, memcgs, &["/a", "/b"], 2048, 8192)
}

/// 6.1's and 6.12's `lru_note_cost` locks every ancestor's lruvec after each reclaim batch,
/// so classic reclaimers of two sibling memcgs meet at the root's lruvec lock (its cache
/// lines move between their CPUs); MGLRU's eviction notes no cost, and the two share no lock.
/// Here every batch reclaims all it scans without writing (a cost of 0), and 7.x's
/// `lru_note_cost_unlock_irq` returns before the ancestors: the classical 7.x reclaimers meet
/// nowhere either (`note-cost-skips-zero`).
#[test]
fn classic_reclaimers_of_sibling_memcgs_meet_at_the_roots_lruvec_lock() {
    let scn = sibling_memcg_readers();
    for k in ["classic:6.1", "classic:6.12"] {
        let r = go(&scn, k.parse().expect("policy"));
        assert!(r.vmstat["pgsteal_file"] > 5000, "{k}");
        assert!(
            r.cpu.lru_lock_handoffs > 50,
            "{k}: {}",
            r.cpu.lru_lock_handoffs
        );
    }
    for k in [
        "classic:7.1",
        "classic:7.2",
        "classic:6.12+note-cost-skips-zero",
    ] {
        let r = go(&scn, k.parse().expect("policy"));
        assert!(r.vmstat["pgsteal_file"] > 5000, "{k}");
        assert_eq!(r.cpu.lru_lock_handoffs, 0, "{k}");
    }
    // MGLRU without its core bit runs its own kernel's classical path (7.2's, not 6.12's).
    for (k, classic_handoffs) in [("mglru:6.12", 207), ("mglru:7.2", 0)] {
        let PolicySpec::Mglru(mut c) = k.parse().expect("policy") else {
            unreachable!()
        };
        c.enabled = 0;
        let off = go(&scn, PolicySpec::Mglru(c));
        assert_eq!(
            off.cpu.lru_lock_handoffs, classic_handoffs,
            "{k} with enabled 0"
        );
    }
    let r = go(&scn, "mglru:7.2".parse().expect("policy"));
    assert!(r.vmstat["pgsteal_file"] > 5000);
    assert_eq!(r.cpu.lru_lock_handoffs, 0);
}

/// Every miss of a MADV_RANDOM file mapping is a major fault, counted once, also when the new
/// folio's charge yields (limit reclaim preempted between priorities, `cond_resched`) and the
/// fault finishes after the other tasks ran: four readers share two CPUs and one memcg.
#[test]
fn a_file_fault_whose_charge_yields_is_counted_once() {
    let memcgs = vec![MemcgConfig::new("/r").with_max(512)];
    let scn = rand_read_mmap_readers(2, memcgs, &["/r"; 4], 1024, 6000);
    for k in ["classic:6.12", "mglru:7.2"] {
        let r = go(&scn, k.parse().expect("policy"));
        assert!(
            r.preemptions > 0,
            "{k}: no fault yielded, the test tests nothing"
        );
        assert!(r.misses > 10_000, "{k}");
        assert_eq!(r.vmstat["pgmajfault"], r.misses, "{k}");
    }
}
