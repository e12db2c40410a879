//! Diagnostic (not part of the harness): reruns the model side of saved smp2 cells with the
//! guest's sizing, varying CPUs, the CPU-side costs and the seed, to see what the concurrent
//! results depend on. `cargo run --release -p reclaimlab-validate --example smp_probe -- DIR`.
use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::Scenario;
use reclaimlab_validate::{fidelity, load_cells, model, suite};

fn main() {
    let dir = std::env::args().nth(1).expect("results dir");
    let cells = load_cells(std::path::Path::new(&dir)).unwrap();
    for c in cells.iter().filter(|c| c.cpus > 1) {
        let w = suite::workload(&c.workload).unwrap();
        let (h, r) = w.trace();
        let km = fidelity::mean_min_max(&c.kernel_values("misses")).0;
        let mut line = format!("{} {} {} kernel {:.0}:", c.workload, c.kernel, c.mode, km);
        for (label, cpus, slow) in [("2cpu", 2, 1), ("1cpu", 1, 1), ("2cpu-cpu x30", 2, 30)] {
            let mut m = model::machine(&w.machine, &c.sizing, &h);
            m.cpus = cpus;
            m.cost.cpu_access_ns *= slow;
            m.cost.minor_fault_ns *= slow;
            m.cost.fd_syscall_ns *= slow;
            let res =
                model::run_model_on(w.name, m, w.machine.min_ttl_ms, &h, &r, c.kernel, c.mode)
                    .unwrap();
            let cn = fidelity::Counters::of(&res);
            line += &format!(
                " | {label}: misses {} ({:+.1}%) pgscan {} pswpout {}",
                cn.misses,
                (cn.misses as f64 - km) / km * 100.0,
                fidelity::metric(&cn, "/w", "pgscan"),
                fidelity::metric(&cn, "/w", "pswpout"),
            );
        }
        // The model's own run-to-run spread: seeds 1..=5 (the scheduler's jitter), 2 CPUs.
        let mut seeds = Vec::new();
        for seed in 1..=5 {
            let m = model::machine(&w.machine, &c.sizing, &h);
            let scn = Scenario::from_trace(w.name, m, &h, &r).unwrap();
            let pol = model::policy_for(c.kernel, c.mode, w.machine.min_ttl_ms);
            let res = run(
                &scn,
                pol,
                &RunOptions {
                    seed,
                    ..Default::default()
                },
            )
            .unwrap();
            seeds.push(res.misses);
        }
        let (lo, hi) = (seeds.iter().min().unwrap(), seeds.iter().max().unwrap());
        let mean = seeds.iter().sum::<u64>() as f64 / seeds.len() as f64;
        line += &format!(
            " | seeds 1-5: misses {lo}..{hi} ({:.2}%), mean {mean:.0} ({:+.1}%)",
            (hi - lo) as f64 / km * 100.0,
            (mean - km) / km * 100.0
        );
        println!("{line}");
    }
}
