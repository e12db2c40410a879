//! Streaming trace readers: one page record at a time, through a buffer, with no allocation
//! per record and no whole-trace copy.
//!
//! [`open_records`] opens a trace file of any [`TraceFormat`] as a [`RecordReader`]. Gzip and
//! zstd files are recognised by their magic bytes and decompressed as a stream (as
//! libCacheSim reads `.zst` traces). The libCacheSim formats yield the same records as the
//! whole-file readers, except that times are **not** rebased: a replay subtracts the earliest
//! time, which it learns in its first pass ([`TraceFormat::rebases_time`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use crate::access::{PageRef, TraceRecord, Via};

use super::block::{PageRun, BLOCK_TRACE_FILE, BLOCK_TRACE_PID};
use super::native::NativeReader;
use super::text::LineReader;
use super::vscsi::{self, VscsiVersion};
use super::{csv, oracle, CsvSpec, TraceError, TraceFormat, TraceHeader};

/// A trace's bytes, buffered (and decompressed).
pub type Input = Box<dyn BufRead + Send>;

/// Size of the read buffer (and of a decompressor's output buffer).
pub const READ_BUFFER_BYTES: usize = 1 << 18;

/// A trace read one page record at a time.
pub trait RecordReader: Send {
    /// The next record; `None` at the end of the trace. After an error the reader is done.
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError>;

    /// The next record and how many records follow it that differ only in their page, one
    /// page further each, and their `req`, one less each for a read request (the rest of a
    /// block or object request): a first pass can take a request of a million pages in one
    /// step. `next_record` continues after them.
    fn next_run(&mut self) -> Result<Option<(TraceRecord, u64)>, TraceError> {
        Ok(self.next_record()?.map(|r| (r, 1)))
    }

    /// The declarations read so far (a native trace's `memcg` and `file` lines; nothing for
    /// the libCacheSim formats). Complete once `next_record` has returned `None`.
    fn header(&self) -> TraceHeader {
        TraceHeader::default()
    }
}

impl TraceFormat {
    /// Whether a replay rebases this format's times so that the earliest record is at 0 ns
    /// (the libCacheSim formats; native traces keep their times).
    pub fn rebases_time(&self) -> bool {
        !matches!(self, TraceFormat::Native)
    }
}

/// Opens a trace file for streaming. Errors (here and from the reader) do not name the file;
/// the caller adds it with [`TraceError::in_file`].
pub fn open_records(
    path: &Path,
    format: &TraceFormat,
) -> Result<Box<dyn RecordReader>, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Open {
        path: path.to_owned(),
        source,
    })?;
    let input = decompressed(BufReader::with_capacity(READ_BUFFER_BYTES, file))?;
    records_from(input, format)
}

/// The records of a trace read from any buffered input.
pub fn records_from(
    input: Input,
    format: &TraceFormat,
) -> Result<Box<dyn RecordReader>, TraceError> {
    Ok(match format {
        TraceFormat::Native => Box::new(NativeRecords(NativeReader::new(input)?)),
        TraceFormat::OracleGeneral => Box::new(BinaryRecords::new(input, BinaryKind::Oracle)),
        TraceFormat::Vscsi => {
            let mut input = input;
            let version = sniff_vscsi_version(&mut input)?;
            Box::new(BinaryRecords::new(input, BinaryKind::Vscsi(version)))
        }
        TraceFormat::Csv(spec) => Box::new(CsvRecords::new(input, *spec)?),
    })
}

/// Gzip and zstd magic numbers (RFC 1952, RFC 8878).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The input itself, or its decompressed stream when it starts with a gzip or zstd magic.
fn decompressed(mut input: BufReader<File>) -> Result<Input, TraceError> {
    let head = input.fill_buf()?;
    if head.starts_with(&ZSTD_MAGIC) {
        let decoder = zstd::stream::read::Decoder::with_buffer(input)?;
        return Ok(Box::new(BufReader::with_capacity(
            READ_BUFFER_BYTES,
            decoder,
        )));
    }
    if head.starts_with(&GZIP_MAGIC) {
        let decoder = flate2::bufread::MultiGzDecoder::new(input);
        return Ok(Box::new(BufReader::with_capacity(
            READ_BUFFER_BYTES,
            decoder,
        )));
    }
    Ok(Box::new(input))
}

/// Tells the vscsi version from the first two records without consuming them
/// ([`vscsi::detect_vscsi_version`]).
fn sniff_vscsi_version(input: &mut Input) -> Result<VscsiVersion, TraceError> {
    let need = vscsi::DETECTION_BYTES;
    let mut head = Vec::with_capacity(need);
    input.by_ref().take(need as u64).read_to_end(&mut head)?;
    let version = vscsi::detect_vscsi_version(&head)?;
    let rest = std::mem::replace(input, Box::new(io::empty()));
    *input = Box::new(io::Cursor::new(head).chain(rest));
    Ok(version)
}

/// A native trace: [`NativeReader`] already streams.
struct NativeRecords(NativeReader<Input>);

impl RecordReader for NativeRecords {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        self.0.next().transpose()
    }

    fn header(&self) -> TraceHeader {
        self.0.header().clone()
    }
}

/// Expands one request's run of pages into page records of file 0 (`block::runs_to_trace`
/// without the rebasing).
#[derive(Default)]
struct RunExpander {
    run: Option<PageRun>,
    next: u64,
}

impl RunExpander {
    fn start(&mut self, run: PageRun) {
        self.run = Some(run);
        self.next = 0;
    }

