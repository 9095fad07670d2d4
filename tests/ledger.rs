//! Ledger rows: one per lifecycle transition, with the spec's fields, in order, owned and redacted.

mod common;

use common::*;
use prism::call::{BlockReason, ErrorCode, ErrorInfo};
use prism::dispatch::{
    InMemoryLedger, Limits, ManualClock, OwnershipScope, RecordStatus, RunLedger, SecretRedactor,
    ToolCallRecord,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolRegistry, ToolResult};
use serde_json::{Value, json};

/// A clock the tool body moves, so that each row's timestamp is predictable.
fn ticking_tool(clock: &ManualClock) -> ToolDefinition {
    let clock = clock.clone();
    ToolDefinition::builder("work").run_sync(move |args, ctx| {
        clock.advance(10);
        ctx.progress_with_metadata(json!({"done": 1, "of": 2}), Some(json!({"file": "a.txt"})));
        clock.advance(10);
        match args.get("fail") {
            Some(_) => Err("gave up".into()),
            None => Ok(json!({"ok": true})),
        }
    })
}

fn row_json(row: &ToolCallRecord) -> Value {
    serde_json::to_value(row).unwrap()
}

fn keys(row: &ToolCallRecord) -> Vec<String> {
    let mut keys: Vec<_> = row_json(row).as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

#[tokio::test]
async fn a_successful_call_writes_started_progress_and_finished_rows() {
    let clock = ManualClock::new(1_000);
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([ticking_tool(&clock)]))
        .ledger(ledger.clone())
        .clock(clock.clone())
        .build();
    let ctx = ctx().with_session_id("s").with_run_id("r");
    run_in(
        &dispatcher,
        ToolCall::new("c1", "work", json!({"path": "a.txt"})),
        &ctx,
    )
    .await;

    let rows = ledger.records_for_call("c1");
    let statuses: Vec<_> = rows.iter().map(|row| row.status).collect();
    assert_eq!(
        statuses,
        [
            RecordStatus::Started,
            RecordStatus::Started,
            RecordStatus::Finished
        ]
    );

    assert_eq!(
        keys(&rows[0]),
        [
            "arguments",
            "runId",
            "sessionId",
            "startedAt",
            "status",
            "toolCallId",
            "toolName"
        ]
    );
    assert_eq!(rows[0].started_at, Some(1_000));
    assert_eq!(rows[0].arguments.as_ref(), Some(&json!({"path": "a.txt"})));

    assert_eq!(
        keys(&rows[1]),
        [
            "progress",
            "progressAt",
            "progressMetadata",
            "runId",
            "sessionId",
            "status",
            "toolCallId",
            "toolName"
        ]
    );
    assert_eq!(rows[1].progress, Some(json!({"done": 1, "of": 2})));
    assert_eq!(rows[1].progress_metadata, Some(json!({"file": "a.txt"})));
    assert!(
        (1_000..=1_020).contains(&rows[1].progress_at.unwrap()),
        "between start and end"
    );

    assert_eq!(
        keys(&rows[2]),
        [
            "finishedAt",
            "result",
            "runId",
            "sessionId",
            "status",
            "toolCallId",
            "toolName"
        ]
    );
    assert_eq!(rows[2].finished_at, Some(1_020));
    assert_eq!(
        row_json(&rows[2])["result"],
        json!({"toolCallId": "c1", "name": "work", "value": {"ok": true}})
    );
    assert_eq!(row_json(&rows[2])["status"], "finished");
}

#[tokio::test]
async fn a_failed_call_ends_with_an_error_row_carrying_the_error() {
    let clock = ManualClock::new(0);
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([ticking_tool(&clock)]))
        .ledger(ledger.clone())
        .clock(clock)
        .build();
    run(
        &dispatcher,
        ToolCall::new("c", "work", json!({"fail": true})),
    )
    .await;
    let last = ledger.records().pop().unwrap();
    assert_eq!(
        keys(&last),
        ["finishedAt", "result", "status", "toolCallId", "toolName"]
    );
    assert_eq!(row_json(&last)["status"], "error");
    assert_eq!(
        row_json(&last)["result"]["error"],
        json!({"code": "tool_error", "message": "gave up"})
    );
}

#[tokio::test]
async fn a_blocked_call_writes_one_blocked_row_with_its_reason() {
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::new())
        .ledger(ledger.clone())
        .build();
    run(&dispatcher, ToolCall::new("c", "ghost", json!({}))).await;
    let rows = ledger.records();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        keys(&rows[0]),
        [
            "finishedAt",
            "reason",
            "result",
            "status",
            "toolCallId",
            "toolName"
        ]
    );
    assert_eq!(row_json(&rows[0])["reason"], "unknown_tool");
    assert_eq!(
        row_json(&rows[0])["result"]["error"]["message"],
        "Unknown tool: ghost"
    );
}

#[tokio::test]
async fn the_ownership_scope_is_copied_into_every_row() {
    let ledger = InMemoryLedger::new();
    let owner = OwnershipScope {
        tenant_id: Some("acme".into()),
        user_id: Some("u-7".into()),
    };
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo("e")]))
        .ledger(ledger.clone())
        .ownership(owner.clone())
        .build();
    run(&dispatcher, ToolCall::new("a", "e", json!({}))).await;
    run(&dispatcher, ToolCall::new("b", "ghost", json!({}))).await;
    let rows = ledger.records();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert_eq!(row.ownership.as_deref(), Some(&owner));
        assert_eq!(
            row_json(row)["ownership"],
            json!({"tenantId": "acme", "userId": "u-7"})
        );
    }
}

