//! [`ContentRecord`]: a content block as events and ledger rows keep it, without binary data.
//!
//! An image of a few megabytes has no place in an audit row or a log line, and base64 there only
//! costs storage and hides nothing from a reader who should not see it. So events and rows carry
//! each block's kind, media type and decoded size, and the text a reader can check (text blocks,
//! embedded text resources, links); the result handed to the host keeps the whole blocks.

use serde::{Deserialize, Serialize};

use super::content::{ContentBlock, decoded_len};

/// A [`ContentBlock`] as events and ledger rows record it: binary data (an image's or audio's
/// `data`, an embedded resource's `blob`) is replaced by its decoded size in bytes; everything
/// else is kept (redacted, as the result is).
///
/// ```
/// use prism::call::{ContentBlock, ContentRecord};
///
/// let chart = ContentBlock::image_bytes(&[0x89, b'P', b'N', b'G'], "image/png");
/// let json = serde_json::to_value(ContentRecord::of(&chart)).unwrap();
/// assert_eq!(json, serde_json::json!({"type": "image", "mimeType": "image/png", "size": 4}));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentRecord {
    /// A text block, whole.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The media type.
        #[serde(rename = "mimeType")]
        media_type: String,
        /// The decoded size in bytes.
        size: u64,
    },
    /// Audio.
    Audio {
        /// The media type.
        #[serde(rename = "mimeType")]
        media_type: String,
        /// The decoded size in bytes.
        size: u64,
    },
    /// A link, whole.
    ResourceLink {
        /// Where the resource is.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    /// An embedded resource: its text whole, its binary contents by size.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its media type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
        /// Text contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The decoded size in bytes of binary contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
}

impl ContentRecord {
    /// The record's texts and media type, as [`ContentBlock`]'s: what the redactor searches.
    pub(crate) fn texts_mut(&mut self) -> [Option<&mut String>; 4] {
        match self {
            Self::Text { text } => [Some(text), None, None, None],
            Self::ResourceLink {
                uri,
                name,
                description,
                media_type,
                ..
            } => [
                Some(uri),
                Some(name),
                description.as_mut(),
                media_type.as_mut(),
            ],
            Self::Resource {
                uri,
                text,
                media_type,
                ..
            } => [Some(uri), text.as_mut(), media_type.as_mut(), None],
            Self::Image { media_type, .. } | Self::Audio { media_type, .. } => {
                [Some(media_type), None, None, None]
            }
        }
    }

    /// The record of `block`.
    pub fn of(block: &ContentBlock) -> Self {
        let size = |data: &str| u64::try_from(decoded_len(data)).unwrap_or(u64::MAX);
        match block {
            ContentBlock::Text { text } => Self::Text { text: text.clone() },
            ContentBlock::Image { data, media_type } => Self::Image {
                media_type: media_type.clone(),
                size: size(data),
            },
            ContentBlock::Audio { data, media_type } => Self::Audio {
                media_type: media_type.clone(),
                size: size(data),
            },
            ContentBlock::ResourceLink {
                uri,
                name,
                description,
                media_type,
            } => Self::ResourceLink {
                uri: uri.clone(),
                name: name.clone(),
                description: description.clone(),
                media_type: media_type.clone(),
            },
            ContentBlock::Resource { resource } => Self::Resource {
                uri: resource.uri.clone(),
                media_type: resource.media_type.clone(),
                text: resource.text.clone(),
                size: resource.blob.as_deref().map(size),
            },
        }
    }

    /// The records of `blocks`, in order; allocates nothing when there are none.
    pub fn of_all(blocks: &[ContentBlock]) -> Vec<Self> {
        blocks.iter().map(Self::of).collect()
    }

    /// The block's kind as its wire name, as [`ContentBlock::kind`] says it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::Audio { .. } => "audio",
            Self::ResourceLink { .. } => "resource_link",
            Self::Resource { .. } => "resource",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_keep_text_and_links_and_size_binary_data() {
        let blob = ContentBlock::Resource {
            resource: super::super::content::EmbeddedResource {
                uri: "mem://a.bin".into(),
                media_type: Some("application/octet-stream".into()),
                text: None,
                blob: Some("AAECAw==".into()),
            },
        };
        let records = ContentRecord::of_all(&[
            ContentBlock::text("hello"),
            ContentBlock::audio_bytes(&[1, 2, 3], "audio/wav"),
            ContentBlock::resource_link("https://example.com/a", "a"),
            blob,
        ]);
        let json = serde_json::to_value(&records).unwrap();
        assert_eq!(
            json,
            json!([
                {"type": "text", "text": "hello"},
                {"type": "audio", "mimeType": "audio/wav", "size": 3},
                {"type": "resource_link", "uri": "https://example.com/a", "name": "a"},
                {"type": "resource", "uri": "mem://a.bin", "mimeType": "application/octet-stream", "size": 4}
            ])
        );
        assert_eq!(
            serde_json::from_value::<Vec<ContentRecord>>(json).unwrap(),
            records
        );
        assert_eq!(records[1].kind(), "audio");
    }
}

/// What a terminal event or ledger row records of a tool's output besides its value: the
/// records of its content blocks and the untrusted mark. Events and rows carry it boxed and only
/// when there is something to say, so a plain result costs them one empty pointer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputRecord {
    /// The content blocks the tool returned, as records without their binary data.
    pub content: Vec<ContentRecord>,
    /// True when the output comes from a tool marked
    /// [`untrusted_output`](crate::definition::ToolDefinition::untrusted_output).
    pub untrusted: bool,
}

impl OutputRecord {
    /// The record of `content` and the untrusted mark; `None` for a trusted output without
    /// content blocks.
    #[inline]
    pub fn of(content: &[ContentBlock], untrusted: bool) -> Option<Box<Self>> {
        if content.is_empty() && !untrusted {
            return None;
        }
        Self::boxed(ContentRecord::of_all(content), untrusted)
    }

    /// `content` and the mark, boxed; `None` when there is nothing to record.
    pub(crate) fn boxed(content: Vec<ContentRecord>, untrusted: bool) -> Option<Box<Self>> {
        (!content.is_empty() || untrusted).then(|| Box::new(Self { content, untrusted }))
    }
}
