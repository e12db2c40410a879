//! `--agent` parsing and printing, and `reclaimlab save-memory`: memory saved against
//! slowdown for each agent over a grid of its main parameter, the Pareto frontier, and the
//! most memory saved within a slowdown budget.

use clap::Args;
use reclaimlab::agents::{effect, AgentEffect, AgentSpec};
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::{micro, Scenario, Stream};
use std::sync::Mutex;

/// Parses every `--agent` given.
pub fn parse_agents(given: &[String]) -> Result<Vec<AgentSpec>, String> {
    given.iter().map(|g| g.parse::<AgentSpec>()).collect()
}

/// The lines `run --agent` prints after the counters.
pub fn print_effect(r: &RunResult) {
    for a in &r.agents {
        outln!(
            "  agent {:<28} wakeups {}, reclaim requests {} ({} KiB), memory.high writes {}, lru_gen writes {}, kills {}, errors {}",
            a.agent,
            a.wakeups,
            a.reclaim_requests,
            a.reclaim_requested_bytes / 1024,
            a.memory_high_writes,
            a.lru_gen_writes,
            a.kills,
            a.errors
        );
    }
    if let Some(e) = &r.vs_no_agents {
        outln!(
            "  vs. no agents: slowdown {:+.2}% ({:.0} -> {:.0} accesses/s)",
            e.slowdown * 100.0,
            e.baseline_ops_per_sec,
            e.ops_per_sec
        );
        for m in &e.memcgs {
            outln!(
                "  memcg {:<22} mean memory.current {:.0} -> {:.0} pages ({:+.2}% saved)",
                m.path,
                m.baseline_mean_pages,
                m.mean_pages,
                m.saved * 100.0
            );
        }
    }
    if let Some(p) = &r.psi {
        out!("  /proc/pressure/memory\n{}", indent(&p.memory.text()));
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

#[derive(Args)]
pub struct SaveMemoryArgs {
    /// A built-in scenario (see `reclaimlab scenarios`).
    pub scenario: String,
    /// Size of the scenario (default: the scenario's default scale).
    #[arg(long)]
    pub scale: Option<f64>,
    /// Comma-separated kernel policies to study (lru-gen-age runs under mglru only).
    #[arg(long, default_value = "classic,mglru")]
    pub policies: String,
    /// Comma-separated agents: senpai, memory-high, lru-gen-age, damon-reclaim.
    #[arg(long, default_value = "senpai,memory-high,lru-gen-age,damon-reclaim")]
    pub agents: String,
    /// Repeat every thread's work until this many simulated seconds (a time-based run; 0: the
    /// scenario's own fixed amount of work). Agents need tens of seconds to act.
    #[arg(long, default_value_t = 0.0)]
    pub duration: f64,
    /// Report the most memory saved with at most this slowdown, percent.
    #[arg(long, default_value_t = 5.0)]
    pub max_slowdown: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel runs.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Print every point as JSON.
    #[arg(long)]
    pub json: bool,
}

/// An agent's main parameter and the grid the study sweeps, with the fixed settings the study
/// gives it (each explained in docs/operators.md).
fn grid(agent: &str) -> Option<(&'static str, &'static [&'static str], &'static str)> {
    Some(match agent {
        // senpai.py's target: stall µs per 6 s interval; the 100 MiB floor exceeds the scaled
        // scenarios, so the study lowers it to 0.
        "senpai" => (
            "pressure",
            &["1000", "10000", "100000", "1000000"],
            "min_size=0",
        ),
        // memory.high scales multiplicatively: a floor of 0 could never grow again, so the
        // study keeps a 1 MiB floor.
        "memory-high" => (
            "pressure",
            &["1000", "10000", "100000", "1000000"],
            "min_size=1M",
        ),
        // Generations older than `age` seconds go (aging every age/2, its default).
        "lru-gen-age" => ("age", &["2", "5", "10", "30"], ""),
        // min_age in µs; default watermarks keep DAMON_RECLAIM off on a full machine (free
        // memory < 20%), so the study turns them off (`wmarks=no`).
        "damon-reclaim" => (
            "min_age",
            &["1000000", "5000000", "10000000", "30000000"],
            "wmarks=no",
        ),
        _ => return None,
    })
}

/// One point of the study.
#[derive(Clone, Debug)]
pub struct Point {
    pub policy: String,
    pub agent: String,
    pub param: String,
    pub value: String,
    pub slowdown: f64,
    pub saved: f64,
    pub psi_some_us: u64,
    pub refaults: u64,
    pub effect: AgentEffect,
}

/// Makes every thread repeat its work until `end_ns` (a time-based run).
fn time_based(mut scn: Scenario, end_ns: u64) -> Scenario {
    for t in &mut scn.threads {
        let s = std::mem::replace(&mut t.stream, Stream::Actions(Vec::new()));
        let repeated = match s {
            Stream::Phases(phases) => Stream::Rounds {
                phases,
                rounds: u64::MAX,
                unmap: None,
                sleep_ns: 0,
            },
            Stream::Rounds {
                phases,
                unmap,
                sleep_ns,
                ..
            } => Stream::Rounds {
                phases,
                rounds: u64::MAX,
                unmap,
                sleep_ns,
            },
            Stream::Script(mut sc) => {
                sc.rounds = u64::MAX;
                Stream::Script(sc)
            }
            other => other,
        };
        t.stream = Stream::Until {
            end_ns,
            stream: Box::new(repeated),
        };
    }
    scn
}

/// The refaults of a run (file and anon).
fn refaults(r: &RunResult) -> u64 {
    ["workingset_refault_file", "workingset_refault_anon"]
        .iter()
        .map(|k| r.vmstat.get(*k).copied().unwrap_or(0))
        .sum()
}

/// The Pareto frontier of (slowdown, saved): no other point saves more for no more slowdown.
pub fn frontier(points: &[Point]) -> Vec<&Point> {
    let mut f: Vec<&Point> = points
        .iter()
        .filter(|p| {
            !points.iter().any(|q| {
                (q.slowdown <= p.slowdown && q.saved > p.saved)
                    || (q.slowdown < p.slowdown && q.saved >= p.saved)
            })
        })
        .collect();
    f.sort_by(|a, b| a.slowdown.total_cmp(&b.slowdown));
    f
}

/// The point that saves the most memory with at most `max` slowdown (a fraction).
pub fn best_within(points: &[Point], max: f64) -> Option<&Point> {
    points
        .iter()
        .filter(|p| p.slowdown <= max)
        .max_by(|a, b| a.saved.total_cmp(&b.saved))
}

pub fn cmd_save_memory(a: SaveMemoryArgs) -> Result<(), String> {
    let scale = a
        .scale
        .unwrap_or_else(|| micro::default_scale(&a.scenario).unwrap_or(1.0));
    let mut scn = micro::builtin(&a.scenario, scale)?;
    if a.duration < 0.0 || !a.duration.is_finite() {
        return Err(format!("--duration {}: expected seconds >= 0", a.duration));
    }
    if a.duration > 0.0 {
        scn = time_based(scn, (a.duration * 1e9) as u64);
    }
    if a.max_slowdown.is_nan() || a.max_slowdown < 0.0 {
        return Err(format!(
            "--max-slowdown {}: expected a percentage >= 0",
            a.max_slowdown
        ));
    }
    let policies: Vec<PolicySpec> = a
        .policies
        .split(',')
        .map(|p| p.trim().parse::<PolicySpec>())
        .collect::<Result<_, _>>()?;
    if let Some(p) = policies.iter().find(|p| p.kernel().is_none()) {
        return Err(format!(
            "--policies: {p} is a textbook cache: agents need a kernel policy"
        ));
    }
    let agents: Vec<&str> = a.agents.split(',').map(str::trim).collect();
    for ag in &agents {
        if grid(ag).is_none() {
            return Err(format!(
                "--agents: '{ag}' has no memory-saving grid (senpai, memory-high, lru-gen-age, damon-reclaim)"
            ));
        }
    }
    // The jobs: each policy's baseline, then each agent × grid value.
    let mut jobs: Vec<(usize, Option<AgentSpec>)> = Vec::new();
    for (pi, p) in policies.iter().enumerate() {
        jobs.push((pi, None));
        for ag in &agents {
            let (param, values, fixed) = grid(ag).expect("checked");
            if *ag == "lru-gen-age" && !matches!(p, PolicySpec::Mglru(_)) {
                continue;
            }
            for v in values {
                let spec: AgentSpec = format!("{ag}:{param}={v},{fixed}").parse()?;
                // The grid's parameter first, the study's fixed settings after it.
                jobs.push((pi, Some(spec)));
            }
        }
    }
    let results: Vec<Mutex<Option<Result<RunResult, String>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..a.jobs.max(1) {
            s.spawn(|| loop {
                let j = {
                    let mut n = next.lock().expect("queue");
                    let j = *n;
                    *n += 1;
                    j
                };
                let Some((pi, agent)) = jobs.get(j) else {
                    break;
                };
                let opts = RunOptions {
                    seed: a.seed,
                    agents: agent.iter().cloned().collect(),
                    ..Default::default()
                };
                let r = run(&scn, policies[*pi], &opts);
                *results[j].lock().expect("slot") = Some(r);
            });
        }
    });
    let mut runs: Vec<RunResult> = Vec::new();
    for r in results {
        runs.push(r.into_inner().expect("slot").expect("ran")?);
    }
    let mut points = Vec::new();
    let mut base: Option<&RunResult> = None;
    for ((_, agent), r) in jobs.iter().zip(&runs) {
        let Some(spec) = agent else {
            base = Some(r);
            continue;
        };
        let b = base.expect("a baseline comes first");
        let e = effect(b, r);
        let root = e
            .memcgs
            .iter()
            .find(|m| m.path == "/")
            .map_or(0.0, |m| m.saved);
        let (param, value) = spec.params[0].clone();
        points.push(Point {
            policy: r.policy.clone(),
            agent: spec.name.clone(),
            param,
            value,
            slowdown: e.slowdown,
            saved: root,
            psi_some_us: r.psi.unwrap_or_default().memory.some.total_us,
            refaults: refaults(r),
            effect: e,
        });
    }
    if a.json {
        let v: Vec<serde_json::Value> = points
            .iter()
            .map(|q| {
                serde_json::json!({
                    "policy": q.policy,
                    "agent": q.agent,
                    "param": q.param,
                    "value": q.value,
                    "slowdown": q.slowdown,
                    "saved": q.saved,
                    "psi_some_us": q.psi_some_us,
                    "refaults": q.refaults,
                    "effect": serde_json::to_value(&q.effect).unwrap_or_default(),
                })
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    outln!(
        "save-memory {} (scale {}, seed {}{}): memory saved = 1 - mean memory.current / without agents (root cgroup); slowdown = mean request latency with / without - 1 if the scenario times requests, else throughput without / with - 1",
        scn.name,
        scale,
        a.seed,
        if a.duration > 0.0 {
            format!(", {} s time-based", a.duration)
        } else {
            String::new()
        }
    );
    for (pi, p) in policies.iter().enumerate() {
        let b = jobs
            .iter()
            .zip(&runs)
            .find(|((q, ag), _)| *q == pi && ag.is_none())
            .map(|(_, r)| r)
            .expect("baseline");
        let root_mean = b
            .memcgs
            .iter()
            .find(|m| m.path == "/")
            .map_or(0.0, |m| m.current_mean_pages);
        outln!(
            "\n{p}: without agents {:.0} accesses/s, mean memory.current {:.0} pages, refaults {}, psi some {} us",
            b.ops_per_sec,
            root_mean,
            refaults(b),
            b.psi.unwrap_or_default().memory.some.total_us
        );
        outln!(
            "  {:<14} {:<10} {:>10} {:>9} {:>10} {:>10} {:>12}",
            "agent",
            "param",
            "value",
            "saved",
            "slowdown",
            "refaults",
            "psi_some_us"
        );
        let mine: Vec<Point> = points
            .iter()
            .filter(|q| q.policy == p.to_string())
            .cloned()
            .collect();
        for q in &mine {
            outln!(
                "  {:<14} {:<10} {:>10} {:>8.2}% {:>9.2}% {:>10} {:>12}",
                q.agent,
                q.param,
                q.value,
                q.saved * 100.0,
                q.slowdown * 100.0,
                q.refaults,
                q.psi_some_us
            );
        }
        outln!("  frontier (saved vs slowdown):");
        for q in frontier(&mine) {
            outln!(
                "    {:>8.2}% slower, {:>7.2}% saved: {} {}={}",
                q.slowdown * 100.0,
                q.saved * 100.0,
                q.agent,
                q.param,
                q.value
            );
        }
        match best_within(&mine, a.max_slowdown / 100.0) {
            Some(q) => outln!(
                "  most memory saved with at most {}% slowdown: {:.2}% by {} {}={} ({:+.2}% slowdown)",
                a.max_slowdown,
                q.saved * 100.0,
                q.agent,
                q.param,
                q.value,
                q.slowdown * 100.0
            ),
            None => outln!(
                "  no agent setting stays within {}% slowdown",
                a.max_slowdown
            ),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(slowdown: f64, saved: f64) -> Point {
        Point {
            policy: "classic".into(),
            agent: "senpai".into(),
            param: "pressure".into(),
            value: format!("{slowdown}"),
            slowdown,
            saved,
            psi_some_us: 0,
            refaults: 0,
            effect: AgentEffect::default(),
        }
    }

    #[test]
    fn frontier_keeps_only_undominated_points() {
        let ps = vec![
            pt(0.01, 0.10),
            pt(0.02, 0.05),
            pt(0.05, 0.30),
            pt(0.03, 0.30),
        ];
        let f: Vec<(f64, f64)> = frontier(&ps)
            .iter()
            .map(|p| (p.slowdown, p.saved))
            .collect();
        assert_eq!(f, vec![(0.01, 0.10), (0.03, 0.30)]);
        let b = best_within(&ps, 0.025).expect("one within");
        assert_eq!((b.slowdown, b.saved), (0.01, 0.10));
        assert!(best_within(&ps, 0.001).is_none());
    }
}
