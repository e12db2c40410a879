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
//! same walk passing over a none PTE (as `walk_pte_range` passes over none and old ones), and
//! of `lru_lock`'s hold per folio: an isolation's of cold folios off a list's tail and a
//! putback's of folios in the cache, each on stand-ins doing the kernel's per-folio work,
//! and the kernel's own activation of a cached folio (`folio_activate`), which bounds the
//! second, and of a thread's sleep in the kernel and its wake-up (a context switch and a
//! `try_to_wake_up`, as a task waiting for its read pays).
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

/// ns per page that activating a page-cache folio adds to a `pread` of it: a file written
/// with 1 MiB `write`s, then fsynced (its folios inactive and not referenced: `write_begin`
/// does not mark them accessed), is read page by page three times. The first pass's
/// `folio_mark_accessed` marks each folio referenced, the second's activates it
/// (`folio_activate`: a reference and the per-CPU batch, then `folio_batch_move_lru` under
/// `lru_lock` per batch: `lruvec_del_folio`, `folio_set_active`, `lruvec_add_folio`, the
/// counters), the third finds it active: the second pass less the third. The difference bounds from above what the lock is held per folio for a
/// move of folios just touched (del and add; a putback's or lru_add's hold is an add alone).
fn activation_per_page(dir: &std::path::Path, len: usize) -> f64 {
    let file = cached_file(dir, len);
    let mut buf = vec![0u8; PAGE];
    let pass = |buf: &mut Vec<u8>| {
        let t = Instant::now();
        for off in (0..len).step_by(PAGE) {
            file.read_exact_at(buf, off as u64).expect("pread");
        }
        t.elapsed().as_nanos() as f64 / (len / PAGE) as f64
    };
    pass(&mut buf);
    let second = pass(&mut buf);
    let third = pass(&mut buf);
    second - third
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
        spin_lock(&self.lock.0);
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

/// Takes a test-and-set spinlock (`spin_lock`'s uncontended fast path, spinning otherwise).
fn spin_lock(lock: &AtomicU64) {
    while lock
        .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::hint::spin_loop();
    }
}

/// A stand-in for a folio's first cache line as `lru_lock`'s holder touches it: flags
/// (`PG_lru`), the `lru` list links, and the rest of the line (mapping, index, refcounts).
#[repr(C, align(64))]
struct FakeFolio {
    flags: AtomicU64,
    refcount: AtomicU64,
    prev: u32,
    next: u32,
    _rest: [u64; 5],
}

/// A counter alone on its cache line.
#[repr(C, align(64))]
struct CounterLine([u64; 8]);

/// `n` zeroed elements in anonymous memory backed by transparent huge pages where the host
/// allows them, as the kernel's `struct page` array (vmemmap) is mapped by huge pages: the
/// measurement then pays the cache misses, not TLB misses a 4 KiB mapping would add.
fn huge_slice<T>(n: usize) -> &'static mut [T] {
    let len = (n * std::mem::size_of::<T>()).next_multiple_of(2 << 20);
    // SAFETY: a fresh private anonymous mapping of `len` bytes, zero-filled, which an all-zero
    // `T` (atomics and integers) may be; unmapped by the caller before it is used again.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert!(p != libc::MAP_FAILED, "mmap of {len} bytes");
        libc::madvise(p, len, libc::MADV_HUGEPAGE);
        std::slice::from_raw_parts_mut(p as *mut T, n)
    }
}

