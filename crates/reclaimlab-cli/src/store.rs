//! The results store: every finished run of `compare`, in an SQLite file, so that a compare
//! that was killed, or is run again, reuses the runs it already has.
//!
//! One table, `runs`, keyed by what determines a run's result: the scenario, its scale, the
//! policy (as printed, and its whole configuration), the seed, a canonical JSON of every
//! option that affects the run, and the model version (the crate version and a hash of the
//! model's sources at build time, see build.rs). The value is the run's whole result as JSON,
//! which reads back to the identical result (checked before a run is stored).
//!
//! The file is in WAL mode with `synchronous=FULL`, and each run is written in its own
//! transaction as soon as it finishes: a process killed at any moment loses only the runs
//! that had not finished, and never leaves a half-written row or a damaged file.

use reclaimlab::metrics::RunResult;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The model version that keys stored runs: `VERSION+src.HASH`, the crate version and the
/// first 16 hex digits of a SHA-256 over the library's and the CLI's sources and manifests and
/// the workspace's Cargo.lock, taken when this binary was built.
pub const MODEL_VERSION: &str = env!("RECLAIMLAB_MODEL_VERSION");

/// The layout of the `runs` table, kept in SQLite's `user_version`.
const SCHEMA_VERSION: i64 = 1;

/// How long a write waits for another process's write to the same file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The default store: `$XDG_CACHE_HOME/reclaimlab/results.sqlite`, or
/// `~/.cache/reclaimlab/results.sqlite`.
pub fn default_path() -> PathBuf {
    reclaimlab_validate::packages::default_cache_dir().join("results.sqlite")
}

/// What identifies one run.
#[derive(Clone, Debug)]
pub struct RunKey<'a> {
    pub scenario: &'a str,
    /// The scale as printed (`{}` of the f64: shortest text that reads back to it).
    pub scale: &'a str,
    /// The policy as printed (`classic:6.12`, `mglru:7.2-dont-abort-after-aging@iter`).
    pub policy: String,
    /// The policy's whole configuration (its `Debug`), which also holds what the printed name
    /// leaves out (MGLRU's `enabled` and `min_ttl_ms`).
    pub policy_config: String,
    pub seed: u64,
    /// Canonical JSON of every option that affects the run.
    pub options: &'a str,
}

/// An open results store.
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
}

fn sql_error(path: &Path, e: rusqlite::Error) -> String {
    format!("results store {}: {e}", path.display())
}

