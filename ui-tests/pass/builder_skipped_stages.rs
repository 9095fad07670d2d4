//! Every guard is optional: any stage can be the first one configured.
use prism::{Dispatcher, ToolRegistry};
use prism::effects::InMemoryEffectStore;
use prism::guard::{before_execute_fn, call_middleware, permission_fn, validator_fn};

fn main() {
    let _only_effects = Dispatcher::builder(ToolRegistry::new())
        .effects(InMemoryEffectStore::new())
        .build();
    let _only_validation = Dispatcher::builder(ToolRegistry::new())
        .validate(validator_fn(|_tool, _args| Ok(())))
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .build();
    let _middleware_then_permission = Dispatcher::builder(ToolRegistry::new())
        .middleware(call_middleware(|_call| {}))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .build();
    let _nothing = Dispatcher::builder(ToolRegistry::new()).build();
}
