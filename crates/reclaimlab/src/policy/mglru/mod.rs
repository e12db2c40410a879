//! The multi-generational LRU (spec mglru.md and series-2026.md), per kernel era:
//! 6.1 (Era A), 6.12 (Era B), 7.1 (Era C with the Era D items) and 7.2 (7.1 with the 2026
//! series, each patch a [`Switch`]). Lists, generations, tiers, PID control, aging (with the
//! page-table walk in `walk.rs`), eviction and the memcg LRU live here; shrink_folio_list and
//! the reclaim drivers are the machine's.

// Loops over the two types index several per-type arrays at once, as the kernel's do.
#![allow(clippy::needless_range_loop)]

pub mod debugfs;
pub mod switches;
mod v6_1;
pub mod walk;

pub use switches::{Switch, Switches};

use super::{FolioRef, Policy};
use crate::consts::*;
use crate::machine::mm::vm;
use crate::machine::vmscan::{reclaim_throttle, shrink_folio_list, ReclaimStat, ScanControl};
use crate::machine::{pg, Lists, Machine, MemcgWalk, Pfn, Visit, Vm};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ANON: usize = 0;
const FILE: usize = 1;

/// Run-time settings of MGLRU: the kernel, its behaviours, `enabled` and `min_ttl_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MglruConfig {
    /// The kernel the policy is named by (`mglru:7.1`).
    pub kernel: Kernel,
    /// Every behaviour the modelled kernel has ([`crate::behaviour`]): `kernel`'s, with the
    /// policy string's `+name`/`-name` and `--with`/`--without` (switches are behaviours).
    pub switches: Switches,
    /// /sys/kernel/mm/lru_gen/enabled capability bits (0x7 = everything).
    pub enabled: u32,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms.
    pub min_ttl_ms: u64,
    /// How global reclaim walks memcgs: the memcg LRU (default from 6.12), `mem_cgroup_iter`
    /// (6.1's only way) or heat levels.
    pub memcg_walk: MemcgWalk,
}

impl MglruConfig {
    /// The kernel's defaults: every behaviour whose first kernel is at most `kernel`.
    pub fn new(kernel: Kernel) -> Self {
        MglruConfig {
            kernel,
            switches: Behaviours::of(kernel),
            enabled: LRU_GEN_CORE | LRU_GEN_MM_WALK | LRU_GEN_NONLEAF_YOUNG,
            min_ttl_ms: 0,
            memcg_walk: Self::default_memcg_walk(kernel),
        }
    }

    /// The memcg walk a kernel has: 6.1 has no memcg LRU (behaviour `memcg-lru`).
    pub fn default_memcg_walk(kernel: Kernel) -> MemcgWalk {
        if !kernel.behaviours().has(Behaviour::MemcgLru) {
            MemcgWalk::Iter
        } else {
            MemcgWalk::MemcgLru
        }
    }
}

/// Per-(memcg, node) generation state (`struct lru_gen_folio` + `lru_gen_mm_state`).
#[derive(Clone, Debug)]
pub struct GenLruvec {
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    /// Birth time of each generation slot, in ns of simulated time.
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// Pages per generation and type, counted by each folio's gen bits (single zone).
    pub nr_pages: [[i64; 2]; MAX_NR_GENS as usize],
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// NR_HIST_GENS = 1: one history slot.
    pub protected: [[u64; MAX_NR_TIERS]; 2],
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub unevictable: u64,
    /// Memcg-LRU linkage: generation slot and segment (0, HEAD, TAIL).
    pub mgen: usize,
    pub seg: u8,
    /// Page-table walk state (`lru_gen_mm_state`).
    pub mm: walk::MmState,
}

impl GenLruvec {
    /// `lru_gen_init_lruvec`: max_seq = MIN_NR_GENS + 1, min_seq = 0, four empty generations.
    fn new(now: u64) -> Self {
        GenLruvec {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0; 2],
            timestamps: [now; MAX_NR_GENS as usize],
            nr_pages: [[0; 2]; MAX_NR_GENS as usize],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            protected: [[0; MAX_NR_TIERS]; 2],
            evicted: [[0; MAX_NR_TIERS]; 2],
            refaulted: [[0; MAX_NR_TIERS]; 2],
            unevictable: 0,
            mgen: 0,
            seg: 0,
            mm: walk::MmState::new(MIN_NR_GENS),
        }
    }
    /// Number of generations of a type.
    pub fn nr_gens(&self, t: usize) -> u64 {
        self.max_seq - self.min_seq[t] + 1
    }
    /// Pages of a type in generation `seq` (`max(nr_pages, 0)`).
    pub fn pages(&self, seq: u64, t: usize) -> u64 {
        self.nr_pages[(seq % MAX_NR_GENS) as usize][t].max(0) as u64
    }
}

/// `lru_gen_from_seq`.
#[inline]
fn gen_of(seq: u64) -> u8 {
    (seq % MAX_NR_GENS) as u8
}

/// `order_base_2`.
fn order_base_2(n: u64) -> usize {
    if n <= 1 {
        0
    } else {
        (64 - (n - 1).leading_zeros()) as usize
    }
}

/// A PID controller reading (`struct ctrl_pos`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// `positive_ctrl_err`: PV's refault rate is no worse than SP's (scaled by the gains), or PV
/// has too few refaults to matter.
pub fn positive_ctrl_err(sp: CtrlPos, pv: CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv.refaulted as u128 * (sp.total + MIN_LRU_BATCH) as u128 * sp.gain as u128
            <= (sp.refaulted + 1) as u128 * pv.total as u128 * pv.gain as u128
}

/// The memcg-LRU operations (`MEMCG_LRU_HEAD` ... `MEMCG_LRU_YOUNG`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgLruOp {
    None,
    Head,
    Tail,
    Old,
    Young,
}

const SEG_HEAD: u8 = 1;
const SEG_TAIL: u8 = 2;

/// The per-node memcg LRU (`pgdat->memcg_lru`).
#[derive(Clone, Debug)]
struct MemcgLru {
    seq: usize,
    nr_memcgs: [usize; MEMCG_NR_GENS],
    fifo: Vec<Vec<std::collections::VecDeque<u16>>>,
}

impl MemcgLru {
    fn new() -> Self {
        MemcgLru {
            seq: 0,
            nr_memcgs: [0; MEMCG_NR_GENS],
            fifo: vec![vec![Default::default(); MEMCG_NR_BINS]; MEMCG_NR_GENS],
        }
    }
    fn old(&self) -> usize {
        self.seq % MEMCG_NR_GENS
    }
    fn young(&self) -> usize {
        (self.seq + 1) % MEMCG_NR_GENS
    }
}

/// The multi-generational LRU policy.
pub struct Mglru {
    pub cfg: MglruConfig,
    nodes: usize,
    lists: Lists,
    pub lruvecs: Vec<GenLruvec>,
    memcg_lru: Vec<MemcgLru>,
    rng: ChaCha8Rng,
    scratch: Vec<Pfn>,
    clean: Vec<Pfn>,
    moved: Vec<Pfn>,
    /// The type the last `evict_folios` isolated folios of (None if it isolated none).
    evicted_type: Option<usize>,
}

/// What `scan_folios` found.
#[derive(Clone, Copy, Debug, Default)]
struct ScanResult {
    scanned: u64,
    isolated: u64,
}

impl Mglru {
    pub fn new(m: &Machine, cfg: MglruConfig) -> Self {
        let nodes = m.nr_nodes();
        let mut p = Mglru {
            cfg,
            nodes,
            lists: Lists::new(m.folios.len(), 0),
            lruvecs: Vec::new(),
            memcg_lru: (0..nodes).map(|_| MemcgLru::new()).collect(),
            rng: ChaCha8Rng::seed_from_u64(0x006d_676c_7275),
            scratch: Vec::with_capacity(64),
            clean: Vec::with_capacity(64),
            moved: Vec::with_capacity(64),
            evicted_type: None,
        };
        for mc in 0..m.memcgs.len() as u16 {
            p.memcg_created(m, mc);
        }
        p
    }

    #[inline]
    fn lv(&self, memcg: u16, node: u8) -> usize {
        crate::machine::lruvec_index(self.nodes, memcg, node)
    }
    #[inline]
    fn list_id(&self, lv: usize, gen: u8, t: usize) -> u32 {
        ((lv * MAX_NR_GENS as usize + gen as usize) * 2 + t) as u32
    }
    pub fn lruvec(&self, memcg: u16, node: u8) -> &GenLruvec {
        &self.lruvecs[self.lv(memcg, node)]
    }
    /// Whether the modelled kernel has a behaviour ([`crate::behaviour`]).
    #[inline]
    pub(crate) fn has(&self, b: Behaviour) -> bool {
        self.cfg.switches.has(b)
    }

    /// `folio_lru_refs`: 0 without PG_referenced, else counter + 1 (Era C); Era A/B:
    /// counter + PG_workingset.
    fn folio_lru_refs(&self, f: &crate::machine::Folio) -> u64 {
        if self.has(Behaviour::WorkingsetTopTier) {
            if f.test(pg::REFERENCED) {
                f.refs() as u64 + 1
            } else {
                0
            }
        } else {
            f.refs() as u64 + f.test(pg::WORKINGSET) as u64
        }
    }

    /// `lru_tier_from_refs`.
    fn tier_of(&self, refs: u64, ws: bool) -> usize {
        if self.has(Behaviour::WorkingsetTopTier) {
            if ws {
                MAX_NR_TIERS - 1
            } else {
                order_base_2(refs)
            }
        } else {
            order_base_2(refs + 1)
        }
    }

    fn folio_tier(&self, f: &crate::machine::Folio) -> usize {
        self.tier_of(self.folio_lru_refs(f), f.test(pg::WORKINGSET))
    }

    /// Lazily promoted workingset: refs counter saturated, referenced and workingset (Era C).
    fn lazily_promoted(&self, f: &crate::machine::Folio) -> bool {
        self.has(Behaviour::WorkingsetTopTier)
            && f.test(pg::REFERENCED)
            && f.test(pg::WORKINGSET)
            && f.refs() == LRU_REFS_MAX
    }

