//! Diagnostic (not part of the harness): reruns the model side of one saved cell with the
//! memcg statistics' flush period (docs/model.md §4, "Memcg statistics as reclaim reads them")
//! at multiples of the guest's (`model::guest_flush_period`), and prints the counters, to see
//! how much a cell's result depends on the number of flushes in its replay:
//!
//! ```sh
//! cargo run --release -p reclaimlab-validate --example flush_period_probe -- \
//!     validation/results/2026-11-23 anon-zipf-zram 6.12 classic
//! ```
use reclaimlab_validate::{fidelity, find_cell, load_cells, model, suite};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "DIR WORKLOAD KERNEL MODE";
    let [dir, workload, kernel, mode] = [0, 1, 2, 3].map(|i| args.get(i).expect(usage).clone());
    let cells = load_cells(std::path::Path::new(&dir)).unwrap();
    let c = find_cell(&cells, &workload, &kernel, &mode).expect("no such cell in DIR");
    let w = suite::workload(&c.workload).unwrap();
    let (h, r) = w.trace();
    let base = model::machine(&w.machine, &c.sizing, &h);
    let first = model::run_model_on(
        w.name,
        base.clone(),
        w.machine.min_ttl_ms,
        &h,
        &r,
        c.kernel,
        c.mode,
    )
    .unwrap();
    let guest = model::guest_flush_period(first.sim_time_ns, &c.kernel_runs).expect("times");
    let replay_s: Vec<String> = c
        .kernel_runs
        .iter()
        .map(|k| format!("{:.1}", k.sim_time_ns as f64 / 1e9))
        .collect();
    println!(
        "guest replays {replay_s:?} s, model {:.3} s: guest flush period {:.2} ms",
        first.sim_time_ns as f64 / 1e9,
        guest as f64 / 1e6
    );
    for f in [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 4.0] {
        let mut m = base.clone();
        m.memcg_stats_flush_ns = ((guest as f64 * f) as u64).max(1);
        let res =
            model::run_model_on(w.name, m, w.machine.min_ttl_ms, &h, &r, c.kernel, c.mode).unwrap();
        let cn = fidelity::Counters::of(&res);
        println!(
            "period x{f:<4}: misses {} pgscan {} pswpin {} activate_anon {} activate_file {}",
            cn.misses,
            fidelity::metric(&cn, "/w", "pgscan"),
            fidelity::metric(&cn, "/w", "pswpin"),
            fidelity::metric(&cn, "/w", "workingset_activate_anon"),
            fidelity::metric(&cn, "/w", "workingset_activate_file"),
        );
    }
}
