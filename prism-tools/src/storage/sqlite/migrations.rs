//! The SQLite schema, as numbered migrations. The table `prism_schema_version` holds the number
//! of migrations applied (not the database's `user_version`, which belongs to the host when the
//! tables live in its database); opening applies the rest in one `BEGIN IMMEDIATE` transaction,
//! so two processes opening a new file at once cannot both apply them. Migrations are only ever
//! added, never edited.

use rusqlite::{Connection, TransactionBehavior};

/// Migration `n` (from 1) is `MIGRATIONS[n - 1]`.
const MIGRATIONS: &[&str] = &[
    // 1: the ledger. `seq` is the append order; the whole row is JSON in `record`.
    "CREATE TABLE prism_tool_calls (
        seq INTEGER PRIMARY KEY,
        session_id TEXT,
        run_id TEXT,
        tool_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        status TEXT NOT NULL,
        tenant_id TEXT,
        user_id TEXT,
        record TEXT NOT NULL
    );
    CREATE INDEX prism_tool_calls_by_run ON prism_tool_calls (run_id, seq);
    CREATE INDEX prism_tool_calls_by_session ON prism_tool_calls (session_id, seq);
    CREATE INDEX prism_tool_calls_by_call ON prism_tool_calls (tool_call_id, seq);",
    // 2: effect claims. `outcome` is the recorded outcome's JSON, NULL while claimed.
    "CREATE TABLE prism_effects (
        key TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        claimed_at INTEGER NOT NULL,
        lease_expires_at INTEGER NOT NULL,
        outcome TEXT
    ) WITHOUT ROWID;
    CREATE INDEX prism_effects_open ON prism_effects (lease_expires_at) WHERE outcome IS NULL;",
    // 3: approvals, one row per call of a session. `seq` is the request order; `verdict` is the
    // decision's JSON, NULL exactly while the approval is pending.
    "CREATE TABLE prism_approvals (
        seq INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments_hash TEXT NOT NULL,
        run_id TEXT NOT NULL,
        arguments TEXT NOT NULL,
        requested_at INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'decided', 'consumed')),
        verdict TEXT,
        UNIQUE (session_id, call_id),
        CHECK ((state = 'pending') = (verdict IS NULL))
    );
    CREATE INDEX prism_approvals_pending ON prism_approvals (session_id, seq) WHERE state = 'pending';",
];

/// Brings the schema up to date.
pub(super) fn apply(connection: &mut Connection) -> Result<(), String> {
    let latest = MIGRATIONS.len();
    let seen = applied(connection)?;
    if seen >= latest {
        return check_not_newer(seen, latest);
    }
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|error| error.to_string())?;
    let current = applied(&transaction)?;
    check_not_newer(current, latest)?;
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(current) {
        transaction
            .execute_batch(migration)
            .map_err(|error| format!("migration {} failed: {error}", index + 1))?;
    }
    transaction
        .execute_batch(
            "CREATE TABLE IF NOT EXISTS prism_schema_version (version INTEGER NOT NULL);
             DELETE FROM prism_schema_version;",
        )
        .and_then(|_| {
            transaction.execute(
                "INSERT INTO prism_schema_version (version) VALUES (?1)",
                [latest as i64],
            )
        })
        .map_err(|error| error.to_string())?;
    transaction.commit().map_err(|error| error.to_string())
}

/// The tables of migrations 1 to 3, in order. A database made before `prism_schema_version`
/// existed counted its migrations in `user_version`; which of these tables it has says the
/// same, whatever the host has since done with `user_version`.
const FIRST_TABLES: [&str; 3] = ["prism_tool_calls", "prism_effects", "prism_approvals"];

fn applied(connection: &Connection) -> Result<usize, String> {
    let exists = |table: &str| -> Result<bool, String> {
        connection
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get::<_, i64>(0),
            )
            .map(|count| count > 0)
            .map_err(|error| error.to_string())
    };
    if exists("prism_schema_version")? {
        let version: i64 = connection
            .query_row("SELECT max(version) FROM prism_schema_version", [], |row| {
                row.get::<_, Option<i64>>(0)
            })
            .map_err(|error| error.to_string())?
            .unwrap_or(0);
        return usize::try_from(version)
            .map_err(|_| format!("the schema version {version} is not valid"));
    }
    let mut count = 0;
    for table in FIRST_TABLES {
        if !exists(table)? {
            break;
        }
        count += 1;
    }
    Ok(count)
}

fn check_not_newer(current: usize, latest: usize) -> Result<(), String> {
    if current > latest {
        return Err(format!(
            "the schema is at version {current}, newer than this library's {latest}; upgrade prism-tools"
        ));
    }
    Ok(())
}
