//! [`SqliteApprovalStore`]: pending approvals and decisions in a SQLite file, so a suspended run
//! can be resumed after the process restarts, or from another process on the machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

use crate::effects::BoxFuture;
use crate::run::{
    ApprovalDecision, ApprovalKey, ApprovalRecord, ApprovalStore, ApprovalStoreError,
    ApprovalVerdict, PendingApproval, PendingApprovals,
};
use crate::storage::StorageError;
use crate::storage::approval_row::{
    StoredApproval, Transition, decode_verdict, encode_verdict, key_columns, sort_pending,
};
use crate::storage::sqlite::SqliteOptions;
use crate::storage::sqlite::worker::ConnectionWorker;

/// An [`ApprovalStore`] in a SQLite file. Every change is one `BEGIN IMMEDIATE` transaction, so
/// any number of processes sharing the file see each decision once: of two resumers consuming the
/// same decision, one gets it. Cheap to clone; calls run on a thread that owns the connection.
///
/// ```
/// use prism::run::{
///     ApprovalDecision, ApprovalKey, ApprovalStore, ApprovalVerdict, PendingApproval,
/// };
/// use prism::storage::SqliteApprovalStore;
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("prism.sqlite3");
/// let arguments = json!({"path": "/srv/old-logs"});
/// let key = ApprovalKey::new("session-1", "call_1".into(), "delete_dir", &arguments);
/// let pending = PendingApproval { key: key.clone(), run_id: "run-1".into(), arguments, requested_at: 0 };
/// SqliteApprovalStore::open(&path).unwrap().request(&pending).await.unwrap();
///
/// // After a restart, the request is still there; a decision is acted on once.
/// let store = SqliteApprovalStore::open(&path).unwrap();
/// assert_eq!(store.pending("session-1").await.unwrap(), [pending]);
/// store.decide(&ApprovalDecision::approve(&key)).await.unwrap();
/// assert_eq!(store.consume(&key).await.unwrap(), ApprovalVerdict::Approved);
/// assert!(store.consume(&key).await.is_err());
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteApprovalStore {
    worker: Arc<ConnectionWorker>,
    path: Arc<Path>,
}

impl SqliteApprovalStore {
    /// Opens (or creates) the database at `path` with default [`SqliteOptions`].
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, StorageError> {
        Self::open_with(SqliteOptions::new(path))
    }

