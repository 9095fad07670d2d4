//! Filters decide which tools exist before trust is asked, so a filter cannot follow trust.
use prism::{Dispatcher, ToolRegistry, guard::trust_fn, registry::ToolFilter};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(trust_fn(|_tool, _ctx| Ok(())))
        .filter(ToolFilter::deny(["shell"]))
        .build();
}
