//! Simulator speed: accesses per second of whole runs (criterion). Run with `cargo bench`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::micro;

fn bench_runs(c: &mut Criterion) {
    let mut g = c.benchmark_group("run");
    g.sample_size(10);
    for name in ["zipf", "mixed-rw", "mmap-zipf"] {
        let scn = micro::builtin(name, 0.25).expect("scenario");
        for policy in ["classic", "lru"] {
            let spec: PolicySpec = policy.parse().expect("policy");
            let accesses = run(&scn, spec, &RunOptions::default())
                .expect("run")
                .accesses;
            g.throughput(Throughput::Elements(accesses));
            g.bench_function(format!("{name}/{policy}"), |b| {
                b.iter(|| run(&scn, spec, &RunOptions::default()).expect("run"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_runs);
criterion_main!(benches);
