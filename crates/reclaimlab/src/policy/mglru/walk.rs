//! MGLRU aging through page tables: the per-memcg mm list walk (`iterate_mm_list`, `walk_mm`,
//! `walk_pmd_range`, `walk_pte_range`) with the non-leaf PMD accessed-bit shortcut and the
//! two Bloom filters, and the rmap look-around (`lru_gen_look_around`) that feeds them.

use super::{gen_of, Lruvec, Mglru};
use crate::behaviour::Behaviour;
use crate::consts::*;
use crate::machine::mm::{vm, PteLoc, VmaKind, PTRS_PER_PTE};
use crate::machine::{pg, Machine, Pfn};

/// mm-walk statistics: LEAF_TOTAL, LEAF_OLD, LEAF_YOUNG, NONLEAF_TOTAL, NONLEAF_FOUND,
/// NONLEAF_ADDED (Era C shows total, young, found, added).
pub const NR_MM_STATS: usize = 6;
pub const MM_LEAF_TOTAL: usize = 0;
pub const MM_LEAF_OLD: usize = 1;
pub const MM_LEAF_YOUNG: usize = 2;
pub const MM_NONLEAF_TOTAL: usize = 3;
pub const MM_NONLEAF_FOUND: usize = 4;
pub const MM_NONLEAF_ADDED: usize = 5;

/// `struct lru_gen_mm_state` of one lruvec.
#[derive(Clone, Debug)]
pub struct MmState {
    /// The mm-list iteration counter (`mm_state->seq`).
    pub seq: u64,
    /// How many mms the list had when the last iteration ended: later ones are newcomers
    /// and are force-scanned (the `tail` cursor).
    pub tail_len: usize,
    /// The two Bloom filters (None = not allocated: every test passes).
    pub filters: [Option<Vec<u64>>; 2],
    pub stats: [u64; NR_MM_STATS],
    /// An mm-list iteration under way: the walker that started it finishes at `until`, and
    /// only then do `seq` and `max_seq` advance; a reclaimer that arrives before joins it.
    pub walking: Option<WalkInProgress>,
    /// mms skipped because `mmap_read_trylock` failed (model-only count).
    pub trylock_failed: u64,
}

/// An mm-list iteration other reclaimers can still join (`iterate_mm_list` hands each the
/// next mm until the list ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkInProgress {
    /// The `max_seq` being aged from.
    pub seq: u64,
    pub swappiness: u32,
    /// When the last mm is walked and `inc_max_seq` runs.
    pub until: u64,
    /// When the last mm is handed out (`iterate_mm_list` reaches the list's end for the next
    /// walker to ask after it).
    pub last_handout: u64,
    /// Reclaimers walking it: each joiner takes its share of the mms left.
    pub walkers: u32,
}

impl MmState {
    pub fn new(seq: u64) -> Self {
        MmState {
            seq,
            tail_len: 0,
            filters: [None, None],
            stats: [0; NR_MM_STATS],
            walking: None,
            trylock_failed: 0,
        }
    }
}

/// The two Bloom filter keys of a PTE table (`get_item_key` over the PMD entry's identity):
/// a multiplicative hash to 30 bits, split in two 15-bit keys.
pub fn bloom_keys(pid: u32, vma: u16, pmd: u64) -> (usize, usize) {
    let item = ((pid as u64) << 40) ^ ((vma as u64) << 28) ^ pmd;
    let h = item.wrapping_mul(0x61c8_8646_80b5_83eb) >> (64 - 2 * BLOOM_FILTER_SHIFT);
    let mask = (1u64 << BLOOM_FILTER_SHIFT) - 1;
    ((h & mask) as usize, (h >> BLOOM_FILTER_SHIFT) as usize)
}

fn bit(filter: &[u64], k: usize) -> bool {
    filter[k / 64] & (1 << (k % 64)) != 0
}

/// `test_bloom_filter`: both bits set, or the filter is not allocated.
pub fn test_bloom(st: &MmState, seq: u64, keys: (usize, usize)) -> bool {
    match &st.filters[(seq % 2) as usize] {
        None => true,
        Some(f) => bit(f, keys.0) && bit(f, keys.1),
    }
}

/// `update_bloom_filter`.
pub fn update_bloom(st: &mut MmState, seq: u64, keys: (usize, usize)) {
    if let Some(f) = &mut st.filters[(seq % 2) as usize] {
        f[keys.0 / 64] |= 1 << (keys.0 % 64);
        f[keys.1 / 64] |= 1 << (keys.1 % 64);
    }
}

/// `reset_bloom_filter`: clear (allocating it if absent).
pub fn reset_bloom(st: &mut MmState, seq: u64) {
    let words = (1usize << BLOOM_FILTER_SHIFT) / 64;
    match &mut st.filters[(seq % 2) as usize] {
        Some(f) => f.iter_mut().for_each(|w| *w = 0),
        slot => *slot = Some(vec![0; words]),
    }
}

