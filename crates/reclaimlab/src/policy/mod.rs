//! Reclaim policies. A policy owns its LRU lists and per-lruvec state and plugs into the machine
//! through the [`Policy`] trait: the hooks the kernel's mm/swap.c, mm/workingset.c and
//! mm/vmscan.c call into the LRU implementation. Everything else (page tables, page cache,
//! swap, writeback, memcg charging, shrink_folio_list, the reclaim drivers) is the machine's.

pub mod classic;
pub mod mglru;

use crate::machine::vmscan::ScanControl;
use crate::machine::{Machine, Pfn};

/// `enum folio_references` (mm/vmscan.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FolioRef {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

/// The narrow interface between the machine and a reclaim policy.
pub trait Policy {
    /// The policy's name with its kernel, e.g. "classic:6.12".
    fn name(&self) -> String;

    /// A memcg was created (lruvecs for it must exist from now on).
    fn memcg_created(&mut self, m: &Machine, memcg: u16);

    /// `lruvec_add_folio` (or `_tail`): put a folio whose PG_lru the caller just set on the
    /// list its flags select.
    fn lruvec_add_folio(&mut self, m: &mut Machine, pfn: Pfn, tail: bool);

    /// `lruvec_del_folio`: take a PG_lru folio off its list.
    fn lruvec_del_folio(&mut self, m: &mut Machine, pfn: Pfn);

    /// `folio_mark_accessed`: an access through a file descriptor (mm/swap.c).
    fn folio_mark_accessed(&mut self, m: &mut Machine, pfn: Pfn);

    /// `folio_rotate_reclaimable`: writeback ended on a PG_reclaim folio.
    fn folio_rotate_reclaimable(&mut self, m: &mut Machine, pfn: Pfn);

    /// `workingset_eviction`: the shadow entry to leave behind for an evicted folio.
    fn workingset_eviction(&mut self, m: &mut Machine, pfn: Pfn, target: Option<u16>) -> u64;

    /// `workingset_refault`: a new folio (not yet on the LRU) replaces a shadow entry.
    fn workingset_refault(&mut self, m: &mut Machine, pfn: Pfn, shadow: u64);

    /// `folio_check_references`, used by shrink_folio_list.
    fn folio_check_references(&mut self, m: &mut Machine, pfn: Pfn, sc: &ScanControl) -> FolioRef;

    /// The policy's part of `shrink_node`: reclaim from node `node` for `sc`.
    fn shrink_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl);

    /// `kswapd_age_node`: background aging at each balance_pgdat priority step.
    fn kswapd_age_node(&mut self, m: &mut Machine, node: u8, sc: &mut ScanControl);

    /// `snapshot_refaults`: the end of a reclaim run.
    fn snapshot_refaults(&mut self, m: &mut Machine, target: Option<u16>, node: u8);

    /// Pages on each LRU list of a (memcg, node) lruvec, local (not hierarchical), in the order
    /// inactive_anon, active_anon, inactive_file, active_file, unevictable.
    fn lru_pages(&self, memcg: u16, node: u8) -> [u64; 5];

    /// The lru_gen debugfs file (`/sys/kernel/debug/lru_gen`, or `lru_gen_full`), if this
    /// policy has one.
    fn lru_gen_show(&self, _m: &Machine, _full: bool) -> Option<String> {
        None
    }

    /// A write to the lru_gen debugfs file: Ok, or the kernel's errno name. None if this
    /// policy has no such file.
    fn lru_gen_write(&mut self, _m: &mut Machine, _cmd: &str) -> Option<Result<(), &'static str>> {
        None
    }

    /// `folio_add_lru` of a folio added inside a fault on a vma with recency
    /// (`lru_gen_in_fault`): MGLRU decides how it starts; the classical LRU does nothing.
    fn folio_add_lru_in_fault(&mut self, _m: &mut Machine, _pfn: Pfn) {}

    /// Deferred work the policy queued with `KthreadWork::PolicyTimer(token)` is due.
    fn timer(&mut self, _m: &mut Machine, _token: u64) {}

    /// Whether this is the multi-generational LRU (`lru_gen_enabled()`), which changes a few
    /// generic paths (folio_add_lru's in-fault activation).
    fn is_lru_gen(&self) -> bool {
        false
    }

    /// Checks the policy's own invariants against the machine (tests and `--check`).
    fn check_invariants(&self, m: &Machine) -> Result<(), String>;
}

/// The policies a user can name, with one line each (`reclaimlab policies`).
pub fn catalogue() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "classic",
            "the kernel's active/inactive LRU with workingset refault detection (--kernel 6.1|6.12|7.1|7.2|7.2.13, default 6.12)",
        ),
                (
            "mglru",
            "the multi-generational LRU (--kernel 6.1|6.12|7.1|7.2|7.2.13, default 7.2; switches below)",
        ),
        (
            "lru",
            "textbook LRU over a plain page cache, libCacheSim semantics (reference)",
        ),
        (
            "clock",
            "textbook CLOCK (FIFO with one reinsertion bit), libCacheSim semantics (reference)",
        ),
        (
            "fifo",
            "textbook FIFO over a plain page cache, libCacheSim semantics (reference)",
        ),
    ]
}

/// `pack_shadow` (mm/workingset.c): eviction stamp or token | memcg id | node | workingset,
/// as an xarray value entry (the low bit set).
pub fn pack_shadow(memcgid: u16, node: u8, eviction: u64, workingset: bool) -> u64 {
    use crate::consts::*;
    let mut v = eviction & EVICTION_MASK;
    v = (v << MEM_CGROUP_ID_SHIFT) | memcgid as u64;
    v = (v << NODES_SHIFT) | node as u64;
    v = (v << WORKINGSET_SHIFT) | workingset as u64;
    (v << 1) | 1
}

/// `unpack_shadow`: (memcg id, node, eviction stamp or token, workingset).
pub fn unpack_shadow(shadow: u64) -> (u16, u8, u64, bool) {
    use crate::consts::*;
    let mut v = shadow >> 1;
    let ws = v & 1 == 1;
    v >>= WORKINGSET_SHIFT;
    let node = (v & ((1 << NODES_SHIFT) - 1)) as u8;
    v >>= NODES_SHIFT;
    let memcgid = (v & ((1 << MEM_CGROUP_ID_SHIFT) - 1)) as u16;
    v >>= MEM_CGROUP_ID_SHIFT;
    (memcgid, node, v, ws)
}
