//! A durable ledger with no set-up: a SQLite file in the temp directory, or the PostgreSQL
//! database `PRISM_LEDGER_URL` points at (build with `--features postgres`).
//!
//! ```sh
//! cargo run --example durable_ledger
//! PRISM_LEDGER_URL=postgres://user@127.0.0.1:5432/db cargo run --example durable_ledger --features postgres
//! ```

use prism::storage::{LedgerLocation, LedgerReader, RecordQuery};
use prism::{Dispatcher, RunLedger, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let location = LedgerLocation::from_env()?;
    let ledger = location.open().await?;
    println!("ledger: {location}");

    let echo = ToolDefinition::builder("echo")
        .description("Returns its arguments.")
        .run_sync(|args: &Value, _| Ok(args.clone()));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo]))
        .ledger(ledger.clone())
        .build();

    let run_id = format!("example-{}", std::process::id());
    let ctx = ToolExecutionContext::new().with_run_id(run_id.as_str());
    for (id, name) in [("call_1", "echo"), ("call_2", "no_such_tool")] {
        let call = ToolCall::new(id, name, json!({"text": "hello"}));
        dispatcher.dispatch(call, &ctx).await?;
    }
    ledger.flush()?;

    for row in ledger.read(&RecordQuery::run(run_id)).await? {
        println!(
            "{} {} {}",
            row.tool_call_id,
            row.tool_name,
            row.status.as_str()
        );
    }
    Ok(())
}
