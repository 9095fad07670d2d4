//! A [`ProviderRequest`] as a `generateContent` body.
//!
//! `systemInstruction` holds the instructions; `contents` alternates `user` and `model`. A model
//! message is sent back part by part as Gemini wrote it (thoughts and signatures in place, from
//! its replay state); all the function responses of a turn go in one `user` content, in the
//! order of the calls they answer.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::call::ToolCall;
use crate::provider::wire::{EncodeError, EncodeNote, EncodedRequest, ModelSettings, ToolTable};
use crate::run::{Message, ProviderRequest, ToolChoice};

use super::SchemaField;
use super::replay::{Segment, call_signature, has_synthetic_id, message_segments};
use super::results::function_response;

pub(super) fn encode_request(
    request: &ProviderRequest<'_>,
    tools: &ToolTable,
    settings: &ModelSettings,
    schema_field: SchemaField,
) -> Result<EncodedRequest, EncodeError> {
    let mut notes = Vec::new();
    let mut body = Map::new();
    if let Some(instructions) = request.instructions.filter(|text| !text.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": instructions}]}),
        );
    }
    body.insert(
        "contents".into(),
        Value::Array(contents(request.transcript, tools, &mut notes)),
    );
    if !tools.tools().is_empty() {
        let declarations = tools
            .tools()
            .iter()
            .map(|tool| declaration(tool, schema_field, &mut notes))
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": Value::Array(declarations) }]),
        );
    }
    if let Some(config) = tool_config(request.tool_choice, tools)? {
        body.insert("toolConfig".into(), config);
    }
    if request.parallel_tool_calls == Some(false) {
        notes.push(EncodeNote {
            at: "parallel_tool_calls".into(),
            note: "Gemini has no switch to forbid parallel calls; the model may still make several"
                .into(),
        });
    }
    let mut generation = match settings.extra.get("generationConfig") {
        Some(Value::Object(config)) => config.clone(),
        _ => Map::new(),
    };
    if let Some(tokens) = settings.max_output_tokens {
        generation.insert("maxOutputTokens".into(), Value::from(tokens));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    settings.merge_extra(&mut body, &["generationConfig"], &mut notes);
    Ok(EncodedRequest {
        body: Value::Object(body),
        notes,
    })
}

fn declaration(
    tool: &crate::provider::wire::PreparedTool,
    schema_field: SchemaField,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let mut declaration = Map::new();
    declaration.insert("name".into(), Value::from(tool.wire_name.as_str()));
    if let Some(description) = &tool.description {
        declaration.insert("description".into(), Value::from(description.as_str()));
    }
    // Gemini's `Schema` refuses an object type without properties: a tool without arguments
    // is declared without a schema, which means the same.
    let empty_object = tool.parameters.get("type").and_then(Value::as_str) == Some("object")
        && tool
            .parameters
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        && tool.parameters.get("additionalProperties").is_none();
    if !(tool.parameters.is_null() || schema_field == SchemaField::Parameters && empty_object) {
        declaration.insert(schema_field.as_str().into(), tool.parameters.clone());
    }
    if tool.strict {
        notes.push(EncodeNote {
            at: format!("tools/{}", tool.name),
            note: "Gemini has no strict switch; the schema is sent without one".into(),
        });
    }
    Value::Object(declaration)
}

fn tool_config(choice: &ToolChoice, tools: &ToolTable) -> Result<Option<Value>, EncodeError> {
    let no_tools = tools.tools().is_empty();
    let config = match choice {
        ToolChoice::Auto | ToolChoice::None if no_tools => return Ok(None),
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required if no_tools => {
            return Err(EncodeError::new(
                "a tool call is required but no tools are described",
            ));
        }
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => {
            let tool = tools.by_name(name).ok_or_else(|| {
                EncodeError::new(format!(
                    "the forced tool `{name}` is not among the tools described this turn"
                ))
            })?;
            json!({"mode": "ANY", "allowedFunctionNames": [tool.wire_name]})
        }
    };
    Ok(Some(json!({ "functionCallingConfig": config })))
}

/// Where a call sits: its assistant row and its place among that row's calls.
type CallPlace<'a> = (&'a ToolCall, usize, usize);

