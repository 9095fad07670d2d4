//! A [`ProviderRequest`] as a Responses API body: `instructions`, the transcript as `input`
//! items, `tools`, `tool_choice`, `parallel_tool_calls`, and the model settings.
//!
//! An assistant row that carries this format's replay state sends the provider's own output
//! items back unchanged and in order (reasoning with encrypted content, `function_call` items
//! with their `fc_…` ids, messages, hosted tools' items); a row without it is rebuilt from its
//! text and calls. Replaying encrypted reasoning asks for it again
//! (`include: ["reasoning.encrypted_content"]`), as does `store: false` in the settings.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::NAME;
use super::calls::{item_id_of, wrapper_of};
use super::output::item_type;
use super::tool_output::{output, wrapper_output};
use crate::call::{ToolCall, ToolResult, shown_call_id};
use crate::provider::wire::{EncodeError, EncodeNote, EncodedRequest, ModelSettings, ToolTable};
use crate::run::{Message, ProviderRequest, ToolChoice};

const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// The body for one turn.
pub(super) fn encode(
    request: &ProviderRequest<'_>,
    tools: &ToolTable,
    settings: &ModelSettings,
) -> Result<EncodedRequest, EncodeError> {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(settings.model.as_str()));
    if let Some(instructions) = request.instructions {
        body.insert("instructions".into(), Value::from(instructions));
    }
    let mut input = Input::default();
    input.transcript(request.transcript, tools);
    let replays_reasoning = input.replays_reasoning;
    let mut notes = input.notes;
    body.insert("input".into(), Value::Array(input.items));
    if !tools.tools().is_empty() {
        let described = tools.tools().iter().map(|tool| {
            let mut entry = json!({ "type": "function", "name": tool.wire_name });
            if let Some(description) = &tool.description {
                entry["description"] = Value::from(description.as_str());
            }
            entry["parameters"] = tool.parameters.clone();
            // The API treats a missing `strict` as true, which a loose schema fails.
            entry["strict"] = Value::Bool(tool.strict);
            entry
        });
        body.insert("tools".into(), Value::Array(described.collect()));
    }
    if let Some(choice) = tool_choice(request.tool_choice, tools)? {
        body.insert("tool_choice".into(), choice);
    }
    if let Some(parallel) = request.parallel_tool_calls {
        body.insert("parallel_tool_calls".into(), Value::Bool(parallel));
    }
    body.insert("stream".into(), Value::Bool(settings.stream));
    if let Some(tokens) = settings.max_output_tokens {
        body.insert("max_output_tokens".into(), Value::from(tokens));
    }
    let stateless = settings.extra.get("store") == Some(&Value::Bool(false));
    let mut include: Vec<Value> = match settings.extra.get("include") {
        Some(Value::Array(asked)) => asked.clone(),
        _ => Vec::new(),
    };
    if (replays_reasoning || stateless) && !include.iter().any(|entry| entry == ENCRYPTED_REASONING)
    {
        include.push(Value::from(ENCRYPTED_REASONING));
    }
    if !include.is_empty() {
        body.insert("include".into(), Value::Array(include));
    }
    settings.merge_extra(&mut body, &["include"], &mut notes);
    Ok(EncodedRequest {
        body: Value::Object(body),
        notes,
    })
}

fn tool_choice(choice: &ToolChoice, tools: &ToolTable) -> Result<Option<Value>, EncodeError> {
    let none_described = tools.tools().is_empty();
    Ok(match choice {
        ToolChoice::Auto | ToolChoice::None if none_described => None,
        ToolChoice::Auto => Some(Value::from("auto")),
        ToolChoice::None => Some(Value::from("none")),
        ToolChoice::Required if none_described => {
            return Err(EncodeError::new(
                "the model must call a tool, but no tool is described",
            ));
        }
        ToolChoice::Required => Some(Value::from("required")),
        ToolChoice::Tool(name) => match tools.by_name(name) {
            Some(tool) => Some(json!({ "type": "function", "name": tool.wire_name })),
            None => {
                return Err(EncodeError::new(format!(
                    "the model must call `{name}`, which is not among this turn's tools"
                )));
            }
        },
    })
}

/// The `input` items being built.
#[derive(Default)]
struct Input {
    items: Vec<Value>,
    notes: Vec<EncodeNote>,
    replays_reasoning: bool,
    /// Calls that are parts of a `parallel` wrapper sent back whole: their wrapper's call id and
    /// their part.
    wrapped: HashMap<String, (String, u64)>,
    /// Wrappers whose one output is already in `items`.
    answered: HashSet<String>,
}

impl Input {
    fn note(&mut self, at: String, note: impl Into<String>) {
        self.notes.push(EncodeNote {
            at,
            note: note.into(),
        });
    }

