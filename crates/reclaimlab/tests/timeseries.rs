//! `RunOptions::sample_ns`: the time series is taken on the grid of simulated times, holds
//! the counters it promises, and never changes the run: with and without sampling the result's
//! JSON is byte for byte the same but for `timeseries`.

use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::micro;

fn json_without_timeseries(r: &reclaimlab::metrics::RunResult) -> String {
    let mut r = r.clone();
    r.timeseries = None;
    serde_json::to_string_pretty(&r).unwrap()
}

#[test]
fn sampling_never_changes_a_run() {
    for (scenario, scale, policy) in [
        ("memcg-limit", 0.25, "mglru:7.2"),
        ("memcg-limit", 0.25, "classic:6.12"),
        ("mixed-rw", 0.125, "mglru:6.1"),
        ("file-anon-mix-mini", 0.25, "mglru:7.1"),
        ("zipf", 0.125, "lru"),
    ] {
        let scn = micro::builtin(scenario, scale).unwrap();
        let plain = run(
            &scn,
            policy.parse().unwrap(),
            &RunOptions {
                seed: 3,
                ..Default::default()
            },
        )
        .unwrap();
        // A prime interval, so samples fall between events as often as on them.
        let sampled = run(
            &scn,
            policy.parse().unwrap(),
            &RunOptions {
                seed: 3,
                sample_ns: Some(7_000_003),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(plain.timeseries.is_none());
        let ts = sampled.timeseries.as_ref().expect("sampled");
        assert_eq!(
            json_without_timeseries(&sampled),
            serde_json::to_string_pretty(&plain).unwrap(),
            "{scenario} {policy}: sampling changed the run"
        );
        // Samples at 0, N, 2N, ... up to the end of the run.
        assert!(ts.samples.len() >= 2, "{scenario} {policy}");
        for (i, s) in ts.samples.iter().enumerate() {
            assert_eq!(s.time_ns, i as u64 * 7_000_003);
        }
        let last = ts.samples.last().unwrap().time_ns;
        assert!(last <= plain.sim_time_ns.max(last) && last + 7_000_003 > plain.sim_time_ns);
        let col = |name: &str| ts.columns.iter().position(|c| c == name);
        if policy == "lru" {
            assert!(col("vmstat.evictions").is_some());
            continue;
        }
        // Event counters never go down, and end at most at the run's final value.
        let pgfault = col("vmstat.pgfault").expect("vmstat.pgfault sampled");
        let values: Vec<u64> = (0..ts.samples.len())
            .map(|r| ts.value(r, pgfault).unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        assert!(*values.last().unwrap() <= plain.vmstat["pgfault"]);
        assert!(*values.last().unwrap() > 0);
        for mc in &plain.memcgs {
            assert!(col(&format!("memcg.{}.memory.current", mc.path)).is_some());
            assert!(col(&format!("memcg.{}.memory.stat.anon", mc.path)).is_some());
        }
        // PSI's stall totals never go down and end at most at the run's final totals.
        let some = col("psi.memory.some.total_us").expect("psi sampled");
        let full = col("psi.memory.full.total_us").expect("psi sampled");
        let stall: Vec<(u64, u64)> = (0..ts.samples.len())
            .map(|r| (ts.value(r, some).unwrap(), ts.value(r, full).unwrap()))
            .collect();
        assert!(stall
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert!(
            stall.iter().all(|&(s, f)| f <= s),
            "full <= some: {stall:?}"
        );
        let psi = plain.psi.expect("a kernel policy reports PSI").memory;
        assert!(stall.last().unwrap().0 <= psi.some.total_us);
        let gens = ts
            .columns
            .iter()
            .filter(|c| c.starts_with("lru_gen."))
            .count();
        if policy.starts_with("mglru") {
            assert!(
                col("lru_gen./.node0.gen0.file_pages").is_some(),
                "{scenario} {policy}"
            );
            assert!(col("lru_gen./.node0.max_seq").is_some());
        } else {
            assert_eq!(gens, 0);
        }
    }
}

#[test]
fn memcg_usage_over_time_stays_under_its_limit() {
    let scn = micro::builtin("memcg-limit", 0.25).unwrap();
    let r = run(
        &scn,
        "mglru:7.2".parse().unwrap(),
        &RunOptions {
            seed: 1,
            sample_ns: Some(10_000_000),
            ..Default::default()
        },
    )
    .unwrap();
    let limited = r.memcgs.iter().find(|m| m.max_pages.is_some()).unwrap();
    let ts = r.timeseries.unwrap();
    let c = ts
        .columns
        .iter()
        .position(|c| *c == format!("memcg.{}.memory.current", limited.path))
        .unwrap();
    let peak = (0..ts.samples.len())
        .filter_map(|row| ts.value(row, c))
        .max()
        .unwrap();
    let limit = limited.max_pages.unwrap() * 4096;
    assert!(peak <= limit, "{peak} > {limit}");
    assert!(
        peak > limit / 2,
        "the memcg filled up to its limit: {peak} of {limit}"
    );
}
