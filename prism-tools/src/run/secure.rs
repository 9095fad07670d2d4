//! [`Agent::secure`]: an agent on which no side effect runs without the host's checks.
//!
//! A secure agent needs, at compile time, a [`SecureDispatcher`] (trust, permission and a
//! validator, each certainly given), and at construction an approval store and a non-empty
//! parameter schema on every registered tool. It asks for approval before every destructive tool
//! unless given another [`ApprovalPolicy`](crate::run::ApprovalPolicy), and every run re-checks
//! the schemas of the tools it is granted (tools registered after construction included), failing
//! before anything is written when one is missing.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::definition::ToolDefinition;
use crate::dispatch::SecureDispatcher;
use crate::run::{Agent, ApprovalStore, DestructiveTools, Provider};

/// A tool without a usable parameter schema kept [`Agent::secure`] from building.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecureAgentError {
    /// The tools without a non-empty schema.
    pub tools: Vec<String>,
}

impl fmt::Display for SecureAgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a secure agent needs a non-empty parameter schema on every tool; missing on: {}",
            self.tools.join(", ")
        )
    }
}

impl std::error::Error for SecureAgentError {}

impl Agent {
    /// An agent whose tools cannot run without trust, permission, validation and, when the
    /// approval policy asks, a durable approval. Every registered tool needs a non-empty
    /// parameter schema (checked here, and again by every run for the tools it is granted);
    /// destructive tools wait for approval unless
    /// [`with_approval_policy`](Agent::with_approval_policy) sets another policy.
    ///
    /// ```
    /// use prism_tools::run::{Agent, InMemoryApprovalStore, ScriptedProvider};
    /// use prism_tools::{permission_fn, trust_fn, validator_fn, Dispatcher, ToolDefinition, ToolRegistry};
    /// use serde_json::json;
    ///
    /// let wipe = ToolDefinition::builder("wipe")
    ///     .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
    ///     .run_sync(|_, _| Ok(json!("wiped")));
    /// let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([wipe]))
    ///     .trust(trust_fn(|_tool, _ctx| Ok(())))
    ///     .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
    ///     .validate(validator_fn(|_tool, _args| Ok(())))
    ///     .build_secure()
    ///     .unwrap();
    /// let agent = Agent::secure(dispatcher, ScriptedProvider::default(), InMemoryApprovalStore::new());
    /// assert!(agent.is_ok());
    /// ```
    pub fn secure(
        dispatcher: SecureDispatcher,
        provider: impl Provider,
        approvals: impl ApprovalStore,
    ) -> Result<Self, SecureAgentError> {
        let dispatcher = dispatcher.as_dispatcher().clone();
        let missing = tools_without_schema(&dispatcher.registry().list());
        if !missing.is_empty() {
            return Err(SecureAgentError { tools: missing });
        }
        let mut agent = Self::with_shared_provider(dispatcher, Arc::new(provider))
            .with_approvals(approvals)
            .with_approval_policy(DestructiveTools);
        agent.secure = true;
        Ok(agent)
    }

    /// True when built by [`Agent::secure`].
    pub fn is_secure(&self) -> bool {
        self.secure
    }
}

/// The names of `tools` without a non-empty JSON object as parameter schema.
pub(crate) fn tools_without_schema(tools: &[ToolDefinition]) -> Vec<String> {
    tools
        .iter()
        .filter(
            |tool| !matches!(tool.parameters(), Some(Value::Object(schema)) if !schema.is_empty()),
        )
        .map(|tool| tool.name().to_owned())
        .collect()
}
