//! Measures, on the machine it runs on, what the model's CPU costs stand for (docs/model.md §3,
//! "measured here"): the real kernel's per-page cost of an anonymous write fault, of unmapping
//! and freeing a page, of reclaiming a mapped clean page-cache page (MADV_PAGEOUT: isolation,
//! `try_to_unmap`, `__remove_mapping`, free), of a cached `pread` of 4 KiB, and of each page
//! fault-around maps beside the faulting one (`filemap_map_pages`), and of unlinking one VMA
//! from a file's reverse map at munmap (`free_pgtables` → `unlink_file_vma`, the
//! `i_mmap_rwsem` write hold the model bounds by it), of a cached `pwrite` of 4 KiB, 1 and 0
//! bytes (the folio lock a buffered write holds from `write_begin` to `write_end` is bounded by
//! the difference of the first and the last), and of handing a spinlock-protected list over to
//! another CPU (the cache lines `lruvec->lru_lock`'s holder touches, moved from the previous
//! holder's cache), and of a page-table walk that test-and-clears accessed bits
//! (`/proc/self/clear_refs`, as MGLRU's `walk_pte_range` does for a young PTE), and of the
//! same walk passing over a none PTE (as `walk_pte_range` passes over none and old ones).
//!
//! `cargo run --release -p reclaimlab-cli --example calibrate [MIB]` (default 256 MiB per
//! measurement; 5 repetitions, the median is printed; `CALIBRATE_DIR` names the directory, and
//! so the file system, of the file measurements, else the temporary directory). Times are
//! wall-clock on this host, CPU time where a line says so: use them as the figures the cost
//! table cites, not inside a simulation.

use reclaimlab::machine::mm::PTRS_PER_PTE;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const PAGE: usize = 4096;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// mmap `len` bytes (anonymous, or of `fd`), refusing huge pages so every page faults alone.
fn map(len: usize, fd: Option<i32>) -> *mut u8 {
    let (flags, fd) = match fd {
        Some(fd) => (libc::MAP_SHARED, fd),
        None => (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1),
    };
    // SAFETY: a fresh mapping of `len` bytes; checked against MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "mmap failed");
    // SAFETY: advice on the mapping just made.
    unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
    p as *mut u8
}

/// Touches every page of a mapping (a read, or a write of one byte).
fn touch(p: *mut u8, len: usize, write: bool) {
    let mut sum = 0u64;
    for off in (0..len).step_by(PAGE) {
        // SAFETY: `off` is inside the mapping.
        unsafe {
            if write {
                p.add(off).write_volatile(1);
            } else {
                sum += p.add(off).read_volatile() as u64;
            }
        }
    }
    std::hint::black_box(sum);
}

fn unmap(p: *mut u8, len: usize) {
    // SAFETY: unmapping a mapping made by `map` with the same length.
    unsafe { libc::munmap(p as *mut libc::c_void, len) };
}

/// ns per page of a first write to anonymous memory (`do_anonymous_page`: allocation, memcg
/// charge, zeroing, PTE) and of unmapping it again (`zap_pte_range` and freeing).
fn anon_fault_and_zap(len: usize) -> (f64, f64) {
    let pages = (len / PAGE) as f64;
    let p = map(len, None);
    let t = Instant::now();
    touch(p, len, true);
    let fault = t.elapsed().as_nanos() as f64 / pages;
    let t = Instant::now();
    unmap(p, len);
    let zap = t.elapsed().as_nanos() as f64 / pages;
    (fault, zap)
}

/// ns per page of a first read of anonymous memory: `do_anonymous_page` maps the shared zero
/// page, the fault without allocation, charge, zeroing or LRU add.
fn anon_read_fault(len: usize) -> f64 {
    let p = map(len, None);
    let t = Instant::now();
    touch(p, len, false);
    let ns = t.elapsed().as_nanos() as f64 / (len / PAGE) as f64;
    unmap(p, len);
    ns
}

