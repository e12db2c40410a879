//! `reclaimlab report RESULTS... -o report.html`: one self-contained HTML file (no network):
//! the compare table with 95% intervals (the statistics of `compare`), the plots (PNG,
//! base64-embedded, drawn by the Python package's matplotlib code), every run's parameters,
//! and the model version and commit of this build.

use crate::{exact_change, fmt_num, store, write_atomic};
use clap::Args;
use reclaimlab::metrics::{metric_domain, RunResult};
use reclaimlab::stats::{fmt_pct, summary_in, welch_relative_change};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// The commit this binary was built from (`git describe --always --dirty`), or "unknown".
pub const BUILD_COMMIT: &str = env!("RECLAIMLAB_BUILD_COMMIT");

#[derive(Args)]
pub struct ReportArgs {
    /// Result files: compare --save, sweep --save, run --out (JSON), mrc --json.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The HTML file to write (atomically).
    #[arg(short, long, required_unless_present = "table_json")]
    output: Option<PathBuf>,
    /// Print the compare tables as JSON (per group of runs that differ only in policy and
    /// seed) instead of writing a report: what `reclaimlab plot compare` draws.
    #[arg(long, conflicts_with_all = ["output", "no_plots"])]
    table_json: bool,
    /// The report's title.
    #[arg(long, default_value = "reclaimlab report")]
    title: String,
    /// Leave the plots out (no Python needed): tables only.
    #[arg(long)]
    no_plots: bool,
}

/// One run with the parameters it was made with.
struct Run {
    params: Map<String, Value>,
    model_version: Option<String>,
    result: RunResult,
}

/// Reads runs (and miss-ratio curves) from result files of any of the CLI's kinds.
/// A miss-ratio curve (`mrc --json`) and the name of its file.
type Curve = (String, Value);

fn load(inputs: &[PathBuf]) -> Result<(Vec<Run>, Vec<Curve>), String> {
    let mut runs = Vec::new();
    let mut curves = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a JSON result file (compare --save, sweep --save, run --out or mrc \
                 --json): {e}",
                path.display()
            )
        })?;
        let source = path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().to_string());
        if v.get("curve").is_some() {
            curves.push((source, v));
            continue;
        }
        let mut items = Vec::new();
        flatten(v, &mut items);
        for item in items {
            // The file is a parameter too: runs of different files are never pooled.
            let mut params = Map::new();
            params.insert("file".into(), json!(source));
            let (model_version, result) = if let Some(r) = item.get("result") {
                if let Some(p) = item["params"].as_object() {
                    params.extend(p.clone());
                }
                let mv = item["model_version"].as_str().map(str::to_string);
                (mv, r.clone())
            } else {
                (None, item)
            };
            let result: RunResult = serde_json::from_value(result)
                .map_err(|e| format!("{}: a run that does not read back: {e}", path.display()))?;
            params
                .entry("scenario")
                .or_insert_with(|| json!(result.scenario));
            params.insert("policy".into(), json!(result.policy));
            params.insert("seed".into(), json!(result.seed));
            runs.push(Run {
                params,
                model_version,
                result,
            });
        }
    }
    if runs.is_empty() && curves.is_empty() {
        return Err("report: the files hold no runs".into());
    }
    Ok((runs, curves))
}

fn flatten(v: Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.into_iter().for_each(|x| flatten(x, out)),
        v => out.push(v),
    }
}

/// A group of runs that a compare table sets side by side: the same parameters but for the
/// policy and the seed. (key text, policies in order, runs per policy)
type Group = (String, Vec<String>, Vec<Vec<usize>>);

fn groups(runs: &[Run]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let mut key = r.params.clone();
        key.remove("policy");
        key.remove("seed");
        let key = key
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string)))
            .collect::<Vec<_>>()
            .join(", ");
        let g = match out.iter().position(|g| g.0 == key) {
            Some(g) => g,
            None => {
                out.push((key, Vec::new(), Vec::new()));
                out.len() - 1
            }
        };
        let (_, policies, members) = &mut out[g];
        let p = match policies.iter().position(|p| *p == r.result.policy) {
            Some(p) => p,
            None => {
                policies.push(r.result.policy.clone());
                members.push(Vec::new());
                policies.len() - 1
            }
        };
        members[p].push(i);
    }
    out
}

