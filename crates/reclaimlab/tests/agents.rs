//! Agents attached to whole runs: they act through the kernel's interfaces, deterministically,
//! and save memory where memory is cold.

use reclaimlab::agents::{effect, AgentSpec};
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::micro::builtin;

fn go(scn: &str, scale: f64, policy: &str, agents: &[&str]) -> Result<RunResult, String> {
    run(
        &builtin(scn, scale).expect("scenario"),
        policy.parse().expect("policy"),
        &RunOptions {
            seed: 2,
            agents: agents
                .iter()
                .map(|a| a.parse::<AgentSpec>().expect("spec"))
                .collect(),
            ..Default::default()
        },
    )
}

fn root_mean(r: &RunResult) -> f64 {
    r.memcgs
        .iter()
        .find(|m| m.path == "/")
        .expect("root")
        .current_mean_pages
}

#[test]
fn damon_reclaim_takes_cold_app_memory_deterministically() {
    let agent = ["damon-reclaim:min_age=2000000,wmarks=no"];
    let base = go("android-launch", 1.0 / 64.0, "classic", &[]).expect("run");
    let a = go("android-launch", 1.0 / 64.0, "classic", &agent).expect("run");
    let b = go("android-launch", 1.0 / 64.0, "classic", &agent).expect("run");
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap(),
        "same inputs, same result"
    );
    let log = &a.agents[0];
    assert!(log.wakeups > 100 && log.reclaim_requests > 0, "{log:?}");
    let e = effect(&base, &a);
    let saved = e.memcgs.iter().find(|m| m.path == "/").unwrap().saved;
    assert!(saved > 0.2, "saved {saved}");
    assert!(root_mean(&a) < root_mean(&base));
}

#[test]
fn default_watermarks_keep_damon_reclaim_off_on_a_full_machine() {
    // DAMON_RECLAIM acts only while free memory is between its low (20%) and mid (40%)
    // watermarks: here only on the way from the empty machine to the full one (from the
    // 5 s check that finds free memory in range until free falls below 20%), a tenth or less
    // of the requests it makes without watermarks, and under half their saving.
    let base = go("android-launch", 1.0 / 64.0, "classic", &[]).expect("run");
    let a = go("android-launch", 1.0 / 64.0, "classic", &["damon-reclaim"]).expect("run");
    let free = go(
        "android-launch",
        1.0 / 64.0,
        "classic",
        &["damon-reclaim:wmarks=no"],
    )
    .expect("run");
    let (on, off) = (
        a.agents[0].reclaim_requests,
        free.agents[0].reclaim_requests,
    );
    assert!(
        on * 10 <= off && off > 100,
        "with watermarks {on}, without {off}"
    );
    let saved = |r: &RunResult| root_mean(&base) - root_mean(r);
    assert!(
        saved(&a) < 0.5 * saved(&free),
        "saved {} with watermarks, {} without",
        saved(&a),
        saved(&free)
    );
    assert!(root_mean(&free) < 0.9 * root_mean(&base));
}

#[test]
fn lru_gen_age_evicts_old_generations_under_mglru_and_is_refused_otherwise() {
    let base = go("android-launch", 1.0 / 64.0, "mglru", &[]).expect("run");
    let a = go(
        "android-launch",
        1.0 / 64.0,
        "mglru",
        &["lru-gen-age:age=4"],
    )
    .expect("run");
    assert!(a.agents[0].lru_gen_writes > 0 && a.agents[0].errors == 0);
    assert!(root_mean(&a) < 0.9 * root_mean(&base));
    let e = go("android-launch", 1.0 / 64.0, "classic", &["lru-gen-age"]).expect_err("classic");
    assert!(e.contains("needs an mglru policy"), "{e}");
}

#[test]
fn memory_high_writes_memory_high_and_the_run_without_agents_is_untouched() {
    let base = go("memcg-limit", 1.0, "classic", &[]).expect("run");
    let again = go("memcg-limit", 1.0, "classic", &[]).expect("run");
    assert_eq!(base, again);
    assert!(base.agents.is_empty() && base.vs_no_agents.is_none());
    let a = go("memcg-limit", 1.0, "classic", &["memory-high:min_size=1M"]).expect("run");
    assert!(a.agents[0].memory_high_writes > 0, "{:?}", a.agents[0]);
}
