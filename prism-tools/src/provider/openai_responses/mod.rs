//! The OpenAI Responses API (`POST /v1/responses`) as a [`WireFormat`].
//!
//! One file per concept: the request body ([`request`](self) encodes instructions, the
//! transcript as input items, tools with `strict` always explicit, tool choice and settings),
//! tool results as `function_call_output` (text or content parts), the shapes both decoders read,
//! a response's output items (calls, text, replay state), the calls themselves (names, arguments,
//! the `parallel` wrapper), the whole-response decoder and the stream decoder.
//!
//! Replay state: the assistant message keeps every output item of the response, in order, under
//! `{"items": […]}`, and sends them back unchanged; each call keeps its `fc_…` item id (`{"id"}`),
//! and the parts of a `parallel` wrapper also their wrapper's call id and part index.

mod calls;
mod output;
mod request;
mod response;
mod stream;
mod tool_output;
mod wire_types;

use std::sync::Arc;

use crate::provider::wire::{
    EncodeError, EncodedRequest, ModelSettings, StreamDecoder, ToolTable, WireFormat,
};
use crate::run::{ProviderError, ProviderRequest, ProviderResponse};

/// The format's name, written into the replay state it keeps.
const NAME: &str = "openai-responses";

/// The OpenAI Responses API.
///
/// ```
/// use std::sync::Arc;
/// use prism::provider::openai_responses::OpenAiResponses;
/// use prism::provider::wire::{ModelSettings, PreparedTool, ToolTable, WireFormat};
/// use prism::{Message, ProviderRequest};
/// use prism::run::{ToolsMetadata, TurnMetadata};
/// use serde_json::json;
///
/// let tools = ToolTable::new(vec![
///     PreparedTool::new("billing.refund", json!({"type": "object"})).with_wire_name("billing_refund"),
/// ])
/// .unwrap();
/// let transcript = [Message::user("Refund order 7")];
/// let metadata = TurnMetadata {
///     session_id: "s".into(),
///     run_id: "r".into(),
///     turn: 1,
///     tools: ToolsMetadata::of_names(["billing.refund"]),
/// };
/// let request = ProviderRequest::new(&transcript, &[], &metadata).with_instructions(Some("Be brief."));
/// let body = OpenAiResponses
///     .encode_request(&request, &tools, &ModelSettings::new("gpt-5"))
///     .unwrap()
///     .body;
/// assert_eq!(body["instructions"], "Be brief.");
/// assert_eq!(body["tools"][0]["name"], "billing_refund");
/// assert_eq!(body["tools"][0]["strict"], false);
///
/// let answer = br#"{"id": "resp_1", "status": "completed", "output": [{"type": "function_call",
///     "id": "fc_1", "call_id": "call_1", "name": "billing_refund", "arguments": "{\"order\":7}"}]}"#;
/// let response = OpenAiResponses.decode_response(answer, &tools).unwrap();
/// assert_eq!(response.tool_calls[0].name, "billing.refund");
/// assert_eq!(response.tool_calls[0].arguments, json!({"order": 7}));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiResponses;

impl WireFormat for OpenAiResponses {
    fn name(&self) -> &'static str {
        NAME
    }

    fn encode_request(
        &self,
        request: &ProviderRequest<'_>,
        tools: &ToolTable,
        settings: &ModelSettings,
    ) -> Result<EncodedRequest, EncodeError> {
        request::encode(request, tools, settings)
    }

    fn decode_response(
        &self,
        body: &[u8],
        tools: &ToolTable,
    ) -> Result<ProviderResponse, ProviderError> {
        response::decode(body, tools)
    }

    fn stream_decoder(&self, tools: Arc<ToolTable>) -> Box<dyn StreamDecoder> {
        Box::new(stream::Decoder::new(tools))
    }
}
