//! The lru_gen debugfs interface (`lru_gen_seq_show`, `lru_gen_seq_write`, `run_cmd`):
//! `lru_gen` and `lru_gen_full` in the kernel's format, and the `+` (aging) and `-` (eviction)
//! commands with the kernel's parsing, validation and errors, per era:
//!
//! * 6.1 (Era A): memcg ids are css ids printed `%5hu`; tier lines mark the youngest generation
//!   `RT ` and others blank; six mm-walk statistics `LOYNFA`, blank marks off the youngest
//!   generation; swappiness 0..=200 as a number.
//! * 6.12 (Era B): as 6.1, but unused tier columns are marked `xxx`, the youngest `RTx`, and four
//!   mm-walk statistics `TYFA` (`xxxx` off the youngest generation).
//! * 7.1/7.2 (Era C): memcg ids are cgroup ids printed `%llu`; `protected` is indexed by tier
//!   (not tier - 1); the short file starts at the evictable min_seq of both types; swappiness
//!   is a word of up to four characters, `max` (anon only) or a number (`kstrtouint`, base
//!   0) up to 201; aging answers EEXIST when no generation was made; the scan_control is
//!   proactive and targets the memcg.

use super::walk::{
    MM_LEAF_OLD, MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_ADDED, MM_NONLEAF_FOUND, MM_NONLEAF_TOTAL,
};
use super::{gen_of, Lruvec, Mglru, ANON, FILE};
use crate::behaviour::{Behaviour, Behaviours};
use crate::consts::*;
use crate::machine::vmscan::ScanControl;
use crate::machine::Machine;
use std::fmt::Write;

/// The kernel's memcg id of a model memcg (the root is 1 in every era: the first css id in
/// 6.1/6.12, the cgroup id of the root in 7.x; the model numbers the others in creation order).
pub fn memcg_id(memcg: u16) -> u64 {
    memcg as u64 + 1
}

/// Milliseconds since a generation's birth: `jiffies_to_msecs(jiffies - birth)`, whole jiffies
/// times 1000 / HZ, as the kernel's `unsigned int`. The kernel's births are never in the
/// future; the model's can be, by the length of a step: a task's operation runs its own clock
/// past the event time at which a reader (a sample between events) shows the file. Such a
/// generation is shown 0 ms old, not as a wrapped negative age (4294967268 ms).
fn age_ms(now: u64, birth: u64) -> u32 {
    let jiffies = (now / NS_PER_JIFFY).saturating_sub(birth / NS_PER_JIFFY);
    (1000 / HZ).wrapping_mul(jiffies) as u32
}

