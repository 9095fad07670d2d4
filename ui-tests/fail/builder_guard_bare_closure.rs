//! A bare closure is not a guard: the stage points to the closure constructors.
use prism::{Dispatcher, ToolRegistry};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .validate(|_tool, _args| Ok(()))
        .build();
}
