//! Validators run before the execution policy.
use prism::{Dispatcher, ToolRegistry, guard::{before_execute_fn, validator_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build();
}
