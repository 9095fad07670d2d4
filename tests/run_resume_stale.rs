//! Resuming a stale session state (one resumed before, or restored beside an approval store
//! that does not hold its requests) is refused with a message that says what is stale and what
//! the host can do, and runs nothing.

mod run_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prism::run::{
    ApprovalDecision, ApprovalStore, InMemoryApprovalStore, RunEnd, ScriptedProvider, SessionState,
};
use prism::{Agent, ProviderResponse, RunOptions, ToolCall, ToolRegistry};
use run_support::{wipe, wipe_asking_agent};
use serde_json::json;

fn script() -> ScriptedProvider {
    ScriptedProvider::new([
        ProviderResponse::calls([
            ToolCall::new("c1", "wipe", json!({"path": "/srv/secret-dir"})),
            ToolCall::new("c2", "read", json!({})),
        ]),
        ProviderResponse::text("done"),
    ])
}

struct Suspended {
    registry: ToolRegistry,
    store: InMemoryApprovalStore,
    wipes: Arc<AtomicUsize>,
    provider: ScriptedProvider,
    stored: String,
    key: prism::run::ApprovalKey,
}

async fn suspended() -> Suspended {
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&wipes), run_support::named("read")]);
    let store = InMemoryApprovalStore::new();
    let provider = script();
    let mut session = wipe_asking_agent(&registry, &store, &provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    let stored = serde_json::to_string(&session.state()).unwrap();
    Suspended {
        registry,
        store,
        wipes,
        provider,
        stored,
        key,
    }
}

fn restore(agent: &Agent, stored: &str) -> prism::Session {
    let state: SessionState = serde_json::from_str(stored).unwrap();
    agent.restore(state)
}

#[tokio::test]
async fn a_stored_state_resumed_a_second_time_says_it_was_resumed_before() {
    let s = suspended().await;
    let mut first = restore(
        &wipe_asking_agent(&s.registry, &s.store, &s.provider),
        &s.stored,
    );
    let outcome = first
        .resume([ApprovalDecision::approve(&s.key)])
        .await
        .unwrap();
    assert_eq!(outcome.end, RunEnd::Completed);
    assert_eq!(s.wipes.load(Ordering::SeqCst), 1);

    // The same stored copy, resumed again: with the decision, and without any.
    for decisions in [vec![ApprovalDecision::approve(&s.key)], vec![]] {
        let mut again = restore(
            &wipe_asking_agent(&s.registry, &s.store, &s.provider),
            &s.stored,
        );
        let rows = again.transcript().len();
        let error = again.resume(decisions).await.unwrap_err().to_string();
        assert!(error.contains("was resumed before"), "{error}");
        assert!(
            error.contains("restore the state saved after that resume"),
            "{error}"
        );
        assert!(
            !error.contains("secret-dir"),
            "no argument in the message: {error}"
        );
        assert_eq!(again.transcript().len(), rows, "nothing was appended");
        assert!(again.suspended().is_some());
    }
    assert_eq!(s.wipes.load(Ordering::SeqCst), 1, "nothing ran twice");
}

#[tokio::test]
async fn a_state_restored_beside_a_store_without_its_request_says_which_store_to_use() {
    let s = suspended().await;
    // Another (empty) approval store: say, an in-memory one after a restart.
    let other = InMemoryApprovalStore::new();
    let mut restored = restore(
        &wipe_asking_agent(&s.registry, &other, &s.provider),
        &s.stored,
    );
    let error = restored
        .resume([ApprovalDecision::approve(&s.key)])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("has no record of call c1"), "{error}");
    assert!(
        error.contains("the store the run suspended with"),
        "{error}"
    );
    assert!(
        !error.contains("secret-dir"),
        "no argument in the message: {error}"
    );
    assert!(restored.suspended().is_some());
    assert_eq!(s.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_state_overtaken_by_a_later_run_says_to_restore_the_latest_state() {
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&wipes), run_support::named("read")]);
    let store = InMemoryApprovalStore::new();
    let wipe_c1 = || ToolCall::new("c1", "wipe", json!({"path": "/srv/secret-dir"}));
    // A provider that numbers calls the same way in every run reuses the id `c1`.
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_c1()]),
        ProviderResponse::text("done"),
        ProviderResponse::calls([wipe_c1()]),
    ]);
    let mut session = wipe_asking_agent(&registry, &store, &provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    let stale = serde_json::to_string(&session.state()).unwrap();
    session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    let later = session.run("again", RunOptions::new()).await.unwrap();
    assert_eq!(
        later.pending_approvals()[0].key,
        key,
        "same call id, same arguments"
    );

    let mut restored = restore(&wipe_asking_agent(&registry, &store, &provider), &stale);
    let error = restored
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("for another run"), "{error}");
    assert!(
        error.contains("restore the session's latest state"),
        "{error}"
    );
    assert_eq!(
        wipes.load(Ordering::SeqCst),
        1,
        "the later run's call was not decided here"
    );
    assert_eq!(
        store.pending("s1").await.unwrap().len(),
        1,
        "the later run's call still waits"
    );
}

