//! DAMON_RECLAIM (mm/damon/reclaim.c, Documentation/admin-guide/mm/damon/reclaim.rst): a
//! DAMOS scheme that pages out memory not accessed for `min_age` (120 s), charging at most
//! `quota_ms` (10 ms) of reclaim time and `quota_sz` (128 MiB) per `quota_reset_interval_ms`
//! (1 s), applied every aggregation interval (100 ms), and active only while the free memory
//! rate (per mille) is below `wmarks_mid` (400) and above `wmarks_low` (200); above
//! `wmarks_high` (500) or below low it deactivates and rechecks every `wmarks_interval` (5 s).
//!
//! Simplified (docs/model.md): DAMON samples each adaptive region's accessed bits every 5 ms
//! and ages regions per aggregation interval; the model gives it each page's exact last
//! access time instead (an upper bound on DAMON's accuracy), and DAMOS_PAGEOUT of the cold
//! regions becomes a memory.reclaim of as many bytes as are cold (the LRU then picks the
//! pages: the coldest by its own measure, not necessarily DAMON's).

use super::{Agent, AgentLog, AgentSys, Params};

pub struct DamonReclaim {
    cgroup: String,
    min_age_ns: u64,
    quota_ns: u64,
    quota_sz: u64,
    reset_ns: u64,
    aggr_ns: u64,
    wmarks: Option<(u64, u64, u64)>,
    wmarks_interval_ns: u64,
    active: bool,
    window_start: u64,
    charged_ns: u64,
    charged_sz: u64,
}

impl DamonReclaim {
    pub fn new(p: &mut Params) -> Result<Self, String> {
        let min_age_us = p.u64("min_age", 120_000_000, 0)?;
        let quota_ms = p.u64("quota_ms", 10, 0)?;
        let quota_sz = p.bytes("quota_sz", 128 << 20)?;
        let reset_ms = p.u64("quota_reset_interval_ms", 1000, 1)?;
        let aggr_us = p.u64("aggr_interval", 100_000, 1)?;
        let use_wmarks = p.bool("wmarks", true)?;
        let high = p.u64("wmarks_high", 500, 0)?;
        let mid = p.u64("wmarks_mid", 400, 0)?;
        let low = p.u64("wmarks_low", 200, 0)?;
        let wmarks_interval_us = p.u64("wmarks_interval", 5_000_000, 1)?;
        if use_wmarks && !(low < mid && mid <= high && high <= 1000) {
            return Err(p.refuse("watermarks must satisfy low < mid <= high <= 1000"));
        }
        let s = DamonReclaim {
            cgroup: p.cgroup()?.unwrap_or_else(|| "/".to_string()),
            min_age_ns: min_age_us * 1000,
            quota_ns: quota_ms * 1_000_000,
            quota_sz,
            reset_ns: reset_ms * 1_000_000,
            aggr_ns: aggr_us * 1000,
            wmarks: use_wmarks.then_some((high, mid, low)),
            wmarks_interval_ns: wmarks_interval_us * 1000,
            active: !use_wmarks,
            window_start: 0,
            charged_ns: 0,
            charged_sz: 0,
        };
        // A zero quota is disabled (reclaim.rst), not an agent that does nothing.
        Ok(s)
    }

    /// `damos_wmark_wait_us`: the scheme's activation by the free memory rate.
    fn check_wmarks(&mut self, sys: &dyn AgentSys) {
        let Some((high, mid, low)) = self.wmarks else {
            return;
        };
        let (total, free) = sys.mem_total_free();
        let rate = free * 1000 / total.max(1);
        if rate > high || rate < low {
            self.active = false;
        } else if rate < mid {
            self.active = true;
        }
    }
}

impl Agent for DamonReclaim {
    fn first_wake(&self) -> u64 {
        self.aggr_ns
    }

    fn needs_access_ages(&self) -> bool {
        true
    }

    fn wake(&mut self, sys: &mut dyn AgentSys, now: u64, log: &mut AgentLog) -> Option<u64> {
        self.check_wmarks(sys);
        if !self.active {
            return Some(now + self.wmarks_interval_ns);
        }
        if now >= self.window_start + self.reset_ns {
            self.window_start = now;
            self.charged_ns = 0;
            self.charged_sz = 0;
        }
        let time_left = self.quota_ns == 0 || self.charged_ns < self.quota_ns;
        let size_left = if self.quota_sz == 0 {
            u64::MAX
        } else {
            self.quota_sz.saturating_sub(self.charged_sz)
        };
        if time_left && size_left > 0 {
            let cold = sys.cold_bytes(&self.cgroup, self.min_age_ns);
            let amount = cold.min(size_left);
            if amount >= 4096 {
                log.reclaim_requests += 1;
                log.reclaim_requested_bytes += amount;
                let before = sys.agent_time_ns();
                if sys.memory_reclaim(&self.cgroup, amount).is_err() {
                    log.errors += 1;
                }
                self.charged_ns += sys.agent_time_ns() - before;
                self.charged_sz += amount;
            }
        }
        Some(now + self.aggr_ns)
    }
}
