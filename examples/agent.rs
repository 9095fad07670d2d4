//! A scripted multi-turn run, printing what the run layer decides at each step:
//!
//! 1. the run's grant (a snapshot of the registry, narrowed by `tool_names`);
//! 2. per-turn narrowing, including a name outside the grant that gets clamped;
//! 3. a parallel batch, then a batch made sequential by an exclusive tool;
//! 4. a call to a tool hidden this turn, refused with `tool_denied`;
//! 5. the session stored as JSON and restored after the host registered a new tool, which the
//!    restored session still cannot use.
//!
//! Run it with `cargo run --example agent`.

use prism::call::ToolOutcome;
use prism::dispatch::{ToolEventKind, event_fn};
use prism::run::{
    AgentConfig, RunEventKind, ScriptedProvider, SessionState, narrowing_fn, run_event_fn,
};
use prism::{
    Agent, Dispatcher, Message, ProviderResponse, RunOptions, ToolCall, ToolDefinition,
    ToolRegistry,
};
use serde_json::{Value, json};

fn tools() -> ToolRegistry {
    let add = ToolDefinition::builder("add")
        .description("Adds two integers.")
        .parameters(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }))
        .run_sync(|args: &Value, _| {
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            Ok(json!(sum))
        });
    let lookup = ToolDefinition::builder("lookup")
        .description("Looks a city's population up.")
        .parameters(json!({"type": "object", "properties": {"city": {"type": "string"}}}))
        .run(|args: Value, _| async move {
            let population = match args["city"].as_str() {
                Some("Paris") => 2_100_000,
                Some("Lyon") => 520_000,
                _ => return Err("unknown city".into()),
            };
            Ok(json!(population))
        });
    let audit = ToolDefinition::builder("audit")
        .description("Appends a line to the audit log; never runs beside other calls.")
        .parameters(json!({"type": "object", "properties": {"line": {"type": "string"}}}))
        .exclusive(true)
        .run_sync(|args: &Value, _| Ok(json!({"logged": args["line"]})));
    let wipe = ToolDefinition::builder("wipe")
        .description("Deletes everything.")
        .parameters(json!({"type": "object"}))
        .run_sync(|_, _| Ok(json!("wiped")));
    ToolRegistry::from_iter([add, lookup, audit, wipe])
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn print_rows(rows: &[Message]) {
    for row in rows {
        if let Some(result) = row.as_tool_result() {
            let shown = match &result.outcome {
                ToolOutcome::Value(value) => format!("= {value}"),
                ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
                    format!("! {} ({})", error.code, error.message)
                }
            };
            println!(
                "    row {:<3} {:<7} {shown}",
                result.tool_call_id, result.name
            );
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = tools();
    let dispatcher = Dispatcher::builder(registry.clone())
        .events(event_fn(|event| {
            if let ToolEventKind::ToolExecutionStarted { .. } = event.kind {
                println!("    start {} {}", event.tool_call_id, event.tool_name);
            }
        }))
        .build();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            call("c1", "add", json!({"a": 2, "b": 3})),
            call("c2", "lookup", json!({"city": "Paris"})),
            call("c3", "lookup", json!({"city": "Lyon"})),
        ]),
        ProviderResponse::calls([
            call("c4", "add", json!({"a": 5, "b": 8})),
            call("c5", "audit", json!({"line": "looked up two cities"})),
        ]),
        ProviderResponse::calls([call("c6", "audit", json!({"line": "again"}))])
            .with_text("Let me log that once more."),
        ProviderResponse::text("Paris has about 2.1 million people, Lyon about 520,000."),
    ]);
    let printer = run_event_fn(|event| match &event.kind {
        RunEventKind::RunStarted { grant } => println!("[{}] grant: {grant:?}", event.run_id),
        RunEventKind::ToolNarrowingClamped { turn, dropped } => {
            println!("turn {turn}: narrowing asked for {dropped:?}, outside the grant: dropped")
        }
        RunEventKind::TurnStarted { turn, metadata } => println!(
            "turn {turn}: {} tools sent, ids_hash {}…",
            metadata.tools.count,
            &metadata.tools.ids_hash[..12]
        ),
        RunEventKind::ToolBatchStarted {
            calls, concurrency, ..
        } => println!("  batch: {calls} call(s), {concurrency} at a time"),
        RunEventKind::RunFinished { turns, tool_rounds } => {
            println!("finished after {turns} turns and {tool_rounds} tool rounds")
        }
        other => println!("  {}", other.type_name()),
    });
    // Turn 3 narrows to the read-only tools, hiding `audit`.
    let narrowing = narrowing_fn(|request| {
        let mut names: Vec<String> = request.tool_ids.iter().map(|id| id.to_string()).collect();
        match request.turn {
            1 => names.push("wipe".into()),
            3 => names.retain(|name| name != "audit"),
            _ => {}
        }
        Ok::<_, String>(names)
    });
    let agent = Agent::new(dispatcher.clone(), provider)
        .with_config(
            AgentConfig::new()
                .tool_concurrency(4)
                .tool_narrowing(narrowing),
        )
        .with_events(printer);

    println!("== run 1: grant add, lookup, audit (wipe is registered but not granted)");
    let mut session = agent.session("demo");
    let outcome = session
        .run(
            "How many people live in Paris and Lyon?",
            RunOptions::new().tool_names(["add", "lookup", "audit"]),
        )
        .await?;
    print_rows(session.transcript());
    println!("answer: {}", outcome.summary().text);

    println!("\n== stored, then restored after the host registered `launch`");
    let stored = serde_json::to_string(&session.state())?;
    println!("stored state: {} bytes", stored.len());
    registry.register(
        ToolDefinition::builder("launch")
            .parameters(json!({"type": "object"}))
            .run_sync(|_, _| Ok(json!("launched"))),
    )?;
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([call("c7", "launch", json!({}))]),
        ProviderResponse::text("I cannot launch anything here."),
    ]);
    let restored_agent =
        Agent::new(dispatcher, provider.clone()).with_events(run_event_fn(|event| {
            if let RunEventKind::RunStarted { grant } = &event.kind {
                println!("[{}] grant after restore: {grant:?}", event.run_id);
            }
        }));
    let state: SessionState = serde_json::from_str(&stored)?;
    let mut restored = restored_agent.restore(state);
    let rows_before = restored.transcript().len();
    let outcome = restored.run("Launch it.", RunOptions::new()).await?;
    print_rows(&restored.transcript()[rows_before..]);
    println!(
        "tools sent after restore: {:?}",
        provider.requests()[0].tool_names
    );
    println!("answer: {}", outcome.summary().text);
    Ok(())
}
