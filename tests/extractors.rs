//! Extractors through the dispatcher: they run when the call is prepared, so a rejection is a
//! blocked `extraction_failed` result with no `started` row; one may wait on a future; and a
//! tool takes several parts of one state.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use prism::call::{BlockReason, ErrorCode};
use prism::context::{Extraction, FromState, FromToolContext};
use prism::dispatch::{
    CollectingSink, InMemoryLedger, RecordStatus, SecretRedactor, ToolEventKind,
};
use prism::guard::before_execute_fn;
use prism::{
    Dispatcher, State, ToolCall, ToolExecutionContext, ToolRegistry, ToolResult, tool, tools,
};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The caller's API key, from the run's metadata; refuses (quoting the run's metadata, secret
/// and all) when there is none.
struct ApiKey(String);

impl<S: ?Sized> FromToolContext<S> for ApiKey {
    type Rejection = String;

    fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Extraction<Self, String> {
        match ctx.metadata().get("api_key") {
            Some(Value::String(key)) => Extraction::ok(Self(key.clone())),
            _ => Extraction::rejected(format!(
                "no api_key for this run (its token is {})",
                ctx.metadata()
                    .get("token")
                    .and_then(Value::as_str)
                    .unwrap_or("none")
            )),
        }
    }
}

/// What every test observes of one dispatcher.
struct Observed {
    dispatcher: Dispatcher,
    ledger: InMemoryLedger,
    events: CollectingSink,
    /// How many times the before-execute policy was asked.
    policy_calls: Arc<AtomicUsize>,
}

fn observed(registry: ToolRegistry) -> Observed {
    let ledger = InMemoryLedger::new();
    let events = CollectingSink::new();
    let policy_calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&policy_calls);
    let dispatcher = Dispatcher::builder(registry)
        .before_execute(before_execute_fn(move |_, _, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .events(events.clone())
        .ledger(ledger.clone())
        .redactor(SecretRedactor::new(["tok-secret-42"]))
        .build();
    Observed {
        dispatcher,
        ledger,
        events,
        policy_calls,
    }
}

impl Observed {
    async fn dispatch(&self, name: &str, ctx: &ToolExecutionContext) -> ToolResult {
        self.dispatcher
            .dispatch(ToolCall::new("c1", name, json!({})), ctx)
            .await
            .expect("no guardrail is configured")
    }

    fn statuses(&self) -> Vec<RecordStatus> {
        self.ledger.records().iter().map(|row| row.status).collect()
    }
}

/// Asserts that `result` is the refusal of an extractor, seen alike by the model, the events and
/// the ledger, and that nothing after the prepare step ran.
fn assert_refused_before_started(seen: &Observed, result: &ToolResult, message: &str) {
    assert_eq!(result.block_reason(), Some(BlockReason::ExtractionFailed));
    let error = result.error_info().unwrap();
    assert_eq!(error.code, ErrorCode::ExtractionFailed);
    assert_eq!(error.code.as_str(), "extraction_failed");
    assert_eq!(error.message, message);
    assert_eq!(
        serde_json::to_value(result).unwrap()["error"]["reason"],
        json!("extraction_failed")
    );

    let kinds: Vec<_> = seen.events.events().into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds.len(), 1, "one event: {kinds:?}");
    match &kinds[0] {
        ToolEventKind::ToolExecutionBlocked { reason, error } => {
            assert_eq!(*reason, BlockReason::ExtractionFailed);
            assert_eq!(error.message, message);
        }
        other => panic!("expected a blocked event, got {other:?}"),
    }

    let rows = seen.ledger.records();
    assert_eq!(seen.statuses(), [RecordStatus::Blocked], "no started row");
    assert_eq!(rows[0].reason, Some(BlockReason::ExtractionFailed));
    assert_eq!(
        seen.policy_calls.load(Ordering::SeqCst),
        0,
        "the before-execute policy comes after extraction"
    );
}

#[tokio::test]
async fn a_rejection_is_a_redacted_refusal_before_the_started_row() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);

    /// Calls the API with the caller's key.
    #[tool]
    fn call_api(#[ctx] key: ApiKey) -> usize {
        RUNS.fetch_add(1, Ordering::SeqCst);
        key.0.len()
    }

    let seen = observed(ToolRegistry::from_iter([call_api::definition()]));
    let ctx = ToolExecutionContext::new().with_metadata("token", json!("tok-secret-42"));
    let result = seen.dispatch("call_api", &ctx).await;

    assert_refused_before_started(
        &seen,
        &result,
        "no api_key for this run (its token is [REDACTED])",
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), 0, "the body never ran");

    // With the key, the same tool runs through every step.
    let seen = observed(ToolRegistry::from_iter([call_api::definition()]));
    let ctx = ToolExecutionContext::new().with_metadata("api_key", json!("abc"));
    let result = seen.dispatch("call_api", &ctx).await;
    assert_eq!(result.as_value(), Some(&json!(3)));
    assert_eq!(
        seen.statuses(),
        [RecordStatus::Started, RecordStatus::Finished]
    );
    assert_eq!(seen.policy_calls.load(Ordering::SeqCst), 1);
}

