//! `--cache-pages`: exact capacity for textbook caches, the least memory for the kernel's.

use reclaimlab::machine::MachineConfig;
use reclaimlab::sim::{self, fit_capacity, PolicySpec, RunOptions};
use reclaimlab::workload::micro;

#[test]
fn fitted_memory_is_the_least_that_leaves_the_pages_above_high() {
    for pages in [208, 209, 1_000, 4_321, 65_536, 1_000_003, 30_000_000] {
        let mut m = MachineConfig::simple(256);
        let got = m.fit_lru_pages(pages).unwrap();
        assert!(got >= pages, "asked {pages}, got {got}");
        assert_eq!(m.pages_above_high(), got);
        assert_eq!(m.cache_pages, Some(pages));
        let total = m.total_pages();
        let mut smaller = m.clone();
        smaller.node_pages[0] = total - 1;
        assert!(
            smaller.pages_above_high() < pages,
            "{pages}: {} pages of memory would do too",
            total - 1
        );
        // The watermarks' rounding costs at most a few pages.
        assert!(got - pages <= 2, "asked {pages}, got {got}");
    }
}

#[test]
fn fitted_watermarks_are_the_machines() {
    let mut m = MachineConfig::simple(256);
    m.fit_lru_pages(12_345).unwrap();
    let machine = sim::build_machine(&reclaimlab::workload::Scenario {
        name: "empty".into(),
        description: String::new(),
        machine: m.clone(),
        files: Vec::new(),
        procs: Vec::new(),
        threads: Vec::new(),
    })
    .unwrap();
    let n = &machine.nodes[0];
    assert_eq!(n.nr_pages - n.wmark.high, m.pages_above_high());
}

#[test]
fn below_the_smallest_node_the_kernel_gets_the_smallest_node() {
    let mut m = MachineConfig::simple(256);
    let got = m.fit_lru_pages(10).unwrap();
    assert_eq!(m.total_pages(), 256);
    assert_eq!(got, m.pages_above_high());
    assert!(m.fit_lru_pages(0).is_err());
    assert!(m.fit_lru_pages(u64::MAX).is_err());
    let mut two = MachineConfig::simple(256);
    two.node_pages.push(256);
    assert!(two.fit_lru_pages(1000).unwrap_err().contains("one-node"));
}

#[test]
fn runs_report_the_capacity_they_had() {
    let mut scn = micro::builtin("zipf", 1.0).unwrap();
    let kernel = fit_capacity(&mut scn, 3_000).unwrap();
    let opts = RunOptions::default();
    let lru = sim::run(&scn, "lru".parse::<PolicySpec>().unwrap(), &opts).unwrap();
    assert_eq!(lru.capacity_pages, 3_000);
    let classic = sim::run(&scn, "classic".parse::<PolicySpec>().unwrap(), &opts).unwrap();
    assert_eq!(classic.capacity_pages, kernel);
    // A smaller cache misses more: the capacity is really used.
    let mut small = micro::builtin("zipf", 1.0).unwrap();
    fit_capacity(&mut small, 1_500).unwrap();
    let lru_small = sim::run(&small, "lru".parse::<PolicySpec>().unwrap(), &opts).unwrap();
    assert!(lru_small.misses > lru.misses);
}

#[test]
fn a_memcg_limit_refuses_a_capacity() {
    let mut scn = micro::builtin("memcg-limit", 1.0).unwrap();
    let err = fit_capacity(&mut scn, 3_000).unwrap_err();
    assert!(err.contains("memory.max"), "{err}");
}

#[test]
fn textbook_capacity_from_the_configuration_is_the_machines() {
    for b in micro::builtins() {
        let name = b.name;
        let scn = micro::builtin(name, b.default_scale / 8.0).unwrap();
        let m = sim::build_machine(&scn).unwrap();
        assert_eq!(
            sim::textbook_capacity(&scn),
            sim::kernel_capacity(&scn, &m),
            "{name}"
        );
    }
}
