//! [`StreamDecoder`] for `streamGenerateContent?alt=sse`: every event is a response chunk.

use std::sync::Arc;

use crate::provider::wire::{SseEvent, StreamDecoder, ToolTable};
use crate::run::{ProviderError, ProviderErrorKind, ProviderEvent, ProviderResponse};

use super::decode::TurnDecoder;
use super::wire_types::Chunk;

/// Decodes one streamed Gemini response.
pub(super) struct GeminiStream {
    tools: Arc<ToolTable>,
    turn: TurnDecoder,
}

impl GeminiStream {
    pub(super) fn new(tools: Arc<ToolTable>) -> Self {
        Self {
            tools,
            turn: TurnDecoder::new(),
        }
    }
}

/// A chunk that is not JSON of the expected shape.
pub(super) fn unreadable(error: &serde_json::Error) -> ProviderError {
    ProviderError::with_kind(
        ProviderErrorKind::InvalidResponse,
        format!("a Gemini response chunk does not parse: {error}"),
    )
}

impl StreamDecoder for GeminiStream {
    fn feed(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_str(event.data).map_err(|e| unreadable(&e))?;
        self.turn.chunk(&self.tools, chunk, out)
    }

    fn finish(
        self: Box<Self>,
        _out: &mut Vec<ProviderEvent>,
    ) -> Result<ProviderResponse, ProviderError> {
        self.turn.finish_stream()
    }
}
