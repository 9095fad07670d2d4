//! Lifecycle events: wire names, when each is emitted, progress, and who receives them.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use prism::dispatch::{CollectingSink, ManualClock, ToolEvent, ToolEventKind, event_fn};
use prism::guard::{call_middleware, result_middleware, validator_fn};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};

fn event_json(event: &ToolEvent) -> Value {
    serde_json::to_value(event).unwrap()
}

#[tokio::test]
async fn events_serialise_with_the_spec_wire_names() {
    let watch = Watch::new();
    let registry = ToolRegistry::from_iter([
        ToolDefinition::builder("slow").run_sync(|args, ctx| {
            ctx.progress_with_metadata(json!({"done": 1}), Some(json!({"stage": "fetch"})));
            Ok(args.clone())
        }),
        ToolDefinition::builder("fails").run_sync(|_, _| Err("no".into())),
    ]);
    let dispatcher = watch
        .attach(Dispatcher::builder(registry))
        .clock(ManualClock::new(42))
        .build();
    let ctx = ctx().with_session_id("s1").with_run_id("r1");
    run_in(
        &dispatcher,
        ToolCall::new("c1", "slow", json!({"q": 1})),
        &ctx,
    )
    .await;
    run_in(&dispatcher, ToolCall::new("c2", "fails", json!({})), &ctx).await;
    run_in(&dispatcher, ToolCall::new("c3", "ghost", json!({})), &ctx).await;

    let events: Vec<Value> = watch.events.events().iter().map(event_json).collect();
    let base = |id: &str, tool: &str, kind: &str| json!({"sessionId": "s1", "runId": "r1", "toolCallId": id, "toolName": tool, "at": 42, "type": kind});
    let with = |mut event: Value, extra: Value| {
        event
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        event
    };
    assert_eq!(
        events,
        [
            with(
                base("c1", "slow", "tool_execution_started"),
                json!({"arguments": {"q": 1}})
            ),
            with(
                base("c1", "slow", "tool_execution_progress"),
                json!({"progress": {"done": 1}, "metadata": {"stage": "fetch"}})
            ),
            with(
                base("c1", "slow", "tool_execution_finished"),
                json!({"result": {"toolCallId": "c1", "name": "slow", "value": {"q": 1}}})
            ),
            with(
                base("c2", "fails", "tool_execution_started"),
                json!({"arguments": {}})
            ),
            with(
                base("c2", "fails", "tool_execution_error"),
                json!({"error": {"code": "tool_error", "message": "no"}})
            ),
            with(
                base("c3", "ghost", "tool_execution_blocked"),
                json!({"reason": "unknown_tool",
                       "error": {"code": "unknown_tool", "message": "Unknown tool: ghost", "reason": "unknown_tool"}})
            ),
        ]
    );
    for event in watch.events.events() {
        assert_eq!(event_json(&event)["type"], event.kind.type_name());
    }
}

#[tokio::test]
async fn ids_are_omitted_when_the_context_has_none() {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("e")])))
        .build();
    run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    let event = event_json(&watch.events.events()[0]);
    assert!(
        event.get("sessionId").is_none() && event.get("runId").is_none(),
        "{event}"
    );
}

#[tokio::test]
async fn started_is_emitted_before_the_tool_runs() {
    let sink = CollectingSink::new();
    let seen_by_body = Arc::new(Mutex::new(Vec::new()));
    let tool = {
        let sink = sink.clone();
        let seen_by_body = Arc::clone(&seen_by_body);
        ToolDefinition::builder("peek").run_sync(move |_, _| {
            let types: Vec<_> = sink
                .events()
                .iter()
                .map(|event| event.kind.type_name())
                .collect();
            *seen_by_body.lock().unwrap() = types;
            Ok(Value::Null)
        })
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .events(sink.clone())
        .build();
    run(&dispatcher, ToolCall::new("c", "peek", json!({}))).await;
    assert_eq!(*seen_by_body.lock().unwrap(), ["tool_execution_started"]);
}

#[tokio::test]
async fn finished_carries_the_result_after_tool_result_middleware() {
    let watch = Watch::new();
    let dispatcher =
        Dispatcher::builder(ToolRegistry::from_iter([echo("e")])).middleware(result_middleware(
            |result| *result.value_mut() = json!({"wrapped": result.value().clone()}),
        ));
    let dispatcher = watch.attach(dispatcher).build();
    let result = run(&dispatcher, ToolCall::new("c", "e", json!({"x": 1}))).await;
    assert_eq!(result.as_value(), Some(&json!({"wrapped": {"x": 1}})));
    let finished = watch.events.events().pop().unwrap();
    let value = result.as_value().cloned().unwrap();
    assert_eq!(
        finished.kind,
        ToolEventKind::ToolExecutionFinished { value }
    );
}

#[tokio::test]
async fn blocked_calls_emit_only_the_blocked_event() {
    let watch = Watch::new();
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([echo("e")])))
        .validate(validator_fn(|_, _| Err("no".into())))
        .build();
    run(&dispatcher, ToolCall::new("c", "e", json!({}))).await;
    assert_eq!(watch.event_types(), ["tool_execution_blocked"]);
}

