//! A streamed Responses API answer, one server-sent event at a time.
//!
//! The stream announces each output item (`response.output_item.added`), streams a call's
//! argument text and a message's text in deltas, and finishes each item whole
//! (`response.output_item.done`); `response.completed` (or `.incomplete`) ends the response
//! with its usage, `response.failed` and `error` end it with an error. A call's name may be
//! missing from its `.done` item, so the one from `.added` is kept. A stream that stops before
//! its end marker is a truncated stream carrying the calls that were complete.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::output::{OutputItems, call_id_of, item_type};
use super::wire_types::{ResponseHead, WireError, failure, stop_reason};
use crate::provider::wire::{SseEvent, StreamDecoder, ToolTable};
use crate::run::{ProviderError, ProviderErrorKind, ProviderEvent, ProviderResponse, ResponseFold};

/// One event, with the fields any event we read may carry; the rest is skipped unread.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(default)]
    output_index: Option<usize>,
    #[serde(borrow, default)]
    item_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(borrow, default)]
    response: Option<ResponseHead<'a, IgnoredAny>>,
    #[serde(borrow, default)]
    error: Option<WireError<'a>>,
    #[serde(borrow, default)]
    code: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

/// Only the type, for events whose other fields have shapes we do not read.
#[derive(Deserialize)]
struct EventType<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
}

/// The event types this decoder reads; others are skipped.
const READ: &[&str] = &[
    "response.created",
    "response.in_progress",
    "response.queued",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_text.delta",
    "response.refusal.delta",
    "response.output_item.done",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
];

/// A call being streamed.
struct PendingCall {
    output_index: usize,
    item_id: Option<String>,
    call_id: String,
    name: String,
    arguments: String,
    /// The call's index in the response, once announced; `None` while it may still turn out to be
    /// a `parallel` wrapper, whose parts are announced when it is done.
    index: Option<usize>,
}

/// The decoder of one streamed response.
pub(super) struct Decoder {
    tools: Arc<ToolTable>,
    fold: ResponseFold,
    items: OutputItems,
    pending: Vec<PendingCall>,
    /// Output indexes of messages whose text came in deltas.
    texted: Vec<usize>,
    next_call: usize,
    started: bool,
    ended: bool,
    unreadable: usize,
    first_unreadable: Option<String>,
}

impl Decoder {
    pub fn new(tools: Arc<ToolTable>) -> Self {
        Self {
            tools,
            fold: ResponseFold::new(),
            items: OutputItems::default(),
            pending: Vec::new(),
            texted: Vec::new(),
            next_call: 0,
            started: false,
            ended: false,
            unreadable: 0,
            first_unreadable: None,
        }
    }

    fn emit(&mut self, out: &mut Vec<ProviderEvent>, event: ProviderEvent) {
        self.fold.push(event.clone());
        out.push(event);
    }

    fn pending_at(&mut self, output_index: Option<usize>, item_id: Option<&str>) -> Option<usize> {
        self.pending.iter().position(|call| {
            Some(call.output_index) == output_index
                || (item_id.is_some() && call.item_id.as_deref() == item_id)
        })
    }

    fn item_added(&mut self, output_index: usize, item: &Value, out: &mut Vec<ProviderEvent>) {
        if item_type(item) != "function_call" {
            return;
        }
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
        let mut call = PendingCall {
            output_index,
            item_id: item.get("id").and_then(Value::as_str).map(str::to_owned),
            call_id: call_id_of(item, output_index),
            name: text("name").to_owned(),
            arguments: text("arguments").to_owned(),
            index: None,
        };
        let may_be_wrapper =
            call.name == "parallel" && self.tools.by_wire_name("parallel").is_none();
        if !may_be_wrapper {
            let index = self.next_call;
            self.next_call += 1;
            call.index = Some(index);
            let name = self.tools.registered_name(&call.name).to_owned();
            let id = call.call_id.as_str().into();
            self.emit(out, ProviderEvent::ToolCallStarted { index, id, name });
        }
        self.pending.push(call);
    }

