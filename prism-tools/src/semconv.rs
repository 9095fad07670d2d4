//! OpenTelemetry's GenAI semantic-convention names, as the spans of this crate write them.
//!
//! Two kinds of span carry them: `chat {model}` around one provider turn (the HTTP providers)
//! and `execute_tool {name}` around one dispatch (the dispatcher). A host that exports through
//! `tracing-opentelemetry` gets attributes its backend already knows how to show; the span's
//! display name travels in [`OTEL_NAME`], since a `tracing` span's own name is fixed at compile
//! time.
//!
//! Tool arguments and results are content, not metadata: they are recorded only when the host
//! enables the [`CONTENT_TARGET`] target at `TRACE` level, and only after redaction.

/// The span's display name for OpenTelemetry exporters (`chat gpt-4o`, `execute_tool search`).
pub const OTEL_NAME: &str = "otel.name";
/// The operation: [`OPERATION_CHAT`] or [`OPERATION_EXECUTE_TOOL`].
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// Which provider answers: `openai`, `anthropic`, `gcp.gemini`…
pub const GEN_AI_PROVIDER_NAME: &str = "gen_ai.provider.name";
/// The model the request asked for.
pub const GEN_AI_REQUEST_MODEL: &str = "gen_ai.request.model";
/// The model that answered, when the provider said.
pub const GEN_AI_RESPONSE_MODEL: &str = "gen_ai.response.model";
/// The provider's id of the response.
pub const GEN_AI_RESPONSE_ID: &str = "gen_ai.response.id";
/// Why the model stopped, as a list of one.
pub const GEN_AI_RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// Input tokens the turn used.
pub const GEN_AI_USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Output tokens the turn used.
pub const GEN_AI_USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// The tool's (registered) name.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// The call's id.
pub const GEN_AI_TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// The call's arguments as JSON, redacted; only under [`CONTENT_TARGET`].
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// The call's result as JSON, redacted; only under [`CONTENT_TARGET`].
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// What went wrong: the provider error's kind, or the tool error's code.
pub const ERROR_TYPE: &str = "error.type";

/// `gen_ai.operation.name` of a provider turn.
pub const OPERATION_CHAT: &str = "chat";
/// `gen_ai.operation.name` of a tool dispatch.
pub const OPERATION_EXECUTE_TOOL: &str = "execute_tool";

/// The `tracing` target whose `TRACE` level opts in to tool arguments and results on spans.
pub const CONTENT_TARGET: &str = "prism::gen_ai::content";
