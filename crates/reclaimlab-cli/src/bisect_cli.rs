//! `reclaimlab bisect`: which MGLRU switch between a good and a bad policy moves a metric
//! (issue 15). The search is `reclaimlab::bisect`; this file builds the states (policies), runs
//! their seeds through compare's machinery (parallel, kept in and reused from the results
//! store) and reports.

use crate::{compare_runs, fmt_num, with_mglru_options, CompareArgs, WorkloadArgs};
use clap::Args;
use reclaimlab::behaviour::Behaviours;
use reclaimlab::bisect::{bisect, differs, Found, Outcome, Verdict};
use reclaimlab::metrics::RunResult;
use reclaimlab::policy::mglru::{MglruConfig, Switch};
use reclaimlab::sim::PolicySpec;
use reclaimlab::stats::{fmt_pct, summary, welch_relative_change};
use reclaimlab::workload::Scenario;
use std::path::PathBuf;

#[derive(Args)]
pub struct BisectArgs {
    #[command(flatten)]
    w: WorkloadArgs,
    /// The policy where the metric is as before, e.g. mglru:7.1.
    #[arg(long)]
    good: String,
    /// The policy where the metric has moved, e.g. mglru:7.2.
    #[arg(long)]
    bad: String,
    /// The metric: a name of compare's table (e.g. "ops/s", oom_kills, pgscan) or a path into
    /// the run's JSON result (e.g. vmstat.workingset_refault_file, cpu.sys_ns,
    /// memcgs[/w].stat.pgsteal).
    #[arg(long)]
    metric: String,
    /// Seeds per step (seed, seed+1, ...); each step is judged by Welch's 95% test against
    /// both ends.
    #[arg(long, default_value_t = 6)]
    seeds: u64,
    /// Bisect these behaviours, in this order, instead of every one that differs (each must
    /// differ between --good and --bad); comma-separated.
    #[arg(long, value_delimiter = ',')]
    behaviours: Vec<String>,
    /// Parallel runs within a step (0 = all cores); results are identical to a serial run.
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Print the outcome as JSON: culprit, the steps and their intervals.
    #[arg(long)]
    json: bool,
    /// The results store (as compare's): finished runs are kept and reused.
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Neither read nor write the results store.
    #[arg(long)]
    no_store: bool,
}

/// The behaviours of a kernel policy, or an error saying why bisect cannot take it.
fn behaviours_of(spec: &PolicySpec, which: &str) -> Result<Behaviours, String> {
    match spec {
        PolicySpec::Classic(k, _) => Ok(k.behaviours),
        PolicySpec::Mglru(c) => Ok(c.switches),
        PolicySpec::Textbook(_) => Err(format!(
            "--{which} {spec}: bisect walks the behaviours of kernels; give a classic or mglru policy"
        )),
    }
}

/// Refuses ends that differ in more than behaviours: the kind of policy, MGLRU's `enabled`
/// and `min_ttl_ms`, or a memcg walk chosen by hand (`@WALK` on either end; the walk a kernel
/// defaults to follows `memcg-lru`, a behaviour).
fn check_ends(good: &PolicySpec, bad: &PolicySpec) -> Result<(), String> {
    let differ = |what: &str| {
        Err(format!(
            "--good {good} and --bad {bad} differ in more than behaviours ({what}): bisect walks \
             behaviours only"
        ))
    };
    match (good, bad) {
        (PolicySpec::Classic(_, gw), PolicySpec::Classic(_, bw)) if gw != bw => {
            differ("the memcg walk")
        }
        (PolicySpec::Classic(..), PolicySpec::Classic(..)) => Ok(()),
        (PolicySpec::Mglru(g), PolicySpec::Mglru(b)) => {
            if (g.enabled, g.min_ttl_ms) != (b.enabled, b.min_ttl_ms) {
                return differ("lru_gen enabled or min_ttl_ms");
            }
            let defaulted =
                |c: &MglruConfig| c.memcg_walk == MglruConfig::default_memcg_walk(c.switches);
            if !(defaulted(g) && defaulted(b)) && g.memcg_walk != b.memcg_walk {
                return differ("the memcg walk");
            }
            Ok(())
        }
        _ => differ("classic against MGLRU: the whole reclaim algorithm"),
    }
}

