//! `reclaimlab sweep GRID`: a grid of scenarios x policies x knobs x seeds, run in parallel,
//! every run kept in the results store as soon as it finishes, so a killed sweep run again
//! does only what is missing.
//!
//! The grid is a TOML (or, by a `.json` name, JSON) table:
//!
//! ```toml
//! scenarios = ["memcg-limit"]                  # built-in scenarios
//! policies = ["classic", "mglru:7.1", "mglru:7.2-dont-abort-after-aging"]  # behaviours too
//! seeds = 3                                    # seeds 1, 2, 3 (or a list: [1, 7])
//! memory_max = ["/app=48M", "/app=64M"]        # knobs: a value or a list each
//! swappiness = [60, 100]
//! ```
//!
//! Knobs (each the `run` option of the same name): `scale`, `memory_max`, `swappiness`,
//! `min_ttl_ms`, `enabled`, `cache_pages`, `max_time`, `sample_ms`, `cpus`. MGLRU's knobs
//! (`min_ttl_ms`, `enabled`) apply to MGLRU policies only and the kernel's (`swappiness`) to
//! kernel policies only: other policies run once per combination of the knobs that do
//! apply, with the others `null` in their parameters. Every run is the `run` command line
//! its `argv` shows (`--plan`), keyed in the results store exactly as `compare` keys it.

use crate::{
    check_workload_options, load_workload, options_fingerprint, parse_policy, shown_scale, store,
    with_mglru_options, write_atomic, Cli, Cmd, RunArgs, RunsBar,
};
use clap::{Args, Parser};
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{run, MatrixOptions, PolicySpec, RunOptions};
use reclaimlab::workload::Scenario;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

#[derive(Args)]
pub struct SweepArgs {
    /// The grid: a TOML file (or JSON, by a .json extension).
    grid: Option<PathBuf>,
    /// The grid as JSON text instead of a file (used by the Python package).
    #[arg(long, value_name = "JSON", conflicts_with = "grid")]
    grid_json: Option<String>,
    /// Parallel runs (0 = all cores); results are identical to a serial run.
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Print every run's parameters and whole result as JSON instead of the CSV table.
    #[arg(long)]
    json: bool,
    /// Also write every run's parameters and whole result as JSON to this file (atomically).
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// The results store (default: the user's cache directory, as for compare).
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Neither read nor write the results store: run everything.
    #[arg(long)]
    no_store: bool,
    /// Print the runs of the grid (index, parameters, the `run` command line, whether the
    /// store has it) as JSON, and run nothing.
    #[arg(long)]
    plan: bool,
    /// Run only these runs of the grid (indices from --plan, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "I")]
    only: Vec<usize>,
    /// Store the runs of a JSON file of sweep records (another machine's `--json` output,
    /// e.g. Ray tasks'), each checked against the grid and this model version; run nothing.
    #[arg(long, value_name = "FILE")]
    ingest: Option<PathBuf>,
    /// Run each run as a task on the Ray cluster at ADDRESS (`auto`, `local`, or
    /// `ray://HOST:PORT`), through the Python package (`python3 -m reclaimlab.sweeps`).
    #[arg(long, value_name = "ADDRESS")]
    ray: Option<String>,
}

/// The knobs a grid may sweep: (grid key, `run` option, applies to).
const KNOBS: &[(&str, &str, Applies)] = &[
    ("scale", "--scale", Applies::All),
    ("memory_max", "--memory-max", Applies::All),
    ("cache_pages", "--cache-pages", Applies::All),
    ("max_time", "--max-time", Applies::All),
    ("sample_ms", "--sample-ms", Applies::All),
    ("cpus", "--cpus", Applies::All),
    ("swappiness", "--swappiness", Applies::Kernel),
    ("min_ttl_ms", "--min-ttl-ms", Applies::Mglru),
    ("enabled", "--enabled", Applies::Mglru),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    All,
    Kernel,
    Mglru,
}

/// One run of the grid.
#[derive(Debug)]
pub struct Cell {
    /// The grid's parameters of this run (knobs that do not apply are null).
    pub params: Map<String, Value>,
    /// The `run` command line (without the program name).
    pub argv: Vec<String>,
}

