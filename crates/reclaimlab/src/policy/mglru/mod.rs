//! The multi-generational LRU (spec mglru.md and series-2026.md), per kernel era:
//! 6.1 (Era A), 6.12 (Era B), 7.1 (Era C with the Era D items) and 7.2 (7.1 with the 2026
//! series, each patch a [`Switch`]). Lists, generations, tiers and placement live here; the
//! rest follows vmscan.c's sections: the PID controller (`feedback.rs`), aging (`aging.rs`, with
//! the page-table walk in `walk.rs`), eviction (`eviction.rs`), the per-lruvec reclaim loop
//! (`reclaim.rs`), the memcg LRU (`memcg_lru.rs`), 6.1's reclaim path (`v6_1.rs`) and debugfs
//! (`debugfs.rs`); shrink_folio_list and the reclaim drivers are the machine's.

// Loops over the two types index several per-type arrays at once, as the kernel's do.
#![allow(clippy::needless_range_loop)]

mod aging;
pub mod debugfs;
mod eviction;
mod feedback;
mod memcg_lru;
mod reclaim;
pub mod switches;
mod v6_1;
pub mod walk;

use memcg_lru::MemcgLru;

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
            memcg_walk: Self::default_memcg_walk(Behaviours::of(kernel)),
        }
    }

    /// The memcg walk of a kernel with these behaviours: the memcg LRU with `memcg-lru` (6.1
    /// has none: mem_cgroup_iter).
    pub fn default_memcg_walk(b: Behaviours) -> MemcgWalk {
        if !b.has(Behaviour::MemcgLru) {
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

/// An lruvec (`mem_cgroup_lruvec(memcg, pgdat)`): its memcg, its node and its index in
/// [`Mglru::lruvecs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lruvec {
    pub(crate) idx: usize,
    pub(crate) memcg: u16,
    pub(crate) node: u8,
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
    /// The lruvec of a memcg on a node.
    #[inline]
    pub(crate) fn lruvec_of(&self, memcg: u16, node: u8) -> Lruvec {
        Lruvec {
            idx: self.lv(memcg, node),
            memcg,
            node,
        }
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
        let base = self.cfg.kernel.behaviours();
        format!(
            "mglru:{}{}",
            self.cfg.kernel,
            self.cfg.switches.modifiers_from(base)
        )
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
            // rmap lock contention: rotate, PG_referenced kept (7.x tests it after).
            if r.contended {
                return FolioRef::Keep;
            }
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
        // rmap lock contention: rotate (PG_referenced already cleared, 6.1 and 6.12).
        if r.contended {
            return FolioRef::Keep;
        }
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