#[tokio::test]
async fn rows_of_interleaved_calls_stay_in_order_per_call() {
    let ledger = InMemoryLedger::new();
    let tool = ToolDefinition::builder("steps").run(|_, ctx| async move {
        for step in 0..3 {
            ctx.progress(json!(step));
            tokio::task::yield_now().await;
        }
        Ok(Value::Null)
    });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .ledger(ledger.clone())
        .build();
    let context = ctx();
    let (a, b) = tokio::join!(
        dispatcher.dispatch(ToolCall::new("a", "steps", json!({})), &context),
        dispatcher.dispatch(ToolCall::new("b", "steps", json!({})), &context),
    );
    assert!(a.unwrap().is_success() && b.unwrap().is_success());
    for id in ["a", "b"] {
        let rows = ledger.records_for_call(id);
        let statuses: Vec<_> = rows.iter().map(|row| row.status.as_str()).collect();
        assert_eq!(
            statuses,
            ["started", "started", "started", "started", "finished"],
            "{id}"
        );
        let progress: Vec<_> = rows.iter().filter_map(|row| row.progress.clone()).collect();
        assert_eq!(progress, [json!(0), json!(1), json!(2)], "{id}");
    }
}

#[test]
fn rows_round_trip_and_use_the_spec_status_names() {
    for (status, wire) in [
        (RecordStatus::Started, "started"),
        (RecordStatus::Finished, "finished"),
        (RecordStatus::Error, "error"),
        (RecordStatus::Blocked, "blocked"),
    ] {
        assert_eq!(status.as_str(), wire);
        let mut row = ToolCallRecord::new("c".into(), "t".into(), status);
        row.outcome =
            Some(ToolResult::blocked("c".into(), "t", BlockReason::ToolDenied, "no").outcome);
        row.reason = Some(BlockReason::ToolDenied);
        let text = serde_json::to_value(&row).unwrap();
        assert_eq!(text["status"], wire);
        assert_eq!(serde_json::from_value::<ToolCallRecord>(text).unwrap(), row);
    }
}

#[test]
fn redacted_scrubs_arguments_progress_and_result() {
    let redactor = SecretRedactor::new(["tok-9"]);
    let mut row = ToolCallRecord::new("c".into(), "t".into(), RecordStatus::Started);
    row.arguments = Some(json!({"auth": "Bearer tok-9"}));
    row.progress = Some(json!("using tok-9"));
    row.progress_metadata = Some(json!({"tok-9": 1}));
    row.outcome = Some(
        ToolResult::error(
            "c".into(),
            "t",
            ErrorInfo::new(ErrorCode::ToolError, "bad tok-9"),
        )
        .outcome,
    );
    let clean = row.redacted(&redactor);
    let text = serde_json::to_string(&clean).unwrap();
    assert!(!text.contains("tok-9"), "{text}");
    assert_eq!(text.matches("[REDACTED]").count(), 4, "{text}");
}

#[test]
fn ledgers_flush_successfully_by_default() {
    assert_eq!(InMemoryLedger::new().flush(), Ok(()));
}

#[tokio::test]
async fn progress_the_queue_drops_is_counted_on_the_terminal_event_and_row() {
    let tool = ToolDefinition::builder("chatty").run_sync(|_, ctx| {
        let too_deep = (0..3).fold(json!(1), |inner, _| json!([inner]));
        let refused = !ctx.progress(too_deep);
        let accepted = (0..5).filter(|n| ctx.progress(json!(n))).count();
        Ok(json!({"refused": refused, "accepted": accepted}))
    });
    for (capacity, dropped) in [(3, 3), (64, 1)] {
        let watch = Watch::new();
        let dispatcher = watch
            .attach(Dispatcher::builder(ToolRegistry::from_iter([tool.clone()])))
            .limits(Limits {
                progress_capacity: capacity,
                max_output_depth: 2,
                ..Limits::default()
            })
            .build();
        let result = run(&dispatcher, ToolCall::new("c", "chatty", json!({}))).await;
        let accepted = capacity.min(5);
        assert_eq!(
            result.as_value(),
            Some(&json!({"refused": true, "accepted": accepted}))
        );
        let rows = watch.ledger.records();
        assert_eq!(rows.len(), 2 + accepted, "{:?}", watch.statuses());
        let last = rows.last().unwrap();
        assert_eq!(last.progress_dropped, dropped);
        assert_eq!(row_json(last)["progressDropped"], json!(dropped));
        assert!(
            rows[..rows.len() - 1]
                .iter()
                .all(|row| row.progress_dropped == 0)
        );
        let event = watch.events.events().pop().unwrap();
        assert_eq!(event.progress_dropped, dropped);
        let event = serde_json::to_value(&event).unwrap();
        assert_eq!(event["progressDropped"], json!(dropped));
        // The count reads back from the row's JSON.
        let read: ToolCallRecord = serde_json::from_value(row_json(last)).unwrap();
        assert_eq!(read.progress_dropped, dropped);
    }
}

#[tokio::test]
async fn nothing_dropped_leaves_progress_dropped_out_of_the_wire() {
    let watch = Watch::new();
    let clock = ManualClock::new(0);
    let dispatcher = watch
        .attach(Dispatcher::builder(ToolRegistry::from_iter([
            ticking_tool(&clock),
        ])))
        .build();
    run(&dispatcher, ToolCall::new("c", "work", json!({}))).await;
    assert!(!watch.json_text().contains("progressDropped"));
}
