//! Effects: at most once, or say unknown. Recorded outcomes are replayed without running the
//! tool, live claims are in flight, expired claims are unknown and never run again by themselves.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use prism::call::{BlockReason, ErrorCode, ToolOutcome};
use prism::dispatch::{Clock, ManualClock};
use prism::effects::{
    BoxFuture, Claim, ClaimRequest, EffectKey, EffectKeySecret, EffectPolicy, EffectState,
    EffectStore, EffectStoreError, InMemoryEffectStore, RecordedOutcome, Resolution,
};
use prism::guard::{GuardrailRule, RulePack, before_execute_fn, validator_fn};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolError, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tokio::sync::Notify;

const LEASE_MS: u64 = 1_000;

fn policy() -> EffectPolicy {
    EffectPolicy::new(Duration::from_millis(LEASE_MS))
}

struct Setup {
    runs: Runs,
    clock: ManualClock,
    store: InMemoryEffectStore,
    watch: Watch,
    dispatcher: Dispatcher,
}

/// The tool `pay` with an effect policy: counts its runs and answers with `body`.
fn pay_tool(
    runs: &Runs,
    body: impl Fn(&Value) -> Result<Value, ToolError> + Send + Sync + 'static,
) -> ToolDefinition {
    let runs = runs.clone();
    ToolDefinition::builder("pay")
        .effect(policy())
        .run_sync(move |args, _| {
            runs.hit();
            body(args)
        })
}

/// A dispatcher over `pay` (and a plain `echo`), with an effect store and a manual clock.
fn setup(body: impl Fn(&Value) -> Result<Value, ToolError> + Send + Sync + 'static) -> Setup {
    let runs = Runs::new();
    let tool = pay_tool(&runs, body);
    setup_with(runs, tool)
}

fn setup_with(runs: Runs, tool: ToolDefinition) -> Setup {
    let clock = ManualClock::new(10_000);
    let store = InMemoryEffectStore::new();
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([
            tool,
            echo("plain"),
        ])))
        .effects(store.clone())
        .clock(clock.clone())
        .build();
    Setup {
        runs,
        clock,
        store,
        watch,
        dispatcher,
    }
}

fn key(arguments: &Value) -> EffectKey {
    EffectKey::new("pay", &policy(), arguments)
}

impl Setup {
    async fn pay(&self, id: &str, arguments: Value) -> ToolResult {
        run(&self.dispatcher, ToolCall::new(id, "pay", arguments)).await
    }

    /// The error code of paying with `arguments`, which must fail.
    async fn code_of(&self, id: &str, arguments: Value) -> ErrorCode {
        error_of(&self.pay(id, arguments).await).code.clone()
    }

    /// Lets the lease of a claim taken now run out, then checks that paying again reads unknown.
    async fn assert_unknown_once_expired(&self, id: &str) {
        self.clock.advance(LEASE_MS);
        let code = self.code_of(id, json!({})).await;
        assert_eq!(code, ErrorCode::EffectOutcomeUnknown);
    }

    async fn claim_as(&self, owner: &str, arguments: &Value) {
        let key = key(arguments);
        let request = ClaimRequest {
            key: &key,
            owner,
            now: self.clock.now_millis(),
            lease: policy().lease,
        };
        assert_eq!(self.store.claim(request).await, Ok(Claim::Acquired));
    }

    async fn state(&self, arguments: &Value) -> Option<EffectState> {
        self.store.state(&key(arguments)).await.unwrap()
    }
}

#[tokio::test]
async fn a_recorded_value_is_returned_again_without_running_the_tool() {
    let s = setup(|args| Ok(json!({"paid": args["cents"]})));
    let first = s.pay("c1", json!({"to": "bob", "cents": 5})).await;
    assert_eq!(first.as_value(), Some(&json!({"paid": 5})));

    s.watch.events.take();
    let again = s.pay("c2", json!({"cents": 5, "to": "bob"})).await;
    assert_eq!(again.as_value(), first.as_value());
    assert_eq!(again.tool_call_id.as_str(), "c2");
    assert_eq!(s.runs.count(), 1, "key order does not make a new effect");
    assert_eq!(
        s.watch.event_types(),
        ["tool_execution_finished"],
        "nothing started the second time"
    );
    assert_eq!(
        s.state(&json!({"to": "bob", "cents": 5})).await,
        Some(EffectState::Recorded(RecordedOutcome::Value(
            json!({"paid": 5})
        )))
    );
}