    /// Clears the `LRU_REFS_FLAGS`: the counter and PG_referenced (Era C); Era A/B also
    /// PG_workingset.
    fn clear_refs_flags(&self, f: &mut crate::machine::Folio) {
        f.set_refs(0);
        f.clear(pg::REFERENCED);
        if !self.has(Behaviour::WorkingsetTopTier) {
            f.clear(pg::WORKINGSET);
        }
    }

    /// `lru_gen_is_active`: one of the two youngest generations.
    fn gen_is_active(&self, lv: usize, gen: u8) -> bool {
        let max = self.lruvecs[lv].max_seq;
        gen == gen_of(max) || gen == gen_of(max - 1)
    }

    /// `lru_gen_folio_seq`: the generation a folio joins (spec mglru.md §3.4, per era).
    fn folio_seq(&self, m: &Machine, lv: usize, pfn: Pfn, reclaiming: bool) -> u64 {
        let f = &m.folios[pfn as usize];
        let t = f.is_file_lru() as usize;
        let g = &self.lruvecs[lv];
        let (max, min) = (g.max_seq, g.min_seq[t]);
        let anon_no_swapcache = !f.is_file_lru() && !f.test(pg::SWAPCACHE);
        let reclaim_io = f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK));
        if self.has(Behaviour::LruGenFolioSeq) {
            let d = if f.test(pg::ACTIVE) && f.test(pg::WORKINGSET) {
                1
            } else if f.test(pg::ACTIVE) {
                2
            } else if reclaiming {
                4
            } else if anon_no_swapcache || reclaim_io {
                2
            } else if f.test(pg::WORKINGSET)
                || (self.has(Behaviour::ReferencedPlacement) && f.test(pg::REFERENCED))
            {
                3
            } else {
                4
            };
            (max + 1 - d).max(min)
        } else {
            // Debian's 6.1.176 carries the Dec-2023 placement fix, so 6.1 places as 6.12.
            if f.test(pg::ACTIVE) {
                max
            } else if anon_no_swapcache || reclaim_io {
                max - 1
            } else if reclaiming || min + MIN_NR_GENS >= max {
                min
            } else {
                min + 1
            }
        }
    }

    /// Moves a folio's page count from one generation to another (`lru_gen_update_size`).
    fn update_size(&mut self, lv: usize, t: usize, old: Option<u8>, new: Option<u8>) {
        let g = &mut self.lruvecs[lv];
        if let Some(o) = old {
            g.nr_pages[o as usize][t] -= 1;
        }
        if let Some(n) = new {
            g.nr_pages[n as usize][t] += 1;
        }
    }

    /// `lru_gen_add_folio`.
    fn lru_gen_add_folio(&mut self, m: &mut Machine, pfn: Pfn, reclaiming: bool) {
        let f = m.folios[pfn as usize];
        let lv = self.lv(f.memcg, f.node);
        if f.test(pg::UNEVICTABLE) {
            self.lruvecs[lv].unevictable += 1;
            return;
        }
        let seq = self.folio_seq(m, lv, pfn, reclaiming);
        let gen = gen_of(seq);
        let t = f.is_file_lru() as usize;
        let fm = &mut m.folios[pfn as usize];
        fm.set_gen(gen + 1);
        // 6.12 (6.12.117's lru_gen_add_folio) also clears the refs counter and PG_referenced
        // of a folio added active; 6.1.192 and 7.2 clear only PG_active.
        if self.has(Behaviour::ActiveAddClearsRefs)
            && !self.has(Behaviour::LruGenFolioSeq)
            && fm.test(pg::ACTIVE)
        {
            fm.set_refs(0);
            fm.clear(pg::REFERENCED);
        }
        fm.clear(pg::ACTIVE);
        self.update_size(lv, t, None, Some(gen));
        let list = self.list_id(lv, gen, t);
        if reclaiming {
            self.lists.push_tail(list, pfn);
        } else {
            self.lists.push_head(list, pfn);
        }
    }

    /// `lru_gen_del_folio`: off its list; outside reclaim a folio of an active generation
    /// keeps PG_active.
    fn lru_gen_del_folio(&mut self, m: &mut Machine, pfn: Pfn, reclaiming: bool) {
        let f = m.folios[pfn as usize];
        let lv = self.lv(f.memcg, f.node);
        if f.test(pg::UNEVICTABLE) {
            self.lruvecs[lv].unevictable -= 1;
            return;
        }
        let gen = f.gen() - 1;
        let t = f.is_file_lru() as usize;
        self.lists.remove(pfn);
        self.update_size(lv, t, Some(gen), None);
        let active = !reclaiming && self.gen_is_active(lv, gen);
        let fm = &mut m.folios[pfn as usize];
        fm.set_gen(0);
        if active {
            fm.set(pg::ACTIVE);
        }
    }

    /// Moves a folio to the head (or tail) of the list of generation `gen`.
    fn move_to_gen_list(&mut self, lv: usize, pfn: Pfn, gen: u8, t: usize, tail: bool) {
        self.lists.remove(pfn);
        let list = self.list_id(lv, gen, t);
        if tail {
            self.lists.push_tail(list, pfn);
        } else {
            self.lists.push_head(list, pfn);
        }
    }

    /// `folio_inc_gen`: lazy promotion by one generation past min_seq (Era C keeps
    /// PG_workingset). Returns the folio's generation afterwards.
    fn folio_inc_gen(&mut self, m: &mut Machine, lv: usize, pfn: Pfn, reclaiming: bool) -> u8 {
        let f = m.folios[pfn as usize];
        let t = f.is_file_lru() as usize;
        let old_gen = gen_of(self.lruvecs[lv].min_seq[t]);
        if f.gen() != 0 && f.gen() - 1 != old_gen {
            return f.gen() - 1;
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as u8;
        let mut nf = f;
        self.clear_refs_flags(&mut nf);
        nf.set_gen(new_gen + 1);
        if reclaiming && !self.has(Behaviour::DropReclaimingArg) {
            nf.set(pg::RECLAIM);
        }
        m.folios[pfn as usize] = nf;
        self.update_size(lv, t, Some(old_gen), Some(new_gen));
        new_gen
    }

    /// `folio_update_gen` (page-table walk and look-around with a walker): the first sighting
    /// only marks (Era C), later ones move the folio's gen bits to `gen` (its list position is
    /// fixed up lazily by sort_folio). Returns whether the gen changed.
    fn folio_update_gen(&mut self, m: &mut Machine, pfn: Pfn, gen: u8) -> bool {
        let f = m.folios[pfn as usize];
        if self.has(Behaviour::SetRefsOnPteYoung)
            && !f.test(pg::REFERENCED)
            && !f.test(pg::WORKINGSET)
        {
            let fm = &mut m.folios[pfn as usize];
            fm.set_refs(0);
            fm.set(pg::REFERENCED);
            return false;
        }
        if f.gen() == 0 {
            if !self.has(Behaviour::SetRefsOnPteYoung) {
                m.folios[pfn as usize].set(pg::REFERENCED);
            }
            return false;
        }
        let lv = self.lv(f.memcg, f.node);
        let t = f.is_file_lru() as usize;
        let old = f.gen() - 1;
        let fm = &mut m.folios[pfn as usize];
        fm.set_gen(gen + 1);
        fm.set_refs(0);
        fm.clear(pg::REFERENCED);
        if self.has(Behaviour::SetRefsOnPteYoung) {
            fm.set(pg::WORKINGSET);
        } else {
            fm.clear(pg::WORKINGSET);
        }
        self.update_size(lv, t, Some(old), Some(gen));
        old != gen
    }

    /// `lru_gen_set_refs` (Era C): first sighting marks PG_referenced (false); later ones set
    /// PG_workingset (true).
    fn lru_gen_set_refs(&self, m: &mut Machine, pfn: Pfn) -> bool {
        let f = &mut m.folios[pfn as usize];
        if !f.test(pg::REFERENCED) && !f.test(pg::WORKINGSET) {
            f.set_refs(0);
            f.set(pg::REFERENCED);
            return false;
        }
        // 7.2.13: "promote on second access" counts references (folio_lru_refs) first.
        if self.has(Behaviour::SecondAccessPromotion) && self.folio_lru_refs(f) <= 1 {
            lru_gen_inc_refs(f);
            return true;
        }
        f.set_refs(0);
        f.clear(pg::REFERENCED);
        f.set(pg::WORKINGSET);
        true
    }

    /// `folio_add_lru` inside a fault on a vma with recency (`lru_gen_in_fault`): the folio
    /// starts active; with `fault-marks-accessed` (7.2.13) only a workingset (refaulted) one
    /// does, and the others are marked accessed, which places them like referenced folios.
    pub(super) fn add_in_fault(&self, m: &mut Machine, pfn: Pfn) {
        let f = &mut m.folios[pfn as usize];
        if !self.has(Behaviour::FaultMarksAccessed) || f.test(pg::WORKINGSET) {
            f.set(pg::ACTIVE);
        } else if !f.test(pg::REFERENCED) {
            lru_gen_inc_refs(f);
        }
    }

    // ---------------------------------------------------------------- PID controller

    /// `reset_ctrl_pos(carryover=true)`: fold the current counters into the averages (called
    /// just before min_seq[t] advances); NR_HIST_GENS = 1 clears them.
    fn reset_ctrl_pos(&mut self, lv: usize, t: usize) {
        for tier in 0..MAX_NR_TIERS {
            let protected = self.protected_of(lv, t, tier);
            let g = &mut self.lruvecs[lv];
            g.avg_refaulted[t][tier] = (g.avg_refaulted[t][tier] + g.refaulted[t][tier]) / 2;
            g.avg_total[t][tier] = (g.avg_total[t][tier] + protected + g.evicted[t][tier]) / 2;
        }
        let g = &mut self.lruvecs[lv];
        g.refaulted[t] = [0; MAX_NR_TIERS];
        g.evicted[t] = [0; MAX_NR_TIERS];
        g.protected[t] = [0; MAX_NR_TIERS];
    }

    /// The `protected` count of a tier: Era A/B keep tiers 1..3 at index `tier - 1` (tier 0
    /// is never protected), Era C at index `tier` (`read_ctrl_pos`, `reset_ctrl_pos`).
    fn protected_of(&self, lv: usize, t: usize, tier: usize) -> u64 {
        let g = &self.lruvecs[lv];
        match (self.has(Behaviour::ProtectedAtTier), tier) {
            (true, _) => g.protected[t][tier],
            (_, 0) => 0,
            _ => g.protected[t][tier - 1],
        }
    }

    /// `read_ctrl_pos`: Era C sums tiers `tier % 4 ..= min(tier, 3)` (4 = all tiers).
    fn read_ctrl_pos(&self, lv: usize, t: usize, tier: usize, gain: u64) -> CtrlPos {
        let g = &self.lruvecs[lv];
        let mut pos = CtrlPos {
            gain,
            ..Default::default()
        };
        let range = if self.has(Behaviour::TypeSelectionAllTiers) {
            (tier % MAX_NR_TIERS)..=tier.min(MAX_NR_TIERS - 1)
        } else {
            tier..=tier
        };
        for i in range {
            pos.refaulted += g.avg_refaulted[t][i] + g.refaulted[t][i];
            pos.total += g.avg_total[t][i] + self.protected_of(lv, t, i) + g.evicted[t][i];
        }
        pos
    }

    /// `get_tier_idx`: folios in tiers above the result are protected.
    fn get_tier_idx(&self, lv: usize, t: usize) -> usize {
        let (gsp, gpv) = if self.has(Behaviour::TypeSelectionAllTiers) {
            (2, 3)
        } else {
            (1, 2)
        };
        let sp = self.read_ctrl_pos(lv, t, 0, gsp);
        for tier in 1..MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(lv, t, tier, gpv);
            if !positive_ctrl_err(sp, pv) {
                return tier - 1;
            }
        }
        MAX_NR_TIERS - 1
    }

    /// `get_type_to_scan` (Era C: all tiers of anon vs all tiers of file; Era A/B: tier 0).
    /// Era A/B also return the tier cutoff of the chosen type, found by comparing its tiers
    /// with the other type's tier 0 at the swappiness gains.
    fn get_type_to_scan(&self, lv: usize, swappiness: u32) -> (usize, Option<usize>) {
        if swappiness <= 1 {
            return (FILE, None);
        }
        if swappiness >= MAX_SWAPPINESS {
            return (ANON, None);
        }
        let gain = [swappiness as u64, (MAX_SWAPPINESS - swappiness) as u64];
        let tier = if self.has(Behaviour::TypeSelectionAllTiers) {
            4
        } else {
            0
        };
        let sp = self.read_ctrl_pos(lv, ANON, tier, gain[ANON]);
        let pv = self.read_ctrl_pos(lv, FILE, tier, gain[FILE]);
        let t = if positive_ctrl_err(sp, pv) {
            FILE
        } else {
            ANON
        };
        if self.has(Behaviour::TypeSelectionAllTiers) {
            return (t, None);
        }
        let sp = self.read_ctrl_pos(lv, 1 - t, 0, gain[1 - t]);
        for tier in 1..MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(lv, t, tier, gain[t]);
            if !positive_ctrl_err(sp, pv) {
                return (t, Some(tier - 1));
            }
        }
        (t, Some(MAX_NR_TIERS - 1))
    }

    // ---------------------------------------------------------------- types and swappiness

    /// The evictable types for a swappiness: (min_type, max_type).
    fn evictable_types(&self, swappiness: u32) -> (usize, usize) {
        let min_type = if swappiness == 0 { FILE } else { ANON };
        let max_type =
            if swappiness < SWAPPINESS_ANON_ONLY || !self.has(Behaviour::SwappinessAnonOnly) {
                FILE
            } else {
                ANON
            };
        (min_type, max_type)
    }

    fn type_evictable(&self, t: usize, swappiness: u32) -> bool {
        let (lo, hi) = self.evictable_types(swappiness);
        (lo..=hi).contains(&t)
    }

    /// `evictable_min_seq`.
    fn evictable_min_seq(&self, lv: usize, swappiness: u32) -> u64 {
        let (lo, hi) = self.evictable_types(swappiness);
        let g = &self.lruvecs[lv];
        g.min_seq[lo].min(g.min_seq[hi])
    }

    /// `get_swappiness`: 0 without may_swap or with fewer than MIN_LRU_BATCH free swap pages.
    fn get_swappiness(&self, m: &Machine, sc: &ScanControl) -> u32 {
        if !sc.may_swap || m.swap.nr_free() < MIN_LRU_BATCH {
            return 0;
        }
        sc.proactive_swappiness.unwrap_or(m.cfg.swappiness)
    }

    /// `lruvec_evictable_size`: pages of every generation of the evictable types.
    fn evictable_size(&self, lv: usize, swappiness: u32) -> u64 {
        let g = &self.lruvecs[lv];
        let (lo, hi) = self.evictable_types(swappiness);
        (lo..=hi)
            .map(|t| {
                (g.min_seq[t]..=g.max_seq)
                    .map(|s| g.pages(s, t))
                    .sum::<u64>()
            })
            .sum()
    }

    // ---------------------------------------------------------------- aging

    /// `inc_min_seq`: carry the oldest generation of a type forward into the next one.
    fn inc_min_seq(&mut self, m: &mut Machine, lv: usize, t: usize, swappiness: u32) {
        if self.type_evictable(t, swappiness) {
            let old_gen = gen_of(self.lruvecs[lv].min_seq[t]);
            let list = self.list_id(lv, old_gen, t);
            while let Some(pfn) = self.lists.tail(list) {
                let f = m.folios[pfn as usize];
                let tier = self.folio_tier(&f);
                let lazy = self.lazily_promoted(&f);
                let new_gen = self.folio_inc_gen(m, lv, pfn, false);
                // Every folio taken off the list counts, walker-promoted ones included.
                if self.has(Behaviour::ProtectedAtTier) && !lazy {
                    self.lruvecs[lv].protected[t][tier] += 1;
                }
                self.move_to_gen_list(lv, pfn, new_gen, t, true);
            }
        }
        self.reset_ctrl_pos(lv, t);
        self.lruvecs[lv].min_seq[t] += 1;
    }

    /// `inc_max_seq`: a new youngest generation (carrying a full type's oldest one forward).
    pub fn inc_max_seq(&mut self, m: &mut Machine, lv: usize, seq: u64, swappiness: u32) -> bool {
        let now = m.now();
        self.inc_max_seq_at(m, lv, seq, swappiness, now)
    }

    /// `inc_max_seq`, the new generation born at `now`.
    fn inc_max_seq_at(
        &mut self,
        m: &mut Machine,
        lv: usize,
        seq: u64,
        swappiness: u32,
        now: u64,
    ) -> bool {
        if seq != self.lruvecs[lv].max_seq {
            return false;
        }
        let order = if self.has(Behaviour::IndependentMinSeq) {
            [ANON, FILE]
        } else {
            [FILE, ANON]
        };
        for t in order {
            if self.lruvecs[lv].nr_gens(t) == MAX_NR_GENS {
                self.inc_min_seq(m, lv, t, swappiness);
            }
        }
        let g = &mut self.lruvecs[lv];
        g.timestamps[gen_of(g.max_seq + 1) as usize] = now;
        g.max_seq += 1;
        true
    }

    /// `try_to_inc_max_seq`: walk the page tables (if enabled) and create a generation.
    ///
    /// Walks take time (`pte_walk_ns` per PTE): the walker's iteration stays open until its
    /// walk ends, and `mm_state.seq` and `max_seq` advance only then, by the policy timer
    /// queued for that time (`sync_aging`): like all kernel-thread work it runs in time order,
    /// so a task whose clock is still before the end sees the walk under way. A reclaimer that
    /// asks for the same generation meanwhile joins the iteration (`join_walk`).
    #[allow(clippy::too_many_arguments)]
    pub fn try_to_inc_max_seq(
        &mut self,
        m: &mut Machine,
        lv: usize,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
        sc_is_kswapd: bool,
    ) -> bool {
        let _ = sc_is_kswapd;
        if seq <= self.lruvecs[lv].mm.seq {
            return false;
        }
        if let Some(w) = self.lruvecs[lv].mm.walking {
            if w.seq == seq {
                return self.join_walk(m, lv, w);
            }
        }
        // 6.1 walks a forced scan even without the page-table-walk capability.
        let force_walks = force_scan && !self.has(Behaviour::ForcedAgingNeedsMmWalk);
        if self.cfg.enabled & LRU_GEN_MM_WALK == 0 && !force_walks {
            self.lruvecs[lv].mm.seq += 1;
            return self.inc_max_seq(m, lv, seq, swappiness);
        }
        let start = m.now();
        let last_handout = walk::walk_mm_list(self, m, lv, seq, swappiness, force_scan);
        let until = m.now();
        if until == start {
            self.lruvecs[lv].mm.seq += 1;
            return self.inc_max_seq(m, lv, seq, swappiness);
        }
        self.lruvecs[lv].mm.walking = Some(walk::WalkInProgress {
            seq,
            swappiness,
            until,
            last_handout,
            walkers: 1,
        });
        m.queue_kthread_work(
            until,
            crate::machine::kthreads::KthreadWork::PolicyTimer(lv as u64),
        );
        true
    }

    /// A reclaimer asks `iterate_mm_list` for an mm of the iteration under way. Once every mm
    /// has been handed out it finds the list's end: it ends the iteration itself, at once, and
    /// creates the generation (true). Before that it takes its share of the mms left (the rest
    /// of the hand-outs and walks go `k + 1` times as fast with `k` walkers so far), walks
    /// until the last one is handed out, and then finds the end itself: the iteration ends then
    /// (by the policy timer, in time order), and it returns false.
    fn join_walk(&mut self, m: &mut Machine, lv: usize, w: walk::WalkInProgress) -> bool {
        let now = m.now();
        if now >= w.last_handout {
            self.lruvecs[lv].mm.walking = None;
            self.lruvecs[lv].mm.seq += 1;
            return self.inc_max_seq_at(m, lv, w.seq, w.swappiness, now);
        }
        let k = w.walkers as u64;
        let share = |t: u64| now + (t - now) * k / (k + 1);
        let end = share(w.last_handout);
        self.lruvecs[lv].mm.walking = Some(walk::WalkInProgress {
            until: end,
            last_handout: end,
            walkers: w.walkers + 1,
            ..w
        });
        m.queue_kthread_work(
            end,
            crate::machine::kthreads::KthreadWork::PolicyTimer(lv as u64),
        );
        m.spend_sys(end - now);
        false
    }

    /// `try_to_inc_max_seq` from a reclaimer's own aging: if it walks (or joins a walk), it
    /// allocates an mm walker (`set_mm_walk(NULL, true)`) that stays with the task until the
    /// end of its lruvec pass (cgroup reclaim) or node pass (root reclaim), so the rest of that
    /// pass's look-arounds update generations through it.
    pub(super) fn age_in_reclaim(
        &mut self,
        m: &mut Machine,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> bool {
        let max_seq = self.lruvecs[lv].max_seq;
        if self.cfg.enabled & LRU_GEN_MM_WALK != 0 && max_seq > self.lruvecs[lv].mm.seq {
            sc.mm_walker = true;
        }
        self.try_to_inc_max_seq(m, lv, max_seq, swappiness, false, sc.is_kswapd)
    }

    /// Ends the lruvec's walk iteration if its time has come (the policy timer, or a debugfs
    /// writer that walked it itself): `mm_state.seq` advances and `inc_max_seq` creates the
    /// generation, born when the walk ended.
    fn sync_aging(&mut self, m: &mut Machine, lv: usize) {
        let Some(w) = self.lruvecs[lv].mm.walking else {
            return;
        };
        if m.now() < w.until {
            return;
        }
        self.lruvecs[lv].mm.walking = None;
        self.lruvecs[lv].mm.seq += 1;
        self.inc_max_seq_at(m, lv, w.seq, w.swappiness, w.until);
    }

    /// `try_to_inc_min_seq` (Era C): drop empty oldest generations; keep the types within
    /// max_seq - 2 of each other. Era A/B: anon never ahead of file.
    fn try_to_inc_min_seq(&mut self, lv: usize, swappiness: u32) -> bool {
        let g = &self.lruvecs[lv];
        let mut min_seq = g.min_seq;
        for t in 0..2 {
            if !self.type_evictable(t, swappiness) {
                continue;
            }
            while min_seq[t] + MIN_NR_GENS <= g.max_seq {
                let gen = gen_of(min_seq[t]);
                if !self.lists.is_empty(self.list_id(lv, gen, t)) {
                    break;
                }
                min_seq[t] += 1;
            }
        }
        if self.has(Behaviour::IndependentMinSeq) {
            if swappiness > 0 && swappiness <= MAX_SWAPPINESS {
                let s = g.max_seq - 2;
                if min_seq[ANON] > s && min_seq[FILE] < s {
                    min_seq[ANON] = s;
                } else if min_seq[FILE] > s && min_seq[ANON] < s {
                    min_seq[FILE] = s;
                }
            }
        } else if swappiness > 0 {
            min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
            min_seq[FILE] = min_seq[ANON].max(g.min_seq[FILE]);
        }
        let mut advanced = false;
        for t in 0..2 {
            if min_seq[t] > self.lruvecs[lv].min_seq[t] {
                self.reset_ctrl_pos(lv, t);
                self.lruvecs[lv].min_seq[t] = min_seq[t];
                advanced = true;
            }
        }
        advanced
    }

    /// `should_run_aging`: (must or should age, nr_to_scan = evictable pages).
    fn should_run_aging(&self, lv: usize, swappiness: u32) -> (bool, u64) {
        let g = &self.lruvecs[lv];
        if self.has(Behaviour::AgingByGenCount) {
            let min = self.evictable_min_seq(lv, swappiness);
            if min + MIN_NR_GENS > g.max_seq {
                return (true, 0);
            }
            (
                min + MIN_NR_GENS == g.max_seq,
                self.evictable_size(lv, swappiness),
            )
        } else {
            let t = if swappiness != 0 { ANON } else { FILE };
            let min = g.min_seq[t];
            let total = self.evictable_size(lv, swappiness);
            if min + MIN_NR_GENS > g.max_seq {
                // 6.1 sizes the lruvec before this test, 6.12 after it.
                let nr = if self.has(Behaviour::AgingCheckBeforeSizing) {
                    0
                } else {
                    total
                };
                return (true, nr);
            }
            if min + MIN_NR_GENS < g.max_seq {
                return (false, total);
            }
            let young: u64 = (t..2).map(|t| g.pages(g.max_seq, t)).sum();
            let old: u64 = (t..2).map(|t| g.pages(g.max_seq - MIN_NR_GENS, t)).sum();
            (
                young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total,
                total,
            )
        }
    }

    /// `apply_proportional_protection` (Era D; 7.x).
    fn apply_protection(&self, m: &Machine, memcg: u16, sc: &mut ScanControl, scan: u64) -> u64 {
        let (min, low) = m.memcg_protection(sc.root(), memcg);
        if min == 0 && low == 0 {
            return scan;
        }
        let protection = if !sc.memcg_low_reclaim && low > min {
            sc.memcg_low_skipped = true;
            low
        } else {
            min
        };
        let usage = m.memcgs[memcg as usize].usage.max(protection);
        let s = scan - (scan as u128 * protection as u128 / (usage as u128 + 1)) as u64;
        s.max(SWAP_CLUSTER_MAX)
    }

    // ---------------------------------------------------------------- eviction

    /// `sort_folio`: true if the folio was moved (not a candidate for isolation).
    #[allow(clippy::too_many_arguments)]
    fn sort_folio(
        &mut self,
        m: &mut Machine,
        lv: usize,
        pfn: Pfn,
        sc: &mut ScanControl,
        tier_idx: usize,
    ) -> bool {
        let f = m.folios[pfn as usize];
        let t = f.is_file_lru() as usize;
        let min_gen = gen_of(self.lruvecs[lv].min_seq[t]);
        // 1. unevictable
        if f.test(pg::MLOCKED) || f.test(pg::UNEVICTABLE) {
            self.lists.remove(pfn);
            self.update_size(lv, t, Some(f.gen() - 1), None);
            let fm = &mut m.folios[pfn as usize];
            fm.set_gen(0);
            fm.set(pg::UNEVICTABLE);
            self.lruvecs[lv].unevictable += 1;
            m.count(f.memcg, Vm::UnevictablePgsCulled, 1);
            return true;
        }
        // 2. promoted by a page-table walk or look-around
        if f.gen() - 1 != min_gen {
            self.move_to_gen_list(lv, pfn, f.gen() - 1, t, false);
            return true;
        }
        // 3. protected tier, or lazily promoted workingset
        let tier = self.folio_tier(&f);
        let lazy = self.lazily_promoted(&f);
        if tier > tier_idx
            || lazy
            || (!self.has(Behaviour::WorkingsetTopTier)
                && f.refs() == LRU_REFS_MAX
                && f.test(pg::WORKINGSET))
        {
            // 6.1.176 counts protection as activation (6.12 does not).
            if !self.has(Behaviour::RefaultCountsEveryRefault) {
                let ev = if t == FILE {
                    Vm::WorkingsetActivateFile
                } else {
                    Vm::WorkingsetActivateAnon
                };
                m.count(f.memcg, ev, 1);
            }
            let gen = self.folio_inc_gen(m, lv, pfn, false);
            self.move_to_gen_list(lv, pfn, gen, t, !self.has(Behaviour::WorkingsetTopTier));
            if !lazy {
                let idx = if self.has(Behaviour::ProtectedAtTier) {
                    tier
                } else {
                    tier.saturating_sub(1)
                };
                self.lruvecs[lv].protected[t][idx] += 1;
            }
            return true;
        }
        // 5/6. before patch 10: dirty and writeback folios are bumped, never isolated
        if !self.has(Behaviour::CommonDirtyWritebackReactivation) {
            let dirty_file = t == FILE && f.test(pg::DIRTY);
            if dirty_file
                && !self.has(Behaviour::RemoveFileTaken)
                && self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
            {
                sc.nr.file_taken += 1;
                if !f.test(pg::WRITEBACK) && !self.has(Behaviour::RemoveUnqueuedDirty) {
                    sc.nr.unqueued_dirty += 1;
                }
            }
            if f.test(pg::WRITEBACK) || dirty_file {
                let gen = self.folio_inc_gen(m, lv, pfn, true);
                self.move_to_gen_list(lv, pfn, gen, t, false);
                return true;
            }
        }
        false
    }

    /// `isolate_folio`: take the folio off its generation list for shrink_folio_list.
    fn isolate_folio(&mut self, m: &mut Machine, pfn: Pfn, sc: &ScanControl) -> bool {
        let f = m.folios[pfn as usize];
        // 6.1 also refuses under !may_unmap and !may_writepage (later eras skip such reclaim
        // before it gets here).
        let checks_unmap = !self.has(Behaviour::IsolateFolioTrustsCallers);
        if checks_unmap && !sc.may_unmap && f.mapcount > 0 {
            return false;
        }
        let may_io = sc.may_io && (!checks_unmap || sc.may_writepage);
        if !may_io
            && !self.has(Behaviour::RemoveSwapConstrainedCheck)
            && (f.test(pg::DIRTY) || (!f.is_file_lru() && !f.test(pg::SWAPCACHE)))
        {
            return false;
        }
        let fm = &mut m.folios[pfn as usize];
        if !fm.test(pg::REFERENCED) {
            fm.set_refs(0);
            if !self.has(Behaviour::WorkingsetTopTier) {
                fm.clear(pg::WORKINGSET);
            }
        }
        if !self.has(Behaviour::WorkingsetTopTier) {
            fm.clear(pg::REFERENCED);
        }
        if !self.has(Behaviour::CommonDirtyWritebackReactivation) {
            fm.clear(pg::RECLAIM);
        }
        self.lru_gen_del_folio(m, pfn, true);
        let fm = &mut m.folios[pfn as usize];
        fm.clear(pg::LRU);
        fm.set(pg::ISOLATED);
        m.nodes[f.node as usize].nr_isolated[f.is_file_lru() as usize] += 1;
        true
    }

    /// `scan_folios`: sort or isolate folios from the tail of the oldest generation of a type.
    #[allow(clippy::too_many_arguments)]
    fn scan_folios(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        sc: &mut ScanControl,
        t: usize,
        tier_idx: usize,
        nr_to_scan: u64,
    ) -> ScanResult {
        let mut r = ScanResult::default();
        if self.lruvecs[lv].nr_gens(t) == MIN_NR_GENS {
            return r;
        }
        let gen = gen_of(self.lruvecs[lv].min_seq[t]);
        let list = self.list_id(lv, gen, t);
        // Era A/B scan_folios always takes up to MAX_LRU_BATCH folios; Era D bounds it.
        let mut remaining = if self.has(Behaviour::EvictNrToScanBound) {
            nr_to_scan.min(MAX_LRU_BATCH)
        } else {
            MAX_LRU_BATCH
        };
        let (mut sorted, mut skipped) = (0u64, 0u64);
        self.moved.clear();
        while remaining > 0 {
            let Some(pfn) = self.lists.tail(list) else {
                break;
            };
            m.spend_sys(m.cfg.cost.reclaim_per_folio_ns);
            r.scanned += 1;
            if self.sort_folio(m, lv, pfn, sc, tier_idx) {
                sorted += 1;
            } else if self.isolate_folio(m, pfn, sc) {
                self.scratch.push(pfn);
                r.isolated += 1;
            } else {
                self.lists.remove(pfn);
                self.moved.push(pfn);
                skipped += 1;
            }
            remaining -= 1;
            if r.isolated.max(skipped) >= MIN_LRU_BATCH {
                break;
            }
        }
        for i in (0..self.moved.len()).rev() {
            let pfn = self.moved[i];
            self.lists.push_head(list, pfn);
        }
        m.lru_lock(memcg, (lv % self.nodes) as u8, r.scanned);
        let (scan_ev, _) = reclaimer_events(sc);
        if sc.cgroup_reclaim() {
            m.count_memcg(memcg, scan_ev, r.isolated);
            m.count_memcg(memcg, Vm::Pgrefill, sorted);
        } else {
            m.count(memcg, scan_ev, r.isolated);
            m.count(memcg, Vm::Pgrefill, sorted);
        }
        m.vm.add(
            if t == FILE {
                Vm::PgscanFile
            } else {
                Vm::PgscanAnon
            },
            r.isolated,
        );
        if t == FILE
            && !self.has(Behaviour::SimplifyDirtyWriteback)
            && self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
        {
            sc.nr.file_taken += r.isolated;
        }
        if !self.has(Behaviour::ExactScanCount) && r.isolated == 0 && remaining > 0 {
            r.scanned = 0;
        }
        r
    }

    /// `isolate_folios`: pick a type with the PID controller, fall back to the other.
    #[allow(clippy::too_many_arguments)]
    fn isolate_folios(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        sc: &mut ScanControl,
        swappiness: u32,
        nr_to_scan: u64,
    ) -> (usize, u64) {
        let (lo, hi) = self.evictable_types(swappiness);
        let both = lo != hi;
        let (mut t, mut tier) = if !both {
            (lo, None)
        } else if !self.has(Behaviour::TypeSelectionAllTiers)
            && self.lruvecs[lv].min_seq[ANON] < self.lruvecs[lv].min_seq[FILE]
        {
            (ANON, None)
        } else {
            self.get_type_to_scan(lv, swappiness)
        };
        let mut total = 0;
        for _ in 0..if both { 2 } else { 1 } {
            let tier_idx = tier.take().unwrap_or_else(|| self.get_tier_idx(lv, t));
            let r = self.scan_folios(m, lv, memcg, sc, t, tier_idx, nr_to_scan);
            if self.has(Behaviour::ExactScanCount) {
                total += r.scanned;
                if r.isolated > 0 {
                    return (t, total);
                }
                if self.has(Behaviour::AvoidTypeFallback) && r.scanned > 0 {
                    continue;
                }
            } else if r.scanned > 0 {
                return (t, r.scanned);
            }
            t = 1 - t;
        }
        (t, total)
    }

    /// `evict_folios`: isolate a batch, run shrink_folio_list, put the rest back; one retry
    /// pass for clean folios. Returns the pages scanned.
    #[allow(clippy::too_many_arguments)]
    fn evict_folios(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        sc: &mut ScanControl,
        swappiness: u32,
        nr_to_scan: u64,
    ) -> u64 {
        // The per-CPU batches are drained once per shrink call (lru_gen_shrink_node,
        // lru_gen_shrink_lruvec), not per batch, and never by the debugfs eviction.
        if self.has(Behaviour::ExactScanCount) {
            self.try_to_inc_min_seq(lv, swappiness);
        }
        self.scratch.clear();
        let (t, mut scanned) = self.isolate_folios(m, lv, memcg, sc, swappiness, nr_to_scan);
        if self.has(Behaviour::ExactScanCount) {
            if scanned > 0 {
                self.try_to_inc_min_seq(lv, swappiness);
            }
        } else {
            scanned += self.try_to_inc_min_seq(lv, swappiness) as u64;
            if self.evictable_min_seq(lv, swappiness) + MIN_NR_GENS > self.lruvecs[lv].max_seq {
                scanned = 0;
            }
        }
        if self.scratch.is_empty() {
            self.evicted_type = None;
            return scanned;
        }
        self.evicted_type = Some(t);
        let isolated = self.scratch.len() as u64;
        let mut list = std::mem::take(&mut self.scratch);
        let mut first_pass = true;
        loop {
            let mut stat = ReclaimStat::default();
            let reclaimed = shrink_folio_list(m, self, &mut list, sc, &mut stat);
            sc.nr_reclaimed += reclaimed;
            let (_, steal_ev) = reclaimer_events(sc);
            if sc.cgroup_reclaim() {
                m.count_memcg(memcg, steal_ev, reclaimed);
            } else {
                m.count(memcg, steal_ev, reclaimed);
            }
            m.vm.add(
                if t == FILE {
                    Vm::PgstealFile
                } else {
                    Vm::PgstealAnon
                },
                reclaimed,
            );
            if first_pass {
                self.account_writeback(m, lv, sc, &stat, isolated);
            }
            self.clean.clear();
            let mut keep = 0;
            for i in 0..list.len() {
                let pfn = list[i];
                let f = m.folios[pfn as usize];
                if !self.has(Behaviour::RejectedFolioPlacement) && !f.test(pg::MLOCKED) {
                    // evict_folios (Era A/B): under I/O with PG_reclaim keeps its place;
                    // referenced, mapped, active or dirty goes to max_seq; the rest is retried.
                    let fm = &mut m.folios[pfn as usize];
                    if f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)) {
                        if f.test(pg::WORKINGSET) {
                            fm.set(pg::REFERENCED);
                        }
                    } else if !first_pass
                        || f.test(pg::ACTIVE)
                        || f.test(pg::REFERENCED)
                        || f.mapcount > 0
                        || f.test(pg::DIRTY)
                        || f.test(pg::WRITEBACK)
                    {
                        fm.set(pg::ACTIVE);
                        fm.set_refs(0);
                        fm.clear(pg::REFERENCED);
                        fm.clear(pg::WORKINGSET);
                    } else {
                        self.clean.push(pfn);
                        continue;
                    }
                    list[keep] = pfn;
                    keep += 1;
                    continue;
                }
                if first_pass
                    && !f.test(pg::ACTIVE)
                    && f.mapcount == 0
                    && !f.test(pg::DIRTY)
                    && !f.test(pg::WRITEBACK)
                    && !f.test(pg::MLOCKED)
                {
                    self.clean.push(pfn);
                    continue;
                }
                if !f.test(pg::MLOCKED)
                    && self.folio_seq(m, lv, pfn, false)
                        == self.lruvecs[lv].min_seq[f.is_file_lru() as usize]
                {
                    let fm = &mut m.folios[pfn as usize];
                    fm.set(pg::ACTIVE);
                    fm.set_refs(0);
                    fm.clear(pg::REFERENCED);
                }
                list[keep] = pfn;
                keep += 1;
            }
            list.truncate(keep);
            self.putback(m, &list);
            list.clear();
            if self.clean.is_empty() || !first_pass {
                if !self.clean.is_empty() {
                    let clean = std::mem::take(&mut self.clean);
                    self.putback(m, &clean);
                    self.clean = clean;
                }
                break;
            }
            std::mem::swap(&mut list, &mut self.clean);
            first_pass = false;
        }
        list.clear();
        self.scratch = list;
        scanned
    }

    /// The writeback bookkeeping of an evict_folios batch (patches 11 and 15).
    fn account_writeback(
        &mut self,
        m: &mut Machine,
        _lv: usize,
        sc: &mut ScanControl,
        stat: &ReclaimStat,
        isolated: u64,
    ) {
        if self.has(Behaviour::SimplifyDirtyWriteback) && stat.nr_unqueued_dirty == isolated {
            m.wakeup_flusher(true);
        } else if !self.has(Behaviour::RemoveUnqueuedDirty)
            && !self.has(Behaviour::SimplifyDirtyWriteback)
            && self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
        {
            sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
        }
        if self.has(Behaviour::UnifyWritebackThrottling) {
            let nr = &mut sc.nr;
            nr.dirty += stat.nr_dirty;
            nr.congested += stat.nr_congested;
            nr.writeback += stat.nr_writeback;
            nr.immediate += stat.nr_immediate;
            nr.taken += isolated;
        }
    }

    /// `move_folios_to_lru` for MGLRU: re-add with `lru_gen_add_folio(reclaiming=false)`.
    fn putback(&mut self, m: &mut Machine, folios: &[Pfn]) {
        if let Some(&first) = folios.first() {
            let f = m.folios[first as usize];
            m.lru_lock(f.memcg, f.node, folios.len() as u64);
        }
        for &pfn in folios {
            let f = &mut m.folios[pfn as usize];
            f.clear(pg::ISOLATED);
            let (node, file) = (f.node, f.is_file_lru());
            if f.test(pg::MLOCKED) {
                f.clear(pg::ACTIVE);
                f.set(pg::UNEVICTABLE);
            }
            f.set(pg::LRU);
            m.nodes[node as usize].nr_isolated[file as usize] -= 1;
            self.lru_gen_add_folio(m, pfn, false);
        }
    }

    // ---------------------------------------------------------------- the reclaim loop

    /// `should_abort_scan`.
    fn should_abort_scan(&self, m: &Machine, node: u8, sc: &ScanControl) -> bool {
        // "don't abort memcg reclaim to ensure fairness" (gone in 7.2.13).
        if !root_reclaim(sc) && !self.has(Behaviour::MemcgReclaimAbortsAtGoal) {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2) {
            return true;
        }
        if !sc.is_kswapd {
            return false;
        }
        let n = &m.nodes[node as usize];
        n.nr_free() > n.wmark.high + MIN_LRU_BATCH
    }

    /// `get_nr_to_scan` before the series (may age; -1 = rotate).
    #[allow(clippy::too_many_arguments)]
    fn get_nr_to_scan_aging(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> i64 {
        if m.below_min(sc.root(), memcg) {
            return -1;
        }
        let (need, mut nr) = self.should_run_aging(lv, swappiness);
        if nr > 0 && !m.memcgs[memcg as usize].online {
            return nr as i64;
        }
        if self.has(Behaviour::ProportionalProtection) {
            nr = self.apply_protection(m, memcg, sc, nr);
        }
        if !need || sc.priority == DEF_PRIORITY {
            return (nr >> sc.priority) as i64;
        }
        if self.age_in_reclaim(m, lv, sc, swappiness) {
            -1
        } else {
            0
        }
    }

    /// `get_nr_to_scan` after patch 04: a pure budget.
    fn get_nr_to_scan_budget(
        &self,
        m: &Machine,
        lv: usize,
        memcg: u16,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> u64 {
        let size = self.evictable_size(lv, swappiness);
        if !m.memcgs[memcg as usize].online {
            return size;
        }
        self.apply_protection(m, memcg, sc, size) >> sc.priority
    }

    /// `should_run_aging` as a predicate (patch 04): forced even at DEF_PRIORITY.
    fn should_age_now(&self, lv: usize, sc: &ScanControl, swappiness: u32) -> bool {
        let max = self.lruvecs[lv].max_seq;
        let min = self.evictable_min_seq(lv, swappiness);
        if min + MIN_NR_GENS > max {
            return true;
        }
        sc.priority != DEF_PRIORITY && min + MIN_NR_GENS == max
    }

    /// `try_to_shrink_lruvec`: returns whether the memcg should rotate to the young gen.
    pub fn try_to_shrink_lruvec(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) -> bool {
        let lv = self.lv(memcg, node);
        let swappiness = self.get_swappiness(m, sc);
        if self.has(Behaviour::RestructureReclaimLoop) {
            return self.shrink_lruvec_restructured(m, lv, memcg, node, sc, swappiness);
        }
        let mut scanned = 0;
        let mut n;
        loop {
            n = self.get_nr_to_scan_aging(m, lv, memcg, sc, swappiness);
            if n <= 0 {
                break;
            }
            let batch = (n as u64).min(if self.has(Behaviour::SmallerReclaimBatch) {
                MIN_LRU_BATCH
            } else {
                MAX_LRU_BATCH
            });
            let d = self.evict_folios(m, lv, memcg, sc, swappiness, batch);
            if d == 0 {
                break;
            }
            scanned += d;
            if scanned >= n as u64 || self.should_abort_scan(m, node, sc) {
                break;
            }
        }
        self.wake_flusher_if_all_unqueued_dirty(m, sc);
        n < 0
    }

    /// The loop after patch 04 (spec series-2026.md A.3).
    #[allow(clippy::too_many_arguments)]
    fn shrink_lruvec_restructured(
        &mut self,
        m: &mut Machine,
        lv: usize,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> bool {
        let mut budget = self.get_nr_to_scan_budget(m, lv, memcg, sc, swappiness);
        let mut need_rotate = false;
        let mut should_age = false;
        while budget > 0 {
            if m.below_min(sc.root(), memcg) {
                need_rotate = true;
                break;
            }
            if self.should_age_now(lv, sc, swappiness) {
                if self.age_in_reclaim(m, lv, sc, swappiness) {
                    need_rotate = true;
                }
                should_age = true;
                if !self.has(Behaviour::DontAbortAfterAging) {
                    break;
                }
            }
            let batch = budget.min(if self.has(Behaviour::SmallerReclaimBatch) {
                MIN_LRU_BATCH
            } else {
                MAX_LRU_BATCH
            });
            let d = self.evict_folios(m, lv, memcg, sc, swappiness, batch);
            if d == 0 || self.should_abort_scan(m, node, sc) {
                break;
            }
            if root_reclaim(sc) && should_age {
                break;
            }
            budget = budget.saturating_sub(d);
        }
        self.wake_flusher_if_all_unqueued_dirty(m, sc);
        need_rotate
    }

    /// The 2025 OOM fix (Era D, before patch 11): wake the flusher when every file page taken
    /// by this lruvec pass was unqueued dirty.
    fn wake_flusher_if_all_unqueued_dirty(&self, m: &mut Machine, sc: &ScanControl) {
        // The 2025 OOM fix is in 7.1 and in Debian's 6.12.107; it compares the sums of the
        // whole shrink_node call, not of this lruvec.
        if !self.has(Behaviour::FlusherWakeupOnUnqueuedDirty)
            || self.has(Behaviour::SimplifyDirtyWriteback)
        {
            return;
        }
        if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
            m.wakeup_flusher(true);
        }
    }

    /// `lruvec_is_sizable`.
    fn lruvec_is_sizable(
        &self,
        m: &Machine,
        memcg: u16,
        lv: usize,
        sc: &ScanControl,
        swappiness: u32,
    ) -> bool {
        let total = self.evictable_size(lv, swappiness);
        if m.memcgs[memcg as usize].online {
            total >> sc.priority > 0
        } else {
            total > 0
        }
    }

    /// `shrink_one`: reclaim one memcg's lruvec under root reclaim; returns the memcg-LRU op.
    fn shrink_one(
        &mut self,
        m: &mut Machine,
        memcg: u16,
        node: u8,
        sc: &mut ScanControl,
    ) -> MemcgLruOp {
        let lv = self.lv(memcg, node);
        m.calculate_protection(0, memcg);
        if m.below_min(0, memcg) {
            return MemcgLruOp::Young;
        }
        if m.below_low(0, memcg) {
            if self.lruvecs[lv].seg != SEG_TAIL {
                return MemcgLruOp::Tail;
            }
            m.count_memcg(memcg, Vm::MemcgLow, 1);
        }
        let success = self.try_to_shrink_lruvec(m, memcg, node, sc);
        if success && m.memcgs[memcg as usize].online {
            return MemcgLruOp::Young;
        }
        let swappiness = self.get_swappiness(m, sc);
        if !success && self.lruvec_is_sizable(m, memcg, lv, sc, swappiness) {
            return MemcgLruOp::None;
        }
        if self.lruvecs[lv].seg != SEG_TAIL {
            MemcgLruOp::Tail
        } else {
            MemcgLruOp::Young
        }
    }

    /// `lru_gen_rotate_memcg`.
    fn rotate_memcg(&mut self, memcg: u16, node: u8, op: MemcgLruOp) {
        if op == MemcgLruOp::None {
            return;
        }
        let lv = self.lv(memcg, node);
        let lru = &mut self.memcg_lru[node as usize];
        let (old_gen, seg) = (self.lruvecs[lv].mgen, self.lruvecs[lv].seg);
        let _ = seg;
        for bin in lru.fifo[old_gen].iter_mut() {
            if let Some(pos) = bin.iter().position(|&x| x == memcg) {
                bin.remove(pos);
                break;
            }
        }
        let (new_gen, new_seg, head) = match op {
            MemcgLruOp::Head => (old_gen, SEG_HEAD, true),
            MemcgLruOp::Tail => (old_gen, SEG_TAIL, false),
            MemcgLruOp::Old => (lru.old(), 0, true),
            MemcgLruOp::Young => (lru.young(), 0, false),
            MemcgLruOp::None => unreachable!(),
        };
        let bin = self.rng.random_range(0..MEMCG_NR_BINS);
        let lru = &mut self.memcg_lru[node as usize];
        if head {
            lru.fifo[new_gen][bin].push_front(memcg);
        } else {
            lru.fifo[new_gen][bin].push_back(memcg);
        }
        lru.nr_memcgs[old_gen] -= 1;
        lru.nr_memcgs[new_gen] += 1;
        if lru.nr_memcgs[old_gen] == 0 && old_gen == lru.old() {
            lru.seq += 1;
        }
        self.lruvecs[lv].mgen = new_gen;
        self.lruvecs[lv].seg = new_seg;
    }

    /// `shrink_many`: walk the memcg LRU's old generation, bin by bin from a random one.
    fn shrink_many(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let gen = self.memcg_lru[node as usize].old();
        let first_bin = self.rng.random_range(0..MEMCG_NR_BINS);
        for i in 0..MEMCG_NR_BINS {
            let bin = (first_bin + i) % MEMCG_NR_BINS;
            let members: Vec<u16> = self.memcg_lru[node as usize].fifo[gen][bin]
                .iter()
                .copied()
                .collect();
            for memcg in members {
                let lv = self.lv(memcg, node);
                if self.lruvecs[lv].mgen != gen || !m.memcgs[memcg as usize].online {
                    continue;
                }
                let op = self.shrink_one(m, memcg, node, sc);
                self.rotate_memcg(memcg, node, op);
                if self.should_abort_scan(m, node, sc) {
                    return;
                }
            }
        }
    }

    /// `set_initial_priority`.
    fn set_initial_priority(&self, m: &Machine, node: u8, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let mut reclaimable = 0;
        // Anon counts when any swap is configured (can_reclaim_anon_pages).
        let anon = m.swap.total() > 0;
        for memcg in 0..m.memcgs.len() as u16 {
            let l = self.lru_pages(memcg, node);
            reclaimable += l[2] + if anon { l[0] } else { 0 };
        }
        let fls = |x: u64| 64 - x.leading_zeros() as i32;
        let p = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = p.clamp(6, DEF_PRIORITY);
    }

    /// `lru_gen_shrink_node`: root reclaim (kswapd, direct, root memory.reclaim).
    fn lru_gen_shrink_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        if !sc.may_writepage || !sc.may_unmap {
            return;
        }
        m.lru_add_drain(self);
        // set_mm_walk .. clear_mm_walk: a walker the pass allocates ends with it.
        let walker = sc.mm_walker;
        self.set_initial_priority(m, node, sc);
        let saved = sc.nr_reclaimed;
        if sc.is_kswapd {
            sc.nr_reclaimed = 0;
        }
        let before = sc.nr_reclaimed;
        if self.cfg.memcg_walk == MemcgWalk::MemcgLru {
            self.shrink_many(m, node, sc);
        } else {
            self.shrink_node_memcgs_root(m, node, sc);
        }
        let reclaimed = sc.nr_reclaimed - before;
        if sc.is_kswapd {
            sc.nr_reclaimed += saved;
        }
        sc.mm_walker = walker;
        if reclaimed > 0 {
            m.nodes[node as usize].kswapd_failures = 0;
        }
    }

    /// Root reclaim without the memcg LRU (the heat-level RFC's patches 4, 5 and 7):
    /// `shrink_node_memcgs`, skipping memcgs too small for the priority, `try_to_shrink_lruvec`
    /// per memcg (no rotation), stopping on `should_abort_scan`.
    fn shrink_node_memcgs_root(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let walk = self.cfg.memcg_walk;
        m.walk_memcgs(node, sc, walk, |m, sc, memcg| {
            let lv = self.lv(memcg, node);
            let swappiness = self.get_swappiness(m, sc);
            if !self.lruvec_is_sizable(m, memcg, lv, sc, swappiness) {
                return Visit::Skipped;
            }
            self.try_to_shrink_lruvec(m, memcg, node, sc);
            Visit::Reclaimed {
                abort: self.should_abort_scan(m, node, sc),
            }
        });
    }

    /// Cgroup reclaim: `shrink_node_memcgs` → `lru_gen_shrink_lruvec` per memcg, partially
    /// with the shared reclaim cookie (stopping at the goal) as in the classical LRU.
    fn shrink_node_memcgs(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let root = sc.root();
        let before = sc.nr_reclaimed;
        let walk = self.cfg.memcg_walk;
        m.walk_memcgs(node, sc, walk, |m, sc, memcg| {
            // lru_gen_shrink_lruvec: set_mm_walk .. clear_mm_walk around the lruvec pass.
            m.lru_add_drain(self);
            let walker = sc.mm_walker;
            let rotate = self.try_to_shrink_lruvec(m, memcg, node, sc);
            sc.mm_walker = walker;
            if rotate && walk == MemcgWalk::MemcgLru {
                self.rotate_memcg(memcg, node, MemcgLruOp::Young);
            }
            Visit::Reclaimed { abort: false }
        });
        // Patch 15: the classical congestion post-processing now applies to MGLRU.
        if self.has(Behaviour::UnifyWritebackThrottling) {
            if sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
                m.congested(root, node)[1] = true;
            }
            if !sc.is_kswapd && m.congested(root, node).iter().any(|&c| c) {
                reclaim_throttle(m, self, node, VmscanThrottle::Congested);
            }
        }
        if sc.nr_reclaimed > before {
            m.nodes[node as usize].kswapd_failures = 0;
        }
    }

    /// `lruvec_is_reclaimable` for min_ttl: not below min, sizable, and the oldest evictable
    /// generation was born more than min_ttl ago.
    #[allow(clippy::too_many_arguments)]
    fn lruvec_is_reclaimable(
        &self,
        m: &Machine,
        memcg: u16,
        node: u8,
        sc: &ScanControl,
        min_ttl_ns: u64,
    ) -> bool {
        let lv = self.lv(memcg, node);
        if m.below_min(0, memcg) {
            return false;
        }
        let swappiness = self.get_swappiness(m, sc);
        if !self.lruvec_is_sizable(m, memcg, lv, sc, swappiness) {
            return false;
        }
        let g = &self.lruvecs[lv];
        let seq = if self.has(Behaviour::IndependentMinSeq) {
            self.evictable_min_seq(lv, swappiness)
        } else {
            g.min_seq[FILE]
        };
        let birth = g.timestamps[gen_of(seq) as usize];
        birth + min_ttl_ns < m.now()
    }

    /// `lru_gen_age_node` (6.12+; 6.1 is `lru_gen_age_node_6_1`): with min_ttl_ms set, OOM-kill
    /// when no memcg's working set of the last min_ttl_ms can be kept.
    fn lru_gen_age_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        let min_ttl_ns = self.cfg.min_ttl_ms * 1_000_000;
        let memcgs = m.memcg_subtree(0);
        if min_ttl_ns == 0 {
            return;
        }
        self.set_initial_priority(m, node, sc);
        let mut reclaimable = false;
        for &memcg in &memcgs {
            m.calculate_protection(0, memcg);
            if !reclaimable && self.lruvec_is_reclaimable(m, memcg, node, sc, min_ttl_ns) {
                reclaimable = true;
            }
        }
        if !reclaimable {
            m.out_of_memory(self, None);
        }
    }
}