    fn arguments_delta(&mut self, event: &Event<'_>, out: &mut Vec<ProviderEvent>) {
        let (Some(slot), Some(delta)) = (
            self.pending_at(event.output_index, event.item_id.as_deref()),
            event.delta.as_deref(),
        ) else {
            return;
        };
        let call = &mut self.pending[slot];
        call.arguments.push_str(delta);
        if let Some(index) = call.index {
            let delta = delta.to_owned();
            self.emit(out, ProviderEvent::ToolCallArgumentsDelta { index, delta });
        }
    }

    fn item_done(&mut self, output_index: usize, mut item: Value, out: &mut Vec<ProviderEvent>) {
        // An item sent done twice is one item: its calls reach the run once.
        if self.items.contains(output_index) {
            return;
        }
        let mut announced = None;
        if item_type(&item) == "function_call"
            && let Some(slot) = self.pending_at(Some(output_index), None)
        {
            let call = self.pending.swap_remove(slot);
            announced = call.index;
            fill_missing(&mut item, "name", call.name);
            fill_missing(&mut item, "call_id", call.call_id);
            fill_missing(&mut item, "arguments", call.arguments);
            if let Some(id) = call.item_id {
                fill_missing(&mut item, "id", id);
            }
        }
        let parts = self.items.take(output_index, item, &self.tools);
        if parts.is_message && !self.texted.contains(&output_index) && !parts.text.is_empty() {
            self.emit(out, ProviderEvent::TextDelta { text: parts.text });
        }
        match (announced, parts.calls.len()) {
            (Some(index), 1) => {
                let call = parts.calls.into_iter().next().expect("one call");
                self.emit(out, ProviderEvent::ToolCallDone { index, call });
            }
            _ => {
                for call in parts.calls {
                    let index = self.next_call;
                    self.next_call += 1;
                    let (id, name) = (call.id.clone(), call.name.clone());
                    self.emit(out, ProviderEvent::ToolCallStarted { index, id, name });
                    if call.arguments_error.is_none() {
                        let delta = call.arguments.to_string();
                        self.emit(out, ProviderEvent::ToolCallArgumentsDelta { index, delta });
                    }
                    self.emit(out, ProviderEvent::ToolCallDone { index, call });
                }
            }
        }
    }

    fn ended_with(
        &mut self,
        head: &ResponseHead<'_, IgnoredAny>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        self.ended = true;
        if let Some(error) = failure(head) {
            return Err(self.with_partial(error));
        }
        // A call whose item was never said to be done is finished with what its events said:
        // the model made it, and it must reach the run.
        let mut open = std::mem::take(&mut self.pending);
        open.sort_by_key(|call| call.output_index);
        for call in open {
            let output_index = call.output_index;
            self.pending.push(call);
            self.item_done(output_index, json!({"type": "function_call"}), out);
        }
        if let Some(state) = self.items.replay() {
            self.emit(out, ProviderEvent::Replay { state });
        }
        if let Some(usage) = &head.usage {
            self.emit(
                out,
                ProviderEvent::Usage {
                    usage: usage.to_usage(),
                },
            );
        }
        let reason = stop_reason(
            head.status.as_deref(),
            head.incomplete_details
                .as_ref()
                .and_then(|details| details.reason.as_deref()),
            &self.items.summary,
        );
        self.emit(out, ProviderEvent::Stop { reason });
        Ok(())
    }

    /// `error` with what was complete so far, when anything was.
    fn with_partial(&self, error: ProviderError) -> ProviderError {
        let partial = self.fold.clone().finish();
        if partial == ProviderResponse::default() {
            error
        } else {
            error.with_partial(partial)
        }
    }