/// ns per page of zeroing 4 KiB of memory that is mapped but not in the caches (`clear_page`'s
/// work in a fault), done from user space over `len` bytes.
fn zero_pages(len: usize) -> f64 {
    let p = map(len, None);
    touch(p, len, true);
    let t = Instant::now();
    for off in (0..len).step_by(PAGE) {
        // SAFETY: the page at `off` is inside the mapping.
        unsafe { std::ptr::write_bytes(p.add(off), 0, PAGE) };
    }
    let ns = t.elapsed().as_nanos() as f64 / (len / PAGE) as f64;
    std::hint::black_box(p);
    unmap(p, len);
    ns
}

/// CPU time of the calling thread, in ns (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// CPU ns per `pread` of one 4 KiB page that misses the page cache, beyond a `pread` of the
/// same page cached: the miss's page allocation and charge, page-cache insert, bio build and
/// submit, sleeping and waking, and the completion's work in the task (the device's time and
/// the interrupt's CPU are not the thread's). The first `len` bytes of `file` are synced and
/// dropped from the cache (`POSIX_FADV_DONTNEED`), readahead off (`POSIX_FADV_RANDOM`).
fn read_miss_cpu(file: &std::fs::File, len: usize) -> (f64, f64) {
    let fd = file.as_raw_fd();
    file.sync_all().expect("fsync");
    let mut buf = vec![0u8; PAGE];
    let mut pass = || {
        let (t, w) = (thread_cpu_ns(), Instant::now());
        for off in (0..len).step_by(PAGE) {
            file.read_exact_at(&mut buf, off as u64).expect("pread");
        }
        (thread_cpu_ns() - t, w.elapsed().as_nanos() as f64)
    };
    // SAFETY: advice on the open file's first `len` bytes.
    unsafe {
        libc::posix_fadvise(fd, 0, len as i64, libc::POSIX_FADV_DONTNEED);
        libc::posix_fadvise(fd, 0, len as i64, libc::POSIX_FADV_RANDOM);
    }
    let miss = pass();
    let hit = pass();
    // SAFETY: as above.
    unsafe { libc::posix_fadvise(fd, 0, len as i64, libc::POSIX_FADV_NORMAL) };
    let pages = (len / PAGE) as f64;
    ((miss.0 - hit.0) / pages, (miss.1 - hit.1) / pages)
}

/// CPU ns per page of starting writeback of `len` bytes of dirty page cache in a file of
/// `dir` (`sync_file_range(SYNC_FILE_RANGE_WRITE)`: `->writepages` mapping each folio to its
/// blocks, building bios, `submit_bio`; the I/O's completion is not counted), every page
/// dirtied by a 4 KiB `pwrite` (order-0 folios). `allocated`: the blocks were written and
/// synced before (an overwrite), else the file is new (delayed allocation at writeback).
fn writeback_start(dir: &std::path::Path, len: usize, allocated: bool) -> f64 {
    let f = unlinked_file(&dir.join("calibrate-wb.dat"));
    let page = vec![5u8; PAGE];
    let dirty_every_page = || {
        for off in (0..len).step_by(PAGE) {
            f.write_all_at(&page, off as u64).expect("pwrite");
        }
    };
    if allocated {
        dirty_every_page();
        f.sync_all().expect("fsync");
    }
    dirty_every_page();
    let t = thread_cpu_ns();
    // SAFETY: a sync_file_range of the open file's first `len` bytes.
    let r =
        unsafe { libc::sync_file_range(f.as_raw_fd(), 0, len as i64, libc::SYNC_FILE_RANGE_WRITE) };
    let ns = (thread_cpu_ns() - t) / (len / PAGE) as f64;
    assert_eq!(r, 0, "sync_file_range failed");
    f.sync_all().expect("fsync");
    ns
}