/// `lru_gen_seq_show` for every memcg (pre-order) and node.
pub fn show(p: &Mglru, m: &Machine, full: bool) -> String {
    let mut out = String::new();
    for memcg in m.memcg_subtree(0) {
        for node in 0..p.nodes as u8 {
            if node == 0 {
                let path = &m.memcgs[memcg as usize].path;
                if p.has(Behaviour::DebugfsMemcgId) {
                    let _ = writeln!(out, "memcg {} {}", memcg_id(memcg), path);
                } else {
                    // `%5hu` of the css id (an unsigned short)
                    let _ = writeln!(out, "memcg {:5} {}", memcg_id(memcg) as u16, path);
                }
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
        if max_seq >= MAX_NR_GENS {
            max_seq - MAX_NR_GENS + 1
        } else {
            0
        }
    } else if p.has(Behaviour::IndependentMinSeq) {
        // evictable_min_seq(min_seq, MAX_SWAPPINESS / 2): both types
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

/// `lru_gen_seq_show_full` (NR_HIST_GENS = 1): four tier lines and the mm-walk statistics line.
fn show_full(p: &Mglru, out: &mut String, lv: usize, seq: u64) {
    let g = &p.lruvecs[lv];
    let stats4 = p.has(Behaviour::DebugfsMmWalkStats);
    for tier in 0..MAX_NR_TIERS {
        let _ = write!(out, "            {:10}", tier);
        for t in 0..2 {
            let (marks, n) = if seq == g.max_seq {
                let marks = if stats4 { "RTx" } else { "RT " };
                (marks, [g.avg_refaulted[t][tier], g.avg_total[t][tier], 0])
            } else if seq == g.min_seq[t] {
                // Era A/B keep no tier-0 protected count: protected[tier - 1].
                let protected = if p.has(Behaviour::ProtectedAtTier) {
                    g.protected[t][tier]
                } else if tier > 0 {
                    g.protected[t][tier - 1]
                } else {
                    0
                };
                ("rep", [g.refaulted[t][tier], g.evicted[t][tier], protected])
            } else if !stats4 {
                ("   ", [0, 0, 0])
            } else {
                ("xxx", [0, 0, 0])
            };
            for (i, mark) in marks.chars().enumerate() {
                let _ = write!(out, " {:10}{}", n[i], mark);
            }
        }
        out.push('\n');
    }
    out.push_str("                      ");
    let st = &g.mm.stats;
    // (marks of the youngest generation, marks of the others, the statistics in enum order)
    let (marks, other, vals): (&str, &str, &[u64]) = if !stats4 {
        (
            "LOYNFA",
            "      ",
            &[
                st[MM_LEAF_TOTAL],
                st[MM_LEAF_OLD],
                st[MM_LEAF_YOUNG],
                st[MM_NONLEAF_TOTAL],
                st[MM_NONLEAF_FOUND],
                st[MM_NONLEAF_ADDED],
            ],
        )
    } else {
        (
            "TYFA",
            "xxxx",
            &[
                st[MM_LEAF_TOTAL],
                st[MM_LEAF_YOUNG],
                st[MM_NONLEAF_FOUND],
                st[MM_NONLEAF_ADDED],
            ],
        )
    };
    let young = seq == g.max_seq;
    let marks = if young { marks } else { other };
    for (i, mark) in marks.chars().enumerate() {
        let n = if young { vals[i] } else { 0 };
        let _ = write!(out, " {:10}{}", n, mark);
    }
    out.push('\n');
}

// ------------------------------------------------------------------------------- parsing

/// The kernel's `isspace` (lib/ctype.c: ASCII white space and the Latin-1 no-break space).
fn isspace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0)
}

/// `skip_spaces` from index `i`.
fn skip_spaces(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && isspace(s[i]) {
        i += 1;
    }
    i
}

/// `_parse_integer_limit` without a limit: digits of `base` from the start of `s`; the value
/// saturates at u64::MAX on overflow. Returns (value, characters consumed, overflowed).
fn parse_integer(s: &[u8], base: u32) -> (u64, usize, bool) {
    let (mut v, mut n, mut overflow) = (0u64, 0, false);
    while let Some(d) = s.get(n).and_then(|&c| (c as char).to_digit(16)) {
        if d >= base {
            break;
        }
        match v
            .checked_mul(base as u64)
            .and_then(|x| x.checked_add(d as u64))
        {
            Some(x) if !overflow => v = x,
            _ => {
                v = u64::MAX;
                overflow = true;
            }
        }
        n += 1;
    }
    (v, n, overflow)
}

/// `kstrtouint(s, 0, ...)`: an optional '+', a 0x (hex) or 0 (octal) prefix, at least one
/// digit, an optional trailing newline and nothing else.
fn kstrtouint(s: &[u8]) -> Result<u32, &'static str> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let lower = |i: usize| s.get(i).map_or(0, |c| c.to_ascii_lowercase());
    let (base, s) = if s.first() == Some(&b'0') {
        if lower(1) == b'x' && s.get(2).is_some_and(|c| c.is_ascii_hexdigit()) {
            (16, &s[2..])
        } else {
            (8, s)
        }
    } else {
        (10, s)
    };
    let (v, n, overflow) = parse_integer(s, base);
    if overflow {
        return Err("ERANGE");
    }
    if n == 0 {
        return Err("EINVAL");
    }
    let rest = &s[n..];
    if !rest.is_empty() && rest != b"\n" {
        return Err("EINVAL");
    }
    u32::try_from(v).map_err(|_| "ERANGE")
}

/// One value assigned by [`vsscanf`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scanned {
    Char(u8),
    Num(u64),
    Str(Vec<u8>),
    /// `%n`: characters consumed so far.
    Pos(usize),
}

