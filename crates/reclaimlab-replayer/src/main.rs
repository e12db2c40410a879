//! `reclaimlab-replayer PLAN DATA_DIR CGROUP_ROOT`: replays a plan inside the validation guest
//! and prints the counters around it on stdout (the serial console).
//!
//! The coordinator (this process, in the root memcg) maps the records and a one-byte-per-record
//! result array as shared memory and touches them before forking, so they are charged to the
//! root memcg and the replaying processes never charge them. It forks one process per plan
//! process; each writes its pid to its memcg's `cgroup.procs` *before* opening or touching any
//! file (page cache is charged to the first memcg that touches it), opens its files, maps them
//! `MAP_SHARED` (the mapping also serves `mincore()` for fd accesses) and its anonymous area,
//! and says it is ready. Then the coordinator hands out runs of consecutive records of one
//! process over a pipe ("execute records start..start+count"), waiting for each run to finish,
//! so the records execute exactly in plan order; this costs two pipe round trips and two
//! context switches per run (one run per record when processes alternate, one run in all for a
//! single process). Before each access the replaying process asks `mincore()` whether the page
//! is resident and records a miss if not.
//!
//! A concurrent plan (`RLPLAN02` with the concurrent flag) is not serialized: once every
//! process has said it is ready (the start barrier) and the `before` counters are read, the
//! coordinator gives each process all its records at once ("execute every record of yours", the
//! "go" on each process's pipe, written back to back) and waits until all have finished; the
//! processes run in parallel on the guest's CPUs, each in its own record order. The per-record
//! miss bits are recorded the same way (a page another process faults in between the
//! `mincore()` and the access still counts as a miss of both).
//!
//! How fast each process of a concurrent plan went is recorded too: before every
//! `PROGRESS_EVERY`-th record of its own, and after its last, a process stores the time since
//! the go (CLOCK_MONOTONIC) in a shared array, printed as `progress`; `schedstat` gives each
//! process's `/proc/PID/schedstat` after the replay (time on a CPU, time waiting on a run
//! queue, time slices). The emulated guest's CPUs are far slower than its disk, so its
//! processes are CPU-bound and progress unevenly, which changes what they miss; the harness
//! paces the model by this record.
//!
//! Output sections, each starting with a line `=== NAME ===`: `replay config`, `meminfo before`,
//! `vmstat before`, `memcg PATH before` (one per memcg and ancestor), `lru_gen before`, then
//! after the replay the same `... after` sections, `misses` (per process), `missmap` (one bit per
//! record, hex), for a concurrent plan `progress` and `schedstat`, and `replay end` (the
//! replay's `elapsed_ms` and its go on CLOCK_MONOTONIC, `go_ns`). `vmstat` is
//! read after writing `/proc/sys/vm/stat_refresh` (per-CPU node counters folded).

use reclaimlab_replayer::{decode_plan, memcg_tree, missmap_hex, PlanHeader, PlanRecord};
use std::ffi::CString;
use std::io::Write;
use std::time::Instant;

const PAGE: usize = 4096;
/// Result byte of a record never executed (its process died first).
const NOT_RUN: u8 = 2;
/// A process of a concurrent plan stamps the time before every this many of its own records.
const PROGRESS_EVERY: u64 = 32;

/// CLOCK_MONOTONIC in nanoseconds.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn die(msg: &str) -> ! {
    eprintln!("reclaimlab-replayer: {msg}");
    let _ = std::io::stdout().flush();
    println!("=== replay error ===");
    println!("{msg}");
    let _ = std::io::stdout().flush();
    std::process::exit(1);
}

fn errno_str() -> String {
    std::io::Error::last_os_error().to_string()
}

/// Anonymous shared memory of `len` bytes, touched (charged to the current memcg: the root).
fn shared_region(len: usize) -> *mut u8 {
    let len = len.max(PAGE);
    // SAFETY: a fresh anonymous mapping; checked for MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        die(&format!("mmap shared {len}: {}", errno_str()));
    }
    // SAFETY: the mapping is `len` bytes long and writable.
    unsafe { std::ptr::write_bytes(p as *mut u8, 0, len) };
    p as *mut u8
}

struct Child {
    pid: libc::pid_t,
    cmd_w: libc::c_int,
    done_r: libc::c_int,
    dead: bool,
}

