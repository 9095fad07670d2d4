//! [`SuspendedRun`]: a run waiting for approvals, as stored in the session's state.
//!
//! When a call of a batch waits for approval, the run stops claiming calls, lets the claimed ones
//! settle, and keeps the whole batch here in call order: settled results, the calls waiting for a
//! decision, and the calls that never started. Waiting is not a failure, so those last calls are
//! not answered `tool_call_not_dispatched`: once the run resumes they go through the pipeline, in
//! call order, with the approved calls. No row of the batch reaches the transcript until then, so
//! the rows still appear in call order and every call id gets its real result. The state is plain
//! serde data, so a suspended session can be stored, restored in another process, and resumed
//! there. (States stored before unstarted calls were kept hold `tool_call_not_dispatched` rows for
//! them instead, and still resume.)

use serde::{Deserialize, Serialize};

use crate::call::{ErrorInfo, ToolCall, ToolResult};
use crate::grant::ToolGrant;
use crate::run::PendingApproval;

/// A run waiting for approvals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuspendedRun {
    pub(crate) run_id: String,
    pub(crate) turn: u32,
    pub(crate) rounds: u32,
    pub(crate) revisions: u32,
    pub(crate) text: String,
    /// The names visible in the suspended turn; `None` when hidden calls were allowed.
    pub(crate) visible: Option<Vec<String>>,
    /// The names the turn's `search_tools` searched (its narrowed tools), when they differ from
    /// the visible ones; `None` in states stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) searched: Option<Vec<String>>,
    pub(crate) calls: Vec<HeldCall>,
}

/// One call of the suspended batch.
// A suspended batch holds a few of these once, to be stored: boxing the larger variant would
// save nothing worth an allocation per held call.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub(crate) enum HeldCall {
    /// Answered already; the row waits for the rest of the batch.
    Settled { result: ToolResult },
    /// Waiting for a decision. `call` is the call after `tool_call` middleware.
    Pending {
        call: ToolCall,
        approval: PendingApproval,
        /// The version of the tool the person is asked about (see
        /// `ToolDefinition::version_hash`); the approval covers that version only. `None` in
        /// states stored before it was kept: such an approval covers no version.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_version: Option<String>,
    },
    /// Never started; dispatched when the run resumes. `call` is the call after `tool_call`
    /// middleware, and `middleware_failure` what that middleware failed with, if it did.
    Unstarted {
        call: ToolCall,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        middleware_failure: Option<Box<ErrorInfo>>,
    },
}

impl SuspendedRun {
    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The approvals the run waits for, in call order.
    pub fn pending(&self) -> impl Iterator<Item = &PendingApproval> {
        self.calls.iter().filter_map(|held| match held {
            HeldCall::Pending { approval, .. } => Some(approval),
            HeldCall::Settled { .. } | HeldCall::Unstarted { .. } => None,
        })
    }

    pub(crate) fn visible_grant(&self) -> ToolGrant {
        match &self.visible {
            None => ToolGrant::All,
            Some(names) => ToolGrant::only(names),
        }
    }

    /// What the suspended turn's `search_tools` searched.
    pub(crate) fn searched_grant(&self) -> ToolGrant {
        match &self.searched {
            None => self.visible_grant(),
            Some(names) => ToolGrant::only(names),
        }
    }
}

/// A turn's visible set, as stored.
pub(crate) fn stored_visible(visible: &ToolGrant) -> Option<Vec<String>> {
    match visible {
        ToolGrant::All => None,
        ToolGrant::Only(names) => {
            let mut names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
            names.sort();
            Some(names)
        }
    }
}
