//! The event engine's concurrency: kernel threads (flusher, I/O completion, kswapd) progress
//! while a task reclaims, tasks preempted inside the kernel resume where they stopped, and
//! cgroup writeback's memcg dirty domain throttles a writer in a small memcg.

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::{Kernel, INIT_BW_PAGES, NS_PER_JIFFY};
use reclaimlab::machine::kthreads::KthreadWork;
use reclaimlab::machine::writeback::wb_max_pause;
use reclaimlab::machine::{Ctx, Machine, MachineConfig, MemcgConfig, SwapConfig, Vm};
use reclaimlab::metrics::RunResult;
use reclaimlab::policy::classic::Classic;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::pattern::Pattern;
use reclaimlab::workload::{Phase, ProcSpec, Scenario, Script, Step, Stream, Target, ThreadSpec};

fn go(scn: &Scenario, spec: &str, check: bool) -> RunResult {
    run(
        scn,
        spec.parse().expect("policy"),
        &RunOptions {
            seed: 3,
            check_invariants: check,
            ..Default::default()
        },
    )
    .expect("run")
}

/// One process in `memcg` writing `pages` pages of a file once, sequentially, through write().
fn file_writer(mem_pages: u64, memcg: Option<u64>, pages: u64) -> Scenario {
    let mut machine = MachineConfig::simple(mem_pages);
    let path = if let Some(max) = memcg {
        let mut mc = MemcgConfig::new("/w");
        mc.max = max;
        machine.memcgs.push(mc);
        "/w"
    } else {
        "/"
    };
    Scenario {
        name: "writer".into(),
        description: String::new(),
        machine,
        files: vec![reclaimlab::workload::FileSpec {
            name: "out".into(),
            pages,
            tmpfs: false,
        }],
        procs: vec![ProcSpec {
            name: "dd".into(),
            memcg: path.into(),
            anon_pages: 0,
            mmaps: vec![],
            fadvise_random: Vec::new(),
        }],
        threads: vec![ThreadSpec {
            proc: 0,
            cpu: 0,
            stream: Stream::Phases(vec![Phase::new(
                Pattern::Sequential { pages },
                Target::fd(0),
                100,
                pages,
            )]),
        }],
    }
}

/// A memcg full of dirty page cache: limit reclaim can only succeed once the writeback it asked
/// for (WB_REASON_VMSCAN) has completed, so the flusher and the I/O completions must run while
/// the charging task retries (no event engine here: only `Machine::catch_up` can run them).
#[test]
fn limit_reclaim_lets_the_writeback_it_started_complete() {
    let mut cfg = MachineConfig::simple(16384);
    cfg.dirty_ratio = 100;
    cfg.dirty_background_ratio = 99;
    let mut mc = MemcgConfig::new("/w");
    mc.max = 1024;
    cfg.memcgs.push(mc);
    let mut m = Machine::new(cfg).unwrap();
    let mut pol = Classic::new(&m);
    let memcg = m.memcg_by_path("/w").unwrap();
    let pid = m.create_process("dd", memcg, 0);
    let file = m.create_file("out", 2048);
    let mut t = 0;
    for page in 0..1100 {
        m.ctx = Ctx {
            now: t,
            pid,
            ..Ctx::default()
        };
        let out = m.access(
            &mut pol,
            pid,
            PageRef::File { file, page },
            Op::Write,
            Via::Fd,
        );
        assert!(
            out.is_some(),
            "write {page} failed: OOM with dirty pages to write"
        );
        t = m.now() + 1;
    }
    assert_eq!(m.vm.get(Vm::OomKill), 0);
    assert!(m.vm.get(Vm::Pgpgout) > 0);
}

/// The same through the engine: a writer of 4x its memcg's limit is never OOM-killed.
#[test]
fn limit_reclaim_waits_for_the_writeback_it_started() {
    let mut scn = file_writer(16384, Some(1024), 4096);
    scn.machine.dirty_ratio = 100;
    scn.machine.dirty_background_ratio = 99;
    for spec in ["classic:6.12", "mglru:6.12", "mglru:7.2"] {
        let r = go(&scn, spec, false);
        assert_eq!(r.oom_kills, 0, "{spec}");
        assert_eq!(r.accesses, 4096, "{spec}");
        assert!(
            r.vmstat["pgpgout"] >= 4 * (4096 - 1024),
            "{spec}: {}",
            r.vmstat["pgpgout"]
        );
        assert!(r.memcgs[1].events["max"] > 0, "{spec}: no limit reclaim");
    }
}

