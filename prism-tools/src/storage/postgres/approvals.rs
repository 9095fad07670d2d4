//! [`PostgresApprovalStore`]: pending approvals and decisions in PostgreSQL, shared by every
//! worker and review tool that reaches the database.

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::effects::BoxFuture;
use crate::run::{
    ApprovalDecision, ApprovalKey, ApprovalRecord, ApprovalStore, ApprovalStoreError,
    ApprovalVerdict, PendingApproval, PendingApprovals,
};
use crate::storage::StorageError;
use crate::storage::approval_row::{
    StoredApproval, Transition, decode_verdict, encode_verdict, key_columns, sort_pending,
};
use crate::storage::postgres::pool::StorePool;
use crate::storage::postgres::{PostgresOptions, column, text_column};

/// An [`ApprovalStore`] in PostgreSQL.
///
/// A request is `INSERT … ON CONFLICT DO NOTHING` on the call's primary key; deciding and
/// consuming are each one `UPDATE` that matches only the exact key in the state it expects, so
/// of any number of workers resuming the same run, one consumes each decision. Cheap to clone (a
/// connection pool inside); use it from one Tokio runtime, the one that connected it.
///
/// PostgreSQL's `text` refuses NUL, which a model-chosen call id may hold: a NUL in a session or
/// call id is stored as U+FFFD. The exact key and the one [`pending`](ApprovalStore::pending)
/// lists (with U+FFFD) find the same approval.
///
/// ```no_run
/// use prism::run::{ApprovalDecision, ApprovalStore};
/// use prism::storage::{PostgresApprovalStore, PostgresOptions};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let options = PostgresOptions::new("postgres://review@db.internal/agents")?;
/// let store = PostgresApprovalStore::connect(options).await?;
/// // A review tool approves what a worker is waiting for; the worker resumes the run.
/// for pending in store.pending("ops-session-7").await? {
///     println!("{} wants {} with {}", pending.run_id, pending.key.tool, pending.arguments);
///     store.decide(&ApprovalDecision::approve(&pending.key)).await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct PostgresApprovalStore {
    pool: StorePool,
}

const COLUMNS: &str = "session_id, call_id, tool, arguments_hash, run_id, arguments::text,
    requested_at, state, verdict::text";

/// The `WHERE` clause naming exactly one key, as parameters 1 to 4.
const EXACT_KEY: &str = "session_id = $1 AND call_id = $2 AND tool = $3 AND arguments_hash = $4";

impl PostgresApprovalStore {
    /// Connects, applying missing migrations.
    pub async fn connect(options: PostgresOptions) -> Result<Self, StorageError> {
        Ok(Self {
            pool: StorePool::connect(&options).await?,
        })
    }

    /// The row of this key's call, whatever its tool and arguments.
    async fn select(
        &self,
        key: &ApprovalKey,
    ) -> Result<Option<StoredApproval>, ApprovalStoreError> {
        let sql =
            format!("SELECT {COLUMNS} FROM prism_approvals WHERE session_id = $1 AND call_id = $2");
        let [session, call, ..] = stored_key(key);
        let row = self
            .pool
            .query_opt(&sql, &[&session, &call])
            .await
            .map_err(ApprovalStoreError::Backend)?;
        row.as_ref().map(stored).transpose()
    }
}

/// The key's columns as stored (session, call, tool, arguments hash): `text` holds no NUL, and a
/// call id is the model's choice.
fn stored_key(key: &ApprovalKey) -> [String; 4] {
    let [session, call, tool, hash] = key_columns(key);
    [
        text_column(session.to_owned()),
        text_column(call.to_owned()),
        tool.to_owned(),
        hash.to_owned(),
    ]
}

fn stored(row: &Row) -> Result<StoredApproval, ApprovalStoreError> {
    let read = || {
        Ok(StoredApproval {
            session_id: column(row, 0)?,
            call_id: column(row, 1)?,
            tool: column(row, 2)?,
            arguments_hash: column(row, 3)?,
            run_id: column(row, 4)?,
            arguments: column(row, 5)?,
            requested_at: column(row, 6)?,
            state: column(row, 7)?,
            verdict: column(row, 8)?,
        })
    };
    read().map_err(|error: String| {
        ApprovalStoreError::Backend(format!("a stored approval cannot be read: {error}"))
    })
}

