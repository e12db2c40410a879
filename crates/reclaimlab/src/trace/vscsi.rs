//! libCacheSim's (CloudPhysics') `vscsi` binary block traces.
//!
//! # Layout
//!
//! No header; a sequence of fixed-size little-endian records in one of two versions, as
//! declared by `trace_v1_record_t` / `trace_v2_record_t` in libCacheSim's
//! `traceReader/customizedReader/vscsi.h` (natural C alignment, which adds no padding):
//!
//! VSCSI1, 32 bytes:
//!
//! | offset | type | field                                         |
//! |--------|------|-----------------------------------------------|
//! | 0      | u32  | `sn`, serial number (ignored)                 |
//! | 4      | u32  | `len`, request length in bytes                |
//! | 8      | u32  | `nSG`, scatter-gather entries (ignored)       |
//! | 12     | u16  | `cmd`, SCSI opcode                            |
//! | 14     | u16  | `ver`, version in the high byte: `0x01xx`     |
//! | 16     | u64  | `lbn`, start in 512-byte sectors              |
//! | 24     | u64  | `ts`, issue time in microseconds              |
//!
//! VSCSI2, 40 bytes:
//!
//! | offset | type | field                                         |
//! |--------|------|-----------------------------------------------|
//! | 0      | u16  | `cmd`, SCSI opcode                            |
//! | 2      | u16  | `ver`, version in the high byte: `0x02xx`     |
//! | 4      | u32  | `sn` (ignored)                                |
//! | 8      | u32  | `len`, bytes                                  |
//! | 12     | u32  | `nSG` (ignored)                               |
//! | 16     | u64  | `lbn`, 512-byte sectors                       |
//! | 24     | u64  | `ts`, microseconds                            |
//! | 32     | u64  | `rt`, response time (ignored)                 |
//!
//! # Version detection
//!
//! As libCacheSim's `test_vscsi_version`: the file must be at least 80 bytes (two VSCSI2
//! records). If `ver >> 8 == 2` in both of the first two records read as VSCSI2 (bytes 2..4
//! and 42..44), the trace is VSCSI2; otherwise, if `ver >> 8 == 1` in both of the first two
//! records read as VSCSI1 (bytes 14..16 and 46..48), it is VSCSI1; otherwise it is rejected.
//! The file length must then be a multiple of the record size (libCacheSim silently drops a
//! truncated final record; this reader reports it).
//!
//! # Mapping to pages
//!
//! A request covers bytes `[lbn * 512, lbn * 512 + len)`; it becomes one read or write per
//! 4 KiB page of that range (length 0 counts as one page). libCacheSim itself uses `lbn` as an
//! object id and does not scale it; that `lbn` counts 512-byte sectors is visible in the
//! CloudPhysics sample, where consecutive 512-byte requests advance `lbn` by 1.
//!
//! The op comes from the SCSI opcode in `cmd`, with libCacheSim's lists (`vscsi_read_ver1`)
//! plus WRITE(6):
//!
//! * read: 0x08 READ(6), 0x28 READ(10), 0x2D, 0x88 READ(16), 0xA8 READ(12);
//! * write: 0x0A WRITE(6) (not in libCacheSim's list), 0x2A WRITE(10), 0x3F, 0x8A WRITE(16),
//!   0x8E, 0x9A, 0x9C, 0xAA WRITE(12), 0xAE.
//!
//! Requests with any other opcode move no data; libCacheSim marks them `OP_INVALID`, this
//! reader leaves them out and counts them in [`VscsiTrace::skipped`]. Times are
//! `(ts - earliest ts) * 1000` ns.

use crate::access::{Op, TraceRecord};

use super::block::{
    byte_range_pages, check_whole_records, le_u16, le_u32, le_u64, runs_to_trace, PageRun,
};
use super::{TraceError, TraceHeader};

/// Bytes per `lbn` unit.
pub const SECTOR_BYTES: u64 = 512;

/// The two vscsi record layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VscsiVersion {
    V1,
    V2,
}

impl VscsiVersion {
    /// Size of one record in bytes.
    pub fn record_bytes(self) -> usize {
        match self {
            VscsiVersion::V1 => 32,
            VscsiVersion::V2 => 40,
        }
    }

    /// Where the `ver` field sits in a record.
    fn ver_offset(self) -> usize {
        match self {
            VscsiVersion::V1 => 14,
            VscsiVersion::V2 => 2,
        }
    }

    /// The value of `ver >> 8` that marks this version.
    fn tag(self) -> u16 {
        match self {
            VscsiVersion::V1 => 1,
            VscsiVersion::V2 => 2,
        }
    }
}

/// A vscsi trace read into page records, with what was left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VscsiTrace {
    pub version: VscsiVersion,
    /// Requests (records) in the file.
    pub requests: u64,
    /// Requests left out because their opcode is neither a read nor a write.
    pub skipped: u64,
    /// File 0 sized to 1 + the largest page.
    pub header: TraceHeader,
    pub records: Vec<TraceRecord>,
}