/// `lru_gen_inc_refs` (7.x) without MGLRU-FG: the first reference sets PG_referenced, the next
/// ones count up to LRU_REFS_MAX, then PG_workingset.
fn lru_gen_inc_refs(f: &mut crate::machine::Folio) {
    if f.test(pg::UNEVICTABLE) {
        return;
    }
    if !f.test(pg::REFERENCED) {
        f.set_refs(0);
        f.set(pg::REFERENCED);
    } else if f.refs() == LRU_REFS_MAX {
        f.set(pg::WORKINGSET);
    } else {
        f.set_refs(f.refs() + 1);
    }
}

/// Root reclaim: no target memcg, or the root memcg.
fn root_reclaim(sc: &ScanControl) -> bool {
    sc.target_mem_cgroup.is_none_or(|t| t == 0)
}

/// pgscan and pgsteal events of the reclaimer.
fn reclaimer_events(sc: &ScanControl) -> (Vm, Vm) {
    if sc.is_kswapd {
        (Vm::PgscanKswapd, Vm::PgstealKswapd)
    } else {
        (Vm::PgscanDirect, Vm::PgstealDirect)
    }
}

impl Policy for Mglru {
    fn folio_add_lru_in_fault(&mut self, m: &mut Machine, pfn: Pfn) {
        self.add_in_fault(m, pfn);
    }

