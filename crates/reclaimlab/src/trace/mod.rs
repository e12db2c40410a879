//! Trace readers and writers.
//!
//! Every reader produces the same thing: a [`TraceHeader`] (memcg paths and file sizes) and a
//! list of page-level [`TraceRecord`]s.
//!
//! * [`native`]: reclaimlab's own text format, read and written, one line per page access,
//!   with pids, memcgs, anonymous and file pages and the access path (fd or mmap).
//! * [`oracle`]: libCacheSim's `oracleGeneral` binary object traces (read only).
//! * [`vscsi`]: libCacheSim's / CloudPhysics' `vscsi` binary block traces (read only).
//! * [`csv`]: block or object traces in delimited text, columns chosen by a [`CsvSpec`].
//!
//! The libCacheSim formats describe byte ranges, not pages: each request becomes one record per
//! 4 KiB page it covers, all of file 0 ([`block::BLOCK_TRACE_FILE`]), pid 1, memcg 0, through
//! [`Via::Fd`](crate::access::Via::Fd), with times rebased to start at 0 ns. See each module for
//! the exact mapping.
//!
//! [`open_trace`] reads any of them from a file given a [`TraceFormat`].

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::access::{PageRef, TraceRecord};

pub mod block;
pub mod csv;
mod error;
pub mod native;
pub mod oracle;
mod stream;
mod text;
pub mod vscsi;

pub use csv::{read_csv, CsvSpec};
pub use error::TraceError;
pub use native::{read_native, write_native, NativeReader, NativeWriter};
pub use oracle::read_oracle_general;
pub use stream::{open_records, records_from, MemoryRecords, RecordReader, READ_BUFFER_BYTES};
pub use vscsi::{read_vscsi, VscsiTrace, VscsiVersion};

/// What a trace says about its memcgs and files besides the records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceHeader {
    /// Memcg declarations `(index, path)` in order of appearance. Index 0 is the root `/`
    /// whether or not it is listed.
    pub memcgs: Vec<(u16, String)>,
    /// File declarations `(id, size_pages, name)` in order of appearance.
    pub files: Vec<(u32, u64, Option<String>)>,
    /// The ids of the declared files that are on tmpfs (`# tmpfs <id>`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tmpfs: Vec<u32>,
}

impl TraceHeader {
    /// The path of memcg `index`: the declared one, `/` for 0, `None` if undeclared.
    pub fn memcg_path(&self, index: u16) -> Option<&str> {
        let declared = self.memcgs.iter().find(|(i, _)| *i == index);
        match declared {
            Some((_, path)) => Some(path),
            None if index == 0 => Some("/"),
            None => None,
        }
    }

    /// The declared size in pages of file `id`, if declared.
    pub fn file_size(&self, id: u32) -> Option<u64> {
        self.files
            .iter()
            .find(|(f, _, _)| *f == id)
            .map(|(_, size, _)| *size)
    }

    /// Makes everything explicit: the root memcg `(0, "/")` is put first if it was not
    /// declared, and every file that `records` use without a declaration is appended (in id
    /// order, without a name) with size 1 + the largest page used.
    pub fn completed(mut self, records: &[TraceRecord]) -> Self {
        if !self.memcgs.iter().any(|(index, _)| *index == 0) {
            self.memcgs.insert(0, (0, "/".to_owned()));
        }
        let declared: HashSet<u32> = self.files.iter().map(|(id, _, _)| *id).collect();
        let mut implicit: BTreeMap<u32, u64> = BTreeMap::new();
        for record in records {
            if let PageRef::File { file, page } = record.page {
                if !declared.contains(&file) {
                    let size = implicit.entry(file).or_insert(0);
                    *size = (*size).max(page.saturating_add(1));
                }
            }
        }
        let implicit = implicit.into_iter().map(|(id, size)| (id, size, None));
        self.files.extend(implicit);
        self
    }
}

/// The trace formats [`open_trace`] understands.
///
/// Parsed from (case-insensitively) `native`, `oracleGeneral`, `vscsi`, `csv` (the default
/// [`CsvSpec`]) or `csv:<params>` with libCacheSim-style params, e.g.
/// `csv:time-col=1,obj-id-col=2,obj-size-col=3,op-col=4,has-header=true,delimiter=,`
/// (see [`CsvSpec::from_params`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Native,
    OracleGeneral,
    Vscsi,
    Csv(CsvSpec),
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, params) = match s.split_once(':') {
            Some((name, params)) => (name, Some(params)),
            None => (s, None),
        };
        let name = name.trim().to_ascii_lowercase();
        match (name.as_str(), params) {
            ("native", None) => Ok(TraceFormat::Native),
            ("oraclegeneral", None) => Ok(TraceFormat::OracleGeneral),
            ("vscsi", None) => Ok(TraceFormat::Vscsi),
            ("csv", None) => Ok(TraceFormat::Csv(CsvSpec::default())),
            ("csv", Some(params)) => Ok(TraceFormat::Csv(CsvSpec::from_params(params)?)),
            _ => Err(TraceError::Spec(format!(
                "unknown trace format '{s}' (expected native, oracleGeneral, vscsi, csv or csv:<params>)"
            ))),
        }
    }
}

impl fmt::Display for TraceFormat {
    /// The name [`TraceFormat::from_str`] parses back to the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceFormat::Native => f.write_str("native"),
            TraceFormat::OracleGeneral => f.write_str("oracleGeneral"),
            TraceFormat::Vscsi => f.write_str("vscsi"),
            TraceFormat::Csv(spec) => write!(f, "csv:{}", spec.to_params()),
        }
    }
}

/// Reads a whole trace file of the given format. The header is [`TraceHeader::completed`]:
/// it names memcg 0 and gives a size to every file used (for the libCacheSim formats, file 0
/// with 1 + the largest page). Errors name the file.
pub fn open_trace(
    path: impl AsRef<Path>,
    format: &TraceFormat,
) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    let path = path.as_ref();
    let (header, records) = read_trace_file(path, format).map_err(|e| match e {
        TraceError::Open { .. } => e,
        other => other.in_file(path),
    })?;
    Ok((header.completed(&records), records))
}

fn read_trace_file(
    path: &Path,
    format: &TraceFormat,
) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
    match format {
        TraceFormat::Native => read_native(BufReader::new(open_file(path)?)),
        TraceFormat::OracleGeneral => read_oracle_general(&read_file(path)?),
        TraceFormat::Vscsi => read_vscsi(&read_file(path)?).map(VscsiTrace::into_parts),
        TraceFormat::Csv(spec) => read_csv(BufReader::new(open_file(path)?), spec),
    }
}

fn open_file(path: &Path) -> Result<File, TraceError> {
    File::open(path).map_err(|source| TraceError::Open {
        path: path.to_owned(),
        source,
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>, TraceError> {
    std::fs::read(path).map_err(|source| TraceError::Open {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests;
