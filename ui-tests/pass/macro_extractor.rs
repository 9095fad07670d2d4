//! A user's own extractor, marked `#[ctx]`, reading the run's metadata; and a type alias of the
//! context recognised through `#[ctx]`.

use std::sync::Arc;

use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry, tool};
use prism::call::BlockReason;
use prism::context::{Extraction, FromToolContext};
use serde_json::json;

struct UserId(String);

impl<S: ?Sized> FromToolContext<S> for UserId {
    type Rejection = &'static str;

    fn from_context(ctx: &ToolExecutionContext, _state: &Arc<S>) -> Extraction<Self, &'static str> {
        ctx.metadata()
            .get("user_id")
            .and_then(|id| id.as_str())
            .map(|id| UserId(id.to_owned()))
            .ok_or("no user_id in the run's metadata")
            .into()
    }
}

type Ctx = ToolExecutionContext;

/// Lists the caller's files under a prefix.
#[tool]
fn list_files(prefix: String, #[ctx] user: UserId, #[ctx] ctx: Ctx) -> Vec<String> {
    let run = ctx.run_id().unwrap_or("?").to_owned();
    vec![format!("{}/{prefix}/a.txt", user.0), run]
}

fn main() {
    let definition = list_files::definition();
    assert_eq!(definition.parameters().unwrap()["required"], json!(["prefix"]));

    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([definition])).build();
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let ctx = ToolExecutionContext::new()
            .with_run_id("r1")
            .with_metadata("user_id", json!("u-1"));
        let call = ToolCall::new("c1", "list_files", json!({"prefix": "docs"}));
        let result = dispatcher.dispatch(call, &ctx).await.unwrap();
        assert_eq!(result.as_value(), Some(&json!(["u-1/docs/a.txt", "r1"])));

        // Without the metadata the extractor refuses the call; the body never runs.
        let call = ToolCall::new("c2", "list_files", json!({"prefix": "docs"}));
        let result = dispatcher.dispatch(call, &ToolExecutionContext::new()).await.unwrap();
        let error = result.error_info().unwrap();
        assert_eq!(error.message, "no user_id in the run's metadata");
        assert_eq!(error.reason, Some(BlockReason::ExtractionFailed));
    });
}
