//! The per-CPU memcg charge stock (mm/memcontrol.c `struct memcg_stock_pcp`): `try_charge_memcg`
//! charges `MEMCG_CHARGE_BATCH` pages and keeps the surplus on the charging CPU
//! (`refill_stock`), later charges on that CPU take from it (`consume_stock`), switching memcg
//! or going over a batch gives the pages back (`drain_stock`), and a charge that reclaim could
//! not make room for drains every CPU's stock of the memcg's subtree (`drain_all_stock`).
//! memory.current counts the stocked pages, memory.stat does not. 6.1 and 6.12 cache one memcg
//! per CPU; from 6.16 (the model's 7.1 and 7.2) `NR_MEMCG_STOCK`.
//!
//! Each test drives a small machine through accesses on chosen CPUs and checks every
//! machine invariant (charged == folios + stocks) at the end.

use reclaimlab::access::{Op, PageRef, Via};
use reclaimlab::consts::{Kernel, MEMCG_CHARGE_BATCH, NR_MEMCG_STOCK};
use reclaimlab::machine::{Ctx, Machine, MachineConfig, MemcgConfig, Vm};
use reclaimlab::policy::classic::Classic;
use reclaimlab::sim::{run, RunOptions};
use reclaimlab::workload::micro;

const B: u64 = MEMCG_CHARGE_BATCH;

fn build(kernel: Kernel, cpus: u32, memcgs: &[(&str, u64)]) -> (Machine, Classic) {
    let mut cfg = MachineConfig::simple(8192);
    cfg.kernel = kernel;
    cfg.cpus = cpus;
    cfg.memcgs = memcgs
        .iter()
        .map(|&(p, max)| MemcgConfig::new(p).with_max(max))
        .collect();
    let m = Machine::new(cfg.one_page_per_fault()).expect("valid machine");
    let pol = Classic::new(&m);
    (m, pol)
}

/// Task `pid` writes its anon page `page` on CPU `cpu` (a write fault: one page charged).
fn write_on(m: &mut Machine, pol: &mut Classic, cpu: u32, pid: u32, page: u64) -> bool {
    let now = m.ctx.now + m.ctx.elapsed + 1_000;
    m.ctx = Ctx {
        now,
        cpu,
        pid,
        ..Default::default()
    };
    m.access(pol, pid, PageRef::Anon { page }, Op::Write, Via::Mmap)
        .is_some()
}

/// The pages of `memcg` in CPU `cpu`'s stock (0 if it is not cached there).
fn stocked(m: &Machine, cpu: usize, memcg: u16) -> u64 {
    let s = &m.memcg_stock[cpu];
    s.cached
        .iter()
        .zip(&s.nr_pages)
        .filter(|(&c, _)| c == memcg)
        .map(|(_, &n)| n)
        .sum()
}

fn check(m: &Machine, pol: &Classic) {
    if let Err(e) = m.check_invariants(pol) {
        panic!("invariant violated: {e}");
    }
}