/// A call id as long as a provider may send (nothing bounds it on the way in).
fn long_id() -> String {
    "c".repeat(100_000)
}

/// The bound a message quoting [`long_id`] must stay within: its own words and a cut id.
const MESSAGE_BOUND: usize = 2_000;

#[tokio::test]
async fn a_stale_state_quotes_a_long_call_id_cut() {
    let id = long_id();
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&wipes)]);
    let store = InMemoryApprovalStore::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new(id.as_str(), "wipe", json!({"path": "/tmp"}))]),
        ProviderResponse::text("done"),
    ]);
    let mut session = wipe_asking_agent(&registry, &store, &provider).session("s1");
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    let stored = serde_json::to_string(&session.state()).unwrap();

    // Beside a store without the request: the call is named, cut.
    let other = InMemoryApprovalStore::new();
    let mut lost = restore(&wipe_asking_agent(&registry, &other, &provider), &stored);
    let error = lost
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap_err()
        .to_string();
    assert!(error.len() < MESSAGE_BOUND, "{} bytes", error.len());
    assert!(error.contains("has no record of call ccc"), "{error}");
    assert!(
        error.contains("… [cut]"),
        "the id is marked as cut: {error}"
    );

    // Resumed twice: the second says so, with the id cut.
    let mut first = restore(&wipe_asking_agent(&registry, &store, &provider), &stored);
    first
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    let mut again = restore(&wipe_asking_agent(&registry, &store, &provider), &stored);
    let error = again.resume([]).await.unwrap_err().to_string();
    assert!(error.len() < MESSAGE_BOUND, "{} bytes", error.len());
    assert!(error.contains("was resumed before"), "{error}");
    assert_eq!(wipes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_stale_state_quotes_a_long_run_id_cut() {
    // A run's id is made from its session's, which the host chooses.
    let session_id = "s".repeat(100_000);
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&wipes)]);
    let store = InMemoryApprovalStore::new();
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([ToolCall::new("c1", "wipe", json!({"path": "/tmp"}))]),
        ProviderResponse::text("done"),
    ]);
    let agent = wipe_asking_agent(&registry, &store, &provider);
    let mut session = agent.session(session_id.as_str());
    let outcome = session.run("clean up", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    let stored = serde_json::to_string(&session.state()).unwrap();
    session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();

    let mut again = restore(&agent, &stored);
    let error = again.resume([]).await.unwrap_err().to_string();
    assert!(error.len() < MESSAGE_BOUND, "{} bytes", error.len());
    assert!(error.contains("(run sss"), "{error}");
    assert!(error.contains("… [cut]"), "the run id is marked as cut");
}

