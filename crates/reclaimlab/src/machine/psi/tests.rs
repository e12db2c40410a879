use super::*;

const S: u64 = 1_000_000_000;
const RUN: u8 = TSK_RUNNING;
const STALL: u8 = TSK_MEMSTALL | TSK_RUNNING | TSK_MEMSTALL_RUNNING;
const IO: u8 = TSK_IOWAIT;

/// One root group over `cpus` CPUs with a task per entry of `task_cpus`.
fn system(cpus: usize, task_cpus: &[u32]) -> Psi {
    let mut p = Psi::new(cpus, &[None]);
    for &c in task_cpus {
        p.add_task(c, 0);
    }
    p
}

#[test]
fn calc_load_matches_the_fixed_point_formula_by_hand() {
    // One 2 s period 100% stalled from 0: pct = 100 * 2048 = 204800.
    // avg10: (204800 * (2048 - 1677) + 2047) / 2048 = 75_982_847 / 2048 = 37100.
    assert_eq!(calc_load(0, EXP_10S, 204_800), 37_100);
    // avg60: (204800 * 67 + 2047) / 2048 = 6700; avg300: (204800 * 14 + 2047) / 2048 = 1400.
    assert_eq!(calc_load(0, EXP_60S, 204_800), 6_700);
    assert_eq!(calc_load(0, EXP_300S, 204_800), 1_400);
    // Printed as LOAD_INT.LOAD_FRAC: 37100 = 18 * 2048 + 236, 236 * 100 >> 11 = 11.
    assert_eq!(avg_value(37_100), 18.11);
    assert_eq!(avg_value(6_700), 3.27);
    assert_eq!(avg_value(1_400), 0.68);
    // Decay with no stall (active 0 < load: no rounding up): 37100 * 1677 / 2048 = 30379.
    assert_eq!(calc_load(37_100, EXP_10S, 0), 30_379);
}

#[test]
fn fixed_power_int_rounds_each_product() {
    // 1677^2 / 2048 = 2_812_329 / 2048 = 1373.21 -> (2_812_329 + 1024) >> 11 = 1373.
    assert_eq!(fixed_power_int(EXP_10S, FSHIFT, 2), 1373);
    assert_eq!(fixed_power_int(EXP_10S, FSHIFT, 1), EXP_10S);
    assert_eq!(fixed_power_int(EXP_10S, FSHIFT, 0), FIXED_1);
    // Three missed periods: 1677^3 -> 1677, x = 1373, (1677 * 1373 + 1024) >> 11 = 1124;
    // 37100 * 1124 / 2048 = 20361 (three separate calc_load steps would give 20368).
    assert_eq!(fixed_power_int(EXP_10S, FSHIFT, 3), 1124);
    assert_eq!(calc_load_n(37_100, EXP_10S, 0, 3), 20_361);
}

#[test]
fn an_idle_system_has_no_stall_and_stops_its_clock() {
    let mut p = system(2, &[0, 1]);
    let m = p.show(0, 100 * S);
    assert_eq!(m, PsiMemory::default());
    assert!(p.groups[0].work_at.is_none());
}

#[test]
fn running_tasks_and_plain_io_are_no_memory_stall() {
    let mut p = system(1, &[0, 0]);
    p.set(0, 0, RUN);
    p.set(0, 1, RUN);
    p.set(S, 1, IO);
    p.set(3 * S, 1, RUN);
    let m = p.show(0, 10 * S);
    assert_eq!(m.some.total_us, 0);
    assert_eq!(m.full.total_us, 0);
}

#[test]
fn a_lone_stalled_task_is_full_and_a_productive_neighbour_makes_it_some() {
    // Alone on its CPU: 1 s of stall is 1 s of some and of full.
    let mut p = system(1, &[0, 0]);
    p.set(0, 0, RUN);
    p.set(S, 0, STALL);
    p.set(2 * S, 0, RUN);
    p.set(3 * S, 0, 0);
    let m = p.show(0, 3 * S);
    assert_eq!(m.some.total_us, 1_000_000);
    assert_eq!(m.full.total_us, 1_000_000);
    // Another task runs productively on the same CPU from 4 s: a stall from 5 s to 6 s is
    // some only; a task in plain I/O does not keep it from being full (6 s to 7 s).
    p.set(4 * S, 1, RUN);
    p.set(4 * S, 0, RUN);
    p.set(5 * S, 0, STALL);
    p.set(6 * S, 1, IO);
    p.set(7 * S, 0, RUN);
    p.set(7 * S, 1, 0);
    p.set(7 * S, 0, 0);
    let m = p.show(0, 8 * S);
    assert_eq!(m.some.total_us, 3_000_000);
    assert_eq!(m.full.total_us, 2_000_000);
    assert!(m.full.total_us <= m.some.total_us);
}

