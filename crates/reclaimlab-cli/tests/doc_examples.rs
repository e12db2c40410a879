//! Every command example of README.md and docs/*.md (each line of a ```sh block that starts
//! with a command) runs as written, in a scratch directory that holds the files the examples
//! name, and is checked against what its text says. Examples run two or more at a time; one
//! that reads a file an earlier one writes runs after it, in the same directory (`chains`).
//! An example without an expectation here fails `every_example_has_an_expectation`, so new
//! examples get checked too.
//! Examples that boot QEMU, reach the network or run for hours are "heavy": they run in
//! `heavy_examples_do_what_they_say` (`cargo test --release -- --ignored`), not in CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What an example must do.
enum Expect {
    /// Exit 0 and stdout holding each string.
    Prints(&'static [&'static str]),
    /// Exit 0 and stderr holding each string.
    Says(&'static [&'static str]),
    /// Exit 0, then a check of its own (output, files in the scratch directory).
    Check(fn(&Output, &Path)),
    /// Runs only in the ignored test; why.
    Heavy(&'static str),
}

use Expect::*;

/// The expectation of each example, by its command (the comment after `#` dropped).
fn expectation(command: &str) -> Option<Expect> {
    Some(match command {
        "cargo run --release -p reclaimlab-cli -- compare file-anon-mix-mini --policies classic,mglru:6.12,mglru:7.1,mglru:7.2,lru" => {
            Prints(&["scenario file-anon-mix-mini", "mglru:7.1", "hit_ratio", "95% CI"])
        }
        "reclaimlab scenarios" => Prints(&["seq-scan", "ycsb-b", "default scale"]),
        "reclaimlab compare ycsb-b --policies classic,mglru:7.2" => {
            Prints(&["scenario ycsb-b", "mglru:7.2", "baseline", "95% CI"])
        }
        "reclaimlab bisect memcg-limit --good mglru:7.1 --bad mglru:7.2 --metric pgactivate" => {
            Prints(&["culprit: 10 common-dirty-writeback-reactivation (75d4c3f5fb98)"])
        }
        "reclaimlab compare android-launch --policies mglru:7.1,mglru:7.2 --seeds 20" => {
            Prints(&["workingset_refault_anon", "mglru:7.2", "no significance"])
        }
        "reclaimlab bisect ycsb-b --good mglru:7.1+simplify-dirty-writeback --bad mglru:7.2 --metric pgrotated" => {
            Prints(&["culprit: 10 common-dirty-writeback-reactivation"])
        }
        "reclaimlab policies" => Prints(&["classic", "mglru", "lru", "clock", "fifo", "memcg-lru"]),
        "reclaimlab behaviours" => Prints(&[
            "eevdf",
            "partial-memcg-walk",
            "workingset-top-tier",
            "restructure-reclaim-loop",
            "fg-promotion",
            "experimental",
            "7.2.13",
        ]),
        "reclaimlab run zipf --policy classic:6.1" => {
            Prints(&["policy classic:6.1", "pgscan_kswapd", "workingset_refault_file"])
        }
        "reclaimlab run zipf --json > zipf.json" => Check(|_, dir| {
            let r = json_file(&dir.join("zipf.json"));
            for key in ["vmstat", "memcgs", "threads"] {
                assert!(r.get(key).is_some(), "zipf.json has no {key}");
            }
        }),
        "reclaimlab compare uniform --policies classic:6.1,classic:6.12,lru,clock,fifo" => {
            Prints(&["classic:6.1", "classic:6.12", "lru", "clock", "fifo"])
        }
        "reclaimlab run mixed-rw --scale 4 --seed 3" => Prints(&["scenario mixed-rw", "seed 3"]),
        "reclaimlab run memcg-limit --check" => Prints(&["scenario memcg-limit"]),
        "reclaimlab trace zipf -o zipf.trace" => Check(|_, dir| {
            let text = std::fs::read_to_string(dir.join("zipf.trace")).unwrap();
            assert!(text.starts_with("# reclaimlab-trace v1\n"));
        }),
        "reclaimlab run --trace zipf.trace --memory-mib 64 --swap zram" => {
            Prints(&["scenario zipf.trace"])
        }
        "reclaimlab run --trace ../shared/traces/cloudPhysicsIO.vscsi --format vscsi --memory-mib 16" => {
            Prints(&["scenario cloudPhysicsIO.vscsi", "pgpgin"])
        }
        "reclaimlab bench --memory" => Prints(&["B/frame", "classic", "lru", "accesses/s"]),
        "reclaimlab compare zipf --policies classic,mglru:6.12,mglru:7.2 --seeds 10 --csv --save raw.json" => {
            Check(|o, dir| {
                let out = String::from_utf8_lossy(&o.stdout);
                assert!(out.starts_with("metric,policy,mean,ci95_low,ci95_high,vs_first_welch95\n"));
                let raw = json_file(&dir.join("raw.json"));
                let per_policy = raw.as_array().unwrap();
                assert_eq!(per_policy.len(), 3);
                assert!(per_policy.iter().all(|p| p.as_array().unwrap().len() == 10));
            })
        }
        "reclaimlab compare zipf --policies classic,mglru --seeds 1" => {
            Prints(&["scenario zipf", "classic:6.12", "mglru:7.2"])
        }
        "reclaimlab compare zipf --store runs.sqlite" => Check(|_, dir| {
            assert!(dir.join("runs.sqlite").exists(), "no runs.sqlite");
        }),
        "reclaimlab compare zipf --no-store" => Prints(&["scenario zipf", "95% CI"]),
        "reclaimlab compare swap-storm --policies classic,mglru --cpus 1" => {
            Prints(&["scenario swap-storm", "cpu.runqueue_wait_ns", "cpu.kswapd_ns"])
        }
        "reclaimlab stats results.txt" => Prints(&["Jain", "Welch"]),
        "reclaimlab run mmap-zipf --policy mglru:7.1 --lru-gen" => {
            Prints(&["policy mglru:7.1", "memcg 1 /", " node     0"])
        }
        "reclaimlab run mmap-zipf --policy mglru:7.2 --lru-gen-full" => {
            Prints(&["policy mglru:7.2", "memcg 1 /", " node     0"])
        }
        "reclaimlab run zipf --policy mglru:7.1+restructure-reclaim-loop+dont-abort-after-aging" => {
            Prints(&["policy mglru:7.1+restructure-reclaim-loop+dont-abort-after-aging"])
        }
        "reclaimlab bisect mmap-zipf --good mglru:6.12 --bad mglru:7.1 --metric misses" => {
            Prints(&["culprit: fault-around-credits-faulting-folio-only (7.1, 0b9c0aeba938)"])
        }
        "reclaimlab bisect anon-only --good classic:6.1 --bad classic:6.12-memcg-stats-flush-ratelimited --metric vmstat.pgpgin" => {
            Prints(&["culprit: sync-swap-io-in-pgpg (6.12, 3222d8c2a7f8)"])
        }
        "reclaimlab bisect file-anon-mix-mini --good mglru:6.1 --bad mglru:6.12 --metric workingset_refault_file" => {
            Prints(&[
                "culprit: refault-counts-every-refault (6.12, 3af0191a594d)",
                "(does not move it further)",
            ])
        }
        "reclaimlab bisect android-launch --good mglru:6.12 --bad mglru:6.12+consolidate-evictable-size+rename-aging-rotation-vars+relocate-scan-batch-limit+restructure-reclaim-loop+exact-scan-count+avoid-type-fallback+smaller-reclaim-batch+dont-abort-after-aging+remove-swap-constrained-check+simplify-dirty-writeback+drop-reclaiming-arg+remove-file-taken+remove-unqueued-dirty+unify-writeback-throttling --metric workingset_refault_file --seeds 20" => {
            Prints(&[
                "culprit: 04 restructure-reclaim-loop (163bc3d68c9f)",
                "(does not move it further)",
            ])
        }
        "reclaimlab run zipf --policy mglru:7.2-dont-abort-after-aging" => {
            Prints(&["policy mglru:7.2-dont-abort-after-aging"])
        }
        "reclaimlab run mmap-zipf --policy mglru --enabled 0x0005" => Prints(&["policy mglru:7.2"]),
        "reclaimlab run anon-only --policy mglru --min-ttl-ms 1000" => Prints(&["policy mglru:7.2"]),
        "reclaimlab run memcg-limit --policy mglru --lru-gen-cmd \"1500:- 2 0 1 60 500\"" => {
            Says(&["lru_gen at 1500 ms: '- 2 0 1 60 500' -> ok, 500 pages freed"])
        }
        "reclaimlab run memcg-limit --policy mglru --lru-gen-schedule plan.txt --lru-gen-sample-ms 1000 --json" => {
            Check(|o, _| {
                let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
                let samples = r["lru_gen_samples"].as_array().unwrap();
                assert!(samples.len() >= 2, "samples every second: {}", samples.len());
                let cmds = r["lru_gen_commands"].as_array().unwrap();
                assert_eq!(cmds.len(), 2, "both scheduled commands ran");
                assert!(cmds.iter().all(|c| c["ok"] == true), "{cmds:?}");
            })
        }
        "reclaimlab compare android-launch --policies classic:6.12,classic:6.12@heat,mglru:7.2,mglru:7.2@iter,mglru:7.2@heat --seeds 1" => {
            Check(|o, _| {
                // The walks differ: the misses row is not five times the same number.
                let out = String::from_utf8_lossy(&o.stdout);
                let misses = out.lines().find(|l| l.starts_with("misses")).unwrap();
                let cells: Vec<&str> = misses.split_whitespace().skip(1).collect();
                assert_eq!(cells.len(), 5, "{misses}");
                assert!(cells[0] != cells[1] && cells[2] != cells[3] && cells[3] != cells[4], "{misses}");
            })
        }
        "reclaimlab validate --list" => Prints(&["file-pread-zipf", "anon-zipf-zram"]),
        "reclaimlab validate --workload file-pread-zipf --kernel 6.1 --mode classic --boots 1" => {
            Heavy("boots Debian's 6.1 under QEMU (downloads the kernel packages)")
        }
        "reclaimlab validate --suite" => Heavy("boots every kernel and mode under QEMU (hours)"),
        "reclaimlab validate --suite --resume" => Heavy("boots every kernel and mode under QEMU"),
        "reclaimlab validate --suite smp2 --boots 5" => {
            Heavy("boots every kernel and mode with 2 vCPUs under QEMU (hours)")
        }
        "reclaimlab validate --suite readahead" => {
            Heavy("boots every kernel and mode with readahead on under QEMU")
        }
        "reclaimlab validate --suite steady --kernel 6.1,6.12 --boots 2" => {
            Heavy("boots 6.1 and 6.12 eight times under QEMU (16 min)")
        }
        "reclaimlab validate --table-only --out validation/results/2026-11-23" => {
            Prints(&["# reclaimlab fidelity: real kernels vs the model", "| workload | kernel |"])
        }
        "reclaimlab validate --remodel --out validation/results/2026-11-23" => {
            Prints(&["# reclaimlab fidelity", "file-pread-zipf"])
        }
        "reclaimlab validate --workload file-pread-zipf --parse-console LOG" => {
            Prints(&["file-pread-zipf"])
        }
        "reclaimlab run --trace t.oracleGeneral.zst --format oracleGeneral --policy lru --cache-pages 100000" => {
            Prints(&["policy lru", "capacity 100000 pages"])
        }
        "reclaimlab compare --trace t.vscsi --format vscsi --policies classic,mglru:7.2,lru --cache-pages 4096" => {
            Prints(&["scenario t.vscsi", "classic:6.12", "mglru:7.2", "lru"])
        }
        "reclaimlab run memcg-limit --policy mglru:7.2 --sample-ms 100 --timeseries ts.csv" => {
            Check(|_, dir| {
                let text = std::fs::read_to_string(dir.join("ts.csv")).unwrap();
                assert!(text.starts_with("time_ms,vmstat."), "{}", &text[..80]);
                assert!(text.contains(",memcg./limited.memory.current,"));
                assert!(text.lines().nth(2).unwrap().starts_with("100,"));
            })
        }
        "reclaimlab sweep grid.toml --save sweep.json" => Check(|o, dir| {
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(out.starts_with("scenario,policy,memory_max,seed,accesses"), "{out}");
            let records = json_file(&dir.join("sweep.json"));
            assert_eq!(records.as_array().unwrap().len(), 8, "2 policies x 2 limits x 2 seeds");
        }),
        "reclaimlab report sweep.json -o report.html --no-plots" => Check(|_, dir| {
            let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
            assert!(html.contains("<h2>Comparisons</h2>") && html.contains("memory_max"));
        }),
        "reclaimlab plot timeseries ts.csv -o ts.png" => {
            Heavy("needs the reclaimlab Python package with matplotlib (its tests draw plots)")
        }
        "python3 scripts/bench_libcachesim.py" => {
            Heavy("installs libCacheSim from PyPI and replays 20M requests")
        }
        "python3 scripts/bench_libcachesim.py --quick" => Heavy("installs libCacheSim from PyPI"),
        "reclaimlab run --trace zipf20m.oracleGeneral --format oracleGeneral --policy lru --cache-pages 91486" => {
            Prints(&["policy lru", "capacity 91486 pages"])
        }
        "reclaimlab mrc --trace zipf10m.oracleGeneral --format oracleGeneral --points 50" => {
            Prints(&["cache_pages", "miss_ratio"])
        }
        "reclaimlab mrc --trace zipf10m.oracleGeneral --format oracleGeneral --sample-rate 0.1 --compare-exact --points 50" => {
            Prints(&["cache_pages", "miss_ratio"])
        }
        "reclaimlab mrc --trace t.vscsi --format vscsi --policy lru,classic,mglru:7.2 --sizes 1000,4000,16000" => {
            Prints(&["lru", "classic", "mglru:7.2", "16000"])
        }
        "reclaimlab bench --memory --scenarios zipf --policies classic,mglru:7.2,lru --reps 1" => {
            Prints(&["B/frame", "classic", "mglru:7.2", "lru"])
        }
        "reclaimlab bench --scaling --scenarios file-anon-mix,ycsb-b --policies classic,mglru:7.2 --max-time 0.1" => {
            Prints(&["file-anon-mix", "ycsb-b", "ns/access"])
        }
        "reclaimlab bench --scaling --scenarios chrome-node --policies classic,mglru:7.2 --scales 1/4096,1/1024,1/256,1/64 --max-time 1000" => {
            Heavy("chrome-node up to 1/64 of its size for 1000 simulated s: hours")
        }
        "python3 scripts/seed_table.py target/release/reclaimlab results > table.md" => {
            Heavy("needs `compare --save` results of every seed scenario (hours)")
        }
        "reclaimlab run memcg-limit" => Prints(&["/proc/pressure/memory", "some avg10=", "full avg10="]),
        "reclaimlab run memcg-limit --json > memcg-limit.json" => Check(|_, dir| {
            let r = json_file(&dir.join("memcg-limit.json"));
            assert!(r["psi"]["memory"]["some"]["total_us"].is_u64());
            for m in r["memcgs"].as_array().unwrap() {
                assert!(m["current_mean_pages"].is_f64() && m["peak_pages"].is_u64());
                assert!(m["psi"]["memory"]["full"]["avg10"].is_f64());
            }
        }),
        "reclaimlab run android-launch --policy mglru --agent damon-reclaim:min_age=5000000,wmarks=no" => {
            Prints(&["agent damon-reclaim:min_age=5000000,wmarks=no", "vs. no agents: slowdown", "saved)"])
        }
        "reclaimlab run android-launch --policy mglru --agent lru-gen-age:age=10 --agent oomd" => {
            Prints(&["agent lru-gen-age:age=10", "agent oomd", "vs. no agents"])
        }
        "reclaimlab compare android-launch --policies classic,mglru --agent senpai:min_size=0 --seeds 3" => {
            Prints(&["scenario android-launch", "mem_mean_pages", "psi_some_us"])
        }
        "reclaimlab save-memory android-launch --scale 0.03125 --max-slowdown 2" => {
            Prints(&["frontier", "most memory saved with at most 2% slowdown"])
        }
        "reclaimlab save-memory android-launch --scale 0.03125" => {
            Prints(&["damon-reclaim", "lru-gen-age", "most memory saved with at most 5% slowdown"])
        }
        "reclaimlab save-memory ycsb-b --scale 0.00390625 --duration 20" => {
            Heavy("30 runs of 20 simulated s of 32 threads: about 10 minutes on 2 cores")
        }
        "reclaimlab save-memory file-anon-mix-mini" => Heavy("30 runs: about a minute on 2 cores"),
        _ => return None,
    })
}

