//! Invariants of the machine model, checked by property tests and `run --check`: every page is
//! in exactly one place, counters equal what they count, nothing is lost or duplicated.

use super::lists::Pfn;
use super::mm::Pte;
use super::swap::SwapSlot;
use super::{pg, Machine, Owner, Slot};
use crate::policy::Policy;

impl Machine {
    /// Checks every machine invariant and the policy's own; names the first violation.
    pub fn check_invariants(&self, pol: &dyn Policy) -> Result<(), String> {
        self.check_page_places()?;
        self.check_page_cache()?;
        self.check_mappings()?;
        self.check_memcg_usage()?;
        self.check_swap()?;
        self.check_lru_counts(pol)?;
        pol.check_invariants(self)
    }

    /// A page frame is free (on exactly one free list), in the zram pool, or allocated and then
    /// on an LRU (PG_lru), in a per-CPU batch, or isolated: exactly one of these.
    fn check_page_places(&self) -> Result<(), String> {
        let mut on_free = vec![false; self.folios.len()];
        for n in &self.nodes {
            for pfn in n.free.iter() {
                if std::mem::replace(&mut on_free[pfn as usize], true) {
                    return Err(format!("pfn {pfn} twice on the free lists"));
                }
                if !(n.first_pfn..n.first_pfn + n.nr_pages as Pfn).contains(&pfn) {
                    return Err(format!("pfn {pfn} on the free list of node {}", n.id));
                }
            }
        }
        for n in &self.nodes {
            let range = n.first_pfn as usize..n.first_pfn as usize + n.nr_pages as usize;
            let strays = self.folios[range.clone()]
                .iter()
                .position(|f| f.owner() != Owner::Free && f.node != n.id);
            if let Some(i) = strays {
                let pfn = range.start + i;
                return Err(format!(
                    "pfn {pfn} of node {} is a folio of node {}",
                    n.id, self.folios[pfn].node
                ));
            }
        }
        let mut batched = vec![0u32; self.folios.len()];
        for b in &self.lru_add_batch {
            for &pfn in b {
                batched[pfn as usize] += 1;
            }
        }
        for (pfn, f) in self.folios.iter().enumerate() {
            let free = f.owner() == Owner::Free;
            if free != on_free[pfn] {
                return Err(format!(
                    "pfn {pfn}: owner {:?} but on free list: {}",
                    f.owner(),
                    on_free[pfn]
                ));
            }
            if free || f.owner() == Owner::Zram {
                continue;
            }
            let places =
                f.test(pg::LRU) as u32 + f.test(pg::IN_BATCH) as u32 + f.test(pg::ISOLATED) as u32;
            if places != 1 {
                return Err(format!(
                    "pfn {pfn} is in {places} places (flags {:#x})",
                    f.flags
                ));
            }
            if f.test(pg::IN_BATCH) != (batched[pfn] == 1) || batched[pfn] > 1 {
                return Err(format!("pfn {pfn}: IN_BATCH flag and batches disagree"));
            }
        }
        let zram = self
            .folios
            .iter()
            .filter(|f| f.owner() == Owner::Zram)
            .count();
        if zram != self.swap.zram_frames.len() {
            return Err("zram pool frames miscounted".into());
        }
        Ok(())
    }

