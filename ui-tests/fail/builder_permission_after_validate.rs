//! Permission is checked before validation.
use prism::*;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .validate(validator_fn(|_tool, _args| Ok(())))
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .build();
}
