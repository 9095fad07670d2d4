//! The outcome table, row by row: the result's shape, its reason and code, the event emitted and
//! the ledger row written. Every call ends exactly once.

mod common;

use std::sync::Arc;

use common::*;
use prism::call::{BlockReason, ErrorCode, ErrorInfo, ToolOutcome};
use prism::context::CancellationToken;
use prism::dispatch::{DispatchBuilder, ManualClock, ToolEventKind};
use prism::effects::{
    Claim, ClaimRequest, EffectKey, EffectPolicy, EffectStore, InMemoryEffectStore,
};
use prism::guard::{
    GuardrailRule, RulePack, before_execute_fn, permission_fn, trust_fn, validator_fn,
};
use prism::registry::{ToolFilter, ToolGrant, ToolScope};
use prism::{
    Dispatcher, Tool, ToolCall, ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry,
    ToolResult,
};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Clone)]
struct Add;

impl Tool for Add {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = i64;
    type Error = std::convert::Infallible;

    async fn call(self, args: AddArgs, _ctx: ToolExecutionContext) -> Result<i64, Self::Error> {
        Ok(args.a + args.b)
    }
}

struct Fixture {
    runs: Runs,
    watch: Watch,
}

impl Fixture {
    fn new() -> Self {
        Self {
            runs: Runs::new(),
            watch: Watch::new(),
        }
    }

    fn registry(&self) -> ToolRegistry {
        ToolRegistry::from_iter([
            counted("echo", &self.runs),
            ToolDefinition::builder("fails").run_sync(|_, _| Err("disk full".into())),
            ToolDefinition::builder("rate_limited")
                .run_sync(|_, _| Err(ToolError::with_code("rate_limited", "try again in 5 s"))),
            ToolDefinition::builder("panics").run_sync(|_, _| panic!("index out of bounds")),
            ToolDefinition::from_tool(Add),
        ])
    }

    fn builder(&self) -> DispatchBuilder {
        self.watch.attach(Dispatcher::builder(self.registry()))
    }

    /// Asserts a blocked ending with one blocked event and one blocked row, and no body run.
    fn assert_blocked(&self, result: &ToolResult, reason: BlockReason, code: ErrorCode) {
        let ToolOutcome::Blocked(error) = &result.outcome else {
            panic!("expected a blocked result, got {result:?}");
        };
        assert_eq!(
            (error.reason, &error.code),
            (Some(reason), &code),
            "{error:?}"
        );
        let events = self.watch.events.events();
        assert_eq!(self.watch.event_types(), ["tool_execution_blocked"]);
        assert_eq!(
            events[0].kind,
            ToolEventKind::ToolExecutionBlocked {
                reason,
                error: error.clone()
            }
        );
        let rows = self.watch.ledger.records();
        assert_eq!(self.watch.statuses(), ["blocked"]);
        assert_eq!(rows[0].reason, Some(reason));
        assert_eq!(rows[0].outcome.as_ref(), Some(&result.outcome));
        assert!(rows[0].finished_at.is_some() && rows[0].started_at.is_none());
        assert_eq!(self.runs.count(), 0, "a blocked call never runs");
    }

    /// Asserts an error ending: one error event and one error row, after a started pair when the
    /// tool began running.
    fn assert_failed(&self, result: &ToolResult, code: ErrorCode, started: bool) {
        let ToolOutcome::Error(error) = &result.outcome else {
            panic!("expected an error result, got {result:?}");
        };
        assert_eq!(error.code, code, "{error:?}");
        assert_eq!(error.reason, None);
        let (events, rows) = if started {
            (
                vec!["tool_execution_started", "tool_execution_error"],
                vec!["started", "error"],
            )
        } else {
            (vec!["tool_execution_error"], vec!["error"])
        };
        assert_eq!(self.watch.event_types(), events);
        assert_eq!(self.watch.statuses(), rows);
        let last = self.watch.ledger.records().pop().unwrap();
        assert_eq!(last.outcome.as_ref(), Some(&result.outcome));
        assert_eq!(last.reason, None);
        assert!(last.finished_at.is_some());
    }
}

