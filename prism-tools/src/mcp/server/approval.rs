//! Approvals over MCP: a call of a tool that [requires approval](crate::ToolDefinition::requires_approval)
//! waits for a person's answer, asked through the client as an elicitation form.
//!
//! The question is asked where the run layer asks it: inside the pipeline, once every guard up to
//! `before_execute` let the call through, before its effect is claimed. A call any guard refuses
//! is never put to anyone.
//!
//! - A 2026-07-28 client that can elicit gets `input_required`: the form, and a `requestState`
//!   sealed with HMAC-SHA-256 ([`RequestStateCodec`]) that names the tool, the SHA-256 of the
//!   canonical JSON of the exact arguments (after `tool_call` middleware), the version of the
//!   tool (a digest of its definition), a single-use nonce and an expiry. The re-issued call
//!   carries the answer and the state back; it runs through every guard again, and the gate lets
//!   it execute only when the state opens, has not expired, was not used before, and names this
//!   tool with these arguments, still at the version the person was asked about. A changed
//!   argument, or a tool registered again with another definition, needs a new approval.
//! - A handshake-era client that can elicit is asked in the middle of the call
//!   (`elicitation/create`), and the call then runs or is refused (refused as well when the tool
//!   was registered again with another definition while the person was asked). The question
//!   waits as long as a sealed one would live, and ends when the client cancels the call: a late
//!   "yes" approves nothing.
//! - A client that cannot elicit (or a server that has no key to seal with) gets an `isError`
//!   result naming the pending approval.
//!
//! Nonces are remembered in this process until they expire, with the answer they came back
//! with: a state is used up by its first answer, "no" as much as "yes". An approved call
//! re-issued with the same state (a client whose stream dropped before it read the answer) is
//! refused as used, unless its tool has an effect policy and the dispatcher an effect store: then
//! it goes on to its claim, and gets the outcome the store recorded (or hears the first call
//! still runs) instead of a second run. Behind several server processes, give such tools an
//! effect policy too, so the shared effect store runs their effect once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, InputResponses, RequestStateCodec,
    SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::{CallId, ToolCall};
use crate::canonical::canonical_sha256;
use crate::definition::ToolDefinition;
use crate::dispatch::{Approval, ApprovalGate, Tripwire};
use crate::error::Refusal;
use crate::redact::SecretRedactor;

/// The key of the approval form in `inputRequests` and `inputResponses`.
pub(crate) const APPROVAL_INPUT: &str = "approval";

/// What a sealed `requestState` holds: which call was asked about, once.
#[derive(Serialize, Deserialize)]
struct Asked {
    tool: String,
    arguments_hash: String,
    /// The tool's version when it was asked about; `None` in a state sealed before versions
    /// were, which approves no version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_version: Option<String>,
    nonce: String,
}

/// The server's approval state: the sealing key, the lifetime of a question and the nonces used.
pub(crate) struct Approvals {
    /// `None` when no key could be made (no entropy and none given): no question is sealed, and
    /// no `requestState` opens.
    codec: Option<RequestStateCodec>,
    ttl: Duration,
    /// Each nonce used, when, and whether its first answer approved.
    redeemed: Mutex<HashMap<String, (Instant, bool)>>,
    /// Whether the dispatcher has an effect store, which answers a re-issued approved call of a
    /// tool with an effect policy with its recorded outcome.
    replays_effects: bool,
}

impl Approvals {
    pub(crate) fn new(
        codec: Option<RequestStateCodec>,
        ttl: Duration,
        replays_effects: bool,
    ) -> Self {
        Self {
            codec,
            ttl,
            redeemed: Mutex::new(HashMap::new()),
            replays_effects,
        }
    }