/// `suitable_to_scan`: at least one young PTE per 8.
fn suitable_to_scan(total: u64, young: u64) -> bool {
    young * SUITABLE_TO_SCAN_RATIO >= total
}

/// The folio a young PTE maps, if MGLRU may update it for lruvec (`memcg`, `node`): on a
/// generation list (`get_pfn_folio`), of that node and memcg.
/// `get_pfn_folio`: 7.x takes only folios on a generation list of this memcg and node; 6.x
/// also takes folios off the lists (isolated, in a per-CPU batch), which `folio_update_gen`
/// then marks PG_referenced, but skips anon folios when it cannot swap.
fn folio_for(
    m: &Machine,
    pfn: Pfn,
    memcg: u16,
    node: u8,
    listed_only: bool,
    can_swap: bool,
) -> bool {
    let f = &m.folios[pfn as usize];
    if f.memcg != memcg || f.node != node {
        return false;
    }
    if listed_only {
        f.gen() != 0 && f.test(pg::LRU)
    } else {
        f.is_file_lru() || can_swap
    }
}

/// `walk_update_folio`'s dirty propagation: a dirty PTE dirties a folio that can be dirtied.
fn propagate_dirty(m: &mut Machine, pfn: Pfn, pte_dirty: bool) {
    let f = &m.folios[pfn as usize];
    let anon_no_swapcache = f.is_anon() && f.test(pg::SWAPBACKED) && !f.test(pg::SWAPCACHE);
    if pte_dirty && !f.test(pg::DIRTY) && !anon_no_swapcache {
        m.folio_mark_dirty(pfn);
    }
}

/// One PTE as both walkers see it (`get_pte_pfn`, `get_pfn_folio`, `ptep_test_and_clear_young`,
/// `walk_update_folio`'s dirty propagation): if it is present and young and maps a folio of the
/// lruvec on a generation list, clear its young bit, dirty the folio if the PTE is dirty, and
/// return the folio.
fn clear_young_pte(
    m: &mut Machine,
    pid: u32,
    vi: usize,
    i: u64,
    lruvec: Lruvec,
    listed_only: bool,
    can_swap: bool,
) -> Option<Pfn> {
    let Lruvec { memcg, node, .. } = lruvec;
    let pte = m.procs[pid as usize].vmas[vi].ptes[i as usize];
    if !pte.is_present() || !pte.young() {
        return None;
    }
    let pfn = pte.pfn();
    if !folio_for(m, pfn, memcg, node, listed_only, can_swap) {
        return None;
    }
    m.procs[pid as usize].vmas[vi].ptes[i as usize].mkold();
    propagate_dirty(m, pfn, pte.dirty());
    Some(pfn)
}

/// `iterate_mm_list` + `walk_mm` for every mm of the lruvec's memcg: a whole iteration, walked
/// by the reclaimer that started it, at `pte_walk_ns` per PTE and `pte_young_ns` per young one.
/// Returns when the last mm walked was handed out (the walker's time then). The caller ends the
/// iteration (`mm_state->seq`, `inc_max_seq`).
pub fn walk_mm_list(
    p: &mut Mglru,
    m: &mut Machine,
    lv: usize,
    seq: u64,
    swappiness: u32,
    force_scan: bool,
) -> u64 {
    let mut last_handout = m.now();
    let memcg = (lv / p.nodes) as u16;
    let node = (lv % p.nodes) as u8;
    reset_bloom(&mut p.lruvecs[lv].mm, seq + 1);
    let nmm = m.procs.len();
    let mut position = 0;
    for pid in 0..nmm as u32 {
        let pr = &m.procs[pid as usize];
        if !pr.alive || pr.memcg != memcg {
            continue;
        }
        let newcomer = position >= p.lruvecs[lv].mm.tail_len;
        position += 1;
        let force = force_scan || newcomer;
        let used = pr.mm_used & (1 << (node % 64)) != 0;
        if !force && !used {
            continue;
        }
        m.procs[pid as usize].mm_used &= !(1 << (node % 64));
        if !p.has(Behaviour::WalkSmallMms) && pr_rss_small(m, pid) && !force {
            continue;
        }
        last_handout = m.now();
        // walk_mm: `mmap_read_trylock` fails while munmap holds mmap_lock for write, and the
        // mm is skipped for this iteration.
        if m.procs[pid as usize].mmap_write_until > m.now() {
            p.lruvecs[lv].mm.trylock_failed += 1;
            continue;
        }
        walk_mm(p, m, p.lruvec_of(memcg, node), pid, seq, swappiness, force);
    }
    p.lruvecs[lv].mm.tail_len = position;
    last_handout
}