#[tokio::test]
async fn a_recorded_error_is_returned_again_without_running_the_tool() {
    let s = setup(|_| Err(ToolError::with_code("card_declined", "insufficient funds")));
    let first = s.pay("c1", json!({"cents": 5})).await;
    let again = s.pay("c2", json!({"cents": 5})).await;
    assert_eq!(s.runs.count(), 1);
    assert_eq!(again.error_info(), first.error_info());
    assert!(
        matches!(again.outcome, ToolOutcome::Error(_)),
        "still an error, not a block"
    );
    assert_eq!(error_of(&again).code, ErrorCode::parse("card_declined"));
}

#[tokio::test]
async fn other_arguments_are_another_effect() {
    let s = setup(|_| Ok(json!("ok")));
    s.pay("c1", json!({"cents": 5})).await;
    s.pay("c2", json!({"cents": 6})).await;
    assert_eq!(s.runs.count(), 2);
}

#[tokio::test]
async fn tools_without_a_policy_or_dispatchers_without_a_store_never_claim() {
    let s = setup(|_| Ok(json!("ok")));
    run(&s.dispatcher, ToolCall::new("a", "plain", json!({"n": 1}))).await;
    run(&s.dispatcher, ToolCall::new("b", "plain", json!({"n": 1}))).await;
    assert_eq!(
        s.watch.statuses(),
        ["started", "finished", "started", "finished"]
    );

    let runs = Runs::new();
    let tool = pay_tool(&runs, |_| Ok(Value::Null));
    let storeless = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    run(&storeless, ToolCall::new("a", "pay", json!({}))).await;
    run(&storeless, ToolCall::new("b", "pay", json!({}))).await;
    assert_eq!(runs.count(), 2);
}