#[tokio::test]
async fn success_is_a_value_with_a_finished_event_and_row() {
    let f = Fixture::new();
    let dispatcher = f.builder().filter(ToolFilter::allow(["echo"])).build();
    let result = run(
        &dispatcher,
        ToolCall::new("call_1", "echo", json!({"text": "hi"})),
    )
    .await;
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"toolCallId": "call_1", "name": "echo", "value": {"text": "hi"}})
    );
    assert_eq!(
        f.watch.event_types(),
        ["tool_execution_started", "tool_execution_finished"]
    );
    assert_eq!(f.watch.statuses(), ["started", "finished"]);
    f.watch.assert_one_ending("call_1");
}

#[tokio::test]
async fn unknown_tool() {
    let f = Fixture::new();
    let result = run(&f.builder().build(), ToolCall::new("c", "nope", json!({}))).await;
    f.assert_blocked(&result, BlockReason::UnknownTool, ErrorCode::UnknownTool);
    assert_eq!(error_of(&result).message, "Unknown tool: nope");
    assert_eq!(
        &*result.name, "nope",
        "the result names what the model asked for"
    );
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"toolCallId": "c", "name": "nope",
               "error": {"code": "unknown_tool", "message": "Unknown tool: nope", "reason": "unknown_tool"}})
    );
}

/// Dispatches `{}` to `echo` through the dispatcher `configure` builds, asserts a blocked ending
/// with `reason` and `code`, and returns the message.
async fn refused_by(
    configure: impl FnOnce(DispatchBuilder) -> Dispatcher,
    reason: BlockReason,
    code: ErrorCode,
) -> String {
    let f = Fixture::new();
    let dispatcher = configure(f.builder());
    let result = run(&dispatcher, ToolCall::new("c", "echo", json!({}))).await;
    f.assert_blocked(&result, reason, code);
    error_of(&result).message.clone()
}

#[tokio::test]
async fn filtered_out() {
    let deny = |builder: DispatchBuilder| builder.filter(ToolFilter::deny(["echo"])).build();
    refused_by(deny, BlockReason::ToolDenied, ErrorCode::ToolDenied).await;
}

#[tokio::test]
async fn hidden_this_turn() {
    let f = Fixture::new();
    let ctx =
        ctx().with_scope(ToolScope::new(ToolGrant::All).with_visible(ToolGrant::only(["add"])));
    let result = run_in(
        &f.builder().build(),
        ToolCall::new("c", "echo", json!({})),
        &ctx,
    )
    .await;
    f.assert_blocked(&result, BlockReason::ToolDenied, ErrorCode::ToolDenied);
}

#[tokio::test]
async fn arguments_that_are_not_an_object() {
    for (arguments, kind) in [
        (Value::Null, "null"),
        (json!(true), "a boolean"),
        (json!(3), "a number"),
        (json!("{\"text\": \"hi\"}"), "a string"),
        (json!([1, 2]), "an array"),
    ] {
        let f = Fixture::new();
        let result = run(&f.builder().build(), ToolCall::new("c", "echo", arguments)).await;
        f.assert_blocked(
            &result,
            BlockReason::InvalidArguments,
            ErrorCode::InvalidArguments,
        );
        assert!(error_of(&result).message.contains(kind), "{result:?}");
    }
}

#[tokio::test]
async fn malformed_argument_text() {
    let f = Fixture::new();
    let call = ToolCall::malformed(
        "c",
        "echo",
        "EOF while parsing an object at line 1 column 9",
    );
    let result = run(&f.builder().build(), call).await;
    f.assert_blocked(
        &result,
        BlockReason::InvalidArguments,
        ErrorCode::InvalidJsonArguments,
    );
    assert!(error_of(&result).message.contains("EOF while parsing"));
    let row = serde_json::to_value(&f.watch.ledger.records()[0]).unwrap();
    assert_eq!(row["reason"], "invalid_arguments");
    assert_eq!(row["result"]["error"]["code"], "invalid_json_arguments");
}

#[tokio::test]
async fn malformed_argument_text_wins_over_parsed_arguments() {
    let f = Fixture::new();
    let mut call = ToolCall::new("c", "echo", json!({"text": "looks fine"}));
    call.arguments_error = Some("trailing characters".into());
    let result = run(&f.builder().build(), call).await;
    f.assert_blocked(
        &result,
        BlockReason::InvalidArguments,
        ErrorCode::InvalidJsonArguments,
    );
}

