use std::rc::Rc;

use prism::tool;

async fn pause() {}

/// Counts to one, slowly.
#[tool]
async fn count() -> usize {
    let counter = Rc::new(1);
    pause().await;
    *counter
}

fn main() {
    let _ = count::definition();
}