#[tokio::test]
async fn a_call_while_the_same_effect_runs_is_in_flight() {
    let (entered, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let runs = Runs::new();
    let tool = {
        let (entered, release, runs) = (Arc::clone(&entered), Arc::clone(&release), runs.clone());
        ToolDefinition::builder("pay")
            .effect(policy())
            .run(move |_, _| {
                let (entered, release, runs) =
                    (Arc::clone(&entered), Arc::clone(&release), runs.clone());
                async move {
                    runs.hit();
                    entered.notify_one();
                    release.notified().await;
                    Ok(json!("paid once"))
                }
            })
    };
    let s = setup_with(runs, tool);
    let context = ctx();
    let first = s
        .dispatcher
        .dispatch(ToolCall::new("c1", "pay", json!({})), &context);
    let second = async {
        entered.notified().await;
        let result = s
            .dispatcher
            .dispatch(ToolCall::new("c2", "pay", json!({})), &context)
            .await;
        release.notify_one();
        result
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.unwrap().as_value(), Some(&json!("paid once")));
    let second = second.unwrap();
    assert_eq!(error_of(&second).code, ErrorCode::EffectInFlight);
    assert_eq!(s.runs.count(), 1);
}

#[tokio::test]
async fn a_claim_is_in_flight_until_its_lease_expires_and_unknown_after() {
    let s = setup(|_| Ok(json!("ok")));
    s.claim_as("another-worker", &json!({})).await;

    s.clock.advance(LEASE_MS - 1);
    assert_eq!(s.code_of("c1", json!({})).await, ErrorCode::EffectInFlight);
    s.clock.advance(1);
    let unknown = s.pay("c2", json!({})).await;
    assert_eq!(error_of(&unknown).code, ErrorCode::EffectOutcomeUnknown);
    assert!(
        error_of(&unknown).message.contains("not run again"),
        "{unknown:?}"
    );
    assert_eq!(s.runs.count(), 0);
}

#[tokio::test]
async fn an_unknown_outcome_is_never_replayed_automatically() {
    let s = setup(|_| Ok(json!("ok")));
    s.claim_as("crashed", &json!({})).await;
    s.clock.advance(LEASE_MS * 100);
    for id in ["a", "b", "c"] {
        assert_eq!(
            s.code_of(id, json!({})).await,
            ErrorCode::EffectOutcomeUnknown
        );
    }
    assert_eq!(s.runs.count(), 0);
    assert!(matches!(
        s.state(&json!({})).await,
        Some(EffectState::Claimed { .. })
    ));
    assert_eq!(s.watch.statuses(), ["error", "error", "error"]);
}

#[tokio::test]
async fn a_dispatch_dropped_mid_call_leaves_an_open_row_and_an_unknown_effect() {
    let entered = Arc::new(Notify::new());
    let runs = Runs::new();
    let tool = {
        let (entered, runs) = (Arc::clone(&entered), runs.clone());
        ToolDefinition::builder("pay")
            .effect(policy())
            .run(move |_, _| {
                let (entered, runs) = (Arc::clone(&entered), runs.clone());
                async move {
                    runs.hit();
                    entered.notify_one();
                    std::future::pending::<()>().await;
                    Ok(Value::Null)
                }
            })
    };
    let s = setup_with(runs, tool);
    let context = ctx();
    tokio::select! {
        _ = s.dispatcher.dispatch(ToolCall::new("c1", "pay", json!({})), &context) => panic!("the body never ends"),
        () = entered.notified() => {}
    }
    assert_eq!(
        s.watch.statuses(),
        ["started"],
        "the started row has no ending"
    );

    assert_eq!(s.code_of("c2", json!({})).await, ErrorCode::EffectInFlight);
    s.assert_unknown_once_expired("c3").await;
    assert_eq!(s.runs.count(), 1);
}

#[tokio::test]
async fn the_host_resolves_an_unknown_effect_by_recording_or_releasing_it() {
    let s = setup(|_| Ok(json!("ran")));
    s.claim_as("crashed", &json!({"n": 1})).await;
    s.claim_as("crashed", &json!({"n": 2})).await;
    s.clock.advance(LEASE_MS);

    let recorded = RecordedOutcome::Value(json!("confirmed by the bank"));
    s.store
        .resolve(&key(&json!({"n": 1})), Resolution::Record(recorded))
        .await
        .unwrap();
    let result = s.pay("c1", json!({"n": 1})).await;
    assert_eq!(result.as_value(), Some(&json!("confirmed by the bank")));
    assert_eq!(s.runs.count(), 0);

    s.store
        .resolve(&key(&json!({"n": 2})), Resolution::Release)
        .await
        .unwrap();
    let result = s.pay("c2", json!({"n": 2})).await;
    assert_eq!(result.as_value(), Some(&json!("ran")));
    assert_eq!(s.runs.count(), 1);

    let missing = s
        .store
        .resolve(&key(&json!({"n": 3})), Resolution::Release)
        .await;
    assert_eq!(missing, Err(EffectStoreError::NotFound));
}

#[tokio::test]
async fn a_panicked_effect_is_not_recorded_and_reads_unknown_later() {
    let s = setup(|_| panic!("crashed halfway"));
    assert_eq!(s.code_of("c1", json!({})).await, ErrorCode::ToolPanicked);
    assert!(matches!(
        s.state(&json!({})).await,
        Some(EffectState::Claimed { .. })
    ));
    s.assert_unknown_once_expired("c2").await;
    assert_eq!(s.runs.count(), 1);
}

#[tokio::test]
async fn refused_calls_claim_nothing() {
    let runs = Runs::new();
    let tool = pay_tool(&runs, |_| Ok(Value::Null));
    let store = InMemoryEffectStore::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .validate(validator_fn(|_, args| {
            if args.get("bad").is_some() {
                Err("bad".into())
            } else {
                Ok(())
            }
        }))
        .before_execute(before_execute_fn(|_, args, _| {
            if args.get("late").is_some() {
                Err("no".into())
            } else {
                Ok(())
            }
        }))
        .effects(store.clone())
        .build();
    for arguments in [json!({"bad": 1}), json!({"late": 1})] {
        let result = run(&dispatcher, ToolCall::new("c", "pay", arguments.clone())).await;
        assert!(result.block_reason().is_some());
        assert_eq!(store.state(&key(&arguments)).await, Ok(None), "{arguments}");
    }
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn a_blocked_output_is_recorded_and_replayed_as_blocked() {
    let runs = Runs::new();
    let tool = pay_tool(&runs, |_| Ok(json!("card 4111")));
    let store = InMemoryEffectStore::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .guardrails(RulePack::new("dlp").rule(GuardrailRule::output_contains("card", ["4111"])))
        .effects(store.clone())
        .build();
    let first = run(&dispatcher, ToolCall::new("a", "pay", json!({}))).await;
    let again = run(&dispatcher, ToolCall::new("b", "pay", json!({}))).await;
    assert_eq!(first.block_reason(), Some(BlockReason::GuardrailBlocked));
    assert_eq!(again.outcome, first.outcome);
    assert_eq!(runs.count(), 1);
}

/// A tripwire stops the run that met it; the same call replayed from the effect store (a retry,
/// a resumed run) must stop its run too, not hand the model the blocked result as an answer.
#[tokio::test]
async fn a_tripped_output_trips_again_when_replayed() {
    let runs = Runs::new();
    let tool = pay_tool(&runs, |_| Ok(json!("card 4111")));
    let store = InMemoryEffectStore::new();
    let pack =
        RulePack::new("dlp").rule(GuardrailRule::output_contains("card", ["4111"]).tripwire());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .guardrails(pack)
        .effects(store.clone())
        .build();
    let first = dispatcher
        .dispatch(ToolCall::new("a", "pay", json!({})), &ctx())
        .await
        .expect_err("the first call trips");
    let again = dispatcher
        .dispatch(ToolCall::new("b", "pay", json!({})), &ctx())
        .await
        .expect_err("the replayed call trips as well");
    assert_eq!(again.result().outcome, first.result().outcome);
    assert_eq!(again.result().tool_call_id.as_str(), "b");
    assert_eq!(runs.count(), 1);
}

/// A store that fails in one of three ways.
#[derive(Clone, Copy, Debug)]
enum Breakage {
    ClaimFails,
    ClaimPanics,
    CompletePanics,
}

struct BrokenStore(Breakage);

impl EffectStore for BrokenStore {
    fn claim<'a>(
        &'a self,
        _request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        match self.0 {
            Breakage::ClaimFails => {
                Box::pin(async { Err(EffectStoreError::Backend("connection refused".into())) })
            }
            Breakage::ClaimPanics => panic!("driver bug"),
            Breakage::CompletePanics => Box::pin(async { Ok(Claim::Acquired) }),
        }
    }
    fn complete<'a>(
        &'a self,
        _: &'a EffectKey,
        _: &'a str,
        _: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        Box::pin(async { panic!("disk vanished") })
    }
    fn resolve<'a>(
        &'a self,
        _: &'a EffectKey,
        _: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        Box::pin(async { Ok(()) })
    }
    fn state<'a>(
        &'a self,
        _: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        Box::pin(async { Ok(None) })
    }
}

