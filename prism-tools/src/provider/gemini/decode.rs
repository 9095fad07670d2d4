//! Decoding Gemini's answer, part by part: the state machine a stream and a whole response share.
//!
//! A whole response is one chunk of the same shape as a stream's chunks, so both go through
//! [`TurnDecoder`]. A function call arrives whole (`name` and `args`), or, from Vertex with
//! streamed arguments, as a named opening marked `willContinue`, pieces of `partialArgs`, and a
//! closing fragment without `willContinue`. A call is complete when that closing fragment
//! arrives, or when the candidate's `finishReason` says the turn is over.

use serde_json::Value;

use crate::call::{CallId, ToolCall};
use crate::provider::wire::ToolTable;
use crate::run::{
    ProviderError, ProviderErrorKind, ProviderEvent, ProviderResponse, ResponseFold, StopReason,
    Usage,
};

use super::partial_args::ArgsBuilder;
use super::reasons::{prompt_blocked, provider_error, stop_reason, usage};
use super::replay::{PartLog, call_replay};
use super::wire_types::{Chunk, FunctionCall, Part};

/// A call whose closing fragment has not arrived yet.
struct OpenCall {
    index: usize,
    id: CallId,
    synthetic_id: bool,
    name: String,
    signature: Option<String>,
    args: Option<Value>,
    pieces: Option<ArgsBuilder>,
}

/// One turn's decoding state.
pub(super) struct TurnDecoder {
    fold: ResponseFold,
    out_started: bool,
    response_id: Option<String>,
    parts: PartLog,
    calls: usize,
    open: Option<OpenCall>,
    usage: Option<Usage>,
    usage_sent: Option<Usage>,
    saw_answer: bool,
    stopped: bool,
}

impl TurnDecoder {
    pub(super) fn new() -> Self {
        Self {
            fold: ResponseFold::new(),
            out_started: false,
            response_id: None,
            parts: PartLog::default(),
            calls: 0,
            open: None,
            usage: None,
            usage_sent: None,
            saw_answer: false,
            stopped: false,
        }
    }

    fn emit(&mut self, event: ProviderEvent, out: &mut Vec<ProviderEvent>) {
        out.push(event.clone());
        self.fold.push(event);
    }

