//! Every ledger passes the same contract (memory, JSON Lines, SQLite, PostgreSQL), and the
//! durable ones keep their rows across a reopen.

mod support;

use prism_tools::storage::{LedgerReader, RecordQuery};
use prism_tools::{JsonlLedger, RecordStatus, RunLedger, ToolCallRecord};
use support::Opened;

/// One test per contract case for a backend opened by `$open` (an async fn returning
/// `Option<Opened<_>>`; `None` skips).
macro_rules! ledger_contract {
    ($backend:ident, $open:ident) => {
        mod $backend {
            ledger_contract!(@cases $open;
                reads_rows_back_in_order_by_run_session_and_call,
                every_field_round_trips,
                reads_see_rows_appended_before_them,
                dispatcher_rows_land_with_ownership,
            );
        }
    };
    (@cases $open:ident; $($case:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $case() {
            if let Some(ledger) = super::$open(stringify!($case)).await {
                crate::support::ledger_contract::$case(&ledger.backend).await;
            }
        }
    )*};
}

async fn memory(_test: &str) -> Option<Opened<prism_tools::InMemoryLedger>> {
    Some(Opened {
        backend: prism_tools::InMemoryLedger::new(),
        _keep: Box::new(()),
    })
}

async fn jsonl(_test: &str) -> Option<Opened<JsonlLedger>> {
    let dir = tempfile::tempdir().unwrap();
    let ledger = JsonlLedger::open(dir.path().join("ledger.jsonl")).unwrap();
    Some(Opened {
        backend: ledger,
        _keep: Box::new(dir),
    })
}

ledger_contract!(in_memory, memory);
ledger_contract!(jsonl_file, jsonl);

fn row(call: &str) -> ToolCallRecord {
    let mut row = ToolCallRecord::new(call.into(), "echo".into(), RecordStatus::Started);
    row.run_id = Some("run".into());
    row
}

async fn call_ids(ledger: &impl LedgerReader) -> Vec<String> {
    let rows = ledger.read(&RecordQuery::run("run")).await.unwrap();
    rows.iter()
        .map(|row| row.tool_call_id.to_string())
        .collect()
}

#[tokio::test]
async fn jsonl_rows_survive_a_reopen_without_an_explicit_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.jsonl");
    {
        let ledger = JsonlLedger::open(&path).unwrap();
        ledger.append(&row("a"));
        ledger.append(&row("b"));
    }
    let ledger = JsonlLedger::open_with(&path, prism_tools::SyncPolicy::EveryBatch).unwrap();
    ledger.append(&row("c"));
    assert_eq!(call_ids(&ledger).await, ["a", "b", "c"]);
}

#[tokio::test]
async fn jsonl_cuts_half_a_row_left_by_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.jsonl");
    let whole = serde_json::to_string(&row("a")).unwrap();
    std::fs::write(&path, format!("{whole}\n{{\"runId\":\"run\",\"toolCa")).unwrap();
    let ledger = JsonlLedger::open(&path).unwrap();
    ledger.append(&row("b"));
    assert_eq!(call_ids(&ledger).await, ["a", "b"]);
    ledger.flush().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2);
}