/// The compare table of a group: per metric and policy, the mean, its 95% CI and the change
/// against the first policy, as `compare` prints them (rows zero in every run left out).
fn table(runs: &[Run], g: &Group) -> Vec<Value> {
    let (_, policies, members) = g;
    let metrics: Vec<Vec<Vec<(String, f64)>>> = members
        .iter()
        .map(|m| m.iter().map(|&i| runs[i].result.metrics()).collect())
        .collect();
    let names: Vec<String> = metrics[0][0].iter().map(|(k, _)| k.clone()).collect();
    let column = |p: usize, m: usize| -> Vec<f64> { metrics[p].iter().map(|r| r[m].1).collect() };
    let mut rows = Vec::new();
    for (m, name) in names.iter().enumerate() {
        if (0..policies.len()).all(|p| column(p, m).iter().all(|&x| x == 0.0)) {
            continue;
        }
        let base = column(0, m);
        for (p, policy) in policies.iter().enumerate() {
            let xs = column(p, m);
            let s = summary_in(&xs, metric_domain(name));
            let (vs, rel) = if p == 0 {
                ("baseline".to_string(), Value::Null)
            } else if let Some(exact) = exact_change(&base, &xs) {
                (exact, Value::Null)
            } else {
                match welch_relative_change(&base, &xs) {
                    Some(w) if w.significant => match w.rel {
                        Some(r) => (
                            format!("{} .. {}", fmt_pct(r.pct.0), fmt_pct(r.pct.1)),
                            json!([r.pct.0, r.pct.1]),
                        ),
                        None => (
                            format!("diff {} .. {}", fmt_num(w.ci95.0), fmt_num(w.ci95.1)),
                            Value::Null,
                        ),
                    },
                    Some(_) => ("no significance".to_string(), Value::Null),
                    None => ("-".to_string(), Value::Null),
                }
            };
            rows.push(json!({
                "metric": name, "policy": policy, "n": xs.len(),
                "mean": s.mean, "ci95_low": s.ci95_low, "ci95_high": s.ci95_high,
                "vs_first": vs, "vs_first_pct": rel,
            }));
        }
    }
    rows
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Standard base64 (RFC 4648) of `data`.
fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// The figures, drawn by `python3 -m reclaimlab.plot report-figures`: (title, PNG bytes).
fn figures(data: &Value) -> Result<Vec<(String, Vec<u8>)>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("report: {e}"))?;
    let input = dir.path().join("report-data.json");
    std::fs::write(&input, serde_json::to_vec(data).map_err(|e| e.to_string())?)
        .map_err(|e| format!("report: {e}"))?;
    let outdir = dir.path().join("figures");
    crate::plot::python_module(
        "reclaimlab.plot",
        &[
            "report-figures".into(),
            input.display().to_string(),
            "-o".into(),
            outdir.display().to_string(),
        ],
        "report (its plots; --no-plots leaves them out)",
    )?;
    let manifest = std::fs::read_to_string(outdir.join("manifest.json"))
        .map_err(|e| format!("report: the plots' manifest: {e}"))?;
    let list: Vec<Value> = serde_json::from_str(&manifest).map_err(|e| e.to_string())?;
    list.iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap_or_default();
            let png =
                std::fs::read(outdir.join(file)).map_err(|e| format!("report: {file}: {e}"))?;
            Ok((f["title"].as_str().unwrap_or(file).to_string(), png))
        })
        .collect()
}