/// Era A/B `should_skip_mm`: an mm with fewer than MIN_LRU_BATCH resident pages.
fn pr_rss_small(m: &Machine, pid: u32) -> bool {
    m.procs[pid as usize].rss < MIN_LRU_BATCH
}

/// `should_skip_vma`: a tmpfs mapping (`shmem_mapping`) is skipped as anon memory is, when
/// the walk may not swap.
fn skip_vma(m: &Machine, flags: u32, kind: VmaKind, swappiness: u32, has_recency: bool) -> bool {
    if !has_recency || flags & vm::LOCKED != 0 {
        return true;
    }
    match kind {
        VmaKind::Anon => swappiness == 0,
        VmaKind::File { file } if m.file_is_shmem(file) => swappiness == 0,
        VmaKind::File { .. } => swappiness > MAX_SWAPPINESS,
    }
}

/// `walk_mm` → `walk_pmd_range` over every vma of one mm.
fn walk_mm(
    p: &mut Mglru,
    m: &mut Machine,
    lruvec: Lruvec,
    pid: u32,
    seq: u64,
    swappiness: u32,
    force: bool,
) {
    let lv = lruvec.idx;
    let nonleaf = p.cfg.enabled & LRU_GEN_NONLEAF_YOUNG != 0;
    for vi in 0..m.procs[pid as usize].vmas.len() {
        let v = &m.procs[pid as usize].vmas[vi];
        if skip_vma(m, v.flags, v.kind, swappiness, v.has_recency()) {
            continue;
        }
        let nr_pmds = v.pmd_young.len() as u64;
        for pmd in 0..nr_pmds {
            p.lruvecs[lv].mm.stats[MM_NONLEAF_TOTAL] += 1;
            if !force && nonleaf {
                let v = &mut m.procs[pid as usize].vmas[vi];
                if !v.pmd_young[pmd as usize] {
                    continue;
                }
                v.pmd_young[pmd as usize] = false;
            }
            let keys = bloom_keys(pid, vi as u16, pmd);
            if !force && !test_bloom(&p.lruvecs[lv].mm, seq, keys) {
                continue;
            }
            p.lruvecs[lv].mm.stats[MM_NONLEAF_FOUND] += 1;
            let (total, young) = walk_pte_range(p, m, lruvec, pid, vi, pmd, swappiness != 0);
            if suitable_to_scan(total, young) {
                p.lruvecs[lv].mm.stats[MM_NONLEAF_ADDED] += 1;
                update_bloom(&mut p.lruvecs[lv].mm, seq + 1, keys);
            }
        }
    }
}

/// `walk_pte_range`: clear young PTEs of one PTE table and move their folios to the youngest
/// generation. Returns (PTEs looked at, young ones).
fn walk_pte_range(
    p: &mut Mglru,
    m: &mut Machine,
    lruvec: Lruvec,
    pid: u32,
    vi: usize,
    pmd: u64,
    can_swap: bool,
) -> (u64, u64) {
    let lv = lruvec.idx;
    let len = m.procs[pid as usize].vmas[vi].ptes.len() as u64;
    let start = pmd * PTRS_PER_PTE;
    let end = (start + PTRS_PER_PTE).min(len);
    let max_gen = gen_of(p.lruvecs[lv].max_seq);
    let (mut total, mut young) = (0, 0);
    for i in start..end {
        total += 1;
        let Some(pfn) = clear_young_pte(
            m,
            pid,
            vi,
            i,
            lruvec,
            p.has(Behaviour::GetPfnFolioListedOnly),
            can_swap,
        ) else {
            continue;
        };
        p.folio_update_gen(m, pfn, max_gen);
        young += 1;
    }
    let st = &mut p.lruvecs[lv].mm.stats;
    st[MM_LEAF_TOTAL] += total;
    st[MM_LEAF_YOUNG] += young;
    st[MM_LEAF_OLD] += total - young;
    spend_pte_walk(m, total, young);
    (total, young)
}

/// The CPU of a walk over `total` PTEs of which `young` were young and cleared
/// (`walk_pte_range`, `lru_gen_look_around`): every entry is read, young ones also cost the
/// folio's lookup, the clear and the generation update.
fn spend_pte_walk(m: &mut Machine, total: u64, young: u64) {
    let cost = &m.cfg.cost;
    m.spend_sys(total * cost.pte_walk_ns + young * cost.pte_young_ns);
}

/// `lru_gen_look_around`: for each young PTE that `folio_referenced` found for the folio being
/// reclaimed, look at up to 64 neighbouring PTEs of the same PTE table and update their
/// folios; feed dense tables to the Bloom filter of the next walk.
///
/// `can_swap`: whether anon neighbours count (6.1: `!walk || walk->can_swap`; 6.12: the
/// target is anon; 7.x does not ask).
pub fn look_around(p: &mut Mglru, m: &mut Machine, target: Pfn, walker: bool, can_swap: bool) {
    if m.young_ptes.is_empty() {
        return;
    }
    let locs = std::mem::take(&mut m.young_ptes);
    let tf = m.folios[target as usize];
    let lruvec = p.lruvec_of(tf.memcg, tf.node);
    for &loc in &locs {
        look_around_one(p, m, lruvec, loc, walker, can_swap);
    }
    m.young_ptes = locs;
}