/// `try_charge_memcg` charges a batch and stocks the rest (`done_restock` → `refill_stock`);
/// the next 63 charges on that CPU come from the stock (`consume_stock`) and leave
/// memory.current alone; the 65th charges a new batch. The root memcg never stocks.
#[test]
fn a_charge_takes_a_batch_and_later_charges_consume_the_stock() {
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_2] {
        let (mut m, mut pol) = build(kernel, 2, &[("/a", 4096)]);
        let a = m.memcg_by_path("/a").unwrap();
        let p = m.create_process("p", a, 200);
        assert!(write_on(&mut m, &mut pol, 0, p, 0));
        assert_eq!(
            m.memcgs[a as usize].usage, B,
            "{kernel}: a whole batch charged"
        );
        // The fault charged its PTE table (a batch: 63 to the stock), then its folio.
        assert_eq!(m.memcgs[a as usize].local_pages, 1);
        assert_eq!(m.memcgs[a as usize].pgtable_pages, 1);
        assert_eq!(stocked(&m, 0, a), B - 2, "{kernel}");
        assert_eq!(m.memcgs[a as usize].stock_pages, B - 2);
        assert_eq!(m.memcgs[0].usage, B, "the root's counter is charged too");
        for i in 1..B - 1 {
            assert!(write_on(&mut m, &mut pol, 0, p, i));
        }
        assert_eq!(
            m.memcgs[a as usize].usage, B,
            "{kernel}: all from the stock"
        );
        assert_eq!(stocked(&m, 0, a), 0);
        assert!(write_on(&mut m, &mut pol, 0, p, B - 1));
        assert_eq!(m.memcgs[a as usize].usage, 2 * B, "{kernel}: a new batch");
        assert_eq!(stocked(&m, 0, a), B - 1);
        // A task of the root memcg charges its page alone.
        let r = m.create_process("r", 0, 4);
        let before = m.memcgs[0].usage;
        assert!(write_on(&mut m, &mut pol, 1, r, 0));
        assert_eq!(m.memcgs[0].usage, before + 1, "{kernel}");
        assert!(m.memcg_stock[1].cached.iter().all(|&c| c == 0));
        check(&m, &pol);
    }
}

/// `consume_stock` reads only this CPU's stock: a charge on CPU 1 finds CPU 0's 63 pages out of
/// reach and charges a batch of its own.
#[test]
fn only_the_charging_cpus_stock_is_consumed() {
    let (mut m, mut pol) = build(Kernel::V6_1, 2, &[("/a", 4096)]);
    let a = m.memcg_by_path("/a").unwrap();
    let p = m.create_process("p", a, 10);
    let q = m.create_process("q", a, 10);
    assert!(write_on(&mut m, &mut pol, 0, p, 0));
    assert!(write_on(&mut m, &mut pol, 1, q, 0));
    assert_eq!(m.memcgs[a as usize].usage, 2 * B);
    assert_eq!((stocked(&m, 0, a), stocked(&m, 1, a)), (B - 2, B - 2));
    assert_eq!(m.memcgs[a as usize].local_pages, 2);
    check(&m, &pol);
}

/// 6.1/6.12 `__refill_stock`: a CPU caches one memcg, so a charge of another memcg on it
/// drains the old stock first (`drain_stock` → `page_counter_uncharge`). From 6.16 the stock
/// has `NR_MEMCG_STOCK` slots and both stay; an eighth memcg drains the slot `drain_idx`
/// names, round-robin.
#[test]
fn refilling_for_another_memcg_drains_the_old_stock_unless_there_are_slots() {
    let paths: Vec<String> = (0..=NR_MEMCG_STOCK).map(|i| format!("/m{i}")).collect();
    let cfg: Vec<(&str, u64)> = paths.iter().map(|p| (p.as_str(), 4096)).collect();
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_1, Kernel::V7_2] {
        let multi = kernel >= Kernel::V7_1;
        let (mut m, mut pol) = build(kernel, 1, &cfg);
        let ids: Vec<u16> = paths.iter().map(|p| m.memcg_by_path(p).unwrap()).collect();
        let pids: Vec<u32> = ids.iter().map(|&c| m.create_process("t", c, 4)).collect();
        assert!(write_on(&mut m, &mut pol, 0, pids[0], 0));
        assert!(write_on(&mut m, &mut pol, 0, pids[1], 0));
        let (m0, m1) = (ids[0] as usize, ids[1] as usize);
        if multi {
            assert_eq!(m.memcgs[m0].usage, B, "{kernel}: m0's stock kept");
            assert_eq!(stocked(&m, 0, ids[0]), B - 2);
        } else {
            // Its page and PTE table are left.
            assert_eq!(m.memcgs[m0].usage, 2, "{kernel}: m0's stock drained");
            assert_eq!(m.memcgs[m0].stock_pages, 0);
        }
        assert_eq!(m.memcgs[m1].usage, B, "{kernel}");
        assert_eq!(stocked(&m, 0, ids[1]), B - 2);
        // Fill every slot, then one memcg more.
        for &p in &pids[2..] {
            assert!(write_on(&mut m, &mut pol, 0, p, 0));
        }
        let cached = m.memcg_stock[0].cached.iter().filter(|&&c| c != 0).count();
        assert_eq!(cached, if multi { NR_MEMCG_STOCK } else { 1 }, "{kernel}");
        if multi {
            // The eighth memcg took slot 0 (drain_idx 0 → 1): m0 was given back.
            assert_eq!(m.memcg_stock[0].cached[0], ids[NR_MEMCG_STOCK]);
            assert_eq!(m.memcg_stock[0].drain_idx, 1);
            assert_eq!(m.memcgs[m0].usage, 2, "{kernel}");
            assert_eq!(m.memcgs[m1].usage, B, "{kernel}: m1 still stocked");
            // m0 again: slot 1 (m1) is drained next.
            assert!(write_on(&mut m, &mut pol, 0, pids[0], 1));
            assert_eq!(m.memcg_stock[0].cached[1], ids[0]);
            assert_eq!(m.memcgs[m1].usage, 2, "{kernel}");
        } else {
            assert_eq!(m.memcg_stock[0].cached[0], ids[NR_MEMCG_STOCK]);
            for &c in &ids[..NR_MEMCG_STOCK] {
                assert_eq!(m.memcgs[c as usize].usage, 2, "{kernel}");
            }
        }
        check(&m, &pol);
    }
}

