//! Durable approvals through the run layer: a suspended run survives a restart of everything but
//! its SQLite file, and resumers racing on one approval run its call once.

#![cfg(feature = "sqlite")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prism_tools::run::{
    Agent, ApprovalDecision, ApprovalStore, ApprovalStoreError, Message, ProviderResponse, RunEnd,
    RunError, RunOptions, ScriptedProvider, SessionState, approval_fn,
};
use prism_tools::{
    BlockReason, Dispatcher, SqliteApprovalStore, SqliteLedger, ToolCall, ToolDefinition,
    ToolRegistry, ToolResult,
};
use serde_json::{Value, json};

/// A `wipe` tool that needs approval and counts how often its side effect ran.
fn wipe(runs: &Arc<AtomicUsize>) -> ToolDefinition {
    let runs = Arc::clone(runs);
    ToolDefinition::builder("wipe")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
        .run_sync(move |args: &Value, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!({ "wiped": args["path"] }))
        })
}

/// An agent whose `wipe` calls wait for approval in `store`; `turns` is what the model says.
fn agent(
    runs: &Arc<AtomicUsize>,
    store: Arc<dyn ApprovalStore>,
    turns: impl IntoIterator<Item = ProviderResponse>,
) -> Agent {
    let registry = ToolRegistry::from_iter([wipe(runs)]);
    Agent::new(
        Dispatcher::builder(registry).build(),
        ScriptedProvider::new(turns),
    )
    .with_approvals(store)
    .with_approval_policy(approval_fn(|tool, _| tool.name() == "wipe"))
}

/// Runs a session until it suspends on one `wipe` call and returns its serialized state.
async fn suspend(runs: &Arc<AtomicUsize>, store: Arc<dyn ApprovalStore>) -> String {
    let call = ToolCall::new("c1", "wipe", json!({"path": "/srv/cache"}));
    let agent = agent(runs, store, [ProviderResponse::calls([call])]);
    let mut session = agent.session("ops-1");
    let outcome = session
        .run("clean the cache", RunOptions::new())
        .await
        .unwrap();
    assert_eq!(outcome.pending_approvals().len(), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "suspended before the call");
    serde_json::to_string(&session.state()).unwrap()
}

fn restored_state(stored: &str) -> SessionState {
    serde_json::from_str(stored).unwrap()
}

fn tool_rows(transcript: &[Message]) -> Vec<&ToolResult> {
    transcript
        .iter()
        .filter_map(Message::as_tool_result)
        .collect()
}

