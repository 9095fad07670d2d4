//! [`ContentBlock`]: what a tool may return beside, or instead of, a structured value.
//!
//! Models read more than JSON: a chart as an image, a recording as audio, a file as a link or as
//! an embedded resource. A tool result carries such blocks in order; each wire format maps the
//! kinds its provider takes and reports the ones it had to leave out, never dropping one
//! silently. The shape on the wire is MCP's (`{"type": "image", "data", "mimeType"}`…), so blocks
//! cross an MCP bridge unchanged.
//!
//! Binary data stays base64 text, as every provider and MCP carry it; events, ledger rows and
//! logs never write it inline, only its media type and decoded size ([`ContentBlock::summary`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// One block of tool output.
///
/// ```
/// use prism::call::ContentBlock;
///
/// let chart = ContentBlock::image_bytes(&[0x89, b'P', b'N', b'G'], "image/png");
/// assert_eq!(chart.summary().to_string(), "image (image/png, 4 bytes)");
/// let json = serde_json::to_value(&chart).unwrap();
/// assert_eq!(json["type"], "image");
/// assert_eq!(json["mimeType"], "image/png");
/// assert_eq!(json["data"], "iVBORw==");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// The bytes, base64 (standard alphabet, padded).
        data: String,
        /// The media type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        media_type: String,
    },
    /// Audio, base64.
    Audio {
        /// The bytes, base64 (standard alphabet, padded).
        data: String,
        /// The media type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        media_type: String,
    },
    /// A link to a resource the reader may fetch.
    ResourceLink {
        /// Where the resource is.
        uri: String,
        /// A name for it.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    /// A resource whose contents travel with the result.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
}

/// The contents of an embedded resource: text or base64 bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The resource's URI.
    pub uri: String,
    /// Its media type.
    #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary contents, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl ContentBlock {
    /// The block's texts that output guardrails read and the redactor searches: a text block's
    /// text, a link's URI, name and description, an embedded resource's URI and text. Never
    /// base64 data; the redactor also searches media types (see [`texts_mut`](Self::texts_mut)).
    pub(crate) fn texts(&self) -> [Option<&str>; 3] {
        match self {
            Self::Text { text } => [Some(text), None, None],
            Self::ResourceLink {
                uri,
                name,
                description,
                ..
            } => [Some(uri), Some(name), description.as_deref()],
            Self::Resource { resource } => [Some(&resource.uri), resource.text.as_deref(), None],
            Self::Image { .. } | Self::Audio { .. } => [None, None, None],
        }
    }

    /// What the redactor rewrites in place: the [`texts`](Self::texts), and the media type,
    /// which is the tool's text like any other (a remote server's may quote what it was sent).
    pub(crate) fn texts_mut(&mut self) -> [Option<&mut String>; 4] {
        match self {
            Self::Text { text } => [Some(text), None, None, None],
            Self::ResourceLink {
                uri,
                name,
                description,
                media_type,
            } => [
                Some(uri),
                Some(name),
                description.as_mut(),
                media_type.as_mut(),
            ],
            Self::Resource { resource } => [
                Some(&mut resource.uri),
                resource.text.as_mut(),
                resource.media_type.as_mut(),
                None,
            ],
            Self::Image { media_type, .. } | Self::Audio { media_type, .. } => {
                [Some(media_type), None, None, None]
            }
        }
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image from raw bytes.
    pub fn image_bytes(bytes: &[u8], media_type: impl Into<String>) -> Self {
        Self::Image {
            data: encode_base64(bytes),
            media_type: media_type.into(),
        }
    }

    /// An image already in base64.
    pub fn image_base64(data: impl Into<String>, media_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            media_type: media_type.into(),
        }
    }

    /// Audio from raw bytes.
    pub fn audio_bytes(bytes: &[u8], media_type: impl Into<String>) -> Self {
        Self::Audio {
            data: encode_base64(bytes),
            media_type: media_type.into(),
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            media_type: None,
        }
    }

    /// An embedded text resource.
    pub fn resource_text(
        uri: impl Into<String>,
        media_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::Resource {
            resource: EmbeddedResource {
                uri: uri.into(),
                media_type,
                text: Some(text.into()),
                blob: None,
            },
        }
    }

    /// The block's kind as its wire name: `text`, `image`, `audio`, `resource_link`, `resource`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::Audio { .. } => "audio",
            Self::ResourceLink { .. } => "resource_link",
            Self::Resource { .. } => "resource",
        }
    }

    /// The text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }

    /// What may be logged about the block: its kind, media type and size, never binary data.
    pub fn summary(&self) -> ContentSummary<'_> {
        ContentSummary(self)
    }
}

/// A block as logs show it; see [`ContentBlock::summary`].
#[derive(Clone, Copy, Debug)]
pub struct ContentSummary<'a>(&'a ContentBlock);

impl fmt::Display for ContentSummary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ContentBlock::Text { text } => write!(f, "text ({} bytes)", text.len()),
            ContentBlock::Image { data, media_type } | ContentBlock::Audio { data, media_type } => {
                let kind = self.0.kind();
                write!(f, "{kind} ({media_type}, {} bytes)", decoded_len(data))
            }
            ContentBlock::ResourceLink { uri, .. } => write!(f, "resource_link ({uri})"),
            ContentBlock::Resource { resource } => {
                let media_type = resource.media_type.as_deref().unwrap_or("unknown type");
                let bytes = match (&resource.text, &resource.blob) {
                    (Some(text), _) => text.len(),
                    (None, Some(blob)) => decoded_len(blob),
                    (None, None) => 0,
                };
                write!(
                    f,
                    "resource ({}, {media_type}, {bytes} bytes)",
                    resource.uri
                )
            }
        }
    }
}

fn encode_base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The decoded size of base64 text, from its length and padding (no decoding).
pub(super) fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count().min(2);
    (data.len() / 4 * 3 + (data.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decoded_sizes_follow_the_padding() {
        for len in 0..10 {
            let bytes = vec![7u8; len];
            assert_eq!(decoded_len(&encode_base64(&bytes)), len);
        }
    }

    #[test]
    fn blocks_use_the_mcp_wire_shape() {
        let link = ContentBlock::resource_link("file:///a.txt", "a.txt");
        assert_eq!(
            serde_json::to_value(&link).unwrap(),
            json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"})
        );
        let embedded = ContentBlock::resource_text("mem://x", Some("text/plain".into()), "hi");
        let wire = serde_json::to_value(&embedded).unwrap();
        assert_eq!(
            wire,
            json!({"type": "resource", "resource": {"uri": "mem://x", "mimeType": "text/plain", "text": "hi"}})
        );
        assert_eq!(
            serde_json::from_value::<ContentBlock>(wire).unwrap(),
            embedded
        );
        assert_eq!(
            ContentBlock::audio_bytes(&[1, 2, 3, 4, 5], "audio/wav")
                .summary()
                .to_string(),
            "audio (audio/wav, 5 bytes)"
        );
    }
}
