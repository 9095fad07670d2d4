//! [`SqliteLedger`]: ledger rows in a SQLite table, committed in batches by a writer thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, TransactionBehavior, params, params_from_iter};

use crate::dispatch::{LedgerError, RunLedger, ToolCallRecord};
use crate::effects::BoxFuture;
use crate::storage::batch::{BatchWriter, LedgerSink, QueuedRow, WriteFailure};
use crate::storage::columns::{RowColumns, where_clause};
use crate::storage::query::decode_row;
use crate::storage::sqlite::{SqliteOptions, open_connection};
use crate::storage::{LedgerReader, RecordQuery, StorageError};

/// A [`RunLedger`] in a SQLite file. Cheap to clone; the last clone dropped commits what is
/// queued and stops the writer thread. Several processes may share one file.
///
/// ```
/// use prism::dispatch::{RecordStatus, RunLedger, ToolCallRecord};
/// use prism::storage::{LedgerReader, RecordQuery, SqliteLedger};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let ledger = SqliteLedger::open(dir.path().join("prism.sqlite3")).unwrap();
/// for status in [RecordStatus::Started, RecordStatus::Finished] {
///     let mut row = ToolCallRecord::new("call_1".into(), "echo".into(), status);
///     row.run_id = Some("run-1".into());
///     ledger.append(&row);
/// }
/// let rows = ledger.read(&RecordQuery::call("call_1")).await.unwrap();
/// assert_eq!(rows[1].status, RecordStatus::Finished);
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteLedger {
    writer: Arc<BatchWriter>,
    path: Arc<Path>,
}

impl SqliteLedger {
    /// Opens (or creates) the database at `path` with default [`SqliteOptions`].
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, StorageError> {
        Self::open_with(SqliteOptions::new(path))
    }

    /// Opens (or creates) the database, migrating its schema if needed. This blocks while
    /// another process holds the write lock (up to the busy timeout): call it at start-up.
    pub fn open_with(options: SqliteOptions) -> Result<Self, StorageError> {
        let connection = open_connection(&options)?;
        let (writer, _opened) =
            BatchWriter::spawn("sqlite-ledger", options.max_batch, move || {
                Ok(SqliteSink { connection })
            })?;
        Ok(Self {
            writer: Arc::new(writer),
            path: options.path.into(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl RunLedger for SqliteLedger {
    fn append(&self, record: &ToolCallRecord) {
        self.writer.append(record);
    }

    fn flush(&self) -> Result<(), LedgerError> {
        self.writer.flush()
    }
}

impl LedgerReader for SqliteLedger {
    fn read<'a>(
        &'a self,
        query: &'a RecordQuery,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>, LedgerError>> {
        Box::pin(self.writer.read(query.clone()))
    }
}

impl std::fmt::Debug for SqliteLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteLedger")
            .field("path", &self.path)
            .finish()
    }
}

struct SqliteSink {
    connection: Connection,
}

const INSERT: &str = "INSERT INTO prism_tool_calls
    (session_id, run_id, tool_call_id, tool_name, status, tenant_id, user_id, record)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

impl LedgerSink for SqliteSink {
    /// One `BEGIN IMMEDIATE` transaction: a batch that fails part way is rolled back whole, so
    /// trying it again stores no row twice.
    fn write_batch(&mut self, rows: &[QueuedRow]) -> Result<(), WriteFailure> {
        let transaction = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(write_failure)?;
        {
            let mut insert = transaction.prepare_cached(INSERT).map_err(write_failure)?;
            for row in rows {
                let columns = RowColumns::encode(&row.record).map_err(WriteFailure::refused)?;
                insert
                    .execute(params![
                        columns.session_id,
                        columns.run_id,
                        columns.tool_call_id,
                        columns.tool_name,
                        columns.status,
                        columns.tenant_id,
                        columns.user_id,
                        columns.record,
                    ])
                    .map_err(write_failure)?;
            }
        }
        transaction.commit().map_err(write_failure)
    }

    fn read(&mut self, query: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError> {
        let (filter, values) = where_clause(query, |position| format!("?{position}"));
        let sql = format!("SELECT seq, record FROM prism_tool_calls{filter} ORDER BY seq");
        let mut select = self.connection.prepare_cached(&sql).map_err(sqlite_error)?;
        let mut rows = select
            .query(params_from_iter(values))
            .map_err(sqlite_error)?;
        let mut records = Vec::new();
        while let Some(row) = rows.next().map_err(sqlite_error)? {
            let seq: i64 = row.get(0).map_err(sqlite_error)?;
            // Bytes, whatever the column holds: a record that is not text is left out by
            // `decode_row`, not the whole read.
            let record = match row.get_ref(1).map_err(sqlite_error)? {
                ValueRef::Text(bytes) | ValueRef::Blob(bytes) => bytes,
                ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_) => b"",
            };
            records.extend(decode_row(format_args!("row {seq}"), record));
        }
        Ok(records)
    }
}

/// A failed write, refused for good only when the rows themselves are at fault (too big, a
/// constraint, a value SQLite cannot bind); anything else (a lock held past the busy timeout, a
/// full disk, an I/O error) may pass.
fn write_failure(error: rusqlite::Error) -> WriteFailure {
    use rusqlite::ErrorCode;
    let refused = match &error {
        rusqlite::Error::SqliteFailure(failure, _) => matches!(
            failure.code,
            ErrorCode::TooBig | ErrorCode::ConstraintViolation | ErrorCode::TypeMismatch
        ),
        rusqlite::Error::ToSqlConversionFailure(_) => true,
        _ => false,
    };
    if refused {
        WriteFailure::refused(sqlite_error(error))
    } else {
        WriteFailure::transient(sqlite_error(error))
    }
}

fn sqlite_error(error: rusqlite::Error) -> LedgerError {
    LedgerError(format!("SQLite: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::RecordStatus;

    /// A stored record that is not UTF-8 text (edited by hand) is left out and hides no other
    /// row.
    #[test]
    fn a_record_that_is_not_text_is_left_out_and_hides_no_other_row() {
        let dir = std::env::temp_dir().join(format!("prism-review-sqlite-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite3");
        let ledger = SqliteLedger::open(&path).unwrap();
        for id in ["c1", "c2", "c3"] {
            let mut row = ToolCallRecord::new(id.into(), "echo".into(), RecordStatus::Finished);
            row.run_id = Some("run-1".into());
            ledger.append(&row);
        }
        ledger.flush().unwrap();
        // A hand edit leaves one row whose record is not UTF-8.
        Connection::open(&path)
            .unwrap()
            .execute(
                "UPDATE prism_tool_calls SET record = CAST(X'7BFF7D' AS TEXT) WHERE tool_call_id = 'c2'",
                [],
            )
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let rows = runtime
            .block_on(ledger.read(&RecordQuery::run("run-1")))
            .expect("one undecodable row must not make the whole ledger unreadable");
        let ids: Vec<&str> = rows.iter().map(|row| row.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["c1", "c3"]);
    }
}
