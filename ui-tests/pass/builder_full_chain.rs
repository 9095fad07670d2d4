//! Every guard in pipeline order, with every observer, builds and dispatches.
use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
use prism::dispatch::{CollectingSink, InMemoryLedger, SecretRedactor};
use prism::effects::InMemoryEffectStore;
use prism::guard::{
    GuardrailRule, RulePack, before_execute_fn, call_middleware, permission_fn, trust_fn,
    validator_fn,
};
use prism::registry::ToolFilter;
use serde_json::json;

fn main() {
    let ledger = InMemoryLedger::new();
    let dispatcher =
        Dispatcher::builder(ToolRegistry::from_iter([ToolDefinition::builder("echo")
            .parameters(json!({"type": "object"}))
            .run_sync(|args, _ctx| Ok(args.clone()))]))
        .middleware(call_middleware(|call| {
            let name = call.name().to_ascii_lowercase();
            call.set_name(name);
        }))
        .guardrails(RulePack::new("shell").rule(GuardrailRule::input_contains("rm", ["rm -rf"])))
        .filter(ToolFilter::allow(["echo"]))
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .effects(InMemoryEffectStore::new())
        .events(CollectingSink::new())
        .ledger(ledger.clone())
        .redactor(SecretRedactor::new(["sk-1"]))
        .build();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = runtime
        .block_on(dispatcher.dispatch(
            ToolCall::new("c", "ECHO", json!({"x": 1})),
            &ToolExecutionContext::new(),
        ))
        .unwrap();
    assert_eq!(result.as_value(), Some(&json!({"x": 1})));
    assert_eq!(ledger.records().len(), 2);
}
