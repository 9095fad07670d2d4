//! `tools/list`: the tools a request may call, in the registry's order, as MCP describes them.
//!
//! A tool is listed when the dispatcher's filters allow it and the call's scope grants it (the
//! server's own, within what the host decided from the request's authorisation, and the tools a
//! run pinned): the list never shows a tool that `tools/call` would refuse as denied. Parameters
//! go out in the MCP schema dialect; a tool whose schema cannot be lowered is left out and
//! logged, never sent half-changed.
//!
//! A tool whose name MCP does not accept (1 to 128 of `A-Z a-z 0-9 _ - .`; the tool macros refuse
//! such names, [`ToolDefinition::builder`] does not) is left out too: a client may refuse a
//! whole list for one such name. The first page of a listing logs how many were left out and
//! the first one's name, redacted and cut. The list is no gate: a `tools/call` naming such a tool
//! goes through the dispatcher like any call, and its filters and scope decide.
//!
//! Pages are the same from one request to the next while the list does not change. A cursor is
//! opaque text this server wrote, tied to the list it was written for (see `list_cursor.rs`):
//! once a tool is registered or removed, or for a request whose scope lists another set, it is
//! refused, and the client lists again from the start instead of skipping a tool or seeing one
//! twice.

use rmcp::model::{JsonObject, ListToolsResult, Tool};
use serde_json::{Value, json};

use crate::definition::ToolDefinition;
use crate::dispatch::{Dispatcher, shown_name};
use crate::mcp::tool_name::is_tool_name;
use crate::schema::{Dialect, LoweringCache};
use crate::scope::ToolScope;

use super::list_cursor::{self, ListDigest};

/// The `_meta` key saying a tool's calls wait for a person's approval.
pub(crate) const META_REQUIRES_APPROVAL: &str = "dev.prism/requiresApproval";
/// The `_meta` key saying a tool's output comes from outside the host's trust.
pub(crate) const META_UNTRUSTED_OUTPUT: &str = "dev.prism/untrustedOutput";

/// One page of the tools `scope` may call, starting where `cursor` (one this server wrote for
/// this list) says.
pub(crate) fn list_page(
    dispatcher: &Dispatcher,
    lowering: &LoweringCache,
    scope: Option<&ToolScope>,
    cursor: Option<&str>,
    page_size: usize,
) -> Result<ListToolsResult, String> {
    let snapshot = dispatcher.registry().snapshot();
    let allowed: Vec<&ToolDefinition> = snapshot
        .iter()
        .filter(|tool| {
            let name = tool.name();
            dispatcher.filters_allow(name)
                && scope.is_none_or(|scope| {
                    scope.allows(name)
                        && scope
                            .pinned_tools()
                            .is_none_or(|pinned| pinned.get(name).is_some())
                })
        })
        .collect();
    let listed: Vec<&ToolDefinition> = allowed
        .iter()
        .copied()
        .filter(|tool| is_tool_name(tool.name()))
        .collect();
    let list = ListDigest::of(listed.iter().map(|tool| tool.name()));
    let start = match cursor {
        None => {
            // Once per listing, not once per page.
            warn_unlisted_names(dispatcher, allowed.iter().copied());
            0
        }
        Some(cursor) => list_cursor::read(cursor, list, listed.len())
            .map_err(|refused| refused.message().to_owned())?,
    };
    let mut tools = Vec::new();
    let mut next = None;
    for (index, tool) in listed.iter().enumerate().skip(start) {
        if tools.len() == page_size {
            next = Some(list_cursor::write(index, list));
            break;
        }
        if let Some(tool) = describe(tool, lowering) {
            tools.push(tool);
        }
    }
    let mut page = ListToolsResult::with_all_items(tools);
    page.next_cursor = next;
    Ok(page)
}

/// The MCP description of `tool`, or `None` (logged) when its schema cannot be lowered.
pub(crate) fn describe(tool: &ToolDefinition, lowering: &LoweringCache) -> Option<Tool> {
    let input_schema = match lowering.lower(tool, Dialect::Mcp) {
        Ok(lowered) => match lowered.schema() {
            Value::Object(schema) => schema.clone(),
            _ => return skipped(tool, "its lowered schema is not an object"),
        },
        Err(error) => return skipped(tool, &error.to_string()),
    };
    let mut described = json!({
        "name": tool.name(),
        "inputSchema": input_schema,
    });
    let fields = described.as_object_mut()?;
    if let Some(title) = tool.title() {
        fields.insert("title".into(), json!(title));
    }
    if let Some(description) = tool.description() {
        fields.insert("description".into(), json!(description));
    }
    // MCP's `outputSchema` describes `structuredContent`, which is always an object.
    if let Some(output) = tool.output_schema()
        && output.get("type") == Some(&json!("object"))
    {
        fields.insert("outputSchema".into(), output.clone());
    }
    let annotations = serde_json::to_value(tool.annotations()).ok()?;
    if annotations
        .as_object()
        .is_some_and(|hints| !hints.is_empty())
    {
        fields.insert("annotations".into(), annotations);
    }
    if !tool.icons().is_empty() {
        fields.insert("icons".into(), serde_json::to_value(tool.icons()).ok()?);
    }
    let mut meta = JsonObject::new();
    if tool.requires_approval() {
        meta.insert(META_REQUIRES_APPROVAL.into(), json!(true));
    }
    if tool.untrusted_output() {
        meta.insert(META_UNTRUSTED_OUTPUT.into(), json!(true));
    }
    if !meta.is_empty() {
        fields.insert("_meta".into(), Value::Object(meta));
    }
    match serde_json::from_value::<Tool>(described) {
        Ok(described) => Some(described),
        Err(error) => skipped(tool, &error.to_string()),
    }
}

/// Logs the tools among `allowed` left out of the list for their names: how many, and the first
/// one's name redacted and cut, since a name the rule refuses can be any text of any length.
fn warn_unlisted_names<'t>(
    dispatcher: &Dispatcher,
    allowed: impl Iterator<Item = &'t ToolDefinition>,
) {
    let mut unlisted = allowed.filter(|tool| !is_tool_name(tool.name()));
    let Some(first) = unlisted.next() else {
        return;
    };
    let count = 1 + unlisted.count();
    let first = shown_name(dispatcher.redactor(), first.name());
    tracing::warn!(
        target: "prism_tools",
        count,
        first = %first,
        "tools whose names MCP does not accept (1 to 128 of A-Z a-z 0-9 _ - .) left out of the MCP tools/list"
    );
}

fn skipped(tool: &ToolDefinition, why: &str) -> Option<Tool> {
    tracing::warn!(target: "prism_tools", tool = tool.name(), why, "tool left out of the MCP tools/list");
    None
}
