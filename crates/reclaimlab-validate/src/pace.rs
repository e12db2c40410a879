//! Pacing the model by a concurrent boot's recorded progress.
//!
//! The emulated guest's CPUs are tens of times slower than its disk and than the model's
//! machine, so its concurrent processes are CPU-bound: two or three of them share two vCPUs
//! (and the host's cores) and progress at uneven, changing rates, which changes what they meet
//! (whether one allocator is still touching its memory when another fills the memcg, which
//! writer runs alone). The model's processes, on its own machine's costs, are I/O-bound and
//! progress evenly. The replayer stamps each process's progress (`progress` section: the time
//! before every `every`-th of its records and after its last); the harness replays each boot on
//! the model on that boot's own clock: every record is issued at the guest's time for it
//! (`workload::replay`: a record waits for its time, then runs as soon as its process is
//! free), and time-based kernel mechanisms keep their guest periods. The model's machine is
//! several times faster than the emulated guest, so its processes are seldom behind their
//! times and meet as the guest's did. README, "Validation against real kernels" ("Concurrent
//! suite").

use crate::console::GuestReport;
use crate::fidelity::Counters;
use reclaimlab::access::TraceRecord;
use std::collections::BTreeMap;

/// One boot's progress: per plan pid, the microseconds since the go at which the process began
/// its own records 0, `every`, 2 × `every`, ... and, last, finished.
#[derive(Clone, Debug, PartialEq)]
pub struct BootProgress {
    pub every: u64,
    pub stamps_us: BTreeMap<u32, Vec<u64>>,
}

/// Keys of the progress kept in a kernel run's thread (its JSON, `Counters::threads`).
const EVERY_KEY: &str = "progress_every";
const STAMPS_KEY: &str = "progress_us";

/// Puts a boot's progress and schedstat into the threads of its run (matched by pid), and its
/// traced memcg statistics flushes, in µs from the go, into the run, where `--remodel` finds
/// them again.
pub fn attach(run: &mut Counters, rep: &GuestReport) {
    if let (Some(go), Some(flushes)) = (rep.go_ns, &rep.memcg_flush_ns) {
        let us = |t: u64| (t as i128 - go as i128).div_euclid(1000) as i64;
        run.memcg_flush_us = Some(flushes.iter().map(|&t| us(t)).collect());
    }
    for t in &mut run.threads {
        let Some(pid) = t.get("pid").and_then(|v| v.as_u64()) else {
            continue;
        };
        let Some(p) = rep.progress.iter().find(|p| p.pid as u64 == pid) else {
            continue;
        };
        let Some(o) = t.as_object_mut() else { continue };
        if !p.stamps_us.is_empty() {
            o.insert(EVERY_KEY.into(), rep.progress_every.into());
            o.insert(STAMPS_KEY.into(), p.stamps_us.clone().into());
        }
        for (k, v) in [
            ("sched_run_ns", p.run_ns),
            ("sched_wait_ns", p.wait_ns),
            ("sched_slices", p.slices),
        ] {
            if let Some(v) = v {
                o.insert(k.into(), v.into());
            }
        }
    }
}

/// A copy of `run` without its progress stamps: the model replays it unpaced.
pub fn without_progress(run: &Counters) -> Counters {
    let mut r = run.clone();
    for t in &mut r.threads {
        if let Some(o) = t.as_object_mut() {
            o.remove(STAMPS_KEY);
        }
    }
    r
}

/// The progress saved in a kernel run, if every thread has some.
pub fn of_run(run: &Counters) -> Option<BootProgress> {
    let mut every = None;
    let mut stamps_us = BTreeMap::new();
    for t in &run.threads {
        let pid = t.get("pid")?.as_u64()? as u32;
        let e = t.get(EVERY_KEY)?.as_u64()?;
        if e == 0 || every.is_some_and(|x| x != e) {
            return None;
        }
        every = Some(e);
        let v: Vec<u64> = t
            .get(STAMPS_KEY)?
            .as_array()?
            .iter()
            .map(|x| x.as_u64())
            .collect::<Option<_>>()?;
        stamps_us.insert(pid, v);
    }
    Some(BootProgress {
        every: every?,
        stamps_us,
    })
}

