//! The hostile-input battery: traces and options a new user (or an attacker) might give.
//! Every case must end in exit 0 or 2 within 20 s and 4 GB of address space (RLIMIT_AS), with
//! no panic, no abort and no hang; exit 2 comes with one line on stderr and nothing on
//! stdout, and leaves no --out file behind.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT_BYTES: u64 = 4 << 30;
const LIMIT_TIME: Duration = Duration::from_secs(20);

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs reclaimlab under the battery's limits.
fn run_limited(args: &[&str], dir: &Path) -> Outcome {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reclaimlab"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT_BYTES,
                rlim_max: LIMIT_BYTES,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn reclaimlab");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > LIMIT_TIME {
            let _ = child.kill();
            panic!("{args:?}: still running after {LIMIT_TIME:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("output");
    assert!(
        status.code().is_some(),
        "{args:?}: killed by a signal: {status:?}"
    );
    Outcome {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

/// Asserts the outcome of one hostile case: `want` is the exit code (0 or 2).
fn check(args: &[&str], dir: &Path, want: i32) -> Outcome {
    let o = run_limited(args, dir);
    assert!(
        !o.stderr.contains("panicked") && !o.stderr.contains("memory allocation"),
        "{args:?}: {}",
        o.stderr
    );
    assert_eq!(o.code, Some(want), "{args:?}: {}", o.stderr);
    if want == 2 {
        assert!(
            o.stderr.starts_with("reclaimlab: error: "),
            "{args:?}: {}",
            o.stderr
        );
        assert_eq!(
            o.stderr.trim_end().lines().count(),
            1,
            "{args:?}: {}",
            o.stderr
        );
        assert!(
            o.stdout.is_empty(),
            "{args:?}: printed before failing: {}",
            o.stdout
        );
    }
    o
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().expect("tempdir"))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
        p
    }
}

const H: &str = "# reclaimlab-trace v1\n";

fn native(body: &str) -> Vec<u8> {
    format!("{H}{body}").into_bytes()
}

fn oracle(records: &[(u32, u64, u32)]) -> Vec<u8> {
    records
        .iter()
        .flat_map(|&(t, id, size)| {
            let mut r = Vec::new();
            r.extend_from_slice(&t.to_le_bytes());
            r.extend_from_slice(&id.to_le_bytes());
            r.extend_from_slice(&size.to_le_bytes());
            r.extend_from_slice(&(-1i64).to_le_bytes());
            r
        })
        .collect()
}

/// Deterministic pseudo-random bytes (splitmix64).
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

#[test]
fn hostile_traces_end_in_0_or_2_within_limits() {
    let d = Dir::new();
    let many_pids: String = (0..20_000)
        .map(|i| format!("0 {i} 0 f 1 0 r f\n"))
        .collect();
    let sparse_ids: String = (0..100)
        .map(|i| format!("0 1 0 f {} 0 r f\n", i * 40_000_000u64))
        .collect();
    let cases: Vec<(&str, Vec<u8>, &str, i32)> = vec![
        // The fixture that once aborted with a 128 GiB allocation.
        (
            "small.rtrace",
            std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../reclaimlab/tests/fixtures/trace/small.rtrace"
            ))
            .unwrap(),
            "native",
            2,
        ),
        (
            "anonmax.rtrace",
            native("0 1 0 a 0 18446744073709551615 r m\n"),
            "native",
            2,
        ),
        (
            "anonbig.rtrace",
            native("0 1 0 a 0 2147483648 r m\n"),
            "native",
            2,
        ),
        (
            "filepage40.rtrace",
            native("0 1 0 f 1 1099511627776 r f\n"),
            "native",
            0,
        ),
        (
            "filepagemax.rtrace",
            native("0 1 0 f 1 18446744073709551615 r f\n"),
            "native",
            2,
        ),
        (
            "fileidmax.rtrace",
            native("0 1 0 f 4294967295 0 r f\n"),
            "native",
            0,
        ),
        ("fileidsparse.rtrace", native(&sparse_ids), "native", 0),
        (
            "declbig.rtrace",
            native("# file 1 18446744073709551615\n0 1 0 f 1 0 r f\n"),
            "native",
            2,
        ),
        (
            "timemax.rtrace",
            native("0 1 0 f 1 0 r f\n18446744073709551615 1 0 f 1 1 r f\n"),
            "native",
            2,
        ),
        (
            "timebig.rtrace",
            native("0 1 0 f 1 0 r f\n1000000000000000000 1 0 f 1 1 r f\n"),
            "native",
            0,
        ),
        // Idle time is free, but not a sample every ms of 31 years.
        (
            "timebig-sampled.rtrace",
            native("0 1 0 f 1 0 r f\n1000000000000000000 1 0 f 1 1 r f\n"),
            "native --policy mglru --lru-gen-sample-ms 1",
            2,
        ),
        (
            "memcgmax.rtrace",
            native("# memcg 65535 /x\n0 1 65535 f 1 0 r f\n"),
            "native",
            0,
        ),
        ("manypids.rtrace", native(&many_pids), "native", 0),
        // read() requests of 2^32 - 1 pages: read io_pages at a time, never all at once.
        (
            "reqmax.rtrace",
            native("# file 1 4294967296\n0 1 0 f 1 0 r f 4294967295\n0 1 0 f 1 1 r f 4294967294\n"),
            "native",
            0,
        ),
        ("reqzero.rtrace", native("0 1 0 f 1 0 r f 0\n"), "native", 2),
        (
            "reqwrite.rtrace",
            native("0 1 0 f 1 0 w f 8\n"),
            "native",
            2,
        ),
        ("empty.rtrace", native(""), "native", 0),
        ("nomagic.rtrace", b"0 1 0 f 1 0 r f\n".to_vec(), "native", 2),
        ("noise.rtrace", noise(24_000, 1), "native", 2),
        ("noise.oracle", noise(24_000, 2), "oracleGeneral", 2),
        ("noise.vscsi", noise(24_000, 3), "vscsi", 2),
        ("noise.csv", noise(3_000, 4), "csv", 2),
        // 200 objects of 4 GiB: 800 GiB of distinct pages.
        (
            "hugeobjects.oracle",
            oracle(
                &(0..200)
                    .map(|i| (i, i as u64, u32::MAX))
                    .collect::<Vec<_>>(),
            ),
            "oracleGeneral",
            2,
        ),
        (
            "oracletime.oracle",
            oracle(&[(0, 1, 1), (u32::MAX, 2, 1)]),
            "oracleGeneral",
            0,
        ),
        ("truncated.oracle", vec![0u8; 25], "oracleGeneral", 2),
        ("negative.csv", b"-1,2,3\n".to_vec(), "csv", 2),
        (
            "hugeoffset.csv",
            b"1,18446744073709551615,4096\n".to_vec(),
            "csv",
            2,
        ),
    ];
    for (name, bytes, format, want) in &cases {
        let path = d.file(name, bytes);
        let p = path.to_str().unwrap();
        // `format` may carry more options after the format's name.
        let mut args = vec!["run", "--trace", p, "--format"];
        args.extend(format.split(' '));
        check(&args, d.path(), *want);
        if *want == 2 {
            // No result file is left behind.
            let out = d.path().join("out.json");
            args.extend(["--out", "out.json"]);
            check(&args, d.path(), 2);
            assert!(!out.exists(), "{name}: --out written");
        }
    }
}

