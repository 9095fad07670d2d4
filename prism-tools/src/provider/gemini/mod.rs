//! Google Gemini `generateContent` and `streamGenerateContent?alt=sse` (the Gemini API and
//! Vertex AI take the same body).
//!
//! The model and the choice between a whole response and a stream are in the URL, not the body:
//! [`Gemini::request_path`] writes that part. Gemini 3 signs its reasoning and refuses a turn
//! whose signatures were not sent back in place; the signatures are kept as replay state on the
//! calls and the message (see `replay.rs`) and sent back exactly where they came from. Calls
//! Gemini sent without an id get one made from the response id and the call's index, and that
//! made-up id is never sent to Gemini.
//!
//! ```
//! use std::sync::Arc;
//! use prism::provider::gemini::Gemini;
//! use prism::provider::wire::{ModelSettings, ToolTable, WireFormat};
//!
//! let gemini = Gemini::new();
//! let body = br#"{"candidates": [{"content": {"role": "model", "parts": [
//!     {"functionCall": {"name": "weather", "args": {"location": "Paris"}}}]},
//!     "finishReason": "STOP"}], "responseId": "r1"}"#;
//! let response = gemini.decode_response(body, &ToolTable::default()).unwrap();
//! assert_eq!(response.tool_calls[0].id.as_str(), "gemini-r1-0");
//! assert_eq!(
//!     gemini.request_path(&ModelSettings::new("gemini-2.5-flash")),
//!     "models/gemini-2.5-flash:streamGenerateContent?alt=sse"
//! );
//! ```

mod decode;
mod encode;
mod partial_args;
mod reasons;
mod replay;
mod results;
mod stream;
mod wire_types;

use std::sync::Arc;

use crate::provider::wire::{
    EncodeError, EncodedRequest, ModelSettings, StreamDecoder, ToolTable, WireFormat,
};
use crate::run::{ProviderError, ProviderEvent, ProviderRequest, ProviderResponse};

use self::decode::TurnDecoder;
use self::stream::{GeminiStream, unreadable};
use self::wire_types::Chunk;

/// Which field of a function declaration carries the tool's schema. It must match the dialect
/// the schemas were lowered to: Gemini's OpenAPI subset goes in `parameters`, JSON Schema in
/// `parametersJsonSchema`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaField {
    /// `parameters`: the OpenAPI 3.0 subset (single `type`, `nullable`, string enums).
    #[default]
    Parameters,
    /// `parametersJsonSchema`: JSON Schema.
    ParametersJsonSchema,
}

impl SchemaField {
    /// The field's name in a function declaration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Parameters => "parameters",
            Self::ParametersJsonSchema => "parametersJsonSchema",
        }
    }
}

/// The Gemini wire format; its replay state is written as `"gemini"`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemini {
    schema_field: SchemaField,
}

impl Gemini {
    /// The format, sending schemas in `parameters`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends schemas in `field` instead (lower them to the matching dialect).
    pub fn with_schema_field(mut self, field: SchemaField) -> Self {
        self.schema_field = field;
        self
    }

    /// The schema field this format writes.
    pub fn schema_field(&self) -> SchemaField {
        self.schema_field
    }

    /// The end of the request URL after the API's base (`…/v1beta/` for the Gemini API,
    /// `…/publishers/google/` for Vertex AI): `models/{model}:generateContent`, or
    /// `models/{model}:streamGenerateContent?alt=sse` when the settings ask for a stream.
    pub fn request_path(&self, settings: &ModelSettings) -> String {
        if settings.stream {
            format!("models/{}:streamGenerateContent?alt=sse", settings.model)
        } else {
            format!("models/{}:generateContent", settings.model)
        }
    }
}

impl WireFormat for Gemini {
    fn name(&self) -> &'static str {
        replay::FORMAT
    }

    fn encode_request(
        &self,
        request: &ProviderRequest<'_>,
        tools: &ToolTable,
        settings: &ModelSettings,
    ) -> Result<EncodedRequest, EncodeError> {
        encode::encode_request(request, tools, settings, self.schema_field)
    }

    fn decode_response(
        &self,
        body: &[u8],
        tools: &ToolTable,
    ) -> Result<ProviderResponse, ProviderError> {
        let text = std::str::from_utf8(body).map_err(|error| {
            ProviderError::with_kind(
                crate::run::ProviderErrorKind::InvalidResponse,
                format!("the Gemini response is not UTF-8: {error}"),
            )
        })?;
        let mut turn = TurnDecoder::new();
        let mut events: Vec<ProviderEvent> = Vec::new();
        // `streamGenerateContent` without `alt=sse` answers with a JSON array of chunks.
        if text.trim_start().starts_with('[') {
            let chunks: Vec<Chunk<'_>> = serde_json::from_str(text).map_err(|e| unreadable(&e))?;
            for chunk in chunks {
                turn.chunk(tools, chunk, &mut events)?;
            }
        } else {
            let chunk: Chunk<'_> = serde_json::from_str(text).map_err(|e| unreadable(&e))?;
            turn.chunk(tools, chunk, &mut events)?;
        }
        turn.finish_whole(tools, &mut events)
    }

    fn stream_decoder(&self, tools: Arc<ToolTable>) -> Box<dyn StreamDecoder> {
        Box::new(GeminiStream::new(tools))
    }
}
