//! Contributions: tools that extensions offer, which stay inert until the host picks them.
//!
//! An extension calls [`ExtensionApi::register_tool`]; nothing runs, nothing is dispatched and no
//! registry changes. The host then resolves the contributions it wants and registers them in its
//! [`ToolRegistry`] explicitly.

use std::sync::Arc;

use crate::definition::ToolDefinition;
use crate::registry::{RegistryError, ToolRegistry, UnknownTool};

/// Every kind of contribution an extension can make. Tools are the only kind so far.
#[derive(Clone, Debug, Default)]
pub struct ContributionRegistries {
    /// Contributed tools, inert: a separate registry that no dispatcher reads unless the host
    /// copies tools out of it.
    pub tools: ContributedTools,
}

impl ContributionRegistries {
    /// Empty registries.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Contributed tools by name. Duplicate names are refused, so two extensions cannot silently
/// shadow each other.
#[derive(Clone, Debug)]
pub struct ContributedTools(ToolRegistry);

impl Default for ContributedTools {
    fn default() -> Self {
        Self(ToolRegistry::strict())
    }
}

impl ContributedTools {
    /// Stores a contribution under `tool.name()`; a name already contributed is
    /// [`RegistryError::Duplicate`].
    pub fn register(&self, tool: ToolDefinition) -> Result<(), RegistryError> {
        self.0.register(tool)
    }

    /// The contribution called `name`.
    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        self.0.get(name)
    }

    /// The contribution called `name`, or `Unknown tool: <name>`.
    pub fn resolve(&self, name: &str) -> Result<ToolDefinition, UnknownTool> {
        self.0.resolve(name)
    }

    /// Every contribution, in the order contributed.
    pub fn list(&self) -> Vec<ToolDefinition> {
        self.0.list()
    }
}

/// What an extension is handed when it loads.
///
/// ```
/// use prism::{ToolDefinition, ToolRegistry};
/// use prism::registry::{ContributionRegistries, ExtensionApi};
/// use serde_json::Value;
///
/// let contributions = ContributionRegistries::new();
/// let api = ExtensionApi::new(contributions.clone());
/// api.register_tool(ToolDefinition::builder("echo").run_sync(|args, _| Ok(args.clone()))).unwrap();
///
/// // Nothing is active until the host says so.
/// let active = ToolRegistry::new();
/// assert!(active.get("echo").is_none());
/// active.register(contributions.tools.resolve("echo").unwrap()).unwrap();
/// assert!(active.get("echo").is_some());
/// ```
#[derive(Clone, Debug)]
pub struct ExtensionApi {
    contributions: Arc<ContributionRegistries>,
}

impl ExtensionApi {
    /// An API writing into `contributions`.
    pub fn new(contributions: ContributionRegistries) -> Self {
        Self {
            contributions: Arc::new(contributions),
        }
    }

    /// Contributes a tool. It is stored, not activated.
    pub fn register_tool(&self, tool: ToolDefinition) -> Result<(), RegistryError> {
        self.contributions.tools.register(tool)
    }
}