/// The behaviours between good and bad, in bisect order (or the order of --behaviours): by
/// first kernel and series order when the bad end gains them, newest first when it loses
/// them (so a behaviour goes after those it requires). Between classic policies, only those
/// the classical path reads.
fn changes(
    good: Behaviours,
    bad: Behaviours,
    classic: bool,
    listed: &[String],
) -> Result<Vec<Switch>, String> {
    let differ = |w: Switch| good.has(w) != bad.has(w) && (!classic || w.outside_mglru());
    if listed.is_empty() {
        let (mut gained, mut lost): (Vec<Switch>, Vec<Switch>) = Switch::BISECT_ORDER
            .into_iter()
            .filter(|&w| differ(w))
            .partition(|&w| bad.has(w));
        lost.reverse();
        gained.extend(lost);
        return Ok(gained);
    }
    let mut out = Vec::new();
    for name in listed {
        let w: Switch = name.parse()?;
        if !differ(w) {
            return Err(format!(
                "--behaviours: '{w}' is the same in --good and --bad: it cannot be the change"
            ));
        }
        if out.contains(&w) {
            return Err(format!("--behaviours: '{w}' is listed twice"));
        }
        out.push(w);
    }
    Ok(out)
}

/// The behaviours of state `k`: good's with the first `k` changes set as in bad.
fn state_behaviours(good: Behaviours, bad: Behaviours, changes: &[Switch], k: usize) -> Behaviours {
    changes[..k].iter().fold(
        good,
        |s, &w| {
            if bad.has(w) {
                s.with(w)
            } else {
                s.without(w)
            }
        },
    )
}

/// The good policy with behaviours `b` (and, where the walk is the kernel's default, the walk
/// they default to).
fn with_behaviours(good: &PolicySpec, b: Behaviours) -> PolicySpec {
    match *good {
        PolicySpec::Classic(mut k, w) => {
            k.behaviours = b;
            PolicySpec::Classic(k, w)
        }
        PolicySpec::Mglru(mut c) => {
            if c.memcg_walk == MglruConfig::default_memcg_walk(c.switches) {
                c.memcg_walk = MglruConfig::default_memcg_walk(b);
            }
            c.switches = b;
            PolicySpec::Mglru(c)
        }
        PolicySpec::Textbook(_) => *good,
    }
}

/// One value of `path` in a run: a metric of compare's table, or a path into its JSON.
pub fn metric_value(r: &RunResult, path: &str) -> Result<f64, String> {
    if let Some((_, v)) = r.metrics().into_iter().find(|(k, _)| k == path) {
        return Ok(v);
    }
    let json = serde_json::to_value(r).map_err(|e| e.to_string())?;
    let mut v = &json;
    for seg in path.split('.') {
        let (name, key) = match seg.split_once('[') {
            Some((n, rest)) => (n, rest.strip_suffix(']')),
            None => (seg, None),
        };
        v = v.get(name).ok_or_else(|| {
            format!("--metric {path}: the result has no '{name}' (see `run --json`)")
        })?;
        if let Some(key) = key {
            let arr = v
                .as_array()
                .ok_or_else(|| format!("--metric {path}: '{name}' is not a list"))?;
            let named = |e: &&serde_json::Value| {
                ["path", "process", "name"]
                    .iter()
                    .any(|f| e.get(f).and_then(|x| x.as_str()) == Some(key))
            };
            v = match key.parse::<usize>() {
                Ok(i) => arr.get(i),
                Err(_) => arr.iter().find(named),
            }
            .ok_or_else(|| format!("--metric {path}: no '{key}' in '{name}'"))?;
        }
    }
    v.as_f64()
        .ok_or_else(|| format!("--metric {path}: not a number in the result"))
}

