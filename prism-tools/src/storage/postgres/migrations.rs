//! The PostgreSQL schema, as numbered migrations recorded in `prism_schema_migrations`. Opening a
//! ledger or store applies the missing ones in one transaction under an advisory lock, so any
//! number of processes may open a new database at once. Migrations are only ever added, never
//! edited.

use tokio_postgres::Client;

/// Migration `n` (from 1) is `MIGRATIONS[n - 1]`: a name and its SQL.
const MIGRATIONS: &[(&str, &str)] = &[
    (
        "ledger",
        "CREATE TABLE prism_tool_calls (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id TEXT,
            run_id TEXT,
            tool_call_id TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            status TEXT NOT NULL,
            tenant_id TEXT,
            user_id TEXT,
            record JSON NOT NULL
        );
        CREATE INDEX prism_tool_calls_by_run ON prism_tool_calls (run_id, seq);
        CREATE INDEX prism_tool_calls_by_session ON prism_tool_calls (session_id, seq);
        CREATE INDEX prism_tool_calls_by_call ON prism_tool_calls (tool_call_id, seq);",
    ),
    (
        "effects",
        "CREATE TABLE prism_effects (
            key TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            claimed_at BIGINT NOT NULL,
            lease_expires_at BIGINT NOT NULL,
            outcome JSON
        );
        CREATE INDEX prism_effects_open ON prism_effects (lease_expires_at) WHERE outcome IS NULL;",
    ),
    (
        "approvals",
        "CREATE TABLE prism_approvals (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            session_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            arguments_hash TEXT NOT NULL,
            run_id TEXT NOT NULL,
            arguments JSON NOT NULL,
            requested_at BIGINT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'decided', 'consumed')),
            verdict JSON,
            PRIMARY KEY (session_id, call_id),
            CHECK ((state = 'pending') = (verdict IS NULL))
        );
        CREATE INDEX prism_approvals_pending ON prism_approvals (session_id, seq)
            WHERE state = 'pending';",
    ),
    (
        // A retried batch whose first commit went unanswered skips the rows already stored.
        // Rows from before have none: NULLs never conflict, and reads do not use the key.
        "ledger row keys",
        "ALTER TABLE prism_tool_calls ADD COLUMN row_key UUID;
        ALTER TABLE prism_tool_calls
            ADD CONSTRAINT prism_tool_calls_row_key UNIQUE (row_key);",
    ),
];

/// Brings the schema up to date; `schema` is an already validated identifier.
pub(super) async fn apply(client: &mut Client, schema: Option<&str>) -> Result<(), String> {
    let error = |error: tokio_postgres::Error| super::postgres_error(&error);
    let transaction = client.transaction().await.map_err(error)?;
    let lock = format!("prism_tools migrations {}", schema.unwrap_or(""));
    transaction
        .execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&lock])
        .await
        .map_err(error)?;
    if let Some(schema) = schema {
        transaction
            .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
            .await
            .map_err(error)?;
    }
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS prism_schema_migrations (
                version INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .await
        .map_err(error)?;
    let current: i32 = transaction
        .query_one(
            "SELECT coalesce(max(version), 0) FROM prism_schema_migrations",
            &[],
        )
        .await
        .map_err(error)?
        .get(0);
    let latest = MIGRATIONS.len();
    let current = usize::try_from(current).unwrap_or(0);
    if current > latest {
        return Err(format!(
            "the schema is at version {current}, newer than this library's {latest}; upgrade prism-tools"
        ));
    }
    for (index, (name, sql)) in MIGRATIONS.iter().enumerate().skip(current) {
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        transaction.batch_execute(sql).await.map_err(|failure| {
            format!("migration {version} ({name}) failed: {}", error(failure))
        })?;
        transaction
            .execute(
                "INSERT INTO prism_schema_migrations (version, name) VALUES ($1, $2)",
                &[&version, name],
            )
            .await
            .map_err(error)?;
    }
    transaction.commit().await.map_err(error)
}