    /// Opens (or creates) the database, migrating its schema if needed. This blocks while
    /// another process holds the write lock (up to the busy timeout): call it at start-up.
    pub fn open_with(options: SqliteOptions) -> Result<Self, StorageError> {
        Ok(Self {
            worker: Arc::new(ConnectionWorker::open(&options, "approvals")?),
            path: options.path.into(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `change` in one `BEGIN IMMEDIATE` transaction on the connection's thread.
    async fn write<T: Send + 'static>(
        &self,
        change: impl FnOnce(&Transaction<'_>) -> Result<T, ApprovalStoreError> + Send + 'static,
    ) -> Result<T, ApprovalStoreError> {
        self.worker
            .run(move |connection| {
                let transaction = connection
                    .transaction_with_behavior(TransactionBehavior::Immediate)
                    .map_err(sqlite_error)?;
                // An error drops the transaction, which rolls it back.
                let answer = change(&transaction)?;
                transaction.commit().map_err(sqlite_error)?;
                Ok(answer)
            })
            .await
    }
}

impl std::fmt::Debug for SqliteApprovalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteApprovalStore")
            .field("path", &self.path)
            .finish()
    }
}

const COLUMNS: &str =
    "session_id, call_id, tool, arguments_hash, run_id, arguments, requested_at, state, verdict";

fn stored(row: &Row<'_>) -> rusqlite::Result<StoredApproval> {
    Ok(StoredApproval {
        session_id: row.get(0)?,
        call_id: row.get(1)?,
        tool: row.get(2)?,
        arguments_hash: row.get(3)?,
        run_id: row.get(4)?,
        arguments: row.get(5)?,
        requested_at: row.get(6)?,
        state: row.get(7)?,
        verdict: row.get(8)?,
    })
}

/// The row of this key's call, whatever its tool and arguments.
fn select(
    connection: &Connection,
    key: &ApprovalKey,
) -> Result<Option<StoredApproval>, ApprovalStoreError> {
    let sql =
        format!("SELECT {COLUMNS} FROM prism_approvals WHERE session_id = ?1 AND call_id = ?2");
    connection
        .prepare_cached(&sql)
        .and_then(|mut statement| {
            statement
                .query_row(params![key.session_id, key.call_id.as_str()], stored)
                .optional()
        })
        .map_err(sqlite_error)
}

/// The `WHERE` clause naming exactly one key, as parameters 1 to 4.
const EXACT_KEY: &str = "session_id = ?1 AND call_id = ?2 AND tool = ?3 AND arguments_hash = ?4";

impl ApprovalStore for SqliteApprovalStore {
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        Box::pin(async move {
            let key = pending.key.clone();
            let row = StoredApproval::requested(pending)?;
            self.write(move |transaction| {
                // Another run's decided approval of this call is over: the request replaces it.
                transaction
                    .prepare_cached(
                        "DELETE FROM prism_approvals
                         WHERE session_id = ?1 AND call_id = ?2 AND run_id <> ?3
                           AND state <> 'pending'",
                    )
                    .and_then(|mut delete| {
                        delete.execute(params![row.session_id, row.call_id, row.run_id])
                    })
                    .map_err(sqlite_error)?;
                let inserted = transaction
                    .prepare_cached(
                        "INSERT INTO prism_approvals (session_id, call_id, tool, arguments_hash,
                             run_id, arguments, requested_at, state, verdict)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                         ON CONFLICT (session_id, call_id) DO NOTHING",
                    )
                    .and_then(|mut insert| {
                        insert.execute(params![
                            row.session_id,
                            row.call_id,
                            row.tool,
                            row.arguments_hash,
                            row.run_id,
                            row.arguments,
                            row.requested_at,
                            row.state,
                            row.verdict,
                        ])
                    })
                    .map_err(sqlite_error)?;
                if inserted == 1 {
                    Ok(())
                } else {
                    StoredApproval::request_answer(select(transaction, &key)?, &key)
                }
            })
            .await
        })
    }

    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        Box::pin(async move {
            let key = decision.key.clone();
            let verdict = encode_verdict(decision)?;
            self.write(move |transaction| {
                let [session, call, tool, hash] = key_columns(&key);
                let updated = transaction
                    .execute(
                        &format!(
                            "UPDATE prism_approvals SET state = 'decided', verdict = ?5
                             WHERE {EXACT_KEY} AND state = 'pending'"
                        ),
                        params![session, call, tool, hash, verdict],
                    )
                    .map_err(sqlite_error)?;
                if updated == 1 {
                    Ok(())
                } else {
                    let found = select(transaction, &key)?;
                    Err(StoredApproval::refusal(found, &key, Transition::Decide))
                }
            })
            .await
        })
    }

    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>> {
        let key = key.clone();
        Box::pin(self.worker.run(move |connection| {
            select(connection, &key)?
                .map(|row| row.into_record(&key))
                .transpose()
        }))
    }

    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PendingApproval>, ApprovalStoreError>> {
        Box::pin(async move {
            let listing = self.pending_with_unreadable(session_id).await?;
            Ok(listing.approvals)
        })
    }

    fn pending_with_unreadable<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<PendingApprovals, ApprovalStoreError>> {
        let session_id = session_id.to_owned();
        Box::pin(self.worker.run(move |connection| {
            let sql = format!(
                "SELECT {COLUMNS} FROM prism_approvals
                 WHERE session_id = ?1 AND state = 'pending' ORDER BY seq"
            );
            let mut statement = connection.prepare_cached(&sql).map_err(sqlite_error)?;
            let mut rows = statement.query([&session_id]).map_err(sqlite_error)?;
            let mut read = Vec::new();
            while let Some(row) = rows.next().map_err(sqlite_error)? {
                // The call id on its own, to name a row whose other columns cannot be read.
                let call_id = row.get::<_, String>(1).ok();
                read.push((call_id, stored(row).map_err(sqlite_error)));
            }
            Ok(sort_pending(&session_id, read))
        }))
    }

    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>> {
        let key = key.clone();
        Box::pin(self.write(move |transaction| {
            let verdict: Option<String> = transaction
                .query_row(
                    &format!(
                        "UPDATE prism_approvals SET state = 'consumed'
                         WHERE {EXACT_KEY} AND state = 'decided' RETURNING verdict"
                    ),
                    key_columns(&key),
                    |row| row.get(0),
                )
                .optional()
                .map_err(sqlite_error)?;
            match verdict {
                Some(verdict) => decode_verdict(&verdict),
                None => {
                    let found = select(transaction, &key)?;
                    Err(StoredApproval::refusal(found, &key, Transition::Consume))
                }
            }
        }))
    }
}

fn sqlite_error(error: rusqlite::Error) -> ApprovalStoreError {
    ApprovalStoreError::Backend(format!("SQLite: {error}"))
}
