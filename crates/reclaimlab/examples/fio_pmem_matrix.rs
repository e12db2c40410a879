//! Seed 002's whole fio-on-pmem matrix (three distributions × 1 or 2 jobs per CPU), classic
//! against MGLRU on 6.1, beside the seed's own throughput: does the model's MGLRU gain follow
//! the seed's from cell to cell, not only in the uniform 40-job cell that claim 13 tests?
//!
//! `cargo run --release -p reclaimlab --example fio_pmem_matrix [SEEDS [SCALE]]` (default 3
//! seeds at fio-pmem's default scale, interleaved as `--interleave auto` runs it there).
//! Prints a markdown table (validation/seed002-fio-profile.md, "The whole matrix").

use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::micro;
use reclaimlab::workload::seeds::{fio_pmem_with, FioDist};

/// One cell of the seed's matrix as validation/seed002-fio-profile.md gives it (from seed
/// 002's fio table and its vmstat): requests per second (MiB/s × 256) and misses per request
/// (pgpgin / 4), under 5.15 and 5.15 + MGLRU.
struct Cell {
    dist: FioDist,
    jobs_per_cpu: u32,
    rate: [f64; 2],
    misses: [f64; 2],
}

const SEED: [Cell; 6] = [
    Cell {
        dist: FioDist::Uniform,
        jobs_per_cpu: 1,
        rate: [2.15e6, 3.01e6],
        misses: [0.537, 0.549],
    },
    Cell {
        dist: FioDist::Zipf08,
        jobs_per_cpu: 1,
        rate: [3.73e6, 3.93e6],
        misses: [0.131, 0.165],
    },
    Cell {
        dist: FioDist::Normal40,
        jobs_per_cpu: 1,
        rate: [3.73e6, 4.09e6],
        misses: [0.090, 0.105],
    },
    Cell {
        dist: FioDist::Uniform,
        jobs_per_cpu: 2,
        rate: [2.15e6, 3.14e6],
        misses: [0.539, 0.531],
    },
    Cell {
        dist: FioDist::Zipf08,
        jobs_per_cpu: 2,
        rate: [3.31e6, 3.63e6],
        misses: [0.175, 0.212],
    },
    Cell {
        dist: FioDist::Normal40,
        jobs_per_cpu: 2,
        rate: [2.95e6, 3.59e6],
        misses: [0.173, 0.208],
    },
];

/// Requests per second (`ops/s`, claim 13's figure: every request over the run's window) and
/// misses per access of `seeds` runs of one cell under `policy`, in seed order.
fn runs(cell: &Cell, policy: &str, seeds: u64, scale: f64) -> (Vec<f64>, f64) {
    let mut scn = fio_pmem_with(scale, cell.dist, cell.jobs_per_cpu);
    scn.machine.interleave = micro::interleaves_faithfully("fio-pmem", scale);
    let (mut rates, mut misses) = (Vec::new(), 0.0);
    for seed in 1..=seeds {
        let opts = RunOptions {
            seed,
            ..Default::default()
        };
        let r = run(&scn, policy.parse().expect("a policy"), &opts).expect("a run");
        misses += r.misses as f64 / r.accesses as f64 / seeds as f64;
        rates.push(r.requests.expect("fio-pmem counts requests").per_sec);
    }
    (rates, misses)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seeds: u64 = args
        .next()
        .map_or(3, |s| s.parse().expect("SEEDS: a count"));
    let default = micro::default_scale("fio-pmem").expect("fio-pmem is built in");
    let scale: f64 = args
        .next()
        .map_or(default, |s| s.parse().expect("SCALE: a number"));
    println!("| cell | seed: requests/s 5.15, + MGLRU (gain) | model: classic:6.1, mglru:6.1 (gain; per seed) | seed: misses per request | model: misses per access |");
    println!("|---|---|---|---|---|");
    for cell in &SEED {
        let (c, c_miss) = runs(cell, "classic:6.1", seeds, scale);
        let (m, m_miss) = runs(cell, "mglru:6.1", seeds, scale);
        let gains: Vec<f64> = c.iter().zip(&m).map(|(c, m)| m / c - 1.0).collect();
        let lo = gains.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = gains.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let [base, mglru] = cell.rate;
        println!(
            "| {:?}, {} jobs | {:.2}M, {:.2}M ({:+.0}%) | {:.2}M, {:.2}M ({:+.0}%; {:+.0}% .. {:+.0}%) | {:.3}, {:.3} | {:.3}, {:.3} |",
            cell.dist,
            40 * cell.jobs_per_cpu,
            base / 1e6,
            mglru / 1e6,
            100.0 * (mglru / base - 1.0),
            mean(&c) / 1e6,
            mean(&m) / 1e6,
            100.0 * (mean(&m) / mean(&c) - 1.0),
            100.0 * lo,
            100.0 * hi,
            cell.misses[0],
            cell.misses[1],
            c_miss,
            m_miss,
        );
    }
}
