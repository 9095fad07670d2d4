//! Input guardrails run before lookup and filtering, so they cannot come after a filter.
use prism::*;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .filter(ToolFilter::deny(["shell"]))
        .guardrails(RulePack::new("pii"))
        .build();
}
