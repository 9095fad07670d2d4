//! [`ToolScope`]: what one run or turn narrows the dispatcher down to.
//!
//! The dispatcher is built once; a run's grant, a turn's visible set and a run's own validators
//! reach it per call through the scope carried by the [`ToolExecutionContext`]. A scope can only
//! narrow what the builder configured: the builder's filters and validators always run as well.
//! Because the scope travels in the context a tool receives, a tool that makes nested calls with
//! its own context cannot reach a name outside its run's grant.
//!
//! One tool can come from the scope instead of the registry: the `search_tools` tool a run
//! generates for a turn in search mode (see [`search`](crate::search)). Only the run layer can put
//! it there (the setter is crate-private), a scope nested inside another keeps it only when the
//! outer scope carries the very same definition, and every guard after the lookup (the builder's
//! filters, trust, permission, validators) still applies to it. So a scope never makes a host
//! tool callable that the host did not register, and the generated tool is callable exactly
//! during the turn whose request described it.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::context::{ScopeSlot, ToolExecutionContext};
use crate::definition::ToolDefinition;
use crate::grant::ToolGrant;
use crate::guard::ArgumentValidator;
use crate::panic::guarded;
use crate::registry::RegistrySnapshot;

/// The run's answer to "does this call need a person's approval?" (its approval policy), for
/// calls dispatched where nobody can be asked: a tool's nested calls.
pub(crate) type ApprovalCheck = Arc<dyn Fn(&ToolDefinition, &Value) -> bool + Send + Sync>;

/// Per-call narrowing: a grant, this turn's visible tools, the run's validators, and optionally
/// the definitions the run pinned when it started.
#[derive(Clone, Default)]
pub struct ToolScope {
    grant: ToolGrant,
    visible: ToolGrant,
    /// Outermost first: a nested scope adds to its parent's, never replaces them.
    validators: Vec<Arc<dyn ArgumentValidator>>,
    pinned: Option<Arc<RegistrySnapshot>>,
    /// A tool the run itself provides for one turn (search mode's `search_tools`).
    run_tool: Option<ToolDefinition>,
    /// The run's approval policy, for calls dispatched without an approval gate.
    approval: Option<ApprovalCheck>,
}

impl ToolScope {
    /// A scope allowing exactly `grant`.
    pub fn new(grant: ToolGrant) -> Self {
        Self {
            grant,
            visible: ToolGrant::All,
            validators: Vec::new(),
            pinned: None,
            run_tool: None,
            approval: None,
        }
    }

    /// Carries the run's approval policy, so a call dispatched without an approval gate (a
    /// tool's nested call) that the policy asks about is refused instead of run unapproved.
    pub(crate) fn with_approval_check(mut self, check: ApprovalCheck) -> Self {
        self.approval = Some(check);
        self
    }

    /// Whether the run's approval policy asks about this call; a panicking policy asks. The
    /// run's own tool never waits for approval, here as in the run's batches.
    pub(crate) fn asks_approval(&self, tool: &ToolDefinition, arguments: &Value) -> bool {
        if self.run_tool.as_ref().is_some_and(|own| own.ptr_eq(tool)) {
            return false;
        }
        self.approval
            .as_ref()
            .is_some_and(|check| guarded(|| check(tool, arguments)).unwrap_or(true))
    }

    /// Lets this scope's calls reach `tool`, which is not in the registry: the run's generated
    /// `search_tools` for one turn. Dispatch resolves the tool's name to it before looking in the
    /// registry, then applies every later guard as usual.
    pub(crate) fn with_run_tool(mut self, tool: ToolDefinition) -> Self {
        self.run_tool = Some(tool);
        self
    }