struct Runner<'a> {
    scn: &'a Scenario,
    seeds: Vec<u64>,
    cargs: CompareArgs,
    metric: &'a str,
}

impl Runner<'_> {
    fn samples(&self, spec: PolicySpec) -> Result<Vec<f64>, String> {
        let runs = compare_runs(self.scn, &[spec], &self.seeds, &self.cargs)?;
        runs[0]
            .iter()
            .map(|r| metric_value(r, self.metric))
            .collect()
    }
}

/// Mean and 95% CI of samples, as text.
fn interval(xs: &[f64]) -> String {
    let s = summary(xs);
    format!(
        "{} [{} .. {}]",
        fmt_num(s.mean),
        fmt_num(s.ci95_low),
        fmt_num(s.ci95_high)
    )
}

/// Welch's 95% CI of `other` against `base`, relative where defined, as text.
fn change(base: &[f64], other: &[f64]) -> String {
    match welch_relative_change(base, other) {
        Some(w) => {
            let ci = match w.rel {
                Some(r) => format!("{} .. {}", fmt_pct(r.pct.0), fmt_pct(r.pct.1)),
                None => format!("diff {} .. {}", fmt_num(w.ci95.0), fmt_num(w.ci95.1)),
            };
            if w.significant {
                ci
            } else {
                format!("{ci} (no significance)")
            }
        }
        None => "-".into(),
    }
}

fn change_json(base: &[f64], other: &[f64]) -> serde_json::Value {
    match welch_relative_change(base, other) {
        Some(w) => serde_json::json!({
            "diff_ci95": [w.ci95.0, w.ci95.1],
            "pct_ci95": w.rel.map(|r| [r.pct.0, r.pct.1]),
            "significant": w.significant,
        }),
        None => serde_json::Value::Null,
    }
}

fn ends_json(policy: &str, xs: &[f64]) -> serde_json::Value {
    let s = summary(xs);
    serde_json::json!({"policy": policy, "samples": xs, "mean": s.mean, "ci95": [s.ci95_low, s.ci95_high]})
}

