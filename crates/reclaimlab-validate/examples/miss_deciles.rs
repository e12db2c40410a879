//! Diagnostic (not part of the harness): each process's misses in each tenth of its own
//! records, from recorded console logs (the per-access miss map). A process that runs alone
//! for a while (the others finished, or stalled on a slow vCPU) misses far less in those
//! tenths; processes that go evenly have flat rows after the cold start. It is how
//! `validation/results/2026-11-27-smp2/NOTES.md` shows that the 2026-11-26 boots of
//! buffered-writers-3p progressed unevenly:
//!
//! ```sh
//! cargo run --release -p reclaimlab-validate --example miss_deciles -- \
//!     buffered-writers-3p validation/results/2026-11-26-smp2/consoles/buffered-writers-3p-6.1-mglru-*.log
//! ```
use reclaimlab_validate::{console, suite};
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "WORKLOAD LOG...";
    let w = suite::workload(args.first().expect(usage)).unwrap();
    let (_h, records) = w.trace();
    for f in &args[1..] {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let rep = console::parse_console(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        let mut per: BTreeMap<u32, Vec<bool>> = BTreeMap::new();
        for (i, r) in records.iter().enumerate() {
            per.entry(r.pid).or_default().push(rep.missed(i));
        }
        let name = f.rsplit('/').next().unwrap_or(f);
        for (pid, v) in &per {
            let tenth = v.len().div_ceil(10).max(1);
            let rows: Vec<usize> = v
                .chunks(tenth)
                .map(|c| c.iter().filter(|&&m| m).count())
                .collect();
            let total = v.iter().filter(|&&m| m).count();
            println!("{name} pid {pid}: {total} misses, by tenth {rows:?}");
        }
    }
}
