//! [`SqliteEffectStore`]: effect claims in a SQLite file, shared by every process on the machine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::clock::Millis;
use crate::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectRecovery, EffectState, EffectStore,
    EffectStoreError, RecordedOutcome, RecoveryOutcome, Resolution, UnknownEffect,
};
use crate::storage::StorageError;
use crate::storage::effect_row::{StoredEffect, encode_outcome, to_db_millis};
use crate::storage::sqlite::SqliteOptions;
use crate::storage::sqlite::worker::ConnectionWorker;

/// An [`EffectStore`] in a SQLite file. Each claim is one `BEGIN IMMEDIATE` transaction, so
/// claims from any number of processes on the same file are serialised by SQLite itself. Cheap to
/// clone; calls run on a thread that owns the connection.
///
/// ```
/// use std::time::Duration;
/// use prism::effects::{
///     Claim, ClaimRequest, EffectKey, EffectPolicy, EffectStore, RecordedOutcome,
/// };
/// use prism::storage::SqliteEffectStore;
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let store = SqliteEffectStore::open(dir.path().join("prism.sqlite3")).unwrap();
/// let key = EffectKey::new("send_mail", &EffectPolicy::default(), &json!({"to": "ana"}));
/// let claim = |owner| ClaimRequest { key: &key, owner, now: 0, lease: Duration::from_secs(60) };
///
/// assert_eq!(store.claim(claim("worker-1")).await.unwrap(), Claim::Acquired);
/// store.complete(&key, "worker-1", RecordedOutcome::Value(json!("sent"))).await.unwrap();
/// assert_eq!(
///     store.claim(claim("worker-2")).await.unwrap(),
///     Claim::Recorded(RecordedOutcome::Value(json!("sent")))
/// );
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteEffectStore {
    worker: Arc<ConnectionWorker>,
    path: Arc<Path>,
}

impl SqliteEffectStore {
    /// Opens (or creates) the database at `path` with default [`SqliteOptions`].
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, StorageError> {
        Self::open_with(SqliteOptions::new(path))
    }

    /// Opens (or creates) the database, migrating its schema if needed. This blocks while
    /// another process holds the write lock (up to the busy timeout): call it at start-up.
    pub fn open_with(options: SqliteOptions) -> Result<Self, StorageError> {
        Ok(Self {
            worker: Arc::new(ConnectionWorker::open(&options, "effects")?),
            path: options.path.into(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for SqliteEffectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteEffectStore")
            .field("path", &self.path)
            .finish()
    }
}

const SELECT: &str =
    "SELECT owner, claimed_at, lease_expires_at, outcome FROM prism_effects WHERE key = ?1";

fn select(connection: &Connection, key: &str) -> Result<Option<StoredEffect>, EffectStoreError> {
    connection
        .prepare_cached(SELECT)
        .and_then(|mut statement| {
            statement
                .query_row([key], |row| {
                    Ok(StoredEffect {
                        owner: row.get(0)?,
                        claimed_at: row.get(1)?,
                        lease_expires_at: row.get(2)?,
                        outcome: row.get(3)?,
                    })
                })
                .optional()
        })
        .map_err(sqlite_error)
}

impl EffectStore for SqliteEffectStore {
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        let key = request.key.as_str().to_owned();
        let owner = request.owner.to_owned();
        let now = request.now;
        let expires = request.lease_expires_at();
        Box::pin(self.worker.run(move |connection| {
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sqlite_error)?;
            let inserted = transaction
                .prepare_cached(
                    "INSERT INTO prism_effects (key, owner, claimed_at, lease_expires_at)
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT (key) DO NOTHING",
                )
                .and_then(|mut insert| {
                    insert.execute(params![
                        key,
                        owner,
                        to_db_millis(now),
                        to_db_millis(expires)
                    ])
                })
                .map_err(sqlite_error)?;
            let claim = if inserted == 1 {
                Claim::Acquired
            } else {
                let existing = select(&transaction, &key)?.ok_or_else(|| {
                    EffectStoreError::Backend("a conflicting claim vanished mid-transaction".into())
                })?;
                existing.claim_answer(now)?
            };
            transaction.commit().map_err(sqlite_error)?;
            Ok(claim)
        }))
    }

    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        let key = key.as_str().to_owned();
        let owner = owner.to_owned();
        Box::pin(self.worker.run(move |connection| {
            let outcome = encode_outcome(&outcome)?;
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sqlite_error)?;
            let updated = transaction
                .execute(
                    "UPDATE prism_effects SET outcome = ?3
                     WHERE key = ?1 AND owner = ?2 AND outcome IS NULL",
                    params![key, owner, outcome],
                )
                .map_err(sqlite_error)?;
            let result = if updated == 1 {
                Ok(())
            } else if select(&transaction, &key)?.is_some() {
                Err(EffectStoreError::NotOwner)
            } else {
                Err(EffectStoreError::NotFound)
            };
            transaction.commit().map_err(sqlite_error)?;
            result
        }))
    }

    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        let key = key.as_str().to_owned();
        Box::pin(self.worker.run(move |connection| {
            let changed = match resolution {
                Resolution::Record(outcome) => connection.execute(
                    "UPDATE prism_effects SET outcome = ?2 WHERE key = ?1",
                    params![key, encode_outcome(&outcome)?],
                ),
                Resolution::Release => {
                    connection.execute("DELETE FROM prism_effects WHERE key = ?1", [&key])
                }
            }
            .map_err(sqlite_error)?;
            if changed == 1 {
                Ok(())
            } else {
                Err(EffectStoreError::NotFound)
            }
        }))
    }

    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        let key = key.as_str().to_owned();
        Box::pin(self.worker.run(move |connection| {
            select(connection, &key)?
                .map(StoredEffect::into_state)
                .transpose()
        }))
    }
}

