//! Trust and permission: may this tool run here, and may it run with these arguments?
//!
//! Trust looks at the tool and the context only (is this tool trusted in this session at all?);
//! permission also sees the arguments. Both run after lookup and filtering and before
//! validation; a refusal is a blocked `permission_denied` result.

use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;
use crate::error::Refusal;

/// Decides whether a tool is trusted to run in a context.
pub trait TrustPolicy: Send + Sync + 'static {
    /// `Ok(())` to let the call go on.
    fn check(&self, tool: &ToolDefinition, ctx: &ToolExecutionContext) -> Result<(), Refusal>;
}

/// Decides whether a call with these arguments is permitted.
pub trait PermissionPolicy: Send + Sync + 'static {
    /// `Ok(())` to let the call go on.
    fn check(
        &self,
        tool: &ToolDefinition,
        arguments: &Value,
        ctx: &ToolExecutionContext,
    ) -> Result<(), Refusal>;
}

/// A trust policy from a closure.
///
/// ```
/// use prism_tools::trust_fn;
///
/// // Only tools that declare themselves read-only are trusted in this deployment.
/// let trust = trust_fn(|tool, _ctx| match tool.annotations().read_only {
///     Some(true) => Ok(()),
///     _ => Err(format!("{} is not read-only", tool.name())),
/// });
/// # let _ = trust;
/// ```
pub fn trust_fn<F, E>(check: F) -> impl TrustPolicy
where
    F: Fn(&ToolDefinition, &ToolExecutionContext) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    TrustFn(check)
}

struct TrustFn<F>(F);

impl<F, E> TrustPolicy for TrustFn<F>
where
    F: Fn(&ToolDefinition, &ToolExecutionContext) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    fn check(&self, tool: &ToolDefinition, ctx: &ToolExecutionContext) -> Result<(), Refusal> {
        (self.0)(tool, ctx).map_err(Into::into)
    }
}

/// A permission policy from a closure.
///
/// ```
/// use prism_tools::permission_fn;
///
/// let no_deletes = permission_fn(|tool, _args, _ctx| {
///     if tool.annotations().destructive == Some(true) {
///         Err("destructive tools need a person's approval")
///     } else {
///         Ok(())
///     }
/// });
/// # let _ = no_deletes;
/// ```
pub fn permission_fn<F, E>(check: F) -> impl PermissionPolicy
where
    F: Fn(&ToolDefinition, &Value, &ToolExecutionContext) -> Result<(), E> + Send + Sync + 'static,
    E: Into<Refusal>,
{
    PermissionFn(check)
}

struct PermissionFn<F>(F);

impl<F, E> PermissionPolicy for PermissionFn<F>
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
