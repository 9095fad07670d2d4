//! Macro tools through the whole dispatch pipeline: decoding before any side effect, context and
//! state injection, errors, panics, cancellation, effects, and the three forms of the macro.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prism::call::{BlockReason, ErrorCode, ErrorInfo};
use prism::context::{Extraction, FromToolContext};
use prism::dispatch::{
    CollectingSink, InMemoryLedger, RecordStatus, SecretRedactor, ToolEventKind,
};
use prism::effects::InMemoryEffectStore;
use prism::guard::{before_execute_fn, validator_fn};
use prism::{
    Dispatcher, State, Tool, ToolCall, ToolError, ToolExecutionContext, ToolRegistry, ToolResult,
    tool, tools,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Counts how many times tool bodies ran; shared with the tools as their state.
#[derive(Default)]
struct Shop {
    runs: AtomicUsize,
}

#[derive(Deserialize, JsonSchema)]
struct Line {
    sku: String,
    quantity: u8,
}

#[derive(Serialize)]
struct Receipt {
    skus: Vec<String>,
    units: usize,
    run: Option<String>,
    call: Option<String>,
}

/// Places an order.
#[tool]
async fn place_order(
    customer: String,
    lines: Vec<Line>,
    note: Option<String>,
    shop: State<Shop>,
    ctx: ToolExecutionContext,
) -> Result<Receipt, String> {
    shop.runs.fetch_add(1, Ordering::SeqCst);
    if customer.is_empty() {
        return Err(format!(
            "no customer given; key sk-test-123 was used ({note:?})"
        ));
    }
    ctx.progress(json!({"lines": lines.len()}));
    Ok(Receipt {
        units: lines.iter().map(|line| usize::from(line.quantity)).sum(),
        skus: lines.into_iter().map(|line| line.sku).collect(),
        run: ctx.run_id().map(str::to_owned),
        call: ctx.tool_call_id().map(|id| id.to_string()),
    })
}

fn shop_dispatcher(shop: &Arc<Shop>) -> (Dispatcher, InMemoryLedger, CollectingSink) {
    let ledger = InMemoryLedger::new();
    let events = CollectingSink::new();
    let registry = ToolRegistry::from_iter([place_order::definition(Arc::clone(shop))]);
    let dispatcher = Dispatcher::builder(registry)
        .events(events.clone())
        .ledger(ledger.clone())
        .redactor(SecretRedactor::new(["sk-test-123"]))
        .build();
    (dispatcher, ledger, events)
}

async fn call(dispatcher: &Dispatcher, name: &str, arguments: Value) -> ToolResult {
    let ctx = ToolExecutionContext::new().with_run_id("run-1");
    dispatcher
        .dispatch(ToolCall::new("call-1", name, arguments), &ctx)
        .await
        .expect("no guardrail is configured")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_call_reaches_the_body_with_its_context_and_state() {
    let shop = Arc::new(Shop::default());
    let (dispatcher, ledger, events) = shop_dispatcher(&shop);
    let result = runtime().block_on(call(
        &dispatcher,
        "place_order",
        json!({"customer": "ada", "lines": [{"sku": "a", "quantity": 2}, {"sku": "b", "quantity": 3}]}),
    ));
    assert_eq!(
        result.as_value(),
        Some(&json!({"skus": ["a", "b"], "units": 5, "run": "run-1", "call": "call-1"}))
    );
    assert_eq!(shop.runs.load(Ordering::SeqCst), 1);
    let progress: Vec<_> = events
        .events()
        .into_iter()
        .filter_map(|event| match event.kind {
            ToolEventKind::ToolExecutionProgress { progress, .. } => Some(progress),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [json!({"lines": 2})]);
    let statuses: Vec<_> = ledger.records().iter().map(|row| row.status).collect();
    assert_eq!(statuses.first(), Some(&RecordStatus::Started));
    assert_eq!(statuses.last(), Some(&RecordStatus::Finished));
}

#[test]
fn a_bad_argument_is_blocked_with_its_path_and_the_body_never_runs() {
    let shop = Arc::new(Shop::default());
    let (dispatcher, ledger, _) = shop_dispatcher(&shop);
    let runtime = runtime();
    let cases = [
        (
            json!({"customer": "ada", "lines": [{"sku": "a", "quantity": 2}, {"sku": "b", "quantity": 300}]}),
            "`lines[1].quantity`",
        ),
        (
            json!({"customer": "ada", "lines": [], "coupon": "x"}),
            "coupon",
        ),
        (json!({"lines": []}), "customer"),
        (json!({"customer": 7, "lines": []}), "`customer`"),
    ];
    for (arguments, mentioned) in cases {
        let result = runtime.block_on(call(&dispatcher, "place_order", arguments));
        assert_eq!(result.block_reason(), Some(BlockReason::InvalidArguments));
        let message = &result.error_info().unwrap().message;
        assert!(
            message.contains(mentioned),
            "{message} should mention {mentioned}"
        );
        assert!(
            message.starts_with("Invalid arguments for tool `place_order`"),
            "{message}"
        );
    }
    assert_eq!(shop.runs.load(Ordering::SeqCst), 0, "no body ran");
    assert!(
        ledger
            .records()
            .iter()
            .all(|row| row.status == RecordStatus::Blocked)
    );
}

#[test]
fn an_error_is_the_call_s_error_with_secrets_redacted() {
    let shop = Arc::new(Shop::default());
    let (dispatcher, _, _) = shop_dispatcher(&shop);
    let result = runtime().block_on(call(
        &dispatcher,
        "place_order",
        json!({"customer": "", "lines": [], "note": "hi"}),
    ));
    let error = result.error_info().unwrap();
    assert_eq!(error.code, ErrorCode::ToolError);
    assert!(!error.message.contains("sk-test-123"), "{}", error.message);
    assert!(
        error.message.starts_with("no customer given"),
        "{}",
        error.message
    );
}

#[test]
fn validators_run_before_decoding_and_before_execute_after_it() {
    /// Adds two integers.
    #[tool]
    fn add(a: i64, b: i64, counter: State<AtomicUsize>) -> i64 {
        counter.fetch_add(1, Ordering::SeqCst);
        a + b
    }

    let runs = Arc::new(AtomicUsize::new(0));
    let before_execute_seen = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&before_execute_seen);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([add::definition(Arc::clone(
        &runs,
    ))]))
    .validate(validator_fn(|_tool, args: &Value| {
        if args.get("a") == Some(&json!(13)) {
            Err("thirteen is refused".into())
        } else {
            Ok(())
        }
    }))
    .before_execute(before_execute_fn(move |_tool, _args, _ctx| {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }))
    .build();
    let runtime = runtime();

    let refused = runtime.block_on(call(
        &dispatcher,
        "add",
        json!({"a": 13, "b": "not a number"}),
    ));
    assert_eq!(refused.block_reason(), Some(BlockReason::ValidationFailed));

    let undecodable = runtime.block_on(call(&dispatcher, "add", json!({"a": 1, "b": "two"})));
    assert_eq!(
        undecodable.block_reason(),
        Some(BlockReason::InvalidArguments)
    );
    assert_eq!(
        before_execute_seen.load(Ordering::SeqCst),
        0,
        "decoding comes first"
    );

    let sum = runtime.block_on(call(&dispatcher, "add", json!({"a": 1, "b": 2})));
    assert_eq!(sum.as_value(), Some(&json!(3)));
    assert_eq!(before_execute_seen.load(Ordering::SeqCst), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panicking_tool_is_reported_not_propagated() {
    /// Always panics.
    #[tool]
    fn explode(reason: String) -> u8 {
        panic!("{reason}")
    }

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([explode::definition()])).build();
    let result = runtime().block_on(call(&dispatcher, "explode", json!({"reason": "boom"})));
    assert_eq!(result.error_info().unwrap().code, ErrorCode::ToolPanicked);
}

#[test]
fn a_tool_waiting_on_cancellation_ends_cancelled() {
    /// Waits until the run is cancelled.
    #[tool]
    async fn wait(ctx: ToolExecutionContext) -> Result<(), ToolError> {
        ctx.cancellation().cancelled().await;
        Err(ToolError::cancelled())
    }

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([wait::definition()])).build();
    let ctx = ToolExecutionContext::new();
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let runtime = runtime();
    let result = runtime.block_on(async {
        let cancel = ctx.cancellation().clone();
        let canceller = async move {
            started_rx.await.unwrap();
            cancel.cancel();
        };
        let dispatch = async {
            // The tool is polled at least once before the token fires.
            let pending = dispatcher.dispatch(ToolCall::new("c", "wait", json!({})), &ctx);
            started_tx.send(()).unwrap();
            pending.await
        };
        tokio::join!(dispatch, canceller).0
    });
    assert_eq!(
        result.unwrap().error_info().unwrap().code,
        ErrorCode::Cancelled
    );
}

#[test]
fn an_effect_tool_runs_at_most_once_per_arguments() {
    /// Sends an email, at most once per recipient and body.
    #[tool(effect, open_world)]
    async fn send_email(to: String, body: String, outbox: State<AtomicUsize>) -> String {
        outbox.fetch_add(1, Ordering::SeqCst);
        format!("sent {} bytes to {to}", body.len())
    }

    let outbox = Arc::new(AtomicUsize::new(0));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([send_email::definition(
        Arc::clone(&outbox),
    )]))
    .effects(InMemoryEffectStore::new())
    .build();
    let runtime = runtime();
    let arguments = json!({"to": "ada@example.com", "body": "hello"});
    let first = runtime.block_on(call(&dispatcher, "send_email", arguments.clone()));
    let again = runtime.block_on(call(&dispatcher, "send_email", arguments));
    assert_eq!(
        first.as_value(),
        Some(&json!("sent 5 bytes to ada@example.com"))
    );
    assert_eq!(
        again.as_value(),
        first.as_value(),
        "the recorded outcome is returned again"
    );
    assert_eq!(outbox.load(Ordering::SeqCst), 1);
}

