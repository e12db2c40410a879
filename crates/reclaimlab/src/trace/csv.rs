//! Block or object traces in delimited text (CSV, TSV, ...), columns chosen by a [`CsvSpec`].
//!
//! Each line is one request: a time, a byte offset, a size in bytes and optionally an op.
//! Columns are 1-based, as in libCacheSim's `-t "time-col=1, obj-id-col=2, ..."` options; the
//! "object id" column is read as the request's byte offset. Other columns are ignored.
//!
//! * Lines end with `\n` (`\r\n` accepted); the last line may lack it. Empty (or all-blank)
//!   lines are skipped; with `has_header` the first line is skipped, whatever it holds.
//! * Fields are split at every `delimiter` (no quoting: a quoted field cannot contain the
//!   delimiter), then trimmed of surrounding whitespace and of one pair of enclosing `"`.
//! * time: a non-negative decimal number of `time_unit_ns`-ns units, fraction allowed
//!   (`1.5` with `time_unit_ns = 10^9` is 1.5 s); times are rebased so the earliest request
//!   of the trace is at 0 ns.
//! * offset, size: unsigned integers in bytes; size at most 4 GiB ([`MAX_REQUEST_BYTES`]).
//! * op (if `op_col` is set): `r`, `read`, `w` or `write`, in any letter case; without an op
//!   column every request is a read.
//!
//! Each request becomes one access per 4 KiB page of `[offset, offset + size)` (size 0 counts
//! as one page), all in file 0, pid 1, memcg 0, via fd. Problems are reported with the line.

use std::io::BufRead;

use crate::access::{Op, TraceRecord};

use super::block::{byte_range_pages, runs_to_trace, PageRun};
use super::text::{parse_uint, LineReader};
use super::{TraceError, TraceHeader};

/// Largest request size accepted, in bytes (4 GiB); larger sizes are taken to be garbage
/// rather than expanded into over a million page records.
pub const MAX_REQUEST_BYTES: u64 = 1 << 32;

/// Which columns of a delimited text trace hold what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsvSpec {
    /// 1-based column of the request time.
    pub time_col: usize,
    /// 1-based column of the byte offset (libCacheSim's `obj-id-col`).
    pub offset_col: usize,
    /// 1-based column of the size in bytes (libCacheSim's `obj-size-col`).
    pub size_col: usize,
    /// 1-based column of the op; `None`: every request is a read.
    pub op_col: Option<usize>,
    /// Whether the first line is a header to skip.
    pub has_header: bool,
    pub delimiter: char,
    /// Nanoseconds per unit of the time column: 1 for ns, 1000 for µs, 10^9 for s.
    pub time_unit_ns: u64,
}

impl Default for CsvSpec {
    /// `time,offset,size` with times in seconds (libCacheSim's clock time unit), no op column,
    /// no header, comma-delimited.
    fn default() -> Self {
        CsvSpec {
            time_col: 1,
            offset_col: 2,
            size_col: 3,
            op_col: None,
            has_header: false,
            delimiter: ',',
            time_unit_ns: 1_000_000_000,
        }
    }
}

impl CsvSpec {
    /// Parses libCacheSim-style `key=value` pairs separated by commas, starting from
    /// [`CsvSpec::default`]. Keys (case-insensitive, `_` same as `-`): `time-col`,
    /// `obj-id-col` or `offset-col`, `obj-size-col` or `size-col`, `op-col` or `op-type-col`
    /// (`0` = none), `has-header` (`true`/`false`/`1`/`0`/`yes`/`no`), `delimiter` (exactly one
    /// character, which may be `,`, or `\t` for tab), and reclaimlab's own `time-unit-ns`.
    /// Example: `time-col=1,obj-id-col=3,obj-size-col=4,op-col=2,delimiter=,,has-header=true`.
    pub fn from_params(params: &str) -> Result<Self, TraceError> {
        let mut spec = CsvSpec::default();
        let mut rest = skip_separators(params);
        while !rest.is_empty() {
            let Some((key, after)) = rest.split_once('=') else {
                return Err(spec_error(format!("expected key=value, found '{rest}'")));
            };
            let key = key.trim().to_ascii_lowercase().replace('_', "-");
            let after = if key == "delimiter" {
                let (delimiter, after) = split_delimiter_value(after)?;
                spec.delimiter = delimiter;
                after
            } else {
                let (value, after) = after.split_once(',').unwrap_or((after, ""));
                spec.set(&key, value.trim())?;
                after
            };
            rest = skip_separators(after);
        }
        spec.validate()?;
        Ok(spec)
    }

