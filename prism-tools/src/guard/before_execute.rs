//! The last check before the side effect: an execution policy that may still say no.
//!
//! It runs after validation and after the handler decoded the arguments, immediately before the
//! effect claim and the body. A refusal is a blocked `execution_denied` result.

use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;
use crate::error::Refusal;

/// An execution policy consulted immediately before a tool runs.
pub trait BeforeExecute: Send + Sync + 'static {
    /// `Ok(())` to run the tool.
    fn check(
        &self,
        tool: &ToolDefinition,
        arguments: &Value,
        ctx: &ToolExecutionContext,
    ) -> Result<(), Refusal>;
}

/// An execution policy from a closure.
///
/// ```
/// use prism_tools::before_execute_fn;
///
/// let office_hours = before_execute_fn(|tool, _args, ctx| {
///     if ctx.metadata().get("dry_run").is_some() && tool.annotations().read_only != Some(true) {
///         Err("dry run: only read-only tools execute")
///     } else {
///         Ok(())
///     }
/// });
/// # let _ = office_hours;
/// ```
pub fn before_execute_fn<F, E>(check: F) -> impl BeforeExecute
where
    F: Fn(&ToolDefinition, &Value, &ToolExecutionContext) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    BeforeExecuteFn(check)
}

struct BeforeExecuteFn<F>(F);

impl<F, E> BeforeExecute for BeforeExecuteFn<F>
where
    F: Fn(&ToolDefinition, &Value, &ToolExecutionContext) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    fn check(
        &self,
        tool: &ToolDefinition,
        arguments: &Value,
        ctx: &ToolExecutionContext,
    ) -> Result<(), Refusal> {
        (self.0)(tool, arguments, ctx).map_err(Into::into)
    }
}
