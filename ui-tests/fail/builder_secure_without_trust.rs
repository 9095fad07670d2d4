//! A secure dispatcher needs a trust policy.
use prism::{Dispatcher, ToolRegistry, guard::{permission_fn, validator_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure();
}