/// cgroup writeback: a writer of 23 MiB in an 8 MiB memcg of a 256 MiB machine is throttled by its
/// memcg's dirty domain (the global thresholds are far above its dirty pages), and the
/// flusher writes in the background before the memcg fills. In the root memcg the same
/// writer stays below the global freerun ceiling and is never paused.
#[test]
fn a_small_memcg_has_its_own_dirty_limits() {
    // The memcg statistics flushed every millisecond: 6.12's memcg domain reads its dirty
    // pages as of the last flush (docs/model.md §4), and this run is shorter than FLUSH_TIME.
    let mut scn = file_writer(65536, Some(2048), 6000);
    scn.machine.memcg_stats_flush_ns = 1_000_000;
    let in_memcg = go(&scn, "classic:6.12", false);
    let in_root = go(&file_writer(65536, None, 6000), "classic:6.12", false);
    assert!(
        in_memcg.vmstat["dirty_throttle_ns"] > 0,
        "the memcg domain did not throttle"
    );
    assert_eq!(in_root.vmstat["dirty_throttle_ns"], 0);
    assert_eq!(in_memcg.oom_kills, 0);
    assert!(in_memcg.vmstat["pgpgout"] > 0);
    assert_eq!(
        in_root.vmstat["pgpgout"], 0,
        "6000 pages stay below bg_thresh"
    );
}

/// Tasks that fault anon pages in a memcg too small for all of them reclaim concurrently:
/// they are preempted between reclaim priorities and charge retries, and each resumed access
/// finishes exactly once, its fault counted once.
#[test]
fn preempted_accesses_resume_and_count_once() {
    let per = 2048u64;
    let mut machine = MachineConfig::simple(16384);
    machine.cpus = 4;
    machine.swap = SwapConfig::Zram {
        size_pages: 16384,
        compress_ratio: 3.0,
    };
    let mut mc = MemcgConfig::new("/a");
    mc.max = 4096;
    machine.memcgs.push(mc);
    let scn = Scenario {
        name: "anon-writers".into(),
        description: String::new(),
        machine,
        files: vec![],
        procs: (0..4)
            .map(|i| ProcSpec {
                name: format!("w{i}"),
                memcg: "/a".into(),
                anon_pages: per,
                mmaps: vec![],
                fadvise_random: Vec::new(),
            })
            .collect(),
        threads: (0..4)
            .map(|i| ThreadSpec {
                proc: i,
                cpu: i as u32,
                stream: Stream::Phases(vec![Phase::new(
                    Pattern::Sequential { pages: per },
                    Target::Anon,
                    100,
                    per,
                )]),
            })
            .collect(),
    };
    for spec in ["classic:6.12", "mglru:7.1", "mglru:7.2"] {
        let r = go(&scn, spec, true);
        assert!(r.preemptions > 0, "{spec}: nobody was preempted");
        assert_eq!(r.oom_kills, 0, "{spec}");
        assert_eq!(r.accesses, 4 * per, "{spec}");
        assert_eq!(
            r.vmstat["pgfault"],
            4 * per,
            "{spec}: a resumed fault counted twice"
        );
        assert_eq!(
            r.vmstat["pgalloc_normal"],
            4 * per,
            "{spec}: a resumed allocation counted twice"
        );
        let again = go(&scn, spec, false);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            serde_json::to_string(&again).unwrap(),
            "{spec}: not deterministic"
        );
    }
}

/// `Machine::preempt_point`: a task past the next event yields and runs nothing; otherwise the
/// kernel threads due by its time run.
#[test]
fn preempt_point_yields_or_lets_kernel_threads_catch_up() {
    let mut m = Machine::new(MachineConfig::simple(4096)).unwrap();
    let mut pol = Classic::new(&m);
    m.queue_flusher(500);
    m.wb.flusher_queued = true;
    m.ctx.now = 1000;
    m.ctx.may_yield = true;
    m.ctx.yield_at = 900;
    assert!(m.preempt_point(&mut pol));
    assert!(m.ctx.yielded);
    assert_eq!(
        m.next_kthread_time(),
        Some(500),
        "a yielding task runs nothing"
    );
    m.ctx.yielded = false;
    m.ctx.yield_at = 2000;
    assert!(!m.preempt_point(&mut pol));
    assert!(
        !m.flusher_wakeup_pending(),
        "the due flusher run did not happen"
    );
    assert!(
        m.kthreads
            .queued()
            .all(|(t, w)| t > 1000 && matches!(w, KthreadWork::Flusher(_))),
        "only the flusher's next periodic run is left"
    );
}