/// The part of the kernel's `vsscanf` that lru_gen_seq_write's formats use: white space in the
/// format matches any amount of white space (including none); `%c` takes one character
/// as is; `%u`, `%lu`, `%llu` skip white space and need a decimal digit (no sign), saturating
/// on overflow (the caller truncates to the destination type); `%Ns` skips white space and
/// takes up to N non-space characters; `%n` records the position and is not counted.
/// Returns the number of conversions and the values assigned, in format order (a prefix:
/// scanning stops at the first failure).
fn vsscanf(buf: &[u8], fmt: &[u8]) -> (usize, Vec<Scanned>) {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let (mut f, mut s, mut num) = (0, 0, 0);
    let mut out = Vec::new();
    while at(fmt, f) != 0 {
        if isspace(at(fmt, f)) {
            f = skip_spaces(fmt, f + 1);
            s = skip_spaces(buf, s);
        }
        if at(fmt, f) != b'%' && at(fmt, f) != 0 {
            if at(fmt, f) != at(buf, s) {
                break;
            }
            f += 1;
            s += 1;
            continue;
        }
        if at(fmt, f) == 0 {
            break;
        }
        f += 1;
        let mut width = None;
        while at(fmt, f).is_ascii_digit() {
            width = Some(width.unwrap_or(0) * 10 + (at(fmt, f) - b'0') as usize);
            f += 1;
        }
        while at(fmt, f) == b'l' {
            f += 1;
        }
        if at(fmt, f) == b'n' {
            out.push(Scanned::Pos(s));
            f += 1;
            continue;
        }
        if at(buf, s) == 0 {
            break;
        }
        let conv = at(fmt, f);
        f += 1;
        match conv {
            b'c' => {
                out.push(Scanned::Char(buf[s]));
                s += 1;
            }
            b's' => {
                s = skip_spaces(buf, s);
                let start = s;
                let mut left = width.unwrap_or(i16::MAX as usize);
                while at(buf, s) != 0 && !isspace(at(buf, s)) && left > 0 {
                    s += 1;
                    left -= 1;
                }
                out.push(Scanned::Str(buf[start..s].to_vec()));
            }
            b'u' => {
                s = skip_spaces(buf, s);
                if !at(buf, s).is_ascii_digit() {
                    break;
                }
                let (v, n, _) = parse_integer(&buf[s..], 10);
                s += n;
                out.push(Scanned::Num(v));
            }
            _ => break,
        }
        num += 1;
    }
    (num, out)
}

/// One parsed command.
#[derive(Debug, PartialEq, Eq)]
struct Cmd {
    op: u8,
    /// `%u` (css id) in 6.1/6.12, `%llu` (cgroup id) in 7.x.
    memcg_id: u64,
    nid: u32,
    seq: u64,
    /// None = the memcg's default (`get_swappiness`).
    swappiness: Option<u32>,
    /// force_scan for `+` (non-zero = true), nr_to_reclaim for `-`; `-1` when absent.
    opt: u64,
}

/// The sscanf of `lru_gen_seq_write`: `"%c %u %u %lu %n %u %n %lu %n"` (6.1, 6.12) or
/// `"%c %llu %u %lu %n %4s %n %lu %n"` (7.x), at least four conversions and nothing left
/// over; 7.x then reads the swappiness word as `max` or with `kstrtouint`.
fn parse(b: Behaviours, item: &[u8]) -> Result<Cmd, &'static str> {
    let c = b.has(Behaviour::DebugfsMemcgId);
    let fmt: &[u8] = if c {
        b"%c %llu %u %lu %n %4s %n %lu %n"
    } else {
        b"%c %u %u %lu %n %u %n %lu %n"
    };
    let (n, v) = vsscanf(item, fmt);
    let end = v.iter().rev().find_map(|x| match x {
        Scanned::Pos(p) => Some(*p),
        _ => None,
    });
    if n < 4 || end.is_none_or(|e| e < item.len()) {
        return Err("EINVAL");
    }
    let num = |i: usize| match v.get(i) {
        Some(Scanned::Num(x)) => *x,
        _ => 0,
    };
    let op = match v[0] {
        Scanned::Char(ch) => ch,
        _ => 0,
    };
    let memcg_id = if c { num(1) } else { num(1) as u32 as u64 };
    let swappiness = if n == 4 {
        None
    } else if c {
        match &v[5] {
            Scanned::Str(w) if w == b"max" => Some(SWAPPINESS_ANON_ONLY),
            Scanned::Str(w) => Some(kstrtouint(w)?),
            _ => None,
        }
    } else {
        // an unsigned int handed to run_cmd's int: "negative" means the default
        let s = num(5) as u32 as i32;
        (s >= 0).then_some(s as u32)
    };
    Ok(Cmd {
        op,
        memcg_id,
        nid: num(2) as u32,
        seq: num(3),
        swappiness,
        opt: if n >= 6 { num(7) } else { u64::MAX },
    })
}

