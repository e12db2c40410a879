//! Diagnostic (not part of the harness): reruns the model side of the saved smp2
//! buffered-writers cells with the guest's sizing, varying the folio lock a buffered write
//! holds across its copy (`write_folio_lock_ns`: 0 = no hold, the model before it; the
//! default; the whole system call) and `--interleave`, over seeds 1-5, and prints misses,
//! pgscan, pgsteal and the failed `folio_trylock`s. `cargo run --release -p
//! reclaimlab-validate --example write_lock_probe -- DIR [WORKLOAD]`.
use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::Scenario;
use reclaimlab_validate::{fidelity, load_cells, model, suite};

fn main() {
    let dir = std::env::args().nth(1).expect("results dir");
    let only = std::env::args()
        .nth(2)
        .unwrap_or("buffered-writers-3p".into());
    let cells = load_cells(std::path::Path::new(&dir)).unwrap();
    let default_hold = reclaimlab::machine::CostProfile::default().write_folio_lock_ns;
    for c in cells.iter().filter(|c| c.cpus > 1 && c.workload == only) {
        let w = suite::workload(&c.workload).unwrap();
        let (h, r) = w.trace();
        let km = |metric: &str| fidelity::mean_min_max(&c.kernel_values(metric)).0;
        println!(
            "{} {} {}: kernel misses {:.0} pgscan {:.0} pgsteal {:.0}",
            c.workload,
            c.kernel,
            c.mode,
            km("misses"),
            km("pgscan"),
            km("pgsteal")
        );
        for interleave in [true, false] {
            for hold in [0, default_hold, 1_000] {
                let mut line = format!("  interleave {interleave:5} hold {hold:4} ns:");
                let mut misses = Vec::new();
                for seed in 1..=5 {
                    let mut m = model::machine(&w.machine, &c.sizing, &h);
                    m.interleave = interleave;
                    m.cost.write_folio_lock_ns = hold;
                    let scn = Scenario::from_trace(w.name, m, &h, &r).unwrap();
                    let pol = model::policy_for(c.kernel, c.mode, w.machine.min_ttl_ms);
                    let opts = RunOptions {
                        seed,
                        ..Default::default()
                    };
                    let res = run(&scn, pol, &opts).unwrap();
                    let cn = fidelity::Counters::of(&res);
                    if seed == 1 {
                        line += &format!(
                            " seed 1: misses {} pgscan {} pgsteal {} trylock failed {} |",
                            cn.misses,
                            fidelity::metric(&cn, "/w", "pgscan"),
                            fidelity::metric(&cn, "/w", "pgsteal"),
                            res.cpu.folio_trylock_failed
                        );
                    }
                    misses.push(res.misses as f64);
                }
                let mean = misses.iter().sum::<f64>() / misses.len() as f64;
                let (lo, hi) = misses
                    .iter()
                    .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
                line += &format!(
                    " seeds 1-5 misses {lo:.0}..{hi:.0}, mean {mean:.0} ({:+.1}%)",
                    (mean - km("misses")) / km("misses") * 100.0
                );
                println!("{line}");
            }
        }
    }
}
