//! The lru_gen debugfs interface (`lru_gen_seq_show`, `lru_gen_seq_write`, `run_cmd`):
//! `lru_gen` and `lru_gen_full` in the kernel's format, and the `+` (aging) and `-` (eviction)
//! commands with the kernel's validation and errors.

use super::walk::{
    MM_LEAF_OLD, MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_ADDED, MM_NONLEAF_FOUND, MM_NONLEAF_TOTAL,
};
use super::{gen_of, Mglru, MglruEra, ANON, FILE};
use crate::consts::*;
use crate::machine::vmscan::ScanControl;
use crate::machine::Machine;
use std::fmt::Write;

/// The kernel's memcg id of a model memcg (ids start at 1 for the root).
pub fn memcg_id(memcg: u16) -> u64 {
    memcg as u64 + 1
}

/// Milliseconds since a generation's birth, in jiffies (`jiffies_to_msecs`).
fn age_ms(now: u64, birth: u64) -> u64 {
    (now / NS_PER_JIFFY).saturating_sub(birth / NS_PER_JIFFY) * (1000 / HZ)
}

/// `lru_gen_seq_show` for every memcg (pre-order) and node.
pub fn show(p: &Mglru, m: &Machine, full: bool) -> String {
    let mut out = String::new();
    for memcg in m.memcg_subtree(0) {
        for node in 0..p.nodes as u8 {
            if node == 0 {
                let _ = writeln!(
                    out,
                    "memcg {:5} {}",
                    memcg_id(memcg),
                    m.memcgs[memcg as usize].path
                );
            }
            let _ = writeln!(out, " node {:5}", node);
            show_lruvec(p, m, &mut out, p.lv(memcg, node), full);
        }
    }
    out
}

fn show_lruvec(p: &Mglru, m: &Machine, out: &mut String, lv: usize, full: bool) {
    let g = &p.lruvecs[lv];
    let max_seq = g.max_seq;
    let start = if full {
        (max_seq + 1).saturating_sub(MAX_NR_GENS)
    } else if p.era == MglruEra::C {
        g.min_seq[ANON].min(g.min_seq[FILE])
    } else {
        g.min_seq[ANON]
    };
    let now = m.now();
    for seq in start..=max_seq {
        let gen = gen_of(seq) as usize;
        let _ = write!(out, " {:10} {:10}", seq, age_ms(now, g.timestamps[gen]));
        for t in 0..2 {
            let mark = if full && seq < g.min_seq[t] { 'x' } else { ' ' };
            let _ = write!(out, " {:10}{}", g.nr_pages[gen][t].max(0), mark);
        }
        out.push('\n');
        if full {
            show_full(p, out, lv, seq);
        }
    }
}

/// `lru_gen_seq_show_full`: four tier lines and the mm-walk statistics line.
fn show_full(p: &Mglru, out: &mut String, lv: usize, seq: u64) {
    let g = &p.lruvecs[lv];
    let c = p.era == MglruEra::C;
    for tier in 0..MAX_NR_TIERS {
        let _ = write!(out, "            {:10}", tier);
        for t in 0..2 {
            let (marks, n) = if seq == g.max_seq {
                ("RTx", [g.avg_refaulted[t][tier], g.avg_total[t][tier], 0])
            } else if seq == g.min_seq[t] {
                let protected = if c {
                    g.protected[t][tier]
                } else if tier > 0 {
                    g.protected[t][tier - 1]
                } else {
                    0
                };
                ("rep", [g.refaulted[t][tier], g.evicted[t][tier], protected])
            } else if c {
                ("xxx", [0, 0, 0])
            } else {
                ("   ", [0, 0, 0])
            };
            for (i, mark) in marks.chars().enumerate() {
                let _ = write!(out, " {:10}{}", n[i], mark);
            }
        }
        out.push('\n');
    }
    out.push_str("                      ");
    let st = &g.mm.stats;
    let (marks, vals): (&str, Vec<u64>) = if c {
        (
            "TYFA",
            vec![
                st[MM_LEAF_TOTAL],
                st[MM_LEAF_YOUNG],
                st[MM_NONLEAF_FOUND],
                st[MM_NONLEAF_ADDED],
            ],
        )
    } else {
        (
            "LOYNFA",
            vec![
                st[MM_LEAF_TOTAL],
                st[MM_LEAF_OLD],
                st[MM_LEAF_YOUNG],
                st[MM_NONLEAF_TOTAL],
                st[MM_NONLEAF_FOUND],
                st[MM_NONLEAF_ADDED],
            ],
        )
    };
    for (i, mark) in marks.chars().enumerate() {
        if seq == g.max_seq {
            let _ = write!(out, " {:10}{}", vals[i], mark);
        } else {
            let _ = write!(out, " {:10}x", 0);
        }
    }
    out.push('\n');
}

/// `lru_gen_seq_write`: items split on ',', ';' and newlines; the first failing item's error
/// is returned and stops processing.
pub fn write(p: &mut Mglru, m: &mut Machine, input: &str) -> Result<(), &'static str> {
    for item in input.split([',', ';', '\n']) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        run_cmd(p, m, item)?;
    }
    Ok(())
}

/// One parsed command.
#[derive(Debug, PartialEq, Eq)]
struct Cmd {
    op: char,
    memcg_id: u64,
    node: u64,
    seq: u64,
    /// swappiness (None = default).
    arg4: Option<u32>,
    /// force_scan for `+`, nr_to_reclaim for `-`.
    arg5: Option<i64>,
}