    /// The walk iteration of lruvec `token` ends (`sync_aging`).
    fn timer(&mut self, m: &mut Machine, token: u64) {
        self.sync_aging(m, token as usize);
    }

    fn name(&self) -> String {
        let mut s = format!("mglru:{}", self.cfg.kernel);
        let base = MglruConfig::new(self.cfg.kernel).switches;
        for w in Switch::ALL {
            if self.cfg.switches.has(w) && !base.has(w) {
                s.push_str(&format!("+{w}"));
            }
            if !self.cfg.switches.has(w) && base.has(w) {
                s.push_str(&format!("-{w}"));
            }
        }
        s
    }

    fn memcg_created(&mut self, m: &Machine, memcg: u16) {
        let need = (memcg as usize + 1) * self.nodes;
        let now = m.now();
        while self.lruvecs.len() < need {
            self.lruvecs.push(GenLruvec::new(now));
        }
        self.lists.ensure_lists(need * MAX_NR_GENS as usize * 2);
        // Online: the tail of a random bin of the old generation.
        for node in 0..self.nodes as u8 {
            let lv = self.lv(memcg, node);
            let bin = self.rng.random_range(0..MEMCG_NR_BINS);
            let lru = &mut self.memcg_lru[node as usize];
            let gen = lru.old();
            lru.fifo[gen][bin].push_back(memcg);
            lru.nr_memcgs[gen] += 1;
            self.lruvecs[lv].mgen = gen;
        }
    }