fn write_all(fd: libc::c_int, b: &[u8]) -> bool {
    let mut off = 0;
    while off < b.len() {
        // SAFETY: writing from a valid slice.
        let n = unsafe { libc::write(fd, b[off..].as_ptr() as *const _, b.len() - off) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return false;
        }
        off += n as usize;
    }
    true
}

fn read_exact(fd: libc::c_int, b: &mut [u8]) -> bool {
    let mut off = 0;
    while off < b.len() {
        // SAFETY: reading into a valid slice.
        let n = unsafe { libc::read(fd, b[off..].as_mut_ptr() as *mut _, b.len() - off) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return false;
        }
        if n == 0 {
            return false;
        }
        off += n as usize;
    }
    true
}

fn read_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn section(out: &mut impl Write, name: &str, body: &str) {
    let _ = writeln!(out, "=== {name} ===");
    let _ = out.write_all(body.as_bytes());
    if !body.is_empty() && !body.ends_with('\n') {
        let _ = writeln!(out);
    }
}

fn dump(out: &mut impl Write, h: &PlanHeader, cgroot: &str, when: &str) {
    let _ = std::fs::write("/proc/sys/vm/stat_refresh", "1\n");
    section(
        out,
        &format!("vmstat {when}"),
        &read_text("/proc/vmstat").unwrap_or_default(),
    );
    for path in memcg_tree(h.memcgs.iter().map(|m| m.path.clone())) {
        let dir = format!("{cgroot}{path}");
        let mut body = String::new();
        for (file, key) in [
            ("memory.current", "current"),
            ("memory.max", "max"),
            ("memory.peak", "peak"),
            ("memory.swap.current", "swap.current"),
        ] {
            if let Some(t) = read_text(&format!("{dir}/{file}")) {
                body.push_str(&format!("{key} {}\n", t.trim()));
            }
        }
        for (file, prefix) in [("memory.stat", "stat"), ("memory.events", "events")] {
            for line in read_text(&format!("{dir}/{file}"))
                .unwrap_or_default()
                .lines()
            {
                body.push_str(&format!("{prefix} {line}\n"));
            }
        }
        section(out, &format!("memcg {path} {when}"), &body);
    }
    if let Some(t) = read_text("/sys/kernel/debug/lru_gen") {
        section(out, &format!("lru_gen {when}"), &t);
    }
    section(
        out,
        &format!("meminfo {when}"),
        &read_text("/proc/meminfo").unwrap_or_default(),
    );
    let _ = out.flush();
}

