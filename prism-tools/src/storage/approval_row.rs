//! One approval as a SQL row stores it, and what a row means when a conditional statement found
//! it unchanged. Both SQL stores share this, so they answer exactly as the in-memory store does.
//!
//! A row only moves forward: `pending`, then `decided`, then `consumed`. Deciding and consuming
//! are each one `UPDATE` that matches only the exact key in the state it expects, so of any
//! number of concurrent callers one changes the row. A caller whose update changed nothing reads
//! the row to say why; because rows never move back, what it reads tells which state the row was
//! in when its update ran.

use serde_json::Value;

use crate::call::{CallId, shown_call_id};
use crate::run::{
    ApprovalDecision, ApprovalKey, ApprovalRecord, ApprovalState, ApprovalStoreError,
    ApprovalVerdict, PendingApproval, PendingApprovals, UnreadableApproval,
};
use crate::storage::effect_row::{from_db_millis, to_db_millis};

/// The `state` column of a pending approval.
pub(crate) const PENDING: &str = "pending";
/// The `state` column of a decided approval.
pub(crate) const DECIDED: &str = "decided";
/// The `state` column of a consumed approval.
pub(crate) const CONSUMED: &str = "consumed";

/// A row of `prism_approvals`.
pub(crate) struct StoredApproval {
    pub(crate) session_id: String,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments_hash: String,
    pub(crate) run_id: String,
    /// The redacted arguments as JSON text.
    pub(crate) arguments: String,
    pub(crate) requested_at: i64,
    pub(crate) state: String,
    /// The verdict as JSON text; `None` while pending.
    pub(crate) verdict: Option<String>,
}

/// What a conditional update wanted to do.
#[derive(Clone, Copy)]
pub(crate) enum Transition {
    /// `pending` to `decided`.
    Decide,
    /// `decided` to `consumed`.
    Consume,
}

impl StoredApproval {
    /// The row that records `pending`, waiting for a decision.
    pub(crate) fn requested(pending: &PendingApproval) -> Result<Self, ApprovalStoreError> {
        let key = &pending.key;
        Ok(Self {
            session_id: key.session_id.clone(),
            call_id: key.call_id.as_str().to_owned(),
            tool: key.tool.clone(),
            arguments_hash: key.arguments_hash.clone(),
            run_id: pending.run_id.clone(),
            arguments: serde_json::to_string(&pending.arguments).map_err(|error| {
                ApprovalStoreError::Backend(format!("could not encode the arguments: {error}"))
            })?,
            requested_at: to_db_millis(pending.requested_at),
            state: PENDING.to_owned(),
            verdict: None,
        })
    }

    fn answers(&self, key: &ApprovalKey) -> bool {
        self.tool == key.tool && self.arguments_hash == key.arguments_hash
    }

    /// The answer to a request for `key` that found this row already there.
    pub(crate) fn request_answer(
        found: Option<Self>,
        key: &ApprovalKey,
    ) -> Result<(), ApprovalStoreError> {
        match found {
            Some(row) if row.answers(key) => Ok(()),
            Some(_) => Err(ApprovalStoreError::KeyMismatch),
            None => Err(ApprovalStoreError::Backend(
                "the approval was removed while it was being requested".into(),
            )),
        }
    }

    /// Why `transition` of `key` changed nothing, given the row read after it.
    pub(crate) fn refusal(
        found: Option<Self>,
        key: &ApprovalKey,
        transition: Transition,
    ) -> ApprovalStoreError {
        let Some(row) = found else {
            return ApprovalStoreError::NotFound;
        };
        if !row.answers(key) {
            return ApprovalStoreError::KeyMismatch;
        }
        match (row.state.as_str(), transition) {
            (CONSUMED, _) => ApprovalStoreError::AlreadyConsumed,
            (DECIDED, Transition::Decide) => ApprovalStoreError::AlreadyDecided,
            // Decided since the update ran: it was still pending then.
            (DECIDED, Transition::Consume) => ApprovalStoreError::NotDecided,
            (PENDING, Transition::Consume) => ApprovalStoreError::NotDecided,
            // Requested since the update ran: there was nothing to decide then.
            (PENDING, Transition::Decide) => ApprovalStoreError::NotFound,
            (other, _) => unreadable(format!("unknown state {other:?}")),
        }
    }

