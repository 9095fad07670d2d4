//! SQLite: the embedded default. One file, no server, compiled in (`rusqlite` with `bundled`).
//!
//! Every connection runs in WAL mode with `synchronous = NORMAL`: readers never wait for the
//! writer, and a commit survives the process crashing (a power loss can lose the last commits,
//! never corrupt the file). Writes take the lock up front (`BEGIN IMMEDIATE`) and wait for other
//! processes up to a busy timeout instead of failing at once.

mod approvals;
mod effects;
mod ledger;
mod migrations;
mod worker;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::storage::StorageError;

pub use approvals::SqliteApprovalStore;
pub use effects::SqliteEffectStore;
pub use ledger::SqliteLedger;

/// The longest busy timeout SQLite takes: `i32::MAX` milliseconds.
const MAX_BUSY_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

/// Where and how to open a SQLite database.
///
/// ```
/// use std::time::Duration;
/// use prism::storage::SqliteOptions;
///
/// let options = SqliteOptions::new("/var/lib/agent/prism.sqlite3")
///     .busy_timeout(Duration::from_secs(30))
///     .max_batch(512);
/// assert_eq!(options.path().file_name().unwrap(), "prism.sqlite3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    path: PathBuf,
    busy_timeout: Duration,
    max_batch: usize,
}

impl SqliteOptions {
    /// The database file at `path` (created if absent), a 5 s busy timeout, batches of at most
    /// 1024 rows.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            busy_timeout: Duration::from_secs(5),
            max_batch: 1024,
        }
    }

    /// How long a write waits for another process holding the database's write lock. SQLite
    /// counts it in milliseconds in an `i32`: a longer wait (`Duration::MAX` for "as long as it
    /// takes") is about 24 days.
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout.min(MAX_BUSY_TIMEOUT);
        self
    }

    /// The most ledger rows committed in one transaction (at least 1).
    pub fn max_batch(mut self, rows: usize) -> Self {
        self.max_batch = rows.max(1);
        self
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens a connection with the pragmas above and the schema up to date.
fn open_connection(options: &SqliteOptions) -> Result<Connection, StorageError> {
    let fail = |error: rusqlite::Error| {
        StorageError::new(format!(
            "could not open the SQLite database {}: {error}",
            options.path.display()
        ))
    };
    let mut connection = Connection::open(&options.path).map_err(fail)?;
    // The busy timeout first: the pragmas below may already wait for another process.
    connection
        .busy_timeout(options.busy_timeout)
        .map_err(fail)?;
    let mode: String = connection
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(fail)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StorageError::new(format!(
            "the SQLite database {} cannot use WAL mode (it is in {mode} mode)",
            options.path.display()
        )));
    }
    connection
        .pragma_update(None, "synchronous", "NORMAL")
        .map_err(fail)?;
    migrations::apply(&mut connection).map_err(|error| {
        StorageError::new(format!(
            "could not migrate the SQLite database {}: {error}",
            options.path.display()
        ))
    })?;
    Ok(connection)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "Wait as long as it takes" is a natural busy timeout to ask for; SQLite counts it in
    /// milliseconds in an `i32`, and opening must not panic on a longer one.
    #[test]
    fn a_busy_timeout_past_sqlites_range_opens() {
        let dir = tempfile::tempdir().unwrap();
        for timeout in [Duration::MAX, Duration::from_secs(30 * 24 * 3600)] {
            let options =
                SqliteOptions::new(dir.path().join("prism.sqlite3")).busy_timeout(timeout);
            assert!(open_connection(&options).is_ok(), "{timeout:?}");
        }
    }
}
