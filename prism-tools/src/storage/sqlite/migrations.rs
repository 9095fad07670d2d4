//! The SQLite schema, as numbered migrations. The database's `user_version` is the number of
//! migrations applied; opening applies the rest in one `BEGIN IMMEDIATE` transaction, so two
//! processes opening a new file at once cannot both apply them. Migrations are only ever added,
//! never edited.

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
        .pragma_update(None, "user_version", latest as i64)
        .map_err(|error| error.to_string())?;
    transaction.commit().map_err(|error| error.to_string())
}

fn applied(connection: &Connection) -> Result<usize, String> {
    let version: i64 = connection
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|error| error.to_string())?;
    usize::try_from(version).map_err(|_| format!("the schema version {version} is not valid"))
}

fn check_not_newer(current: usize, latest: usize) -> Result<(), String> {
    if current > latest {
        return Err(format!(
            "the schema is at version {current}, newer than this library's {latest}; upgrade prism-tools"
        ));
    }
    Ok(())
}