/// The scan_control of `lru_gen_seq_write`: may write, unmap and swap, all zones, priority
/// 0, no reclaim target. 7.x also sets `proactive` (and run_cmd the target memcg). Every
/// era's write allocates an mm walker (`set_mm_walk`), hence `mm_walker`. `proactive` is set
/// in every era; in 6.1 nothing the model does with it differs for a debugfs write.
fn debugfs_sc() -> ScanControl {
    let mut sc = ScanControl::new(0, None);
    sc.priority = 0;
    sc.proactive = true;
    sc.mm_walker = true;
    sc
}

/// `lru_gen_seq_write`: items split on ',', ';' and newlines, leading white space skipped,
/// empty items ignored; the first failing item's error stops processing (earlier items have
/// taken effect). The result starts as EINVAL, so a write without any command fails.
pub fn write(p: &mut Mglru, m: &mut Machine, input: &str) -> Result<(), &'static str> {
    let mut sc = debugfs_sc();
    let mut err = Err("EINVAL");
    for item in items(input) {
        let cmd = parse(p.cfg.switches, item)?;
        err = run_cmd(p, m, &mut sc, &cmd);
        err?;
    }
    err
}

/// The commands of a write: the kernel NUL-terminates its copy (an embedded NUL ends the
/// input), splits it at ',', ';' and newlines and skips leading spaces and empty items.
fn items(input: &str) -> impl Iterator<Item = &[u8]> {
    let buf = input.as_bytes();
    let buf = &buf[..buf.iter().position(|&b| b == 0).unwrap_or(buf.len())];
    buf.split(|&b| matches!(b, b',' | b';' | b'\n'))
        .map(|item| &item[skip_spaces(item, 0)..])
        .filter(|item| !item.is_empty())
}

/// Whether a write would get past `lru_gen_seq_write`'s parsing in a kernel with `b` (an
/// input without any command is EINVAL, as there).
pub fn check_syntax(b: Behaviours, input: &str) -> Result<(), &'static str> {
    let mut any = false;
    for item in items(input) {
        parse(b, item)?;
        any = true;
    }
    if any {
        Ok(())
    } else {
        Err("EINVAL")
    }
}

/// `run_cmd`: validate the node and memcg and the swappiness, then age (`run_aging`) or
/// evict (`run_eviction`). Every validation failure is EINVAL.
fn run_cmd(
    p: &mut Mglru,
    m: &mut Machine,
    sc: &mut ScanControl,
    cmd: &Cmd,
) -> Result<(), &'static str> {
    if (cmd.nid as i32) < 0 || cmd.nid as usize >= p.nodes {
        return Err("EINVAL");
    }
    // mem_cgroup_from_id / mem_cgroup_get_from_id, then `memcg_id == mem_cgroup_id(memcg)`
    let memcg = cmd
        .memcg_id
        .checked_sub(1)
        .filter(|&i| i < m.memcgs.len() as u64 && m.memcgs[i as usize].online)
        .ok_or("EINVAL")? as u16;
    let node = cmd.nid as u8;
    if p.has(Behaviour::DebugfsCmdTargetsMemcg) {
        sc.target_mem_cgroup = Some(memcg);
    }
    let limit = if p.has(Behaviour::SwappinessAnonOnly) {
        SWAPPINESS_ANON_ONLY
    } else {
        MAX_SWAPPINESS
    };
    let swappiness = match cmd.swappiness {
        None => p.get_swappiness(m, sc),
        Some(s) if s > limit => return Err("EINVAL"),
        Some(s) => s,
    };
    let lruvec = p.lruvec_of(memcg, node);
    match cmd.op {
        b'+' => run_aging(p, m, memcg, node, cmd.seq, swappiness, cmd.opt != 0),
        b'-' => run_eviction(p, m, lruvec, sc, cmd.seq, swappiness, cmd.opt),
        _ => Err("EINVAL"),
    }
}

