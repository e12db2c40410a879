//! The results store of `compare`: reruns reuse every stored run, a compare killed with
//! SIGKILL loses no finished run, and the tables never depend on where runs came from. Every
//! test keeps its store in a temporary directory (or uses --no-store), never the user's cache.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{reclaimlab, rows, stderr};

/// `n` in "reused n of total runs from the store ...", or 0 when no such line was printed.
fn reused(o: &Output, total: usize) -> usize {
    let e = stderr(o);
    let Some(line) = e.lines().find(|l| l.starts_with("reused ")) else {
        return 0;
    };
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[2..4], ["of", &total.to_string()], "{line}");
    assert!(line.contains("runs from the store "), "{line}");
    words[1].parse().expect("a count")
}

fn integrity_ok(store: &Path) {
    let conn = rusqlite::Connection::open(store).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// 3 policies of a small scenario (x 6 seeds, the default): well under a second in all.
const QUICK: &[&str] = &[
    "compare",
    "zipf",
    "--scale",
    "0.125",
    "--policies",
    "classic,lru,mglru:7.2",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn a_rerun_reuses_every_run_and_prints_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("cache/results.sqlite");
    let s = store.to_str().unwrap();
    for extra in [&[][..], &["--csv"], &["--seeds", "1"]] {
        // --seeds 1: the single runs side by side (the same runs as seed 1 of the others).
        let args = with(&with(QUICK, extra), &["--store", s]);
        let total = if extra.contains(&"1") { 3 } else { 18 };
        let first = reclaimlab(&args);
        assert!(first.status.success(), "{}", stderr(&first));
        let second = reclaimlab(&args);
        assert!(second.status.success(), "{}", stderr(&second));
        assert_eq!(reused(&second, total), total, "{}", stderr(&second));
        assert!(!second.stdout.is_empty());
        assert_eq!(second.stdout, first.stdout, "{extra:?}");
        // And the same as a run without the store.
        let plain = reclaimlab(&with(&with(QUICK, extra), &["--no-store"]));
        assert!(plain.status.success(), "{}", stderr(&plain));
        assert_eq!(plain.stdout, first.stdout, "{extra:?}");
        assert_eq!(reused(&plain, total), 0);
    }
    // --json prints the runs' whole results: identical when they come from the store.
    let json = |store_args: &[&str]| {
        let o = reclaimlab(&with(&with(QUICK, &["--json"]), store_args));
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    assert_eq!(json(&["--store", s]), json(&["--no-store"]));
    // Another option is another key: nothing reused.
    let other = reclaimlab(&with(QUICK, &["--store", s, "--swappiness", "100"]));
    assert!(other.status.success(), "{}", stderr(&other));
    assert_eq!(reused(&other, 18), 0);
    integrity_ok(&store);
}

#[test]
fn a_compare_killed_with_sigkill_loses_no_finished_run() {
    // 18 runs of ~0.2 s one after another (--jobs 1), so the kill lands mid-way.
    let args = [
        "compare",
        "file-anon-mix-mini",
        "--scale",
        "0.25",
        "--policies",
        "classic,lru,mglru:7.2",
        "--seeds",
        "6",
        "--jobs",
        "1",
    ];
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.sqlite");
    let s = store.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(args)
        .args(["--store", s])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn reclaimlab");
    // Wait until at least one run is in the store, then SIGKILL.
    let start = Instant::now();
    loop {
        if rows(&store).unwrap_or(0) >= 1 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the compare ended before any run was seen in the store"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no run stored");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL"); // Child::kill sends SIGKILL on Unix
    let status = child.wait().unwrap();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(9),
            "killed mid-way, not finished: {status:?}"
        );
    }
    integrity_ok(&store);
    let kept = rows(&store).expect("a readable store") as usize;
    assert!(
        (1..18).contains(&kept),
        "{kept} runs stored before the kill"
    );
    // Run again: every run stored before the kill is reused, the rest run, and the table is
    // byte for byte the one of an uninterrupted run without the store.
    let resumed = reclaimlab(&with(&args, &["--store", s]));
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(reused(&resumed, 18), kept, "{}", stderr(&resumed));
    let plain = reclaimlab(&with(&args, &["--no-store"]));
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(!plain.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&resumed.stdout),
        String::from_utf8_lossy(&plain.stdout)
    );
    assert_eq!(rows(&store), Some(18));
    // A third run reads everything from the store.
    let again = reclaimlab(&with(&args, &["--store", s]));
    assert_eq!(reused(&again, 18), 18, "{}", stderr(&again));
    assert_eq!(again.stdout, plain.stdout);
}

