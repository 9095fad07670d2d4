//! The pipeline order: every callback records itself in a shared trace, so each test shows which
//! guard ran, in which order, and where a refusal stopped the call.

mod common;

use std::sync::Arc;

use common::*;
use prism::call::BlockReason;
use prism::definition::{NotPrepared, Prepared, ToolFuture, ToolHandler};
use prism::dispatch::{RunLedger, ToolCallRecord, event_fn};
use prism::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectPolicy, EffectState, EffectStore,
    EffectStoreError, InMemoryEffectStore, RecordedOutcome, Resolution,
};
use prism::guard::{
    CallRewrite, Guardrail, GuardrailDecision, ResultRewrite, ToolMiddleware, before_execute_fn,
    permission_fn, trust_fn, validator_fn,
};
use prism::registry::{ToolFilter, ToolGrant, ToolScope};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry, ToolResult};
use serde_json::{Value, json};

/// Where a call can be refused, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Guardrail,
    Unknown,
    Filter,
    Scope,
    Arguments,
    Trust,
    Permission,
    Validator,
    RunValidator,
    Decode,
    BeforeExecute,
}

const STAGES: [Stage; 11] = [
    Stage::Guardrail,
    Stage::Unknown,
    Stage::Filter,
    Stage::Scope,
    Stage::Arguments,
    Stage::Trust,
    Stage::Permission,
    Stage::Validator,
    Stage::RunValidator,
    Stage::Decode,
    Stage::BeforeExecute,
];

impl Stage {
    /// The reason a refusal at this stage gives.
    fn reason(self) -> BlockReason {
        match self {
            Stage::Guardrail => BlockReason::GuardrailBlocked,
            Stage::Unknown => BlockReason::UnknownTool,
            Stage::Filter | Stage::Scope => BlockReason::ToolDenied,
            Stage::Arguments | Stage::Decode => BlockReason::InvalidArguments,
            Stage::Trust | Stage::Permission => BlockReason::PermissionDenied,
            Stage::Validator | Stage::RunValidator => BlockReason::ValidationFailed,
            Stage::BeforeExecute => BlockReason::ExecutionDenied,
        }
    }

    /// The last trace entry before a refusal at this stage.
    fn last_entry(self) -> &'static str {
        match self {
            Stage::Guardrail | Stage::Unknown | Stage::Filter | Stage::Scope | Stage::Arguments => {
                "guardrail:input"
            }
            Stage::Trust => "trust",
            Stage::Permission => "permission",
            Stage::Validator => "validator",
            Stage::RunValidator => "run_validator",
            Stage::Decode => "prepare",
            Stage::BeforeExecute => "before_execute",
        }
    }
}

/// The whole trace of a call that every guard lets through.
const FULL: [&str; 17] = [
    "middleware:call",
    "guardrail:input",
    "trust",
    "permission",
    "validator",
    "run_validator",
    "prepare",
    "before_execute",
    "effect:claim",
    "event:tool_execution_started",
    "row:started",
    "body",
    "guardrail:output",
    "middleware:result",
    "event:tool_execution_finished",
    "row:finished",
    "effect:complete",
];

