//! Panics in any piece of user code never reach the host, and every call still gets exactly one
//! result: guards fail closed with their own reason, middleware and tool panics are
//! `tool_panicked`, observer panics change nothing.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use common::*;
use prism::call::{BlockReason, ErrorCode, ToolOutcome};
use prism::context::CancellationToken;
use prism::definition::{NotPrepared, Prepared, Refusal, ToolFuture, ToolHandler};
use prism::dispatch::{
    Clock, CollectingSink, DispatchBuilder, Millis, RunLedger, SecretRedactor, ToolCallRecord,
    event_fn,
};
use prism::guard::{
    ArgumentValidator, GuardrailRule, RulePack, before_execute_fn, call_middleware, permission_fn,
    result_middleware, trust_fn, validator_fn,
};
use prism::registry::{ToolGrant, ToolScope};
use prism::{
    Dispatcher, Tool, ToolCall, ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry,
    ToolResult,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

/// Dispatches call `c` to the tool named `tool` and checks that it ended exactly once.
async fn survive<S, T, P, V>(
    builder: DispatchBuilder<S, T, P, V>,
    ctx: &ToolExecutionContext,
) -> (ToolResult, Watch) {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(builder)
        .redactor(SecretRedactor::new(["pw-123"]))
        .build();
    let result = run_in(
        &dispatcher,
        ToolCall::new("c", "tool", json!({"n": 1})),
        ctx,
    )
    .await;
    assert_eq!(result.tool_call_id.as_str(), "c");
    watch.assert_one_ending("c");
    (result, watch)
}

fn with_counted(runs: &Runs) -> DispatchBuilder {
    Dispatcher::builder(ToolRegistry::from_iter([counted("tool", runs)]))
}

fn with_tool(tool: ToolDefinition) -> DispatchBuilder {
    Dispatcher::builder(ToolRegistry::from_iter([tool]))
}

fn assert_blocked(result: &ToolResult, reason: BlockReason, runs: &Runs) {
    assert_eq!(result.block_reason(), Some(reason), "{result:?}");
    assert!(error_of(result).message.contains("panicked"), "{result:?}");
    assert_eq!(runs.count(), 0);
}

fn assert_tool_panicked(result: &ToolResult, mentions: &str) {
    let error = error_of(result);
    assert_eq!(error.code, ErrorCode::ToolPanicked, "{result:?}");
    assert!(matches!(result.outcome, ToolOutcome::Error(_)));
    assert!(error.message.contains(mentions), "{error:?}");
}

#[tokio::test]
async fn guard_panics_refuse_the_call_with_their_own_reason() {
    let runs = Runs::new();
    let (result, _) = survive(
        with_counted(&runs).trust(trust_fn(|_, _| -> Result<(), Refusal> { panic!("trust") })),
        &ctx(),
    )
    .await;
    assert_blocked(&result, BlockReason::PermissionDenied, &runs);

    let permission = permission_fn(|_, _, _| -> Result<(), Refusal> { panic!("permission") });
    let (result, _) = survive(with_counted(&runs).permission(permission), &ctx()).await;
    assert_blocked(&result, BlockReason::PermissionDenied, &runs);

    let validator = validator_fn(|_, _| -> Result<(), Refusal> { panic!("validator") });
    let (result, _) = survive(with_counted(&runs).validate(validator), &ctx()).await;
    assert_blocked(&result, BlockReason::ValidationFailed, &runs);

    let run_validator: Arc<dyn ArgumentValidator> =
        Arc::new(validator_fn(|_, _| -> Result<(), Refusal> {
            panic!("run validator")
        }));
    let scoped = ctx().with_scope(ToolScope::new(ToolGrant::All).with_validator(run_validator));
    let (result, _) = survive(with_counted(&runs), &scoped).await;
    assert_blocked(&result, BlockReason::ValidationFailed, &runs);

    let policy = before_execute_fn(|_, _, _| -> Result<(), Refusal> { panic!("policy") });
    let (result, _) = survive(with_counted(&runs).before_execute(policy), &ctx()).await;
    assert_blocked(&result, BlockReason::ExecutionDenied, &runs);
}

#[tokio::test]
async fn guardrail_panics_block_inputs_and_outputs() {
    let runs = Runs::new();
    let input =
        RulePack::new("p").rule(GuardrailRule::on_input("r", |_, _| panic!("regex blew up")));
    let (result, _) = survive(with_counted(&runs).guardrails(input), &ctx()).await;
    assert_blocked(&result, BlockReason::GuardrailBlocked, &runs);
    assert!(
        error_of(&result)
            .message
            .starts_with("Tool call blocked: an input guardrail panicked"),
        "{result:?}"
    );

    let output = RulePack::new("p").rule(GuardrailRule::on_output("r", |_, _| {
        panic!("classifier down")
    }));
    let (result, watch) = survive(with_counted(&runs).guardrails(output), &ctx()).await;
    assert_eq!(result.block_reason(), Some(BlockReason::GuardrailBlocked));
    assert!(
        error_of(&result)
            .message
            .starts_with("Tool result blocked: an output guardrail panicked"),
        "{result:?}"
    );
    assert_eq!(watch.statuses(), ["started", "blocked"]);
}

#[tokio::test]
async fn middleware_panics_are_tool_panicked() {
    let runs = Runs::new();
    let on_call = call_middleware(|_| panic!("rewrite pw-123 failed"));
    let (result, _) = survive(with_counted(&runs).middleware(on_call), &ctx()).await;
    assert_tool_panicked(
        &result,
        "tool_call middleware panicked: rewrite [REDACTED] failed",
    );
    assert_eq!(runs.count(), 0);

    let on_result = result_middleware(|_| panic!("wrap failed"));
    let (result, watch) = survive(with_counted(&runs).middleware(on_result), &ctx()).await;
    assert_tool_panicked(&result, "tool_result middleware panicked");
    assert_eq!(runs.count(), 1);
    assert_eq!(watch.statuses(), ["started", "error"]);
}

#[tokio::test]
async fn body_panics_are_tool_panicked_bounded_and_redacted() {
    let sync = ToolDefinition::builder("tool")
        .run_sync(|_, _| -> Result<Value, ToolError> { panic!("{}pw-123", "x".repeat(300)) });
    let (result, _) = survive(with_tool(sync), &ctx()).await;
    assert_tool_panicked(&result, "tool tool panicked");
    let message = &error_of(&result).message;
    assert!(
        message.len() <= 200 && !message.contains("pw-"),
        "{message}"
    );

    let after_await = ToolDefinition::builder("tool").run(|_, _| async {
        tokio::task::yield_now().await;
        panic!("late")
    });
    assert_tool_panicked(&survive(with_tool(after_await), &ctx()).await.0, "late");

    let odd_payload = ToolDefinition::builder("tool")
        .run_sync(|_, _| -> Result<Value, ToolError> { std::panic::panic_any(42_u8) });
    assert_tool_panicked(
        &survive(with_tool(odd_payload), &ctx()).await.0,
        "non-text payload",
    );
}

/// Arguments whose `Deserialize` panics.
struct Explosive;

impl<'de> Deserialize<'de> for Explosive {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("decoder bug")
    }
}

