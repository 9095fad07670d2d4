//! [`AnthropicStream`]: the Messages API's server-sent events, decoded one at a time.
//!
//! The event's own `type` field decides (the SSE `event:` name repeats it and is not needed).
//! `message_stop` is the end marker: a stream that ends without it is truncated. A repeated
//! `message_start` for the open message is ignored; another message's start is an error, so two
//! spliced responses never merge into one.

use std::sync::Arc;

use crate::provider::wire::{SseEvent, StreamDecoder, ToolTable};
use crate::run::{ProviderError, ProviderEvent, ProviderResponse};

use super::assembler::Assembler;
use super::errors::{invalid, provider_error};
use super::wire::{Event, MessageDeltaWire, MessageWire};

/// Decodes one streamed response.
pub(super) struct AnthropicStream {
    assembler: Assembler<Arc<ToolTable>>,
    stopped: bool,
}

impl AnthropicStream {
    pub fn new(tools: Arc<ToolTable>) -> Self {
        Self {
            assembler: Assembler::new(tools),
            stopped: false,
        }
    }

    fn event(
        &mut self,
        event: Event<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let index = || {
            event
                .index
                .ok_or_else(|| invalid(format!("`{}` without an index", event.kind)))
        };
        match &*event.kind {
            "message_start" => {
                let raw = event
                    .message
                    .ok_or_else(|| invalid("`message_start` without a message"))?;
                let message: MessageWire<'_> = serde_json::from_str(raw.get())
                    .map_err(|e| invalid(format!("message_start: {e}")))?;
                self.assembler.start(message, out)
            }
            // After the end marker nothing but a repeated start (checked above) is read.
            _ if self.stopped => Ok(()),
            "content_block_start" => {
                let raw = event
                    .content_block
                    .ok_or_else(|| invalid("`content_block_start` without a content block"))?;
                self.assembler.block_start(index()?, raw, out)
            }
            "content_block_delta" => {
                let raw = event
                    .delta
                    .ok_or_else(|| invalid("`content_block_delta` without a delta"))?;
                self.assembler.block_delta(index()?, raw, out)
            }
            "content_block_stop" => self.assembler.block_stop(index()?, out),
            "message_delta" => {
                let delta = match event.delta {
                    Some(raw) => serde_json::from_str(raw.get())
                        .map_err(|e| invalid(format!("message_delta: {e}")))?,
                    None => MessageDeltaWire::default(),
                };
                self.assembler.delta(
                    delta.stop_reason,
                    delta.stop_details,
                    delta.container,
                    event.usage.as_ref(),
                    out,
                );
                Ok(())
            }
            "message_stop" => {
                self.stopped = true;
                self.assembler.stop(out);
                Ok(())
            }
            "error" => Err(match &event.error {
                Some(error) => provider_error(error),
                None => invalid("an `error` event without an error"),
            }),
            // `ping`, and event types added later.
            _ => Ok(()),
        }
    }
}

impl StreamDecoder for AnthropicStream {
    fn feed(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let result = serde_json::from_str::<Event<'_>>(data)
            .map_err(|e| invalid(format!("an event that is not JSON: {e}")))
            .and_then(|parsed| self.event(parsed, out));
        result.map_err(|error| self.assembler.fail(error))
    }

    fn finish(
        self: Box<Self>,
        _out: &mut Vec<ProviderEvent>,
    ) -> Result<ProviderResponse, ProviderError> {
        self.assembler.finish()
    }

    fn is_done(&self) -> bool {
        self.stopped
    }
}
