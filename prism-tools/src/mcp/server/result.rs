//! A [`ToolResult`] as MCP's `CallToolResult`.
//!
//! - A value: its content blocks, then the value as text (a string as itself, anything else as
//!   JSON) so clients that read only text see it; an object is also `structuredContent`.
//! - Blocked and failed calls: `isError: true` with the (already redacted) message as text, and
//!   the code and reason in `_meta`, so a client sees why without parsing the message.
//! - Output marked untrusted says so in `_meta`.
//! - A content block MCP cannot carry is replaced by a line naming it, never dropped silently.

use rmcp::model::{CallToolResult, ContentBlock as McpContent, MetaObject};
use serde_json::{Value, json};

use super::listing::META_UNTRUSTED_OUTPUT;
use crate::call::{ContentBlock, ToolOutcome, ToolResult};

/// The `_meta` key of a refused or failed call's code and reason.
pub(crate) const META_ERROR: &str = "dev.prism/error";

/// `result` as MCP's `CallToolResult`, made of its parts: a string or object output moves into
/// the answer rather than being copied.
pub(crate) fn to_call_tool_result(result: ToolResult) -> CallToolResult {
    // Room for the blocks and the value's text, and no more: a block is large, and a vector
    // grown by one push would hold four.
    let mut content = Vec::with_capacity(result.content().len() + 1);
    content.extend(result.content().iter().map(block));
    let untrusted = result.is_untrusted();
    let mut meta = serde_json::Map::new();
    let (structured, is_error) = match result.outcome {
        ToolOutcome::Value(value) => {
            let structured = match value {
                Value::Null => None,
                Value::String(text) => {
                    content.push(McpContent::text(text));
                    None
                }
                // Serialized straight into the text (`Display` goes through a formatter
                // adapter); writing a `Value` to memory cannot fail.
                other => {
                    content.push(McpContent::text(
                        serde_json::to_string(&other).unwrap_or_default(),
                    ));
                    other.is_object().then_some(other)
                }
            };
            (structured, false)
        }
        ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
            content.push(McpContent::text(error.message));
            let mut detail = json!({ "code": error.code.as_str() });
            if let Some(reason) = error.reason {
                detail["reason"] = json!(reason.as_str());
            }
            meta.insert(META_ERROR.into(), detail);
            (None, true)
        }
    };
    if untrusted {
        meta.insert(META_UNTRUSTED_OUTPUT.into(), json!(true));
    }
    // The constructors set `resultType: complete` (the 2026-07-28 revision's; rmcp drops it
    // for handshake-era clients).
    let mut answer = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    answer.structured_content = structured;
    if !meta.is_empty() {
        answer.meta = Some(MetaObject(meta));
    }
    answer
}

/// One content block in MCP's shape, which ours already follow field for field. A block MCP
/// cannot carry (an embedded resource with neither text nor bytes) becomes a line saying it was
/// left out, so the client sees that something was there.
fn block(block: &ContentBlock) -> McpContent {
    let converted = serde_json::to_value(block)
        .map_err(|error| error.to_string())
        .and_then(|wire| serde_json::from_value(wire).map_err(|error| error.to_string()));
    match converted {
        Ok(converted) => converted,
        Err(error) => {
            tracing::warn!(target: "prism_tools", %error, "a content block MCP cannot carry was left out");
            McpContent::text(format!(
                "[{} left out: MCP cannot carry it]",
                block.summary()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{CallId, EmbeddedResource};

    #[test]
    fn a_block_mcp_cannot_carry_is_replaced_by_a_line_saying_so() {
        // An embedded resource with neither text nor bytes: MCP's resource contents need one.
        let empty = ContentBlock::Resource {
            resource: EmbeddedResource {
                uri: "file:///report".into(),
                media_type: None,
                text: None,
                blob: None,
            },
        };
        let result = ToolResult::value(CallId::from("1"), "report", Value::Null)
            .with_content([ContentBlock::text("before"), empty]);
        let answer = to_call_tool_result(result);
        let texts: Vec<String> = answer
            .content
            .iter()
            .map(|block| serde_json::to_value(block).unwrap()["text"].to_string())
            .collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[1].contains("left out"), "{texts:?}");
        assert!(texts[1].contains("file:///report"), "{texts:?}");
    }
}
