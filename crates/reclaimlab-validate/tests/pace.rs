//! A concurrent boot's recorded progress, and the model paced by it (crate::pace): these run
//! in CI, on a recorded console log (no boot).

use reclaimlab::access::TraceRecord;
use reclaimlab_validate::console::{parse_console, to_run_result, GuestReport};
use reclaimlab_validate::fidelity::Counters;
use reclaimlab_validate::guest::{build_plan, Mode};
use reclaimlab_validate::packages::KernelKey;
use reclaimlab_validate::{model, pace, suite};

/// buffered-writers-3p on 6.1 with MGLRU, 2 vCPUs, on an idle host: the three writers went at
/// about the same rate (finished at 2.97, 2.86 and 3.12 s).
const WRITERS_61: &str = include_str!("fixtures/buffered-writers-3p-6.1-mglru-1.log");

#[test]
fn a_concurrent_log_carries_each_processs_progress_and_schedstat() {
    let r = parse_console(WRITERS_61).unwrap();
    assert_eq!(r.progress_every, 32);
    assert_eq!(r.progress.len(), 3);
    for p in &r.progress {
        // Records 0, 32, ..., 34,976 of its 35,000, and its end.
        assert_eq!(p.stamps_us.len(), 35_000usize.div_ceil(32) + 1);
        assert!(p.stamps_us.windows(2).all(|w| w[0] <= w[1]));
        // elapsed_ms is truncated to the millisecond.
        assert!(*p.stamps_us.last().unwrap() < (r.elapsed_ms + 1) * 1000);
        let (run, wait) = (p.run_ns.unwrap(), p.wait_ns.unwrap());
        // CPU-bound on two vCPUs shared by three: on a CPU about 40% of the replay, waiting
        // for one about a quarter of it.
        assert!(run > r.elapsed_ms * 1_000_000 / 4, "run {run}");
        assert!(wait > r.elapsed_ms * 1_000_000 / 8, "wait {wait}");
    }
    let bad = WRITERS_61.replacen("pid 1 431 ", "pid 1 99999999 ", 1);
    assert!(parse_console(&bad).unwrap_err().contains("back in time"));
    let bad = WRITERS_61.replacen("pid 1 run_ns", "pid 1 ran", 1);
    assert!(parse_console(&bad).unwrap_err().contains("schedstat"));
}

/// The go's CLOCK_MONOTONIC time (`replay end`) and the kernel's traced memcg statistics flushes
/// (`memcg flushes`, printed by the init after the replay): parsed, refused when malformed.
#[test]
fn a_concurrent_log_carries_the_go_and_the_traced_memcg_flushes() {
    assert_eq!(parse_console(WRITERS_61).unwrap().go_ns, None);
    assert_eq!(parse_console(WRITERS_61).unwrap().memcg_flush_ns, None);
    let with = |flushes: &str| {
        WRITERS_61
            .replacen(
                "=== replay end ===",
                "=== replay end ===\ngo_ns 5291118393",
                1,
            )
            .replacen(
                "=== guest done ===",
                &format!("=== memcg flushes ===\n{flushes}=== guest done ==="),
                1,
            )
    };
    let r = parse_console(&with("trace on\nt 4.449000\nt 6.465324\n")).unwrap();
    assert_eq!(r.go_ns, Some(5_291_118_393));
    assert_eq!(r.memcg_flush_ns, Some(vec![4_449_000_000, 6_465_324_000]));
    assert_eq!(
        parse_console(&with("trace off\n")).unwrap().memcg_flush_ns,
        None
    );
    assert_eq!(
        parse_console(&with("trace on\n")).unwrap().memcg_flush_ns,
        Some(vec![])
    );
    for (bad, says) in [
        ("trace on\nt 6.465324\nt 4.449000\n", "back in time"),
        ("t 4.449000\n", "bad line"),
        ("trace on\nt 4.449\n", "bad line"),
        ("trace on\nt 4.4490x0\n", "bad number"),
        ("trace maybe\n", "bad line"),
    ] {
        let e = parse_console(&with(bad)).unwrap_err();
        assert!(e.contains(says), "{bad:?}: {e}");
    }
}

/// A recorded boot of `workload` as the harness saves it: its report and its run with the
/// progress attached (`run_cell`).
fn recorded(workload: &suite::Workload, log: &str, label: &str) -> (GuestReport, Counters) {
    let (h, recs) = workload.trace();
    let (_, plan) = build_plan(&h, &recs).unwrap();
    let rep = parse_console(log).unwrap();
    let mut run = Counters::of(&to_run_result(&rep, workload.name, label, &plan));
    pace::attach(&mut run, &rep);
    (rep, run)
}

/// The model of one recorded boot, as the harness runs it (`model::run_model`, sized from the
/// boot).
fn model_of_boot(
    w: &suite::Workload,
    rep: &GuestReport,
    kernel: KernelKey,
    mode: Mode,
    run: &Counters,
) -> reclaimlab::metrics::RunResult {
    let (h, recs) = w.trace();
    let s = model::sizing(&w.machine, std::slice::from_ref(rep)).unwrap();
    model::run_model(
        w.name,
        &w.machine,
        &s,
        &h,
        &recs,
        kernel,
        mode,
        std::slice::from_ref(run),
    )
    .unwrap()
}