impl Store {
    /// Opens the store at `path`, creating it (and its directory) if need be. A file that is
    /// not an SQLite database, or a database that is not a results store, is an error.
    pub fn open(path: &Path) -> Result<Store, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("results store {}: {e}", path.display()))?;
        }
        let not_a_store = |e: rusqlite::Error| {
            format!(
                "results store {}: {e}: not a reclaimlab results store (give another --store, \
                 or --no-store)",
                path.display()
            )
        };
        let mut conn = Connection::open(path).map_err(|e| sql_error(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_error(path, e))?;
        // The first statement that reads the file: where a file that is no database fails.
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(not_a_store)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!(
                "results store {}: cannot use write-ahead logging (journal mode {mode})",
                path.display()
            ));
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(|e| sql_error(path, e))?;
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql_error(path, e))?;
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(not_a_store)?;
        match version {
            SCHEMA_VERSION => {}
            0 => {
                let tables: i64 = tx
                    .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                    .map_err(not_a_store)?;
                if tables != 0 {
                    return Err(format!(
                        "results store {}: an SQLite database of something else, not a \
                         reclaimlab results store (give another --store, or --no-store)",
                        path.display()
                    ));
                }
                tx.execute_batch(
                    "CREATE TABLE runs (
                        scenario      TEXT NOT NULL,
                        scale         TEXT NOT NULL,
                        policy        TEXT NOT NULL,
                        policy_config TEXT NOT NULL,
                        seed          INTEGER NOT NULL,
                        options       TEXT NOT NULL,
                        model_version TEXT NOT NULL,
                        result        TEXT NOT NULL,
                        stored_unix   INTEGER NOT NULL,
                        PRIMARY KEY (scenario, scale, policy, policy_config, seed, options,
                                     model_version)
                     ) WITHOUT ROWID;
                     PRAGMA user_version = 1;",
                )
                .map_err(|e| sql_error(path, e))?;
            }
            v => {
                return Err(format!(
                    "results store {}: layout version {v}, this reclaimlab knows \
                     {SCHEMA_VERSION} (a newer reclaimlab's store? give another --store)",
                    path.display()
                ))
            }
        }
        tx.commit().map_err(|e| sql_error(path, e))?;
        Ok(Store {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored result of `key` under this build's model version, if any. A stored result
    /// that does not read back (it cannot happen with this build's model version, whose
    /// sources fix the result's layout) counts as missing, and the run is done again.
    pub fn get(&self, key: &RunKey) -> Result<Option<RunResult>, String> {
        let conn = self.conn.lock().expect("store connection");
        let json: Option<String> = conn
            .query_row(
                "SELECT result FROM runs WHERE scenario = ?1 AND scale = ?2 AND policy = ?3
                 AND policy_config = ?4 AND seed = ?5 AND options = ?6 AND model_version = ?7",
                params![
                    key.scenario,
                    key.scale,
                    key.policy,
                    key.policy_config,
                    key.seed as i64,
                    key.options,
                    MODEL_VERSION
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| sql_error(&self.path, e))?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    /// Stores `result` as `key`'s, in a transaction of its own (committed, and so durable,
    /// when this returns). A result whose JSON would not read back to the same bytes (a NaN,
    /// which JSON cannot hold) is not stored: `Ok(false)`.
    pub fn put(&self, key: &RunKey, result: &RunResult) -> Result<bool, String> {
        let json = serde_json::to_string(result).map_err(|e| e.to_string())?;
        let round_trips = serde_json::from_str::<RunResult>(&json)
            .ok()
            .and_then(|back| serde_json::to_string(&back).ok())
            .is_some_and(|again| again == json);
        if !round_trips {
            return Ok(false);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let mut conn = self.conn.lock().expect("store connection");
        let tx = conn.transaction().map_err(|e| sql_error(&self.path, e))?;
        tx.execute(
            "INSERT OR REPLACE INTO runs (scenario, scale, policy, policy_config, seed, options,
                                          model_version, result, stored_unix)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                key.scenario,
                key.scale,
                key.policy,
                key.policy_config,
                // Seeds above i64::MAX are stored as their two's-complement bits.
                key.seed as i64,
                key.options,
                MODEL_VERSION,
                json,
                now
            ],
        )
        .map_err(|e| sql_error(&self.path, e))?;
        tx.commit().map_err(|e| sql_error(&self.path, e))?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reclaimlab::sim::{run, RunOptions};
    use reclaimlab::workload::micro;

    fn key(seed: u64) -> RunKey<'static> {
        RunKey {
            scenario: "mixed-rw",
            scale: "0.125",
            policy: "classic:6.12".into(),
            policy_config: "Classic(V6_12, Iter)".into(),
            seed,
            options: "{}",
        }
    }

    #[test]
    fn a_stored_run_reads_back_identical() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/results.sqlite");
        let scn = micro::builtin("mixed-rw", 0.125).unwrap();
        let r = run(
            &scn,
            "mglru:7.2".parse().unwrap(),
            &RunOptions {
                seed: 3,
                ..Default::default()
            },
        )
        .unwrap();
        {
            let store = Store::open(&path).unwrap();
            assert_eq!(store.get(&key(3)).unwrap(), None);
            assert!(store.put(&key(3), &r).unwrap());
        }
        // Reopened, as a later process would.
        let store = Store::open(&path).unwrap();
        let back = store.get(&key(3)).unwrap().expect("stored");
        assert_eq!(
            serde_json::to_string_pretty(&back).unwrap(),
            serde_json::to_string_pretty(&r).unwrap()
        );
        assert_eq!(store.get(&key(4)).unwrap(), None, "another seed");
        let mut other = key(3);
        other.options = "{\"max_sim_ns\":1}";
        assert_eq!(store.get(&other).unwrap(), None, "other options");
    }

    #[test]
    fn a_file_that_is_not_a_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk");
        std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
        let e = Store::open(&junk).err().expect("refused");
        assert!(e.contains("not a reclaimlab results store"), "{e}");
        let other = dir.path().join("other.sqlite");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        let e = Store::open(&other).err().expect("refused");
        assert!(e.contains("not a reclaimlab results store"), "{e}");
    }
}