impl VscsiTrace {
    pub fn into_parts(self) -> (TraceHeader, Vec<TraceRecord>) {
        (self.header, self.records)
    }
}

/// The fields of one request that matter here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct VscsiRequest {
    cmd: u16,
    len: u32,
    lbn: u64,
    ts_us: u64,
}

/// Minimum file size for version detection (two VSCSI2 records), as in libCacheSim.
pub(crate) const DETECTION_BYTES: usize = 80;

/// Reads a whole vscsi trace held in memory.
pub fn read_vscsi(bytes: &[u8]) -> Result<VscsiTrace, TraceError> {
    let version = detect_vscsi_version(bytes)?;
    let record_bytes = version.record_bytes();
    check_whole_records(bytes.len(), record_bytes)?;
    let mut runs = Vec::with_capacity(bytes.len() / record_bytes);
    for (index, record) in bytes.chunks_exact(record_bytes).enumerate() {
        let offset = (index * record_bytes) as u64;
        if let Some(run) = record_run(version, record, offset)? {
            runs.push(run);
        }
    }
    let requests = (bytes.len() / record_bytes) as u64;
    let skipped = requests - runs.len() as u64;
    let (header, records) = runs_to_trace(&runs);
    Ok(VscsiTrace {
        version,
        requests,
        skipped,
        header,
        records,
    })
}

/// Tells VSCSI1 from VSCSI2 the way libCacheSim does (see the module documentation).
pub fn detect_vscsi_version(bytes: &[u8]) -> Result<VscsiVersion, TraceError> {
    if bytes.len() < DETECTION_BYTES {
        let problem = format!(
            "file of {} bytes is too small to detect the vscsi version (needs at least {DETECTION_BYTES})",
            bytes.len()
        );
        return Err(TraceError::offset(0, problem));
    }
    let is = |version: VscsiVersion| {
        (0..2).all(|i| {
            let at = i * version.record_bytes() + version.ver_offset();
            le_u16(bytes, at) >> 8 == version.tag()
        })
    };
    if is(VscsiVersion::V2) {
        Ok(VscsiVersion::V2)
    } else if is(VscsiVersion::V1) {
        Ok(VscsiVersion::V1)
    } else {
        let problem = "not a vscsi trace: no version 1 or 2 tag in the first two records";
        Err(TraceError::offset(0, problem))
    }
}

/// Read or write for a SCSI opcode; `None` for commands that move no data.
pub fn scsi_op(cmd: u16) -> Option<Op> {
    match cmd {
        0x08 | 0x28 | 0x2D | 0x88 | 0xA8 => Some(Op::Read),
        0x0A | 0x2A | 0x3F | 0x8A | 0x8E | 0x9A | 0x9C | 0xAA | 0xAE => Some(Op::Write),
        _ => None,
    }
}

fn parse_request(version: VscsiVersion, record: &[u8]) -> VscsiRequest {
    match version {
        VscsiVersion::V1 => VscsiRequest {
            len: le_u32(record, 4),
            cmd: le_u16(record, 12),
            lbn: le_u64(record, 16),
            ts_us: le_u64(record, 24),
        },
        VscsiVersion::V2 => VscsiRequest {
            cmd: le_u16(record, 0),
            len: le_u32(record, 8),
            lbn: le_u64(record, 16),
            ts_us: le_u64(record, 24),
        },
    }
}

/// The pages the record at byte `offset` touches; `None` if it is not a read or write.
pub(crate) fn record_run(
    version: VscsiVersion,
    record: &[u8],
    offset: u64,
) -> Result<Option<PageRun>, TraceError> {
    request_run(parse_request(version, record), offset)
}

/// The pages a request touches; `None` if it is not a read or write.
fn request_run(request: VscsiRequest, offset: u64) -> Result<Option<PageRun>, TraceError> {
    let Some(op) = scsi_op(request.cmd) else {
        return Ok(None);
    };
    let pages = request
        .lbn
        .checked_mul(SECTOR_BYTES)
        .and_then(|start| byte_range_pages(start, request.len.into()));
    let Some((first_page, pages)) = pages else {
        let problem = format!(
            "request at lbn {} of {} bytes runs past the 64-bit byte range",
            request.lbn, request.len
        );
        return Err(TraceError::offset(offset, problem));
    };
    let Some(time_ns) = request.ts_us.checked_mul(1000) else {
        let problem = format!("timestamp {} us does not fit in u64 ns", request.ts_us);
        return Err(TraceError::offset(offset, problem));
    };
    Ok(Some(PageRun {
        time_ns,
        first_page,
        pages,
        op,
        request: true,
    }))
}

#[cfg(test)]
mod tests;