/// The user the run acts for, from the run's metadata.
struct UserId(String);

impl<S: ?Sized> FromToolContext<S> for UserId {
    type Rejection = ErrorInfo;

    fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Extraction<Self, ErrorInfo> {
        match ctx.metadata().get("user") {
            Some(Value::String(user)) => Extraction::ok(Self(user.clone())),
            _ => Extraction::rejected(ErrorInfo::new(
                ErrorCode::parse("unauthenticated"),
                "the run has no user",
            )),
        }
    }
}

#[test]
fn an_extractor_feeds_the_body_or_refuses_the_call_before_it() {
    /// Greets the run's user.
    #[tool]
    fn greet(greeting: String, #[ctx] user: UserId, calls: State<AtomicUsize>) -> String {
        calls.fetch_add(1, Ordering::SeqCst);
        format!("{greeting}, {}", user.0)
    }

    let calls = Arc::new(AtomicUsize::new(0));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([greet::definition(Arc::clone(
        &calls,
    ))]))
    .build();
    let runtime = runtime();
    let with_user = ToolExecutionContext::new().with_metadata("user", json!("ada"));
    let greeted = runtime
        .block_on(dispatcher.dispatch(
            ToolCall::new("c1", "greet", json!({"greeting": "Hi"})),
            &with_user,
        ))
        .unwrap();
    assert_eq!(greeted.as_value(), Some(&json!("Hi, ada")));
    let refused = runtime.block_on(call(&dispatcher, "greet", json!({"greeting": "Hi"})));
    let error = refused.error_info().unwrap();
    assert_eq!(error.code.as_str(), "unauthenticated");
    assert_eq!(error.reason, Some(BlockReason::ExtractionFailed));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// Where the state an extractor was handed lives, to tell stateless tools' state apart.
