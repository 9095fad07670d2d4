//! [`Assembler`]: one assistant message built up from its content blocks, the state machine both
//! the stream decoder and the whole-response decoder drive, so the two cannot disagree.
//!
//! Text blocks become the response's text and tool-use blocks its calls; every block is also
//! remembered in order for the replay state (see the module docs of `anthropic` for its shape),
//! where thinking, redacted thinking and the server's own tool blocks are kept whole.

use std::borrow::Borrow;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::{ReplayState, ToolCall};
use crate::provider::wire::ToolTable;
use crate::run::{ProviderError, ProviderEvent, ProviderResponse, StopReason};

use super::FORMAT;
use super::block::{Block, ToolUse, append, finish_call, merge_delta, non_null};
use super::errors::invalid;
use super::usage::UsageParts;
use super::wire::{BlockDeltaWire, BlockHeadWire, MessageWire, UsageWire};

/// The replay entry key that records how many bytes of the message text a text block held.
pub(super) const TEXT_BYTES: &str = "text_bytes";

/// Builds one assistant message.
pub(super) struct Assembler<T> {
    tools: T,
    id: Option<String>,
    model: Option<String>,
    started: bool,
    /// Blocks in arrival order, with their wire index and whether they are still open.
    blocks: Vec<(usize, bool, Block)>,
    text: String,
    calls: Vec<(usize, ToolCall)>,
    next_call: usize,
    usage: UsageParts,
    stop_reason: Option<String>,
    stop_details: Option<Value>,
    container: Option<Value>,
    stopped: bool,
}

impl<T: Borrow<ToolTable>> Assembler<T> {
    pub fn new(tools: T) -> Self {
        Self {
            tools,
            id: None,
            model: None,
            started: false,
            blocks: Vec::new(),
            text: String::new(),
            calls: Vec::new(),
            next_call: 0,
            usage: UsageParts::default(),
            stop_reason: None,
            stop_details: None,
            container: None,
            stopped: false,
        }
    }

    /// `message_start`, or a whole response's message. A repeat of the open message's start is
    /// ignored; another message's start in the same stream is an error.
    pub fn start(
        &mut self,
        message: MessageWire<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if self.started {
            let id = message.id.as_deref();
            if id.is_none() || id == self.id.as_deref() {
                return Ok(());
            }
            return Err(self.fail(invalid(format!(
                "message `{}` started while message `{}` was still open",
                id.unwrap_or_default(),
                self.id.as_deref().unwrap_or_default()
            ))));
        }
        self.started = true;
        self.id = message.id.map(|id| id.into_owned());
        self.model = message.model.map(|model| model.into_owned());
        out.push(ProviderEvent::ResponseStarted {
            id: self.id.clone(),
            model: self.model.clone(),
        });
        // A message can arrive with its content already whole (programmatic tool calling).
        for (index, block) in message.content.iter().enumerate() {
            self.block_start(index, block, out)?;
            self.block_stop(index, out)?;
        }
        self.stop_fields(message.stop_reason, message.stop_details, message.container);
        if let Some(usage) = &message.usage {
            self.usage_report(usage, out);
        }
        Ok(())
    }

    /// `message_delta`: the stop reason and the usage so far.
    pub fn delta(
        &mut self,
        stop_reason: Option<std::borrow::Cow<'_, str>>,
        stop_details: Option<&RawValue>,
        container: Option<&RawValue>,
        usage: Option<&UsageWire>,
        out: &mut Vec<ProviderEvent>,
    ) {
        self.stop_fields(stop_reason, stop_details, container);
        if let Some(usage) = usage {
            self.usage_report(usage, out);
        }
    }

    fn stop_fields(
        &mut self,
        stop_reason: Option<std::borrow::Cow<'_, str>>,
        stop_details: Option<&RawValue>,
        container: Option<&RawValue>,
    ) {
        if let Some(reason) = stop_reason {
            self.stop_reason = Some(reason.into_owned());
        }
        if let Some(details) = stop_details.and_then(non_null) {
            self.stop_details = Some(details);
        }
        if let Some(container) = container.and_then(non_null) {
            self.container = Some(container);
        }
    }

    fn usage_report(&mut self, usage: &UsageWire, out: &mut Vec<ProviderEvent>) {
        self.usage.merge(usage);
        if let Some(usage) = self.usage.usage() {
            out.push(ProviderEvent::Usage { usage });
        }
    }

