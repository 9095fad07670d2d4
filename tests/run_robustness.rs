//! The run layer against failing parts: approval stores and providers that panic, a store that
//! lost a request, a model that repeats a call id. Every call still gets one row, no panic
//! reaches the host, and an approval runs one call once.

mod run_support;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures_util::FutureExt;
use prism::context::CancellationToken;
use prism::effects::BoxFuture;
use prism::run::{
    AgentConfig, ApprovalDecision, ApprovalKey, ApprovalRecord, ApprovalStore, ApprovalStoreError,
    ApprovalVerdict, ArtifactLoop, ArtifactVerdict, InMemoryApprovalStore, LoopStrategy,
    PendingApproval, RunEnd, ScriptedProvider, SessionState, approval_fn, artifact_validator_fn,
};
use prism::{
    Agent, Dispatcher, Message, Provider, ProviderError, ProviderRequest, ProviderResponse,
    RunError, RunOptions, ToolCall, ToolDefinition, ToolRegistry,
};
use run_support::{named, summary, tool_rows, wipe};
use serde_json::{Value, json};

fn wipe_call(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "wipe", json!({ "path": path }))
}

/// `read` and a counting `wipe` (which needs approval under [`agent_with`]'s policy), and a
/// provider that calls both in one turn (`c1`, then `c2` on `/tmp`), then answers.
fn read_then_wipe() -> (ToolRegistry, ScriptedProvider, Arc<AtomicUsize>) {
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([named("read"), wipe(&wipes)]);
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "read", json!({})),
            wipe_call("c2", "/tmp"),
        ]),
        ProviderResponse::text("done"),
    ]);
    (registry, provider, wipes)
}

fn agent_with(registry: ToolRegistry, provider: impl Provider, store: impl ApprovalStore) -> Agent {
    Agent::new(Dispatcher::builder(registry).build(), provider)
        .with_approvals(store)
        .with_approval_policy(approval_fn(|tool, _| {
            tool.annotations().destructive == Some(true)
        }))
}

/// The ids of the calls in the transcript's assistant rows, in order.
fn call_ids(transcript: &[Message]) -> Vec<String> {
    transcript
        .iter()
        .flat_map(|row| match row {
            Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .map(|call| call.id.to_string())
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect()
}

fn row_ids(transcript: &[Message]) -> Vec<String> {
    tool_rows(transcript)
        .iter()
        .map(|row| row.tool_call_id.to_string())
        .collect()
}

/// An in-memory store whose chosen method panics: `request` from its `n`-th call (from 0) when
/// `panic_on_request` is `Some(n)`.
#[derive(Clone, Default)]
struct PanickyStore {
    inner: InMemoryApprovalStore,
    panic_on_request: Option<usize>,
    requests: Arc<AtomicUsize>,
    panic_on_consume: bool,
    /// When set, the next `get` fails as a dropped connection would, once.
    fail_next_get: Arc<AtomicBool>,
}

impl ApprovalStore for PanickyStore {
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        let n = self.requests.fetch_add(1, Ordering::SeqCst);
        if self.panic_on_request.is_some_and(|from| n >= from) {
            panic!("approval store request exploded");
        }
        self.inner.request(pending)
    }
    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        self.inner.decide(decision)
    }
    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>> {
        if self.fail_next_get.swap(false, Ordering::SeqCst) {
            let error = ApprovalStoreError::Backend("connection reset".into());
            return Box::pin(std::future::ready(Err(error)));
        }
        self.inner.get(key)
    }
    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PendingApproval>, ApprovalStoreError>> {
        self.inner.pending(session_id)
    }
    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>> {
        if self.panic_on_consume {
            panic!("approval store consume exploded");
        }
        self.inner.consume(key)
    }
}

/// A panic in the approval store while the run suspends must not reach the host, and every call
/// of the batch must still get its row.
#[tokio::test]
async fn a_panicking_approval_store_request_does_not_reach_the_host() {
    let (registry, provider, wipes) = read_then_wipe();
    let store = PanickyStore {
        panic_on_request: Some(0),
        ..PanickyStore::default()
    };
    let mut session = agent_with(registry, provider, store).session("s1");
    let outcome = AssertUnwindSafe(session.run("go", RunOptions::new()))
        .catch_unwind()
        .await;
    assert!(
        outcome.is_ok(),
        "a panic in ApprovalStore::request reached the host"
    );
    assert_eq!(
        row_ids(session.transcript()),
        call_ids(session.transcript())
    );
    assert_eq!(wipes.load(Ordering::SeqCst), 0);
}