struct StateAt(usize);

impl FromToolContext<()> for StateAt {
    type Rejection = std::convert::Infallible;

    fn from_context(
        _ctx: &ToolExecutionContext,
        state: &Arc<()>,
    ) -> Extraction<Self, Self::Rejection> {
        Ok(Self(Arc::as_ptr(state) as usize)).into()
    }
}

#[test]
fn a_tool_without_state_still_feeds_its_extractors() {
    /// Greets the run's user.
    #[tool]
    fn hello(#[ctx] user: UserId, #[ctx] at: StateAt) -> (String, usize) {
        (format!("Hello, {}", user.0), at.0)
    }

    /// Says where its state is.
    #[tool]
    fn locate(#[ctx] at: StateAt) -> usize {
        at.0
    }

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([
        hello::definition(),
        locate::definition(),
    ]))
    .build();
    let runtime = runtime();
    let with_user = ToolExecutionContext::new().with_metadata("user", json!("ada"));
    let hello = runtime
        .block_on(dispatcher.dispatch(ToolCall::new("c1", "hello", json!({})), &with_user))
        .unwrap();
    let locate = runtime.block_on(call(&dispatcher, "locate", json!({})));
    let (greeting, hello_state) = (&hello.as_value().unwrap()[0], &hello.as_value().unwrap()[1]);
    assert_eq!(greeting, &json!("Hello, ada"));
    assert_eq!(
        Some(hello_state),
        locate.as_value(),
        "tools without state share one `Arc<()>`"
    );
    let refused = runtime.block_on(call(&dispatcher, "hello", json!({})));
    assert_eq!(
        refused.error_info().unwrap().code.as_str(),
        "unauthenticated"
    );
}

