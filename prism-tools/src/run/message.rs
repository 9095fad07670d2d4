//! [`Message`]: one row of a session's transcript.
//!
//! The transcript is what the provider sees on every turn and what a stored session keeps. Rows
//! are plain data (serde), so a session survives a restart: an assistant row lists the calls the
//! model made, and every one of those call ids is answered by exactly one tool row.

use serde::{Deserialize, Serialize};

use crate::call::{ReplayState, ToolCall, ToolResult};

/// One transcript row.
///
/// ```
/// use prism::Message;
///
/// let row = Message::user("What is 2 + 3?");
/// let text = serde_json::to_string(&row).unwrap();
/// assert_eq!(text, r#"{"role":"user","content":"What is 2 + 3?"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Input from the user or host.
    User {
        /// The text.
        content: String,
    },
    /// What the model answered: text, calls, or both.
    Assistant {
        /// The text (empty when the model only called tools).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        content: String,
        /// The calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "toolCalls")]
        tool_calls: Vec<ToolCall>,
        /// State the provider wants back with this message (reasoning items, thinking blocks),
        /// kept with the session and sent back unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<ReplayState>,
    },
    /// The answer to one call.
    Tool {
        /// The result, redacted by the dispatcher.
        result: ToolResult,
    },
}

impl Message {
    /// A user row.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant row.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls,
            replay: None,
        }
    }

    /// The assistant row of a provider's response, replay state included.
    pub fn from_response(response: &crate::run::ProviderResponse) -> Self {
        Self::Assistant {
            content: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
            replay: response.replay.clone(),
        }
    }

    /// A tool row.
    pub fn tool(result: ToolResult) -> Self {
        Self::Tool { result }
    }

    /// The result, when this is a tool row.
    pub fn as_tool_result(&self) -> Option<&ToolResult> {
        match self {
            Self::Tool { result } => Some(result),
            _ => None,
        }
    }
}