/// `sscanf(cur, "%c %u %d %lu %n %u %n %lu %n", ...)` and the era's swappiness rules.
fn parse(p: &Mglru, item: &str) -> Result<Cmd, &'static str> {
    let fields: Vec<&str> = item.split_whitespace().collect();
    if fields.len() < 4 || fields.len() > 6 {
        return Err("EINVAL");
    }
    let op = match fields[0] {
        "+" => '+',
        "-" => '-',
        _ => return Err("EINVAL"),
    };
    let num = |s: &str| s.parse::<u64>().map_err(|_| "EINVAL");
    let (memcg_id, node, seq) = (num(fields[1])?, num(fields[2])?, num(fields[3])?);
    let arg4 = match fields.get(4) {
        None => None,
        Some(&"max") if p.era == MglruEra::C => Some(SWAPPINESS_ANON_ONLY),
        Some(s) => {
            let v: i64 = s.parse().map_err(|_| "EINVAL")?;
            let limit = if p.era == MglruEra::C {
                SWAPPINESS_ANON_ONLY
            } else {
                MAX_SWAPPINESS
            } as i64;
            if v > limit {
                return Err("EINVAL");
            }
            (v >= 0).then_some(v as u32)
        }
    };
    let arg5 = match fields.get(5) {
        None => None,
        Some(s) => Some(s.parse::<i64>().map_err(|_| "EINVAL")?),
    };
    Ok(Cmd {
        op,
        memcg_id,
        node,
        seq,
        arg4,
        arg5,
    })
}

/// `run_cmd`: validate the memcg and node, then age (`run_aging`) or evict (`run_eviction`).
fn run_cmd(p: &mut Mglru, m: &mut Machine, item: &str) -> Result<(), &'static str> {
    let cmd = parse(p, item)?;
    if cmd.node >= p.nodes as u64 {
        return Err("EINVAL");
    }
    let memcg = cmd.memcg_id.checked_sub(1).ok_or("EINVAL")?;
    if memcg >= m.memcgs.len() as u64 || !m.memcgs[memcg as usize].online {
        return Err("EINVAL");
    }
    let (memcg, node) = (memcg as u16, cmd.node as u8);
    let mut sc = ScanControl::new(u64::MAX, None);
    sc.proactive = true;
    let default_swappiness = p.get_swappiness(m, &sc);
    let swappiness = cmd.arg4.unwrap_or(default_swappiness);
    match cmd.op {
        '+' => run_aging(
            p,
            m,
            memcg,
            node,
            cmd.seq,
            swappiness,
            cmd.arg5.is_none_or(|f| f != 0),
        ),
        _ => run_eviction(p, m, memcg, node, &mut sc, cmd.seq, swappiness, cmd.arg5),
    }
}

/// `run_aging`.
fn run_aging(
    p: &mut Mglru,
    m: &mut Machine,
    memcg: u16,
    node: u8,
    seq: u64,
    swappiness: u32,
    force_scan: bool,
) -> Result<(), &'static str> {
    let lv = p.lv(memcg, node);
    let max_seq = p.lruvecs[lv].max_seq;
    if seq > max_seq {
        return Err("EINVAL");
    }
    if p.era != MglruEra::C {
        if seq < max_seq {
            return Ok(());
        }
        let t = if swappiness != 0 { ANON } else { FILE };
        if !force_scan && p.lruvecs[lv].min_seq[t] + MAX_NR_GENS - 1 <= max_seq {
            return Err("ERANGE");
        }
        p.try_to_inc_max_seq(m, lv, max_seq, swappiness, force_scan, false);
        return Ok(());
    }
    if p.try_to_inc_max_seq(m, lv, max_seq, swappiness, force_scan, false) {
        Ok(())
    } else {
        Err("EEXIST")
    }
}

/// `run_eviction`: evict generations up to `seq`, at most `nr_to_reclaim` pages.
#[allow(clippy::too_many_arguments)]
fn run_eviction(
    p: &mut Mglru,
    m: &mut Machine,
    memcg: u16,
    node: u8,
    sc: &mut ScanControl,
    seq: u64,
    swappiness: u32,
    nr: Option<i64>,
) -> Result<(), &'static str> {
    let lv = p.lv(memcg, node);
    if seq + MIN_NR_GENS > p.lruvecs[lv].max_seq {
        return Err("EINVAL");
    }
    let nr_to_reclaim = match nr {
        Some(n) if n >= 0 => n as u64,
        _ => u64::MAX,
    };
    sc.nr_to_reclaim = nr_to_reclaim;
    sc.nr_reclaimed = 0;
    loop {
        let min = if p.era == MglruEra::C {
            p.evictable_min_seq(lv, swappiness)
        } else {
            p.lruvecs[lv].min_seq[(swappiness == 0) as usize]
        };
        if seq < min || sc.nr_reclaimed >= nr_to_reclaim {
            return Ok(());
        }
        let batch = nr_to_reclaim
            .saturating_sub(sc.nr_reclaimed)
            .min(MAX_LRU_BATCH);
        if p.evict_folios(m, lv, memcg, sc, swappiness, batch) == 0 {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn age_is_in_whole_jiffies() {
        assert_eq!(age_ms(10 * NS_PER_JIFFY + 1, 0), 40);
        assert_eq!(age_ms(NS_PER_JIFFY - 1, 0), 0);
    }
}
