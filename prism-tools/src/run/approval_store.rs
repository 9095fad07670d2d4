//! [`ApprovalStore`]: where pending approvals and their decisions live.
//!
//! The store is what makes an approval durable: a run records its pending approvals there before
//! it suspends, a decision can be recorded by another process (a review UI, say), and a resumed
//! run *consumes* each decision exactly once before acting on it, so one decision never runs a
//! call twice. The methods return boxed futures so that the database-backed stores
//! (`storage::SqliteApprovalStore` and `storage::PostgresApprovalStore`, behind the `sqlite` and
//! `postgres` features) implement the same trait as [`InMemoryApprovalStore`]; with them, pending
//! approvals survive a restart of the process that suspended the run.
//!
//! Every lookup is by the exact [`ApprovalKey`]. A decision whose key names a pending call but
//! with another tool or other arguments is refused with [`ApprovalStoreError::KeyMismatch`]. A
//! store keeps one approval per call id of a session: a later run that reuses a call id replaces
//! the earlier run's approval once that one is decided (see [`ApprovalStore::request`]).

use std::fmt;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::call::CallId;
use crate::effects::BoxFuture;
use crate::panic::guarded_future;
use crate::run::{ApprovalDecision, ApprovalKey, ApprovalVerdict, PendingApproval};

/// Where an approval stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Decided, not acted on yet.
    Decided {
        /// The decision.
        verdict: ApprovalVerdict,
    },
    /// Decided and acted on; it cannot be used again.
    Consumed {
        /// The decision.
        verdict: ApprovalVerdict,
    },
}

/// One approval and where it stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    /// What was asked.
    pub pending: PendingApproval,
    /// Where it stands.
    pub state: ApprovalState,
}

impl ApprovalRecord {
    /// True when `request`, for the same call of the same session, replaces this record: it was
    /// made by another run and is already decided, so nothing waits on it any more.
    fn is_over_for(&self, request: &PendingApproval) -> bool {
        self.pending.run_id != request.run_id && self.state != ApprovalState::Pending
    }
}

/// A session's pending approvals, as [`ApprovalStore::pending_with_unreadable`] reads them.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct PendingApprovals {
    /// The approvals waiting for a decision, in the order they were requested.
    pub approvals: Vec<PendingApproval>,
    /// Pending rows the store could not read, in the order they were requested. They stay in
    /// the store as they are; a host mends or removes them there.
    pub unreadable: Vec<UnreadableApproval>,
}

/// A stored pending approval that could not be read. It holds none of the row's content (the
/// arguments may hold secrets), only what finds the row and why it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UnreadableApproval {
    /// The call id, when that much of the row could be read.
    pub call_id: Option<CallId>,
    /// Why the row could not be read.
    pub reason: String,
}

/// Why the store refused an operation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalStoreError {
    /// No approval with that key.
    NotFound,
    /// The call is pending under another tool or other arguments: the decision does not apply.
    KeyMismatch,
    /// The approval was already decided.
    AlreadyDecided,
    /// The approval has no decision yet.
    NotDecided,
    /// The decision was already acted on.
    AlreadyConsumed,
    /// The backend failed.
    Backend(String),
}

/// `call`'s answer, a panic while the store makes or runs it taken as a backend failure (its text
/// is not kept: it could quote anything the store held).
pub(crate) async fn guarded_store<'a, T>(
    call: impl FnOnce() -> BoxFuture<'a, Result<T, ApprovalStoreError>>,
) -> Result<T, ApprovalStoreError> {
    guarded_future(call).await.unwrap_or_else(|_| {
        Err(ApprovalStoreError::Backend(
            "the approval store panicked".into(),
        ))
    })
}

impl fmt::Display for ApprovalStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound => f.write_str("no pending approval with that key"),
            Self::KeyMismatch => f.write_str(
                "the call is pending with another tool or other arguments; the decision does not apply",
            ),
            Self::AlreadyDecided => f.write_str("the approval was already decided"),
            Self::NotDecided => f.write_str("the approval has no decision yet"),
            Self::AlreadyConsumed => f.write_str("the decision was already acted on"),
            Self::Backend(message) => write!(f, "approval store failure: {message}"),
        }
    }
}

impl std::error::Error for ApprovalStoreError {}

/// Keeps pending approvals and decisions.
pub trait ApprovalStore: Send + Sync + 'static {
    /// Records a pending approval. Recording the same key again changes nothing; the same call
    /// under another key is [`KeyMismatch`](ApprovalStoreError::KeyMismatch). One exception: when
    /// the call's record was made by another run (`pending.run_id`) and is already decided, that
    /// approval is over, and the request replaces it with a fresh pending one, last in request
    /// order. A later run of the session can reuse a call id (providers that send calls without
    /// ids get numbered ones, such as `call_0`), and its call must be asked about anew.
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>>;

    /// Records a decision on a pending approval with exactly `decision.key`.
    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>>;

    /// The approval with exactly this key.
    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>>;

    /// A session's approvals still waiting for a decision, in the order they were requested.
    /// A stored approval that cannot be read (a corrupt or hand-edited row) is left out and
    /// logged with its call id, so it hides no other; [`pending_with_unreadable`] lists it too.
    ///
    /// [`pending_with_unreadable`]: ApprovalStore::pending_with_unreadable
    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PendingApproval>, ApprovalStoreError>>;

    /// What [`pending`](ApprovalStore::pending) returns, and the session's pending rows the
    /// store could not read, so a host can see and mend them. The default, for stores whose
    /// approvals are always readable (those in memory), lists none.
    fn pending_with_unreadable<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<PendingApprovals, ApprovalStoreError>> {
        Box::pin(async move {
            Ok(PendingApprovals {
                approvals: self.pending(session_id).await?,
                unreadable: Vec::new(),
            })
        })
    }

    /// Marks a decided approval as acted on and returns its decision, atomically: of two callers
    /// only one gets the decision.
    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>>;
}