    fn lruvec_add_folio(&mut self, m: &mut Machine, pfn: Pfn, tail: bool) {
        self.lru_gen_add_folio(m, pfn, tail);
    }

    fn lruvec_del_folio(&mut self, m: &mut Machine, pfn: Pfn) {
        self.lru_gen_del_folio(m, pfn, false);
    }

    /// `folio_mark_accessed` → `lru_gen_inc_refs` (no list move, no activation).
    fn folio_mark_accessed(&mut self, m: &mut Machine, pfn: Pfn) {
        let f = m.folios[pfn as usize];
        if f.test(pg::UNEVICTABLE) {
            return;
        }
        if self.has(Behaviour::WorkingsetTopTier) {
            if !f.test(pg::REFERENCED) {
                let fm = &mut m.folios[pfn as usize];
                fm.set_refs(0);
                fm.set(pg::REFERENCED);
                return;
            }
            if f.refs() == LRU_REFS_MAX {
                if self.has(Behaviour::FgPromotion) && f.is_file_lru() && f.gen() != 0 {
                    self.fg_promote(m, pfn);
                    return;
                }
                m.folios[pfn as usize].set(pg::WORKINGSET);
                return;
            }
            let refs = m.folios[pfn as usize].refs() + 1;
            m.folios[pfn as usize].set_refs(refs);
        } else {
            let fm = &mut m.folios[pfn as usize];
            if !fm.test(pg::REFERENCED) {
                fm.set(pg::REFERENCED);
            } else if !fm.test(pg::WORKINGSET) {
                fm.set(pg::WORKINGSET);
            } else if fm.refs() < LRU_REFS_MAX {
                fm.set_refs(fm.refs() + 1);
            }
        }
    }

