//! [`ToolIcon`]: an image a client may show beside a tool (MCP's `icons`).

use serde::{Deserialize, Serialize};

/// An icon for a tool, as MCP clients show it in their tool lists. The host chooses the source;
/// nothing here fetches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolIcon {
    /// Where the image is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its media type, when the source does not say (`image/png`, `image/svg+xml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it fits, `WxH` (`"48x48"`) or `"any"` for a vector image; empty when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
}

impl ToolIcon {
    /// An icon at `src`, of no declared type or size.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
        }
    }

    /// Declares the media type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Declares one more size it fits.
    pub fn with_size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }
}
