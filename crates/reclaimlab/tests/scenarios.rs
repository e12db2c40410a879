//! Scenario tests: whole runs with asserted outcomes (issue 2, "What it must show").

use reclaimlab::access::Via;
use reclaimlab::consts::Kernel;
use reclaimlab::machine::{MachineConfig, MemcgConfig, SwapConfig};
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{run, textbook_capacity, PolicySpec, RunOptions};
use reclaimlab::textbook::TextbookKind;
use reclaimlab::workload::pattern::Pattern;
use reclaimlab::workload::{micro, Phase, ProcSpec, Scenario, Stream, Target, ThreadSpec};

const CLASSIC: PolicySpec = PolicySpec::classic(Kernel::V6_12);
const LRU: PolicySpec = PolicySpec::Textbook(TextbookKind::Lru);

fn go(scn: &Scenario, spec: PolicySpec) -> RunResult {
    run(
        scn,
        spec,
        &RunOptions {
            seed: 7,
            ..Default::default()
        },
    )
    .expect("run")
}

fn checked(scn: &Scenario, spec: PolicySpec) -> RunResult {
    run(
        scn,
        spec,
        &RunOptions {
            seed: 7,
            check_invariants: true,
            ..Default::default()
        },
    )
    .expect("run")
}

fn v(r: &RunResult, k: &str) -> u64 {
    r.vmstat[k]
}

/// A file read through fd by one thread with one pattern.
fn fd_scenario(mem_pages: u64, file_pages: u64, pattern: Pattern, ops: u64) -> Scenario {
    Scenario {
        name: "test".into(),
        description: String::new(),
        machine: MachineConfig::simple(mem_pages),
        files: vec![reclaimlab::workload::FileSpec {
            name: "f".into(),
            pages: file_pages,
            tmpfs: false,
        }],
        procs: vec![ProcSpec::new("p", "/", 0)],
        threads: vec![ThreadSpec {
            proc: 0,
            cpu: 0,
            stream: Stream::Phases(vec![Phase::new(pattern, Target::fd(0), 0, ops)]),
        }],
    }
}

#[test]
fn hot_set_survives_a_one_off_scan_under_classic_but_not_lru() {
    let scn = micro::builtin("hot-scan", 0.25).unwrap();
    let (hot, scan_total) = match scn.threads[0].stream {
        Stream::Phases(ref p) => match p[0].pattern {
            Pattern::HotScan { hot, scan, .. } => (hot, scan),
            _ => unreachable!(),
        },
        _ => unreachable!(),
    };
    // Unavoidable misses: the hot set's first touches and every scan page.
    let floor = hot + scan_total;
    let classic = go(&scn, CLASSIC);
    let lru = go(&scn, LRU);
    assert!(
        classic.misses < floor + hot / 20,
        "classic lost the hot set: {} misses, floor {floor}",
        classic.misses
    );
    // Textbook LRU reloads the whole hot set after each of the 3 scans.
    assert!(
        lru.misses > floor + 2 * hot,
        "lru kept the hot set: {} misses, floor {floor}",
        lru.misses
    );
}

#[test]
fn loop_one_page_larger_than_memory_misses_on_every_access_under_lru() {
    let probe = fd_scenario(4096, 1, Pattern::Loop { pages: 1 }, 1);
    let cap = textbook_capacity(&probe);
    let pages = cap + 1;
    let scn = fd_scenario(4096, pages, Pattern::Loop { pages }, 5 * pages);
    for kind in [TextbookKind::Lru, TextbookKind::Fifo] {
        let r = go(&scn, PolicySpec::Textbook(kind));
        assert_eq!(r.hits, 0, "{kind} hit on a loop of capacity+1");
        assert_eq!(r.misses, 5 * pages);
    }
    // One page smaller than capacity: every access after the first pass hits.
    let scn = fd_scenario(
        4096,
        cap - 1,
        Pattern::Loop { pages: cap - 1 },
        5 * (cap - 1),
    );
    assert_eq!(go(&scn, LRU).misses, cap - 1);
}

#[test]
fn uniform_random_hit_ratio_is_near_memory_over_footprint() {
    let mem = 8192;
    let file = 2 * mem;
    let scn = fd_scenario(mem, file, Pattern::Uniform { pages: file }, 12 * file);
    let r = go(&scn, CLASSIC);
    let cap = textbook_capacity(&scn) as f64;
    let expected = cap / file as f64;
    // Cold misses (one per page) lower the ratio by at most 1/12 of the accesses.
    assert!(
        (r.hit_ratio - expected).abs() < 0.06,
        "hit ratio {} not near {expected}",
        r.hit_ratio
    );
}