    /// The record, when this row is the approval with exactly `key`.
    pub(crate) fn into_record(
        self,
        key: &ApprovalKey,
    ) -> Result<ApprovalRecord, ApprovalStoreError> {
        if !self.answers(key) {
            return Err(ApprovalStoreError::KeyMismatch);
        }
        let state = match (self.state.as_str(), &self.verdict) {
            (PENDING, None) => ApprovalState::Pending,
            (DECIDED, Some(verdict)) => ApprovalState::Decided {
                verdict: decode_verdict(verdict)?,
            },
            (CONSUMED, Some(verdict)) => ApprovalState::Consumed {
                verdict: decode_verdict(verdict)?,
            },
            (other, _) => return Err(unreadable(format!("state {other:?} with that verdict"))),
        };
        Ok(ApprovalRecord {
            pending: self.into_pending()?,
            state,
        })
    }

    /// What was asked, whatever the row's state.
    pub(crate) fn into_pending(self) -> Result<PendingApproval, ApprovalStoreError> {
        let arguments: Value = serde_json::from_str(&self.arguments)
            .map_err(|error| unreadable(format!("its arguments: {error}")))?;
        Ok(PendingApproval {
            key: ApprovalKey {
                session_id: self.session_id,
                call_id: CallId::from(self.call_id),
                tool: self.tool,
                arguments_hash: self.arguments_hash,
            },
            run_id: self.run_id,
            arguments,
            requested_at: from_db_millis(self.requested_at),
        })
    }
}

/// Sorts a session's pending rows, read or not, into what the host gets: one row that cannot
/// be read hides no other. Each unreadable row is logged with its call id and why, never its
/// content (the arguments may hold secrets).
pub(crate) fn sort_pending(
    session_id: &str,
    rows: impl IntoIterator<Item = (Option<String>, Result<StoredApproval, ApprovalStoreError>)>,
) -> PendingApprovals {
    let mut listing = PendingApprovals::default();
    for (call_id, row) in rows {
        match row.and_then(StoredApproval::into_pending) {
            Ok(pending) => listing.approvals.push(pending),
            Err(error) => {
                let reason = match error {
                    ApprovalStoreError::Backend(message) => message,
                    other => other.to_string(),
                };
                tracing::error!(target: "prism_tools", session_id, call_id = %call_id.as_deref().map_or("?".into(), shown_call_id), %reason, "a pending approval cannot be read; it is left out of the list");
                listing.unreadable.push(UnreadableApproval {
                    call_id: call_id.map(CallId::from),
                    reason,
                });
            }
        }
    }
    listing
}

/// The key's columns in the order of the stores' exact-key `WHERE` clauses: session, call, tool,
/// arguments hash.
pub(crate) fn key_columns(key: &ApprovalKey) -> [&str; 4] {
    [
        &key.session_id,
        key.call_id.as_str(),
        &key.tool,
        &key.arguments_hash,
    ]
}

/// The stored text of a decision's verdict.
pub(crate) fn encode_verdict(decision: &ApprovalDecision) -> Result<String, ApprovalStoreError> {
    serde_json::to_string(&decision.verdict).map_err(|error| {
        ApprovalStoreError::Backend(format!("could not encode the verdict: {error}"))
    })
}

/// A verdict read back from its stored text.
pub(crate) fn decode_verdict(text: &str) -> Result<ApprovalVerdict, ApprovalStoreError> {
    serde_json::from_str(text).map_err(|error| unreadable(format!("its verdict: {error}")))
}

fn unreadable(what: String) -> ApprovalStoreError {
    ApprovalStoreError::Backend(format!("a stored approval cannot be read: {what}"))
}
