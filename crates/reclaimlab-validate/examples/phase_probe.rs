//! Diagnostic (not part of the harness): for each boot of a saved concurrent cell, the model
//! replayed on that boot's clock (`crate::pace`) with its first memcg statistics flush at ten
//! points of one `FLUSH_TIME` (0.1 s, 0.3 s, ..., 1.9 s after the go), beside the kernel's
//! value of a metric and, where the guest traced them, the boot's own first flush and the
//! model with the boot's flushes (`pace::flush_schedule`). It shows how much a cell depends on
//! where the flushes fall in its replay:
//!
//! ```sh
//! cargo run --release -p reclaimlab-validate --example phase_probe -- \
//!     validation/results/2026-11-27-smp2-flushes mixed-file-anon-2p 6.12 classic pswpout
//! ```
use reclaimlab::consts::FLUSH_TIME_NS;
use reclaimlab_validate::fidelity::{metric, Counters};
use reclaimlab_validate::{find_cell, load_cells, model, pace, suite};

const STEPS: u64 = 10;

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
    let m = model::machine(&w.machine, &sizing, &h);
    for (b, k) in c.kernel_runs.iter().enumerate() {
        let p = pace::of_run(k).expect("the boot recorded its progress");
        let paced = pace::paced(&r, &p).unwrap();
        let at = |first: u64, period: u64| {
            let res = model::run_model_on(
                w.name,
                model::with_flushes(&m, first, period),
                w.machine.min_ttl_ms,
                &h,
                &paced,
                c.kernel,
                c.mode,
            )
            .unwrap();
            metric(&Counters::of(&res), &c.memcg, name)
        };
        let mut line = format!(
            "boot {}: kernel {name} {:.0};",
            b + 1,
            metric(k, &c.memcg, name)
        );
        if let Some((first, period)) = pace::flush_schedule(k) {
            line += &format!(
                " traced first flush {:.2} s: model {:.0};",
                first as f64 / 1e9,
                at(first, period)
            );
        }
        line += " model at 0.1..1.9 s:";
        for s in 0..STEPS {
            let first = (2 * s + 1) * FLUSH_TIME_NS / (2 * STEPS);
            line += &format!(" {:.0}", at(first, FLUSH_TIME_NS));
        }
        println!("{line}");
    }
}