/// Output whose `Serialize` panics.
struct Unprintable;

impl Serialize for Unprintable {
    fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        panic!("encoder bug")
    }
}

/// An error whose `Display` panics.
struct Mute;

impl std::fmt::Display for Mute {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("display bug")
    }
}

macro_rules! typed_tool {
    ($name:ident, $args:ty, $output:ty, $error:ty, $body:expr) => {
        #[derive(Clone)]
        struct $name;
        impl Tool for $name {
            const NAME: &'static str = "tool";
            type Args = $args;
            type Output = $output;
            type Error = $error;
            async fn call(
                self,
                _args: $args,
                _ctx: ToolExecutionContext,
            ) -> Result<$output, $error> {
                $body
            }
        }
    };
}

typed_tool!(
    Decodes,
    Explosive,
    Value,
    std::convert::Infallible,
    Ok(Value::Null)
);
typed_tool!(
    Encodes,
    Value,
    Unprintable,
    std::convert::Infallible,
    Ok(Unprintable)
);
typed_tool!(Fails, Value, Value, Mute, Err(Mute));

#[tokio::test]
async fn serde_and_display_panics_in_user_types_are_tool_panicked() {
    let (result, watch) = survive(with_tool(ToolDefinition::from_tool(Decodes)), &ctx()).await;
    assert_tool_panicked(&result, "decoder bug");
    assert_eq!(
        watch.statuses(),
        ["error"],
        "decoding happens before the tool starts"
    );

    let (result, _) = survive(with_tool(ToolDefinition::from_tool(Encodes)), &ctx()).await;
    assert_tool_panicked(&result, "encoder bug");

    let (result, _) = survive(with_tool(ToolDefinition::from_tool(Fails)), &ctx()).await;
    assert_tool_panicked(&result, "display bug");
}