/// `run_aging`. 6.1/6.12: an older `seq` is a no-op, a newer one EINVAL, and without
/// force_scan a full set of generations (of anon, or of file at swappiness 0) is ERANGE; the
/// result of the attempt is ignored. 7.x: any `seq` up to max_seq tries to age, EEXIST if no
/// generation was made.
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
    p.sync_aging(m, lv);
    let max_seq = p.lruvecs[lv].max_seq;
    if !p.has(Behaviour::DebugfsCmdTargetsMemcg) {
        if seq < max_seq {
            return Ok(());
        }
        if seq > max_seq {
            return Err("EINVAL");
        }
        let t = if swappiness != 0 { ANON } else { FILE };
        if !force_scan && p.lruvecs[lv].min_seq[t] + MAX_NR_GENS - 1 <= max_seq {
            return Err("ERANGE");
        }
        p.try_to_inc_max_seq(m, lv, max_seq, swappiness, force_scan);
        // The writer walked the whole iteration itself: the generation exists on return.
        p.sync_aging(m, lv);
        return Ok(());
    }
    if seq > max_seq {
        return Err("EINVAL");
    }
    let made = p.try_to_inc_max_seq(m, lv, max_seq, swappiness, force_scan);
    p.sync_aging(m, lv);
    if made {
        Ok(())
    } else {
        Err("EEXIST")
    }
}

