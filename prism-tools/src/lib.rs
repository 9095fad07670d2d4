//! # Prism tools: typed Rust functions as language-model tools
//!
//! A host (an agent runtime, an MCP server, a CLI) registers tools, and every tool call a model
//! makes goes through one fixed pipeline before, around and after the tool runs. The pipeline
//! never executes a tool the host did not register and allow, every call id gets exactly one
//! result whatever happens (bad JSON, unknown names, panics, cancellation), and no known secret
//! leaves it in a result, an event, a ledger row or an error message.
//!
//! ## The pipeline
//!
//! [`Dispatcher::dispatch`] runs these steps, in this order, in one function:
//!
//! ```text
//!  1  tool_call middleware        may rewrite name or arguments, never the call id
//!  2  input guardrails            arguments over the size or depth limit -> invalid_arguments,
//!                                 before any guardrail sees them; block -> blocked result;
//!                                 tripwire -> Err(Tripwire)
//!  3  lookup                      unknown_tool          "Unknown tool: <name>"
//!  4  filters, then run scope     tool_denied
//!  5  arguments                   invalid_arguments     (not an object; bad JSON text: code
//!                                                        invalid_json_arguments, the parser's
//!                                                        message redacted and cut)
//!  6  trust, then permission      permission_denied
//!  7  validators, then prepare    validation_failed / invalid_arguments (field path named);
//!                                 extractors: extraction_failed (a pending one is awaited here)
//!  8  before_execute              execution_denied
//!     run approval                inside a run: a call needing approval waits here, unclaimed
//!  9  effect claim                replay a recorded outcome; refuse in-flight or unknown
//! 10  started                     event + ledger row (arguments redacted)
//! 11  execute                     progress events/rows (dropped ones counted on the terminal
//!                                 event and row); panic -> tool_panicked; cancellation ->
//!                                 cancelled; Err -> tool_error; output over the size or depth
//!                                 limit -> output_too_large
//! 12  output guardrails           on the raw value, before redaction and observers
//! 13  tool_result middleware      successful results only
//! 14  finished                    event + ledger row (result redacted)
//! ```
//!
//! Steps 2 to 5 always run on what step 1 produced, so middleware cannot grant access by renaming
//! a call. The [`Limits`] are checked first in step 2 rather than with the other argument checks
//! in step 5, so no guard ever walks arguments over them: such a call is refused as
//! `invalid_arguments` even when its tool is unknown or denied. The [`DispatchBuilder`] only accepts guards in this order: calling `.permission()`
//! after `.validate()` is a compile error that says so.
//!
//! ## Outcomes
//!
//! | outcome | reason / code | event | ledger row |
//! | --- | --- | --- | --- |
//! | unknown tool | `unknown_tool` | blocked | blocked |
//! | filtered out, not granted, hidden this turn | `tool_denied` | blocked | blocked |
//! | arguments not an object, over a limit, or not decodable | `invalid_arguments` (`invalid_json_arguments` for unparsable text) | blocked | blocked |
//! | trust or permission refused | `permission_denied` | blocked | blocked |
//! | validator refused, or no schema under a secure dispatcher | `validation_failed` | blocked | blocked |
//! | the tool's own schema is unusable (host bug) | `validation_failed` with code `invalid_tool_schema` | blocked | blocked |
//! | an extractor (`#[ctx]` parameter) rejected the call | `extraction_failed` (or the rejection's code) | blocked | blocked |
//! | before-execute refused | `execution_denied` | blocked | blocked |
//! | guardrail block (input or output) | `guardrail_blocked` | blocked | blocked |
//! | effect outcome unknown / in flight / store failure | `effect_outcome_unknown` / `effect_in_flight` / `effect_store_error` | error | error |
//! | tool returned `Err`, panicked, output over its byte or depth limit | `tool_error` (or the tool's code) / `tool_panicked` / `output_too_large` | error | error |
//! | cancelled through the context | `cancelled` | error | error |
//!
//! A panic in a guard callback refuses the call with that guard's reason (fail closed); a panic
//! in middleware or in the tool is `tool_panicked`. A panic in an event sink or ledger is logged
//! and never changes the result. The default panic hook still prints the payload before it is
//! caught, and `panic = "abort"` voids these guarantees.
//!
//! ## Example
//!
//! ```
//! use prism::call::ErrorCode;
//! use prism::dispatch::{InMemoryLedger, SecretRedactor};
//! use prism::guard::permission_fn;
//! use prism::registry::ToolFilter;
//! use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
//! use serde_json::{json, Value};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let add = ToolDefinition::builder("add")
//!     .description("Adds two integers.")
//!     .parameters(json!({
//!         "type": "object",
//!         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
//!         "required": ["a", "b"]
//!     }))
//!     .run_sync(|args: &Value, _ctx| {
//!         let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
//!         match (a, b) {
//!             (Some(a), Some(b)) => Ok(json!(a + b)),
//!             _ => Err("a and b must be integers".into()),
//!         }
//!     });
//! let registry = ToolRegistry::from_iter([add]);
//!
//! let ledger = InMemoryLedger::new();
//! let dispatcher = Dispatcher::builder(registry)
//!     .filter(ToolFilter::allow(["add"]))
//!     .permission(permission_fn(|tool, _args, _ctx| {
//!         if tool.annotations().destructive == Some(true) { Err("needs approval".into()) } else { Ok(()) }
//!     }))
//!     .ledger(ledger.clone())
//!     .redactor(SecretRedactor::new(["sk-secret"]))
//!     .build();
//!
//! let ctx = ToolExecutionContext::new().with_run_id("run-1");
//! let result = dispatcher
//!     .dispatch(ToolCall::new("c1", "add", json!({"a": 2, "b": 3})), &ctx)
//!     .await
//!     .expect("no guardrail trips here");
//! assert_eq!(result.as_value(), Some(&json!(5)));
//!
//! let result = dispatcher
//!     .dispatch(ToolCall::malformed("c2", "add", "expected `,` at line 1"), &ctx)
//!     .await
//!     .unwrap();
//! assert_eq!(result.error_info().unwrap().code, ErrorCode::InvalidJsonArguments);
//!
//! let statuses: Vec<_> = ledger.records().iter().map(|row| row.status.as_str()).collect();
//! assert_eq!(statuses, ["started", "finished", "blocked"]);
//! # });
//! ```
//!
//! ## Map of the crate
//!
//! | module | concept |
//! | --- | --- |
//! | [`call`] | [`ToolCall`], [`ToolResult`], [`ErrorInfo`], [`BlockReason`], [`ErrorCode`] |
//! | [`definition`] | [`ToolDefinition`], [`ToolHandler`] (decode, then run a [`ToolFuture`]), [`ToolAnnotations`] |
//! | [`tool`] | the typed [`Tool`] trait that `#[tool]` implements |
//! | [`registry`] | [`ToolRegistry`]: lock-free reads, replace or strict duplicates |
//! | [`filter`], [`grant`], [`scope`] | exact allow/deny filters; per-run grants; per-call scope |
//! | [`context`] | [`ToolExecutionContext`]: ids, cancellation, metadata, progress, scope |
//! | [`extract`] | [`FromToolContext`] (answering an [`Extraction`]), [`State`], [`FromState`]: tool parameters taken from the call, not the model |
//! | [`dispatch`] | the pipeline, the typestate builder, events and the ledger |
//! | [`guard`] | middleware, guardrails, trust, permission, validators, before-execute; a guard answers with a [`Verdict`](guard::Verdict), ready or pending; [`AllowAll`](guard::AllowAll) and [`DenyAll`](guard::DenyAll) |
//! | [`slot`] | [`IntoSlot`](slot::IntoSlot): what the builder takes for an event sink, a ledger or an effect store |
//! | [`effects`] | effect claims: at most once, or say unknown; [`EffectRecovery`] for the host |
//! | [`storage`] | durable ledgers (JSON Lines, SQLite, PostgreSQL), durable effect and approval stores, [`RecordQuery`] |
//! | [`redact`] | [`SecretRedactor`] |
//! | [`limits`] | argument and output bounds |
//! | [`schema`] | JSON Schema generation settings for parameters; [`lower`](schema::lower)ing them per provider [`Dialect`](schema::Dialect), with a [`LoweringCache`](schema::LoweringCache) |
//! | [`contributions`] | inert tools contributed by extensions |
//! | [`provider`] | provider wire formats: [`names`](provider::names) (reversible tool names per provider); HTTP providers behind the `http` feature |
//! | [`semconv`] | OpenTelemetry GenAI attribute names of the `chat` and `execute_tool` spans |
//! | [`run`] | sessions, grants, narrowing, disclosure modes, ordered concurrent batches, approvals, artifact loop |
//! | [`search`] | disclosure by search: BM25 index, [`ToolScorer`], the `search_tools` tool |
//! | [`validation`] | schema validation of arguments: the engine seam, limits, a dialect normaliser; JSON Schema behind the `json-schema` feature |
//! | `mcp` | MCP behind the `mcp` feature: `mcp::server`, a dispatcher served to MCP clients; `mcp::client`, a remote server's tools as definitions behind the dispatcher |
//! | [`tools`] | first-party tools a host selects: `tools::web` (`web_fetch`, `web_extract`, `web_search` under one URL policy) behind the `web` feature; `tools::browser` (`browser_navigate`, `browser_snapshot`, `browser_act`, `browser_screenshot` over a host-supplied Chromium, one browser context per run) behind `browser` |

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod call;
mod canonical;
pub mod clock;
pub mod context;
pub mod contributions;
pub mod definition;
pub mod dispatch;
pub mod effects;
pub mod error;
pub mod extract;
pub mod filter;
pub mod grant;
pub mod guard;
#[cfg(any(feature = "web", feature = "mcp"))]
mod host_name;
mod icon;
pub mod limits;
#[doc(hidden)]
pub mod macro_support;
#[cfg(feature = "mcp")]
pub mod mcp;
mod panic;
mod prepared;
mod progress;
pub mod provider;
pub mod redact;
pub mod registry;
pub mod run;
pub mod schema;
pub mod scope;
pub mod search;
pub mod semconv;
mod shared_log;
pub mod slot;
pub mod storage;
#[cfg(any(feature = "http", feature = "web", feature = "mcp"))]
mod tls;
pub mod tool;
mod tool_future;
pub mod tools;
pub mod validation;