impl EffectRecovery for SqliteEffectStore {
    fn unknown_effects<'a>(
        &'a self,
        now: Millis,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<UnknownEffect>, EffectStoreError>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(self.worker.run(move |connection| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT key, owner, claimed_at, lease_expires_at FROM prism_effects
                     WHERE outcome IS NULL AND lease_expires_at <= ?1
                     ORDER BY lease_expires_at, key LIMIT ?2",
                )
                .map_err(sqlite_error)?;
            let rows = statement
                .query_map(params![to_db_millis(now), limit], |row| {
                    let key: String = row.get(0)?;
                    let effect = StoredEffect {
                        owner: row.get(1)?,
                        claimed_at: row.get(2)?,
                        lease_expires_at: row.get(3)?,
                        outcome: None,
                    };
                    Ok(effect.into_unknown(key))
                })
                .map_err(sqlite_error)?;
            rows.collect::<Result<_, _>>().map_err(sqlite_error)
        }))
    }

    fn resolve_unknown<'a>(
        &'a self,
        effect: &'a UnknownEffect,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<RecoveryOutcome, EffectStoreError>> {
        let key = effect.key.as_str().to_owned();
        let owner = effect.owner.clone();
        let claimed_at = to_db_millis(effect.claimed_at);
        Box::pin(self.worker.run(move |connection| {
            let same_claim = "key = ?1 AND owner = ?2 AND claimed_at = ?3 AND outcome IS NULL";
            let changed = match resolution {
                Resolution::Record(outcome) => connection.execute(
                    &format!("UPDATE prism_effects SET outcome = ?4 WHERE {same_claim}"),
                    params![key, owner, claimed_at, encode_outcome(&outcome)?],
                ),
                Resolution::Release => connection.execute(
                    &format!("DELETE FROM prism_effects WHERE {same_claim}"),
                    params![key, owner, claimed_at],
                ),
            }
            .map_err(sqlite_error)?;
            Ok(if changed == 1 {
                RecoveryOutcome::Applied
            } else {
                RecoveryOutcome::Stale
            })
        }))
    }
}

fn sqlite_error(error: rusqlite::Error) -> EffectStoreError {
    EffectStoreError::Backend(format!("SQLite: {error}"))
}