struct TracedMiddleware(Trace, &'static str);

impl ToolMiddleware for TracedMiddleware {
    fn on_tool_call(&self, _call: &mut CallRewrite<'_>) {
        self.0.push(format!("middleware:call{}", self.1));
    }
    fn on_tool_result(&self, _result: &mut ResultRewrite<'_>) {
        self.0.push(format!("middleware:result{}", self.1));
    }
}

struct TracedGuardrail {
    trace: Trace,
    block_input: bool,
}

impl Guardrail for TracedGuardrail {
    fn check_input(&self, _tool: &str, _arguments: &Value) -> GuardrailDecision {
        self.trace.push("guardrail:input");
        if self.block_input {
            GuardrailDecision::block()
        } else {
            GuardrailDecision::Pass
        }
    }
    fn check_output(&self, _tool: &str, _output: &Value) -> GuardrailDecision {
        self.trace.push("guardrail:output");
        GuardrailDecision::Pass
    }
}

/// A handler that records `prepare` and `body`, and refuses `{"undecodable": true}`.
struct TracedHandler(Trace);

impl ToolHandler for TracedHandler {
    fn prepare(
        &self,
        arguments: &Value,
        _ctx: ToolExecutionContext,
    ) -> Result<Prepared, NotPrepared> {
        self.0.push("prepare");
        if arguments.get("undecodable").is_some() {
            return Err("cannot decode".into());
        }
        let trace = self.0.clone();
        let arguments = arguments.clone();
        Ok(ToolFuture::new(async move {
            trace.push("body");
            Ok(arguments)
        })
        .into())
    }
}

struct TracedStore(Trace, InMemoryEffectStore);

impl EffectStore for TracedStore {
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        self.0.push("effect:claim");
        self.1.claim(request)
    }
    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        self.0.push("effect:complete");
        self.1.complete(key, owner, outcome)
    }
    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        self.1.resolve(key, resolution)
    }
    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        self.1.state(key)
    }
}

struct TracedLedger(Trace);

impl RunLedger for TracedLedger {
    fn append(&self, record: &ToolCallRecord) {
        self.0.push(format!("row:{}", record.status.as_str()));
    }
}

fn traced_tool(name: &str, trace: &Trace) -> ToolDefinition {
    ToolDefinition::builder(name)
        .parameters(object_schema())
        .effect(EffectPolicy::default())
        .handler(TracedHandler(trace.clone()))
}

/// Dispatches one call through a dispatcher where every guard records itself and the guards of
/// `refuse` say no. Returns the result and the trace.
async fn dispatch_refusing(refuse: &[Stage]) -> (ToolResult, Vec<String>) {
    let trace = Trace::new();
    let says_no = |stage: Stage| refuse.contains(&stage);
    let guard = |stage: Stage, entry: &'static str| {
        let trace = trace.clone();
        let refuse = says_no(stage);
        move || {
            trace.push(entry);
            if refuse {
                Err(format!("{entry} says no").into())
            } else {
                Ok(())
            }
        }
    };
    let trust = guard(Stage::Trust, "trust");
    let permission = guard(Stage::Permission, "permission");
    let validator = guard(Stage::Validator, "validator");
    let run_validator = guard(Stage::RunValidator, "run_validator");
    let before_execute = guard(Stage::BeforeExecute, "before_execute");

    let registry =
        ToolRegistry::from_iter([traced_tool("tool", &trace), traced_tool("denied", &trace)]);
    let sink_trace = trace.clone();
    let dispatcher = Dispatcher::builder(registry)
        .middleware(TracedMiddleware(trace.clone(), ""))
        .guardrails(TracedGuardrail {
            trace: trace.clone(),
            block_input: says_no(Stage::Guardrail),
        })
        .filter(ToolFilter::deny(["denied"]))
        .trust(trust_fn(move |_, _| trust()))
        .permission(permission_fn(move |_, _, _| permission()))
        .validate(validator_fn(move |_, _| validator()))
        .before_execute(before_execute_fn(move |_, _, _| before_execute()))
        .effects(TracedStore(trace.clone(), InMemoryEffectStore::new()))
        .events(event_fn(move |event| {
            sink_trace.push(format!("event:{}", event.kind.type_name()))
        }))
        .ledger(TracedLedger(trace.clone()))
        .build();

    let name = match () {
        () if says_no(Stage::Unknown) => "ghost",
        () if says_no(Stage::Filter) => "denied",
        () => "tool",
    };
    let arguments = match () {
        () if says_no(Stage::Arguments) => json!(["not", "an", "object"]),
        () if says_no(Stage::Decode) => json!({"undecodable": true}),
        () => json!({"n": 1}),
    };
    let grant = if says_no(Stage::Scope) {
        ToolGrant::only(["other"])
    } else {
        ToolGrant::All
    };
    let scope =
        ToolScope::new(grant).with_validator(Arc::new(validator_fn(move |_, _| run_validator())));
    let ctx = ctx().with_scope(scope);

    let result = run_in(&dispatcher, ToolCall::new("call", name, arguments), &ctx).await;
    assert_eq!(result.tool_call_id.as_str(), "call");
    (result, trace.entries())
}