    /// How long a question stays answerable.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The `input_required` answer asking about `held`, a call of the tool at `tool_version`,
    /// or `None` when this server has no key to seal the question with.
    pub(crate) fn ask(
        &self,
        held: &ToolCall,
        tool_version: &str,
        redactor: &SecretRedactor,
    ) -> Option<InputRequiredResult> {
        let codec = self.codec.as_ref()?;
        let asked = Asked {
            tool: held.name.clone(),
            arguments_hash: arguments_hash(&held.name, &held.arguments),
            tool_version: Some(tool_version.to_owned()),
            nonce: nonce(),
        };
        // Serialising four strings cannot fail.
        let sealed = codec
            .seal_json_with(&asked, &SealOptions::new().ttl(self.ttl))
            .unwrap_or_default();
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL_INPUT.into(),
            InputRequest::Elicitation(ElicitRequest::new(question(held, redactor))),
        );
        Some(InputRequiredResult::new(Some(requests), Some(sealed)))
    }

    /// Opens an echoed `requestState` and reads the person's answer from `responses`.
    ///
    /// # Errors
    ///
    /// A message for a JSON-RPC `-32602` when the state was forged, altered or has expired, or
    /// this server has no key.
    pub(crate) fn answer(
        &self,
        state: &str,
        responses: Option<&InputResponses>,
    ) -> Result<Answered, String> {
        let Some(codec) = &self.codec else {
            return Err("This server has no approval key, so it issued no requestState".into());
        };
        let asked: Asked = codec.open_json(state).map_err(|error| {
            // One answer whatever failed (forged, altered, malformed, expired), as the codec
            // asks: which check refused a state is for the server's log, not for the client.
            tracing::debug!(target: "prism_tools", %error, "a requestState did not open");
            "The requestState is not one this server issued, or it expired".to_owned()
        })?;
        let approved = responses
            .and_then(|responses| responses.get(APPROVAL_INPUT))
            .is_some_and(approves);
        Ok(Answered { asked, approved })
    }

    /// Marks `nonce` used with this answer: `None` the first time, else whether the first
    /// answer approved.
    fn redeem(&self, nonce: &str, approved: bool) -> Option<bool> {
        let now = Instant::now();
        let mut redeemed = self
            .redeemed
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // A nonce outlives its state's expiry here (by a minute more than the TTL, since a sealed
        // expiry is read from the wall clock in whole seconds), so an expired state can never be
        // replayed, even with a TTL of zero.
        let kept = self
            .ttl
            .saturating_mul(2)
            .saturating_add(Duration::from_secs(60));
        redeemed.retain(|_, (used, _)| now.duration_since(*used) < kept);
        match redeemed.get(nonce) {
            Some(&(_, first)) => Some(first),
            None => {
                redeemed.insert(nonce.to_owned(), (now, approved));
                None
            }
        }
    }
}

/// What the person answered about one sealed question.
pub(crate) struct Answered {
    asked: Asked,
    approved: bool,
}

/// The elicitation form asking whether `call` may run.
///
/// It shows the arguments whole (redacted): the person approves exactly these, so no part of
/// them may be out of sight. Their size is already within the dispatcher's argument bound.
pub(crate) fn question(call: &ToolCall, redactor: &SecretRedactor) -> ElicitRequestParams {
    let shown = redactor.redact_value(&call.arguments).to_string();
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Approve",
                "description": format!("Let `{}` run with exactly these arguments", call.name),
            }
        },
        "required": ["approve"]
    });
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "The tool `{}` needs your approval to run with these arguments: {shown}",
            call.name
        ),
        // A fixed, valid form schema.
        requested_schema: serde_json::from_value(schema)
            .unwrap_or_else(|_| ElicitationSchema::new(Default::default())),
    }
}

/// True when an elicitation answer accepts with `approve: true`.
pub(crate) fn approves(answer: &Value) -> bool {
    serde_json::from_value::<ElicitResult>(answer.clone()).is_ok_and(|answer| {
        answer.action == ElicitationAction::Accept
            && answer
                .content
                .as_ref()
                .is_some_and(|content| content["approve"] == json!(true))
    })
}

fn arguments_hash(tool: &str, arguments: &Value) -> String {
    canonical_sha256(&json!({ "tool": tool, "arguments": arguments }))
}