/// ns per folio that an isolation holds `lru_lock` for (`isolate_lru_folios`), with the folios
/// cold in the cache as an LRU's tail is: `n` folios of 64 bytes (more than the last-level
/// cache holds) on a circular list in random order; under an uncontended lock, batches of 32
/// (`SWAP_CLUSTER_MAX`) take the tail folio, prefetch the next one
/// (`prefetchw_prev_lru_folio`), take a reference (`folio_try_get`), test-and-clear its LRU
/// flag (`folio_test_clear_lru`), unlink it (`list_move` to the private list, whose links
/// stay in cache) and count it on three lines (`update_lru_size`: the memcg lruvec's, the
/// node's and the zone's counts). The fastest of `trials` passes over the whole list.
///
/// Also returns the ns per step of a plain walk of the same list (`prev` to `prev`, nothing
/// else), the cache miss alone, so that the hold can be carried to a host whose memory latency
/// differs: the hold less the miss is the work under the lock.
fn lru_isolation_hold(n: usize, trials: usize) -> (f64, f64) {
    const NIL: u32 = u32::MAX;
    const PG_LRU: u64 = 1 << 4;
    const BATCH: usize = 32;
    let (mut best, mut best_walk) = (f64::INFINITY, f64::INFINITY);
    for trial in 0..trials {
        let folios = huge_slice::<FakeFolio>(n);
        for f in folios.iter_mut() {
            *f = FakeFolio {
                flags: AtomicU64::new(PG_LRU),
                refcount: AtomicU64::new(1),
                prev: NIL,
                next: NIL,
                _rest: [0; 5],
            };
        }
        // A random order (xorshift Fisher-Yates), so that each next folio is a cache miss.
        let mut order: Vec<u32> = (0..n as u32).collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ trial as u64;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        for w in 0..n {
            let (a, b) = (order[w] as usize, order[(w + 1) % n]);
            folios[a].next = b;
            folios[b as usize].prev = a as u32;
        }
        let t = Instant::now();
        let mut at = order[n - 1];
        for _ in 0..n {
            at = folios[at as usize].prev;
        }
        best_walk = best_walk.min(t.elapsed().as_nanos() as f64 / n as f64);
        std::hint::black_box(at);
        let lock = AtomicU64::new(0);
        // update_lru_size: the memcg lruvec's, the node's and the zone's counts, each on a
        // line of its own.
        let mut counters = [
            CounterLine([0; 8]),
            CounterLine([0; 8]),
            CounterLine([0; 8]),
        ];
        let (mut size, mut taken_head) = (n as u64, NIL);
        let mut tail = order[n - 1];
        let t = Instant::now();
        let mut left = n;
        while left > 0 {
            spin_lock(&lock);
            for _ in 0..BATCH.min(left) {
                let f = tail as usize;
                let prev = folios[f].prev;
                #[cfg(target_arch = "x86_64")]
                // SAFETY: a prefetch of an element of the slice; it never faults.
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch(folios.as_ptr().add(prev as usize) as *const i8, _MM_HINT_T0);
                }
                if folios[f].refcount.fetch_add(1, Ordering::AcqRel) == 0
                    || folios[f].flags.fetch_and(!PG_LRU, Ordering::AcqRel) & PG_LRU == 0
                {
                    break;
                }
                let next = folios[f].next;
                folios[prev as usize].next = next;
                folios[next as usize].prev = prev;
                folios[f].next = taken_head;
                taken_head = tail;
                tail = prev;
                size -= 1;
                for c in counters.iter_mut() {
                    c.0[0] = c.0[0].wrapping_sub(1);
                }
                left -= 1;
            }
            lock.store(0, Ordering::Release);
        }
        let ns = t.elapsed().as_nanos() as f64 / n as f64;
        std::hint::black_box((size, taken_head, &counters));
        let len = (n * std::mem::size_of::<FakeFolio>()).next_multiple_of(2 << 20);
        unmap(folios.as_mut_ptr() as *mut u8, len);
        best = best.min(ns);
    }
    (best, best_walk)
}

