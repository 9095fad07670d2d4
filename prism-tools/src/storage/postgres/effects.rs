//! [`PostgresEffectStore`]: effect claims in PostgreSQL, shared by every worker that reaches the
//! database.

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::clock::Millis;
use crate::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectRecovery, EffectState, EffectStore,
    EffectStoreError, RecordedOutcome, RecoveryOutcome, Resolution, UnknownEffect,
};
use crate::storage::StorageError;
use crate::storage::effect_row::{StoredEffect, encode_outcome, to_db_millis};
use crate::storage::postgres::pool::StorePool;
use crate::storage::postgres::{PostgresOptions, column};

/// An [`EffectStore`] in PostgreSQL.
///
/// A claim is `INSERT … ON CONFLICT (key) DO NOTHING`: the primary key decides which of any
/// number of concurrent claimants wins, with no lock held between statements. Recording an
/// outcome is an `UPDATE` that only matches while the recording owner still holds the claim and
/// no outcome exists. Cheap to clone (a connection pool inside); use it from one Tokio runtime,
/// the one that connected it.
///
/// ```no_run
/// use prism::effects::EffectRecovery;
/// use prism::storage::{PostgresEffectStore, PostgresOptions};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let options = PostgresOptions::new("postgres://agent@db.internal/agents")?.pool_size(8);
/// let store = PostgresEffectStore::connect(options).await?;
/// let now = prism::dispatch::Clock::now_millis(&prism::dispatch::SystemClock);
/// for effect in store.unknown_effects(now, 100).await? {
///     println!("{} was claimed by {} and never finished", effect.key, effect.owner);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct PostgresEffectStore {
    pool: StorePool,
}

impl PostgresEffectStore {
    /// Connects, applying missing migrations.
    pub async fn connect(options: PostgresOptions) -> Result<Self, StorageError> {
        Ok(Self {
            pool: StorePool::connect(&options).await?,
        })
    }

    async fn select(&self, key: &str) -> Result<Option<StoredEffect>, EffectStoreError> {
        let row = self
            .pool
            .query_opt(
                "SELECT owner, claimed_at, lease_expires_at, outcome::text
                 FROM prism_effects WHERE key = $1",
                &[&key],
            )
            .await
            .map_err(EffectStoreError::Backend)?;
        let read = |row: &Row| {
            Ok(StoredEffect {
                owner: column(row, 0)?,
                claimed_at: column(row, 1)?,
                lease_expires_at: column(row, 2)?,
                outcome: column(row, 3)?,
            })
        };
        row.as_ref()
            .map(read)
            .transpose()
            .map_err(EffectStoreError::Backend)
    }

    /// Runs one statement, answering how many rows it changed.
    async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, EffectStoreError> {
        self.pool
            .execute(sql, params)
            .await
            .map_err(EffectStoreError::Backend)
    }
}

/// How often a claim retries when its key is released between the insert and the read.
const CLAIM_ATTEMPTS: usize = 4;

impl EffectStore for PostgresEffectStore {
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        Box::pin(async move {
            let key = request.key.as_str();
            let claimed_at = to_db_millis(request.now);
            let expires = to_db_millis(request.lease_expires_at());
            for _ in 0..CLAIM_ATTEMPTS {
                let inserted = self
                    .execute(
                        "INSERT INTO prism_effects (key, owner, claimed_at, lease_expires_at)
                         VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO NOTHING",
                        &[&key, &request.owner, &claimed_at, &expires],
                    )
                    .await?;
                if inserted == 1 {
                    return Ok(Claim::Acquired);
                }
                if let Some(existing) = self.select(key).await? {
                    return existing.claim_answer(request.now);
                }
                // The host released the key in between: claim it again.
            }
            Err(EffectStoreError::Backend(
                "the claim kept being released while it was taken; try again".into(),
            ))
        })
    }

    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        Box::pin(async move {
            let outcome = encode_outcome(&outcome)?;
            let updated = self
                .execute(
                    "UPDATE prism_effects SET outcome = $3::text::json
                     WHERE key = $1 AND owner = $2 AND outcome IS NULL",
                    &[&key.as_str(), &owner, &outcome],
                )
                .await?;
            if updated == 1 {
                Ok(())
            } else if self.select(key.as_str()).await?.is_some() {
                Err(EffectStoreError::NotOwner)
            } else {
                Err(EffectStoreError::NotFound)
            }
        })
    }

    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        Box::pin(async move {
            let key = key.as_str();
            let changed = match resolution {
                Resolution::Record(outcome) => {
                    let outcome = encode_outcome(&outcome)?;
                    self.execute(
                        "UPDATE prism_effects SET outcome = $2::text::json WHERE key = $1",
                        &[&key, &outcome],
                    )
                    .await?
                }
                Resolution::Release => {
                    self.execute("DELETE FROM prism_effects WHERE key = $1", &[&key])
                        .await?
                }
            };
            if changed == 1 {
                Ok(())
            } else {
                Err(EffectStoreError::NotFound)
            }
        })
    }

    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        Box::pin(async move {
            self.select(key.as_str())
                .await?
                .map(StoredEffect::into_state)
                .transpose()
        })
    }
}

impl EffectRecovery for PostgresEffectStore {
    fn unknown_effects<'a>(
        &'a self,
        now: Millis,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<UnknownEffect>, EffectStoreError>> {
        Box::pin(async move {
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = self
                .pool
                .query(
                    "SELECT key, owner, claimed_at, lease_expires_at FROM prism_effects
                     WHERE outcome IS NULL AND lease_expires_at <= $1
                     ORDER BY lease_expires_at, key LIMIT $2",
                    &[&to_db_millis(now), &limit],
                )
                .await
                .map_err(EffectStoreError::Backend)?;
            rows.iter()
                .map(|row| {
                    let effect = StoredEffect {
                        owner: column(row, 1)?,
                        claimed_at: column(row, 2)?,
                        lease_expires_at: column(row, 3)?,
                        outcome: None,
                    };
                    Ok(effect.into_unknown(column(row, 0)?))
                })
                .collect::<Result<_, String>>()
                .map_err(EffectStoreError::Backend)
        })
    }

    fn resolve_unknown<'a>(
        &'a self,
        effect: &'a UnknownEffect,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<RecoveryOutcome, EffectStoreError>> {
        Box::pin(async move {
            let key = effect.key.as_str();
            let claimed_at = to_db_millis(effect.claimed_at);
            let same_claim = "key = $1 AND owner = $2 AND claimed_at = $3 AND outcome IS NULL";
            let changed = match resolution {
                Resolution::Record(outcome) => {
                    let outcome = encode_outcome(&outcome)?;
                    self.execute(
                        &format!(
                            "UPDATE prism_effects SET outcome = $4::text::json WHERE {same_claim}"
                        ),
                        &[&key, &effect.owner, &claimed_at, &outcome],
                    )
                    .await?
                }
                Resolution::Release => {
                    self.execute(
                        &format!("DELETE FROM prism_effects WHERE {same_claim}"),
                        &[&key, &effect.owner, &claimed_at],
                    )
                    .await?
                }
            };
            Ok(if changed == 1 {
                RecoveryOutcome::Applied
            } else {
                RecoveryOutcome::Stale
            })
        })
    }
}