/// kswapd takes its time: with a task's event due before its clock, `balance_pgdat` stops
/// between two priorities and goes on in a later run (one `pageoutrun`), so tasks allocate
/// while it reclaims instead of after an instantaneous run.
#[test]
fn kswapd_is_preempted_between_priorities_and_goes_on() {
    let mut m = Machine::new(MachineConfig::simple(4096)).unwrap();
    let mut pol = Classic::new(&m);
    let pid = m.create_process("reader", 0, 0);
    let file = m.create_file("f", 8192);
    let kswapd_at = |m: &Machine| {
        m.kthreads
            .queued()
            .filter(|(_, w)| matches!(w, KthreadWork::Kswapd(0)))
            .map(|(t, _)| t)
            .min()
    };
    // Read until the free pages fall below the low watermark: kswapd is woken, not run.
    let mut t = 0;
    let mut page = 0;
    while kswapd_at(&m).is_none() {
        m.ctx = Ctx {
            now: t,
            pid,
            ..Ctx::default()
        };
        m.access(
            &mut pol,
            pid,
            PageRef::File { file, page },
            Op::Read,
            Via::Fd,
        )
        .expect("read");
        t = m.now() + 1;
        page += 1;
    }
    let first = kswapd_at(&m).unwrap();
    // A task event is due right away: kswapd runs one priority, then is preempted.
    assert!(m.run_next_kthread_work(&mut pol, first, first));
    let again = kswapd_at(&m).expect("kswapd goes on later");
    assert!(again > first, "kswapd resumes at its own clock");
    assert!(
        !m.pgdat_balanced(0),
        "one priority did not balance the node"
    );
    // With no task in the way it finishes, counting one balance_pgdat run.
    while let Some(at) = kswapd_at(&m) {
        m.run_next_kthread_work(&mut pol, at, u64::MAX);
        if m.pgdat_balanced(0) {
            break;
        }
    }
    assert!(m.pgdat_balanced(0));
    assert_eq!(m.vm.get(Vm::Pageoutrun), 1);
}

/// `balance_dirty_pages_ratelimited`: a task enters `balance_dirty_pages` only after it has
/// newly dirtied `nr_dirtied_pause` (32) pages, even when its memcg domain is over its dirty
/// threshold much earlier; rewriting a dirty page does not count.
#[test]
fn dirty_throttling_is_ratelimited_per_task() {
    let mut cfg = MachineConfig::simple(16384);
    let mut mc = MemcgConfig::new("/w");
    mc.max = 64;
    cfg.memcgs.push(mc);
    let mut m = Machine::new(cfg).unwrap();
    let mut pol = Classic::new(&m);
    let memcg = m.memcg_by_path("/w").unwrap();
    let pid = m.create_process("w", memcg, 0);
    let file = m.create_file("f", 64);
    let mut write = |m: &mut Machine, page: u64| {
        m.ctx = Ctx {
            now: m.now(),
            pid,
            ..Ctx::default()
        };
        m.access(
            &mut pol,
            pid,
            PageRef::File { file, page },
            Op::Write,
            Via::Fd,
        )
        .expect("write");
    };
    for page in 0..31 {
        write(&mut m, page);
    }
    for _ in 0..10 {
        write(&mut m, 0);
    }
    assert_eq!(
        m.vm.get(Vm::DirtyThrottleNs),
        0,
        "31 dirtied pages: no check yet"
    );
    // 6.12's memcg domain counts the dirty pages from the next statistics flush on
    // (docs/model.md §4): let it fall before the 32nd write.
    m.ctx.now = m.next_stats_flush();
    m.ctx.elapsed = 0;
    write(&mut m, 31);
    assert!(
        m.vm.get(Vm::DirtyThrottleNs) > 0,
        "the 32nd is checked and paused"
    );
    // For at most wb_max_pause of the memcg's 32 dirty pages: one jiffy, not MAX_PAUSE.
    let wb_dirty = 32;
    assert_eq!(wb_max_pause(wb_dirty, INIT_BW_PAGES), 1);
    assert!(
        m.vm.get(Vm::DirtyThrottleNs) <= NS_PER_JIFFY,
        "paused {} ns",
        m.vm.get(Vm::DirtyThrottleNs)
    );
    assert!(m.memcgs[memcg as usize].dirty_exceeded);
    assert_eq!(m.procs[pid as usize].nr_dirtied, 0);
}

