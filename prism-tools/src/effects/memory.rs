//! [`InMemoryEffectStore`]: effect claims and outcomes in this process's memory.
//!
//! The store is a handle: clones share one map, so a test can give one clone to the dispatcher
//! and read claims through another, as with [`InMemoryLedger`](crate::InMemoryLedger).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::clock::Millis;
use crate::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectRecovery, EffectState, EffectStore,
    EffectStoreError, RecordedOutcome, RecoveryOutcome, Resolution, UnknownEffect,
};

/// An [`EffectStore`] in memory: for tests and single-process hosts that accept losing claims on
/// restart. Cloning is cheap and every clone sees the same claims.
///
/// ```
/// use std::time::Duration;
/// use prism::effects::{ClaimRequest, EffectKey, EffectPolicy, EffectStore, InMemoryEffectStore};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryEffectStore::new();
/// let reader = store.clone();
/// let key = EffectKey::new("pay", &EffectPolicy::default(), &json!({"cents": 100}));
/// let lease = Duration::from_secs(60);
/// store.claim(ClaimRequest { key: &key, owner: "worker-1", now: 0, lease }).await.unwrap();
/// assert!(reader.state(&key).await.unwrap().is_some());
/// # });
/// ```
#[derive(Clone, Debug, Default)]
pub struct InMemoryEffectStore {
    entries: Arc<Mutex<HashMap<EffectKey, EffectState>>>,
}

impl InMemoryEffectStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<EffectKey, EffectState>> {
        // A poisoned lock only means another thread panicked between two statements that never
        // leave the map half-written; the data is still consistent.
        self.entries
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl EffectStore for InMemoryEffectStore {
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        let mut entries = self.lock();
        let claim = match entries.get(request.key) {
            Some(state) => state.clone().into_claim(request.now),
            None => {
                entries.insert(
                    request.key.clone(),
                    EffectState::Claimed {
                        owner: request.owner.to_owned(),
                        claimed_at: request.now,
                        lease_expires_at: request.lease_expires_at(),
                    },
                );
                Claim::Acquired
            }
        };
        Box::pin(std::future::ready(Ok(claim)))
    }

    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        let mut entries = self.lock();
        let result = match entries.get(key) {
            Some(EffectState::Claimed { owner: holder, .. }) if holder == owner => {
                entries.insert(key.clone(), EffectState::Recorded(outcome));
                Ok(())
            }
            Some(_) => Err(EffectStoreError::NotOwner),
            None => Err(EffectStoreError::NotFound),
        };
        Box::pin(std::future::ready(result))
    }

    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        let mut entries = self.lock();
        let result = if entries.contains_key(key) {
            match resolution {
                Resolution::Record(outcome) => {
                    entries.insert(key.clone(), EffectState::Recorded(outcome));
                }
                Resolution::Release => {
                    entries.remove(key);
                }
            }
            Ok(())
        } else {
            Err(EffectStoreError::NotFound)
        };
        Box::pin(std::future::ready(result))
    }

    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        let state = self.lock().get(key).cloned();
        Box::pin(std::future::ready(Ok(state)))
    }
}

impl EffectRecovery for InMemoryEffectStore {
    fn unknown_effects<'a>(
        &'a self,
        now: Millis,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<UnknownEffect>, EffectStoreError>> {
        let mut unknown: Vec<UnknownEffect> = self
            .lock()
            .iter()
            .filter_map(|(key, state)| match state {
                EffectState::Claimed {
                    owner,
                    claimed_at,
                    lease_expires_at,
                } if *lease_expires_at <= now => Some(UnknownEffect {
                    key: key.clone(),
                    owner: owner.clone(),
                    claimed_at: *claimed_at,
                    lease_expires_at: *lease_expires_at,
                }),
                _ => None,
            })
            .collect();
        unknown.sort_by(|a, b| (a.lease_expires_at, &a.key).cmp(&(b.lease_expires_at, &b.key)));
        unknown.truncate(limit);
        Box::pin(std::future::ready(Ok(unknown)))
    }

    fn resolve_unknown<'a>(
        &'a self,
        effect: &'a UnknownEffect,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<RecoveryOutcome, EffectStoreError>> {
        let mut entries = self.lock();
        let same_claim = matches!(
            entries.get(&effect.key),
            Some(EffectState::Claimed { owner, claimed_at, .. })
                if *owner == effect.owner && *claimed_at == effect.claimed_at
        );
        let outcome = if same_claim {
            match resolution {
                Resolution::Record(outcome) => {
                    entries.insert(effect.key.clone(), EffectState::Recorded(outcome));
                }
                Resolution::Release => {
                    entries.remove(&effect.key);
                }
            }
            RecoveryOutcome::Applied
        } else {
            RecoveryOutcome::Stale
        };
        Box::pin(std::future::ready(Ok(outcome)))
    }
}
