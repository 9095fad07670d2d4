//! An Option of a permission policy may be None, so it does not count for a secure dispatcher.
use prism::{Dispatcher, ToolRegistry, guard::{permission_fn, trust_fn, validator_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(Some(permission_fn(
            |_tool, _args, _ctx| Ok(()),
        )))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure();
}
