//! Every approval store passes the same contract: in memory, SQLite and PostgreSQL.

mod support;

use std::sync::Arc;

use support::Opened;

/// Two handles on one store's storage: the same store twice in memory, two connections for the
/// SQL stores.
pub struct Handles<S> {
    one: S,
    two: S,
}

/// One test per contract case for a backend opened by `$open` (an async fn returning
/// `Option<Opened<Handles<_>>>`; `None` skips).
macro_rules! approval_store_contract {
    ($backend:ident, $open:ident) => {
        mod $backend {
            approval_store_contract!(@one $open;
                request_records_a_pending_approval,
                requesting_the_same_key_again_changes_nothing,
                the_same_call_under_another_key_is_a_mismatch,
                unknown_calls_are_not_found,
                a_decision_is_recorded_once_and_consumed_once,
                verdicts_round_trip_exactly,
                arguments_and_details_round_trip_exactly,
                pending_lists_a_sessions_waiting_calls_in_request_order,
                the_same_call_id_in_two_sessions_is_two_approvals,
                a_later_run_reusing_a_call_id_asks_again_once_the_earlier_approval_is_decided,
                a_call_id_with_a_nul_is_asked_about_like_any_other,
            );
            approval_store_contract!(@two $open;
                shared_handles_see_each_others_changes,
                shared_racing_decisions_have_one_winner,
                shared_racing_consumers_have_one_winner,
                shared_racing_requests_keep_one_key,
            );
        }
    };
    (@one $open:ident; $($case:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $case() {
            if let Some(stores) = super::$open(stringify!($case)).await {
                crate::support::approval_contract::$case(&stores.one).await;
            }
        }
    )*};
    (@two $open:ident; $($case:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $case() {
            if let Some(stores) = super::$open(stringify!($case)).await {
                crate::support::approval_contract::$case(&stores.one, &stores.two).await;
            }
        }
    )*};
}

async fn memory(
    _test: &str,
) -> Option<Opened<Handles<Arc<prism_tools::run::InMemoryApprovalStore>>>> {
    let store = Arc::new(prism_tools::run::InMemoryApprovalStore::new());
    Some(Opened {
        backend: Handles {
            one: Arc::clone(&store),
            two: store,
        },
        _keep: Box::new(()),
    })
}

approval_store_contract!(in_memory, memory);

#[cfg(feature = "sqlite")]
async fn sqlite(_test: &str) -> Option<Opened<Handles<prism_tools::SqliteApprovalStore>>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite3");
    let open = || prism_tools::SqliteApprovalStore::open(&path).unwrap();
    Some(Opened {
        backend: Handles {
            one: open(),
            two: open(),
        },
        _keep: Box::new(dir),
    })
}

#[cfg(feature = "sqlite")]
approval_store_contract!(sqlite_file, sqlite);

#[cfg(feature = "postgres")]
async fn postgres(test: &str) -> Option<Opened<Handles<prism_tools::PostgresApprovalStore>>> {
    let url = support::postgres_url(test)?;
    let schema = support::unique_schema("approvals");
    let options = prism_tools::PostgresOptions::new(&url)
        .unwrap()
        .schema(&schema)
        .unwrap();
    let connect = || prism_tools::PostgresApprovalStore::connect(options.clone());
    let (one, two) = (connect().await.unwrap(), connect().await.unwrap());
    Some(Opened {
        backend: Handles { one, two },
        _keep: Box::new(support::SchemaGuard { url, schema }),
    })
}

#[cfg(feature = "postgres")]
approval_store_contract!(postgres_server, postgres);
