//! OpenAI Chat Completions (`POST /v1/chat/completions`), and the many servers that speak it:
//! Ollama, vLLM, llama.cpp, Groq, DeepSeek, Mistral, gateways.
//!
//! Requests carry the instructions as a `system` (or `developer`) message, the transcript as
//! `messages`, the turn's tools as functions under the names the model sees, the tool choice,
//! the parallel-calls switch, and ask for usage at the end of a stream. Responses decode whole
//! or streamed; the decoder accepts what compatible servers send differently from OpenAI (the
//! tool name in a later chunk than its id, no `arguments`, `arguments` as a JSON object, the id
//! repeated on every chunk or never sent, `stop` as the finish reason of a turn that called
//! tools, usage in a last chunk without choices or in Groq's `x_groq`).
//!
//! Chat Completions keeps no reasoning state of its own; the replay state this format writes
//! (`"openai-chat"`) holds a refusal, the reasoning text some servers return
//! (`reasoning_content`, `reasoning`) and want back, and the raw text of arguments that did not
//! parse, so each goes back to the model as it came.
//!
//! ```
//! use prism::provider::openai_chat::OpenAiChat;
//! use prism::provider::wire::{ToolTable, WireFormat};
//!
//! let body = br#"{"id": "chatcmpl-1", "model": "gpt-4o", "choices": [{"index": 0,
//!   "message": {"role": "assistant", "content": "Hi!"}, "finish_reason": "stop"}],
//!   "usage": {"prompt_tokens": 9, "completion_tokens": 2}}"#;
//! let response = OpenAiChat::new().decode_response(body, &ToolTable::default()).unwrap();
//! assert_eq!(response.text, "Hi!");
//! assert_eq!(response.usage.unwrap().input_tokens, 9);
//! ```

mod decoded;
mod errors;
mod messages;
mod request;
mod response;
mod stream;
mod wire_types;

use std::sync::Arc;

use crate::provider::wire::{
    EncodeError, EncodedRequest, ModelSettings, StreamDecoder, ToolTable, WireFormat,
};
use crate::run::{ProviderError, ProviderRequest, ProviderResponse};

/// The name this format writes into the replay state it keeps.
const FORMAT: &str = "openai-chat";

/// The Chat Completions wire format.
///
/// The defaults are OpenAI's: instructions as a `system` message, the token limit as
/// `max_completion_tokens`. Servers that only know the older field take
/// [`with_max_tokens_field`](Self::with_max_tokens_field); OpenAI's reasoning models prefer
/// [`with_developer_instructions`](Self::with_developer_instructions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenAiChat {
    developer_instructions: bool,
    legacy_max_tokens: bool,
}

impl OpenAiChat {
    /// The format with OpenAI's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends the instructions as a `developer` message instead of a `system` one.
    pub fn with_developer_instructions(mut self) -> Self {
        self.developer_instructions = true;
        self
    }

    /// Sends the token limit as `max_tokens`, for servers that do not know
    /// `max_completion_tokens`.
    pub fn with_max_tokens_field(mut self) -> Self {
        self.legacy_max_tokens = true;
        self
    }

    fn instructions_role(&self) -> &'static str {
        if self.developer_instructions {
            "developer"
        } else {
            "system"
        }
    }

    fn max_tokens_field(&self) -> &'static str {
        if self.legacy_max_tokens {
            "max_tokens"
        } else {
            "max_completion_tokens"
        }
    }
}

impl WireFormat for OpenAiChat {
    fn name(&self) -> &'static str {
        FORMAT
    }

    fn encode_request(
        &self,
        request: &ProviderRequest<'_>,
        tools: &ToolTable,
        settings: &ModelSettings,
    ) -> Result<EncodedRequest, EncodeError> {
        request::encode_request(self, request, tools, settings)
    }

    fn decode_response(
        &self,
        body: &[u8],
        tools: &ToolTable,
    ) -> Result<ProviderResponse, ProviderError> {
        response::decode_response(body, tools)
    }

    fn stream_decoder(&self, tools: Arc<ToolTable>) -> Box<dyn StreamDecoder> {
        Box::new(stream::ChatStreamDecoder::new(tools))
    }
}
