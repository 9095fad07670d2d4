//! Cancelling a run: whatever the run is waiting on (a host callback, a call in flight beside one
//! waiting for approval), the run ends `Cancelled` soon after its token fires, and every call the
//! model made still gets one row.

mod run_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use prism::context::CancellationToken;
use prism::definition::Refusal;
use prism::effects::BoxFuture;
use prism::run::{
    AgentConfig, ApprovalStore, InMemoryApprovalStore, NarrowingRequest, RoundCharge,
    ScriptedProvider, ToolNarrowing, ToolRoundGate, approval_fn,
};
use prism::{
    Agent, Dispatcher, ProviderResponse, RunError, RunOptions, Session, ToolCall, ToolDefinition,
    ToolRegistry,
};
use run_support::{named, summary, tool_rows, wipe};
use serde_json::json;

/// A round gate that waits for a person who never answers.
struct NobodyAnswers;

impl ToolRoundGate for NobodyAnswers {
    fn charge<'a>(&'a self, _round: RoundCharge<'a>) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(std::future::pending())
    }
}

/// A narrowing callback that never answers.
struct NeverNarrows;

impl ToolNarrowing for NeverNarrows {
    fn narrow<'a>(
        &'a self,
        _request: NarrowingRequest<'a>,
    ) -> BoxFuture<'a, Result<Vec<String>, String>> {
        Box::pin(std::future::pending())
    }
}

/// How `session`'s run of "go" ends when its token fires a moment after it starts (from another
/// task); it must end within 10 seconds, with an error and no panic.
async fn cancelled_soon(session: &mut Session) -> RunError {
    let token = CancellationToken::new();
    tokio::spawn({
        let token = token.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            token.cancel();
        }
    });
    let run = session.run("go", RunOptions::new().cancellation(token));
    let answer = tokio::time::timeout(
        Duration::from_secs(10),
        std::panic::AssertUnwindSafe(run).catch_unwind(),
    )
    .await
    .expect("the run ends once cancelled");
    answer.expect("no panic reaches the host").unwrap_err()
}

fn agent(registry: ToolRegistry, provider: &ScriptedProvider, config: AgentConfig) -> Agent {
    Agent::new(Dispatcher::builder(registry).build(), provider.clone()).with_config(config)
}

#[tokio::test]
async fn a_run_waiting_on_its_round_gate_ends_when_cancelled() {
    let runs = Arc::new(AtomicUsize::new(0));
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "read", json!({})),
            ToolCall::new("c2", "wipe", json!({"path": "/tmp"})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let registry = ToolRegistry::from_iter([named("read"), wipe(&runs)]);
    let config = AgentConfig::new().charge_tool_round(NobodyAnswers);
    let mut session = agent(registry, &provider, config).session("s1");

    assert_eq!(cancelled_soon(&mut session).await, RunError::Cancelled);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [
            ("c1".to_owned(), "tool_call_not_dispatched".to_owned()),
            ("c2".to_owned(), "tool_call_not_dispatched".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_run_waiting_on_its_narrowing_callback_ends_when_cancelled() {
    let provider = ScriptedProvider::new([ProviderResponse::text("never asked")]);
    let registry = ToolRegistry::from_iter([named("read")]);
    let config = AgentConfig::new().tool_narrowing(NeverNarrows);
    let mut session = agent(registry, &provider, config).session("s1");

    assert_eq!(cancelled_soon(&mut session).await, RunError::Cancelled);
    assert!(provider.requests().is_empty(), "no provider turn was sent");
}

#[tokio::test]
async fn a_run_cancelled_while_a_call_waits_for_approval_ends_cancelled_not_suspended() {
    let runs = Arc::new(AtomicUsize::new(0));
    let token = CancellationToken::new();
    // Runs beside the call that waits for approval; the run is cancelled while it runs.
    let cancels = {
        let token = token.clone();
        ToolDefinition::builder("slow").run(move |_, _| {
            let token = token.clone();
            async move {
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
                token.cancel();
                Ok(json!("finished"))
            }
        })
    };
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "slow", json!({})),
            ToolCall::new("c2", "wipe", json!({"path": "/tmp"})),
            ToolCall::new("c3", "read", json!({})),
        ]),
        ProviderResponse::text("done"),
    ]);
    let registry = ToolRegistry::from_iter([cancels, named("read"), wipe(&runs)]);
    let store = InMemoryApprovalStore::new();
    let mut session = agent(registry, &provider, AgentConfig::new().tool_concurrency(2))
        .with_approvals(store.clone())
        .with_approval_policy(approval_fn(|tool, _| tool.name() == "wipe"))
        .session("s1");

    let run = session.run("go", RunOptions::new().cancellation(token));
    let answer = tokio::time::timeout(Duration::from_secs(10), run).await;

    let error = answer.expect("the run ends").unwrap_err();
    assert_eq!(error, RunError::Cancelled);
    assert!(
        session.suspended().is_none(),
        "a cancelled run does not wait"
    );
    assert!(
        store.pending("s1").await.unwrap().is_empty(),
        "nobody is asked to approve a call of a cancelled run"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        summary(&tool_rows(session.transcript())),
        [
            ("c1".to_owned(), "ok".to_owned()),
            ("c2".to_owned(), "tool_call_not_dispatched".to_owned()),
            ("c3".to_owned(), "tool_call_not_dispatched".to_owned()),
        ]
    );
}

/// A provider turn that never ends and whose future panics when dropped, as a connection guard
/// might when torn down mid-request.
struct StuckProvider;

struct PanicsOnDrop;

impl std::future::Future for PanicsOnDrop {
    type Output = Result<ProviderResponse, prism::ProviderError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::task::Poll::Pending
    }
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the provider's connection guard panicked while torn down");
    }
}

impl prism::Provider for StuckProvider {
    fn complete<'a>(
        &'a self,
        _request: prism::ProviderRequest<'a>,
    ) -> BoxFuture<'a, Result<ProviderResponse, prism::ProviderError>> {
        Box::pin(PanicsOnDrop)
    }
}

#[tokio::test]
async fn a_provider_turn_that_panics_when_dropped_by_cancellation_does_not_reach_the_host() {
    let registry = ToolRegistry::from_iter([named("read")]);
    let mut session =
        Agent::new(Dispatcher::builder(registry).build(), StuckProvider).session("s1");
    assert_eq!(cancelled_soon(&mut session).await, RunError::Cancelled);
}
