//! A secure dispatcher needs a trust policy.
use prism::*;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .validate(validator_fn(|_tool, _args| Ok(())))
        .build_secure();
}
