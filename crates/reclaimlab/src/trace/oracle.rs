//! libCacheSim's `oracleGeneral` binary object traces.
//!
//! # Layout
//!
//! No header; a sequence of packed 24-byte little-endian records (as read by libCacheSim's
//! `traceReader/customizedReader/oracle/oracleGeneralBin.h`):
//!
//! | offset | type | field                                              |
//! |--------|------|----------------------------------------------------|
//! | 0      | u32  | `clock_time`, seconds                              |
//! | 4      | u64  | `obj_id`                                           |
//! | 12     | u32  | `obj_size`, bytes                                  |
//! | 16     | i64  | `next_access_vtime` (ignored here)                 |
//!
//! A file whose length is not a multiple of 24 is rejected (truncated final record).
//!
//! # Mapping to pages
//!
//! `obj_id` names an object, not a byte offset, so each object gets its own page range in
//! file 0: object `obj_id` of `obj_size` bytes covers pages `obj_id * 2^20 + k` for
//! `k in 0..max(1, ceil(obj_size / 4096))` (an object of size 0 counts as one page; libCacheSim
//! can instead skip such requests). As `obj_size < 4 GiB`, `k < 2^20` and objects never overlap
//! as long as `obj_id < 2^44`. Larger ids (e.g. 64-bit hashes) wrap modulo 2^64: their top 20
//! bits are dropped, so ids equal in their low 44 bits share pages.
//!
//! The format has no operation: every access is a read. Times are
//! `(clock_time - earliest clock_time) * 10^9` ns.

use crate::access::{Op, TraceRecord, PAGE_SIZE};

use super::block::{check_whole_records, le_u32, le_u64, runs_to_trace, PageRun};
use super::{TraceError, TraceHeader};

/// Size of one oracleGeneral record in bytes.
pub const ORACLE_RECORD_BYTES: usize = 24;

/// Each object's page range starts at `obj_id << OBJECT_PAGE_SHIFT`.
pub const OBJECT_PAGE_SHIFT: u32 = 20;

const NS_PER_SECOND: u64 = 1_000_000_000;

/// Reads a whole oracleGeneral trace held in memory.
pub fn read_oracle_general(bytes: &[u8]) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    check_whole_records(bytes.len(), ORACLE_RECORD_BYTES)?;
    let runs: Vec<PageRun> = bytes
        .chunks_exact(ORACLE_RECORD_BYTES)
        .map(object_run)
        .collect();
    Ok(runs_to_trace(&runs))
}

/// The first page of object `obj_id`'s range.
pub fn object_first_page(obj_id: u64) -> u64 {
    obj_id << OBJECT_PAGE_SHIFT
}

pub(crate) fn object_run(record: &[u8]) -> PageRun {
    let clock_time = le_u32(record, 0);
    let obj_id = le_u64(record, 4);
    let obj_size = le_u32(record, 12);
    PageRun {
        time_ns: u64::from(clock_time) * NS_PER_SECOND,
        first_page: object_first_page(obj_id),
        pages: u64::from(obj_size).div_ceil(PAGE_SIZE).max(1),
        op: Op::Read,
        request: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{PageRef, Via};

    fn record(clock_time: u32, obj_id: u64, obj_size: u32, next: i64) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&clock_time.to_le_bytes());
        bytes.extend_from_slice(&obj_id.to_le_bytes());
        bytes.extend_from_slice(&obj_size.to_le_bytes());
        bytes.extend_from_slice(&next.to_le_bytes());
        bytes
    }

    fn trace(records: &[(u32, u64, u32)]) -> Vec<u8> {
        records
            .iter()
            .flat_map(|&(t, id, size)| record(t, id, size, -1))
            .collect()
    }

    fn pages_and_times(records: &[TraceRecord]) -> Vec<(u64, u64)> {
        records
            .iter()
            .map(|r| match r.page {
                PageRef::File { file: 0, page } => (r.time_ns, page),
                other => panic!("unexpected page {other:?}"),
            })
            .collect()
    }

    #[test]
    fn objects_split_into_their_own_page_ranges() {
        let bytes = trace(&[(100, 5, 0), (100, 7, 4097), (103, 5, 4096), (101, 2, 8192)]);
        let (header, records) = read_oracle_general(&bytes).unwrap();
        let base = |id: u64| id << 20;
        assert_eq!(
            pages_and_times(&records),
            vec![
                (0, base(5)),
                (0, base(7)),
                (0, base(7) + 1),
                (3_000_000_000, base(5)),
                (1_000_000_000, base(2)),
                (1_000_000_000, base(2) + 1),
            ]
        );
        assert!(records
            .iter()
            .all(|r| r.op == Op::Read && r.via == Via::Fd && r.pid == 1 && r.memcg == 0));
        assert_eq!(header.files, vec![(0, base(7) + 2, None)]);
    }

    #[test]
    fn largest_object_stays_inside_its_range() {
        let bytes = trace(&[(0, 1, u32::MAX)]);
        let (_, records) = read_oracle_general(&bytes).unwrap();
        assert_eq!(records.len(), 1 << 20);
        assert_eq!(
            records.last().unwrap().page,
            PageRef::File {
                file: 0,
                page: (2 << 20) - 1
            }
        );
    }

    #[test]
    fn huge_object_ids_wrap_instead_of_failing() {
        let id = (1u64 << 44) + 3;
        let (_, records) = read_oracle_general(&trace(&[(0, id, 1)])).unwrap();
        assert_eq!(
            records[0].page,
            PageRef::File {
                file: 0,
                page: 3 << 20
            }
        );
    }

    #[test]
    fn next_access_vtime_is_ignored() {
        let a = read_oracle_general(&record(1, 9, 10, 42)).unwrap();
        let b = read_oracle_general(&record(1, 9, 10, i64::MAX)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn truncated_final_record_is_an_error() {
        let mut bytes = trace(&[(0, 1, 1), (0, 2, 1)]);
        bytes.extend_from_slice(&[0u8; 10]);
        let err = read_oracle_general(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte offset 48: truncated record: 10 of 24 bytes"
        );
    }

    #[test]
    fn empty_trace_is_empty() {
        let (header, records) = read_oracle_general(&[]).unwrap();
        assert!(records.is_empty());
        assert_eq!(header.files, vec![(0, 0, None)]);
    }
}