// A stock going above a batch is drained: `machine::memcg`'s unit tests (it needs the
// page counter's charge alone).

/// `drain_all_stock`: a charge that reclaim cannot make room for drains every CPU's stock of
/// the over-limit memcg's subtree (not other memcgs'), the other CPUs' by a work item that
/// has run by the next reclaim; the retry then charges from the freed counter. Without the
/// drain the 63 pages stranded on CPU 1 would OOM-kill.
#[test]
fn drain_all_stock_frees_other_cpus_stocks_of_the_subtree() {
    for kernel in [Kernel::V6_1, Kernel::V6_12, Kernel::V7_2] {
        // /w: 128 pages; nothing reclaimable (anon, no swap).
        let (mut m, mut pol) = build(kernel, 3, &[("/w", 128), ("/x", 4096)]);
        let w = m.memcg_by_path("/w").unwrap();
        let x = m.memcg_by_path("/x").unwrap();
        let idle = m.create_process("idle", w, 4);
        let busy = m.create_process("busy", w, 200);
        let other = m.create_process("other", x, 4);
        assert!(write_on(&mut m, &mut pol, 1, idle, 0));
        assert!(write_on(&mut m, &mut pol, 2, other, 0));
        assert_eq!(stocked(&m, 1, w), B - 2);
        // busy fills the rest: its first fault's batch fits (64 + 64 = 128) and pays for its
        // PTE table and 63 pages.
        for n in 0..B - 1 {
            assert!(write_on(&mut m, &mut pol, 0, busy, n));
        }
        assert_eq!(stocked(&m, 0, w), 0, "{kernel}");
        assert_eq!(m.memcg_events_hier(w).get(Vm::MemcgMax), 0);
        assert_eq!(m.memcgs[w as usize].usage, 128);
        // The next charge: reclaim finds nothing, drain_all_stock, reclaim again (the work
        // on CPU 1 has run), margin 62: charged.
        assert!(
            write_on(&mut m, &mut pol, 0, busy, B - 1),
            "{kernel}: no OOM"
        );
        assert_eq!(m.memcg_events_hier(w).get(Vm::MemcgMax), 2, "{kernel}");
        assert_eq!(m.memcg_events_hier(w).get(Vm::MemcgOom), 0, "{kernel}");
        assert_eq!(stocked(&m, 1, w), 0, "{kernel}: CPU 1's stock drained");
        assert_eq!(m.memcgs[w as usize].usage, 128 - (B - 2) + 1);
        assert_eq!(
            stocked(&m, 2, x),
            B - 2,
            "{kernel}: /x is outside the subtree"
        );
        assert!(m.stock_drain_work.is_empty());
        check(&m, &pol);
    }
}

