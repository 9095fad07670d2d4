//! Permission is checked before validation.
use prism::{Dispatcher, ToolRegistry, guard::{permission_fn, validator_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .validate(validator_fn(|_tool, _args| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .build();
}