/// The replaying process: never returns.
#[allow(clippy::too_many_arguments)]
fn child_main(
    me: usize,
    h: &PlanHeader,
    records: *const u8,
    results: *mut u8,
    data: &str,
    cgroot: &str,
    cmd_r: libc::c_int,
    done_w: libc::c_int,
    stamps: *mut u64,
) -> ! {
    let fail = |msg: String| -> ! {
        eprintln!("reclaimlab-replayer[{}]: {msg}", h.procs[me].pid);
        let _ = write_all(done_w, b"E");
        // SAFETY: leaving the child without running the parent's destructors.
        unsafe { libc::_exit(3) }
    };
    let p = &h.procs[me];
    // 1. Join the memcg before touching anything.
    let path = h.memcg_path(p.memcg).unwrap_or("/");
    let procs = if path == "/" {
        format!("{cgroot}/cgroup.procs")
    } else {
        format!("{cgroot}{path}/cgroup.procs")
    };
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    if let Err(e) = std::fs::write(&procs, format!("{pid}\n")) {
        fail(format!("joining {procs}: {e}"));
    }
    let n = h.n_records as usize;
    let rec = |i: usize| -> PlanRecord {
        // SAFETY: i < n and the region holds n records.
        PlanRecord::from_bytes(unsafe { std::slice::from_raw_parts(records.add(i * 16), 16) })
    };
    // 2. Open and map the files this process uses.
    let mut used = vec![false; h.files.len()];
    for i in 0..n {
        let r = rec(i);
        if r.proc_index() == me && !r.is_anon() {
            used[r.file_slot as usize] = true;
        }
    }
    let mut fds = vec![-1; h.files.len()];
    let mut maps: Vec<*mut u8> = vec![std::ptr::null_mut(); h.files.len()];
    for (slot, f) in h.files.iter().enumerate() {
        if !used[slot] {
            continue;
        }
        let c = CString::new(format!("{data}/{}", f.name)).unwrap();
        // SAFETY: a valid C string.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            fail(format!("open {}: {}", f.name, errno_str()));
        }
        // SAFETY: plain syscalls on our own descriptor.
        unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM) };
        let len = f.pages as usize * PAGE;
        // SAFETY: mapping our own file; checked.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if m == libc::MAP_FAILED {
            fail(format!("mmap {}: {}", f.name, errno_str()));
        }
        fds[slot] = fd;
        maps[slot] = m as *mut u8;
    }
    let anon: *mut u8 = if p.anon_pages > 0 {
        // SAFETY: a fresh private anonymous mapping; checked.
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                p.anon_pages as usize * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if m == libc::MAP_FAILED {
            fail(format!("mmap anon: {}", errno_str()));
        }
        m as *mut u8
    } else {
        std::ptr::null_mut()
    };
    let mut buf = [0u8; PAGE];
    let mut wbuf = [0x5au8; PAGE];
    if !write_all(done_w, b"R") {
        fail("cannot report ready".into());
    }
    // 3. Execute runs of records as the coordinator hands them out.
    let mut own = 0u64;
    loop {
        let mut cmd = [0u8; 16];
        if !read_exact(cmd_r, &mut cmd) {
            // SAFETY: the coordinator is gone; leave.
            unsafe { libc::_exit(0) };
        }
        let start = u64::from_le_bytes(cmd[0..8].try_into().unwrap()) as usize;
        let count = u64::from_le_bytes(cmd[8..16].try_into().unwrap()) as usize;
        if count == 0 {
            // SAFETY: done.
            unsafe { libc::_exit(0) };
        }
        for i in start..start + count {
            let r = rec(i);
            if r.proc_index() != me {
                if h.concurrent {
                    continue;
                }
                fail(format!("record {i} is not mine"));
            }
            if h.concurrent && own.is_multiple_of(PROGRESS_EVERY) {
                // SAFETY: i < n, the shared stamp array has n + procs slots.
                unsafe { *stamps.add(i) = monotonic_ns() };
            }
            own += 1;
            let page = r.page as usize;
            let addr = if r.is_anon() {
                // SAFETY: page < anon_pages (checked by decode_plan).
                unsafe { anon.add(page * PAGE) }
            } else {
                // SAFETY: page < file pages (checked by decode_plan).
                unsafe { maps[r.file_slot as usize].add(page * PAGE) }
            };
            let mut vec = 0u8;
            // SAFETY: addr is page-aligned inside one of our mappings.
            if unsafe { libc::mincore(addr as *mut _, PAGE, &mut vec) } != 0 {
                fail(format!("mincore record {i}: {}", errno_str()));
            }
            let miss = vec & 1 == 0;
            if r.is_mmap() {
                if r.is_write() {
                    // SAFETY: a writable mapping.
                    unsafe {
                        if r.is_anon() {
                            std::ptr::write_volatile(addr as *mut u64, i as u64 + 1)
                        } else {
                            std::ptr::write_volatile(addr, (i as u8) | 1)
                        }
                    };
                } else {
                    // SAFETY: a readable mapping.
                    let v = unsafe { std::ptr::read_volatile(addr) };
                    std::hint::black_box(v);
                }
            } else {
                let fd = fds[r.file_slot as usize];
                let off = (page * PAGE) as libc::off_t;
                // SAFETY: valid buffers of PAGE bytes.
                let got = unsafe {
                    if r.is_write() {
                        wbuf[0] = i as u8;
                        libc::pwrite(fd, wbuf.as_ptr() as *const _, PAGE, off)
                    } else {
                        libc::pread(fd, buf.as_mut_ptr() as *mut _, PAGE, off)
                    }
                };
                if got != PAGE as isize {
                    fail(format!(
                        "record {i}: read/write returned {got}: {}",
                        errno_str()
                    ));
                }
            }
            // SAFETY: i < n, the shared result array has n bytes.
            unsafe { *results.add(i) = miss as u8 };
        }
        if h.concurrent {
            // SAFETY: slot n + me of the n + procs slots: this process's finish.
            unsafe { *stamps.add(n + me) = monotonic_ns() };
        }
        if !write_all(done_w, b"D") {
            // SAFETY: the coordinator is gone.
            unsafe { libc::_exit(0) };
        }
    }
}