/// Where the extractor below waits: it tells `asked` that it is waiting, then waits for
/// `answer`.
#[derive(Default)]
struct Approver {
    asked: Mutex<Option<oneshot::Sender<()>>>,
    answer: Mutex<Option<oneshot::Receiver<Result<String, String>>>>,
}

/// The name of whoever approved the call, awaited on a channel another task answers.
struct ApprovedBy(String);

impl FromToolContext<Approver> for ApprovedBy {
    type Rejection = String;

    fn from_context(
        _ctx: &ToolExecutionContext,
        state: &Arc<Approver>,
    ) -> Extraction<Self, String> {
        let asked = state.asked.lock().unwrap().take();
        let answer = state.answer.lock().unwrap().take();
        Extraction::pending(async move {
            let answer = answer.ok_or("the approver was already asked")?;
            if let Some(asked) = asked {
                let _ = asked.send(());
            }
            let name = answer.await.map_err(|_| "the approver went away")??;
            Ok(ApprovedBy(name))
        })
    }
}

/// Deploys, once someone approved.
#[tool]
async fn deploy(approver: State<Approver>, #[ctx] by: ApprovedBy) -> String {
    let _ = approver;
    format!("deployed, approved by {}", by.0)
}

/// A dispatcher over `deploy`, the channel its extractor waits on, and the signal that it waits.
fn deploy_fixture() -> (
    Arc<Observed>,
    oneshot::Sender<Result<String, String>>,
    oneshot::Receiver<()>,
) {
    let (asked_tx, asked_rx) = oneshot::channel();
    let (answer_tx, answer_rx) = oneshot::channel();
    let approver = Approver {
        asked: Mutex::new(Some(asked_tx)),
        answer: Mutex::new(Some(answer_rx)),
    };
    let seen = observed(ToolRegistry::from_iter([deploy::definition(approver)]));
    (Arc::new(seen), answer_tx, asked_rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extractor_awaits_a_channel_another_task_answers() {
    let (seen, answer, asked) = deploy_fixture();
    let dispatching = tokio::spawn({
        let seen = Arc::clone(&seen);
        async move { seen.dispatch("deploy", &ToolExecutionContext::new()).await }
    });

    asked.await.expect("the extractor is waiting");
    // The call waits in its prepare step: nothing after it has happened yet.
    assert!(seen.ledger.records().is_empty(), "no started row yet");
    assert!(seen.events.events().is_empty());
    assert_eq!(seen.policy_calls.load(Ordering::SeqCst), 0);

    let answering = tokio::spawn(async move { answer.send(Ok("ada".to_owned())) });
    answering.await.unwrap().unwrap();
    let result = dispatching.await.unwrap();

    assert_eq!(result.as_value(), Some(&json!("deployed, approved by ada")));
    assert_eq!(
        seen.statuses(),
        [RecordStatus::Started, RecordStatus::Finished]
    );
    assert_eq!(seen.policy_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_pending_rejection_is_refused_like_a_ready_one() {
    let (seen, answer, asked) = deploy_fixture();
    let answering = tokio::spawn(async move {
        asked.await.expect("the extractor is waiting");
        answer.send(Err("refused by ada".to_owned())).unwrap();
    });
    let result = seen.dispatch("deploy", &ToolExecutionContext::new()).await;
    answering.await.unwrap();
    assert_refused_before_started(&seen, &result, "refused by ada");
}

/// Panics while it waits.
struct Exploding;

impl<S: ?Sized> FromToolContext<S> for Exploding {
    type Rejection = std::convert::Infallible;

    fn from_context(
        _ctx: &ToolExecutionContext,
        _state: &Arc<S>,
    ) -> Extraction<Self, Self::Rejection> {
        Extraction::pending(async {
            tokio::task::yield_now().await;
            panic!("the extractor broke")
        })
    }
}

#[tokio::test]
async fn a_panic_in_a_pending_extractor_is_caught_before_the_started_row() {
    /// Never runs.
    #[tool]
    fn fragile(#[ctx] exploding: Exploding) {
        let _ = exploding;
    }

    let seen = observed(ToolRegistry::from_iter([fragile::definition()]));
    let result = seen.dispatch("fragile", &ToolExecutionContext::new()).await;
    let error = result.error_info().unwrap();
    assert_eq!(error.code, ErrorCode::ToolPanicked);
    assert!(
        error.message.contains("the extractor broke"),
        "{}",
        error.message
    );
    assert_eq!(seen.statuses(), [RecordStatus::Error], "no started row");
    assert_eq!(seen.policy_calls.load(Ordering::SeqCst), 0);
}

/// A host state whose parts tools take one by one.
struct AppState {
    db: Arc<Db>,
    config: Arc<Config>,
}

struct Db {
    rows: Vec<&'static str>,
}

struct Config {
    prefix: &'static str,
}

impl FromState<AppState> for Db {
    fn from_state(state: &Arc<AppState>) -> Arc<Db> {
        Arc::clone(&state.db)
    }
}

impl FromState<AppState> for Config {
    fn from_state(state: &Arc<AppState>) -> Arc<Config> {
        Arc::clone(&state.config)
    }
}

/// Lists the rows, prefixed, for the caller.
#[tool(state = AppState)]
fn list_rows(db: State<Db>, config: State<Config>, #[ctx] key: ApiKey) -> Vec<String> {
    db.rows
        .iter()
        .map(|row| format!("{}{row} for {}", config.prefix, key.0))
        .collect()
}

/// Counts the rows; takes the whole state too.
#[tool(state = AppState)]
fn count_rows(db: State<Db>, all: State<AppState>) -> (usize, bool) {
    (db.rows.len(), Arc::ptr_eq(&all.db, &db.0))
}

#[tokio::test]
async fn a_tool_takes_several_parts_of_one_state() {
    let state = Arc::new(AppState {
        db: Arc::new(Db {
            rows: vec!["a", "b"],
        }),
        config: Arc::new(Config { prefix: "row " }),
    });
    let seen = observed(ToolRegistry::from_iter([
        list_rows::definition(Arc::clone(&state)),
        count_rows::definition(Arc::clone(&state)),
    ]));
    let ctx = ToolExecutionContext::new().with_metadata("api_key", json!("k1"));
    let listed = seen.dispatch("list_rows", &ctx).await;
    assert_eq!(
        listed.as_value(),
        Some(&json!(["row a for k1", "row b for k1"]))
    );
    let counted = seen.dispatch("count_rows", &ctx).await;
    assert_eq!(
        counted.as_value(),
        Some(&json!([2, true])),
        "a part is the state's own Arc"
    );
}

/// A service whose tools take a part of it.
struct Service {
    config: Arc<Config>,
    name: &'static str,
}

impl FromState<Service> for Config {
    fn from_state(state: &Arc<Service>) -> Arc<Config> {
        Arc::clone(&state.config)
    }
}

#[tools]
impl Service {
    /// Names the service, with the configured prefix.
    #[tool]
    fn describe(&self, config: State<Config>) -> String {
        format!("{}{}", config.prefix, self.name)
    }
}

#[tokio::test]
async fn a_tools_method_takes_a_part_of_self() {
    let service = Arc::new(Service {
        config: Arc::new(Config { prefix: "svc:" }),
        name: "search",
    });
    let seen = observed(ToolRegistry::from_iter(service.tools()));
    let described = seen
        .dispatch("describe", &ToolExecutionContext::new())
        .await;
    assert_eq!(described.as_value(), Some(&json!("svc:search")));
}
