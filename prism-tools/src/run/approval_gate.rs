//! [`RunApprovals`]: the approval gate a run hands its batches.
//!
//! The dispatcher asks it about each call once trust, permission, validation and `before_execute`
//! let the call through, right before the effect claim. A call whose tool or the agent's
//! [`ApprovalPolicy`](crate::run::ApprovalPolicy) asks for a decision then waits, unless a person
//! approved exactly this call (same id, tool and arguments) before the run resumed, and the tool
//! is still the version the person was asked about. An approval lets one call through: a second
//! call the model sent under the same id is refused.

use std::sync::Mutex;

use serde_json::Value;

use crate::call::{CallId, ToolCall};
use crate::definition::ToolDefinition;
use crate::dispatch::{Approval, ApprovalGate};
use crate::error::Refusal;
use crate::panic::guarded;
use crate::run::batch::Halt;
use crate::run::{Agent, ApprovalKey};

/// The approval gate of one batch of a run.
pub(crate) struct RunApprovals<'a> {
    agent: &'a Agent,
    session_id: &'a str,
    /// The run's own tool this turn (search mode's `search_tools`): it reads the index and
    /// activates names, which grants nothing, so it never waits.
    run_tool: Option<&'a str>,
    /// Calls a person approved, consumed from the store before the run resumed.
    approved: Mutex<Vec<Approved>>,
}

/// One approved call, for the version of its tool the person was asked about.
pub(crate) struct Approved {
    key: ApprovalKey,
    /// `None` when the suspended state did not record it (stored before versions were kept).
    tool_version: Option<String>,
    /// Whether a call already went through on it.
    used: bool,
}

impl Approved {
    pub(crate) fn new(key: ApprovalKey, tool_version: Option<String>) -> Self {
        Self {
            key,
            tool_version,
            used: false,
        }
    }
}

/// What a call finds among the approvals.
enum Found {
    /// An approval no call used yet, for this version of the tool (`None`: not known).
    Unused(Option<String>),
    /// An approval an earlier call with the same id used.
    Used,
}

impl<'a> RunApprovals<'a> {
    pub(crate) fn new(agent: &'a Agent, session_id: &'a str, run_tool: Option<&'a str>) -> Self {
        Self {
            agent,
            session_id,
            run_tool,
            approved: Mutex::default(),
        }
    }

    /// Lets each call with exactly an approved key through, once.
    pub(crate) fn approved(self, approved: Vec<Approved>) -> Self {
        Self {
            approved: Mutex::new(approved),
            ..self
        }
    }

    /// Whether a person approved this call, marking the approval used; `None` when there is
    /// none.
    fn take_approval(
        &self,
        id: &CallId,
        tool: &ToolDefinition,
        arguments: &Value,
    ) -> Option<Found> {
        let mut approved = self
            .approved
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let found = approved.iter_mut().find(|approved| {
            approved.key.call_id == *id
                && approved.key
                    == ApprovalKey::new(self.session_id, id.clone(), tool.name(), arguments)
        })?;
        Some(if std::mem::replace(&mut found.used, true) {
            Found::Used
        } else {
            Found::Unused(found.tool_version.clone())
        })
    }
}

/// How a model asks anew for an approval that does not cover its call.
const ASK_AGAIN: &str = "call it again to ask for a new approval";

impl ApprovalGate<Halt> for RunApprovals<'_> {
    fn check(&self, id: &CallId, tool: &ToolDefinition, arguments: &Value) -> Approval {
        if self.run_tool == Some(tool.name()) {
            return Approval::Proceed;
        }
        let agent = self.agent;
        let asked = tool.requires_approval()
            || agent.approval_policy.as_ref().is_some_and(|policy| {
                // A panicking policy asks for approval: fail closed.
                guarded(|| policy.requires_approval(tool, arguments)).unwrap_or(true)
            });
        if !asked {
            return Approval::Proceed;
        }
        match self.take_approval(id, tool, arguments) {
            Some(Found::Unused(asked)) => {
                return Approval::for_version(asked.as_deref(), tool, ASK_AGAIN);
            }
            Some(Found::Used) => {
                return Approval::Refuse(Refusal::new(format!(
                    "The approval of call {} was used by an earlier call with the same id; this one is not approved",
                    id.shown()
                )));
            }
            None => {}
        }
        if agent.approvals.is_some() {
            Approval::Wait
        } else {
            Approval::Refuse(Refusal::new(format!(
                "Tool {} needs an approval, and this agent has no approval store to ask for one",
                tool.name()
            )))
        }
    }

    fn hold(&self, call: ToolCall, _tool: &ToolDefinition) -> Halt {
        Halt::Held(call)
    }
}