    /// Page-cache slots and folio owners point at each other; per-file and global counts hold;
    /// tmpfs slots hold tmpfs folios or swap entries (never shadows), other files' slots never
    /// swap entries.
    fn check_page_cache(&self) -> Result<(), String> {
        let (mut total, mut dirty, mut shmem) = (0, 0, 0);
        for file in &self.files {
            let (mut pages, mut shadows, mut fdirty) = (0, 0, 0);
            for (idx, s) in file.slots.iter().enumerate() {
                match *s {
                    Slot::Page(pfn) => {
                        pages += 1;
                        let f = &self.folios[pfn as usize];
                        if f.owner()
                            != (Owner::File {
                                file: file.id,
                                index: idx as u64,
                            })
                            || !f.in_page_cache()
                        {
                            return Err(format!(
                                "file {} slot {idx}: pfn {pfn} owned by {:?} (flags {:#x})",
                                file.id,
                                f.owner(),
                                f.flags
                            ));
                        }
                        if f.is_shmem() != file.shmem {
                            return Err(format!(
                                "file {} slot {idx}: pfn {pfn} PG_swapbacked {} on tmpfs {}",
                                file.id,
                                f.is_shmem(),
                                file.shmem
                            ));
                        }
                        fdirty += (f.test(pg::DIRTY) && !file.shmem) as u64;
                        shmem += file.shmem as u64;
                    }
                    Slot::Shadow(_) if file.shmem => {
                        return Err(format!("tmpfs file {} slot {idx} holds a shadow", file.id));
                    }
                    Slot::Shadow(_) => shadows += 1,
                    Slot::Swap(slot) => self.check_file_swap_entry(file, idx as u64, slot)?,
                    Slot::Empty => {}
                }
            }
            if pages != file.nr_pages || shadows != file.nr_shadows || fdirty != file.nr_dirty {
                return Err(format!(
                    "file {} counts: pages {pages}/{} shadows {shadows}/{} dirty {fdirty}/{}",
                    file.id, file.nr_pages, file.nr_shadows, file.nr_dirty
                ));
            }
            total += pages;
            dirty += fdirty;
        }
        if total != self.wb.nr_file_pages || dirty != self.wb.nr_dirty {
            return Err(format!(
                "NR_FILE_PAGES {} / NR_FILE_DIRTY {} but {total} / {dirty} found",
                self.wb.nr_file_pages, self.wb.nr_dirty
            ));
        }
        if shmem != self.wb.nr_shmem {
            return Err(format!(
                "NR_SHMEM {} but {shmem} tmpfs pages found",
                self.wb.nr_shmem
            ));
        }
        let wb = self.folios.iter().filter(|f| f.test(pg::WRITEBACK)).count() as u64;
        if wb != self.wb.nr_writeback {
            return Err(format!(
                "NR_WRITEBACK {} but {wb} folios under writeback",
                self.wb.nr_writeback
            ));
        }
        self.check_memcg_wb_stats()?;
        for (pfn, f) in self.folios.iter().enumerate() {
            if let Owner::File { file, index } = f.owner() {
                let want = match f.in_page_cache() {
                    true => Slot::Page(pfn as u32),
                    false => Slot::Swap(f.swap.wrapping_sub(1)),
                };
                if self.files[file as usize].slots[index as usize] != want {
                    return Err(format!("pfn {pfn} claims file {file} index {index}"));
                }
            }
        }
        Ok(())
    }

    /// A swap entry in a file's slot: the file is on tmpfs, the swap slot is in use, and if it
    /// is in the swap cache its folio is that tmpfs page (off the page cache, PG_swapcache).
    fn check_file_swap_entry(&self, file: &super::File, idx: u64, slot: u32) -> Result<(), String> {
        if !file.shmem {
            return Err(format!(
                "file {} slot {idx}: swap entry in a non-tmpfs file",
                file.id
            ));
        }
        match self.swap.slots.get(slot as usize) {
            Some(SwapSlot::Stored(_)) => Ok(()),
            Some(&SwapSlot::Cached(pfn)) => {
                let f = &self.folios[pfn as usize];
                let owner = Owner::File {
                    file: file.id,
                    index: idx,
                };
                if f.owner() != owner || !f.is_shmem() || f.in_page_cache() {
                    return Err(format!(
                        "file {} slot {idx}: swap slot {slot} caches pfn {pfn} of {:?} (flags {:#x})",
                        file.id,
                        f.owner(),
                        f.flags
                    ));
                }
                Ok(())
            }
            _ => Err(format!(
                "file {} slot {idx}: swap entry {slot} is not in use",
                file.id
            )),
        }
    }

    /// Every mapcount equals the PTEs pointing at the folio; rss and swapents add up.
    fn check_mappings(&self) -> Result<(), String> {
        let mut maps = vec![0u32; self.folios.len()];
        for p in &self.procs {
            let (mut rss, mut swapents) = (0, 0);
            for v in &p.vmas {
                for pte in &v.ptes {
                    if pte.is_present() {
                        maps[pte.pfn() as usize] += 1;
                        rss += 1;
                    } else if pte.is_swap() {
                        swapents += 1;
                    }
                }
            }
            if rss != p.rss || swapents != p.swapents {
                return Err(format!(
                    "process {}: rss {}/{rss} swapents {}/{swapents}",
                    p.pid, p.rss, p.swapents
                ));
            }
        }
        for (pfn, f) in self.folios.iter().enumerate() {
            if maps[pfn] != u32::from(f.mapcount) {
                return Err(format!(
                    "pfn {pfn}: mapcount {} but {} PTEs",
                    f.mapcount, maps[pfn]
                ));
            }
        }
        let _ = Pte::NONE;
        Ok(())
    }

