//! Browser tools: `browser_navigate`, `browser_snapshot`, `browser_act` and
//! `browser_screenshot` over a host-supplied Chromium (feature `browser`).
//!
//! The host supplies the browser: [`Browser::launch`] starts the executable it names with its
//! flags ([`ChromiumLaunch`]), [`Browser::connect`] reaches one it runs itself. Nothing here
//! downloads a browser. [`BrowserTools`] holds the browser, the web tools' [`UrlPolicy`] and the
//! [`BrowserLimits`], and gives each run its own browser context (cookies, storage, cache and one
//! page), created by the run's first call and closed when the run ends, fails or is cancelled.
//!
//! - Every request a page makes passes the [`UrlPolicy`]: the URL asked for, each redirect hop,
//!   navigations the page starts itself, frames and subresources. A refused main-page request is
//!   a `url_refused` error naming the URL.
//! - A snapshot is the page's accessibility tree as text; its interactive elements carry refs
//!   (`e12`), and only the latest snapshot's refs can be acted on. A stale or unknown ref is a
//!   tool error that tells the model to take a new snapshot.
//! - The four tools are exclusive (a turn with one runs its calls in order), their output is
//!   marked untrusted and bounded, every step has a timeout, and a browser that crashed or was
//!   closed is a `browser_closed` error, never a hang.
//! - Nobody answers a page's dialogs, so the tools do as they open: `alert`, `confirm` and
//!   `prompt` are dismissed, and `beforeunload` lets the page go.
//!
//! ```no_run
//! # async fn demo() -> Result<(), prism::tools::browser::BrowserError> {
//! use prism::ToolRegistry;
//! use prism::tools::browser::{Browser, BrowserLimits, BrowserTools, ChromiumLaunch};
//! use prism::tools::web::UrlPolicy;
//!
//! let launch = ChromiumLaunch::new("/usr/bin/chromium").no_sandbox();
//! let browser = Browser::launch(&launch).await?;
//! let tools = BrowserTools::new(browser, UrlPolicy::new(), BrowserLimits::default());
//! let registry = ToolRegistry::from_iter(tools.definitions());
//! // Closing each run's context when the run ends: `agent.with_events(tools.clone())`.
//! # let _ = registry;
//! # Ok(())
//! # }
//! ```
//!
//! [`UrlPolicy`]: crate::tools::web::UrlPolicy

mod act;
mod act_tool;
mod browser_tools;
mod cdp;
mod connection;
mod definitions;
mod dialogs;
mod element;
mod error;
mod guard;
mod launch;
mod limits;
mod navigate_tool;
mod navigation;
mod owned_context;
mod page_info;
mod proxy;
mod refs;
mod run_context;
mod screenshot_tool;
mod snapshot;
mod snapshot_tool;
#[cfg(test)]
mod test_chromium;
mod tool_base;

pub use act_tool::browser_act;
pub use browser_tools::BrowserTools;
pub use connection::Browser;
pub use error::{BrowserError, BrowserErrorKind};
pub use launch::{ChromiumLaunch, DEFAULT_CHROMIUM_FLAGS};
pub use limits::BrowserLimits;
pub use navigate_tool::browser_navigate;
pub use screenshot_tool::browser_screenshot;
pub use snapshot_tool::browser_snapshot;
