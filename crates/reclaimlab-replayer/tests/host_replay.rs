//! The replayer run on the host, serial and concurrent, with a fake cgroup root (plain
//! directories whose `cgroup.procs` are ordinary files): every record runs exactly once, in both
//! modes, and the concurrent plan goes through the start barrier.

use reclaimlab_replayer::{
    encode_plan, PlanFile, PlanHeader, PlanMemcg, PlanProc, PlanRecord, ANON,
};
use std::path::Path;
use std::process::Command;

fn plan(concurrent: bool) -> Vec<u8> {
    let h = PlanHeader {
        memcgs: vec![PlanMemcg {
            index: 1,
            path: "/w".into(),
        }],
        files: vec![PlanFile {
            id: 0,
            pages: 16,
            name: "file0".into(),
        }],
        procs: vec![
            PlanProc {
                pid: 1,
                memcg: 1,
                anon_pages: 8,
            },
            PlanProc {
                pid: 2,
                memcg: 1,
                anon_pages: 0,
            },
        ],
        n_records: 0,
        concurrent,
    };
    let mut r = Vec::new();
    for i in 0..40u64 {
        // Process 0: anonymous stores and mapped loads; process 1: pread and pwrite.
        r.push(PlanRecord::new(0, ANON, i % 8, true, true));
        r.push(PlanRecord::new(0, 0, i % 16, false, true));
        r.push(PlanRecord::new(1, 0, (i * 7) % 16, i % 3 == 0, false));
    }
    let h = PlanHeader {
        n_records: r.len() as u64,
        ..h
    };
    encode_plan(&h, &r)
}

fn run(dir: &Path, concurrent: bool) -> String {
    let data = dir.join("data");
    let cg = dir.join("cg");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(cg.join("w")).unwrap();
    std::fs::write(cg.join("w/cgroup.procs"), "").unwrap();
    std::fs::write(data.join("file0"), vec![0x5a; 16 * 4096]).unwrap();
    let p = dir.join("plan.bin");
    std::fs::write(&p, plan(concurrent)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_reclaimlab-replayer"))
        .args([
            p.to_str().unwrap(),
            data.to_str().unwrap(),
            cg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let procs = std::fs::read_to_string(cg.join("w/cgroup.procs")).unwrap();
    assert!(!procs.trim().is_empty(), "the processes joined the memcg");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn serial_and_concurrent_plans_run_every_record_once() {
    for concurrent in [false, true] {
        let dir =
            std::env::temp_dir().join(format!("rl-replayer-{}-{}", std::process::id(), concurrent));
        let _ = std::fs::remove_dir_all(&dir);
        let out = run(&dir, concurrent);
        assert_eq!(out.contains("concurrent 1"), concurrent, "{out}");
        assert!(out.contains("records 120"));
        assert!(
            out.contains("pid 1 accesses 80 misses ") && out.contains("pid 2 accesses 40 misses "),
            "{out}"
        );
        assert!(!out.contains("not_run 1") && out.matches("not_run 0 killed 0").count() == 2);
        assert!(
            out.contains("pid 1 exit 0") && out.contains("pid 2 exit 0"),
            "{out}"
        );
        assert!(out.contains("=== missmap ===") && out.contains("=== replay end ==="));
        // First touches of the 8 anonymous pages are misses; nothing else can be counted twice.
        let misses: u64 = out
            .lines()
            .filter(|l| l.starts_with("pid ") && l.contains(" accesses "))
            .map(|l| l.split_whitespace().nth(5).unwrap().parse::<u64>().unwrap())
            .sum();
        assert!((8..=8 + 32).contains(&misses), "{misses} misses: {out}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
