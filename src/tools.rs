//! First-party tools a host may select: plain [`ToolDefinition`](crate::ToolDefinition)
//! constructors, each family behind its own feature.
//!
//! - [`web`] (feature `web`): `web_fetch`, `web_extract` and `web_search` under one URL policy.
//! - [`browser`] (feature `browser`): `browser_navigate`, `browser_snapshot`, `browser_act` and
//!   `browser_screenshot` over a host-supplied Chromium, one browser context per run, under the
//!   same URL policy.

#[cfg(feature = "browser")]
pub use prism_tools::tools::browser;
#[cfg(feature = "web")]
pub use prism_tools::tools::web;
