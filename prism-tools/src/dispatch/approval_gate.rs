//! The approval gate: a run's last question about a call, asked inside the pipeline once every
//! guard through `before_execute` has let the call through and before its effect is claimed.
//!
//! Asking there means a person is only ever asked about a call that would otherwise execute: a
//! call that any guard refuses gets that refusal as its result and is never put to anyone. A call
//! the gate holds leaves the pipeline without a result, started row or effect claim; the caller
//! (the run layer) records it as waiting and dispatches it again once it is decided, through every
//! check once more.

use serde_json::Value;

use crate::call::{CallId, ToolCall};
use crate::definition::ToolDefinition;
use crate::error::Refusal;

/// The gate's answer for one call.
pub(crate) enum Approval {
    /// No decision is needed, or the call was approved: it executes now.
    Proceed,
    /// The call waits for a decision.
    Wait,
    /// The call can never be approved here; it is refused with `permission_denied`.
    Refuse(Refusal),
}

/// Asks, per call, whether it may execute now. `H` is what the caller receives instead of a result
/// for a call that waits.
pub(crate) trait ApprovalGate<H>: Send + Sync {
    /// Called once the call passed steps 2 to 8, with the tool it resolved to and the arguments
    /// as middleware left them.
    fn check(&self, id: &CallId, tool: &ToolDefinition, arguments: &Value) -> Approval;

    /// The caller's handle on a call that waits: the call as middleware left it, and the tool
    /// it resolved to (whose version an approval is asked for).
    fn hold(&self, call: ToolCall, tool: &ToolDefinition) -> H;
}

impl Approval {
    /// The answer for an approval given for the version `asked` of `tool` (`None`: the approval
    /// did not record one). It covers that version only: a tool registered again with another
    /// definition since is not what the person approved, nor is an unknown version. `again`
    /// tells the caller how to ask anew. The messages name the tool, never the arguments.
    pub(crate) fn for_version(asked: Option<&str>, tool: &ToolDefinition, again: &str) -> Self {
        let name = tool.name();
        match asked {
            Some(asked) if asked == tool.version_hash() => Approval::Proceed,
            Some(_) => Approval::Refuse(Refusal::new(format!(
                "Tool {name} changed since its approval was asked (its definition is not the one \
                 the person approved), so the approval does not cover this call; {again}"
            ))),
            None => Approval::Refuse(Refusal::new(format!(
                "The approval of this call of {name} does not say which version of the tool it \
                 was given for (it was asked before versions were recorded), so it does not \
                 cover this call; {again}"
            ))),
        }
    }
}
