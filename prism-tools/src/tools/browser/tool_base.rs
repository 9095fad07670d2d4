//! What the four browser tools share: exclusive, open-world, output marked untrusted, and each
//! call bounded by the browser's life and the call's cancellation.

use std::future::Future;

use schemars::JsonSchema;

use super::error::BrowserError;
use crate::context::ToolExecutionContext;
use crate::definition::{ToolAnnotations, ToolDefinition, ToolDefinitionBuilder};
use crate::error::ToolError;
use crate::schema::parameters_for;
use crate::tools::web::tool_base::until_cancelled;

/// A builder for a browser tool taking `Args`. Exclusive: a turn that calls one runs its calls
/// one at a time, since they all drive the run's one page.
pub(crate) fn browser_tool<Args: JsonSchema>(
    name: &str,
    description: &str,
    read_only: bool,
) -> ToolDefinitionBuilder {
    ToolDefinition::builder(name)
        .description(description)
        .parameters(parameters_for::<Args>())
        .annotations(ToolAnnotations {
            read_only: Some(read_only),
            open_world: Some(true),
            idempotent: Some(read_only),
            destructive: (!read_only).then_some(true),
            ..ToolAnnotations::default()
        })
        .exclusive(true)
        .untrusted_output(true)
}

/// `body`'s result as a tool result, or a cancellation error as soon as the call is cancelled.
pub(crate) async fn run_call<T>(
    ctx: &ToolExecutionContext,
    body: impl Future<Output = Result<T, BrowserError>>,
) -> Result<T, ToolError> {
    until_cancelled(ctx, async {
        body.await.map_err(BrowserError::into_tool_error)
    })
    .await
}