/// When the model's memcg statistics flush first and how often, in ns from the go, from a
/// boot's traced flushes (`flush_memcg_stats_dwork`): the first at or after the go (or the
/// last before it plus one period, if the replay ended first), every mean interval of the
/// traced ones (`FLUSH_TIME` when fewer than two were traced), the first no later than one
/// period. None without a trace.
pub fn flush_schedule(run: &Counters) -> Option<(u64, u64)> {
    let t = run.memcg_flush_us.as_ref()?;
    let period_ns = match (t.first(), t.last()) {
        (Some(&a), Some(&b)) if t.len() >= 2 && b > a => {
            (b - a) as u64 * 1000 / (t.len() as u64 - 1)
        }
        _ => reclaimlab::consts::FLUSH_TIME_NS,
    };
    let first_ns = match t.iter().find(|&&x| x >= 0) {
        Some(&x) => x as u64 * 1000,
        None => {
            let last = *t.last()?;
            (last * 1000 + period_ns as i64).max(0) as u64
        }
    };
    // The machine's first flush falls within its first period: a traced gap at the go a few
    // ms longer than the mean interval is cut to it.
    Some((first_ns.clamp(1, period_ns), period_ns))
}

/// The guest's time (µs since the go) at which a process began its own record `k` of `n`:
/// linear between the stamps around it (`stamps[j]` at record j × every, the last stamp at
/// record n, its end).
fn guest_time_us(stamps: &[u64], every: u64, k: u64, n: u64) -> u64 {
    let j = (k / every) as usize;
    let at = |i: usize| -> (u64, u64) {
        if i + 1 < stamps.len() {
            (i as u64 * every, stamps[i])
        } else {
            (n, *stamps.last().unwrap_or(&0))
        }
    };
    let (k0, t0) = at(j);
    let (k1, t1) = at(j + 1);
    if k1 <= k0 || k <= k0 {
        return t0;
    }
    t0 + ((t1.saturating_sub(t0)) as u128 * (k - k0) as u128 / (k1 - k0) as u128) as u64
}

