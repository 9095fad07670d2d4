//! [`Agent::secure`]: an agent on which no side effect runs without the host's checks.
//!
//! A secure agent needs, at compile time, a [`SecureDispatcher`] (trust, permission and a
//! validator, each certainly given) and an approval store. The dispatcher already guarantees that
//! every tool declares a parameter schema: [`build_secure`](crate::DispatchBuilder::build_secure)
//! refuses to build otherwise, its registry refuses such tools from then on, and dispatch checks
//! again, all by [`ToolDefinition::declares_parameters`](crate::ToolDefinition::declares_parameters)
//! and with [`MissingParameterSchema`](crate::MissingParameterSchema). So building the agent cannot
//! fail. It asks for approval before every destructive tool unless given another
//! [`ApprovalPolicy`](crate::run::ApprovalPolicy).

use std::sync::Arc;

use crate::dispatch::SecureDispatcher;
use crate::run::{Agent, ApprovalStore, DestructiveTools, Provider};

impl Agent {
    /// An agent whose tools cannot run without trust, permission, validation, a declared
    /// parameter schema and, when the approval policy asks, a durable approval. Destructive tools
    /// wait for approval unless [`with_approval_policy`](Agent::with_approval_policy) sets another
    /// policy.
    ///
    /// ```
    /// use prism::{Agent, Dispatcher, ToolDefinition, ToolRegistry};
    /// use prism::guard::{permission_fn, trust_fn, validator_fn};
    /// use prism::run::{InMemoryApprovalStore, ScriptedProvider};
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
    /// assert!(agent.is_secure());
    /// ```
    pub fn secure(
        dispatcher: SecureDispatcher,
        provider: impl Provider,
        approvals: impl ApprovalStore,
    ) -> Self {
        let dispatcher = dispatcher.as_dispatcher().clone();
        let mut agent = Self::with_shared_provider(dispatcher, Arc::new(provider))
            .with_approvals(approvals)
            .with_approval_policy(DestructiveTools);
        agent.secure = true;
        agent
    }

    /// True when built by [`Agent::secure`].
    pub fn is_secure(&self) -> bool {
        self.secure
    }
}
