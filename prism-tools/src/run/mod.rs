//! The run layer: sessions, per-run grants, per-turn narrowing and batched tool calls.
//!
//! A [`Session`] drives a [`Provider`] turn by turn. What the model may use narrows at each step
//! and is never widened downstream:
//!
//! ```text
//! registry ─► run grant (RunOptions::tool_names, snapshot once)
//!          ─► turn narrowing (callback, clamped to the grant; hidden tools are tool_denied)
//!          ─► disclosure (which visible tools are described; default: all)
//!          ─► provider schemas, in snapshot order
//! ```
//!
//! With [`DisclosureMode::Search`] a turn describes only the visible tools that best match the
//! latest user input, the tools the session activated earlier, and a generated `search_tools`
//! tool that the model calls to find more. The index is built once per snapshot (and reused by
//! the agent's later runs over the same tools); what `search_tools` finds is activated in the
//! session's state, names only, and described from the next turn on. Describing is not
//! authorising: an undescribed but granted tool stays callable by name, and `search_tools` itself
//! is callable only during the search-mode turn that described it.
//!
//! The dispatcher is built once per [`Agent`]; each run hands it a [`ToolScope`](crate::ToolScope)
//! (the grant, the turn's visible set and the run's validator) through the execution context, so
//! tools that make nested calls cannot reach past the grant either. The calls of one response run
//! as a batch ([`BatchExecutor`]): up to `tool_concurrency` at once, rows in call order, an
//! exclusive tool making the batch sequential, and on a tripwire or abort every call that never
//! started answered `tool_call_not_dispatched`.
//!
//! Around the batch sit the run-level gates: a [`ToolRoundGate`] asked once per response with
//! calls before anything starts, and approvals: a call whose tool (or the agent's
//! [`ApprovalPolicy`]) asks for one suspends the run before its side effect, with a
//! [`PendingApproval`] in the agent's [`ApprovalStore`], until [`Session::resume`] brings
//! decisions. [`LoopStrategy::GenerateValidateRevise`] turns the loop into draft, check and
//! revise, with tools inert or bounded by the run's tool rounds. [`Agent::secure`] builds an agent
//! where none of these checks can be left out.
//!
//! ```
//! use prism::{
//!     Agent, Dispatcher, Message, ProviderResponse, RunOptions, ToolCall, ToolDefinition,
//!     ToolRegistry,
//! };
//! use prism::run::ScriptedProvider;
//! use serde_json::{json, Value};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let add = ToolDefinition::builder("add").run_sync(|args: &Value, _| {
//!     Ok(json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)))
//! });
//! let provider = ScriptedProvider::new([
//!     ProviderResponse::calls([ToolCall::new("c1", "add", json!({"a": 2, "b": 3}))]),
//!     ProviderResponse::text("2 + 3 = 5"),
//! ]);
//! let agent = Agent::new(Dispatcher::builder(ToolRegistry::from_iter([add])).build(), provider);
//!
//! let mut session = agent.session("s1");
//! let outcome = session.run("What is 2 + 3?", RunOptions::new().tool_names(["add"])).await.unwrap();
//! assert_eq!(outcome.summary().text, "2 + 3 = 5");
//! let row = session.transcript()[2].as_tool_result().unwrap();
//! assert_eq!(row.as_value(), Some(&json!(5)));
//! # });
//! ```

mod agent;
mod approval;
mod approval_gate;
mod approval_store;
mod artifact;
mod artifact_step;
mod batch;
mod config;
mod disclosure;
mod error;
mod events;
mod message;
mod narrowing;
mod outcome;
mod provider;
mod provider_error;
mod provider_event;
mod response;
mod resume;
mod round_gate;
mod run_disclosure;
mod run_loop;
mod scripted;
mod search_cache;
mod secure;
mod session;
mod skill;
mod snapshot;
mod suspension;
mod tool_choice;
mod tool_round;
mod turn;
mod until_cancelled;

pub use agent::Agent;
pub use approval::{
    ApprovalDecision, ApprovalKey, ApprovalPolicy, ApprovalVerdict, DestructiveTools,
    PendingApproval, approval_fn,
};
pub use approval_store::{
    ApprovalRecord, ApprovalState, ApprovalStore, ApprovalStoreError, InMemoryApprovalStore,
    PendingApprovals, UnreadableApproval,
};
pub use artifact::{
    ArtifactFailure, ArtifactLoop, ArtifactToolCalls, ArtifactValidator, ArtifactVerdict,
    artifact_validator_fn,
};
pub use batch::{BatchExecutor, BatchOutcome, BatchStop};
pub use config::{
    AgentConfig, DEFAULT_MAX_TOOL_ROUNDS, DEFAULT_MAX_TURNS, LoopStrategy, RunOptions,
};
pub use disclosure::{DisclosureMode, DisclosureRequest, ToolDisclosure};
pub use error::RunError;
pub use events::{
    ArtifactFailedMetadata, RunEvent, RunEventKind, RunEventLog, RunEventSink, TurnToolsMetadata,
    run_event_fn,
};
pub use message::Message;
pub use narrowing::{NarrowingRequest, ToolNarrowing, narrowing_fn};
pub use outcome::{RunEnd, RunOutcome, RunSummary};
pub use provider::{Provider, ProviderEventObserver, ProviderRequest, ToolsMetadata, TurnMetadata};
pub use provider_error::{ProviderError, ProviderErrorKind};
pub use provider_event::{ProviderEvent, ResponseFold};
pub use response::{ProviderResponse, StopReason, Usage};
pub use round_gate::{RoundCharge, ToolRoundGate, round_gate_fn};
pub use scripted::{RecordedRequest, ScriptedProvider};
pub use session::{Session, SessionState};
pub use skill::Skill;
pub use suspension::SuspendedRun;
pub use tool_choice::ToolChoice;