async fn dispatch_with(breakage: Breakage) -> (ToolResult, Runs, Watch) {
    let runs = Runs::new();
    let tool = pay_tool(&runs, |_| Ok(json!("paid")));
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
        .effects(BrokenStore(breakage))
        .build();
    let result = run(&dispatcher, ToolCall::new("c", "pay", json!({}))).await;
    (result, runs, watch)
}

#[tokio::test]
async fn a_failing_or_panicking_claim_means_the_tool_does_not_run() {
    for breakage in [Breakage::ClaimFails, Breakage::ClaimPanics] {
        let (result, runs, watch) = dispatch_with(breakage).await;
        assert_eq!(
            error_of(&result).code,
            ErrorCode::EffectStoreError,
            "{breakage:?}"
        );
        assert_eq!(runs.count(), 0);
        assert_eq!(watch.statuses(), ["error"]);
    }
}

#[tokio::test]
async fn a_store_panicking_while_recording_leaves_the_result_alone() {
    let (result, runs, watch) = dispatch_with(Breakage::CompletePanics).await;
    assert_eq!(result.as_value(), Some(&json!("paid")));
    assert_eq!(runs.count(), 1);
    assert_eq!(watch.statuses(), ["started", "finished"]);
}

#[tokio::test]
async fn only_the_owner_can_complete_a_claim() {
    let store = InMemoryEffectStore::new();
    let key = key(&json!({}));
    let request = ClaimRequest {
        key: &key,
        owner: "a",
        now: 0,
        lease: policy().lease,
    };
    store.claim(request).await.unwrap();
    let outcome = RecordedOutcome::Value(json!(1));
    assert_eq!(
        store.complete(&key, "b", outcome.clone()).await,
        Err(EffectStoreError::NotOwner)
    );
    assert_eq!(store.complete(&key, "a", outcome.clone()).await, Ok(()));
    assert_eq!(
        store.state(&key).await,
        Ok(Some(EffectState::Recorded(outcome)))
    );
    let unknown_key = EffectKey::from_hex("00");
    assert_eq!(
        store
            .complete(&unknown_key, "a", RecordedOutcome::Value(json!(2)))
            .await,
        Err(EffectStoreError::NotFound)
    );
}