#[test]
fn without_swap_anon_pages_are_never_reclaimed() {
    let mut scn = micro::builtin("mixed-rw", 0.25).unwrap();
    scn.machine.swap = SwapConfig::None;
    let r = checked(&scn, CLASSIC);
    assert_eq!(v(&r, "pswpout"), 0);
    assert_eq!(v(&r, "pgsteal_anon"), 0);
    assert_eq!(v(&r, "pgscan_anon"), 0);
    assert_eq!(r.oom_kills, 0);
    // The anon writer's pages all stayed resident: it never faulted one back in.
    let anon_thread = &r.threads[0];
    let anon_pages = scn.procs[0].anon_pages;
    assert_eq!(
        anon_thread.misses, anon_pages,
        "only first touches may miss"
    );
    // With swap the same workload does swap: the assertion above can fail.
    let with_swap = go(&micro::builtin("mixed-rw", 0.25).unwrap(), CLASSIC);
    assert!(v(&with_swap, "pswpout") > 0);
}

#[test]
fn memory_max_is_never_exceeded() {
    let scn = micro::builtin("memcg-limit", 0.125).unwrap();
    // check_invariants verifies usage <= memory.max after every event.
    let r = checked(&scn, CLASSIC);
    let limited = r.memcgs.iter().find(|m| m.path == "/limited").unwrap();
    let max = limited.max_pages.unwrap();
    assert!(limited.current_pages <= max);
    assert!(
        limited.current_pages > max * 9 / 10,
        "the limit was reached and held"
    );
    assert!(limited.stat["pgsteal"] > 0, "limit reclaim ran");
    assert_eq!(
        v(&r, "pgsteal_direct") + v(&r, "pgsteal_kswapd"),
        0,
        "no global reclaim"
    );
}

#[test]
fn memcg_oom_kills_when_anon_cannot_fit_without_swap() {
    let mut m = MachineConfig::simple(8192);
    m.memcgs = vec![MemcgConfig::new("/small").with_max(1024)];
    let scn = Scenario {
        name: "oom".into(),
        description: String::new(),
        machine: m,
        files: vec![],
        procs: vec![ProcSpec {
            name: "hog".into(),
            memcg: "/small".into(),
            anon_pages: 2048,
            mmaps: vec![],
            fadvise_random: Vec::new(),
        }],
        threads: vec![ThreadSpec {
            proc: 0,
            cpu: 0,
            stream: Stream::Phases(vec![Phase::new(
                Pattern::Sequential { pages: 2048 },
                Target::Anon,
                100,
                2048,
            )]),
        }],
    };
    let r = checked(&scn, CLASSIC);
    assert_eq!(r.oom_kills, 1);
    let small = r.memcgs.iter().find(|m| m.path == "/small").unwrap();
    assert_eq!(small.events["oom_kill"], 1);
    assert!(r.threads[0].killed);
    // 1024 pages, less its PTE tables (2).
    assert!(r.threads[0].accesses >= 1021 && r.threads[0].accesses <= 1022);
    let user = small.stat["anon"] + small.stat["file"] + small.stat["pagetables"];
    assert_eq!(user, 0, "the victim's memory was freed");
    // Its PTE tables went to the killer's CPU's charge stock (`refill_stock`), where they
    // stay charged.
    assert!(
        (2..64).contains(&small.current_pages),
        "{}",
        small.current_pages
    );
}

#[test]
fn same_seed_gives_byte_identical_output() {
    for name in ["mixed-rw", "swap-storm", "memcg-limit"] {
        let scn = micro::builtin(name, 0.125).unwrap();
        let a = serde_json::to_string(&go(&scn, CLASSIC)).unwrap();
        let b = serde_json::to_string(&go(&scn, CLASSIC)).unwrap();
        assert_eq!(a, b, "{name} is not deterministic");
        let other = run(
            &scn,
            CLASSIC,
            &RunOptions {
                seed: 8,
                ..Default::default()
            },
        )
        .unwrap();
        assert_ne!(
            a,
            serde_json::to_string(&other).unwrap(),
            "{name} ignores the seed"
        );
    }
}

#[test]
fn trace_replay_reproduces_the_generated_run() {
    let scn = micro::builtin("zipf", 0.125).unwrap();
    let mut buf = Vec::new();
    let n = reclaimlab::workload::write_trace(&scn, 7, &mut buf).unwrap();
    assert_eq!(n, 4 * scn.files[0].pages);
    let (header, records) = reclaimlab::trace::read_native(&buf[..]).unwrap();
    let replay =
        Scenario::from_trace("zipf-trace", scn.machine.clone(), &header, &records).unwrap();
    let a = go(&scn, CLASSIC);
    let b = go(&replay, CLASSIC);
    assert_eq!(a.vmstat, b.vmstat);
    assert_eq!(a.misses, b.misses);
    assert_eq!(a.sim_time_ns, b.sim_time_ns);
}