/// A grid value as one or more option values.
fn values(v: &Value, key: &str) -> Result<Vec<Value>, String> {
    let list = match v {
        Value::Array(a) if a.is_empty() => {
            return Err(format!("grid: '{key}' is an empty list"));
        }
        Value::Array(a) => a.clone(),
        v => vec![v.clone()],
    };
    for x in &list {
        if !(x.is_string() || x.is_number() || x.is_boolean()) {
            return Err(format!(
                "grid: '{key}' has a value {x} that is not a string or number"
            ));
        }
    }
    Ok(list)
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Reads a grid file (TOML, or JSON by its extension) as JSON.
fn read_grid(a: &SweepArgs) -> Result<Value, String> {
    if let Some(text) = &a.grid_json {
        return serde_json::from_str(text).map_err(|e| format!("--grid-json: {e}"));
    }
    let path = a
        .grid
        .as_ref()
        .ok_or("give a grid file (GRID.toml) or --grid-json")?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json = path.extension().is_some_and(|e| e == "json");
    if json {
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    } else {
        toml::from_str::<Value>(&text).map_err(|e| {
            let msg = e.to_string();
            format!(
                "{}: {}",
                path.display(),
                msg.lines().collect::<Vec<_>>().join(" ")
            )
        })
    }
}

/// The runs of a grid, in a fixed order: scenario, policy, knobs (in [`KNOBS`] order, each
/// list in its order), seed.
pub fn expand(grid: &Value) -> Result<Vec<Cell>, String> {
    let table = grid.as_object().ok_or("grid: expected a table of keys")?;
    for key in table.keys() {
        let known = ["scenarios", "policies", "seeds"].contains(&key.as_str())
            || KNOBS.iter().any(|(k, _, _)| k == key);
        if !known {
            return Err(format!(
                "grid: unknown key '{key}' (expected scenarios, policies, seeds, {})",
                KNOBS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let required = |k: &str| {
        table
            .get(k)
            .ok_or_else(|| format!("grid: '{k}' is missing"))
            .and_then(|v| values(v, k))
    };
    let scenarios = required("scenarios")?;
    let policies = required("policies")?;
    let seeds: Vec<u64> = match table.get("seeds") {
        None => vec![1],
        Some(Value::Number(n)) => {
            let n = n
                .as_u64()
                .filter(|&n| n > 0)
                .ok_or("grid: 'seeds' must be a positive count or a list of seeds")?;
            (1..=n).collect()
        }
        Some(v) => values(v, "seeds")?
            .iter()
            .map(|s| {
                s.as_u64()
                    .ok_or(format!("grid: seed {s} is not a whole number"))
            })
            .collect::<Result<_, _>>()?,
    };
    let knobs: Vec<(&str, &str, Applies, Vec<Value>)> = KNOBS
        .iter()
        .filter_map(|&(k, opt, ap)| table.get(k).map(|v| values(v, k).map(|v| (k, opt, ap, v))))
        .collect::<Result<_, _>>()?;
    let mut cells = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for scenario in &scenarios {
        for policy in &policies {
            let policy_text = as_text(policy);
            let spec: PolicySpec = policy_text.trim().parse()?;
            let applies = |ap: Applies| match ap {
                Applies::All => true,
                Applies::Kernel => spec.kernel().is_some(),
                Applies::Mglru => matches!(spec, PolicySpec::Mglru(_)),
            };
            // Every combination of the knobs, as option values (None: does not apply).
            let mut combos: Vec<Vec<Option<Value>>> = vec![Vec::new()];
            for (_, _, ap, vals) in &knobs {
                let choices: Vec<Option<Value>> = if applies(*ap) {
                    vals.iter().cloned().map(Some).collect()
                } else {
                    vec![None]
                };
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        choices.iter().map(move |x| {
                            let mut c = c.clone();
                            c.push(x.clone());
                            c
                        })
                    })
                    .collect();
            }
            for combo in combos {
                for &seed in &seeds {
                    let mut params = Map::new();
                    params.insert("scenario".into(), Value::String(as_text(scenario)));
                    params.insert("policy".into(), Value::String(policy_text.clone()));
                    let mut argv = vec![
                        "run".to_string(),
                        as_text(scenario),
                        "--policy".into(),
                        policy_text.clone(),
                        "--seed".into(),
                        seed.to_string(),
                    ];
                    for ((key, opt, _, _), v) in knobs.iter().zip(&combo) {
                        params.insert(key.to_string(), v.clone().unwrap_or(Value::Null));
                        if let Some(v) = v {
                            argv.push(format!("{opt}={}", as_text(v)));
                        }
                    }
                    params.insert("seed".into(), json!(seed));
                    if seen.insert(argv.clone()) {
                        cells.push(Cell { params, argv });
                    }
                }
            }
        }
    }
    Ok(cells)
}

/// A cell made ready to run: its scenario, policy, seed, run options and store key.
struct Prepared {
    scn: Scenario,
    spec: PolicySpec,
    seed: u64,
    opts: MatrixOptions,
    scale: String,
    options: String,
}

fn prepare(cell: &Cell, keyed: bool) -> Result<Prepared, String> {
    let argv = std::iter::once("reclaimlab".to_string()).chain(cell.argv.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let text = e.to_string();
        format!(
            "grid run '{}': {}",
            cell.argv.join(" "),
            text.lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
        )
    })?;
    let Cmd::Run(a) = cli.cmd else {
        unreachable!("a sweep cell is a run command line")
    };
    let a: RunArgs = a;
    let spec = with_mglru_options(parse_policy(&a.policy, None)?, &a.w)?;
    check_workload_options(&a.w, &[spec])?;
    let scn = load_workload(&a.w)?;
    let opts = MatrixOptions {
        check_invariants: a.w.check,
        max_sim_ns: crate::max_sim_ns(&a.w)?,
        lru_gen_sample_ns: crate::lru_gen_sample_ns(&a.w)?,
        lru_gen_schedule: crate::lru_gen_schedule(&a.w)?,
        sample_ns: crate::timeseries::sample_ns(&a.w)?,
        // Grids have no agents knob (yet): runs are without agents.
        agents: Vec::new(),
    };
    let options = if keyed {
        options_fingerprint(&a.w, &scn, &opts)?
    } else {
        String::new()
    };
    Ok(Prepared {
        scale: shown_scale(&a.w).to_string(),
        scn,
        spec,
        seed: a.w.seed,
        opts,
        options,
    })
}

impl Prepared {
    fn key(&self) -> store::RunKey<'_> {
        store::RunKey {
            scenario: &self.scn.name,
            scale: &self.scale,
            policy: self.spec.to_string(),
            policy_config: format!("{:?}", self.spec),
            seed: self.seed,
            options: &self.options,
        }
    }

    fn run(&self) -> Result<RunResult, String> {
        run(
            &self.scn,
            self.spec,
            &RunOptions {
                seed: self.seed,
                check_invariants: self.opts.check_invariants,
                max_sim_ns: self.opts.max_sim_ns,
                progress: None,
                lru_gen_sample_ns: self.opts.lru_gen_sample_ns,
                lru_gen_schedule: self.opts.lru_gen_schedule.clone(),
                sample_ns: self.opts.sample_ns,
                agents: self.opts.agents.clone(),
            },
        )
    }
}

/// One sweep record: a run's index, parameters, model version and whole result.
fn record(i: usize, cell: &Cell, r: &RunResult) -> Result<Value, String> {
    Ok(json!({
        "index": i,
        "params": cell.params,
        "model_version": store::MODEL_VERSION,
        "result": serde_json::to_value(r).map_err(|e| e.to_string())?,
    }))
}

pub fn cmd_sweep(a: SweepArgs) -> Result<(), String> {
    if a.no_store && a.store.is_some() {
        return Err("give --store PATH or --no-store, not both".into());
    }
    if let Some(address) = &a.ray {
        return crate::plot::python_module(
            "reclaimlab.sweeps",
            &ray_argv(&a, address)?,
            "sweep --ray",
        );
    }
    let grid = read_grid(&a)?;
    let cells = expand(&grid)?;
    if let Some(&bad) = a.only.iter().find(|&&i| i >= cells.len()) {
        return Err(format!("--only {bad}: the grid has {} runs", cells.len()));
    }
    let store = if a.no_store {
        None
    } else {
        let path = a.store.clone().unwrap_or_else(store::default_path);
        Some(store::Store::open(&path)?)
    };
    let chosen: Vec<usize> = if a.only.is_empty() {
        (0..cells.len()).collect()
    } else {
        a.only.clone()
    };
    let prepared: Vec<Prepared> = chosen
        .iter()
        .map(|&i| prepare(&cells[i], store.is_some()))
        .collect::<Result<_, _>>()?;
    if let Some(path) = &a.ingest {
        let st = store
            .as_ref()
            .ok_or("--ingest stores runs: it needs a store, not --no-store")?;
        return ingest(path, &cells, &chosen, &prepared, st);
    }
    let known: Vec<Option<RunResult>> = match &store {
        Some(st) => prepared
            .iter()
            .map(|p| st.get(&p.key()))
            .collect::<Result<_, _>>()?,
        None => prepared.iter().map(|_| None).collect(),
    };
    if a.plan {
        let plan: Vec<Value> = chosen
            .iter()
            .zip(&known)
            .map(|(&i, k)| {
                json!({"index": i, "params": cells[i].params, "argv": cells[i].argv,
                       "stored": k.is_some()})
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&plan).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    if let (Some(st), n) = (&store, known.iter().flatten().count()) {
        if n > 0 {
            eprintln!(
                "reused {n} of {} runs from the store {}",
                known.len(),
                st.path().display()
            );
        }
    }
    let results = run_all(&prepared, known, store.as_ref(), a.jobs)?;
    let records: Vec<Value> = chosen
        .iter()
        .zip(&results)
        .map(|(&i, r)| record(i, &cells[i], r))
        .collect::<Result<_, _>>()?;
    let text = serde_json::to_string_pretty(&records).map_err(|e| e.to_string())?;
    if let Some(path) = &a.save {
        write_atomic(path, text.as_bytes())?;
    }
    if a.json {
        outln!("{text}");
    } else {
        print_csv(&cells, &chosen, &results);
    }
    Ok(())
}

/// Runs what is not known, in parallel, storing each as it finishes; results in order.
fn run_all(
    prepared: &[Prepared],
    known: Vec<Option<RunResult>>,
    store: Option<&store::Store>,
    jobs: usize,
) -> Result<Vec<RunResult>, String> {
    let done: Vec<bool> = known.iter().map(Option::is_some).collect();
    let todo: Vec<usize> = (0..prepared.len()).filter(|&i| !done[i]).collect();
    let slots: Vec<std::sync::Mutex<Option<Result<RunResult, String>>>> = known
        .into_iter()
        .map(|k| std::sync::Mutex::new(k.map(Ok)))
        .collect();
    let threads = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, todo.len().max(1));
    let bar = RunsBar::new("sweep", &done);
    let warned = std::sync::atomic::AtomicBool::new(false);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = todo.get(n) else { break };
                let r = prepared[i].run();
                if let (Some(st), Ok(res)) = (store, &r) {
                    if let Err(e) = st.put(&prepared[i].key(), res) {
                        if !warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            bar.println(&format!(
                                "reclaimlab: warning: {e}: finished runs are not being stored"
                            ));
                        }
                    }
                }
                bar.finished(i);
                *slots[i].lock().expect("result slot") = Some(r);
            });
        }
    });
    bar.clear();
    slots
        .into_iter()
        .map(|m| m.into_inner().expect("result slot").expect("every run ran"))
        .collect()
}