/// Time of one `echo 1 > /proc/self/clear_refs`: a walk of every page table of this process
/// that test-and-clears each present PTE's accessed bit and its folio's referenced flag
/// (`clear_refs_pte_range`), the work MGLRU's `walk_pte_range` does for a young PTE (the
/// folio of the PFN, `ptep_test_and_clear_young`, a flag update).
fn clear_refs_ns() -> f64 {
    let mut f = OpenOptions::new()
        .write(true)
        .open("/proc/self/clear_refs")
        .expect("open /proc/self/clear_refs");
    let t = Instant::now();
    f.write_all(b"1").expect("write /proc/self/clear_refs");
    t.elapsed().as_nanos() as f64
}

/// ns per PTE of a page-table walk that clears accessed bits: `len` bytes of anonymous memory
/// written (every PTE present and young), then `clear_refs` over the process, less the same
/// walk without the mapping; then again with every PTE of the mapping old. Returns (young,
/// old).
fn clear_young_per_pte(len: usize) -> (f64, f64) {
    let pages = (len / PAGE) as f64;
    let base = clear_refs_ns();
    let p = map(len, None);
    touch(p, len, true);
    let young = (clear_refs_ns() - base) / pages;
    let old = (clear_refs_ns() - base) / pages;
    unmap(p, len);
    (young, old)
}

/// ns per none PTE that the same walk passes over (`clear_refs_pte_range`'s `!pte_present`
/// test, as `get_pte_pfn` returns early for none and old entries in `walk_pte_range`): `len`
/// bytes of anonymous memory of which only the first page of each PTE table's 2 MiB is written,
/// so every table exists and holds 511 none entries; the walk's time less the same walk
/// without the mapping, less `young_ns` for each present PTE, over the none entries.
fn clear_none_per_pte(len: usize, young_ns: f64) -> f64 {
    let table = PTRS_PER_PTE as usize;
    let pages = len / PAGE;
    let present = pages.div_ceil(table);
    let base = clear_refs_ns();
    let p = map(len, None);
    for off in (0..len).step_by(table * PAGE) {
        // SAFETY: `off` is inside the mapping.
        unsafe { p.add(off).write_volatile(1) };
    }
    let ns = (clear_refs_ns() - base - present as f64 * young_ns) / (pages - present) as f64;
    unmap(p, len);
    ns
}

/// A new, empty file at `path`, already unlinked (it goes away with the last handle).
fn unlinked_file(path: &std::path::Path) -> std::fs::File {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .expect("create");
    std::fs::remove_file(path).expect("unlink");
    f
}

/// A clean, cached file of `len` bytes.
fn cached_file(dir: &std::path::Path, len: usize) -> std::fs::File {
    let mut f = unlinked_file(&dir.join("calibrate.dat"));
    let block = vec![7u8; 1 << 20];
    for _ in 0..len / block.len() {
        f.write_all(&block).expect("write");
    }
    f.sync_all().expect("fsync");
    f
}

/// ns per page of MADV_PAGEOUT on a shared mapping of a clean cached file whose pages it alone
/// maps (`reclaim_pages` → `shrink_folio_list` without the reference check: isolation,
/// `try_to_unmap` of one PTE, `__remove_mapping` with a shadow entry, freeing).
fn pageout(file: &std::fs::File, len: usize) -> f64 {
    let p = map(len, Some(file.as_raw_fd()));
    touch(p, len, false);
    let t = Instant::now();
    // SAFETY: advice on the mapping just made.
    let r = unsafe { libc::madvise(p as *mut libc::c_void, len, libc::MADV_PAGEOUT) };
    let ns = t.elapsed().as_nanos() as f64 / (len / PAGE) as f64;
    assert_eq!(r, 0, "MADV_PAGEOUT failed");
    unmap(p, len);
    ns
}

/// ns per `pread` of one cached 4 KiB page (`filemap_read`: lookup, copy to user).
fn cached_pread(file: &std::fs::File, len: usize) -> f64 {
    let mut buf = vec![0u8; PAGE];
    for off in (0..len).step_by(PAGE) {
        file.read_exact_at(&mut buf, off as u64).expect("pread");
    }
    let t = Instant::now();
    for off in (0..len).step_by(PAGE) {
        file.read_exact_at(&mut buf, off as u64).expect("pread");
    }
    t.elapsed().as_nanos() as f64 / (len / PAGE) as f64
}

