//! Simulated user-space memory agents: proactive reclaimers and OOM daemons that wake at
//! simulated times, read what a daemon can read (memory.pressure, memory.current,
//! memory.stat, /sys/kernel/debug/lru_gen, /proc/meminfo, cgroup.procs) and act only through
//! memory.reclaim, memory.high, lru_gen writes and kill. Each agent's parameters default to
//! its upstream defaults (cited in its file). `--agent NAME[:key=value,...]`.

pub mod damon_reclaim;
pub mod lru_gen_age;
pub mod memory_high;
pub mod oomd;
pub mod senpai;
pub mod sys;

use crate::machine::psi::PsiMemory;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The interfaces an agent has (a daemon's view of the machine). Sizes in bytes as in
/// cgroupfs; paths are cgroup paths ("/" is the root).
pub trait AgentSys {
    /// Online memcgs, pre-order.
    fn memcg_paths(&self) -> Vec<String>;
    /// Whether a memcg has live processes of its own (cgroup.procs not empty).
    fn has_procs(&self, path: &str) -> bool;
    /// memory.current.
    fn memory_current(&self, path: &str) -> Option<u64>;
    /// memory.high (u64::MAX: "max").
    fn memory_high(&self, path: &str) -> Option<u64>;
    /// A memory.stat field (sizes in bytes, events in counts).
    fn memory_stat(&self, path: &str, key: &str) -> Option<u64>;
    /// memory.pressure (the root's is /proc/pressure/memory).
    fn memory_pressure(&mut self, path: &str) -> Option<PsiMemory>;
    /// Writes memory.reclaim; Err is the kernel's errno name (EAGAIN...).
    fn memory_reclaim(&mut self, path: &str, bytes: u64) -> Result<(), String>;
    /// Writes memory.high.
    fn set_memory_high(&mut self, path: &str, bytes: u64) -> Result<(), String>;
    /// Reads /sys/kernel/debug/lru_gen (None: not MGLRU).
    fn lru_gen_read(&mut self) -> Option<String>;
    /// Writes /sys/kernel/debug/lru_gen.
    fn lru_gen_write(&mut self, cmd: &str) -> Result<(), String>;
    /// cgroup.procs of a memcg and its descendants with each one's VmRSS (pid, bytes).
    fn procs(&self, path: &str) -> Vec<(u32, u64)>;
    /// SIGKILL.
    fn kill(&mut self, pid: u32);
    /// MemTotal and MemFree.
    fn mem_total_free(&self) -> (u64, u64);
    /// Bytes of a memcg's resident pages not accessed for at least `min_age_ns` (the
    /// access-age monitor DAMON builds; see damon_reclaim.rs for the simplification).
    fn cold_bytes(&mut self, path: &str, min_age_ns: u64) -> u64;
    /// Time the agent's own writes have taken in this wake-up (its clock), ns.
    fn agent_time_ns(&self) -> u64;
}

/// An agent: wakes at simulated times and acts.
pub trait Agent {
    /// When it first wakes (ns).
    fn first_wake(&self) -> u64;
    /// Wakes at `now`; returns when to wake next (None: never again).
    fn wake(&mut self, sys: &mut dyn AgentSys, now: u64, log: &mut AgentLog) -> Option<u64>;
    /// Whether it needs the per-page access ages (`AgentSys::cold_bytes`).
    fn needs_access_ages(&self) -> bool {
        false
    }
}

/// What an agent did, for the run's result.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AgentLog {
    pub agent: String,
    pub wakeups: u64,
    /// Bytes asked of memory.reclaim and lru_gen evictions, and memory.high writes.
    pub reclaim_requests: u64,
    pub reclaim_requested_bytes: u64,
    pub memory_high_writes: u64,
    pub lru_gen_writes: u64,
    pub kills: u64,
    /// Writes that failed (EAGAIN, EINVAL...).
    pub errors: u64,
}

/// `NAME[:key=value,...]` as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSpec {
    pub name: String,
    pub params: Vec<(String, String)>,
}

