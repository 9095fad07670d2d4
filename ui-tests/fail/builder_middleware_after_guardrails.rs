//! Middleware rewrites calls before any guard sees them, so it cannot come after guardrails.
use prism::{Dispatcher, ToolRegistry, guard::{RulePack, call_middleware}};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .guardrails(RulePack::new("pii"))
        .middleware(call_middleware(|_call| {}))
        .build();
}