#[test]
fn kernel_versions_differ_where_the_spec_says() {
    // 6.1 charges no rotation cost and batches 15 folios; the same workload must come out
    // differently in at least the scan counters.
    let scn = micro::builtin("mixed-rw", 0.125).unwrap();
    let a = go(&scn, PolicySpec::classic(Kernel::V6_1));
    let b = go(&scn, PolicySpec::classic(Kernel::V6_12));
    assert_eq!(a.policy, "classic:6.1");
    assert_ne!(a.vmstat, b.vmstat);
}

#[test]
fn dirty_file_writes_go_through_writeback() {
    let scn = micro::builtin("file-only", 0.125).unwrap();
    let r = checked(&scn, CLASSIC);
    assert!(v(&r, "pgpgout") > 0, "dirty pages were written back");
    assert!(
        v(&r, "nr_vmscan_immediate_reclaim") > 0,
        "reclaim met dirty folios and left them to the flusher"
    );
    assert!(
        v(&r, "pgrotated") > 0,
        "written PG_reclaim folios rotated to the inactive tail"
    );
}

mod memcg_files {
    use super::*;
    use reclaimlab::access::{Op, PageRef};
    use reclaimlab::workload::{Action, FileSpec, MemcgFile};

    /// Reads of `pages` pages of file `file`, in order.
    fn reads(file: u32, pages: u64) -> Vec<Action> {
        (0..pages)
            .map(|p| Action::Access {
                page: PageRef::File { file, page: p },
                op: Op::Read,
                via: Via::Fd,
                req: 1,
            })
            .collect()
    }

    fn proc_in(memcg: &str) -> ProcSpec {
        ProcSpec {
            name: memcg.trim_start_matches('/').into(),
            memcg: memcg.into(),
            anon_pages: 0,
            mmaps: vec![],
            fadvise_random: Vec::new(),
        }
    }

