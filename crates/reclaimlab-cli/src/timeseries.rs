//! `--sample-ms` and `--timeseries`: counters over simulated time, written as CSV or JSON lines.

use crate::{write_atomic, RunArgs, WorkloadArgs};
use reclaimlab::timeseries::TimeSeries;
use std::path::Path;

/// The formats of `--timeseries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonLines,
}

impl Format {
    fn parse(s: &str) -> Result<Format, String> {
        match s {
            "csv" => Ok(Format::Csv),
            "jsonl" | "json" => Ok(Format::JsonLines),
            _ => Err(format!("--timeseries-format '{s}': expected csv or jsonl")),
        }
    }

    /// The format a file name implies: `.csv`, `.jsonl`/`.json`/`.ndjson`.
    fn of_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()? {
            "csv" => Some(Format::Csv),
            "jsonl" | "json" | "ndjson" => Some(Format::JsonLines),
            _ => None,
        }
    }
}

/// --sample-ms in simulated ns (0 and values beyond the model's clock are refused).
pub fn sample_ns(w: &WorkloadArgs) -> Result<Option<u64>, String> {
    match w.sample_ms {
        Some(0) => Err("--sample-ms 0: expected a positive number of ms".into()),
        Some(ms) => reclaimlab::options::ms_to_sim_ns(ms, "--sample-ms").map(Some),
        None => Ok(None),
    }
}

/// Checks `run`'s time-series options; the format of `--timeseries` when given. Options that
/// would do nothing are refused: `--timeseries` without `--sample-ms`, `--timeseries-format`
/// without `--timeseries`, `--sample-ms` whose samples go nowhere (no --timeseries, --json or
/// --out).
pub fn check_run_options(a: &RunArgs) -> Result<Option<Format>, String> {
    sample_ns(&a.w)?;
    if a.timeseries_format.is_some() && a.timeseries.is_none() {
        return Err(
            "--timeseries-format has no effect here: it is the format of --timeseries FILE".into(),
        );
    }
    let Some(path) = &a.timeseries else {
        if a.w.sample_ms.is_some() && !a.json && a.out.is_none() {
            return Err(
                "--sample-ms has no effect here: its samples go to --timeseries FILE, --json \
                 or --out"
                    .into(),
            );
        }
        return Ok(None);
    };
    if a.w.sample_ms.is_none() {
        return Err(
            "--timeseries has no effect here: it writes the samples of --sample-ms MS".into(),
        );
    }
    match &a.timeseries_format {
        Some(f) => Format::parse(f).map(Some),
        None => Format::of_path(path).map(Some).ok_or_else(|| {
            format!(
                "--timeseries {}: cannot tell the format from its extension (.csv or .jsonl); \
                 give --timeseries-format csv|jsonl",
                path.display()
            )
        }),
    }
}

/// Writes the time series atomically.
pub fn write(path: &Path, format: Format, ts: Option<&TimeSeries>) -> Result<(), String> {
    let empty = TimeSeries::default();
    let ts = ts.unwrap_or(&empty);
    let text = match format {
        Format::Csv => ts.to_csv(),
        Format::JsonLines => ts.to_json_lines(),
    };
    write_atomic(path, text.as_bytes())
}
