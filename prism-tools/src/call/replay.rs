//! [`ReplayState`]: what a provider asked to be sent back, byte for byte, on the next turn.
//!
//! Reasoning models attach opaque state to their answers: Gemini's `thoughtSignature` on a
//! function call, OpenAI Responses' reasoning items (encrypted content) and `fc_…` item ids,
//! Anthropic's thinking blocks with their signatures. A provider that does not get them back
//! refuses the next turn or reasons from scratch. Nothing in the pipeline reads this state: it is
//! kept on the assistant message and on each tool call, stored with the session, and handed to
//! the wire format that produced it, unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Opaque state one wire format attached to an assistant message or a tool call.
///
/// `format` names the wire format that wrote it (`"openai-chat"`, `"openai-responses"`,
/// `"anthropic"`, `"gemini"`); a format only reads back its own state, so a transcript that moves
/// to another provider sends no foreign data.
///
/// ```
/// use prism::call::ReplayState;
/// use serde_json::json;
///
/// let state = ReplayState::new("gemini", json!({"thoughtSignature": "c2lnbmF0dXJl"}));
/// assert_eq!(state.data_for("gemini"), Some(&json!({"thoughtSignature": "c2lnbmF0dXJl"})));
/// assert_eq!(state.data_for("anthropic"), None);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayState {
    /// The wire format that wrote the state.
    pub format: String,
    /// The state, as that format wants it back.
    pub data: Value,
}

impl ReplayState {
    /// State written by `format`.
    pub fn new(format: impl Into<String>, data: Value) -> Self {
        Self {
            format: format.into(),
            data,
        }
    }

    /// The data, when `format` wrote it.
    pub fn data_for(&self, format: &str) -> Option<&Value> {
        (self.format == format).then_some(&self.data)
    }
}