    fn unreadable_note(&self) -> String {
        match &self.first_unreadable {
            Some(first) => format!(
                "; {} event(s) could not be read, the first: {first}",
                self.unreadable
            ),
            None => String::new(),
        }
    }
}

/// Sets `key` on a finished item from what its `.added` event and deltas said, when the item
/// lacks it.
fn fill_missing(item: &mut Value, key: &str, value: String) {
    let Value::Object(map) = item else { return };
    let missing = match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(_) => false,
    };
    if missing && !value.is_empty() {
        map.insert(key.to_owned(), Value::String(value));
    }
}

impl StreamDecoder for Decoder {
    fn feed(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let event: Event<'_> = match serde_json::from_str(data) {
            Ok(event) => event,
            Err(error) => {
                // An event of a type we do not read may carry fields of other shapes.
                let ignored = serde_json::from_str::<EventType<'_>>(data)
                    .is_ok_and(|event| !READ.contains(&event.kind.as_ref()));
                if !ignored {
                    self.unreadable += 1;
                    self.first_unreadable
                        .get_or_insert_with(|| error.to_string());
                }
                return Ok(());
            }
        };
        if self.ended {
            if event.kind == "response.created" {
                return Err(ProviderError::with_kind(
                    ProviderErrorKind::InvalidResponse,
                    "a second response began after the first one ended",
                ));
            }
            return Ok(());
        }
        match event.kind.as_ref() {
            "response.created" | "response.in_progress" | "response.queued" if !self.started => {
                self.started = true;
                let head = event.response.as_ref();
                let id = head.and_then(|head| head.id.as_deref()).map(str::to_owned);
                let model = head
                    .and_then(|head| head.model.as_deref())
                    .map(str::to_owned);
                self.emit(out, ProviderEvent::ResponseStarted { id, model });
            }
            "response.output_item.added" => {
                if let (Some(index), Some(item)) = (event.output_index, &event.item) {
                    self.item_added(index, item, out);
                }
            }
            "response.function_call_arguments.delta" => self.arguments_delta(&event, out),
            "response.function_call_arguments.done" => {
                let slot = self.pending_at(event.output_index, event.item_id.as_deref());
                if let (Some(slot), Some(arguments)) = (slot, event.arguments) {
                    self.pending[slot].arguments = arguments.into_owned();
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = event.delta {
                    if let Some(index) = event.output_index
                        && !self.texted.contains(&index)
                    {
                        self.texted.push(index);
                    }
                    let text = delta.into_owned();
                    self.emit(out, ProviderEvent::TextDelta { text });
                }
            }
            "response.output_item.done" => {
                if let (Some(index), Some(item)) = (event.output_index, event.item) {
                    self.item_done(index, item, out);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let Some(head) = &event.response else {
                    return Err(ProviderError::with_kind(
                        ProviderErrorKind::InvalidResponse,
                        format!("`{}` carries no response", event.kind),
                    ));
                };
                return self.ended_with(head, out);
            }
            "error" => {
                let error = match &event.error {
                    Some(error) => error.to_error(),
                    None => WireError {
                        kind: None,
                        code: event.code.clone(),
                        message: event.message.clone(),
                    }
                    .to_error(),
                };
                self.ended = true;
                return Err(self.with_partial(error));
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(
        mut self: Box<Self>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<ProviderResponse, ProviderError> {
        if self.ended && self.unreadable == 0 {
            return Ok(self.fold.finish());
        }
        let (kind, what) = if self.ended {
            (ProviderErrorKind::InvalidResponse, "the stream ended")
        } else {
            if let Some(state) = self.items.replay() {
                self.emit(out, ProviderEvent::Replay { state });
            }
            (
                ProviderErrorKind::TruncatedStream,
                "the stream ended before `response.completed`",
            )
        };
        let error = ProviderError::with_kind(kind, format!("{what}{}", self.unreadable_note()));
        Err(self.with_partial(error))
    }

    fn is_done(&self) -> bool {
        self.ended
    }
}