/// `run_eviction`: evict generations up to `seq`, until `nr_to_reclaim` pages are reclaimed
/// or a batch scans nothing. Each batch is `evict_folios` with MAX_LRU_BATCH folios in
/// 6.1/6.12 (the budget was internal then) and with the remaining target (at most
/// MAX_LRU_BATCH) in 7.x.
fn run_eviction(
    p: &mut Mglru,
    m: &mut Machine,
    lruvec: Lruvec,
    sc: &mut ScanControl,
    seq: u64,
    swappiness: u32,
    nr_to_reclaim: u64,
) -> Result<(), &'static str> {
    let lv = lruvec.idx;
    p.sync_aging(m, lv);
    // unsigned long arithmetic
    if seq.wrapping_add(MIN_NR_GENS) > p.lruvecs[lv].max_seq {
        return Err("EINVAL");
    }
    sc.nr_reclaimed = 0;
    loop {
        let min = if p.has(Behaviour::IndependentMinSeq) {
            p.evictable_min_seq(lv, swappiness)
        } else {
            p.lruvecs[lv].min_seq[(swappiness == 0) as usize]
        };
        if seq < min || sc.nr_reclaimed >= nr_to_reclaim {
            return Ok(());
        }
        let batch = if p.has(Behaviour::EvictNrToScanBound) {
            (nr_to_reclaim - sc.nr_reclaimed).min(MAX_LRU_BATCH)
        } else {
            MAX_LRU_BATCH
        };
        if p.evict_folios(m, lruvec, sc, swappiness, batch) == 0 {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::MglruConfig;
    use super::*;
    use crate::machine::MachineConfig;

    fn setup(kernel: Kernel) -> (Machine, Mglru) {
        let mut cfg = MachineConfig::simple(4096);
        cfg.kernel = kernel;
        let m = Machine::new(cfg).expect("valid machine");
        let p = Mglru::new(&m, MglruConfig::new(kernel));
        (m, p)
    }

    fn field(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    #[test]
    fn age_is_in_whole_jiffies() {
        assert_eq!(age_ms(10 * NS_PER_JIFFY + 1, 0), 40);
        assert_eq!(age_ms(NS_PER_JIFFY - 1, 0), 0);
        // A birth after the reader's time (a step's own clock ran ahead) is 0 ms, not -28 ms
        // wrapped to 4294967268.
        assert_eq!(age_ms(100 * NS_PER_JIFFY, 107 * NS_PER_JIFFY), 0);
    }

    #[test]
    fn vsscanf_follows_the_kernel() {
        use Scanned::*;
        let fmt = b"%c %u %u %lu %n %u %n %lu %n";
        // no white space needed after the command character
        let (n, v) = vsscanf(b"+1 0 3", fmt);
        assert_eq!(n, 4);
        assert_eq!(v, vec![Char(b'+'), Num(1), Num(0), Num(3), Pos(6)]);
        // unsigned conversions take no sign
        assert_eq!(vsscanf(b"+ -1 0 3", fmt).0, 1);
        assert_eq!(vsscanf(b"+ +1 0 3", fmt).0, 1);
        // overflow saturates
        assert_eq!(
            vsscanf(b"- 1 0 99999999999999999999999", fmt).1[3],
            Num(u64::MAX)
        );
        // %4s stops after four characters; the rest feeds the next conversion
        let (n, v) = vsscanf(b"- 1 0 3 10000", b"%c %llu %u %lu %n %4s %n %lu %n");
        assert_eq!(n, 6);
        assert_eq!(v[5], Str(field("1000")));
        assert_eq!(v[7], Num(0));
    }

    #[test]
    fn kstrtouint_base_0() {
        assert_eq!(kstrtouint(b"100"), Ok(100));
        assert_eq!(kstrtouint(b"+5"), Ok(5));
        assert_eq!(kstrtouint(b"0x1f"), Ok(31));
        assert_eq!(kstrtouint(b"010"), Ok(8));
        assert_eq!(kstrtouint(b"0"), Ok(0));
        assert_eq!(kstrtouint(b"08"), Err("EINVAL"));
        assert_eq!(kstrtouint(b"0x"), Err("EINVAL"));
        assert_eq!(kstrtouint(b"-1"), Err("EINVAL"));
        assert_eq!(kstrtouint(b"abc"), Err("EINVAL"));
        assert_eq!(kstrtouint(b"4294967296"), Err("ERANGE"));
    }

    #[test]
    fn parse_per_era() {
        for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1] {
            let era = kernel.behaviours();
            let c = era.has(Behaviour::DebugfsMemcgId);
            let cmd = parse(era, b"+ 1 0 3").unwrap();
            assert_eq!((cmd.op, cmd.memcg_id, cmd.nid, cmd.seq), (b'+', 1, 0, 3));
            assert_eq!((cmd.swappiness, cmd.opt), (None, u64::MAX));
            let cmd = parse(era, b"-1 0 3 60 4096   ").unwrap();
            assert_eq!((cmd.op, cmd.swappiness, cmd.opt), (b'-', Some(60), 4096));
            for bad in [
                "+ 1 0",
                "+ 1 0 3x",
                "+ 1 0 -3",
                "- 1 0 3 60 -1",
                "- 1 0 3 60 64 7",
                "- 1 0 3 60 64x",
            ] {
                assert_eq!(parse(era, bad.as_bytes()), Err("EINVAL"), "{kernel} {bad}");
            }
            // "max" exists from 7.x on; a word after a number is left over before that
            let max = parse(era, b"- 1 0 3 max");
            assert_eq!(
                max.map(|c| c.swappiness),
                if c { Ok(Some(201)) } else { Err("EINVAL") }
            );
            // 7.x reads the swappiness with kstrtouint (base 0)
            let hex = parse(era, b"- 1 0 3 0x10");
            assert_eq!(
                hex.map(|c| c.swappiness),
                if c { Ok(Some(16)) } else { Err("EINVAL") }
            );
        }
        // 6.x: an unsigned int -1 is the default swappiness
        assert_eq!(
            parse(Kernel::V6_12.behaviours(), b"- 1 0 3 4294967295")
                .unwrap()
                .swappiness,
            None
        );
        assert_eq!(
            parse(Kernel::V7_1.behaviours(), b"- 1 0 3 abc"),
            Err("EINVAL")
        );
    }

    #[test]
    fn show_formats_per_era() {
        let zeros = |n: usize, mark: char| format!(" {:10}{}", 0, mark).repeat(n);
        for kernel in Kernel::ALL {
            let b = kernel.behaviours();
            let (m, mut p) = setup(kernel);
            let short = show(&p, &m, false);
            let full = show(&p, &m, true);
            let lines: Vec<&str> = full.lines().collect();
            let header = if b.has(Behaviour::DebugfsMemcgId) {
                "memcg 1 /"
            } else {
                "memcg     1 /"
            };
            assert_eq!(lines[0], header, "{kernel}");
            assert_eq!(lines[1], " node     0");
            // fresh lruvec: max_seq 3, min_seq 0: four generations, each with four tier
            // lines and an mm line
            assert_eq!(lines.len(), 2 + 4 * 6, "{kernel}");
            assert_eq!(lines[2], format!(" {:10} {:10}{}", 0, 0, zeros(2, ' ')));
            // seq 1 is neither min_seq nor max_seq
            let blank = if !b.has(Behaviour::DebugfsMmWalkStats) {
                ' '
            } else {
                'x'
            };
            assert_eq!(
                lines[2 + 6 + 1],
                format!("            {:10}{}", 0, zeros(6, blank)),
                "{kernel}"
            );
            let mm = if !b.has(Behaviour::DebugfsMmWalkStats) {
                zeros(6, ' ')
            } else {
                zeros(4, 'x')
            };
            assert_eq!(lines[2 + 6 + 5], format!("{}{}", " ".repeat(22), mm));
            // max_seq: RT marks, and the mm statistics
            let rt = if !b.has(Behaviour::DebugfsMmWalkStats) {
                "RT "
            } else {
                "RTx"
            };
            let tier0 = lines[2 + 18 + 1];
            let marks: String = tier0.chars().filter(|c| c.is_alphabetic()).collect();
            assert_eq!(marks, format!("{rt}{rt}").replace(' ', ""), "{kernel}");
            assert_eq!(tier0.len(), 12 + 10 + 6 * 12);
            let mm: String = lines[2 + 18 + 5]
                .chars()
                .filter(|c| c.is_alphabetic())
                .collect();
            assert_eq!(
                mm,
                if !b.has(Behaviour::DebugfsMmWalkStats) {
                    "LOYNFA"
                } else {
                    "TYFA"
                }
            );
            // min_seq: rep
            let tier1 = lines[2 + 2];
            assert_eq!(tier1.matches("r").count(), 2);
            assert_eq!(tier1.matches('p').count(), 2);
            // the short file starts at min_seq[anon] (6.x) or the smaller min_seq (7.x)
            assert_eq!(short.lines().count(), 2 + 4);
            p.lruvecs[0].min_seq = [1, 0];
            let short = show(&p, &m, false);
            let n = if b.has(Behaviour::IndependentMinSeq) {
                4
            } else {
                3
            };
            assert_eq!(short.lines().count(), 2 + n, "{kernel}");
        }
    }

    #[test]
    fn protected_columns_per_era() {
        for kernel in [Kernel::V6_12, Kernel::V7_2] {
            let (m, mut p) = setup(kernel);
            p.lruvecs[0].protected[FILE] = [11, 22, 33, 44];
            let full = show(&p, &m, true);
            let lines: Vec<&str> = full.lines().collect();
            // min_seq = 0: generation 0's tier lines; the third file column is protected
            let col = |tier: usize| -> u64 {
                let l = lines[3 + tier];
                l[12 + 10 + 5 * 12..12 + 10 + 5 * 12 + 11]
                    .trim()
                    .parse()
                    .unwrap()
            };
            let want: [u64; 4] = if kernel == Kernel::V7_2 {
                [11, 22, 33, 44]
            } else {
                [0, 11, 22, 33]
            };
            assert_eq!([col(0), col(1), col(2), col(3)], want, "{kernel}");
        }
    }

    #[test]
    fn write_validation_per_era() {
        for kernel in Kernel::ALL {
            let c = kernel.behaviours().has(Behaviour::DebugfsCmdTargetsMemcg);
            let (mut m, mut p) = setup(kernel);
            if !c {
                // a fresh lruvec has four generations: ERANGE without force_scan (which
                // defaults to on: opt is -1)
                assert_eq!(write(&mut p, &mut m, "+ 1 0 3 100 0"), Err("ERANGE"));
                assert_eq!(write(&mut p, &mut m, "+ 1 0 3 0 0"), Err("ERANGE"));
                // earlier items take effect before a later one fails
                assert_eq!(
                    write(&mut p, &mut m, "+ 1 0 3 100 1; + 9 0 0"),
                    Err("EINVAL")
                );
                assert_eq!(p.lruvecs[0].max_seq, 4, "{kernel}");
                let (m2, p2) = setup(kernel);
                (m, p) = (m2, p2);
            }
            // nothing to do is EINVAL: the result starts as -EINVAL
            assert_eq!(write(&mut p, &mut m, ""), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, " \n;,"), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, "+ 2 0 3"), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, "+ 1 1 3"), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, "+ 1 0 4"), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, "* 1 0 0"), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, "- 1 0 2"), Err("EINVAL"));
            assert_eq!(write(&mut p, &mut m, "- 1 0 0 202"), Err("EINVAL"));
            let r201 = write(&mut p, &mut m, "- 1 0 0 201");
            assert_eq!(r201, if c { Ok(()) } else { Err("EINVAL") }, "{kernel}");
            assert_eq!(write(&mut p, &mut m, "- 1 0 0 200\n"), Ok(()));
            // aging an older generation: a no-op in 6.x, aging in 7.x
            assert_eq!(write(&mut p, &mut m, "+ 1 0 2"), Ok(()));
            assert_eq!(p.lruvecs[0].max_seq, if c { 4 } else { 3 }, "{kernel}");
        }
    }
}
