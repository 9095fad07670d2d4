//! A `function_call` item as [`ToolCall`]s: the registered name, the arguments parsed and
//! restored (or the parser's message), and the item id the API wants back.
//!
//! OpenAI models sometimes wrap several calls in one call to an undeclared tool named `parallel`
//! (`{"tool_uses": [{"recipient_name": "functions.weather", "parameters": {…}}, …]}`), a leak of
//! the model's internal format. When every part names a tool of the turn, the wrapper becomes
//! those calls (ids `<call_id>_<part>`), each remembering the wrapper, so the wrapper item goes
//! back once and their results go back as the wrapper's one output.

use serde_json::{Map, Value, json};

use super::NAME;
use crate::call::json_kind;
use crate::call::{ReplayState, ToolCall};
use crate::provider::wire::ToolTable;

/// The tool name of the wrapper, and the prefix its parts put before a tool's name.
const WRAPPER: &str = "parallel";
const RECIPIENT_PREFIX: &str = "functions.";

/// What a `function_call` item says.
pub(super) struct CallItem<'a> {
    /// The item id (`fc_…`), sent back with the call.
    pub item_id: Option<&'a str>,
    /// The call id, which the result answers.
    pub call_id: &'a str,
    /// The name the model used.
    pub name: &'a str,
    /// The argument text.
    pub arguments: &'a str,
}

/// The calls a `function_call` item stands for (one, or a `parallel` wrapper's parts), pushed to
/// `out` in order.
pub(super) fn push_calls(item: &CallItem<'_>, tools: &ToolTable, out: &mut Vec<ToolCall>) {
    if item.name == WRAPPER
        && tools.by_wire_name(WRAPPER).is_none()
        && let Some(parts) = wrapper_parts(item.arguments, tools)
    {
        for (part, (wire_name, arguments)) in parts.into_iter().enumerate() {
            let replay = json!({
                "id": item.item_id,
                "wrapper_call_id": item.call_id,
                "part": part,
            });
            out.push(call(
                tools,
                format!("{}_{part}", item.call_id),
                wire_name,
                Ok(Value::Object(arguments)),
                replay,
            ));
        }
        return;
    }
    let replay = match item.item_id {
        Some(id) => json!({ "id": id }),
        None => json!({}),
    };
    out.push(call(
        tools,
        item.call_id.to_owned(),
        item.name,
        parse_arguments(item.arguments),
        replay,
    ));
}

fn call(
    tools: &ToolTable,
    call_id: String,
    wire_name: &str,
    arguments: Result<Value, String>,
    replay: Value,
) -> ToolCall {
    let name = tools.registered_name(wire_name).to_owned();
    let call = match arguments {
        Ok(mut arguments) => {
            tools.restore_arguments(&name, &mut arguments);
            ToolCall::new(call_id, name, arguments)
        }
        Err(message) => ToolCall::malformed(call_id, name, message),
    };
    call.with_replay(ReplayState::new(NAME, replay))
}

/// The argument text as a JSON object: `{}` when empty (a tool without parameters), else the
/// parser's message, or what the text was instead of an object.
pub(super) fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "the arguments are not a JSON object but {}",
            json_kind(&other)
        )),
        Err(error) => Err(format!("the arguments are not valid JSON: {error}")),
    }
}

/// The wrapper's parts as (wire name, arguments), when every part is well formed and names a
/// tool of the turn; otherwise the wrapper stays one call (to an unknown tool, which the
/// dispatcher answers).
fn wrapper_parts<'t>(
    arguments: &str,
    tools: &'t ToolTable,
) -> Option<Vec<(&'t str, Map<String, Value>)>> {
    let Ok(Value::Object(mut wrapper)) = serde_json::from_str::<Value>(arguments) else {
        return None;
    };
    let Some(Value::Array(uses)) = wrapper.remove("tool_uses") else {
        return None;
    };
    if uses.is_empty() {
        return None;
    }
    uses.into_iter()
        .map(|part| {
            let Value::Object(mut part) = part else {
                return None;
            };
            let recipient = part.get("recipient_name")?.as_str()?;
            let wire_name = recipient.strip_prefix(RECIPIENT_PREFIX)?;
            let tool = tools.by_wire_name(wire_name)?;
            match part.remove("parameters")? {
                Value::Object(parameters) => Some((tool.wire_name.as_str(), parameters)),
                _ => None,
            }
        })
        .collect()
}

/// For a call that is a part of a `parallel` wrapper: the wrapper's call id and the part's index.
pub(super) fn wrapper_of(call: &ToolCall) -> Option<(&str, u64)> {
    let data = call.replay.as_deref()?.data_for(NAME)?;
    Some((
        data.get("wrapper_call_id")?.as_str()?,
        data.get("part")?.as_u64()?,
    ))
}

/// The `fc_…` item id the API gave the call, when it carries one of ours.
pub(super) fn item_id_of(call: &ToolCall) -> Option<&str> {
    call.replay.as_deref()?.data_for(NAME)?.get("id")?.as_str()
}
