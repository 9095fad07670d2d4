//! Ledger append throughput (rows/s) with one writer thread and with eight, effect claim +
//! complete latency, and approval request + decide + consume latency, for every backend.
//! PostgreSQL is measured when `PRISM_POSTGRES_URL` is set.
//!
//! ```sh
//! eval "$(bash .ci/postgres.sh start)"
//! cargo bench -p prism-tools --features sqlite,postgres --bench durable_stores
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use prism_tools::run::{
    ApprovalDecision, ApprovalKey, ApprovalStore, InMemoryApprovalStore, PendingApproval,
};
use prism_tools::{
    ClaimRequest, EffectKey, EffectPolicy, EffectStore, InMemoryEffectStore, InMemoryLedger,
    JsonlLedger, RecordStatus, RecordedOutcome, RunLedger, SqliteApprovalStore, SqliteEffectStore,
    SqliteLedger, ToolCallRecord, ToolOutcome,
};
use serde_json::json;
use tokio::runtime::Runtime;

/// Opens a ledger handle for one measured iteration.
type LedgerHandle = Box<dyn Fn() -> Arc<dyn RunLedger>>;

/// Rows appended (then flushed) per measured iteration.
const ROWS: usize = 8_000;

#[cfg(feature = "postgres")]
fn postgres_url() -> Option<String> {
    let url = std::env::var("PRISM_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty());
    if url.is_none() {
        eprintln!(
            "SKIPPED: PostgreSQL benchmarks (PRISM_POSTGRES_URL is not set; see .ci/postgres.sh)"
        );
    }
    url
}

#[cfg(feature = "postgres")]
fn postgres_options(url: &str) -> prism_tools::PostgresOptions {
    // One fixed schema, so repeated runs reuse it instead of piling up.
    prism_tools::PostgresOptions::new(url)
        .and_then(|options| options.schema("prism_bench"))
        .expect("valid PostgreSQL options")
}

/// A finished row as the dispatcher writes it: ids, arguments, a result, ownership.
fn row(writer: usize, n: usize) -> ToolCallRecord {
    let id = format!("w{writer}-{n}");
    let mut row = ToolCallRecord::new(id.as_str().into(), "search".into(), RecordStatus::Finished);
    row.session_id = Some("session-1".into());
    row.run_id = Some("run-1".into());
    row.finished_at = Some(1_700_000_000_000 + n as u64);
    row.arguments = Some(json!({"query": "weather in Paris", "limit": 5}));
    row.outcome = Some(ToolOutcome::Value(
        json!({"hits": [{"title": "Paris", "score": 0.93}]}),
    ));
    row
}

/// Appends `ROWS` rows from `writers` threads, then flushes; returns the time taken. The rows
/// are built before the clock starts, so only the ledger's own work is timed.
fn append_and_flush(ledger: &dyn RunLedger, writers: usize) -> Duration {
    let batches: Vec<Vec<ToolCallRecord>> = (0..writers)
        .map(|writer| (0..ROWS / writers).map(|n| row(writer, n)).collect())
        .collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for rows in batches {
            scope.spawn(move || {
                for row in rows {
                    ledger.append(&row);
                }
            });
        }
    });
    ledger.flush().expect("flush");
    started.elapsed()
}

fn ledger_append(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
    let mut ledgers: Vec<(&str, LedgerHandle)> = vec![
        ("memory", Box::new(|| Arc::new(InMemoryLedger::new()))),
        ("jsonl", {
            let ledger: Arc<dyn RunLedger> =
                Arc::new(JsonlLedger::open(dir.path().join("bench.jsonl")).expect("jsonl"));
            Box::new(move || ledger.clone())
        }),
        ("sqlite", {
            let ledger: Arc<dyn RunLedger> =
                Arc::new(SqliteLedger::open(dir.path().join("bench.sqlite3")).expect("sqlite"));
            Box::new(move || ledger.clone())
        }),
    ];
    #[cfg(feature = "postgres")]
    let runtime = Runtime::new().expect("runtime");
    #[cfg(feature = "postgres")]
    if let Some(url) = postgres_url() {
        let connect = prism_tools::PostgresLedger::connect(postgres_options(&url));
        let ledger: Arc<dyn RunLedger> = Arc::new(runtime.block_on(connect).expect("postgres"));
        ledgers.push(("postgres", Box::new(move || ledger.clone())));
    }

    let mut group = c.benchmark_group("ledger_append");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    for (name, ledger) in &ledgers {
        for writers in [1, 8] {
            let id = BenchmarkId::new(*name, format!("{writers}_writers"));
            group.bench_function(id, |b| {
                b.iter_custom(|iterations| {
                    (0..iterations)
                        .map(|_| append_and_flush(&*ledger(), writers))
                        .sum()
                })
            });
        }
    }
    group.finish();
}

