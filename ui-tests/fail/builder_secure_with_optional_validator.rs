//! A conditional validator may be absent, so it does not count for a secure dispatcher.
use prism::{Dispatcher, ToolRegistry, guard::{permission_fn, trust_fn, validator_fn}};

fn main() {
    let strict = std::env::var("STRICT").is_ok();
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(strict.then(|| validator_fn(|_tool, _args| Ok(()))))
        .build_secure();
}