/// ns per `pwrite` of `bytes` bytes at the start of each page of a cached file's first `len`
/// bytes, every page already dirty (a first pass dirties them): entry and exit, the inode
/// lock and write checks, then for `bytes` > 0 `generic_perform_write` (`write_begin` finding
/// and locking the folio, the copy, `write_end` unlocking it, `balance_dirty_pages_ratelimited`).
fn cached_pwrite(file: &std::fs::File, len: usize, bytes: usize) -> f64 {
    let buf = vec![9u8; PAGE];
    for off in (0..len).step_by(PAGE) {
        file.write_all_at(&buf, off as u64).expect("pwrite");
    }
    let t = Instant::now();
    for off in (0..len).step_by(PAGE) {
        let n = file.write_at(&buf[..bytes], off as u64).expect("pwrite");
        assert_eq!(n, bytes, "short pwrite");
    }
    t.elapsed().as_nanos() as f64 / (len / PAGE) as f64
}

/// ns per munmap of an untouched one-page shared mapping of `file`: everything munmap does for
/// a VMA besides zapping PTEs (the VMA's lookup and detach, `free_pgtables` with
/// `unlink_file_vma` under `i_mmap_lock_write`, `remove_vma`), `count` times.
fn vma_unlink(file: &std::fs::File, count: usize) -> f64 {
    let maps: Vec<*mut u8> = (0..count)
        .map(|_| map(PAGE, Some(file.as_raw_fd())))
        .collect();
    let t = Instant::now();
    for &p in &maps {
        unmap(p, PAGE);
    }
    t.elapsed().as_nanos() as f64 / count as f64
}

/// A tmpfs file of `len` bytes (/dev/shm: order-0 folios, unlike ext4's large ones) holding
/// either every page or only the first page of each 16-page fault-around window.
fn shm_file(len: usize, sparse: bool) -> std::fs::File {
    let f =
        unlinked_file(&std::path::Path::new("/dev/shm").join(format!("calibrate-{sparse}.dat")));
    f.set_len(len as u64).expect("truncate");
    let page = vec![7u8; PAGE];
    for off in (0..len).step_by(PAGE) {
        if !sparse || off % (16 * PAGE) == 0 {
            f.write_all_at(&page, off as u64).expect("write");
        }
    }
    f
}

/// ns per read fault on the first page of each 16-page window of a mapping of `file`.
fn window_faults(file: &std::fs::File, len: usize) -> f64 {
    let p = map(len, Some(file.as_raw_fd()));
    let mut sum = 0u64;
    let t = Instant::now();
    for off in (0..len).step_by(16 * PAGE) {
        // SAFETY: `off` is inside the mapping.
        sum += unsafe { p.add(off).read_volatile() } as u64;
    }
    let ns = t.elapsed().as_nanos() as f64 / (len / (16 * PAGE)) as f64;
    std::hint::black_box(sum);
    unmap(p, len);
    ns
}

/// ns per extra page that fault-around (fault_around_bytes 64 KiB, the default) maps: faults
/// whose window is fully cached (16 pages mapped) against faults whose window holds only the
/// faulting page, divided by the 15 extra pages.
fn fault_around_per_page(len: usize) -> f64 {
    let full = shm_file(len, false);
    let sparse = shm_file(len, true);
    (window_faults(&full, len) - window_faults(&sparse, len)) / 15.0
}

/// One cache line of two words.
#[repr(C, align(64))]
#[derive(Default)]
struct Line(AtomicU64, AtomicU64);