/// A tool whose `Clone` panics: the dispatcher clones a typed tool for every call.
struct CloneBomb(Runs);

impl Clone for CloneBomb {
    fn clone(&self) -> Self {
        panic!("clone bug")
    }
}

impl Tool for CloneBomb {
    const NAME: &'static str = "tool";
    type Args = Value;
    type Output = Value;
    type Error = std::convert::Infallible;

    async fn call(self, _args: Value, _ctx: ToolExecutionContext) -> Result<Value, Self::Error> {
        self.0.hit();
        Ok(Value::Null)
    }
}

#[tokio::test]
async fn a_tool_whose_clone_panics_never_runs_and_ends_tool_panicked() {
    let runs = Runs::new();
    let tool = ToolDefinition::from_tool(CloneBomb(runs.clone()));
    let (result, watch) = survive(with_tool(tool), &ctx()).await;
    assert_tool_panicked(&result, "clone bug");
    assert!(
        error_of(&result)
            .message
            .starts_with("preparing tool tool panicked"),
        "{result:?}"
    );
    assert_eq!(watch.statuses(), ["error"], "the tool never started");
    assert_eq!(runs.count(), 0);
}

struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("drop exploded");
    }
}

#[tokio::test]
async fn a_panic_payload_that_panics_when_dropped_is_tool_panicked() {
    let tool = ToolDefinition::builder("tool")
        .run_sync(|_, _| -> Result<Value, ToolError> { std::panic::panic_any(PanicOnDrop) });
    assert_tool_panicked(
        &survive(with_tool(tool), &ctx()).await.0,
        "non-text payload",
    );
}

#[tokio::test]
async fn a_body_that_panics_when_dropped_after_cancellation_still_ends_cancelled() {
    let token = CancellationToken::new();
    let tool = {
        let token = token.clone();
        ToolDefinition::builder("tool").run(move |_, _| {
            let token = token.clone();
            async move {
                let _armed = PanicOnDrop;
                token.cancel();
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
        })
    };
    let ctx = ctx().with_cancellation(token.clone());
    let (result, _) = survive(with_tool(tool), &ctx).await;
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
}

#[tokio::test]
async fn a_body_that_panics_when_dropped_unpolled_still_ends_refused() {
    let tool = ToolDefinition::builder("tool").run(|_, _| {
        let armed = PanicOnDrop;
        async move {
            let _armed = armed;
            Ok(Value::Null)
        }
    });
    let refuse = before_execute_fn(|_, _, _| Err("not now".into()));
    let (result, _) = survive(with_tool(tool).before_execute(refuse), &ctx()).await;
    assert_eq!(result.block_reason(), Some(BlockReason::ExecutionDenied));
}

/// A body that is ready at once but panics when dropped afterwards.
struct ReadyThenExplode {
    _armed: PanicOnDrop,
}

impl Future for ReadyThenExplode {
    type Output = Result<Value, ToolError>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(json!("done")))
    }
}

struct ExplodingHandler;

impl ToolHandler for ExplodingHandler {
    fn prepare(&self, _: &Value, _: ToolExecutionContext) -> Result<Prepared, NotPrepared> {
        Ok(ToolFuture::new(ReadyThenExplode {
            _armed: PanicOnDrop,
        })
        .into())
    }
}

