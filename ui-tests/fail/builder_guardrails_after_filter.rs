//! Input guardrails run before lookup and filtering, so they cannot come after a filter.
use prism::{Dispatcher, ToolRegistry, guard::RulePack, registry::ToolFilter};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .filter(ToolFilter::deny(["shell"]))
        .guardrails(RulePack::new("pii"))
        .build();
}
