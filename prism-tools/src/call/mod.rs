//! What the model asks for ([`ToolCall`]) and what it gets back ([`ToolResult`]).
//!
//! Every call id that enters the dispatcher leaves it with exactly one [`ToolResult`]. The
//! result's [`ToolOutcome`] is an enum rather than two optional fields, so "a value and an error
//! at once" cannot be represented. On the wire a result has the familiar shape
//! `{"toolCallId", "name", "value"}` or `{"toolCallId", "name", "error": {code, message, reason?}}`.
//!
//! One file per part: the call ([`ToolCall`], [`CallId`]), the codes and error a refused or failed
//! call carries ([`BlockReason`], [`ErrorCode`], [`ErrorInfo`]), the result with its wire
//! shape ([`ToolResult`], [`ToolOutcome`]), what a tool body returns
//! ([`ToolOutput`], [`IntoToolOutput`]), the content blocks it may hold ([`ContentBlock`]) and how events and ledger rows record them without their binary data
//! ([`ContentRecord`]), and the opaque provider state a call carries back to its provider
//! ([`ReplayState`]).

mod content;
mod content_record;
mod error_info;
mod output;
mod replay;
mod result;
mod tool_call;

pub use content::{ContentBlock, ContentSummary, EmbeddedResource};
pub use content_record::{ContentRecord, OutputRecord};
pub use error_info::{BlockReason, ErrorCode, ErrorInfo};
pub(crate) use output::{Blocks, blocks};
pub use output::{IntoToolOutput, ToolOutput};
pub use replay::ReplayState;
pub(crate) use result::{ResultRef, WrittenResult, optional_result};
pub use result::{ToolOutcome, ToolResult};
pub use tool_call::{CallId, JsonObject, ToolCall};
pub(crate) use tool_call::{json_kind, shown_call_id};