/// ns per folio that a putback or an lru_add batch holds `lru_lock` for, its folios in the
/// cache (their caller has just touched them): `lruvec_add_folio` as `move_folios_to_lru` and
/// `folio_batch_move_lru` run it, on batches of 15 (`PAGEVEC_SIZE`) of 256 folios of 64
/// bytes under an uncontended lock: set the LRU flag (`folio_set_lru`), check the folio's
/// memcg against the locked lruvec's (`folio_lruvec_relock_irq`), count it on six lines of
/// their own (`update_lru_size`: the node's and the zone's per-CPU vmstat, the memcg's and
/// the lruvec's per-CPU state, `lru_zone_size`, the rstat update tree), link it at the list's
/// head and drop the isolation's reference (`folio_put_testzero`). Fastest of `trials`.
fn lru_add_hold(trials: usize) -> f64 {
    const N: usize = 256;
    const BATCH: usize = 15;
    const PG_LRU: u64 = 1 << 4;
    let mut best = f64::INFINITY;
    let folios = huge_slice::<FakeFolio>(N);
    let memcg_of: Vec<u64> = vec![7; N];
    let mut counters: Vec<CounterLine> = (0..6).map(|_| CounterLine([0; 8])).collect();
    let lock = AtomicU64::new(0);
    let (mut head, mut locked_memcg) = (u32::MAX, 7u64);
    for _ in 0..trials {
        for f in folios.iter_mut() {
            f.refcount.store(2, Ordering::Relaxed);
            f.flags.store(0, Ordering::Relaxed);
        }
        let t = Instant::now();
        for start in (0..N).step_by(BATCH) {
            spin_lock(&lock);
            for i in start..(start + BATCH).min(N) {
                folios[i].flags.fetch_or(PG_LRU, Ordering::AcqRel);
                if memcg_of[i] != locked_memcg {
                    locked_memcg = memcg_of[i];
                }
                for c in counters.iter_mut() {
                    c.0[0] = c.0[0].wrapping_add(1);
                }
                folios[i].next = head;
                folios[i].prev = u32::MAX;
                if head != u32::MAX {
                    folios[head as usize].prev = i as u32;
                }
                head = i as u32;
                folios[i].refcount.fetch_sub(1, Ordering::AcqRel);
            }
            lock.store(0, Ordering::Release);
        }
        best = best.min(t.elapsed().as_nanos() as f64 / N as f64);
        head = u32::MAX;
    }
    std::hint::black_box((&counters, locked_memcg));
    let len = (N * std::mem::size_of::<FakeFolio>()).next_multiple_of(2 << 20);
    unmap(folios.as_mut_ptr() as *mut u8, len);
    best
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

/// ns per sleep of a thread that blocks in the kernel and is woken (`schedule` out,
/// `try_to_wake_up`, the switch back in), as a task sleeping on its read or a throttle pays:
/// two threads pinned to CPU 0 wake each other through a pair of pipes, `n` round trips, each
/// two sleeps; less the round trip's system calls (a pipe write and read by one thread, which
/// does not block), per sleep. The fastest of `trials`. Both threads share one CPU, so no
/// wake-up waits for an idle CPU (which, in a virtual machine, exits to the hypervisor).
fn sleep_and_wake(n: usize, trials: usize) -> f64 {
    let pipe = || {
        let mut fds = [0i32; 2];
        // SAFETY: pipe writes two descriptors into the array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
        fds
    };
    let one = |fd: i32, write: bool| {
        let mut b = [0u8; 1];
        // SAFETY: one byte from or to a live buffer.
        let r = unsafe {
            if write {
                libc::write(fd, b.as_ptr().cast(), 1)
            } else {
                libc::read(fd, b.as_mut_ptr().cast(), 1)
            }
        };
        assert_eq!(r, 1, "pipe i/o");
    };
    pin_to(0);
    let mut best = f64::INFINITY;
    for _ in 0..trials {
        let (a, b) = (pipe(), pipe());
        let t = Instant::now();
        for _ in 0..n {
            one(a[1], true);
            one(a[0], false);
        }
        let calls = t.elapsed().as_nanos() as f64 / n as f64;
        let peer = std::thread::spawn(move || {
            pin_to(0);
            for _ in 0..n {
                one(a[0], false);
                one(b[1], true);
            }
        });
        let t = Instant::now();
        for _ in 0..n {
            one(a[1], true);
            one(b[0], false);
        }
        let round_trip = t.elapsed().as_nanos() as f64 / n as f64;
        peer.join().expect("sleep-and-wake peer");
        for fd in a.into_iter().chain(b) {
            // SAFETY: descriptors this function opened.
            unsafe { libc::close(fd) };
        }
        best = best.min((round_trip - 2.0 * calls) / 2.0);
    }
    best
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
    let sleep = sleep_and_wake(100_000, reps);
    // 4 Mi folios of 64 bytes: 256 MiB, far beyond the last-level cache.
    let (isolation, chase) = lru_isolation_hold(4 << 20, reps);
    // 256 folios (16 KiB): all in the first-level cache, as a putback's or an lru_add batch's
    // folios are, just touched by their caller.
    let (hot, _) = lru_isolation_hold(256, 2_000);
    let add = lru_add_hold(2_000);
    let activation = median((0..reps).map(|_| activation_per_page(&dir, len)).collect());
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
    println!(
        "  lru_lock hold per folio isolated, folios cold     {isolation:7.0} ns (a stand-in, fastest of {reps}; of it a cache miss: {chase:.0})"
    );
    println!("  the same, folios in the cache (256 of them)       {hot:7.1} ns (fastest of 2000)");
    println!(
        "  lru_lock hold per folio put back or added (hot)   {add:7.1} ns (a stand-in, fastest of 2000)"
    );
    println!(
        "  activation of a cached folio (pread, 2nd - 3rd)   {activation:7.0} ns (bounds a del + add hold)"
    );
    match handoff {
        Some(ns) => println!(
            "  lock handoff to another CPU (3 cache lines)      {ns:8.0} ns (per hold, fastest of 1000 trials)"
        ),
        None => println!("  lock handoff to another CPU: one CPU here, not measured"),
    }
    println!(
        "  a kernel sleep and its wake-up (one CPU)         {sleep:8.0} ns (per sleep, fastest of {reps})"
    );
}
