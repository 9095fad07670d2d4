//! [`ToolScope`]: what one run or turn narrows the dispatcher down to.
//!
//! The dispatcher is built once; a run's grant, a turn's visible set and a run's own validator
//! reach it per call through the scope carried by the
//! [`ToolExecutionContext`](crate::ToolExecutionContext). A scope can only narrow what the builder
//! configured: the builder's filters and validators always run as well. Because the scope travels
//! in the context a tool receives, a tool that makes nested calls with its own context cannot
//! reach a name outside its run's grant.

use std::fmt;
use std::sync::Arc;

use crate::grant::ToolGrant;
use crate::guard::ToolValidator;
use crate::registry::RegistrySnapshot;

/// Per-call narrowing: a grant, this turn's visible tools, the run's validator, and optionally the
/// definitions the run pinned when it started.
#[derive(Clone, Default)]
pub struct ToolScope {
    grant: ToolGrant,
    visible: ToolGrant,
    validator: Option<Arc<dyn ToolValidator>>,
    pinned: Option<Arc<RegistrySnapshot>>,
}

impl ToolScope {
    /// A scope allowing exactly `grant`.
    pub fn new(grant: ToolGrant) -> Self {
        Self {
            grant,
            visible: ToolGrant::All,
            validator: None,
            pinned: None,
        }
    }

    /// Pins the definitions calls resolve to: a run snapshots its tools once, so a tool replaced
    /// in the registry mid-run does not change what the run executes. The live registry is still
    /// consulted (a tool removed from it is `unknown_tool`), and names outside the pinned set are
    /// `tool_denied`.
    pub fn with_pinned_tools(mut self, tools: Arc<RegistrySnapshot>) -> Self {
        self.pinned = Some(tools);
        self
    }

    /// The pinned definitions, if any.
    pub fn pinned_tools(&self) -> Option<&Arc<RegistrySnapshot>> {
        self.pinned.as_ref()
    }

    /// Also restricts calls to the tools shown this turn (names outside it are `tool_denied`).
    pub fn with_visible(mut self, visible: ToolGrant) -> Self {
        self.visible = self.visible.intersect(&visible);
        self
    }

    /// Adds the run's validator; it runs after the dispatcher's own validators.
    pub fn with_validator(mut self, validator: Arc<dyn ToolValidator>) -> Self {
        self.validator = Some(validator);
        self
    }

    /// Narrows this scope further: the result allows only what both allow.
    pub fn narrow(&self, grant: &ToolGrant) -> Self {
        Self {
            grant: self.grant.intersect(grant),
            visible: self.visible.clone(),
            validator: self.validator.clone(),
            pinned: self.pinned.clone(),
        }
    }

    /// This scope nested inside `parent`: grants and visible sets intersect, and when this scope
    /// has no validator of its own the parent's still applies.
    pub fn within(self, parent: &ToolScope) -> Self {
        Self {
            grant: self.grant.intersect(&parent.grant),
            visible: self.visible.intersect(&parent.visible),
            validator: self.validator.or_else(|| parent.validator.clone()),
            pinned: self.pinned.or_else(|| parent.pinned.clone()),
        }
    }

    /// The run's grant.
    pub fn grant(&self) -> &ToolGrant {
        &self.grant
    }

    /// True when the scope lets `name` be called.
    pub fn allows(&self, name: &str) -> bool {
        self.grant.allows(name) && self.visible.allows(name)
    }

    /// The tools visible this turn.
    pub fn visible_grant(&self) -> &ToolGrant {
        &self.visible
    }

    /// The run's validator, if any.
    pub fn validator(&self) -> Option<&Arc<dyn ToolValidator>> {
        self.validator.as_ref()
    }
}

impl fmt::Debug for ToolScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolScope")
            .field("grant", &self.grant)
            .field("visible", &self.visible)
            .field("validator", &self.validator.is_some())
            .field("pinned", &self.pinned)
            .finish()
    }
}