/// A shared store is a store: several agents (or an agent and a review UI) can hold one.
impl<S: ApprovalStore + ?Sized> ApprovalStore for Arc<S> {
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        (**self).request(pending)
    }

    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        (**self).decide(decision)
    }

    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>> {
        (**self).get(key)
    }

    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PendingApproval>, ApprovalStoreError>> {
        (**self).pending(session_id)
    }

    fn pending_with_unreadable<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<PendingApprovals, ApprovalStoreError>> {
        (**self).pending_with_unreadable(session_id)
    }

    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>> {
        (**self).consume(key)
    }
}

/// An [`ApprovalStore`] in memory, for tests and single-process hosts. Cloning is cheap and every
/// clone sees the same approvals, so an agent can hold one clone and a review loop another.
///
/// ```
/// use prism::run::{ApprovalStore, InMemoryApprovalStore};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryApprovalStore::new();
/// let review = store.clone();
/// assert!(review.pending("s1").await.unwrap().is_empty());
/// # });
/// ```
#[derive(Clone, Debug, Default)]
pub struct InMemoryApprovalStore {
    /// Kept in request order, so `pending` lists calls in the order the run asked.
    records: Arc<Mutex<IndexMap<(String, CallId), ApprovalRecord>>>,
}

impl InMemoryApprovalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with_record<T>(
        &self,
        key: &ApprovalKey,
        apply: impl FnOnce(&mut ApprovalRecord) -> Result<T, ApprovalStoreError>,
    ) -> Result<T, ApprovalStoreError> {
        let mut records = self.lock();
        let record = records
            .get_mut(&(key.session_id.clone(), key.call_id.clone()))
            .ok_or(ApprovalStoreError::NotFound)?;
        if record.pending.key != *key {
            return Err(ApprovalStoreError::KeyMismatch);
        }
        apply(record)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IndexMap<(String, CallId), ApprovalRecord>> {
        // No code panics while holding the lock; a poisoned map is still consistent.
        self.records
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl ApprovalStore for InMemoryApprovalStore {
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        let mut records = self.lock();
        let slot = (pending.key.session_id.clone(), pending.key.call_id.clone());
        if records
            .get(&slot)
            .is_some_and(|record| record.is_over_for(pending))
        {
            // Removed, not overwritten: the new request is the newest in request order.
            records.shift_remove(&slot);
        }
        let result = match records.get(&slot) {
            Some(record) if record.pending.key == pending.key => Ok(()),
            Some(_) => Err(ApprovalStoreError::KeyMismatch),
            None => {
                records.insert(
                    slot,
                    ApprovalRecord {
                        pending: pending.clone(),
                        state: ApprovalState::Pending,
                    },
                );
                Ok(())
            }
        };
        Box::pin(std::future::ready(result))
    }

    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        let result = self.with_record(&decision.key, |record| match record.state {
            ApprovalState::Pending => {
                record.state = ApprovalState::Decided {
                    verdict: decision.verdict.clone(),
                };
                Ok(())
            }
            ApprovalState::Decided { .. } => Err(ApprovalStoreError::AlreadyDecided),
            ApprovalState::Consumed { .. } => Err(ApprovalStoreError::AlreadyConsumed),
        });
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>> {
        let result = match self.with_record(key, |record| Ok(record.clone())) {
            Ok(record) => Ok(Some(record)),
            Err(ApprovalStoreError::NotFound) => Ok(None),
            Err(error) => Err(error),
        };
        Box::pin(std::future::ready(result))
    }

    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PendingApproval>, ApprovalStoreError>> {
        let pending: Vec<PendingApproval> = self
            .lock()
            .values()
            .filter(|record| {
                record.pending.key.session_id == session_id
                    && record.state == ApprovalState::Pending
            })
            .map(|record| record.pending.clone())
            .collect();
        Box::pin(std::future::ready(Ok(pending)))
    }

    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>> {
        let result = self.with_record(key, |record| match &record.state {
            ApprovalState::Pending => Err(ApprovalStoreError::NotDecided),
            ApprovalState::Consumed { .. } => Err(ApprovalStoreError::AlreadyConsumed),
            ApprovalState::Decided { verdict } => {
                let verdict = verdict.clone();
                record.state = ApprovalState::Consumed {
                    verdict: verdict.clone(),
                };
                Ok(verdict)
            }
        });
        Box::pin(std::future::ready(result))
    }
}
