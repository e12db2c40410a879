//! Time series of a run's counters (`--sample-ms`), as `vmstat 1` shows them on a real
//! machine: every N ms of simulated time, the counters of /proc/vmstat, each memcg's
//! memory.current and memory.stat, MGLRU's generation sizes (from the lru_gen debugfs file)
//! and whatever other named counters the engine adds (PSI, once modelled, is one more
//! [`Counters::group`] call in `sim.rs`).
//!
//! Sampling only reads: a sample at simulated time `T` is the state after every event at or
//! before `T` and before any later one, taken when the engine is about to run its first event
//! after `T`. No event is queued for it, so a run's result is the same with and without
//! sampling (tested in `tests/timeseries.rs`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most samples a run keeps: a run that would take more ends in an error (as
/// `--lru-gen-sample-ms` does) instead of filling memory.
pub const MAX_SAMPLES: usize = 100_000;

/// Named counter values at one moment, in the order they were added.
#[derive(Default, Debug, Clone)]
pub struct Counters(pub Vec<(String, u64)>);

impl Counters {
    /// One counter.
    pub fn push(&mut self, name: impl Into<String>, value: u64) {
        self.0.push((name.into(), value));
    }

    /// Every `(key, value)` of a group, named `PREFIX.key`.
    pub fn group<'a>(&mut self, prefix: &str, values: impl IntoIterator<Item = (&'a str, u64)>) {
        for (k, v) in values {
            self.0.push((format!("{prefix}.{k}"), v));
        }
    }

    /// MGLRU's generation sizes from an lru_gen debugfs text (`lru_gen_seq_show`): per memcg
    /// and node, `lru_gen.PATH.nodeN.max_seq` and, for each generation shown, its anon and
    /// file pages by age: `genK` is the generation `max_seq - K` (gen0 the youngest; at most
    /// `MAX_NR_GENS` = 4), so the columns stay the same as generations are created and evicted.
    pub fn lru_gen_sizes(&mut self, lru_gen: &str) {
        let mut path = String::new();
        let mut node = String::new();
        let mut gens: Vec<(u64, u64, u64)> = Vec::new();
        let flush = |c: &mut Counters, path: &str, node: &str, gens: &mut Vec<(u64, u64, u64)>| {
            if let Some(&(max_seq, _, _)) = gens.last() {
                let base = format!("lru_gen.{path}.node{node}");
                c.push(format!("{base}.max_seq"), max_seq);
                for &(seq, anon, file) in gens.iter().rev() {
                    let k = max_seq - seq;
                    c.push(format!("{base}.gen{k}.anon_pages"), anon);
                    c.push(format!("{base}.gen{k}.file_pages"), file);
                }
            }
            gens.clear();
        };
        for line in lru_gen.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["memcg", _id, p @ ..] => {
                    flush(self, &path, &node, &mut gens);
                    path = p.join(" ");
                }
                ["node", n] => {
                    flush(self, &path, &node, &mut gens);
                    node = n.to_string();
                }
                [seq, _age, anon, file] => {
                    let num = |s: &str| s.trim_end_matches(['x', ' ']).parse::<u64>().ok();
                    if let (Some(seq), Some(anon), Some(file)) = (num(seq), num(anon), num(file)) {
                        gens.push((seq, anon, file));
                    }
                }
                _ => {}
            }
        }
        flush(self, &path, &node, &mut gens);
    }
}

/// One sample: its simulated time and a value per column (`None` where the column did not
/// exist yet, e.g. a memcg created later; rows may be shorter than `columns`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub time_ns: u64,
    pub values: Vec<Option<u64>>,
}

/// Counters over simulated time: columns in the order they first appeared.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TimeSeries {
    /// The sampling interval, simulated ns.
    pub interval_ns: u64,
    pub columns: Vec<String>,
    pub samples: Vec<Sample>,
}

/// Takes samples at `0, N, 2N, ...` simulated ns.
#[derive(Debug)]
pub struct Sampler {
    next: u64,
    index: BTreeMap<String, usize>,
    series: TimeSeries,
}

impl Sampler {
    /// A sampler every `every_ns` (> 0) simulated ns.
    pub fn new(every_ns: u64) -> Sampler {
        Sampler {
            next: 0,
            index: BTreeMap::new(),
            series: TimeSeries {
                interval_ns: every_ns.max(1),
                ..TimeSeries::default()
            },
        }
    }

    /// The time of the next sample.
    pub fn next_time(&self) -> u64 {
        self.next
    }

    /// The time of the next sample if it lies before `t`.
    pub fn due_before(&self, t: u64) -> Option<u64> {
        (self.next < t).then_some(self.next)
    }

    /// The time of the next sample if it lies at or before `t`.
    pub fn due_by(&self, t: u64) -> Option<u64> {
        (self.next <= t).then_some(self.next)
    }

