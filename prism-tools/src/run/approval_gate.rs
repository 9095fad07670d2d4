//! [`RunApprovals`]: the approval gate a run hands its batches.
//!
//! The dispatcher asks it about each call once trust, permission, validation and `before_execute`
//! let the call through, right before the effect claim. A call whose tool or the agent's
//! [`ApprovalPolicy`](crate::run::ApprovalPolicy) asks for a decision then waits, unless a person
//! approved exactly this call (same id, tool and arguments) before the run resumed.

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
    approved: Vec<ApprovalKey>,
}

impl<'a> RunApprovals<'a> {
    pub(crate) fn new(agent: &'a Agent, session_id: &'a str, run_tool: Option<&'a str>) -> Self {
        Self {
            agent,
            session_id,
            run_tool,
            approved: Vec::new(),
        }
    }

    /// Lets the call with exactly `key` through.
    pub(crate) fn approved(mut self, approved: Vec<ApprovalKey>) -> Self {
        self.approved = approved;
        self
    }

    fn is_approved(&self, id: &CallId, tool: &ToolDefinition, arguments: &Value) -> bool {
        self.approved.iter().any(|key| {
            key.call_id == *id
                && *key == ApprovalKey::new(self.session_id, id.clone(), tool.name(), arguments)
        })
    }
}

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
        if !asked || self.is_approved(id, tool, arguments) {
            Approval::Proceed
        } else if agent.approvals.is_some() {
            Approval::Wait
        } else {
            Approval::Refuse(Refusal::new(format!(
                "Tool {} needs an approval, and this agent has no approval store to ask for one",
                tool.name()
            )))
        }
    }

    fn hold(&self, call: ToolCall) -> Halt {
        Halt::Held(call)
    }
}