pub fn cmd_bisect(a: BisectArgs) -> Result<(), String> {
    if a.no_store && a.store.is_some() {
        return Err("give --store PATH or --no-store, not both".into());
    }
    if a.seeds < 2 {
        return Err(format!(
            "--seeds {}: a step needs at least 2 seeds for Welch's test",
            a.seeds
        ));
    }
    let good_spec = with_mglru_options(a.good.parse::<PolicySpec>()?, &a.w)?;
    let bad_spec = with_mglru_options(a.bad.parse::<PolicySpec>()?, &a.w)?;
    let (good, bad) = (
        behaviours_of(&good_spec, "good")?,
        behaviours_of(&bad_spec, "bad")?,
    );
    check_ends(&good_spec, &bad_spec)?;
    let classic = matches!(good_spec, PolicySpec::Classic(..));
    let list = changes(good, bad, classic, &a.behaviours)?;
    for k in 1..=list.len() {
        state_behaviours(good, bad, &list, k)
            .check_requirements()
            .map_err(|e| format!("step {k} of the bisect order: {e} earlier in --behaviours"))?;
    }
    crate::check_workload_options(&a.w, &[good_spec, bad_spec])?;
    let scn = crate::load_workload(&a.w)?;
    let seeds: Vec<u64> = (0..a.seeds).map(|i| a.w.seed + i).collect();
    let cargs = CompareArgs {
        w: a.w,
        policies: String::new(),
        seeds: a.seeds,
        jobs: a.jobs,
        json: false,
        csv: false,
        save: None,
        store: a.store,
        no_store: a.no_store,
        agent: Vec::new(),
    };
    let runner = Runner {
        scn: &scn,
        seeds,
        cargs,
        metric: &a.metric,
    };
    let good_xs = runner.samples(good_spec)?;
    let bad_xs = runner.samples(bad_spec)?;
    if !differs(&good_xs, &bad_xs) {
        let hint = if good_xs == bad_xs {
            "every run is the same in both: these behaviours do not change it"
        } else {
            "more --seeds narrow the intervals"
        };
        return Err(format!(
            "the metric does not differ between good ({}) and bad ({}): Welch 95% of bad vs \
             good {}: nothing to bisect ({hint})",
            interval(&good_xs),
            interval(&bad_xs),
            change(&good_xs, &bad_xs)
        ));
    }
    let spec_of = |k: usize| with_behaviours(&good_spec, state_behaviours(good, bad, &list, k));
    let outcome = bisect(list.len(), &good_xs, &bad_xs, |k| {
        if k == list.len() {
            return Ok(bad_xs.clone());
        }
        runner.samples(spec_of(k))
    })?;
    // The culprit alone (good + its prerequisites + it) against good, and the first bad state
    // against the bad end (does the rest of the range move it further?).
    let alone = match outcome.found {
        Found::Culprit(i) => {
            let w = list[i];
            let c = if bad.has(w) {
                w.requires().iter().fold(good, |s, r| s.with(*r)).with(w)
            } else {
                good.without(w).without_unmet_requirements()
            };
            let spec = with_behaviours(&good_spec, c);
            Some((spec, runner.samples(spec)?))
        }
        Found::Range { .. } => None,
    };
    let first_bad_xs = if outcome.first_bad == list.len() {
        bad_xs.clone()
    } else {
        outcome
            .steps
            .iter()
            .find(|s| s.k == outcome.first_bad)
            .map(|s| s.samples.clone())
            .unwrap_or_default()
    };
    let report = Report {
        scn: &scn,
        metric: &a.metric,
        good: (good_spec, &good_xs),
        bad: (bad_spec, &bad_xs),
        list: &list,
        outcome: &outcome,
        alone: alone.as_ref().map(|(s, xs)| (*s, xs.as_slice())),
        first_bad_xs: &first_bad_xs,
        spec_of: &spec_of,
    };
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report.json()).map_err(|e| e.to_string())?
        );
    } else {
        report.print();
    }
    Ok(())
}

