//! `reclaimlab bisect` on real scenarios: a culprit among decoys, two changes that share the
//! move, and the refusals.

mod common;
use common::{reclaimlab, stderr};

fn json_of(args: &[&str]) -> serde_json::Value {
    let o = reclaimlab(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn names_the_switch_that_moves_the_metric_among_decoys() {
    // memcg-limit: 7.1 never activates (pgactivate 0), 7.2 does, because patch 10 sends
    // dirty/writeback folios through shrink_folio_list's activation. 01 changes nothing and
    // 07 only the batch size: decoys on either side.
    let v = json_of(&[
        "bisect",
        "memcg-limit",
        "--good",
        "mglru:7.1",
        "--bad",
        "mglru:7.1+consolidate-evictable-size+smaller-reclaim-batch+common-dirty-writeback-reactivation+simplify-dirty-writeback",
        "--metric",
        "pgactivate",
        "--no-store",
        "--json",
    ]);
    assert_eq!(v["culprit"], "common-dirty-writeback-reactivation", "{v:#}");
    assert_eq!(v["commit"], "75d4c3f5fb98");
    assert_eq!(
        v["behaviours"],
        serde_json::json!([
            "consolidate-evictable-size",
            "smaller-reclaim-batch",
            "common-dirty-writeback-reactivation",
            "simplify-dirty-writeback"
        ])
    );
    assert_eq!(v["alone"]["vs_good"]["significant"], true);
    assert_eq!(v["rest"]["moves_further"], false);
    assert_eq!(v["good"]["mean"], 0.0);
    // Every step has its interval and verdict; no step is repeated.
    let steps = v["steps"].as_array().unwrap();
    let mut ks: Vec<u64> = steps
        .iter()
        .map(|s| s["applied"].as_u64().unwrap())
        .collect();
    ks.sort();
    ks.dedup();
    assert_eq!(ks.len(), steps.len());
    assert!(steps
        .iter()
        .all(|s| s["ci95"].is_array() && s["verdict"].is_string()));
}

#[test]
fn says_no_single_culprit_when_two_switches_share_the_move() {
    // anon-only's anon activations on refault: 04 (the restructured loop) takes them from
    // ~7630 to ~7450, 05 (exact scan counts) on to ~7220, so the state with 04 alone is like
    // neither end and neither switch is the change on its own.
    let v = json_of(&[
        "bisect",
        "anon-only",
        "--good",
        "mglru:7.1",
        "--bad",
        "mglru:7.1+restructure-reclaim-loop+exact-scan-count",
        "--metric",
        "workingset_activate_anon",
        "--no-store",
        "--json",
    ]);
    assert!(v["culprit"].is_null(), "{v:#}");
    assert_eq!(
        v["range"],
        serde_json::json!(["restructure-reclaim-loop", "exact-scan-count"])
    );
    assert_eq!(v["skips"], 1);
    assert_eq!(v["steps"][0]["vs_good"]["significant"], true);
    assert_eq!(v["steps"][0]["vs_bad"]["significant"], true);
}

#[test]
fn bisects_across_kernel_eras() {
    // 6.12 -> 7.1 on mmap-zipf: 19 behaviours (the MGLRU rework and the 2025 changes); the
    // misses fall by 40% with 7.1's fault-around rule alone (mmap_miss credited for the faulting
    // folio only, so readahead stays on), not with the MGLRU rework.
    let v = json_of(&[
        "bisect",
        "mmap-zipf",
        "--good",
        "mglru:6.12",
        "--bad",
        "mglru:7.1",
        "--metric",
        "misses",
        "--no-store",
        "--json",
    ]);
    assert_eq!(
        v["culprit"], "fault-around-credits-faulting-folio-only",
        "{v:#}"
    );
    assert_eq!(v["commit"], "0b9c0aeba938");
    // The 19 rows of 7.1, then the loss of patch 10's path, which Debian's 6.12.117 has and
    // mainline 7.1 lacks (a removal comes after the additions).
    assert_eq!(v["behaviours"].as_array().unwrap().len(), 20);
    assert_eq!(
        v["behaviours"][0],
        "fault-around-credits-faulting-folio-only"
    );
    assert_eq!(v["behaviours"][19], "common-dirty-writeback-reactivation");
    assert_eq!(v["rest"]["moves_further"], false);
    // Classic, 6.1 -> 6.12 on anon-only: pgpgin counts zram swap-ins once bdev_read_page is
    // gone (sync-swap-io-in-pgpg), and 6.1 counts none. 6.12's stale memcg statistics
    // (memcg-stats-flush-ratelimited) move the swap-ins by 2% more: with them in the range the
    // states after the culprit are unlike both ends, but within a tenth of the ends' distance
    // from the bad one, so the bisect names the same culprit and says the rest moves it
    // further.
    let v = json_of(&[
        "bisect",
        "anon-only",
        "--good",
        "classic:6.1",
        "--bad",
        "classic:6.12-memcg-stats-flush-ratelimited",
        "--metric",
        "vmstat.pgpgin",
        "--no-store",
        "--json",
    ]);
    assert_eq!(v["culprit"], "sync-swap-io-in-pgpg", "{v:#}");
    assert_eq!(v["good"]["mean"], 0.0);
    assert_eq!(v["behaviours"].as_array().unwrap().len(), 16);
    let v = json_of(&[
        "bisect",
        "anon-only",
        "--good",
        "classic:6.1",
        "--bad",
        "classic:6.12",
        "--metric",
        "vmstat.pgpgin",
        "--no-store",
        "--json",
    ]);
    assert_eq!(v["culprit"], "sync-swap-io-in-pgpg", "{v:#}");
    assert_eq!(v["rest"]["moves_further"], true, "{v:#}");
    assert_eq!(v["behaviours"].as_array().unwrap().len(), 17);
    // Backwards (the bad end older): the newest change goes first, and a removal takes what
    // requires it along, so every state keeps its requirements.
    let v = json_of(&[
        "bisect",
        "anon-only",
        "--good",
        "classic:6.12-memcg-stats-flush-ratelimited",
        "--bad",
        "classic:6.1",
        "--metric",
        "vmstat.pgpgin",
        "--no-store",
        "--json",
    ]);
    assert_eq!(v["culprit"], "sync-swap-io-in-pgpg", "{v:#}");
    assert_eq!(v["behaviours"][0], "io-uring-nowait-by-fmode");
    assert_eq!(v["behaviours"][1], "cgroup-congested-split");
    assert!(v["alone"]["policy"]
        .as_str()
        .unwrap()
        .starts_with("classic:6.12-sync-swap-io-in-pgpg"));
}

#[test]
fn refuses_what_it_cannot_bisect() {
    for (args, says) in [
        ("--good classic:6.12 --bad mglru:7.2 --metric misses", "classic against MGLRU"),
        ("--good lru --bad mglru:7.2 --metric misses", "give a classic or mglru policy"),
        ("--good mglru:6.12@iter --bad mglru:7.2 --metric misses", "the memcg walk"),
        ("--good mglru:7.1 --bad mglru:7.2 --metric misses --seeds 1", "at least 2 seeds"),
        ("--good mglru:7.1 --bad mglru:7.2 --metric misses --behaviours fg-promotion", "is the same in --good and --bad"),
        ("--good mglru:7.1 --bad mglru:7.2 --metric misses --behaviours drop-reclaiming-arg,common-dirty-writeback-reactivation", "requires 'common-dirty-writeback-reactivation'"),
        ("--good mglru:7.1 --bad mglru:7.1+drop-reclaiming-arg --metric misses", "requires 'common-dirty-writeback-reactivation'"),
        ("--good mglru:7.1 --bad mglru:7.1+consolidate-evictable-size --metric misses", "does not differ"),
        ("--good mglru:7.1 --bad mglru:7.2 --metric vmstat.nope", "the result has no 'nope'"),
    ] {
        let mut all = vec!["bisect", "zipf", "--no-store", "--scale", "0.25"];
        all.extend(args.split_whitespace());
        let o = reclaimlab(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}");
        assert!(stderr(&o).contains(says), "{all:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}