    fn memcg_result<'a>(r: &'a RunResult, path: &str) -> &'a reclaimlab::metrics::MemcgResult {
        r.memcgs.iter().find(|m| m.path == path).unwrap()
    }

    #[test]
    fn memory_reclaim_reduces_memory_current_by_about_the_request() {
        for kernel in [Kernel::V6_1, Kernel::V6_12] {
            let mut m = MachineConfig::simple(16384);
            m.memcgs = vec![MemcgConfig::new("/a")];
            let mut actions = reads(0, 4000);
            actions.push(Action::MemcgWrite {
                memcg: 1,
                file: MemcgFile::Reclaim { swappiness: None },
                value: 1500,
            });
            let scn = Scenario {
                name: "reclaim".into(),
                description: String::new(),
                machine: m,
                files: vec![FileSpec {
                    name: "f".into(),
                    pages: 4000,
                    tmpfs: false,
                }],
                procs: vec![proc_in("/a")],
                threads: vec![ThreadSpec {
                    proc: 0,
                    cpu: 0,
                    stream: Stream::Actions(actions),
                }],
            };
            let r = checked(&scn, PolicySpec::classic(kernel));
            let a = memcg_result(&r, "/a");
            // memory.current also holds the CPU's charge stock (4000 is not a multiple of
            // MEMCG_CHARGE_BATCH), which memory.reclaim does not touch: count the folios.
            let reclaimed = 4000 - (a.stat["anon"] + a.stat["file"]) / 4096;
            assert_eq!(a.current_pages, 4000 - reclaimed + 4032 - 4000, "{kernel}");
            // v6.1 asks for the whole remainder in one call, and the last priority pass scans
            // its whole target: it overshoots (the reason later kernels reclaim in batches).
            let slack = if kernel == Kernel::V6_1 { 1500 / 4 } else { 64 };
            assert!(
                (1500..=1500 + slack).contains(&reclaimed),
                "{kernel}: reclaimed {reclaimed}"
            );
            eprintln!("{kernel}: memory.reclaim 1500 pages reclaimed {reclaimed}");
            assert_eq!(r.threads[0].write_errors, 0);
            assert_eq!(
                v(&r, "pgscan_direct") + v(&r, "pgscan_kswapd"),
                0,
                "cgroup reclaim is not global"
            );
        }
    }

    #[test]
    fn memory_reclaim_swappiness_is_einval_on_6_1() {
        let mut m = MachineConfig::simple(4096);
        m.kernel = Kernel::V6_1;
        m.memcgs = vec![MemcgConfig::new("/a")];
        let scn = Scenario {
            name: "einval".into(),
            description: String::new(),
            machine: m,
            files: vec![],
            procs: vec![proc_in("/a")],
            threads: vec![ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(vec![Action::MemcgWrite {
                    memcg: 1,
                    file: MemcgFile::Reclaim {
                        swappiness: Some(60),
                    },
                    value: 10,
                }]),
            }],
        };
        assert_eq!(
            go(&scn, PolicySpec::classic(Kernel::V6_1)).threads[0].write_errors,
            1
        );
    }

    /// `/a` reads its file once, sleeps while `/b` streams a file larger than memory (global
    /// reclaim), then reads its file again; `/a` may get memory.low.
    fn low_scenario(low: u64) -> Scenario {
        let mut m = MachineConfig::simple(8192);
        m.cpus = 2;
        // One page per read() (no readahead): a thread's misses count its pages read again.
        m.read_ahead_kb = 0;
        m.memcgs = vec![
            MemcgConfig {
                low,
                ..MemcgConfig::new("/a")
            },
            MemcgConfig::new("/b"),
        ];
        let mut a = reads(0, 1500);
        a.push(Action::Think(20_000_000_000));
        a.extend(reads(0, 1500));
        let b = reads(1, 24000);
        Scenario {
            name: "low".into(),
            description: String::new(),
            machine: m,
            files: vec![
                FileSpec {
                    name: "a".into(),
                    pages: 1500,
                    tmpfs: false,
                },
                FileSpec {
                    name: "b".into(),
                    pages: 12000,
                    tmpfs: false,
                },
            ],
            procs: vec![proc_in("/a"), proc_in("/b")],
            threads: vec![
                ThreadSpec {
                    proc: 0,
                    cpu: 0,
                    stream: Stream::Actions(a),
                },
                ThreadSpec {
                    proc: 1,
                    cpu: 1,
                    stream: Stream::Actions(b),
                },
            ],
        }
    }

    #[test]
    fn memory_low_protects_a_memcg_from_global_reclaim() {
        let protected = checked(&low_scenario(2000), CLASSIC);
        let a = memcg_result(&protected, "/a");
        assert_eq!(a.stat["pgscan"], 0, "a memcg below memory.low was scanned");
        assert_eq!(protected.threads[0].misses, 1500, "only cold misses");
        assert!(memcg_result(&protected, "/b").stat["pgscan"] > 0);
        // Without the protection the same memcg is reclaimed.
        let unprotected = go(&low_scenario(0), CLASSIC);
        assert!(memcg_result(&unprotected, "/a").stat["pgscan"] > 0);
        assert!(unprotected.threads[0].misses > 1500);
    }

    #[test]
    fn memory_high_holds_usage_without_oom() {
        let mut m = MachineConfig::simple(16384);
        m.memcgs = vec![MemcgConfig {
            high: 500,
            ..MemcgConfig::new("/h")
        }];
        let scn = Scenario {
            name: "high".into(),
            description: String::new(),
            machine: m,
            files: vec![FileSpec {
                name: "f".into(),
                pages: 3000,
                tmpfs: false,
            }],
            procs: vec![proc_in("/h")],
            threads: vec![ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(reads(0, 3000)),
            }],
        };
        let r = checked(&scn, CLASSIC);
        let h = memcg_result(&r, "/h");
        assert!(
            h.current_pages <= 500 + 64,
            "memory.current {} far above memory.high",
            h.current_pages
        );
        assert!(h.events["high"] > 0);
        assert_eq!(r.oom_kills, 0);
    }
}

#[test]
fn huge_object_traces_are_compacted_in_order() {
    use reclaimlab::access::{Op, PageRef, TraceRecord};
    let rec = |page| TraceRecord {
        time_ns: 0,
        pid: 1,
        memcg: 0,
        page: PageRef::File { file: 0, page },
        op: Op::Read,
        via: Via::Fd,
        req: 1,
    };
    let records = vec![rec(5 << 40), rec(3 << 40), rec(5 << 40), rec(7)];
    let header = reclaimlab::trace::TraceHeader::default();
    let scn = Scenario::from_trace("huge", MachineConfig::simple(4096), &header, &records).unwrap();
    assert_eq!(scn.files[0].pages, 3, "three distinct pages");
    let r = go(&scn, CLASSIC);
    assert_eq!((r.accesses, r.misses), (4, 3), "the repeated page hits");
}

mod writeback_and_min {
    use super::*;
    use reclaimlab::access::{Op, PageRef};
    use reclaimlab::workload::{Action, FileSpec};

