//! Shared by the storage tests: backends opened fresh for one test, the PostgreSQL skip rule, and
//! the contract suites every backend must pass.

#![allow(dead_code, unused_imports)] // each test binary uses a different part of this module

pub mod approval_contract;
pub mod effect_contract;
pub mod ledger_contract;

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable holding the test server's URL (`.ci/postgres.sh` exports it).
pub const POSTGRES_URL_VAR: &str = "PRISM_POSTGRES_URL";

/// The PostgreSQL URL, or `None` after printing a loud SKIPPED line (straight to stderr, past the
/// test harness's capture). Panics when `PRISM_REQUIRE_POSTGRES=1` and no URL is set.
pub fn postgres_url(test: &str) -> Option<String> {
    match std::env::var(POSTGRES_URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("PRISM_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "PRISM_REQUIRE_POSTGRES=1 but {POSTGRES_URL_VAR} is not set: start a server with .ci/postgres.sh"
            );
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: {test}: no PostgreSQL server ({POSTGRES_URL_VAR} is not set; see .ci/postgres.sh)"
            );
            None
        }
    }
}

/// A schema name no other test (or test process) uses.
pub fn unique_schema(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or(0);
    format!(
        "prism_test_{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Drops a test schema when the test ends, so a developer's database does not fill up.
#[cfg(feature = "postgres")]
pub struct SchemaGuard {
    pub url: String,
    pub schema: String,
}

#[cfg(feature = "postgres")]
impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // Its own thread and runtime: the test's runtime may be shutting down.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!("could not drop the test schema {}", self.schema);
        }
    }
}

/// A store or ledger with whatever must live as long as it (a temp dir, a schema to drop).
pub struct Opened<T> {
    pub backend: T,
    pub _keep: Box<dyn std::any::Any + Send>,
}

impl<T> std::ops::Deref for Opened<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.backend
    }
}
