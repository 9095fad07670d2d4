//! Every guard stage but the effect store can be called several times; the guards compose.
use prism::*;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .middleware(call_middleware(|_call| {}))
        .middleware(result_middleware(|_result| {}))
        .guardrails(RulePack::new("pii"))
        .guardrails(RulePack::new("shell"))
        .filter(ToolFilter::allow(["a", "b"]))
        .filter(ToolFilter::deny(["b"]))
        .trust(trust_fn(|_tool, _ctx| Ok::<_, String>(())))
        .trust(trust_fn(|_tool, _ctx| Ok::<_, String>(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok::<_, String>(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok::<_, String>(())))
        .validate(validator_fn(|_tool, _args| Ok::<_, String>(())))
        .validate(validator_fn(|_tool, _args| Ok::<_, String>(())))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok::<_, String>(())))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok::<_, String>(())))
        .build();
}