#[tokio::test]
async fn typed_decoding_failure_names_the_field() {
    let f = Fixture::new();
    let dispatcher = f.builder().build();
    let result = run(
        &dispatcher,
        ToolCall::new("c", "add", json!({"a": 1, "b": "two"})),
    )
    .await;
    f.assert_blocked(
        &result,
        BlockReason::InvalidArguments,
        ErrorCode::InvalidArguments,
    );
    assert!(error_of(&result).message.contains("`b`"), "{result:?}");

    let missing = run(&dispatcher, ToolCall::new("d", "add", json!({"a": 1}))).await;
    assert!(
        error_of(&missing).message.contains("missing field `b`"),
        "{missing:?}"
    );
    let fine = run(
        &dispatcher,
        ToolCall::new("e", "add", json!({"a": 1, "b": 2})),
    )
    .await;
    assert_eq!(fine.as_value(), Some(&json!(3)));
}

#[tokio::test]
async fn trust_or_permission_refused() {
    let untrusted = |builder: DispatchBuilder| {
        builder
            .trust(trust_fn(|_, _| Err("untrusted session".into())))
            .build()
    };
    let message = refused_by(
        untrusted,
        BlockReason::PermissionDenied,
        ErrorCode::PermissionDenied,
    )
    .await;
    assert_eq!(message, "untrusted session");

    let forbidden = |builder: DispatchBuilder| {
        builder
            .permission(permission_fn(|_, _, _| Err("not yours".into())))
            .build()
    };
    let message = refused_by(
        forbidden,
        BlockReason::PermissionDenied,
        ErrorCode::PermissionDenied,
    )
    .await;
    assert_eq!(message, "not yours");
}

#[tokio::test]
async fn validator_refused_with_a_message_or_an_error_info() {
    let with_message = |builder: DispatchBuilder| {
        builder
            .validate(validator_fn(|_, _| Err("text is required".into())))
            .build()
    };
    let message = refused_by(
        with_message,
        BlockReason::ValidationFailed,
        ErrorCode::ValidationFailed,
    )
    .await;
    assert_eq!(message, "text is required");

    let own_code = ErrorCode::parse("schema_mismatch");
    let with_info = |builder: DispatchBuilder| {
        builder
            .validate(validator_fn(|_, _| {
                Err(
                    ErrorInfo::new(ErrorCode::parse("schema_mismatch"), "text must be a string")
                        .into(),
                )
            }))
            .build()
    };
    let message = refused_by(with_info, BlockReason::ValidationFailed, own_code).await;
    assert_eq!(message, "text must be a string");
}

#[tokio::test]
async fn before_execute_refused() {
    let dry_run = |builder: DispatchBuilder| {
        builder
            .before_execute(before_execute_fn(|_, _, _| Err("dry run".into())))
            .build()
    };
    refused_by(
        dry_run,
        BlockReason::ExecutionDenied,
        ErrorCode::ExecutionDenied,
    )
    .await;
}

#[tokio::test]
async fn input_guardrail_block() {
    let guarded = |builder: DispatchBuilder| {
        builder
            .guardrails(RulePack::new("tools").rule(GuardrailRule::deny_tools("no_echo", ["echo"])))
            .build()
    };
    let message = refused_by(
        guarded,
        BlockReason::GuardrailBlocked,
        ErrorCode::GuardrailBlocked,
    )
    .await;
    assert_eq!(message, "Blocked by guardrail rule pack:tools/no_echo");
}

#[tokio::test]
async fn effect_outcome_unknown() {
    let f = Fixture::new();
    let clock = ManualClock::new(0);
    let store = Arc::new(InMemoryEffectStore::new());
    let policy = EffectPolicy::new(std::time::Duration::from_secs(1));
    let runs = f.runs.clone();
    let registry = ToolRegistry::from_iter([ToolDefinition::builder("pay")
        .effect(policy.clone())
        .run_sync(move |_, _| {
            runs.hit();
            Ok(json!("paid"))
        })]);
    let key = EffectKey::new("pay", &policy, &json!({"cents": 5}));
    let request = ClaimRequest {
        key: &key,
        owner: "crashed-worker",
        now: 0,
        lease: policy.lease,
    };
    assert_eq!(store.claim(request).await, Ok(Claim::Acquired));
    clock.set(1_001);

    let dispatcher = f
        .watch
        .attach(Dispatcher::builder(registry))
        .effects(Arc::clone(&store) as Arc<dyn EffectStore>)
        .clock(clock)
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "pay", json!({"cents": 5}))).await;
    f.assert_failed(&result, ErrorCode::EffectOutcomeUnknown, false);
    assert_eq!(f.runs.count(), 0);
}

