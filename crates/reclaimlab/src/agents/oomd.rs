//! systemd-oomd with `ManagedOOMMemoryPressure=kill` (systemd src/oom/oomd-manager.[ch],
//! oomd.conf(5)): once a second (MEM_PRESSURE_INTERVAL_USEC) it reads each monitored cgroup's
//! memory.pressure; a cgroup whose `full avg10` stays above the limit
//! (DefaultMemoryPressureLimit=60%) for the duration (DefaultMemoryPressureDurationSec=30s)
//! is a candidate, provided reclaim ran in it within the last 30 s (RECLAIM_DURATION_USEC).
//! It then kills the descendant cgroup with the highest reclaim (pgscan) rate — every
//! process in it (oomd_kill_by_pgscan_rate) — and waits 15 s (POST_ACTION_DELAY_USEC) before
//! acting again.

use super::{managed_cgroups, Agent, AgentLog, AgentSys, Params, NS_PER_S};

const INTERVAL_NS: u64 = NS_PER_S;
const RECLAIM_DURATION_NS: u64 = 30 * NS_PER_S;
const POST_ACTION_DELAY_NS: u64 = 15 * NS_PER_S;

#[derive(Clone, Debug)]
struct Monitored {
    path: String,
    /// When full avg10 went over the limit (`mem_pressure_limit_hit_start`).
    hit_start: Option<u64>,
    /// pgscan at the last poll and when it last rose.
    last_pgscan: u64,
    last_reclaim: Option<u64>,
}

pub struct Oomd {
    cgroup: Option<String>,
    limit_pct: f64,
    duration_ns: u64,
    monitored: Option<Vec<Monitored>>,
    /// pgscan of every cgroup at the last poll, for the rates.
    pgscan: Vec<(String, u64)>,
    delay_until: u64,
}

impl Oomd {
    pub fn new(p: &mut Params) -> Result<Self, String> {
        let limit_pct = p.f64("limit", 60.0, 0.0)?;
        let duration_s = p.f64("duration", 30.0, 0.0)?;
        if limit_pct >= 100.0 {
            return Err(p.refuse("limit=100 or more: full avg10 never exceeds 100%"));
        }
        Ok(Oomd {
            cgroup: p.cgroup()?,
            limit_pct,
            duration_ns: (duration_s * 1e9) as u64,
            monitored: None,
            pgscan: Vec::new(),
            delay_until: 0,
        })
    }

    /// The descendant cgroup (with processes) of `path` with the highest pgscan rate since the
    /// last poll; ties go to the larger memory.current.
    fn victim(&self, sys: &dyn AgentSys, path: &str) -> Option<String> {
        let prefix = if path == "/" {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        sys.memcg_paths()
            .into_iter()
            .filter(|c| (c == path || c.starts_with(&prefix)) && sys.has_procs(c))
            .map(|c| {
                let now = sys.memory_stat(&c, "pgscan").unwrap_or(0);
                let before = self
                    .pgscan
                    .iter()
                    .find(|(p, _)| *p == c)
                    .map_or(0, |(_, v)| *v);
                let cur = sys.memory_current(&c).unwrap_or(0);
                (now.saturating_sub(before), cur, c)
            })
            .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.cmp(&a.2)))
            .map(|(_, _, c)| c)
    }
}

impl Agent for Oomd {
    fn first_wake(&self) -> u64 {
        INTERVAL_NS
    }

    fn wake(&mut self, sys: &mut dyn AgentSys, now: u64, log: &mut AgentLog) -> Option<u64> {
        let mut mons = self.monitored.take().unwrap_or_else(|| {
            managed_cgroups(sys, &self.cgroup, true)
                .into_iter()
                .map(|path| Monitored {
                    path,
                    hit_start: None,
                    last_pgscan: 0,
                    last_reclaim: None,
                })
                .collect()
        });
        let mut candidate = None;
        for mon in &mut mons {
            let pgscan = sys.memory_stat(&mon.path, "pgscan").unwrap_or(0);
            if pgscan > mon.last_pgscan {
                mon.last_reclaim = Some(now);
            }
            mon.last_pgscan = pgscan;
            let Some(psi) = sys.memory_pressure(&mon.path) else {
                continue;
            };
            if psi.full.avg10 > self.limit_pct {
                let start = *mon.hit_start.get_or_insert(now);
                let reclaimed_lately = mon
                    .last_reclaim
                    .is_some_and(|t| now - t <= RECLAIM_DURATION_NS);
                if now - start >= self.duration_ns && reclaimed_lately && candidate.is_none() {
                    candidate = Some(mon.path.clone());
                }
            } else {
                mon.hit_start = None;
            }
        }
        if let Some(path) = candidate.filter(|_| now >= self.delay_until) {
            if let Some(victim) = self.victim(sys, &path) {
                for (pid, _) in sys.procs(&victim) {
                    sys.kill(pid);
                    log.kills += 1;
                }
                self.delay_until = now + POST_ACTION_DELAY_NS;
                for mon in &mut mons {
                    mon.hit_start = None;
                }
            }
        }
        self.pgscan = sys
            .memcg_paths()
            .into_iter()
            .map(|c| {
                let v = sys.memory_stat(&c, "pgscan").unwrap_or(0);
                (c, v)
            })
            .collect();
        self.monitored = Some(mons);
        Some(now + INTERVAL_NS)
    }
}
