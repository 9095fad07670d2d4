//! An assistant row as the content Anthropic wants back: its text and `tool_use` blocks, and,
//! when the row carries this format's replay state, every other block (thinking, redacted
//! thinking, server tool use and results) unchanged and in its original place.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::call::{ReplayState, ToolCall, shown_call_id};
use crate::provider::wire::{EncodeNote, ToolTable};

use super::FORMAT;
use super::assembler::TEXT_BYTES;

/// The content blocks of one assistant row; `at` names the row in notes.
pub(super) fn encode_assistant(
    text: &str,
    calls: &[ToolCall],
    replay: Option<&ReplayState>,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Vec<Value> {
    let mut note = |note: String| {
        notes.push(EncodeNote {
            at: at.to_owned(),
            note,
        })
    };
    let entries = match replay {
        Some(state) => match state.data_for(FORMAT) {
            Some(data) => data.get("content").and_then(Value::as_array),
            None => {
                note(format!(
                    "replay state written by `{}` is not Anthropic's and was not sent",
                    state.format
                ));
                None
            }
        },
        None => None,
    };
    let mut blocks = Vec::with_capacity(1 + calls.len());
    let Some(entries) = entries else {
        if !text.is_empty() {
            blocks.push(json!({"type": "text", "text": text}));
        }
        for call in calls {
            blocks.push(tool_use(call, None, tools, &mut note));
        }
        return blocks;
    };

    let lengths: Vec<usize> = entries.iter().filter_map(text_bytes).collect();
    let split = splits_at(text, &lengths);
    if !split {
        note("the text differs from what the model wrote; it was sent as one text block".into());
    }
    let mut offset = 0;
    let mut text_placed = false;
    let mut sent: HashSet<&str> = HashSet::with_capacity(calls.len());
    for entry in entries {
        let Some(fields) = entry.as_object() else {
            blocks.push(entry.clone());
            continue;
        };
        match (
            fields.get("type").and_then(Value::as_str),
            text_bytes(entry),
        ) {
            (Some("text"), Some(bytes)) => {
                let part = if split {
                    offset += bytes;
                    &text[offset - bytes..offset]
                } else if text_placed {
                    ""
                } else {
                    text_placed = true;
                    text
                };
                // The API refuses empty text blocks.
                if part.is_empty() {
                    continue;
                }
                let mut block = Map::with_capacity(fields.len());
                block.insert("type".into(), "text".into());
                block.insert("text".into(), part.into());
                if split {
                    block.extend(
                        fields
                            .iter()
                            .filter(|(key, _)| !matches!(key.as_str(), "type" | TEXT_BYTES))
                            .map(|(k, v)| (k.clone(), v.clone())),
                    );
                }
                blocks.push(Value::Object(block));
            }
            (Some("tool_use"), _) => {
                let id = fields.get("id").and_then(Value::as_str).unwrap_or_default();
                match calls.iter().find(|call| call.id.as_str() == id) {
                    Some(call) => {
                        sent.insert(call.id.as_str());
                        blocks.push(tool_use(call, Some(fields), tools, &mut note));
                    }
                    None => note(format!(
                        "the model's call `{}` is no longer on the row and was not sent",
                        shown_call_id(id)
                    )),
                }
            }
            _ => blocks.push(entry.clone()),
        }
    }
    if !split && !text_placed && !text.is_empty() {
        let first_call = blocks
            .iter()
            .position(|block| block["type"] == "tool_use")
            .unwrap_or(blocks.len());
        blocks.insert(first_call, json!({"type": "text", "text": text}));
    }
    for call in calls.iter().filter(|call| !sent.contains(call.id.as_str())) {
        blocks.push(tool_use(call, None, tools, &mut note));
    }
    blocks
}

/// A replay entry's text length, when it stands for a text block.
fn text_bytes(entry: &Value) -> Option<usize> {
    let bytes = entry.get(TEXT_BYTES)?.as_u64()?;
    (entry.get("type")? == "text").then_some(bytes as usize)
}

/// Whether `text` splits into pieces of these byte lengths on character boundaries.
fn splits_at(text: &str, lengths: &[usize]) -> bool {
    let mut offset = 0usize;
    for &length in lengths {
        offset = offset.saturating_add(length);
        if offset > text.len() || !text.is_char_boundary(offset) {
            return false;
        }
    }
    offset == text.len()
}

/// A `tool_use` block: the name the model saw, the arguments, and the fields the replay entry
/// kept (such as `caller`).
fn tool_use(
    call: &ToolCall,
    kept: Option<&Map<String, Value>>,
    tools: &ToolTable,
    note: &mut impl FnMut(String),
) -> Value {
    let input = match &call.arguments {
        Value::Object(_) if call.arguments_error.is_none() => call.arguments.clone(),
        _ => {
            note(format!(
                "the arguments of call `{}` were not a JSON object; `{{}}` was sent",
                call.id
            ));
            Value::Object(Map::new())
        }
    };
    let mut block = Map::new();
    block.insert("type".into(), "tool_use".into());
    block.insert("id".into(), call.id.as_str().into());
    block.insert("name".into(), tools.wire_name(&call.name).into());
    block.insert("input".into(), input);
    if let Some(kept) = kept {
        block.extend(
            kept.iter()
                .filter(|(key, _)| !matches!(key.as_str(), "type" | "id" | "name" | "input"))
                .map(|(k, v)| (k.clone(), v.clone())),
        );
    }
    Value::Object(block)
}
