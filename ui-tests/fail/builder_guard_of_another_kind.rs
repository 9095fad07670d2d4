//! A validator passed where a trust policy goes: the stage says what it takes.
use prism::{Dispatcher, ToolRegistry};
use prism::guard::validator_fn;

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(validator_fn(|_tool, _args| Ok(())))
        .build();
}
