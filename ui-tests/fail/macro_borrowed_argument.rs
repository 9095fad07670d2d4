use std::borrow::Cow;

use prism::tool;

/// Greets someone.
#[tool]
fn greet(name: Cow<'_, str>, names: Vec<&'static str>) -> String {
    format!("{name} {names:?}")
}

fn main() {
    let _ = greet::definition();
}