/// Swap I/O counters per kernel: in 6.1 swapping to zram goes through `bdev_read_page` /
/// `bdev_write_page` (zram's `rw_page`) and counts only pswpin/pswpout; from 6.12 it goes
/// through `submit_bio`, which also counts pgpgin/pgpgout (4 KiB per page).
#[test]
fn zram_swap_io_counts_pgpg_from_6_12_only() {
    for (kernel, counted) in [(Kernel::V6_1, false), (Kernel::V6_12, true)] {
        let mut scn = reclaimlab::workload::micro::builtin("anon-only", 0.25).unwrap();
        scn.machine.kernel = kernel;
        let r = run(
            &scn,
            PolicySpec::classic(kernel),
            &RunOptions {
                seed: 1,
                ..Default::default()
            },
        )
        .unwrap();
        let (pswpin, pswpout) = (r.vmstat["pswpin"], r.vmstat["pswpout"]);
        assert!(pswpin > 0 && pswpout > 0, "{kernel}: the scenario swaps");
        if counted {
            assert_eq!(r.vmstat["pgpgin"], 4 * pswpin, "{kernel}");
            assert_eq!(r.vmstat["pgpgout"], 4 * pswpout, "{kernel}");
        } else {
            assert_eq!(
                (r.vmstat["pgpgin"], r.vmstat["pgpgout"]),
                (0, 0),
                "{kernel}"
            );
        }
    }
}

/// Frames belong to their node for good: a folio allocated from node 1's free list is a node-1
/// folio (its lruvec, `folio_nid`), and freeing it returns it to node 1. The invariant checker
/// verifies both after every event while a reader on each node's CPU cycles through files
/// larger than memory (before the fix every folio claimed node 0 and freed frames drifted to
/// node 0's free list).
#[test]
fn folios_stay_on_the_node_of_their_frame() {
    let mut machine = MachineConfig::simple(512);
    machine.node_pages = vec![512, 512];
    machine.cpus = 2;
    let file = |name: &str| reclaimlab::workload::FileSpec {
        name: name.into(),
        pages: 700,
        tmpfs: false,
    };
    let reader = |cpu: u32, f: usize| ThreadSpec {
        proc: cpu as usize,
        cpu,
        stream: Stream::Phases(vec![Phase::new(
            Pattern::Sequential { pages: 700 },
            Target::fd(f),
            0,
            2_100,
        )]),
    };
    let proc_ = |name: &str| ProcSpec {
        name: name.into(),
        memcg: "/".into(),
        anon_pages: 0,
        mmaps: vec![],
        fadvise_random: Vec::new(),
    };
    let scn = Scenario {
        name: "two-nodes".into(),
        description: String::new(),
        machine,
        files: vec![file("a"), file("b")],
        procs: vec![proc_("r0"), proc_("r1")],
        threads: vec![reader(0, 0), reader(1, 1)],
    };
    for spec in ["classic", "mglru:7.2"] {
        let r = go(&scn, spec, true);
        assert_eq!(r.accesses, 4_200, "{spec}");
        // Sequential reads are read ahead (hits); the pages read from the device say it.
        assert!(
            r.vmstat["pgpgin"] / 4 > 2_000,
            "{spec}: the files do not fit"
        );
    }
}

/// A process that writes `pages` anonymous pages, then (if `exit`) exits.
fn anon_writer_that_exits(pages: u64, exit: bool) -> Scenario {
    let mut scn = file_writer(4096, None, 1);
    scn.procs[0].anon_pages = pages;
    let mut steps = vec![Step::Phase(Phase::new(
        Pattern::Sequential { pages },
        Target::Anon,
        100,
        pages,
    ))];
    if exit {
        steps.push(Step::Exit);
    }
    scn.threads[0].stream = Stream::Script(Script {
        setup: vec![],
        steps,
        rounds: 1,
    });
    scn
}