#[tokio::test]
async fn a_suspended_run_survives_a_restart_and_its_call_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prism.sqlite3");
    let runs = Arc::new(AtomicUsize::new(0));

    // First life: suspend, keep only the session's JSON, drop the agent, store and connection.
    let stored = suspend(&runs, Arc::new(SqliteApprovalStore::open(&path).unwrap())).await;

    // Second life: reopen the file; a reviewer sees the request and approves it.
    let store: Arc<dyn ApprovalStore> = Arc::new(SqliteApprovalStore::open(&path).unwrap());
    let waiting = store.pending("ops-1").await.unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0].key.call_id.as_str(), "c1");
    assert_eq!(waiting[0].arguments, json!({"path": "/srv/cache"}));
    let mut session = agent(
        &runs,
        Arc::clone(&store),
        [ProviderResponse::text("cache cleaned")],
    )
    .restore(restored_state(&stored));
    let outcome = session
        .resume([ApprovalDecision::approve(&waiting[0].key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(outcome.summary().text, "cache cleaned");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let rows = tool_rows(session.transcript());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].as_value(), Some(&json!({"wiped": "/srv/cache"})));

    // A stale copy of the suspended state, resumed later, is refused as resumed before: it
    // neither runs the call a second time nor continues the run again.
    let mut stale = agent(&runs, store, [ProviderResponse::text("nothing to do")])
        .restore(restored_state(&stored));
    let error = stale.resume([]).await.unwrap_err();
    assert!(
        matches!(&error, RunError::StaleSession { message } if message.contains("resumed before")),
        "{error:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(tool_rows(stale.transcript()).is_empty());
    assert!(stale.suspended().is_some());
}

#[tokio::test]
async fn a_database_from_before_approvals_gains_the_table_and_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("older.sqlite3");
    {
        let ledger = SqliteLedger::open(&path).unwrap();
        let row = prism_tools::ToolCallRecord::new(
            "c0".into(),
            "read".into(),
            prism_tools::RecordStatus::Finished,
        );
        prism_tools::RunLedger::append(&ledger, &row);
    }
    // Wind the file back to schema version 2, as the release before approval stores left it
    // (which counted migrations in `user_version`, with no version table).
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "DROP TABLE prism_approvals; DROP TABLE prism_schema_version;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    drop(connection);

    let runs = Arc::new(AtomicUsize::new(0));
    let store = Arc::new(SqliteApprovalStore::open(&path).unwrap());
    suspend(&runs, store.clone()).await;
    assert_eq!(store.pending("ops-1").await.unwrap().len(), 1);
    let ledger = SqliteLedger::open(&path).unwrap();
    let rows = prism_tools::LedgerReader::read(&ledger, &prism_tools::RecordQuery::call("c0"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "the ledger's rows survived the migration");
}

/// Two workers restore the same suspended session and resume it at once, each with its own
/// connection to the store. Whatever the interleaving, the call runs once.
async fn racing_resumers_run_the_call_once(stores: [Arc<dyn ApprovalStore>; 2]) {
    let runs = Arc::new(AtomicUsize::new(0));
    let stored = suspend(&runs, Arc::clone(&stores[0])).await;
    let key = stores[1].pending("ops-1").await.unwrap()[0].key.clone();

    // Both bring the same approval: one records it; the other is told it was already decided
    // (or, once acted on, that its copy of the state is stale) and runs nothing.
    let [first, second] = stores.clone().map(|store| {
        let mut session =
            agent(&runs, store, [ProviderResponse::text("done")]).restore(restored_state(&stored));
        let decision = ApprovalDecision::approve(&key);
        tokio::spawn(async move { session.resume([decision]).await })
    });
    let answers = [first.await.unwrap(), second.await.unwrap()];
    let completed = answers.iter().filter(|answer| answer.is_ok()).count();
    assert_eq!(completed, 1, "{answers:?}");
    for answer in &answers {
        match answer {
            Ok(outcome) => assert_eq!(outcome.end, RunEnd::Completed),
            Err(error) => assert!(
                matches!(
                    error,
                    RunError::Approval(ApprovalStoreError::AlreadyDecided)
                        | RunError::StaleSession { .. }
                ),
                "{error:?}"
            ),
        }
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// A reviewer decided already; two workers resume with no decision of their own and race to
/// consume it. One runs the call; the other answers it `permission_denied`, or is refused as a
/// stale state when the first had acted on the approval before it looked.
async fn racing_consumers_run_the_call_once(stores: [Arc<dyn ApprovalStore>; 2]) {
    let runs = Arc::new(AtomicUsize::new(0));
    let stored = suspend(&runs, Arc::clone(&stores[0])).await;
    let key = stores[1].pending("ops-1").await.unwrap()[0].key.clone();
    stores[1]
        .decide(&ApprovalDecision::approve(&key))
        .await
        .unwrap();

    let [first, second] = stores.clone().map(|store| {
        let mut session =
            agent(&runs, store, [ProviderResponse::text("done")]).restore(restored_state(&stored));
        tokio::spawn(async move {
            match session.resume([]).await {
                Ok(outcome) => {
                    assert_eq!(outcome.end, RunEnd::Completed);
                    Some(tool_rows(session.transcript())[0].clone())
                }
                // The other worker acted on the approval before this one read it.
                Err(RunError::StaleSession { .. }) => None,
                Err(error) => panic!("{error:?}"),
            }
        })
    });
    let rows = [first.await.unwrap(), second.await.unwrap()];
    let ran: Vec<_> = rows
        .iter()
        .flatten()
        .filter(|row| row.is_success())
        .collect();
    assert_eq!(ran.len(), 1, "{rows:?}");
    // The other is answered `permission_denied` or, when it came late enough, refused as stale.
    let refused = rows
        .iter()
        .filter(|row| {
            row.as_ref()
                .is_none_or(|row| row.block_reason() == Some(BlockReason::PermissionDenied))
        })
        .count();
    assert_eq!(refused, 1, "{rows:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

fn sqlite_pair(dir: &tempfile::TempDir) -> [Arc<dyn ApprovalStore>; 2] {
    let path = dir.path().join("shared.sqlite3");
    [(); 2].map(|()| Arc::new(SqliteApprovalStore::open(&path).unwrap()) as Arc<dyn ApprovalStore>)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_racing_resumers_run_the_call_once() {
    let dir = tempfile::tempdir().unwrap();
    racing_resumers_run_the_call_once(sqlite_pair(&dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_racing_consumers_run_the_call_once() {
    let dir = tempfile::tempdir().unwrap();
    racing_consumers_run_the_call_once(sqlite_pair(&dir)).await;
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use prism_tools::{PostgresApprovalStore, PostgresOptions};

    /// Two stores, each with its own pool, on one fresh schema; `None` skips.
    async fn pair(test: &str) -> Option<([Arc<dyn ApprovalStore>; 2], support::SchemaGuard)> {
        let url = support::postgres_url(test)?;
        let schema = support::unique_schema("resume");
        let options = PostgresOptions::new(&url).unwrap().schema(&schema).unwrap();
        let one = PostgresApprovalStore::connect(options.clone())
            .await
            .unwrap();
        let two = PostgresApprovalStore::connect(options).await.unwrap();
        Some((
            [Arc::new(one), Arc::new(two)],
            support::SchemaGuard { url, schema },
        ))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_racing_resumers_run_the_call_once() {
        if let Some((stores, _guard)) = pair("postgres_racing_resumers_run_the_call_once").await {
            racing_resumers_run_the_call_once(stores).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_racing_consumers_run_the_call_once() {
        if let Some((stores, _guard)) = pair("postgres_racing_consumers_run_the_call_once").await {
            racing_consumers_run_the_call_once(stores).await;
        }
    }
}

/// One stored approval that cannot be read (its arguments corrupted in the file) hides no other
/// pending approval of the session, and is not lost either: it is listed as unreadable, by call
/// id, without the row's content.
#[tokio::test]
async fn one_unreadable_approval_hides_no_other_pending_one() {
    use prism_tools::run::{ApprovalKey, PendingApproval};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prism.sqlite3");
    let store = SqliteApprovalStore::open(&path).unwrap();
    for call in ["c1", "c2", "c3"] {
        let arguments = json!({"path": format!("/srv/{call}")});
        let pending = PendingApproval {
            key: ApprovalKey::new("ops-1", call.into(), "wipe", &arguments),
            run_id: "run-1".into(),
            arguments,
            requested_at: 1_700_000_000_000,
        };
        store.request(&pending).await.unwrap();
    }
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE prism_approvals SET arguments = '{\"token\": \"hunter2' WHERE call_id = 'c2'",
            [],
        )
        .unwrap();

    let waiting = store
        .pending("ops-1")
        .await
        .expect("one unreadable row must not hide the others");
    let calls: Vec<&str> = waiting.iter().map(|p| p.key.call_id.as_str()).collect();
    assert_eq!(calls, ["c1", "c3"]);

    let listing = store.pending_with_unreadable("ops-1").await.unwrap();
    assert_eq!(listing.approvals, waiting);
    assert_eq!(listing.unreadable.len(), 1);
    let unreadable = &listing.unreadable[0];
    assert_eq!(
        unreadable.call_id.as_ref().map(|id| id.as_str()),
        Some("c2")
    );
    assert!(
        !unreadable.reason.contains("hunter2"),
        "the reason quotes the row: {}",
        unreadable.reason
    );
}