/// The agents there are.
pub const AGENTS: &[(&str, &str)] = &[
    (
        "senpai",
        "memory.reclaim of a share of memory.current every interval while memory.pressure stays under a target (facebookincubator/senpai)",
    ),
    (
        "memory-high",
        "senpai.py's controller: tightens or loosens memory.high toward a PSI target",
    ),
    (
        "oomd",
        "systemd-oomd ManagedOOMMemoryPressure=kill: kills when full avg10 stays over a limit",
    ),
    (
        "lru-gen-age",
        "MGLRU working-set aging and eviction of generations older than an age via lru_gen",
    ),
    (
        "damon-reclaim",
        "DAMON_RECLAIM: reclaims memory not accessed for min_age, under time/size quotas and free-memory watermarks",
    ),
];

impl FromStr for AgentSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, rest) = s.split_once(':').unwrap_or((s, ""));
        let name = name.trim();
        if !AGENTS.iter().any(|(n, _)| *n == name) {
            let known: Vec<&str> = AGENTS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "--agent: unknown agent '{name}' (known: {})",
                known.join(", ")
            ));
        }
        let mut params = Vec::new();
        for kv in rest.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(format!("--agent {name}: '{kv}' is not key=value"));
            };
            params.push((k.trim().to_string(), v.trim().to_string()));
        }
        let spec = AgentSpec {
            name: name.to_string(),
            params,
        };
        spec.build()?;
        Ok(spec)
    }
}

impl fmt::Display for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

impl AgentSpec {
    /// The agent, or a one-line error naming the bad key or value.
    pub fn build(&self) -> Result<Box<dyn Agent>, String> {
        let mut p = Params::new(self);
        let agent: Box<dyn Agent> = match self.name.as_str() {
            "senpai" => Box::new(senpai::Senpai::new(&mut p)?),
            "memory-high" => Box::new(memory_high::MemoryHigh::new(&mut p)?),
            "oomd" => Box::new(oomd::Oomd::new(&mut p)?),
            "lru-gen-age" => Box::new(lru_gen_age::LruGenAge::new(&mut p)?),
            "damon-reclaim" => Box::new(damon_reclaim::DamonReclaim::new(&mut p)?),
            other => return Err(format!("--agent: unknown agent '{other}'")),
        };
        p.finish()?;
        Ok(agent)
    }
}

/// An agent's key=value parameters, taken one by one; keys left over are errors.
pub struct Params<'a> {
    agent: &'a str,
    left: Vec<(String, String)>,
}

impl<'a> Params<'a> {
    fn new(spec: &'a AgentSpec) -> Self {
        Params {
            agent: &spec.name,
            left: spec.params.clone(),
        }
    }

    fn take(&mut self, key: &str) -> Option<String> {
        let i = self.left.iter().position(|(k, _)| k == key)?;
        Some(self.left.remove(i).1)
    }

    fn bad(&self, key: &str, v: &str, what: &str) -> String {
        format!("--agent {}: {key}={v}: expected {what}", self.agent)
    }

    /// A number (f64) at least `min`.
    pub fn f64(&mut self, key: &str, default: f64, min: f64) -> Result<f64, String> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= min => Ok(x),
                _ => Err(self.bad(key, &v, &format!("a number >= {min}"))),
            },
        }
    }

    /// An integer at least `min`.
    pub fn u64(&mut self, key: &str, default: u64, min: u64) -> Result<u64, String> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<u64>() {
                Ok(x) if x >= min => Ok(x),
                _ => Err(self.bad(key, &v, &format!("an integer >= {min}"))),
            },
        }
    }

    /// A size in bytes with an optional K, M or G suffix (powers of 1024).
    pub fn bytes(&mut self, key: &str, default: u64) -> Result<u64, String> {
        let Some(v) = self.take(key) else {
            return Ok(default);
        };
        let (num, mult) = match v.chars().last() {
            Some('K' | 'k') => (&v[..v.len() - 1], 1u64 << 10),
            Some('M' | 'm') => (&v[..v.len() - 1], 1 << 20),
            Some('G' | 'g') => (&v[..v.len() - 1], 1 << 30),
            _ => (v.as_str(), 1),
        };
        num.parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(mult))
            .ok_or_else(|| self.bad(key, &v, "a size in bytes (K, M, G suffixes)"))
    }

    /// A cgroup path ("/..."), or None for the agent's default choice.
    pub fn cgroup(&mut self) -> Result<Option<String>, String> {
        match self.take("cgroup") {
            None => Ok(None),
            Some(v) if v.starts_with('/') => Ok(Some(v)),
            Some(v) => Err(self.bad("cgroup", &v, "a cgroup path starting with '/'")),
        }
    }

    /// A yes/no switch.
    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, String> {
        match self.take(key).as_deref() {
            None => Ok(default),
            Some("1" | "y" | "yes" | "true" | "on") => Ok(true),
            Some("0" | "n" | "no" | "false" | "off") => Ok(false),
            Some(v) => Err(self.bad(key, v, "yes or no")),
        }
    }

    /// Refuses a parameter set that makes the agent do nothing.
    pub fn refuse(&self, why: &str) -> String {
        format!("--agent {}: {why}", self.agent)
    }

    fn finish(self) -> Result<(), String> {
        match self.left.first() {
            None => Ok(()),
            Some((k, _)) => Err(format!("--agent {}: unknown key '{k}'", self.agent)),
        }
    }
}

