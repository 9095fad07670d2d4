//! Tools that never read their context: `#[tool]` says so from the function's parameters, a
//! hand-written tool by answering `reads_context`, and the dispatcher then hands them an empty
//! context instead of making the call's own. Everything the host sees (results, events, rows)
//! is the same as for any other tool.

use std::sync::{Arc, Mutex};

use prism::dispatch::{CollectingSink, InMemoryLedger, RecordStatus, ToolEventKind};
use prism::{
    Dispatcher, State, Tool, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry, tool,
};
use serde_json::{Value, json};

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Says which call it serves.
#[tool]
fn whoami(#[ctx] ctx: ToolExecutionContext) -> Option<String> {
    ctx.tool_call_id().map(ToString::to_string)
}

/// Counts with a shared counter.
#[tool]
fn count(counter: State<Mutex<u64>>) -> u64 {
    let mut counter = counter.lock().unwrap_or_else(|poison| poison.into_inner());
    *counter += 1;
    *counter
}

/// What a hand-written tool saw of its context.
#[derive(Default)]
struct Seen {
    call_id: Option<String>,
    run_id: Option<String>,
    metadata_entries: usize,
    cancelled_before: bool,
    cancelled_after_cancel: bool,
    progress_delivered: bool,
}

/// A hand-written tool that declares it does not read its context, and reads it anyway, so the
/// test can see exactly what such a tool is given.
#[derive(Clone)]
struct Peek(Arc<Mutex<Seen>>);

impl Tool for Peek {
    const NAME: &'static str = "peek";
    type Args = Value;
    type Output = &'static str;
    type Error = std::convert::Infallible;

    fn reads_context(&self) -> bool {
        false
    }

    async fn call(
        self,
        _args: Value,
        ctx: ToolExecutionContext,
    ) -> Result<&'static str, Self::Error> {
        let mut seen = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        seen.call_id = ctx.tool_call_id().map(ToString::to_string);
        seen.run_id = ctx.run_id().map(str::to_owned);
        seen.metadata_entries = ctx.metadata().len();
        seen.cancelled_before = ctx.is_cancelled();
        ctx.cancellation().cancel();
        seen.cancelled_after_cancel = ctx.is_cancelled() || ctx.cancellation().is_cancelled();
        seen.progress_delivered = ctx.progress(json!(1));
        Ok("peeked")
    }
}

fn run_context() -> ToolExecutionContext {
    ToolExecutionContext::new()
        .with_session_id("s1")
        .with_run_id("r1")
        .with_metadata("user", json!("u-7"))
}

#[test]
fn the_macro_says_whether_a_tool_reads_its_context() {
    assert!(!add::definition().reads_context());
    assert!(whoami::definition().reads_context());
    // State is the tool's own, not the call's: a tool taking only state reads no context.
    assert!(!count::definition(Arc::new(Mutex::new(0))).reads_context());
    // Closures are handed the context, so they are assumed to read it.
    let closure = ToolDefinition::builder("echo").run_sync(|args: &Value, _| Ok(args.clone()));
    assert!(closure.reads_context());
}

#[tokio::test]
async fn tools_without_a_context_report_like_any_other() {
    let events = CollectingSink::new();
    let ledger = InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([
        add::definition(),
        whoami::definition(),
    ]))
    .events(events.clone())
    .ledger(ledger.clone())
    .build();
    let ctx = run_context();

    let sum = dispatcher
        .dispatch(
            ToolCall::new("call_1", "add", json!({"a": 2, "b": 3})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(sum.as_value(), Some(&json!(5)));
    let me = dispatcher
        .dispatch(ToolCall::new("call_2", "whoami", json!({})), &ctx)
        .await
        .unwrap();
    assert_eq!(me.as_value(), Some(&json!("call_2")));

    let kinds: Vec<_> = events
        .events()
        .iter()
        .map(|event| {
            (
                event.tool_call_id.to_string(),
                event.run_id.as_deref().map(str::to_owned),
                event.kind.type_name(),
            )
        })
        .collect();
    let r1 = || Some("r1".to_owned());
    assert_eq!(
        kinds,
        [
            ("call_1".into(), r1(), "tool_execution_started"),
            ("call_1".into(), r1(), "tool_execution_finished"),
            ("call_2".into(), r1(), "tool_execution_started"),
            ("call_2".into(), r1(), "tool_execution_finished"),
        ]
    );
    let rows = ledger.records_for_call("call_1");
    let statuses: Vec<_> = rows.iter().map(|row| row.status).collect();
    assert_eq!(statuses, [RecordStatus::Started, RecordStatus::Finished]);
    assert_eq!(rows[0].arguments, Some(json!({"a": 2, "b": 3})));
    assert_eq!(rows[1].session_id.as_deref(), Some("s1"));
    assert!(matches!(
        events.events()[1].kind,
        ToolEventKind::ToolExecutionFinished { .. }
    ));
}

#[tokio::test]
async fn a_tool_that_declares_it_reads_no_context_gets_an_empty_one() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let events = CollectingSink::new();
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([ToolDefinition::from_tool(
        Peek(Arc::clone(&seen)),
    )]))
    .events(events.clone())
    .build();
    let ctx = run_context();

    let result = dispatcher
        .dispatch(ToolCall::new("call_9", "peek", json!({})), &ctx)
        .await
        .unwrap();
    assert_eq!(result.as_value(), Some(&json!("peeked")));

    let seen = seen.lock().unwrap();
    assert_eq!(seen.call_id, None);
    assert_eq!(seen.run_id, None);
    assert_eq!(seen.metadata_entries, 0);
    assert!(!seen.cancelled_before);
    // The empty context's token never fires, so firing it stops nothing, here or elsewhere.
    assert!(!seen.cancelled_after_cancel);
    assert!(!ctx.is_cancelled());
    // Progress goes nowhere, and the tool is told so.
    assert!(!seen.progress_delivered);
    assert!(
        events
            .events()
            .iter()
            .all(|event| !matches!(event.kind, ToolEventKind::ToolExecutionProgress { .. }))
    );
}