    /// The params string [`CsvSpec::from_params`] parses back to this spec.
    pub fn to_params(&self) -> String {
        let delimiter = match self.delimiter {
            '\t' => "\\t".to_owned(),
            c => c.to_string(),
        };
        format!(
            "time-col={},obj-id-col={},obj-size-col={},op-col={},has-header={},time-unit-ns={},delimiter={}",
            self.time_col,
            self.offset_col,
            self.size_col,
            self.op_col.unwrap_or(0),
            self.has_header,
            self.time_unit_ns,
            delimiter
        )
    }

    /// Checks that columns are 1-based, the time unit is positive and the delimiter usable.
    pub fn validate(&self) -> Result<(), TraceError> {
        let columns = [
            ("time-col", Some(self.time_col)),
            ("obj-id-col", Some(self.offset_col)),
            ("obj-size-col", Some(self.size_col)),
            ("op-col", self.op_col),
        ];
        if let Some((name, _)) = columns.iter().find(|(_, col)| *col == Some(0)) {
            return Err(spec_error(format!(
                "{name} must be at least 1 (columns are 1-based)"
            )));
        }
        if let Some((name, col)) = columns
            .iter()
            .find(|(_, col)| col.is_some_and(|c| c > MAX_COLUMNS))
        {
            return Err(spec_error(format!(
                "{name} {} is past the last column read ({MAX_COLUMNS})",
                col.unwrap_or(0)
            )));
        }
        if self.time_unit_ns == 0 {
            return Err(spec_error("time-unit-ns must be at least 1".into()));
        }
        if matches!(self.delimiter, '\n' | '\r' | '"') {
            let problem = format!("delimiter {:?} cannot be used", self.delimiter);
            return Err(spec_error(problem));
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), TraceError> {
        let column = || parse_param_uint(key, value).map(|v| v as usize);
        match key {
            "time-col" => self.time_col = column()?,
            "obj-id-col" | "offset-col" => self.offset_col = column()?,
            "obj-size-col" | "size-col" => self.size_col = column()?,
            "op-col" | "op-type-col" => self.op_col = Some(column()?).filter(|&c| c != 0),
            "has-header" => self.has_header = parse_param_bool(key, value)?,
            "time-unit-ns" => self.time_unit_ns = parse_param_uint(key, value)?,
            _ => return Err(spec_error(format!("unknown key '{key}'"))),
        }
        Ok(())
    }
}

fn spec_error(problem: String) -> TraceError {
    TraceError::Spec(format!("csv params: {problem}"))
}

fn skip_separators(text: &str) -> &str {
    text.trim_start_matches([' ', ','])
}

/// The delimiter value is one character (even `,` or a space) or the escape `\t`; returns it
/// and the text after it.
fn split_delimiter_value(after: &str) -> Result<(char, &str), TraceError> {
    if let Some(rest) = after.strip_prefix("\\t") {
        return Ok(('\t', rest));
    }
    match after.chars().next() {
        Some(c) => Ok((c, &after[c.len_utf8()..])),
        None => Err(spec_error("delimiter needs a value".into())),
    }
}

fn parse_param_uint(key: &str, value: &str) -> Result<u64, TraceError> {
    parse_uint(value, key, u64::MAX).map_err(spec_error)
}

fn parse_param_bool(key: &str, value: &str) -> Result<bool, TraceError> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(spec_error(format!("{key} '{value}' is not true or false"))),
    }
}

fn clean_field(field: &str) -> &str {
    let field = field.trim();
    field
        .strip_prefix('"')
        .and_then(|f| f.strip_suffix('"'))
        .unwrap_or(field)
}