/// The `progress` section: for each process, `pid P` and the microseconds since the go at
/// which it began its own records 0, `PROGRESS_EVERY`, 2 × `PROGRESS_EVERY`, ..., then the one
/// at which it finished its last (32 numbers a line, continued on lines of their own).
fn print_progress(
    out: &mut impl Write,
    h: &PlanHeader,
    rec_proc: impl Fn(usize) -> usize,
    stamps: *const u64,
    n: usize,
    go_ns: u64,
) {
    let _ = writeln!(out, "=== progress ===");
    let _ = writeln!(out, "every {PROGRESS_EVERY}");
    // SAFETY: n + procs slots.
    let st = unsafe { std::slice::from_raw_parts(stamps, n + h.procs.len()) };
    let us = |t: u64| t.saturating_sub(go_ns) / 1000;
    for (pi, p) in h.procs.iter().enumerate() {
        let mut v: Vec<u64> = (0..n)
            .filter(|&i| rec_proc(i) == pi && st[i] != 0)
            .map(|i| us(st[i]))
            .collect();
        if st[n + pi] != 0 {
            v.push(us(st[n + pi]));
        }
        for (k, chunk) in v.chunks(32).enumerate() {
            let vals: Vec<String> = chunk.iter().map(|x| x.to_string()).collect();
            let lead = if k == 0 { "pid" } else { "more" };
            let _ = writeln!(out, "{lead} {} {}", p.pid, vals.join(" "));
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        die("usage: reclaimlab-replayer PLAN DATA_DIR CGROUP_ROOT");
    }
    let (data, cgroot) = (args[2].as_str(), args[3].trim_end_matches('/'));
    let bytes = std::fs::read(&args[1]).unwrap_or_else(|e| die(&format!("{}: {e}", args[1])));
    let (h, start) = decode_plan(&bytes).unwrap_or_else(|e| die(&e.to_string()));
    let n = h.n_records as usize;
    let records = shared_region(n * 16);
    // SAFETY: the region has n * 16 bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes[start..].as_ptr(), records, n * 16) };
    drop(bytes);
    let results = shared_region(n);
    // SAFETY: n bytes.
    unsafe { std::ptr::write_bytes(results, NOT_RUN, n) };
    // One slot per record (set before every PROGRESS_EVERY-th of its process's own records)
    // and one per process (its finish): zero means never stamped.
    let stamps = shared_region((n + h.procs.len()) * 8) as *mut u64;
    // SAFETY: the region has n + procs u64 slots.
    unsafe { std::ptr::write_bytes(stamps, 0, n + h.procs.len()) };
    // SAFETY: ignoring SIGPIPE so a dead child shows as a failed write.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let _ = writeln!(out, "=== replay config ===");
    let _ = writeln!(out, "records {n}");
    if h.concurrent {
        let _ = writeln!(out, "concurrent 1");
    }
    for p in &h.procs {
        let _ = writeln!(
            out,
            "proc {} memcg {} anon_pages {}",
            p.pid,
            h.memcg_path(p.memcg).unwrap_or("?"),
            p.anon_pages
        );
    }
    let _ = out.flush();

    let mut children: Vec<Child> = Vec::new();
    for me in 0..h.procs.len() {
        let mut cmd = [0; 2];
        let mut done = [0; 2];
        // SAFETY: two-element arrays for pipe().
        if unsafe { libc::pipe(cmd.as_mut_ptr()) } != 0
            || unsafe { libc::pipe(done.as_mut_ptr()) } != 0
        {
            die(&format!("pipe: {}", errno_str()));
        }
        let _ = out.flush();
        // SAFETY: single-threaded; the child only runs child_main.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            die(&format!("fork: {}", errno_str()));
        }
        if pid == 0 {
            // SAFETY: closing the coordinator's descriptors in the child.
            unsafe {
                libc::close(cmd[1]);
                libc::close(done[0]);
                for c in &children {
                    libc::close(c.cmd_w);
                    libc::close(c.done_r);
                }
            }
            child_main(
                me, &h, records, results, data, cgroot, cmd[0], done[1], stamps,
            );
        }
        // SAFETY: closing the child's ends in the coordinator.
        unsafe {
            libc::close(cmd[0]);
            libc::close(done[1]);
        }
        children.push(Child {
            pid,
            cmd_w: cmd[1],
            done_r: done[0],
            dead: false,
        });
    }
    for (i, c) in children.iter().enumerate() {
        let mut b = [0u8];
        if !read_exact(c.done_r, &mut b) || b[0] != b'R' {
            die(&format!("process {} failed to start", h.procs[i].pid));
        }
    }

    dump(&mut out, &h, cgroot, "before");
    let t0 = Instant::now();
    let rec_proc = |i: usize| -> usize {
        // SAFETY: i < n.
        PlanRecord::from_bytes(unsafe { std::slice::from_raw_parts(records.add(i * 16), 16) })
            .proc_index()
    };
    let go_ns = monotonic_ns();
    if h.concurrent {
        // The go: every process gets all its records, then all run in parallel.
        let mut cmd = [0u8; 16];
        cmd[8..16].copy_from_slice(&(n as u64).to_le_bytes());
        for c in children.iter_mut() {
            if !write_all(c.cmd_w, &cmd) {
                c.dead = true;
            }
        }
        for (p, c) in children.iter_mut().enumerate() {
            let mut b = [0u8];
            if c.dead || !read_exact(c.done_r, &mut b) {
                c.dead = true;
            } else if b[0] != b'D' {
                die(&format!("process {} failed", h.procs[p].pid));
            }
        }
    }
    let mut i = if h.concurrent { n } else { 0 };
    while i < n {
        let p = rec_proc(i);
        let mut j = i + 1;
        while j < n && rec_proc(j) == p {
            j += 1;
        }
        let c = &mut children[p];
        if !c.dead {
            let mut cmd = [0u8; 16];
            cmd[0..8].copy_from_slice(&(i as u64).to_le_bytes());
            cmd[8..16].copy_from_slice(&((j - i) as u64).to_le_bytes());
            let mut b = [0u8];
            if !write_all(c.cmd_w, &cmd) || !read_exact(c.done_r, &mut b) {
                c.dead = true;
            } else if b[0] != b'D' {
                die(&format!("process {} failed", h.procs[p].pid));
            }
        }
        i = j;
    }
    let elapsed = t0.elapsed();
    dump(&mut out, &h, cgroot, "after");

    let _ = writeln!(out, "=== misses ===");
    for (pi, p) in h.procs.iter().enumerate() {
        let (mut acc, mut miss, mut notrun) = (0u64, 0u64, 0u64);
        for k in 0..n {
            if rec_proc(k) != pi {
                continue;
            }
            // SAFETY: k < n.
            match unsafe { *results.add(k) } {
                0 => acc += 1,
                1 => {
                    acc += 1;
                    miss += 1
                }
                _ => notrun += 1,
            }
        }
        let _ = writeln!(
            out,
            "pid {} accesses {acc} misses {miss} not_run {notrun} killed {}",
            p.pid, children[pi].dead as u8
        );
    }
    let _ = writeln!(out, "=== missmap ===");
    // SAFETY: n bytes.
    let res = unsafe { std::slice::from_raw_parts(results, n) };
    let hex = missmap_hex(res.iter().map(|&b| b == 1));
    for chunk in hex.as_bytes().chunks(128) {
        let _ = out.write_all(chunk);
        let _ = writeln!(out);
    }
    if h.concurrent {
        print_progress(&mut out, &h, rec_proc, stamps, n, go_ns);
        let _ = writeln!(out, "=== schedstat ===");
        for (pi, c) in children.iter().enumerate() {
            let s = read_text(&format!("/proc/{}/schedstat", c.pid)).unwrap_or_default();
            let v: Vec<&str> = s.split_whitespace().collect();
            if v.len() >= 3 {
                let _ = writeln!(
                    out,
                    "pid {} run_ns {} wait_ns {} slices {}",
                    h.procs[pi].pid, v[0], v[1], v[2]
                );
            }
        }
    }
    let _ = out.flush();
    for c in &children {
        let _ = write_all(c.cmd_w, &[0u8; 16]);
    }
    let _ = writeln!(out, "=== exits ===");
    for (pi, c) in children.iter().enumerate() {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(c.pid, &mut status, 0) };
        let how = if libc::WIFSIGNALED(status) {
            format!("signal {}", libc::WTERMSIG(status))
        } else {
            format!("exit {}", libc::WEXITSTATUS(status))
        };
        let _ = writeln!(out, "pid {} {how}", h.procs[pi].pid);
    }
    let _ = writeln!(out, "=== replay end ===");
    let _ = writeln!(out, "elapsed_ms {}", elapsed.as_millis());
    // The go on CLOCK_MONOTONIC itself, to place the kernel's timed work (the memcg statistics
    // flushes the init traces) in the replay.
    let _ = writeln!(out, "go_ns {go_ns}");
    let _ = out.flush();
}
