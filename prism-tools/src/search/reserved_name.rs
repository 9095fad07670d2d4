//! The name `search_tools` is reserved in search mode: the run generates a tool of that name, so
//! a host tool with it would be ambiguous. [`check_reserved_name`] refuses such a tool list.

use std::fmt;

use crate::definition::ToolDefinition;

/// The reserved name of the generated tool.
pub const SEARCH_TOOLS_NAME: &str = "search_tools";

/// A host tool took the name reserved for the generated search tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservedToolName;

impl fmt::Display for ReservedToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "The tool name `{SEARCH_TOOLS_NAME}` is reserved when tools are disclosed by search; \
             rename the host tool"
        )
    }
}

impl std::error::Error for ReservedToolName {}

/// Refuses a tool list that contains a tool named `search_tools`. A search-mode run calls this
/// on its snapshot before the first provider turn and fails with the error.
///
/// ```
/// use prism::ToolDefinition;
/// use prism::search::check_reserved_name;
/// use serde_json::Value;
///
/// let tool = |name: &str| ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null));
/// assert!(check_reserved_name(&[tool("weather")]).is_ok());
/// let error = check_reserved_name(&[tool("weather"), tool("search_tools")]).unwrap_err();
/// assert!(error.to_string().contains("reserved"));
/// ```
pub fn check_reserved_name(tools: &[ToolDefinition]) -> Result<(), ReservedToolName> {
    match tools.iter().any(|tool| tool.name() == SEARCH_TOOLS_NAME) {
        true => Err(ReservedToolName),
        false => Ok(()),
    }
}