pub fn cmd_report(a: ReportArgs) -> Result<(), String> {
    let (runs, curves) = load(&a.inputs)?;
    let groups = groups(&runs);
    let tables: Vec<(String, Vec<Value>)> = groups
        .iter()
        .map(|g| (g.0.clone(), table(&runs, g)))
        .collect();
    if a.table_json {
        let v: Vec<Value> = tables
            .iter()
            .map(|(k, rows)| json!({"group": k, "rows": rows}))
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    let output = a.output.as_ref().expect("clap requires it");
    let figs = if a.no_plots {
        Vec::new()
    } else {
        let data = json!({
            "runs": runs.iter().map(|r| json!({"params": r.params, "result": r.result})).collect::<Vec<_>>(),
            "tables": tables.iter().map(|(k, rows)| json!({"group": k, "rows": rows})).collect::<Vec<_>>(),
            "curves": curves.iter().map(|(s, c)| json!({"source": s, "curve": c["curve"]})).collect::<Vec<_>>(),
        });
        figures(&data)?
    };
    let html = render(&a.title, &runs, &tables, &figs, &a.inputs);
    write_atomic(output, html.as_bytes())?;
    eprintln!(
        "wrote {} ({} runs, {} tables, {} plots)",
        output.display(),
        runs.len(),
        tables.len(),
        figs.len()
    );
    Ok(())
}

fn render(
    title: &str,
    runs: &[Run],
    tables: &[(String, Vec<Value>)],
    figs: &[(String, Vec<u8>)],
    inputs: &[PathBuf],
) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>{}</title>\n", esc(title)));
    h.push_str(
        "<style>body{font-family:sans-serif;margin:2em;max-width:1200px}\
         table{border-collapse:collapse;font-size:13px;margin-bottom:1.5em}\
         td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
         th{background:#eee}td.l,th.l{text-align:left}\
         figure{display:inline-block;margin:0 1em 1em 0}\
         img.plot{border:1px solid #ddd;max-width:580px}</style>\n</head><body>\n",
    );
    h.push_str(&format!("<h1>{}</h1>\n", esc(title)));
    let versions: std::collections::BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| r.model_version.as_deref())
        .collect();
    h.push_str(&format!(
        "<p id=\"version\">Report by reclaimlab, model version <code>{}</code>, commit \
         <code>{}</code>.{} Inputs: {}.</p>\n",
        esc(store::MODEL_VERSION),
        esc(BUILD_COMMIT),
        if versions.is_empty() {
            String::new()
        } else {
            format!(
                " Runs made by model version(s) <code>{}</code>.",
                esc(&versions.into_iter().collect::<Vec<_>>().join(", "))
            )
        },
        esc(&inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "))
    ));
    if !figs.is_empty() {
        h.push_str("<h2>Plots</h2>\n<div id=\"plots\">\n");
        for (i, (t, png)) in figs.iter().enumerate() {
            h.push_str(&format!(
                "<figure><img class=\"plot\" id=\"plot-{i}\" alt=\"{0}\" \
                 src=\"data:image/png;base64,{1}\"><figcaption>{0}</figcaption></figure>\n",
                esc(t),
                base64(png)
            ));
        }
        h.push_str("</div>\n");
    }
    h.push_str(
        "<h2>Comparisons</h2>\n<p>Per metric and policy: the mean over seeds with its \
                95% confidence interval (cut at the metric's range), and the 95% interval of \
                the relative change against the first policy (Welch's t on the log ratio of the \
                means), as <code>reclaimlab compare</code> prints them.</p>\n",
    );
    for (key, rows) in tables {
        h.push_str(&format!("<h3>{}</h3>\n<table class=\"compare\">\n<tr><th class=\"l\">metric</th><th class=\"l\">policy</th><th>n</th><th>mean</th><th>95% CI</th><th class=\"l\">vs first (95%)</th></tr>\n", esc(key)));
        for r in rows {
            let num = |k: &str| fmt_num(r[k].as_f64().unwrap_or(f64::NAN));
            h.push_str(&format!(
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>\
                 <td>{} .. {}</td><td class=\"l\">{}</td></tr>\n",
                esc(r["metric"].as_str().unwrap_or_default()),
                esc(r["policy"].as_str().unwrap_or_default()),
                r["n"],
                num("mean"),
                num("ci95_low"),
                num("ci95_high"),
                esc(r["vs_first"].as_str().unwrap_or_default())
            ));
        }
        h.push_str("</table>\n");
    }
    h.push_str("<h2>Runs</h2>\n<table id=\"runs\">\n");
    let mut cols: Vec<String> = Vec::new();
    for r in runs {
        for k in r.params.keys() {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    h.push_str("<tr>");
    for c in cols
        .iter()
        .map(String::as_str)
        .chain(["sim_time_s", "accesses", "hit_ratio"])
    {
        h.push_str(&format!("<th class=\"l\">{}</th>", esc(c)));
    }
    h.push_str("</tr>\n");
    for r in runs {
        h.push_str("<tr>");
        for c in &cols {
            let v = r.params.get(c).cloned().unwrap_or(Value::Null);
            let text = match v {
                Value::Null => String::new(),
                Value::String(s) => s,
                v => v.to_string(),
            };
            h.push_str(&format!("<td class=\"l\">{}</td>", esc(&text)));
        }
        h.push_str(&format!(
            "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
            fmt_num(r.result.sim_time_ns as f64 / 1e9),
            r.result.accesses,
            fmt_num(r.result.hit_ratio)
        ));
    }
    h.push_str("</table>\n");
    // For checks in a browser (the report's Chromium test): each plot's decoded size and
    // place, and the page's height, as attributes once the page has loaded. No network.
    h.push_str(
        "<script>window.addEventListener('load',function(){\
         document.querySelectorAll('img.plot').forEach(function(i){\
         var r=i.getBoundingClientRect();\
         i.setAttribute('data-natural',i.naturalWidth+'x'+i.naturalHeight);\
         i.setAttribute('data-rect',[r.left+scrollX,r.top+scrollY,r.width,r.height]\
         .map(Math.round).join(','));});\
         document.body.setAttribute('data-height',document.documentElement.scrollHeight);\
         });</script>\n",
    );
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_is_rfc4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