    /// memory.current of each memcg equals the pages charged to its subtree: its folios, its
    /// processes' PTE tables and the pages of it the CPUs' charge stocks hold
    /// (`memcg_stock_pcp`), and never exceeds
    /// memory.max. Each stock slot holds at most a batch, an empty slot none, and one memcg is
    /// cached in at most one slot of a CPU.
    fn check_memcg_usage(&self) -> Result<(), String> {
        let mut local = vec![0u64; self.memcgs.len()];
        for f in &self.folios {
            if matches!(f.owner(), Owner::Anon { .. } | Owner::File { .. }) {
                local[f.memcg as usize] += 1;
            }
        }
        let mut stocked = vec![0u64; self.memcgs.len()];
        let batch = self.memcg_charge_batch();
        for (cpu, st) in self.memcg_stock.iter().enumerate() {
            for (i, (&mc, &nr)) in st.cached.iter().zip(&st.nr_pages).enumerate() {
                if mc == 0 && nr != 0 || nr > batch {
                    return Err(format!(
                        "cpu {cpu} charge stock slot {i}: memcg {mc} with {nr} pages (batch {batch})"
                    ));
                }
                if mc != 0 && st.cached[..i].contains(&mc) {
                    return Err(format!("cpu {cpu}: memcg {mc} in two charge stock slots"));
                }
                stocked[mc as usize] += nr;
            }
        }
        // PTE tables: one wherever a PTE is not none; each charged to its process's memcg
        // (but the root's).
        let mut tables = vec![0u64; self.memcgs.len()];
        // (An exited process has none, whatever a fault that outlived its exit_mmap mapped.)
        for p in self.procs.iter().filter(|p| p.alive) {
            for (vi, v) in p.vmas.iter().enumerate() {
                if v.pte_table.len() != v.pmd_young.len() {
                    return Err(format!("pid {} vma {vi}: pte_table sized wrong", p.pid));
                }
                for (t, &allocated) in v.pte_table.iter().enumerate() {
                    let lo = t * super::mm::PTRS_PER_PTE as usize;
                    let hi = (lo + super::mm::PTRS_PER_PTE as usize).min(v.ptes.len());
                    if !allocated && v.ptes[lo..hi].iter().any(|pte| !pte.is_none()) {
                        return Err(format!(
                            "pid {} vma {vi}: PTEs without PTE table {t}",
                            p.pid
                        ));
                    }
                    if allocated && p.memcg != 0 && self.cfg.charge_page_tables {
                        tables[p.memcg as usize] += 1;
                    }
                }
            }
        }
        for mc in 0..self.memcgs.len() as u16 {
            let m = &self.memcgs[mc as usize];
            if m.pgtable_pages != tables[mc as usize] {
                return Err(format!(
                    "memcg {}: pgtable_pages {} but {} PTE tables",
                    m.path, m.pgtable_pages, tables[mc as usize]
                ));
            }
            if m.local_pages != local[mc as usize] || m.stock_pages != stocked[mc as usize] {
                return Err(format!(
                    "memcg {}: local_pages {} stock_pages {} but {} folios and {} stocked",
                    m.path, m.local_pages, m.stock_pages, local[mc as usize], stocked[mc as usize]
                ));
            }
            let sum: u64 = self
                .memcg_subtree(mc)
                .iter()
                .map(|&c| local[c as usize] + stocked[c as usize] + tables[c as usize])
                .sum();
            if sum != m.usage {
                return Err(format!(
                    "memcg {}: usage {} but {sum} pages charged (folios, charge stocks, PTE tables)",
                    m.path, m.usage
                ));
            }
            if mc != 0 && m.usage > m.max {
                return Err(format!(
                    "memcg {}: usage {} above memory.max {}",
                    m.path, m.usage, m.max
                ));
            }
        }
        Ok(())
    }

