//! PostgreSQL: the store that many worker processes or machines share.
//!
//! Claims rely on the database's own atomic statements (a conditional insert, updates
//! conditional on the claim's owner), never on a lock held by this library. Tables live in the
//! connection's first `search_path` schema, or in a schema of their own
//! ([`PostgresOptions::schema`]), which lets several deployments or test runs share one database.

mod approvals;
mod effects;
mod ledger;
mod migrations;
mod pool;

use std::fmt;
use std::str::FromStr;

use crate::storage::StorageError;

pub use approvals::PostgresApprovalStore;
pub use effects::PostgresEffectStore;
pub use ledger::PostgresLedger;

/// How to reach a PostgreSQL database.
///
/// ```
/// use prism::storage::PostgresOptions;
///
/// let options = PostgresOptions::new("postgres://agent:secret@127.0.0.1:5432/agents")
///     .unwrap()
///     .schema("prism")
///     .unwrap()
///     .pool_size(8);
/// // Debug output never shows the password.
/// assert!(!format!("{options:?}").contains("secret"));
/// assert!(PostgresOptions::new("postgres://[bad").is_err());
/// assert!(PostgresOptions::new("postgres://localhost/db").unwrap().schema("x; DROP").is_err());
/// ```
#[derive(Clone)]
pub struct PostgresOptions {
    config: tokio_postgres::Config,
    schema: Option<String>,
    pool_size: usize,
    max_batch: usize,
}

impl PostgresOptions {
    /// Options for a connection string, either a URL (`postgres://user:password@host:port/db`)
    /// or `key=value` pairs. Tables go in the connection's default schema; an effect store and an
    /// approval store each keep up to 4 connections; the ledger commits at most 1024 rows per
    /// transaction.
    pub fn new(connection: &str) -> Result<Self, StorageError> {
        // The parser's message never repeats the string, which may hold a password.
        let config = tokio_postgres::Config::from_str(connection).map_err(|error| {
            StorageError::new(format!("invalid PostgreSQL connection string: {error}"))
        })?;
        Ok(Self {
            config,
            schema: None,
            pool_size: 4,
            max_batch: 1024,
        })
    }

    /// Keeps the tables in `schema` (created on first use). The name is 1 to 63 characters from
    /// `a-z`, `0-9` and `_`, not starting with a digit.
    pub fn schema(mut self, schema: &str) -> Result<Self, StorageError> {
        let valid = (1..=63).contains(&schema.len())
            && schema
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            && !schema.as_bytes()[0].is_ascii_digit();
        if !valid {
            return Err(StorageError::new(format!(
                "invalid PostgreSQL schema name {schema:?}: use 1 to 63 of a-z, 0-9 and _, not starting with a digit"
            )));
        }
        self.schema = Some(schema.to_owned());
        Ok(self)
    }

    /// The most connections an effect store opens, and as many again for an approval store
    /// opened with these options: each keeps a pool of its own (at least 1).
    pub fn pool_size(mut self, connections: usize) -> Self {
        self.pool_size = connections.max(1);
        self
    }

    /// The most ledger rows committed in one transaction (at least 1).
    pub fn max_batch(mut self, rows: usize) -> Self {
        self.max_batch = rows.max(1);
        self
    }

    /// The connection settings, pointing `search_path` at the schema if one is set.
    fn connect_config(&self) -> tokio_postgres::Config {
        let mut config = self.config.clone();
        if let Some(schema) = &self.schema {
            let search_path = format!("-c search_path={schema}");
            let options = match config.get_options() {
                Some(existing) => format!("{existing} {search_path}"),
                None => search_path,
            };
            config.options(options);
        }
        config
    }
}

impl fmt::Debug for PostgresOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresOptions")
            .field("user", &self.config.get_user())
            .field("dbname", &self.config.get_dbname())
            .field("schema", &self.schema)
            .field("pool_size", &self.pool_size)
            .field("max_batch", &self.max_batch)
            .finish_non_exhaustive()
    }
}

/// A client error as text; PostgreSQL's own messages never contain the connection password.
fn postgres_error(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("PostgreSQL: {}: {}", db.code().code(), db.message()),
        None => format!("PostgreSQL: {error}"),
    }
}

/// Column `index` of `row` as `T`. `Row::get` panics when the stored type is not `T` or the
/// value is an unexpected `NULL` (a table changed by hand or by another program); a store
/// reports that as its own error instead.
fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a tokio_postgres::Row,
    index: usize,
) -> Result<T, String> {
    row.try_get(index).map_err(|error| postgres_error(&error))
}

/// `value` as PostgreSQL's `text` takes it: it refuses NUL, which a model-chosen call id may
/// hold, so NUL becomes U+FFFD. The ledger's row JSON keeps the value as it was; an approval's
/// key columns find the same row for the exact key, and only `pending` lists the id as stored.
fn text_column(value: String) -> String {
    if value.contains('\0') {
        value.replace('\0', "\u{FFFD}")
    } else {
        value
    }
}