pub use call::{
    BlockReason, CallId, ContentBlock, ErrorCode, ErrorInfo, JsonObject, ToolCall, ToolOutcome,
    ToolResult,
};
pub use clock::{Clock, ManualClock, Millis, SystemClock};
pub use context::{CancellationToken, ProgressUpdate, ToolExecutionContext};
pub use contributions::{ContributedTools, ContributionRegistries, ExtensionApi};
pub use definition::{
    NotPrepared, PendingBody, Prepared, ToolAnnotations, ToolDefinition, ToolDefinitionBuilder,
    ToolFuture, ToolHandler,
};
pub use dispatch::{
    BuildError, CollectingSink, DispatchBuilder, Dispatcher, EventSink, InMemoryLedger,
    LedgerError, OwnershipScope, RecordStatus, RegisterError, RunLedger, SecureBuildError,
    SecureDispatcher, ToolCallRecord, ToolEvent, ToolEventKind, Tripwire, event_fn,
};
pub use effects::{
    Claim, ClaimRequest, EffectKey, EffectKeySecret, EffectPolicy, EffectRecovery, EffectState,
    EffectStore, EffectStoreError, InMemoryEffectStore, RecordedOutcome, RecoveryOutcome,
    Resolution, UnknownEffect,
};
pub use error::{Refusal, ToolError};
pub use extract::{Extraction, FromState, FromToolContext, PendingExtraction, State};
pub use filter::{CompiledFilters, ToolFilter, filter_tools};
pub use grant::ToolGrant;
pub use guard::{
    ArgumentValidator, BeforeExecute, CallRewrite, Guardrail, GuardrailDecision, GuardrailHit,
    GuardrailRule, IntoGuard, PermissionPolicy, ResultRewrite, RuleAction, RulePack,
    ToolMiddleware, TrustPolicy, before_execute_fn, call_middleware, permission_fn,
    result_middleware, trust_fn, validator_fn,
};
pub use limits::Limits;
pub use redact::SecretRedactor;
pub use registry::{
    DuplicatePolicy, DuplicateTool, MissingParameterSchema, RegistryError, RegistrySnapshot,
    ToolRegistry, UnknownTool,
};
pub use scope::ToolScope;
pub use search::{
    ActivatedTools, Disclosure, FullDisclosureReason, SearchConfig, SearchLimits,
    SharedActivatedTools, ToolScorer, ToolSearch,
};
pub use storage::{JsonlLedger, LedgerReader, RecordQuery, StorageError, SyncPolicy};
#[cfg(feature = "postgres")]
pub use storage::{PostgresApprovalStore, PostgresEffectStore, PostgresLedger, PostgresOptions};
#[cfg(feature = "sqlite")]
pub use storage::{SqliteApprovalStore, SqliteEffectStore, SqliteLedger, SqliteOptions};
pub use tool::Tool;