#[tokio::test]
async fn a_repeated_long_call_id_is_refused_with_the_id_cut() {
    let id = long_id();
    let wipes = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::from_iter([wipe(&wipes)]);
    let store = InMemoryApprovalStore::new();
    let wipe_call = || ToolCall::new(id.as_str(), "wipe", json!({"path": "/data"}));
    let provider = ScriptedProvider::new([
        ProviderResponse::calls([wipe_call(), wipe_call()]),
        ProviderResponse::text("done"),
    ]);
    let mut session = wipe_asking_agent(&registry, &store, &provider).session("s1");
    let outcome = session.run("go", RunOptions::new()).await.unwrap();
    let key = outcome.pending_approvals()[0].key.clone();
    session
        .resume([ApprovalDecision::approve(&key)])
        .await
        .unwrap();
    assert_eq!(wipes.load(Ordering::SeqCst), 1, "one approval, one run");
    let rows = run_support::tool_rows(session.transcript());
    let refusal = rows
        .iter()
        .find_map(|row| row.error_info())
        .expect("the repeated call is refused");
    assert!(
        refusal.message.len() < MESSAGE_BOUND,
        "{} bytes",
        refusal.message.len()
    );
    assert!(
        refusal.message.contains("used by an earlier call"),
        "{}",
        refusal.message
    );
}

/// An approval store that lets every `get` through only once two have arrived: two workers
/// resuming one stored state both read their approval as decided before either acts on it.
struct BothRead {
    inner: InMemoryApprovalStore,
    barrier: tokio::sync::Barrier,
}

impl ApprovalStore for BothRead {
    fn request<'a>(
        &'a self,
        pending: &'a prism::run::PendingApproval,
    ) -> futures_util::future::BoxFuture<'a, Result<(), prism::run::ApprovalStoreError>> {
        self.inner.request(pending)
    }

    fn decide<'a>(
        &'a self,
        decision: &'a ApprovalDecision,
    ) -> futures_util::future::BoxFuture<'a, Result<(), prism::run::ApprovalStoreError>> {
        self.inner.decide(decision)
    }

    fn get<'a>(
        &'a self,
        key: &'a prism::run::ApprovalKey,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<prism::run::ApprovalRecord>, prism::run::ApprovalStoreError>,
    > {
        Box::pin(async move {
            let record = self.inner.get(key).await;
            self.barrier.wait().await;
            record
        })
    }

    fn pending<'a>(
        &'a self,
        session_id: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Vec<prism::run::PendingApproval>, prism::run::ApprovalStoreError>,
    > {
        self.inner.pending(session_id)
    }

    fn consume<'a>(
        &'a self,
        key: &'a prism::run::ApprovalKey,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<prism::run::ApprovalVerdict, prism::run::ApprovalStoreError>,
    > {
        self.inner.consume(key)
    }
}

#[tokio::test]
async fn of_two_workers_resuming_one_state_at_once_one_goes_on_and_nothing_runs_twice() {
    let s = suspended().await;
    // A review UI decided; then two workers restore the same saved state and resume it.
    s.store
        .decide(&ApprovalDecision::approve(&s.key))
        .await
        .unwrap();
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reads);
    let read = prism::ToolDefinition::builder("read")
        .description("Reads.")
        .parameters(json!({"type": "object"}))
        .run_sync(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(json!("read"))
        });
    let registry = ToolRegistry::from_iter([wipe(&s.wipes), read]);
    let store = Arc::new(BothRead {
        inner: s.store.clone(),
        barrier: tokio::sync::Barrier::new(2),
    });
    let agent = || {
        Agent::new(
            prism::Dispatcher::builder(registry.clone()).build(),
            s.provider.clone(),
        )
        .with_approvals(Arc::clone(&store))
        .with_approval_policy(prism::run::approval_fn(|tool, _| tool.name() == "wipe"))
    };
    let mut first = restore(&agent(), &s.stored);
    let mut second = restore(&agent(), &s.stored);
    let (a, b) = tokio::join!(first.resume([]), second.resume([]));

    let stale: Vec<String> = [&a, &b]
        .into_iter()
        .filter_map(|outcome| outcome.as_ref().err())
        .map(ToString::to_string)
        .collect();
    assert_eq!(stale.len(), 1, "exactly one worker goes on: {a:?} {b:?}");
    assert!(stale[0].contains("was resumed before"), "{}", stale[0]);
    let loser = if a.is_err() { &first } else { &second };
    assert!(
        loser.suspended().is_some(),
        "the stopped worker's state is as it was"
    );
    assert_eq!(
        s.wipes.load(Ordering::SeqCst),
        1,
        "the approved call ran once"
    );
    assert_eq!(
        reads.load(Ordering::SeqCst),
        1,
        "the call held behind it ran once"
    );
}
