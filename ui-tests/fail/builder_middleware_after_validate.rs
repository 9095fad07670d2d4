//! Middleware cannot be added once later guards are configured, however far back.
use prism::{Dispatcher, ToolRegistry, guard::{call_middleware, validator_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .validate(validator_fn(|_tool, _args| Ok(())))
        .middleware(call_middleware(|_call| {}))
        .build();
}
