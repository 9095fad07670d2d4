//! Every stage takes an `Option`, so configuration can switch guards on and off without
//! branching, and a `None` still advances the stage.
use std::sync::Arc;

use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use prism::call::BlockReason;
use prism::effects::InMemoryEffectStore;
use prism::guard::{
    PermissionPolicy, RulePack, ToolMiddleware, before_execute_fn, trust_fn, validator_fn,
};
use prism::registry::ToolFilter;
use serde_json::json;

fn dispatcher(strict: bool) -> Dispatcher {
    let registry = ToolRegistry::from_iter([
        ToolDefinition::builder("echo").run_sync(|args, _| Ok(args.clone()))
    ]);
    Dispatcher::builder(registry)
        .middleware(None::<Arc<dyn ToolMiddleware>>)
        .guardrails(strict.then(|| RulePack::new("pii")))
        .filter(strict.then(|| ToolFilter::deny(["shell"])))
        .trust(strict.then(|| trust_fn(|_tool, _ctx| Ok(()))))
        .permission(None::<Arc<dyn PermissionPolicy>>)
        .validate(
            strict.then(|| validator_fn(|_tool, _args| Err("strict mode refuses everything".into()))),
        )
        .before_execute(strict.then(|| before_execute_fn(|_tool, _args, _ctx| Ok(()))))
        .effects(strict.then(InMemoryEffectStore::new))
        .build()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ctx = ToolExecutionContext::new();
    let call = || ToolCall::new("c", "echo", json!({}));
    let lenient = runtime
        .block_on(dispatcher(false).dispatch(call(), &ctx))
        .unwrap();
    assert!(lenient.is_success());
    let strict = runtime
        .block_on(dispatcher(true).dispatch(call(), &ctx))
        .unwrap();
    assert_eq!(strict.block_reason(), Some(BlockReason::ValidationFailed));
}
