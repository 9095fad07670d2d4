//! Helpers shared by the integration tests: small tools, a trace of which callback ran, and a
//! watcher that collects every event and ledger row of a dispatcher.

// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use prism::call::ErrorInfo;
use prism::dispatch::{
    CollectingSink, DispatchBuilder, InMemoryLedger, RecordStatus, ToolEventKind,
};
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolResult};
use serde_json::{Value, json};

/// The schema every helper tool declares: any object.
pub fn object_schema() -> Value {
    json!({"type": "object"})
}

/// A tool that returns its arguments.
pub fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .parameters(object_schema())
        .run_sync(|args, _| Ok(args.clone()))
}

/// A tool that returns its arguments and counts how often its body ran.
pub fn counted(name: &str, runs: &Runs) -> ToolDefinition {
    let runs = runs.clone();
    ToolDefinition::builder(name)
        .parameters(object_schema())
        .run_sync(move |args, _| {
            runs.hit();
            Ok(args.clone())
        })
}

/// Counts how often a tool body ran.
#[derive(Clone, Debug, Default)]
pub struct Runs(Arc<AtomicUsize>);

impl Runs {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// An ordered record of which callbacks ran.
#[derive(Clone, Debug, Default)]
pub struct Trace(Arc<Mutex<Vec<String>>>);

impl Trace {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&self, entry: impl Into<String>) {
        self.lock().push(entry.into());
    }

    pub fn entries(&self) -> Vec<String> {
        self.lock().clone()
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Collects every event and ledger row a dispatcher produces.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    pub events: CollectingSink,
    pub ledger: InMemoryLedger,
}

impl Watch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds this watcher's sink and ledger to a builder, at whatever stage it is.
    pub fn attach<S, T, P, V>(
        &self,
        builder: DispatchBuilder<S, T, P, V>,
    ) -> DispatchBuilder<S, T, P, V> {
        builder
            .events(self.events.clone())
            .ledger(self.ledger.clone())
    }

    /// The wire names of the events so far, e.g. `["tool_execution_started", …]`.
    pub fn event_types(&self) -> Vec<&'static str> {
        self.events
            .events()
            .iter()
            .map(|event| event.kind.type_name())
            .collect()
    }

    /// The statuses of the ledger rows so far, e.g. `["started", "finished"]`.
    pub fn statuses(&self) -> Vec<&'static str> {
        self.ledger
            .records()
            .iter()
            .map(|row| row.status.as_str())
            .collect()
    }

    /// Every event and row, as JSON text.
    pub fn json_text(&self) -> String {
        let events = serde_json::to_string(&self.events.events()).expect("events serialise");
        let rows = serde_json::to_string(&self.ledger.records()).expect("rows serialise");
        format!("{events}\n{rows}")
    }

    /// Asserts that call `id` got exactly one terminal event and exactly one terminal row.
    pub fn assert_one_ending(&self, id: &str) {
        let endings = self
            .events
            .events()
            .iter()
            .filter(|event| event.tool_call_id.as_str() == id)
            .filter(|event| is_terminal_event(&event.kind))
            .count();
        assert_eq!(
            endings,
            1,
            "terminal events for {id}: {:?}",
            self.event_types()
        );
        let rows = self
            .ledger
            .records_for_call(id)
            .iter()
            .filter(|row| row.status != RecordStatus::Started)
            .count();
        assert_eq!(rows, 1, "terminal rows for {id}: {:?}", self.statuses());
    }
}

/// True for the events that end a call.
pub fn is_terminal_event(kind: &ToolEventKind) -> bool {
    !matches!(
        kind,
        ToolEventKind::ToolExecutionStarted { .. } | ToolEventKind::ToolExecutionProgress { .. }
    )
}

/// An empty context.
pub fn ctx() -> ToolExecutionContext {
    ToolExecutionContext::new()
}

/// Dispatches a call that no guardrail trips.
pub async fn run(dispatcher: &Dispatcher, call: ToolCall) -> ToolResult {
    dispatcher
        .dispatch(call, &ctx())
        .await
        .expect("no guardrail trips in this test")
}

/// Dispatches a call with a context that no guardrail trips.
pub async fn run_in(
    dispatcher: &Dispatcher,
    call: ToolCall,
    ctx: &ToolExecutionContext,
) -> ToolResult {
    dispatcher
        .dispatch(call, ctx)
        .await
        .expect("no guardrail trips in this test")
}

/// The error of a result that must have failed or been blocked.
pub fn error_of(result: &ToolResult) -> &ErrorInfo {
    result
        .error_info()
        .unwrap_or_else(|| panic!("expected an error, got {result:?}"))
}

/// Asserts that none of `secrets` occurs in `text`.
pub fn assert_free_of(secrets: &[&str], text: &str) {
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "secret {secret:?} leaked into {text}"
        );
    }
}

/// The longest prefix of `secret`, 8 bytes or more, that `text` holds: what a cut made before
/// redaction leaves of a secret.
pub fn leaked_prefix<'a>(text: &str, secret: &'a str) -> Option<&'a str> {
    (8..=secret.len())
        .rev()
        .filter(|&len| secret.is_char_boundary(len))
        .map(|len| &secret[..len])
        .find(|prefix| text.contains(prefix))
}

/// Runs the test named `name` again in a child process with `PRISM_TEST_CHILD` set, so the
/// body runs there alone (a stack overflow aborts only the child; no other test shares its
/// process-wide state); asserts the child finished normally.
pub fn isolated(name: &str, body: impl FnOnce()) {
    if std::env::var_os("PRISM_TEST_CHILD").is_some() {
        body();
        return;
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("PRISM_TEST_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: String = stderr
        .lines()
        .rev()
        .take(6)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        output.status.success(),
        "child process for {name} died: {:?}\n{tail}",
        output.status
    );
}
