use std::fmt::Display;

use prism::tool;

/// Shows a value.
#[tool]
fn show(value: impl Display) -> impl serde::Serialize {
    value.to_string()
}

fn main() {
    let _ = show::definition();
}
