//! Approvals: some calls wait for a decision before their side effect.
//!
//! A call needs approval when its tool says so ([`ToolDefinition::requires_approval`]) or when
//! the agent's [`ApprovalPolicy`] asks for it (for instance every tool annotated destructive, as
//! [`DestructiveTools`] does). The run then suspends before the call runs and records a
//! [`PendingApproval`] in the agent's [`ApprovalStore`](crate::run::ApprovalStore), keyed by an
//! [`ApprovalKey`]: the session, the call id, the tool and a hash of the canonical JSON of the
//! exact arguments. A decision answers one key. Changed arguments are a different key, and an
//! approval for one call never covers another call of the same tool.
//!
//! An approval also covers only the version of the tool it was asked about: the suspended run
//! keeps a digest of the tool's definition (name, title, description, schemas, annotations, and
//! its exclusive, approval, untrusted-output and effect settings). When the run resumes and the
//! tool registered under that name has another definition, the approved call is refused
//! (`permission_denied`, saying the tool changed since its approval was asked) and the model may
//! call it again, which asks anew. A state stored before versions were kept records none, and
//! its approved calls are refused the same way: an approval of an unknown version is not
//! assumed to cover the tool registered now. The digest cannot cover the handler's code; a host
//! that changes a tool's body behind an unchanged definition should change its description too.
//!
//! An approval adds a check; it removes none. The question is asked inside the dispatch pipeline,
//! once guardrails, lookup, scope, trust, permission, validation and `before_execute` have all let
//! the call through, right before its effect is claimed: a call any of them refuses gets that
//! refusal and is never put to anyone. In a batch, the call that waits stops the batch claiming
//! more calls; the calls after it run when the run resumes (and may wait in turn). An approved
//! call goes through every guard again when the run resumes, since policy may have changed.
//!
//! A tool's nested calls (dispatched with the context it was given) cannot wait for anyone: one
//! that its tool or the agent's policy wants approved is refused (`permission_denied`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::CallId;
use crate::clock::Millis;
use crate::definition::ToolDefinition;

/// Decides, per call, whether a decision is needed before the call runs.
pub trait ApprovalPolicy: Send + Sync + 'static {
    /// True when this call must wait for an approval.
    fn requires_approval(&self, tool: &ToolDefinition, arguments: &Value) -> bool;
}

/// An approval policy from a closure.
///
/// ```
/// use prism::run::approval_fn;
///
/// // Transfers above 100 need a person's approval.
/// let large_transfers = approval_fn(|tool, args| {
///     tool.name() == "transfer" && args["cents"].as_u64().is_none_or(|cents| cents > 10_000)
/// });
/// # let _ = large_transfers;
/// ```
pub fn approval_fn<F>(policy: F) -> impl ApprovalPolicy
where
    F: Fn(&ToolDefinition, &Value) -> bool + Send + Sync + 'static,
{
    ApprovalFn(policy)
}

struct ApprovalFn<F>(F);

impl<F> ApprovalPolicy for ApprovalFn<F>
where
    F: Fn(&ToolDefinition, &Value) -> bool + Send + Sync + 'static,
{
    fn requires_approval(&self, tool: &ToolDefinition, arguments: &Value) -> bool {
        (self.0)(tool, arguments)
    }
}

/// Asks for approval before every tool annotated destructive: the secure agent's default.
#[derive(Clone, Copy, Debug, Default)]
pub struct DestructiveTools;

impl ApprovalPolicy for DestructiveTools {
    fn requires_approval(&self, tool: &ToolDefinition, _arguments: &Value) -> bool {
        tool.annotations().destructive == Some(true)
    }
}

/// What one approval is for: exactly this call of this tool with these arguments.
///
/// ```
/// use prism::run::ApprovalKey;
/// use serde_json::json;
///
/// let a = ApprovalKey::new("s1", "call_1".into(), "wipe", &json!({"path": "/tmp", "force": true}));
/// let b = ApprovalKey::new("s1", "call_1".into(), "wipe", &json!({"force": true, "path": "/tmp"}));
/// assert_eq!(a, b, "key order does not matter");
/// let c = ApprovalKey::new("s1", "call_1".into(), "wipe", &json!({"path": "/", "force": true}));
/// assert_ne!(a, c, "changed arguments need a new approval");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalKey {
    /// The session the call belongs to.
    pub session_id: String,
    /// The provider's call id.
    pub call_id: CallId,
    /// The tool, after `tool_call` middleware.
    pub tool: String,
    /// SHA-256 (hex) of the canonical JSON (RFC 8785) of the arguments.
    pub arguments_hash: String,
}

impl ApprovalKey {
    /// The key of calling `tool` with `arguments` as call `call_id` of session `session_id`.
    pub fn new(
        session_id: impl Into<String>,
        call_id: CallId,
        tool: impl Into<String>,
        arguments: &Value,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            call_id,
            tool: tool.into(),
            arguments_hash: crate::canonical::canonical_sha256(&json!({ "arguments": arguments })),
        }
    }
}

/// A call waiting for a decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// What would be approved.
    pub key: ApprovalKey,
    /// The run that asked.
    pub run_id: String,
    /// The arguments, redacted, to show whoever decides.
    pub arguments: Value,
    /// When the run asked.
    pub requested_at: Millis,
}

/// What was decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum ApprovalVerdict {
    /// The call may run.
    Approved,
    /// The call must not run; the model sees a `permission_denied` result.
    Refused {
        /// Why, shown to the model after redaction.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// A decision on one pending approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecision {
    /// The exact call decided on.
    pub key: ApprovalKey,
    /// The decision.
    #[serde(flatten)]
    pub verdict: ApprovalVerdict,
}

impl ApprovalDecision {
    /// Approves the call with this key.
    pub fn approve(key: &ApprovalKey) -> Self {
        Self {
            key: key.clone(),
            verdict: ApprovalVerdict::Approved,
        }
    }

    /// Refuses the call with this key.
    pub fn refuse(key: &ApprovalKey, reason: impl Into<String>) -> Self {
        Self {
            key: key.clone(),
            verdict: ApprovalVerdict::Refused {
                reason: Some(reason.into()),
            },
        }
    }
}
