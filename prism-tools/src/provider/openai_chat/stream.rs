//! The stream decoder: `chat.completion.chunk` events in, [`ProviderEvent`]s out, until
//! `data: [DONE]`.
//!
//! Calls are keyed by their `index` (a fragment under a known index but with another id begins
//! a new call). A call is announced once its name is known (some servers send the name after the
//! id), with the argument text that arrived before; it is finished when the choice reports a
//! `finish_reason` or the stream says `[DONE]`, so servers that send a call's pieces out of order
//! or repeat its id on every chunk still give one whole call. Only the first choice is decoded:
//! requests never ask for more than one.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::decoded::{finish_call, message_replay, stop_reason, synthetic_call_id, usage};
use super::errors::{provider_error, unreadable};
use super::wire_types::{Arguments, Chunk, Delta, ToolCallPart};
use crate::call::{CallId, ToolCall};
use crate::provider::wire::{SseEvent, StreamDecoder, ToolTable};
use crate::run::{ProviderError, ProviderErrorKind, ProviderEvent, ProviderResponse};

/// Decodes one streamed Chat Completions response.
pub(super) struct ChatStreamDecoder {
    tools: Arc<ToolTable>,
    response: ProviderResponse,
    announced: bool,
    calls: Vec<CallState>,
    /// The latest call of each wire index, and of each id the server sent: a fragment finds its
    /// call without scanning every earlier one.
    by_wire_index: HashMap<usize, usize>,
    by_wire_id: HashMap<String, usize>,
    refusal: String,
    reasoning: Option<(&'static str, String)>,
    finish_reason: Option<String>,
    stopped: bool,
    done: bool,
}

/// One call as its pieces arrive.
struct CallState {
    /// The server's id, or one made up when the call was announced without one.
    id: Option<String>,
    /// Whether `id` is the server's.
    wire_id: bool,
    name: String,
    arguments: String,
    started: bool,
    finished: bool,
}

impl ChatStreamDecoder {
    pub(super) fn new(tools: Arc<ToolTable>) -> Self {
        Self {
            tools,
            response: ProviderResponse::default(),
            announced: false,
            calls: Vec::new(),
            by_wire_index: HashMap::new(),
            by_wire_id: HashMap::new(),
            refusal: String::new(),
            reasoning: None,
            finish_reason: None,
            stopped: false,
            done: false,
        }
    }

    fn chunk(&mut self, chunk: Chunk<'_>, out: &mut Vec<ProviderEvent>) {
        if !self.announced && (chunk.id.is_some() || chunk.model.is_some()) {
            self.announced = true;
            self.response.id = chunk.id.map(Cow::into_owned);
            self.response.model = chunk.model.map(Cow::into_owned);
            out.push(ProviderEvent::ResponseStarted {
                id: self.response.id.clone(),
                model: self.response.model.clone(),
            });
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason.filter(|reason| !reason.is_empty()) {
                self.finish_reason = Some(reason.into_owned());
                self.stop(out);
            }
        }
        let wire_usage = chunk
            .usage
            .or_else(|| chunk.x_groq.and_then(|extra| extra.usage));
        if let Some(wire_usage) = wire_usage {
            let usage = usage(&wire_usage);
            self.response.usage = Some(usage);
            out.push(ProviderEvent::Usage { usage });
        }
    }

    fn delta(&mut self, delta: Delta<'_>, out: &mut Vec<ProviderEvent>) {
        if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
            self.text(text, out);
        }
        if let Some(text) = delta.refusal.filter(|text| !text.is_empty()) {
            self.refusal.push_str(&text);
            self.text(text, out);
        }
        for (field, text) in [
            ("reasoning_content", delta.reasoning_content.0),
            ("reasoning", delta.reasoning.0),
        ] {
            if let Some(text) = text {
                self.reasoning
                    .get_or_insert_with(|| (field, String::new()))
                    .1
                    .push_str(&text);
            }
        }
        for part in delta.tool_calls.into_iter().flatten() {
            self.call_part(part, out);
        }
    }

    fn text(&mut self, text: Cow<'_, str>, out: &mut Vec<ProviderEvent>) {
        self.response.text.push_str(&text);
        out.push(ProviderEvent::TextDelta {
            text: text.into_owned(),
        });
    }

    fn call_part(&mut self, part: ToolCallPart<'_>, out: &mut Vec<ProviderEvent>) {
        let id = part.id.filter(|id| !id.is_empty());
        let slot = self.slot_for(part.index, id.as_deref());
        let call = &mut self.calls[slot];
        call.finished = false;
        if !call.wire_id
            && let Some(id) = id
        {
            let id = id.into_owned();
            self.by_wire_id.insert(id.clone(), slot);
            call.id = Some(id);
            call.wire_id = true;
        }
        let mut fresh_arguments = None;
        if let Some(function) = part.function {
            // A name sent again whole (on every chunk) is the same name, not more of it.
            if let Some(name) = function.name.filter(|name| !name.is_empty())
                && call.name != name
            {
                call.name.push_str(&name);
            }
            fresh_arguments = match function.arguments {
                Some(Arguments::Text(text)) if text.is_empty() => None,
                Some(Arguments::Text(text)) => Some(text.into_owned()),
                Some(json @ Arguments::Json(_)) => Some(json.into_text()),
                None => None,
            };
        }
        if let Some(text) = &fresh_arguments {
            call.arguments.push_str(text);
        }
        if call.started {
            if let Some(delta) = fresh_arguments {
                out.push(ProviderEvent::ToolCallArgumentsDelta { index: slot, delta });
            }
        } else if !call.name.is_empty() {
            self.announce(slot, out);
        }
    }

