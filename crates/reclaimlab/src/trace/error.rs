//! The one error type of every trace reader and writer.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

/// Why a trace could not be read or written. `Display` is always a single line that says where
/// (file, line or byte offset) and what went wrong, e.g.
/// `traces/a.trace: line 17: unknown op 'x' (expected r or w)`.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The trace file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Reading from or writing to a stream failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    /// A text trace has a bad line (`line` is 1-based).
    #[error("line {line}: {problem}")]
    Line { line: u64, problem: String },
    /// A binary trace has a bad or truncated record starting at byte `offset`.
    #[error("byte offset {offset}: {problem}")]
    Offset { offset: u64, problem: String },
    /// A record (1-based, in file order) that no kernel could see.
    #[error("record {index}: {problem}")]
    Record { index: u64, problem: String },
    /// A format name or reader specification is not valid.
    #[error("{0}")]
    Spec(String),
    /// A writer was asked to write something its reader would reject.
    #[error("cannot write trace: {0}")]
    Write(String),
    /// Any of the above, in the named file.
    #[error("{}: {source}", path.display())]
    InFile {
        path: PathBuf,
        source: Box<TraceError>,
    },
}

impl TraceError {
    pub(crate) fn line(line: u64, problem: impl Into<String>) -> Self {
        TraceError::Line {
            line,
            problem: problem.into(),
        }
    }

    pub(crate) fn record(index: u64, problem: impl Into<String>) -> Self {
        TraceError::Record {
            index,
            problem: problem.into(),
        }
    }

    pub(crate) fn offset(offset: u64, problem: impl Into<String>) -> Self {
        TraceError::Offset {
            offset,
            problem: problem.into(),
        }
    }

    /// This error in the named file, unless it names its file already.
    pub fn located(self, path: impl Into<PathBuf>) -> Self {
        match self {
            TraceError::Open { .. } | TraceError::InFile { .. } => self,
            other => other.in_file(path),
        }
    }

    pub(crate) fn in_file(self, path: impl Into<PathBuf>) -> Self {
        TraceError::InFile {
            path: path.into(),
            source: Box::new(self),
        }
    }
}