    /// `content_block_start`.
    pub fn block_start(
        &mut self,
        index: usize,
        raw: &RawValue,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if self.slot(index).is_some() {
            return Err(self.fail(invalid(format!("content block {index} started twice"))));
        }
        let head: BlockHeadWire<'_> = serde_json::from_str(raw.get())
            .map_err(|e| invalid(format!("content block {index}: {e}")))?;
        let mut value: Map<String, Value> = serde_json::from_str(raw.get())
            .map_err(|e| invalid(format!("content block {index}: {e}")))?;
        let block = match &*head.kind {
            "text" => {
                value.remove("type");
                value.remove("text");
                let text = head.text.unwrap_or_default();
                if !text.is_empty() {
                    self.text.push_str(&text);
                    out.push(ProviderEvent::TextDelta {
                        text: text.clone().into_owned(),
                    });
                }
                Block::Text {
                    bytes: text.len(),
                    extra: value,
                }
            }
            "tool_use" => {
                let (Some(id), Some(wire_name)) = (head.id, head.name) else {
                    return Err(self.fail(invalid(format!(
                        "tool_use block {index} has no id or no name"
                    ))));
                };
                for key in ["type", "id", "name"] {
                    value.remove(key);
                }
                let start_input = value.remove("input");
                let name = self.tools.borrow().registered_name(&wire_name).to_owned();
                let call_index = self.next_call;
                self.next_call += 1;
                out.push(ProviderEvent::ToolCallStarted {
                    index: call_index,
                    id: id.as_ref().into(),
                    name: name.clone(),
                });
                Block::ToolUse(Box::new(ToolUse {
                    id: id.into_owned(),
                    name,
                    call_index,
                    json: None,
                    start_input,
                    extra: value,
                }))
            }
            _ => Block::Kept { value, json: None },
        };
        self.blocks.push((index, true, block));
        Ok(())
    }

    /// `content_block_delta`.
    pub fn block_delta(
        &mut self,
        index: usize,
        raw: &RawValue,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let Some(slot) = self.slot(index).filter(|&slot| self.blocks[slot].1) else {
            return Err(self.fail(invalid(format!(
                "a delta for content block {index}, which is not open"
            ))));
        };
        let delta: BlockDeltaWire<'_> = serde_json::from_str(raw.get())
            .map_err(|e| invalid(format!("content block {index} delta: {e}")))?;
        let block = &mut self.blocks[slot].2;
        let mut misplaced = None;
        match (block, &*delta.kind) {
            (Block::Text { bytes, .. }, "text_delta") => {
                let text = delta.text.unwrap_or_default();
                if !text.is_empty() {
                    *bytes += text.len();
                    self.text.push_str(&text);
                    out.push(ProviderEvent::TextDelta {
                        text: text.into_owned(),
                    });
                }
            }
            (Block::ToolUse(call), "input_json_delta") => {
                let part = delta.partial_json.unwrap_or_default();
                call.json.get_or_insert_with(String::new).push_str(&part);
                if !part.is_empty() {
                    out.push(ProviderEvent::ToolCallArgumentsDelta {
                        index: call.call_index,
                        delta: part.into_owned(),
                    });
                }
            }
            (Block::Kept { json, .. }, "input_json_delta") => {
                json.get_or_insert_with(String::new)
                    .push_str(&delta.partial_json.unwrap_or_default());
            }
            (Block::Kept { value, .. }, "thinking_delta") => {
                append(value, "thinking", &delta.thinking.unwrap_or_default());
            }
            (Block::Kept { value, .. }, "signature_delta") => {
                append(value, "signature", &delta.signature.unwrap_or_default());
            }
            (Block::Text { extra: fields, .. } | Block::Kept { value: fields, .. }, _) => {
                merge_delta(fields, raw)
                    .map_err(|e| invalid(format!("content block {index} delta: {e}")))?;
            }
            (Block::ToolUse(_), kind) => misplaced = Some(kind.to_owned()),
        }
        match misplaced {
            Some(kind) => Err(self.fail(invalid(format!(
                "a `{kind}` delta for tool_use block {index}"
            )))),
            None => Ok(()),
        }
    }

    /// `content_block_stop`: a tool call is complete.
    pub fn block_stop(
        &mut self,
        index: usize,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let Some(slot) = self.slot(index).filter(|&slot| self.blocks[slot].1) else {
            return Err(self.fail(invalid(format!(
                "content block {index} stopped but is not open"
            ))));
        };
        self.close(slot, out);
        Ok(())
    }

