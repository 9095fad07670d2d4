//! Search-mode disclosure on a scripted run, printing what each provider turn was sent:
//!
//! 1. turn 1 describes only the tools that match the user's request, plus `search_tools`;
//! 2. the model calls `search_tools` for something the request did not mention;
//! 3. turn 2 describes the tool it found (activated for the session), and the model calls it;
//! 4. the session's stored state keeps the activated names, and a restored session describes
//!    them on its next run.
//!
//! Run it with `cargo run --example search`.

use prism::call::ToolOutcome;
use prism::run::{
    AgentConfig, DisclosureMode, RunEventKind, ScriptedProvider, SessionState, run_event_fn,
};
use prism::{
    Agent, Dispatcher, Message, ProviderResponse, RunOptions, ToolCall, ToolDefinition,
    ToolRegistry,
};
use serde_json::{Value, json};

/// A catalogue too large to describe in full on every turn (here, eight tools).
fn catalogue() -> ToolRegistry {
    let tools = [
        ("send_email", "Sends an email message.", json!("sent")),
        ("read_inbox", "Lists the newest email messages.", json!([])),
        (
            "get_weather",
            "Current weather and forecast for a city.",
            json!({"sky": "clear", "celsius": 21}),
        ),
        (
            "convert_currency",
            "Converts an amount between currencies.",
            json!({"yen": 16_250}),
        ),
        (
            "stock_quote",
            "Latest share price for a ticker.",
            json!(101.5),
        ),
        ("book_flight", "Books a seat on a plane.", json!("booked")),
        (
            "translate_text",
            "Translates text into another language.",
            json!("東京は晴れです"),
        ),
        (
            "create_event",
            "Adds an event to the calendar.",
            json!("added"),
        ),
    ];
    tools
        .into_iter()
        .map(|(name, description, answer)| {
            ToolDefinition::builder(name)
                .description(description)
                .parameters(json!({"type": "object"}))
                .run_sync(move |_, _| Ok(answer.clone()))
        })
        .collect()
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn print_rows(rows: &[Message]) {
    for result in rows.iter().filter_map(Message::as_tool_result) {
        match &result.outcome {
            ToolOutcome::Value(Value::String(text)) => {
                println!("    {} {}:", result.tool_call_id, result.name);
                for line in text.lines() {
                    println!("      {line}");
                }
            }
            ToolOutcome::Value(value) => {
                println!("    {} {} = {value}", result.tool_call_id, result.name)
            }
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
                println!(
                    "    {} {} ! {}",
                    result.tool_call_id, result.name, error.code
                )
            }
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dispatcher = Dispatcher::builder(catalogue()).build();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([
            call("c1", "get_weather", json!({"city": "Tokyo"})),
            call(
                "c2",
                "search_tools",
                json!({"query": "translate into Japanese"}),
            ),
        ]),
        ProviderResponse::calls([call(
            "c3",
            "translate_text",
            json!({"text": "Tokyo is clear"}),
        )]),
        ProviderResponse::text("東京は晴れです (21 °C)."),
    ]);
    let printer = run_event_fn(|event| match &event.kind {
        RunEventKind::TurnStarted { turn, metadata } => println!(
            "turn {turn}: {} tools described, ids_hash {}…",
            metadata.tools.count,
            &metadata.tools.ids_hash[..12]
        ),
        RunEventKind::ToolsFullyDisclosed { reason, .. } => {
            println!("  every tool described: {reason}")
        }
        _ => {}
    });
    let agent = Agent::new(dispatcher, provider.clone())
        .with_config(AgentConfig::new().tools_disclosure(DisclosureMode::Search { top_k: 2 }))
        .with_events(printer);

    println!("== run 1: the request mentions the weather, not translation");
    let mut session = agent.session("demo");
    let outcome = session
        .run(
            "What's the weather in Tokyo? Answer in Japanese.",
            RunOptions::new(),
        )
        .await?;
    for (turn, request) in provider.requests().iter().enumerate() {
        println!("  turn {} was sent: {:?}", turn + 1, request.tool_names);
    }
    print_rows(session.transcript());
    println!("answer: {}", outcome.summary().text);

    println!("\n== stored, restored, and run again");
    let stored = serde_json::to_string(&session.state())?;
    let state: SessionState = serde_json::from_str(&stored)?;
    println!(
        "activated in the stored state: {:?}",
        state.activated_tool_names.names().collect::<Vec<_>>()
    );
    let mut restored = agent.restore(state);
    provider.push(ProviderResponse::text("Anything else?"));
    restored.run("Thanks!", RunOptions::new()).await?;
    let sent = provider.requests();
    println!(
        "  the new run was sent: {:?}",
        sent.last().map(|request| &request.tool_names)
    );

    restored.clear_activated_tools();
    provider.push(ProviderResponse::text("Bye."));
    restored.run("Thanks!", RunOptions::new()).await?;
    println!(
        "  after clear_activated_tools: {:?}",
        provider
            .requests()
            .last()
            .map(|request| &request.tool_names)
    );
    Ok(())
}
