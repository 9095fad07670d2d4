//! One [`ToolResult`] as a `tool_result` block: `is_error` for a blocked or failed call, the
//! value as JSON text, and the content blocks Anthropic takes (text, images, documents), with a
//! note for each block it does not.

use serde_json::{Value, json};

use crate::call::{ContentBlock, ToolOutcome, ToolResult};
use crate::provider::untrusted::fenced_if;
use crate::provider::wire::{EncodeNote, ToolTable};

/// The image types the API reads.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The `tool_result` block answering `result`'s call; `at` names the transcript row in notes.
pub(super) fn encode_result(
    result: &ToolResult,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let untrusted = result.is_untrusted();
    let text = |text: &str| json!({"type": "text", "text": fenced_if(untrusted, text)});
    let mut content = Vec::with_capacity(1 + result.content().len());
    let is_error = match &result.outcome {
        ToolOutcome::Value(value) => {
            // A null value beside content blocks means the blocks are the answer.
            if !value.is_null() || result.content().is_empty() {
                content.push(text(&value.to_string()));
            }
            false
        }
        ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
            let message = serde_json::to_string(error).unwrap_or_else(|_| error.message.clone());
            content.push(text(&tools.to_wire_text(&message)));
            true
        }
    };
    for (index, block) in result.content().iter().enumerate() {
        let at = format!("{at}/content/{index}");
        if let Some(block) = encode_block(block, untrusted, &at, notes) {
            content.push(block);
        }
    }
    let mut encoded = json!({
        "type": "tool_result",
        "tool_use_id": result.tool_call_id.as_str(),
        "content": content,
    });
    if is_error {
        encoded["is_error"] = Value::Bool(true);
    }
    encoded
}

fn encode_block(
    block: &ContentBlock,
    untrusted: bool,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Option<Value> {
    let fenced = |text: &str| fenced_if(untrusted, text);
    let mut note = |note: String| {
        notes.push(EncodeNote {
            at: at.to_owned(),
            note,
        })
    };
    match block {
        ContentBlock::Text { text } if text.is_empty() => None,
        ContentBlock::Text { text } => Some(json!({"type": "text", "text": fenced(text)})),
        ContentBlock::Image { data, media_type } => image(data, media_type).or_else(|| {
            note(format!(
                "Anthropic reads no {media_type} images; the {} was left out",
                block.summary()
            ));
            None
        }),
        ContentBlock::Audio { .. } => {
            note(format!(
                "Anthropic takes no audio in tool results; the {} was left out",
                block.summary()
            ));
            None
        }
        ContentBlock::ResourceLink {
            uri,
            name,
            description,
            ..
        } => {
            note("a resource link was sent as text naming it".into());
            let mut text = format!("Resource link: {name} <{uri}>");
            if let Some(description) = description {
                text.push_str(": ");
                text.push_str(description);
            }
            Some(json!({"type": "text", "text": fenced(&text)}))
        }
        ContentBlock::Resource { resource } => {
            let media_type = resource.media_type.as_deref().unwrap_or_default();
            match (&resource.text, &resource.blob) {
                (Some(text), _) => Some(json!({
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": fenced(text)},
                    // The URI is the tool's output as much as the data is.
                    "title": fenced(&resource.uri),
                })),
                (None, Some(blob)) if media_type == "application/pdf" => {
                    if untrusted {
                        note(
                            "an untrusted PDF cannot be fenced as data; it was sent as it is"
                                .into(),
                        );
                    }
                    Some(json!({
                        "type": "document",
                        "source": {"type": "base64", "media_type": media_type, "data": blob},
                        "title": fenced(&resource.uri),
                    }))
                }
                (None, Some(blob)) => image(blob, media_type).or_else(|| {
                    note(format!(
                        "Anthropic takes no embedded {} resources; the {} was left out",
                        if media_type.is_empty() {
                            "untyped"
                        } else {
                            media_type
                        },
                        block.summary()
                    ));
                    None
                }),
                (None, None) => {
                    note(format!("the empty resource {} was left out", resource.uri));
                    None
                }
            }
        }
    }
}

fn image(data: &str, media_type: &str) -> Option<Value> {
    IMAGE_TYPES.contains(&media_type).then(|| {
        json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
    })
}