    fn folio_rotate_reclaimable(&mut self, m: &mut Machine, pfn: Pfn) {
        let f = m.folios[pfn as usize];
        if !f.test(pg::LRU) || f.test(pg::DIRTY) || f.test(pg::UNEVICTABLE) {
            return;
        }
        self.lru_gen_del_folio(m, pfn, true);
        m.folios[pfn as usize].clear(pg::ACTIVE);
        self.lru_gen_add_folio(m, pfn, true);
        m.count(f.memcg, Vm::Pgrotated, 1);
    }

    /// `lru_gen_eviction`.
    fn workingset_eviction(&mut self, m: &mut Machine, pfn: Pfn, _target: Option<u16>) -> u64 {
        let f = m.folios[pfn as usize];
        let lv = self.lv(f.memcg, f.node);
        let t = f.is_file_lru() as usize;
        let refs = self.folio_lru_refs(&f);
        let ws = f.test(pg::WORKINGSET);
        let tier = self.tier_of(refs, ws);
        let min_seq = self.lruvecs[lv].min_seq[t];
        self.lruvecs[lv].evicted[t][tier] += 1;
        let token = (min_seq << 2) | refs.saturating_sub(1);
        let bit = if self.has(Behaviour::WorkingsetTopTier) {
            ws
        } else {
            refs != 0
        };
        super::pack_shadow(f.memcg, f.node, token, bit)
    }