/// When a later call's approval cannot be requested, the run cannot wait, and every held call is
/// refused: the earlier calls' requests must not stay pending, where a person could approve a
/// call that will never run.
#[tokio::test]
async fn a_failed_request_leaves_no_earlier_request_pending() {
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&wipes)]);
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/a"), wipe_call("c2", "/b")]),
        ProviderResponse::text("done"),
    ]);
    let store = PanickyStore {
        panic_on_request: Some(1),
        ..PanickyStore::default()
    };
    let inner = store.inner.clone();
    let mut session = agent_with(registry, provider, store).session("s1");
    session
        // Two at once: both calls reach the approval gate.
        .run("go", RunOptions::new().tool_concurrency(2))
        .await
        .expect_err("the second request fails");
    assert_eq!(row_ids(session.transcript()), ["c1", "c2"]);
    let pending = inner.pending("s1").await.unwrap();
    assert!(
        pending.is_empty(),
        "requests left pending for calls that were refused: {:?}",
        pending.iter().map(|p| &p.key.call_id).collect::<Vec<_>>()
    );
    assert_eq!(wipes.load(Ordering::SeqCst), 0);
}

/// A panic in the approval store while the run resumes must not reach the host, nor leave the
/// session neither suspended nor answered.
#[tokio::test]
async fn a_panicking_approval_store_consume_does_not_reach_the_host_nor_lose_the_batch() {
    let (registry, provider, wipes) = read_then_wipe();
    let store = PanickyStore {
        panic_on_consume: true,
        ..PanickyStore::default()
    };
    let mut session = agent_with(registry, provider, store).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();

    let resumed = AssertUnwindSafe(session.resume([ApprovalDecision::approve(&key)]))
        .catch_unwind()
        .await;
    assert!(
        resumed.is_ok(),
        "a panic in ApprovalStore::consume reached the host"
    );
    // A decision that cannot be confirmed runs nothing, and the batch keeps every row.
    assert!(session.suspended().is_none());
    assert_eq!(
        row_ids(session.transcript()),
        call_ids(session.transcript())
    );
    assert_eq!(wipes.load(Ordering::SeqCst), 0);
}

/// One approval is one execution: a second call carrying the same id, tool and arguments (the
/// model repeated itself) must not run on the strength of the first call's approval.
#[tokio::test]
async fn one_approval_runs_a_call_once_even_when_the_model_repeats_its_id() {
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([named("read"), wipe(&wipes)]);
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call("c1", "/data"), wipe_call("c1", "/data")]),
        ProviderResponse::text("done"),
        ProviderResponse::text("done"),
    ]);
    let store = InMemoryApprovalStore::new();
    let mut session = agent_with(registry, provider, store.clone()).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let pending = outcome.pending_approvals().to_vec();
    assert_eq!(
        pending.len(),
        1,
        "the sequential batch holds the first call"
    );

    let _ = session
        .resume([ApprovalDecision::approve(&pending[0].key)])
        .await;
    assert_eq!(
        wipes.load(Ordering::SeqCst),
        1,
        "one approval (one decision, consumed once) executed the destructive call {} times",
        wipes.load(Ordering::SeqCst)
    );
}

/// A provider whose `secrets` panics once a turn has run (a host secret source failing).
struct SecretsPanic {
    inner: ScriptedProvider,
    turned: AtomicBool,
}

impl Provider for SecretsPanic {
    fn complete<'a>(
        &'a self,
        request: ProviderRequest<'a>,
    ) -> BoxFuture<'a, Result<prism::ProviderResponse, ProviderError>> {
        self.turned.store(true, Ordering::SeqCst);
        self.inner.complete(request)
    }

    fn secrets(&self) -> Vec<String> {
        if self.turned.load(Ordering::SeqCst) {
            panic!("the secret source is down");
        }
        Vec::new()
    }
}

