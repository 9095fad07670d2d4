//! Tool results as Gemini `functionResponse` parts.
//!
//! Gemini takes a result as a JSON object (`response`): an object value goes as it is, any other
//! value as `{"result": value}`, a failure as `{"error": {code, message, reason?}}`. Text, links
//! and text resources among the content blocks go into the object under `content` (in the MCP
//! shape; an untrusted link as fenced text naming it); images and PDF or plain-text blobs go as `inlineData` parts of the response, which
//! Gemini 3 reads; other binary blocks (audio, other media types) cannot be sent and are
//! reported.

use serde_json::{Map, Value, json};

use crate::call::{ContentBlock, ErrorInfo, ToolCall, ToolOutcome, ToolResult};
use crate::provider::untrusted::{fence_untrusted, fenced_if};
use crate::provider::wire::{EncodeNote, ToolTable};

use super::replay::has_synthetic_id;

/// Media types Gemini takes inline in a function response.
const INLINE_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "application/pdf",
    "text/plain",
];

/// The `functionResponse` part answering `call` (when the transcript still has it).
pub(super) fn function_response(
    result: &ToolResult,
    call: Option<&ToolCall>,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let name = call.map_or(&*result.name, |call| call.name.as_str());
    let untrusted = result.is_untrusted();
    let mut response = Map::new();
    match &result.outcome {
        ToolOutcome::Value(value) => {
            if untrusted {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                response.insert("result".into(), Value::from(fence_untrusted(&text)));
            } else {
                match value {
                    Value::Object(object) if result.content().is_empty() => {
                        response.clone_from(object);
                    }
                    Value::Null if !result.content().is_empty() => {}
                    other => {
                        response.insert("result".into(), other.clone());
                    }
                }
            }
        }
        ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
            response.insert("error".into(), error_json(error, tools, untrusted));
        }
    }
    let mut inline = Vec::new();
    let mut content = Vec::new();
    for (index, block) in result.content().iter().enumerate() {
        let block_at = format!("{at}/content/{index}");
        content_block(
            block,
            untrusted,
            &block_at,
            &mut content,
            &mut inline,
            notes,
        );
    }
    if !content.is_empty() {
        response.insert("content".into(), Value::Array(content));
    }
    let mut part = Map::new();
    part.insert("name".into(), Value::from(tools.wire_name(name)));
    if !call.is_some_and(has_synthetic_id) {
        part.insert("id".into(), Value::from(result.tool_call_id.as_str()));
    }
    part.insert("response".into(), Value::Object(response));
    if !inline.is_empty() {
        part.insert("parts".into(), Value::Array(inline));
    }
    json!({ "functionResponse": Value::Object(part) })
}

fn error_json(error: &ErrorInfo, tools: &ToolTable, untrusted: bool) -> Value {
    let message = fenced_if(untrusted, &tools.to_wire_text(&error.message));
    let mut object = Map::new();
    object.insert(
        "code".into(),
        serde_json::to_value(&error.code).unwrap_or(Value::Null),
    );
    object.insert("message".into(), Value::from(message));
    if let Some(reason) = error.reason {
        object.insert("reason".into(), Value::from(reason.as_str()));
    }
    Value::Object(object)
}

fn content_block(
    block: &ContentBlock,
    untrusted: bool,
    at: &str,
    content: &mut Vec<Value>,
    inline: &mut Vec<Value>,
    notes: &mut Vec<EncodeNote>,
) {
    let mut drop = |why: String| {
        notes.push(EncodeNote {
            at: at.to_owned(),
            note: why,
        })
    };
    match block {
        ContentBlock::Text { text } if untrusted => {
            content.push(json!({"type": "text", "text": fence_untrusted(text)}));
        }
        ContentBlock::Image { data, media_type } => {
            if INLINE_TYPES.contains(&media_type.as_str()) {
                inline.push(inline_data(media_type, data));
            } else {
                drop(format!(
                    "image of type {media_type} dropped: Gemini takes png, jpeg and webp images in function responses"
                ));
            }
        }
        ContentBlock::Audio { media_type, .. } => drop(format!(
            "audio ({media_type}) dropped: Gemini takes no audio in function responses"
        )),
        ContentBlock::Resource { resource } if resource.text.is_none() => {
            match (&resource.blob, resource.media_type.as_deref()) {
                (Some(blob), Some(media_type)) if INLINE_TYPES.contains(&media_type) => {
                    inline.push(inline_data(media_type, blob));
                    // The URI is the remote side's text as much as a link's name is.
                    let uri = fenced_if(untrusted, &resource.uri);
                    content.push(
                        json!({"type": "resource", "uri": uri, "inlineData": inline.len() - 1}),
                    );
                }
                (_, media_type) => drop(format!(
                    "embedded resource {} ({}) dropped: Gemini takes only images, PDF and plain text inline",
                    resource.uri,
                    media_type.unwrap_or("no media type")
                )),
            }
        }
        // A link's name and description are remote text too; as text they can be fenced.
        ContentBlock::ResourceLink {
            uri,
            name,
            description,
            ..
        } if untrusted => {
            let mut text = format!("Resource link: {name} <{uri}>");
            if let Some(description) = description {
                text.push_str(": ");
                text.push_str(description);
            }
            content.push(json!({"type": "text", "text": fence_untrusted(&text)}));
        }
        ContentBlock::Resource { resource } if untrusted => {
            let mut resource = resource.clone();
            resource.text = resource.text.as_deref().map(fence_untrusted);
            content.push(json!({"type": "resource", "resource": resource}));
        }
        other => content.push(serde_json::to_value(other).unwrap_or(Value::Null)),
    }
}

fn inline_data(media_type: &str, data: &str) -> Value {
    json!({"inlineData": {"mimeType": media_type, "data": data}})
}