#[test]
fn keys_depend_on_tool_scope_and_canonical_arguments_only() {
    let arguments = json!({"b": [1, 2.5], "a": {"y": 1, "x": "é"}});
    let reordered = json!({"a": {"x": "é", "y": 1}, "b": [1, 2.5]});
    assert_eq!(key(&arguments), key(&reordered));
    assert_eq!(key(&arguments).as_str().len(), 64);
    assert_ne!(
        key(&arguments),
        EffectKey::new("refund", &policy(), &arguments)
    );
    assert_ne!(
        key(&arguments),
        EffectKey::new("pay", &policy().with_scope("tenant-2"), &arguments)
    );
    assert_ne!(key(&json!({"n": 1})), key(&json!({"n": 2})));
    // The lease is not part of the key: lengthening it must not duplicate an effect.
    assert_eq!(
        key(&arguments),
        EffectKey::new(
            "pay",
            &EffectPolicy::new(Duration::from_secs(9)),
            &arguments
        )
    );
}

#[tokio::test]
async fn a_dispatcher_with_a_key_secret_stores_keyed_effect_keys() {
    let runs = Runs::new();
    let store = InMemoryEffectStore::new();
    let secret = EffectKeySecret::new("host key");
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([pay_tool(&runs, |_| {
        Ok(json!("paid"))
    })]))
    .effects(store.clone())
    .effect_key_secret(secret.clone())
    .build();
    let arguments = json!({"pin": "1234"});
    for id in ["c1", "c2"] {
        let result = run(&dispatcher, ToolCall::new(id, "pay", arguments.clone())).await;
        assert_eq!(result.as_value(), Some(&json!("paid")));
    }
    assert_eq!(runs.count(), 1, "the second call replays the first");
    let keyed = EffectKey::keyed("pay", &policy(), &arguments, &secret);
    assert!(matches!(
        store.state(&keyed).await,
        Ok(Some(EffectState::Recorded(_)))
    ));
    assert_eq!(store.state(&key(&arguments)).await, Ok(None));
    assert!(!format!("{dispatcher:?}").contains("host key"));
}

