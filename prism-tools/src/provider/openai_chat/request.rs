//! A [`ProviderRequest`] as a Chat Completions request body: `model`, `messages`, `tools`,
//! `tool_choice`, `parallel_tool_calls`, streaming with usage, the token limit, and the
//! settings' extra fields.

use serde_json::{Map, Value, json};

use super::OpenAiChat;
use super::messages::encode_messages;
use crate::provider::wire::{EncodeError, EncodeNote, EncodedRequest, ModelSettings, ToolTable};
use crate::run::{ProviderRequest, ToolChoice};

pub(super) fn encode_request(
    format: &OpenAiChat,
    request: &ProviderRequest<'_>,
    tools: &ToolTable,
    settings: &ModelSettings,
) -> Result<EncodedRequest, EncodeError> {
    let mut notes = Vec::new();
    let mut body = Map::new();
    body.insert("model".into(), Value::from(settings.model.as_str()));
    let instructions = request
        .instructions
        .map(|text| (format.instructions_role(), text));
    let messages = encode_messages(instructions, request.transcript, tools, &mut notes);
    body.insert("messages".into(), Value::Array(messages));
    if !tools.tools().is_empty() {
        body.insert("tools".into(), tool_list(tools));
    }
    if let Some(choice) = tool_choice(request.tool_choice, tools)? {
        body.insert("tool_choice".into(), choice);
    }
    if let Some(parallel) = request.parallel_tool_calls {
        if tools.tools().is_empty() {
            notes.push(EncodeNote {
                at: "parallel_tool_calls".into(),
                note: "not sent: the API takes it only when tools are described".into(),
            });
        } else {
            body.insert("parallel_tool_calls".into(), Value::Bool(parallel));
        }
    }
    if settings.stream {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    if let Some(tokens) = settings.max_output_tokens {
        body.insert(format.max_tokens_field().into(), Value::from(tokens));
    }
    settings.merge_extra(&mut body, &[], &mut notes);
    Ok(EncodedRequest {
        body: Value::Object(body),
        notes,
    })
}

/// `tools`: each as a function with its wire name, description, lowered parameters and, when
/// the lowering made it strict, `strict: true` (Chat's default is not strict).
fn tool_list(tools: &ToolTable) -> Value {
    tools
        .tools()
        .iter()
        .map(|tool| {
            let mut function = Map::new();
            function.insert("name".into(), Value::from(tool.wire_name.as_str()));
            if let Some(description) = &tool.description {
                function.insert("description".into(), Value::from(description.as_str()));
            }
            function.insert("parameters".into(), tool.parameters.clone());
            if tool.strict {
                function.insert("strict".into(), Value::Bool(true));
            }
            json!({ "type": "function", "function": function })
        })
        .collect()
}

/// `tool_choice`, or nothing when no tools are described and the choice asks for none.
fn tool_choice(choice: &ToolChoice, tools: &ToolTable) -> Result<Option<Value>, EncodeError> {
    let no_tools = tools.tools().is_empty();
    Ok(Some(match choice {
        ToolChoice::Auto | ToolChoice::None if no_tools => return Ok(None),
        ToolChoice::Auto => Value::from("auto"),
        ToolChoice::None => Value::from("none"),
        ToolChoice::Required if no_tools => {
            return Err(EncodeError::new(
                "the tool choice requires a tool call, but no tools are described",
            ));
        }
        ToolChoice::Required => Value::from("required"),
        ToolChoice::Tool(name) => {
            let tool = tools.by_name(name).ok_or_else(|| {
                EncodeError::new(format!(
                    "the tool choice forces `{name}`, which is not among the described tools"
                ))
            })?;
            json!({ "type": "function", "function": { "name": tool.wire_name } })
        }
    }))
}