#[tokio::test]
async fn a_provider_whose_secrets_panic_does_not_reach_the_host() {
    let provider = SecretsPanic {
        inner: ScriptedProvider::new([ProviderResponse::text("hi")]),
        turned: AtomicBool::new(false),
    };
    let agent = Agent::new(
        Dispatcher::builder(ToolRegistry::from_iter([named("read")])).build(),
        provider,
    );
    let mut session = agent.session("s1");
    let outcome = AssertUnwindSafe(session.run("hello", RunOptions::new()))
        .catch_unwind()
        .await;
    assert!(
        outcome.is_ok(),
        "a panic in Provider::secrets reached the host"
    );
}

/// The approval store of the process that resumes no longer holds the request. The run cannot
/// be approved any more; it must end with every call answered, not stay suspended forever.
#[tokio::test]
async fn a_lost_approval_request_refuses_its_call_instead_of_holding_the_run() {
    let (registry, provider, wipes) = read_then_wipe();
    let mut session = agent_with(
        registry.clone(),
        provider.clone(),
        InMemoryApprovalStore::new(),
    )
    .session("s1");
    session.run("go", RunOptions::new()).await.unwrap();
    let state: SessionState =
        serde_json::from_str(&serde_json::to_string(&session.state()).unwrap()).unwrap();

    // Restored where the store is empty.
    let mut restored = agent_with(registry, provider, InMemoryApprovalStore::new()).restore(state);
    let resumed = restored.resume([]).await;
    assert!(resumed.is_ok(), "{resumed:?}");
    assert!(restored.suspended().is_none());
    assert_eq!(
        row_ids(restored.transcript()),
        call_ids(restored.transcript())
    );
    let refused = tool_rows(restored.transcript())
        .into_iter()
        .find(|row| row.tool_call_id.as_str() == "c2")
        .and_then(|row| row.error_info().cloned())
        .expect("the call whose request was lost is refused");
    assert!(
        refused.message.contains("could not be confirmed"),
        "{}",
        refused.message
    );
    assert_eq!(wipes.load(Ordering::SeqCst), 0);
}

/// In the artifact loop, bounded tool calls run one at a time; the calls of a batch resumed
/// after an approval must too.
#[tokio::test]
async fn a_resumed_artifact_tool_batch_still_runs_one_call_at_a_time() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let slow = {
        let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
        ToolDefinition::builder("slow")
            .parameters(json!({"type": "object"}))
            .run(move |_args: Value, _ctx| {
                let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
                async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    for _ in 0..8 {
                        tokio::task::yield_now().await;
                    }
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    Ok(json!({"slow": true}))
                }
            })
    };
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([slow, wipe(&wipes)]);
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            wipe_call("c1", "/a"),
            ToolCall::new("c2", "slow", json!({})),
            ToolCall::new("c3", "slow", json!({})),
        ]),
        ProviderResponse::text("{\"ok\": true}"),
    ]);
    let agent = agent_with(registry, provider, InMemoryApprovalStore::new()).with_config(
        AgentConfig::new()
            .tool_concurrency(4)
            .loop_strategy(LoopStrategy::GenerateValidateRevise(
                ArtifactLoop::new(1).with_bounded_tools(),
            ))
            .artifact_validator(artifact_validator_fn(|text| {
                match serde_json::from_str::<Value>(text) {
                    Ok(value) => ArtifactVerdict::Accept(value),
                    Err(_) => ArtifactVerdict::Revise("JSON please".into()),
                }
            })),
    );
    let mut session = agent.session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "ok".to_owned()),
            ("c3".to_owned(), "ok".to_owned()),
        ]
    );
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "the resumed artifact batch ran its calls concurrently"
    );
}

/// A resume that failed once its decisions were recorded (here the store dropped a read) is
/// retried with the same decisions, as a host retries after a transient failure: it goes on.
/// Another verdict on a call already decided is still refused.
#[tokio::test]
async fn a_resume_retried_with_the_same_decisions_after_a_failure_goes_on() {
    let (registry, provider, wipes) = read_then_wipe();
    let store = PanickyStore::default();
    let mut session = agent_with(registry, provider, store.clone()).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();

    store.fail_next_get.store(true, Ordering::SeqCst);
    let failed = session.resume([ApprovalDecision::approve(&key)]).await;
    assert!(
        matches!(
            failed,
            Err(RunError::Approval(ApprovalStoreError::Backend(_)))
        ),
        "{failed:?}"
    );
    assert!(session.suspended().is_some(), "still waiting");
    let other_verdict = session
        .resume([ApprovalDecision::refuse(&key, "changed my mind")])
        .await;
    assert_eq!(
        other_verdict.unwrap_err(),
        RunError::Approval(ApprovalStoreError::AlreadyDecided)
    );
    assert_eq!(wipes.load(Ordering::SeqCst), 0);

    let outcome = session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(wipes.load(Ordering::SeqCst), 1);
    assert_eq!(row_ids(session.transcript()), ["c1", "c2"]);
}

