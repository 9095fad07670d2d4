//! The request body: model, `max_tokens`, `system`, `messages`, `tools`, `tool_choice`,
//! `stream`, and the caller's extra fields.

use serde_json::{Map, Value, json};

use crate::provider::wire::{EncodeError, EncodeNote, EncodedRequest, ModelSettings, ToolTable};
use crate::run::{ProviderRequest, ToolChoice};

use super::messages::encode_messages;

/// `max_tokens` when the settings give none: the API requires the field.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(super) fn encode_request(
    request: &ProviderRequest<'_>,
    tools: &ToolTable,
    settings: &ModelSettings,
) -> Result<EncodedRequest, EncodeError> {
    let mut notes = Vec::new();
    let mut body = Map::new();
    body.insert("model".into(), settings.model.as_str().into());
    let max_tokens = settings.max_output_tokens.unwrap_or_else(|| {
        notes.push(EncodeNote {
            at: "max_tokens".into(),
            note: format!(
                "the settings give no output limit and the API requires one; {DEFAULT_MAX_TOKENS} was sent"
            ),
        });
        DEFAULT_MAX_TOKENS
    });
    body.insert("max_tokens".into(), max_tokens.into());
    if let Some(instructions) = request.instructions.filter(|text| !text.is_empty()) {
        body.insert("system".into(), instructions.into());
    }
    let encoded = encode_messages(request.transcript, tools, &mut notes);
    body.insert("messages".into(), Value::Array(encoded.messages));
    if !tools.tools().is_empty() {
        let described = tools
            .tools()
            .iter()
            .map(|tool| {
                let mut entry = Map::new();
                entry.insert("name".into(), tool.wire_name.as_str().into());
                if let Some(description) = &tool.description {
                    entry.insert("description".into(), description.as_str().into());
                }
                entry.insert("input_schema".into(), tool.parameters.clone());
                if tool.strict {
                    entry.insert("strict".into(), true.into());
                }
                Value::Object(entry)
            })
            .collect();
        body.insert("tools".into(), Value::Array(described));
    }
    if let Some(choice) = tool_choice(request.tool_choice, request.parallel_tool_calls, tools)? {
        body.insert("tool_choice".into(), choice);
    }
    if settings.stream {
        body.insert("stream".into(), true.into());
    }
    if let Some(container) = encoded.container
        && !settings.extra.contains_key("container")
    {
        body.insert("container".into(), container);
    }
    settings.merge_extra(&mut body, &[], &mut notes);
    Ok(EncodedRequest {
        body: Value::Object(body),
        notes,
    })
}

/// `tool_choice`, when it is not the API's default (`auto`, parallel calls allowed).
fn tool_choice(
    choice: &ToolChoice,
    parallel: Option<bool>,
    tools: &ToolTable,
) -> Result<Option<Value>, EncodeError> {
    let mut encoded = match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::None => {
            return Ok(Some(json!({"type": "none"})).filter(|_| !tools.tools().is_empty()));
        }
        ToolChoice::Required => {
            if tools.tools().is_empty() {
                return Err(EncodeError::new(
                    "the tool choice requires a tool call, but no tools are described",
                ));
            }
            json!({"type": "any"})
        }
        ToolChoice::Tool(name) => {
            let Some(tool) = tools.by_name(name) else {
                return Err(EncodeError::new(format!(
                    "the tool choice forces `{name}`, which is not among the described tools"
                )));
            };
            json!({"type": "tool", "name": tool.wire_name})
        }
    };
    // The API refuses a `tool_choice` without tools; with none there is nothing to call anyway.
    if tools.tools().is_empty() {
        return Ok(None);
    }
    if parallel == Some(false) {
        encoded["disable_parallel_tool_use"] = true.into();
    } else if matches!(choice, ToolChoice::Auto) {
        return Ok(None);
    }
    Ok(Some(encoded))
}