    fn transcript(&mut self, transcript: &[Message], tools: &ToolTable) {
        for (row, message) in transcript.iter().enumerate() {
            let at = format!("transcript/{row}");
            match message {
                Message::User { content } => {
                    self.items
                        .push(json!({ "role": "user", "content": content }));
                }
                Message::Assistant {
                    content,
                    tool_calls,
                    replay,
                } => {
                    let own = replay.as_ref().and_then(|state| state.data_for(NAME));
                    if let Some(state) = replay
                        && own.is_none()
                    {
                        let format = &state.format;
                        self.note(
                            at.clone(),
                            format!("replay state of `{format}` is not sent"),
                        );
                    }
                    let items = own.and_then(|data| data.get("items")?.as_array());
                    self.assistant(content, tool_calls, items, tools, &at);
                }
                Message::Tool { result } => self.result(result, &transcript[row..], tools, &at),
            }
        }
    }

    fn assistant(
        &mut self,
        content: &str,
        calls: &[ToolCall],
        replayed: Option<&Vec<Value>>,
        tools: &ToolTable,
        at: &str,
    ) {
        // The call ids the API knows these calls by: a wrapper's parts answer to the wrapper.
        let mut expected: HashMap<&str, Vec<&ToolCall>> = HashMap::new();
        for call in calls {
            let id = wrapper_of(call).map_or(call.id.as_str(), |(wrapper, _)| wrapper);
            expected.entry(id).or_default().push(call);
        }
        let mut sent: HashSet<&str> = HashSet::new();
        let mut sent_text = false;
        for item in replayed.into_iter().flatten() {
            match item_type(item) {
                "function_call" => {
                    let call_id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                    let Some(group) = expected.get(call_id) else {
                        self.note(
                            at.to_owned(),
                            format!(
                                "call `{}` is not in the transcript and is not sent",
                                shown_call_id(call_id)
                            ),
                        );
                        continue;
                    };
                    for call in group {
                        if let Some((wrapper, part)) = wrapper_of(call) {
                            let id = call.id.as_str().to_owned();
                            self.wrapped.insert(id, (wrapper.to_owned(), part));
                        }
                    }
                    sent.insert(call_id);
                }
                "message" => sent_text = true,
                "reasoning" => {
                    self.replays_reasoning |=
                        item.get("encrypted_content").is_some_and(Value::is_string);
                }
                _ => {}
            }
            self.items.push(item.clone());
        }
        if !sent_text && !content.is_empty() {
            self.items
                .push(json!({ "role": "assistant", "content": content }));
        }
        for call in calls {
            if sent.contains(wrapper_of(call).map_or(call.id.as_str(), |(wrapper, _)| wrapper)) {
                continue;
            }
            let arguments = if call.arguments_error.is_some() {
                self.note(
                    format!("{at}/calls/{}", call.id.shown()),
                    "the call's unreadable argument text was not kept; `{}` is sent",
                );
                "{}".to_owned()
            } else {
                call.arguments.to_string()
            };
            let mut item = json!({
                "type": "function_call",
                "call_id": call.id.as_str(),
                "name": tools.wire_name(&call.name),
                "arguments": arguments,
            });
            if let Some(id) = item_id_of(call) {
                item["id"] = Value::from(id);
            }
            self.items.push(item);
        }
    }

    /// A result; `rest` is the transcript from its row on (a wrapper's first answered part
    /// gathers the other parts' results from there).
    fn result(&mut self, result: &ToolResult, rest: &[Message], tools: &ToolTable, at: &str) {
        let Some((wrapper, _)) = self.wrapped.get(result.tool_call_id.as_str()).cloned() else {
            let output = output(result, tools, at, &mut self.notes);
            self.items.push(json!({
                "type": "function_call_output",
                "call_id": result.tool_call_id.as_str(),
                "output": output,
            }));
            return;
        };
        if !self.answered.insert(wrapper.clone()) {
            return;
        }
        let mut parts = Vec::new();
        for (offset, message) in rest.iter().enumerate() {
            let Some(part) = message.as_tool_result() else {
                continue;
            };
            let Some((of, index)) = self.wrapped.get(part.tool_call_id.as_str()) else {
                continue;
            };
            if *of == wrapper {
                let index = *index;
                let part_at = if offset == 0 {
                    at.to_owned()
                } else {
                    format!("{at}+{offset}")
                };
                let output = output(part, tools, &part_at, &mut self.notes);
                parts.push((index, tools.wire_name(&part.name).into_owned(), output));
            }
        }
        parts.sort_by_key(|(index, _, _)| *index);
        let parts: Vec<(String, Value)> = parts
            .into_iter()
            .map(|(_, name, output)| (name, output))
            .collect();
        self.note(
            at.to_owned(),
            format!(
                "the results of the {} calls the model wrapped in `parallel` are sent as that call's one output",
                parts.len()
            ),
        );
        self.items.push(json!({
            "type": "function_call_output",
            "call_id": wrapper,
            "output": wrapper_output(parts),
        }));
    }
}
