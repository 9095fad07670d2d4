//! Quickstart: register a few real tools, put every guard in front of them, and replay one
//! realistic model turn through the dispatcher.
//!
//! The turn contains what models really send: good calls, a hallucinated tool, a call to a tool
//! the host denied, arguments that are not valid JSON or of the wrong type, arguments a validator
//! rejects, a tool that fails, a tool that panics, and an error that leaks a secret. Every call
//! gets exactly one result; the events and ledger rows show what happened, with the secret
//! redacted everywhere.
//!
//! The tools are ordinary Rust functions marked `#[tool]`: their schemas come from the parameter
//! types and their descriptions from the doc comments, and their arguments are decoded (or the
//! call refused, naming the bad field) before anything runs.
//!
//! Run it with `cargo run --example quickstart`. The ledger is a SQLite file in the system temp
//! directory (its path is printed); set `PRISM_LEDGER_URL=postgres://…` and build with
//! `--features postgres` to write it to PostgreSQL instead, or `PRISM_LEDGER_URL=sqlite:PATH` to
//! choose the file.

use prism::call::ToolOutcome;
use prism::dispatch::{
    CollectingSink, OwnershipScope, RunLedger, SecretRedactor, ToolEvent, ToolEventKind,
};
use prism::guard::{
    GuardrailRule, RulePack, before_execute_fn, call_middleware, permission_fn, trust_fn,
    validator_fn,
};
use prism::registry::ToolFilter;
use prism::storage::{LedgerLocation, LedgerReader, RecordQuery};
use prism::{Dispatcher, ToolCall, ToolExecutionContext};
use serde_json::{Value, json};

#[path = "support/quickstart_tools.rs"]
mod quickstart_tools;

use quickstart_tools::{API_KEY, tools};

