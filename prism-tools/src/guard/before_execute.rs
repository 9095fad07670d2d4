//! The last check before the side effect: an execution policy that may still say no.
//!
//! It runs after validation and after the handler decoded the arguments, immediately before the
//! effect claim and the body. A refusal is a blocked `execution_denied` result.

use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;

use super::verdict::{IntoVerdict, Verdict};

/// An execution policy consulted immediately before a tool runs.
pub trait BeforeExecute: Send + Sync + 'static {
    /// [`Verdict::allow`] to run the tool.
    fn check<'a>(
        &'a self,
        tool: &'a ToolDefinition,
        arguments: &'a Value,
        ctx: &'a ToolExecutionContext,
    ) -> Verdict<'a>;
}

/// An execution policy from a closure returning `Result<(), Refusal>` or a [`Verdict`].
///
/// ```
/// use prism::guard::before_execute_fn;
///
/// let dry_run = before_execute_fn(|tool, _args, ctx| {
///     if ctx.metadata().get("dry_run").is_some() && tool.annotations().read_only != Some(true) {
///         Err("dry run: only read-only tools execute".into())
///     } else {
///         Ok(())
///     }
/// });
/// # let _ = dry_run;
/// ```
pub fn before_execute_fn<F, R>(check: F) -> impl BeforeExecute
where
    F: Fn(&ToolDefinition, &Value, &ToolExecutionContext) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    BeforeExecuteFn(check)
}

struct BeforeExecuteFn<F>(F);

impl<F, R> BeforeExecute for BeforeExecuteFn<F>
where
    F: Fn(&ToolDefinition, &Value, &ToolExecutionContext) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    fn check<'a>(
        &'a self,
        tool: &'a ToolDefinition,
        arguments: &'a Value,
        ctx: &'a ToolExecutionContext,
    ) -> Verdict<'a> {
        (self.0)(tool, arguments, ctx).into_verdict()
    }
}