/// The drain is of the over-limit memcg's subtree: a parent's limit drains its children's
/// stocks.
#[test]
fn drain_all_stock_of_a_parent_reaches_its_childrens_stocks() {
    let (mut m, mut pol) = build(Kernel::V6_1, 2, &[("/p", 128), ("/p/c", u64::MAX / 4)]);
    let p = m.memcg_by_path("/p").unwrap();
    let c = m.memcg_by_path("/p/c").unwrap();
    let t = m.create_process("t", c, 300);
    assert!(write_on(&mut m, &mut pol, 1, t, 0));
    assert_eq!(m.memcgs[p as usize].usage, B);
    m.ctx.cpu = 0;
    m.drain_all_stock(p);
    assert_eq!(m.stock_drain_work, vec![1], "queued on CPU 1");
    m.drain_all_stock(p);
    assert_eq!(
        m.stock_drain_work,
        vec![1],
        "FLUSHING_CACHED_CHARGE: not twice"
    );
    m.run_stock_drain_work();
    assert_eq!(m.memcgs[p as usize].usage, 2, "a page and its PTE table");
    assert_eq!(m.memcgs[c as usize].usage, 2);
    // The current CPU's own stock is drained at once.
    assert!(write_on(&mut m, &mut pol, 0, t, 1));
    m.drain_all_stock(c);
    assert!(m.stock_drain_work.is_empty());
    assert_eq!(m.memcgs[c as usize].usage, 3);
    check(&m, &pol);
}

/// memory.max and memory.high writes drain the stocks before they reclaim
/// (`memory_max_write`, `memory_high_write`): a stock is not reclaimable memory.
#[test]
fn limit_writes_drain_the_stocks_first() {
    let (mut m, mut pol) = build(Kernel::V6_12, 2, &[("/a", 4096)]);
    let a = m.memcg_by_path("/a").unwrap();
    let p = m.create_process("p", a, 10);
    assert!(write_on(&mut m, &mut pol, 1, p, 0));
    assert_eq!(m.memcgs[a as usize].usage, B);
    m.ctx.cpu = 0;
    m.set_memory_high(&mut pol, a, 10);
    assert_eq!(m.memcgs[a as usize].usage, 2, "drained, nothing reclaimed");
    assert_eq!(m.vm.get(Vm::PgscanDirect), 0);
    assert!(write_on(&mut m, &mut pol, 1, p, 1));
    m.ctx.cpu = 0;
    m.set_memory_max(&mut pol, a, 10);
    assert_eq!(m.memcgs[a as usize].usage, 3);
    assert_eq!(m.memcg_events_hier(a).get(Vm::MemcgOom), 0);
    check(&m, &pol);
}

/// memory.current includes the stocked pages; memory.stat (anon + file) counts folios only.
/// The 2-CPU memcg-limit scenario ends with pages in its stocks, every invariant holding
/// after every event (`check`).
#[test]
fn memory_current_includes_the_stock_and_memory_stat_does_not() {
    let mut scn = micro::builtin("memcg-limit", 0.25).unwrap();
    scn.machine.cpus = 2;
    let res = run(
        &scn,
        "classic:6.12".parse().unwrap(),
        &RunOptions {
            seed: 1,
            check_invariants: true,
            ..Default::default()
        },
    )
    .unwrap();
    let mut some_stock = false;
    for mc in res.memcgs.iter().filter(|mc| mc.path != "/") {
        // memory.stat is in bytes; memory.current also has the PTE tables (`pagetables`).
        let user = (mc.stat["anon"] + mc.stat["file"] + mc.stat["pagetables"]) / 4096;
        assert!(mc.current_pages >= user, "{}", mc.path);
        let stock = mc.current_pages - user;
        assert!(stock <= 2 * (B - 1), "{}: {stock}", mc.path);
        some_stock |= stock > 0;
    }
    assert!(some_stock, "some memcg ends with pages in a stock");
}