fn contents(transcript: &[Message], tools: &ToolTable, notes: &mut Vec<EncodeNote>) -> Vec<Value> {
    let mut calls: HashMap<&str, CallPlace<'_>> = HashMap::new();
    for (row, message) in transcript.iter().enumerate() {
        if let Message::Assistant { tool_calls, .. } = message {
            for (place, call) in tool_calls.iter().enumerate() {
                calls.insert(call.id.as_str(), (call, row, place));
            }
        }
    }
    let mut out = Vec::with_capacity(transcript.len());
    let mut responses: Vec<((usize, usize), Value)> = Vec::new();
    for (row, message) in transcript.iter().enumerate() {
        let at = format!("transcript/{row}");
        if let Message::Tool { result } = message {
            let known = calls.get(result.tool_call_id.as_str());
            let order = known.map_or((usize::MAX, row), |&(_, call_row, place)| (call_row, place));
            let part = function_response(result, known.map(|k| k.0), tools, &at, notes);
            responses.push((order, part));
            continue;
        }
        flush_responses(&mut responses, &mut out);
        match message {
            Message::User { content } if content.is_empty() => notes.push(EncodeNote {
                at,
                note: "an empty user row was left out (Gemini refuses a part without data)".into(),
            }),
            Message::User { content } => {
                out.push(json!({"role": "user", "parts": [{"text": content}]}));
            }
            Message::Assistant {
                content,
                tool_calls,
                replay,
            } => {
                let parts = model_parts(content, tool_calls, replay.as_ref(), tools, &at, notes);
                if parts.is_empty() {
                    notes.push(EncodeNote {
                        at,
                        note: "an assistant message with no text and no calls was left out (Gemini refuses empty contents)".into(),
                    });
                } else {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::Tool { .. } => unreachable!("tool rows are handled above"),
        }
    }
    flush_responses(&mut responses, &mut out);
    out
}

/// One `user` content with a turn's function responses, in the order of the calls.
fn flush_responses(responses: &mut Vec<((usize, usize), Value)>, out: &mut Vec<Value>) {
    if responses.is_empty() {
        return;
    }
    responses.sort_by_key(|(order, _)| *order);
    let parts: Vec<Value> = responses.drain(..).map(|(_, part)| part).collect();
    out.push(json!({"role": "user", "parts": parts}));
}

fn model_parts(
    content: &str,
    tool_calls: &[ToolCall],
    replay: Option<&crate::call::ReplayState>,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Vec<Value> {
    let mut parts = Vec::new();
    let mut sent = vec![false; tool_calls.len()];
    if let Some(segments) = message_segments(replay) {
        let visible: String = segments
            .iter()
            .filter_map(|segment| match segment {
                Segment::Text {
                    text,
                    thought: false,
                    ..
                } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let text_kept = visible == content;
        let mut content_left = (!text_kept && !content.is_empty()).then_some(content);
        if !text_kept {
            notes.push(EncodeNote {
                at: at.to_owned(),
                note: "the assistant text differs from what Gemini wrote; it is sent as one part, with the signatures kept in place".into(),
            });
        }
        for segment in segments {
            match segment {
                Segment::Text {
                    text,
                    thought,
                    signature,
                } => {
                    let text = if thought || text_kept {
                        text
                    } else {
                        content_left.take().unwrap_or_default().to_owned()
                    };
                    if text.is_empty() && signature.is_none() {
                        continue;
                    }
                    parts.push(text_part(&text, thought, signature.as_deref()));
                }
                Segment::Call(index) => {
                    if let Some(call) = tool_calls.get(index)
                        && !std::mem::replace(&mut sent[index], true)
                    {
                        parts.push(call_part(call, tools, at, notes));
                    }
                }
            }
        }
        if let Some(content) = content_left {
            let first_call = parts
                .iter()
                .position(|part| part.get("functionCall").is_some())
                .unwrap_or(parts.len());
            parts.insert(first_call, text_part(content, false, None));
        }
    } else if !content.is_empty() {
        parts.push(text_part(content, false, None));
    }
    for (call, _) in tool_calls.iter().zip(&sent).filter(|(_, sent)| !**sent) {
        parts.push(call_part(call, tools, at, notes));
    }
    sign_foreign_calls(&mut parts, at, notes);
    parts
}

/// The signature Gemini documents for calls it did not write itself (another provider's turn,
/// or one the host made up): without a signature on the first call, Gemini 3 refuses the turn.
const FOREIGN_SIGNATURE: &str = "skip_thought_signature_validator";

fn sign_foreign_calls(parts: &mut [Value], at: &str, notes: &mut Vec<EncodeNote>) {
    let Some(Value::Object(first_call)) = parts
        .iter_mut()
        .find(|part| part.get("functionCall").is_some())
    else {
        return;
    };
    if first_call.contains_key("thoughtSignature") {
        return;
    }
    first_call.insert("thoughtSignature".into(), Value::from(FOREIGN_SIGNATURE));
    notes.push(EncodeNote {
        at: at.to_owned(),
        note: format!(
            "the calls carry no Gemini signature; the first is sent with Gemini's placeholder `{FOREIGN_SIGNATURE}`"
        ),
    });
}

fn text_part(text: &str, thought: bool, signature: Option<&str>) -> Value {
    let mut part = Map::new();
    part.insert("text".into(), Value::from(text));
    if thought {
        part.insert("thought".into(), Value::Bool(true));
    }
    if let Some(signature) = signature {
        part.insert("thoughtSignature".into(), Value::from(signature));
    }
    Value::Object(part)
}

fn call_part(call: &ToolCall, tools: &ToolTable, at: &str, notes: &mut Vec<EncodeNote>) -> Value {
    let args = match &call.arguments {
        Value::Object(_) if call.arguments_error.is_none() => call.arguments.clone(),
        _ => {
            notes.push(EncodeNote {
                at: format!("{at}/calls/{}", call.id.shown()),
                note: "the call's arguments were not a JSON object; sent back as `{}`".into(),
            });
            Value::Object(Map::new())
        }
    };
    let mut function_call = Map::new();
    function_call.insert("name".into(), Value::from(tools.wire_name(&call.name)));
    function_call.insert("args".into(), args);
    if !has_synthetic_id(call) {
        function_call.insert("id".into(), Value::from(call.id.as_str()));
    }
    let mut part = Map::new();
    part.insert("functionCall".into(), Value::Object(function_call));
    if let Some(signature) = call_signature(call) {
        part.insert("thoughtSignature".into(), Value::from(signature));
    }
    Value::Object(part)
}