/// Reads a whole delimited-text trace.
pub fn read_csv<R: BufRead>(
    input: R,
    spec: &CsvSpec,
) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    spec.validate()?;
    let mut lines = LineReader::new(input, false);
    let mut runs = Vec::new();
    while lines.advance()? {
        let line_no = lines.line_no();
        let line = lines.text()?;
        if (spec.has_header && line_no == 1) || line.trim().is_empty() {
            continue;
        }
        let run = parse_request(line, spec).map_err(|p| TraceError::line(line_no, p))?;
        runs.push(run);
    }
    Ok(runs_to_trace(&runs))
}

/// Most columns a spec can name; a line's fields beyond it are only counted.
const MAX_COLUMNS: usize = 64;

pub(crate) fn parse_request(line: &str, spec: &CsvSpec) -> Result<PageRun, String> {
    let mut split = [""; MAX_COLUMNS];
    let mut count = 0;
    for field in line.split(spec.delimiter) {
        if count < MAX_COLUMNS {
            split[count] = field;
        }
        count += 1;
    }
    let fields = &split[..count.min(MAX_COLUMNS)];
    let time = column_field(fields, count, spec.time_col, "time")?;
    let offset = column_field(fields, count, spec.offset_col, "offset")?;
    let size = column_field(fields, count, spec.size_col, "size")?;
    let time_ns = parse_time_ns(time, spec.time_unit_ns)?;
    let offset = parse_uint(offset, "offset", u64::MAX)?;
    let size = parse_uint(size, "size", MAX_REQUEST_BYTES)?;
    let op = match spec.op_col {
        Some(col) => parse_op(column_field(fields, count, col, "op")?)?,
        None => Op::Read,
    };
    let (first_page, pages) = byte_range_pages(offset, size)
        .ok_or_else(|| format!("request at offset {offset} of {size} bytes runs past 2^64"))?;
    Ok(PageRun {
        time_ns,
        first_page,
        pages,
        op,
        request: true,
    })
}

/// The field in `column` (1-based) of a split line, cleaned.
/// `count`: the line's number of fields (`fields` holds the first [`MAX_COLUMNS`]).
fn column_field<'a>(
    fields: &[&'a str],
    count: usize,
    column: usize,
    what: &str,
) -> Result<&'a str, String> {
    match fields.get(column - 1) {
        Some(field) => Ok(clean_field(field)),
        None => Err(format!("{count} fields, but the {what} column is {column}")),
    }
}

fn parse_op(text: &str) -> Result<Op, String> {
    match text.to_ascii_lowercase().as_str() {
        "r" | "read" => Ok(Op::Read),
        "w" | "write" => Ok(Op::Write),
        _ => Err(format!(
            "unknown op '{text}' (expected r, read, w or write)"
        )),
    }
}

/// A non-negative decimal (`12`, `12.5`, `.5`) times `unit_ns`, truncated to whole ns.
fn parse_time_ns(text: &str, unit_ns: u64) -> Result<u64, String> {
    let bad = || format!("bad time '{text}' (expected a non-negative decimal number)");
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits_only(whole) || !digits_only(fraction) {
        return Err(bad());
    }
    let overflow = || format!("time '{text}' overflows u64 nanoseconds");
    let whole: u64 = match whole {
        "" => 0,
        digits => digits.parse().map_err(|_| overflow())?,
    };
    let whole_ns = whole.checked_mul(unit_ns).ok_or_else(overflow)?;
    whole_ns
        .checked_add(fraction_ns(fraction, unit_ns))
        .ok_or_else(overflow)
}

/// `0.<fraction> * unit_ns`, truncated (only the first 18 digits count).
fn fraction_ns(fraction: &str, unit_ns: u64) -> u64 {
    let digits = &fraction[..fraction.len().min(18)];
    if digits.is_empty() {
        return 0;
    }
    let numerator: u128 = digits.parse().unwrap_or(0);
    let scale = 10u128.pow(digits.len() as u32);
    // < unit_ns, so it fits.
    (numerator * u128::from(unit_ns) / scale) as u64
}

#[cfg(test)]
mod tests;
