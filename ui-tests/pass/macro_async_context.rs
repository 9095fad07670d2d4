//! Async functions taking the execution context by value or by reference, which never appears
//! in the schema.

use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry, tool};
use serde_json::json;

/// Says which run asked.
#[tool]
async fn whoami(ctx: ToolExecutionContext) -> String {
    ctx.run_id().unwrap_or("none").to_owned()
}

/// Echoes a word together with the call's id.
#[tool]
fn echo(word: String, ctx: &ToolExecutionContext) -> String {
    let call = ctx.tool_call_id().map(|id| id.to_string()).unwrap_or_default();
    format!("{word}@{call}")
}

fn main() {
    let whoami = whoami::definition();
    // No argument: an object that accepts nothing.
    assert_eq!(
        whoami.parameters(),
        Some(&json!({"type": "object", "additionalProperties": false}))
    );

    let registry = ToolRegistry::from_iter([whoami, echo::definition()]);
    let dispatcher = Dispatcher::builder(registry).build();
    let ctx = ToolExecutionContext::new().with_run_id("run-9");
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let result = dispatcher.dispatch(ToolCall::new("c1", "whoami", json!({})), &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!("run-9")));
        let result = dispatcher
            .dispatch(ToolCall::new("c2", "echo", json!({"word": "hi"})), &ctx)
            .await
            .unwrap();
        assert_eq!(result.as_value(), Some(&json!("hi@c2")));
    });
}