fn look_around_one(
    p: &mut Mglru,
    m: &mut Machine,
    lruvec: Lruvec,
    loc: PteLoc,
    walker: bool,
    can_swap: bool,
) {
    let lv = lruvec.idx;
    let v = &m.procs[loc.pid as usize].vmas[loc.vma as usize];
    if v.flags & vm::LOCKED != 0 {
        return;
    }
    let len = v.ptes.len() as u64;
    let pmd = loc.index / PTRS_PER_PTE;
    let (mut start, mut end) = (pmd * PTRS_PER_PTE, ((pmd + 1) * PTRS_PER_PTE).min(len));
    if end - start <= 1 {
        return;
    }
    let half = MIN_LRU_BATCH / 2;
    if end - start > MIN_LRU_BATCH {
        if loc.index - start < half {
            end = start + MIN_LRU_BATCH;
        } else if end - loc.index <= half {
            start = end - MIN_LRU_BATCH;
        } else {
            start = loc.index - half;
            end = loc.index + half;
        }
    }
    let max_gen = gen_of(p.lruvecs[lv].max_seq);
    let mut young = 1;
    // 6.1 without a walker: the folios to promote, activated one by one if fewer than
    // PAGEVEC_SIZE, else moved to max_seq under the LRU lock.
    let mut bitmap = [0 as Pfn; MIN_LRU_BATCH as usize];
    let mut nr_bitmap = 0;
    for i in start..end {
        if i == loc.index {
            continue;
        }
        let Some(pfn) = clear_young_pte(
            m,
            loc.pid,
            loc.vma as usize,
            i,
            lruvec,
            p.has(Behaviour::GetPfnFolioListedOnly),
            can_swap,
        ) else {
            continue;
        };
        young += 1;
        let gen = m.folios[pfn as usize].gen();
        if walker {
            p.folio_update_gen(m, pfn, max_gen);
        } else if p.has(Behaviour::SetRefsOnPteYoung) {
            if p.lru_gen_set_refs(m, pfn) && gen != max_gen + 1 {
                m.folio_activate(p, pfn);
            }
        } else if gen == 0 {
            m.folios[pfn as usize].set(pg::REFERENCED);
        } else if gen != max_gen + 1 {
            if !p.has(Behaviour::LookAroundActivatesDirectly) {
                bitmap[nr_bitmap] = pfn;
                nr_bitmap += 1;
            } else {
                m.folio_activate(p, pfn);
            }
        }
    }
    if nr_bitmap > 0 && nr_bitmap < PAGEVEC_SIZE {
        for &pfn in &bitmap[..nr_bitmap] {
            m.folio_activate(p, pfn);
        }
    } else {
        let max_gen = gen_of(p.lruvecs[lv].max_seq);
        for &pfn in &bitmap[..nr_bitmap] {
            p.folio_update_gen(m, pfn, max_gen);
        }
    }
    // The target's own PTE was cleared by `folio_referenced_one` and charged there.
    spend_pte_walk(m, end - start, young - 1);
    if suitable_to_scan(end - start, young) {
        let seq = p.lruvecs[lv].max_seq;
        update_bloom(
            &mut p.lruvecs[lv].mm,
            seq,
            bloom_keys(loc.pid, loc.vma, pmd),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_filter_tests_what_was_added_and_unallocated_passes() {
        let mut st = MmState::new(2);
        let k = bloom_keys(1, 0, 7);
        assert!(test_bloom(&st, 3, k), "an unallocated filter tests true");
        reset_bloom(&mut st, 3);
        assert!(!test_bloom(&st, 3, k));
        update_bloom(&mut st, 3, k);
        assert!(test_bloom(&st, 3, k));
        // The other filter is untouched.
        assert!(test_bloom(&st, 2, k));
        reset_bloom(&mut st, 3);
        assert!(!test_bloom(&st, 3, k));
    }

    #[test]
    fn bloom_keys_are_15_bits_and_spread() {
        let mut seen = std::collections::BTreeSet::new();
        for pmd in 0..1000 {
            let (a, b) = bloom_keys(3, 1, pmd);
            assert!(a < 1 << 15 && b < 1 << 15);
            seen.insert(a);
        }
        assert!(seen.len() > 950, "keys collide too often: {}", seen.len());
    }

    #[test]
    fn suitable_means_one_young_in_eight() {
        assert!(suitable_to_scan(64, 8));
        assert!(!suitable_to_scan(64, 7));
    }
}