/// The trace of a call refused at `stage`: everything up to that guard, then the blocked event and
/// row, and nothing else.
fn refused_trace(stage: Stage) -> Vec<String> {
    let stop = FULL
        .iter()
        .position(|entry| *entry == stage.last_entry())
        .unwrap();
    FULL[..=stop]
        .iter()
        .map(|entry| entry.to_string())
        .chain(["event:tool_execution_blocked".into(), "row:blocked".into()])
        .collect()
}

#[tokio::test]
async fn a_call_every_guard_allows_passes_them_all_in_pipeline_order() {
    let (result, trace) = dispatch_refusing(&[]).await;
    assert_eq!(result.as_value(), Some(&json!({"n": 1})));
    assert_eq!(trace, FULL);
}

#[tokio::test]
async fn each_reason_stops_the_call_at_its_own_guard() {
    for stage in STAGES {
        let (result, trace) = dispatch_refusing(&[stage]).await;
        assert_eq!(
            result.block_reason(),
            Some(stage.reason()),
            "{stage:?}: {result:?}"
        );
        assert_eq!(trace, refused_trace(stage), "{stage:?}");
        assert!(!trace.iter().any(|entry| entry == "body"), "{stage:?}");
    }
}

#[tokio::test]
async fn the_earlier_of_two_refusing_guards_decides() {
    for (i, &first) in STAGES.iter().enumerate() {
        for &second in &STAGES[i + 1..] {
            let (result, trace) = dispatch_refusing(&[first, second]).await;
            assert_eq!(
                result.block_reason(),
                Some(first.reason()),
                "{first:?} + {second:?}"
            );
            assert_eq!(trace, refused_trace(first), "{first:?} + {second:?}");
        }
    }
}

#[tokio::test]
async fn trust_and_permission_share_a_reason_but_say_who_refused() {
    let (by_trust, _) = dispatch_refusing(&[Stage::Trust, Stage::Permission]).await;
    assert_eq!(error_of(&by_trust).message, "trust says no");
    let (by_permission, _) = dispatch_refusing(&[Stage::Permission]).await;
    assert_eq!(error_of(&by_permission).message, "permission says no");
}

#[tokio::test]
async fn the_host_validator_runs_before_the_run_validator_and_cannot_be_removed() {
    let (result, trace) = dispatch_refusing(&[Stage::Validator]).await;
    assert_eq!(error_of(&result).message, "validator says no");
    assert!(!trace.contains(&"run_validator".to_owned()));
    let (result, _) = dispatch_refusing(&[Stage::RunValidator]).await;
    assert_eq!(error_of(&result).message, "run_validator says no");
}

#[tokio::test]
async fn guards_of_one_stage_run_in_the_order_added_and_the_first_no_ends_the_call() {
    let trace = Trace::new();
    let policy = |label: &'static str, allow: bool| {
        let trace = trace.clone();
        permission_fn(move |_, _, _| {
            trace.push(label);
            if allow { Ok(()) } else { Err(label.into()) }
        })
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("tool")]))
        .permission(policy("first", true))
        .permission(policy("second", false))
        .permission(policy("third", true))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "tool", json!({}))).await;
    assert_eq!(result.block_reason(), Some(BlockReason::PermissionDenied));
    assert_eq!(trace.entries(), ["first", "second"]);
}

#[tokio::test]
async fn middleware_composes_in_the_order_added_for_calls_and_results() {
    let trace = Trace::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("tool")]))
        .middleware(TracedMiddleware(trace.clone(), "#1"))
        .middleware(TracedMiddleware(trace.clone(), "#2"))
        .build();
    run(&dispatcher, ToolCall::new("c", "tool", json!({}))).await;
    assert_eq!(
        trace.entries(),
        [
            "middleware:call#1",
            "middleware:call#2",
            "middleware:result#1",
            "middleware:result#2"
        ]
    );
}
