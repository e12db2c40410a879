//! reclaimlab's own page-level trace format, version 1 ("native").
//!
//! # Format
//!
//! A native trace is UTF-8 text made of lines. Every line, the last one included, ends with
//! `\n`; a file whose last line has no `\n` is rejected as truncated. A single `\r` right before
//! the `\n` is ignored (CRLF files are accepted; writers emit `\n` only). Within a line, fields
//! are separated by exactly one space (0x20): no tabs, no leading, trailing or doubled spaces.
//! Integers are unsigned decimal, digits `0`-`9` only (no sign, no `_`; leading zeros allowed),
//! and must fit the field's type.
//!
//! The first line is exactly `# reclaimlab-trace v1`. Every later line is one of:
//!
//! * **empty**: ignored.
//! * **memcg declaration** `# memcg <index> <path>`: `index` is a u16; `path` is the rest of the
//!   line after the single space following the index, starts with `/`, and may contain spaces.
//!   Index 0 is the root cgroup: it exists without a declaration and, if declared, must be `/`.
//!   No other index may use `/`. Each index and each path may be declared only once. A record may
//!   use memcg `i != 0` only if `# memcg i ...` appeared on an earlier line.
//! * **file declaration** `# file <id> <size_pages>` or `# file <id> <size_pages> <name>`: `id` is
//!   a u32, `size_pages` a u64 (the file's size in 4 KiB pages), `name` is optional: the rest of
//!   the line after the single space following the size, non-empty, may contain spaces. Each id
//!   may be declared only once, and only before the first record that uses it. Records of a
//!   declared file must have `page < size_pages`. An undeclared file's size is 1 + the largest
//!   page any record uses.
//! * **tmpfs declaration** `# tmpfs <id>`: file `id` (a u32, declared by an earlier `# file`
//!   line, at most once) is on tmpfs: its pages are swap-backed and swapped out instead of
//!   written back (docs/model.md §2, "tmpfs"). Added without a version change: a reader from
//!   before it takes the line for a comment and replays the file as a regular one.
//! * **comment**: any other line starting with `#` (including `#memcg`, `# memcgs ...`).
//! * **record**: eight fields `<time_ns> <pid> <memcg> <kind> <object> <page> <op> <via>`,
//!   and an optional ninth, `<req>`:
//!
//! | field     | value                                                                       |
//! |-----------|-----------------------------------------------------------------------------|
//! | `time_ns` | u64: issue time in ns since the start of the trace (0 = closed loop)         |
//! | `pid`     | u32: trace-local process id                                                 |
//! | `memcg`   | u16: memory cgroup index, 0 or declared earlier                             |
//! | `kind`    | `a` = anonymous memory of `pid`, `f` = file page                            |
//! | `object`  | u32: must be `0` for `a`; the file id for `f`                               |
//! | `page`    | u64: page index (4 KiB units) in the process's anon area or in the file      |
//! | `op`      | `r` = read, `w` = write                                                      |
//! | `via`     | `f` = through a file descriptor, `m` = through a mapping; `a` requires `m`   |
//! | `req`     | optional u32 >= 1, only on a read through a file descriptor (`f .. r f`): the |
//! |           | pages of its `read()` request from this page on, this one included; absent  |
//! |           | = 1. A request of N pages is N records of pages p, p+1, ... with `req` N,    |
//! |           | N-1, ..., 1 (readahead sizes its window from it); it may not run past a      |
//! |           | declared file size. Writers omit it when it is 1.                            |
//!
//! The `req` field was added without a version change: every v1 trace without it means what
//! it meant, and a reader from before it rejects a record that has it ("expected 8 fields").
//!
//! Example:
//!
//! ```text
//! # reclaimlab-trace v1
//! # memcg 1 /workload/db
//! # file 7 256 data.db
//! 0 100 1 f 7 0 r f
//! 1000 100 1 a 0 12 w m
//! 2000 100 1 f 7 8 r f 2
//! 2000 100 1 f 7 9 r f
//! ```
//!
//! # Order
//!
//! Records need not be sorted by time, globally or per pid. The simulator issues each pid's
//! records in file order (a record's `time_ns` is the earliest time it may be issued), so the
//! order of lines is significant; interleaving of different pids is not.
//!
//! Declarations may be interleaved with records (subject to "before use");
//! [`TraceHeader`] lists them in order of appearance. [`NativeWriter`] puts them all first.
//!
//! # Errors
//!
//! Readers report the first problem as [`TraceError::Line`] with a 1-based line number, e.g.
//! `line 17: unknown op 'x' (expected r or w)`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, Write};

