//! The transcript as Messages API `messages`: user and assistant turns in alternation.
//!
//! Adjacent rows of one role are merged into one turn, as the API requires. Tool rows are user
//! content: the results that answer one assistant turn go together, as `tool_result` blocks in
//! the order of its calls, ahead of any user text in the same turn.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::call::ReplayState;
use crate::provider::wire::{EncodeNote, ToolTable};
use crate::run::Message;

use super::FORMAT;
use super::assistant::encode_assistant;
use super::tool_result::encode_result;

/// The encoded turns, and the code-execution container the latest assistant turn ran in.
pub(super) struct EncodedMessages {
    pub messages: Vec<Value>,
    pub container: Option<Value>,
}

pub(super) fn encode_messages(
    transcript: &[Message],
    tools: &ToolTable,
    notes: &mut Vec<EncodeNote>,
) -> EncodedMessages {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut call_order: HashMap<&str, usize> = HashMap::new();
    let mut container = None;
    let mut row = 0;
    while row < transcript.len() {
        let at = format!("transcript/{row}");
        match &transcript[row] {
            Message::User { content } => {
                if content.is_empty() {
                    notes.push(note(
                        &at,
                        "an empty user row was left out (the API refuses empty text)",
                    ));
                } else {
                    push(
                        &mut turns,
                        "user",
                        vec![json!({"type": "text", "text": content})],
                    );
                }
                row += 1;
            }
            Message::Assistant {
                content,
                tool_calls,
                replay,
            } => {
                call_order = tool_calls
                    .iter()
                    .enumerate()
                    .map(|(index, call)| (call.id.as_str(), index))
                    .collect();
                if let Some(found) = replay.as_ref().and_then(container_of) {
                    container = Some(found);
                }
                let blocks =
                    encode_assistant(content, tool_calls, replay.as_ref(), tools, &at, notes);
                if blocks.is_empty() {
                    notes.push(note(&at, "an empty assistant row was left out"));
                } else {
                    push(&mut turns, "assistant", blocks);
                }
                row += 1;
            }
            Message::Tool { .. } => {
                let end = transcript[row..]
                    .iter()
                    .position(|message| !matches!(message, Message::Tool { .. }))
                    .map_or(transcript.len(), |length| row + length);
                let mut results: Vec<(usize, usize)> = (row..end)
                    .map(|at| {
                        let result = transcript[at].as_tool_result().expect("a tool row");
                        let order = call_order
                            .get(result.tool_call_id.as_str())
                            .copied()
                            .unwrap_or(usize::MAX);
                        (order, at)
                    })
                    .collect();
                results.sort_by_key(|(order, _)| *order);
                let blocks = results
                    .into_iter()
                    .map(|(_, at)| {
                        let result = transcript[at].as_tool_result().expect("a tool row");
                        encode_result(result, tools, &format!("transcript/{at}"), notes)
                    })
                    .collect();
                push(&mut turns, "user", blocks);
                row = end;
            }
        }
    }
    let messages = turns
        .into_iter()
        .enumerate()
        .map(|(index, (role, mut blocks))| {
            if role == "user" && results_follow_text(&blocks) {
                blocks.sort_by_key(|block| block["type"] != "tool_result");
                notes.push(note(
                    &format!("messages/{index}"),
                    "tool results were moved ahead of user text in the same turn, as the API requires",
                ));
            }
            json!({"role": role, "content": blocks})
        })
        .collect();
    EncodedMessages {
        messages,
        container,
    }
}

fn push(turns: &mut Vec<(&'static str, Vec<Value>)>, role: &'static str, blocks: Vec<Value>) {
    match turns.last_mut() {
        Some((last, existing)) if *last == role => existing.extend(blocks),
        _ => turns.push((role, blocks)),
    }
}

fn results_follow_text(blocks: &[Value]) -> bool {
    let first_other = blocks
        .iter()
        .position(|block| block["type"] != "tool_result");
    first_other.is_some_and(|first| {
        blocks[first..]
            .iter()
            .any(|block| block["type"] == "tool_result")
    })
}

/// The container id a replayed assistant turn ran code in (the API wants it on the next
/// request).
fn container_of(state: &ReplayState) -> Option<Value> {
    let container = state.data_for(FORMAT)?.get("container")?;
    match container {
        Value::String(_) => Some(container.clone()),
        Value::Object(fields) => fields.get("id").filter(|id| id.is_string()).cloned(),
        _ => None,
    }
}

fn note(at: &str, note: &str) -> EncodeNote {
    EncodeNote {
        at: at.to_owned(),
        note: note.to_owned(),
    }
}
