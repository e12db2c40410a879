//! Diagnostic (not part of the harness): for each boot of a saved concurrent cell, the kernel's
//! value of a metric (misses by default) beside the model's replayed on that boot's clock
//! alone (its records issued at the boot's times, `crate::pace`) and the model's unpaced
//! (every process as fast as the model's machine lets it, the flush period scaled to its
//! time), each the mean over the four flush phases, with the boot's replay time. It shows
//! whether the model follows the boot-to-boot variation of a cell:
//!
//! ```sh
//! cargo run --release -p reclaimlab-validate --example paced_boots -- \
//!     validation/results/2026-11-27-smp2 anon-file-2p 6.12 mglru [METRIC]
//! ```
use reclaimlab_validate::fidelity::{metric, Counters};
use reclaimlab_validate::{find_cell, load_cells, model, pace, suite};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "DIR WORKLOAD KERNEL MODE [METRIC]";
    let [dir, workload, kernel, mode] = [0, 1, 2, 3].map(|i| args.get(i).expect(usage).clone());
    let name = args.get(4).map_or("misses", |s| s.as_str());
    let cells = load_cells(std::path::Path::new(&dir)).unwrap();
    let c = find_cell(&cells, &workload, &kernel, &mode).expect("no such cell in DIR");
    let w = suite::workload(&c.workload).unwrap();
    let (h, r) = w.trace();
    let mut sizing = c.sizing.clone();
    model::resize_from_runs(&mut sizing, &c.kernel_runs);
    let model_of = |runs: &[Counters]| {
        let res =
            model::run_model(w.name, &w.machine, &sizing, &h, &r, c.kernel, c.mode, runs).unwrap();
        metric(&Counters::of(&res), &c.memcg, name)
    };
    for (b, k) in c.kernel_runs.iter().enumerate() {
        let unpaced = pace::without_progress(k);
        let kv = metric(k, &c.memcg, name);
        let paced = model_of(std::slice::from_ref(k));
        let free = model_of(std::slice::from_ref(&unpaced));
        let err = |m: f64| 100.0 * (m - kv) / kv.max(1.0);
        println!(
            "boot {}: {:.2} s, kernel {name} {kv:.0}; model paced {paced:.0} ({:+.1}%), \
             unpaced {free:.0} ({:+.1}%)",
            b + 1,
            k.sim_time_ns as f64 / 1e9,
            err(paced),
            err(free)
        );
    }
}
