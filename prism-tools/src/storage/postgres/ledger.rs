//! [`PostgresLedger`]: ledger rows in a PostgreSQL table, committed in batches by a writer thread
//! that owns its own connection.

use std::sync::Arc;

use tokio::runtime::Runtime;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls};

use crate::dispatch::{LedgerError, RunLedger, ToolCallRecord};
use crate::effects::BoxFuture;
use crate::storage::batch::{BatchWriter, LedgerSink, QueuedRow, WriteFailure};
use crate::storage::columns::{RowColumns, where_clause};
use crate::storage::postgres::{PostgresOptions, column, migrations, postgres_error, text_column};
use crate::storage::query::decode_row;
use crate::storage::{LedgerReader, RecordQuery, StorageError};

/// A [`RunLedger`] in PostgreSQL. Any number of processes may append to one table; each
/// process's rows keep their order. Cheap to clone; the last clone dropped commits what is
/// queued and closes the connection.
///
/// The writer thread runs its own single-threaded Tokio runtime for its connection, so the
/// ledger works the same whether the host calls it from an async runtime or not.
///
/// ```no_run
/// use prism::storage::{LedgerReader, PostgresLedger, PostgresOptions, RecordQuery};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// let options = PostgresOptions::new("postgres://agent@db.internal/agents")?.schema("prism")?;
/// let ledger = PostgresLedger::connect(options).await?;
/// let rows = ledger.read(&RecordQuery::run("run-42")).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresLedger {
    writer: Arc<BatchWriter>,
}

impl PostgresLedger {
    /// Connects, applies missing migrations, and starts the writer thread.
    pub async fn connect(options: PostgresOptions) -> Result<Self, StorageError> {
        let max_batch = options.max_batch;
        let (writer, opened) = BatchWriter::spawn("postgres-ledger", max_batch, move || {
            PostgresSink::open(options)
        })?;
        opened.await.map_err(|_| {
            StorageError::new("the PostgreSQL ledger thread stopped while connecting")
        })??;
        Ok(Self {
            writer: Arc::new(writer),
        })
    }
}

impl RunLedger for PostgresLedger {
    fn append(&self, record: &ToolCallRecord) {
        self.writer.append(record);
    }

    fn flush(&self) -> Result<(), LedgerError> {
        self.writer.flush()
    }
}

impl LedgerReader for PostgresLedger {
    fn read<'a>(
        &'a self,
        query: &'a RecordQuery,
    ) -> BoxFuture<'a, Result<Vec<ToolCallRecord>, LedgerError>> {
        Box::pin(self.writer.read(query.clone()))
    }
}

impl std::fmt::Debug for PostgresLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLedger").finish_non_exhaustive()
    }
}

const INSERT: &str = "INSERT INTO prism_tool_calls
    (session_id, run_id, tool_call_id, tool_name, status, tenant_id, user_id, record, row_key)
    SELECT session_id, run_id, tool_call_id, tool_name, status, tenant_id, user_id, record::json,
        row_key::uuid
    FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
        WITH ORDINALITY
        AS batch (session_id, run_id, tool_call_id, tool_name, status, tenant_id, user_id, record, row_key, position)
    ORDER BY position
    ON CONFLICT (row_key) DO NOTHING";

/// The writer thread's connection. A lost connection is opened again on the next batch.
struct PostgresSink {
    runtime: Runtime,
    config: Config,
    client: Option<Client>,
    /// Random, drawn when the ledger opens; a row's key is this plus the row's number, so rows
    /// from any number of writers sharing the table never share a key (two writers would need
    /// starting points within 2^64 of each other in a 2^128 space).
    first_key: u128,
}

impl PostgresSink {
    fn open(options: PostgresOptions) -> Result<Self, StorageError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| {
                StorageError::new(format!("could not start the ledger's runtime: {error}"))
            })?;
        let mut key = [0; 16];
        getrandom::fill(&mut key).map_err(|error| {
            StorageError::new(format!(
                "could not draw the ledger's random row keys: {error}"
            ))
        })?;
        let mut sink = Self {
            runtime,
            config: options.connect_config(),
            client: None,
            first_key: u128::from_le_bytes(key),
        };
        let schema = options.schema.as_deref();
        let client = connected(&sink.runtime, &sink.config, &mut sink.client)
            .map_err(|error| StorageError::new(error.0))?;
        let migrated = sink.runtime.block_on(migrations::apply(client, schema));
        migrated.map_err(|error| {
            StorageError::new(format!(
                "could not migrate the PostgreSQL database: {error}"
            ))
        })?;
        Ok(sink)
    }
}

