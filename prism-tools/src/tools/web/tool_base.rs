//! What the three web tools share: their annotations and trust mark, argument decoding, and
//! running a body until the call is cancelled.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolExecutionContext;
use crate::definition::{ToolAnnotations, ToolDefinition, ToolDefinitionBuilder};
use crate::error::ToolError;
use crate::schema::parameters_for;

/// A builder for a web tool taking `Args`: read-only, open-world, idempotent, never exclusive,
/// and its output marked untrusted so wire formats fence it and guardrails see the mark.
pub(crate) fn web_tool<Args: JsonSchema>(name: &str, description: &str) -> ToolDefinitionBuilder {
    ToolDefinition::builder(name)
        .description(description)
        .parameters(parameters_for::<Args>())
        .annotations(ToolAnnotations {
            read_only: Some(true),
            open_world: Some(true),
            idempotent: Some(true),
            destructive: Some(false),
            ..ToolAnnotations::default()
        })
        .exclusive(false)
        .untrusted_output(true)
}

/// The call's arguments as `Args`, or an `invalid_arguments` error naming the problem.
pub(crate) fn decode_args<Args: DeserializeOwned>(arguments: Value) -> Result<Args, ToolError> {
    serde_json::from_value(arguments)
        .map_err(|error| ToolError::with_code("invalid_arguments", error.to_string()))
}

/// `body`'s result, or a cancellation error as soon as the call is cancelled.
pub(crate) async fn until_cancelled<T>(
    ctx: &ToolExecutionContext,
    body: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    tokio::select! {
        result = body => result,
        () = ctx.cancellation().cancelled() => Err(ToolError::cancelled()),
    }
}
