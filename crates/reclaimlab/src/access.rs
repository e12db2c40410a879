//! The unit of every workload and trace: one access to one 4 KiB page (a `read()` of several
//! pages is one record per page, each carrying the pages left in its request).
//!
//! Scenarios, generators and trace readers all produce [`TraceRecord`]s; the simulator and the
//! textbook caches consume them. Keeping one small `Copy` type here is what lets the same stream
//! be replayed by every policy and written to a trace file byte for byte.

use serde::{Deserialize, Serialize};

/// Which page an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PageRef {
    /// Private anonymous memory of the accessing process, page `page` of its anon area.
    Anon { page: u64 },
    /// Page `page` (4 KiB units) of file `file`.
    File { file: u32, page: u64 },
}

impl PageRef {
    /// A single number identifying the page, for caches keyed by object id.
    /// Anon pages are per process, so the pid is folded in.
    pub fn key(self, pid: u32) -> u64 {
        match self {
            PageRef::Anon { page } => {
                (1u64 << 63) | ((pid as u64) << 40) | (page & ((1 << 40) - 1))
            }
            PageRef::File { file, page } => ((file as u64) << 40) | (page & ((1 << 40) - 1)),
        }
    }
}

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    Read,
    Write,
}

/// How the page is reached: through a file descriptor (read/write, the folio_mark_accessed
/// path) or through a mapping (a load or store that sets the PTE accessed/dirty bits).
/// Anonymous accesses are always `Mmap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Via {
    Fd,
    Mmap,
}

/// One page access as it appears in a trace or a generated stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Simulated time of issue, in nanoseconds since the start (0 when the stream is closed-loop
    /// and the simulator should issue it as soon as the previous access of the thread completes).
    pub time_ns: u64,
    /// Process id (trace-local numbering).
    pub pid: u32,
    /// Memory cgroup index (0 = root); trace headers map indexes to paths.
    pub memcg: u16,
    pub page: PageRef,
    pub op: Op,
    pub via: Via,
    /// For a read through a file descriptor: the pages of its `read()` request from this page
    /// to the request's end, this one included (`filemap_read`'s `last_index - index`); 1 for a
    /// one-page read or a request's last page, and for every other access. A request of N
    /// pages is N consecutive records with `req` N, N-1, ..., 1.
    #[serde(default = "one_page")]
    pub req: u32,
}

fn one_page() -> u32 {
    1
}

impl TraceRecord {
    /// A one-page access (`req` 1).
    pub fn new(time_ns: u64, pid: u32, memcg: u16, page: PageRef, op: Op, via: Via) -> Self {
        TraceRecord {
            time_ns,
            pid,
            memcg,
            page,
            op,
            via,
            req: 1,
        }
    }
}

/// Size of a page in bytes.
pub const PAGE_SIZE: u64 = 4096;