#[tokio::test]
async fn a_store_given_as_a_clone_an_arc_or_a_shared_trait_object_records_where_the_host_reads() {
    let arguments = json!({"cents": 100});
    let handle = InMemoryEffectStore::new();
    let arc = Arc::new(InMemoryEffectStore::new());
    let shared: Arc<dyn EffectStore> = Arc::new(InMemoryEffectStore::new());
    let builders = [
        Dispatcher::builder(ToolRegistry::new()).effects(handle.clone()),
        Dispatcher::builder(ToolRegistry::new()).effects(Arc::clone(&arc)),
        Dispatcher::builder(ToolRegistry::new()).effects(Arc::clone(&shared)),
    ];
    let readers: [&dyn EffectStore; 3] = [&handle, &arc, &shared];
    for (builder, reader) in builders.into_iter().zip(readers) {
        let runs = Runs::new();
        let dispatcher = builder.build();
        dispatcher
            .register(pay_tool(&runs, |_| Ok(json!("paid"))))
            .unwrap();
        run(&dispatcher, ToolCall::new("a", "pay", arguments.clone())).await;
        run(&dispatcher, ToolCall::new("b", "pay", arguments.clone())).await;
        assert_eq!(runs.count(), 1, "the second call replays the first");
        assert_eq!(
            reader.state(&key(&arguments)).await,
            Ok(Some(EffectState::Recorded(RecordedOutcome::Value(json!(
                "paid"
            )))))
        );
    }
}

#[tokio::test]
async fn clones_of_an_in_memory_store_share_their_claims() {
    let store = InMemoryEffectStore::new();
    let other = store.clone();
    let key = key(&json!({}));
    let request = ClaimRequest {
        key: &key,
        owner: "a",
        now: 0,
        lease: Duration::from_millis(LEASE_MS),
    };
    assert_eq!(store.claim(request).await, Ok(Claim::Acquired));
    assert!(matches!(
        other.claim(ClaimRequest { owner: "b", ..request }).await,
        Ok(Claim::InFlight { owner, .. }) if owner == "a"
    ));
    other.resolve(&key, Resolution::Release).await.unwrap();
    assert_eq!(store.state(&key).await, Ok(None));
}

/// An in-memory store whose claim fires the run's cancellation token while it is taken, as a
/// host cancelling a run while a slow store answers would.
struct CancelledWhileClaiming {
    store: InMemoryEffectStore,
    token: prism::context::CancellationToken,
}

impl EffectStore for CancelledWhileClaiming {
    fn claim<'a>(
        &'a self,
        request: ClaimRequest<'a>,
    ) -> BoxFuture<'a, Result<Claim, EffectStoreError>> {
        self.token.cancel();
        self.store.claim(request)
    }
    fn complete<'a>(
        &'a self,
        key: &'a EffectKey,
        owner: &'a str,
        outcome: RecordedOutcome,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        self.store.complete(key, owner, outcome)
    }
    fn resolve<'a>(
        &'a self,
        key: &'a EffectKey,
        resolution: Resolution,
    ) -> BoxFuture<'a, Result<(), EffectStoreError>> {
        self.store.resolve(key, resolution)
    }
    fn state<'a>(
        &'a self,
        key: &'a EffectKey,
    ) -> BoxFuture<'a, Result<Option<EffectState>, EffectStoreError>> {
        self.store.state(key)
    }
}

#[tokio::test]
async fn a_call_cancelled_while_its_effect_is_claimed_does_not_run_and_releases_the_claim() {
    let runs = Runs::new();
    let store = InMemoryEffectStore::new();
    let token = prism::context::CancellationToken::new();
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([pay_tool(
            &runs,
            |_| Ok(json!("paid")),
        )])))
        .effects(CancelledWhileClaiming {
            store: store.clone(),
            token: token.clone(),
        })
        .build();
    let arguments = json!({"amount": 5});
    let ctx = ctx().with_cancellation(token);
    let result = run_in(
        &dispatcher,
        ToolCall::new("c", "pay", arguments.clone()),
        &ctx,
    )
    .await;
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled, "{result:?}");
    assert_eq!(runs.count(), 0, "the tool ran after its run was cancelled");
    watch.assert_one_ending("c");
    // Its effect certainly did not happen: the next call runs the tool, not `unknown`.
    assert_eq!(store.state(&key(&arguments)).await.unwrap(), None);
}