    /// Records the sample due (at [`Self::due_before`]'s time) and moves to the next.
    pub fn record(&mut self, counters: Counters) -> Result<(), String> {
        if self.series.samples.len() >= MAX_SAMPLES {
            return Err(format!(
                "--sample-ms: more than {MAX_SAMPLES} samples by {:.3} s of simulated time; \
                 sample less often",
                self.next as f64 / 1e9
            ));
        }
        let mut values: Vec<Option<u64>> = vec![None; self.series.columns.len()];
        for (name, v) in counters.0 {
            let i = match self.index.get(&name) {
                Some(&i) => i,
                None => {
                    let i = self.series.columns.len();
                    self.series.columns.push(name.clone());
                    self.index.insert(name, i);
                    values.push(None);
                    i
                }
            };
            values[i] = Some(v);
        }
        self.series.samples.push(Sample {
            time_ns: self.next,
            values,
        });
        self.next = self.next.saturating_add(self.series.interval_ns);
        Ok(())
    }

    pub fn finish(self) -> TimeSeries {
        self.series
    }
}

impl TimeSeries {
    /// The value of `column` in sample `row` (`None` where it did not exist yet).
    pub fn value(&self, row: usize, column: usize) -> Option<u64> {
        self.samples
            .get(row)
            .and_then(|s| s.values.get(column).copied().flatten())
    }

    /// CSV: a header `time_ms,COLUMN...`, one line per sample; a missing value is empty.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("time_ms");
        for c in &self.columns {
            out.push(',');
            out.push_str(&csv_field(c));
        }
        out.push('\n');
        for (row, s) in self.samples.iter().enumerate() {
            out.push_str(&fmt_ms(s.time_ns));
            for col in 0..self.columns.len() {
                out.push(',');
                if let Some(v) = self.value(row, col) {
                    out.push_str(&v.to_string());
                }
            }
            out.push('\n');
        }
        out
    }

    /// JSON lines: one object per sample, `{"time_ms": T, COLUMN: value...}` (missing values
    /// left out), keys in column order.
    pub fn to_json_lines(&self) -> String {
        let mut out = String::new();
        for (row, s) in self.samples.iter().enumerate() {
            out.push_str("{\"time_ms\":");
            out.push_str(&fmt_ms(s.time_ns));
            for (col, name) in self.columns.iter().enumerate() {
                if let Some(v) = self.value(row, col) {
                    out.push(',');
                    out.push_str(&serde_json::to_string(name).expect("a string serialises"));
                    out.push(':');
                    out.push_str(&v.to_string());
                }
            }
            out.push_str("}\n");
        }
        out
    }
}

/// Simulated ns as ms, exactly (`1.5`, `200`).
fn fmt_ms(ns: u64) -> String {
    let (ms, rest) = (ns / 1_000_000, ns % 1_000_000);
    if rest == 0 {
        ms.to_string()
    } else {
        format!("{ms}.{:06}", rest)
            .trim_end_matches('0')
            .to_string()
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break (a memcg path may).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fall_on_the_grid_and_columns_grow() {
        let mut s = Sampler::new(10);
        assert_eq!(s.due_before(0), None);
        assert_eq!(s.due_before(1), Some(0));
        let mut c = Counters::default();
        c.push("a", 1);
        s.record(c).unwrap();
        assert_eq!(s.due_before(10), None);
        assert_eq!(s.due_by(10), Some(10));
        let mut c = Counters::default();
        c.push("a", 2);
        c.push("b", 7);
        s.record(c).unwrap();
        let ts = s.finish();
        assert_eq!(ts.columns, ["a", "b"]);
        assert_eq!(ts.to_csv(), "time_ms,a,b\n0,1,\n0.00001,2,7\n");
        assert_eq!(
            ts.to_json_lines(),
            "{\"time_ms\":0,\"a\":1}\n{\"time_ms\":0.00001,\"a\":2,\"b\":7}\n"
        );
    }

    #[test]
    fn lru_gen_sizes_are_named_by_age() {
        let text = "memcg     1 /\n node     0\n          5      100      10      20 \n          \
                    6       50      30      40 \nmemcg     2 /a,b\n node     0\n          \
                    9        1       1       2 \n";
        let mut c = Counters::default();
        c.lru_gen_sizes(text);
        let names: Vec<(&str, u64)> = c.0.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            names,
            [
                ("lru_gen./.node0.max_seq", 6),
                ("lru_gen./.node0.gen0.anon_pages", 30),
                ("lru_gen./.node0.gen0.file_pages", 40),
                ("lru_gen./.node0.gen1.anon_pages", 10),
                ("lru_gen./.node0.gen1.file_pages", 20),
                ("lru_gen./a,b.node0.max_seq", 9),
                ("lru_gen./a,b.node0.gen0.anon_pages", 1),
                ("lru_gen./a,b.node0.gen0.file_pages", 2),
            ]
        );
        assert!(TimeSeries {
            interval_ns: 1,
            columns: vec!["lru_gen./a,b.x".into()],
            samples: vec![],
        }
        .to_csv()
        .starts_with("time_ms,\"lru_gen./a,b.x\""));
    }

    #[test]
    fn too_many_samples_is_an_error() {
        let mut s = Sampler::new(1);
        for _ in 0..MAX_SAMPLES {
            s.record(Counters::default()).unwrap();
        }
        assert!(s.record(Counters::default()).is_err());
    }
}
