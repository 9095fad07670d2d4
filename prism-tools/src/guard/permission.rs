//! Trust and permission: may this tool run here, and may it run with these arguments?
//!
//! Trust looks at the tool and the context only (is this tool trusted in this session at all?);
//! permission also sees the arguments. Both run after lookup and filtering and before
//! validation; a refusal is a blocked `permission_denied` result. Either may answer later
//! ([`Verdict::pending`]), for example after asking an authorisation service.

use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;

use super::verdict::{IntoVerdict, Verdict};

/// Decides whether a tool is trusted to run in a context.
pub trait TrustPolicy: Send + Sync + 'static {
    /// [`Verdict::allow`] to let the call go on.
    fn check<'a>(&'a self, tool: &'a ToolDefinition, ctx: &'a ToolExecutionContext) -> Verdict<'a>;
}

/// Decides whether a call with these arguments is permitted.
///
/// ```
/// use prism::{ToolDefinition, ToolExecutionContext};
/// use prism::guard::{PermissionPolicy, Verdict};
/// use serde_json::Value;
///
/// /// Asks the host's authorisation service about every call.
/// struct AskService {
///     service: std::sync::Arc<dyn Fn(String) -> tokio::sync::oneshot::Receiver<bool> + Send + Sync>,
/// }
///
/// impl PermissionPolicy for AskService {
///     fn check<'a>(
///         &'a self,
///         tool: &'a ToolDefinition,
///         _arguments: &'a Value,
///         _ctx: &'a ToolExecutionContext,
///     ) -> Verdict<'a> {
///         let answer = (self.service)(tool.name().to_owned());
///         Verdict::pending(async move {
///             match answer.await {
///                 Ok(true) => Ok(()),
///                 _ => Err(format!("{} is not authorised", tool.name()).into()),
///             }
///         })
///     }
/// }
/// ```
pub trait PermissionPolicy: Send + Sync + 'static {
    /// [`Verdict::allow`] to let the call go on.
    fn check<'a>(
        &'a self,
        tool: &'a ToolDefinition,
        arguments: &'a Value,
        ctx: &'a ToolExecutionContext,
    ) -> Verdict<'a>;
}

/// A trust policy from a closure.
///
/// ```
/// use prism::guard::trust_fn;
///
/// // Only tools that declare themselves read-only are trusted in this deployment.
/// let trust = trust_fn(|tool, _ctx| match tool.annotations().read_only {
///     Some(true) => Ok(()),
///     _ => Err(format!("{} is not read-only", tool.name()).into()),
/// });
/// # let _ = trust;
/// ```
///
/// The closure returns `Result<(), Refusal>`, or a [`Verdict`] to answer later; a pending
/// verdict's future owns what it needs (`'static`).
pub fn trust_fn<F, R>(check: F) -> impl TrustPolicy
where
    F: Fn(&ToolDefinition, &ToolExecutionContext) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    TrustFn(check)
}

struct TrustFn<F>(F);

impl<F, R> TrustPolicy for TrustFn<F>
where
    F: Fn(&ToolDefinition, &ToolExecutionContext) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    fn check<'a>(&'a self, tool: &'a ToolDefinition, ctx: &'a ToolExecutionContext) -> Verdict<'a> {
        (self.0)(tool, ctx).into_verdict()
    }
}

/// A permission policy from a closure.
///
/// ```
/// use prism::guard::permission_fn;
///
/// let no_deletes = permission_fn(|tool, _args, _ctx| {
///     if tool.annotations().destructive == Some(true) {
///         Err("destructive tools need a person's approval".into())
///     } else {
///         Ok(())
///     }
/// });
/// # let _ = no_deletes;
/// ```
///
/// The closure returns `Result<(), Refusal>`, or a [`Verdict`] to answer later (see
/// [`trust_fn`]).
pub fn permission_fn<F, R>(check: F) -> impl PermissionPolicy
where
    F: Fn(&ToolDefinition, &Value, &ToolExecutionContext) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    PermissionFn(check)
}

struct PermissionFn<F>(F);

impl<F, R> PermissionPolicy for PermissionFn<F>
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
