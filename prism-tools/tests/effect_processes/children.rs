//! What the child processes do: a race worker claims every effect until all are recorded; a
//! crash victim starts an effect and waits to be killed.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Failed;
use prism_tools::effects::EffectRecovery;
use prism_tools::{
    Dispatcher, EffectPolicy, EffectStore, ErrorCode, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry,
};
use serde_json::{Value, json};

use crate::{KEYS, LOG_VAR, STORE_VAR, WORKER_VAR, open_store, runtime};

/// Appends one line in one `write`, so lines from concurrent processes never interleave.
fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(format!("{line}\n").as_bytes())
}

fn charge_tool(log: PathBuf, worker: usize) -> ToolDefinition {
    ToolDefinition::builder("charge")
        .effect(EffectPolicy::new(Duration::from_secs(600)))
        .run_sync(move |args: &Value, _| {
            let item = args["item"].as_u64().ok_or("item must be a number")?;
            append_line(&log, &format!("{item} {worker}")).map_err(|error| error.to_string())?;
            Ok(json!({"item": item, "worker": worker}))
        })
}

pub(crate) fn transfer_call(id: &str) -> ToolCall {
    ToolCall::new(id, "transfer", json!({"amount": 5, "to": "acct-9"}))
}

/// What a child process does, by role.
pub(crate) fn child(role: &str) -> Result<(), Failed> {
    let store_spec = std::env::var(STORE_VAR)?;
    let log = PathBuf::from(std::env::var(LOG_VAR)?);
    let worker: usize = std::env::var(WORKER_VAR)?.parse()?;
    let runtime = runtime()?;
    let store = runtime.block_on(open_store(&store_spec))?;
    match role {
        "race" => runtime.block_on(race_child(store, log, worker)),
        "crash" => runtime.block_on(crash_child(store, log)),
        other => Err(format!("unknown child role {other}").into()),
    }
}

async fn race_child(
    store: Arc<dyn EffectRecovery>,
    log: PathBuf,
    worker: usize,
) -> Result<(), Failed> {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([charge_tool(log, worker)]))
        .effects(store as Arc<dyn EffectStore>)
        .build();
    std::io::stdin().lock().read_line(&mut String::new())?;
    // Half the workers walk the keys forwards and half backwards: every key is contended.
    let mut pending: VecDeque<u64> = if worker.is_multiple_of(2) {
        (0..KEYS).collect()
    } else {
        (0..KEYS).rev().collect()
    };
    let ctx = ToolExecutionContext::new();
    let mut answers = String::new();
    let mut attempt = 0;
    while let Some(item) = pending.pop_front() {
        attempt += 1;
        let call = ToolCall::new(
            format!("w{worker}-{attempt}"),
            "charge",
            json!({"item": item}),
        );
        let result = dispatcher
            .dispatch(call, &ctx)
            .await
            .map_err(|tripwire| tripwire.to_string())?;
        match (result.as_value(), result.error_info()) {
            (Some(value), _) => answers.push_str(&format!("{item} {}\n", value["worker"])),
            // Another worker is running it right now: come back to it later.
            (_, Some(error)) if error.code == ErrorCode::EffectInFlight => pending.push_back(item),
            (_, error) => return Err(format!("effect {item} failed: {error:?}").into()),
        }
    }
    std::io::stdout().write_all(answers.as_bytes())?;
    Ok(())
}

async fn crash_child(store: Arc<dyn EffectRecovery>, log: PathBuf) -> Result<(), Failed> {
    let tool = ToolDefinition::builder("transfer")
        .effect(EffectPolicy::new(Duration::from_secs(3600)))
        .run(move |_, _| {
            let log = log.clone();
            async move {
                append_line(&log, "started").map_err(|error| error.to_string())?;
                let mut stdout = std::io::stdout();
                stdout
                    .write_all(b"STARTED\n")
                    .map_err(|error| error.to_string())?;
                stdout.flush().map_err(|error| error.to_string())?;
                // The transfer is under way when the process is killed.
                std::future::pending::<Result<Value, prism_tools::ToolError>>().await
            }
        });
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .effects(store as Arc<dyn EffectStore>)
        .build();
    dispatcher
        .dispatch(transfer_call("doomed"), &ToolExecutionContext::new())
        .await
        .map_err(|tripwire| tripwire.to_string())?;
    Err("the transfer returned, but it never should".into())
}