    /// The call a fragment belongs to: by index (unless the fragment names another id than the
    /// server gave that call), else by id, else the latest; a new one when there is none.
    fn slot_for(&mut self, wire_index: Option<usize>, id: Option<&str>) -> usize {
        let found = match (wire_index, id) {
            (Some(index), _) => self.by_wire_index.get(&index).copied().filter(|&slot| {
                let call = &self.calls[slot];
                !call.wire_id || id.is_none_or(|id| call.id.as_deref() == Some(id))
            }),
            (None, Some(id)) => self.by_wire_id.get(id).copied(),
            (None, None) => self.calls.len().checked_sub(1),
        };
        found.unwrap_or_else(|| {
            let slot = self.calls.len();
            self.calls.push(CallState {
                id: None,
                wire_id: false,
                name: String::new(),
                arguments: String::new(),
                started: false,
                finished: false,
            });
            if let Some(index) = wire_index {
                self.by_wire_index.insert(index, slot);
            }
            slot
        })
    }

    fn call_id(&mut self, slot: usize) -> CallId {
        let response_id = self.response.id.as_deref();
        let call = &mut self.calls[slot];
        let id = call
            .id
            .get_or_insert_with(|| synthetic_call_id(response_id, slot));
        CallId::from(id.as_str())
    }

    fn announce(&mut self, slot: usize, out: &mut Vec<ProviderEvent>) {
        let id = self.call_id(slot);
        let call = &mut self.calls[slot];
        call.started = true;
        out.push(ProviderEvent::ToolCallStarted {
            index: slot,
            id,
            name: self.tools.registered_name(&call.name).to_owned(),
        });
        if !call.arguments.is_empty() {
            out.push(ProviderEvent::ToolCallArgumentsDelta {
                index: slot,
                delta: call.arguments.clone(),
            });
        }
    }

    /// Finishes every open call, in index order.
    fn finish_calls(&mut self, out: &mut Vec<ProviderEvent>) {
        for slot in 0..self.calls.len() {
            if self.calls[slot].finished {
                continue;
            }
            if !self.calls[slot].started {
                self.announce(slot, out);
            }
            let call = self.finished_call(slot);
            self.calls[slot].finished = true;
            self.keep(slot, call.clone());
            out.push(ProviderEvent::ToolCallDone { index: slot, call });
        }
    }

    /// Puts the finished call of `slot` in the response: in its place when it was finished
    /// before (a server that sent more of it after its `finish_reason`), else at the end.
    fn keep(&mut self, slot: usize, call: ToolCall) {
        match self.response.tool_calls.get_mut(slot) {
            Some(kept) => *kept = call,
            None => self.response.tool_calls.push(call),
        }
    }

    fn finished_call(&mut self, slot: usize) -> ToolCall {
        let id = self.call_id(slot);
        let call = &self.calls[slot];
        finish_call(&self.tools, id, &call.name, &call.arguments)
    }

    /// The choice finished (or the stream did without saying how): calls, replay state, stop.
    fn stop(&mut self, out: &mut Vec<ProviderEvent>) {
        self.finish_calls(out);
        let reasoning = self
            .reasoning
            .as_ref()
            .map(|(field, text)| (*field, text.as_str()));
        if let Some(state) = message_replay(&self.refusal, reasoning) {
            self.response.replay = Some(state.clone());
            out.push(ProviderEvent::Replay { state });
        }
        let reason = stop_reason(
            self.finish_reason.as_deref(),
            !self.calls.is_empty(),
            !self.refusal.is_empty(),
        );
        self.response.stop_reason = reason.clone();
        self.stopped = true;
        out.push(ProviderEvent::Stop { reason });
    }

    /// What was complete when the stream broke off: the text, the finished calls, and open
    /// calls whose argument text is already a whole JSON object.
    fn partial(mut self) -> ProviderResponse {
        for slot in 0..self.calls.len() {
            let call = &self.calls[slot];
            if call.finished || call.name.is_empty() {
                continue;
            }
            let whole = serde_json::from_str::<serde_json::Value>(&call.arguments)
                .is_ok_and(|value| value.is_object());
            if whole {
                let call = self.finished_call(slot);
                self.keep(slot, call);
            }
        }
        self.response
    }
}

impl StreamDecoder for ChatStreamDecoder {
    fn feed(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if event.event == Some("error") {
            // Not every compatible server wraps the error in JSON: plain text is the message.
            return Err(match serde_json::from_str::<serde_json::Value>(data) {
                Ok(body) => provider_error(body.get("error").unwrap_or(&body)),
                Err(_) if data.is_empty() => {
                    ProviderError::new("the provider sent an error event without a message")
                }
                Err(_) => provider_error(&serde_json::Value::from(data)),
            });
        }
        if data.is_empty() || self.done {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            if self.stopped {
                // Pieces that came after the finish reason reopened their calls.
                self.finish_calls(out);
            } else {
                self.stop(out);
            }
            return Ok(());
        }
        let chunk: Chunk<'_> =
            serde_json::from_str(data).map_err(|error| unreadable("a stream chunk", &error))?;
        if let Some(error) = &chunk.error {
            return Err(provider_error(error));
        }
        self.chunk(chunk, out);
        Ok(())
    }

    fn finish(
        self: Box<Self>,
        _out: &mut Vec<ProviderEvent>,
    ) -> Result<ProviderResponse, ProviderError> {
        if self.done {
            return Ok(self.response);
        }
        Err(ProviderError::with_kind(
            ProviderErrorKind::TruncatedStream,
            "the stream ended before `data: [DONE]`",
        )
        .with_partial(self.partial()))
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