struct Example {
    doc: String,
    line: usize,
    command: String,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The command lines of the ```sh blocks of README.md and docs/*.md, in document order.
fn examples() -> Vec<Example> {
    let mut docs = vec![repo().join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    let mut out = Vec::new();
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut in_sh = false;
        for (i, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                in_sh = !in_sh && line.trim_start_matches('`').trim() == "sh";
                continue;
            }
            let is_command = ["reclaimlab ", "cargo run ", "python3 "]
                .iter()
                .any(|c| line.starts_with(c));
            if in_sh && is_command {
                out.push(Example {
                    doc: doc.file_name().unwrap().to_string_lossy().into(),
                    line: i + 1,
                    command: strip_comment(line).to_string(),
                });
            }
        }
    }
    out
}

/// The command without its trailing `# comment` (a `#` outside quotes after a space).
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'#' if !quoted && i > 0 && bytes[i - 1] == b' ' => return line[..i].trim_end(),
            _ => {}
        }
    }
    line.trim_end()
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn oracle_records(n: u64, objects: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut x = 12345u64;
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let id = (x >> 33) % objects;
        out.extend_from_slice(&((i / 1000) as u32).to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&4096u32.to_le_bytes());
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
    out
}

/// The scratch directory: `work/` (where the examples run) beside `shared/traces/`, with the
/// files the examples name (small stand-ins for the large traces of docs/performance.md).
fn sandbox() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    std::fs::create_dir_all(work.join("scripts")).unwrap();
    std::fs::create_dir_all(root.path().join("shared/traces")).unwrap();
    // The workplace's trace beside the repository; in a clone without it, the first 200
    // records of it that the fuzz seeds keep.
    let vscsi_bytes = std::fs::read(repo().join("../shared/traces/cloudPhysicsIO.vscsi"))
        .or_else(|_| std::fs::read(repo().join("fuzz/seeds/trace_vscsi/cloudphysics_head.vscsi")))
        .unwrap();
    std::fs::write(
        root.path().join("shared/traces/cloudPhysicsIO.vscsi"),
        &vscsi_bytes,
    )
    .unwrap();
    std::fs::write(work.join("t.vscsi"), &vscsi_bytes).unwrap();
    let oracle = oracle_records(200_000, 50_000);
    std::fs::write(work.join("zipf20m.oracleGeneral"), &oracle).unwrap();
    std::fs::write(work.join("zipf10m.oracleGeneral"), &oracle).unwrap();
    std::fs::write(
        work.join("t.oracleGeneral.zst"),
        zstd::encode_all(&oracle[..], 3).unwrap(),
    )
    .unwrap();
    std::fs::write(
        work.join("plan.txt"),
        "# evict memcg 2's oldest generations at 1 s, then age it at 2 s\n\
         1000 - 2 0 1 60 200\n2000 + 2 0 3 1 1\n",
    )
    .unwrap();
    std::fs::write(
        work.join("grid.toml"),
        "scenarios = [\"memcg-limit\"]\npolicies = [\"classic\", \"mglru:7.2\"]\n\
         memory_max = [\"/limited=24M\", \"/limited=32M\"]\nseeds = 2\n",
    )
    .unwrap();
    std::fs::write(
        work.join("results.txt"),
        "a b\n10 12\n11 13\n10.5 12.5\n10.2 12.9\n",
    )
    .unwrap();
    copy_dir(&repo().join("validation"), &work.join("validation"));
    let console =
        repo().join("validation/results/2026-11-23/consoles/file-pread-zipf-6.1-classic-1.log");
    std::fs::copy(console, work.join("LOG")).unwrap();
    for s in ["bench_libcachesim.py", "seed_table.py"] {
        std::fs::copy(repo().join("scripts").join(s), work.join("scripts").join(s)).unwrap();
    }
    root
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Runs one example through `sh` with reclaimlab on PATH (and `cargo run ... --` meaning the
/// same binary), the results store inside the sandbox.
fn run(command: &str, work: &Path, cache: &Path) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_reclaimlab"));
    let command = command.replace("cargo run --release -p reclaimlab-cli --", "reclaimlab");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(work)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .unwrap()
}

