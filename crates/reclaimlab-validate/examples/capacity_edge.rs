//! Diagnostic (not part of the harness): reruns the model side of one saved cell with the
//! guest's sizing, its memcgs' memory.max moved by each of a range of offsets (pages), and
//! prints the counters that tell the two outcomes of anon-file-2p apart (the idle anonymous
//! memory swapped out or not). It is how `validation/results/2026-11-26-smp2/NOTES.md`
//! ("anon-file-2p: investigated 2026-11-26 (later)") found the cell on a knife edge:
//!
//! ```sh
//! cargo run --release -p reclaimlab-validate --example capacity_edge -- \
//!     validation/results/2026-11-26-smp2 anon-file-2p 6.1 mglru -100 40 2 [--cpus N] [--lru-gen]
//! ```
//!
//! Arguments: results dir, workload, kernel (6.1, 6.12, 7.2), mode (classic, mglru), first and
//! last offset and step (default 0 0 1); `--cpus N` overrides the guest's vCPU count (and
//! interleaving with it, as the harness sets it), `--lru-gen` prints the final lru_gen file.
use reclaimlab_validate::{fidelity, find_cell, load_cells, model, suite};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let lru_gen = args.iter().any(|a| a == "--lru-gen");
    args.retain(|a| a != "--lru-gen");
    let mut cpus = None;
    if let Some(i) = args.iter().position(|a| a == "--cpus") {
        cpus = Some(args[i + 1].parse::<u32>().expect("--cpus N"));
        args.drain(i..i + 2);
    }
    let usage = "DIR WORKLOAD KERNEL MODE [FROM TO [STEP]] [--cpus N] [--lru-gen]";
    let [dir, workload, kernel, mode] = [0, 1, 2, 3].map(|i| args.get(i).expect(usage).clone());
    let num = |i: usize, d: i64| args.get(i).map_or(d, |s| s.parse().expect(usage));
    let (from, to, step) = (num(4, 0), num(5, num(4, 0)), num(6, 1).max(1));
    let cells = load_cells(std::path::Path::new(&dir)).unwrap();
    let c = find_cell(&cells, &workload, &kernel, &mode).expect("no such cell in DIR");
    let w = suite::workload(&c.workload).unwrap();
    let (h, r) = w.trace();
    let mut d = from;
    while d <= to {
        let mut m = model::machine(&w.machine, &c.sizing, &h);
        if let Some(n) = cpus {
            m.cpus = n;
            m.interleave = n > 1;
        }
        for mc in m.memcgs.iter_mut().filter(|mc| mc.max < u64::MAX / 2) {
            mc.max = mc.max.saturating_add_signed(d);
        }
        let max: Vec<u64> = m.memcgs.iter().map(|mc| mc.max).collect();
        let res =
            model::run_model_on(w.name, m, w.machine.min_ttl_ms, &h, &r, c.kernel, c.mode).unwrap();
        let cn = fidelity::Counters::of(&res);
        println!(
            "offset {d:+} memory.max {max:?}: misses {} pgscan {} pgsteal {} pswpout {} \
             refault_file {} nested_steps {}",
            cn.misses,
            fidelity::metric(&cn, "/w", "pgscan"),
            fidelity::metric(&cn, "/w", "pgsteal"),
            fidelity::metric(&cn, "/w", "pswpout"),
            fidelity::metric(&cn, "/w", "workingset_refault_file"),
            res.cpu.nested_steps,
        );
        if lru_gen {
            println!("{}", res.lru_gen.clone().unwrap_or_default());
        }
        d += step;
    }
}
