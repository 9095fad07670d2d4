//! Helpers shared by the run-layer tests: simple tools, gated tools whose completion the test
//! controls through oneshot channels, and a single-poll driver that lets a test observe a batch
//! between steps without sleeping.

#![allow(dead_code)]

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use prism::{Message, ToolDefinition, ToolResult};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// A tool that returns `{"tool": name}`.
pub fn named(name: &str) -> ToolDefinition {
    let tool = name.to_owned();
    ToolDefinition::builder(name)
        .description(format!("The {name} tool."))
        .parameters(json!({"type": "object"}))
        .run_sync(move |_, _| Ok(json!({ "tool": tool })))
}

/// `add(a, b)`.
pub fn add() -> ToolDefinition {
    ToolDefinition::builder("add")
        .description("Adds two integers.")
        .parameters(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }))
        .run_sync(|args: &Value, _| {
            let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
            match (a, b) {
                (Some(a), Some(b)) => Ok(json!(a + b)),
                _ => Err("a and b must be integers".into()),
            }
        })
}

/// Polls a future once with a waker that does nothing. The tests' tools only wait on oneshot
/// channels, so one poll runs a batch as far as it can go: every claimable call starts and blocks.
pub fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Releases the call waiting on `key`, then polls `future` once.
pub fn release_and_poll<F: Future>(
    gates: &Gates,
    key: &str,
    future: Pin<&mut F>,
) -> Poll<F::Output> {
    gates.release(key);
    poll_once(future)
}

/// A tool whose calls block until the test releases them, counting how many run at once.
/// Each call names its gate with the argument `{"gate": "<key>"}`.
#[derive(Clone, Default)]
pub struct Gates {
    inner: Arc<GatesInner>,
}

#[derive(Default)]
struct GatesInner {
    waiting: Mutex<HashMap<String, oneshot::Receiver<()>>>,
    release: Mutex<HashMap<String, oneshot::Sender<()>>>,
    started: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Gates {
    /// Prepares gates for these keys.
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        let gates = Self::default();
        for key in keys {
            let (tx, rx) = oneshot::channel();
            gates
                .inner
                .waiting
                .lock()
                .unwrap()
                .insert(key.to_owned(), rx);
            gates
                .inner
                .release
                .lock()
                .unwrap()
                .insert(key.to_owned(), tx);
        }
        gates
    }

    /// The gated tool, called `name`, returning `{"gate": key}` once released (or failing, when
    /// the call's arguments say `"fail": true`).
    pub fn tool(&self, name: &str) -> ToolDefinition {
        self.tool_with(name, false)
    }

    /// The same, marked exclusive.
    pub fn exclusive_tool(&self, name: &str) -> ToolDefinition {
        self.tool_with(name, true)
    }

    fn tool_with(&self, name: &str, exclusive: bool) -> ToolDefinition {
        let inner = Arc::clone(&self.inner);
        ToolDefinition::builder(name)
            .description("Waits for the test to release it.")
            .parameters(json!({"type": "object", "properties": {"gate": {"type": "string"}}}))
            .exclusive(exclusive)
            .run(move |args: Value, _ctx| {
                let inner = Arc::clone(&inner);
                async move {
                    let key = args["gate"].as_str().unwrap_or_default().to_owned();
                    let gate = inner.waiting.lock().unwrap().remove(&key);
                    let now = inner.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    inner.max_in_flight.fetch_max(now, Ordering::SeqCst);
                    inner.started.lock().unwrap().push(key.clone());
                    if let Some(gate) = gate {
                        let _ = gate.await;
                    }
                    inner.in_flight.fetch_sub(1, Ordering::SeqCst);
                    if args["fail"] == json!(true) {
                        return Err(format!("call {key} failed").into());
                    }
                    Ok(json!({ "gate": key }))
                }
            })
    }

    /// Lets the call waiting on `key` finish.
    pub fn release(&self, key: &str) {
        let sender = self.inner.release.lock().unwrap().remove(key);
        sender
            .expect("each gate is released once")
            .send(())
            .unwrap();
    }

    /// Keys of the calls started so far, in start order.
    pub fn started(&self) -> Vec<String> {
        self.inner.started.lock().unwrap().clone()
    }

    /// Calls running now.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// The most calls that ever ran at once.
    pub fn max_in_flight(&self) -> usize {
        self.inner.max_in_flight.load(Ordering::SeqCst)
    }
}

/// The tool rows of a transcript, in order.
pub fn tool_rows(transcript: &[Message]) -> Vec<&ToolResult> {
    transcript
        .iter()
        .filter_map(Message::as_tool_result)
        .collect()
}

/// `(call id, error code or "ok")` of each result.
pub fn summary(results: &[&ToolResult]) -> Vec<(String, String)> {
    results
        .iter()
        .map(|result| {
            let code = result
                .error_info()
                .map_or_else(|| "ok".to_owned(), |error| error.code.to_string());
            (result.tool_call_id.to_string(), code)
        })
        .collect()
}

/// A destructive `wipe` tool that counts its runs.
pub fn wipe(runs: &Arc<AtomicUsize>) -> ToolDefinition {
    let runs = Arc::clone(runs);
    ToolDefinition::builder("wipe")
        .description("Deletes a path.")
        .parameters(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
        .annotations(prism::definition::ToolAnnotations {
            destructive: Some(true),
            ..Default::default()
        })
        .run_sync(move |args: &Value, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            Ok(json!({ "wiped": args["path"] }))
        })
}

/// An agent over `registry` that asks `store` before every `wipe`; agents given clones of one
/// scripted provider share its script, so a restored session reads on where the first stopped.
pub fn wipe_asking_agent(
    registry: &prism::ToolRegistry,
    store: &prism::run::InMemoryApprovalStore,
    provider: &prism::run::ScriptedProvider,
) -> prism::Agent {
    prism::Agent::new(
        prism::Dispatcher::builder(registry.clone()).build(),
        provider.clone(),
    )
    .with_approvals(store.clone())
    .with_approval_policy(prism::run::approval_fn(|tool, _| tool.name() == "wipe"))
}