#[test]
fn cpus_are_weighted_by_their_non_idle_time() {
    // CPU 0 is stalled for the whole 2 s; CPU 1 runs productively for the same 2 s: the
    // system-wide share is (2 s * 500 + 0 * 500) / 1000 jiffies = 1 s (collect_percpu_times).
    let mut p = system(2, &[0, 1]);
    p.set(0, 0, STALL);
    p.set(0, 1, RUN);
    p.set(2 * S, 0, 0);
    p.set(2 * S, 1, 0);
    let m = p.show(0, 2 * S);
    assert_eq!(m.some.total_us, 1_000_000);
    assert_eq!(m.full.total_us, 1_000_000);
}

#[test]
fn a_stall_counts_in_every_ancestor_group() {
    // Root 0, /a = 1, /a/b = 2, /c = 3.
    let mut p = Psi::new(1, &[None, Some(0), Some(1), Some(0)]);
    let t = p.add_task(0, 2);
    p.add_task(0, 3);
    p.set(0, t, STALL);
    p.set(S, t, 0);
    for g in [0, 1, 2] {
        assert_eq!(p.show(g, 2 * S).some.total_us, 1_000_000, "group {g}");
    }
    assert_eq!(p.show(3, 2 * S).some.total_us, 0);
}

#[test]
fn averages_follow_the_2s_period_like_psi_c() {
    // A task stalled without a break from 0: the first averaging work runs at PSI_FREQ
    // (2.004 s) and samples 100% over that period; reading at 2.004 s shows avg10 = 18.11,
    // avg60 = 3.27 and avg300 = 0.68 (the hand computation in the first test).
    let mut p = system(1, &[0]);
    p.set(0, 0, STALL);
    let m = p.show(0, PSI_PERIOD_NS);
    assert_eq!(
        (m.some.avg10, m.some.avg60, m.some.avg300),
        (18.11, 3.27, 0.68)
    );
    assert_eq!(m.full.avg10, 18.11);
    assert_eq!(m.some.total_us, PSI_PERIOD_NS / 1000);
    // The next work is at avg_next_update (4.008 s) + 1 jiffy, and samples 100% again:
    // avg10 = (37100 * 1677 + 204800 * 371 + 2047) / 2048 = 67480 = 32 * 2048 + 1944,
    // 1944 * 100 >> 11 = 94: 32.94.
    let m = p.show(0, 2 * PSI_PERIOD_NS + NS_PER_JIFFY);
    assert_eq!(calc_load(37_100, EXP_10S, 204_800), 67_480);
    assert_eq!(m.some.avg10, avg_value(67_480));
    assert_eq!(m.some.avg10, 32.94);
}

#[test]
fn averages_decay_over_missed_periods_once_the_stall_ends() {
    let mut p = system(1, &[0]);
    p.set(0, 0, STALL);
    p.set(PSI_PERIOD_NS, 0, 0);
    let m = p.show(0, PSI_PERIOD_NS);
    assert_eq!(m.some.avg10, 18.11);
    // Idle from then: the clock stops after one more work; a read 40 s later folds the missed
    // periods into the decay (e^-4 of the peak), and avg10 has fallen below a tenth of it.
    let later = p.show(0, PSI_PERIOD_NS + 40 * S);
    assert!(later.some.avg10 < 1.82, "{later:?}");
    assert!(later.some.avg300 > 0.0);
    assert_eq!(later.some.total_us, m.some.total_us);
}

#[test]
fn text_is_the_kernels_format() {
    let m = PsiMemory {
        some: PsiLine {
            total_us: 1234,
            avg10: 18.11,
            avg60: 3.27,
            avg300: 0.68,
        },
        full: PsiLine::default(),
    };
    assert_eq!(
        m.text(),
        "some avg10=18.11 avg60=3.27 avg300=0.68 total=1234\n\
         full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    );
}
