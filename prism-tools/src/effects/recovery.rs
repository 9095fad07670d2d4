//! The host's side of "say unknown": find the effects that read unknown and settle them.
//!
//! A claim whose lease ended without an outcome is never run again automatically: only the host
//! knows whether the payment went out or the e-mail was sent. [`EffectRecovery`] lists those claims
//! and settles one of them only if it is still exactly the claim the host looked at, so a decision
//! taken on stale information (the owner recorded its outcome late, another operator already
//! released it) never lands on a newer state.

use std::sync::Arc;

use crate::clock::Millis;
use crate::effects::{BoxFuture, EffectKey, EffectStore, EffectStoreError, Resolution};

/// A claim whose lease expired without an outcome: its effect may or may not have happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEffect {
    /// The effect. To match it to a call you know of, compute that call's key as the dispatcher
    /// did: [`EffectKey::new`], or [`EffectKey::keyed`] under the same secret when the dispatcher
    /// was given an [`EffectKeySecret`](crate::EffectKeySecret).
    pub key: EffectKey,
    /// The owner that claimed it and never recorded an outcome.
    pub owner: String,
    /// When the claim was taken.
    pub claimed_at: Millis,
    /// When its lease ended.
    pub lease_expires_at: Millis,
}

/// What [`EffectRecovery::resolve_unknown`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a stale resolution changed nothing: look at the effect again"]
pub enum RecoveryOutcome {
    /// The resolution was applied.
    Applied,
    /// The key no longer holds that claim (it was recorded, released or claimed anew); nothing
    /// changed.
    Stale,
}

/// Lists and settles effects that read unknown. Implemented by every store in this crate.
///
/// ```
/// use std::time::Duration;
/// use prism::effects::{
///     ClaimRequest, EffectKey, EffectPolicy, EffectRecovery, EffectStore, InMemoryEffectStore,
///     RecordedOutcome, RecoveryOutcome, Resolution,
/// };
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryEffectStore::new();
/// let key = EffectKey::new("pay", &EffectPolicy::default(), &json!({"cents": 100}));
/// let lease = Duration::from_secs(60);
/// store.claim(ClaimRequest { key: &key, owner: "worker-1", now: 0, lease }).await.unwrap();
///
/// // The worker died; a minute later the claim reads unknown.
/// let unknown = store.unknown_effects(60_000, 10).await.unwrap();
/// assert_eq!(unknown[0].key, key);
///
/// // The host checked with the bank: the payment went out.
/// let settled = RecordedOutcome::Value(json!({"paid": true}));
/// let outcome = store.resolve_unknown(&unknown[0], Resolution::Record(settled)).await.unwrap();
/// assert_eq!(outcome, RecoveryOutcome::Applied);
/// # });
/// ```
pub trait EffectRecovery: EffectStore {
    /// Claims without an outcome whose lease ended at or before `now`, oldest lease first, at most
    /// `limit` of them.
    fn unknown_effects<'a>(
        &'a self,
        now: Millis,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<UnknownEffect>, EffectStoreError>>;

    /// Settles `effect` if its key still holds that same claim (same owner, same claim time, no
    /// outcome); otherwise changes nothing and answers [`RecoveryOutcome::Stale`].
    fn resolve_unknown<'a>(
        &'a self,
        effect: &'a UnknownEffect,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<RecoveryOutcome, EffectStoreError>>;
}

/// A shared store recovers like the store it shares.
impl<S: EffectRecovery + ?Sized> EffectRecovery for Arc<S> {
    fn unknown_effects<'a>(
        &'a self,
        now: Millis,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<UnknownEffect>, EffectStoreError>> {
        (**self).unknown_effects(now, limit)
    }

    fn resolve_unknown<'a>(
        &'a self,
        effect: &'a UnknownEffect,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<RecoveryOutcome, EffectStoreError>> {
        (**self).resolve_unknown(effect, resolution)
    }
}