/// `exit_mmap` takes the exiting task's kernel time: `zap_pte_range` over every page it maps,
/// then `free_pgtables` unlinking each VMA (here its one anonymous area); the thread finishes
/// when that is done.
#[test]
fn an_exit_takes_the_time_of_its_zap_and_unlinks() {
    let pages = 100;
    let stay = go(&anon_writer_that_exits(pages, false), "classic", true);
    let exit = go(&anon_writer_that_exits(pages, true), "classic", true);
    let cost = reclaimlab::machine::config::CostProfile::default();
    let exit_ns = pages * cost.zap_pte_ns + cost.vma_unlink_ns;
    assert_eq!(
        exit.threads[0].finish_ns,
        stay.threads[0].finish_ns + exit_ns
    );
    assert_eq!(exit.cpu.sys_ns, stay.cpu.sys_ns + exit_ns);
    assert_eq!(exit.accesses, stay.accesses);
}

/// `shrink_zones` walks the reclaimer's zonelist, its own node first: direct reclaim the
/// allocation's preferred node's (`__alloc_pages_direct_reclaim`), memcg reclaim the node of
/// the CPU it runs on (`try_to_free_mem_cgroup_pages`: `node_zonelist(numa_node_id(), ..)`).
/// Which node reclaim takes first is seen in which lruvec lock it takes first; before the
/// fix every reclaimer began with node 0.
#[test]
fn reclaim_starts_at_the_reclaimers_own_node() {
    use reclaimlab::machine::lruvec_index;
    use reclaimlab::machine::vmscan::{try_to_free_mem_cgroup_pages, try_to_free_pages};
    use reclaimlab::policy::mglru::{Mglru, MglruConfig};
    // The node whose lruvec lock reclaim took first, and the pages freed on each node.
    let first_node = |kernel: Kernel, classic: bool, preferred: Option<u8>, cpu: u32| {
        let mut cfg = MachineConfig::simple(4096);
        cfg.node_pages = vec![8192, 8192];
        cfg.cpus = 2;
        cfg.kernel = kernel;
        let mut m = Machine::new(cfg.one_page_per_fault()).unwrap();
        let mut pol: Box<dyn reclaimlab::policy::Policy> = if classic {
            Box::new(Classic::new(&m))
        } else {
            Box::new(Mglru::new(&m, MglruConfig::new(kernel)))
        };
        let pid = m.create_process("reader", 0, 0);
        // 6,000 cached pages on each node, read from a CPU of that node.
        for node in 0..2u32 {
            let file = m.create_file(&format!("f{node}"), 6000);
            for page in 0..6000 {
                m.ctx = Ctx {
                    now: m.now() + 1,
                    pid,
                    cpu: node,
                    ..Ctx::default()
                };
                m.access(
                    &mut *pol,
                    pid,
                    PageRef::File { file, page },
                    Op::Read,
                    Via::Fd,
                )
                .expect("read");
            }
            m.lru_add_drain(&mut *pol);
        }
        m.ctx = Ctx {
            now: m.now() + 1,
            pid,
            cpu,
            ..Ctx::default()
        };
        let start = m.now() + m.ctx.elapsed;
        let freed = [m.nodes[0].nr_free(), m.nodes[1].nr_free()];
        let reclaimed = match preferred {
            Some(node) => try_to_free_pages(&mut m, &mut *pol, node),
            None => try_to_free_mem_cgroup_pages(&mut m, &mut *pol, 0, 32, true, false, None),
        };
        assert!(reclaimed >= 32, "{kernel:?}: reclaimed {reclaimed}");
        let first = |node: u8| m.lru_locks[lruvec_index(2, 0, node)].first_hold_from(start);
        let (a, b) = (
            first(0).expect("node 0 locked"),
            first(1).expect("node 1 locked"),
        );
        assert!(m.nodes[0].nr_free() > freed[0] && m.nodes[1].nr_free() > freed[1]);
        if a < b {
            0
        } else {
            1
        }
    };
    for (kernel, classic) in [
        (Kernel::V6_1, true),
        (Kernel::V6_12, false),
        (Kernel::V7_2, false),
    ] {
        for node in 0..2u8 {
            // Direct reclaim for an allocation that prefers `node`, from the other node's CPU.
            let cpu = 1 - node as u32;
            assert_eq!(
                first_node(kernel, classic, Some(node), cpu),
                node,
                "{kernel:?} direct"
            );
            // memcg reclaim (of the root, as memory.reclaim would) from `node`'s CPU.
            let cpu = node as u32;
            assert_eq!(
                first_node(kernel, classic, None, cpu),
                node,
                "{kernel:?} memcg"
            );
        }
    }
}