    /// Takes one chunk (or a whole response) in.
    pub(super) fn chunk(
        &mut self,
        tools: &ToolTable,
        chunk: Chunk<'_>,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if let Some(error) = &chunk.error {
            return Err(provider_error(error));
        }
        if !self.out_started {
            self.out_started = true;
            self.response_id = chunk.response_id.as_deref().map(str::to_owned);
            if self.response_id.is_some() || chunk.model_version.is_some() {
                let event = ProviderEvent::ResponseStarted {
                    id: self.response_id.clone(),
                    model: chunk.model_version.as_deref().map(str::to_owned),
                };
                self.emit(event, out);
            }
        }
        if let Some(metadata) = &chunk.usage_metadata
            && let Some(usage) = usage(metadata)
        {
            self.usage = Some(usage);
        }
        let blocked = chunk
            .prompt_feedback
            .as_ref()
            .and_then(|feedback| feedback.block_reason.as_deref())
            .map(prompt_blocked);
        let candidate = chunk
            .candidates
            .into_iter()
            .find(|candidate| candidate.index.unwrap_or(0) == 0);
        let mut finish = None;
        if let Some(candidate) = candidate {
            self.saw_answer = true;
            for part in candidate
                .content
                .into_iter()
                .flat_map(|content| content.parts)
            {
                self.part(tools, part, out);
            }
            finish = candidate
                .finish_reason
                .as_deref()
                .map(|reason| stop_reason(reason, self.calls > 0));
        }
        if let Some(reason) = finish.or(blocked) {
            self.saw_answer = true;
            self.stop(tools, reason, out);
        } else {
            self.send_usage(out);
        }
        Ok(())
    }

    fn part(&mut self, tools: &ToolTable, part: Part<'_>, out: &mut Vec<ProviderEvent>) {
        let signature = part.thought_signature.as_deref();
        if let Some(call) = part.function_call {
            self.function_call(tools, call, signature, out);
        } else if let Some(text) = part.text.as_deref() {
            if !part.thought && !text.is_empty() {
                let event = ProviderEvent::TextDelta {
                    text: text.to_owned(),
                };
                self.emit(event, out);
            }
            self.parts.text(text, part.thought, signature);
        } else if signature.is_some() {
            self.parts.text("", part.thought, signature);
        }
    }

    fn function_call(
        &mut self,
        tools: &ToolTable,
        call: FunctionCall<'_>,
        signature: Option<&str>,
        out: &mut Vec<ProviderEvent>,
    ) {
        if let Some(wire_name) = call.name.as_deref() {
            self.close_call(tools, out);
            let index = self.calls;
            self.calls += 1;
            let (id, synthetic_id) = match call.id.as_deref() {
                Some(id) if !id.is_empty() => (CallId::from(id), false),
                _ => (self.synthetic_id(index), true),
            };
            let name = tools.registered_name(wire_name).to_owned();
            self.parts.call(index);
            let event = ProviderEvent::ToolCallStarted {
                index,
                id: id.clone(),
                name: name.clone(),
            };
            self.emit(event, out);
            self.open = Some(OpenCall {
                index,
                id,
                synthetic_id,
                name,
                signature: None,
                args: None,
                pieces: None,
            });
        }
        // A fragment with no call open (a stray closing `{}`) carries nothing.
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if open.signature.is_none() {
            open.signature = signature.map(str::to_owned);
        }
        if call.args.is_some() {
            open.args = call.args;
        }
        if !call.partial_args.is_empty() {
            let pieces = open.pieces.get_or_insert_with(ArgsBuilder::default);
            for piece in &call.partial_args {
                pieces.apply(piece);
            }
        }
        if !call.will_continue {
            self.close_call(tools, out);
        }
    }

    /// Gemini's API (unlike Vertex) often sends no call id: the id is made from the response's
    /// id and the call's index, so a replayed stream names its calls the same way.
    fn synthetic_id(&self, index: usize) -> CallId {
        match &self.response_id {
            Some(response) => CallId::from(format!("gemini-{response}-{index}")),
            None => CallId::from(format!("gemini-call-{index}")),
        }
    }

    fn close_call(&mut self, tools: &ToolTable, out: &mut Vec<ProviderEvent>) {
        let Some(open) = self.open.take() else {
            return;
        };
        let arguments = match (open.pieces, open.args) {
            (Some(pieces), None) => pieces.finish(),
            (Some(pieces), Some(args)) => pieces.finish().and_then(|built| merge(args, built)),
            (None, args) => object_arguments(args),
        };
        let mut call = match arguments {
            Ok(mut arguments) => {
                tools.restore_arguments(&open.name, &mut arguments);
                let delta = arguments.to_string();
                let event = ProviderEvent::ToolCallArgumentsDelta {
                    index: open.index,
                    delta,
                };
                self.emit(event, out);
                ToolCall::new(open.id, open.name, arguments)
            }
            Err(error) => ToolCall::malformed(open.id, open.name, error),
        };
        if let Some(replay) = call_replay(open.signature.as_deref(), open.synthetic_id) {
            call = call.with_replay(replay);
        }
        let event = ProviderEvent::ToolCallDone {
            index: open.index,
            call,
        };
        self.emit(event, out);
    }

    fn send_usage(&mut self, out: &mut Vec<ProviderEvent>) {
        if let Some(usage) = self.usage
            && self.usage_sent != Some(usage)
        {
            self.usage_sent = Some(usage);
            self.emit(ProviderEvent::Usage { usage }, out);
        }
    }

    fn stop(&mut self, tools: &ToolTable, reason: StopReason, out: &mut Vec<ProviderEvent>) {
        self.close_call(tools, out);
        let reason = match reason {
            // The prompt feedback path does not know about calls; a finish reason already did.
            StopReason::EndTurn if self.calls > 0 => StopReason::ToolCalls,
            reason => reason,
        };
        if let Some(state) = self.parts.replay() {
            self.emit(ProviderEvent::Replay { state }, out);
        }
        self.send_usage(out);
        self.emit(ProviderEvent::Stop { reason }, out);
        self.stopped = true;
    }

    /// The end of a whole response: one without a finish reason ends where it ends.
    pub(super) fn finish_whole(
        mut self,
        tools: &ToolTable,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<ProviderResponse, ProviderError> {
        if !self.saw_answer {
            return Err(ProviderError::with_kind(
                ProviderErrorKind::InvalidResponse,
                "the Gemini response has no candidate and no prompt feedback",
            ));
        }
        if !self.stopped {
            self.stop(tools, StopReason::EndTurn, out);
        }
        Ok(self.fold.finish())
    }

    /// The end of a stream: Gemini sends no end marker, so a stream whose last candidate had no
    /// finish reason was cut, and only what was complete is kept.
    pub(super) fn finish_stream(self) -> Result<ProviderResponse, ProviderError> {
        if self.stopped {
            return Ok(self.fold.finish());
        }
        let replay = self.parts.replay();
        let mut partial = self.fold.finish();
        if replay.is_some() {
            partial.replay = replay;
        }
        Err(ProviderError::with_kind(
            ProviderErrorKind::TruncatedStream,
            "the Gemini stream ended before a finish reason",
        )
        .with_partial(partial))
    }
}

/// Whole `args` as a call's arguments: an object, nothing (no arguments), or JSON text of an
/// object (some proxies send text); anything else is the model's mistake to correct.
fn object_arguments(args: Option<Value>) -> Result<Value, String> {
    match args {
        None | Some(Value::Null) => Ok(Value::Object(Default::default())),
        Some(object @ Value::Object(_)) => Ok(object),
        Some(Value::String(text)) if text.trim().is_empty() => {
            Ok(Value::Object(Default::default()))
        }
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(object @ Value::Object(_)) => Ok(object),
            Ok(other) => Err(not_an_object(&other)),
            Err(error) => Err(error.to_string()),
        },
        Some(other) => Err(not_an_object(&other)),
    }
}

fn not_an_object(value: &Value) -> String {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    format!("the arguments are {kind}, not a JSON object")
}

/// Whole `args` sent beside streamed pieces: the pieces win where both speak.
fn merge(args: Value, built: Value) -> Result<Value, String> {
    let mut base = object_arguments(Some(args))?;
    if let (Value::Object(base), Value::Object(built)) = (&mut base, built) {
        base.extend(built);
    }
    Ok(base)
}
