//! A tool call and its result, in detail.
//!
//! [`ToolCall`](crate::ToolCall) and [`ToolResult`](crate::ToolResult) are at the crate root.
//! Here is what they are made of: the outcome of a call ([`ToolOutcome`]: a value, a refusal or
//! an error), the error a model reads ([`ErrorInfo`], with an [`ErrorCode`] and, for a refusal, a
//! [`BlockReason`]), the content blocks a tool may return beside its value ([`ContentBlock`]),
//! the opaque provider state a call carries back ([`ReplayState`]), and the small types a call
//! carries.

pub use prism_tools::call::{
    BlockReason, CallId, ContentBlock, ContentRecord, ContentSummary, EmbeddedResource, ErrorCode,
    ErrorInfo, IntoToolOutput, JsonObject, OutputRecord, ReplayState, ToolOutcome, ToolOutput,
};
