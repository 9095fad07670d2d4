//! An `Option` of a guard of another kind: the stage says what it takes.
use prism::{Dispatcher, ToolRegistry};
use prism::guard::permission_fn;

fn main() {
    let strict = true;
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .trust(strict.then(|| permission_fn(|_tool, _args, _ctx| Ok(()))))
        .build();
}