use crate::access::{Op, PageRef, TraceRecord, Via};
use crate::consts::MAX_LFS_PAGES;

use super::text::{parse_uint, LineReader};
use super::{TraceError, TraceHeader};

/// The first line of every native trace.
pub const NATIVE_MAGIC: &str = "# reclaimlab-trace v1";

const MAGIC_PREFIX: &str = "# reclaimlab-trace ";
const RECORD_FIELDS: usize = 8;
/// With the optional `req`.
const MAX_RECORD_FIELDS: usize = 9;

// ---------------------------------------------------------------------------------------------
// Declarations: the rules shared by the reader and the writer.
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct FileState {
    /// `(size_pages, line)` of the declaration.
    declared: Option<(u64, u64)>,
    /// Line of the first record using the file.
    first_use: Option<u64>,
}

/// What has been declared so far, and which files have been used; enforces the format's rules.
/// Problems come back as messages without a line prefix.
#[derive(Default)]
struct Declarations {
    memcg_lines: HashMap<u16, u64>,
    memcg_paths: HashMap<String, u16>,
    files: HashMap<u32, FileState>,
    /// The file of the last file record and its declared size, so that consecutive records of
    /// one file skip the map. It never goes stale: a file that has been used cannot be declared.
    last_file: Option<(u32, Option<u64>)>,
}

impl Declarations {
    fn declare_memcg(&mut self, index: u16, path: &str, line: u64) -> Result<(), String> {
        if let Some(first) = self.memcg_lines.get(&index) {
            return Err(format!(
                "memcg {index} declared twice (first on line {first})"
            ));
        }
        check_text("memcg path", path)?;
        if index == 0 && path != "/" {
            return Err(format!("memcg 0 is the root and must be '/', not '{path}'"));
        }
        if !path.starts_with('/') {
            return Err(format!("memcg path '{path}' must start with '/'"));
        }
        if index != 0 {
            if path == "/" {
                return Err(format!("memcg {index} cannot be '/' (that is memcg 0)"));
            }
            if let Some(other) = self.memcg_paths.get(path) {
                return Err(format!(
                    "memcg path '{path}' already declared as memcg {other}"
                ));
            }
        }
        self.memcg_lines.insert(index, line);
        self.memcg_paths.insert(path.to_owned(), index);
        Ok(())
    }

    fn declare_file(
        &mut self,
        id: u32,
        size_pages: u64,
        name: Option<&str>,
        line: u64,
    ) -> Result<(), String> {
        if let Some(name) = name {
            check_text("file name", name)?;
        }
        if size_pages > MAX_LFS_PAGES {
            return Err(format!(
                "file {id} of {size_pages} pages is larger than MAX_LFS_FILESIZE \
                 ({MAX_LFS_PAGES} pages)"
            ));
        }
        let state = self.files.entry(id).or_default();
        if let Some((_, first)) = state.declared {
            return Err(format!("file {id} declared twice (first on line {first})"));
        }
        if let Some(used) = state.first_use {
            return Err(format!(
                "file {id} declared after its first use on line {used}"
            ));
        }
        state.declared = Some((size_pages, line));
        Ok(())
    }

