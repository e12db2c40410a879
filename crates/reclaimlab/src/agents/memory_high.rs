//! senpai.py's own controller (github.com/facebookincubator/senpai), which sizes a cgroup
//! through memory.high: at start it sets memory.high to memory.current (clamped to
//! [min_size, max_size], rounded down to 4 KiB); every second it adds the new `some` stall
//! time to an integral; above the target it raises memory.high by
//! `min((integral / pressure / coeff_backoff)² × max_backoff, max_backoff)`, otherwise after
//! `interval` ticks it lowers it by `min((pressure / integral / coeff_probe)² × max_probe,
//! max_probe)`. If memory.high was changed behind its back it restarts from memory.current.
//! Defaults (senpai.py argparse): --interval 6, --pressure 10000 µs, --max-probe 0.01,
//! --max-backoff 1.0, --coeff-probe 10, --coeff-backoff 20, --min-size 100 MiB,
//! --max-size 100 GiB. oomd's Senpai plugin and systemd-oomd's memory.high mode follow the
//! same law.

use super::senpai::{backoff_adjustment, probe_adjustment, ProbeSettings};
use super::{managed_cgroups, Agent, AgentLog, AgentSys, Params, NS_PER_S};

const TICK_NS: u64 = NS_PER_S;

#[derive(Clone, Debug)]
struct State {
    path: String,
    limit: Option<u64>,
    last_total: Option<u64>,
    integral: u64,
    grace_ticks: u64,
}

pub struct MemoryHigh {
    cgroup: Option<String>,
    probe: ProbeSettings,
    max_backoff: f64,
    coeff_backoff: f64,
    max_size: u64,
    states: Option<Vec<State>>,
}

impl MemoryHigh {
    pub fn new(p: &mut Params) -> Result<Self, String> {
        let s = MemoryHigh {
            cgroup: p.cgroup()?,
            probe: ProbeSettings::parse(p)?,
            max_backoff: p.f64("max_backoff", 1.0, 0.0)?,
            coeff_backoff: p.f64("coeff_backoff", 20.0, 0.0)?,
            max_size: p.bytes("max_size", 100 << 30)?,
            states: None,
        };
        if s.cgroup.as_deref() == Some("/") {
            return Err(p.refuse("the root cgroup has no memory.high"));
        }
        if s.probe.max_probe == 0.0 || s.probe.coeff_probe == 0.0 {
            return Err(p.refuse("max_probe=0 or coeff_probe=0 never tightens memory.high"));
        }
        if s.probe.pressure_us == 0.0 || s.coeff_backoff == 0.0 {
            return Err(p.refuse("pressure=0 or coeff_backoff=0 is a division by zero"));
        }
        if s.probe.min_size > s.max_size {
            return Err(p.refuse("min_size above max_size"));
        }
        Ok(s)
    }

    /// `import_limit` + `set_limit`: sanitise and write memory.high.
    fn set_limit(
        &self,
        st: &mut State,
        sys: &mut dyn AgentSys,
        want: Option<u64>,
        log: &mut AgentLog,
    ) {
        let mut limit = want.unwrap_or(0);
        if sys.memory_high(&st.path) != st.limit || want.is_none() {
            limit = sys.memory_current(&st.path).unwrap_or(0);
        }
        let limit = limit.clamp(self.probe.min_size, self.max_size) & !4095;
        st.limit = Some(limit);
        log.memory_high_writes += 1;
        if sys.set_memory_high(&st.path, limit).is_err() {
            log.errors += 1;
        }
    }

    fn adjust(&self, st: &mut State, sys: &mut dyn AgentSys, factor: f64, log: &mut AgentLog) {
        let x = sys.memory_high(&st.path).unwrap_or(u64::MAX);
        let x = if x == u64::MAX {
            x
        } else {
            (x as f64 + x as f64 * factor) as u64
        };
        self.set_limit(st, sys, Some(x), log);
        st.integral = 0;
    }
}

impl Agent for MemoryHigh {
    /// Attached one tick into the run: it starts from the memory.current the workload has
    /// built by then (started before the workload, at memory.current 0, it would set
    /// memory.high to min_size).
    fn first_wake(&self) -> u64 {
        TICK_NS
    }

    fn wake(&mut self, sys: &mut dyn AgentSys, now: u64, log: &mut AgentLog) -> Option<u64> {
        if self.states.is_none() {
            let mut states: Vec<State> = managed_cgroups(sys, &self.cgroup, false)
                .into_iter()
                .filter(|p| p != "/")
                .map(|path| State {
                    path,
                    limit: None,
                    last_total: None,
                    integral: 0,
                    grace_ticks: self.probe.interval,
                })
                .collect();
            for st in &mut states {
                st.last_total = sys.memory_pressure(&st.path).map(|p| p.some.total_us);
                self.set_limit(st, sys, None, log);
            }
            self.states = Some(states);
            return Some(now + TICK_NS);
        }
        let mut states = self.states.take().unwrap_or_default();
        for st in &mut states {
            let Some(psi) = sys.memory_pressure(&st.path) else {
                continue;
            };
            let total = psi.some.total_us;
            st.integral += total - st.last_total.unwrap_or(total);
            st.last_total = Some(total);
            if st.integral as f64 > self.probe.pressure_us {
                let adj = backoff_adjustment(
                    self.probe.pressure_us,
                    st.integral as f64,
                    self.coeff_backoff,
                    self.max_backoff,
                );
                self.adjust(st, sys, adj, log);
                st.grace_ticks = self.probe.interval - 1;
                continue;
            }
            if st.grace_ticks > 0 {
                st.grace_ticks -= 1;
                continue;
            }
            let adj = probe_adjustment(
                self.probe.pressure_us,
                st.integral as f64,
                self.probe.coeff_probe,
                self.probe.max_probe,
            );
            self.adjust(st, sys, -adj, log);
            st.grace_ticks = self.probe.interval - 1;
        }
        self.states = Some(states);
        Some(now + TICK_NS)
    }
}
