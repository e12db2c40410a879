//! `--sample-ms` and `--timeseries`: CSV and JSON lines written atomically, the result's JSON
//! unchanged but for `timeseries`, and the options that would do nothing refused.

mod common;
use common::reclaimlab;

const RUN: &[&str] = &[
    "run",
    "memcg-limit",
    "--scale",
    "0.25",
    "--policy",
    "mglru:7.2",
];

fn with<'a>(more: &[&'a str]) -> Vec<&'a str> {
    RUN.iter().chain(more).copied().collect()
}

#[test]
fn the_time_series_is_written_as_csv_or_json_lines_and_changes_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("ts.csv");
    let jsonl = dir.path().join("ts.jsonl");
    let plain = reclaimlab(&with(&["--json"]));
    assert!(plain.status.success());
    let a = reclaimlab(&with(&[
        "--json",
        "--sample-ms",
        "50",
        "--timeseries",
        csv.to_str().unwrap(),
    ]));
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let b = reclaimlab(&with(&[
        "--sample-ms",
        "50",
        "--timeseries",
        jsonl.to_str().unwrap(),
    ]));
    assert!(b.status.success());
    // The JSON result: the same bytes, and then the timeseries key (the last one).
    let plain = String::from_utf8_lossy(&plain.stdout).to_string();
    let sampled = String::from_utf8_lossy(&a.stdout).to_string();
    let head = plain.trim_end().strip_suffix('}').unwrap().trim_end();
    assert!(
        sampled.starts_with(&format!("{head},\n  \"timeseries\": {{")),
        "the sampled result differs from the plain one before its timeseries"
    );
    let v: serde_json::Value = serde_json::from_str(&sampled).unwrap();
    let ts = &v["timeseries"];
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let samples = ts["samples"].as_array().unwrap().len();
    assert_eq!(lines.len(), samples + 1);
    assert!(lines[0].starts_with("time_ms,vmstat."));
    assert!(lines[0].contains(",memcg./limited.memory.current,"));
    assert!(lines[0].contains(",lru_gen./.node0.gen0.anon_pages"));
    assert!(lines[1].starts_with("0,") && lines[2].starts_with("50,"));
    let jl = std::fs::read_to_string(&jsonl).unwrap();
    assert_eq!(jl.lines().count(), samples);
    let second: serde_json::Value = serde_json::from_str(jl.lines().nth(1).unwrap()).unwrap();
    assert_eq!(second["time_ms"], 50);
    assert!(second["vmstat.pgfault"].as_u64().unwrap() > 0);
}

#[test]
fn time_series_options_that_would_do_nothing_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("ts.csv");
    let f = f.to_str().unwrap();
    let txt = dir.path().join("ts.txt");
    for (args, expect) in [
        (with(&["--timeseries", f]), "--timeseries has no effect"),
        (with(&["--sample-ms", "10"]), "--sample-ms has no effect"),
        (
            with(&["--timeseries-format", "csv", "--json"]),
            "--timeseries-format has no effect",
        ),
        (with(&["--sample-ms", "0", "--json"]), "--sample-ms 0"),
        (
            with(&["--sample-ms", "10", "--timeseries", txt.to_str().unwrap()]),
            "cannot tell the format",
        ),
        (
            with(&[
                "--sample-ms",
                "10",
                "--timeseries",
                f,
                "--timeseries-format",
                "xml",
            ]),
            "expected csv or jsonl",
        ),
        (
            vec![
                "compare",
                "zipf",
                "--scale",
                "0.125",
                "--sample-ms",
                "10",
                "--no-store",
            ],
            "--sample-ms has no effect",
        ),
    ] {
        let o = reclaimlab(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(expect), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(o.stdout.is_empty());
    }
    assert!(
        !std::path::Path::new(f).exists(),
        "a refused run wrote nothing"
    );
}

#[test]
fn memory_max_sets_the_memcg_limit_as_the_kernel_parses_it() {
    let o = reclaimlab(&with(&["--memory-max", "/limited=12M", "--json"]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let limited = v["memcgs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["path"] == "/limited")
        .unwrap();
    assert_eq!(limited["max_pages"], 12 * 256);
    for bad in ["/limited=12Q", "limited=1M", "/=1M", "/nope=1M", "/limited"] {
        let o = reclaimlab(&with(&["--memory-max", bad]));
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
}
