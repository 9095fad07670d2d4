//! [`Skill`]: a named bundle of instructions that depends on some tools.
//!
//! A skill's `tool_names` are a dependency check, not a grant: before the first provider turn the
//! run verifies that every name is among the run's granted tools and fails (writing nothing) when
//! one is missing. A skill never registers, allows or runs a tool.

use serde::{Deserialize, Serialize};

/// An active skill and the tools it expects to find.
///
/// ```
/// use prism::run::Skill;
///
/// let research = Skill::new("research").with_tool_names(["web_search", "fetch"]);
/// assert_eq!(research.tool_names, ["web_search", "fetch"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// The skill's name, for error messages.
    pub name: String,
    /// The tools it relies on.
    #[serde(default)]
    pub tool_names: Vec<String>,
}

impl Skill {
    /// A skill with no tool dependencies.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            tool_names: Vec::new(),
        }
    }

    /// Sets the tools the skill relies on.
    pub fn with_tool_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tool_names = names.into_iter().map(Into::into).collect();
        self
    }
}
