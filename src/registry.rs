//! Which tools exist and which a call may reach.
//!
//! [`ToolRegistry`](crate::ToolRegistry) is at the crate root. Here are its errors and snapshots,
//! the host's exact allow and deny lists ([`ToolFilter`], [`filter_tools`]), a run's grant
//! ([`ToolGrant`]: empty means none, unlike an empty filter), the per-call [`ToolScope`] that only
//! narrows, and tools contributed by extensions ([`ContributionRegistries`]).

pub use prism_tools::contributions::{ContributedTools, ContributionRegistries, ExtensionApi};
pub use prism_tools::filter::{CompiledFilters, ToolFilter, filter_tools};
pub use prism_tools::grant::ToolGrant;
pub use prism_tools::registry::{
    DuplicatePolicy, DuplicateTool, MissingParameterSchema, RegistryError, RegistrySnapshot,
    UnknownTool,
};
pub use prism_tools::scope::ToolScope;