impl ApprovalStore for PostgresApprovalStore {
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        Box::pin(async move {
            let mut row = StoredApproval::requested(pending)?;
            row.session_id = text_column(row.session_id);
            row.call_id = text_column(row.call_id);
            // Another run's decided approval of this call is over: the request replaces it,
            // with a new place in request order.
            let inserted = self
                .pool
                .execute(
                    "INSERT INTO prism_approvals (session_id, call_id, tool, arguments_hash,
                         run_id, arguments, requested_at, state, verdict)
                     VALUES ($1, $2, $3, $4, $5, $6::text::json, $7, $8, $9::text::json)
                     ON CONFLICT (session_id, call_id) DO UPDATE SET
                         seq = DEFAULT, tool = EXCLUDED.tool,
                         arguments_hash = EXCLUDED.arguments_hash, run_id = EXCLUDED.run_id,
                         arguments = EXCLUDED.arguments, requested_at = EXCLUDED.requested_at,
                         state = EXCLUDED.state, verdict = EXCLUDED.verdict
                     WHERE prism_approvals.run_id <> EXCLUDED.run_id
                       AND prism_approvals.state <> 'pending'",
                    &[
                        &row.session_id,
                        &row.call_id,
                        &row.tool,
                        &row.arguments_hash,
                        &row.run_id,
                        &row.arguments,
                        &row.requested_at,
                        &row.state,
                        &row.verdict,
                    ],
                )
                .await
                .map_err(ApprovalStoreError::Backend)?;
            if inserted == 1 {
                Ok(())
            } else {
                StoredApproval::request_answer(self.select(&pending.key).await?, &pending.key)
            }
        })
    }

    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        Box::pin(async move {
            let key = &decision.key;
            let verdict = encode_verdict(decision)?;
            let [session, call, tool, hash] = stored_key(key);
            let updated = self
                .pool
                .execute(
                    &format!(
                        "UPDATE prism_approvals SET state = 'decided', verdict = $5::text::json
                         WHERE {EXACT_KEY} AND state = 'pending'"
                    ),
                    &[&session, &call, &tool, &hash, &verdict],
                )
                .await
                .map_err(ApprovalStoreError::Backend)?;
            if updated == 1 {
                Ok(())
            } else {
                let found = self.select(key).await?;
                Err(StoredApproval::refusal(found, key, Transition::Decide))
            }
        })
    }

    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>> {
        Box::pin(async move {
            let Some(row) = self.select(key).await? else {
                return Ok(None);
            };
            // The row answers this key, whose ids it may store with NUL replaced.
            let mut record = row.into_record(key)?;
            record.pending.key = key.clone();
            Ok(Some(record))
        })
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
        Box::pin(async move {
            let sql = format!(
                "SELECT {COLUMNS} FROM prism_approvals
                 WHERE session_id = $1 AND state = 'pending' ORDER BY seq"
            );
            let rows = self
                .pool
                .query(&sql, &[&text_column(session_id.to_owned())])
                .await
                .map_err(ApprovalStoreError::Backend)?;
            // The call id on its own, to name a row whose other columns cannot be read.
            let read = rows
                .iter()
                .map(|row| (column::<String>(row, 1).ok(), stored(row)));
            Ok(sort_pending(session_id, read))
        })
    }

    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>> {
        Box::pin(async move {
            let [session, call, tool, hash] = stored_key(key);
            let params: [&(dyn ToSql + Sync); 4] = [&session, &call, &tool, &hash];
            let consumed = self
                .pool
                .query_opt(
                    &format!(
                        "UPDATE prism_approvals SET state = 'consumed'
                         WHERE {EXACT_KEY} AND state = 'decided' RETURNING verdict::text"
                    ),
                    &params,
                )
                .await
                .map_err(ApprovalStoreError::Backend)?;
            match consumed {
                Some(row) => decode_verdict(column(&row, 0).map_err(ApprovalStoreError::Backend)?),
                None => {
                    let found = self.select(key).await?;
                    Err(StoredApproval::refusal(found, key, Transition::Consume))
                }
            }
        })
    }
}