    fn close(&mut self, slot: usize, out: &mut Vec<ProviderEvent>) {
        let (_, open, block) = &mut self.blocks[slot];
        *open = false;
        match block {
            Block::ToolUse(call) => {
                let index = call.call_index;
                let call = finish_call(self.tools.borrow(), call);
                out.push(ProviderEvent::ToolCallDone {
                    index,
                    call: call.clone(),
                });
                self.calls.push((index, call));
            }
            Block::Kept { value, json } => {
                if let Some(text) = json.take() {
                    // A server tool's input: not ours to judge; kept as sent when it parses.
                    let input = if text.trim().is_empty() {
                        Some(Value::Object(Map::new()))
                    } else {
                        serde_json::from_str(&text).ok()
                    };
                    if let Some(input) = input {
                        value.insert("input".into(), input);
                    }
                }
            }
            Block::Text { .. } => {}
        }
    }

    /// `message_stop`: blocks still open are closed as they are (a call cut by `max_tokens`
    /// becomes a call with `arguments_error`), then the replay state and the stop reason.
    pub fn stop(&mut self, out: &mut Vec<ProviderEvent>) {
        if self.stopped {
            return;
        }
        for slot in 0..self.blocks.len() {
            if self.blocks[slot].1 {
                self.close(slot, out);
            }
        }
        self.stopped = true;
        if let Some(state) = self.replay() {
            out.push(ProviderEvent::Replay { state });
        }
        out.push(ProviderEvent::Stop {
            reason: self.stop_reason(),
        });
    }

    /// The response, once stopped; otherwise a truncated-stream error with what was complete.
    pub fn finish(self) -> Result<ProviderResponse, ProviderError> {
        if self.stopped {
            let mut response = self.partial();
            response.replay = self.replay();
            response.stop_reason = self.stop_reason();
            return Ok(response);
        }
        let error = crate::run::ProviderError::with_kind(
            crate::run::ProviderErrorKind::TruncatedStream,
            "the stream ended before `message_stop`",
        );
        Err(self.fail(error))
    }

    /// `error` carrying what was complete (the fold of the events sent so far).
    pub fn fail(&self, error: ProviderError) -> ProviderError {
        if self.started {
            error.with_partial(self.partial())
        } else {
            error
        }
    }

    fn partial(&self) -> ProviderResponse {
        let mut calls = self.calls.clone();
        calls.sort_by_key(|(index, _)| *index);
        ProviderResponse {
            text: self.text.clone(),
            tool_calls: calls.into_iter().map(|(_, call)| call).collect(),
            stop_reason: StopReason::default(),
            usage: self.usage.usage(),
            replay: None,
            id: self.id.clone(),
            model: self.model.clone(),
        }
    }

    fn stop_reason(&self) -> StopReason {
        match self.stop_reason.as_deref() {
            None | Some("end_turn") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolCalls,
            // Both cut the answer for want of room.
            Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
            Some("pause_turn") => StopReason::Pause,
            Some("refusal") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_owned()),
        }
    }

    /// The blocks in order, text and calls by reference; `None` when plain text followed by
    /// plain calls says it all and nothing else needs to go back.
    fn replay(&self) -> Option<ReplayState> {
        let mut plain = self.container.is_none() && self.stop_details.is_none();
        let mut texts = 0;
        let mut after_call = false;
        let mut entries = Vec::with_capacity(self.blocks.len());
        for (_, _, block) in &self.blocks {
            let mut entry = Map::new();
            match block {
                Block::Text { bytes, extra } => {
                    texts += 1;
                    plain &= extra.is_empty() && !after_call && texts == 1;
                    entry.insert("type".into(), "text".into());
                    entry.insert(TEXT_BYTES.into(), (*bytes).into());
                    entry.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                Block::ToolUse(call) => {
                    after_call = true;
                    plain &= call.extra.is_empty();
                    entry.insert("type".into(), "tool_use".into());
                    entry.insert("id".into(), call.id.clone().into());
                    entry.extend(call.extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                Block::Kept { value, .. } => {
                    plain = false;
                    entry = value.clone();
                }
            }
            entries.push(Value::Object(entry));
        }
        if plain {
            return None;
        }
        let mut data = Map::new();
        data.insert("content".into(), Value::Array(entries));
        if let Some(container) = &self.container {
            data.insert("container".into(), container.clone());
        }
        if let Some(details) = &self.stop_details {
            data.insert("stop_details".into(), details.clone());
        }
        Some(ReplayState::new(FORMAT, Value::Object(data)))
    }

    fn slot(&self, index: usize) -> Option<usize> {
        self.blocks.iter().rposition(|(i, _, _)| *i == index)
    }
}
