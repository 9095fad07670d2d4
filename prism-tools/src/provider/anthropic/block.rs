//! [`Block`]: one content block while it streams in, how its deltas merge, and how a tool-use
//! block becomes a [`ToolCall`] once complete.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::{ToolCall, json_kind};
use crate::provider::wire::ToolTable;

/// One content block as it is being built.
pub(super) enum Block {
    /// Text, already appended to the response text; `extra` holds its other fields (citations).
    Text {
        bytes: usize,
        extra: Map<String, Value>,
    },
    /// A call of one of our tools.
    ToolUse(Box<ToolUse>),
    /// Anything else, kept whole: thinking, redacted thinking, server tool use and results.
    Kept {
        value: Map<String, Value>,
        json: Option<String>,
    },
}

pub(super) struct ToolUse {
    pub id: String,
    pub name: String,
    pub call_index: usize,
    pub json: Option<String>,
    pub start_input: Option<Value>,
    pub extra: Map<String, Value>,
}

/// The finished call: arguments parsed and restored, or `arguments_error` with the parser's
/// message. No argument text at all, for a tool without parameters, is `{}`.
pub(super) fn finish_call(tools: &ToolTable, call: &mut ToolUse) -> ToolCall {
    let parsed = match call.json.take() {
        // Deltas that said nothing leave the arguments the block started with.
        Some(text) if text.trim().is_empty() => Ok(call
            .start_input
            .take()
            .unwrap_or_else(|| Value::Object(Map::new()))),
        Some(text) => serde_json::from_str::<Value>(&text)
            .map_err(|e| format!("the arguments are not valid JSON: {e}")),
        None => Ok(call
            .start_input
            .take()
            .unwrap_or_else(|| Value::Object(Map::new()))),
    };
    match parsed {
        Ok(mut arguments @ Value::Object(_)) => {
            tools.restore_arguments(&call.name, &mut arguments);
            ToolCall::new(call.id.as_str(), call.name.as_str(), arguments)
        }
        Ok(other) => ToolCall::malformed(
            call.id.as_str(),
            call.name.as_str(),
            format!(
                "the arguments are not a JSON object but {}",
                json_kind(&other)
            ),
        ),
        Err(message) => ToolCall::malformed(call.id.as_str(), call.name.as_str(), message),
    }
}

pub(super) fn non_null(raw: &RawValue) -> Option<Value> {
    match serde_json::from_str(raw.get()) {
        Ok(Value::Null) | Err(_) => None,
        Ok(value) => Some(value),
    }
}

pub(super) fn append(fields: &mut Map<String, Value>, key: &str, text: &str) {
    match fields.get_mut(key) {
        Some(Value::String(existing)) => existing.push_str(text),
        _ => {
            fields.insert(key.to_owned(), Value::from(text));
        }
    }
}

/// A delta of a kind not followed closely: a citation is added to the block's citations; other
/// fields extend the block's text fields or replace its other fields (compaction's content).
pub(super) fn merge_delta(
    fields: &mut Map<String, Value>,
    raw: &RawValue,
) -> Result<(), serde_json::Error> {
    let delta: Map<String, Value> = serde_json::from_str(raw.get())?;
    for (key, value) in delta {
        match (key.as_str(), value) {
            ("type", _) => {}
            ("citation", citation) => match fields.get_mut("citations") {
                Some(Value::Array(list)) => list.push(citation),
                _ => {
                    fields.insert("citations".into(), Value::Array(vec![citation]));
                }
            },
            (_, Value::String(text)) => append(fields, &key, &text),
            (_, value) => {
                fields.insert(key, value);
            }
        }
    }
    Ok(())
}