    fn check_record(&mut self, r: &TraceRecord, line: u64) -> Result<(), String> {
        if r.memcg != 0 && !self.memcg_lines.contains_key(&r.memcg) {
            return Err(format!(
                "memcg {m} used but not declared (add '# memcg {m} <path>' before it)",
                m = r.memcg
            ));
        }
        match r.page {
            PageRef::Anon { .. } if r.via != Via::Mmap => Err(
                "anon record has via 'f' (anonymous memory is reached through mmap: use m)"
                    .to_owned(),
            ),
            _ if r.req == 0 => Err("request length 0 (a read covers 1 or more pages)".into()),
            _ if r.req > 1 && (r.op != Op::Read || r.via != Via::Fd) => Err(format!(
                "request length {} on a record that is not a read through a file descriptor \
                 (only 'f <file> <page> r f' records take one)",
                r.req
            )),
            PageRef::Anon { .. } => Ok(()),
            PageRef::File { file, page } => {
                self.use_file(file, page, line)?;
                if r.req > 1 {
                    let last = page.saturating_add(u64::from(r.req) - 1);
                    self.use_file(file, last, line).map_err(|_| {
                        format!(
                            "a request of {} pages from page {page} runs past the declared size \
                             of file {file}",
                            r.req
                        )
                    })?;
                }
                Ok(())
            }
        }
    }

    fn use_file(&mut self, file: u32, page: u64, line: u64) -> Result<(), String> {
        // No file page lies beyond MAX_LFS_FILESIZE (anon areas are checked against the
        // model's own limit when a scenario is built).
        if page >= MAX_LFS_PAGES {
            return Err(format!(
                "page {page} of file {file} lies beyond MAX_LFS_FILESIZE (page {})",
                MAX_LFS_PAGES - 1
            ));
        }
        let declared_size = match self.last_file {
            Some((last, size)) if last == file => size,
            _ => self.note_use(file, line),
        };
        match declared_size {
            Some(size) if page >= size => Err(format!(
                "page {page} of file {file} is beyond its declared size of {size} pages"
            )),
            _ => Ok(()),
        }
    }

    /// Records the first use of `file` (if this is it); returns its declared size.
    fn note_use(&mut self, file: u32, line: u64) -> Option<u64> {
        let state = self.files.entry(file).or_default();
        state.first_use.get_or_insert(line);
        let declared_size = state.declared.map(|(size, _)| size);
        self.last_file = Some((file, declared_size));
        declared_size
    }
}