/// The run saved with its progress paces the model, and the model then lands within 2% of the
/// boot's misses (25,325).
#[test]
fn the_model_paced_by_a_boot_matches_it() {
    let w = suite::workload("buffered-writers-3p").unwrap();
    let (h, recs) = w.trace();
    let (rep, run) = recorded(&w, WRITERS_61, "kernel 6.1 mglru");
    let p = pace::of_run(&run).expect("every thread has its progress");
    assert_eq!(p.stamps_us.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
    let s = model::sizing(&w.machine, std::slice::from_ref(&rep)).unwrap();
    let m = model::run_model(
        w.name,
        &w.machine,
        &s,
        &h,
        &recs,
        KernelKey::V6_1,
        Mode::Mglru,
        std::slice::from_ref(&run),
    )
    .unwrap();
    assert_eq!(run.misses, 25_325);
    let err = (m.misses as f64 - 25_325.0) / 25_325.0;
    assert!(err.abs() < 0.02, "model {} vs kernel 25325", m.misses);
}

/// Why pacing matters: when one of the three writers goes at half the others' rate, the
/// other two finish first and it has the memcg to itself for the rest of its run, so the
/// model misses fewer pages in all than with the three going evenly (by 1.6k of 25.5k).
#[test]
fn a_writer_that_lags_the_others_lowers_the_misses() {
    let w = suite::workload("buffered-writers-3p").unwrap();
    let (h, recs) = w.trace();
    let rep = parse_console(WRITERS_61).unwrap();
    let s = model::sizing(&w.machine, std::slice::from_ref(&rep)).unwrap();
    let at_rates = |ns_per_record: [u64; 3]| -> u64 {
        let mut own = [0u64; 3];
        let paced: Vec<TraceRecord> = recs
            .iter()
            .map(|r| {
                let p = r.pid as usize - 1;
                own[p] += 1;
                TraceRecord {
                    time_ns: (own[p] - 1) * ns_per_record[p],
                    ..*r
                }
            })
            .collect();
        let m = model::machine(&w.machine, &s, &h);
        model::run_model_on(w.name, m, 0, &h, &paced, KernelKey::V6_1, Mode::Mglru)
            .unwrap()
            .misses
    };
    let even = at_rates([8_000, 8_000, 8_000]);
    let one_lags = at_rates([8_000, 8_000, 16_000]);
    assert!(
        one_lags + 1_000 < even,
        "misses with one writer at half rate {one_lags}, all even {even}"
    );
}

/// anon-file-2p on 6.12 with MGLRU, boot 4 of validation/results/2026-11-27-smp2: the reader
/// had read 1,500 pages by the time the allocator finished faulting its 6,144 (twice as many
/// as in the boots that swapped all of them), so the memcg filled while the allocator was still
/// touching its memory, and the kernel swapped out only 1,946 of its pages (23,582 misses).
const ANON_FILE_612: &str = include_str!("fixtures/anon-file-2p-6.12-mglru-4.log");

/// Replayed on the boot's clock, the model meets the same way and swaps out part of the
/// anonymous memory, as the kernel did; unpaced, its allocator is done in 13 ms, long before
/// the memcg fills, and all of it is swapped out (18.8k misses).
#[test]
fn replayed_on_the_boots_clock_the_model_swaps_out_what_that_boot_did() {
    let w = suite::workload("anon-file-2p").unwrap();
    let (rep, run) = recorded(&w, ANON_FILE_612, "kernel 6.12 mglru");
    assert_eq!(run.misses, 23_582);
    assert_eq!(run.vmstat["pswpout"], 1_946);
    let model_of = |r: &Counters| model_of_boot(&w, &rep, KernelKey::V6_12, Mode::Mglru, r);
    let paced = model_of(&run);
    let err = (paced.misses as f64 - 23_582.0) / 23_582.0;
    assert!(err.abs() < 0.02, "paced model {} misses", paced.misses);
    let swapped = paced.vmstat["pswpout"];
    assert!(
        (1_500..2_500).contains(&swapped),
        "paced model swapped {swapped}"
    );
    let free = model_of(&pace::without_progress(&run));
    assert!(
        free.vmstat["pswpout"] > 6_000,
        "{:?}",
        free.vmstat.get("pswpout")
    );
}

/// mixed-file-anon-2p on 6.12 with the classical LRU, boot 1 of
/// validation/results/2026-11-27-smp2-flushes: its kernel's first periodic memcg statistics
/// flush fell 1.157 s into the replay, and it swapped out 6,693 pages, the most of its cell's
/// five boots (5,332..5,581 for the others).
const MIXED_612: &str = include_str!("fixtures/mixed-file-anon-2p-6.12-classic-1.log");

/// Flushing where the boot's kernel flushed (the traced `flush_memcg_stats_dwork`), the model
/// swaps out what that boot did; at the four phases of `FLUSH_TIME` that stood for an unknown
/// phase it swaps out a fifth less.
#[test]
fn flushing_where_the_boots_kernel_did_the_model_swaps_out_what_it_did() {
    let w = suite::workload("mixed-file-anon-2p").unwrap();
    let (rep, run) = recorded(&w, MIXED_612, "kernel 6.12 classic");
    assert_eq!(run.vmstat["pswpout"], 6_693);
    let (first, period) = pace::flush_schedule(&run).expect("the boot traced its flushes");
    assert_eq!(
        first / 1_000_000,
        1_156,
        "first flush {first} ns after the go"
    );
    assert!((2_000_000_000..2_050_000_000).contains(&period), "{period}");
    let pswpout = |r: &Counters| {
        model_of_boot(&w, &rep, KernelKey::V6_12, Mode::Classic, r).vmstat["pswpout"] as f64
    };
    let traced = pswpout(&run);
    assert!(
        (traced - 6_693.0).abs() / 6_693.0 < 0.03,
        "model with the boot's flushes swapped out {traced}"
    );
    let untraced = Counters {
        memcg_flush_us: None,
        ..run.clone()
    };
    let phases = pswpout(&untraced);
    assert!(
        phases < 0.9 * 6_693.0,
        "model at four phases swapped out {phases}"
    );
}
