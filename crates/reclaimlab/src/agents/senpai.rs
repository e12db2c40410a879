//! senpai (github.com/facebookincubator/senpai, senpai.py): every second it reads the
//! cgroup's memory.pressure `some` total; over an interval of 6 such ticks it sums the new
//! stall time (`integral`, µs). Above the target (`--pressure`, 10 ms) it backs off; otherwise,
//! once the interval has passed, it probes: `adj = min((pressure / integral / coeff_probe)²
//! × max_probe, max_probe)`. senpai.py applies `adj` to memory.high (the `memory-high`
//! agent); this agent applies it through memory.reclaim, reclaiming `adj × memory.current`
//! (never below `min_size`), as the issue describes the memory.reclaim form. Defaults are
//! senpai.py's argparse defaults: --interval 6, --pressure 10000 (µs), --max-probe 0.01,
//! --coeff-probe 10, --min-size 100 MiB.

use super::{managed_cgroups, Agent, AgentLog, AgentSys, Params, NS_PER_S};

/// senpai.py's tick: `time.sleep(1)`.
const TICK_NS: u64 = NS_PER_S;

/// The probe law shared with `memory-high`: the share to tighten by.
pub fn probe_adjustment(pressure_us: f64, integral_us: f64, coeff: f64, max: f64) -> f64 {
    let err = pressure_us / integral_us.max(1.0);
    ((err / coeff).powi(2) * max).min(max)
}

/// The backoff law: the share to loosen by.
pub fn backoff_adjustment(pressure_us: f64, integral_us: f64, coeff: f64, max: f64) -> f64 {
    let err = integral_us / pressure_us;
    ((err / coeff).powi(2) * max).min(max)
}

/// The settings both of senpai.py's controllers have, with its argparse defaults
/// (`senpai` here, and `memory-high`).
#[derive(Clone, Copy, Debug)]
pub struct ProbeSettings {
    /// Ticks between probes (`--interval`).
    pub interval: u64,
    /// Target stall per interval, µs (`--pressure`).
    pub pressure_us: f64,
    pub max_probe: f64,
    pub coeff_probe: f64,
    /// Never below this (`--min-size`), bytes.
    pub min_size: u64,
}

impl ProbeSettings {
    pub fn parse(p: &mut Params) -> Result<Self, String> {
        Ok(ProbeSettings {
            interval: p.u64("interval", 6, 1)?,
            pressure_us: p.f64("pressure", 10_000.0, 0.0)?,
            max_probe: p.f64("max_probe", 0.01, 0.0)?,
            coeff_probe: p.f64("coeff_probe", 10.0, 0.0)?,
            min_size: p.bytes("min_size", 100 << 20)?,
        })
    }
}

/// Per-cgroup controller state (senpai.py's `Senpai` object).
#[derive(Clone, Debug)]
struct State {
    path: String,
    last_total: Option<u64>,
    integral: u64,
    grace_ticks: u64,
}

pub struct Senpai {
    cgroup: Option<String>,
    probe: ProbeSettings,
    states: Option<Vec<State>>,
}

impl Senpai {
    pub fn new(p: &mut Params) -> Result<Self, String> {
        let s = Senpai {
            cgroup: p.cgroup()?,
            probe: ProbeSettings::parse(p)?,
            states: None,
        };
        if s.probe.max_probe == 0.0 || s.probe.coeff_probe == 0.0 {
            return Err(p.refuse("max_probe=0 or coeff_probe=0 never reclaims anything"));
        }
        if s.probe.pressure_us == 0.0 {
            return Err(p.refuse("pressure=0: any stall stops it, it would never probe"));
        }
        Ok(s)
    }
}

impl Agent for Senpai {
    fn first_wake(&self) -> u64 {
        TICK_NS
    }

    fn wake(&mut self, sys: &mut dyn AgentSys, now: u64, log: &mut AgentLog) -> Option<u64> {
        let pr = self.probe;
        let states = self.states.get_or_insert_with(|| {
            managed_cgroups(sys, &self.cgroup, true)
                .into_iter()
                .map(|path| State {
                    path,
                    last_total: None,
                    integral: 0,
                    grace_ticks: pr.interval,
                })
                .collect()
        });
        for st in states.iter_mut() {
            let Some(psi) = sys.memory_pressure(&st.path) else {
                continue;
            };
            let total = psi.some.total_us;
            let delta = total - st.last_total.unwrap_or(total);
            st.last_total = Some(total);
            st.integral += delta;
            if st.integral as f64 > pr.pressure_us {
                // Backing off means letting memory.high go up; reclaim has nothing to undo.
                st.integral = 0;
                st.grace_ticks = pr.interval - 1;
                continue;
            }
            if st.grace_ticks > 0 {
                st.grace_ticks -= 1;
                continue;
            }
            let adj = probe_adjustment(
                pr.pressure_us,
                st.integral as f64,
                pr.coeff_probe,
                pr.max_probe,
            );
            let current = sys.memory_current(&st.path).unwrap_or(0);
            let amount = ((current as f64 * adj) as u64).min(current.saturating_sub(pr.min_size));
            if amount >= 4096 {
                log.reclaim_requests += 1;
                log.reclaim_requested_bytes += amount;
                if sys.memory_reclaim(&st.path, amount).is_err() {
                    log.errors += 1;
                }
            }
            st.integral = 0;
            st.grace_ticks = pr.interval - 1;
        }
        Some(now + TICK_NS)
    }
}
