//! Arm e: `add` as a rig `Tool`, called through `ToolSet::execute`.
//!
//! rig's agent loop hands a tool the model's arguments as JSON text (`arguments.to_string()`),
//! and the tool decodes them again; the arm does the same, starting from the decoded
//! [`ToolCall`] every arm gets.

use rig_agent::tool::{Tool, ToolContext, ToolResult, ToolSet};
use serde_json::{Value, json};

use prism_tools::ToolCall;

use crate::{AddArgs, add};

/// `add` as a rig tool.
pub struct RigAdd;

impl Tool for RigAdd {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = i64;
    type Error = std::convert::Infallible;

    fn description(&self) -> String {
        "Adds two integers.".to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        })
    }

    async fn call(&self, _context: &mut ToolContext, args: AddArgs) -> Result<i64, Self::Error> {
        Ok(add(args))
    }
}

/// A tool set holding [`RigAdd`].
pub struct RigArm {
    tools: ToolSet,
}

impl Default for RigArm {
    fn default() -> Self {
        let mut tools = ToolSet::default();
        tools.add_tool(RigAdd);
        Self { tools }
    }
}

impl RigArm {
    /// A tool set with `add`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs one call with a fresh context, as rig's agent does per call.
    pub async fn call(&self, call: ToolCall) -> ToolResult {
        let mut context = ToolContext::default();
        self.tools
            .execute(&call.name, call.arguments.to_string(), &mut context)
            .await
    }
}