#[tokio::test]
async fn a_body_that_panics_when_dropped_after_finishing_keeps_its_result() {
    let tool = ToolDefinition::builder("tool").handler(ExplodingHandler);
    let (result, _) = survive(with_tool(tool), &ctx()).await;
    assert_eq!(result.as_value(), Some(&json!("done")));
}

struct ExplodingLedger;

impl RunLedger for ExplodingLedger {
    fn append(&self, _: &ToolCallRecord) {
        panic!("ledger full");
    }
}

#[tokio::test]
async fn sink_and_ledger_panics_change_nothing() {
    let runs = Runs::new();
    let later_sink = CollectingSink::new();
    let dispatcher = with_counted(&runs)
        .events(event_fn(|_| panic!("sink down")))
        .events(later_sink.clone())
        .ledger(ExplodingLedger)
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "tool", json!({"n": 1}))).await;
    assert_eq!(result.as_value(), Some(&json!({"n": 1})));
    let kinds: Vec<_> = later_sink
        .events()
        .iter()
        .map(|event| event.kind.type_name())
        .collect();
    assert_eq!(
        kinds,
        ["tool_execution_started", "tool_execution_finished"],
        "later sinks still hear everything"
    );

    let blocked = run(&dispatcher, ToolCall::new("d", "ghost", json!({}))).await;
    assert_eq!(blocked.block_reason(), Some(BlockReason::UnknownTool));
}

#[derive(Debug)]
struct BrokenClock;

impl Clock for BrokenClock {
    fn now_millis(&self) -> Millis {
        panic!("clock unavailable")
    }
}

#[tokio::test]
async fn a_panicking_clock_does_not_reach_the_host() {
    let runs = Runs::new();
    let (result, _) = survive(with_counted(&runs).clock(BrokenClock), &ctx()).await;
    assert_eq!(result.as_value(), Some(&json!({"n": 1})));
}

#[tokio::test]
async fn a_panicking_clock_does_not_reach_a_run() {
    use prism::run::{RunEventLog, ScriptedProvider};
    use prism::{Agent, ProviderResponse, RunOptions};

    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "tool", json!({}))]),
        ProviderResponse::text("done"),
    ]);
    let runs = Runs::new();
    let log = RunEventLog::new();
    let agent = Agent::new(with_counted(&runs).clock(BrokenClock).build(), provider)
        .with_clock(BrokenClock)
        .with_events(log.clone());
    let outcome = agent
        .session("s")
        .run("go", RunOptions::new())
        .await
        .unwrap();
    assert_eq!(outcome.summary().text, "done");
    assert_eq!(outcome.summary().tool_rounds, 1);
    assert_eq!(runs.count(), 1, "the tool ran once");
    let events = log.events();
    assert!(
        events.len() >= 2,
        "run events are still stamped and delivered"
    );
    assert!(
        events.iter().all(|event| event.at > 0),
        "with the system clock's time"
    );
}