fn check(example: &Example, expect: &Expect, work: &Path, cache: &Path) {
    let where_ = format!("{}:{}: {}", example.doc, example.line, example.command);
    let o = run(&example.command, work, cache);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{where_}\nexit {:?}\n{stderr}",
        o.status
    );
    match expect {
        Prints(wanted) => {
            for w in *wanted {
                assert!(
                    stdout.contains(w),
                    "{where_}: stdout lacks '{w}':\n{stdout}"
                );
            }
        }
        Says(wanted) => {
            for w in *wanted {
                assert!(
                    stderr.contains(w),
                    "{where_}: stderr lacks '{w}':\n{stderr}"
                );
            }
        }
        Check(f) => f(&o, work),
        Heavy(why) => eprintln!("{where_}: ran (heavy: {why})"),
    }
}

/// The files an example writes: the words after `-o`, `>`, `--save`, `--store`,
/// `--timeseries` and `--out`.
fn outputs(command: &str) -> Vec<&str> {
    let words: Vec<&str> = command.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| ["-o", ">", "--save", "--store", "--timeseries", "--out"].contains(&w[0]))
        .map(|w| w[1])
        .collect()
}

/// The examples in chains, in document order: an example that names a file an earlier one
/// writes joins that one's chain (and runs after it, in the same scratch directory); an
/// example that names none starts a chain of its own.
fn chains(examples: Vec<Example>) -> Vec<Vec<Example>> {
    let mut chains: Vec<Vec<Example>> = Vec::new();
    let mut writer: Vec<(String, usize)> = Vec::new();
    for e in examples {
        let words: Vec<&str> = e.command.split_whitespace().collect();
        let joins = writer
            .iter()
            .find(|(file, _)| words.contains(&file.as_str()))
            .map(|&(_, chain)| chain);
        let chain = joins.unwrap_or_else(|| {
            chains.push(Vec::new());
            chains.len() - 1
        });
        for file in outputs(&e.command) {
            writer.push((file.to_string(), chain));
        }
        chains[chain].push(e);
    }
    chains
}

