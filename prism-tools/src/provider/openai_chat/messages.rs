//! The transcript as Chat Completions `messages`: instructions first, user text, assistant text
//! with its `tool_calls` (and the refusal or reasoning text it came with), and one `tool`
//! message per result.
//!
//! A `tool` message takes only text (a string or text parts: OpenAI's API reference allows no
//! image or audio part there) and has no error flag. So a result becomes text: the value as
//! JSON text, an error behind an `Error (code):` prefix, text blocks as they are, links and
//! text resources written out, and for images, audio and binary resources a line telling the
//! model what was left out, with an [`EncodeNote`]. One part is sent as a string, several as
//! text parts; untrusted output is fenced as data, as one string.
//!
//! DeepSeek's thinking mode refuses a turn whose earlier tool-calling messages lack their
//! `reasoning_content`, so reasoning text kept in the replay state goes back under the field
//! it came in.

use serde_json::{Map, Value, json};

use super::FORMAT;
use crate::call::{ContentBlock, ReplayState, ToolCall, ToolOutcome, ToolResult};
use crate::provider::untrusted::fence_untrusted;
use crate::provider::wire::{EncodeNote, ToolTable};
use crate::run::Message;

/// The `messages` array.
pub(super) fn encode_messages(
    instructions: Option<(&str, &str)>,
    transcript: &[Message],
    tools: &ToolTable,
    notes: &mut Vec<EncodeNote>,
) -> Vec<Value> {
    let mut messages = Vec::with_capacity(transcript.len() + 1);
    if let Some((role, text)) = instructions {
        messages.push(json!({ "role": role, "content": text }));
    }
    for (row, message) in transcript.iter().enumerate() {
        let at = format!("transcript/{row}");
        messages.push(match message {
            Message::User { content } => json!({ "role": "user", "content": content }),
            Message::Assistant {
                content,
                tool_calls,
                replay,
            } => assistant(content, tool_calls, replay.as_ref(), tools, &at, notes),
            Message::Tool { result } => json!({
                "role": "tool",
                "tool_call_id": result.tool_call_id.as_str(),
                "content": result_content(result, tools, &at, notes),
            }),
        });
    }
    messages
}

fn assistant(
    content: &str,
    calls: &[ToolCall],
    replay: Option<&ReplayState>,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let state = own_state(replay, at, notes).and_then(Value::as_object);
    let mut message = Map::new();
    message.insert("role".into(), Value::from("assistant"));
    let refusal = state
        .and_then(|state| state.get("refusal"))
        .and_then(Value::as_str)
        .filter(|refusal| content.ends_with(refusal));
    // The decoder appended the refusal to the text; it goes back in its own field.
    let text = refusal.map_or(content, |refusal| &content[..content.len() - refusal.len()]);
    let content = match text {
        "" if !calls.is_empty() => Value::Null,
        text => Value::from(text),
    };
    message.insert("content".into(), content);
    if let Some(refusal) = refusal {
        message.insert("refusal".into(), Value::from(refusal));
    }
    for field in ["reasoning_content", "reasoning"] {
        if let Some(text) = state.and_then(|state| state.get(field)) {
            message.insert(field.into(), text.clone());
        }
    }
    if !calls.is_empty() {
        let calls = calls
            .iter()
            .enumerate()
            .map(|(index, call)| tool_call(call, tools, &format!("{at}/tool_calls/{index}"), notes))
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(message)
}

fn tool_call(call: &ToolCall, tools: &ToolTable, at: &str, notes: &mut Vec<EncodeNote>) -> Value {
    let state = own_state(call.replay.as_deref(), at, notes);
    let arguments = match (
        &call.arguments_error,
        state.and_then(|s| s.get("arguments")),
    ) {
        // The model's own unparsable text goes back as it wrote it.
        (Some(_), Some(Value::String(text))) => text.clone(),
        (Some(_), _) => {
            notes.push(note(
                at,
                "the call's argument text did not parse and was not kept; sent `{}` instead",
            ));
            "{}".to_owned()
        }
        (None, _) => call.arguments.to_string(),
    };
    json!({
        "id": call.id.as_str(),
        "type": "function",
        "function": { "name": tools.wire_name(&call.name), "arguments": arguments },
    })
}

/// This format's replay data; another format's state is left out, with a note.
fn own_state<'a>(
    replay: Option<&'a ReplayState>,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Option<&'a Value> {
    let replay = replay?;
    let data = replay.data_for(FORMAT);
    if data.is_none() {
        notes.push(note(
            at,
            &format!(
                "replay state written by `{}` was not sent: it belongs to another format",
                replay.format
            ),
        ));
    }
    data
}

/// A result as the content of its `tool` message: one string, or a text part per block when
/// there are several (untrusted output is fenced as one string).
fn result_content(
    result: &ToolResult,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let mut parts: Vec<String> = Vec::with_capacity(1 + result.content().len());
    match &result.outcome {
        ToolOutcome::Value(Value::Null) if !result.content().is_empty() => {}
        ToolOutcome::Value(value) => parts.push(value.to_string()),
        ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => parts.push(format!(
            "Error ({}): {}",
            error.code,
            tools.to_wire_text(&error.message)
        )),
    }
    for (index, block) in result.content().iter().enumerate() {
        let at = format!("{at}/content/{index}");
        parts.push(block_text(block, &at, notes));
    }
    if result.is_untrusted() {
        return Value::from(fence_untrusted(&parts.join("\n\n")));
    }
    if parts.len() == 1 {
        return Value::from(parts.pop());
    }
    parts
        .into_iter()
        .map(|text| json!({ "type": "text", "text": text }))
        .collect()
}

fn block_text(block: &ContentBlock, at: &str, notes: &mut Vec<EncodeNote>) -> String {
    let left_out = |notes: &mut Vec<EncodeNote>| {
        let summary = block.summary().to_string();
        notes.push(note(
            at,
            &format!(
                "{summary} left out: Chat Completions takes only text in tool messages; \
                 the model is told it was there"
            ),
        ));
        format!("[{summary} left out: this API takes only text in tool results]")
    };
    match block {
        ContentBlock::Text { text } => text.clone(),
        ContentBlock::ResourceLink {
            uri,
            name,
            description,
            media_type,
        } => {
            let mut text = format!("[resource link] {name}: {uri}");
            if let Some(media_type) = media_type {
                text.push_str(&format!(" ({media_type})"));
            }
            if let Some(description) = description {
                text.push_str(&format!("\n{description}"));
            }
            text
        }
        ContentBlock::Resource { resource } => match &resource.text {
            Some(contents) => {
                let media_type = resource.media_type.as_deref().unwrap_or("text");
                format!("[resource {} ({media_type})]\n{contents}", resource.uri)
            }
            None => left_out(notes),
        },
        ContentBlock::Image { .. } | ContentBlock::Audio { .. } => left_out(notes),
    }
}

fn note(at: &str, text: &str) -> EncodeNote {
    EncodeNote {
        at: at.to_owned(),
        note: text.to_owned(),
    }
}
