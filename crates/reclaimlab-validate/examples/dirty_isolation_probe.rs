//! Diagnostic (not part of the harness): reruns the model side of the saved smp2
//! buffered-writers MGLRU cells with and without `common-dirty-writeback-reactivation` (the
//! 2026 series' patch 10: dirty and writeback folios are isolated, counted in pgscan, and
//! reactivated by shrink_folio_list, instead of being bumped by sort_folio), seed 1, and
//! prints misses, pgscan and pgsteal against the kernel's. Debian's 6.12.117 `sort_folio`
//! (mm/vmscan.c) has no dirty/writeback branch, as the series' patch 10 removes it, so
//! `mglru:6.12` has the switch on ("dirty isolated true"); "false" is the 6.12 model before.
//! `cargo run --release -p reclaimlab-validate --example dirty_isolation_probe -- DIR`.
use reclaimlab::behaviour::Behaviour;
use reclaimlab::sim::{PolicySpec, RunOptions};
use reclaimlab::workload::Scenario;
use reclaimlab_validate::guest::Mode;
use reclaimlab_validate::{fidelity, load_cells, model, suite};

fn main() {
    let dir = std::env::args().nth(1).expect("results dir");
    let cells = load_cells(std::path::Path::new(&dir)).unwrap();
    for c in cells
        .iter()
        .filter(|c| c.workload == "buffered-writers-3p" && c.mode == Mode::Mglru)
    {
        let w = suite::workload(&c.workload).unwrap();
        let (h, r) = w.trace();
        let km = |metric: &str| fidelity::mean_min_max(&c.kernel_values(metric)).0;
        let mut line = format!(
            "{} {} mglru: kernel misses {:.0} pgscan {:.0} pgsteal {:.0}",
            c.workload,
            c.kernel,
            km("misses"),
            km("pgscan"),
            km("pgsteal")
        );
        for isolate_dirty in [false, true] {
            let m = model::machine(&w.machine, &c.sizing, &h);
            let scn = Scenario::from_trace(w.name, m, &h, &r).unwrap();
            let PolicySpec::Mglru(mut cfg) =
                model::policy_for(c.kernel, c.mode, w.machine.min_ttl_ms)
            else {
                unreachable!()
            };
            let b = Behaviour::CommonDirtyWritebackReactivation;
            cfg.switches = match isolate_dirty {
                true => cfg.switches.with(b),
                false => cfg.switches.without(b),
            };
            let opts = RunOptions {
                seed: 1,
                ..Default::default()
            };
            let res = reclaimlab::sim::run(&scn, PolicySpec::Mglru(cfg), &opts).unwrap();
            let cn = fidelity::Counters::of(&res);
            let (ms, sc, st) = (
                cn.misses as f64,
                fidelity::metric(&cn, "/w", "pgscan"),
                fidelity::metric(&cn, "/w", "pgsteal"),
            );
            line += &format!(
                " | dirty isolated {isolate_dirty}: misses {ms:.0} ({:+.1}%) pgscan {sc:.0} ({:+.1}%) pgsteal {st:.0} ({:+.1}%)",
                (ms - km("misses")) / km("misses") * 100.0,
                (sc - km("pgscan")) / km("pgscan") * 100.0,
                (st - km("pgsteal")) / km("pgsteal") * 100.0
            );
        }
        println!("{line}");
    }
}
