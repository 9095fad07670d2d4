//! A dispatcher claims effects in one store: a second store does not compile.
use prism::{Dispatcher, ToolRegistry, effects::InMemoryEffectStore};

fn main() {
    let _dispatcher = Dispatcher::builder(ToolRegistry::new())
        .effects(InMemoryEffectStore::new())
        .effects(InMemoryEffectStore::new())
        .build();
}
