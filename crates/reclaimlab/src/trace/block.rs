//! Shared by the libCacheSim readers: turning byte-range (block or object) requests into page
//! accesses of file 0.
//!
//! Every request becomes a run of consecutive pages, all with the request's time and op,
//! `pid` 1, `memcg` 0, `via` [`Via::Fd`]. A block trace's read request of N pages (vscsi,
//! csv) is one `read()` of N pages: its records carry `req` N, N-1, ..., 1 (readahead sizes its
//! window from it, as `filemap_read` passes the request's length to `page_cache_sync_ra`);
//! an object trace's (oracleGeneral) objects are not file reads, and their pages keep `req` 1. Times are rebased so that the earliest request of the
//! trace is at 0 ns (a [`TraceRecord`]'s time counts from the start of the trace).

use crate::access::{Op, PageRef, TraceRecord, Via, PAGE_SIZE};

use super::{TraceError, TraceHeader};

/// The pid every block-trace record is issued by.
pub const BLOCK_TRACE_PID: u32 = 1;

/// The file every block-trace page belongs to.
pub const BLOCK_TRACE_FILE: u32 = 0;

/// One request, already mapped to `pages` consecutive pages starting at `first_page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageRun {
    /// Absolute time of the request in ns, before rebasing.
    pub time_ns: u64,
    pub first_page: u64,
    pub pages: u64,
    pub op: Op,
    /// The pages are one request of a block trace (a read is one `read()` of them all);
    /// false for an object trace's object.
    pub request: bool,
}

impl PageRun {
    /// `TraceRecord::req` of page `k` of the run.
    pub(crate) fn req_at(&self, k: u64) -> u32 {
        if self.request && self.op == Op::Read {
            u32::try_from(self.pages - k).unwrap_or(u32::MAX)
        } else {
            1
        }
    }
}

/// The pages covered by the bytes `[offset, offset + size)`, as `(first_page, page_count)`.
/// A request of size 0 counts as touching the one page holding `offset`.
/// `None` if the range runs past the end of the 64-bit address space.
pub(crate) fn byte_range_pages(offset: u64, size: u64) -> Option<(u64, u64)> {
    let last_byte = offset.checked_add(size.max(1) - 1)?;
    let first = offset / PAGE_SIZE;
    let last = last_byte / PAGE_SIZE;
    Some((first, last - first + 1))
}

/// Checks that a binary trace of `len` bytes holds a whole number of `record_bytes` records;
/// a truncated final record is an error at its offset.
pub(crate) fn check_whole_records(len: usize, record_bytes: usize) -> Result<(), TraceError> {
    let rest = len % record_bytes;
    if rest == 0 {
        return Ok(());
    }
    let problem = format!("truncated record: {rest} of {record_bytes} bytes");
    Err(TraceError::offset((len - rest) as u64, problem))
}

/// The little-endian u16 at `at` (the caller guarantees the bytes exist).
pub(crate) fn le_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// The little-endian u32 at `at` (the caller guarantees the bytes exist).
pub(crate) fn le_u32(bytes: &[u8], at: usize) -> u32 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(raw)
}

/// The little-endian u64 at `at` (the caller guarantees the bytes exist).
pub(crate) fn le_u64(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(raw)
}

/// Expands runs into page records and builds the header: no memcg declarations (everything
/// is in the root) and file 0 sized to 1 + the largest page (0 for an empty trace).
pub(crate) fn runs_to_trace(runs: &[PageRun]) -> (TraceHeader, Vec<TraceRecord>) {
    let start = runs.iter().map(|r| r.time_ns).min().unwrap_or(0);
    let total: u64 = runs.iter().map(|r| r.pages).sum();
    let mut records = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    let mut file_pages = 0u64;
    for run in runs {
        push_run(&mut records, run, run.time_ns - start);
        let end = run.first_page.saturating_add(run.pages);
        file_pages = file_pages.max(end);
    }
    let header = TraceHeader {
        memcgs: Vec::new(),
        files: vec![(BLOCK_TRACE_FILE, file_pages, None)],
        tmpfs: Vec::new(),
    };
    (header, records)
}

fn push_run(records: &mut Vec<TraceRecord>, run: &PageRun, time_ns: u64) {
    for k in 0..run.pages {
        records.push(TraceRecord {
            time_ns,
            pid: BLOCK_TRACE_PID,
            memcg: 0,
            page: PageRef::File {
                file: BLOCK_TRACE_FILE,
                page: run.first_page + k,
            },
            op: run.op,
            via: Via::Fd,
            req: run.req_at(k),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_cover_the_pages_they_touch() {
        assert_eq!(byte_range_pages(0, 0), Some((0, 1)));
        assert_eq!(byte_range_pages(0, 1), Some((0, 1)));
        assert_eq!(byte_range_pages(0, 4096), Some((0, 1)));
        assert_eq!(byte_range_pages(0, 4097), Some((0, 2)));
        assert_eq!(byte_range_pages(4095, 2), Some((0, 2)));
        assert_eq!(byte_range_pages(8192, 0), Some((2, 1)));
        assert_eq!(byte_range_pages(8191, 0), Some((1, 1)));
        assert_eq!(byte_range_pages(3584, 1024), Some((0, 2)));
        assert_eq!(byte_range_pages(u64::MAX, 1), Some((u64::MAX / 4096, 1)));
        assert_eq!(byte_range_pages(u64::MAX, 2), None);
    }

    #[test]
    fn runs_expand_rebased_with_file_size() {
        let runs = [
            PageRun {
                time_ns: 500,
                first_page: 3,
                pages: 2,
                op: Op::Write,
                request: true,
            },
            PageRun {
                time_ns: 200,
                first_page: 1,
                pages: 1,
                op: Op::Read,
                request: true,
            },
        ];
        let (header, records) = runs_to_trace(&runs);
        assert_eq!(header.files, vec![(0, 5, None)]);
        assert!(header.memcgs.is_empty());
        let got: Vec<(u64, PageRef, Op)> =
            records.iter().map(|r| (r.time_ns, r.page, r.op)).collect();
        let file = |page| PageRef::File { file: 0, page };
        assert_eq!(
            got,
            vec![
                (300, file(3), Op::Write),
                (300, file(4), Op::Write),
                (0, file(1), Op::Read)
            ]
        );
        assert!(records
            .iter()
            .all(|r| r.pid == 1 && r.memcg == 0 && r.via == Via::Fd));
    }

    #[test]
    fn empty_trace_has_an_empty_file_zero() {
        let (header, records) = runs_to_trace(&[]);
        assert!(records.is_empty());
        assert_eq!(header.files, vec![(0, 0, None)]);
    }
}
