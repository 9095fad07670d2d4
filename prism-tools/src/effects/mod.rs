//! Effects: at most once, or say unknown.
//!
//! A tool with an [`EffectPolicy`] has a side effect that must not happen twice (a payment, an
//! e-mail). When the dispatcher has an [`EffectStore`], it *claims* the call's [`EffectKey`]
//! (tool, scope and canonical arguments) before running the body, and records the outcome after:
//!
//! - a recorded outcome, success or error, is returned again without running the tool;
//! - a claim held by a live owner (its lease not yet expired) is reported `effect_in_flight`;
//! - a claim whose lease expired without an outcome is `effect_outcome_unknown`: the effect may or
//!   may not have happened, so it is never run again automatically. The host looks and calls
//!   [`EffectStore::resolve`].
//!
//! The in-memory store here serves tests and single-process hosts; durable stores implement the
//! same trait (see [`crate::storage`]). [`EffectRecovery`] is the host's tool for the unknown case.

mod key;
mod memory;
mod recovery;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{ContentBlock, ErrorInfo, ToolOutcome};
use crate::clock::Millis;

pub use key::{EffectKey, EffectKeySecret};
pub use memory::InMemoryEffectStore;
pub use recovery::{EffectRecovery, RecoveryOutcome, UnknownEffect};

/// A boxed, sendable future, as the store traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How a tool's side effect is deduplicated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectPolicy {
    /// Separates otherwise identical calls, e.g. a tenant or an order id; part of the key.
    pub scope: Option<String>,
    /// How long a claim's owner is presumed alive without recording an outcome.
    pub lease: Duration,
}

impl EffectPolicy {
    /// A policy with a lease and no scope.
    pub fn new(lease: Duration) -> Self {
        Self { scope: None, lease }
    }

    /// Sets the scope.
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }
}

impl Default for EffectPolicy {
    /// A 5-minute lease, no scope.
    fn default() -> Self {
        Self::new(Duration::from_secs(300))
    }
}

/// An outcome the store keeps, returned again instead of re-running the tool.
///
/// Written as `{"value": …}`, `{"error": …}`, `{"tripped": …}` or, for a value with content
/// blocks, `{"with_content": {"value": …, "content": […]}}`; the blocks are kept whole (base64
/// data included), so a replay returns exactly what the model was told, and a replayed tripwire
/// stops its run as the first call did. Outcomes recorded before content blocks or tripwires
/// were kept read as they were written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordedOutcome {
    /// The tool returned this value.
    Value(Value),
    /// The tool returned this error.
    Error(ErrorInfo),
    /// The tool returned this value and these content blocks.
    WithContent {
        /// The value (`null` when the tool returned only content).
        value: Value,
        /// The content blocks, in order.
        content: Vec<ContentBlock>,
    },
    /// A guardrail's tripwire refused the tool's output with this error. A replay returns the
    /// same blocked result and trips again: a retried or resumed call cannot slip past the
    /// tripwire by finding its outcome recorded.
    Tripped(ErrorInfo),
}

impl RecordedOutcome {
    /// The outcome to keep for a call that ended with `outcome` and `content`, `tripped` when a
    /// guardrail's tripwire refused its output.
    pub(crate) fn of(outcome: &ToolOutcome, content: &[ContentBlock], tripped: bool) -> Self {
        match outcome {
            ToolOutcome::Blocked(error) if tripped => Self::Tripped(error.clone()),
            ToolOutcome::Value(value) if content.is_empty() => Self::Value(value.clone()),
            ToolOutcome::Value(value) => Self::WithContent {
                value: value.clone(),
                content: content.to_vec(),
            },
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => Self::Error(error.clone()),
        }
    }

    /// True when the outcome is a tripwire's: its replay stops the run.
    pub(crate) fn trips(&self) -> bool {
        matches!(self, Self::Tripped(_))
    }

    /// The outcome and content a replay reports: a recorded error that names a guard was a
    /// blocked call.
    pub(crate) fn into_parts(self) -> (ToolOutcome, Vec<ContentBlock>) {
        match self {
            Self::Value(value) => (ToolOutcome::Value(value), Vec::new()),
            Self::Error(error) | Self::Tripped(error) => {
                (ToolOutcome::from_error(error), Vec::new())
            }
            Self::WithContent { value, content } => (ToolOutcome::Value(value), content),
        }
    }
}