    /// `lru_gen_refault`.
    fn workingset_refault(&mut self, m: &mut Machine, pfn: Pfn, shadow: u64) {
        let (memcgid, node, token, ws) = super::unpack_shadow(shadow);
        let f = m.folios[pfn as usize];
        if memcgid != f.memcg || node != f.node {
            return;
        }
        let lv = self.lv(f.memcg, f.node);
        let t = f.is_file_lru() as usize;
        let (refault_ev, activate_ev, restore_ev) = if t == FILE {
            (
                Vm::WorkingsetRefaultFile,
                Vm::WorkingsetActivateFile,
                Vm::WorkingsetRestoreFile,
            )
        } else {
            (
                Vm::WorkingsetRefaultAnon,
                Vm::WorkingsetActivateAnon,
                Vm::WorkingsetRestoreAnon,
            )
        };
        // 6.1.176 counts only recent refaults.
        if self.has(Behaviour::RefaultCountsEveryRefault) {
            m.count(f.memcg, refault_ev, 1);
        }
        let g = &self.lruvecs[lv];
        let recent = if self.has(Behaviour::RefaultRecentWindow) {
            let max = g.max_seq & (EVICTION_MASK >> 2);
            max.abs_diff(token >> 2) < MAX_NR_GENS
        } else {
            (token >> 2) == (g.min_seq[t] & (EVICTION_MASK >> 2))
        };
        if !recent {
            return;
        }
        let in_fault = m.ctx.in_lru_fault;
        if self.has(Behaviour::WorkingsetTopTier) {
            let refs = (token & 3) + 1;
            let tier = self.tier_of(refs, ws);
            self.lruvecs[lv].refaulted[t][tier] += 1;
            if in_fault && (ws || !self.has(Behaviour::RefaultActivateWorkingsetOnly)) {
                m.count(f.memcg, activate_ev, 1);
            }
            let fm = &mut m.folios[pfn as usize];
            if ws {
                fm.set(pg::WORKINGSET);
                m.count(f.memcg, restore_ev, 1);
            } else {
                fm.set_refs((refs - 1) as u8);
            }
        } else {
            let refs = (token & 3) + ws as u64;
            let tier = order_base_2(refs + 1);
            self.lruvecs[lv].refaulted[t][tier] += 1;
            // 6.1.176 counts the refault here and the activation in sort_folio.
            if self.has(Behaviour::RefaultCountsEveryRefault) {
                m.count(f.memcg, activate_ev, 1);
            } else {
                m.count(f.memcg, refault_ev, 1);
            }
            if in_fault || refs >= 3 {
                let fm = &mut m.folios[pfn as usize];
                fm.set_refs(LRU_REFS_MAX);
                fm.set(pg::WORKINGSET);
                m.count(f.memcg, restore_ev, 1);
            }
        }
    }

