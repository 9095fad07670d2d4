//! Trust is checked before permission.
use prism::{Dispatcher, ToolRegistry, guard::{permission_fn, trust_fn}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .permission(permission_fn(|_tool, _args, _ctx| Ok(())))
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .build();
}
