//! Cancellation: cooperative, through the context's token, ending the call with code `cancelled`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use prism::call::ErrorCode;
use prism::context::CancellationToken;
use prism::effects::{EffectKey, EffectPolicy, EffectState, EffectStore, InMemoryEffectStore};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolError, ToolRegistry};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Sets its flag when dropped, to show that a body was dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A tool that signals `entered` once running and then waits forever; `dropped` tells whether its
/// body was dropped.
fn stuck_tool(entered: &Arc<Notify>, dropped: &Arc<AtomicBool>) -> ToolDefinition {
    let (entered, dropped) = (Arc::clone(entered), Arc::clone(dropped));
    ToolDefinition::builder("stuck")
        .effect(EffectPolicy::new(Duration::from_secs(1)))
        .run(move |_, _| {
            let (entered, flag) = (Arc::clone(&entered), DropFlag(Arc::clone(&dropped)));
            async move {
                let _flag = flag;
                entered.notify_one();
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
        })
}

#[tokio::test]
async fn a_call_made_after_cancellation_never_runs() {
    let runs = Runs::new();
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([counted(
            "e", &runs,
        )])))
        .build();
    let token = CancellationToken::new();
    token.cancel();
    let result = run_in(
        &dispatcher,
        ToolCall::new("c", "e", json!({})),
        &ctx().with_cancellation(token),
    )
    .await;
    let error = error_of(&result);
    assert_eq!(error.code, ErrorCode::Cancelled);
    assert_eq!(error.message, "The tool call was cancelled");
    assert_eq!(runs.count(), 0);
    assert_eq!(watch.statuses(), ["error"]);
}

#[tokio::test]
async fn cancelling_a_running_call_ends_it_and_drops_its_body() {
    let (entered, dropped) = (Arc::new(Notify::new()), Arc::new(AtomicBool::new(false)));
    let store = Arc::new(InMemoryEffectStore::new());
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([stuck_tool(
            &entered, &dropped,
        )])))
        .effects(Arc::clone(&store) as Arc<dyn EffectStore>)
        .build();
    let token = CancellationToken::new();
    let context = ctx().with_cancellation(token.clone());

    let call = dispatcher.dispatch(ToolCall::new("c", "stuck", json!({})), &context);
    let canceller = async {
        entered.notified().await;
        assert!(!dropped.load(Ordering::SeqCst));
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    let result = result.unwrap();
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the body is dropped before dispatch returns"
    );
    assert_eq!(watch.statuses(), ["started", "error"]);

    // Whether the effect happened is unknown, so nothing is recorded.
    let key = EffectKey::new(
        "stuck",
        &EffectPolicy::new(Duration::from_secs(1)),
        &json!({}),
    );
    assert!(matches!(
        store.state(&key).await,
        Ok(Some(EffectState::Claimed { .. }))
    ));
}

#[tokio::test]
async fn a_tool_that_notices_cancellation_ends_with_code_cancelled() {
    let tool = ToolDefinition::builder("polite").run(|_, ctx| async move {
        ctx.cancellation().cancel();
        ctx.cancellation().cancelled().await;
        Err(ToolError::cancelled())
    });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let result = run_in(&dispatcher, ToolCall::new("c", "polite", json!({})), &ctx()).await;
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
}

#[tokio::test]
async fn a_parent_token_cancels_calls_made_with_a_child_token() {
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([counted("e", &runs)])).build();
    let parent = CancellationToken::new();
    let child = parent.child_token();
    let sibling = parent.child_token();
    sibling.cancel();
    assert!(
        !parent.is_cancelled() && !child.is_cancelled(),
        "a child never cancels its parent"
    );
    parent.cancel();
    let result = run_in(
        &dispatcher,
        ToolCall::new("c", "e", json!({})),
        &ctx().with_cancellation(child),
    )
    .await;
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn cancelling_one_run_leaves_other_runs_alone() {
    let runs = Runs::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([counted("e", &runs)])).build();
    let cancelled = ctx().with_cancellation(CancellationToken::new());
    cancelled.cancellation().cancel();
    let live = ctx();
    assert!(
        !run_in(&dispatcher, ToolCall::new("a", "e", json!({})), &cancelled)
            .await
            .is_success()
    );
    assert!(
        run_in(&dispatcher, ToolCall::new("b", "e", json!({})), &live)
            .await
            .is_success()
    );
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn dropping_the_dispatch_future_drops_the_body_and_leaves_the_row_open() {
    let (entered, dropped) = (Arc::new(Notify::new()), Arc::new(AtomicBool::new(false)));
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([stuck_tool(
            &entered, &dropped,
        )])))
        .build();
    let context = ctx();
    tokio::select! {
        _ = dispatcher.dispatch(ToolCall::new("c", "stuck", json!({})), &context) => panic!("never ends"),
        () = entered.notified() => {}
    }
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(watch.statuses(), ["started"], "documented: no terminal row");
}

/// A dispatcher with a tool `busy` that reports progress once and never ends, and a context
/// under `token` whose progress listener reports again each time an update is relayed, as a
/// busy reporting thread keeps the queue full; with `cancel_on_progress`, the listener also
/// fires `token`.
fn busy_reporter(
    token: &CancellationToken,
    cancel_on_progress: bool,
) -> (Dispatcher, prism::ToolExecutionContext) {
    let tool_ctx: Arc<std::sync::OnceLock<prism::ToolExecutionContext>> = Arc::default();
    let landed = Arc::clone(&tool_ctx);
    let tool =
        ToolDefinition::builder("busy").run(move |_: Value, ctx: prism::ToolExecutionContext| {
            let landed = Arc::clone(&landed);
            async move {
                ctx.progress(json!(0));
                let _ = landed.set(ctx);
                std::future::pending::<()>().await;
                Ok(Value::Null)
            }
        });
    let cancel = token.clone();
    let ctx = ctx()
        .with_cancellation(token.clone())
        .with_progress_listener(move |_| {
            if cancel_on_progress {
                cancel.cancel();
            }
            if let Some(tool_ctx) = tool_ctx.get() {
                tool_ctx.progress(json!(1));
            }
        });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    (dispatcher, ctx)
}

/// Progress that keeps arriving (here re-sent each time the previous update is relayed, as a
/// busy reporting thread would keep the queue full) must not keep a cancelled call running.
#[test]
fn a_cancelled_call_ends_while_its_progress_keeps_arriving() {
    let (dispatcher, ctx) = busy_reporter(&CancellationToken::new(), true);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let (done, ended) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let result = dispatcher
            .dispatch(ToolCall::new("c", "busy", json!({})), &ctx)
            .await
            .unwrap();
        let _ = done.send(result);
    });
    let ended = ended.recv_timeout(Duration::from_secs(10));
    // A dispatch that never yields would keep its worker busy: do not wait for it.
    runtime.shutdown_background();
    let result = ended.expect("the cancelled call ended");
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
}

/// Progress that keeps arriving must not keep the dispatch from yielding: on a one-thread
/// runtime, the task that cancels the call must get to run.
#[test]
fn a_call_whose_progress_keeps_arriving_still_yields_to_other_tasks() {
    let token = CancellationToken::new();
    let (dispatcher, ctx) = busy_reporter(&token, false);
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async move {
            tokio::spawn(async move { token.cancel() });
            let result = dispatcher
                .dispatch(ToolCall::new("c", "busy", json!({})), &ctx)
                .await
                .unwrap();
            let _ = done.send(result);
        });
    });
    let result = ended
        .recv_timeout(Duration::from_secs(10))
        .expect("the dispatch let the cancelling task run");
    assert_eq!(error_of(&result).code, ErrorCode::Cancelled);
}
