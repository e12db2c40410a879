//! `reclaimlab sweep`: a grid's runs, in parallel, kept in the results store so that a sweep
//! killed with SIGKILL, run again, repeats no finished run and prints what an uninterrupted
//! sweep prints; `--plan`, `--only` and `--ingest` (the Ray backend's steps) agree with it.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{reclaimlab, rows, stderr};

/// 2 policies x 2 memory.max x 3 seeds of file-anon-mix-mini at 1/4: 12 runs of ~0.2 s.
const GRID: &str = r#"
scenarios = ["file-anon-mix-mini"]
policies = ["classic", "mglru:7.2"]
seeds = 3
scale = 0.25
memory_max = ["/mix=12M", "/mix=16M"]
"#;

fn grid_file(dir: &Path) -> String {
    let p = dir.join("grid.toml");
    std::fs::write(&p, GRID).unwrap();
    p.to_str().unwrap().to_string()
}

fn reused_line(o: &Output) -> Option<String> {
    stderr(o)
        .lines()
        .find(|l| l.starts_with("reused "))
        .map(str::to_string)
}

#[test]
fn a_sweep_killed_with_sigkill_resumes_without_repeating_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let grid = grid_file(dir.path());
    let store = dir.path().join("results.sqlite");
    let s = store.to_str().unwrap();
    let plain = reclaimlab(&["sweep", &grid, "--no-store"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let table = String::from_utf8_lossy(&plain.stdout).to_string();
    assert_eq!(table.lines().count(), 13, "{table}");
    assert!(table.starts_with("scenario,policy,scale,memory_max,seed,accesses,hit_ratio"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(["sweep", &grid, "--jobs", "1", "--store", s])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn reclaimlab");
    let start = Instant::now();
    while rows(&store).unwrap_or(0) < 1 {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended first");
        assert!(start.elapsed() < Duration::from_secs(120), "no run stored");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "killed mid-way: {status:?}");
    }
    let kept = rows(&store).unwrap() as usize;
    assert!(
        (1..12).contains(&kept),
        "{kept} runs stored before the kill"
    );
    let resumed = reclaimlab(&["sweep", &grid, "--store", s]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(
        reused_line(&resumed).unwrap(),
        format!("reused {kept} of 12 runs from the store {s}")
    );
    assert_eq!(String::from_utf8_lossy(&resumed.stdout), table);
    assert_eq!(rows(&store), Some(12));
    let again = reclaimlab(&["sweep", &grid, "--store", s]);
    assert_eq!(
        reused_line(&again).unwrap(),
        format!("reused 12 of 12 runs from the store {s}")
    );
    assert_eq!(String::from_utf8_lossy(&again.stdout), table);
}

#[test]
fn runs_made_one_by_one_and_ingested_equal_the_local_sweep() {
    // What the Ray backend does: --plan, each run alone (--only I --no-store --json) and
    // --ingest of the records; the sweep then reads every run from the store.
    let dir = tempfile::tempdir().unwrap();
    let grid = grid_file(dir.path());
    let s = dir.path().join("r.sqlite");
    let s = s.to_str().unwrap();
    let plan = reclaimlab(&["sweep", &grid, "--plan", "--store", s]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let plan = plan.as_array().unwrap();
    assert_eq!(plan.len(), 12);
    assert!(plan.iter().all(|p| p["stored"] == false));
    let mut records = Vec::new();
    for p in plan.iter().rev() {
        let i = p["index"].to_string();
        let o = reclaimlab(&["sweep", &grid, "--only", &i, "--no-store", "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
        records.extend(v);
    }
    let file = dir.path().join("records.json");
    std::fs::write(&file, serde_json::to_vec(&records).unwrap()).unwrap();
    let ingest = reclaimlab(&[
        "sweep",
        &grid,
        "--ingest",
        file.to_str().unwrap(),
        "--store",
        s,
    ]);
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    assert!(
        stderr(&ingest).contains("stored 12 of 12 runs"),
        "{}",
        stderr(&ingest)
    );
    let from_store = reclaimlab(&["sweep", &grid, "--json", "--store", s]);
    assert!(reused_line(&from_store)
        .unwrap()
        .starts_with("reused 12 of 12"));
    let local = reclaimlab(&["sweep", &grid, "--json", "--no-store"]);
    assert_eq!(
        String::from_utf8_lossy(&from_store.stdout),
        String::from_utf8_lossy(&local.stdout)
    );
    // A record that does not belong to the grid is refused.
    let mut bad = records[0].clone();
    bad["params"]["seed"] = 99.into();
    std::fs::write(&file, serde_json::to_vec(&[bad]).unwrap()).unwrap();
    let o = reclaimlab(&[
        "sweep",
        &grid,
        "--ingest",
        file.to_str().unwrap(),
        "--store",
        s,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("other parameters"), "{}", stderr(&o));
}

#[test]
fn bad_grids_and_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    for (text, expect) in [
        (
            "scenarios = [\"zipf\"]\npolicies = [\"classic\"]\nswapiness = 3\n",
            "unknown key",
        ),
        ("scenarios = [\"zipf\"]\n", "'policies' is missing"),
        ("scenarios = [\"nope\"]\npolicies = [\"classic\"]\n", "nope"),
        ("scenarios = [\"zipf\"\n", "bad.toml"),
        (
            "scenarios = [\"zipf\"]\npolicies = [\"classic\"]\ncpus = 0\n",
            "cpus",
        ),
        (
            "scenarios = [\"zipf\"]\npolicies = [\"classic\"]\nmemory_max = \"/nope=1M\"\n",
            "has no memcg /nope",
        ),
    ] {
        std::fs::write(&bad, text).unwrap();
        let o = reclaimlab(&["sweep", bad.to_str().unwrap(), "--no-store"]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with("reclaimlab: error:") && e.contains(expect),
            "{text}: {e}"
        );
        assert!(o.stdout.is_empty());
    }
    let o = reclaimlab(&["sweep", "--no-store"]);
    assert_eq!(o.status.code(), Some(2));
    let o = reclaimlab(&["sweep", bad.to_str().unwrap(), "--no-store", "--store", "x"]);
    assert_eq!(o.status.code(), Some(2));
}