#[tokio::test]
async fn tool_error_with_the_default_or_its_own_code() {
    let f = Fixture::new();
    let result = run(&f.builder().build(), ToolCall::new("c", "fails", json!({}))).await;
    f.assert_failed(&result, ErrorCode::ToolError, true);
    assert_eq!(error_of(&result).message, "disk full");

    let f = Fixture::new();
    let result = run(
        &f.builder().build(),
        ToolCall::new("c", "rate_limited", json!({})),
    )
    .await;
    f.assert_failed(&result, ErrorCode::parse("rate_limited"), true);
    assert_eq!(
        serde_json::to_value(&result).unwrap()["error"]["code"],
        "rate_limited"
    );
}

#[tokio::test]
async fn tool_panicked() {
    let f = Fixture::new();
    let result = run(
        &f.builder().build(),
        ToolCall::new("c", "panics", json!({})),
    )
    .await;
    f.assert_failed(&result, ErrorCode::ToolPanicked, true);
    assert!(error_of(&result).message.contains("index out of bounds"));
}

#[tokio::test]
async fn cancelled_through_the_context() {
    let f = Fixture::new();
    let token = CancellationToken::new();
    token.cancel();
    let ctx = ctx().with_cancellation(token);
    let result = run_in(
        &f.builder().build(),
        ToolCall::new("c", "echo", json!({})),
        &ctx,
    )
    .await;
    f.assert_failed(&result, ErrorCode::Cancelled, false);
    assert_eq!(f.runs.count(), 0);
}

#[tokio::test]
async fn output_guardrail_block_closes_the_started_row() {
    let f = Fixture::new();
    let pack = RulePack::new("dlp").rule(GuardrailRule::output_contains("card", ["4111"]));
    let dispatcher = f.builder().guardrails(pack).build();
    let result = run(
        &dispatcher,
        ToolCall::new("c", "echo", json!({"card": "4111 1111"})),
    )
    .await;
    let ToolOutcome::Blocked(error) = &result.outcome else {
        panic!("{result:?}")
    };
    assert_eq!(error.reason, Some(BlockReason::GuardrailBlocked));
    assert_eq!(
        f.runs.count(),
        1,
        "the tool ran; only its result is withheld"
    );
    assert_eq!(
        f.watch.event_types(),
        ["tool_execution_started", "tool_execution_blocked"]
    );
    assert_eq!(f.watch.statuses(), ["started", "blocked"]);
    assert_eq!(
        f.watch.ledger.records()[1].reason,
        Some(BlockReason::GuardrailBlocked)
    );
    assert!(!serde_json::to_string(&result).unwrap().contains("4111"));
}

#[test]
fn codes_owned_by_the_run_layer_have_their_wire_names() {
    for (code, wire) in [
        (ErrorCode::ToolCallNotDispatched, "tool_call_not_dispatched"),
        (ErrorCode::ToolRoundLimit, "tool_round_limit"),
        (ErrorCode::EffectOutcomeUnknown, "effect_outcome_unknown"),
        (ErrorCode::Cancelled, "cancelled"),
    ] {
        assert_eq!(serde_json::to_value(&code).unwrap(), json!(wire));
        assert_eq!(ErrorCode::parse(wire), code);
    }
    for reason in [
        BlockReason::UnknownTool,
        BlockReason::ToolDenied,
        BlockReason::InvalidArguments,
        BlockReason::PermissionDenied,
        BlockReason::ValidationFailed,
        BlockReason::ExecutionDenied,
        BlockReason::GuardrailBlocked,
    ] {
        assert_eq!(
            serde_json::to_value(reason).unwrap(),
            json!(reason.as_str())
        );
        assert_eq!(ErrorCode::from(reason).as_str(), reason.as_str());
    }
}

#[test]
fn results_read_back_from_the_wire_keep_their_kind() {
    let blocked = ToolResult::blocked("c".into(), "x", BlockReason::ToolDenied, "no");
    let failed = ToolResult::error(
        "d".into(),
        "y",
        ErrorInfo::new(ErrorCode::ToolError, "boom"),
    );
    let null_value = ToolResult::value("e".into(), "z", Value::Null);
    for result in [blocked, failed, null_value] {
        let back: ToolResult =
            serde_json::from_value(serde_json::to_value(&result).unwrap()).unwrap();
        assert_eq!(back, result);
    }
}
