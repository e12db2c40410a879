//! `reclaimlab report` without plots (no Python needed) and the clear errors of `plot` and
//! `report` when the Python package is missing. (The plots themselves and the report in
//! Chromium are tested by the Python package's tests, crates/reclaimlab-py/tests.)

use std::process::{Command, Output, Stdio};

fn reclaimlab(args: &[&str], python: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_reclaimlab"));
    c.args(args).stdin(Stdio::null());
    if let Some(p) = python {
        c.env("RECLAIMLAB_PYTHON", p);
    }
    c.output().expect("run reclaimlab")
}

#[test]
fn a_report_without_plots_has_the_compare_table_the_runs_and_the_model_version() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("cmp.json");
    let html = dir.path().join("r.html");
    let csv = reclaimlab(
        &[
            "compare",
            "zipf",
            "--scale",
            "0.125",
            "--policies",
            "classic,lru",
            "--seeds",
            "3",
            "--no-store",
            "--csv",
            "--save",
            save.to_str().unwrap(),
        ],
        None,
    );
    assert!(csv.status.success());
    let o = reclaimlab(
        &[
            "report",
            save.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
            "--no-plots",
        ],
        Some("/nonexistent/python"),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("model version <code>0.1.0+"));
    assert!(text.contains(", commit <code>"));
    // The table's intervals are compare's, row for row: the CSV's hit_ratio of lru.
    let csv = String::from_utf8_lossy(&csv.stdout).to_string();
    let lru = csv
        .lines()
        .find(|l| l.starts_with("hit_ratio,lru,"))
        .unwrap();
    let f: Vec<&str> = lru.split(',').collect();
    let row = format!(
        "<td class=\"l\">hit_ratio</td><td class=\"l\">lru</td><td>3</td><td>{}</td><td>{} .. {}</td><td class=\"l\">{}</td>",
        f[2], f[3], f[4], f[5]
    );
    assert!(text.contains(&row), "{row} not in the report");
    assert_eq!(
        text.matches("<td class=\"l\">cmp.json</td>").count(),
        6,
        "6 runs listed"
    );
    // --table-json: the same tables as JSON.
    let t = reclaimlab(&["report", save.to_str().unwrap(), "--table-json"], None);
    let v: serde_json::Value = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(v[0]["group"], "file=cmp.json, scenario=zipf");
}

#[test]
fn plot_and_report_need_the_python_package_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.json");
    std::fs::write(&f, "[]").unwrap();
    let out = dir.path().join("x.png");
    for python in ["/nonexistent/python", "/bin/false"] {
        let o = reclaimlab(
            &[
                "plot",
                "latency",
                f.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
            Some(python),
        );
        assert_eq!(o.status.code(), Some(2));
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("needs") && e.contains("Python"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    let o = reclaimlab(&["report", f.to_str().unwrap(), "-o", "r.html"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no runs"));
    let o = reclaimlab(
        &[
            "plot",
            "mrc",
            f.to_str().unwrap(),
            "-o",
            "y.png",
            "--metrics",
            "a",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--metrics has no effect"));
}
