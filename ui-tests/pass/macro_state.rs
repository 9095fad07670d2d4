//! Shared state given at definition time through `State<T>`, by value or as an `Arc`, including
//! an unsized trait object.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prism::{Dispatcher, State, ToolCall, ToolExecutionContext, ToolRegistry, tool};
use serde_json::json;

struct Counter {
    hits: AtomicU64,
}

/// Counts calls, adding `by` each time.
#[tool]
async fn bump(by: u64, counter: State<Counter>) -> u64 {
    counter.hits.fetch_add(by, Ordering::SeqCst) + by
}

trait Greeter: Send + Sync {
    fn greet(&self, name: &str) -> String;
}

struct English;

impl Greeter for English {
    fn greet(&self, name: &str) -> String {
        format!("Hello, {name}")
    }
}

/// Greets someone.
#[tool]
fn greet(name: String, State(greeter): State<dyn Greeter>) -> String {
    greeter.greet(&name)
}

fn main() {
    let counter = Arc::new(Counter { hits: AtomicU64::new(0) });
    let greeter: Arc<dyn Greeter> = Arc::new(English);
    let registry = ToolRegistry::from_iter([bump::definition(counter.clone()), greet::definition(greeter)]);
    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        for (id, expected) in [("c1", 2), ("c2", 4)] {
            let call = ToolCall::new(id, "bump", json!({"by": 2}));
            let result = dispatcher.dispatch(call, &ctx).await.unwrap();
            assert_eq!(result.as_value(), Some(&json!(expected)));
        }
        let call = ToolCall::new("c3", "greet", json!({"name": "Ada"}));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!("Hello, Ada")));
    });
    assert_eq!(counter.hits.load(Ordering::SeqCst), 4);

    // A plain value is shared too.
    let _ = bump::definition(Counter { hits: AtomicU64::new(0) });
}
