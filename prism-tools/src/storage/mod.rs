//! Durable ledgers, effect stores and approval stores: JSON Lines, SQLite (feature `sqlite`) and
//! PostgreSQL (feature `postgres`).
//!
//! | backend | ledger | effect store | approval store | for |
//! | --- | --- | --- | --- | --- |
//! | memory | [`InMemoryLedger`](crate::InMemoryLedger) | [`InMemoryEffectStore`](crate::InMemoryEffectStore) | [`InMemoryApprovalStore`](crate::run::InMemoryApprovalStore) | tests, examples |
//! | JSON Lines file | [`JsonlLedger`] | none | none | one process, grep-able audit files |
//! | SQLite file | `SqliteLedger` | `SqliteEffectStore` | `SqliteApprovalStore` | one machine, no set-up |
//! | PostgreSQL | `PostgresLedger` | `PostgresEffectStore` | `PostgresApprovalStore` | many worker processes or machines |
//!
//! ## Ledgers never block the caller
//!
//! [`RunLedger::append`](crate::RunLedger::append) is called from the dispatch path, so every
//! durable ledger hands the row to a channel and returns. A dedicated writer thread per ledger
//! drains whatever has queued up (up to a batch limit) and commits it as one transaction, so under
//! load many rows share one commit and when idle a row is committed at once, with no timer adding
//! latency. [`flush`](crate::RunLedger::flush) waits until every row appended before it is stored
//! and reports the first failure since the previous flush whose rows are not stored; dropping the last handle of a ledger
//! flushes it and stops its thread. Both block the calling thread until the writer has caught up:
//! call them at turn or run boundaries, at shutdown, or from `spawn_blocking`, not in a hot loop
//! on an async worker. Reads ([`LedgerReader`]) go through the same thread, after the
//! rows queued before them, so a reader always sees its own writes.
//!
//! The queue is unbounded: `append` never waits, so a backend slower than the dispatch rate for a
//! long time grows memory instead of slowing tools down; a flush at each turn or run boundary
//! bounds it. Rows the backend refuses for a reason that may pass (a database busy past its
//! timeout, a lost connection, a full disk) are kept and tried again, first and in order, at the
//! next commit, at each flush and once more at shutdown; each commit tries once, so a store that
//! stays down never stalls the writer. At most 10,000 rows wait: newer rows beyond that are
//! dropped, as is a batch refused for good (a row the store cannot take). A flush that cannot
//! store every row reports how many still wait, how many were lost since the previous flush,
//! and why; shutdown logs what it could not store. A write that failed part way stores none of
//! its rows (each backend writes a batch as one transaction, statement or truncated file
//! write), so a retry stores no row twice.
//!
//! ## Effect stores use the database's own transactions
//!
//! A claim is one atomic step in the database: SQLite takes the write lock up front
//! (`BEGIN IMMEDIATE`, with a busy timeout for other processes), PostgreSQL inserts the claim only
//! if the key is absent (`INSERT … ON CONFLICT DO NOTHING`), and recording an outcome is an update
//! conditional on the claim's owner still holding it without an outcome. No lock lives outside
//! the database, so any number of processes can share one store.
//!
//! ## Approval stores outlive the process that suspended the run
//!
//! A suspended run's [`SessionState`](crate::run::SessionState) is plain data the host keeps
//! anywhere; the approvals it waits for live in the store, one row per call of a session, with
//! the exact key (tool and arguments hash), the redacted arguments and, once decided, the verdict.
//! After a restart the host reopens the same file or database, restores the session and resumes
//! it; a review tool in another process can list [`pending`](crate::run::ApprovalStore::pending)
//! approvals and record decisions in the meantime. A row that cannot be read (a corrupt or
//! hand-edited file) hides no other: `pending` leaves it out and logs its call id, and
//! [`pending_with_unreadable`](crate::run::ApprovalStore::pending_with_unreadable) lists it. A row only moves forward (pending, decided,
//! consumed) and each move is one conditional `UPDATE` on the exact key, so a decision is
//! recorded once and acted on once, however many workers resume the same session.
//!
//! ## Schemas and migrations
//!
//! Both databases hold the ledger, the effects and the approvals side by side, in tables prefixed
//! `prism_`. The schema is versioned; opening a ledger or a store applies the migrations it lacks,
//! in one transaction, under the database's write lock (SQLite) or an advisory lock (PostgreSQL),
//! so several processes may open one database at the same time.

mod batch;
mod jsonl;
mod query;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod approval_row;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod columns;
#[cfg(feature = "sqlite")]
mod conninfo;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod effect_row;
#[cfg(feature = "sqlite")]
mod location;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::fmt;

pub use jsonl::{JsonlLedger, SyncPolicy};
#[cfg(feature = "sqlite")]
pub use location::{DurableLedger, LEDGER_URL_VAR, LedgerLocation};
#[cfg(feature = "postgres")]
pub use postgres::{PostgresApprovalStore, PostgresEffectStore, PostgresLedger, PostgresOptions};
pub use query::{LedgerReader, RecordQuery};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteApprovalStore, SqliteEffectStore, SqliteLedger, SqliteOptions};

/// Opening a durable ledger or store failed: the file or server could not be reached, or its
/// schema could not be brought up to date. Never contains a password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageError(String);

impl StorageError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StorageError {}