#[test]
fn options_that_would_do_nothing_are_refused() {
    let d = Dir::new();
    d.file("t.rtrace", &native("0 1 0 f 1 0 r f\n"));
    for args in [
        vec!["run", "zipf", "--with", "smaller-reclaim-batch"],
        vec![
            "run",
            "zipf",
            "--policy",
            "classic",
            "--without",
            "exact-scan-count",
        ],
        vec!["run", "zipf", "--enabled", "0x7"],
        vec!["run", "zipf", "--min-ttl-ms", "1000"],
        vec!["run", "zipf", "--lru-gen-sample-ms", "100"],
        vec!["run", "zipf", "--lru-gen"],
        vec!["run", "zipf", "--policy", "lru", "--kernel", "6.1"],
        vec!["run", "zipf", "--policy", "lru", "--swappiness", "10"],
        vec!["run", "zipf", "--policy", "fifo", "--check"],
        vec!["run", "zipf", "--memory-mib", "128"],
        vec!["run", "zipf", "--format", "vscsi"],
        vec!["run", "zipf", "--swap", "zram"],
        vec!["run", "zipf", "--device", "hdd"],
        vec!["run", "--trace", "t.rtrace", "--scale", "2"],
        vec!["run", "zipf", "--max-time", "nan"],
        vec!["run", "zipf", "--max-time", "-1"],
        vec!["run", "zipf", "--max-time", "1e300"],
        vec!["compare", "zipf", "--seeds", "0"],
        vec!["mrc", "--trace", "t.rtrace", "--store", "s.sqlite"],
        vec![
            "mrc",
            "--trace",
            "t.rtrace",
            "--policy",
            "classic",
            "--store",
            "s",
            "--no-store",
        ],
        vec!["compare", "zipf", "--seeds", "1", "--csv"],
        vec!["compare", "zipf", "--csv", "--json"],
        vec![
            "run",
            "zipf",
            "--policy",
            "mglru",
            "--lru-gen-sample-ms",
            "0",
        ],
        vec![
            "run",
            "zipf",
            "--policy",
            "mglru",
            "--lru-gen-cmd",
            "100:garbage",
        ],
        vec![
            "run",
            "zipf",
            "--policy",
            "mglru",
            "--lru-gen-cmd",
            "18446744073709551615:+ 0 0 1",
        ],
        // Scheduled after --max-time ends the run, or after the run ends by itself.
        vec![
            "run",
            "zipf",
            "--policy",
            "mglru",
            "--max-time",
            "1",
            "--lru-gen-cmd",
            "2000:+ 0 0 1",
        ],
        vec![
            "run",
            "memcg-limit",
            "--policy",
            "mglru",
            "--lru-gen-cmd",
            "30000:- 2 0 3 60 500",
        ],
    ] {
        check(&args, d.path(), 2);
    }
}

#[test]
fn output_errors_are_errors_not_panics() {
    let d = Dir::new();
    // stdout on a full device.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let o = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
            .args(["scenarios"])
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains("No space left on device"), "{e}");
    }
    // stdout a pipe closed before the output comes (EPIPE).
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args([
            "compare",
            "zipf",
            "--scale",
            "0.1",
            "--seeds",
            "1",
            "--no-store",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("cannot write to stdout: Broken pipe"), "{e}");
    // --out into a directory that does not exist.
    check(
        &[
            "run",
            "zipf",
            "--scale",
            "0.1",
            "--out",
            "no/such/dir/r.json",
        ],
        d.path(),
        2,
    );
}

#[test]
fn out_replaces_a_planted_symlink_and_never_writes_through_it() {
    let d = Dir::new();
    let victim = d.file("victim.txt", b"precious");
    std::os::unix::fs::symlink(&victim, d.path().join("r.json")).unwrap();
    check(
        &["run", "zipf", "--scale", "0.1", "--out", "r.json"],
        d.path(),
        0,
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let meta = std::fs::symlink_metadata(d.path().join("r.json")).unwrap();
    assert!(meta.file_type().is_file(), "r.json is a regular file now");
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
