//! The command line as a user meets it: outputs, exit codes and one-line errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn reclaimlab(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn reclaimlab");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    child.wait_with_output().expect("wait")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec!["run", "no-such-scenario"],
        vec!["run", "zipf", "--policy", "bogus"],
        vec!["run", "zipf", "--policy", "mglru:7.1+no-such-switch"],
        vec!["run", "zipf", "--cost", "nope=1"],
        vec!["run", "zipf", "--enabled", "0xzz"],
        vec!["run", "zipf", "--scale", "0"],
        vec!["run", "--trace", "/no/such/file"],
        vec!["run", "zipf", "--memory-mib", "128"],
        vec!["run", "zipf", "--cache-pages", "0"],
        vec!["run", "memcg-limit", "--cache-pages", "1000"],
        vec![
            "run",
            "--trace",
            "x",
            "--memory-mib",
            "64",
            "--cache-pages",
            "1000",
        ],
    ] {
        let o = reclaimlab(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.starts_with("reclaimlab: error: "), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    }
}

#[test]
fn a_malformed_trace_writes_no_result_file() {
    let dir = std::env::temp_dir().join(format!("reclaimlab-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("bad.trace");
    std::fs::write(&trace, "# reclaimlab-trace v1\n0 1 0 a 0 1 r x\n").unwrap();
    let out = dir.join("result.json");
    let o = reclaimlab(
        &[
            "run",
            "--trace",
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
    assert!(!out.exists(), "a result file was written for bad input");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn run_json_is_a_complete_result_and_deterministic() {
    let args = [
        "run",
        "mixed-rw",
        "--scale",
        "0.05",
        "--policy",
        "mglru:7.2",
        "--json",
    ];
    let a = reclaimlab(&args, None);
    assert!(a.status.success(), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["policy"], "mglru:7.2");
    assert!(v["vmstat"]["pgfault"].as_u64().unwrap() > 0);
    assert!(v["lru_gen"].as_str().unwrap().starts_with("memcg "));
    let b = reclaimlab(&args, None);
    assert_eq!(a.stdout, b.stdout, "the same seed gave different output");
}

#[test]
fn kernel_option_replaces_only_the_kernel_of_a_policy() {
    for (policy, kernel, want) in [
        ("classic:6.1-eevdf", "6.12", "classic:6.12-eevdf"),
        (
            "mglru:7.1+restructure-reclaim-loop@iter",
            "7.2",
            "mglru:7.2@iter",
        ),
        ("mglru@iter", "6.12", "mglru:6.12@iter"),
    ] {
        let o = reclaimlab(
            &[
                "run", "zipf", "--scale", "0.1", "--policy", policy, "--kernel", kernel, "--json",
            ],
            None,
        );
        assert!(o.status.success(), "{policy}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["policy"], want, "{policy} --kernel {kernel}");
    }
}

#[test]
fn with_and_without_reach_classic_policies_through_the_classical_behaviours() {
    let policy_of = |args: &[&str]| {
        let mut all = vec!["run", "zipf", "--scale", "0.1", "--json"];
        all.extend(args);
        let o = reclaimlab(&all, None);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["policy"].as_str().unwrap().to_string()
    };
    assert_eq!(
        policy_of(&["--policy", "classic:6.1", "--with", "folio-batch-31"]),
        "classic:6.1+folio-batch-31"
    );
    assert_eq!(
        policy_of(&["--policy", "classic:6.12", "--without", "eevdf"]),
        "classic:6.12-eevdf"
    );
    // An MGLRU behaviour with only classic policies would do nothing: refused.
    let o = reclaimlab(
        &[
            "run",
            "zipf",
            "--policy",
            "classic",
            "--with",
            "workingset-top-tier",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--with has no effect here"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn policies_lists_every_switch() {
    let o = reclaimlab(&["policies"], None);
    let text = String::from_utf8_lossy(&o.stdout);
    for name in [
        "classic",
        "mglru",
        "lru",
        "clock",
        "fifo",
        "smaller-reclaim-batch",
        "fg-promotion",
    ] {
        assert!(text.contains(name), "{name} missing");
    }
    assert_eq!(text.matches("no behaviour change").count(), 6);
}

#[test]
fn stats_reads_columns_from_stdin() {
    let o = reclaimlab(&["stats", "-"], Some("base new\n10 20\n11 21\n12 22\n"));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("RELATIVE CHANGE vs base"), "{text}");
    assert!(text.contains("+"), "{text}");
    let bad = reclaimlab(&["stats", "-"], Some("a b\n1 x\n"));
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn stats_intervals_stay_in_their_domain() {
    // A noisy baseline, n = 2: the seed's linear method would print a lower bound far below
    // -100%; the log-ratio interval stays above it. The counts' mean CIs are cut at 0.
    let input = Some("base new\n10 1\n1000 2\n");
    let o = reclaimlab(&["stats", "--domain", "nonnegative", "-"], input);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().rfind(|l| l.starts_with("  new ")).unwrap();
    assert!(line.contains("no significance"), "{text}");
    let lo: f64 = line
        .split("CI [")
        .nth(1)
        .unwrap()
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(lo > -100.0, "{text}");
    assert!(
        text.contains("[0, ") && text.contains("(cut at the edge)"),
        "{text}"
    );
    // Without --domain nothing is cut.
    let o = reclaimlab(&["stats", "-"], input);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("cut at the edge"));
}

#[test]
fn compare_with_seeds_prints_welch_intervals() {
    let o = reclaimlab(
        &[
            "compare",
            "zipf",
            "--scale",
            "0.05",
            "--policies",
            "classic,lru",
            "--seeds",
            "3",
            "--csv",
            "--no-store",
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("metric,policy,mean,ci95_low,ci95_high,vs_first_welch95"));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("hit_ratio,")).count(),
        2
    );
}

/// `reclaimlab ... | head`: a reader that goes away ends the program quietly, no panic.
#[test]
fn a_closed_output_pipe_is_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(["policies"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn reclaimlab");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn cache_pages_sets_the_capacity_and_json_reports_it() {
    let capacity = |policy: &str| {
        let o = reclaimlab(
            &[
                "run",
                "zipf",
                "--cache-pages",
                "4000",
                "--policy",
                policy,
                "--json",
            ],
            None,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        r["capacity_pages"].as_u64().unwrap()
    };
    assert_eq!(capacity("lru"), 4000);
    let kernel = capacity("classic");
    assert!((4000..=4002).contains(&kernel), "{kernel}");
}

/// A small native trace written by `reclaimlab trace`, removed when dropped.
struct TraceFile(std::path::PathBuf);

impl TraceFile {
    fn zipf(tag: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("reclaimlab-cli-{}-{tag}.trace", std::process::id()));
        let o = reclaimlab(
            &[
                "trace",
                "zipf",
                "--scale",
                "0.25",
                "-o",
                path.to_str().unwrap(),
            ],
            None,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        TraceFile(path)
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn mrc_points_are_the_runs_at_those_sizes() {
    let t = TraceFile::zipf("mrc");
    let path = t.0.to_str().unwrap();
    let o = reclaimlab(
        &[
            "mrc",
            "--trace",
            path,
            "--policy",
            "lru,classic",
            "--sizes",
            "500,1500",
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 4, "{csv}");
    for row in rows {
        let policy = if row[0] == "lru" { "lru" } else { "classic" };
        let o = reclaimlab(
            &[
                "run",
                "--trace",
                path,
                "--policy",
                policy,
                "--cache-pages",
                row[1],
                "--json",
            ],
            None,
        );
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["misses"].as_u64().unwrap().to_string(), row[2], "{row:?}");
    }
}

#[test]
fn mrc_refuses_options_that_would_do_nothing() {
    let t = TraceFile::zipf("mrc-bad");
    let path = t.0.to_str().unwrap();
    for args in [
        vec![
            "mrc",
            "--trace",
            path,
            "--policy",
            "classic",
            "--sample-rate",
            "0.1",
        ],
        vec!["mrc", "--trace", path, "--compare-exact"],
        vec!["mrc", "--trace", path, "--sizes", "0,10"],
        vec!["mrc", "--trace", path, "--sample-rate", "2"],
        vec!["mrc", "--trace", "/no/such/trace"],
    ] {
        let o = reclaimlab(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.starts_with("reclaimlab: error: "), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}: printed before failing");
    }
}

/// `--interleave` (docs/model.md §1, "Reclaimers meet at the folio lock"): auto, the default,
/// lets tasks run inside another's reclaim batch where the machine has its real size (scale 1)
/// and more than one CPU, or a seed scenario's scale keeps its batches under an eighth of its
/// inactive list (fio-pmem from 1/1024); scaled further down it is off; on and off force it;
/// one CPU refuses both.
#[test]
fn interleave_is_on_at_real_size_off_when_scaled_and_refused_on_one_cpu() {
    // Task steps run inside another task's reclaim batch, for `run SCENARIO ARGS...`.
    let nested = |args: &[&str]| {
        let mut argv = vec!["run"];
        argv.extend_from_slice(args);
        argv.push("--json");
        let o = reclaimlab(&argv, None);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["cpu"]["nested_steps"].as_u64().unwrap()
    };
    // swap-storm: four threads on four CPUs reclaiming directly.
    let storm = |extra: &[&str]| nested(&[&["swap-storm", "--policy", "classic"], extra].concat());
    let auto = storm(&[]);
    assert!(auto > 0, "auto at scale 1");
    assert_eq!(storm(&["--interleave", "auto"]), auto);
    assert_eq!(storm(&["--interleave", "on"]), auto);
    assert_eq!(storm(&["--interleave"]), auto, "bare --interleave is on");
    assert_eq!(storm(&["--interleave", "off"]), 0);
    assert_eq!(storm(&["--scale", "0.5"]), 0, "auto when scaled down");
    assert!(storm(&["--scale", "0.5", "--interleave", "on"]) > 0);
    // file-anon-mix-mini is a miniature of seed 000's machine at scale 1: auto is off.
    let mini = [
        "file-anon-mix-mini",
        "--policy",
        "mglru:7.2",
        "--max-time",
        "3",
    ];
    assert_eq!(nested(&mini), 0);
    assert!(nested(&[&mini[..], &["--interleave"]].concat()) > 0);
    // fio-pmem derives 1/1024 as the smallest scale where it interleaves (its default is 1/512).
    let pmem = |extra: &[&str]| {
        let base = ["fio-pmem", "--policy", "classic:6.1", "--max-time", "0.05"];
        nested(&[&base[..], extra].concat())
    };
    assert!(pmem(&[]) > 0, "fio-pmem at its default scale");
    assert!(pmem(&["--scale", "0.0009765625"]) > 0, "fio-pmem at 1/1024");
    assert_eq!(pmem(&["--scale", "0.00048828125"]), 0, "fio-pmem at 1/2048");
    for args in [
        vec!["run", "zipf", "--interleave", "on"],
        vec!["run", "zipf", "--interleave", "off"],
        vec!["run", "swap-storm", "--interleave", "sometimes"],
    ] {
        let o = reclaimlab(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains("--interleave"), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
    }
}
