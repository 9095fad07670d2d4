//! [`ToolChoice`]: whether, and which, tools the model must call on a turn.

use serde::{Deserialize, Serialize};

/// Whether the model may, must or must not call tools on a turn.
///
/// The name in [`ToolChoice::Tool`] is the registered one; wire formats send the name the model
/// sees. A forced tool that is not among the turn's described tools is the wire format's error
/// to report, not a silent switch to `auto`.
///
/// ```
/// use prism::run::ToolChoice;
///
/// assert_eq!(ToolChoice::default(), ToolChoice::Auto);
/// let forced = ToolChoice::tool("get_weather");
/// assert_eq!(serde_json::to_string(&forced).unwrap(), r#"{"tool":"get_weather"}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls this turn (the tools are still described).
    None,
    /// At least one tool call.
    Required,
    /// A call to this tool.
    Tool(String),
}

impl ToolChoice {
    /// A call to the tool registered as `name`.
    pub fn tool(name: impl Into<String>) -> Self {
        Self::Tool(name.into())
    }
}
