//! Anthropic's Messages API as a [`WireFormat`]: [`Anthropic`].
//!
//! **Requests.** The instructions are `system`; the transcript becomes alternating user and
//! assistant turns (tool results are `tool_result` blocks of one user turn, in call order, with
//! `is_error` for a blocked or failed call); the tools are `{name, description, input_schema}`,
//! with `strict: true` for a strict tool; the tool choice is `auto`, `any`, `none` or one tool,
//! and forbidding parallel calls sets `disable_parallel_tool_use`. The API requires `max_tokens`:
//! without one in the [`ModelSettings`], [`DEFAULT_MAX_TOKENS`] is sent and a note says so.
//! Tool output is JSON text; content blocks go as text, `image` (base64 JPEG, PNG, GIF, WebP)
//! and `document` blocks (embedded text and PDF resources); audio and other binary resources
//! are left out and a resource link is sent as text, each with an [`EncodeNote`].
//!
//! **Responses.** Text blocks make the response text and `tool_use` blocks its calls. Every
//! block is also kept, in order, in the message's [`ReplayState`](crate::call::ReplayState)
//! (format `"anthropic"`): `{"content": [...], "container"?: …, "stop_details"?: …}`. Thinking,
//! redacted thinking, the server's own tool blocks (`server_tool_use`, `*_tool_result`,
//! compaction…) are kept whole; text and `tool_use` blocks are kept as references
//! (`{"type": "text", "text_bytes": n, …}`, `{"type": "tool_use", "id", …}`, with their other
//! fields such as `citations` or `caller`), so the text and arguments live only on the message
//! and its calls. Server tool calls are never dispatched: they go back as they came. A message of
//! plain text and plain calls has no replay state. `stop_details` (a refusal's category and
//! explanation) is kept for the host to read and is not sent back.
//!
//! Stop reasons: `end_turn`, `tool_use`, `max_tokens` (and `model_context_window_exceeded`, which
//! also cuts the answer), `pause_turn`, `refusal`; any other (`stop_sequence`) is kept as
//! [`StopReason::Other`](crate::run::StopReason::Other). Usage counts cache reads and cache
//! writes in `input_tokens`, cache reads again as cached tokens, and thinking tokens as reasoning.
//!
//! ```
//! use std::sync::Arc;
//! use prism::provider::anthropic::Anthropic;
//! use prism::provider::wire::{PreparedTool, ToolTable, WireFormat};
//! use serde_json::json;
//!
//! let tools = ToolTable::new(vec![
//!     PreparedTool::new("billing.refund", json!({"type": "object"})).with_wire_name("billing_refund"),
//! ])
//! .unwrap();
//! let body = br#"{"type": "message", "id": "msg_1", "model": "claude", "role": "assistant",
//!     "content": [{"type": "tool_use", "id": "toolu_1", "name": "billing_refund", "input": {"order": 7}}],
//!     "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}"#;
//! let response = Anthropic.decode_response(body, &tools).unwrap();
//! assert_eq!(response.tool_calls[0].name, "billing.refund");
//! assert_eq!(response.tool_calls[0].arguments, json!({"order": 7}));
//! ```

mod assembler;
mod assistant;
mod block;
mod errors;
mod messages;
mod request;
mod response;
mod stream;
mod tool_result;
mod usage;
mod wire;

use std::sync::Arc;

use crate::provider::wire::{
    EncodeError, EncodedRequest, ModelSettings, StreamDecoder, ToolTable, WireFormat,
};
use crate::run::{ProviderError, ProviderRequest, ProviderResponse};

#[cfg(doc)]
use crate::provider::wire::EncodeNote;

pub use request::DEFAULT_MAX_TOKENS;

/// The format's name, written into the replay state it keeps.
const FORMAT: &str = "anthropic";

/// Anthropic's Messages API.
#[derive(Clone, Copy, Debug, Default)]
pub struct Anthropic;

impl WireFormat for Anthropic {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn encode_request(
        &self,
        request: &ProviderRequest<'_>,
        tools: &ToolTable,
        settings: &ModelSettings,
    ) -> Result<EncodedRequest, EncodeError> {
        request::encode_request(request, tools, settings)
    }

    fn decode_response(
        &self,
        body: &[u8],
        tools: &ToolTable,
    ) -> Result<ProviderResponse, ProviderError> {
        response::decode_response(body, tools)
    }

    fn stream_decoder(&self, tools: Arc<ToolTable>) -> Box<dyn StreamDecoder> {
        Box::new(stream::AnthropicStream::new(tools))
    }
}