/// Runs the examples (the heavy ones, or the others) on a few threads, each taking the next
/// chain in document order and running it in a scratch directory and results store of its
/// own: the examples are independent but for the chains, and most run one simulation on one
/// CPU, so CI's two cores take them two at a time.
fn run_examples(heavy: bool) {
    let selected: Vec<Example> = examples()
        .into_iter()
        .filter(|e| {
            let expect = expectation(&e.command).expect("checked by the coverage test");
            matches!(expect, Heavy(_)) == heavy
        })
        .collect();
    let queue = std::sync::Mutex::new(std::collections::VecDeque::from(chains(selected)));
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let root = sandbox();
                let work = root.path().join("work");
                let cache = root.path().join("cache");
                loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                    let Some(chain) = next else { break };
                    for example in &chain {
                        let expect = expectation(&example.command).expect("checked above");
                        check(example, &expect, &work, &cache);
                    }
                }
            });
        }
    });
}

#[test]
fn examples_that_share_a_file_run_in_one_chain_in_document_order() {
    let ex = |command: &str| Example {
        doc: "t.md".into(),
        line: 1,
        command: command.into(),
    };
    let got = chains(vec![
        ex("reclaimlab trace zipf -o zipf.trace"),
        ex("reclaimlab run zipf --json > zipf.json"),
        ex("reclaimlab run --trace zipf.trace --memory-mib 64"),
        ex("reclaimlab sweep grid.toml --save sweep.json"),
        ex("reclaimlab report sweep.json -o report.html"),
        ex("reclaimlab stats results.txt"),
    ]);
    let commands: Vec<Vec<&str>> = got
        .iter()
        .map(|c| c.iter().map(|e| e.command.as_str()).collect())
        .collect();
    assert_eq!(
        commands,
        vec![
            vec![
                "reclaimlab trace zipf -o zipf.trace",
                "reclaimlab run --trace zipf.trace --memory-mib 64"
            ],
            vec!["reclaimlab run zipf --json > zipf.json"],
            vec![
                "reclaimlab sweep grid.toml --save sweep.json",
                "reclaimlab report sweep.json -o report.html"
            ],
            vec!["reclaimlab stats results.txt"],
        ]
    );
}

#[test]
fn every_example_has_an_expectation() {
    let all = examples();
    assert!(all.len() >= 40, "only {} examples found", all.len());
    let missing: Vec<String> = all
        .iter()
        .filter(|e| expectation(&e.command).is_none())
        .map(|e| format!("{}:{}: {}", e.doc, e.line, e.command))
        .collect();
    assert!(
        missing.is_empty(),
        "examples without a check:\n{}",
        missing.join("\n")
    );
}

#[test]
fn examples_do_what_they_say() {
    run_examples(false);
}

#[test]
#[ignore = "QEMU, the network and hours: run with --ignored"]
fn heavy_examples_do_what_they_say() {
    run_examples(true);
}
