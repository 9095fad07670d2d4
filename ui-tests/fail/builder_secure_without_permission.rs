//! A secure dispatcher needs a permission policy.
use prism::{Dispatcher, ToolRegistry, guard::{trust_fn, validator_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure();
}