/// Paths and names are the rest of a line, so they cannot hold line breaks and must not be
/// empty.
fn check_text(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err(format!("empty {what}"));
    }
    if text.contains(['\n', '\r']) {
        return Err(format!("{what} {text:?} contains a line break"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Reader.
// ---------------------------------------------------------------------------------------------

/// Streaming reader: yields records one by one while collecting declarations into
/// [`NativeReader::header`]. After the first error it yields nothing more.
pub struct NativeReader<R> {
    lines: LineReader<R>,
    header: TraceHeader,
    decls: Declarations,
    done: bool,
}

impl<R: BufRead> NativeReader<R> {
    /// Reads and checks the `# reclaimlab-trace v1` line.
    pub fn new(input: R) -> Result<Self, TraceError> {
        let mut reader = NativeReader {
            lines: LineReader::new(input, true),
            header: TraceHeader::default(),
            decls: Declarations::default(),
            done: false,
        };
        reader.read_magic()?;
        Ok(reader)
    }

    /// The declarations read so far (all of them once the iterator is exhausted).
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// Consumes the reader, returning the declarations read so far.
    pub fn into_header(self) -> TraceHeader {
        self.header
    }

    /// The number of the last line read (1-based).
    pub fn line_number(&self) -> u64 {
        self.lines.line_no()
    }

    fn read_magic(&mut self) -> Result<(), TraceError> {
        if !self.lines.advance()? {
            let problem = format!("empty input (expected '{NATIVE_MAGIC}')");
            return Err(TraceError::line(1, problem));
        }
        check_magic(self.lines.text()?).map_err(|p| TraceError::line(1, p))
    }

    /// Reads lines until the next record; `None` at end of input.
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        while self.lines.advance()? {
            let line_no = self.lines.line_no();
            let line = self.lines.text()?;
            let parsed = handle_line(line, line_no, &mut self.decls, &mut self.header);
            if let Some(record) = parsed.map_err(|p| TraceError::line(line_no, p))? {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }
}

impl<R: BufRead> Iterator for NativeReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_record().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Reads a whole native trace.
pub fn read_native<R: BufRead>(input: R) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    let mut reader = NativeReader::new(input)?;
    let records = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((reader.into_header(), records))
}

fn check_magic(line: &str) -> Result<(), String> {
    if line == NATIVE_MAGIC {
        return Ok(());
    }
    match line.strip_prefix(MAGIC_PREFIX) {
        Some(version) => Err(format!(
            "unsupported trace version '{version}' (this reader understands v1)"
        )),
        None => Err(format!(
            "not a reclaimlab trace: the first line must be '{NATIVE_MAGIC}'"
        )),
    }
}

/// Interprets one line after the first: `Some(record)` for a record line, `None` for a blank,
/// comment or declaration line (declarations are added to `header`).
fn handle_line(
    line: &str,
    line_no: u64,
    decls: &mut Declarations,
    header: &mut TraceHeader,
) -> Result<Option<TraceRecord>, String> {
    if line.is_empty() {
        return Ok(None);
    }
    if !line.starts_with('#') {
        let record = parse_record(line)?;
        decls.check_record(&record, line_no)?;
        return Ok(Some(record));
    }
    if let Some(body) = declaration_body(line, "memcg") {
        let (index, path) = parse_memcg_declaration(body)?;
        decls.declare_memcg(index, path, line_no)?;
        header.memcgs.push((index, path.to_owned()));
    } else if let Some(body) = declaration_body(line, "file") {
        let (id, size, name) = parse_file_declaration(body)?;
        decls.declare_file(id, size, name, line_no)?;
        header.files.push((id, size, name.map(str::to_owned)));
    } else if let Some(body) = declaration_body(line, "tmpfs") {
        let id = parse_tmpfs_declaration(body, header)?;
        header.tmpfs.push(id);
    }
    Ok(None)
}

/// `# tmpfs <id>`: file `id`, declared on an earlier line, is on tmpfs (once per file).
fn parse_tmpfs_declaration(body: &str, header: &TraceHeader) -> Result<u32, String> {
    let id = parse_uint(body, "tmpfs file id", u32::MAX.into())
        .map_err(|e| format!("bad tmpfs declaration (expected '# tmpfs <id>'): {e}"))?
        as u32;
    if !header.files.iter().any(|(f, _, _)| *f == id) {
        return Err(format!(
            "tmpfs declaration of file {id}, which no earlier '# file' line declares"
        ));
    }
    if header.tmpfs.contains(&id) {
        return Err(format!("file {id} declared tmpfs twice"));
    }
    Ok(id)
}

/// For `# <keyword> <body>` (or `# <keyword>` alone) returns the body; `None` for other lines.
fn declaration_body<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let rest = line.strip_prefix("# ")?.strip_prefix(keyword)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix(' ')
    }
}

fn parse_memcg_declaration(body: &str) -> Result<(u16, &str), String> {
    let usage = "bad memcg declaration (expected '# memcg <index> <path>')";
    let (index, path) = body.split_once(' ').ok_or(usage)?;
    let index = parse_uint(index, "memcg index", u16::MAX.into())? as u16;
    Ok((index, path))
}

fn parse_file_declaration(body: &str) -> Result<(u32, u64, Option<&str>), String> {
    let mut parts = body.splitn(3, ' ');
    let (id, size) = match (parts.next(), parts.next()) {
        (Some(id), Some(size)) => (id, size),
        _ => {
            return Err("bad file declaration (expected '# file <id> <size_pages> [name]')".into())
        }
    };
    let id = parse_uint(id, "file id", u32::MAX.into())? as u32;
    let size = parse_uint(size, "file size", u64::MAX)?;
    let name = parts.next();
    if name == Some("") {
        return Err("empty file name (drop the trailing space)".into());
    }
    Ok((id, size, name))
}

fn parse_record(line: &str) -> Result<TraceRecord, String> {
    let ([time, pid, memcg, kind, object, page, op, via], req) = split_record_fields(line)?;
    let time_ns = parse_uint(time, "time_ns", u64::MAX)?;
    let pid = parse_uint(pid, "pid", u32::MAX.into())? as u32;
    let memcg = parse_uint(memcg, "memcg", u16::MAX.into())? as u16;
    let anon = match kind {
        "a" => true,
        "f" => false,
        _ => return Err(format!("unknown kind '{kind}' (expected a or f)")),
    };
    let object = parse_uint(object, "object", u32::MAX.into())? as u32;
    let page = parse_uint(page, "page", u64::MAX)?;
    let op = parse_op(op)?;
    let via = parse_via(via)?;
    let req = match req {
        Some(text) => parse_uint(text, "request length", u32::MAX.into())? as u32,
        None => 1,
    };
    let page = match (anon, object) {
        (true, 0) => PageRef::Anon { page },
        (true, _) => return Err(format!("anon record has object {object} (must be 0)")),
        (false, file) => PageRef::File { file, page },
    };
    Ok(TraceRecord {
        time_ns,
        pid,
        memcg,
        page,
        op,
        via,
        req,
    })
}

/// The eight fields of a record, and the optional ninth.
#[allow(clippy::type_complexity)]
fn split_record_fields(line: &str) -> Result<([&str; RECORD_FIELDS], Option<&str>), String> {
    if line.starts_with(' ') || line.ends_with(' ') || line.contains("  ") {
        return Err("fields must be separated by exactly one space".into());
    }
    let mut fields = [""; MAX_RECORD_FIELDS];
    let mut count = 0;
    for field in line.split(' ') {
        if let Some(slot) = fields.get_mut(count) {
            *slot = field;
        }
        count += 1;
    }
    if count != RECORD_FIELDS && count != MAX_RECORD_FIELDS {
        return Err(format!(
            "expected {RECORD_FIELDS} fields (time_ns pid memcg kind object page op via) or \
             {MAX_RECORD_FIELDS} (and req), found {count}"
        ));
    }
    let [time, pid, memcg, kind, object, page, op, via, req] = fields;
    let req = (count == MAX_RECORD_FIELDS).then_some(req);
    Ok(([time, pid, memcg, kind, object, page, op, via], req))
}

fn parse_op(text: &str) -> Result<Op, String> {
    match text {
        "r" => Ok(Op::Read),
        "w" => Ok(Op::Write),
        _ => Err(format!("unknown op '{text}' (expected r or w)")),
    }
}

fn parse_via(text: &str) -> Result<Via, String> {
    match text {
        "f" => Ok(Via::Fd),
        "m" => Ok(Via::Mmap),
        _ => Err(format!("unknown via '{text}' (expected f or m)")),
    }
}

// ---------------------------------------------------------------------------------------------
// Writer.
// ---------------------------------------------------------------------------------------------

/// Writes a native trace. Everything it accepts, [`read_native`] reads back identically; what
/// the reader would reject (an undeclared memcg, an anon record through `f`, a page beyond a
/// declared file size, a line break in a name) is refused with [`TraceError::Write`] before
/// anything of it is written.
///
/// Wrap the output in a [`std::io::BufWriter`] for speed; call [`NativeWriter::finish`] to flush.
pub struct NativeWriter<W: Write> {
    out: W,
    decls: Declarations,
    /// Lines written so far (the magic line counts once written).
    lines: u64,
    header_written: bool,
    records_written: bool,
    buf: Vec<u8>,
}

impl<W: Write> NativeWriter<W> {
    pub fn new(out: W) -> Self {
        NativeWriter {
            out,
            decls: Declarations::default(),
            lines: 0,
            header_written: false,
            records_written: false,
            buf: Vec::with_capacity(64),
        }
    }

    /// Writes the magic line and the declarations. At most once, and before any record
    /// (a trace written without it has the magic line and no declarations).
    pub fn write_header(&mut self, header: &TraceHeader) -> Result<(), TraceError> {
        if self.header_written || self.records_written {
            return Err(TraceError::Write(
                "the header must be written once, before any record".into(),
            ));
        }
        let mut decls = Declarations::default();
        let text = header_text(header, &mut decls).map_err(TraceError::Write)?;
        self.out.write_all(text.as_bytes())?;
        self.decls = decls;
        self.lines = 1 + (header.memcgs.len() + header.files.len()) as u64;
        self.header_written = true;
        Ok(())
    }

    /// Writes one record line.
    pub fn write_record(&mut self, record: &TraceRecord) -> Result<(), TraceError> {
        self.ensure_magic()?;
        let line = self.lines + 1;
        self.decls
            .check_record(record, line)
            .map_err(TraceError::Write)?;
        self.buf.clear();
        format_record(&mut self.buf, record);
        self.out.write_all(&self.buf)?;
        self.lines = line;
        self.records_written = true;
        Ok(())
    }

    /// Flushes and returns the output (writing the magic line if nothing was written yet).
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.ensure_magic()?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn ensure_magic(&mut self) -> Result<(), TraceError> {
        if !self.header_written {
            self.write_header(&TraceHeader::default())?;
        }
        Ok(())
    }
}

/// Writes a whole native trace: header, then the records in order.
pub fn write_native<W: Write>(
    out: W,
    header: &TraceHeader,
    records: &[TraceRecord],
) -> Result<W, TraceError> {
    let mut writer = NativeWriter::new(out);
    writer.write_header(header)?;
    for record in records {
        writer.write_record(record)?;
    }
    writer.finish()
}

/// The magic line and declaration lines of `header`, checked against the format's rules.
fn header_text(header: &TraceHeader, decls: &mut Declarations) -> Result<String, String> {
    let mut text = format!("{NATIVE_MAGIC}\n");
    let mut line = 1;
    for (index, path) in &header.memcgs {
        line += 1;
        decls.declare_memcg(*index, path, line)?;
        let _ = writeln!(text, "# memcg {index} {path}");
    }
    for (id, size, name) in &header.files {
        line += 1;
        decls.declare_file(*id, *size, name.as_deref(), line)?;
        let _ = match name {
            Some(name) => writeln!(text, "# file {id} {size} {name}"),
            None => writeln!(text, "# file {id} {size}"),
        };
    }
    for id in &header.tmpfs {
        let _ = writeln!(text, "# tmpfs {id}");
    }
    Ok(text)
}

fn format_record(buf: &mut Vec<u8>, r: &TraceRecord) {
    let (kind, object, page) = match r.page {
        PageRef::Anon { page } => (b'a', 0, page),
        PageRef::File { file, page } => (b'f', file, page),
    };
    push_uint(buf, r.time_ns);
    buf.push(b' ');
    push_uint(buf, r.pid.into());
    buf.push(b' ');
    push_uint(buf, r.memcg.into());
    buf.extend_from_slice(&[b' ', kind, b' ']);
    push_uint(buf, object.into());
    buf.push(b' ');
    push_uint(buf, page);
    let op = match r.op {
        Op::Read => b'r',
        Op::Write => b'w',
    };
    let via = match r.via {
        Via::Fd => b'f',
        Via::Mmap => b'm',
    };
    buf.extend_from_slice(&[b' ', op, b' ', via]);
    if r.req != 1 {
        buf.push(b' ');
        push_uint(buf, r.req.into());
    }
    buf.push(b'\n');
}

/// Appends the decimal digits of `value`.
fn push_uint(buf: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[start..]);
}

#[cfg(test)]
mod tests;