    /// One process writes 10 pages of a file (far below the background threshold), then
    /// sleeps for `sleep_s`.
    fn dirty_then_sleep(sleep_s: u64) -> Scenario {
        let mut actions: Vec<Action> = (0..10)
            .map(|p| Action::Access {
                page: PageRef::File { file: 0, page: p },
                op: Op::Write,
                via: Via::Fd,
                req: 1,
            })
            .collect();
        actions.push(Action::Think(sleep_s * 1_000_000_000));
        Scenario {
            name: "expire".into(),
            description: String::new(),
            machine: MachineConfig::simple(16384),
            files: vec![FileSpec {
                name: "f".into(),
                pages: 10,
                tmpfs: false,
            }],
            procs: vec![ProcSpec {
                name: "w".into(),
                memcg: "/".into(),
                anon_pages: 0,
                mmaps: vec![],
                fadvise_random: Vec::new(),
            }],
            threads: vec![ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(actions),
            }],
        }
    }

    #[test]
    fn the_flusher_writes_inodes_dirty_for_30_s_on_its_5_s_period() {
        // Dirtied in jiffy 0: not written by the kupdate runs at 5..25 s, written by the one
        // at 30 s (the flusher wakes every 5 s); compared in jiffies as the kernel does.
        let early = go(&dirty_then_sleep(29), CLASSIC);
        assert_eq!(v(&early, "pgpgout"), 0, "written before the 30 s expiry");
        assert_eq!(v(&early, "nr_dirty"), 10);
        let late = go(&dirty_then_sleep(31), CLASSIC);
        assert_eq!(v(&late, "pgpgout"), 40, "10 pages written back (KiB)");
        assert_eq!(v(&late, "nr_dirty"), 0);
    }

    /// `/a` reads its file once, sleeps while `/b` streams a file larger than memory; `/a`
    /// has memory.min = `min`.
    fn min_scenario(min: u64) -> Scenario {
        let mut m = MachineConfig::simple(8192);
        m.cpus = 2;
        // One page per read() (no readahead): a thread's misses count its pages read again.
        m.read_ahead_kb = 0;
        m.memcgs = vec![
            MemcgConfig {
                min,
                ..MemcgConfig::new("/a")
            },
            MemcgConfig::new("/b"),
        ];
        let reads = |file: u32, pages: u64| -> Vec<Action> {
            (0..pages)
                .map(|p| Action::Access {
                    page: PageRef::File { file, page: p },
                    op: Op::Read,
                    via: Via::Fd,
                    req: 1,
                })
                .collect()
        };
        let mut a = reads(0, 1500);
        a.push(Action::Think(20_000_000_000));
        a.extend(reads(0, 1500));
        Scenario {
            name: "min".into(),
            description: String::new(),
            machine: m,
            files: vec![
                FileSpec {
                    name: "a".into(),
                    pages: 1500,
                    tmpfs: false,
                },
                FileSpec {
                    name: "b".into(),
                    pages: 24000,
                    tmpfs: false,
                },
            ],
            procs: vec![
                ProcSpec {
                    name: "a".into(),
                    memcg: "/a".into(),
                    anon_pages: 0,
                    mmaps: vec![],
                    fadvise_random: Vec::new(),
                },
                ProcSpec {
                    name: "b".into(),
                    memcg: "/b".into(),
                    anon_pages: 0,
                    mmaps: vec![],
                    fadvise_random: Vec::new(),
                },
            ],
            threads: vec![
                ThreadSpec {
                    proc: 0,
                    cpu: 0,
                    stream: Stream::Actions(a),
                },
                ThreadSpec {
                    proc: 1,
                    cpu: 1,
                    stream: Stream::Actions(reads(1, 24000)),
                },
            ],
        }
    }

    #[test]
    fn memory_min_protects_a_memcg_under_every_policy() {
        for spec in [
            CLASSIC,
            PolicySpec::classic(Kernel::V6_1),
            "mglru:7.2".parse().unwrap(),
        ] {
            let r = if spec == CLASSIC {
                checked(&min_scenario(2000), spec)
            } else {
                go(&min_scenario(2000), spec)
            };
            let a = r.memcgs.iter().find(|m| m.path == "/a").unwrap();
            assert_eq!(
                a.stat["pgscan"], 0,
                "{spec}: a memcg below memory.min was scanned"
            );
            assert_eq!(r.threads[0].misses, 1500, "{spec}: only cold misses");
            let unprotected = go(&min_scenario(0), spec);
            assert!(
                unprotected.threads[0].misses > 1500,
                "{spec}: the same memcg without memory.min is reclaimed"
            );
        }
    }
}