    /// The next page's record and up to `max` pages of the run from it (at least one).
    fn take(&mut self, max: u64) -> Option<(TraceRecord, u64)> {
        let run = self.run?;
        if self.next >= run.pages {
            self.run = None;
            return None;
        }
        let page = run.first_page + self.next;
        let n = (run.pages - self.next).min(max);
        self.next += n;
        let record = TraceRecord {
            time_ns: run.time_ns,
            pid: BLOCK_TRACE_PID,
            memcg: 0,
            page: PageRef::File {
                file: BLOCK_TRACE_FILE,
                page,
            },
            op: run.op,
            via: Via::Fd,
            req: run.req_at(self.next - n),
        };
        Some((record, n))
    }
}

/// The fixed-size binary record formats.
#[derive(Clone, Copy)]
enum BinaryKind {
    Oracle,
    Vscsi(VscsiVersion),
}

impl BinaryKind {
    fn record_bytes(self) -> usize {
        match self {
            BinaryKind::Oracle => oracle::ORACLE_RECORD_BYTES,
            BinaryKind::Vscsi(v) => v.record_bytes(),
        }
    }

    /// The run of pages of one record at byte `offset` (`None`: a record that moves no data).
    fn decode(self, record: &[u8], offset: u64) -> Result<Option<PageRun>, TraceError> {
        match self {
            BinaryKind::Oracle => Ok(Some(oracle::object_run(record))),
            BinaryKind::Vscsi(v) => vscsi::record_run(v, record, offset),
        }
    }
}

/// oracleGeneral and vscsi records read through a buffer, one at a time.
struct BinaryRecords {
    input: Input,
    kind: BinaryKind,
    record: [u8; 40],
    /// Byte offset of the next record.
    offset: u64,
    pages: RunExpander,
}

impl BinaryRecords {
    fn new(input: Input, kind: BinaryKind) -> Self {
        BinaryRecords {
            input,
            kind,
            record: [0; 40],
            offset: 0,
            pages: RunExpander::default(),
        }
    }

    /// Reads the next whole record; `false` at a clean end of input.
    fn read_record(&mut self) -> Result<bool, TraceError> {
        let len = self.kind.record_bytes();
        let got = read_full(&mut self.input, &mut self.record[..len])?;
        if got == 0 {
            return Ok(false);
        }
        if got < len {
            let problem = format!("truncated record: {got} of {len} bytes");
            return Err(TraceError::offset(self.offset, problem));
        }
        Ok(true)
    }
}

impl RecordReader for BinaryRecords {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        Ok(self.next_pages(1)?.map(|(r, _)| r))
    }

    fn next_run(&mut self) -> Result<Option<(TraceRecord, u64)>, TraceError> {
        self.next_pages(u64::MAX)
    }
}

impl BinaryRecords {
    /// The next page and up to `max` pages of its request.
    fn next_pages(&mut self, max: u64) -> Result<Option<(TraceRecord, u64)>, TraceError> {
        loop {
            if let Some(run) = self.pages.take(max) {
                return Ok(Some(run));
            }
            let len = self.kind.record_bytes();
            // Decode straight from the read buffer; copy only a record that straddles it.
            let buffered = self.input.fill_buf()?;
            let run = if buffered.len() >= len {
                let run = self.kind.decode(&buffered[..len], self.offset)?;
                self.input.consume(len);
                run
            } else {
                if !self.read_record()? {
                    return Ok(None);
                }
                self.kind.decode(&self.record[..len], self.offset)?
            };
            self.offset += len as u64;
            if let Some(run) = run {
                self.pages.start(run);
            }
        }
    }
}

/// Fills `buf` as far as the input allows; returns the bytes read (less only at the end).
fn read_full(input: &mut dyn BufRead, buf: &mut [u8]) -> Result<usize, TraceError> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(got)
}

/// Delimited-text block or object traces, one line at a time.
struct CsvRecords {
    lines: LineReader<Input>,
    spec: CsvSpec,
    pages: RunExpander,
}

impl CsvRecords {
    fn new(input: Input, spec: CsvSpec) -> Result<Self, TraceError> {
        spec.validate()?;
        Ok(CsvRecords {
            lines: LineReader::new(input, false),
            spec,
            pages: RunExpander::default(),
        })
    }
}

impl RecordReader for CsvRecords {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        Ok(self.next_pages(1)?.map(|(r, _)| r))
    }

    fn next_run(&mut self) -> Result<Option<(TraceRecord, u64)>, TraceError> {
        self.next_pages(u64::MAX)
    }
}

impl CsvRecords {
    /// The next page and up to `max` pages of its request.
    fn next_pages(&mut self, max: u64) -> Result<Option<(TraceRecord, u64)>, TraceError> {
        loop {
            if let Some(run) = self.pages.take(max) {
                return Ok(Some(run));
            }
            if !self.lines.advance()? {
                return Ok(None);
            }
            let line_no = self.lines.line_no();
            let line = self.lines.text()?;
            if (self.spec.has_header && line_no == 1) || line.trim().is_empty() {
                continue;
            }
            let run =
                csv::parse_request(line, &self.spec).map_err(|p| TraceError::line(line_no, p))?;
            self.pages.start(run);
        }
    }
}

/// Records already in memory, as a reader.
pub struct MemoryRecords<'a> {
    records: std::slice::Iter<'a, TraceRecord>,
}

impl<'a> MemoryRecords<'a> {
    pub fn new(records: &'a [TraceRecord]) -> Self {
        MemoryRecords {
            records: records.iter(),
        }
    }
}

impl RecordReader for MemoryRecords<'_> {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        Ok(self.records.next().copied())
    }
}