/// What a lruvec lock's holder touches besides the folios, three cache lines: the lock word
/// (beside it the turn that forces the handoff, which the waiter spins on as a spinlock's
/// waiter spins on the lock word), the list head it links a folio at, and the list's size
/// counter (`lruvec->lru_lock`; `lruvec->lists[lru]` or `lrugen->folios[..]`; `lru_zone_size`
/// or `lrugen->nr_pages[..]`). The list and the counter are updated with plain loads and stores,
/// as `list_add` and `+=` are, so their misses may overlap.
#[derive(Default)]
struct SharedList {
    lock: Line,
    head: Line,
    size: Line,
}

impl SharedList {
    /// One critical section: take the lock, link at the head, count, pass the turn, release.
    fn hold(&self) {
        while self
            .lock
            .0
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        let next = self.head.0.load(Ordering::Relaxed);
        self.head.1.store(next, Ordering::Relaxed);
        self.head.0.store(next + 1, Ordering::Relaxed);
        let size = self.size.0.load(Ordering::Relaxed);
        self.size.0.store(size + 1, Ordering::Relaxed);
        let turn = self.lock.1.load(Ordering::Relaxed);
        self.lock.1.store(turn + 1, Ordering::Relaxed);
        self.lock.0.store(0, Ordering::Release);
    }

    fn turn(&self) -> u64 {
        self.lock.1.load(Ordering::Acquire)
    }
}

