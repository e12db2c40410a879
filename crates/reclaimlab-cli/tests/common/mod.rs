//! Helpers the CLI's integration tests share: running the built binary and reading a results
//! store from outside.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Runs the built `reclaimlab` with `args` and no stdin.
pub fn reclaimlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reclaimlab"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run reclaimlab")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Rows in the store, read as another process would, while the writer may be running.
pub fn rows(store: &Path) -> Option<i64> {
    let conn = rusqlite::Connection::open_with_flags(
        store,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.busy_timeout(Duration::from_secs(5)).ok()?;
    conn.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .ok()
}
