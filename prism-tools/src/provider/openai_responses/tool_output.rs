//! A tool result as a `function_call_output`'s `output`: text, or content parts (`input_text`,
//! `input_image`, `input_file`) when the tool returned content blocks.
//!
//! A value goes as its JSON text; a blocked or failed call as `Error [<code>]: <message>` in the
//! names the model saw. Untrusted output is fenced as data, and an untrusted embedded file goes
//! under a neutral name (`file.pdf`), since a file name cannot be fenced. The API takes no audio
//! in a tool output, and has no part for a link or an embedded text resource: audio is replaced
//! by a line saying what was left out, links and text resources become text, and each of these
//! is noted.

use serde_json::{Value, json};

use crate::call::{ContentBlock, ToolOutcome, ToolResult};
use crate::provider::untrusted::fence_untrusted;
use crate::provider::wire::{EncodeNote, ToolTable};

/// The `output` of `result`; notes go under `at`.
pub(super) fn output(
    result: &ToolResult,
    tools: &ToolTable,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let fence = |text: String| {
        if result.is_untrusted() {
            fence_untrusted(&text)
        } else {
            text
        }
    };
    let head = match &result.outcome {
        ToolOutcome::Value(Value::Null) if !result.content().is_empty() => None,
        ToolOutcome::Value(value) => Some(value.to_string()),
        ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => Some(format!(
            "Error [{}]: {}",
            error.code.as_str(),
            tools.to_wire_text(&error.message)
        )),
    };
    if result.content().is_empty() {
        return Value::String(fence(head.unwrap_or_default()));
    }
    let mut parts = Vec::with_capacity(result.content().len() + 1);
    if let Some(head) = head {
        parts.push(input_text(fence(head)));
    }
    for (index, block) in result.content().iter().enumerate() {
        let at = format!("{at}/content/{index}");
        parts.push(block_part(block, &fence, result.is_untrusted(), &at, notes));
    }
    Value::Array(parts)
}

fn input_text(text: String) -> Value {
    json!({ "type": "input_text", "text": text })
}

/// A data URL of `data`. A media type that is not one (`type/subtype` in the characters media
/// type names use, RFC 6838) is sent as `application/octet-stream`: it came from the tool, and a
/// data URL must not carry its text.
fn data_url(media_type: &str, data: &str) -> String {
    let name_chars = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let media_type = match media_type.split_once('/') {
        Some((kind, subtype)) if name_chars(kind) && name_chars(subtype) => media_type,
        _ => "application/octet-stream",
    };
    format!("data:{media_type};base64,{data}")
}

/// The name an embedded file is sent under: its URI's last segment, or, when the result is
/// untrusted, `file` with that segment's extension only. A file name cannot be fenced, and the
/// remote side chose it.
fn file_name(uri: &str, untrusted: bool) -> String {
    let segment = uri.split(['?', '#']).next().unwrap_or(uri);
    let segment = segment.rsplit('/').next().unwrap_or(segment);
    if !untrusted {
        return segment.to_owned();
    }
    match segment.rsplit_once('.') {
        Some((_, extension))
            if (1..=10).contains(&extension.len())
                && extension.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            format!("file.{extension}")
        }
        _ => "file".to_owned(),
    }
}

fn block_part(
    block: &ContentBlock,
    fence: &dyn Fn(String) -> String,
    untrusted: bool,
    at: &str,
    notes: &mut Vec<EncodeNote>,
) -> Value {
    let mut note = |note: &str| {
        notes.push(EncodeNote {
            at: at.to_owned(),
            note: note.to_owned(),
        })
    };
    match block {
        ContentBlock::Text { text } => input_text(fence(text.clone())),
        ContentBlock::Image { data, media_type } => {
            json!({ "type": "input_image", "image_url": data_url(media_type, data) })
        }
        ContentBlock::Audio { .. } => {
            note("audio is not accepted in a tool output; a line saying it was left out is sent");
            input_text(format!("[{} left out: not accepted here]", block.summary()))
        }
        ContentBlock::ResourceLink {
            uri,
            name,
            description,
            media_type,
        } => {
            note("a resource link is sent as text");
            let mut text = format!("Resource link: {name} <{uri}>");
            if let Some(media_type) = media_type {
                text.push_str(&format!(" ({media_type})"));
            }
            if let Some(description) = description {
                text.push_str(&format!(": {description}"));
            }
            input_text(fence(text))
        }
        ContentBlock::Resource { resource } => {
            let media_type = resource.media_type.as_deref();
            match (&resource.text, &resource.blob) {
                (Some(text), _) => {
                    note("an embedded text resource is sent as text");
                    let kind = media_type.map(|t| format!(" ({t})")).unwrap_or_default();
                    input_text(fence(format!("Resource {}{kind}:\n{text}", resource.uri)))
                }
                (None, Some(blob)) => {
                    let media_type = media_type.unwrap_or("application/octet-stream");
                    if media_type.starts_with("image/") {
                        json!({ "type": "input_image", "image_url": data_url(media_type, blob) })
                    } else {
                        json!({
                            "type": "input_file",
                            "filename": file_name(&resource.uri, untrusted),
                            "file_data": data_url(media_type, blob),
                        })
                    }
                }
                (None, None) => {
                    note("an embedded resource without contents is sent as its URI");
                    input_text(fence(format!("Resource {} (empty)", resource.uri)))
                }
            }
        }
    }
}

/// One output for the parts of a `parallel` wrapper, in part order: a JSON array of
/// `{recipient_name, output}` when every part's output is text, else content parts, each part's
/// introduced by a line naming its tool.
pub(super) fn wrapper_output(parts: Vec<(String, Value)>) -> Value {
    if parts.iter().all(|(_, output)| output.is_string()) {
        let list: Vec<Value> = parts
            .into_iter()
            .map(|(wire_name, output)| {
                json!({ "recipient_name": format!("functions.{wire_name}"), "output": output })
            })
            .collect();
        return Value::String(Value::Array(list).to_string());
    }
    let mut out = Vec::new();
    for (wire_name, output) in parts {
        out.push(input_text(format!("Output of functions.{wire_name}:")));
        match output {
            Value::String(text) => out.push(input_text(text)),
            Value::Array(items) => out.extend(items),
            other => out.push(input_text(other.to_string())),
        }
    }
    Value::Array(out)
}
