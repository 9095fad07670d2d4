//! A secure dispatcher needs a trust policy.
use prism::*;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .permission(permission_fn(|_tool, _args, _ctx| Ok::<_, String>(())))
        .validate(validator_fn(|_tool, _args| Ok::<_, String>(())))
        .build_secure();
}