struct Library {
    titles: Vec<String>,
    lookups: AtomicUsize,
}

#[tools]
impl Library {
    /// Finds titles containing a word.
    #[tool(read_only)]
    async fn find(&self, word: String, ctx: ToolExecutionContext) -> Vec<String> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let _ = ctx;
        self.titles
            .iter()
            .filter(|title| title.contains(&word))
            .cloned()
            .collect()
    }

    /// Counts the titles.
    #[tool]
    fn count(&self) -> usize {
        self.titles.len()
    }
}

/// Lends a book.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
#[tool(state = Library)]
struct Lend {
    title: String,
}

impl Lend {
    async fn run(
        self,
        _ctx: ToolExecutionContext,
        library: State<Library>,
    ) -> Result<String, String> {
        if library.titles.contains(&self.title) {
            Ok(format!("lent {}", self.title))
        } else {
            Err(format!("no book called {}", self.title))
        }
    }
}

#[test]
fn methods_and_derived_tools_share_one_state() {
    let library = Arc::new(Library {
        titles: vec!["Dune".into(), "Dune Messiah".into(), "Emma".into()],
        lookups: AtomicUsize::new(0),
    });
    let mut definitions = Arc::clone(&library).tools();
    definitions.push(Lend::definition(Arc::clone(&library)));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter(definitions)).build();
    let runtime = runtime();

    let found = runtime.block_on(call(&dispatcher, "find", json!({"word": "Dune"})));
    assert_eq!(found.as_value(), Some(&json!(["Dune", "Dune Messiah"])));
    let counted = runtime.block_on(call(&dispatcher, "count", json!({})));
    assert_eq!(counted.as_value(), Some(&json!(3)));
    let lent = runtime.block_on(call(&dispatcher, "lend", json!({"title": "Emma"})));
    assert_eq!(lent.as_value(), Some(&json!("lent Emma")));
    let unknown_field = runtime.block_on(call(
        &dispatcher,
        "lend",
        json!({"title": "Emma", "until": "May"}),
    ));
    assert_eq!(
        unknown_field.block_reason(),
        Some(BlockReason::InvalidArguments)
    );
    assert_eq!(library.lookups.load(Ordering::SeqCst), 1);
}

/// Checks the service is alive.
#[derive(Deserialize, JsonSchema, Tool)]
#[serde(deny_unknown_fields)]
struct Ping {}

impl Ping {
    async fn run(self, _ctx: ToolExecutionContext) -> Result<String, String> {
        Ok("pong".to_owned())
    }
}

/// A derived tool without arguments (`struct Ping {}`) is called with the `{}` a model sends;
/// a unit struct, which serde reads only from `null`, is a compile error (`ui-tests`).
#[test]
fn a_derived_tool_without_arguments_takes_an_empty_object() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([Ping::definition()])).build();
    let definition = dispatcher.registry().get("ping").unwrap();
    assert_eq!(definition.parameters().unwrap()["type"], "object");
    let result = runtime().block_on(call(&dispatcher, "ping", json!({})));
    assert_eq!(result.as_value(), Some(&json!("pong")));
}

/// Divides two integers.
#[tool]
fn divide(a: i64, b: i64) -> app::Result<i64> {
    if b == 0 {
        return Err("division by zero".into());
    }
    Ok(a / b)
}

mod app {
    pub type Result<T> = std::result::Result<T, String>;
}

/// An alias of `Result` named `Result` is read as one: its `Err` is the call's error. (One
/// under another name is a compile error, `ui-tests/fail/macro_result_alias.rs`.)
#[test]
fn an_alias_named_result_reports_err_as_the_call_s_error() {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([divide::definition()])).build();
    let result = runtime().block_on(call(&dispatcher, "divide", json!({"a": 1, "b": 0})));
    assert_eq!(
        result.error_info().map(|error| error.message.as_str()),
        Some("division by zero")
    );
}
