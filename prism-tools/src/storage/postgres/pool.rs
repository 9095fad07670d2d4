//! [`StorePool`]: the connection pool behind each PostgreSQL store. Connecting migrates the
//! schema once; every statement after that takes a pooled connection and its cached prepared
//! statement. Errors come back as text already free of the connection password.

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row, Statement};

use crate::storage::StorageError;
use crate::storage::postgres::{PostgresOptions, migrations, postgres_error};

/// Statement parameters.
type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A pool of connections to one database, its schema up to date.
#[derive(Clone)]
pub(super) struct StorePool {
    pool: Pool,
}

impl StorePool {
    /// Builds the pool and applies missing migrations over its first connection.
    pub(super) async fn connect(options: &PostgresOptions) -> Result<Self, StorageError> {
        let manager = Manager::from_config(
            options.connect_config(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .build()
            .map_err(|error| {
                StorageError::new(format!("could not create the connection pool: {error}"))
            })?;
        let store = Self { pool };
        let mut client = store.client().await.map_err(StorageError::new)?;
        migrations::apply(&mut client, options.schema.as_deref())
            .await
            .map_err(|error| {
                StorageError::new(format!(
                    "could not migrate the PostgreSQL database: {error}"
                ))
            })?;
        Ok(store)
    }

    /// A connection from the pool.
    async fn client(&self) -> Result<Object, String> {
        self.pool
            .get()
            .await
            .map_err(|error| format!("no PostgreSQL connection: {error}"))
    }

    /// A pooled connection with `sql` prepared on it (cached per connection).
    async fn prepared(&self, sql: &str) -> Result<(Object, Statement), String> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await.map_err(text)?;
        Ok((client, statement))
    }

    /// Runs one statement, answering how many rows it changed.
    pub(super) async fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64, String> {
        let (client, statement) = self.prepared(sql).await?;
        client.execute(&statement, params).await.map_err(text)
    }

    /// Runs one query that yields at most one row.
    pub(super) async fn query_opt(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Option<Row>, String> {
        let (client, statement) = self.prepared(sql).await?;
        client.query_opt(&statement, params).await.map_err(text)
    }

    /// Runs one query.
    pub(super) async fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, String> {
        let (client, statement) = self.prepared(sql).await?;
        client.query(&statement, params).await.map_err(text)
    }
}

impl std::fmt::Debug for StorePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("StorePool")
            .field("connections", &status.size)
            .field("max_connections", &status.max_size)
            .finish()
    }
}

fn text(error: tokio_postgres::Error) -> String {
    postgres_error(&error)
}