    /// The run-provided tool called `name`, if this scope carries one.
    pub(crate) fn run_tool(&self, name: &str) -> Option<&ToolDefinition> {
        self.run_tool.as_ref().filter(|tool| tool.name() == name)
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

    /// Adds a validator of the run's; the scope's validators run after the dispatcher's own, in
    /// the order they were added, and every one must let the call through.
    pub fn with_validator(mut self, validator: Arc<dyn ArgumentValidator>) -> Self {
        self.validators.push(validator);
        self
    }

    /// Narrows this scope further: the result allows only what both allow.
    pub fn narrow(&self, grant: &ToolGrant) -> Self {
        Self {
            grant: self.grant.intersect(grant),
            visible: self.visible.clone(),
            validators: self.validators.clone(),
            pinned: self.pinned.clone(),
            run_tool: self
                .run_tool
                .clone()
                .filter(|tool| grant.allows(tool.name())),
            approval: self.approval.clone(),
        }
    }

    /// This scope nested inside `parent`: grants and visible sets intersect, and the parent's
    /// validators run before this scope's own (a nested scope cannot drop them). The parent's
    /// pinned tools, when it has some, stay the ones calls resolve to: a nested scope cannot
    /// reach a tool registered after its run started by pinning a later snapshot. A
    /// run-provided tool survives only when both scopes carry the same one: a nested scope
    /// cannot bring its own.
    pub fn within(self, parent: &ToolScope) -> Self {
        let run_tool = match (self.run_tool, &parent.run_tool) {
            (Some(own), Some(outer)) if own.ptr_eq(outer) => Some(own),
            _ => None,
        };
        Self {
            grant: self.grant.intersect(&parent.grant),
            visible: self.visible.intersect(&parent.visible),
            validators: parent
                .validators
                .iter()
                .chain(&self.validators)
                .cloned()
                .collect(),
            pinned: parent.pinned.clone().or(self.pinned),
            run_tool,
            // A nested scope cannot drop the approval policy of the run it runs in.
            approval: parent.approval.clone().or(self.approval),
        }
    }

    /// The run's grant.
    pub fn grant(&self) -> &ToolGrant {
        &self.grant
    }

    /// True when the scope lets `name` be called: granted and visible this turn, or the tool the
    /// run provides for this turn.
    pub fn allows(&self, name: &str) -> bool {
        self.run_tool(name).is_some() || (self.grant.allows(name) && self.visible.allows(name))
    }

    /// The tools visible this turn.
    pub fn visible_grant(&self) -> &ToolGrant {
        &self.visible
    }

    /// The run's validators, outermost first.
    pub fn validators(&self) -> &[Arc<dyn ArgumentValidator>] {
        &self.validators
    }
}

impl ScopeSlot for ToolScope {}

/// The run's scope travels in the execution context, so that a tool's nested calls stay inside
/// the run's grant.
impl ToolExecutionContext {
    /// Narrows every call made with this context to `scope`. A context that already has a scope
    /// keeps only what both allow, so a nested caller cannot widen its parent's grant.
    pub fn with_scope(mut self, scope: ToolScope) -> Self {
        let scope = match self.scope() {
            Some(parent) => scope.within(parent),
            None => scope,
        };
        self.set_scope_slot(Arc::new(scope));
        self
    }

    /// The run's scope, if any.
    pub fn scope(&self) -> Option<&ToolScope> {
        let slot: &dyn std::any::Any = &**self.scope_slot()?;
        slot.downcast_ref()
    }
}

impl fmt::Debug for ToolScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolScope")
            .field("grant", &self.grant)
            .field("visible", &self.visible)
            .field("validators", &self.validators.len())
            .field("approval", &self.approval.is_some())
            .field("pinned", &self.pinned)
            .field(
                "run_tool",
                &self.run_tool.as_ref().map(ToolDefinition::name),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition::builder(name).run_sync(|_, _| Ok(Value::Null))
    }

    #[test]
    fn a_run_tool_is_allowed_only_by_the_scope_that_carries_it() {
        let search = tool("search_tools");
        let turn = ToolScope::new(ToolGrant::only(["a"])).with_run_tool(search.clone());
        assert!(turn.allows("search_tools") && turn.allows("a"));
        assert!(turn.run_tool("a").is_none());

        // Nested: kept when the inner scope is the turn's own, dropped otherwise.
        assert!(turn.clone().within(&turn).allows("search_tools"));
        assert!(
            !ToolScope::new(ToolGrant::All)
                .within(&turn)
                .allows("search_tools")
        );
        let forged = ToolScope::new(ToolGrant::All).with_run_tool(tool("search_tools"));
        assert!(!forged.within(&turn).allows("search_tools"));

        // Narrowing keeps it only when the narrower grant names it.
        assert!(!turn.narrow(&ToolGrant::only(["a"])).allows("search_tools"));
        assert!(turn.narrow(&ToolGrant::All).allows("search_tools"));
    }
}