/// The memcgs an agent manages: the given one, or every non-root memcg with processes of its
/// own (the leaves a container manager would hand to a daemon), or the root when there are
/// none and `root_ok`.
pub fn managed_cgroups(sys: &dyn AgentSys, given: &Option<String>, root_ok: bool) -> Vec<String> {
    if let Some(g) = given {
        return sys.memcg_paths().into_iter().filter(|p| p == g).collect();
    }
    let leaves: Vec<String> = sys
        .memcg_paths()
        .into_iter()
        .filter(|p| p != "/" && sys.has_procs(p))
        .collect();
    if leaves.is_empty() && root_ok {
        vec!["/".to_string()]
    } else {
        leaves
    }
}

/// What agents bought and cost: a run with agents against the same run without them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AgentEffect {
    /// Throughput (accesses per simulated second) without and with the agents.
    pub baseline_ops_per_sec: f64,
    pub ops_per_sec: f64,
    /// 0.05 is 5% slower: for a workload of timed requests (`RunResult::requests`: app
    /// launches, transactions), mean request latency with / without − 1; otherwise
    /// throughput without / with − 1 (a fixed amount of work takes 5% longer).
    pub slowdown: f64,
    /// Per memcg: the time-weighted mean of memory.current without and with the agents
    /// (pages), and the share saved.
    pub memcgs: Vec<MemorySaved>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct MemorySaved {
    pub path: String,
    pub baseline_mean_pages: f64,
    pub mean_pages: f64,
    pub saved: f64,
}

/// Compares a run with agents against the same run without them.
pub fn effect(base: &crate::metrics::RunResult, with: &crate::metrics::RunResult) -> AgentEffect {
    let request_mean = |r: &crate::metrics::RunResult| {
        r.requests
            .as_ref()
            .filter(|q| q.total > 0)
            .map(|q| q.latency.mean_ns)
    };
    // A run that did nothing at all counts as infinitely slow, kept finite for JSON.
    let slowdown = match (request_mean(base), request_mean(with)) {
        (Some(b), Some(w)) if b > 0.0 => w / b - 1.0,
        _ => base.ops_per_sec / with.ops_per_sec.max(1e-9) - 1.0,
    };
    let memcgs = with
        .memcgs
        .iter()
        .filter_map(|m| {
            let b = base.memcgs.iter().find(|b| b.path == m.path)?;
            let saved = if b.current_mean_pages > 0.0 {
                1.0 - m.current_mean_pages / b.current_mean_pages
            } else {
                0.0
            };
            Some(MemorySaved {
                path: m.path.clone(),
                baseline_mean_pages: b.current_mean_pages,
                mean_pages: m.current_mean_pages,
                saved,
            })
        })
        .collect();
    AgentEffect {
        baseline_ops_per_sec: base.ops_per_sec,
        ops_per_sec: with.ops_per_sec,
        slowdown,
        memcgs,
    }
}

/// Nanoseconds per second.
pub const NS_PER_S: u64 = 1_000_000_000;

#[cfg(test)]
mod tests;
