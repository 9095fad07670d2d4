//! The execution policy has its say before the effect is claimed.
use prism::{Dispatcher, ToolRegistry, effects::InMemoryEffectStore, guard::before_execute_fn};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .effects(InMemoryEffectStore::new())
        .before_execute(before_execute_fn(|_tool, _args, _ctx| Ok(())))
        .build();
}
