//! The four browser tools of one [`BrowserTools`], together: what a host registers. Kept apart
//! from `browser_tools.rs` because each tool file uses the shared state defined there.

use super::act_tool::browser_act;
use super::browser_tools::BrowserTools;
use super::navigate_tool::browser_navigate;
use super::screenshot_tool::browser_screenshot;
use super::snapshot_tool::browser_snapshot;
use crate::definition::ToolDefinition;

impl BrowserTools {
    /// The four tools: `browser_navigate`, `browser_snapshot`, `browser_act`,
    /// `browser_screenshot`.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        vec![
            browser_navigate(self.clone()),
            browser_snapshot(self.clone()),
            browser_act(self.clone()),
            browser_screenshot(self.clone()),
        ]
    }
}
