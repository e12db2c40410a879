//! Console parsing against real recorded console logs (no boot), and the model side of a
//! recorded cell: these run in CI.

use reclaimlab_validate::console::{parse_console, to_run_result};
use reclaimlab_validate::fidelity::{metric, Counters};
use reclaimlab_validate::guest::{build_plan, Mode};
use reclaimlab_validate::packages::KernelKey;
use reclaimlab_validate::{check_guest_config, model, suite};

const PREAD_61: &str = include_str!("fixtures/file-pread-zipf-6.1-classic-1.log");

#[test]
fn parses_a_recorded_6_1_classic_log() {
    let r = parse_console(PREAD_61).unwrap();
    assert_eq!(r.release, "6.1.0-50-cloud-amd64");
    assert!(r.version.contains("6.1.176-1"));
    assert_eq!(r.records, 150_000);
    assert_eq!(r.config["lru_gen_enabled"], "0x0000");
    assert_eq!(r.config["memory.max /w"], "33554432");
    assert_eq!(r.procs.len(), 1);
    assert_eq!(r.procs[0].accesses, 150_000);
    assert_eq!(r.procs[0].misses, 25_412);
    assert!(!r.procs[0].killed);
    let w = &r.memcg_after["/w"];
    assert_eq!(w.current, 33_554_432);
    assert_eq!(w.max, Some(33_554_432));
    assert_eq!(w.stat["file"], 33_382_400);
    assert!(r.memcg_before["/w"].current < w.current);
    assert!(r.lru_gen_after.is_some());
    assert!(r.meminfo_before["MemTotal"] > 400_000);
    // Every page read is one 4 KiB read: pgpgin (KiB) = 4 x misses, plus one metadata block.
    assert_eq!(r.vmstat_delta("pgpgin"), 4 * 25_412 + 4);
    // The miss map agrees with the count.
    let bits = (0..150_000).filter(|&i| r.missed(i)).count();
    assert_eq!(bits, 25_412);
    let spec = suite::workload("file-pread-zipf").unwrap().machine;
    check_guest_config(&r, Mode::Classic, &spec).unwrap();
    assert!(check_guest_config(&r, Mode::Mglru, &spec)
        .unwrap_err()
        .contains("lru_gen"));
}

#[test]
fn recorded_log_in_the_result_schema() {
    let w = suite::workload("file-pread-zipf").unwrap();
    let (h, recs) = w.trace();
    let (_, plan) = build_plan(&h, &recs).unwrap();
    let rep = parse_console(PREAD_61).unwrap();
    let res = to_run_result(&rep, w.name, "kernel 6.1 classic", &plan);
    assert_eq!(res.accesses, 150_000);
    assert_eq!(res.misses, 25_412);
    assert_eq!(res.hits, 150_000 - 25_412);
    // All misses are pread misses of file pages: all need a read.
    assert_eq!(res.major, 25_412);
    assert_eq!(res.oom_kills, 0);
    // vmstat counters are changes over the replay, gauges values after it.
    assert_eq!(res.vmstat["pgpgin"], 4 * 25_412 + 4);
    assert_eq!(
        res.vmstat["nr_free_pages"],
        rep.vmstat_after["nr_free_pages"]
    );
    let mc = res.memcgs.iter().find(|m| m.path == "/w").unwrap();
    assert_eq!(mc.max_pages, Some(8192));
    assert_eq!(mc.current_pages, 8192);
    let c = Counters::of(&res);
    assert_eq!(metric(&c, "/w", "misses"), 25_412.0);
    assert_eq!(metric(&c, "/w", "pgscan"), mc.stat["pgscan"] as f64);
    assert!(metric(&c, "/w", "pgsteal") > 10_000.0);
    // JSON of the result schema, deterministic.
    let a = serde_json::to_string(&res).unwrap();
    assert_eq!(
        a,
        serde_json::to_string(&to_run_result(&rep, w.name, "kernel 6.1 classic", &plan)).unwrap()
    );
}

#[test]
fn the_model_sized_from_the_log_matches_it() {
    let w = suite::workload("file-pread-zipf").unwrap();
    let rep = parse_console(PREAD_61).unwrap();
    let s = model::sizing(&w.machine, std::slice::from_ref(&rep)).unwrap();
    assert_eq!(s.memcgs["/w"].limit_pages, 8192);
    assert_eq!(s.memcgs["/w"].overhead_pages, 42.0);
    assert_eq!(
        s.memcgs["/w"].model_max_pages, 8152,
        "8192 − 40 pages of kernel memory the model does not charge (42 less 2 of page tables)"
    );
    let (h, recs) = w.trace();
    let m = model::run_model(
        w.name,
        &w.machine,
        &s,
        &h,
        &recs,
        KernelKey::V6_1,
        Mode::Classic,
        &[],
    )
    .unwrap();
    assert_eq!(m.policy, "classic:6.1");
    let err = (m.misses as f64 - 25_412.0) / 25_412.0;
    assert!(err.abs() < 0.02, "model {} vs kernel 25412", m.misses);
}