/// `records` with each one's issue time set from the boot's progress: the guest's time of the
/// record since the go. Err if the progress does not cover the records (a process without
/// stamps, or fewer stamps than its records need).
pub fn paced(records: &[TraceRecord], p: &BootProgress) -> Result<Vec<TraceRecord>, String> {
    let mut own: BTreeMap<u32, u64> = BTreeMap::new();
    for r in records {
        *own.entry(r.pid).or_default() += 1;
    }
    for (pid, &n) in &own {
        let s = p
            .stamps_us
            .get(pid)
            .ok_or_else(|| format!("pace: no progress for pid {pid}"))?;
        // Stamps at records 0, every, ..., below n, then the end.
        if s.len() as u64 != n.div_ceil(p.every) + 1 {
            return Err(format!(
                "pace: pid {pid} has {} progress stamps for {n} records (every {})",
                s.len(),
                p.every
            ));
        }
    }
    let mut seen: BTreeMap<u32, u64> = BTreeMap::new();
    Ok(records
        .iter()
        .map(|r| {
            let k = seen.entry(r.pid).or_default();
            let t_us = guest_time_us(&p.stamps_us[&r.pid], p.every, *k, own[&r.pid]);
            *k += 1;
            TraceRecord {
                time_ns: t_us.saturating_mul(1000),
                ..*r
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reclaimlab::access::{Op, PageRef, Via};

    fn rec(pid: u32) -> TraceRecord {
        TraceRecord::new(
            0,
            pid,
            1,
            PageRef::File { file: 0, page: 0 },
            Op::Read,
            Via::Fd,
        )
    }

    /// Between stamps the time is linear; the last partial run of records ends at the
    /// process's finish.
    #[test]
    fn guest_time_interpolates_between_stamps_and_ends_at_the_finish() {
        // 10 records, stamps every 4: records 0, 4, 8 and the end (record 10).
        let s = [0, 400, 1200, 2000];
        assert_eq!(guest_time_us(&s, 4, 0, 10), 0);
        assert_eq!(guest_time_us(&s, 4, 2, 10), 200);
        assert_eq!(guest_time_us(&s, 4, 4, 10), 400);
        assert_eq!(guest_time_us(&s, 4, 6, 10), 800);
        assert_eq!(guest_time_us(&s, 4, 9, 10), 1600);
    }

    /// Two processes, one twice as slow in the guest: its records are issued twice as far
    /// apart, at the guest's times.
    #[test]
    fn records_are_issued_at_the_guest_times() {
        let records: Vec<TraceRecord> = (0..8).map(|i| rec(1 + i % 2)).collect();
        let p = BootProgress {
            every: 2,
            stamps_us: BTreeMap::from([(1, vec![0, 100, 200]), (2, vec![0, 200, 400])]),
        };
        let out = paced(&records, &p).unwrap();
        let times: Vec<(u32, u64)> = out.iter().map(|r| (r.pid, r.time_ns)).collect();
        assert_eq!(
            times,
            vec![
                (1, 0),
                (2, 0),
                (1, 50_000),
                (2, 100_000),
                (1, 100_000),
                (2, 200_000),
                (1, 150_000),
                (2, 300_000)
            ]
        );
    }

    #[test]
    fn progress_that_does_not_cover_the_records_is_refused() {
        let records: Vec<TraceRecord> = (0..8).map(|i| rec(1 + i % 2)).collect();
        let short = BootProgress {
            every: 2,
            stamps_us: BTreeMap::from([(1, vec![0, 100]), (2, vec![0, 200, 400])]),
        };
        assert!(paced(&records, &short).unwrap_err().contains("pid 1"));
        let missing = BootProgress {
            every: 2,
            stamps_us: BTreeMap::from([(1, vec![0, 100, 200])]),
        };
        assert!(paced(&records, &missing)
            .unwrap_err()
            .contains("no progress for pid 2"));
    }

    fn run_with_flushes(us: Option<Vec<i64>>) -> Counters {
        let mut c = Counters::of(&crate::console::to_run_result(
            &GuestReport::default(),
            "w",
            "p",
            &[],
        ));
        c.memcg_flush_us = us;
        c
    }

    /// The flushes traced in a boot (µs from the go) place the model's: the first at or after
    /// the go, every mean traced interval.
    #[test]
    fn the_model_flushes_when_the_boot_did() {
        let at = |v: Vec<i64>| flush_schedule(&run_with_flushes(Some(v)));
        // Flushes at -1.5 s, 0.5 s, 2.52 s, 4.53 s: first 0.5 s in, every (4.53 + 1.5) / 3 s.
        assert_eq!(
            at(vec![-1_500_000, 500_000, 2_520_000, 4_530_000]),
            Some((500_000_000, 2_010_000_000))
        );
        // None after the go (a replay shorter than the gap): one period after the last.
        assert_eq!(
            at(vec![-3_000_000, -990_000]),
            Some((1_020_000_000, 2_010_000_000))
        );
        // One flush traced: FLUSH_TIME apart.
        assert_eq!(
            at(vec![700_000]),
            Some((700_000_000, reclaimlab::consts::FLUSH_TIME_NS))
        );
        // At the go itself: the machine's first flush cannot be at 0.
        assert_eq!(at(vec![0, 2_000_000]), Some((1, 2_000_000_000)));
        // A first flush after the go a little later than the mean interval: cut to it.
        assert_eq!(
            at(vec![-1_000, 2_021_151, 4_036_000]),
            Some((2_018_500_000, 2_018_500_000))
        );
        // Traced, but nothing flushed (or not traced at all): no schedule, the phases are used.
        assert_eq!(at(vec![]), None);
        assert_eq!(flush_schedule(&run_with_flushes(None)), None);
    }

    /// `attach` keeps the traced flushes in µs from the go, before it negative; without the
    /// trace (or the go) nothing.
    #[test]
    fn attach_keeps_the_flushes_relative_to_the_go() {
        let rep = GuestReport {
            go_ns: Some(5_291_118_393),
            memcg_flush_ns: Some(vec![4_449_000_000, 6_465_324_000]),
            ..Default::default()
        };
        let mut run = run_with_flushes(None);
        attach(&mut run, &rep);
        assert_eq!(run.memcg_flush_us, Some(vec![-842_119, 1_174_205]));
        let mut run = run_with_flushes(None);
        attach(
            &mut run,
            &GuestReport {
                memcg_flush_ns: None,
                ..rep.clone()
            },
        );
        assert_eq!(run.memcg_flush_us, None);
        let mut run = run_with_flushes(None);
        attach(&mut run, &GuestReport { go_ns: None, ..rep });
        assert_eq!(run.memcg_flush_us, None);
    }
}