struct Report<'a> {
    scn: &'a Scenario,
    metric: &'a str,
    good: (PolicySpec, &'a [f64]),
    bad: (PolicySpec, &'a [f64]),
    list: &'a [Switch],
    outcome: &'a Outcome,
    alone: Option<(PolicySpec, &'a [f64])>,
    first_bad_xs: &'a [f64],
    spec_of: &'a dyn Fn(usize) -> PolicySpec,
}

/// A behaviour with its patch number or first kernel, and its commit where known, e.g.
/// "06 avoid-type-fallback (16b475d2ac3c)" or "folio-batch-31 (6.12)".
fn label(w: Switch) -> String {
    let num = Switch::SERIES
        .iter()
        .position(|s| *s == w)
        .map(|i| format!("{:02} ", i + 1));
    match (num, w.commit()) {
        (Some(n), Some(c)) => format!("{n}{w} ({c})"),
        (Some(n), None) => format!("{n}{w}"),
        (None, Some(c)) => format!("{w} ({}, {c})", w.first()),
        (None, None) => format!("{w} ({})", w.first()),
    }
}

impl Report<'_> {
    fn print(&self) {
        let o = self.outcome;
        outln!(
            "bisect {} on '{}': {} behaviours from {} (good) to {} (bad), {} seeds per step",
            self.scn.name,
            self.metric,
            self.list.len(),
            self.good.0,
            self.bad.0,
            self.good.1.len()
        );
        outln!(
            "  good {:<40} {}",
            self.good.0.to_string(),
            interval(self.good.1)
        );
        outln!(
            "  bad  {:<40} {}",
            self.bad.0.to_string(),
            interval(self.bad.1)
        );
        for (i, s) in o.steps.iter().enumerate() {
            outln!(
                "step {}: first {} behaviours (up to {}): {} -> {}",
                i + 1,
                s.k,
                self.list[s.k - 1],
                interval(&s.samples),
                s.verdict.name()
            );
            outln!(
                "    vs good {}; vs bad {}",
                change(self.good.1, &s.samples),
                change(self.bad.1, &s.samples)
            );
        }
        match o.found {
            Found::Culprit(i) => {
                outln!("culprit: {}", label(self.list[i]));
                outln!("  {}", self.list[i].description());
                if let Some((spec, xs)) = self.alone {
                    outln!("  alone ({spec} vs good): {}", change(self.good.1, xs));
                }
                if o.first_bad < self.list.len() {
                    let rest = if differs(self.first_bad_xs, self.bad.1) {
                        "moves it further"
                    } else {
                        "does not move it further"
                    };
                    outln!(
                        "  the rest of the range (bad vs the first {} behaviours): {} ({})",
                        o.first_bad,
                        change(self.first_bad_xs, self.bad.1),
                        rest
                    );
                }
            }
            Found::Range { first, last } => {
                outln!(
                    "no single culprit: the metric moves within behaviours {}..{} ({}), with states \
                     between the ends that are like neither (or both) of them:",
                    first + 1,
                    last + 1,
                    last + 1 - first
                );
                for &w in &self.list[first..=last] {
                    outln!("  {}", label(w));
                }
            }
        }
    }

    fn json(&self) -> serde_json::Value {
        let o = self.outcome;
        let steps: Vec<_> = o
            .steps
            .iter()
            .map(|s| {
                let sm = summary(&s.samples);
                serde_json::json!({
                    "applied": s.k,
                    "last_switch": self.list[s.k - 1].name(),
                    "policy": (self.spec_of)(s.k).to_string(),
                    "samples": s.samples,
                    "mean": sm.mean,
                    "ci95": [sm.ci95_low, sm.ci95_high],
                    "vs_good": change_json(self.good.1, &s.samples),
                    "vs_bad": change_json(self.bad.1, &s.samples),
                    "verdict": s.verdict.name(),
                })
            })
            .collect();
        let (culprit, range) = match o.found {
            Found::Culprit(i) => (Some(self.list[i].name()), None),
            Found::Range { first, last } => (
                None,
                Some(
                    self.list[first..=last]
                        .iter()
                        .map(|w| w.name())
                        .collect::<Vec<_>>(),
                ),
            ),
        };
        serde_json::json!({
            "scenario": self.scn.name,
            "metric": self.metric,
            "good": ends_json(&self.good.0.to_string(), self.good.1),
            "bad": ends_json(&self.bad.0.to_string(), self.bad.1),
            "behaviours": self.list.iter().map(|w| w.name()).collect::<Vec<_>>(),
            "steps": steps,
            "culprit": culprit,
            "commit": match o.found { Found::Culprit(i) => self.list[i].commit(), _ => None },
            "range": range,
            "alone": self.alone.map(|(spec, xs)| serde_json::json!({
                "policy": spec.to_string(),
                "mean": summary(xs).mean,
                "vs_good": change_json(self.good.1, xs),
            })),
            "rest": (matches!(o.found, Found::Culprit(_)) && o.first_bad < self.list.len()).then(|| serde_json::json!({
                "policy": (self.spec_of)(o.first_bad).to_string(),
                "vs_bad": change_json(self.first_bad_xs, self.bad.1),
                "moves_further": differs(self.first_bad_xs, self.bad.1),
            })),
            "skips": o.steps.iter().filter(|s| s.verdict == Verdict::Skip).count(),
        })
    }
}