/// A destructor that panics is logged without its message, which nothing redacts.
mod drop_panic_log {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll};

    use prism::dispatch::SecretRedactor;
    use prism::{
        Dispatcher, ToolCall, ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry,
    };
    use serde_json::{Value, json};
    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
    use tracing_subscriber::{Layer, Registry};

    const SECRET: &str = "pg-password-0123456789abcdef";

    /// A body that answers at once and panics, naming its secret, when dropped.
    struct Body;

    impl Future for Body {
        type Output = Result<Value, ToolError>;
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
            Poll::Ready(Ok(json!("done")))
        }
    }

    impl Drop for Body {
        fn drop(&mut self) {
            panic!("closing the connection with password {SECRET} failed");
        }
    }

    /// Every field of every event, as text.
    #[derive(Clone, Default)]
    struct Logged(Arc<Mutex<Vec<String>>>);

    struct Fields<'a>(&'a mut Vec<String>);

    impl Visit for Fields<'_> {
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.push(format!("{}={value}", field.name()));
        }
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0.push(format!("{}={value:?}", field.name()));
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Logged {
        fn on_event(&self, event: &tracing::Event<'_>, _: LayerContext<'_, S>) {
            let mut fields = Vec::new();
            event.record(&mut Fields(&mut fields));
            self.0.lock().unwrap().extend(fields);
        }
    }

    #[test]
    fn a_drop_panic_is_logged_without_its_message() {
        // In a process of its own: another thread registering the log's callsite while this
        // subscriber is set can leave the callsite disabled for it.
        crate::common::isolated(
            "drop_panic_log::a_drop_panic_is_logged_without_its_message",
            logs_without_the_message,
        );
    }

    fn logs_without_the_message() {
        let logged = Logged::default();
        let subscriber = Registry::default().with(logged.clone());
        tracing::subscriber::with_default(subscriber, || {
            let tool = ToolDefinition::builder("close").run(|_, _| Body);
            let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
                .redactor(SecretRedactor::new([SECRET]))
                .build();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let result = runtime
                .block_on(dispatcher.dispatch(
                    ToolCall::new("c1", "close", json!({})),
                    &ToolExecutionContext::new(),
                ))
                .unwrap();
            assert_eq!(result.as_value(), Some(&json!("done")));
        });
        let logged = logged.0.lock().unwrap().clone();
        assert!(
            logged
                .iter()
                .any(|field| field.contains("panicked while being dropped")),
            "the drop panic was logged: {logged:?}"
        );
        let leaks: Vec<&String> = logged.iter().filter(|f| f.contains(SECRET)).collect();
        assert!(leaks.is_empty(), "a log field holds the secret: {leaks:?}");
    }
}

/// A store whose claim never answers and panics when dropped.
struct StuckStore;

impl prism::effects::EffectStore for StuckStore {
    fn claim<'a>(
        &'a self,
        _: prism::effects::ClaimRequest<'a>,
    ) -> prism::effects::BoxFuture<
        'a,
        Result<prism::effects::Claim, prism::effects::EffectStoreError>,
    > {
        Box::pin(async {
            let _armed = PanicOnDrop;
            std::future::pending().await
        })
    }
    fn complete<'a>(
        &'a self,
        _: &'a prism::effects::EffectKey,
        _: &'a str,
        _: prism::effects::RecordedOutcome,
    ) -> prism::effects::BoxFuture<'a, Result<(), prism::effects::EffectStoreError>> {
        Box::pin(async { Ok(()) })
    }
    fn resolve<'a>(
        &'a self,
        _: &'a prism::effects::EffectKey,
        _: prism::effects::Resolution,
    ) -> prism::effects::BoxFuture<'a, Result<(), prism::effects::EffectStoreError>> {
        Box::pin(async { Ok(()) })
    }
    fn state<'a>(
        &'a self,
        _: &'a prism::effects::EffectKey,
    ) -> prism::effects::BoxFuture<
        'a,
        Result<Option<prism::effects::EffectState>, prism::effects::EffectStoreError>,
    > {
        Box::pin(async { Ok(None) })
    }
}

/// Polls the dispatch of a call to `tool` once (it must wait), then drops it, as a host's
/// timeout around `dispatch` would.
fn poll_once_then_drop(dispatcher: &Dispatcher) {
    let ctx = ctx();
    let mut dispatch =
        std::pin::pin!(dispatcher.dispatch(ToolCall::new("c", "tool", json!({})), &ctx));
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(dispatch.as_mut().poll(&mut cx).is_pending());
}

#[test]
fn dropping_a_dispatch_that_waits_on_user_code_keeps_its_drop_panics_from_the_host() {
    let runs = Runs::new();
    let pending_check = permission_fn(|_, _, _| {
        prism::guard::Verdict::pending(async {
            let _armed = PanicOnDrop;
            std::future::pending::<()>().await;
            Ok(())
        })
    });
    poll_once_then_drop(&with_counted(&runs).permission(pending_check).build());

    let effectful = ToolDefinition::builder("tool")
        .effect(prism::effects::EffectPolicy::default())
        .run_sync(|_, _| Ok(Value::Null));
    poll_once_then_drop(&with_tool(effectful).effects(StuckStore).build());
    assert_eq!(runs.count(), 0);
}
