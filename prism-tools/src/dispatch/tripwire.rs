//! [`Tripwire`]: a guardrail stopped the run, with the result its call is still owed.

use std::fmt;

use crate::call::ToolResult;

/// The run must stop: a guardrail tripped. Carries the blocked result still owed to the call, so
/// the run can persist it before failing.
#[derive(Clone, Debug, PartialEq)]
pub struct Tripwire {
    pub(super) result: ToolResult,
}

impl Tripwire {
    /// The blocked result owed to the call.
    pub fn result(&self) -> &ToolResult {
        &self.result
    }

    /// Takes the blocked result.
    pub fn into_result(self) -> ToolResult {
        self.result
    }
}

impl fmt::Display for Tripwire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.result.tool_call_id.shown();
        match self.result.error_info() {
            Some(error) => write!(f, "guardrail tripwire on call {id}: {}", error.message),
            None => write!(f, "guardrail tripwire on call {id}"),
        }
    }
}

impl std::error::Error for Tripwire {}