/// One provider turn, as a model would send it: ids, names, and argument *text*.
fn model_turn() -> Vec<ToolCall> {
    let raw = [
        ("call_01", "add", r#"{"a": 40, "b": 2}"#),
        (
            "call_02",
            "Word_Count",
            r#"{"text": "the quick brown fox jumps"}"#,
        ),
        (
            "call_03",
            "index_documents",
            r#"{"documents": ["alpha beta", "gamma", "delta epsilon zeta"]}"#,
        ),
        ("call_04", "send_email", r#"{"to": "ops@example.com"}"#),
        ("call_05", "delete_repository", r#"{"name": "prod"}"#),
        ("call_06", "add", r#"{"a": 1, "b": "#),
        ("call_07", "word_count", r#"{"text": ""}"#),
        ("call_08", "fetch_invoice", r#"{"invoice_id": "INV-1029"}"#),
        ("call_09", "parse_date", r#"{"date": "2026-11-xx"}"#),
        ("call_10", "add", r#"{"a": "forty", "b": 2}"#),
        (
            "call_11",
            "word_count",
            r#"{"text": "my key is sk-live-7f3a9c2e41, keep it safe"}"#,
        ),
    ];
    raw.into_iter()
        .map(
            |(id, name, text)| match serde_json::from_str::<Value>(text) {
                Ok(arguments) => ToolCall::new(id, name, arguments),
                Err(error) => ToolCall::malformed(id, name, error.to_string()),
            },
        )
        .collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The default hook would print the panicking tool's backtrace note; keep the output readable.
    std::panic::set_hook(Box::new(|info| {
        let place = info.location().map(ToString::to_string).unwrap_or_default();
        eprintln!("(a tool panicked at {place}; the dispatcher caught it)");
    }));

    let events = CollectingSink::new();
    let location = LedgerLocation::from_env()?;
    let ledger = location.open().await?;
    println!("Ledger: {location}\n");
    let dispatcher = Dispatcher::builder(tools())
        // Models often capitalise tool names; normalise before anything checks the name.
        .middleware(call_middleware(|call| {
            let name = call.name().to_ascii_lowercase();
            call.set_name(name);
        }))
        .guardrails(
            RulePack::new("secrets").rule(
                GuardrailRule::input_contains("no_keys_in_arguments", ["sk-live-"])
                    .with_reason("arguments must not carry credentials"),
            ),
        )
        .filter(ToolFilter::deny(["delete_repository"]))
        .trust(trust_fn(|tool, _ctx| {
            if tool.description().is_some() {
                Ok(())
            } else {
                Err("undocumented tools are not trusted".into())
            }
        }))
        .permission(permission_fn(|tool, _args, ctx| {
            if tool.name() == "fetch_invoice" && ctx.metadata().get("billing").is_none() {
                Err("this run has no billing access".into())
            } else {
                Ok(())
            }
        }))
        .validate(validator_fn(|tool, args| {
            match (tool.name(), args.get("text")) {
                ("word_count", Some(Value::String(text))) if text.is_empty() => {
                    Err("text must not be empty".into())
                }
                _ => Ok(()),
            }
        }))
        .before_execute(before_execute_fn(|_tool, _args, ctx| {
            if ctx.is_cancelled() {
                Err("the run is shutting down".into())
            } else {
                Ok(())
            }
        }))
        .events(events.clone())
        .ledger(ledger.clone())
        .redactor(SecretRedactor::new([API_KEY]))
        .ownership(OwnershipScope {
            tenant_id: Some("acme".into()),
            user_id: Some("ada".into()),
        })
        .build();

    // One run id per process, so rows of earlier runs in the same ledger file stay apart.
    let run_id = format!("quickstart-{}", std::process::id());
    let ctx = ToolExecutionContext::new()
        .with_session_id("session-1")
        .with_run_id(run_id.as_str())
        .with_metadata("billing", json!(true));

    println!("Results sent back to the model");
    println!(
        "{:<8} {:<18} {:<9} value or error",
        "call", "tool", "outcome"
    );
    let mut leaked = false;
    for call in model_turn() {
        let result = match dispatcher.dispatch(call, &ctx).await {
            Ok(result) => result,
            Err(tripwire) => tripwire.into_result(),
        };
        let (outcome, detail) = match &result.outcome {
            ToolOutcome::Value(value) => ("value", value.to_string()),
            ToolOutcome::Blocked(error) => {
                ("blocked", format!("{} - {}", error.code, error.message))
            }
            ToolOutcome::Error(error) => ("error", format!("{} - {}", error.code, error.message)),
        };
        leaked |= detail.contains(API_KEY);
        println!(
            "{:<8} {:<18} {:<9} {}",
            result.tool_call_id, result.name, outcome, detail
        );
    }

    println!("\nEvents");
    for event in events.events() {
        let text = serde_json::to_string(&event).unwrap_or_default();
        leaked |= text.contains(API_KEY);
        println!(
            "{:<8} {:<18} {}",
            event.tool_call_id,
            event.tool_name,
            describe(&event)
        );
    }

    println!("\nLedger rows");
    println!("{:<8} {:<18} {:<9} reason", "call", "tool", "status");
    ledger.flush()?;
    for row in ledger.read(&RecordQuery::run(run_id)).await? {
        let text = serde_json::to_string(&row).unwrap_or_default();
        leaked |= text.contains(API_KEY);
        let reason = row
            .reason
            .map(|reason| reason.to_string())
            .unwrap_or_default();
        let status = if row.progress.is_some() {
            "progress"
        } else {
            row.status.as_str()
        };
        println!(
            "{:<8} {:<18} {:<9} {}",
            row.tool_call_id, row.tool_name, status, reason
        );
    }

    println!(
        "\nSecret present in any result, event or row: {}",
        if leaked { "YES (bug)" } else { "no" }
    );
    Ok(())
}

fn describe(event: &ToolEvent) -> String {
    match &event.kind {
        ToolEventKind::ToolExecutionBlocked { reason, .. } => format!("blocked ({reason})"),
        ToolEventKind::ToolExecutionStarted { arguments } => format!("started {arguments}"),
        ToolEventKind::ToolExecutionProgress { progress, .. } => format!("progress {progress}"),
        ToolEventKind::ToolExecutionFinished { .. } => "finished".to_owned(),
        ToolEventKind::ToolExecutionError { error } => format!("error ({})", error.code),
        _ => event.kind.type_name().to_owned(),
    }
}