/// The machine's invariant checker sees a stock that disagrees with the page counters.
#[test]
fn the_invariant_checker_counts_the_stocks() {
    let (mut m, mut pol) = build(Kernel::V6_1, 1, &[("/a", 4096)]);
    let a = m.memcg_by_path("/a").unwrap();
    let p = m.create_process("p", a, 4);
    assert!(write_on(&mut m, &mut pol, 0, p, 0));
    check(&m, &pol);
    m.memcg_stock[0].nr_pages[0] -= 1;
    m.memcgs[a as usize].stock_pages -= 1;
    let e = m.check_invariants(&pol).unwrap_err();
    assert!(e.contains("usage 64 but 63 pages charged"), "{e}");
    m.memcg_stock[0].nr_pages[0] += 1;
    let e = m.check_invariants(&pol).unwrap_err();
    assert!(e.contains("stock_pages 61"), "{e}");
}

/// Page tables are charged (docs/model.md §9 gap 15): the first fault in each 512-page range
/// of a vma allocates and charges its PTE table (`pte_alloc` with __GFP_ACCOUNT), a read
/// fault that maps the zero page too; a task of the root memcg charges none. Exit frees them
/// to the exiting CPU's stock (`obj_cgroup_uncharge_pages` → `refill_stock`), not to the page
/// counter, while the folios are uncharged at once (`uncharge_batch`).
#[test]
fn pte_tables_are_charged_per_512_pages_and_freed_to_the_stock() {
    let (mut m, mut pol) = build(Kernel::V6_1, 2, &[("/a", 1 << 20)]);
    let a = m.memcg_by_path("/a").unwrap();
    let p = m.create_process("p", a, 2048);
    for i in [0, 1, 511, 512, 1500] {
        assert!(write_on(&mut m, &mut pol, 0, p, i));
    }
    assert_eq!(m.memcgs[a as usize].pgtable_pages, 3);
    m.ctx.cpu = 0;
    m.access(
        &mut pol,
        p,
        PageRef::Anon { page: 1600 },
        Op::Read,
        Via::Mmap,
    )
    .unwrap();
    assert_eq!(
        m.memcgs[a as usize].pgtable_pages, 4,
        "the zero page's table"
    );
    assert_eq!(m.memcgs[a as usize].local_pages, 5);
    let r = m.create_process("r", 0, 600);
    assert!(write_on(&mut m, &mut pol, 0, r, 550));
    assert_eq!(m.memcgs[0].usage, m.memcgs[a as usize].usage + 1);
    check(&m, &pol);
    m.ctx.cpu = 1;
    let now = m.now();
    m.exit_mmap(&mut pol, p, now);
    assert_eq!(m.memcgs[a as usize].pgtable_pages, 0);
    assert_eq!(m.memcgs[a as usize].local_pages, 0);
    assert_eq!(stocked(&m, 1, a), 4, "the tables went to CPU 1's stock");
    assert_eq!(
        m.memcgs[a as usize].usage,
        stocked(&m, 0, a) + 4,
        "the folios were uncharged"
    );
    check(&m, &pol);
}

/// A scaled-down seed scenario charges no page tables (`MachineConfig::charge_page_tables`).
#[test]
fn page_tables_are_not_charged_when_turned_off() {
    let mut cfg = MachineConfig::simple(8192);
    cfg.memcgs = vec![MemcgConfig::new("/a").with_max(4096)];
    cfg.charge_page_tables = false;
    let m = Machine::new(cfg.one_page_per_fault()).unwrap();
    let mut pol = Classic::new(&m);
    let mut m = m;
    let a = m.memcg_by_path("/a").unwrap();
    let p = m.create_process("p", a, 1024);
    assert!(write_on(&mut m, &mut pol, 0, p, 0));
    assert!(write_on(&mut m, &mut pol, 0, p, 600));
    assert_eq!(m.memcgs[a as usize].pgtable_pages, 0);
    assert_eq!(stocked(&m, 0, a), B - 2, "two folios from one batch");
    let now = m.now();
    m.exit_mmap(&mut pol, p, now);
    assert_eq!(m.memcgs[a as usize].usage, B - 2);
    check(&m, &pol);
}
