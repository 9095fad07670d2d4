//! The replay state Gemini wants back: thought signatures exactly where they were.
//!
//! Gemini 3 signs its reasoning: a `thoughtSignature` rides on the first function call of a step,
//! on the last text part, or on a thought part, and a turn that does not send each one back in
//! its place is refused. A call's signature is kept on the [`ToolCall`]
//! (`{"thoughtSignature": …}`, plus `"syntheticId": true` when the id was made up here because
//! Gemini sent none). The message keeps the order of its parts, thoughts included:
//! `{"parts": [{"text", "thought"?, "thoughtSignature"?}, {"functionCall": <index of the call>}]}`.
//! Streamed text arrives in many parts; consecutive parts of one kind are joined until one
//! carries a signature, which is how Gemini itself writes the whole response.

use serde_json::{Map, Value, json};

use crate::call::{ReplayState, ToolCall};

/// The name this format writes into the replay state it keeps.
pub(super) const FORMAT: &str = "gemini";

const SIGNATURE: &str = "thoughtSignature";
const SYNTHETIC_ID: &str = "syntheticId";

/// One part of a model message, as kept for replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Segment {
    /// Answer text or thought text, with the signature that closed it.
    Text {
        text: String,
        thought: bool,
        signature: Option<String>,
    },
    /// The call with this index in the message's calls.
    Call(usize),
}

/// The parts of a model message in order, as they arrive.
#[derive(Debug, Default)]
pub(super) struct PartLog {
    segments: Vec<Segment>,
    /// True once a thought or a signature arrived: only then does the message need replay.
    needs_replay: bool,
}

impl PartLog {
    /// Text (or thought text) and the signature on its part.
    pub(super) fn text(&mut self, text: &str, thought: bool, signature: Option<&str>) {
        if text.is_empty() && signature.is_none() {
            return;
        }
        self.needs_replay |= thought || signature.is_some();
        if let Some(Segment::Text {
            text: open,
            thought: open_thought,
            signature: open_signature @ None,
        }) = self.segments.last_mut()
            && *open_thought == thought
        {
            open.push_str(text);
            *open_signature = signature.map(str::to_owned);
            return;
        }
        self.segments.push(Segment::Text {
            text: text.to_owned(),
            thought,
            signature: signature.map(str::to_owned),
        });
    }

    /// The call with this index.
    pub(super) fn call(&mut self, index: usize) {
        self.segments.push(Segment::Call(index));
    }

    /// The message's replay state, when it has anything to send back.
    pub(super) fn replay(&self) -> Option<ReplayState> {
        if !self.needs_replay {
            return None;
        }
        let parts = self.segments.iter().map(segment_json).collect();
        Some(ReplayState::new(
            FORMAT,
            json!({ "parts": Value::Array(parts) }),
        ))
    }
}

fn segment_json(segment: &Segment) -> Value {
    match segment {
        Segment::Call(index) => json!({ "functionCall": index }),
        Segment::Text {
            text,
            thought,
            signature,
        } => {
            let mut part = Map::new();
            part.insert("text".into(), Value::from(text.as_str()));
            if *thought {
                part.insert("thought".into(), Value::Bool(true));
            }
            if let Some(signature) = signature {
                part.insert(SIGNATURE.into(), Value::from(signature.as_str()));
            }
            Value::Object(part)
        }
    }
}

/// A call's replay state: its signature, and whether its id was made up here.
pub(super) fn call_replay(signature: Option<&str>, synthetic_id: bool) -> Option<ReplayState> {
    if signature.is_none() && !synthetic_id {
        return None;
    }
    let mut data = Map::new();
    if let Some(signature) = signature {
        data.insert(SIGNATURE.into(), Value::from(signature));
    }
    if synthetic_id {
        data.insert(SYNTHETIC_ID.into(), Value::Bool(true));
    }
    Some(ReplayState::new(FORMAT, Value::Object(data)))
}

fn call_data(call: &ToolCall) -> Option<&Value> {
    call.replay.as_deref()?.data_for(FORMAT)
}

/// The signature Gemini put on this call, when it was Gemini's.
pub(super) fn call_signature(call: &ToolCall) -> Option<&str> {
    call_data(call)?.get(SIGNATURE)?.as_str()
}

/// True when the call's id was made up by this format (Gemini is then not sent it back).
pub(super) fn has_synthetic_id(call: &ToolCall) -> bool {
    call_data(call)
        .and_then(|data| data.get(SYNTHETIC_ID))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The parts kept on a message's replay state, or `None` when it holds none of this format's
/// (or its shape is not this format's).
pub(super) fn message_segments(replay: Option<&ReplayState>) -> Option<Vec<Segment>> {
    let parts = replay?.data_for(FORMAT)?.get("parts")?.as_array()?;
    parts
        .iter()
        .map(|part| {
            if let Some(index) = part.get("functionCall") {
                return Some(Segment::Call(usize::try_from(index.as_u64()?).ok()?));
            }
            Some(Segment::Text {
                text: part.get("text")?.as_str()?.to_owned(),
                thought: part
                    .get("thought")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                signature: part
                    .get(SIGNATURE)
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_text_joins_until_a_signature_closes_it() {
        let mut log = PartLog::default();
        log.text("thinking ", true, None);
        log.text("more", true, Some("t1"));
        log.text("There are", false, None);
        log.text(" 3.", false, None);
        log.text("", false, Some("s1"));
        log.call(0);
        let replay = log.replay().unwrap();
        assert_eq!(
            replay.data,
            json!({"parts": [
                {"text": "thinking more", "thought": true, "thoughtSignature": "t1"},
                {"text": "There are 3.", "thoughtSignature": "s1"},
                {"functionCall": 0}
            ]})
        );
        let segments = message_segments(Some(&replay)).unwrap();
        assert_eq!(segments.len(), 3);
        assert_eq!(segments[2], Segment::Call(0));
    }

    #[test]
    fn plain_text_needs_no_replay() {
        let mut log = PartLog::default();
        log.text("hello", false, None);
        log.call(0);
        assert_eq!(log.replay(), None);
        assert_eq!(call_replay(None, false), None);
    }
}
