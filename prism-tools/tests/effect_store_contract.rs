//! Every effect store passes the same contract: in memory, SQLite and PostgreSQL.

mod support;

use std::sync::Arc;

use support::Opened;

/// One test per contract case for a backend opened by `$open` (an async fn returning
/// `Option<Opened<_>>`; `None` skips).
macro_rules! effect_store_contract {
    ($backend:ident, $open:ident) => {
        mod $backend {
            effect_store_contract!(@cases $open;
                claim_acquires_once_and_reports_state,
                live_claim_reads_in_flight_even_to_its_owner,
                expired_claim_reads_unknown_and_is_never_taken_again,
                recorded_outcomes_replay_to_everyone,
                complete_requires_the_owner_and_an_open_claim,
                owner_may_record_after_its_lease,
                resolve_records_or_releases,
                unknown_effects_lists_expired_open_claims_oldest_first,
                resolve_unknown_only_touches_the_claim_it_saw,
                concurrent_claims_have_exactly_one_winner,
                outcomes_round_trip_exactly,
                dispatcher_runs_an_effect_at_most_once,
            );
        }
    };
    (@cases $open:ident; $($case:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $case() {
            if let Some(store) = super::$open(stringify!($case)).await {
                crate::support::effect_contract::$case(&store.backend).await;
            }
        }
    )*};
}

async fn memory(_test: &str) -> Option<Opened<Arc<prism_tools::InMemoryEffectStore>>> {
    Some(Opened {
        backend: Arc::new(prism_tools::InMemoryEffectStore::new()),
        _keep: Box::new(()),
    })
}

effect_store_contract!(in_memory, memory);

#[cfg(feature = "sqlite")]
async fn sqlite(_test: &str) -> Option<Opened<Arc<prism_tools::SqliteEffectStore>>> {
    let dir = tempfile::tempdir().unwrap();
    let store = prism_tools::SqliteEffectStore::open(dir.path().join("effects.sqlite3")).unwrap();
    Some(Opened {
        backend: Arc::new(store),
        _keep: Box::new(dir),
    })
}

#[cfg(feature = "sqlite")]
effect_store_contract!(sqlite_file, sqlite);

#[cfg(feature = "postgres")]
async fn postgres(test: &str) -> Option<Opened<Arc<prism_tools::PostgresEffectStore>>> {
    let url = support::postgres_url(test)?;
    let schema = support::unique_schema("effects");
    let options = prism_tools::PostgresOptions::new(&url)
        .unwrap()
        .schema(&schema)
        .unwrap();
    let store = prism_tools::PostgresEffectStore::connect(options)
        .await
        .unwrap();
    Some(Opened {
        backend: Arc::new(store),
        _keep: Box::new(support::SchemaGuard { url, schema }),
    })
}

#[cfg(feature = "postgres")]
effect_store_contract!(postgres_server, postgres);

/// A table whose column another program changed to another type reads as the store's error:
/// the driver's typed read would panic, and no panic may reach the host.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_a_column_of_another_type_is_an_error_not_a_panic() {
    use prism_tools::effects::{ClaimRequest, EffectKey, EffectPolicy, EffectStore};

    let Some(store) = postgres("postgres_a_column_of_another_type_is_an_error_not_a_panic").await
    else {
        return;
    };
    let key = EffectKey::new(
        "pay",
        &EffectPolicy::new(std::time::Duration::from_secs(60)),
        &serde_json::json!({}),
    );
    let request = ClaimRequest {
        key: &key,
        owner: "a",
        now: 0,
        lease: std::time::Duration::from_secs(60),
    };
    store.claim(request).await.unwrap();

    let guard = store._keep.downcast_ref::<support::SchemaGuard>().unwrap();
    let (client, connection) = tokio_postgres::connect(&guard.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!(
            "ALTER TABLE {}.prism_effects ALTER COLUMN claimed_at TYPE text",
            guard.schema
        ))
        .await
        .unwrap();

    let error = store.state(&key).await.unwrap_err();
    assert!(error.to_string().contains("PostgreSQL"), "{error}");
}
