//! Every guard stage but the effect store can be called several times; the guards compose.
use prism::{Dispatcher, ToolRegistry};
use prism::guard::{
    RulePack, before_execute_fn, call_middleware, permission_fn, result_middleware, trust_fn,
    validator_fn,
};
use prism::registry::ToolFilter;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .middleware(call_middleware(|_call| {}))
        .middleware(result_middleware(|_result| {}))
        .guardrails(RulePack::new("pii"))
        .guardrails(RulePack::new("shell"))
        .filter(ToolFilter::allow(["a", "b"]))
        .filter(ToolFilter::deny(["b"]))
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .build();
}
