//! `build_secure()` compiles once trust, permission and a validator are each certainly given, also
//! when an `Option` of the same guard is added before or after the real one.
use std::sync::Arc;

use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use prism::dispatch::SecureDispatcher;
use prism::guard::{
    ArgumentValidator, PermissionPolicy, TrustPolicy, before_execute_fn, permission_fn, trust_fn,
    validator_fn,
};
use serde_json::json;

fn main() {
    let registry = ToolRegistry::from_iter([ToolDefinition::builder("echo")
        .parameters(json!({"type": "object"}))
        .run_sync(|args, _| Ok(args.clone()))]);
    let secure: SecureDispatcher = Dispatcher::builder(registry)
        .trust(None::<Arc<dyn TrustPolicy>>)
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .permission(None::<Arc<dyn PermissionPolicy>>)
        .validate(
            Arc::new(validator_fn(|_tool, _args| Ok(()))) as Arc<dyn ArgumentValidator>
        )
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .build_secure()
        .expect("every tool has a schema");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = runtime
        .block_on(secure.dispatch(
            ToolCall::new("c", "echo", json!({"a": 1})),
            &ToolExecutionContext::new(),
        ))
        .unwrap();
    assert_eq!(result.as_value(), Some(&json!({"a": 1})));
}