#[test]
fn malformed_logs_are_errors() {
    assert!(parse_console("")
        .unwrap_err()
        .contains("never reached /init"));
    let cut = &PREAD_61[..PREAD_61.find("=== misses ===").unwrap()];
    let e = parse_console(cut).unwrap_err();
    assert!(e.contains("ends before the replay finished"), "{e}");
    assert!(e.contains("meminfo after"), "{e}");
    let failed = "=== reclaimlab guest v1 ===\n=== guest error ===\ninsmod /lib/modules/zram.ko\n";
    assert_eq!(
        parse_console(failed).unwrap_err(),
        "guest failed: insmod /lib/modules/zram.ko"
    );
    let bad = PREAD_61.replace("pgscan_kswapd 0", "pgscan_kswapd zero");
    assert!(parse_console(&bad)
        .unwrap_err()
        .contains("bad number 'zero'"));
    let short = PREAD_61.replace("pid 1 accesses 150000", "pid 1 accesses 149999");
    assert!(parse_console(&short)
        .unwrap_err()
        .contains("accesses reported"));
}

/// A kernel that died of an `int3` trap (live patching raced by the other vCPU) is told apart
/// from one that died otherwise: the harness boots it again.
#[test]
fn an_int3_oops_is_recognised() {
    use reclaimlab_validate::console::int3_oops;
    let cut = &PREAD_61[..PREAD_61.find("=== misses ===").unwrap()];
    let died = format!(
        "{cut}[    4.254977] Oops: int3: 0000 [#1] SMP NOPTI\n\
         [    4.256124] RIP: 0010:get_random_u32+0x25/0x170\n\
         [    4.262016] Kernel panic - not syncing: Fatal exception in interrupt\n"
    );
    assert!(int3_oops(&died));
    assert!(parse_console(&died).is_err());
    let other = died.replace("Oops: int3", "Oops: general protection fault");
    assert!(!int3_oops(&other));
    assert!(!int3_oops(PREAD_61));
}

#[test]
fn kernel_messages_and_carriage_returns_are_ignored() {
    let noisy = PREAD_61.replace('\n', "\r\n").replace(
        "=== misses ===",
        "[   12.345678] Memory cgroup out of memory: Killed process 1\r\n=== misses ===",
    );
    let a = parse_console(&noisy).unwrap();
    let b = parse_console(PREAD_61).unwrap();
    assert_eq!(a, b);
}

const ANON_72: &str = include_str!("fixtures/anon-zipf-zram-7.2-mglru-1.log");

#[test]
fn parses_a_recorded_7_2_mglru_zram_log() {
    let w = suite::workload("anon-zipf-zram").unwrap();
    let r = parse_console(ANON_72).unwrap();
    assert!(r.release.starts_with("7.2.13"));
    assert_eq!(r.config["lru_gen_enabled"], "0x0007");
    assert_eq!(r.config["swap_kb"], "262140");
    check_guest_config(&r, Mode::Mglru, &w.machine).unwrap();
    let lru_gen = r.lru_gen_after.as_deref().unwrap();
    assert!(lru_gen.contains("/w"), "{lru_gen}");
    assert_eq!(r.vmstat_delta("pswpin"), 14_502);
    assert_eq!(r.memcg_after["/w"].swap_current, Some(16_969_728));
    let (h, recs) = w.trace();
    let (_, plan) = build_plan(&h, &recs).unwrap();
    assert_eq!(r.records, plan.len() as u64);
    let res = to_run_result(&r, w.name, "kernel 7.2 mglru", &plan);
    assert_eq!(res.misses, 26_790);
    // Misses are the 12,288 first touches plus one swap-in per major fault: the per-access
    // count, the miss map and the kernel's counters agree.
    assert_eq!(res.major, 14_502);
    assert_eq!(res.major, res.vmstat["pswpin"]);
    let mc = res.memcgs.iter().find(|m| m.path == "/w").unwrap();
    assert_eq!(mc.stat["pgmajfault"], 14_502);
    assert_eq!(mc.swap_pages, 16_969_728 / 4096);
    assert_eq!(res.lru_gen.as_deref(), Some(lru_gen));
}
