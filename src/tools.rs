//! First-party tools a host may select: plain [`ToolDefinition`](crate::ToolDefinition)
//! constructors, each family behind its own feature.
//!
//! - [`web`] (feature `web`): `web_fetch`, `web_extract` and `web_search` under one URL policy.

#[cfg(feature = "web")]
pub use prism_tools::tools::web;
