//! `reclaimlab plot`: pictures through the Python package's matplotlib code
//! (`python3 -m reclaimlab.plot`), and the helper that runs a module of that package.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct PlotArgs {
    /// What to draw: timeseries (a --timeseries CSV/JSONL or a run's JSON), mrc (`reclaimlab
    /// mrc` CSV or JSON), compare (compare --save or sweep --save files: bars with 95%
    /// intervals), latency (latency CDFs of result files), generations (MGLRU generation sizes
    /// over time, from a sampled run).
    #[arg(value_parser = ["timeseries", "mrc", "compare", "latency", "generations"])]
    kind: String,
    /// The input files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The picture to write (.png, .svg or .pdf).
    #[arg(short, long)]
    output: PathBuf,
    /// timeseries: the columns to draw (comma-separated; default: a few reclaim counters).
    #[arg(long, value_delimiter = ',')]
    columns: Vec<String>,
    /// compare: the metrics to draw (comma-separated; default: hit_ratio, ops_per_sec).
    #[arg(long, value_delimiter = ',')]
    metrics: Vec<String>,
}

pub fn cmd_plot(a: PlotArgs) -> Result<(), String> {
    let mut argv = vec![a.kind.clone()];
    argv.extend(a.inputs.iter().map(|p| p.display().to_string()));
    argv.extend(["-o".to_string(), a.output.display().to_string()]);
    if !a.columns.is_empty() {
        if a.kind != "timeseries" {
            return Err(format!(
                "--columns has no effect here: it picks the columns of a timeseries plot, not {}",
                a.kind
            ));
        }
        argv.extend(["--columns".into(), a.columns.join(",")]);
    }
    if !a.metrics.is_empty() {
        if a.kind != "compare" {
            return Err(format!(
                "--metrics has no effect here: it picks the metrics of a compare plot, not {}",
                a.kind
            ));
        }
        argv.extend(["--metrics".into(), a.metrics.join(",")]);
    }
    python_module("reclaimlab.plot", &argv, "plot")
}

/// The Python interpreter: `$RECLAIMLAB_PYTHON`, else `python3`.
pub fn python() -> String {
    std::env::var("RECLAIMLAB_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs `python3 -m MODULE ARGS` (its output passes through); a clear error if Python or the
/// reclaimlab package is missing, or if the module fails.
pub fn python_module(module: &str, args: &[String], what: &str) -> Result<(), String> {
    let py = python();
    let check = std::process::Command::new(&py)
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('reclaimlab') \
             and importlib.util.find_spec('matplotlib') else 3)",
        ])
        .status()
        .map_err(|e| format!("{what} needs Python ({py}): {e}"))?;
    if !check.success() {
        return Err(format!(
            "{what} needs the reclaimlab Python package and matplotlib in {py}: \
             pip install crates/reclaimlab-py (or set RECLAIMLAB_PYTHON to a Python that has \
             them)"
        ));
    }
    // What this command printed so far must come first.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let status = std::process::Command::new(&py)
        .arg("-m")
        .arg(module)
        .args(args)
        .status()
        .map_err(|e| format!("{what}: cannot run {py}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what}: {py} -m {module} failed ({status}; its error is above)"
        ))
    }
}