/// Pins the calling thread to `cpu`; false when it cannot be.
fn pin_to(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET and sched_setaffinity on it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// ns per critical section of [`SharedList`] when every one follows one on another CPU (two
/// threads pinned to CPUs 0 and 1 take turns), minus the same critical section repeated on one
/// CPU (cache-hot): what a handoff adds to a hold. Each trial times `n` handoffs; the fastest
/// of `trials` is kept, since a trial in which either CPU ran something else (another process
/// on this host) measures the scheduler, not the caches. None on a machine with one CPU.
fn lock_handoff(n: u64, trials: usize) -> Option<f64> {
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    if cpus < 2 {
        return None;
    }
    let mut best_pair = f64::INFINITY;
    let mut best_alone = f64::INFINITY;
    for _ in 0..trials {
        let s = SharedList::default();
        let pair = std::thread::scope(|sc| {
            let s = &s;
            let other = sc.spawn(move || {
                pin_to(1);
                for i in 0..n {
                    while s.turn() != 2 * i + 1 {
                        std::hint::spin_loop();
                    }
                    s.hold();
                }
            });
            pin_to(0);
            let t = Instant::now();
            for i in 0..n {
                while s.turn() != 2 * i {
                    std::hint::spin_loop();
                }
                s.hold();
            }
            while s.turn() != 2 * n {
                std::hint::spin_loop();
            }
            let ns = t.elapsed().as_nanos() as f64 / (2 * n) as f64;
            other.join().expect("handoff thread");
            ns
        });
        best_pair = best_pair.min(pair);
        let t = Instant::now();
        for _ in 0..2 * n {
            s.hold();
        }
        best_alone = best_alone.min(t.elapsed().as_nanos() as f64 / (2 * n) as f64);
    }
    Some(best_pair - best_alone)
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .map_or(256, |a| a.parse().expect("MIB: a number"));
    let len = mib << 20;
    // The file system of the cached file, the read misses and the writeback: CALIBRATE_DIR,
    // else the temporary directory.
    let dir = std::env::var_os("CALIBRATE_DIR").map_or_else(std::env::temp_dir, Into::into);
    let file = cached_file(&dir, len);
    let reps = 5;
    let mut fault = Vec::new();
    let mut zap = Vec::new();
    let mut out = Vec::new();
    let mut read = Vec::new();
    let mut around = Vec::new();
    let mut unlink = Vec::new();
    let (mut pte_young, mut pte_old, mut pte_none) = (Vec::new(), Vec::new(), Vec::new());
    let (mut read_fault, mut zero) = (Vec::new(), Vec::new());
    let (mut wb_over, mut wb_new) = (Vec::new(), Vec::new());
    let (mut miss, mut miss_wall) = (Vec::new(), Vec::new());
    let (mut write_page, mut write_byte, mut write_none) = (Vec::new(), Vec::new(), Vec::new());
    // Few enough dirty pages that the flusher does not clean them between the passes.
    let wlen = len.min(32 << 20);
    for _ in 0..reps {
        write_page.push(cached_pwrite(&file, wlen, PAGE));
        write_byte.push(cached_pwrite(&file, wlen, 1));
        write_none.push(cached_pwrite(&file, wlen, 0));
        unlink.push(vma_unlink(&file, 4096));
        let (y, o) = clear_young_per_pte(len);
        pte_young.push(y);
        pte_old.push(o);
        pte_none.push(clear_none_per_pte(len, y));
        around.push(fault_around_per_page(len));
        let (f, z) = anon_fault_and_zap(len);
        fault.push(f);
        zap.push(z);
        read_fault.push(anon_read_fault(len));
        zero.push(zero_pages(len));
        wb_over.push(writeback_start(&dir, wlen, true));
        wb_new.push(writeback_start(&dir, wlen, false));
        let (cpu, wall) = read_miss_cpu(&file, wlen);
        miss.push(cpu);
        miss_wall.push(wall);
        read.push(cached_pread(&file, len));
        out.push(pageout(&file, len));
    }
    let handoff = lock_handoff(2_000, 1_000);
    println!(
        "host kernel: {}",
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
    );
    println!("per page, median of {reps} x {mib} MiB:");
    let fault = median(fault);
    println!("  anon write fault (alloc + charge + zero + PTE)   {fault:8.0} ns");
    let (read_fault, zero) = (median(read_fault), median(zero));
    println!(
        "  anon read fault (the zero page: no allocation)   {read_fault:8.0} ns (zeroing 4 KiB: {zero:.0})"
    );
    println!(
        "  allocation + charge + LRU add of an anon page    {:8.0} ns (write fault - read fault - zeroing)",
        fault - read_fault - zero
    );
    println!(
        "  munmap of a touched anon page (zap + free)       {:8.0} ns",
        median(zap)
    );
    println!(
        "  writeback start of a dirty page (CPU, submit)    {:8.0} ns (an overwrite; a new file's page {:.0})",
        median(wb_over),
        median(wb_new)
    );
    println!(
        "  CPU of a pread that misses the cache             {:8.0} ns (beyond a cached pread; wall {:.0})",
        median(miss),
        median(miss_wall)
    );
    println!(
        "  MADV_PAGEOUT of a mapped clean file page         {:8.0} ns",
        median(out)
    );
    println!(
        "  pread of a cached 4 KiB page                     {:8.0} ns",
        median(read)
    );
    let (page, byte, none) = (median(write_page), median(write_byte), median(write_none));
    println!(
        "  pwrite of a cached dirty 4 KiB page              {page:8.0} ns (1 byte {byte:.0}, 0 bytes {none:.0})"
    );
    println!(
        "  a write's folio lock hold, at most (4 KiB - 0 B) {:8.0} ns (the copy alone, 4 KiB - 1 B: {:.0})",
        page - none,
        page - byte
    );
    println!(
        "  fault-around, each neighbour mapped (tmpfs)      {:8.0} ns",
        median(around)
    );
    println!(
        "  munmap of an untouched 1-page file mapping       {:8.0} ns (per VMA)",
        median(unlink)
    );
    println!(
        "  page-table walk clearing a young PTE (clear_refs) {:7.0} ns (an old one {:.0})",
        median(pte_young),
        median(pte_old)
    );
    println!(
        "  page-table walk passing a none PTE (clear_refs)  {:8.1} ns",
        median(pte_none)
    );
    match handoff {
        Some(ns) => println!(
            "  lock handoff to another CPU (3 cache lines)      {ns:8.0} ns (per hold, fastest of 1000 trials)"
        ),
        None => println!("  lock handoff to another CPU: one CPU here, not measured"),
    }
}