/// Which store method stops answering after it fires the run's cancellation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stall {
    Request,
    Decide,
    Consume,
}

/// An in-memory store whose chosen method, once set, fires `token` and then never answers, as
/// a store behind a dead connection would while the host cancels.
#[derive(Clone, Default)]
struct StallingStore {
    inner: InMemoryApprovalStore,
    stall: Arc<std::sync::Mutex<Option<Stall>>>,
    token: CancellationToken,
}

impl StallingStore {
    fn stall(&self, method: Stall) {
        *self.stall.lock().unwrap() = Some(method);
    }

    fn stalls<'a, T: Send + 'a>(
        &self,
        method: Stall,
        answer: BoxFuture<'a, T>,
    ) -> BoxFuture<'a, T> {
        if *self.stall.lock().unwrap() != Some(method) {
            return answer;
        }
        self.token.cancel();
        Box::pin(std::future::pending())
    }
}

impl ApprovalStore for StallingStore {
    fn request<'a>(
        &'a self,
        pending: &'a PendingApproval,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        self.stalls(Stall::Request, self.inner.request(pending))
    }
    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> BoxFuture<'a, Result<(), ApprovalStoreError>> {
        self.stalls(Stall::Decide, self.inner.decide(decision))
    }
    fn get<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, ApprovalStoreError>> {
        self.inner.get(key)
    }
    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PendingApproval>, ApprovalStoreError>> {
        self.inner.pending(session_id)
    }
    fn consume<'a>(
        &'a self,
        key: &'a ApprovalKey,
    ) -> BoxFuture<'a, Result<ApprovalVerdict, ApprovalStoreError>> {
        self.stalls(Stall::Consume, self.inner.consume(key))
    }
}

/// Awaits `work`, failing the test if it has not ended long after the run was cancelled.
async fn ends<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(60), work)
        .await
        .expect("the run ended once cancelled, though the approval store never answered")
}

/// The run's cancellation ends it even while the approval store does not answer: when the run
/// suspends, when it records decisions, and when it confirms them. Every call still gets its
/// row, and nothing that needs approval runs.
#[tokio::test]
async fn a_cancelled_run_does_not_wait_for_an_approval_store_that_never_answers() {
    // Suspending: recording the request never ends.
    let (registry, provider, wipes) = read_then_wipe();
    let store = StallingStore::default();
    store.stall(Stall::Request);
    let options = RunOptions::new().cancellation(store.token.clone());
    let mut session = agent_with(registry, provider, store).session("s1");
    let error = ends(session.run("go", options))
        .await
        .expect_err("the run was cancelled");
    assert_eq!(error, RunError::Cancelled);
    assert_eq!(row_ids(session.transcript()), ["c1", "c2"]);
    assert_eq!(wipes.load(Ordering::SeqCst), 0);

    // Resuming: recording the decision, or confirming it, never ends.
    for stall in [Stall::Decide, Stall::Consume] {
        let (registry, provider, wipes) = read_then_wipe();
        let store = StallingStore::default();
        let mut session = agent_with(registry, provider, store.clone()).session("s1");
        let outcome = session.run("go", RunOptions::new()).await.unwrap();
        let key = outcome.pending_approvals()[0].key.clone();
        store.stall(stall);
        let options = RunOptions::new().cancellation(store.token.clone());
        let answer = ends(session.resume_with([ApprovalDecision::approve(&key)], options)).await;
        assert_eq!(answer.unwrap_err(), RunError::Cancelled, "{stall:?}");
        assert_eq!(wipes.load(Ordering::SeqCst), 0, "{stall:?}");
        if stall == Stall::Decide {
            assert!(
                session.suspended().is_some(),
                "the run can still be resumed"
            );
        } else {
            assert_eq!(row_ids(session.transcript()), ["c1", "c2"]);
        }
    }
}