#[test]
fn a_compare_killed_before_any_run_finished_leaves_a_usable_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.sqlite");
    let s = store.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(with(QUICK, &["--store", s]))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn reclaimlab");
    std::thread::sleep(Duration::from_millis(2));
    let _ = child.kill();
    let _ = child.wait();
    let o = reclaimlab(&with(QUICK, &["--store", s]));
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = reclaimlab(&with(QUICK, &["--no-store"]));
    assert_eq!(o.stdout, plain.stdout);
    integrity_ok(&store);
}

#[test]
fn no_store_writes_no_store_file() {
    let dir = tempfile::tempdir().unwrap();
    // Where the default store would go, were --no-store ignored.
    let o = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(with(QUICK, &["--seeds", "2", "--no-store"]))
        .env("XDG_CACHE_HOME", dir.path())
        .env("HOME", dir.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!o.stdout.is_empty());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "--no-store wrote {left:?}");
}

#[test]
fn the_default_store_is_in_the_cache_directory() {
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
            .args(with(QUICK, &["--seeds", "2"]))
            .env("XDG_CACHE_HOME", dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success(), "{}", stderr(&first));
    let store = dir.path().join("reclaimlab/results.sqlite");
    assert_eq!(rows(&store), Some(6));
    let second = run();
    assert_eq!(reused(&second, 6), 6);
    assert!(stderr(&second).contains(store.to_str().unwrap()));
    assert_eq!(second.stdout, first.stdout);
}

#[test]
fn a_bad_store_is_a_one_line_error_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(
        &junk,
        b"this is not an SQLite database, just some text\n".repeat(100),
    )
    .unwrap();
    let before = std::fs::read(&junk).unwrap();
    let o = reclaimlab(&with(QUICK, &["--store", junk.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.starts_with("reclaimlab: error: results store "), "{e}");
    assert!(e.contains("not a reclaimlab results store"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read(&junk).unwrap(),
        before,
        "the file was left alone"
    );

    let o = reclaimlab(&with(QUICK, &["--store", "x.sqlite", "--no-store"]));
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.starts_with("reclaimlab: error: "), "{e}");
    assert!(e.contains("--store") && e.contains("--no-store"), "{e}");
    assert!(!Path::new("x.sqlite").exists());
}

#[test]
fn an_mrc_policy_sweep_reuses_its_stored_runs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("z.rtrace");
    let t = reclaimlab(&[
        "trace",
        "zipf",
        "--scale",
        "0.125",
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(t.status.success(), "{}", stderr(&t));
    let store = dir.path().join("s.sqlite");
    let args = [
        "mrc",
        "--trace",
        trace.to_str().unwrap(),
        "--policy",
        "classic,mglru:7.2",
        "--sizes",
        "500,1500",
        "--store",
        store.to_str().unwrap(),
    ];
    let first = reclaimlab(&args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(reused(&first, 4), 0);
    assert_eq!(rows(&store), Some(4));
    let second = reclaimlab(&args);
    assert_eq!(reused(&second, 4), 4);
    assert_eq!(first.stdout, second.stdout);
    let fresh = reclaimlab(&with(&args[..7], &["--no-store"]));
    assert_eq!(first.stdout, fresh.stdout);
}
