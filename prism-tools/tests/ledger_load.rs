//! Load: 100,000 dispatches from 32 concurrent tasks into one SQLite ledger. Every row arrives,
//! once, and the rows of each call (and of each task's calls) keep their order.

#![cfg(feature = "sqlite")]

use std::collections::HashMap;

use prism_tools::storage::{LedgerReader, RecordQuery};
use prism_tools::{
    Dispatcher, RecordStatus, RunLedger, SqliteLedger, ToolCall, ToolDefinition,
    ToolExecutionContext, ToolRegistry,
};
use serde_json::{Value, json};

const TASKS: usize = 32;
const DISPATCHES: usize = 100_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_thousand_dispatches_from_32_tasks_land_once_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = SqliteLedger::open(dir.path().join("load.sqlite3")).unwrap();
    let echo = ToolDefinition::builder("echo").run_sync(|args: &Value, _| Ok(args.clone()));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo]))
        .ledger(ledger.clone())
        .build();

    let per_task = DISPATCHES / TASKS;
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let dispatcher = dispatcher.clone();
            tokio::spawn(async move {
                let ctx = ToolExecutionContext::new().with_run_id("load");
                for n in 0..per_task {
                    let call = ToolCall::new(format!("{task}-{n}"), "echo", json!({"n": n}));
                    let result = dispatcher.dispatch(call, &ctx).await.unwrap();
                    assert_eq!(result.as_value(), Some(&json!({"n": n})));
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    ledger.flush().unwrap();

    let rows = ledger.read(&RecordQuery::run("load")).await.unwrap();
    assert_eq!(rows.len(), 2 * per_task * TASKS);
    // Per call: exactly started, then finished. Per task: call n before call n + 1.
    let mut seen: HashMap<&str, Vec<RecordStatus>> = HashMap::new();
    let mut next_in_task = vec![0usize; TASKS];
    for row in &rows {
        let id = row.tool_call_id.as_str();
        let (task, n) = id.split_once('-').unwrap();
        let (task, n): (usize, usize) = (task.parse().unwrap(), n.parse().unwrap());
        let statuses = seen.entry(id).or_default();
        statuses.push(row.status);
        match row.status {
            RecordStatus::Started => {
                assert_eq!(n, next_in_task[task], "task {task} out of order at {id}");
                assert_eq!(statuses.len(), 1, "{id} started twice");
            }
            RecordStatus::Finished => {
                assert_eq!(
                    statuses,
                    &[RecordStatus::Started, RecordStatus::Finished],
                    "{id}"
                );
                next_in_task[task] += 1;
            }
            other => panic!("{id} has an unexpected {other:?} row"),
        }
    }
    assert_eq!(seen.len(), per_task * TASKS);
    assert!(next_in_task.iter().all(|&done| done == per_task));
}
