//! A secure dispatcher needs a validator.
use prism::{Dispatcher, ToolRegistry, guard::{permission_fn, trust_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .build_secure();
}