#[tokio::test]
async fn progress_events_arrive_in_order_between_started_and_the_end() {
    let watch = Watch::new();
    let tool = ToolDefinition::builder("steps").run(|_, ctx| async move {
        for step in 1..=3 {
            assert!(
                ctx.progress(json!({"step": step})),
                "a listener is attached"
            );
            tokio::task::yield_now().await;
        }
        Ok(json!("done"))
    });
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
        .build();
    run(&dispatcher, ToolCall::new("c", "steps", json!({}))).await;

    assert_eq!(
        watch.event_types(),
        [
            "tool_execution_started",
            "tool_execution_progress",
            "tool_execution_progress",
            "tool_execution_progress",
            "tool_execution_finished"
        ]
    );
    let steps: Vec<_> = watch
        .events
        .events()
        .iter()
        .filter_map(|event| match &event.kind {
            ToolEventKind::ToolExecutionProgress { progress, .. } => Some(progress["step"].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(steps, [json!(1), json!(2), json!(3)]);
}

#[tokio::test]
async fn progress_sent_just_before_returning_still_precedes_the_end() {
    let watch = Watch::new();
    let tool = ToolDefinition::builder("burst").run_sync(|_, ctx| {
        ctx.progress(json!("last words"));
        Err("failed right after".into())
    });
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
        .build();
    run(&dispatcher, ToolCall::new("c", "burst", json!({}))).await;
    assert_eq!(
        watch.event_types(),
        [
            "tool_execution_started",
            "tool_execution_progress",
            "tool_execution_error"
        ]
    );
}

#[tokio::test]
async fn progress_after_the_call_returned_is_dropped() {
    let watch = Watch::new();
    let kept: Arc<Mutex<Option<ToolExecutionContext>>> = Arc::default();
    let tool = {
        let kept = Arc::clone(&kept);
        ToolDefinition::builder("leaky").run_sync(move |_, ctx| {
            *kept.lock().unwrap() = Some(ctx.clone());
            Ok(Value::Null)
        })
    };
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
        .build();
    run(&dispatcher, ToolCall::new("c", "leaky", json!({}))).await;
    let before = (watch.events.events().len(), watch.ledger.records().len());

    let late = kept.lock().unwrap().take().unwrap();
    assert!(
        !late.progress(json!("too late")),
        "a finished call refuses progress"
    );
    assert_eq!(
        (watch.events.events().len(), watch.ledger.records().len()),
        before
    );
}

#[tokio::test]
async fn progress_never_blocks_the_tool_and_every_accepted_update_is_reported() {
    let watch = Watch::new();
    let accepted = Arc::new(Mutex::new(0usize));
    let tool = {
        let accepted = Arc::clone(&accepted);
        ToolDefinition::builder("chatty").run_sync(move |_, ctx| {
            let sent = (0..500).filter(|n| ctx.progress(json!(n))).count();
            *accepted.lock().unwrap() = sent;
            Ok(Value::Null)
        })
    };
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([tool])))
        .build();
    run(&dispatcher, ToolCall::new("c", "chatty", json!({}))).await;
    let accepted = *accepted.lock().unwrap();
    let reported = watch
        .event_types()
        .iter()
        .filter(|kind| **kind == "tool_execution_progress")
        .count();
    assert!(accepted >= 1);
    assert_eq!(reported, accepted);
}

#[tokio::test]
async fn progress_without_listeners_reports_false() {
    let answer = Arc::new(Mutex::new(None));
    let tool = {
        let answer = Arc::clone(&answer);
        ToolDefinition::builder("quiet").run_sync(move |_, ctx| {
            *answer.lock().unwrap() = Some(ctx.progress(json!(1)));
            Ok(Value::Null)
        })
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    run(&dispatcher, ToolCall::new("c", "quiet", json!({}))).await;
    assert_eq!(*answer.lock().unwrap(), Some(false));
}

#[tokio::test]
async fn every_sink_receives_every_event_and_names_follow_middleware() {
    let first = CollectingSink::new();
    let second = Arc::new(Mutex::new(Vec::new()));
    let recorder = {
        let second = Arc::clone(&second);
        event_fn(move |event| {
            second
                .lock()
                .unwrap()
                .push((event.tool_name.to_string(), event.kind.type_name()))
        })
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("real")]))
        .middleware(call_middleware(|call| call.set_name("real")))
        .events(first.clone())
        .events(recorder)
        .build();
    run(&dispatcher, ToolCall::new("c", "alias", json!({}))).await;
    assert_eq!(first.events().len(), 2);
    assert_eq!(
        *second.lock().unwrap(),
        [
            ("real".to_owned(), "tool_execution_started"),
            ("real".to_owned(), "tool_execution_finished")
        ]
    );
    assert_eq!(first.take().len(), 2);
    assert!(first.events().is_empty());
}