/// The CSV table: each run's parameters and every metric of `RunResult::metrics`.
fn print_csv(cells: &[Cell], chosen: &[usize], results: &[RunResult]) {
    let Some(first) = results.first() else {
        return;
    };
    // scenario, policy, the knobs in KNOBS order, seed; then the metrics.
    let param_names: Vec<&str> = ["scenario", "policy"]
        .into_iter()
        .chain(KNOBS.iter().map(|k| k.0))
        .chain(["seed"])
        .filter(|k| cells[chosen[0]].params.contains_key(*k))
        .collect();
    let metric_names: Vec<String> = first.metrics().into_iter().map(|(k, _)| k).collect();
    let header: Vec<String> = param_names
        .iter()
        .map(|s| s.to_string())
        .chain(metric_names)
        .collect();
    outln!("{}", header.join(","));
    for (&i, r) in chosen.iter().zip(results) {
        let params = param_names.iter().map(|k| match &cells[i].params[*k] {
            Value::Null => String::new(),
            v => csv_field(&as_text(v)),
        });
        let metrics = r.metrics().into_iter().map(|(_, v)| crate::fmt_num(v));
        outln!("{}", params.chain(metrics).collect::<Vec<_>>().join(","));
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `--ingest FILE`: stores sweep records made elsewhere, each checked against the grid (its
/// index and parameters) and this build's model version.
fn ingest(
    path: &std::path::Path,
    cells: &[Cell],
    chosen: &[usize],
    prepared: &[Prepared],
    st: &store::Store,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let records: Vec<Value> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut stored = 0;
    for rec in &records {
        let bad = |why: &str| format!("{}: a record {why}", path.display());
        let i = rec["index"]
            .as_u64()
            .map(|i| i as usize)
            .filter(|&i| i < cells.len())
            .ok_or_else(|| bad("has no index of this grid"))?;
        if rec["params"] != Value::Object(cells[i].params.clone()) {
            return Err(bad(&format!(
                "{i} has other parameters than the grid's run {i}"
            )));
        }
        if rec["model_version"] != store::MODEL_VERSION {
            return Err(bad(&format!(
                "{i} comes from model version {}, this is {}",
                rec["model_version"],
                store::MODEL_VERSION
            )));
        }
        let r: RunResult = serde_json::from_value(rec["result"].clone())
            .map_err(|e| bad(&format!("{i} has no readable result: {e}")))?;
        // `prepared` follows `chosen` (--only, or every run).
        let p = chosen
            .iter()
            .position(|&c| c == i)
            .map(|n| &prepared[n])
            .ok_or_else(|| bad(&format!("{i} is not among the runs chosen (--only)")))?;
        if r.seed != p.seed || r.policy != p.spec.to_string() || r.scenario != p.scn.name {
            return Err(bad(&format!("{i} holds another run's result")));
        }
        if st.put(&p.key(), &r)? {
            stored += 1;
        }
    }
    eprintln!(
        "stored {stored} of {} runs in {}",
        records.len(),
        st.path().display()
    );
    Ok(())
}

/// The `python3 -m reclaimlab.sweeps` command line of `sweep --ray`.
fn ray_argv(a: &SweepArgs, address: &str) -> Result<Vec<String>, String> {
    let grid = match (&a.grid, &a.grid_json) {
        (Some(p), _) => vec![p.display().to_string()],
        (None, Some(j)) => vec!["--grid-json".into(), j.clone()],
        (None, None) => return Err("give a grid file (GRID.toml) or --grid-json".into()),
    };
    if a.plan || !a.only.is_empty() || a.ingest.is_some() {
        return Err("--ray runs the whole grid: not with --plan, --only or --ingest".into());
    }
    let mut argv = grid;
    argv.extend(["--ray".into(), address.to_string()]);
    if let Some(s) = &a.store {
        argv.extend(["--store".into(), s.display().to_string()]);
    }
    if a.no_store {
        argv.push("--no-store".into());
    }
    if a.json {
        argv.push("--json".into());
    }
    if let Some(s) = &a.save {
        argv.extend(["--save".into(), s.display().to_string()]);
    }
    Ok(argv)
}

/// Parses `--grid-json` text the way the command line does (for tests).
#[cfg(test)]
fn cells_of(json: &str) -> Result<Vec<Cell>, String> {
    expand(&serde_json::from_str(json).unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_a_product_with_knobs_only_where_they_apply() {
        let cells = cells_of(
            r#"{"scenarios": "memcg-limit", "policies": ["classic", "mglru:7.2", "lru"],
                "seeds": 2, "min_ttl_ms": [0, 1000], "swappiness": 60}"#,
        )
        .unwrap();
        // classic: 1 x 2 seeds; mglru: 2 ttl x 2 seeds; lru (no swappiness): 2 seeds.
        assert_eq!(cells.len(), 2 + 4 + 2);
        assert_eq!(
            cells[2].argv,
            [
                "run",
                "memcg-limit",
                "--policy",
                "mglru:7.2",
                "--seed",
                "1",
                "--swappiness=60",
                "--min-ttl-ms=0"
            ]
        );
        assert_eq!(cells[0].params["min_ttl_ms"], Value::Null);
        assert_eq!(cells[6].params["swappiness"], Value::Null);
    }

    #[test]
    fn bad_grids_are_refused() {
        assert!(cells_of(r#"{"policies": ["classic"]}"#)
            .unwrap_err()
            .contains("'scenarios' is missing"));
        assert!(
            cells_of(r#"{"scenarios": "zipf", "policies": "classic", "swapiness": 1}"#)
                .unwrap_err()
                .contains("unknown key 'swapiness'")
        );
        assert_eq!(
            cells_of(r#"{"scenarios": "zipf", "policies": "classic", "cpus": [1, 2]}"#).unwrap()[1]
                .argv
                .last()
                .unwrap(),
            "--cpus=2"
        );
        assert!(
            cells_of(r#"{"scenarios": "zipf", "policies": [], "seeds": 1}"#)
                .unwrap_err()
                .contains("empty")
        );
        assert!(cells_of(r#"{"scenarios": "zipf", "policies": "nope"}"#).is_err());
    }
}