pub(crate) fn nonce() -> String {
    let mut bytes = [0u8; 16];
    // Without an entropy source a nonce is only as unique as the clock; still single-use here.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        bytes = now.as_nanos().to_le_bytes();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// How a dispatch with the approval gate can end without a result.
pub(crate) enum Interrupted {
    /// A guardrail tripped; the blocked result is inside.
    Tripwire(Box<Tripwire>),
    /// The call waits for approval.
    Held(Box<Held>),
}

/// A call waiting for approval.
pub(crate) struct Held {
    /// The call as middleware left it.
    pub(crate) call: ToolCall,
    /// The version of the tool it resolved to, which an approval is asked for.
    pub(crate) tool_version: String,
}

/// How a client asks anew for an approval that does not cover its call.
const ASK_AGAIN: &str = "call it again without the requestState to ask for a new approval";

impl From<Tripwire> for Interrupted {
    fn from(tripwire: Tripwire) -> Self {
        Self::Tripwire(Box::new(tripwire))
    }
}

/// The gate of one MCP call: tools that require approval wait, unless this call carries an
/// approval for exactly itself (or was approved in the middle of the call).
pub(crate) enum Gate {
    /// Nothing was approved: every tool needing approval waits.
    Ask,
    /// A sealed approval came back with the call.
    Sealed {
        approvals: Arc<Approvals>,
        answered: Answered,
    },
    /// The person approved this exact call of this version of the tool a moment ago, in the
    /// middle of it.
    Approved {
        arguments_hash: String,
        tool_version: String,
    },
}

impl Gate {
    /// The gate for a call of the tool at `tool_version`, asked about in the middle of it.
    pub(crate) fn approved(call: &ToolCall, tool_version: String) -> Gate {
        Gate::Approved {
            arguments_hash: arguments_hash(&call.name, &call.arguments),
            tool_version,
        }
    }
}

impl ApprovalGate<Interrupted> for Gate {
    fn check(&self, _id: &CallId, tool: &ToolDefinition, arguments: &Value) -> Approval {
        if !tool.requires_approval() {
            return Approval::Proceed;
        }
        let hash = || arguments_hash(tool.name(), arguments);
        match self {
            Gate::Ask => Approval::Wait,
            Gate::Approved { arguments_hash, .. } if *arguments_hash != hash() => {
                Approval::Refuse(Refusal::new(format!(
                    "The approval given for {} was for other arguments",
                    tool.name()
                )))
            }
            Gate::Approved { tool_version, .. } => {
                Approval::for_version(Some(tool_version), tool, ASK_AGAIN)
            }
            Gate::Sealed {
                approvals,
                answered,
            } => {
                let asked = &answered.asked;
                if asked.tool != tool.name() || asked.arguments_hash != hash() {
                    Approval::Refuse(Refusal::new(format!(
                        "The approval sent with this call of {} was given for another call",
                        tool.name()
                    )))
                } else if let refused @ Approval::Refuse(_) =
                    Approval::for_version(asked.tool_version.as_deref(), tool, ASK_AGAIN)
                {
                    // Checked before the nonce is used: whatever the answer, it was about
                    // another definition.
                    refused
                } else {
                    // The first answer uses the state up, whatever it was.
                    match approvals.redeem(&asked.nonce, answered.approved) {
                        _ if !answered.approved => Approval::Refuse(Refusal::new(format!(
                            "A person refused to let {} run with these arguments",
                            tool.name()
                        ))),
                        None => Approval::Proceed,
                        // Re-issued after it was approved, say after a dropped stream. A tool with
                        // an effect policy goes on to its claim, where the effect store answers
                        // with the recorded outcome (or says the first call is still running)
                        // instead of running it again.
                        Some(true) if approvals.replays_effects && tool.effect().is_some() => {
                            Approval::Proceed
                        }
                        Some(_) => Approval::Refuse(Refusal::new(format!(
                            "This approval of {} was already used: an approval runs its call once",
                            tool.name()
                        ))),
                    }
                }
            }
        }
    }

    fn hold(&self, call: ToolCall, tool: &ToolDefinition) -> Interrupted {
        Interrupted::Held(Box::new(Held {
            call,
            tool_version: tool.version_hash(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wipe() -> ToolCall {
        ToolCall::new("1", "wipe", json!({"path": "/"}))
    }

    #[test]
    fn without_a_key_nothing_is_sealed_and_no_state_opens() {
        let approvals = Approvals::new(None, Duration::from_secs(60), false);
        assert!(
            approvals
                .ask(&wipe(), "v1", &SecretRedactor::default())
                .is_none()
        );
        let refused = approvals.answer("anything", None).err().unwrap();
        assert!(refused.contains("no approval key"), "{refused}");
    }

    #[test]
    fn every_state_that_does_not_open_gets_the_same_answer() {
        // The client learns that its state was refused, not which check refused it.
        let codec = RequestStateCodec::new_unchecked(vec![7; 32]);
        let approvals = Approvals::new(Some(codec), Duration::ZERO, false);
        let asked = approvals
            .ask(&wipe(), "v1", &SecretRedactor::default())
            .unwrap();
        let sealed = asked.request_state.unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let expired = approvals.answer(&sealed, None).err().unwrap();
        let tampered = approvals.answer(&format!("{sealed}x"), None).err().unwrap();
        let malformed = approvals.answer("not a state", None).err().unwrap();
        assert_eq!(expired, tampered);
        assert_eq!(tampered, malformed);
    }

    #[test]
    fn the_question_shows_the_arguments_whole_and_redacted() {
        // The person approves exactly these arguments: what lies past any display bound would
        // be approved unseen.
        let redactor = SecretRedactor::new(["hunter2-password"]);
        let tail = "and then remove everything under /";
        let long = format!("{} {tail}", "harmless text ".repeat(400));
        let call = ToolCall::new(
            "1",
            "run",
            json!({"note": long, "token": "hunter2-password"}),
        );
        let ElicitRequestParams::FormElicitationParams { message, .. } = question(&call, &redactor)
        else {
            panic!("the question is a form");
        };
        assert!(message.contains(tail), "the end of the arguments is shown");
        assert!(!message.contains("hunter2-password"), "{message}");
        assert!(message.contains("[REDACTED]"));
    }

    #[test]
    fn a_ttl_that_never_ends_still_redeems() {
        let codec = RequestStateCodec::new_unchecked(vec![7; 32]);
        let approvals = Approvals::new(Some(codec), Duration::MAX, false);
        assert_eq!(approvals.redeem("a", true), None);
        assert_eq!(approvals.redeem("b", false), None);
        assert_eq!(
            approvals.redeem("a", true),
            Some(true),
            "a nonce is used once"
        );
        assert_eq!(
            approvals.redeem("b", true),
            Some(false),
            "the first answer stays"
        );
    }

    #[test]
    fn a_ttl_of_zero_still_remembers_used_nonces() {
        let codec = RequestStateCodec::new_unchecked(vec![7; 32]);
        let approvals = Approvals::new(Some(codec), Duration::ZERO, false);
        assert_eq!(approvals.redeem("a", true), None);
        assert_eq!(approvals.redeem("a", true), Some(true));
    }
}
