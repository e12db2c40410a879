//! Event counters under their /proc/vmstat and memory.stat names, in the kernel's units.

use serde::Serialize;
use std::collections::BTreeMap;

macro_rules! vm_events {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// A /proc/vmstat event counter (classic-lru.md §8). Units are pages unless the name says
        /// otherwise; pgpgin/pgpgout are KiB as /proc/vmstat shows them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Vm { $($variant),* }
        impl Vm {
            pub const ALL: &'static [Vm] = &[$(Vm::$variant),*];
            pub const fn name(self) -> &'static str { match self { $(Vm::$variant => $name),* } }
        }
    };
}

vm_events! {
    Pgpgin => "pgpgin",
    Pgpgout => "pgpgout",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    Pgrefill => "pgrefill",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgrotated => "pgrotated",
    Pglazyfree => "pglazyfree",
    Pglazyfreed => "pglazyfreed",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    WorkingsetNodereclaim => "workingset_nodereclaim",
    OomKill => "oom_kill",
    AllocstallNormal => "allocstall_normal",
    AllocstallMovable => "allocstall_movable",
    Pageoutrun => "pageoutrun",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    PgscanDirectThrottle => "pgscan_direct_throttle",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    UnevictablePgsCulled => "unevictable_pgs_culled",
    PgAlloc => "pgalloc_normal",
    PgFree => "pgfree",
    ZramStored => "zram_stored_pages",
    // Memcg events (memory.events), kept in the same array for simplicity.
    MemcgLow => "low",
    MemcgHigh => "high",
    MemcgMax => "max",
    MemcgOom => "oom",
    MemcgOomKill => "oom_kill_memcg",
    // Time, in nanoseconds: direct reclaim and throttling as seen by the tasks.
    DirectReclaimNs => "direct_reclaim_ns",
    ThrottleNs => "throttle_ns",
    DirtyThrottleNs => "dirty_throttle_ns",
}

pub const NR_VM: usize = Vm::ALL.len();

/// A fixed array of event counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counters(pub [u64; NR_VM]);

impl Default for Counters {
    fn default() -> Self {
        Counters([0; NR_VM])
    }
}

impl Counters {
    #[inline]
    pub fn add(&mut self, v: Vm, n: u64) {
        self.0[v as usize] += n;
    }
    /// Takes back `n` counted by mistake (an allocation a preempted task gives back).
    #[inline]
    pub fn sub(&mut self, v: Vm, n: u64) {
        self.0[v as usize] -= n;
    }
    #[inline]
    pub fn get(&self, v: Vm) -> u64 {
        self.0[v as usize]
    }
    pub fn add_all(&mut self, other: &Counters) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += *b;
        }
    }
    /// Name → value, in a fixed (sorted) order.
    pub fn to_map(&self) -> BTreeMap<&'static str, u64> {
        Vm::ALL.iter().map(|&v| (v.name(), self.get(v))).collect()
    }
}

impl Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_map().serialize(s)
    }
}