    /// `folio_check_references` with the MGLRU branch (Era C); Era A/B use the classical rules
    /// after the rmap walk (with look-around in every era).
    fn folio_check_references(&mut self, m: &mut Machine, pfn: Pfn, sc: &ScanControl) -> FolioRef {
        // Era A/B shrink_folio_list keeps a mapped folio that a concurrent folio_update_gen
        // marked PG_referenced, before any rmap walk.
        let f = m.folios[pfn as usize];
        if !self.has(Behaviour::SetRefsOnPteYoung) && f.mapcount > 0 && f.test(pg::REFERENCED) {
            return FolioRef::Keep;
        }
        let r = m.folio_referenced(pfn, sc.target_mem_cgroup);
        // set_mm_walk: kswapd and debugfs writers hold a walker in every era, proactive
        // reclaim from 6.12 on.
        let walker = sc.is_kswapd
            || sc.mm_walker
            || (sc.proactive && self.has(Behaviour::ProactiveMmWalker));
        let can_swap = if self.has(Behaviour::GetPfnFolioListedOnly) {
            true
        } else if self.has(Behaviour::LookAroundCanSwapByType) {
            !f.is_file_lru()
        } else {
            !walker || self.get_swappiness_6_1(m) != 0
        };
        walk::look_around(self, m, pfn, walker, can_swap);
        if r.vm_flags & vm::LOCKED != 0 {
            m.folios[pfn as usize].set(pg::MLOCKED);
            return FolioRef::Activate;
        }
        if self.has(Behaviour::SetRefsOnPteYoung) {
            if r.referenced == 0 {
                return FolioRef::Reclaim;
            }
            return if self.lru_gen_set_refs(m, pfn) {
                FolioRef::Activate
            } else {
                FolioRef::Keep
            };
        }
        let rf = m.folios[pfn as usize].test_clear(pg::REFERENCED);
        let file = f.is_file_lru();
        if r.referenced > 0 {
            m.folios[pfn as usize].set(pg::REFERENCED);
            if rf || r.referenced > 1 || (r.vm_flags & vm::EXEC != 0 && file) {
                return FolioRef::Activate;
            }
            return FolioRef::Keep;
        }
        if rf && file {
            return FolioRef::ReclaimClean;
        }
        FolioRef::Reclaim
    }

    fn shrink_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        sc.nr = Default::default();
        if !self.has(Behaviour::LruGenShrinkNode) {
            self.shrink_node_6_1(m, node, sc);
        } else if root_reclaim(sc) {
            self.lru_gen_shrink_node(m, node, sc);
        } else {
            self.shrink_node_memcgs(m, node, sc);
        }
    }

    fn kswapd_age_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl) {
        if self.has(Behaviour::AgingFromEvictionPath) {
            self.lru_gen_age_node(m, node, sc);
        } else {
            self.lru_gen_age_node_6_1(m, node, sc);
        }
    }

    fn snapshot_refaults(&mut self, m: &mut Machine, target: Option<u16>, node: u8) {
        if let Some(t) = target {
            m.congested(t, node)[1] = false;
        }
    }

    fn lru_pages(&self, memcg: u16, node: u8) -> [u64; 5] {
        let lv = self.lv(memcg, node);
        if lv >= self.lruvecs.len() {
            return [0; 5];
        }
        let g = &self.lruvecs[lv];
        let mut out = [0u64; 5];
        for seq in g.min_seq[ANON].min(g.min_seq[FILE])..=g.max_seq {
            let active = seq + 1 >= g.max_seq;
            for t in 0..2 {
                out[t * 2 + active as usize] += g.pages(seq, t);
            }
        }
        out[4] = g.unevictable;
        out
    }

    fn lru_gen_show(&self, m: &Machine, full: bool) -> Option<String> {
        Some(debugfs::show(self, m, full))
    }

    fn lru_gen_write(&mut self, m: &mut Machine, cmd: &str) -> Option<Result<(), &'static str>> {
        Some(debugfs::write(self, m, cmd))
    }

    fn is_lru_gen(&self) -> bool {
        true
    }

    fn check_invariants(&self, m: &Machine) -> Result<(), String> {
        for memcg in 0..m.memcgs.len() as u16 {
            for node in 0..self.nodes as u8 {
                let lv = self.lv(memcg, node);
                let g = &self.lruvecs[lv];
                let mut count = [[0i64; 2]; MAX_NR_GENS as usize];
                for t in 0..2 {
                    let nr_gens = g.nr_gens(t);
                    if !(MIN_NR_GENS..=MAX_NR_GENS).contains(&nr_gens) {
                        return Err(format!(
                            "lruvec {memcg}/{node}: {nr_gens} generations of type {t}"
                        ));
                    }
                    for gen in 0..MAX_NR_GENS as u8 {
                        for pfn in self.lists.iter(self.list_id(lv, gen, t)) {
                            let f = &m.folios[pfn as usize];
                            if !f.test(pg::LRU)
                                || f.gen() == 0
                                || f.memcg != memcg
                                || f.node != node
                                || f.is_file_lru() as usize != t
                            {
                                return Err(format!(
                                    "pfn {pfn} on gen list {gen}/{t} with flags {:#x} gen {}",
                                    f.flags,
                                    f.gen()
                                ));
                            }
                            if f.test(pg::ACTIVE) {
                                return Err(format!("pfn {pfn} has PG_active on a gen list"));
                            }
                            let seq_ok =
                                (g.min_seq[t]..=g.max_seq).any(|s| gen_of(s) == f.gen() - 1);
                            if !seq_ok {
                                return Err(format!(
                                    "pfn {pfn}: gen {} outside [{}, {}]",
                                    f.gen() - 1,
                                    g.min_seq[t],
                                    g.max_seq
                                ));
                            }
                            count[(f.gen() - 1) as usize][t] += 1;
                        }
                    }
                }
                if count != g.nr_pages {
                    return Err(format!(
                        "lruvec {memcg}/{node}: nr_pages {:?} but folios {count:?}",
                        g.nr_pages
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Mglru {
    /// MGLRU-FG patch 06 (experimental): an fd access that overflows a file folio's refs
    /// counter resets it and promotes the folio one generation.
    fn fg_promote(&mut self, m: &mut Machine, pfn: Pfn) {
        let f = m.folios[pfn as usize];
        let lv = self.lv(f.memcg, f.node);
        let g = &self.lruvecs[lv];
        let t = FILE;
        let cur = (g.min_seq[t]..=g.max_seq)
            .find(|&s| gen_of(s) == f.gen() - 1)
            .unwrap_or(g.max_seq);
        let new_gen = gen_of((cur + 1).min(g.max_seq));
        let fm = &mut m.folios[pfn as usize];
        fm.set_refs(0);
        fm.set_gen(new_gen + 1);
        self.update_size(lv, t, Some(f.gen() - 1), Some(new_gen));
    }
}