/// The open connection in `slot`, connecting again if there is none or it was lost.
fn connected<'a>(
    runtime: &Runtime,
    config: &Config,
    slot: &'a mut Option<Client>,
) -> Result<&'a mut Client, LedgerError> {
    if slot.as_ref().is_none_or(Client::is_closed) {
        let (client, connection) = runtime
            .block_on(config.connect(NoTls))
            .map_err(|error| LedgerError(postgres_error(&error)))?;
        // A current-thread runtime drives this task whenever the writer blocks on a query.
        runtime.spawn(async move {
            if let Err(error) = connection.await {
                tracing::warn!(target: "prism_tools", error = %postgres_error(&error), "the PostgreSQL ledger connection closed");
            }
        });
        *slot = Some(client);
    }
    slot.as_mut()
        .ok_or_else(|| LedgerError("no PostgreSQL connection".into()))
}

/// A failed insert, refused for good only when the server answered with an error about the
/// statement or its data; a lost connection, a server shutting down, out of resources, a
/// conflict or a timeout may pass.
fn write_failure(error: &tokio_postgres::Error) -> WriteFailure {
    let message = LedgerError(postgres_error(error));
    let Some(db) = error.as_db_error() else {
        return WriteFailure::transient(message);
    };
    // SQLSTATE classes: 08 connection, 40 transaction rollback, 53 insufficient resources,
    // 55 object not in prerequisite state (a lock), 57 operator intervention, 58 system error.
    let code = db.code().code();
    if ["08", "40", "53", "55", "57", "58"]
        .iter()
        .any(|class| code.starts_with(class))
    {
        WriteFailure::transient(message)
    } else {
        WriteFailure::refused(message)
    }
}

impl LedgerSink for PostgresSink {
    /// One `INSERT` statement, atomic on its own: a batch that fails part way stores no row. A
    /// connection lost after the server committed but before it answered reads as a failure
    /// too, so every row carries a key that stays the same when it is tried again, and the
    /// insert skips the rows whose key is already stored.
    fn write_batch(&mut self, rows: &[QueuedRow]) -> Result<(), WriteFailure> {
        let mut columns: [Vec<Option<String>>; 9] = Default::default();
        for queued in rows {
            let row = RowColumns::encode(&queued.record).map_err(WriteFailure::refused)?;
            // 32 hex digits, which PostgreSQL reads as a UUID.
            let key = self.first_key.wrapping_add(u128::from(queued.number));
            let values = [
                row.session_id.map(text_column),
                row.run_id.map(text_column),
                Some(text_column(row.tool_call_id)),
                Some(text_column(row.tool_name)),
                Some(row.status.to_owned()),
                row.tenant_id.map(text_column),
                row.user_id.map(text_column),
                Some(row.record),
                Some(format!("{key:032x}")),
            ];
            for (column, value) in columns.iter_mut().zip(values) {
                column.push(value);
            }
        }
        let params: Vec<&(dyn ToSql + Sync)> = columns
            .iter()
            .map(|column| column as &(dyn ToSql + Sync))
            .collect();
        let client = connected(&self.runtime, &self.config, &mut self.client)
            .map_err(WriteFailure::transient)?;
        let inserted = self.runtime.block_on(client.execute(INSERT, &params));
        inserted.map(drop).map_err(|error| write_failure(&error))
    }

    fn read(&mut self, query: &RecordQuery) -> Result<Vec<ToolCallRecord>, LedgerError> {
        let (filter, values) = where_clause(query, |position| format!("${position}"));
        let values: Vec<String> = values.into_iter().map(text_column).collect();
        let sql = format!("SELECT seq, record::text FROM prism_tool_calls{filter} ORDER BY seq");
        let params: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|value| value as &(dyn ToSql + Sync))
            .collect();
        let client = connected(&self.runtime, &self.config, &mut self.client)?;
        let rows = self
            .runtime
            .block_on(client.query(&sql, &params))
            .map_err(|error| LedgerError(postgres_error(&error)))?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let read = column::<i64>(row, 0).and_then(|seq| Ok((seq, column::<&str>(row, 1)?)));
                match read {
                    Ok((seq, text)) => decode_row(format_args!("row {seq}"), text.as_bytes()),
                    Err(error) => {
                        tracing::error!(target: "prism_tools", "a ledger row cannot be read and is left out: {error}");
                        None
                    }
                }
            })
            // Exactly the query's rows: two ids that differ only where `text_column` replaced
            // a NUL share a column value, never a record.
            .filter(|row| query.matches(row))
            .collect())
    }
}