#[test]
fn memory_reclaim_swappiness_max_reclaims_anon_only_on_7_x() {
    use reclaimlab::access::{Op, PageRef};
    use reclaimlab::workload::{Action, FileSpec, MemcgFile};
    let scn = |kernel: Kernel| {
        let mut m = MachineConfig::simple(16384);
        m.kernel = kernel;
        m.swap = SwapConfig::Zram {
            size_pages: 8192,
            compress_ratio: 3.0,
        };
        m.memcgs = vec![MemcgConfig::new("/a")];
        let mut actions: Vec<Action> = (0..2000)
            .map(|p| Action::Access {
                page: PageRef::Anon { page: p },
                op: Op::Write,
                via: Via::Mmap,
                req: 1,
            })
            .chain((0..2000).map(|p| Action::Access {
                page: PageRef::File { file: 0, page: p },
                op: Op::Read,
                via: Via::Fd,
                req: 1,
            }))
            .collect();
        actions.push(Action::MemcgWrite {
            memcg: 1,
            file: MemcgFile::Reclaim {
                swappiness: Some(201),
            },
            value: 500,
        });
        Scenario {
            name: "max".into(),
            description: String::new(),
            machine: m,
            files: vec![FileSpec {
                name: "f".into(),
                pages: 2000,
                tmpfs: false,
            }],
            procs: vec![ProcSpec {
                name: "p".into(),
                memcg: "/a".into(),
                anon_pages: 2000,
                mmaps: vec![],
                fadvise_random: Vec::new(),
            }],
            threads: vec![ThreadSpec {
                proc: 0,
                cpu: 0,
                stream: Stream::Actions(actions),
            }],
        }
    };
    // The classical path of 7.x too: get_scan_count's SCAN_ANON.
    for p in ["mglru:7.2", "classic:7.2"] {
        let r = checked(&scn(Kernel::V7_2), p.parse().unwrap());
        assert_eq!(r.threads[0].write_errors, 0, "{p}");
        assert!(
            v(&r, "pswpout") >= 500,
            "{p}: anon was reclaimed: {}",
            v(&r, "pswpout")
        );
        assert_eq!(
            v(&r, "pgsteal_file"),
            0,
            "{p}: file was not touched with swappiness=max"
        );
    }
    for p in ["mglru:6.12", "classic:6.12"] {
        let old = go(&scn(Kernel::V6_12), p.parse().unwrap());
        assert_eq!(
            old.threads[0].write_errors, 1,
            "{p}: swappiness=max is EINVAL before Era D"
        );
    }
}

#[test]
fn parallel_runs_equal_serial_runs() {
    let scn = micro::builtin("mixed-rw", 0.125).unwrap();
    let specs = [CLASSIC, "mglru:7.2".parse().unwrap(), LRU];
    let seeds = [1, 2, 3];
    let parallel = reclaimlab::sim::run_matrix(&scn, &specs, &seeds, 3).unwrap();
    for (p, spec) in specs.iter().enumerate() {
        for (s, &seed) in seeds.iter().enumerate() {
            let serial = run(
                &scn,
                *spec,
                &RunOptions {
                    seed,
                    ..Default::default()
                },
            )
            .unwrap();
            assert_eq!(
                serde_json::to_string(&parallel[p][s]).unwrap(),
                serde_json::to_string(&serial).unwrap(),
                "{spec} seed {seed}"
            );
        }
    }
}

#[test]
fn fairness_is_computed_over_workers_and_memcgs() {
    // Four identical anon workers: near-perfect fairness, one value per worker. At scale 1/4:
    // at 1/8 each worker's run is ~15 ms, a few reclaim rounds, and which of them reclaims
    // directly sets its rate (Jain 0.86-0.99 over seeds 1-4; at 1/4, 0.99-1.0).
    let r = go(&micro::builtin("swap-storm", 0.25).unwrap(), CLASSIC);
    let f = r.fairness_workers.expect("four workers");
    assert_eq!(f.n, 4);
    assert!(f.jain > 0.95 && f.jain <= 1.0, "{f:?}");
    let (lo, hi) = f.jain_ci95;
    assert!(0.25 <= lo && lo <= hi && hi <= 1.0, "{f:?}");
    // A limited file reader beside an unlimited anon writer: clearly unfair, per memcg too.
    let r = go(&micro::builtin("memcg-limit", 0.125).unwrap(), CLASSIC);
    let m = r.fairness_memcgs.expect("two memcgs");
    assert_eq!(m.n, 2);
    assert!(m.jain < 0.9, "{m:?}");
    // Two values: resamples give both (J = 1) or the pair (J = the index itself).
    assert_eq!(m.jain_ci95, (m.jain, 1.0), "{m:?}");
    // Every comparison row lies in the domain its intervals are cut to.
    for (name, x) in r.metrics() {
        let (lo, hi) = reclaimlab::metrics::metric_domain(&name).bounds();
        assert!(lo <= x && x <= hi, "{name} = {x} outside [{lo}, {hi}]");
    }
    // One worker: no index.
    assert!(go(&micro::builtin("zipf", 0.05).unwrap(), CLASSIC)
        .fairness_workers
        .is_none());
}

