//! MGLRU working-set aging and proactive reclaim through /sys/kernel/debug/lru_gen
//! (Documentation/admin-guide/mm/multigen_lru.rst, "Working set estimation" and "Proactive
//! reclaim"; seed 002): every `interval` it ages each managed memcg and node (`+ memcg_id
//! node_id max_gen_nr`, creating a generation), reads the generations' ages, and evicts every
//! generation older than `age` (`- memcg_id node_id min_gen_nr`, never the two youngest:
//! MIN_NR_GENS). No daemon ships with the kernel; the default age is the 120 s cold-age
//! threshold of Google's far-memory reclaim (Lagar-Cavilla et al., "Software-Defined Far
//! Memory in Warehouse-Scale Computers", ASPLOS 2019). The interval defaults to half the
//! age: MGLRU keeps at most MAX_NR_GENS = 4 generations and aging a full window folds the
//! oldest into the next (`inc_min_seq`), so only when generations are born age/2 apart are
//! the two evictable ones old enough (aging every second, nothing would ever be 5 s old).
//! MGLRU only.

use super::{managed_cgroups, Agent, AgentLog, AgentSys, Params};

/// `MIN_NR_GENS`.
const MIN_NR_GENS: u64 = 2;

pub struct LruGenAge {
    cgroup: Option<String>,
    age_ms: u64,
    interval_ns: u64,
}

/// One generation line of lru_gen: (memcg id, node, seq, age ms, anon + file pages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenLine {
    pub memcg_id: u64,
    pub node: u64,
    pub seq: u64,
    pub age_ms: u64,
    pub pages: u64,
}

/// Parses /sys/kernel/debug/lru_gen into generation lines, with each memcg's path.
pub fn parse_lru_gen(text: &str) -> Vec<(String, GenLine)> {
    let mut out = Vec::new();
    let (mut id, mut path, mut node) = (0u64, String::new(), 0u64);
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["memcg", i, rest @ ..] => {
                id = i.parse().unwrap_or(0);
                path = rest.first().unwrap_or(&"").to_string();
            }
            ["node", n] => node = n.parse().unwrap_or(0),
            [seq, age, anon, file, ..] => {
                let num = |s: &str| {
                    s.trim_end_matches(|c: char| !c.is_ascii_digit())
                        .parse::<u64>()
                };
                if let (Ok(seq), Ok(age_ms), Ok(a), Ok(fl)) =
                    (num(seq), num(age), num(anon), num(file))
                {
                    out.push((
                        path.clone(),
                        GenLine {
                            memcg_id: id,
                            node,
                            seq,
                            age_ms,
                            pages: a + fl,
                        },
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

impl LruGenAge {
    pub fn new(p: &mut Params) -> Result<Self, String> {
        let age_s = p.f64("age", 120.0, 0.0)?;
        let interval_s = p.f64("interval", age_s / 2.0, 0.001)?;
        Ok(LruGenAge {
            cgroup: p.cgroup()?,
            age_ms: (age_s * 1000.0) as u64,
            interval_ns: (interval_s * 1e9) as u64,
        })
    }
}

impl Agent for LruGenAge {
    fn first_wake(&self) -> u64 {
        self.interval_ns
    }

    fn wake(&mut self, sys: &mut dyn AgentSys, now: u64, log: &mut AgentLog) -> Option<u64> {
        let managed = managed_cgroups(sys, &self.cgroup, true);
        let text = sys.lru_gen_read()?;
        let gens = parse_lru_gen(&text);
        // Age: one new generation per memcg and node.
        let mut tops: Vec<(u64, u64, u64)> = Vec::new();
        for (path, g) in &gens {
            if !managed.contains(path) {
                continue;
            }
            match tops.iter_mut().find(|t| (t.0, t.1) == (g.memcg_id, g.node)) {
                Some(t) => t.2 = t.2.max(g.seq),
                None => tops.push((g.memcg_id, g.node, g.seq)),
            }
        }
        for &(id, node, max_seq) in &tops {
            log.lru_gen_writes += 1;
            if sys
                .lru_gen_write(&format!("+ {id} {node} {max_seq}"))
                .is_err()
            {
                log.errors += 1;
            }
        }
        // Evict what is older than the age.
        let text = sys.lru_gen_read()?;
        let gens = parse_lru_gen(&text);
        for &(id, node, _) in &tops {
            let mine: Vec<&GenLine> = gens
                .iter()
                .map(|(_, g)| g)
                .filter(|g| (g.memcg_id, g.node) == (id, node))
                .collect();
            let Some(max_seq) = mine.iter().map(|g| g.seq).max() else {
                continue;
            };
            let Some(oldest_cold) = mine
                .iter()
                .filter(|g| g.age_ms >= self.age_ms && g.seq + MIN_NR_GENS <= max_seq)
                .map(|g| g.seq)
                .max()
            else {
                continue;
            };
            let pages: u64 = mine
                .iter()
                .filter(|g| g.seq <= oldest_cold)
                .map(|g| g.pages)
                .sum();
            if pages == 0 {
                continue;
            }
            log.lru_gen_writes += 1;
            log.reclaim_requests += 1;
            log.reclaim_requested_bytes += pages * 4096;
            if sys
                .lru_gen_write(&format!("- {id} {node} {oldest_cold}"))
                .is_err()
            {
                log.errors += 1;
            }
        }
        Some(now + self.interval_ns)
    }
}
