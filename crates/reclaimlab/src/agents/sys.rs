//! The agents' view of a modelled machine: cgroupfs, debugfs, procfs and kill, over the
//! machine, its policy and PSI.

use super::AgentSys;
use crate::access::{PageRef, Via};
use crate::machine::psi::{Psi, PsiMemory};
use crate::machine::{Ctx, Machine, Owner, Slot, Vm};
use crate::policy::Policy;

/// One agent wake-up's access to the machine at simulated time `now`. Writes run in the
/// agent's own context (a task of no workload memcg, as a daemon in its own cgroup), and the
/// time they take is the agent's (`spent_ns`), not the workload's.
pub struct MachineSys<'a> {
    pub m: &'a mut Machine,
    pub pol: &'a mut dyn Policy,
    pub psi: Option<&'a mut Psi>,
    pub now: u64,
    /// Last access time of each frame (DAMON's monitor; empty unless an agent needs it).
    pub ages: &'a [u64],
    pub spent_ns: u64,
}

impl MachineSys<'_> {
    fn id(&self, path: &str) -> Option<u16> {
        self.m.memcg_by_path(path)
    }

    /// Runs `f` as the agent's write at `now` (plus what earlier writes of this wake-up took).
    fn write<T>(&mut self, f: impl FnOnce(&mut Machine, &mut dyn Policy) -> T) -> T {
        self.m.ctx = Ctx {
            now: self.now + self.spent_ns,
            pid: u32::MAX,
            ..Ctx::default()
        };
        let r = f(self.m, self.pol);
        self.spent_ns += self.m.ctx.elapsed;
        r
    }
}

impl AgentSys for MachineSys<'_> {
    fn memcg_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![0u16];
        while let Some(c) = stack.pop() {
            let mc = &self.m.memcgs[c as usize];
            if mc.online {
                out.push(mc.path.clone());
            }
            stack.extend(mc.children.iter().rev());
        }
        out
    }

    fn has_procs(&self, path: &str) -> bool {
        let Some(id) = self.id(path) else {
            return false;
        };
        self.m.procs.iter().any(|p| p.alive && p.memcg == id)
    }

    fn memory_current(&self, path: &str) -> Option<u64> {
        self.id(path)
            .map(|c| self.m.memcgs[c as usize].usage * 4096)
    }

    fn memory_high(&self, path: &str) -> Option<u64> {
        let c = self.id(path)?;
        let high = self.m.memcgs[c as usize].high;
        Some(if high == u64::MAX {
            u64::MAX
        } else {
            high * 4096
        })
    }

    fn memory_stat(&self, path: &str, key: &str) -> Option<u64> {
        let ev = self.m.memcg_events_hier(self.id(path)?);
        let sum = |vs: &[Vm]| vs.iter().map(|&v| ev.get(v)).sum::<u64>();
        Some(match key {
            "pgscan" => sum(&[Vm::PgscanKswapd, Vm::PgscanDirect]),
            "pgsteal" => sum(&[Vm::PgstealKswapd, Vm::PgstealDirect]),
            "workingset_refault_anon" => sum(&[Vm::WorkingsetRefaultAnon]),
            "workingset_refault_file" => sum(&[Vm::WorkingsetRefaultFile]),
            _ => return None,
        })
    }

    fn memory_pressure(&mut self, path: &str) -> Option<PsiMemory> {
        let id = self.id(path)?;
        let now = self.now;
        self.psi.as_mut().map(|p| p.show(id, now))
    }

    fn memory_reclaim(&mut self, path: &str, bytes: u64) -> Result<(), String> {
        let id = self.id(path).ok_or("ENOENT")?;
        let pages = bytes.div_ceil(4096);
        self.write(|m, pol| m.memory_reclaim(pol, id, pages, None))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn set_memory_high(&mut self, path: &str, bytes: u64) -> Result<(), String> {
        let id = self.id(path).ok_or("ENOENT")?;
        if id == 0 {
            return Err("ENOENT (no memory.high on the root)".into());
        }
        let pages = if bytes == u64::MAX {
            u64::MAX
        } else {
            bytes / 4096
        };
        self.write(|m, pol| m.set_memory_high(pol, id, pages));
        Ok(())
    }

    fn lru_gen_read(&mut self) -> Option<String> {
        self.m.ctx = Ctx {
            now: self.now + self.spent_ns,
            pid: u32::MAX,
            ..Ctx::default()
        };
        self.pol.lru_gen_show(self.m, false)
    }

    fn lru_gen_write(&mut self, cmd: &str) -> Result<(), String> {
        match self.write(|m, pol| pol.lru_gen_write(m, cmd)) {
            None => Err("ENOENT (not MGLRU)".into()),
            Some(r) => r.map_err(|e| e.to_string()),
        }
    }

    fn procs(&self, path: &str) -> Vec<(u32, u64)> {
        let Some(id) = self.id(path) else {
            return Vec::new();
        };
        self.m
            .procs
            .iter()
            .filter(|p| p.alive && self.m.memcg_is_descendant(p.memcg, id))
            .map(|p| (p.pid, p.rss * 4096))
            .collect()
    }

    fn kill(&mut self, pid: u32) {
        if self.m.procs.get(pid as usize).is_some_and(|p| p.alive) {
            self.write(|m, pol| {
                let now = m.now();
                m.exit_mmap(pol, pid, now);
            });
        }
    }

    fn mem_total_free(&self) -> (u64, u64) {
        (self.m.cfg.total_pages() * 4096, self.m.nr_free() * 4096)
    }

    fn cold_bytes(&mut self, path: &str, min_age_ns: u64) -> u64 {
        let Some(id) = self.id(path) else {
            return 0;
        };
        let cutoff = self.now.saturating_sub(min_age_ns);
        let mut pages = 0;
        for (pfn, f) in self.m.folios.iter().enumerate() {
            if !matches!(f.owner(), Owner::Anon { .. } | Owner::File { .. })
                || !self.m.memcg_is_descendant(f.memcg, id)
            {
                continue;
            }
            if self.ages.get(pfn).is_none_or(|&t| t <= cutoff) {
                pages += 1;
            }
        }
        pages * 4096
    }

    fn agent_time_ns(&self) -> u64 {
        self.spent_ns
    }
}

/// The frame an access of process `pid` to `page` left resident, if any (for DAMON's access
/// ages).
pub fn resident_frame(m: &Machine, pid: u32, page: PageRef, via: Via) -> Option<usize> {
    let slot =
        |file: u32, index: u64| match m.files.get(file as usize)?.slots.get(index as usize)? {
            Slot::Page(pfn) => Some(*pfn as usize),
            _ => None,
        };
    match (page, via) {
        (PageRef::Anon { page }, _) => {
            let pte = m
                .procs
                .get(pid as usize)?
                .vmas
                .first()?
                .ptes
                .get(page as usize)?;
            pte.is_present().then(|| pte.pfn() as usize)
        }
        (PageRef::File { file, page }, _) => slot(file, page),
    }
}
