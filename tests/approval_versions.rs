//! An approval covers the version of the tool it was asked about: a tool re-registered with
//! another definition while the run waits does not run under it.

mod run_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prism::call::BlockReason;
use prism::run::{
    ApprovalDecision, ApprovalKey, InMemoryApprovalStore, RunEnd, ScriptedProvider, SessionState,
};
use prism::{ProviderResponse, RunOptions, Session, ToolCall, ToolRegistry};
use run_support::{tool_rows, wipe, wipe_asking_agent};
use serde_json::{Value, json};

fn script() -> ScriptedProvider {
    ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "wipe", json!({"path": "/tmp/cache"}))]),
        ProviderResponse::text("done"),
    ])
}

/// A session whose run waits for the approval of its `wipe` call, and that approval's key.
async fn suspended(
    registry: &ToolRegistry,
    store: &InMemoryApprovalStore,
    provider: &ScriptedProvider,
) -> (Session, ApprovalKey) {
    let mut session = wipe_asking_agent(registry, store, provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    (session, key)
}

/// The `wipe` tool with a wider schema and another body, counting its runs in `runs`.
fn wider_wipe(runs: &Arc<AtomicUsize>) -> prism::ToolDefinition {
    let runs = Arc::clone(runs);
    prism::ToolDefinition::builder("wipe")
        .description("Deletes a path, recursively and without asking.")
        .parameters(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}}
        }))
        .run_sync(move |_args: &Value, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!("wiped everything"))
        })
}

#[tokio::test]
async fn a_tool_changed_while_its_call_waited_does_not_run_under_the_approval() {
    let old_runs = Arc::new(AtomicUsize::new(0));
    let new_runs = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&old_runs)]);
    let store = InMemoryApprovalStore::new();
    let provider = script();
    let (session, key) = suspended(&registry, &store, &provider).await;
    let stored = serde_json::to_string(&session.state()).unwrap();

    // While the call waits, the host replaces the tool under the same name.
    registry.register(wider_wipe(&new_runs)).unwrap();
    let state: SessionState = serde_json::from_str(&stored).unwrap();
    let mut restored = wipe_asking_agent(&registry, &store, &provider).restore(state);
    let outcome = restored
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        new_runs.load(Ordering::SeqCst),
        0,
        "the new tool was never approved"
    );
    assert_eq!(old_runs.load(Ordering::SeqCst), 0);
    let rows = tool_rows(restored.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
    let message = &rows[0].error_info().unwrap().message;
    assert!(
        message.contains("wipe changed since its approval was asked"),
        "{message}"
    );
    assert!(
        !message.contains("/tmp/cache"),
        "no argument in the message: {message}"
    );
}

#[tokio::test]
async fn the_same_tool_registered_again_still_runs_under_the_approval() {
    // Re-registering an identical definition (a restarted process does) is the same version.
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&runs)]);
    let store = InMemoryApprovalStore::new();
    let provider = script();
    let (mut session, key) = suspended(&registry, &store, &provider).await;

    registry.register(wipe(&runs)).unwrap();
    let outcome = session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(tool_rows(session.transcript())[0].is_success());
}

#[tokio::test]
async fn a_state_stored_without_the_tool_version_refuses_the_approved_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&runs)]);
    let store = InMemoryApprovalStore::new();
    let provider = script();
    let (session, key) = suspended(&registry, &store, &provider).await;

    // States stored before versions were kept have no `tool_version` on the waiting call.
    let mut state = serde_json::to_value(session.state()).unwrap();
    let held = state["suspended"]["calls"][0].as_object_mut().unwrap();
    assert_eq!(held["status"], "pending");
    held.remove("tool_version");
    let state: SessionState = serde_json::from_value(state).unwrap();
    let mut restored = wipe_asking_agent(&registry, &store, &provider).restore(state);
    let outcome = restored
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "an unknown version is not assumed"
    );
    let rows = tool_rows(restored.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
    let message = &rows[0].error_info().unwrap().message;
    assert!(message.contains("does not say which version"), "{message}");
}

#[tokio::test]
async fn a_tool_removed_while_its_call_waited_is_refused_as_removed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&runs)]);
    let store = InMemoryApprovalStore::new();
    let provider = script();
    let (mut session, key) = suspended(&registry, &store, &provider).await;

    // While the call waits, the host takes the tool away.
    registry.remove("wipe");
    let outcome = session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();

    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let rows = tool_rows(session.transcript());
    assert_eq!(rows[0].block_reason(), Some(BlockReason::PermissionDenied));
    let message = &rows[0].error_info().unwrap().message;
    assert!(message.contains("removed"), "{message}");
    assert!(!message.contains("Unknown tool"), "{message}");
}