    /// Swap slots: swap-cache slots and folios agree; every used slot is referenced.
    fn check_swap(&self) -> Result<(), String> {
        let mut used = 0;
        for (slot, s) in self.swap.slots.iter().enumerate() {
            match *s {
                SwapSlot::Free => {}
                SwapSlot::Cached(pfn) => {
                    used += 1;
                    if self.folios[pfn as usize].swap != slot as u32 + 1 {
                        return Err(format!("swap slot {slot} caches pfn {pfn} which disagrees"));
                    }
                }
                SwapSlot::Stored(_) => used += 1,
            }
        }
        self.check_swap_references()?;
        if used + self.swap.nr_free() != self.swap.total() {
            return Err(format!(
                "swap: {used} used + {} free != {}",
                self.swap.nr_free(),
                self.swap.total()
            ));
        }
        Ok(())
    }

    /// Every swap entry (an anon swap PTE or a tmpfs slot) names a used slot, no slot is named
    /// twice (no fork, one slot per tmpfs page), and a slot only on the device is named.
    fn check_swap_references(&self) -> Result<(), String> {
        let mut refs = vec![0u32; self.swap.slots.len()];
        let entries = self
            .procs
            .iter()
            .flat_map(|p| p.vmas.iter().flat_map(|v| v.ptes.iter()))
            .filter(|pte| pte.is_swap())
            .map(|pte| pte.swap_slot());
        let tmpfs = self
            .files
            .iter()
            .flat_map(|f| f.slots.iter())
            .filter_map(|s| match s {
                Slot::Swap(slot) => Some(*slot),
                _ => None,
            });
        for slot in entries.chain(tmpfs) {
            match refs.get_mut(slot as usize) {
                Some(r) if self.swap.slots[slot as usize] != SwapSlot::Free => *r += 1,
                _ => return Err(format!("swap entry {slot} names a free slot")),
            }
        }
        for (slot, s) in self.swap.slots.iter().enumerate() {
            let want_named = matches!(s, SwapSlot::Stored(_));
            if refs[slot] > 1 || (want_named && refs[slot] == 0) {
                return Err(format!(
                    "swap slot {slot} ({s:?}) named {} times",
                    refs[slot]
                ));
            }
        }
        Ok(())
    }

    /// The policy's LRU sizes add up to the folios that are on an LRU.
    fn check_lru_counts(&self, pol: &dyn Policy) -> Result<(), String> {
        let on_lru = self.folios.iter().filter(|f| f.test(pg::LRU)).count() as u64;
        let mut listed = 0;
        for mc in 0..self.memcgs.len() as u16 {
            for n in 0..self.nr_nodes() as u8 {
                listed += pol.lru_pages(mc, n).iter().sum::<u64>();
            }
        }
        if on_lru != listed {
            return Err(format!(
                "{on_lru} folios have PG_lru but the LRUs hold {listed}"
            ));
        }
        let isolated: u64 = self
            .nodes
            .iter()
            .map(|n| n.nr_isolated[0] + n.nr_isolated[1])
            .sum();
        let flagged = self.folios.iter().filter(|f| f.test(pg::ISOLATED)).count() as u64;
        if isolated != flagged {
            return Err(format!(
                "NR_ISOLATED {isolated} but {flagged} isolated folios"
            ));
        }
        Ok(())
    }
}

impl Machine {
    /// Each memcg's hierarchical file, dirty, writeback and shmem counts equal its folios'.
    fn check_memcg_wb_stats(&self) -> Result<(), String> {
        let mut want = vec![[0u64; 4]; self.memcgs.len()];
        for f in &self.folios {
            let file = f.in_page_cache();
            let add = [
                file as u64,
                (file && !f.is_shmem() && f.test(pg::DIRTY)) as u64,
                f.test(pg::WRITEBACK) as u64,
                (file && f.is_shmem()) as u64,
            ];
            if add == [0; 4] || f.owner() == Owner::Free {
                continue;
            }
            for c in self.memcg_ancestors(f.memcg) {
                for k in 0..4 {
                    want[c as usize][k] += add[k];
                }
            }
        }
        for (c, w) in want.iter().enumerate() {
            if *w != self.memcgs[c].wb_stat {
                return Err(format!(
                    "memcg {c} file/dirty/writeback/shmem {:?} but folios say {w:?}",
                    self.memcgs[c].wb_stat
                ));
            }
        }
        Ok(())
    }
}