/// Two memcgs under global pressure: `/hot` loads a file of 40% of memory through a shared
/// mapping, uniformly and for as long as the other runs; `/cold` streams once with read()
/// through a file three times the size of memory.
fn hot_cold_scenario(hot_via: Via) -> Scenario {
    let mem = 4096;
    let (hot, cold) = (mem * 2 / 5, mem * 3);
    let mut m = MachineConfig::simple(mem);
    m.cpus = 2;
    m.memcgs = vec![MemcgConfig::new("/hot"), MemcgConfig::new("/cold")];
    // One page per read() (no readahead): a thread's misses count its pages read again.
    m.read_ahead_kb = 0;
    let reader = |proc: usize, file: usize, via: Via, pattern: Pattern, ops: u64, think_ns: u64| {
        ThreadSpec {
            proc,
            cpu: proc as u32,
            stream: Stream::Phases(vec![Phase {
                pattern,
                target: Target::File { file, via },
                write_pct: 0,
                ops,
                think_ns,
                offset: 0,
                req_pages: 1,
            }]),
        }
    };
    let proc_ = |name: &str, memcg: &str, mmaps: Vec<(usize, u32)>| ProcSpec {
        name: name.into(),
        memcg: memcg.into(),
        anon_pages: 0,
        mmaps,
        fadvise_random: Vec::new(),
    };
    Scenario {
        name: "hot-cold".into(),
        description: String::new(),
        machine: m,
        files: vec![
            reclaimlab::workload::FileSpec {
                name: "hot".into(),
                pages: hot,
                tmpfs: false,
            },
            reclaimlab::workload::FileSpec {
                name: "cold".into(),
                pages: cold,
                tmpfs: false,
            },
        ],
        procs: vec![
            proc_(
                "hot",
                "/hot",
                vec![(0, reclaimlab::machine::mm::vm::SHARED)],
            ),
            proc_("cold", "/cold", vec![]),
        ],
        threads: vec![
            reader(
                0,
                0,
                hot_via,
                Pattern::Uniform { pages: hot },
                8 * cold,
                20_000,
            ),
            reader(1, 1, Via::Fd, Pattern::Sequential { pages: cold }, cold, 0),
        ],
    }
}

/// Heat-level reclaim (series-2026.md §C.1): the memcg whose reclaim yields little (`/hot`,
/// its pages referenced again and again) turns warm and is left out of the first pass, so
/// global reclaim scans it less than `mem_cgroup_iter` does, for the classical LRU and for
/// MGLRU.
#[test]
fn heat_levels_spare_the_memcg_whose_reclaim_yields_little() {
    let scan = |r: &RunResult, path: &str| {
        let mc = r.memcgs.iter().find(|m| m.path == path).expect("memcg");
        (mc.stat["pgscan"], mc.stat["pgsteal"])
    };
    for via in [Via::Fd, Via::Mmap] {
        let scn = hot_cold_scenario(via);
        for (iter, heat) in [
            ("classic:6.12", "classic:6.12@heat"),
            ("mglru:7.2@iter", "mglru:7.2@heat"),
        ] {
            let a = go(&scn, iter.parse().unwrap());
            let b = go(&scn, heat.parse().unwrap());
            let ((scan_a, steal_a), (scan_b, steal_b)) = (scan(&a, "/hot"), scan(&b, "/hot"));
            let ctx = format!("{via:?} {heat} vs {iter}: /hot pgscan/pgsteal {scan_b}/{steal_b} vs {scan_a}/{steal_a}");
            assert!(scan_b < scan_a, "{ctx}");
            if via == Via::Fd {
                assert!(steal_b * 2 < steal_a, "{ctx}");
                assert!(
                    b.misses < a.misses,
                    "{ctx}: misses {} vs {}",
                    b.misses,
                    a.misses
                );
            }
            assert!(scan(&b, "/cold").1 * 10 > scan(&a, "/cold").1 * 9, "{ctx}");
        }
    }
}

