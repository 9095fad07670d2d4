//! The ledger contract: what a ledger stores it reads back, field for field and in order.

use std::sync::Arc;

use prism_tools::call::{ContentRecord, OutputRecord};
use prism_tools::storage::{LedgerReader, RecordQuery};
use prism_tools::{
    BlockReason, Dispatcher, ErrorCode, ErrorInfo, OwnershipScope, RecordStatus, RunLedger,
    ToolCall, ToolCallRecord, ToolDefinition, ToolExecutionContext, ToolRegistry, ToolResult,
};
use serde_json::{Value, json};

fn row(session: &str, run: &str, call: &str, status: RecordStatus) -> ToolCallRecord {
    let mut row = ToolCallRecord::new(call.into(), "search".into(), status);
    row.session_id = Some(session.into());
    row.run_id = Some(run.into());
    row
}

fn ids(rows: &[ToolCallRecord]) -> Vec<(String, &'static str)> {
    rows.iter()
        .map(|row| (row.tool_call_id.to_string(), row.status.as_str()))
        .collect()
}

pub async fn reads_rows_back_in_order_by_run_session_and_call<L: RunLedger + LedgerReader>(
    ledger: &L,
) {
    use RecordStatus::{Blocked, Finished, Started};
    let appended = [
        row("s1", "r1", "a", Started),
        row("s1", "r2", "x", Started),
        row("s1", "r1", "b", Blocked),
        row("s1", "r1", "a", Started),
        row("s2", "r3", "a", Started),
        row("s1", "r2", "x", Finished),
        row("s1", "r1", "a", Finished),
    ];
    for row in appended.clone() {
        ledger.append(&row);
    }
    ledger.flush().unwrap();

    let read = |query: RecordQuery| async move { ids(&ledger.read(&query).await.unwrap()) };
    let pairs = |list: &[(&str, &'static str)]| -> Vec<(String, &'static str)> {
        list.iter()
            .map(|(id, status)| (id.to_string(), *status))
            .collect()
    };
    assert_eq!(read(RecordQuery::all()).await, ids(&appended));
    assert_eq!(
        read(RecordQuery::run("r1")).await,
        pairs(&[
            ("a", "started"),
            ("b", "blocked"),
            ("a", "started"),
            ("a", "finished")
        ])
    );
    assert_eq!(
        read(RecordQuery::session("s1")).await.len(),
        6,
        "a session spans its runs"
    );
    assert_eq!(
        read(RecordQuery::call("a")).await,
        pairs(&[
            ("a", "started"),
            ("a", "started"),
            ("a", "started"),
            ("a", "finished")
        ])
    );
    assert_eq!(
        read(RecordQuery::call("a").and_run("r1").and_session("s1")).await,
        pairs(&[("a", "started"), ("a", "started"), ("a", "finished")])
    );
    assert!(
        read(RecordQuery::run("r1").and_session("s2"))
            .await
            .is_empty()
    );
    assert!(read(RecordQuery::run("nope")).await.is_empty());
}

pub async fn every_field_round_trips<L: RunLedger + LedgerReader>(ledger: &L) {
    let mut started = row("s", "r", "call_1", RecordStatus::Started);
    started.started_at = Some(1_700_000_000_123);
    started.arguments = Some(json!({"q": "naïve ✓", "n": u64::MAX, "f": 0.5}));
    started.ownership = Some(Arc::new(OwnershipScope {
        tenant_id: Some("acme".into()),
        user_id: Some("ana".into()),
    }));
    let mut progress = row("s", "r", "call_1", RecordStatus::Started);
    progress.progress = Some(json!(0.5));
    progress.progress_metadata = Some(json!({"stage": "fetch"}));
    progress.progress_at = Some(1_700_000_000_200);
    let mut blocked = ToolCallRecord::new("call_2".into(), "search".into(), RecordStatus::Blocked);
    blocked.finished_at = Some(1_700_000_000_300);
    blocked.reason = Some(BlockReason::ValidationFailed);
    blocked.outcome = Some(
        ToolResult::blocked(
            "call_2".into(),
            "search",
            BlockReason::ValidationFailed,
            "q is required",
        )
        .outcome,
    );
    let mut finished = row("s", "r", "call_1", RecordStatus::Finished);
    finished.finished_at = Some(1_700_000_000_400);
    finished.outcome =
        Some(ToolResult::value("call_1".into(), "search", json!([1, "two", null])).outcome);
    let mut failed = row("s", "r", "call_3", RecordStatus::Error);
    failed.outcome = Some(
        ToolResult::error(
            "call_3".into(),
            "search",
            ErrorInfo::new(
                ErrorCode::Custom("upstream.timeout".into()),
                "took too long",
            ),
        )
        .outcome,
    );
    let mut pictured = row("s", "r", "call_4", RecordStatus::Finished);
    pictured.outcome = Some(ToolResult::value("call_4".into(), "search", Value::Null).outcome);
    pictured.output = Some(Box::new(OutputRecord {
        content: vec![
            ContentRecord::Text {
                text: "a chart ✓".into(),
            },
            ContentRecord::Image {
                media_type: "image/png".into(),
                size: 3000,
            },
        ],
        untrusted: true,
    }));
    let rows = vec![started, progress, blocked, finished, failed, pictured];
    for row in rows.clone() {
        ledger.append(&row);
    }
    assert_eq!(ledger.read(&RecordQuery::all()).await.unwrap(), rows);
}

pub async fn reads_see_rows_appended_before_them<L: RunLedger + LedgerReader>(ledger: &L) {
    for n in 0..500 {
        ledger.append(&row("s", "r", &format!("call_{n}"), RecordStatus::Started));
    }
    let rows = ledger.read(&RecordQuery::run("r")).await.unwrap();
    let expected: Vec<String> = (0..500).map(|n| format!("call_{n}")).collect();
    let read: Vec<String> = rows
        .iter()
        .map(|row| row.tool_call_id.to_string())
        .collect();
    assert_eq!(read, expected);
}

pub async fn dispatcher_rows_land_with_ownership<L: RunLedger + LedgerReader + Clone>(ledger: &L) {
    let echo = ToolDefinition::builder("echo").run_sync(|args: &Value, _| Ok(args.clone()));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo]))
        .ledger(ledger.clone())
        .ownership(OwnershipScope {
            tenant_id: Some("acme".into()),
            user_id: None,
        })
        .build();
    let ctx = ToolExecutionContext::new()
        .with_run_id("run-9")
        .with_session_id("session-9");
    for call in [
        ToolCall::new("c1", "echo", json!({"text": "hi"})),
        ToolCall::new("c2", "missing", json!({})),
    ] {
        dispatcher.dispatch(call, &ctx).await.unwrap();
    }
    ledger.flush().unwrap();

    let rows = ledger.read(&RecordQuery::run("run-9")).await.unwrap();
    assert_eq!(
        ids(&rows),
        [
            ("c1".to_string(), "started"),
            ("c1".to_string(), "finished"),
            ("c2".to_string(), "blocked")
        ]
    );
    assert!(rows.iter().all(|row| {
        row.session_id.as_deref() == Some("session-9")
            && row
                .ownership
                .as_ref()
                .and_then(|scope| scope.tenant_id.as_deref())
                == Some("acme")
    }));
    assert_eq!(rows[0].arguments.as_ref(), Some(&json!({"text": "hi"})));
    assert_eq!(rows[2].reason, Some(BlockReason::UnknownTool));
}