/// A row's JSON text nested `depth` levels deeper than serde_json reads by default.
fn too_deep_row(depth: usize) -> String {
    format!(
        "{{\"runId\":\"run\",\"toolCallId\":\"deep\",\"toolName\":\"echo\",\"status\":\"started\",\"arguments\":{}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

#[tokio::test]
async fn jsonl_leaves_out_a_row_it_cannot_read_and_reads_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.jsonl");
    let good = |call| serde_json::to_string(&row(call)).unwrap();
    let lines = [
        good("a"),
        "{\"not\": \"a row\"}".into(),
        too_deep_row(200),
        good("b"),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let ledger = JsonlLedger::open(&path).unwrap();
    assert_eq!(call_ids(&ledger).await, ["a", "b"]);
}

#[tokio::test]
async fn jsonl_open_fails_clearly_on_a_missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let error = JsonlLedger::open(dir.path().join("no/such/dir/ledger.jsonl")).unwrap_err();
    assert!(
        error.message().contains("could not open the ledger file"),
        "{error}"
    );
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use prism_tools::{SqliteEffectStore, SqliteLedger};

    async fn open(_test: &str) -> Option<Opened<SqliteLedger>> {
        let dir = tempfile::tempdir().unwrap();
        let ledger = SqliteLedger::open(dir.path().join("ledger.sqlite3")).unwrap();
        Some(Opened {
            backend: ledger,
            _keep: Box::new(dir),
        })
    }

    ledger_contract!(contract, open);

    #[tokio::test]
    async fn rows_survive_a_reopen_and_share_the_file_with_effects() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prism.sqlite3");
        {
            let ledger = SqliteLedger::open(&path).unwrap();
            ledger.append(&row("a"));
            ledger.append(&row("b"));
        }
        let _effects = SqliteEffectStore::open(&path).unwrap();
        let ledger = SqliteLedger::open(&path).unwrap();
        assert_eq!(call_ids(&ledger).await, ["a", "b"]);
    }

    #[tokio::test]
    async fn a_row_that_cannot_be_read_is_left_out_and_the_rest_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prism.sqlite3");
        let ledger = SqliteLedger::open(&path).unwrap();
        ledger.append(&row("a"));
        ledger.flush().unwrap();
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute(
                "INSERT INTO prism_tool_calls (run_id, tool_call_id, tool_name, status, record)
                 VALUES ('run', 'deep', 'echo', 'started', ?1)",
                [too_deep_row(200)],
            )
            .unwrap();
        drop(connection);
        ledger.append(&row("b"));
        assert_eq!(call_ids(&ledger).await, ["a", "b"]);
        assert_eq!(ledger.read(&RecordQuery::all()).await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn deep_tool_outputs_leave_sqlite_readable_and_replayable() {
        use prism_tools::{
            Dispatcher, EffectPolicy, ErrorCode, ToolCall, ToolDefinition, ToolExecutionContext,
            ToolRegistry,
        };
        use serde_json::{Value, json};

        fn nested(depth: u64) -> Value {
            (1..depth).fold(json!([]), |inner, _| Value::Array(vec![inner]))
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prism.sqlite3");
        let ledger = SqliteLedger::open(&path).unwrap();
        let tool = ToolDefinition::builder("deep")
            .effect(EffectPolicy::default())
            .run_sync(|args, _| Ok(nested(args["depth"].as_u64().unwrap())));
        let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
            .effects(SqliteEffectStore::open(&path).unwrap())
            .ledger(ledger.clone())
            .build();
        let ctx = ToolExecutionContext::new();
        let mut results = Vec::new();
        // The second call of each depth is the same effect: its outcome is replayed.
        for (call, depth) in [("a", 130), ("b", 130), ("c", 100), ("d", 100)] {
            let call = ToolCall::new(call, "deep", json!({"depth": depth}));
            results.push(dispatcher.dispatch(call, &ctx).await.unwrap());
        }
        for result in &results[..2] {
            let error = result.error_info().expect("too deep to store");
            assert_eq!(error.code, ErrorCode::OutputTooLarge, "{error:?}");
        }
        for result in &results[2..] {
            assert_eq!(result.as_value(), Some(&nested(100)));
        }
        let rows = ledger.read(&RecordQuery::all()).await.unwrap();
        let statuses: Vec<_> = rows
            .iter()
            .map(|row| (row.tool_call_id.to_string(), row.status.as_str()))
            .collect();
        let expected = [
            ("a", "started"),
            ("a", "error"),
            ("b", "error"),
            ("c", "started"),
            ("c", "finished"),
            ("d", "finished"),
        ];
        let expected: Vec<_> = expected
            .iter()
            .map(|(call, status)| (call.to_string(), *status))
            .collect();
        assert_eq!(statuses, expected);
    }

    #[test]
    fn a_schema_newer_than_the_library_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("future.sqlite3");
        drop(SqliteLedger::open(&path).unwrap());
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute("UPDATE prism_schema_version SET version = 999", [])
            .unwrap();
        drop(connection);
        let error = SqliteLedger::open(&path).unwrap_err();
        assert!(
            error.message().contains("newer than this library"),
            "{error}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("text.sqlite3");
        std::fs::write(
            &path,
            "this is not a database, just some text padding it out".repeat(20),
        )
        .unwrap();
        let error = SqliteEffectStore::open(&path).unwrap_err();
        assert!(error.message().contains("text.sqlite3"), "{error}");
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use prism_tools::{PostgresLedger, PostgresOptions};

    fn options(url: &str, schema: &str) -> PostgresOptions {
        PostgresOptions::new(url).unwrap().schema(schema).unwrap()
    }

    async fn open(test: &str) -> Option<Opened<PostgresLedger>> {
        let url = support::postgres_url(test)?;
        let schema = support::unique_schema("ledger");
        let ledger = PostgresLedger::connect(options(&url, &schema))
            .await
            .unwrap();
        Some(Opened {
            backend: ledger,
            _keep: Box::new(support::SchemaGuard { url, schema }),
        })
    }

    ledger_contract!(contract, open);

    #[tokio::test]
    async fn rows_survive_a_reopen_and_migrations_run_once() {
        let Some(url) = support::postgres_url("postgres rows_survive_a_reopen") else {
            return;
        };
        let schema = support::unique_schema("reopen");
        let _guard = support::SchemaGuard {
            url: url.clone(),
            schema: schema.clone(),
        };
        {
            let ledger = PostgresLedger::connect(options(&url, &schema))
                .await
                .unwrap();
            ledger.append(&row("a"));
            ledger.append(&row("b"));
        }
        let _effects = prism_tools::PostgresEffectStore::connect(options(&url, &schema))
            .await
            .unwrap();
        let ledger = PostgresLedger::connect(options(&url, &schema))
            .await
            .unwrap();
        assert_eq!(call_ids(&ledger).await, ["a", "b"]);

        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let versions: Vec<i32> = client
            .query(
                &format!("SELECT version FROM {schema}.prism_schema_migrations ORDER BY version"),
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        assert_eq!(versions, [1, 2, 3, 4]);
    }

    /// A database the ledger table's first version made, with rows in it, gains the column that
    /// keeps a retried row from being stored twice; its old rows stay readable, in order, before
    /// the new ones.
    #[tokio::test]
    async fn a_database_from_before_row_keys_migrates_and_keeps_its_rows() {
        let Some(url) = support::postgres_url("postgres a_database_from_before_row_keys") else {
            return;
        };
        let schema = support::unique_schema("before_keys");
        let _guard = support::SchemaGuard {
            url: url.clone(),
            schema: schema.clone(),
        };
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        // The ledger table as migration 1 made it, and a database at version 3.
        client
            .batch_execute(&format!(
                "CREATE SCHEMA {schema};
                SET search_path = {schema};
                CREATE TABLE prism_schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                );
                INSERT INTO prism_schema_migrations (version, name)
                    VALUES (1, 'ledger'), (2, 'effects'), (3, 'approvals');
                CREATE TABLE prism_tool_calls (
                    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    session_id TEXT,
                    run_id TEXT,
                    tool_call_id TEXT NOT NULL,
                    tool_name TEXT NOT NULL,
                    status TEXT NOT NULL,
                    tenant_id TEXT,
                    user_id TEXT,
                    record JSON NOT NULL
                );"
            ))
            .await
            .unwrap();
        for call in ["old1", "old2"] {
            let record = serde_json::to_string(&row(call)).unwrap();
            client
                .execute(
                    &format!(
                        "INSERT INTO {schema}.prism_tool_calls
                            (run_id, tool_call_id, tool_name, status, record)
                            VALUES ('run', $1, 'echo', 'started', $2::text::json)"
                    ),
                    &[&call, &record],
                )
                .await
                .unwrap();
        }

        let ledger = PostgresLedger::connect(options(&url, &schema))
            .await
            .unwrap();
        assert_eq!(call_ids(&ledger).await, ["old1", "old2"]);
        let ledger = tokio::task::spawn_blocking(move || {
            ledger.append(&row("new1"));
            ledger.append(&row("new2"));
            ledger.flush().expect("new rows are stored beside the old");
            ledger
        })
        .await
        .unwrap();
        assert_eq!(call_ids(&ledger).await, ["old1", "old2", "new1", "new2"]);
        let latest: i32 = client
            .query_one(
                &format!("SELECT max(version) FROM {schema}.prism_schema_migrations"),
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(latest, 4);
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_clear_error() {
        // Port 1 on loopback: nothing listens there.
        let options = PostgresOptions::new("postgres://prism:hunter2@127.0.0.1:1/none").unwrap();
        let error = PostgresLedger::connect(options).await.unwrap_err();
        assert!(error.message().contains("PostgreSQL"), "{error}");
        assert!(!error.message().contains("hunter2"), "{error}");
    }
}