#[test]
fn a_matrix_with_known_runs_and_hooks_equals_a_plain_one() {
    use reclaimlab::sim::{run_matrix_with, MatrixHooks, MatrixOptions};
    use std::sync::Mutex;
    let scn = micro::builtin("mixed-rw", 0.125).unwrap();
    let specs = [CLASSIC, LRU];
    let seeds = [1, 2];
    let plain = reclaimlab::sim::run_matrix(&scn, &specs, &seeds, 2).unwrap();
    // Two runs known (as if read from a store), the others run and reported once each.
    let known = vec![
        vec![Some(plain[0][0].clone()), None],
        vec![None, Some(plain[1][1].clone())],
    ];
    let finished = Mutex::new(Vec::new());
    let on_finish = |p: usize, s: usize, r: &Result<RunResult, String>| {
        assert!(r.is_ok());
        finished.lock().unwrap().push((p, s));
    };
    let hooks = MatrixHooks {
        progress: None,
        finished: Some(&on_finish),
    };
    let got = run_matrix_with(
        &scn,
        &specs,
        &seeds,
        2,
        &MatrixOptions::default(),
        known,
        &hooks,
    )
    .unwrap();
    let mut ran = finished.into_inner().unwrap();
    ran.sort();
    assert_eq!(ran, vec![(0, 1), (1, 0)], "only the unknown runs ran");
    assert_eq!(
        serde_json::to_string(&got).unwrap(),
        serde_json::to_string(&plain).unwrap()
    );
}

#[test]
fn a_matrix_applies_its_run_options() {
    use reclaimlab::sim::{run_matrix_with, MatrixHooks, MatrixOptions};
    let scn = micro::builtin("mixed-rw", 0.125).unwrap();
    let opts = MatrixOptions {
        max_sim_ns: Some(50_000_000),
        ..Default::default()
    };
    let got = run_matrix_with(
        &scn,
        &[CLASSIC],
        &[3],
        1,
        &opts,
        Vec::new(),
        &MatrixHooks::default(),
    )
    .unwrap();
    let serial = run(
        &scn,
        CLASSIC,
        &RunOptions {
            seed: 3,
            max_sim_ns: Some(50_000_000),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(got[0][0], serial);
}

/// A result read back from its JSON (as the CLI's results store does) serialises to the same
/// bytes: every field round-trips, floats bit for bit.
#[test]
fn a_run_result_round_trips_through_json() {
    let mut cases = Vec::new();
    for (name, scale, policy) in [
        ("mixed-rw", 0.125, "classic"),
        ("mixed-rw", 0.125, "mglru:7.2"),
        ("mixed-rw", 0.125, "lru"),
        ("memcg-limit", 0.125, "mglru:7.2"),
        // Timed requests, fairness over workers and memcgs.
        ("android-launch", 0.0005, "classic"),
        ("kv-cache", 0.0005, "mglru:7.2"),
    ] {
        let scn = micro::builtin(name, scale).unwrap();
        let opts = RunOptions {
            seed: 7,
            lru_gen_sample_ns: Some(100_000_000),
            lru_gen_schedule: vec![(200_000_000, "- 1 0 1 60 64".into())],
            ..Default::default()
        };
        cases.push(run(&scn, policy.parse().unwrap(), &opts).unwrap());
    }
    assert!(cases
        .iter()
        .any(|r| r.requests.is_some() && r.fairness_memcgs.is_some()));
    for r in &cases {
        for json in [
            serde_json::to_string(r).unwrap(),
            serde_json::to_string_pretty(r).unwrap(),
        ] {
            let back: RunResult = serde_json::from_str(&json).unwrap();
            assert_eq!(&back, r, "{} {}", r.scenario, r.policy);
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(r).unwrap()
            );
            for ((k, a), (_, b)) in back.metrics().iter().zip(r.metrics()) {
                assert_eq!(a.to_bits(), b.to_bits(), "{k}");
            }
        }
    }
}

/// Sampling the lru_gen file observes, never perturbs (issue 13): a run with samples every
/// 1 ms is the run without them, sample for sample in its own record only. Before the fix,
/// each sample was a queued event, which moved the tasks' preemption points (file-anon-mix-mini
/// under 7.2: 460,111 misses sampled against 459,875 not).
#[test]
fn lru_gen_sampling_never_changes_the_run() {
    let scn = micro::builtin("file-anon-mix-mini", 0.5).unwrap();
    for policy in ["mglru:7.2", "mglru:6.1"] {
        let plain = run(&scn, policy.parse().unwrap(), &RunOptions::default()).unwrap();
        let opts = RunOptions {
            lru_gen_sample_ns: Some(1_000_000),
            ..Default::default()
        };
        let mut sampled = run(&scn, policy.parse().unwrap(), &opts).unwrap();
        let samples = std::mem::take(&mut sampled.lru_gen_samples);
        assert!(samples.len() > 100, "{policy}: {} samples", samples.len());
        assert!(samples.windows(2).all(|w| w[1].0 == w[0].0 + 1_000_000));
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            serde_json::to_string(&sampled).unwrap(),
            "{policy}"
        );
    }
}
