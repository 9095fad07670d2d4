//! Validators: do these arguments make sense for this tool?
//!
//! The dispatcher's own validators always run (they are the host's floor); a run's validator,
//! carried by the [`ToolScope`](crate::ToolScope), runs after them. A refusal is a blocked
//! `validation_failed` result whose message is redacted like every other.
//!
//! A validator may also look at each tool ahead of its first call ([`ArgumentValidator::prepare`]):
//! the builder calls it for every registered tool, so a schema the validator cannot use is
//! reported to the host when the dispatcher is built, not to the model at its first call.

use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::validation::SchemaError;

use super::verdict::{IntoVerdict, Verdict};

/// Checks a call's arguments before the tool runs.
pub trait ArgumentValidator: Send + Sync + 'static {
    /// [`Verdict::allow`] to let the call go on.
    fn validate<'a>(&'a self, tool: &'a ToolDefinition, arguments: &'a Value) -> Verdict<'a>;

    /// Checks a tool before any call: [`DispatchBuilder::try_build`](crate::DispatchBuilder::try_build),
    /// [`build_secure`](crate::DispatchBuilder::build_secure) and
    /// [`Dispatcher::register`](crate::Dispatcher::register) call it for every tool and report an
    /// error with the tool's name. A schema validator compiles the tool's schema here. The
    /// default accepts every tool.
    fn prepare(&self, tool: &ToolDefinition) -> Result<(), SchemaError> {
        let _ = tool;
        Ok(())
    }
}

/// A validator from a closure.
///
/// ```
/// use prism::guard::validator_fn;
///
/// let short_queries = validator_fn(|_tool, args| match args.get("query").and_then(|q| q.as_str()) {
///     Some(query) if query.len() > 1000 => Err("query too long".into()),
///     _ => Ok(()),
/// });
/// # let _ = short_queries;
/// ```
///
/// The closure returns `Result<(), Refusal>`, or a [`Verdict`] to answer later.
pub fn validator_fn<F, R>(validate: F) -> impl ArgumentValidator
where
    F: Fn(&ToolDefinition, &Value) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    ValidatorFn(validate)
}

struct ValidatorFn<F>(F);

impl<F, R> ArgumentValidator for ValidatorFn<F>
where
    F: Fn(&ToolDefinition, &Value) -> R + Send + Sync + 'static,
    R: IntoVerdict,
{
    fn validate<'a>(&'a self, tool: &'a ToolDefinition, arguments: &'a Value) -> Verdict<'a> {
        (self.0)(tool, arguments).into_verdict()
    }
}