fn current_thread_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A PostgreSQL store connected with `connect`, when a server is configured.
#[cfg(feature = "postgres")]
fn postgres_store<T, F>(
    runtime: &Runtime,
    connect: impl FnOnce(prism_tools::PostgresOptions) -> F,
) -> Option<T>
where
    F: Future<Output = Result<T, prism_tools::StorageError>>,
{
    let url = postgres_url()?;
    Some(
        runtime
            .block_on(connect(postgres_options(&url)))
            .expect("postgres"),
    )
}

/// Times `round_trip(store, n)` per iteration for each store; `n` never repeats in this process.
fn measure_latency<S: ?Sized>(
    c: &mut Criterion,
    group: &str,
    stores: &[(&str, Arc<S>)],
    round_trip: impl Fn(&S, u64),
) {
    let next = AtomicU64::new(0);
    let mut group = c.benchmark_group(group);
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    for (name, store) in stores {
        group.bench_function(*name, |b| {
            b.iter(|| round_trip(store, next.fetch_add(1, Ordering::Relaxed)))
        });
    }
    group.finish();
}

fn claim_complete(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = current_thread_runtime();
    #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
    let mut stores: Vec<(&str, Arc<dyn EffectStore>)> = vec![
        ("memory", Arc::new(InMemoryEffectStore::new())),
        (
            "sqlite",
            Arc::new(SqliteEffectStore::open(dir.path().join("effects.sqlite3")).expect("sqlite")),
        ),
    ];
    #[cfg(feature = "postgres")]
    if let Some(store) = postgres_store(&runtime, prism_tools::PostgresEffectStore::connect) {
        stores.push(("postgres", Arc::new(store)));
    }

    let policy = EffectPolicy::default();
    measure_latency(c, "effect_claim_complete", &stores, |store, n| {
        let key = EffectKey::new("pay", &policy, &json!({"invoice": n}));
        runtime.block_on(async {
            let request = ClaimRequest {
                key: &key,
                owner: "bench",
                now: 0,
                lease: Duration::from_secs(60),
            };
            store.claim(request).await.expect("claim");
            let outcome = RecordedOutcome::Value(json!({"paid": n}));
            store
                .complete(&key, "bench", outcome)
                .await
                .expect("complete");
        })
    });
}

/// One approval's whole life as a run and a reviewer drive it: the run records the request, the
/// reviewer decides, the resumed run consumes the decision. Three commits on the SQL stores.
fn approval_round_trip(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = current_thread_runtime();
    #[cfg_attr(not(feature = "postgres"), allow(unused_mut))]
    let mut stores: Vec<(&str, Arc<dyn ApprovalStore>)> = vec![
        ("memory", Arc::new(InMemoryApprovalStore::new())),
        (
            "sqlite",
            Arc::new(
                SqliteApprovalStore::open(dir.path().join("approvals.sqlite3")).expect("sqlite"),
            ),
        ),
    ];
    #[cfg(feature = "postgres")]
    if let Some(store) = postgres_store(&runtime, prism_tools::PostgresApprovalStore::connect) {
        stores.push(("postgres", Arc::new(store)));
    }

    // A session of its own per process: runs sharing the PostgreSQL schema never reuse a call.
    let session = format!(
        "bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos())
    );
    let arguments = json!({"path": "/srv/app/old-logs", "recursive": true});
    measure_latency(c, "approval_request_decide_consume", &stores, |store, n| {
        let key = ApprovalKey::new(
            session.as_str(),
            format!("call-{n}").into(),
            "delete_dir",
            &arguments,
        );
        let pending = PendingApproval {
            key: key.clone(),
            run_id: "run-1".into(),
            arguments: arguments.clone(),
            requested_at: 0,
        };
        runtime.block_on(async {
            store.request(&pending).await.expect("request");
            store
                .decide(&ApprovalDecision::approve(&key))
                .await
                .expect("decide");
            store.consume(&key).await.expect("consume");
        })
    });
}

criterion_group!(benches, ledger_append, claim_complete, approval_round_trip);
criterion_main!(benches);