/// A request to claim an effect before running it.
#[derive(Clone, Copy, Debug)]
pub struct ClaimRequest<'a> {
    /// The effect.
    pub key: &'a EffectKey,
    /// Who claims it: one id per claim (the dispatcher's id and the claim's number), so that
    /// only this claim's call can complete it.
    pub owner: &'a str,
    /// The current time.
    pub now: Millis,
    /// How long the claim stays live without an outcome.
    pub lease: Duration,
}

impl ClaimRequest<'_> {
    /// When the claim's lease ends, if it is taken now.
    pub fn lease_expires_at(&self) -> Millis {
        self.now
            .saturating_add(u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX))
    }
}

/// The answer to a claim.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// The caller owns the effect now and may run it.
    Acquired,
    /// The effect already happened; here is what it returned.
    Recorded(RecordedOutcome),
    /// Another owner holds a live claim.
    InFlight {
        /// The owner.
        owner: String,
        /// When its lease ends.
        lease_expires_at: Millis,
    },
    /// A claim expired without an outcome; the effect may or may not have happened.
    Unknown {
        /// The owner that never recorded an outcome.
        owner: String,
    },
}

/// How the host settles an unknown effect.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// The effect happened (or definitely failed) with this outcome; return it from now on.
    Record(RecordedOutcome),
    /// The effect did not happen: forget the claim so that the next call runs the tool.
    Release,
}

/// What a store knows about one key.
#[derive(Clone, Debug, PartialEq)]
pub enum EffectState {
    /// Claimed, no outcome yet.
    Claimed {
        /// The owner.
        owner: String,
        /// When the claim was taken.
        claimed_at: Millis,
        /// When its lease ends; after that the effect reads unknown.
        lease_expires_at: Millis,
    },
    /// Finished with an outcome.
    Recorded(RecordedOutcome),
}

impl EffectState {
    /// The answer to a claim that finds this state at `now`: the recorded outcome, the live
    /// claim, or, once its lease has ended without an outcome, unknown. Every store answers
    /// through this, so they all mean the same by "in flight" and "unknown".
    pub fn into_claim(self, now: Millis) -> Claim {
        match self {
            Self::Recorded(outcome) => Claim::Recorded(outcome),
            Self::Claimed {
                owner,
                lease_expires_at,
                ..
            } if now < lease_expires_at => Claim::InFlight {
                owner,
                lease_expires_at,
            },
            Self::Claimed { owner, .. } => Claim::Unknown { owner },
        }
    }
}

/// A store failure. The dispatcher answers the call with `effect_store_error` and does not run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EffectStoreError {
    /// `complete` came from an owner that no longer holds the claim.
    NotOwner,
    /// `resolve` named a key with no claim.
    NotFound,
    /// The backend failed.
    Backend(String),
}

impl fmt::Display for EffectStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotOwner => f.write_str("the effect claim is held by another owner"),
            Self::NotFound => f.write_str("no effect claim with that key"),
            Self::Backend(message) => write!(f, "effect store failure: {message}"),
        }
    }
}

impl std::error::Error for EffectStoreError {}

/// Stores effect claims and outcomes.
pub trait EffectStore: Send + Sync + 'static {
    /// Claims `request.key` for `request.owner`, atomically.
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>>;

    /// Records the outcome of an effect the caller claimed.
    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>>;

    /// Settles an effect by hand (normally one that reads unknown).
    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>>;

    /// What the store knows about `key`.
    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>>;
}

/// A shared store is a store: hand the dispatcher an `Arc<InMemoryEffectStore>` (or an
/// `Arc<dyn EffectStore>`) and keep another handle to inspect or settle claims.
impl<S: EffectStore + ?Sized> EffectStore for Arc<S> {
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        (**self).claim(request)
    }

    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        (**self).complete(key, owner, outcome)
    }

    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        (**self).resolve(key, resolution)
    }

    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        (**self).state(key)
    }
}

/// A store fills the dispatcher's effect slot; an `Arc` of one is a store too (above).
impl<T: EffectStore> crate::slot::IntoSlot<dyn EffectStore> for T {
    fn into_slot(self) -> Option<Arc<dyn EffectStore>> {
        Some(Arc::new(self))
    }
}
